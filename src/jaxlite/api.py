"""The user-facing transformations: jit, make_jaxpr, eval_shape, and the device API.

(grad, vmap and the rest join here as their interpreters land.)
"""

from __future__ import annotations

import functools

import numpy as np

from jaxlite import dtypes, tree_util
from jaxlite.core import Array, ShapedArray
from jaxlite.dispatch import jit  # noqa: F401
from jaxlite.interpreters.partial_eval import abstractify, debug_info, trace_to_jaxpr


class ShapeDtypeStruct:
    """A shape and dtype standing for an array (as JAX's `jax.ShapeDtypeStruct`)."""

    __slots__ = ("shape", "dtype", "sharding", "weak_type")

    def __init__(self, shape, dtype, *, sharding=None, weak_type=False):
        self.shape = tuple(shape)
        self.dtype = dtypes.canonicalize_dtype(dtype) if dtype is not None else None
        self.sharding = sharding
        self.weak_type = weak_type

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    @property
    def aval(self):
        return ShapedArray(self.shape, self.dtype, self.weak_type)

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"

    def __eq__(self, other):
        return isinstance(other, ShapeDtypeStruct) and (
            self.shape,
            self.dtype,
            self.weak_type,
        ) == (other.shape, other.dtype, other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))


def _abstract_arg(x):
    if isinstance(x, ShapeDtypeStruct):
        return x.aval
    return abstractify(x)


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
    in_avals = [_abstract_arg(x) for x in leaves]
    info = debug_info(fun, what, args, kwargs, static_argnums)
    out_tree_box = []

    def flat_fun(*tracers):
        dyn, kw = tree_util.tree_unflatten(in_tree, tracers)
        out = fun(*_merge(static, dyn, len(args)), **kw)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_tree_box.append(out_tree)
        return out_leaves

    closed = trace_to_jaxpr(flat_fun, in_avals, info)
    return closed, out_tree_box[0]


def make_jaxpr(
    fun, static_argnums=(), axis_env=None, return_shape=False, abstracted_axes=None
):
    """A function that returns the `ClosedJaxpr` of `fun` traced at given arguments."""

    @functools.wraps(fun)
    def make(*args, **kwargs):
        closed, out_tree = _trace_flat(fun, "make_jaxpr", args, kwargs, static_argnums)
        if return_shape:
            shapes = [
                ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
                for a in closed.out_avals
            ]
            return closed, tree_util.tree_unflatten(out_tree, shapes)
        return closed

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
# The device API: jaxlite has exactly one device, the host CPU.


class CpuDevice:
    id = 0
    platform = "cpu"
    device_kind = "cpu"
    process_index = 0
    client = None

    def __repr__(self):
        return "CpuDevice(id=0)"


_DEVICE = CpuDevice()


class SingleDeviceSharding:
    def __init__(self, device, *, memory_kind=None):
        self.device = device
        self.memory_kind = memory_kind

    @property
    def device_set(self):
        return {self.device}

    def __repr__(self):
        return f"SingleDeviceSharding(device={self.device!r})"


def devices(backend=None):
    return [_DEVICE]


def local_devices(process_index=None, backend=None):
    return [_DEVICE]


def device_count(backend=None):
    return 1


local_device_count = device_count


def default_backend():
    return "cpu"


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """Place `x` on the device: leaves become jaxlite Arrays."""
    from jaxlite.numpy import asarray

    return tree_util.tree_map(lambda leaf: asarray(leaf), x)


def device_get(x):
    return tree_util.tree_map(
        lambda leaf: np.asarray(leaf) if isinstance(leaf, Array) else leaf, x
    )


def block_until_ready(x):
    return x
