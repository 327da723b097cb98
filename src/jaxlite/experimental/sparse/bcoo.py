"""BCOO: batched coordinate-format sparse arrays.

A BCOO array of shape `batch + sparse + dense` stores `data` of shape
`batch + (nse,) + dense` and `indices` of shape `batch + (nse, n_sparse)`: for each
batch element, `nse` stored elements, each a dense block placed at a sparse index.
Duplicate indices add up; an index out of bounds (padding uses the dimension sizes)
stands for nothing. A batch dimension of `data` or `indices` may have size 1, shared
by the whole batch.

Design choice: JAX builds each BCOO operation as a primitive (`bcoo_todense_p`,
`bcoo_dot_general_p`, ...) with its own JVP, transpose and batching rules. jaxlite
writes them in terms of `jax.numpy`/`lax` operations instead: `todense` is a
scatter-add, `extract` a gather with fill, `dot_general` a gather of the dense operand
at the stored indices, a product and a scatter-add, `sort_indices` and
`sum_duplicates` a multi-key `lax.sort` and segment sums by scatter-add. Each is
linear in `data` exactly as JAX's primitive is, so `grad`, `jvp`, `vmap` and `jit`
give JAX's values and derivatives with no sparse rule to keep consistent; the indices
are integers and get no derivative. The public functions, names and results (values,
shapes, nse, dtypes, flags) are JAX's; the representation of results whose layout
JAX leaves unspecified (e.g. `bcoo_multiply_sparse`'s padding) may differ.

This module holds the class, validation, conversion (`fromdense`, `todense`,
`extract`), index normalisation (`sort_indices`, `sum_duplicates`,
`eliminate_zeros`), `transpose` and `update_layout`; `bcoo_ops` the arithmetic and
the structural operations.
"""

from __future__ import annotations

import math
import operator
import warnings
from typing import NamedTuple

import numpy as np

import jaxlite.numpy as jnp
from jaxlite import dtypes, lax, tree_util
from jaxlite.api_vmap import register_vmappable
from jaxlite.core import concrete_or_error
from jaxlite.errors import ConcretizationTypeError
from jaxlite.experimental.sparse._base import JAXSparse, sparse_repr
from jaxlite.experimental.sparse.util import (
    SparseEfficiencyError,
    SparseEfficiencyWarning,
    SparseInfo,
    batch_iotas,
    concrete_nse,
    count_stored_elements,
    index_columns,
)

__all__ = [
    "BCOO",
    "bcoo_eliminate_zeros",
    "bcoo_extract",
    "bcoo_fromdense",
    "bcoo_sort_indices",
    "bcoo_sum_duplicates",
    "bcoo_todense",
    "bcoo_transpose",
    "bcoo_update_layout",
]


class BCOOProperties(NamedTuple):
    n_batch: int
    n_sparse: int
    n_dense: int
    nse: int


def _validate_bcoo_indices(indices, shape) -> BCOOProperties:
    if not dtypes.issubdtype(indices.dtype, np.integer):
        raise TypeError(f"BCOO indices must be integers, got dtype {indices.dtype}")
    shape = tuple(shape)
    if indices.ndim < 2:
        raise ValueError(
            f"BCOO indices must have shape batch + (nse, n_sparse), got {indices.shape}"
        )
    nse, n_sparse = indices.shape[-2:]
    n_batch = indices.ndim - 2
    n_dense = len(shape) - n_batch - n_sparse
    if n_dense < 0:
        raise ValueError(
            f"BCOO indices of shape {indices.shape} (n_batch={n_batch}, "
            f"n_sparse={n_sparse}) do not fit an array of shape {shape}"
        )
    if any(s1 not in (1, s2) for s1, s2 in zip(indices.shape[:n_batch], shape)):
        raise ValueError(
            f"indices batch dimensions not compatible for indices.shape="
            f"{indices.shape}, shape={shape}"
        )
    return BCOOProperties(n_batch, n_sparse, n_dense, nse)


def _validate_bcoo(data, indices, shape) -> BCOOProperties:
    props = _validate_bcoo_indices(indices, shape)
    n_batch, n_sparse, _, nse = props
    shape = tuple(shape)
    if data.ndim < n_batch + 1 or any(
        s1 not in (1, s2) for s1, s2 in zip(data.shape[:n_batch], shape)
    ):
        raise ValueError(
            f"data batch dimensions not compatible for data.shape={data.shape}, "
            f"shape={shape}"
        )
    if tuple(data.shape[n_batch:]) != (nse, *shape[n_batch + n_sparse :]):
        raise ValueError(
            f"Invalid data.shape={data.shape} for nse={nse}, n_batch={n_batch}, "
            f"n_dense={props.n_dense}"
        )
    return props


