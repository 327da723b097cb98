"""`ragged_dot_general`: a contraction whose lhs is cut into groups of rows.

`group_sizes[g]` consecutive entries of the lhs's ragged dimension form group g (the
entries after the last group take part in no product). Three modes, as in JAX:

- the ragged dimension is a free lhs dimension and the rhs has a group dimension: each
  group of rows is multiplied by its own rhs slice (a mixture-of-experts layer);
  rows in no group give zeros;
- the ragged dimension is contracted and the rhs has no group dimension: each group
  gives its own product, stacked along a new leading output dimension (this is the
  rhs cotangent of the first mode);
- the ragged dimension is a batch dimension: an ordinary `dot_general`.

Each is a `dot_general` of a masked lhs with one extra leading group axis (mask g keeps
the rows of group g), so the NumPy implementation and the derivative rules are written
with that one decomposition: the operation is bilinear in (lhs, rhs) and the
transposes are the vector-Jacobian products of the decomposition. A batch of operands
runs one example at a time.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from jaxlite import dtypes
from jaxlite.core import (
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    eval_trace,
    impl_rules,
    no_effects,
    set_current_trace,
)
from jaxlite.interpreters import ad, batching
from jaxlite.lax import elementwise as ew
from jaxlite.lax import structural as st
from jaxlite.lax.dot import (
    _dot_general_dtype,
    _dot_general_shape,
    _operand,
    dot_general,
)
from jaxlite.lax.reductions import reduce_sum
from jaxlite.lax.sorting import cumsum

__all__ = [
    "RaggedDotDimensionNumbers",
    "ragged_dot",
    "ragged_dot_general",
    "ragged_dot_general_p",
]


class RaggedDotDimensionNumbers(NamedTuple):
    """Dot dimension numbers plus the lhs ragged and rhs group dimensions."""

    dot_dimension_numbers: tuple
    lhs_ragged_dimensions: tuple
    rhs_group_dimensions: tuple

    def __repr__(self):
        (lc, rc), (lb, rb) = self.dot_dimension_numbers
        dn = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
        return (
            f"RaggedDotDimensionNumbers(dot_dimension_numbers={dn}, "
            f"lhs_ragged_dimensions={tuple(self.lhs_ragged_dimensions)}, "
            f"rhs_group_dimensions={tuple(self.rhs_group_dimensions)})"
        )


def _canonical(rdn):
    (lc, rc), (lb, rb) = rdn.dot_dimension_numbers
    t = lambda axes: tuple(int(a) for a in axes)  # noqa: E731
    return RaggedDotDimensionNumbers(
        ((t(lc), t(rc)), (t(lb), t(rb))),
        t(rdn.lhs_ragged_dimensions),
        t(rdn.rhs_group_dimensions),
    )


def _mode(rdn):
    (lc, _), (lb, _) = rdn.dot_dimension_numbers
    (r,) = rdn.lhs_ragged_dimensions
    if r in lb:
        return "batch"
    if r in lc:
        return "contracting"
    return "noncontracting"


def _check(lhs_shape, rhs_shape, gs_shape, rdn):
    if len(rdn.lhs_ragged_dimensions) != 1:
        raise TypeError(
            "ragged_dot_general expects exactly one lhs ragged dimension, got "
            f"{rdn.lhs_ragged_dimensions}."
        )
    (r,) = rdn.lhs_ragged_dimensions
    if not 0 <= r < len(lhs_shape):
        raise TypeError(
            f"ragged_dot_general: lhs ragged dimension {r} out of range for lhs of "
            f"shape {lhs_shape}."
        )
    mode = _mode(rdn)
    groups = rdn.rhs_group_dimensions
    if mode == "noncontracting" and len(groups) != 1:
        raise TypeError(
            "ragged_dot_general: a non-contracting lhs ragged dimension needs exactly "
            f"one rhs group dimension, got {groups}."
        )
    if mode != "noncontracting" and groups:
        raise TypeError(
            "ragged_dot_general: a contracting or batch lhs ragged dimension needs no "
            f"rhs group dimension, got {groups}."
        )
    if len(gs_shape) != 1:
        raise TypeError(
            f"ragged_dot_general: group_sizes must be rank 1, got shape {gs_shape}."
        )
    if groups and rhs_shape[groups[0]] != gs_shape[0]:
        raise TypeError(
            f"expected rhs group dimension size to be {gs_shape[0]}, got "
            f"{rhs_shape[groups[0]]}."
        )


def _masks(group_sizes, m, dtype):
    """(G, m) masks: row i of the ragged dimension belongs to group g."""
    ends = cumsum(group_sizes, 0)
    starts = ew.sub(ends, group_sizes)
    g = np.shape(group_sizes)[0]
    rows = st.broadcasted_iota(np.int32, (g, m), 1)
    gs_dtype = dtypes.dtype_and_weak(group_sizes)[0]
    rows = ew.convert_element_type(rows, gs_dtype)
    s = st.broadcast_in_dim(starts, (g, m), (0,))
    e = st.broadcast_in_dim(ends, (g, m), (0,))
    inside = ew.bitwise_and(ew.ge(rows, s), ew.lt(rows, e))
    return ew.convert_element_type(inside, dtype)


def _decomposed(lhs, rhs, group_sizes, *, rdn, precision, preferred_element_type):
    (lc, rc), (lb, rb) = rdn.dot_dimension_numbers
    mode = _mode(rdn)
    if mode == "batch":
        return dot_general(lhs, rhs, ((lc, rc), (lb, rb)), precision,
                                   preferred_element_type)  # fmt: skip
    (r,) = rdn.lhs_ragged_dimensions
    lhs_shape = np.shape(lhs)
    ldtype = dtypes.dtype_and_weak(lhs)[0]
    g = np.shape(group_sizes)[0]
    mask = _masks(group_sizes, lhs_shape[r], ldtype)
    dims = (0, r + 1)
    lhs_g = ew.mul(
        st.broadcast_in_dim(lhs, (g, *lhs_shape), tuple(range(1, len(lhs_shape) + 1))),
        st.broadcast_in_dim(mask, (g, *lhs_shape), dims),
    )
    lc1, lb1 = tuple(a + 1 for a in lc), tuple(a + 1 for a in lb)
    if mode == "noncontracting":
        (gd,) = rdn.rhs_group_dimensions
        out = dot_general(
            lhs_g, rhs, ((lc1, rc), ((0, *lb1), (gd, *rb))), precision,
            preferred_element_type,
        )  # fmt: skip
        return reduce_sum(out, (0,))
    out = dot_general(
        lhs_g, rhs, ((lc1, rc), (lb1, rb)), precision, preferred_element_type
    )
    # (batch, G, lhs free, rhs free) -> (G, batch, ...)
    nb = len(lb)
    perm = (nb, *range(nb), *range(nb + 1, len(np.shape(out))))
    return st.transpose(out, perm)


def _ragged_impl(lhs, rhs, group_sizes, **params):
    with set_current_trace(eval_trace):
        out = _decomposed(lhs, rhs, group_sizes, **_decomp_params(params))
    return [np.asarray(out)]


def _decomp_params(params):
    return dict(
        rdn=params["ragged_dot_dimension_numbers"],
        precision=params["precision"],
        preferred_element_type=params["preferred_element_type"],
    )


def _ragged_abstract(lhs, rhs, group_sizes, **params):
    rdn = params["ragged_dot_dimension_numbers"]
    _check(lhs.shape, rhs.shape, group_sizes.shape, rdn)
    if not dtypes.issubdtype(group_sizes.dtype, np.integer):
        raise TypeError(
            "ragged_dot_general: group_sizes must be an integer array, got "
            f"{group_sizes.dtype.name}."
        )
    (lc, rc), (lb, rb) = rdn.dot_dimension_numbers
    rhs_shape = rhs.shape
    if rdn.rhs_group_dimensions:
        (gd,) = rdn.rhs_group_dimensions
        rhs_shape = rhs_shape[:gd] + rhs_shape[gd + 1 :]
        fix = lambda axes: tuple(a - (a > gd) for a in axes)  # noqa: E731
        rc, rb = fix(rc), fix(rb)
    shape = _dot_general_shape(lhs.shape, rhs_shape, ((lc, rc), (lb, rb)))
    if _mode(rdn) == "contracting":
        shape = (group_sizes.shape[0], *shape)
    dtype = _dot_general_dtype(lhs.dtype, rhs.dtype, params["preferred_element_type"])
    return [ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type)], no_effects


def _vjp_of(which, ct, lhs, rhs, group_sizes, params):
    """Cotangent of operand `which` (0: lhs, 1: rhs) by differentiating the masked
    decomposition (linear in that operand)."""
    from jaxlite.api_autodiff import vjp

    kw = _decomp_params(params)
    if type(ct) is ad.Zero:
        return None
    if which == 0:
        aval = lhs.aval
        _, f_vjp = vjp(lambda x: _decomposed(x, rhs, group_sizes, **kw), _zeros(aval))
    else:
        aval = rhs.aval
        _, f_vjp = vjp(lambda y: _decomposed(lhs, y, group_sizes, **kw), _zeros(aval))
    (out,) = f_vjp(ct)
    return out


def _zeros(aval):
    from jaxlite.lax.constructors import full

    return full(aval.shape, 0, aval.dtype)


def _ragged_jvp(primals, tangents, **params):
    lhs, rhs, gs = primals
    lt, rt, _ = tangents
    out = ragged_dot_general_p.bind(lhs, rhs, gs, **params)
    terms = []
    if type(lt) is not ad.Zero:
        terms.append(ragged_dot_general_p.bind(lt, rhs, gs, **params))
    if type(rt) is not ad.Zero:
        terms.append(ragged_dot_general_p.bind(lhs, rt, gs, **params))
    if not terms:
        return [out], [ad.Zero(ad.tangent_aval(out.aval))]
    t = terms[0] if len(terms) == 1 else ew.add(terms[0], terms[1])
    return [out], [t]


def _ragged_transpose(ct, lhs, rhs, group_sizes, **params):
    if ad.is_undefined(lhs):
        return [_vjp_of(0, ct, lhs, rhs, group_sizes, params), None, None]
    return [None, _vjp_of(1, ct, lhs, rhs, group_sizes, params), None]


def _ragged_batch(axis_size, vals, dims, **params):
    """One example at a time (each example's groups cut its own rows)."""
    from jaxlite.lax.indexing import index_in_dim

    outs = []
    for i in range(axis_size):
        args = [
            v if d is batching.not_mapped else index_in_dim(v, i, d, keepdims=False)
            for v, d in zip(vals, dims)
        ]
        outs.append(ragged_dot_general_p.bind(*args, **params))
    if not outs:
        raise NotImplementedError(
            "ragged_dot_general under a vmap of size 0 is not supported."
        )
    return [st.stack(outs, 0)], [0]


ragged_dot_general_p = Primitive("ragged_dot_general")
impl_rules[ragged_dot_general_p] = _ragged_impl
abstract_eval_rules[ragged_dot_general_p] = _ragged_abstract
ad.jvp_rules[ragged_dot_general_p] = _ragged_jvp
ad.transpose_rules[ragged_dot_general_p] = _ragged_transpose
batching.batch_rules[ragged_dot_general_p] = _ragged_batch


def ragged_dot_general(
    lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
    preferred_element_type=None, group_offset=None, out_sharding=None,
):  # fmt: skip
    """A dot_general whose lhs ragged dimension is cut into groups of
    `group_sizes` consecutive entries (see the module docstring for the modes)."""
    if group_offset is not None:
        raise NotImplementedError(
            "ragged_dot_general: group_offset is not supported yet (JAX supports it "
            "only on TPU); pass group_offset=None."
        )
    rdn = _canonical(ragged_dot_dimension_numbers)
    if preferred_element_type is not None:
        preferred_element_type = dtypes.canonicalize_dtype(preferred_element_type)
    return ragged_dot_general_p.bind(
        _operand(lhs),
        _operand(rhs),
        _operand(group_sizes),
        group_offset=None,
        out_sharding=out_sharding,
        precision=precision,
        preferred_element_type=preferred_element_type,
        ragged_dot_dimension_numbers=rdn,
    )


_RAGGED_DOT_DIMS = RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))


def ragged_dot(
    lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
    group_offset=None, out_sharding=None,
):  # fmt: skip
    """`lhs` (m, k) in groups of rows, `rhs` (g, k, n): row block g times `rhs[g]`."""
    return ragged_dot_general(
        lhs, rhs, group_sizes, _RAGGED_DOT_DIMS, precision, preferred_element_type,
        group_offset, out_sharding,
    )  # fmt: skip
