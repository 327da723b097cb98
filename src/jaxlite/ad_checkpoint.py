"""`checkpoint` (alias `remat`): save memory in reverse mode by recomputing.

`checkpoint(f)` stages `f` as one `remat2` equation. Under differentiation its partial
evaluation rule splits the differentiated body into a known part (the primal outputs)
and an unknown part (the tangents). The unknown part needs some known intermediates
(residuals); the `policy` decides which of them are saved by the forward pass and which
are recomputed from the inputs during the backward pass: by default none are saved
(everything is recomputed), `checkpoint_policies.dots_saveable` saves the results of
matrix products, `save_only_these_names` the values marked with `checkpoint_name`.
A policy is `policy(prim, *avals, **params) -> bool` (may this equation's outputs be
saved?), as in JAX.

The staging follows JAX so that jaxprs print alike: the known part runs inline in the
forward pass (saved values rounded by `reduce_precision`), the unknown part is a
`remat2[differentiated=True]` of the linear map, and its transpose is again a `remat2`
that recomputes what was not saved before running the backward pass.
`print_saved_residuals` reports each residual with the argument or user source line it
comes from (see `source_info`).
"""

from __future__ import annotations

import functools
import types

import numpy as np

from jaxlite import source_info, tree_util
from jaxlite.api_util import trace_flat
from jaxlite.backend import compile as backend_compile
from jaxlite.backend import lowering_rules
from jaxlite.backend.lowering import call_lowering
from jaxlite.backend.native import native_rules
from jaxlite.backend.numpy_backend import inline
from jaxlite.core import (
    ClosedJaxpr,
    Jaxpr,
    JaxprEqn,
    Primitive,
    Var,
    abstract_eval_rules,
    dce_jaxpr,
    eval_jaxpr,
    get_aval,
    impl_rules,
    jaxpr_as_fun,
    no_effects,
    physical_rules,
    set_current_trace,
)
from jaxlite.interpreters import ad, batching, physical
from jaxlite.interpreters.partial_eval import (
    DynamicJaxprTrace,
    _flat_arg_names,
    closure_call_primitives,
    trace_to_jaxpr,
)


def _remat_abstract(*avals, differentiated, jaxpr, policy, prevent_cse):
    return list(jaxpr.out_avals), jaxpr.effects


def _remat_impl(*args, differentiated, jaxpr, policy, prevent_cse):
    return backend_compile(jaxpr)(*args)


def _remat_jvp(primals, tangents, *, differentiated, jaxpr, policy, prevent_cse):
    nonzero = [type(t) is not ad.Zero for t in tangents]
    tangents = [t for t in tangents if type(t) is not ad.Zero]
    in_avals = list(jaxpr.in_avals) + [
        ad.tangent_aval(a) for a, nz in zip(jaxpr.in_avals, nonzero) if nz
    ]
    n = len(primals)
    out_nonzero = []

    def jvp_body(*args):
        ts = iter(args[n:])
        tin = [
            next(ts) if nz else ad.Zero(ad.tangent_aval(a))
            for a, nz in zip(jaxpr.in_avals, nonzero)
        ]
        outs, out_ts = ad.jvp_flat(jaxpr_as_fun(jaxpr), args[:n], tin)
        out_nonzero[:] = [type(t) is not ad.Zero for t in out_ts]
        return outs + [t for t in out_ts if type(t) is not ad.Zero]

    jvp_jaxpr = trace_to_jaxpr(jvp_body, in_avals)
    outs = remat_p.bind(
        *primals,
        *tangents,
        differentiated=differentiated,
        jaxpr=jvp_jaxpr,
        policy=policy,
        prevent_cse=prevent_cse,
    )
    n_out = len(jaxpr.out_avals)
    primal_outs, nz_ts = outs[:n_out], iter(outs[n_out:])
    out_ts = [
        next(nz_ts) if nz else ad.Zero(ad.tangent_aval(get_aval(p)))
        for p, nz in zip(primal_outs, out_nonzero)
    ]
    return primal_outs, out_ts


