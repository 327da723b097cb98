"""The NumPy backend: a jaxpr becomes the source of a Python function, one line per
equation, executed once with `exec` and cached on the `ClosedJaxpr`.

A primitive may register a lowering rule that returns a NumPy expression
(`lowering_rules[sin_p] = inline("np.sin({})")`, see `lowering.py`); every other
primitive is lowered to a call of its `impl` rule with the parameters bound ahead of
time (never of an eager-only kernel, `core.eager_impl_rules`). The source is kept on
the executable (`.source`) so users can read exactly what runs.

Dead values are freed as XLA frees buffers: after the equation that reads a value for
the last time, the generated code deletes its name (`del c, d`) unless it is returned,
so a long straight-line function (or a loop body) holds only its live intermediates,
not all of them until it returns.

Buffers are reused as XLA reuses them: an elementwise ufunc whose operand is an
intermediate the function allocated itself (the result of another ufunc or of a
`np.matmul`), of the output's shape and dtype, used for the last time there and never
viewed by another operation, writes its result into that operand (`out=`). A chain of
elementwise operations then runs in one buffer instead of allocating one per step.

A broadcast stays a view (zero strides) while only the function reads it, but what the
function returns may become an Array, which holds real memory (see `array.py`): every
output that is not a buffer the function allocated itself nor one of its inputs goes
through `_laid_out`, which copies a broadcast view (a check of its strides otherwise).
"""

from __future__ import annotations

import builtins
import functools
import keyword

import numpy as np

from jaxlite.array import is_stretched, real_buffer
from jaxlite.backend.lowering import (  # noqa: F401  (re-exported)
    LoweringContext,
    inline,
    lowering_rules,
)
from jaxlite.core import (
    ABSTRACT_CONSTANT_MESSAGE,
    ClosedJaxpr,
    Literal,
    ShapeDtypeStruct,
    impl_rules,
    reference_types,
)
from jaxlite.interpreters.physical import physicalize
from jaxlite.jaxpr_printer import _Namer
from jaxlite.util import quiet_fp, restore_fp


def _buffer_plan(jaxpr, ufuncs):
    """Which values die where. `ufuncs[i]`: whether equation i is one elementwise
    ufunc call (it keeps no view of its operands).

    Returns `dying`, for each equation the variables used there for the last time
    that may be overwritten (never those returned, nor those read by an equation that
    is not a ufunc: it might keep a view of them), and `dead`, for each equation the
    variables that are unused after it and not returned (its own unused outputs
    included): the generated code deletes them there, so that an intermediate is
    freed as soon as it is dead, as XLA frees buffers, not when the function returns.
    """
    dying = [[] for _ in jaxpr.eqns]
    dead = [[] for _ in jaxpr.eqns]
    last_use = {}
    returned = {v for v in jaxpr.outvars if type(v) is not Literal}
    pinned = set(returned)
    for i, eqn in enumerate(jaxpr.eqns):
        for x in eqn.invars:
            if type(x) is not Literal:
                last_use[x] = i
                if not ufuncs[i]:
                    pinned.add(x)
        for v in eqn.outvars:
            last_use.setdefault(v, i)  # never read: dead where it is made
    consts = set(jaxpr.constvars)
    for v, i in last_use.items():
        if v not in pinned:
            dying[i].append(v)
        if v not in returned and v not in consts:
            dead[i].append(v)
    return dying, dead


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


def _laid_out(value):
    return real_buffer(value, "an output of a compiled function")


def _const_values(jaxpr, closed):
    """For each output, its constant's value if it is a constvar, else None."""
    consts = dict(zip(jaxpr.constvars, closed.consts))
    return [consts.get(v) if type(v) is not Literal else None for v in jaxpr.outvars]


def _real(v, const):
    """Whether output `v` is known not to be a broadcast view: a 0-d value, or a
    constant that is not one."""
    if not getattr(v.aval, "shape", ()):
        return True
    return const is not None and not is_stretched(np.asarray(const))


class Executable:
    """A compiled jaxpr: call it with NumPy values (constants excluded), get a list.

    `entry` (what calling the Executable runs) is `fun` with NumPy's errors ignored
    (`util.quiet_fp`, what `np.errstate(all="ignore")` does): NumPy's floating-point warnings (0/0, log(0),
    overflow, invalid casts) are not JAX's behaviour, which computes the IEEE results
    silently (debug_nans checks values explicitly). The state is NumPy's, per thread
    and local to the call, so the user's own NumPy code is unaffected. `fun` itself
    is for generated code that calls this one (a loop body, a branch), already inside
    its caller's `errstate`.
    """

    __slots__ = ("fun", "entry", "source", "closed")

    def __init__(self, fun, entry, source, closed):
        self.fun = fun
        self.entry = entry
        self.source = source
        self.closed = closed

    def __call__(self, *args):
        return self.entry(*args)


