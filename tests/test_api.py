"""The public API around the core: make_jaxpr, eval_shape, ShapeDtypeStruct, the
device API, the Array type, config, and the test helpers of tests/testing.py."""

import pickle

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from testing import check_close, check_grads, check_jvp, check_vjp, numerical_jvp

f32 = np.dtype(np.float32)
i32 = np.dtype(np.int32)

# ----------------------------------------------------------------------------------------
# make_jaxpr


def test_make_jaxpr_prints_like_jax():
    closed = jax.make_jaxpr(lambda x: jnp.sin(x) * 2.0)(1.0)
    assert str(closed) == (
        "{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = mul b 2.0:f32[] in (c,) }"
    )


def test_make_jaxpr_static_argnums():
    def f(x, n):
        for _ in range(n):
            x = x * 2.0
        return x

    closed = jax.make_jaxpr(f, static_argnums=1)(1.0, 3)
    assert [e.primitive.name for e in closed.eqns] == ["mul"] * 3
    assert len(closed.jaxpr.invars) == 1


def test_make_jaxpr_pytrees_and_kwargs():
    closed = jax.make_jaxpr(lambda d, *, y: d["a"] + d["b"] * y)(
        {"b": 2.0, "a": jnp.ones(2)}, y=3.0
    )
    assert [repr(v.aval) for v in closed.jaxpr.invars] == [
        "ShapedArray(float32[2])",
        "ShapedArray(float32[], weak_type=True)",
        "ShapedArray(float32[], weak_type=True)",
    ]


def test_make_jaxpr_return_shape():
    closed, shape = jax.make_jaxpr(lambda x: (x, x.sum()), return_shape=True)(
        jnp.ones(3)
    )
    assert shape == (
        jax.ShapeDtypeStruct((3,), jnp.float32),
        jax.ShapeDtypeStruct((), jnp.float32),
    )
    assert len(closed.out_avals) == 2


def test_make_jaxpr_accepts_shape_dtype_structs():
    closed = jax.make_jaxpr(jnp.sin)(jax.ShapeDtypeStruct((2, 3), jnp.float32))
    assert str(closed) == "{ lambda ; a:f32[2,3]. let b:f32[2,3] = sin a in (b,) }"


def test_make_jaxpr_names_the_function_as_jax():
    def my_fun(x):
        return x

    assert jax.make_jaxpr(my_fun).__name__ == "make_jaxpr(my_fun)"
    assert jax.make_jaxpr(my_fun).__qualname__.startswith("make_jaxpr(")
    assert jax.make_jaxpr(my_fun).__wrapped__ is my_fun


# ----------------------------------------------------------------------------------------
# eval_shape and ShapeDtypeStruct


def test_eval_shape():
    out = jax.eval_shape(
        lambda x, y: {"s": x @ y, "n": x.sum()}, jnp.ones((2, 3)), jnp.ones((3, 4))
    )
    assert out["s"] == jax.ShapeDtypeStruct((2, 4), jnp.float32)
    assert out["n"].shape == () and out["n"].dtype == f32


def test_eval_shape_of_structs_does_no_work():
    big = jax.ShapeDtypeStruct((10**6, 10**6), jnp.float32)
    out = jax.eval_shape(lambda x: jnp.sin(x).T, big)
    assert out.shape == (10**6, 10**6)


def test_eval_shape_weak_type():
    out = jax.eval_shape(lambda x: x * 2.0, 1.0)
    assert repr(out) == "ShapeDtypeStruct(shape=(), dtype=float32, weak_type=True)"


def test_shape_dtype_struct():
    s = jax.ShapeDtypeStruct((2, 3), jnp.float32)
    assert repr(s) == "ShapeDtypeStruct(shape=(2, 3), dtype=float32)"
    assert (s.shape, s.dtype, s.ndim, s.size) == ((2, 3), f32, 2, 6)
    assert s == jax.ShapeDtypeStruct([2, 3], np.float32)
    assert hash(s) == hash(jax.ShapeDtypeStruct((2, 3), "float32"))
    assert s != jax.ShapeDtypeStruct((2, 3), jnp.int32)


