"""`Array`: jaxlite's immutable array, a NumPy buffer plus JAX's weak-type flag.

The buffer is never written after creation, so it can be shared freely: with callbacks
(zero-copy, read-only views), with `np.asarray` and between Arrays. The converse holds
too: an Array never holds memory that someone else can write. Where a host value becomes
an Array, `owned_buffer` keeps NumPy's buffer only if NumPy built it afresh or it is
jaxlite's own (a callback returning its argument), and copies it otherwise.

An Array's buffer is also a real array, as XLA's are: never a broadcast view with a zero
stride, which would let `jnp.zeros((10**6, 10**6))` stand for 4 TB it does not hold and
make every later operation on it pay for all of them. `real_buffer` lays such a view out
in memory of its own, through `allocate`, which fails at once with XLA's
RESOURCE_EXHAUSTED error when the memory cannot exist. (Inside compiled code a broadcast
stays a view while only jaxlite reads it.)

Operators, methods and `.at[]` are attached by `jaxlite.numpy.array_methods`, which
gives `Tracer` the same set. A tracer counts as an `Array` for `isinstance`, as in JAX.
"""

from __future__ import annotations

import os

import numpy as np

from jaxlite import dtypes
from jaxlite.cpu_device import default_device
from jaxlite.errors import JaxRuntimeError
from jaxlite.sharding import SingleDeviceSharding

_FRESH_SOURCES = frozenset({bool, int, float, complex, list, tuple})
_PYBUF_WRITABLE = 0x1  # `inspect.BufferFlags.WRITABLE` (Python 3.12+)


def owned_buffer(value, source, private=()):
    """`value`, NumPy's conversion of the host object `source`, as memory an Array may
    hold: `value` itself when nobody else can write it, else a copy.

    Nobody else can write it when NumPy built it afresh (`source` is a Python scalar
    or sequence, a NumPy scalar, or an array whose dtype had to change), or when it is
    one of the `private` arrays (buffers of jaxlite's own, such as the arguments a
    callback was given) or a read-only view of one. Anything else may be memory its
    owner still writes, a caller's array or a buffer a callback keeps, even if the
    array at hand is read-only: it is copied.
    """
    if type(value) is not np.ndarray:
        return value  # NumPy scalars are immutable
    for p in private:  # the common case first: a callback returning its argument
        if value is p:
            return value
    if value.base is None:  # an owner: fresh, or someone else's
        if value is not source and (
            type(source) in _FRESH_SOURCES
            or isinstance(source, (np.ndarray, np.generic))
        ):
            return value
        return value.copy()
    if private and _views_one_of(value, private):
        return value
    return value.copy()


def from_host(x, weak_type=False, dtype=None):
    """An Array of the host value `x` (a NumPy array or scalar, or anything NumPy
    converts) in its canonical dtype (or `dtype`), owning its memory (see
    `owned_buffer`)."""
    return Array(owned_buffer(dtypes.coerce_to_array(x, dtype), x), weak_type)


def _views_one_of(value, private):
    """Whether `value` is one of the `private` arrays or of the arrays whose memory they
    view, or reaches one through read-only views only."""
    targets = []
    for p in private:
        while type(p) is np.ndarray:
            targets.append(p)
            p = p.base
    while type(value) is np.ndarray:
        if any(value is t for t in targets):
            return True
        if value.flags.writeable:
            return False
        value = value.base
    return False


def is_stretched(value):
    """Whether `value` is a broadcast view: a zero stride on an axis longer than one."""
    return (
        type(value) is np.ndarray
        and 0 in value.strides
        and any(s == 0 and n > 1 for s, n in zip(value.strides, value.shape))
    )


def real_buffer(value, where):
    """`value` laid out in memory of its own if it is a broadcast view (see
    `is_stretched`), else `value` itself. `where` names the operation for errors."""
    if type(value) is not np.ndarray or value.base is None:  # owning: not a view
        return value
    if not is_stretched(value):
        return value
    if value.size == 0:
        return allocate(value.shape, value.dtype, where)
    if not any(value.strides):  # one value repeated: zeros come from calloc, lazily
        first = value[(0,) * value.ndim]
        if not first.tobytes().strip(b"\0"):
            return allocate(value.shape, value.dtype, where, zeros=True)
    out = allocate(value.shape, value.dtype, where)
    np.copyto(out, value)
    return out


def allocate(shape, dtype, where, zeros=False):
    """A new NumPy array of `shape` and `dtype` (zero-filled if `zeros`), or XLA's
    RESOURCE_EXHAUSTED error at once when it cannot fit: more bytes than the machine's
    memory (so the answer does not depend on the kernel's overcommit policy), or more
    than `malloc` gives."""
    dtype = np.dtype(dtype)
    size = 1
    for d in shape:
        size *= d
    nbytes = size * dtype.itemsize
    if nbytes > _physical_memory():
        raise JaxRuntimeError.out_of_memory(shape, dtype, nbytes, where)
    try:
        return np.zeros(shape, dtype) if zeros else np.empty(shape, dtype)
    except MemoryError:
        raise JaxRuntimeError.out_of_memory(shape, dtype, nbytes, where) from None


_memory = []


def _physical_memory():
    if not _memory:
        try:
            _memory.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
        except (AttributeError, ValueError, OSError):  # not POSIX: malloc decides
            _memory.append(float("inf"))
    return _memory[0]


