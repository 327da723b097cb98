"""XLA's stateless bit generator (`rng_bit_generator`) and stateful `rng_uniform`.

`rng_bit_generator(key, shape)` is XLA's RngBitGenerator: the uint32[4] key is read as
two uint64 words, a cipher key and a counter. Each call hashes `counter + i` for the
elements it needs and returns the key with its counter advanced, so threading the key
through calls gives a stream of fresh bits. Two ciphers exist on CPU:

- `RNG_THREE_FRY`: Threefry-2x32 (the cipher of `jax.random`, `threefry2x32`
  below) on the 64-bit counters `counter + i` split into (low, high) words;
  for 32-bit outputs each counter gives two values, interleaved along one axis.
- `RNG_PHILOX` (and `RNG_DEFAULT`, which is Philox on XLA's CPU backend):
  Philox-4x32 with 10 rounds on the 128-bit counters (counter + i, key); the four
  words of each block are interleaved into the output.

Both reproduce XLA's CPU bits exactly (uint8/uint16 outputs are the low bits of the
uint32 ones, as JAX lowers them). The implementation is NumPy; the key is integer, so
there is no derivative, and a batch of keys runs one key at a time (JAX's own rule
handles a batch of keys differently; this one gives each key its own stream, which is
what a per-example loop gives).

`rng_uniform(a, b, shape)` is XLA's stateful uniform generator: values are not
reproducible in JAX either, so a NumPy generator stands in for it.
"""

from __future__ import annotations

import enum
import math

import numpy as np

from jaxlite import dtypes
from jaxlite.array import from_host
from jaxlite.core import (
    Array,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    eval_trace,
    impl_rules,
    no_effects,
    set_current_trace,
)
from jaxlite.interpreters import ad, batching
from jaxlite.lax import elementwise as ew

__all__ = [
    "RandomAlgorithm",
    "rng_bit_generator",
    "rng_bit_generator_p",
    "rng_uniform",
    "rng_uniform_p",
]


