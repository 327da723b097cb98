"""Run a bounded part of each JAX library's own test suite on jaxlite and on JAX.

    python tools/ecosystem_suites.py [LIB ...] [--side jax|jaxlite|both]
        [--cache DIR] [--git LIB=GITDIR ...] [--timeout SECONDS] [--json FILE]
        [--failures N] [--list]

For each library (all of SUITES by default, or the LIBs named) that is installed,
the script finds the library's tests at the installed version, runs the selection
below with pytest once on real JAX (`python -m pytest ...`) and once on jaxlite
(`python -m jaxlite -m pytest ...`, which makes `import jax` load jaxlite), and
prints the pass counts side by side, the most frequent failure messages on jaxlite
(`--failures N`, 5 by default), then the counts as JSON; `--json FILE` also gets every
failing test with its message and the seconds spent per test module.

Where the tests come from, in this order:
- the installed package, when it ships its tests (optax, chex, distrax);
- the cache directory (`--cache`, default ~/.cache/jaxlite-ecosystem-suites), which
  holds the tests fetched before, one folder per library and version;
- the library's sdist from PyPI (`pip download --no-deps --no-binary :all:`), when
  it contains the tests (flax, numpyro, blackjax);
- the library's GitHub repository at the version's tag: a local clone or mirror
  given with `--git LIB=GITDIR` (`git archive`), else `git clone --depth 1`.
A library whose tests cannot be found is reported as "unavailable".

Each selection is a few test files (and sometimes a `-k` expression) that run on
JAX in about one to three minutes on a small machine; `--timeout` (default 900 s)
bounds each pytest run. A test counts as passed, failed (failures and errors,
collection errors included) or skipped (xfails too), from pytest's JUnit XML.

Examples:
    python tools/ecosystem_suites.py optax chex
    python tools/ecosystem_suites.py --side jaxlite --json suites.json
    python tools/ecosystem_suites.py equinox --git equinox=~/src/equinox/.git
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from importlib import metadata


@dataclasses.dataclass(frozen=True)
class Suite:
    """Where a library's tests live and which of them to run.

    `source` is "package" (shipped inside the installed package), "sdist" or
    "github". `tests` is the folder of the tests inside the source tree (or the
    package), `files` the test files to run relative to it, `deselect` a `-k`
    expression of tests to leave out. `repo` and `tag` (a format string taking the
    version) name the GitHub repository."""

    dist: str
    module: str
    source: str
    tests: str
    files: tuple[str, ...]
    deselect: str = ""
    repo: str = ""
    tag: str = "v{version}"


SUITES = {
    "optax": Suite(
        "optax",
        "optax",
        "package",
        "optax",
        (
            "_src/transform_test.py",
            "_src/combine_test.py",
            "_src/update_test.py",
            "schedules/_schedule_test.py",
            "losses/_classification_test.py",
            "losses/_regression_test.py",
            "transforms/_clipping_test.py",
            "tree_utils/_tree_math_test.py",
        ),
    ),
    "chex": Suite(
        "chex",
        "chex",
        "package",
        "chex",
        (
            "_src/asserts_internal_test.py",
            "_src/dataclass_test.py",
            "_src/variants_test.py",
            "_src/fake_test.py",
        ),
    ),
    "distrax": Suite(
        "distrax",
        "distrax",
        "package",
        "distrax",
        (
            "_src/distributions/normal_test.py",
            "_src/bijectors/scalar_affine_test.py",
            "_src/bijectors/chain_test.py",
            "_src/utils/math_test.py",
        ),
    ),
    "flax": Suite(
        "flax",
        "flax",
        "sdist",
        "tests",
        (
            "linen/linen_module_test.py",
            "linen/linen_recurrent_test.py",
            "linen/linen_transforms_test.py",
            "core/core_lift_test.py",
            "core/core_scope_test.py",
            "nnx/module_test.py",
            "nnx/nn/linear_test.py",
        ),
    ),
    "numpyro": Suite(
        "numpyro",
        "numpyro",
        "sdist",
        "test",
        ("test_handlers.py", "test_constraints.py", "test_diagnostics.py"),
    ),
    "blackjax": Suite(
        "blackjax",
        "blackjax",
        "sdist",
        "tests",
        (
            "mcmc/test_integrators.py",
            "mcmc/test_proposal.py",
            "mcmc/test_uturn.py",
            "adaptation/test_step_size.py",
        ),
    ),
    "equinox": Suite(
        "equinox",
        "equinox",
        "github",
        "tests",
        (
            "test_module.py",
            "test_filters.py",
            "test_jit.py",
            "test_ad.py",
            "test_nn.py",
            "test_tree.py",
        ),
        repo="patrick-kidger/equinox",
    ),
    "diffrax": Suite(
        "diffrax",
        "diffrax",
        "github",
        "test",
        ("test_term.py", "test_saveat_solution.py", "test_interpolation.py"),
        repo="patrick-kidger/diffrax",
    ),
    "jaxopt": Suite(
        "jaxopt",
        "jaxopt",
        "github",
        "tests",
        (
            "gradient_descent_test.py",
            "bisection_test.py",
            "implicit_diff_test.py",
            "tree_util_test.py",
            "loss_test.py",
        ),
        repo="google/jaxopt",
        tag="jaxopt-v{version}",
    ),
    "lineax": Suite(
        "lineax",
        "lineax",
        "github",
        "tests",
        ("test_operator.py", "test_solve.py"),
        repo="patrick-kidger/lineax",
    ),
    "optimistix": Suite(
        "optimistix",
        "optimistix",
        "github",
        "tests",
        ("test_fixed_point.py", "test_misc.py", "test_best_so_far.py"),
        repo="patrick-kidger/optimistix",
    ),
}

DEFAULT_CACHE = pathlib.Path("~/.cache/jaxlite-ecosystem-suites").expanduser()


# ----------------------------------------------------------------------------------------
# Finding the tests


class Unavailable(Exception):
    """The library's tests could not be found (the message says why)."""


