"""NaN and inf debugging (`jax_debug_nans`, `jax_debug_infs`): eager checks at the
producing primitive, jit output checks with the de-optimized re-run, backward passes,
the seed's examples in fresh processes, and no checking (or cost) when the flags are off.

Every test turns the flags on through the context managers (or restores them), so the
flags are off again after it.
"""

import importlib
import os
import re
import subprocess
import sys
import traceback

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.config import config
from jaxlite.core import EvalTrace

# NumPy warns about the NaNs these tests make on purpose (jaxlite silences that only
# outside pytest's warning capture).
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

debug_nans_module = importlib.import_module("jaxlite.debug_nans")
DEOPT = (
    "Invalid nan value encountered in the output of a jax.jit function. "
    "Calling the de-optimized version."
)
NAN_IN_DIV = "invalid value (nan) encountered in div"
NAN_IN_DIV_RE = re.escape(NAN_IN_DIV)


@pytest.fixture(autouse=True)
def flags_off_after():
    saved = config.values
    yield
    for name in ("jax_debug_nans", "jax_debug_infs", "jax_disable_jit"):
        if config.read(name) != saved[name]:
            config.update(name, saved[name])


def run_fresh(code, tmp_path, **env_vars):
    """Run `code` (as a script file, so tracebacks quote its lines) in a fresh process
    with the same jaxlite; returns the finished process."""
    script = tmp_path / "script.py"
    script.write_text(code)
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAX_")}
    env.update(env_vars)
    root = os.path.dirname(os.path.dirname(os.path.abspath(jax.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env
    )


def frame_lines(exc_info):
    """The source lines of the traceback's frames."""
    return [f.line for f in traceback.extract_tb(exc_info.tb)]


# ----------------------------------------------------------------------------------------
# Eager: the primitive that produces the NaN raises


@pytest.mark.parametrize(
    "fun, prim",
    [
        (lambda: lax.div(0.0, 0.0), "div"),
        (lambda: jnp.divide(0.0, 0.0), "div"),
        (lambda: jnp.zeros(3) / jnp.zeros(3), "div"),
        (lambda: lax.log(-jnp.ones(2)), "log"),
        (lambda: jnp.sqrt(jnp.float32(-1.0)), "sqrt"),
        (lambda: jnp.arcsin(jnp.array([0.5, 2.0])), "asin"),
        (lambda: jnp.float32(np.inf) - np.inf, "sub"),
        (lambda: jnp.sum(jnp.array([np.inf, -np.inf])), "reduce_sum"),
    ],
)
def test_eager_nan_raises_at_producing_primitive(fun, prim):
    with jax.debug_nans(True):
        with pytest.raises(FloatingPointError) as info:
            fun()
    assert str(info.value) == f"invalid value (nan) encountered in {prim}"


def test_eager_traceback_ends_in_user_code():
    x = jnp.zeros(3)
    with jax.debug_nans(True):
        with pytest.raises(FloatingPointError) as info:
            y = x / x  # the producing line
            del y
    assert "y = x / x  # the producing line" in frame_lines(info)


def test_nan_input_propagating_raises_as_in_jax():
    # JAX checks every inexact output, whatever the inputs were.
    with jax.debug_nans(True):
        with pytest.raises(FloatingPointError, match="encountered in add"):
            lax.add(1.0, float("nan"))
        with pytest.raises(FloatingPointError, match="encountered in neg"):
            lax.neg(np.float32("nan"))


def test_only_inexact_outputs_are_checked():
    x = jnp.array([1.0, np.nan])
    with jax.debug_nans(True), jax.debug_infs(True):
        np.testing.assert_array_equal(jnp.isnan(x), [False, True])
        np.testing.assert_array_equal(x == x, [True, False])
        np.testing.assert_array_equal(x > 0, [True, False])
        assert lax.div(jnp.int32(1), jnp.int32(1)) == 1
        assert jnp.argmax(jnp.arange(3.0)) == 2


def test_complex_outputs_are_checked():
    z = jnp.zeros(1, jnp.complex64)
    with jax.debug_nans(True):
        with pytest.raises(FloatingPointError, match=r"\(nan\) encountered in div"):
            z / z
    with jax.debug_infs(True):
        with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in div"):
            (z + 1) / z


def test_infs_need_debug_infs():
    with jax.debug_nans(True):
        assert lax.div(1.0, 0.0) == np.inf  # an inf is not a NaN
    with jax.debug_infs(True):
        with pytest.raises(FloatingPointError) as info:
            lax.div(1.0, 0.0)
        assert str(info.value) == "invalid value (inf) encountered in div"
        assert np.isnan(lax.div(0.0, 0.0))  # and a NaN is not an inf


def test_flags_off_compute_silently():
    assert config.debug_nans is False and config.debug_infs is False
    assert np.isnan(lax.div(0.0, 0.0))
    assert np.isinf(jnp.divide(1.0, 0.0))
    assert np.isnan(jax.jit(lambda x: x / x)(jnp.zeros(())))


def test_no_checking_code_on_the_eager_path_when_off():
    plain = debug_nans_module._plain_process_primitive
    checked = debug_nans_module._checked_process_primitive
    assert EvalTrace.process_primitive is plain
    with jax.debug_nans(True):
        assert EvalTrace.process_primitive is checked
        with jax.debug_infs(True):
            assert EvalTrace.process_primitive is checked
        assert EvalTrace.process_primitive is checked
    assert EvalTrace.process_primitive is plain
    with jax.debug_infs(True):
        assert EvalTrace.process_primitive is checked
    assert EvalTrace.process_primitive is plain
    assert config.debug_checks is False and config.jit_slow_path is False


def test_config_update_turns_checks_on_and_off():
    config.update("jax_debug_nans", True)
    try:
        with pytest.raises(FloatingPointError, match=NAN_IN_DIV_RE):
            lax.div(0.0, 0.0)
    finally:
        config.update("jax_debug_nans", False)
    assert np.isnan(lax.div(0.0, 0.0))


def test_eager_control_flow_raises_at_the_loop():
    z = jnp.float32(0.0)
    with jax.debug_nans(True):
        with pytest.raises(FloatingPointError, match=r"\(nan\) encountered in scan"):
            lax.scan(lambda c, x: (c / x, c), z, jnp.zeros(3))
        with pytest.raises(FloatingPointError, match=r"\(nan\) encountered in while"):
            lax.while_loop(
                lambda c: c[0] < 1, lambda c: (c[0] + 1, c[1] / c[1]), (0, z)
            )


# ----------------------------------------------------------------------------------------
# jit: outputs checked, then the de-optimized re-run raises at the producing operation


@jax.jit
def seed_f(x, y):
    a = x * y
    b = (x + y) / (x - y)
    c = a + 2
    return a + b * c


def test_seed_f_reruns_deoptimized_and_points_at_the_division(capsys):
    x = jnp.array([2.0, 0.0])
    y = jnp.array([3.0, 0.0])
    with jax.debug_nans(True):
        with pytest.raises(FloatingPointError) as info:
            seed_f(x, y)
    assert str(info.value) == NAN_IN_DIV
    assert capsys.readouterr().out == DEOPT + "\n"
    assert "b = (x + y) / (x - y)" in frame_lines(info)
    names = [f.name for f in traceback.extract_tb(info.tb)]
    assert "seed_f" in names
    # Nothing is chained: the error is the de-optimized run's own.
    assert info.value.__cause__ is None and info.value.__suppress_context__ is False
    assert info.value.__context__ is None


def test_jit_without_nan_prints_nothing(capsys):
    with jax.debug_nans(True), jax.debug_infs(True):
        out = seed_f(jnp.array([2.0, 1.0]), jnp.array([3.0, 0.0]))
        out = seed_f(jnp.array([2.0, 1.0]), jnp.array([3.0, 0.0]))  # warm
    np.testing.assert_allclose(out, [6 + (-5.0) * 8, 1.0 * 2])
    assert capsys.readouterr().out == ""


def test_jit_compiled_before_the_flag_is_still_checked(capsys):
    f = jax.jit(lambda x: jnp.log(x))
    x = -jnp.ones(2)
    assert np.isnan(f(x)).all()
    assert np.isnan(f(x)).all()  # warm: the fast path
    with jax.debug_nans(True):
        with pytest.raises(FloatingPointError, match="encountered in log"):
            f(x)
    assert np.isnan(f(x)).all()  # off again: no check
    assert capsys.readouterr().out == DEOPT + "\n"


def test_jit_inf_with_debug_infs(capsys):
    with jax.debug_infs(True):
        with pytest.raises(FloatingPointError) as info:
            jax.jit(lambda x: 1.0 / x)(jnp.zeros(2))
    assert str(info.value) == "invalid value (inf) encountered in div"
    # JAX prints the same line ("nan") for an inf.
    assert capsys.readouterr().out == DEOPT + "\n"


def test_jit_with_static_args_and_kwargs_reruns_with_them():
    def g(x, n, *, scale):
        return jnp.log(x - n) * scale

    jg = jax.jit(g, static_argnums=1)
    with jax.debug_nans(True):
        assert jg(jnp.ones(2) * 3, 1, scale=2.0).shape == (2,)
        with pytest.raises(FloatingPointError, match="encountered in log"):
            jg(jnp.ones(2), 2, scale=2.0)


def test_nan_only_under_jit_warns_and_continues(capsys):
    # The de-optimized function adds two Python floats: no jaxlite operation runs. As
    # the Sharp bits page says, a warning is printed and the code continues executing.
    with jax.debug_nans(True):
        with pytest.warns(RuntimeWarning) as record:
            out = jax.jit(lambda x: x + jnp.nan)(1.0)
    assert np.isnan(out) and out.dtype == np.float32
    message = str(record[0].message)
    assert message.startswith("invalid value (nan) encountered in jit(<lambda>). ")
    assert "the de-optimized function did not produce invalid values" in message
    assert "appears only under `jit`" in message
    assert record[0].filename == __file__  # points at the caller
    assert capsys.readouterr().out == DEOPT + "\n"


def test_nested_jit_prints_once_per_level(capsys):
    inner = jax.jit(lambda x: x / x)
    outer = jax.jit(lambda x: inner(x) + 1)
    with jax.debug_nans(True):
        with pytest.raises(FloatingPointError, match=NAN_IN_DIV_RE):
            outer(jnp.zeros(2))
    # The outer re-run calls `inner`, which is checked and re-run in turn (as JAX).
    assert capsys.readouterr().out == 2 * (DEOPT + "\n")


def test_vmap_of_jit_reruns_the_jaxpr_equation_by_equation(capsys):
    with jax.debug_nans(True):
        with pytest.raises(FloatingPointError, match=NAN_IN_DIV_RE):
            jax.vmap(jax.jit(lambda a: a / a))(jnp.zeros(3))
    assert capsys.readouterr().out == DEOPT + "\n"


def test_jit_under_jvp_checks_each_operation():
    with jax.debug_nans(True):
        with pytest.raises(FloatingPointError, match=NAN_IN_DIV_RE):
            jax.jvp(jax.jit(lambda a: a / a), (jnp.float32(0.0),), (1.0,))


def test_disable_jit_with_debug_nans_raises_directly(capsys):
    with jax.disable_jit(), jax.debug_nans(True):
        with pytest.raises(FloatingPointError, match=NAN_IN_DIV_RE) as info:
            seed_f(jnp.zeros(2), jnp.zeros(2))
    assert "b = (x + y) / (x - y)" in frame_lines(info)
    assert capsys.readouterr().out == ""  # nothing compiled, nothing to re-run


# ----------------------------------------------------------------------------------------
# Backward passes


def safe_sqrt(x):
    # The classic: the untaken branch's derivative 0 * inf is a NaN in the cotangent.
    return jnp.where(x > 0, jnp.sqrt(x), 0.0)


def test_grad_raises_in_the_backward_pass():
    assert jax.grad(safe_sqrt)(4.0) == 0.25
    assert np.isnan(jax.grad(safe_sqrt)(0.0))  # flags off: the NaN comes out
    with jax.debug_nans(True):
        assert jax.grad(safe_sqrt)(4.0) == 0.25
        with pytest.raises(FloatingPointError, match=r"invalid value \(nan\)"):
            jax.grad(safe_sqrt)(0.0)


def test_backward_pass_error_comes_from_a_transposed_equation():
    # Forward values are finite; only the cotangent 0 * inf is NaN.
    def f(x):
        return jnp.sum(jnp.where(x > 0, x**0.5, 0.0))

    x = jnp.array([0.0, 1.0])
    with jax.debug_nans(True):
        primal_out, vjp_fun = jax.vjp(f, x)  # forward pass: no NaN
        assert primal_out == 1.0
        with pytest.raises(FloatingPointError, match=r"invalid value \(nan\)"):
            vjp_fun(jnp.float32(1.0))


def test_jit_of_grad_reruns_the_backward_pass(capsys):
    with jax.debug_nans(True):
        with pytest.raises(FloatingPointError, match=r"invalid value \(nan\)"):
            jax.jit(jax.grad(safe_sqrt))(0.0)
    assert capsys.readouterr().out == DEOPT + "\n"


def test_grad_of_jit_checks_the_backward_pass():
    with jax.debug_nans(True):
        with pytest.raises(FloatingPointError, match=r"invalid value \(nan\)"):
            jax.grad(jax.jit(safe_sqrt))(0.0)


# ----------------------------------------------------------------------------------------
# The seed's examples, in fresh processes started with JAX_DEBUG_NANS=True


def test_seed_divide_with_environment_variable(tmp_path):
    proc = run_fresh(
        "import jaxlite.numpy as jnp\njnp.divide(0., 0.)\n",
        tmp_path,
        JAX_DEBUG_NANS="True",
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == (
        "FloatingPointError: invalid value (nan) encountered in div"
    )
    assert "jnp.divide(0., 0.)" in proc.stderr


def test_seed_f_with_environment_variable(tmp_path):
    code = """\
import jaxlite.numpy as jnp
from jaxlite import jit

@jit
def f(x, y):
    a = x * y
    b = (x + y) / (x - y)
    c = a + 2
    return a + b * c

x = jnp.array([2., 0.])
y = jnp.array([3., 0.])
f(x, y)
"""
    proc = run_fresh(code, tmp_path, JAX_DEBUG_NANS="True")
    assert proc.returncode == 1
    assert proc.stdout == DEOPT + "\n"
    assert proc.stderr.strip().splitlines()[-1] == f"FloatingPointError: {NAN_IN_DIV}"
    # The traceback goes through the user's function to the division.
    assert "line 7, in f\n    b = (x + y) / (x - y)\n" in proc.stderr
    assert "line 13, in <module>\n    f(x, y)\n" in proc.stderr


def test_debug_infs_environment_variable(tmp_path):
    proc = run_fresh(
        "import jaxlite.numpy as jnp\nprint(jnp.divide(0., 0.))\njnp.divide(1., 0.)",
        tmp_path,
        JAX_DEBUG_INFS="1",
    )
    assert proc.stdout == "nan\n"
    assert proc.stderr.strip().splitlines()[-1] == (
        "FloatingPointError: invalid value (inf) encountered in div"
    )


def test_environment_off_means_no_checks(tmp_path):
    proc = run_fresh(
        "import jaxlite.numpy as jnp\nprint(jnp.divide(0., 0.))",
        tmp_path,
        JAX_DEBUG_NANS="0",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "nan\n"


# ----------------------------------------------------------------------------------------
# Against JAX


JAX_CASES = {
    "div": lambda m: m.lax.div(0.0, 0.0),
    "jnp.divide": lambda m: m.numpy.divide(0.0, 0.0),
    "log": lambda m: m.lax.log(-1.0),
    "add nan": lambda m: m.lax.add(1.0, float("nan")),
    "seed f": lambda m: m.jit(lambda x, y: (x + y) / (x - y))(
        m.numpy.zeros(2), m.numpy.zeros(2)
    ),
}


@pytest.mark.parametrize("case", sorted(JAX_CASES))
def test_error_messages_agree_with_jax(case):
    real_jax = pytest.importorskip("jax")
    messages = []
    for module, flag in ((real_jax, real_jax.debug_nans), (jax, jax.debug_nans)):
        with flag(True), pytest.raises(FloatingPointError) as info:
            JAX_CASES[case](module)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_inf_message_agrees_with_jax():
    real_jax = pytest.importorskip("jax")
    messages = []
    for module in (real_jax, jax):
        with module.debug_infs(True), pytest.raises(FloatingPointError) as info:
            module.lax.div(1.0, 0.0)
        messages.append(str(info.value))
    assert messages[0] == messages[1] == "invalid value (inf) encountered in div"
