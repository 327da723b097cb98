"""Backends turn a jaxpr into a Python callable on NumPy values.

`compile(closed_jaxpr)` is the only entry point; the default backend (`numpy_backend`)
generates Python source, one line per equation.
"""

from jaxlite.backend.numpy_backend import compile, lowering_rules  # noqa: F401
