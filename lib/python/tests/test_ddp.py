# SPDX-License-Identifier: LGPL-2.1-or-later
"""Distributed training as it is run: `torchrun --nproc_per_node=2` (gloo,
DistributedDataParallel) with tiertrain.torch.attach() in each rank, run
in the QEMU guest by run-vm after test_torch.py, in the same boot.

Runs Documentation/examples/ddp_train.py once with --compare: each rank
trains untiered, then tiered, in the same process (one torchrun: three
`import torch` under TCG, not six); the tiered run under a module budget
(budget_mib, shared max-min fair by the ranks' sessions,
Documentation/scheduler.md "Many processes"; the untiered run opens no
session), and checks:

  ddp_tiered     each rank's session evicted and prefetched (on-time share
                 printed)
  ddp_identical  losses and final parameters bit-identical to the untiered
                 run, in every rank
  ddp_budget     at every step after warm-up, sampled between the forward
                 and the backward pass of both ranks: each rank has a share
                 (budget_bytes > 0), the shares sum to at most the module's
                 budget, and the ranks' fast registered bytes sum to at most
                 the budget plus one chunk per session (the bound the
                 scheduler documents)

This script does not import torch (torchrun's processes do): one TAP line
per check, a kselftest "# Totals:" line, which scripts/check counts.

    /usr/bin/python3 lib/python/tests/test_ddp.py [-v]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.environ.get("TIERTRAIN_REPO") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SCRIPT = os.path.join(REPO, "Documentation", "examples", "ddp_train.py")
TORCHRUN = os.environ.get("TT_TORCHRUN", "/usr/bin/torchrun")
PARAMS = "/sys/module/tiertrain/parameters"
NPROC = 2
STEPS = 6           # 2 warm-up (attach()'s default), 1 profile, 3 planned
WARMUP = 2
BUDGET_MIB = 6      # each rank registers about 8 MiB a step: 3 MiB each
TIMEOUT = 1500      # seconds for the torchrun (3 `import torch` under TCG)
VERBOSE = "-v" in sys.argv


from tap import Skip, check, log  # noqa: E402


def param(name):
    with open(os.path.join(PARAMS, name)) as f:
        return int(f.read())


def set_param(name, value):
    with open(os.path.join(PARAMS, name), "w") as f:
        f.write("%d\n" % value)


def torchrun(tag, out, extra):
    """Run the example under torchrun with --compare; return the ranks'
    reports: (untiered, tiered)."""
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")
    # the guest's hostname does not resolve: gloo on the loopback device
    env.setdefault("GLOO_SOCKET_IFNAME", "lo")
    # --redirects/--tee: Debian 12's torchrun (torch 1.13 on Python 3.11)
    # fails with their default 0 (Documentation/python.md, "Distributed
    # training"); 2 sends the ranks' stderr to a log file and the console
    # the guest's hostname does not resolve, which --standalone's c10d
    # rendezvous needs: a static one on the loopback address instead
    cmd = [TORCHRUN, "--nnodes=1", "--nproc_per_node=%d" % NPROC,
           "--master_addr=127.0.0.1", "--master_port=29511",
           "--redirects", "2", "--tee", "2", SCRIPT, "--compare",
           "--steps", str(STEPS), "--report", out] + extra
    log("%s: %s", tag, " ".join(cmd))
    t0 = time.monotonic()
    try:
        r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True,
                           timeout=TIMEOUT)
        text, rc = r.stdout, r.returncode
    except subprocess.TimeoutExpired as e:
        text, rc = (e.stdout or b"").decode(errors="replace") \
            if isinstance(e.stdout, bytes) else (e.stdout or ""), "timeout"
    secs = time.monotonic() - t0
    lines = text.splitlines()
    shown = lines if VERBOSE or rc != 0 else \
        [l for l in lines if l.startswith("rank ")]
    for l in shown:
        log("%s:   %s", tag, l)
    check(rc == 0, "%s: torchrun exited %s after %.0f s", tag, rc, secs)
    reps = ([], [])
    for rank in range(NPROC):
        for name, into in (("rank%d-untiered.json", reps[0]),
                           ("rank%d.json", reps[1])):
            with open(os.path.join(out, name % rank)) as f:
                into.append(json.load(f))
    log("%s: %d ranks, %d steps untiered and %d tiered in %.0f s", tag,
        NPROC, STEPS, STEPS, secs)
    return reps


def main():
    print("TAP version 13")
    names = ["ddp_tiered", "ddp_identical", "ddp_budget"]
    print("1..%d" % len(names))
    results = {}
    plain = tier = None
    tmp = tempfile.mkdtemp(prefix="tt-ddp-")
    old_budget = None
    try:
        if not os.access(TORCHRUN, os.X_OK):
            raise Skip("%s missing (python3-torch)" % TORCHRUN)
        if not os.path.isdir(PARAMS) or not os.path.exists("/dev/tiertrain"):
            raise Skip("the tiertrain module is not loaded")
        chunk = -(-param("batch_pages") * os.sysconf("SC_PAGE_SIZE") //
                  (2 << 20)) * (2 << 20)
        old_budget = param("budget_mib")
        set_param("budget_mib", BUDGET_MIB)
        log("module budget_mib %d (was %d), chunk %d KiB",
            param("budget_mib"), old_budget, chunk >> 10)
        plain, tier = torchrun("compare", tmp, [])
    except Skip as e:
        for i, n in enumerate(names, 1):
            print("ok %d %s # SKIP %s" % (i, n, e), flush=True)
        print("# Totals: pass:0 fail:0 xfail:0 xpass:0 skip:%d error:0" %
              len(names))
        return 0
    except Exception as e:
        for n in names:
            results[n] = str(e) or type(e).__name__
    finally:
        if old_budget is not None:
            set_param("budget_mib", old_budget)
        shutil.rmtree(tmp, ignore_errors=True)

    def t_tiered():
        for r in tier:
            st = r["stats"]
            due = st["ontime_bytes"] + st["late_bytes"]
            log("rank %d: backend %s, %d iterations, %d layers, %d tensors "
                "(%d KiB) registered; evicted %d, prefetched %d bytes; on "
                "time %d, late %d bytes (%.1f%% on time); victims %d (%d "
                "bytes), budget waits %d; fast peak %d KiB",
                r["rank"], r["backend"], st["iterations"], st["layers"],
                st["saved_tensors"], st["saved_bytes"] >> 10,
                st["evicted_bytes"], st["prefetched_bytes"],
                st["ontime_bytes"], st["late_bytes"],
                100.0 * st["ontime_bytes"] / due if due else -1.0,
                st["victims"], st["victim_bytes"], st["budget_waits"],
                st["fast_peak_bytes"] >> 10)
        for r in tier:
            st = r["stats"]
            check(r["tiered"] and r["backend"] == "kernel",
                  "rank %d: not tiered by the kernel (%s)", r["rank"],
                  r.get("backend"))
            check(st["evicted_bytes"] > 0, "rank %d evicted nothing",
                  r["rank"])
            check(st["prefetched_bytes"] > 0, "rank %d prefetched nothing",
                  r["rank"])
            check(st["errors"] == 0, "rank %d: %d hook errors", r["rank"],
                  st["errors"])

    def t_identical():
        for p, t in zip(plain, tier):
            log("rank %d: losses untiered %s", p["rank"],
                " ".join("%.6f" % float.fromhex(v) for v in p["losses"]))
            log("rank %d: losses tiered   %s", t["rank"],
                " ".join("%.6f" % float.fromhex(v) for v in t["losses"]))
        for p, t in zip(plain, tier):
            check(len(p["losses"]) == STEPS, "rank %d: %d losses",
                  p["rank"], len(p["losses"]))
            check(p["losses"] == t["losses"], "rank %d: losses differ: %s "
                  "vs %s", p["rank"], p["losses"], t["losses"])
            check(p["params"] == t["params"], "rank %d: final parameters "
                  "differ", p["rank"])
            check(p["buffers"] == t["buffers"], "rank %d: final buffers "
                  "differ", p["rank"])
        # DDP: every rank holds the same parameters
        check(len({r["params"] for r in tier}) == 1, "ranks' parameters "
              "differ")

    def t_budget():
        budget = BUDGET_MIB << 20
        shares, fasts = [], []
        for step in range(WARMUP, STEPS):
            s = [next(x for x in r["samples"] if x["step"] == step)
                 for r in tier]
            b = [x["budget_bytes"] for x in s]
            f = [x["fast_registered_bytes"] for x in s]
            log("step %d: budget in force %s KiB (sum %d of %d), fast "
                "registered %s KiB (sum %d)", step,
                "/".join(str(v >> 10) for v in b), sum(b) >> 10,
                budget >> 10, "/".join(str(v >> 10) for v in f),
                sum(f) >> 10)
            shares.append(b)
            fasts.append(f)
        for step, b, f in zip(range(WARMUP, STEPS), shares, fasts):
            check(all(v > 0 for v in b), "step %d: a rank without a share: "
                  "%s", step, b)
            check(sum(b) <= budget, "step %d: shares %s sum over the "
                  "budget %d", step, b, budget)
            check(sum(f) <= budget + NPROC * chunk, "step %d: fast "
                  "registered %s sum over the budget %d + %d chunks of %d",
                  step, f, budget, NPROC, chunk)

    npass = nfail = 0
    for i, (n, fn) in enumerate(zip(names, (t_tiered, t_identical,
                                            t_budget)), 1):
        err = results.get(n)
        if err is None:
            try:
                fn()
            except Exception as e:
                err = str(e) or type(e).__name__
        if err is None:
            npass += 1
            print("ok %d %s" % (i, n), flush=True)
        else:
            nfail += 1
            print("not ok %d %s # %s" % (i, n, err.splitlines()[0]),
                  flush=True)
    print("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0" %
          (npass, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
