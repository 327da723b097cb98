"""Tests for lax.dot_general and the jnp products (dot, matmul, einsum, ...).

Values are checked against NumPy (in float64) and, where it is installed, against real
JAX (dtypes, weak types, shapes and jaxpr texts); every function is also run under jit,
which goes through the generated NumPy code instead of the eager implementation.
"""

import functools

import ml_dtypes
import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import lax

RNG = np.random.default_rng(0)


def rand(shape, dtype=np.float32):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return RNG.integers(0, 2, shape).astype(bool)
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(-3 if dtype.kind == "i" else 0, 4, shape).astype(dtype)
    if dtype.kind == "c":
        return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(
            dtype
        )
    return RNG.standard_normal(shape).astype(dtype)


@pytest.fixture
def rjax():
    jax = pytest.importorskip("jax")
    return jax


def same_text(a, b):
    return " ".join(str(a).split()) == " ".join(str(b).split())


def check_jit(fun, *args, rtol=1e-5):
    """fun(*args) eagerly and under jit agree in value, dtype and weak type."""
    args = [jnp.asarray(a) for a in args]
    eager = fun(*args)
    jitted = jaxlite.jit(fun)(*args)
    assert np.shape(eager) == np.shape(jitted)
    assert eager.dtype == jitted.dtype
    assert eager.weak_type == jitted.weak_type
    np.testing.assert_allclose(
        np.asarray(eager, np.float64 if eager.dtype.kind != "c" else complex),
        np.asarray(jitted, np.float64 if jitted.dtype.kind != "c" else complex),
        rtol=rtol,
        atol=rtol,
    )
    return eager


def wide(x):
    x = np.asarray(x)
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


# ----------------------------------------------------------------------------------------
# matmul and the @ operator

MATMUL_SHAPES = [
    ((2, 3), (3, 4)),
    ((3,), (3,)),
    ((2, 3), (3,)),
    ((3,), (3, 4)),
    ((5, 2, 3), (3, 4)),
    ((5, 2, 3), (5, 3, 4)),
    ((1, 2, 3), (1, 3, 4)),
    ((4, 1, 2, 3), (5, 3, 4)),
    ((1, 2, 3), (5, 3, 4)),
    ((5, 2, 3), (1, 3, 4)),
    ((7, 5, 2, 3), (5, 3, 4)),
    ((2, 3), (7, 3, 4)),
    ((3,), (7, 3, 4)),
    ((7, 2, 3), (3,)),
    ((1, 2, 3), (3, 4)),
    ((2, 1, 1, 2, 3), (1, 3, 1, 3, 4)),
    ((0, 2, 3), (3, 4)),
    ((2, 0), (0, 4)),
]


@pytest.mark.parametrize("a_shape,b_shape", MATMUL_SHAPES)
def test_matmul_matches_numpy(a_shape, b_shape):
    a, b = rand(a_shape), rand(b_shape)
    out = check_jit(lambda x, y: x @ y, a, b)
    expected = np.matmul(wide(a), wide(b))
    assert out.shape == expected.shape
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        np.asarray(jnp.matmul(a, b)), expected, rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize(
    "a_shape,b_shape",
    [
        ((2, 3), (3, 4)),
        ((3,), (3,)),
        ((5, 2, 3), (5, 3, 4)),
        ((4, 1, 2, 3), (5, 3, 4)),
        ((7, 5, 2, 3), (5, 3, 4)),
        ((3,), (7, 3, 4)),
        ((2, 3), (7, 3, 4)),
    ],
)
def test_matmul_jaxpr_matches_jax(rjax, a_shape, b_shape):
    a, b = rand(a_shape), rand(b_shape)
    ours = jaxlite.make_jaxpr(lambda x, y: x @ y)(a, b)
    theirs = rjax.make_jaxpr(lambda x, y: x @ y)(a, b)
    assert same_text(ours, theirs), f"\n{ours}\n{theirs}"


def test_matmul_jaxpr_text():
    a, b = rand((2, 3)), rand((3, 4))
    text = str(jaxlite.make_jaxpr(lambda x, y: x @ y)(a, b))
    expected = """{ lambda ; a:f32[2,3] b:f32[3,4]. let
        c:f32[2,4] = dot_general[
          dimension_numbers=(([1], [0]), ([], []))
          preferred_element_type=float32
        ] a b
      in (c,) }"""
    assert same_text(text, expected)


