"""`custom_jvp` and `custom_vjp`: functions with user-supplied derivative rules.

Each call binds a higher-order primitive whose parameters are Python callables. Every
trace decides what such a call means (`Trace.process_custom_jvp_call`/`_vjp_call`, which
look up the rules this module puts in core's `custom_jvp_call_rules` and
`custom_vjp_call_rules`, one per Trace class):
evaluation just calls the function; a jaxpr trace records one equation holding the traced
function; a JVP trace calls the user's rule; a batching trace vectorises the function and
its rule together and binds again. Because reverse mode is JVP + partial evaluation +
transposition, a `custom_jvp` rule gives gradients and higher derivatives for free.
For `custom_vjp`, the tangent map is the `custom_lin` primitive, whose transpose calls the
user's backward function.

Closures. A staged call makes the tracers its function closes over leading operands
(`num_consts`, as JAX prints it). Under vmap the rules run in a sub-trace of the same
vmap (`BatchTrace.subtrace`), so a function or rule that closes over values batched by
that vmap sees them batched, even when the rule runs after the vmap has returned (a bwd
rule during the backward pass).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect

from jaxlite import tree_util
from jaxlite.backend import lowering_rules
from jaxlite.backend.lowering import call_lowering
from jaxlite.backend.native import native_rules
from jaxlite.core import (
    EvalTrace,
    JaxprEqn,
    Primitive,
    Tracer,
    Var,
    _state,
    abstract_eval_rules,
    custom_jvp_call_rules,
    custom_vjp_call_rules,
    dce_rules,
    eval_jaxpr,
    get_aval,
    impl_rules,
    jaxpr_as_fun,
    set_current_trace,
)
from jaxlite.distributed.topology import bound_process_axes, process_axes
from jaxlite.errors import UnexpectedTracerError
from jaxlite.interpreters import ad, batching
from jaxlite.interpreters.ad import JVPTrace, LinearizeTrace, Zero
from jaxlite.interpreters.batching import BatchTrace
from jaxlite.interpreters.partial_eval import (
    DynamicJaxprTrace,
    JaxprTracer,
    split_tracer_consts,
    trace_to_jaxpr,
)
from jaxlite.util import fun_name


def _nondiff_argnums(fun, nondiff_argnums, nondiff_argnames):
    """The positions of the nondiff arguments, named by position or by name (as in
    JAX, a name counts only for a parameter that can be passed both ways)."""
    nums = set(nondiff_argnums)
    if nondiff_argnames:
        if isinstance(nondiff_argnames, str):
            nondiff_argnames = (nondiff_argnames,)
        params = inspect.signature(fun).parameters.values()
        nums.update(
            i
            for i, p in enumerate(params)
            if p.kind is p.POSITIONAL_OR_KEYWORD and p.name in nondiff_argnames
        )
    return tuple(sorted(nums))


_POSITIONAL = (
    inspect.Parameter.POSITIONAL_ONLY,
    inspect.Parameter.POSITIONAL_OR_KEYWORD,
)


def positional_arity(fun):
    """How many arguments `fun` takes when all its parameters are positional (then
    a call with that many positional arguments needs no binding), else -1."""
    if isinstance(fun, functools.partial):
        return -1
    try:
        params = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):  # no signature (some builtins): take args as given
        return None
    if all(p.kind in _POSITIONAL for p in params):
        return len(params)
    return -1


def resolve_args(fun, args, kwargs, what, name, arity=-1):
    """`args` and `kwargs` as the positional arguments of `fun`, defaults filled in,
    as JAX's custom_jvp/custom_vjp/custom_vmap resolve them (a functools.partial's
    signature is opaque); TypeError with JAX's message when they do not bind."""
    if not kwargs and (arity is None or arity == len(args)):
        return args
    try:
        if isinstance(fun, functools.partial):
            sig = inspect.signature(lambda *args, **kwargs: None)
        else:
            sig = inspect.signature(fun)
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        passed = [k for k in bound.kwargs if k in kwargs]
        if passed:
            raise TypeError(
                "The following keyword arguments could not be resolved to positions: "
                f"{', '.join(passed)}"
            )
    except TypeError as e:
        raise TypeError(
            f"The input arguments to the {what}-decorated function {name} could not "
            "be resolved to positional-only arguments. Binding failed with the "
            f"error:\n{e}"
        ) from e
    return bound.args


def forward_def_attr(self, name):
    """`__getattr__` of the custom-rule wrappers, as JAX's: a `def*` method missing
    here is the wrapped function's, so that `custom_vmap(custom_jvp(f)).defjvp` and
    the other compositions define the inner function's rule."""
    if name.startswith("def"):
        return getattr(self.fun, name)
    raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


