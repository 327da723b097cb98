"""Run one program on jaxlite and on real JAX, each in a fresh process, and compare.

A program is the source of a script that `import jax`s and stores what it computes
in a dict named `results` (names to numbers or nested lists of numbers). It runs
twice, concurrently:

- on jaxlite: `python -m jaxlite prog.py`, with `jaxlib` blocked (as where jaxlib is
  not installed) and, at the end, a check that no module of the real JAX or jaxlib was
  loaded;
- on JAX: `python prog.py`, with JAXLITE_AS_JAX removed from the environment.

The alias is never installed in the pytest process. Both runs are CPU-only and
single-threaded where the libraries allow (they share a small machine). JAX's results
can be cached (see conftest.py): they depend only on the program and the versions of
the libraries, and JAX's compilations dominate the time of these tests.

Float32 results that are deterministic functions of the seed are compared to 1e-4
relative (`assert_close`); samplers whose chains are chaotic in float32 (NUTS) are
compared statistically (`assert_same_posterior`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import textwrap
from importlib import metadata

import numpy as np
import pytest

MARKER = "@@ECOSYSTEM-RESULTS@@"

# Whose versions decide JAX's results (the reference cache's key).
REFERENCE_DISTRIBUTIONS = (
    "jax", "jaxlib", "numpy", "scipy", "ml_dtypes", "optax", "jaxopt", "flax",
    "equinox", "diffrax", "lineax", "optimistix", "chex", "distrax", "tfp-nightly",
    "numpyro", "blackjax", "jaxtyping",
)  # fmt: skip

_PRELUDE_JAXLITE = """\
import sys as _sys
_sys.modules["jaxlib"] = None  # as where jaxlib is not installed
"""

_POSTLUDE = """
import json as _json
import sys as _sys
import numpy as _np


def _plain(value):
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (str, bool)) or value is None:
        return value
    return _np.asarray(value, dtype=_np.float64).tolist()


if CHECK_NO_JAX:
    import importlib.machinery as _machinery
    import os as _os

    _roots = []
    for _name in ("jax", "jaxlib"):
        _spec = _machinery.PathFinder.find_spec(_name)
        if _spec is not None and _spec.submodule_search_locations:
            _roots += [_os.path.join(p, "") for p in _spec.submodule_search_locations]
    _leaked = sorted(
        _name
        for _name, _module in list(_sys.modules.items())
        if any(
            (getattr(_module, "__file__", None) or "").startswith(_root)
            for _root in _roots
        )
    )
    assert not _leaked, f"real JAX modules were imported under the alias: {_leaked}"
    assert type(_sys.modules["jax"]).__name__ == "_JaxModule", _sys.modules["jax"]
