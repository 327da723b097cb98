"""The backend's rule tables: every primitive lowers (or is a listed exception that
runs its impl rule), eager-only kernels (`eager_impl_rules`) are unreachable from
compiled code, call-like primitives share one call lowering, and generated code frees
what is dead."""

import functools
import importlib

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import backend, lax
from jaxlite.backend import lowering
from jaxlite.core import (
    ClosedJaxpr,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    eager_impl_rules,
    impl_rules,
    no_effects,
)
from testing import package_modules


def _import_everything():
    for name in package_modules():
        importlib.import_module(name)


_import_everything()

# Primitives compiled code runs through their impl rule (a call of the NumPy function
# with the parameters bound), by name. Each is a NumPy/LAPACK routine, or a composite
# NumPy function, that a lowering would only wrap in the same call.
IMPL_IS_THE_LOWERING = {
    # linear algebra: LAPACK through NumPy
    *("cholesky", "eig", "eigh", "geqrf", "hessenberg", "householder_product", "lu"),
    *("lu_pivots_to_permutation", "qr", "schur", "svd", "triangular_solve"),
    "tridiagonal_solve",
    # special functions: series and recurrences in NumPy (lax/special*.py)
    *("bessel_i0e", "bessel_i1e", "bessel_jn", "cos_integral", "dawsn", "digamma"),
    *("erfc", "fresnel_c", "fresnel_s", "hyp1f1", "hyp2f1", "igamma"),
    *("igamma_grad_a", "igammac", "lgamma", "owens_t", "polygamma"),
    *("random_gamma_grad", "regularized_incomplete_beta"),
    *("sin_integral", "wofz", "zeta"),
    # structural and indexing operations with their own NumPy functions
    *("dynamic_slice", "dynamic_update_slice", "pad", "reshape", "split"),
    *("scatter", "scatter-add", "scatter-max", "scatter-min", "scatter-mul"),
    *("scatter-sub", "top_k", "empty", "ragged_dot_general"),
    # windows and convolutions
    *("conv_general_dilated", "reduce", "reduce_window", "reduce_window_max"),
    *("reduce_window_min", "reduce_window_sum", "select_and_gather_add"),
    "select_and_scatter_add",
    "fft",
    # elementwise with XLA's edge cases handled in NumPy (dtype checks, NaN, signs)
    *("bitcast_convert_type", "clz", "complex", "convert_element_type"),
    *("integer_pow", "mulhi", "population_count", "reduce_precision", "round"),
    *("rsqrt", "shift_right_arithmetic", "sign"),
    # random bits, and random's libm calls (xla_math: powf, tanf elementwise)
    *("rng_bit_generator", "rng_uniform", "powf", "tanf"),
    # tokens, hints and collectives over the one device: identity-like functions
    *("after_all", "create_token", "optimization_barrier"),
    *("all_gather", "all_to_all", "axis_index", "pmax", "pmin", "ppermute", "psum"),
    "reduce_scatter",
    # custom_lin only exists under differentiation; its impl raises the error JAX
    # gives for forward-mode differentiation of a custom_vjp function
    "custom_lin",
    # mutable array references (jaxlite.state): the impl reads and writes the
    # reference's own buffer
    *("get", "swap", "addupdate", "new_ref", "freeze", "empty_ref", "free_ref"),
    # collectives across MPI processes (lax/cross_process.py): the impl is the MPI call
    *("process_allreduce", "process_all_gather", "process_all_to_all"),
    *("process_broadcast", "process_permute", "process_reduce_scatter"),
    "process_replicated",
    # global value <-> process block under jit (lax/process_blocks.py):
    # distributed/spmd.py rewrites them away before a jaxpr is lowered
    *("process_block", "process_assemble"),
    # reverse mode's marks inside a shard_map with check_vma (lax/parallel.py): the
    # impl is the identity; batching over the manual axes applies them
    "vma_boundary",
}


# Primitives over keys (an extended dtype): `interpreters.physical` rewrites them as
# operations on the keys' uint32 data before a backend sees the jaxpr.
PHYSICALIZED = {
    *("random_seed", "random_split", "random_fold_in", "random_bits", "random_wrap"),
    *("random_unwrap", "random_gamma"),
}


def _primitives():
    """jaxlite's primitives: not those defined through JAX's extension API (by the
    tests of `jax.extend`), whose rules `core_extension` wraps."""
    rules = {**impl_rules, **abstract_eval_rules}
    return {
        p
        for p, rule in rules.items()
        if getattr(impl_rules.get(p, rule), "__module__", None)
        != "jaxlite.core_extension"
        and getattr(rule, "__module__", None) != "jaxlite.core_extension"
    }


