"""The top-level API around the runtime: devices, processes, shardings, arrays from
callbacks, caches, environment info, version, typeof, named_call/named_scope,
ensure_compile_time_eval, configuration context managers, pmap, error classes,
debug.breakpoint and tree_util.default_registry. Checked against real JAX where it is
installed."""

import io
import warnings

import numpy as np
import pytest
from tests.testing import check_close

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import debugger, errors


def test_top_level_names_of_jax_exist():
    real = pytest.importorskip("jax")
    wanted = [
        "custom_gradient", "closure_convert", "named_call", "named_scope",
        "ensure_compile_time_eval", "checkpoint_policies", "typeof", "float0",
        "custom_batching", "custom_derivatives", "clear_caches", "default_device",
        "default_matmul_precision", "numpy_rank_promotion", "numpy_dtype_promotion",
        "live_arrays", "print_environment_info", "process_index", "process_count",
        "host_id", "host_count", "process_indices", "make_array_from_callback",
        "pmap", "version", "Device", "sharding", "NamedSharding", "P", "make_mesh",
        "make_array_from_single_device_arrays", "make_array_from_process_local_data",
    ]  # fmt: skip
    for name in wanted:
        assert hasattr(real, name), name
        assert hasattr(jax, name), name
    for name in ("JaxRuntimeError", "JaxprTypeError", "InconclusiveDimensionOperation"):
        assert hasattr(errors, name), name
    assert hasattr(jax.tree_util, "default_registry")
    assert hasattr(jax.debug, "breakpoint")
    assert hasattr(jax.ad_checkpoint, "checkpoint_name")


def test_error_classes():
    assert issubclass(errors.JaxRuntimeError, RuntimeError)
    assert issubclass(errors.JaxprTypeError, TypeError)
    from jaxlite.core import JaxprTypeError

    assert errors.JaxprTypeError is JaxprTypeError
    assert issubclass(errors.InconclusiveDimensionOperation, Exception)
    real = pytest.importorskip("jax")
    for name in ("JaxRuntimeError", "JaxprTypeError", "InconclusiveDimensionOperation"):
        assert getattr(errors, name).__mro__[1] is getattr(real.errors, name).__mro__[1]


# Devices, processes, shardings


def test_devices_and_processes():
    (dev,) = jax.devices()
    assert isinstance(dev, jax.Device)
    assert (repr(dev), str(dev)) == ("CpuDevice(id=0)", "cpu:0")
    assert (dev.id, dev.platform, dev.process_index) == (0, "cpu", 0)
    assert jax.process_index() == 0 and jax.process_count() == 1
    assert jax.process_indices() == [0]
    with pytest.warns(UserWarning, match="renamed to jax.process_count"):
        assert jax.host_count() == 1
    with pytest.warns(UserWarning, match="renamed to jax.process_index"):
        assert jax.host_id() == 0


def test_devices_match_jax():
    real = pytest.importorskip("jax")
    (theirs,) = real.devices()
    (ours,) = jax.devices()
    assert (repr(ours), str(ours)) == (repr(theirs), str(theirs))
    assert jax.process_indices() == real.process_indices()


def test_sharding_objects_run_with_device_put():
    mesh = jax.make_mesh((1,), ("x",))
    assert mesh.shape == {"x": 1} and mesh.axis_names == ("x",) and mesh.size == 1
    named = jax.NamedSharding(mesh, jax.P("x"))
    assert named.spec == jax.P("x") and named.num_devices == 1
    assert named.device_set == set(jax.devices())
    single = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    assert single.device_set == {jax.devices()[0]} and single.is_fully_replicated
    for sharding in (named, single):
        check_close(jax.device_put(np.arange(3.0), sharding), np.arange(3.0))
    assert jax.P is jax.sharding.PartitionSpec
    assert repr(jax.P("x", None)) == "P('x', None)" and len(jax.P("x", None)) == 2
    with pytest.raises(ValueError, match="not found in mesh"):
        jax.NamedSharding(mesh, jax.P("y"))
    with pytest.raises(ValueError, match="product of mesh_shape"):
        jax.make_mesh((2,), ("x",))
    mesh2 = jax.sharding.Mesh(np.array(jax.devices()).reshape(1, 1), ("a", "b"))
    assert mesh2.shape == {"a": 1, "b": 1}
    real = pytest.importorskip("jax")
    assert repr(jax.P("x", ("y", "z"), None)) == repr(real.P("x", ("y", "z"), None))
    assert repr(single) == repr(real.sharding.SingleDeviceSharding(real.devices()[0]))


