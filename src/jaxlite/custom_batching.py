"""`jax.custom_batching`: functions with a vmap rule their author supplies.

`custom_vmap(fun)` behaves like `fun` except under `vmap`, where the rule given with
`def_vmap` computes the batched result: `rule(axis_size, in_batched, *args)` receives
the arguments with their batch axes at the front (`in_batched` says, per argument leaf,
whether it has one) and returns `(out, out_batched)`. `sequential_vmap(f)` is the common
rule "loop over the batch" (for host callbacks that take one example at a time).

A call is staged as one `custom_vmap_call` equation holding the traced function and the
rule, so the rule still applies when the vmap comes later (`vmap(jit(f))`). Its JVP is
again a `custom_vmap_call` (of `fun`'s JVP, with the rule's JVP as its vmap rule), whose
tangent part is linear and transposes like a call, so grad works too.
"""

from __future__ import annotations

import functools

from jaxlite import tree_util
from jaxlite.api_util import trace_flat
from jaxlite.backend import compile as backend_compile
from jaxlite.backend import lowering_rules
from jaxlite.backend.lowering import call_lowering
from jaxlite.core import (
    Primitive,
    abstract_eval_rules,
    as_value,
    get_aval,
    impl_rules,
    jaxpr_as_fun,
)
from jaxlite.interpreters import ad, batching
from jaxlite.interpreters.partial_eval import split_tracer_consts, trace_to_jaxpr
from jaxlite.util import fun_name

# ----------------------------------------------------------------------------------------
# The primitive: `custom_vmap_call[call_jaxpr, rule] *args`. `rule` works on flat lists:
# `rule(axis_size, in_batched, *args) -> (outs, out_batched)`.


def _call_impl(*args, call_jaxpr, rule, num_consts):
    return backend_compile(call_jaxpr)(*args)


def _call_abstract(*avals, call_jaxpr, rule, num_consts):
    return list(call_jaxpr.out_avals), call_jaxpr.effects


def _call_batch(axis_size, vals, dims, *, call_jaxpr, rule, num_consts):
    if any(d is not batching.not_mapped for d in dims[:num_consts]):
        raise ValueError(
            "a custom_vmap function closes over a value batched by this vmap; pass it "
            "as an argument instead, so the vmap rule sees it batched."
        )
    args = [
        v if d is batching.not_mapped else batching.moveaxis(v, d, 0)
        for v, d in zip(vals[num_consts:], dims[num_consts:])
    ]
    in_batched = [d is not batching.not_mapped for d in dims[num_consts:]]
    outs, out_batched = rule(axis_size, in_batched, *args)
    return list(outs), [0 if b else batching.not_mapped for b in out_batched]


def _call_jvp(primals, tangents, *, call_jaxpr, rule, num_consts):
    outs = custom_vmap_call_p.bind(
        *primals, call_jaxpr=call_jaxpr, rule=rule, num_consts=num_consts
    )
    nonzero = [type(t) is not ad.Zero for t in tangents]
    if any(nonzero[:num_consts]):
        raise TypeError(
            "a custom_vmap function closes over a value that is being differentiated; "
            "pass it as an argument instead."
        )
    nz_tangents = [t for t in tangents if type(t) is not ad.Zero]
    n = len(primals)
    out_nonzero = []

    def tangent_body(*args):
        ts = iter(args[n:])
        tin = [
            next(ts) if nz else ad.Zero(ad.tangent_aval(a))
            for a, nz in zip(call_jaxpr.in_avals, nonzero)
        ]
        _, out_ts = ad.jvp_flat(jaxpr_as_fun(call_jaxpr), args[:n], tin)
        out_nonzero[:] = [type(t) is not ad.Zero for t in out_ts]
        return [t for t in out_ts if type(t) is not ad.Zero]

    in_avals = list(call_jaxpr.in_avals) + [
        ad.tangent_aval(a) for a, nz in zip(call_jaxpr.in_avals, nonzero) if nz
    ]
    tangent_jaxpr = trace_to_jaxpr(tangent_body, in_avals)
    tangent_rule = _jvp_of_rule(rule, num_consts, n, nonzero, out_nonzero)
    nz_outs = custom_vmap_call_p.bind(
        *primals,
        *nz_tangents,
        call_jaxpr=tangent_jaxpr,
        rule=tangent_rule,
        num_consts=num_consts,
    )
    nz_it = iter(nz_outs)
    out_ts = [
        next(nz_it) if nz else ad.Zero(ad.tangent_aval(get_aval(o)))
        for o, nz in zip(outs, out_nonzero)
    ]
    return outs, out_ts


