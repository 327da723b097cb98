"""Where in the user's program an equation came from, when someone asks.

`print_saved_residuals` says which line computed each residual ("output of sin from
model.py:9:11 (g)"), as JAX does. Capturing a frame per traced equation costs a stack
walk, so it is off by default: `capturing()` turns it on around one trace, and then
`DynamicJaxprTrace` stores `current()` on every equation it records.

An equation re-bound from an existing jaxpr (the body of a `checkpoint` being
differentiated, partially evaluated or inlined) keeps the source of the original:
`eval_jaxpr` runs each equation under `override(eqn.source_info)`, so the new equation
points at the user's line, not at jaxlite's machinery.
"""

from __future__ import annotations

import contextlib
import os
import sys
import sysconfig
import threading

_JAXLITE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_STDLIB_DIR = os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep


class SourceInfo:
    """A user frame: file, line, column (or None) and function name."""

    __slots__ = ("file_name", "line", "column", "function_name")

    def __init__(self, file_name, line, column, function_name):
        self.file_name = file_name
        self.line = line
        self.column = column
        self.function_name = function_name

    def __str__(self):
        where = f"{self.file_name}:{self.line}"
        if self.column is not None:
            where += f":{self.column}"
        return f"{where} ({self.function_name})"


class _State(threading.local):
    capturing = False
    override = None


_state = _State()


def is_capturing():
    return _state.capturing


@contextlib.contextmanager
def capturing():
    """Record a `SourceInfo` on every equation traced inside this block."""
    previous = _state.capturing, _state.override
    _state.capturing, _state.override = True, None
    try:
        yield
    finally:
        _state.capturing, _state.override = previous


@contextlib.contextmanager
def override(info):
    """Equations recorded inside this block get `info` (when it is not None)."""
    previous = _state.override
    _state.override = info if info is not None else previous
    try:
        yield
    finally:
        _state.override = previous


# Paths (files or directories) whose frames are not the user's either: libraries built
# on jaxlite add theirs (`register_exclusion`, JAX's `source_info_util` name), so a
# source line points past flax's or equinox's own frames.
_excluded: list = []


def register_exclusion(path):
    """Skip frames under `path` when looking for the user's line."""
    _excluded.append(os.path.abspath(path))


def _is_user_file(file_name):
    path = os.path.abspath(file_name)
    if path.startswith(_JAXLITE_DIR) or path.startswith(_STDLIB_DIR):
        return False
    return not any(path.startswith(p) for p in _excluded)


def current():
    """The innermost user frame (outside jaxlite and the standard library), or the
    override in force; None when not capturing."""
    if not _state.capturing:
        return None
    if _state.override is not None:
        return _state.override
    frame = sys._getframe(1)
    while frame is not None and not _is_user_file(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return None
    code = frame.f_code
    column = None
    if frame.f_lasti >= 0:
        positions = list(code.co_positions())
        index = frame.f_lasti // 2
        if index < len(positions):
            column = positions[index][2]
    name = getattr(code, "co_qualname", code.co_name)  # Python >= 3.11, as JAX
    return SourceInfo(code.co_filename, frame.f_lineno, column, name)


def summarize(info):
    """`file:line:col (function)`, or the empty string for an unknown source."""
    return "" if info is None else str(info)
