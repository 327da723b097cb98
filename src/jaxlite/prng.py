"""The machinery under `jaxlite.random`: Threefry-2x32 keys and typed key arrays.

A key is two uint32 words. A draw never updates state: it hashes a *counter* with the
key through the Threefry-2x32 block cipher (Salmon, Moraes, Dror and Shaw, "Parallel
random numbers: as easy as 1, 2, 3", SC 2011), 20 rounds of add, rotate and xor with the
key injected every four rounds. As in JAX with its default `jax_threefry_partitionable`,
the counter of an output element is its flat index (a 64-bit number given as a high and
a low word), so an element's bits depend only on the key and where the element sits.
`split` keeps both hashed words as the two words of each new key, `random_bits` xors them
for 32-bit draws (or joins them for 64-bit ones), and `fold_in` hashes the counter
`(0, data)`. With the cipher and the counters fixed, every bit matches JAX.

The cipher is written with jaxlite.lax integer operations (wrapping uint32 add, shifts,
xor), so it traces into jaxprs, batches under vmap, and gets float0 tangents under
autodiff like any other integer code. The small entry points are `jit`-compiled, as in
JAX, so an eager draw runs one cached NumPy program instead of a hundred dispatches.

Typed keys (`random.key`) are `PRNGKeyArray`s: a pytree node whose only leaf is the
uint32 key data of shape `(*keys_shape, 2)`, so they travel through jit, vmap, scan
carries and callbacks as that array does, and are rebuilt on the other side. Raw keys
(`random.PRNGKey`) are the uint32 arrays themselves. Their dtype `key<fry>` is an
extended dtype (`jaxlite.dtypes.prng_key`).
"""

from __future__ import annotations

import math
import operator

import numpy as np

from jaxlite import dtypes, lax, tree_util
from jaxlite import numpy as jnp
from jaxlite.config import config
from jaxlite.core import (
    Array,
    Tracer,
)
from jaxlite.dispatch import jit
from jaxlite.lax.structural import canonicalize_shape

__all__ = [
    "KeyTy",
    "PRNGKeyArray",
    "check_prng_key",
    "iota_2x32_shape",
    "key_dtype",
    "random_bits",
    "random_fold_in",
    "random_seed",
    "random_split",
    "threefry2x32",
    "threefry_2x32",
]

IMPL_NAME = "threefry2x32"
UINT_DTYPES = {
    8: np.dtype("uint8"),
    16: np.dtype("uint16"),
    32: np.dtype("uint32"),
    64: np.dtype("uint64"),
}

# --------------------------------------------------------------------------------------
# The cipher

# Rotation distances of the eight rounds that alternate between key injections, and
# the parity constant of the key schedule (Threefish's C240 truncated to 32 bits).
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_KEY_PARITY = np.uint32(0x1BD11BDA)


def _u32(v):
    return np.uint32(v)


def _rotate_left(x, distance):
    return lax.bitwise_or(
        lax.shift_left(x, _u32(distance)),
        lax.shift_right_logical(x, _u32(32 - distance)),
    )


def threefry2x32(k1, k2, x1, x2):
    """Threefry-2x32 with 20 rounds: the two hashed words of the counter (x1, x2).

    All four operands are uint32; the keys are usually scalars and broadcast against
    the counters.
    """
    schedule = (k1, k2, lax.bitwise_xor(lax.bitwise_xor(k1, k2), _KEY_PARITY))
    x1 = lax.add(x1, schedule[0])
    x2 = lax.add(x2, schedule[1])
    for injection in range(1, 6):
        for distance in _ROTATIONS[(injection - 1) % 2]:
            x1 = lax.add(x1, x2)
            x2 = lax.bitwise_xor(_rotate_left(x2, distance), x1)
        x1 = lax.add(x1, schedule[injection % 3])
        x2 = lax.add(x2, lax.add(schedule[(injection + 1) % 3], _u32(injection)))
    return x1, x2


def threefry_2x32(key_data, count):
    """JAX's `threefry_2x32`: hash the uint32 array `count` as pairs of halves.

    The flat counter is split into a first and a second half (padded with a zero when
    its size is odd); the two hashed halves are joined back in the same order.
    """
    k1, k2 = _key_words(key_data)
    size = math.prod(np.shape(count))
    flat = lax.reshape(count, (size,))
    if size % 2:
        flat = lax.concatenate([flat, lax.full((1,), 0, np.uint32)], 0)
    half = flat.shape[0] // 2
    x1, x2 = lax.split(flat, (half, half))
    y1, y2 = threefry2x32(k1, k2, x1, x2)
    out = lax.concatenate([y1, y2], 0)
    if size % 2:
        out = lax.split(out, (size, 1))[0]
    return lax.reshape(out, np.shape(count))


