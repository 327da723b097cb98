"""`conv_general_dilated`: XLA's convolution, and the conv helpers of `jax.lax`.

One primitive covers every convolution: N spatial dimensions, strides, explicit or
string padding, input ("lhs") dilation (transposed convolutions), kernel ("rhs")
dilation (atrous convolutions), grouped convolutions by feature or by batch, and any
axis layout, given by `ConvDimensionNumbers`: for each operand, where its batch (or
output-feature) axis, feature (or input-feature) axis and spatial axes are.

NumPy evaluates a convolution as im2col: the input goes to (batch, spatial..., feature)
layout, is dilated and padded, and a strided view of every window
(`sliding_window_view`) is copied into a patch matrix that meets the kernel in one
matrix product (a batched one per group). That is one copy of the patches and one BLAS
call, fast enough for small image models.

The derivatives follow from linearity in each operand. The cotangent of the input is a
convolution of the output cotangent with the spatially flipped kernel, its roles of
input and output features swapped, the strides becoming input dilation; the cotangent
of the kernel is a convolution of the input, batch and feature axes swapped, with the
output cotangent as the kernel, the strides becoming kernel dilation. Feature groups
turn into batch groups and back. Under `vmap`, the mapped axis is folded into a batch,
feature or group axis, so a batch of convolutions is one convolution.
"""

from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from jaxlite import dtypes
from jaxlite.core import (
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    impl_rules,
    no_effects,
)
from jaxlite.interpreters import ad, batching
from jaxlite.interpreters.batching import not_mapped
from jaxlite.lax.dot import (
    _compute_dtype,
    canonicalize_precision,
    dot_general,
    dot_general_value,
)
from jaxlite.lax.elementwise import convert_element_type, convert_value
from jaxlite.lax.rules import ANY, check_dtype, check_same_dtypes
from jaxlite.lax.structural import operand, reshape, rev, transpose
from jaxlite.util import prod

__all__ = [
    "ConvDimensionNumbers",
    "ConvGeneralDilatedDimensionNumbers",
    "conv_general_dilated_p",
    "conv_general_dilated",
    "conv",
    "conv_with_general_padding",
    "conv_transpose",
    "conv_dimension_numbers",
    "conv_general_permutations",
    "conv_general_shape_tuple",
    "conv_shape_tuple",
    "conv_transpose_shape_tuple",
    "conv_general_dilated_patches",
    "conv_general_dilated_local",
    "padtype_to_pads",
]


class ConvDimensionNumbers(NamedTuple):
    """Where the axes of a convolution's operands are.

    `lhs_spec`: (batch axis, feature axis, spatial axes...) of the input;
    `rhs_spec`: (output-feature axis, input-feature axis, spatial axes...) of the
    kernel; `out_spec`: (batch axis, feature axis, spatial axes...) of the output.
    """

    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


# What the functions accept as `dimension_numbers`.
ConvGeneralDilatedDimensionNumbers = tuple[str, str, str] | ConvDimensionNumbers | None


# --------------------------------------------------------------------------------------
# Dimension numbers, padding and shapes


