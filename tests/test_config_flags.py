"""The configuration options as users meet them: `config.update` and attribute reads,
the top-level context managers (`disable_jit`, `enable_x64`, `debug_nans`,
`debug_infs`), JAX_* environment variables read at import, unknown names, and what
`jax_disable_jit` does to `jit` and to control flow.

(tests/test_config.py tests the Config object itself.)
"""

import os
import subprocess
import sys

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.config import config
from jaxlite.core import Tracer

BOOL_OPTIONS = ("jax_enable_x64", "jax_debug_nans", "jax_debug_infs", "jax_disable_jit")


@pytest.fixture(autouse=True)
def restore_config():
    saved = config.values
    yield
    for name, value in saved.items():
        if config.read(name) != value:
            config.update(name, value)


def run_fresh(code, **env_vars):
    """Run `code` in a fresh process with the same jaxlite and only the given JAX_*
    variables; returns its stdout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAX_")}
    env.update(env_vars)
    root = os.path.dirname(os.path.dirname(os.path.abspath(jax.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


# ----------------------------------------------------------------------------------------
# update, attribute reads, combined hot-path attributes


@pytest.mark.parametrize("name", BOOL_OPTIONS)
def test_update_and_attribute_read(name):
    assert getattr(jax.config, name) is False
    jax.config.update(name, True)
    assert getattr(jax.config, name) is True
    assert jax.config.read(name) is True
    jax.config.update(name, False)
    assert getattr(jax.config, name) is False


@pytest.mark.parametrize(
    "updates, debug_checks, jit_slow_path",
    [
        ({}, False, False),
        ({"jax_debug_nans": True}, True, True),
        ({"jax_debug_infs": True}, True, True),
        ({"jax_debug_nans": True, "jax_debug_infs": True}, True, True),
        ({"jax_disable_jit": True}, False, True),
        ({"jax_enable_x64": True}, False, False),
    ],
)
def test_combined_hot_path_flags(updates, debug_checks, jit_slow_path):
    for name, value in updates.items():
        config.update(name, value)
    assert config.debug_checks is debug_checks
    assert config.jit_slow_path is jit_slow_path


# ----------------------------------------------------------------------------------------
# Unknown names


def test_unknown_name_in_update_lists_known_options():
    with pytest.raises(AttributeError, match="Unrecognized config option") as info:
        jax.config.update("jax_debug_nan", True)
    for name in BOOL_OPTIONS:
        assert name in str(info.value)


def test_unknown_name_in_attribute_read_and_read():
    with pytest.raises(AttributeError, match="jax_disable_jt") as info:
        jax.config.jax_disable_jt
    assert "jax_disable_jit" in str(info.value)
    with pytest.raises(AttributeError, match="Known options are"):
        jax.config.read("jax_bogus")
    assert not hasattr(jax.config, "jax_bogus")


def test_unknown_name_is_an_attribute_error_in_jax_too():
    real_jax = pytest.importorskip("jax")
    with pytest.raises(AttributeError, match="Unrecognized config option"):
        real_jax.config.update("jax_bogus", True)
    with pytest.raises(AttributeError):
        real_jax.config.jax_bogus


# ----------------------------------------------------------------------------------------
# Top-level context managers


@pytest.mark.parametrize(
    "state, name",
    [
        (jax.debug_nans, "jax_debug_nans"),
        (jax.debug_infs, "jax_debug_infs"),
        (jax.enable_x64, "jax_enable_x64"),
    ],
)
def test_state_context_managers(state, name):
    assert state.value is False
    with state(True):
        assert state.value is True
        assert config.read(name) is True
        with state(False):
            assert config.read(name) is False
        assert config.read(name) is True
    assert state.value is False
    with state():  # no argument: on
        assert config.read(name) is True
    with pytest.raises(RuntimeError):
        with state(True):
            raise RuntimeError("boom")
    assert config.read(name) is False


def test_top_level_names_exist_in_jax():
    real_jax = pytest.importorskip("jax")
    for name in ("debug_nans", "debug_infs", "enable_x64", "disable_jit"):
        assert name in jax.__all__
        assert hasattr(real_jax, name), name
    assert jax.debug_nans.value == real_jax.debug_nans.value is False


def test_debug_nans_module_is_reachable_and_names_stay_context_managers():
    import importlib

    module = importlib.import_module("jaxlite.debug_nans")
    assert module.__name__ == "jaxlite.debug_nans"
    assert jax.debug_nans is module.debug_nans  # the State, not the module
    assert callable(jax.debug_nans)


# ----------------------------------------------------------------------------------------
# jax_disable_jit


def test_disable_jit_runs_the_python_function_every_call():
    seen = []

    @jax.jit
    def f(x):
        seen.append(type(x))
        return x * 2

    x = jnp.arange(3.0)
    f(x)
    f(x)
    assert len(seen) == 1 and issubclass(seen[0], Tracer)  # traced once
    with jax.disable_jit():
        np.testing.assert_array_equal(f(x), [0.0, 2.0, 4.0])
        np.testing.assert_array_equal(f(x), [0.0, 2.0, 4.0])
    assert seen[1:] == [jax.Array, jax.Array]  # concrete values, no tracing
    f(x)
    assert len(seen) == 3  # back to the compiled function


def test_disable_jit_through_config_update_allows_python_control_flow():
    @jax.jit
    def f(x):
        if x > 0:  # a concretization error under jit
            return x
        return -x

    config.update("jax_disable_jit", True)
    assert f(jnp.float32(-2.0)) == 2.0
    config.update("jax_disable_jit", False)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        f(jnp.float32(-2.0))


def test_disable_jit_runs_control_flow_bodies_eagerly_as_jax():
    # JAX 0.10.2 runs cond, scan, while_loop and fori_loop bodies as Python under
    # disable_jit: the bodies see concrete values.
    seen = []

    def record(tag):
        def fn(*args):
            seen.append((tag, any(isinstance(a, Tracer) for a in args)))
            return args[-1] if tag != "scan" else (args[0] + args[1], args[0])

        return fn

    with jax.disable_jit():
        lax.cond(True, record("cond"), record("cond"), 1.0)
        lax.scan(record("scan"), 0.0, jnp.arange(3.0))
        lax.fori_loop(0, 2, record("fori"), 0.0)
        lax.while_loop(lambda c: c < 2, lambda c: c + 1, 0)
    assert seen and not any(traced for _, traced in seen)
    assert [tag for tag, _ in seen].count("scan") == 3
    assert [tag for tag, _ in seen].count("cond") == 1  # only the branch taken


def test_disable_jit_matches_jax_for_control_flow():
    real_jax = pytest.importorskip("jax")

    def program(module):
        calls = []

        def body(c, x):
            calls.append(type(c).__name__)
            return c + x, c

        with module.disable_jit():
            module.lax.scan(body, 0.0, module.numpy.arange(3.0))
        return len(calls)

    assert program(jax) == program(real_jax) == 3


# ----------------------------------------------------------------------------------------
# JAX_* environment variables, read at import


@pytest.mark.parametrize(
    "env_var, option",
    [
        ("JAX_ENABLE_X64", "jax_enable_x64"),
        ("JAX_DEBUG_NANS", "jax_debug_nans"),
        ("JAX_DEBUG_INFS", "jax_debug_infs"),
        ("JAX_DISABLE_JIT", "jax_disable_jit"),
    ],
)
@pytest.mark.parametrize("text, value", [("True", True), ("1", True), ("0", False)])
def test_environment_variable_read_at_import(env_var, option, text, value):
    out = run_fresh(
        f"import jaxlite as jax\nprint(jax.config.{option})", **{env_var: text}
    )
    assert out.strip() == str(value)


def test_environment_variables_take_effect():
    out = run_fresh(
        """
