# SPDX-License-Identifier: LGPL-2.1-or-later
"""On-time share of the tests' PyTorch models (lib/python/tests/test_torch.py:
CNN with BatchNorm, MLP) under five sets of scheduler flags, each trained
for --iters steps in one process: the reference (TierTrain's semantics,
TT_SCHED_REFERENCE), TT_SCHED_ANCHOR, TT_SCHED_COUNT, both, and the
session's default (TT_SCHED_DEFAULT_FLAGS).

Run in the guest (module loaded, node0 fast with one CPU, node1 slow):

    scripts/vmrun --numa 2G:0 --numa 2G -- /usr/bin/python3 bench/torch_flags.py

Prints one line per model and flag set: on time over the steps after the
profile, per step, k (count_ahead) and the prefetches released early.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib", "python", "tests"))

_NO_PLAN_EXT = {"alap": False, "defer_late": False}
FLAGS = (("reference", {"reference": True}),
         ("anchor", dict(_NO_PLAN_EXT, anchor=True, count=False)),
         ("count", dict(_NO_PLAN_EXT, anchor=False, count=True)),
         ("anchor+count", dict(_NO_PLAN_EXT, anchor=True, count=True)),
         ("default", {}))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--iters", type=int, default=14,
                   help="steps per run, 2 warm-up and 1 profile included (14)")
    a = p.parse_args()
    if a.iters < 5:
        p.error("--iters %d: at least 5 (2 warm-up, 1 profile, 2 planned)" %
                a.iters)
    sys.argv = sys.argv[:1]
    import test_torch as T          # after the path; imports torch

    print("bench/torch_flags: on time after the profile step, %d steps per "
          "run" % a.iters)
    print("%-4s %-13s %8s  %-40s %3s %8s %10s" % (
        "model", "flags", "on time", "per planned step (%)", "k",
        "released", "evicted"))
    for cls, kind in ((T.CNN, "cnn"), (T.MLP, "mlp")):
        for name, kw in FLAGS:
            r = T.train(cls, kind, a.iters, h_kw=kw)
            st = r.h.stats()
            r.h.detach()
            ot = T.per_iter_ontime(r.stats)
            st0 = r.stats[T.PLANNED - 1]
            d = {k: st[k] - st0[k] for k in ("ontime_bytes", "late_bytes")}
            print("%-4s %-13s %7.1f%%  %-40s %3s %8s %10d" % (
                cls.__name__, name, T.ontime_pct(d),
                " ".join("-" if v < 0 else "%.0f" % v
                         for v in ot[T.PLANNED:]),
                st["session"].get("count_ahead", "-"),
                st["session"].get("count_released", "-"),
                st["evicted_bytes"]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