def _full_batch(data, indices, shape):
    """The batch shape of the result of an operation on both buffers."""
    n_batch = indices.ndim - 2
    return tuple(
        max(a, b) for a, b in zip(data.shape[:n_batch], indices.shape[:n_batch])
    )


def _fill_indices(shape, props, dtype):
    """The out-of-bounds index that pads stored elements: the sparse dims' sizes."""
    sparse_shape = shape[props.n_batch : props.n_batch + props.n_sparse]
    return jnp.array(sparse_shape, dtype=dtype)


# --------------------------------------------------------------------------------------
# todense, extract, fromdense


def bcoo_todense(mat):
    """The dense array of the BCOO array `mat` (duplicates add up)."""
    return _bcoo_todense(mat.data, mat.indices, spinfo=mat._info)


def _bcoo_todense(data, indices, *, spinfo):
    data, indices = jnp.asarray(data), jnp.asarray(indices)
    shape = tuple(spinfo.shape)
    props = _validate_bcoo(data, indices, shape)
    if props.n_sparse == 0:
        return jnp.broadcast_to(data.sum(props.n_batch, dtype=data.dtype), shape)
    where = batch_iotas(shape[: props.n_batch]) + index_columns(indices)
    return jnp.zeros(shape, data.dtype).at[where].add(data, mode="drop")


def _bcoo_extract(indices, arr, *, assume_unique=True):
    """The BCOO data of dense `arr` at `indices` (zero out of bounds). Unless
    `assume_unique`, a repeated index gets the value at its first occurrence only,
    so that the result sums back to `arr`."""
    arr = jnp.asarray(arr)
    props = _validate_bcoo_indices(indices, arr.shape)
    n_batch, nse = props.n_batch, props.nse
    where = batch_iotas(arr.shape[:n_batch]) + index_columns(indices)
    if props.n_sparse == 0:
        result = jnp.broadcast_to(
            lax.expand_dims(arr, (n_batch,)),
            (*arr.shape[:n_batch], nse, *arr.shape[n_batch:]),
        )
        if not assume_unique and nse > 1:
            keep = lax.broadcasted_iota(np.int32, (nse,), 0) == 0
            result = jnp.where(_expand_nse(keep, n_batch, props.n_dense), result, 0)
        return result
    result = arr.at[where].get(mode="fill", fill_value=0)
    if not assume_unique:
        first = _unique_indices(indices, arr.shape)[3]
        result = jnp.where(_expand_nse(first, n_batch, props.n_dense), result, 0)
    return result


def _expand_nse(mask, n_batch, n_dense):
    """A mask over `batch + (nse,)` made to broadcast against BCOO data."""
    return lax.expand_dims(mask, tuple(range(mask.ndim, mask.ndim + n_dense)))


def bcoo_extract(sparr, arr, *, assume_unique=None):
    """A BCOO array with `sparr`'s indices and the values of dense `arr` there."""
    if not isinstance(sparr, BCOO):
        raise TypeError(
            f"First argument to bcoo_extract should be a BCOO array. Got {type(sparr)=}"
        )
    a = jnp.asarray(arr)
    if a.shape != sparr.shape:
        raise ValueError(f"shape mismatch: {sparr.shape=} {a.shape=}")
    if assume_unique is None:
        assume_unique = sparr.unique_indices
    data = _bcoo_extract(sparr.indices, a, assume_unique=assume_unique)
    return BCOO((data, sparr.indices), **sparr._info._asdict())


def bcoo_fromdense(mat, *, nse=None, n_batch=0, n_dense=0, index_dtype=np.int32):
    """The BCOO form of dense `mat`, its nonzeros in row-major (sorted) order.

    `nse` (stored elements per batch) defaults to the largest count of nonzeros; it
    must be given under `jit` and other transformations that trace `mat`.
    """
    mat = jnp.asarray(mat)
    if nse is None:
        nse = count_stored_elements(mat, n_batch, n_dense)
    nse = concrete_nse(nse, "nse of bcoo_fromdense")
    data, indices = _bcoo_fromdense(
        mat, nse=nse, n_batch=n_batch, n_dense=n_dense, index_dtype=index_dtype
    )
    return BCOO(
        (data, indices), shape=mat.shape, indices_sorted=True, unique_indices=True
    )


