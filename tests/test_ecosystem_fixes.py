"""What the JAX libraries' quickstarts (tests/ecosystem) found missing or different in
jaxlite, against real JAX: `jax.experimental.layout` (flax imports `Format` from it)
and the samplers' `out_sharding` (flax.nnx's Dropout passes
`jax.typeof(x).sharding`)."""

import functools
import inspect

import numpy as np
import pytest
from tests.testing import check_close

import jaxlite
from jaxlite import random
from jaxlite.experimental import layout
from jaxlite.sharding import PartitionSpec


def _real_jax():
    return pytest.importorskip("jax")


# ----------------------------------------------------------------------------------------
# jax.experimental.layout


def test_layout_and_format_values_match_jax():
    jax = _real_jax()
    from jax.experimental import layout as jax_layout

    for lib, mod in ((jaxlite, layout), (jax, jax_layout)):
        x = lib.numpy.ones((2, 3))
        sharding = x.sharding
        values = [
            mod.Layout((1, 0)),
            mod.Layout((1, 0)).update(tiling=((8,),)),
            mod.Format(),
            mod.Format(mod.Layout.AUTO),
        ]
        reprs = [repr(v) for v in values]
        if lib is jaxlite:
            ours = reprs
            ours_format = mod.Format(mod.Layout((1, 0)), sharding)
        else:
            theirs = reprs
            theirs_format = mod.Format(mod.Layout((1, 0)), sharding)
    assert ours == theirs
    assert ours_format.layout == layout.Layout((1, 0))
    assert repr(ours_format.layout) == repr(theirs_format.layout)
    assert layout.Layout((1, 0)) == layout.Layout((1, 0))
    assert layout.Layout((1, 0)) != layout.Layout((0, 1))
    assert hash(layout.Format(layout.Layout.AUTO)) == hash(
        layout.Format(layout.Layout.AUTO)
    )


@pytest.mark.parametrize(
    "make, error, phrase",
    [
        (lambda m: m.Format(m.Layout((1, 0))), ValueError, "Sharding has to be concrete"),
        (lambda m: m.Format("x"), TypeError, "Invalid value received for the layout"),
        (lambda m: m.Format(None, "x"), TypeError, "Invalid value received for the sharding"),
    ],
)  # fmt: skip
def test_format_errors_match_jax(make, error, phrase):
    jax = _real_jax()
    import jax.experimental.layout as jax_layout

    del jax
    for mod in (layout, jax_layout):
        with pytest.raises(error) as info:
            make(mod)
        assert phrase in str(info.value)


def test_with_layout_constraint_is_the_identity_under_transformations():
    jax = _real_jax()
    from jax.experimental import layout as jax_layout

    def program(lib, mod):
        x = lib.numpy.arange(6.0).reshape(2, 3)

        def f(x):
            return mod.with_layout_constraint(x, mod.Layout((1, 0))) * 2

        grad = lib.grad(lambda x: lib.jit(f)(x).sum())(x)
        layouts = (mod.Layout((1, 0)), mod.Layout((0,)))
        pair = lib.jit(lambda x: mod.with_layout_constraint((x, x[0]), layouts))(x)
        return lib.jit(f)(x), grad, pair

    ours, theirs = program(jaxlite, layout), program(jax, jax_layout)
    ours, theirs = (
        jaxlite.tree_util.tree_leaves(ours),
        jax.tree_util.tree_leaves(theirs),
    )
    assert len(ours) == len(theirs) == 4
    for a, b in zip(ours, theirs):
        check_close(a, np.asarray(b))


def _constrain(mod, x, layouts):
    return {
        "rank": lambda: mod.with_layout_constraint(x, mod.Layout((0,))),
        "none": lambda: mod.with_layout_constraint(x, None),
        "prefix": lambda: mod.with_layout_constraint((x, x), [mod.Layout((1, 0))]),
    }[layouts]()


@pytest.mark.parametrize(
    "layouts, phrase",
    [
        ("rank", "incompatible with its layout annotation"),
        ("none", "must be of type `Layout`"),
        ("prefix", "must be a tree prefix"),
    ],
)
def test_with_layout_constraint_errors_match_jax(layouts, phrase):
    jax = _real_jax()
    from jax.experimental import layout as jax_layout

    for lib, mod in ((jaxlite, layout), (jax, jax_layout)):
        f = lib.jit(functools.partial(_constrain, mod, layouts=layouts))
        with pytest.raises(ValueError) as info:
            f(lib.numpy.ones((2, 3)))
        assert phrase in str(info.value)


