"""`jax._src.state.types` for `jaxlite.install_as_jax()` only: `AbstractRef`, the aval
of a mutable array reference (`from jax._src.state.types import AbstractRef`, as
flax.nnx imports it)."""

from jaxlite.state.types import AbstractRef

__all__ = ["AbstractRef"]
