"""Reductions in the log domain: `logsumexp`, shared by `jax.nn.logsumexp`,
`jnp.logaddexp.reduce` and (when it is written) `jax.scipy.special.logsumexp`.

`log(sum(exp(a)))` overflows for large `a`; subtracting the maximum first keeps every
exponent at most 0. The maximum is a constant for differentiation (`stop_gradient`):
the result does not depend on it, and treating it as a constant keeps the gradient
exactly `softmax(a)` without the non-smooth max in between. Infinite maxima are
replaced by 0 so that an all `-inf` slice gives `-inf` rather than NaN.
"""

from __future__ import annotations

import numpy as np

from jaxlite import lax
from jaxlite.eager_jit import eager_jit

__all__ = []


def reduction_axes(ndim, axis, fun_name="logsumexp"):
    """`axis` (None, an int or a sequence) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < ndim:
            raise ValueError(
                f"{fun_name}: axis {a} is out of bounds for array of dimension {ndim}"
            )
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{fun_name}: repeated axis in {axis!r}")
    return tuple(sorted(out))


@eager_jit
def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """`log(sum(b * exp(a)))` over `axis`, computed without overflow.

    With `return_sign`, returns `(log|s|, sign(s))` for `s = sum(b * exp(a))`;
    otherwise a negative sum gives NaN. `where` selects the elements to include.
    """
    import jaxlite.numpy as jnp
    from jaxlite.numpy.ufuncs import promote_args_inexact

    if where is not None:
        a = jnp.where(where, a, 0)
    if b is not None:
        a, b = promote_args_inexact("logsumexp", a, b)
        a = jnp.where(b != 0, a, -np.inf)
    else:
        (a,) = promote_args_inexact("logsumexp", a)
    axes = reduction_axes(np.ndim(a), axis)
    amax = jnp.max(
        jnp.real(a), axis=axes, keepdims=keepdims, where=where, initial=-np.inf
    )
    amax = lax.stop_gradient(jnp.where(jnp.isfinite(amax), amax, 0))
    amax_b = amax if keepdims else lax.expand_dims(amax, axes)
    exp_a = jnp.exp(a - lax.convert_element_type(amax_b, a.dtype))
    if b is not None:
        exp_a = exp_a * b
    total = jnp.sum(exp_a, axis=axes, keepdims=keepdims, where=where)
    sign = jnp.sign(total)
    is_complex = np.issubdtype(np.dtype(a.dtype), np.complexfloating)
    if return_sign or not is_complex:
        total = jnp.abs(total)
    out = jnp.log(total) + lax.convert_element_type(amax, np.dtype(total.dtype))
    if return_sign:
        return out, sign
    if b is not None and not is_complex:
        out = jnp.where(sign < 0, jnp.array(np.nan, dtype=out.dtype), out)
    return out


def logsumexp2(a, axis=None, keepdims=False, where=None):
    """`log2(sum(2 ** a))` over `axis` (the reduction of `jnp.logaddexp2`)."""
    import jaxlite.numpy as jnp
    from jaxlite.numpy.ufuncs import promote_args_inexact

    (a,) = promote_args_inexact("logaddexp2.reduce", a)
    ln2 = lax.convert_element_type(np.log(2), a.dtype)
    out = logsumexp(a * ln2, axis=axis, keepdims=keepdims, where=where)
    return jnp.true_divide(out, ln2)
