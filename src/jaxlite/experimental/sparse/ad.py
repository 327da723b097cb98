"""Sparse-aware `grad`, `value_and_grad`, `jacfwd`, `jacrev`: with respect to a sparse
argument, differentiate with respect to its `data` only (the gradient lives in the
subspace of its sparsity pattern) and return it as a sparse array with the same
indices; dense arguments are differentiated as usual."""

from __future__ import annotations

import itertools
import operator

import jaxlite.numpy as jnp
from jaxlite import api_autodiff, tree_util
from jaxlite.experimental.sparse._base import JAXSparse
from jaxlite.util import wraps

__all__ = ["grad", "jacfwd", "jacobian", "jacrev", "value_and_grad"]


def _is_sparse(x):
    return isinstance(x, JAXSparse)


def _argnums_tuple(argnums):
    if isinstance(argnums, int):
        return (operator.index(argnums),)
    return tuple(operator.index(a) for a in argnums)


def flatten_fun_for_sparse_ad(fun, argnums, args):
    """`(fun_flat, argnums_flat, args_flat, postprocess)`: `fun` of the flat buffers
    of `args`, the positions of the buffers to differentiate (all leaves of a dense
    argument, the data of a sparse one), and how to rebuild the gradients."""
    argnums = _argnums_tuple(argnums)
    if not all(0 <= a < len(args) for a in argnums):
        raise ValueError(
            f"argnums {argnums} out of bounds for a function of {len(args)} arguments"
        )
    leaves1, tree1 = tree_util.tree_flatten(args, is_leaf=_is_sparse)
    per_arg = [c.num_leaves for c in tree1.children()]
    starts = list(itertools.accumulate([0, *per_arg]))
    argnums_flat1 = [i for a in argnums for i in range(starts[a], starts[a + 1])]
    args_flat, tree2 = tree_util.tree_flatten(leaves1)
    per_leaf = [c.num_leaves for c in tree2.children()]
    starts2 = list(itertools.accumulate([0, *per_leaf]))
    argnums_flat = []
    for i in argnums_flat1:
        positions = range(starts2[i], starts2[i + 1])
        argnums_flat += positions[:1] if _is_sparse(leaves1[i]) else positions

    def fun_flat(*flat, **kwargs):
        args = tree_util.tree_unflatten(tree1, tree_util.tree_unflatten(tree2, flat))
        return fun(*args, **kwargs)

    def rebuild(i, grads):
        leaf = leaves1[i]
        if not _is_sparse(leaf):
            return tree_util.tree_unflatten(tree_util.tree_structure(leaf), grads)
        (g,) = grads
        bufs, tree = tree_util.tree_flatten(leaf)
        # Jacobians: leading output dimensions become batch dimensions.
        lead = g.shape[: g.ndim - bufs[0].ndim]
        rest = [jnp.broadcast_to(b, (*lead, *b.shape)) for b in bufs[1:]]
        obj = tree_util.tree_unflatten(tree, [g, *rest])
        if lead:
            obj.shape = (*lead, *leaf.shape)
        return obj

    def postprocess(grads):
        grads = list(grads)
        out = [None] * tree1.num_leaves
        for i in argnums_flat1:
            n = 1 if _is_sparse(leaves1[i]) else starts2[i + 1] - starts2[i]
            out[i] = rebuild(i, grads[:n])
            del grads[:n]
        grad_tree = tree_util.tree_unflatten(tree1, out)
        picked = tuple(grad_tree[a] for a in argnums)
        return picked[0] if len(picked) == 1 else picked

    return fun_flat, tuple(argnums_flat), args_flat, postprocess


def _sparse_version(transform, name):
    def make(fun, argnums=0, has_aux=False, **kwargs):
        @wraps(fun)
        def wrapped(*args, **call_kwargs):
            fun_flat, argnums_flat, args_flat, post = flatten_fun_for_sparse_ad(
                fun, argnums, args
            )
            out = transform(fun_flat, argnums=argnums_flat, has_aux=has_aux, **kwargs)(
                *args_flat, **call_kwargs
            )
            if name == "value_and_grad":
                value, grads = out
                return value, post(_as_tuple(grads))
            if has_aux:
                return post(_as_tuple(out[0])), out[1]
            return post(_as_tuple(out))

        return wrapped

    make.__name__ = name
    make.__doc__ = (
        f"Sparse-aware `jax.{name}`: with respect to a sparse argument, the result is "
        "taken in the subspace of its sparsity pattern and returned as a sparse array "
        "with the same indices."
    )
    return make


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


grad = _sparse_version(api_autodiff.grad, "grad")
value_and_grad = _sparse_version(api_autodiff.value_and_grad, "value_and_grad")
jacfwd = _sparse_version(api_autodiff.jacfwd, "jacfwd")
jacrev = _sparse_version(api_autodiff.jacrev, "jacrev")
jacobian = jacrev
