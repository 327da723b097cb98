"""Operations that only talk to a compiler: `optimization_barrier` and
`with_sharding_constraint`.

Both are the identity on values. `optimization_barrier` is a primitive, as in JAX,
so it shows in jaxprs and keeps its operands grouped (XLA may not move computations
across it); the NumPy backend runs equations in program order anyway, so it costs
nothing. jaxlite has one CPU device, so a sharding constraint has nothing to
constrain and `with_sharding_constraint` returns its input.
"""

from __future__ import annotations

from jaxlite import tree_util
from jaxlite.backend.native import native_rules
from jaxlite.core import Primitive, abstract_eval_rules, impl_rules, no_effects
from jaxlite.interpreters import ad, batching
from jaxlite.lax.structural import operand

__all__ = [
    "optimization_barrier",
    "optimization_barrier_p",
    "with_sharding_constraint",
]


def _barrier_impl(*args):
    return list(args)


def _barrier_abstract(*avals):
    return list(avals), no_effects


def _barrier_jvp(primals, tangents):
    outs = optimization_barrier_p.bind(*primals)
    nonzero = [t for t in tangents if type(t) is not ad.Zero]
    t_outs = iter(optimization_barrier_p.bind(*nonzero) if nonzero else [])
    return outs, [t if type(t) is ad.Zero else next(t_outs) for t in tangents]


def _barrier_transpose(cts, *args):
    return [None if type(ct) is ad.Zero else ct for ct in cts]


def _barrier_batch(axis_size, vals, dims):
    return optimization_barrier_p.bind(*vals), list(dims)


optimization_barrier_p = Primitive("optimization_barrier", multiple_results=True)
impl_rules[optimization_barrier_p] = _barrier_impl
abstract_eval_rules[optimization_barrier_p] = _barrier_abstract
ad.jvp_rules[optimization_barrier_p] = _barrier_jvp
ad.transpose_rules[optimization_barrier_p] = _barrier_transpose
batching.batch_rules[optimization_barrier_p] = _barrier_batch
native_rules[optimization_barrier_p] = "identity"


def optimization_barrier(operand_, /):
    """The identity on a pytree of arrays, which compilers may not optimise across."""
    leaves, tree = tree_util.tree_flatten(operand_)
    outs = optimization_barrier_p.bind(*(operand(x) for x in leaves))
    return tree_util.tree_unflatten(tree, outs)


def with_sharding_constraint(x, shardings):
    """The identity: jaxlite runs on one device, where every sharding holds. A None
    sharding is an error, as in JAX."""
    if any(s is None for s in tree_util.tree_leaves(shardings, is_leaf=_is_none)):
        raise ValueError(
            "One of with_sharding_constraint arguments got sharding None which is not "
            "allowed. Please only pass `jax.sharding.Sharding` instances."
        )
    return x


def _is_none(x):
    return x is None
