"""Backends turn a jaxpr into a Python callable on NumPy values.

`compile(closed_jaxpr)` is the only entry point. The first tier (`numpy_backend`)
generates Python source, one line per equation; the second (`native`) compiles to
machine code through LLVM. `tiering` decides which runs what: by default code starts on
NumPy, and hot loops and hot jitted functions move to native code; `jaxlite_backend="native"`
compiles whole jaxprs natively where it can. `lowering` holds what backends share: the
rule registry, the context a rule sees, `inline` and the call-lowering helper.
"""

from jaxlite.backend import native, numpy_backend, tiering
from jaxlite.backend.lowering import inline, lowering_rules
from jaxlite.backend.native import native_rules
from jaxlite.interpreters.physical import physicalize


def compile(closed, name="jaxpr_fun", tiered=False):
    """`closed` (a ClosedJaxpr) as an executable: `exe(*args) -> list of outputs`,
    with `.entry` (the function a call runs), `.fun` (to call from generated code)
    and `.source` (what runs).

    `tiered` (for `jit`'s executables, called again and again): under the "auto"
    policy the executable starts on NumPy and moves to native code once it is hot
    and native code proves faster (`tiering.TieredFunction`); its `.entry` changes
    then, so callers read it at each call.

    Keys (values of an extended dtype) are passed and returned as their stored
    uint32 data: a jaxpr over keys is first rewritten over that data
    (`interpreters.physical`)."""
    closed = physicalize(closed)
    policy = tiering.mode()
    if policy == "native":
        exe = native.compile(closed, name)
        if exe is not None:
            return exe
    exe = numpy_backend.compile(closed, name)
    if tiered and policy == "auto" and tiering.work(closed) > 0:
        return tiering.TieredFunction(exe, closed, name)
    return exe


from jaxlite.backend import memory as _memory  # noqa: E402
from jaxlite.config import config as _config  # noqa: E402

_memory.install(_config)

# The interpreters own `add_any` (tangent accumulation) but sit below the backend:
# its lowering is registered here, where the lowering registry lives.
from jaxlite.interpreters.ad import add_any_p as _add_any_p  # noqa: E402

lowering_rules[_add_any_p] = inline("np.add({}, {})")
native_rules[_add_any_p] = "add_any"
