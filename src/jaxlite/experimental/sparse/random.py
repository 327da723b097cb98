"""`random_bcoo`: random BCOO arrays for tests and examples."""

from __future__ import annotations

import math
import operator

import numpy as np

import jaxlite.numpy as jnp
from jaxlite import dtypes
from jaxlite import random as jrandom
from jaxlite.experimental.sparse.bcoo import BCOO

__all__ = ["random_bcoo"]


def random_bcoo(
    key,
    shape,
    *,
    dtype=None,
    indices_dtype=None,
    nse=0.2,
    n_batch=0,
    n_dense=0,
    unique_indices=True,
    sorted_indices=False,
    generator=jrandom.uniform,
    **kwds,
):
    """A random BCOO array: `nse` stored elements per batch (a fraction of the
    sparse size when 0 < nse < 1) at random (by default distinct) indices, values
    from `generator(key, shape=..., dtype=..., **kwds)`."""
    shape = tuple(operator.index(s) for s in shape)
    n_batch = operator.index(n_batch)
    n_dense = operator.index(n_dense)
    if n_batch < 0 or n_dense < 0 or n_batch + n_dense > len(shape):
        raise ValueError(
            f"Invalid n_batch={n_batch}, n_dense={n_dense} for shape={shape}"
        )
    n_sparse = len(shape) - n_batch - n_dense
    batch_shape = shape[:n_batch]
    sparse_shape = shape[n_batch : n_batch + n_sparse]
    dense_shape = shape[n_batch + n_sparse :]
    batch_size = math.prod(batch_shape)
    sparse_size = math.prod(sparse_shape)
    if not 0 <= nse < sparse_size:
        raise ValueError(f"got nse={nse}, expected to be between 0 and {sparse_size}")
    if 0 < nse < 1:
        nse = int(math.ceil(nse * sparse_size))
    nse = operator.index(nse)
    dtype = dtypes.default_float_dtype() if dtype is None else dtype
    if indices_dtype is None:
        indices_dtype = dtypes.default_int_dtype()
    if sparse_size > np.iinfo(indices_dtype).max:
        raise ValueError(
            f"indices_dtype={indices_dtype} does not have enough range to generate "
            f"sparse indices of size {sparse_size}."
        )
    keys = jrandom.split(key, batch_size + 1)
    data = generator(
        keys[0], shape=(*batch_shape, nse, *dense_shape), dtype=dtype, **kwds
    )
    rows = []
    for k in range(batch_size):
        if not sparse_shape:
            rows.append(jnp.zeros((nse, 0), indices_dtype))
            continue
        flat = jrandom.choice(
            keys[k + 1], sparse_size, shape=(nse,), replace=not unique_indices
        ).astype(indices_dtype)
        rows.append(jnp.stack(jnp.unravel_index(flat, sparse_shape), axis=-1))
    indices = (
        jnp.stack(rows).reshape((*batch_shape, nse, n_sparse)).astype(indices_dtype)
    )
    mat = BCOO((data, indices), shape=shape)
    return mat.sort_indices() if sorted_indices else mat
