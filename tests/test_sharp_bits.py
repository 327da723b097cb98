"""The examples of the "Sharp bits" seed (002) that the core covers, with their output.

Each test runs a seed example as the seed writes it (with `jax` = jaxlite) and compares
what it prints with what the seed prints, up to whitespace: the scraped seed lost
indentation and runs of spaces (see ../shared/seed_examples.md). The last tests check
that `python -m jaxlite.tour` prints the same outputs.
"""

import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import jit, make_jaxpr, tour
from jaxlite.errors import NonConcreteBooleanIndexError


def same_text(output, expected):
    return " ".join(output.split()) == " ".join(expected.split())


def assert_prints(capsys, expected):
    out = capsys.readouterr().out
    assert same_text(out, expected), f"printed:\n{out}\nthe seed prints:\n{expected}"


def exception_line(e):
    """The exception as IPython's `%xmode Minimal` prints it."""
    return f"{type(e).__name__}: {e}"


def run_fresh(code, **env_vars):
    """Run `code` in a fresh Python process (no JAX_* variables unless given)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAX_")}
    env.update(env_vars)
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


# ----------------------------------------------------------------------------------------
# 🔪 Pure functions

g = 0.0  # the global the impure_* examples read and write


def test_impure_print_side_effect(capsys):
    def impure_print_side_effect(x):
        print("Executing function")  # This is a side-effect
        return x

    # The side-effects appear during the first run
    print("First call: ", jit(impure_print_side_effect)(4.0))

    # Subsequent runs with parameters of same type and shape may not show the side-effect
    # This is because JAX now invokes a cached compilation of the function
    print("Second call: ", jit(impure_print_side_effect)(5.0))

    # JAX re-runs the Python function when the type or shape of the argument changes
    print(
        "Third call, different type: ", jit(impure_print_side_effect)(jnp.array([5.0]))
    )

    assert_prints(
        capsys,
        """\
Executing function
First call: 4.0
Second call: 5.0
Executing function
Third call, different type: [5.]
""",
    )


def test_impure_uses_globals(capsys):
    global g
    g = 0.0

    def impure_uses_globals(x):
        return x + g

    # JAX captures the value of the global during the first run
    print("First call: ", jit(impure_uses_globals)(4.0))
    g = 10.0  # Update the global

    # Subsequent runs may silently use the cached value of the globals
    print("Second call: ", jit(impure_uses_globals)(5.0))

    # JAX re-runs the Python function when the type or shape of the argument changes
    # This will end up reading the latest value of the global
    print("Third call, different type: ", jit(impure_uses_globals)(jnp.array([4.0])))

    assert_prints(
        capsys,
        """\
First call: 4.0
Second call: 5.0
Third call, different type: [14.]
""",
    )


def test_impure_saves_global(capsys):
    global g
    g = 0.0

    def impure_saves_global(x):
        global g
        g = x
        return x

    # JAX runs once the transformed function with special Traced values for arguments
    print("First call: ", jit(impure_saves_global)(4.0))
    print("Saved global: ", g)  # Saved global has an internal JAX value

    assert_prints(
        capsys,
        """\
First call: 4.0
Saved global: Traced<ShapedArray(float32[], weak_type=True)>with<DynamicJaxprTrace>
""",
    )
    # The saved tracer is dead: using it is an error, not a silent wrong value.
    with pytest.raises(jax.errors.UnexpectedTracerError):
        g + 1


def test_pure_uses_internal_state(capsys):
    def pure_uses_internal_state(x):
        state = dict(even=0, odd=0)
        for i in range(10):
            state["even" if i % 2 == 0 else "odd"] += x
        return state["even"] + state["odd"]

    print(jit(pure_uses_internal_state)(5.0))
    assert_prints(capsys, "50.0\n")


# ----------------------------------------------------------------------------------------
# 🔪 In-place updates and x.at[idx]

IMMUTABLE = (
    "TypeError: JAX arrays are immutable and do not support in-place item assignment. "
    "Instead of x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
    "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html"
)


def test_numpy_in_place_update(capsys):
    numpy_array = np.zeros((3, 3), dtype=np.float32)
    print("original array:")
    print(numpy_array)

    # In place, mutating update
    numpy_array[1, :] = 1.0
    print("updated array:")
    print(numpy_array)
    assert_prints(
        capsys,
        """\
