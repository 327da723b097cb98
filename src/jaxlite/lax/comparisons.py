"""Comparisons and selection: `eq`, `ne`, `lt`, `le`, `gt`, `ge` and `select_n`.

Comparisons take operands of one dtype and give bools; `eq` and `ne` take any dtype,
keys (an extended dtype) included, and the orderings only real numbers. They have no
derivative. `select_n(which, *cases)` picks `cases[which]` elementwise: linear in its
cases, with the predicate only ever a primal. The rest of the elementwise primitives
write their derivatives with these (`select(eq(x, 0), ...)`), so they sit below them.
"""

from __future__ import annotations

import numpy as np

from jaxlite.backend import lowering_rules
from jaxlite.backend.native import native_rules
from jaxlite.core import (
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    has_data,
    impl_rules,
    no_effects,
    physical_aval,
    physical_rules,
)
from jaxlite.interpreters import ad, batching, physical
from jaxlite.lax.casts import _nary
from jaxlite.lax.rules import (
    ANY,
    FLOAT,
    INT_OR_BOOL,
    broadcast_shapes,
    check_same_dtypes,
    defbinary,
)

# eq and ne take any dtype; the orderings (lt, le, gt, ge) only real numbers (jnp
# orders complex numbers lexicographically on top of them).
_ORDERED = INT_OR_BOOL + FLOAT
_COMPARE = [
    ("eq", np.equal, "np.equal({}, {})", ANY),
    ("ne", np.not_equal, "np.not_equal({}, {})", ANY),
    ("lt", np.less, "np.less({}, {})", _ORDERED),
    ("le", np.less_equal, "np.less_equal({}, {})", _ORDERED),
    ("gt", np.greater, "np.greater({}, {})", _ORDERED),
    ("ge", np.greater_equal, "np.greater_equal({}, {})", _ORDERED),
]
_compare_prims = {}
for _name, _fn, _expr, _kinds in _COMPARE:
    _compare_prims[_name] = Primitive(_name)
    defbinary(
        _compare_prims[_name], _fn, _kinds, out_dtype=np.dtype(np.bool_), expr=_expr
    )
    ad.defjvp(_compare_prims[_name], None, None)
    batching.defbroadcasting(_compare_prims[_name])
    native_rules[_compare_prims[_name]] = _name

eq_p, ne_p, lt_p, le_p, gt_p, ge_p = (
    _compare_prims[n] for n in ("eq", "ne", "lt", "le", "gt", "ge")
)


# eq and ne also compare keys (an extended dtype with data) of one dtype, as in JAX:
# two keys are equal when all their words are.


def _key_comparison(prim, reduce_name):
    numeric_abstract = abstract_eval_rules[prim]

    def abstract(*avals):
        if not any(has_data(a.dtype) for a in avals):
            return numeric_abstract(*avals)
        shape = broadcast_shapes(prim.name, *(a.shape for a in avals))
        check_same_dtypes(prim.name, avals)
        return [ShapedArray(shape, np.dtype(np.bool_))], no_effects

    def physical_rule(avals_in, avals_out, *words):
        from jaxlite.lax import reductions  # (reductions builds on this module)
        from jaxlite.lax.structural import broadcast_in_dim

        (out,) = avals_out
        shape = physical_aval(ShapedArray(out.shape, avals_in[0].dtype)).shape
        words = [
            broadcast_in_dim(w, shape, tuple(range(out.ndim, len(shape))))
            if a.ndim < out.ndim
            else w
            for w, a in zip(words, avals_in)
        ]
        same = prim.bind(*words)
        axes = tuple(range(out.ndim, len(shape)))
        return [getattr(reductions, reduce_name)(same, axes)]

    return abstract, physical_rule


abstract_eval_rules[eq_p], physical_rules[eq_p] = _key_comparison(eq_p, "reduce_and")
abstract_eval_rules[ne_p], physical_rules[ne_p] = _key_comparison(ne_p, "reduce_or")


# ----------------------------------------------------------------------------------------
# select_n(which, *cases): cases[which], elementwise


def _select_n_impl(which, *cases):
    which = np.asarray(which)
    if len(cases) == 1:
        return [cases[0]]
    if which.dtype == np.bool_:
        return [np.where(which, cases[1], cases[0])]
    return [np.choose(which, cases, mode="clip")]


