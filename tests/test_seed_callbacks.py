"""Every code example of the External callbacks tutorial (seeds 001 and 000) and of the
`pure_callback` API page (seed 003), run as the seeds run them, with the printed output.

The examples are the data of `jaxlite.tour_callbacks`. A page's examples run in order in
one namespace, like notebook cells: `import jax` imports jaxlite, a final expression is
displayed unless the cell ends with `;`, an exception ends the cell with its
`Name: message` line and a warning prints as `Category: message`. Outputs are compared
up to whitespace (the scraped seeds lost runs of spaces). Seed 000 is 001 in Chinese:
the same code, and the same output except that its notebook showed each warning once
per cell. Beyond the printed text, the Bessel example's values are checked under jit,
vmap and grad.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import re
import warnings
from functools import partial

import numpy as np
import pytest

import jaxlite
from jaxlite.tour_callbacks import EXTERNAL_CALLBACKS, PURE_CALLBACK_API

_IMPORT_REWRITES = (
    (re.compile(r"^(\s*)import jax\s*$", re.M), r"\1import jaxlite as jax"),
    (
        re.compile(r"^(\s*)import jax\.([\w.]+) as (\w+)", re.M),
        r"\1import jaxlite.\2 as \3",
    ),
    (re.compile(r"^(\s*)from jax(\.[\w.]+)? import", re.M), r"\1from jaxlite\2 import"),
)


def _to_jaxlite(source):
    for pattern, replacement in _IMPORT_REWRITES:
        source = pattern.sub(replacement, source)
    assert not re.search(r"^\s*(import|from) jax\b", source, re.M), source
    return source


def _run_cell(source, namespace, filename):
    tree = ast.parse(source, filename)
    last = None
    quiet = source.rstrip().endswith(";")
    if tree.body and isinstance(tree.body[-1], ast.Expr) and not quiet:
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, filename, "exec"), namespace)
    if last is not None:
        value = eval(compile(last, filename, "eval"), namespace)
        if value is not None:
            print(repr(value))


def _run_example(example, namespace, warning_action):
    title, source = example[:2]
    setup = [f for f in example[3:4] if isinstance(f, str) and f]
    out = io.StringIO()
    filename = f"<seed: {title}>"

    def show(message, category, *args, **kwargs):
        print(f"{category.__name__}: {message}")

    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter(warning_action)
        warnings.showwarning = show
        try:
            if setup:
                exec(compile(_to_jaxlite(setup[0]), filename, "exec"), namespace)
            _run_cell(_to_jaxlite(source), namespace, filename)
        except Exception as e:
            print(f"{type(e).__name__}: {e}")
    return out.getvalue()


def _normalize(text):
    return " ".join(text.split())


def _once_per_cell(expected):
    """The output with each warning line shown once (the 000 notebook's display)."""
    seen, lines = set(), []
    for line in expected.splitlines():
        if "Warning: " in line:
            if line in seen:
                continue
            seen.add(line)
        lines.append(line)
    return "\n".join(lines)


def _needs_missing_module(title):
    """The tutorial's Bessel section calls scipy.special, and SciPy has no build on some
    platforms jaxlite runs on (PyPy among them)."""
    if title.startswith("Example: pure_callback with custom_jvp"):
        if importlib.util.find_spec("scipy") is None:
            return "the Bessel example calls scipy.special: SciPy is not installed"
    return None


_PAGES = {
    "001": (EXTERNAL_CALLBACKS, "always", lambda e: e),
    "000": (EXTERNAL_CALLBACKS, "default", _once_per_cell),
    "003": (PURE_CALLBACK_API, "always", lambda e: e),
}
_outputs: dict = {}


def _page_outputs(page):
    if page not in _outputs:
        examples, action, _ = _PAGES[page]
        namespace = {"__name__": "__main__"}
        _outputs[page] = [_run_example(ex, namespace, action) for ex in examples]
    return _outputs[page]


_CASES = [
    pytest.param(page, i, id=f"{page}-{i:02d}-{ex[0]}")
    for page, (examples, _, _) in _PAGES.items()
    for i, ex in enumerate(examples)
]


@pytest.mark.parametrize("page,index", _CASES)
def test_seed_example(page, index):
    examples, _, expect = _PAGES[page]
    example = examples[index]
    missing = _needs_missing_module(example[0])
    if missing:
        pytest.skip(missing)
    output = _page_outputs(page)[index]
    assert _normalize(output) == _normalize(expect(example[2])), output


# ----------------------------------------------------------------------------------------
# The Bessel example's values, under the transformations the tutorial names


def _bessel():
    special = pytest.importorskip("scipy.special")

    jax, jnp = jaxlite, jaxlite.numpy

    def jv(v, z):
        v, z = jnp.asarray(v), jnp.asarray(z)
        assert jnp.issubdtype(v.dtype, jnp.integer)
        z = z.astype(jnp.result_type(float, z.dtype))
        _scipy_jv = lambda v, z: special.jv(v, z).astype(z.dtype)
        result_shape_dtype = jax.ShapeDtypeStruct(
            shape=jnp.broadcast_shapes(v.shape, z.shape), dtype=z.dtype
        )
        return jax.pure_callback(
            _scipy_jv, result_shape_dtype, v, z, vmap_method="legacy_vectorized"
        )

    jv = jax.custom_jvp(jv)

    @jv.defjvp
    def _jv_jvp(primals, tangents):
        v, z = primals
        _, z_dot = tangents
        jv_minus_1, jv_plus_1 = jv(v - 1, z), jv(v + 1, z)
        djv_dz = jnp.where(v == 0, -jv_plus_1, 0.5 * (jv_minus_1 - jv_plus_1))
        return jv(v, z), z_dot * djv_dz

    return partial(jv, 1)


@pytest.mark.parametrize("wrap", ["plain", "jit"])
def test_bessel_grad_and_hessian(wrap):
    jax = jaxlite
    j1 = _bessel()
    w = jax.jit if wrap == "jit" else (lambda f: f)
    g = w(jax.grad(j1))(2.0)
    np.testing.assert_allclose(np.asarray(g), -0.06447162, rtol=1e-6)
    h = w(jax.hessian(j1))(2.0)
    np.testing.assert_allclose(np.asarray(h), -0.4003078, rtol=1e-6)


def test_bessel_under_vmap():
    special = pytest.importorskip("scipy.special")

    jax, jnp = jaxlite, jaxlite.numpy
    j1 = _bessel()
    zs = jnp.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(
        np.asarray(jax.vmap(j1)(zs)), special.jv(1, [1.0, 2.0, 3.0]), rtol=1e-6
    )
    grads = jax.vmap(jax.grad(j1))(zs)
    expected = 0.5 * (special.jv(0, [1.0, 2.0, 3.0]) - special.jv(2, [1.0, 2.0, 3.0]))
    np.testing.assert_allclose(np.asarray(grads), expected, rtol=1e-5)
    assert abs(float(jax.vmap(jax.grad(j1))(jnp.array([2.0]))[0]) + 0.06447162) < 1e-6
    hess = jax.jit(jax.vmap(jax.hessian(j1)))(jnp.array([2.0, 2.0]))
    np.testing.assert_allclose(np.asarray(hess), [-0.4003078, -0.4003078], rtol=1e-6)


def test_bessel_vectorized_alias_warns_and_matches():
    special = pytest.importorskip("scipy.special")

    jax, jnp = jaxlite, jaxlite.numpy

    def jv(v, z):
        _scipy_jv = lambda v, z: special.jv(v, z).astype(z.dtype)
        sds = jax.ShapeDtypeStruct(jnp.broadcast_shapes(v.shape, z.shape), z.dtype)
        return jax.pure_callback(_scipy_jv, sds, v, z, vectorized=True)

    z = jnp.arange(5.0)
    with pytest.warns(DeprecationWarning, match="The vectorized argument"):
        out = jax.vmap(partial(jv, jnp.asarray(1)))(z)
    np.testing.assert_allclose(
        np.asarray(out), special.jv(1, np.arange(5.0)), rtol=1e-6
    )
