"""Arrays own real memory, and four smaller fixes (issue 13).

1. Aliasing: an Array never shares memory that someone else can write. A NumPy input
   to a jnp/lax function (`ravel`, `transpose`, `lax.reshape`, ...) used to become the
   result's buffer, and a callback's returned array the result itself: writing to the
   NumPy array afterwards changed the "immutable" Array. Now such memory is copied,
   unless nobody can write it (an Array's own buffer handed out read-only comes back
   without a copy).
2. Broadcasts: `jnp.zeros((10**6, 10**6))` was a 4 TB zero-stride view that made every
   later operation run for minutes. An Array's buffer is laid out in memory (small
   constants have C strides, as in JAX), and an allocation that cannot succeed raises
   JAX's RESOURCE_EXHAUSTED `JaxRuntimeError` at once, naming the shape and bytes.
   Inside `jit` a broadcast that only jaxlite reads stays a view.
3. `vjp`: an integer output's cotangent may be given as an integer array (the output
   itself passed back) or any dtype of the right shape, as in JAX, not only float0.
4. `grad` of `x ** n` on bfloat16; `jnp.expand_dims`/`squeeze` with a `range` of axes;
   `jax.scipy.linalg.solve_triangular` broadcasting batch dimensions; `reduce_window`
   of an integer operand from a float identity (`-inf` for max pooling).

Where JAX is installed the results are compared with it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.errors import JaxRuntimeError
from jaxlite.experimental import io_callback

SDS = jax.ShapeDtypeStruct
F32 = np.float32


def _real_jax():
    try:
        import jax as real_jax
    except ImportError:
        return None
    return real_jax


def _values(tree):
    return [np.array(leaf) for leaf in jax.tree_util.tree_leaves(tree)]


def _owned(x):
    """An input, as the caller's writable NumPy array."""
    return np.arange(1, 7, dtype=F32).reshape(2, 3)


# --------------------------------------------------------------------------------------
# 1. Aliasing: NumPy inputs


SHAPE_FUNCTIONS = {
    "ravel": lambda m, x: m.numpy.ravel(x),
    "transpose": lambda m, x: m.numpy.transpose(x),
    "squeeze": lambda m, x: m.numpy.squeeze(x[None]),
    "expand_dims": lambda m, x: m.numpy.expand_dims(x, 0),
    "moveaxis": lambda m, x: m.numpy.moveaxis(x, 0, 1),
    "broadcast_to": lambda m, x: m.numpy.broadcast_to(x, (2, 2, 3)),
    "atleast_1d": lambda m, x: m.numpy.atleast_1d(x),
    "atleast_2d": lambda m, x: m.numpy.atleast_2d(x),
    "atleast_3d": lambda m, x: m.numpy.atleast_3d(x),
    "real": lambda m, x: m.numpy.real(x),
    "conj": lambda m, x: m.numpy.conj(x),
    "imag": lambda m, x: m.numpy.imag(x),
    "lax.reshape": lambda m, x: m.lax.reshape(x, (3, 2)),
    "reshape": lambda m, x: m.numpy.reshape(x, (3, 2)),
    "swapaxes": lambda m, x: m.numpy.swapaxes(x, 0, 1),
    "flip": lambda m, x: m.numpy.flip(x),
    "fliplr": lambda m, x: m.numpy.fliplr(x),
    "rot90": lambda m, x: m.numpy.rot90(x),
    "lax.slice": lambda m, x: m.lax.slice(x, (0, 0), (2, 2)),
    "lax.rev": lambda m, x: m.lax.rev(x, (0,)),
    "lax.expand_dims": lambda m, x: m.lax.expand_dims(x, (0,)),
    "lax.squeeze": lambda m, x: m.lax.squeeze(x[None], (0,)),
    "lax.transpose": lambda m, x: m.lax.transpose(x, (1, 0)),
    "lax.broadcast_in_dim": lambda m, x: m.lax.broadcast_in_dim(x, (2, 3), (0, 1)),
    "lax.convert_element_type": lambda m, x: m.lax.convert_element_type(x, F32),
    "lax.reduce_sum over no axes": lambda m, x: m.lax.reduce(x, 0.0, m.lax.add, ()),
    "lax.dot_general": lambda m, x: m.lax.dot_general(x, x.T, (((1,), (0,)), ((), ()))),
    "asarray": lambda m, x: m.numpy.asarray(x),
    "array(copy=False)": lambda m, x: m.numpy.array(x, copy=False),
    "asarray(copy=False)": lambda m, x: m.numpy.asarray(x, copy=False),
    "asarray(dtype)": lambda m, x: m.numpy.asarray(x, F32),
    "matrix_transpose": lambda m, x: m.numpy.matrix_transpose(x),
    "stack of one": lambda m, x: m.numpy.stack([x]),
    "concatenate of one": lambda m, x: m.numpy.concatenate([x]),
    "split": lambda m, x: m.numpy.split(x, 2),
    "broadcast_arrays": lambda m, x: m.numpy.broadcast_arrays(x, x),
    "where": lambda m, x: m.numpy.where(True, x, 0.0),
}


