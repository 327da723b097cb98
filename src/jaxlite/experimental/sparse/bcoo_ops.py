"""BCOO arithmetic and structural operations, in `jax.numpy`/`lax` operations.

`bcoo_dot_general` contracts a BCOO array with a dense one by gathering the dense
operand at the stored indices (zero where an index is out of bounds), multiplying by
`data` and scatter-adding into the result, so its cost is proportional to the number
of stored elements, and it is linear in `data` and in the dense operand, as JAX's
primitive. A product of two BCOO arrays pairs every stored element of one with every
stored element of the other and keeps the pairs whose indices agree. The structural
operations (`reshape`, `slice`, `squeeze`, `broadcast_in_dim`, `concatenate`, `rev`)
re-index without densifying; all of them follow JAX's rules for which of the batch,
sparse and dense dimensions they may touch. See `bcoo.py` for the design.
"""

from __future__ import annotations

import math
import operator

import numpy as np

import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.api import eval_shape
from jaxlite.core import ShapeDtypeStruct
from jaxlite.experimental.sparse.bcoo import (
    BCOO,
    _bcoo_extract,
    _bcoo_set_nse,
    _bcoo_sum_duplicates,
    _full_batch,
    _validate_bcoo,
    bcoo_update_layout,
)
from jaxlite.experimental.sparse.util import SparseInfo, batch_iotas, index_columns

__all__ = [
    "bcoo_broadcast_in_dim",
    "bcoo_concatenate",
    "bcoo_dot_general",
    "bcoo_dot_general_sampled",
    "bcoo_multiply_dense",
    "bcoo_multiply_sparse",
    "bcoo_reduce_sum",
    "bcoo_reshape",
    "bcoo_rev",
    "bcoo_slice",
    "bcoo_squeeze",
]


def _index_tuple(dims):
    return tuple(operator.index(d) for d in dims)


