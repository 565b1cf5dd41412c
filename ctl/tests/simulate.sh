#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# tests/simulate.sh TIERCTL EXAMPLES_DIR: run the built tierctl simulate on
# the example traces (EXAMPLES_DIR/*.csv) and check its output with
# /usr/bin/python3's json module: every key in place, the counts summing to
# the number of layers, sizes consistent with the statuses, prefetches of
# evicted layers starting by their backward pass; plus standard input, the
# JSON options, the text output, and error exits.
#
# Output: cmocka's format, which scripts/check counts:
#   [ RUN      ] name / [       OK ] name / [  FAILED  ] name
#   [  PASSED  ] N test(s).
#   [  FAILED  ] N test(s), listed below:   (only when some failed)
# Exit status: 0 when every test passed, 1 otherwise.
set -u

if [ $# -ne 2 ]; then
	echo "usage: $0 TIERCTL EXAMPLES_DIR" >&2
	exit 2
fi
TIERCTL=$1
EXAMPLES=$2
PY=/usr/bin/python3
TMP=$(mktemp -d /tmp/tt-simulate-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

passed=0
failed=()

# run NAME CMD...: one test; CMD fails the test by exiting non-zero.
run() {
	local name=$1 out
	shift
	echo "[ RUN      ] $name"
	if out=$("$@" 2>&1); then
		[ -n "$out" ] && printf '%s\n' "$out"
		echo "[       OK ] $name"
		passed=$((passed + 1))
	else
		[ -n "$out" ] && printf '%s\n' "$out"
		echo "[  FAILED  ] $name"
		failed+=("$name")
	fi
}

# check_json TRACE JSON_FILE PAGE_SIZE: the invariants of a plan.
check_json() {
	"$PY" - "$1" "$2" "$3" <<'EOF'
import json, sys

trace, path, page = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = []
with open(trace) as f:
    header = None
    for line in f:
        s = line.strip()
        if not s or s.startswith('#'):
            continue
        fields = [x.strip() for x in s.split(',')]
        if header is None:
            header = fields
            continue
        rows.append(dict(zip(header, fields)))
with open(path) as f:
    doc = json.load(f)

def fail(msg):
    sys.exit('%s: %s' % (trace, msg))

top = ['layers', 'accepted', 'modified', 'dropped', 'migrated_bytes',
       'footprint']
if list(doc) != top:
    fail('top-level keys %s, expected %s' % (list(doc), top))
layers = doc['layers']
if len(layers) != len(rows):
    fail('%d layers in the JSON, %d in the trace' % (len(layers), len(rows)))
first = ['layer', 'status', 'evict_bytes', 'prefetch_start_us']
counts = {'accepted': 0, 'modified': 0, 'dropped': 0}
migrated = 0
for l, r in zip(layers, rows):
    if list(l)[:4] != first:
        fail('layer keys start %s, expected %s' % (list(l)[:4], first))
    if l['layer'] != int(r['layer']):
        fail('layer %s where the trace has %s' % (l['layer'], r['layer']))
    st = l['status']
    if st not in counts:
        fail('layer %d: status %r' % (l['layer'], st))
    counts[st] += 1
    ev, saved = l['evict_bytes'], int(r['saved_bytes'])
    bwd = float(r['bwd_start_us'])
    fwd_end = float(r['fwd_end_us'])
    if l['saved_bytes'] != saved:
        fail('layer %d: saved_bytes %d, trace %d' % (l['layer'],
             l['saved_bytes'], saved))
    if not (0 <= ev <= l['allowed_bytes'] <= saved):
        fail('layer %d: evict %d, allowed %d, saved %d' % (l['layer'], ev,
             l['allowed_bytes'], saved))
    if ev != saved and ev % page:
        fail('layer %d: partial evict_bytes %d is not page granular' %
             (l['layer'], ev))
    if abs(l['idle_us'] - (bwd - fwd_end)) > 1e-6:
        fail('layer %d: idle_us %s' % (l['layer'], l['idle_us']))
    if st == 'dropped':
        if ev != 0 or l['prefetch_start_us'] is not None:
            fail('dropped layer %d: evict %d, prefetch %r' % (l['layer'], ev,
                 l['prefetch_start_us']))
        continue
    if st == 'accepted' and ev != saved:
        fail('accepted layer %d evicts %d of %d' % (l['layer'], ev, saved))
    if st == 'modified' and not 0 < ev < saved:
        fail('modified layer %d evicts %d of %d' % (l['layer'], ev, saved))
    p = l['prefetch_start_us']
    if not isinstance(p, (int, float)) or not 0 <= p <= bwd:
        fail('layer %d: prefetch_start_us %r, bwd_start_us %s' %
             (l['layer'], p, bwd))
    migrated += ev
for k, v in counts.items():
    if doc[k] != v:
        fail('%s is %d, the layers say %d' % (k, doc[k], v))
if sum(counts.values()) != len(rows):
    fail('the counts do not sum to %d' % len(rows))
if doc['migrated_bytes'] != migrated:
    fail('migrated_bytes %d, the layers sum to %d' % (doc['migrated_bytes'],
         migrated))
fp = doc['footprint']
keys = ['avg_bytes', 'peak_bytes', 'base_avg_bytes', 'base_peak_bytes',
        'oracle_avg_bytes', 'oracle_peak_bytes']
if list(fp) != keys:
    fail('footprint keys %s' % list(fp))
if not (fp['oracle_avg_bytes'] <= fp['avg_bytes'] <= fp['base_avg_bytes']):
    fail('averages out of order: %s' % fp)
if not (fp['oracle_peak_bytes'] <= fp['peak_bytes'] <= fp['base_peak_bytes']):
    fail('peaks out of order: %s' % fp)
if fp['base_peak_bytes'] > sum(int(r['saved_bytes']) for r in rows):
    fail('base peak above the total saved: %s' % fp)
print('%s: %d layers, %d accepted, %d modified, %d dropped, %d bytes' %
      (trace.rsplit('/', 1)[-1], len(rows), counts['accepted'],
       counts['modified'], counts['dropped'], migrated))
EOF
}

# plan TRACE PAGE_SIZE OPTIONS...: run simulate -j and check the plan.
plan() {
	local trace=$1 page=$2 out=$TMP/out.json
	shift 2
	"$TIERCTL" -j simulate "$@" "$trace" >"$out" || return 1
	check_json "$trace" "$out" "$page"
}

# serial_queue TRACE PR_BPS OPTIONS...: the prefetches of the plan form
# one serial queue at PR (none overlaps the next) and each is back by its
# backward begin: true of eq. 8-10 and of --alap alike.
serial_queue() {
	local trace=$1 pr=$2 out=$TMP/q.json
	shift 2
	"$TIERCTL" -j simulate --pr "$pr" "$@" "$trace" >"$out" || return 1
	"$PY" - "$out" "$pr" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
pr = float(sys.argv[2])
spans = sorted((l['prefetch_start_us'],
                l['prefetch_start_us'] + l['evict_bytes'] / pr * 1e6,
                l['bwd_start_us'], l['layer'])
               for l in doc['layers'] if l['status'] != 'dropped')
for a, b in zip(spans, spans[1:]):
    if a[1] > b[0] + 0.01:
        sys.exit('prefetch of layer %d (%.3f..%.3f us) overlaps layer %d '
                 '(from %.3f us)' % (a[3], a[0], a[1], b[3], b[0]))
for s in spans:
    if s[1] > s[2] + 0.01:
        sys.exit('layer %d back at %.3f us, after its backward begin %.3f'
                 % (s[3], s[1], s[2]))
print('%d prefetches in one queue, all back in time' % len(spans))
EOF
}

# alap_boundary: the worked example of core/tests/test_policy.c
# (test_alap): --alap evicts all of layer 0 where eq. 8-10 cut it, and
# drops layer 2 whose eviction cannot end in time.
alap_boundary() {
	printf '%s\n' 'layer,fwd_start_us,fwd_end_us,bwd_start_us,bwd_end_us,saved_bytes' \
		'0,10000,10000,200000,200000,40960000' \
		'1,50000,50000,180000,180000,10240000' \
		'2,150000,150000,152000,152000,499712' >"$TMP/b.csv"
	"$TIERCTL" -j simulate --er 1000000000 --pr 1000000000 "$TMP/b.csv" \
		>"$TMP/ref.json" || return 1
	"$TIERCTL" -j simulate --alap --er 1000000000 --pr 1000000000 \
		"$TMP/b.csv" >"$TMP/alap.json" || return 1
	"$PY" - "$TMP/ref.json" "$TMP/alap.json" <<'EOF'
import json, sys
ref, alap = (json.load(open(p)) for p in sys.argv[1:3])
def st(doc):
    return [(l['status'], l['evict_bytes']) for l in doc['layers']]
want_ref = [('modified', 4882 * 4096), ('accepted', 10240000),
            ('accepted', 499712)]
want_alap = [('accepted', 40960000), ('accepted', 10240000),
             ('dropped', 0)]
if st(ref) != want_ref:
    sys.exit('eq. 8-10: %s, expected %s' % (st(ref), want_ref))
if st(alap) != want_alap:
    sys.exit('--alap: %s, expected %s' % (st(alap), want_alap))
if alap['layers'][0]['prefetch_start_us'] != 159040:
    sys.exit('--alap: layer 0 prefetch at %r us, expected 159040' %
             alap['layers'][0]['prefetch_start_us'])
print('eq. 8-10 %d bytes, --alap %d bytes' % (ref['migrated_bytes'],
                                              alap['migrated_bytes']))
EOF
}

# same_json A B: both files hold the same JSON value.
same_json() {
	"$PY" -c 'import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
sys.exit(0 if a == b else "%s and %s differ" % tuple(sys.argv[1:3]))' "$1" "$2"
}

# stdin_and_options TRACE: "-", -j after the verb and -p give the same plan.
stdin_and_options() {
	local trace=$1
	"$TIERCTL" -j simulate "$trace" >"$TMP/a.json" || return 1
	"$TIERCTL" -j simulate - <"$trace" >"$TMP/b.json" || return 1
	"$TIERCTL" simulate -j "$trace" >"$TMP/c.json" || return 1
	"$TIERCTL" simulate --pretty -- "$trace" >"$TMP/d.json" || return 1
	cmp "$TMP/a.json" "$TMP/b.json" || return 1
	cmp "$TMP/a.json" "$TMP/c.json" || return 1
	[ "$(wc -l <"$TMP/a.json")" = 1 ] || return 1
	[ "$(wc -l <"$TMP/d.json")" -gt 10 ] || return 1
	same_json "$TMP/a.json" "$TMP/d.json"
}

# text_matches_json TRACE: the text output's totals are the JSON's.
text_matches_json() {
	local trace=$1 n
	"$TIERCTL" simulate "$trace" >"$TMP/t.txt" || return 1
	"$TIERCTL" -j simulate "$trace" >"$TMP/t.json" || return 1
	n=$("$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
print("accepted %d, modified %d, dropped %d;" % (d["accepted"],
      d["modified"], d["dropped"]))' "$TMP/t.json") || return 1
	grep -qF "$n" "$TMP/t.txt" || { echo "no '$n' in the text"; return 1; }
	grep -q '^ *layer  status ' "$TMP/t.txt" || return 1
	grep -q '^without tiering ' "$TMP/t.txt" || return 1
	grep -q '^with tiering .*(-[0-9.]*%)' "$TMP/t.txt" || return 1
	grep -q '^oracle ' "$TMP/t.txt"
}

# fails EXPECTED_STDERR ARGS...: tierctl ARGS exits 1, prints nothing on
# standard output and exactly EXPECTED_STDERR on standard error.
fails() {
	local want=$1 rc
	shift
	"$TIERCTL" "$@" >"$TMP/o" 2>"$TMP/e" </dev/null
	rc=$?
	[ "$rc" = 1 ] || { echo "exit $rc, expected 1"; return 1; }
	[ ! -s "$TMP/o" ] || { echo "output on stdout:"; cat "$TMP/o"; return 1; }
	[ "$(cat "$TMP/e")" = "$want" ] || {
		echo "stderr:   $(cat "$TMP/e")"
		echo "expected: $want"
		return 1
	}
}

errors() {
	printf 'layer,fwd_start_us,fwd_end_us,bwd_start_us,bwd_end_us,saved_bytes\n1,0,1,2,3,4\n1,0,1,2,3,4\n' >"$TMP/dup.csv"
	printf 'layer,fwd_start_us,fwd_end_us,bwd_start_us,bwd_end_us,saved_bytes\n\n# c\n7,0,10,12x,30,4096\n' >"$TMP/nan.csv"
	fails "tierctl: $TMP/nan.csv:4: bwd_start_us \"12x\" is not a number" \
		simulate "$TMP/nan.csv" || return 1
	fails "tierctl: $TMP/dup.csv:3: layer 1 appears twice (first on line 2)" \
		-j simulate "$TMP/dup.csv" || return 1
	fails "tierctl: cannot open the trace $TMP/none.csv: No such file or directory" \
		simulate "$TMP/none.csv" || return 1
	fails "tierctl: <stdin>: empty trace: no header line (expected layer,fwd_start_us,fwd_end_us,bwd_start_us,bwd_end_us,saved_bytes)" \
		simulate - || return 1
	fails "tierctl simulate: --er \"0\": a rate must be > 0; try 'tierctl simulate --help'" \
		simulate --er 0 "$TMP/nan.csv" || return 1
	fails "tierctl simulate: --page-size \"1000\": a page size must be a power of two (e.g. 4096); try 'tierctl simulate --help'" \
		simulate --page-size 1000 "$TMP/nan.csv" || return 1
	fails "tierctl simulate: no trace file given; try 'tierctl simulate --help'" \
		simulate --pr 1G || return 1
	fails "tierctl simulate: unexpected argument 'b.csv' after the trace a.csv; try 'tierctl simulate --help'" \
		simulate a.csv b.csv
}

help_text() {
	"$TIERCTL" simulate --help >"$TMP/h" || return 1
	head -1 "$TMP/h" | grep -q '^Usage: tierctl simulate ' || return 1
	"$TIERCTL" help simulate | cmp - "$TMP/h" || return 1
	"$TIERCTL" --help | grep -q '^  simulate '
}

shopt -s nullglob
traces=("$EXAMPLES"/*.csv)
if [ ${#traces[@]} -lt 2 ]; then
	echo "[  FAILED  ] fewer than 2 example traces in $EXAMPLES"
	echo "[  FAILED  ] 1 test(s), listed below:"
	exit 1
fi
for t in "${traces[@]}"; do
	base=${t##*/}
	run "plan_defaults_$base" plan "$t" 4096
	run "plan_fast_$base" plan "$t" 4096 --er 4G --pr 6G
	run "plan_slow_$base" plan "$t" 65536 --er 100M --pr=150.5M \
		--stay-time-us 5000 --page-size 65536
	run "plan_no_stay_$base" plan "$t" 4096 --stay-time-us 0
	run "plan_alap_$base" plan "$t" 4096 --alap
	run "serial_queue_$base" serial_queue "$t" 1073741824
	run "serial_queue_alap_$base" serial_queue "$t" 1073741824 --alap
	run "stdin_and_options_$base" stdin_and_options "$t"
	run "text_matches_json_$base" text_matches_json "$t"
done
run alap_boundary alap_boundary
run errors errors
run help_text help_text

total=$((passed + ${#failed[@]}))
echo "[==========] $total test(s) run."
echo "[  PASSED  ] $passed test(s)."
if [ ${#failed[@]} -gt 0 ]; then
	echo "[  FAILED  ] ${#failed[@]} test(s), listed below:"
	for f in "${failed[@]}"; do
		echo "[  FAILED  ] $f"
	done
	exit 1
fi
exit 0