@pytest.mark.parametrize("name", list(SHAPE_FUNCTIONS))
def test_a_numpy_input_is_not_shared_by_the_result(name):
    fn = SHAPE_FUNCTIONS[name]
    x = _owned(None)
    out = fn(jax, x)
    before = _values(out)
    real_jax = _real_jax()
    expected = _values(fn(real_jax, x.copy())) if real_jax is not None else before
    x[...] = -100.0  # the caller writes to its own array afterwards
    after = _values(out)
    for a, b, e in zip(after, before, expected):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, e)
    for leaf in jax.tree_util.tree_leaves(out):
        assert not np.shares_memory(np.asarray(leaf), x)


@pytest.mark.parametrize("module", ["numpy", "lax"])
def test_no_function_of_one_numpy_array_aliases_it(module):
    # Every public function of one array argument that accepts a writable float32
    # matrix, eagerly and under jit: writing to the input afterwards changes nothing.
    mod = jnp if module == "numpy" else lax
    tried = 0
    for name in sorted(dir(mod)):
        fn = getattr(mod, name)
        if name.startswith("_") or not callable(fn) or isinstance(fn, type):
            continue
        for wrap in (lambda f: f, jax.jit):
            x = _owned(None)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    out = wrap(fn)(x)
            except Exception:
                continue
            leaves = jax.tree_util.tree_leaves(out)
            if not leaves or not all(type(leaf) is jax.Array for leaf in leaves):
                continue
            tried += 1
            before = _values(out)
            x[...] = 77.0
            for a, b in zip(_values(out), before):
                np.testing.assert_array_equal(a, b, err_msg=f"{module}.{name}")
    assert tried > (200 if module == "numpy" else 60)


def test_a_read_only_array_is_copied_too():
    # Its owner may make it writable again: only memory of jaxlite's own is shared.
    buf = np.arange(6, dtype=F32)
    buf.flags.writeable = False
    out = jnp.ravel(buf)
    buf.flags.writeable = True
    buf[0] = 10.0
    assert float(out[0]) == 0.0


def test_a_read_only_view_of_a_writable_buffer_is_copied():
    buf = np.arange(6, dtype=F32)
    view = buf.view()
    view.flags.writeable = False
    out = jnp.ravel(view)
    buf[0] = 10.0
    assert float(out[0]) == 0.0


def test_an_object_handing_out_its_own_buffer_is_copied():
    class Holder:
        def __init__(self):
            self.data = np.arange(3, dtype=F32)

        def __array__(self, dtype=None, copy=None):
            return self.data

    h = Holder()
    out = jnp.asarray(h)
    h.data[0] = 5.0
    np.testing.assert_array_equal(np.asarray(out), [0.0, 1.0, 2.0])


