"""Typed PRNG keys as an extended dtype, and every PRNG implementation JAX 0.10.2 has.

Keys are arrays of dtype `key<fry>` (an extended dtype whose rules the primitives
consult): they are pytree leaves, traced as `key<fry>[...]` avals through jit, vmap,
scan, cond and while, and turned into their uint32 data only when a jaxpr is
evaluated. Each behaviour is compared with real JAX where it is installed: key data
bit for bit, shapes, dtype names, jaxpr texts, error classes and phrases.
"""

import contextlib
import pickle
import warnings

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import lax, random
from jaxlite.interpreters import physical

IMPLS = (
    "threefry2x32",
    "rbg",
    "unsafe_rbg",
    "threefry4x32",
    "philox2x32",
    "philox4x32",
)


@pytest.fixture(scope="module")
def jax():
    return pytest.importorskip("jax")


@contextlib.contextmanager
def option(lib, name, value):
    old = lib.config.read(name) if lib is jaxlite else getattr(lib.config, name)
    lib.config.update(name, value)
    try:
        yield
    finally:
        lib.config.update(name, old)


class Leaf:
    """A result: its dtype's name and its data (for keys: their uint32 data)."""

    def __init__(self, dtype, value):
        self.dtype, self.value = dtype, value

    def __repr__(self):
        return f"Leaf({self.dtype}, {self.value!r})"


def data(lib, x):
    if lib.dtypes.issubdtype(getattr(x, "dtype", None), lib.dtypes.prng_key):
        return Leaf(str(x.dtype), np.asarray(lib.random.key_data(x)))
    return Leaf(str(np.asarray(x).dtype), np.asarray(x))


def assert_same(got, want):
    """Equal dtype names and bit-equal data, leaf by leaf."""
    assert type(got) is type(want)
    if isinstance(got, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w)
        return
    assert got.dtype == want.dtype
    assert got.value.shape == want.value.shape
    np.testing.assert_array_equal(got.value, want.value)


def both(jax, f):
    """`f(lib)` described for jaxlite and JAX, compared."""
    got, want = f(jaxlite), f(jax)
    assert_same(got, want)
    return got


# ----------------------------------------------------------------------------------------
# The extended dtype


def test_keys_are_pytree_leaves_with_a_key_aval(jax):
    for lib in (jaxlite, jax):
        keys = lib.random.split(lib.random.key(0), 3)
        assert lib.tree_util.tree_leaves({"k": keys})[0] is keys
        assert str(lib.typeof(keys)) == "key<fry>[3]"
        assert repr(lib.typeof(keys)) == "ShapedArray(key<fry>[3])"
        assert lib.tree.map(lambda x: x.shape, {"k": keys}) == {"k": (3,)}
        assert isinstance(keys, lib.Array)


def test_jaxprs_hold_keys_as_jax_prints_them(jax):
    def texts(lib):
        key, raw = lib.random.key(0), lib.random.PRNGKey(0)
        split = lambda k: lib.random.split(k)  # noqa: E731
        rows = lambda k: lib.numpy.reshape(k, (3, 1))[0]  # noqa: E731
        return [
            str(lib.make_jaxpr(split)(key)),
            str(lib.make_jaxpr(split)(raw)),
            str(lib.make_jaxpr(rows)(lib.random.split(key, 3))),
            str(lib.make_jaxpr(lambda k: k == k)(key)),
        ]

    assert texts(jaxlite) == texts(jax)


def test_physicalized_jaxprs_hold_only_key_data():
    def f(k, x):
        k1, k2 = random.split(k)
        keys = jnp.where(x > 0, random.split(k1, 3), k2)
        return keys, lax.scan(lambda c, _: (random.fold_in(c, 1), None), k2, None, 2)

    closed = jaxlite.make_jaxpr(f)(random.key(0), jnp.ones(3))
    assert physical.has_extended(closed)
    phys = physical.physicalize(closed)
    assert not physical.has_extended(phys)
    assert [str(a) for a in phys.in_avals] == ["uint32[2]", "float32[3]"]
    assert [str(a) for a in phys.out_avals] == ["uint32[3,2]", "uint32[2]"]