def _select_n_abstract(which, *cases):
    # Named `select` in messages, as JAX: shapes first, then dtypes.
    if not cases:
        raise TypeError("select must have at least one case")
    first = cases[0]
    if any(c.shape != first.shape for c in cases[1:]):
        raise TypeError(
            "select cases must have the same shapes, got ["
            + ", ".join(str(c.shape) for c in cases)
            + "]. (Broadcast them first, e.g. with jnp.where.)"
        )
    if which.shape and which.shape != first.shape:
        raise TypeError(
            "select `which` must be scalar or have the same shape as cases, got "
            f"`which` shape {which.shape} but case shape {first.shape}."
        )
    check_same_dtypes("select", cases)
    if which.dtype != np.bool_ and not np.issubdtype(which.dtype, np.integer):
        raise TypeError(
            f"select `which` must be boolean or integer type, got {which.dtype}."
        )
    if which.dtype == np.bool_ and len(cases) > 2:
        raise TypeError("select with boolean `which` cannot have > 2 cases.")
    weak = all(c.weak_type for c in cases)
    return [ShapedArray(first.shape, first.dtype, weak)], no_effects


def _select_n_lowering(ctx, which, *cases):
    if len(cases) == 2:
        return f"np.where({which}, {cases[1]}, {cases[0]})"
    return f"np.choose({which}, [{', '.join(cases)}], mode='clip')"


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    case_tangents = tangents[1:]
    out = select_n_p.bind(which, *cases)
    if all(type(t) is ad.Zero for t in case_tangents):
        return [out], [ad.Zero(ad.tangent_aval(out.aval))]
    case_tangents = [ad.instantiate(t) for t in case_tangents]
    return [out], [select_n_p.bind(which, *case_tangents)]


def _select_n_transpose(ct, which, *cases):
    if ad.is_undefined(which):
        raise NotImplementedError("select_n is not linear in its predicate")
    if type(ct) is ad.Zero:
        return [None] * (1 + len(cases))
    zeros = full_of(ct, 0)
    cts = [None]
    for i, case in enumerate(cases):
        if not ad.is_undefined(case):
            cts.append(None)
            continue
        branches = [zeros] * len(cases)
        branches[i] = ct
        cts.append(select_n_p.bind(which, *branches))
    return cts


def _select_n_batch(axis_size, vals, dims):
    from jaxlite.lax.structural import broadcast_in_dim

    if dims[0] is batching.not_mapped and np.ndim(vals[0]) == 0:
        cases = [
            batching.bdim_at_front(c, d, axis_size) for c, d in zip(vals[1:], dims[1:])
        ]
        return [select_n_p.bind(vals[0], *cases)], [0]
    which, *cases = (
        batching.bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims)
    )
    shape = np.shape(cases[0])
    if np.shape(which) != shape:
        which = broadcast_in_dim(which, shape, tuple(range(np.ndim(which))))
    return [select_n_p.bind(which, *cases)], [0]


select_n_p = Primitive("select_n")
ad.jvp_rules[select_n_p] = _select_n_jvp
ad.transpose_rules[select_n_p] = _select_n_transpose
batching.batch_rules[select_n_p] = _select_n_batch
physical_rules[select_n_p] = physical.by_elements(select_n_p)
impl_rules[select_n_p] = _select_n_impl
abstract_eval_rules[select_n_p] = _select_n_abstract
lowering_rules[select_n_p] = _select_n_lowering
native_rules[select_n_p] = "select_n"


def full_of(ref, value):
    from jaxlite.lax.constructors import full_like

    return full_like(ref, value)


# ----------------------------------------------------------------------------------------
# Public lax functions

eq, ne, lt, le, gt, ge = (_nary(p) for p in (eq_p, ne_p, lt_p, le_p, gt_p, ge_p))


def select_n(which, *cases):
    if not cases:
        raise ValueError(
            "select_n() must have at least one case: pass the arrays to choose from "
            "after `which`."
        )
    return select_n_p.bind(which, *cases)


def select(pred, on_true, on_false):
    return select_n_p.bind(pred, on_false, on_true)
