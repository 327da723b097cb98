"""The user-facing API around tracing: jit, make_jaxpr, eval_shape, typeof, pmap,
named_call/named_scope, ensure_compile_time_eval, the device-placement functions and
the configuration context managers. (grad and friends live in `api_autodiff`, vmap
in `api_vmap`, the device and process queries in `runtime`.)
"""

from __future__ import annotations

import contextlib
import functools
import sys

import numpy as np

from jaxlite import tree_util
from jaxlite.api_util import shaped_abstractify, trace_flat
from jaxlite.api_vmap import broadcast_prefix
from jaxlite.config import override as config_override
from jaxlite.core import Array, ShapedArray, ShapeDtypeStruct, as_value, is_jax_type
from jaxlite.dispatch import jit, jit_p  # noqa: F401
from jaxlite.distributed.topology import spanning_processes
from jaxlite.interpreters import batching
from jaxlite.interpreters.partial_eval import (
    abstractify,
    closure_call_primitives,
    compile_time_eval,
    debug_info,
)

# A jit staged inside another transformation may close over its tracers.
closure_call_primitives.add(jit_p)


def _static_split(args, static_argnums):
    static = {i: a for i, a in enumerate(args) if i in static_argnums}
    dynamic = [a for i, a in enumerate(args) if i not in static_argnums]
    return static, dynamic


def _merge(static, dynamic, n):
    it = iter(dynamic)
    return [static[i] if i in static else next(it) for i in range(n)]


def _trace_flat(fun, what, args, kwargs, static_argnums=()):
    static_argnums = (
        {static_argnums} if isinstance(static_argnums, int) else set(static_argnums)
    )
    static_argnums = {i % len(args) if i < 0 else i for i in static_argnums}
    static, dynamic = _static_split(args, static_argnums)
    leaves, in_tree = tree_util.tree_flatten((dynamic, kwargs))
    info = debug_info(fun, what, args, kwargs, static_argnums)
    # As JAX's tracing entry points, an aval (`ShapedArray`) stands for itself.
    in_avals = [
        x if isinstance(x, ShapedArray) else shaped_abstractify(fun, x, i, info)
        for i, x in enumerate(leaves)
    ]

    def dynamic_fun(*dyn, **kw):
        return fun(*_merge(static, dyn, len(args)), **kw)

    return trace_flat(dynamic_fun, in_tree, in_avals, info, kwargs=True)


def make_jaxpr(
    fun, static_argnums=(), axis_env=None, return_shape=False, abstracted_axes=None
):
    """A function that returns the `ClosedJaxpr` of `fun` traced at given arguments."""

    @functools.wraps(fun)
    def make(*args, **kwargs):
        with batching.extend_axis_env(axis_env or ()):
            closed, out_tree = _trace_flat(
                fun, "make_jaxpr", args, kwargs, static_argnums
            )
        if return_shape:
            shapes = [
                ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
                for a in closed.out_avals
            ]
            return closed, tree_util.tree_unflatten(out_tree, shapes)
        return closed

    # As JAX names it.
    if hasattr(fun, "__qualname__"):
        make.__qualname__ = f"make_jaxpr({fun.__qualname__})"
    if hasattr(fun, "__name__"):
        make.__name__ = f"make_jaxpr({fun.__name__})"
    return make


def eval_shape(fun, *args, **kwargs):
    """The output shapes and dtypes of `fun`, computed by tracing it (no FLOPs)."""
    closed, out_tree = _trace_flat(fun, "eval_shape", args, kwargs)
    outs = [
        ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
        for a in closed.out_avals
    ]
    return tree_util.tree_unflatten(out_tree, outs)


# ----------------------------------------------------------------------------------------
# The device API: jaxlite has exactly one device, the host CPU (see `runtime`).

from jaxlite.runtime import (  # noqa: E402, F401  (re-exported)
    CpuDevice,
    Device,
    default_backend,
    device_count,
    devices,
    local_device_count,
    local_devices,
)
from jaxlite.sharding import (  # noqa: E402, F401
    PartitionSpec,
    Sharding,
    SingleDeviceSharding,
)

_DEVICE = devices()[0]


def _placement_leaf(d):
    """Whether `d` may stand for where `device_put` puts a leaf, as JAX checks it:
    None, a Device, a Sharding, a PartitionSpec (under a mesh) or a Format (only
    made by `jaxlite.experimental.layout`, so looked for only once it is loaded)."""
    if d is None or isinstance(d, (Device, Sharding, PartitionSpec)):
        return True
    layout = sys.modules.get("jaxlite.experimental.layout")
    return layout is not None and isinstance(d, (layout.Format, layout.Layout))