import jaxlite as jax
import jaxlite.numpy as jnp

@jax.jit
def f(x):
    print("running", type(x).__name__)
    return x

f(1.0)
f(1.0)
print(jnp.zeros(2).dtype)
try:
    jnp.divide(0.0, 0.0)
except FloatingPointError as e:
    print(e)
""",
        JAX_DISABLE_JIT="true",
        JAX_ENABLE_X64="1",
        JAX_DEBUG_NANS="yes",
    )
    assert out.splitlines() == [
        "running float",
        "running float",
        "float64",
        "invalid value (nan) encountered in div",
    ]


def test_update_after_import_overrides_the_environment():
    out = run_fresh(
        "import jaxlite as jax\njax.config.update('jax_debug_nans', False)\n"
        "import jaxlite.numpy as jnp\nprint(jnp.divide(0.0, 0.0))",
        JAX_DEBUG_NANS="1",
    )
    assert out.strip() == "nan"


# ----------------------------------------------------------------------------------------
# The seed's double-precision examples (002), which need jaxlite.random


def test_seed_float64_requested_without_x64():
    from jaxlite import random

    with pytest.warns(UserWarning, match="Explicitly requested dtype float64 is not"):
        x = random.uniform(random.key(0), (1000,), dtype=jnp.float64)
    assert repr(x.dtype) == "dtype('float32')"


def test_seed_confirm_x64_is_enabled():
    out = run_fresh(
        """
