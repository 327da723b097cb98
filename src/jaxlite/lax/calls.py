"""Calls of a jaxpr that mark no boundary: JAX's `closed_call_p` and `call_p`.

`closed_call_p.bind(*args, call_jaxpr=closed)` applies a ClosedJaxpr to its operands,
`call_p.bind(*args, call_jaxpr=jaxpr)` an open Jaxpr (no constvars). They are the call
primitives of JAX's core, which libraries that walk jaxprs know by name (numpyro's
provenance tracking, distrax's inversion, through `jax.extend.core.primitives`) and
some bind directly. Unlike `jit` they stand for no compilation of their own: JVP runs
the body inline under the transformation, transposition transposes the body, batching
batches it into a new call, and the backends compile the body as an inlined call.
"""

from __future__ import annotations

from jaxlite import backend
from jaxlite.backend import lowering_rules
from jaxlite.backend.lowering import lower_call
from jaxlite.backend.native import native_rules
from jaxlite.core import (
    ClosedJaxpr,
    abstract_eval_rules,
    impl_rules,
    jaxpr_as_fun,
    physical_rules,
)
from jaxlite.core_extension import CallPrimitive
from jaxlite.interpreters import ad, batching, physical
from jaxlite.interpreters.partial_eval import hoist_consts

__all__ = ["call_p", "closed_call_p"]


def _closed(call_jaxpr):
    """The call's body as a ClosedJaxpr (`call_p`'s is an open Jaxpr)."""
    if isinstance(call_jaxpr, ClosedJaxpr):
        return call_jaxpr
    return ClosedJaxpr(call_jaxpr, [])


def _call_impl(*args, call_jaxpr):
    return backend.compile(_closed(call_jaxpr))(*args)


def _call_abstract(*avals, call_jaxpr):
    return list(call_jaxpr.out_avals), call_jaxpr.effects


def _call_jvp(primals, tangents, *, call_jaxpr):
    return ad.jvp_flat(jaxpr_as_fun(_closed(call_jaxpr)), primals, tangents)


def _call_transpose(cts, *args, call_jaxpr):
    return ad.transpose_jaxpr_call(cts, args, _closed(call_jaxpr))


def _call_lowering(ctx, *args, call_jaxpr):
    return lower_call(ctx, _closed(call_jaxpr), args, "call")


def _call_batch_rule(prim):
    """Batch the body into a new call of `prim`; constants the batched body needs
    become leading operands (an open `call_jaxpr` has no constvars)."""

    def rule(axis_size, vals, dims, *, call_jaxpr):
        batched, out_dims = batching.batch_jaxpr(_closed(call_jaxpr), axis_size, dims)
        body, consts = hoist_consts(batched)
        if prim is call_p:
            body = body.jaxpr
        return prim.bind(*consts, *vals, call_jaxpr=body), out_dims

    return rule


closed_call_p = CallPrimitive("closed_call")
impl_rules[closed_call_p] = _call_impl
abstract_eval_rules[closed_call_p] = _call_abstract
ad.jvp_rules[closed_call_p] = _call_jvp
ad.transpose_rules[closed_call_p] = _call_transpose
batching.batch_rules[closed_call_p] = _call_batch_rule(closed_call_p)
physical_rules[closed_call_p] = physical.inline_call("call_jaxpr")
lowering_rules[closed_call_p] = _call_lowering
native_rules[closed_call_p] = "custom_call"  # inlines params["call_jaxpr"]

call_p = CallPrimitive("call")
impl_rules[call_p] = _call_impl
abstract_eval_rules[call_p] = _call_abstract
ad.jvp_rules[call_p] = _call_jvp
ad.transpose_rules[call_p] = _call_transpose
batching.batch_rules[call_p] = _call_batch_rule(call_p)
physical_rules[call_p] = physical.inline_call("call_jaxpr")
lowering_rules[call_p] = _call_lowering
native_rules[call_p] = "custom_call"