class SymbolicZero:
    """A zero tangent or cotangent known without computing it: what a rule defined
    with `symbolic_zeros=True` receives for an input that is not differentiated.
    `instantiate()` gives the zeros as an array. As in JAX, it is a pytree leaf, is
    not array-like (no arithmetic), and other attributes (`shape`, `dtype`,
    `weak_type`, ...) are its aval's."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __getattr__(self, name):
        if name == "aval":  # not set yet (copying): no forwarding loop
            raise AttributeError(name)
        try:
            return getattr(self.aval, name)
        except AttributeError:
            raise AttributeError(
                f"SymbolicZero has no attribute {name!r} (nor has its aval "
                f"{self.aval!r})."
            ) from None

    def __repr__(self):
        return f"SymbolicZero({self.aval.str_short(short_dtypes=False)})"

    def instantiate(self):
        return ad.zeros_like_aval(self.aval)

    @staticmethod
    def from_primal_value(x):
        return SymbolicZero(ad.tangent_aval(get_aval(x)))


@dataclasses.dataclass(slots=True)
class CustomVJPPrimal:
    """What a `custom_vjp` forward rule defined with `symbolic_zeros=True` receives
    for each leaf of its arguments: the primal `value`, and whether it is
    `perturbed` (differentiated; when False, its cotangent is not wanted)."""

    value: object
    perturbed: bool


def custom_vjp_primal_tree_values(tree):
    """`tree` with each `CustomVJPPrimal` leaf replaced by its value (the arguments
    of a `symbolic_zeros=True` forward rule, as the primal function takes them)."""

    def value(leaf):
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"unexpected leaf type {type(leaf)}")
        return leaf.value

    return tree_util.tree_map(value, tree)


def zero_from_primal(val, symbolic_zeros=False):
    """A zero tangent for each leaf of `val`: SymbolicZeros, or arrays of zeros."""

    def zero(x):
        z = SymbolicZero.from_primal_value(x)
        return z if symbolic_zeros else z.instantiate()

    return tree_util.tree_map(zero, val)


# ----------------------------------------------------------------------------------------
# custom_jvp_call: params `call_jaxpr` (when staged) or `fun`, and `jvp`


class CustomJVPCallPrimitive(Primitive):
    """`bind(*args, fun=..., jvp=..., name=..., symbolic_zeros=...)`; `fun` maps flat
    values to flat outputs, `jvp(primals, tangents) -> (outs, out_tangents)` likewise.

    A staged call (`call_jaxpr`) may have `num_consts` leading operands: values the
    function closed over (see `_jaxpr_custom_jvp`); the rule never sees them."""

    def bind(
        self,
        *args,
        name,
        fun=None,
        call_jaxpr=None,
        jvp,
        num_consts=0,
        symbolic_zeros=False,
    ):
        if fun is None:
            fun = jaxpr_as_fun(call_jaxpr)
        if num_consts:
            jvp = _skip_consts_jvp(jvp, num_consts)
        return _state.trace.process_custom_jvp_call(
            self, fun, jvp, args, name, symbolic_zeros
        )


custom_jvp_call_p = CustomJVPCallPrimitive("custom_jvp_call", multiple_results=True)


def _skip_consts_jvp(jvp, n):
    def rule(primals, tangents):
        return jvp(primals[n:], tangents[n:])

    rule.__name__ = fun_name(jvp)
    return rule


def _stage_call(trace, fun, args):
    """Trace `fun` for a custom-derivative equation: `(call_jaxpr, operands,
    num_consts)`, the tracers it closes over made leading operands."""
    closed = trace_to_jaxpr(fun, [get_aval(a) for a in args])
    closed, consts = split_tracer_consts(closed)
    return closed, [trace.to_atom(a) for a in (*consts, *args)], len(consts)


def _eval_custom_jvp(self, prim, fun, jvp, args, name, symbolic_zeros):
    return fun(*args)


def _jaxpr_custom_jvp(self, prim, fun, jvp, args, name, symbolic_zeros):
    closed, atoms, num_consts = _stage_call(self, fun, args)
    outvars = [Var(a) for a in closed.out_avals]
    params = dict(name=name, call_jaxpr=closed, jvp=jvp)
    if num_consts:
        params["num_consts"] = num_consts
    params["symbolic_zeros"] = symbolic_zeros
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
        if symbolic_zeros:
            tangents = [
                SymbolicZero(t.aval) if type(t) is Zero else t for t in tangents
            ]
        else:
            tangents = [ad.instantiate(t) for t in tangents]
        outs, out_tangents = jvp(list(primals), list(tangents))
    out_tangents = [
        Zero(t.aval) if isinstance(t, SymbolicZero) else t for t in out_tangents
    ]
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


class _BatchedCall:
    """The rules of a custom-derivative call under one `vmap`, run in a sub-trace of
    that vmap's BatchTrace (so values of the vmap that they close over are batched too).

    Whichever rule runs first (the function, its JVP or its forward pass) fixes each
    output's batch dimension (0 or not_mapped); later runs are made to agree."""

    def __init__(self, trace, dims):
        self.trace = trace
        self.dims = dims
        self.out_dims = None
        self.res_dims = None  # a custom_vjp's residuals' batch dims (fwd sets them)
        # Named axes spanning processes (shard_map, pmap): a bwd rule runs after the
        # call that bound them has returned, and its collectives must still cross.
        self.process_axes = bound_process_axes()

    def run(self, fun, xs, dims):
        sub = self.trace.subtrace()
        with process_axes(self.process_axes):
            return batching.vmap_flat(fun, self.trace.axis_size, xs, dims, trace=sub)

    def fix(self, *per_output_dims):
        if self.out_dims is None:
            self.out_dims = [
                0 if any(d is not batching.not_mapped for d in ds) else None
                for ds in zip(*per_output_dims)
            ]

    def conform(self, outs, dims, wants=None):
        size = self.trace.axis_size
        result = []
        for o, d, want in zip(outs, dims, self.out_dims if wants is None else wants):
            if want is None:
                if d is not batching.not_mapped:
                    raise ValueError(
                        "a custom_jvp/custom_vjp rule under vmap returned an output "
                        "batched over the vmapped axis where the function's own output "
                        "is not; make the rule's outputs depend on the same inputs."
                    )
                result.append(o)
            else:
                result.append(batching.bdim_at_front(o, d, size))
        return result

    def tracers(self, outs):
        assert self.out_dims is not None, "no rule of the batched call ran"
        return [
            o if d is None else batching.BatchTracer(self.trace, o, d)
            for o, d in zip(outs, self.out_dims)
        ]

    def fun(self, fun):
        def fun_batched(*xs):
            outs, out_dims = self.run(fun, xs, self.dims)
            self.fix(out_dims)
            return self.conform(outs, out_dims)

        fun_batched.__name__ = fun_name(fun)
        return fun_batched


