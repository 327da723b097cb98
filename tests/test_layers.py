"""The layering of the package, checked on the source (see DESIGN.md, "Architecture").

Every module of `src/jaxlite` belongs to one layer of `LAYERS`, listed bottom up, and
may import only modules of its own layer or of the layers below it. A function-local
import is still an import, so the check walks the whole syntax tree of every module,
not only its top level, and resolves relative imports. A new module must be given a
row here (a test fails until it is).

An upper layer that must extend a lower one does it through an extension point the
lower layer owns (a table or a hook it fills at import), never by the lower layer
importing it. `EXEMPT` lists the upward imports that remain, each with its reason.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

SRC = pathlib.Path(__file__).resolve().parent.parent / "src"
PACKAGE = SRC / "jaxlite"

# The layers, bottom up: (name, its modules and packages, as paths under src/jaxlite
# without ".py"). A module imports only its own layer and the layers listed before it.
LAYERS = (
    # base: no jaxlite imports from above
    ("base", (
        "config", "dtypes", "errors", "util", "effects", "tree_util", "tree_keys",
        "tree_registry",
        "tree", "source_info", "monitoring", "profiler", "version", "cpu_device",
        "sharding", "linear_util", "distributed",
    )),
    # core: Primitive, bind, traces, avals, jaxprs, eval_jaxpr, the Array type, the
    # stored arrays of extended dtypes (core_physical) and JAX's extension API on them
    # (core_extension)
    ("core", (
        "core", "array", "typing", "core_extension", "core_physical", "jaxpr_printer",
        "distributed.global_array", "distributed.callbacks", "tracer_leaks",
        # mutable array references: their aval, value type and index parsing
        "state", "state.types", "state.indexing",
    )),
    # interpreters: partial evaluation, autodiff, batching
    ("interpreters", ("interpreters",)),
    # backend: how a jaxpr runs; JAX's `interpreters.mlir` (register_lowering) fills
    # the backend's tables, so it sits here though it lives in the interpreters package
    # (distributed.spmd: how a jaxpr over arrays split across processes runs)
    ("backend", ("backend", "interpreters.mlir", "distributed.spmd")),
    # front: jit and the transformations' user API, devices and caches
    ("front", (
        "api_util", "dispatch", "api", "api_autodiff", "api_vmap", "eager_jit", "cache_misses",
        "debug_nans", "runtime", "stages",
    )),
    # lax: the primitives and all their rules
    ("lax", ("lax",)),
    # numpy: jax.numpy in terms of lax
    ("numpy", ("numpy",)),
    # libs: everything built on jax.numpy
    ("libs", (
        "random", "prng", "scipy", "nn", "experimental", "example_libraries",
        "image", "ad_checkpoint", "custom_batching", "custom_derivatives", "debug",
        "debugger", "debug_sharding", "dlpack", "flatten_util", "shard_map",
        "test_util", "extend",
        # the reference primitives (built from jax.numpy) and their discharge
        "state.primitives", "state.discharge", "ref",
        # JAX's private modules, for jaxlite.install_as_jax() only
        "_src",
    )),
    # face: the public re-exports, and the tour, a program run on the public API
    # (and `jax` as a name for jaxlite: jax_alias, `python -m jaxlite`)
    ("face", ("__init__", "tour", "tour_callbacks", "jax_alias", "__main__", "launch")),
)  # fmt: skip

# Interpreters may import `jaxlite.lax` lazily (inside a function), as JAX's
# interpreters do, to build the few values their rules need (zeros, sums, broadcasts)
# with the primitives lax defines; each such import carries a comment saying why, on
# its line or the line above.
LAZY_UPWARD = {"interpreters": ("jaxlite.lax",)}

# (importing module, imported module) -> why the upward import stays. Keep it short.
# Empty: the front converts user values with `core.as_value` and builds gradient seeds,
# zeros and Jacobian blocks with the interpreters' helpers (`ad.full_like_aval`, ...);
# tokens are core types.
EXEMPT: dict[tuple[str, str], str] = {}

# Layers that must not generate Python source and `exec` it: running code is the
# backend's job.
NO_CODE_EXECUTION = ("lax",)
_EXECUTING_BUILTINS = {"exec", "eval", "compile"}

_RANK = {}
for _rank, (_layer, _members) in enumerate(LAYERS):
    for _member in _members:
        _name = "jaxlite" if _member == "__init__" else f"jaxlite.{_member}"
        _RANK[_name] = (_rank, _layer)


def _layer_of(module):
    """`(rank, layer)` of a dotted module name (the longest listed prefix); None for
    a module no row names."""
    parts = module.split(".")
    for k in range(len(parts), 1, -1):
        found = _RANK.get(".".join(parts[:k]))
        if found is not None:
            return found
    return _RANK["jaxlite"] if module == "jaxlite" else None


def _modules(paths):
    """The `.py` files of the given packages or modules (paths under src/jaxlite)."""
    files = []
    for rel in paths:
        path = PACKAGE / rel
        if path.is_dir():
            files += sorted(path.rglob("*.py"))
        else:
            files.append(path.with_suffix(".py"))
    return files


def _module_name(path, root):
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name, root):
    path = root.joinpath(*name.split("."))
    return path.is_dir() or path.with_suffix(".py").is_file()


def _imports(path, root=SRC):
    """`(line, dotted module, function_local)` for every import anywhere in the module,
    relative imports resolved. `from a import b` imports `a.b` when that is a module,
    else `a` (the module that defines `b`); `importlib.import_module("...")` and
    `__import__("...")` with a literal name count too."""
    tree = ast.parse(path.read_text(), str(path))
    package = _module_name(path, root)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    local_lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            local_lines.update(
                inner.lineno for inner in ast.walk(node) if hasattr(inner, "lineno")
            )
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")
                parent = parent[: len(parent) - (node.level - 1)]
                base = ".".join([*parent, *([base] if base else [])])
            for alias in node.names:
                full = f"{base}.{alias.name}"
                names.append((node.lineno, full if _is_module(full, root) else base))
        elif isinstance(node, ast.Call) and _called_name(node) in (
            "import_module",
            "__import__",
        ):
            if node.args and isinstance(node.args[0], ast.Constant):
                names.append((node.lineno, str(node.args[0].value)))
    return [(line, name, line in local_lines) for line, name in dict.fromkeys(names)]


def _imported_names(path, root=SRC):
    """`(line, dotted module)` for every import anywhere in the module."""
    return [(line, name) for line, name, _ in _imports(path, root)]


def _called_name(call):
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _is_within(name, package):
    return name == package or name.startswith(package + ".")


def _has_comment(lines, line):
    """A comment on source line `line` (1-based) or on the line above it."""
    return any("#" in lines[i - 1] for i in (line, line - 1) if 0 < i <= len(lines))


def test_every_module_has_a_layer():
    missing = [
        str(path.relative_to(SRC))
        for path in sorted(PACKAGE.rglob("*.py"))
        if _layer_of(_module_name(path, SRC)) is None
    ]
    assert not missing, "modules no row of LAYERS names (give them one):\n" + "\n".join(
        missing
    )


def _upward_imports():
    """`(importer, line, imported, why-not-allowed)` for every import of a module in
    a higher layer than the importer's, exemptions not yet applied."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path, SRC)
        mine = _layer_of(module)
        if mine is None:
            continue
        lines = path.read_text().splitlines()
        for line, name, local in _imports(path):
            if not _is_within(name, "jaxlite"):
                continue
            theirs = _layer_of(name)
            if theirs is None or theirs[0] <= mine[0]:
                continue
            lazy_ok = any(
                _is_within(name, allowed) for allowed in LAZY_UPWARD.get(mine[1], ())
            )
            if lazy_ok and local and _has_comment(lines, line):
                continue
            where = f"{path.relative_to(SRC)}:{line}"
            found.append((module, where, name, f"{mine[1]} -> {theirs[1]}"))
    return found