print(MARKER)
print(_json.dumps(_plain(results)))
"""


def pending(piece, error):
    """xfail (strict) while jaxlite lacks `piece`, which others are building: the
    program must fail on jaxlite (a comparison failure is a real failure), and the
    test fails as soon as it passes, so that the mark is removed."""
    return pytest.mark.xfail(
        strict=True, raises=ProgramFailed, reason=f"needs {piece}; fails with {error}"
    )


def require(*names):
    """Skip the test module unless every library named is installed (found without
    importing it: importing would load the real JAX into the pytest process)."""
    for name in names:
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"{name} is not installed", allow_module_level=True)


def _environment(*, alias):
    env = {k: v for k, v in os.environ.items() if k != "JAXLITE_AS_JAX"}
    env.update(
        JAX_PLATFORMS="cpu",
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        PYTHONWARNINGS="ignore",
        TF_CPP_MIN_LOG_LEVEL="3",
    )
    if not alias:
        env.pop("JAXLITE_BACKEND", None)
    return env


def _start(source, tmp_path, *, alias):
    name = "prog_jaxlite.py" if alias else "prog_jax.py"
    path = pathlib.Path(tmp_path) / name
    text = (_PRELUDE_JAXLITE if alias else "") + textwrap.dedent(source)
    text += _POSTLUDE.replace("CHECK_NO_JAX", repr(alias)).replace(
        "MARKER", repr(MARKER)
    )
    path.write_text(text)
    runner = ["-m", "jaxlite"] if alias else []
    return subprocess.Popen(
        [sys.executable, *runner, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_environment(alias=alias),
        cwd=tmp_path,
    )


def _finish(proc, label, timeout):
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"the program on {label} ran past {timeout} s:\n{err[-3000:]}")
    if proc.returncode != 0 or MARKER not in out:
        raise ProgramFailed(label, first_error(err), err)
    return json.loads(out.split(MARKER, 1)[1])


class ProgramFailed(AssertionError):
    """The program exited with an error on one of the two libraries."""

    def __init__(self, label, error, stderr):
        super().__init__(f"the program failed on {label}: {error}\n\n{stderr[-4000:]}")
        self.label = label
        self.error = error


def first_error(stderr):
    """The last line of a traceback: the exception raised."""
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    for line in reversed(lines):
        if not line.startswith((" ", "\t")) and (
            "Error" in line or "Exception" in line
        ):
            return line.strip()
    return lines[-1] if lines else "(no output)"


def _cache_key(source):
    """The reference results' key: the program, the harness, and the versions of
    Python and of every distribution the programs use."""
    digest = hashlib.sha256()
    for text in (source, _POSTLUDE, sys.version):
        digest.update(text.encode())
    for dist in REFERENCE_DISTRIBUTIONS:
        try:
            digest.update(f"{dist}=={metadata.version(dist)};".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{dist} absent;".encode())
    return f"jaxlite/ecosystem/{digest.hexdigest()[:32]}"


def run_both(source, tmp_path, *, cache=None, timeout=240):
    """Run `source` on jaxlite and on JAX concurrently; returns (jaxlite, jax) results.

    Raises ProgramFailed when the program fails on jaxlite (without waiting for JAX),
    and fails the test when it fails on JAX (a broken program, not a jaxlite bug).
    With `cache` (pytest's `config.cache`), JAX's results are kept under a key naming
    the program and every version involved, and a later run with the same key starts
    only jaxlite."""
    key = _cache_key(source)
    reference = cache.get(key, None) if cache is not None else None
    jaxlite_proc = _start(source, tmp_path, alias=True)
    jax_proc = None if reference is not None else _start(source, tmp_path, alias=False)
    try:
        ours = _finish(jaxlite_proc, "jaxlite", timeout)
    except BaseException:
        if jax_proc is not None:
            jax_proc.kill()
            jax_proc.communicate()
        raise
    if jax_proc is not None:
        try:
            reference = _finish(jax_proc, "JAX", timeout)
        except ProgramFailed as exc:
            pytest.fail(f"the reference run failed (the program is wrong): {exc}")
        if cache is not None:
            cache.set(key, reference)
    return ours, reference


def _is_rectangular(values):
    try:
        np.asarray(values, dtype=np.float64)
    except (ValueError, TypeError):
        return False
    return True


def assert_close(actual, expected, *, rtol=1e-4, atol=1e-6, path="results"):
    """Every number of `actual` within rtol (relative) of `expected`; the same keys."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: {actual!r} is not a dict"
        assert sorted(actual) == sorted(expected), f"{path}: keys differ"
        for key in expected:
            assert_close(
                actual[key], expected[key], rtol=rtol, atol=atol, path=f"{path}.{key}"
            )
        return
    if isinstance(expected, (str, bool)) or expected is None:
        assert actual == expected, f"{path}: {actual!r} != {expected!r}"
        return
    if isinstance(expected, list) and not _is_rectangular(expected):
        assert isinstance(actual, list), f"{path}: {actual!r} is not a list"
        assert len(actual) == len(expected), f"{path}: lengths differ"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_close(a, e, rtol=rtol, atol=atol, path=f"{path}[{i}]")
        return
    np.testing.assert_allclose(
        np.asarray(actual, dtype=np.float64),
        np.asarray(expected, dtype=np.float64),
        rtol=rtol,
        atol=atol,
        err_msg=path,
    )


def assert_same_posterior(actual, expected, *, sigmas=5.0):
    """Two samplers' summaries of the same posterior agree statistically.

    `actual` and `expected` map each variable to {"mean", "std", "n_eff"} (arrays of
    the variable's shape), as `numpyro.diagnostics.summary` gives them. Each sampler's
    mean has standard error std / sqrt(n_eff); the means must agree within `sigmas`
    combined standard errors, and the standard deviations within `sigmas` times their
    own relative standard error, about 1 / sqrt(2 n_eff) each. jaxlite's chains must
    also mix: an effective sample size of at least a quarter of JAX's (or 50)."""
    assert sorted(actual) == sorted(expected), "the samplers' variables differ"
    for name in expected:
        a = {k: np.asarray(v, dtype=np.float64) for k, v in actual[name].items()}
        b = {k: np.asarray(v, dtype=np.float64) for k, v in expected[name].items()}
        assert np.isfinite(a["mean"]).all() and np.isfinite(a["std"]).all(), name
        assert (a["n_eff"] >= np.minimum(50.0, b["n_eff"] / 4)).all(), (
            f"{name}: jaxlite's effective sample size {a['n_eff']} against JAX's "
            f"{b['n_eff']}: the chains do not mix"
        )
        se = np.sqrt(a["std"] ** 2 / a["n_eff"] + b["std"] ** 2 / b["n_eff"])
        diff = np.abs(a["mean"] - b["mean"])
        assert (diff <= sigmas * se).all(), (
            f"{name}: posterior mean {a['mean']} (jaxlite) vs {b['mean']} (JAX) "
            f"differ by more than {sigmas} standard errors ({se})"
        )
        rel_se = np.sqrt(0.5 / a["n_eff"] + 0.5 / b["n_eff"])
        ratio = np.abs(np.log(a["std"] / b["std"]))
        assert (ratio <= sigmas * rel_se).all(), (
            f"{name}: posterior std {a['std']} (jaxlite) vs {b['std']} (JAX) differ "
            f"by more than {sigmas} relative standard errors ({rel_se})"
        )