def test_jnp_asarray_of_numpy_copies_as_in_jax():
    x = np.ones(3, F32)
    out = jnp.asarray(x)
    x[0] = 2.0
    assert float(out[0]) == 1.0
    real_jax = _real_jax()
    if real_jax is not None:
        y = np.ones(3, F32)
        ref = real_jax.numpy.asarray(y)
        y[0] = 2.0
        assert float(ref[0]) == float(out[0])


# --------------------------------------------------------------------------------------
# 1. Aliasing: callback results


def _pure(buf, **kw):
    return lambda x: jax.pure_callback(lambda v: buf, SDS((3,), F32), x, **kw)


def _io(buf):
    return lambda x: io_callback(lambda v: buf, SDS((3,), F32), x)


CALLBACK_CASES = {
    "pure eager": lambda buf: _pure(buf)(1.0),
    "pure jit": lambda buf: jax.jit(_pure(buf))(1.0),
    "io eager": lambda buf: _io(buf)(1.0),
    "io jit": lambda buf: jax.jit(_io(buf))(1.0),
    "pure vmap sequential": lambda buf: jax.vmap(_pure(buf, vmap_method="sequential"))(
        jnp.ones(2)
    ),
    "pure vmap expand_dims": lambda buf: jax.vmap(
        lambda x: jax.pure_callback(
            lambda v: buf[None], SDS((3,), F32), x, vmap_method="expand_dims"
        )
    )(jnp.ones(1)),
    "pure vmap broadcast_all": lambda buf: jax.vmap(
        lambda x: jax.pure_callback(
            lambda v: buf[None], SDS((3,), F32), x, vmap_method="broadcast_all"
        )
    )(jnp.ones(1)),
    "io vmap": lambda buf: jax.vmap(_io(buf))(jnp.ones(2)),
    "pure pytree": lambda buf: jax.pure_callback(
        lambda: {"a": buf, "b": [buf]}, {"a": SDS((3,), F32), "b": [SDS((3,), F32)]}
    ),
    "pure jit scan": lambda buf: jax.jit(
        lambda: lax.scan(lambda c, _: (_pure(buf)(c[0]), None), jnp.zeros(3), None, 2)
    )()[0],
}


@pytest.mark.parametrize("case", list(CALLBACK_CASES))
def test_a_callback_writing_its_result_buffer_later_changes_no_array(case):
    buf = np.arange(3, dtype=F32)
    out = CALLBACK_CASES[case](buf)
    before = _values(out)
    buf[...] = -1.0  # the callback's owner keeps the buffer and writes it later
    for a, b in zip(_values(out), before):
        np.testing.assert_array_equal(a, b)
    for leaf in jax.tree_util.tree_leaves(out):
        assert not np.shares_memory(np.asarray(leaf), buf)


@pytest.mark.parametrize("wrap", ["eager", "jit"])
@pytest.mark.parametrize(
    "view",
    [lambda v: v, lambda v: v[::2], lambda v: v.reshape(10, 100).T, np.asarray],
    ids=["itself", "strided", "transposed", "np.asarray"],
)
@pytest.mark.numpy_backend
def test_a_callback_returning_a_view_of_its_argument_copies_nothing(view, wrap):
    x = jnp.arange(1000.0)
    shape = np.shape(view(np.asarray(x)))
    f = lambda x: jax.pure_callback(view, SDS(shape, x.dtype), x)
    f = jax.jit(f) if wrap == "jit" else f
    out = f(x)
    assert np.shares_memory(np.asarray(out), np.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), view(np.arange(1000.0, dtype=F32)))


def test_a_callback_returning_its_numpy_argument_copies_it():
    # Eagerly a NumPy argument arrives as a read-only view of the caller's array: not
    # jaxlite's memory.
    x = np.arange(3, dtype=F32)
    out = jax.pure_callback(lambda v: v, SDS((3,), F32), x)
    x[0] = 9.0
    np.testing.assert_array_equal(np.asarray(out), [0.0, 1.0, 2.0])


