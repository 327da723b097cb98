"""conv_general_dilated and the conv helpers of lax: values against a direct NumPy
convolution and against JAX, printed jaxprs, derivatives of both operands (finite
differences and JAX), vmap against a loop, jit against eager, and errors."""

import re

import numpy as np
import pytest

import jaxlite
from jaxlite import lax
from testing import check_close, check_grads

# --------------------------------------------------------------------------------------
# A direct convolution in canonical layout (N, C, spatial...) x (O, I, spatial...),
# one window offset at a time: independent of the im2col implementation.


def np_conv(x, w, strides, pads, lhs_dil=None, rhs_dil=None, fgc=1, bgc=1):
    nsp = x.ndim - 2
    lhs_dil = lhs_dil or (1,) * nsp
    rhs_dil = rhs_dil or (1,) * nsp
    n, c = x.shape[:2]
    o, i = w.shape[:2]
    # Dilate the input, then pad (negative pads crop).
    dil_shape = [max(0, (s - 1) * d + 1) for s, d in zip(x.shape[2:], lhs_dil)]
    xd = np.zeros((n, c, *dil_shape), np.float64)
    xd[(slice(None), slice(None), *(slice(None, None, d) for d in lhs_dil))] = x
    for ax, (lo, hi) in enumerate(pads):
        ax += 2
        if lo < 0:
            xd = np.take(xd, range(-lo, xd.shape[ax]), axis=ax)
        if hi < 0:
            xd = np.take(xd, range(0, xd.shape[ax] + hi), axis=ax)
        widths = [(0, 0)] * xd.ndim
        widths[ax] = (max(lo, 0), max(hi, 0))
        xd = np.pad(xd, widths)
    span = [(k - 1) * d + 1 for k, d in zip(w.shape[2:], rhs_dil)]
    out_sp = [
        max((p - s) // st + 1, 0) for p, s, st in zip(xd.shape[2:], span, strides)
    ]
    groups = max(fgc, bgc)
    og = o // groups
    out = np.zeros((n // bgc, o, *out_sp))
    for off in np.ndindex(*w.shape[2:]):
        index = tuple(
            slice(k * d, k * d + (m - 1) * s + 1, s)
            for k, d, m, s in zip(off, rhs_dil, out_sp, strides)
        )
        patch = xd[(slice(None), slice(None), *index)]
        for g in range(groups):
            wg = w[(slice(g * og, (g + 1) * og), slice(None), *off)]
            if bgc > 1:
                pg = patch[g * (n // bgc) : (g + 1) * (n // bgc)]
            else:
                pg = patch[:, g * i : (g + 1) * i]
            out[:, g * og : (g + 1) * og] += np.einsum("nc...,oc->no...", pg, wg)
    return out


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


# (x shape, w shape, strides, padding, lhs_dilation, rhs_dilation, fgc, bgc), canonical
# NCHW / OIHW layout.
CASES = [
    ((2, 3, 7, 6), (4, 3, 3, 2), (1, 1), "SAME", None, None, 1, 1),
    ((2, 3, 7, 6), (4, 3, 3, 2), (2, 1), "VALID", None, None, 1, 1),
    ((2, 3, 8, 7), (4, 3, 3, 2), (2, 1), ((1, 0), (0, 2)), (1, 2), (2, 1), 1, 1),
    ((2, 4, 9), (6, 2, 3), (2,), "SAME_LOWER", None, (2,), 2, 1),
    ((4, 3, 9), (6, 3, 3), (1,), ((1, 1),), None, None, 1, 2),
    ((1, 2, 4, 5, 3), (2, 2, 2, 2, 2), (1, 2, 1), ((1, -1), (0, 0), (2, 1)), (2, 1, 1), None, 1, 1),
    ((2, 2, 5), (3, 2, 4), (1,), ((-2, 0),), None, (2,), 1, 1),
    # Kernels larger than the output: evaluated by im2col rather than per offset.
    ((2, 4, 12, 11), (4, 2, 9, 9), (1, 1), "VALID", None, None, 2, 1),
    ((4, 2, 12, 12), (4, 2, 9, 8), (2, 1), ((1, 0), (0, 0)), None, None, 1, 2),
]  # fmt: skip


def _explicit(padding, x_shape, w_shape, strides, rhs_dil):
    if not isinstance(padding, str):
        return padding
    window = [(k - 1) * d + 1 for k, d in zip(w_shape[2:], rhs_dil or (1,) * 10)]
    return lax.padtype_to_pads(x_shape[2:], window, strides, padding)


@pytest.mark.parametrize("case", CASES)
def test_values_match_direct_convolution(case):
    xs, ws, strides, padding, ld, rd, fgc, bgc = case
    rng = np.random.default_rng(0)
    x, w = _f32(rng, *xs), _f32(rng, *ws)
    out = lax.conv_general_dilated(x, w, strides, padding, ld, rd, None, fgc, bgc)
    pads = _explicit(padding, xs, ws, strides, rd)
    check_close(out, np_conv(x, w, strides, pads, ld, rd, fgc, bgc).astype(np.float32),
                atol=1e-5, rtol=1e-5)  # fmt: skip
    jitted = jaxlite.jit(
        lambda x, w: lax.conv_general_dilated(x, w, strides, padding, ld, rd, None, fgc, bgc)
    )  # fmt: skip
    check_close(jitted(x, w), out)


@pytest.mark.parametrize("case", [CASES[k] for k in (0, 2, 3, 4, 8)])
def test_values_and_grads_match_jax(case):
    jax = pytest.importorskip("jax")
    xs, ws, strides, padding, ld, rd, fgc, bgc = case
    rng = np.random.default_rng(1)
    x, w = _f32(rng, *xs), _f32(rng, *ws)

    def f(m):
        return lambda x, w: m.conv_general_dilated(
            x, w, strides, padding, ld, rd, None, fgc, bgc
        )

    out, ref = f(lax)(x, w), f(jax.lax)(x, w)
    assert out.shape == ref.shape and out.dtype == ref.dtype
    check_close(np.asarray(out), np.asarray(ref), atol=1e-5, rtol=1e-5)
    loss = lambda m: lambda x, w: (f(m)(x, w) ** 2).sum()  # noqa: E731
    got = jaxlite.grad(loss(lax), argnums=(0, 1))(x, w)
    want = jax.grad(loss(jax.lax), argnums=(0, 1))(x, w)
    for g, r in zip(got, want):
        check_close(np.asarray(g), np.asarray(r), atol=1e-4, rtol=1e-4)


LAYOUTS = [
    ("NHWC", "HWIO", "NHWC"),
    ("NCHW", "OIHW", "NHWC"),
    ("NHWC", "OHWI", "NCHW"),
    ("CNHW", "IWHO", "HNWC"),
]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_dimension_number_layouts(layout):
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(2)
    canon_x, canon_w = _f32(rng, 2, 3, 6, 5), _f32(rng, 4, 3, 3, 2)
    lhs, rhs, out_spec = layout
    x = np.transpose(canon_x, ["NCHW".index(c) for c in lhs])
    spatial = [c for c in rhs if c not in "OI"]  # kernel spatial order: H, W or W, H
    w_axes = {"O": 0, "I": 1, spatial[0]: 2, spatial[1]: 3}
    w = np.transpose(canon_w, [w_axes[c] for c in rhs])
    for dn in (layout, lax.conv_dimension_numbers(x.shape, w.shape, layout)):
        out = lax.conv_general_dilated(x, w, (1, 2), "SAME", dimension_numbers=dn)
        ref = jax.lax.conv_general_dilated(
            x, w, (1, 2), "SAME", dimension_numbers=layout
        )
        check_close(np.asarray(out), np.asarray(ref), atol=1e-5, rtol=1e-5)
        grads = jaxlite.grad(
            lambda x, w, dn=dn: lax.conv_general_dilated(x, w, (1, 2), "SAME", dimension_numbers=dn).sum(),
            argnums=(0, 1),
        )(x, w)  # fmt: skip
        want = jax.grad(
            lambda x, w: jax.lax.conv_general_dilated(x, w, (1, 2), "SAME", dimension_numbers=layout).sum(),
            argnums=(0, 1),
        )(x, w)  # fmt: skip
        for g, r in zip(grads, want):
            check_close(np.asarray(g), np.asarray(r), atol=1e-4, rtol=1e-4)


GRAD_CASES = [
    ((1, 2, 5, 4), (2, 2, 2, 3), (2, 1), ((1, 0), (1, 1)), None, (1, 2), 1, 1),
    ((1, 4, 6), (4, 2, 3), (2,), ((0, 1),), (2,), None, 2, 1),
    ((4, 2, 5), (4, 2, 2), (1,), ((1, 0),), None, (2,), 1, 2),
]  # fmt: skip


@pytest.mark.parametrize("case", GRAD_CASES)
def test_check_grads_both_operands(case):
    xs, ws, strides, padding, ld, rd, fgc, bgc = case
    rng = np.random.default_rng(3)
    x, w = _f32(rng, *xs), _f32(rng, *ws)

    def f(x, w):
        return lax.conv_general_dilated(x, w, strides, padding, ld, rd, None, fgc, bgc)

    check_grads(f, (x, w), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("case", CASES[:5])
def test_vmap_matches_loop(case):
    xs, ws, strides, padding, ld, rd, fgc, bgc = case
    rng = np.random.default_rng(4)
    xb, wb = _f32(rng, 3, *xs), _f32(rng, 3, *ws)

    def f(x, w):
        return lax.conv_general_dilated(x, w, strides, padding, ld, rd, None, fgc, bgc)

    for in_axes in [(0, 0), (0, None), (None, 0), (2, 1)]:
        x = xb if in_axes[0] is not None else xb[0]
        w = wb if in_axes[1] is not None else wb[0]
        if in_axes == (2, 1):
            x, w = np.moveaxis(xb, 0, 2), np.moveaxis(wb, 0, 1)
        out = jaxlite.vmap(f, in_axes=in_axes)(x, w)
        loop = [
            f(xb[k] if in_axes[0] is not None else xb[0],
              wb[k] if in_axes[1] is not None else wb[0])
            for k in range(3)
        ]  # fmt: skip
        check_close(out, np.stack(loop), atol=1e-5, rtol=1e-5, err_msg=str(in_axes))


def test_grad_of_vmap_and_vmap_of_grad():
    rng = np.random.default_rng(5)
    x, w = _f32(rng, 3, 2, 2, 6), _f32(rng, 4, 1, 2)

    def loss(x, w):
        return (
            lax.conv_general_dilated(x, w, (1,), "SAME", feature_group_count=2) ** 2
        ).sum()

    per_example = jaxlite.vmap(jaxlite.grad(loss, argnums=1), in_axes=(0, None))(x, w)
    loop = np.stack([jaxlite.grad(loss, argnums=1)(x[k], w) for k in range(3)])
    check_close(per_example, loop, atol=1e-5, rtol=1e-5)
    total = jaxlite.grad(lambda w: jaxlite.vmap(loss, (0, None))(x, w).sum())(w)
    check_close(total, loop.sum(0), atol=1e-4, rtol=1e-4)


def _strip_sharding(text):
    text = re.sub(r"\n *out_sharding=None", "", text)
    text = re.sub(r" out_sharding=None", "", text)
    # jaxlite prints broadcast_in_dim's parameters; JAX leaves them out here.
    return re.sub(r"broadcast_in_dim\[\s*broadcast_dimensions=\(\)\s*shape=\([^)]*\)\s*sharding=None\s*\]", "broadcast_in_dim", text)  # fmt: skip


def test_printed_jaxprs_match_jax():
    jax = pytest.importorskip("jax")
    x, w = np.ones((2, 3, 8, 8), np.float32), np.ones((4, 3, 3, 3), np.float32)

    def fwd(m):
        return lambda x, w: m.conv_general_dilated(
            x, w, (2, 1), [(1, 0), (0, 1)], lhs_dilation=(1, 2), rhs_dilation=(2, 1),
            dimension_numbers=("NCHW", "OIHW", "NHWC"), precision="highest",
            preferred_element_type=np.float32,
        )  # fmt: skip

    def grad(m, g):
        return g(
            lambda x, w: m.conv_general_dilated(x, w, (2, 1), "VALID").sum(),
            argnums=(0, 1),
        )

    assert str(jaxlite.make_jaxpr(fwd(lax))(x, w)) == _strip_sharding(
        str(jax.make_jaxpr(fwd(jax.lax))(x, w))
    )
    assert _strip_sharding(str(jaxlite.make_jaxpr(grad(lax, jaxlite.grad))(x, w))) == (
        _strip_sharding(str(jax.make_jaxpr(grad(jax.lax, jax.grad))(x, w)))
    )


def test_dtypes_match_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(6)
    xi = rng.integers(-3, 4, (2, 3, 5, 5)).astype(np.int8)
    wi = rng.integers(-3, 4, (2, 3, 2, 2)).astype(np.int8)
    for kwargs in [
        {},
        {"preferred_element_type": np.int32},
        {"preferred_element_type": np.float32},
    ]:
        out = lax.conv_general_dilated(xi, wi, (1, 1), "SAME", **kwargs)
        ref = jax.lax.conv_general_dilated(xi, wi, (1, 1), "SAME", **kwargs)
        assert out.dtype == ref.dtype
        np.testing.assert_array_equal(np.asarray(out), np.asarray(ref))
    xb, wb = xi > 0, wi > 0
    out = lax.conv_general_dilated(xb, wb, (1, 1), "VALID")
    ref = jax.lax.conv_general_dilated(xb, wb, (1, 1), "VALID")
    assert out.dtype == ref.dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(out), np.asarray(ref))
    x16, w16 = xi.astype(np.float16), wi.astype(np.float16)
    out = lax.conv_general_dilated(
        x16, w16, (1, 1), "VALID", preferred_element_type=np.float32
    )
    assert out.dtype == np.float32
    grads = jaxlite.grad(
        lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID", preferred_element_type=np.float32).sum(),
        argnums=(0, 1),
    )(x16, w16)  # fmt: skip
    assert grads[0].dtype == grads[1].dtype == np.float16
    # Weak types: weak only when both operands are.
    weak = lax.broadcast(1.0, (1, 1, 3, 3))
    assert lax.conv(weak, weak, (1, 1), "VALID").weak_type
    assert not lax.conv(
        weak, np.ones((1, 1, 3, 3), np.float32), (1, 1), "VALID"
    ).weak_type


def test_conv_wrappers_match_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(7)
    x, w = _f32(rng, 2, 3, 7, 6), _f32(rng, 4, 3, 3, 2)
    pairs = [
        (lambda m: m.conv(x, w, (1, 2), "SAME")),
        (lambda m: m.conv_with_general_padding(x, w, (2, 1), [(1, 2), (0, 1)], (1, 2), (2, 1))),
    ]  # fmt: skip
    xt, wt = _f32(rng, 2, 5, 4, 3), _f32(rng, 3, 2, 3, 3)
    for padding in ["SAME", "VALID", [(1, 2), (0, 1)]]:
        for tk in [False, True]:
            pairs.append(lambda m, p=padding, tk=tk: m.conv_transpose(
                xt, wt, (2, 1), p, transpose_kernel=tk))  # fmt: skip
    pairs.append(lambda m: m.conv_transpose(xt, wt, (2, 2), ((0, 1), (2, 0)), rhs_dilation=(1, 2),
                                             use_consistent_padding=True))  # fmt: skip
    pairs.append(lambda m: m.conv_general_dilated_patches(x, (2, 3), (1, 2), "SAME"))
    pairs.append(lambda m: m.conv_general_dilated_patches(
        np.transpose(x, (0, 2, 3, 1)), (2, 2), (2, 1), "VALID", rhs_dilation=(1, 2),
        dimension_numbers=("NHWC", "HWIO", "NHWC")))  # fmt: skip
    wl = _f32(rng, 5, 3 * 6, 7, 3)
    pairs.append(lambda m: m.conv_general_dilated_local(x, wl, (1, 2), "SAME", (2, 3)))
    for make in pairs:
        out, ref = make(lax), make(jax.lax)
        assert out.shape == ref.shape and out.dtype == ref.dtype
        check_close(np.asarray(out), np.asarray(ref), atol=1e-4, rtol=1e-4)


def test_conv_transpose_with_transposed_kernel_is_the_gradient():
    rng = np.random.default_rng(8)
    x, w = _f32(rng, 1, 6, 4, 2), _f32(rng, 3, 2, 2, 4)
    dn = ("NHWC", "HWIO", "NHWC")
    y, vjp = jaxlite.vjp(
        lambda x: lax.conv_general_dilated(x, w, (2, 2), "SAME", dimension_numbers=dn),
        x,
    )
    ct = _f32(rng, *y.shape)
    (want,) = vjp(ct)
    got = lax.conv_transpose(
        ct, w, (2, 2), "SAME", dimension_numbers=dn, transpose_kernel=True
    )
    check_close(got, want, atol=1e-5, rtol=1e-5)  # fmt: skip


def test_shape_helpers_match_jax():
    jax = pytest.importorskip("jax")
    jl = jax.lax
    dn = ("NHWC", "HWIO", "NHWC")
    assert lax.conv_general_permutations(dn) == jl.conv_general_permutations(dn)
    for spec in [dn, ("NCHW", "OIWH", "CHWN"), None]:
        got = lax.conv_dimension_numbers((2, 8, 8, 3), (3, 3, 3, 4), spec)
        assert got == jl.conv_dimension_numbers((2, 8, 8, 3), (3, 3, 3, 4), spec)
        assert type(got).__name__ == "ConvDimensionNumbers"
    assert repr(lax.ConvDimensionNumbers((0, 1), (0, 1), (0, 1))) == repr(
        jl.ConvDimensionNumbers((0, 1), (0, 1), (0, 1))
    )
    args = [
        ((2, 8, 8, 3), (3, 3, 3, 4), (1, 2), p, dn)
        for p in ("SAME", "VALID", [(1, 0), (2, 2)])
    ]
    for a in args:
        assert lax.conv_general_shape_tuple(*a) == tuple(
            jl.conv_general_shape_tuple(*a)
        )
    for a in args[:2]:
        assert lax.conv_transpose_shape_tuple(*a) == tuple(
            jl.conv_transpose_shape_tuple(*a)
        )
    for a in [
        ((2, 3, 8, 8), (4, 3, 3, 3), (2, 2), [(1, 1), (1, 1)]),
        ((4, 3, 9), (4, 3, 2), (3,), "SAME", 2),
    ]:
        assert lax.conv_shape_tuple(*a) == tuple(jl.conv_shape_tuple(*a))
    for p in ("SAME", "SAME_LOWER", "VALID", "same"):
        assert lax.padtype_to_pads((8, 7, 1), (3, 2, 4), (2, 3, 1), p) == [
            tuple(q) for q in jl.padtype_to_pads((8, 7, 1), (3, 2, 4), (2, 3, 1), p)
        ]  # fmt: skip


@pytest.mark.parametrize(
    "call, error, phrase",
    [
        (lambda x, w: lax.conv_general_dilated(x, w[:, :2], (1, 1), "SAME"), ValueError,
         "lhs feature dimension size divided by feature_group_count must equal"),
        (lambda x, w: lax.conv_general_dilated(x, w, (1,), "SAME"), ValueError,
         "window and window_strides must have the same number of dimensions"),
        (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "FOO"), RuntimeError,
         "Unrecognized padding type"),
        (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", feature_group_count=2), ValueError,
         "feature_group_count must divide lhs feature dimension size"),
        (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", batch_group_count=3), ValueError,
         "batch_group_count must divide lhs batch dimension size"),
        (lambda x, w: lax.conv_general_dilated(x, w.astype(np.float16), (1, 1), "SAME"), TypeError,
         "requires arguments to have the same dtypes"),
        (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), [(1, 1)]), TypeError,
         "Wrong number of explicit pads for convolution: expected 2, got 1"),
        (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), [(1, 1, 1), (1, 1)]), ValueError,
         "should be a string or a sequence of (low, high) pairs"),
        (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW")), TypeError,
         "dimension_numbers list/tuple must be length 3"),
        (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHX")), TypeError,
         "must each have the same set of spatial characters"),
        (lambda x, w: lax.conv_general_dilated(x, w[None], (1, 1), "SAME"), TypeError,
         "convolution requires lhs and rhs ndim to be equal"),
        (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", lhs_dilation=(2, 2)), ValueError,
         "String padding is not implemented for transposed convolution"),
        (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID", rhs_dilation=(0, 1)), TypeError,
         "All dilations must be positive"),
        (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID", preferred_element_type=np.int32), TypeError,
         "Input type is incompatible with `preferred_element_type`"),
        (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID", preferred_element_type=np.float16), TypeError,
         "must not be narrower than the original type"),
        (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), ((-9, 0), (0, 0))), ValueError,
         "Negative padding is larger than the size of the corresponding dimension"),
    ],
)  # fmt: skip
def test_errors(call, error, phrase):
    x, w = np.ones((2, 3, 8, 8), np.float32), np.ones((4, 3, 3, 3), np.float32)
    with pytest.raises(error, match=re.escape(phrase)):
        call(x, w)
    with pytest.raises(error, match=re.escape(phrase)):
        jaxlite.jit(call)(x, w)


def test_errors_match_jax_phrases():
    jax = pytest.importorskip("jax")
    x, w = np.ones((2, 3, 8, 8), np.float32), np.ones((4, 2, 3, 3), np.float32)
    with pytest.raises(ValueError) as ours:
        lax.conv_general_dilated(x, w, (1, 1), "SAME")
    with pytest.raises(ValueError) as theirs:
        jax.lax.conv_general_dilated(x, w, (1, 1), "SAME")
    assert str(ours.value) == str(theirs.value)


def test_small_image_batch_matches_direct_convolution():
    # An NHWC image batch (the layout of small image models); its speed is
    # measured by benchmarks, not asserted here.
    rng = np.random.default_rng(9)
    x, w = _f32(rng, 64, 32, 32, 3), _f32(rng, 3, 3, 3, 16)
    f = jaxlite.jit(
        lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    )  # fmt: skip
    out = f(x, w)
    assert (out.shape, out.dtype) == ((64, 32, 32, 16), np.float32)
    ref = np_conv(
        x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), (1, 1), [(1, 1)] * 2
    )
    np.testing.assert_allclose(
        np.asarray(out), ref.transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-5
    )