def test_no_module_imports_a_layer_above_it():
    bad = sorted(
        f"{where} imports {name} ({layers})"
        for module, where, name, layers in _upward_imports()
        if (module, name) not in EXEMPT
    )
    assert not bad, (
        "imports that point up the layers (move the code down, or let the upper "
        "layer fill an extension point of the lower one):\n" + "\n".join(bad)
    )


def test_every_exemption_is_still_needed():
    used = {(module, name) for module, _, name, _ in _upward_imports()}
    stale = sorted(set(EXEMPT) - used)
    assert not stale, f"EXEMPT entries no import needs any more: {stale}"


def _executes_code(path):
    """`(line, name)` for every call of the builtins `exec`, `eval` or `compile` (by
    name, or as `builtins.exec`, ...)."""
    tree = ast.parse(path.read_text(), str(path))
    calls = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in _EXECUTING_BUILTINS:
            calls.append((node.lineno, func.id))
        elif (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "builtins"
            and func.attr in _EXECUTING_BUILTINS
        ):
            calls.append((node.lineno, f"builtins.{func.attr}"))
    return calls


@pytest.mark.parametrize("layer", NO_CODE_EXECUTION)
def test_layer_executes_no_generated_code(layer):
    bad = [
        f"{path.relative_to(SRC)}:{line} calls {name}"
        for path in _modules((layer,))
        for line, name in _executes_code(path)
    ]
    assert not bad, (
        f"modules under {layer}/ run generated code; that belongs in backend/:\n"
        + "\n".join(bad)
    )


def test_the_checks_see_function_local_and_relative_imports(tmp_path):
    """The walk finds an import inside a function, resolves a relative one, and tells
    a module imported with `from` from a name imported out of a module."""
    root = tmp_path
    for rel in ("jaxlite/lax", "jaxlite/numpy", "jaxlite/backend"):
        (root / rel).mkdir(parents=True)
        (root / rel / "__init__.py").write_text("")
    (root / "jaxlite" / "numpy" / "ufuncs.py").write_text("")
    module = root / "jaxlite" / "backend" / "probe.py"
    module.write_text(
        "from jaxlite.numpy import ufuncs\n"
        "def f():\n"
        "    from jaxlite import lax\n"
        "    from ..numpy import sin\n"
        "    exec('1')\n"
        "    return builtins.compile('1', '', 'eval')\n"
    )
    found = {(name, local) for _, name, local in _imports(module, root=root)}
    assert found == {
        ("jaxlite.numpy.ufuncs", False),
        ("jaxlite.lax", True),
        ("jaxlite.numpy", True),
    }
    assert [name for _, name in _executes_code(module)] == ["exec", "builtins.compile"]


def test_the_table_orders_the_layers():
    assert _layer_of("jaxlite.lax.rng")[1] == "lax"
    assert _layer_of("jaxlite.numpy")[1] == "numpy"
    assert _layer_of("jaxlite.core")[0] < _layer_of("jaxlite.interpreters.ad")[0]
    assert _layer_of("jaxlite.backend.lowering")[0] < _layer_of("jaxlite.dispatch")[0]
    assert _layer_of("jaxlite.interpreters.mlir")[1] == "backend"
    assert _layer_of("jaxlite.interpreters.ad")[1] == "interpreters"
    assert _layer_of("jaxlite")[1] == "face"