def _remat_partial_eval(trace, args, params):
    """Known outputs now; the unknown ones later, from the residuals the policy lets
    the forward pass save and the rest recomputed from the known inputs."""
    jaxpr = params["jaxpr"]
    from jaxlite.effects import remat_allowed_effects

    disallowed = remat_allowed_effects.filter_not_in(jaxpr.effects)
    if disallowed:
        raise NotImplementedError(
            "Effects not supported in partial-eval of `checkpoint`/`remat`: "
            f"{disallowed}. Recomputing the body in the backward pass would run these "
            "effects twice; move the io_callback out of the checkpointed function."
        )
    unknowns = [trace.is_unknown(a) for a in args]
    order = []
    known, unknown, out_unknowns, num_res = ad.partial_eval_jaxpr(
        jaxpr, unknowns, order=order
    )
    known, recompute, num_saved, used_known_ins = _apply_policy(
        known, unknown, num_res, params["policy"], order
    )
    known_args = [a for a, u in zip(args, unknowns) if not u]
    n_known_out = len(known.out_avals) - num_saved
    # The known part runs now, inline (as JAX hoists it out of the remat), with the
    # saved residuals rounded to their own precision so that recomputing them in the
    # backward pass gives the same bits.
    known = _round_saved_residuals(known, num_saved)
    with set_current_trace(trace):
        known_outs = eval_jaxpr(known.jaxpr, known.consts, *known_args)
    saved = known_outs[n_known_out:]
    known_ins = [a for a, used in zip(known_args, used_known_ins) if used]
    unknown_args = [a for a, u in zip(args, unknowns) if u]
    with set_current_trace(trace.tangent_trace):
        unknown_outs = remat_p.bind(
            *saved,
            *known_ins,
            *unknown_args,
            **{**params, "jaxpr": recompute, "differentiated": True},
        )
    known_it, unknown_it = iter(known_outs[:n_known_out]), iter(unknown_outs)
    return [next(unknown_it) if u else next(known_it) for u in out_unknowns]


def _round_saved_residuals(closed, num_saved):
    """`closed` with `reduce_precision` (to the value's own format) after each
    equation producing a saved floating-point residual that later equations also read."""
    from jaxlite import dtypes
    from jaxlite.lax.bits import reduce_precision_p

    j = closed.jaxpr
    saved = j.outvars[len(j.outvars) - num_saved :]
    read = {x for e in j.eqns for x in e.invars if type(x) is Var}
    eqns = list(j.eqns)
    for v in saved:
        if type(v) is not Var or v not in read:
            continue
        if not dtypes.issubdtype(v.aval.dtype, np.floating):
            continue
        producer = [i for i, e in enumerate(eqns) if v in e.outvars]
        if not producer:  # an input or constant of the known part
            continue
        (i,) = producer
        eqn = eqns[i]
        info = dtypes.finfo(v.aval.dtype)
        params = {"exponent_bits": int(info.nexp), "mantissa_bits": int(info.nmant)}
        if eqn.primitive is reduce_precision_p and eqn.params == params:
            continue
        raw = Var(v.aval)
        eqns[i] = eqn.replace(outvars=[raw if o is v else o for o in eqn.outvars])
        rounding = JaxprEqn(
            reduce_precision_p, [raw], params, [v], source_info=eqn.source_info
        )
        eqns.insert(i + 1, rounding)
    if len(eqns) == len(j.eqns):
        return closed
    new = Jaxpr(j.constvars, j.invars, j.outvars, eqns, j.effects)
    return ClosedJaxpr(new, closed.consts)


