"""`jax.custom_batching`: functions with a vmap rule their author supplies.

`custom_vmap(fun)` behaves like `fun` except under `vmap`, where the rule given with
`def_vmap` computes the batched result: `rule(axis_size, in_batched, *args)` receives
the arguments with their batch axes at the front (`in_batched` says, per argument leaf,
whether it has one) and returns `(out, out_batched)`, `out_batched` a tree of booleans
of `out`'s structure. `sequential_vmap(f)` is the common rule "loop over the batch"
(for host callbacks that take one example at a time).

A call is staged as one `custom_vmap_call` equation holding the traced function and the
rule, so the rule still applies when the vmap comes later (`vmap(jit(f))`).

Its JVP is again one `custom_vmap_call`, of `fun`'s JVP (primals and tangents in,
primal and tangent outputs out), whose vmap rule is the JVP of the user's rule, as in
JAX: under `vmap` the rule sees as batched only the arguments batched together with
their tangents, and the extra batch axes of the others (a batch of tangents for one
primal, as `jacfwd` makes) are vectorised through the rule's own code. So `jacfwd`
and `vmap` of `jvp` call the rule with exactly what is batched.

Beyond JAX, reverse mode works too: linearising that JVP call splits it into the
primal call (known now) and a tangent call, linear in the tangents, which transposes
like a call; a later vmap batches the tangent call with the JVP of the rule.
"""

from __future__ import annotations

import functools

from jaxlite import tree_util
from jaxlite.api_util import trace_flat
from jaxlite.backend import compile as backend_compile
from jaxlite.backend import lowering_rules
from jaxlite.backend.loops import user_batched_primitives
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
from jaxlite.interpreters.batching import not_mapped
from jaxlite.interpreters.partial_eval import split_tracer_consts, trace_to_jaxpr
from jaxlite.lax.custom_derivatives import forward_def_attr, resolve_args
from jaxlite.util import fun_name

# ----------------------------------------------------------------------------------------
# The primitive: `custom_vmap_call[call_jaxpr, rule, num_consts] *consts *args`. `rule`
# works on flat lists: `rule(axis_size, in_batched, *args) -> (outs, out_batched)`; it
# never sees the `num_consts` leading operands (values the function closes over).


def _call_impl(*args, call_jaxpr, rule, num_consts):
    return backend_compile(call_jaxpr)(*args)


def _call_abstract(*avals, call_jaxpr, rule, num_consts):
    return list(call_jaxpr.out_avals), call_jaxpr.effects


def _closes_over_batched(rule):
    return ValueError(
        f"custom vmap rule {fun_name(rule, '<unnamed rule>')} is for a function that "
        "closes over a value batched by this vmap; pass that value to the "
        "custom_vmap function as an argument instead, so its rule sees it batched."
    )


def _call_batch(axis_size, vals, dims, *, call_jaxpr, rule, num_consts):
    if any(d is not not_mapped for d in dims[:num_consts]):
        raise _closes_over_batched(rule)
    args = [
        v if d is not_mapped else batching.moveaxis(v, d, 0)
        for v, d in zip(vals[num_consts:], dims[num_consts:])
    ]
    in_batched = [d is not not_mapped for d in dims[num_consts:]]
    outs, out_batched = rule(axis_size, in_batched, *args)
    return list(outs), [0 if b else not_mapped for b in out_batched]


def _nonzero_tangent_avals(avals, nonzero):
    return [ad.tangent_aval(a) for a, nz in zip(avals, nonzero) if nz]


