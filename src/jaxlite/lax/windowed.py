"""Reductions over sliding windows (`reduce_window` and its sum / max / min forms, the
pooling layers of neural networks) and reductions with a user's computation
(`lax.reduce`).

A window reduction pads (and "base"-dilates) its operand with the reduction's
identity, takes every window of `window_dimensions` (dilated by `window_dilation`)
at `window_strides`, and reduces it. NumPy evaluates the sum, max and min forms on a
strided view of all windows at once (`convolution.window_view`).

Derivatives. The windowed sum is linear; its transpose spreads each cotangent back
over its window, which is again a windowed sum of the cotangent, dilated by the
strides and padded. The max (min) passes on the tangent at the position its window
selected: `select_and_gather_add` gathers it, and its transpose
`select_and_scatter_add` adds each cotangent back at that position; the two are each
other's transposes, as in JAX, so max pooling has derivatives of every order.

A Python `computation` (anything other than add, max and min with their identities)
is traced to a scalar jaxpr and held by the `reduce_window` and `reduce` primitives.
They are evaluated with lax operations: the windows (or the reduced axes) are laid
along one axis and folded in a balanced tree of pairwise combinations of neighbours,
each combination being the computation vectorised over all positions at once. The
order of operands is kept, so an associative computation gives the sequential
result. The JVP differentiates that same expression, so forward and reverse mode
both work (JAX has forward mode only for a general `reduce_window`).
"""

from __future__ import annotations

import operator

import numpy as np

from jaxlite import dtypes, tree_util
from jaxlite.core import (
    Array,
    ClosedJaxpr,
    Jaxpr,
    Primitive,
    ShapedArray,
    Tracer,
    abstract_eval_rules,
    eval_trace,
    get_aval,
    impl_rules,
    jaxpr_as_fun,
    no_effects,
    set_current_trace,
)
from jaxlite.interpreters import ad, batching
from jaxlite.interpreters.batching import not_mapped
from jaxlite.lax import control_flow as cf
from jaxlite.lax import elementwise as ew
from jaxlite.lax import reductions
from jaxlite.lax.convolution import (
    dilate_dim,
    pad_value,
    padtype_to_pads,
    window_view,
)
from jaxlite.lax.indexing import slice as lax_slice
from jaxlite.lax.structural import (
    broadcast_in_dim,
    concatenate,
    operand,
    pad,
    reshape,
    squeeze,
    transpose,
)
from jaxlite.util import prod

__all__ = [
    "reduce_window",
    "reduce_window_shape_tuple",
    "reduce_window_p",
    "reduce_window_sum_p",
    "reduce_window_max_p",
    "reduce_window_min_p",
    "select_and_gather_add_p",
    "select_and_scatter_add_p",
    "reduce",
    "reduce_p",
]

# --------------------------------------------------------------------------------------
# Shapes


def _check_shapelike(what, values, positive):
    bad = [v for v in values if (v <= 0 if positive else v < 0)]
    if bad:
        which = "be strictly positive" if positive else "be nonnegative"
        raise TypeError(
            f"reduce_window {what} must have every element {which}, got {values}."
        )


