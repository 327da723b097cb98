"""Public JAX behaviour that flax, equinox, distrax and numpyro rely on, against real
JAX: `custom_vjp(symbolic_zeros=True)` (equinox's `filter_custom_vjp` pattern) and
`optimize_remat`, symbolic zeros of `custom_jvp` under vmap, weakly referable arrays
and tracers, avals with a `sharding`, one-device meshes (`set_mesh`, `AbstractMesh`,
`reshard`), and `jax.experimental.mesh_utils` / `multihost_utils`."""

import gc
import weakref

import numpy as np
import pytest
from tests.testing import check_close, check_grads

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import custom_derivatives
from jaxlite.core import ShapedArray


def _real_jax():
    return pytest.importorskip("jax")


def _kind(x):
    """A cotangent's kind, comparable across libraries."""
    if x is None:
        return "None"
    if type(x).__name__ == "SymbolicZero":
        return "SymbolicZero"
    return "array"


# ----------------------------------------------------------------------------------------
# custom_vjp with symbolic zeros: equinox's filter_custom_vjp, written with plain JAX


def _filter_custom_vjp_program(jx):
    """A `custom_vjp` as `equinox.filter_custom_vjp` builds it: static values are
    nondiff arguments, the forward rule reads `perturbed` off `CustomVJPPrimal`s and
    keeps it (Python bools) in the residuals, the backward rule turns symbolic zero
    cotangents into None and returns None for what is not perturbed."""
    cd = jx.custom_derivatives
    log = []

    def fn(static, diff):
        x, z = diff["x"], diff["z"]
        return jx.numpy.sin(x) * static["scale"] + z * z

    def fwd(static, diff):
        perturbed = jx.tree_util.tree_map(lambda p: p.perturbed, diff)
        values = cd.custom_vjp_primal_tree_values(diff)
        log.append(("fwd", perturbed["x"], perturbed["z"]))
        return fn(static, values), (values, perturbed)

    def bwd(static, res, g):
        values, perturbed = res
        g = None if isinstance(g, cd.SymbolicZero) else g
        # The flags come back as the Python bools fwd kept (equinox partitions on
        # them), under jit and vmap too.
        log.append(("bwd", _kind(g), perturbed["x"], perturbed["z"]))
        assert all(type(p) is bool for p in jx.tree_util.tree_leaves(perturbed))
        x, z = values["x"], values["z"]
        gx = g * jx.numpy.cos(x) * static["scale"] if perturbed["x"] else None
        gz = 2 * g * z if perturbed["z"] else None
        return ({"x": gx, "z": gz},)

    f = jx.custom_vjp(fn, nondiff_argnums=(0,))
    f.defvjp(fwd, bwd, symbolic_zeros=True)
    static = {"scale": 3.0}
    xs = jx.numpy.arange(3.0) * 0.5
    z = jx.numpy.array(0.7)

    def loss(x, z):
        return f(static, {"x": x, "z": z})

    outs = [
        loss(0.4, z),
        jx.grad(loss)(0.4, z),
        jx.grad(loss, argnums=1)(0.4, z),
        jx.grad(loss, argnums=(0, 1))(0.4, z),
        jx.jit(jx.grad(loss))(0.4, z),
        jx.vmap(jx.grad(loss), (0, None))(xs, z),
        jx.grad(lambda xs: jx.vmap(loss, (0, None))(xs, z).sum())(xs),
        jx.jit(jx.vmap(jx.grad(loss, argnums=(0, 1)), (0, None)))(xs, z),
    ]
    return [np.asarray(o) for o in jx.tree_util.tree_leaves(outs)], log


def test_custom_vjp_symbolic_zeros_filter_pattern_matches_jax():
    jax = _real_jax()
    ours, our_log = _filter_custom_vjp_program(jaxlite)
    theirs, their_log = _filter_custom_vjp_program(jax)
    assert our_log == their_log
    for a, b in zip(ours, theirs, strict=True):
        check_close(a, b)
    # The forward rule saw which inputs are differentiated.
    assert ("fwd", True, False) in our_log and ("fwd", False, True) in our_log


