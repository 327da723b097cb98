"""`jaxlite.experimental`: APIs that JAX keeps under `jax.experimental`.

For now that is `io_callback`, the host callback with side effects (see
`jaxlite.lax.callbacks`).
"""

from jaxlite.lax.callbacks import io_callback

__all__ = ["io_callback"]
