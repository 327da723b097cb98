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
extended dtype (`jaxlite.dtypes.prng_key`). Structural jnp and lax functions (where,
take, flip, dynamic_slice, ...) accept key arrays through one table at the end of this
module: they run on the key data, mapped over its trailing axis.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from jaxlite import dtypes, lax, tree_util
from jaxlite import numpy as jnp
from jaxlite.array import register_virtual_array_type
from jaxlite.config import config
from jaxlite.core import (
    Array,
    Tracer,
    float0_value,
    is_jax_type,
)
from jaxlite.dispatch import jit
from jaxlite.lax.rng import threefry2x32
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

# Threefry-2x32 itself is `lax.rng.threefry2x32` (XLA's RngBitGenerator uses it
# too); what follows builds jax.random's key operations on it.


def _u32(v):
    return np.uint32(v)


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

    # The dtype's rules for code below the libs that moves keys around by their data
    # (`jnp.concatenate` and `jnp.stack` join keys through it).

    def physical_data(self, keys):
        """The uint32 data `(*keys.shape, 2)` under the typed `keys`."""
        return keys._base_array

    def wrap_physical_data(self, data):
        """Typed keys over uint32 `data` whose last axis has size 2."""
        return wrap_key_data(data)


key_dtype = KeyTy()


@register_virtual_array_type  # isinstance(keys, jax.Array) holds, as in JAX
class PRNGKeyArray:
    """An array of typed keys: JAX's `Array(shape, dtype=key<fry>)`.

    `_base_array` is the uint32 key data, shaped `(*shape, 2)`: an Array eagerly, a
    tracer under a transformation. It is the pytree leaf of the key.
    """

    __slots__ = ("_base_array", "__weakref__")  # weakly referable, as JAX's

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
        try:
            shape = np.broadcast_shapes(self.shape, other.shape)
        except ValueError:
            raise TypeError(
                f"{prim.__name__} got incompatible shapes for broadcasting: "
                f"{self.shape}, {other.shape}."
            ) from None
        # Keys broadcast as arrays do (`keys == keys[0]`); the key data's last axis
        # is compared whole.
        a, b = (jnp.broadcast_to(k._base_array, (*shape, 2)) for k in (self, other))
        same = prim(a, b)
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
            f"convert to {dtype}. Use jax.random.key_data to get their uint32 data."
        )

    def __bool__(self):
        raise TypeError(
            "key array cannot be converted to boolean. Compare keys with == or use "
            "jax.random.key_data for their uint32 data."
        )

    def __getattr__(self, name):
        if name in _ABSTRACT_METHODS:
            raise NotImplementedError(
                f"Cannot call abstract method {name}: key arrays (dtype key<fry>) "
                "support structural operations only. Use jax.random.key_data(keys) "
                "to get their uint32 data."
            )
        raise AttributeError(f"'PRNGKeyArray' object has no attribute '{name}'")

    def __repr__(self):
        base = self._base_array
        if isinstance(base, Tracer):
            return f"{type(base).__name__}(key<fry>{list(self.shape)})"
        if not (type(base) is Array or isinstance(base, np.ndarray)):
            # Abstract data, e.g. a ShapeDtypeStruct from eval_shape.
            return f"{type(base).__name__}(shape={self.shape}, dtype=key<fry>)"
        return f"Array({self.shape}, dtype=key<fry>) overlaying:\n{np.asarray(base)}"

    __str__ = __repr__


# Numeric methods of `Array` that key arrays refuse, as JAX's do.
_ABSTRACT_METHODS = frozenset(
    "all any argmax argmin argpartition argsort choose clip compress conj conjugate "
    "cumprod cumsum cumulative_prod cumulative_sum diagonal dot imag item max mean min "
    "nonzero prod ptp real repeat round searchsorted sort std sum trace var view".split()
)


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

    def __getattr__(self, name):
        if name in ("add", "subtract", "multiply", "divide", "power", "min", "max"):
            raise TypeError(
                f"Cannot interpret 'key<fry>' as a data type: keys.at[...].{name} "
                "needs arithmetic, which key arrays do not have; only get and set "
                "work on keys."
            )
        raise AttributeError(f"'_KeyIndexUpdate' object has no attribute '{name}'")

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
        return float0_value(np.shape(data)[:-1])
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