def test_every_primitive_lowers_or_is_listed():
    missing = sorted(
        p.name
        for p in _primitives()
        if p not in backend.lowering_rules
        and p.name not in IMPL_IS_THE_LOWERING
        and p.name not in PHYSICALIZED
    )
    assert not missing, (
        f"primitives without a lowering rule: {missing}. Register one in the "
        "primitive's registration block, or add it to IMPL_IS_THE_LOWERING with why."
    )


def test_exemption_list_is_current():
    names = {p.name for p in _primitives()}
    lowered = {p.name for p in _primitives() if p in backend.lowering_rules}
    unlowered = names - lowered
    listed = IMPL_IS_THE_LOWERING | PHYSICALIZED
    stale = sorted(n for n in listed if n not in unlowered)
    assert not stale, f"listed but unknown or lowered: {stale}; remove them"


def _exact_kernels():
    """Every eager-only rule, and the exact kernels those rules call."""
    from jaxlite.lax import xla_float32

    return {id(r) for r in eager_impl_rules.values()} | {
        id(getattr(xla_float32, name)) for name in xla_float32.KERNEL_NAMES
    }


def _referenced(exe, seen=None):
    """Every global of a compiled function, and of the compiled functions it calls."""
    seen = set() if seen is None else seen
    out = []
    for value in exe.fun.__globals__.values():
        if id(value) in seen:
            continue
        seen.add(id(value))
        out.append(value)
        if isinstance(value, functools.partial):
            out.append(value.func)
        sub = getattr(value, "__globals__", None)
        if sub is not None and sub.get("__name__") == "jaxlite.backend.generated":
            out.extend(_referenced(type("E", (), {"fun": value}), seen))
    return out


_X = np.linspace(-0.9, 0.9, 100, dtype=np.float32)
_EAGER_ONLY_CALLS = {
    "logistic": lambda: jax.make_jaxpr(lax.logistic)(_X),
    "exp2": lambda: jax.make_jaxpr(lax.exp2)(_X),
    "pow": lambda: jax.make_jaxpr(lax.pow)(_X + 1, _X),
    "erf": lambda: jax.make_jaxpr(lax.erf)(_X),
    "erf_inv": lambda: jax.make_jaxpr(lax.erf_inv)(_X),
    "atan2": lambda: jax.make_jaxpr(lax.atan2)(_X, _X + 2),
}


@pytest.mark.numpy_backend
@pytest.mark.parametrize("name", sorted({p.name for p in eager_impl_rules}))
def test_compiled_code_never_reaches_eager_kernels(name):
    prim = next(p for p in eager_impl_rules if p.name == name)
    make = _EAGER_ONLY_CALLS.get(name)
    closed = make() if make else jax.make_jaxpr(lambda x: prim.bind(x))(_X + 1.5)
    assert closed.jaxpr.eqns[-1].primitive is prim
    exe = backend.compile(ClosedJaxpr(closed.jaxpr, closed.consts))
    kernels = _exact_kernels()
    reached = [v for v in _referenced(exe) if id(v) in kernels]
    assert not reached, f"{name}: compiled code calls {reached}\n{exe.source}"
    assert prim in backend.lowering_rules, f"{name} has no lowering rule"


def test_impl_fallback_never_uses_the_eager_table():
    prim = Primitive("test_eager_only")
    calls = []
    impl_rules[prim] = lambda x: [calls.append("impl") or x + 1]
    eager_impl_rules[prim] = lambda x: [calls.append("eager") or x + 1]
    abstract_eval_rules[prim] = lambda x: ([ShapedArray(x.shape, x.dtype)], no_effects)
    try:
        x = np.ones(3, np.float32)
        jax.jit(lambda x: prim.bind(x))(x)
        assert calls == ["impl"]
        prim.bind(jnp.asarray(x))  # eagerly: the eager kernel
        assert calls == ["impl", "eager"]
    finally:
        del impl_rules[prim], eager_impl_rules[prim], abstract_eval_rules[prim]


def test_eager_is_xla_exact_and_jit_is_close():
    jax_ = pytest.importorskip("jax")
    x = np.linspace(-3, 3, 100, dtype=np.float32)
    u = np.linspace(-0.99, 0.99, 100, dtype=np.float32)
    for ours, theirs, arg in [
        (lax.erf, jax_.lax.erf, x),
        (lax.erf_inv, jax_.lax.erf_inv, u),
        (lax.logistic, jax_.lax.logistic, x),
    ]:
        expected = np.asarray(jax_.jit(theirs)(arg))
        np.testing.assert_array_equal(np.asarray(ours(jnp.asarray(arg))), expected)
        np.testing.assert_allclose(
            np.asarray(jax.jit(ours)(arg)), expected, rtol=2e-6, atol=1e-7
        )


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_jit_erf_edges(dtype):
    with jax.enable_x64(dtype == np.float64):
        _check_erf_edges(dtype)


