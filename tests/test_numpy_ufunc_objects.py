"""Tests for jnp's ufunc objects (`jnp.add.reduce`, `.accumulate`, `.reduceat`,
`.outer`, `.at`, `jnp.frompyfunc`), the elementwise functions added with them
(frexp, ldexp, modf, spacing, gcd, lcm, bitwise_count, angle, logaddexp2, the array
API aliases) and the whole-array comparisons and type predicates (isclose, allclose,
array_equal, isscalar, ...).

Each case is a function of the numpy module, run with jaxlite.numpy and with
jax.numpy: values, dtypes, weak types and error classes must agree. NumPy is the
reference where JAX's CPU backend flushes subnormals.
"""

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from testing import check_close, check_grads


@pytest.fixture(scope="module")
def rjax():
    return pytest.importorskip("jax")


def _run(case, module):
    try:
        return case(module), None
    except Exception as e:  # noqa: BLE001  (compared by class below)
        return None, e


def assert_cases_match_jax(rjax, cases):
    """Run each case with both modules; compare results leaf by leaf (dtype, weak
    type, shape, values) or the error classes' names."""
    failures = []
    for name, case in cases:
        ours, our_err = _run(case, jnp)
        theirs, their_err = _run(case, rjax.numpy)
        if our_err or their_err:
            if type(our_err).__name__ != type(their_err).__name__:
                failures.append(f"{name}: errors {our_err!r} vs {their_err!r}")
            continue
        a_leaves = jaxlite.tree_util.tree_leaves(ours)
        b_leaves = rjax.tree_util.tree_leaves(theirs)
        if len(a_leaves) != len(b_leaves):
            failures.append(f"{name}: {len(a_leaves)} vs {len(b_leaves)} leaves")
            continue
        for a, b in zip(a_leaves, b_leaves):
            a_np, b_np = np.asarray(a), np.asarray(b)
            if a_np.dtype != b_np.dtype or a_np.shape != b_np.shape:
                failures.append(f"{name}: {a_np.dtype}{a_np.shape} vs "
                                f"{b_np.dtype}{b_np.shape}")  # fmt: skip
                continue
            if getattr(a, "weak_type", None) != getattr(b, "weak_type", None):
                if hasattr(b, "weak_type"):
                    failures.append(f"{name}: weak_type {a.weak_type} vs {b.weak_type}")
            if a_np.dtype.kind in "fc":
                ok = np.allclose(a_np, b_np, rtol=2e-6, atol=1e-6, equal_nan=True)
            else:
                ok = np.array_equal(a_np, b_np)
            if not ok:
                failures.append(f"{name}: {a_np} vs {b_np}")
    assert not failures, "\n".join(failures)


X = np.arange(6).reshape(2, 3)
XF = np.linspace(-2, 3, 6).reshape(2, 3).astype(np.float32)
MASK = np.array([[True, False, True], [False, False, True]])


def _frompy(m):
    return m.frompyfunc(lambda x, y: x * 2 + y, 2, 1, identity=0)


