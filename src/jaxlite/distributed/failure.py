"""When one process of a distributed program fails or leaves: end them all, saying why.

MPI itself gives a program two ways to hang. A process that raises stops taking part
in collectives, and the others wait for it in their next one for ever; a process that
calls `sys.exit` (any status) while the others still expect it in a collective waits
in `MPI_Finalize` while they wait in that collective. `mpiexec` only ends the job when
a process *exits* with a failure status, and then without a word on the others.

So every process of a program joined by `jax.distributed.initialize()` runs a
watchdog thread on its own communicator (a duplicate of the world, so its small
control messages never meet data):

- A process that fails (an uncaught exception, or a failure status under
  `python -m jaxlite.launch`) tells every other process why (`fail`), waits a moment
  for them to print it, and calls `MPI_Abort`. Each other process's watchdog prints
  "process i of n failed (...); ending process j" on its stderr.
- A process that leaves (its Python exits, for whatever reason, without
  `jax.distributed.shutdown()`) tells the others, then waits for them all to leave
  before MPI finalizes, as `MPI_Finalize` would. A process whose main thread stays
  blocked in a jaxlite collective with a process that has left (more than
  `GRACE_S` seconds: a collective the leaver completed finishes at once) can never
  go on: its watchdog names the collective and the process and ends every process.

The watchdog finds what the main thread waits for from its Python frames (the
innermost one in `distributed/mpi.py`, whose `group` names the processes), so the
collectives themselves pay nothing for it. Messages are a few bytes of UTF-8 text.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import time

from jaxlite.distributed import mpi

_FAILED, _LEFT, _ACK = 1, 2, 3  # message tags
POLL_S = 0.05  # how often the watchdog looks for messages
GRACE_S = 2.0  # how long a collective may still wait on a process that has left
ACK_WAIT_S = 2.0  # how long a failing process waits for the others to print
_MPI_FILE = os.path.join("distributed", "mpi.py")

_watchdog = None


class Watchdog:
    """The watchdog of this process (see the module docstring)."""

    def __init__(self, rank, size):
        self.MPI = mpi._state["MPI"]
        self.comm = mpi._state["world"].Dup()
        self.rank, self.size = rank, size
        self.left = {}  # rank -> when its notice arrived
        self.main = threading.main_thread().ident
        self.blocked = None  # (frame, since) the main thread waits in
        self.stopping = threading.Event()
        self.thread = threading.Thread(
            target=self._run, name="jaxlite.distributed watchdog", daemon=True
        )
        self.thread.start()

    # ---------------------------------------------------------------- the thread

    def _run(self):
        MPI = self.MPI  # noqa: N806  (the module's name)
        status = MPI.Status()
        while not self.stopping.wait(POLL_S):
            for tag in (_FAILED, _LEFT):  # acks are for the main thread (`fail`)
                while self.comm.Iprobe(MPI.ANY_SOURCE, tag, status):
                    source = status.Get_source()
                    buf = bytearray(status.Get_count(MPI.BYTE))
                    self.comm.Recv([buf, MPI.BYTE], source=source, tag=tag)
                    if tag == _FAILED:
                        self._others_failed(source, buf.decode("utf-8", "replace"))
                    else:
                        self.left.setdefault(source, time.monotonic())
            if self.left:
                self._check_blocked()

    def _others_failed(self, source, why):
        _say(
            f"jaxlite.distributed: process {source} of {self.size} failed ({why}); "
            f"ending process {self.rank} too. The failing process printed its "
            "error above."
        )
        self.comm.Send([b"", self.MPI.BYTE], dest=source, tag=_ACK)
        # The failing process ends every process with MPI_Abort; should that not
        # come, this one ends itself.
        time.sleep(5)
        os._exit(1)

    def _check_blocked(self):
        frame = _waiting_frame(sys._current_frames().get(self.main))
        if frame is None:
            self.blocked = None
            return
        now = time.monotonic()
        if self.blocked is None or self.blocked[0] is not frame:
            self.blocked = (frame, now)
        group = frame.f_locals.get("group")
        members = range(self.size) if group is None else group
        gone = sorted(
            r
            for r in members
            if r in self.left and now - max(self.left[r], self.blocked[1]) > GRACE_S
        )
        if not gone:
            return
        _say(
            f"jaxlite.distributed: process {self.rank} of {self.size} waits in a "
            f"collective ({frame.f_code.co_name} over processes {list(members)}) "
            f"with process(es) {gone}, which exited without taking part in it "
            "(sys.exit, or the end of its program, before the collective). No "
            "process can go on: ending every process (MPI_Abort). Every process "
            "must run the same collectives in the same order."
        )
        self.comm.Abort(1)

    # ---------------------------------------------------------------- the main thread

    def tell_others(self, tag, text=""):
        data = text.encode("utf-8")
        return [
            self.comm.Isend([data, self.MPI.BYTE], dest=r, tag=tag)
            for r in range(self.size)
            if r != self.rank
        ]

    def wait_for_acks(self, deadline):
        waiting = set(range(self.size)) - {self.rank}
        while waiting and time.monotonic() < deadline:
            for r in list(waiting):
                if self.comm.Iprobe(r, _ACK):
                    self.comm.Recv([bytearray(0), self.MPI.BYTE], source=r, tag=_ACK)
                    waiting.discard(r)
            time.sleep(0.005)

    def leave(self):
        """At exit: tell the others, and wait until every process leaves."""
        requests = self.tell_others(_LEFT)
        done = self.comm.Ibarrier()
        while not done.Test():
            time.sleep(0.005)
        self.MPI.Request.Waitall(requests)
        self.stop()

    def stop(self):
        self.stopping.set()
        if self.thread is not threading.current_thread():
            self.thread.join()


def _waiting_frame(frame):
    """The innermost frame of `distributed/mpi.py` on `frame`'s stack, or None."""
    while frame is not None:
        if frame.f_code.co_filename.endswith(_MPI_FILE) and not (
            frame.f_code.co_name.startswith("_")
        ):
            return frame
        frame = frame.f_back
    return None


def _say(text):
    sys.stdout.flush()
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


# --------------------------------------------------------------------------------------
# What distributed/__init__.py calls


def start(rank, size):
    """Start this process's watchdog (`initialize`, several processes)."""
    global _watchdog
    _watchdog = Watchdog(rank, size)
    atexit.register(_at_exit)


def stop():
    """Stop the watchdog (`shutdown`, after every process got there)."""
    global _watchdog
    atexit.unregister(_at_exit)
    if _watchdog is not None:
        _watchdog.stop()
        _watchdog.comm.Free()
        _watchdog = None


def _at_exit():
    global _watchdog
    watchdog, _watchdog = _watchdog, None
    if watchdog is not None:
        watchdog.leave()


def fail(why, code=1):
    """End every process because this one failed (`why`: a line saying how, for the
    others' messages); this process's own error is already printed."""
    watchdog = _watchdog
    if watchdog is not None:
        try:
            watchdog.tell_others(_FAILED, why)
            watchdog.wait_for_acks(time.monotonic() + ACK_WAIT_S)
        except Exception:  # noqa: BLE001  (ending every process matters more)
            pass
    sys.stdout.flush()
    sys.stderr.flush()
    mpi.abort(code)
