"""`jax.extend`: JAX's API for extending it (JEP 15856), on jaxlite.

Libraries that define their own primitives or trace functions themselves (equinox,
flax, numpyro, distrax) reach JAX's internals through these modules:

- `core`: `Primitive` (jaxlite's, taking its rules in JAX's conventions), jaxprs and
  their parts, `primitives` (JAX's primitives by name), and the queries libraries ask
  about the trace state (`get_opaque_trace_state`, `find_top_trace`, ...);
- `linear_util`: `WrappedFun`, `wrap_init` and transformations of wrapped functions;
- `source_info_util`: where an equation came from in the user's program.

The rules of such a primitive go in the interpreters' tables through JAX's names:
`jax.interpreters.ad.primitive_jvps`, `.primitive_transposes`,
`jax.interpreters.batching.primitive_batchers`, and `jax.interpreters.mlir.
register_lowering(prim, mlir.lower_fun(fun))`. Like JAX's, this API may change between
releases.
"""

from jaxlite.extend import core, linear_util, source_info_util

__all__ = ["core", "linear_util", "source_info_util"]
