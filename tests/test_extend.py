"""JAX's extension API with JAX's calling conventions (issue 17, item 2).

Primitives defined the way libraries define them (`jax.extend.core.Primitive` with
`def_impl` / `def_abstract_eval`, rules stored in `ad.primitive_jvps`,
`ad.primitive_transposes`, `batching.primitive_batchers`, a lowering given by
`mlir.register_lowering(prim, mlir.lower_fun(...))`) must run like built-in ones under
jit, grad, vmap, scan and the native backend; and the functions libraries call with
JAX's conventions (`linear_util`, `api_util.flatten_fun`, `partial_eval.
trace_to_jaxpr_nounits`, the `jax.core` queries) must answer as JAX's do. The same
program is run with real JAX's `jax.extend` where it is installed.
"""

import importlib
import subprocess
import sys
import types

import numpy as np
import pytest

import jaxlite
import jaxlite.extend
from jaxlite import api_util, lax
from jaxlite import core as jl_core
from jaxlite.config import override
from jaxlite.extend import linear_util as lu
from jaxlite.interpreters import ad, batching, mlir
from jaxlite.interpreters import partial_eval as pe
from testing import check_close, check_grads


def _modules(jax, jex, ad, batching, mlir, pe, api_util):
    return types.SimpleNamespace(
        jax=jax, jnp=jax.numpy, jex=jex, ad=ad, batching=batching, mlir=mlir,
        pe=pe, api_util=api_util, lu=jex.linear_util,
    )  # fmt: skip


LITE = _modules(jaxlite, jaxlite.extend, ad, batching, mlir, pe, api_util)


def _libraries():
    """jaxlite's modules, and real JAX's where it is installed."""
    try:
        return [LITE, _real_jax()]
    except pytest.skip.Exception:
        return [LITE]


def _real_jax():
    jax = pytest.importorskip("jax")
    names = [
        "extend",
        "extend.linear_util",
        "api_util",
        "interpreters.ad",
        "interpreters.batching",
        "interpreters.mlir",
        "interpreters.partial_eval",
    ]
    mods = {name: importlib.import_module(f"jax.{name}") for name in names}
    return _modules(
        jax, mods["extend"], mods["interpreters.ad"], mods["interpreters.batching"],
        mods["interpreters.mlir"], mods["interpreters.partial_eval"], mods["api_util"],
    )  # fmt: skip


# ----------------------------------------------------------------------------------------
# One set of primitives, defined through the extension API of either library