original array:
[[0. 0. 0.]
[0. 0. 0.]
[0. 0. 0.]]
updated array:
[[0. 0. 0.]
[1. 1. 1.]
[0. 0. 0.]]
""",
    )


def test_in_place_update_of_jax_array_raises():
    jax_array = jnp.zeros((3, 3), dtype=jnp.float32)

    # In place update of JAX's array will yield an error!
    with pytest.raises(TypeError) as info:
        jax_array[1, :] = 1.0
    assert exception_line(info.value) == IMMUTABLE


def test_in_place_update_of_tracer_raises():
    def f(x):
        x[0] = 1.0
        return x

    with pytest.raises(TypeError) as info:
        jit(f)(jnp.zeros(3))
    assert exception_line(info.value) == IMMUTABLE


def test_at_set_and_original_unchanged(capsys):
    jax_array = jnp.zeros((3, 3), dtype=jnp.float32)
    updated_array = jax_array.at[1, :].set(1.0)
    print("updated array:\n", updated_array)
    assert_prints(
        capsys,
        """\
updated array:
[[0. 0. 0.]
[1. 1. 1.]
[0. 0. 0.]]
""",
    )
    print("original array unchanged:\n", jax_array)
    assert_prints(
        capsys,
        """\
original array unchanged:
[[0. 0. 0.]
[0. 0. 0.]
[0. 0. 0.]]
""",
    )


def test_at_add(capsys):
    print("original array:")
    jax_array = jnp.ones((5, 6))
    print(jax_array)
    new_jax_array = jax_array.at[::2, 3:].add(7.0)
    print("new array post-addition:")
    print(new_jax_array)
    assert_prints(
        capsys,
        """\