def _trace_jvp(call_jaxpr, nonzero, with_primals, out_nonzero):
    """The JVP of `call_jaxpr` as a jaxpr over (primals, nonzero tangents): the
    primal outputs (when `with_primals`) then the nonzero output tangents.
    `out_nonzero` receives which output tangents are nonzero."""
    n = len(call_jaxpr.in_avals)

    def body(*args):
        t_it = iter(args[n:])
        tangents = [
            next(t_it) if nz else ad.Zero(ad.tangent_aval(a))
            for a, nz in zip(call_jaxpr.in_avals, nonzero)
        ]
        outs, out_ts = ad.jvp_flat(jaxpr_as_fun(call_jaxpr), args[:n], tangents)
        out_nonzero[:] = [type(t) is not ad.Zero for t in out_ts]
        live = [t for t in out_ts if type(t) is not ad.Zero]
        return [*outs, *live] if with_primals else live

    in_avals = [
        *call_jaxpr.in_avals,
        *_nonzero_tangent_avals(call_jaxpr.in_avals, nonzero),
    ]
    return trace_to_jaxpr(body, in_avals)


def _call_jvp(primals, tangents, *, call_jaxpr, rule, num_consts):
    nonzero = [type(t) is not ad.Zero for t in tangents]
    out_nonzero = []
    jvp_jaxpr = _trace_jvp(call_jaxpr, nonzero, True, out_nonzero)
    jvp_rule = _JVPRule(rule, call_jaxpr, num_consts, nonzero, out_nonzero)
    outs = custom_vmap_call_p.bind(
        *primals,
        *(t for t in tangents if type(t) is not ad.Zero),
        call_jaxpr=jvp_jaxpr,
        rule=jvp_rule,
        num_consts=num_consts,
    )
    n_out = len(out_nonzero)
    live = iter(outs[n_out:])
    out_ts = [
        next(live) if nz else ad.Zero(ad.tangent_aval(a))
        for a, nz in zip(call_jaxpr.out_avals, out_nonzero)
    ]
    return list(outs[:n_out]), out_ts


def _closes_over_differentiated(rule):
    return TypeError(
        f"custom vmap rule {fun_name(rule, '<unnamed rule>')} is for a function that "
        "closes over a value being differentiated, and the derivative is batched: "
        "pass that value to the custom_vmap function as an argument instead."
    )


class _JVPRule:
    """The vmap rule of the JVP call of a custom_vmap function (operands: the primals,
    then the nonzero tangents; outputs: the primal outputs, then the nonzero output
    tangents), as JAX's: the user's `rule` is called with the arguments batched
    together with their tangents, under `jvp`, and a vmap over the remaining (extra)
    batch axes vectorises it for the rest. It also carries what linearising the call
    needs: the primal call and the tangent call it splits into."""

    def __init__(self, rule, call_jaxpr, num_consts, nonzero, out_nonzero):
        self.rule = rule
        self.call_jaxpr = call_jaxpr
        self.num_consts = num_consts
        self.nonzero = nonzero
        self.out_nonzero = out_nonzero
        self.__name__ = f"jvp_of_{fun_name(rule, 'rule')}"
        self._tangent_call = None

    def __repr__(self):
        return self.__name__

    def __call__(self, axis_size, in_batched, *args):
        if any(self.nonzero[: self.num_consts]):
            raise _closes_over_differentiated(self.rule)
        m = len(self.nonzero) - self.num_consts  # primals the rule sees
        nonzero = self.nonzero[self.num_consts :]
        p_batched = list(in_batched[:m])
        t_it = iter(in_batched[m:])
        # A zero tangent is one unbatched value (JAX instantiates it).
        t_batched = [next(t_it) if nz else False for nz in nonzero]
        mutual = [p and t for p, t in zip(p_batched, t_batched)]
        p_axes = [
            0 if p and not t else not_mapped for p, t in zip(p_batched, t_batched)
        ]
        t_axes = [
            0 if t and not p else not_mapped
            for p, t, nz in zip(p_batched, t_batched, nonzero)
            if nz
        ]
        box = {}

        def to_jvp(*primals):
            outs, out_batched = self.rule(axis_size, mutual, *primals)
            box["out_batched"] = list(out_batched)
            return list(outs)

        def jvp_of_rule(*xs):
            primals, t_it = xs[:m], iter(xs[m:])
            tangents = [
                next(t_it) if nz else ad.Zero(ad.tangent_aval(get_aval(p)))
                for p, nz in zip(primals, nonzero)
            ]
            outs, out_ts = ad.jvp_flat(to_jvp, list(primals), tangents)
            live = [ad.instantiate(t) for t, nz in zip(out_ts, self.out_nonzero) if nz]
            return [*outs, *live]

        outs, dims = batching.vmap_flat(
            jvp_of_rule, axis_size, list(args), [*p_axes, *t_axes]
        )
        outs = [
            o if d is not_mapped else batching.moveaxis(o, d, 0)
            for o, d in zip(outs, dims)
        ]
        extra = [d is not not_mapped for d in dims]
        mutual_out = box["out_batched"]
        n_out = len(mutual_out)
        out_batched = [b or e for b, e in zip(mutual_out, extra[:n_out])]
        t_mutual = [b for b, nz in zip(mutual_out, self.out_nonzero) if nz]
        out_batched += [b or e for b, e in zip(t_mutual, extra[n_out:])]
        return outs, out_batched

    def tangent_call(self):
        """`(tangent_jaxpr, tangent_rule)`: the call computing the nonzero output
        tangents from the primals and the nonzero tangents, linear in the latter."""
        if self._tangent_call is None:
            out_nonzero = []
            jaxpr = _trace_jvp(self.call_jaxpr, self.nonzero, False, out_nonzero)
            self._tangent_call = (jaxpr, _TangentRule(self))
        return self._tangent_call


