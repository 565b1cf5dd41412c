# SPDX-License-Identifier: GPL-2.0
"""bench/torch_constrained.py: bench/torch_train.py's memory-constrained
case (bench/README.md, "Against Linux's own tiering"), the figures
bench/train --model-mib gives for its synthetic trainer, for a torchvision
model:

  Knobs        the linux mode's kernel settings: demotion on
               (/sys/kernel/mm/numa/demotion_enabled 1) and NUMA balancing's
               tiering mode (kernel.numa_balancing 2) while the mode runs,
               put back as found after it and at exit;
  Reads        where the compute finds the bytes it reads: the residency of
               each leaf module's inputs and parameters as its forward
               begins and as its backward begins (a hook on the gradient of
               its output, registered after tiertrain's own), and of every
               parameter, gradient and optimizer buffer as the optimizer
               step begins (read, and written back), from a query-only
               session of libtiertrain's move_pages backend (no kernel
               session: the linux mode stays without tiertrain); pages not
               present count as slow (in migration, or never touched);
               the queries' time is taken out of the step;
  NodeSampler  the fast nodes' used memory (MemTotal - MemFree) every
               period, less what they used before the mode began;
  vmstat()     the kernel's own migrations (/proc/vmstat);
  projected()  the step on CXL and Optane hardware from the bytes read and
               written on each tier (bench/train.c tt_projected(): the same
               model and the same figures);
  probe()      the run's working set, measured by one training step of a
               throwaway model: its model state (weights, gradients,
               optimizer state) and the bytes of the activations autograd
               saved (torch.autograd.graph.saved_tensors_hooks);
  Balloon      fast-tier memory taken away while a mode runs, so that
               after its first iteration the fast nodes can give it only a
               share of its activations (--fast-room): anonymous memory
               bound to the fast nodes (mbind MPOL_BIND) and mlocked, so
               neither reclaim, demotion nor NUMA balancing moves it.
"""
import atexit
import ctypes
import os
import threading
import time

MIB = 1024.0 * 1024.0

# GB/s (10^9 bytes): DRAM, slow-tier read, slow-tier write, per socket,
# every core streaming; sources in bench/train.c above tt_projected() and
# bench/README.md "Against Linux's own tiering"
PROJ = {"cxl": (246.0, 17.8, 17.8), "optane": (102.0, 39.4, 13.9)}

VMSTAT = ("pgdemote_kswapd", "pgdemote_direct", "pgdemote_khugepaged",
          "pgpromote_success", "numa_pages_migrated", "numa_hint_faults",
          "pgmigrate_success")

DEMOTION = "/sys/kernel/mm/numa/demotion_enabled"
BALANCING = "/proc/sys/kernel/numa_balancing"


def vmstat():
    """The VMSTAT counters now ({} where /proc/vmstat lacks one)."""
    out = {}
    try:
        with open("/proc/vmstat") as f:
            for line in f:
                k, _, v = line.partition(" ")
                if k in VMSTAT:
                    out[k] = int(v)
    except OSError:
        pass
    return out


def _read(path):
    with open(path) as f:
        return f.read().strip()


def _write(path, value):
    with open(path, "w") as f:
        f.write(value + "\n")


class Knobs:
    """Linux's own tiering for the linux mode: on() sets both knobs,
    off() puts back what on() found (also at exit)."""

    def __init__(self):
        self.saved = None
        atexit.register(self.off)

    @staticmethod
    def check():
        """None when the knobs can be set, else why not."""
        for p in (DEMOTION, BALANCING):
            if not os.path.exists(p):
                return "%s: this kernel has no such knob" % p
            if not os.access(p, os.W_OK):
                return "%s: not writable (root needed)" % p
        return None

    def on(self):
        self.saved = {DEMOTION: _read(DEMOTION), BALANCING: _read(BALANCING)}
        demo = "true" if self.saved[DEMOTION] in ("true", "false") else "1"
        _write(DEMOTION, demo)
        _write(BALANCING, "2")
        return {DEMOTION: _read(DEMOTION), BALANCING: _read(BALANCING)}

    def off(self):
        if self.saved is None:
            return
        saved, self.saved = self.saved, None
        for p, v in saved.items():
            try:
                _write(p, v)
            except OSError as e:
                print("torch_train: could not put %s back to %s: %s" %
                      (p, v, e.strerror))