original array:
[[1. 1. 1. 1. 1. 1.]
[1. 1. 1. 1. 1. 1.]
[1. 1. 1. 1. 1. 1.]
[1. 1. 1. 1. 1. 1.]
[1. 1. 1. 1. 1. 1.]]
new array post-addition:
[[1. 1. 1. 8. 8. 8.]
[1. 1. 1. 1. 1. 1.]
[1. 1. 1. 8. 8. 8.]
[1. 1. 1. 1. 1. 1.]
[1. 1. 1. 8. 8. 8.]]
""",
    )


# ----------------------------------------------------------------------------------------
# 🔪 Out-of-bounds indexing


def test_numpy_out_of_bounds_index_raises():
    with pytest.raises(IndexError) as info:
        np.arange(10)[11]
    assert (
        exception_line(info.value)
        == "IndexError: index 11 is out of bounds for axis 0 with size 10"
    )


def test_jax_out_of_bounds_index_clamps():
    assert repr(jnp.arange(10)[11]) == "Array(9, dtype=int32)"


def test_at_get_out_of_bounds_clamps():
    assert repr(jnp.arange(10.0).at[11].get()) == "Array(9., dtype=float32)"


def test_at_get_mode_fill():
    out = jnp.arange(10.0).at[11].get(mode="fill", fill_value=jnp.nan)
    assert repr(out) == "Array(nan, dtype=float32)"


# ----------------------------------------------------------------------------------------
# 🔪 Non-array inputs: NumPy vs. JAX

PERMISSIVE_SUM_JAXPR_SEED = """\
{ lambda ; a:i32[] b:i32[] c:i32[] d:i32[] e:i32[] f:i32[] g:i32[] h:i32[] i:i32[]
j:i32[]. let
k:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
l:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b
m:i32[] = convert_element_type[new_dtype=int32 weak_type=False] c
n:i32[] = convert_element_type[new_dtype=int32 weak_type=False] d
o:i32[] = convert_element_type[new_dtype=int32 weak_type=False] e
p:i32[] = convert_element_type[new_dtype=int32 weak_type=False] f
q:i32[] = convert_element_type[new_dtype=int32 weak_type=False] g
r:i32[] = convert_element_type[new_dtype=int32 weak_type=False] h
s:i32[] = convert_element_type[new_dtype=int32 weak_type=False] i
t:i32[] = convert_element_type[new_dtype=int32 weak_type=False] j
u:i32[1] = broadcast_in_dim[
broadcast_dimensions=()
shape=(1,)
sharding=None
] k
v:i32[1] = broadcast_in_dim[
broadcast_dimensions=()
shape=(1,)
sharding=None
] l
w:i32[1] = broadcast_in_dim[
broadcast_dimensions=()
shape=(1,)
sharding=None
] m
x:i32[1] = broadcast_in_dim[
broadcast_dimensions=()
shape=(1,)
sharding=None
] n
y:i32[1] = broadcast_in_dim[
broadcast_dimensions=()
shape=(1,)
sharding=None
] o
z:i32[1] = broadcast_in_dim[
broadcast_dimensions=()
shape=(1,)
sharding=None
] p
ba:i32[1] = broadcast_in_dim[
broadcast_dimensions=()
shape=(1,)
sharding=None
] q
bb:i32[1] = broadcast_in_dim[
broadcast_dimensions=()
shape=(1,)
sharding=None
] r
bc:i32[1] = broadcast_in_dim[
broadcast_dimensions=()
shape=(1,)
sharding=None
] s
bd:i32[1] = broadcast_in_dim[
broadcast_dimensions=()
shape=(1,)
sharding=None
] t
be:i32[10] = concatenate[dimension=0] u v w x y z ba bb bc bd
bf:i32[] = reduce_sum[axes=(0,)] be
in (bf,) }
"""


def permissive_sum(x):
    return jnp.sum(jnp.array(x))


def test_np_sum_of_list():
    # NumPy sums a list in its default integer: int64 here, int32 on 32-bit platforms
    # (the tour shows the 64-bit output).
    total = np.sum([1, 2, 3])
    assert type(total) is np.int_
    assert repr(total) == f"np.{np.dtype(np.int_).name}(6)"


def test_jnp_sum_of_list_raises():
    with pytest.raises(TypeError) as info:
        jnp.sum([1, 2, 3])
    assert exception_line(info.value) == (
        "TypeError: sum requires ndarray or scalar arguments, got <class 'list'> at "
        "position 0."
    )


def test_permissive_sum():
    x = list(range(10))
    assert repr(permissive_sum(x)) == "Array(45, dtype=int32)"


def test_permissive_sum_jaxpr():
    x = list(range(10))
    text = repr(make_jaxpr(permissive_sum)(x))
    assert same_text(text, PERMISSIVE_SUM_JAXPR_SEED), text
    # Line for line the seed's text, with JAX's indentation (which the scrape lost).
    seed_lines = PERMISSIVE_SUM_JAXPR_SEED.splitlines()
    assert [line.strip() for line in text.splitlines()] == seed_lines
    assert text.splitlines()[1] == "    j:i32[]. let"
    assert text.splitlines()[-1] == "  in (bf,) }"


def test_explicit_jnp_array():
    x = list(range(10))
    assert repr(jnp.sum(jnp.array(x))) == "Array(45, dtype=int32)"


# ----------------------------------------------------------------------------------------
# 🔪 Dynamic shapes


def nansum(x):
    mask = ~jnp.isnan(x)  # boolean mask selecting non-nan values
    x_without_nans = x[mask]
    return x_without_nans.sum()


def test_nansum_outside_jit(capsys):
    x = jnp.array([1, 2, jnp.nan, 3, 4])
    print(nansum(x))
    assert_prints(capsys, "10.0\n")


def test_nansum_under_jit_raises():
    x = jnp.array([1, 2, jnp.nan, 3, 4])
    with pytest.raises(NonConcreteBooleanIndexError) as info:
        jax.jit(nansum)(x)
    assert same_text(
        exception_line(info.value),
        """\
