"""Every primitive has every rule, and the rules of each primitive agree with each other.

Part 1 (coverage). Every `Primitive` defined in a jaxlite module must have an
implementation, an abstract evaluation rule, a JVP rule and a batching rule, and a
transpose rule when it is linear; a missing rule is allowed only on the commented
`EXEMPTIONS` list (the rule is not needed) or the `KNOWN_MISSING` list (a bug to fix,
with the program that shows it). Both lists are checked to be exact, so fixing a bug or
adding a primitive means updating them.

Part 2 (records), after HIPS autograd's `test_systematic`: one line per primitive (its
name, a function calling it, argument generators, a NumPy reference, the order of
derivatives to check, a tolerance and its known failures, as data). One parametrized
test checks, for each: the implementation against NumPy; abstract evaluation
(`make_jaxpr`) against the implementation's shape, dtype and weak type; `jit` against
eager; `vmap` against a loop over the examples for every combination of batch axes
(none, or any position) of every argument, and with a batch of size 0; and derivatives
against finite differences (`check_grads`, forward and reverse). A second test compares
values, dtypes and weak types with real JAX where it is installed.
"""

import contextlib
import functools
import importlib
import itertools
import types
import zlib
from typing import NamedTuple

import numpy as np
import pytest

import jaxlite
from jaxlite import lax
from jaxlite.core import Primitive, abstract_eval_rules, impl_rules
from jaxlite.interpreters import ad, batching
from testing import check_close, check_grads, package_modules

# ----------------------------------------------------------------------------------------
# Part 1: every primitive has every rule


def _all_primitives():
    """Every Primitive object bound to a name in a jaxlite module: {name: primitive}."""
    found = {}
    for name in package_modules():
        module = importlib.import_module(name)
        for value in vars(module).values():
            if isinstance(value, Primitive):
                found.setdefault(value.name, value)
    return found


PRIMITIVES = _all_primitives()

# Primitives linear in (some of) their operands: they appear in the linear jaxprs that
# reverse mode transposes, so they need a transpose rule.
LINEAR = {
    "add_any", "add", "sub", "neg", "mul", "div", "conj", "real", "imag",
    "convert_element_type", "select_n", "reduce_sum", "cumsum", "dot_general",
    "broadcast_in_dim", "reshape", "squeeze", "transpose", "concatenate", "stack",
    "split", "tile", "pad", "rev", "copy", "slice", "dynamic_slice",
    "dynamic_update_slice", "gather", "scatter", "scatter-add", "scatter-sub",
    "scatter-mul", "cond", "while", "scan", "remat2", "custom_lin", "jit",
    "fft", "triangular_solve", "tridiagonal_solve",
    "conv_general_dilated", "reduce_window_sum", "select_and_gather_add",
    "select_and_scatter_add", "custom_linear_solve", "reduce_precision", "complex",
    "optimization_barrier",
    "psum", "all_gather", "reduce_scatter", "ppermute", "all_to_all",
    "process_allreduce", "process_all_gather", "process_reduce_scatter",
    "process_all_to_all", "process_permute", "process_broadcast",
    "process_replicated", "process_block", "process_assemble",
    "ragged_dot_general", "linear_call", "closed_call", "call",
}  # fmt: skip

# (primitive, rule) -> why the rule is not needed.
_SPECIAL_BIND = (
    "a higher-order primitive with its own bind: each trace handles it in its "
    "process_custom_{jvp,vjp}_call method (checked below), not through the rule tables"
)
_KEY_PRIMITIVES = (
    "random_seed random_split random_fold_in random_bits random_wrap random_unwrap "
    "random_gamma"
)
EXEMPTIONS = {
    ("custom_jvp_call", "impl"): _SPECIAL_BIND,
    ("custom_jvp_call", "jvp"): _SPECIAL_BIND,
    ("custom_jvp_call", "batch"): _SPECIAL_BIND,
    ("custom_vjp_call", "impl"): _SPECIAL_BIND,
    ("custom_vjp_call", "jvp"): _SPECIAL_BIND,
    ("custom_vjp_call", "batch"): _SPECIAL_BIND,
    # No operands, so no tracer ever reaches a JVP or batch trace's rule: the traces
    # bind a primitive whose operands are all unbatched / have zero tangents directly.
    ("iota", "jvp"): "no operands",
    ("iota", "batch"): "no operands",
    ("empty", "jvp"): "no operands",
    ("empty", "batch"): "no operands",
    ("axis_index", "jvp"): "no operands",
    ("platform_index", "jvp"): "no operands",
    ("platform_index", "batch"): "no operands",
    # JAX defines no derivative of LAPACK's compact QR (jnp.linalg.qr(mode="raw"));
    # the JVP trace raises JAX's "Differentiation rule for 'geqrf' not implemented".
    ("geqrf", "jvp"): "not differentiable in JAX either",
    # Operands or results of a key dtype: evaluation runs the primitive's physical
    # rule on the keys' data (core.physical_rules), never an impl.
    **{
        (name, "impl"): "keys: evaluated by its physical rule"
        for name in _KEY_PRIMITIVES.split()
    },
}

# (primitive, rule) -> a program that needs the missing rule. These are bugs, in modules
# other than lax/indexing.py and lax/scatter.py; remove an entry when the rule lands.
KNOWN_MISSING: dict = {}

RULE_TABLES = {
    "impl": impl_rules,
    "abstract_eval": abstract_eval_rules,
    "jvp": ad.jvp_rules,
    "batch": batching.batch_rules,
    "transpose": ad.transpose_rules,
}


