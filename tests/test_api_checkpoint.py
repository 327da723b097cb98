"""checkpoint policies and checkpoint_name: what the backward pass recomputes, values
against finite differences and real JAX, and JAX's printed forms."""

import re

import numpy as np
import pytest
from tests.testing import check_close, check_grads

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.ad_checkpoint import checkpoint_name, print_saved_residuals

cp = jax.checkpoint_policies

X = np.random.default_rng(0).uniform(-1, 1, (3, 3)).astype(np.float32)


def _f(jx, checkpoint_name):
    jnp = jx.numpy

    def f(x):
        y = jnp.sin(x)
        z = checkpoint_name(jnp.dot(y, y.T), "z")
        return jnp.sum(jnp.tanh(z) * x)

    return f


POLICIES = {
    "default": lambda p: None,
    "everything_saveable": lambda p: p.everything_saveable,
    "nothing_saveable": lambda p: p.nothing_saveable,
    "dots_saveable": lambda p: p.dots_saveable,
    "dots_with_no_batch_dims_saveable": lambda p: p.dots_with_no_batch_dims_saveable,
    "save_only_these_names": lambda p: p.save_only_these_names("z"),
    "save_any_names_but_these": lambda p: p.save_any_names_but_these("z"),
    "save_anything_except_these_names": lambda p: p.save_anything_except_these_names(
        "z"
    ),
    "save_from_both_policies": lambda p: p.save_from_both_policies(
        p.nothing_saveable, p.save_only_these_names("z")
    ),
}


def _backward_ops(policy):
    """How often `sin` and `dot_general` run in the backward pass: the equations of
    the linear map of `checkpoint(f, policy)` (what linearize stages for later)."""
    f = jax.checkpoint(_f(jax, checkpoint_name), policy=policy)
    _, f_jvp = jax.linearize(f, X)
    text = str(jax.make_jaxpr(f_jvp)(X))
    return text.count(" sin "), len(re.findall(r"= dot_general", text))


@pytest.mark.parametrize("name", list(POLICIES))
def test_policy_values_and_gradients(name):
    policy = POLICIES[name](cp)
    f = jax.checkpoint(_f(jax, checkpoint_name), policy=policy)
    check_close(jax.grad(f)(X), jax.grad(_f(jax, checkpoint_name))(X), rtol=1e-6)
    check_grads(f, (X,), order=2, modes=("rev",))
    check_close(jax.jit(jax.grad(f))(X), jax.grad(f)(X), rtol=1e-6)
    check_close(
        jax.vmap(jax.grad(f))(np.stack([X, -X])),
        np.stack([jax.grad(f)(X), jax.grad(f)(-X)]),
    )


@pytest.mark.parametrize("name", list(POLICIES))
def test_policy_values_match_jax(name):
    real = pytest.importorskip("jax")
    from jax.ad_checkpoint import checkpoint_name as jax_name

    ours = jax.grad(jax.checkpoint(_f(jax, checkpoint_name), policy=POLICIES[name](cp)))
    theirs = real.grad(
        real.checkpoint(
            _f(real, jax_name), policy=POLICIES[name](real.checkpoint_policies)
        )
    )
    check_close(ours(X), np.asarray(theirs(X)), rtol=1e-5, atol=1e-6)


def test_policies_decide_what_is_recomputed():
    # (sin, dot_general) equations in the linear map. Its own dots (the transposed
    # products) are 2; the saved values are not recomputed.
    recompute_all = _backward_ops(None)
    assert recompute_all == _backward_ops(cp.nothing_saveable)
    assert recompute_all[0] == 1  # sin x, recomputed
    assert _backward_ops(cp.everything_saveable) == (0, 2)  # nothing recomputed
    assert _backward_ops(cp.dots_saveable) == (1, 2)  # the product is saved
    assert _backward_ops(cp.save_only_these_names("z")) == (1, 2)  # ... by name
    assert _backward_ops(cp.save_only_these_names("other"))[1] == recompute_all[1]
    assert recompute_all[1] == 3  # the product is recomputed: one more dot


def test_dots_with_no_batch_dims():
    lhs = np.ones((2, 3, 3), np.float32)

    def f(a):
        return jnp.sum(jnp.sin(jax.lax.batch_matmul(a, a)))

    def count(policy):
        g = jax.checkpoint(f, policy=policy)
        _, f_jvp = jax.linearize(g, lhs)
        return len(re.findall(r"= dot_general", str(jax.make_jaxpr(f_jvp)(lhs))))

    # A batched product is saved by dots_saveable but not by the no-batch-dims policy.
    assert count(cp.dots_saveable) < count(cp.dots_with_no_batch_dims_saveable)


def test_policy_reprs_match_jax():
    assert repr(cp.dots_saveable) == "DotsSaveable(only_if_no_batch_dims=False)"
    assert repr(cp.checkpoint_dots_with_no_batch_dims) == (
        "DotsSaveable(only_if_no_batch_dims=True)"
    )
    assert repr(cp.save_only_these_names("a")) == (
        "SaveOnlyTheseNames(saveable_names=frozenset({'a'}))"
    )
    real = pytest.importorskip("jax")
    rp = real.checkpoint_policies
    assert repr(cp.dots_saveable) == repr(rp.dots_saveable)
    assert repr(cp.save_any_names_but_these("a")) == repr(
        rp.save_any_names_but_these("a")
    )
    assert {n for n in dir(rp) if not n.startswith("_")} <= set(dir(cp))


def test_checkpoint_name_prints_like_jax():
    text = str(jax.make_jaxpr(lambda x: checkpoint_name(jnp.sin(x), "foo"))(1.0))
    assert text == (
        "{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = name[name=foo] b in (c,) }"
    )
    real = pytest.importorskip("jax")
    from jax.ad_checkpoint import checkpoint_name as jax_name

    assert text == str(
        real.make_jaxpr(lambda x: jax_name(real.numpy.sin(x), "foo"))(1.0)
    )


def test_checkpoint_name_is_an_identity_under_transformations():
    def f(x):
        return jnp.sum(checkpoint_name({"a": jnp.sin(x)}, "n")["a"] ** 2)

    x = np.arange(3.0, dtype=np.float32)
    check_grads(f, (x,), order=2)
    check_close(
        jax.vmap(jax.grad(f))(np.stack([x, x + 1])),
        np.stack([jax.grad(f)(x), jax.grad(f)(x + 1)]),
    )
    with pytest.raises(TypeError, match="string name"):
        checkpoint_name(x, 3)


def test_checkpoint_policy_printed_in_jaxpr():
    text = str(jax.make_jaxpr(jax.checkpoint(jnp.sin, policy=cp.dots_saveable))(1.0))
    assert "policy=DotsSaveable(only_if_no_batch_dims=False)" in text


def test_print_saved_residuals(capsys):
    print_saved_residuals(lambda x: jnp.sin(jnp.sin(x)), np.ones(3, np.float32))
    lines = capsys.readouterr().out.splitlines()
    # As JAX: each residual with the equation and user line that computed it.
    assert [line.split(" from ")[0] for line in lines] == [
        "f32[3] output of cos",
        "f32[3] output of cos",
    ]
    assert all(line.endswith(".<lambda>)") for line in lines)
