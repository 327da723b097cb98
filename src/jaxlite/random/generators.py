"""The PRNG implementations besides Threefry-2x32, as JAX 0.10.2 registers them.

- `rbg` and `unsafe_rbg`: four-word keys whose bits come from XLA's
  `RngBitGenerator` (`lax.rng_bit_generator`, its default algorithm). `rbg` splits and
  folds the two halves of a key with Threefry; `unsafe_rbg` derives new keys from the
  generator's own output, which is fast but carries no statistical guarantee.
- `threefry4x32`: Threefry with four words of key and counter (Random123's
  Threefry-4x32-20).
- `philox2x32` and `philox4x32`: Random123's Philox with ten rounds, one and two key
  words, multiplying the counter words (`lax.mulhi` gives the high halves).

Each implementation is four functions on the uint32 data of one key (see
`prng.PRNGImpl`), written with lax operations and registered under JAX's name and
tag, so `random.key(0, impl="rbg")`, `jax_default_prng_impl="philox4x32"` and the rest
give JAX's keys and bits.
"""

from __future__ import annotations

import math

import numpy as np

from jaxlite import lax
from jaxlite.api_vmap import vmap
from jaxlite.dispatch import jit
from jaxlite.prng import (
    UINT_DTYPES,
    PRNGImpl,
    bits_of_words,
    check_bit_width,
    iota_2x32_shape,
    key_words,
    register_prng,
    seed_words,
    threefry_fold_in,
    threefry_seed,
    threefry_split,
)

__all__ = [
    "philox2x32_prng_impl",
    "philox4x32_prng_impl",
    "rbg_prng_impl",
    "threefry4x32_prng_impl",
    "unsafe_rbg_prng_impl",
]

_U32 = np.dtype("uint32")


def _u32(value):
    return np.uint32(value)


def _zeros(shape):
    return lax.full(shape, 0, _U32)


def _counter_based_impl(*, key_shape, seed, split, bits, fold_in, name, tag):
    """The `PRNGImpl` of a counter-based cipher from its jitted functions, whose
    shapes are static: `split(key, shape)` and `bits(key, bit_width, shape)`."""

    def random_bits(key, bit_width, shape):
        check_bit_width(bit_width)
        return bits(key, bit_width, tuple(shape))

    return PRNGImpl(
        key_shape=key_shape,
        seed=seed,
        split=lambda key, shape: split(key, tuple(shape)),
        random_bits=random_bits,
        fold_in=fold_in,
        name=name,
        tag=tag,
    )


# --------------------------------------------------------------------------------------
# RngBitGenerator: rbg and unsafe_rbg


def _rbg_seed(seed):
    half = threefry_seed(seed)
    return lax.concatenate([half, half], 0)


def _rbg_split(key, shape):
    halves = lax.reshape(key, (2, 2))
    keys = vmap(threefry_split, (0, None), len(shape))(halves, shape)
    return lax.reshape(keys, (*shape, 4))


def _rbg_fold_in(key, data):
    halves = lax.reshape(key, (2, 2))
    return lax.reshape(vmap(threefry_fold_in, (0, None), 0)(halves, data), (4,))


def _rbg_random_bits(key, bit_width, shape):
    check_bit_width(bit_width)
    _, bits = lax.rng_bit_generator(key, tuple(shape), dtype=UINT_DTYPES[bit_width])
    return bits


rbg_prng_impl = PRNGImpl(
    key_shape=(4,),
    seed=_rbg_seed,
    split=_rbg_split,
    random_bits=_rbg_random_bits,
    fold_in=_rbg_fold_in,
    name="rbg",
    tag="rbg",
)


def _unsafe_rbg_split(key, shape):
    # Ten draws of the generator per new key, as a hash.
    num = math.prod(shape)
    _, keys = lax.rng_bit_generator(key, (10 * num, 4), dtype=_U32)
    keys = lax.slice_in_dim(keys, None, None, stride=10)
    return lax.reshape(keys, (*shape, 4))


def _unsafe_rbg_fold_in(key, data):
    _, bits = lax.rng_bit_generator(_rbg_seed(data), (10, 4), dtype=_U32)
    return lax.bitwise_xor(key, lax.index_in_dim(bits, 9, keepdims=False))


unsafe_rbg_prng_impl = PRNGImpl(
    key_shape=(4,),
    seed=_rbg_seed,
    split=_unsafe_rbg_split,
    random_bits=_rbg_random_bits,
    fold_in=_unsafe_rbg_fold_in,
    name="unsafe_rbg",
    tag="urbg",
)


