"""Calling a natively compiled function (backend/native/engine.py): every kind of input
value it can receive, against the NumPy backend and JAX.

Under CPython the executable passes Python objects and the compiled code reads each
buffer's address from the object (an ndarray's data field, a NumPy scalar's value);
Python only converts what is not already a C-contiguous ndarray of the aval's dtype, or
a NumPy scalar of its type. Each input kind below must give what the NumPy backend
gives for the canonical input. The programs are exact (integer and boolean ops, float
products of small integers), so the comparisons are exact.
"""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

pytest.importorskip("llvmlite")

import jaxlite  # noqa: E402
import jaxlite.numpy as jnp  # noqa: E402
from jaxlite import lax  # noqa: E402
from jaxlite.backend import native, numpy_backend  # noqa: E402
from jaxlite.backend.native import engine  # noqa: E402
from jaxlite.config import override  # noqa: E402

DTYPES = [
    np.bool_,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.float32,
    np.float64,
]
SHAPES = [(), (3,), (2, 3)]


def _program(dtype):
    """A dtype-preserving exact function of two operands, with two outputs."""
    if np.dtype(dtype) == np.bool_:
        return lambda x, y: (lax.bitwise_xor(x, y), lax.bitwise_and(x, y))
    return lambda x, y: (lax.add(lax.mul(x, y), x), lax.lt(x, y))


def _values(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype) == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    return rng.integers(1, 7, shape).astype(dtype)


def _compile(f, *args):
    closed = jaxlite.make_jaxpr(f)(*args)
    exe = native.compile(closed)
    assert exe is not None, "the native backend left this program to NumPy"
    return closed, exe


def _check(got, want):
    assert isinstance(got, list) and len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        if w.shape == ():
            # 0-d outputs are NumPy scalars, as the NumPy backend mostly gives them.
            assert type(g) is w.dtype.type, (type(g), w.dtype)
        else:
            assert type(g) is np.ndarray and g.flags.c_contiguous
        g = np.asarray(g)
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def _input_kinds(x):
    """Values equal to the ndarray `x` (of a compiled dtype) in every form an input
    can take: name -> value."""
    dt = x.dtype
    kinds = {
        "c_contiguous": x,
        "read_only": _read_only(x),
        "jaxlite_array": jnp.asarray(x),
        "list": x.tolist(),
        "byte_swapped": x.astype(dt.newbyteorder()),
        "misaligned": _misaligned(x),
    }
    if dt.kind != "b":
        wider = np.float64 if dt.kind == "f" else np.int64
        kinds["float64_or_int64"] = x.astype(wider)
        kinds["int16"] = x.astype(np.int16)  # small values: exact in every dtype
    kinds["bool_or_float32"] = x.astype(np.float32 if dt.kind == "b" else np.float32)
    if x.ndim == 0:
        kinds["numpy_scalar"] = x[()]
        kinds["python_scalar"] = x.item()
        kinds["0d_array_other_dtype"] = np.asarray(x, np.float64)
        if dt.kind != "b":
            kinds["numpy_scalar_other_dtype"] = np.int16(x)
    else:
        kinds["strided"] = np.repeat(x, 2, axis=-1)[..., ::2]
        kinds["reversed_twice"] = x[..., ::-1].copy()[..., ::-1]
        if x.ndim == 2:
            kinds["fortran"] = np.asfortranarray(x)
    return kinds


def _read_only(x):
    y = np.array(x)
    y.flags.writeable = False
    return y


def _misaligned(x):
    raw = np.zeros(x.nbytes + 1, np.uint8)
    y = raw[1:].view(x.dtype).reshape(x.shape)
    y[...] = x
    return y


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_input_kind_matches_the_numpy_backend(dtype, shape):
    with jaxlite.enable_x64(True):
        x, y = _values(dtype, shape, 0), _values(dtype, shape, 1)
        closed, exe = _compile(_program(dtype), x, y)
        want = numpy_backend.compile(closed)(x, y)
        for name, kind in _input_kinds(x).items():
            try:
                _check(exe(kind, y), want)
                _check(exe(y, kind), numpy_backend.compile(closed)(y, x))
            except AssertionError as e:
                raise AssertionError(f"input kind {name!r}: {e}") from e
        _check(exe.entry(x, y), want)  # what jit's hot path calls


def test_python_scalars_for_weakly_typed_avals():
    closed, exe = _compile(lambda x, y: x * y + 1, 2, 3)
    assert all(a.weak_type for a in closed.in_avals)
    assert exe(2, 3) == [np.int32(7)] and type(exe(2, 3)[0]) is np.int32
    _check(exe(-4, np.int64(5)), [np.int32(-19)])
    closed, exe = _compile(lambda x, y: x * y + 1, 2.5, 0.5)
    _check(exe(2.5, 0.5), [np.float32(2.25)])
    _check(exe(np.float64(1.5), True), [np.float32(2.5)])
    closed, exe = _compile(lambda p: jnp.logical_not(p), True)
    _check(exe(False), [np.True_])
    _check(exe(np.bool_(True)), [np.False_])