def conv_general_permutations(dimension_numbers):
    """`(lhs_perm, rhs_perm, out_perm)` for string specs like ('NHWC', 'HWIO', 'NHWC'):
    the positions of (N, C, spatial...), (O, I, spatial...) and (N, C, spatial...),
    spatial axes in the order the kernel spec names them."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(pairs):
        spec = dimension_numbers[i]
        if not spec.count(a) == spec.count(b) == 1:
            raise TypeError(
                f"convolution dimension_numbers[{i}] must contain the characters "
                f"'{a}' and '{b}' exactly once, got {spec}."
            )
        if len(spec) != len(set(spec)):
            raise TypeError(
                f"convolution dimension_numbers[{i}] cannot have duplicate "
                f"characters, got {spec}."
            )
    spatial = [set(s) - set(p) for s, p in zip(dimension_numbers, pairs)]
    if not spatial[0] == spatial[1] == spatial[2]:
        raise TypeError(
            "convolution dimension_numbers elements must each have the same set of "
            f"spatial characters, got {tuple(dimension_numbers)}."
        )
    order = [c for c in rhs_spec if c not in "OI"]

    def perm(spec, pair):
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(
            spec.index(c) for c in order
        )

    return tuple(perm(s, p) for s, p in zip(dimension_numbers, pairs))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """`dimension_numbers` (None, three spec strings, or ConvDimensionNumbers) as a
    `ConvDimensionNumbers`."""
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(
            "convolution requires lhs and rhs ndim to be equal, got "
            f"{len(lhs_shape)} and {len(rhs_shape)}."
        )
    if dimension_numbers is None:
        iota = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, (list, tuple)):
        raise TypeError(
            "convolution dimension_numbers must be tuple/list or None, got "
            f"{type(dimension_numbers)}."
        )
    if len(dimension_numbers) != 3:
        raise TypeError(
            "convolution dimension_numbers list/tuple must be length 3, got "
            f"{len(dimension_numbers)}."
        )
    if not all(isinstance(s, str) for s in dimension_numbers):
        raise TypeError(
            "convolution dimension_numbers elements must be strings, got "
            f"{tuple(type(s) for s in dimension_numbers)}."
        )
    for i, spec in enumerate(dimension_numbers):
        if len(spec) != len(lhs_shape):
            raise TypeError(
                f"convolution dimension_numbers[{i}] must have len equal to the ndim "
                f"of lhs and rhs, got {len(spec)} for lhs and rhs shapes "
                f"{tuple(lhs_shape)} and {tuple(rhs_shape)}."
            )
    return ConvDimensionNumbers(*conv_general_permutations(dimension_numbers))


def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """Explicit (low, high) pads for 'SAME', 'SAME_LOWER' or 'VALID' padding: SAME
    keeps `ceil(size / stride)` outputs and puts the odd pad element high, SAME_LOWER
    puts it low, VALID pads nothing."""
    name = getattr(padding, "name", padding)
    kind = name.upper() if isinstance(name, str) else name
    if kind not in ("SAME", "SAME_LOWER", "VALID"):
        raise RuntimeError(
            "Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', "
            f"got {padding}."
        )
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    pads = []
    for n, w, s in zip(in_shape, window_shape, window_strides):
        out = -(-int(n) // int(s))
        total = max((out - 1) * int(s) + int(w) - int(n), 0)
        small, big = total // 2, total - total // 2
        pads.append((small, big) if kind == "SAME" else (big, small))
    return pads


def _stride_dim(size, window, stride):
    return max((size - window) // stride + 1, 0)


def dilate_dim(size, dilation):
    return 0 if size == 0 else 1 + dilation * (size - 1)


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """Output shape of a convolution with operands in canonical (N, C, spatial...) and
    (O, I, spatial...) layout."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(
            "Wrong number of explicit pads for convolution: expected "
            f"{len(lhs_shape) - 2}, got {len(pads)}."
        )
    padded = [int(n) + int(lo) + int(hi) for n, (lo, hi) in zip(lhs_shape[2:], pads)]
    if any(p < 0 for p in padded):
        raise ValueError(
            "Negative padding is larger than the size of the corresponding dimension: "
            f"got padding={pads} for lhs_shape[2:]={tuple(lhs_shape[2:])}"
        )
    space = tuple(
        _stride_dim(p, int(k), int(s))
        for p, k, s in zip(padded, rhs_shape[2:], strides)
    )
    return (int(lhs_shape[0]) // batch_group_count, int(rhs_shape[0])) + space


def _take(shape, perm):
    return tuple(int(shape[i]) for i in perm)


def _untake(values, perm):
    """The inverse of `_take`: values[j] goes to position perm[j]."""
    out = [0] * len(perm)
    for v, p in zip(values, perm):
        out[p] = v
    return tuple(out)


def conv_general_shape_tuple(
    lhs_shape, rhs_shape, window_strides, padding, dimension_numbers
):
    """Output shape of a convolution given string dimension numbers."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple(
        _take(lhs_shape, lhs_perm), _take(rhs_shape, rhs_perm), window_strides, padding
    )
    return _untake(out, out_perm)


def _conv_transpose_padding(k, s, padding):
    """(low, high) padding of the convolution that transposes a strided one."""
    if padding == "SAME":
        total = k + s - 2
        low = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        low = k - 1
    elif isinstance(padding, tuple):
        low, high = (k - p - 1 for p in padding)
        total = low + high
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return low, total - low


def conv_transpose_shape_tuple(
    lhs_shape, rhs_shape, window_strides, padding, dimension_numbers
):
    """Output shape of `conv_transpose` given string dimension numbers."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_t, rhs_t = _take(lhs_shape, lhs_perm), _take(rhs_shape, rhs_perm)
    if isinstance(padding, str):
        padding = [
            _conv_transpose_padding(k, s, padding)
            for k, s in zip(rhs_t[2:], window_strides)
        ]
    space = [
        (i - 1) * s - k + 2 + int(sum(p))
        for i, k, s, p in zip(lhs_t[2:], rhs_t[2:], window_strides, padding)
    ]
    return _untake((lhs_t[0], rhs_t[0], *space), out_perm)


# --------------------------------------------------------------------------------------
# Types and shapes of conv_general_dilated_p


def _conv_dtype(dtype, preferred):
    if preferred is None:
        return dtype
    pref = np.dtype(preferred)

    def kind(d):
        if d == np.bool_ or np.issubdtype(d, np.integer):
            return "integral"
        if dtypes.issubdtype(d, np.floating):
            return "floating"
        return "complex"

    pairs = (("integral", "integral"), ("integral", "floating"))
    pairs += (("floating", "floating"), ("complex", "complex"))
    if (kind(dtype), kind(pref)) not in pairs:
        raise TypeError(
            "Input type is incompatible with `preferred_element_type`. The compatible "
            "combinations of (input_type, preferred_element_type) are (integral, "
            "integral), (integral, floating), (floating, floating), (complex, complex)."
        )
    if kind(dtype) == kind(pref) and dtypes.itemsize_bits(pref) < dtypes.itemsize_bits(
        dtype
    ):
        raise TypeError(
            "`preferred_element_type` must not be narrower than the original type."
        )
    return pref


def _check_specs(lhs, rhs, dimension_numbers):
    if len(lhs.shape) != len(rhs.shape):
        raise ValueError(
            "conv_general_dilated lhs and rhs must have the same number of "
            f"dimensions, but got {lhs.shape} and {rhs.shape}."
        )
    if len(lhs.shape) < 2:
        raise ValueError(
            "conv_general_dilated needs operands with a batch (or output-feature) and "
            f"a feature axis, got shapes {lhs.shape} and {rhs.shape}."
        )
    ndim = len(lhs.shape)
    for name, spec in zip(("lhs_spec", "rhs_spec", "out_spec"), dimension_numbers):
        if sorted(spec) != list(range(ndim)):
            raise ValueError(
                f"conv_general_dilated dimension_numbers.{name} must be a permutation "
                f"of the {ndim} axes of the operands, got {spec}."
            )


def _check_groups(lhs_shape, rhs_shape, dimension_numbers, fgc, bgc):
    lhs_spec, rhs_spec, _ = dimension_numbers
    if not fgc > 0:
        raise ValueError(
            "conv_general_dilated feature_group_count must be a positive integer, "
            f"got {fgc}."
        )
    features = lhs_shape[lhs_spec[1]]
    in_features = rhs_shape[rhs_spec[1]]
    out_features = rhs_shape[rhs_spec[0]]
    if features % fgc:
        raise ValueError(
            "conv_general_dilated feature_group_count must divide lhs feature "
            f"dimension size, but {fgc} does not divide {features}."
        )
    if features // fgc != in_features:
        raise ValueError(
            "conv_general_dilated lhs feature dimension size divided by "
            "feature_group_count must equal the rhs input feature dimension size, "
            f"but {features} // {fgc} != {in_features}."
        )
    if out_features % fgc:
        raise ValueError(
            "conv_general_dilated rhs output feature dimension size must be a "
            f"multiple of feature_group_count, but {out_features} is not a multiple "
            f"of {fgc}."
        )
    if not bgc > 0:
        raise ValueError(
            "conv_general_dilated batch_group_count must be a positive integer, "
            f"got {bgc}."
        )
    batch = lhs_shape[lhs_spec[0]]
    if bgc > 1 and batch % bgc:
        raise ValueError(
            "conv_general_dilated batch_group_count must divide lhs batch dimension "
            f"size, but {bgc} does not divide {batch}."
        )
    if out_features % bgc:
        raise ValueError(
            "conv_general_dilated rhs output feature dimension size must be a "
            f"multiple of batch_group_count, but {out_features} is not a multiple "
            f"of {bgc}."
        )
    if bgc > 1 and fgc > 1:
        raise ValueError(
            "At most one of batch_group_count and feature_group_count may be > 1, "
            f"got batch_group_count={bgc} and feature_group_count={fgc}"
        )


def _check_window(nspatial, window_strides, padding, lhs_dilation, rhs_dilation):
    if nspatial != len(window_strides):
        raise ValueError(
            "conv_general_dilated window and window_strides must have the same number "
            f"of dimensions, but got {nspatial} and {len(window_strides)}"
        )
    if any(s <= 0 for s in window_strides):
        raise ValueError(
            f"conv_general_dilated window_strides must be positive, got "
            f"{window_strides}."
        )
    if len(padding) != nspatial:
        raise TypeError(
            "Wrong number of explicit pads for convolution: expected "
            f"{nspatial}, got {len(padding)}."
        )
    for name, d in (("lhs_dilation", lhs_dilation), ("rhs_dilation", rhs_dilation)):
        if len(d) != nspatial:
            raise ValueError(
                f"conv_general_dilated {name} must have one entry per spatial "
                f"dimension ({nspatial}), got {d}."
            )
        if any(x <= 0 for x in d):
            raise TypeError(f"All dilations must be positive, got {d}.")


def _conv_shape(lhs_shape, rhs_shape, params):
    dn = params["dimension_numbers"]
    lhs_spec, rhs_spec, out_spec = dn
    lhs_t = list(_take(lhs_shape, lhs_spec))
    rhs_t = list(_take(rhs_shape, rhs_spec))
    lhs_t[2:] = [dilate_dim(n, d) for n, d in zip(lhs_t[2:], params["lhs_dilation"])]
    rhs_t[2:] = [dilate_dim(k, d) for k, d in zip(rhs_t[2:], params["rhs_dilation"])]
    out = conv_shape_tuple(
        lhs_t,
        rhs_t,
        params["window_strides"],
        params["padding"],
        params["batch_group_count"],
    )
    return _untake(out, out_spec)


def _conv_abstract(lhs, rhs, **params):
    check_same_dtypes("conv_general_dilated", (lhs, rhs))
    check_dtype("conv_general_dilated", lhs.dtype, ANY)
    dn = params["dimension_numbers"]
    _check_specs(lhs, rhs, dn)
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    _check_groups(lhs.shape, rhs.shape, dn, fgc, bgc)
    _check_window(
        len(lhs.shape) - 2,
        params["window_strides"],
        params["padding"],
        params["lhs_dilation"],
        params["rhs_dilation"],
    )
    shape = _conv_shape(lhs.shape, rhs.shape, params)
    dtype = _conv_dtype(lhs.dtype, params["preferred_element_type"])
    return [ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type)], no_effects