@pytest.mark.numpy_backend
def test_matmul_lowers_to_np_matmul():
    a, b = rand((8, 16)), rand((16, 4))
    source = jaxlite.jit(lambda x, y: x @ y).lower(a, b).as_text()
    assert "np.matmul(" in source
    assert "transpose" not in source


DTYPE_PAIRS = [
    (np.int8, np.int8),
    (np.int32, np.int32),
    (np.uint8, np.uint8),
    (np.int8, np.uint8),
    (np.int8, np.float32),
    (np.int32, np.float32),
    (np.bool_, np.bool_),
    (np.bool_, np.int32),
    (np.float16, np.float16),
    (ml_dtypes.bfloat16, ml_dtypes.bfloat16),
    (np.float16, np.float32),
    (np.complex64, np.float32),
    (np.complex64, np.complex64),
]


@pytest.mark.parametrize("dt_a,dt_b", DTYPE_PAIRS)
@pytest.mark.parametrize("fun_name", ["matmul", "dot"])
def test_product_dtypes_match_jax(rjax, fun_name, dt_a, dt_b):
    a, b = rand((3, 4), dt_a), rand((4, 2), dt_b)
    ours = check_jit(getattr(jnp, fun_name), a, b, rtol=1e-2)
    theirs = getattr(rjax.numpy, fun_name)(a, b)
    assert ours.dtype == theirs.dtype
    assert ours.weak_type == theirs.weak_type
    tol = 2e-2 if np.dtype(theirs.dtype).itemsize <= 2 else 1e-5
    np.testing.assert_allclose(wide(ours), wide(theirs), rtol=tol, atol=tol)


def test_int_matmul_wraps_like_jax(rjax):
    a = np.full((2, 3), 100, np.int8)
    b = np.full((3, 2), 100, np.int8)
    ours = check_jit(jnp.matmul, a, b)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(rjax.numpy.matmul(a, b)))
    assert ours.dtype == np.int8
    wide_out = jnp.matmul(a, b, preferred_element_type=np.int32)
    assert wide_out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(wide_out), np.full((2, 2), 30000))


def test_int32_matmul_exact():
    a = RNG.integers(-1000, 1000, (6, 7)).astype(np.int32)
    b = RNG.integers(-1000, 1000, (7, 5)).astype(np.int32)
    out = check_jit(jnp.matmul, a, b)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), a @ b)


def test_matmul_bool_is_logical(rjax):
    a, b = rand((3, 4), bool), rand((4, 5), bool)
    out = check_jit(jnp.matmul, a, b)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(out), np.asarray(rjax.numpy.matmul(a, b)))


def test_weak_types(rjax):
    assert jnp.dot(2.0, 3.0).weak_type
    assert float(jnp.dot(2.0, 3.0)) == 6.0
    x = rand((3,))
    out = jnp.dot(x, 2.0)
    assert not out.weak_type and out.dtype == np.float32
    ints = np.arange(3, dtype=np.int8)
    out = jnp.dot(ints, 2)
    assert out.dtype == np.int8
    np.testing.assert_array_equal(np.asarray(out), ints * 2)


def test_matmul_errors():
    with pytest.raises(
        TypeError, match="contracting dimensions to have the same shape"
    ):
        jnp.matmul(jnp.ones((2, 3)), jnp.ones((4, 5)))
    with pytest.raises(ValueError, match="must have ndim at least 1"):
        jnp.matmul(jnp.ones((2, 3)), 3.0)
    with pytest.raises(
        ValueError,
        match=r"Incompatible types for matmul arguments: "
        r"float32\[2,2,3\] and float32\[3,3,5\]",
    ):
        jnp.matmul(jnp.ones((2, 2, 3)), jnp.ones((3, 3, 5)))
    with pytest.raises(TypeError, match="matmul requires ndarray or scalar arguments"):
        jnp.matmul([1, 2], [3, 4])
    with pytest.raises(TypeError, match="contracting dimensions"):
        jaxlite.jit(jnp.matmul)(jnp.ones((2, 3)), jnp.ones((4, 5)))


