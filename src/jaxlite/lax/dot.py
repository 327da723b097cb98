"""`dot_general`: the one contraction primitive behind dot, matmul, tensordot and einsum.

Its dimension numbers say which axes of each operand are contracted and which are batch
axes; the output is laid out as (batch axes, free axes of lhs, free axes of rhs). Every
such contraction is a batched matrix product once the operands are transposed to
(batch, free, contracting) and flattened to three dimensions, so the NumPy implementation
is always one `np.matmul` (BLAS for floats). When the operands are already in NumPy's
matmul layout, the generated code calls `np.matmul` directly with no transposes: this is
the hot path of every dense layer.

Mixed operand dtypes are allowed, as in JAX: the result takes the operand dtype of higher
precision (XLA's rule), or `preferred_element_type` when given.
"""

from __future__ import annotations

import enum
import functools

import numpy as np

from jaxlite import dtypes
from jaxlite.array import from_host
from jaxlite.backend import lowering_rules
from jaxlite.backend.native import native_rules
from jaxlite.core import (
    Array,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    impl_rules,
    no_effects,
)
from jaxlite.interpreters import ad, batching
from jaxlite.lax.elementwise import convert_element_type, convert_value
from jaxlite.lax.rules import ANY, check_dtype
from jaxlite.lax.structural import transpose

__all__ = [
    "Precision",
    "dot_general_p",
    "dot_general",
    "dot",
    "batch_matmul",
]


class Precision(enum.Enum):
    """Requested precision of a contraction. Recorded in jaxprs; NumPy always computes
    in the operand dtype (float32 and above), which is at least `HIGHEST` on CPU."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    def __repr__(self):
        return f"Precision.{self.name}"

    def __str__(self):
        return self.name


_PRECISION_NAMES = {
    "default": Precision.DEFAULT,
    "bfloat16": Precision.DEFAULT,
    "fastest": Precision.DEFAULT,
    "high": Precision.HIGH,
    "tensorfloat32": Precision.HIGH,
    "highest": Precision.HIGHEST,
    "float32": Precision.HIGHEST,
}


def _one_precision(p):
    if isinstance(p, Precision):
        return p
    if isinstance(p, str) and p.lower() in _PRECISION_NAMES:
        return _PRECISION_NAMES[p.lower()]
    raise ValueError(
        f"Precision argument must be one of None, a lax.Precision, a string naming one "
        f"({', '.join(sorted(_PRECISION_NAMES))}) or a pair of them; got {p!r}."
    )


def canonicalize_precision(precision):
    """None, a pair `(lhs_precision, rhs_precision)` of `Precision` values, or a
    `DotAlgorithm`/`DotAlgorithmPreset` (NumPy computes the same either way)."""
    if precision is None:
        return None
    from jaxlite.lax.platform import DotAlgorithm, DotAlgorithmPreset

    if isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
        return precision  # an algorithm is one value, kept as given (as in JAX)
    if isinstance(precision, (tuple, list)):
        if len(precision) != 2:
            raise ValueError(
                f"A precision pair must have two entries (lhs, rhs), got {precision!r}."
            )
        return (_one_precision(precision[0]), _one_precision(precision[1]))
    p = _one_precision(precision)
    return (p, p)


class _Axes(tuple):
    """A tuple of axes that prints as a list, as JAX prints dimension numbers."""

    __slots__ = ()

    def __repr__(self):
        return repr(list(self))


def _axes_tuple(axes, what):
    try:
        return _Axes(int(a) for a in axes)
    except TypeError:
        raise TypeError(
            f"dot_general {what} must be a sequence of ints, got {axes!r}"
        ) from None


_canonical_dimension_numbers: dict = {}


def canonicalize_dimension_numbers(dimension_numbers):
    """`((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))` as hashable tuples."""
    try:
        return _canonical_dimension_numbers[dimension_numbers]
    except (KeyError, TypeError):  # not seen yet, or not hashable (lists)
        pass
    out = _canonicalize_dimension_numbers(dimension_numbers)
    try:
        _canonical_dimension_numbers[dimension_numbers] = out
    except TypeError:
        pass
    return out


def _canonicalize_dimension_numbers(dimension_numbers):
    try:
        (lc, rc), (lb, rb) = dimension_numbers
    except (TypeError, ValueError):
        raise TypeError(
            "dot_general dimension_numbers must be a pair ((lhs_contracting, "
            "rhs_contracting), (lhs_batch, rhs_batch)) of pairs of int sequences, got "
            f"{dimension_numbers!r}"
        ) from None
    return (
        (_axes_tuple(lc, "lhs_contracting"), _axes_tuple(rc, "rhs_contracting")),
        (_axes_tuple(lb, "lhs_batch"), _axes_tuple(rb, "rhs_batch")),
    )


# --------------------------------------------------------------------------------------
# Types and shapes


@functools.cache
def _precision_key(dtype):
    """XLA's order of "higher precision" between two operand dtypes."""
    complex_ = dtypes.issubdtype(dtype, np.complexfloating)
    real = np.finfo(dtype).dtype if complex_ else dtype
    floating = dtypes.issubdtype(real, np.floating)
    info = dtypes.finfo(real) if floating else None
    return (
        complex_,
        info.maxexp if floating else -1,
        info.nmant if floating else -1,
        1 if real == np.bool_ else dtypes.itemsize_bits(real),
        not np.issubdtype(real, np.unsignedinteger),
    )


