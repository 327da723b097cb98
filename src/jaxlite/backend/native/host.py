"""Host calls from native code: callbacks into Python in the middle of machine code.

A host-calling primitive (`pure_callback`, `io_callback`, `debug.callback`,
`debug.print`) gives the native backend what the NumPy backend calls: a Python
function of NumPy arrays returning a list of results (`host_functions[prim](params)`).
Native code calls it through one C-callable trampoline, `jaxlite_host_call(key, ins,
outs)`: `key` names the function in `_functions`, `ins` and `outs` point to the
operand and result buffers. The trampoline copies each operand into a new read-only
array (the callback may keep it; native buffers are reused), calls the function, and
copies the results into the result buffers (their shapes and dtypes were checked by
the function, as on the NumPy backend).

The call is synchronous on the calling thread, so program order is kept (ordered
effects, prints in a loop). An exception is stored for the calling thread and the
trampoline returns nonzero: the native code returns at once with that status, and the
executable re-raises the exception as it was raised, type and traceback included.
"""

from __future__ import annotations

import ctypes
import math
import threading

import numpy as np

# host_functions[prim](params) -> the Python function of NumPy arrays that runs the
# equation, as the NumPy backend calls it (registered by lax/ beside native_rules).
host_functions: dict = {}

_functions = []  # key -> (function, operand specs, result specs)
_lock = threading.Lock()
_pending = threading.local()

HOST_CALL_SYMBOL = "jaxlite_host_call"
FAILED = 2  # the status native code returns when a host call raised


def register(fn, in_avals, out_avals):
    """A key under which native code can call `fn`."""
    with _lock:
        _functions.append(
            (fn, [_spec(a) for a in in_avals], [_spec(a) for a in out_avals])
        )
        return len(_functions) - 1


def _spec(aval):
    shape, dtype = tuple(aval.shape), np.dtype(aval.dtype)
    return shape, dtype, math.prod(shape) * dtype.itemsize


def _host_call(key, ins, outs):
    try:
        fn, in_specs, out_specs = _functions[key]
        # Copies the callback may keep (the native buffers are reused).
        args = [
            np.frombuffer(ctypes.string_at(ins[k], nbytes), dtype).reshape(shape)
            for k, (shape, dtype, nbytes) in enumerate(in_specs)
        ]
        results = fn(*args)
        for k, ((_, dtype, nbytes), r) in enumerate(zip(out_specs, results)):
            ctypes.memmove(outs[k], np.asarray(r, dtype).tobytes(), nbytes)
        return 0
    except BaseException as e:  # re-raised by the executable, in the caller
        _pending.exception = e
        return FAILED


_TRAMPOLINE_TYPE = ctypes.CFUNCTYPE(
    ctypes.c_int32,
    ctypes.c_int64,
    ctypes.POINTER(ctypes.c_void_p),
    ctypes.POINTER(ctypes.c_void_p),
)
_trampoline = _TRAMPOLINE_TYPE(_host_call)


def trampoline_address():
    return ctypes.cast(_trampoline, ctypes.c_void_p).value


def raise_pending():
    """Re-raise the exception a host call of this thread stored."""
    e = getattr(_pending, "exception", None)
    _pending.exception = None
    if e is None:
        raise SystemError("native code reported a failed host call but none failed")
    raise e