def _run(cmd, **kwargs):
    return subprocess.run(cmd, capture_output=True, text=True, **kwargs)


def _package_dir(suite):
    spec = importlib.util.find_spec(suite.module)
    return pathlib.Path(next(iter(spec.submodule_search_locations))).parent


def _extract_tests(archive_members, extract, prefix, suite, dest):
    """Extract the members under `prefix + suite.tests` (and top-level conftest.py
    files) into `dest`, stripping `prefix`."""
    wanted = []
    for name in archive_members:
        rel = name[len(prefix) :] if name.startswith(prefix) else None
        if rel and (rel.startswith(suite.tests + "/") or rel == "conftest.py"):
            wanted.append((name, rel))
    if not wanted:
        raise Unavailable(f"no {suite.tests}/ folder in the archive")
    for name, rel in wanted:
        extract(name, dest / rel)


def _from_sdist(suite, version, dest):
    with tempfile.TemporaryDirectory() as tmp:
        proc = _run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--no-binary",
                ":all:",
                "-d",
                tmp,
                f"{suite.dist}=={version}",
            ],
            timeout=600,
        )
        archives = list(pathlib.Path(tmp).glob("*.tar.gz"))
        if proc.returncode != 0 or not archives:
            raise Unavailable(f"pip download failed: {proc.stderr.strip()[-300:]}")
        with tarfile.open(archives[0]) as tar:
            members = {m.name: m for m in tar.getmembers() if m.isfile()}
            prefix = archives[0].name[: -len(".tar.gz")] + "/"

            def extract(name, target):
                target.parent.mkdir(parents=True, exist_ok=True)
                with tar.extractfile(members[name]) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out)

            _extract_tests(members, extract, prefix, suite, dest)


