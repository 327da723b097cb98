"""vmap: in_axes/out_axes semantics, nesting, composition with jit and grad, errors —
always checked against a per-example Python loop."""

import numpy as np
import pytest
from tests.testing import check_close

import jaxlite as jax
import jaxlite.numpy as jnp

RNG = np.random.default_rng(1)


def _x(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def loop(f, in_axes, *args, out_axis=0):
    """The per-example reference: slice each mapped argument and stack the results."""
    sizes = {np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None}
    (n,) = sizes
    outs = []
    for i in range(n):
        sliced = [
            a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, in_axes)
        ]
        outs.append(np.asarray(f(*sliced)))
    return np.stack(outs, axis=out_axis) if outs else None


ELEMENTWISE = [
    lambda a, b: a * b + jnp.sin(a),
    lambda a, b: jnp.maximum(a, b) - a / (1.0 + b * b),
    lambda a, b: jnp.where(a > b, a, b),
]


@pytest.mark.parametrize("f", ELEMENTWISE)
@pytest.mark.parametrize("in_axes", [(0, 0), (1, 0), (0, None), (None, 1), (-1, 0)])
def test_elementwise_vs_loop(f, in_axes):
    a = _x(4, 4)
    b = _x(4, 4) if in_axes[1] is not None else _x(4)
    if in_axes[0] is None:
        a = _x(4)
    got = jax.vmap(f, in_axes=in_axes)(a, b)
    check_close(got, loop(f, in_axes, a, b), atol=1e-6)


@pytest.mark.parametrize("out_axes", [0, 1, -1])
def test_out_axes(out_axes):
    x = _x(3, 5)
    got = jax.vmap(lambda r: r * 2.0, out_axes=out_axes)(x)
    check_close(got, np.moveaxis(x * 2, 0, out_axes))


def test_unbatched_output_broadcast_and_out_axes_none():
    x = _x(3)
    out = jax.vmap(lambda r: (r, 7.0))(x)
    check_close(out[1], np.full(3, 7.0))
    y = jax.vmap(lambda r: (r, 7.0), out_axes=(0, None))(x)
    assert float(y[1]) == 7.0
    with pytest.raises(ValueError, match="got axis spec None but output was batched"):
        jax.vmap(lambda r: r, out_axes=None)(x)


def test_pytree_in_axes():
    tree = {"a": _x(3, 2), "b": _x(2)}
    got = jax.vmap(lambda t: t["a"] * t["b"], in_axes=({"a": 0, "b": None},))(tree)
    check_close(got, tree["a"] * tree["b"])


def test_nested_vmap():
    x, y = _x(3), _x(4)
    got = jax.vmap(lambda a: jax.vmap(lambda b: a * b)(y))(x)
    check_close(got, np.outer(x, y), atol=1e-6)


def test_vmap_of_jit_and_jit_of_vmap():
    f = lambda a: jnp.sin(a) * a  # noqa: E731
    x = _x(5)
    check_close(jax.vmap(jax.jit(f))(x), np.sin(x) * x, atol=1e-6)
    check_close(jax.jit(jax.vmap(f))(x), np.sin(x) * x, atol=1e-6)


def test_vmap_of_grad():
    x = _x(5)
    got = jax.vmap(jax.grad(lambda a: jnp.sin(a) * a))(x)
    check_close(got, np.cos(x) * x + np.sin(x), atol=1e-5)


def test_batch_size_zero():
    out = jax.vmap(lambda a: a * 2.0)(np.zeros((0, 3), np.float32))
    assert out.shape == (0, 3)


def test_axis_size_with_no_mapped_inputs():
    out = jax.vmap(lambda a: a + 1.0, in_axes=None, axis_size=4)(2.0)
    check_close(out, np.full(4, 3.0))


def test_errors():
    with pytest.raises(ValueError, match="vmap got inconsistent sizes"):
        jax.vmap(lambda x, y: x + y)(jnp.ones(3), jnp.ones(4))
    with pytest.raises(ValueError, match="rank should be at least 1"):
        jax.vmap(lambda x: x)(1.0)
    with pytest.raises(ValueError, match="len\\(in_axes\\)=2, len\\(args\\)=1"):
        jax.vmap(lambda x: x, in_axes=(0, 0))(jnp.ones(3))
