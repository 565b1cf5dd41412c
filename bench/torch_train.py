#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""bench/torch_train.py: a torchvision model trained without and with
tiering in one process (bench/run-torch runs it in the QEMU guest).

Modes, each on a fresh model from the same seed and the same batch,
interleaved round by round (iteration i of every mode, then i + 1) so a
noisy host slows them alike:

  none       no tiertrain at all: the step time reference;
  off        attached with TT_SCHED_OFF: every hook and event, nothing
             moves; the fast-tier footprint reference (its saved tensors are
             tracked, so their residency can be sampled) and the hooks' cost;
  tiertrain  attached, kernel backend (TIERTRAIN_BACKEND=kernel);
  userspace  attached, move_pages backend (libtiertrain's userspace
             scheduler, TIERTRAIN_BACKEND=move_pages).

A sampler thread (nice 10) reads every --sample-ms where the saved
tensors autograd holds are (Handle.footprint(): tt_residency() over their
whole pages; fast = nodes with CPUs), in every other measured round only:
a pass from Python costs milliseconds in the TCG guest, so step times come
from the rounds in between. attach()'s warm-up iterations, the profile
iterations and one more are excluded from the figures. Printed per mode,
as bench/train does: median step time and its change against none (the
median over the unsampled rounds of the ratio of the mode's step to
none's step of the same round); time-weighted average and peak
fast-tier bytes of the saved tensors and their change against off; the
oracle (every layer's tensors off the fast tier exactly while the layer
is idle, from the same samples); on time (ontime_bytes / (ontime_bytes +
late_bytes) of the measured iterations); late and moved MiB; TLB
shootdowns received (the "TLB" row of /proc/interrupts, every CPU) over
the measured iterations per MiB moved in them, and per iteration;
layer-iterations accepted, modified, dropped. Losses and final parameters
must be bit-identical in every mode (exit status 2 otherwise): every
mode's iteration i starts from torch.manual_seed(--seed + i), so dropout
and every other draw from the global RNG is the same in every mode.

--sequential runs the modes one after another instead, each with a model
of its own created at its start and freed at its end (gc, malloc_trim),
for the memory-constrained case: no mode inherits the placement another's
tiering made, and the fast tier holds one model at a time. It allows one
more mode, linux: no tiertrain, with Linux's own tiering on while it runs
(demotion_enabled 1, kernel.numa_balancing 2; put back after it and at
exit; n/a with the reason where the kernel lacks them or without root).
--reads (with --sequential) adds, per mode and per step over the measured
iterations, where the compute found the bytes it read (the residency of
each leaf module's inputs and parameters as its forward and its backward
begin, of the optimizer's tensors as its step begins; pages not present
count as slow), the fast nodes' used memory over the mode's start (avg,
peak), the kernel's migrations (/proc/vmstat) and the step projected on
CXL and Optane hardware, then the goals against the linux mode
(bench/torch_constrained.py; bench/README.md "Against Linux's own
tiering"). --fast-room F (with --sequential) makes the fast tier
smaller than the run: a probe step before the modes measures the model
state and the saved activations of a step; after each mode's first
iteration (the model state then exists, on the fast tier as a server
whose fast tier fits the model has it) memory of the fast nodes is taken
away (bound there and mlocked, so no tiering moves it) until they can
give only F times the activations; it is given back after the mode.
bench/run-torch --constrained runs it.

--flag-sets ref,ac,... compares scheduler flag sets in one process: a
tiertrain and a userspace mode per set (tiertrain@ac, userspace@ac, ...),
next to none and off, all taking turns (FLAG_SETS below; --modes also
takes KIND@SET).

--time-limit SECONDS (default 1500, below scripts/vmrun's 1800 s guest
limit) ends the run before a round that would not finish in time; the
run also ends early on SIGTERM, SIGINT or SIGHUP, and a mode whose
iteration raises stops (the others go on). Whatever stops it, the table
and the JSON are made from the iterations every mode completed.

A mode may end in :auto or :leaves (off:leaves, tiertrain:leaves): its
layers, attach(layers=...), whatever --layers says; its "vs off" figures
are against the off mode with the same suffix when there is one. Per
tiertrain or userspace mode, the on-time share of each planned step
(from the session's counters after each step, from the first iteration
the scheduler plans: attach()'s warm-up plus the profile), of the first
and of all of them. Per off mode, attach()'s added cost per step against
PyTorch's own cost of calling the same modules. The added cost is
measured where it is spent, not as a difference of noisy steps: the off
mode runs attach(time_hooks=True), which times every call of its hooks
(the unsampled measured rounds; less what the timing itself records for
a hook that does nothing, tiertrain.torch.hook_timer_ns()), plus what
PyTorch spends calling them, measured apart: per call of a module
forward pre-hook and forward hook (nn.Identity with a no-op hook against
none), per tensor through a saved-tensor pack and unpack hook (a*b and
its backward under saved_tensors_hooks shaped as attach()'s, a Python
pack returning (t,) and operator.itemgetter(0), against none, two
tensors saved), per autograd-node pre-hook (a*2's backward with a no-op pre-hook
against none); the fastest of 5 rounds of 2000 each, times each kind's
calls. Off's step minus none's (median over the same rounds) is kept
beside it. PyTorch's own cost: module calls per forward (a global
forward pre-hook counts them in a pass of its own) times the cost of one
__call__ with no hooks beyond its forward (nn.Identity, 20000 calls, the
fastest of 5 rounds).

--overhead adds the cost of the Python layer per event: a model of many
tiny layers (compute negligible) timed without hooks, with the hooks but
tt_events() replaced by a no-op, and with the real submissions
(TT_SCHED_OFF), and the growth of Python's allocated blocks over those
iterations. JSON: build/bench/torch_train.json (-o elsewhere).
"""
import argparse
import gc
import json
import operator
import os
import signal
import statistics
import sys
import threading
import time

import torch_constrained as tc

MIB = 1024.0 * 1024.0
GOAL_AVG, GOAL_PEAK, GOAL_ONTIME, GOAL_STEP = -80.0, -60.0, 99.0, 3.0
# issue 27: attach()'s cost per step at most 1 % of the step and half of
# PyTorch's own module-call cost over the same modules
GOAL_HOOK_PCT, GOAL_HOOK_RATIO = 1.0, 0.5

# Scheduler flag sets (attach() keywords), --flag-sets and KIND@SET modes.
FLAG_SETS = {
    "ref": dict(reference=True),
    "ac": dict(anchor=True, alap=False, defer_late=False, count=True,
               merge=False),
    "aad": dict(anchor=True, alap=True, defer_late=True, count=False,
                merge=False),
    "aadc": dict(anchor=True, alap=True, defer_late=True, count=True,
                 merge=False),
    "aadcm": dict(anchor=True, alap=True, defer_late=True, count=True,
                  merge=True),
}


class Stop(Exception):
    """A signal asked the run to end (the table is printed first)."""


def parse():
    p = argparse.ArgumentParser(
        description="Train a torchvision model without and with tiertrain "
        "in one process; print footprint, on-time and step-time figures.")
    p.add_argument("--model", default="resnet18",
                   help="torchvision.models constructor (default resnet18)")
    p.add_argument("--batch", type=int, default=16, help="batch size (16)")
    p.add_argument("--size", type=int, default=32,
                   help="input height and width in pixels (32)")
    p.add_argument("--iters", type=int, default=12,
                   help="iterations per mode, warm-up included (12)")
    p.add_argument("--modes", default=None,
                   help="comma-separated modes: none, off, tiertrain, "
                   "userspace, or KIND@SET (tiertrain@aad; sets: %s); "
                   "a suffix :auto or :leaves sets that mode's layers "
                   "(off:leaves; default --layers) "
                   "(default: none,off,tiertrain,userspace)" %
                   ",".join(FLAG_SETS))
    p.add_argument("--flag-sets", default=None,
                   help="comma-separated flag sets (%s): modes none, off "
                   "and tiertrain@SET, userspace@SET for each" %
                   ",".join(FLAG_SETS))
    p.add_argument("--seed", type=int, default=1000,
                   help="iteration i of every mode starts from "
                   "torch.manual_seed(SEED + i) (1000)")
    p.add_argument("--warmup", type=int, default=2,
                   help="attach()'s warm-up iterations (2)")
    p.add_argument("--time-limit", type=float, default=1500.0,
                   help="seconds from the start: no round begins that "
                   "would end later (the last round's time as the "
                   "estimate); the table is printed from the rounds done "
                   "(1500, below scripts/vmrun's 1800 s)")
    p.add_argument("--transformer-dim", type=int, default=128,
                   help="--model transformer: model width (128)")
    p.add_argument("--reference", action="store_true",
                   help="TierTrain's reference semantics: "
                   "attach(reference=True), TT_SCHED_REFERENCE (default: "
                   "the session's default flag set, TT_SCHED_DEFAULT_FLAGS)")
    p.add_argument("--alap", action="store_true",
                   help="TT_SCHED_ALAP in the tiering modes")
    p.add_argument("--sync-late", action="store_true",
                   help="TT_SCHED_SYNC_LATE in the tiering modes")
    p.add_argument("--profile-iters", type=int, default=None,
                   help="scheduler profile iterations (the module's default)")
    p.add_argument("--threads", type=int, default=1,
                   help="torch intra-op threads (1: the other vCPU is left "
                   "to the migration workers)")
    p.add_argument("--sample-ms", type=float, default=10.0,
                   help="footprint sampling period (10 ms)")
    p.add_argument("--layers", default="auto", choices=("auto", "leaves"),
                   help="attach()'s layers: auto (the default: grouped "
                   "from the timed warm-up) or leaves (every leaf module)")
    p.add_argument("--overhead", action="store_true",
                   help="also measure the Python layer's cost per event")
    p.add_argument("--sequential", action="store_true",
                   help="the modes one after another, each with its own "
                   "model created at its start and freed at its end (the "
                   "memory-constrained case: no mode inherits another's "
                   "placement); the linux mode needs it")
    p.add_argument("--reads", action="store_true",
                   help="where the compute reads its bytes, the kernel's "
                   "migrations, the fast nodes' used memory and the step "
                   "projected on CXL and Optane hardware, per mode "
                   "(bench/torch_constrained.py); needs --sequential")
    p.add_argument("--fast-room", type=float, default=None, metavar="F",
                   help="with --sequential: after each mode's first "
                   "iteration, take fast-tier memory away (mlocked on the "
                   "fast nodes) until they can give only F times the saved "
                   "activations of a step (measured by one probe step "
                   "before the modes); given back after the mode (default: "
                   "none taken; bench/run-torch --constrained: 0.5)")
    p.add_argument("-o", dest="out", default=None,
                   help="JSON output (default build/bench/torch_train.json)")
    a = p.parse_args()
    if a.modes and a.flag_sets:
        p.error("--modes and --flag-sets: one or the other")
    if a.flag_sets:
        a.modes = ",".join(["none", "off"] + [
            "%s@%s" % (k, f) for f in a.flag_sets.split(",")
            for k in ("tiertrain", "userspace")])
    elif not a.modes:
        a.modes = "none,off,tiertrain,userspace"
    for m in a.modes.split(","):
        base, _, lay = m.partition(":")
        kind, _, fs = base.partition("@")
        if lay and (lay not in ("auto", "leaves") or
                    kind in ("none", "linux")):
            p.error("--modes: %r: a mode's layers are :auto or :leaves, "
                    "and only off, tiertrain and userspace have layers" % m)
        if kind not in ("none", "off", "tiertrain", "userspace", "linux") or \
                (fs and (fs not in FLAG_SETS or
                         kind in ("none", "off", "linux"))):
            p.error("--modes: unknown mode %r (none, off, tiertrain, "
                    "userspace, linux, tiertrain@SET, userspace@SET; sets "
                    "%s)" % (m, ",".join(FLAG_SETS)))
        if kind == "linux" and not a.sequential:
            p.error("--modes: linux (the kernel's own tiering, set for the "
                    "whole machine) needs --sequential")
    if a.reads and not a.sequential:
        p.error("--reads needs --sequential")
    if a.fast_room is not None:
        if not a.sequential:
            p.error("--fast-room needs --sequential")
        if not 0 <= a.fast_room <= 1:
            p.error("--fast-room %g: expected 0..1 (the share of the "
                    "saved activations the fast tier has room for)" %
                    a.fast_room)
    if len(set(a.modes.split(","))) != len(a.modes.split(",")):
        p.error("--modes: a mode named twice")
    if a.warmup < 0 or a.time_limit <= 0:
        p.error("--warmup must be >= 0 and --time-limit > 0")
    for k in ("batch", "size", "iters", "threads"):
        if getattr(a, k) < 1:
            p.error("--%s must be at least 1" % k)
    if a.sample_ms <= 0:
        p.error("--sample-ms must be > 0")
    return a


class Sampler(threading.Thread):
    """Footprint samples (t, fast, slow, needed) from a nice 10 thread (a
    SCHED_IDLE one, as bench/train's, starves: PyTorch keeps the CPU)."""

    def __init__(self, h, period):
        super().__init__(daemon=True)
        self.h, self.period = h, period
        self.samples = []
        self.on = False
        self.passes = []
        self.halt = threading.Event()

    def run(self):
        try:                    # below the training thread, still sampling
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
        except (OSError, AttributeError):
            pass
        while not self.halt.wait(self.period):
            if not self.on:
                continue
            t0 = time.monotonic()
            f, s, n = self.h.footprint()
            t1 = time.monotonic()
            self.samples.append((t1, f, s, n))
            self.passes.append(t1 - t0)


def weighted(samples, idx):
    """Time-weighted average and peak of column @idx."""
    if len(samples) < 2:
        v = samples[0][idx] if samples else 0
        return float(v), float(v)
    tot = area = 0.0
    for a, b in zip(samples, samples[1:]):
        dt = b[0] - a[0]
        area += a[idx] * dt
        tot += dt
    return area / tot if tot else 0.0, float(max(s[idx] for s in samples))


def tlb_shootdowns():
    """TLB-shootdown interrupts every CPU received so far (the "TLB" row
    of /proc/interrupts); 0 when it cannot be read."""
    try:
        with open("/proc/interrupts") as f:
            for line in f:
                w = line.split()
                if w and w[0] == "TLB:":
                    return sum(int(v) for v in w[1:] if v.isdigit())
    except OSError:
        pass
    return 0


class Mode:
    """One mode's model, optimizer, handle and figures."""

    def __init__(self, mode, a, torch, tv, ttt):
        base, _, lay = mode.partition(":")
        kind, _, fs = base.partition("@")
        self.kind = kind
        if kind == "tiertrain":
            os.environ["TIERTRAIN_BACKEND"] = "kernel"
        elif kind == "userspace":
            os.environ["TIERTRAIN_BACKEND"] = "move_pages"
        else:
            os.environ.pop("TIERTRAIN_BACKEND", None)
        torch.manual_seed(0)
        self.model = make_model(a, torch, tv)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01,
                                   momentum=0.9)
        self.res = {"mode": mode, "kind": kind, "flag_set": fs or None,
                    "ok": True, "iter_ms": [], "losses": [], "tlb": [],
                    "steps_ontime": []}
        self.h = self.sampler = None
        self.ot0 = None                     # (ontime, late) after the last step
        self.reads = self.nodes = None      # --reads (run_sequential())
        self.st0 = None
        self.warm = 2
        self.seed = a.seed
        if kind not in ("none", "linux"):
            # None keeps the session's default flag set
            # (TT_SCHED_DEFAULT_FLAGS); only what an option asks for is set.
            kw = {"alap": a.alap or None,
                  "sync_late": a.sync_late or None,
                  "off": (kind == "off") or None,
                  "time_hooks": kind == "off",
                  "strict": True, "warmup": a.warmup,
                  "layers": lay or a.layers}
            if a.reference:
                kw.update(reference=True)
            if fs:
                kw.update(FLAG_SETS[fs])
            if a.profile_iters:
                kw["profile_iters"] = a.profile_iters
            try:
                self.h = ttt.attach(self.model, **kw)
            except Exception as e:         # noqa: BLE001 - reported as n/a
                self.res = {"mode": mode, "kind": kind, "flag_set": fs or None,
                            "ok": False, "reason": str(e)}
                return
            self.res["backend"] = self.h.backend
            # the attach() warm-up iteration, the profile, one more
            prof = self.h.session.sched_get()["profile_iters"]
            self.warm = self.h.warmup + prof + 1
            # the first iteration the scheduler plans
            self.res["first_planned"] = self.h.warmup + prof
            self.sampler = Sampler(self.h, a.sample_ms / 1e3)
            self.sampler.start()
        self.warm = min(self.warm, a.iters - 1)
        self.res["warmup"] = self.warm
        os.environ.pop("TIERTRAIN_BACKEND", None)

    def step(self, i, data, F, torch):
        r = self.res
        if not r["ok"] or r.get("error"):
            return
        # the same random numbers in every mode (dropout): the modes share
        # the global RNG and take turns
        torch.manual_seed(self.seed + i)
        if i == self.warm and self.h:
            self.st0 = self.h.stats()
        if self.sampler:
            # measured rounds alternate: sampled (footprint), then
            # unsampled (step time: a pass over the tensors' residency
            # from Python costs milliseconds in the TCG guest)
            self.sampler.on = i >= self.warm and (i - self.warm) % 2 == 0
        meas = self.reads is not None and i >= self.warm
        sampled = bool(self.sampler and self.sampler.on)
        ht = self.h.hook_times if self.h is not None else None
        if ht is not None:
            ht0 = {k: tuple(v) for k, v in ht.items()}
        if meas:
            self.reads.on = self.nodes.on = True
            vm0 = tc.vmstat()
        tlb0 = tlb_shootdowns()
        t0 = time.monotonic()
        try:
            self.opt.zero_grad()
            loss = F.cross_entropy(self.model(data[0]), data[1])
            loss.backward()
            if self.reads:
                self.reads.optimizer(self.opt)
            self.opt.step()
        except Stop:
            raise
        except Exception as e:       # noqa: BLE001 - the mode stops here
            r["error"] = "iteration %d: %s: %s" % (i, type(e).__name__, e)
            print("torch_train: %s stopped: %s" % (r["mode"], r["error"]),
                  file=sys.stderr, flush=True)
            return
        finally:
            if self.sampler:
                self.sampler.on = False
            if meas:
                self.reads.on = self.nodes.on = False
        el = time.monotonic() - t0
        if meas:
            # the residency queries' time is not the step's
            got = self.reads.take()
            el -= got["excluded_s"]
            vm1 = tc.vmstat()
            got["vm"] = {k: vm1[k] - vm0[k] for k in vm1 if k in vm0}
            r["reads"].append(got)
        r["iter_ms"].append(el * 1e3)
        r["tlb"].append(tlb_shootdowns() - tlb0)
        if ht is not None:
            # the hooks' own time this step, [calls, ns] per hook
            r.setdefault("hook_steps", []).append(
                {"iteration": i, "sampled": sampled,
                 "hooks": {k: [v[0] - ht0[k][0], v[1] - ht0[k][1]]
                           for k, v in ht.items()}})
        if self.h and self.kind != "off":
            # the session's own counters (no residency pass): the bytes
            # each step's prefetches brought back on time and late
            st = self.h.session.stats()
            ot = (st["ontime_bytes"], st["late_bytes"])
            if self.ot0 is not None:
                r["steps_ontime"].append(
                    (i, ot[0] - self.ot0[0], ot[1] - self.ot0[1]))
            self.ot0 = ot
        r["losses"].append(loss.item())
        print("torch_train: %s iteration %d: %.0f ms, loss %.6f" %
              (r["mode"], i, r["iter_ms"][-1], r["losses"][-1]),
              file=sys.stderr, flush=True)

    def finish(self, a):
        """Figures from the iterations this mode completed."""
        r, h = self.res, self.h
        if self.reads:
            self.reads.close()
            self.nodes.stop()
            reads_figures(r, self.nodes.samples)
            self.reads = None
        if not r["ok"]:
            return r
        if self.sampler:
            self.sampler.halt.set()
            self.sampler.join()
        rounds = r["iters_done"] = len(r["iter_ms"])
        if len(r["iter_ms"]) <= self.warm or self.st0 is None and h:
            r["ok"] = False
            r["reason"] = "%s after %d iterations, before the end of the " \
                "warm-up (%d)" % (r.get("error", "stopped"), rounds,
                                  self.warm)
            if h:
                h.detach()
            self.model = self.opt = None
            return r
        r["timed"] = timed_rounds(r["iter_ms"], self.warm)
        r["step_ms"] = statistics.median(r["timed"])
        r["tlb_per_iter"] = statistics.median(r["tlb"][self.warm:])
        r["params"] = [p.detach().clone() for p in self.model.parameters()] \
            + [b.detach().clone() for b in self.model.buffers()]
        if h:
            st, st0 = h.stats(), self.st0
            d = {k: st[k] - st0[k] for k in (
                "ontime_bytes", "late_bytes", "late_count", "evicted_bytes",
                "prefetched_bytes", "accepted", "modified", "dropped",
                "events", "submits", "saved_tensors", "saved_bytes",
                "sync_fetched_bytes")}
            r["measured"] = d
            r["stats"] = {k: v for k, v in st.items() if k != "session"}
            r["session"] = st["session"]
            r["layers"] = h.layers()
            r["grouping"] = h.grouping
            moved = d["evicted_bytes"] + d["prefetched_bytes"]
            r["tlb_per_mib"] = sum(r["tlb"][self.warm:]) * MIB / moved \
                if moved else None
            due = d["ontime_bytes"] + d["late_bytes"]
            r["ontime_pct"] = 100.0 * d["ontime_bytes"] / due if due \
                else None
            step_ontime(r)
            smp = self.sampler.samples
            r["nsamples"] = len(smp)
            r["fast_avg"], r["fast_peak"] = weighted(smp, 1)
            r["slow_avg"], r["slow_peak"] = weighted(smp, 2)
            r["oracle_avg"], r["oracle_peak"] = weighted(smp, 3)
            r["max_pass_ms"] = max(self.sampler.passes) * 1e3 \
                if self.sampler.passes else 0.0
            r["events_per_iter"] = d["events"] / max(1, rounds - self.warm)
            h.detach()
        self.model = self.opt = None
        return r


def step_ontime(r):
    """From r["steps_ontime"]: the on-time share of each planned step
    (None when nothing was due in it), of the first planned step and of
    all planned steps."""
    fp = r.get("first_planned")
    steps = [(i, o, l) for i, o, l in r["steps_ontime"]
             if fp is not None and i >= fp]
    r["ontime_per_step"] = [(i, 100.0 * o / (o + l) if o + l else None)
                            for i, o, l in steps]
    r["ontime_first_pct"] = r["ontime_per_step"][0][1] \
        if r["ontime_per_step"] else None
    o = sum(x[1] for x in steps)
    lt = sum(x[2] for x in steps)
    r["ontime_planned_pct"] = 100.0 * o / (o + lt) if o + lt else None


def fastest(run, rounds=5):
    """The least of @rounds calls of @run() (each returns nanoseconds)."""
    return min(run() for _ in range(rounds))


def per_call(f, arg, k):
    """A round for fastest(): @k calls of @f(@arg), their nanoseconds."""
    def run():
        t0 = time.perf_counter_ns()
        for _ in range(k):
            f(arg)
        return time.perf_counter_ns() - t0
    return run


def module_cost(torch, model, x):
    """PyTorch's own cost of calling modules, without tiertrain: how many
    module calls one forward of @model on @x makes (counted with a global
    forward pre-hook, in a pass of its own), and what one call of a
    module's __call__ with no hooks costs beyond its forward (an
    nn.Identity called 20000 times through __call__ and through forward,
    the fastest of 5 rounds each)."""
    n = [0]

    def count(mod, inp):
        n[0] += 1
    hd = torch.nn.modules.module.register_module_forward_pre_hook(count)
    try:
        with torch.no_grad():
            model(x)
    finally:
        hd.remove()
    idm = torch.nn.Identity()
    k = 20000
    call_ns = fastest(per_call(idm, x, k)) / k
    fwd_ns = fastest(per_call(idm.forward, x, k)) / k
    return {"module_calls": n[0], "call_ns": call_ns, "forward_ns": fwd_ns,
            "per_call_ns": max(0.0, call_ns - fwd_ns),
            "per_step_ms": n[0] * max(0.0, call_ns - fwd_ns) / 1e6,
            "dispatch_ns": dispatch_cost(torch, call_ns, x)}


def dispatch_cost(torch, plain_ns, x, k=2000):
    """What PyTorch spends calling a hook that does nothing, in ns per
    call, beside the same work with no hook (the fastest of 5 rounds of
    @k): "module_pre" and "module_post" per call of a module forward
    pre-hook / forward hook (nn.Identity on @x, against @plain_ns, one
    call of it with no hook: module_cost()'s), "pack"
    per tensor saved through saved_tensors_hooks shaped as attach()'s (a
    Python pack returning a tuple, operator.itemgetter unpacking it) and
    unpacked by the backward (a*b: two tensors), "node_pre" per
    autograd-node pre-hook (a*2's backward)."""
    clock = time.perf_counter_ns

    def nothing(*args):
        return None

    def pack(t):
        return (t,)
    unpack = operator.itemgetter(0)
    hooks = torch.autograd.graph.saved_tensors_hooks
    pre = torch.nn.Identity()
    pre.register_forward_pre_hook(nothing)
    post = torch.nn.Identity()
    post.register_forward_hook(nothing)
    out = {"module_pre": fastest(per_call(pre, x, k)) / k - plain_ns,
           "module_post": fastest(per_call(post, x, k)) / k - plain_ns}
    a = torch.ones(4, requires_grad=True)
    b = torch.ones(4, requires_grad=True)
    g = torch.ones(4)

    def mul(hooked):
        def run():
            t0 = clock()
            for _ in range(k):
                if hooked:
                    with hooks(pack, unpack):
                        y = a * b
                else:
                    y = a * b
                y.backward(g)
            return clock() - t0
        return run

    def ctx():
        # the with-statement alone, to leave out of "pack"
        t0 = clock()
        for _ in range(k):
            with hooks(pack, unpack):
                pass
        return clock() - t0
    out["pack"] = (fastest(mul(True)) - fastest(ctx) -
                   fastest(mul(False))) / 2 / k

    def node(hooked):
        def run():
            t = 0
            for _ in range(k):
                y = a * 2
                if hooked:
                    y.grad_fn.register_prehook(nothing)
                t0 = clock()
                y.backward(g)
                t += clock() - t0
            return t
        return run
    out["node_pre"] = (fastest(node(True)) - fastest(node(False))) / k
    a.grad = b.grad = None
    return {n: max(0.0, v) for n, v in out.items()}


def ref_off(by, r):
    """The off mode to compare mode @r with: the one with the same layers
    suffix (tiertrain:leaves, off:leaves), else plain off."""
    lay = r["mode"].partition(":")[2]
    return by.get("off:" + lay) if lay and "off:" + lay in by \
        else by.get("off")


# which of dispatch_cost()'s figures PyTorch spends on a call of each of
# attach()'s hooks (stats()["hook_times"]); backward_done is an engine
# callback (queue_callback), priced as a node pre-hook
HOOK_DISPATCH = {"model_pre": "module_pre", "layer_pre": "module_pre",
                 "model_post": "module_post", "layer_post": "module_post",
                 "pack": "pack", "backward": "node_pre",
                 "backward_done": "node_pre"}


def hook_cost(a, results, mc, timer_ns):
    """attach()'s added cost per step, per off mode (a dict each): its
    hooks' own time in the unsampled measured rounds (less @timer_ns per
    call, what the timing records for a hook that does nothing) plus what
    PyTorch spends calling them (@mc["dispatch_ns"] by kind), against
    PyTorch's own module-call cost @mc (module_cost()); beside it, off's
    step minus none's, the median over the same rounds."""
    by = {r["mode"]: r for r in results if r["ok"]}
    none = by.get("none")
    out = {}
    for off in (r for r in results if r["ok"] and r["kind"] == "off"):
        w = off["warmup"]
        steps = [s for s in off.get("hook_steps", [])
                 if s["iteration"] >= w and not s["sampled"]]
        if not steps:
            continue
        disp = mc["dispatch_ns"]
        per = {}
        for name in steps[0]["hooks"]:
            calls = statistics.mean(s["hooks"][name][0] for s in steps)
            ns = statistics.mean(s["hooks"][name][1] for s in steps)
            body = max(0.0, ns - calls * timer_ns)
            per[name] = {"calls": calls, "body_ms": body / 1e6,
                         "dispatch_ms":
                         calls * disp[HOOK_DISPATCH[name]] / 1e6}
        added = sum(v["body_ms"] + v["dispatch_ms"] for v in per.values())
        step_ms = statistics.median(
            off["iter_ms"][s["iteration"]] for s in steps)
        o = out[off["mode"]] = {
            "added_ms": added, "rounds": len(steps), "hooks": per,
            "timer_ns": timer_ns, "step_ms": step_ms,
            "added_pct": 100.0 * added / step_ms,
            "pytorch_ms": mc["per_step_ms"],
            "ratio": added / mc["per_step_ms"] if mc["per_step_ms"] else None,
            "layers": len(off.get("grouping") or []) or off["stats"]["layers"],
            "events_per_iter": off.get("events_per_iter")}
        if none and not a.sequential:
            diffs = [x - y for x, y in zip(timed_rounds(off["iter_ms"], w),
                                           timed_rounds(none["iter_ms"], w))]
            if diffs:
                o["step_diff_ms"] = statistics.median(diffs)
        print("\nhook cost, %s (%d layers): attach() adds %.2f ms a step "
              "(its hooks' own time, %d unsampled rounds, plus PyTorch "
              "calling them: %.2f%% of off's %.1f ms step; goal <= %.0f%%: "
              "%s); PyTorch's own module calls: %d a forward x %.2f us = "
              "%.3f ms a step; attach()'s cost is %s of it (goal <= %.1fx: "
              "%s)" % (
                  off["mode"], o["layers"], added, len(steps),
                  o["added_pct"], step_ms, GOAL_HOOK_PCT,
                  verdict(o["added_pct"] <= GOAL_HOOK_PCT),
                  mc["module_calls"], mc["per_call_ns"] / 1e3,
                  mc["per_step_ms"],
                  "%.1fx" % o["ratio"] if o["ratio"] is not None else "n/a",
                  GOAL_HOOK_RATIO, verdict(o["ratio"] is not None and
                                           o["ratio"] <= GOAL_HOOK_RATIO)))
        print("  per step: %s" % ", ".join(
            "%s %.0f calls %.3f + %.3f ms" % (
                n, v["calls"], v["body_ms"], v["dispatch_ms"])
            for n, v in per.items()))
        print("  (hook: calls, its body + PyTorch calling it; timing "
              "recorded %.2f us per call of a no-op hook, left out; "
              "off - none, median: %s)" % (
                  timer_ns / 1e3,
                  "%.1f ms" % o["step_diff_ms"] if "step_diff_ms" in o
                  else "n/a"))
    return out


def run_modes(a, torch, tv, ttt, data, t_start):
    """Every mode's iteration i, then every mode's i + 1: the modes see
    the same host load, round by round. Ends early at --time-limit or on
    Stop (a signal); the figures are made from what was done."""
    import torch.nn.functional as F
    modes = []
    stopped = None
    try:
        for m in a.modes.split(","):
            modes.append(Mode(m, a, torch, tv, ttt))
        w = max([m.warm for m in modes if m.res["ok"]] or [0])
        for m in modes:                 # the same measured rounds for all
            if m.res["ok"]:
                m.warm = m.res["warmup"] = w
        last = 0.0
        for i in range(a.iters):
            t0 = time.monotonic()
            if t0 - t_start + last > a.time_limit:
                stopped = "time limit (%.0f s) before round %d of %d" % (
                    a.time_limit, i, a.iters)
                break
            for m in modes:
                m.step(i, data, F, torch)
            last = time.monotonic() - t0
    except Stop as e:
        stopped = str(e)
    if stopped:
        print("torch_train: stopped early: %s; the table is made from the "
              "iterations done" % stopped, file=sys.stderr, flush=True)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)   # finish the report
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    res = [m.finish(a) for m in modes]
    for r in res:
        r["stopped_early"] = stopped
    # step time against none: the median over the measured rounds of the
    # ratio of the two steps of the same round
    none = next((r for r in res if r["mode"] == "none" and r["ok"]), None)
    for r in res:
        if r["ok"] and none and r is not none:
            w = r["warmup"]
            r["step_vs_none_pct"] = 100.0 * (statistics.median(
                x / y for x, y in zip(timed_rounds(r["iter_ms"], w),
                                      timed_rounds(none["iter_ms"], w))) - 1)
    gc.collect()
    return res


def seq_warm(a, tiertrain):
    """The rounds every sequential mode leaves out: attach()'s warm-up,
    the scheduler's profile iterations (the module's default unless
    --profile-iters), one more; at most --iters - 1."""
    prof = a.profile_iters
    if not prof:
        try:
            s = tiertrain.Session()
            prof = s.sched_get()["profile_iters"]
            s.close()
        except Exception:        # noqa: BLE001 - no session: the default
            prof = 1
    return min(a.warmup + prof + 1, a.iters - 1)


def malloc_trim():
    """Give the C heap's free memory back to the kernel (between modes)."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def run_sequential(a, torch, tv, ttt, tiertrain, data, t_start):
    """The modes one after another, each with a model of its own created
    at its start and freed at its end; --time-limit shared out evenly.
    The linux mode runs with Linux's own tiering on (tc.Knobs), only
    while it runs. Ends early on Stop (a signal): the modes not begun are
    n/a."""
    import torch.nn.functional as F
    names = a.modes.split(",")
    per = a.time_limit / len(names)
    warm = seq_warm(a, tiertrain)
    fast = tc.fast_nodes(tiertrain)
    knobs = tc.Knobs()
    res, stopped = [], None
    balloon = room = None
    if a.fast_room is not None:
        why = tc.Balloon.check()
        if why:
            raise SystemExit("torch_train: --fast-room: " + why)
        torch.manual_seed(0)
        model = make_model(a, torch, tv)
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        state, act = tc.probe(torch, model, opt, data, F)
        model = opt = None
        room = int(a.fast_room * act)
        a.fast_room_bytes = {"model_state": state, "activations": act,
                             "room": room}
        print("torch_train: fast room after each mode's first iteration "
              "%.1f MiB: %g x %.1f MiB of saved activations (model state "
              "%.1f MiB)" % (room / MIB, a.fast_room, act / MIB,
                             state / MIB),
              file=sys.stderr, flush=True)
        balloon = tc.Balloon()
    for name in names:
        kind = name.partition(":")[0].partition("@")[0]
        if stopped:
            res.append({"mode": name, "kind": kind, "ok": False,
                        "reason": "not run: " + stopped})
            continue
        if kind == "linux":
            why = tc.Knobs.check()
            if why:
                res.append({"mode": name, "kind": kind, "ok": False,
                            "reason": why})
                continue
        gc.collect()
        malloc_trim()
        m, ended, got, unfit = None, None, None, None
        try:
            nodes = tc.NodeSampler(fast, a.sample_ms / 1e3) if a.reads \
                else None
            m = Mode(name, a, torch, tv, ttt)
            if m.res["ok"]:
                m.warm = m.res["warmup"] = warm
                if a.reads:
                    m.reads = tc.Reads(torch, tiertrain, m.model, fast)
                    m.nodes = nodes
                    nodes.start()
                    m.res["reads"] = []
                if kind == "linux" and not balloon:
                    m.res["knobs"] = knobs.on()
                t0, last = time.monotonic(), 0.0
                for i in range(a.iters):
                    t1 = time.monotonic()
                    if t1 - t0 + last > per:
                        ended = "its share of the time limit (%.0f s) " \
                            "before iteration %d of %d" % (per, i, a.iters)
                        break
                    m.step(i, data, F, torch)
                    last = time.monotonic() - t1
                    if balloon and got is None:
                        # what the first iteration freed goes back to
                        # the kernel first, else the process's heap keeps
                        # room the balloon does not see
                        gc.collect()
                        malloc_trim()
                        try:
                            got = balloon.fill(fast, room)
                        except OSError as e:
                            # this mode only: the others still run
                            unfit = "the fast tier could not be " \
                                "made that small: %s" % e
                            print("torch_train: %s: %s" % (name, unfit),
                                  file=sys.stderr, flush=True)
                            break
                        # Linux's tiering from the fast tier's new size
                        # on: turned on before the fill, its kswapd
                        # demotes (and promotion refills) as fast as the
                        # balloon takes (6.12: 20 MiB of room left)
                        if kind == "linux":
                            m.res["knobs"] = knobs.on()
                        if nodes:
                            nodes.rebase()
                        print("torch_train: %s: %.1f MiB of the fast tier "
                              "taken, %.1f MiB left" % (
                                  name, balloon.taken / MIB,
                                  sum(got.values()) / MIB),
                              file=sys.stderr, flush=True)
        except Stop as e:
            stopped = ended = str(e)
        finally:
            knobs.off()
        if ended:
            print("torch_train: %s stopped early: %s" % (name, ended),
                  file=sys.stderr, flush=True)
        if m is not None:
            if stopped:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                signal.signal(signal.SIGINT, signal.SIG_IGN)
            r = m.finish(a)
            r["stopped_early"] = ended
            if unfit:
                r["ok"], r["reason"] = False, unfit
            if got is not None:
                r["fast_room"] = {"balloon": balloon.taken,
                                  "left": sum(got.values())}
            res.append(r)
            m = None
        if balloon:
            balloon.pop()
        print("torch_train: %s done after %.0f s" % (
            name, time.monotonic() - t_start), file=sys.stderr, flush=True)
    gc.collect()
    none = next((r for r in res if r["mode"] == "none" and r["ok"]), None)
    for r in res:
        if r["ok"] and none and r is not none:
            r["step_vs_none_pct"] = pct(r["step_ms"], none["step_ms"])
    return res


def reads_figures(r, node_samples):
    """Per-step figures of a --reads mode from its measured iterations."""
    got = r.get("reads") or []
    n = len(got)
    r["reads_steps"] = n
    if not n:
        return
    tot = lambda f: sum(f(g) for g in got) / n     # noqa: E731
    r["read_fast"] = tot(lambda g: g["rd"]["fast"])
    r["read_slow"] = tot(lambda g: g["rd"]["slow"])
    r["written_fast"] = tot(lambda g: g["wr"]["fast"])
    r["written_slow"] = tot(lambda g: g["wr"]["slow"])
    r["read_slow_by_kind"] = {k: tot(lambda g: g["rd_slow"][k])
                              for k in tc.Reads.KINDS}
    rd = r["read_fast"] + r["read_slow"]
    r["slow_read_pct"] = 100.0 * r["read_slow"] / rd if rd else 0.0
    r["excluded_ms"] = tot(lambda g: g["excluded_s"]) * 1e3
    keys = set().union(*(g["vm"] for g in got))
    r["vmstat_per_step"] = {k: tot(lambda g: g["vm"].get(k, 0))
                            for k in sorted(keys)}
    r["fast_used_avg"], r["fast_used_peak"] = weighted(node_samples, 1)
    r["fast_used_samples"] = len(node_samples)
    r["projected_ms"] = {w: tc.projected(r, w) for w in tc.PROJ}
    r.pop("reads")


def reads_table(a, results):
    """--reads: where the compute read, who migrated, the projection;
    then the goals against the linux mode."""
    page = os.sysconf("SC_PAGE_SIZE")
    fr = getattr(a, "fast_room_bytes", None)
    if fr:
        print("\nfast tier per mode (--fast-room %g): after the mode's "
              "first iteration (its %.1f MiB of model state then exist), "
              "room for %.1f MiB, %g of the %.1f MiB of activations one step "
              "saves (a probe step); the rest taken away, mlocked (per mode: "
              "%s)" % (
                  a.fast_room, fr["model_state"] / MIB, fr["room"] / MIB,
                  a.fast_room, fr["activations"] / MIB, ", ".join(
                      "%s %.1f MiB taken, %.1f left" % (
                          r["mode"], r["fast_room"]["balloon"] / MIB,
                          r["fast_room"]["left"] / MIB)
                      for r in results if r.get("fast_room"))))
    by = {r["mode"]: r for r in results if r["ok"] and r.get("reads_steps")}
    none = by.get("none")
    print("\nwhere the compute read (residency of each leaf module's inputs "
          "and parameters as its forward and its backward begin, and of "
          "the optimizer's tensors as its step begins; per step), who "
          "migrated (per step), the step projected on hardware "
          "(bench/README.md: bytes / bandwidth)")
    print("%-10s %9s %9s %9s %9s %7s %9s %9s %8s %8s %8s %8s %9s %8s %9s "
          "%8s" % ("mode", "step ms", "peak MiB", "read MiB", "slow MiB",
                   "slow %", "tt MiB", "kern MiB", "demoted", "promoted",
                   "hint flt", "tlb", "CXL ms", "vs none", "Optane ms",
                   "vs none"))
    for r in results:
        if r["mode"] not in by:
            print("%-10s n/a: %s" % (r["mode"], r.get("reason") or
                                     "no measured iteration"))
            continue
        vm = r["vmstat_per_step"]
        dem = sum(vm.get(k, 0) for k in ("pgdemote_kswapd", "pgdemote_direct",
                                         "pgdemote_khugepaged")) * page
        kern = dem + vm.get("numa_pages_migrated", 0) * page
        tt = 0.0
        if "measured" in r:
            d = r["measured"]
            tt = (d["evicted_bytes"] + d["prefetched_bytes"]) / \
                max(1, r["iters_done"] - r["warmup"])
        cxl, opt = r["projected_ms"]["cxl"], r["projected_ms"]["optane"]
        vc = "%+.1f%%" % pct(cxl, none["projected_ms"]["cxl"]) \
            if none and r is not none else "-"
        vo = "%+.1f%%" % pct(opt, none["projected_ms"]["optane"]) \
            if none and r is not none else "-"
        print("%-10s %9.1f %9.1f %9.1f %9.1f %6.2f%% %9.1f %9.1f %8.1f "
              "%8.1f %8.0f %8.0f %9.2f %8s %9.2f %8s" % (
                  r["mode"], r["step_ms"], r["fast_used_peak"] / MIB,
                  (r["read_fast"] + r["read_slow"]) / MIB,
                  r["read_slow"] / MIB, r["slow_read_pct"], tt / MIB,
                  kern / MIB, dem / MIB,
                  vm.get("pgpromote_success", 0) * page / MIB,
                  vm.get("numa_hint_faults", 0), r["tlb_per_iter"], cxl, vc,
                  opt, vo))
    for r in results:
        if r["mode"] in by:
            k = r["read_slow_by_kind"]
            print("%s: slow reads per step: model state %.1f MiB, saved "
                  "activations and inputs %.1f MiB; written to the slow tier "
                  "%.1f MiB, to the fast %.1f MiB; fast nodes' used memory "
                  "over the mode's start avg %.1f MiB, peak %.1f MiB (%d "
                  "samples); residency queries %.0f ms per step, not in "
                  "the step" % (
                      r["mode"], k["model"] / MIB, k["activations"] / MIB,
                      r["written_slow"] / MIB, r["written_fast"] / MIB,
                      r["fast_used_avg"] / MIB, r["fast_used_peak"] / MIB,
                      r["fast_used_samples"], r["excluded_ms"]))
    print("(MiB per step; peak: the fast nodes' used memory over the "
          "mode's start; demoted, promoted: the kernel's pgdemote_* and "
          "pgpromote_success; kern MiB: those demotions and "
          "numa_pages_migrated; tt MiB: tiertrain's evictions and "
          "prefetches; hint flt: numa_hint_faults; tlb: shootdowns "
          "received)")
    k, lx = by.get("tiertrain"), by.get("linux")
    if not k or not lx:
        print("against linux: %s" % (
            "the tiertrain mode has no figures" if not k else
            "the linux mode has no figures (--modes ...,linux)"))
        return
    print("tiertrain: reads %.2f%% of its bytes from the slow tier (goal "
          "<= 1%%: %s)" % (k["slow_read_pct"],
                           verdict(k["slow_read_pct"] <= 1.0)))
    kc, lc = k["projected_ms"]["cxl"], lx["projected_ms"]["cxl"]
    ko, lo = k["projected_ms"]["optane"], lx["projected_ms"]["optane"]
    print("tiertrain: projected step on CXL %.2f vs linux's %.2f ms "
          "(%+.1f%%), on Optane %.2f vs %.2f ms (%+.1f%%) (goal <= -35%%: "
          "%s)" % (kc, lc, pct(kc, lc), ko, lo, pct(ko, lo),
                   verdict(pct(kc, lc) <= -35.0 and pct(ko, lo) <= -35.0)))
    print("tiertrain: peak fast %.1f vs linux's %.1f MiB (goal: equal or "
          "smaller: %s)" % (k["fast_used_peak"] / MIB,
                            lx["fast_used_peak"] / MIB,
                            verdict(k["fast_used_peak"] <=
                                    lx["fast_used_peak"])))


def make_model(a, torch, tv):
    """torchvision.models.<a.model>(num_classes=10), or "transformer": a
    small ViT-like model (4x4 patches, 4 nn.TransformerEncoder layers of
    width --transformer-dim, 4 heads, dropout 0.1, a linear head)."""
    if a.model != "transformer":
        return getattr(tv, a.model)(num_classes=10)
    nn = torch.nn
    d = a.transformer_dim

    class Tiny(nn.Module):
        def __init__(self):
            super().__init__()
            self.patch = nn.Conv2d(3, d, 4, stride=4)
            n = (a.size // 4) ** 2
            self.pos = nn.Parameter(torch.zeros(1, n, d))
            layer = nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.1,
                                               batch_first=True)
            try:
                self.enc = nn.TransformerEncoder(layer, 4,
                                                 enable_nested_tensor=False)
            except TypeError:                   # an older torch
                self.enc = nn.TransformerEncoder(layer, 4)
            self.norm = nn.LayerNorm(d)
            self.head = nn.Linear(d, 10)

        def forward(self, x):
            x = self.patch(x).flatten(2).transpose(1, 2) + self.pos
            return self.head(self.norm(self.enc(x)).mean(1))
    return Tiny()


def timed_rounds(iter_ms, warm):
    """The measured rounds without footprint sampling (every other one)."""
    return iter_ms[warm + 1::2] or iter_ms[warm:]


def pct(v, ref):
    return 100.0 * (v - ref) / ref if ref else 0.0


def verdict(ok):
    return "met" if ok else "MISSED"


def table(a, results):
    by = {r["mode"]: r for r in results if r["ok"]}
    none, off = by.get("none"), by.get("off")
    print("\nbench/torch_train: torchvision %s, batch %d, %dx%d input, %d "
          "iterations per mode (%s warm-up), %d torch thread(s), sample "
          "every %.1f ms%s" % (
              a.model, a.batch, a.size, a.size, a.iters,
              "/".join(str(r.get("warmup", "-")) for r in results
                       if r["ok"])[:1] or "-", a.threads, a.sample_ms,
              ", scheduler: " + ("flag set per mode (@SET)" if "@" in a.modes
                                 else "reference" if a.reference else
                                 "the session default (TT_SCHED_DEFAULT_FLAGS)") +
              "".join(", " + f for f, on in (("alap", a.alap),
                                             ("sync-late", a.sync_late))
                      if on)))
    print("fast-tier bytes of the saved tensors autograd holds (measured); "
          "\"vs off\" against the off run (same hooks, nothing moved)\n")
    for r in results:
        if r.get("stopped_early") or r.get("error"):
            print("%s: %d iterations done; %s" % (
                r["mode"], r.get("iters_done", len(r.get("iter_ms", []))),
                r.get("error") or "stopped early: " + r["stopped_early"]))
    print("%-16s %9s %8s %9s %8s %9s %8s %13s %8s %8s %9s %8s %9s %11s" % (
        "mode", "step ms", "vs none", "avg MiB", "vs off", "peak MiB",
        "vs off", "oracle avg/pk", "on time", "late MiB", "moved MiB",
        "tlb/MiB", "tlb/iter", "acc/mod/dr"))
    for r in results:
        if not r["ok"]:
            print("%-16s n/a: %s" % (r["mode"], r["reason"]))
            continue
        step = "%+.1f%%" % r["step_vs_none_pct"] \
            if "step_vs_none_pct" in r else "-"
        if "fast_avg" not in r:
            print("%-16s %9.1f %8s %9s %8s %9s %8s %13s %8s %8s %9s %8s "
                  "%9.0f" % (r["mode"], r["step_ms"], step, "", "", "", "",
                             "", "", "", "", "-", r["tlb_per_iter"]))
            continue
        ref = ref_off(by, r) if r["kind"] != "off" else None
        avg = "%+.1f%%" % pct(r["fast_avg"], ref["fast_avg"]) if ref else "-"
        peak = "%+.1f%%" % pct(r["fast_peak"], ref["fast_peak"]) if ref \
            else "-"
        d = r["measured"]
        ot = "-" if r["ontime_pct"] is None or r["kind"] == "off" else \
            "%.2f%%" % r["ontime_pct"]
        tpm = "-" if r["tlb_per_mib"] is None else "%.1f" % r["tlb_per_mib"]
        print("%-16s %9.1f %8s %9.1f %8s %9.1f %8s %6.1f/%6.1f %8s %8.1f "
              "%9.0f %8s %9.0f %11s" % (
                  r["mode"], r["step_ms"], step, r["fast_avg"] / MIB, avg,
                  r["fast_peak"] / MIB, peak, r["oracle_avg"] / MIB,
                  r["oracle_peak"] / MIB, ot, d["late_bytes"] / MIB,
                  (d["evicted_bytes"] + d["prefetched_bytes"]) / MIB, tpm,
                  r["tlb_per_iter"],
                  "%d/%d/%d" % (d["accepted"], d["modified"], d["dropped"])))
    print("%-16s %9s %8s %9s %8s %9s %8s %13s %8s" % (
        "goal", "", "<=+%.0f%%" % GOAL_STEP, "", "<=%.0f%%" % GOAL_AVG, "",
        "<=%.0f%%" % GOAL_PEAK, "", ">=%.0f%%" % GOAL_ONTIME))
    print()
    for r in results:
        m = r["mode"]
        if not r["ok"] or r["kind"] not in ("tiertrain", "userspace"):
            continue
        off = ref_off(by, r)
        if off:
            av, pk = pct(r["fast_avg"], off["fast_avg"]), \
                pct(r["fast_peak"], off["fast_peak"])
            print("%s: avg fast %+.1f%% (goal %.0f%%: %s; oracle %+.1f%%), "
                  "peak fast %+.1f%% (goal %.0f%%: %s; oracle %+.1f%%)" % (
                      m, av, GOAL_AVG, verdict(av <= GOAL_AVG),
                      pct(r["oracle_avg"], off["fast_avg"]), pk, GOAL_PEAK,
                      verdict(pk <= GOAL_PEAK),
                      pct(r["oracle_peak"], off["fast_peak"])))
        d = r["measured"]
        if r["ontime_pct"] is not None:
            print("%s: on time %.2f%% of %.1f MiB due (goal >= %.0f%%: %s), "
                  "late %.1f MiB in %d layer-iterations, sync-fetched %.1f "
                  "MiB" % (m, r["ontime_pct"],
                           (d["ontime_bytes"] + d["late_bytes"]) / MIB,
                           GOAL_ONTIME, verdict(r["ontime_pct"] >= GOAL_ONTIME),
                           d["late_bytes"] / MIB, d["late_count"],
                           d["sync_fetched_bytes"] / MIB))
        else:
            print("%s: on time: nothing was evicted in the measured "
                  "iterations (goal >= %.0f%%: MISSED)" % (m, GOAL_ONTIME))
        ps = r.get("ontime_per_step")
        if ps:
            due = [v for _, v in ps if v is not None]
            print("%s: on time per planned step (from iteration %d): %s; "
                  "the first %s, all planned %s (goal >= %.0f%% in every "
                  "step: %s)" % (
                      m, ps[0][0], " ".join("-" if v is None else "%.0f%%" % v
                                            for _, v in ps),
                      "-" if r["ontime_first_pct"] is None else
                      "%.1f%%" % r["ontime_first_pct"],
                      "-" if r["ontime_planned_pct"] is None else
                      "%.1f%%" % r["ontime_planned_pct"], GOAL_ONTIME,
                      verdict(min(due) >= GOAL_ONTIME) if due else
                      "MISSED, nothing was due"))
        if "step_vs_none_pct" in r:
            s = r["step_vs_none_pct"]
            print("%s: step %.1f ms (median; %.1f..%.1f) vs %.1f ms without "
                  "tiertrain: %+.1f%% round by round (goal <= +%.0f%%: %s)" % (
                      m, r["step_ms"], min(r["timed"]), max(r["timed"]),
                      none["step_ms"], s,
                      GOAL_STEP, verdict(s <= GOAL_STEP)))
        st = r["stats"]
        print("%s: %d layers, %.1f events and %.1f MiB of saved tensors "
              "(%d of them) registered per iteration; ER %.0f MB/s, PR %.0f "
              "MB/s; sampler %d samples, longest pass %.1f ms" % (
                  m, st["layers"], r["events_per_iter"],
                  d["saved_bytes"] / MIB / max(1, r["iters_done"] - r["warmup"]),
                  d["saved_tensors"] // max(1, r["iters_done"] - r["warmup"]),
                  st["er_bps"] / 1e6, st["pr_bps"] / 1e6, r["nsamples"],
                  r["max_pass_ms"]))
        g = r.get("grouping")
        print("%s: layers %s%s" % (
            m, "grouped from the timed warm-up (auto): " if g else
            "the leaf modules", " ".join(g) if g else ""))
    for r in results:
        if not r["ok"] or r["kind"] != "tiertrain" or "session" not in r:
            continue
        se = r["session"]
        tot = se["engine_bytes"] + se["mover_bytes"]
        print("%s: backends (whole run): engine %.1f MiB, movers %.1f MiB "
              "(%s of the moved bytes in whole huge pages), huge pages kept "
              "%d, split %d, partly covered and left %d" % (
                  r["mode"], se["engine_bytes"] / MIB, se["mover_bytes"] / MIB,
                  "%.1f%%" % (100.0 * se["mover_bytes"] / tot) if tot else "-",
                  se["huge_kept"], se["huge_split"], se["huge_partial"]))
    for off in (r for r in results if r["ok"] and r["kind"] == "off"):
        if "step_vs_none_pct" in off:
            print("%s: hooks and events cost %+.1f%% step time, round by "
                  "round (%.1f events per iteration)" % (
                      off["mode"], off["step_vs_none_pct"],
                      off["events_per_iter"]))


def layer_table(r):
    if "layers" not in r:
        return
    ms = 1e6
    print("\n%s, last iteration: what moved and when (ms from the "
          "iteration's start, per the scheduler)" % r["mode"])
    print("%-24s %-9s %8s %8s %15s %15s %8s %s" % (
        "layer", "plan", "KiB", "fwd end", "evict", "prefetch", "bwd",
        "arrival"))
    for l in r["layers"]:
        st = {0: "profile", 1: "accepted", 2: "modified", 3: "dropped"}.get(
            l["status"], "?")
        ev = l["last_evicted_bytes"]
        if not ev:
            arr = "stayed fast"
        elif l["last_late_bytes"]:
            arr = "LATE %.0f KiB" % (l["last_late_bytes"] / 1024)
        else:
            arr = "on time, %.1f ms early" % (
                (l["last_bwd_start_ns"] - l["last_prefetch_end_ns"]) / ms)
        print("%-24s %-9s %8.0f %8.1f %7.1f-%-7.1f %7.1f-%-7.1f %8.1f %s" % (
            l["name"][:24], st, l["saved_bytes"] / 1024,
            l["last_fwd_end_ns"] / ms, l["last_evict_start_ns"] / ms,
            l["last_evict_end_ns"] / ms, l["last_prefetch_start_ns"] / ms,
            l["last_prefetch_end_ns"] / ms, l["last_bwd_start_ns"] / ms, arr))


def overhead(torch, ttt, tiertrain):
    """Cost of the Python layer per event on a model of many tiny layers."""
    import torch.nn as nn
    import torch.nn.functional as F
    nl, iters = 64, 40
    torch.manual_seed(0)
    layers = []
    for _ in range(nl):
        layers += [nn.Linear(16, 16), nn.Tanh()]
    model = nn.Sequential(*layers)
    x = torch.randn(4, 16)
    y = torch.randn(4, 16)

    def step():
        model.zero_grad(set_to_none=True)
        F.mse_loss(model(x), y).backward()

    def timed(n):
        ts = []
        for _ in range(n):
            t0 = time.perf_counter_ns()
            step()
            ts.append(time.perf_counter_ns() - t0)
        return statistics.median(ts)
    os.environ.pop("TIERTRAIN_BACKEND", None)
    out = {}
    for _ in range(3):
        step()
    rounds = []
    for r in range(5):                       # interleaved: noise hits all
        none = timed(iters)
        h = ttt.attach(model, off=True)
        real = h._tt_events
        h._tt_events = lambda sp, addr, n: n  # the hooks without the C call
        for _ in range(2):
            step()
        ev0 = h.counts["events"]
        sub0 = h.counts["submits"]
        nop = timed(iters)
        evs = (h.counts["events"] - ev0) / iters
        subs = (h.counts["submits"] - sub0) / iters
        h._tt_events = real
        sub = timed(iters)
        blocks0 = sys.getallocatedblocks()
        for _ in range(iters):
            step()
        gc.collect()
        blocks = sys.getallocatedblocks() - blocks0
        h.detach()
        rounds.append((none, nop, sub, evs, subs, blocks))
    none = statistics.median(r[0] for r in rounds)
    nop = statistics.median(r[1] for r in rounds)
    sub = statistics.median(r[2] for r in rounds)
    evs = rounds[-1][3]
    subs = rounds[-1][4]
    # a null system call through Python, for scale
    t0 = time.perf_counter_ns()
    for _ in range(20000):
        os.getppid()
    null = (time.perf_counter_ns() - t0) / 20000
    out = {"layers": 2 * nl, "events_per_iter": evs,
           "submits_per_iter": subs, "step_ns_none": none,
           "step_ns_hooks": nop, "step_ns_submit": sub,
           "hook_ns_per_event": (nop - none) / evs,
           "submit_ns_per_call": (sub - nop) / subs,
           "total_ns_per_event": (sub - none) / evs,
           "getppid_ns": null,
           "allocated_blocks_growth": [r[5] for r in rounds]}
    print("\noverhead: %d tiny layers, %.0f events in %.0f tt_events() calls "
          "per iteration; step %.2f ms without tiertrain, %.2f ms with the "
          "hooks (no submission), %.2f ms with submissions (TT_SCHED_OFF)" % (
              out["layers"], evs, subs, none / 1e6, nop / 1e6, sub / 1e6))
    print("overhead: per event %.1f us in the Python hooks, per tt_events() "
          "call %.1f us; %.1f us per event in all (os.getppid() through "
          "Python: %.2f us); Python blocks allocated and kept over %d "
          "iterations, per round: %s" % (
              out["hook_ns_per_event"] / 1e3,
              out["submit_ns_per_call"] / 1e3,
              out["total_ns_per_event"] / 1e3, null / 1e3, iters,
              out["allocated_blocks_growth"]))
    return out


def main():
    a = parse()

    def on_signal(sig, frame):
        raise Stop("signal %d" % sig)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = a.out or os.path.join(repo, "build", "bench", "torch_train.json")
    sys.path.insert(0, os.path.join(repo, "lib", "python"))
    t0 = time.monotonic()
    import torch
    import torchvision.models as tv
    import tiertrain
    import tiertrain.torch as ttt
    print("torch_train: torch %s imported in %.1f s; tiertrain %s from %s; "
          "nodes %s" % (torch.__version__, time.monotonic() - t0,
                        tiertrain.version(), tiertrain.library_path(),
                        tiertrain.node_roles()), file=sys.stderr, flush=True)
    torch.set_num_threads(a.threads)
    if a.model != "transformer" and not hasattr(tv, a.model):
        print("torch_train: --model %s: torchvision.models has no such "
              "model" % a.model, file=sys.stderr)
        return 2
    g = torch.Generator().manual_seed(1)
    data = (torch.randn(a.batch, 3, a.size, a.size, generator=g),
            torch.randint(0, 10, (a.batch,), generator=g))
    if a.sequential:
        results = run_sequential(a, torch, tv, ttt, tiertrain, data, t0)
    else:
        results = run_modes(a, torch, tv, ttt, data, t0)
    table(a, results)
    if a.reads:
        reads_table(a, results)
    for r in results:
        if r["ok"] and r["mode"] in ("tiertrain", "userspace") and \
                not a.flag_sets:
            layer_table(r)
    same = True
    ok = [r for r in results if r["ok"]]
    for r in ok[1:]:
        # bit for bit (a NaN equals a NaN with the same bits)
        n = min(len(r["losses"]), len(ok[0]["losses"]))
        if [x.hex() for x in r["losses"][:n]] != \
                [x.hex() for x in ok[0]["losses"][:n]] or (
                r["iters_done"] == ok[0]["iters_done"] and not all(
                    p.numpy().tobytes() == q.numpy().tobytes()
                    for p, q in zip(r["params"], ok[0]["params"]))):
            same = False
            print("torch_train: %s: losses or parameters differ from %s" % (
                r["mode"], ok[0]["mode"]))
    print("\nlosses and final parameters bit-identical in every mode: %s" %
          ("yes" if same else "NO"))
    mc = module_cost(torch, make_model(a, torch, tv), data[0])
    hc = hook_cost(a, results, mc, ttt.hook_timer_ns())
    ov = overhead(torch, ttt, tiertrain) if a.overhead else None
    for r in results:
        r.pop("params", None)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump({"bench": "torch_train", "config": vars(a),
                   "kernel": os.uname().release, "results": results,
                   "bit_identical": same, "overhead": ov,
                   "module_cost": mc, "hook_cost": hc,
                   "goals": {"fast_avg_vs_off_pct": GOAL_AVG,
                             "fast_peak_vs_off_pct": GOAL_PEAK,
                             "ontime_pct": GOAL_ONTIME,
                             "step_vs_none_pct": GOAL_STEP}},
                  f, indent=1)
    print("\nJSON: %s" % out)
    if not same:
        return 2
    if any(not r["ok"] for r in results if r["kind"] == "tiertrain"):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