UFUNC_METHOD_CASES = [
    ("max.reduce", lambda m: m.maximum.reduce(m.asarray(X), axis=1)),
    ("sub.reduce", lambda m: m.subtract.reduce(m.asarray(X), axis=1)),
    ("sub.reduce None", lambda m: m.subtract.reduce(m.asarray(X), axis=None)),
    ("sub.reduce keep", lambda m: m.subtract.reduce(m.asarray(X), keepdims=True)),
    (
        "sub.reduce where",
        lambda m: m.subtract.reduce(m.asarray(X), axis=1, where=MASK, initial=10),
    ),
    ("add.reduce None", lambda m: m.add.reduce(m.asarray(X), axis=None)),
    ("add.reduce where", lambda m: m.add.reduce(m.asarray(X), axis=1, where=MASK)),
    ("add.reduce tuple", lambda m: m.add.reduce(m.asarray(X), axis=(0, 1), initial=5)),
    ("mul.reduce", lambda m: m.multiply.reduce(m.asarray(XF), axis=0)),
    (
        "max.reduce where init",
        lambda m: m.maximum.reduce(m.asarray(XF), axis=1, where=MASK, initial=-100.0),
    ),  # fmt: skip
    ("max.reduce where", lambda m: m.maximum.reduce(m.asarray(XF), where=MASK)),
    ("and.reduce", lambda m: m.bitwise_and.reduce(m.asarray(X + 3), axis=1)),
    ("or.reduce", lambda m: m.bitwise_or.reduce(m.asarray(X), axis=0)),
    ("xor.reduce", lambda m: m.bitwise_xor.reduce(m.asarray(X), axis=None)),
    (
        "xor.reduce init",
        lambda m: m.bitwise_xor.reduce(m.asarray(X), axis=1, initial=3, keepdims=True),
    ),  # fmt: skip
    ("land.reduce", lambda m: m.logical_and.reduce(m.asarray(MASK), axis=1)),
    ("lor.reduce", lambda m: m.logical_or.reduce(m.asarray(X), axis=0)),
    (
        "lxor.reduce where",
        lambda m: m.logical_xor.reduce(m.asarray(X), axis=1, where=MASK),
    ),  # fmt: skip
    ("lae.reduce", lambda m: m.logaddexp.reduce(m.asarray(XF), axis=1)),
    ("lae2.reduce", lambda m: m.logaddexp2.reduce(m.asarray(XF), axis=None)),
    (
        "lae.reduce where",
        lambda m: m.logaddexp.reduce(m.asarray(XF), axis=1, where=MASK),
    ),  # fmt: skip
    ("neg.reduce", lambda m: m.negative.reduce(m.asarray(X))),
    ("sub.accumulate", lambda m: m.subtract.accumulate(m.asarray(X), axis=1)),
    ("add.acc dtype", lambda m: m.add.accumulate(m.asarray(X), 1, dtype=m.float32)),
    ("mul.acc", lambda m: m.multiply.accumulate(m.asarray(XF), axis=0)),
    ("max.acc", lambda m: m.maximum.accumulate(m.asarray(XF), axis=1)),
    ("max.acc bool", lambda m: m.maximum.accumulate(m.asarray(MASK), axis=1)),
    ("min.acc", lambda m: m.minimum.accumulate(m.asarray(X), axis=-1)),
    ("lae.acc", lambda m: m.logaddexp.accumulate(m.asarray(XF), axis=1)),
    ("lae.acc int", lambda m: m.logaddexp.accumulate(m.asarray(X), axis=1)),
    ("reduceat", lambda m: m.add.reduceat(m.arange(8), m.array([0, 4, 1, 5]))),
    ("reduceat sub", lambda m: m.subtract.reduceat(m.arange(8), m.array([0, 4, 1]))),
    (
        "reduceat 2d",
        lambda m: m.multiply.reduceat(
            m.arange(1, 13).reshape(3, 4), m.array([0, 2]), axis=1
        ),
    ),  # fmt: skip
    ("outer", lambda m: m.add.outer(m.arange(2), m.arange(3.0))),
    ("outer 2d", lambda m: m.subtract.outer(m.arange(4).reshape(2, 2), m.arange(3))),
    (
        "neg.at",
        lambda m: m.negative.at(m.arange(4.0), m.array([0, 0, 2]), inplace=False),
    ),
    ("add.at", lambda m: m.add.at(m.zeros(4), m.array([0, 0, 2]), 1.0, inplace=False)),
    (
        "sub.at",
        lambda m: m.subtract.at(m.zeros(4), m.array([0, 2]), 1.0, inplace=False),
    ),
    (
        "max.at",
        lambda m: m.maximum.at(
            m.zeros(4), m.array([0, 0, 2]), m.array([3.0, 5, -1]), inplace=False
        ),
    ),  # fmt: skip
    (
        "lae.at",
        lambda m: m.logaddexp.at(
            m.zeros(4), m.array([0, 0, 2]), m.array([3.0, 5, -1]), inplace=False
        ),
    ),  # fmt: skip
    ("lae.at scalar", lambda m: m.logaddexp.at(m.zeros((2, 3)), 1, 2.0, inplace=False)),
    ("at inplace", lambda m: m.add.at(m.zeros(3), 0, 1.0)),
    (
        "props",
        lambda m: [
            m.add.nin,
            m.add.nout,
            m.add.nargs,
            m.add.identity,
            m.maximum.identity,
            m.negative.nin,
            m.logaddexp.identity,
            m.logical_and.identity,
            m.bitwise_and.identity,
        ],
    ),  # fmt: skip
    (
        "isinstance",
        lambda m: [
            isinstance(m.add, m.ufunc),
            isinstance(m.sin, m.ufunc),
            m.add.__name__,
        ],
    ),  # fmt: skip
    ("frompyfunc call", lambda m: _frompy(m)(m.arange(3.0), m.ones((2, 3)))),
    ("frompyfunc reduce", lambda m: _frompy(m).reduce(m.ones((2, 3)), axis=1)),
    ("frompyfunc acc", lambda m: _frompy(m).accumulate(m.arange(6.0).reshape(2, 3), 1)),
    ("frompyfunc outer", lambda m: _frompy(m).outer(m.arange(3.0), m.arange(2.0))),
    (
        "frompyfunc at",
        lambda m: _frompy(m).at(m.arange(3.0), m.array([1, 1]), 1.0, inplace=False),
    ),  # fmt: skip
    ("frompyfunc repr", lambda m: repr(_frompy(m))),
]


