"""A tour of jaxlite: the seed documents' examples, run and printed.

`python -m jaxlite.tour` runs, page by page, every code example of the seed documents
(JAX's External callbacks tutorial in English, 001, and Chinese, 000; the
`jax.pure_callback` API page, 003; "Sharp bits" in Chinese, 002), written exactly as the
seeds write them for JAX. For each example it prints a header, the code and what the
code prints, then which seed prints the same. The exit status is 0 only if every
example printed what its seed prints.

The tour is data: a `Page` is a title and a tuple of `Example`s (title, source, the
seed's output). Examples of one page run in order in one namespace, like the notebook
cells of the original page; `import jax` lines are rewritten to import jaxlite (`import
jaxlite as jax`), which is the only change made to the code. A cell whose last
statement is an expression displays its `repr`, as a notebook does; an exception ends
the cell with its `Name: message` line, as IPython's `%xmode Minimal` prints it; a
warning prints as a `Category: message` line. Examples the seeds mark as needing a
fresh process run as such a cell in one.

Outputs are compared with the seeds up to whitespace (the scraped seed pages lost
indentation and runs of spaces) and up to the host of documentation links (002 was
scraped from the jax.ac.cn mirror of docs.jax.dev, which jaxlite's errors link).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import os
import re
import subprocess
import sys
import warnings
from dataclasses import dataclass

import numpy as np

from jaxlite import tour_callbacks


@dataclass(frozen=True)
class Example:
    """One code cell of a seed page.

    `expected` is what the seed prints ("" when it prints nothing). `setup` is code the
    seed ran without showing it (it runs silently before `source`). A `standalone`
    example runs in a fresh Python process, with the environment variables `env`
    (pairs) set. `seeds` names the seed pages that print `expected` when they differ
    from the page's; `note` says how `expected` differs in form from the seed's text,
    where it does beyond whitespace.
    """

    title: str
    source: str
    expected: str = ""
    setup: str = ""
    standalone: bool = False
    env: tuple = ()
    note: str = ""
    seeds: str = ""


@dataclass(frozen=True)
class Page:
    """A seed page: its examples, and the seeds that print their outputs."""

    title: str
    examples: tuple
    seeds: str


# ----------------------------------------------------------------------------------------
# 002: "Sharp bits" (Chinese): every code example of the page except the `%xmode
# Minimal` IPython magic, which is not Python (the tour prints exceptions in its
# minimal form anyway).

# NumPy's own default integer (the C long): the seed's `np.sum` of a list prints
# int64, as on every 64-bit platform; a 32-bit platform's NumPy prints int32.
_NUMPY_INT = np.dtype(np.int_).name

# The seed page 002 was scraped from a mirror; jaxlite's errors link docs.jax.dev.
_MIRRORS = (("https://jax.ac.cn/", "https://docs.jax.dev/"),)
_MIRROR_NOTE = (
    "the seed links the jax.ac.cn mirror of docs.jax.dev, jaxlite docs.jax.dev"
)

SHARP_BITS = Page(
    "002 · 🔪 JAX - 难点 🔪 (Sharp bits)",
    (
        Example(
            "imports",
            """\
import numpy as np
from jax import jit
from jax import lax
from jax import random
import jax
import jax.numpy as jnp
""",
        ),
        Example(
            "Pure functions · impure_print_side_effect",
            """\
def impure_print_side_effect(x):
    print("Executing function")  # This is a side-effect
    return x

# The side-effects appear during the first run
print ("First call: ", jit(impure_print_side_effect)(4.))

# Subsequent runs with parameters of same type and shape may not show the side-effect
# This is because JAX now invokes a cached compilation of the function
print ("Second call: ", jit(impure_print_side_effect)(5.))

# JAX re-runs the Python function when the type or shape of the argument changes
print ("Third call, different type: ", jit(impure_print_side_effect)(jnp.array([5.])))
""",
            """\
Executing function
First call: 4.0
Second call: 5.0
Executing function
Third call, different type: [5.]
""",
        ),
        Example(
            "Pure functions · impure_uses_globals",
            """\
g = 0.
def impure_uses_globals(x):
    return x + g

# JAX captures the value of the global during the first run
print ("First call: ", jit(impure_uses_globals)(4.))
g = 10.  # Update the global

# Subsequent runs may silently use the cached value of the globals
print ("Second call: ", jit(impure_uses_globals)(5.))

# JAX re-runs the Python function when the type or shape of the argument changes
# This will end up reading the latest value of the global
print ("Third call, different type: ", jit(impure_uses_globals)(jnp.array([4.])))
""",
            """\