def _apply_policy(known, unknown, num_res, policy, order=()):
    """Choose the residuals to save.

    `known` maps the known inputs to the known outputs and `num_res` residuals;
    `unknown` maps the residuals and the unknown inputs to the unknown outputs. Returns
    `(known', unknown', num_saved, used_known_inputs)`: `known'` outputs the known
    outputs and the saved values (outputs of equations `policy` allows to save);
    `unknown'` takes the saved values, the used known inputs and the unknown inputs,
    recomputes the residuals that were not saved, then runs `unknown`. As in JAX, its
    equations keep their program order (`order` lists both parts' equations) and the
    saved values come in the order the body first reads them.
    """
    k = known.jaxpr
    n_out = len(k.outvars) - num_res
    saveable = set()
    for eqn in k.eqns:
        avals = [x.aval for x in eqn.invars]
        if policy is not None and policy(eqn.primitive, *avals, **eqn.params):
            saveable.update(eqn.outvars)
    # The recomputation: the known equations that are not saved, from the saved
    # values, the known inputs and the known jaxpr's constants.
    saved_vars = [v for e in k.eqns for v in e.outvars if v in saveable]
    recompute = Jaxpr(
        k.constvars,
        saved_vars + k.invars,
        k.outvars[n_out:],
        [e for e in k.eqns if not any(v in saveable for v in e.outvars)],
    )
    recompute, used = dce_jaxpr(recompute)
    used_saved = [v for v, u in zip(saved_vars, used) if u]
    used_known_ins = used[len(saved_vars) :]
    # The residual inputs of `unknown` become the recomputation's results.
    u = unknown.jaxpr
    subst = dict(zip(u.invars[:num_res], recompute.outvars))

    def sub(x):
        return subst.get(x, x) if type(x) is Var else x

    unknown_eqns = [(e, e.replace(invars=[sub(x) for x in e.invars])) for e in u.eqns]
    eqns = _merge_in_order(recompute.eqns, unknown_eqns, order)
    first_read = {}
    for i, e in enumerate(eqns):
        for x in e.invars:
            first_read.setdefault(x, i)
    used_saved.sort(key=lambda v: first_read.get(v, len(eqns)))
    new_known, _ = dce_jaxpr(
        Jaxpr(k.constvars, k.invars, k.outvars[:n_out] + used_saved, k.eqns)
    )
    used_ins = [v for v, used in zip(k.invars, used_known_ins) if used]
    body = Jaxpr(
        recompute.constvars,
        used_saved + used_ins + u.invars[num_res:],
        [sub(x) for x in u.outvars],
        eqns,
    )
    consts = dict(zip(k.constvars, known.consts))
    new_consts = [consts[v] for v in new_known.constvars]
    body_consts = [consts[v] for v in body.constvars]
    return (
        ClosedJaxpr(new_known, new_consts),
        ClosedJaxpr(body, body_consts),
        len(used_saved),
        used_known_ins,
    )


def _merge_in_order(recompute_eqns, unknown_eqns, order):
    """The recomputed and the unknown equations interleaved in program order (each
    list keeps its own order; `unknown_eqns` pairs each original equation with its
    rewritten form). Falls back to recomputation first if the order is incomplete."""
    position = {id(e): i for i, e in enumerate(order)}
    keyed, last = [], -1.0
    for e in recompute_eqns:
        last = position.get(id(e), last + 1e-6)
        keyed.append((last, 0, e))
    last = -1.0
    for original, e in unknown_eqns:
        last = position.get(id(original), last + 1e-6)
        keyed.append((last, 1, e))
    merged = [e for _, _, e in sorted(keyed, key=lambda t: (t[0], t[1]))]
    produced = {v for e in merged for v in e.outvars}
    defined = set()
    for e in merged:
        if any(x in produced and x not in defined for x in e.invars if type(x) is Var):
            return list(recompute_eqns) + [e for _, e in unknown_eqns]
        defined.update(e.outvars)
    return merged


def _remat_transpose(cts, *args, differentiated, jaxpr, policy, prevent_cse):
    """A remat2 of the transposed body (as JAX): it takes the known operands and the
    nonzero cotangents, recomputes the residuals it needs, then runs the backward pass;
    it returns the nonzero cotangents of the linear operands."""
    linear = [ad.is_undefined(a) for a in args]
    known_vals = [a for a in args if not ad.is_undefined(a)]
    ct_zero = [type(ct) is ad.Zero for ct in cts]
    nz_cts = [ct for ct, z in zip(cts, ct_zero) if not z]
    in_avals = [get_aval(a) for a in known_vals] + [get_aval(ct) for ct in nz_cts]
    in_zero = []

    def transposed(*vals):
        known_it = iter(vals[: len(known_vals)])
        ct_it = iter(vals[len(known_vals) :])
        full_args = [a if lin else next(known_it) for a, lin in zip(args, linear)]
        full_cts = [ct if z else next(ct_it) for ct, z in zip(cts, ct_zero)]
        in_cts = ad.transpose_jaxpr_call(full_cts, full_args, jaxpr)
        lin_cts = [ct for ct, lin in zip(in_cts, linear) if lin]
        in_zero[:] = [ct is None or type(ct) is ad.Zero for ct in lin_cts]
        return [ct for ct, z in zip(lin_cts, in_zero) if not z]

    body = trace_to_jaxpr(transposed, in_avals)
    outs = remat_p.bind(
        *known_vals,
        *nz_cts,
        differentiated=differentiated,
        jaxpr=body,
        policy=policy,
        prevent_cse=prevent_cse,
    )
    outs_it, zero_it = iter(outs), iter(in_zero)
    return [next(outs_it) if lin and not next(zero_it) else None for lin in linear]


