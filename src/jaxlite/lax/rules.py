"""Helpers that register the recurring shapes of primitive rules.

`defunary` and `defbinary` cover elementwise primitives: one NumPy function gives the
implementation and the lowering, a list of accepted dtype kinds gives the type check with
JAX's error message, and shapes follow lax's broadcasting (equal ranks, size-1 dimensions
and rank-0 operands broadcast). Each primitive still names all its rules in its own
registration block; these helpers only remove the repetition.
"""

from __future__ import annotations

import functools
import operator

import numpy as np

from jaxlite import dtypes
from jaxlite.backend import lowering_rules
from jaxlite.backend.numpy_backend import inline
from jaxlite.core import ShapedArray, abstract_eval_rules, impl_rules, no_effects
from jaxlite.errors import float0_operation_error

# Dtype kinds accepted by elementwise primitives, named as in JAX's error messages.
BOOL = ("bool",)
SINT = ("signedinteger",)
UINT = ("unsignedinteger",)
INT = ("signedinteger", "unsignedinteger")
FLOAT = ("floating",)
COMPLEX = ("complexfloating",)
INEXACT = FLOAT + COMPLEX
NUMBER = INT + INEXACT
ANY = BOOL + NUMBER
INT_OR_BOOL = BOOL + INT

_KIND_CLASSES = {
    "bool": np.bool_,
    "signedinteger": np.signedinteger,
    "unsignedinteger": np.unsignedinteger,
    "floating": np.floating,
    "complexfloating": np.complexfloating,
}


def _kind_of(dtype):
    if dtype == np.bool_:
        return "bool"
    if dtypes.issubdtype(dtype, np.floating):
        return "floating"
    for kind in ("signedinteger", "unsignedinteger", "complexfloating"):
        if dtypes.issubdtype(dtype, _KIND_CLASSES[kind]):  # int4, ... included
            return kind
    return "other"


_KIND_ORDER = (
    "signedinteger",
    "unsignedinteger",
    "floating",
    "complexfloating",
    "bool",
)


def kind_names(kinds):
    """Accepted dtype kinds as JAX's messages name them ("integer" for both kinds), in
    JAX's order: JAX joins the names of a set of NumPy's classes, the union of one set
    per kind in this order, so the order follows the classes' hashes (their addresses,
    which differ between NumPy builds); the same union here gives the same order."""
    names = [k for k in _KIND_ORDER if k in kinds]
    if "signedinteger" in names and "unsignedinteger" in names:
        names = [k for k in names if k != "unsignedinteger"]
        names[names.index("signedinteger")] = "integer"
    classes = functools.reduce(
        operator.or_, [{_NAMED_CLASSES[k]} for k in names], set()
    )
    return ", ".join(cls.__name__ for cls in classes)


_NAMED_CLASSES = {
    "integer": np.integer,
    "signedinteger": np.signedinteger,
    "unsignedinteger": np.unsignedinteger,
    "floating": np.floating,
    "complexfloating": np.complexfloating,
    "bool": np.bool_,
}


def _name(dtype):
    """A dtype's name in messages (an extended dtype's own: `key<fry>`)."""
    return dtype.name if dtypes.is_extended(dtype) else np.dtype(dtype).name


def check_dtype(name, dtype, kinds):
    if _kind_of(dtype) not in kinds:
        if dtype == dtypes.float0:
            raise float0_operation_error(name)
        raise TypeError(
            f"{name} does not accept dtype {_name(dtype)}. "
            f"Accepted dtypes are subtypes of {kind_names(kinds)}."
        )


def check_operand_dtypes(name, avals, kinds):
    """Each operand's dtype against the kinds accepted at its position (`kinds` is
    one tuple for all positions, or a list of tuples)."""
    per_position = kinds if isinstance(kinds, list) else [kinds] * len(avals)
    for i, (aval, ok) in enumerate(zip(avals, per_position)):
        if _kind_of(aval.dtype) not in ok:
            if aval.dtype == dtypes.float0:
                raise float0_operation_error(name, i)
            raise TypeError(
                f"{name} does not accept dtype {_name(aval.dtype)} at position "
                f"{i}. Accepted dtypes at position {i} are subtypes of "
                f"{kind_names(ok)}."
            )


def broadcast_shapes(name, *shapes):
    """lax's elementwise broadcasting: equal ranks (or rank 0); size-1 dims stretch."""
    ranked = [s for s in shapes if s]
    if not ranked:
        return ()
    rank = len(ranked[0])
    if any(len(s) != rank for s in ranked):
        ranks = ", ".join(str(r) for r in sorted({len(s) for s in ranked}))
        raise TypeError(
            f"{name}: arrays must have the same number of dimensions, got {{{ranks}}} "
            "(shapes " + ", ".join(str(s) for s in shapes) + "). (Tip: jnp functions "
            "broadcast ranks; lax functions do not.)"
        )
    out = []
    for ds in zip(*ranked):
        sizes = {d for d in ds if d != 1}
        if len(sizes) > 1:
            raise TypeError(
                f"{name} got incompatible shapes for broadcasting: "
                + ", ".join(str(s) for s in shapes)
                + "."
            )
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def defunary(prim, np_fn, kinds, out_dtype=None, expr=None):
    """Register impl, abstract eval and lowering of an elementwise unary primitive."""
    name = prim.name

    def impl(x, **params):
        return [np_fn(x)]

    def abstract(x, **params):
        check_dtype(name, x.dtype, kinds)
        dtype = x.dtype if out_dtype is None else out_dtype(x.dtype)
        return [ShapedArray(x.shape, dtype, x.weak_type)], no_effects

    impl_rules[prim] = impl
    abstract_eval_rules[prim] = abstract
    if expr is not None:
        lowering_rules[prim] = inline(expr)


def defbinary(prim, np_fn, kinds, out_dtype=None, expr=None):
    """Register impl, abstract eval and lowering of an elementwise n-ary primitive whose
    operands share one dtype."""
    name = prim.name

    def impl(*args):
        return [np_fn(*args)]

    def abstract(*avals):
        # JAX's order: shapes, then each position's dtype, then sameness.
        shape = broadcast_shapes(name, *(a.shape for a in avals))
        check_operand_dtypes(name, avals, kinds)
        check_same_dtypes(name, avals)
        dtype = avals[0].dtype if out_dtype is None else out_dtype
        weak = all(a.weak_type for a in avals)
        return [ShapedArray(shape, dtype, weak)], no_effects

    impl_rules[prim] = impl
    abstract_eval_rules[prim] = abstract
    if expr is not None:
        lowering_rules[prim] = inline(expr)


# The jnp function JAX's "same dtypes" message suggests for a lax function.
_JNP_EQUIVALENT = {
    "add": "add", "sub": "subtract", "mul": "multiply", "div": "divide",
    "max": "maximum", "min": "minimum", "atan2": "arctan2", "nextafter": "nextafter",
    "eq": "equal", "ne": "not_equal", "select": "where", "shift_left": "left_shift",
    "shift_right_logical": "right_shift", "shift_right_arithmetic": "right_shift",
    "pow": "float_power", "concatenate": "concatenate",
}  # fmt: skip


def check_same_dtypes(name, avals):
    first = avals[0].dtype
    if any(a.dtype != first for a in avals[1:]):
        got = ", ".join(a.dtype.name for a in avals)
        msg = f"lax.{name} requires arguments to have the same dtypes, got {got}."
        if name in _JNP_EQUIVALENT:
            msg += (
                f" (Tip: jnp.{_JNP_EQUIVALENT[name]} is a similar function that does "
                "automatic type promotion on inputs)."
            )
        raise TypeError(msg)