def test_ufunc_methods_match_jax(rjax):
    assert_cases_match_jax(rjax, UFUNC_METHOD_CASES)


def test_ufunc_methods_match_numpy():
    x = np.arange(1, 13).reshape(3, 4)
    for name in ("add", "multiply", "maximum", "minimum", "subtract", "bitwise_or"):
        ours, ref = getattr(jnp, name), getattr(np, name)
        a = jnp.asarray(x)
        check_close(ours.reduce(a, axis=0), ref.reduce(x, axis=0).astype(np.int32))
        check_close(
            ours.accumulate(a, axis=1), ref.accumulate(x, axis=1).astype(np.int32)
        )
        check_close(ours.outer(a[0], a[1]), ref.outer(x[0], x[1]).astype(np.int32))
        check_close(
            ours.reduceat(a, jnp.asarray([0, 2, 1]), axis=1),
            ref.reduceat(x, [0, 2, 1], axis=1).astype(np.int32),
        )
    expected = np.zeros(5)
    np.add.at(expected, [0, 1, 1, 4], [1.0, 2.0, 3.0, 4.0])
    out = jnp.add.at(jnp.zeros(5), jnp.asarray([0, 1, 1, 4]), jnp.asarray([1.0, 2, 3, 4]),
                     inplace=False)  # fmt: skip
    check_close(out, expected.astype(np.float32))


def test_ufunc_methods_under_transformations():
    x = jnp.asarray(XF)
    f = jaxlite.jit(lambda x: jnp.subtract.reduce(x, axis=1))
    check_close(f(x), jnp.subtract.reduce(x, axis=1))
    g = jaxlite.vmap(lambda r: jnp.subtract.accumulate(r))
    check_close(g(x), jnp.stack([jnp.subtract.accumulate(r) for r in x]))
    check_grads(lambda x: jnp.logaddexp.reduce(x, axis=0), (x,), order=2)
    check_grads(lambda x: jnp.multiply.outer(x[0], x[1]), (x,), order=1)
    check_grads(lambda x: _frompy(jnp).reduce(x, axis=1), (x,), order=1)


def test_builtin_ufuncs_stay_plain_functions():
    # The hot path: calling jnp.add must not go through an extra object.
    assert type(jnp.add).__name__ == "function"
    assert isinstance(jnp.add, jnp.ufunc)
    assert jnp.add._ufunc == jnp.add._ufunc
    assert jnp.ufunc(jnp.add, 2, 1, name="add", identity=0) != jnp.subtract
    assert repr(jnp.frompyfunc(lambda x: x, 1, 1)) == "<jnp.ufunc '<lambda>'>"


# ----------------------------------------------------------------------------------
# Elementwise functions

XS = np.array([0.0, -0.0, 1.5, -3.0, 0.3, np.inf, -np.inf, np.nan, 3.4e38], np.float32)
XI = np.array([12, -18, 0, 7, -5], np.int32)
YI = np.array([8, 12, 0, -21, 15], np.int32)

