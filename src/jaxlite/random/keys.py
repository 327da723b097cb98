"""Keys: making them, splitting them, folding data into them, and their raw bits.

A key is the state of nothing: every sampler is a pure function of the key it is given,
and fresh keys come from `split` and `fold_in` (the PRNG implementations live in
`jaxlite.prng` and `generators`). `key` gives a typed key (`dtype=key<fry>`),
`PRNGKey` the legacy raw form, its uint32 data; every function here takes either, and
returns keys of the kind it was given, as JAX does. A raw key is read as data of the
default implementation (`jax_default_prng_impl`); `jax_legacy_prng_key` says whether
passing one is allowed, warned about or an error.
"""

from __future__ import annotations

import warnings

import numpy as np

from jaxlite import dtypes, prng
from jaxlite import numpy as jnp
from jaxlite.config import config
from jaxlite.core import Array
from jaxlite.lax.structural import canonicalize_shape
from jaxlite.random.arguments import check_out_sharding, random_bits, split_shape

__all__ = [
    "PRNGKey",
    "PRNGSpec",
    "bits",
    "check_prng_key",
    "clone",
    "default_prng_impl",
    "fold_in",
    "key",
    "key_data",
    "key_dtype",
    "key_impl",
    "resolve_prng_impl",
    "return_keys",
    "split",
    "wrap_key_data",
]


# --------------------------------------------------------------------------------------
# Implementations by name


class PRNGSpec:
    """Names a PRNG implementation that is not registered (JAX's `PRNGSpec`)."""

    __slots__ = ("_impl",)

    def __init__(self, impl):
        self._impl = impl

    def __repr__(self):
        return f"PRNGSpec({self._impl.name!r})"

    def __str__(self):
        return str(self._impl)

    def __hash__(self):
        return hash(self._impl)

    def __eq__(self, other):
        return isinstance(other, PRNGSpec) and self._impl == other._impl


def default_prng_impl():
    """The implementation `jax_default_prng_impl` names."""
    return prng.prngs[config.read("jax_default_prng_impl")]


def resolve_prng_impl(impl_spec):
    """The PRNGImpl given by a name, a key dtype, a PRNGSpec or None (the default)."""
    if impl_spec is None:
        return default_prng_impl()
    if type(impl_spec) is prng.PRNGImpl:
        return impl_spec
    if type(impl_spec) is PRNGSpec:
        return impl_spec._impl
    if isinstance(impl_spec, prng.KeyTy):
        return impl_spec._impl
    if type(impl_spec) is str:
        if impl_spec in prng.prngs:
            return prng.prngs[impl_spec]
        known = sorted(
            prng.prngs, key=lambda n: (_JAX_ORDER.get(n, len(_JAX_ORDER)), n)
        )
        names = ", ".join(f'"{name}"' for name in known)
        raise ValueError(
            f'unrecognized PRNG implementation "{impl_spec}". Did you mean one of: '
            f"{names}?"
        )
    raise TypeError(
        f"unrecognized type {type(impl_spec)} for specifying PRNG implementation."
    )


# The order JAX 0.10.2 registers its implementations in (and lists them in errors).
_JAX_ORDER = {
    name: i
    for i, name in enumerate(
        (
            "philox2x32",
            "philox4x32",
            "threefry2x32",
            "rbg",
            "unsafe_rbg",
            "threefry4x32",
        )
    )
}


def _impl_from(impl, dtype, ctor):
    if dtype is not None:
        if impl is not None:
            raise ValueError(
                f"Cannot specify both `impl` and `dtype` arguments to jax.random.{ctor}"
            )
        impl = dtype
    return resolve_prng_impl(impl)


# --------------------------------------------------------------------------------------
# Keys given to jax.random


_LEGACY_MESSAGE = (
    "Legacy uint32 key array passed as key to jax.random function. Please create keys "
    "using jax.random.key(). If use of a raw key array was intended, set "
    'jax_legacy_prng_key="allow".'
)