def _batch_custom_jvp(self, prim, fun, jvp, args, name, symbolic_zeros):
    # No shortcut when no operand is batched: `fun` may close over batched values.
    vals, dims = zip(*(self.to_batch_info(x) for x in args)) if args else ((), ())
    call = _BatchedCall(self, dims)

    def jvp_batched(primals, tangents):
        # Symbolic zero tangents (symbolic_zeros=True) stay symbolic: the rule sees
        # them per example, and those it returns are batched like their primals.
        n = len(primals)
        zeros_in = [
            SymbolicZero(_unbatched_aval(t.aval, d))
            if isinstance(t, SymbolicZero)
            else None
            for t, d in zip(tangents, dims)
        ]
        live = [i for i, z in enumerate(zeros_in) if z is None]
        zeros_out = []

        def flat(*xs):
            ts = iter(xs[n:])
            outs, out_ts = jvp(
                list(xs[:n]), [next(ts) if z is None else z for z in zeros_in]
            )
            zeros_out[:] = [_symbolic_zero_aval(t) for t in out_ts]
            live_ts = [t for t, z in zip(out_ts, zeros_out) if z is None]
            return [*outs, *live_ts]

        live_ts = [tangents[i] for i in live]
        live_dims = [dims[i] for i in live]
        outs, out_dims = call.run(flat, [*primals, *live_ts], [*dims, *live_dims])
        m = len(zeros_out)
        t_dims, t_outs = iter(out_dims[m:]), iter(outs[m:])
        t_dims = [batching.not_mapped if z else next(t_dims) for z in zeros_out]
        call.fix(out_dims[:m], t_dims)
        t_outs = [None if z else next(t_outs) for z in zeros_out]
        out_ts = call.conform(
            [o for o in t_outs if o is not None],
            [d for d, z in zip(t_dims, zeros_out) if z is None],
            [w for w, z in zip(call.out_dims, zeros_out) if z is None],
        )
        out_ts = iter(out_ts)
        size = self.axis_size
        out_ts = [
            next(out_ts) if z is None else SymbolicZero(_batched_aval(z, w, size))
            for z, w in zip(zeros_out, call.out_dims)
        ]
        return call.conform(outs[:m], out_dims[:m]), out_ts

    jvp_batched.__name__ = fun_name(jvp)
    with set_current_trace(self.parent):
        outs = prim.bind(
            *vals,
            name=name,
            fun=call.fun(fun),
            jvp=jvp_batched,
            symbolic_zeros=symbolic_zeros,
        )
    return call.tracers(outs)


def _symbolic_zero_aval(t):
    """The aval of a symbolic zero tangent (`Zero`/`SymbolicZero`), else None."""
    return t.aval if isinstance(t, (Zero, SymbolicZero)) else None


def _unbatched_aval(aval, dim):
    """The per-example aval of a value batched along `dim` (or not batched)."""
    if dim is batching.not_mapped:
        return aval
    return aval.update(shape=aval.shape[:dim] + aval.shape[dim + 1 :])


def _batched_aval(aval, want, size):
    """The aval of per-example `aval` batched at the front (`want` 0) or not."""
    return aval if want is None else aval.update(shape=(size, *aval.shape))


custom_jvp_call_rules[EvalTrace] = _eval_custom_jvp
custom_jvp_call_rules[DynamicJaxprTrace] = _jaxpr_custom_jvp
custom_jvp_call_rules[JVPTrace] = _jvp_custom_jvp
custom_jvp_call_rules[LinearizeTrace] = _linearize_custom_jvp
custom_jvp_call_rules[BatchTrace] = _batch_custom_jvp


def _custom_jvp_call_abstract(*avals, call_jaxpr, **params):
    return list(call_jaxpr.out_avals), call_jaxpr.effects


def _custom_jvp_call_dce(used_outs, eqn):
    if not any(used_outs) and not eqn.effects:
        return [False] * len(eqn.invars), None
    return [True] * len(eqn.invars), eqn


def _custom_jvp_call_transpose(cts, *args, call_jaxpr, **params):
    """A linear custom_jvp function (e.g. `jnp.linalg.solve` in its right-hand side)
    transposes by transposing its primal function; the custom rule is not involved,
    as in JAX. Its closed-over operands are known, so they act as residuals."""
    return ad.transpose_jaxpr_call(cts, args, call_jaxpr)


