"""Issue 13: configuration and dtype defects, checked against real JAX where it is
importable.

1. The config context managers are thread-local, as in JAX: a block in one thread
   changes nothing in another, overlapping blocks in two threads restore the global
   value, and a trace or a dtype cache never stores what another thread's block (or a
   concurrent `config.update`) would have produced. Threads meet at barriers, so the
   interleavings are fixed (no sleeps).
2. `import jaxlite` installs no `warnings` filter; NumPy's floating-point warnings
   are silenced locally, so `0/0` and friends give JAX's values under `-W error`.
3. The default integer is JAX's (int64 with x64, int32 without), never NumPy's C
   `long`.
4. `sign(-0.0)` is -0.0; unpickling canonicalises the dtype to this process's mode.
5. Python scalars convert straight to the target dtype (`full`, `full_like`,
   `convert_element_type`), never through int32.
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import textwrap
import threading
import warnings

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jlnp
from jaxlite import dtypes
from jaxlite.config import config


def _jax():
    return pytest.importorskip("jax")


# ----------------------------------------------------------------------------------------
# 1. Thread-local configuration


def _run_pair(enter, inside, outside):
    """Thread "A" runs `inside()` within the block `enter()`; thread "B" runs
    `outside()` while A is inside its block. Returns what each returned (or the class
    name of what it raised)."""
    ready = threading.Barrier(2, timeout=30)
    done = threading.Barrier(2, timeout=30)
    out = {}

    def call(fn, key):
        try:
            out[key] = fn()
        except Exception as e:  # the class is the result
            out[key] = type(e).__name__

    def a():
        with enter():
            ready.wait()
            call(inside, "a")
            done.wait()

    def b():
        ready.wait()
        call(outside, "b")
        done.wait()

    threads = [
        threading.Thread(target=a, name="A"),
        threading.Thread(target=b, name="B"),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out["a"], out["b"]


def _scenarios(m):
    """(name, enter, probe) for library module `m` (jaxlite or jax): `probe()` shows
    the option's effect in the thread that runs it."""
    jnp = m.numpy

    def x64_probe():
        return (
            str(jnp.arange(3.0).dtype),
            str(jnp.array([1, 2]).dtype),
            str(jnp.result_type(1.0, 2)),
            str(m.dtypes.canonicalize_dtype(np.float64)),
        )

    def strict_probe():
        return str((jnp.ones(2, jnp.int8) + jnp.ones(2, jnp.uint8)).dtype)

    def rank_probe():
        return str((jnp.ones((2, 3)) + jnp.ones(3)).shape)

    def nan_probe():
        return str(np.asarray(jnp.zeros(1) / jnp.zeros(1)))

    def inf_probe():
        return str(np.asarray(jnp.ones(1) / jnp.zeros(1)))

    def precision_probe():
        return m.config.jax_default_matmul_precision

    return [
        ("enable_x64", lambda: m.enable_x64(True), x64_probe),
        ("strict", lambda: m.numpy_dtype_promotion("strict"), strict_probe),
        ("rank", lambda: m.numpy_rank_promotion("raise"), rank_probe),
        ("debug_nans", lambda: m.debug_nans(True), nan_probe),
        ("debug_infs", lambda: m.debug_infs(True), inf_probe),
        ("precision", lambda: m.default_matmul_precision("highest"), precision_probe),
    ]


SCENARIOS = [name for name, _, _ in _scenarios(jaxlite)]


def _pair_results(m, name):
    enter, probe = next((e, p) for n, e, p in _scenarios(m) if n == name)
    return _run_pair(enter, probe, probe)


@pytest.mark.parametrize("name", SCENARIOS)
def test_context_managers_are_thread_local(name):
    inside, outside = _pair_results(jaxlite, name)
    probe = next(p for n, _, p in _scenarios(jaxlite) if n == name)
    assert inside != outside  # the block acts in its own thread only ...
    assert outside == probe()  # ... and the other thread sees the global value


@pytest.mark.parametrize("name", SCENARIOS)
def test_context_managers_are_thread_local_like_jax(name):
    jax = _jax()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = _pair_results(jax, name)
    assert _pair_results(jaxlite, name) == expected


