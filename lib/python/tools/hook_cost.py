#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""hook_cost.py: what attach() itself costs per training step.

For each model two copies from the same seed train on the same batch in
one process, step by step, alternating (none, off, then off, none in the
next round, so neither always runs first):

  none  no tiertrain;
  off   tiertrain.torch.attach(model, off=True): every hook and every
        event submitted, nothing moved (TT_SCHED_OFF).

Printed per model: the median step time of each (wall clock), the cost
of off against none (the median over the rounds of the ratio of the two
steps of the same round, minus one) in wall-clock time ("off") and in the
thread's CPU time ("off cpu": on a loaded host, where the wall clock
mostly measures the other processes, the figure to trust), that CPU cost
per layer in microseconds, events, tt_events() calls and saved tensors per
step; the losses of the two must be bit-identical (exit status 2
otherwise). Runs on the host as well as in the guest: without
/dev/tiertrain the session uses the move_pages backend, and off moves
nothing there either.

--profile adds where the off step's time goes: each of the handle's hooks
timed by attach(time_hooks=True) (inclusive: the module pre-hook includes
the layer's begin) and the tt_events() calls, in microseconds per step.

    /usr/bin/python3 lib/python/tools/hook_cost.py [--models resnet18,...]
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

MODELS = "resnet18,mobilenet_v2,shufflenet_v2_x1_0,vit"


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default=MODELS,
                   help="comma-separated torchvision constructors; vit: a "
                   "small VisionTransformer (4 layers, 32x32 images, patch "
                   "4, width 128); tiny: 64 Linear(16, 16) + Tanh, "
                   "compute negligible: the cost per layer (default %s)" %
                   MODELS)
    p.add_argument("--batch", type=int, default=8, help="batch size (8)")
    p.add_argument("--size", type=int, default=32,
                   help="image height and width (32)")
    p.add_argument("--rounds", type=int, default=30,
                   help="measured rounds per model (30)")
    p.add_argument("--warm", type=int, default=4,
                   help="unmeasured rounds first (4; attach()'s warm-up "
                   "is 2)")
    p.add_argument("--threads", type=int, default=1,
                   help="torch intra-op threads (1)")
    p.add_argument("--nop-submit", action="store_true",
                   help="replace tt_events() by a no-op in the off copy: "
                   "the Python side alone")
    p.add_argument("--package", default=None,
                   help="import tiertrain from this directory instead "
                   "(say a worktree of an older commit: before/after)")
    p.add_argument("--profile", action="store_true",
                   help="time each hook of the off copy (adds its own cost)")
    a = p.parse_args()
    if a.rounds < 1 or a.warm < 3 or a.batch < 1 or a.size < 8:
        p.error("--rounds >= 1, --warm >= 3, --batch >= 1, --size >= 8")
    return a


def build(name, torch, tv):
    torch.manual_seed(0)
    if name == "tiny":
        nn = torch.nn
        return nn.Sequential(*[m for _ in range(64)
                               for m in (nn.Linear(16, 16), nn.Tanh())])
    if name == "vit":
        return tv.VisionTransformer(image_size=32, patch_size=4, num_layers=4,
                                    num_heads=4, hidden_dim=128, mlp_dim=256,
                                    num_classes=10, dropout=0.0,
                                    attention_dropout=0.0)
    m = getattr(tv, name)(num_classes=10)
    # dropout draws from the global RNG, which the two copies share: off
    # so their losses can be compared bit for bit
    for mod in m.modules():
        if isinstance(mod, torch.nn.Dropout):
            mod.p = 0.0
    return m


def run(name, a, torch, tv, ttt, F):
    mn, mo = build(name, torch, tv), build(name, torch, tv)
    return measure(name, a, torch, ttt, F, mn, mo)