@pytest.mark.numpy_backend
@pytest.mark.parametrize("wrap", ["eager", "jit"])
def test_a_callback_returning_its_argument_or_an_array_copies_nothing(wrap):
    x = jnp.arange(1000.0)
    f = lambda x: jax.pure_callback(lambda v: v, SDS(x.shape, x.dtype), x)
    g = lambda x: jax.pure_callback(lambda v: x_arr, SDS(x.shape, x.dtype), x)
    x_arr = jnp.arange(1000.0) + 1
    if wrap == "jit":
        f, g = jax.jit(f), jax.jit(g)
    assert np.shares_memory(np.asarray(f(x)), np.asarray(x))
    assert np.shares_memory(np.asarray(g(x)), np.asarray(x_arr))


# --------------------------------------------------------------------------------------
# 2. Arrays are real arrays; impossible allocations fail at once

CONSTRUCTORS = {
    "zeros": lambda m: m.numpy.zeros((3, 3)),
    "ones": lambda m: m.numpy.ones((3, 3)),
    "empty": lambda m: m.numpy.empty((3, 3)),
    "full": lambda m: m.numpy.full((3, 3), 2.0),
    "full vector": lambda m: m.numpy.full((3, 3), m.numpy.arange(3.0)),
    "zeros_like": lambda m: m.numpy.zeros_like(np.ones((3, 3), F32)),
    "ones_like": lambda m: m.numpy.ones_like(m.numpy.ones((3, 3))),
    "full_like": lambda m: m.numpy.full_like(m.numpy.ones((3, 3)), 7),
    "eye": lambda m: m.numpy.eye(3),
    "identity": lambda m: m.numpy.identity(3),
    "tri": lambda m: m.numpy.tri(3),
    "broadcast_to": lambda m: m.numpy.broadcast_to(m.numpy.arange(3.0), (3, 3)),
    "broadcast_arrays": lambda m: m.numpy.broadcast_arrays(
        m.numpy.arange(3.0), m.numpy.ones((3, 3))
    )[0],
    "lax.full": lambda m: m.lax.full((3, 3), 1.0),
    "lax.broadcast_in_dim": lambda m: m.lax.broadcast_in_dim(1.0, (3, 3), ()),
    "lax.broadcast": lambda m: m.lax.broadcast(m.numpy.arange(3.0), (3,)),
    "lax.broadcasted_iota": lambda m: m.lax.broadcasted_iota(np.int32, (3, 3), 1),
    "indices": lambda m: m.numpy.indices((3, 3))[0],
    "meshgrid": lambda m: m.numpy.meshgrid(m.numpy.arange(3), m.numpy.arange(3))[0],
    "vmap of a constant": lambda m: m.vmap(lambda x: m.numpy.ones(3))(m.numpy.ones(3)),
    "grad of sum": lambda m: m.grad(lambda x: x.sum())(m.numpy.ones((3, 3))),
}


@pytest.mark.parametrize("wrap", ["eager", "jit"])
@pytest.mark.parametrize("name", list(CONSTRUCTORS))
def test_constants_are_laid_out_like_jaxs(name, wrap):
    make = CONSTRUCTORS[name]
    out = make(jax) if wrap == "eager" else jax.jit(lambda: make(jax))()
    assert np.asarray(out).strides == (12, 4)
    real_jax = _real_jax()
    if real_jax is not None:
        ref = make(real_jax)
        assert np.asarray(ref).strides == np.asarray(out).strides
        np.testing.assert_array_equal(np.asarray(out), np.asarray(ref))


