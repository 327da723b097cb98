"""The NumPy backend: a jaxpr becomes the source of a Python function, one line per
equation, executed once with `exec` and cached on the `ClosedJaxpr`.

A primitive may register a lowering rule that returns a NumPy expression
(`lowering_rules[sin_p] = inline("np.sin({})")`); every other primitive is lowered to a
call of its `impl` rule with the parameters bound ahead of time. The source is kept on the
executable (`.source`) so users can read exactly what runs.

Buffers are reused as XLA reuses them: an elementwise ufunc whose operand is an
intermediate the function allocated itself (the result of another ufunc or of a
`np.matmul`), of the output's shape and dtype, used for the last time there and never
viewed by another operation, writes its result into that operand (`out=`). A chain of
elementwise operations then runs in one buffer instead of allocating one per step.
"""

from __future__ import annotations

import builtins
import functools
import keyword
import re
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
        # A rule sets this when its expression always returns a new array of the
        # output's aval (e.g. a bare `np.matmul`), which later ufuncs may write into.
        self.fresh_output = False

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


def _buffer_plan(jaxpr):
    """For each equation index, the variables used there for the last time, and the
    variables that may never be overwritten: those returned, and those read by any
    equation that is not an elementwise ufunc (it might keep a view of them)."""
    dying = [[] for _ in jaxpr.eqns]
    last_use = {}
    pinned = {v for v in jaxpr.outvars if type(v) is not Literal}
    for i, eqn in enumerate(jaxpr.eqns):
        is_ufunc = getattr(lowering_rules.get(eqn.primitive), "ufunc", False)
        for x in eqn.invars:
            if type(x) is not Literal:
                last_use[x] = i
                if not is_ufunc or eqn.primitive.multiple_results:
                    pinned.add(x)
    for v, i in last_use.items():
        if v not in pinned:
            dying[i].append(v)
    return dying


def _reusable_operand(eqn, dying, owned):
    """The operand of a ufunc equation whose buffer can take its result, or None."""
    (out,) = eqn.outvars
    aval = out.aval
    if not getattr(aval, "shape", ()):
        return None  # 0-d: NumPy returns scalars, which have no buffer to reuse
    for x in eqn.invars:
        if (
            x in owned
            and x in dying
            and x.aval.shape == aval.shape
            and x.aval.dtype == aval.dtype
        ):
            return x
    return None


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
    dying = _buffer_plan(jaxpr)
    owned = set()  # variables holding buffers this function allocated
    for i, eqn in enumerate(jaxpr.eqns):
        args = [atom(x) for x in eqn.invars]
        outs = [namer(v) for v in eqn.outvars]
        lhs = ", ".join(outs) if outs else "_"
        rule = lowering_rules.get(eqn.primitive)
        if rule is not None:
            ctx.eqn = eqn
            ctx.fresh_output = False
            expr = rule(ctx, *args, **eqn.params)
            if getattr(rule, "ufunc", False) and not eqn.primitive.multiple_results:
                target = _reusable_operand(eqn, dying[i], owned)
                if target is not None:
                    expr = f"{expr[:-1]}, out={namer(target)})"
                ctx.fresh_output = True
            if ctx.fresh_output and len(eqn.outvars) == 1:
                owned.add(eqn.outvars[0])
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
