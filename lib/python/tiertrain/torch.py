# SPDX-License-Identifier: LGPL-2.1-or-later
"""tiertrain.torch: tier a PyTorch model's saved tensors with two lines.

    import tiertrain.torch
    h = tiertrain.torch.attach(model)

From then on every training iteration of ``model`` reports its layers and
saved tensors to a tiertrain session, whose scheduler evicts each layer's
saved tensors to the slow memory tier when its forward pass ends and
brings them back before its backward pass begins. ``h.stats()`` says what
moved; ``h.detach()`` removes every hook and closes the session.

Documentation/python.md describes the model of layers, iterations and
saved tensors this module builds from PyTorch's hooks.
"""
import ctypes
import functools
import operator
import os
import time
import warnings
import weakref

import torch as _torch

from . import (EVENT, Session, TiertrainError, _uapi, node_roles,
               page_size)

__all__ = ["attach", "Handle", "hook_timer_ns"]

_EV_ITER = _uapi.TT_EV_ITER_BEGIN
_EV_BEGIN = _uapi.TT_EV_LAYER_BEGIN
_EV_END = _uapi.TT_EV_LAYER_END
_EV_SAVED = _uapi.TT_EV_TENSOR_SAVED
_FWD = _uapi.TT_FWD
_BWD = _uapi.TT_BWD
_FWD_TS = _uapi.TT_FWD | _uapi.TT_EV_TIMESTAMP
_TS = _uapi.TT_EV_TIMESTAMP

# phases of a layer call in its iteration
_P_FWD = 1        # forward running
_P_IDLE = 2       # forward ended, backward not begun: its saved tensors idle
_P_BWD = 3        # backward running
_P_DONE = 4       # backward ended (or will never come)

_BUF_EVENTS = 256
_strided = _torch.strided
_grad_enabled = _torch.is_grad_enabled
_now = time.monotonic_ns            # CLOCK_MONOTONIC, as TT_EV_TIMESTAMP wants
_Tensor = _torch.Tensor
_engine = _torch.autograd.Variable._execution_engine
_storage = getattr(_Tensor, "untyped_storage", None) or \
    getattr(_Tensor, "_storage", None) or _Tensor.storage

_warned = set()


def _warn_once(key, msg):
    if key in _warned:
        return
    _warned.add(key)
    warnings.warn(msg, RuntimeWarning, stacklevel=3)


def attach(model, *, layers="auto", sched_flags=None, sync_late=None,
           anchor=None, alap=None, defer_late=None, merge=None,
           count=None, dynamic=None, off=None, reference=False,
           profile_iters=None, stay_us=None, slow_node=None, fast_node=None,
           budget_mib=None, train_only=True, params=False, warmup=2,
           strict=False, time_hooks=False):
    """Tier the saved tensors of every training iteration of @model.

    Returns a ``Handle``. Layers (the scheduler's unit: events, eviction,
    prefetch) are chosen by @layers:

    * ``"auto"`` (the default): from the last warm-up iteration, timed
      (each module's forward time and the bytes autograd saves in it): a
      module under twice 1/_AUTO_LAYERS of the forward pass's time and of
      its saved bytes is taken whole (a torchvision BasicBlock, not each
      of its convolutions); a larger one is split into the modules its
      forward calls, if their data flow is a chain (no module called
      twice, nothing read again after the next one: no residual add or
      concatenation across a boundary), else taken whole; consecutive
      modules under one share are joined into one layer
      ("conv1..maxpool") until it is reached; a module called several
      times is a layer per call. The model itself is always split.
      ``h.grouping`` lists the layers. Needs @warmup >= 1; with 0, the
      leaves;
    * ``"leaves"``: every leaf module is a layer;
    * a module class or tuple of classes, a predicate ``f(name, module)``,
      or an iterable of module names or objects: the modules it selects,
      each taken whole, plus the leaves outside them.

    Scheduler settings (tt_sched_set()). Flags: by default the session's
    own (TT_SCHED_DEFAULT_FLAGS unless the module parameters say
    otherwise); @sched_flags, TT_SCHED_* bits, replaces them; the keywords
    @sync_late (TT_SCHED_SYNC_LATE), @anchor (TT_SCHED_ANCHOR), @alap
    (TT_SCHED_ALAP), @defer_late (TT_SCHED_DEFER_LATE), @merge
    (TT_SCHED_MERGE), @count (TT_SCHED_COUNT), @dynamic (TT_SCHED_DYNAMIC:
    models whose layer sequence changes between iterations) and @off
    (TT_SCHED_OFF: events, no migration) set their bit when True, clear it
    when False and leave it as it is when None (the default);
    @reference=True: TierTrain's reference semantics (TT_SCHED_REFERENCE,
    every extension bit cleared; an extension keyword True or an extension
    bit in @sched_flags with it raises ValueError);
    @profile_iters, @stay_us, @slow_node, @fast_node (-1: automatic);
    @budget_mib, the session's fast-tier budget in MiB (TT_SCHED_SET_BUDGET:
    its registered bytes on the fast tier stay within it, victims evicted
    to make room; 0: none; Documentation/scheduler.md). Both backends
    (the move_pages backend: the session's own budget, no module-wide
    one).

    @train_only: forward passes of a model in eval mode make no events
    (passes with gradients disabled never do). @params: also register
    parameters and buffers that layers save (off: they are model state,
    not activations). @warmup: training iterations after attach() that
    are not reported (default 2: a fresh model's first iterations run
    longer than the next ones, page faults of new memory, empty allocator
    caches; measured in the guest, resnet18: 37 s, 14.7 s, then 11.6-12.7
    s; as the profile they make every prefetch of the following
    iterations late); 0 reports from the first.

    @time_hooks: time every call of the handle's hooks (two
    ``time.perf_counter_ns()`` reads around each, which they then cost
    too): ``stats()["hook_times"]`` has, per hook, its calls and the
    nanoseconds spent in it (see hook_timer_ns() for what the timing
    itself adds to each call).

    When libtiertrain or the session cannot be opened, a warning says why
    and the handle stays inactive (training runs untiered), unless
    @strict, which raises TiertrainError. Without the kernel module the
    session uses the move_pages backend and a warning says so once.
    Bad arguments raise ValueError/TypeError.
    """
    return Handle(model, layers=layers, sched_flags=sched_flags,
                  sync_late=sync_late, anchor=anchor, alap=alap,
                  defer_late=defer_late, merge=merge, count=count,
                  dynamic=dynamic, off=off, reference=reference,
                  profile_iters=profile_iters, stay_us=stay_us,
                  slow_node=slow_node, fast_node=fast_node,
                  budget_mib=budget_mib, train_only=train_only,
                  params=params, warmup=warmup, strict=strict,
                  time_hooks=time_hooks)


