"""The NumPy backend's buffer reuse (`out=`) and allocator tuning: results never
depend on whether a buffer was reused, inputs and returned values are never written,
and the generated source shows what runs."""

import ctypes
import platform
import resource

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.backend import memory


def _source(f, *args):
    return jax.jit(f).lower(*args).as_text()


def _eager(f, *args):
    with jax.disable_jit():
        return f(*args)


@pytest.mark.numpy_backend
def test_elementwise_chain_runs_in_one_buffer():
    def f(x):
        return jnp.tanh(jnp.sin(x * 2.0) + 1.0)

    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    src = _source(f, x)
    # the first product allocates; sin, add and tanh write into it
    assert src.count("out=") == 3, src
    # (within an ulp of NumPy's: small arrays get XLA's roundings, lax/xla_float32.py)
    np.testing.assert_allclose(jax.jit(f)(x), np.tanh(np.sin(x * 2.0) + 1.0), rtol=1e-6)


def test_inputs_are_never_written():
    def f(x, y):
        return jnp.exp(x) + jnp.cos(y), x - 1.0

    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    y = x + 0.5
    before = x.copy(), y.copy()
    out = jax.jit(f)(x, y)
    np.testing.assert_array_equal(x, before[0])
    np.testing.assert_array_equal(y, before[1])
    for got, want in zip(out, _eager(f, x, y)):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_returned_values_are_never_overwritten():
    def f(x):
        y = x * 3.0
        return y, jnp.sin(y) * 2.0

    x = np.arange(4.0, dtype=np.float32)
    y, z = jax.jit(f)(x)
    np.testing.assert_array_equal(y, x * 3.0)
    np.testing.assert_allclose(z, np.sin(x * 3.0) * 2.0, rtol=1e-6)


@pytest.mark.parametrize(
    "view",
    [
        lambda y: y.reshape(2, 2),
        lambda y: y.T,
        lambda y: y[1:],
        lambda y: jnp.broadcast_to(y, (3,) + y.shape),
    ],
    ids=["reshape", "transpose", "slice", "broadcast"],
)
def test_a_buffer_seen_by_a_view_is_not_reused(view):
    def f(a, b):
        y = a @ b if a.ndim == 2 else a * 2.0
        v = view(y)
        return v, jnp.exp(y)

    a = np.arange(4.0, dtype=np.float32).reshape(2, 2)
    got = jax.jit(f)(a, a + 1)
    want = _eager(f, a, a + 1)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)


@pytest.mark.numpy_backend
def test_matmul_results_are_reused_and_broadcast_operands_are_not():
    def f(x, w, b):
        return jnp.tanh(x @ w + b)

    x = np.ones((4, 3), np.float32)
    w = np.full((3, 5), 0.1, np.float32)
    b = np.arange(5, dtype=np.float32)
    src = _source(f, x, w, b)
    assert "np.add(" in src and "out=" in src, src
    np.testing.assert_allclose(jax.jit(f)(x, w, b), np.tanh(x @ w + b), rtol=1e-6)


def test_no_reuse_across_dtypes_or_shapes():
    def f(x):
        y = x + 1.0
        return jnp.sum(y), (y > 2.0), y[None] + y[:, None]

    x = np.arange(3.0, dtype=np.float32)
    src = _source(f, x)
    assert "out=" not in src, src
    for g, w in zip(jax.jit(f)(x), _eager(f, x)):
        np.testing.assert_array_equal(g, w)


def test_reuse_inside_loops_and_gradients_matches_eager():
    def loss(w, x):
        def body(c, xi):
            h = jnp.tanh(c * w + xi)
            return h, h * h

        c, hs = jax.lax.scan(body, jnp.zeros_like(w), x)
        return jnp.sum(c) + jnp.sum(hs)

    w = np.array([0.5, -0.3, 0.8], np.float32)
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    got = jax.jit(jax.grad(loss))(w, x)
    want = _eager(jax.grad(loss), w, x)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    # finite differences on the float64 version
    eps, w64, x64 = 1e-6, w.astype(np.float64), x.astype(np.float64)
    with jax.enable_x64():
        fd = [
            (loss(w64 + eps * e, x64) - loss(w64 - eps * e, x64)) / (2 * eps)
            for e in np.eye(3)
        ]
    np.testing.assert_allclose(got, fd, rtol=1e-3)


@pytest.mark.skipif(
    platform.python_implementation() != "CPython" or platform.libc_ver()[0] != "glibc",
    reason="glibc malloc's reuse of freed blocks, seen through CPython's reference "
    "counting (PyPy's garbage collector frees NumPy buffers later, at its own pace)",
)
def test_malloc_tuning_keeps_a_step_free_of_page_faults():
    if not memory.tune(True):
        pytest.skip("not glibc: the C library keeps freed memory itself")
    f = jax.jit(lambda a, b: jnp.tanh(a @ b) * 2.0 + 1.0)
    a = np.ones((256, 512), np.float32)  # 512 KiB operands, 512 KiB results
    f(a, a.T).block_until_ready()
    f(a, a.T).block_until_ready()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(10):
        f(a, a.T).block_until_ready()
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    # one page fault per 4 KiB page would be ~1,300 per call
    assert faults < 200, faults


def test_malloc_tuning_follows_the_config_option():
    if memory._mallopt() is None:
        pytest.skip("not glibc")
    assert jax.config.read("jaxlite_malloc_tuning") is True
    jax.config.update("jaxlite_malloc_tuning", False)
    try:
        assert memory._applied is False
    finally:
        jax.config.update("jaxlite_malloc_tuning", True)
    assert memory._applied is True
    assert isinstance(memory._mallopt(), ctypes._CFuncPtr)