# --------------------------------------------------------------------------------------
# Key arrays through jax.numpy and jax.lax
#
# A key array is its uint32 data with one extra trailing axis (the two words of a key),
# so a structural operation on keys (reshape, flip, take, where, dynamic_slice, ...) is
# the same operation on the data mapped over that trailing axis: `vmap` with
# `in_axes=-1, out_axes=-1` of the unchanged jnp or lax function, which then sees uint32
# arrays shaped like the keys and needs to know nothing about them. The table below
# names the functions that accept keys and which of their parameters hold keys;
# `install_key_dispatch` wraps them once, when jaxlite.random is imported (no key can
# exist before). The wrapper costs one scan of the arguments when no key is present.
# Anything else given a key fails in jnp's argument check with JAX's phrase "does not
# accept dtype key<fry>".

# name -> parameters that may hold keys (a key array, or a list/tuple of them).
_STRUCTURAL_NUMPY = {
    "append": ("arr", "values"),
    "array": ("object",),
    "array_split": ("ary",),
    "asarray": ("a",),
    "atleast_1d": ("arys",),
    "atleast_2d": ("arys",),
    "atleast_3d": ("arys",),
    "broadcast_arrays": ("args",),
    "broadcast_to": ("array",),
    "choose": ("choices",),
    "column_stack": ("tup",),
    "compress": ("a",),
    "concat": ("arrays",),
    "concatenate": ("arrays",),
    "copy": ("a",),
    "delete": ("arr",),
    "diagonal": ("a",),
    "dsplit": ("ary",),
    "dstack": ("tup",),
    "empty_like": ("a",),
    "expand_dims": ("a",),
    "extract": ("arr",),
    "flip": ("m",),
    "fliplr": ("m",),
    "flipud": ("m",),
    "full_like": ("a", "fill_value"),
    "hsplit": ("ary",),
    "hstack": ("tup",),
    "insert": ("arr", "values"),
    "matrix_transpose": ("x",),
    "moveaxis": ("a",),
    "ones_like": ("a",),
    "pad": ("array",),
    "permute_dims": ("a",),
    "place": ("arr", "vals"),
    "put": ("a", "v"),
    "ravel": ("a",),
    "repeat": ("a",),
    "reshape": ("a",),
    "roll": ("a",),
    "rollaxis": ("a",),
    "rot90": ("m",),
    "select": ("choicelist", "default"),
    "split": ("ary",),
    "squeeze": ("a",),
    "stack": ("arrays",),
    "swapaxes": ("a",),
    "take": ("a",),
    "take_along_axis": ("arr",),
    "tile": ("A",),
    "transpose": ("a",),
    "tril": ("m",),
    "triu": ("m",),
    "unstack": ("x",),
    "vsplit": ("ary",),
    "vstack": ("tup",),
    "where": ("x", "y"),
    "zeros_like": ("a",),
}
_STRUCTURAL_LAX = {
    "broadcast": ("operand_",),
    "broadcast_in_dim": ("operand_",),
    "concatenate": ("operands",),
    "dynamic_index_in_dim": ("operand_",),
    "dynamic_slice": ("operand_",),
    "dynamic_slice_in_dim": ("operand_",),
    "dynamic_update_index_in_dim": ("operand_", "update"),
    "dynamic_update_slice": ("operand_", "update"),
    "dynamic_update_slice_in_dim": ("operand_", "update"),
    "expand_dims": ("array",),
    "full_like": ("x",),
    "gather": ("operand_",),
    "index_in_dim": ("operand_",),
    "reshape": ("operand_",),
    "rev": ("operand_",),
    "scatter": ("operand_", "updates"),
    "select": ("on_true", "on_false"),
    "select_n": ("cases",),
    "slice": ("operand_",),
    "slice_in_dim": ("operand_",),
    "split": ("operand_",),
    "squeeze": ("array",),
    "tile": ("operand_",),
    "transpose": ("operand_",),
}
# Parameters where a non-key value may join keys (a fill value of 0 gives zero keys).
_MIXABLE = {"fill_value"}
# Comparisons: the words compared elementwise, then reduced over the trailing axis.
_COMPARISONS_NUMPY = {"equal": "all", "not_equal": "any"}
_COMPARISONS_LAX = {"eq": "all", "ne": "any"}
_CONVERSIONS_NUMPY = {"astype": "dtype"}
_CONVERSIONS_LAX = {"convert_element_type": "new_dtype"}


def _holds_keys(args, kwargs):
    for a in args:
        t = type(a)
        if t is PRNGKeyArray:
            return True
        if t is list or t is tuple:
            for b in a:
                if type(b) is PRNGKeyArray:
                    return True
    return bool(kwargs) and _holds_keys(kwargs.values(), None)


def _not_promotable(fun_name):
    return ValueError(
        "dtype=key<fry> is not a valid dtype for JAX type promotion: "
        f"{fun_name} was given key arrays together with other arrays. Keys join only "
        "keys; use jax.random.wrap_key_data to make keys from uint32 data."
    )