ELEMENTWISE_CASES = [
    *(
        (n, lambda m, n=n: getattr(m, n)(m.asarray([0.1, 0.5, 0.9])))
        for n in ("acos", "asin", "asinh", "atan", "atanh")
    ),
    ("acosh", lambda m: m.acosh(m.asarray([1.5, 3.0]))),
    ("atan2", lambda m: m.atan2(m.asarray([0.1, -0.5]), 2.0)),
    ("frexp", lambda m: m.frexp(m.asarray(XS))),
    ("frexp f16", lambda m: m.frexp(m.asarray([3.0, -0.1, 6e4], m.float16))),
    ("frexp int", lambda m: m.frexp(m.asarray(XI))),
    ("frexp scalar", lambda m: m.frexp(2.0)),
    ("frexp complex", lambda m: m.frexp(1j)),
    ("ldexp", lambda m: m.ldexp(m.asarray(XS), 3)),
    ("ldexp arrays", lambda m: m.ldexp(m.asarray([1.5, 2, 3, 0.7, 1]), m.asarray(XI))),
    ("ldexp ints", lambda m: m.ldexp(3, 2)),
    ("ldexp f16", lambda m: m.ldexp(m.float16(3), m.int32(2))),
    ("ldexp float exponent", lambda m: m.ldexp(3.0, 2.0)),
    ("modf", lambda m: m.modf(m.asarray(XS))),
    ("modf int", lambda m: m.modf(m.asarray(XI))),
    ("spacing", lambda m: m.spacing(m.asarray(XS[2:]))),
    ("spacing scalar", lambda m: m.spacing(0.5)),
    ("gcd", lambda m: m.gcd(m.asarray(XI), m.asarray(YI))),
    ("lcm", lambda m: m.lcm(m.asarray(XI), m.asarray(YI))),
    ("gcd scalar", lambda m: m.gcd(m.asarray(XI), 6)),
    ("gcd float", lambda m: m.gcd(1.0, 2.0)),
    (
        "bitwise_count",
        lambda m: m.bitwise_count(m.asarray([0, 7, -1, 255, -(2**31)], m.int32)),
    ),  # fmt: skip
    ("bitwise_count u8", lambda m: m.bitwise_count(m.asarray([0, 7, 255], m.uint8))),
    ("bitwise_count i16", lambda m: m.bitwise_count(m.asarray([-1, 32767], m.int16))),
    ("bitwise_count bool", lambda m: m.bitwise_count(m.asarray(True))),
    ("bitwise_count float", lambda m: m.bitwise_count(m.asarray(1.0))),
    ("angle", lambda m: m.angle(m.asarray([1 + 1j, -1, 0]))),
    ("angle f16 scalar", lambda m: m.angle(m.float16(2.0))),
    ("angle int", lambda m: m.angle(m.asarray([1, -2]))),
    ("angle deg", lambda m: m.angle(1j, deg=True)),
    ("iscomplex", lambda m: m.iscomplex(m.asarray([1 + 0j, 1j]))),
    ("isreal", lambda m: [m.isreal(m.asarray([1.0, 2.0])), m.isreal(3)]),
    ("logaddexp2", lambda m: [m.logaddexp2(1.0, 2.0), m.logaddexp2(m.arange(2), 3)]),
    ("logaddexp infs", lambda m: m.logaddexp(m.asarray(XS), m.asarray(-XS))),
    ("logaddexp2 infs", lambda m: m.logaddexp2(m.asarray(XS), 1.0)),
    (
        "logaddexp complex",
        lambda m: m.logaddexp(m.asarray([1 + 2j, -3 + 1j]), m.asarray([2 - 1j, 3j])),
    ),  # fmt: skip
    (
        "real imag conj of reals",
        lambda m: [m.real(m.float32(2)), m.imag(m.arange(2)), m.imag(3.0), m.conj(2)],
    ),  # fmt: skip
    ("rint", lambda m: [m.rint(2), m.rint(m.asarray([1.5 + 2.5j]))]),
    ("round decimals float", lambda m: m.round(0.5, 0.25)),
    ("deg2rad weak", lambda m: [m.deg2rad(2), m.rad2deg(0.5), m.sinc(0.5)]),
    (
        "isinf family",
        lambda m: [
            m.isnan(2),
            m.isinf(0.5),
            m.isinf(2),
            m.isposinf(2),
            m.signbit(2),
            m.isfinite(2),
        ],
    ),  # fmt: skip
    ("isposinf out", lambda m: m.isposinf(1.0, 2.0)),
    ("isneginf complex", lambda m: m.isneginf(1j)),
    ("signbit complex", lambda m: m.signbit(1j)),
    ("fabs complex", lambda m: m.fabs(1j)),
    ("floor_divide weak", lambda m: m.floor_divide(2, 3)),
]