def test_large_broadcasts_are_laid_out_too():
    shapes = {
        "eager": jnp.zeros((300, 400)),
        "jit": jax.jit(lambda: jnp.zeros((300, 400)))(),
    }
    for out in shapes.values():
        assert np.asarray(out).strides == (1600, 4)
    x = jnp.arange(400.0)
    out = jax.jit(lambda x: jnp.broadcast_to(x, (300, 400)))(x)
    assert np.asarray(out).strides == (1600, 4)
    out = jax.jit(lambda: lax.broadcasted_iota(np.int32, (300, 400), 0).T)()
    assert 0 not in np.asarray(out).strides


HUGE = {
    "zeros": (lambda: jnp.zeros((10**6, 10**6)), (10**6, 10**6), 4 * 10**12),
    "ones": (lambda: jnp.ones((10**6, 10**6)), (10**6, 10**6), 4 * 10**12),
    "full": (lambda: jnp.full((10**6, 10**6), 2.0), (10**6, 10**6), 4 * 10**12),
    "broadcast_to": (
        lambda: jnp.broadcast_to(jnp.ones(3), (10**12, 3)),
        (10**12, 3),
        12 * 10**12,
    ),
    "zeros_like": (
        lambda: jnp.zeros_like(SDS((10**6, 10**6), F32)),
        (10**6, 10**6),
        4 * 10**12,
    ),
    "iota": (
        lambda: lax.broadcasted_iota(np.int32, (10**6, 10**6), 0),
        (10**6, 10**6),
        4 * 10**12,
    ),
    "jit output": (
        lambda: jax.jit(lambda: jnp.zeros((10**6, 10**6)))(),
        (10**6, 10**6),
        4 * 10**12,
    ),
}


@pytest.mark.numpy_backend
@pytest.mark.parametrize("name", list(HUGE))
def test_an_impossible_allocation_fails_at_once_naming_shape_and_bytes(name):
    make, shape, nbytes = HUGE[name]
    with pytest.raises(JaxRuntimeError, match="RESOURCE_EXHAUSTED") as info:
        make()
    assert f"{nbytes} bytes" in str(info.value)
    assert str(shape) in str(info.value)
    assert isinstance(info.value, RuntimeError)  # as JAX's JaxRuntimeError


def test_jax_raises_the_same_class_and_phrase():
    real_jax = _real_jax()
    if real_jax is None:
        pytest.skip("needs jax")
    with pytest.raises(real_jax.errors.JaxRuntimeError) as info:
        real_jax.numpy.zeros((10**6, 10**6))
    assert "RESOURCE_EXHAUSTED" in str(info.value)
    assert f"{4 * 10**12} bytes" in str(info.value)


def test_inside_jit_a_broadcast_read_only_by_jaxlite_stays_a_view():
    # 64 MB if it were laid out; a view costs nothing.
    tracemalloc = pytest.importorskip("tracemalloc")  # not in PyPy
    f = jax.jit(lambda: jnp.zeros((4000, 4000)).sum())
    f()
    tracemalloc.start()
    try:
        assert float(f()) == 0.0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20


@pytest.mark.numpy_backend
def test_a_jitted_mlp_checks_none_of_its_fresh_outputs():
    # Outputs that the compiled function allocated itself are real arrays already:
    # only views (a transpose, an input passed through, ...) get a stride check.
    def mlp(params, x):
        (w1, b1), (w2, b2) = params
        return jnp.tanh(x @ w1 + b1) @ w2 + b2

    params = [(jnp.ones((4, 8)), jnp.zeros(8)), (jnp.ones((8, 2)), jnp.zeros(2))]
    text = jax.jit(mlp).lower(params, jnp.ones((3, 4))).as_text()
    assert "_laid_out" not in text
    text = jax.jit(lambda x: x.T).lower(jnp.ones((3, 4))).as_text()
    assert "_laid_out" in text


# --------------------------------------------------------------------------------------
# 3. vjp with integer outputs