# ----------------------------------------------------------------------------------------
# The samplers' out_sharding


def _samples(lib, x, sharding):
    key = lib.random.key(0)
    return [
        lib.random.bernoulli(key, 0.5, x.shape, out_sharding=sharding),
        lib.random.normal(key, x.shape, out_sharding=sharding),
        lib.random.uniform(key, x.shape, out_sharding=sharding),
        lib.random.randint(key, x.shape, 0, 9, out_sharding=sharding),
    ]


def _typeof_samples(lib, x):
    return _samples(lib, x, lib.typeof(x).sharding)


def test_out_sharding_of_a_value_is_accepted_and_changes_nothing():
    jax = _real_jax()
    for lib, samples in ((jaxlite, []), (jax, [])):
        x = lib.numpy.ones((2, 3))
        # flax.nnx's Dropout: the sharding of the value the sample replaces.
        samples += _samples(lib, x, lib.typeof(x).sharding)
        samples += lib.jit(functools.partial(_typeof_samples, lib))(x)
        mesh = lib.make_mesh((1,), ("x",))
        sharding = lib.sharding.NamedSharding(mesh, lib.sharding.PartitionSpec("x"))
        samples += _samples(lib, x, sharding)
        with lib.set_mesh(mesh):
            samples += _samples(lib, x, lib.sharding.PartitionSpec("x", None))
        if lib is jaxlite:
            ours = samples
        else:
            theirs = samples
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    check_close(ours[1], random.normal(random.key(0), (2, 3)))


@pytest.mark.parametrize(
    "sharding, error, phrase",
    [
        ("x", TypeError, "`out_sharding` argument of normal only supports"),
        ("single", TypeError, "`out_sharding` argument of normal only supports"),
        (PartitionSpec(), ValueError, "not under a mesh context"),
    ],
)
def test_out_sharding_errors_match_jax(sharding, error, phrase):
    jax = _real_jax()
    for lib in (jaxlite, jax):
        s = lib.numpy.ones(3).sharding if sharding == "single" else sharding
        if isinstance(s, PartitionSpec) and lib is jax:
            s = jax.sharding.PartitionSpec()
        with pytest.raises(error) as info:
            lib.random.normal(lib.random.key(0), (3,), out_sharding=s)
        assert phrase in str(info.value)


# ----------------------------------------------------------------------------------------
# jnp.linalg.qr(mode="raw"): LAPACK's geqrf layout (lineax's QR solver)


@pytest.mark.parametrize(
    "shape, dtype",
    [
        ((4, 3), np.float32),
        ((3, 5), np.float32),
        ((2, 4, 4), np.float64),
        ((3, 2), np.complex64),
        ((0, 3), np.float32),
    ],
)
def test_qr_raw_matches_jax(shape, dtype):
    jax = _real_jax()
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.standard_normal(shape)
    a = a.astype(dtype)
    with jaxlite.enable_x64(dtype == np.float64), jax.enable_x64(dtype == np.float64):
        ours = jaxlite.jit(lambda a: jaxlite.numpy.linalg.qr(a, mode="raw"))(a)
        theirs = jax.numpy.linalg.qr(a, mode="raw")
        for x, y in zip(ours, theirs):
            assert x.shape == y.shape and x.dtype == y.dtype
            check_close(x, np.asarray(y), rtol=1e-5, atol=1e-5)
        # The Householder vectors and factors rebuild Q, which with R gives back a.
        h, taus = ours
        r = jaxlite.numpy.triu(h.mT)[..., : min(shape[-2:]), :]
        q = jaxlite.lax.linalg.householder_product(h.mT[..., : min(shape[-2:])], taus)
        check_close(q @ r, a, rtol=1e-4, atol=1e-4)


def test_qr_raw_batches_and_is_not_differentiable():
    a = jaxlite.numpy.arange(12.0).reshape(4, 3) + jaxlite.numpy.eye(4, 3)
    batched = jaxlite.vmap(lambda a: jaxlite.numpy.linalg.qr(a, mode="raw"))(
        jaxlite.numpy.stack([a, 2 * a])
    )
    single = jaxlite.numpy.linalg.qr(2 * a, mode="raw")
    check_close(batched[0][1], single[0])
    check_close(batched[1][1], single[1])
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'geqrf'"):
        jaxlite.jvp(lambda a: jaxlite.numpy.linalg.qr(a, mode="raw"), (a,), (a,))
    with pytest.raises(TypeError, match="must have rank at least 2"):
        jaxlite.numpy.linalg.qr(jaxlite.numpy.ones(3), mode="raw")


