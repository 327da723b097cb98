"""`jaxlite.experimental.sparse`: JAX's experimental sparse arrays.

`BCOO` (batched coordinate format) and `BCSR` (batched compressed rows) arrays are
pytrees of their buffers, usable under `jit`, `vmap` and `grad` (with respect to
their `data`). `sparsify` runs a function written with `jax.numpy` on sparse
arguments, keeping results sparse where a sparse rule exists; the arithmetic
operators and `@` of the arrays are defined through it. The operations are written
with `jax.numpy`/`lax` operations rather than as primitives of their own (see
`bcoo.py`). Not provided: the legacy `COO`/`CSR`/`CSC` classes and their
`coo_*`/`csr_*` functions, the per-operation primitives (`bcoo_dot_general_p`, ...),
`bcoo_gather`, `bcoo_dynamic_slice`, `bcoo_conv_general_dilated`, sparse `linalg`
(`spsolve`, `lobpcg_standard`) and the tracer-based `sparsify`.
"""

from jaxlite.experimental.sparse.ad import (
    grad,
    jacfwd,
    jacobian,
    jacrev,
    value_and_grad,
)
from jaxlite.experimental.sparse._base import JAXSparse
from jaxlite.experimental.sparse.bcoo import (
    BCOO,
    bcoo_eliminate_zeros,
    bcoo_extract,
    bcoo_fromdense,
    bcoo_sort_indices,
    bcoo_sum_duplicates,
    bcoo_todense,
    bcoo_transpose,
    bcoo_update_layout,
)
from jaxlite.experimental.sparse.bcoo_ops import (
    bcoo_broadcast_in_dim,
    bcoo_concatenate,
    bcoo_dot_general,
    bcoo_dot_general_sampled,
    bcoo_multiply_dense,
    bcoo_multiply_sparse,
    bcoo_reduce_sum,
    bcoo_reshape,
    bcoo_rev,
    bcoo_slice,
    bcoo_squeeze,
)
from jaxlite.experimental.sparse.bcsr import (
    BCSR,
    bcsr_broadcast_in_dim,
    bcsr_concatenate,
    bcsr_dot_general,
    bcsr_eliminate_zeros,
    bcsr_extract,
    bcsr_fromdense,
    bcsr_sum_duplicates,
    bcsr_todense,
)
from jaxlite.experimental.sparse.api import empty, eye, todense, todense_p
from jaxlite.experimental.sparse.random import random_bcoo
from jaxlite.experimental.sparse.transform import SparseTracer, sparsify
from jaxlite.experimental.sparse.util import (
    CuSparseEfficiencyWarning,
    SparseEfficiencyError,
    SparseEfficiencyWarning,
)

__all__ = [
    "BCOO",
    "BCSR",
    "CuSparseEfficiencyWarning",
    "JAXSparse",
    "SparseEfficiencyError",
    "SparseEfficiencyWarning",
    "SparseTracer",
    "bcoo_broadcast_in_dim",
    "bcoo_concatenate",
    "bcoo_dot_general",
    "bcoo_dot_general_sampled",
    "bcoo_eliminate_zeros",
    "bcoo_extract",
    "bcoo_fromdense",
    "bcoo_multiply_dense",
    "bcoo_multiply_sparse",
    "bcoo_reduce_sum",
    "bcoo_reshape",
    "bcoo_rev",
    "bcoo_slice",
    "bcoo_sort_indices",
    "bcoo_squeeze",
    "bcoo_sum_duplicates",
    "bcoo_todense",
    "bcoo_transpose",
    "bcoo_update_layout",
    "bcsr_broadcast_in_dim",
    "bcsr_concatenate",
    "bcsr_dot_general",
    "bcsr_eliminate_zeros",
    "bcsr_extract",
    "bcsr_fromdense",
    "bcsr_sum_duplicates",
    "bcsr_todense",
    "empty",
    "eye",
    "grad",
    "jacfwd",
    "jacobian",
    "jacrev",
    "random_bcoo",
    "sparsify",
    "todense",
    "todense_p",
    "value_and_grad",
]
