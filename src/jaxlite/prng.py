"""The machinery under `jaxlite.random`: Threefry-2x32 keys and XLA-exact float kernels.

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
(`random.PRNGKey`) are the uint32 arrays themselves.

JAX's samples are what XLA's CPU compiler makes of each sampler's arithmetic: it fuses a
multiply that feeds an add into one fused multiply-add, flushes subnormal floats to zero,
and evaluates `log`, `log1p`, `exp`, `erf` and `erf_inv` with its own polynomials. The
last section reproduces those roundings for float32 (an exactly rounded `fma` primitive,
the same polynomials evaluated in the same order), so that float samples match JAX bit
for bit instead of to within an ulp. Other float widths use jaxlite's own functions.
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
    Primitive,
    ShapedArray,
    Tracer,
    abstract_eval_rules,
    impl_rules,
    no_effects,
)
from jaxlite.dispatch import jit
from jaxlite.interpreters import ad, batching
from jaxlite.lax.custom_derivatives import custom_jvp
from jaxlite.lax.elementwise import lax_operands
from jaxlite.lax.rules import FLOAT, broadcast_shapes, check_dtype, check_same_dtypes
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


class KeyTy:
    """The dtype of typed threefry keys, printed as JAX prints it: `key<fry>`."""

    name = "key<fry>"
    itemsize = 8
    impl_name = IMPL_NAME

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __eq__(self, other):
        if isinstance(other, str):
            return other in (self.name, IMPL_NAME)
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


tree_util.register_pytree_node(
    PRNGKeyArray,
    lambda keys: ((keys._base_array,), None),
    lambda _, children: PRNGKeyArray(children[0]),
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
# Float kernels as XLA's CPU backend computes them
#
# Two primitives XLA has and jaxlite.lax lacks: an exactly rounded fused multiply-add
# and a same-width bitcast. The kernels below use them to follow XLA's float32
# algorithms step by step; every `_fma` stands where XLA's compiler fuses a multiply
# into an add.


def _two_sum(a, b):
    """`s, e` with `s = fl(a + b)` and `a + b == s + e` exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _fma_narrow(a, b, c, dtype):
    """fma for dtypes whose products are exact in float64 (float32 and narrower).

    `a * b + c` is rounded once to float64 and once to `dtype`; the second rounding is
    wrong only when the first lands exactly halfway between two `dtype` values (the
    float64 bits below `dtype`'s mantissa read 100...0), and then the sign of the first
    rounding's error says which way the exact sum lies.
    """
    a, b, c = (np.asarray(v, np.float64) for v in (a, b, c))
    with np.errstate(all="ignore"):
        p = a * b
        s = p + c
        r = s.astype(dtype)
        dropped = 52 - int(dtypes.finfo(dtype).nmant)
        low = np.asarray(s).view(np.uint64) & np.uint64((1 << dropped) - 1)
        tie = low == np.uint64(1 << (dropped - 1))
        if np.any(tie):
            # Rare: redo the suspicious elements only.
            p, c, s = (np.broadcast_to(v, tie.shape)[tie] for v in (p, c, s))
            _, err = _two_sum(p, c)
            near = s.astype(dtype)
            toward = np.where(s > near.astype(np.float64), np.inf, -np.inf)
            other = np.nextafter(near, toward.astype(dtype))
            fix = (s != near.astype(np.float64)) & (err != 0) & np.isfinite(err)
            closer = np.where(err > 0, np.maximum(near, other), np.minimum(near, other))
            r = np.array(np.broadcast_to(r, tie.shape))
            r[tie] = np.where(fix, closer, near)
    return r


