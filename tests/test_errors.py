"""Error classes and messages: tracer errors (class, hierarchy as in JAX, and what each
message says: the shape and dtype, the traced function, the argument, a fix) and bad
inputs to lax and jax.numpy functions."""

import operator
import platform

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import errors, lax
from jaxlite.errors import (
    ConcretizationTypeError,
    NonConcreteBooleanIndexError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)

# ----------------------------------------------------------------------------------------
# Hierarchy (as in jax.errors)


@pytest.mark.parametrize(
    "cls,bases",
    [
        (ConcretizationTypeError, (TypeError,)),
        (TracerBoolConversionError, (ConcretizationTypeError, TypeError)),
        (TracerIntegerConversionError, (TypeError,)),
        (TracerArrayConversionError, (TypeError,)),
        (NonConcreteBooleanIndexError, (IndexError,)),
        (UnexpectedTracerError, (TypeError,)),
    ],
)
def test_error_class_hierarchy(cls, bases):
    for base in bases:
        assert issubclass(cls, base)
    assert getattr(jax.errors, cls.__name__) is cls


def test_error_hierarchy_matches_jax():
    real_errors = pytest.importorskip("jax.errors")
    names = [
        "ConcretizationTypeError",
        "TracerBoolConversionError",
        "TracerIntegerConversionError",
        "TracerArrayConversionError",
        "NonConcreteBooleanIndexError",
        "UnexpectedTracerError",
    ]
    for name in names:
        ours = [c.__name__ for c in getattr(errors, name).__mro__]
        theirs = [c.__name__ for c in getattr(real_errors, name).__mro__]
        assert ours == theirs, name


# ----------------------------------------------------------------------------------------
# Tracer errors


def branchy(x):
    if x > 0:
        return x
    return -x


def to_int(x):
    return int(x)


def index_list(i):
    return [10, 20, 30][i]


def index_list_via_operator(i):
    return [10, 20, 30][operator.index(i)]


# PyPy's list, tuple and str indexing replaces a TypeError raised by __index__ with its
# own "list indices must be integers or slices" TypeError, so jaxlite's error cannot
# reach the user from `[...][tracer]` there; operator.index(tracer) still raises it.
IS_PYPY = platform.python_implementation() == "PyPy"


def integer_conversion_message():
    """TracerIntegerConversionError's message from indexing a list with a tracer, and
    the name of the traced function."""
    if not IS_PYPY:
        return catch(TracerIntegerConversionError, jax.jit(index_list), 1), "index_list"
    with pytest.raises(TypeError, match="list indices must be integers"):
        jax.jit(index_list)(1)
    fun = index_list_via_operator
    return catch(TracerIntegerConversionError, jax.jit(fun), 1), fun.__name__


def to_numpy(x):
    return np.asarray(x)


def masked_sum(x):
    return x[x > 0].sum()


def catch(cls, fun, *args):
    with pytest.raises(cls) as info:
        fun(*args)
    assert type(info.value) is cls
    return str(info.value)


def test_tracer_bool_conversion():
    msg = catch(TracerBoolConversionError, jax.jit(branchy), 1.0)
    assert "Attempted boolean conversion of traced array with shape bool[]" in msg
    assert "while tracing the function branchy" in msg
    assert "for jit" in msg
    assert "depends on the value of the argument x" in msg
    assert "jnp.where" in msg and "lax.cond" in msg  # how to fix
    assert "errors.html#jax.errors.TracerBoolConversionError" in msg


def test_tracer_bool_conversion_is_a_concretization_error():
    with pytest.raises(ConcretizationTypeError):
        jax.jit(branchy)(1.0)
    with pytest.raises(TypeError):
        jax.jit(branchy)(1.0)


def test_tracer_bool_conversion_from_and_or_not_and_while():
    with pytest.raises(TracerBoolConversionError):
        jax.jit(lambda x: x > 0 and x < 1)(0.5)
    with pytest.raises(TracerBoolConversionError):
        jax.jit(lambda x: not x)(True)

    def loop(x):
        while x < 10:
            x = x * 2
        return x

    with pytest.raises(TracerBoolConversionError):
        jax.jit(loop)(1.0)


def test_concretization_from_int():
    msg = catch(ConcretizationTypeError, jax.jit(to_int), 1.0)
    assert msg.startswith(
        "Abstract tracer value encountered where concrete value is expected: traced "
        "array with shape float32[]"
    )
    assert "The problem arose with the `int` function" in msg
    assert "x.astype(int)" in msg  # how to fix
    assert "while tracing the function to_int" in msg
    assert "depends on the value of the argument x" in msg


@pytest.mark.parametrize("convert,name", [(float, "float"), (complex, "complex")])
def test_concretization_from_float_and_complex(convert, name):
    msg = catch(ConcretizationTypeError, jax.jit(lambda x: convert(x)), 1.0)
    assert f"The problem arose with the `{name}` function" in msg


def test_concretization_from_item_and_tolist():
    catch(ConcretizationTypeError, jax.jit(lambda x: x.item()), 1.0)
    catch(ConcretizationTypeError, jax.jit(lambda x: x.tolist()), jnp.ones(2))


def test_tracer_integer_conversion():
    msg, name = integer_conversion_message()
    assert "The __index__() method was called on traced array with shape int32[]" in msg
    assert f"while tracing the function {name}" in msg
    assert "depends on the value of the argument i" in msg
    assert "static" in msg  # how to fix