def test_matmul_operator_on_arrays_and_tracers():
    a, b, c = rand((2, 3)), rand((3, 4)), rand((5, 2))
    x = jnp.asarray(a)
    out = jaxlite.jit(lambda x, y: x @ y)(x, jnp.asarray(b))
    np.testing.assert_allclose(np.asarray(out), a @ b, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(x @ b), a @ b, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(x.__rmatmul__(c)), c @ a, rtol=1e-5)
    out = jaxlite.jit(lambda x, y: x.__rmatmul__(y))(x, c)
    np.testing.assert_allclose(np.asarray(out), c @ a, rtol=1e-5)


# ----------------------------------------------------------------------------------------
# lax.dot_general and lax.dot

DIMENSION_NUMBERS = [
    ((2, 3), (3, 4), (([1], [0]), ([], []))),
    ((2, 3), (4, 3), (([1], [1]), ([], []))),
    ((3, 2), (3, 4), (([0], [0]), ([], []))),
    ((5, 2, 3), (5, 3, 4), (([2], [1]), ([0], [0]))),
    ((2, 5, 3), (3, 4, 5), (([2], [0]), ([1], [2]))),
    ((2, 3, 4), (4, 3, 5), (([1, 2], [1, 0]), ([], []))),
    ((2, 3), (4,), (([], []), ([], []))),
    ((6, 2, 3, 4), (4, 6, 3), (([2, 3], [2, 0]), ([0], [1]))),
    ((3,), (3,), (([0], [0]), ([], []))),
    ((2, 3), (3, 4, 5), (([1], [0]), ([], []))),
]


