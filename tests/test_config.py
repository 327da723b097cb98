"""Tests for jaxlite.config: options, environment variables, context managers."""

import importlib
import os
import subprocess
import sys

import pytest

from jaxlite.config import Config, bool_env, config, disable_jit, enable_x64

# `jaxlite.config` is the Config object once the package re-exports it, as in JAX;
# the module itself is reached through importlib.
config_module = importlib.import_module("jaxlite.config")


@pytest.fixture(autouse=True)
def restore_config():
    saved = config.values
    yield
    for name, value in saved.items():
        if config.read(name) != value:
            config.update(name, value)


def test_defaults_match_jax():
    fresh = Config()
    assert fresh.jax_threefry_partitionable is True
    assert fresh.jax_numpy_rank_promotion == "allow"
    assert fresh.jax_default_matmul_precision is None
    assert fresh.jax_platforms is None


@pytest.mark.parametrize("text", ["1", "true", "True", "TRUE", "yes", "on", " t "])
def test_bool_env_true(monkeypatch, text):
    monkeypatch.setenv("JAXLITE_TEST_FLAG", text)
    assert bool_env("JAXLITE_TEST_FLAG", False) is True


@pytest.mark.parametrize("text", ["0", "false", "False", "", "no", "off"])
def test_bool_env_false(monkeypatch, text):
    monkeypatch.setenv("JAXLITE_TEST_FLAG", text)
    assert bool_env("JAXLITE_TEST_FLAG", True) is False


def test_bool_env_unset_uses_default(monkeypatch):
    monkeypatch.delenv("JAXLITE_TEST_FLAG", raising=False)
    assert bool_env("JAXLITE_TEST_FLAG", True) is True
    assert bool_env("JAXLITE_TEST_FLAG", False) is False


def test_bool_env_rejects_garbage(monkeypatch):
    monkeypatch.setenv("JAXLITE_TEST_FLAG", "bogus")
    with pytest.raises(ValueError, match="invalid truth value 'bogus'"):
        bool_env("JAXLITE_TEST_FLAG", False)


@pytest.mark.parametrize(
    "env_var, option",
    [
        ("JAX_ENABLE_X64", "jax_enable_x64"),
        ("JAX_DEBUG_NANS", "jax_debug_nans"),
        ("JAX_DEBUG_INFS", "jax_debug_infs"),
        ("JAX_DISABLE_JIT", "jax_disable_jit"),
    ],
)
def test_environment_sets_initial_values(monkeypatch, env_var, option):
    monkeypatch.setenv(env_var, "1")
    assert getattr(Config(), option) is True
    monkeypatch.setenv(env_var, "false")
    assert getattr(Config(), option) is False


def test_environment_string_option(monkeypatch):
    monkeypatch.setenv("JAX_NUMPY_RANK_PROMOTION", "raise")
    assert Config().jax_numpy_rank_promotion == "raise"
    monkeypatch.setenv("JAX_NUMPY_RANK_PROMOTION", "sometimes")
    with pytest.raises(ValueError, match="allow"):
        Config()


def test_environment_reaches_the_singleton():
    code = "from jaxlite.config import config; print(config.x64_enabled)"
    env = dict(os.environ, JAX_ENABLE_X64="True")
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"


def test_update_and_read():
    config.update("jax_enable_x64", True)
    assert config.jax_enable_x64 is True
    assert config.x64_enabled is True
    assert config.read("jax_enable_x64") is True
    config.update("jax_enable_x64", False)
    assert config.jax_enable_x64 is False
    assert config.x64_enabled is False


def test_bool_options_coerce_like_jax():
    config.update("jax_debug_nans", 1)
    assert config.jax_debug_nans is True
    assert config.debug_nans is True
    config.update("jax_debug_nans", None)
    assert config.jax_debug_nans is False
    assert config.debug_nans is False


def test_plain_attributes_follow_updates():
    config.update("jax_debug_infs", True)
    config.update("jax_disable_jit", True)
    assert config.debug_infs is True
    assert config.disable_jit is True
    config.update("jax_debug_infs", False)
    config.update("jax_disable_jit", False)
    assert config.debug_infs is False
    assert config.disable_jit is False


