"""Systematic derivative checks of `jax.numpy` functions, one line per function.

Every differentiable jnp function built from lax primitives is checked, forward and
reverse to second order, against central differences (`testing.check_grads`); its
gradient is compared with real JAX's where JAX is installed (the points avoid ties and
kinks, where JAX's conventions are tested separately); and `jit` of its gradient with
the eager gradient. In the spirit of autograd's `test_systematic.py`: adding a function
is adding a line.
"""

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from testing import check_close, check_grads

R = np.random.default_rng(0)


def unit(*shape):
    """Values in (-0.9, 0.9), away from 0 (kinks of abs/sign) and ties."""
    x = R.uniform(0.2, 0.9, shape) * R.choice([-1.0, 1.0], shape)
    return x.astype(np.float32)


def pos(*shape):
    return R.uniform(0.5, 2.0, shape).astype(np.float32)


def distinct(*shape):
    """A permutation of well-separated values (no ties for sort/max/median)."""
    n = int(np.prod(shape))
    return (R.permutation(n).reshape(shape) * 0.37 - 1.0).astype(np.float32)


# (name, function, argument makers); arguments are made once, at collection.
UNARY = [
    ("sin", jnp.sin),
    ("cos", jnp.cos),
    ("tan", jnp.tan),
    ("arcsin", jnp.arcsin),
    ("arccos", jnp.arccos),
    ("arctan", jnp.arctan),
    ("sinh", jnp.sinh),
    ("cosh", jnp.cosh),
    ("tanh", jnp.tanh),
    ("arcsinh", jnp.arcsinh),
    ("arctanh", jnp.arctanh),
    ("exp", jnp.exp),
    ("exp2", jnp.exp2),
    ("expm1", jnp.expm1),
    ("negative", jnp.negative),
    ("positive", jnp.positive),
    ("square", jnp.square),
    ("abs", jnp.abs),
    ("cbrt", jnp.cbrt),
    ("sinc", jnp.sinc),
    ("deg2rad", jnp.deg2rad),
    ("rad2deg", jnp.rad2deg),
    ("real", jnp.real),
    ("conj", jnp.conj),
    ("fabs", jnp.fabs),
    ("reciprocal_like", lambda x: 1.0 / (x + 2.0)),
]
POSITIVE = [
    ("log", jnp.log),
    ("log2", jnp.log2),
    ("log10", jnp.log10),
    ("log1p", jnp.log1p),
    ("sqrt", jnp.sqrt),
    ("reciprocal", jnp.reciprocal),
    ("arccosh", lambda x: jnp.arccosh(x + 1.0)),
    ("power_scalar", lambda x: x**2.5),
    ("float_power", lambda x: jnp.float_power(x, 1.5)),
]
BINARY = [
    ("add", jnp.add),
    ("subtract", jnp.subtract),
    ("multiply", jnp.multiply),
    ("divide", jnp.divide),
    ("true_divide", jnp.true_divide),
    ("arctan2", jnp.arctan2),
    ("hypot", jnp.hypot),
    ("maximum", jnp.maximum),
    ("minimum", jnp.minimum),
    ("fmax", jnp.fmax),
    ("fmin", jnp.fmin),
    ("logaddexp", jnp.logaddexp),
    ("copysign", jnp.copysign),
    ("where", lambda x, y: jnp.where(x > 0, x, y)),
    ("heaviside_mix", lambda x, y: x * jnp.heaviside(y, 0.5)),
]
POSITIVE_BINARY = [
    ("power", jnp.power),
]
REDUCTIONS = [
    ("sum", jnp.sum),
    ("prod", jnp.prod),
    ("mean", jnp.mean),
    ("var", jnp.var),
    ("std", jnp.std),
    ("max", jnp.max),
    ("min", jnp.min),
    ("amax", jnp.amax),
    ("median", jnp.median),
    ("ptp", jnp.ptp),
    ("logsumexp_like", lambda x, axis: jnp.log(jnp.sum(jnp.exp(x), axis))),
    ("nansum", jnp.nansum),
    ("nanmean", jnp.nanmean),
    ("nanmax", jnp.nanmax),
    ("cumsum", jnp.cumsum),
    ("cumprod", jnp.cumprod),
    (
        "average",
        lambda x, axis: jnp.average(
            x, axis, weights=jnp.arange(1.0, x.shape[axis] + 1)
        ),
    ),
    ("quantile", lambda x, axis: jnp.quantile(x, 0.3, axis=axis)),
    ("percentile", lambda x, axis: jnp.percentile(x, 70.0, axis=axis)),
    ("linalg_like_norm", lambda x, axis: jnp.sqrt(jnp.sum(x * x, axis))),
]
STRUCTURAL = [
    ("reshape", lambda x: jnp.reshape(x, (4, 3))),
    ("ravel", jnp.ravel),
    ("transpose", jnp.transpose),
    ("swapaxes", lambda x: jnp.swapaxes(x, 0, 1)),
    ("moveaxis", lambda x: jnp.moveaxis(x, 0, -1)),
    ("expand_dims", lambda x: jnp.expand_dims(x, 1)),
    ("squeeze", lambda x: jnp.squeeze(x[None])),
    ("flip", jnp.flip),
    ("fliplr", jnp.fliplr),
    ("rot90", jnp.rot90),
    ("roll", lambda x: jnp.roll(x, 2, axis=1)),
    ("tile", lambda x: jnp.tile(x, (2, 1))),
    ("repeat", lambda x: jnp.repeat(x, 2, axis=0)),
    ("broadcast_to", lambda x: jnp.broadcast_to(x, (2, 3, 4))),
    ("pad_constant", lambda x: jnp.pad(x, ((1, 2), (0, 1)))),
    ("pad_reflect", lambda x: jnp.pad(x, 1, mode="reflect")),
    ("pad_edge", lambda x: jnp.pad(x, 1, mode="edge")),
    ("concatenate", lambda x: jnp.concatenate([x, 2 * x], axis=1)),
    ("stack", lambda x: jnp.stack([x, x * x])),
    ("split", lambda x: jnp.split(x, 2, axis=1)[1]),
    ("triu", jnp.triu),
    ("tril", jnp.tril),
    ("diagonal", jnp.diagonal),
    ("trace", jnp.trace),
    ("diag", lambda x: jnp.diag(x[0])),
    ("getitem_slice", lambda x: x[1:, ::2]),
    ("getitem_int_array", lambda x: x[jnp.array([2, 0, 2])]),
    ("getitem_bool", lambda x: x[np.array([True, False, True])]),
    ("take", lambda x: jnp.take(x, jnp.array([3, 1]), axis=1)),
    ("take_along_axis", lambda x: jnp.take_along_axis(x, jnp.argsort(x, 1), 1)),
    ("at_set", lambda x: jnp.asarray(x).at[0, 1].set(7.0) * x),
    ("at_add", lambda x: jnp.asarray(x).at[jnp.array([0, 0, 2])].add(x[1])),
    ("at_mul", lambda x: jnp.asarray(x).at[1].multiply(x[2])),
    ("at_max", lambda x: jnp.asarray(x).at[0].max(x[1])),
    ("sort", lambda x: jnp.sort(x, axis=1)),
    ("clip", lambda x: jnp.clip(x, -0.5, 0.5)),
    ("round_mix", lambda x: x * jnp.round(x * 3)),
]
PRODUCTS = [
    ("dot", lambda a, b: jnp.dot(a, b), ((3, 4), (4, 2))),
    ("matmul", lambda a, b: a @ b, ((2, 3, 4), (4, 5))),
    ("vdot", lambda a, b: jnp.vdot(a, b), ((6,), (6,))),
    ("inner", lambda a, b: jnp.inner(a, b), ((2, 4), (3, 4))),
    ("outer", lambda a, b: jnp.outer(a, b), ((3,), (4,))),
    ("kron", lambda a, b: jnp.kron(a, b), ((2, 2), (2, 3))),
    ("tensordot", lambda a, b: jnp.tensordot(a, b, 2), ((2, 3, 4), (3, 4, 2))),
    ("einsum", lambda a, b: jnp.einsum("ij,jk->ik", a, b), ((3, 4), (4, 2))),
    (
        "einsum_batch",
        lambda a, b: jnp.einsum("bij,bjk->bik", a, b),
        ((2, 3, 4), (2, 4, 2)),
    ),
    ("einsum_trace", lambda a, b: jnp.einsum("ii,j->j", a, b), ((3, 3), (2,))),
]