# --------------------------------------------------------------------------------------
# Threefry-4x32


# Random123's rotation distances R_32x4, a pair per round (the pattern repeats every
# eight rounds), and the key schedule's parity constant.
_ROTATIONS_4X32 = (
    (10, 26),
    (11, 21),
    (13, 27),
    (23, 5),
    (6, 20),
    (17, 11),
    (25, 10),
    (18, 20),
)
_PARITY_32 = np.uint32(0x1BD11BDA)


def _rotate_left(x, d):
    return lax.bitwise_or(
        lax.shift_left(x, _u32(d)), lax.shift_right_logical(x, _u32(32 - d))
    )


def threefry4x32(k0, k1, k2, k3, x0, x1, x2, x3):
    """Threefry-4x32 with 20 rounds on uint32 words (keys broadcast against the
    counter words)."""
    schedule = [k0, k1, k2, k3]
    parity = lax.bitwise_xor(lax.bitwise_xor(k0, k1), lax.bitwise_xor(k2, k3))
    schedule.append(lax.bitwise_xor(parity, _PARITY_32))
    x0, x1, x2, x3 = (lax.add(x, k) for x, k in zip((x0, x1, x2, x3), schedule))
    for rnd in range(20):
        rot0, rot1 = _ROTATIONS_4X32[rnd % 8]
        if rnd % 2 == 0:  # mix (0, 1) and (2, 3)
            x0 = lax.add(x0, x1)
            x1 = lax.bitwise_xor(x0, _rotate_left(x1, rot0))
            x2 = lax.add(x2, x3)
            x3 = lax.bitwise_xor(x2, _rotate_left(x3, rot1))
        else:  # mix (0, 3) and (2, 1)
            x0 = lax.add(x0, x3)
            x3 = lax.bitwise_xor(x0, _rotate_left(x3, rot0))
            x2 = lax.add(x2, x1)
            x1 = lax.bitwise_xor(x2, _rotate_left(x1, rot1))
        if rnd % 4 == 3:  # key injection
            i = rnd // 4
            x0 = lax.add(x0, schedule[(1 + i) % 5])
            x1 = lax.add(x1, schedule[(2 + i) % 5])
            x2 = lax.add(x2, schedule[(3 + i) % 5])
            x3 = lax.add(lax.add(x3, schedule[(4 + i) % 5]), _u32(1 + i))
    return x0, x1, x2, x3


@jit
def _threefry4x32_seed(seed):
    hi, lo = seed_words(seed)
    zero = _u32(0)
    out = threefry4x32(hi, lo, zero, zero, zero, zero, zero, zero)
    return lax.stack(list(out))


@jit(static_argnums=(1,))
def _threefry4x32_split(key, shape):
    counts_hi, counts_lo = iota_2x32_shape(shape)
    zeros = _zeros(shape)
    out = threefry4x32(*key_words(key), zeros, zeros, counts_hi, counts_lo)
    return lax.stack(list(out), axis=len(shape))


@jit
def _threefry4x32_fold_in(key, data):
    zero = _u32(0)
    out = threefry4x32(*key_words(key), zero, zero, zero, data)
    return lax.stack(list(out))


@jit(static_argnums=(1, 2))
def _threefry4x32_bits(key, bit_width, shape):
    counts_hi, counts_lo = iota_2x32_shape(shape)
    zeros = _zeros(shape)
    out = threefry4x32(*key_words(key), counts_hi, counts_lo, zeros, zeros)
    hi = lax.bitwise_xor(out[0], out[2])
    lo = lax.bitwise_xor(out[1], out[3])
    return bits_of_words(list(out), bit_width, hi, lo)


threefry4x32_prng_impl = _counter_based_impl(
    key_shape=(4,),
    seed=_threefry4x32_seed,
    split=_threefry4x32_split,
    bits=_threefry4x32_bits,
    fold_in=_threefry4x32_fold_in,
    name="threefry4x32",
    tag="fry4",
)


# --------------------------------------------------------------------------------------
# Philox


_PHILOX_W = (np.uint32(0x9E3779B9), np.uint32(0xBB67AE85))  # Weyl key bumps
_PHILOX_M2X32 = np.uint32(0xD256D193)
_PHILOX_M4X32 = (np.uint32(0xD2511F53), np.uint32(0xCD9E8D57))