def _vjp_cases(m):
    out, f_vjp = m.vjp(lambda x: (x * 2.0, m.numpy.arange(2)), 1.0)
    float0 = np.zeros(2, m.dtypes.float0)
    return {
        "the outputs themselves": lambda: f_vjp(out),
        "float0": lambda: f_vjp((1.0, float0)),
        "int32": lambda: f_vjp((1.0, np.ones(2, np.int32))),
        "int16": lambda: f_vjp((1.0, np.ones(2, np.int16))),
        "float32": lambda: f_vjp((1.0, np.ones(2, F32))),
        "bool": lambda: f_vjp((1.0, np.ones(2, bool))),
    }


@pytest.mark.parametrize(
    "case", ["the outputs themselves", "float0", "int32", "int16", "float32", "bool"]
)
def test_vjp_accepts_any_dtype_for_an_integer_outputs_cotangent(case):
    (ct,) = _vjp_cases(jax)[case]()
    real_jax = _real_jax()
    expected = 4.0 if case == "the outputs themselves" else 2.0
    if real_jax is not None:
        (ref,) = _vjp_cases(real_jax)[case]()
        expected = float(ref)
    assert float(ct) == expected


def test_vjp_still_checks_the_shape_of_an_integer_outputs_cotangent():
    _, f_vjp = jax.vjp(lambda x: (x * 2.0, jnp.arange(2)), 1.0)
    with pytest.raises(ValueError, match=r"got int32\[3\], but expected float0\[2\]"):
        f_vjp((1.0, jnp.arange(3)))
    _, f_vjp = jax.vjp(lambda x: x * 2.0, 1.0)
    with pytest.raises(ValueError, match="unexpected JAX type"):
        f_vjp(np.int32(1))  # a float output still needs a float cotangent


def test_vjp_of_an_integer_function_takes_its_output_back():
    _, f_vjp = jax.vjp(lambda x: x.astype(jnp.int32), jnp.arange(3))
    (ct,) = f_vjp(jnp.arange(3))
    assert ct.dtype == jax.dtypes.float0 and ct.shape == (3,)


# --------------------------------------------------------------------------------------
# 4. bfloat16 powers, expand_dims axes, solve_triangular batches, reduce_window inits

POWERS = {
    "x ** 3": lambda m, x: x**3,
    "x ** 2": lambda m, x: x**2,
    "x ** -2": lambda m, x: x**-2,
    "x ** 0": lambda m, x: x**0,
    "x ** 2.5": lambda m, x: x**2.5,
    "jnp.power(x, 3)": lambda m, x: m.numpy.power(x, 3),
    "lax.integer_pow": lambda m, x: m.lax.integer_pow(x, 3),
    "lax.pow(x, bf16 3)": lambda m, x: m.lax.pow(x, m.numpy.asarray(3.0, x.dtype)),
}


@pytest.mark.parametrize("name", list(POWERS))
def test_grad_of_powers_in_bfloat16(name):
    fn = POWERS[name]

    def grads(m):
        x = m.numpy.asarray(2.0, m.numpy.bfloat16)
        g = m.grad(lambda x: fn(m, x))(x)
        _, t = m.jvp(lambda x: fn(m, x), (x,), (m.numpy.ones_like(x),))
        return g, t

    g, t = grads(jax)
    assert g.dtype == jnp.bfloat16 and t.dtype == jnp.bfloat16
    real_jax = _real_jax()
    if real_jax is not None:
        ref_g, ref_t = grads(real_jax)
        assert float(g) == float(ref_g) and float(t) == float(ref_t)


def test_a_python_scalar_next_to_bfloat16_takes_its_dtype_as_next_to_float16():
    # jaxlite's lax lets a weak Python scalar take the dtype of the array next to it
    # when its kind fits (the JVP rules of the powers rely on it); NumPy calls
    # bfloat16's kind "V", which had kept the scalar float32.
    for dtype in (jnp.float16, jnp.bfloat16):
        out = lax.mul(jnp.ones(2, dtype), 2.0)
        assert out.dtype == dtype
        np.testing.assert_array_equal(np.asarray(out, F32), [2.0, 2.0])


