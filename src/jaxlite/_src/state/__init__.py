"""`jax._src.state` for `jaxlite.install_as_jax()` only: the aval of a mutable array
reference, `AbstractRef` (flax.nnx tells references by it)."""

from jaxlite._src.state import types
from jaxlite.state.types import AbstractRef

__all__ = ["AbstractRef", "types"]
