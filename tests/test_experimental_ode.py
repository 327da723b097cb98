"""Tests for jaxlite.experimental.ode.odeint.

Values and dtypes are compared with real JAX where it is
installed, with NumPy closed forms, and gradients with finite differences.
"""

import numpy as np
import pytest
from tests.testing import check_grads

import jaxlite
import jaxlite.numpy as jnp
from jaxlite.experimental.ode import odeint

# ------------------------------------------------------------------------- ode


def _osc(np_):
    def f(y, t, a, b):
        return {"p": y["q"] * a, "q": -b * y["p"] - 0.1 * y["q"] + np_.sin(t)}

    return f


Y0 = {"p": np.array([1.0, 0.5], np.float32), "q": np.array([0.0, 0.2], np.float32)}
TS = np.linspace(0.0, 2.0, 5, dtype=np.float32)


def test_odeint_exponential_closed_form():
    ts = jnp.linspace(0.0, 3.0, 7)
    ys = odeint(lambda y, t, k: -k * y, jnp.asarray([1.0, 2.0]), ts, 0.7)
    assert ys.shape == (7, 2) and ys.dtype == jnp.float32
    want = np.exp(-0.7 * np.asarray(ts))[:, None] * np.array([1.0, 2.0])
    np.testing.assert_allclose(ys, want, rtol=2e-5, atol=1e-6)


def test_odeint_pytree_args_match_jax():
    jax = pytest.importorskip("jax")
    from jax.experimental.ode import odeint as jodeint

    kw = dict(rtol=1e-6, atol=1e-6)
    ours = odeint(_osc(jnp), Y0, jnp.asarray(TS), 1.5, jnp.asarray(2.0), **kw)
    theirs = jodeint(_osc(jax.numpy), Y0, jax.numpy.asarray(TS), 1.5, 2.0, **kw)
    # Two correct float32 solvers differ by about their own error, not by float32's
    # rounding: XLA and NumPy round differently, and each difference moves the
    # adaptive step sizes. So float32 is compared at 10x the requested tolerance...
    for k in ("p", "q"):
        assert ours[k].shape == theirs[k].shape and ours[k].dtype == theirs[k].dtype
        np.testing.assert_allclose(ours[k], theirs[k], rtol=1e-5, atol=1e-5)
    # ...and the stepper itself (Dormand-Prince steps, error control, hmax/mxstep caps
    # that stop early and extrapolate) is compared in float64, where the same algorithm
    # agrees to rounding: with float32 and mxstep=3 the results differ by 1.5e-4
    # relative, in float64 by 1e-14.
    y64 = {k: v.astype(np.float64) for k, v in Y0.items()}
    ts64 = TS.astype(np.float64)
    with jaxlite.enable_x64(True), jax.enable_x64(True):
        for kw in (dict(mxstep=3), dict(hmax=0.1), dict(rtol=1e-8, atol=1e-8)):
            kw = dict(dict(rtol=1e-3, atol=1e-3), **kw)
            o2 = odeint(_osc(jnp), y64, jnp.asarray(ts64), 1.5, 2.0, **kw)
            t2 = jodeint(_osc(jax.numpy), y64, jax.numpy.asarray(ts64), 1.5, 2.0, **kw)
            for k in ("p", "q"):
                assert o2[k].dtype == t2[k].dtype == np.float64
                np.testing.assert_allclose(o2[k], t2[k], rtol=1e-10, atol=1e-12)


def _ode_loss(np_, ode):
    def loss(p0, ts, b):
        y0 = {"p": p0, "q": np_.asarray(Y0["q"])}
        y = ode(_osc(np_), y0, ts, 1.5, b, rtol=1e-7, atol=1e-7)
        return np_.sum(y["p"][-1] ** 2) + np_.sum(y["q"] * 0.3)

    return loss


def test_odeint_adjoint_gradients():
    args = (jnp.asarray(Y0["p"]), jnp.asarray(TS), jnp.asarray(2.0))
    ours = jaxlite.grad(_ode_loss(jnp, odeint), argnums=(0, 1, 2))(*args)
    jax = pytest.importorskip("jax")
    from jax.experimental.ode import odeint as jodeint

    theirs = jax.grad(_ode_loss(jax.numpy, jodeint), argnums=(0, 1, 2))(
        Y0["p"], TS, np.float32(2.0)
    )
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-5)
    # finite differences in float64 for the y0 and args gradients
    with jaxlite.enable_x64():
        loss = _ode_loss(jnp, odeint)
        p0 = jnp.asarray(Y0["p"], jnp.float64)
        ts = jnp.asarray(TS, jnp.float64)
        check_grads(lambda p, b: loss(p, ts, b), (p0, jnp.asarray(2.0)), order=1,
                    modes=("rev",), atol=1e-4, rtol=1e-4)  # fmt: skip


def test_odeint_jit_vmap_and_errors():
    def solve(y0, k):
        return odeint(lambda y, t, k: -k * y + jnp.cos(t), y0, jnp.linspace(0, 1, 4), k)

    y0s = jnp.asarray([[1.0, 2.0], [0.5, -1.0], [0.0, 3.0]])
    eager = [solve(y, 0.5) for y in y0s]
    np.testing.assert_allclose(jaxlite.jit(solve)(y0s[0], 0.5), eager[0], rtol=1e-6)
    batched = jaxlite.vmap(solve, in_axes=(0, None))(y0s, 0.5)
    for i, e in enumerate(eager):
        np.testing.assert_allclose(batched[i], e, rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="t must be an array of floats"):
        odeint(lambda y, t: -y, jnp.ones(2), jnp.arange(3))
    with pytest.raises(TypeError, match="must be arrays or scalars"):
        odeint(lambda y, t, s: -y, jnp.ones(2), jnp.linspace(0, 1, 3), "fast")
