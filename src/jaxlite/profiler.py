"""The `jax.profiler` API, for code that profiles itself.

jaxlite runs on the host through NumPy, so there is no device profiler to drive:
Python's own profilers (`cProfile`, `py-spy`) already see every step, because each
primitive is an ordinary Python call. These functions keep JAX's signatures and
their observable contract -- `trace` and `start_trace`/`stop_trace` pair up (one
trace at a time, `stop_trace` without a start raises), annotations are context
managers and decorators that leave the wrapped code's results, names and
exceptions unchanged, `start_trace` creates `log_dir` (and writes nothing in it), and `device_memory_profile` returns a (gzipped, empty) pprof
profile -- so programs instrumented for JAX run unchanged.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import os
import threading

__all__ = [
    "ProfileOptions",
    "StepTraceAnnotation",
    "TraceAnnotation",
    "annotate_function",
    "device_memory_profile",
    "save_device_memory_profile",
    "start_server",
    "start_trace",
    "stop_server",
    "stop_trace",
    "trace",
]


class ProfileOptions:
    """Options for `start_trace` (accepted and kept; nothing reads them)."""

    def __init__(self):
        self.host_tracer_level = 2
        self.python_tracer_level = 0
        self.enable_hlo_proto = True
        self.include_dataset_ops = True
        self.start_timestamp_ns = 0
        self.duration_ms = 0
        self.repository_path = ""
        self.session_id = ""
        self.raise_error_on_start_failure = False
        self.advanced_configuration = {}


class _ProfileState:
    def __init__(self):
        self.lock = threading.Lock()
        self.log_dir = None


_profile_state = _ProfileState()


def start_trace(
    log_dir: os.PathLike | str,
    create_perfetto_link: bool = False,
    create_perfetto_trace: bool = False,
    profiler_options: ProfileOptions | None = None,
) -> None:
    """Start a profiler trace that `stop_trace` ends (only one at a time)."""
    with _profile_state.lock:
        if _profile_state.log_dir is not None:
            raise RuntimeError(
                "Profile has already been started. Only one profile may be run at "
                "a time: call jaxlite.profiler.stop_trace() before starting another."
            )
        os.makedirs(log_dir, exist_ok=True)
        _profile_state.log_dir = str(log_dir)


def stop_trace():
    """End the trace begun by `start_trace`."""
    with _profile_state.lock:
        if _profile_state.log_dir is None:
            raise RuntimeError(
                "No profile started: call jaxlite.profiler.start_trace(log_dir) first."
            )
        _profile_state.log_dir = None


@contextlib.contextmanager
def trace(
    log_dir: os.PathLike | str,
    create_perfetto_link=False,
    create_perfetto_trace=False,
    profiler_options: ProfileOptions | None = None,
):
    """Context manager: `start_trace` on entry, `stop_trace` on exit."""
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


class TraceAnnotation:
    """Context manager naming a region of host code in a profile."""

    def __init__(self, name: str, **kwargs):
        self.name = name
        self.kwargs = kwargs

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        return None


class StepTraceAnnotation(TraceAnnotation):
    """A `TraceAnnotation` marking one training step (pass `step_num=`)."""

    def __init__(self, name: str, **kwargs):
        super().__init__(name, **kwargs)


def annotate_function(func, name: str | None = None, **decorator_kwargs):
    """Decorator running `func` inside a `TraceAnnotation` named after it."""
    name = name or getattr(func, "__qualname__", None) or getattr(func, "__name__", "")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with TraceAnnotation(name, **decorator_kwargs):
            return func(*args, **kwargs)

    return wrapper


def device_memory_profile(backend: str | None = None) -> bytes:
    """The device memory profile in gzipped pprof format: empty, since jaxlite's
    arrays are NumPy arrays in host memory (profile those with `tracemalloc`)."""
    return gzip.compress(b"", mtime=0)


def save_device_memory_profile(filename, backend: str | None = None) -> None:
    """Write `device_memory_profile(backend)` to `filename`."""
    profile = device_memory_profile(backend)
    with open(filename, "wb") as f:
        f.write(profile)


class _ProfilerServer:
    def __init__(self, port):
        self.port = port


_server = None


def start_server(port: int, requires_backend: bool = True):
    """Start the (placeholder) profiler server; one at a time, as in JAX."""
    global _server
    if _server is not None:
        raise ValueError("Only one profiler server can be active at a time.")
    _server = _ProfilerServer(port)
    return _server


def stop_server():
    """Stop the server started by `start_server`."""
    global _server
    if _server is None:
        raise ValueError("No active profiler server.")
    _server = None