CASES = (
    [(f"{n}", f, (unit(3, 4),)) for n, f in UNARY]
    + [(f"{n}", f, (pos(3, 4),)) for n, f in POSITIVE]
    + [(f"{n}", f, (unit(3, 4), unit(3, 4))) for n, f in BINARY]
    + [(f"{n}_broadcast", jnp.multiply, (unit(3, 1), unit(4))) for n in ["multiply"]]
    + [(f"{n}", f, (pos(3, 4), unit(3, 4))) for n, f in POSITIVE_BINARY]
    + [
        (f"{n}_axis{ax}", lambda x, f=f, ax=ax: f(x, ax), (distinct(3, 4),))
        for n, f in REDUCTIONS
        for ax in (0, 1)
    ]
    + [
        (f"{n}_all", f, (distinct(3, 4),))
        for n, f in REDUCTIONS
        if n
        not in (
            "cumsum",
            "cumprod",
            "average",
            "quantile",
            "percentile",
            "logsumexp_like",
            "linalg_like_norm",
        )
    ]
    + [(f"{n}", f, (distinct(3, 4),)) for n, f in STRUCTURAL]
    + [(f"{n}", f, tuple(unit(*s) for s in shapes)) for n, f, shapes in PRODUCTS]
)
IDS = [c[0] for c in CASES]
# Order-2 checks of piecewise-linear functions are exact zeros; still checked. Central
# differences at 32 bits need these looser tolerances for ill-conditioned functions.
LOOSE = {
    "tan",
    "arctanh",
    "arcsin",
    "arccos",
    "cumprod_axis1",
    "prod_all",
    "prod_axis1",
    "prod_axis0",
}