# --------------------------------------------------------------------------------------
# NumPy evaluation: im2col and one matrix product


def pad_value(x, fill, config):
    """`x` dilated and padded with `fill`: `config[i] = (low, high, interior)` for axis
    i, as `lax.pad` (negative low/high crops). Returns `x` itself when there is
    nothing to do."""
    if all(c == (0, 0, 0) for c in config):
        return x
    if all(lo >= 0 and hi >= 0 and not interior for lo, hi, interior in config):
        return np.pad(x, [(lo, hi) for lo, hi, _ in config], constant_values=fill)
    full, inner, crop = [], [], []
    for n, (lo, hi, interior) in zip(x.shape, config):
        lo_pos, hi_pos = max(lo, 0), max(hi, 0)
        size = lo_pos + hi_pos + n + max(n - 1, 0) * interior
        full.append(size)
        inner.append(slice(lo_pos, size - hi_pos, interior + 1))
        crop.append(slice(lo_pos - lo, max(size - (hi_pos - hi), lo_pos - lo)))
    out = np.full(full, fill, dtype=x.dtype)
    out[tuple(inner)] = x
    return out[tuple(crop)]


def window_view(x, axes, window, strides, dilation):
    """A strided view of the windows of `x` along `axes`: shape `x.shape` with each
    axis in `axes` replaced by its number of windows, then the window axes appended.
    Returns None when some axis has no window (an empty result)."""
    span = [dilate_dim(w, d) for w, d in zip(window, dilation)]
    if any(x.shape[a] < s for a, s in zip(axes, span)) or not all(span):
        return None
    view = sliding_window_view(x, span, axis=axes)
    index = [slice(None)] * x.ndim
    for a, s in zip(axes, strides):
        index[a] = slice(None, None, s)
    index += [slice(None, None, d) for d in dilation]
    return view[tuple(index)]