def _remat_batch(axis_size, vals, dims, *, differentiated, jaxpr, policy, prevent_cse):
    batched, out_dims = batching.batch_jaxpr(jaxpr, axis_size, dims)
    outs = remat_p.bind(
        *vals,
        differentiated=differentiated,
        jaxpr=batched,
        policy=policy,
        prevent_cse=prevent_cse,
    )
    return outs, out_dims


remat_p = Primitive("remat2", multiple_results=True)
abstract_eval_rules[remat_p] = _remat_abstract
lowering_rules[remat_p] = call_lowering("jaxpr", "remat")
native_rules[remat_p] = "call"
ad.jvp_rules[remat_p] = _remat_jvp
ad.partial_eval_rules[remat_p] = _remat_partial_eval
ad.transpose_rules[remat_p] = _remat_transpose
batching.batch_rules[remat_p] = _remat_batch
physical_rules[remat_p] = physical.inline_call("jaxpr")
impl_rules[remat_p] = _remat_impl
closure_call_primitives.add(remat_p)


class _FunctionPolicy:
    """A policy given as a plain function, printed in jaxprs as JAX prints it
    (`policy=<function everything_saveable at 0xXXXXXXXXXXXX>`, address masked)."""

    __slots__ = ("fun",)

    def __init__(self, fun):
        self.fun = fun

    def __call__(self, prim, *avals, **params):
        return self.fun(prim, *avals, **params)

    def __eq__(self, other):
        return isinstance(other, _FunctionPolicy) and other.fun == self.fun

    def __hash__(self):
        return hash(self.fun)

    def __repr__(self):
        return f"<function {self.fun.__qualname__} at 0x{'X' * 12}>"