def test_no_function_is_wrapped_for_keys():
    import jaxlite.prng

    assert not hasattr(jaxlite.prng, "install_key_dispatch")
    for fun in (jnp.where, jnp.take, jnp.concatenate, lax.reshape, lax.gather):
        assert not hasattr(fun, "_key_dispatch_wrapped")
    assert jnp.where is jaxlite.numpy.ufuncs.where


# ----------------------------------------------------------------------------------------
# Constructors, comparisons, attributes


def test_constructors_take_the_key_dtype(jax):
    def made(lib):
        np_ = lib.numpy
        k = lib.random.key(0)
        ks = lib.random.split(lib.random.key(1), 3)
        return [
            data(lib, x)
            for x in (
                np_.zeros(3, dtype=k.dtype),
                np_.ones((2,), dtype=k.dtype),
                np_.empty((2,), dtype=k.dtype),
                np_.full((2,), ks[1]),
                np_.full((2,), 7, dtype=k.dtype),
                np_.full_like(ks, k),
                np_.zeros_like(ks),
                np_.ones_like(ks),
                lib.lax.full_like(ks, 0),
                lib.lax.full((2, 1), 0, k.dtype),
                np_.array([k, ks[2]]),
                np_.asarray(ks),
            )
        ]

    both(jax, made)


def test_key_comparisons_broadcast(jax):
    def compared(lib):
        k = lib.random.key(0)
        ks = lib.numpy.concatenate([lib.random.split(k, 2), k[None]])
        return [
            data(lib, x)
            for x in (
                k == ks,
                ks != k,
                lib.numpy.equal(ks[:, None], ks[None, :]),
                lib.vmap(lambda a: a == k)(ks),
                lib.jit(lambda a, b: a == b)(ks, k),
            )
        ]

    got = both(jax, compared)
    assert got[0].value.tolist() == [False, False, True]


def test_key_arrays_have_the_array_attributes(jax):
    for lib in (jaxlite, jax):
        ks = lib.random.split(lib.random.key(0), 3)
        assert ks.device == lib.devices()[0]
        assert ks.devices() == {lib.devices()[0]}
        assert ks.sharding == lib.sharding.SingleDeviceSharding(lib.devices()[0])
        assert (ks.ndim, ks.size, ks.itemsize, ks.nbytes) == (1, 3, 8, 24)
        assert not ks.committed and ks.is_fully_addressable
        assert ks.block_until_ready() is ks
        assert len(ks) == 3 and [k.shape for k in ks] == [()] * 3
        assert not ks.is_deleted()
        ks.delete()
        assert ks.is_deleted()
        with pytest.raises(TypeError, match="unhashable"):
            hash(lib.random.key(0))


def test_keys_pickle_with_their_implementation():
    for impl in IMPLS:
        keys = random.split(random.key(3, impl=impl), 2)
        back = pickle.loads(pickle.dumps(keys))
        assert back.dtype == keys.dtype
        np.testing.assert_array_equal(random.key_data(back), random.key_data(keys))


def test_eager_indexing_fast_path_matches_the_general_path():
    ks = random.split(random.key(0), (3, 4))
    full = np.asarray(random.key_data(ks))
    for idx in (1, (1, 2), (slice(None), 3), (Ellipsis, 0), (None, 2), slice(1, 3)):
        items = idx if isinstance(idx, tuple) else (idx,)
        got = ks[idx]
        assert got.dtype == ks.dtype
        want = full[(*items, slice(None))]  # the key words stay whole
        np.testing.assert_array_equal(random.key_data(got), want)
        jitted = jaxlite.jit(lambda k, idx=idx: k[idx])(ks)
        np.testing.assert_array_equal(random.key_data(jitted), want)
    with pytest.raises(IndexError, match="Too many indices"):
        random.key(0)[0]


# ----------------------------------------------------------------------------------------
# Transformations


