"""`jax.custom_derivatives`: functions with derivative rules their authors supply.

`custom_jvp` and `custom_vjp` live with their primitives in `lax/custom_derivatives.py`;
this module is the public namespace and adds the helpers built on them:
`custom_gradient` (a function that returns its value and its VJP together),
`closure_convert` (make the values a function closes over explicit arguments, so a
custom rule can differentiate with respect to them), `SymbolicZero`,
`zero_from_primal`, and `CustomVJPPrimal` (what a `symbolic_zeros=True` forward rule
receives).
"""

from __future__ import annotations

import functools

from jaxlite import tree_util
from jaxlite.api_util import trace_flat
from jaxlite.core import Jaxpr, eval_jaxpr, get_aval
from jaxlite.interpreters import ad
from jaxlite.interpreters.partial_eval import split_tracer_consts
from jaxlite.lax.custom_derivatives import (
    CustomVJPPrimal,
    SymbolicZero,
    custom_jvp,
    custom_jvp_call_p,
    custom_vjp,
    custom_vjp_call_p,
    custom_vjp_primal_tree_values,
    zero_from_primal,
)
from jaxlite.lax.linear_call import linear_call
from jaxlite.util import fun_name


def closure_convert(fun, *example_args):
    """`(converted, consts)`: `converted(*args, *consts)` computes `fun(*args)`, with
    the traced values `fun` closes over (`consts`) passed as explicit arguments.

    Custom rules may not close over values being differentiated; closure conversion
    turns such values into ordinary arguments the rule can differentiate. `fun` is
    traced at the shapes and dtypes of `example_args`; values it closes over that are
    concrete (not traced) stay inside, as in JAX.
    """
    leaves, in_tree = tree_util.tree_flatten(example_args)
    avals = [get_aval(x) for x in leaves]
    closed, out_tree = trace_flat(fun, in_tree, avals)
    closed, consts = split_tracer_consts(closed)
    n_consts = len(consts)

    def converted(*args_and_consts):
        # As JAX: the last `len(consts)` arguments are the hoisted values.
        n_args = len(args_and_consts) - n_consts
        args, hoisted = args_and_consts[:n_args], args_and_consts[n_args:]
        flat, tree = tree_util.tree_flatten(args)
        if tree != in_tree:
            raise TypeError(
                "The inputs to the closure produced by closure_convert must have the "
                "same Pytree structure as the example arguments passed when "
                f"closure_convert was called. Expected {in_tree}, but got {tree}"
            )
        outs = eval_jaxpr(closed.jaxpr, closed.consts, *hoisted, *flat)
        return tree_util.tree_unflatten(out_tree, outs)

    functools.update_wrapper(converted, fun)
    return converted, list(consts)


class _VJPResiduals:
    """What `custom_gradient`'s forward pass keeps: the user's VJP function traced to
    a jaxpr (static) and the values it closes over (the residual arrays)."""

    def __init__(self, jaxpr, out_tree, consts):
        self.jaxpr = jaxpr
        self.out_tree = out_tree
        self.consts = consts


tree_util.register_pytree_node(
    _VJPResiduals,
    lambda r: (r.consts, (r.jaxpr, r.out_tree)),
    lambda aux, consts: _VJPResiduals(aux[0], aux[1], list(consts)),
)


def custom_gradient(fun):
    """A function with its gradient given by `fun` itself: `fun(*args)` returns
    `(value, vjp)` where `vjp(cotangent)` returns one cotangent per argument (a tuple;
    a single value stands for a one-tuple, as in JAX).

    ```
    @jax.custom_gradient
    def f(x):
        return x ** 2, lambda g: (g * x,)
    ```
    """

    def primal(*args):
        return fun(*args)[0]

    def fwd(*args):
        ans, rule = fun(*args)
        ans_leaves, ans_tree = tree_util.tree_flatten((ans,))
        ct_avals = [ad.tangent_aval(get_aval(a)) for a in ans_leaves]
        closed, out_tree = trace_flat(rule, ans_tree, ct_avals)
        j = closed.jaxpr
        open_jaxpr = Jaxpr([], j.constvars + j.invars, j.outvars, j.eqns, j.effects)
        return ans, _VJPResiduals(open_jaxpr, out_tree, list(closed.consts))

    def bwd(res, ct):
        outs = eval_jaxpr(res.jaxpr, [], *res.consts, *tree_util.tree_leaves(ct))
        cts_in = tree_util.tree_unflatten(res.out_tree, outs)
        if tree_util.treedef_is_leaf(res.out_tree):
            cts_in = (cts_in,)  # a bare value for a one-argument function, as JAX
        return cts_in

    primal.__name__ = fun_name(fun, "custom_gradient")
    wrapped = custom_vjp(primal)
    wrapped.defvjp(fwd, bwd)
    functools.update_wrapper(wrapped, fun)
    return wrapped


__all__ = [
    "CustomVJPPrimal",
    "SymbolicZero",
    "closure_convert",
    "custom_gradient",
    "custom_jvp",
    "custom_jvp_call_p",
    "custom_vjp",
    "custom_vjp_call_p",
    "custom_vjp_primal_tree_values",
    "linear_call",
    "zero_from_primal",
]
