"""What every backend shares about lowering: the rule registry, the context a rule
sees, and the shapes of rule that recur.

A lowering rule is `rule(ctx, *arg_names, **params) -> str`: the Python expression that
computes the equation's outputs from the names of its inputs (a tuple/list expression
for a primitive with several results). `lowering_rules[sin_p] = inline("np.sin({})")`.

A primitive without a lowering rule is called through its `impl` rule with the
parameters bound ahead of time. Eager-only kernels (`core.eager_impl_rules`) are never
consulted here: compiled code cannot reach them.

Call-like primitives (jit, custom_jvp_call, custom_vjp_call, remat, custom_vmap_call,
linear_call, ...) all lower the same way: compile the sub-jaxpr with the backend that
is compiling the caller and call it (`call_lowering`, `lower_call`). A primitive
defined outside jaxlite may lower as the jaxpr of a function (`expansion_rules`).
"""

from __future__ import annotations

import re

import numpy as np

lowering_rules: dict = {}

# Primitives that call into Python (callbacks, debug prints), registered by `lax/`: the
# loop compiler keeps them in their loop, and tiering weighs what they cost natively.
host_call_primitives: set = set()
# Primitives that must run once per iteration where the program puts them, whichever
# tier runs the loop (collectives across processes: every process makes the same MPI
# calls in the same order): the loop compiler never hoists them.
pinned_primitives: set = set()

_GENERATED_MODULE = "jaxlite.backend.generated"


class LoweringContext:
    """Collects the globals (functions, constants) the generated source refers to.

    While a lowering rule runs, `eqn` is the equation it lowers: its `invars` and
    `outvars` carry the avals, so a rule can specialise the code it emits to the
    shapes and dtypes (the executable only ever receives values of those avals).
    `compile` is the backend's compiler, for rules that call a sub-jaxpr
    (`lower_call`): `compile(closed_jaxpr)` returns an executable whose `.fun` the
    generated code may call (already inside the caller's floating-point state).
    """

    def __init__(self, compile=None):
        self.namespace = {"np": np, "__name__": _GENERATED_MODULE}
        self._ids = {}
        self.eqn = None
        self.compile = compile
        # A rule sets this when its expression always returns a new array of the
        # output's aval (e.g. a bare `np.matmul`), which later ufuncs may write into.
        self.fresh_output = False
        # True (set by the compiler from `rule.ufunc`, or by a rule for the
        # expression it returns) when the expression is one NumPy ufunc call of the
        # operands, `np.name(a, b)`: it keeps no view of them, and the compiler may
        # add `out=` to write into a dying operand's buffer.
        self.ufunc = False

    def avals_in(self):
        """The avals of the inputs of the equation being lowered."""
        return [x.aval for x in self.eqn.invars]

    def add_global(self, obj, hint="g"):
        key = id(obj)
        name = self._ids.get(key)
        if name is None:
            name = f"_{hint}{len(self._ids)}"
            self._ids[key] = name
            self.namespace[name] = obj
        return name


_UFUNC_TEMPLATE = re.compile(r"np\.(\w+)\(\{\}(?:, \{\})*\)")


def inline(template):
    """A lowering rule for a single-output primitive: `template.format(*input_names)`.

    A template that is just a NumPy ufunc of the inputs (`"np.add({}, {})"`) is marked
    `rule.ufunc`, so the compiler may add `out=` to reuse a dying operand's buffer."""

    def rule(ctx, *args, **params):
        return template.format(*args, **params)

    match = _UFUNC_TEMPLATE.fullmatch(template)
    rule.ufunc = match is not None and isinstance(
        getattr(np, match.group(1), None), np.ufunc
    )
    return rule


def lower_call(ctx, closed, args, hint="call"):
    """The expression calling sub-jaxpr `closed` (a ClosedJaxpr) on `args`, compiled
    by the backend compiling the caller. Its value is the list of the outputs."""
    if ctx.compile is None:
        raise TypeError(
            "lower_call: this LoweringContext has no compiler, so a sub-jaxpr cannot "
            "be lowered. Create it as LoweringContext(compile=...) in the backend."
        )
    fn = ctx.add_global(ctx.compile(closed).fun, hint)
    return f"{fn}({', '.join(args)})"


def call_lowering(param, hint="call", first=0):
    """The lowering rule of a call-like primitive whose sub-jaxpr is parameter
    `param`, called on the equation's operands from index `first` on."""

    def rule(ctx, *args, **params):
        return lower_call(ctx, params[param], args[first:], hint)

    return rule


# Primitives compiled as the jaxpr of a function that computes them (JAX's
# `mlir.lower_fun`, registered by `interpreters/mlir.py`): `expansion_rules[prim](
# avals_in, **params) -> ClosedJaxpr`. Every backend compiles that jaxpr in place of
# the equation: `expansion_lowering` here, the native op "expand".
expansion_rules: dict = {}


def expansion(eqn):
    """The ClosedJaxpr that computes equation `eqn` (its primitive has an expansion)."""
    return expansion_rules[eqn.primitive]([x.aval for x in eqn.invars], **eqn.params)


def expansion_lowering(ctx, *args, **params):
    """The lowering rule of a primitive with an expansion: a call of its jaxpr."""
    name = ctx.eqn.primitive.name
    hint = "".join(c if c.isalnum() else "_" for c in name)  # a Python name
    expr = lower_call(ctx, expansion(ctx.eqn), args, hint)
    return expr if ctx.eqn.primitive.multiple_results else f"{expr}[0]"