def _einsum_reference(a, b, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    letters = iter("abcdefghijklmnop")
    la = [next(letters) for _ in range(a.ndim)]
    lb_labels = [next(letters) for _ in range(b.ndim)]
    for i, j in zip(lc, rc):
        lb_labels[j] = la[i]
    for i, j in zip(lb, rb):
        lb_labels[j] = la[i]
    batch = [la[i] for i in lb]
    free_a = [la[i] for i in range(a.ndim) if i not in (*lb, *lc)]
    free_b = [lb_labels[i] for i in range(b.ndim) if i not in (*rb, *rc)]
    spec = f"{''.join(la)},{''.join(lb_labels)}->{''.join(batch + free_a + free_b)}"
    return np.einsum(spec, wide(a), wide(b))


@pytest.mark.parametrize("a_shape,b_shape,dims", DIMENSION_NUMBERS)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.complex64])
def test_dot_general_matches_einsum(a_shape, b_shape, dims, dtype):
    a, b = rand(a_shape, dtype), rand(b_shape, dtype)
    out = check_jit(lambda x, y: lax.dot_general(x, y, dims), a, b)
    expected = _einsum_reference(a, b, dims)
    assert out.dtype == dtype
    np.testing.assert_allclose(wide(out), expected, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("a_shape,b_shape,dims", DIMENSION_NUMBERS[:6])
def test_dot_general_jaxpr_matches_jax(rjax, a_shape, b_shape, dims):
    a, b = rand(a_shape), rand(b_shape)
    ours = jaxlite.make_jaxpr(lambda x, y: lax.dot_general(x, y, dims))(a, b)
    theirs = rjax.make_jaxpr(lambda x, y: rjax.lax.dot_general(x, y, dims))(a, b)
    assert same_text(ours, theirs), f"\n{ours}\n{theirs}"


def test_dot_general_params(rjax):
    a, b = rand((2, 3)), rand((3,))
    for kwargs in [
        {},
        {"precision": "highest"},
        {"preferred_element_type": np.float32},
        {"precision": lax.Precision.HIGH, "preferred_element_type": np.float32},
    ]:
        rkwargs = dict(kwargs)
        if isinstance(kwargs.get("precision"), lax.Precision):
            rkwargs["precision"] = getattr(rjax.lax.Precision, kwargs["precision"].name)
        ours = jaxlite.make_jaxpr(lambda x, y, kw=kwargs: lax.dot(x, y, **kw))(a, b)
        theirs = rjax.make_jaxpr(lambda x, y, kw=rkwargs: rjax.lax.dot(x, y, **kw))(
            a, b
        )
        assert same_text(ours, theirs), f"\n{ours}\n{theirs}"
    eqn = jaxlite.make_jaxpr(lambda x, y: lax.dot(x, y))(a, b).eqns[0]
    assert eqn.params["dimension_numbers"] == (((1,), (0,)), ((), ()))


@pytest.mark.parametrize(
    "dt_in,pref",
    [
        (np.int8, np.int32),
        (np.int32, np.float32),
        (np.float32, np.int32),
        (np.float16, np.float32),
        (np.float32, np.float16),
        (np.uint8, np.int16),
        (np.bool_, np.int32),
        (np.complex64, np.float32),
    ],
)
def test_preferred_element_type(rjax, dt_in, pref):
    a, b = rand((3, 4), dt_in), rand((4, 2), dt_in)
    dims = (([1], [0]), ([], []))

    def f(x, y):
        return lax.dot_general(x, y, dims, preferred_element_type=pref)

    ours = check_jit(f, a, b, rtol=1e-2)
    theirs = rjax.lax.dot_general(a, b, dims, preferred_element_type=pref)
    assert ours.dtype == theirs.dtype == pref
    np.testing.assert_allclose(wide(ours), wide(theirs), rtol=1e-2, atol=1e-2)


def test_mixed_dtypes_follow_xla_precision_order(rjax):
    dims = (([1], [0]), ([], []))
    for dt_a, dt_b in [
        (np.float32, np.int32),
        (np.int8, np.int32),
        (np.uint8, np.int8),
    ]:
        a, b = rand((2, 3), dt_a), rand((3, 2), dt_b)
        ours = lax.dot_general(a, b, dims)
        theirs = rjax.lax.dot_general(a, b, dims)
        assert ours.dtype == theirs.dtype
        np.testing.assert_allclose(wide(ours), wide(theirs), rtol=1e-5)


def test_dot_general_python_scalars():
    out = lax.dot_general(2.0, 3.0, (([], []), ([], [])))
    assert out.weak_type and out.dtype == np.float32 and float(out) == 6.0
    out = lax.dot_general(2, np.ones(3, np.int8), (([], []), ([], [])))
    assert out.dtype == np.int32


def test_dot_general_errors():
    a, b = jnp.ones((2, 3)), jnp.ones((3, 5))
    with pytest.raises(
        TypeError,
        match=r"contracting dimensions to have the same shape, "
        r"got \(3,\) and \(4,\)",
    ):
        lax.dot_general(a, jnp.ones((4, 5)), (([1], [0]), ([], [])))
    with pytest.raises(TypeError, match="rhs batch dimensions to be disjoint"):
        lax.dot_general(a, b, (([1], [0]), ([0], [0])))
    with pytest.raises(TypeError, match="lhs batch dimensions to be disjoint"):
        lax.dot_general(a, b, (([1], [0]), ([1], [0])))
    with pytest.raises(TypeError, match="nonnegative and less than the number of axes"):
        lax.dot_general(a, b, (([5], [0]), ([], [])))
    with pytest.raises(TypeError, match="equal numbers of lhs_batch and rhs_batch"):
        lax.dot_general(a, b, (([1], [0]), ([0], [])))
    with pytest.raises(TypeError, match="batch dimensions to have the same shape"):
        lax.dot_general(
            jnp.ones((4, 2, 3)), jnp.ones((5, 3, 2)), (([2], [1]), ([0], [0]))
        )
    with pytest.raises(TypeError, match="must not be narrower than the original type"):
        lax.dot_general(
            jnp.ones((2, 3), np.int32),
            jnp.ones((3, 2), np.int32),
            (([1], [0]), ([], [])),
            preferred_element_type=np.int16,
        )
    with pytest.raises(ValueError, match="dimension_numbers must be specified"):
        lax.dot(jnp.ones((2, 3)), jnp.ones((4, 5)))
    with pytest.raises(ValueError, match="Precision argument"):
        lax.dot(jnp.ones((2, 3)), jnp.ones((3,)), precision="fast-ish")


def test_lax_dot_and_batch_matmul():
    a, b = rand((2, 3)), rand((3, 4))
    np.testing.assert_allclose(np.asarray(lax.dot(a, b)), a @ b, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(lax.dot(a[0], b)), a[0] @ b, rtol=1e-5)
    x, y = rand((5, 2, 3)), rand((5, 3, 4))
    np.testing.assert_allclose(np.asarray(lax.batch_matmul(x, y)), x @ y, rtol=1e-5)
    with pytest.raises(ValueError, match="same batch dimensions"):
        lax.batch_matmul(x, rand((4, 3, 4)))


# ----------------------------------------------------------------------------------------
# dot, vdot, inner, outer, tensordot, kron, trace, vecdot, matvec, vecmat

BINARY_CASES = [
    ("dot", (2, 3), (3, 4), {}),
    ("dot", (2, 3, 4), (5, 4, 2), {}),
    ("dot", (3,), (3,), {}),
    ("dot", (2, 3), (), {}),
    ("dot", (), (2, 3), {}),
    ("vdot", (2, 3), (3, 2), {}),
    ("inner", (2, 3), (4, 3), {}),
    ("inner", (3,), (3,), {}),
    ("inner", (), (2, 2), {}),
    ("outer", (3,), (2, 2), {}),
    ("tensordot", (2, 3, 4), (3, 4, 5), {}),
    ("tensordot", (2, 3), (3, 2), {"axes": 1}),
    ("tensordot", (2, 3), (3, 2), {"axes": 0}),
    ("tensordot", (2, 3), (3, 2), {"axes": [[0, 1], [1, 0]]}),
    ("tensordot", (2, 3), (3, 2), {"axes": (1, 0)}),
    ("tensordot", (2, 3), (3, 2), {"axes": (-1, -2)}),
    ("kron", (2, 3), (3, 2), {}),
    ("kron", (2,), (2, 2), {}),
    ("kron", (), (2, 2), {}),
    ("vecdot", (2, 3), (3,), {}),
    ("vecdot", (4, 1, 3), (2, 3), {}),
    ("vecdot", (3, 2), (3, 2), {"axis": 0}),
    ("matvec", (2, 3), (3,), {}),
    ("matvec", (4, 2, 3), (1, 3), {}),
    ("vecmat", (3,), (3, 2), {}),
    ("vecmat", (4, 3), (3, 2), {}),
]


@pytest.mark.parametrize("name,a_shape,b_shape,kwargs", BINARY_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.complex64])
def test_products_match_numpy_and_jax(rjax, name, a_shape, b_shape, kwargs, dtype):
    a, b = rand(a_shape, dtype), rand(b_shape, dtype)
    ours = check_jit(lambda x, y: getattr(jnp, name)(x, y, **kwargs), a, b)
    theirs = getattr(rjax.numpy, name)(a, b, **kwargs)
    assert ours.shape == theirs.shape
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(wide(ours), wide(theirs), rtol=1e-5, atol=1e-4)
    np_fun = getattr(np, name, None)
    if np_fun is not None and name not in ("vecdot", "matvec", "vecmat"):
        np.testing.assert_allclose(
            wide(ours), np_fun(wide(a), wide(b), **kwargs), rtol=1e-5, atol=1e-4
        )


