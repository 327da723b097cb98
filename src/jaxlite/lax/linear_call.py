"""`linear_call`: a linear function together with a custom implementation of its
transpose (`jax.custom_derivatives.linear_call`).

`linear_call(fun, fun_transpose, residual_args, linear_args)` returns
`fun(residual_args, linear_args)`, where `fun` is linear in `linear_args` and
`fun_transpose(residual_args, cts)` is its transpose. Reverse mode transposes the call
into a `linear_call` of `fun_transpose` (whose own transpose is `fun` again), instead
of transposing `fun`'s body: the way to give a linear operator a faster or more exact
adjoint (an FFT's inverse, a solver's adjoint solve, ...).

The primitive holds `fun` as a traced `callee` jaxpr over `(consts, residuals,
linear inputs)` and a memoized `transpose_thunk` that traces `fun_transpose` on first
use. Forward mode applies the call to the tangents (residuals must not be
differentiated, as in JAX). Batching, which JAX lacks, vmaps both functions with every
operand batched.
"""

from __future__ import annotations

import functools

from jaxlite import backend, tree_util
from jaxlite.api_util import trace_flat
from jaxlite.backend import lowering_rules
from jaxlite.backend.lowering import call_lowering
from jaxlite.core import Primitive, abstract_eval_rules, impl_rules, jaxpr_as_fun
from jaxlite.interpreters import ad, batching
from jaxlite.interpreters.partial_eval import (
    abstractify,
    debug_info,
    split_tracer_consts,
    trace_to_jaxpr,
)

__all__ = ["linear_call"]


def _trace_flat(fun, in_tree, avals, info):
    """`(closed jaxpr, its tracer consts, out_tree)` of `fun(res, lin)` on flat `avals`
    (the leaves of `in_tree`, the tree of `(res, lin)`); the jaxpr takes the tracer
    consts as leading inputs."""
    closed, out_tree = trace_flat(fun, in_tree, avals, info)
    closed, consts = split_tracer_consts(closed)
    return closed, consts, out_tree


def _memoize(thunk):
    cell = []

    @functools.wraps(thunk)
    def memoized():
        if not cell:
            cell.append(thunk())
        return cell[0]

    return memoized


def linear_call(fun, fun_transpose, residual_args, linear_args):
    """Call a linear function `fun(residual_args, linear_args)` whose transpose with
    respect to `linear_args` is `fun_transpose(residual_args, cts)`.

    Both take the residuals first; `fun_transpose` must return a pytree with the
    structure of `linear_args` (else TypeError, as in JAX).
    """
    res, res_tree = tree_util.tree_flatten(residual_args)
    lin, lin_tree = tree_util.tree_flatten(linear_args)
    res_avals = [abstractify(x) for x in res]
    lin_avals = [abstractify(x) for x in lin]
    in_tree = tree_util.tree_structure((residual_args, linear_args))
    info = debug_info(fun, "linear_call fun", (residual_args, linear_args), {})
    callee, consts, out_tree = _trace_flat(fun, in_tree, [*res_avals, *lin_avals], info)
    out_avals = callee.out_avals

    @_memoize
    def transpose_thunk():
        t_in_tree = tree_util.tree_structure(
            (residual_args, tree_util.tree_unflatten(out_tree, [0] * len(out_avals)))
        )
        t_info = debug_info(fun_transpose, "linear_call fun_transpose")
        t, t_consts, t_out_tree = _trace_flat(
            fun_transpose, t_in_tree, [*res_avals, *out_avals], t_info
        )
        if t_out_tree != lin_tree:
            raise TypeError(
                "transpose output pytree structure must match that of linear inputs, "
                f"got output structure {t_out_tree} and input structure {lin_tree}."
            )
        return t, t_consts

    outs = linear_call_p.bind(
        *consts,
        *res,
        *lin,
        callee=callee,
        num_callee_consts=len(consts),
        num_res=len(res),
        transpose_thunk=transpose_thunk,
    )
    return tree_util.tree_unflatten(out_tree, outs)