abstract_eval_rules[custom_jvp_call_p] = _custom_jvp_call_abstract
lowering_rules[custom_jvp_call_p] = call_lowering("call_jaxpr", "custom_jvp")
native_rules[custom_jvp_call_p] = "custom_call"
dce_rules[custom_jvp_call_p] = _custom_jvp_call_dce
ad.transpose_rules[custom_jvp_call_p] = _custom_jvp_call_transpose


class custom_jvp:  # noqa: N801  (JAX's name)
    """A function with a custom JVP rule: `f = custom_jvp(fun); f.defjvp(rule)`."""

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _nondiff_argnums(fun, nondiff_argnums, nondiff_argnames)
        self.jvp = None
        self.symbolic_zeros = False
        self._arity = positional_arity(fun)

    __getattr__ = forward_def_attr

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
        name = fun_name(self.fun)
        args = resolve_args(self.fun, args, kwargs, "custom_jvp", name, self._arity)
        if self.jvp is None:
            raise AttributeError(
                f"No JVP defined for custom_jvp function {name} using defjvp."
            )
        # Traced nondiff arguments are constants of the rule: no derivative flows
        # through them (JAX stages them behind stop_gradient).
        nondiff = {i: _stop_tracers(args[i]) for i in self.nondiff_argnums}
        diff_args = [a for i, a in enumerate(args) if i not in nondiff]
        leaves, in_tree = tree_util.tree_flatten(diff_args)
        leaves = _as_jax_values(leaves)
        out_tree_box = []
        fun_out = {}  # the function's output structure and types, once it ran

        def rebuild(diff):
            it = iter(diff)
            return [nondiff[i] if i in nondiff else next(it) for i in range(len(args))]

        def flat_fun(*flat):
            out = self.fun(*rebuild(tree_util.tree_unflatten(in_tree, flat)))
            out_leaves, out_tree = tree_util.tree_flatten(out)
            out_tree_box.append(out_tree)
            fun_out["type"] = (out_tree, [get_aval(x) for x in out_leaves])
            return out_leaves

        def flat_jvp(primals, tangents):
            p = tree_util.tree_unflatten(in_tree, primals)
            t = tree_util.tree_unflatten(in_tree, tangents)
            nd = [nondiff[i] for i in sorted(nondiff)]
            result = self.jvp(*nd, tuple(p), tuple(t))
            if not (isinstance(result, (tuple, list)) and len(result) == 2):
                raise TypeError(
                    f"Custom JVP rule {fun_name(self.jvp)} for function {fun_name(self.fun)} "
                    "must produce a pair (list or tuple of length two) representing "
                    f"primal and tangent outputs, but got {result}."
                )
            out, out_t = result
            out_leaves, out_tree = tree_util.tree_flatten(out)
            t_leaves, t_tree = tree_util.tree_flatten(out_t)
            if t_tree != out_tree:
                raise TypeError(
                    f"Custom JVP rule {fun_name(self.jvp)} for function {fun_name(self.fun)} must "
                    "produce primal and tangent outputs with equal container (pytree) "
                    f"structures, but got {out_tree} and {t_tree} respectively."
                )
            if "type" in fun_out:
                _check_rule_primal_out(
                    functools.partial(
                        _JVP_PRIMAL_OUT.format, jvp=fun_name(self.jvp), f=name
                    ),
                    name,
                    "custom_jvp",
                    fun_out["type"],
                    out_tree,
                    out_leaves,
                )
            _check_jvp_types(out_leaves, t_leaves)
            out_tree_box.append(out_tree)
            return out_leaves, t_leaves

        flat_jvp.__name__ = fun_name(self.jvp)
        outs = custom_jvp_call_p.bind(
            *leaves,
            name=fun_name(self.fun),
            fun=flat_fun,
            jvp=flat_jvp,
            symbolic_zeros=self.symbolic_zeros,
        )
        return tree_util.tree_unflatten(out_tree_box[-1], outs)


def _stop_tracers(tree):
    from jaxlite.lax.elementwise import stop_gradient

    def stop(x):
        return stop_gradient(x) if isinstance(x, Tracer) else x

    return tree_util.tree_map(stop, tree)


_JVP_PRIMAL_OUT = (
    "Custom JVP rule {jvp} for function {f} must produce a pair (list or tuple of "
    "length two) where the first element represents the primal output (equal in "
    "value to the output of the custom_jvp-decorated function {f}, and in particular "
    "{what}), but instead the JVP rule output's first element had {had}"
)
_FWD_PRIMAL_OUT = (
    "Custom VJP fwd rule {fwd} for function {f} must produce a pair (list or tuple of "
    "length two) where the first element represents the primal output (equal to the "
    "output of the custom_vjp-decorated function {f}) and the second element "
    "represents residuals (i.e. values stored from the forward pass for use on the "
    "backward pass), but instead the fwd rule output's first element had {had}"
)