def _define(m):
    """The test primitives, defined through `m` (jaxlite's or JAX's modules)."""
    jax, jnp, ad, batching, mlir = m.jax, m.jnp, m.ad, m.batching, m.mlir
    Primitive, ShapedArray = m.jex.core.Primitive, jax.core.ShapedArray
    seen = []  # the types an impl received
    calls = {"cube_impl": 0, "cube_lowering": 0, "tag": 0}

    # msin(x, y) = x * sin(y): linear in x. Rules: impl, abstract eval, JVP,
    # transpose (in x), batching, and a lowering written as a function.
    msin_p = Primitive("msin")

    def msin(x, y):
        return msin_p.bind(x, y)

    def msin_impl(x, y):
        seen.append(type(x))
        return x * jnp.sin(y)

    def msin_abstract(x, y):
        return ShapedArray(np.broadcast_shapes(x.shape, y.shape), x.dtype)

    def msin_jvp(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        out = msin(x, y)
        terms = []
        if type(tx) is not ad.Zero:
            terms.append(msin(tx, y))
        if type(ty) is not ad.Zero:
            terms.append(x * jnp.cos(y) * ty)
        return out, terms[0] if len(terms) == 1 else terms[0] + terms[1]

    def msin_transpose(ct, x, y):
        assert ad.is_undefined_primal(x) and not ad.is_undefined_primal(y)
        return [None if type(ct) is ad.Zero else msin(ct, y), None]

    def msin_batch(args, dims):
        size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
        x, y = (batching.bdim_at_front(a, d, size) for a, d in zip(args, dims))
        return msin(x, y), 0

    msin_p.def_impl(msin_impl)
    msin_p.def_abstract_eval(msin_abstract)
    ad.primitive_jvps[msin_p] = msin_jvp
    ad.primitive_transposes[msin_p] = msin_transpose
    batching.primitive_batchers[msin_p] = msin_batch
    mlir.register_lowering(
        msin_p, mlir.lower_fun(lambda x, y: x * jnp.sin(y), multiple_results=False)
    )

    # sincos(x) = (sin x, cos x): several results.
    sincos_p = Primitive("sincos")
    sincos_p.multiple_results = True

    def sincos_jvp(primals, tangents):
        ((x,), (t,)) = primals, tangents
        s, c = sincos_p.bind(x)
        return (s, c), (c * t, -s * t)

    sincos_p.def_impl(lambda x: (jnp.sin(x), jnp.cos(x)))
    sincos_p.def_abstract_eval(lambda x: (ShapedArray(x.shape, x.dtype),) * 2)
    ad.primitive_jvps[sincos_p] = sincos_jvp
    batching.primitive_batchers[sincos_p] = lambda a, d: (
        sincos_p.bind(*a),
        (d[0], d[0]),
    )
    mlir.register_lowering(
        sincos_p,
        mlir.lower_fun(lambda x: (jnp.sin(x), jnp.cos(x)), multiple_results=True),
    )

    # cube(x) = x ** 3, equinox's pattern: the lowering is the impl, given as a
    # function (counted, to tell which one runs).
    cube_p = Primitive("cube")

    def cube_impl(x):
        calls["cube_impl"] += 1
        return x * x * x

    def cube_lowering(x):
        calls["cube_lowering"] += 1
        return x * x * x

    cube_p.def_impl(cube_impl)
    cube_p.def_abstract_eval(lambda x: x)
    ad.primitive_jvps[cube_p] = lambda p, t: (cube_p.bind(p[0]), 3 * p[0] ** 2 * t[0])
    batching.primitive_batchers[cube_p] = lambda a, d: (cube_p.bind(a[0]), d[0])
    mlir.register_lowering(
        cube_p, mlir.lower_fun(cube_lowering, multiple_results=False)
    )

    # tag(x) = x with an effect: abstract evaluation says so.
    class TagEffect(m.jex.core.Effect):
        pass

    tag_effect = TagEffect()
    mlir.lowerable_effects.add_type(TagEffect)
    tag_p = Primitive("tag")

    def tag_impl(x):
        calls["tag"] += 1
        return x

    tag_p.def_impl(tag_impl)
    tag_p.def_effectful_abstract_eval(lambda x: (x, {tag_effect}))

    return types.SimpleNamespace(
        msin=msin, msin_p=msin_p, sincos=sincos_p.bind, sincos_p=sincos_p,
        cube=cube_p.bind, cube_p=cube_p, tag=tag_p.bind, tag_p=tag_p,
        tag_effect=tag_effect, seen=seen, calls=calls,
    )  # fmt: skip


P = _define(LITE)

X = np.array([0.3, -1.2, 2.0], np.float32)
Y = np.array([0.5, 1.5, -0.7], np.float32)


def _program(m, p):
    """A program using the primitives under every transformation, as a dict of
    results (run with jaxlite's or JAX's modules `m` and primitives `p`)."""
    jax, jnp = m.jax, m.jnp

    def f(x, y):
        s, c = p.sincos(y)
        return jnp.sum(p.msin(x, y) * c + p.cube(s))

    def scanned(x, y):
        def body(carry, xy):
            a, b = xy
            return carry + p.msin(a, carry * b), p.cube(carry)

        return jax.lax.scan(body, 0.5, (x, y))

    return {
        "eager": f(X, Y),
        "jit": jax.jit(f)(X, Y),
        "grad": jax.grad(f, argnums=(0, 1))(X, Y),
        "jit_grad": jax.jit(jax.grad(f, argnums=(0, 1)))(X, Y),
        "vmap": jax.vmap(f, in_axes=(0, None))(np.stack([X, 2 * X]), Y),
        "vmap_grad": jax.vmap(jax.grad(f), in_axes=(None, 0))(X, np.stack([Y, -Y])),
        "jacfwd": jax.jacfwd(lambda y: p.sincos(y)[1] * p.msin(X, y))(Y),
        "scan": scanned(X, Y),
        "grad_scan": jax.grad(lambda x, y: jnp.sum(scanned(x, y)[1]))(X, Y),
        "vmap_scan": jax.vmap(scanned, in_axes=(None, 0))(X, np.stack([Y, Y / 2])),
    }


# ----------------------------------------------------------------------------------------
# The primitives under the transformations


def test_impl_receives_arrays_and_computes_eagerly():
    P.seen.clear()
    out = P.msin(X, Y)
    assert P.seen == [jaxlite.Array]
    assert type(out) is jaxlite.Array and out.dtype == np.float32
    check_close(out, X * np.sin(Y))
    s, c = P.sincos(Y)
    check_close(s, np.sin(Y))
    check_close(c, np.cos(Y))
    # JAX's `Primitive.impl` and `abstract_eval` methods
    check_close(P.msin_p.impl(X, Y), X * np.sin(Y))
    aval = jl_core.ShapedArray((3,), np.float32)
    assert P.msin_p.abstract_eval(aval, aval) == (aval, set())
    assert P.sincos_p.abstract_eval(aval)[0] == [aval, aval]


def test_jaxpr_shows_the_primitives():
    text = str(jaxlite.make_jaxpr(lambda x, y: P.msin(x, P.sincos(y)[0]))(X, Y))
    assert "sincos" in text and "msin" in text


def test_derivatives_match_finite_differences():
    check_grads(P.msin, (X, Y), order=2, modes=("fwd", "rev"))
    check_grads(lambda y: P.sincos(y)[1], (Y,), order=2, modes=("fwd", "rev"))
    check_grads(P.cube, (X,), order=1, modes=("fwd", "rev"))
    gx, gy = jaxlite.grad(lambda x, y: P.msin(x, y).sum(), argnums=(0, 1))(X, Y)
    check_close(gx, np.sin(Y))
    check_close(gy, X * np.cos(Y))


def test_transpose_rule_serves_reverse_mode():
    # `msin` is linear in x: its linear jaxpr holds `msin`, which is transposed.
    y, pullback = jaxlite.vjp(lambda x: P.msin(x, Y), X)
    (ct,) = pullback(np.ones(3, np.float32))
    check_close(ct, np.sin(Y))
    # the pullback is `msin` transposed: `msin` of the cotangent
    pullback_jaxpr = jaxlite.make_jaxpr(lambda ct: pullback(ct))(X)
    assert [e.primitive for e in pullback_jaxpr.eqns] == [P.msin_p]
    transposed = jaxlite.linear_transpose(lambda x: P.msin(x, Y), X)
    check_close(transposed(X)[0], X * np.sin(Y))


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0), (1, 0)])
def test_vmap_matches_a_loop(in_axes):
    xs = np.stack([X, X + 1, X * 2])
    ys = np.stack([Y, -Y, Y / 3])
    args = (xs if in_axes[0] == 0 else xs.T if in_axes[0] == 1 else X,)
    args += (ys if in_axes[1] == 0 else Y,)
    out = jaxlite.vmap(P.msin, in_axes=in_axes)(*args)
    for i in range(3):
        xi = X if in_axes[0] is None else xs[i]
        yi = Y if in_axes[1] is None else ys[i]
        check_close(out[i], xi * np.sin(yi))
    s, c = jaxlite.vmap(P.sincos)(ys)
    check_close(c, np.cos(ys))


