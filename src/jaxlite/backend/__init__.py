"""Backends turn a jaxpr into a Python callable on NumPy values.

`compile(closed_jaxpr)` is the only entry point; the default backend (`numpy_backend`)
generates Python source, one line per equation.
"""

from jaxlite.backend.numpy_backend import compile, lowering_rules  # noqa: F401
from jaxlite.backend import memory as _memory  # noqa: E402
from jaxlite.config import config as _config  # noqa: E402

_memory.install(_config)