def _check_rule_primal_out(head, name, what, fun_type, out_tree, out_leaves):
    """`head(what=..., had=...)` starts the message. A rule's primal output has the structure, shapes and dtypes of the function's
    (when the function ran first, as JAX checks it), with JAX's messages."""
    fun_tree, fun_avals = fun_type
    avals = [get_aval(x) for x in out_leaves]

    def types(tree, avals):
        strs = [a.str_short(short_dtypes=False) for a in avals]
        return str(tree_util.tree_unflatten(tree, strs)).replace("'", "")

    if out_tree != fun_tree:
        kind, end = "container/pytree structure", "."
    elif any(
        (a.shape, a.dtype) != (b.shape, b.dtype) for a, b in zip(avals, fun_avals)
    ):
        kind, end = "shapes/dtypes of", ""
    else:
        return
    particular = (
        "of the same container/pytree structure"
        if kind.startswith("container")
        else "with leaves of the same shape/dtype"
    )
    raise TypeError(
        head(what=particular, had=f"{kind}:\n")
        + f"    {types(out_tree, avals)}\n"
        + f"while the {what}-decorated function {name} had output {kind}:\n"
        + f"    {types(fun_tree, fun_avals)}{end}"
    )


def _check_jvp_types(primals, tangents):
    """Each tangent output has its primal output's tangent type (as JAX checks)."""
    for p, t in zip(primals, tangents):
        if t is None or isinstance(t, (Zero, SymbolicZero)):
            continue
        p_aval, t_aval = get_aval(p), get_aval(t)
        expected = ad.tangent_aval(p_aval)
        if t_aval.shape != expected.shape or t_aval.dtype != expected.dtype:
            raise TypeError(
                "Custom JVP rule must produce primal and tangent outputs with "
                "corresponding shapes and dtypes. Expected "
                f"{expected.str_short(short_dtypes=False)} (tangent type of "
                f"{p_aval.str_short(short_dtypes=False)}) but got "
                f"{t_aval.str_short(short_dtypes=False)}."
            )


class _Sentinel:
    """A leaf standing for one primal input leaf while matching bwd outputs."""


def _flatten_bwd_output(cts_in, in_tree, in_avals):
    """The flat cotangents a custom_vjp bwd rule returned (None for zeros), after
    checking them against the primal inputs (the list `in_tree` of arguments, by
    their avals: the rule must not keep the arguments, which may be tracers) as JAX
    does: a tuple with one entry per argument, each a tree prefix of the argument
    (None for zeros), with matching shapes."""
    expected = tuple(
        tree_util.tree_unflatten(in_tree, [_Sentinel()] * in_tree.num_leaves)
    )
    if isinstance(cts_in, list) and len(cts_in) == len(expected):
        cts_in = tuple(cts_in)
    ct_leaves, ct_tree = tree_util.tree_flatten(cts_in, is_leaf=lambda x: x is None)
    try:
        if not isinstance(cts_in, tuple):
            raise ValueError
        refs = ct_tree.flatten_up_to(expected)
    except Exception:
        raise TypeError(
            "Custom VJP bwd rule must produce an output with the same container "
            "(pytree) structure as the args tuple of the primal function, and in "
            "particular must produce a tuple of length equal to the number of "
            "arguments to the primal function, but got bwd output structure "
            f"{tree_util.tree_structure(cts_in)} for primal input structure "
            f"{tree_util.tree_structure(expected)}."
        ) from None
    flat = []
    for ct, ref in zip(ct_leaves, refs):
        # A leaf where the arguments have a subtree stands for each of its leaves (a
        # prefix, as JAX accepts it).
        flat.extend([ct] * len(tree_util.tree_leaves(ref)))
    paths = [p for p, _ in tree_util.tree_flatten_with_path(expected)[0]]
    for i, (ct, aval, path) in enumerate(zip(flat, in_avals, paths)):
        if ct is None or type(ct) is Zero:
            continue
        if isinstance(ct, SymbolicZero):
            _check_symbolic_zero_ct(ct, aval, path)
            flat[i] = None
            continue
        ct_aval = get_aval(ct)
        if ct_aval.shape != aval.shape:
            raise ValueError(
                "Custom VJP bwd rule must produce an output with the same type as the "
                "args tuple of the primal function, but at "
                f"output{tree_util.keystr(path)} the bwd rule produced an output of "
                f"type {ct_aval.str_short(short_dtypes=False)} corresponding to an "
                f"input of type {aval.str_short(short_dtypes=False)}, so the shapes "
                "do not match"
            )
    return flat


def _check_symbolic_zero_ct(ct, aval, path):
    expected = ad.tangent_aval(aval)
    if (ct.aval.shape, ct.aval.dtype) != (expected.shape, expected.dtype):
        raise ValueError(
            "Custom VJP bwd rule produced a SymbolicZero with a shape/dtype that does "
            "not match the corresponding input tangent shape/dtype: at "
            f"output{tree_util.keystr(path)} the SymbolicZero had shape/dtype "
            f"{ct.aval.str_short()} while the corresponding input had shape/dtype "
            f"{aval.str_short()}. Consider just returning a None here instead of a "
            "SymbolicZero object."
        )


_PYTHON_SCALARS = frozenset({bool, int, float, complex})
_DYNAMIC = object()  # marks a residual passed through the primitive


def _as_jax_value(x):
    if isinstance(x, Tracer) or hasattr(x, "aval"):
        return x
    from jaxlite.lax.structural import operand

    return operand(x)


def _as_jax_values(leaves):
    """Eagerly the function runs on its arguments as given (as JAX: Python scalars in
    give Python scalars out where the function computes with them); under a
    transformation they become arrays."""
    if type(_state.trace) is EvalTrace:
        return list(leaves)
    return [_as_jax_value(x) for x in leaves]


