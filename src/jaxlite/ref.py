"""`jax.ref`: mutable array references.

`new_ref(x)` makes a `Ref` holding a copy of `x`; `ref[idx]` reads it, `ref[idx] = v`
writes it, `ref.addupdate(v, idx)` adds into it and `freeze(ref)` gives its final
value. `get`, `set`, `swap` and `addupdate` are the same operations as functions of
`(ref, idx[, value])`. See `jaxlite.state` for how references run under `jit`, in loops
and under `grad` and `vmap`.
"""

from jaxlite.state import discharge as _discharge  # noqa: F401  (registers the hooks)
from jaxlite.state.primitives import (
    addupdate,
    empty_ref,
    free_ref,
    freeze,
    get,
    new_ref,
    set,
    swap,
)
from jaxlite.state.types import AbstractRef, Ref

__all__ = [
    "AbstractRef",
    "Ref",
    "addupdate",
    "empty_ref",
    "free_ref",
    "freeze",
    "get",
    "new_ref",
    "set",
    "swap",
]
