"""Tracer leak checking (`jax.checking_leaks()`, the `jax_check_tracer_leaks` option).

A tracer belongs to one trace; once its transformation has finished, nothing should
still hold it. A function that stores a tracer in a global, a list it closes over or
an object ("leaks" it) gets an `UnexpectedTracerError` where the tracer is used later;
with leak checking on, the transformation itself fails as soon as it finishes, naming
the leaked tracers and the chain of references that keeps each alive, as JAX does.

`check_no_leaks(trace)` is called by the transformations where a trace ends (the jaxpr
trace of jit, scan, ... and the trace of a vmap), after they have dropped their own
references to its tracers. It costs a garbage collection, so only while checking.
"""

from __future__ import annotations

import gc
import inspect
import types

from jaxlite.config import config
from jaxlite.core import Tracer


def check_no_leaks(trace):
    """Raise JAX's "Leaked trace" Exception when a tracer of the finished `trace` is
    still alive (only while `jax_check_tracer_leaks` is on)."""
    if not config.read("jax_check_tracer_leaks"):
        return
    gc.collect()  # tracers kept only by reference cycles cannot be used: not leaks
    tracers = [r for r in gc.get_referrers(trace) if isinstance(r, Tracer)]
    if tracers:
        raise leaked_tracer_error("trace", trace, tracers)


def leaked_tracer_error(name, trace, tracers):
    """JAX's error for leaked `tracers` of `trace` (a plain Exception, as JAX's)."""
    ignore = {id(tracers)}
    parts = []
    for t in tracers:
        parts.append(f"{t}{_origin(t)}{_why_alive(ignore, t)}")
    msgs = "\n\n".join(parts)
    return Exception(f"Leaked {name} {trace}. Leaked tracer(s):\n\n{msgs}\n")


def _origin(tracer):
    """Where the tracer came from, as far as its trace knows."""
    describe = getattr(tracer._trace, "describe_tracer", None)
    text = describe(tracer) if describe is not None else ""
    if text:
        return f"\n{text}"
    return (
        f"\nThis {type(tracer).__name__} with object id {id(tracer)} was created on "
        "line:\n  (unknown: jaxlite does not record where tracers are created)"
    )


def _why_alive(ignore, x):
    """The chain of references from `x` up to a module or a root: one line each."""

    def parents(obj):
        found = [
            r
            for r in gc.get_referrers(obj)
            if id(r) not in ignore and not isinstance(r, types.FrameType)
        ]
        ignore.add(id(found))  # our own list refers to them too
        return found

    child, lines, seen = x, [], set()
    while id(child) not in seen and type(child) is not types.ModuleType:
        above = parents(child)
        if not above:
            break
        parent = above[0]
        # A namespace (an object's __dict__) or a closure cell is one step for the
        # reader: the object or the function holding it.
        if isinstance(parent, dict):
            owners = parents(parent)
            if owners and getattr(owners[0], "__dict__", None) is parent:
                parent = owners[0]
        elif type(parent) is types.CellType:
            cells = parents(parent)
            functions = parents(cells[0]) if cells else []
            if functions:
                parent = functions[0]
        lines.append(
            f"<{type(child).__name__} {id(child)}> is referred to by "
            + _container_info(parent, id(child))
        )
        seen.add(id(child))
        child = parent
    return "\n" + "\n".join(lines) if lines else ""


def _container_info(container, obj_id):
    name = f"<{type(container).__name__} {id(container)}>"
    if type(container) is types.ModuleType:
        return container.__name__
    if type(container) is types.FunctionType:
        closure = inspect.getclosurevars(container)
        keys = [
            k
            for k, v in {**closure.nonlocals, **closure.globals}.items()
            if id(v) == obj_id
        ]
        if len(keys) == 1:
            return f"{name} ({container.__name__}) closed-over variable {keys[0]}"
        if keys:
            return f"{name} in closed-over variables " + ", ".join(map(repr, keys))
    if hasattr(container, "__dict__"):
        keys = [k for k, v in vars(container).items() if id(v) == obj_id]
        if len(keys) == 1:
            return f"{name}.{keys[0]}"
        if keys:
            return f"{name} in vars " + ", ".join(map(repr, keys))
    if isinstance(container, (list, tuple)):
        idxs = [i for i, v in enumerate(container) if id(v) == obj_id]
        if len(idxs) == 1:
            return f"{name}[{idxs[0]}]"
        return f"{name} at indices " + ", ".join(map(str, idxs))
    if isinstance(container, dict):
        keys = [k for k, v in container.items() if id(v) == obj_id]
        if len(keys) == 1:
            return f"{name}[{keys[0]!r}]"
        return f"{name} at keys " + ", ".join(map(repr, keys))
    return name