First call: 4.0
Second call: 5.0
Third call, different type: [14.]
""",
        ),
        Example(
            "Pure functions · impure_saves_global",
            """\
g = 0.
def impure_saves_global(x):
    global g
    g = x
    return x

# JAX runs once the transformed function with special Traced values for arguments
print ("First call: ", jit(impure_saves_global)(4.))
print ("Saved global: ", g)  # Saved global has an internal JAX value
""",
            """\
First call: 4.0
Saved global: Traced<ShapedArray(float32[], weak_type=True)>with<DynamicJaxprTrace>
""",
        ),
        Example(
            "Pure functions · pure_uses_internal_state",
            """\
def pure_uses_internal_state(x):
    state = dict(even=0, odd=0)
    for i in range(10):
        state['even' if i % 2 == 0 else 'odd'] += x
    return state['even'] + state['odd']

print(jit(pure_uses_internal_state)(5.))
""",
            "50.0\n",
        ),
        Example(
            "Pure functions · iterators in control-flow primitives",
            """\
import jax.numpy as jnp
from jax import make_jaxpr

# lax.fori_loop
array = jnp.arange(10)
print(lax.fori_loop(0, 10, lambda i,x: x+array[i], 0))  # expected result 45
iterator = iter(range(10))
print(lax.fori_loop(0, 10, lambda i,x: x+next(iterator), 0))  # unexpected result 0

# lax.scan
def func11(arr, extra):
    ones = jnp.ones(arr.shape)
    def body(carry, aelems):
        ae1, ae2 = aelems
        return (carry + ae1 * ae2 + extra, carry)
    return lax.scan(body, 0., (arr, ones))
make_jaxpr(func11)(jnp.arange(16), 5.)
# make_jaxpr(func11)(iter(range(16)), 5.) # throws error

# lax.cond
array_operand = jnp.array([0.])
lax.cond(True, lambda x: x+1, lambda x: x-1, array_operand)
iter_operand = iter(range(10))
# lax.cond(True, lambda x: next(x)+1, lambda x: next(x)-1, iter_operand) # throws error
""",
            "45\n0\n",
        ),
        Example(
            "In-place updates · NumPy in-place update",
            """\
numpy_array = np.zeros((3,3), dtype=np.float32)
print("original array:")
print(numpy_array)

# In place, mutating update
numpy_array[1, :] = 1.0
print("updated array:")
print(numpy_array)
""",
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
        ),
        Example(
            "In-place updates · in-place update of a JAX array",
            """\
jax_array = jnp.zeros((3,3), dtype=jnp.float32)

# In place update of JAX's array will yield an error!
jax_array[1, :] = 1.0
""",
            "TypeError: JAX arrays are immutable and do not support in-place item "
            "assignment. Instead of x[idx] = y, use x = x.at[idx].set(y) or another "
            ".at[] method: https://jax.ac.cn/en/latest/_autosummary/jax.numpy.ndarray."
            "at.html\n",
            note=_MIRROR_NOTE,
        ),
        Example(
            "Array updates: x.at[idx].set(y) · .at[].set()",
            """\
updated_array = jax_array.at[1, :].set(1.0)
print("updated array:\\n", updated_array)
""",
            """\
updated array:
[[0. 0. 0.]
[1. 1. 1.]
[0. 0. 0.]]
""",
        ),
        Example(
            "Array updates: x.at[idx].set(y) · original array unchanged",
            """\
print("original array unchanged:\\n", jax_array)
""",
            """\
original array unchanged:
[[0. 0. 0.]
[0. 0. 0.]
[0. 0. 0.]]
""",
        ),
        Example(
            "Array updates with other operations · .at[].add()",
            """\
print("original array:")
jax_array = jnp.ones((5, 6))
print(jax_array)
new_jax_array = jax_array.at[::2, 3:].add(7.)
print("new array post-addition:")
print(new_jax_array)
""",
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
        ),
        Example(
            "Out-of-bounds indexing · NumPy out-of-bounds index",
            "np.arange(10)[11]\n",
            "IndexError: index 11 is out of bounds for axis 0 with size 10\n",
        ),
        Example(
            "Out-of-bounds indexing · JAX out-of-bounds index",
            "jnp.arange(10)[11]\n",
            "Array(9, dtype=int32)\n",
        ),
        Example(
            "Out-of-bounds indexing · .at[].get() out of bounds",
            "jnp.arange(10.0).at[11].get()\n",
            "Array(9., dtype=float32)\n",
        ),
        Example(
            "Out-of-bounds indexing · .at[].get(mode='fill')",
            "jnp.arange(10.0).at[11].get(mode='fill', fill_value=jnp.nan)\n",
            "Array(nan, dtype=float32)\n",
        ),
        Example(
            "Non-array inputs: NumPy vs. JAX · np.sum of a list",
            "np.sum([1, 2, 3])\n",
            f"np.{_NUMPY_INT}(6)\n",
            note=""
            if _NUMPY_INT == "int64"
            else f"NumPy's own default integer here is {_NUMPY_INT}; the seed's "
            "64-bit platform's is int64",
        ),
        Example(
            "Non-array inputs: NumPy vs. JAX · jnp.sum of a list",
            "jnp.sum([1, 2, 3])\n",
            "TypeError: sum requires ndarray or scalar arguments, got <class 'list'> at "
            "position 0.\n",
        ),
        Example(
            "Non-array inputs: NumPy vs. JAX · permissive_sum",
            """\