def reduce_window_shape_tuple(
    operand_shape,
    window_dimensions,
    window_strides,
    padding,
    base_dilation=None,
    window_dilation=None,
):
    """The output shape of a window reduction (explicit `padding` pairs)."""
    if base_dilation is not None:
        operand_shape = [dilate_dim(n, d) for n, d in zip(operand_shape, base_dilation)]
    if window_dilation is not None:
        window_dimensions = [
            dilate_dim(w, d) for w, d in zip(window_dimensions, window_dilation)
        ]
    out = []
    for n, w, s, (lo, hi) in zip(
        operand_shape, window_dimensions, window_strides, padding
    ):
        out.append(max((int(n) + lo + hi - int(w)) // int(s) + 1, 0))
    return tuple(out)


def _window_shape(x, params):
    """Check the window parameters against operand aval `x`; the output shape."""
    wd, ws = params["window_dimensions"], params["window_strides"]
    bd, wdil = params["base_dilation"], params["window_dilation"]
    _check_shapelike("window_dimensions", wd, True)
    _check_shapelike("window_strides", ws, True)
    for dilation in (bd, wdil):
        if any(d <= 0 for d in dilation):
            raise TypeError(f"All dilations must be positive, got {dilation}.")
    if len(x.shape) != len(wd):
        raise TypeError(
            "reduce_window got the wrong number of window_dimensions for operand: got "
            f"operand shape {x.shape} with window_dimensions {wd}."
        )
    for name, value in (
        ("window_strides", ws),
        ("base_dilation", bd),
        ("window_dilation", wdil),
        ("padding", params["padding"]),
    ):
        if len(value) != len(wd):
            raise TypeError(
                f"reduce_window got inconsistent {name} and window_dimensions: got "
                f"{name} {value} and window_dimensions {wd}."
            )
    return reduce_window_shape_tuple(x.shape, wd, ws, params["padding"], bd, wdil)


def _padding_config(params):
    return [
        (lo, hi, d - 1)
        for (lo, hi), d in zip(params["padding"], params["base_dilation"])
    ]


def _windows(x, fill, params):
    """All windows of NumPy value `x` padded and base-dilated with `fill`: an array of
    shape (output shape..., window size), or None if there are no windows."""
    padded = pad_value(x, np.asarray(fill, x.dtype), _padding_config(params))
    axes = tuple(range(x.ndim))
    view = window_view(
        padded,
        axes,
        params["window_dimensions"],
        params["window_strides"],
        params["window_dilation"],
    )
    if view is None:
        return None
    return view.reshape(*view.shape[: x.ndim], -1)


def _batch_window_params(params, bdim):
    """The window parameters of the same reduction with a batch axis at `bdim`: a
    window of size 1 there."""

    def insert(seq, value):
        seq = list(seq)
        seq.insert(bdim, value)
        return tuple(seq)

    new = dict(params)
    new["window_dimensions"] = insert(params["window_dimensions"], 1)
    new["window_strides"] = insert(params["window_strides"], 1)
    new["padding"] = insert(params["padding"], (0, 0))
    new["base_dilation"] = insert(params["base_dilation"], 1)
    new["window_dilation"] = insert(params["window_dilation"], 1)
    return new


def _lowest(dtype):
    """The identity of max: -inf, the smallest integer, or False."""
    if dtype == np.bool_:
        return False
    if np.issubdtype(dtype, np.integer):
        return np.iinfo(dtype).min
    return -np.inf


def _highest(dtype):
    """The identity of min: +inf, the largest integer, or True."""
    if dtype == np.bool_:
        return True
    if np.issubdtype(dtype, np.integer):
        return np.iinfo(dtype).max
    return np.inf


# --------------------------------------------------------------------------------------
# reduce_window_sum, reduce_window_max, reduce_window_min


def defwindowreducer(prim, ufunc, identity, check):
    """Register impl, abstract eval and batching of a monoid window reduction
    (`ufunc`: np.add, np.maximum or np.minimum; `identity(dtype)`: its identity)."""

    def impl(x, **params):
        x = np.asarray(x)
        init = identity(x.dtype)
        shape = _window_shape(ShapedArray(x.shape, x.dtype), params)
        if 0 in shape:
            return [np.full(shape, init, x.dtype)]
        if prod(params["window_dimensions"]) <= _OFFSET_LOOP:
            return [_reduce_by_offsets(ufunc, x, init, params, shape)]
        windows = _windows(x, init, params)
        return [ufunc.reduce(windows, axis=-1, dtype=x.dtype, initial=init)]

    def abstract(x, **params):
        check(x.dtype)
        shape = _window_shape(x, params)
        return [ShapedArray(shape, x.dtype, x.weak_type)], no_effects

    def batch(axis_size, vals, dims, **params):
        (x,), (bdim,) = vals, dims
        return [prim.bind(x, **_batch_window_params(params, bdim))], [bdim]

    impl_rules[prim] = impl
    abstract_eval_rules[prim] = abstract
    batching.batch_rules[prim] = batch


# Windows up to this size are reduced one window offset at a time: a few strided
# slices combined in place, which beats materialising every window.
_OFFSET_LOOP = 64


def _reduce_by_offsets(ufunc, x, init, params, shape):
    padded = pad_value(x, np.asarray(init, x.dtype), _padding_config(params))
    acc = None
    for index in _offset_slices(params, shape):
        if acc is None:
            acc = padded[index].copy()
        else:
            ufunc(acc, padded[index], out=acc)
    return acc


def _zero(dtype):
    return np.zeros((), dtype)[()]


def _check_window_sum(dtype):
    if dtype == np.bool_ or not dtypes.issubdtype(dtype, np.number):
        raise TypeError(
            "operand to reduce_window_sum must have a number dtype, got "
            f"{np.dtype(dtype).name}"
        )


def _check_window_chooser(dtype):
    if dtype != np.bool_ and not dtypes.issubdtype(dtype, np.number):
        raise TypeError(
            f"reduce_window_max/min does not accept dtype {np.dtype(dtype).name}."
        )


def _reduce_window_sum_transpose(ct, x, **params):
    """Each operand element receives the cotangents of the windows it is in: a window
    sum of the cotangent dilated by the strides, padded so that every element sees
    each of its windows once, at strides equal to the base dilation."""
    if type(ct) is ad.Zero:
        return [None]
    shape = x.aval.shape
    wd, ws = params["window_dimensions"], params["window_strides"]
    bd, wdil = params["base_dilation"], params["window_dilation"]
    if 0 in np.shape(ct) or 0 in shape:
        from jaxlite.lax.constructors import full

        return [full(shape, 0, x.aval.dtype)]
    config = []
    for n, w, s, (lo, _), b, d, m in zip(
        shape, wd, ws, params["padding"], bd, wdil, np.shape(ct)
    ):
        config.append(((w - 1) * d - lo, (n - 1) * b + lo - (m - 1) * s, s - 1))
    padded = pad(ct, _zero(np.dtype(ct.dtype)), config)
    ones = (1,) * len(shape)
    out = reduce_window_sum_p.bind(
        padded,
        base_dilation=ones,
        padding=((0, 0),) * len(shape),
        window_dilation=wdil,
        window_dimensions=wd,
        window_strides=bd,
    )
    return [out]


reduce_window_sum_p = Primitive("reduce_window_sum")
defwindowreducer(reduce_window_sum_p, np.add, _zero, _check_window_sum)
ad.deflinear(reduce_window_sum_p, _reduce_window_sum_transpose)


def _chooser_jvp(prim, select_prim):
    def jvp(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, **params)
        t_out = select_and_gather_add_p.bind(
            ad.instantiate(t), x, **_select_params(select_prim, params)
        )
        return [out], [t_out]

    return jvp


def _select_params(select_prim, params):
    return {
        "base_dilation": params["base_dilation"],
        "padding": params["padding"],
        "select_prim": select_prim,
        "window_dilation": params["window_dilation"],
        "window_dimensions": params["window_dimensions"],
        "window_strides": params["window_strides"],
    }


reduce_window_max_p = Primitive("reduce_window_max")
defwindowreducer(reduce_window_max_p, np.maximum, _lowest, _check_window_chooser)
ad.jvp_rules[reduce_window_max_p] = _chooser_jvp(reduce_window_max_p, ew.ge_p)

reduce_window_min_p = Primitive("reduce_window_min")
defwindowreducer(reduce_window_min_p, np.minimum, _highest, _check_window_chooser)
ad.jvp_rules[reduce_window_min_p] = _chooser_jvp(reduce_window_min_p, ew.le_p)


# --------------------------------------------------------------------------------------
# select_and_gather_add and select_and_scatter_add: the tangent at, and the cotangent
# back to, the position each window of `operand` selects (its first max, or min).


def _offset_slices(params, shape):
    """For each window offset (row-major), the strided slice of the padded operand
    holding that element of every window."""
    for offset in np.ndindex(*params["window_dimensions"]):
        yield tuple(
            slice(o * d, o * d + (m - 1) * s + 1, s)
            for o, d, m, s in zip(
                offset, params["window_dilation"], shape, params["window_strides"]
            )
        )


def _selection(operand, select_prim, params, shape):
    """For each window of NumPy `operand`, which window offset `select_prim` selects
    (the first maximum for ge, minimum for le), and the padded operand's shape."""
    maximum = select_prim is ew.ge_p
    fill = _lowest(operand.dtype) if maximum else _highest(operand.dtype)
    padded = pad_value(
        operand, np.asarray(fill, operand.dtype), _padding_config(params)
    )
    best = chosen = None
    for k, index in enumerate(_offset_slices(params, shape)):
        piece = padded[index]
        if best is None:
            best, chosen = piece.copy(), np.zeros(shape, np.int32)
            continue
        better = piece > best if maximum else piece < best  # ties keep the first
        np.copyto(chosen, np.int32(k), where=better)
        (np.maximum if maximum else np.minimum)(best, piece, out=best)
    return chosen, padded.shape


def _select_and_gather_add_impl(tangents, operand, *, select_prim, **params):
    tangents, operand = np.asarray(tangents), np.asarray(operand)
    shape = _window_shape(ShapedArray(operand.shape, operand.dtype), params)
    out = np.zeros(shape, tangents.dtype)
    if 0 in shape or 0 in params["window_dimensions"]:
        return [out]
    chosen, _ = _selection(operand, select_prim, params, shape)
    padded_t = pad_value(tangents, _zero(tangents.dtype), _padding_config(params))
    for k, index in enumerate(_offset_slices(params, shape)):
        np.copyto(out, padded_t[index], where=chosen == k)
    return [out]


def _select_and_gather_add_abstract(tangents, operand, *, select_prim, **params):
    if tangents.shape != operand.shape:
        raise TypeError(
            "select_and_gather_add tangents and operand shapes must match, got "
            f"{tangents.shape} and {operand.shape}."
        )
    shape = _window_shape(operand, params)
    return [ShapedArray(shape, tangents.dtype, tangents.weak_type)], no_effects


def _select_and_gather_add_transpose(ct, tangents, operand, *, select_prim, **params):
    if type(ct) is ad.Zero:
        return [None, None]
    base = params["base_dilation"]
    if any(d != 1 for d in base):
        fill = (
            _lowest(operand.dtype)
            if select_prim is ew.ge_p
            else _highest(operand.dtype)
        )
        operand = pad(
            operand,
            np.asarray(fill, operand.dtype)[()],
            tuple((0, 0, d - 1) for d in base),
        )
    scatter_params = dict(
        padding=params["padding"],
        select_prim=select_prim,
        window_dimensions=params["window_dimensions"],
        window_strides=params["window_strides"],
    )
    if any(d != 1 for d in params["window_dilation"]):
        scatter_params["window_dilation"] = params["window_dilation"]
    out = select_and_scatter_add_p.bind(ct, operand, **scatter_params)
    if any(d != 1 for d in base):
        out = lax_slice(out, (0,) * len(base), np.shape(out), base)
    return [out, None]


def _gather_scatter_batch(prim):
    def rule(axis_size, vals, dims, **params):
        a, b = (batching.bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims))
        full = dict(params)
        full.setdefault("base_dilation", (1,) * (np.ndim(b) - 1))
        full.setdefault("window_dilation", (1,) * (np.ndim(b) - 1))
        new = _batch_window_params(full, 0)
        new = {k: new[k] for k in params}
        return [prim.bind(a, b, **new)], [0]

    return rule


def _select_and_gather_add_jvp(t_dot, tangents, operand, **params):
    return select_and_gather_add_p.bind(t_dot, operand, **params)


select_and_gather_add_p = Primitive("select_and_gather_add")
impl_rules[select_and_gather_add_p] = _select_and_gather_add_impl
abstract_eval_rules[select_and_gather_add_p] = _select_and_gather_add_abstract
ad.defjvp(select_and_gather_add_p, _select_and_gather_add_jvp, None)
ad.transpose_rules[select_and_gather_add_p] = _select_and_gather_add_transpose
batching.batch_rules[select_and_gather_add_p] = _gather_scatter_batch(
    select_and_gather_add_p
)


def _scatter_params(params, ndim):
    full = dict(params)
    full["base_dilation"] = (1,) * ndim
    full.setdefault("window_dilation", (1,) * ndim)
    return full


def _select_and_scatter_add_impl(source, operand, *, select_prim, **params):
    source, operand = np.asarray(source), np.asarray(operand)
    params = _scatter_params(params, operand.ndim)
    shape = source.shape
    if 0 in shape or 0 in params["window_dimensions"]:
        return [np.zeros(operand.shape, source.dtype)]
    chosen, padded_shape = _selection(operand, select_prim, params, shape)
    padded = np.zeros(padded_shape, source.dtype)
    for k, index in enumerate(_offset_slices(params, shape)):
        # Within one offset every window maps to a different element: no collisions.
        padded[index] += np.where(chosen == k, source, 0)
    # Undo the padding; elements it cropped away receive zeros.
    unpad = [(-lo, -hi, 0) for lo, hi in params["padding"]]
    return [pad_value(padded, _zero(source.dtype), unpad)]


def _select_and_scatter_add_abstract(source, operand, *, select_prim, **params):
    shape = _window_shape(operand, _scatter_params(params, len(operand.shape)))
    if source.shape != shape:
        raise TypeError(
            "select_and_scatter_add source must have the shape of the windows of "
            f"operand, {shape}, got {source.shape}."
        )
    return [ShapedArray(operand.shape, source.dtype, source.weak_type)], no_effects


def _select_and_scatter_add_transpose(ct, source, operand, *, select_prim, **params):
    if type(ct) is ad.Zero:
        return [None, None]
    ones = (1,) * np.ndim(operand)
    out = select_and_gather_add_p.bind(
        ct,
        operand,
        base_dilation=ones,
        padding=params["padding"],
        select_prim=select_prim,
        window_dilation=params.get("window_dilation", ones),
        window_dimensions=params["window_dimensions"],
        window_strides=params["window_strides"],
    )
    return [out, None]


def _select_and_scatter_add_jvp(s_dot, source, operand, **params):
    return select_and_scatter_add_p.bind(s_dot, operand, **params)


select_and_scatter_add_p = Primitive("select_and_scatter_add")
impl_rules[select_and_scatter_add_p] = _select_and_scatter_add_impl
abstract_eval_rules[select_and_scatter_add_p] = _select_and_scatter_add_abstract
ad.defjvp(select_and_scatter_add_p, _select_and_scatter_add_jvp, None)
ad.transpose_rules[select_and_scatter_add_p] = _select_and_scatter_add_transpose
batching.batch_rules[select_and_scatter_add_p] = _gather_scatter_batch(
    select_and_scatter_add_p
)


# --------------------------------------------------------------------------------------
# A traced computation, evaluated with lax operations


def _apply(closed, args):
    """The scalar computation `closed` applied at every position of `args` (arrays of
    one shape): the computation vectorised by `vmap` over the flattened positions."""
    shape = tuple(np.shape(args[0]))
    size = prod(shape)
    flat = [reshape(a, (size,)) for a in args]
    outs, dims = batching.vmap_flat(jaxpr_as_fun(closed), size, flat, [0] * len(flat))
    return [
        reshape(batching.bdim_at_front(o, d, size), shape) for o, d in zip(outs, dims)
    ]


def _last_axis_slice(x, start, stop, stride):
    ndim = np.ndim(x)
    lo, hi = [0] * ndim, list(np.shape(x))
    lo[-1], hi[-1] = start, stop
    return lax_slice(x, lo, hi, (1,) * (ndim - 1) + (stride,))


def _fold_last_axis(closed, inits, xs, valid=None):
    """Fold arrays `xs` (one per operand, equal shapes) along their last axis with the
    computation, starting from the scalar `inits`; the results lose that axis.

    A short fold runs left to right (`init ⊕ x0 ⊕ x1 ...`, XLA's order on CPU); a
    long one combines neighbours pairwise, level by level, then `init ⊕ total`. Both
    keep the operands in order, so an associative computation agrees. Elements where
    the boolean array `valid` is False are skipped (XLA skips padding that way); such
    a fold always runs left to right."""
    shape = tuple(np.shape(xs[0]))
    n, ndim = shape[-1], len(shape)
    acc = [broadcast_in_dim(i, shape[:-1], ()) for i in inits]
    if n <= _SEQUENTIAL_FOLD or valid is not None:
        for k in range(n):
            x_k = [squeeze(_last_axis_slice(x, k, k + 1, 1), (ndim - 1,)) for x in xs]
            new = _apply(closed, [*acc, *x_k])
            if valid is not None:
                v_k = squeeze(_last_axis_slice(valid, k, k + 1, 1), (ndim - 1,))
                new = [ew.select_n(v_k, a, b) for a, b in zip(acc, new)]
            acc = new
        return acc
    while n > 1:
        half = n // 2
        even = [_last_axis_slice(x, 0, 2 * half - 1, 2) for x in xs]
        odd = [_last_axis_slice(x, 1, 2 * half, 2) for x in xs]
        combined = _apply(closed, [*even, *odd])
        if n % 2:
            combined = [
                concatenate([c, _last_axis_slice(x, n - 1, n, 1)], ndim - 1)
                for c, x in zip(combined, xs)
            ]
        xs, n = combined, half + n % 2
    total = [squeeze(x, (ndim - 1,)) for x in xs]
    return _apply(closed, [*acc, *total])


# Folds up to this length run sequentially.
_SEQUENTIAL_FOLD = 32


def _eager(fun, *args):
    """Run a lax expression on NumPy values now; NumPy values out."""
    with set_current_trace(eval_trace):
        outs = fun(*[Array(np.asarray(a)) for a in args])
    return [np.asarray(o._value if hasattr(o, "_value") else o) for o in outs]


# --------------------------------------------------------------------------------------
# reduce_window: any computation


def _split(args):
    n = len(args) // 2
    return list(args[:n]), list(args[n:])


def _reduce_window_expr(*args, jaxpr, consts, **params):
    """reduce_window in lax operations: pad with the inits, one strided slice per
    window position stacked along a last axis, folded with the computation."""
    operands, inits = _split(args)
    ndim = np.ndim(operands[0])
    config = tuple(
        (lo, hi, d - 1)
        for (lo, hi), d in zip(params["padding"], params["base_dilation"])
    )
    out_shape = _window_shape(get_aval(operands[0]), params)
    valid = None
    if any(c != (0, 0, 0) for c in config):  # mark the padding, which is skipped
        inside = np.ones(np.shape(operands[0]), np.bool_)
        operands = [*operands, inside]
        inits = [*inits, np.False_]
    stacked = []
    for x, init in zip(operands, inits):
        padded = pad(x, init, config)
        pieces = []
        for offset in np.ndindex(*params["window_dimensions"]):
            start = [o * d for o, d in zip(offset, params["window_dilation"])]
            stop = [
                st + (m - 1) * s + 1 if m else st
                for st, m, s in zip(start, out_shape, params["window_strides"])
            ]
            piece = lax_slice(padded, start, stop, params["window_strides"])
            pieces.append(reshape(piece, (*out_shape, 1)))
        stacked.append(concatenate(pieces, ndim) if len(pieces) > 1 else pieces[0])
    if len(stacked) > len(args) // 2:
        valid, stacked, inits = stacked[-1], stacked[:-1], inits[:-1]
    return _fold_last_axis(jaxpr, inits, stacked, valid)


def _reduce_window_impl(*args, jaxpr, consts, **params):
    operands, inits = _split(args)
    x = np.asarray(operands[0])
    shape = _window_shape(ShapedArray(x.shape, x.dtype), params)
    if 0 in shape:
        return [np.full(shape, i, np.asarray(i).dtype) for i in inits]
    return _eager(
        lambda *a: _reduce_window_expr(*a, jaxpr=jaxpr, consts=consts, **params), *args
    )


def _reduce_window_abstract(*avals, jaxpr, consts, **params):
    operands, inits = _split(avals)
    if any(o.dtype != i.dtype for o, i in zip(operands, inits)):
        raise TypeError(
            "reduce_window got inconsistent dtypes for operands and init_values: got "
            f"operand dtypes {[o.dtype for o in operands]} and init_value dtypes "
            f"{[i.dtype for i in inits]}."
        )
    if any(i.shape for i in inits):
        raise TypeError(
            "reduce_window expected init_values to be scalars but init_values have "
            f"shapes {[i.shape for i in inits]}."
        )
    if any(o.shape != operands[0].shape for o in operands):
        raise TypeError(
            "reduce_window operands must have the same shape, got "
            f"{[o.shape for o in operands]}."
        )
    shape = _window_shape(operands[0], params)
    outs = [
        ShapedArray(shape, o.dtype, o.weak_type and i.weak_type)
        for o, i in zip(operands, inits)
    ]
    return outs, no_effects


def _reduce_window_jvp(primals, tangents, **params):
    tangents = [ad.instantiate(t) for t in tangents]
    return ad.jvp_flat(
        lambda *a: _reduce_window_expr(*a, **params), list(primals), tangents
    )


def _reduce_window_batch(axis_size, vals, dims, **params):
    operands, inits = _split(vals)
    op_dims, init_dims = _split(dims)
    if any(d is not not_mapped for d in init_dims):
        # One init per example: vectorise the lax expression instead.
        return batching.vmap_flat(
            lambda *a: _reduce_window_expr(*a, **params), axis_size, vals, dims
        )
    operands = [
        batching.bdim_at_front(x, d, axis_size) for x, d in zip(operands, op_dims)
    ]
    new = _batch_window_params(params, 0)
    outs = reduce_window_p.bind(*operands, *inits, **new)
    return outs, [0] * len(outs)


reduce_window_p = Primitive("reduce_window", multiple_results=True)
impl_rules[reduce_window_p] = _reduce_window_impl
abstract_eval_rules[reduce_window_p] = _reduce_window_abstract
ad.jvp_rules[reduce_window_p] = _reduce_window_jvp
batching.batch_rules[reduce_window_p] = _reduce_window_batch


# --------------------------------------------------------------------------------------
# reduce: any computation over static axes


def _reduce_expr(*args, computation, jaxpr, dimensions):
    """reduce in lax operations: the reduced axes moved last and flattened, folded."""
    operands, inits = _split(args)
    shape = tuple(np.shape(operands[0]))
    kept = [a for a in range(len(shape)) if a not in dimensions]
    kept_shape = tuple(shape[a] for a in kept)
    size = prod(shape[a] for a in dimensions)
    lined = []
    for x in operands:
        perm = (*kept, *sorted(dimensions))
        if list(perm) != list(range(len(shape))):
            x = transpose(x, perm)
        lined.append(reshape(x, (*kept_shape, size)))
    return _fold_last_axis(jaxpr, inits, lined)


def _reduce_impl(*args, computation, jaxpr, dimensions):
    return _eager(
        lambda *a: _reduce_expr(
            *a, computation=computation, jaxpr=jaxpr, dimensions=dimensions
        ),
        *args,
    )


def _reduce_abstract(*avals, computation, jaxpr, dimensions):
    operands, inits = _split(avals)
    if any(i.shape for i in inits):
        raise ValueError(
            f"reduce found non-scalar initial value: {[i.shape for i in inits]}"
        )
    if any(o.shape != operands[0].shape for o in operands):
        raise ValueError(
            f"reduce found operands with different shapes: {[o.shape for o in operands]}"
        )
    if any(o.dtype != i.dtype for o, i in zip(operands, inits)):
        raise TypeError(
            "reduce operand dtypes should match corresponding initial value dtypes, "
            f"got operands={list(operands)} and initial_values={list(inits)}"
        )
    ndim = len(operands[0].shape)
    if any(not 0 <= d < ndim for d in dimensions) or len(set(dimensions)) != len(
        dimensions
    ):
        raise ValueError(
            f"reduce dimensions {dimensions} must be distinct axes of an operand of "
            f"shape {operands[0].shape}."
        )
    shape = tuple(n for a, n in enumerate(operands[0].shape) if a not in dimensions)
    outs = [
        ShapedArray(shape, o.dtype, o.weak_type and i.weak_type)
        for o, i in zip(operands, inits)
    ]
    return outs, no_effects


def _reduce_jvp(primals, tangents, **params):
    tangents = [ad.instantiate(t) for t in tangents]
    return ad.jvp_flat(lambda *a: _reduce_expr(*a, **params), list(primals), tangents)


def _reduce_batch(axis_size, vals, dims, *, computation, jaxpr, dimensions):
    operands, inits = _split(vals)
    op_dims, init_dims = _split(dims)
    params = dict(computation=computation, dimensions=dimensions, jaxpr=jaxpr)
    if any(d is not not_mapped for d in init_dims):
        return batching.vmap_flat(
            lambda *a: _reduce_expr(*a, **params), axis_size, vals, dims
        )
    operands = [
        batching.bdim_at_front(x, d, axis_size) for x, d in zip(operands, op_dims)
    ]
    params["dimensions"] = tuple(d + 1 for d in dimensions)
    outs = reduce_p.bind(*operands, *inits, **params)
    return outs, [0] * len(outs)


reduce_p = Primitive("reduce", multiple_results=True)
impl_rules[reduce_p] = _reduce_impl
abstract_eval_rules[reduce_p] = _reduce_abstract
ad.jvp_rules[reduce_p] = _reduce_jvp
batching.batch_rules[reduce_p] = _reduce_batch


# --------------------------------------------------------------------------------------
# Public functions


def _trace_computation(name, computation, init_avals, init_tree):
    """The computation `(acc, x) -> acc` (pytrees like the inits) as a closed jaxpr on
    scalars taking (acc leaves..., x leaves...)."""
    in_avals = [ShapedArray((), a.dtype, a.weak_type) for a in init_avals]
    init_like = tree_util.tree_unflatten(init_tree, in_avals)
    in_tree = tree_util.tree_structure((init_like, init_like))
    jaxpr, consts, out_tree, out_avals = cf.trace_body(
        computation, name, in_tree, [*in_avals, *in_avals]
    )
    if out_tree != init_tree:
        raise TypeError(
            f"{name}: the computation must return a pytree like the init values "
            f"({init_tree}), got {out_tree}."
        )
    for o, i in zip(out_avals, in_avals):
        if o.shape != () or o.dtype != i.dtype:
            raise TypeError(
                f"{name}: the computation must return scalars of the init values' "
                f"dtypes {[a.dtype.name for a in in_avals]}, got "
                f"{[a.str_short() for a in out_avals]}."
            )
    if any(isinstance(c, Tracer) for c in consts):
        raise TypeError(
            f"{name}: the computation closes over a traced value; only constants may "
            "be captured. Pass traced values as operands instead."
        )
    if consts:  # the captured constants become the jaxpr's constvars again
        j = jaxpr.jaxpr
        n = len(consts)
        jaxpr = ClosedJaxpr(
            Jaxpr(j.invars[:n], j.invars[n:], j.outvars, j.eqns, j.effects), consts
        )
    return jaxpr, out_tree


def _flatten_operands_and_inits(name, operands, init_values):
    flat_ops, op_tree = tree_util.tree_flatten(operands)
    flat_inits, init_tree = tree_util.tree_flatten(init_values)
    if op_tree != init_tree:
        raise ValueError(
            "Operands must have the same tree structure as init_values: "
            f"{op_tree} vs. {init_tree}"
        )
    if len(flat_ops) != len(flat_inits):
        raise ValueError(
            "Must have same total number of operands as init_values: "
            f" {len(flat_ops)} vs. {len(flat_inits)}"
        )
    if not flat_ops:
        raise ValueError(f"{name} must have at least one operand.")
    converted = {}  # a NumPy array passed twice becomes one constant, as in JAX

    def value(x):
        if id(x) not in converted:
            converted[id(x)] = operand(x)
        return converted[id(x)]

    return [value(x) for x in flat_ops], [value(x) for x in flat_inits], init_tree


def _concrete_scalar(x):
    """The NumPy value of a concrete scalar (an Array, or a tracer with a known
    value), or None."""
    if np.shape(x) != ():
        return None
    value = x.to_concrete_value() if isinstance(x, Tracer) else x._value
    return None if value is None else np.asarray(value)[()]


def _window_monoid(computation, init):
    """The monoid window reduction that `computation` from `init` is, or None.

    As in JAX, the init value is compared with the identity of its own dtype, not the
    operand's: an integer operand max-pooled from `-inf` is a `reduce_window_max`."""
    value = _concrete_scalar(init)
    if value is None:
        return None
    dtype = np.dtype(get_aval(init).dtype)
    if computation is ew.add and value == 0:
        return reduce_window_sum_p
    if computation is ew.max and value == _lowest(dtype):
        return reduce_window_max_p
    if computation is ew.min and value == _highest(dtype):
        return reduce_window_min_p
    return None


def reduce_window(
    operand,
    init_value,
    computation,
    window_dimensions,
    window_strides=None,
    padding="VALID",
    base_dilation=None,
    window_dilation=None,
):
    """Reduce every window of `operand` (a pytree of arrays) with `computation`,
    starting from `init_value` (a matching pytree of scalars).

    `padding` is 'SAME', 'SAME_LOWER', 'VALID' or (low, high) pairs, and pads with the
    init value; `base_dilation` spreads the operand's elements apart (filling with the
    init value), `window_dilation` spreads the window's.
    """
    ops, inits, tree = _flatten_operands_and_inits("reduce_window", operand, init_value)
    window_dimensions = tuple(operator.index(w) for w in window_dimensions)
    ndim = len(window_dimensions)
    if window_strides is None:
        window_strides = (1,) * ndim
    window_strides = tuple(operator.index(s) for s in window_strides)
    if isinstance(padding, str):
        padding = padtype_to_pads(
            np.shape(ops[0]), window_dimensions, window_strides, padding
        )
    padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    params = dict(
        base_dilation=(1,) * ndim if base_dilation is None else tuple(base_dilation),
        padding=padding,
        window_dilation=(1,) * ndim
        if window_dilation is None
        else tuple(window_dilation),
        window_dimensions=window_dimensions,
        window_strides=window_strides,
    )
    if len(ops) == 1:
        prim = _window_monoid(computation, inits[0])
        if prim is not None:
            out = prim.bind(ops[0], **params)
            return tree_util.tree_unflatten(tree, [out])
    init_avals = [get_aval(i) for i in inits]
    jaxpr, out_tree = _trace_computation("reduce_window", computation, init_avals, tree)
    outs = reduce_window_p.bind(
        *ops,
        *inits,
        base_dilation=params["base_dilation"],
        consts=(),
        jaxpr=jaxpr,
        padding=padding,
        window_dilation=params["window_dilation"],
        window_dimensions=window_dimensions,
        window_strides=window_strides,
    )
    return tree_util.tree_unflatten(out_tree, outs)


def _reduce_monoid(computation, init):
    """The monoid reduction that `computation` from `init` is, or None (the identity
    of the init value's dtype decides, as for `_window_monoid`)."""
    value = _concrete_scalar(init)
    if value is None:
        return None
    dtype = np.dtype(get_aval(init).dtype)
    if computation is ew.add and value == 0:
        return reductions.reduce_sum_p
    if computation is ew.mul and value == 1:
        return reductions.reduce_prod_p
    if computation is ew.max and value == _lowest(dtype):
        return reductions.reduce_max_p
    if computation is ew.min and value == _highest(dtype):
        return reductions.reduce_min_p
    if dtype == np.bool_ or np.issubdtype(dtype, np.integer):
        all_ones = True if dtype == np.bool_ else np.array(-1).astype(dtype)[()]
        zero = False if dtype == np.bool_ else 0
        if computation is ew.bitwise_and and value == all_ones:
            return reductions.reduce_and_p
        if computation is ew.bitwise_or and value == zero:
            return reductions.reduce_or_p
        if computation is ew.bitwise_xor and value == zero:
            return reductions.reduce_xor_p
    return None


def reduce(operands, init_values, computation, dimensions, out_sharding=None):  # noqa: A001
    """Reduce `operands` (a pytree of arrays of one shape) over `dimensions` with
    `computation`, starting from `init_values` (a matching pytree of scalars).

    add, mul, max, min and the bitwise and/or/xor with their identities as init
    values become reduce_sum, reduce_prod, ... as in JAX; any other computation is
    traced once and held by a `reduce` equation.
    """
    ops, inits, tree = _flatten_operands_and_inits("reduce", operands, init_values)
    dimensions = tuple(operator.index(d) for d in dimensions)
    if len(ops) == 1:
        prim = _reduce_monoid(computation, inits[0])
        if prim is not None:
            out = prim.bind(ops[0], axes=dimensions)
            weak = ops[0].aval.weak_type and inits[0].aval.weak_type
            if weak != out.aval.weak_type:
                out = ew.convert_element_type_p.bind(
                    out, new_dtype=np.dtype(out.dtype), weak_type=weak
                )
            return tree_util.tree_unflatten(tree, [out])
    init_avals = [get_aval(i) for i in inits]
    jaxpr, out_tree = _trace_computation("reduce", computation, init_avals, tree)
    outs = reduce_p.bind(
        *ops, *inits, computation=computation, dimensions=dimensions, jaxpr=jaxpr
    )
    return tree_util.tree_unflatten(out_tree, outs)