def test_scan_jit_and_grad_inside():
    def loop(x):
        def body(c, a):
            return c + P.msin(a, c), P.cube(c)

        return jaxlite.lax.scan(body, 0.25, x)

    carry, ys = jaxlite.jit(loop)(X)
    c, expect = 0.25, []
    for a in X.astype(np.float64):
        expect.append(c**3)
        c = c + a * np.sin(c)
    check_close(carry, c, rtol=1e-5)
    check_close(ys, np.array(expect), rtol=1e-5)
    check_grads(lambda x: loop(x)[0], (X,), order=1, modes=("fwd", "rev"))


def test_lower_fun_is_what_jit_compiles():
    P.calls.update(cube_impl=0, cube_lowering=0)
    f = jaxlite.jit(lambda x: P.cube(x) + 1.0)
    x = np.arange(4.0, dtype=np.float32)
    check_close(f(x), x**3 + 1)
    check_close(f(x + 1), (x + 1) ** 3 + 1)
    # the lowering function was traced once, for the one signature; the impl never ran
    assert P.calls == {"cube_impl": 0, "cube_lowering": 1, "tag": P.calls["tag"]}
    P.cube(x)  # eagerly, the impl
    assert P.calls["cube_impl"] == 1


def test_effectful_primitive_is_kept_and_runs():
    jaxpr = jaxlite.make_jaxpr(lambda x: (P.tag(x), x + 1)[1])(X)
    assert jaxpr.effects == {P.tag_effect}
    assert "tag" in str(jaxpr)
    P.calls["tag"] = 0
    f = jaxlite.jit(lambda x: (P.tag(x), x * 2)[1])  # the tagged value is unused
    check_close(f(X), X * 2)
    check_close(f(X), X * 2)
    # not removed as dead code, and run (through its impl) at every call
    assert P.calls["tag"] == 2


