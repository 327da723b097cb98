"""The machinery under `jaxlite.random`: PRNG implementations and typed key arrays.

A PRNG implementation (`PRNGImpl`, as in JAX) is a key shape and four functions on
the uint32 data of one key: `seed`, `split`, `fold_in` and `random_bits`. None of
them keeps state: a draw hashes a *counter* with the key. The default, Threefry-2x32
(Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC
2011), is here: 20 rounds of add, rotate and xor with the key injected every four
rounds (`lax.rng.threefry2x32`). As in JAX with its default
`jax_threefry_partitionable`, the counter of an output element is its flat index (a
64-bit number given as a high and a low word), so an element's bits depend only on
the key and where the element sits; with the option off, JAX's original counters
are used. The other implementations JAX 0.10.2 registers (`rbg`, `unsafe_rbg`,
`threefry4x32`, `philox2x32`, `philox4x32`) live in `jaxlite.random.generators`.
Every one is written with jaxlite.lax integer operations and gives JAX's bits.

Typed keys (`random.key`) are arrays of an extended dtype, `KeyTy(impl)`, printed
`key<fry>`. A key array is a pytree leaf whose aval is `ShapedArray(shape,
key<fry>)`, so keys are traced, batched, differentiated (float0 tangents) and carried
through loops as any array is. Its data, uint32 of shape `(*shape, *key_shape)`, is
what is stored and computed with: `KeyTy`'s rules (`physical_element_aval`, `wrap`,
...) tell the primitives so (`core.physical_rules`, `interpreters.physical`). Key
operations are primitives, as in JAX: `random_seed`, `random_split`,
`random_fold_in`, `random_bits`, and `random_wrap` / `random_unwrap` between keys
and their data (raw keys, `random.PRNGKey`, are that data).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from jaxlite import dtypes, lax
from jaxlite import numpy as jnp
from jaxlite.api_vmap import vmap
from jaxlite.array import register_virtual_array_type
from jaxlite.config import config
from jaxlite.core import (
    Array,
    Primitive,
    ShapedArray,
    Tracer,
    abstract_eval_rules,
    current_trace,
    eval_trace,
    no_effects,
    physical_rules,
)
from jaxlite.dispatch import jit
from jaxlite.interpreters import ad, batching
from jaxlite.lax.rng import threefry2x32
from jaxlite.lax.rules import broadcast_shapes

__all__ = [
    "KeyTy",
    "PRNGImpl",
    "PRNGKeyArray",
    "iota_2x32_shape",
    "prngs",
    "random_bits",
    "random_fold_in",
    "random_seed",
    "random_split",
    "random_unwrap",
    "random_wrap",
    "register_prng",
    "threefry2x32",
    "threefry_2x32",
    "threefry_prng_impl",
]

UINT_DTYPES = {
    8: np.dtype("uint8"),
    16: np.dtype("uint16"),
    32: np.dtype("uint32"),
    64: np.dtype("uint64"),
}
_U32 = np.dtype("uint32")

# --------------------------------------------------------------------------------------
# PRNG implementations


class PRNGImpl(NamedTuple):
    """A PRNG: keys are uint32 arrays of `key_shape`; `seed(int[]) -> key`,
    `split(key, shape) -> keys[*shape]`, `fold_in(key, uint32[]) -> key` and
    `random_bits(key, bit_width, shape) -> uint<bit_width>[*shape]` work on one key.
    `tag` names the key dtype (`key<fry>`)."""

    key_shape: tuple
    seed: Callable
    split: Callable
    random_bits: Callable
    fold_in: Callable
    name: str = "<unnamed>"
    tag: str = "?"

    def __hash__(self):
        return hash(self.tag)

    def __str__(self):
        return self.tag

    __repr__ = __str__  # jaxprs print `random_wrap[impl=fry]`, as JAX's


prngs: dict = {}


def register_prng(impl):
    if impl.name in prngs:
        raise ValueError(f"PRNG with name {impl.name} already registered: {impl}")
    prngs[impl.name] = impl


# --------------------------------------------------------------------------------------
# Helpers the implementations share


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
    lo = lax.reshape(lax.iota(_U32, size), shape)
    hi = lax.full(shape, 0, _U32)
    return hi, lo


@jit
def seed_words(seed):
    """An integer seed as two uint32 words (high, low): a 64-bit seed gives its two
    halves, a narrower one 0 and its value modulo 2**32 (negative seeds wrap)."""
    if np.shape(seed):
        raise TypeError(f"PRNG key seed must be a scalar; got {seed!r}.")
    if not dtypes.issubdtype(seed.dtype, np.integer):
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    if seed.dtype.itemsize == 8:
        hi = lax.shift_right_logical(seed, np.array(32, seed.dtype))
        hi = lax.convert_element_type(hi, _U32)
    else:
        hi = lax.full((), 0, _U32)
    return hi, lax.convert_element_type(seed, _U32)


def key_words(key):
    """The words of one key, `(...)`-shaped from `(..., n)` data."""
    n = key.shape[-1]
    return [lax.squeeze(w, (-1,)) for w in lax.split(key, (1,) * n, axis=-1)]


def bits_of_words(words, bit_width, hi, lo):
    """Random bits of `bit_width` from hashed words: 64-bit ones join `hi` and `lo`,
    narrower ones xor all the words (as JAX's implementations do)."""
    dtype = UINT_DTYPES[bit_width]
    if bit_width == 64:
        hi = lax.convert_element_type(hi, dtype)
        lo = lax.convert_element_type(lo, dtype)
        return lax.bitwise_or(lax.shift_left(hi, np.array(32, dtype)), lo)
    out = words[0]
    for w in words[1:]:
        out = lax.bitwise_xor(out, w)
    if bit_width == 32:
        return out
    return lax.convert_element_type(out, dtype)


def check_bit_width(bit_width):
    if bit_width not in (8, 16, 32, 64):
        raise TypeError("requires 8-, 16-, 32- or 64-bit field width.")


# --------------------------------------------------------------------------------------
# Threefry-2x32, the default


def threefry_2x32(key_data, count):
    """JAX's `threefry_2x32`: hash the uint32 array `count` as pairs of halves.

    The flat counter is split into a first and a second half (padded with a zero when
    its size is odd); the two hashed halves are joined back in the same order.
    """
    k1, k2 = key_words(key_data)
    size = math.prod(np.shape(count))
    flat = lax.reshape(count, (size,))
    if size % 2:
        flat = lax.concatenate([flat, lax.full((1,), 0, _U32)], 0)
    half = flat.shape[0] // 2
    x1, x2 = lax.split(flat, (half, half))
    y1, y2 = threefry2x32(k1, k2, x1, x2)
    out = lax.concatenate([y1, y2], 0)
    if size % 2:
        out = lax.split(out, (size, 1))[0]
    return lax.reshape(out, np.shape(count))


@jit
def threefry_seed(seed):
    return lax.stack(list(seed_words(seed)))


def threefry_split(key, shape):
    if config.read("jax_threefry_partitionable"):
        return _threefry_split_foldlike(key, tuple(shape))
    return _threefry_split_original(key, tuple(shape))


@jit(static_argnums=(1,))
def _threefry_split_foldlike(key, shape):
    k1, k2 = key_words(key)
    hi, lo = iota_2x32_shape(shape)
    b1, b2 = threefry2x32(k1, k2, hi, lo)
    return lax.stack([b1, b2], axis=len(shape))


@jit(static_argnums=(1,))
def _threefry_split_original(key, shape):
    num = math.prod(shape)
    counts = lax.iota(_U32, num * 2)
    return lax.reshape(threefry_2x32(key, counts), (*shape, 2))


def threefry_fold_in(key, data):
    return _threefry_fold_in(key, lax.convert_element_type(data, _U32))


@jit
def _threefry_fold_in(key, data):
    k1, k2 = key_words(key)
    b1, b2 = threefry2x32(k1, k2, np.uint32(0), data)
    return lax.stack([b1, b2])


def threefry_random_bits(key, bit_width, shape):
    check_bit_width(bit_width)
    if config.read("jax_threefry_partitionable"):
        return _threefry_bits_partitionable(key, bit_width, tuple(shape))
    return _threefry_bits_original(key, bit_width, tuple(shape))


@jit(static_argnums=(1, 2))
def _threefry_bits_partitionable(key, bit_width, shape):
    k1, k2 = key_words(key)
    hi, lo = iota_2x32_shape(shape)
    b1, b2 = threefry2x32(k1, k2, hi, lo)
    return bits_of_words([b1, b2], bit_width, b1, b2)


@jit(static_argnums=(1, 2))
def _threefry_bits_original(key, bit_width, shape):
    """JAX's counters with `jax_threefry_partitionable` off: `ceil(bits / 32)` words
    hashed as one flat counter, read as the narrower or wider type in order."""
    size = math.prod(shape)
    max_count = -(-bit_width * size // 32)
    bits = threefry_2x32(key, lax.iota(_U32, max_count))
    dtype = UINT_DTYPES[bit_width]
    if bit_width == 64:
        hi, lo = (
            lax.convert_element_type(x, dtype) for x in lax.split(bits, (size,) * 2)
        )
        bits = lax.bitwise_or(lax.shift_left(hi, np.array(32, dtype)), lo)
    elif bit_width in (8, 16):
        per_word = 32 // bit_width
        shifts = lax.mul(
            np.uint32(bit_width), lax.broadcasted_iota(_U32, (per_word, 1), 0)
        )
        parts = lax.bitwise_and(
            np.array(np.iinfo(dtype).max, _U32),
            lax.shift_right_logical(lax.broadcast(bits, (1,)), shifts),
        )
        parts = lax.reshape(parts, (max_count * per_word,), (1, 0))
        bits = lax.slice(lax.convert_element_type(parts, dtype), (0,), (size,))
    return lax.reshape(bits, shape)


threefry_prng_impl = PRNGImpl(
    key_shape=(2,),
    seed=threefry_seed,
    split=threefry_split,
    random_bits=threefry_random_bits,
    fold_in=threefry_fold_in,
    name="threefry2x32",
    tag="fry",
)
register_prng(threefry_prng_impl)


# --------------------------------------------------------------------------------------
# The key dtype and its rules


class KeyTyRules:
    """How primitives and constructors treat keys: by their uint32 data."""

    @staticmethod
    def physical_element_aval(dtype):
        return dtype._impl.key_shape, _U32

    @staticmethod
    def physical_data(keys):
        return keys._base_array

    @staticmethod
    def wrap(dtype, data):
        return PRNGKeyArray(dtype._impl, data)

    @staticmethod
    def full(shape, fill_value, dtype):
        """`lax.full` of keys: a key fill value is repeated; a number fills the data
        (`jnp.zeros(n, dtype=key<fry>)` gives keys of zero words, as in JAX)."""
        impl = dtype._impl
        physical_shape = (*shape, *impl.key_shape)
        if dtypes.issubdtype(getattr(fill_value, "dtype", None), dtypes.prng_key):
            data = jnp.broadcast_to(random_unwrap(fill_value), physical_shape)
        else:
            data = lax.full(physical_shape, fill_value, _U32)
        return random_wrap(data, impl=impl)


class KeyTy(dtypes.ExtendedDType):
    """The dtype of typed keys of one PRNG implementation, printed as JAX prints it:
    `key<fry>`. `issubdtype(key.dtype, dtypes.prng_key)` (and `extended`) holds, and
    no NumPy dtype compares equal to it."""

    type = dtypes.prng_key
    _rules = KeyTyRules

    def __init__(self, impl):
        self._impl = impl

    @property
    def name(self):
        return f"key<{self._impl.tag}>"

    @property
    def itemsize(self):
        return math.prod(self._impl.key_shape) * _U32.itemsize

    def __eq__(self, other):
        return type(other) is KeyTy and self._impl == other._impl

    def __hash__(self):
        return hash((KeyTy, self._impl))


def keys_aval(impl, shape):
    return ShapedArray(shape, KeyTy(impl))


# --------------------------------------------------------------------------------------
# Key arrays


@register_virtual_array_type  # isinstance(keys, jax.Array) holds, as in JAX
class PRNGKeyArray:
    """An array of typed keys: JAX's `Array(shape, dtype=key<fry>)`.

    `_base_array` is the uint32 key data, an Array of shape `(*shape, *key_shape)`.
    A key array is a pytree leaf; under a transformation keys are tracers of a key
    aval, never key arrays. Structural methods and operators are `Array`'s (the
    jax.numpy functions, which run on the data through the primitives' rules); the
    numeric ones refuse, as JAX's do.
    """

    __slots__ = ("_impl", "_base_array", "__weakref__")  # weakly referable, as JAX's
    __array_priority__ = 100
    weak_type = False

    def __init__(self, impl, key_data):
        if isinstance(key_data, Tracer):
            raise TypeError(
                "PRNGKeyArray holds concrete key data; under a transformation use "
                "jax.random.wrap_key_data, which makes traced keys."
            )
        self._impl = impl
        self._base_array = key_data

    @property
    def dtype(self):
        return KeyTy(self._impl)

    @property
    def aval(self):
        return ShapedArray(self.shape, KeyTy(self._impl))

    @property
    def shape(self):
        return tuple(self._base_array.shape[: -len(self._impl.key_shape)])

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.dtype.itemsize)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (PRNGKeyArray(self._impl, k) for k in self._base_array)

    def __bool__(self):
        raise TypeError("key array cannot be converted to boolean.")

    __hash__ = None

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            "JAX array with PRNGKey dtype cannot be converted to a NumPy array. Use "
            "jax.random.key_data(arr) if you wish to extract the underlying integer "
            "array."
        )

    def __repr__(self):
        return (
            f"Array({self.shape}, dtype={self.dtype.name}) overlaying:\n"
            f"{self._base_array}"
        )

    __str__ = __repr__

    def __format__(self, spec):
        return repr(self)

    # -- the device API: that of the data ---------------------------------------------

    def block_until_ready(self):
        self._base_array.block_until_ready()
        return self

    def copy_to_host_async(self):
        pass

    def is_ready(self):
        return True

    def delete(self):
        self._base_array.delete()

    def is_deleted(self):
        return self._base_array.is_deleted()

    def devices(self):
        return self._base_array.devices()

    device = property(lambda self: self._base_array.device)
    sharding = property(lambda self: self._base_array.sharding)
    committed = property(lambda self: self._base_array.committed)
    is_fully_addressable = property(lambda self: True)
    is_fully_replicated = property(lambda self: True)

    def addressable_data(self, index):
        return PRNGKeyArray(self._impl, self._base_array.addressable_data(index))

    def platform(self):
        return "cpu"

    def on_device_size_in_bytes(self):
        return self.nbytes

    def unsafe_buffer_pointer(self):
        return np.asarray(self._base_array).ctypes.data

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):  # the implementation by its registered name
        return (_unpickle_keys, (self._impl.name, self._base_array))

    def __getattr__(self, name):
        if name in _ABSTRACT_METHODS:
            raise NotImplementedError(f"Cannot call abstract method {name}")
        raise AttributeError(f"'PRNGKeyArray' object has no attribute '{name}'")


