"""The native backend: a jaxpr becomes machine code through LLVM (llvmlite).

The second tier beside the NumPy backend. A closed jaxpr (every shape static) becomes
one LLVM function (`compiler.py`): elementwise chains fused into loop nests, small
values in registers, `while`/`scan`/`cond` as native control flow. It is optimised and
compiled in-process (`engine.py`) and called on NumPy buffers without copies.

`lax/` says how each primitive compiles by registering an op name here, as it
registers a NumPy expression for the first tier: `native_rules[sin_p] = "sin"`. The
names are those of the backend's ops (`compiler.OPS`, and `scalar.Elemental`'s
methods for elementwise ones). A jaxpr with a primitive, dtype or size the backend
does not compile is left to the NumPy backend (`compile` returns None), and the reason
is logged when `jaxlite_native_log` is on.

llvmlite is optional: nothing here imports it until a jaxpr is compiled, and without
it every jaxpr stays on the NumPy tier.
"""

from __future__ import annotations

import importlib.util
import logging
import math

from jaxlite.core import ShapedArray
from jaxlite.util import gc_paused

native_rules: dict = {}

log = logging.getLogger("jaxlite.backend.native")


class Unsupported(Exception):
    """Raised while emitting a jaxpr the native backend does not compile."""


_available = None


def available() -> bool:
    """Whether llvmlite is installed (once; the answer is cached). Importing it takes
    40-60 ms, so it is only looked for here: the first compile imports it."""
    global _available
    if _available is None:
        try:
            _available = importlib.util.find_spec("llvmlite") is not None
        except (ImportError, ValueError):  # ValueError: sys.modules["llvmlite"] = None
            _available = False
    return _available


def _import_llvmlite():
    """Import llvmlite, or record that it cannot be (then nothing compiles)."""
    global _available
    try:
        import llvmlite.binding  # noqa: F401
    except ImportError:
        _available = False
    return _available


def compile(closed, name="jaxpr_fun"):
    """`closed` compiled to a `NativeExecutable` (cached on it), or None when the
    native backend cannot compile it (that answer is cached too; the reason is logged
    when `jaxlite_native_log` is on)."""
    cached = closed._native
    if cached is None:
        with gc_paused():
            cached = closed._native = _compile(closed, name)
    return cached if cached is not False else None


# Multiply-adds of the largest `dot_general` compiled natively; larger products stay
# on the NumPy tier, where they are one BLAS call.
DOT_LIMIT = 1 << 22


def refusal(jaxpr):
    """Why the native backend will not compile `jaxpr`, as far as the jaxpr alone
    tells (a primitive without a native rule, a product over `DOT_LIMIT`), or None.
    Checked before llvmlite is imported: a jaxpr that cannot compile costs neither
    its import time nor its memory."""
    from jaxlite.core import subjaxprs

    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    for v in (*jaxpr.constvars, *jaxpr.invars):
        if not isinstance(v.aval, ShapedArray):
            return f"a {v.aval} input: mutable array references run on NumPy"
    for eqn in jaxpr.eqns:
        if eqn.primitive not in native_rules:
            return f"no native rule for primitive {eqn.primitive.name}"
        if eqn.primitive.name == "dot_general":
            (contract, _), _ = eqn.params["dimension_numbers"]
            lhs = eqn.invars[0].aval.shape
            macs = math.prod(eqn.outvars[0].aval.shape) * math.prod(
                lhs[d] for d in contract
            )
            if macs > DOT_LIMIT:
                return f"dot_general of {lhs} and {eqn.invars[1].aval.shape}: large products run on BLAS"
        for inner in subjaxprs(eqn.params):
            reason = refusal(inner)
            if reason is not None:
                return reason
    return None


def _compile(closed, name):
    from jaxlite.config import config

    values = config.current().values
    verbose = values["jaxlite_native_log"]
    if not available():
        return False
    reason = refusal(closed)
    if reason is not None:
        if verbose:
            log.warning("left to NumPy: %s", reason)
        return False
    if not _import_llvmlite():
        return False
    from jaxlite.backend.native.compiler import FunctionCompiler
    from jaxlite.backend.native.engine import NativeExecutable, compile_ir

    # Prefixed: a function named after a C library one (`erf`, `exp`) would shadow it.
    label, name = name, "jaxlite_" + "".join(c if c.isalnum() else "_" for c in name)
    try:
        fc = FunctionCompiler(closed, name)
        text = fc.compile_ir()
    except Unsupported as e:
        if verbose:
            log.warning("left to NumPy: %s", e)
        return False
    cache_dir = values["jax_compilation_cache_dir"]
    cfunc, optimized, cached = compile_ir(text, name, cache_dir)
    if verbose:
        how = "loaded from the compilation cache" if cached else "compiled natively"
        log.warning("%s: %s (%d equations)", how, label, len(closed.eqns))
    return NativeExecutable(cfunc, optimized, closed, fc.consts)
