"""`eager_jit`: an eager call of a composite function runs as one compiled jaxpr.

A jax.numpy function such as `var`, `linalg.solve` or `nn.log_softmax` binds many
primitives. Called eagerly, each of them pays for argument checks, type promotion,
abstract evaluation and a new Array: tens of microseconds around a few microseconds
of NumPy work. JAX runs such functions under `jit`; `eager_jit` does the same for
eager calls. The first call with a new signature (the static arguments, each array's
shape, dtype and weak type, the tracing config) traces the function to a jaxpr and
compiles it with the NumPy backend; later calls run the generated code directly.

The function runs as written, op by op, in every other case, so nothing observable
changes there: under a transformation (jaxprs show the function's own primitives,
never a `jit` equation), while `disable_jit` or the NaN/inf checks are on (they
check each primitive), and when an argument is not of the expected kind (the leading
`n_arrays` positional arguments must be Arrays, key arrays (run on their data) or
Python scalars, which become weak Arrays as under `jit`; every other argument must be
hashable, being static). A call on an array split across processes (a GlobalArray)
runs as the function's `jit`, which computes on this process's blocks.
Decorate only functions whose result does not depend on the *values* of their array
arguments in Python (no `concrete_or_error` on them).
"""

from __future__ import annotations

import functools

from jaxlite import backend, dtypes, tree_util
from jaxlite.api_util import trace_flat
from jaxlite.config import config, current
from jaxlite.core import (
    Array,
    ShapedArray,
    _extended_value_types,
    _state,
    dce_closed_jaxpr,
    eval_trace,
    from_physical,
    has_data,
    physical_value,
)
from jaxlite.dispatch import jit
from jaxlite.distributed.global_array import GlobalArray
from jaxlite.interpreters.partial_eval import debug_info
from jaxlite.util import fun_name

_SCALARS = (float, int, bool)
_MAX_ENTRIES = 512  # per function; the cache is emptied when full


def eager_jit(fun=None, *, n_arrays=1):
    """Run eager calls of `fun` as a compiled jaxpr, cached per signature.

    The first `n_arrays` positional arguments are the traced ones; the others, and
    every keyword argument, are static. Usable as `@eager_jit` or
    `@eager_jit(n_arrays=2)`.
    """
    if fun is None:
        return functools.partial(eager_jit, n_arrays=n_arrays)
    cache = {}

    @functools.wraps(fun)
    def wrapper(*args, **kwargs):
        view = current()  # this thread's config
        if _state.trace is not eval_trace or view.jit_slow_path:
            return fun(*args, **kwargs)
        key = [view.trace_context]
        vals = []
        for a in args[:n_arrays]:
            t = type(a)
            if t is Array:
                v = a._value
                vals.append(v)
                key += (v.shape, v.dtype, a.weak_type)
            elif t in _SCALARS:
                try:
                    v = dtypes.coerce_to_array(a)[()]
                except OverflowError:
                    return fun(*args, **kwargs)
                vals.append(v)
                key += (v.shape, v.dtype, t is not bool)
            elif t in _extended_value_types:  # keys: compiled on their data
                if t is GlobalArray:  # split across processes: as its jit
                    return _on_split(wrapper, args, kwargs, n_arrays)
                aval = a.aval
                vals.append(physical_value(a, aval)._value)
                key += (aval.shape, aval.dtype, False)
            else:
                return fun(*args, **kwargs)
        if len(vals) < n_arrays:  # an array argument given by keyword, or left out
            return fun(*args, **kwargs)
        # Static values with their types: 1.0 == np.float64(1.0), but one is weak.
        statics = args[n_arrays:]
        key += [(type(s), s) for s in statics]
        if kwargs:
            key += [(k, type(v), v) for k, v in kwargs.items()]
        try:
            entry = cache.get(tuple(key))
        except TypeError:  # an unhashable argument (a list, an array): not static
            return fun(*args, **kwargs)
        if entry is None:
            if len(cache) >= _MAX_ENTRIES:
                cache.clear()
            avals = [ShapedArray(*key[i : i + 3]) for i in range(1, 3 * n_arrays, 3)]
            entry = _compile(fun, avals, statics, kwargs)
            # Not cached if another thread's `config.update` ran while tracing.
            if config.trace_context == key[0]:
                cache[tuple(key)] = entry
        exe_fun, out_weak, out_tree, out_avals = entry
        outs = exe_fun(*vals)
        if out_avals is not None:  # keys among the outputs
            outs = [
                from_physical(Array(o, a.weak_type), a) for o, a in zip(outs, out_avals)
            ]
            return outs[0] if out_tree is None else out_tree.unflatten(outs)
        if out_tree is None:
            return Array(outs[0], out_weak[0])
        return tree_util.tree_unflatten(
            out_tree, [Array(o, w) for o, w in zip(outs, out_weak)]
        )

    wrapper._eager_jit_wrapped = fun
    return wrapper


def _on_split(wrapper, args, kwargs, n_arrays):
    """`wrapper`'s function called with an array split across processes (a
    GlobalArray): no process holds it, so the call runs as the function's `jit` (each
    process on its blocks, `distributed/spmd.py`), as every eager operation on such
    an array does in JAX. With an unhashable static argument, it runs op by op (each
    primitive then runs as its jit)."""
    fun = wrapper._eager_jit_wrapped
    statics = tuple((type(s), s) for s in args[n_arrays:])  # 1 and 1.0 differ
    kwargs = tuple((k, type(v), v) for k, v in kwargs.items())
    try:
        hash((statics, kwargs))
    except TypeError:
        return fun(*args, **{k: v for k, _, v in kwargs})
    jitted = getattr(wrapper, "_split_jit", None)
    if jitted is None:

        def call(arrays, statics, kwargs):
            return fun(
                *arrays, *(s for _, s in statics), **{k: v for k, _, v in kwargs}
            )

        call.__name__ = call.__qualname__ = fun_name(fun, "eager_fun")
        jitted = wrapper._split_jit = jit(call, static_argnums=(1, 2))
    return jitted(args[:n_arrays], statics, kwargs)


def _compile(fun, avals, statics, kwargs):
    """Trace `fun` for `avals` and compile it: (function, out weak types, out tree or
    None for a single array)."""

    def dynamic_fun(*tracers):
        return fun(*tracers, *statics, **kwargs)

    in_tree = tree_util.tree_structure(tuple(avals))
    closed, out_tree = trace_flat(dynamic_fun, in_tree, avals, debug_info(fun, "jit"))
    closed = dce_closed_jaxpr(closed)
    name = fun_name(fun, "eager_fun")
    exe = backend.compile(closed, name if name.isidentifier() else "eager_fun")
    out_weak = tuple(a.weak_type for a in closed.out_avals)
    single = out_tree == tree_util.tree_structure(0)
    out_avals = closed.out_avals
    if not any(has_data(a.dtype) for a in out_avals):
        out_avals = None
    return exe.entry, out_weak, None if single else out_tree, out_avals