# The handle's hooks, as PyTorch and the autograd engine call them (an
# attribute each), with the name stats()["hook_times"] gives them.
_HOOKS = (("_root_pre", "model_pre"), ("_root_post", "model_post"),
          ("_pre", "layer_pre"), ("_post", "layer_post"),
          ("_pack", "pack"), ("_bwd_hook", "backward"),
          ("_bwd_done", "backward_done"))


def _timed_hook(fn, acc):
    """@fn, its calls counted in acc[0] and their nanoseconds added to
    acc[1]."""
    clock = time.perf_counter_ns

    def timed(*args):
        t0 = clock()
        try:
            return fn(*args)
        finally:
            acc[1] += clock() - t0
            acc[0] += 1
    return timed


def hook_timer_ns(calls=20000, rounds=5):
    """What attach(time_hooks=True) adds to the time it records for one
    hook call: the time recorded for a hook that does nothing, in ns per
    call (@calls calls, the fastest of @rounds rounds)."""
    if not (type(calls) is int and type(rounds) is int and
            calls > 0 and rounds > 0):
        raise ValueError("tiertrain.torch.hook_timer_ns: calls=%r, "
                         "rounds=%r: expected integers > 0" % (calls, rounds))
    best = None
    for _ in range(rounds):
        acc = [0, 0]
        f = _timed_hook(_nothing, acc)
        for _ in range(calls):
            f(None, None)
        best = acc[1] if best is None else min(best, acc[1])
    return best / calls


def _nothing(a, b):
    return None


class _Call:
    """One call of a layer module within an iteration: a scheduler layer.

    A module called k times per iteration has k calls, each its own layer
    id, kept for the life of the handle (so ids are stable from one
    iteration to the next).
    """
    __slots__ = ("h", "id", "name", "iter", "phase", "ranges", "bwd_hook",
                 "ev_fwd_end", "ev_bwd_begin", "ev_bwd_end")

    def __init__(self, h, lid, name):
        self.h = h
        self.id = lid
        self.name = name
        self.iter = 0
        self.phase = 0
        self.ranges = []      # addr, len, addr, len ... registered this iteration
        # one hook object for every iteration: Handle._bwd_hook(self, ...)
        self.bwd_hook = functools.partial(h._bwd_hook, self)
        # its events without a timestamp, packed once
        pk = EVENT.st.pack
        self.ev_fwd_end = pk(_EV_END, _FWD, lid, 0, 0, 0)
        self.ev_bwd_begin = pk(_EV_BEGIN, _BWD, lid, 0, 0, 0)
        self.ev_bwd_end = pk(_EV_END, _BWD, lid, 0, 0, 0)



class _Site:
    """A module the handle treats as a layer. Its hooks are
    Handle._pre(site, ...) and Handle._post(site, ...)."""
    __slots__ = ("h", "name", "calls", "count", "count_iter")

    def __init__(self, h, name):
        self.h = h
        self.name = name
        self.calls = []
        self.count = 0
        self.count_iter = 0


class _Sentinel:
    """Held by the autograd graph of a forward pass (as a no-op pre-hook of
    its output nodes) so the handle can tell, by a weak reference, whether
    that graph is still alive."""
    __slots__ = ("__weakref__",)

    def __call__(self, grad_outputs):
        return None


def _out_tensors(output, out):
    """Append the tensors of a module's output (tensor, tuple, list, dict)."""
    if isinstance(output, _Tensor):
        out.append(output)
    elif isinstance(output, (tuple, list)):
        for o in output:
            _out_tensors(o, out)
    elif isinstance(output, dict):
        for o in output.values():
            _out_tensors(o, out)
    return out


def _select(model, layers):
    """[(name, module)] of the layer modules, in registration order."""
    if layers == "leaves":
        layers = None
    elif isinstance(layers, str):
        layers = [layers]
    if layers is None:
        pred = None
    elif isinstance(layers, type) or (isinstance(layers, tuple) and
                                      all(isinstance(t, type) for t in layers)):
        def pred(name, m, types=layers):
            return isinstance(m, types)
    elif callable(layers):
        pred = layers
    else:
        try:
            chosen = list(layers)
        except TypeError:
            raise TypeError("tiertrain.torch.attach: layers=%r: expected a "
                            "module class, a tuple of classes, a predicate "
                            "f(name, module) or an iterable of module names "
                            "or modules" % (layers,)) from None
        named = dict(model.named_modules())
        ids = set()
        for c in chosen:
            if isinstance(c, str):
                if c not in named:
                    raise ValueError("tiertrain.torch.attach: layers: no "
                                     "module named %r in the model" % c)
                ids.add(id(named[c]))
            elif isinstance(c, _torch.nn.Module):
                if not any(m is c for m in named.values()):
                    raise ValueError("tiertrain.torch.attach: layers: %s is "
                                     "not a module of the model" %
                                     type(c).__name__)
                ids.add(id(c))
            else:
                raise TypeError("tiertrain.torch.attach: layers: %r is "
                                "neither a module name nor a module" % (c,))

        def pred(name, m, ids=ids):
            return id(m) in ids
    found = []

    def walk(name, m):
        children = list(m.named_children())
        if (pred is not None and pred(name, m)) or not children:
            found.append((name or type(m).__name__, m))
            return
        for cname, c in children:
            walk(name + "." + cname if name else cname, c)
    walk("", model)
    return found


# layers="auto": the forward pass in about this many layers (a module of
# less than twice 1/_AUTO_LAYERS of it is taken whole)
_AUTO_LAYERS = 16


