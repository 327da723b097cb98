"""Platform choice, composites, single-device sharding casts and dot-algorithm names.

- `platform_dependent(*args, cpu=..., default=...)` picks the branch for jaxlite's one
  platform ("cpu"), else `default`, and calls it (traced inline: there is no other
  platform to lower for).
- `composite(decomposition, name)` wraps a function that XLA may replace by a named
  kernel; jaxlite has no such kernels, so calling it calls the decomposition.
- `pcast` and `pbroadcast` change only the "varying manual axes" type of a value inside
  `shard_map`; on one device every value is the same on all (one) members, so they are
  the identity once the axis names are checked to be bound.
- `DotAlgorithm`, `DotAlgorithmPreset`, `Tolerance`, `AccuracyMode` and the type
  aliases exist so that code naming them runs; NumPy computes every product in the
  operand dtype, which meets every preset's accuracy on CPU.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Sequence
from typing import Any, NamedTuple

from jaxlite import tree_util
from jaxlite.interpreters.batching import axis_exists
from jaxlite.lax.dot import Precision

__all__ = [
    "AccuracyMode",
    "DotAlgorithm",
    "DotAlgorithmPreset",
    "DotDimensionNumbers",
    "PrecisionLike",
    "Tolerance",
    "composite",
    "pbroadcast",
    "pcast",
    "platform_dependent",
]


def platform_dependent(*args, default=None, **per_platform):
    """Call `per_platform["cpu"](*args)`, or `default(*args)` when there is none."""
    fun = per_platform.get("cpu", default)
    if fun is None:
        raise NotImplementedError(
            "platform_dependent: no branch for platform 'cpu' and no default; pass "
            "cpu=... or default=..."
        )
    return fun(*args)


def composite(decomposition, name, version=0):
    """A function that calls `decomposition` (jaxlite has no kernel to swap in)."""

    @functools.wraps(decomposition)
    def wrapped(*args, **kwargs):
        return decomposition(*args, **kwargs)

    wrapped.composite_name = name
    wrapped.composite_version = version
    return wrapped


def _check_axes(axis_name, api):
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    for name in names:
        if not axis_exists(name):
            raise NameError(
                f"Found an unbound axis name: {name}. To fix this, please call {api} "
                "inside jax.shard_map (or jax.vmap/pmap) with that axis name bound."
            )


def pcast(x, axis_name, *, to):
    """Cast `x` between invariant and varying over `axis_name` (identity here)."""
    if to not in ("varying", "invariant", "unreduced", "reduced"):
        raise ValueError(
            f"pcast: `to` must be 'varying' or 'invariant' (or 'unreduced'/'reduced'), "
            f"got {to!r}."
        )
    _check_axes(axis_name, "pcast")
    return tree_util.tree_map(lambda leaf: leaf, x)


def pbroadcast(x, axis_name, source):
    """Broadcast `x` from member `source` of `axis_name` (one member: identity)."""
    _check_axes(axis_name, "pbroadcast")
    if int(source) != 0:
        raise ValueError(
            f"pbroadcast: source {source} is out of range for an axis of size 1."
        )
    return tree_util.tree_map(lambda leaf: leaf, x)


class AccuracyMode(enum.Enum):
    HIGHEST = 1
    DEFAULT = 2


class Tolerance(NamedTuple):
    """Accuracy tolerance of a transcendental function (XLA's result accuracy)."""

    atol: float = 0.0
    rtol: float = 0.0
    ulps: int = 0


class DotAlgorithm(NamedTuple):
    """How a dot is computed: operand and accumulation types and component counts."""

    lhs_precision_type: Any
    rhs_precision_type: Any
    accumulation_type: Any
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


class DotAlgorithmPreset(enum.Enum):
    """Named dot algorithms (XLA's presets)."""

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self):
        return self.name

    __str__ = __repr__


DotDimensionNumbers = tuple[
    tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]
]
PrecisionLike = (
    None | str | Precision | tuple[str, str] | tuple[Precision, Precision]
    | DotAlgorithm | DotAlgorithmPreset
)  # fmt: skip
