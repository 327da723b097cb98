"""What the JAX libraries' quickstarts (tests/ecosystem) found missing or different in
jaxlite, against real JAX: `jax.experimental.layout` (flax imports `Format` from it)
and the samplers' `out_sharding` (flax.nnx's Dropout passes
`jax.typeof(x).sharding`)."""

import functools

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