def test_make_array_from_callback():
    indices = []

    def data(index):
        indices.append(index)
        return np.arange(6.0).reshape(2, 3)[index]

    sharding = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    out = jax.make_array_from_callback((2, 3), sharding, data)
    check_close(out, np.arange(6.0, dtype=np.float32).reshape(2, 3))
    assert indices == [(slice(None), slice(None))]
    single = jax.make_array_from_single_device_arrays((3,), sharding, [jnp.ones(3)])
    check_close(single, np.ones(3))
    local = jax.make_array_from_process_local_data(sharding, np.ones(2))
    check_close(local, np.ones(2))
    with pytest.raises(ValueError, match="expected"):
        jax.make_array_from_callback((3,), sharding, lambda i: np.ones(2))


# Caches, live arrays, environment, version, float0


def test_clear_caches_retraces():
    traces = []

    @jax.jit
    def f(x):
        traces.append(1)
        return x * 2

    f(jnp.ones(2))
    f(jnp.ones(2))
    assert len(traces) == 1
    jax.clear_caches()
    check_close(f(jnp.ones(2)), np.full(2, 2.0))
    assert len(traces) == 2


def test_live_arrays():
    x = jnp.arange(5.0) * 3
    assert any(a is x for a in jax.live_arrays())


def test_print_environment_info(capsys):
    text = jax.print_environment_info(return_string=True)
    assert "jaxlite" in text and "numpy" in text and "python" in text
    assert jax.print_environment_info() is None
    assert "numpy" in capsys.readouterr().out


def test_version_and_float0():
    assert jax.version.__version__ == jax.__version__
    assert jax.__version_info__ == tuple(int(p) for p in jax.__version__.split("."))
    assert jax.float0 is jax.dtypes.float0
    real = pytest.importorskip("jax")
    assert np.dtype(jax.float0) == np.dtype(real.float0)


# typeof, named_call, named_scope, ensure_compile_time_eval


def test_typeof_matches_jax():
    assert repr(jax.typeof(jnp.ones(3))) == "ShapedArray(float32[3])"
    assert repr(jax.typeof(1.0)) == "ShapedArray(float32[], weak_type=True)"
    real = pytest.importorskip("jax")
    for x in (np.ones((2, 3), np.int32), 1.0, True):
        assert repr(jax.typeof(x)) == repr(real.typeof(x))


def test_named_call_and_named_scope():
    f = jax.named_call(lambda x: x * 2, name="double")
    assert f.__name__ == "double"
    check_close(jax.jit(f)(3.0), 6.0)
    with jax.named_scope("block"):
        check_close(jax.grad(lambda x: x**2)(3.0), 6.0)
    with pytest.raises(TypeError, match="named_scope name argument must be a string"):
        with jax.named_scope(3):
            pass


def test_ensure_compile_time_eval():
    seen = {}

    @jax.jit
    def f(x):
        with jax.ensure_compile_time_eval():
            y = jnp.sin(3.0)
            seen["y"] = type(y).__name__
            z = y + x  # traced operands are still staged
            seen["z"] = type(z).__name__
        return z

    check_close(f(1.0), np.sin(3.0) + 1, rtol=1e-6)
    assert seen == {"y": "Array", "z": "JaxprTracer"}
    with jax.ensure_compile_time_eval():
        check_close(jnp.cos(0.0), 1.0)


# Configuration context managers


def test_config_context_managers():
    with jax.default_matmul_precision("highest"):
        assert jax.config.jax_default_matmul_precision == "highest"
    assert jax.config.jax_default_matmul_precision is None
    with jax.numpy_rank_promotion("raise"):
        assert jax.config.jax_numpy_rank_promotion == "raise"
    assert jax.config.jax_numpy_rank_promotion == "allow"
    with pytest.raises(ValueError, match="must be one of"):
        with jax.numpy_rank_promotion("never"):
            pass
    with jax.numpy_dtype_promotion("strict"), jax.default_device(jax.devices()[0]):
        check_close(jnp.ones(2) + 1, np.full(2, 2.0))
    with pytest.raises(ValueError, match="not a valid NumpyDtypePromotion"):
        with jax.numpy_dtype_promotion("loose"):
            pass
    with jax.transfer_guard("disallow"), jax.log_compiles(), jax.checking_leaks():
        check_close(jnp.ones(1), np.ones(1))


# pmap


def test_pmap_computes_like_vmap():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    check_close(jax.pmap(lambda v: v * 2)(x), x * 2)
    traces = []

    def f(v, n):
        traces.append(1)
        return v**n

    g = jax.pmap(f, static_broadcasted_argnums=1)
    check_close(g(x, 2), x**2)
    check_close(g(x + 1, 2), (x + 1) ** 2)
    assert len(traces) == 1  # compiled once for the signature, as in JAX
    check_close(jax.pmap(lambda a, b: a + b, in_axes=(0, None))(x, 1.0), x + 1)
    check_close(jax.pmap(jnp.sum)(x), x.sum(1))