# ----------------------------------------------------------------------------------------
# custom_vjp_call and custom_lin


class CustomVJPCallPrimitive(Primitive):
    """`bind(*args, name=..., fun=..., fwd=..., bwd=..., symbolic_zeros=...)`, flat
    like custom_jvp_call: `fwd(perturbed, *primals) -> (outs, residuals)`, where
    `perturbed` says for each primal whether it is differentiated (its tangent is
    not a symbolic zero), and `bwd(residuals, cts) -> cts_in` (None for a zero),
    whose `cts` may hold `Zero`s for outputs with no cotangent. A staged call may
    have `num_consts` leading closed-over operands, which get no cotangent."""

    def bind(
        self,
        *args,
        name,
        fun=None,
        call_jaxpr=None,
        fwd,
        bwd,
        num_consts=0,
        symbolic_zeros=False,
    ):
        if fun is None:
            fun = jaxpr_as_fun(call_jaxpr)
        if num_consts:
            fwd, bwd = _skip_consts_fwd_bwd(fwd, bwd, num_consts)
        return _state.trace.process_custom_vjp_call(
            self, fun, fwd, bwd, args, name, symbolic_zeros
        )


custom_vjp_call_p = CustomVJPCallPrimitive("custom_vjp_call", multiple_results=True)


def _skip_consts_fwd_bwd(fwd, bwd, n):
    def fwd_rule(perturbed, *args):
        return fwd(perturbed[n:], *args[n:])

    def bwd_rule(res, cts):
        return [None] * n + list(bwd(res, cts))

    fwd_rule.__name__, bwd_rule.__name__ = fun_name(fwd), fun_name(bwd)
    if hasattr(bwd, "specialize"):  # a _StagedBwd, for the operands after the consts
        bwd_rule.specialize = lambda perturbed: _skip_consts_fwd_bwd(
            fwd, bwd.specialize(perturbed[n:]), n
        )[1]
    return fwd_rule, bwd_rule


def _eval_custom_vjp(self, prim, fun, fwd, bwd, args, name, symbolic_zeros):
    return fun(*args)


class _StagedBwd:
    """The bwd rule of a custom_vjp call staged into a jaxpr (a `jit` body). As in
    JAX, where the transpose of a jitted computation is traced once and cached with
    it, the rule is traced once per signature (which primals are perturbed, the
    operands' avals, which cotangents are symbolic zeros) and then evaluated from
    its jaxpr: differentiating the same jitted function again does not run the
    Python rule again. The cache lives in the equation's params, so as long as the
    jaxpr that holds it. The JVP of the call picks the signature (`specialize`):
    what the rule computes may depend on it through the residuals' static part.
    Called without one (from a rule that wrapped it), it runs the rule as given."""

    def __init__(self, bwd):
        self.bwd = bwd
        self.__name__ = fun_name(bwd)
        self.traced = {}

    def __call__(self, res, cts):
        return self.bwd(res, cts)

    def specialize(self, perturbed):
        def bwd(res, cts):
            return self._run(tuple(perturbed), res, cts)

        bwd.__name__ = self.__name__
        return bwd

    def _run(self, perturbed, res, cts):
        zeros = tuple(c.aval if type(c) is Zero else None for c in cts)
        live = [c for c in cts if type(c) is not Zero]
        avals = [get_aval(x) for x in (*res, *live)]
        key = (perturbed, tuple(avals), zeros)
        entry = self.traced.get(key)
        if entry is None:
            entry = self._trace(len(res), zeros, avals)
            if not any(isinstance(c, Tracer) for c in entry[0].consts):
                self.traced[key] = entry
        closed, nones = entry
        outs = iter(eval_jaxpr(closed.jaxpr, closed.consts, *res, *live))
        return [None if none else next(outs) for none in nones]

    def _trace(self, num_res, zeros, avals):
        nones = []

        def flat(*xs):
            given = iter(xs[num_res:])
            cts = [next(given) if z is None else Zero(z) for z in zeros]
            outs = self.bwd(list(xs[:num_res]), cts)
            nones.extend(o is None or type(o) is Zero for o in outs)
            return [o for o in outs if o is not None and type(o) is not Zero]

        return trace_to_jaxpr(flat, avals), nones


def _jaxpr_custom_vjp(self, prim, fun, fwd, bwd, args, name, symbolic_zeros):
    closed, atoms, num_consts = _stage_call(self, fun, args)
    outvars = [Var(a) for a in closed.out_avals]
    if type(bwd) is not _StagedBwd:
        bwd = _StagedBwd(bwd)
    params = dict(name=name, bwd=bwd, call_jaxpr=closed, fwd=fwd)
    if num_consts:
        params["num_consts"] = num_consts
    params["symbolic_zeros"] = symbolic_zeros
    self.eqns.append(JaxprEqn(prim, atoms, params, outvars, closed.effects))
    return [JaxprTracer(self, v) for v in outvars]