class _TangentRule:
    """The vmap rule of the tangent call a linearised JVP call splits into (operands:
    the primals, then the nonzero tangents; outputs: the nonzero output tangents): the
    JVP of the user's rule, with each primal batched together with its tangent."""

    def __init__(self, jvp_rule):
        self.jvp_rule = jvp_rule
        self.__name__ = f"linearized_{fun_name(jvp_rule.rule, 'rule')}"

    def __repr__(self):
        return self.__name__

    def __call__(self, axis_size, in_batched, *args):
        from jaxlite.lax import broadcast_in_dim

        j = self.jvp_rule
        if any(j.nonzero[: j.num_consts]):
            raise _closes_over_differentiated(j.rule)
        m = len(j.nonzero) - j.num_consts
        primals, p_batched = list(args[:m]), list(in_batched[:m])
        t_it = iter(zip(args[m:], in_batched[m:]))
        tangents, batched = [], []
        for i, (p, pb, nz) in enumerate(
            zip(primals, p_batched, j.nonzero[j.num_consts :])
        ):
            if not nz:
                tangents.append(ad.Zero(ad.tangent_aval(get_aval(p))))
                batched.append(pb)
                continue
            t, tb = next(t_it)
            if pb != tb:  # the rule sees one batching per argument: batch both
                shape = (axis_size, *get_aval(p if tb else t).shape)
                dims = tuple(range(1, len(shape)))
                if pb:
                    t = broadcast_in_dim(t, shape, dims)
                else:
                    primals[i] = broadcast_in_dim(p, shape, dims)
            tangents.append(t)
            batched.append(pb or tb)
        box = {}

        def f(*ps):
            outs, out_batched = j.rule(axis_size, batched, *ps)
            box["out_batched"] = list(out_batched)
            return list(outs)

        _, out_ts = ad.jvp_flat(f, primals, tangents)
        keep = j.out_nonzero
        out_ts = [ad.instantiate(t) for t, nz in zip(out_ts, keep) if nz]
        return out_ts, [b for b, nz in zip(box["out_batched"], keep) if nz]


def _call_partial_eval(trace, args, params):
    """Linearising a JVP call (primals known, tangents not): the primal call runs now,
    the tangent call is staged. Anything else is staged whole."""
    rule = params["rule"]
    n = len(rule.nonzero) if type(rule) is _JVPRule else 0
    if not n or any(trace.is_unknown(x) for x in args[:n]):
        return trace.tangent_trace.process_primitive(custom_vmap_call_p, args, params)
    num_consts = params["num_consts"]
    outs = trace.process_known(
        custom_vmap_call_p,
        list(args[:n]),
        dict(call_jaxpr=rule.call_jaxpr, rule=rule.rule, num_consts=num_consts),
    )
    tangent_jaxpr, tangent_rule = rule.tangent_call()
    out_ts = trace.tangent_trace.process_primitive(
        custom_vmap_call_p,
        list(args),
        dict(call_jaxpr=tangent_jaxpr, rule=tangent_rule, num_consts=num_consts),
    )
    return [*outs, *out_ts]