def _linear_call_impl(*args, callee, num_callee_consts, num_res, transpose_thunk):
    return backend.compile(callee)(*args)


def _linear_call_abstract(*avals, callee, num_callee_consts, num_res, transpose_thunk):
    return list(callee.out_avals), callee.effects


def _linear_call_jvp(primals, tangents, **params):
    n = params["num_callee_consts"] + params["num_res"]
    if any(type(t) is not ad.Zero for t in tangents[:n]):
        raise NotImplementedError(
            "linear_call: differentiating with respect to residual_args is not "
            "supported (the call is linear in linear_args only). Pass the "
            "differentiated values as linear_args, or stop_gradient the residuals."
        )
    fixed = list(primals[:n])
    lin_tangents = [ad.instantiate(t) for t in tangents[n:]]
    outs = linear_call_p.bind(*fixed, *primals[n:], **params)
    out_tangents = linear_call_p.bind(*fixed, *lin_tangents, **params)
    return outs, out_tangents


def _linear_call_transpose(cts, *args, callee, num_callee_consts, num_res, **params):
    transpose, t_consts = params["transpose_thunk"]()
    f_consts = args[:num_callee_consts]
    res = args[num_callee_consts : num_callee_consts + num_res]
    cts = [
        ad.zeros_like_aval(a) if type(ct) is ad.Zero else ct
        for ct, a in zip(cts, callee.out_avals)
    ]

    def back_thunk():
        return callee, list(f_consts)

    lin_cts = linear_call_p.bind(
        *t_consts,
        *res,
        *cts,
        callee=transpose,
        num_callee_consts=len(t_consts),
        num_res=len(res),
        transpose_thunk=back_thunk,
    )
    return [None] * (num_callee_consts + num_res) + list(lin_cts)


def _vmapped(closed, in_axes, axis_size):
    """`closed` vmapped over `in_axes` (0 or None per input), every output at 0."""
    from jaxlite.api_vmap import vmap

    fun = vmap(jaxpr_as_fun(closed), in_axes=tuple(in_axes), axis_size=axis_size)
    avals = [
        a if ax is None else a.update(shape=(axis_size, *a.shape))
        for a, ax in zip(closed.in_avals, in_axes)
    ]
    out, consts = split_tracer_consts(trace_to_jaxpr(lambda *xs: fun(*xs), avals))
    assert not consts
    return out


def _linear_call_batch(axis_size, vals, dims, *, callee, num_callee_consts, **params):
    # Every operand batched at 0: the batched call and its batched transpose are then
    # transposes of each other (the broadcasts' own transposes sum the cotangents).
    vals = [batching.bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims)]
    transpose_thunk = params["transpose_thunk"]
    b_callee = _vmapped(callee, [0] * len(vals), axis_size)

    @_memoize
    def b_transpose_thunk():
        t, t_consts = transpose_thunk()
        axes = [None] * len(t_consts) + [0] * (len(t.in_avals) - len(t_consts))
        return _vmapped(t, axes, axis_size), t_consts

    outs = linear_call_p.bind(
        *vals,
        callee=b_callee,
        num_callee_consts=num_callee_consts,
        num_res=params["num_res"],
        transpose_thunk=b_transpose_thunk,
    )
    return outs, [0] * len(outs)


linear_call_p = Primitive("linear_call", multiple_results=True)
impl_rules[linear_call_p] = _linear_call_impl
abstract_eval_rules[linear_call_p] = _linear_call_abstract
lowering_rules[linear_call_p] = call_lowering("callee", "linear_call")
ad.jvp_rules[linear_call_p] = _linear_call_jvp
ad.transpose_rules[linear_call_p] = _linear_call_transpose
batching.batch_rules[linear_call_p] = _linear_call_batch