def _check_erf_edges(dtype):
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 10.0, -10.0], dtype)
    out = np.asarray(jax.jit(lax.erf)(x))
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, np.array([0, -0.0, 1, -1, np.nan, 1, -1], dtype))
    assert np.signbit(out[1])
    u = np.array([0.0, 1.0, -1.0, 2.0, np.nan], dtype)
    out = np.asarray(jax.jit(lax.erf_inv)(u))
    np.testing.assert_array_equal(out, np.array([0, np.inf, -np.inf, np.nan, np.nan]))


def test_jit_pow_integer_exponent_and_exp2_complex():
    x = np.linspace(0.5, 2, 7, dtype=np.float32)
    n = np.arange(7, dtype=np.int32)
    np.testing.assert_allclose(jax.jit(lax.pow)(x, n), x**n, rtol=1e-6)
    z = np.array([1 + 1j, -0.5 + 2j], np.complex64)
    np.testing.assert_allclose(jax.jit(lax.exp2)(z), 2**z, rtol=1e-6)


# ----------------------------------------------------------------------------------
# One call lowering


def test_call_primitives_share_one_lowering():
    from jaxlite import dispatch
    from jaxlite.ad_checkpoint import remat_p
    from jaxlite.lax.custom_derivatives import custom_jvp_call_p, custom_vjp_call_p
    from jaxlite.lax.linear_call import linear_call_p

    for prim in (dispatch.jit_p, custom_jvp_call_p, custom_vjp_call_p, remat_p):
        rule = backend.lowering_rules[prim]
        assert rule.__qualname__.startswith("call_lowering"), prim
    assert backend.lowering_rules[linear_call_p].__qualname__.startswith(
        "call_lowering"
    )


def test_lower_call_needs_a_compiler():
    ctx = lowering.LoweringContext()
    closed = jax.make_jaxpr(jnp.sin)(1.0)
    with pytest.raises(TypeError, match="has no compiler"):
        lowering.lower_call(ctx, closed, ["a"])


# ----------------------------------------------------------------------------------
# Memory


@pytest.mark.numpy_backend
def test_generated_code_deletes_dead_values():
    def f(x):
        y = jnp.cumsum(x)
        z = jnp.cumsum(y)
        return jnp.cumsum(z)

    src = jax.jit(f).lower(np.ones(8, np.float32)).as_text()
    lines = src.splitlines()
    # each intermediate is deleted right after its last use
    assert sum(line.strip().startswith("del ") for line in lines) >= 2, src
    np.testing.assert_allclose(jax.jit(f)(np.ones(8, np.float32)), f(np.ones(8)))


def _peak_bytes(fn):
    tracemalloc = pytest.importorskip("tracemalloc")  # not in PyPy
    fn()  # compile and warm up
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        start = tracemalloc.get_traced_memory()[0]
        result = fn()
        return tracemalloc.get_traced_memory()[1] - start, result
    finally:
        tracemalloc.stop()


def test_chain_of_non_ufuncs_frees_intermediates():
    x = np.ones(1 << 18, np.float32)  # 1 MiB

    def f(x):
        for _ in range(12):
            x = jnp.cumsum(x)[::-1]
        return x

    g = jax.jit(f)
    peak, _ = _peak_bytes(lambda: g(x))
    assert peak < 5 * x.nbytes, peak  # all twelve kept alive would be >= 12x


def test_exact_float32_kernels_work_in_bounded_memory():
    from jaxlite.lax import xla_float32

    x = np.linspace(-0.99, 0.99, 1 << 20, dtype=np.float32)  # 4 MiB
    peak, out = _peak_bytes(lambda: xla_float32.erf_inv(x))
    assert peak < 3 * x.nbytes, peak
    # in pieces or whole, each element is the same
    pieces = np.concatenate([xla_float32.erf_inv(p) for p in np.split(x, 64)])
    np.testing.assert_array_equal(out, pieces)


@pytest.mark.numpy_backend
def test_random_normal_memory_and_bits():
    key = jax.random.key(0)
    peak, out = _peak_bytes(lambda: jax.random.normal(key, (1000, 1000)))
    assert peak < 5 * out.nbytes, peak
    jax_ = pytest.importorskip("jax")
    expected = jax_.random.normal(jax_.random.key(0), (1000, 1000))
    np.testing.assert_array_equal(np.asarray(out), np.asarray(expected))
