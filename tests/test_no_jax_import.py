"""jaxlite never imports jax or jaxlib: importing it and running a jit (in a fresh
process, so the test suite's own use of JAX as an oracle cannot interfere) leaves both
out of sys.modules."""

import subprocess
import sys

CODE = """
import sys
import jaxlite
import jaxlite.numpy as jnp

f = jaxlite.jit(lambda x: jnp.sin(x) * 2.0 + 1)
print(float(f(jnp.float32(0.5))))
print(jaxlite.make_jaxpr(f)(1.0))
import jaxlite.tour
leaked = sorted(
    name for name in sys.modules
    if name.split(".")[0] in ("jax", "jaxlib")
)
print("LEAKED", leaked)
"""


def test_importing_and_running_jaxlite_does_not_import_jax():
    proc = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "LEAKED []"
    assert proc.stdout.startswith("1.958851")


def test_all_submodules_import_without_jax():
    code = (
        "import importlib, pkgutil, sys, jaxlite\n"
        "for m in pkgutil.walk_packages(jaxlite.__path__, 'jaxlite.'):\n"
        "    if m.name != 'jaxlite.__main__':\n"
        "        importlib.import_module(m.name)\n"
        "print(sorted(n for n in sys.modules if n.split('.')[0] in ('jax', 'jaxlib')))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
