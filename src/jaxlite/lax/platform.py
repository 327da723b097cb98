"""Platform choice, composites, single-device sharding casts and dot-algorithm names.

- `platform_dependent(*args, cpu=..., tpu=..., default=...)` stages the choice as JAX
  does: a `platform_index` equation (which branch runs on the platform the code is
  lowered for) and a `cond` over every branch, so all branches are traced and the
  choice composes with `vmap` and `grad` like any `switch`. Eagerly the index is known
  at once and only the chosen branch runs. jaxlite lowers for one platform, "cpu":
  `platform_index` compiles to the constant index of the "cpu" branch (else the
  default), and fails there, as in JAX, when there is neither.
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

import numpy as np

from jaxlite import tree_util
from jaxlite.backend import lowering_rules
from jaxlite.backend.lowering import expansion_rules
from jaxlite.backend.native import native_rules
from jaxlite.core import (
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    impl_rules,
    is_concrete,
    no_effects,
)
from jaxlite.interpreters.batching import axis_exists
from jaxlite.interpreters.partial_eval import trace_to_jaxpr
from jaxlite.lax.conditionals import switch_traced
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
    "platform_index_p",
]

PLATFORM = "cpu"  # the one platform jaxlite lowers for


def platform_dependent(*args, default=None, **per_platform):
    """`per_platform[platform](*args)` for the platform the code runs on (jaxlite's
    is "cpu"), or `default(*args)` when it has no branch. Identical branches are
    joined; under a transformation every branch is traced (see the module
    docstring)."""
    branches, platforms = [], []
    for name, branch in per_platform.items():
        if not callable(branch):
            raise TypeError(
                f"lax.platform_dependent: the '{name}' branch must be a callable."
            )
        if name == "gpu":
            raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
        for i, b in enumerate(branches):
            if b == branch:
                platforms[i].append(name)
                break
        else:
            branches.append(branch)
            platforms.append([name])
    branches_platforms = tuple(tuple(ps) for ps in platforms)
    if default is not None:
        if not callable(default):
            raise TypeError(
                "lax.platform_dependent: the 'default' branch must be a callable."
            )
        branches.append(default)
        branches_platforms += (None,)
    index = platform_index_p.bind(platforms=branches_platforms)
    if is_concrete(index):
        return branches[int(index)](*args)
    return switch_traced(index, branches, args)


# ----------------------------------------------------------------------------------------
# platform_index: which of `platforms` (a tuple of tuples of platform names, None for
# the default) holds the platform the code is lowered for.


def _platform_index(platforms):
    default = None
    for i, names in enumerate(platforms):
        if names is None:
            default = i
        elif PLATFORM in names:
            return i
    if default is None:
        raise NotImplementedError(
            f"lax.platform_dependent has no branch for the platform {PLATFORM!r} "
            f"(the branches are for {[p for ps in platforms for p in ps]}) and no "
            f"default: jaxlite runs on {PLATFORM!r}. Add {PLATFORM}=... or "
            "default=... ."
        )
    return default


def _platform_index_impl(*, platforms):
    return [np.int32(_platform_index(platforms))]


def _platform_index_abstract(*, platforms):
    return [ShapedArray((), np.int32)], no_effects


def _platform_index_lowering(ctx, *, platforms):
    index = np.int32(_platform_index(platforms))
    return ctx.add_global(index, "platform_index")


def _platform_index_expansion(avals_in, *, platforms):
    index = np.int32(_platform_index(platforms))
    return trace_to_jaxpr(lambda: [index], [])


# No operands: no JVP or batching rule is ever consulted (the traces bind it as is).
platform_index_p = Primitive("platform_index")
impl_rules[platform_index_p] = _platform_index_impl
abstract_eval_rules[platform_index_p] = _platform_index_abstract
lowering_rules[platform_index_p] = _platform_index_lowering
expansion_rules[platform_index_p] = _platform_index_expansion  # for the native op
native_rules[platform_index_p] = "expand"


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
