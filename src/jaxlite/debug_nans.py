"""NaN and inf debugging: the `jax_debug_nans` and `jax_debug_infs` options.

A NaN in a big computation is hard to trace back to the operation that made it. With
`jax_debug_nans` on (`config.update("jax_debug_nans", True)`, `JAX_DEBUG_NANS=True`
or `with jax.debug_nans(True):`), every floating-point value a primitive produces is
checked, and the primitive that produced a NaN raises
`FloatingPointError: invalid value (nan) encountered in div`, so the traceback ends
in the line of user code that called it. `jax_debug_infs` does the same for infinities.
Only inexact (floating and complex) outputs are checked, and an output is checked
whatever its inputs were: a NaN passed into `add` makes `add` raise, as in JAX.

Where it happens:

- Eagerly, in `EvalTrace.process_primitive`. A config listener swaps in a checking
  version of that method while a flag is on and swaps the plain one back when both
  are off, so eager dispatch costs nothing extra when checking is off.
- Under `jit`, only the outputs of the compiled call are checked (`jit` leaves its
  fast path while `config.jit_slow_path` is set). On a NaN the Python function is
  re-run *de-optimized*: called again op by op under the eval trace, with checking on,
  so the error is raised at the producing operation, with a traceback into the user's
  code. If the re-run produces no NaN (the value appears only under `jit`), the
  FloatingPointError says so. A `jit` equation evaluated eagerly (e.g. under `vmap`) is
  re-run equation by equation from its jaxpr in the same way.
- Backward passes need nothing more: `backward_pass` binds each transposed equation
  under the current trace, so an eager `grad` raises at the transposed operation
  (`invalid value (nan) encountered in mul`), and `jit(grad(f))` reruns `grad(f)`
  eagerly.

`jax_disable_jit` is simpler and lives in `jit` itself: the Python function is called
directly. `lax.cond`, `scan`, `while_loop` and `fori_loop` then run their Python bodies
eagerly too, as in JAX (see `lax/conditionals.py` and `lax/loops.py`).
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np

from jaxlite import dtypes
from jaxlite.config import config, debug_infs, debug_nans
from jaxlite.core import EvalTrace, eval_jaxpr, set_current_trace
from jaxlite.distributed.global_array import GlobalArray

__all__ = [
    "DEOPTIMIZED_MESSAGE",
    "call_primitives",
    "check_jit_outputs",
    "debug_infs",
    "debug_nans",
    "special_kind",
]

# What JAX 0.10.2 prints (to stdout) before re-running a jitted function; it says
# "nan" for infinities too.
DEOPTIMIZED_MESSAGE = (
    "Invalid nan value encountered in the output of a jax.jit function. "
    "Calling the de-optimized version."
)

# Call primitives (`jit`): evaluated eagerly with a NaN in an output, their jaxpr is
# re-run equation by equation to find the producing equation. Filled by dispatch.py.
call_primitives: set = set()

_inexact_dtypes: dict = {}


def _is_inexact(dtype):
    known = _inexact_dtypes.get(dtype)
    if known is None:
        known = _inexact_dtypes[dtype] = bool(dtypes.issubdtype(dtype, np.inexact))
    return known


def special_kind(values):
    """The kind of special value, `"nan"` or `"inf"`, that one of the NumPy `values`
    of inexact dtype holds and the current options look for (NaNs first, as JAX
    checks them); None if there is none."""
    check_nans = config.debug_nans
    check_infs = config.debug_infs
    for value in values:
        if dtypes.is_extended(getattr(value, "dtype", None)):
            continue  # keys hold no floats
        value = np.asarray(value)
        if not _is_inexact(value.dtype):
            continue
        if check_nans and np.isnan(value).any():
            return "nan"
        if check_infs and np.isinf(value).any():
            return "inf"
    return None


def _invalid_value(kind, where):
    return FloatingPointError(f"invalid value ({kind}) encountered in {where}")


def _user_stacklevel():
    """The `stacklevel` that makes a warning issued by our caller point at the first
    frame outside jaxlite (the user's call)."""
    package_dir = os.path.dirname(os.path.abspath(__file__))
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_code.co_filename.startswith(package_dir):
        frame, level = frame.f_back, level + 1
    return level


def _warn_not_reproduced(kind, where):
    message = (
        f"invalid value ({kind}) encountered in {where}. Because jax_debug_nans "
        "and/or jax_debug_infs is set, the de-optimized function (i.e., the function "
        "as if the `jit` decorator were removed) was called in an attempt to get a "
        "more precise error message. However, the de-optimized function did not "
        f"produce invalid values during its execution: the {kind} appears only under "
        "`jit`, and execution continues with the jitted result. In jaxlite this "
        "happens when the un-jitted function computes with Python or NumPy scalars "
        "that `jit` turns into arrays (e.g. `jax.jit(lambda x: x + jax.numpy.nan)(1.)`, "
        "where the de-optimized function adds two Python floats), or when a nan/inf "
        "literal is an output. Removing the `jit` decorator runs the function op by "
        "op, where each operation is checked."
    )
    warnings.warn(message, RuntimeWarning, stacklevel=_user_stacklevel())


# ----------------------------------------------------------------------------------------
# Eager checks: a checking EvalTrace.process_primitive, swapped in by a config listener.

_plain_process_primitive = EvalTrace.process_primitive


def _checked_process_primitive(self, prim, args, params):
    outs = _plain_process_primitive(self, prim, args, params)
    if not config.debug_checks:  # installed for another thread's `debug_nans` block
        return outs
    # (float0 outputs are NumPy arrays: `core.float0_value`; of a GlobalArray, this
    # process checks its block, as under jit)
    kind = special_kind([_value_here(out) for out in outs])
    if kind is not None:
        if prim not in call_primitives:
            raise _invalid_value(kind, prim.name)
        _rerun_call_equation(self, prim, args, params, kind)
    return outs


def _value_here(out):
    if type(out) is GlobalArray:  # split across processes
        return out._local
    return getattr(out, "_value", out)


def _rerun_call_equation(trace, prim, args, params, kind):
    """Evaluate a call primitive's jaxpr equation by equation (each one checked); warn
    if no equation raises."""
    print(DEOPTIMIZED_MESSAGE)
    closed = params["jaxpr"]
    with set_current_trace(trace):
        eval_jaxpr(closed.jaxpr, closed.consts, *args)
    _warn_not_reproduced(kind, f"{prim.name}({params.get('name', '')})")


def _install_eager_checks(name=None, value=None):
    # Process-wide while any thread checks (the option may be set in one thread only).
    if config.set_in_any_thread("jax_debug_nans") or config.set_in_any_thread(
        "jax_debug_infs"
    ):
        EvalTrace.process_primitive = _checked_process_primitive
    else:
        EvalTrace.process_primitive = _plain_process_primitive


config.add_listener(_install_eager_checks)
_install_eager_checks()  # JAX_DEBUG_NANS / JAX_DEBUG_INFS at import


# ----------------------------------------------------------------------------------------
# jit: check the outputs of the compiled call, re-run de-optimized on a NaN.


def check_jit_outputs(fun, name, args, kwargs, out_values):
    """Called by `jit` (eval trace, checking on) with the compiled call's NumPy
    outputs. On a NaN/inf, prints JAX's message and calls `fun(*args, **kwargs)` op by
    op, so the producing operation raises; if none does, warns and returns, so that the
    caller goes on with the compiled outputs."""
    kind = special_kind(out_values)
    if kind is None:
        return
    print(DEOPTIMIZED_MESSAGE)
    fun(*args, **kwargs)
    _warn_not_reproduced(kind, f"jit({name})")