def measure(name, a, torch, ttt, F, mn, mo):
    # --profile: attach(time_hooks=True) times each hook; the tt_events()
    # calls are timed the same way (the handle's _flush, on the instance)
    h = ttt.attach(mo, off=True, strict=True, time_hooks=a.profile)
    prof = h.hook_times if a.profile else {}
    if a.profile:
        flush = prof["flush (tt_events)"] = [0, 0]
        h._flush = ttt._timed_hook(h._flush, flush)
    if a.nop_submit:
        h._tt_events = lambda sp, addr, n: n
    torch.manual_seed(1)
    x = torch.randn(a.batch, 16) if name == "tiny" else \
        torch.randn(a.batch, 3, a.size, a.size)
    y = torch.randint(0, 10, (a.batch,))
    opts = [torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
            for m in (mn, mo)]
    clock = time.perf_counter_ns
    cpu = time.thread_time_ns
    times = ([], [])
    cpus = ([], [])
    losses = ([], [])

    def step(k):
        m, o = (mn, mo)[k], opts[k]
        t0, c0 = clock(), cpu()
        o.zero_grad()
        loss = F.cross_entropy(m(x), y)
        loss.backward()
        o.step()
        cpus[k].append(cpu() - c0)
        times[k].append(clock() - t0)
        losses[k].append(loss.item())
    st0 = None
    for r in range(a.warm + a.rounds):
        if r == a.warm:
            st0 = dict(h.counts)
            for v in prof.values():
                v[0] = v[1] = 0
        for k in ((0, 1) if r % 2 == 0 else (1, 0)):
            step(k)
    n = a.rounds
    tn, to = times[0][a.warm:], times[1][a.warm:]
    cn, co = cpus[0][a.warm:], cpus[1][a.warm:]
    cnt = {k: (h.counts[k] - st0[k]) / n for k in
           ("events", "submits", "saved_tensors")}
    res = {
        "model": name, "layers": len(h._calls), "backend": h.backend,
        "none_ms": statistics.median(tn) / 1e6,
        "off_ms": statistics.median(to) / 1e6,
        "off_pct": 100.0 * (statistics.median(
            o / q for o, q in zip(to, tn)) - 1),
        "none_cpu_ms": statistics.median(cn) / 1e6,
        "off_cpu_ms": statistics.median(co) / 1e6,
        "off_cpu_pct": 100.0 * (statistics.median(
            o / q for o, q in zip(co, cn)) - 1),
        "us_per_layer": (statistics.median(co) - statistics.median(cn)) /
        1e3 / len(h._calls),
        "identical": losses[0] == losses[1],
        "profile_us": {k: v[1] / n / 1e3 for k, v in prof.items()},
        "profile_calls": {k: v[0] / n for k, v in prof.items()},
    }
    res.update(cnt)
    h.detach()
    return res


def main():
    a = parse()
    if a.package:
        sys.path.insert(0, os.path.abspath(a.package))
    import torch
    import torch.nn.functional as F
    import torchvision.models as tv
    import warnings
    import tiertrain.torch as ttt
    torch.set_num_threads(a.threads)
    warnings.simplefilter("ignore", RuntimeWarning)   # the backend's notice
    bad = False
    import tiertrain
    print("hook_cost: batch %d, %dx%d, %d rounds after %d, %d thread(s), "
          "%s%s" % (a.batch, a.size, a.size, a.rounds, a.warm, a.threads,
                    os.path.dirname(tiertrain.__file__),
                    ", tt_events() a no-op" if a.nop_submit else ""))
    print("%-20s %6s %9s %9s %8s %8s %7s %7s %6s %6s %s" % (
        "model", "layers", "none ms", "off ms", "off", "off cpu", "us/layer",
        "events",
        "calls", "saved", "losses"))
    for name in a.models.split(","):
        r = run(name, a, torch, tv, ttt, F)
        bad |= not r["identical"]
        print("%-20s %6d %9.2f %9.2f %+7.2f%% %+7.2f%% %8.1f %7.0f %6.0f "
              "%6.0f %s" % (
            name, r["layers"], r["none_ms"], r["off_ms"], r["off_pct"],
            r["off_cpu_pct"], r["us_per_layer"],
            r["events"], r["submits"], r["saved_tensors"],
            "identical" if r["identical"] else "DIFFER"), flush=True)
        if a.profile:
            for k, v in sorted(r["profile_us"].items(), key=lambda kv: -kv[1]):
                print("    %-20s %9.1f us/step %7.0f calls/step" %
                      (k, v, r["profile_calls"][k]))
    return 2 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
