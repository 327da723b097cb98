"""`jax._src.ad_util` for `jaxlite.install_as_jax()` only: `stop_gradient_p`, the
primitive `lax.stop_gradient` binds (lineax registers a transpose rule for it)."""

from jaxlite.lax import stop_gradient_p

__all__ = ["stop_gradient_p"]