def _normalize_dimension_numbers(dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    return (_index_tuple(lc), _index_tuple(rc)), (_index_tuple(lb), _index_tuple(rb))


def _dot_general_out(lhs_shape, lhs_dtype, rhs_shape, rhs_dtype, dims, preferred):
    """The ShapeDtypeStruct of the dense `dot_general` (validating its arguments)."""
    return eval_shape(
        lambda a, b: lax.dot_general(
            a, b, dimension_numbers=dims, preferred_element_type=preferred
        ),
        ShapeDtypeStruct(tuple(lhs_shape), lhs_dtype),
        ShapeDtypeStruct(tuple(rhs_shape), rhs_dtype),
    )


# --------------------------------------------------------------------------------------
# dot_general


def bcoo_dot_general(
    lhs,
    rhs,
    *,
    dimension_numbers,
    precision=None,
    preferred_element_type=None,
    out_sharding=None,
):
    """`lax.dot_general` where either operand may be a BCOO array: dense result when
    one operand is dense, BCOO when both are sparse."""
    del precision, out_sharding
    dims = _normalize_dimension_numbers(dimension_numbers)
    if isinstance(lhs, BCOO) and isinstance(rhs, BCOO):
        return _bcoo_spdot_general(lhs, rhs, dims, preferred_element_type)
    if isinstance(lhs, BCOO):
        return _bcoo_dot_general(
            lhs.data,
            lhs.indices,
            rhs,
            dimension_numbers=dims,
            preferred_element_type=preferred_element_type,
            lhs_spinfo=lhs._info,
        )
    if isinstance(rhs, BCOO):
        return _bcoo_rdot_general(
            lhs,
            rhs.data,
            rhs.indices,
            dimension_numbers=dims,
            preferred_element_type=preferred_element_type,
            rhs_spinfo=rhs._info,
        )
    return lax.dot_general(
        lhs, rhs, dimension_numbers=dims, preferred_element_type=preferred_element_type
    )


def _bcoo_dot_general(
    lhs_data, lhs_indices, rhs, *, dimension_numbers, preferred_element_type, lhs_spinfo
):
    """BCOO (data, indices) times a dense `rhs`: gather, multiply, scatter-add."""
    lhs_data, lhs_indices, rhs = (jnp.asarray(x) for x in (lhs_data, lhs_indices, rhs))
    shape = tuple(lhs_spinfo.shape)
    props = _validate_bcoo(lhs_data, lhs_indices, shape)
    (lc, rc), (lb, rb) = _normalize_dimension_numbers(dimension_numbers)
    out = _dot_general_out(
        shape,
        lhs_data.dtype,
        rhs.shape,
        rhs.dtype,
        ((lc, rc), (lb, rb)),
        preferred_element_type,
    )
    n_batch, n_sparse, n_dense, nse = props
    if lb and max(lb) >= n_batch:
        raise NotImplementedError(
            "bcoo_dot_general batch dimensions must be among the batch dimensions in "
            f"the sparse representation.\ngot lhs_batch={lb}, n_batch={n_batch}"
        )
    if any(d >= n_batch + n_sparse for d in lc):
        raise NotImplementedError(
            "bcoo_dot_general: contracting over dense dimensions."
        )

    batch_shape = shape[:n_batch]
    data = jnp.broadcast_to(lhs_data, (*batch_shape, *lhs_data.shape[n_batch:]))
    indices = jnp.broadcast_to(lhs_indices, (*batch_shape, nse, n_sparse))
    full = (*batch_shape, nse)

    def lhs_index(d):
        """Where each stored element sits along lhs dimension d (batch or sparse)."""
        if d < n_batch:
            return lax.broadcasted_iota(np.int32, full, d)
        return indices[..., d - n_batch]

    # The dense operand at each stored element: its contracting and batch dimensions
    # indexed by the element's position, its free dimensions kept.
    partner = dict(zip(rc, lc)) | dict(zip(rb, lb))
    indexed = [r for r in range(rhs.ndim) if r in partner]
    free = [r for r in range(rhs.ndim) if r not in partner]
    rhs_t = rhs.transpose((*indexed, *free)) if indexed else rhs
    if indexed:
        where = tuple(lhs_index(partner[r]) for r in indexed)
        rhs_at = rhs_t.at[where].get(mode="fill", fill_value=0)
    else:
        rhs_at = jnp.broadcast_to(rhs_t, (*full, *rhs_t.shape))
    dtype = out.dtype
    lhs_part = lax.expand_dims(
        data.astype(dtype), tuple(range(data.ndim, data.ndim + len(free)))
    )
    rhs_part = lax.expand_dims(
        rhs_at.astype(dtype), tuple(range(n_batch + 1, n_batch + 1 + n_dense))
    )
    prod = lhs_part * rhs_part  # batch + (nse,) + dense + rhs free

    lhs_free = [d for d in range(len(shape)) if d not in lc and d not in lb]
    out_indexed = [*lb, *(d for d in lhs_free if d < n_batch + n_sparse)]
    if not out_indexed:
        return prod.sum(tuple(range(n_batch + 1)), dtype=dtype)
    where = tuple(lhs_index(d) for d in out_indexed)
    return jnp.zeros(out.shape, dtype).at[where].add(prod, mode="drop")


def _bcoo_rdot_general(
    lhs, rhs_data, rhs_indices, *, dimension_numbers, preferred_element_type, rhs_spinfo
):
    """Dense `lhs` times a BCOO array: the swapped product, transposed back."""
    reversed_dims = tuple(d[::-1] for d in dimension_numbers)
    result = _bcoo_dot_general(
        rhs_data,
        rhs_indices,
        lhs,
        dimension_numbers=reversed_dims,
        preferred_element_type=preferred_element_type,
        lhs_spinfo=rhs_spinfo,
    )
    n_contract, n_batch = (len(d[0]) for d in dimension_numbers)
    n_swap = len(rhs_spinfo.shape) - n_contract
    permutation = (
        *range(n_batch),
        *range(n_swap, result.ndim),
        *range(n_batch, n_swap),
    )
    return lax.transpose(result, permutation)


def _bcoo_spdot_general(lhs, rhs, dims, preferred_element_type):
    """BCOO times BCOO: every pair of stored elements whose contracting and batch
    indices agree contributes one stored element of the (BCOO) result."""
    (lc, rc), (lb, rb) = dims
    out = _dot_general_out(
        lhs.shape, lhs.dtype, rhs.shape, rhs.dtype, dims, preferred_element_type
    )
    lhs = bcoo_update_layout(lhs, n_batch=0, n_dense=0, on_inefficient=None)
    rhs = bcoo_update_layout(rhs, n_batch=0, n_dense=0, on_inefficient=None)
    li, ri = lhs.indices, rhs.indices  # (nse, ndim)
    lhs_free = [d for d in range(lhs.ndim) if d not in lc and d not in lb]
    rhs_free = [d for d in range(rhs.ndim) if d not in rc and d not in rb]
    lhs_in = (li < jnp.array(lhs.shape, li.dtype)).all(-1)
    rhs_in = (ri < jnp.array(rhs.shape, ri.dtype)).all(-1)
    keep = lhs_in[:, None] & rhs_in[None, :]
    for dl, dr in (*zip(lc, rc), *zip(lb, rb)):
        keep = keep & (li[:, None, dl] == ri[None, :, dr].astype(li.dtype))
    n1, n2 = lhs.nse, rhs.nse
    columns = [jnp.broadcast_to(li[:, None, d], (n1, n2)) for d in (*lb, *lhs_free)]
    columns += [jnp.broadcast_to(ri[None, :, d], (n1, n2)) for d in rhs_free]
    fill = jnp.array(out.shape, li.dtype)
    if columns:
        indices = jnp.stack([c.astype(li.dtype) for c in columns], axis=-1)
        indices = jnp.where(keep[..., None], indices, fill)
    else:
        indices = jnp.zeros((n1, n2, 0), li.dtype)
    dtype = out.dtype
    data = lhs.data.astype(dtype)[:, None] * rhs.data.astype(dtype)[None, :]
    data = jnp.where(keep, data, 0)
    return BCOO(
        (data.reshape(n1 * n2), indices.reshape((n1 * n2, len(out.shape)))),
        shape=out.shape,
    )


def bcoo_dot_general_sampled(A, B, indices, *, dimension_numbers):
    """The BCOO data of `dot_general(A, B)` at `indices` (JAX computes only those
    entries; jaxlite computes the dense product and extracts them)."""
    dense = lax.dot_general(A, B, dimension_numbers=dimension_numbers)
    return _bcoo_extract(jnp.asarray(indices), dense)


# --------------------------------------------------------------------------------------
# Reductions and elementwise products


def bcoo_reduce_sum(mat, *, axes):
    """The sum of `mat` over `axes`, as a BCOO array."""
    data, indices, shape = _bcoo_reduce_sum(
        mat.data, mat.indices, spinfo=mat._info, axes=axes
    )
    return BCOO((data, indices), shape=shape)


def _bcoo_reduce_sum(data, indices, *, spinfo, axes):
    shape = tuple(spinfo.shape)
    n_batch, n_sparse, _, nse = _validate_bcoo(data, indices, shape)
    axes = sorted({operator.index(a) % len(shape) for a in axes})
    # Dense axes: summed in data.
    dense_axes = tuple(a - n_sparse + 1 for a in axes if a >= n_batch + n_sparse)
    data = data.sum(dense_axes)
    if n_sparse:
        # Data at out-of-bounds indices would otherwise be counted.
        fill = jnp.array(shape[n_batch : n_batch + n_sparse], dtype=indices.dtype)
        mask = (indices < fill).all(-1)
        mask = lax.expand_dims(mask, tuple(range(mask.ndim, data.ndim)))
        data = jnp.where(mask, data, 0)
    # Sparse axes: their index columns are dropped, so the elements add up.
    kept = [i for i in range(n_sparse) if i + n_batch not in axes]
    indices = indices[..., np.array(kept, dtype=np.int32)]
    # Batch axes: folded into the nse axis.
    batch_axes = [a for a in axes if a < n_batch]
    for a in batch_axes:
        if data.shape[a] == 1 and indices.shape[a] == 1:
            data = data * shape[a]
        elif data.shape[a] == 1:
            data = jnp.broadcast_to(
                data, (*data.shape[:a], shape[a], *data.shape[a + 1 :])
            )
        elif indices.shape[a] == 1:
            data = data.sum(a, keepdims=True)
    kept_batch = [i for i in range(n_batch) if i not in batch_axes]
    new_batch = tuple(data.shape[i] for i in kept_batch)
    new_nse = nse * math.prod(data.shape[a] for a in batch_axes)
    order = (*kept_batch, *batch_axes, n_batch)
    data = data.transpose((*order, *range(n_batch + 1, data.ndim)))
    data = data.reshape((*new_batch, new_nse, *data.shape[n_batch + 1 :]))
    index_batch = tuple(indices.shape[i] for i in kept_batch)
    indices = indices.transpose((*order, n_batch + 1))
    indices = indices.reshape((*index_batch, new_nse, indices.shape[-1]))
    out_shape = tuple(s for i, s in enumerate(shape) if i not in axes)
    return data, indices, out_shape


def bcoo_multiply_dense(sp_mat, v):
    """The data of `sp_mat * v` (the product has `sp_mat`'s indices): `v` dense,
    broadcasting to `sp_mat`'s shape."""
    return _bcoo_multiply_dense(sp_mat.data, sp_mat.indices, v, spinfo=sp_mat._info)


def _bcoo_multiply_dense(data, indices, v, *, spinfo):
    shape = tuple(spinfo.shape)
    v = jnp.asarray(v)
    if v.ndim == 0:
        return data * v
    if shape == v.shape:
        return data * _bcoo_extract(indices, v)
    if tuple(jnp.broadcast_shapes(v.shape, shape)) != shape:
        raise NotImplementedError(
            "multiplication between sparse and dense is only implemented for cases "
            f"where the output shape matches the sparse matrix shape. Got shape={shape}, "
            f"v.shape={v.shape}"
        )
    v = lax.expand_dims(v, tuple(range(len(shape) - v.ndim)))
    n_batch, n_sparse, _, nse = _validate_bcoo(data, indices, shape)
    batch_shape = _full_batch(data, indices, shape)
    full = (*batch_shape, nse)
    positions = [*batch_iotas(batch_shape), *index_columns(indices)]
    # A size-1 dimension of v broadcasts: index it at 0.
    where = tuple(
        jnp.broadcast_to(p if v.shape[i] != 1 else jnp.zeros((), p.dtype), full)
        for i, p in enumerate(positions)
    )
    v_at = v.at[where].get(mode="fill", fill_value=0) if where else v[None]
    return data * v_at


def bcoo_multiply_sparse(lhs, rhs):
    """The elementwise product of two BCOO arrays (broadcasting size-1 dimensions),
    as a BCOO array."""
    if len(lhs.shape) != len(rhs.shape):
        raise TypeError(
            "bcoo_multiply_sparse: arrays must have same number of dimensions, got "
            f"{lhs.shape}, {rhs.shape}"
        )
    if lhs.n_dense != rhs.n_dense:
        raise NotImplementedError(
            "bcoo_multiply_sparse: arrays with differing numbers of dense dimensions: "
            f"{lhs}, {rhs}"
        )
    out_shape = tuple(jnp.broadcast_shapes(lhs.shape, rhs.shape))
    n_dense = lhs.n_dense
    # Batch dimensions both share stay batch dimensions; pairs are matched within
    # each batch element.
    n_batch = min(lhs.n_batch, rhs.n_batch)
    lhs = bcoo_update_layout(lhs, n_batch=n_batch, on_inefficient=None)
    rhs = bcoo_update_layout(rhs, n_batch=n_batch, on_inefficient=None)
    batch = out_shape[:n_batch]
    n_sparse = lhs.n_sparse
    sparse_l = lhs.shape[n_batch : n_batch + n_sparse]
    sparse_r = rhs.shape[n_batch : n_batch + n_sparse]
    dims = np.array(
        [
            i
            for i, (s1, s2) in enumerate(zip(sparse_l, sparse_r))
            if s1 != 1 and s2 != 1
        ],
        dtype=np.int32,
    )
    li = jnp.broadcast_to(lhs.indices, (*batch, *lhs.indices.shape[n_batch:]))
    ri = jnp.broadcast_to(rhs.indices, (*batch, *rhs.indices.shape[n_batch:]))
    ri = ri.astype(li.dtype)
    lhs_in = (li < jnp.array(sparse_l, li.dtype)).all(-1)
    rhs_in = (ri < jnp.array(sparse_r, li.dtype)).all(-1)
    keep = lhs_in[..., :, None] & rhs_in[..., None, :]
    keep = keep & (li[..., :, None, dims] == ri[..., None, :, dims]).all(-1)
    n1, n2 = lhs.nse, rhs.nse
    indices = jnp.maximum(li[..., :, None, :], ri[..., None, :, :])
    fill = jnp.array(out_shape[n_batch : n_batch + n_sparse], li.dtype)
    indices = jnp.where(keep[..., None], indices, fill)
    lhs_data = jnp.broadcast_to(lhs.data, (*batch, *lhs.data.shape[n_batch:]))
    rhs_data = jnp.broadcast_to(rhs.data, (*batch, *rhs.data.shape[n_batch:]))
    data = lax.expand_dims(lhs_data, (n_batch + 1,)) * lax.expand_dims(
        rhs_data, (n_batch,)
    )
    dense_axes = tuple(range(n_batch + 2, n_batch + 2 + n_dense))
    data = jnp.where(lax.expand_dims(keep, dense_axes), data, 0)
    return BCOO(
        (
            data.reshape((*batch, n1 * n2, *data.shape[n_batch + 2 :])),
            indices.reshape((*batch, n1 * n2, n_sparse)),
        ),
        shape=out_shape,
    )


# --------------------------------------------------------------------------------------
# Structural operations


def bcoo_broadcast_in_dim(mat, *, shape, broadcast_dimensions, sharding=None):
    """`lax.broadcast_in_dim` of a BCOO array: new leading dimensions become batch
    dimensions; added sparse dimensions must have size 1."""
    del sharding
    shape = tuple(shape)
    broadcast_dimensions = tuple(broadcast_dimensions)
    if len(mat.shape) != len(broadcast_dimensions):
        raise ValueError(
            f"shape={mat.shape} and broadcast_dimensions={broadcast_dimensions} must "
            "have the same length"
        )
    n_batch, n_sparse, n_dense, nse = _validate_bcoo(mat.data, mat.indices, mat.shape)
    batch_dims = broadcast_dimensions[:n_batch]
    sparse_dims = broadcast_dimensions[n_batch : n_batch + n_sparse]
    dense_dims = broadcast_dimensions[n_batch + n_sparse :]
    if max(batch_dims, default=0) > min(sparse_dims, default=len(shape)):
        raise ValueError(
            "Cannot mix batch and sparse dimensions during broadcast_in_dim"
        )
    if max(sparse_dims, default=0) > min(dense_dims, default=len(shape)):
        raise ValueError(
            "Cannot mix sparse and dense dimensions during broadcast_in_dim"
        )
    new_n_batch = min(broadcast_dimensions[n_batch:], default=len(shape))
    new_n_dense = n_dense and len(shape) - min(dense_dims)
    new_n_sparse = len(shape) - new_n_batch - new_n_dense
    if math.prod(mat.shape[n_batch : n_batch + n_sparse]) != math.prod(
        shape[new_n_batch : new_n_batch + new_n_sparse]
    ):
        raise NotImplementedError("Adding sparse dimensions with lengths != 1")
    data, indices = mat.data, mat.indices
    if (new_n_batch, new_n_dense) != (n_batch, n_dense):
        data = lax.broadcast_in_dim(
            data,
            (*shape[:new_n_batch], nse, *shape[new_n_batch + new_n_sparse :]),
            (*batch_dims, new_n_batch, *(b + 1 - new_n_sparse for b in dense_dims)),
        )
        indices = lax.broadcast_in_dim(
            indices,
            (*shape[:new_n_batch], nse, n_sparse),
            (*batch_dims, new_n_batch, new_n_batch + 1),
        )
    if new_n_sparse != n_sparse:
        new_indices = jnp.zeros((*indices.shape[:-1], new_n_sparse), indices.dtype)
        columns = np.array(sparse_dims, dtype=np.int32) - new_n_batch
        indices = new_indices.at[..., columns].set(indices)
    return BCOO((data, indices), shape=shape)


def bcoo_concatenate(operands, *, dimension):
    """`lax.concatenate` of BCOO arrays along a batch or sparse dimension."""
    dimension = operator.index(dimension)
    operands = list(operands)
    if not all(isinstance(op, BCOO) for op in operands):
        raise ValueError(
            "bcoo_concatenate: expected operands to be a sequence of BCOO arrays. "
            f"Got {operands}"
        )
    out = eval_shape(
        lambda *xs: lax.concatenate(xs, dimension),
        *(ShapeDtypeStruct(op.shape, op.dtype) for op in operands),
    )
    if len({op.n_dense for op in operands}) > 1:
        raise ValueError(
            "bcoo_concatenate requires inputs to have matching nse dimensions."
        )
    n_batches = {op.n_batch for op in operands}
    # op[None, :] adds a batch dimension: align it with the others.
    if len(n_batches) != 1 and max(n_batches) == 1:
        if all(op.shape[0] == 1 for op in operands if op.n_batch == 0):
            operands = [
                bcoo_update_layout(op, n_batch=1) if op.n_batch == 0 else op
                for op in operands
            ]
        elif all(op.shape[0] == 1 for op in operands if op.n_batch == 1):
            operands = [
                bcoo_update_layout(op, n_batch=0) if op.n_batch == 1 else op
                for op in operands
            ]
        n_batches = {op.n_batch for op in operands}
    if len(n_batches) != 1:
        raise ValueError(
            "bcoo_concatenate requires inputs to have matching batch dimensions."
        )
    n_batch, n_sparse = operands[0].n_batch, operands[0].n_sparse
    if dimension < n_batch:
        nse = max(op.nse for op in operands)
        operands = [_bcoo_set_nse(op, nse) for op in operands]
        operands = [
            BCOO(
                (
                    jnp.broadcast_to(
                        op.data, (*op.shape[:n_batch], *op.data.shape[n_batch:])
                    ),
                    jnp.broadcast_to(
                        op.indices, (*op.shape[:n_batch], *op.indices.shape[n_batch:])
                    ),
                ),
                shape=op.shape,
            )
            for op in operands
        ]
        data = jnp.concatenate([op.data for op in operands], axis=dimension)
        indices = jnp.concatenate([op.indices for op in operands], axis=dimension)
    elif dimension < n_batch + n_sparse:
        offsets = np.cumsum([0] + [op.shape[dimension] for op in operands[:-1]])
        batch_shape = tuple(
            max(op.data.shape[i] for op in operands) for i in range(n_batch)
        )
        data = jnp.concatenate(
            [
                jnp.broadcast_to(op.data, (*batch_shape, *op.data.shape[n_batch:]))
                for op in operands
            ],
            axis=n_batch,
        )
        index_batch = tuple(
            max(op.indices.shape[i] for op in operands) for i in range(n_batch)
        )
        indices = jnp.concatenate(
            [
                jnp.broadcast_to(
                    op.indices.at[..., dimension - n_batch].add(int(offset)),
                    (*index_batch, *op.indices.shape[n_batch:]),
                )
                for op, offset in zip(operands, offsets)
            ],
            axis=n_batch,
        )
    else:
        raise NotImplementedError("Concatenation along dense dimensions.")
    return BCOO((data, indices), shape=out.shape)


def bcoo_reshape(mat, *, new_sizes, dimensions=None, sharding=None):
    """`lax.reshape` of a BCOO array: batch, sparse and dense dimensions reshape
    among themselves (the new shape must not mix them)."""
    del sharding
    new_sizes = tuple(int(s) for s in new_sizes)
    n_batch, n_sparse = mat.n_batch, mat.n_sparse
    batch_shape = mat.shape[:n_batch]
    sparse_shape = mat.shape[n_batch : n_batch + n_sparse]
    data = jnp.broadcast_to(mat.data, (*batch_shape, *mat.data.shape[n_batch:]))
    indices = jnp.broadcast_to(
        mat.indices, (*batch_shape, *mat.indices.shape[n_batch:])
    )
    if dimensions is not None and tuple(dimensions) != tuple(range(mat.ndim)):
        mat = BCOO((data, indices), shape=mat.shape).transpose(dimensions)
        data, indices = mat.data, mat.indices
        batch_shape = mat.shape[:n_batch]
        sparse_shape = mat.shape[n_batch : n_batch + n_sparse]
    batch_size = math.prod(batch_shape)
    sparse_size = math.prod(sparse_shape)
    cumulative = np.cumprod(new_sizes)
    if batch_size != 1 and batch_size not in cumulative:
        raise ValueError(
            "bcoo_reshape: new shape cannot mix batch and sparse dimensions; got "
            f"shape={mat.shape} new_shape={new_sizes} with n_batch={n_batch}"
        )
    if sparse_size != 1 and batch_size * sparse_size not in cumulative:
        raise ValueError(
            "bcoo_reshape: new shape cannot mix sparse and dense dimensions; got "
            f"shape={mat.shape} new_shape={new_sizes} with n_dense={mat.n_dense}"
        )
    i1 = int(cumulative.searchsorted(batch_size, side="right"))
    i2 = int(cumulative.searchsorted(batch_size * sparse_size, side="right"))
    new_batch, new_sparse, new_dense = (
        new_sizes[:i1],
        new_sizes[i1:i2],
        new_sizes[i2:],
    )
    data = data.reshape((*new_batch, mat.nse, *new_dense))
    indices = indices.reshape((*new_batch, mat.nse, n_sparse))
    if not new_sparse:
        indices = jnp.zeros((*new_batch, mat.nse, 0), indices.dtype)
    elif sparse_shape:
        columns = index_columns(indices)
        flat = jnp.ravel_multi_index(columns, sparse_shape, mode="clip")
        out_of_bounds = (indices >= jnp.array(sparse_shape, indices.dtype)).any(
            -1, keepdims=True
        )
        new_columns = jnp.unravel_index(flat, new_sparse)
        indices = jnp.stack(new_columns, axis=-1).astype(indices.dtype)
        indices = jnp.where(
            out_of_bounds, jnp.array(new_sparse, indices.dtype), indices
        )
    else:
        indices = jnp.zeros((*new_batch, mat.nse, len(new_sparse)), indices.dtype)
    return BCOO((data, indices), shape=new_sizes)


def bcoo_rev(operand, dimensions):
    """`lax.rev` of a BCOO array."""
    dimensions = tuple(operator.index(d) for d in dimensions)
    eval_shape(
        lambda x: lax.rev(x, dimensions), ShapeDtypeStruct(operand.shape, operand.dtype)
    )
    n_batch, n_sparse = operand.n_batch, operand.n_sparse
    batch_dims = [d for d in dimensions if d < n_batch]
    sparse_dims = [d - n_batch for d in dimensions if n_batch <= d < n_batch + n_sparse]
    dense_dims = [d + 1 - n_sparse for d in dimensions if d >= n_batch + n_sparse]
    data, indices = operand.data, operand.indices
    full_batch = operand.shape[:n_batch]
    if batch_dims:
        data = jnp.broadcast_to(data, (*full_batch, *data.shape[n_batch:]))
        indices = jnp.broadcast_to(indices, (*full_batch, *indices.shape[n_batch:]))
        indices = lax.rev(indices, batch_dims)
    if batch_dims or dense_dims:
        data = lax.rev(data, (*batch_dims, *dense_dims))
    if sparse_dims:
        sizes = np.array(operand.shape[n_batch : n_batch + n_sparse])
        flip = np.zeros(n_sparse, bool)
        flip[sparse_dims] = True
        sizes_arr = jnp.array(sizes, indices.dtype)
        flipped = jnp.where(jnp.array(flip), sizes_arr - 1 - indices, indices)
        indices = jnp.where(flipped < 0, sizes_arr, flipped)
    return BCOO((data, indices), shape=operand.shape)


def bcoo_squeeze(arr, *, dimensions):
    """`lax.squeeze` of a BCOO array."""
    dimensions = tuple(operator.index(d) % arr.ndim for d in dimensions)
    if any(arr.shape[d] != 1 for d in dimensions):
        raise ValueError(
            "cannot select an axis to squeeze out which has size not equal to one, got "
            f"shape={arr.shape} and dimensions={dimensions}"
        )
    n_batch, n_sparse = arr.n_batch, arr.n_sparse
    batch_dims = tuple(d for d in dimensions if d < n_batch)
    sparse_keep = np.array(
        [i for i in range(n_sparse) if i + n_batch not in dimensions], dtype=np.int32
    )
    dense_dims = tuple(d - n_sparse + 1 for d in dimensions if d >= n_batch + n_sparse)
    data = lax.squeeze(arr.data, batch_dims + dense_dims)
    indices = lax.squeeze(arr.indices[..., sparse_keep], batch_dims)
    shape = tuple(s for i, s in enumerate(arr.shape) if i not in dimensions)
    return BCOO(
        (data, indices),
        shape=shape,
        indices_sorted=arr.indices_sorted,
        unique_indices=arr.unique_indices,
    )


def bcoo_slice(mat, *, start_indices, limit_indices, strides=None):
    """`lax.slice` of a BCOO array (elements outside the slice are dropped)."""
    if not isinstance(mat, BCOO):
        raise TypeError(
            f"bcoo_slice: input should be BCOO array, got type(mat)={type(mat)}"
        )
    start = [operator.index(i) for i in start_indices]
    limit = [operator.index(i) for i in limit_indices]
    strides = (
        [1] * mat.ndim if strides is None else [operator.index(i) for i in strides]
    )
    if not len(start) == len(limit) == mat.ndim:
        raise ValueError(f"bcoo_slice: indices must have size mat.ndim={mat.ndim}")
    if len(strides) != mat.ndim:
        raise ValueError(f"len(strides) = {len(strides)}; expected {mat.ndim}")
    if any(s <= 0 for s in strides):
        raise ValueError(
            f"strides must be a sequence of positive integers; got {strides}"
        )
    if not all(0 <= a <= b <= n for a, b, n in zip(start, limit, mat.shape)):
        raise ValueError(
            f"bcoo_slice: invalid indices. Got start_indices={start}, "
            f"limit_indices={limit} and shape={mat.shape}"
        )
    n_batch, n_sparse = mat.n_batch, mat.n_sparse
    data_slices, index_slices = [], []
    for i in range(n_batch):
        s = slice(start[i], limit[i], strides[i])
        data_slices.append(slice(None) if mat.data.shape[i] != mat.shape[i] else s)
        index_slices.append(slice(None) if mat.indices.shape[i] != mat.shape[i] else s)
    data_slices.append(slice(None))
    index_slices += [slice(None), slice(None)]
    for i in range(n_batch + n_sparse, mat.ndim):
        data_slices.append(slice(start[i], limit[i], strides[i]))
    data = mat.data[tuple(data_slices)]
    indices = mat.indices[tuple(index_slices)]
    new_shape = tuple((b - a + s - 1) // s for a, b, s in zip(start, limit, strides))
    if n_sparse:
        sl = slice(n_batch, n_batch + n_sparse)
        lead = tuple(range(n_batch + 1))
        starts = lax.expand_dims(jnp.array(start[sl], indices.dtype), lead)
        ends = lax.expand_dims(jnp.array(limit[sl], indices.dtype), lead)
        steps = lax.expand_dims(jnp.array(strides[sl], indices.dtype), lead)
        keep = jnp.all(
            (indices >= starts) & (indices < ends) & ((indices - starts) % steps == 0),
            axis=-1,
            keepdims=True,
        )
        indices = jnp.where(
            keep,
            (indices - starts + steps - 1) // steps,
            (ends - starts + steps - 1) // steps,
        )
        keep_data = lax.expand_dims(
            keep[..., 0], tuple(range(n_batch + 1, n_batch + 1 + mat.n_dense))
        )
        data = jnp.where(keep_data, data, 0)
        new_nse = math.prod(new_shape[sl])
        if mat.nse > new_nse:
            data, indices = _bcoo_sum_duplicates(
                data, indices, spinfo=SparseInfo(shape=new_shape), nse=new_nse
            )
    return BCOO((data, indices), shape=new_shape)