def _unpickle_keys(impl_name, data):
    return PRNGKeyArray(prngs[impl_name], data)


# The operators and structural methods of Array (jax.numpy functions, attached to
# Array by jaxlite.numpy), as JAX gives them to key arrays; the numeric methods of
# Array are JAX's abstract methods on keys.
for _name in (
    "__getitem__ __setitem__ __neg__ __pos__ __eq__ __ne__ __lt__ __le__ __gt__ "
    "__ge__ __abs__ __invert__ __round__ at flatten ravel reshape squeeze swapaxes "
    "take transpose T copy"
).split() + [
    f"__{r}{op}__"
    for op in "add sub mul truediv floordiv mod pow matmul and or xor lshift rshift "
    "divmod".split()
    for r in ("", "r")
]:
    setattr(PRNGKeyArray, _name, vars(Array).get(_name) or getattr(Array, _name))
del _name

_ABSTRACT_METHODS = frozenset(
    "all any argmax argmin argpartition argsort astype choose clip compress conj "
    "conjugate cumprod cumsum diagonal dot imag item max mean min mT nonzero prod "
    "ptp real repeat round searchsorted sort std sum tolist trace var view".split()
)


# --------------------------------------------------------------------------------------
# Key primitives
#
# Each runs on key data by its physical rule: the implementation's function on one
# key, mapped over the keys' axes (`vmap`, as JAX's `iterated_vmap_unary`). Eagerly
# the functions are jitted; inside a jaxpr being compiled they are traced inline.