import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import random

jax.config.update("jax_enable_x64", True)

x = random.uniform(random.key(0), (1000,), dtype=jnp.float64)
print(repr(x.dtype))  # --> dtype('float64')
"""
    )
    assert out.strip() == "dtype('float64')"


def test_rank_promotion_option_raises_warns_or_allows():
    x, y = jnp.ones(3), jnp.ones((2, 3))
    with jax.numpy_rank_promotion("raise"):
        with pytest.raises(ValueError, match="jax_numpy_rank_promotion='raise'"):
            x + y
        with pytest.raises(ValueError, match=r"for maximum on shapes \(3,\) \(2, 3\)"):
            jnp.maximum(x, y)
        # scalars and equal ranks are not rank promotion
        np.testing.assert_array_equal(x + 1.0, np.full(3, 2.0))
        np.testing.assert_array_equal(y + jnp.ones((1, 3)), np.full((2, 3), 2.0))
    with jax.numpy_rank_promotion("warn"):
        with pytest.warns(UserWarning, match="Following NumPy automatic rank") as rec:
            x * y
    assert rec[0].filename == __file__
    np.testing.assert_array_equal(x - y, np.zeros((2, 3)))


STRICT_CASES = [
    # (function of (jax, jnp), expected dtype or None for TypePromotionError)
    (lambda jax, jnp: jnp.ones(3, "int32") + jnp.ones(3), None),
    (lambda jax, jnp: jnp.ones(3) + 1, "float32"),
    (lambda jax, jnp: jnp.ones(3, bool) + 1, None),
    (lambda jax, jnp: jnp.ones(3, "uint8") + 1, "uint8"),
    (lambda jax, jnp: jnp.ones(3, "complex64") + 1.0, "complex64"),
    (lambda jax, jnp: jnp.ones(3, "complex64") + jnp.ones(3), None),
    (lambda jax, jnp: jnp.ones(3) + 1j, None),
    (lambda jax, jnp: jnp.ones(3, "int32") + 1.5, None),
    (lambda jax, jnp: jnp.ones(3, "bfloat16") + 1.0, "bfloat16"),
    (lambda jax, jnp: jnp.asarray(1) + 1.0, "float32"),
    (lambda jax, jnp: jnp.ones(3, "int8") + jnp.asarray(1.0), None),
    (lambda jax, jnp: jnp.concatenate([jnp.ones(3), jnp.ones(3, "int32")]), None),
    (lambda jax, jnp: jnp.promote_types("int32", "float32"), None),
    (lambda jax, jnp: jax.jit(lambda x: x + 1.5)(jnp.ones(3, "int32")), None),
]


def _strict_outcome(jax_mod, jnp_mod, fn):
    with jax_mod.numpy_dtype_promotion("strict"):
        try:
            out = fn(jax_mod, jnp_mod)
        except ValueError as e:
            assert "jax_numpy_dtype_promotion=strict" in str(e)
            return type(e).__name__
    return np.dtype(getattr(out, "dtype", out)).name


@pytest.mark.parametrize("i", range(len(STRICT_CASES)))
def test_strict_dtype_promotion(i):
    fn, want = STRICT_CASES[i]
    got = _strict_outcome(jax, jnp, fn)
    assert got == (want or "TypePromotionError")
    # standard promotion again outside the block (the caches are per mode)
    assert fn(jax, jnp) is not None
    assert jax.config.read("jax_numpy_dtype_promotion") == "standard"
    assert issubclass(jax.dtypes.TypePromotionError, ValueError)
    real = pytest.importorskip("jax")
    import jax.numpy as real_jnp

    assert _strict_outcome(real, real_jnp, fn) == got


def test_dtype_promotion_option_rejects_unknown_values():
    with pytest.raises(ValueError, match="not a valid NumpyDtypePromotion"):
        jax.config.update("jax_numpy_dtype_promotion", "bad")