def _placements(what, value, spec, leaves):
    """`spec` (one placement, or a tree prefix of the value) per leaf, checked."""
    if _placement_leaf(spec):
        flat = [spec] * len(leaves)
    else:
        flat = broadcast_prefix(spec, value, f"device_put {what}")
    for d in flat:
        if not _placement_leaf(d):
            raise ValueError(
                "`jax.device_put` only accepts `None`, `jax.sharding.Sharding`, "
                "`jax.Device`, `Format`, `jax.memory.Space` or a pytree of these "
                f"values. Received invalid value: {d}"
            )
    return flat


def _flags(what, value, spec, n):
    if isinstance(spec, bool) or spec is None:
        return [spec] * n
    return broadcast_prefix(spec, value, f"device_put {what}")


def _check_device_put_leaf(x):
    """What JAX refuses to put on a device, with its TypeErrors: strings, objects
    with no dtype, arrays of Python objects."""
    if isinstance(x, str):  # NumPy would take it for an array of characters
        raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type")
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        if type(x) in (bool, int, float, complex) or hasattr(x, "__jax_array__"):
            return
        raise TypeError(
            f"Cannot interpret value of type {type(x)} as an abstract array; it "
            "does not have a dtype attribute"
        )
    if isinstance(dtype, np.dtype) and dtype == np.dtype(object):
        raise TypeError(
            "Dtype object is not a valid JAX array type. Only arrays of numeric "
            "types are supported by JAX."
        )


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """Place `x` on the device: leaves become jaxlite Arrays. `device` and `src`
    (a Device, Sharding, ..., or a tree prefix of `x` of them) and `donate` and
    `may_alias` (bools, or tree prefixes of bools) are checked as JAX checks them;
    jaxlite has one device, so every placement is that device."""
    leaves, treedef = tree_util.tree_flatten(x)
    for leaf in leaves:
        _check_device_put_leaf(leaf)
    _placements("device", x, device, leaves)
    if src is not None:
        _placements("source", x, src, leaves)
    donate_flat = _flags("donate", x, donate, len(leaves))
    alias_flat = _flags("may_alias", x, may_alias, len(leaves))
    if any(m and d for m, d in zip(alias_flat, donate_flat)):
        raise ValueError("may_alias and donate cannot be True at the same time.")
    return tree_util.tree_unflatten(treedef, [as_value(leaf) for leaf in leaves])


def device_get(x):
    return tree_util.tree_map(
        lambda leaf: np.asarray(leaf) if type(leaf) is Array else leaf, x
    )


def block_until_ready(x):
    return x


# ----------------------------------------------------------------------------------------
# Types, names and compile-time evaluation


def typeof(x):
    """The abstract value (shape, dtype, weak type) of `x`, as JAX's `jax.typeof`."""
    if isinstance(x, ShapeDtypeStruct):
        return x.aval
    if not (
        is_jax_type(x)
        or isinstance(getattr(x, "aval", None), ShapedArray)  # tokens
        or getattr(x, "__jax_array__", None) is not None  # JAX's ValueError
    ):
        # Duck-typed arrays are arguments of jit or eval_shape, not JAX values.
        raise TypeError(f"Argument '{x}' of type '{type(x)}' is not a valid JAX type")
    return abstractify(x)


def named_call(fun, *, name=None):
    """`fun`, under a name for profiles and printed programs. jaxlite keeps no name
    stack, so this is `fun` itself (wrapped, to keep JAX's contract of a new object)."""

    @functools.wraps(fun)
    def named(*args, **kwargs):
        return fun(*args, **kwargs)

    if name is not None:
        named.__name__ = name
    return named


