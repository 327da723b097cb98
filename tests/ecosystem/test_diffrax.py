"""diffrax's quickstart: an ODE solved with Dopri5 and an adaptive step size
controller, saved at given times; the gradient of the solution with respect to a
parameter through `RecursiveCheckpointAdjoint` (the default) and
`BacksolveAdjoint`; a stiff problem with an implicit solver (Kvaerno5)."""

from .harness import assert_close, require

require("diffrax")

COMMON = """
import diffrax
import jax
import jax.numpy as jnp


def lotka_volterra(t, y, args):
    alpha, beta, gamma, delta = args
    prey, predator = y
    return jnp.stack([alpha * prey - beta * prey * predator,
                      -gamma * predator + delta * prey * predator])


term = diffrax.ODETerm(lotka_volterra)
ts = jnp.linspace(0.0, 5.0, 6)
y0 = jnp.array([10.0, 5.0])


def solve(args, adjoint=diffrax.RecursiveCheckpointAdjoint()):
    sol = diffrax.diffeqsolve(
        term, diffrax.Dopri5(), t0=0.0, t1=5.0, dt0=0.05, y0=y0, args=args,
        saveat=diffrax.SaveAt(ts=ts),
        stepsize_controller=diffrax.PIDController(rtol=1e-5, atol=1e-5),
        adjoint=adjoint,
    )
    return sol


args = jnp.array([0.1, 0.02, 0.4, 0.02])
"""

FORWARD_PROGRAM = (
    COMMON
    + """
sol = jax.jit(solve)(args)
results = {
    "ys": sol.ys,
    "num_steps": sol.stats["num_steps"],
    "num_accepted": sol.stats["num_accepted_steps"],
}
"""
)

GRADIENT_PROGRAM = (
    COMMON
    + """
results = {}
results["grad"] = jax.jit(jax.grad(lambda a: jnp.sum(solve(a).ys[-1])))(args)
results["grad_backsolve"] = jax.jit(jax.grad(
    lambda a: jnp.sum(solve(a, diffrax.BacksolveAdjoint()).ys[-1])
))(args)

"""
)

STIFF_PROGRAM = """
import diffrax
import jax
import jax.numpy as jnp

results = {}


def robertson(t, y, args):
    y1, y2, y3 = y
    return jnp.stack([
        -0.04 * y1 + 1e4 * y2 * y3,
        0.04 * y1 - 1e4 * y2 * y3 - 3e7 * y2**2,
        3e7 * y2**2,
    ])


stiff = jax.jit(lambda: diffrax.diffeqsolve(
    diffrax.ODETerm(robertson), diffrax.Kvaerno5(), t0=0.0, t1=10.0, dt0=1e-4,
    y0=jnp.array([1.0, 0.0, 0.0]),
    stepsize_controller=diffrax.PIDController(rtol=1e-4, atol=1e-8),
))()
results["stiff_y1"] = stiff.ys[-1]
"""


def test_diffrax_forward(run_programs):
    jaxlite_results, jax_results = run_programs(FORWARD_PROGRAM)
    # Adaptive stepping: the step counts must agree exactly.
    assert jaxlite_results.pop("num_steps") == jax_results.pop("num_steps")
    assert jaxlite_results.pop("num_accepted") == jax_results.pop("num_accepted")
    assert_close(jaxlite_results, jax_results, rtol=1e-4, atol=1e-5)


def test_diffrax_gradient(run_programs):
    jaxlite_results, jax_results = run_programs(GRADIENT_PROGRAM)
    # The gradient goes through the adaptive step sizes: compared relative to its
    # largest component (float32 rounding differs between XLA and NumPy).
    for name, grad in jax_results.items():
        scale = max(abs(g) for g in grad)
        assert_close(jaxlite_results[name], grad, rtol=1e-4, atol=1e-4 * scale)


def test_diffrax_stiff_implicit(run_programs):
    jaxlite_results, jax_results = run_programs(STIFF_PROGRAM)
    assert_close(jaxlite_results, jax_results, rtol=1e-4, atol=1e-7)