def _from_git(suite, version, dest, git_dirs):
    tag = suite.tag.format(version=version)
    with tempfile.TemporaryDirectory() as tmp:
        git_dir = git_dirs.get(suite.dist)
        if git_dir is None:
            url = f"https://github.com/{suite.repo}"
            proc = _run(
                [
                    "git",
                    "clone",
                    "-q",
                    "--depth",
                    "1",
                    "--branch",
                    tag,
                    url,
                    tmp + "/r",
                ],
                timeout=600,
            )
            if proc.returncode != 0:
                raise Unavailable(
                    f"git clone {url} at {tag} failed ({proc.stderr.strip()[-200:]}); "
                    f"pass --git {suite.dist}=GITDIR with a clone of {suite.repo}"
                )
            git_dir = tmp + "/r/.git"
        archive = pathlib.Path(tmp) / "tests.tar"
        paths = [suite.tests]
        has_conftest = _run(
            ["git", "--git-dir", str(git_dir), "cat-file", "-e", f"{tag}:conftest.py"]
        )
        if has_conftest.returncode == 0:
            paths.append("conftest.py")
        proc = _run(
            ["git", "--git-dir", str(git_dir), "archive", "-o", str(archive), tag]
            + paths,
            timeout=600,
        )
        if proc.returncode != 0:
            raise Unavailable(f"git archive {tag}: {proc.stderr.strip()[-200:]}")
        with tarfile.open(archive) as tar:
            members = {m.name: m for m in tar.getmembers() if m.isfile()}

            def extract(name, target):
                target.parent.mkdir(parents=True, exist_ok=True)
                with tar.extractfile(members[name]) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out)

            _extract_tests(members, extract, "", suite, dest)


def find_tests(suite, version, cache, git_dirs):
    """The folder to run pytest in, and the test files' paths relative to it."""
    if suite.source == "package":
        root = _package_dir(suite)
        return root, [f"{suite.tests}/{f}" for f in suite.files]
    dest = cache / f"{suite.dist}-{version}"
    if not (dest / suite.tests).is_dir():
        partial = dest.with_name(dest.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        try:
            if suite.source == "sdist":
                _from_sdist(suite, version, partial)
            else:
                _from_git(suite, version, partial, git_dirs)
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)
            raise
        shutil.rmtree(dest, ignore_errors=True)
        partial.rename(dest)
    return dest, [f"{suite.tests}/{f}" for f in suite.files]


# ----------------------------------------------------------------------------------------
# Running them


def _environment(side):
    env = {k: v for k, v in os.environ.items() if k != "JAXLITE_AS_JAX"}
    env.update(JAX_PLATFORMS="cpu", PYTHONWARNINGS="ignore", TF_CPP_MIN_LOG_LEVEL="3")
    if side == "jax":
        env.pop("JAXLITE_BACKEND", None)
    return env


def _counts(junit):
    tree = ET.parse(junit)
    counts = collections.Counter()
    messages = []
    by_module = collections.Counter()
    for case in tree.iter("testcase"):
        module = (case.get("classname") or "").split(".")
        by_module[".".join(m for m in module if not m[:1].isupper())] += float(
            case.get("time") or 0
        )
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed"
                text = (child.get("message") or child.text or "").strip()
                name = f"{case.get('classname')}::{case.get('name')}"
                messages.append((name, text.splitlines()[0][:300] if text else ""))
            elif child.tag == "skipped" and outcome == "passed":
                outcome = "skipped"
        counts[outcome] += 1
    seconds = {m: round(t, 1) for m, t in by_module.most_common()}
    return counts, messages, seconds


def run_side(side, root, files, suite, timeout):
    """pytest on `files` under `root` on one side; a dict of counts and failures."""
    with tempfile.TemporaryDirectory() as tmp:
        junit = pathlib.Path(tmp) / "junit.xml"
        ini = pathlib.Path(tmp) / "pytest.ini"
        ini.write_text("[pytest]\n")  # none of jaxlite's (or the library's) settings
        runner = (
            ["-m", "jaxlite", "-m", "pytest"] if side == "jaxlite" else ["-m", "pytest"]
        )
        cmd = [
            sys.executable,
            *runner,
            "-q",
            "-p",
            "no:cacheprovider",
            "--continue-on-collection-errors",
            "-c",
            str(ini),
            "--rootdir",
            str(root),
            f"--junitxml={junit}",
            *files,
        ]
        if suite.deselect:
            cmd += ["-k", f"not ({suite.deselect})"]
        start = time.monotonic()
        try:
            proc = _run(cmd, cwd=root, env=_environment(side), timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"status": "timeout", "seconds": round(time.monotonic() - start)}
        seconds = round(time.monotonic() - start, 1)
        if not junit.exists():
            tail = (proc.stdout + proc.stderr).strip().splitlines()[-5:]
            return {"status": "error", "seconds": seconds, "output": tail}
        counts, messages, by_module = _counts(junit)
    return {
        "status": "ran",
        "seconds": seconds,
        "passed": counts["passed"],
        "failed": counts["failed"],
        "skipped": counts["skipped"],
        "failures": messages,
        "seconds_by_module": by_module,
    }