@pytest.mark.parametrize("backend", ["numpy", "native"])
def test_backends_compile_the_primitives(backend):
    if backend == "native":
        pytest.importorskip("llvmlite")
    with override("jaxlite_backend", backend):
        f = jaxlite.jit(lambda x, y: P.msin(x, y) + P.sincos(y)[1])
        check_close(f(X, Y), X * np.sin(Y) + np.cos(Y))
        text = f.lower(X, Y).as_text()
        if backend == "native":  # the lowering functions compile natively too
            assert text.startswith("; ModuleID")
        else:  # the NumPy source calls the compiled lowering functions
            assert "_msin" in text and "_sincos" in text
        # a primitive with an impl and no lowering: the NumPy backend calls the impl
        # (the native backend leaves the whole function to it)
        g = jaxlite.jit(lambda x: P.tag(x) * 3.0)
        check_close(g(X), X * 3)
        assert "def " in g.lower(X).as_text()


def test_matches_real_jax():
    m = _real_jax()
    theirs = _program(m, _define(m))
    ours = _program(LITE, P)
    assert theirs.keys() == ours.keys()
    for key in ours:
        check_close(ours[key], theirs[key], rtol=2e-5, atol=1e-6, err_msg=key)


# ----------------------------------------------------------------------------------------
# The rule tables in JAX's convention


def test_reading_builtin_rules_in_jax_convention():
    m = _real_jax()
    primals, tangents = (np.float32(0.7), X), (np.float32(2.0), Y)
    ours = ad.primitive_jvps[lax.mul_p](primals, tangents)
    theirs = m.ad.primitive_jvps[m.jax.lax.mul_p](primals, tangents)
    check_close(ours, theirs)
    out, dim = batching.primitive_batchers[lax.mul_p]([X[None], Y[None]], [1, 1])
    check_close(out, (X * Y)[None])
    assert dim == 1
    assert lax.mul_p in ad.primitive_jvps and len(ad.primitive_jvps) == len(
        ad.jvp_rules
    )
    # a rule stored through the view reads back as given
    assert ad.primitive_transposes[P.msin_p].__name__ == "msin_transpose"
    assert ad.get_primitive_transpose(P.msin_p).__name__ == "msin_transpose"


def test_transpose_may_return_the_zero_class():
    # equinox's `nondifferentiable_backward`: `Zero` itself means "no cotangent"
    nd_p = jaxlite.extend.core.Primitive("nondiff_backward")
    nd_p.def_impl(lambda x: x)
    nd_p.def_abstract_eval(lambda x: x)
    ad.primitive_jvps[nd_p] = lambda p, t: (nd_p.bind(p[0]), nd_p.bind(t[0]))
    ad.primitive_transposes[nd_p] = lambda ct, x: ad.Zero
    g = jaxlite.grad(lambda x: (nd_p.bind(x) + x).sum())(X)
    check_close(g, np.ones(3))


