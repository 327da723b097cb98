"""jaxopt's quickstart: ridge regression with LBFGS, logistic regression with
gradient descent, a box-constrained problem with projected gradient, and implicit
differentiation of the solution with respect to the regularisation strength."""

from .harness import assert_close, require

require("jaxopt")

PROGRAM = """
import jax
import jax.numpy as jnp
import jaxopt

kx, kw = jax.random.split(jax.random.PRNGKey(1))
X = jax.random.normal(kx, (40, 6))
w_true = jax.random.normal(kw, (6,))
y = X @ w_true
labels = (y > 0).astype(jnp.float32)


def ridge(w, l2reg, X, y):
    residuals = X @ w - y
    return jnp.mean(residuals**2) + 0.5 * l2reg * jnp.sum(w**2)


def logistic(w, X, labels):
    logits = X @ w
    return jnp.mean(jax.nn.softplus(logits) - labels * logits)


results = {}
lbfgs = jaxopt.LBFGS(fun=ridge, maxiter=50, tol=1e-6, linesearch="backtracking")
res = lbfgs.run(jnp.zeros(6), l2reg=0.1, X=X, y=y)
# (Not the iteration count: its stopping test, a float32 gradient norm against
# tol=1e-6, may stop an iteration earlier or later on either library.)
results["lbfgs"] = {"w": res.params, "value": ridge(res.params, 0.1, X, y)}

gd = jaxopt.GradientDescent(fun=logistic, maxiter=100, stepsize=0.5)
res = gd.run(jnp.zeros(6), X=X, labels=labels)
results["gd"] = {"w": res.params, "value": logistic(res.params, X, labels)}

pg = jaxopt.ProjectedGradient(
    fun=ridge, projection=jaxopt.projection.projection_box, maxiter=100
)
res = pg.run(jnp.zeros(6), hyperparams_proj=(-0.5, 0.5), l2reg=0.1, X=X, y=y)
results["projected"] = {"w": res.params}


def solution(l2reg):
    gd = jaxopt.GradientDescent(fun=ridge, maxiter=500, tol=1e-6, stepsize=0.2)
    return gd.run(jnp.zeros(6), l2reg=l2reg, X=X, y=y).params


results["implicit_jacobian"] = jax.jacobian(solution)(0.1)
results["bisection"] = jaxopt.Bisection(
    lambda x: x**3 - 2.0, lower=0.0, upper=2.0, tol=1e-6
).run().params
"""


def test_jaxopt_quickstart(run_programs):
    jaxlite_results, jax_results = run_programs(PROGRAM)
    assert_close(jaxlite_results, jax_results, rtol=1e-4, atol=1e-5)
