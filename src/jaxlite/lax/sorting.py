"""Primitives that depend on the order of elements along one axis: sort, top_k,
argmax/argmin and the cumulative reductions (cumsum, cumprod, cummax, cummin,
cumlogsumexp).

`sort` sorts several operands together by the first `num_keys` of them, compared
lexicographically, as XLA does: that one primitive gives argsort (sort an iota along with
the keys), sort_key_val and lexsort. Floating-point keys use JAX's total order: -0.0 and
0.0 compare equal (a stable sort keeps their order), and NaNs go last. NumPy's stable sorts
follow exactly these rules, so the implementations are plain NumPy calls.

Derivatives need no gather: a tangent is sorted as one more payload by the same keys, and
a cotangent goes back by sorting it by the permutation. cumsum is linear; the JVPs of
cummax, cummin and cumlogsumexp weigh every (output, input) pair along the axis, which
is exact but takes O(n^2) memory there.
"""

from __future__ import annotations

import numpy as np

from jaxlite import dtypes
from jaxlite.backend import lowering_rules
from jaxlite.backend.native import native_rules
from jaxlite.core import (
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    get_aval,
    impl_rules,
    no_effects,
)
from jaxlite.interpreters import ad, batching
from jaxlite.lax import elementwise as ew
from jaxlite.lax.dot import dot_general
from jaxlite.lax.reductions import reduce_sum
from jaxlite.lax.rules import ANY, BOOL, FLOAT, INT, NUMBER, check_dtype
from jaxlite.lax.structural import broadcast_in_dim, broadcasted_iota, transpose
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


def _comparable(key):
    """`key` as NumPy sorts it right: bfloat16 and the float8 types (ml_dtypes) compare
    NaN as unordered, which leaves NumPy's sort unsorted; float32 holds them exactly."""
    kind = key.dtype.kind
    if kind in "biufc":
        return key
    if kind == "V" or dtypes.issubdtype(key.dtype, np.floating):
        return key.astype(np.float32)
    return key


def _sort_permutation(keys, dimension):
    """Indices that sort `keys` lexicographically (first key most significant), stably."""
    keys = [_comparable(k) for k in keys]
    perm = np.argsort(keys[-1], axis=dimension, kind="stable")
    for key in reversed(keys[:-1]):
        ordered = np.take_along_axis(key, perm, axis=dimension)
        perm = np.take_along_axis(
            perm, np.argsort(ordered, axis=dimension, kind="stable"), axis=dimension
        )
    return perm


def _sort_impl(*operands, dimension, is_stable, num_keys):
    operands = [np.asarray(x) for x in operands]
    if len(operands) == 1 and _comparable(operands[0]) is operands[0]:
        return [np.sort(operands[0], axis=dimension, kind="stable")]
    perm = _sort_permutation(operands[:num_keys], dimension)
    if perm.ndim == 1:
        return [x[perm] for x in operands]
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
    if len(operands) == 1 and ctx.avals_in()[0].dtype.kind != "V":
        return f"[np.sort({operands[0]}, axis={dimension}, kind='stable')]"
    fn = ctx.add_global(_sort_impl, "sort")
    args = ", ".join(operands)
    return f"{fn}({args}, dimension={dimension}, is_stable={is_stable}, num_keys={num_keys})"