def test_axis_batchers_see_the_axis():
    """equinox's vprim: `axis_primitive_batchers[p](axis_size, axis_name, trace_type,
    vals, dims)`; and JAX's `fancy_primitive_batchers[p](axis_data, vals, dims)`."""
    seen = []
    for table in (batching.axis_primitive_batchers, batching.fancy_primitive_batchers):
        p = jaxlite.extend.core.Primitive(f"double_{len(seen)}")
        p.def_impl(lambda x: 2 * x)
        p.def_abstract_eval(lambda x: x)
        if table is batching.axis_primitive_batchers:

            def rule(size, name, trace_type, vals, dims, p=p):
                seen.append((size, name, trace_type))
                return p.bind(vals[0]), dims[0]
        else:

            def rule(axis_data, vals, dims, p=p):
                seen.append((axis_data.size, axis_data.name))
                return p.bind(vals[0]), dims[0]

        table[p] = rule
        out = jaxlite.vmap(p.bind, axis_name="i")(np.ones((5, 2), np.float32))
        check_close(out, 2 * np.ones((5, 2)))
    assert seen == [(5, "i", None), (5, "i")]


def test_batching_batch_vectorises_a_wrapped_fun():
    fun = lu.wrap_init(lambda x, y: [x * y, y])
    axis = batching.AxisData("b", 3)
    batched = batching.batch(fun, axis, [0, None], [0, 0])
    out = batched.call_wrapped(np.ones((3, 2), np.float32), np.float32(2.0))
    check_close(out[0], 2 * np.ones((3, 2)))
    check_close(out[1], np.full((3,), 2.0))


# ----------------------------------------------------------------------------------------
# Errors


def test_primitive_without_impl():
    for mods in _libraries():
        p = mods.jex.core.Primitive("noimpl")
        p.def_abstract_eval(lambda x: x)
        with pytest.raises(NotImplementedError, match="Evaluation rule for 'noimpl'"):
            p.bind(np.float32(1.0))
    p = jaxlite.extend.core.Primitive("noimpl")
    p.def_abstract_eval(lambda x: x)
    with pytest.raises(NotImplementedError, match="Cannot compile primitive 'noimpl'"):
        jaxlite.jit(p.bind)(np.float32(1.0))


def test_mlir_rules_are_recorded_and_the_impl_runs():
    p = jaxlite.extend.core.Primitive("raw_mlir")
    p.def_impl(lambda x: x + 1)
    p.def_abstract_eval(lambda x: x)

    def raw_rule(ctx, x):  # would build MLIR operations: never called
        raise AssertionError("called")

    mlir.register_lowering(p, raw_rule)
    mlir.register_lowering(p, raw_rule, platform="cuda")
    assert mlir.foreign_rules[(p, None)] is raw_rule
    check_close(jaxlite.jit(p.bind)(X), X + 1)
    with pytest.raises(NotImplementedError, match="jaxlite has no MLIR"):
        mlir.lower_fun(lambda x: x)(None, X)


def test_abstract_eval_must_return_avals():
    p = jaxlite.extend.core.Primitive("bad_abstract")
    p.def_impl(lambda x: x)
    p.def_abstract_eval(lambda x: "no")
    with pytest.raises(TypeError, match="not an abstract value"):
        jaxlite.make_jaxpr(p.bind)(X)


def test_impl_must_not_return_tracers():
    outer = []
    p = jaxlite.extend.core.Primitive("leaky")
    p.def_impl(lambda x: outer[0])
    p.def_abstract_eval(lambda x: x)

    def f(y):
        outer.append(y)
        return p.bind(np.float32(1.0))

    with pytest.raises(jaxlite.errors.UnexpectedTracerError, match="returned a tracer"):
        jaxlite.grad(f)(np.float32(2.0))


# ----------------------------------------------------------------------------------------
# linear_util and api_util in JAX's conventions


def _lu_program(m):
    """WrappedFun transformations as libraries write them."""
    lu, out = m.lu, {}

    def f(x, y, scale):
        return (x + y) * scale

    fun = lu.wrap_init(f, {"scale": 3.0})
    out["wrap_init"] = fun.call_wrapped(1.0, 2.0)

    @lu.transformation2
    def add_one(f, *args):
        return f(*args) + 1.0

    out["transformation2"] = add_one(fun).call_wrapped(1.0, 2.0)

    @lu.transformation_with_aux2
    def with_count(f, store, *args):
        store.store(len(args))
        return f(*args)

    counted, count = with_count(fun)
    out["transformation_with_aux2"] = (counted.call_wrapped(1.0, 2.0), count())

    @lu.transformation
    def double_args(*args):
        ans = yield [2 * a for a in args], {}
        yield ans - 1.0

    out["transformation"] = double_args(fun).call_wrapped(1.0, 2.0)

    @lu.transformation_with_aux
    def square(*args):
        ans = yield args, {}
        yield ans * ans, "aux"

    squared, aux = square(fun)
    out["transformation_with_aux"] = (squared.call_wrapped(1.0, 2.0), aux())
    out["hash"] = lu.wrap_init(f) == lu.wrap_init(f) and hash(lu.wrap_init(f)) == hash(
        lu.wrap_init(f)
    )
    return out


