"""Host calls from native code: callbacks into Python in the middle of machine code.

A host-calling primitive (`pure_callback`, `io_callback`, `debug.callback`,
`debug.print`) gives the native backend what the NumPy backend calls: a Python
function of NumPy arrays returning a list of results (`host_functions[prim](params)`).

Each call site gets its own C-callable trampoline (`Site`), typed for its operands:
a 0-d operand is passed by value in a register (ctypes turns it into a Python number,
the trampoline into the NumPy scalar of its dtype), an array by its address (copied
into a new read-only array: the callback may keep it, and native buffers are reused),
and each result by the address it is copied to (its shape and dtype were checked by
the function, as on the NumPy backend). Native code finds the trampoline's address in
a one-element constant array, so the code itself holds no process-specific address
(the on-disk cache stays valid).

A primitive that moves data itself (the MPI collectives of `lax/cross_process.py`)
registers in `buffer_functions` instead: its function gets every array operand and
every result as a NumPy view of the native buffer (no copy; valid during the call
only) and writes its results into the result views, so MPI reads and writes the
native code's memory directly.

The call is synchronous on the calling thread, so program order is kept (ordered
effects, prints in a loop). An exception is stored for the calling thread and the
trampoline returns `FAILED`: the native code returns at once with that status, and the
executable re-raises the exception as it was raised, type and traceback included.
"""

from __future__ import annotations

import builtins
import ctypes
import math
import threading

import numpy as np

# host_functions[prim](params) -> the Python function of NumPy arrays that runs the
# equation, as the NumPy backend calls it (registered by lax/ beside native_rules).
host_functions: dict = {}

# buffer_functions[prim](params) -> fn(*operands, *results), writing the results into
# `results` (views of native memory): host calls that move bytes themselves (MPI).
buffer_functions: dict = {}

FAILED = 2  # the status native code returns when a host call raised

_pending = threading.local()
_sites = []  # every Site stays alive: native code may call it at any time
_lock = threading.Lock()

_CTYPES = {
    "b": ctypes.c_uint8,
    "i1": ctypes.c_int8,
    "i2": ctypes.c_int16,
    "i4": ctypes.c_int32,
    "i8": ctypes.c_int64,
    "u1": ctypes.c_uint8,
    "u2": ctypes.c_uint16,
    "u4": ctypes.c_uint32,
    "u8": ctypes.c_uint64,
    "f4": ctypes.c_float,
    "f8": ctypes.c_double,
}


def _ctype(dtype):
    return _CTYPES["b" if dtype.kind == "b" else f"{dtype.kind}{dtype.itemsize}"]


class Site:
    """One host call site: `function` (a ctypes function pointer) and `cell`, the
    uint64 array holding its address for native code. Its C signature is
    `i32 (operand..., result address...)`, a 0-d operand by value, an array by
    address."""

    def __init__(self, fn, in_avals, out_avals, in_place=False):
        ins = [(tuple(a.shape), np.dtype(a.dtype)) for a in in_avals]
        outs = [(tuple(a.shape), np.dtype(a.dtype)) for a in out_avals]
        self.by_value = [not shape for shape, _ in ins]
        namespace = {
            "_fn": fn,
            "_pending": _pending,
            "_string_at": ctypes.string_at,
            "_frombuffer": np.frombuffer,
            "_memmove": ctypes.memmove,
            "_asarray": np.asarray,
            "_view": _view,
            "_FAILED": FAILED,
        }
        params, args, argtypes = [], [], []
        for k, (shape, dtype) in enumerate(ins):
            params.append(f"a{k}")
            namespace[f"_D{k}"] = dtype
            namespace[f"_T{k}"] = dtype.type
            if shape and in_place:
                args.append(f"_view(a{k}, _D{k}, {shape!r})")
                argtypes.append(ctypes.c_void_p)
            elif shape:
                nbytes = math.prod(shape) * dtype.itemsize
                args.append(f"_frombuffer(_string_at(a{k}, {nbytes}), _D{k})")
                if len(shape) != 1:
                    args[-1] += f".reshape({shape!r})"
                argtypes.append(ctypes.c_void_p)
            elif in_place:
                args.append(f"_asarray(a{k}, _D{k})")
                argtypes.append(_ctype(dtype))
            else:
                args.append(f"_T{k}(a{k})")
                argtypes.append(_ctype(dtype))
        lines = []
        for k, (shape, dtype) in enumerate(outs):
            params.append(f"o{k}")
            namespace[f"_R{k}"] = dtype
            nbytes = math.prod(shape) * dtype.itemsize
            if in_place:
                args.append(f"_view(o{k}, _R{k}, {shape!r})")
            else:
                lines.append(
                    f"        _memmove(o{k}, _asarray(r[{k}], _R{k}).tobytes(), "
                    f"{nbytes})"
                )
            argtypes.append(ctypes.c_void_p)
        source = "\n".join(
            [
                f"def site({', '.join(params)}):",
                "    try:",
                f"        r = _fn({', '.join(args)})",
                *lines,
                "        return 0",
                "    except BaseException as e:  # re-raised by the executable",
                "        _pending.exception = e",
                "        return _FAILED",
            ]
        )
        exec(builtins.compile(source, "<jaxlite:host call>", "exec"), namespace)
        self.function = ctypes.CFUNCTYPE(ctypes.c_int32, *argtypes)(namespace["site"])
        address = ctypes.cast(self.function, ctypes.c_void_p).value
        self.cell = np.array([address], np.uint64)
        self.source = source


def _view(address, dtype, shape):
    """The native buffer at `address` as an array of `shape` (no copy)."""
    nbytes = math.prod(shape) * dtype.itemsize
    if not nbytes:
        return np.empty(shape, dtype)
    return np.frombuffer((ctypes.c_char * nbytes).from_address(address), dtype).reshape(
        shape
    )


def site(fn, in_avals, out_avals, in_place=False):
    """A new call site of `fn` (kept alive for the life of the process);
    `in_place`: `fn` is a `buffer_functions` one."""
    s = Site(fn, in_avals, out_avals, in_place)
    with _lock:
        _sites.append(s)
    return s


def raise_pending():
    """Re-raise the exception a host call of this thread stored."""
    e = getattr(_pending, "exception", None)
    _pending.exception = None
    if e is None:
        raise SystemError("native code reported a failed host call but none failed")
    raise e
