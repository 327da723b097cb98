"""BCSR: batched compressed-sparse-row matrices.

A BCSR array of shape `batch + (rows, cols) + dense` stores `data` of shape
`batch + (nse,) + dense`, column `indices` of shape `batch + (nse,)` and row pointers
`indptr` of shape `batch + (rows + 1,)`: the elements of row `r` are
`indptr[r]:indptr[r + 1]`. Every operation converts to BCOO (the row of each element
from `indptr` by a cumulative count) and uses BCOO's, so values and derivatives
are those of the BCOO operations (see `bcoo.py`).
"""

from __future__ import annotations

import numpy as np

import jaxlite.numpy as jnp
from jaxlite import dtypes, tree_util
from jaxlite.api_vmap import register_vmappable
from jaxlite.experimental.sparse import bcoo
from jaxlite.experimental.sparse._base import JAXSparse, sparse_repr
from jaxlite.experimental.sparse.bcoo import sparse_from_elt, sparse_to_elt
from jaxlite.experimental.sparse.bcoo_ops import (
    bcoo_broadcast_in_dim,
    bcoo_concatenate,
    bcoo_dot_general,
)
from jaxlite.experimental.sparse.util import SparseInfo, batch_iotas

__all__ = [
    "BCSR",
    "bcsr_broadcast_in_dim",
    "bcsr_concatenate",
    "bcsr_dot_general",
    "bcsr_eliminate_zeros",
    "bcsr_extract",
    "bcsr_fromdense",
    "bcsr_sum_duplicates",
    "bcsr_todense",
]


def _compatible(shape1, shape2):
    return all(s1 in (1, s2) for s1, s2 in zip(shape1, shape2))


def _validate_bcsr_indices(indices, indptr, shape):
    if not dtypes.issubdtype(indices.dtype, np.integer) or not dtypes.issubdtype(
        indptr.dtype, np.integer
    ):
        raise TypeError("BCSR indices and indptr must be integers")
    shape = tuple(shape)
    nse = indices.shape[-1]
    n_batch = indices.ndim - 1
    n_dense = len(shape) - n_batch - 2
    if n_dense < 0:
        raise ValueError(
            f"BCSR indices of shape {indices.shape} do not fit an array of shape {shape}"
        )
    if not _compatible(indices.shape[:n_batch], shape[:n_batch]):
        raise ValueError(
            f"indices batch dimensions not compatible for indices.shape={indices.shape}, "
            f"shape={shape}"
        )
    if not _compatible(indptr.shape[:n_batch], shape[:n_batch]):
        raise ValueError(
            f"indptr batch dimensions not compatible for indptr.shape={indptr.shape}, "
            f"shape={shape}"
        )
    if tuple(indptr.shape[n_batch:]) != (shape[n_batch] + 1,):
        raise ValueError("indptr shape must match the matrix shape plus 1.")
    return n_batch, n_dense, nse


def _validate_bcsr(data, indices, indptr, shape):
    n_batch, n_dense, nse = _validate_bcsr_indices(indices, indptr, shape)
    shape = tuple(shape)
    if len(shape) - n_batch - n_dense != 2:
        raise ValueError(
            f"BCSR array must have 2 sparse dimensions; {len(shape) - n_batch - n_dense} "
            "is given."
        )
    if not _compatible(data.shape[:n_batch], shape[:n_batch]):
        raise ValueError(
            f"data batch dimensions not compatible for data.shape={data.shape}, "
            f"shape={shape}"
        )
    if tuple(data.shape[data.ndim - n_dense - 1 :]) != (nse, *shape[n_batch + 2 :]):
        raise ValueError(
            f"Invalid data.shape={data.shape} for nse={nse}, n_batch={n_batch}, "
            f"n_dense={n_dense}"
        )
    return n_batch, n_dense, nse


def _bcsr_to_bcoo(indices, indptr, *, shape):
    """BCOO indices (row, col) of BCSR `indices`/`indptr`: the row of element k is
    the number of row pointers at or before k, less one (padding past the last row
    pointer gets row `rows`, out of bounds)."""
    n_batch, _, nse = _validate_bcsr_indices(indices, indptr, shape)
    batch_shape = tuple(
        max(a, b) for a, b in zip(indices.shape[:n_batch], indptr.shape[:n_batch])
    )
    indptr = jnp.broadcast_to(indptr, (*batch_shape, indptr.shape[-1]))
    counts = jnp.zeros((*batch_shape, nse), indices.dtype)
    counts = counts.at[batch_iotas(batch_shape) + (indptr,)].add(1, mode="drop")
    rows = jnp.cumsum(counts, axis=-1).astype(indices.dtype) - 1
    cols = jnp.broadcast_to(indices, (*batch_shape, nse))
    return jnp.stack([rows, cols], axis=-1)


