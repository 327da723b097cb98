"""`custom_jvp` and `custom_vjp`: functions with user-supplied derivative rules.

Each call binds a higher-order primitive whose parameters are Python callables. Every
trace decides what such a call means (`process_custom_jvp_call`/`process_custom_vjp_call`):
evaluation just calls the function; a jaxpr trace records one equation holding the traced
function; a JVP trace calls the user's rule; a batching trace vectorises the function and
its rule together and binds again. Because reverse mode is JVP + partial evaluation +
transposition, a `custom_jvp` rule gives gradients and higher derivatives for free.
For `custom_vjp`, the tangent map is the `custom_lin` primitive, whose transpose calls the
user's backward function.
"""

from __future__ import annotations

import functools

from jaxlite import tree_util
from jaxlite.backend import compile as backend_compile
from jaxlite.backend import lowering_rules
from jaxlite.core import (
    EvalTrace,
    JaxprEqn,
    Primitive,
    Tracer,
    Var,
    _state,
    abstract_eval_rules,
    dce_rules,
    get_aval,
    impl_rules,
    jaxpr_as_fun,
    set_current_trace,
)
from jaxlite.interpreters import ad, batching
from jaxlite.interpreters.ad import JVPTrace, LinearizeTrace, Zero
from jaxlite.interpreters.batching import BatchTrace
from jaxlite.interpreters.partial_eval import (
    DynamicJaxprTrace,
    JaxprTracer,
    trace_to_jaxpr,
)


def _name(fun):
    return getattr(fun, "__name__", type(fun).__name__)


def _resolve_args(fun, args, kwargs):
    if not kwargs:
        return args
    import inspect

    bound = inspect.signature(fun).bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.args


# ----------------------------------------------------------------------------------------
# custom_jvp_call: params `call_jaxpr` (when staged) or `fun`, and `jvp`


class CustomJVPCallPrimitive(Primitive):
    """`bind(*args, fun=..., jvp=..., name=..., symbolic_zeros=...)`; `fun` maps flat
    values to flat outputs, `jvp(primals, tangents) -> (outs, out_tangents)` likewise."""

    def bind(self, *args, name, fun=None, call_jaxpr=None, jvp, symbolic_zeros=False):
        if fun is None:
            fun = jaxpr_as_fun(call_jaxpr)
        return _state.trace.process_custom_jvp_call(
            self, fun, jvp, args, name, symbolic_zeros
        )


custom_jvp_call_p = CustomJVPCallPrimitive("custom_jvp_call", multiple_results=True)


def _eval_custom_jvp(self, prim, fun, jvp, args, name, symbolic_zeros):
    return fun(*args)


def _jaxpr_custom_jvp(self, prim, fun, jvp, args, name, symbolic_zeros):
    closed = trace_to_jaxpr(fun, [get_aval(a) for a in args])
    atoms = [self.to_atom(a) for a in args]
    outvars = [Var(a) for a in closed.out_avals]
    params = dict(name=name, call_jaxpr=closed, jvp=jvp, symbolic_zeros=symbolic_zeros)
    self.eqns.append(JaxprEqn(prim, atoms, params, outvars, closed.effects))
    return [JaxprTracer(self, v) for v in outvars]


def _jvp_custom_jvp(self, prim, fun, jvp, args, name, symbolic_zeros):
    primals, tangents = (
        zip(*(self.to_primal_tangent(x) for x in args)) if args else ((), ())
    )
    with set_current_trace(self.parent):
        if all(type(t) is Zero for t in tangents):
            return prim.bind(
                *primals, name=name, fun=fun, jvp=jvp, symbolic_zeros=symbolic_zeros
            )
        tangents = [t if symbolic_zeros else ad.instantiate(t) for t in tangents]
        outs, out_tangents = jvp(list(primals), list(tangents))
    return [self.lift(p, t) for p, t in zip(outs, out_tangents)]


def _linearize_custom_jvp(self, prim, fun, jvp, args, name, symbolic_zeros):
    tt = self.tangent_trace
    target = (
        tt
        if any(isinstance(x, JaxprTracer) and x._trace is tt for x in args)
        else (self.parent)
    )
    with set_current_trace(target):
        return prim.bind(
            *args, name=name, fun=fun, jvp=jvp, symbolic_zeros=symbolic_zeros
        )