def _zero_tangents(outs):
    return [ad.Zero(ad.tangent_aval(get_aval(o))) for o in outs]


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    params = dict(dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    outs = sort_p.bind(*primals, **params)
    out_tangents = _zero_tangents(outs)
    moving = [i for i, t in enumerate(tangents) if type(t) is not ad.Zero]
    if moving:
        # The tangents ride along as payloads of a sort by the same keys, so they get
        # exactly the primal permutation (keys of a tangent are primal values).
        keys = primals[:num_keys]
        sorted_tangents = sort_p.bind(*keys, *(tangents[i] for i in moving), **params)
        for i, t in zip(moving, sorted_tangents[num_keys:]):
            out_tangents[i] = t
    return outs, out_tangents


def _sort_transpose(cts, *operands, dimension, is_stable, num_keys):
    keys = operands[:num_keys]
    if any(ad.is_undefined(k) for k in keys):
        raise NotImplementedError(
            "sort is not linear in its keys: only the payload operands of a sort can be "
            "transposed (differentiate with respect to the sorted values instead)."
        )
    shape = np.shape(keys[0])
    iota = broadcasted_iota(np.int32, shape, dimension)
    params = dict(dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    # perm[j] is the position in the input of output element j; sorting (perm, ct) by
    # perm sends each cotangent back to that position.
    perm = sort_p.bind(*keys, iota, **params)[-1]
    results = [None] * len(operands)
    for i, (x, ct) in enumerate(zip(operands, cts)):
        if ad.is_undefined(x) and type(ct) is not ad.Zero:
            unsorted = sort_p.bind(
                perm, ct, dimension=dimension, is_stable=True, num_keys=1
            )
            results[i] = unsorted[1]
    return results


def _sort_batch(axis_size, vals, dims, *, dimension, is_stable, num_keys):
    operands = [batching.bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims)]
    outs = sort_p.bind(
        *operands, dimension=dimension + 1, is_stable=is_stable, num_keys=num_keys
    )
    return outs, [0] * len(outs)


sort_p = Primitive("sort", multiple_results=True)
ad.jvp_rules[sort_p] = _sort_jvp
ad.transpose_rules[sort_p] = _sort_transpose
batching.batch_rules[sort_p] = _sort_batch
impl_rules[sort_p] = _sort_impl
abstract_eval_rules[sort_p] = _sort_abstract
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


def defargminmax(prim, np_fn):
    """Register every rule of argmax or argmin (`np_fn` is np.argmax or np.argmin)."""
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

    def jvp(primals, tangents, *, axes, index_dtype):
        out = prim.bind(*primals, axes=axes, index_dtype=index_dtype)
        return [out], _zero_tangents([out])

    def batch(axis_size, vals, dims, *, axes, index_dtype):
        (x,), (bdim,) = vals, dims
        axis = axes[0] + (axes[0] >= bdim)
        out = prim.bind(x, axes=(axis,), index_dtype=index_dtype)
        return [out], [bdim if bdim < axis else bdim - 1]

    ad.jvp_rules[prim] = jvp
    batching.batch_rules[prim] = batch
    impl_rules[prim] = impl
    abstract_eval_rules[prim] = abstract
    lowering_rules[prim] = lowering


argmax_p = Primitive("argmax")
defargminmax(argmax_p, np.argmax)
native_rules[argmax_p] = "argmax"

argmin_p = Primitive("argmin")
defargminmax(argmin_p, np.argmin)
native_rules[argmin_p] = "argmin"


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


def _accumulate(ufunc, x, axis):
    """`ufunc.accumulate(x, axis)` in x's dtype. Along a leading axis of wide rows,
    row after row: the same sums in the same order, but NumPy's strided accumulate is
    several times slower there."""
    x = np.asarray(x)
    if axis == x.ndim - 1 or x.shape[axis] < 2 or x.size < 128 * x.shape[axis]:
        return ufunc.accumulate(x, axis=axis, dtype=x.dtype)
    out = np.array(np.moveaxis(x, axis, 0), copy=True)
    for i in range(1, out.shape[0]):
        ufunc(out[i - 1], out[i], out=out[i])
    return np.moveaxis(out, 0, axis)


def _np_cumsum(x, axis):
    return _accumulate(np.add, x, axis)


def _np_cumprod(x, axis):
    return _accumulate(np.multiply, x, axis)


def _np_cummax(x, axis):
    return np.maximum.accumulate(x, axis=axis)


def _np_cummin(x, axis):
    return np.minimum.accumulate(x, axis=axis)


def _np_cumlogsumexp(x, axis):
    return np.logaddexp.accumulate(x, axis=axis)


def defcumulative(prim, np_fn, kinds, jvp):
    """Register every rule of a cumulative reduction `np_fn(x, axis)` with params
    `axis` and `reverse`; `jvp(x, t, out, axis, reverse)` gives the output tangent."""
    name = prim.name

    def jvp_rule(primals, tangents, *, axis, reverse):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axis=axis, reverse=reverse)
        if type(t) is ad.Zero:
            return [out], [t]
        return [out], [jvp(x, t, out, axis, reverse)]

    def batch(axis_size, vals, dims, *, axis, reverse):
        (x,), (bdim,) = vals, dims
        out = prim.bind(x, axis=axis + (axis >= bdim), reverse=reverse)
        return [out], [bdim]

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

    ad.jvp_rules[prim] = jvp_rule
    batching.batch_rules[prim] = batch
    impl_rules[prim] = impl
    abstract_eval_rules[prim] = abstract
    lowering_rules[prim] = lowering