def test_elementwise_match_jax(rjax):
    assert_cases_match_jax(rjax, ELEMENTWISE_CASES)


def test_elementwise_match_numpy_including_subnormals():
    # JAX's CPU backend flushes subnormals to zero; NumPy does not, nor does jaxlite.
    x = np.array([1e-40, -3e-42, 1.5, 6e-39, 2.0**-149], np.float32)
    m, e = jnp.frexp(jnp.asarray(x))
    m_ref, e_ref = np.frexp(x)
    np.testing.assert_array_equal(np.asarray(m), m_ref)
    np.testing.assert_array_equal(np.asarray(e), e_ref)
    # ldexp scales by lax.pow(2, e), XLA's powf: a subnormal power of two flushes
    # to zero there, as in JAX (lax/xla_float32.py), so only normal results survive.
    normal = np.abs(x) >= np.finfo(np.float32).tiny
    out = np.asarray(jnp.ldexp(jnp.asarray(m_ref), jnp.asarray(e_ref)))
    np.testing.assert_array_equal(out[normal], x[normal])
    big = np.array([1.0, 3.0, -2.5], np.float64)
    with jaxlite.enable_x64():
        for n in (-1074, -1022, 0, 1000, 1023):
            out = jnp.ldexp(jnp.asarray(big), n)
            np.testing.assert_array_equal(np.asarray(out), np.ldexp(big, n))
        m, e = jnp.frexp(jnp.asarray([5e-324, 1e300, -7.0]))
        np.testing.assert_array_equal(np.asarray(m), np.frexp([5e-324, 1e300, -7.0])[0])
    np.testing.assert_array_equal(
        np.asarray(jnp.spacing(jnp.asarray([1.0, -1.0, 0.0], np.float32))),
        np.spacing(np.array([1.0, -1.0, 0.0], np.float32)),
    )
    a, b = (
        np.array([0, 6, 35, -49, 2**30], np.int32),
        np.array([0, 4, 14, 21, 6], np.int32),
    )
    np.testing.assert_array_equal(np.asarray(jnp.gcd(a, b)), np.gcd(a, b))
    np.testing.assert_array_equal(
        np.asarray(jnp.lcm(a[:4], b[:4])), np.lcm(a[:4], b[:4])
    )
    for dtype in (np.int8, np.uint16, np.int32, np.uint32):
        v = np.arange(-40, 200).astype(dtype)
        np.testing.assert_array_equal(
            np.asarray(jnp.bitwise_count(jnp.asarray(v))), np.bitwise_count(v)
        )


def test_elementwise_grads_and_jit():
    x = jnp.asarray([0.3, -1.2, 2.5])
    check_grads(lambda x: jnp.logaddexp2(x, 0.7), (x,), order=2)
    check_grads(lambda x: jnp.ldexp(x, 3), (x,), order=1)
    check_grads(lambda x: jnp.modf(x)[0], (x,), order=1)
    for f in (jnp.frexp, jnp.spacing, jnp.bitwise_count):
        arg = x if f is not jnp.bitwise_count else jnp.asarray([3, 7])
        check_close(jaxlite.jit(f)(arg), f(arg))
    check_close(jaxlite.jit(jnp.gcd)(jnp.asarray(XI), jnp.asarray(YI)),
                jnp.gcd(jnp.asarray(XI), jnp.asarray(YI)))  # fmt: skip
    out = jaxlite.vmap(jnp.gcd)(jnp.asarray(XI), jnp.asarray(YI))
    check_close(out, np.gcd(XI, YI))


# ----------------------------------------------------------------------------------
# Whole-array comparisons and predicates