def _iterated_vmap(n, f):
    for _ in range(n):
        f = vmap(f)
    return f


def random_seed(seeds, impl):
    """Keys (shaped as `seeds`) from integer seeds."""
    if type(seeds) is Array and not seeds.shape and current_trace() is eval_trace:
        # One concrete seed, evaluated now: the keys without a dispatch.
        return PRNGKeyArray(impl, impl.seed(seeds))
    return random_seed_p.bind(seeds, impl=impl)


def _random_seed_abstract(seeds, *, impl):
    return [keys_aval(impl, seeds.shape)], no_effects


def _random_seed_physical(avals_in, avals_out, seeds, *, impl):
    return [_iterated_vmap(len(avals_in[0].shape), impl.seed)(seeds)]


random_seed_p = Primitive("random_seed")
abstract_eval_rules[random_seed_p] = _random_seed_abstract
physical_rules[random_seed_p] = _random_seed_physical
ad.defjvp(random_seed_p, None)
batching.defvectorized(random_seed_p)


def random_split(keys, shape):
    """`keys` split into keys of shape `(*keys.shape, *shape)`."""
    return random_split_p.bind(keys, shape=tuple(shape))


def _random_split_abstract(keys, *, shape):
    _check_keys("random_split", keys)
    return [keys.update(shape=(*keys.shape, *shape))], no_effects