def permissive_sum(x):
    return jnp.sum(jnp.array(x))

x = list(range(10))
permissive_sum(x)
""",
            "Array(45, dtype=int32)\n",
        ),
        Example(
            "Non-array inputs: NumPy vs. JAX · jaxpr of permissive_sum",
            "make_jaxpr(permissive_sum)(x)\n",
            """\
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
"""
            + "".join(
                f"""\
    {out}:i32[1] = broadcast_in_dim[
      broadcast_dimensions=()
      shape=(1,)
      sharding=None
    ] {arg}
"""
                for out, arg in zip(
                    "u v w x y z ba bb bc bd".split(), "k l m n o p q r s t".split()
                )
            )
            + """\
    be:i32[10] = concatenate[dimension=0] u v w x y z ba bb bc bd
    bf:i32[] = reduce_sum[axes=(0,)] be
  in (bf,) }
""",
        ),
        Example(
            "Non-array inputs: NumPy vs. JAX · explicit jnp.array",
            "jnp.sum(jnp.array(x))\n",
            "Array(45, dtype=int32)\n",
        ),
        Example(
            "Dynamic shapes · nansum with a boolean mask",
            """\
def nansum(x):
    mask = ~jnp.isnan(x)  # boolean mask selecting non-nan values
    x_without_nans = x[mask]
    return x_without_nans.sum()
""",
        ),
        Example(
            "Dynamic shapes · nansum outside jit",
            """\
x = jnp.array([1, 2, jnp.nan, 3, 4])
print(nansum(x))
""",
            "10.0\n",
        ),
        Example(
            "Dynamic shapes · nansum under jit",
            "jax.jit(nansum)(x)\n",
            """\
NonConcreteBooleanIndexError: Array boolean indices must be concrete; got ShapedArray(bool[5])
See https://jax.ac.cn/en/latest/errors.html#jax.errors.NonConcreteBooleanIndexError
""",
            note=_MIRROR_NOTE,
        ),
        Example(
            "Dynamic shapes · nansum_2 with jnp.where",
            """\
@jax.jit
def nansum_2(x):
    mask = ~jnp.isnan(x)  # boolean mask selecting non-nan values
    return jnp.where(mask, x, 0).sum()

print(nansum_2(x))
""",
            "10.0\n",
        ),
        # The seed ran the two NaN cells in an IPython session started with
        # JAX_DEBUG_NANS=True and shows the full tracebacks of an older JAX (ending in
        # `FloatingPointError: invalid value`). The tour shows an exception as its last
        # line; the message and the de-optimization line are JAX 0.10.2's, which
        # names the primitive (`div`). jnp.divide is not itself jitted in jaxlite, so
        # the first cell prints no de-optimization line (0.10.2 prints one).
        Example(
            "NaNs · Debugging NaNs · jnp.divide(0., 0.) with JAX_DEBUG_NANS=True",
            """\
import jax.numpy as jnp
jnp.divide(0., 0.)
""",
            "FloatingPointError: invalid value (nan) encountered in div\n",
            standalone=True,
            env=(("JAX_DEBUG_NANS", "True"),),
            note="the seed shows the whole traceback; here its last line, worded as "
            "in JAX 0.10.2",
        ),
        Example(
            "NaNs · Debugging NaNs · NaN inside a jit function",
            """\
from jax import jit

@jit
def f(x, y):
    a = x * y
    b = (x + y) / (x - y)
    c = a + 2
    return a + b * c

x = jnp.array([2., 0.])
y = jnp.array([3., 0.])
f(x, y)
""",
            """\
Invalid nan value encountered in the output of a jax.jit function. Calling the de-optimized version.
FloatingPointError: invalid value (nan) encountered in div
""",
            setup="import jax.numpy as jnp\n",  # the previous cell of the session
            standalone=True,
            env=(("JAX_DEBUG_NANS", "True"),),
            note="the seed shows the traceback, which points at "
            "`b = (x + y) / (x - y)`; here its last line, worded as in JAX 0.10.2",
        ),
        Example(
            "Double (64-bit) precision · float64 requested without x64",
            """\
