"""Tests for vectorize (gufunc signatures, excluded arguments), piecewise,
apply_along_axis and apply_over_axes: values against real JAX and NumPy, jit against
eager, derivatives against finite differences, and JAX's error messages.
"""

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from testing import check_close, check_grads

RNG = np.random.default_rng(0)
A = RNG.standard_normal((4, 3, 2)).astype(np.float32)
B = RNG.standard_normal((3,)).astype(np.float32)
X = np.linspace(-2, 2, 9).astype(np.float32)

CASES = {
    "scalar": (lambda m: m.vectorize(lambda x, y: x * y + 1), (A, B[:, None])),
    "matvec": (
        lambda m: m.vectorize(lambda a, v: a @ v, signature="(n,k),(k)->(n)"),
        (A, A[0, 0]),
    ),
    "two_outputs": (
        lambda m: m.vectorize(
            lambda a, v: (a @ v, a.sum()), signature="(n,k),(k)->(n),()"
        ),
        (A, A[:1, 0]),
    ),
    "excluded": (
        lambda m: m.vectorize(
            lambda x, n: x[:n].sum(), excluded={1}, signature="(k)->()"
        ),
        (A, 1),
    ),
    "python_scalar": (lambda m: m.vectorize(lambda x: x + 1), (3,)),
    "new_core_dim": (
        lambda m: m.vectorize(lambda x: m.stack([x, x]), signature="()->(two)"),
        (B,),
    ),
    "piecewise": (
        lambda m: (
            lambda x: m.piecewise(
                x, [x < 0, x > 1], [lambda v: -v, lambda v: v**2, 7.0]
            )
        ),
        (X,),
    ),
    "piecewise_overlap": (
        lambda m: lambda x: m.piecewise(x, [x < 0, x > -1], [lambda v: -v, 3]),
        (X,),
    ),
    "piecewise_args": (
        lambda m: lambda x: m.piecewise(x, [x < 0], [lambda v, k: v * k, 1], 5),
        (X,),
    ),
    "piecewise_ints": (
        lambda m: lambda x: m.piecewise(x, [x < 0, x > 1], [1, 2, 3]),
        (np.arange(-2, 4),),
    ),
    "along_axis": (lambda m: lambda a: m.apply_along_axis(m.diff, 1, a), (A,)),
    "along_axis_0": (
        lambda m: (
            lambda a: m.apply_along_axis(lambda v: m.stack([v.sum(), v.max()]), 0, a)
        ),
        (A,),
    ),
    "along_axis_args": (
        lambda m: lambda a: m.apply_along_axis(lambda v, p: (v**p).sum(), 2, a, 2),
        (A,),
    ),
    "over_axes": (lambda m: lambda a: m.apply_over_axes(m.sum, a, [0, 2]), (A,)),
    "over_axes_keep": (
        lambda m: lambda a: m.apply_over_axes(lambda v, ax: m.cumsum(v, ax), a, (1,)),
        (A,),
    ),
}


def _leaves(x):
    return list(x) if isinstance(x, tuple) else [x]


@pytest.mark.parametrize("name", CASES)
def test_matches_jax(name):
    jax = pytest.importorskip("jax")
    make, args = CASES[name]
    ours, ref = _leaves(make(jnp)(*args)), _leaves(make(jax.numpy)(*args))
    for o, r in zip(ours, ref, strict=True):
        assert (o.shape, o.dtype, o.weak_type) == (r.shape, r.dtype, r.weak_type)
        check_close(np.asarray(o), np.asarray(r), atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize(
    "name", ["scalar", "matvec", "along_axis_0", "over_axes", "piecewise"]
)
def test_matches_numpy(name):
    make, args = CASES[name]
    ours = make(jnp)(*args)
    ref = make(np)(*args)
    check_close(
        np.asarray(ours), np.asarray(ref).astype(ours.dtype), atol=1e-6, rtol=1e-6
    )


@pytest.mark.parametrize(
    "name", ["matvec", "two_outputs", "excluded", "piecewise", "along_axis"]
)
def test_jit_matches_eager(name):
    make, args = CASES[name]
    f = make(jnp)
    if name == "excluded":
        g = lambda a: f(a, 1)
        eager, jitted = g(args[0]), jaxlite.jit(g)(args[0])
    else:
        eager, jitted = f(*args), jaxlite.jit(f)(*args)
    for e, j in zip(_leaves(eager), _leaves(jitted), strict=True):
        check_close(np.asarray(j), np.asarray(e))


def test_vectorize_broadcasts_without_materialising():
    seen = []

    def f(a, v):
        seen.append((np.shape(a), np.shape(v)))
        return a @ v

    out = jnp.vectorize(f, signature="(n),(n)->()")(A[:, :1, :], A[:1, :, :])
    assert out.shape == (4, 3)
    assert seen == [((2,), (2,))]
    check_close(
        np.asarray(out), np.einsum("ijk,ijk->ij", *np.broadcast_arrays(A[:, :1], A[:1]))
    )


def test_vectorize_keeps_the_function_name_and_passes_keywords():
    @jnp.vectorize
    def scaled(x, scale=1.0):
        return x * scale

    assert scaled.__name__ == "scaled"
    check_close(np.asarray(scaled(B, scale=2.0)), 2 * B)


def test_grads():
    check_grads(
        jnp.vectorize(lambda a, v: jnp.sin(a @ v), signature="(n),(n)->()"),
        (A, B[:2]),
        order=2,
    )
    check_grads(
        lambda x: jnp.piecewise(x, [x < 0], [lambda v: v * v, jnp.sin]),
        (X + 0.05,),
        order=2,
    )
    check_grads(lambda a: jnp.apply_along_axis(lambda v: v @ v, 1, a), (A,), order=2)


@pytest.mark.parametrize(
    "call, error, phrase",
    [
        (
            lambda: jnp.vectorize(lambda a: a, signature="(n)->(n)")(np.float32(1)),
            ValueError,
            "does not have enough dimensions",
        ),
        (
            lambda: jnp.vectorize(lambda a, b: a, signature="(n),(n)->(n)")(
                np.ones(2), np.ones(3)
            ),
            ValueError,
            "inconsistent size for core dimension 'n'",
        ),
        (
            lambda: jnp.vectorize(lambda a: a.sum(), signature="(n)->(n)")(np.ones(2)),
            ValueError,
            "does not match core dimensions",
        ),
        (
            lambda: jnp.vectorize(lambda a, b: a, signature="(n),(n)->(n)")(np.ones(2)),
            TypeError,
            "wrong number of positional arguments",
        ),
        (
            lambda: jnp.vectorize(lambda a: a, signature="(n)->(n")(np.ones(2)),
            ValueError,
            "not a valid gufunc signature",
        ),
        (
            lambda: jnp.vectorize(lambda a: (a, a), signature="(n)->(n)")(np.ones(2)),
            TypeError,
            "wrong number of output arguments",
        ),
        (
            lambda: jnp.piecewise(X, [X < 0], [1, 2, 3]),
            ValueError,
            "functions are expected",
        ),
        (
            lambda: jnp.apply_over_axes(lambda a, ax: a.sum(), A, [0]),
            ValueError,
            "correct shape",
        ),
    ],
)
def test_errors(call, error, phrase):
    with pytest.raises(error, match=phrase):
        call()
