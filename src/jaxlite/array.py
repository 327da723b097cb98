"""`Array`: jaxlite's immutable array, a NumPy buffer plus JAX's weak-type flag.

The buffer is never written after creation, so it can be shared freely: with callbacks
(zero-copy, read-only views), with `np.asarray` and between Arrays. Operators, methods and
`.at[]` are attached by `jaxlite.numpy.array_methods`, which gives `Tracer` the same set.
A tracer counts as an `Array` for `isinstance`, as in JAX.
"""

from __future__ import annotations

import numpy as np


class _ArrayType(type):
    """`isinstance(x, Array)` holds for tracers and key arrays too, as
    `isinstance(x, jax.Array)` does in JAX: inside `jit`, `grad` or `vmap` user code
    sees tracers standing for arrays. (jaxlite's own code tests `type(x) is Array`
    where it needs a buffer.)"""

    def __instancecheck__(cls, x):
        if type(x) is cls or type.__instancecheck__(cls, x):
            return True
        from jaxlite.core import Tracer
        from jaxlite.prng import PRNGKeyArray

        return cls is Array and isinstance(x, (Tracer, PRNGKeyArray))


class Array(metaclass=_ArrayType):
    """An immutable array living on the (single, CPU) device.

    `_value` is a NumPy ndarray or NumPy scalar whose dtype is already canonical (32-bit
    unless x64 is enabled); `weak_type` marks values that came from Python scalars and
    do not upcast other arrays in type promotion.
    """

    __slots__ = ("_value", "weak_type")
    __array_priority__ = 100

    def __init__(self, value, weak_type=False):
        self._value = value
        self.weak_type = weak_type

    shape = property(lambda self: self._value.shape)
    dtype = property(lambda self: self._value.dtype)
    ndim = property(lambda self: self._value.ndim)
    size = property(lambda self: self._value.size)
    nbytes = property(lambda self: self._value.nbytes)
    itemsize = property(lambda self: self._value.itemsize)

    @property
    def aval(self):
        from jaxlite.core import ShapedArray

        return ShapedArray(self._value.shape, self._value.dtype, self.weak_type)

    # -- conversions to Python and NumPy --------------------------------------------------

    def __array__(self, dtype=None, copy=None):
        v = self._value
        if copy or (dtype is not None and np.dtype(dtype) != v.dtype):
            return np.array(v, dtype=dtype, copy=True)
        # A read-only view, zero-copy. Only the view is made read-only: the buffer
        # itself may also belong to someone else (it is never written by jaxlite).
        view = np.asarray(v).view()
        view.flags.writeable = False
        return view

    def __bool__(self):
        return bool(self._value)

    def __int__(self):
        return int(self._value)

    def __float__(self):
        return float(self._value)

    def __complex__(self):
        return complex(self._value)

    def __index__(self):
        if not np.issubdtype(self._value.dtype, np.integer):
            raise TypeError(
                "only integer scalar arrays can be converted to a scalar index"
            )
        return int(self._value)

    def item(self, *args):
        return np.asarray(self._value).item(*args)

    def tolist(self):
        return np.asarray(self._value).tolist()

    def __len__(self):
        if not self._value.shape:
            raise TypeError("len() of unsized object")
        return self._value.shape[0]

    def __iter__(self):
        v = self._value
        if not v.shape:
            raise TypeError("iteration over a 0-d array")
        return (Array(row, self.weak_type) for row in np.asarray(v))

    def __hash__(self):
        raise TypeError("unhashable type: 'jaxlite.Array'")

    def __setitem__(self, idx, value):
        from jaxlite.core import IMMUTABLE_MESSAGE

        raise TypeError(IMMUTABLE_MESSAGE)

    def __reduce__(self):
        return (Array, (np.asarray(self._value), self.weak_type))

    # -- printing -------------------------------------------------------------------------

    def __repr__(self):
        v = np.asarray(self._value)
        weak = ", weak_type=True" if self.weak_type else ""
        dtype_str = f"dtype={v.dtype.name}{weak})"
        line_width = np.get_printoptions()["linewidth"]
        if v.size == 0 and v.ndim:
            body = f"[], shape={v.shape}"
        else:
            body = np.array2string(
                v,
                prefix="Array(",
                suffix=",",
                separator=", ",
                max_line_width=line_width,
            )
        # As JAX: a last line too long for the dtype gets a wider gap before it.
        last_line_len = len(body) - body.rfind("\n") + 1
        sep = " "
        if last_line_len + len(dtype_str) + 1 > line_width:
            sep = " " * len("Array(")
        return f"Array({body},{sep}{dtype_str}"

    def __str__(self):
        return str(np.asarray(self._value))

    def __format__(self, spec):
        if self._value.ndim == 0:
            return format(self._value[()], spec)
        return format(self._value, spec) if spec else str(self)

    # -- device API -----------------------------------------------------------------------

    def block_until_ready(self):
        return self

    def is_ready(self):
        return True

    def platform(self):
        return "cpu"

    def addressable_data(self, index):
        """The data of shard `index`: the whole array (one device)."""
        return self

    @property
    def is_fully_replicated(self):
        return True

    def tobytes(self, order="C"):
        return np.asarray(self._value).tobytes(order)

    def __copy__(self):
        return self  # immutable: a copy would be indistinguishable

    def __deepcopy__(self, memo):
        return self

    def __dlpack__(self, *args, **kwargs):
        # Zero-copy and read-only, as JAX exports; a consumer without DLPack 1.0's
        # read-only flag gets the buffer itself.
        view = np.asarray(self._value).view()
        view.flags.writeable = False
        try:
            return view.__dlpack__(*args, **kwargs)
        except BufferError:
            return np.asarray(self._value).__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return np.asarray(self._value).__dlpack_device__()

    def copy_to_host_async(self):
        pass

    def is_deleted(self):
        return False

    def delete(self):
        pass

    @property
    def is_fully_addressable(self):
        return True

    @property
    def committed(self):
        return False

    def devices(self):
        from jaxlite.api import devices

        return set(devices())

    @property
    def device(self):
        from jaxlite.api import devices

        return devices()[0]

    @property
    def sharding(self):
        from jaxlite.api import SingleDeviceSharding, devices

        return SingleDeviceSharding(devices()[0])