def test_broadcast_and_zero_stride_inputs():
    closed, exe = _compile(lambda a, b: a * b, np.ones(4, np.float32), np.ones(4))
    a = np.broadcast_to(np.float32(3), (4,))  # every element at one address
    b = np.arange(8, dtype=np.float32)[::2]
    _check(exe(a, b), [np.array([0, 6, 12, 18], np.float32)])


def test_constants_multiple_outputs_and_no_inputs():
    c = np.arange(6, dtype=np.float32).reshape(2, 3)

    def f(x):
        return x + c, jnp.sum(x * c), x[0] > 1

    x = np.full((2, 3), 2.0, np.float32)
    closed, exe = _compile(f, x)
    assert exe.consts, "the constant is passed by pointer"
    _check(exe(x), numpy_backend.compile(closed)(x))
    _check(exe(x.T.copy().T), numpy_backend.compile(closed)(x))
    closed, exe = _compile(lambda: jnp.arange(4) * 3)
    _check(exe(), [np.array([0, 3, 6, 9], np.int32)])


def test_outputs_are_fresh_writeable_arrays():
    closed, exe = _compile(lambda x: (x + 1, x * 2), np.zeros(3, np.float32))
    x = np.arange(3, dtype=np.float32)
    first = exe(x)
    first[0][...] = 99  # the caller owns its outputs
    second = exe(x)
    _check(second, [x + 1, x * 2])
    assert second[0] is not first[0]
    np.testing.assert_array_equal(x, np.arange(3))  # inputs are never written


def test_wrong_shape_raises_instead_of_reading_out_of_bounds():
    closed, exe = _compile(lambda x: x * 2, np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="compiled for shape"):
        exe(np.zeros(5, np.float64))
    closed, exe = _compile(lambda x: x * 2, np.float32(1))
    with pytest.raises(ValueError, match="compiled for shape"):
        exe(np.zeros(2, np.float32))


def test_concurrent_calls_from_threads():
    closed, exe = _compile(lambda x, s: x * s + s, np.zeros(64, np.float32), 1.0)
    errors = []

    def work(k):
        x = np.arange(64, dtype=np.float32) + k
        for _ in range(300):
            got = exe(x, float(k))
            if not np.array_equal(got[0], x * k + k):
                errors.append(k)
                return

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_the_layout_is_found_on_cpython():
    if sys.implementation.name != "cpython":
        assert engine.LAYOUT is None
        return
    layout = engine.LAYOUT
    assert layout is not None, "the object calling convention was not found"
    again = engine._probe_layout()
    assert (again.items, again.data, again.scalar) == (
        layout.items,
        layout.data,
        layout.scalar,
    )
    assert set(layout.scalar) == {np.dtype(d) for d in DTYPES}


def test_pointer_convention_when_no_layout_is_found(monkeypatch):
    """Where objects cannot be read (PyPy: `id` is no address), the executable passes
    arrays of data pointers, with the same results."""
    monkeypatch.setattr(engine, "LAYOUT", None)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    closed, exe = _compile(lambda a, s: (a * s, jnp.sum(a)), x, np.float32(2))
    want = numpy_backend.compile(closed)(x, np.float32(2))
    for a in (x, np.asfortranarray(x), x.astype(np.float64), jnp.asarray(x)):
        for s in (np.float32(2), 2.0, np.array(2, np.int64), jnp.float32(2)):
            got = [np.asarray(o) for o in exe(a, s)]
            for g, w in zip(got, want):
                assert g.dtype == np.asarray(w).dtype
                np.testing.assert_array_equal(g, w)


def test_jit_on_the_native_backend_matches_jax():
    jax = pytest.importorskip("jax")

    def f(x, y, n):
        return x * y + n, (x > y).sum()

    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    cases = [
        (x, np.float32(2), 3),
        (x[:, ::-1], 2.0, np.int32(3)),  # not contiguous; Python scalars
        (x.astype(np.float64), jnp.float32(2), jnp.asarray(3)),  # jaxlite Arrays
        (jnp.asarray(x), np.array(2.0, np.float32), np.int64(3)),
    ]
    with override("jaxlite_backend", "native"):
        g = jaxlite.jit(f)
        assert "define" in g.lower(*cases[0]).as_text()  # compiled natively
        for args in cases:
            got = g(*args)
            want = jax.jit(f)(*[np.asarray(a) for a in args])
            for a, b in zip(got, want):
                assert a.dtype == b.dtype and a.shape == b.shape
                np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_a_host_call_that_raises_reraises_its_exception():
    """A nonzero status means a failed host call (its exception, as raised) or a
    failed allocation (RESOURCE_EXHAUSTED)."""

    def host(x):
        if x < 0:
            raise KeyError("negative")
        return np.float32(x * 2)

    def f(x):
        spec = jaxlite.ShapeDtypeStruct((), np.float32)
        return jaxlite.pure_callback(host, spec, x) + 1

    closed = jaxlite.make_jaxpr(f)(np.float32(1))
    exe = native.compile(closed)
    if exe is None:
        pytest.skip("host calls are not compiled natively")
    _check(exe(np.float32(3)), [np.float32(7)])
    with pytest.raises(KeyError, match="negative"):
        exe(np.float32(-1))
    _check(exe(2.0), [np.float32(5)])  # the executable stays usable
