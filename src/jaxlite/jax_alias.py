"""Running code that imports `jax` on jaxlite: `install_as_jax()`.

`import jaxlite as jax` runs JAX code one edits; libraries (optax, flax, equinox, ...)
say `import jax` themselves. `install_as_jax()` makes that name mean jaxlite for the
rest of the process: a finder on `sys.meta_path` resolves every `jax.X.Y` to the module
`jaxlite.X.Y` itself, so nothing loads twice (`sys.modules["jax.numpy"] is
jaxlite.numpy`, `jax.jit is jaxlite.jit`) and a module jaxlite lacks is a
`ModuleNotFoundError` that names the jaxlite module looked for. JAX's private modules
(`jax._src.X`) are `jaxlite._src.X`, which provide what the major libraries import
from them.

Two modules are the alias's own. `sys.modules["jax"]` is a thin module that forwards
every attribute to `jaxlite` but has its own `__version__`: under the alias the version
is the JAX release whose API jaxlite follows (`JAX_API_VERSION`), because libraries
switch code paths on `jax.__version__`, while `jaxlite.__version__` stays jaxlite's
own. `jax.version` is likewise a small module with that version. `jaxlib` is not
aliased: none of the libraries imports it (equinox reads `jax.lib` only as a fallback
inside a `try`).

Three ways to install it: call `jaxlite.install_as_jax()` before anything imports
`jax`; run a program with `python -m jaxlite prog.py` (see `__main__.py`); or set
`JAXLITE_AS_JAX=1` for programs one cannot edit. For the last, the package installs
`jaxlite-as-jax.pth` into site-packages (see `tools/jaxlite_build.py`); its one line
reads the variable and, unless it is unset, empty or "0", imports jaxlite and calls
`install_from_env()`.

A module of jaxlite hidden behind a public object of the same name (the module
`jaxlite.lax.fft` behind the function `lax.fft`) is not a `jax` module, as in JAX.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

import jaxlite
from jaxlite.config import bool_env

__all__ = ["JAX_API_VERSION", "install_as_jax", "install_from_env"]

# The JAX release whose API jaxlite follows (DESIGN.md: JAX 0.10.x is the reference).
JAX_API_VERSION = "0.10.2"
ENV_VAR = "JAXLITE_AS_JAX"


def _version_info(version):
    return tuple(int(part) for part in version.split("."))


class _JaxModule(types.ModuleType):
    """`sys.modules["jax"]` under the alias: jaxlite's attributes, JAX's version."""

    def __getattr__(self, name):
        # `jax._src` is always there in JAX; libraries reach into it without import.
        if name == "_src":
            return importlib.import_module("jaxlite._src")
        try:
            return getattr(jaxlite, name)
        except AttributeError:
            raise AttributeError(
                f"module 'jax' has no attribute {name!r} (under "
                f"jaxlite.install_as_jax(), `jax` is jaxlite, which has no "
                f"'jaxlite.{name}')"
            ) from None

    def __dir__(self):
        return sorted(set(dir(jaxlite)) | set(self.__dict__))


class _JaxFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds `jax.X.Y` as the already existing (or freshly imported) `jaxlite.X.Y`.

    A jaxlite module hidden behind a public object of the same name (the module
    `jaxlite.lax.fft` behind the function `lax.fft`, `jaxlite.config` behind the
    `config` object) is not found, as in JAX, where those names are not modules:
    importing it under the alias would also make the import system replace the
    public object with the module.
    """

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "jax" and isinstance(target, _JaxModule):
            return target.__spec__  # importlib.reload(jax): nothing to re-execute
        if not fullname.startswith("jax."):
            return None
        name = "jaxlite" + fullname[len("jax") :]
        try:
            spec = importlib.util.find_spec(name)
        except ModuleNotFoundError:  # a parent is missing or is not a package
            spec = None
        parent, _, child = name.rpartition(".")
        public = getattr(sys.modules.get(parent), child, None)
        if public is not None and not isinstance(public, types.ModuleType):
            why = f"jaxlite's {name!r} is a {type(public).__name__}, not a module"
        elif spec is None:
            why = (
                f"jaxlite has no {name!r}; under jaxlite.install_as_jax() every "
                "module `jax.X` is jaxlite's `jaxlite.X`, and jaxlite does not "
                "implement this one"
            )
        else:
            return importlib.util.spec_from_loader(
                fullname, self, is_package=spec.submodule_search_locations is not None
            )
        raise ModuleNotFoundError(
            f"No module named {fullname!r} ({why})", name=fullname
        )

    def create_module(self, spec):
        # The jaxlite module itself: the import system keeps its attributes
        # (`__name__`, `__spec__`, ...), records it in sys.modules under `spec.name`
        # and sets it as an attribute of its parent, which is its jaxlite parent.
        return importlib.import_module("jaxlite" + spec.name[len("jax") :])

    def exec_module(self, module):
        pass  # already executed, once, as the jaxlite module


_FINDER = _JaxFinder()


def _make_modules():
    """The alias's own modules: `jax` and `jax.version`."""
    version = types.ModuleType(
        "jax.version",
        f"JAX's version under jaxlite's alias (jaxlite is {jaxlite.__version__}).",
    )
    version.__version__ = version._version = JAX_API_VERSION
    version.__version_info__ = _version_info(JAX_API_VERSION)
    jax = _JaxModule("jax", jaxlite.__doc__)
    jax.__spec__ = importlib.machinery.ModuleSpec(
        "jax", _FINDER, origin=jaxlite.__file__, is_package=True
    )
    jax.__loader__ = _FINDER
    jax.__file__ = jaxlite.__file__
    jax.__path__ = []  # submodules come from _FINDER only, never from files
    jax.__package__ = "jax"
    jax.__version__ = JAX_API_VERSION
    jax.__version_info__ = version.__version_info__
    jax.version = version
    return jax, version


def install_as_jax():
    """Make `import jax` (and every `jax.X`) import jaxlite, for this process.

    Call it before anything imports `jax`. Calling it again does nothing. Returns the
    `jax` module. Raises RuntimeError when the real JAX is already imported: the
    program would then run on two libraries whose arrays and tracers do not mix.
    """
    current = sys.modules.get("jax")
    if isinstance(current, _JaxModule):
        return current
    if current is not None:
        where = getattr(current, "__file__", None) or repr(current)
        raise RuntimeError(
            "jaxlite.install_as_jax(): the real JAX is already imported in this "
            f"process (sys.modules['jax'] comes from {where}), so `jax` can no longer "
            "mean jaxlite. Call jaxlite.install_as_jax() before anything imports jax "
            "(first thing in the program), or run the program with "
            "`python -m jaxlite prog.py` or with JAXLITE_AS_JAX=1 in the environment."
        )
    jax, version = _make_modules()
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    sys.modules["jax.version"] = version
    sys.modules["jax"] = jax
    return jax


def install_from_env():
    """`install_as_jax()` when the environment variable JAXLITE_AS_JAX is true ("1",
    "true", "yes", "on"); nothing when it is false ("0", "false", "no", "off", "").
    The line of `jaxlite-as-jax.pth` calls it at interpreter start."""
    if bool_env(ENV_VAR, False):
        install_as_jax()
