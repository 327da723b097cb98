"""`jax._src.checkify` for `jaxlite.install_as_jax()` only: jaxlite's
`experimental.checkify` (flax.nnx wraps it), with the type variable `Out` JAX's
signatures use."""

from typing import TypeVar

from jaxlite.experimental.checkify import Error, JaxException, checkify, user_checks

Out = TypeVar("Out")

__all__ = ["Error", "JaxException", "Out", "checkify", "user_checks"]