def _jvp_custom_vjp(self, prim, fun, fwd, bwd, args, name, symbolic_zeros):
    primals, tangents = (
        zip(*(self.to_primal_tangent(x) for x in args)) if args else ((), ())
    )
    with set_current_trace(self.parent):
        if all(type(t) is Zero for t in tangents):
            return prim.bind(
                *primals,
                name=name,
                fun=fun,
                fwd=fwd,
                bwd=bwd,
                symbolic_zeros=symbolic_zeros,
            )
        perturbed = tuple(type(t) is not Zero for t in tangents)
        outs, residuals = fwd(perturbed, *primals)
        tangents = [ad.instantiate(t) for t in tangents]
        out_avals = [ad.tangent_aval(get_aval(o)) for o in outs]
        specialize = getattr(bwd, "specialize", None)  # a staged rule: _StagedBwd
        out_tangents = custom_lin_p.bind(
            *residuals,
            *tangents,
            num_res=len(residuals),
            bwd=bwd if specialize is None else specialize(perturbed),
            out_avals=out_avals,
            in_avals=[ad.tangent_aval(get_aval(p)) for p in primals],
        )
    return [self.lift(p, t) for p, t in zip(outs, out_tangents)]


def _linearize_custom_vjp(self, prim, fun, fwd, bwd, args, name, symbolic_zeros):
    with set_current_trace(self.parent):
        return prim.bind(
            *args, name=name, fun=fun, fwd=fwd, bwd=bwd, symbolic_zeros=symbolic_zeros
        )


def _batch_custom_vjp(self, prim, fun, fwd, bwd, args, name, symbolic_zeros):
    # No shortcut when no operand is batched: `fun` may close over batched values.
    vals, dims = zip(*(self.to_batch_info(x) for x in args)) if args else ((), ())
    call = _BatchedCall(self, dims)
    in_avals = [get_aval(x) for x in args]  # per example
    size = self.axis_size

    def fwd_batched(perturbed, *xs):
        box = {}

        def flat(*ys):
            outs, res = fwd(perturbed, *ys)
            box["n"] = len(outs)
            return [*outs, *res]

        outs, out_dims = call.run(flat, xs, dims)
        n = box["n"]
        call.fix(out_dims[:n])
        # Residuals keep their batch dims: one the rule made without the batched
        # inputs (a constant) reaches the bwd rule unbatched, as in JAX.
        call.res_dims = out_dims[n:]
        return call.conform(outs[:n], out_dims[:n]), outs[n:]

    def bwd_batched(res, cts):
        from jaxlite.lax.reductions import reduce_sum

        # Zero cotangents stay symbolic, seen per example by the rule.
        zeros = [
            Zero(_unbatched_aval(c.aval, d)) if type(c) is Zero else None
            for c, d in zip(cts, call.out_dims)
        ]

        def flat(*ys):
            live = iter(ys[len(res) :])
            cts_out = [next(live) if z is None else z for z in zeros]
            cts_in = bwd(ys[: len(res)], cts_out)
            return [_instantiate_ct(c, a) for c, a in zip(cts_in, in_avals)]

        live = [c for c, z in zip(cts, zeros) if z is None]
        ct_dims = [
            batching.not_mapped if d is None else 0
            for d, z in zip(call.out_dims, zeros)
            if z is None
        ]
        outs, out_dims = call.run(flat, [*res, *live], [*call.res_dims, *ct_dims])
        cts_in = []
        for ct, d, want in zip(outs, out_dims, dims):
            if want is batching.not_mapped and d is not batching.not_mapped:
                ct = reduce_sum(ct, (d,))  # the input is shared by the whole batch
            elif want is not batching.not_mapped:
                ct = batching.move_to(ct, d, want, size)
            cts_in.append(ct)
        return cts_in

    fwd_batched.__name__, bwd_batched.__name__ = fun_name(fwd), fun_name(bwd)
    with set_current_trace(self.parent):
        outs = prim.bind(
            *vals,
            name=name,
            fun=call.fun(fun),
            fwd=fwd_batched,
            bwd=bwd_batched,
            symbolic_zeros=symbolic_zeros,
        )
    return call.tracers(outs)


def _instantiate_ct(ct, aval):
    """A cotangent from a bwd rule as a value: None or a symbolic zero become zeros
    of the primal's (unbatched) tangent type."""
    if ct is None or type(ct) is Zero:
        return ad.zeros_like_aval(ad.tangent_aval(aval))
    return ct


custom_vjp_call_rules[EvalTrace] = _eval_custom_vjp
custom_vjp_call_rules[DynamicJaxprTrace] = _jaxpr_custom_vjp
custom_vjp_call_rules[JVPTrace] = _jvp_custom_vjp
custom_vjp_call_rules[LinearizeTrace] = _linearize_custom_vjp
custom_vjp_call_rules[BatchTrace] = _batch_custom_vjp


def _custom_vjp_call_abstract(*avals, call_jaxpr, **params):
    return list(call_jaxpr.out_avals), call_jaxpr.effects


