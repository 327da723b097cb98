"""Operators, methods and properties shared by `Array`, every `Tracer` and
`GlobalArray` (an array split across processes, on which they run as `jit` does).

They all get the same set, each entry forwarding to the jax.numpy function of the same
meaning, so code behaves identically eagerly and under any transformation.
"""

from __future__ import annotations

import numpy as np

from jaxlite.core import Array, Tracer
from jaxlite.distributed.global_array import GlobalArray

_ARRAYLIKE_SCALARS = (int, float, complex, bool)


def _is_operand(x):
    return isinstance(x, (Array, Tracer, np.ndarray, np.generic)) or (
        type(x) in _ARRAYLIKE_SCALARS
    )


def _operand(other):
    """`other` as an operand of an operator, converted if it has `__jax_array__` (as
    JAX's operators do); None if it is no operand (the operator then returns
    NotImplemented)."""
    if _is_operand(other):
        return other
    convert = getattr(other, "__jax_array__", None)
    if convert is None:
        return None
    other = convert()
    return other if _is_operand(other) else None


def _binop(fun, swap=False):
    if swap:

        def method(self, other):
            if not _is_operand(other):
                other = _operand(other)
                if other is None:
                    return NotImplemented
            return fun(other, self)

    else:

        def method(self, other):
            if not _is_operand(other):
                other = _operand(other)
                if other is None:
                    return NotImplemented
            return fun(self, other)

    return method


def _forward(fun):
    def method(self, *args, **kwargs):
        return fun(self, *args, **kwargs)

    method.__name__ = fun.__name__
    method.__doc__ = f"Same as `jnp.{fun.__name__}(self, ...)`."
    return method


def _astype(self, dtype, copy=False, device=None):
    import jaxlite.numpy as jnp

    return jnp.astype(self, dtype, copy=copy, device=device)


def _reshape(self, *shape, order="C"):
    import jaxlite.numpy as jnp

    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = shape[0]
    return jnp.reshape(self, shape, order=order)


def _transpose(self, *axes):
    import jaxlite.numpy as jnp

    if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], int)):
        axes = axes[0]
    return jnp.transpose(self, axes or None)


def _copy(self, order=None):
    from jaxlite.lax.structural import copy_p

    return copy_p.bind(self)


def _view(self, dtype=None, type=None):
    """The same bits read as `dtype` (`bitcast_convert_type`; the last axis is
    split or merged when the item sizes differ), as `jax.Array.view`."""
    from jaxlite import lax

    if type is not None:
        raise NotImplementedError("`type` argument of array.view() is not supported.")
    if dtype is None:
        return self
    dtype = np.dtype(dtype)
    old = np.dtype(self.dtype)
    if dtype == old:
        return self
    if self.ndim == 0 and dtype.itemsize != old.itemsize:
        raise ValueError("view() of a 0-d array needs a dtype of the same item size.")
    if dtype.itemsize == old.itemsize:
        return lax.bitcast_convert_type(self, dtype)
    if dtype.itemsize < old.itemsize:  # each element becomes several
        out = lax.bitcast_convert_type(self, dtype)
        return out.reshape(*self.shape[:-1], -1)
    ratio = dtype.itemsize // old.itemsize
    if self.shape[-1] % ratio:
        raise ValueError(
            "When changing to a larger dtype, its size must be a divisor of the total "
            "size in bytes of the last axis of the array."
        )
    grouped = self.reshape(*self.shape[:-1], self.shape[-1] // ratio, ratio)
    return lax.bitcast_convert_type(grouped, dtype)


def _contains(self, value):
    import jaxlite.numpy as jnp

    return bool(jnp.any(self == value))


def attach_methods(jnp):
    """Give Array, Tracer and GlobalArray their operators and methods (called once
    by jaxlite.numpy)."""
    binops = {
        "add": jnp.add,
        "sub": jnp.subtract,
        "mul": jnp.multiply,
        "truediv": jnp.true_divide,
        "floordiv": jnp.floor_divide,
        "mod": jnp.remainder,
        "pow": jnp.power,
        "matmul": getattr(jnp, "matmul", None),
        "and": jnp.bitwise_and,
        "or": jnp.bitwise_or,
        "xor": jnp.bitwise_xor,
        "lshift": jnp.left_shift,
        "rshift": jnp.right_shift,
        "divmod": jnp.divmod,
    }
    comparisons = {
        "eq": jnp.equal,
        "ne": jnp.not_equal,
        "lt": jnp.less,
        "le": jnp.less_equal,
        "gt": jnp.greater,
        "ge": jnp.greater_equal,
    }
    unary = {
        "neg": jnp.negative,
        "pos": jnp.positive,
        "abs": jnp.absolute,
        "invert": jnp.invert,
    }
    methods = {}
    for name, fun in binops.items():
        if fun is None:
            continue
        methods[f"__{name}__"] = _binop(fun)
        methods[f"__r{name}__"] = _binop(fun, swap=True)
    for name, fun in comparisons.items():
        methods[f"__{name}__"] = _binop(fun)
    for name, fun in unary.items():
        methods[f"__{name}__"] = _forward(fun)
    methods["__round__"] = lambda self, ndigits=None: jnp.round(self, ndigits or 0)
    if hasattr(jnp.indexing, "getitem"):
        methods["__getitem__"] = jnp.indexing.getitem
        methods["at"] = property(jnp.indexing.IndexUpdateHelper)
    methods["astype"] = _astype
    methods["copy"] = _copy
    methods["view"] = _view
    methods["__contains__"] = _contains
    methods["reshape"] = _reshape
    methods["transpose"] = _transpose
    methods["T"] = property(lambda self: jnp.transpose(self))
    methods["mT"] = property(lambda self: jnp.swapaxes(self, -1, -2))
    methods["real"] = property(jnp.real)
    methods["imag"] = property(jnp.imag)
    methods["flat"] = property(lambda self: jnp.ravel(self))
    for name in (
        "sum prod mean var std max min argmax argmin any all cumsum cumprod ravel "
        "flatten squeeze swapaxes take clip round conj conjugate dot nonzero sort "
        "argsort repeat trace diagonal ptp searchsorted choose compress argpartition"
    ).split():
        fun = getattr(jnp, "ravel" if name == "flatten" else name, None)
        if fun is not None:
            methods[name] = _forward(fun)
    for cls in (Array, Tracer, GlobalArray):
        for name, value in methods.items():
            setattr(cls, name, value)
    if "__getitem__" in methods:
        Tracer.__getitem__ = _tracer_getitem(methods["__getitem__"])


def _tracer_getitem(getitem):
    """A tracer's `__getitem__`: a tracer of a mutable array reference reads through
    its aval (`jaxlite.state`), as JAX's tracers do; any other indexes as an array."""

    def method(self, idx):
        ref_getitem = getattr(self.aval, "_getitem", None)
        if ref_getitem is not None:
            return ref_getitem(self, idx)
        return getitem(self, idx)

    return method