def _is_exact(dtype):
    return not dtypes.issubdtype(dtype, np.inexact)


def _bits(dtype):
    return 1 if dtype == np.bool_ else dtypes.itemsize_bits(dtype)


@functools.cache
def _dot_general_dtype(lhs_dtype, rhs_dtype, preferred_element_type):
    lk, rk = _precision_key(lhs_dtype), _precision_key(rhs_dtype)
    if lk > rk:
        dtype = lhs_dtype
    elif rk > lk:
        dtype = rhs_dtype
    elif lhs_dtype != rhs_dtype:
        raise TypeError(
            "dot_general requires operands of the same precision, got "
            f"{lhs_dtype.name} and {rhs_dtype.name}."
        )
    else:
        dtype = lhs_dtype
    if preferred_element_type is None:
        return dtype
    pref = np.dtype(preferred_element_type)
    if _is_exact(dtype) and _is_exact(pref) and _bits(pref) < _bits(dtype):
        raise TypeError(
            "`preferred_element_type` must not be narrower than the original type, got "
            f"preferred_element_type of {pref.name} for result type of {dtype.name}."
        )
    return pref


def _check_axes(side, rank, batch, contract):
    if any(not 0 <= d < rank for d in (*batch, *contract)):
        raise TypeError(
            f"dot_general requires {side} dimension numbers to be nonnegative and less "
            f"than the number of axes of the {side} value, got {side}_batch of "
            f"{tuple(batch)} and {side}_contracting of {tuple(contract)} for {side} of "
            f"rank {rank}"
        )
    if len(set(batch)) != len(batch) or len(set(contract)) != len(contract):
        raise TypeError(
            f"dot_general requires {side} batch and contracting dimensions to have no "
            f"repeated entries, got {side}_batch {tuple(batch)} and {side}_contracting "
            f"{tuple(contract)}."
        )
    if set(batch) & set(contract):
        raise TypeError(
            f"dot_general requires {side} batch dimensions to be disjoint from "
            f"contracting dimensions, got {side}_batch {tuple(batch)} and "
            f"{side}_contracting {tuple(contract)}."
        )


