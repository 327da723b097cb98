"""rng_bit_generator (bit-exact with XLA on CPU), ragged_dot(_general) and the small
lax additions (platform_dependent, composite, pcast, dot-algorithm names)."""

import numpy as np
import pytest

import jaxlite
from jaxlite import lax
from testing import check_close, check_grads

KEYS = ([1, 2, 3, 4], [5, 6, 0xFFFFFFFF, 0xFFFFFFFF], [0xDEADBEEF, 12, 7, 9])
SHAPES = [((2, 3), np.uint32), ((5,), np.uint32), ((3, 4, 5), np.uint8),
          ((7,), np.uint16), ((), np.uint32), ((3, 3), np.uint32)]  # fmt: skip


@pytest.mark.parametrize("alg", [0, 1, 2])
def test_rng_bit_generator_matches_jax(alg):
    jax = pytest.importorskip("jax")
    for key in KEYS:
        k = np.array(key, np.uint32)
        for shape, dt in SHAPES:
            ours = lax.rng_bit_generator(k, shape, dt, lax.RandomAlgorithm(alg))
            ref = jax.lax.rng_bit_generator(k, shape, dt, jax.lax.RandomAlgorithm(alg))
            for o, r in zip(ours, ref):
                assert np.asarray(o).dtype == np.asarray(r).dtype
                np.testing.assert_array_equal(np.asarray(o), np.asarray(r))


def test_rng_bit_generator_jaxpr_jit_vmap():
    k = np.array([1, 2, 3, 4], np.uint32)
    text = str(jaxlite.make_jaxpr(lambda k: lax.rng_bit_generator(k, (2, 3)))(k))
    assert "rng_bit_generator[\n      algorithm=RNG_DEFAULT\n      dtype=uint32" in text
    eager = lax.rng_bit_generator(k, (2, 3))
    jitted = jaxlite.jit(lambda k: lax.rng_bit_generator(k, (2, 3)))(k)
    for a, b in zip(eager, jitted):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    keys = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.uint32)
    new, bits = jaxlite.vmap(lambda k: lax.rng_bit_generator(k, (2,)))(keys)
    for i in range(2):
        n1, b1 = lax.rng_bit_generator(keys[i], (2,))
        np.testing.assert_array_equal(np.asarray(bits[i]), np.asarray(b1))
        np.testing.assert_array_equal(np.asarray(new[i]), np.asarray(n1))


def test_rng_bit_generator_errors_and_uniform():
    with pytest.raises(TypeError, match="unsupported dtype float32"):
        lax.rng_bit_generator(np.zeros(4, np.uint32), (3,), np.float32)
    with pytest.raises(TypeError, match="uint32"):
        lax.rng_bit_generator(np.zeros(3, np.uint32), (3,))
    u = lax.rng_uniform(np.float32(0), np.float32(1), (100,))
    assert u.dtype == np.float32 and u.shape == (100,)
    assert 0 <= float(u.min()) and float(u.max()) < 1


RNG = np.random.default_rng(0)
X = RNG.standard_normal((6, 3)).astype(np.float32)
W = RNG.standard_normal((2, 3, 4)).astype(np.float32)
G = np.array([2, 3], np.int32)


def _ref_ragged(x, w, g):
    out = np.zeros((x.shape[0], w.shape[2]), np.float32)
    start = 0
    for i, n in enumerate(g):
        out[start : start + n] = x[start : start + n] @ w[i]
        start += n
    return out


def test_ragged_dot_values_grads_vmap_jit():
    out = lax.ragged_dot(X, W, G)
    check_close(np.asarray(out), _ref_ragged(X, W, G), rtol=1e-5, atol=1e-5)
    check_close(np.asarray(jaxlite.jit(lax.ragged_dot)(X, W, G)), np.asarray(out))
    check_grads(lambda x, w: lax.ragged_dot(x, w, G), [X, W], order=2,
                modes=("fwd", "rev"))  # fmt: skip
    xs = RNG.standard_normal((3, 6, 3)).astype(np.float32)
    batched = jaxlite.vmap(lambda x: lax.ragged_dot(x, W, G))(xs)
    loop = np.stack([_ref_ragged(x, W, G) for x in xs])
    check_close(np.asarray(batched), loop, rtol=1e-5, atol=1e-5)


def test_ragged_dot_matches_jax():
    jax = pytest.importorskip("jax")
    text = str(jaxlite.make_jaxpr(lax.ragged_dot)(X, W, G))
    ref = str(jax.make_jaxpr(jax.lax.ragged_dot)(X, W, G))
    assert text == ref
    e = RNG.standard_normal((6, 4)).astype(np.float32)
    dims = (((0,), (0,)), ((), ()))
    ours = lax.ragged_dot_general(
        X, e, G, lax.RaggedDotDimensionNumbers(dims, (0,), ())
    )
    theirs = jax.lax.ragged_dot_general(
        X, e, G, jax.lax.RaggedDotDimensionNumbers(dims, (0,), ())
    )
    assert ours.shape == theirs.shape == (2, 3, 4)
    check_close(np.asarray(ours), np.asarray(theirs), rtol=1e-5, atol=1e-5)
    with pytest.raises(TypeError, match="expected rhs group dimension size to be 3"):
        lax.ragged_dot(X, W, np.array([1, 2, 3], np.int32))


def test_small_additions():
    assert float(lax.platform_dependent(1.0, cpu=lax.sin, default=lax.cos)) == (
        pytest.approx(np.sin(1.0))
    )
    assert float(lax.platform_dependent(1.0, tpu=lax.sin, default=lax.cos)) == (
        pytest.approx(np.cos(1.0))
    )
    f = lax.composite(lambda x, *, eps=1.0: x * 2 + eps, name="my.op")
    assert float(f(1.0, eps=0.5)) == 2.5
    assert lax.DotAlgorithmPreset.F32_F32_F32.name == "F32_F32_F32"
    assert lax.Tolerance(atol=1e-3).atol == 1e-3
    assert [m.name for m in lax.AccuracyMode] == ["HIGHEST", "DEFAULT"]
    with pytest.raises(NameError, match="unbound axis name"):
        lax.pcast(1.0, "x", to="varying")


def test_dot_general_accepts_a_dot_algorithm_preset():
    x = np.arange(4.0, dtype=np.float32).reshape(2, 2)
    preset = lax.DotAlgorithmPreset.F32_F32_F32

    def f(x):
        return lax.dot_general(x, x, (((1,), (0,)), ((), ())), precision=preset)

    np.testing.assert_array_equal(f(x), x @ x)
    assert "precision=F32_F32_F32" in str(jaxlite.make_jaxpr(f)(x))
    jax = pytest.importorskip("jax")
    want = jax.lax.DotAlgorithmPreset.F32_F32_F32

    def g(x):
        return jax.lax.dot_general(x, x, (((1,), (0,)), ((), ())), precision=want)

    assert str(jaxlite.make_jaxpr(f)(x)) == str(jax.make_jaxpr(g)(x))