def test_overlapping_blocks_in_two_threads_restore_the_global_value():
    # A enters, B enters, A leaves, B leaves: with one process-wide value, B would
    # restore the value A had set and leave x64 on for good.
    assert config.x64_enabled is False
    steps = [threading.Barrier(2, timeout=30) for _ in range(3)]
    seen = {}

    def a():
        with jaxlite.enable_x64(True):
            steps[0].wait()  # A is inside
            steps[1].wait()  # B is inside
        steps[2].wait()  # A has left
        seen["a"] = str(jlnp.arange(3.0).dtype)

    def b():
        steps[0].wait()
        with jaxlite.enable_x64(True):
            steps[1].wait()
            steps[2].wait()
            seen["b"] = str(jlnp.arange(3.0).dtype)

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"a": "float32", "b": "float64"}
    assert config.x64_enabled is False
    assert config.read("jax_enable_x64") is False
    assert jlnp.arange(3.0).dtype == np.float32
    assert jlnp.array(1.5).dtype == np.float32


def test_a_trace_never_sees_another_threads_block():
    # Thread A traces `f` (x64 off); in the middle of the trace thread B enters
    # `enable_x64`, calls `f` itself and stays in its block until A is done. A's
    # trace, the jit cache and the dtype caches must keep 32-bit answers for x64 off.
    in_trace = threading.Barrier(2, timeout=30)
    b_done = threading.Barrier(2, timeout=30)
    a_done = threading.Barrier(2, timeout=30)
    traces = []

    @jaxlite.jit
    def f(x):
        traces.append(threading.current_thread().name)
        if threading.current_thread().name == "A":
            in_trace.wait()  # B enters its block now ...
            b_done.wait()  # ... has run f with x64 on, and is still inside
        return x + jlnp.arange(3.0), jlnp.zeros((), jlnp.result_type(1.0, 2))

    out = {}

    def a():
        y, z = f(jlnp.zeros(3))
        out["a"] = (str(y.dtype), str(z.dtype))
        a_done.wait()

    def b():
        in_trace.wait()
        with jaxlite.enable_x64(True):
            y, z = f(jlnp.zeros(3, jlnp.float64))
            out["b"] = (str(y.dtype), str(z.dtype))
            b_done.wait()
            a_done.wait()

    threads = [threading.Thread(target=a, name="A"), threading.Thread(target=b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == {"a": ("float32", "float32"), "b": ("float64", "float64")}
    # The cached entries: each mode gets its own, with its own dtypes.
    y, z = f(jlnp.zeros(3))
    assert (y.dtype, z.dtype) == (np.float32, np.float32)
    with jaxlite.enable_x64(True):
        y, z = f(jlnp.zeros(3, jlnp.float64))
        assert (y.dtype, z.dtype) == (np.float64, np.float64)
    assert len(traces) == 2
    assert jlnp.result_type(1.0, 2) == np.float32
    assert dtypes.canonicalize_dtype(np.float64) == np.float32


def test_a_trace_that_saw_a_global_update_is_not_cached():
    # `config.update` from another thread changes the global value in the middle of
    # a trace: the trace saw both values, so it must not be cached under either.
    in_trace = threading.Barrier(2, timeout=30)
    updated = threading.Barrier(2, timeout=30)
    traces = []

    @jaxlite.jit
    def f(x):
        traces.append(1)
        if len(traces) == 1:
            in_trace.wait()
            updated.wait()
        return x + jlnp.arange(3.0)

    def other():
        in_trace.wait()
        config.update("jax_enable_x64", True)
        updated.wait()

    t = threading.Thread(target=other)
    t.start()
    f(jlnp.zeros(3))  # traced while the update happens
    t.join()
    config.update("jax_enable_x64", False)
    y = f(jlnp.zeros(3))
    assert len(traces) == 2  # traced again: the first trace was not cached
    assert y.dtype == np.float32
    assert f(jlnp.zeros(3)).dtype == np.float32
    assert len(traces) == 2  # the second trace was


def test_update_reaches_threads_inside_a_block_for_other_options():
    # As in JAX: a thread that overrides x64 still sees global updates of the rest.
    inside = threading.Barrier(2, timeout=30)
    updated = threading.Barrier(2, timeout=30)
    seen = {}

    def a():
        with jaxlite.enable_x64(True):
            inside.wait()
            updated.wait()
            seen["rank"] = config.jax_numpy_rank_promotion
            seen["x64"] = config.x64_enabled

    t = threading.Thread(target=a)
    t.start()
    inside.wait()
    config.update("jax_numpy_rank_promotion", "warn")
    config.update("jax_enable_x64", False)
    updated.wait()
    t.join()
    assert seen == {"rank": "warn", "x64": True}


def test_disable_jit_is_thread_local():
    calls = []

    @jaxlite.jit
    def f(x):
        calls.append(threading.current_thread().name)
        return x + 1

    f(1.0)
    calls.clear()

    def twice():
        f(2.0)
        f(3.0)

    _run_pair(jaxlite.disable_jit, twice, twice)
    # Thread A (inside the block) ran the Python function each time; B hit the cache.
    assert calls == ["A", "A"]


def test_no_execution_is_thread_local():
    x = jlnp.ones(2)
    inside, outside = _run_pair(
        jaxlite.no_execution, lambda: (x + x).tolist(), lambda: (x + x).tolist()
    )
    assert inside == "RuntimeError"
    assert outside == [2.0, 2.0]
    assert (x + x).tolist() == [2.0, 2.0]


def test_state_value_reads_the_threads_value():
    inside, outside = _run_pair(
        lambda: jaxlite.enable_x64(True),
        lambda: (jaxlite.enable_x64.value, config.jax_enable_x64, config.values),
        lambda: (jaxlite.enable_x64.value, config.jax_enable_x64),
    )
    assert inside[:2] == (True, True) and inside[2]["jax_enable_x64"] is True
    assert outside == (False, False)


# ----------------------------------------------------------------------------------------
# 2. No global warnings filter; NumPy's floating-point warnings silenced locally

# Each case is `fn(x)` with x = zeros(3, float32); every result is a special value
# (NaN, inf, 0, an integer), so equality with JAX is exact.
FP_CASES = {
    "0/0": "x / x",
    "log(0)": "jnp.log(x)",
    "sqrt(-1)": "jnp.sqrt(x - 1)",
    "inf-inf": "jnp.exp(x + 1000) - jnp.exp(x + 1000)",
    "exp overflow": "jnp.exp(x + 100)",
    "mul overflow": "(x + 3e38) * 10",
    "1/0": "1 / x",
    "nan->int32": "(x / x).astype(jnp.int32)",
    "-inf->int32": "jnp.log(x).astype(jnp.int32)",
    "1e10->uint8": "(x + 1e10).astype(jnp.uint8)",
    "nan->bool": "(x / x).astype(bool)",
    "f32->f16 overflow": "(x + 1e5).astype(jnp.float16)",
    "f16 + 1e5": "x.astype(jnp.float16) + 1e5",
    "sum of nan": "jnp.sum(x / x)",
    "max of nan": "jnp.max(x / x)",
    "mean of nan": "jnp.mean(x / x)",
    "cumsum of -inf": "jnp.cumsum(jnp.log(x))",
    "int // 0": "x.astype(jnp.int32) // x.astype(jnp.int32)",
    "int % 0": "x.astype(jnp.int32) % x.astype(jnp.int32)",
    "arctanh(1)": "jnp.arctanh(x + 1)",
    "arccos(2)": "jnp.arccos(x + 2)",
    "power(0, -1)": "jnp.power(x, -1.0)",
    "square overflow": "jnp.square(x + 1e20)",
    "cosh overflow": "jnp.cosh(x + 1000)",
    "remainder by 0": "jnp.remainder(x, x)",
    "dot of -inf": "jnp.dot(jnp.log(x), jnp.log(x))",
    "sign of nan": "jnp.sign(x / x)",
    "python 1e300": "x + 1e300",
    "numpy float64 1e300": "x + np.float64(1e300)",
}
# Conversions of Python scalars that overflow the target dtype.
SCALAR_CASES = {
    "array(1e300)": "jnp.array(1e300)",
    "asarray(1e300, f16)": "jnp.asarray(1e300, jnp.float16)",
    "asarray(100000, f16)": "jnp.asarray(100000, jnp.float16)",
    "float32(1e300)": "jnp.float32(1e300)",
    "asarray(f64 array)": "jnp.asarray(np.array([1e300, -1e300]))",
    "convert(2**200, f32)": "lax.convert_element_type(2**200, jnp.float32)",
    "convert(1e300, f32)": "lax.convert_element_type(1e300, jnp.float32)",
    "convert(nan, i32)": "lax.convert_element_type(float('nan'), jnp.int32)",
    "full(1e300, f32)": "jnp.full((2,), 1e300, jnp.float32)",
}

_WARNINGS_SCRIPT = """
import json, sys, warnings
import numpy as np
import ml_dtypes
before = list(warnings.filters)
import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
assert warnings.filters == before, "import jaxlite changed warnings.filters"
warnings.simplefilter("error")  # as pytest's filterwarnings = error
fp_cases, scalar_cases = json.loads(sys.argv[1])
out = {}
x = jnp.zeros(3)
for name, expr in fp_cases.items():
    fn = eval("lambda x: " + expr)
    out[name] = [repr(np.asarray(fn(x)).tolist()), repr(np.asarray(jax.jit(fn)(x)).tolist())]
for name, expr in scalar_cases.items():
    out[name] = [repr(np.asarray(eval(expr)).tolist())]
print(json.dumps(out))
"""


def _jaxlite_values_under_w_error():
    cases = json.dumps([FP_CASES, SCALAR_CASES])
    run = subprocess.run(
        [sys.executable, "-W", "error", "-c", _WARNINGS_SCRIPT, cases],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stderr == ""
    return json.loads(run.stdout)


def test_floating_point_edge_cases_under_w_error_give_jax_values():
    # Values compare as the repr of their lists: NaN equals NaN, -0.0 differs from 0.0.
    got = _jaxlite_values_under_w_error()
    jax = _jax()
    jnp, jlax = jax.numpy, jax.lax
    env = {"jnp": jnp, "np": np, "lax": jlax}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # JAX itself warns for some of them
        x = jnp.zeros(3)
        for name, expr in FP_CASES.items():
            fn = eval("lambda x: " + expr, env)
            expected = repr(np.asarray(fn(x)).tolist())
            assert got[name] == [expected, expected], name
        for name, expr in SCALAR_CASES.items():
            expected = repr(np.asarray(eval(expr, env)).tolist())
            assert got[name] == [expected], name


def test_import_installs_no_warnings_filter():
    code = textwrap.dedent(
        """
        import warnings
        import numpy, ml_dtypes
        before = list(warnings.filters)
        import jaxlite, jaxlite.numpy, jaxlite.scipy.special, jaxlite.nn
        print(warnings.filters == before)
        """
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "True"


def test_numpy_error_state_is_left_as_the_user_set_it():
    x = jlnp.zeros(2)
    f = jaxlite.jit(lambda x: jlnp.log(x) / x)
    with np.errstate(all="raise"):
        # jaxlite computes silently, as JAX ...
        assert np.isnan(np.asarray(x / x)).all()
        assert np.asarray(f(x)).tolist() == [-np.inf, -np.inf]
        # ... and the user's NumPy code still raises as asked.
        with pytest.raises(FloatingPointError):
            np.log(np.zeros(1))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.log(np.zeros(1))
    assert any(issubclass(w.category, RuntimeWarning) for w in caught)


# ----------------------------------------------------------------------------------------
# 3. The default integer is JAX's, never NumPy's C long


def _default_int_cases(m):
    jnp = m.numpy
    return {
        "arange(3)": lambda: jnp.arange(3),
        "arange(1, 7, 2)": lambda: jnp.arange(1, 7, 2),
        "array([1, 2])": lambda: jnp.array([1, 2]),
        "asarray((1, 2))": lambda: jnp.asarray((1, 2)),
        "array([[1], [2]])": lambda: jnp.array([[1], [2]]),
        "array([True, 2])": lambda: jnp.array([True, 2]),
        "zeros(2, int)": lambda: jnp.zeros(2, int),
        "ones(2, int)": lambda: jnp.ones(2, int),
        "full(2, 1, int)": lambda: jnp.full(2, 1, int),
        "iota(int, 3)": lambda: m.lax.iota(int, 3),
        "astype(int)": lambda: jnp.arange(3.0).astype(int),
        "eye(2, dtype=int)": lambda: jnp.eye(2, dtype=int),
        "repeat int64 counts": lambda: jnp.repeat(
            jnp.arange(3), np.array([1, 2, 3], np.int64)
        ),
        "repeat uint64 counts": lambda: jnp.repeat(
            jnp.arange(3), np.array([1, 0, 2], np.uint64)
        ),
    }


def _dtypes_and_values(m, x64):
    with m.enable_x64(x64):
        return {
            name: (str(out.dtype), np.asarray(out).tolist())
            for name, out in ((n, f()) for n, f in _default_int_cases(m).items())
        }


@pytest.mark.parametrize("x64", [False, True])
def test_default_integer_follows_x64(x64):
    expected = "int64" if x64 else "int32"
    got = _dtypes_and_values(jaxlite, x64)
    for name, (dtype, _) in got.items():
        assert dtype == expected, name
    with jaxlite.enable_x64(x64):
        assert dtypes.canonicalize_dtype(int) == np.dtype(expected)
        assert dtypes.coerce_to_array([1, 2]).dtype == np.dtype(expected)
        assert dtypes.coerce_to_array([[1], [2]]).dtype == np.dtype(expected)


@pytest.mark.parametrize("x64", [False, True])
def test_default_integer_matches_jax(x64):
    jax = _jax()
    assert _dtypes_and_values(jaxlite, x64) == _dtypes_and_values(jax, x64)


def test_python_types_as_dtypes_mean_64_bits_before_canonicalisation():
    # NumPy's np.dtype(int) is the C long (32 bits on some platforms); JAX's is int64.
    with jaxlite.enable_x64(True):
        assert dtypes.canonicalize_dtype(int) == np.int64
        assert dtypes.canonicalize_dtype(float) == np.float64
        assert dtypes.canonicalize_dtype(complex) == np.complex128
        assert jlnp.dtype(jlnp.zeros(1, int)) == np.int64
    assert dtypes.issubdtype(int, np.signedinteger)
    assert dtypes.itemsize_bits(int) == 64


# ----------------------------------------------------------------------------------------
# 4. sign(-0.0) and unpickling


SIGN_INPUTS = {
    "float32": np.array([-0.0, 0.0, -2.5, 3.0, np.nan, -np.inf], np.float32),
    "float16": np.array([-0.0, 0.0, -2.5, 3.0], np.float16),
    "complex64": np.array(
        [complex(-0.0, -0.0), complex(0.0, -0.0), complex(-0.0, 0.0), 3 + 4j],
        np.complex64,
    ),
    "int32": np.array([-3, 0, 5], np.int32),
}


def _sign_results(m):
    out = {}
    for name, value in SIGN_INPUTS.items():
        for mode, fn in [("eager", m.numpy.sign), ("jit", m.jit(m.numpy.sign))]:
            r = np.asarray(fn(m.numpy.asarray(value)))
            parts = [r.real, r.imag] if r.dtype.kind == "c" else [r]
            out[name, mode] = [
                (np.signbit(p).tolist(), np.nan_to_num(p).tolist()) for p in parts
            ]
    r = m.numpy.sign(-0.0)
    out["python"] = (str(r.dtype), r.weak_type, bool(np.signbit(np.asarray(r))))
    return out


def test_sign_keeps_the_sign_of_zero():
    assert np.signbit(np.asarray(jlnp.sign(-0.0)))
    assert np.signbit(np.asarray(jaxlite.jit(jlnp.sign)(jlnp.array([-0.0]))))[0]
    assert not np.signbit(np.asarray(jlnp.sign(0.0)))


def test_sign_matches_jax():
    jax = _jax()
    assert _sign_results(jaxlite) == _sign_results(jax)


def _pickled_under_x64(m):
    with m.enable_x64(True):
        return [
            pickle.dumps(m.numpy.arange(3.0)),
            pickle.dumps(m.numpy.asarray(3.0)),  # weak
            pickle.dumps(m.numpy.arange(3, dtype=m.numpy.int64)),
            pickle.dumps(m.numpy.arange(3, dtype=m.numpy.uint64)),
            pickle.dumps(m.numpy.arange(3, dtype=m.numpy.complex128)),
            pickle.dumps(m.numpy.arange(3, dtype=m.numpy.int8)),
        ]


def _unpickled(m, blobs, x64):
    with m.enable_x64(x64):
        arrays = [pickle.loads(b) for b in blobs]
        return [(str(a.dtype), a.weak_type, np.asarray(a).tolist()) for a in arrays]


@pytest.mark.parametrize("x64", [False, True])
def test_unpickling_canonicalises_the_dtype(x64):
    got = _unpickled(jaxlite, _pickled_under_x64(jaxlite), x64)
    if not x64:
        assert [g[0] for g in got] == [
            "float32",
            "float32",
            "int32",
            "uint32",
            "complex64",
            "int8",
        ]
        assert got[1][1] is True  # the weak type survives
    jax = _jax()
    assert got == _unpickled(jax, _pickled_under_x64(jax), x64)


# ----------------------------------------------------------------------------------------
# 5. Python scalars convert straight to the target dtype

CONVERSIONS = {
    "full u32 max": "jnp.full((2,), 0xFFFFFFFF, jnp.uint32)",
    "full u8 300": "jnp.full((2,), 300, jnp.uint8)",
    "full u8 -1": "jnp.full((2,), -1, jnp.uint8)",
    "full i32 2**31": "jnp.full((2,), 2**31, jnp.int32)",
    "full f32 2**100": "jnp.full((2,), 2**100, jnp.float32)",
    "full f32 2**200": "jnp.full((2,), 2**200, jnp.float32)",
    "full f32 2**2000": "jnp.full((2,), 2**2000, jnp.float32)",
    "full c64 2**100": "jnp.full((2,), 2**100, jnp.complex64)",
    "full i32 1e10": "jnp.full((2,), 1e10, jnp.int32)",
    "full i32 nan": "jnp.full((2,), float('nan'), jnp.int32)",
    "full bool 5": "jnp.full((2,), 5, bool)",
    "full default 2**40": "jnp.full((2,), 2**40)",
    "full_like u32 max": "jnp.full_like(jnp.zeros(2, jnp.uint32), 0xFFFFFFFF)",
    "full_like u8 300": "jnp.full_like(jnp.zeros(2, jnp.uint8), 300)",
    "full_like f32 2**100": "jnp.full_like(jnp.zeros(2), 2**100)",
    "full_like u8 2**100": "jnp.full_like(jnp.zeros(2, jnp.uint8), 2**100)",
    "full_like i32 nan": "jnp.full_like(jnp.zeros(2, jnp.int32), float('nan'))",
    "lax.full u32": "lax.full((2,), 0xFFFFFFFF, jnp.uint32)",
    "convert 2**100 f32": "lax.convert_element_type(2**100, jnp.float32)",
    "convert 2**100 f64": "lax.convert_element_type(2**100, jnp.float64)",
    "convert 2**100 i32": "lax.convert_element_type(2**100, jnp.int32)",
    "convert 2**100 c64": "lax.convert_element_type(2**100, jnp.complex64)",
    "convert 2**100 bool": "lax.convert_element_type(2**100, jnp.bool_)",
    "convert 2**2000 f32": "lax.convert_element_type(2**2000, jnp.float32)",
    "convert u32 max": "lax.convert_element_type(0xFFFFFFFF, jnp.uint32)",
    "convert 2**40 u32": "lax.convert_element_type(2**40, jnp.uint32)",
    "convert 2**64-1 u32": "lax.convert_element_type(2**64 - 1, jnp.uint32)",
    "convert 300 u8": "lax.convert_element_type(300, jnp.uint8)",
    "convert -1 u32": "lax.convert_element_type(-1, jnp.uint32)",
    "convert 2**31 i32": "lax.convert_element_type(2**31, jnp.int32)",
    "convert 1e300 f32": "lax.convert_element_type(1e300, jnp.float32)",
    "convert 1e10 i32": "lax.convert_element_type(1e10, jnp.int32)",
    "convert -1.5 u32": "lax.convert_element_type(-1.5, jnp.uint32)",
    "convert 300.0 u8": "lax.convert_element_type(300.0, jnp.uint8)",
    "convert nan i32": "lax.convert_element_type(float('nan'), jnp.int32)",
    "convert True f32": "lax.convert_element_type(True, jnp.float32)",
    # One rounding, float64 -> float16 (through float32 it would give 2048).
    "convert f16 rounding": "lax.convert_element_type(2049.0 + 2**-20, jnp.float16)",
    "jit full u32": "jax.jit(lambda: jnp.full((2,), 0xFFFFFFFF, jnp.uint32))()",
    "jit convert 2**100": "jax.jit(lambda: lax.convert_element_type(2**100, jnp.float32))()",
}


def _conversion_results(m, x64):
    env = {"jax": m, "jnp": m.numpy, "lax": m.lax}
    out = {}
    with warnings.catch_warnings(), m.enable_x64(x64):
        warnings.simplefilter("ignore")  # JAX warns for some of its own conversions
        for name, expr in CONVERSIONS.items():
            try:
                r = eval(expr, env)
            except (OverflowError, TypeError, ValueError) as e:
                out[name] = type(e).__name__
                continue
            out[name] = (str(r.dtype), r.weak_type, np.asarray(r).tolist())
    return out


@pytest.mark.parametrize("x64", [False, True])
def test_python_scalars_convert_straight_to_the_target_dtype(x64):
    got = _conversion_results(jaxlite, x64)
    assert got["full u32 max"] == ("uint32", False, [4294967295] * 2)
    assert got["full_like u32 max"] == ("uint32", False, [4294967295] * 2)
    assert got["convert 2**100 f32"] == ("float32", False, float(np.float32(2**100)))
    assert got["convert 2**100 i32"] == "OverflowError"
    assert got["convert f16 rounding"][2] == 2050.0


@pytest.mark.parametrize("x64", [False, True])
def test_python_scalar_conversions_match_jax(x64):
    jax = _jax()
    assert _conversion_results(jaxlite, x64) == _conversion_results(jax, x64)


# A Python int operand of a jnp ufunc is parsed as the default integer type first (JAX's
# ufuncs are jitted): one that does not fit raises OverflowError, whatever the other
# operand's dtype, where it used to wrap silently.
_INT_OPERANDS = {
    "i32 + 2**40": "jnp.zeros(2, jnp.int32) + 2**40",
    "f32 * 2**40": "jnp.zeros(2) * 2**40",
    "2**40 + f32": "2**40 + jnp.zeros(2)",
    "i32 + 2**31": "jnp.zeros(2, jnp.int32) + 2**31",
    "u32 + 0xFFFFFFFF": "jnp.zeros(2, jnp.uint32) + 0xFFFFFFFF",
    "u8 + 300": "jnp.zeros(2, jnp.uint8) + 300",
    "i32 - -2**31": "jnp.zeros(2, jnp.int32) - (-(2**31))",
    "maximum": "jnp.maximum(jnp.zeros(2), 2**40)",
    "where": "jnp.where(True, jnp.zeros(2), 2**40)",
    "f32 * 2**63": "jnp.zeros(2) * 2**63",
}


def _int_operand_results(m, x64):
    out = {}
    with warnings.catch_warnings(), m.enable_x64(x64):
        warnings.simplefilter("ignore")
        for name, expr in _INT_OPERANDS.items():
            try:
                r = eval(expr, {"jnp": m.numpy})
            except OverflowError:
                out[name] = "OverflowError"
            else:
                out[name] = (str(r.dtype), np.asarray(r).tolist())
    return out


@pytest.mark.parametrize("x64", [False, True])
def test_python_int_operands_overflow_as_in_jax(x64):
    got = _int_operand_results(jaxlite, x64)
    assert got["f32 * 2**40"] == ("OverflowError" if not x64 else ("float64", [0, 0]))
    assert got["u8 + 300"] == ("uint8", [44, 44])
    assert got == _int_operand_results(_jax(), x64)