def test_custom_vjp_symbolic_zeros_gradient_matches_finite_differences():
    f = jaxlite.custom_vjp(lambda x, y: jnp.sin(x) * y)

    def fwd(x, y):
        assert isinstance(x, custom_derivatives.CustomVJPPrimal)
        return f(x.value, y.value), (x.value, y.value, x.perturbed, y.perturbed)

    def bwd(res, g):
        x, y, px, py = res
        return (g * jnp.cos(x) * y if px else None, g * jnp.sin(x) if py else None)

    f.defvjp(fwd, bwd, symbolic_zeros=True)
    args = (np.float32(0.3), np.float32(-1.2))
    check_grads(f, args, order=1, modes=("rev",))
    check_grads(jaxlite.jit(f), args, order=1, modes=("rev",))


def _unused_output_program(jx):
    """A two-output custom_vjp: the output that is not used gets a SymbolicZero."""
    cd = jx.custom_derivatives
    log = []

    def two(x, y):
        return x * y, jx.numpy.sin(x)

    def fwd(x, y):
        return two(x.value, y.value), (x.value, y.value)

    def bwd(res, g):
        a, b = g
        log.append((_kind(a), _kind(b)))
        x, y = res
        gx = jx.numpy.zeros_like(x)
        if not isinstance(a, cd.SymbolicZero):
            gx = gx + a * y
        if not isinstance(b, cd.SymbolicZero):
            gx = gx + b * jx.numpy.cos(x)
        return (gx, cd.SymbolicZero(jx.typeof(y).to_tangent_aval()))

    f = jx.custom_vjp(two)
    f.defvjp(fwd, bwd, symbolic_zeros=True)
    xs = jx.numpy.arange(3.0)
    outs = [
        jx.grad(lambda x: f(x, 2.0)[1])(1.0),
        jx.grad(lambda x: f(x, 2.0)[0])(1.0),
        jx.grad(lambda y: f(1.0, y)[0])(2.0),
        jx.jit(jx.grad(lambda x: f(x, 2.0)[1]))(1.0),
        jx.vmap(jx.grad(lambda x: f(x, 2.0)[1]))(xs),
        jx.grad(lambda xs: jx.vmap(lambda x: f(x, 2.0)[1])(xs).sum())(xs),
    ]
    return [np.asarray(o) for o in outs], log


def test_custom_vjp_bwd_gets_and_returns_symbolic_zeros_like_jax():
    jax = _real_jax()
    ours, our_log = _unused_output_program(jaxlite)
    theirs, their_log = _unused_output_program(jax)
    assert our_log == their_log
    assert ("SymbolicZero", "array") in our_log
    for a, b in zip(ours, theirs, strict=True):
        check_close(a, b)


def _bad_symbolic_zero(jx):
    f = jx.custom_vjp(lambda x: x * 2)
    zero = jx.custom_derivatives.SymbolicZero(jx.typeof(jx.numpy.ones(3)))
    f.defvjp(lambda x: (f(x.value), None), lambda res, g: (zero,), symbolic_zeros=True)
    jx.grad(f)(1.0)


def test_custom_vjp_symbolic_zero_of_the_wrong_type_is_an_error():
    jax = _real_jax()
    phrase = "bwd rule produced a SymbolicZero with a shape/dtype that does not match"
    with pytest.raises(ValueError, match=phrase):
        _bad_symbolic_zero(jaxlite)
    with pytest.raises(ValueError, match=phrase):
        _bad_symbolic_zero(jax)


def test_symbolic_zeros_public_names_like_jax():
    jax = _real_jax()
    for mod in (jaxlite.custom_derivatives, jax.custom_derivatives):
        prim = mod.CustomVJPPrimal(1.5, True)
        assert (prim.value, prim.perturbed) == (1.5, True)
        assert repr(prim) == "CustomVJPPrimal(value=1.5, perturbed=True)"
        tree = {"a": mod.CustomVJPPrimal(1.0, False), "b": [prim]}
        assert mod.custom_vjp_primal_tree_values(tree) == {"a": 1.0, "b": [1.5]}
        with pytest.raises(TypeError, match="unexpected leaf type"):
            mod.custom_vjp_primal_tree_values([1.0])
    ours = jaxlite.custom_derivatives.SymbolicZero(
        jaxlite.typeof(jnp.ones((2, 3), jnp.int32)).to_tangent_aval()
    )
    theirs = jax.custom_derivatives.SymbolicZero(
        jax.typeof(jax.numpy.ones((2, 3), jax.numpy.int32)).to_tangent_aval()
    )
    for z in (ours, theirs):  # attributes are the aval's; a pytree leaf; truthy
        assert (z.shape, z.ndim, z.size, z.weak_type) == ((2, 3), 2, 6, False)
        assert bool(z)
    assert ours.dtype == theirs.dtype == jaxlite.dtypes.float0
    assert repr(ours.aval) == repr(theirs.aval) == "ShapedArray(float0[2,3])"
    assert jaxlite.tree_util.tree_leaves([ours]) == [ours]
    with pytest.raises(AttributeError):
        ours.no_such_attribute  # noqa: B018