x = random.uniform(random.key(0), (1000,), dtype=jnp.float64)
x.dtype
""",
            "UserWarning: Explicitly requested dtype float64 is not available, and will "
            "be truncated to dtype float32. To enable more dtypes, set the jax_enable_x64 "
            "configuration option or the JAX_ENABLE_X64 shell environment variable. See "
            "https://github.com/jax-ml/jax#current-gotchas for more.\n"
            "dtype('float32')\n",
            note="the seed's older JAX names the dtype <class 'jax.numpy.float64'>; "
            "JAX 0.10.2 says float64",
        ),
        Example(
            "Double (64-bit) precision · enable x64 with jax.config.update",
            """\
# again, this only works on startup!
import jax
jax.config.update("jax_enable_x64", True)
""",
            standalone=True,
        ),
        Example(
            "Double (64-bit) precision · enable x64 via absl flags",
            """\
import jax
jax.config.config_with_absl()
""",
            standalone=True,
        ),
        Example(
            "Double (64-bit) precision · let JAX run absl parsing",
            """\
import jax
if __name__ == '__main__':
    # calls jax.config.config_with_absl() *and* runs absl parsing
    jax.config.parse_flags_with_absl()
""",
            standalone=True,
        ),
        Example(
            "Double (64-bit) precision · confirm x64 is enabled",
            """\
import jax
import jax.numpy as jnp
from jax import random

jax.config.update("jax_enable_x64", True)

x = random.uniform(random.key(0), (1000,), dtype=jnp.float64)
x.dtype  # --> dtype('float64')
""",
            "dtype('float64')\n",
            standalone=True,
            note="the seed's cell shows no output; its comment gives the value, "
            "which the tour displays as a notebook (and JAX 0.10.2) does",
        ),
        Example(
            "Miscellaneous divergences from NumPy · unsafe cast to uint8 — NumPy",
            "np.arange(254.0, 258.0).astype('uint8')\n",
            "array([254, 255, 0, 1], dtype=uint8)\n",
        ),
        Example(
            "Miscellaneous divergences from NumPy · unsafe cast to uint8 — JAX",
            "jnp.arange(254.0, 258.0).astype('uint8')\n",
            "Array([254, 255, 255, 255], dtype=uint8)\n",
        ),
    ),
    "002",
)


def _page(title, examples, seeds):
    """A page from `tour_callbacks` data: tuples of fields, an optional dict last."""
    return Page(
        title,
        tuple(
            Example(*e[:-1], **e[-1]) if isinstance(e[-1], dict) else Example(*e)
            for e in examples
        ),
        seeds,
    )


EXTERNAL_CALLBACKS = _page(
    tour_callbacks.EXTERNAL_CALLBACKS_TITLE,
    tour_callbacks.EXTERNAL_CALLBACKS,
    "001 and 000",
)
PURE_CALLBACK_API = _page(
    tour_callbacks.PURE_CALLBACK_API_TITLE, tour_callbacks.PURE_CALLBACK_API, "003"
)

PAGES = (EXTERNAL_CALLBACKS, PURE_CALLBACK_API, SHARP_BITS)


# ----------------------------------------------------------------------------------------
# Running examples

_IMPORT_REWRITES = (
    (re.compile(r"^(\s*)import jax\s*(#.*)?$", re.M), r"\1import jaxlite as jax"),
    (
        re.compile(r"^(\s*)import jax\.([\w.]+) as (\w+)", re.M),
        r"\1import jaxlite.\2 as \3",
    ),
    (re.compile(r"^(\s*)from jax(\.[\w.]+)? import", re.M), r"\1from jaxlite\2 import"),
)


def to_jaxlite(source: str) -> str:
    """The example's code with its `import jax` lines importing jaxlite instead."""
    for pattern, replacement in _IMPORT_REWRITES:
        source = pattern.sub(replacement, source)
    return source


def _print_warning(message, category, filename, lineno, file=None, line=None):
    print(f"{category.__name__}: {message}")


def _exec_cell(source: str, namespace: dict, filename: str):
    """Run `source` like a notebook cell: display the value of a final expression."""
    tree = ast.parse(source, filename)
    last = None
    silenced = source.rstrip().endswith(";")  # a notebook shows no value after `;`
    if tree.body and isinstance(tree.body[-1], ast.Expr) and not silenced:
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, filename, "exec"), namespace)
    if last is not None:
        value = eval(compile(last, filename, "eval"), namespace)
        if value is not None:
            print(repr(value))


