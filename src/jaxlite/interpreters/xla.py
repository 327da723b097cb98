"""`jax.interpreters.xla`: what remains of JAX's module of that name.

JAX 0.10 keeps three names here: `canonicalize_dtype_handlers` (the table of how a
Python type becomes a value of a canonical dtype, which TFP's JAX substrate reads
and extends at import for its `Variable`), `apply_primitive` (run one primitive on
concrete values) and `Backend` (the XLA client class). jaxlite has no XLA client,
so `Backend` is left out; the table is core's `canonicalize_value_handlers`, which
jaxlite consults for a type it does not know (see core).
"""

from __future__ import annotations

from jaxlite.core import canonicalize_value_handlers as canonicalize_dtype_handlers

__all__ = ["apply_primitive", "canonicalize_dtype_handlers"]


def apply_primitive(prim, *args, **params):
    """`prim` applied to concrete values outside any transformation."""
    return prim.impl(*args, **params)