def _custom_jvp_symbolic_program(jx):
    cd = jx.custom_derivatives
    log = []
    f = jx.custom_jvp(lambda x, y: jx.numpy.sin(x) * y)

    def f_jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        log.append((_kind(tx), _kind(ty), np.shape(tx), np.shape(ty)))
        out = f(x, y)
        if isinstance(tx, cd.SymbolicZero) and isinstance(ty, cd.SymbolicZero):
            return out, cd.SymbolicZero(jx.typeof(out).to_tangent_aval())
        t = jx.numpy.zeros_like(out)
        if not isinstance(tx, cd.SymbolicZero):
            t = t + jx.numpy.cos(x) * y * tx
        if not isinstance(ty, cd.SymbolicZero):
            t = t + jx.numpy.sin(x) * ty
        return out, t

    f.defjvp(f_jvp, symbolic_zeros=True)
    xs, y = jx.numpy.arange(3.0), jx.numpy.array(2.0)
    outs = [
        jx.grad(f)(1.0, 2.0),
        jx.vmap(jx.grad(f), (0, None))(xs, y),
        jx.grad(lambda xs: jx.vmap(f, (0, None))(xs, y).sum())(xs),
        jx.grad(lambda y: jx.vmap(f, (0, None))(xs, y).sum())(y),
        jx.jacfwd(lambda xs: jx.vmap(f, (0, None))(xs, y))(xs),
        jx.grad(lambda y: jx.vmap(f, (None, 0))(1.0, y).sum())(xs),
    ]
    # A rule whose output tangent is a symbolic zero (a stop_gradient).
    g = jx.custom_jvp(lambda x: x * 2)
    g.defjvp(
        lambda p, t: (g(*p), cd.SymbolicZero(jx.typeof(p[0]).to_tangent_aval())),
        symbolic_zeros=True,
    )
    outs += [
        jx.grad(lambda x: g(x) + x)(1.0),
        jx.vmap(jx.grad(lambda x: g(x) + x))(xs),
        jx.grad(lambda xs: jx.vmap(g)(xs).sum() + xs.sum())(xs),
    ]
    return [np.asarray(o) for o in outs], log


def test_custom_jvp_symbolic_zeros_under_vmap_match_jax():
    jax = _real_jax()
    ours, our_log = _custom_jvp_symbolic_program(jaxlite)
    theirs, their_log = _custom_jvp_symbolic_program(jax)
    assert our_log == their_log
    for a, b in zip(ours, theirs, strict=True):
        check_close(a, b)


def _remat_program(jx):
    f = jx.custom_vjp(lambda x: jx.numpy.sin(x) * x)
    f.defvjp(
        lambda x: (f(x), x),
        lambda x, g: (g * (jx.numpy.cos(x) * x + jx.numpy.sin(x)),),
        optimize_remat=True,
    )
    xs = jx.numpy.linspace(-1.0, 1.0, 4)
    return [
        np.asarray(jx.grad(lambda x: jx.checkpoint(f)(x).sum())(xs)),
        np.asarray(jx.jit(jx.grad(lambda x: jx.checkpoint(f)(f(x)).sum()))(xs)),
        np.asarray(jx.vmap(jx.grad(f))(xs)),
    ]


def test_custom_vjp_optimize_remat_is_accepted_and_correct():
    jax = _real_jax()
    for a, b in zip(_remat_program(jaxlite), _remat_program(jax), strict=True):
        check_close(a, b)
    for jx in (jaxlite, jax):
        f = jx.custom_vjp(lambda x: x)
        with pytest.raises(
            NotImplementedError, match="does not support symbolic zeros"
        ):
            f.defvjp(lambda x: (x, None), lambda r, g: (g,), True, True)