def run_example(example: Example, namespace: dict) -> str:
    """Run one example in `namespace` and return everything it printed."""
    if example.standalone:
        return _run_standalone(example)
    out = io.StringIO()
    filename = f"<tour: {example.title}>"
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = _print_warning
        try:
            if example.setup:
                exec(compile(to_jaxlite(example.setup), filename, "exec"), namespace)
            _exec_cell(to_jaxlite(example.source), namespace, filename)
        except Exception as e:  # the cell ends with the exception line, as in the seed
            print(f"{type(e).__name__}: {e}")
    return out.getvalue()


# A standalone example runs as a cell of its own in a fresh process, printing exactly
# what `run_example` returns for it there.
_STANDALONE_MAIN = """\
import sys
from jaxlite.tour import Example, new_namespace, run_example
title, source, setup = sys.argv[1:]
sys.stdout.write(run_example(Example(title, source, setup=setup), new_namespace()))
"""


def _run_standalone(example: Example) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAX_")}
    env.update(example.env)
    # The fresh process imports the same jaxlite as this one.
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (package_root, env.get("PYTHONPATH")) if p
    )
    args = [example.title, example.source, example.setup]
    proc = subprocess.run(
        [sys.executable, "-c", _STANDALONE_MAIN, *args],
        capture_output=True,
        text=True,
        env=env,
    )
    output = proc.stdout
    if proc.returncode:
        lines = proc.stderr.strip().splitlines()
        output += (lines[-1] if lines else f"exit status {proc.returncode}") + "\n"
    return output


def new_namespace() -> dict:
    return {"__name__": "__main__"}


def normalize(text: str) -> str:
    """Text up to whitespace (the seeds lost indentation and runs of spaces) and up to
    the host of documentation links (one seed was scraped from a mirror)."""
    for mirror, canonical in _MIRRORS:
        text = text.replace(mirror, canonical)
    return " ".join(text.split())


def matches(output: str, expected: str) -> bool:
    return normalize(output) == normalize(expected)


def run_page(page: Page):
    """Run a page's examples in order in one namespace: yields (example, output)."""
    namespace = new_namespace()
    for example in page.examples:
        yield example, run_example(example, namespace)


# ----------------------------------------------------------------------------------------
# Printing


def _indent(text: str, prefix: str) -> str:
    lines = text.rstrip("\n").splitlines()
    return "".join((prefix + line).rstrip() + "\n" for line in lines)


def _status(example: Example, page: Page, ok: bool) -> str:
    seeds = example.seeds or page.seeds
    if not ok:
        return f"[DIFFERS from seed {seeds}, which prints:]"
    if example.note:
        return f"[as in seed {seeds}, up to form: {example.note}]"
    return f"[as in seed {seeds}]"


def _report(page: Page, example: Example, output: str, ok: bool, quiet: bool):
    if quiet and ok:
        return
    print(f"\n--- {example.title} " + "-" * max(3, 83 - len(example.title)))
    if example.standalone:
        env = " ".join(f"{k}={v}" for k, v in example.env)
        where = f" with {env}" if env else ""
        print(f"(runs in a fresh Python process{where})")
    print(_indent(example.source, "    "), end="")
    print("prints:" if output.strip() else "prints nothing.")
    if output.strip():
        print(_indent(output, "  | "), end="")
    print(_status(example, page, ok))
    if not ok:
        print(_indent(example.expected or "(nothing)", "  | "), end="")


def _parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="python -m jaxlite.tour",
        description="Run every code example of the seed documents (JAX's External "
        "callbacks tutorial, the pure_callback API page and Sharp bits) with jaxlite, "
        "print what each prints and whether that is what the seed prints. Exits "
        "with status 1 if any example differs.",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="print only the examples that differ and the count",
    )
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = _parse_args(sys.argv[1:] if argv is None else argv)
    total = matched = 0
    for page in PAGES:
        if not args.check:
            print("=" * 88)
            print(page.title)
            print("=" * 88)
        for example, output in run_page(page):
            ok = matches(output, example.expected)
            total += 1
            matched += ok
            _report(page, example, output, ok, args.check)
    print(f"\n{matched} of {total} examples print what the seeds print.")
    return 0 if matched == total else 1


def _main_quiet_on_closed_pipe() -> int:
    """`main`, ending quietly when stdout is closed early (`... | head`)."""
    try:
        status = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # Python would report the failed flush of stdout at exit: point it at devnull.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, as a shell reports a command killed by it
    return status


if __name__ == "__main__":
    sys.exit(_main_quiet_on_closed_pipe())
