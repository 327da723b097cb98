"""Shared pieces of `jaxlite.experimental.sparse`: the warning and error classes, the
static description of a sparse array (`SparseInfo`), and index helpers used by both
formats (index arrays over batch dimensions, CSR to COO rows, counting stored
elements)."""

from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.core import concrete_or_error

__all__ = [
    "CuSparseEfficiencyWarning",
    "SparseEfficiencyError",
    "SparseEfficiencyWarning",
    "SparseInfo",
]


class SparseEfficiencyError(ValueError):
    """A sparse operation would store (many) more elements than it needs to."""


class SparseEfficiencyWarning(UserWarning):
    """A sparse operation stores more elements than it needs to."""


class CuSparseEfficiencyWarning(SparseEfficiencyWarning):
    """Kept for API compatibility: jaxlite has no cuSPARSE path."""


class SparseInfo(NamedTuple):
    """The static part of a sparse array: its shape and what is known of its indices."""

    shape: tuple
    indices_sorted: bool = False
    unique_indices: bool = False


def batch_iotas(batch_shape, n_trailing=1):
    """One index array per batch dimension, shaped `batch_shape + (1,) * n_trailing`:
    with the sparse index columns they address every stored element."""
    shape = (*batch_shape, *(1,) * n_trailing)
    return tuple(
        lax.broadcasted_iota(np.int32, shape, i) for i in range(len(batch_shape))
    )


def index_columns(indices):
    """The columns of BCOO `indices`, each shaped `batch + (nse,)`."""
    return tuple(indices[..., i] for i in range(indices.shape[-1]))


def csr_to_coo(indices, indptr):
    """`(row, col)` of CSR `indices`/`indptr` (one matrix, no batch dimensions)."""
    counts = jnp.zeros_like(indices).at[indptr].add(1, mode="drop")
    return jnp.cumsum(counts) - 1, indices


def count_stored_elements_per_batch(mat, n_batch=0, n_dense=0):
    """The number of stored elements each batch of a dense `mat` needs."""
    mask = jnp.asarray(mat) != 0
    if n_dense > 0:
        mask = mask.any(tuple(range(mask.ndim - n_dense, mask.ndim)))
    return mask.sum(tuple(range(n_batch, mask.ndim)))


def count_stored_elements(mat, n_batch=0, n_dense=0):
    """The nse of `mat` in BCOO form: the largest count over the batches."""
    counts = count_stored_elements_per_batch(mat, n_batch, n_dense)
    return counts.max(initial=0)


TRACED_NSE_ERROR = (
    "The error arose for the nse argument of a sparse conversion. In order for a "
    "sparse array to be created in traced or compiled code (jit, vmap, grad), pass a "
    "concrete value to the nse (number of stored elements) argument."
)


def concrete_nse(nse, what="nse"):
    """`nse` as a Python int, with a clear error when it is only known at run time."""
    return concrete_or_error(operator.index, nse, f"{TRACED_NSE_ERROR} ({what})")