def _missing_rules():
    missing = set()
    for name, prim in PRIMITIVES.items():
        for rule, table in RULE_TABLES.items():
            if rule == "transpose" and name not in LINEAR:
                continue
            if prim not in table:
                missing.add((name, rule))
    return missing


def test_primitives_are_found():
    for name in (
        "sin",
        "slice",
        "gather",
        "scatter-add",
        "scan",
        "pure_callback",
        "jit",
    ):
        assert name in PRIMITIVES


def test_every_primitive_has_every_rule():
    missing = _missing_rules()
    unexplained = sorted(missing - set(EXEMPTIONS) - set(KNOWN_MISSING))
    assert not unexplained, (
        f"primitives without rules: {unexplained}. Write the rules, or add them to "
        "EXEMPTIONS (with the reason the rule is never needed)."
    )


def test_exemption_lists_are_exact():
    missing = _missing_rules()
    for key in list(EXEMPTIONS) + list(KNOWN_MISSING):
        assert key[0] in PRIMITIVES, f"{key}: no primitive of that name any more"
        assert key in missing, f"{key} has its rule now: remove it from the list"
    for name in LINEAR:
        assert name in PRIMITIVES, f"LINEAR names an unknown primitive {name!r}"


def test_special_bind_primitives_are_handled_by_every_trace():
    from jaxlite.core import EvalTrace
    from jaxlite.interpreters.partial_eval import DynamicJaxprTrace

    traces = (
        EvalTrace,
        DynamicJaxprTrace,
        ad.JVPTrace,
        ad.LinearizeTrace,
        batching.BatchTrace,
    )
    for name, method in [
        ("custom_jvp_call", "process_custom_jvp_call"),
        ("custom_vjp_call", "process_custom_vjp_call"),
    ]:
        assert type(PRIMITIVES[name]).bind is not Primitive.bind
        for trace in traces:
            assert callable(getattr(trace, method, None)), (trace, method)


# ----------------------------------------------------------------------------------------
# Part 2: per-primitive records

# Argument generators: `rng -> NumPy value`, one example each call.


def _f(*shape, lo=-1.0, hi=1.0):
    return lambda rng: rng.uniform(lo, hi, shape).astype(np.float32)


def _away(*shape):
    """Floats with |x| in [0.5, 1.5] (denominators, remainders)."""
    return lambda rng: (
        rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
    ).astype(np.float32)


def _c(*shape):
    return lambda rng: (
        rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape)
    ).astype(np.complex64)


def _i(*shape, lo=-5, hi=6):
    return lambda rng: rng.integers(lo, hi, shape).astype(np.int32)


def _b(*shape):
    return lambda rng: rng.integers(0, 2, shape).astype(np.bool_)


F = _f(2, 3)
POS = _f(2, 3, lo=0.5, hi=2.0)
UNIT = _f(2, 3, lo=-0.9, hi=0.9)
I23 = _i(2, 3)
B23 = _b(2, 3)


class Rec(NamedTuple):
    name: str
    fn: object  # fn(m, *args), m: the lax module (jaxlite's or JAX's)
    args: list
    ref: object  # NumPy reference on the NumPy arguments
    order: int = 2  # derivatives checked up to this order (0: not differentiable)
    tol: float = None
    fails: dict = {}  # check name -> why it is expected to fail


def _sp(name):
    def ref(*args):
        special = pytest.importorskip("scipy.special")
        return getattr(special, name)(*args).astype(np.float32)

    return ref


def _cum(np_fn):
    return lambda x: np_fn(x, axis=1).astype(x.dtype)


def _cumlogsumexp(x):
    return np.logaddexp.accumulate(x, axis=1)


def _np_pad(x, v):
    out = np.full((4, 6), v, np.float32)
    out[1:3, 1:6:2] = x
    return out[:, :-1]


def _np_gather(x, idx):
    return x[idx[:, 0]]


def _np_scatter_add(x, idx, v):
    out = x.copy()
    np.add.at(out, idx[:, 0], v)
    return out


GATHER_DN = lax.GatherDimensionNumbers((1,), (0,), (0,))
SCATTER_DN = lax.ScatterDimensionNumbers((1,), (0,), (0,))


def _np_dus(x, u, i):
    out = x.copy()
    r, c = np.clip(i, 0, 1), np.clip(i, 0, 2)
    out[r : r + 2, c : c + 2] = u
    return out


I31 = _i(3, 1, lo=0, hi=4)
SHIFT = _i(2, 3, lo=0, hi=32)
i32 = np.int32

# Known failures (in modules other than the indexing ones), named in the records.
COMPLEX_PAIRING = (
    "testing.check_vjp pairs complex values with a conjugate, but JAX's (and jaxlite's) "
    "vjp is the plain transpose: imag's vjp is -1j * ct in both"
)


# Linear algebra (lax.linalg): well-conditioned matrices of each structure.


def _spd(n):
    def gen(rng):
        a = rng.uniform(-1, 1, (n, n))
        return (a @ a.T + n * np.eye(n)).astype(np.float32)

    return gen


def _tri(n, lower=True):
    def gen(rng):
        a = rng.uniform(-0.5, 0.5, (n, n)) + 2 * np.eye(n)
        return (np.tril(a) if lower else np.triu(a)).astype(np.float32)

    return gen


def _dominant(n):
    return lambda rng: (rng.uniform(2.0, 3.0, n) * rng.choice([-1, 1], n)).astype(
        np.float32
    )


def _np_lu(x):
    sl = pytest.importorskip("scipy.linalg")
    return sl.lu_factor(x)[0]


def _np_perm(piv, size):
    perm = np.arange(size, dtype=np.int32)
    for i, p in enumerate(piv):
        perm[i], perm[p] = perm[p], perm[i]
    return perm


