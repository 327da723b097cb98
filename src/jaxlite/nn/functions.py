"""Activation functions, normalisations and attention of `jax.nn`.

Each function is a short composition of `jaxlite.numpy` operations, so it works
eagerly, under `jit`, `grad` and `vmap` alike. Where a formula's derivative is wrong
or unstable at some point, the function carries its own JVP rule (`custom_jvp`), as
in JAX, so gradients agree with JAX's: `relu` and `relu6` have derivative 0 at their
kinks, `log1mexp` uses `1 / expm1(x)`.

`softmax` and `log_softmax` subtract the (stop-gradient) maximum before
exponentiating, which keeps every exponent <= 0 without changing the value or the
gradient. `where=` masks elements out of the normalisation (they get 0 in `softmax`,
`-inf` in `log_softmax`). The custom-JVP formulation of `softmax`
(`y * (t - sum(y * t))`) is used when the `jax_softmax_custom_jvp` option is on.

`dot_product_attention` is JAX's reference ("xla") implementation: scores
`Q K^T * scale` (+ bias, masks), a float32 softmax over the keys, then the weighted
sum of the values, with grouped-query attention when there are fewer key/value heads
than query heads.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np

import jaxlite.numpy as jnp
from jaxlite import dtypes, lax
from jaxlite.core import concrete_or_error
from jaxlite.eager_jit import eager_jit
from jaxlite.lax.custom_derivatives import custom_jvp
from jaxlite.numpy.log_domain import logsumexp, reduction_axes
from jaxlite.numpy.ufuncs import check_arraylike, promote_args_inexact

__all__ = [
    "celu",
    "dot_product_attention",
    "elu",
    "gelu",
    "glu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "identity",
    "leaky_relu",
    "log1mexp",
    "log_sigmoid",
    "log_softmax",
    "logmeanexp",
    "logsumexp",
    "mish",
    "one_hot",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "soft_sign",
    "softmax",
    "softplus",
    "sparse_plus",
    "sparse_sigmoid",
    "squareplus",
    "standardize",
    "swish",
    "tanh",
]

tanh = jnp.tanh


def _asarray(name, x):
    check_arraylike(name, x)
    return jnp.asarray(x)


def identity(x):
    """`x` itself, as an array."""
    return _asarray("identity", x)


# ----------------------------------------------------------------------------------
# Rectifiers and their smooth relatives


def _relu(x):
    return jnp.maximum(x, 0)


_relu.__name__ = "relu"
relu = custom_jvp(_relu)
relu.__doc__ = "Rectified linear unit `max(x, 0)`; its derivative at 0 is 0."
relu.defjvps(lambda g, ans, x: lax.select(x > 0, g, lax.full_like(g, 0)))


def _relu6(x):
    return jnp.minimum(jnp.maximum(x, 0), 6.0)


_relu6.__name__ = "relu6"
relu6 = custom_jvp(_relu6)
relu6.__doc__ = "`min(max(x, 0), 6)`; its derivative at 0 and at 6 is 0."
relu6.defjvps(lambda g, ans, x: lax.select((x > 0) & (x < 6), g, lax.full_like(g, 0)))


def squareplus(x, b=4):
    """`(x + sqrt(x**2 + b)) / 2`, a smooth, algebraic rectifier."""
    x = _asarray("squareplus", x)
    b = _asarray("squareplus", b)
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2


@eager_jit
def softplus(x):
    """`log(1 + exp(x))`, computed without overflow."""
    return jnp.logaddexp(x, 0)


def sparse_plus(x):
    """0 below -1, `x` above 1 and `(x + 1)**2 / 4` in between."""
    x = _asarray("sparse_plus", x)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def soft_sign(x):
    """`x / (|x| + 1)`."""
    x = _asarray("soft_sign", x)
    return x / (jnp.abs(x) + 1)


def sigmoid(x):
    """The logistic function `1 / (1 + exp(-x))`."""
    return lax.logistic(x)


def sparse_sigmoid(x):
    """`clip((x + 1) / 2, 0, 1)`: the derivative of `sparse_plus`."""
    x = _asarray("sparse_sigmoid", x)
    return 0.5 * jnp.clip(x + 1.0, 0.0, 2.0)


@eager_jit
def silu(x):
    """`x * sigmoid(x)` (also called swish)."""
    x = _asarray("silu", x)
    return x * sigmoid(x)


swish = silu


@eager_jit
def mish(x):
    """`x * tanh(softplus(x))`."""
    x = _asarray("mish", x)
    return x * jnp.tanh(softplus(x))


@eager_jit
def log_sigmoid(x):
    """`log(sigmoid(x)) = -softplus(-x)`."""
    x = _asarray("log_sigmoid", x)
    return -softplus(-x)


@eager_jit
def elu(x, alpha=1.0):
    """`x` for positive `x`, else `alpha * (exp(x) - 1)`."""
    x = _asarray("elu", x)
    safe = jnp.where(x > 0, 0.0, x)
    return jnp.where(x > 0, x, alpha * jnp.expm1(safe))


@eager_jit
def leaky_relu(x, negative_slope=1e-2):
    """`x` for non-negative `x`, else `negative_slope * x`."""
    x = _asarray("leaky_relu", x)
    return jnp.where(x >= 0, x, negative_slope * x)


def hard_tanh(x):
    """`x` clipped to [-1, 1]."""
    x = _asarray("hard_tanh", x)
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


@eager_jit
def celu(x, alpha=1.0):
    """`max(x, 0) + alpha * (exp(min(x, 0) / alpha) - 1)`."""
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@eager_jit
def selu(x):
    """Scaled ELU: `scale * elu(x, alpha)` with the self-normalising constants."""
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


@eager_jit
def gelu(x, approximate=True):
    """Gaussian error linear unit `x * Phi(x)` (`Phi` the normal CDF), or its tanh
    approximation when `approximate`."""
    (x,) = promote_args_inexact("gelu", x)
    dtype = np.dtype(x.dtype)
    if approximate:
        c = np.sqrt(2 / np.pi).astype(dtype)
        cdf = 0.5 * (1.0 + jnp.tanh(c * (x + 0.044715 * (x**3))))
        return x * cdf
    sqrt_half = np.sqrt(0.5).astype(dtype)
    return jnp.array(0.5 * x * lax.erfc(-x * sqrt_half), dtype=dtype)


def glu(x, axis=-1):
    """Gated linear unit: `a * sigmoid(b)` for the two halves `a`, `b` of `x`
    along `axis`."""
    x = _asarray("glu", x)
    size = x.shape[axis]
    if size % 2:
        raise AssertionError(f"axis size must be divisible by 2, got {size}")
    x1, x2 = jnp.split(x, 2, axis)
    return x1 * sigmoid(x2)


def hard_sigmoid(x):
    """`relu6(x + 3) / 6`, a piecewise-linear sigmoid."""
    return relu6(x + 3.0) / 6.0


def hard_silu(x):
    """`x * hard_sigmoid(x)` (also called hard swish)."""
    x = _asarray("hard_silu", x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def _log1mexp(x):
    x = _asarray("log1mexp", x)
    c = jnp.log(2.0)
    return jnp.where(x < c, jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


_log1mexp.__name__ = "log1mexp"
log1mexp = custom_jvp(_log1mexp)
log1mexp.__doc__ = (
    "`log(1 - exp(-x))` for positive `x`, accurate for small and large x."
)
log1mexp.defjvps(lambda g, ans, x: g / jnp.expm1(x))


# ----------------------------------------------------------------------------------
# Normalisations: softmax and friends


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """`log(mean(exp(x)))` over `axis`, computed without overflow."""
    lse = logsumexp(x, axis=axis, keepdims=keepdims, where=where)
    ones = jnp.ones_like(x, dtype=lse.dtype)
    count = jnp.sum(ones, axis=axis, keepdims=keepdims, where=where)
    return lse - jnp.log(count)


@eager_jit
def log_softmax(x, axis=-1, where=None):
    """`x - logsumexp(x)` along `axis`: the log of `softmax(x)`, computed stably.
    Masked-out elements (`where` false) give -inf."""
    x = _asarray("log_softmax", x)
    if where is not None:
        check_arraylike("log_softmax", where)
    x_max = jnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, -np.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    shifted_lse = jnp.log(jnp.sum(jnp.exp(shifted), axis, where=where, keepdims=True))
    result = shifted - shifted_lse
    if where is not None:
        return jnp.where(where, result, -np.inf)
    return result


@eager_jit
def softmax(x, axis=-1, where=None):
    """`exp(x) / sum(exp(x))` along `axis` (an int or a tuple). Masked-out
    elements (`where` false) give 0 and take no part in the sum."""
    x = _asarray("softmax", x)
    if where is not None:
        check_arraylike("softmax", where)
    from jaxlite.config import config

    if config.values.get("jax_softmax_custom_jvp", False):
        return _softmax_custom(x, _static_axis(axis), where)
    return _softmax_value(x, axis, where, stop_max=True)


def _static_axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def _softmax_value(x, axis, where, stop_max):
    x_max = jnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    if stop_max:
        x_max = lax.stop_gradient(x_max)
    x_safe = x if where is None else jnp.where(where, x, -np.inf)
    unnormalized = jnp.exp(x_safe - x_max)
    result = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
    if where is not None:
        result = jnp.where(where, result, 0)
    return result


def _softmax_fun(x, axis, where):
    return _softmax_value(x, axis, where, stop_max=False)


def _softmax_jvp(axis, primals, tangents):
    x, where = primals
    x_dot = tangents[0]
    y = _softmax_custom(x, axis, where)
    dot = jnp.sum(y * x_dot, axis, where=where, keepdims=True)
    return y, y * (x_dot - dot)


_softmax_fun.__name__ = "_softmax"
_softmax_custom_jvp = custom_jvp(_softmax_fun, nondiff_argnums=(1,))
_softmax_custom_jvp.defjvp(_softmax_jvp)


def _softmax_custom(x, axis, where):
    return _softmax_custom_jvp(x, axis, where)


def standardize(
    x,
    axis=-1,
    mean=None,
    variance=None,
    epsilon=1e-5,
    where=None,
    *,
    algorithm="fast",
):
    """`(x - mean) / sqrt(variance + epsilon)` along `axis`; the statistics are
    computed when not given (`algorithm="fast"`: `E[x^2] - E[x]^2`, clipped at 0;
    `"stable"`: `E[(x - E[x])^2]`)."""
    check_arraylike("standardize", x)
    for v in (mean, variance, where):
        if v is not None:
            check_arraylike("standardize", v)
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = jnp.mean(
                jnp.square(jnp.subtract(x, mean)), axis, keepdims=True, where=where
            )
        elif algorithm == "fast":
            variance = jnp.mean(
                jnp.square(x), axis, keepdims=True, where=where
            ) - jnp.square(mean)
            variance = jnp.clip(variance, 0)
        else:
            raise ValueError(
                f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'."
            )
    return jnp.subtract(x, mean) * lax.rsqrt(variance + epsilon)


def one_hot(x, num_classes, *, dtype=None, axis=-1):
    """One-hot encoding of the integer indices `x`: a new axis `axis` of length
    `num_classes` with 1 at each index and 0 elsewhere (all 0 for out-of-range
    indices)."""
    num_classes = concrete_or_error(
        operator.index,
        num_classes,
        "The error arose in jax.nn.one_hot argument `num_classes`.",
    )
    x = jnp.asarray(x)
    if not dtypes.isdtype(x.dtype, "integral"):
        warnings.warn(
            f"jax.nn.one_hot input should be integer-typed; got dtype={x.dtype}",
            DeprecationWarning,
            stacklevel=2,
        )
    dtype = dtypes.default_float_dtype() if dtype is None else dtype
    dtype = dtypes.check_user_dtype_supported(dtype, "one_hot")
    if not isinstance(axis, int):
        raise NotImplementedError(
            f"jax.nn.one_hot with a named axis ({axis!r}) is not supported in "
            "jaxlite; pass an integer axis."
        )
    out_axis = reduction_axes(x.ndim + 1, axis, "one_hot")[0]
    return _one_hot(x, num_classes, dtype, out_axis)


@eager_jit
def _one_hot(x, num_classes, dtype, out_axis):
    lhs = lax.expand_dims(x, (out_axis,))
    rhs_shape = [1] * x.ndim
    rhs_shape.insert(out_axis, num_classes)
    rhs = lax.broadcasted_iota(x.dtype, tuple(rhs_shape), out_axis)
    return lax.convert_element_type(lhs == rhs, dtype)


# ----------------------------------------------------------------------------------
# Attention


def _large_negative(dtype):
    biggest = min(float(dtypes.finfo(dtype).max), float(np.finfo(np.float32).max))
    return jnp.asarray(-0.7 * biggest, dtype=dtype)


def _ensure_4d(t):
    t = jnp.asarray(t)
    if t.ndim < 4:
        t = jnp.reshape(t, (1,) * (4 - t.ndim) + t.shape)
    return t


def _check_shape_and_dtype(t, shape, dtype, name):
    if t is None:
        return
    if t.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {t.ndim}")
    if dtype is not None and t.dtype != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {t.dtype}")
    for want, got in zip(shape, t.shape):
        if want != -1 and got != want:
            raise ValueError(
                f"{name} shape should be {tuple(shape)}: but got {t.shape}"
            )


def dot_product_attention(
    query,
    key,
    value,
    bias=None,
    mask=None,
    *,
    scale=None,
    is_causal=False,
    query_seq_lengths=None,
    key_value_seq_lengths=None,
    local_window_size=None,
    implementation=None,
    return_residual=False,
):
    """Scaled dot-product attention `softmax(Q K^T * scale + bias) V`.

    Shapes: query (B, T, N, H), key and value (B, S, K, H) with N a multiple of K
    (grouped-query attention); the leading B may be omitted. `bias` and the boolean
    `mask` (True = attend) broadcast to (B, N, T, S). `is_causal` masks keys after
    the query position, `local_window_size` (left, right) keeps a band around it,
    and `query_seq_lengths` / `key_value_seq_lengths` mask padding per batch
    element. `scale` defaults to `1 / sqrt(H)`. With `return_residual`, also
    returns the (B, T, N) log-sum-exp of the scores.
    """
    if implementation not in (None, "xla"):
        raise NotImplementedError(
            f"dot_product_attention implementation={implementation!r} is not "
            "available in jaxlite (it runs on the CPU): use implementation=None or "
            "'xla'."
        )
    output_shape = np.shape(query)
    query_arr, key_arr, value_arr = (_ensure_4d(t) for t in (query, key, value))
    bias = None if bias is None else _ensure_4d(bias)
    mask = None if mask is None else _ensure_4d(mask)
    q_len = None if query_seq_lengths is None else jnp.asarray(query_seq_lengths)
    kv_len = (
        None if key_value_seq_lengths is None else jnp.asarray(key_value_seq_lengths)
    )
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    B, S, K, H = key_arr.shape  # noqa: N806  (the usual names)
    _check_shape_and_dtype(value_arr, [B, S, K, H], key_arr.dtype, "value")
    _check_shape_and_dtype(query_arr, [B, -1, -1, H], key_arr.dtype, "query")
    _check_shape_and_dtype(mask, [-1] * 4, np.dtype(bool), "mask")
    _check_shape_and_dtype(bias, [-1] * 4, None, "bias")
    _check_shape_and_dtype(q_len, [B], np.dtype("int32"), "query_seq_lengths")
    _check_shape_and_dtype(kv_len, [B], np.dtype("int32"), "key_value_seq_lengths")
    N = query_arr.shape[-2]  # noqa: N806
    if N % K != 0:
        raise ValueError(
            "The number of query heads must be a multiple of key/value heads, but "
            f"got {N} vs {K}"
        )
    scale = 1.0 / np.sqrt(H) if scale is None else scale
    out, lse = _attention(
        query_arr,
        key_arr,
        value_arr,
        bias,
        mask,
        is_causal,
        scale,
        q_len,
        kv_len,
        local_window_size,
    )
    if return_residual:
        return jnp.reshape(out, output_shape), jnp.reshape(lse, output_shape[:-1])
    return jnp.reshape(out, output_shape)


def _grouped(t, K, G):  # noqa: N803
    """A (b, n, t, s) bias or mask as (b, K, G, t, s) for grouped heads."""
    if t is None:
        return None
    b, n, tt, ts = t.shape
    if n == 1:
        return jnp.reshape(t, (b, 1, 1, tt, ts))
    return jnp.reshape(t, (b, K, G, tt, ts))


def _attention(query, key, value, bias, mask, is_causal, scale, q_len, kv_len, window):
    B, T, N, H = query.shape  # noqa: N806
    _, S, K, _ = key.shape  # noqa: N806
    G = N // K  # noqa: N806
    query = jnp.reshape(query, (B, T, K, G, H))
    logits_dtype = jnp.promote_types(query.dtype, np.float32)
    logits = jnp.einsum(
        "BTKGH,BSKH->BKGTS", query, key, preferred_element_type=logits_dtype
    )
    logits = logits * jnp.array(scale, dtype=logits.dtype)
    if bias is not None:
        logits = (logits + _grouped(bias, K, G)).astype(logits.dtype)
    keep = None
    if mask is not None:
        keep = _grouped(mask, K, G)
    if is_causal:
        keep = _and(keep, jnp.tril(jnp.ones((T, S), dtype=bool)))
    if window is not None:
        left, right = window
        q_pos = jnp.arange(T)[:, None]
        k_pos = jnp.arange(S)[None, :]
        keep = _and(keep, (q_pos <= k_pos + left) & (q_pos >= k_pos - right))
    if q_len is not None or kv_len is not None:
        pad = jnp.ones((B, 1, 1, T, S), dtype=bool)
        if q_len is not None:
            pad = (
                pad
                & (jnp.arange(T)[None, :, None] < q_len[:, None, None])[:, None, None]
            )
        if kv_len is not None:
            pad = (
                pad
                & (jnp.arange(S)[None, None, :] < kv_len[:, None, None])[:, None, None]
            )
        keep = _and(keep, pad)
    if keep is not None:
        logits = jnp.where(keep, logits, _large_negative(logits.dtype))
    logits = logits.astype(np.float32)
    probs = softmax(logits, axis=-1).astype(key.dtype)
    out = jnp.einsum("BKGTS,BSKH->BTKGH", probs, value)
    out = jnp.reshape(out, (B, T, N, H))
    if q_len is not None:
        valid = jnp.arange(T)[None, :] < q_len[:, None]
        out = out * valid[:, :, None, None].astype(out.dtype)
    lse = logsumexp(logits, axis=-1).astype(key.dtype)  # (B, K, G, T)
    lse = jnp.reshape(jnp.moveaxis(lse, -1, 1), (B, T, N))
    return out, lax.stop_gradient(lse)


def _and(mask, extra):
    return extra if mask is None else jnp.logical_and(mask, extra)