NonConcreteBooleanIndexError: Array boolean indices must be concrete; got ShapedArray(bool[5])
See https://docs.jax.dev/en/latest/errors.html#jax.errors.NonConcreteBooleanIndexError
""",
    )
    # Beyond the seed's text, the traceback notes say where and how to fix it.
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "nansum" in notes
    assert "jnp.where" in notes


def test_nansum_2_with_where(capsys):
    x = jnp.array([1, 2, jnp.nan, 3, 4])

    @jax.jit
    def nansum_2(x):
        mask = ~jnp.isnan(x)  # boolean mask selecting non-nan values
        return jnp.where(mask, x, 0).sum()

    print(nansum_2(x))
    assert_prints(capsys, "10.0\n")


# ----------------------------------------------------------------------------------------
# 🔪 Double (64-bit) precision

TRUNCATED = (
    r"Explicitly requested dtype float64 (requested in \w+ )?is not available, and "
    r"will be truncated to dtype float32\. To enable more dtypes, set the "
    r"jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell environment "
    r"variable\. See https://github\.com/jax-ml/jax#current-gotchas for more\."
)


@pytest.mark.parametrize(
    "make",
    [
        lambda: jnp.array(1.0, dtype=jnp.float64),
        lambda: jnp.zeros(3, dtype=jnp.float64),
        lambda: jnp.ones((2, 2), dtype="float64"),
        lambda: jnp.arange(3.0).astype(jnp.float64),
    ],
    ids=["array", "zeros", "ones", "astype"],
)
def test_float64_without_x64_warns_and_truncates(make):
    with pytest.warns(UserWarning, match=TRUNCATED) as record:
        x = make()
    assert x.dtype == np.float32
    assert repr(x.dtype) == "dtype('float32')"
    # The warning points at the line of user code that asked for float64.
    assert record[0].filename == __file__


def test_no_warning_for_default_dtypes():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert jnp.array(1.0).dtype == np.float32
        assert jnp.zeros(3).dtype == np.float32
        assert jnp.arange(3).dtype == np.int32


def test_enable_x64_with_config_update_in_fresh_process():
    out = run_fresh(
        """
# again, this only works on startup!
import jaxlite as jax
jax.config.update("jax_enable_x64", True)

import jaxlite.numpy as jnp
print(jnp.zeros(3, dtype=jnp.float64).dtype, jnp.array(1.).dtype, jnp.arange(3).dtype)
print(repr(jnp.array(1.5, dtype=jnp.float64) + 1))
"""
    )
    assert out.split("\n")[0] == "float64 float64 int64"
    assert out.split("\n")[1] == "Array(2.5, dtype=float64)"


def test_enable_x64_with_environment_variable():
    out = run_fresh(
        "import jaxlite.numpy as jnp\nprint(jnp.zeros(3, dtype=jnp.float64).dtype)",
        JAX_ENABLE_X64="1",
    )
    assert out.strip() == "float64"


def test_config_with_absl_and_parse_flags_with_absl():
    out = run_fresh(
        """
import jaxlite as jax
jax.config.config_with_absl()
if __name__ == '__main__':
    # calls jax.config.config_with_absl() *and* runs absl parsing
    jax.config.parse_flags_with_absl()
