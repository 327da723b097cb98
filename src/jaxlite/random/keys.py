"""Keys: making them, splitting them, folding data into them, and their raw bits.

A key is the state of nothing: every sampler is a pure function of the key it is given,
and fresh keys come from `split` and `fold_in` (the Threefry hash lives in
`jaxlite.prng`). `key` gives a typed key (`dtype=key<fry>`), `PRNGKey` the legacy raw
`uint32[2]` form; every function here takes either, and returns keys of the kind it was
given, as JAX does.
"""

from __future__ import annotations

import numpy as np

from jaxlite import dtypes, prng
from jaxlite import numpy as jnp
from jaxlite.lax.structural import canonicalize_shape
from jaxlite.prng import PRNGKeyArray, check_prng_key, return_keys
from jaxlite.random.arguments import check_out_sharding, random_bits, split_shape

__all__ = [
    "PRNGKey",
    "bits",
    "clone",
    "fold_in",
    "key",
    "key_data",
    "key_dtype",
    "key_impl",
    "split",
    "wrap_key_data",
]


_JAX_ONLY_IMPLS = ("philox2x32", "philox4x32", "rbg", "unsafe_rbg", "threefry4x32")


def _check_impl(impl):
    if impl is None or impl == prng.IMPL_NAME or isinstance(impl, prng.KeyTy):
        return
    if impl in _JAX_ONLY_IMPLS:
        raise NotImplementedError(
            f'PRNG implementation "{impl}" is not available in jaxlite, which '
            f'implements only "{prng.IMPL_NAME}" (JAX\'s default).'
        )
    if isinstance(impl, str):
        raise ValueError(
            f'unrecognized PRNG implementation "{impl}". Did you mean one of: '
            f'"{prng.IMPL_NAME}"?'
        )
    raise TypeError(
        f"unrecognized type {type(impl)} for specifying PRNG implementation."
    )


def _impl_from(impl, dtype, ctor):
    if dtype is not None:
        if impl is not None:
            raise ValueError(
                f"Cannot specify both `impl` and `dtype` arguments to jax.random.{ctor}"
            )
        impl = dtype
    _check_impl(impl)


def _seed_data(ctor_name, seed):
    if isinstance(seed, PRNGKeyArray):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed):
        raise TypeError(
            f"{ctor_name} accepts a scalar seed, but was given an array of shape "
            f"{np.shape(seed)} != (). Use jax.vmap for batching"
        )
    return prng.random_seed(seed)


def key(seed, *, impl=None, dtype=None):
    """A typed PRNG key (`dtype=key<fry>`, shape `()`) from an integer seed."""
    _impl_from(impl, dtype, "key")
    return PRNGKeyArray(_seed_data("key", seed))


def PRNGKey(seed, *, impl=None):  # noqa: N802 (JAX's name)
    """A legacy raw key: the `uint32[2]` data of `key(seed)`."""
    _check_impl(impl)
    return _seed_data("PRNGKey", seed)


def key_dtype(impl_spec=None):
    """The dtype of typed keys (`key<fry>`)."""
    _check_impl(impl_spec)
    return prng.key_dtype


def key_data(keys):
    """The uint32 data under typed keys (raw keys are returned as they are)."""
    typed, _ = check_prng_key("key_data", keys, allow_batched=True)
    return typed._base_array


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """Typed keys over uint32 data whose last axis has size 2."""
    _impl_from(impl, dtype, "wrap_key_data")
    return prng.wrap_key_data(key_bits_array)


def key_impl(keys):
    """The name of the keys' generator: always `'threefry2x32'` in jaxlite."""
    check_prng_key("key_impl", keys, allow_batched=True)
    return prng.IMPL_NAME


def clone(key):
    """The same key (JAX's hook for key-reuse checking, which jaxlite does not do)."""
    return key


def split(key, num=2):
    """Split a key into `num` new keys (an int, or a shape) along new leading axes."""
    typed, was_raw = check_prng_key("split", key)
    return return_keys(was_raw, prng.random_split(typed, split_shape(num)))


def fold_in(key, data):
    """A new key from `key` and 32 bits of `data` (e.g. a step number)."""
    typed, was_raw = check_prng_key("fold_in", key)
    if np.ndim(data):
        raise TypeError(
            "fold_in accepts a scalar, but was given an array of"
            f"shape {np.shape(data)} != (). Use jax.vmap for batching."
        )
    data = jnp.asarray(data, dtype="uint32")
    return return_keys(was_raw, prng.random_fold_in(typed, data))


def bits(key, shape=(), dtype=None, *, out_sharding=None):
    """Uniform random bits as unsigned integers (uint32, or uint64 with x64)."""
    check_out_sharding("bits", out_sharding)
    typed, _ = check_prng_key("bits", key)
    if dtype is None:
        dtype = dtypes.default_uint_dtype()
    else:
        dtype = dtypes.canonicalize_user_dtype(dtype)
    if not dtypes.issubdtype(dtype, np.unsignedinteger):
        raise ValueError(
            f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}"
        )
    shape = canonicalize_shape(shape)
    return random_bits(typed, dtype.itemsize * 8, shape)
