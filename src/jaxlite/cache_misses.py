"""What `jit` does on a tracing cache miss, besides tracing: JAX's debugging switches.

A `jit` call whose cache key (argument structure, leaf types, static arguments,
tracing config) has not been seen before traces the function again. Three of JAX's
options hook in there, and jaxlite reads them only on that slow path, so the hot path
pays nothing for them:

- `jax_no_tracing` (`with jax.no_tracing(True):`): the miss raises RuntimeError, to
  prove that a warm loop never retraces.
- `jax_explain_cache_misses`: the miss is logged (logger `jaxlite.cache_misses`,
  WARNING) with the reason, in JAX's words: a function never seen, or, for the closest
  previous key, the config options, pytree, static arguments or argument types that
  differ.
- `jax_no_execution`: every execution raises RuntimeError while tracing still works.
  jit calls take their slow path while it is on (`config.jit_slow_path`), and a config
  listener gives the eager trace a refusing `process_primitive` (an attribute of the
  one `eval_trace` instance, so it stacks with the NaN checker's class-level swap).
"""

from __future__ import annotations

import inspect
import logging
import os
import sys

from jaxlite import dtypes
from jaxlite.config import TRACE_OPTIONS, config
from jaxlite.core import eval_trace
from jaxlite.util import fun_name, fun_sourceinfo

logger = logging.getLogger("jaxlite.cache_misses")

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_callsites_with_miss: set = set()


def on_miss(jitted, key, args, kwargs):
    """Called by `JitFunction` before it traces for the new cache `key`."""
    if config.read("jax_no_tracing"):
        raise RuntimeError(
            f"re-tracing function {fun_sourceinfo(jitted.fun)} for `jit`, but 'no_tracing' "
            "is set (leave the `jax.no_tracing` block or warm the cache first)."
        )
    if config.read("jax_explain_cache_misses"):
        logger.warning(_explain(jitted, key, args, kwargs))


def check_execution(what):
    """Raise if `jax_no_execution` is on; `what` names the computation."""
    if config.no_execution:
        raise RuntimeError(
            f"JAX tried to execute function {what}, but the no_execution config "
            "option is set"
        )


# ----------------------------------------------------------------------------------------
# Explanations


def _user_callsite():
    """`file:line:column (function)` of the innermost frame outside jaxlite."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        if not filename.startswith(_PACKAGE_DIR + os.sep):
            break
        frame = frame.f_back
    if frame is None:
        return "<unknown>"
    info = inspect.getframeinfo(frame, context=0)
    positions = getattr(info, "positions", None)
    col = positions.col_offset if positions and positions.col_offset else 0
    return f"{info.filename}:{info.lineno}:{col} ({info.function})"


def _explain(jitted, key, args, kwargs):
    fun = jitted.fun
    callsite = _user_callsite()
    lines = [f"TRACING CACHE MISS at {callsite}:"]
    code = getattr(fun, "__code__", None)
    where = f" defined at {code.co_filename}:{code.co_firstlineno}" if code else ""
    name = fun_name(fun)
    if not jitted._cache:
        lines.append(f"  never seen function:\n    {name} id={id(fun)}{where}")
        if callsite in _callsites_with_miss:
            lines.append(
                "  but seen another function defined on the same line; maybe the "
                "function is\n  being re-defined repeatedly, preventing caching?"
            )
        _callsites_with_miss.add(callsite)
        return "\n".join(lines)
    lines.append(f"  for {name}{where}")
    names = _arg_names(jitted, args, kwargs)
    diffs = [_diff(key, old, names) for old in jitted._cache]
    lines.append(
        "  all previously seen cache keys differ. For the closest previous key:"
    )
    lines.append("  " + min(diffs)[-1])
    return "\n".join(lines)


def _arg_names(jitted, args, kwargs):
    from jaxlite.interpreters.partial_eval import debug_info

    try:
        info = debug_info(jitted.fun, "jit", args, kwargs, jitted.static_argnums)
    except Exception:  # names are a nicety: never fail the call for them
        return None
    return info.arg_names


def _diff(new, old, arg_names):
    """`(severity, number of differences, explanation)`: lower is closer."""
    new_tree, new_sig, new_static, new_ctx, new_axes = new
    old_tree, old_sig, old_static, old_ctx, old_axes = old
    if new_ctx != old_ctx:
        msg = ["Tracing context doesn't match, e.g. due to config or context manager."]
        for name, now, before in zip(TRACE_OPTIONS, new_ctx, old_ctx):
            if now != before:
                msg.append(f"  * {name} differs: now {now} and before {before}")
        return 0, len(msg) - 1, "\n".join(msg)
    if new_axes != old_axes:
        return 0, 1, f"named axes in scope differ: now {new_axes} and before {old_axes}"
    if new_tree != old_tree:
        return (
            1,
            1,
            f"different input pytree:\n  * now {new_tree} and before {old_tree}",
        )
    if new_static != old_static:
        old_static = dict(old_static)
        msg = ["different static arguments:"]
        for where, value in new_static:
            before = old_static.get(where, "<absent>")
            if before is not value and before != value:
                msg.append(f"  * at {where!r}, now {value!r} and before {before!r}")
        return 2, len(msg) - 1, "\n".join(msg)
    msg = ["different input types:"]
    weak_hint = False
    for i, (now, before) in enumerate(zip(new_sig, old_sig)):
        if now == before:
            continue
        (now_s, now_w), (before_s, before_w) = _type_str(now), _type_str(before)
        if now_w != before_w:
            weak_hint = True
            now_s += f"{{weak_type={now_w}}}"
            before_s += f"{{weak_type={before_w}}}"
        name = arg_names[i] if arg_names and i < len(arg_names) else f"args[{i}]"
        msg.append(f"  * at {name}, now {now_s} and before {before_s}")
    text = "\n".join(msg)
    if weak_hint:
        text += "https://docs.jax.dev/en/latest/type_promotion.html#weak-types"
    return 3, len(msg) - 1, text


def _type_str(sig):
    """`('f32[3]', weak)` of one leaf signature (see dispatch._leaf_signature)."""
    if isinstance(sig, type):  # a Python scalar: its default dtype, weakly typed
        dtype, weak = dtypes.dtype_and_weak(sig(0))
        return f"{dtypes.short_name(dtype)}[]", weak
    if sig is None:
        return "<not an array>", False
    shape, dtype, weak = sig
    return f"{dtypes.short_name(dtype)}[{','.join(map(str, shape))}]", weak


# ----------------------------------------------------------------------------------------
# jax_no_execution for eager operations


def _refuse_primitive(prim, args, params):
    check_execution(f"jit({prim.name})")
    # Installed for another thread's `no_execution` block: run as usual.
    return type(eval_trace).process_primitive(eval_trace, prim, args, params)


def _install_no_execution(name, value):
    if name != "jax_no_execution":
        return
    # Process-wide while any thread refuses (the option may be set in one thread only).
    if config.set_in_any_thread("jax_no_execution"):
        eval_trace.process_primitive = _refuse_primitive
    else:
        eval_trace.__dict__.pop("process_primitive", None)


config.add_listener(_install_no_execution)