def _key_words(key_data):
    """The two words of one key, `(...)`-shaped from `(..., 2)` data."""
    k1, k2 = lax.split(key_data, (1, 1), axis=-1)
    return lax.squeeze(k1, (-1,)), lax.squeeze(k2, (-1,))


def iota_2x32_shape(shape):
    """The flat index of every element of `shape`, as (high word, low word) uint32.

    jaxlite arrays hold fewer than 2**32 elements in practice, so the high word is zero.
    """
    size = math.prod(shape)
    if size > 2**32:
        raise NotImplementedError(
            f"random bits array of size {size} exceeds 2 ** 32 elements, which jaxlite "
            "does not support"
        )
    lo = lax.reshape(lax.iota(np.uint32, size), shape)
    hi = lax.full(shape, 0, np.uint32)
    return hi, lo


# --------------------------------------------------------------------------------------
# Key operations on raw key data: seed, split, fold_in, random_bits


def _seed_value(seed):
    """A Python int seed as JAX converts it: int64, then wrapped to int32 without x64."""
    if not -(2**63) <= seed < 2**63:
        raise OverflowError("Python int too large to convert to C long")
    value = np.int64(seed)
    if not config.x64_enabled:
        value = value.astype(np.int32)
    return Array(value)


def random_seed(seed):
    """Raw key data `uint32[2]` for an integer seed.

    A 64-bit seed gives its high and low words; a narrower one gives `0` and its value
    modulo 2**32 (negative seeds wrap, as in JAX).
    """
    if isinstance(seed, bool):
        seed = int(seed)
    if isinstance(seed, int):
        seed = _seed_value(seed)
    elif not isinstance(seed, (Array, Tracer)):
        seed = lax.structural.operand(seed)
    dt = seed.dtype
    if dt == np.bool_:
        seed = lax.convert_element_type(seed, np.int32)
    elif not dtypes.issubdtype(dt, np.integer):
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    return _seed_words(seed)


@jit
def _seed_words(seed):
    if seed.dtype.itemsize == 8:
        hi = lax.shift_right_logical(seed, np.array(32, seed.dtype))
        hi = lax.convert_element_type(hi, np.uint32)
    else:
        hi = lax.full((), 0, np.uint32)
    lo = lax.convert_element_type(seed, np.uint32)
    return lax.stack([hi, lo])


def _split_data(key_data, shape):
    return _split_jit(key_data, tuple(shape))


@jit(static_argnums=(1,))
def _split_jit(key_data, shape):
    k1, k2 = _key_words(key_data)
    hi, lo = iota_2x32_shape(shape)
    b1, b2 = threefry2x32(k1, k2, hi, lo)
    return lax.stack([b1, b2], axis=len(shape))


@jit
def _fold_in_data(key_data, data):
    k1, k2 = _key_words(key_data)
    b1, b2 = threefry2x32(k1, k2, _u32(0), data)
    return lax.stack([b1, b2])


def _random_bits_data(key_data, bit_width, shape):
    return _random_bits_jit(key_data, bit_width, tuple(shape))


@jit(static_argnums=(1, 2))
def _random_bits_jit(key_data, bit_width, shape):
    k1, k2 = _key_words(key_data)
    hi, lo = iota_2x32_shape(shape)
    b1, b2 = threefry2x32(k1, k2, hi, lo)
    if bit_width == 64:
        u64 = UINT_DTYPES[64]
        b1 = lax.convert_element_type(b1, u64)
        b2 = lax.convert_element_type(b2, u64)
        return lax.bitwise_or(lax.shift_left(b1, np.uint64(32)), b2)
    bits = lax.bitwise_xor(b1, b2)
    if bit_width == 32:
        return bits
    return lax.convert_element_type(bits, UINT_DTYPES[bit_width])


# --------------------------------------------------------------------------------------
# Typed keys


class KeyTy(dtypes.ExtendedDType):
    """The dtype of typed threefry keys, printed as JAX prints it: `key<fry>`.

    An extended dtype: `issubdtype(key.dtype, dtypes.prng_key)` (and `extended`,
    `np.generic`) holds, and no NumPy dtype compares equal to it."""

    type = dtypes.prng_key
    name = "key<fry>"
    itemsize = 8
    impl_name = IMPL_NAME

    def __eq__(self, other):
        return isinstance(other, KeyTy)

    def __hash__(self):
        return hash(self.name)


key_dtype = KeyTy()