def test_nondiff_argnames_like_jax():
    jax = _real_jax()

    def fn(x, scale, power):
        return scale * x**power

    for jx in (jaxlite, jax):
        f = jx.custom_vjp(fn, nondiff_argnames=("power",))
        assert f.nondiff_argnums == (2,)
        f.defvjp(
            lambda x, scale, power: (fn(x, scale, power), (x, scale)),
            lambda power, res, g: (
                g * res[1] * power * res[0] ** (power - 1),
                g * res[0] ** power,
            ),
        )
        check_close(jx.grad(f, argnums=(0, 1))(2.0, 3.0, 2), (12.0, 4.0))
        j = jx.custom_jvp(fn, nondiff_argnums=(1,), nondiff_argnames=("power",))
        assert j.nondiff_argnums == (1, 2)


# ----------------------------------------------------------------------------------------
# Weak references


def _check_weak_references(jx):
    x = jx.numpy.arange(3.0)
    ref = weakref.ref(x)
    assert ref() is x
    key = jx.random.key(0)
    assert weakref.ref(key)() is key
    cache = weakref.WeakValueDictionary({"x": x})
    seen = []

    def keep(y):
        seen.append(type(weakref.ref(y)()).__name__)
        return y

    jx.jit(keep)(x)
    jx.grad(keep)(1.0)
    jx.vmap(keep)(x)
    assert len(seen) == 3 and "NoneType" not in seen
    del x
    gc.collect()
    assert ref() is None and "x" not in cache


def test_arrays_and_tracers_are_weakly_referable_like_jax():
    _check_weak_references(jaxlite)
    _check_weak_references(_real_jax())


# ----------------------------------------------------------------------------------------
# Avals with a sharding; eval_shape of avals


def test_aval_sharding_prints_like_jax():
    jax = _real_jax()
    for value in (1.0, np.ones(3, np.float32), np.ones((2, 3), np.int32)):
        ours = jaxlite.typeof(jnp.asarray(value)).sharding
        theirs = jax.typeof(jax.numpy.asarray(value)).sharding
        assert repr(ours) == repr(theirs)
        assert repr(ours.mesh) == repr(theirs.mesh) == "AbstractMesh((), axis_types=())"
        assert ours.mesh.empty and ours.memory_kind is None is theirs.memory_kind
        assert ours.num_devices == theirs.num_devices == 0
    seen = []
    jaxlite.jit(lambda y: seen.append(repr(jaxlite.typeof(y).sharding)) or y)(
        jnp.ones(2)
    )
    assert seen == [
        "NamedSharding(mesh=AbstractMesh((), axis_types=()), spec=P(None,))"
    ]


def test_shaped_array_takes_a_sharding():
    jax = _real_jax()
    given = jaxlite.typeof(jnp.ones(3)).sharding
    aval = ShapedArray((3,), np.float32, weak_type=True, sharding=given)
    assert aval.sharding is given and aval.weak_type
    assert aval.update(dtype=np.int32).sharding is given
    assert aval == ShapedArray((3,), np.float32, weak_type=True)  # one device
    assert repr(aval) == repr(
        jax.core.ShapedArray((3,), np.float32, weak_type=True, sharding=None)
    )
    for dtype in (np.float32, np.int32, np.bool_):
        ours = ShapedArray((2,), dtype).to_tangent_aval()
        theirs = jax.core.ShapedArray((2,), dtype).to_tangent_aval()
        assert repr(ours) == repr(theirs)


def test_eval_shape_and_make_jaxpr_take_avals_like_jax():
    jax = _real_jax()

    def f(x, y):
        return {"s": x * 2 + y, "n": y.astype(jnp.int32).sum()}

    args = (
        ShapedArray((3,), np.float32, weak_type=True),
        ShapedArray((3,), np.float32),
    )
    real_args = tuple(
        jax.core.ShapedArray(a.shape, a.dtype, weak_type=a.weak_type) for a in args
    )
    ours = jaxlite.eval_shape(f, *args)
    theirs = jax.eval_shape(f, *real_args)
    assert repr(ours) == repr(theirs)

    def g(x, y):
        return x * 2 + y

    assert str(jaxlite.make_jaxpr(g)(*args)) == str(jax.make_jaxpr(g)(*real_args))
    with pytest.raises(TypeError, match="not a valid JAX type"):
        jaxlite.typeof(args[0])


# ----------------------------------------------------------------------------------------
# One-device meshes