class _DeletedBuffer:
    """What a deleted Array (`x.delete()`, or a buffer donated to `jit`) holds in
    place of its NumPy buffer. As in JAX, shape and dtype stay readable; anything
    that reads the data (NumPy, an operation, printing, conversion) raises
    `RuntimeError: Array has been deleted`. Holding this object costs the code that
    reads `Array._value` no check: NumPy and Python both end up calling it."""

    __slots__ = ("shape", "dtype")

    def __init__(self, value):
        self.shape = value.shape
        self.dtype = value.dtype

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.dtype.itemsize)

    def _deleted(self, *args, **kwargs):
        from jaxlite.core import ShapedArray

        aval = ShapedArray(self.shape, self.dtype)
        raise RuntimeError(
            f"Array has been deleted with shape={aval}. It was deleted by "
            "`x.delete()` or donated to a jit function (`donate_argnums`); use the "
            "function's result instead, or do not donate the argument."
        )

    def __getattr__(self, name):
        self._deleted()


# Python looks special methods up on the class: each one that reads data raises.
for _name in (
    "array array_ufunc array_function getitem len iter bool int float complex index "
    "lt le gt ge neg pos abs invert"
).split() + [
    f"{r}{op}"
    for op in "add sub mul truediv floordiv mod pow matmul and or xor lshift rshift "
    "divmod".split()
    for r in ("", "r")
]:
    setattr(_DeletedBuffer, f"__{_name}__", _DeletedBuffer._deleted)
del _name


# Classes whose instances stand for arrays without being `Array`s, filled by the
# layers that define them: key arrays (`prng.PRNGKeyArray`) register here at import.
_virtual_array_types = []


def register_virtual_array_type(cls):
    """Make `isinstance(x, Array)` hold for instances of `cls` (as it does in JAX for
    key arrays)."""
    if cls not in _virtual_array_types:
        _virtual_array_types.append(cls)
    return cls


class _ArrayType(type):
    """`isinstance(x, Array)` holds for tracers and key arrays too, as
    `isinstance(x, jax.Array)` does in JAX: inside `jit`, `grad` or `vmap` user code
    sees tracers standing for arrays. (jaxlite's own code tests `type(x) is Array`
    where it needs a buffer.)"""

    def __instancecheck__(cls, x):
        if type(x) is cls or type.__instancecheck__(cls, x):
            return True
        from jaxlite.core import Tracer  # core imports this module

        return cls is Array and isinstance(x, (Tracer, *_virtual_array_types))


class Array(metaclass=_ArrayType):
    """An immutable array living on the (single, CPU) device.

    `_value` is a NumPy ndarray or NumPy scalar whose dtype is already canonical (32-bit
    unless x64 is enabled); `weak_type` marks values that came from Python scalars and
    do not upcast other arrays in type promotion.
    """

    __slots__ = ("_value", "weak_type", "__weakref__")  # weakly referable, as JAX's
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
        # A read-only view, zero-copy. Only the view is made read-only: the buffer is
        # never written by jaxlite. (A NumPy scalar becomes a fresh 0-d array. This is
        # what every NumPy function does to an Array, in callbacks above all: fast.)
        view = v.view() if type(v) is np.ndarray else np.asarray(v)
        view.setflags(write=False)
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

    __hash__ = None  # unhashable, as JAX's Arrays

    # -- the buffer protocol, as JAX's Arrays export it: read-only, C-contiguous ------
    # Python 3.12+ calls `__buffer__` for `memoryview(x)`, `np.frombuffer(x)`,
    # `bytearray(x)`; before 3.12 a class written in Python cannot export a buffer, and
    # only `bytes(x)` (through `__bytes__`) works there.

    def __buffer__(self, flags):
        if flags & _PYBUF_WRITABLE:
            raise BufferError("jaxlite Arrays are immutable: no writable buffer.")
        view = _c_contiguous(self._value)
        view.flags.writeable = False
        try:
            return memoryview(view)
        except ValueError as e:  # a dtype the protocol has no format for (bfloat16)
            raise BufferError(
                f"{e}: {view.dtype} is not supported by the Python buffer protocol."
            ) from None

    def __bytes__(self):
        return _c_contiguous(self._value).tobytes()

    def __setitem__(self, idx, value):
        from jaxlite.core import IMMUTABLE_MESSAGE

        raise TypeError(IMMUTABLE_MESSAGE)

    def __reduce__(self):
        return (_unpickle, (np.asarray(self._value), self.weak_type))

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
        if type(self._value) is _DeletedBuffer:
            raise JaxRuntimeError(
                "INVALID_ARGUMENT: BlockHostUntilReady() called on deleted or "
                "donated buffer"
            )
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
        return type(self._value) is _DeletedBuffer

    def unsafe_buffer_pointer(self):
        """The address of the buffer's first byte, as JAX's (to tell buffers apart;
        reading or writing through it is unsafe). A NumPy scalar value, which has no
        buffer of its own, is first made a 0-d array, so the address stays stable."""
        if isinstance(self._value, np.generic):
            self._value = np.asarray(self._value)
        return self._value.ctypes.data

    def delete(self):
        """Free the buffer: any later read of this Array's data raises (its shape
        and dtype stay readable), as JAX's `Array.delete`."""
        if type(self._value) is not _DeletedBuffer:
            self._value = _DeletedBuffer(self._value)

    @property
    def is_fully_addressable(self):
        return True

    @property
    def committed(self):
        return False

    def devices(self):
        return {default_device()}

    @property
    def device(self):
        return default_device()

    @property
    def sharding(self):
        return SingleDeviceSharding(default_device())


def _c_contiguous(value):
    """A C-contiguous view of `value` (a copy if it is strided), of its own rank."""
    value = np.asarray(value)
    return value.view() if value.flags.c_contiguous else value.copy(order="C")


def _unpickle(value, weak_type):
    """An unpickled Array: its value in this process's canonical dtype, as JAX's
    `device_put` (a float64 Array pickled with x64 on is float32 where x64 is off)."""
    return Array(dtypes.coerce_to_array(value), weak_type)