# Derivatives. cumsum is linear. The others are written with lax operations, so they
# can be differentiated again.


def _cumsum_jvp(x, t, out, axis, reverse):
    return cumsum_p.bind(ad.instantiate(t), axis=axis, reverse=reverse)


def _cumsum_transpose(ct, x, *, axis, reverse):
    if type(ct) is ad.Zero:
        return [None]
    return [cumsum_p.bind(ct, axis=axis, reverse=not reverse)]


def _cumprod_jvp(x, t, out, axis, reverse):
    # d out_j = sum_{i<=j} t_i prod_{k<=j, k!=i} x_k. Before the first zero that is
    # out_j * cumsum(t / x)_j; after exactly one zero only its own term survives,
    # t_z * prod_{k<=j, k!=z} x_k; after two zeros it vanishes.
    def scan(prim, v):
        return prim.bind(v, axis=axis, reverse=reverse)

    zero, one = ew.full_of(x, 0), ew.full_of(x, 1)
    is_zero = ew.eq(x, zero)
    n_zeros = scan(cumsum_p, ew.convert_element_type(is_zero, np.int32))
    first_zero = ew.bitwise_and(is_zero, ew.eq(n_zeros, 1))
    safe_x = ew.select(is_zero, one, x)
    before = ew.mul(out, scan(cumsum_p, ew.div(t, safe_x)))
    t_first_zero = scan(cumsum_p, ew.select(first_zero, t, zero))
    others = scan(cumprod_p, ew.select(first_zero, one, x))
    after_one = ew.mul(t_first_zero, others)
    return ew.select(
        ew.eq(n_zeros, 0), before, ew.select(ew.eq(n_zeros, 1), after_one, zero)
    )


def _pairwise_jvp(weights, x, t, out, axis, reverse):
    """`sum_i W[j, i] t_i` along `axis`, for weights `W = weights(x_i, out_j, seen)`
    where `seen` marks the inputs i that the scan has passed at output j. Linear in
    `t`; it takes O(n^2) memory along `axis`."""
    ndim = x.ndim
    perm = [d for d in range(ndim) if d != axis] + [axis]
    inverse = list(np.argsort(perm))
    x, t, out = (transpose(v, perm) for v in (x, t, out))
    pairs = (*x.shape, x.shape[-1])  # (..., j, i)
    rest = tuple(range(ndim - 1))
    x_i = broadcast_in_dim(x, pairs, (*rest, ndim))
    out_j = broadcast_in_dim(out, pairs, (*rest, ndim - 1))
    j = broadcasted_iota(np.int32, pairs, ndim - 1)
    i = broadcasted_iota(np.int32, pairs, ndim)
    seen = ew.ge(i, j) if reverse else ew.le(i, j)
    batch = list(rest)
    t_out = dot_general(
        weights(x_i, out_j, seen), t, (([ndim], [ndim - 1]), (batch, batch))
    )
    return transpose(t_out, inverse)


def _cumextremum_jvp(x, t, out, axis, reverse):
    # out_j is attained at the seen inputs equal to it; ties share the tangent equally,
    # as reduce_max does.
    def weights(x_i, out_j, seen):
        attains = ew.convert_element_type(
            ew.bitwise_and(seen, ew.eq(x_i, out_j)), x.dtype
        )
        count = reduce_sum(attains, (attains.ndim - 1,))
        count = broadcast_in_dim(count, attains.shape, tuple(range(attains.ndim - 1)))
        return ew.div(attains, count)

    return _pairwise_jvp(weights, x, t, out, axis, reverse)


def _cumlogsumexp_jvp(x, t, out, axis, reverse):
    # d out_j = sum_{i seen} t_i exp(x_i - out_j); every weight is at most 1.
    def weights(x_i, out_j, seen):
        # Unseen pairs get exp(-inf) = 0, so no infinite value (or NaN cotangent) arises.
        return ew.exp(ew.select(seen, ew.sub(x_i, out_j), ew.full_of(x_i, -np.inf)))

    return _pairwise_jvp(weights, x, t, out, axis, reverse)