class _Timing:
    """layers="auto": every module's forward time in one forward pass
    (summed over its calls), its calls, the order of its first call and of
    its last return, and of its first call: the autograd node of its first
    argument (@gin) and of its output (@gout), and its output's storage;
    @at: each autograd node the return of a module first reached (that
    return's place in the order: the node was made by then); @b: the bytes
    of the storages autograd saved while the module ran (its own forward,
    not its children's), each storage counted once."""
    __slots__ = ("t", "n", "first", "last", "gin", "gout", "out", "at",
                 "b", "saved", "stack", "seq", "on")

    def __init__(self):
        self.t, self.n, self.first, self.last = {}, {}, {}, {}
        self.gin, self.gout, self.out, self.at = {}, {}, {}, {}
        self.b, self.saved = {}, set()
        self.stack = []
        self.seq = 0
        self.on = False

    def pre(self, key, module, args):
        if not self.on:
            return
        self.seq += 1
        if key not in self.first:
            self.first[key] = self.seq
            self.input(key, args)
        self.stack.append((key, time.perf_counter_ns()))

    def input(self, key, args):
        a = args[0] if args else None
        self.gin[key] = a.grad_fn if isinstance(a, _Tensor) else None

    def post(self, key, module, args, output):
        if not self.on or not self.stack or self.stack[-1][0] != key:
            return
        _, t0 = self.stack.pop()
        self.seq += 1
        self.last[key] = self.seq
        self.t[key] = self.t.get(key, 0) + time.perf_counter_ns() - t0
        self.n[key] = self.n.get(key, 0) + 1
        self.mark(output)
        if key not in self.gout:
            o = output if isinstance(output, _Tensor) else None
            self.gout[key] = o.grad_fn if o is not None else None
            try:
                self.out[key] = _storage(o).data_ptr() if o is not None \
                    else None
            except Exception:
                self.out[key] = None

    def pack(self, t):
        """saved_tensors_hooks pack hook of the timed forward."""
        try:
            if self.on and self.stack and t.is_cpu and \
                    t.layout is _strided:
                st = _storage(t)
                ptr = st.data_ptr()
                if ptr not in self.saved:
                    self.saved.add(ptr)
                    key = self.stack[-1][0]
                    self.b[key] = self.b.get(key, 0) + st.nbytes()
        except Exception:
            pass
        return (t,)

    def mark(self, output):
        """@at for the nodes of @output's graph not reached before."""
        at, seq = self.at, self.seq
        todo = [t.grad_fn for t in _out_tensors(output, [])
                if t.grad_fn is not None and t.grad_fn not in at]
        for node in todo:
            at[node] = seq
        while todo:
            for nxt, _ in todo.pop().next_functions:
                if nxt is not None and nxt not in at:
                    at[nxt] = seq
                    todo.append(nxt)

    def consumers(self, output):
        """{autograd node: the nodes of @output's graph that take its
        result}: the operations that read each tensor the forward made."""
        reads = {}
        todo = [t.grad_fn for t in _out_tensors(output, [])
                if t.grad_fn is not None]
        seen = set(todo)
        while todo:
            node = todo.pop()
            for nxt, _ in node.next_functions:
                if nxt is None:
                    continue
                reads.setdefault(nxt, []).append(node)
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return reads