def test_keys_through_transformations(jax):
    def run(lib):
        np_, lx, r = lib.numpy, lib.lax, lib.random
        k = r.key(0)
        ks = r.split(k, 3)
        mask = np_.array([True, False, True])
        outs = [
            lib.jit(lambda k: r.split(k, 4))(k),
            lib.jit(lambda: ks[1])(),  # a key array closed over
            lib.jit(lambda s: r.key(s))(3),
            lib.vmap(r.split)(ks),
            lib.vmap(lambda i: r.fold_in(k, i))(np_.arange(3)),
            lib.vmap(r.key)(np_.arange(3)),
            lib.vmap(lambda k: k, in_axes=1)(np_.stack([ks, ks])),
            lx.scan(lambda c, x: (r.split(c)[0], r.fold_in(c, x)), k, np_.arange(3)),
            lib.jit(lambda k: lx.scan(lambda c, _: tuple(r.split(c)), k, None, 3))(k),
            lx.fori_loop(0, 3, lambda i, c: r.split(c)[1], k),
            lx.while_loop(
                lambda c: c[0] < 3, lambda c: (c[0] + 1, r.split(c[1])[0]), (0, k)
            ),
            lib.vmap(
                lambda k: lx.while_loop(
                    lambda c: c[0] < 2, lambda c: (c[0] + 1, r.split(c[1])[0]), (0, k)
                )
            )(ks),
            lx.cond(True, lambda a: r.split(a)[0], lambda a: a, k),
            lib.jit(lambda p, a: lx.cond(p, lambda a: r.split(a)[0], lambda a: a, a))(
                False, k
            ),
            lx.switch(1, [lambda a: a, lambda a: r.fold_in(a, 3)], k),
            lib.checkpoint(lambda k: r.split(k))(k),
            lx.map(lambda k: r.split(k)[0], ks),
            lib.jit(np_.where)(mask, ks, k),
            lib.vmap(np_.where)(mask, ks, ks[::-1]),
            lib.jit(lambda i, a: a.at[i].set(k))(1, ks),
            lib.jit(lambda i: ks[i])(2),
            lib.vmap(lambda k: r.normal(k, (2,)))(ks),
            lib.grad(lambda x, k: x * r.uniform(k))(2.0, k),
            lib.grad(lib.checkpoint(lambda x, k: x * r.uniform(k)))(2.0, k),
            lib.jvp(lambda x: x * r.uniform(k), (1.0,), (1.0,)),
            lib.linearize(lambda x: x * r.normal(k), 1.0)[0],
        ]
        return lib.tree_util.tree_map(lambda x: data(lib, x), outs)

    both(jax, run)


def test_callbacks_under_jit_receive_key_data(jax):
    for lib in (jaxlite, jax):
        keys = lib.random.split(lib.random.key(0), 2)
        seen = []

        def record(a, seen=seen):
            seen.append((np.asarray(a).dtype, np.shape(a)))
            return np.float32(1)

        callback, pure_callback = lib.debug.callback, lib.pure_callback
        f32 = lib.ShapeDtypeStruct((), np.float32)
        lib.jit(lambda k, cb=callback: cb(record, k))(keys)
        lib.jit(lambda k, cb=pure_callback, s=f32: cb(record, s, k))(keys)
        assert seen == [(np.dtype(np.uint32), (2, 2))] * 2


def test_keys_under_debug_nans(jax):
    def run(lib):
        k = lib.random.key(0)
        with lib.debug_nans(True):
            outs = [
                lib.random.split(k),
                lib.random.split(k)[1],
                lib.random.normal(k, (2,)),
                lib.jit(lambda k: lib.random.split(k))(k),
            ]
            with pytest.raises(FloatingPointError, match="invalid value"):
                lib.jit(lambda k: lib.numpy.log(-lib.random.uniform(k)))(k)
        return [data(lib, x) for x in outs]

    both(jax, run)


def test_eval_shape_and_lowering_of_keys(jax):
    for lib in (jaxlite, jax):
        k = lib.random.key(0)
        sds = lib.ShapeDtypeStruct((), k.dtype)
        split = lib.random.split
        out = lib.eval_shape(split, sds)
        assert (out.shape, str(out.dtype)) == ((2,), "key<fry>")
        compiled = lib.jit(split).lower(sds).compile()
        assert str(compiled(k).dtype) == "key<fry>"