@contextlib.contextmanager
def named_scope(name):
    """A context manager naming the operations staged in its block (for profiles).
    jaxlite records no names; the name is checked as JAX checks it."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    yield


def ensure_compile_time_eval():
    """A context manager in which operations on concrete values run right away, even
    inside `jit`: `jnp.sin(3.0)` is a concrete Array there, not a tracer. Operations
    on traced values are staged as usual."""
    return compile_time_eval()


# ----------------------------------------------------------------------------------------
# pmap


def pmap(
    fun,
    axis_name=None,
    *,
    in_axes=0,
    out_axes=0,
    static_broadcasted_argnums=(),
    devices=None,
    backend=None,
    axis_size=None,
    donate_argnums=(),
    global_arg_shapes=None,
):
    """`fun` mapped over the leading axis of its arguments, compiled.

    jaxlite has one device, so `pmap` computes what JAX's does with `vmap` semantics
    on that device: `pmap(f)(x)` equals `jit(vmap(f))(x)` for every mapped size (JAX
    0.10.2 refuses sizes above its device count; jaxlite runs them, so code written
    for several devices, e.g. sized by `jax.local_device_count()` or tested with
    forced host devices, runs unchanged). Arguments in `static_broadcasted_argnums`
    are static and not mapped. `devices`, `backend` and `donate_argnums` are accepted
    and ignored.
    """
    from jaxlite.api_vmap import vmap

    static = (
        (static_broadcasted_argnums,)
        if isinstance(static_broadcasted_argnums, int)
        else tuple(static_broadcasted_argnums)
    )
    compiled = {}

    def mapped_for(nargs):
        axes = in_axes
        if not isinstance(in_axes, (tuple, list)):
            axes = (in_axes,) * nargs
        if len(axes) != nargs:
            raise ValueError(
                "pmap in_axes must be an int, None, or a tuple of entries "
                "corresponding to the positional arguments passed to the function, "
                f"but got len(in_axes)={len(axes)}, len(args)={nargs}"
            )
        axes = tuple(
            None if i in static or i - nargs in static else a
            for i, a in enumerate(axes)
        )
        batched = vmap(
            fun,
            in_axes=axes,
            out_axes=out_axes,
            axis_name=axis_name,
            axis_size=axis_size,
        )
        # Across processes (jax.distributed), collectives over `axis_name` span
        # them all: each process maps its own leading axis.
        replicated = {
            i
            for i, a in enumerate(axes)
            if a is None and i not in static and i - nargs not in static
        }
        batched = spanning_processes(
            batched, axis_name, replicated, out_replicated=out_axes is None
        )
        return jit(batched, static_argnums=tuple(i % nargs for i in static))

    @functools.wraps(fun)
    def pmapped(*args, **kwargs):
        if static and max(static) >= len(args):
            raise ValueError(
                f"pmapped function has static_broadcasted_argnums={static} but was "
                f"called with only {len(args)} positional "
                f"argument{'s' if len(args) > 1 else ''}. All static broadcasted "
                "arguments must be passed positionally."
            )
        f = compiled.get(len(args))
        if f is None:
            f = compiled[len(args)] = mapped_for(len(args))
        return f(*args, **kwargs)

    return pmapped


# ----------------------------------------------------------------------------------------
# Configuration context managers (`with jax.default_matmul_precision("highest"):`)


def _config_context(name, value):
    # Thread-local, as JAX's: other threads keep their value inside the block.
    return config_override(name, value)


def default_matmul_precision(precision):
    """Inside the block, matrix products use `precision` when none is given
    (NumPy computes in the operands' dtype whatever is asked)."""
    return _config_context("jax_default_matmul_precision", precision)


def numpy_rank_promotion(value):
    """Inside the block, implicit rank promotion in jax.numpy is "allow"ed, "warn"s or
    "raise"s (the `jax_numpy_rank_promotion` option)."""
    return _config_context("jax_numpy_rank_promotion", value)


def numpy_dtype_promotion(value):
    """Inside the block, jax.numpy type promotion is "standard" or "strict" (only
    Python scalars promote; the `jax_numpy_dtype_promotion` option)."""
    return _config_context("jax_numpy_dtype_promotion", value)


@contextlib.contextmanager
def default_device(device):
    """Inside the block, arrays are placed on `device` (jaxlite has one device)."""
    yield


@contextlib.contextmanager
def _no_op_context(*args, **kwargs):
    yield


# Debugging switches of JAX that have nothing to switch in jaxlite (no transfers, no
# compilation logs): accepted so code using them runs.
transfer_guard = transfer_guard_host_to_device = _no_op_context
transfer_guard_device_to_device = transfer_guard_device_to_host = _no_op_context
log_compiles = _no_op_context


def checking_leaks():
    """Inside the block, a transformation whose tracers outlive it (stored in a
    global, a list, an object) fails when it finishes, naming them and what keeps
    them alive: the `jax_check_tracer_leaks` option (see `jaxlite.tracer_leaks`)."""
    return config_override("jax_check_tracer_leaks", True)
