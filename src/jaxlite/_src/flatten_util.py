"""`jax._src.flatten_util` for `jaxlite.install_as_jax()` only: `ravel_pytree`
(blackjax imports it from here rather than from `jax.flatten_util`)."""

from jaxlite.flatten_util import ravel_pytree

__all__ = ["ravel_pytree"]