def _call_transpose(cts, *args, call_jaxpr, rule, num_consts):
    return ad.transpose_jaxpr_call(cts, args, call_jaxpr)


custom_vmap_call_p = Primitive("custom_vmap_call", multiple_results=True)
impl_rules[custom_vmap_call_p] = _call_impl
abstract_eval_rules[custom_vmap_call_p] = _call_abstract
lowering_rules[custom_vmap_call_p] = call_lowering("call_jaxpr", "custom_vmap")
batching.batch_rules[custom_vmap_call_p] = _call_batch
ad.jvp_rules[custom_vmap_call_p] = _call_jvp
ad.partial_eval_rules[custom_vmap_call_p] = _call_partial_eval
ad.transpose_rules[custom_vmap_call_p] = _call_transpose
user_batched_primitives.add(custom_vmap_call_p)


# ----------------------------------------------------------------------------------------
# The API


def _check_rule_trees(rule, out_tree, tree, batched_tree):
    """JAX's checks of what a vmap rule returns, with its messages."""
    name = fun_name(rule, "<unnamed rule>")
    if tree != batched_tree:
        raise ValueError(
            "structure of output value and output batching specification returned "
            f"by custom vmap rule ({name}) do not match.\n"
            f"Output values: {tree}\n"
            f"Batching spec: {batched_tree}"
        )
    if tree != out_tree:
        raise ValueError(
            f"structure of output returned by custom vmap rule ({name}) does not "
            "match that of original custom-vmapped function.\n"
            f"Original output: {out_tree}\n"
            f"Rule output: {tree}"
        )


class custom_vmap:  # noqa: N801  (JAX's name)
    """`fun` with a custom vmap rule: `f = custom_vmap(fun); f.def_vmap(rule)`, where
    `rule(axis_size, in_batched, *args) -> (out, out_batched)`."""

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule = None

    # `custom_vmap(custom_jvp(f))`: `defjvp` and the other `def*` methods of the
    # wrapped custom function are reachable from the outer one, as in JAX.
    __getattr__ = forward_def_attr

    def def_vmap(self, vmap_rule):
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args, **kwargs):
        name = fun_name(self.fun, "custom_vmap")
        args = resolve_args(self.fun, args, kwargs, "custom_vmap", name)
        if self.vmap_rule is None:
            raise AttributeError(
                f"No batching rule defined for custom_vmap function {name} using "
                "def_vmap."
            )
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
            b_leaves, b_tree = tree_util.tree_flatten(out_batched)
            _check_rule_trees(user_rule, out_tree, tree, b_tree)
            return out_leaves, [bool(b) for b in b_leaves]

        flat_rule.__name__ = fun_name(user_rule, "vmap_rule")
        outs = custom_vmap_call_p.bind(
            *consts, *leaves, call_jaxpr=closed, rule=flat_rule, num_consts=len(consts)
        )
        return tree_util.tree_unflatten(out_tree, outs)


def sequential_vmap(f):
    """`f` that vmaps by looping over the batch (`lax.map`), one example per call:
    for functions that cannot be vectorised, such as host callbacks. Each step calls
    the custom_vmap function itself, so an enclosing vmap loops too."""
    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        from jaxlite import lax

        leaves, tree = tree_util.tree_flatten(list(args))
        b_leaves = tree_util.tree_leaves(list(in_batched))
        mapped = [x for x, b in zip(leaves, b_leaves) if b]

        def one(xs):
            it = iter(xs)
            full = [next(it) if b else x for x, b in zip(leaves, b_leaves)]
            return f(*tree_util.tree_unflatten(tree, full))

        out = lax.map(one, mapped)
        return out, tree_util.tree_map(lambda _: True, out)

    return f


__all__ = ["custom_vmap", "sequential_vmap"]