def _bcoo_to_bcsr(indices, *, shape, index_dtype):
    """BCSR (indices, indptr) of sorted BCOO indices with two sparse dimensions."""
    n_batch, n_sparse, _, _ = bcoo._validate_bcoo_indices(indices, shape)
    if n_sparse != 2:
        raise ValueError("Must have 2 sparse dimensions to be converted to BCSR.")
    n_rows = shape[n_batch]
    batch_shape = indices.shape[:n_batch]
    counts = jnp.zeros((*batch_shape, n_rows), index_dtype)
    counts = counts.at[batch_iotas(batch_shape) + (indices[..., 0],)].add(
        1, mode="drop"
    )
    indptr = jnp.concatenate(
        [jnp.zeros((*batch_shape, 1), index_dtype), jnp.cumsum(counts, axis=-1)],
        axis=-1,
    ).astype(index_dtype)
    return indices[..., 1], indptr


def bcsr_fromdense(mat, *, nse=None, n_batch=0, n_dense=0, index_dtype=np.int32):
    """The BCSR form of dense `mat` (pass `nse` under `jit`)."""
    mat = jnp.asarray(mat)
    if mat.ndim - n_batch - n_dense != 2:
        raise ValueError("bcsr_fromdense: must have 2 sparse dimensions.")
    return BCSR.from_bcoo(
        bcoo.bcoo_fromdense(
            mat, nse=nse, n_batch=n_batch, n_dense=n_dense, index_dtype=index_dtype
        )
    )


def bcsr_todense(mat):
    """The dense array of the BCSR array `mat`."""
    return mat.to_bcoo().todense()


def bcsr_extract(indices, indptr, mat):
    """The BCSR data of dense `mat` at the given `indices`/`indptr`."""
    mat = jnp.asarray(mat)
    coo = _bcsr_to_bcoo(jnp.asarray(indices), jnp.asarray(indptr), shape=mat.shape)
    return bcoo._bcoo_extract(coo, mat)