def compile(closed: ClosedJaxpr, name="jaxpr_fun") -> Executable:
    """Compile (once, cached on `closed`) a ClosedJaxpr to an `Executable`. Keys
    inside it (values of an extended dtype) become their uint32 data first
    (`interpreters.physical`): a loop body run eagerly may wrap data as keys."""
    exe = closed._compiled
    if exe is None:
        exe = closed._compiled = _compile(physicalize(closed), name)
    return exe


def _compile(closed, name):
    jaxpr = closed.jaxpr
    ctx = LoweringContext(compile)
    jaxpr_namer = _Namer()
    for v, c in zip(jaxpr.constvars, closed.consts):
        # A reference (jaxlite.state) is itself the value: writes must reach it.
        value = c if type(c) in reference_types else np.asarray(c)
        if type(c) is ShapeDtypeStruct:  # an abstract constant has no value to run on
            raise TypeError(ABSTRACT_CONSTANT_MESSAGE)
        jaxpr_namer.names[v] = ctx.add_global(value, "c")
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
    lowered = []  # per equation: (left-hand side, expression, ufunc, fresh)
    for eqn in jaxpr.eqns:
        args = [atom(x) for x in eqn.invars]
        outs = [namer(v) for v in eqn.outvars]
        lhs = ", ".join(outs) if outs else "_"
        rule = lowering_rules.get(eqn.primitive)
        if rule is not None:
            ctx.eqn = eqn
            ctx.fresh_output = False
            ctx.ufunc = getattr(rule, "ufunc", False)
            expr = rule(ctx, *args, **eqn.params)
            ufunc = ctx.ufunc and not eqn.primitive.multiple_results
            fresh = (ctx.fresh_output or ufunc) and len(eqn.outvars) == 1
            if eqn.primitive.multiple_results:
                lhs = lhs + "," if len(outs) == 1 else lhs
                lhs = "_" if not outs else lhs
        else:
            impl = impl_rules.get(eqn.primitive)
            if impl is None:
                raise NotImplementedError(
                    f"Cannot compile primitive '{eqn.primitive}': it has no lowering "
                    "rule jaxlite can use and no impl. Give it an impl "
                    f"(`{eqn.primitive}_p.def_impl(impl)`) or a lowering written as "
                    "a function (`mlir.register_lowering(prim, mlir.lower_fun(fun))`); "
                    "a lowering rule written against MLIR cannot run on jaxlite."
                )
            impl = functools.partial(impl, **eqn.params)
            fn = ctx.add_global(impl, eqn.primitive.name.replace("-", "_"))
            expr = f"{fn}({', '.join(args)})"
            lhs = "_" if not outs else lhs + ","
            ufunc = fresh = False
        lowered.append((lhs, expr, ufunc, fresh))
    dying, dead = _buffer_plan(jaxpr, [ufunc for _, _, ufunc, _ in lowered])
    owned = set()  # variables holding buffers this function allocated
    for i, (eqn, (lhs, expr, ufunc, fresh)) in enumerate(zip(jaxpr.eqns, lowered)):
        if ufunc:
            target = _reusable_operand(eqn, dying[i], owned)
            if target is not None:
                expr = f"{expr[:-1]}, out={namer(target)})"
        if fresh:
            owned.add(eqn.outvars[0])
        lines.append(f"    {lhs} = {expr}")
        if dead[i]:
            lines.append(f"    del {', '.join(namer(v) for v in dead[i])}")
    inputs = set(jaxpr.invars)
    laid_out = None
    results = []
    for v, c in zip(jaxpr.outvars, _const_values(jaxpr, closed)):
        out = atom(v)
        if not (type(v) is Literal or v in owned or v in inputs or _real(v, c)):
            laid_out = laid_out or ctx.add_global(_laid_out, "laid_out")
            out = f"{laid_out}({out})"
        results.append(out)
    lines.append(f"    return [{', '.join(results)}]")
    # The entry point: NumPy's floating-point warnings off (see `Executable`). It
    # calls `name` by a global that no variable can shadow (theirs have no "_").
    entry = f"{name}_entry"
    lines += [
        "",
        f"_fun = {name}",
        "",
        "",
        f"def {entry}({params}):",
        "    token = _quiet_fp()",
        "    try:",
        f"        return _fun({params})",
        "    finally:",
        "        _restore_fp(token)",
    ]
    source = "\n".join(lines) + "\n"
    ctx.namespace.update(_quiet_fp=quiet_fp, _restore_fp=restore_fp)
    exec(builtins.compile(source, f"<jaxlite:{name}>", "exec"), ctx.namespace)
    namespace = ctx.namespace
    return Executable(namespace[name], namespace[entry], source, closed)