# ----------------------------------------------------------------------------------------
# Devices


def test_one_cpu_device():
    devices = jax.devices()
    assert len(devices) == 1 and jax.device_count() == 1
    assert repr(devices[0]) == "CpuDevice(id=0)"
    assert devices[0].platform == "cpu"
    assert jax.default_backend() == "cpu"
    assert jax.local_devices() == devices
    assert jnp.ones(2).devices() == {devices[0]}


def test_device_put_and_get():
    x = jax.device_put(np.arange(3.0))
    assert isinstance(x, jax.Array) and x.dtype == f32
    tree = jax.device_put({"a": 1.0, "b": [np.ones(2)]})
    assert isinstance(tree["b"][0], jax.Array)
    host = jax.device_get({"a": jnp.ones(2)})
    assert type(host["a"]) is np.ndarray


def test_block_until_ready():
    x = jnp.ones(3)
    assert jax.block_until_ready(x) is x
    assert x.block_until_ready() is x
    tree = {"a": x}
    assert jax.block_until_ready(tree) is tree


# ----------------------------------------------------------------------------------------
# The Array type


def test_array_repr():
    assert repr(jnp.array([0.0, 1.0])) == "Array([0., 1.], dtype=float32)"
    assert repr(jnp.int32(9)) == "Array(9, dtype=int32)"
    assert repr(jnp.array(2.0)) == "Array(2., dtype=float32, weak_type=True)"
    assert repr(jnp.arange(6.0).reshape(2, 3)) == (
        "Array([[0., 1., 2.],\n       [3., 4., 5.]], dtype=float32)"
    )
    assert repr(jnp.zeros((0, 3))) == "Array([], shape=(0, 3), dtype=float32)"
    assert repr(jnp.array([True, False])) == "Array([ True, False], dtype=bool)"


def test_array_repr_matches_jax():
    real_jnp = pytest.importorskip("jax.numpy")
    cases = [
        lambda n: n.arange(30.0).reshape(3, 10),
        lambda n: n.arange(3000.0),
        lambda n: n.array([1, 2, 3], dtype=n.uint8),
        lambda n: n.array([1.5, -2.25]),
        lambda n: n.ones((2, 2), dtype=n.int32) * 7,
        lambda n: n.array(3.0) * 2,
    ]
    for case in cases:
        assert repr(case(jnp)) == repr(case(real_jnp))
        assert str(case(jnp)) == str(case(real_jnp))


def test_array_str_and_format():
    assert str(jnp.arange(3.0)) == "[0. 1. 2.]"
    assert f"{jnp.float32(2.5):.2f}" == "2.50"
    assert f"{jnp.float32(2.5)}" == "2.5"


def test_array_is_immutable():
    x = jnp.zeros(3)
    with pytest.raises(TypeError, match=r"x = x.at\[idx\].set\(y\)"):
        x[0] = 1.0
    with pytest.raises(TypeError, match="unhashable"):
        hash(x)


def test_array_numpy_view_is_read_only_and_zero_copy():
    x = jnp.arange(4.0)
    view = np.asarray(x)
    assert view.dtype == f32
    with pytest.raises(ValueError):
        view[0] = 1.0
    assert np.shares_memory(view, np.asarray(x))
    copy = np.array(x)
    copy[0] = 5.0
    assert float(x[0]) == 0.0


def test_array_scalar_conversions():
    assert bool(jnp.array(True)) is True
    assert int(jnp.float32(2.7)) == 2
    assert float(jnp.int32(3)) == 3.0
    assert complex(jnp.float32(1.0)) == 1 + 0j
    assert [1, 2, 3][jnp.int32(2)] == 3
    with pytest.raises(TypeError):
        [1, 2, 3][jnp.float32(1.0)]
    assert jnp.float32(2.5).item() == 2.5
    assert jnp.arange(3).tolist() == [0, 1, 2]


