"""What lineax, optimistix, diffrax, equinox and distrax (issue 17) found different in
jaxlite's shared mechanisms, each checked against real JAX in plain code:

- a `ShapeDtypeStruct` a traced function returns or closes over is an abstract
  constant (lineax's `eval_shape(lambda: struct)`), which only running fails on;
- `ad.Zero` is a pytree without leaves, so a `vmap` inside a rule passes it through;
- rules given in JAX's convention receive tuples (equinox stores `dims` in params);
- a rule run under `linearize` may trace a function closing over the tangents;
- `jax.core.pytype_aval_mappings` and `jax.interpreters.xla.
  canonicalize_dtype_handlers` register a library's own type as a JAX value (TFP);
- `ShapedArray.at_least_vspace` and `Array.unsafe_buffer_pointer`.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import jaxlite


def _real_jax():
    return pytest.importorskip("jax")


def _libs():
    return [jaxlite, _real_jax()]


def _mod(lib, name):
    return importlib.import_module(f"{lib.__name__}.{name}")


# ----------------------------------------------------------------------------------------
# ShapeDtypeStruct as an abstract constant


def _struct_programs(lib):
    lax, jnp = lib.lax, lib.numpy
    s = lib.ShapeDtypeStruct((3,), jnp.float32)
    aux = lib.grad(lambda x: (x * 2, {"s": s}), has_aux=True)(1.0)[1]
    return [
        str(lib.make_jaxpr(lambda: s)()),
        str(lib.make_jaxpr(lambda x: lax.sin(s) * x)(1.0)),
        repr(lib.eval_shape(lambda: s)),
        repr(lib.eval_shape(lambda x: (s, lax.sin(s) * x), 1.0)),
        repr(lib.eval_shape(lambda x: lib.jvp(lambda y: (y, s), (x,), (x,)), 1.0)),
        repr(aux),
        aux["s"] is s,
    ]


def test_shape_dtype_struct_is_an_abstract_constant():
    ours, theirs = (_struct_programs(lib) for lib in _libs())
    assert ours == theirs
    assert ours[0] == "{ lambda a:f32[3]; . let  in (a,) }"


@pytest.mark.parametrize(
    "run",
    [
        lambda lib, s: lib.jit(lambda: s)(),
        lambda lib, s: lib.jit(lambda x: lib.lax.sin(s) + x)(1.0),
        lambda lib, s: lib.lax.sin(s),
    ],
)
def test_shape_dtype_struct_has_no_value_to_compute_with(run):
    for lib in _libs():
        s = lib.ShapeDtypeStruct((3,), lib.numpy.float32)
        with pytest.raises(TypeError):
            run(lib, s)
    s = jaxlite.ShapeDtypeStruct((3,), np.float32)
    with pytest.raises(TypeError, match="does not have a value"):
        run(jaxlite, s)


# ----------------------------------------------------------------------------------------
# Symbolic zeros as pytrees


def test_symbolic_zero_is_a_pytree_without_leaves():
    results = []
    for lib in _libs():
        ad, core, tu = _mod(lib, "interpreters.ad"), lib.core, lib.tree_util
        z = ad.Zero(core.ShapedArray((), lib.dtypes.float0))
        tree = tu.tree_structure(z)
        back = tu.tree_unflatten(tree, [])
        out = lib.vmap(lambda x, z=z: (x * 2, z))(lib.numpy.ones(3))
        results.append(
            (
                tu.tree_leaves(z),
                tree.num_leaves,
                repr(back),
                type(back) is ad.Zero,
                repr(out[1]),
                np.asarray(out[0]).tolist(),
            )
        )
    assert results[0] == results[1]
    assert results[0][3] and results[0][4] == "Zero(float0[])"


# ----------------------------------------------------------------------------------------
# Rules in JAX's convention see tuples


def _convention_types(lib):
    jex_core = _mod(lib, "extend.core")
    ad, batching = _mod(lib, "interpreters.ad"), _mod(lib, "interpreters.batching")
    seen = []
    p = jex_core.Primitive(f"twice_{lib.__name__}")
    p.def_impl(lambda x, y: 2 * x + y)
    p.def_abstract_eval(lambda x, y: x)

    def jvp(primals, tangents):
        seen.append(("jvp", type(primals).__name__, type(tangents).__name__))
        (x, y), (tx, ty) = primals, tangents
        return p.bind(x, y), 2 * tx + ty

    def batch(vals, dims):
        seen.append(("batch", type(vals).__name__, type(dims).__name__))
        x, y = (lib.numpy.moveaxis(v, d, 0) for v, d in zip(vals, dims))
        return p.bind(x, y), 0

    ad.primitive_jvps[p] = jvp
    batching.primitive_batchers[p] = batch
    jnp = lib.numpy
    x = jnp.arange(3.0)
    out = lib.jvp(lambda a: p.bind(a, a), (x,), (jnp.ones(3),))
    vm = lib.vmap(p.bind)(x[:, None], jnp.ones((3, 1)))
    return seen, [np.asarray(o).tolist() for o in (*out, vm)]


def test_jax_convention_rules_receive_tuples():
    ours, theirs = (_convention_types(lib) for lib in _libs())
    assert ours == theirs
    assert ("batch", "tuple", "tuple") in ours[0]


# ----------------------------------------------------------------------------------------
# A rule under linearize traces a function closing over the tangents


def _closing_rule(lib):
    jnp = lib.numpy

    @lib.custom_jvp
    def f(x):
        return jnp.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        s = lib.eval_shape(lambda: t * 2 + x)  # closes over the tangent
        y = lib.jit(lambda: t * jnp.cos(x))()
        return f(x), y + jnp.zeros(s.shape, s.dtype)

    return [
        float(lib.grad(f)(1.0)),
        float(lib.linearize(f, 1.0)[1](2.0)),
        float(lib.grad(lib.jit(f))(0.5)),
        float(lib.grad(lambda x: lib.grad(f)(x))(0.5)),
    ]


def test_rule_under_linearize_may_close_over_tangents():
    ours, theirs = (_closing_rule(lib) for lib in _libs())
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)


# ----------------------------------------------------------------------------------------
# Registering a library's own type as a JAX value


class _Box:
    """An array proxy of the kind TFP registers (its `Variable`)."""

    def __init__(self, value):
        self.value = np.asarray(value)

    shape = property(lambda self: self.value.shape)
    dtype = property(lambda self: self.value.dtype)


def _registered_type_programs(lib):
    xla, core = _mod(lib, "interpreters.xla"), lib.core
    handlers, mappings = xla.canonicalize_dtype_handlers, core.pytype_aval_mappings
    handlers[_Box] = lambda b: handlers[np.ndarray](b.value)
    mappings[_Box] = lambda b: mappings[np.ndarray](b.value)
    try:
        b = _Box(np.arange(3.0))  # float64: canonicalised to float32
        lax = lib.lax
        return [
            str(lib.typeof(b)),
            str(mappings[float](1.0)),
            str(handlers[np.ndarray](np.arange(2.0)).dtype),
            str(lib.make_jaxpr(lambda x: lax.add(b, x))(1.0)),
            np.asarray(lib.jit(lambda x: lax.add(b, x))(1.0)).tolist(),
            np.asarray(lax.mul(b, 2.0)).tolist(),
            np.asarray(lib.jit(lambda x: x * 2)(b)).tolist(),
            repr(lib.eval_shape(lambda x: x * 2, b)),
        ]
    finally:
        if lib is jaxlite:  # JAX's handler table refuses deletion
            del handlers[_Box], mappings[_Box]


@pytest.mark.filterwarnings("ignore:jax.core.pytype_aval_mappings is deprecated")
def test_registered_python_type_is_a_jax_value():
    ours, theirs = (_registered_type_programs(lib) for lib in _libs())
    assert ours == theirs


def test_interpreters_xla_is_an_attribute_without_import():
    import jaxlite.interpreters as interpreters

    assert interpreters.xla.canonicalize_dtype_handlers is (
        jaxlite.core.canonicalize_value_handlers
    )
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        interpreters.nope  # noqa: B018


# ----------------------------------------------------------------------------------------
# Small API names


def test_at_least_vspace_is_the_tangent_aval():
    results = []
    for lib in _libs():
        jnp = lib.numpy
        results.append(
            [
                str(lib.core.ShapedArray((2,), dt).at_least_vspace())
                for dt in (jnp.int32, jnp.float32, jnp.bool_)
            ]
        )
    assert results[0] == results[1] == ["float0[2]", "float32[2]", "float0[2]"]


def test_unsafe_buffer_pointer():
    for lib in _libs():
        jnp = lib.numpy
        x, y, s = jnp.arange(4.0), jnp.arange(4.0), jnp.array(1.0)
        p = x.unsafe_buffer_pointer()
        assert isinstance(p, int)
        assert p == x.unsafe_buffer_pointer() != y.unsafe_buffer_pointer()
        assert s.unsafe_buffer_pointer() == s.unsafe_buffer_pointer()
        assert float(s) == 1.0
        x.delete()
        with pytest.raises(RuntimeError):
            x.unsafe_buffer_pointer()


def test_named_sharding_update():
    results = []
    for lib in _libs():
        sh = _mod(lib, "sharding")
        s = sh.NamedSharding(lib.make_mesh((1,), ("x",)), sh.PartitionSpec())
        updated = [
            s.update(spec=("x",)),
            s.update(spec=sh.PartitionSpec(None, "x")),
            s.update(),
            s.update(memory_kind="device"),
        ]
        results.append(
            [(repr(u.spec), u.mesh.axis_names, u.memory_kind, u == s) for u in updated]
            + [repr(lib.typeof(lib.numpy.ones(2)).sharding.update(spec=(None,)))]
        )
    assert results[0] == results[1]


# ----------------------------------------------------------------------------------------
# custom_vjp's bwd rule inside a jitted function is traced once, as in JAX


def _bwd_calls(lib):
    jnp = lib.numpy
    calls = []

    @lib.custom_vjp
    def f(x, y):
        return x * y

    def bwd(res, g):
        calls.append(1)
        x, y = res
        return (g * y * 2, None)

    f.defvjp(lambda x, y: (x * y, (x, y)), bwd)
    out = []
    g = lib.jit(f)
    for fun in (lib.grad(g), lib.grad(f), lib.jit(lib.grad(f))):
        out += [float(fun(1.5, 2.0)), float(fun(1.5, 2.0)), len(calls)]
    out += [lib.vmap(lib.grad(g))(jnp.arange(3.0), jnp.ones(3)).tolist(), len(calls)]

    @lib.custom_vjp
    def k(x):
        return x, x * 2

    def k_bwd(_, g):
        calls.append(2)
        return (g[0] + 3 * g[1],)

    k.defvjp(lambda x: (k(x), None), k_bwd)
    kj = lib.jit(k)
    for i in (0, 1, 0, 1):  # which output has a (non-symbolic-zero) cotangent
        out.append(float(lib.grad(lambda x, i=i: kj(x)[i])(1.0)))
    return out + [len(calls)]


def test_custom_vjp_bwd_is_traced_once_per_jitted_function():
    ours, theirs = (_bwd_calls(lib) for lib in _libs())
    assert ours == theirs
    assert ours[2] == 1  # grad(jit(f)) twice: one trace of bwd


# ----------------------------------------------------------------------------------------
# float0 tangents a rule materialises count as zero (JAX's maybe_jvp_tracer)


def _float0_tangents(lib):
    jnp, jex_core = lib.numpy, _mod(lib, "extend.core")
    ad = _mod(lib, "interpreters.ad")
    no_jvp = jex_core.Primitive(f"no_jvp_{lib.__name__}")  # no JVP rule
    no_jvp.def_impl(lambda x: x * 2)
    no_jvp.def_abstract_eval(lambda a: a)
    to_int = jex_core.Primitive(f"to_int_{lib.__name__}")  # rule gives float0
    to_int.def_impl(lambda x: (x * 3).astype(np.int32))
    to_int.def_abstract_eval(lambda a: lib.core.ShapedArray(a.shape, np.int32))

    def to_int_jvp(primals, tangents):
        out = to_int.bind(*primals)
        return out, np.zeros(out.shape, lib.dtypes.float0)

    ad.primitive_jvps[to_int] = to_int_jvp

    @lib.custom_jvp
    def rounded(x):
        return (x * 3).astype(jnp.int32)

    @rounded.defjvp
    def rounded_jvp(primals, tangents):
        out = rounded(primals[0])
        return out, np.zeros(out.shape, lib.dtypes.float0)

    x = jnp.arange(3.0)
    results = []
    for make_int in (rounded, to_int.bind):

        def f(x, make_int=make_int):
            return no_jvp.bind(make_int(x))

        p, t = lib.jvp(f, (x,), (jnp.ones(3),))
        g = lib.grad(lambda x, f=f: (f(x) * x).sum())(x)
        results.append((np.asarray(p).tolist(), str(t.dtype), np.asarray(g).tolist()))
    return results


def test_float0_tangents_from_rules_are_zeros():
    ours, theirs = (_float0_tangents(lib) for lib in _libs())
    assert ours == theirs
    assert ours[0][1] == "[('float0', 'V')]"


def _bwd_depends_on_perturbed(lib):
    class Flags:
        """Static flags carried in a residual's tree structure (equinox's Static)."""

        def __init__(self, flags):
            self.flags = flags

    lib.tree_util.register_pytree_node(
        Flags, lambda s: ((), s.flags), lambda flags, _: Flags(flags)
    )
    calls = []

    @lib.custom_vjp
    def f(x, y):
        return x * y

    def fwd(x, y):
        flags = Flags((x.perturbed, y.perturbed))
        return x.value * y.value, (x.value, y.value, flags)

    def bwd(res, g):
        x, y, flags = res
        calls.append(flags.flags)
        return (g * y if flags.flags[0] else None, g * x if flags.flags[1] else None)

    f.defvjp(fwd, bwd, symbolic_zeros=True)
    g = lib.jit(f)
    out = []
    for argnums in (0, 1, (0, 1), 0, 1):
        out.append(np.asarray(lib.grad(g, argnums)(2.0, 3.0)).tolist())
    return out, calls


def test_staged_bwd_is_traced_per_perturbation_pattern():
    ours, theirs = (_bwd_depends_on_perturbed(lib) for lib in _libs())
    assert ours == theirs
    assert ours[0] == [3.0, 2.0, [3.0, 2.0], 3.0, 2.0]
