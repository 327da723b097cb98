"""`jaxlite.install_as_jax()`, `python -m jaxlite` and JAXLITE_AS_JAX: code that
imports `jax` runs on jaxlite (issue 17).

Everything that installs the alias runs in a fresh Python process, so that `jax`
keeps meaning the real JAX (the oracle) in the test process. The `jax._src` modules
are also checked in-process, as `jaxlite._src`, against the real JAX where it is
installed.
"""

import collections
import importlib.util
import os
import pathlib
import site
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest

import jaxlite
from jaxlite import jax_alias

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run_python(code, *args, env=None, cwd=None, prelude=True):
    """Run `code` (dedented) in a fresh interpreter, after installing the alias unless
    `prelude` is false; returns the CompletedProcess."""
    code = textwrap.dedent(code)
    if prelude:
        code = "import jaxlite\njaxlite.install_as_jax()\n" + code
    full_env = {k: v for k, v in os.environ.items() if k != jax_alias.ENV_VAR}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, *args, "-c", code] if code else [sys.executable, *args],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=cwd,
        timeout=300,
    )


def run_ok(code, **kwargs):
    proc = run_python(code, **kwargs)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_jax_modules_are_jaxlites_modules():
    out = run_ok(
        """
        import sys
        import jax
        import jax.numpy as jnp
        import jax.scipy.special
        import jax._src.core
        from jax import lax, tree_util
        import jaxlite
        print(jnp is jaxlite.numpy, sys.modules["jax.numpy"] is jaxlite.numpy)
        print(jax.jit is jaxlite.jit, jax.grad is jaxlite.grad, lax is jaxlite.lax)
        print(tree_util is jaxlite.tree_util, jax.numpy is jaxlite.numpy)
        print(jax.scipy.special is jaxlite.scipy.special)
        print(sys.modules["jax._src.core"] is jaxlite._src.core)
        print(jax.numpy.__name__, jnp.sin(0.0).dtype)
        print(float(jax.grad(lambda x: jnp.sin(x) * 2.0)(0.0)))
        """
    )
    assert out.split() == ["True"] * 9 + ["jaxlite.numpy", "float32", "2.0"]


def test_jax_has_jax_version_and_jaxlite_keeps_its_own():
    out = run_ok(
        """
        import jax, jax.version, jaxlite
        print(jax.__version__, jax.__version_info__)
        print(jax.version.__version__, jax.version.__version_info__)
        print(jaxlite.__version__, jaxlite.version.__version__)
        """
    )
    lines = out.splitlines()
    assert lines[0] == "0.10.2 (0, 10, 2)"
    assert lines[1] == "0.10.2 (0, 10, 2)"
    assert lines[2] == f"{jaxlite.__version__} {jaxlite.__version__}"
    assert jaxlite.__version__ != "0.10.2"


def test_install_is_idempotent_and_the_module_looks_like_a_package():
    out = run_ok(
        """
        import importlib.util, sys
        import jaxlite
        from jaxlite.jax_alias import _JaxFinder
        jax = jaxlite.install_as_jax()
        print(jax is sys.modules["jax"], jaxlite.install_as_jax() is jax)
        print(sum(isinstance(f, _JaxFinder) for f in sys.meta_path))
        print(importlib.util.find_spec("jax").name, jax.__path__)
        print("jit" in dir(jax), jax.__name__)
        """
    )
    assert out.split() == ["True", "True", "1", "jax", "[]", "True", "jax"]


def test_jax_src_is_reachable_without_import_and_reload_changes_nothing():
    out = run_ok(
        """
        import importlib
        import jax, jaxlite
        print(jax._src.xla_bridge._backends["cpu"].platform)  # as chex reads it
        print(importlib.reload(jax) is jax, jax.__version__, jax.jit is jaxlite.jit)
        """
    )
    assert out.split() == ["cpu", "True", "0.10.2", "True"]


