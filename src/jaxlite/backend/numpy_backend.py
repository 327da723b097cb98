"""The NumPy backend: a jaxpr becomes the source of a Python function, one line per
equation, executed once with `exec` and cached on the `ClosedJaxpr`.

A primitive may register a lowering rule that returns a NumPy expression
(`lowering_rules[sin_p] = inline("np.sin({})")`); every other primitive is lowered to a
call of its `impl` rule with the parameters bound ahead of time. The source is kept on the
executable (`.source`) so users can read exactly what runs.
"""

from __future__ import annotations

import builtins
import functools
import keyword
import warnings

import numpy as np

from jaxlite.core import ClosedJaxpr, Literal, _Namer, impl_rules

lowering_rules: dict = {}

_GENERATED_MODULE = "jaxlite.backend.generated"
# NumPy's floating-point warnings (nan, inf, overflow) are not JAX's behaviour: JAX
# computes IEEE results silently, and the debug_nans mode checks values explicitly.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"jaxlite\.")


class LoweringContext:
    """Collects the globals (functions, constants) the generated source refers to.

    While a lowering rule runs, `eqn` is the equation it lowers: its `invars` and
    `outvars` carry the avals, so a rule can specialise the code it emits to the
    shapes and dtypes (the executable only ever receives values of those avals).
    """

    def __init__(self):
        self.namespace = {"np": np, "__name__": _GENERATED_MODULE}
        self._ids = {}
        self.eqn = None

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


def inline(template):
    """A lowering rule for a single-output primitive: `template.format(*input_names)`."""

    def rule(ctx, *args, **params):
        return template.format(*args, **params)

    return rule


class Executable:
    """A compiled jaxpr: call it with NumPy values (constants excluded), get a list."""

    __slots__ = ("fun", "source", "closed")

    def __init__(self, fun, source, closed):
        self.fun = fun
        self.source = source
        self.closed = closed

    def __call__(self, *args):
        return self.fun(*args)


def compile(closed: ClosedJaxpr, name="jaxpr_fun") -> Executable:
    """Compile (once, cached on `closed`) a ClosedJaxpr to an `Executable`."""
    exe = closed._compiled
    if exe is None:
        exe = closed._compiled = _compile(closed, name)
    return exe


def _compile(closed, name):
    jaxpr = closed.jaxpr
    ctx = LoweringContext()
    jaxpr_namer = _Namer()
    for v, c in zip(jaxpr.constvars, closed.consts):
        jaxpr_namer.names[v] = ctx.add_global(np.asarray(c), "c")
    consts = set(jaxpr.constvars)

    def namer(v):
        # The jaxpr's names, except where one would be a Python keyword (`if`, `in`,
        # `or`, ...) or shadow a global of the generated code (`np`): then `if_`, `np_`.
        name = jaxpr_namer(v)
        if v in consts:
            return name
        if keyword.iskeyword(name) or name in ctx.namespace:
            return f"{name}_"
        return name

    def atom(x):
        if type(x) is Literal:
            return ctx.add_global(np.asarray(x.val, x.aval.dtype)[()], "lit")
        return namer(x)

    params = ", ".join(namer(v) for v in jaxpr.invars)
    lines = [f"def {name}({params}):"]
    for eqn in jaxpr.eqns:
        args = [atom(x) for x in eqn.invars]
        outs = [namer(v) for v in eqn.outvars]
        lhs = ", ".join(outs) if outs else "_"
        rule = lowering_rules.get(eqn.primitive)
        if rule is not None:
            ctx.eqn = eqn
            expr = rule(ctx, *args, **eqn.params)
            if eqn.primitive.multiple_results:
                lhs = lhs + "," if len(outs) == 1 else lhs
                lhs = "_" if not outs else lhs
        else:
            impl = functools.partial(impl_rules[eqn.primitive], **eqn.params)
            fn = ctx.add_global(impl, eqn.primitive.name.replace("-", "_"))
            expr = f"{fn}({', '.join(args)})"
            lhs = "_" if not outs else lhs + ","
        lines.append(f"    {lhs} = {expr}")
    outs = ", ".join(atom(v) for v in jaxpr.outvars)
    lines.append(f"    return [{outs}]")
    source = "\n".join(lines) + "\n"
    exec(builtins.compile(source, f"<jaxlite:{name}>", "exec"), ctx.namespace)
    return Executable(ctx.namespace[name], source, closed)
