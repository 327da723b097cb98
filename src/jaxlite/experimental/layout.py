"""`jax.experimental.layout`: how an array's elements are ordered in device memory.

XLA may choose a layout per array (`Layout.AUTO`) or be given one (`Layout`, the axes
from major to minor), paired with a sharding in a `Format`. jaxlite keeps every array
as a NumPy buffer on its one device, so these objects describe and check what they
are given (as JAX's do), and a layout constraint leaves the values unchanged.
"""

from __future__ import annotations

import numpy as np

from jaxlite import tree_util
from jaxlite.sharding import Sharding


class AutoLayoutSingleton:
    """`Layout.AUTO`: the compiler chooses the layout."""

    def __repr__(self):
        return "AUTO"


class Layout:
    """An array layout: its axes from major to minor, with optional tiling."""

    AUTO = AutoLayoutSingleton()

    def __init__(self, major_to_minor, tiling=None, sub_byte_element_size_in_bits=0):
        self.major_to_minor = tuple(major_to_minor)
        self.tiling = None if tiling is None else tuple(map(tuple, tiling))
        self.sub_byte_element_size_in_bits = sub_byte_element_size_in_bits

    def _key(self):
        return (self.major_to_minor, self.tiling, self.sub_byte_element_size_in_bits)

    def __repr__(self):
        return (
            f"Layout(major_to_minor={self.major_to_minor}, tiling={self.tiling}, "
            f"sub_byte_element_size_in_bits={self.sub_byte_element_size_in_bits})"
        )

    def __eq__(self, other):
        return isinstance(other, Layout) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def update(self, **kwargs):
        fields = dict(
            major_to_minor=self.major_to_minor,
            tiling=self.tiling,
            sub_byte_element_size_in_bits=self.sub_byte_element_size_in_bits,
        )
        fields.update(kwargs)
        return Layout(**fields)

    def check_compatible_aval(self, aval_shape):
        if len(self.major_to_minor) != len(aval_shape):
            raise ValueError(
                f"Length of major_to_minor and the rank of the value should match. "
                f"Got major_to_minor={self.major_to_minor} and shape={aval_shape}"
            )


class Format:
    """A layout (None, `Layout.AUTO` or a `Layout`) with a sharding (None or a
    concrete `Sharding`)."""

    def __init__(self, layout=None, sharding=None):
        if isinstance(layout, Layout) and sharding is None:
            raise ValueError(
                "Sharding has to be concrete when layout is of type "
                f"{type(layout)}. Please pass a `jax.sharding.NamedSharding` or "
                "`jax.sharding.SingleDeviceSharding` to the sharding argument. Got "
                f"sharding {sharding}"
            )
        if not (layout is None or layout is Layout.AUTO or isinstance(layout, Layout)):
            raise TypeError(
                "Invalid value received for the layout argument. Expected values are "
                "`None`, `Layout.AUTO` or an instance of `Layout`. Got "
                f"{layout} of type {type(layout)}"
            )
        if not (sharding is None or isinstance(sharding, Sharding)):
            raise TypeError(
                "Invalid value received for the sharding argument. Expected values "
                "are `None` or an instance of `jax.Sharding`. Got "
                f"{sharding} of type {type(sharding)}"
            )
        self.layout = layout
        self.sharding = sharding

    def __repr__(self):
        return f"Format(layout={self.layout}, sharding={self.sharding})"

    def __eq__(self, other):
        return (
            isinstance(other, Format)
            and self.layout == other.layout
            and self.sharding == other.sharding
        )

    def __hash__(self):
        return hash((self.layout, self.sharding))


def _is_none(x):
    return x is None


def with_layout_constraint(x, layouts):
    """`x` constrained to `layouts` inside a compiled function: on jaxlite the
    values are unchanged. `layouts` is a `Layout` or a tree prefix of `x` with a
    `Layout` at each leaf, checked against the values' ranks as JAX checks it."""
    leaves, treedef = tree_util.tree_flatten(x)
    prefix, prefix_tree = tree_util.tree_flatten(layouts, is_leaf=_is_none)
    try:
        subtrees = prefix_tree.flatten_up_to(x)
    except (ValueError, TypeError) as e:
        raise ValueError(
            "with_layout_constraint layouts specification must be a tree prefix of "
            f"the corresponding value; got {layouts!r} for a value of structure "
            f"{treedef}"
        ) from e
    per_leaf = []
    for layout, sub in zip(prefix, subtrees, strict=True):
        per_leaf += [layout] * tree_util.tree_structure(sub).num_leaves
    if not all(isinstance(layout, Layout) for layout in per_leaf):
        raise ValueError(
            "layouts passed to `with_layout_constraint` must be of type `Layout`. "
            f"Got {[type(layout) for layout in per_leaf]}"
        )
    for leaf, layout in zip(leaves, per_leaf, strict=True):
        try:
            layout.check_compatible_aval(np.shape(leaf))
        except ValueError as e:
            raise ValueError(
                "One of with_layout_constraint arguments is incompatible with its "
                f"layout annotation {layout}: {e}"
            ) from None
    return x


__all__ = ["Format", "Layout", "with_layout_constraint"]