@pytest.mark.parametrize("name, fun, args", CASES, ids=IDS)
def test_grads_against_finite_differences(name, fun, args):
    tol = 5e-2 if name in LOOSE else 2e-2
    check_grads(fun, args, order=2, modes=("fwd", "rev"), atol=tol, rtol=tol)


@pytest.mark.parametrize("name, fun, args", CASES, ids=IDS)
def test_jit_of_grad_matches_eager_grad(name, fun, args):
    argnums = tuple(range(len(args)))
    ct = unit(*np.shape(fun(*args)))

    def loss(*a):
        return jnp.sum(fun(*a) * ct)

    eager = jaxlite.grad(loss, argnums)(*args)
    jitted = jaxlite.jit(jaxlite.grad(loss, argnums))(*args)
    check_close(jitted, eager, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("name, fun, args", CASES, ids=IDS)
def test_grads_match_jax(name, fun, args):
    jax = pytest.importorskip("jax")
    import jax.numpy as real_jnp

    # The same program text, run by JAX: the function is rebuilt with jax.numpy.
    jax_fun = _with_numpy_module(fun, real_jnp)
    argnums = tuple(range(len(args)))
    ct = unit(*np.shape(fun(*args)))
    ours = jaxlite.grad(lambda *a: jnp.sum(fun(*a) * ct), argnums)(*args)
    theirs = jax.grad(lambda *a: real_jnp.sum(jax_fun(*a) * ct), argnums)(*args)
    check_close(ours, tuple(np.asarray(t) for t in theirs), atol=2e-5, rtol=2e-5)


def _with_numpy_module(fun, module):
    """`fun` with its globals' `jnp` (and closure cells holding jnp functions) swapped
    for `module`, so the same lambda runs under real JAX."""
    import types

    if str(getattr(fun, "__module__", "")).startswith("jaxlite."):
        return getattr(module, fun.__name__)

    def swap(value):
        if isinstance(value, types.FunctionType):
            return _with_numpy_module(value, module)
        return value

    glob = dict(fun.__globals__, jnp=module)
    defaults = tuple(swap(d) for d in fun.__defaults__ or ())
    closure = None
    if fun.__closure__:
        closure = tuple(types.CellType(swap(c.cell_contents)) for c in fun.__closure__)
    return types.FunctionType(
        fun.__code__, glob, fun.__name__, defaults or None, closure
    )