def test_array_len_and_iteration():
    x = jnp.arange(6).reshape(3, 2)
    assert len(x) == 3
    rows = list(x)
    assert len(rows) == 3 and all(isinstance(r, jax.Array) for r in rows)
    np.testing.assert_array_equal(rows[1], [2, 3])
    with pytest.raises(TypeError):
        len(jnp.float32(1))
    with pytest.raises(TypeError):
        iter(jnp.float32(1))


def test_array_properties():
    x = jnp.ones((2, 3), jnp.int32)
    assert (x.shape, x.dtype, x.ndim, x.size, x.nbytes, x.itemsize) == (
        (2, 3),
        i32,
        2,
        6,
        24,
        4,
    )
    assert isinstance(x, jax.Array) and isinstance(x, jnp.ndarray)


@pytest.mark.parametrize(
    "op,expected",
    [
        (lambda x: x + 1, [2, 3, 4]),
        (lambda x: 1 + x, [2, 3, 4]),
        (lambda x: x - 1, [0, 1, 2]),
        (lambda x: 10 - x, [9, 8, 7]),
        (lambda x: x * 2, [2, 4, 6]),
        (lambda x: 2 * x, [2, 4, 6]),
        (lambda x: x / 2, [0.5, 1.0, 1.5]),
        (lambda x: 6 / x, [6.0, 3.0, 2.0]),
        (lambda x: x // 2, [0, 1, 1]),
        (lambda x: 7 // x, [7, 3, 2]),
        (lambda x: x % 2, [1, 0, 1]),
        (lambda x: 7 % x, [0, 1, 1]),
        (lambda x: x**2, [1, 4, 9]),
        (lambda x: 2**x, [2, 4, 8]),
        (lambda x: -x, [-1, -2, -3]),
        (lambda x: +x, [1, 2, 3]),
        (lambda x: abs(-x), [1, 2, 3]),
        (lambda x: ~x, [-2, -3, -4]),
        (lambda x: x & 1, [1, 0, 1]),
        (lambda x: 1 | x, [1, 3, 3]),
        (lambda x: x ^ 3, [2, 1, 0]),
        (lambda x: x << 1, [2, 4, 6]),
        (lambda x: x >> 1, [0, 1, 1]),
        (lambda x: x == 2, [False, True, False]),
        (lambda x: x != 2, [True, False, True]),
        (lambda x: x < 2, [True, False, False]),
        (lambda x: x <= 2, [True, True, False]),
        (lambda x: x > 2, [False, False, True]),
        (lambda x: x >= 2, [False, True, True]),
        (lambda x: x + np.int32(1), [2, 3, 4]),
        (lambda x: np.ones(3, np.int32) + x, [2, 3, 4]),
    ],
)
def test_array_operators(op, expected):
    x = jnp.array([1, 2, 3])
    out = op(x)
    assert isinstance(out, jax.Array)
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_array_operators_match_jax_dtypes():
    real_jnp = pytest.importorskip("jax.numpy")
    ops = [
        lambda x: x + 1,
        lambda x: x + 1.5,
        lambda x: x / 2,
        lambda x: 2**x,
        lambda x: x // 2,
        lambda x: x == 2,
        lambda x: x * np.float32(2),
        lambda x: x.astype("uint8") + 300,
    ]
    for op in ops:
        for make in (lambda n: n.array([1, 2, 3]), lambda n: n.array([1.0, 2.0])):
            ours, theirs = op(make(jnp)), op(make(real_jnp))
            assert (ours.dtype, ours.weak_type) == (theirs.dtype, theirs.weak_type)


def test_array_methods():
    x = jnp.arange(6.0).reshape(2, 3)
    assert x.T.shape == (3, 2)
    assert x.reshape(3, 2).shape == (3, 2)
    assert x.reshape((6,)).shape == (6,)
    assert x.astype(jnp.int32).dtype == i32
    assert float(x.sum()) == 15.0
    np.testing.assert_array_equal(x.sum(axis=0), [3.0, 5.0, 7.0])
    assert float(x.max()) == 5.0 and float(x.min()) == 0.0
    assert float(x.mean()) == 2.5
    assert int(x.argmax()) == 5
    assert x.ravel().shape == (6,) and x.flatten().shape == (6,)
    assert x.transpose().shape == (3, 2) and x.transpose(1, 0).shape == (3, 2)


def test_array_pickles():
    x = jnp.arange(3.0)
    y = pickle.loads(pickle.dumps(x))
    assert isinstance(y, jax.Array)
    np.testing.assert_array_equal(y, x)


def test_dtype_constructors():
    x = jnp.float32(1)
    assert isinstance(x, jax.Array) and x.dtype == f32 and not x.weak_type
    assert jnp.int32(3.7).dtype == i32
    assert np.dtype(jnp.float32) == f32


# ----------------------------------------------------------------------------------------
# Config


def test_config_update_and_read():
    assert jax.config.read("jax_enable_x64") is False
    assert jax.config.jax_enable_x64 is False
    with jax.enable_x64():
        assert jax.config.jax_enable_x64 is True
        assert jnp.array(1.0).dtype == np.float64
    assert jnp.array(1.0).dtype == f32


def test_config_unknown_option():
    with pytest.raises(AttributeError, match="Unrecognized config option"):
        jax.config.update("jax_no_such_option", True)


# ----------------------------------------------------------------------------------------
# tests/testing.py


def test_check_close():
    check_close(jnp.ones(3), np.ones(3, np.float32))
    check_close({"a": 1.0, "b": [jnp.zeros(2)]}, {"a": 1.0 + 1e-7, "b": [np.zeros(2)]})
    with pytest.raises(AssertionError):
        check_close(jnp.ones(3), np.ones(3) * 1.001)
    check_close(jnp.ones(3), np.ones(3) * 1.001, rtol=1e-2)
    with pytest.raises(AssertionError):
        check_close(jnp.ones(3), jnp.ones(4))
    with pytest.raises(AssertionError):
        check_close((1.0,), [1.0])
    with pytest.raises(AssertionError):
        check_close(jnp.arange(3), np.array([0, 1, 3]))


def test_numerical_jvp():
    out = numerical_jvp(lambda x, y: x**3 * y, (2.0, 3.0), (1.0, 0.0))
    assert abs(float(out) - 36.0) < 1e-6
    out = numerical_jvp(
        lambda x: (jnp.sin(x), {"c": jnp.cos(x)}), (np.float32(0.5),), (1.0,)
    )
    np.testing.assert_allclose(out[0], np.cos(0.5), rtol=1e-8)
    np.testing.assert_allclose(out[1]["c"], -np.sin(0.5), rtol=1e-8)


def test_check_grads_of_smooth_functions():
    x = np.linspace(0.1, 1.0, 4).astype(np.float32)
    check_jvp(lambda x: jnp.sin(x) * x, (x,))
    check_vjp(lambda x: jnp.sin(x) * x, (x,))
    check_grads(
        lambda x, y: (jnp.exp(x) * y, jnp.sum(x * x)), (x, np.float32(2.0)), order=2
    )
    check_grads(lambda x: x**3, (1.5,), order=3, modes=("fwd",))


def test_check_grads_catches_a_wrong_derivative():
    @jax.custom_jvp
    def bad_sin(x):
        return jnp.sin(x)

    @bad_sin.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return jnp.sin(x), 1.1 * jnp.cos(x) * t

    x = np.float32(0.3)
    with pytest.raises(AssertionError):
        check_jvp(bad_sin, (x,))
    with pytest.raises(AssertionError):
        check_vjp(bad_sin, (x,))
    with pytest.raises(AssertionError):
        check_grads(bad_sin, (x,), order=1)


def test_bool_add_and_multiply_are_logical_like_jax():
    a = jnp.array([True, False])
    b = jnp.array([True, True])
    assert repr(a * b) == "Array([ True, False], dtype=bool)"
    assert repr(a + b) == "Array([ True,  True], dtype=bool)"
    assert repr(a * True) == "Array([ True, False], dtype=bool)"
    assert (
        repr(jax.jit(lambda x, y: x * y)(a, b)) == "Array([ True, False], dtype=bool)"
    )
