"""`jax._src.traceback_util` for `jaxlite.install_as_jax()` only.

JAX filters its own frames out of the tracebacks of exceptions that cross an
`api_boundary`, and libraries (equinox, flax, jaxtyping) register their files to be
filtered too. jaxlite does not filter tracebacks: every frame stays, so
`api_boundary` returns the function unchanged. The exclusion list is kept, with
jaxlite's package directory in place of JAX's files, because libraries read it back
through `include_frame` (equinox, to show the user's frames in its runtime errors)
and edit it (flax's `hide_flax_in_tracebacks`).
"""

import os

__all__ = [
    "api_boundary",
    "include_filename",
    "include_frame",
    "register_exclusion",
]

_JAXLITE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_exclude_paths: list[str] = [_JAXLITE_DIR]


def register_exclusion(path):
    """Count the frames of the file or directory `path` as library frames."""
    _exclude_paths.append(path)


def _path_starts_with(path, prefix):
    try:
        return os.path.commonpath([path, prefix]) == prefix
    except ValueError:  # different drives, or a relative and an absolute path
        return False


def include_filename(filename):
    """Whether a frame of `filename` is the user's (no exclusion covers it)."""
    return not any(_path_starts_with(filename, path) for path in _exclude_paths)


def include_frame(frame):
    """Whether `frame` is the user's (its file is not excluded)."""
    return include_filename(frame.f_code.co_filename)


def api_boundary(fun, *, repro_api_name=None, repro_user_func=False):
    """`fun` itself: jaxlite keeps every frame of a traceback, so there is nothing to
    filter at the boundary."""
    return fun