class PRNGKeyArray:
    """An array of typed keys: JAX's `Array(shape, dtype=key<fry>)`.

    `_base_array` is the uint32 key data, shaped `(*shape, 2)`: an Array eagerly, a
    tracer under a transformation. It is the pytree leaf of the key.
    """

    __slots__ = ("_base_array",)

    def __init__(self, base_array):
        self._base_array = base_array

    dtype = key_dtype

    @property
    def shape(self):
        return tuple(self._base_array.shape[:-1])

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    itemsize = property(lambda self: key_dtype.itemsize)
    nbytes = property(lambda self: self.size * key_dtype.itemsize)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        # `split` rather than indexing: unpacking `k1, k2 = split(key)` then batches
        # under vmap with the simplest rule.
        pieces = lax.split(self._base_array, (1,) * self.shape[0])
        return iter([PRNGKeyArray(lax.squeeze(p, (0,))) for p in pieces])

    def __getitem__(self, idx):
        idx = idx if isinstance(idx, tuple) else (idx,)
        indexed = sum(
            np.ndim(i) if _is_bool_index(i) else 1
            for i in idx
            if i is not None and i is not Ellipsis
        )
        if indexed > self.ndim:
            raise IndexError(
                f"Too many indices: array is {self.ndim}-dimensional, but {indexed} "
                "were indexed"
            )
        return PRNGKeyArray(self._base_array[(*idx, slice(None))])

    # -- shape methods ---------------------------------------------------------------

    def reshape(self, *shape, order="C"):
        if order != "C":
            raise NotImplementedError("key arrays reshape only in order 'C'")
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = shape[0]
        shape = list(canonicalize_shape(shape) if -1 not in shape else shape)
        if -1 in shape:
            known = math.prod(d for d in shape if d != -1)
            shape[shape.index(-1)] = self.size // known if known else 0
        return PRNGKeyArray(lax.reshape(self._base_array, (*shape, 2)))

    def ravel(self):
        return self.reshape((self.size,))

    flatten = ravel

    def transpose(self, *axes):
        if len(axes) == 1 and not isinstance(axes[0], int):
            axes = axes[0]
        axes = tuple(axes) if axes else tuple(reversed(range(self.ndim)))
        axes = tuple(operator.index(a) % self.ndim for a in axes)
        return PRNGKeyArray(lax.transpose(self._base_array, (*axes, self.ndim)))

    T = property(lambda self: self.transpose())

    @property
    def mT(self):  # noqa: N802 (NumPy's name)
        raise NotImplementedError("Cannot call abstract method mT")

    def swapaxes(self, axis1, axis2):
        axes = list(range(self.ndim))
        a1, a2 = operator.index(axis1) % self.ndim, operator.index(axis2) % self.ndim
        axes[a1], axes[a2] = axes[a2], axes[a1]
        return self.transpose(axes)

    def take(self, indices, axis=None):
        keys = self.ravel() if axis is None else self
        axis = 0 if axis is None else operator.index(axis) % keys.ndim
        data = jnp.take(keys._base_array, indices, axis=axis)
        return PRNGKeyArray(data)

    @property
    def at(self):
        """Indexed updates by keys, as `Array.at`: `keys.at[i].set(key)`."""
        return _KeyIndexer(self)

    def squeeze(self, axis=None):
        if axis is None:
            axis = tuple(i for i, d in enumerate(self.shape) if d == 1)
        axis = (axis,) if isinstance(axis, int) else tuple(axis)
        axis = tuple(a % self.ndim for a in axis)
        return PRNGKeyArray(lax.squeeze(self._base_array, axis))

    def copy(self):
        return self

    def block_until_ready(self):
        return self

    # -- comparisons and conversions -------------------------------------------------

    def _compare(self, other, prim):
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        same = prim(self._base_array, other._base_array)
        return lax.reduce_and(same, (same.ndim - 1,))

    def __eq__(self, other):
        return self._compare(other, lax.eq)

    def __ne__(self, other):
        out = self._compare(other, lax.eq)
        return out if out is NotImplemented else lax.bitwise_not(out)

    __hash__ = None

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            "JAX array with PRNGKey dtype cannot be converted to a NumPy array. Use "
            "jax.random.key_data(arr) if you wish to extract the underlying integer "
            "array."
        )

    def astype(self, dtype):
        raise NotImplementedError(
            "Cannot call abstract method astype: key arrays (dtype key<fry>) do not "
            f"convert to {np.dtype(dtype).name}. Use jax.random.key_data to get their "
            "uint32 data."
        )

    def __repr__(self):
        base = self._base_array
        if isinstance(base, Tracer):
            return f"{type(base).__name__}(key<fry>{list(self.shape)})"
        if not isinstance(base, (Array, np.ndarray)):
            # Abstract data, e.g. a ShapeDtypeStruct from eval_shape.
            return f"{type(base).__name__}(shape={self.shape}, dtype=key<fry>)"
        return f"Array({self.shape}, dtype=key<fry>) overlaying:\n{np.asarray(base)}"

    __str__ = __repr__


class _KeyIndexer:
    """`keys.at`: `keys.at[idx]` gives the update methods for the keys at `idx`."""

    __slots__ = ("keys",)

    def __init__(self, keys):
        self.keys = keys

    def __getitem__(self, idx):
        return _KeyIndexUpdate(self.keys, idx)