def test_hessian_of_a_cube_in_bfloat16():
    x = jnp.asarray(2.0, jnp.bfloat16)
    assert float(jax.hessian(lambda x: x**3)(x)) == 12.0


# name -> (call on a module with JAX's API, the shape JAX gives)
AXES = {
    "range": (
        lambda m: m.numpy.expand_dims(m.numpy.ones(3), range(2)),
        (1, 1, 3),
    ),
    "generator": (
        lambda m: m.numpy.expand_dims(m.numpy.ones(3), (i for i in (0, 2))),
        (1, 3, 1),
    ),
    "numpy array": (
        lambda m: m.numpy.expand_dims(m.numpy.ones(3), np.array([0, 2])),
        (1, 3, 1),
    ),
    "list": (lambda m: m.numpy.expand_dims(m.numpy.ones(3), [0, -1]), (1, 3, 1)),
    "squeeze range": (
        lambda m: m.numpy.squeeze(m.numpy.ones((1, 1, 3)), range(2)),
        (3,),
    ),
    "flip range": (lambda m: m.numpy.flip(m.numpy.ones((2, 3)), range(2)), (2, 3)),
    "moveaxis range": (
        lambda m: m.numpy.moveaxis(m.numpy.ones((1, 2, 3)), range(2), (1, 2)),
        (3, 1, 2),
    ),
}


@pytest.mark.parametrize("name", list(AXES))
def test_axes_given_as_any_iterable(name):
    call, shape = AXES[name]
    assert call(jax).shape == shape
    real_jax = _real_jax()
    if real_jax is not None:
        assert call(real_jax).shape == shape


def test_expand_dims_rejects_repeated_and_non_integer_axes():
    with pytest.raises(ValueError, match="repeated axis"):
        jnp.expand_dims(jnp.ones(3), (0, 0))
    with pytest.raises(TypeError):
        jnp.expand_dims(jnp.ones(3), 1.5)


def _triangular():
    rng = np.random.default_rng(0)
    a = np.tril(rng.normal(size=(3, 3))) + 3 * np.eye(3)
    a = np.stack([a, 2 * a]).astype(F32)  # (2, 3, 3)
    b = rng.normal(size=(3, 2)).astype(F32)
    return a, b


SOLVES = {
    "batched a, matrix b": lambda s, a, b: s(a, b, lower=True),
    "batched a, vector b": lambda s, a, b: s(a, b[:, 0], lower=True),
    "matrix a, batched b": lambda s, a, b: s(
        a[0], np.stack([b, 2 * b, 3 * b]), lower=True
    ),
    "both batched": lambda s, a, b: s(a, np.stack([b, 2 * b]), lower=True),
    "batches broadcast": lambda s, a, b: s(
        a[:, None], np.stack([b, 2 * b, 3 * b])[None], lower=True
    ),
    "batches broadcast, leading": lambda s, a, b: s(
        a[:, None], np.stack([b, 2 * b, 3 * b]), lower=True
    ),
    "trans": lambda s, a, b: s(a, b, lower=True, trans=1),
    "conjugate trans, unit diagonal": lambda s, a, b: s(
        a, b, lower=True, trans="C", unit_diagonal=True
    ),
    "upper": lambda s, a, b: s(np.swapaxes(a, -1, -2), b),
}


@pytest.mark.parametrize("name", list(SOLVES))
def test_solve_triangular_broadcasts_batch_dimensions(name):
    a, b = _triangular()
    solve = SOLVES[name]
    out = np.asarray(solve(jax.scipy.linalg.solve_triangular, a, b))
    # Reference: per-matrix NumPy solves of the broadcast operands.
    real_jax = _real_jax()
    if real_jax is not None:
        ref = np.asarray(solve(real_jax.scipy.linalg.solve_triangular, a, b))
        assert out.shape == ref.shape
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    assert np.all(np.isfinite(out))