def test_pmap_matches_jax_on_one_device():
    real = pytest.importorskip("jax")
    x = np.arange(3.0, dtype=np.float32).reshape(1, 3)
    check_close(
        jax.pmap(jnp.sin)(x), np.asarray(real.pmap(real.numpy.sin)(x)), rtol=1e-6
    )


# debug.breakpoint


class _ScriptedPdb:
    """Stands in for pdb.Pdb: runs the debugger session with scripted commands."""

    commands = "p x\nc\n"
    output = None

    def __init__(self):
        import pdb

        out = io.StringIO()
        _ScriptedPdb.output = out
        self.pdb = pdb.Pdb(stdin=io.StringIO(self.commands), stdout=out)
        self.pdb.use_rawinput = False

    def run(self, statement, globs, locs):
        _ScriptedPdb.locals = dict(locs)
        return self.pdb.run(statement, globs, locs)


@pytest.fixture
def scripted_debugger(monkeypatch):
    monkeypatch.setattr(debugger, "debugger_factory", _ScriptedPdb)
    return _ScriptedPdb


def test_breakpoint_eager(scripted_debugger, capsys):
    def f(x):
        y = x * 2
        jax.debug.breakpoint()
        return y

    check_close(f(jnp.arange(3.0)), np.arange(3.0) * 2)
    assert "Entering jaxlite debugger" in capsys.readouterr().out
    check_close(scripted_debugger.locals["y"], np.arange(3.0) * 2)
    assert "Array([0., 1., 2.], dtype=float32)" in scripted_debugger.output.getvalue()


def test_breakpoint_under_jit_and_vmap(scripted_debugger, capsys):
    def f(x, scale=3):
        y = x * scale
        jax.debug.breakpoint()
        return y

    check_close(jax.jit(f)(jnp.arange(3.0)), np.arange(3.0) * 3)
    check_close(scripted_debugger.locals["y"], np.arange(3.0) * 3)
    assert scripted_debugger.locals["scale"] == 3  # a static local
    stops = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        jax.vmap(lambda x: (f(x), stops.append(1))[0])(jnp.arange(2.0))
    check_close(scripted_debugger.locals["x"], 1.0)  # one stop per batch element


# tree_util.default_registry


def test_default_registry():
    reg = jax.tree_util.default_registry
    leaves, tree = reg.flatten({"a": 1, "b": (2, 3)})
    assert leaves == [1, 2, 3] and tree == jax.tree_util.tree_structure(
        {"a": 0, "b": (0, 0)}
    )
    assert list(reg.flatten_one_level((1, 2))[0]) == [1, 2]

    class Box:
        def __init__(self, v):
            self.v = v

    reg.register_node(Box, lambda b: ((b.v,), None), lambda _, xs: Box(*xs))
    assert jax.tree_util.tree_leaves(Box(5)) == [5]
    assert reg.is_node(Box) and not reg.is_node(int)


# vjp and linearize return pytrees (their residuals are leaves), as in JAX


def test_pullback_and_linearized_function_are_pytrees():
    x = jnp.arange(3.0)
    _, pullback = jax.vjp(jnp.sin, x)
    (ct,) = jax.jit(lambda f, c: f(c))(pullback, jnp.ones(3))
    check_close(ct, np.cos(np.arange(3.0)), rtol=1e-6)
    _, f_jvp = jax.linearize(jnp.sin, x)
    check_close(jax.jit(lambda f, t: f(t))(f_jvp, jnp.ones(3)), np.cos(np.arange(3.0)))
    assert len(jax.tree_util.tree_leaves(pullback)) >= 1


def test_grad_zero_keeps_weak_type_and_holomorphic_errors():
    g = jax.grad(lambda x: 1.0)(2.0)
    assert float(g) == 0.0 and g.weak_type
    with pytest.raises(TypeError, match="grad requires real-valued outputs"):
        jax.grad(lambda z: z**2)(1.0 + 1j)
    with pytest.raises(
        TypeError, match="holomorphic=True requires inputs with complex"
    ):
        jax.grad(lambda z: z**2, holomorphic=True)(2.0)
    with pytest.raises(
        TypeError, match="holomorphic=True requires outputs with complex"
    ):
        jax.grad(lambda z: jnp.abs(z), holomorphic=True)(1.0 + 2j)
    check_close(jax.grad(lambda z: z**2, holomorphic=True)(1.0 + 2j), 2.0 + 4j)