def _bcoo_fromdense(mat, *, nse, n_batch=0, n_dense=0, index_dtype=np.int32):
    mat = jnp.asarray(mat)
    n_sparse = mat.ndim - n_batch - n_dense
    if n_sparse < 0 or n_batch < 0 or n_dense < 0:
        raise ValueError(
            f"Invalid n_batch={n_batch}, n_dense={n_dense} for an array of rank "
            f"{mat.ndim}"
        )
    index_dtype = dtypes.canonicalize_dtype(index_dtype)
    batch_shape = mat.shape[:n_batch]
    sparse_shape = mat.shape[n_batch : n_batch + n_sparse]
    mask = mat != 0
    if n_dense:
        mask = mask.any(tuple(range(mat.ndim - n_dense, mat.ndim)))
    if n_sparse == 0:
        indices = jnp.zeros((*batch_shape, nse, 0), index_dtype)
        data = _bcoo_extract(indices, mat)
        keep = lax.broadcasted_iota(np.int32, (*batch_shape, nse), n_batch) < mask[
            ..., None
        ].astype(np.int32)
        return jnp.where(_expand_nse(keep, n_batch, n_dense), data, 0), indices
    # Positions of the nonzeros in row-major order, as flat indices into the sparse
    # dims, written to slot (running count - 1); slots past the count keep the fill.
    size = math.prod(sparse_shape)
    flat_mask = mask.reshape((*batch_shape, size))
    slot = jnp.cumsum(flat_mask, axis=-1, dtype=np.int32) - 1
    slot = jnp.where(flat_mask, slot, nse)
    flat_ids = lax.broadcasted_iota(np.int32, (*batch_shape, size), n_batch)
    found = jnp.full((*batch_shape, nse), size, np.int32)
    found = found.at[batch_iotas(batch_shape) + (slot,)].set(flat_ids, mode="drop")
    columns = []
    stride = size
    for dim in sparse_shape:
        stride //= dim
        column = (found // stride) % dim if dim else found
        columns.append(jnp.where(found == size, dim, column))
    indices = jnp.stack(columns, axis=-1).astype(index_dtype)
    return _bcoo_extract(indices, mat), indices


# --------------------------------------------------------------------------------------
# sort_indices, sum_duplicates, eliminate_zeros


def _sort_columns(indices, n_batch):
    """`(sorted indices, permutation)` along the nse axis, lexicographically."""
    columns = index_columns(indices)
    iota = lax.broadcasted_iota(np.int32, columns[0].shape, n_batch)
    *columns, perm = lax.sort(
        (*columns, iota), dimension=n_batch, num_keys=len(columns)
    )
    return jnp.stack(columns, axis=-1), perm


def _gather_nse(data, perm, n_batch, batch_shape):
    """`data[..., perm, ...]` along the nse axis, batch by batch."""
    data = jnp.broadcast_to(data, (*batch_shape, *data.shape[n_batch:]))
    return data[batch_iotas(batch_shape) + (perm,)]


def bcoo_sort_indices(mat):
    """`mat` with its indices sorted lexicographically (duplicates kept)."""
    props = _validate_bcoo(mat.data, mat.indices, mat.shape)
    if props.n_sparse == 0:
        return BCOO(
            (mat.data, mat.indices),
            shape=mat.shape,
            indices_sorted=True,
            unique_indices=mat.unique_indices,
        )
    indices, perm = _sort_columns(mat.indices, props.n_batch)
    batch_shape = _full_batch(mat.data, mat.indices, mat.shape)
    data = _gather_nse(mat.data, perm, props.n_batch, batch_shape)
    return BCOO(
        (data, indices),
        shape=mat.shape,
        indices_sorted=True,
        unique_indices=mat.unique_indices,
    )


def _unique_indices(indices, shape):
    """`(unique, inverse, true_size, first)` per batch: the distinct indices in
    sorted order padded with the fill index, the position in `unique` of each input
    index, the number of distinct in-bounds indices, and whether each index is the
    first occurrence of its value. Out-of-bounds indices all become the fill
    index."""
    props = _validate_bcoo_indices(indices, shape)
    n_batch, nse = props.n_batch, props.nse
    batch_shape = indices.shape[:n_batch]
    fill = _fill_indices(shape, props, indices.dtype)
    if nse == 0:
        empty = jnp.zeros((*batch_shape, 0), np.int32)
        return indices, empty, jnp.zeros(batch_shape, np.int32), empty.astype(bool)
    out_of_bounds = (indices >= fill).any(-1, keepdims=True)
    indices = jnp.where(out_of_bounds, fill, indices)
    sorted_indices, perm = _sort_columns(indices, n_batch)
    differs = (sorted_indices[..., 1:, :] != sorted_indices[..., :-1, :]).any(-1)
    starts = jnp.concatenate([jnp.ones((*batch_shape, 1), bool), differs], axis=-1)
    group = jnp.cumsum(starts, axis=-1, dtype=np.int32) - 1
    where = batch_iotas(batch_shape)
    unique = (
        jnp.broadcast_to(fill, indices.shape).at[where + (group,)].set(sorted_indices)
    )
    inverse = jnp.zeros((*batch_shape, nse), np.int32).at[where + (perm,)].set(group)
    true_size = group[..., -1] + 1 - out_of_bounds.any((-2, -1)).astype(np.int32)
    # The sort is stable, so the start of each run is the first occurrence.
    first = jnp.zeros((*batch_shape, nse), bool).at[where + (perm,)].set(starts)
    return unique, inverse, true_size, first


def _max_int(x):
    return int(np.max(np.asarray(x), initial=0))


def _adjust_indices_nse(indices, *, nse, shape):
    """`indices` cut to, or padded with the fill index to, `nse` elements."""
    props = _validate_bcoo_indices(indices, shape)
    if nse <= props.nse:
        return indices[..., :nse, :]
    fill = jnp.broadcast_to(
        _fill_indices(shape, props, indices.dtype),
        (*indices.shape[:-2], nse - props.nse, props.n_sparse),
    )
    return jnp.concatenate([indices, fill], axis=-2)


def bcoo_sum_duplicates(mat, nse=None):
    """`mat` with duplicate indices summed and indices sorted, with `nse` stored
    elements (default: the number needed, which must then be computable, so pass
    `nse` under `jit`); data past the given `nse` is dropped."""
    data, indices = _bcoo_sum_duplicates(
        mat.data, mat.indices, spinfo=mat._info, nse=nse
    )
    return BCOO(
        (data, indices), shape=mat.shape, indices_sorted=True, unique_indices=True
    )


def _bcoo_sum_duplicates(data, indices, *, spinfo, nse):
    shape = tuple(spinfo.shape)
    props = _validate_bcoo(data, indices, shape)
    n_batch = props.n_batch
    if props.n_sparse == 0:
        unique = jnp.zeros((*indices.shape[:-2], 1, 0), indices.dtype)
        inverse = jnp.zeros((*indices.shape[:-2], 1), np.int32)
        data = data.sum(n_batch, keepdims=True, dtype=data.dtype)
        if nse is None:
            nse = 1
    else:
        unique, inverse, true_size, _ = _unique_indices(indices, shape)
        if nse is None:
            try:
                nse = concrete_or_error(_max_int, true_size)
            except ConcretizationTypeError:
                raise ValueError(
                    "bcoo_sum_duplicates: nse must be specified when using the "
                    "function within jit, vmap, and other transformations requiring "
                    "abstract evaluation."
                ) from None
    nse = concrete_nse(nse, "nse of bcoo_sum_duplicates")
    indices_out = _adjust_indices_nse(unique, nse=nse, shape=shape)
    batch_shape = _full_batch(data, indices, shape)
    out = jnp.zeros((*batch_shape, nse, *data.shape[n_batch + 1 :]), data.dtype)
    out = out.at[batch_iotas(batch_shape) + (inverse,)].add(data, mode="drop")
    return out, indices_out


def bcoo_eliminate_zeros(mat, nse=None):
    """`mat` without explicitly stored zeros, duplicates summed, indices sorted."""
    data, indices, shape = mat.data, mat.indices, mat.shape
    props = _validate_bcoo(data, indices, shape)
    mask = (data == 0).all(tuple(range(props.n_batch + 1, data.ndim)))
    shared = tuple(i for i, s in enumerate(indices.shape[: props.n_batch]) if s == 1)
    mask = mask.all(shared, keepdims=True)
    fill = _fill_indices(shape, props, indices.dtype)
    indices = jnp.where(mask[..., None], fill, indices)
    return bcoo_sum_duplicates(BCOO((data, indices), shape=shape), nse=nse)


def _bcoo_set_nse(mat, nse):
    """`mat` with `nse` stored elements: cut (dropping data) or padded."""
    nse = operator.index(nse)
    if mat.nse == nse:
        return mat
    n_batch = mat.n_batch
    if nse <= mat.nse:
        data = mat.data[(*(slice(None),) * n_batch, slice(nse))]
        indices = mat.indices[..., :nse, :]
    else:
        pad = [(0, 0)] * mat.data.ndim
        pad[n_batch] = (0, nse - mat.nse)
        data = jnp.pad(mat.data, pad)
        indices = _adjust_indices_nse(mat.indices, nse=nse, shape=mat.shape)
    return BCOO(
        (data, indices),
        shape=mat.shape,
        indices_sorted=mat.indices_sorted,
        unique_indices=mat.unique_indices,
    )


# --------------------------------------------------------------------------------------
# transpose, update_layout


def _validate_permutation(props, permutation, shape):
    permutation = tuple(operator.index(p) for p in permutation)
    if sorted(permutation) != list(range(len(shape))):
        raise TypeError(
            "transpose permutation isn't a permutation of operand dimensions, got "
            f"permutation {permutation} for shape {shape}."
        )
    n_batch, n_sparse = props.n_batch, props.n_sparse
    batch_perm = permutation[:n_batch]
    sparse_perm = [p - n_batch for p in permutation[n_batch : n_batch + n_sparse]]
    dense_perm = [p - n_batch - n_sparse for p in permutation[n_batch + n_sparse :]]
    if tuple(sorted(batch_perm)) != tuple(range(n_batch)):
        raise NotImplementedError(
            "bcoo_transpose: cannot permute batch axes with non-batch axes; got "
            f"permutation={permutation}"
        )
    if tuple(sorted(sparse_perm)) != tuple(range(n_sparse)):
        raise NotImplementedError(
            "bcoo_transpose: cannot permute sparse axes with non-sparse axes; got "
            f"permutation={permutation}"
        )
    return batch_perm, sparse_perm, dense_perm


def bcoo_transpose(mat, *, permutation):
    """`lax.transpose` of a BCOO array: batch, sparse and dense axes each permute
    among themselves."""
    props = _validate_bcoo(mat.data, mat.indices, mat.shape)
    batch_perm, sparse_perm, dense_perm = _validate_permutation(
        props, permutation, mat.shape
    )
    n_batch = props.n_batch
    data = mat.data
    if batch_perm != tuple(range(n_batch)) or dense_perm != list(range(props.n_dense)):
        data = data.transpose(
            (*batch_perm, n_batch, *(d + n_batch + 1 for d in dense_perm))
        )
    indices = mat.indices
    if batch_perm != tuple(range(n_batch)):
        indices = indices.transpose((*batch_perm, n_batch, n_batch + 1))
    if sparse_perm != list(range(props.n_sparse)):
        indices = indices[..., np.array(sparse_perm, dtype=np.int32)]
    shape = tuple(mat.shape[p] for p in permutation)
    return BCOO(
        (data, indices),
        shape=shape,
        indices_sorted=mat.indices_sorted
        and sparse_perm == list(range(props.n_sparse)),
        unique_indices=mat.unique_indices,
    )


def bcoo_update_layout(mat, *, n_batch=None, n_dense=None, on_inefficient="error"):
    """`mat` with `n_batch` batch and `n_dense` dense dimensions (the same array).

    Turning sparse dimensions of size > 1 into batch or dense ones stores many
    zeros: `on_inefficient` says whether that raises a `SparseEfficiencyError`
    ("error"), warns ("warn") or passes (None).
    """
    n_batch = mat.n_batch if n_batch is None else operator.index(n_batch)
    n_dense = mat.n_dense if n_dense is None else operator.index(n_dense)
    if (n_batch, n_dense) == (mat.n_batch, mat.n_dense):
        return mat
    if on_inefficient not in ("error", "warn", None):
        raise ValueError(
            f"on_inefficent={on_inefficient!r}; expected one of ['error', 'warn', None]."
        )
    if n_batch < 0:
        raise ValueError(f"n_batch must be non-negative; got {n_batch}")
    if n_dense < 0:
        raise ValueError(f"n_dense must be non-negative; got {n_dense}")
    if mat.ndim - n_batch - n_dense < 0:
        raise ValueError(
            f"sum of n_batch={n_batch} and n_dense={n_dense} cannot be larger than "
            f"mat.ndim={mat.ndim}."
        )

    def inefficient(msg):
        if on_inefficient == "error":
            raise SparseEfficiencyError(
                msg + " To disable this error, set the on_inefficient argument of "
                "bcoo_update_layout to 'warn' or None."
            )
        if on_inefficient == "warn":
            warnings.warn(
                msg + " To disable this warning, set the on_inefficient argument of "
                "bcoo_update_layout to None.",
                SparseEfficiencyWarning,
                stacklevel=3,
            )

    shape = mat.shape
    if n_dense > mat.n_dense and any(
        d > 1 for d in shape[mat.ndim - n_dense : mat.ndim - mat.n_dense]
    ):
        inefficient(
            f"For matrix of shape {shape}, increasing n_dense from {mat.n_dense} to "
            f"{n_dense} results in inefficient storage."
        )
    if n_batch > mat.n_batch and any(d > 1 for d in shape[mat.n_batch : n_batch]):
        inefficient(
            f"For matrix of shape {shape}, increasing n_batch from {mat.n_batch} to "
            f"{n_batch} results in inefficient storage."
        )
    data, indices = mat.data, mat.indices
    cur_batch, cur_dense = mat.n_batch, mat.n_dense
    if n_dense < cur_dense:
        data, indices = _dense_to_sparse(data, indices, cur_batch, cur_dense - n_dense)
        cur_dense = n_dense
    if n_batch < cur_batch:
        data, indices = _batch_to_sparse(data, indices, shape, n_batch, cur_batch)
        cur_batch = n_batch
    if n_dense > cur_dense:
        data, indices = _sparse_to_dense(
            data, indices, shape, cur_batch, n_dense - cur_dense
        )
        cur_dense = n_dense
    if n_batch > cur_batch:
        data, indices = _sparse_to_batch(data, indices, shape, cur_batch, n_batch)
    return BCOO((data, indices), shape=shape)


def _dense_to_sparse(data, indices, n_batch, n):
    """The first `n` dense dimensions become trailing sparse dimensions."""
    nse = indices.shape[-2]
    block = data.shape[n_batch + 1 : n_batch + 1 + n]
    count = math.prod(block)
    data = data.reshape(
        (*data.shape[:n_batch], nse * count, *data.shape[n_batch + 1 + n :])
    )
    idx_batch = indices.shape[:n_batch]
    old = jnp.broadcast_to(
        indices[..., None, :], (*idx_batch, nse, count, indices.shape[-1])
    )
    new = [
        jnp.broadcast_to(c.astype(indices.dtype), (*idx_batch, nse, count))[..., None]
        for c in np.unravel_index(np.arange(count), block)
    ]
    indices = jnp.concatenate([old, *new], axis=-1)
    return data, indices.reshape((*idx_batch, nse * count, indices.shape[-1]))


def _batch_to_sparse(data, indices, shape, n_batch, cur_batch):
    """Batch dimensions `n_batch:cur_batch` become leading sparse dimensions."""
    nse = indices.shape[-2]
    moved = shape[n_batch:cur_batch]
    data = jnp.broadcast_to(
        data, (*data.shape[:n_batch], *moved, *data.shape[cur_batch:])
    )
    keep = indices.shape[:n_batch]
    indices = jnp.broadcast_to(indices, (*keep, *moved, *indices.shape[cur_batch:]))
    columns = [
        jnp.broadcast_to(
            lax.broadcasted_iota(indices.dtype, (*moved, 1), i), (*keep, *moved, nse)
        )[..., None]
        for i in range(len(moved))
    ]
    indices = jnp.concatenate([*columns, indices], axis=-1)
    total = math.prod(moved) * nse
    data = data.reshape((*data.shape[:n_batch], total, *data.shape[cur_batch + 1 :]))
    indices = indices.reshape((*keep, total, indices.shape[-1]))
    return data, indices


def _sparse_to_dense(data, indices, shape, n_batch, n):
    """The last `n` sparse dimensions become leading dense dimensions."""
    batch_shape = _full_batch(data, indices, shape)
    nse = indices.shape[-2]
    dense_shape = shape[len(shape) - (data.ndim - n_batch - 1) - n :]
    where = (
        *batch_iotas(batch_shape),
        lax.broadcasted_iota(np.int32, (*(1,) * len(batch_shape), nse), n_batch),
        *index_columns(indices[..., indices.shape[-1] - n :]),
    )
    out = jnp.zeros((*batch_shape, nse, *dense_shape), data.dtype)
    return out.at[where].set(data, mode="drop"), indices[..., : indices.shape[-1] - n]


def _sparse_to_batch(data, indices, shape, cur_batch, n_batch):
    """The first sparse dimensions become trailing batch dimensions."""
    n = n_batch - cur_batch
    batch_shape = _full_batch(data, indices, shape)
    nse = indices.shape[-2]
    new_batch = shape[cur_batch:n_batch]
    where = (
        *batch_iotas(batch_shape),
        *index_columns(indices[..., :n]),
        lax.broadcasted_iota(np.int32, (*(1,) * len(batch_shape), nse), cur_batch),
    )
    out = jnp.zeros(
        (*batch_shape, *new_batch, nse, *data.shape[cur_batch + 1 :]), data.dtype
    )
    out = out.at[where].set(data, mode="drop")
    rest = indices[..., n:]
    rest = jnp.broadcast_to(
        lax.expand_dims(rest, tuple(range(cur_batch, n_batch))),
        (*rest.shape[:cur_batch], *new_batch, nse, rest.shape[-1]),
    )
    return out, rest


# --------------------------------------------------------------------------------------
# The array type


@tree_util.register_pytree_node_class
class BCOO(JAXSparse):
    """A batched COO sparse array (see the module docstring).

    `BCOO((data, indices), shape=shape)`: `data` of shape `batch + (nse,) + dense`,
    `indices` of shape `batch + (nse, n_sparse)`. Arithmetic operators, `@`, `.sum`,
    `.reshape`, `.astype` and indexing work through `sparsify`.
    """

    def __init__(self, args, *, shape, indices_sorted=False, unique_indices=False):
        self.data, self.indices = (jnp.asarray(a) for a in args)
        self.indices_sorted = indices_sorted
        self.unique_indices = unique_indices
        super().__init__(args, shape=shape)
        _validate_bcoo(self.data, self.indices, self.shape)

    @property
    def _info(self):
        return SparseInfo(self.shape, self.indices_sorted, self.unique_indices)

    @property
    def _bufs(self):
        return (self.data, self.indices)

    @property
    def nse(self):
        return self.indices.shape[-2]

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def n_batch(self):
        return self.indices.ndim - 2

    @property
    def n_sparse(self):
        return self.indices.shape[-1]

    @property
    def n_dense(self):
        return self.data.ndim - 1 - self.n_batch

    def __repr__(self):
        return sparse_repr(self, batched=True)

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32, n_dense=0, n_batch=0):
        """A BCOO array of the dense array `mat`."""
        return bcoo_fromdense(
            mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense, n_batch=n_batch
        )

    @classmethod
    def from_scipy_sparse(cls, mat, *, index_dtype=None, n_dense=0, n_batch=0):
        """A BCOO array of a `scipy.sparse` matrix (its entries as stored)."""
        if n_dense != 0 or n_batch != 0:
            raise NotImplementedError("BCOO.fromscipy with nonzero n_dense/n_batch")
        mat = mat.tocoo()
        data = jnp.asarray(mat.data)
        indices = jnp.asarray(
            np.column_stack((mat.row, mat.col)), dtype=index_dtype or np.int32
        )
        return cls((data, indices), shape=mat.shape)

    @classmethod
    def _empty(
        cls, shape, *, dtype=None, index_dtype="int32", n_dense=0, n_batch=0, nse=0
    ):
        """An all-zero BCOO array (public: `sparse.empty`)."""
        shape = tuple(shape)
        n_sparse = len(shape) - n_dense - n_batch
        if n_sparse < 0 or n_dense < 0 or n_batch < 0 or nse < 0:
            raise ValueError(
                f"Invalid inputs: shape={shape}, n_dense={n_dense}, n_batch={n_batch}, "
                f"nse={nse}"
            )
        batch_shape = shape[:n_batch]
        sparse_shape = shape[n_batch : n_batch + n_sparse]
        dense_shape = shape[n_batch + n_sparse :]
        data = jnp.zeros((*batch_shape, nse, *dense_shape), dtype)
        indices = jnp.broadcast_to(
            jnp.array(sparse_shape, dtype=index_dtype), (*batch_shape, nse, n_sparse)
        )
        return cls(
            (data, indices), shape=shape, indices_sorted=True, unique_indices=True
        )

    @classmethod
    def _eye(cls, N, M, k, *, dtype=None, index_dtype="int32", n_batch=0, n_dense=0):
        """The N x M matrix with ones on diagonal k (public: `sparse.eye`)."""
        if 2 - n_batch - n_dense < 0 or n_dense < 0 or n_batch < 0:
            raise ValueError(
                f"Invalid inputs: shape={(N, M)}, n_dense={n_dense}, n_batch={n_batch}"
            )
        diag_size = min(N, M - k) if k > 0 else min(N + k, M)
        if diag_size <= 0:
            return cls._empty(
                (N, M),
                dtype=dtype,
                index_dtype=index_dtype,
                n_batch=n_batch,
                n_dense=n_dense,
            )
        if n_dense > 0 or n_batch > 1:
            return cls.fromdense(
                jnp.eye(N, M, k, dtype=dtype),
                n_batch=n_batch,
                n_dense=n_dense,
                index_dtype=index_dtype,
            )
        if n_batch == 0:
            idx = np.arange(diag_size)
            rows, cols = idx - min(k, 0), idx + max(k, 0)
            data = jnp.ones(diag_size, dtype=dtype)
            indices = jnp.asarray(np.column_stack([rows, cols]), dtype=index_dtype)
        else:
            cols = np.arange(N) + k
            valid = (cols >= 0) & (cols < M)
            data = jnp.where(valid, jnp.ones(N, dtype=dtype), 0)[:, None]
            indices = jnp.asarray(np.where(valid, cols, M)[:, None, None], index_dtype)
        return cls(
            (data, indices), shape=(N, M), indices_sorted=True, unique_indices=True
        )

    def update_layout(self, *, n_batch=None, n_dense=None, on_inefficient="error"):
        """This array with `n_batch` batch and `n_dense` dense dimensions."""
        return bcoo_update_layout(
            self, n_batch=n_batch, n_dense=n_dense, on_inefficient=on_inefficient
        )

    def sum_duplicates(self, nse=None, remove_zeros=True):
        """This array with duplicates summed, indices sorted and (by default)
        explicit zeros removed; pass `nse` under `jit`."""
        if remove_zeros:
            return bcoo_eliminate_zeros(self, nse=nse)
        return bcoo_sum_duplicates(self, nse=nse)

    def sort_indices(self):
        """This array with its indices sorted."""
        return bcoo_sort_indices(self)

    def todense(self):
        """The dense array."""
        return bcoo_todense(self)

    def transpose(self, axes=None):
        """The transposed array (reversed axes by default)."""
        perm = list(range(self.ndim)[::-1] if axes is None else axes)
        return bcoo_transpose(self, permutation=perm)

    # Defined in transform.py, through `sparsify`.
    def reshape(self, *args, **kwargs):
        raise NotImplementedError("BCOO.reshape")

    def astype(self, *args, **kwargs):
        raise NotImplementedError("BCOO.astype")

    def tree_flatten(self):
        return (self.data, self.indices), self._info._asdict()

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        obj = object.__new__(cls)
        obj.data, obj.indices = children
        if aux_data.keys() != {"shape", "indices_sorted", "unique_indices"}:
            raise ValueError(f"BCOO.tree_unflatten: invalid aux_data={aux_data}")
        obj.__dict__.update(**aux_data)
        return obj