class RandomAlgorithm(enum.IntEnum):
    """The cipher of `rng_bit_generator` (XLA's names)."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self):
        return self.name

    def __repr__(self):
        return self.name


_OUT_DTYPES = tuple(np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
_MASK32 = np.uint64(0xFFFFFFFF)
_32 = np.uint64(32)


# Threefry-2x32, written with lax operations: jax.random (jaxlite.prng) hashes its
# keys with it, and RNG_THREE_FRY runs it eagerly on NumPy words.

# Rotation distances of the eight rounds that alternate between key injections, and
# the parity constant of the key schedule (Threefish's C240 truncated to 32 bits).
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_KEY_PARITY = np.uint32(0x1BD11BDA)


def _rotate_left(x, distance):
    return ew.bitwise_or(
        ew.shift_left(x, np.uint32(distance)),
        ew.shift_right_logical(x, np.uint32(32 - distance)),
    )


def threefry2x32(k1, k2, x1, x2):
    """Threefry-2x32 with 20 rounds: the two hashed words of the counter (x1, x2).

    All four operands are uint32; the keys are usually scalars and broadcast against
    the counters.
    """
    schedule = (k1, k2, ew.bitwise_xor(ew.bitwise_xor(k1, k2), _KEY_PARITY))
    x1 = ew.add(x1, schedule[0])
    x2 = ew.add(x2, schedule[1])
    for injection in range(1, 6):
        for distance in _ROTATIONS[(injection - 1) % 2]:
            x1 = ew.add(x1, x2)
            x2 = ew.bitwise_xor(_rotate_left(x2, distance), x1)
        x1 = ew.add(x1, schedule[injection % 3])
        x2 = ew.add(x2, ew.add(schedule[(injection + 1) % 3], np.uint32(injection)))
    return x1, x2


def _split64(x):
    """uint64 -> (low, high) uint32 words."""
    return (x & _MASK32).astype(np.uint32), (x >> _32).astype(np.uint32)


def _join64(lo, hi):
    return lo.astype(np.uint64) | (hi.astype(np.uint64) << _32)


def _threefry(key_words, x1, x2):
    """Threefry-2x32 (`threefry2x32`, the cipher of jax.random) on NumPy uint32
    arrays."""
    k1, k2 = (np.uint32(k) for k in key_words)
    with set_current_trace(eval_trace):
        y1, y2 = threefry2x32(k1, k2, x1, x2)
    return np.asarray(y1, np.uint32), np.asarray(y2, np.uint32)


_PHILOX_W = (np.uint32(0x9E3779B9), np.uint32(0xBB67AE85))
_PHILOX_M = (np.uint64(0xD2511F53), np.uint64(0xCD9E8D57))


def _philox(key_words, x):
    """Philox-4x32-10 on four uint32 arrays `x`, with key words `key_words`."""
    k0, k1 = (np.uint32(k) for k in key_words)
    x0, x1, x2, x3 = x
    with np.errstate(over="ignore"):
        for _ in range(10):
            lo0, hi0 = _split64(x0.astype(np.uint64) * _PHILOX_M[0])
            lo1, hi1 = _split64(x2.astype(np.uint64) * _PHILOX_M[1])
            x0, x1, x2, x3 = hi1 ^ x1 ^ k0, lo1, hi0 ^ x3 ^ k1, lo0
            k0, k1 = k0 + _PHILOX_W[0], k1 + _PHILOX_W[1]
    return x0, x1, x2, x3


def _counters(start, n):
    """`start + i` for i < n, wrapping like uint64."""
    with np.errstate(over="ignore"):
        return start + np.arange(n, dtype=np.uint64)


def _threefry_bits(cipher_key, counter, shape, wide):
    """XLA's Threefry generator: 64-bit values hash one counter each; 32-bit values
    hash the counters of a half-size shape (halved along the first even dimension,
    else the largest) and the two output words are interleaved along it."""
    words = _split64(cipher_key)
    if wide:
        size = math.prod(shape)
        lo, hi = _threefry(words, *_split64(_counters(counter, size)))
        return _join64(lo, hi).reshape(shape), size
    shape = shape or (1,)
    even = [i for i, d in enumerate(shape) if d % 2 == 0]
    dim = even[0] if even else int(np.argmax(shape))
    n = shape[dim]
    half_shape = shape[:dim] + (-(-n // 2),) + shape[dim + 1 :]
    half = math.prod(half_shape)
    y1, y2 = (
        y.reshape(half_shape)
        for y in _threefry(words, *_split64(_counters(counter, half)))
    )
    both = np.stack([y1, y2], dim + 1)
    joined = both.reshape(half_shape[:dim] + (2 * half_shape[dim],) + shape[dim + 1 :])
    return np.take(joined, np.arange(n), axis=dim), half


def _philox_bits(cipher_key, counter, size, wide):
    words = _split64(cipher_key)
    n32 = 2 * size if wide else size
    blocks = -(-n32 // 4)
    lo, hi = _split64(_counters(counter, blocks))
    # The high 64 bits of the 128-bit counter are the cipher key word (XLA on CPU),
    # plus the carry out of the low word.
    with np.errstate(over="ignore"):
        carry = (_counters(counter, blocks) < counter).astype(np.uint64)
        ck_lo, ck_hi = _split64(cipher_key + carry)
    b0, b1, b2, b3 = _philox(words, (lo, hi, ck_lo, ck_hi))
    if wide:
        pairs = np.stack([_join64(b0, b1), _join64(b2, b3)], 1).reshape(-1)
        return pairs[:size], blocks
    return np.stack([b0, b1, b2, b3], 1).reshape(-1)[:size], blocks


def _rng_bit_generator_impl(key, *, algorithm, dtype, out_sharding, shape):
    key = np.asarray(key, np.uint32)
    cipher_key = _join64(key[0], key[1])
    counter = _join64(key[2], key[3])
    size = math.prod(shape)
    wide = dtype == np.uint64
    if algorithm == RandomAlgorithm.RNG_THREE_FRY:
        bits, used = _threefry_bits(cipher_key, counter, shape, wide)
    else:
        bits, used = _philox_bits(cipher_key, counter, size, wide)
    with np.errstate(over="ignore"):
        new_counter = counter + np.uint64(used)
    new_key = np.array([key[0], key[1], *_split64(new_counter)], np.uint32)
    return [new_key, bits.astype(dtype).reshape(shape)]


def _rng_bit_generator_abstract(key, *, algorithm, dtype, out_sharding, shape):
    if key.dtype != np.uint32 or key.shape != (4,):
        raise TypeError(
            "rng_bit_generator: the key must be a uint32[4] array (two uint64 words: "
            f"cipher key and counter), got {key.str_short()}."
        )
    if dtype not in _OUT_DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {dtype.name}")
    return [ShapedArray(key.shape, key.dtype), ShapedArray(shape, dtype)], no_effects


def _rng_bit_generator_jvp(primals, tangents, **params):
    outs = rng_bit_generator_p.bind(*primals, **params)
    return outs, [ad.Zero(ad.tangent_aval(o.aval)) for o in outs]


def _rng_bit_generator_batch(axis_size, vals, dims, **params):
    from jaxlite.lax import indexing, structural

    (key,), (d,) = vals, dims
    key = batching.moveaxis(key, d, 0)
    keys, bits = [], []
    for i in range(axis_size):
        one = structural.squeeze(indexing.slice_in_dim(key, i, i + 1, axis=0), (0,))
        k, b = rng_bit_generator_p.bind(one, **params)
        keys.append(k)
        bits.append(b)
    if not keys:
        shape = params["shape"]
        return [
            structural.broadcast_in_dim(key, (0, 4), (0, 1)),
            Array(np.zeros((0, *shape), params["dtype"])),
        ], [0, 0]
    return [structural.stack(keys, 0), structural.stack(bits, 0)], [0, 0]


rng_bit_generator_p = Primitive("rng_bit_generator", multiple_results=True)
impl_rules[rng_bit_generator_p] = _rng_bit_generator_impl
abstract_eval_rules[rng_bit_generator_p] = _rng_bit_generator_abstract
ad.jvp_rules[rng_bit_generator_p] = _rng_bit_generator_jvp
batching.batch_rules[rng_bit_generator_p] = _rng_bit_generator_batch


def rng_bit_generator(
    key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT, *,
    out_sharding=None,
):  # fmt: skip
    """`(new_key, bits)`: `bits` of `shape` and unsigned `dtype` from the uint32[4]
    `key`, and the key to use for the next call."""
    dtype = np.dtype(dtype)
    if dtype not in _OUT_DTYPES:
        raise TypeError(f"rng_bit_generator: unsupported dtype {dtype.name}")
    dtype = dtypes.canonicalize_dtype(dtype)
    shape = tuple(int(d) for d in shape)
    return tuple(
        rng_bit_generator_p.bind(
            key,
            algorithm=RandomAlgorithm(algorithm),
            dtype=dtype,
            out_sharding=out_sharding,
            shape=shape,
        )
    )


# --------------------------------------------------------------------------------------
# rng_uniform


_uniform_generator = np.random.default_rng()


def _rng_uniform_impl(a, b, *, shape):
    a, b = np.asarray(a), np.asarray(b)
    if np.issubdtype(a.dtype, np.integer):
        out = _uniform_generator.integers(a, b, shape, dtype=a.dtype, endpoint=False)
    else:
        out = _uniform_generator.uniform(a, b, shape)
    return [np.asarray(out).astype(a.dtype)]


def _rng_uniform_abstract(a, b, *, shape):
    if a.shape or b.shape:
        raise TypeError(
            f"rng_uniform: a and b must be scalars, got {a.str_short()} and "
            f"{b.str_short()}."
        )
    if a.dtype != b.dtype:
        raise TypeError(
            f"rng_uniform: a and b must have the same dtype, got {a.dtype.name} and "
            f"{b.dtype.name}."
        )
    return [ShapedArray(shape, a.dtype)], no_effects


def _rng_uniform_jvp(primals, tangents, *, shape):
    out = rng_uniform_p.bind(*primals, shape=shape)
    return [out], [ad.Zero(ad.tangent_aval(out.aval))]


def _rng_uniform_batch(axis_size, vals, dims, *, shape):
    raise NotImplementedError(
        "rng_uniform under vmap is not supported (JAX has no batching rule either): "
        "use jax.random.uniform with a batch of keys."
    )


rng_uniform_p = Primitive("rng_uniform")
impl_rules[rng_uniform_p] = _rng_uniform_impl
abstract_eval_rules[rng_uniform_p] = _rng_uniform_abstract
ad.jvp_rules[rng_uniform_p] = _rng_uniform_jvp
batching.batch_rules[rng_uniform_p] = _rng_uniform_batch


def rng_uniform(a, b, shape):
    """Stateful uniform values in `[a, b)` of `shape` (not reproducible, as in XLA)."""
    a, b = (from_host(v) if _is_value(v) else v for v in (a, b))
    return rng_uniform_p.bind(a, b, shape=tuple(int(d) for d in shape))


def _is_value(v):
    return isinstance(v, (int, float, bool, np.ndarray, np.generic))