@pytest.mark.filterwarnings("ignore:linear_util.wrap_init is missing a DebugInfo")
def test_linear_util_matches_real_jax():
    m = _real_jax()
    assert _lu_program(LITE) == _lu_program(m)


def test_stores():
    store = lu.Store()
    assert not store
    with pytest.raises(lu.StoreException, match="Store empty"):
        store.val
    store.store(1)
    assert store and store.val == 1
    with pytest.raises(lu.StoreException, match="Store occupied"):
        store.store(2)
    eq = lu.EqualStore()
    eq.store(3)
    eq.store(3)
    empty = lu.Store()
    assert lu.merge_linear_aux(lambda: 1, lambda: empty.val) == (True, 1)
    assert lu.merge_linear_aux(lambda: empty.val, lambda: 2) == (False, 2)

    calls = []

    @lu.cache
    def traced(fun, n):
        calls.append(n)
        return fun.call_wrapped(n)

    g = lambda n: n * 2  # noqa: E731
    assert traced(lu.wrap_init(g), 4) == traced(lu.wrap_init(g), 4) == 8
    assert calls == [4]


def _flatten_program(m):
    """flax's `partial_eval_by_shape` / `lazy_init` and numpyro's `eval_provenance`:
    flatten a WrappedFun, then call it or partially evaluate it."""
    jax, jnp, lu, api_util, pe = m.jax, m.jnp, m.lu, m.api_util, m.pe
    out = {}

    def f(a, b, *, scale):
        return {"sum": a["x"] + b * scale, "twice": jnp.sin(a["x"]) * 2}

    args, kwargs = ({"x": np.float32(1.5)}, np.float32(2.0)), {"scale": 3.0}
    leaves, in_tree = jax.tree_util.tree_flatten((args, kwargs))
    info = api_util.debug_info("test", f, args, kwargs)
    flat, out_tree = api_util.flatten_fun(lu.wrap_init(f, debug_info=info), in_tree)
    assert isinstance(flat, lu.WrappedFun)
    outs = flat.call_wrapped(*leaves)
    out["flatten_fun"] = jax.tree_util.tree_unflatten(out_tree(), outs)

    # lazy_init: known `a`, unknown `b` (and scale a known leaf)
    flat, out_tree = api_util.flatten_fun(lu.wrap_init(f, debug_info=info), in_tree)
    pvals = [
        pe.PartialVal.known(leaves[0]),
        pe.PartialVal.unknown(jax.core.ShapedArray((), np.float32)),
        pe.PartialVal.known(leaves[2]),
    ]
    jaxpr, out_pvals, consts = pe.trace_to_jaxpr_nounits(flat, pvals)
    out["known"] = [pv.is_known() for pv in out_pvals]
    out["known_values"] = [pv.get_known() for pv in out_pvals if pv.is_known()]
    out["unknown_avals"] = [
        pv.get_aval().shape for pv in out_pvals if not pv.is_known()
    ]
    closed = jax.extend.core.ClosedJaxpr(jaxpr, consts)
    out["staged"] = jax.extend.core.jaxpr_as_fun(closed)(np.float32(4.0))

    # partial_eval_by_shape: every input unknown
    g = lambda x: (x * 2, jnp.ones(3))  # noqa: E731
    leaves, in_tree = jax.tree_util.tree_flatten((np.zeros(2, np.float32),))
    info = api_util.debug_info("by shape", g, (in_tree,), {})
    flat, out_tree = api_util.flatten_fun_nokwargs(
        lu.wrap_init(g, debug_info=info), in_tree
    )
    in_pvals = [pe.PartialVal.unknown(jax.core.ShapedArray((2,), np.float32))]
    _, out_pvals, _ = pe.trace_to_jaxpr_nounits(flat, in_pvals)
    out["by_shape"] = [pv.shape if pv is not None else const for pv, const in out_pvals]
    return out


