"""Keeping freed array buffers for reuse, as XLA's allocator does.

A jitted step allocates the same intermediate buffers on every call. XLA keeps them in
its own pool, so its second call touches no new memory. jaxlite's buffers come from
NumPy, and NumPy's from the C library's `malloc`. By default glibc serves every
allocation over 128 KiB with a fresh `mmap` and hands it back to the kernel on `free`,
and it gives the top of the heap back once more than 128 KiB of it is free. Its own
heuristic raises both limits as large buffers come and go, but a step whose buffers are
freed in a different order than they were allocated can keep hitting them. Then every
call faults in every page again, zeroed by the kernel: for the MLP in
`bench/bench_autodiff.py`, 2,300 page faults and half of the step's time.

`tune()` sets both limits once, with `mallopt`, to the largest values glibc's heuristic
can reach on its own: buffers up to 32 MiB come from the heap, and up to 64 MiB of freed
heap stays mapped for the next call. Bigger arrays are still mapped and unmapped one by
one, and memory above that is still returned.

It is on by default. `JAXLITE_MALLOC_TUNING=0` in the environment (read at import) or
`jax.config.update("jaxlite_malloc_tuning", False)` turns it off; turning it off after
it was applied puts back glibc's fixed defaults. Nothing is done where the C library is
not glibc (macOS, Windows, musl): their allocators keep freed memory anyway.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform

# mallopt parameter numbers, from glibc's <malloc.h>.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

# glibc's own ceiling for its dynamic mmap threshold on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX)
# and the trim threshold it pairs with it (twice the mmap threshold).
_MMAP_THRESHOLD = 32 * 1024 * 1024
_TRIM_THRESHOLD = 2 * _MMAP_THRESHOLD
# glibc's static defaults, put back when the tuning is turned off.
_DEFAULT_THRESHOLD = 128 * 1024


def _mallopt():
    """glibc's `mallopt`, or None where the C library is something else."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        fn = libc.mallopt
    except (OSError, AttributeError):
        return None
    fn.argtypes = (ctypes.c_int, ctypes.c_int)
    fn.restype = ctypes.c_int
    return fn


_applied = None  # None: never set; True/False: the last state set


def tune(enable=True):
    """Sets (or with `enable=False`, resets) the allocator limits; returns whether the
    C library accepted them. Repeated calls with the same value do nothing."""
    global _applied
    if _applied is enable or (_applied is None and not enable):
        return bool(_applied)
    mallopt = _mallopt()
    if mallopt is None:
        return False
    mmap_value, trim_value = (
        (_MMAP_THRESHOLD, _TRIM_THRESHOLD) if enable else (_DEFAULT_THRESHOLD,) * 2
    )
    ok = bool(mallopt(_M_MMAP_THRESHOLD, mmap_value)) and bool(
        mallopt(_M_TRIM_THRESHOLD, trim_value)
    )
    _applied = enable
    return ok


def _on_config_update(name, value):
    if name == "jaxlite_malloc_tuning":
        tune(value)


def install(config):
    """Applies the configured setting now and follows later `config.update`s."""
    tune(config.read("jaxlite_malloc_tuning"))
    config.add_listener(_on_config_update)
