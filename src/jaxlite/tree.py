"""The `jax.tree` namespace: short names for the pytree functions of `tree_util`.

`jaxlite.tree.map(f, tree)` is `jaxlite.tree_util.tree_map(f, tree)`, and so on;
JAX code written against either spelling runs unchanged.
"""

import dataclasses

from jaxlite import tree_util

all = tree_util.tree_all
broadcast = tree_util.tree_broadcast
flatten = tree_util.tree_flatten
flatten_with_path = tree_util.tree_flatten_with_path
leaves = tree_util.tree_leaves
leaves_with_path = tree_util.tree_leaves_with_path
map = tree_util.tree_map
map_with_path = tree_util.tree_map_with_path
reduce = tree_util.tree_reduce
reduce_associative = tree_util.tree_reduce_associative
structure = tree_util.tree_structure
transpose = tree_util.tree_transpose
unflatten = tree_util.tree_unflatten

__all__ = [
    "all",
    "broadcast",
    "flatten",
    "flatten_with_path",
    "leaves",
    "leaves_with_path",
    "map",
    "map_with_path",
    "reduce",
    "reduce_associative",
    "static",
    "structure",
    "transpose",
    "unflatten",
]


def static(**kwargs):
    """A `dataclasses.field` marked `static=True`: `register_dataclass` makes it
    aux data instead of a child."""
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)