def _group(model, tm, total_ns, reads, target=_AUTO_LAYERS):
    """layers="auto": the layers of @model from the timings @tm of one
    forward pass that took @total_ns, @reads its consumers(): a list of
    runs, each a list of (name, module) of consecutive modules (one
    module: taken whole). See attach()."""
    share = max(total_ns // max(target, 1), 1)
    pieces = []
    # saved bytes of each module with its descendants
    sub = {}

    def tot(m):
        v = tm.b.get(id(m), 0) + sum(tot(c) for c in m.children())
        sub[id(m)] = v
        return v
    bshare = max(tot(model) // max(target, 1), 1)

    def big(t, b, k):
        """@t ns and @b bytes reach @k shares of either"""
        return t >= k * share or b >= k * bshare

    def read_by(node, key):
        """Every operation that reads @node's tensor was made by the
        return of module @key (in its forward, or before it)."""
        lim = tm.last.get(key, 0)
        return node is None or \
            all(tm.at.get(r, lim + 1) <= lim for r in reads.get(node, ()))

    def called(name, m):
        """[(name, module)] of the modules @m's forward calls itself, in
        call order: its called children, and those of children it never
        calls as a whole (a ModuleList, a ModuleDict)."""
        out = []
        for cn, c in m.named_children():
            full = name + "." + cn if name else cn
            if id(c) in tm.n:
                out.append((full, c))
            elif id(c) not in tm.first:
                out.extend(called(full, c))
        out.sort(key=lambda k: tm.first[id(k[1])])
        return out

    def splittable(m):
        """Its children's data flow is a chain that layer boundaries can
        cut: no child called twice (a BasicBlock's relu, after the
        residual add), the module's input read only within its first
        child and each child's output only within the next one (a
        residual add or a concatenation after the next child reads a
        tensor whose layer would already have been evicted), and the
        module's output the last child's (nothing after it)."""
        kids = [c for _, c in called("", m)]
        if not kids or any(tm.n[id(c)] != 1 for c in kids):
            return False
        if not read_by(tm.gin.get(id(m)), id(kids[0])):
            return False
        if not all(read_by(tm.gout.get(id(a)), id(b))
                   for a, b in zip(kids, kids[1:])):
            return False
        return m is model or tm.out.get(id(m)) == tm.out.get(id(kids[-1]))

    def split(name, m):
        kids = called(name, m)
        run, run_t, run_b = [], 0, 0
        mergeable = -1        # index in pieces of the last piece a short
        #                       run after it may join (same level, adjacent)

        def close():
            nonlocal run, run_t, run_b, mergeable
            if not run:
                return
            if not big(run_t, run_b, 1) and mergeable >= 0 and \
                    mergeable == len(pieces) - 1:
                pieces[mergeable].extend(run)
            else:
                pieces.append(run)
            mergeable = len(pieces) - 1
            run, run_t, run_b = [], 0, 0

        for full, c in kids:
            k = id(c)
            t = tm.t.get(k, 0)
            b = sub.get(k, 0)
            if tm.n[k] != 1:
                # called several times: a layer of its own, one per call
                close()
                pieces.append([(full, c)])
                mergeable = -1
                continue
            if big(t, b, 2) and splittable(c):
                close()
                split(full, c)
                mergeable = -1
                continue
            # a sibling still running when this one began: not consecutive
            if run and tm.last.get(id(run[-1][1]), 0) > tm.first[k]:
                close()
                mergeable = -1
            if big(t, b, 1) and not run:
                pieces.append([(full, c)])
                mergeable = len(pieces) - 1
                continue
            run.append((full, c))
            run_t += t
            run_b += b
            if big(run_t, run_b, 1):
                close()
        close()

    # the model itself is always split: one layer would move nothing
    # before the backward pass (its children are then as the leaves are)
    split("", model)
    return pieces


class Handle:
    """What attach() returns: the hooks on one model and its session.

    ``stats()`` and ``layers()`` report; ``detach()`` undoes everything.
    Attributes: ``active`` (hooks report events), ``backend`` ("kernel",
    "move_pages" or None when inactive), ``reason`` (why inactive).
    """

    def __init__(self, model, *, layers, sched_flags, sync_late, anchor,
                 alap, defer_late, merge, count, dynamic, off, reference,
                 profile_iters,
                 stay_us,
                 slow_node, fast_node, budget_mib, train_only, params, warmup,
                 strict, time_hooks=False):
        if not isinstance(model, _torch.nn.Module):
            raise TypeError("tiertrain.torch.attach: expected a "
                            "torch.nn.Module, got %s" % type(model).__name__)
        flags = self._flags(sched_flags, sync_late, anchor, alap,
                            defer_late, merge, count, dynamic, off,
                            reference)
        sched = self._sched_fields(flags, profile_iters, stay_us, slow_node,
                                   fast_node, budget_mib)
        if not isinstance(warmup, int) or warmup < 0:
            raise ValueError("tiertrain.torch.attach: warmup=%r: expected a "
                             "number of iterations >= 0" % (warmup,))
        # layers="auto": the leaves until the last warm-up iteration is
        # timed (_Timing), then the groups (_group)
        auto = isinstance(layers, str) and layers == "auto"
        timed = auto and warmup >= 1 and \
            any(True for _ in model.children())
        sites = None if timed else _select(model, None if auto else layers)
        self._timing = _Timing() if timed else None
        self._timing_t0 = 0
        self._thandles = []
        self._thooks = None
        self.grouping = None
        self.model = model
        self.warmup = warmup
        self.active = False
        self.backend = None
        self.reason = None
        self.train_only = bool(train_only)
        self.params = bool(params)
        self._session = None
        self._handles = []
        self._calls = []
        self._iter = 0
        self._iter_open = False
        self._in_fwd = False
        self._bwd_started = False
        self._cur = None
        self._cur_site = None
        self._in0 = None
        self._in0_ver = 0
        self._bwd_cur = None
        self._sentinel = None
        self._saved = {}          # storage address -> length, this iteration
        self._layer_saves = {}    # saved by the running layer call
        self._pending = {}        # saved, waiting for the next layer to end
        self._carry = {}
        self._outs = set()
        self._param_ptrs = set()
        self._iter_calls = []     # calls of this iteration, in forward order
        self._next_id = 1
        self.counts = dict.fromkeys((
            "iterations", "events", "submits", "saved_tensors",
            "saved_bytes", "resaved_tensors", "param_tensors",
            "kept_fast_tensors", "skipped_tensors", "errors",
            "warmup_iterations"), 0)
        try:
            self._session = Session()
        except TiertrainError as e:
            if strict:
                raise
            self.reason = str(e)
            _warn_once("open", "tiertrain: cannot open a session (%s): %s "
                       "trains without tiering" % (e, type(model).__name__))
            return
        self.backend = self._session.backend
        if self.backend != "kernel":
            forced = os.environ.get("TIERTRAIN_BACKEND") == "move_pages"
            _warn_once("backend", "tiertrain: %s: tiering through the "
                       "move_pages backend (libtiertrain's userspace "
                       "scheduler)" % (
                           "TIERTRAIN_BACKEND=move_pages" if forced else
                           "the kernel module is not loaded "
                           "(/dev/tiertrain is missing)"))
        if sched:
            try:
                valid, fields = sched
                cur = self._session.sched_get()
                for k in ("slow_node", "fast_node"):
                    fields.setdefault(k, cur[k])
                if flags is not None:
                    base, on, clear = flags
                    fields["flags"] = ((cur["flags"] if base is None else base)
                                       | on) & ~clear
                self._session.sched_set(valid, **fields)
            except TiertrainError:
                self._session.close()
                self._session = None
                raise
        self._page = page_size()
        roles = node_roles()
        self._fast = [n in roles and roles[n] == "fast"
                      for n in range(max(roles) + 1)]
        self._buf = bytearray(EVENT.size * _BUF_EVENTS)
        self._cbuf = (ctypes.c_char * len(self._buf)).from_buffer(self._buf)
        self._addr = ctypes.addressof(self._cbuf)
        self._n = 0
        self._esize = EVENT.size
        self._pack_ev = EVENT.st.pack_into
        # tt_events() without argtypes, its pointers converted once: a
        # call per layer and pass costs half as much (the library's own
        # tt_events keeps its declared argtypes for everyone else)
        self._tt_events = _raw_events(self._session._lib)
        self._sp = ctypes.c_void_p(self._session.handle)
        self._addr = ctypes.c_void_p(self._addr)
        # the modules whose parameters and buffers are model state,
        # listed once (the model's structure is fixed from attach())
        self._mods = list(model.modules())
        self.hook_times = None
        if time_hooks:
            # instance attributes over the methods, before anything binds
            # them (_install, _Call, the saved-tensor hooks below)
            self.hook_times = {}
            for attr, name in _HOOKS:
                acc = self.hook_times[name] = [0, 0]
                setattr(self, attr, _timed_hook(getattr(self, attr), acc))
        self._hooks = _torch.autograd.graph.saved_tensors_hooks(
            self._pack, _unpack)
        self._install(model, sites)
        self.active = True

    # ---- set-up ---------------------------------------------------------------
    @staticmethod
    def _flags(sched_flags, sync_late, anchor, alap, defer_late, merge,
               count, dynamic, off, reference):
        """None (the session's flags stay), or (base, on, clear): the
        flags become (base, or the session's when None, | on) & ~clear."""
        ext = _uapi.TT_SCHED_EXTENSIONS
        if sched_flags is not None:
            if not isinstance(sched_flags, int) or \
                    isinstance(sched_flags, bool) or sched_flags < 0:
                raise TypeError("tiertrain.torch.attach: sched_flags=%r: "
                                "expected TT_SCHED_* bits (a non-negative "
                                "int)" % (sched_flags,))
            unknown = sched_flags & ~_uapi.TT_SCHED_FLAGS_ALL
            if unknown:
                raise ValueError("tiertrain.torch.attach: sched_flags=%#x has "
                                 "bits this tiertrain does not know: %#x "
                                 "(known: %#x)" %
                                 (sched_flags, unknown,
                                  _uapi.TT_SCHED_FLAGS_ALL))
        on = clear = 0
        for name, v, bit in (("sync_late", sync_late, _uapi.TT_SCHED_SYNC_LATE),
                             ("anchor", anchor, _uapi.TT_SCHED_ANCHOR),
                             ("alap", alap, _uapi.TT_SCHED_ALAP),
                             ("defer_late", defer_late,
                              _uapi.TT_SCHED_DEFER_LATE),
                             ("merge", merge, _uapi.TT_SCHED_MERGE),
                             ("count", count, _uapi.TT_SCHED_COUNT),
                             ("dynamic", dynamic, _uapi.TT_SCHED_DYNAMIC),
                             ("off", off, _uapi.TT_SCHED_OFF)):
            if v is None:
                continue
            if v:
                if reference and bit & ext:
                    raise ValueError("tiertrain.torch.attach: reference=True "
                                     "excludes the extension %s=True" % name)
                on |= bit
            else:
                clear |= bit
        if reference:
            if sched_flags is not None and sched_flags & ext:
                raise ValueError("tiertrain.torch.attach: reference=True "
                                 "excludes the extension bits %#x of "
                                 "sched_flags=%#x" %
                                 (sched_flags & ext, sched_flags))
            on |= _uapi.TT_SCHED_REFERENCE
            clear |= ext
        if on & ext:
            clear |= _uapi.TT_SCHED_REFERENCE
        if sched_flags is None and not on and not clear:
            return None
        return (sched_flags, on, clear & ~on)

    @staticmethod
    def _sched_fields(flags, profile_iters, stay_us, slow_node, fast_node,
                      budget_mib=None):
        valid, fields = 0, {}
        if flags is not None:
            # resolved against the session's flags once it is open
            valid |= _uapi.TT_SCHED_SET_FLAGS
        if profile_iters is not None:
            if not isinstance(profile_iters, int) or \
                    not 1 <= profile_iters <= 1000:
                raise ValueError("tiertrain.torch.attach: profile_iters=%r: "
                                 "expected 1..1000" % (profile_iters,))
            valid |= _uapi.TT_SCHED_SET_PROFILE
            fields["profile_iters"] = profile_iters
        if stay_us is not None:
            if not isinstance(stay_us, (int, float)) or stay_us < 0:
                raise ValueError("tiertrain.torch.attach: stay_us=%r: expected "
                                 "a time >= 0 in microseconds" % (stay_us,))
            valid |= _uapi.TT_SCHED_SET_STAY
            fields["stay_ns"] = int(stay_us * 1000)
        for name, v in (("slow_node", slow_node), ("fast_node", fast_node)):
            if v is None:
                continue
            if not isinstance(v, int) or v < -1:
                raise ValueError("tiertrain.torch.attach: %s=%r: expected a "
                                 "node id or -1 (automatic)" % (name, v))
            valid |= _uapi.TT_SCHED_SET_NODES
            fields[name] = v
        if budget_mib is not None:
            if not isinstance(budget_mib, int) or isinstance(budget_mib, bool) \
                    or not 0 <= budget_mib <= 0xffffffff:
                raise ValueError("tiertrain.torch.attach: budget_mib=%r: "
                                 "expected MiB in 0..4294967295 (0: no "
                                 "budget)" % (budget_mib,))
            valid |= _uapi.TT_SCHED_SET_BUDGET
            fields["budget_mib"] = budget_mib
        return (valid, fields) if valid else None

    def _install(self, model, sites):
        """The root's hooks and, with @sites [(name, module)], each
        module's as a layer; with @sites None (layers="auto"), the
        timing hooks of every module below the root instead."""
        root_is_layer = sites is not None and \
            any(m is model for _, m in sites)
        reg = self._handles.append
        # Pre-hooks run in registration order: the root's first. Forward
        # hooks too: the root's last, after a root that is itself a layer.
        reg(model.register_forward_pre_hook(self._root_pre))
        if sites is None:
            tm = self._timing
            treg = self._thandles.append
            for _, m in model.named_modules():
                if m is model:
                    continue
                treg(m.register_forward_pre_hook(
                    functools.partial(tm.pre, id(m))))
                treg(m.register_forward_hook(
                    functools.partial(tm.post, id(m))))
            self._nsites = 0
        else:
            self._install_sites([[nm] for nm in sites])
        reg(model.register_forward_hook(self._root_post))
        self._root_is_layer = root_is_layer

    def _install_sites(self, pieces):
        """Hooks of the layers @pieces, each a run of (name, module) of
        consecutive modules: the forward pre-hook on its first, the
        forward hook on its last."""
        reg = self._handles.append
        seen = set()
        n = 0
        for run in pieces:
            first, last = run[0][1], run[-1][1]
            if id(first) in seen:
                continue
            seen.add(id(first))
            name = run[0][0] if len(run) == 1 else \
                "%s..%s" % (run[0][0], run[-1][0])
            site = _Site(self, name)
            n += 1
            # functools.partial: no Python frame of its own
            reg(first.register_forward_pre_hook(
                functools.partial(self._pre, site)))
            reg(last.register_forward_hook(
                functools.partial(self._post, site)))
        self._nsites = n

    def _timed(self, ok, output=None):
        """layers="auto": the timed warm-up forward ended (@ok, its
        @output) or did not (the leaves then): its groups become the
        layers."""
        tm, self._timing = self._timing, None
        tm.on = False
        if self._thooks is not None:
            self._thooks.__exit__(None, None, None)
            self._thooks = None
        for hd in self._thandles:
            hd.remove()
        self._thandles.clear()
        total = time.perf_counter_ns() - self._timing_t0
        if ok and tm.n:
            pieces = _group(self.model, tm, total, tm.consumers(output))
        else:
            pieces = [[nm] for nm in _select(self.model, None)]
        self.grouping = [run[0][0] if len(run) == 1 else
                         "%s..%s" % (run[0][0], run[-1][0])
                         for run in pieces]
        self._install_sites(pieces)

    # ---- events -----------------------------------------------------------------
    def _ev(self, typ, flags, layer, ts, addr, length):
        n = self._n
        if n == _BUF_EVENTS:
            self._flush()
            n = 0
        self._pack_ev(self._buf, n * self._esize, typ, flags, layer, ts,
                      addr, length)
        self._n = n + 1

    def _ev_raw(self, ev):
        """Append one packed event (bytes of EVENT.size)."""
        n = self._n
        if n == _BUF_EVENTS:
            self._flush()
            n = 0
        o = n * self._esize
        self._buf[o:o + len(ev)] = ev
        self._n = n + 1

    def _flush(self):
        n = self._n
        if not n:
            return
        self._n = 0
        ret = self._tt_events(self._sp, self._addr, n)
        self.counts["submits"] += 1
        if ret < 0:
            self._fail("tt_events(%d events)" % n,
                       TiertrainError(-ret, os.strerror(-ret)))
            return
        self.counts["events"] += n

    def _fail(self, where, exc):
        """Stop tiering (never the training): warn once, report nothing more."""
        self.counts["errors"] += 1
        self.active = False
        if self._in_fwd:
            self._in_fwd = False
            try:
                self._hooks.__exit__(None, None, None)
            except Exception:
                pass
        self._cur = self._cur_site = None
        self.reason = "%s: %s" % (where, exc)
        _warn_once(("fail", id(self)), "tiertrain: %s failed: %s; tiering "
                   "stops for this model (training goes on untiered)" %
                   (where, exc))

    # ---- iterations -----------------------------------------------------------
    def _root_pre(self, module, args):
        if self._in_fwd:               # the previous forward raised
            self._end_forward()
        if not self.active or not _grad_enabled() or \
                (self.train_only and not module.training):
            return
        try:
            s = self._sentinel
            if not self._iter_open or self._bwd_started or s is None or \
                    s() is None:
                tm = self._timing
                if self.counts["warmup_iterations"] < self.warmup:
                    # not reported; a forward with gradients is one
                    # iteration (its backward is not watched)
                    self.counts["warmup_iterations"] += 1
                    if tm is not None and \
                            self.counts["warmup_iterations"] == self.warmup:
                        # layers="auto": time the last one
                        tm.on = True
                        tm.input(id(module), args)
                        self._thooks = _torch.autograd.graph.\
                            saved_tensors_hooks(tm.pack, _unpack)
                        self._thooks.__enter__()
                        self._timing_t0 = time.perf_counter_ns()
                    return
                if tm is not None:
                    # the timed forward never ended (it raised)
                    self._timed(False)
                self._iter_begin(module)
            self._hooks.__enter__()
            self._in_fwd = True
        except Exception as e:
            self._fail("forward pre-hook of the model", e)

    def _iter_begin(self, model):
        self._bwd_end_current()
        self._iter += 1
        self._iter_open = True
        self._bwd_started = False
        self._saved.clear()
        self._pending.clear()
        self._iter_calls.clear()
        pp = self._param_ptrs
        pp.clear()
        if not self.params:
            # model.parameters() and .buffers(), without walking the
            # module tree twice per iteration
            add = pp.add
            for m in self._mods:
                for t in m._parameters.values():
                    if t is not None:
                        add(_storage(t).data_ptr())
                for t in m._buffers.values():
                    if t is not None:
                        add(_storage(t).data_ptr())
        self.counts["iterations"] += 1
        self._ev(_EV_ITER, _TS, 0, _now(), 0, 0)
        self._flush()

    def _root_post(self, module, args, output):
        tm = self._timing
        if tm is not None and tm.on:
            try:
                self._timed(True, output)
            except Exception as e:
                self._fail("layers='auto' grouping", e)
        if not self._in_fwd:
            return
        try:
            self._end_forward()
            sent = _Sentinel()
            hooked = False
            for t in _out_tensors(output, []):
                gf = t.grad_fn
                if gf is not None:
                    gf.register_prehook(sent)
                    hooked = True
            # a continuation of this iteration (a second forward before any
            # backward) keeps the iteration open while its graph lives
            self._sentinel = weakref.ref(sent) if hooked else None
        except Exception as e:
            self._fail("forward hook of the model", e)

    def _end_forward(self):
        self._hooks.__exit__(None, None, None)
        self._in_fwd = False
        self._cur = self._cur_site = None
        self._in0 = None
        self._layer_saves.clear()
        # saved and never passed to a layer (the last layer's saved output)
        self.counts["kept_fast_tensors"] += len(self._pending)
        self._pending.clear()
        self._flush()

    # ---- layers -----------------------------------------------------------------
    def _pre(self, site, module, args):
        """Forward pre-hook of layer module @site: its call begins."""
        if not (self._in_fwd and self._cur is None and _grad_enabled()):
            return
        try:
            it = self._iter
            if site.count_iter != it:
                site.count_iter = it
                k = 0
            else:
                k = site.count
            site.count = k + 1
            calls = site.calls
            if k < len(calls):
                c = calls[k]
            else:
                c = _Call(self, self._next_id,
                          site.name if not k else "%s#%d" % (site.name, k))
                self._next_id += 1
                calls.append(c)
                self._calls.append(c)
            c.iter = it
            c.phase = _P_FWD
            if c.ranges:
                c.ranges = []
            self._iter_calls.append(c)
            self._cur = c
            self._cur_site = site
            if args:
                a = args[0]
                if isinstance(a, _Tensor):
                    self._in0 = a
                    self._in0_ver = a._version
            n = self._n
            if n == _BUF_EVENTS:
                self._flush()
                n = 0
            self._pack_ev(self._buf, n * self._esize, _EV_BEGIN, _FWD_TS,
                          c.id, _now(), 0, 0)
            self._n = n + 1
        except Exception as e:
            self._fail("forward pre-hook", e)

    def _pack(self, t):
        """saved_tensors_hooks pack hook: note the storage, return (@t,),
        which _unpack (operator.itemgetter(0), no Python frame) opens:
        autograd keeps @t exactly as long as it would without us."""
        try:
            # sparse, mkldnn and other layouts have no plain storage
            if not t.is_cpu or t.layout is not _strided:
                self.counts["skipped_tensors"] += 1
                return (t,)
            st = _storage(t)
            ptr = st.data_ptr()
            if ptr in self._saved:
                self.counts["resaved_tensors"] += 1
                return (t,)
            if ptr in self._layer_saves or ptr in self._pending:
                return (t,)
            n = st.nbytes()
            if not n:
                return (t,)
            if ptr in self._param_ptrs:
                self.counts["param_tensors"] += 1
                return (t,)
            if self._cur is None:
                self._pending[ptr] = n      # between layers: the next one's
            else:
                self._layer_saves[ptr] = n
        except Exception:
            self.counts["skipped_tensors"] += 1
        return (t,)

    def _post(self, site, module, args, output):
        """Forward hook of layer module @site: its call ends."""
        if self._cur_site is not site:
            return
        try:
            c = self._cur
            self._cur = self._cur_site = None
            in0, self._in0 = self._in0, None
            hooked = False
            tensors = (output,) if isinstance(output, _Tensor) else \
                _out_tensors(output, [])
            for t in tensors:
                gf = t.grad_fn
                if gf is None:
                    continue
                if t is in0 and t._version == self._in0_ver:
                    continue            # its input passed through unchanged
                gf.register_prehook(c.bwd_hook)
                hooked = True
            pending, saves = self._pending, self._layer_saves
            if pending or saves:
                self._register(c, tensors, pending, saves)
            n = self._n
            if n == _BUF_EVENTS:
                self._flush()
                n = 0
            o = n * self._esize
            ev = c.ev_fwd_end
            self._buf[o:o + len(ev)] = ev
            self._n = n + 1
            self._flush()
            c.phase = _P_IDLE if hooked else _P_DONE
        except Exception as e:
            self._fail("forward hook", e)

    def _register(self, c, tensors, pending, saves):
        """Register with layer call @c the tensors saved since the last
        layer ended (@pending) and during @c (@saves), but those @c
        returns (@tensors)."""
        outs = self._outs
        outs.clear()
        for t in tensors:
            try:
                outs.add(_storage(t).data_ptr())
            except Exception:
                pass
        # A tensor the layer saves and returns is the next layer's input:
        # it goes with the next layer to end (whose backward comes first),
        # so it is not evicted while that layer still reads it.
        carry = self._carry
        saved = self._saved
        ranges = c.ranges
        lid = c.id
        counts = self.counts
        pk = self._pack_ev
        buf = self._buf
        es = self._esize
        for src in (pending, saves):
            for ptr, n in src.items():
                if ptr in outs:
                    carry[ptr] = n
                elif ptr not in saved:
                    saved[ptr] = n
                    ranges.append(ptr)
                    ranges.append(n)
                    k = self._n
                    if k == _BUF_EVENTS:
                        self._flush()
                        k = 0
                    pk(buf, k * es, _EV_SAVED, 0, lid, 0, ptr, n)
                    self._n = k + 1
                    counts["saved_tensors"] += 1
                    counts["saved_bytes"] += n
        pending.clear()
        self._pending, self._carry = carry, pending
        saves.clear()

    def _bwd_hook(self, c, grad_outputs):
        """Pre-hook of the autograd nodes of layer call @c's outputs: its
        backward begins (and the one running ends)."""
        if c.iter != self._iter or c.phase != _P_IDLE or not self.active:
            return None
        try:
            if not self._bwd_started:
                self._bwd_started = True
                _engine.queue_callback(self._bwd_done)
            n = self._n
            if n > _BUF_EVENTS - 2:
                self._flush()
                n = 0
            buf = self._buf
            es = self._esize
            p = self._bwd_cur
            if p is not None:
                p.phase = _P_DONE
                buf[n * es:(n + 1) * es] = p.ev_bwd_end
                n += 1
            c.phase = _P_BWD
            self._bwd_cur = c
            buf[n * es:(n + 1) * es] = c.ev_bwd_begin
            self._n = n + 1
            self._flush()
        except Exception as e:        # never break the backward pass
            self._fail("backward hook", e)
        return None

    def _bwd_done(self):
        """End of the backward pass (autograd engine callback)."""
        try:
            if self.active:
                self._bwd_end_current()
        except Exception as e:
            self._fail("end of the backward pass", e)

    def _bwd_end_current(self):
        p = self._bwd_cur
        if p is None:
            return
        self._bwd_cur = None
        p.phase = _P_DONE
        self._ev_raw(p.ev_bwd_end)
        self._flush()

    # ---- reports ----------------------------------------------------------------
    def footprint(self):
        """Where the saved tensors of the current iteration that autograd
        still holds are now: ``(fast_bytes, slow_bytes, needed_bytes)``,
        measured with tt_residency() over their whole pages (fast: nodes
        with CPUs). Counted: the tensors registered with a layer whose
        backward has not ended, and those saved by the layer running its
        forward (or waiting for the next layer). needed_bytes is what
        would be on the fast tier if every layer's tensors left it exactly
        while the layer is idle (forward ended, backward not begun): the
        ideal an oracle scheduler reaches."""
        s = self._session
        if s is None:
            return 0, 0, 0
        nn = len(self._fast)
        res = (ctypes.c_uint64 * nn)()
        tot = [0, 0, 0]
        it = self._iter
        for c in list(self._iter_calls):
            ph = c.phase
            if ph != _P_DONE and c.iter == it:
                self._measure(s, c.ranges[:], ph != _P_IDLE, res, tot)
        fresh = []
        for d in (self._layer_saves, self._pending):
            for a, n in list(d.items()):
                fresh.append(a)
                fresh.append(n)
        self._measure(s, fresh, True, res, tot)
        return tot[0], tot[1], tot[2]

    def _measure(self, s, r, needed, res, tot):
        """Add the residency of ranges @r (addr, len, ...) to @tot."""
        page = self._page
        fast_role = self._fast
        nn = len(fast_role)
        fn = s._lib.tt_residency_ex
        sp = s.handle
        for a, n in _whole_pages(r, page):
            if fn(sp, a, n, res, nn, None, None) < 0:
                continue                # freed meanwhile
            for node in range(nn):
                b = res[node]
                if fast_role[node]:
                    tot[0] += b
                    if needed:
                        tot[2] += b
                else:
                    tot[1] += b
                    if needed:
                        tot[2] += b

    def stats(self):
        """The session's counters and this handle's, as a dict.

        From tt_stats(): evicted_bytes, prefetched_bytes, ontime_bytes,
        late_bytes, late_count, sync_fetched_bytes, accepted, modified,
        dropped, unknown (layer-iterations), reprofiles, tensors_ignored
        (saved tensors smaller than a page), er_bps, pr_bps, the fast-tier
        budget's budget_bytes, fast_registered_bytes, fast_peak_bytes,
        victims, victim_bytes, budget_waits, and ``session`` (every struct
        tt_ioc_stats member). Measured now:
        fast_bytes, slow_bytes, needed_bytes (see footprint()). From the
        hooks: iterations, layers (ids in use), events, submits (tt_events
        calls), saved_tensors, saved_bytes (registered), resaved_tensors
        (already registered with an earlier layer), param_tensors
        (parameters and buffers, not registered), kept_fast_tensors (saved
        after the model's last layer), skipped_tensors (not CPU memory),
        errors. Also backend and active. With attach(time_hooks=True):
        hook_times, {hook: {"calls": n, "ns": t}} for model_pre,
        model_post (the model's forward hooks), layer_pre, layer_post (a
        layer's), pack (the saved-tensor hook), backward (a layer's
        backward begins), backward_done (the backward pass ended);
        without it, None.
        """
        out = dict(self.counts)
        out["hook_times"] = None if self.hook_times is None else {
            k: {"calls": v[0], "ns": v[1]} for k, v in self.hook_times.items()}
        out["layers"] = len(self._calls)
        out["backend"] = self.backend
        out["active"] = self.active
        st = {}
        if self._session is not None:
            try:
                st = self._session.stats()
            except TiertrainError as e:
                out["stats_error"] = str(e)
        for mine, theirs in (("evicted_bytes", "bytes_evicted"),
                             ("prefetched_bytes", "bytes_prefetched"),
                             ("ontime_bytes", "ontime_bytes"),
                             ("late_bytes", "late_bytes"),
                             ("late_count", "late_count"),
                             ("sync_fetched_bytes", "sync_fetched_bytes"),
                             ("accepted", "layers_accepted"),
                             ("modified", "layers_modified"),
                             ("dropped", "layers_dropped"),
                             ("unknown", "layers_unknown"),
                             ("reprofiles", "reprofiles"),
                             ("tensors_ignored", "tensors_ignored"),
                             ("er_bps", "er_bps"), ("pr_bps", "pr_bps"),
                             ("budget_bytes", "budget_bytes"),
                             ("fast_registered_bytes",
                              "fast_registered_bytes"),
                             ("fast_peak_bytes", "fast_peak_bytes"),
                             ("victims", "victims"),
                             ("victim_bytes", "victim_bytes"),
                             ("budget_waits", "budget_waits")):
            out[mine] = st.get(theirs, 0)
        out["session"] = st
        out["fast_bytes"], out["slow_bytes"], out["needed_bytes"] = \
            self.footprint()
        return out

    def layers(self):
        """The scheduler's view of each layer (tt_layers()) with its name:
        a list of dicts, by layer id; ``name`` is the module's path in the
        model, ``#k`` added for its k-th call in an iteration."""
        if self._session is None:
            return []
        names = {c.id: c.name for c in self._calls}
        out = self._session.layers()
        for d in out:
            d["name"] = names.get(d["layer"], "?")
        return out

    @property
    def session(self):
        """The underlying tiertrain.Session (None when inactive)."""
        return self._session

    def hint(self, tensor, hint):
        """tt_hint() on @tensor's storage: TT_HINT_WILL_USE (bring it back
        now), TT_HINT_PIN_FAST (never evict it), TT_HINT_ARCHIVE (evict
        only under fast-tier pressure) or TT_HINT_RETIRE (done with it:
        back, forgotten). Does nothing while the handle is inactive."""
        if self._session is None:
            return
        st = tensor.storage()
        self._session.hint(st.data_ptr(), st.nbytes(), hint)

    # ---- undo -------------------------------------------------------------------
    def detach(self):
        """Remove every hook, close the session, and bring back to the fast
        tier whatever of the current iteration is still on a slow node.
        The model is then exactly as before attach(). Idempotent."""
        for hd in self._handles + self._thandles:
            hd.remove()
        self._handles.clear()
        self._thandles.clear()
        self._timing = None
        if self._in_fwd:
            self._hooks.__exit__(None, None, None)
            self._in_fwd = False
        self.active = False
        s, self._session = self._session, None
        if s is None:
            return
        try:
            self._flush_quietly(s)
            s.close()
            self._restore()
        finally:
            s.close()
            self._calls.clear()
            self._iter_calls.clear()
            self._saved.clear()
            self._pending.clear()
            self._layer_saves.clear()
            self._sentinel = None
            self._cur = self._cur_site = self._bwd_cur = self._in0 = None

    def _flush_quietly(self, s):
        # ends the iteration in the scheduler: stops evictions, queues the
        # prefetch of what is out (the close then waits for running work)
        self._n = 0
        try:
            s.iter_begin()
        except TiertrainError:
            pass

    def _restore(self):
        """Move back what the scheduler left on a slow node (the kernel
        leaves evicted data there when a session closes)."""
        page = self._page
        fast = [n for n, f in enumerate(self._fast) if f]
        if not fast or all(self._fast):
            return
        try:
            s = Session()
        except TiertrainError:
            return
        try:
            nn = len(self._fast)
            for c in self._iter_calls:
                for a, n in _whole_pages(c.ranges, page):
                    try:
                        per, _, _ = s.residency(a, n)
                    except TiertrainError:
                        continue        # freed meanwhile
                    if not any(per[node] for node in range(nn)
                               if not self._fast[node]):
                        continue
                    dest = max(fast, key=lambda node: per[node])
                    try:
                        s.migrate(a, n, dest)
                    except TiertrainError:
                        pass
        finally:
            s.close()

    def __repr__(self):
        return "<tiertrain.torch.Handle %s, %d layers, backend %s>" % (
            "active" if self.active else "inactive (%s)" % self.reason,
            len(self._calls), self.backend)


_unpack = operator.itemgetter(0)     # of what _pack returns


def _raw_events(lib):
    """libtiertrain's tt_events() as a ctypes function of its own, with
    no argtypes: called with two c_void_p and an int, it converts
    nothing."""
    f = lib["tt_events"]          # a new function object, not lib.tt_events
    f.restype = ctypes.c_int
    return f


def _whole_pages(r, page):
    """(addr, len) of the whole pages of each range in @r (addr, len, ...):
    what the scheduler can move of it; ranges under a page are left out."""
    for i in range(0, len(r) - 1, 2):
        a = (r[i] + page - 1) // page * page
        e = (r[i] + r[i + 1]) // page * page
        if e > a:
            yield a, e - a