def _np_householder(a, taus):
    m, n = a.shape
    q = np.eye(m)
    for i in range(len(taus)):
        v = np.concatenate([np.zeros(i), [1.0], a[i + 1 :, i]])
        q = q @ (np.eye(m) - taus[i] * np.outer(v, v))
    return q[:, :n].astype(np.float32)


def _np_hessenberg(a):
    lapack = pytest.importorskip("scipy.linalg.lapack")
    h, taus, _ = lapack.sgehrd(a)
    return h, taus


def _np_tridiagonal_solve(dl, d, du, b):
    t = np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)
    return np.linalg.solve(t, b).astype(np.float32)


# Special functions (lax/special.py): shape parameters held fixed where a derivative in
# them is refused (polygamma's m, betainc's a and b, second derivatives in igamma's a).
SP_A = np.full((2, 3), 1.5, np.float32)
SP_B = np.full((2, 3), 2.5, np.float32)


def _d_gammainc_da(a, x):
    special = pytest.importorskip("scipy.special")
    a, x, h = np.float64(a), np.float64(x), 1e-6
    return (special.gammainc(a + h, x) - special.gammainc(a - h, x)) / (2 * h)


def _np_random_gamma_grad(a, x):
    special = pytest.importorskip("scipy.special")
    a, x = np.float64(a), np.float64(x)
    log_pdf = (a - 1) * np.log(x) - x - special.gammaln(a)
    return (-_d_gammainc_da(a, x) / np.exp(log_pdf)).astype(np.float32)


def _sorted_eigvals(x):
    w = np.linalg.eigvals(x.astype(np.float64))
    return np.sort_complex(w)