def _two_prod(a, b):
    """`p, e` with `p = fl(a * b)` and `a * b == p + e` exactly (Dekker, Veltkamp)."""
    p = a * b

    def halves(x):
        t = 134217729.0 * x
        hi = t - (t - x)
        return hi, x - hi

    ah, al = halves(a)
    bh, bl = halves(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _fma_f64(a, b, c):
    """Exactly rounded float64 fma: Boldo and Melquiond's emulation by rounding to odd."""
    a, b, c = (np.asarray(v, np.float64) for v in (a, b, c))
    with np.errstate(all="ignore"):
        uh, ul = _two_prod(a, b)
        th, tl = _two_sum(c, uh)
        v, ve = _two_sum(tl, ul)
        even = (v.view(np.int64) & 1) == 0
        away = np.nextafter(v, np.where(ve > 0, np.inf, -np.inf))
        v = np.where((ve != 0) & even, away, v)
        out = th + v
        exact = np.isfinite(out) & np.isfinite(uh) & np.isfinite(ul)
        return np.where(exact, out, a * b + c)


def fma_values(a, b, c):
    """`a * b + c` with one rounding, on NumPy values of one float dtype."""
    dtype = np.result_type(a, b, c)
    out = _fma_f64(a, b, c) if dtype == np.float64 else _fma_narrow(a, b, c, dtype)
    return out[()] if out.ndim == 0 else out


def _fma_abstract(a, b, c):
    avals = (a, b, c)
    check_same_dtypes("fma", avals)
    check_dtype("fma", a.dtype, FLOAT)
    shape = broadcast_shapes("fma", a.shape, b.shape, c.shape)
    weak = all(x.weak_type for x in avals)
    return [ShapedArray(shape, a.dtype, weak)], no_effects


def _fma_out_shape(a, b, c):
    return broadcast_shapes("fma", np.shape(a), np.shape(b), np.shape(c))


def _broadcast_tangent(t, shape):
    if np.shape(t) == shape:
        return t
    dims = () if not np.ndim(t) else tuple(range(len(shape)))
    return lax.broadcast_in_dim(t, shape, dims)


def _fma_jvp_a(t, a, b, c):
    return _broadcast_tangent(lax.mul(t, b), _fma_out_shape(a, b, c))


def _fma_jvp_b(t, a, b, c):
    return _broadcast_tangent(lax.mul(a, t), _fma_out_shape(a, b, c))


def _fma_jvp_c(t, a, b, c):
    return _broadcast_tangent(t, _fma_out_shape(a, b, c))


fma_p = Primitive("fma")
impl_rules[fma_p] = lambda a, b, c: [fma_values(a, b, c)]
abstract_eval_rules[fma_p] = _fma_abstract
ad.defjvp(fma_p, _fma_jvp_a, _fma_jvp_b, _fma_jvp_c)
batching.defbroadcasting(fma_p)


def fma(a, b, c):
    """`a * b + c` rounded once, as XLA computes a multiply fused into an add."""
    return fma_p.bind(*lax_operands(a, b, c))


def mul_add(a, b, c):
    """`a * b + c` as XLA's CPU backend computes it in one fusion: one fma for float32
    and float64; 16-bit floats round the product and the sum separately."""
    a, b, c = lax_operands(a, b, c)
    if np.dtype(a.dtype).itemsize >= 4:
        return fma_p.bind(a, b, c)
    return lax.add(lax.mul(a, b), c)


def _bitcast_impl(x, *, new_dtype):
    out = np.asarray(x).view(new_dtype)
    return [out[()] if out.ndim == 0 else out]


def _bitcast_abstract(x, *, new_dtype):
    if np.dtype(x.dtype).itemsize != np.dtype(new_dtype).itemsize:
        raise NotImplementedError(
            f"bitcast_convert_type from {x.dtype} to {new_dtype}: jaxlite only "
            "bitcasts between dtypes of one width"
        )
    return [ShapedArray(x.shape, new_dtype)], no_effects


bitcast_convert_type_p = Primitive("bitcast_convert_type")
impl_rules[bitcast_convert_type_p] = _bitcast_impl
abstract_eval_rules[bitcast_convert_type_p] = _bitcast_abstract
ad.defjvp(bitcast_convert_type_p, None)
batching.defvectorized(bitcast_convert_type_p)


def bitcast_convert_type(x, new_dtype):
    """Reinterpret the bits of `x` as `new_dtype` (of the same width)."""
    return bitcast_convert_type_p.bind(x, new_dtype=np.dtype(new_dtype))


# -- float32 kernels ---------------------------------------------------------------------

_F32 = np.dtype("float32")
_TINY32 = np.float32(np.finfo(np.float32).tiny)


def _f(v):
    return np.float32(v)


def _where(pred, x, y):
    return jnp.where(pred, x, y)


def _flush_subnormal_input(x, out):
    """`out`, or a zero of x's sign where x is subnormal (XLA reads those as zero)."""
    return _where(lax.lt(lax.abs(x), _TINY32), lax.mul(x, _f(0)), out)


def _horner(x, coefficients):
    """`c0 * x**n + ... + cn` by Horner's rule with one fma per step."""
    acc = lax.full_like(x, _f(coefficients[0]))
    for c in coefficients[1:]:
        acc = fma(acc, x, _f(c))
    return acc


# Cephes' logf: log(1 + f) for f in [sqrt(1/2) - 1, sqrt(2) - 1], and log(2) in two
# parts (Q1 + Q2) so that e * Q2 is exact.
_LOG_P = (
    7.0376836292e-2,
    -1.1514610310e-1,
    1.1676998740e-1,
    -1.2420140846e-1,
    1.4249322787e-1,
    -1.6668057665e-1,
    2.0000714765e-1,
    -2.4999993993e-1,
    3.3333331174e-1,
)
_LOG_Q1 = _f(-2.12194440e-4)
_LOG_Q2 = _f(0.693359375)
_SQRT_HALF = _f(0.707106781186547524)


def _frexp(x):
    """Mantissa in [0.5, 1) and exponent (as float32) of positive normal float32 `x`."""
    bits = bitcast_convert_type(x, np.uint32)
    exponent = lax.convert_element_type(
        lax.shift_right_logical(bits, _u32(23)), np.int32
    )
    exponent = lax.convert_element_type(lax.sub(exponent, np.int32(126)), _F32)
    mantissa = lax.bitwise_or(lax.bitwise_and(bits, _u32(0x807FFFFF)), _u32(0x3F000000))
    return bitcast_convert_type(mantissa, _F32), exponent


def log_f32(x):
    """XLA's float32 `log` (Cephes, with its fused multiply-adds)."""
    m, e = _frexp(lax.max(x, _TINY32))
    small = lax.lt(m, _SQRT_HALF)
    e = lax.sub(e, _where(small, _f(1), _f(0)))
    r = lax.add(lax.sub(m, _f(1)), _where(small, m, _f(0)))
    r2 = lax.mul(r, r)
    r3 = lax.mul(r2, r)
    p = _LOG_P
    y0 = fma(fma(lax.full_like(r, _f(p[0])), r, _f(p[1])), r, _f(p[2]))
    y1 = fma(fma(lax.full_like(r, _f(p[3])), r, _f(p[4])), r, _f(p[5]))
    y2 = fma(fma(lax.full_like(r, _f(p[6])), r, _f(p[7])), r, _f(p[8]))
    y = fma(fma(y0, r3, y1), r3, y2)
    y = fma(y, r3, lax.mul(e, _LOG_Q1))
    out = lax.add(lax.add(lax.sub(r, lax.mul(r2, _f(0.5))), y), lax.mul(e, _LOG_Q2))
    # Subnormals count as zero (XLA runs with denormals-are-zero).
    out = _where(lax.lt(x, _TINY32), _f(-np.inf), out)
    out = _where(lax.eq(x, _f(np.inf)), _f(np.inf), out)
    negative = lax.le(x, lax.neg(_TINY32))
    return _where(lax.bitwise_or(negative, lax.ne(x, x)), _f(np.nan), out)


# Cephes' log1p: a rational approximation below sqrt(2) - 1, log(1 + x) above.
_LOG1P_NUM = (
    4.5270000862445199635215e-5,
    4.9854102823193375972212e-1,
    6.5787325942061044846969e0,
    2.9911919328553073277375e1,
    6.0949667980987787057556e1,
    5.7112963590585538103336e1,
    2.0039553499201281259648e1,
)
_LOG1P_DEN = (
    1.0,
    1.5062909083469192043167e1,
    8.3047565967967209469310e1,
    2.2176239823732856465394e2,
    3.0909872225312059774938e2,
    2.1642788614495947685003e2,
    6.0118660497603843919306e1,
)


def log1p_f32(x):
    """XLA's float32 `log1p`."""
    large = log_f32(lax.add(x, _f(1)))
    x2 = lax.mul(x, x)
    ratio = lax.div(_horner(x, _LOG1P_NUM), _horner(x, _LOG1P_DEN))
    small = lax.add(x, fma(_f(-0.5), x2, lax.mul(lax.mul(x, x2), ratio)))
    small = _flush_subnormal_input(x, small)
    return _where(lax.lt(lax.abs(x), _f(0.41421356237309504880)), small, large)


# Cephes' expf: exp(r) * 2**n with r = x - n * log(2) and n clamped to [-127, 127].
_EXP_P = (
    1.9875691500e-4,
    1.3981999507e-3,
    8.3334519073e-3,
    4.1665795894e-2,
    1.6666665459e-1,
    5.0000001201e-1,
)


def exp_f32(x):
    """XLA's float32 `exp`."""
    x = lax.clamp(_f(-87.8), x, _f(88.8))
    n = lax.floor(fma(x, _f(1.44269504088896341), _f(0.5)))
    n = lax.clamp(_f(-127), n, _f(127))
    r = fma(_f(-0.693359375), n, x)
    r = fma(_f(2.12194440e-4), n, r)
    z = fma(_horner(r, _EXP_P), lax.mul(r, r), r)
    z = lax.add(_f(1), z)
    n = lax.convert_element_type(n, np.int32)
    scale = lax.shift_left(lax.add(n, np.int32(127)), np.int32(23))
    out = lax.mul(z, bitcast_convert_type(scale, _F32))
    # Subnormal results flush to zero.
    return _where(lax.lt(out, _TINY32), _f(0), out)


# A rational approximation of erf on [-3.83, 3.83] (beyond it erf rounds to +-1).
_ERF_NUM = (
    0.00022905065861350646,
    0.0034082910107109506,
    0.050955695062380861,
    0.18520832239976145,
    1.128379143519084,
)
_ERF_DEN = (
    -1.1791602954361697e-7,
    0.000023547966471313185,
    0.0010179625278914885,
    0.014070470171167667,
    0.11098505178285362,
    0.49746925110067538,
    1.0,
)


def erf_f32(x):
    """XLA's float32 `erf`."""
    x2 = lax.mul(x, x)
    ratio = lax.div(lax.mul(x, _horner(x2, _ERF_NUM)), _horner(x2, _ERF_DEN))
    inside = lax.le(lax.abs(x), _f(3.832506856900711))
    sign = lax.bitwise_and(bitcast_convert_type(x, np.uint32), _u32(0x80000000))
    one = bitcast_convert_type(lax.bitwise_or(sign, _u32(0x3F800000)), _F32)
    out = _where(lax.bitwise_or(inside, lax.ne(x, x)), ratio, one)
    return _flush_subnormal_input(x, out)


# Giles' single-precision erfinv ("Approximating the erfinv function", GPU Computing
# Gems, 2011): a polynomial in w = -log(1 - x**2), split at w = 5.
_ERFINV_CENTRAL = (
    2.81022636e-08,
    3.43273939e-07,
    -3.5233877e-06,
    -4.39150654e-06,
    0.00021858087,
    -0.00125372503,
    -0.00417768164,
    0.246640727,
    1.50140941,
)
_ERFINV_TAIL = (
    -0.000200214257,
    0.000100950558,
    0.00134934322,
    -0.00367342844,
    0.00573950773,
    -0.0076224613,
    0.00943887047,
    1.00167406,
    2.83297682,
)


def erf_inv_f32(x):
    """XLA's float32 `erf_inv`."""
    w = lax.neg(log1p_f32(lax.mul(x, lax.neg(x))))
    central = lax.lt(w, _f(5))
    w = _where(central, lax.sub(w, _f(2.5)), lax.sub(lax.sqrt(w), _f(3)))
    p = _where(central, _f(_ERFINV_CENTRAL[0]), _f(_ERFINV_TAIL[0]))
    for c, t in zip(_ERFINV_CENTRAL[1:], _ERFINV_TAIL[1:]):
        p = fma(p, w, _where(central, _f(c), _f(t)))
    out = lax.mul(p, x)
    out = _where(lax.eq(lax.abs(x), _f(1)), lax.mul(x, _f(np.inf)), out)
    return _flush_subnormal_input(x, out)


def _dispatch(kernel, fallback, derivative):
    """The kernel for float32 (and, via float32, 16-bit floats), `fallback` for other
    dtypes; differentiated with `derivative(x, y)` as JAX differentiates the primitive."""

    def apply(x):
        if x.dtype == _F32:
            return kernel(x)
        if dtypes.issubdtype(x.dtype, np.floating) and np.dtype(x.dtype).itemsize < 4:
            # XLA computes 16-bit floats' transcendental functions in float32.
            out = kernel(lax.convert_element_type(x, _F32))
            return lax.convert_element_type(out, x.dtype)
        return fallback(x)

    apply.__name__ = kernel.__name__.removesuffix("_f32")
    apply.__doc__ = f"`{apply.__name__}` rounded as XLA does for float32."
    fun = custom_jvp(apply)

    @fun.defjvp
    def _jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        y = fun(x)
        return y, lax.mul(t, derivative(x, y))

    return fun


def _one(x):
    return lax.full_like(x, 1)


log = _dispatch(log_f32, lax.log, lambda x, y: lax.div(_one(x), x))
log1p = _dispatch(
    log1p_f32, lax.log1p, lambda x, y: lax.div(_one(x), lax.add(x, _one(x)))
)
exp = _dispatch(exp_f32, lax.exp, lambda x, y: y)
erf = _dispatch(
    erf_f32,
    lax.erf,
    lambda x, y: lax.mul(
        lax.full_like(x, 2 / np.sqrt(np.pi)), exp(lax.neg(lax.mul(x, x)))
    ),
)
erf_inv = _dispatch(
    erf_inv_f32,
    lax.erf_inv,
    lambda x, y: lax.mul(lax.full_like(x, np.sqrt(np.pi) / 2), exp(lax.mul(y, y))),
)
