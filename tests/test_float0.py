"""float0 at the API boundary (issue 16, item 1), compared with real JAX 0.10.2.

Derivatives with respect to integer and boolean inputs have dtype float0, and JAX gives
them to users as NumPy arrays (its `TypedNdArray`, an ndarray subclass), never as
device Arrays: they compare, reshape and `tree.map` as NumPy arrays do. NumPy float0
arrays are accepted wherever a tangent or cotangent of an integer value is. Each case
below runs the same program in both libraries and compares, leaf by leaf, whether the
result is a NumPy float0 array (and its shape) or an Array (dtype, weak type, value).
"""

from __future__ import annotations

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp_lite

jax = pytest.importorskip("jax")
import jax.numpy as jnp_jax  # noqa: E402


def _describe(x):
    """What a result leaf is, the same way in both libraries."""
    if isinstance(x, np.ndarray) and x.dtype == jaxlite.dtypes.float0:
        return ("numpy float0", x.shape)
    if isinstance(x, (float, int, bool)):
        return ("python", type(x).__name__, x)
    assert not isinstance(x, np.ndarray), f"a NumPy array of dtype {x.dtype}"
    return (
        "array",
        np.dtype(x.dtype).name,
        x.shape,
        bool(getattr(x, "weak_type", False)),
        np.asarray(x).tolist(),
    )


def _tree(lib, x):
    return lib.tree_util.tree_map(_describe, x)


def _run_both(case):
    mine = case(jaxlite, jnp_lite)
    theirs = case(jax, jnp_jax)
    return _tree(jaxlite, mine), _tree(jax, theirs)


def _f0(m, shape=()):
    return np.zeros(shape, m.dtypes.float0)


def _custom_vjp_scale(m, bwd_int_ct):
    @m.custom_vjp
    def scale(x, n):
        return x * n

    def fwd(x, n):
        return x * n, n

    def bwd(n, g):
        return g * n, bwd_int_ct(m)

    scale.defvjp(fwd, bwd)
    return scale


def _custom_jvp_scale(m):
    @m.custom_jvp
    def scale(x, n):
        return x * n

    @scale.defjvp
    def scale_jvp(primals, tangents):
        x, n = primals
        return x * n, tangents[0] * n

    return scale


