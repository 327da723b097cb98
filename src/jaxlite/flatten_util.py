"""`ravel_pytree`: a pytree of arrays as one flat vector, and the way back.

Optimizers, line searches and ODE solvers written for a single vector take a model's
parameter pytree through `flat, unravel = ravel_pytree(params)`. The flat vector is the
leaves raveled and concatenated in `tree_flatten` order; when the leaves' dtypes differ
they are promoted together with JAX's rules (int32 and float16 give float16) and
`unravel` converts each piece back to its own dtype.

Both directions are ordinary `jaxlite.lax` code (`concatenate`, `split`, `reshape`,
`convert_element_type`), so they differentiate, jit and vmap like anything else: the
gradient of a float leaf flows through unravel, an integer leaf gets no gradient. The
`unravel` function compares and hashes by value, so jitting it twice hits the cache.
"""

from __future__ import annotations

import numpy as np

from jaxlite import dtypes, lax
from jaxlite import numpy as jnp
from jaxlite.tree_util import tree_flatten, tree_unflatten

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree):
    """Ravel (flatten) a pytree of arrays down to a 1-D array.

    Returns a pair `(flat, unravel)`: `flat` is a 1-D array holding every leaf raveled
    and concatenated (promoted to a common dtype if the leaves' dtypes differ), and
    `unravel(flat)` rebuilds a pytree of the original structure, shapes and dtypes.
    """
    leaves, treedef = tree_flatten(pytree)
    flat, unravel_list = _ravel_list(leaves)
    return flat, _Unravel(treedef, unravel_list)


def _ravel_list(leaves):
    if not leaves:
        return jnp.zeros(0, dtype=np.float32), _UnravelList((), (), (), None)
    from_dtypes = tuple(dtypes.dtype(leaf) for leaf in leaves)
    to_dtype = dtypes.result_type(*from_dtypes)
    shapes = tuple(tuple(np.shape(leaf)) for leaf in leaves)
    if all(dt == to_dtype for dt in from_dtypes):
        flat = jnp.concatenate([jnp.ravel(leaf) for leaf in leaves])
        return flat, _UnravelList(shapes, from_dtypes, (), None)
    pieces = [lax.convert_element_type(jnp.ravel(leaf), to_dtype) for leaf in leaves]
    flat = jnp.concatenate(pieces)
    return flat, _UnravelList(shapes, from_dtypes, from_dtypes, to_dtype)


class _UnravelList:
    """Splits a flat vector into the leaves' shapes (converting to their dtypes when
    the ravel promoted them to `to_dtype`)."""

    def __init__(self, shapes, from_dtypes, convert_to, to_dtype):
        self.shapes = shapes
        self.from_dtypes = from_dtypes
        self.convert_to = convert_to
        self.to_dtype = to_dtype

    def _key(self):
        return (self.shapes, self.from_dtypes, self.convert_to, self.to_dtype)

    def __eq__(self, other):
        return type(other) is _UnravelList and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __call__(self, arr):
        if not self.shapes:
            return []
        if self.to_dtype is not None:
            arr_dtype = dtypes.dtype(arr)
            if arr_dtype != self.to_dtype:
                raise TypeError(
                    f"unravel function given array of dtype {arr_dtype}, but "
                    f"expected dtype {self.to_dtype}: pass the flat vector that "
                    f"ravel_pytree returned (or one of the same dtype)."
                )
        arr = jnp.asarray(arr)
        sizes = tuple(int(np.prod(shape, dtype=np.int64)) for shape in self.shapes)
        if arr.ndim == 0 or sum(sizes) != arr.shape[0]:
            raise ValueError(
                f"Sum of sizes {sum(sizes)} must be equal to dimension 0 of the "
                f"operand shape {list(arr.shape)}: the unravel function expects "
                f"the flat vector of length {sum(sizes)} that ravel_pytree returned."
            )
        chunks = lax.split(arr, sizes, axis=0)
        out = [jnp.reshape(c, shape) for c, shape in zip(chunks, self.shapes)]
        if self.to_dtype is not None:
            out = [
                lax.convert_element_type(c, dt) for c, dt in zip(out, self.convert_to)
            ]
        return out


class _Unravel:
    """The `unravel` function `ravel_pytree` returns: equal (and hashing equal) to
    any other built for the same tree structure, shapes and dtypes."""

    def __init__(self, treedef, unravel_list):
        self.treedef = treedef
        self.unravel_list = unravel_list

    def __eq__(self, other):
        return (
            type(other) is _Unravel
            and self.treedef == other.treedef
            and self.unravel_list == other.unravel_list
        )

    def __hash__(self):
        return hash((self.treedef, self.unravel_list))

    def __repr__(self):
        return f"<unravel function for {self.treedef}>"

    def __call__(self, flat):
        return tree_unflatten(self.treedef, self.unravel_list(flat))
