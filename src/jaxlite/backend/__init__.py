"""Backends turn a jaxpr into a Python callable on NumPy values.

`compile(closed_jaxpr)` is the only entry point; the default backend (`numpy_backend`)
generates Python source, one line per equation. `lowering` holds what backends share:
the rule registry, the context a rule sees, `inline` and the call-lowering helper.
"""

from jaxlite.backend.lowering import inline, lowering_rules
from jaxlite.backend.numpy_backend import compile  # noqa: F401
from jaxlite.backend import memory as _memory  # noqa: E402
from jaxlite.config import config as _config  # noqa: E402

_memory.install(_config)

# The interpreters own `add_any` (tangent accumulation) but sit below the backend:
# its lowering is registered here, where the lowering registry lives.
from jaxlite.interpreters.ad import add_any_p as _add_any_p  # noqa: E402

lowering_rules[_add_any_p] = inline("np.add({}, {})")