# ----------------------------------------------------------------------------------------
# Trace.main: equinox's filter_jvp tells its own JVP tracers by their trace's `main`


def _own_jvp_outputs(lib, ad_module, find_top_trace):
    def f(x, y):
        main = find_top_trace([x]).main
        outs = (x * 2, y, lib.numpy.sin(x))
        return [
            isinstance(o, ad_module.JVPTracer) and o._trace.main is main for o in outs
        ]

    seen = []

    def g(x):
        seen.append(f(x, lib.jvp(lambda y: y * 3, (x,), (x,))[1]))
        return x

    lib.jvp(g, (1.0,), (1.0,))
    return seen[0]


def test_trace_main_identifies_the_jvp_of_a_tracer_as_in_jax():
    jax = _real_jax()
    from jax.extend.core import find_top_trace as jax_find_top_trace
    from jax.interpreters import ad as jax_ad

    from jaxlite.extend.core import find_top_trace
    from jaxlite.interpreters import ad

    ours = _own_jvp_outputs(jaxlite, ad, find_top_trace)
    theirs = _own_jvp_outputs(jax, jax_ad, jax_find_top_trace)
    assert ours == theirs == [True, True, True]


# ----------------------------------------------------------------------------------------
# cond's outputs are typed as its first branch's (weak types included), as in JAX:
# equinox's error_if returns the checked value from that branch


def _cond_weak_types(lib):
    lax, f32 = lib.lax, lib.numpy.float32
    return [
        lax.cond(True, lambda: 1.0, lambda: f32(2.0)).weak_type,
        lax.cond(True, lambda: f32(2.0), lambda: 1.0).weak_type,
        lib.jit(lambda p: lax.cond(p, lambda: f32(2.0), lambda: 1.0))(True).weak_type,
        lax.switch(1, [lambda: 1.0, lambda: f32(2.0)]).weak_type,
        lax.switch(1, [lambda: f32(1.0), lambda: 2.0]).weak_type,
        lib.vmap(lambda p: lax.cond(p, lambda: f32(2.0), lambda: 1.0))(
            lib.numpy.array([True, False])
        ).weak_type,
    ]


def test_cond_output_weak_types_follow_the_first_branch_as_in_jax():
    jax = _real_jax()
    assert _cond_weak_types(jaxlite) == _cond_weak_types(jax)
    assert _cond_weak_types(jaxlite)[:3] == [False, True, True]


def test_a_value_checked_in_a_cond_keeps_its_weak_type():
    # equinox.error_if: lax.cond(pred, raise_through_a_callback, lambda: x)
    def check(x, pred):
        struct = jaxlite.eval_shape(lambda: x)
        return jaxlite.lax.cond(
            pred, lambda: jaxlite.pure_callback(lambda v: v, struct, x), lambda: x
        )

    direction = jaxlite.numpy.where(True, 1, -1)
    out = jaxlite.jit(check)(direction, False)
    assert out.weak_type and out.dtype == np.int32
    assert (1.0 * out).dtype == np.float32


# ----------------------------------------------------------------------------------------
# jit of a function that `functools.wraps` another (flax's lifted jit): the arguments
# are not bound to the (wrapped function's) signature; inspect sees the signature


def _wrapped_jit_calls(lib):
    def user_fn(scope, x, use_bias=False):
        return x

    @functools.partial(lib.jit, static_argnums=(0,))
    @functools.wraps(user_fn)
    def jitted(fingerprint, variables, *args, **kwargs):
        x = args[0] if args else kwargs["x"]
        return variables * x + kwargs.get("b", 0.0)

    return [
        float(jitted("fp", 2.0, 3.0)),
        float(jitted("fp", 2.0, 3.0, b=1.0)),
        float(jitted("fp", 2.0, x=4.0, b=0.5)),
    ]


def test_jit_of_a_wrapping_function_passes_arguments_as_given():
    jax = _real_jax()
    assert _wrapped_jit_calls(jaxlite) == _wrapped_jit_calls(jax) == [6.0, 7.0, 8.5]


def test_jit_reports_the_signature_of_its_function():
    def f(a, b=2, *, c=3):
        return a

    for follow in (True, False):
        sig = inspect.signature(jaxlite.jit(f), follow_wrapped=follow)
        assert str(sig) == "(a, b=2, *, c=3)"