def test_flatten_and_partial_eval_match_real_jax():
    m = _real_jax()
    ours, theirs = _flatten_program(LITE), _flatten_program(m)
    assert ours.keys() == theirs.keys()
    for key in ours:
        check_close(ours[key], theirs[key], err_msg=key)


def test_partial_eval_details():
    f = lu.wrap_init(lambda x, y: [x * 2.0, y + x, y * y])
    pvals = [pe.PartialVal.known(np.float32(3.0)), pe.PartialVal.unknown(
        jl_core.ShapedArray((), np.float32))]  # fmt: skip
    jaxpr, out_pvals, consts = pe.trace_to_jaxpr_nounits(
        f, pvals, instantiate=[True, False, False]
    )
    assert [pv.is_known() for pv in out_pvals] == [False, False, False]
    outs = jl_core.eval_jaxpr(jaxpr, consts, np.float32(5.0))
    check_close(outs, [6.0, 8.0, 25.0])
    assert len(jaxpr.invars) == 1  # the unknown input only
    with pytest.raises(ValueError, match="PartialVal"):
        pe.PartialVal((None, None))

    jaxpr, out_avals, consts = pe.trace_to_jaxpr_dynamic(
        lu.wrap_init(lambda a: [a + np.arange(2.0, dtype=np.float32)]),
        [jl_core.ShapedArray((2,), np.float32)],
    )
    assert out_avals == [jl_core.ShapedArray((2,), np.float32)]
    assert len(jaxpr.constvars) == len(consts) == 1
    lifted = pe.convert_constvars_jaxpr(jaxpr)
    assert not lifted.constvars and len(lifted.invars) == 2
    (out,) = jl_core.eval_jaxpr(lifted, [], *consts, np.ones(2, np.float32))
    check_close(out, np.array([1.0, 2.0]))


def test_plain_callables_keep_jaxlites_convention():
    flat, out_tree = api_util.flatten_fun_nokwargs(lambda a, b: (a, [b]), _tree(2))
    assert not isinstance(flat, lu.WrappedFun)
    assert flat(1, 2) == [1, 2] and out_tree().num_leaves == 2


def _tree(n):
    return jaxlite.tree_util.tree_structure((0,) * n)


def test_debug_info_names_the_arguments():
    info = api_util.debug_info("jit", lambda a, b: a, ({"k": 1}, 2), {})
    assert info.what == "jit" and info.arg_names == ["a['k']", "b"]
    assert api_util.safe_map(lambda a, b: a + b, [1], [2]) == [3]


# ----------------------------------------------------------------------------------------
# The core's answers: `jax.core` / `jax.extend.core`


def test_trace_state_queries():
    core = jaxlite.extend.core
    top = core.get_opaque_trace_state(convention="flax")
    assert top == core.get_opaque_trace_state()
    inside = []

    @jaxlite.jit
    def f(x):
        inside.append(core.get_opaque_trace_state(convention="nnx"))
        inside.append(core.find_top_trace((x,)))
        return x

    f(1.0)
    assert inside[0] != top and inside[0] == inside[0]
    assert type(inside[1]).__name__ == "DynamicJaxprTrace"
    assert core.find_top_trace(()) is jl_core.eval_trace
    assert jl_core.get_opaque_trace_state() == top  # jax.core has it too


def test_valid_jaxtype_matches_real_jax():
    m = _real_jax()
    values = [1.0, 3, True, 1j, np.ones(2), np.float32(1), np.array(["a"]),
              np.array([object()]), "s", None, object(), [1.0]]  # fmt: skip
    ours = [jaxlite.extend.core.valid_jaxtype(v) for v in values]
    theirs = [m.jex.core.valid_jaxtype(v) for v in values]
    assert ours == theirs
    assert jaxlite.extend.core.valid_jaxtype(jaxlite.numpy.ones(2))