class _KeyIndexUpdate:
    """`keys.at[idx]`: `get()` or `set(new_keys)`, through the keys' uint32 data."""

    __slots__ = ("keys", "idx")

    def __init__(self, keys, idx):
        self.keys, self.idx = keys, idx if isinstance(idx, tuple) else (idx,)

    def get(self, **kwargs):
        return self.keys[self.idx]

    def set(self, values, **kwargs):
        if not isinstance(values, PRNGKeyArray):
            raise ValueError(
                "dtype=key<fry> is not a valid dtype for JAX type promotion: keys can "
                f"only be set to keys, got {type(values).__name__}. Use "
                "jax.random.wrap_key_data to make keys from uint32 data."
            )
        base = self.keys._base_array
        data = base.at[(*self.idx, slice(None))].set(values._base_array, **kwargs)
        return PRNGKeyArray(data)


def _no_arithmetic(name):
    def method(self, *others):
        names = ["key<fry>"] + [
            str(getattr(o, "dtype", dtypes.dtype(o))) for o in others
        ]
        raise TypeError(f"{name} does not accept dtypes {', '.join(names)}.")

    return method


for _dunder, _prim in (
    ("add", "add"),
    ("radd", "add"),
    ("sub", "sub"),
    ("rsub", "sub"),
    ("mul", "mul"),
    ("rmul", "mul"),
    ("truediv", "div"),
    ("rtruediv", "div"),
    ("neg", "neg"),
    ("lt", "lt"),
    ("le", "le"),
    ("gt", "gt"),
    ("ge", "ge"),
):
    setattr(PRNGKeyArray, f"__{_dunder}__", _no_arithmetic(_prim))


def _is_bool_index(i):
    return getattr(i, "dtype", None) == np.bool_ or (
        isinstance(i, (list, tuple)) and i and isinstance(i[0], bool)
    )


def _unflatten_keys(_, children):
    (data,) = children
    if getattr(data, "dtype", None) == dtypes.float0:
        # The tangent or cotangent of keys (grad with allow_int=True, vjp): as in JAX,
        # a float0 array of the keys' shape, not keys.
        return Array(np.zeros(np.shape(data)[:-1], dtypes.float0))
    return PRNGKeyArray(data)


tree_util.register_pytree_node(
    PRNGKeyArray, lambda keys: ((keys._base_array,), None), _unflatten_keys
)


# --------------------------------------------------------------------------------------
# Checking keys given to jaxlite.random


def _is_array_like(x):
    return hasattr(x, "shape") and hasattr(x, "dtype") and hasattr(x, "ndim")


def wrap_key_data(key_data):
    """`key_data` (uint32 `(..., 2)`) as typed keys, after JAX's checks."""
    if not _is_array_like(key_data):
        raise TypeError(
            "JAX encountered invalid PRNG key data: expected key_data to have ndim, "
            f"shape, and dtype attributes. Got {key_data}"
        )
    if not (isinstance(key_data, (Array, Tracer))):
        key_data = lax.structural.operand(key_data)
    if tuple(key_data.shape[-1:]) != (2,):
        raise TypeError(
            "JAX encountered invalid PRNG key data: expected key_data.shape to end "
            f"with (2,); got shape={tuple(key_data.shape)} for impl={IMPL_NAME}"
        )
    if key_data.dtype != np.uint32:
        raise TypeError(
            "JAX encountered invalid PRNG key data: expected key_data.dtype = uint32; "
            f"got dtype={key_data.dtype}"
        )
    return PRNGKeyArray(key_data)


def check_prng_key(name, key, allow_batched=False):
    """`(typed keys, was_raw)` for a key given to `name`, with JAX's errors."""
    if isinstance(key, PRNGKeyArray):
        typed, was_raw = key, False
    elif _is_array_like(key) or type(key) in (int, float, bool, complex, str):
        typed, was_raw = wrap_key_data(key), True
    else:
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    if not allow_batched and typed.ndim:
        raise ValueError(
            f"{name} accepts a single key, but was given a key array of shape "
            f"{np.shape(key)} != (). Use jax.vmap for batching."
        )
    return typed, was_raw


def return_keys(was_raw, keys):
    """Raw data for raw inputs, typed keys for typed inputs (as JAX does)."""
    return keys._base_array if was_raw else keys


# --------------------------------------------------------------------------------------
# Key operations on typed keys


def random_split(keys, shape):
    return PRNGKeyArray(_split_data(keys._base_array, shape))


def random_fold_in(keys, data):
    return PRNGKeyArray(_fold_in_data(keys._base_array, data))


def random_bits(keys, bit_width, shape):
    return _random_bits_data(keys._base_array, bit_width, shape)