print("ok")
"""
    )
    assert out.strip() == "ok"


# ----------------------------------------------------------------------------------------
# 🔪 Miscellaneous divergences from NumPy


def test_unsafe_cast_numpy():
    out = np.arange(254.0, 258.0).astype("uint8")
    assert same_text(repr(out), "array([254, 255, 0, 1], dtype=uint8)")


def test_unsafe_cast_jax():
    out = jnp.arange(254.0, 258.0).astype("uint8")
    assert repr(out) == "Array([254, 255, 255, 255], dtype=uint8)"


def test_unsafe_cast_jax_under_jit():
    out = jit(lambda x: x.astype("uint8"))(jnp.arange(254.0, 258.0))
    assert repr(out) == "Array([254, 255, 255, 255], dtype=uint8)"


# ----------------------------------------------------------------------------------------
# The tour prints the seed's outputs


@pytest.fixture(scope="module")
def tour_outputs():
    return {ex.title: out for ex, out in tour.run_page(tour.SHARP_BITS)}


@pytest.mark.parametrize(
    "example", tour.SHARP_BITS.examples, ids=[e.title for e in tour.SHARP_BITS.examples]
)
def test_tour_example_prints_the_seed_output(example, tour_outputs):
    output = tour_outputs[example.title]
    assert tour.matches(output, example.expected), (
        f"printed:\n{output}\nthe seed prints:\n{example.expected}"
    )


def test_tour_rewrites_only_imports():
    source = "import jax\nimport jax.numpy as jnp\nfrom jax import jit\nx = jax.jit\n"
    assert tour.to_jaxlite(source) == (
        "import jaxlite as jax\nimport jaxlite.numpy as jnp\nfrom jaxlite import jit\n"
        "x = jax.jit\n"
    )
    assert tour.to_jaxlite("from jax.numpy import sin\n") == (
        "from jaxlite.numpy import sin\n"
    )


def test_tour_displays_last_expression_and_exceptions():
    namespace = tour.new_namespace()
    ex = tour.Example("t", "import jax.numpy as jnp\nx = 1\njnp.arange(3)\n")
    assert tour.run_example(ex, namespace) == "Array([0, 1, 2], dtype=int32)\n"
    ex = tour.Example(
        "t", "print('before')\nraise ValueError('boom')\nprint('after')\n"
    )
    assert tour.run_example(ex, namespace) == "before\nValueError: boom\n"
    ex = tour.Example("t", "x = 2\nNone\n")
    assert tour.run_example(ex, namespace) == ""
    assert namespace["x"] == 2


def test_tour_main_runs():
    pytest.importorskip("scipy", reason="the tour's Bessel example calls scipy.special")
    proc = subprocess.run(
        [sys.executable, "-m", "jaxlite.tour"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
    assert "impure_print_side_effect" in proc.stdout
    assert "iterators in control-flow primitives" in proc.stdout
    counts = re.search(
        r"(\d+) of (\d+) examples print what the seeds print", proc.stdout
    )
    total = sum(len(page.examples) for page in tour.PAGES)
    assert counts.groups() == (str(total), str(total))
    assert "DIFFERS" not in proc.stdout
    assert "import jaxlite" not in proc.stdout  # the code is shown as the seed wrote it


def test_tour_exits_nonzero_on_a_mismatch(monkeypatch, capsys):
    page = tour.Page("p", (tour.Example("ok", "print(1)", "1\n"),), "002")
    monkeypatch.setattr(tour, "PAGES", (page,))
    assert tour.main([]) == 0
    page = tour.Page("p", (tour.Example("wrong", "print(1)", "2\n"),), "002")
    monkeypatch.setattr(tour, "PAGES", (page,))
    assert tour.main(["--check"]) == 1
    out = capsys.readouterr().out
    assert "[DIFFERS from seed 002, which prints:]" in out
    assert "0 of 1 examples print what the seeds print." in out


def test_tour_flags():
    run = [sys.executable, "-m", "jaxlite.tour"]
    proc = subprocess.run([*run, "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "usage: python -m jaxlite.tour" in proc.stdout
    proc = subprocess.run([*run, "--chek"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "unrecognized arguments: --chek" in proc.stderr


def test_tour_ends_quietly_when_its_reader_stops():  # python -m jaxlite.tour | head
    proc = subprocess.Popen(
        [sys.executable, "-m", "jaxlite.tour"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()
    _, err = proc.communicate(timeout=300)
    assert err == b""
    assert proc.returncode == 141


def test_tour_names_the_seed_each_output_matches():
    by_title = {e.title: (p, e) for p in tour.PAGES for e in p.examples}
    page, tracer = by_title["Why callbacks? · print() under jit"]
    assert tour._status(tracer, page, True).startswith("[as in seed 000,")
    page, grad = by_title["Example: pure_callback with custom_jvp · hessian of j1"]
    assert tour._status(grad, page, True).startswith("[as in seed 001,")
    page, jit_f = by_title["Exploring pure_callback · jit of f"]
    assert tour._status(jit_f, page, True) == "[as in seed 001 and 000]"


def test_tour_confirms_x64():
    by_title = {e.title: e for e in tour.SHARP_BITS.examples}
    example = by_title["Double (64-bit) precision · confirm x64 is enabled"]
    assert tour.run_example(example, tour.new_namespace()) == "dtype('float64')\n"
