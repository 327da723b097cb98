"""Arrays and abstract values as JAX 0.10.2 has them (issue 16, item 6).

- `ShapeDtypeStruct`: `.like(x)`, `len()`, `dtype=None` refused, immutable, `.update`.
- Duck-typed arrays (objects with `.shape` and `.dtype`) are accepted where JAX
  accepts them: `eval_shape`, `make_jaxpr`, `jit(f).lower`, `linear_transpose`,
  `pure_callback`'s `result_shape_dtypes`; refused by `typeof` and a jit call.
- The `__jax_array__` protocol, as far as JAX 0.10.2 goes: `jnp.asarray`, operators of
  Arrays (both sides), `.at[].set`, and the jax.numpy functions that convert their
  argument first (reshape, concatenate, zeros_like, ...). Elsewhere (jit arguments,
  eval_shape, vmap, lax, control flow and the jitted jax.numpy functions such as
  `jnp.sin`) JAX 0.10.2 raises "Triggering __jax_array__() during abstractification is
  no longer supported", and so does jaxlite.
- Arrays are unhashable (`__hash__ is None`) and export a read-only buffer: `bytes(x)`
  everywhere; `memoryview(x)`, `np.frombuffer(x)` and `bytearray(x)` on Python 3.12+,
  where a class written in Python can export one (`__buffer__`, PEP 688).
- The narrow dtypes of ml_dtypes (int2, int4, uint2, uint4 and the 4-, 6- and 8-bit
  floats): creation, `astype`, arithmetic with JAX's promotion rules (they promote with
  nothing but themselves, booleans and Python scalars), `finfo`/`iinfo`, `issubdtype`,
  under jit, and on the native backend (which leaves them to NumPy).
"""

from __future__ import annotations

import collections.abc
import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp_lite

jax = pytest.importorskip("jax")
import jax.numpy as jnp_jax  # noqa: E402

LIBS = {"jaxlite": (jaxlite, jnp_lite), "jax": (jax, jnp_jax)}


def _describe(x):
    if isinstance(x, (bool, int, float, str, tuple)) or x is None:
        return x
    if hasattr(x, "shape") and hasattr(x, "dtype") and not hasattr(x, "__array__"):
        return ("struct", tuple(x.shape), str(x.dtype), bool(x.weak_type))
    return (
        "array",
        str(x.dtype),
        tuple(x.shape),
        bool(getattr(x, "weak_type", False)),
        str(np.asarray(x).astype(np.float64).tolist()),  # NaN equals NaN
    )


def _outcome(case, m, jnp):
    """`case(m, jnp)` as comparable data: the result's description, or the error's
    class and the message's first clause."""
    try:
        out = case(m, jnp)
    except Exception as e:  # noqa: BLE001 - compared across libraries
        return ("raises", type(e).__name__)
    return m.tree_util.tree_map(_describe, out)


def _check(case):
    mine = _outcome(case, jaxlite, jnp_lite)
    theirs = _outcome(case, jax, jnp_jax)
    assert mine == theirs