def _dot_general_shape(lhs_shape, rhs_shape, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    _check_axes("lhs", len(lhs_shape), lb, lc)
    if len(lb) != len(rb):
        raise TypeError(
            "dot_general requires equal numbers of lhs_batch and rhs_batch dimensions, "
            f"got lhs_batch {tuple(lb)} and rhs_batch {tuple(rb)}."
        )
    _check_axes("rhs", len(rhs_shape), rb, rc)
    lhs_batch = tuple(lhs_shape[d] for d in lb)
    rhs_batch = tuple(rhs_shape[d] for d in rb)
    if lhs_batch != rhs_batch:
        raise TypeError(
            "dot_general requires lhs batch dimensions and rhs batch dimensions to have "
            f"the same shape, got {lhs_batch} and {rhs_batch}."
        )
    lhs_contract = tuple(lhs_shape[d] for d in lc)
    rhs_contract = tuple(rhs_shape[d] for d in rc)
    if lhs_contract != rhs_contract:
        raise TypeError(
            "dot_general requires contracting dimensions to have the same shape, got "
            f"{lhs_contract} and {rhs_contract}."
        )
    lhs_free = tuple(s for i, s in enumerate(lhs_shape) if i not in (*lb, *lc))
    rhs_free = tuple(s for i, s in enumerate(rhs_shape) if i not in (*rb, *rc))
    return lhs_batch + lhs_free + rhs_free


# --------------------------------------------------------------------------------------
# NumPy evaluation


@functools.cache
def _matmul_ranks(dimension_numbers, max_rank=8):
    """The (lhs rank, rhs rank) pairs for which `np.matmul(lhs, rhs)` computes exactly
    this dot_general (NumPy's matmul layout: contract the last lhs axis with the
    first rhs axis of a matrix or vector, or batched matrices with leading batch axes)."""
    (lc, rc), (lb, rb) = dimension_numbers
    ok = set()
    for nl in range(1, max_rank + 1):
        for nr in range(1, max_rank + 1):
            if _is_matmul_layout(nl, nr, lc, rc, lb, rb):
                ok.add((nl, nr))
    return frozenset(ok)


def _is_matmul_layout(nl, nr, lc, rc, lb, rb):
    nb = len(lb)
    if len(lc) != 1 or len(rc) != 1:
        return False
    if nb:
        leading = tuple(range(nb))
        return (
            tuple(lb) == leading == tuple(rb)
            and nl == nr == nb + 2
            and lc[0] == nb + 1
            and rc[0] == nb
        )
    if lc[0] != nl - 1:
        return False
    if nr <= 2:
        return rc[0] == 0
    return nl == 1 and rc[0] == nr - 2


@functools.lru_cache(maxsize=512)
def _general_plan(lhs_shape, rhs_shape, dimension_numbers):
    """Transposes and shapes that turn the contraction into one (B, M, K) @ (B, K, N)
    product, or (M, K) @ (K, N) without batch axes."""
    (lc, rc), (lb, rb) = dimension_numbers
    lf = tuple(i for i in range(len(lhs_shape)) if i not in (*lb, *lc))
    rf = tuple(i for i in range(len(rhs_shape)) if i not in (*rb, *rc))

    def size(shape, axes):
        return int(np.prod([shape[a] for a in axes], dtype=np.int64))

    b, k = size(lhs_shape, lb), size(lhs_shape, lc)
    m, n = size(lhs_shape, lf), size(rhs_shape, rf)
    out_shape = _dot_general_shape(lhs_shape, rhs_shape, dimension_numbers)
    # Without batch axes a 2-D product suffices (a transposed view stays BLAS-able).
    lhs_shape3, rhs_shape3 = ((b, m, k), (b, k, n)) if lb else ((m, k), (k, n))
    return (
        tuple(lb) + lf + tuple(lc),
        lhs_shape3,
        tuple(rb) + tuple(rc) + rf,
        rhs_shape3,
        out_shape,
    )


# Dtypes NumPy's matmul computes in the same dtype (bfloat16 would come back float32).
_MATMUL_DTYPES = frozenset(
    np.dtype(t)
    for t in (
        np.bool_,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
        np.float16,
        np.float32,
        np.float64,
        np.complex64,
        np.complex128,
    )
)


def _kind_rank(dtype):
    if dtype == np.bool_:
        return 0
    if np.issubdtype(dtype, np.integer):
        return 1
    if dtypes.issubdtype(dtype, np.floating):
        return 2
    return 3


@functools.cache
def _compute_dtype(in_dtype, out_dtype):
    """The dtype NumPy computes in: the output dtype, unless it would lose the inputs'
    kind (float inputs, integer output) or precision (float32 inputs, float16 output:
    XLA computes in float32 and rounds once), and never a dtype NumPy's matmul lacks."""
    out_rank, in_rank = _kind_rank(out_dtype), _kind_rank(in_dtype)
    wider = out_rank > in_rank or (
        out_rank == in_rank and out_dtype.itemsize >= in_dtype.itemsize
    )
    dtype = out_dtype if wider else in_dtype
    if dtype not in _MATMUL_DTYPES:
        if dtypes.is_int(dtype):  # int4 and the like: wide, then wrapped as XLA
            return np.dtype(np.int64)
        return np.dtype(np.float32)
    return dtype


def dot_general_value(lhs, rhs, dimension_numbers, preferred_element_type=None):
    """Evaluate dot_general on NumPy values."""
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    ldt, rdt = lhs.dtype, rhs.dtype
    out_dtype = _dot_general_dtype(ldt, rdt, preferred_element_type)
    same_width = ldt != out_dtype and ldt.itemsize == out_dtype.itemsize
    if ldt != rdt or (same_width and _kind_rank(ldt) == _kind_rank(out_dtype)):
        # Mixed operands (or float16 operands of a bfloat16 product) are first
        # converted to the output dtype, as XLA on CPU.
        lhs, rhs = convert_value(lhs, out_dtype), convert_value(rhs, out_dtype)
        ldt = rdt = out_dtype
    compute = _compute_dtype(_dot_general_dtype(ldt, rdt, None), out_dtype)
    if ldt != compute:
        lhs = lhs.astype(compute)
    if rdt != compute:
        rhs = rhs.astype(compute)
    (lc, rc), (lb, _) = dimension_numbers
    if (lhs.ndim, rhs.ndim) in _matmul_ranks(dimension_numbers):
        out = np.matmul(lhs, rhs)
    elif lhs.ndim == rhs.ndim == 2 and len(lc) == 1 and not lb:
        # A 2-D product with transposed operands: BLAS reads transposed views directly.
        out = np.matmul(lhs if lc[0] == 1 else lhs.T, rhs if rc[0] == 0 else rhs.T)
    else:
        lperm, lshape, rperm, rshape, out_shape = _general_plan(
            lhs.shape, rhs.shape, dimension_numbers
        )
        lhs3 = np.transpose(lhs, lperm).reshape(lshape)
        rhs3 = np.transpose(rhs, rperm).reshape(rshape)
        out = np.matmul(lhs3, rhs3).reshape(out_shape)
    if compute != out_dtype:
        return convert_value(out, out_dtype)
    return out


# --------------------------------------------------------------------------------------
# dot_general_p


def _dot_general_impl(
    lhs, rhs, *, dimension_numbers, precision=None, preferred_element_type=None
):
    return [dot_general_value(lhs, rhs, dimension_numbers, preferred_element_type)]


def _dot_general_abstract(
    lhs, rhs, *, dimension_numbers, precision=None, preferred_element_type=None
):
    check_dtype("dot_general", lhs.dtype, ANY)
    check_dtype("dot_general", rhs.dtype, ANY)
    shape = _dot_general_shape(lhs.shape, rhs.shape, dimension_numbers)
    dtype = _dot_general_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    weak = lhs.weak_type and rhs.weak_type
    return [ShapedArray(shape, dtype, weak)], no_effects


def _dot_general_lowering(
    ctx, lhs, rhs, *, dimension_numbers, precision=None, preferred_element_type=None
):
    """`np.matmul` on the operands or their transposed views where the avals allow
    (every dense layer and its gradients), else a call of `dot_general_value`."""
    lhs_aval, rhs_aval = ctx.avals_in()
    (lc, rc), (lb, _) = dimension_numbers
    dtype = lhs_aval.dtype
    out_dtype = _dot_general_dtype(dtype, rhs_aval.dtype, preferred_element_type)
    if dtype == rhs_aval.dtype == out_dtype and dtype in _MATMUL_DTYPES:
        ranks = (lhs_aval.ndim, rhs_aval.ndim)
        if ranks in _matmul_ranks(dimension_numbers):
            ctx.fresh_output = True
            return f"np.matmul({lhs}, {rhs})"
        if ranks == (2, 2) and len(lc) == 1 and not lb:
            lhs_t = lhs if lc[0] == 1 else f"{lhs}.T"
            rhs_t = rhs if rc[0] == 0 else f"{rhs}.T"
            ctx.fresh_output = True
            return f"np.matmul({lhs_t}, {rhs_t})"
    general = ctx.add_global(
        functools.partial(
            dot_general_value,
            dimension_numbers=dimension_numbers,
            preferred_element_type=preferred_element_type,
        ),
        "dot_general",
    )
    return f"{general}({lhs}, {rhs})"


def _free_axes(ndim, contract, batch):
    return [i for i in range(ndim) if i not in contract and i not in batch]


def _operand_cotangent(ct, y, x_aval, x_dims, y_dims, ct_y_axes, precision, pref):
    """The cotangent of operand `x` of a dot_general with the other operand `y`:
    contract `ct` with `y` over y's free axes and the batch axes, then restore x's axis
    order. `ct_y_axes` are the positions of y's free axes in `ct`; the contraction keeps
    the forward `preferred_element_type` `pref` (as JAX)."""
    if type(ct) is ad.Zero:
        return None
    (x_contract, x_batch), (y_contract, y_batch) = x_dims, y_dims
    y_free = _free_axes(np.ndim(y), y_contract, y_batch)
    x_free = _free_axes(len(x_aval.shape), x_contract, x_batch)
    dims = ((list(ct_y_axes), y_free), (list(range(len(x_batch))), list(y_batch)))
    out = dot_general(ct, y, dims, precision, pref)
    # `out` has axes (batch, x's free axes, y's contracting axes in increasing order).
    by_y = [x_contract[j] for j in np.argsort(y_contract, kind="stable")]
    out = transpose(out, tuple(np.argsort([*x_batch, *x_free, *by_y])))
    if out.dtype != x_aval.dtype:
        out = convert_element_type(out, x_aval.dtype)
    return out


def _dot_general_transpose_lhs(
    ct, x, y, *, dimension_numbers, precision=None, preferred_element_type=None
):
    (lc, rc), (lb, rb) = dimension_numbers
    n_lhs_free = len(x.aval.shape) - len(lc) - len(lb)
    n_rhs_free = np.ndim(y) - len(rc) - len(rb)
    start = len(lb) + n_lhs_free
    ct_y_axes = range(start, start + n_rhs_free)
    return _operand_cotangent(
        ct, y, x.aval, (lc, lb), (rc, rb), ct_y_axes, precision, preferred_element_type
    )


def _dot_general_transpose_rhs(
    ct, x, y, *, dimension_numbers, precision=None, preferred_element_type=None
):
    (lc, rc), (lb, rb) = dimension_numbers
    n_lhs_free = np.ndim(x) - len(lc) - len(lb)
    ct_x_axes = range(len(lb), len(lb) + n_lhs_free)
    return _operand_cotangent(
        ct, x, y.aval, (rc, rb), (lc, lb), ct_x_axes, precision, preferred_element_type
    )


def _dot_general_batch(axis_size, vals, dims, *, dimension_numbers, **params):
    (lhs, rhs), (ld, rd) = vals, dims
    (lc, rc), (lb, rb) = dimension_numbers

    def shift(axes, bdim):
        return [a + (a >= bdim) for a in axes]

    if ld is not batching.not_mapped and rd is not batching.not_mapped:
        # Both batched: the batch axes become the first pair of batch dimensions.
        new = (
            (shift(lc, ld), shift(rc, rd)),
            ([ld, *shift(lb, ld)], [rd, *shift(rb, rd)]),
        )
        out_dim = 0
    elif ld is not batching.not_mapped:
        # Only lhs batched: its batch axis is one more free axis of lhs.
        lc, lb = shift(lc, ld), shift(lb, ld)
        new = ((lc, rc), (lb, rb))
        out_dim = len(lb) + _free_axes(np.ndim(lhs), lc, lb).index(ld)
    else:
        rc, rb = shift(rc, rd), shift(rb, rd)
        new = ((lc, rc), (lb, rb))
        n_lhs_free = np.ndim(lhs) - len(lc) - len(lb)
        out_dim = len(lb) + n_lhs_free + _free_axes(np.ndim(rhs), rc, rb).index(rd)
    dimension_numbers = canonicalize_dimension_numbers(new)
    out = dot_general_p.bind(lhs, rhs, dimension_numbers=dimension_numbers, **params)
    return [out], [out_dim]


dot_general_p = Primitive("dot_general")
ad.defbilinear(dot_general_p, _dot_general_transpose_lhs, _dot_general_transpose_rhs)
batching.batch_rules[dot_general_p] = _dot_general_batch
impl_rules[dot_general_p] = _dot_general_impl
abstract_eval_rules[dot_general_p] = _dot_general_abstract
lowering_rules[dot_general_p] = _dot_general_lowering
native_rules[dot_general_p] = "dot_general"


# --------------------------------------------------------------------------------------
# Public functions


def _operand(x):
    """Python scalars become weakly typed Arrays of their default dtype."""
    if type(x) in (int, float, complex, bool):
        dtype, weak = dtypes.dtype_and_weak(x)
        return Array(np.asarray(x, dtype)[()], weak)
    if isinstance(x, (np.ndarray, np.generic)):
        return from_host(x)
    return x


def dot_general(
    lhs,
    rhs,
    dimension_numbers,
    precision=None,
    preferred_element_type=None,
    *,
    out_sharding=None,
):
    """General contraction: `dimension_numbers = ((lhs_contracting, rhs_contracting),
    (lhs_batch, rhs_batch))`. The output axes are (batch, lhs free, rhs free)."""
    params = {"dimension_numbers": canonicalize_dimension_numbers(dimension_numbers)}
    precision = canonicalize_precision(precision)
    if precision is not None:
        params["precision"] = precision
    if preferred_element_type is not None:
        pref = preferred_element_type
        if not (isinstance(pref, np.dtype) and dtypes.canonicalize_dtype(pref) == pref):
            pref = dtypes.canonicalize_user_dtype(pref, "dot")
        params["preferred_element_type"] = pref
    return dot_general_p.bind(_operand(lhs), _operand(rhs), **params)


def dot(
    lhs,
    rhs,
    *,
    dimension_numbers=None,
    precision=None,
    preferred_element_type=None,
    out_sharding=None,
):
    """Vector/matrix products (`lhs` and `rhs` of rank 1 or 2), or `dot_general` when
    `dimension_numbers` is given."""
    if dimension_numbers is None:
        ls, rs = np.shape(lhs), np.shape(rhs)
        if not (1 <= len(ls) <= 2 and 1 <= len(rs) <= 2 and ls[-1] == rs[0]):
            raise ValueError(
                "jax.lax.dot: dimension_numbers must be specified when not performing "
                "simple un-batched matrix-matrix, matrix-vector, or vector-vector "
                f"products; got lhs_shape={ls} rhs_shape={rs}"
            )
        dimension_numbers = (([len(ls) - 1], [0]), ([], []))
    return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type)


def batch_matmul(lhs, rhs, precision=None):
    """Batched matrix product of `(..., m, k)` and `(..., k, n)` with equal batch axes."""
    ls, rs = np.shape(lhs), np.shape(rhs)
    if len(ls) < 2 or len(ls) != len(rs):
        raise ValueError(
            "batch_matmul requires arguments to have the same number of dimensions, at "
            f"least 2, got shapes {ls} and {rs}"
        )
    if ls[:-2] != rs[:-2]:
        raise ValueError(
            "batch_matmul requires lhs and rhs to have the same batch dimensions, got "
            f"shapes {ls} and {rs}"
        )
    batch = list(range(len(ls) - 2))
    dimension_numbers = (([len(ls) - 1], [len(rs) - 2]), (batch, batch))
    return dot_general(lhs, rhs, dimension_numbers, precision)
