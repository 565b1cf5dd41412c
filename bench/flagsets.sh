#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# flagsets.sh: in the guest (bench/run-flags boots it), run the scheduler
# flag-set comparison: for each workload named in $TT_FLAG_WORKLOADS, each
# flag set in $TT_FLAG_SETS, one bench/train (--mode all: none, tiertrain,
# userspace taking turns) or one bench/torch_train.py (none, off, and a
# tiertrain and userspace mode per flag set, all taking turns in one
# process). JSON under $1 (a directory), one file per run.
#
# Flag sets: ref (the paper's semantics, no extension), ac (anchor+count),
# aad (anchor+alap+defer_late), aadc (anchor+alap+defer_late+count),
# aadcm (the same + merge). $TT_FLAG_TORCH_MODES, when set, is torch_train's
# --modes instead (e.g. none,off,tiertrain@ac,userspace@ac).
set -u
out=$1
train=$2
repo=$3
mkdir -p "$out"
flags() {
	case "$1" in
	ref) echo "--reference" ;;
	ac) echo "--anchor --count" ;;
	aad) echo "--anchor --alap --defer-late" ;;
	aadc) echo "--anchor --alap --defer-late --count" ;;
	aadcm) echo "--anchor --alap --defer-late --count --merge" ;;
	*) echo "flagsets: unknown flag set $1" >&2; exit 2 ;;
	esac
}
rc=0
for w in $TT_FLAG_WORKLOADS; do
	case "$w" in
	base) wargs="--movers 1 --base-pages" ;;
	thp) wargs="--movers 1 --thp" ;;
	fresh) wargs="--sizes 8,8,8,8,8,8,8,8,8,8,8,8 --compute-ms 30 --base-pages" ;;
	torch:*) wargs="" ;;
	*) echo "flagsets: unknown workload $w" >&2; exit 2 ;;
	esac
	case "$w" in
	torch:*)
		# torch:MODEL or torch:MODEL:SECONDS (its --time-limit)
		m=${w#torch:}
		lim=
		case "$m" in
		*:*) lim="--time-limit ${m#*:}"; m=${m%%:*} ;;
		esac
		echo "==== flagsets: $m ($(date +%T)) ===="
		# shellcheck disable=SC2086
		if [ -n "${TT_FLAG_TORCH_MODES:-}" ]; then
			sel="--modes $TT_FLAG_TORCH_MODES"
		else
			sel="--flag-sets $(echo $TT_FLAG_SETS | tr ' ' ,)"
		fi
		# shellcheck disable=SC2086
		/usr/bin/python3 "$repo/bench/torch_train.py" --model "$m" \
			$sel -o "$out/torch-$m.json" ${TT_FLAG_TORCH_ARGS:-} \
			$lim || rc=1
		continue ;;
	esac
	for s in $TT_FLAG_SETS; do
		echo "==== flagsets: $w, $s: $(flags "$s") ($(date +%T)) ===="
		# shellcheck disable=SC2046,SC2086
		"$train" --mode all --no-timeline $wargs $(flags "$s") \
			-o "$out/train-$w-$s.json" ${TT_FLAG_TRAIN_ARGS:-} || rc=1
	done
done
exit $rc