RECORDS = [
    # elementwise, unary
    Rec("neg", lambda m, x: m.neg(x), [F], np.negative),
    Rec("sign", lambda m, x: m.sign(x), [F], np.sign, order=0),
    Rec("floor", lambda m, x: m.floor(x), [F], np.floor, order=0),
    Rec("ceil", lambda m, x: m.ceil(x), [F], np.ceil, order=0),
    Rec("round", lambda m, x: m.round(x), [F], lambda x: np.trunc(x + np.copysign(0.5, x)), order=0),
    Rec("is_finite", lambda m, x: m.is_finite(x), [F], np.isfinite, order=0),
    Rec("exp", lambda m, x: m.exp(x), [F], np.exp),
    Rec("exp2", lambda m, x: m.exp2(x), [F], np.exp2),
    Rec("log", lambda m, x: m.log(x), [POS], np.log),
    Rec("expm1", lambda m, x: m.expm1(x), [F], np.expm1),
    Rec("log1p", lambda m, x: m.log1p(x), [POS], np.log1p),
    Rec("tanh", lambda m, x: m.tanh(x), [F], np.tanh),
    Rec("logistic", lambda m, x: m.logistic(x), [F], lambda x: 1 / (1 + np.exp(-x))),
    Rec("sin", lambda m, x: m.sin(x), [F], np.sin),
    Rec("cos", lambda m, x: m.cos(x), [F], np.cos),
    Rec("tan", lambda m, x: m.tan(x), [F], np.tan),
    Rec("asin", lambda m, x: m.asin(x), [UNIT], np.arcsin),
    Rec("acos", lambda m, x: m.acos(x), [UNIT], np.arccos),
    Rec("atan", lambda m, x: m.atan(x), [F], np.arctan),
    Rec("sinh", lambda m, x: m.sinh(x), [F], np.sinh),
    Rec("cosh", lambda m, x: m.cosh(x), [F], np.cosh),
    Rec("asinh", lambda m, x: m.asinh(x), [F], np.arcsinh),
    Rec("acosh", lambda m, x: m.acosh(x), [_f(2, 3, lo=1.5, hi=3.0)], np.arccosh),
    Rec("atanh", lambda m, x: m.atanh(x), [UNIT], np.arctanh),
    Rec("sqrt", lambda m, x: m.sqrt(x), [POS], np.sqrt),
    Rec("rsqrt", lambda m, x: m.rsqrt(x), [POS], lambda x: 1 / np.sqrt(x)),
    Rec("cbrt", lambda m, x: m.cbrt(x), [POS], np.cbrt),
    Rec("abs", lambda m, x: m.abs(x), [_away(2, 3)], np.abs),
    Rec("abs_complex", lambda m, x: m.abs(x), [_c(2, 3)], np.abs, fails={"grad": COMPLEX_PAIRING}),
    Rec("erf", lambda m, x: m.erf(x), [F], _sp("erf"), tol=1e-5),
    Rec("erfc", lambda m, x: m.erfc(x), [F], _sp("erfc"), tol=1e-5),
    Rec("erf_inv", lambda m, x: m.erf_inv(x), [UNIT], _sp("erfinv"), tol=1e-5),
    Rec("lgamma", lambda m, x: m.lgamma(x), [POS], _sp("gammaln"), tol=1e-5),
    Rec("digamma", lambda m, x: m.digamma(x), [POS], _sp("digamma"), tol=1e-5),
    Rec("integer_pow", lambda m, x: m.integer_pow(x, 3), [F], lambda x: x**3),
    Rec("square", lambda m, x: m.square(x), [F], np.square),
    Rec("conj", lambda m, x: m.conj(x), [_c(2, 3)], np.conj),
    Rec("real", lambda m, x: m.real(x), [_c(2, 3)], np.real),
    Rec("imag", lambda m, x: m.imag(x), [_c(2, 3)], np.imag, fails={"grad": COMPLEX_PAIRING}),
    Rec("not", lambda m, x: m.bitwise_not(x), [I23], np.invert, order=0),
    Rec("convert_element_type", lambda m, x: m.convert_element_type(x, i32), [_f(2, 3, lo=-9, hi=9)], lambda x: x.astype(i32), order=0),
    Rec("stop_gradient", lambda m, x: m.stop_gradient(x), [F], lambda x: x, order=0),
    Rec("copy", lambda m, x: m.copy_p.bind(x), [F], np.copy),
    # elementwise, n-ary
    Rec("add", lambda m, x, y: m.add(x, y), [F, F], np.add),
    Rec("sub", lambda m, x, y: m.sub(x, y), [F, F], np.subtract),
    Rec("mul", lambda m, x, y: m.mul(x, y), [F, F], np.multiply),
    Rec("div", lambda m, x, y: m.div(x, y), [F, _away(2, 3)], np.divide),
    Rec("rem", lambda m, x, y: m.rem(x, y), [F, _away(2, 3)], np.fmod),
    Rec("pow", lambda m, x, y: m.pow(x, y), [POS, F], np.power),
    Rec("atan2", lambda m, x, y: m.atan2(x, y), [F, _away(2, 3)], np.arctan2),
    Rec("max", lambda m, x, y: m.max(x, y), [F, F], np.maximum),
    Rec("min", lambda m, x, y: m.min(x, y), [F, F], np.minimum),
    Rec("nextafter", lambda m, x, y: m.nextafter(x, y), [F, F], np.nextafter, order=0),
    Rec("eq", lambda m, x, y: m.eq(x, y), [I23, I23], np.equal, order=0),
    Rec("ne", lambda m, x, y: m.ne(x, y), [I23, I23], np.not_equal, order=0),
    Rec("lt", lambda m, x, y: m.lt(x, y), [F, F], np.less, order=0),
    Rec("le", lambda m, x, y: m.le(x, y), [I23, I23], np.less_equal, order=0),
    Rec("gt", lambda m, x, y: m.gt(x, y), [F, F], np.greater, order=0),
    Rec("ge", lambda m, x, y: m.ge(x, y), [I23, I23], np.greater_equal, order=0),
    Rec("and", lambda m, x, y: m.bitwise_and(x, y), [B23, B23], np.logical_and, order=0),
    Rec("or", lambda m, x, y: m.bitwise_or(x, y), [I23, I23], np.bitwise_or, order=0),
    Rec("xor", lambda m, x, y: m.bitwise_xor(x, y), [I23, I23], np.bitwise_xor, order=0),
    Rec("shift_left", lambda m, x, y: m.shift_left(x, y), [I23, SHIFT], np.left_shift, order=0),
    Rec("shift_right_arithmetic", lambda m, x, y: m.shift_right_arithmetic(x, y), [I23, SHIFT], np.right_shift, order=0),
    Rec("shift_right_logical", lambda m, x, y: m.shift_right_logical(x, y), [_i(2, 3, lo=0, hi=99), SHIFT], np.right_shift, order=0),
    Rec("select_n", lambda m, p, x, y: m.select_n(p, x, y), [B23, F, F], lambda p, x, y: np.where(p, y, x)),
    Rec("clamp", lambda m, lo, x, hi: m.clamp(lo, x, hi), [_f(2, 3, hi=0.0), F, _f(2, 3, lo=0.0)], lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi)),
    # structural
    Rec("broadcast_in_dim", lambda m, x: m.broadcast_in_dim(x, (2, 4, 3), (0, 2)), [F], lambda x: np.broadcast_to(x[:, None], (2, 4, 3))),
    Rec("reshape", lambda m, x: m.reshape(x, (3, 2)), [F], lambda x: x.reshape(3, 2)),
    Rec("squeeze", lambda m, x: m.squeeze(x, (0,)), [_f(1, 3)], lambda x: x[0]),
    Rec("transpose", lambda m, x: m.transpose(x, (1, 0)), [F], np.transpose),
    Rec("concatenate", lambda m, x, y: m.concatenate([x, y], 1), [F, _f(2, 2)], lambda x, y: np.concatenate([x, y], 1)),
    Rec("stack", lambda m, x, y: m.stack_p.bind(x, y, axis=1), [F, F], lambda x, y: np.stack([x, y], 1)),
    Rec("split", lambda m, x: m.split(x, (1, 2), 1), [F], lambda x: np.split(x, [1], 1)),
    Rec("tile", lambda m, x: m.tile_p.bind(x, reps=(2, 1)), [F], lambda x: np.tile(x, (2, 1))),
    Rec("pad", lambda m, x, v: m.pad(x, v, ((1, 1, 0), (1, -1, 1))), [F, _f()], _np_pad),
    Rec("rev", lambda m, x: m.rev(x, (1,)), [F], lambda x: x[:, ::-1]),
    Rec("iota", lambda m: m.iota(i32, 4), [], lambda: np.arange(4, dtype=i32), order=0),
    # reductions and scans
    Rec("reduce_sum", lambda m, x: m.reduce_sum(x, (1,)), [F], lambda x: x.sum(1)),
    Rec("reduce_prod", lambda m, x: m.reduce_prod(x, (1,)), [F], lambda x: x.prod(1)),
    Rec("reduce_max", lambda m, x: m.reduce_max(x, (1,)), [F], lambda x: x.max(1)),
    Rec("reduce_min", lambda m, x: m.reduce_min(x, (0,)), [F], lambda x: x.min(0)),
    Rec("reduce_and", lambda m, x: m.reduce_and(x, (1,)), [B23], lambda x: x.all(1), order=0),
    Rec("reduce_or", lambda m, x: m.reduce_or(x, (1,)), [I23], lambda x: np.bitwise_or.reduce(x, 1), order=0),
    Rec("reduce_xor", lambda m, x: m.reduce_xor(x, (0,)), [I23], lambda x: np.bitwise_xor.reduce(x, 0), order=0),
    Rec("argmax", lambda m, x: m.argmax(x, 1, i32), [F], lambda x: x.argmax(1).astype(i32), order=0),
    Rec("argmin", lambda m, x: m.argmin(x, 0, i32), [F], lambda x: x.argmin(0).astype(i32), order=0),
    Rec("cumsum", lambda m, x: m.cumsum(x, 1), [F], _cum(np.cumsum)),
    Rec("cumprod", lambda m, x: m.cumprod(x, 1), [F], _cum(np.cumprod)),
    Rec("cummax", lambda m, x: m.cummax(x, 1), [F], _cum(np.maximum.accumulate)),
    Rec("cummin", lambda m, x: m.cummin(x, 1, reverse=True), [F], lambda x: np.minimum.accumulate(x[:, ::-1], 1)[:, ::-1]),
    Rec("cumlogsumexp", lambda m, x: m.cumlogsumexp(x, 1), [F], _cumlogsumexp, tol=1e-5),
    Rec("sort", lambda m, x: m.sort(x, 1), [F], lambda x: np.sort(x, 1)),
    Rec("top_k", lambda m, x: m.top_k(x, 2)[0], [F], lambda x: -np.sort(-x, 1)[:, :2]),
    Rec("dot_general", lambda m, x, y: m.dot_general(x, y, (((1,), (0,)), ((), ()))), [F, _f(3, 4)], np.dot, tol=1e-5),
    # indexing
    Rec("slice", lambda m, x: m.slice(x, (0, 1), (2, 3), (1, 1)), [F], lambda x: x[:, 1:3]),
    Rec("slice_strided", lambda m, x: m.slice(x, (1, 0), (6, 4), (2, 3)), [_f(7, 4)], lambda x: x[1:6:2, 0:4:3]),
    Rec("dynamic_slice", lambda m, x, i, j: m.dynamic_slice(x, (i, j), (2, 2)), [_f(3, 4), _i(), _i()], lambda x, i, j: x[np.clip(i, 0, 1):][:2, np.clip(j, 0, 2):][:, :2]),
    Rec("dynamic_update_slice", lambda m, x, u, i: m.dynamic_update_slice(x, u, (i, i)), [_f(3, 4), _f(2, 2), _i()], lambda x, u, i: _np_dus(x, u, i)),
    Rec("gather", lambda m, x, idx: m.gather(x, idx, GATHER_DN, (1, 3)), [_f(4, 3), I31], _np_gather),
    Rec("scatter-add", lambda m, x, idx, v: m.scatter_add(x, idx, v, SCATTER_DN), [_f(4, 3), I31, _f(3, 3)], _np_scatter_add),
    # fft (complex results are checked through real and imag: see COMPLEX_PAIRING)
    Rec("fft", lambda m, x: m.imag(m.fft(x, "fft", (2, 3))), [F], lambda x: np.fft.fft2(x).imag.astype(np.float32), tol=1e-5),
    Rec("fft_rfft", lambda m, x: m.real(m.fft(x, "rfft", (3,))), [F], lambda x: np.fft.rfft(x).real.astype(np.float32), tol=1e-5),
    Rec("fft_irfft", lambda m, x: m.fft(m.fft(x, "fft", (3,)), "irfft", (4,)), [F], lambda x: np.fft.irfft(np.fft.fft(x), 4).astype(np.float32), tol=1e-5),
    # linear algebra
    Rec("cholesky", lambda m, x: m.linalg.cholesky(x), [_spd(3)], np.linalg.cholesky, tol=1e-5),
    Rec("eigh", lambda m, x: m.linalg.eigh(x)[1], [_spd(3)], np.linalg.eigvalsh, tol=1e-5),
    Rec("lu", lambda m, x: m.linalg.lu(x)[0], [_f(4, 3)], _np_lu, tol=1e-5),
    Rec("lu_pivots_to_permutation", lambda m, p: m.linalg.lu_pivots_to_permutation(p, 5), [_i(3, lo=0, hi=5)], lambda p: _np_perm(p, 5), order=0),
    Rec("qr", lambda m, x: m.linalg.qr(x, full_matrices=False), [_f(4, 3)], lambda x: np.linalg.qr(x), tol=1e-5),
    Rec("svd", lambda m, x: m.linalg.svd(x, compute_uv=False), [_f(3, 4)], lambda x: np.linalg.svd(x, compute_uv=False), tol=1e-5),
    Rec("triangular_solve", lambda m, a, b: m.linalg.triangular_solve(a, b, left_side=True, lower=True), [_tri(3), _f(3, 2)], lambda a, b: np.linalg.solve(a, b), tol=1e-5),
    Rec("triangular_solve_right", lambda m, a, b: m.linalg.triangular_solve(a, b, transpose_a=True, unit_diagonal=True), [_tri(3, lower=False), _f(2, 3)], lambda a, b: np.linalg.solve((np.triu(a, 1) + np.eye(3)), b.T).T, tol=1e-5),
    Rec("eig", lambda m, x: m.real(m.linalg.eig(x, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]), [_spd(3)], lambda x: np.linalg.eigvals(x).real, tol=1e-4),
    Rec("tridiagonal_solve", lambda m, dl, d, du, b: m.linalg.tridiagonal_solve(dl, d, du, b), [_f(4), _dominant(4), _f(4), _f(4, 2)], _np_tridiagonal_solve, tol=1e-5),
    Rec("householder_product", lambda m, a, t: m.linalg.householder_product(a, t), [_f(4, 3), _f(2)], _np_householder, order=1, tol=1e-5),
    Rec("hessenberg", lambda m, x: m.linalg.hessenberg(x), [_f(4, 4)], _np_hessenberg, order=0, tol=1e-5),
    Rec("schur", lambda m, x: m.linalg.schur(x), [_tri(4, lower=False)], lambda x: (x, np.eye(4, dtype=np.float32)), order=0, tol=1e-5),
    # special functions
    Rec("polygamma", lambda m, x: m.polygamma(m.full_like(x, 2.0), x), [POS], lambda x: _sp("polygamma")(2, x), tol=1e-5),
    Rec("zeta", lambda m, s, q: m.zeta(s, q), [_f(2, 3, lo=1.5, hi=4.0), POS], _sp("zeta"), tol=1e-5),
    Rec("igamma", lambda m, a, x: m.igamma(a, x), [POS, POS], _sp("gammainc"), order=1, tol=1e-5),
    Rec("igammac", lambda m, a, x: m.igammac(a, x), [POS, POS], _sp("gammaincc"), order=1, tol=1e-5),
    Rec("igamma_grad_a", lambda m, x: m.igamma_grad_a(m.full_like(x, 1.5), x), [POS], lambda x: _d_gammainc_da(SP_A, x).astype(np.float32), tol=1e-5),
    Rec("random_gamma_grad", lambda m, x: m.random_gamma_grad(m.full_like(x, 1.5), x), [POS], lambda x: _np_random_gamma_grad(SP_A, x), tol=1e-5),
    Rec("regularized_incomplete_beta", lambda m, x: m.betainc(m.full_like(x, 1.5), m.full_like(x, 2.5), x), [_f(2, 3, lo=0.1, hi=0.9)], lambda x: _sp("betainc")(SP_A, SP_B, x), tol=1e-5),
    Rec("bessel_i0e", lambda m, x: m.bessel_i0e(x), [_f(2, 3, lo=-3, hi=3)], _sp("i0e"), tol=1e-5),
    Rec("bessel_i1e", lambda m, x: m.bessel_i1e(x), [_f(2, 3, lo=-3, hi=3)], _sp("i1e"), tol=1e-5),
]  # fmt: skip


