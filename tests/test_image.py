"""Tests for jaxlite.image (resize, scale_and_translate).

Values and dtypes are compared with real JAX where it is
installed, with NumPy closed forms, and gradients with finite differences.
"""

import numpy as np
import pytest
from tests.testing import check_grads

import jaxlite
import jaxlite.image
import jaxlite.numpy as jnp

# ----------------------------------------------------------------------- image

IMG = np.random.RandomState(0).rand(2, 7, 9, 3).astype(np.float32)
METHODS = ["nearest", "linear", "bilinear", "trilinear", "cubic", "lanczos3",
           "lanczos5", "cubic-pytorch", "area"]  # fmt: skip


@pytest.mark.parametrize("method", METHODS)
def test_resize_matches_jax(method):
    jax = pytest.importorskip("jax")
    for shape in [(2, 14, 5, 3), (1, 3, 20, 2)]:
        for aa in (True, False):
            ours = jaxlite.image.resize(IMG, shape, method, antialias=aa)
            theirs = jax.image.resize(IMG, shape, method, antialias=aa)
            assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
            np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=2e-6)
    ints = np.arange(12).reshape(3, 4)
    for m in ("nearest", "linear"):
        o = jaxlite.image.resize(ints, (5, 2), m)
        t = jax.image.resize(ints, (5, 2), m)
        assert o.dtype == t.dtype
        np.testing.assert_allclose(o, t, rtol=1e-6)


@pytest.mark.parametrize("method", ["linear", "cubic", "lanczos3", "cubic-pytorch",
                                    jaxlite.image.ResizeMethod.AREA])  # fmt: skip
def test_scale_and_translate_matches_jax(method):
    jax = pytest.importorskip("jax")
    scale = np.array([1.3, 0.6], np.float32)
    trans = np.array([0.5, -1.0], np.float32)
    jm = method if isinstance(method, str) else jax.image.ResizeMethod[method.name]
    for aa in (True, False):
        ours = jaxlite.image.scale_and_translate(
            IMG, (2, 10, 6, 3), (1, 2), scale, trans, method, antialias=aa
        )
        theirs = jax.image.scale_and_translate(
            IMG, (2, 10, 6, 3), (1, 2), scale, trans, jm, antialias=aa
        )
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_resize_identity_closed_form_grad_jit_vmap():
    rm = jaxlite.image.ResizeMethod
    assert rm.from_string("bilinear") is rm.LINEAR and rm.CUBIC.value == 4
    x = jnp.asarray(IMG[0, :, :, 0])
    np.testing.assert_allclose(jaxlite.image.resize(x, x.shape, "cubic"), x)
    # upsampling by 2 with linear: interior pixels average neighbours 3:1
    up = np.asarray(jaxlite.image.resize(np.array([0.0, 4.0, 8.0]), (6,), "linear"))
    np.testing.assert_allclose(up, [0.0, 1.0, 3.0, 5.0, 7.0, 8.0], atol=1e-6)
    small = jnp.asarray(IMG[0, :4, :5, 0])
    check_grads(lambda im: jaxlite.image.resize(im, (6, 3), "lanczos3"), (small,),
                order=1, atol=2e-2, rtol=2e-2)  # fmt: skip
    f = jaxlite.jit(
        lambda im: jaxlite.image.scale_and_translate(
            im,
            (5, 5),
            (0, 1),
            jnp.asarray([0.8, 1.2]),
            jnp.asarray([0.1, 0.0]),
            "linear",
        )
    )
    batched = jaxlite.vmap(f)(jnp.asarray(IMG[:, :4, :5, 0]))
    for i in range(2):
        np.testing.assert_allclose(batched[i], f(IMG[i, :4, :5, 0]), rtol=1e-6)


def test_image_errors():
    with pytest.raises(ValueError, match="Unknown resize method"):
        jaxlite.image.resize(IMG, IMG.shape, "bogus")
    with pytest.raises(ValueError, match="shape must have length equal"):
        jaxlite.image.resize(IMG, (3, 3), "linear")
    with pytest.raises(ValueError, match="Nearest neighbor resampling is not"):
        jaxlite.image.scale_and_translate(IMG, IMG.shape, (1,), [1.0], [0.0], "nearest")