def _batch_custom_jvp(self, prim, fun, jvp, args, name, symbolic_zeros):
    vals, dims = zip(*(self.to_batch_info(x) for x in args)) if args else ((), ())
    size = self.axis_size
    if all(d is batching.not_mapped for d in dims):
        with set_current_trace(self.parent):
            return prim.bind(
                *vals, name=name, fun=fun, jvp=jvp, symbolic_zeros=symbolic_zeros
            )

    def fun_batched(*xs):
        outs, out_dims = batching.vmap_flat(fun, size, xs, dims)
        return [batching.bdim_at_front(o, d, size) for o, d in zip(outs, out_dims)]

    def jvp_batched(primals, tangents):
        n = len(primals)

        def flat(*xs):
            outs, out_ts = jvp(list(xs[:n]), list(xs[n:]))
            return [*outs, *(ad.instantiate(t) for t in out_ts)]

        t_dims = [d for d in dims]
        tangents = [ad.instantiate(t) for t in tangents]
        outs, out_dims = batching.vmap_flat(
            flat, size, [*primals, *tangents], [*dims, *t_dims]
        )
        outs = [batching.bdim_at_front(o, d, size) for o, d in zip(outs, out_dims)]
        return outs[: len(outs) // 2], outs[len(outs) // 2 :]

    with set_current_trace(self.parent):
        outs = prim.bind(
            *vals, name=name, fun=fun_batched, jvp=jvp_batched, symbolic_zeros=False
        )
    return [batching.BatchTracer(self, o, 0) for o in outs]


EvalTrace.process_custom_jvp_call = _eval_custom_jvp
DynamicJaxprTrace.process_custom_jvp_call = _jaxpr_custom_jvp
JVPTrace.process_custom_jvp_call = _jvp_custom_jvp
LinearizeTrace.process_custom_jvp_call = _linearize_custom_jvp
BatchTrace.process_custom_jvp_call = _batch_custom_jvp


def _custom_jvp_call_abstract(*avals, name, call_jaxpr, jvp, symbolic_zeros):
    return list(call_jaxpr.out_avals), call_jaxpr.effects


def _custom_jvp_call_lowering(ctx, *args, name, call_jaxpr, jvp, symbolic_zeros):
    fn = ctx.add_global(backend_compile(call_jaxpr).fun, "custom_jvp")
    return f"{fn}({', '.join(args)})"


def _custom_jvp_call_dce(used_outs, eqn):
    if not any(used_outs) and not eqn.effects:
        return [False] * len(eqn.invars), None
    return [True] * len(eqn.invars), eqn


abstract_eval_rules[custom_jvp_call_p] = _custom_jvp_call_abstract
lowering_rules[custom_jvp_call_p] = _custom_jvp_call_lowering
dce_rules[custom_jvp_call_p] = _custom_jvp_call_dce


class custom_jvp:  # noqa: N801  (JAX's name)
    """A function with a custom JVP rule: `f = custom_jvp(fun); f.defjvp(rule)`."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp = None
        self.symbolic_zeros = False

    def defjvp(self, jvp, symbolic_zeros=False):
        """`jvp(primals, tangents) -> (primal_out, tangent_out)` (plus nondiff args
        first, as in JAX)."""
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *tangent_fns):
        """One function per argument: `fn(tangent, primal_out, *primals)`."""

        def jvp(primals, tangents):
            out = self(*primals)
            out_t = None
            for fn, t in zip(tangent_fns, tangents):
                if fn is None:
                    continue
                term = fn(t, out, *primals)
                out_t = (
                    term
                    if out_t is None
                    else tree_util.tree_map(lambda a, b: a + b, out_t, term)
                )
            if out_t is None:
                out_t = tree_util.tree_map(lambda o: o * 0, out)
            return out, out_t

        self.defjvp(jvp)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __call__(self, *args, **kwargs):
        if self.jvp is None:
            raise AttributeError(
                f"No JVP defined for custom_jvp function {_name(self.fun)} using defjvp."
            )
        args = _resolve_args(self.fun, args, kwargs)
        nondiff = {i: args[i] for i in self.nondiff_argnums}
        for i, a in nondiff.items():
            if isinstance(a, Tracer):
                raise TypeError(
                    f"custom_jvp nondiff_argnums argument {i} of {_name(self.fun)} is a "
                    "traced value; nondiff_argnums are for static (non-array) arguments. "
                    "Pass arrays as ordinary arguments and use stop_gradient instead."
                )
        diff_args = [a for i, a in enumerate(args) if i not in nondiff]
        leaves, in_tree = tree_util.tree_flatten(diff_args)
        leaves = [_as_jax_value(x) for x in leaves]
        out_tree_box = []

        def rebuild(diff):
            it = iter(diff)
            return [nondiff[i] if i in nondiff else next(it) for i in range(len(args))]

        def flat_fun(*flat):
            out = self.fun(*rebuild(tree_util.tree_unflatten(in_tree, flat)))
            out_leaves, out_tree = tree_util.tree_flatten(out)
            out_tree_box.append(out_tree)
            return out_leaves

        def flat_jvp(primals, tangents):
            p = tree_util.tree_unflatten(in_tree, primals)
            t = tree_util.tree_unflatten(in_tree, tangents)
            nd = [nondiff[i] for i in sorted(nondiff)]
            out, out_t = self.jvp(*nd, tuple(p), tuple(t))
            out_leaves, out_tree = tree_util.tree_flatten(out)
            t_leaves, t_tree = tree_util.tree_flatten(out_t)
            if t_tree != out_tree:
                raise TypeError(
                    f"Custom JVP rule {_name(self.jvp)} for function {_name(self.fun)} must "
                    "produce primal and tangent outputs with equal container (pytree) "
                    f"structures, but got {out_tree} and {t_tree} respectively."
                )
            out_tree_box.append(out_tree)
            return out_leaves, t_leaves

        flat_jvp.__name__ = _name(self.jvp)
        outs = custom_jvp_call_p.bind(
            *leaves,
            name=_name(self.fun),
            fun=flat_fun,
            jvp=flat_jvp,
            symbolic_zeros=self.symbolic_zeros,
        )
        return tree_util.tree_unflatten(out_tree_box[-1], outs)


def _as_jax_value(x):
    if isinstance(x, Tracer) or hasattr(x, "aval"):
        return x
    from jaxlite.numpy import asarray

    return asarray(x)


# ----------------------------------------------------------------------------------------
# custom_vjp_call and custom_lin


class CustomVJPCallPrimitive(Primitive):
    def bind(
        self, *args, name, fun=None, call_jaxpr=None, fwd, bwd, symbolic_zeros=False
    ):
        if fun is None:
            fun = jaxpr_as_fun(call_jaxpr)
        return _state.trace.process_custom_vjp_call(self, fun, fwd, bwd, args, name)


custom_vjp_call_p = CustomVJPCallPrimitive("custom_vjp_call", multiple_results=True)


def _eval_custom_vjp(self, prim, fun, fwd, bwd, args, name):
    return fun(*args)


def _jaxpr_custom_vjp(self, prim, fun, fwd, bwd, args, name):
    closed = trace_to_jaxpr(fun, [get_aval(a) for a in args])
    atoms = [self.to_atom(a) for a in args]
    outvars = [Var(a) for a in closed.out_avals]
    params = dict(name=name, bwd=bwd, call_jaxpr=closed, fwd=fwd, symbolic_zeros=False)
    self.eqns.append(JaxprEqn(prim, atoms, params, outvars, closed.effects))
    return [JaxprTracer(self, v) for v in outvars]


def _jvp_custom_vjp(self, prim, fun, fwd, bwd, args, name):
    primals, tangents = (
        zip(*(self.to_primal_tangent(x) for x in args)) if args else ((), ())
    )
    with set_current_trace(self.parent):
        if all(type(t) is Zero for t in tangents):
            return prim.bind(*primals, name=name, fun=fun, fwd=fwd, bwd=bwd)
        outs, residuals = fwd(*primals)
        tangents = [ad.instantiate(t) for t in tangents]
        out_avals = [ad.tangent_aval(get_aval(o)) for o in outs]
        out_tangents = custom_lin_p.bind(
            *residuals,
            *tangents,
            num_res=len(residuals),
            bwd=bwd,
            out_avals=out_avals,
            in_avals=[ad.tangent_aval(get_aval(p)) for p in primals],
        )
    return [self.lift(p, t) for p, t in zip(outs, out_tangents)]


def _linearize_custom_vjp(self, prim, fun, fwd, bwd, args, name):
    with set_current_trace(self.parent):
        return prim.bind(*args, name=name, fun=fun, fwd=fwd, bwd=bwd)


def _batch_custom_vjp(self, prim, fun, fwd, bwd, args, name):
    vals, dims = zip(*(self.to_batch_info(x) for x in args)) if args else ((), ())
    size = self.axis_size
    if all(d is batching.not_mapped for d in dims):
        with set_current_trace(self.parent):
            return prim.bind(*vals, name=name, fun=fun, fwd=fwd, bwd=bwd)

    def front(outs, out_dims):
        return [batching.bdim_at_front(o, d, size) for o, d in zip(outs, out_dims)]

    def fun_batched(*xs):
        return front(*batching.vmap_flat(fun, size, xs, dims))

    def fwd_batched(*xs):
        box = {}

        def flat(*ys):
            outs, res = fwd(*ys)
            box["n"] = len(outs)
            return [*outs, *res]

        flat_outs = front(*batching.vmap_flat(flat, size, xs, dims))
        return flat_outs[: box["n"]], flat_outs[box["n"] :]

    def bwd_batched(res, cts):
        def flat(*ys):
            return [ad.instantiate(c) for c in bwd(ys[: len(res)], ys[len(res) :])]

        cts = [ad.instantiate(c) for c in cts]
        outs, out_dims = batching.vmap_flat(
            flat, size, [*res, *cts], [0] * (len(res) + len(cts))
        )
        return front(outs, out_dims)

    with set_current_trace(self.parent):
        outs = prim.bind(
            *vals, name=name, fun=fun_batched, fwd=fwd_batched, bwd=bwd_batched
        )
    return [batching.BatchTracer(self, o, 0) for o in outs]


EvalTrace.process_custom_vjp_call = _eval_custom_vjp
DynamicJaxprTrace.process_custom_vjp_call = _jaxpr_custom_vjp
JVPTrace.process_custom_vjp_call = _jvp_custom_vjp
LinearizeTrace.process_custom_vjp_call = _linearize_custom_vjp
BatchTrace.process_custom_vjp_call = _batch_custom_vjp


def _custom_vjp_call_abstract(*avals, name, bwd, call_jaxpr, fwd, symbolic_zeros):
    return list(call_jaxpr.out_avals), call_jaxpr.effects


def _custom_vjp_call_lowering(ctx, *args, name, bwd, call_jaxpr, fwd, symbolic_zeros):
    fn = ctx.add_global(backend_compile(call_jaxpr).fun, "custom_vjp")
    return f"{fn}({', '.join(args)})"


abstract_eval_rules[custom_vjp_call_p] = _custom_vjp_call_abstract
lowering_rules[custom_vjp_call_p] = _custom_vjp_call_lowering
dce_rules[custom_vjp_call_p] = _custom_jvp_call_dce


# custom_lin: the tangent map of a custom_vjp function, linear in its tangent operands.


def _custom_lin_impl(*args, **params):
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


def _custom_lin_abstract(*avals, num_res, bwd, out_avals, in_avals):
    return list(out_avals), frozenset()


def _custom_lin_transpose(cts, *args, num_res, bwd, out_avals, in_avals):
    res = args[:num_res]
    cts_in = bwd(list(res), list(cts))
    return [None] * num_res + [None if type(c) is Zero else c for c in cts_in]


custom_lin_p = Primitive("custom_lin", multiple_results=True)
impl_rules[custom_lin_p] = _custom_lin_impl
abstract_eval_rules[custom_lin_p] = _custom_lin_abstract
ad.transpose_rules[custom_lin_p] = _custom_lin_transpose
ad.jvp_rules[custom_lin_p] = _custom_lin_impl  # forward mode of custom_vjp: an error
batching.batch_rules[custom_lin_p] = _custom_lin_impl


class custom_vjp:  # noqa: N801  (JAX's name)
    """A function with a custom VJP: `f = custom_vjp(fun); f.defvjp(fwd, bwd)`."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd = None
        self.bwd = None

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        self.fwd = fwd
        self.bwd = bwd
        return None

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __call__(self, *args, **kwargs):
        if self.fwd is None:
            raise AttributeError(
                f"No VJP defined for custom_vjp function {_name(self.fun)} using defvjp."
            )
        args = _resolve_args(self.fun, args, kwargs)
        nondiff = {i: args[i] for i in self.nondiff_argnums}
        diff_args = [a for i, a in enumerate(args) if i not in nondiff]
        leaves, in_tree = tree_util.tree_flatten(diff_args)
        leaves = [_as_jax_value(x) for x in leaves]
        nd = [nondiff[i] for i in sorted(nondiff)]
        box = {}

        def rebuild(diff):
            it = iter(diff)
            return [nondiff[i] if i in nondiff else next(it) for i in range(len(args))]

        def flat_fun(*flat):
            out = self.fun(*rebuild(tree_util.tree_unflatten(in_tree, flat)))
            out_leaves, box["out_tree"] = tree_util.tree_flatten(out)
            return out_leaves

        def flat_fwd(*flat):
            result = self.fwd(*rebuild(tree_util.tree_unflatten(in_tree, flat)))
            if not (isinstance(result, tuple) and len(result) == 2):
                raise TypeError(
                    f"Custom VJP fwd rule {_name(self.fwd)} for function {_name(self.fun)} "
                    "must produce a pair (list or tuple of length two) where the first "
                    "element represents the primal output and the second element "
                    f"represents residuals; got {type(result).__name__}."
                )
            out, res = result
            out_leaves, box["out_tree"] = tree_util.tree_flatten(out)
            res_leaves, box["res_tree"] = tree_util.tree_flatten(res)
            return out_leaves, [_as_jax_value(r) for r in res_leaves]

        def flat_bwd(res_leaves, ct_leaves):
            res = tree_util.tree_unflatten(box["res_tree"], res_leaves)
            cts = tree_util.tree_unflatten(
                box["out_tree"], [ad.instantiate(c) for c in ct_leaves]
            )
            cts_in = self.bwd(*nd, res, cts)
            if not isinstance(cts_in, (tuple, list)):
                raise TypeError(
                    f"Custom VJP bwd rule {_name(self.bwd)} must produce a tuple of "
                    f"cotangents, one per primal input, got {type(cts_in).__name__}."
                )
            expected = tuple(
                tree_util.tree_unflatten(in_tree, [0] * in_tree.num_leaves)
            )
            if len(cts_in) != len(expected):
                raise TypeError(
                    f"Custom VJP bwd rule must produce an output with the same container "
                    f"(pytree) structure as the args tuple of the primal function, and in "
                    f"particular must produce a tuple of length equal to the number of "
                    f"arguments to the primal function, but got bwd output of length "
                    f"{len(cts_in)} for {len(expected)} arguments."
                )
            flat = []
            for ct, primal_tree in zip(cts_in, expected):
                n = len(tree_util.tree_leaves(primal_tree))
                if ct is None:
                    flat.extend([Zero(None)] * n)
                else:
                    flat.extend(tree_util.tree_leaves(ct, is_leaf=lambda x: x is None))
            return [None if c is None else c for c in flat]

        flat_fwd.__name__, flat_bwd.__name__ = _name(self.fwd), _name(self.bwd)
        outs = custom_vjp_call_p.bind(
            *leaves, name=_name(self.fun), fun=flat_fun, fwd=flat_fwd, bwd=flat_bwd
        )
        return tree_util.tree_unflatten(box["out_tree"], outs)
