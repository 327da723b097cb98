"""`checkpoint` (alias `remat`): save memory in reverse mode by recomputing.

`checkpoint(f)` stages `f` as one `remat2` equation. Under differentiation its partial
evaluation rule keeps only the *inputs* as residuals: the known side computes the primal
outputs, and the linear side re-runs the whole differentiated body, primal work included,
during the backward pass.
"""

from __future__ import annotations

import functools

from jaxlite import tree_util
from jaxlite.backend import compile as backend_compile
from jaxlite.backend import lowering_rules
from jaxlite.core import (
    Primitive,
    abstract_eval_rules,
    get_aval,
    impl_rules,
    jaxpr_as_fun,
    set_current_trace,
)
from jaxlite.interpreters import ad, batching
from jaxlite.interpreters.partial_eval import trace_to_jaxpr


def _remat_abstract(*avals, differentiated, jaxpr, policy, prevent_cse):
    return list(jaxpr.out_avals), jaxpr.effects


def _remat_lowering(ctx, *args, differentiated, jaxpr, policy, prevent_cse):
    fn = ctx.add_global(backend_compile(jaxpr).fun, "remat")
    return f"{fn}({', '.join(args)})"


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
        differentiated=True,
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
    """Known outputs now; the unknown ones recomputed from the inputs later."""
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
    known, _, out_unknowns, num_res = ad.partial_eval_jaxpr(jaxpr, unknowns)
    known_args = [a for a, u in zip(args, unknowns) if not u]
    n_known_out = len(known.out_avals) - num_res
    with set_current_trace(trace.parent):
        known_outs = remat_p.bind(*known_args, **{**params, "jaxpr": known})[
            :n_known_out
        ]
    with set_current_trace(trace.tangent_trace):
        all_outs = remat_p.bind(*args, **params)
    known_it = iter(known_outs)
    return [o if u else next(known_it) for o, u in zip(all_outs, out_unknowns)]


def _remat_transpose(cts, *args, differentiated, jaxpr, policy, prevent_cse):
    return ad.transpose_jaxpr_call(cts, args, jaxpr)


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
lowering_rules[remat_p] = _remat_lowering
ad.jvp_rules[remat_p] = _remat_jvp
ad.partial_eval_rules[remat_p] = _remat_partial_eval
ad.transpose_rules[remat_p] = _remat_transpose
batching.batch_rules[remat_p] = _remat_batch
impl_rules[remat_p] = _remat_impl


def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=()):
    """`fun`, but reverse mode recomputes its intermediates instead of storing them."""
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
        box = {}

        def flat(*xs):
            d, kw = tree_util.tree_unflatten(in_tree, xs)
            it = iter(d)
            full = [static[i] if i in static else next(it) for i in range(len(args))]
            out_leaves, box["tree"] = tree_util.tree_flatten(fun(*full, **kw))
            return out_leaves

        closed = trace_to_jaxpr(flat, [get_aval(x) for x in leaves])
        outs = remat_p.bind(
            *leaves,
            differentiated=False,
            jaxpr=closed,
            policy=policy,
            prevent_cse=prevent_cse,
        )
        return tree_util.tree_unflatten(box["tree"], outs)

    return remat_fun


remat = checkpoint


class checkpoint_policies:  # noqa: N801  (JAX's name)
    """Accepted for compatibility: jaxlite always recomputes everything."""

    everything_saveable = None
    nothing_saveable = None
    dots_saveable = None
    dots_with_no_batch_dims_saveable = None


__all__ = ["checkpoint", "checkpoint_policies", "remat"]