cumsum_p = Primitive("cumsum")
defcumulative(cumsum_p, _np_cumsum, NUMBER, _cumsum_jvp)
ad.transpose_rules[cumsum_p] = _cumsum_transpose
native_rules[cumsum_p] = "cumsum"

cumprod_p = Primitive("cumprod")
defcumulative(cumprod_p, _np_cumprod, NUMBER, _cumprod_jvp)
native_rules[cumprod_p] = "cumprod"

cummax_p = Primitive("cummax")
defcumulative(cummax_p, _np_cummax, INT + FLOAT, _cumextremum_jvp)
native_rules[cummax_p] = "cummax"

cummin_p = Primitive("cummin")
defcumulative(cummin_p, _np_cummin, INT + FLOAT, _cumextremum_jvp)
native_rules[cummin_p] = "cummin"

cumlogsumexp_p = Primitive("cumlogsumexp")
defcumulative(cumlogsumexp_p, _np_cumlogsumexp, FLOAT, _cumlogsumexp_jvp)


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


def _total_order_key(x):
    """Integers that order floats as IEEE's totalOrder (unlike sort, top_k uses it):
    -NaN < -inf < ... < -0.0 < 0.0 < ... < inf < NaN."""
    if not dtypes.issubdtype(x.dtype, np.floating):
        return x
    bits = x.view(np.dtype(f"int{x.dtype.itemsize * 8}"))
    magnitude = np.iinfo(bits.dtype).max
    return np.where(bits < 0, bits ^ magnitude, bits)


def _top_k_impl(x, *, axis, k):
    x = np.asarray(x)
    n = x.shape[axis]
    # A stable ascending sort of the reversed keys, read backwards, is a descending
    # sort whose ties keep the lowest index first.
    key = _total_order_key(x)
    order = np.flip(np.argsort(np.flip(key, axis), axis=axis, kind="stable"), axis)
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


def _top_k_jvp(primals, tangents, *, axis, k):
    (x,), (t,) = primals, tangents
    values, indices = top_k_p.bind(x, axis=axis, k=k)
    if type(t) is ad.Zero:
        return [values, indices], _zero_tangents([values, indices])
    # The tangent of values[..., j] is t at indices[..., j]: a one-hot contraction
    # along `axis` (batched over the other axes).
    ndim = x.ndim
    perm = [d for d in range(ndim) if d != axis] + [axis]
    t_last, idx_last = transpose(t, perm), transpose(indices, perm)
    n = t_last.shape[-1]
    pairs = (*idx_last.shape, n)  # (..., j, i)
    rest = tuple(range(ndim - 1))
    picked = ew.eq(
        broadcast_in_dim(idx_last, pairs, (*rest, ndim - 1)),
        broadcasted_iota(np.int32, pairs, ndim),
    )
    one_hot = ew.convert_element_type(picked, get_aval(t).dtype)
    batch = list(rest)
    t_values = dot_general(one_hot, t_last, (([ndim], [ndim - 1]), (batch, batch)))
    inverse = [0] * ndim
    for j, p in enumerate(perm):
        inverse[p] = j
    t_values = transpose(t_values, inverse)
    return [values, indices], [t_values, _zero_tangents([indices])[0]]


def _top_k_batch(axis_size, vals, dims, *, axis, k):
    (x,), (bdim,) = vals, dims
    values, indices = top_k_p.bind(x, axis=axis + (axis >= bdim), k=k)
    return [values, indices], [bdim, bdim]


top_k_p = Primitive("top_k", multiple_results=True)
ad.jvp_rules[top_k_p] = _top_k_jvp
batching.batch_rules[top_k_p] = _top_k_batch
impl_rules[top_k_p] = _top_k_impl
abstract_eval_rules[top_k_p] = _top_k_abstract


def top_k(operand, k, *, axis=-1):
    """The `k` largest entries along `axis` in descending order, and their indices
    (`int32`); ties keep the lower index first. Floats follow IEEE's total order:
    NaN is largest, -NaN smallest, and 0.0 ranks above -0.0."""
    axis = canonicalize_axis(axis, np.ndim(operand))
    try:
        k = int(k.__index__())
    except AttributeError:
        raise TypeError(f"top_k requires an integer k, got {k!r}") from None
    return top_k_p.bind(operand, axis=axis, k=k)