def test_a_missing_module_names_the_jaxlite_module_looked_for():
    out = run_ok(
        """
        for name in ("jax.foo", "jax.numpy.foo", "jax.jit.foo", "jax.lax.fft"):
            try:
                __import__(name)
            except ModuleNotFoundError as e:
                print(e.name, "|", e)
        try:
            from jax import no_such_name
        except ImportError as e:
            print(type(e).__name__)
        import jax
        try:
            jax.no_such_name
        except AttributeError as e:
            print(e)
        import jaxlite
        print(callable(jaxlite.lax.fft), jax.config is jaxlite.config)
        """
    )
    lines = out.splitlines()
    assert lines[0].startswith("jax.foo | No module named 'jax.foo' (")
    assert "jaxlite has no 'jaxlite.foo'" in lines[0]
    assert "install_as_jax()" in lines[0]
    assert lines[1].startswith("jax.numpy.foo | No module named 'jax.numpy.foo'")
    assert "jaxlite has no 'jaxlite.numpy.foo'" in lines[1]
    # Not modules in JAX either; importing them would replace jaxlite's functions.
    assert lines[2].startswith("jax.jit | No module named 'jax.jit' (jaxlite's")
    assert "'jaxlite.jit' is a function, not a module" in lines[2]
    assert "'jaxlite.lax.fft' is a function, not a module" in lines[3]
    assert lines[4] == "ImportError"
    assert "module 'jax' has no attribute 'no_such_name'" in lines[5]
    assert "'jaxlite.no_such_name'" in lines[5]
    assert lines[6] == "True True"