# --------------------------------------------------------------------------------------
# vmap maps a sparse array along one of its batch dimensions


def sparse_to_elt(mat, axis):
    """`vmap` in: the element type of `mat` mapped along batch axis `axis` (a buffer
    whose batch dimension there is shared, of size 1, is squeezed and not mapped)."""
    axis = operator.index(axis)
    if axis < 0:
        axis += mat.ndim
    if not 0 <= axis < mat.n_batch:
        raise ValueError(
            f"Cannot map in_axis={axis} for {type(mat).__name__} array with "
            f"n_batch={mat.n_batch}. in_axes for batched {type(mat).__name__} "
            "operations must correspond to a batch dimension."
        )
    leaves, axes = [], []
    for buf in mat.tree_flatten()[0]:
        if buf.shape[axis] == 1 and mat.shape[axis] != 1:
            leaves.append(lax.squeeze(buf, (axis,)))
            axes.append(None)
        else:
            leaves.append(buf)
            axes.append(axis)
    aux = dict(mat._info._asdict(), shape=(*mat.shape[:axis], *mat.shape[axis + 1 :]))
    return type(mat).tree_unflatten(aux, leaves), axes


def sparse_from_elt(mat, axis_size, axis):
    """`vmap` out: the sparse array whose buffers carry the new batch axis `axis`."""
    n_batch = mat.n_batch - 1  # the buffers already have the new axis
    axis = operator.index(axis)
    if axis < 0:
        axis += len(mat.shape) + 1
    if not 0 <= axis <= n_batch:
        raise ValueError(
            f"{type(mat).__name__}: cannot add out_axis={axis} for "
            f"{type(mat).__name__} array with n_batch={n_batch}. "
            f"{type(mat).__name__} batch axes must be a contiguous block of leading "
            "dimensions."
        )
    aux = dict(
        mat._info._asdict(), shape=(*mat.shape[:axis], axis_size, *mat.shape[axis:])
    )
    return type(mat).tree_unflatten(aux, mat.tree_flatten()[0])


register_vmappable(BCOO, sparse_to_elt, sparse_from_elt)