def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=()):
    """`fun`, but reverse mode recomputes its intermediates instead of storing them."""
    if isinstance(policy, types.FunctionType):
        policy = _FunctionPolicy(policy)
    static_argnums = (
        (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    )

    @functools.wraps(fun)
    def remat_fun(*args, **kwargs):
        static = {i: args[i] for i in static_argnums}
        dyn = [a for i, a in enumerate(args) if i not in static]
        leaves, in_tree = tree_util.tree_flatten((dyn, kwargs))
        from jaxlite.numpy import asarray

        leaves = [x if hasattr(x, "aval") else asarray(x) for x in leaves]

        def dynamic_fun(*d, **kw):
            it = iter(d)
            full = [static[i] if i in static else next(it) for i in range(len(args))]
            return fun(*full, **kw)

        closed, out_tree = trace_flat(
            dynamic_fun, in_tree, [get_aval(x) for x in leaves], kwargs=True
        )
        outs = remat_p.bind(
            *leaves,
            differentiated=False,
            jaxpr=closed,
            policy=policy,
            prevent_cse=prevent_cse,
        )
        return tree_util.tree_unflatten(out_tree, outs)

    return remat_fun


def remat(fun, *, prevent_cse=True, policy=None, static_argnums=()):
    """Alias of `checkpoint`."""
    return checkpoint(
        fun, prevent_cse=prevent_cse, policy=policy, static_argnums=static_argnums
    )


# ----------------------------------------------------------------------------------------
# Policies: `policy(prim, *avals, **params) -> bool`, may this equation's outputs be saved.


def everything_saveable(*_, **__):
    """Save every residual: no recomputation (as if there were no checkpoint)."""
    return True


def nothing_saveable(*_, **__):
    """Save nothing but the inputs: recompute everything (the default)."""
    return False


class DotsSaveable:
    """Save the results of matrix products (`dot_general`), optionally only those
    without batch dimensions."""

    def __init__(self, only_if_no_batch_dims=False):
        self.only_if_no_batch_dims = only_if_no_batch_dims

    def __call__(self, prim, *avals, **params):
        from jaxlite.lax.dot import dot_general_p

        if prim is not dot_general_p:
            return False
        if self.only_if_no_batch_dims:
            (_, _), (lhs_batch, _) = params["dimension_numbers"]
            return not lhs_batch
        return True

    def __repr__(self):
        return f"DotsSaveable(only_if_no_batch_dims={self.only_if_no_batch_dims})"


dots_saveable = checkpoint_dots = DotsSaveable()
dots_with_no_batch_dims_saveable = DotsSaveable(only_if_no_batch_dims=True)
checkpoint_dots_with_no_batch_dims = dots_with_no_batch_dims_saveable


class SaveOnlyTheseNames:
    """Save the values named (with `checkpoint_name`) in `saveable_names`."""

    def __init__(self, *names):
        self.saveable_names = frozenset(names)

    def __call__(self, prim, *avals, **params):
        return prim is name_p and params["name"] in self.saveable_names

    def __repr__(self):
        return f"SaveOnlyTheseNames(saveable_names={self.saveable_names})"


class SaveAnyNamesButThese:
    """Save every named value except those named in `names`."""

    def __init__(self, *names):
        self.names = frozenset(names)

    def __call__(self, prim, *avals, **params):
        return prim is name_p and params["name"] not in self.names

    def __repr__(self):
        return f"SaveAnyNamesButThese(names={self.names})"


def save_only_these_names(*names):
    return SaveOnlyTheseNames(*names)


def save_any_names_but_these(*names):
    return SaveAnyNamesButThese(*names)


def save_anything_except_these_names(*names):
    """Meant to save every value except those named in `names`; JAX 0.10.2 saves every
    value, named or not (its policy ignores `names`), and so does jaxlite."""

    def policy(prim, *avals, **params):
        return True

    return policy


def save_from_both_policies(policy_1, policy_2):
    """Save what either policy saves."""

    def policy(prim, *avals, **params):
        return policy_1(prim, *avals, **params) or policy_2(prim, *avals, **params)

    return policy


def save_and_offload_only_these_names(
    *, names_which_can_be_saved, names_which_can_be_offloaded, offload_src, offload_dst
):
    """jaxlite has one memory space: values that JAX would offload are saved."""
    saved, offloaded = set(names_which_can_be_saved), set(names_which_can_be_offloaded)
    if saved & offloaded:
        raise ValueError(
            "The names should be exclusive and should not intersect in "
            "`names_which_can_be_saved` and `names_which_can_be_offloaded`. Got "
            f"names_which_can_be_saved={saved}, names_which_can_be_offloaded="
            f"{offloaded} and the intersection={saved & offloaded}"
        )
    return SaveOnlyTheseNames(*saved, *offloaded)


def offload_dot_with_no_batch_dims(offload_src, offload_dst):
    """jaxlite has one memory space: offloaded products are saved."""
    return dots_with_no_batch_dims_saveable


class checkpoint_policies:  # noqa: N801  (JAX's namespace `jax.checkpoint_policies`)
    """The policies `checkpoint(f, policy=...)` accepts (see the module docstring)."""

    everything_saveable = staticmethod(everything_saveable)
    nothing_saveable = staticmethod(nothing_saveable)
    dots_saveable = dots_saveable
    checkpoint_dots = checkpoint_dots
    dots_with_no_batch_dims_saveable = dots_with_no_batch_dims_saveable
    checkpoint_dots_with_no_batch_dims = checkpoint_dots_with_no_batch_dims
    save_only_these_names = staticmethod(save_only_these_names)
    save_any_names_but_these = staticmethod(save_any_names_but_these)
    save_anything_except_these_names = staticmethod(save_anything_except_these_names)
    save_from_both_policies = staticmethod(save_from_both_policies)
    save_and_offload_only_these_names = staticmethod(save_and_offload_only_these_names)
    offload_dot_with_no_batch_dims = staticmethod(offload_dot_with_no_batch_dims)


# ----------------------------------------------------------------------------------------
# checkpoint_name: an identity that names a value for the policies above.


def _name_abstract(x, *, name):
    return [x], no_effects


def _name_jvp(primals, tangents, *, name):
    (x,), (t,) = primals, tangents
    return [name_p.bind(x, name=name)], [t]  # the tangent is not named


def _name_batch(axis_size, vals, dims, *, name):
    return [name_p.bind(vals[0], name=name)], [dims[0]]


name_p = Primitive("name")
impl_rules[name_p] = lambda x, *, name: [x]
abstract_eval_rules[name_p] = _name_abstract
ad.jvp_rules[name_p] = _name_jvp
batching.batch_rules[name_p] = _name_batch
lowering_rules[name_p] = inline("{0}")
native_rules[name_p] = "identity"


def checkpoint_name(x, name):
    """`x`, named `name` for checkpoint policies (`save_only_these_names`, ...)."""
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name requires a string name, got {name!r}.")
    return tree_util.tree_map(lambda leaf: name_p.bind(leaf, name=name), x)


def saved_residuals(f, *args, **kwargs):
    """`[(aval, where it comes from)]` for each residual reverse mode of `f` saves: an
    argument (by name), a constant, or the output of an equation (with the user's
    source line), as JAX reports them."""
    from jaxlite.numpy import asarray

    flat, in_tree = tree_util.tree_flatten((args, kwargs))
    arg_names = _flat_arg_names(f, args, kwargs, ())

    def flat_f(*leaves):
        a, kw = tree_util.tree_unflatten(in_tree, leaves)
        return tree_util.tree_leaves(f(*a, **kw))

    leaves = [x if hasattr(x, "aval") else asarray(x) for x in flat]
    with source_info.capturing():
        trace = DynamicJaxprTrace()
        tracers = [trace.new_arg(get_aval(x)) for x in leaves]
        try:
            with set_current_trace(trace):
                _, linear = ad.linearize_flat(flat_f, tracers)
                jaxpr = trace.to_jaxpr(linear.consts).jaxpr
        finally:
            trace.is_live = False
    return _describe_residuals(jaxpr, arg_names)


def _describe_residuals(jaxpr, arg_names):
    from jaxlite.lax.bits import reduce_precision_p

    # A rounded residual (see _round_saved_residuals) is reported as its producer.
    through = {
        e.outvars[0]: e.invars[0]
        for e in jaxpr.eqns
        if e.primitive is reduce_precision_p and type(e.invars[0]) is Var
    }
    res_vars = {through.get(v, v) for v in jaxpr.outvars if type(v) is Var}
    results = [(v.aval, "from a literal") for v in jaxpr.outvars if type(v) is not Var]
    results += [(v.aval, "from a constant") for v in jaxpr.constvars if v in res_vars]
    for i, v in enumerate(jaxpr.invars):
        if v in res_vars:
            name = arg_names[i] if i < len(arg_names) else None
            where = f"the argument {name}" if name else f"the argument at index {i}"
            results.append((v.aval, f"from {where}"))
    for eqn in jaxpr.eqns:
        src = source_info.summarize(eqn.source_info)
        for v in eqn.outvars:
            if v not in res_vars:
                continue
            if eqn.primitive is name_p:
                results.append((v.aval, f"named '{eqn.params['name']}' from {src}"))
            elif eqn.primitive.name == "jit":
                what = f"output of jitted function '{eqn.params['name']}'"
                results.append((v.aval, f"{what} from {src}"))
            else:
                results.append((v.aval, f"output of {eqn.primitive.name} from {src}"))
    return results


def print_saved_residuals(f, *args, **kwargs):
    """Print the residuals reverse mode of `f` saves, one line each: their type and
    where they come from (see `saved_residuals`)."""
    for aval, where in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short()} {where}")


__all__ = [
    "checkpoint",
    "checkpoint_name",
    "checkpoint_policies",
    "print_saved_residuals",
    "remat",
    "saved_residuals",
]
