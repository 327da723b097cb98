"""`python -m jaxlite`: run a program that imports `jax` on jaxlite.

    python -m jaxlite SCRIPT [ARGS...]
    python -m jaxlite -m MODULE [ARGS...]

installs the alias (`jaxlite.install_as_jax()`), then runs the script or module as
`__main__`, with `sys.argv` and `sys.path[0]` as `python SCRIPT ARGS...` or
`python -m MODULE ARGS...` would set them, so the program and every library it imports
get jaxlite when they import `jax`. Child Python processes (multiprocessing's
"spawn", subprocess) start without it; JAXLITE_AS_JAX=1 in the environment reaches
them too.
"""

from __future__ import annotations

import os
import runpy
import sys

from jaxlite.jax_alias import install_as_jax

USAGE = """\
usage: python -m jaxlite SCRIPT [ARGS...]
       python -m jaxlite -m MODULE [ARGS...]

Runs the Python program SCRIPT (or the module MODULE) with `import jax` importing
jaxlite (see jaxlite.install_as_jax). For programs started another way, set
JAXLITE_AS_JAX=1 in the environment.
"""


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, end="", file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    if argv[0] == "-m":
        if len(argv) < 2:
            print(
                "python -m jaxlite: -m needs a module name\n\n" + USAGE,
                end="",
                file=sys.stderr,
            )
            return 2
        install_as_jax()
        sys.argv = argv[1:]  # run_module sets sys.argv[0] to the module's file
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return 0
    if argv[0].startswith("-"):
        print(
            f"python -m jaxlite: unknown option {argv[0]!r}\n\n" + USAGE,
            end="",
            file=sys.stderr,
        )
        return 2
    script = argv[0]
    if not os.path.exists(script):
        print(
            f"python -m jaxlite: can't open file {script!r}: no such file",
            file=sys.stderr,
        )
        return 2
    install_as_jax()
    sys.argv = list(argv)
    if not sys.flags.safe_path:  # as `python SCRIPT`: the script's directory first
        sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
