"""How a primitive defined outside jaxlite compiles (JAX's `jax.interpreters.mlir`).

JAX compiles through MLIR, and a library gives its primitive a lowering rule with
`mlir.register_lowering(prim, rule)`. Most such rules are written as a function of jax
operations, `mlir.lower_fun(fun, multiple_results=...)` ("compile this primitive as
`fun` would compile"; equinox registers all its primitives so). jaxlite has no MLIR,
but that form needs none: the rule becomes an expansion (`backend.lowering.
expansion_rules`), and every backend compiles the jaxpr of `fun`, traced at the
equation's avals with its params, in place of the equation. The primitive is then
compiled like any other, natively too (the native op "expand").

A rule written against MLIR itself (building `ir` operations, calling
`emit_python_callback`) cannot run here. It is recorded in `foreign_rules`, and the
primitive compiles as a call of its impl (`def_impl`), as every primitive without a
lowering rule does; one with no impl either fails to compile with an error saying so.
Rules for platforms other than the CPU are recorded only: jaxlite's one device is a CPU.

The module lives in the `interpreters` package, where JAX's is, but belongs to the
backend layer: it fills the backend's tables.
"""

from __future__ import annotations

from jaxlite.backend.lowering import expansion_lowering, expansion_rules, lowering_rules
from jaxlite.backend.native import native_rules
from jaxlite.effects import lowerable_effects  # noqa: F401  (JAX's mlir has it)
from jaxlite.interpreters.partial_eval import trace_to_jaxpr

__all__ = ["LoweredFun", "foreign_rules", "lower_fun", "register_lowering"]

# (primitive, platform) -> a lowering rule jaxlite cannot run (see the docstring).
foreign_rules: dict = {}

_CACHE_SIZE = 256


class LoweredFun:
    """The lowering rule `lower_fun(fun, multiple_results)` makes: the primitive
    computes as `fun(*operands, **params)` (a value, or a sequence of values when
    `multiple_results`)."""

    __slots__ = ("fun", "multiple_results", "_jaxprs")

    def __init__(self, fun, multiple_results):
        self.fun = fun
        self.multiple_results = multiple_results
        self._jaxprs = {}

    def jaxpr(self, avals_in, **params):
        """The ClosedJaxpr of `fun` on `avals_in` with `params`, traced once per
        (avals, params) when the params are hashable."""
        try:
            key = (tuple(avals_in), tuple(sorted(params.items())))
            closed = self._jaxprs.get(key)
        except TypeError:  # an unhashable parameter: trace every time
            key, closed = None, None
        if closed is None:
            closed = trace_to_jaxpr(self._flat(params), list(avals_in))
            if key is not None:
                if len(self._jaxprs) >= _CACHE_SIZE:
                    self._jaxprs.clear()
                self._jaxprs[key] = closed
        return closed

    def _flat(self, params):
        def flat(*args):
            out = self.fun(*args, **params)
            return list(out) if self.multiple_results else [out]

        return flat

    def __call__(self, ctx, *args, **params):
        raise NotImplementedError(
            f"mlir.lower_fun({getattr(self.fun, '__name__', self.fun)!r}) was called "
            "as an MLIR lowering rule; jaxlite has no MLIR. Register it with "
            "mlir.register_lowering(prim, rule): the primitive then compiles as the "
            "function."
        )

    def __repr__(self):
        name = getattr(self.fun, "__name__", repr(self.fun))
        return f"lower_fun({name}, multiple_results={self.multiple_results})"


def lower_fun(fun, multiple_results=True):
    """A lowering rule that compiles a primitive as `fun(*operands, **params)`."""
    return LoweredFun(fun, multiple_results)


def register_lowering(prim, rule, platform=None, inline=True, cacheable=True):
    """Say how `prim` compiles. A `lower_fun` rule for the CPU (`platform` None or
    "cpu") makes `prim` compile as its function on every backend; any other rule is
    recorded in `foreign_rules`, and `prim` compiles as a call of its impl."""
    if platform in (None, "cpu") and isinstance(rule, LoweredFun):
        expansion_rules[prim] = rule.jaxpr
        lowering_rules[prim] = expansion_lowering
        native_rules[prim] = "expand"
    else:
        foreign_rules[(prim, platform)] = rule
    return rule
