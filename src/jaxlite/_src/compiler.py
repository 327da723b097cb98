"""`jax._src.compiler` for `jaxlite.install_as_jax()` only.

chex imports the module to patch JAX's XLA compile entry point
(`backend_compile_and_load`) in `chex.restrict_backends`. jaxlite compiles for one
backend, the CPU, through `jaxlite.backend.compile`, and has no XLA compile entry
point, so the module is empty: `chex.restrict_backends` finds nothing to patch and
restricts nothing (as chex does for a JAX without that function).
"""

__all__: list[str] = []