class Duck:
    """An object with `.shape` and `.dtype`, standing for an array."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, np.dtype(dtype)


# ----------------------------------------------------------------------------------------
# ShapeDtypeStruct

SDS_CASES = {
    "like an Array": lambda m, jnp: m.ShapeDtypeStruct.like(jnp.ones((2, 3))),
    "like a NumPy int64 array (canonical)": lambda m, jnp: m.ShapeDtypeStruct.like(
        np.ones((2, 3), np.int64)
    ),
    "like a Python float (weak)": lambda m, jnp: m.ShapeDtypeStruct.like(1.0),
    "like a Python int (weak)": lambda m, jnp: m.ShapeDtypeStruct.like(1),
    "like a weak Array": lambda m, jnp: m.ShapeDtypeStruct.like(jnp.asarray(1.0)),
    "like a ShapeDtypeStruct": lambda m, jnp: m.ShapeDtypeStruct.like(
        m.ShapeDtypeStruct((2,), jnp.float16)
    ),
    "like a duck": lambda m, jnp: m.ShapeDtypeStruct.like(Duck((4,), np.int8)),
    "like a list": lambda m, jnp: m.ShapeDtypeStruct.like([1, 2]),
    "like over a tree": lambda m, jnp: m.tree.map(
        m.ShapeDtypeStruct.like, {"a": jnp.ones(2), "b": 3}
    ),
    "len": lambda m, jnp: len(m.ShapeDtypeStruct((4, 3), jnp.float32)),
    "len of a scalar": lambda m, jnp: len(m.ShapeDtypeStruct((), jnp.float32)),
    "dtype None": lambda m, jnp: m.ShapeDtypeStruct((2,), None),
    "update": lambda m, jnp: m.ShapeDtypeStruct((2, 3), jnp.float32).update(
        shape=(4,), weak_type=True
    ),
    "int64 kept as given": lambda m, jnp: str(m.ShapeDtypeStruct((2,), np.int64).dtype),
    "eval_shape of a duck": lambda m, jnp: m.eval_shape(
        lambda x: x * 2, Duck((2,), np.float32)
    ),
    "eval_shape of a duck with weak_type": lambda m, jnp: m.eval_shape(
        lambda x: x * 2, m.ShapeDtypeStruct((2,), np.int32, weak_type=True)
    ),
    "jit(f).lower(duck).out_info": lambda m, jnp: (
        m.jit(lambda x: x * 2).lower(Duck((2,), np.float32)).out_info
    ),
    "jit called with a duck": lambda m, jnp: m.jit(lambda x: x * 2)(
        Duck((2,), np.float32)
    ),
    "pure_callback with a duck result type": lambda m, jnp: m.jit(
        lambda y: m.pure_callback(
            lambda x: np.asarray(x) * 2, Duck((2,), np.float32), y
        )
    )(jnp.ones(2)),
    "linear_transpose at a duck": lambda m, jnp: m.linear_transpose(
        lambda x: x * 2, Duck((2,), np.float32)
    )(jnp.ones(2)),
    "typeof a duck": lambda m, jnp: m.typeof(Duck((2,), np.float32)),
    "eval_shape of a string": lambda m, jnp: m.eval_shape(lambda x: x, "a"),
}


@pytest.mark.parametrize("name", list(SDS_CASES))
def test_abstract_values_match_jax(name):
    _check(SDS_CASES[name])


@pytest.mark.parametrize("lib", list(LIBS))
def test_shape_dtype_struct_errors(lib):
    m, jnp = LIBS[lib]
    with pytest.raises(ValueError, match="dtype must be specified"):
        m.ShapeDtypeStruct((2,), None)
    with pytest.raises(TypeError, match="len\\(\\) of unsized object"):
        len(m.ShapeDtypeStruct((), jnp.float32))
    s = m.ShapeDtypeStruct((2,), jnp.float32)
    with pytest.raises(RuntimeError, match="Cannot reassign attributes \\(shape\\)"):
        s.shape = (3,)
    with pytest.raises(TypeError, match="does not have a dtype attribute"):
        m.ShapeDtypeStruct.like([1, 2])
    assert make_jaxpr_text(m, Duck((2,), np.float32)) == (
        "{ lambda ; a:f32[2]. let b:f32[2] = mul a 2.0:f32[] in (b,) }"
    )


def make_jaxpr_text(m, x):
    return str(m.make_jaxpr(lambda x: x * 2)(x))


# ----------------------------------------------------------------------------------------
# __jax_array__


def _wrapped(jnp, x):
    class Wrapped:
        def __init__(self, value):
            self.value = value

        def __jax_array__(self):
            return jnp.asarray(self.value)

    return Wrapped(x)


def _w(jnp):
    return _wrapped(jnp, np.arange(1.0, 4.0, dtype=np.float32))


JAX_ARRAY_CASES = {
    # converted, as in JAX 0.10.2
    "asarray": lambda m, jnp: jnp.asarray(_w(jnp)),
    "array": lambda m, jnp: jnp.array(_w(jnp)),
    "asarray with a dtype": lambda m, jnp: jnp.asarray(_w(jnp), jnp.int32),
    "reshape": lambda m, jnp: jnp.reshape(_w(jnp), (3, 1)),
    "concatenate": lambda m, jnp: jnp.concatenate([_w(jnp), _w(jnp)]),
    "stack": lambda m, jnp: jnp.stack([_w(jnp), _w(jnp)]),
    "zeros_like": lambda m, jnp: jnp.zeros_like(_w(jnp)),
    "ones_like": lambda m, jnp: jnp.ones_like(_w(jnp)),
    "full_like": lambda m, jnp: jnp.full_like(_w(jnp), 2),
    "shape": lambda m, jnp: jnp.shape(_w(jnp)),
    "ndim": lambda m, jnp: jnp.ndim(_w(jnp)),
    "size": lambda m, jnp: jnp.size(_w(jnp)),
    "transpose": lambda m, jnp: jnp.transpose(_w(jnp)),
    "squeeze": lambda m, jnp: jnp.squeeze(_w(jnp)),
    "expand_dims": lambda m, jnp: jnp.expand_dims(_w(jnp), 0),
    "broadcast_to": lambda m, jnp: jnp.broadcast_to(_w(jnp), (2, 3)),
    "flip": lambda m, jnp: jnp.flip(_w(jnp)),
    "roll": lambda m, jnp: jnp.roll(_w(jnp), 1),
    "tile": lambda m, jnp: jnp.tile(_w(jnp), 2),
    "repeat": lambda m, jnp: jnp.repeat(_w(jnp), 2),
    "pad": lambda m, jnp: jnp.pad(_w(jnp), 1),
    "astype": lambda m, jnp: jnp.astype(_w(jnp), jnp.int32),
    "copy": lambda m, jnp: jnp.copy(_w(jnp)),
    "nonzero": lambda m, jnp: jnp.nonzero(_w(jnp)),
    "where with one argument": lambda m, jnp: jnp.where(_w(jnp)),
    "argwhere": lambda m, jnp: jnp.argwhere(_w(jnp)),
    "broadcast_arrays": lambda m, jnp: jnp.broadcast_arrays(_w(jnp), _w(jnp)),
    "diag": lambda m, jnp: jnp.diag(_w(jnp)),
    "unique": lambda m, jnp: jnp.unique(_w(jnp)),
    "meshgrid": lambda m, jnp: jnp.meshgrid(_w(jnp), _w(jnp)),
    "Array + obj": lambda m, jnp: jnp.arange(3.0) + _w(jnp),
    "obj + Array": lambda m, jnp: _w(jnp) + jnp.arange(3.0),
    "Array * obj": lambda m, jnp: jnp.arange(3.0) * _w(jnp),
    "Array ** obj": lambda m, jnp: jnp.arange(3.0) ** _w(jnp),
    "Array @ obj": lambda m, jnp: jnp.arange(3.0) @ _w(jnp),
    "Array < obj": lambda m, jnp: jnp.arange(3.0) < _w(jnp),
    "Array == obj": lambda m, jnp: jnp.arange(3.0) == _w(jnp),
    "divmod": lambda m, jnp: divmod(jnp.arange(3.0), _w(jnp)),
    "operator under jit": lambda m, jnp: m.jit(lambda x: x + _w(jnp))(jnp.ones(3)),
    ".at[].set": lambda m, jnp: jnp.arange(3.0).at[0].set(_wrapped(jnp, 5.0)),
    ".at[].add": lambda m, jnp: jnp.arange(3.0).at[0].add(_wrapped(jnp, 5.0)),
    # refused with JAX 0.10.2's ValueError
    "jit argument": lambda m, jnp: m.jit(lambda x: x * 2)(_w(jnp)),
    "jit output": lambda m, jnp: m.jit(lambda: _w(jnp))(),
    "eval_shape": lambda m, jnp: m.eval_shape(lambda x: x * 2, _w(jnp)),
    "vmap": lambda m, jnp: m.vmap(lambda x: x * 2)(_w(jnp)),
    "lax.add": lambda m, jnp: m.lax.add(_w(jnp), _w(jnp)),
    "lax.sin": lambda m, jnp: m.lax.sin(_w(jnp)),
    "lax.cond operand": lambda m, jnp: m.lax.cond(
        True, lambda x: x, lambda x: x, _w(jnp)
    ),
    "lax.scan": lambda m, jnp: m.lax.scan(lambda c, x: (c + x, x), 0.0, _w(jnp)),
    "device_put": lambda m, jnp: m.device_put(_w(jnp)),
    "typeof": lambda m, jnp: m.typeof(_w(jnp)),
    "jnp.sin": lambda m, jnp: jnp.sin(_w(jnp)),
    "jnp.add": lambda m, jnp: jnp.add(_w(jnp), 1),
    "jnp.where": lambda m, jnp: jnp.where(True, _w(jnp), _w(jnp)),
    "jnp.sum": lambda m, jnp: jnp.sum(_w(jnp)),
    "jnp.dot": lambda m, jnp: jnp.dot(_w(jnp), _w(jnp)),
    "jnp.take": lambda m, jnp: jnp.take(_w(jnp), 0),
    "jnp.sin under jit": lambda m, jnp: m.jit(lambda x: jnp.sin(_wrapped(jnp, x)))(
        jnp.ones(3)
    ),
    # Python's own rules
    "obj + 1": lambda m, jnp: _w(jnp) + 1,
    "isinstance Array": lambda m, jnp: isinstance(_w(jnp), m.Array),
}


@pytest.mark.parametrize("name", list(JAX_ARRAY_CASES))
def test_jax_array_protocol_matches_jax(name):
    _check(JAX_ARRAY_CASES[name])


@pytest.mark.parametrize("lib", list(LIBS))
def test_jax_array_refusal_is_jax_value_error(lib):
    m, jnp = LIBS[lib]
    for case in (
        lambda: m.jit(lambda x: x)(_w(jnp)),
        lambda: m.eval_shape(lambda x: x, _w(jnp)),
        lambda: jnp.sin(_w(jnp)),
        lambda: m.lax.add(_w(jnp), 1.0),
    ):
        with pytest.raises(ValueError, match="Triggering __jax_array__\\(\\) during"):
            case()


# ----------------------------------------------------------------------------------------
# Hashing and the buffer protocol


@pytest.mark.parametrize("lib", list(LIBS))
def test_arrays_and_tracers_are_unhashable(lib):
    m, jnp = LIBS[lib]
    x = jnp.arange(3.0)
    assert type(x).__hash__ is None
    assert not isinstance(x, collections.abc.Hashable)
    for make in (lambda: hash(x), lambda: {x}, lambda: {x: 1}):
        with pytest.raises(TypeError, match="unhashable type"):
            make()
    with pytest.raises(TypeError, match="unhashable type"):
        m.jit(lambda a: hash(a))(x)


@pytest.mark.parametrize(
    "value",
    [
        np.arange(4, dtype=np.float32),
        np.float32(1.5),
        np.array([True, False]),
        np.arange(6, dtype=np.int16).reshape(2, 3),
    ],
    ids=["f32", "0-d", "bool", "i16 2-d"],
)
def test_bytes_of_an_array_is_its_buffer(value):
    assert bytes(jnp_lite.asarray(value)) == bytes(jnp_jax.asarray(value))
    transposed = jnp_lite.asarray(np.arange(6.0).reshape(2, 3)).T
    assert bytes(transposed) == bytes(jnp_jax.asarray(np.arange(6.0).reshape(2, 3)).T)


_BUFFER_PROGRAM = textwrap.dedent(
    """
    import numpy as np
    import jaxlite.numpy as jnp
    x = jnp.arange(4, dtype=jnp.float32)
    m = memoryview(x)
    assert m.readonly and m.shape == (4,) and m.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert np.frombuffer(x, dtype=np.float32).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert np.frombuffer(x, dtype=np.uint8)[4:8].tolist() == [0, 0, 128, 63]
    assert bytearray(x)[4:8] == bytearray(b"\\x00\\x00\\x80?")
    assert memoryview(jnp.float32(1.0)).shape == ()
    t = jnp.arange(6.0).reshape(2, 3).T
    assert memoryview(t).strides == (8, 4) and memoryview(t).c_contiguous
    try:
        memoryview(jnp.ones(2, jnp.bfloat16))
    except BufferError:
        pass
    else:
        raise AssertionError("bfloat16 exported a buffer")
    print("ok")
    """
)


def test_buffer_protocol():
    """memoryview and np.frombuffer of an Array, as JAX's, where Python allows it
    (3.12+); before 3.12 they raise TypeError (no buffer), as for any Python class."""
    if sys.version_info >= (3, 12):
        out = subprocess.run(
            [sys.executable, "-c", _BUFFER_PROGRAM], capture_output=True, text=True
        )
        assert out.stdout.strip() == "ok", out.stderr
    else:
        x = jnp_lite.arange(4, dtype=jnp_lite.float32)
        with pytest.raises(TypeError, match="bytes-like object is required"):
            memoryview(x)
        with pytest.raises(TypeError, match="bytes-like object is required"):
            np.frombuffer(x, dtype=np.float32)
    x = jnp_lite.arange(4, dtype=jnp_lite.float32)
    view = x.__buffer__(0)  # what Python 3.12+ calls
    assert view.readonly and view.tobytes() == bytes(jnp_jax.asarray(np.asarray(x)))
    with pytest.raises(BufferError):
        x.__buffer__(1)  # PyBUF_WRITABLE


# ----------------------------------------------------------------------------------------
# The narrow dtypes of ml_dtypes

NARROW = [
    name
    for name in (
        "int2",
        "int4",
        "uint2",
        "uint4",
        "float4_e2m1fn",
        "float8_e3m4",
        "float8_e4m3",
        "float8_e4m3b11fnuz",
        "float8_e4m3fn",
        "float8_e4m3fnuz",
        "float8_e5m2",
        "float8_e5m2fnuz",
        "float8_e8m0fnu",
    )
    if hasattr(ml_dtypes, name)
]


def _values(name):
    if name.startswith("int"):
        return [0, 1, -1, 3]
    if name.startswith("uint"):
        return [0, 1, 2, 3]
    if name == "float8_e8m0fnu":
        return [0.5, 1.0, 2.0, 4.0]
    return [0.5, 1.0, -2.0, 3.0]


NARROW_CASES = {
    "array": lambda jnp, d, v: jnp.array(v, dtype=d),
    "asarray of NumPy": lambda jnp, d, v: jnp.asarray(np.array(v, dtype=d)),
    "astype from float32": lambda jnp, d, v: jnp.array(v, jnp.float32).astype(d),
    "astype to float32": lambda jnp, d, v: jnp.array(v, d).astype(jnp.float32),
    "add": lambda jnp, d, v: jnp.array(v, d) + jnp.array(v, d),
    "times a Python int": lambda jnp, d, v: jnp.array(v, d) * 2,
    "plus a Python float": lambda jnp, d, v: jnp.array(v, d) + 1.0,
    "plus float32": lambda jnp, d, v: jnp.array(v, d) + jnp.ones(4, jnp.float32),
    "plus int8": lambda jnp, d, v: jnp.array(v, d) + jnp.ones(4, jnp.int8),
    "plus bool": lambda jnp, d, v: jnp.array(v, d) + jnp.ones(4, bool),
    "equal": lambda jnp, d, v: jnp.array(v, d) == jnp.array(v, d),
    "dot": lambda jnp, d, v: jnp.dot(jnp.array(v, d), jnp.array(v, d)),
    "zeros": lambda jnp, d, v: jnp.zeros(2, d),
    "promote with float32": lambda jnp, d, v: str(jnp.promote_types(d, jnp.float32)),
    "promote with int8": lambda jnp, d, v: str(jnp.promote_types(d, jnp.int8)),
    "promote with uint8": lambda jnp, d, v: str(jnp.promote_types(d, jnp.uint8)),
    "promote with bool": lambda jnp, d, v: str(jnp.promote_types(d, jnp.bool_)),
    "promote with itself": lambda jnp, d, v: str(jnp.promote_types(d, d)),
    "promote with int4": lambda jnp, d, v: str(jnp.promote_types(d, jnp.int4)),
    "promote with float8_e4m3fn": lambda jnp, d, v: str(
        jnp.promote_types(d, jnp.float8_e4m3fn)
    ),
    "result_type with a Python float": lambda jnp, d, v: str(jnp.result_type(d, 1.0)),
    "issubdtype": lambda jnp, d, v: tuple(
        jnp.issubdtype(d, c)
        for c in (
            np.inexact,
            np.floating,
            np.integer,
            np.signedinteger,
            np.unsignedinteger,
            np.number,
            np.generic,
            np.float32,
            np.bool_,
        )
    ),
    "limits": lambda jnp, d, v: (
        (float(jnp.finfo(d).max), float(jnp.finfo(d).eps), jnp.finfo(d).bits)
        if jnp.issubdtype(d, np.floating)
        else (int(jnp.iinfo(d).max), int(jnp.iinfo(d).min), jnp.iinfo(d).bits)
    ),
    "ShapeDtypeStruct": lambda jnp, d, v: repr(jax.ShapeDtypeStruct((2,), d)),
}


def _narrow_case(m, jnp, case, name):
    return case(jnp, getattr(jnp, name), _values(name))


@pytest.mark.parametrize("name", NARROW)
@pytest.mark.parametrize("case", list(NARROW_CASES))
def test_narrow_dtypes_match_jax(case, name):
    _check(lambda m, jnp: _narrow_case(m, jnp, NARROW_CASES[case], name))


@pytest.mark.parametrize("name", NARROW)
def test_narrow_dtypes_under_jit_and_eval_shape(name):
    def program(m, jnp):
        d = getattr(jnp, name)
        x = jnp.array(_values(name), d)
        jitted = m.jit(lambda a: (a + a, a * 2, a == a))(x)
        shapes = m.eval_shape(lambda a: a + a, m.ShapeDtypeStruct((2,), d))
        return jitted, shapes, str(m.make_jaxpr(lambda a: a + a)(x))

    _check(program)


def test_issubdtype_of_float8_known_bug():
    # Was False: the float8 family counted as no kind of number.
    assert jaxlite.dtypes.issubdtype(jnp_lite.float8_e5m2, np.inexact)
    assert jaxlite.dtypes.issubdtype(jnp_lite.float8_e4m3fn, np.floating)
    assert jaxlite.dtypes.issubdtype(jnp_lite.int4, np.signedinteger)
    assert not jaxlite.dtypes.issubdtype(jnp_lite.uint4, np.signedinteger)


@pytest.mark.parametrize("lib", list(LIBS))
def test_narrow_promotion_errors(lib):
    m, jnp = LIBS[lib]
    with pytest.raises(m.dtypes.TypePromotionError, match="8-bit floats do not"):
        jnp.promote_types(jnp.float8_e4m3fn, jnp.float32)
    with pytest.raises(
        m.dtypes.TypePromotionError, match="1-bit, 2-bit and 4-bit integers do not"
    ):
        jnp.ones(2, jnp.int4) + jnp.ones(2, jnp.int8)
    with pytest.raises(m.dtypes.TypePromotionError, match="8-bit floats do not"):
        jnp.promote_types(jnp.int4, jnp.float8_e5m2)
    with pytest.raises(m.dtypes.TypePromotionError, match="4-bit floats do not"):
        jnp.promote_types(jnp.float4_e2m1fn, jnp.float16)