CASES = {
    "grad allow_int": lambda m, jnp: m.grad(
        lambda x, y: y * 2.0, argnums=(0, 1), allow_int=True
    )(3, 2.0),
    "grad of an int array": lambda m, jnp: m.grad(
        lambda x: jnp.sum(x * 2.0), allow_int=True
    )(jnp.arange(3)),
    "grad of a bool": lambda m, jnp: m.grad(lambda x, y: y * 2.0, allow_int=True)(
        jnp.bool_(True), 1.0
    ),
    "jit of grad": lambda m, jnp: m.jit(
        m.grad(lambda x, y: x * y, argnums=(0, 1), allow_int=True)
    )(jnp.int32(3), 2.0),
    "vmap of grad": lambda m, jnp: m.vmap(
        m.grad(lambda x, y: x * y, argnums=(0, 1), allow_int=True)
    )(jnp.arange(3), jnp.ones(3)),
    "value_and_grad": lambda m, jnp: m.value_and_grad(
        lambda x, y: y * x * 2.0, allow_int=True
    )(jnp.int32(3), 1.0)[1],
    "grad of a dict with int and float leaves": lambda m, jnp: m.grad(
        lambda d: d["a"] * d["b"], allow_int=True
    )({"a": jnp.int32(1), "b": 2.0}),
    "tree.map over the gradient": lambda m, jnp: m.tree.map(
        lambda g: g,
        m.grad(lambda d: d["a"] * d["b"], allow_int=True)({"a": 1, "b": 2.0}),
    ),
    "jvp with a NumPy float0 tangent": lambda m, jnp: m.jvp(
        lambda x: x * 2, (jnp.arange(2),), (_f0(m, (2,)),)
    ),
    "jvp with jnp.zeros(float0)": lambda m, jnp: m.jvp(
        lambda x: x * 2, (jnp.arange(2),), (jnp.zeros(2, m.dtypes.float0),)
    ),
    "jvp, mixed int and float": lambda m, jnp: m.jvp(
        lambda x, y: (x * 2, y * x),
        (jnp.arange(2), jnp.ones(2)),
        (_f0(m, (2,)), jnp.ones(2)),
    ),
    "jvp of a bool output": lambda m, jnp: m.jvp(
        lambda x: x > 1, (jnp.ones(2),), (jnp.ones(2),)
    ),
    "vjp with a float0 cotangent": lambda m, jnp: m.vjp(
        lambda x, y: (x * 2, y * x), jnp.arange(2), jnp.ones(2)
    )[1]((_f0(m, (2,)), jnp.ones(2))),
    "vjp with the int output as cotangent": lambda m, jnp: m.vjp(
        lambda x, y: (x * 2, y * x), jnp.arange(2), jnp.ones(2)
    )[1]((jnp.arange(2), jnp.ones(2))),
    "vjp of jit": lambda m, jnp: m.vjp(
        m.jit(lambda x, y: (x * 2, x * y)), jnp.int32(3), 2.0
    )[1]((_f0(m), 1.0)),
    "linearize": lambda m, jnp: m.linearize(
        lambda x, y: (x * 2, y * x), jnp.arange(2), jnp.ones(2)
    )[1](_f0(m, (2,)), jnp.ones(2)),
    "jacrev allow_int (zeros of the input's dtype)": lambda m, jnp: m.jacrev(
        lambda x, y: (x * y, y), argnums=(0, 1), allow_int=True
    )(jnp.arange(2), jnp.ones(2)),
    "jacrev of a Python int (weak)": lambda m, jnp: m.jacrev(
        lambda x: x * 2.0, allow_int=True
    )(1),
    "jacrev of an int16": lambda m, jnp: m.jacrev(lambda x: x * 2.0, allow_int=True)(
        jnp.int16(1)
    ),
    "jacfwd of an int output": lambda m, jnp: m.jacfwd(
        lambda x: (x * 2).astype(jnp.int32)
    )(jnp.ones(2)),
    "grad of grad": lambda m, jnp: m.grad(
        m.grad(lambda x, y: y * y * x, argnums=1), allow_int=True
    )(jnp.int32(3), 1.0),
    "checkpoint": lambda m, jnp: m.grad(
        m.checkpoint(lambda x, y: x * y), argnums=(0, 1), allow_int=True
    )(jnp.int32(3), 2.0),
    "scan": lambda m, jnp: m.grad(
        lambda x, n: m.lax.scan(lambda c, _: (c * n, None), x, None, length=2)[0],
        argnums=(0, 1),
        allow_int=True,
    )(2.0, jnp.int32(3)),
    "cond": lambda m, jnp: m.grad(
        lambda x, n: m.lax.cond(n > 1, lambda: x * n, lambda: x),
        argnums=(0, 1),
        allow_int=True,
    )(2.0, jnp.int32(3)),
    "custom_vjp, bwd gives None": lambda m, jnp: m.grad(
        _custom_vjp_scale(m, lambda m: None), argnums=(0, 1), allow_int=True
    )(2.0, jnp.int32(3)),
    "custom_vjp, bwd gives float0": lambda m, jnp: m.grad(
        _custom_vjp_scale(m, _f0), argnums=(0, 1), allow_int=True
    )(2.0, jnp.int32(3)),
    "custom_vjp under jit": lambda m, jnp: m.jit(
        m.grad(_custom_vjp_scale(m, _f0), argnums=(0, 1), allow_int=True)
    )(2.0, jnp.int32(3)),
    "custom_vjp vjp": lambda m, jnp: m.vjp(
        _custom_vjp_scale(m, lambda m: None), 2.0, jnp.int32(3)
    )[1](1.0),
    "custom_jvp grad": lambda m, jnp: m.grad(
        _custom_jvp_scale(m), argnums=(0, 1), allow_int=True
    )(2.0, jnp.int32(3)),
    "custom_jvp under vmap of grad": lambda m, jnp: m.vmap(
        m.grad(_custom_jvp_scale(m), argnums=(0, 1), allow_int=True)
    )(jnp.ones(2), jnp.arange(2)),
    "custom_gradient": lambda m, jnp: m.grad(
        m.custom_gradient(lambda x, n: (x * n, lambda g: (g * n, None))),
        argnums=(0, 1),
        allow_int=True,
    )(2.0, jnp.int32(3)),
    "key cotangent": lambda m, jnp: m.grad(lambda k, y: y * 2.0, allow_int=True)(
        m.random.key(0), 1.0
    ),
    "jit of the identity on float0": lambda m, jnp: m.jit(lambda a: a)(_f0(m, (2,))),
    "jit returning float0 twice": lambda m, jnp: m.jit(lambda a: (a, a.reshape(2, 1)))(
        _f0(m, (2,))
    ),
    "vmap of the identity on float0": lambda m, jnp: m.vmap(lambda a: a)(_f0(m, (2,))),
    "device_put": lambda m, jnp: m.device_put(_f0(m, (2,))),
    "jnp.asarray": lambda m, jnp: jnp.asarray(_f0(m, (2,))),
    "jnp.zeros_like": lambda m, jnp: jnp.zeros_like(_f0(m, (2,))),
    "jnp.zeros_like to float32": lambda m, jnp: jnp.zeros_like(
        _f0(m, (2,)), dtype=jnp.float32
    ),
    "jnp.stack": lambda m, jnp: jnp.stack([_f0(m, (2,)), _f0(m, (2,))]),
    "jnp.where": lambda m, jnp: jnp.where(True, _f0(m, (2,)), _f0(m, (2,))),
    "astype float32": lambda m, jnp: jnp.astype(_f0(m, (2,)), jnp.float32),
    "lax.convert_element_type": lambda m, jnp: m.lax.convert_element_type(
        _f0(m, (2,)), jnp.float32
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_float0_results_match_jax(name):
    mine, theirs = _run_both(CASES[name])
    assert mine == theirs


def test_float0_gradients_are_numpy_arrays_that_compare_and_reshape():
    g = jaxlite.grad(lambda x: jnp_lite.sum(x * 2.0), allow_int=True)(
        jnp_lite.arange(4)
    )
    assert type(g) is np.ndarray and g.dtype == jaxlite.dtypes.float0
    assert (g == np.zeros(4, jaxlite.dtypes.float0)).all()
    assert g.reshape(2, 2).shape == (2, 2)
    assert not isinstance(g, jaxlite.Array)


ERRORS = {
    "jnp.sin": (lambda m, jnp: jnp.sin(_f0(m, (2,))), "Called sin with a float0"),
    "jnp.add": (lambda m, jnp: jnp.add(_f0(m, (2,)), 1), "Called add with a float0"),
    "operator under jit": (
        lambda m, jnp: m.jit(lambda a: a + 1)(_f0(m, (2,))),
        "Called add with a float0",
    ),
    "lax.add": (
        lambda m, jnp: m.lax.add(_f0(m, (2,)), _f0(m, (2,))),
        "Called add with a float0 at position 0",
    ),
    "lax.sin": (lambda m, jnp: m.lax.sin(_f0(m, (2,))), "Called sin with a float0"),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_operations_on_float0_raise_jax_error(name):
    case, phrase = ERRORS[name]
    with pytest.raises(TypeError, match="Called .* with a float0") as theirs:
        case(jax, jnp_jax)
    with pytest.raises(TypeError, match=phrase) as mine:
        case(jaxlite, jnp_lite)
    assert "float0s do not support any operations by design" in str(mine.value)
    assert str(theirs.value).split(".")[0] == str(mine.value).split(".")[0]


@pytest.mark.parametrize("m", ["jaxlite", "jax"])
def test_jvp_tangent_dtype_errors_name_float0(m):
    lib = jaxlite if m == "jaxlite" else jax
    jnp = jnp_lite if m == "jaxlite" else jnp_jax
    with pytest.raises(
        TypeError, match=r"expected tangent dtype \[\('float0', 'V'\)\]"
    ):
        lib.jvp(lambda x: x * 2, (jnp.arange(2),), (jnp.zeros(2, jnp.int32),))
    with pytest.raises(TypeError, match=r"but got tangent dtype \[\('float0', 'V'\)\]"):
        lib.jvp(lambda x: x * 2.0, (jnp.ones(2),), (_f0(lib, (2,)),))
    with pytest.raises(ValueError, match="different primal and tangent shapes"):
        lib.jvp(lambda x: x * 2, (jnp.arange(2),), (_f0(lib, (3,)),))
    f_vjp = lib.vjp(lambda x: x * 2, jnp.arange(2))[1]
    with pytest.raises(ValueError, match=r"got float0\[3\], but expected float0\[2\]"):
        f_vjp(_f0(lib, (3,)))


def test_custom_vjp_bwd_float0_of_the_wrong_shape_is_an_error():
    # JAX accepts it and returns the primal's shape; jaxlite names the mismatch.
    scale = _custom_vjp_scale(jaxlite, lambda m: _f0(m, (2,)))
    with pytest.raises(ValueError, match="Custom VJP bwd rule"):
        jaxlite.grad(scale, argnums=(0, 1), allow_int=True)(2.0, jnp_lite.int32(3))


def test_float0_results_under_debug_nans():
    # The eager NaN check reads every output; float0 ones are NumPy arrays.
    with jaxlite.debug_nans(True):
        g = jaxlite.vmap(
            jaxlite.grad(lambda x, y: x * y, argnums=(0, 1), allow_int=True)
        )(jnp_lite.arange(3), jnp_lite.ones(3))
    assert type(g[0]) is np.ndarray and g[0].shape == (3,)
    assert g[1].tolist() == [0.0, 1.0, 2.0]
