"""`jaxlite.debug`: look at values inside transformed code.

`debug.callback(fn, *args)` calls `fn` on the host with the runtime values of `args`
(Arrays, as JAX passes them), and `debug.print(fmt, *args)` formats them with `str.format`
and writes the line to `sys.stdout`. Both work eagerly and under jit, vmap (one call per
batch element, in batch order), grad (primal values, once) and inside loops (once per
iteration). They carry the `Debug` effect (`OrderedDebug` with `ordered=True`), so they
are never removed as dead code, and they run synchronously, so nothing is lost or
reordered. Both also have JAX's two-call form, `debug.print(ordered=True)(fmt, x)`.

The format string is parsed whole and checked when the print is traced, with JAX's
errors for missing or unused arguments; the values are formatted when the print runs,
under the NumPy print options in force when it was traced.

In a program of several processes (`jax.distributed`), each prints on the process
that owns the values: inside a `shard_map`, each process for its own shards; an
array split across processes, eagerly, whole on the process of its mesh's first
device, or with `partitioned=True` each device's shard on its process (as JAX). To
show which process prints, pass `jax.process_index()` as an argument:
`jax.debug.print("{p}: {x}", p=jax.process_index(), x=x)`.
"""

from __future__ import annotations

import functools
import string
import sys

import numpy as np

from jaxlite import tree_util
from jaxlite.core import Tracer, _state, eval_trace
from jaxlite.debug_sharding import (
    inspect_array_sharding,
    visualize_array_sharding,
    visualize_sharding,
)
from jaxlite.debugger import breakpoint  # noqa: A004  (JAX's name)
from jaxlite.distributed.callbacks import debug_calls, is_split_array
from jaxlite.lax import callbacks as _cb

__all__ = [
    "breakpoint",
    "callback",
    "print",
    "log",
    "inspect_array_sharding",
    "visualize_array_sharding",
    "visualize_sharding",
]


def _split_callback_args(args, kwargs):
    """`(in_tree, dynamic leaves, static (index, value) pairs)` of `(args, kwargs)`.

    Leaves that are JAX values are dynamic; anything else (strings, None, functions)
    is static and baked into the equation.
    """
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    dynamic, static = [], []
    for i, leaf in enumerate(leaves):
        if _cb._is_jax_value(leaf) or is_split_array(leaf):
            dynamic.append(leaf)
        else:
            static.append((i, leaf))
    return in_tree, dynamic, tuple(static)


def _is_eager(leaves):
    return _state.trace is eval_trace and not any(isinstance(x, Tracer) for x in leaves)


def callback(callback=None, *args, ordered=False, partitioned=False, **kwargs):
    """Call `callback(*args, **kwargs)` on the host with the values of `args`.

    The return value of `callback` is ignored. With `ordered=True` the calls keep
    program order with other ordered effects (in jaxlite every call does anyway).
    Without `callback`, returns a function taking it (the two-call form).
    """
    if callback is None:
        if args or kwargs:
            raise TypeError(
                "debug_callback received unexpected arguments in the two-call form: "
                f"args={args!r} kwargs={kwargs!r}"
            )
        return functools.partial(_debug_callback, (ordered, partitioned))
    _debug_callback((ordered, partitioned), callback, *args, **kwargs)
    return None


def _debug_callback(options, fn, *args, **kwargs):
    # `options` is one positional, so every keyword of the second call is the callback's.
    ordered, partitioned = options
    if not callable(fn):
        raise TypeError(
            "first argument to jax.debug.callback must be callable, but got an object "
            f"of type {type(fn)}"
        )
    in_tree, dynamic, static = _split_callback_args(args, kwargs)
    flat = _cb._DebugFlatCallback(fn, in_tree, None, "debug.callback", static)
    if _is_eager(dynamic):
        for values in debug_calls(dynamic, partitioned):
            flat.host_fn(())(*map(_cb._eager_value, values))
        return
    effect = _cb.effects.OrderedDebug if ordered else _cb.effects.Debug
    _cb.debug_callback_p.bind(
        *dynamic, callback=flat, effect=effect, partitioned=bool(partitioned)
    )


class _FormatChecker(string.Formatter):
    """Checks a format string against its arguments without formatting anything."""

    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused_args = [arg for i, arg in enumerate(args) if i not in used_args]
        unused_kwargs = [k for k in kwargs if k not in used_args]
        if unused_args:
            raise ValueError(
                f"Unused positional arguments to `jax.debug.print`: {unused_args}"
            )
        if unused_kwargs:
            raise ValueError(
                f"Unused keyword arguments to `jax.debug.print`: {unused_kwargs}. You "
                'may be passing an f-string (i.e, `f"{x}"`) into `jax.debug.print` and '
                "instead should pass in a regular string."
            )


_checker = _FormatChecker()


def _has_placeholders(fmt):
    """Whether `fmt` has a replacement field anywhere (`{{` is a literal brace)."""
    return any(field is not None for _, field, _, _ in string.Formatter().parse(fmt))


def print(  # noqa: A001  (JAX's name)
    fmt=None,
    *args,
    ordered=False,
    partitioned=False,
    skip_format_check=False,
    _use_logging=False,
    **kwargs,
):
    """Print `fmt.format(*args, **kwargs)` with the runtime values of the arguments.

    Works under every transformation (see the module docstring). Pass a plain format
    string, not an f-string: formatting happens when the values exist. Without `fmt`,
    returns a function taking it (the two-call form, `debug.print(ordered=True)(...)`).
    """
    options = (ordered, partitioned, skip_format_check, _use_logging)
    if fmt is None:
        if args or kwargs:
            raise TypeError(
                "debug_print received unexpected arguments in the two-call form: "
                f"args={args!r} kwargs={kwargs!r}"
            )
        return functools.partial(_debug_print, options)
    _debug_print(options, fmt, *args, **kwargs)
    return None


def log(fmt=None, *args, ordered=False, partitioned=False, **kwargs):
    """Like `print`, but the line goes to the `jaxlite.debug` logger at INFO level."""
    return print(
        fmt,
        *args,
        ordered=ordered,
        partitioned=partitioned,
        _use_logging=True,
        **kwargs,
    )


def _debug_print(options, fmt, *args, **kwargs):
    # `options` is one positional, so every keyword of the second call is a format field.
    ordered, partitioned, skip_format_check, use_logging = options
    if not skip_format_check:
        _checker.format(fmt, *args, **kwargs)
    has_placeholders = _has_placeholders(fmt) if fmt else False
    in_tree, dynamic, static = _split_callback_args(args, kwargs)
    printoptions = tuple(np.get_printoptions().items())
    record = _user_frame() if use_logging else None
    if _is_eager(dynamic):
        printer = _cb._PrintCallback(
            fmt, has_placeholders, in_tree, static, printoptions, record
        )
        for values in debug_calls(dynamic, partitioned):
            _cb._format_and_write(printer, list(map(_cb._eager_value, values)))
        return
    _cb.debug_print_p.bind(
        *dynamic,
        fmt=fmt,
        has_placeholders=has_placeholders,
        in_tree=in_tree,
        logging_record=record,
        np_printoptions=printoptions,
        ordered=bool(ordered),
        partitioned=bool(partitioned),
        static_args=static,
    )


def _user_frame():
    """(file name, line number) of the first frame outside jaxlite."""
    frame = sys._getframe(1)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if not (module == "jaxlite" or module.startswith("jaxlite.")):
            return (frame.f_code.co_filename, frame.f_lineno)
        frame = frame.f_back
    return ("(unknown file)", 0)