def test_solve_triangular_batched_vectors_warn_as_in_jax():
    a, b = _triangular()
    bs = np.stack([b[:, 0], 2 * b[:, 0]])  # (2, 3): one dimension less than `a`
    with pytest.warns(FutureWarning, match="batched 1D solves with b.ndim > 1"):
        out = jax.scipy.linalg.solve_triangular(a, bs, lower=True)
    assert out.shape == (2, 3)
    for i in range(2):
        np.testing.assert_allclose(
            np.asarray(out[i]), np.linalg.solve(a[i], bs[i]), rtol=1e-5, atol=1e-5
        )


def test_solve_triangular_gradient_through_a_broadcast_batch():
    a, b = _triangular()

    def loss(a):
        return jax.scipy.linalg.solve_triangular(a, jnp.asarray(b), lower=True).sum()

    g = jax.grad(loss)(jnp.asarray(a))
    assert g.shape == a.shape
    real_jax = _real_jax()
    if real_jax is not None:
        ref = real_jax.grad(
            lambda a: real_jax.scipy.linalg.solve_triangular(a, b, lower=True).sum()
        )(a)
        np.testing.assert_allclose(np.asarray(g), np.asarray(ref), rtol=1e-4, atol=1e-5)


X_INT = np.arange(6, dtype=np.int32).reshape(2, 3)

WINDOWS = {
    "add from 0.0": lambda m, x: m.lax.reduce_window(
        x, 0.0, m.lax.add, (1, 2), (1, 1), "VALID"
    ),
    "max from -inf": lambda m, x: m.lax.reduce_window(
        x, -np.inf, m.lax.max, (1, 2), (1, 1), "VALID"
    ),
    "min from inf, SAME": lambda m, x: m.lax.reduce_window(
        x, np.inf, m.lax.min, (1, 2), (1, 1), "SAME"
    ),
    "max from -inf, SAME": lambda m, x: m.lax.reduce_window(
        x, -np.inf, m.lax.max, (1, 2), (1, 1), "SAME"
    ),
    "float operand, max from int32 min": lambda m, x: m.lax.reduce_window(
        x.astype(F32), np.int32(-(2**31)), m.lax.max, (1, 2), (1, 1), "VALID"
    ),
    "jit max from -inf": lambda m, x: m.jit(
        lambda x: m.lax.reduce_window(x, -np.inf, m.lax.max, (2, 2), (1, 1), "VALID")
    )(x),
    "reduce max from -inf": lambda m, x: m.lax.reduce(x, -np.inf, m.lax.max, (1,)),
}


@pytest.mark.parametrize("name", list(WINDOWS))
def test_reduce_window_of_integers_from_a_float_identity(name):
    out = WINDOWS[name](jax, jnp.asarray(X_INT))
    real_jax = _real_jax()
    if real_jax is not None:
        ref = WINDOWS[name](real_jax, real_jax.numpy.asarray(X_INT))
        assert out.dtype == ref.dtype
        np.testing.assert_array_equal(np.asarray(out), np.asarray(ref))


@pytest.mark.parametrize(
    "init,computation",
    [(0.5, lax.add), (1.0, lax.mul), (-128, lax.max)],
    ids=["add from 0.5", "mul from 1.0", "int8 max from a weak int"],
)
def test_reduce_window_init_that_is_no_identity_must_match_the_dtype(init, computation):
    x = jnp.asarray(X_INT, np.int8 if init == -128 else np.int32)
    with pytest.raises(TypeError, match="inconsistent dtypes"):
        lax.reduce_window(x, init, computation, (1, 2), (1, 1), "VALID")
    real_jax = _real_jax()
    if real_jax is not None:
        with pytest.raises(TypeError, match="inconsistent dtypes"):
            real_jax.lax.reduce_window(
                real_jax.numpy.asarray(np.asarray(x)),
                init,
                getattr(real_jax.lax, computation.__name__),
                (1, 2),
                (1, 1),
                "VALID",
            )
