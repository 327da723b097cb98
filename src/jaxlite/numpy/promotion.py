"""Checking and promoting the arguments of jax.numpy functions.

Every jax.numpy function first checks that its arguments are arrays or scalars (lists
are refused, as in JAX, because converting them silently hides performance problems;
`ensure_arraylike` converts objects with `__jax_array__` for the few functions that
accept them), then promotes their dtypes with JAX's lattice (weak Python scalars never
upcast arrays) and their ranks (lower-rank operands get leading size-1 axes, under the
`jax_numpy_rank_promotion` option). Key arrays promote with nothing. `promote_args`,
`promote_args_inexact` and `promote_args_numeric` do all of it in one call.
"""

from __future__ import annotations

import warnings

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.config import config
from jaxlite.core import Array, Tracer
from jaxlite.errors import float0_operation_error, jax_array_abstractification_error

_SCALARS = (int, float, complex, bool)


def check_arraylike(fun_name, *args):
    """Each argument must be an array or a scalar. An object with `__jax_array__` is
    refused with JAX 0.10.2's ValueError (its jitted jax.numpy functions no longer
    convert one); the functions that do convert it call `ensure_arraylike`."""
    for i, a in enumerate(args):
        # Key arrays are Arrays too (`isinstance`): the primitives' rules decide
        # which operations they accept.
        if not (
            type(a) is Array
            or type(a) in _SCALARS
            or isinstance(a, (Array, Tracer, np.ndarray, np.generic))
        ):
            if getattr(a, "__jax_array__", None) is not None:
                raise jax_array_abstractification_error()
            raise TypeError(
                f"{fun_name} requires ndarray or scalar arguments, got {type(a)} at "
                f"position {i}."
            )


def ensure_arraylike(fun_name, *args):
    """`args` with each object that has `__jax_array__` replaced by its array, after
    `check_arraylike`: one value for one argument, else a tuple. As JAX's helper of
    the same name, used by the jax.numpy functions that accept such objects."""
    args = tuple(jax_array_value(a) for a in args)
    check_arraylike(fun_name, *args)
    return args[0] if len(args) == 1 else args


def jax_array_value(x):
    """`x.__jax_array__()` for an object with the protocol, else `x` itself."""
    if type(x) is Array or type(x) in _SCALARS:
        return x
    convert = getattr(x, "__jax_array__", None)
    return x if convert is None else convert()


def promote_dtypes(*args):
    """Convert arguments to their common JAX dtype (weak if every input was weak)."""
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    return [lax.convert_element_type(a, dtype, weak) for a in args]


def promote_dtypes_inexact(*args):
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    if not dtypes.issubdtype(dtype, np.inexact):
        dtype = dtypes.default_float_dtype()
    return [lax.convert_element_type(a, dtype, weak) for a in args]


def promote_dtypes_numeric(*args):
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    if dtype == np.bool_:
        dtype = dtypes.default_int_dtype()
    return [lax.convert_element_type(a, dtype, weak) for a in args]


def _check_rank_promotion(fun_name, shapes):
    """The `jax_numpy_rank_promotion` option: 'allow' (default), 'warn' or 'raise' when
    operands of different non-zero ranks are broadcast together."""
    mode = config.read("jax_numpy_rank_promotion")
    if mode == "allow":
        return
    shapes_text = " ".join(str(tuple(s)) for s in shapes)
    more = "see https://docs.jax.dev/en/latest/rank_promotion_warning.html."
    if mode == "raise":
        raise ValueError(
            f"Operands could not be broadcast together for {fun_name} on shapes "
            f"{shapes_text} and with the config option "
            f"jax_numpy_rank_promotion='raise'. For more information, {more}"
        )
    warnings.warn(
        f"Following NumPy automatic rank promotion for {fun_name} on shapes "
        f"{shapes_text}. Set the jax_numpy_rank_promotion config option to 'allow' "
        f"to disable this warning; for more information, {more}",
        stacklevel=dtypes._user_stacklevel(),
    )


def promote_shapes(fun_name, *args):
    """Give lower-rank, non-scalar operands leading size-1 axes (NumPy broadcasting).
    Operands of one rank are left to the lax primitive, which checks them."""
    shapes = [np.shape(a) for a in args]
    ranks = {len(s) for s in shapes if s}
    if len(ranks) < 2:
        return list(args)
    rank = max(ranks)
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(
            f"Incompatible shapes for broadcasting: shapes={[tuple(s) for s in shapes]}"
        ) from None
    _check_rank_promotion(fun_name, shapes)
    return [
        a if not s or len(s) == rank else lax.broadcast_to_rank(a, rank)
        for a, s in zip(args, shapes)
    ]


def _check_operands(fun_name, args, float0_ok=False):
    """`check_arraylike`, and a Python int operand must fit the default integer type:
    JAX's ufuncs are jitted, and parse it as one (`jnp.zeros(2) * 2**40` raises
    OverflowError where x64 is off, not only in integer arithmetic). float0 operands
    are refused unless `float0_ok` (structural functions such as `where`)."""
    check_arraylike(fun_name, *args)
    for a in args:
        if type(a) is int:
            dtypes.check_python_int(a)
        elif not float0_ok and getattr(a, "dtype", None) == dtypes.float0:
            raise float0_operation_error(fun_name)


def check_for_prngkeys(fun_name, args, numeric=False):
    """Keys promote with nothing: mixed with another dtype they are refused here with
    JAX's message; keys of one dtype go on to the primitives' rules, unless the
    function computes in a numeric type (`numeric`), which keys have none of."""
    if not any(dtypes.is_extended(getattr(a, "dtype", None)) for a in args):
        return
    arg_dtypes = [dtypes.dtype(a) for a in args]
    if len(set(map(str, arg_dtypes))) > 1:
        names = ", ".join(map(str, arg_dtypes))
        raise TypeError(f"{fun_name} does not accept dtypes {names}.")
    if numeric:
        raise TypeError(
            f"{fun_name} does not accept dtype {arg_dtypes[0]}: key arrays are not "
            "numbers. Use jax.random.key_data(keys) for their uint32 data."
        )


def promote_args(fun_name, *args):
    _check_operands(fun_name, args)
    check_for_prngkeys(fun_name, args)
    return promote_shapes(fun_name, *promote_dtypes(*args))


def promote_args_inexact(fun_name, *args):
    _check_operands(fun_name, args)
    check_for_prngkeys(fun_name, args, numeric=True)
    return promote_shapes(fun_name, *promote_dtypes_inexact(*args))


def promote_args_numeric(fun_name, *args):
    _check_operands(fun_name, args)
    check_for_prngkeys(fun_name, args, numeric=True)
    return promote_shapes(fun_name, *promote_dtypes_numeric(*args))