# Convolutions, windows, solvers and bits (lax/convolution.py, windowed.py,
# linear_solve.py, bits.py, compiler_hints.py).


def _np_conv(x, w, strides, pads, lhs_dil, rhs_dil, groups=1):
    """Direct convolution in (N, C, spatial...) x (O, I, spatial...) layout."""
    shape = [(n - 1) * d + 1 for n, d in zip(x.shape[2:], lhs_dil)]
    xd = np.zeros((*x.shape[:2], *shape))
    xd[(slice(None), slice(None), *(slice(None, None, d) for d in lhs_dil))] = x
    xd = np.pad(xd, [(0, 0), (0, 0), *pads])
    span = [(k - 1) * d + 1 for k, d in zip(w.shape[2:], rhs_dil)]
    out_sp = [(p - s) // st + 1 for p, s, st in zip(xd.shape[2:], span, strides)]
    og, i = w.shape[0] // groups, w.shape[1]
    out = np.zeros((x.shape[0], w.shape[0], *out_sp))
    for off in np.ndindex(*w.shape[2:]):
        idx = tuple(
            slice(k * d, k * d + (m - 1) * s + 1, s)
            for k, d, m, s in zip(off, rhs_dil, out_sp, strides)
        )
        patch = xd[(slice(None), slice(None), *idx)]
        for g in range(groups):
            wg = w[(slice(g * og, (g + 1) * og), slice(None), *off)]
            out[:, g * og : (g + 1) * og] += np.einsum(
                "nc...,oc->no...", patch[:, g * i : (g + 1) * i], wg
            )
    return out.astype(np.float32)


def _np_windows(x, window, reduce):
    """Reduce every (VALID, stride 1) window of a 2-D array."""
    rows, cols = x.shape[0] - window[0] + 1, x.shape[1] - window[1] + 1
    return np.array(
        [
            [reduce(x[r : r + window[0], c : c + window[1]]) for c in range(cols)]
            for r in range(rows)
        ],
        np.float32,
    )


def _np_max_gather(t, x):
    """The tangent at each 2x2 window's max (stride 1, VALID)."""
    out = np.zeros((x.shape[0] - 1, x.shape[1] - 1), np.float32)
    for r, c in np.ndindex(*out.shape):
        k = np.argmax(x[r : r + 2, c : c + 2])
        out[r, c] = t[r + k // 2, c + k % 2]
    return out


def _np_max_scatter(s, x):
    out = np.zeros_like(x)
    for r, c in np.ndindex(*s.shape):
        k = np.argmax(x[r : r + 2, c : c + 2])
        out[r + k // 2, c + k % 2] += s[r, c]
    return out


def _np_popcount(x):
    return np.bitwise_count(x.view(np.uint32)).astype(np.int32)


def _np_clz(x):
    lengths = np.array([int(v).bit_length() for v in x.view(np.uint32).ravel()])
    return (32 - lengths).reshape(x.shape).astype(np.int32)


def _np_mulhi(x, y):
    return ((x.astype(np.int64) * y.astype(np.int64)) >> 32).astype(np.int32)


WINDOW = dict(window_dimensions=(2, 2), window_strides=(1, 1), padding=((0, 0), (0, 0)))
WINDOW_DIL = dict(WINDOW, base_dilation=(1, 1), window_dilation=(1, 1))
DISTINCT = lambda rng: (rng.permutation(12).reshape(3, 4) / 5.0 - 1).astype(np.float32)  # noqa: E731
I_ANY = _i(2, 3, lo=-(2**31), hi=2**31 - 1)

RECORDS += [
    Rec("conv_general_dilated", lambda m, x, w: m.conv_general_dilated(x, w, (2,), [(1, 0)], (1,), (2,), None, 2), [_f(1, 4, 7), _f(4, 2, 2)], lambda x, w: _np_conv(x, w, (2,), [(1, 0)], (1,), (2,), 2), tol=1e-5),
    Rec("conv_general_dilated_nhwc", lambda m, x, w: m.conv_general_dilated(x, w, (1, 2), [(0, 1), (1, 1)], (2, 1), None, ("NHWC", "HWIO", "NHWC")), [_f(1, 3, 3, 2), _f(2, 2, 2, 3)], lambda x, w: _np_conv(x.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), (1, 2), [(0, 1), (1, 1)], (2, 1), (1, 1)).transpose(0, 2, 3, 1), order=1, tol=1e-5),
    Rec("reduce_window_sum", lambda m, x: m.reduce_window(x, 0.0, m.add, (2, 2), (1, 1), "VALID"), [F], lambda x: _np_windows(x, (2, 2), np.sum), tol=1e-6),
    Rec("reduce_window_max", lambda m, x: m.reduce_window(x, -np.inf, m.max, (2, 2), (1, 1), "VALID"), [DISTINCT], lambda x: _np_windows(x, (2, 2), np.max)),
    Rec("reduce_window_min", lambda m, x: m.reduce_window(x, np.inf, m.min, (2, 2), (1, 1), "VALID"), [DISTINCT], lambda x: _np_windows(x, (2, 2), np.min)),
    Rec("reduce_window", lambda m, x: m.reduce_window(x, 1.0, lambda a, b: a * b, (2, 2), (1, 1), "VALID"), [F], lambda x: _np_windows(x, (2, 2), np.prod), tol=1e-6),
    Rec("select_and_gather_add", lambda m, t, x: m.select_and_gather_add_p.bind(t, x, select_prim=m.ge_p, **WINDOW_DIL), [_f(3, 4), DISTINCT], _np_max_gather, order=1),
    Rec("select_and_scatter_add", lambda m, s, x: m.select_and_scatter_add_p.bind(s, x, select_prim=m.ge_p, **WINDOW), [_f(2, 3), DISTINCT], _np_max_scatter, order=1),
    Rec("reduce", lambda m, x: m.reduce(x, 1.0, lambda a, b: a * b, (1,)), [F], lambda x: x.prod(1), tol=1e-6),
    Rec("custom_linear_solve", lambda m, d, b: m.custom_linear_solve(lambda v: d * v, b, lambda mv, b: b / d, symmetric=True), [POS, F], lambda d, b: b / d, tol=1e-6),
    Rec("bitcast_convert_type", lambda m, x: m.bitcast_convert_type(x, np.int32), [F], lambda x: x.view(np.int32), order=0),
    Rec("population_count", lambda m, x: m.population_count(x), [I_ANY], _np_popcount, order=0),
    Rec("clz", lambda m, x: m.clz(x), [I_ANY], _np_clz, order=0),
    Rec("mulhi", lambda m, x, y: m.mulhi(x, y), [I_ANY, I_ANY], _np_mulhi, order=0),
    Rec("reduce_precision", lambda m, x: m.reduce_precision(x, 8, 23), [F], lambda x: x),
    Rec("complex", lambda m, x, y: m.abs(m.complex(x, y)), [_away(2, 3), F], lambda x, y: np.abs(x + 1j * y).astype(np.float32), tol=1e-6),
    Rec("optimization_barrier", lambda m, x, y: m.optimization_barrier((x, y)), [F, F], lambda x, y: (x, y)),
]  # fmt: skip


# checkpoint_name (ad_checkpoint.py) and custom_vmap_call (custom_batching.py): from the
# library the namespace `m` belongs to.
def _library(m):
    return jaxlite if m is LAX else pytest.importorskip("jax")


def _checkpoint_name(m, x):
    if m is LAX:
        from jaxlite.ad_checkpoint import checkpoint_name
    else:
        from jax.ad_checkpoint import checkpoint_name
    return checkpoint_name(m.sin(x), "n")


def _sequential_sin(m, x):
    return _library(m).custom_batching.sequential_vmap(lambda v: m.sin(v) * 2)(x)


RECORDS += [
    Rec("name", _checkpoint_name, [F], np.sin, tol=1e-6),
    Rec("custom_vmap_call", _sequential_sin, [F], lambda x: np.sin(x) * 2, tol=1e-6),
]  # fmt: skip


def _xla_math(m, name):
    """jaxlite.random.xla_math's XLA-rounded function `name`, or JAX's lax one."""
    from jaxlite.random import xla_math

    return getattr(xla_math, name) if m is LAX else getattr(m, name)


# pow and tan as XLA's CPU backend computes them (the C library's powf and tanf).
RECORDS += [
    Rec("powf", lambda m, x, y: _xla_math(m, "pow")(x, y), [POS, F], np.power, tol=1e-6),
    Rec("tanf", lambda m, x: _xla_math(m, "tan")(x), [F], np.tan, tol=1e-6),
]  # fmt: skip

# exp, log, ... of jaxlite.random's samplers: XLA's float32 kernels at every size.
RECORDS += [
    Rec("xla_exact", lambda m, x: _xla_math(m, "log1p")(x), [POS], np.log1p, tol=1e-6),
]  # fmt: skip


# A namespace giving the records `lax` plus the primitives they bind directly.
def _lax_namespace(module, prims):
    ns = types.SimpleNamespace(**{k: getattr(module, k) for k in dir(module)})
    for name, prim in prims.items():
        setattr(ns, name, prim)
    return ns


def _jaxlite_lax():
    from jaxlite.lax import structural

    return _lax_namespace(
        lax,
        dict(
            copy_p=structural.copy_p,
            stack_p=structural.stack_p,
            tile_p=structural.tile_p,
        ),
    )


LAX = _jaxlite_lax()


@contextlib.contextmanager
def _check(rec, what):
    """Run one check; a known failure must fail (so the record stays exact)."""
    reason = rec.fails.get(what)
    if reason is None:
        yield
        return
    try:
        yield
    except Exception:
        return
    pytest.fail(
        f"{rec.name}: the '{what}' check is listed as a known failure ({reason}) but "
        "passes: remove it from the record"
    )


def _leaves(x):
    return [np.asarray(leaf) for leaf in jaxlite.tree_util.tree_leaves(x)]


def _examples(rec, n):
    rng = np.random.default_rng(zlib.crc32(rec.name.encode()))
    return [[g(rng) for g in rec.args] for _ in range(n)]


def _in_axes_choices(args):
    """Every valid `in_axes`: each argument unbatched or batched at any position."""
    per_arg = [[None, *range(np.ndim(a) + 1)] for a in args]
    return [
        axes for axes in itertools.product(*per_arg) if any(d is not None for d in axes)
    ]


def _is_float(x):
    return np.asarray(x).dtype.kind in "fc"


def _check_vmap(rec, f, examples, size):
    first = examples[0]
    for axes in _in_axes_choices(first):
        batched = [
            _stack(examples[:size], k, a, d)
            for k, (a, d) in enumerate(zip(first, axes))
        ]
        out = _leaves(jaxlite.vmap(f, in_axes=axes)(*batched))
        if size == 0:
            per_example = jaxlite.eval_shape(f, *first)
            for o, e in zip(out, jaxlite.tree_util.tree_leaves(per_example)):
                assert o.shape == (0, *e.shape) and o.dtype == e.dtype, axes
            continue
        loop = [_leaves(f(*_pick(first, ex, axes))) for ex in examples[:size]]
        expected = [np.stack(parts) for parts in zip(*loop)]
        check_close(
            out, expected, rtol=rec.tol, atol=rec.tol, err_msg=f"in_axes={axes}"
        )


def _pick(first, example, axes):
    """One example's arguments: unbatched ones are the same for every example."""
    return [a if d is None else e for a, e, d in zip(first, example, axes)]


def _stack(examples, k, like, axis):
    if axis is None:
        return like
    if not examples:
        empty = np.zeros((0, *np.shape(like)), np.asarray(like).dtype)
        return np.moveaxis(empty, 0, axis)
    return np.stack([ex[k] for ex in examples], axis)


@pytest.mark.parametrize("rec", RECORDS, ids=[r.name for r in RECORDS])
def test_primitive_record(rec):
    f = functools.partial(rec.fn, LAX)
    examples = _examples(rec, 3)
    args = examples[0]
    out = f(*args)
    with _check(rec, "impl"):
        check_close(_leaves(out), _leaves(rec.ref(*args)), rtol=rec.tol, atol=rec.tol)
    with _check(rec, "abstract_eval"):
        avals = jaxlite.make_jaxpr(f)(*args).out_avals
        leaves = jaxlite.tree_util.tree_leaves(out)
        assert len(avals) == len(leaves)
        for aval, leaf in zip(avals, leaves):
            assert aval.shape == leaf.shape and aval.dtype == leaf.dtype, (aval, leaf)
            assert aval.weak_type == leaf.weak_type, (aval, leaf)
    with _check(rec, "jit"):
        check_close(_leaves(jaxlite.jit(f)(*args)), _leaves(out))
    with _check(rec, "vmap"):
        _check_vmap(rec, f, examples, 3)
        _check_vmap(rec, f, examples, 0)
    if rec.order:
        with _check(rec, "grad"):
            floats = [k for k, a in enumerate(args) if _is_float(a)]

            def g(*float_args):
                full = list(args)
                for k, a in zip(floats, float_args):
                    full[k] = a
                return f(*full)

            check_grads(
                g, [args[k] for k in floats], order=rec.order, modes=("fwd", "rev")
            )


@pytest.mark.parametrize("rec", RECORDS, ids=[r.name for r in RECORDS])
def test_primitive_record_matches_jax(rec):
    jax = pytest.importorskip("jax")
    jlax = _lax_namespace(
        jax.lax,
        dict(
            copy_p=jax.lax.copy_p,
            stack_p=_JaxStack(jax),
            tile_p=_JaxTile(jax),
        ),
    )
    args = _examples(rec, 1)[0]
    out = jaxlite.tree_util.tree_leaves(rec.fn(LAX, *args))
    ref = jax.tree_util.tree_leaves(rec.fn(jlax, *args))
    with _check(rec, "jax"):
        assert len(out) == len(ref)
        for o, r in zip(out, ref):
            assert o.shape == r.shape and o.dtype == r.dtype, (o, r)
            assert o.weak_type == r.weak_type, (o, r)
            tol = rec.tol or 1e-6
            check_close(np.asarray(o), np.asarray(r), rtol=tol * 10, atol=tol * 10)


class _JaxStack:
    """`stack_p.bind(*xs, axis=...)` for JAX, which has no stack primitive."""

    def __init__(self, jax):
        self.jax = jax

    def bind(self, *xs, axis):
        return self.jax.numpy.stack(xs, axis)


class _JaxTile:
    def __init__(self, jax):
        self.jax = jax

    def bind(self, x, *, reps):
        return self.jax.numpy.tile(x, reps)