def test_tracer_array_conversion():
    msg = catch(TracerArrayConversionError, jax.jit(to_numpy), jnp.ones(3))
    assert (
        "The numpy.ndarray conversion method __array__() was called on traced array "
        "with shape float32[3]"
    ) in msg
    assert "while tracing the function to_numpy" in msg
    assert "depends on the value of the argument x" in msg
    assert "jax.numpy instead of numpy" in msg or "pure_callback" in msg  # fix


def test_tracer_array_conversion_from_numpy_function():
    with pytest.raises(TracerArrayConversionError):
        jax.jit(lambda x: np.sin(x))(jnp.ones(3))


def test_non_concrete_boolean_index():
    msg = catch(NonConcreteBooleanIndexError, jax.jit(masked_sum), jnp.ones(5))
    assert msg.startswith(
        "Array boolean indices must be concrete; got ShapedArray(bool[5])"
    )
    assert "errors.html#jax.errors.NonConcreteBooleanIndexError" in msg


def test_error_names_the_argument_it_depends_on():
    def f(a, b, c):
        return int(b + c)

    msg = catch(ConcretizationTypeError, jax.jit(f), 1.0, 2.0, 3.0)
    assert "depends on the values of the arguments b, c" in msg

    def g(params, x):
        if params["scale"] > 1:
            return x
        return -x

    msg = catch(TracerBoolConversionError, jax.jit(g), {"scale": 2.0}, 1.0)
    assert "argument params['scale']" in msg


def test_error_names_the_traced_function_under_make_jaxpr():
    msg = catch(TracerBoolConversionError, jax.make_jaxpr(branchy), 1.0)
    assert "while tracing the function branchy" in msg
    assert "for make_jaxpr" in msg


def test_static_argument_fix_works():
    # The fix the messages suggest: mark the argument static.
    assert float(jax.jit(branchy, static_argnums=0)(-2.0)) == 2.0
    assert int(jax.jit(index_list, static_argnums=0)(2)) == 30


def test_concrete_values_convert_fine():
    x = jnp.float32(2.5)
    assert bool(x) and float(x) == 2.5 and int(x) == 2
    assert [10, 20, 30][jnp.int32(1)] == 20
    np.testing.assert_array_equal(np.asarray(jnp.ones(2)), [1.0, 1.0])


def test_unexpected_tracer_error_message():
    leaked = []

    def leaky(x):
        leaked.append(x)
        return x

    jax.jit(leaky)(1.0)
    msg = catch(UnexpectedTracerError, lambda: leaked[0] * 2)
    assert "Encountered an unexpected tracer" in msg
    assert "float32[]" in msg
    assert "leaky" in msg
    assert "explicitly return their outputs" in msg  # how to fix


def test_tracer_errors_link_to_the_error_docs():
    msg, _ = integer_conversion_message()
    assert (
        "https://" in msg
        and "errors.html#jax.errors.TracerIntegerConversionError" in msg
    )


# ----------------------------------------------------------------------------------------
# Bad inputs


def test_lax_add_wrong_dtypes():
    msg = catch(TypeError, lax.add, jnp.float32(1), jnp.int32(1))
    assert msg.startswith(
        "lax.add requires arguments to have the same dtypes, got float32, int32."
    )
    assert "jnp.add" in msg  # the fix


def test_lax_add_wrong_dtypes_under_jit():
    with pytest.raises(TypeError, match="got float32, int32"):
        jax.jit(lambda x, y: lax.add(x, y))(jnp.float32(1), jnp.int32(1))


def test_lax_sin_of_int():
    msg = catch(TypeError, lax.sin, jnp.int32(1))
    assert msg.startswith("sin does not accept dtype int32.")
    assert "floating" in msg


def test_lax_shapes_must_match():
    msg = catch(TypeError, lax.add, jnp.ones(3), jnp.ones(4))
    assert "add got incompatible shapes for broadcasting: (3,), (4,)." in msg


def test_jnp_add_incompatible_shapes():
    msg = catch(TypeError, jnp.add, jnp.ones(3), jnp.ones(4))
    assert msg == "add got incompatible shapes for broadcasting: (3,), (4,)."
    with pytest.raises(TypeError, match="incompatible shapes for broadcasting"):
        jnp.ones(3) + jnp.ones(4)
    with pytest.raises(TypeError, match="incompatible shapes for broadcasting"):
        jax.jit(jnp.add)(jnp.ones(3), jnp.ones(4))


def test_jnp_function_of_list_raises():
    msg = catch(TypeError, jnp.sum, [1, 2, 3])
    assert (
        msg
        == "sum requires ndarray or scalar arguments, got <class 'list'> at position 0."
    )
    with pytest.raises(TypeError, match="add requires ndarray or scalar arguments"):
        jnp.add([1, 2], 1)


def test_errors_match_jax_messages():
    real_jax = pytest.importorskip("jax")
    real_jnp = real_jax.numpy
    cases = [
        (lambda m, n: m.lax.add(n.float32(1), n.int32(1))),
        (lambda m, n: m.lax.sin(n.int32(1))),
        (lambda m, n: n.add(n.ones(3), n.ones(4))),
        (lambda m, n: n.sum([1, 2, 3])),
    ]
    for case in cases:
        with pytest.raises(Exception) as ours:
            case(jax, jnp)
        with pytest.raises(Exception) as theirs:
            case(real_jax, real_jnp)
        assert type(ours.value) is type(theirs.value)
        assert str(ours.value) == str(theirs.value)