LOGIC_CASES = [
    ("isclose", lambda m: m.isclose(m.asarray(XS), m.asarray(XS) + 1e-6)),
    ("isclose nan", lambda m: m.isclose(m.asarray(XS), m.asarray(XS), equal_nan=True)),
    ("isclose int", lambda m: m.isclose(m.asarray(XI), m.asarray(YI))),
    (
        "isclose complex",
        lambda m: m.isclose(m.asarray([1 + 1j, 2j]), m.asarray([1 + 1.000001j, 2.1j])),
    ),  # fmt: skip
    ("isclose scalars", lambda m: m.isclose(1.0, 1.00000001)),
    ("allclose", lambda m: m.allclose(m.asarray(XS[:5]), m.asarray(XS[:5]) + 1e-6)),
    ("allclose list", lambda m: m.allclose([1.0], [1.0])),
    ("array_equal", lambda m: m.array_equal(m.asarray(XS), m.asarray(XS))),
    ("array_equal nan", lambda m: m.array_equal(m.asarray(XS), m.asarray(XS), True)),
    ("array_equal shape", lambda m: m.array_equal(m.asarray(XS), m.asarray(XS[:2]))),
    ("array_equiv", lambda m: m.array_equiv(m.arange(2), m.asarray([[0, 1], [0, 1]]))),
    (
        "iscomplexobj",
        lambda m: [
            m.iscomplexobj(1j),
            m.iscomplexobj(m.asarray([1.0])),
            m.iscomplexobj([1, 2j]),
            m.isrealobj(3),
        ],
    ),  # fmt: skip
    (
        "isscalar",
        lambda m: [
            m.isscalar(1),
            m.isscalar(m.asarray(1)),
            m.isscalar("a"),
            m.isscalar(np.array(1)),
            m.isscalar([1]),
            m.isscalar(None),
            m.isscalar(m.ones(2)),
        ],
    ),  # fmt: skip
    (
        "iterable",
        lambda m: [
            m.iterable([1]),
            m.iterable(m.asarray(1)),
            m.iterable(m.ones(2)),
            m.iterable(3),
        ],
    ),  # fmt: skip
    (
        "isdtype",
        lambda m: [
            m.isdtype(m.float32, "real floating"),
            m.isdtype(m.int8, ("bool", "integral")),
            m.isdtype(m.bfloat16, "real floating"),
        ],
    ),  # fmt: skip
    (
        "can_cast",
        lambda m: [
            m.can_cast(m.float32, m.int32),
            m.can_cast(m.int8, m.float32),
            m.can_cast(m.int32, m.int8, casting="same_kind"),
        ],
    ),  # fmt: skip
    (
        "astype",
        lambda m: [
            m.astype(m.asarray(XS[:5]), m.int16),
            m.astype(m.asarray(XS[:5]), m.bool),
        ],
    ),  # fmt: skip
    ("bool", lambda m: [m.bool(1), m.bool is m.bool_]),
    (
        "dtype classes",
        lambda m: [
            str(np.dtype(m.float8_e4m3fn)),
            str(np.dtype(m.int4)),
            str(m.object_),
            str(m.flexible),
            str(m.character),
            str(m.ComplexWarning),
        ],
    ),  # fmt: skip
    (
        "array api",
        lambda m: [
            m.__array_api_version__,
            m.__array_namespace_info__().default_dtypes(),
            m.__array_namespace_info__().dtypes(kind="integral"),
            m.__array_namespace_info__().capabilities(),
        ],
    ),  # fmt: skip
]


def test_logic_and_predicates_match_jax(rjax):
    assert_cases_match_jax(rjax, LOGIC_CASES)


def test_logic_under_jit():
    a = jnp.asarray(XS)
    check_close(jaxlite.jit(jnp.isclose)(a, a), jnp.isclose(a, a))
    assert bool(jaxlite.jit(jnp.allclose)(a[:5], a[:5] + 1e-9))
    assert float(jaxlite.jit(lambda x: x * jnp.isscalar(x))(2.0)) == 2.0
    assert not bool(jnp.array_equiv(jnp.arange(2), jnp.arange(3)))  # NumPy's answer
    with pytest.raises(TypeError, match="ndarray or scalar"):
        jnp.isclose([1.0], 1.0)