def _random_split_physical(avals_in, avals_out, data, *, shape):
    (keys,) = avals_in
    impl = keys.dtype._impl
    return [_iterated_vmap(keys.ndim, lambda k: impl.split(k, shape))(data)]


random_split_p = Primitive("random_split")
abstract_eval_rules[random_split_p] = _random_split_abstract
physical_rules[random_split_p] = _random_split_physical
ad.defjvp(random_split_p, None)
batching.defvectorized(random_split_p)


def random_fold_in(keys, msgs):
    """Keys with the uint32 `msgs` folded in (broadcast against the keys)."""
    return random_fold_in_p.bind(keys, msgs)


def _random_fold_in_abstract(keys, msgs):
    _check_keys("random_fold_in", keys)
    shape = broadcast_shapes("random_fold_in", keys.shape, msgs.shape)
    return [keys.update(shape=shape, weak_type=False)], no_effects


def _random_fold_in_physical(avals_in, avals_out, data, msgs):
    keys, msgs_aval = avals_in
    impl = keys.dtype._impl
    (out,) = avals_out
    # Keys and messages broadcast to the output's shape, then one fold per element.
    data = jnp.broadcast_to(data, (*out.shape, *impl.key_shape))
    msgs = jnp.broadcast_to(msgs, out.shape)
    return [_iterated_vmap(out.ndim, impl.fold_in)(data, msgs)]