def check_prng_key(name, key, allow_batched=False):
    """`(typed keys, was_raw)` for a key given to `name`, with JAX's errors. A raw
    key is wrapped as keys of the default implementation, as `jax_legacy_prng_key`
    allows."""
    if prng.is_key(key):
        typed, was_raw = key, False
    elif _arraylike(key):
        typed, was_raw = prng.random_wrap(key, impl=default_prng_impl()), True
        mode = config.read("jax_legacy_prng_key")
        if mode == "error":
            raise ValueError(_LEGACY_MESSAGE)
        if mode == "warn":
            warnings.warn(_LEGACY_MESSAGE, stacklevel=dtypes._user_stacklevel())
        elif config.read("jax_enable_custom_prng"):
            warnings.warn(
                "Raw arrays as random keys to jax.random functions are deprecated. "
                f"Assuming valid {default_prng_impl().name} key for now.",
                FutureWarning,
                stacklevel=dtypes._user_stacklevel(),
            )
    else:
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    if not allow_batched and typed.ndim:
        raise ValueError(
            f"{name} accepts a single key, but was given a key array of shape "
            f"{np.shape(key)} != (). Use jax.vmap for batching."
        )
    return typed, was_raw


def _arraylike(x):
    return (
        isinstance(x, (np.ndarray, Array))
        or hasattr(x, "__jax_array__")
        or np.isscalar(x)
    )


def return_keys(was_raw, keys):
    """Raw data for raw inputs, typed keys for typed ones (typed keys always with
    `jax_enable_custom_prng`), as JAX does."""
    if was_raw and not config.read("jax_enable_custom_prng"):
        return prng.random_unwrap(keys)
    return keys


# --------------------------------------------------------------------------------------
# The public functions


def _seed_keys(ctor_name, seed, impl):
    if prng.is_key(seed):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed):
        raise TypeError(
            f"{ctor_name} accepts a scalar seed, but was given an array of shape "
            f"{np.shape(seed)} != (). Use jax.vmap for batching"
        )
    return prng.random_seed(_seed_array(seed), impl)


def _seed_array(seed):
    """The seed as JAX converts it: a Python int as int64, then wrapped to int32
    without x64; a boolean as int32."""
    if isinstance(seed, (bool, np.bool_)):
        seed = int(seed)
    if isinstance(seed, int):
        if not -(2**63) <= seed < 2**63:
            raise OverflowError("Python int too large to convert to C long")
        value = np.int64(seed)
        if not config.x64_enabled:
            value = value.astype(np.int32)
        return jnp.asarray(value)
    seed = jnp.asarray(seed)
    if seed.dtype == np.bool_:
        seed = seed.astype(np.int32)
    return seed


def key(seed, *, impl=None, dtype=None):
    """A typed PRNG key (`dtype=key<fry>`, shape `()`) from an integer seed."""
    return _seed_keys("key", seed, _impl_from(impl, dtype, "key"))


def PRNGKey(seed, *, impl=None):  # noqa: N802 (JAX's name)
    """A legacy raw key: the uint32 data of `key(seed)` (typed keys with
    `jax_enable_custom_prng`)."""
    return return_keys(True, _seed_keys("PRNGKey", seed, resolve_prng_impl(impl)))


def key_dtype(impl_spec=None):
    """The dtype of typed keys of an implementation (`key<fry>` by default)."""
    return prng.KeyTy(resolve_prng_impl(impl_spec))


def key_data(keys):
    """The uint32 data under typed keys (raw keys are returned as they are)."""
    typed, _ = check_prng_key("key_data", keys, allow_batched=True)
    return prng.random_unwrap(typed)


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """Typed keys over uint32 data whose trailing axes are the implementation's key
    shape."""
    impl = _impl_from(impl, dtype, "wrap_key_data")
    if not prng.is_array_like(key_bits_array):
        prng.check_key_data(impl, key_bits_array)
    return prng.random_wrap(jnp.asarray(key_bits_array), impl=impl)


def key_impl(keys):
    """The name of the keys' implementation (`'threefry2x32'`, `'rbg'`, ...)."""
    typed, _ = check_prng_key("key_impl", keys, allow_batched=True)
    impl = typed.dtype._impl
    return impl.name if prng.prngs.get(impl.name) == impl else PRNGSpec(impl)


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
