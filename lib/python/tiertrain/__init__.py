# SPDX-License-Identifier: LGPL-2.1-or-later
"""tiertrain: move DNN training tensors between memory tiers.

This package is a ctypes binding of libtiertrain (lib/tiertrain.h); it has
no compiled extension. ``tiertrain.torch`` hooks a PyTorch model into the
scheduler (``tiertrain.torch.attach(model)``); this module is the session
API underneath it, usable without PyTorch::

    import tiertrain
    with tiertrain.Session() as s:
        s.iter_begin()
        s.layer_begin(0, tiertrain.TT_FWD)
        ...

Every constant (``TT_FWD``, ``TT_SCHED_ALAP``, ...) and structure layout
comes from <linux/tiertrain.h> through ``_uapi.py``, which the build
generates with the C compiler (lib/python/gen_uapi.c).

Errors: library calls that fail raise ``TiertrainError`` (an ``OSError``
with the errno of the C call and a message naming the call and its
arguments).
"""
import ctypes
import ctypes.util
import errno as _errno
import os
import struct

try:
    from . import _uapi
except ImportError as _e:  # pragma: no cover - only without a build
    raise ImportError(
        "tiertrain: %s/_uapi.py is missing: it is generated from "
        "<linux/tiertrain.h> by the build; run 'make' in the repository "
        "(or 'make install')" % os.path.dirname(os.path.abspath(__file__))
    ) from _e

__all__ = ["Session", "TiertrainError", "library", "library_path",
           "version", "backend", "page_size", "node_roles"]

# Re-export every constant of the header (TT_FWD, TT_SCHED_ALAP, ...).
for _k in dir(_uapi):
    if _k.startswith("TT_"):
        globals()[_k] = getattr(_uapi, _k)
        __all__.append(_k)
del _k

SONAME = "libtiertrain.so.0"


class TiertrainError(OSError):
    """A libtiertrain call failed: ``errno`` and ``strerror`` as from C."""


# ---- structure layouts from the header -------------------------------------

_CODES = {(1, False): "B", (1, True): "b", (2, False): "H", (2, True): "h",
          (4, False): "I", (4, True): "i", (8, False): "Q", (8, True): "q"}


class Layout:
    """A C structure of the header as a ``struct.Struct``.

    ``names`` are the members in memory order; ``size`` is the C sizeof
    (trailing padding included); ``pack_into``/``unpack_from`` work on the
    members in that order.
    """

    def __init__(self, name, spec):
        size, members = spec
        fmt, pos, names = "=", 0, []
        for mname, off, msize, signed in sorted(members, key=lambda m: m[1]):
            if off < pos:
                raise ImportError("tiertrain: overlapping members in %s" % name)
            fmt += "x" * (off - pos) + _CODES[(msize, signed)]
            pos = off + msize
            names.append(mname)
        fmt += "x" * (size - pos)
        self.name = name
        self.names = tuple(names)
        self.st = struct.Struct(fmt)
        self.size = size
        if self.st.size != size:
            raise ImportError("tiertrain: layout of %s does not add up" % name)

    def unpack(self, buf):
        return dict(zip(self.names, self.st.unpack_from(buf)))

    def pack(self, **fields):
        buf = bytearray(self.size)
        self.st.pack_into(buf, 0, *(fields.get(n, 0) for n in self.names))
        return buf


EVENT = Layout("tt_event", _uapi.tt_event)
STATS = Layout("tt_ioc_stats", _uapi.tt_ioc_stats)
SCHED = Layout("tt_ioc_sched", _uapi.tt_ioc_sched)
LAYER_INFO = Layout("tt_layer_info", _uapi.tt_layer_info)
MIGRATE_RESULT = Layout("tt_migrate_result", _uapi.tt_migrate_result)
if EVENT.names != ("type", "flags", "layer", "ts_ns", "addr", "len"):
    raise ImportError("tiertrain: struct tt_event has members this package "
                      "does not know: %s" % (EVENT.names,))

# ---- the library ------------------------------------------------------------

_lib = None
_lib_path = None
_c = ctypes