abstract_eval_rules[custom_vjp_call_p] = _custom_vjp_call_abstract
lowering_rules[custom_vjp_call_p] = call_lowering("call_jaxpr", "custom_vjp")
native_rules[custom_vjp_call_p] = "custom_call"
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

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _nondiff_argnums(fun, nondiff_argnums, nondiff_argnames)
        self.fwd = None
        self.bwd = None
        self.symbolic_zeros = False
        self.optimize_remat = False
        self._arity = positional_arity(fun)

    __getattr__ = forward_def_attr

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        """`fwd(*args) -> (out, residuals)`, `bwd(residuals, ct) -> cts` (a tuple,
        one entry per argument, None for no cotangent); nondiff args come first.

        With `symbolic_zeros=True`, `fwd` receives each argument leaf as a
        `CustomVJPPrimal(value, perturbed)`, and `bwd` receives a `SymbolicZero`
        for each output with no cotangent; it may return SymbolicZeros too.
        `optimize_remat` (JAX's remat optimization of the forward rule) is
        accepted; results are the same without it."""
        if symbolic_zeros and optimize_remat:
            raise NotImplementedError(
                "remat optimization for custom_vjp does not support symbolic zeros"
            )
        self.fwd = fwd
        self.bwd = bwd
        self.symbolic_zeros = symbolic_zeros
        self.optimize_remat = optimize_remat
        return None

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __call__(self, *args, **kwargs):
        name = fun_name(self.fun)
        args = resolve_args(self.fun, args, kwargs, "custom_vjp", name, self._arity)
        if self.fwd is None:
            raise AttributeError(
                f"No VJP defined for custom_vjp function {name} using defvjp."
            )
        nondiff = {i: args[i] for i in self.nondiff_argnums}
        if any(
            isinstance(x, Tracer)
            for a in nondiff.values()
            for x in tree_util.tree_leaves(a)
        ):
            raise UnexpectedTracerError(
                "Found a JAX Tracer object passed as an argument to a custom_vjp "
                "function in a position indicated by nondiff_argnums as "
                "non-differentiable. Tracers cannot be passed as non-differentiable "
                "arguments to custom_vjp functions; instead, nondiff_argnums should "
                "only be used for arguments that can't be or contain JAX tracers, e.g. "
                "function-valued arguments. In particular, array-valued arguments "
                "should typically not be indicated as nondiff_argnums."
            )
        diff_args = [a for i, a in enumerate(args) if i not in nondiff]
        leaves, in_tree = tree_util.tree_flatten(diff_args)
        leaves = _as_jax_values(leaves)
        nd = [nondiff[i] for i in sorted(nondiff)]
        box = {}

        def rebuild(diff):
            it = iter(diff)
            return [nondiff[i] if i in nondiff else next(it) for i in range(len(args))]

        def flat_fun(*flat):
            out = self.fun(*rebuild(tree_util.tree_unflatten(in_tree, flat)))
            out_leaves, box["out_tree"] = tree_util.tree_flatten(out)
            box["fun_type"] = (box["out_tree"], [get_aval(x) for x in out_leaves])
            return out_leaves

        def flat_fwd(perturbed, *flat):
            if self.symbolic_zeros:
                flat = [CustomVJPPrimal(x, p) for x, p in zip(flat, perturbed)]
            result = self.fwd(*rebuild(tree_util.tree_unflatten(in_tree, flat)))
            if not (isinstance(result, (tuple, list)) and len(result) == 2):
                fwd_name = fun_name(self.fwd)
                raise TypeError(
                    f"Custom VJP fwd rule {fwd_name} for function {name} must "
                    "produce a pair (list or tuple of length two) where the first "
                    "element represents the primal output (equal to those of the "
                    f"custom_vjp-decorated function {name}) and the second element "
                    "represents residuals (i.e. values stored from the forward pass "
                    "for use on the backward pass), but instead of a pair the fwd rule "
                    f"{fwd_name} produced {result}."
                )
            out, res = result
            out_leaves, out_tree = tree_util.tree_flatten(out)
            if "fun_type" in box:
                _check_rule_primal_out(
                    functools.partial(
                        _FWD_PRIMAL_OUT.format, fwd=fun_name(self.fwd), f=name
                    ),
                    name,
                    "custom_vjp",
                    box["fun_type"],
                    out_tree,
                    out_leaves,
                )
            box["out_tree"] = out_tree
            res_leaves, box["res_tree"] = tree_util.tree_flatten(res)
            # Python scalars (flags such as `perturbed`) reach bwd as they are,
            # as in JAX, where they are no tracers: they stay on the Python side.
            box["res_static"] = [
                r if type(r) in _PYTHON_SCALARS else _DYNAMIC for r in res_leaves
            ]
            return out_leaves, [
                _as_jax_value(r) for r in res_leaves if type(r) not in _PYTHON_SCALARS
            ]

        def flat_bwd(res_leaves, ct_leaves):
            dynamic = iter(res_leaves)
            res_leaves = [
                next(dynamic) if r is _DYNAMIC else r for r in box["res_static"]
            ]
            res = tree_util.tree_unflatten(box["res_tree"], res_leaves)
            if self.symbolic_zeros:
                ct_leaves = [
                    SymbolicZero(c.aval) if type(c) is Zero else c for c in ct_leaves
                ]
            else:
                ct_leaves = [ad.instantiate(c) for c in ct_leaves]
            cts = tree_util.tree_unflatten(box["out_tree"], ct_leaves)
            cts_in = self.bwd(*nd, res, cts)
            return _flatten_bwd_output(cts_in, in_tree, in_avals)

        in_avals = [get_aval(x) for x in leaves]
        flat_fwd.__name__, flat_bwd.__name__ = fun_name(self.fwd), fun_name(self.bwd)
        outs = custom_vjp_call_p.bind(
            *leaves,
            name=fun_name(self.fun),
            fun=flat_fun,
            fwd=flat_fwd,
            bwd=flat_bwd,
            symbolic_zeros=self.symbolic_zeros,
        )
        return tree_util.tree_unflatten(box["out_tree"], outs)
