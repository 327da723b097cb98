"""`jaxlite.experimental`: APIs that JAX keeps under `jax.experimental`.

For now that is `io_callback`, the host callback with side effects (see
`jaxlite.lax.callbacks`), the `checkify` module (runtime checks that survive `jit`),
and the `sparse` module (sparse arrays and `sparsify`), imported on first use.
"""

from jaxlite.experimental import checkify
from jaxlite.lax.callbacks import io_callback

__all__ = ["checkify", "io_callback", "sparse"]


def __getattr__(name):
    # `jaxlite.experimental.sparse` without importing it at `import jaxlite`.
    if name == "sparse":
        import importlib

        return importlib.import_module("jaxlite.experimental.sparse")
    raise AttributeError(f"module 'jaxlite.experimental' has no attribute {name!r}")