# ----------------------------------------------------------------------------------------
# Key arrays compare with broadcasting (numpyro: `keys == keys[0]`)


def _key_comparisons(lib):
    keys = lib.random.split(lib.random.key(0), 4)
    return [
        np.asarray(keys == keys[0]),
        np.asarray(keys[0] != keys),
        np.asarray(keys[:, None] == keys[None, :2]),
        np.asarray(lib.jit(lambda a, b: a == b)(keys, keys[1])),
        np.asarray(lib.vmap(lambda a: a == keys[2])(keys)),
    ]


def test_key_comparisons_broadcast_as_in_jax():
    jax = _real_jax()
    for ours, theirs in zip(_key_comparisons(jaxlite), _key_comparisons(jax)):
        np.testing.assert_array_equal(ours, theirs)
    keys = jaxlite.random.split(jaxlite.random.key(0), 4)
    with pytest.raises(TypeError, match="incompatible shapes for broadcasting"):
        keys == keys[:3]  # noqa: B015


def _key_closeness(lib):
    keys = lib.random.split(lib.random.key(0), 3)
    other = lib.random.key(1)
    return [
        np.asarray(lib.numpy.isclose(keys, other)),
        np.asarray(lib.numpy.isclose(keys, keys[0])),
        np.asarray(lib.numpy.allclose(keys, keys)),
        np.asarray(lib.numpy.allclose(keys[0], other)),  # flax's test of fresh rngs
        np.asarray(lib.jit(lib.numpy.allclose)(keys, keys)),
    ]


def test_isclose_and_allclose_of_keys_compare_them_as_in_jax():
    jax = _real_jax()
    for ours, theirs in zip(_key_closeness(jaxlite), _key_closeness(jax)):
        np.testing.assert_array_equal(ours, theirs)
    for lib in (jaxlite, jax):
        with pytest.raises(TypeError, match="isclose does not accept dtypes key<fry>"):
            lib.numpy.allclose(lib.random.key(0), 1.0)


# ----------------------------------------------------------------------------------------
# jax_num_cpu_devices (equinox's test configuration asks for 2): accepted and read
# back; jaxlite keeps its one device and says so


def test_num_cpu_devices_option_is_accepted_with_one_device():
    assert jaxlite.config.jax_num_cpu_devices == -1
    with pytest.warns(UserWarning, match="jaxlite has one CPU device"):
        jaxlite.config.update("jax_num_cpu_devices", 2)
    assert jaxlite.config.jax_num_cpu_devices == 2
    assert jaxlite.device_count() == 1
    jaxlite.config.update("jax_num_cpu_devices", 1)
    with pytest.raises(ValueError, match="must be None or of type int"):
        jaxlite.config.update("jax_num_cpu_devices", "2")


# ----------------------------------------------------------------------------------------
# jacfwd/jacrev/hessian wrap their function (equinox warns about a transformed
# callable stored in a Module by following `__wrapped__`)


def test_jacobians_wrap_their_function_as_in_jax():
    jax = _real_jax()

    def f(x, y=1.0):
        return x * y

    for lib in (jaxlite, jax):
        assert lib.jacfwd(f).__wrapped__ is f
        assert lib.jacrev(f).__wrapped__ is f
        assert lib.hessian(f).__wrapped__.__wrapped__ is f
        assert lib.jacfwd(f).__name__ == "f"


# ----------------------------------------------------------------------------------------
# static_argnums and static_argnames both given: taken as given, not completed from
# each other (flax's lifted jit gives both, for a signature it only wraps)


def _static_both(lib):
    def user_fn(scope, a, b):
        return a

    seen = []

    @functools.partial(lib.jit, static_argnums=(0,), static_argnames=("b",))
    @functools.wraps(user_fn)
    def jitted(fingerprint, variables, *args, **kwargs):
        seen.append(type(kwargs.get("b")).__name__)
        return variables["w"] * args[0]

    out = jitted("fp", {"w": lib.numpy.ones(2)}, 3.0, b="hi")

    def g(a, b):
        return a * 2

    both = lib.jit(g, static_argnums=(0,), static_argnames=("b",))
    return [np.asarray(out), np.asarray(both(2, lib.numpy.ones(2))), seen]


def test_jit_takes_static_argnums_and_argnames_as_given_when_both_are():
    jax = _real_jax()
    ours, theirs = _static_both(jaxlite), _static_both(jax)
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], theirs[1])
    assert ours[2] == theirs[2] == ["str"]