def conv_value(
    lhs,
    rhs,
    *,
    batch_group_count,
    dimension_numbers,
    feature_group_count,
    lhs_dilation,
    padding,
    precision,
    preferred_element_type,
    rhs_dilation,
    window_strides,
):
    """Evaluate conv_general_dilated on NumPy values."""
    lhs, rhs = np.asarray(lhs), np.asarray(rhs)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    nsp = lhs.ndim - 2
    spatial = tuple(range(1, nsp + 1))
    params = dict(
        batch_group_count=batch_group_count,
        dimension_numbers=dimension_numbers,
        lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation,
        padding=padding,
        window_strides=window_strides,
    )
    out_shape = _conv_shape(lhs.shape, rhs.shape, params)
    out_dtype = _conv_dtype(lhs.dtype, preferred_element_type)
    # The input as (batch, spatial..., feature), dilated and padded with zeros.
    x = np.transpose(lhs, (lhs_spec[0], *lhs_spec[2:], lhs_spec[1]))
    config = [(0, 0, 0)] + [
        (lo, hi, d - 1) for (lo, hi), d in zip(padding, lhs_dilation)
    ]
    x = pad_value(x, np.zeros((), x.dtype), config + [(0, 0, 0)])
    w = np.transpose(rhs, rhs_spec)  # (out feature, in feature, window...)
    o, window = w.shape[0], w.shape[2:]
    canonical = _take(out_shape, out_spec)
    if 0 in canonical or 0 in w.shape:
        return np.zeros(out_shape, out_dtype)
    groups = (feature_group_count, batch_group_count)
    out_space = canonical[2:]
    if prod(window) <= max(_OFFSET_LOOP, prod(out_space)):
        compute = _compute_dtype(lhs.dtype, out_dtype)
        out = _conv_by_offsets(
            x.astype(compute, copy=False),
            w.astype(compute, copy=False),
            window_strides,
            rhs_dilation,
            out_space,
            groups,
        )
    else:
        view = window_view(x, spatial, window, window_strides, rhs_dilation)
        out = _conv_by_patches(view, w, groups, preferred_element_type)
    out = out.reshape(canonical[0], *out_space, o)
    # From (batch, spatial..., feature) to the layout out_spec asks for.
    canonical_axes = (0, nsp + 1, *range(1, nsp + 1))
    out = np.transpose(out, _untake(canonical_axes, out_spec))
    return out if out.dtype == out_dtype else convert_value(out, out_dtype)


# Kernels with at most this many window positions (or at most as many as there are
# output positions) are applied one window offset at a time.
_OFFSET_LOOP = 64


