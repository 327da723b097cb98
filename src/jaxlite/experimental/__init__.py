"""`jaxlite.experimental`: APIs that JAX keeps under `jax.experimental`.

For now that is `io_callback`, the host callback with side effects (see
`jaxlite.lax.callbacks`), and the `checkify` module (runtime checks that survive `jit`).
"""

from jaxlite.experimental import checkify
from jaxlite.lax.callbacks import io_callback

__all__ = ["checkify", "io_callback"]