def _cannot_convert(dtype):
    name = getattr(dtype, "name", None) or getattr(dtype, "__name__", dtype)
    return ValueError(
        f"Cannot convert_element_type from key<fry> to {name}. Use "
        "jax.random.key_data(keys) to get the uint32 data of keys."
    )


def _on_key_data(fun_name, fun, signature, key_params, args, kwargs):
    """`fun(*args, **kwargs)` with its key arguments replaced by their data and the
    call mapped over the data's trailing axis; the results are keys again."""
    from jaxlite.api_vmap import vmap  # (jaxlite.api_vmap is imported after jnp)

    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()  # a default (jnp.select's 0) may not join keys either
    arguments = bound.arguments
    dtype = arguments.get("dtype")
    if dtype is not None:
        if not dtypes.is_extended(dtype):
            raise _cannot_convert(dtype)
        arguments["dtype"] = None
    if fun_name in ("pad",) and arguments.get("mode", "constant") == "constant":
        raise ValueError(
            "Cannot convert_element_type from int32 to key<fry>: jnp.pad of key "
            "arrays pads with a constant, which keys cannot be; use mode='edge', "
            "'wrap', 'reflect' or 'symmetric'."
        )
    datas = []

    def take_data(value, param):
        if type(value) is PRNGKeyArray:
            datas.append(value._base_array)
            return len(datas) - 1
        if type(value) in (list, tuple):
            return type(value)(take_data(v, param) for v in value)
        if value is not None and is_jax_type(value) and param not in _MIXABLE:
            raise _not_promotable(fun_name)
        return _Static(value)

    slots = {p: take_data(arguments[p], p) for p in key_params if p in arguments}
    if not datas:  # keys only where keys are not accepted: the function says so
        return fun(*args, **kwargs)

    def put_data(slot, mapped):
        if type(slot) is int:
            return mapped[slot]
        if type(slot) is _Static:
            return slot.value
        return type(slot)(put_data(s, mapped) for s in slot)

    def on_data(*mapped):
        for p, slot in slots.items():
            arguments[p] = put_data(slot, mapped)
        return fun(*bound.args, **bound.kwargs)

    out = vmap(on_data, in_axes=-1, out_axes=-1)(*datas)
    return tree_util.tree_map(PRNGKeyArray, out)


class _Static:
    """A non-key argument left as it is while keys are replaced by their data."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _compare_keys(fun, reduce, args):
    from jaxlite.api_vmap import vmap

    if len(args) != 2 or not all(type(a) is PRNGKeyArray for a in args):
        names = ", ".join(
            "key<fry>" if type(a) is PRNGKeyArray else str(dtypes.dtype(a))
            for a in args
        )
        raise TypeError(f"{fun.__name__} does not accept dtypes {names}.")
    words = vmap(fun, in_axes=-1, out_axes=-1)(*(a._base_array for a in args))
    reducer = lax.reduce_and if reduce == "all" else lax.reduce_or
    return reducer(words, (words.ndim - 1,))


def _key_dispatching(fun_name, fun, kind, spec):
    import functools
    import inspect

    signature = inspect.signature(fun)

    @functools.wraps(fun)
    def wrapper(*args, **kwargs):
        if not _holds_keys(args, kwargs):
            return fun(*args, **kwargs)
        if kind == "structural":
            return _on_key_data(fun_name, fun, signature, spec, args, kwargs)
        if kind == "compare":
            return _compare_keys(fun, spec, args)
        bound = signature.bind(*args, **kwargs)
        raise _cannot_convert(bound.arguments.get(spec))

    wrapper._key_dispatch_wrapped = fun
    return wrapper


def install_key_dispatch():
    """Let the functions of the tables above accept key arrays (once)."""
    import sys

    for namespace, tables in (
        (jnp, (_STRUCTURAL_NUMPY, _COMPARISONS_NUMPY, _CONVERSIONS_NUMPY)),
        (lax, (_STRUCTURAL_LAX, _COMPARISONS_LAX, _CONVERSIONS_LAX)),
    ):
        for kind, table in zip(("structural", "compare", "convert"), tables):
            for name, spec in table.items():
                fun = getattr(namespace, name)
                if hasattr(fun, "_key_dispatch_wrapped"):
                    continue
                wrapper = _key_dispatching(name, fun, kind, spec)
                setattr(namespace, name, wrapper)
                home = sys.modules.get(getattr(fun, "__module__", None) or "")
                if namespace is jnp and getattr(home, name, None) is fun:
                    setattr(home, name, wrapper)


install_key_dispatch()