# ----------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize(
    "f, cls, phrase",
    [
        (lambda j, k: k + 1, TypeError, "add does not accept dtypes key<fry>, int32"),
        (lambda j, k: k + k, TypeError, "add does not accept dtype key<fry>"),
        (lambda j, k: k < k, TypeError, "lt does not accept dtype key<fry>"),
        (lambda j, k: k == 1, TypeError, "equal does not accept dtypes key<fry>"),
        (lambda j, k: -k, TypeError, "neg does not accept dtype key<fry>"),
        (lambda j, k: j.numpy.sin(k), TypeError, None),
        (lambda j, k: j.numpy.sum(k), TypeError, None),
        (lambda j, k: j.jit(lambda a: a + 1)(k), TypeError, "add does not accept"),
        (lambda j, k: j.jit(j.numpy.sum)(k), TypeError, None),
        (lambda j, k: k.sum(), NotImplementedError, "Cannot call abstract method"),
        (lambda j, k: k.astype("uint32"), NotImplementedError, "abstract method"),
        (
            lambda j, k: j.lax.convert_element_type(k, "uint32"),
            ValueError,
            "Cannot convert_element_type from key<fry> to uint32",
        ),
        (
            lambda j, k: j.numpy.pad(k, 1),
            ValueError,
            "Cannot convert_element_type from int32 to key<fry>",
        ),
        (
            lambda j, k: j.numpy.where(True, k, 0),
            ValueError,
            "not a valid dtype for JAX type promotion",
        ),
        (
            lambda j, k: j.random.key(0, impl="rbg") == j.random.key(0),
            TypeError,
            "equal does not accept dtypes key<rbg>, key<fry>",
        ),
        (lambda j, k: bool(k[0]), TypeError, "key array cannot be converted"),
        (lambda j, k: np.asarray(k), TypeError, "cannot be converted to a NumPy"),
    ],
)
def test_errors_match_jax(jax, f, cls, phrase):
    for lib in (jaxlite, jax):
        keys = lib.random.split(lib.random.key(0), 3)
        with pytest.raises(cls, match=phrase):
            f(lib, keys)


# ----------------------------------------------------------------------------------------
# Raw keys and the PRNG options


def test_legacy_prng_key_option(jax):
    message = "Legacy uint32 key array passed as key to jax.random function"
    for lib in (jaxlite, jax):
        raw = lib.random.PRNGKey(0)
        with option(lib, "jax_legacy_prng_key", "error"):
            for f in (lib.random.split, lib.random.uniform, lib.random.key_data):
                with pytest.raises(ValueError, match=message):
                    f(raw)
            lib.random.uniform(lib.random.key(0))  # typed keys are fine
        with option(lib, "jax_legacy_prng_key", "warn"):
            with pytest.warns(UserWarning, match=message):
                lib.random.split(raw)
        with option(lib, "jax_legacy_prng_key", "allow"):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                lib.random.split(raw)


def test_enable_custom_prng_gives_typed_keys(jax):
    def run(lib):
        raw = lib.random.key_data(lib.random.key(1))
        with option(lib, "jax_enable_custom_prng", True):
            with pytest.warns(FutureWarning, match="Raw arrays as random keys"):
                split = lib.random.split(raw)
            return [data(lib, lib.random.PRNGKey(0)), data(lib, split)]

    got = both(jax, run)
    assert got[0].dtype == "key<fry>"


@pytest.mark.parametrize("impl", IMPLS[1:])
def test_default_prng_impl_option(jax, impl):
    def run(lib):
        with option(lib, "jax_default_prng_impl", impl):
            raw = lib.random.PRNGKey(5)
            return [
                data(lib, lib.random.key(5)),
                data(lib, raw),
                data(lib, lib.random.split(raw)),
                data(lib, lib.random.uniform(raw, (3,))),
            ]

    both(jax, run)


def test_threefry_partitionable_off(jax):
    def run(lib):
        k = lib.random.key(3)
        warm = lib.random.uniform(k, (3,))  # a cached trace must not be reused
        with option(lib, "jax_threefry_partitionable", False):
            outs = [
                lib.random.split(k, 3),
                lib.random.bits(k, (5,)),
                lib.random.bits(k, (7,), dtype="uint8"),
                lib.random.bits(k, (3,), dtype="uint16"),
                lib.random.uniform(k, (3,)),
                lib.random.split(lib.random.key(3, impl="rbg"), 3),
            ]
        return [data(lib, x) for x in (warm, *outs)]

    got = both(jax, run)
    assert not np.array_equal(got[0].value, got[5].value)