def test_trace_context_tracks_every_tracing_option():
    before = config.trace_context
    hash(before)
    changes = [
        ("jax_enable_x64", not config.jax_enable_x64),
        ("jax_debug_nans", not config.jax_debug_nans),
        ("jax_debug_infs", not config.jax_debug_infs),
        ("jax_disable_jit", not config.jax_disable_jit),
        ("jax_numpy_rank_promotion", "raise"),
        ("jax_default_matmul_precision", "highest"),
        # As in JAX: jax.random's counters depend on it (include_in_trace_context).
        ("jax_threefry_partitionable", not config.read("jax_threefry_partitionable")),
    ]
    seen = {before}
    for name, value in changes:
        config.update(name, value)
        assert config.trace_context not in seen, name
        seen.add(config.trace_context)


def test_trace_context_ignores_non_tracing_options():
    before = config.trace_context
    config.update("jax_platforms", "cpu")
    assert config.trace_context == before


def test_unknown_option_in_update():
    with pytest.raises(AttributeError, match="Unrecognized config option") as info:
        config.update("jax_enable_x46", True)
    assert "jax_enable_x64" in str(info.value)


def test_unknown_option_in_getattr():
    with pytest.raises(AttributeError, match="jax_no_such_thing") as info:
        config.jax_no_such_thing
    assert "jax_debug_nans" in str(info.value)


def test_enum_options_are_validated():
    with pytest.raises(ValueError, match="allow"):
        config.update("jax_numpy_rank_promotion", "bogus")
    with pytest.raises(ValueError, match="highest"):
        config.update("jax_default_matmul_precision", "bogus")
    with pytest.raises(ValueError, match="string"):
        config.update("jax_platforms", 3)
    assert config.jax_numpy_rank_promotion == "allow"


def test_platform_options_are_stored():
    config.update("jax_platforms", "cpu")
    config.update("jax_platform_name", "cpu")
    assert config.jax_platforms == "cpu"
    assert config.jax_platform_name == "cpu"


def test_absl_hooks_are_harmless():
    before = config.values
    assert config.config_with_absl() is None
    assert config.parse_flags_with_absl() is None
    assert config.values == before


def test_listeners_run_after_update():
    calls = []

    def listener(name, value):
        calls.append((name, value, config.read(name)))

    config.add_listener(listener)
    try:
        config.update("jax_debug_nans", True)
    finally:
        config.remove_listener(listener)
    config.update("jax_debug_nans", False)
    assert calls == [("jax_debug_nans", True, True)]


def test_failed_update_does_not_notify():
    calls = []

    def listener(name, value):
        calls.append(name)

    config.add_listener(listener)
    try:
        with pytest.raises(ValueError):
            config.update("jax_numpy_rank_promotion", "bogus")
    finally:
        config.remove_listener(listener)
    assert calls == []


@pytest.mark.parametrize("start", [False, True])
def test_enable_x64_restores(start):
    config.update("jax_enable_x64", start)
    with enable_x64():
        assert config.x64_enabled is True
    assert config.x64_enabled is start
    with enable_x64(False):
        assert config.x64_enabled is False
    assert config.x64_enabled is start


def test_enable_x64_restores_after_exception():
    config.update("jax_enable_x64", False)
    with pytest.raises(RuntimeError):
        with enable_x64(True):
            raise RuntimeError("boom")
    assert config.x64_enabled is False


def test_disable_jit_context_manager():
    assert config.disable_jit is False
    with disable_jit():
        assert config.disable_jit is True
        assert config.jax_disable_jit is True
        with disable_jit(False):
            assert config.disable_jit is False
        assert config.disable_jit is True
    assert config.disable_jit is False


def test_module_exports():
    assert config_module.config is config
    assert callable(config_module.enable_x64)
    assert callable(config_module.disable_jit)


def test_options_agree_with_jax():
    jax = pytest.importorskip("jax")
    for name in [
        "jax_enable_x64",
        "jax_debug_nans",
        "jax_debug_infs",
        "jax_disable_jit",
        "jax_threefry_partitionable",
        "jax_numpy_rank_promotion",
        "jax_default_matmul_precision",
        "jax_platforms",
    ]:
        assert getattr(Config(), name) == getattr(jax.config, name), name
