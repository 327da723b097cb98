"""Mutable array references (`jax.Ref`, `jax.new_ref`): state inside JAX programs.

A `Ref` holds an array that can be read and written in place: `ref[idx]` reads,
`ref[idx] = v` writes, `ref.addupdate(v, idx)` adds into it, `jax.freeze(ref)` gives
its final value. Refs flow through `jit` (a function may take them as arguments or
close over them, and writes happen in place), through the bodies of `scan`,
`fori_loop`, `while_loop` and `cond`, and through `grad` and `vmap` where JAX
supports them.

The package is layered like the rest of jaxlite:

- `types` (core layer): the aval `AbstractRef`, the value class `Ref`, the effects
  of reading and writing, and the hook tables that the traces below `lax/` consult;
- `indexing` (core layer): `RefIndexer`, a static description of an index, its
  NumPy semantics and its printed form;
- `primitives`: `get`, `swap`, `addupdate`, `new_ref`, `freeze` (and `empty_ref`,
  `free_ref`) with all their rules;
- `discharge`: turning a jaxpr that reads and writes references into a pure one
  that takes and returns their values, which transformations of loops use.

This module only re-exports the types, so that lower layers may import the package.
"""

from jaxlite.state.types import AbstractRef, Ref

__all__ = ["AbstractRef", "Ref"]