def test_avals_and_jaxpr_helpers_match_real_jax():
    for mods in _libraries():
        core, SA = mods.jex.core, mods.jax.core.ShapedArray
        aval = SA((4, 3), np.float32)
        assert core.mapped_aval(4, 0, aval).shape == (3,)
        assert core.mapped_aval(3, 1, aval).shape == (4,)
        assert core.unmapped_aval(5, 1, aval).shape == (4, 5, 3)
        assert core.mapped_aval(4, None, aval) is aval
        float0 = mods.jax.dtypes.float0
        assert core.primal_dtype_to_tangent_dtype(np.dtype("int32")) == float0
        assert isinstance(aval, mods.jax.core.AbstractValue)
    with pytest.raises(ValueError, match="not the mapped size"):
        jaxlite.extend.core.mapped_aval(2, 0, jl_core.ShapedArray((4,), np.float32))


def test_jaxpr_parts():
    core = jaxlite.extend.core
    closed = jaxlite.make_jaxpr(lambda x: jaxlite.jit(jaxlite.numpy.sin)(x) + x)(X)
    assert closed.literals is closed.consts
    (sub,) = core.subjaxprs(closed.jaxpr)
    assert sub is closed.eqns[0].params["jaxpr"].jaxpr
    assert list(core.jaxprs_in_params(closed.eqns[0].params)) == [sub]
    assert isinstance(closed.eqns[1].invars[0], jl_core.Atom)
    # an equation built by hand, JAX's argument order
    aval = jl_core.ShapedArray((3,), np.float32)
    a, b = core.Var(aval), core.Var(aval)
    eqn = core.new_jaxpr_eqn([a], [b], lax.sin_p, {}, set())
    jaxpr = core.Jaxpr([], [a], [b], [eqn])
    core.check_jaxpr(jaxpr)
    check_close(jl_core.eval_jaxpr(jaxpr, [], X)[0], np.sin(X))


def test_call_primitives():
    prims = jaxlite.extend.core.primitives
    assert prims.jit_p.name == "jit" and prims.closed_call_p.call_primitive
    closed = jaxlite.make_jaxpr(lambda x, y: jaxlite.numpy.sin(x) * y)(X, Y)

    def f(x, y):
        return prims.closed_call_p.bind(x, y, call_jaxpr=closed)[0]

    def g(x, y):
        return prims.call_p.bind(x, y, call_jaxpr=closed.jaxpr)[0]

    for h in (f, g):
        check_close(h(X, Y), np.sin(X) * Y)
        check_close(jaxlite.jit(h)(X, Y), np.sin(X) * Y)
        check_grads(h, (X, Y), order=1, modes=("fwd", "rev"))
        check_close(jaxlite.vmap(h, (0, None))(np.stack([X, Y]), Y), np.sin([X, Y]) * Y)
    assert "closed_call" in str(jaxlite.make_jaxpr(jaxlite.vmap(f))(X, Y))


# ----------------------------------------------------------------------------------------
# Through JAX's module names (`jaxlite.install_as_jax()`)


def test_extension_api_under_the_jax_names():
    program = """
import jaxlite
jaxlite.install_as_jax()
import jax, jax.numpy as jnp
import jax.extend.core, jax.core
import jax.interpreters.ad as ad
import jax.interpreters.batching as batching
import jax.interpreters.mlir as mlir
from jax.extend import linear_util as lu
from jax.interpreters import partial_eval as pe
from jax.extend.core.primitives import call_p, closed_call_p, jit_p

p = jax.extend.core.Primitive("unvmap_any")
p.def_impl(lambda x: jnp.any(x))
p.def_abstract_eval(lambda x: jax.core.ShapedArray(shape=(), dtype=jnp.bool_.dtype))
batching.primitive_batchers[p] = lambda x, axes: (p.bind(x[0]), None)
mlir.register_lowering(p, mlir.lower_fun(lambda x: jnp.any(x), multiple_results=False))
print(jax.vmap(lambda a: p.bind(a > 1))(jnp.arange(3.0)).tolist() == [True] * 3,
      jax.jit(lambda a: p.bind(a > 5))(jnp.arange(3.0)).item(),
      isinstance(jax.core.ShapedArray((), "f4"), jax.core.AbstractValue),
      jax.core.Tracer is jaxlite.core.Tracer)
"""
    out = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    # vmap broadcasts the unbatched result, as JAX does
    assert out.stdout.split() == ["True", "False", "True", "True"]
