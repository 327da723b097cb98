"""`associative_scan`: every prefix combination `x0, x0⊕x1, x0⊕x1⊕x2, ...` of an
associative `fn`, in O(log n) vectorised rounds instead of n sequential steps.

The classic parallel-prefix recursion: combine neighbouring pairs, which halves the
problem; scan the pairs recursively, which gives every odd-indexed prefix; one more
vectorised combination with the remaining elements gives the even-indexed ones; then
interleave. Everything is written in lax operations (strided slices, concatenation,
reshapes) around calls of `fn` on whole arrays, so `jit`, `grad` and `vmap` need no
rules of their own.
"""

from __future__ import annotations

import numpy as np

from jaxlite import tree_util
from jaxlite.lax.indexing import slice_in_dim
from jaxlite.lax.structural import concatenate, operand, reshape, rev
from jaxlite.util import canonicalize_axis

__all__ = ["associative_scan"]


def _interleave(evens, odds, axis):
    """`e0, o0, e1, o1, ...` along `axis`; `evens` has as many elements as `odds` or
    one more."""
    n_even, n_odd = np.shape(evens)[axis], np.shape(odds)[axis]
    last = None
    if n_even > n_odd:
        last = slice_in_dim(evens, n_even - 1, n_even, axis=axis)
        evens = slice_in_dim(evens, 0, n_odd, axis=axis)
    shape = list(np.shape(evens))
    pair_shape = shape[: axis + 1] + [1] + shape[axis + 1 :]
    pairs = concatenate(
        [reshape(evens, pair_shape), reshape(odds, pair_shape)], axis + 1
    )
    shape[axis] *= 2
    out = reshape(pairs, shape)
    return out if last is None else concatenate([out, last], axis)


def associative_scan(fn, elems, reverse=False, axis=0):
    """All prefix reductions of `elems` (a pytree of arrays sharing the length of
    `axis`) under the associative `fn(a, b)`, which must work elementwise on whole
    arrays (pytrees like `elems`). `reverse=True` scans from the end."""
    leaves, tree = tree_util.tree_flatten(elems)
    leaves = [operand(x) for x in leaves]
    if not leaves:
        return elems
    axis = canonicalize_axis(axis, np.ndim(leaves[0]))
    n = np.shape(leaves[0])[axis]
    if any(np.shape(x)[axis] != n for x in leaves[1:]):
        raise ValueError(
            "Array inputs to associative_scan must have the same first dimension. "
            f"(saw: {[np.shape(x) for x in leaves]})"
        )
    if reverse:
        leaves = [rev(x, (axis,)) for x in leaves]

    def combine(a, b):
        out = fn(tree_util.tree_unflatten(tree, a), tree_util.tree_unflatten(tree, b))
        out_leaves, out_tree = tree_util.tree_flatten(out)
        if out_tree != tree:
            raise TypeError(
                "associative_scan: fn must return a pytree like elems "
                f"({tree}), got {out_tree}."
            )
        return out_leaves

    def scan(xs):
        size = np.shape(xs[0])[axis]
        if size < 2:
            return xs
        # Combine neighbours: pair k holds the prefix of elements 2k and 2k+1.
        pairs = combine(
            [slice_in_dim(x, 0, size - 1, 2, axis) for x in xs],
            [slice_in_dim(x, 1, size, 2, axis) for x in xs],
        )
        odd = scan(pairs)  # prefixes ending at the odd positions 1, 3, 5, ...
        # The even positions 2, 4, ...: an odd prefix combined with the next element.
        rest = [slice_in_dim(x, 2, size, 2, axis) for x in xs]
        n_rest = np.shape(rest[0])[axis]
        head = [slice_in_dim(o, 0, n_rest, axis=axis) for o in odd]
        even = combine(head, rest) if n_rest else rest
        even = [
            concatenate([slice_in_dim(x, 0, 1, axis=axis), e], axis)
            for x, e in zip(xs, even)
        ]
        return [_interleave(e, o, axis) for e, o in zip(even, odd)]

    out = scan(leaves)
    if reverse:
        out = [rev(x, (axis,)) for x in out]
    return tree_util.tree_unflatten(tree, out)