def test_sharding_names_like_jax():
    jax = _real_jax()
    for name in ("AbstractMesh", "AxisType", "get_abstract_mesh", "get_mesh", "reshard",
                 "set_mesh", "use_abstract_mesh", "auto_axes", "explicit_axes",
                 "PositionalSharding", "use_mesh"):  # fmt: skip
        assert hasattr(jaxlite.sharding, name) == hasattr(jax.sharding, name), name
    assert jaxlite.set_mesh is jaxlite.sharding.set_mesh
    assert jaxlite.reshard is jaxlite.sharding.reshard
    assert [repr(t) for t in jaxlite.sharding.AxisType] == [
        repr(t) for t in jax.sharding.AxisType
    ]
    P, RP = jaxlite.sharding.PartitionSpec, jax.sharding.PartitionSpec
    for spec in ((), (None,), ("x",), ("x", None), (("x", "y"),)):
        assert repr(P(*spec)) == repr(RP(*spec))
    assert repr(P(P.UNCONSTRAINED)) == repr(RP(RP.UNCONSTRAINED))


def _mesh_reprs(jx):
    sh = jx.sharding
    mesh = jx.make_mesh((1,), ("x",))
    auto = sh.Mesh(np.array(jx.devices()).reshape(1, 1), ("a", "b"))
    abstract = sh.AbstractMesh((1, 2), ("a", "b"))
    explicit = sh.AbstractMesh((1,), ("x",), axis_types=(sh.AxisType.Explicit,))
    out = [
        repr(sh.get_abstract_mesh()),
        repr(mesh),
        str(mesh),
        repr(auto),
        repr(mesh.abstract_mesh),
        repr(abstract),
        (abstract.shape, abstract.size, abstract.axis_sizes, abstract.auto_axes),
        (abstract.shape_tuple, abstract.empty, explicit.explicit_axes),
        abstract == sh.AbstractMesh((1, 2), ("a", "b")),
        repr(abstract.update(axis_types=(sh.AxisType.Explicit,) * 2)),
        repr(sh.NamedSharding(mesh, sh.PartitionSpec("x"))),
        mesh == jx.make_mesh((1,), ("x",)),
        sh.NamedSharding(mesh, sh.PartitionSpec("x"))
        == sh.NamedSharding(jx.make_mesh((1,), ("x",)), sh.PartitionSpec("x")),
    ]
    with sh.set_mesh(mesh) as entered:
        out += [entered, repr(sh.get_abstract_mesh()), str(sh.get_mesh())]
    out += [repr(sh.get_abstract_mesh()), str(sh.get_mesh())]
    sh.set_mesh(mesh)  # as a setter
    try:
        out += [repr(sh.get_abstract_mesh())]
    finally:
        sh.set_mesh(None)
    out += [repr(sh.get_abstract_mesh()), str(sh.get_mesh())]
    with sh.use_abstract_mesh(abstract):
        out += [repr(sh.get_abstract_mesh())]
    return out


def test_meshes_and_mesh_context_like_jax():
    jax = _real_jax()
    assert _mesh_reprs(jaxlite) == _mesh_reprs(jax)


def _reshard_errors(jx):
    sh, P = jx.sharding, jx.sharding.PartitionSpec
    x = jx.numpy.ones(2)
    auto = jx.make_mesh((1,), ("x",), axis_types=(sh.AxisType.Auto,))
    cases = [
        lambda: sh.reshard(x, P()),
        lambda: sh.reshard(x, sh.NamedSharding(jx.make_mesh((1,), ("x",)), P("y"))),
        lambda: sh.set_mesh(sh.AbstractMesh((1,), ("x",))),
        lambda: sh.AbstractMesh((1, 1), ("a", "b"), axis_types=sh.AxisType.Explicit),
    ]
    messages = []
    for case in cases:
        with pytest.raises(ValueError) as info:
            case()
        messages.append(str(info.value))
    with sh.set_mesh(auto):
        with pytest.raises(ValueError) as info:
            sh.reshard(x, P("x"))
    messages.append(str(info.value).split(" This error occurs")[0])
    with pytest.raises(Exception) as info:  # noqa: PT011  (JAX's class is private)
        sh.NamedSharding(jx.make_mesh((1,), ("x",)), P("x", "x"))
    messages.append(f"{type(info.value).__name__}: {info.value}")
    return messages