def test_vdot_conjugates_first_argument():
    a = np.array([1 + 2j, 3j], np.complex64)
    b = np.array([1j, 2], np.complex64)
    assert complex(jnp.vdot(a, b)) == np.vdot(a, b) == 2 - 5j


def test_outer_jaxpr_matches_jax(rjax):
    a, b = rand((3,)), rand((2, 2))
    ours = jaxlite.make_jaxpr(jnp.outer)(a, b)
    theirs = rjax.make_jaxpr(rjax.numpy.outer)(a, b)
    names = [e.primitive.name for e in ours.eqns]
    assert names == [e.primitive.name for e in theirs.eqns]
    assert names == ["broadcast_in_dim", "reshape", "broadcast_in_dim", "mul"]


@pytest.mark.parametrize(
    "shape,kwargs",
    [
        ((3, 3), {}),
        ((3, 4), {"offset": 1}),
        ((3, 4), {"offset": -2}),
        ((3, 4), {"offset": 7}),
        ((2, 3, 4), {"axis1": 2, "axis2": 0, "offset": 1}),
        ((2, 3, 4), {"axis1": -1, "axis2": 1}),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.bool_, np.uint8])
def test_trace(rjax, shape, kwargs, dtype):
    a = rand(shape, dtype)
    ours = check_jit(lambda x: jnp.trace(x, **kwargs), a)
    theirs = rjax.numpy.trace(a, **kwargs)
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(wide(ours), wide(theirs), rtol=1e-5, atol=1e-6)
    expected = np.trace(wide(a), **kwargs)
    np.testing.assert_allclose(wide(ours), expected, rtol=1e-5, atol=1e-6)