# ----------------------------------------------------------------------------------------
# Reporting


def _cell(result):
    if result is None:
        return "-"
    if result["status"] != "ran":
        return result["status"]
    total = result["passed"] + result["failed"]
    return f"{result['passed']}/{total} ({result['seconds']:.0f}s)"


def print_table(results, n_failures):
    print(f"{'library':<12} {'version':<9} {'JAX':>16} {'jaxlite':>16}  skipped")
    for lib, r in results.items():
        if "unavailable" in r:
            print(f"{lib:<12} {r['version']:<9} unavailable: {r['unavailable']}")
            continue
        skipped = r.get("jaxlite") or r.get("jax") or {}
        print(
            f"{lib:<12} {r['version']:<9} {_cell(r.get('jax')):>16} "
            f"{_cell(r.get('jaxlite')):>16}  {skipped.get('skipped', '-')}"
        )
    if not n_failures:
        return
    for lib, r in results.items():
        failures = (r.get("jaxlite") or {}).get("failures") or []
        if not failures:
            continue
        common = collections.Counter(message for _, message in failures)
        print(f"\n{lib}: most frequent failures on jaxlite ({len(failures)} in all)")
        for message, count in common.most_common(n_failures):
            print(f"  {count:4d}  {message}")


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("libs", nargs="*", help=f"of {', '.join(SUITES)} (all)")
    parser.add_argument("--side", choices=("jax", "jaxlite", "both"), default="both")
    parser.add_argument("--cache", type=pathlib.Path, default=DEFAULT_CACHE)
    parser.add_argument("--git", action="append", default=[], metavar="LIB=GITDIR")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--json", type=pathlib.Path, metavar="FILE")
    parser.add_argument("--failures", type=int, default=5, metavar="N")
    parser.add_argument("--list", action="store_true", help="print the selection")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.libs) - set(SUITES))
    if unknown:
        parser.error(f"unknown libraries {unknown}; known: {sorted(SUITES)}")
    git_dirs = {}
    for item in args.git:
        lib, _, path = item.partition("=")
        git_dirs[lib] = str(pathlib.Path(path).expanduser())
    sides = ("jax", "jaxlite") if args.side == "both" else (args.side,)
    results = {}
    for lib in args.libs or SUITES:
        suite = SUITES[lib]
        try:
            version = metadata.version(suite.dist)
        except metadata.PackageNotFoundError:
            continue
        if args.list:
            print(lib, version, suite.source, *suite.files)
            continue
        result = results[lib] = {"version": version}
        try:
            root, files = find_tests(suite, version, args.cache, git_dirs)
        except Unavailable as e:
            result["unavailable"] = str(e)
            print(f"{lib}: unavailable: {e}", file=sys.stderr)
            continue
        result["tests"] = str(root)
        for side in sides:
            print(f"{lib} {version}: running on {side} ...", file=sys.stderr)
            result[side] = run_side(side, root, files, suite, args.timeout)
            print(f"  {side}: {_cell(result[side])}", file=sys.stderr)
            if args.json:  # as it goes, for long runs
                args.json.write_text(json.dumps(results, indent=1))
    if args.list:
        return 0
    print_table(results, args.failures)
    print(json.dumps(_summary(results), indent=1))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


def _summary(results):
    """The results without the lists of failures and timings (those go to --json)."""
    brief = {}
    for lib, r in results.items():
        brief[lib] = {
            k: (
                {n: v for n, v in side.items() if n not in _DETAILS}
                if isinstance(side, dict)
                else side
            )
            for k, side in r.items()
        }
    return brief


_DETAILS = ("failures", "seconds_by_module", "output")


if __name__ == "__main__":
    sys.exit(main())