def test_reshard_checks_like_jax():
    jax = _real_jax()
    ours, theirs = _reshard_errors(jaxlite), _reshard_errors(jax)
    for a, b in zip(ours, theirs, strict=True):
        assert a.split(".")[0] == b.split(".")[0]


def _check_reshard_keeps_values(jx):
    sh, P = jx.sharding, jx.sharding.PartitionSpec
    mesh = jx.make_mesh((1,), ("x",))
    x = jx.numpy.arange(4.0)
    tree = {"a": x, "b": [x * 2]}

    def twice(x):
        return sh.reshard(x, P("x")) * 2

    def square_sum(x):
        return (sh.reshard(x, P("x")) ** 2).sum()

    def psum(v):
        return jx.lax.psum(v, "x")

    with sh.set_mesh(mesh):
        out = sh.reshard(tree, {"a": P("x"), "b": [P()]})
        check_close(out["b"][0], np.arange(4.0) * 2)
        check_close(jx.jit(twice)(x), 2 * x)
        check_close(jx.grad(square_sum)(x), 2 * x)
        f = sh.auto_axes(lambda x: x + 1, out_sharding=P("x"))
        check_close(f(x), x + 1)
        g = sh.explicit_axes(lambda x: x * 3, in_sharding=P("x"))
        check_close(g(x), 3 * x)
        h = sh.auto_axes(lambda x: x - 1)
        check_close(h(x, out_sharding=P()), x - 1)
        check_close(jx.shard_map(psum, in_specs=P(), out_specs=P())(x), x)
    check_close(sh.reshard(x, sh.NamedSharding(mesh, P("x"))), x)


def test_reshard_and_axes_decorators_keep_values():
    _check_reshard_keeps_values(jaxlite)
    _check_reshard_keeps_values(_real_jax())


def test_shard_map_without_a_mesh_context_is_an_error_like_jax():
    jax = _real_jax()
    for jx in (jaxlite, jax):
        P = jx.sharding.PartitionSpec
        with pytest.raises(ValueError, match="The context mesh cannot be empty"):
            jx.shard_map(lambda v: v, in_specs=P(), out_specs=P())(jx.numpy.ones(2))


def test_devices_of_absent_platforms_raise_like_jax():
    jax = _real_jax()
    for backend in ("gpu", "tpu", "cuda"):
        for jx in (jaxlite, jax):
            with pytest.raises(RuntimeError):
                jx.devices(backend)
    with pytest.raises(RuntimeError) as ours:
        jaxlite.devices("gpu")
    with pytest.raises(RuntimeError) as theirs:
        jax.devices("gpu")
    assert str(ours.value) == str(theirs.value)


def test_mesh_and_multihost_utils_like_jax():
    _real_jax()
    from jax.experimental import mesh_utils as real_mesh_utils
    from jax.experimental import multihost_utils as real_mh

    from jaxlite.experimental import mesh_utils, multihost_utils

    for shape in ((1,), (1, 1)):
        ours = mesh_utils.create_device_mesh(shape)
        theirs = real_mesh_utils.create_device_mesh(shape)
        assert ours.shape == theirs.shape and repr(ours) == repr(theirs)
    hybrid = mesh_utils.create_hybrid_device_mesh((1,), (1,), process_is_granule=True)
    assert repr(hybrid) == repr(
        real_mesh_utils.create_hybrid_device_mesh((1,), (1,), process_is_granule=True)
    )
    for mod in (mesh_utils, real_mesh_utils):
        with pytest.raises(ValueError, match="does not have attribute slice_index"):
            mod.create_hybrid_device_mesh((1,), (1,))
    with pytest.raises(ValueError, match="must equal the product of mesh_shape"):
        mesh_utils.create_device_mesh((2,))
    tree = {"a": np.arange(3.0, dtype=np.float32), "b": 1.0, "c": np.int32(4)}
    for name, kwargs in (
        ("broadcast_one_to_all", {}),
        ("process_allgather", {}),
        ("process_allgather", {"tiled": True}),
    ):
        ours = getattr(multihost_utils, name)(tree, **kwargs)
        theirs = getattr(real_mh, name)(tree, **kwargs)
        assert repr(ours) == repr(theirs), name
    assert multihost_utils.sync_global_devices("step") is None
    assert multihost_utils.assert_equal(tree) is None