# ----------------------------------------------------------------------------------------
# PRNG implementations


def test_implementation_names(jax):
    for lib in (jaxlite, jax):
        r = lib.random
        for impl in IMPLS:
            assert r.key_impl(r.key(0, impl=impl)) == impl
            assert r.key_dtype(impl) == r.key(0, impl=impl).dtype
        assert r.key_impl(r.PRNGKey(0)) == "threefry2x32"
        assert [str(r.key_dtype(i)) for i in IMPLS] == [
            "key<fry>", "key<rbg>", "key<urbg>", "key<fry4>", "key<phx2>", "key<phx4>"
        ]  # fmt: skip
        assert str(r.key_dtype()) == "key<fry>"
        assert str(r.key(0, impl=r.key_dtype("rbg")).dtype) == "key<rbg>"
        with pytest.raises(ValueError, match='unrecognized PRNG implementation "no"'):
            r.key(0, impl="no")
        with pytest.raises(TypeError, match="unrecognized type <class 'int'>"):
            r.key(0, impl=3)
        with pytest.raises(ValueError, match="Cannot specify both `impl` and `dtype`"):
            r.key(0, impl="rbg", dtype=r.key_dtype("rbg"))
        with pytest.raises(TypeError, match=r"key_data.shape to end with \(4,\)"):
            r.wrap_key_data(np.zeros(3, np.uint32), impl="rbg")
        with pytest.raises(TypeError, match="expected key_data.dtype = uint32"):
            r.wrap_key_data(np.zeros(2, np.float32))
        with pytest.raises(TypeError, match="expected key_data.ndim >= 1"):
            r.wrap_key_data(np.zeros((), np.uint32))


@pytest.mark.parametrize("impl", IMPLS)
def test_implementation_matches_jax(jax, impl):
    def run(lib):
        r = lib.random
        k = r.key(42, impl=impl)
        outs = [
            k,
            r.key(-7, impl=impl),
            r.key(np.uint32(3000000000), impl=impl),
            r.split(k, 3),
            r.split(k, (2, 3)),
            r.fold_in(k, 123456),
            r.bits(k, (5,)),
            r.bits(k, (7,), dtype="uint8"),
            r.bits(k, (3,), dtype="uint16"),
            r.uniform(k, (4,)),
            r.normal(k, (4,)),
            r.randint(k, (4,), 0, 100),
            r.permutation(k, 6),
            lib.jit(lambda k: r.uniform(k, (3,)))(k),
            r.PRNGKey(5, impl=impl),
            r.wrap_key_data(r.key_data(k), impl=impl),
            lib.vmap(lambda k: r.fold_in(k, 7))(r.split(k, 2)),
        ]
        if impl != "unsafe_rbg":  # JAX batches rng_bit_generator on the first key
            outs.append(lib.vmap(r.split)(r.split(k, 2)))
        return [data(lib, x) for x in outs]

    both(jax, run)


@pytest.mark.parametrize("impl", IMPLS)
def test_implementation_64_bit_draws_match_jax(jax, impl):
    def run(lib):
        with option(lib, "jax_enable_x64", True):
            k = lib.random.key(2**40 + 5, impl=impl)
            return [
                data(lib, k),
                data(lib, lib.random.bits(k, (3,), dtype="uint64")),
                data(lib, lib.random.uniform(k, (2,), dtype="float64")),
            ]

    both(jax, run)


def test_keys_inside_a_linear_solve_under_jit():
    # The keys live only inside custom_linear_solve's jaxprs (bare Jaxprs whose
    # constvars are operands): the equation is rewritten with those jaxprs physical.
    jax = pytest.importorskip("jax")

    def make(lib):
        def f(b):
            def matvec(x):
                noise = lib.random.uniform(lib.random.key(0), x.shape)
                return x * (2.0 + 0.0 * noise)

            return lib.lax.custom_linear_solve(
                matvec, b, solve=lambda mv, b: b / 2.0, symmetric=True
            )

        return lib.jit(f)

    b = np.arange(3.0, dtype=np.float32)
    np.testing.assert_array_equal(make(jaxlite)(b), make(jax)(b))
    np.testing.assert_array_equal(make(jaxlite)(b), b / 2)