def _candidates():
    """Where libtiertrain may be, in the order tried."""
    env = os.environ.get("TIERTRAIN_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    out = [os.path.join(here, "..", "..", SONAME)]   # the repository's lib/
    out.append(SONAME)                                 # the dynamic loader
    try:
        from . import _config                          # written by make install
        out.append(os.path.join(_config.LIBDIR, SONAME))
    except ImportError:
        pass
    return out


def _declare(lib):
    vp, u32, u64p = _c.c_void_p, _c.c_uint32, _c.POINTER(_c.c_uint64)
    sig = {
        "tt_version": (_c.c_char_p, []),
        "tt_open": (vp, []),
        "tt_close": (None, [vp]),
        "tt_backend": (_c.c_char_p, [vp]),
        "tt_migrate": (_c.c_int, [vp, vp, _c.c_size_t, _c.c_int]),
        "tt_migrate_ex": (_c.c_int, [vp, vp, _c.c_size_t, _c.c_int,
                                     _c.c_uint, vp]),
        "tt_residency_ex": (_c.c_int, [vp, vp, _c.c_size_t, u64p, _c.c_int,
                                       u64p, u64p]),
        "tt_stats": (_c.c_int, [vp, vp]),
        "tt_page_size": (_c.c_size_t, []),
        "tt_iter_begin": (_c.c_int, [vp]),
        "tt_layer_begin": (_c.c_int, [vp, u32, _c.c_uint]),
        "tt_layer_end": (_c.c_int, [vp, u32, _c.c_uint]),
        "tt_tensor_saved_ex": (_c.c_int, [vp, u32, vp, _c.c_size_t,
                                          _c.c_uint]),
        "tt_events": (_c.c_int, [vp, vp, _c.c_uint]),
        "tt_sched_get": (_c.c_int, [vp, vp]),
        "tt_sched_set": (_c.c_int, [vp, vp]),
        "tt_layers": (_c.c_int, [vp, vp, _c.c_uint]),
        "tt_hint": (_c.c_int, [vp, vp, _c.c_size_t, _c.c_uint]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args


def library():
    """The loaded libtiertrain (``ctypes.CDLL``); loads it on first use.

    Tried in order: ``$TIERTRAIN_LIBRARY`` (a path; nothing else when set),
    the repository's ``lib/`` next to this package, ``libtiertrain.so.0``
    through the dynamic loader (``LD_LIBRARY_PATH``, ``ld.so.cache``), and
    the library directory ``make install`` wrote into the package.
    Raises ``TiertrainError`` (ENOENT) naming every place tried.
    """
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append("%s (no such file)" % path)
            continue
        try:
            lib = ctypes.CDLL(path, use_errno=True)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
            continue
        _declare(lib)
        _lib, _lib_path = lib, path
        return lib
    raise TiertrainError(_errno.ENOENT, "tiertrain: cannot load %s; tried: %s"
                         % (SONAME, "; ".join(tried)))


def library_path():
    """The path libtiertrain was loaded from (loads it if needed)."""
    lib = library()
    if os.sep in _lib_path:
        return os.path.realpath(_lib_path)
    # loaded by soname: ask the dynamic loader where it found it
    addr = _c.cast(lib.tt_version, _c.c_void_p).value
    info = _DlInfo()
    if _c.CDLL(None).dladdr(_c.c_void_p(addr), _c.byref(info)) and \
            info.dli_fname:
        return os.path.realpath(info.dli_fname.decode())
    return _lib_path


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", _c.c_char_p), ("dli_fbase", _c.c_void_p),
                ("dli_sname", _c.c_char_p), ("dli_saddr", _c.c_void_p)]


def version():
    """libtiertrain's version string, e.g. "0.1.0"."""
    return library().tt_version().decode()


def backend():
    """The backend a new session would use now: "kernel" or "move_pages"."""
    b = library().tt_backend(None)
    if b is None:
        _raise("tt_backend(NULL)")
    return b.decode()


def page_size():
    return library().tt_page_size()


def _raise(what, err=None):
    e = err if err is not None else _c.get_errno()
    raise TiertrainError(e, "%s: %s" % (what, os.strerror(e)))


def node_roles():
    """{node: "fast" | "slow"} for the online nodes with memory, from sysfs.

    Fast: nodes with CPUs; slow: nodes with memory and no CPUs (the
    module's automatic roles; the fast_nodes=/slow_nodes= parameters can
    differ, see ``tierctl tiers``).
    """
    roles = {}
    base = "/sys/devices/system/node"
    try:
        with open(os.path.join(base, "has_memory")) as f:
            mem = _parse_list(f.read())
        with open(os.path.join(base, "has_cpu")) as f:
            cpu = _parse_list(f.read())
    except OSError:
        return {0: "fast"}
    for n in sorted(mem):
        roles[n] = "fast" if n in cpu else "slow"
    return roles


def _parse_list(text):
    out = set()
    for part in text.strip().split(","):
        if not part:
            continue
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


class Session:
    """A libtiertrain session (tt_open); close it with ``close()`` or ``with``.

    All methods raise ``TiertrainError`` on failure. A session is bound to
    the process that opened it.
    """

    def __init__(self):
        self._lib = library()
        self._s = self._lib.tt_open()
        if not self._s:
            e = _c.get_errno()
            raise TiertrainError(e, "tt_open: %s (backend %s; "
                                 "TIERTRAIN_BACKEND=%r)" % (
                                     os.strerror(e), _safe_backend(),
                                     os.environ.get("TIERTRAIN_BACKEND", "")))
        self._nodes = max(node_roles()) + 1
        self._res = (_c.c_uint64 * self._nodes)()
        self._np = _c.c_uint64()
        self._other = _c.c_uint64()

    # -- life time --
    def close(self):
        if self._s:
            self._lib.tt_close(self._s)
            self._s = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    @property
    def handle(self):
        """The ``struct tt_session *`` as an int (for ctypes callers)."""
        return self._s

    @property
    def backend(self):
        return self._lib.tt_backend(self._s).decode()

    def _check(self, ret, what):
        if ret < 0:
            _raise(what, -ret)
        return ret

    # -- events --
    def iter_begin(self):
        self._check(self._lib.tt_iter_begin(self._s), "tt_iter_begin")

    def layer_begin(self, layer, phase):
        self._check(self._lib.tt_layer_begin(self._s, layer, phase),
                    "tt_layer_begin(layer %d, phase %#x)" % (layer, phase))

    def layer_end(self, layer, phase):
        self._check(self._lib.tt_layer_end(self._s, layer, phase),
                    "tt_layer_end(layer %d, phase %#x)" % (layer, phase))

    def tensor_saved(self, layer, addr, length, persistent=False):
        flags = _uapi.TT_EV_PERSISTENT if persistent else 0
        self._check(self._lib.tt_tensor_saved_ex(self._s, layer, addr,
                                                 length, flags),
                    "tt_tensor_saved(layer %d, %#x, %d)" %
                    (layer, addr, length))

    def hint(self, addr, length, hint):
        """tt_hint(): TT_HINT_* bits on [addr, addr + length)."""
        self._check(self._lib.tt_hint(self._s, addr, length, hint),
                    "tt_hint(%#x, %d, %#x)" % (addr, length, hint))

    def events(self, address, n):
        """Submit @n struct tt_event at @address (an int): tt_events()."""
        ret = self._lib.tt_events(self._s, address, n)
        if ret < 0:
            _raise("tt_events(%d events)" % n, -ret)
        return ret

    # -- settings and counters --
    def stats(self):
        """tt_stats() as a dict of struct tt_ioc_stats' members."""
        buf = bytearray(STATS.size)
        cbuf = (_c.c_char * STATS.size).from_buffer(buf)
        self._check(self._lib.tt_stats(self._s, cbuf), "tt_stats")
        return STATS.unpack(buf)

    def sched_get(self):
        buf = bytearray(SCHED.size)
        cbuf = (_c.c_char * SCHED.size).from_buffer(buf)
        self._check(self._lib.tt_sched_get(self._s, cbuf), "tt_sched_get")
        return SCHED.unpack(buf)

    def sched_set(self, valid, **fields):
        """tt_sched_set() with the TT_SCHED_SET_* bits @valid and fields."""
        buf = SCHED.pack(valid=valid, **fields)
        cbuf = (_c.c_char * SCHED.size).from_buffer(buf)
        self._check(self._lib.tt_sched_set(self._s, cbuf),
                    "tt_sched_set(%s)" % ", ".join(
                        "%s=%s" % kv for kv in sorted(fields.items())))

    def layers(self):
        """tt_layers(): a list of dicts (struct tt_layer_info), by layer id."""
        n = 0
        while True:
            buf = bytearray(LAYER_INFO.size * max(n, 1))
            cbuf = (_c.c_char * len(buf)).from_buffer(buf)
            got = self._check(self._lib.tt_layers(self._s, cbuf, n),
                              "tt_layers")
            if got <= n:
                return [LAYER_INFO.unpack(memoryview(buf)[i * LAYER_INFO.size:])
                        for i in range(got)]
            n = got

    # -- memory --
    def migrate(self, addr, length, node):
        """Move [addr, addr + length) to ``node`` now (tt_migrate_ex()).

        Returns the result, a dict of struct tt_migrate_result's fields,
        when every present page of the range is on ``node``. Otherwise
        raises TiertrainError (ENOSPC: the node was full; EBUSY: pages
        stayed busy or cannot move; ...) whose ``result`` attribute holds
        the same dict: how many pages stayed, by reason.
        """
        buf = _c.create_string_buffer(MIGRATE_RESULT.size)
        ret = self._lib.tt_migrate_ex(self._s, addr, length, node, 0, buf)
        res = MIGRATE_RESULT.unpack(buf.raw)
        if ret < 0:
            what = "tt_migrate(%#x, %d, node %d): %s" % (
                addr, length, node, os.strerror(-ret))
            if res["pages"]:
                what += " (%d of %d pages stayed)" % (
                    res["skipped_busy"] + res["skipped_unsupported"] +
                    res["skipped_no_memory"], res["pages"])
            e = TiertrainError(-ret, what)
            e.result = res
            raise e
        return res

    def residency(self, addr, length):
        """(bytes per node as a list, not-present bytes, bytes elsewhere)."""
        ret = self._lib.tt_residency_ex(self._s, addr, length, self._res,
                                        self._nodes, _c.byref(self._np),
                                        _c.byref(self._other))
        self._check(ret, "tt_residency(%#x, %d)" % (addr, length))
        return list(self._res), self._np.value, self._other.value

    def residency_into(self, addr, length):
        """Like residency() without building lists: 0 or -errno; the
        counts are left in ``node_bytes`` (a ctypes array) for the caller."""
        return self._lib.tt_residency_ex(self._s, addr, length, self._res,
                                         self._nodes, None, None)

    @property
    def node_bytes(self):
        return self._res


def _safe_backend():
    try:
        return backend()
    except TiertrainError as e:
        return "unknown: %s" % e.strerror
