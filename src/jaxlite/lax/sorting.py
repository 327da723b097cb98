"""Primitives that depend on the order of elements along one axis: sort, top_k,
argmax/argmin and the cumulative reductions (cumsum, cumprod, cummax, cummin,
cumlogsumexp).

`sort` sorts several operands together by the first `num_keys` of them, compared
lexicographically, as XLA does: that one primitive gives argsort (sort an iota along with
the keys), sort_key_val and lexsort. Floating-point keys use JAX's total order: -0.0 and
0.0 compare equal (a stable sort keeps their order), and NaNs go last. NumPy's stable sorts
follow exactly these rules, so the implementations are plain NumPy calls.
"""

from __future__ import annotations

import numpy as np

from jaxlite import dtypes
from jaxlite.backend import lowering_rules
from jaxlite.core import (
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    impl_rules,
    no_effects,
    weak_type_rules,
)
from jaxlite.lax.rules import ANY, BOOL, FLOAT, INT, NUMBER, check_dtype
from jaxlite.util import canonicalize_axis

__all__ = [
    "sort_p",
    "sort",
    "sort_key_val",
    "argmax_p",
    "argmin_p",
    "argmax",
    "argmin",
    "cumsum_p",
    "cumprod_p",
    "cummax_p",
    "cummin_p",
    "cumlogsumexp_p",
    "cumsum",
    "cumprod",
    "cummax",
    "cummin",
    "cumlogsumexp",
    "top_k_p",
    "top_k",
]


def _check_axis(name, axis, shape):
    if not 0 <= axis < len(shape):
        raise ValueError(
            f"{name}: axis {axis} is out of bounds for array of shape {shape}"
        )


# --------------------------------------------------------------------------------------
# sort


def _sort_permutation(keys, dimension):
    """Indices that sort `keys` lexicographically (first key most significant), stably."""
    perm = np.argsort(keys[-1], axis=dimension, kind="stable")
    for key in reversed(keys[:-1]):
        ordered = np.take_along_axis(key, perm, axis=dimension)
        perm = np.take_along_axis(
            perm, np.argsort(ordered, axis=dimension, kind="stable"), axis=dimension
        )
    return perm


def _sort_impl(*operands, dimension, is_stable, num_keys):
    operands = [np.asarray(x) for x in operands]
    if len(operands) == 1:
        return [np.sort(operands[0], axis=dimension, kind="stable")]
    perm = _sort_permutation(operands[:num_keys], dimension)
    return [np.take_along_axis(x, perm, axis=dimension) for x in operands]


def _sort_abstract(*operands, dimension, is_stable, num_keys):
    if not operands:
        raise TypeError("sort requires at least one operand")
    shape = operands[0].shape
    if any(x.shape != shape for x in operands[1:]):
        raise TypeError(
            "Arguments to sort must have equal shapes, got: "
            + " ".join(str(x.shape) for x in operands)
        )
    if not 1 <= num_keys <= len(operands):
        raise ValueError(
            f"num_keys={num_keys} must be between 1 and len(operand)={len(operands)}"
        )
    _check_axis("sort", dimension, shape)
    for x in operands:
        check_dtype("sort", x.dtype, ANY)
    return list(operands), no_effects


def _sort_lowering(ctx, *operands, dimension, is_stable, num_keys):
    if len(operands) == 1:
        return f"[np.sort({operands[0]}, axis={dimension}, kind='stable')]"
    fn = ctx.add_global(_sort_impl, "sort")
    args = ", ".join(operands)
    return f"{fn}({args}, dimension={dimension}, is_stable={is_stable}, num_keys={num_keys})"


