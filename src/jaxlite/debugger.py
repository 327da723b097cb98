"""`jax.debug.breakpoint()`: stop and look at the values of the function it is in.

The breakpoint collects the local variables of the function that calls it. Eagerly it
opens the debugger (Python's `pdb`) right away; inside `jit`, `vmap`, `grad`, ... it is
a debug callback, so the debugger opens when the compiled code runs, with the runtime
values of the traced locals (one stop per batch element under vmap). The debugger's
frame holds those locals: `p x` prints one, `c` continues. Other locals (Python values
seen at trace time) are there too.
"""

from __future__ import annotations

import pdb
import sys

from jaxlite import tree_util
from jaxlite.core import Tracer, is_jax_type

# What opens the debugger: `debugger_factory()` must return an object with pdb's
# `run(statement, globals, locals)`. Tests replace it to script the session.
debugger_factory = pdb.Pdb


def _is_array(x):
    return isinstance(x, Tracer) or (is_jax_type(x) and hasattr(x, "shape"))


def _enter(locals_tree, static, frame_info, values):
    from jaxlite.numpy import asarray

    local_vars = dict(static)
    names, tree = locals_tree
    arrays = tree_util.tree_unflatten(tree, [asarray(v) for v in values])
    local_vars.update(zip(names, arrays))
    where, globs = frame_info
    print(f"Entering jaxlite debugger (pdb) at {where}", file=sys.stdout)
    debugger_factory().run("pass", dict(globs), local_vars)


def breakpoint(  # noqa: A001  (JAX's name)
    *,
    backend=None,
    filter_frames=True,
    num_frames=None,
    ordered=False,
    token=None,
    **kwargs,
):
    """Open the debugger on the calling function's local variables (see the module
    docstring). `ordered=True` keeps breakpoints in program order with other ordered
    effects; the other arguments are accepted for compatibility."""
    frame = sys._getframe(1)
    code = frame.f_code
    where = f"{code.co_name} at {code.co_filename}:{frame.f_lineno}"
    names, arrays, static = [], [], {}
    for name, value in frame.f_locals.items():
        leaves = tree_util.tree_leaves(value)
        if leaves and all(_is_array(x) for x in leaves):
            names.append(name)
            arrays.append(value)
        else:
            static[name] = value
    frame_info = (where, frame.f_globals)
    del frame
    values, tree = tree_util.tree_flatten(arrays)
    locals_tree = (names, tree)
    if not any(isinstance(v, Tracer) for v in values):
        _enter(locals_tree, static, frame_info, values)
        return token
    from jaxlite import debug

    def callback(*runtime_values):
        _enter(locals_tree, static, frame_info, runtime_values)

    debug.callback(callback, *values, ordered=ordered)
    return token


__all__ = ["breakpoint", "debugger_factory"]