def _conv_by_offsets(x, w, strides, dilation, out_space, groups):
    """Sum over window offsets of (input slice) @ (kernel at that offset): one
    (batched) matrix product per offset, no copy of the patches. `x` is (batch,
    padded spatial..., feature), `w` is (out, in, window...); returns (batch,
    out spatial..., out features)."""
    fgc, bgc = groups
    n, c = x.shape[0], x.shape[-1]
    o, i = w.shape[:2]
    nsp = len(out_space)
    out = None
    for offset in np.ndindex(*w.shape[2:]):
        index = tuple(
            slice(k * d, k * d + (m - 1) * s + 1, s)
            for k, d, m, s in zip(offset, dilation, out_space, strides)
        )
        piece = x[(slice(None), *index, slice(None))]  # (batch, out spatial..., c)
        w_k = w[(slice(None), slice(None), *offset)]  # (o, i)
        if fgc > 1:  # (.., g, 1, i) @ (g, i, o/g)
            kernel = np.ascontiguousarray(
                w_k.reshape(fgc, o // fgc, i).transpose(0, 2, 1)
            )
            term = np.matmul(piece.reshape(*piece.shape[:-1], fgc, 1, i), kernel)
        elif bgc > 1:  # (g, n/g, .., c) @ (g, 1.., c, o/g)
            kernel = w_k.reshape(bgc, o // bgc, c).transpose(0, 2, 1)
            kernel = np.ascontiguousarray(kernel).reshape(bgc, *(1,) * nsp, c, -1)
            term = np.matmul(piece.reshape(bgc, n // bgc, *piece.shape[1:]), kernel)
            term = np.moveaxis(term, 0, -2)  # (n/g, .., g, o/g)
        else:
            term = np.matmul(piece, np.ascontiguousarray(w_k.T))
        if out is None:
            out = np.array(term)
        else:
            out += term.reshape(out.shape)
    return out


def _conv_by_patches(view, w, groups, preferred_element_type):
    """im2col: every patch copied into one matrix that meets the kernel in one
    (batched) matrix product. `view` is (batch, out spatial..., feature, window...)."""
    fgc, bgc = groups
    o, i, window = w.shape[0], w.shape[1], w.shape[2:]
    n, nsp = view.shape[0], len(window)
    positions, patch = prod(view.shape[1 : nsp + 1]), i * prod(window)
    count = fgc * bgc
    kernel = np.ascontiguousarray(
        np.moveaxis(w.reshape(count, o // count, patch), 1, 2)
    )  # (groups, patch, out features per group)
    if fgc > 1:
        patches = view.reshape(n * positions, count, patch).transpose(1, 0, 2)
    elif bgc > 1:
        patches = view.reshape(count, n // count * positions, patch)
    else:
        patches, kernel = view.reshape(n * positions, patch), kernel[0]
    dims = (((patches.ndim - 1,), (kernel.ndim - 2,)), ((), ()))
    if count > 1:
        dims = (((2,), (1,)), ((0,), (0,)))
    out = dot_general_value(patches, kernel, dims, preferred_element_type)
    if count > 1:  # (groups, batch * positions, features per group)
        out = out.transpose(1, 0, 2)
    return out


def _conv_impl(lhs, rhs, **params):
    return [conv_value(lhs, rhs, **params)]


# --------------------------------------------------------------------------------------
# Derivatives: each operand's cotangent is a convolution too


def _swap(spec):
    return (spec[1], spec[0], *spec[2:])


def _merge_axes(x, src, dst):
    """Axis `src` folded into axis `dst` as its major part (`dst` counts the axes of
    `x`); the merged axis ends up where `dst` was among the remaining axes."""
    ndim = np.ndim(x)
    perm = [a for a in range(ndim) if a != src]
    at = perm.index(dst)
    perm.insert(at, src)
    if perm != list(range(ndim)):
        x = transpose(x, perm)
    shape = list(np.shape(x))
    shape[at : at + 2] = [shape[at] * shape[at + 1]]
    return reshape(x, shape)


def _split_axis(x, axis, sizes):
    """Axis `axis` split into consecutive axes of `sizes` (major first)."""
    shape = list(np.shape(x))
    shape[axis : axis + 1] = list(sizes)
    return reshape(x, shape)


def _regroup_kernel(rhs, rhs_spec, groups):
    """The kernel with the group part of its output-feature axis moved into its
    input-feature axis: (G * O', I) becomes (O', G * I)."""
    o_axis, i_axis = rhs_spec[0], rhs_spec[1]
    size = np.shape(rhs)[o_axis]
    rhs = _split_axis(rhs, o_axis, (groups, size // groups))
    # The output-feature axis is now (groups, O') at o_axis, o_axis + 1.
    i_now = i_axis + 1 if i_axis > o_axis else i_axis
    return _merge_axes(rhs, o_axis, i_now)


def _as_dtype(x, dtype):
    return x if np.dtype(x.dtype) == dtype else convert_element_type(x, dtype)


def _conv_transpose_lhs(ct, lhs, rhs, **params):
    if type(ct) is ad.Zero:
        return None
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    lhs_shape, rhs_shape = lhs.aval.shape, np.shape(rhs)
    lhs_dtype = lhs.aval.dtype
    window = _take(rhs_shape, rhs_spec)[2:]
    in_space = _take(lhs_shape, lhs_spec)[2:]
    out_space = _take(np.shape(ct), out_spec)[2:]
    if 0 in np.shape(ct) or 0 in in_space:
        from jaxlite.lax.constructors import full

        return full(lhs_shape, 0, lhs_dtype)
    padding = []
    for k, n, m, (lo, _), s, ld, rd in zip(
        window,
        in_space,
        out_space,
        params["padding"],
        params["window_strides"],
        params["lhs_dilation"],
        params["rhs_dilation"],
    ):
        low = (k - 1) * rd - lo
        padding.append((low, (n - 1) * ld + lo - (m - 1) * s))
    kernel = rev(rhs, tuple(rhs_spec[2:]))
    groups = max(fgc, bgc)
    if groups > 1:
        kernel = _regroup_kernel(kernel, rhs_spec, groups)
    kernel = _as_dtype(kernel, np.dtype(ct.dtype))
    out = conv_general_dilated_p.bind(
        ct,
        kernel,
        batch_group_count=1,
        dimension_numbers=ConvDimensionNumbers(out_spec, _swap(rhs_spec), lhs_spec),
        feature_group_count=groups,
        lhs_dilation=params["window_strides"],
        padding=tuple(padding),
        precision=params["precision"],
        preferred_element_type=None,
        rhs_dilation=params["rhs_dilation"],
        window_strides=params["lhs_dilation"],
    )
    if bgc > 1:  # output features (batch group, C): the groups go back into the batch
        c_axis = lhs_spec[1]
        out = _split_axis(out, c_axis, (bgc, np.shape(out)[c_axis] // bgc))
        n_axis = lhs_spec[0] + 1 if lhs_spec[0] > c_axis else lhs_spec[0]
        out = _merge_axes(out, c_axis, n_axis)
    return _as_dtype(out, lhs_dtype)


def _conv_transpose_rhs(ct, lhs, rhs, **params):
    if type(ct) is ad.Zero:
        return None
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    lhs_shape, rhs_shape = np.shape(lhs), rhs.aval.shape
    rhs_dtype = rhs.aval.dtype
    window = _take(rhs_shape, rhs_spec)[2:]
    in_space = _take(lhs_shape, lhs_spec)[2:]
    out_space = _take(np.shape(ct), out_spec)[2:]
    if 0 in np.shape(ct) or 0 in in_space:
        from jaxlite.lax.constructors import full

        return full(rhs_shape, 0, rhs_dtype)
    padding = []
    for k, n, m, (lo, _), s, ld, rd in zip(
        window,
        in_space,
        out_space,
        params["padding"],
        params["window_strides"],
        params["lhs_dilation"],
        params["rhs_dilation"],
    ):
        high = (k - 1) * rd + (m - 1) * s - lo - (n - 1) * ld
        padding.append((lo, high))
    out = conv_general_dilated_p.bind(
        _as_dtype(lhs, np.dtype(ct.dtype)),
        ct,
        batch_group_count=fgc,
        dimension_numbers=ConvDimensionNumbers(
            _swap(lhs_spec), _swap(out_spec), _swap(rhs_spec)
        ),
        feature_group_count=bgc,
        lhs_dilation=params["lhs_dilation"],
        padding=tuple(padding),
        precision=params["precision"],
        preferred_element_type=None,
        rhs_dilation=params["window_strides"],
        window_strides=params["rhs_dilation"],
    )
    return _as_dtype(out, rhs_dtype)


def _conv_batch(axis_size, vals, dims, **params):
    """Fold the mapped axis into the convolution: into the feature groups when both
    operands are mapped, the batch when only the input is, the output features when
    only the kernel is."""
    (lhs, rhs), (ld, rd) = vals, dims
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    size = axis_size
    lhs_shape = _unbatched_shape(lhs, ld)
    rhs_shape = _unbatched_shape(rhs, rd)
    out_shape = _conv_shape(lhs_shape, rhs_shape, params)
    if size == 0:  # no examples: no convolution to fold them into
        from jaxlite.lax.constructors import full

        dtype = _conv_dtype(np.dtype(lhs.dtype), params["preferred_element_type"])
        return [full((0, *out_shape), 0, dtype)], [0]
    if ld is not not_mapped and rd is not not_mapped:
        lhs, rhs = batching.moveaxis(lhs, ld, 0), batching.moveaxis(rhs, rd, 0)
        if bgc > 1:
            lhs = _merge_axes(lhs, 0, lhs_spec[0] + 1)
            params = dict(params, batch_group_count=bgc * size)
        else:
            lhs = _merge_axes(lhs, 0, lhs_spec[1] + 1)
            params = dict(params, feature_group_count=fgc * size)
        rhs = _merge_axes(rhs, 0, rhs_spec[0] + 1)
        out = conv_general_dilated_p.bind(lhs, rhs, **params)
        f = out_spec[1]
        return [_split_axis(out, f, (size, out_shape[f]))], [f]
    if ld is not not_mapped:
        lhs = batching.moveaxis(lhs, ld, 0)
        b = lhs_spec[0] + 1
        if bgc > 1:  # the mapped axis goes inside each batch group: (G, size * N')
            lhs = _split_axis(lhs, b, (bgc, np.shape(lhs)[b] // bgc))
            lhs = _merge_axes(lhs, 0, b + 1)
            lhs = _merge_axes(lhs, b - 1, b)
        else:
            lhs = _merge_axes(lhs, 0, b)
        out = conv_general_dilated_p.bind(lhs, rhs, **params)
        n = out_spec[0]
        return [_split_axis(out, n, (size, out_shape[n]))], [n]
    rhs = batching.moveaxis(rhs, rd, 0)
    o = rhs_spec[0] + 1
    groups = max(fgc, bgc)
    if groups > 1:  # the mapped axis goes inside each group: (G, size * O')
        rhs = _split_axis(rhs, o, (groups, np.shape(rhs)[o] // groups))
        rhs = _merge_axes(rhs, 0, o + 1)
        rhs = _merge_axes(rhs, o - 1, o)
    else:
        rhs = _merge_axes(rhs, 0, o)
    out = conv_general_dilated_p.bind(lhs, rhs, **params)
    f = out_spec[1]
    out = _split_axis(out, f, (groups, size, out_shape[f] // groups))
    out = batching.moveaxis(out, f + 1, f)
    out = _merge_axes(out, f + 1, f + 2)
    return [out], [f]


def _unbatched_shape(x, bdim):
    shape = list(np.shape(x))
    if bdim is not not_mapped:
        del shape[bdim]
    return tuple(shape)


conv_general_dilated_p = Primitive("conv_general_dilated")
impl_rules[conv_general_dilated_p] = _conv_impl
abstract_eval_rules[conv_general_dilated_p] = _conv_abstract
ad.defbilinear(conv_general_dilated_p, _conv_transpose_lhs, _conv_transpose_rhs)
batching.batch_rules[conv_general_dilated_p] = _conv_batch


# --------------------------------------------------------------------------------------
# Public functions


def _ints(values, name):
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(
            f"conv_general_dilated {name} must be a sequence of ints, got {values!r}"
        ) from None


def _explicit_padding(padding):
    try:
        pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise ValueError(
            "padding argument to conv_general_dilated should be a string or a sequence "
            f"of (low, high) pairs, got {padding}"
        ) from None
    return pads


def conv_general_dilated(
    lhs,
    rhs,
    window_strides,
    padding,
    lhs_dilation=None,
    rhs_dilation=None,
    dimension_numbers=None,
    feature_group_count=1,
    batch_group_count=1,
    precision=None,
    preferred_element_type=None,
    *,
    out_sharding=None,
):
    """General n-dimensional convolution with dilation, groups and any layout.

    `padding` is 'SAME', 'SAME_LOWER', 'VALID' or a sequence of (low, high) pairs;
    `dimension_numbers` is None (NCHW / OIHW / NCHW), three spec strings such as
    ('NHWC', 'HWIO', 'NHWC'), or a `ConvDimensionNumbers`.
    """
    lhs, rhs = operand(lhs), operand(rhs)
    lhs_shape, rhs_shape = np.shape(lhs), np.shape(rhs)
    dnums = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    nsp = len(lhs_shape) - 2
    window_strides = _ints(window_strides, "window_strides")
    lhs_dilation = (
        (1,) * nsp if lhs_dilation is None else _ints(lhs_dilation, "lhs_dilation")
    )
    rhs_dilation = (
        (1,) * nsp if rhs_dilation is None else _ints(rhs_dilation, "rhs_dilation")
    )
    if isinstance(padding, str):
        if lhs_dilation.count(1) != len(lhs_dilation):
            raise ValueError(
                "String padding is not implemented for transposed convolution using "
                "this op. Please either exactly specify the required padding or use "
                "conv_transpose."
            )
        window = [
            dilate_dim(k, d)
            for k, d in zip(_take(rhs_shape, dnums.rhs_spec)[2:], rhs_dilation)
        ]
        in_space = _take(lhs_shape, dnums.lhs_spec)[2:]
        padding = padtype_to_pads(in_space, window, window_strides, padding)
    padding = _explicit_padding(padding)
    if preferred_element_type is not None:
        preferred_element_type = dtypes.canonicalize_user_dtype(
            preferred_element_type, "conv_general_dilated"
        )
    dnums = ConvDimensionNumbers(*(tuple(int(a) for a in spec) for spec in dnums))
    return conv_general_dilated_p.bind(
        lhs,
        rhs,
        batch_group_count=operator.index(batch_group_count),
        dimension_numbers=dnums,
        feature_group_count=operator.index(feature_group_count),
        lhs_dilation=lhs_dilation,
        padding=padding,
        precision=canonicalize_precision(precision),
        preferred_element_type=preferred_element_type,
        rhs_dilation=rhs_dilation,
        window_strides=window_strides,
    )


def conv(
    lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None
):
    """Convolution in NCHW / OIHW layout with strides and padding only."""
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def conv_with_general_padding(
    lhs,
    rhs,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    precision=None,
    preferred_element_type=None,
):
    """Convolution in NCHW / OIHW layout with padding and dilations."""
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


_TRANSPOSE_DEFAULTS = {
    2: ("NC", "IO", "NC"),
    3: ("NHC", "HIO", "NHC"),
    4: ("NHWC", "HWIO", "NHWC"),
    5: ("NHWDC", "HWDIO", "NHWDC"),
}


def conv_transpose(
    lhs,
    rhs,
    strides,
    padding,
    rhs_dilation=None,
    dimension_numbers=None,
    transpose_kernel=False,
    precision=None,
    preferred_element_type=None,
    use_consistent_padding=False,
):
    """The "deconvolution": the transpose of a strided convolution, computed as a
    convolution of the input dilated by `strides`. Default layout is channels-last
    (NHWC / HWIO / NHWC); `transpose_kernel=True` flips the kernel and swaps its
    feature axes, giving the exact gradient of `conv_general_dilated`."""
    lhs, rhs = operand(lhs), operand(rhs)
    ndim = np.ndim(lhs)
    if ndim != np.ndim(rhs) or ndim < 2:
        raise ValueError(
            "conv_transpose requires lhs and rhs of the same rank, at least 2, got "
            f"shapes {np.shape(lhs)} and {np.shape(rhs)}."
        )
    if dimension_numbers is None:
        if ndim not in _TRANSPOSE_DEFAULTS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_DEFAULTS[ndim]
    dn = conv_dimension_numbers(np.shape(lhs), np.shape(rhs), dimension_numbers)
    window = _take(np.shape(rhs), dn.rhs_spec)[2:]
    if rhs_dilation is None:
        rhs_dilation = (1,) * (ndim - 2)
    strides = tuple(strides)
    if use_consistent_padding or padding in ("SAME", "VALID"):
        per_dim = [padding] * len(strides) if isinstance(padding, str) else padding
        pads = tuple(
            _conv_transpose_padding(
                dilate_dim(k, r), s, p if isinstance(p, str) else tuple(p)
            )
            for k, r, s, p in zip(window, rhs_dilation, strides, per_dim)
        )
    else:
        pads = padding
    if transpose_kernel:
        rhs = rev(rhs, tuple(dn.rhs_spec[2:]))
        perm = list(range(ndim))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = dn.rhs_spec[1], dn.rhs_spec[0]
        rhs = transpose(rhs, perm)
    return conv_general_dilated(
        lhs,
        rhs,
        (1,) * (ndim - 2),
        pads,
        strides,
        rhs_dilation,
        dn,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def _patch_kernel(dtype, channels, filter_shape, rhs_spec):
    """The one-hot kernel whose grouped convolution copies each window position of
    each channel into its own output feature, ordered (channel, window position)."""
    size = prod(filter_shape)
    eye = np.eye(size, dtype=dtype)
    kernel = np.broadcast_to(eye, (channels, size, size)).reshape(
        channels * size, 1, *filter_shape
    )
    return np.ascontiguousarray(np.transpose(kernel, np.argsort(rhs_spec)))


def conv_general_dilated_patches(
    lhs,
    filter_shape,
    window_strides,
    padding,
    lhs_dilation=None,
    rhs_dilation=None,
    dimension_numbers=None,
    precision=None,
    preferred_element_type=None,
):
    """The patches `conv_general_dilated` would multiply with a kernel of spatial
    shape `filter_shape`: output features are (input feature, window position...),
    flattened with the input feature major."""
    lhs = operand(lhs)
    filter_shape = tuple(operator.index(k) for k in filter_shape)
    dn = conv_dimension_numbers(np.shape(lhs), (1, 1) + filter_shape, dimension_numbers)
    channels = np.shape(lhs)[dn.lhs_spec[1]]
    kernel = _patch_kernel(np.dtype(lhs.dtype), channels, filter_shape, dn.rhs_spec)
    return conv_general_dilated(
        lhs,
        kernel,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        dn,
        feature_group_count=channels,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def conv_general_dilated_local(
    lhs,
    rhs,
    window_strides,
    padding,
    filter_shape,
    lhs_dilation=None,
    rhs_dilation=None,
    dimension_numbers=None,
    precision=None,
):
    """A locally connected ("unshared") convolution: a different kernel at each output
    position. `rhs` has the output's spatial shape and an input-feature axis of size
    `C * prod(filter_shape)` (channel major)."""
    lhs, rhs = operand(lhs), operand(rhs)
    lhs_precision = precision[0] if isinstance(precision, (tuple, list)) else precision
    patches = conv_general_dilated_patches(
        lhs,
        filter_shape,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        dimension_numbers,
        lhs_precision,
    )
    dn = conv_dimension_numbers(
        np.shape(lhs), (1, 1) + tuple(filter_shape), dimension_numbers
    )
    lhs_spec, rhs_spec, out_spec = dn
    nsp = len(lhs_spec) - 2
    # patches are laid out as the output (out_spec); contract their features with the
    # kernel's input features, position by position.
    dims = (
        ((out_spec[1],), (rhs_spec[1],)),
        (tuple(out_spec[2:]), tuple(rhs_spec[2:])),
    )
    out = dot_general(patches, rhs, dims, precision)
    # `out` is (spatial..., batch, out feature): put it in the output layout.
    canonical_axes = (nsp, nsp + 1, *range(nsp))
    return transpose(out, _untake(canonical_axes, out_spec))