random_fold_in_p = Primitive("random_fold_in")
abstract_eval_rules[random_fold_in_p] = _random_fold_in_abstract
physical_rules[random_fold_in_p] = _random_fold_in_physical
ad.defjvp(random_fold_in_p, None, None)
batching.defbroadcasting(random_fold_in_p)


def random_bits(keys, bit_width, shape):
    """Random bits `uint<bit_width>[*keys.shape, *shape]`."""
    return random_bits_p.bind(keys, bit_width=bit_width, shape=tuple(shape))


def _random_bits_abstract(keys, *, bit_width, shape):
    _check_keys("random_bits", keys)
    return [ShapedArray((*keys.shape, *shape), UINT_DTYPES[bit_width])], no_effects


def _random_bits_physical(avals_in, avals_out, data, *, bit_width, shape):
    (keys,) = avals_in
    impl = keys.dtype._impl
    bits = _iterated_vmap(keys.ndim, lambda k: impl.random_bits(k, bit_width, shape))
    return [bits(data)]


random_bits_p = Primitive("random_bits")
abstract_eval_rules[random_bits_p] = _random_bits_abstract
physical_rules[random_bits_p] = _random_bits_physical
ad.defjvp(random_bits_p, None)
batching.defvectorized(random_bits_p)


def random_wrap(base_arr, *, impl):
    """Keys over the uint32 data `base_arr` (its trailing axes: one key each)."""
    check_key_data(impl, base_arr)
    if type(base_arr) is Array:  # concrete data: concrete keys (no dispatch)
        return PRNGKeyArray(impl, base_arr)
    return random_wrap_p.bind(base_arr, impl=impl)