def test_trace_dtype_and_traced_offset():
    a = np.arange(16, dtype=np.int8).reshape(4, 4)
    assert jnp.trace(a, dtype=np.int8).dtype == np.int8
    out = jaxlite.jit(lambda x, k: jnp.trace(x, offset=k))(a, 1)
    assert int(out) == np.trace(a, offset=1)


def test_product_errors():
    with pytest.raises(TypeError, match=r"Number of tensordot axes \(axes 3\) exceeds"):
        jnp.tensordot(jnp.ones((2, 3)), jnp.ones((3, 2)), 3)
    with pytest.raises(TypeError, match="axes lists to have equal length"):
        jnp.tensordot(jnp.ones((2, 3)), jnp.ones((3, 2)), ([0, 1], [0]))
    with pytest.raises(TypeError, match="tensordot axes argument must be"):
        jnp.tensordot(jnp.ones((2, 3)), jnp.ones((3, 2)), [[1], [0], [1]])
    with pytest.raises(ValueError, match="axis1 and axis2 can not be same"):
        jnp.trace(jnp.ones((3, 3)), axis1=0, axis2=0)
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.trace(jnp.ones(3))
    with pytest.raises(TypeError, match="dot requires ndarray or scalar arguments"):
        jnp.dot([1, 2], [3, 4])
    with pytest.raises(TypeError, match="contracting dimensions"):
        jnp.vdot(jnp.ones((2, 3)), jnp.ones((4, 5)))
    with pytest.raises(ValueError, match="same size along axis"):
        jnp.vecdot(jnp.ones((2, 3)), jnp.ones((4,)))


# ----------------------------------------------------------------------------------------
# einsum

EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("bij,bjk->bki", [(5, 2, 3), (5, 3, 4)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ij->", [(3, 2)]),
    ("ij->ji", [(3, 2)]),
    ("ij", [(3, 2)]),
    ("i,j", [(3,), (2,)]),
    ("i,i", [(3,), (3,)]),
    ("...ij,...jk", [(5, 1, 2, 3), (4, 3, 2)]),
    ("ij,ij->ij", [(1, 3), (2, 3)]),
    ("Ba,aA", [(2, 3), (3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("abc,cd,da->b", [(2, 3, 4), (4, 5), (5, 2)]),
    ("iij,jk->ik", [(3, 3, 4), (4, 2)]),
    ("i...->...", [(2, 3)]),
    ("...i->i...", [(2, 3, 4)]),
    ("ijk,ikl,lm->jm", [(2, 3, 4), (2, 4, 5), (5, 6)]),
    ("a,a,a->a", [(3,), (3,), (3,)]),
    ("ab,ab,ab->", [(2, 3), (2, 3), (2, 3)]),
    ("ij,kl->ijkl", [(2, 2), (3, 3)]),
    ("iji->j", [(2, 3, 2)]),
    (" i j , j k -> i k ", [(2, 3), (3, 4)]),
    ("ij,jk->ik", [(2, 0), (0, 4)]),
]


@pytest.mark.parametrize("subscripts,shapes", EINSUM_CASES)
@pytest.mark.parametrize("optimize", ["auto", False])
def test_einsum_matches_numpy(subscripts, shapes, optimize):
    ops = [rand(s) for s in shapes]

    def f(*xs):
        return jnp.einsum(subscripts, *xs, optimize=optimize)

    ours = check_jit(f, *ops)
    expected = np.einsum(subscripts, *(wide(x) for x in ops))
    assert ours.shape == expected.shape
    assert ours.dtype == np.float32
    np.testing.assert_allclose(np.asarray(ours), expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "subscripts,dtypes",
    [
        ("i,i", [np.int8, np.int8]),
        ("i,j", [np.int8, np.float32]),
        ("i,i", [np.bool_, np.bool_]),
        ("ij->i", [np.bool_]),
        ("ij->", [np.int8]),
        ("ij,jk", [np.float16, np.float16]),
    ],
)
def test_einsum_dtypes_match_jax(rjax, subscripts, dtypes):
    shapes = {
        "i,i": [(3,), (3,)],
        "i,j": [(3,), (2,)],
        "ij->i": [(3, 2)],
        "ij->": [(3, 2)],
        "ij,jk": [(2, 3), (3, 2)],
    }[subscripts]
    ops = [rand(s, dt) for s, dt in zip(shapes, dtypes)]
    ours = check_jit(lambda *xs: jnp.einsum(subscripts, *xs), *ops, rtol=1e-2)
    theirs = rjax.numpy.einsum(subscripts, *ops)
    assert ours.dtype == theirs.dtype
    np.testing.assert_allclose(wide(ours), wide(theirs), rtol=1e-2)


def test_einsum_jaxpr_is_one_dot_general(rjax):
    a, b = rand((2, 3)), rand((3, 4))
    ours = jaxlite.make_jaxpr(lambda x, y: jnp.einsum("ij,jk->ik", x, y))(a, b)
    theirs = rjax.make_jaxpr(lambda x, y: rjax.numpy.einsum("ij,jk->ik", x, y))(a, b)
    assert same_text(ours, theirs)


def test_einsum_interleaved_and_path():
    a, b = rand((2, 3)), rand((3, 4))
    out = jnp.einsum(a, [0, 1], b, [1, 2], [2, 0])
    np.testing.assert_allclose(np.asarray(out), (a @ b).T, rtol=1e-5)
    out = jnp.einsum(a, [Ellipsis, 1], b, [1, 2])
    np.testing.assert_allclose(np.asarray(out), a @ b, rtol=1e-5)
    c = rand((4, 5))
    explicit = jnp.einsum("ij,jk,kl->il", a, b, c, optimize=[(1, 2), (0, 1)])
    np.testing.assert_allclose(np.asarray(explicit), a @ b @ c, rtol=1e-4)
    path, _ = jnp.einsum_path("ij,jk,kl->il", a, b, c)
    assert path[0] == "einsum_path" and len(path) == 3


def test_einsum_errors():
    with pytest.raises(
        ValueError, match="Number of einsum subscripts, 2, must be equal"
    ):
        jnp.einsum("ij,jk", jnp.ones((2, 3)))
    with pytest.raises(ValueError, match="Size of label 'j' for operand 1 \\(4\\)"):
        jnp.einsum("ij,jk", jnp.ones((2, 3)), jnp.ones((4, 5)))
    with pytest.raises(ValueError, match="Output character 'l' did not appear"):
        jnp.einsum("ij,jk->il", jnp.ones((2, 3)), jnp.ones((3, 5)))
    with pytest.raises(ValueError, match="appeared more than once in the output"):
        jnp.einsum("ij->ii", jnp.ones((2, 3)))
    with pytest.raises(
        ValueError, match="does not contain the correct number of indices"
    ):
        jnp.einsum("ijk,jk", jnp.ones((2, 3)), jnp.ones((3, 5)))
    with pytest.raises(TypeError, match="einsum requires ndarray or scalar arguments"):
        jnp.einsum("i,i", [1, 2], [3, 4])
    with pytest.raises(ValueError, match="No input operands"):
        jnp.einsum("")


# ----------------------------------------------------------------------------------------
# Derivatives and vmap of dot_general and the jnp products


@pytest.mark.parametrize("a_shape,b_shape,dims", DIMENSION_NUMBERS)
def test_dot_general_grads(a_shape, b_shape, dims):
    from testing import check_grads

    a, b = rand(a_shape, np.float64), rand(b_shape, np.float64)
    a, b = a.astype(np.float32), b.astype(np.float32)
    check_grads(
        lambda x, y: lax.dot_general(x, y, dims), (a, b), order=2, atol=1e-2, rtol=1e-2
    )


@pytest.mark.parametrize("a_shape,b_shape", MATMUL_SHAPES[:16])
def test_matmul_grad_matches_jax(rjax, a_shape, b_shape):
    a, b = rand(a_shape), rand(b_shape)

    def loss(jnp_mod):
        return lambda x, y: jnp_mod.sin(jnp_mod.matmul(x, y)).sum()

    ours = jaxlite.grad(loss(jnp), argnums=(0, 1))(a, b)
    theirs = rjax.grad(loss(rjax.numpy), argnums=(0, 1))(a, b)
    for o, t in zip(ours, theirs):
        assert o.shape == t.shape and o.dtype == t.dtype
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-4, atol=1e-5)


def test_grad_with_mixed_and_preferred_dtypes():
    a = rand((3, 4), np.float16)
    b = rand((4, 2), np.float16)

    def f(x, y):
        return lax.dot_general(
            x, y, (([1], [0]), ([], [])), preferred_element_type=np.float32
        ).sum()

    ga, gb = jaxlite.grad(f, argnums=(0, 1))(a, b)
    assert ga.dtype == np.float16 and gb.dtype == np.float16
    np.testing.assert_allclose(wide(ga), np.ones((3, 2)) @ wide(b).T, rtol=1e-2)
    ints = rand((4, 2), np.int32)
    g = jaxlite.grad(lambda x: jnp.dot(x, ints).sum())(rand((3, 4)))
    np.testing.assert_allclose(np.asarray(g), np.ones((3, 2)) @ ints.T, rtol=1e-6)


@pytest.mark.parametrize("in_axes", [(0, 0), (1, None), (None, 2), (2, 1), (0, None)])
@pytest.mark.parametrize("fun_name", ["matmul", "dot", "inner", "tensordot"])
def test_products_vmap_match_loop(in_axes, fun_name):
    fun = getattr(jnp, fun_name)
    if fun_name == "tensordot":
        fun = functools.partial(jnp.tensordot, axes=1)
    a0, b0 = rand((2, 4)), rand((4, 5)) if fun_name != "inner" else rand((5, 4))

    def batched(x, axis):
        return x if axis is None else np.stack([x * (k + 1) for k in range(3)], axis)

    a, b = batched(a0, in_axes[0]), batched(b0, in_axes[1])
    out = jaxlite.vmap(fun, in_axes=in_axes)(a, b)
    rows = []
    for k in range(3):
        x = a if in_axes[0] is None else np.take(a, k, in_axes[0])
        y = b if in_axes[1] is None else np.take(b, k, in_axes[1])
        rows.append(np.asarray(fun(jnp.asarray(x), jnp.asarray(y))))
    np.testing.assert_allclose(np.asarray(out), np.stack(rows), rtol=1e-5, atol=1e-6)


def test_einsum_vmap_and_grad():
    a, b = rand((3, 2, 4)), rand((4, 5))
    out = jaxlite.vmap(lambda x: jnp.einsum("ij,jk->ki", x, b))(a)
    np.testing.assert_allclose(
        np.asarray(out), np.einsum("bij,jk->bki", a, b), rtol=1e-5, atol=1e-6
    )
    g = jaxlite.grad(lambda x: jnp.einsum("bij,jk->", x, b))(a)
    np.testing.assert_allclose(
        np.asarray(g), np.broadcast_to(b.sum(1), (3, 2, 4)), rtol=1e-5
    )


def test_x64_products():
    from jaxlite.config import config

    config.update("jax_enable_x64", True)
    a, b = np.random.default_rng(2).random((3, 4)), np.ones((4, 2))
    out = jnp.matmul(a, b)
    assert out.dtype == np.float64
    np.testing.assert_allclose(np.asarray(out), a @ b, rtol=1e-12)
    assert jnp.dot(np.ones(3, np.int64), np.ones(3, np.int64)).dtype == np.int64
    assert jnp.trace(np.ones((3, 3), np.int32)).dtype == np.int64
    assert jnp.einsum("ij,jk", a, b).dtype == np.float64
