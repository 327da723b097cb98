"""Format-independent entry points: `todense`, `empty`, `eye`.

`todense` of a sparse array is its `todense()` method. Of a dense array it is the
identity, but written as the primitive `todense_p`, so that a function traced for
`sparsify` (which sees its sparse arguments as dense tracers) records where the user
asked for a dense value; the `sparsify` interpreter then densifies there. The
primitive is the identity in every other interpreter (linear, vectorised, a name in
generated code).
"""

from __future__ import annotations

import operator

import numpy as np

import jaxlite.numpy as jnp
from jaxlite.backend import lowering_rules
from jaxlite.backend.native import native_rules
from jaxlite.backend.numpy_backend import inline
from jaxlite.core import (
    Primitive,
    abstract_eval_rules,
    concrete_or_error,
    impl_rules,
    no_effects,
)
from jaxlite.experimental.sparse._base import JAXSparse
from jaxlite.experimental.sparse.bcoo import BCOO
from jaxlite.experimental.sparse.bcsr import BCSR
from jaxlite.interpreters import ad, batching

__all__ = ["empty", "eye", "todense", "todense_p"]


def _todense_transpose(ct, x):
    return [None if type(ct) is ad.Zero else todense_p.bind(ct)]


todense_p = Primitive("todense")
impl_rules[todense_p] = lambda x: [np.asarray(x)]
abstract_eval_rules[todense_p] = lambda x: ([x], no_effects)
lowering_rules[todense_p] = inline("{0}")
native_rules[todense_p] = "identity"
ad.deflinear(todense_p, _todense_transpose)
batching.defvectorized(todense_p)


def todense(arr):
    """The dense array of `arr`; a dense array passes through."""
    if isinstance(arr, JAXSparse):
        return arr.todense()
    return todense_p.bind(jnp.asarray(arr))


_FORMATS = {"bcoo": BCOO, "bcsr": BCSR}


def empty(shape, dtype=None, index_dtype="int32", sparse_format="bcoo", **kwds):
    """An all-zero sparse array of `shape` (`sparse_format` "bcoo" or "bcsr";
    `**kwds` such as `n_batch`, `n_dense`, `nse` go to the format)."""
    if sparse_format not in _FORMATS:
        raise ValueError(
            f"sparse_format={sparse_format!r} not recognized; must be one of "
            f"{list(_FORMATS)}"
        )
    cls = _FORMATS[sparse_format]
    return cls._empty(tuple(shape), dtype=dtype, index_dtype=index_dtype, **kwds)


def eye(N, M=None, k=0, dtype=None, index_dtype="int32", sparse_format="bcoo", **kwds):
    """The sparse N x M matrix with ones on diagonal `k`."""
    if sparse_format not in _FORMATS:
        raise ValueError(
            f"sparse_format={sparse_format!r} not recognized; must be one of "
            f"{list(_FORMATS)}"
        )
    M = N if M is None else M
    N = concrete_or_error(operator.index, N, "The N argument of sparse.eye.")
    M = concrete_or_error(operator.index, M, "The M argument of sparse.eye.")
    k = concrete_or_error(operator.index, k, "The k argument of sparse.eye.")
    cls = _FORMATS[sparse_format]
    return cls._eye(N=N, M=M, k=k, dtype=dtype, index_dtype=index_dtype, **kwds)
