"""The interpreters: tracing to jaxprs (`partial_eval`), automatic differentiation
(`ad`) and vectorisation (`batching`); `mlir` and `xla` hold JAX's names for the
backend's tables.

As in JAX, `jax.interpreters.xla` is reachable as an attribute without an import of
its own (TFP's JAX substrate reads it so at import); it is loaded on first use.
"""

import importlib


def __getattr__(name):
    if name == "xla":
        return importlib.import_module("jaxlite.interpreters.xla")
    raise AttributeError(f"module 'jaxlite.interpreters' has no attribute {name!r}")