def philox2x32(k0, x0, x1):
    """Philox-2x32-10 on uint32 words: one key word, two counter words."""
    for rnd in range(10):
        if rnd:
            k0 = lax.add(k0, _PHILOX_W[0])
        lo = lax.mul(_PHILOX_M2X32, x0)
        hi = lax.mulhi(_PHILOX_M2X32, x0)
        x0, x1 = lax.bitwise_xor(lax.bitwise_xor(hi, x1), k0), lo
    return x0, x1


def philox4x32(k0, k1, x0, x1, x2, x3):
    """Philox-4x32-10 on uint32 words: two key words, four counter words."""
    m0, m1 = _PHILOX_M4X32
    for rnd in range(10):
        if rnd:
            k0 = lax.add(k0, _PHILOX_W[0])
            k1 = lax.add(k1, _PHILOX_W[1])
        lo0, hi0 = lax.mul(m0, x0), lax.mulhi(m0, x0)
        lo1, hi1 = lax.mul(m1, x2), lax.mulhi(m1, x2)
        x0, x1, x2, x3 = (
            lax.bitwise_xor(lax.bitwise_xor(hi1, x1), k0),
            lo1,
            lax.bitwise_xor(lax.bitwise_xor(hi0, x3), k1),
            lo0,
        )
    return x0, x1, x2, x3


@jit
def _philox2x32_seed(seed):
    hi, lo = seed_words(seed)
    out0, _ = philox2x32(_u32(0), hi, lo)
    return lax.reshape(out0, (1,))


@jit(static_argnums=(1,))
def _philox2x32_split(key, shape):
    counts_hi, counts_lo = iota_2x32_shape(shape)
    (k0,) = key_words(key)
    out0, _ = philox2x32(k0, counts_hi, counts_lo)
    return lax.expand_dims(out0, (len(shape),))


@jit
def _philox2x32_fold_in(key, data):
    (k0,) = key_words(key)
    out0, _ = philox2x32(k0, _u32(0), data)
    return lax.reshape(out0, (1,))


@jit(static_argnums=(1, 2))
def _philox2x32_bits(key, bit_width, shape):
    counts_hi, counts_lo = iota_2x32_shape(shape)
    (k0,) = key_words(key)
    out0, out1 = philox2x32(k0, counts_hi, counts_lo)
    return bits_of_words([out0, out1], bit_width, out0, out1)


philox2x32_prng_impl = _counter_based_impl(
    key_shape=(1,),
    seed=_philox2x32_seed,
    split=_philox2x32_split,
    bits=_philox2x32_bits,
    fold_in=_philox2x32_fold_in,
    name="philox2x32",
    tag="phx2",
)


@jit
def _philox4x32_seed(seed):
    hi, lo = seed_words(seed)
    zero = _u32(0)
    out = philox4x32(zero, zero, hi, lo, zero, zero)
    return lax.stack([out[0], out[1]])


@jit(static_argnums=(1,))
def _philox4x32_split(key, shape):
    counts_hi, counts_lo = iota_2x32_shape(shape)
    zeros = _zeros(shape)
    out = philox4x32(*key_words(key), zeros, zeros, counts_hi, counts_lo)
    return lax.stack([out[0], out[1]], axis=len(shape))


@jit
def _philox4x32_fold_in(key, data):
    zero = _u32(0)
    out = philox4x32(*key_words(key), zero, zero, zero, data)
    return lax.stack([out[0], out[1]])


@jit(static_argnums=(1, 2))
def _philox4x32_bits(key, bit_width, shape):
    counts_hi, counts_lo = iota_2x32_shape(shape)
    zeros = _zeros(shape)
    out = philox4x32(*key_words(key), counts_hi, counts_lo, zeros, zeros)
    return bits_of_words(list(out), bit_width, out[0], out[1])


philox4x32_prng_impl = _counter_based_impl(
    key_shape=(2,),
    seed=_philox4x32_seed,
    split=_philox4x32_split,
    bits=_philox4x32_bits,
    fold_in=_philox4x32_fold_in,
    name="philox4x32",
    tag="phx4",
)

for _impl in (
    rbg_prng_impl,
    unsafe_rbg_prng_impl,
    threefry4x32_prng_impl,
    philox2x32_prng_impl,
    philox4x32_prng_impl,
):
    register_prng(_impl)
del _impl