def _random_wrap_abstract(data, *, impl):
    n = len(impl.key_shape)
    return [keys_aval(impl, data.shape[:-n])], no_effects


def _random_wrap_batch(axis_size, vals, dims, *, impl):
    (x,) = vals
    x = batching.bdim_at_front(x, dims[0], axis_size)
    return [random_wrap_p.bind(x, impl=impl)], [0]


random_wrap_p = Primitive("random_wrap")
abstract_eval_rules[random_wrap_p] = _random_wrap_abstract
physical_rules[random_wrap_p] = lambda avals_in, avals_out, data, *, impl: [data]
ad.defjvp(random_wrap_p, None)
batching.batch_rules[random_wrap_p] = _random_wrap_batch


def random_unwrap(keys):
    """The uint32 data of `keys`."""
    if not dtypes.issubdtype(getattr(keys, "dtype", None), dtypes.prng_key):
        raise TypeError(
            f"random_unwrap takes key array operand, got keys.dtype={keys.dtype}"
        )
    if type(keys) is PRNGKeyArray:  # concrete keys: their data is the answer
        return keys._base_array
    return random_unwrap_p.bind(keys)


def _random_unwrap_abstract(keys):
    impl = keys.dtype._impl
    return [ShapedArray((*keys.shape, *impl.key_shape), _U32)], no_effects


random_unwrap_p = Primitive("random_unwrap")
abstract_eval_rules[random_unwrap_p] = _random_unwrap_abstract
physical_rules[random_unwrap_p] = lambda avals_in, avals_out, keys: [keys]
ad.defjvp(random_unwrap_p, None)
batching.defvectorized(random_unwrap_p)

KEY_PRIMITIVES = (
    random_seed_p,
    random_split_p,
    random_fold_in_p,
    random_bits_p,
    random_wrap_p,
    random_unwrap_p,
)


def _check_keys(name, aval):
    if not dtypes.issubdtype(aval.dtype, dtypes.prng_key):
        raise TypeError(f"{name} takes key array operand, got dtype {aval.dtype}")


# --------------------------------------------------------------------------------------
# Checking keys and key data


def _is_array_like(x):
    return hasattr(x, "shape") and hasattr(x, "dtype") and hasattr(x, "ndim")


def check_key_data(impl, key_data):
    """JAX's checks of data given as keys of `impl`."""
    if not _is_array_like(key_data):
        raise TypeError(
            "JAX encountered invalid PRNG key data: expected key_data to have ndim, "
            f"shape, and dtype attributes. Got {key_data}"
        )
    if key_data.ndim < 1:
        raise TypeError(
            "JAX encountered invalid PRNG key data: expected key_data.ndim >= 1; got "
            f"ndim={key_data.ndim}"
        )
    n = len(impl.key_shape)
    if tuple(key_data.shape[-n:]) != tuple(impl.key_shape):
        raise TypeError(
            "JAX encountered invalid PRNG key data: expected key_data.shape to end "
            f"with {impl.key_shape}; got shape={tuple(key_data.shape)} for "
            f"impl={impl.name}"
        )
    if key_data.dtype != _U32:
        raise TypeError(
            "JAX encountered invalid PRNG key data: expected key_data.dtype = uint32; "
            f"got dtype={key_data.dtype}"
        )


def is_key(x):
    """Whether `x` is typed keys (a key array or a key tracer)."""
    return dtypes.issubdtype(getattr(x, "dtype", None), dtypes.prng_key)


def is_array_like(x):
    return _is_array_like(x)
