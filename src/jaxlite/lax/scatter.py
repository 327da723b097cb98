"""The scatter family: scatter (replace), scatter-add, -sub, -mul, -min and -max.

XLA's scatter with JAX's names, parameters and printed form, so `x.at[idx].add(y)`
stages as the same jaxpr it does in JAX. Each index vector (the last axis of the
indices) gives the start of one update window. Windows that are not fully inside the
operand are dropped (FILL_OR_DROP, JAX's default for scatters, and PROMISE_IN_BOUNDS)
or clamped (CLIP). Repeated indices apply in order: `scatter-add` behaves like
`np.add.at`, and in a `scatter` the last write wins. One implementation, on NumPy
fancy indexing, serves every primitive through its combiner (`np.add.at`, ...); the
common scatter into whole sub-arrays has a fast path.

Derivatives. scatter-add and scatter-sub are linear in the operand and the updates
together; their transpose reads the cotangent back with the gather that undoes the
scatter. A scatter (replace) is linear too: its tangent is the scatter of the
tangents, which picks the same winner among repeated indices as the primal does, since
the implementation is deterministic. Its transpose zeroes the written positions for
the operand and gathers them for the updates, keeping only the update that won
(found by scattering update ids and reading them back). scatter-mul is linear in the
operand; in the updates its tangent uses, for each update, the product of the other
updates landing on the same element. scatter-min and -max share the derivative among
tied values, as `reduce_max` does. Batching makes the batch axis a window dimension
(indices not batched) or an operand batching dimension (indices batched).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from jaxlite.backend.native import native_rules
from jaxlite.core import (
    Array,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    eval_jaxpr,
    eval_trace,
    impl_rules,
    no_effects,
    physical_rules,
    set_current_trace,
)
from jaxlite.interpreters import ad, batching, physical
from jaxlite.interpreters.batching import not_mapped
from jaxlite.lax import elementwise as ew
from jaxlite.lax.constructors import full
from jaxlite.lax.indexing import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
    _check_batching,
    _check_dims,
    _in_bounds,
    _is_int_dtype,
    _shifted,
    _tuple_fields,
    _window_coords,
    _window_starts,
    gather_p,
)
from jaxlite.lax.structural import broadcast_in_dim, canonicalize_shape, operand

__all__ = [
    "scatter",
    "scatter_add",
    "scatter_add_p",
    "scatter_apply",
    "scatter_max",
    "scatter_max_p",
    "scatter_min",
    "scatter_min_p",
    "scatter_mul",
    "scatter_mul_p",
    "scatter_p",
    "scatter_sub",
    "scatter_sub_p",
]


# ----------------------------------------------------------------------------------------
# Implementation and abstract evaluation, shared by the whole family


def _scatter_targets(x_shape, indices, updates, dn, mode):
    """Flat operand positions and the matching update values, in update order, of the
    update windows kept by `mode`."""
    batch_shape = indices.shape[:-1]
    n = int(np.prod(batch_shape, dtype=np.int64))
    idx = indices.reshape(n, indices.shape[-1]).astype(np.int64)
    ndim = len(x_shape)
    window = [1] * ndim
    not_window = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    window_dims = [d for d in range(ndim) if d not in not_window]
    for od, ud in zip(window_dims, dn.update_window_dims):
        window[od] = updates.shape[ud]
    scatter_dims = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
    upd = np.transpose(updates, scatter_dims + list(dn.update_window_dims))
    upd = upd.reshape((idx.shape[0],) + tuple(window))
    starts = _window_starts(
        idx,
        batch_shape,
        ndim,
        dn.scatter_dims_to_operand_dims,
        dn.operand_batching_dims,
        dn.scatter_indices_batching_dims,
    )
    upper = np.asarray(x_shape, np.int64) - np.asarray(window, np.int64)
    if mode is GatherScatterMode.CLIP:
        starts = np.clip(starts, 0, np.maximum(upper, 0))
    else:
        keep = _in_bounds(starts, upper)
        starts, upd = starts[keep], upd[keep]
    coords = _window_coords(starts, window)
    if not coords:
        flat = np.zeros(upd.shape, np.int64)
    else:
        flat = np.ravel_multi_index(np.broadcast_arrays(*coords), x_shape)
    return flat.reshape(-1), upd.reshape(-1)


def _scatter_impl_with(combine):
    def impl(
        x,
        indices,
        updates,
        *,
        dimension_numbers,
        indices_are_sorted,
        mode,
        unique_indices,
        update_consts,
        update_jaxpr,
    ):
        x, indices, updates = np.asarray(x), np.asarray(indices), np.asarray(updates)
        out = np.array(x, copy=True)
        dn = dimension_numbers
        if update_jaxpr is None or combine is not None:
            rows = _scatter_rows(x.shape, indices, updates, dn, mode)
            if rows is not None:
                index_map = tuple(dn.scatter_dims_to_operand_dims)
                front = tuple(range(len(index_map)))
                moved = out
                if index_map != front:
                    moved = np.moveaxis(out, index_map, front)
                if combine is None:
                    moved[rows[0]] = rows[1]
                else:
                    combine.at(moved, rows[0], rows[1])
                return [out]
        flat, vals = _scatter_targets(x.shape, indices, updates, dn, mode)
        out = out.reshape(-1)
        if combine is not None:
            combine.at(out, flat, vals)
        elif update_jaxpr is not None:
            _apply_in_order(out, flat, vals, update_jaxpr, update_consts)
        else:
            out[flat] = vals
        return [out.reshape(x.shape)]

    return impl


def _scatter_rows(shape, indices, updates, dn, mode):
    """The common scatter into whole sub-arrays (indexed dims inserted, the others
    covered whole): NumPy fancy indexing over the indexed dims moved to the front.
    Returns (index tuple, updates), or None when the scatter has another form."""
    index_map = dn.scatter_dims_to_operand_dims
    if not index_map or dn.operand_batching_dims:
        return None
    if set(dn.inserted_window_dims) != set(index_map):
        return None
    rest = [d for d in range(len(shape)) if d not in index_map]
    if [updates.shape[d] for d in dn.update_window_dims] != [shape[d] for d in rest]:
        return None
    n = math.prod(indices.shape[:-1])
    idx = indices.reshape(n, len(index_map)).astype(np.int64, copy=False)
    scatter_dims = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
    perm = scatter_dims + list(dn.update_window_dims)
    upd = updates if perm == sorted(perm) else np.transpose(updates, perm)
    upd = upd.reshape((n,) + tuple(shape[d] for d in rest))
    upper = np.asarray([shape[d] for d in index_map], np.int64) - 1
    if mode is GatherScatterMode.CLIP:
        idx = np.clip(idx, 0, upper)
    else:
        keep = ((idx >= 0) & (idx <= upper)).all(axis=1)
        if not keep.all():
            idx, upd = idx[keep], upd[keep]
    return tuple(idx[:, k] for k in range(len(index_map))), upd


def _occurrence_rank(flat):
    """For each position in `flat`, how many earlier entries name the same element."""
    order = np.argsort(flat, kind="stable")
    sorted_flat = flat[order]
    starts = np.r_[0, np.flatnonzero(sorted_flat[1:] != sorted_flat[:-1]) + 1]
    group_start = np.repeat(starts, np.diff(np.r_[starts, len(flat)]))
    rank = np.empty_like(flat)
    rank[order] = np.arange(len(flat)) - group_start
    return rank


def _apply_in_order(out, flat, vals, update_jaxpr, update_consts):
    """Run the scalar combiner `update_jaxpr(old, update)` elementwise, repeated indices
    one after another (as XLA applies them)."""
    if not len(flat):
        return
    rank = _occurrence_rank(flat)
    with set_current_trace(eval_trace):
        for r in range(int(rank.max()) + 1):
            sel = rank == r
            pos = flat[sel]
            (new,) = eval_jaxpr(
                update_jaxpr, update_consts, Array(out[pos]), Array(vals[sel])
            )
            out[pos] = ew.convert_value(np.asarray(new), out.dtype)


def _scatter_abstract(
    x,
    indices,
    updates,
    *,
    dimension_numbers,
    indices_are_sorted,
    mode,
    unique_indices,
    update_consts,
    update_jaxpr,
):
    dn = dimension_numbers
    if updates.dtype != x.dtype:
        raise TypeError(
            "lax.scatter requires arguments to have the same dtypes, got "
            f"{x.dtype.name}, {updates.dtype.name}."
        )
    if not _is_int_dtype(indices.dtype):
        raise ValueError(
            f"scatter indices must have an integer type, got {indices.dtype.name}"
        )
    if indices.ndim < 1:
        raise TypeError(
            "scatter indices must have at least one dimension (the index vector is "
            f"the last), got shape {indices.shape}"
        )
    batch_shape = indices.shape[:-1]
    expected_rank = len(dn.update_window_dims) + len(batch_shape)
    if updates.ndim != expected_rank:
        raise TypeError(
            f"Updates tensor must be of rank {expected_rank}; got {updates.ndim}."
        )
    _check_dims("scatter", "update_window_dims", dn.update_window_dims, updates.ndim)
    _check_dims("scatter", "inserted_window_dims", dn.inserted_window_dims, x.ndim)
    _check_dims("scatter", "operand_batching_dims", dn.operand_batching_dims, x.ndim)
    _check_dims(
        "scatter",
        "scatter_dims_to_operand_dims",
        dn.scatter_dims_to_operand_dims,
        x.ndim,
        sort=False,
    )
    _check_dims(
        "scatter",
        "scatter_indices_batching_dims",
        dn.scatter_indices_batching_dims,
        len(batch_shape),
        sort=False,
    )
    _check_batching(
        "Scatter",
        x,
        indices,
        dn.operand_batching_dims,
        dn.scatter_indices_batching_dims,
        "scatter_indices",
    )
    window_size = (
        len(dn.update_window_dims)
        + len(dn.inserted_window_dims)
        + len(dn.operand_batching_dims)
    )
    if window_size != x.ndim:
        raise TypeError(
            f"Scatter op has window of size {window_size}; doesn't match operand of "
            f"rank {x.ndim}."
        )
    if len(dn.scatter_dims_to_operand_dims) != indices.shape[-1]:
        raise TypeError(
            f"Scatter op has {len(dn.scatter_dims_to_operand_dims)} elements in "
            "scatter_dims_to_operand_dims and the bound of dimension "
            f"index_vector_dim={len(batch_shape)} of indices is {indices.shape[-1]}. "
            "These two numbers must be equal."
        )
    not_window = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    window_dims = [d for d in range(x.ndim) if d not in not_window]
    for od, ud in zip(window_dims, dn.update_window_dims):
        if updates.shape[ud] > x.shape[od]:
            raise TypeError(
                "Bounds of the window dimensions of updates must not exceed the bounds "
                f"of the corresponding dimensions of operand. For dimension {ud}, "
                f"updates bound is {updates.shape[ud]}, operand bound is "
                f"{x.shape[od]}."
            )
    scatter_sizes = tuple(
        n for d, n in enumerate(updates.shape) if d not in dn.update_window_dims
    )
    if scatter_sizes != batch_shape:
        raise TypeError(
            "Bounds of the scatter dimensions of updates must be the same as the bounds "
            f"of the corresponding dimensions of scatter indices; got update scatter "
            f"dimensions {scatter_sizes} and scatter indices batch shape {batch_shape}."
        )
    return [ShapedArray(x.shape, x.dtype, x.weak_type)], no_effects


@functools.cache
def _combiner_jaxpr(prim, dtype):
    """The jaxpr of the scalar combiner `prim(old, update)`: the `update_jaxpr` param."""
    from jaxlite.interpreters.partial_eval import trace_to_jaxpr

    aval = ShapedArray((), dtype)
    closed = trace_to_jaxpr(lambda a, b: [prim.bind(a, b)], [aval, aval])
    return closed.jaxpr, tuple(closed.consts)


def _public_scatter(prim, name, combiner_prim, doc):
    """The public lax function of the scatter primitive `prim`."""

    def fun(
        operand_,
        scatter_indices,
        updates,
        dimension_numbers,
        *,
        indices_are_sorted=False,
        unique_indices=False,
        mode=None,
    ):
        x, indices, upd = map(operand, (operand_, scatter_indices, updates))
        params = dict(
            dimension_numbers=_tuple_fields(dimension_numbers),
            indices_are_sorted=bool(indices_are_sorted),
            mode=GatherScatterMode.from_any(mode),
            unique_indices=bool(unique_indices),
        )
        params = _with_combiner(combiner_prim, x.dtype, params)
        return prim.bind(x, indices, upd, **params)

    fun.__name__ = fun.__qualname__ = name
    fun.__doc__ = doc + _SCATTER_DOC
    return fun


_SCATTER_DOC = """

    Each index vector (last axis of `scatter_indices`) gives the start of one update
    window. `mode=None` ('drop') drops windows that do not fit in the operand; 'clip'
    clamps their starts."""


# ----------------------------------------------------------------------------------------
# Helpers of the derivative rules


def _with_combiner(combiner_prim, dtype, params):
    """Scatter `params` with the `update_jaxpr` of `combiner_prim` (None: replace)."""
    if combiner_prim is None:
        jaxpr, consts = None, ()
    else:
        jaxpr, consts = _combiner_jaxpr(combiner_prim, np.dtype(dtype))
    return dict(params, update_consts=consts, update_jaxpr=jaxpr)


def _add_windows(x, indices, updates, params):
    """`x` plus the update windows, scattered as `params` (of any scatter) place them."""
    add_params = _with_combiner(ew.add_p, x.dtype, params)
    return scatter_add_p.bind(x, indices, updates, **add_params)


def _gather_windows(x, indices, updates_shape, params):
    """The elements of `x` under a scatter's update windows, shaped like its updates:
    the gather that a scatter transposes to. In FILL_OR_DROP mode the windows the
    scatter drops read 0."""
    dn = params["dimension_numbers"]
    mode = params["mode"]
    not_window = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    window_sizes = iter(updates_shape[d] for d in dn.update_window_dims)
    sizes = tuple(
        1 if d in not_window else next(window_sizes) for d in range(np.ndim(x))
    )
    dnums = GatherDimensionNumbers(
        offset_dims=dn.update_window_dims,
        collapsed_slice_dims=dn.inserted_window_dims,
        start_index_map=dn.scatter_dims_to_operand_dims,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.scatter_indices_batching_dims,
    )
    return gather_p.bind(
        x,
        indices,
        dimension_numbers=dnums,
        fill_value=0 if mode is GatherScatterMode.FILL_OR_DROP else None,
        indices_are_sorted=params["indices_are_sorted"],
        mode=mode,
        slice_sizes=sizes,
        unique_indices=params["unique_indices"],
    )


def _winning_updates(x_shape, indices, updates_shape, params):
    """Which update elements a scatter (replace) keeps, as a bool array shaped like the
    updates: every update window gets an id, the ids are scattered like the updates,
    and an update element wins where its own id is read back."""
    dn = params["dimension_numbers"]
    id_shape = tuple(
        1 if d in dn.update_window_dims else n for d, n in enumerate(updates_shape)
    )
    count = int(np.prod(id_shape, dtype=np.int64))
    ids = Array(np.arange(1, count + 1, dtype=np.int32).reshape(id_shape))
    ids = broadcast_in_dim(ids, updates_shape, tuple(range(len(updates_shape))))
    zeros = full(x_shape, 0, np.int32)
    scattered = scatter_p.bind(
        zeros, indices, ids, **_with_combiner(None, np.int32, params)
    )
    return ew.eq(_gather_windows(scattered, indices, updates_shape, params), ids)


def _updates_shape(updates):
    return updates.aval.shape if ad.is_undefined(updates) else np.shape(updates)


def _scatter_linear_jvp(prim):
    """JVP of a scatter linear in the operand and the updates together."""

    def jvp(primals, tangents, **params):
        x, indices, updates = primals
        t_x, _, t_updates = tangents
        out = prim.bind(x, indices, updates, **params)
        if type(t_x) is ad.Zero and type(t_updates) is ad.Zero:
            return [out], [ad.Zero.from_primal_value(out)]
        t_x, t_updates = ad.instantiate(t_x), ad.instantiate(t_updates)
        return [out], [prim.bind(t_x, indices, t_updates, **params)]

    return jvp


def scatter_batch_rule(prim):
    """Batching rule of a scatter primitive: the batch axis of the operand and the
    updates goes to the front; it is one more window dimension when the indices are
    not batched, and an operand batching dimension when they are."""

    def rule(axis_size, vals, dims, *, dimension_numbers, **params):
        x, indices, updates = vals
        x_dim, indices_dim, updates_dim = dims
        x = batching.bdim_at_front(x, x_dim, axis_size)
        updates = batching.bdim_at_front(updates, updates_dim, axis_size)
        dn = dimension_numbers
        if indices_dim is not_mapped:
            dnums = ScatterDimensionNumbers(
                update_window_dims=(0, *_shifted(dn.update_window_dims)),
                inserted_window_dims=_shifted(dn.inserted_window_dims),
                scatter_dims_to_operand_dims=_shifted(dn.scatter_dims_to_operand_dims),
                operand_batching_dims=_shifted(dn.operand_batching_dims),
                scatter_indices_batching_dims=dn.scatter_indices_batching_dims,
            )
        else:
            indices = batching.moveaxis(indices, indices_dim, 0)
            dnums = ScatterDimensionNumbers(
                update_window_dims=_shifted(dn.update_window_dims),
                inserted_window_dims=_shifted(dn.inserted_window_dims),
                scatter_dims_to_operand_dims=_shifted(dn.scatter_dims_to_operand_dims),
                operand_batching_dims=(0, *_shifted(dn.operand_batching_dims)),
                scatter_indices_batching_dims=(
                    0,
                    *_shifted(dn.scatter_indices_batching_dims),
                ),
            )
        out = prim.bind(x, indices, updates, dimension_numbers=dnums, **params)
        return [out], [0]

    return rule


# ----------------------------------------------------------------------------------------
# scatter: replace


def _no_scatter_apply_derivative(params):
    if params["update_jaxpr"] is not None:
        raise NotImplementedError(
            "Differentiation of lax.scatter_apply is not implemented (as in JAX): the "
            "scatter applies a function to the operand. Differentiate "
            "`x.at[idx].set(func(x[idx]))` instead."
        )


def _scatter_jvp(primals, tangents, **params):
    _no_scatter_apply_derivative(params)
    return _scatter_linear_jvp(scatter_p)(primals, tangents, **params)


def _scatter_transpose(ct, x, indices, updates, **params):
    _no_scatter_apply_derivative(params)
    assert not ad.is_undefined(indices)
    if type(ct) is ad.Zero:
        return [None, None, None]
    updates_shape = _updates_shape(updates)
    ct_x = ct_updates = None
    if ad.is_undefined(x):
        zeros = full(updates_shape, 0, ct.dtype)
        ct_x = scatter_p.bind(ct, indices, zeros, **params)
    if ad.is_undefined(updates):
        ct_updates = _gather_windows(ct, indices, updates_shape, params)
        if not params["unique_indices"]:
            wins = _winning_updates(np.shape(ct), indices, updates_shape, params)
            ct_updates = ew.select(wins, ct_updates, full(updates_shape, 0, ct.dtype))
    return [ct_x, None, ct_updates]


scatter_p = Primitive("scatter")
impl_rules[scatter_p] = _scatter_impl_with(None)
abstract_eval_rules[scatter_p] = _scatter_abstract
native_rules[scatter_p] = "scatter"
ad.jvp_rules[scatter_p] = _scatter_jvp
ad.transpose_rules[scatter_p] = _scatter_transpose
batching.batch_rules[scatter_p] = scatter_batch_rule(scatter_p)
physical_rules[scatter_p] = physical.by_elements(scatter_p)
scatter = _public_scatter(
    scatter_p,
    "scatter",
    None,
    "XLA's scatter with replacement (with repeated indices the last write wins).",
)


# ----------------------------------------------------------------------------------------
# scatter-add and scatter-sub: linear


def _scatter_add_transpose_rule(negate):
    def transpose(ct, x, indices, updates, **params):
        assert not ad.is_undefined(indices)
        if type(ct) is ad.Zero:
            return [None, None, None]
        ct_x = ct if ad.is_undefined(x) else None
        ct_updates = None
        if ad.is_undefined(updates):
            ct_updates = _gather_windows(ct, indices, updates.aval.shape, params)
            if negate:
                ct_updates = ew.neg(ct_updates)
        return [ct_x, None, ct_updates]

    return transpose


scatter_add_p = Primitive("scatter-add")
impl_rules[scatter_add_p] = _scatter_impl_with(np.add)
abstract_eval_rules[scatter_add_p] = _scatter_abstract
native_rules[scatter_add_p] = "scatter_add"
ad.jvp_rules[scatter_add_p] = _scatter_linear_jvp(scatter_add_p)
ad.transpose_rules[scatter_add_p] = _scatter_add_transpose_rule(negate=False)
batching.batch_rules[scatter_add_p] = scatter_batch_rule(scatter_add_p)
scatter_add = _public_scatter(
    scatter_add_p,
    "scatter_add",
    ew.add_p,
    "Scatter that adds each update window into the operand (repeats accumulate).",
)

scatter_sub_p = Primitive("scatter-sub")
impl_rules[scatter_sub_p] = _scatter_impl_with(np.subtract)
abstract_eval_rules[scatter_sub_p] = _scatter_abstract
native_rules[scatter_sub_p] = "scatter_sub"
ad.jvp_rules[scatter_sub_p] = _scatter_linear_jvp(scatter_sub_p)
ad.transpose_rules[scatter_sub_p] = _scatter_add_transpose_rule(negate=True)
batching.batch_rules[scatter_sub_p] = scatter_batch_rule(scatter_sub_p)
scatter_sub = _public_scatter(
    scatter_sub_p,
    "scatter_sub",
    ew.sub_p,
    "Scatter that subtracts each update window from the operand.",
)


# ----------------------------------------------------------------------------------------
# scatter-mul: linear in the operand


def _product_of_others(x_shape, indices, updates, params):
    """For each update element, the product of the other updates landing on the same
    operand element (as in `reduce_prod`'s derivative: with one zero among them only
    the zero's entry is non-zero, with two or more all are zero). Its own derivative is
    exact away from zero updates; at a zero update the select picks a constant branch,
    so second derivatives there miss the terms through the other updates. JAX has no
    such rule: it refuses scatter-mul gradients without `unique_indices=True`."""
    dtype = np.dtype(updates.dtype)
    shape = np.shape(updates)
    zeros, ones = full(shape, 0, dtype), full(shape, 1, dtype)
    is_zero = ew.eq(updates, zeros)
    safe = ew.select(is_zero, ones, updates)
    nonzero_prod = scatter_mul_p.bind(full(x_shape, 1, dtype), indices, safe, **params)
    zero_count = _add_windows(
        full(x_shape, 0, np.int32),
        indices,
        ew.convert_element_type(is_zero, np.int32),
        params,
    )
    prod_at = _gather_windows(nonzero_prod, indices, shape, params)
    count_at = _gather_windows(zero_count, indices, shape, params)
    no_zero = ew.div(prod_at, safe)
    one_zero = ew.select(is_zero, prod_at, zeros)
    int_shape = np.shape(count_at)
    more = ew.select(ew.eq(count_at, full(int_shape, 1, np.int32)), one_zero, zeros)
    return ew.select(ew.eq(count_at, full(int_shape, 0, np.int32)), no_zero, more)


def _scatter_mul_jvp(primals, tangents, **params):
    # out = x * (the product of the updates landing on each element).
    x, indices, updates = primals
    t_x, _, t_updates = tangents
    out = scatter_mul_p.bind(x, indices, updates, **params)
    t_out = ad.Zero.from_primal_value(out)
    if type(t_x) is not ad.Zero:
        t_out = scatter_mul_p.bind(t_x, indices, updates, **params)
    if type(t_updates) is not ad.Zero:
        if not params["unique_indices"]:
            others = _product_of_others(np.shape(x), indices, updates, params)
            t_updates = ew.mul(t_updates, others)
        zeros = full(np.shape(x), 0, np.dtype(x.dtype))
        spread = _add_windows(zeros, indices, t_updates, params)
        t_out = ad.add_tangents(t_out, ew.mul(x, spread))
    return [out], [t_out]


def _scatter_mul_transpose(ct, x, indices, updates, **params):
    if ad.is_undefined(updates):
        raise NotImplementedError(
            "scatter-mul is not linear in its updates, so it has no transpose for "
            "them; only the operand may be a linear argument."
        )
    if type(ct) is ad.Zero or not ad.is_undefined(x):
        return [None, None, None]
    return [scatter_mul_p.bind(ct, indices, updates, **params), None, None]


scatter_mul_p = Primitive("scatter-mul")
impl_rules[scatter_mul_p] = _scatter_impl_with(np.multiply)
abstract_eval_rules[scatter_mul_p] = _scatter_abstract
native_rules[scatter_mul_p] = "scatter_mul"
ad.jvp_rules[scatter_mul_p] = _scatter_mul_jvp
ad.transpose_rules[scatter_mul_p] = _scatter_mul_transpose
batching.batch_rules[scatter_mul_p] = scatter_batch_rule(scatter_mul_p)
scatter_mul = _public_scatter(
    scatter_mul_p,
    "scatter_mul",
    ew.mul_p,
    "Scatter that multiplies the operand by each update window.",
)


# ----------------------------------------------------------------------------------------
# scatter-min and scatter-max: the tangent is the mean of the tangents of the values
# that attain the result (the operand's and the updates'), as in JAX


def _scatter_extremum_jvp(prim):
    def jvp(primals, tangents, **params):
        x, indices, updates = primals
        t_x, _, t_updates = tangents
        out = prim.bind(x, indices, updates, **params)
        if type(t_x) is ad.Zero and type(t_updates) is ad.Zero:
            return [out], [ad.Zero.from_primal_value(out)]
        t_x, t_updates = ad.instantiate(t_x), ad.instantiate(t_updates)
        dtype = np.dtype(out.dtype)
        shape = np.shape(updates)
        out_at = _gather_windows(out, indices, shape, params)
        updates_win = ew.convert_element_type(ew.eq(updates, out_at), dtype)
        x_wins = ew.convert_element_type(ew.eq(x, out), dtype)
        zeros = full(np.shape(x), 0, dtype)
        count = ew.add(x_wins, _add_windows(zeros, indices, updates_win, params))
        spread = _add_windows(zeros, indices, ew.mul(t_updates, updates_win), params)
        total = ew.add(ew.mul(t_x, x_wins), spread)
        return [out], [ew.div(total, count)]

    return jvp


scatter_min_p = Primitive("scatter-min")
impl_rules[scatter_min_p] = _scatter_impl_with(np.minimum)
abstract_eval_rules[scatter_min_p] = _scatter_abstract
native_rules[scatter_min_p] = "scatter_min"
ad.jvp_rules[scatter_min_p] = _scatter_extremum_jvp(scatter_min_p)
batching.batch_rules[scatter_min_p] = scatter_batch_rule(scatter_min_p)
scatter_min = _public_scatter(
    scatter_min_p,
    "scatter_min",
    ew.min_p,
    "Scatter that keeps the elementwise minimum of the operand and the updates.",
)

scatter_max_p = Primitive("scatter-max")
impl_rules[scatter_max_p] = _scatter_impl_with(np.maximum)
abstract_eval_rules[scatter_max_p] = _scatter_abstract
native_rules[scatter_max_p] = "scatter_max"
ad.jvp_rules[scatter_max_p] = _scatter_extremum_jvp(scatter_max_p)
batching.batch_rules[scatter_max_p] = scatter_batch_rule(scatter_max_p)
scatter_max = _public_scatter(
    scatter_max_p,
    "scatter_max",
    ew.max_p,
    "Scatter that keeps the elementwise maximum of the operand and the updates.",
)


def scatter_apply(
    operand_,
    scatter_indices,
    func,
    dimension_numbers,
    *,
    update_shape=(),
    indices_are_sorted=False,
    unique_indices=False,
    mode=None,
):
    """Apply the unary `func` to the operand elements that the windows (of
    `update_shape`) cover; an element covered twice gets `func` twice."""
    from jaxlite.interpreters.partial_eval import trace_to_jaxpr

    x, indices = operand(operand_), operand(scatter_indices)
    dtype = np.dtype(x.dtype)
    unused = full(canonicalize_shape(update_shape), 0, dtype)
    aval = ShapedArray((), dtype)
    closed = trace_to_jaxpr(lambda a, _: [func(a)], [aval, aval])
    params = dict(
        dimension_numbers=_tuple_fields(dimension_numbers),
        indices_are_sorted=bool(indices_are_sorted),
        mode=GatherScatterMode.from_any(mode),
        unique_indices=bool(unique_indices),
        update_consts=tuple(closed.consts),
        update_jaxpr=closed.jaxpr,
    )
    return scatter_p.bind(x, indices, unused, **params)