sort_p = Primitive("sort", multiple_results=True)
impl_rules[sort_p] = _sort_impl
abstract_eval_rules[sort_p] = _sort_abstract
weak_type_rules[sort_p] = lambda in_weak, **_: list(in_weak)
lowering_rules[sort_p] = _sort_lowering


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sort along `dimension`. A sequence of operands is sorted together, ordered by the
    first `num_keys` of them (lexicographically); it returns a tuple."""
    if isinstance(operand, (tuple, list)):
        operands = tuple(operand)
        if not 1 <= num_keys <= len(operands):
            raise ValueError(
                f"num_keys={num_keys} must be between 1 and len(operand)={len(operands)}"
            )
        dimension = canonicalize_axis(dimension, np.ndim(operands[0]))
        return tuple(
            sort_p.bind(
                *operands,
                dimension=dimension,
                is_stable=bool(is_stable),
                num_keys=int(num_keys),
            )
        )
    if num_keys != 1:
        raise ValueError(f"num_keys={num_keys} must equal 1 for a single operand.")
    dimension = canonicalize_axis(dimension, np.ndim(operand))
    (out,) = sort_p.bind(
        operand, dimension=dimension, is_stable=bool(is_stable), num_keys=1
    )
    return out


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """Sort `keys` along `dimension` and apply the same permutation to `values`."""
    return sort((keys, values), dimension, is_stable, num_keys=1)


# --------------------------------------------------------------------------------------
# argmax and argmin: the index of the first extreme element; NaN counts as extreme.

_ARG_KINDS = BOOL + INT + FLOAT


def _defargminmax(prim, np_fn):
    name = prim.name

    def impl(x, *, axes, index_dtype):
        return [np.asarray(np_fn(x, axis=axes[0])).astype(index_dtype)[()]]

    def abstract(x, *, axes, index_dtype):
        check_dtype(name, x.dtype, _ARG_KINDS)
        if not dtypes.issubdtype(index_dtype, np.integer):
            raise TypeError(
                f"index_dtype must be an integer type, but got {np.dtype(index_dtype).name}"
            )
        if len(axes) != 1:
            raise ValueError(f"{name} takes exactly one axis, got axes={axes}")
        (axis,) = axes
        _check_axis(name, axis, x.shape)
        if x.shape[axis] == 0:
            raise ValueError(
                "argmin and argmax require non-empty reduced dimension. "
                f"operand.shape={x.shape} axis={axis}"
            )
        shape = tuple(d for i, d in enumerate(x.shape) if i != axis)
        return [ShapedArray(shape, index_dtype)], no_effects

    def lowering(ctx, x, *, axes, index_dtype):
        return f"np.{np_fn.__name__}({x}, axis={axes[0]}).astype(np.{index_dtype.name})"

    return impl, abstract, lowering


argmax_p = Primitive("argmax")
(
    impl_rules[argmax_p],
    abstract_eval_rules[argmax_p],
    lowering_rules[argmax_p],
) = _defargminmax(argmax_p, np.argmax)
weak_type_rules[argmax_p] = lambda in_weak, **_: False

argmin_p = Primitive("argmin")
(
    impl_rules[argmin_p],
    abstract_eval_rules[argmin_p],
    lowering_rules[argmin_p],
) = _defargminmax(argmin_p, np.argmin)
weak_type_rules[argmin_p] = lambda in_weak, **_: False


def _argminmax(prim, operand, axis, index_dtype):
    axis = canonicalize_axis(axis, np.ndim(operand))
    index_dtype = dtypes.canonicalize_dtype(index_dtype)
    return prim.bind(operand, axes=(axis,), index_dtype=index_dtype)


def argmax(operand, axis, index_dtype):
    """Index of the largest element along `axis` (the first one on ties; NaN wins)."""
    return _argminmax(argmax_p, operand, axis, index_dtype)


def argmin(operand, axis, index_dtype):
    """Index of the smallest element along `axis` (the first one on ties; NaN wins)."""
    return _argminmax(argmin_p, operand, axis, index_dtype)


# --------------------------------------------------------------------------------------
# Cumulative reductions: params axis, reverse


def _np_cumsum(x, axis):
    return np.cumsum(x, axis=axis, dtype=x.dtype)


def _np_cumprod(x, axis):
    return np.cumprod(x, axis=axis, dtype=x.dtype)


def _np_cummax(x, axis):
    return np.maximum.accumulate(x, axis=axis)


def _np_cummin(x, axis):
    return np.minimum.accumulate(x, axis=axis)


def _np_cumlogsumexp(x, axis):
    return np.logaddexp.accumulate(x, axis=axis)


def defcumulative(prim, np_fn, kinds):
    """Register impl, abstract eval and lowering of a cumulative reduction
    `np_fn(x, axis)` with params `axis` and `reverse`."""
    name = prim.name

    def impl(x, *, axis, reverse):
        x = np.asarray(x)
        if reverse:
            return [np.flip(np_fn(np.flip(x, axis), axis), axis)]
        return [np_fn(x, axis)]

    def abstract(x, *, axis, reverse):
        check_dtype(name, x.dtype, kinds)
        if not 0 <= axis < x.ndim:
            raise ValueError(
                f"axis {axis} is out of bounds for array of shape {x.shape}"
            )
        return [x], no_effects

    def lowering(ctx, x, *, axis, reverse):
        fn = ctx.add_global(np_fn, name)
        if reverse:
            return f"np.flip({fn}(np.flip({x}, {axis}), {axis}), {axis})"
        return f"{fn}({x}, {axis})"

    impl_rules[prim] = impl
    abstract_eval_rules[prim] = abstract
    lowering_rules[prim] = lowering


cumsum_p = Primitive("cumsum")
defcumulative(cumsum_p, _np_cumsum, NUMBER)

cumprod_p = Primitive("cumprod")
defcumulative(cumprod_p, _np_cumprod, NUMBER)

cummax_p = Primitive("cummax")
defcumulative(cummax_p, _np_cummax, INT + FLOAT)

cummin_p = Primitive("cummin")
defcumulative(cummin_p, _np_cummin, INT + FLOAT)

cumlogsumexp_p = Primitive("cumlogsumexp")
defcumulative(cumlogsumexp_p, _np_cumlogsumexp, FLOAT)


def _cumulative(prim, operand, axis, reverse):
    ndim = np.ndim(operand)
    if not -ndim <= axis < ndim:
        raise ValueError(
            f"axis {axis} is out of bounds for array of shape {np.shape(operand)}"
        )
    return prim.bind(operand, axis=int(axis) % ndim, reverse=bool(reverse))


def cumsum(operand, axis=0, reverse=False):
    """Cumulative sum along `axis` (from the end when `reverse`)."""
    return _cumulative(cumsum_p, operand, axis, reverse)


def cumprod(operand, axis=0, reverse=False):
    """Cumulative product along `axis` (from the end when `reverse`)."""
    return _cumulative(cumprod_p, operand, axis, reverse)


def cummax(operand, axis=0, reverse=False):
    """Cumulative maximum along `axis` (NaN propagates)."""
    return _cumulative(cummax_p, operand, axis, reverse)


def cummin(operand, axis=0, reverse=False):
    """Cumulative minimum along `axis` (NaN propagates)."""
    return _cumulative(cummin_p, operand, axis, reverse)


def cumlogsumexp(operand, axis=0, reverse=False):
    """Cumulative `log(sum(exp(x)))` along `axis`, computed without overflow."""
    return _cumulative(cumlogsumexp_p, operand, axis, reverse)


# --------------------------------------------------------------------------------------
# top_k: the k largest entries along an axis, in descending order, with their indices


def _top_k_impl(x, *, axis, k):
    x = np.asarray(x)
    n = x.shape[axis]
    # A stable ascending sort of the reversed array, read backwards, is a descending
    # sort whose ties keep the lowest index first; NaNs (sorted last) come out first.
    order = np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)
    index = np.arange(k)
    indices = (n - 1) - np.take(order, index, axis=axis)
    values = np.take_along_axis(x, indices, axis=axis)
    return [values, indices.astype(np.int32)]


def _top_k_abstract(x, *, axis, k):
    check_dtype("top_k", x.dtype, ANY)
    _check_axis("top_k", axis, x.shape)
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    if k > x.shape[axis]:
        raise ValueError(
            "k argument to top_k must be no larger than size along axis; got "
            f"k={k} with shape={list(x.shape)} and axis={axis}"
        )
    shape = list(x.shape)
    shape[axis] = k
    return [
        ShapedArray(shape, x.dtype, x.weak_type),
        ShapedArray(shape, np.int32),
    ], no_effects


top_k_p = Primitive("top_k", multiple_results=True)
impl_rules[top_k_p] = _top_k_impl
abstract_eval_rules[top_k_p] = _top_k_abstract
weak_type_rules[top_k_p] = lambda in_weak, **_: [in_weak[0], False]


def top_k(operand, k, *, axis=-1):
    """The `k` largest entries along `axis` in descending order, and their indices
    (`int32`); ties keep the lower index first."""
    axis = canonicalize_axis(axis, np.ndim(operand))
    try:
        k = int(k.__index__())
    except AttributeError:
        raise TypeError(f"top_k requires an integer k, got {k!r}") from None
    return top_k_p.bind(operand, axis=axis, k=k)