def node_room(n):
    """Bytes node @n gives before the page allocator falls back to another
    node: its MemFree less its zones' low watermarks (/proc/zoneinfo)."""
    free = _meminfo(n)["MemFree:"]
    low, cur = 0, None
    with open("/proc/zoneinfo") as f:
        for line in f:
            w = line.split()
            if line.startswith("Node "):
                cur = int(w[1].rstrip(","))
            elif cur == n and len(w) == 2 and w[0] == "low":
                low += int(w[1])
    return max(0, free - low * os.sysconf("SC_PAGE_SIZE"))


class Balloon:
    """Memory of the fast nodes taken away: fill() leaves each node
    @room bytes (node_room()), pop() gives it all back (also at exit).
    x86_64 only (the mbind system call's number)."""

    CHUNK = 2 << 20
    STEP = 64 << 20
    SYS_MBIND = 237             # x86_64
    MPOL_BIND = 2
    PROT_RW = 3                 # PROT_READ | PROT_WRITE
    MAP_PRIV_ANON = 0x22        # MAP_PRIVATE | MAP_ANONYMOUS

    def __init__(self):
        self.maps = []
        self.taken = 0
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.mmap.restype = ctypes.c_void_p
        self.libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t,
                                   ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                   ctypes.c_long)
        self.libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
        self.libc.mlock.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
        self.libc.syscall.restype = ctypes.c_long
        atexit.register(self.pop)

    @staticmethod
    def check():
        """None when a balloon can be made here, else why not."""
        if os.uname().machine != "x86_64":
            return "the fast-tier balloon needs x86_64 (mbind's number)"
        if os.geteuid() != 0:
            return "the fast-tier balloon mlocks memory: root needed"
        return None

    def _err(self, what):
        e = ctypes.get_errno()
        return OSError(e, "%s: %s" % (what, os.strerror(e)))

    def _take(self, node, n):
        if not 0 <= node < 64:
            raise OSError(22, "node %d: the balloon binds nodes 0..63" % node)
        addr = self.libc.mmap(None, n, self.PROT_RW, self.MAP_PRIV_ANON,
                              -1, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            raise self._err("mmap(%d)" % n)
        mask = ctypes.c_ulong(1 << node)
        if self.libc.syscall(ctypes.c_long(self.SYS_MBIND),
                             ctypes.c_void_p(addr), ctypes.c_size_t(n),
                             ctypes.c_int(self.MPOL_BIND),
                             ctypes.byref(mask), ctypes.c_ulong(64),
                             ctypes.c_uint(0)):
            err = self._err("mbind(node %d)" % node)
            self.libc.munmap(addr, n)
            raise err
        self.maps.append((addr, n))
        # mlock() faults every page in, on @node, and keeps it there
        if self.libc.mlock(addr, n):
            raise self._err("mlock(%d bytes on node %d)" % (n, node))
        self.taken += n

    def fill(self, nodes, room):
        """Take memory of each node in @nodes until node_room() is within
        about one CHUNK of @room bytes (what others allocate meanwhile
        counts); return the bytes each node can give then ({node:
        bytes}). Never asks for more than a node can give
        above its low watermark, so no allocation here waits on reclaim
        or meets the OOM killer. Gives up (ENOMEM) once it took the
        node's room at the start plus its page cache then (kswapd frees
        the cache as the free memory nears the watermarks, so the room
        may shrink slower than the balloon grows) and the room is still
        not down to @room."""
        out = {}
        for n in nodes:
            limit = self.taken + node_room(n) + _meminfo(n)["FilePages:"]
            while True:
                want = node_room(n) - room
                if want < self.CHUNK:
                    break
                if self.taken >= limit:
                    # what was taken did not leave the node's free memory
                    raise OSError(12, "node %d: %d bytes taken (its room "
                                  "and page cache at the start), its room "
                                  "still %d bytes" % (n, self.taken,
                                                      node_room(n)))
                self._take(n, min(want, self.STEP) // self.CHUNK *
                           self.CHUNK)
            out[n] = node_room(n)
        return out

    def pop(self):
        for addr, n in self.maps:
            self.libc.munmap(addr, n)
        self.maps = []
        self.taken = 0


def probe(torch, model, opt, data, F):
    """One training step of @model (given, thrown away after): (model
    state bytes: every parameter, gradient and optimizer buffer after the
    step; bytes of the distinct tensors autograd saved that are not
    parameters)."""
    params = {p.data_ptr() for p in model.parameters()}
    saved = {}

    def pack(t):
        if t.data_ptr() not in params:
            saved[t.data_ptr()] = max(saved.get(t.data_ptr(), 0),
                                      t.numel() * t.element_size())
        return t
    opt.zero_grad()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = F.cross_entropy(model(data[0]), data[1])
    loss.backward()
    opt.step()
    nb = lambda t: t.numel() * t.element_size()     # noqa: E731
    state = 0
    for g in opt.param_groups:
        for p in g["params"]:
            state += nb(p) + (nb(p.grad) if p.grad is not None else 0)
            state += sum(nb(v) for v in opt.state.get(p, {}).values()
                         if isinstance(v, torch.Tensor))
    return state, sum(saved.values())


def fast_nodes(tiertrain):
    return sorted(n for n, r in tiertrain.node_roles().items()
                  if r == "fast")


def _meminfo(n):
    """Node @n's meminfo in bytes, by field ("MemFree:": bytes)."""
    out = {"MemTotal:": 0, "MemFree:": 0, "FilePages:": 0}
    with open("/sys/devices/system/node/node%d/meminfo" % n) as f:
        for line in f:
            w = line.split()
            if len(w) >= 4 and w[2] in out:
                out[w[2]] = int(w[3]) * 1024
    return out


def _node_used(nodes):
    used = 0
    for n in nodes:
        m = _meminfo(n)
        used += m["MemTotal:"] - m["MemFree:"]
    return used


class NodeSampler(threading.Thread):
    """The fast nodes' used memory over the mode's baseline, sampled
    every @period seconds while .on."""

    def __init__(self, nodes, period):
        super().__init__(daemon=True)
        self.nodes, self.period = nodes, period
        self.base = _node_used(nodes)
        self.samples = []
        self.on = False
        self.halt = threading.Event()

    def run(self):
        while not self.halt.wait(self.period):
            if self.on:
                self.samples.append((time.monotonic(),
                                     _node_used(self.nodes) - self.base))

    def rebase(self):
        """Measure from now on over the fast nodes' use now."""
        self.base = _node_used(self.nodes)

    def stop(self):
        self.halt.set()
        self.join()


class Reads:
    """Bytes the compute reads (and the optimizer writes) per tier, as
    the module docstring says; counting while .on."""

    KINDS = ("model", "activations")

    def __init__(self, torch, tiertrain, model, fast):
        self.torch = torch
        self.fast = set(fast)
        self.page = tiertrain.page_size()
        old = os.environ.get("TIERTRAIN_BACKEND")
        os.environ["TIERTRAIN_BACKEND"] = "move_pages"
        try:
            self.s = tiertrain.Session()
        finally:
            if old is None:
                os.environ.pop("TIERTRAIN_BACKEND", None)
            else:
                os.environ["TIERTRAIN_BACKEND"] = old
        self.on = False
        self.excluded = 0.0
        self.rd = {"fast": 0, "slow": 0}
        self.wr = {"fast": 0, "slow": 0}
        self.rd_slow = dict.fromkeys(self.KINDS, 0)
        self.hooks = []
        self.inputs = {}
        leaves = [m for m in model.modules() if not list(m.children())]
        for m in leaves:
            self.hooks.append(m.register_forward_pre_hook(self._fwd_pre))
            self.hooks.append(m.register_forward_hook(self._fwd))

    def close(self):
        for h in self.hooks:
            h.remove()
        self.hooks = []
        self.inputs = {}
        self.s.close()

    def _where(self, t):
        """(fast, slow) bytes of tensor @t: its pages' residency, scaled
        to its own bytes."""
        n = t.numel() * t.element_size()
        if n == 0:
            return 0, 0
        a = t.data_ptr()
        lo = a // self.page * self.page
        hi = (a + n + self.page - 1) // self.page * self.page
        nodes, np_, other = self.s.residency(lo, hi - lo)
        fast = sum(b for i, b in enumerate(nodes) if i in self.fast)
        tot = sum(nodes) + np_ + other
        if tot <= 0:
            return 0, n
        f = n * fast // tot
        return f, n - f

    def _count(self, tensors, kind, write=False):
        for t in tensors:
            if t is None or not isinstance(t, (self.torch.Tensor, _Span)):
                continue
            f, s = self._where(t)
            self.rd["fast"] += f
            self.rd["slow"] += s
            self.rd_slow[kind] += s
            if write:
                self.wr["fast"] += f
                self.wr["slow"] += s

    def _pass(self, m, inputs):
        t0 = time.monotonic()
        self._count(inputs, "activations")
        self._count(m.parameters(recurse=False), "model")
        self.excluded += time.monotonic() - t0

    def _fwd_pre(self, m, inputs):
        if self.on:
            self._pass(m, inputs)

    def _fwd(self, m, inputs, output):
        if not self.on or not isinstance(output, self.torch.Tensor) or \
                not output.requires_grad:
            return
        # by address, not by reference: holding the tensors would keep
        # alive what autograd frees; the inputs a layer's backward reads
        # are the ones autograd saved, alive until that backward ends
        ins = [_Span(t.data_ptr(), t.numel(), t.element_size())
               for t in inputs if isinstance(t, self.torch.Tensor)]

        def bwd(grad):
            if self.on:
                t0 = time.monotonic()
                self._count(ins, "activations")
                self._count(m.parameters(recurse=False), "model")
                self.excluded += time.monotonic() - t0
            return None
        output.register_hook(bwd)

    def optimizer(self, opt):
        """Before opt.step(): every parameter, gradient and optimizer
        buffer is read and written."""
        if not self.on:
            return
        t0 = time.monotonic()
        for g in opt.param_groups:
            for p in g["params"]:
                self._count([p, p.grad], "model", write=True)
                for v in opt.state.get(p, {}).values():
                    self._count([v], "model", write=True)
        self.excluded += time.monotonic() - t0

    def take(self):
        """The counts since the last take(), and the time excluded."""
        out = {"rd": dict(self.rd), "wr": dict(self.wr),
               "rd_slow": dict(self.rd_slow), "excluded_s": self.excluded}
        self.rd = {"fast": 0, "slow": 0}
        self.wr = {"fast": 0, "slow": 0}
        self.rd_slow = dict.fromkeys(self.KINDS, 0)
        self.excluded = 0.0
        return out


class _Span:
    """A tensor's memory by address: what Reads._where() needs of it."""

    def __init__(self, ptr, numel, esize):
        self.ptr, self.n, self.es = ptr, numel, esize

    def numel(self):
        return self.n

    def element_size(self):
        return self.es

    def data_ptr(self):
        return self.ptr


def projected(r, which):
    """The step on @which hardware ("cxl", "optane"), ms: every byte read
    and written per step over DRAM's bandwidth, plus what the slow tier's
    bytes cost over DRAM (bench/train.c tt_projected())."""
    dram, rd, wr = PROJ[which]
    tot = r["read_fast"] + r["read_slow"] + r["written_fast"] + \
        r["written_slow"]
    return tot / dram / 1e6 + slow_extra(r, which)


def slow_extra(r, which):
    dram, rd, wr = PROJ[which]
    return (r["read_slow"] * (1 / rd - 1 / dram) +
            r["written_slow"] * (1 / wr - 1 / dram)) / 1e6