def test_the_real_jax_imported_first_is_an_error():
    if importlib.util.find_spec("jax") is None:
        pytest.skip("the real JAX is not installed")
    proc = run_python(
        """
        import jax
        import jaxlite
        try:
            jaxlite.install_as_jax()
        except RuntimeError as e:
            print(e)
        print(jax.__version__)
        """,
        prelude=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "the real JAX is already imported" in proc.stdout
    assert "before anything imports jax" in proc.stdout


def test_jaxlite_itself_never_installs_the_alias():
    out = run_ok(
        """
        import sys
        import jaxlite, jaxlite.jax_alias, jaxlite._src
        print(sorted(n for n in sys.modules if n.split(".")[0] in ("jax", "jaxlib")))
        """,
        prelude=False,
    )
    assert out.strip() == "[]"


# ---------------------------------------------------------------------------------
# python -m jaxlite


SCRIPT = """\
import sys
import jax
import jaxlite
print(__name__, sys.argv, jax.numpy is jaxlite.numpy, jax.__version__)
print(sys.path[0])
sys.exit(int(sys.argv[-1]))
"""


def test_python_m_jaxlite_runs_a_script_as_main(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(SCRIPT)
    proc = run_python("", "-m", "jaxlite", str(script), "a", "--b", "3", prelude=False)
    assert proc.returncode == 3, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"__main__ {[str(script), 'a', '--b', '3']} True 0.10.2"
    assert lines[1] == str(tmp_path)


def test_python_m_jaxlite_runs_a_module_as_main(tmp_path):
    (tmp_path / "progmod.py").write_text(SCRIPT)
    proc = run_python(
        "", "-m", "jaxlite", "-m", "progmod", "x", "0", prelude=False, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert first == f"__main__ {[str(tmp_path / 'progmod.py'), 'x', '0']} True 0.10.2"


def test_python_m_jaxlite_usage_errors(tmp_path):
    proc = run_python("", "-m", "jaxlite", prelude=False)
    assert proc.returncode == 2
    assert "usage: python -m jaxlite SCRIPT [ARGS...]" in proc.stderr
    proc = run_python("", "-m", "jaxlite", str(tmp_path / "nope.py"), prelude=False)
    assert proc.returncode == 2
    assert "can't open file" in proc.stderr
    proc = run_python("", "-m", "jaxlite", "-m", prelude=False)
    assert proc.returncode == 2
    assert "-m needs a module name" in proc.stderr


# ---------------------------------------------------------------------------------
# JAXLITE_AS_JAX: the .pth line the build backend puts into every wheel


def _build_backend():
    spec = importlib.util.spec_from_file_location(
        "jaxlite_build", ROOT / "tools" / "jaxlite_build.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CHECK_ALIAS = """
import sys
print("jaxlite" in sys.modules, type(sys.modules.get("jax")).__name__)
"""


@pytest.mark.parametrize(
    "value, expected",
    [
        (None, "False NoneType"),
        ("", "False NoneType"),
        ("0", "False NoneType"),
        ("false", "True NoneType"),  # parsed by jaxlite: off
        ("1", "True _JaxModule"),
        ("yes", "True _JaxModule"),
    ],
)
def test_the_pth_line_installs_the_alias_only_when_asked(value, expected):
    line = _build_backend().PTH_LINE
    env = {} if value is None else {jax_alias.ENV_VAR: value}
    out = run_ok(line + CHECK_ALIAS, env=env, prelude=False)
    assert out.strip() == expected


def test_the_pth_line_rejects_a_bad_value():
    line = _build_backend().PTH_LINE
    proc = run_python(line, env={jax_alias.ENV_VAR: "maybe"}, prelude=False)
    assert proc.returncode != 0
    assert "invalid truth value 'maybe'" in proc.stderr


def test_the_build_backend_adds_the_pth_file_to_a_wheel(tmp_path):
    backend = _build_backend()
    wheel = tmp_path / "demo-1.0-py3-none-any.whl"
    record = "demo/__init__.py,sha256=x,0\ndemo-1.0.dist-info/RECORD,,\n"
    with zipfile.ZipFile(wheel, "w") as z:
        z.writestr("demo/__init__.py", "")
        z.writestr("demo-1.0.dist-info/RECORD", record)
    backend.add_pth(str(wheel))
    with zipfile.ZipFile(wheel) as z:
        assert z.read(backend.PTH_NAME).decode() == backend.PTH_LINE
        lines = z.read("demo-1.0.dist-info/RECORD").decode().splitlines()
    assert lines[:2] == record.splitlines()
    name, digest, size = lines[2].split(",")
    assert name == backend.PTH_NAME and size == str(len(backend.PTH_LINE.encode()))
    assert digest == "sha256=" + _record_digest(backend.PTH_LINE.encode())
    with pytest.raises(RuntimeError, match="already holds"):
        backend.add_pth(str(wheel))


def _record_digest(data):
    import base64
    import hashlib

    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _installed_pth():
    for directory in [*site.getsitepackages(), site.getusersitepackages()]:
        path = pathlib.Path(directory) / "jaxlite-as-jax.pth"
        if path.is_file():
            return path
    return None


def test_the_installed_pth_file_reads_the_environment_variable():
    if _installed_pth() is None:
        pytest.skip(
            "jaxlite-as-jax.pth is not installed: jaxlite was installed before the "
            "build backend added it (reinstall with pip install -e .)"
        )
    out = run_ok(
        "import jax, jaxlite\nprint(jax.numpy is jaxlite.numpy, jax.__version__)",
        env={jax_alias.ENV_VAR: "1"},
        prelude=False,
    )
    assert out.split() == ["True", "0.10.2"]
    out = run_ok(CHECK_ALIAS, prelude=False)
    assert out.strip() == "False NoneType"  # unset: jaxlite is not even imported


# ---------------------------------------------------------------------------------
# jax._src: what libraries import from JAX's private modules


def test_private_modules_are_jaxlites_objects():
    from jaxlite import _src, dtypes, flatten_util, lax
    from jaxlite.experimental import checkify
    from jaxlite.lax.callbacks import effects_barrier

    assert _src.dtypes.TypePromotionError is dtypes.TypePromotionError
    assert _src.dtypes.extended is dtypes.extended
    assert _src.flatten_util.ravel_pytree is flatten_util.ravel_pytree
    assert _src.ad_util.stop_gradient_p is lax.stop_gradient_p
    assert _src.checkify.checkify is checkify.checkify
    assert _src.checkify.user_checks is checkify.user_checks
    assert _src.dispatch.wait_for_tokens is effects_barrier
    assert _src.core.ShapedArray is jaxlite.core.ShapedArray
    assert _src.xla_bridge._backends["cpu"].platform == "cpu"
    assert _src.xla_bridge._backends["cpu"].devices() == jaxlite.devices()
    assert not hasattr(_src.compiler, "backend_compile_and_load")


def test_supports_inf_matches_jax():
    jax_dtypes = pytest.importorskip("jax._src.dtypes")
    import ml_dtypes

    from jaxlite._src import dtypes

    for dt in [
        np.float32,
        np.float64,
        np.float16,
        ml_dtypes.bfloat16,
        ml_dtypes.float8_e4m3fn,
        ml_dtypes.float8_e5m2,
        ml_dtypes.float8_e4m3fnuz,
        ml_dtypes.float8_e5m2fnuz,
        ml_dtypes.float8_e4m3b11fnuz,
        np.complex64,
        np.int32,
        np.uint8,
        np.bool_,
    ]:
        assert dtypes.supports_inf(dt) == jax_dtypes.supports_inf(dt), dt


def test_trace_state_clean_is_false_under_a_transformation():
    from jaxlite._src.core import trace_state_clean

    seen = []

    def f(x):
        seen.append(trace_state_clean())
        return x * 2.0

    assert trace_state_clean()
    f(1.0)
    jaxlite.jit(f)(1.0)
    jaxlite.grad(f)(1.0)
    jaxlite.vmap(f)(np.ones(2, np.float32))
    assert seen == [True, False, False, False]


class _Registered:
    def __init__(self, x):
        self.x = x


jaxlite.tree_util.register_pytree_node(
    _Registered, lambda r: ((r.x,), None), lambda _, xs: _Registered(*xs)
)


def test_tree_registry_holds_the_registered_node_types_as_jax_does():
    tree_util = pytest.importorskip("jax._src.tree_util")
    from jaxlite._src.tree_util import _registry

    point = collections.namedtuple("Point", "x y")
    jaxlite.tree_util.tree_leaves(point(1, 2))  # cached as a namedtuple, not registered
    jaxlite.tree_util.tree_leaves(3.0)  # cached as a leaf
    for typ in (tuple, list, dict, type(None), collections.OrderedDict, point, float):
        assert (typ in _registry) == (typ in tree_util._registry), typ
    assert collections.defaultdict in _registry
    assert _Registered in _registry
    children, aux = _registry[_Registered].to_iter(_Registered(5))
    assert children == (5,)
    assert _registry[_Registered].from_iter(aux, children).x == 5
    assert _Registered in list(_registry) and float not in list(_registry)
    with pytest.raises(KeyError):
        _registry[float]


def test_traceback_util_keeps_functions_and_tracks_exclusions(tmp_path):
    from jaxlite._src import traceback_util

    def f():
        return sys._getframe()

    assert traceback_util.api_boundary(f) is f
    assert traceback_util.include_frame(f())
    assert not traceback_util.include_filename(jaxlite.core.__file__)
    path = str(tmp_path)
    traceback_util.register_exclusion(path)
    try:
        assert not traceback_util.include_filename(str(tmp_path / "lib.py"))
        assert traceback_util.include_filename(str(tmp_path) + "_other/lib.py")
    finally:
        traceback_util._exclude_paths.remove(path)


def test_private_modules_through_the_alias():
    out = run_ok(
        """
        import jax
        import jax._src.traceback_util as traceback_util
        from jax._src.dtypes import TypePromotionError
        from jax._src.flatten_util import ravel_pytree
        from jax._src.tree_util import _registry
        import jax._src.dispatch
        import jaxlite
        print(TypePromotionError is jaxlite.dtypes.TypePromotionError)
        print(ravel_pytree({"a": 1.0, "b": (2.0, 3.0)})[0].tolist())
        print(jax._src.xla_bridge._backends["cpu"].platform, tuple in _registry)
        jax._src.dispatch.wait_for_tokens()
        """
    )
    assert out.split() == ["True", "[1.0,", "2.0,", "3.0]", "cpu", "True"]


# ---------------------------------------------------------------------------------
# Libraries


def _needs(*names):
    missing = [n for n in names if importlib.util.find_spec(n) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")


def test_optax_runs_on_jaxlite():
    _needs("optax")
    out = run_ok(
        """
        import jax, jax.numpy as jnp, optax, jaxlite
        print(type(jnp.zeros(1)) is jaxlite.Array)
        params = {"w": jnp.array([1.0, -2.0, 3.0])}
        loss = lambda p: jnp.sum((p["w"] - 0.5) ** 2)
        opt = optax.adam(0.1)
        state = opt.init(params)
        for _ in range(20):
            grads = jax.grad(loss)(params)
            updates, state = opt.update(grads, state, params)
            params = optax.apply_updates(params, updates)
        print(*params["w"].tolist())
        """
    )
    lines = out.splitlines()
    assert lines[0] == "True"
    # Adam in float64: m, v moving averages with bias correction, eps 1e-8.
    w = np.array([1.0, -2.0, 3.0])
    m = np.zeros(3)
    v = np.zeros(3)
    for t in range(1, 21):
        g = 2 * (w - 0.5)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        m_hat, v_hat = m / (1 - 0.9**t), v / (1 - 0.999**t)
        w = w - 0.1 * m_hat / (np.sqrt(v_hat) + 1e-8)
    # 20 float32 steps against float64: a few float32 roundings per step.
    np.testing.assert_allclose([float(s) for s in lines[1].split()], w, atol=1e-4)


def test_jaxopt_runs_on_jaxlite():
    _needs("jaxopt")
    out = run_ok(
        """
        import jax.numpy as jnp, jaxopt
        def f(x):
            return jnp.sum((x - jnp.array([1.0, 2.0])) ** 2) + 0.1 * jnp.sum(x ** 2)
        print(*jaxopt.LBFGS(fun=f, maxiter=50).run(jnp.zeros(2)).params.tolist())
        print(*jaxopt.GradientDescent(fun=f, maxiter=500).run(jnp.zeros(2)).params.tolist())
        """
    )
    optimum = np.array([1.0, 2.0]) / 1.1  # the gradient 2(x - a) + 0.2x vanishes
    for line in out.splitlines():
        np.testing.assert_allclose([float(s) for s in line.split()], optimum, rtol=1e-4)