def _jvp_of_rule(rule, num_consts, n, nonzero, out_nonzero):
    """The vmap rule of the tangent call: the JVP of `rule` (operands: the primals,
    consts first, then the nonzero tangents of the non-const primals)."""

    def tangent_rule(axis_size, in_batched, *args):
        from jaxlite.lax import broadcast_in_dim

        primals = list(args[: n - num_consts])
        p_batched = list(in_batched[: n - num_consts])
        nz = nonzero[num_consts:]
        t_it = iter(zip(args[n - num_consts :], in_batched[n - num_consts :]))
        tangents, batched = [], []
        for i, (p, pb, is_nz) in enumerate(zip(primals, p_batched, nz)):
            if not is_nz:
                tangents.append(ad.Zero(ad.tangent_aval(get_aval(p))))
                batched.append(pb)
                continue
            t, tb = next(t_it)
            if pb != tb:  # the rule sees one batching per argument: batch both
                size_shape = (axis_size, *get_aval(p if tb else t).shape)
                dims = tuple(range(1, len(size_shape)))
                if pb:
                    t = broadcast_in_dim(t, size_shape, dims)
                else:
                    primals[i] = broadcast_in_dim(p, size_shape, dims)
            tangents.append(t)
            batched.append(pb or tb)
        box = {}

        def f(*ps):
            outs, out_b = rule(axis_size, batched, *ps)
            box["out_batched"] = list(out_b)
            return list(outs)

        _, out_ts = ad.jvp_flat(f, primals, tangents)
        out_ts = [t for t, keep in zip(out_ts, out_nonzero) if keep]
        out_b = [b for b, keep in zip(box["out_batched"], out_nonzero) if keep]
        return [ad.instantiate(t) for t in out_ts], out_b

    return tangent_rule


def _call_transpose(cts, *args, call_jaxpr, rule, num_consts):
    return ad.transpose_jaxpr_call(cts, args, call_jaxpr)


custom_vmap_call_p = Primitive("custom_vmap_call", multiple_results=True)
impl_rules[custom_vmap_call_p] = _call_impl
abstract_eval_rules[custom_vmap_call_p] = _call_abstract
lowering_rules[custom_vmap_call_p] = call_lowering("call_jaxpr", "custom_vmap")
batching.batch_rules[custom_vmap_call_p] = _call_batch
ad.jvp_rules[custom_vmap_call_p] = _call_jvp
ad.transpose_rules[custom_vmap_call_p] = _call_transpose


# ----------------------------------------------------------------------------------------
# The API


class custom_vmap:  # noqa: N801  (JAX's name)
    """`fun` with a custom vmap rule: `f = custom_vmap(fun); f.def_vmap(rule)`, where
    `rule(axis_size, in_batched, *args) -> (out, out_batched)`."""

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule = None

    def def_vmap(self, vmap_rule):
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args, **kwargs):
        name = getattr(self.fun, "__name__", "custom_vmap")
        if self.vmap_rule is None:
            raise AttributeError(
                f"No batching rule defined for custom_vmap function {name} using "
                "def_vmap."
            )
        if kwargs:
            import inspect

            bound = inspect.signature(self.fun).bind(*args, **kwargs)
            args = bound.args
        leaves, in_tree = tree_util.tree_flatten(args)
        leaves = [as_value(x) for x in leaves]
        closed, out_tree = trace_flat(self.fun, in_tree, [get_aval(x) for x in leaves])
        closed, consts = split_tracer_consts(closed)
        user_rule = self.vmap_rule

        def flat_rule(axis_size, in_batched, *flat):
            batched_tree = tree_util.tree_unflatten(in_tree, in_batched)
            out, out_batched = user_rule(
                axis_size, list(batched_tree), *tree_util.tree_unflatten(in_tree, flat)
            )
            out_leaves, tree = tree_util.tree_flatten(out)
            if tree != out_tree:
                raise ValueError(
                    f"custom_vmap rule {getattr(user_rule, '__name__', '')} returned an "
                    f"output of structure {tree}, but the function {name} returns "
                    f"{out_tree}."
                )
            if isinstance(out_batched, bool):
                out_batched = tree_util.tree_map(lambda _: out_batched, out)
            b_leaves, b_tree = tree_util.tree_flatten(out_batched)
            if b_tree != out_tree:
                raise ValueError(
                    "structure of output value and output batching specification "
                    f"returned by custom vmap rule ({user_rule.__name__}) do not match: "
                    f"{out_tree} and {b_tree}."
                )
            return out_leaves, [bool(b) for b in b_leaves]

        flat_rule.__name__ = fun_name(user_rule, "vmap_rule")
        outs = custom_vmap_call_p.bind(
            *consts, *leaves, call_jaxpr=closed, rule=flat_rule, num_consts=len(consts)
        )
        return tree_util.tree_unflatten(out_tree, outs)


def sequential_vmap(f):
    """`f` that vmaps by looping over the batch (`lax.map`), one example per call:
    for functions that cannot be vectorised, such as host callbacks."""
    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        from jaxlite import lax

        leaves, tree = tree_util.tree_flatten(args)
        b_leaves = tree_util.tree_leaves(list(in_batched))
        batched = [x for x, b in zip(leaves, b_leaves) if b]

        def one(xs):
            it = iter(xs)
            full = [next(it) if b else x for x, b in zip(leaves, b_leaves)]
            return f.fun(*tree_util.tree_unflatten(tree, full))

        out = lax.map(one, batched)
        return out, tree_util.tree_map(lambda _: True, out)

    return f


__all__ = ["custom_vmap", "sequential_vmap"]