def bcsr_dot_general(
    lhs,
    rhs,
    *,
    dimension_numbers,
    precision=None,
    preferred_element_type=None,
    out_sharding=None,
):
    """`lax.dot_general` of a BCSR `lhs` and a dense `rhs` (dense result)."""
    if isinstance(rhs, JAXSparse):
        raise NotImplementedError(
            "bcsr_dot_general currently implemented for BCSR lhs and ndarray rhs."
        )
    if isinstance(lhs, BCSR):
        lhs = lhs.to_bcoo()
    return bcoo_dot_general(
        lhs,
        rhs,
        dimension_numbers=dimension_numbers,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def bcsr_eliminate_zeros(mat, nse=None):
    """`mat` without explicitly stored zeros (duplicates summed)."""
    return BCSR.from_bcoo(bcoo.bcoo_eliminate_zeros(mat.to_bcoo(), nse=nse))


def bcsr_sum_duplicates(mat, nse=None):
    """`mat` with duplicate indices summed and indices sorted."""
    return BCSR.from_bcoo(bcoo.bcoo_sum_duplicates(mat.to_bcoo(), nse=nse))


def bcsr_broadcast_in_dim(mat, *, shape, broadcast_dimensions, sharding=None):
    """`lax.broadcast_in_dim` of a BCSR array."""
    return BCSR.from_bcoo(
        bcoo_broadcast_in_dim(
            mat.to_bcoo(), shape=shape, broadcast_dimensions=broadcast_dimensions
        )
    )


def bcsr_concatenate(operands, *, dimension):
    """`lax.concatenate` of BCSR arrays along a batch or sparse dimension."""
    return BCSR.from_bcoo(
        bcoo_concatenate([m.to_bcoo() for m in operands], dimension=dimension)
    )


@tree_util.register_pytree_node_class
class BCSR(JAXSparse):
    """A batched CSR sparse matrix (see the module docstring)."""

    def __init__(self, args, *, shape, indices_sorted=False, unique_indices=False):
        self.data, self.indices, self.indptr = (jnp.asarray(a) for a in args)
        self.indices_sorted = indices_sorted
        self.unique_indices = unique_indices
        super().__init__(args, shape=shape)
        _validate_bcsr(self.data, self.indices, self.indptr, self.shape)

    @property
    def _bufs(self):
        return (self.data, self.indices, self.indptr)

    @property
    def _info(self):
        return SparseInfo(self.shape, self.indices_sorted, self.unique_indices)

    @property
    def nse(self):
        return self.indices.shape[-1]

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def n_batch(self):
        return self.indices.ndim - 1

    @property
    def n_sparse(self):
        return 2

    @property
    def n_dense(self):
        return self.data.ndim - self.indices.ndim

    @property
    def _sparse_shape(self):
        return tuple(self.shape[self.n_batch : self.n_batch + 2])

    def __repr__(self):
        return sparse_repr(self, batched=True)

    def transpose(self, *args, **kwargs):
        raise NotImplementedError("Transpose is not implemented.")

    def tree_flatten(self):
        return (self.data, self.indices, self.indptr), self._info._asdict()

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        obj = object.__new__(cls)
        obj.data, obj.indices, obj.indptr = children
        if aux_data.keys() != {"shape", "indices_sorted", "unique_indices"}:
            raise ValueError(f"BCSR.tree_unflatten: invalid aux_data={aux_data}")
        obj.__dict__.update(**aux_data)
        return obj

    @classmethod
    def _empty(
        cls, shape, *, dtype=None, index_dtype="int32", n_dense=0, n_batch=0, nse=0
    ):
        """An all-zero BCSR array (public: `sparse.empty`)."""
        shape = tuple(shape)
        if n_dense < 0 or n_batch < 0 or nse < 0:
            raise ValueError(
                f"Invalid inputs: shape={shape}, n_dense={n_dense}, n_batch={n_batch}, "
                f"nse={nse}"
            )
        if len(shape) - n_dense - n_batch != 2:
            raise ValueError("BCSR sparse.empty: must have 2 sparse dimensions.")
        batch_shape = shape[:n_batch]
        rows, cols = shape[n_batch : n_batch + 2]
        data = jnp.zeros((*batch_shape, nse, *shape[n_batch + 2 :]), dtype)
        indices = jnp.full((*batch_shape, nse), cols, index_dtype)
        indptr = jnp.zeros((*batch_shape, rows + 1), index_dtype)
        return cls((data, indices, indptr), shape=shape)

    @classmethod
    def _eye(cls, N, M, k, *, dtype=None, index_dtype="int32", n_batch=0, n_dense=0):
        return cls.from_bcoo(
            bcoo.BCOO._eye(
                N,
                M,
                k,
                dtype=dtype,
                index_dtype=index_dtype,
                n_batch=n_batch,
                n_dense=n_dense,
            )
        )

    def sum_duplicates(self, nse=None, remove_zeros=True):
        """This array with duplicates summed (and by default zeros removed)."""
        if remove_zeros:
            return bcsr_eliminate_zeros(self, nse=nse)
        return bcsr_sum_duplicates(self, nse=nse)

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32, n_dense=0, n_batch=0):
        """A BCSR array of the dense array `mat`."""
        return bcsr_fromdense(
            mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense, n_batch=n_batch
        )

    def todense(self):
        """The dense array."""
        return bcsr_todense(self)

    def to_bcoo(self):
        """The same array in BCOO form."""
        indices = _bcsr_to_bcoo(self.indices, self.indptr, shape=self.shape)
        return bcoo.BCOO((self.data, indices), shape=self.shape)

    @classmethod
    def from_bcoo(cls, arr):
        """The BCSR form of a BCOO array with two sparse dimensions."""
        if arr.n_sparse != 2:
            raise NotImplementedError(
                f"BSCR.from_bcoo requires n_sparse=2; got arr.n_sparse={arr.n_sparse}"
            )
        if not arr.indices_sorted:
            arr = arr.sort_indices()
        indices, indptr = _bcoo_to_bcsr(
            arr.indices, shape=arr.shape, index_dtype=arr.indices.dtype
        )
        return cls((arr.data, indices, indptr), shape=arr.shape)

    @classmethod
    def from_scipy_sparse(cls, mat, *, index_dtype=None, n_dense=0, n_batch=0):
        """A BCSR array of a `scipy.sparse` matrix."""
        if n_dense != 0 or n_batch != 0:
            raise NotImplementedError(
                "BCSR from_scipy_sparse with nonzero n_dense/n_batch."
            )
        if mat.ndim != 2:
            raise ValueError(
                f"BCSR from_scipy_sparse requires 2D array; {mat.ndim}D is given."
            )
        mat = mat.tocsr()
        index_dtype = index_dtype or np.int32
        data = jnp.asarray(mat.data)
        indices = jnp.asarray(mat.indices, dtype=index_dtype)
        indptr = jnp.asarray(mat.indptr, dtype=index_dtype)
        return cls((data, indices, indptr), shape=mat.shape)


register_vmappable(BCSR, sparse_to_elt, sparse_from_elt)
