"""Mutable array references (`jax.Ref`, `jax.new_ref`, `jax.freeze`, `jax.ref.*`)
against real JAX 0.10.2: reading and writing eagerly and under `jit` (arguments,
closures, references made inside), in the bodies of `scan`, `fori_loop`,
`while_loop` and `cond`, under `grad`, `jvp` and `vmap`, JAX's errors, the jaxprs
JAX prints, and flax.nnx with references (run under the alias, as the ecosystem
tests run it).

Each program is written once as a function of the library module (`m` is `jax` or
`jaxlite`) and run on both; where JAX 0.10.2 itself fails on a program (its reverse
mode of some reference programs raises internal AttributeErrors), jaxlite is compared
with the same computation written without references instead.
"""

from __future__ import annotations

import numpy as np
import pytest

import jaxlite
from jaxlite.backend import native
from jaxlite.config import override
from jaxlite.state import discharge
from jaxlite.state.types import AbstractRef

jax = pytest.importorskip("jax")


def _both(program):
    """`program(m)` on jaxlite and on JAX."""
    return program(jaxlite), program(jax)


def _check(ours, theirs, rtol=1e-6, atol=1e-6):
    ours_leaves = jaxlite.tree_util.tree_leaves(ours)
    theirs_leaves = jax.tree_util.tree_leaves(theirs)
    assert len(ours_leaves) == len(theirs_leaves)
    for a, b in zip(ours_leaves, theirs_leaves):
        a, b = np.asarray(a), np.asarray(b)
        assert a.shape == b.shape and a.dtype == b.dtype, (a, b)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _compare(program, **tol):
    ours, theirs = _both(program)
    _check(ours, theirs, **tol)
    return ours


X3 = np.array([1.0, 2.0, 3.0], np.float32)
M34 = np.arange(12.0, dtype=np.float32).reshape(3, 4)

# ----------------------------------------------------------------------------------------
# Values, types and eager operations


def test_eager_reads_writes_and_types():
    def program(m):
        r = m.new_ref(m.numpy.asarray(M34))
        out = [r[...], r[1], r[-1, -2], r[:, 1:3], r[:, ::2], r[..., 1]]
        out.append(r[m.numpy.array([0, 2])])
        out.append(r[:, m.numpy.array([0, 3])])
        out.append(r[m.numpy.array([0, 2]), m.numpy.array([1, 3])])
        r[0] = m.numpy.ones(4)
        r[1, 2] = 7.0
        r[2, ::2] = m.numpy.array([5.0, 6.0])
        r[...] += 1.0
        r.addupdate(m.numpy.ones(4), (m.numpy.array(2),))
        r.addupdate(m.numpy.ones((2, 4)), (m.numpy.array([0, 0]),))  # adds twice
        out.append(m.ref.swap(r, (1,), m.numpy.zeros(4)))
        m.ref.set(r, (slice(None), 3), m.numpy.full(3, 9.0))
        m.ref.addupdate(r, (0, 0), 100.0)
        out.append(m.ref.get(r, (2,)))
        out.append(m.freeze(r))
        return out

    _compare(program)


def test_ref_type_repr_and_aval_match_jax():
    for m in (jaxlite, jax):
        r = m.new_ref(m.numpy.arange(5.0))
        w = m.new_ref(1)
        aval = m.typeof(r)
        assert isinstance(r, m.Ref) and not isinstance(r, m.Array)
        assert (r.shape, r.dtype, r.ndim, r.size, len(r)) == ((5,), np.float32, 1, 5, 5)
        assert repr(r) == "Ref([0., 1., 2., 3., 4.], dtype=float32)"
        assert repr(w) == "Ref(1, dtype=int32, weak_type=True)"
        assert str(aval) == repr(aval) == "Ref{float32[5]}"
        assert aval.inner_aval == m.core.ShapedArray((5,), np.float32)
        assert aval == m.typeof(m.new_ref(m.numpy.zeros(5)))
        assert m.typeof(w[...]).weak_type
        assert isinstance(aval, m.ref.AbstractRef)
    from jaxlite._src.state.types import AbstractRef as private

    assert private is AbstractRef


def test_reads_never_alias_the_buffer():
    r = jaxlite.new_ref(jaxlite.numpy.zeros(3))
    whole, row, frozen = r[...], r[0:2], jaxlite.freeze(r)
    r[...] = jaxlite.numpy.ones(3)
    assert np.asarray(whole).tolist() == [0.0, 0.0, 0.0]
    assert np.asarray(row).tolist() == [0.0, 0.0]
    assert np.asarray(frozen).tolist() == [0.0, 0.0, 0.0]
    x = jaxlite.numpy.zeros(3)
    r2 = jaxlite.new_ref(x)
    r2[0] = 5.0
    assert np.asarray(x).tolist() == [0.0, 0.0, 0.0]  # new_ref copies its value


# ----------------------------------------------------------------------------------------
# jit


def test_jit_mutates_ref_arguments_in_place():
    def program(m):
        s = m.new_ref(m.numpy.zeros(3))

        @m.jit
        def f(s, x, i):
            s[...] += x
            s[i] = s[i] * 10.0
            return s[0] * 2

        outs = [f(s, 1.0, 1), f(s, 2.0, 2)]
        return outs + [s[...]]

    _compare(program)


def test_jit_closures_and_refs_made_inside():
    def program(m):
        c = m.new_ref(m.numpy.zeros(()))

        @m.jit
        def h(x):
            c[...] += x
            return x * 2

        @m.jit
        def g(x):
            r = m.new_ref(x)
            r[0] = 5.0
            r.addupdate(m.numpy.ones(3))
            return m.freeze(r)

        return [h(1.0), h(2.0), c[...], g(m.numpy.asarray(X3))]

    _compare(program)


def test_traced_indices_count_from_the_end_and_are_clamped():
    def program(m):
        r = m.new_ref(m.numpy.asarray(M34))
        read = m.jit(lambda i: r[i])
        outs = [read(5), read(-1), read(m.numpy.array([0, 7, -1]))]
        m.jit(lambda i: r.__setitem__(i, m.numpy.zeros(4)))(7)
        return outs + [r[...]]

    _compare(program)


def test_jit_cache_tells_refs_from_arrays():
    f = jaxlite.jit(lambda x: x[...] * 2)
    x = jaxlite.numpy.arange(3.0)
    np.testing.assert_allclose(f(x), [0.0, 2.0, 4.0])
    np.testing.assert_allclose(f(jaxlite.new_ref(x)), [0.0, 2.0, 4.0])
    np.testing.assert_allclose(f(x), [0.0, 2.0, 4.0])


def test_jaxpr_text_matches_jax():
    def program(m):
        def f(r, i, v, w):
            r.addupdate(v, (i,))
            a = r[1:, 0]
            r[1:, 0] = w
            m.ref.addupdate(r, (0,), v)
            b = m.ref.get(r, (slice(None), 1))
            c = r[...]
            return a, b, c

        args = (m.new_ref(m.numpy.zeros((3, 4))), 1, m.numpy.ones(4), m.numpy.ones(2))
        return str(m.make_jaxpr(f)(*args))

    ours, theirs = _both(program)
    assert ours == theirs
    assert "a[1:,0] <- d" in ours and "a[b,:] += c" in ours

    def program2(m):
        def g(x):
            r = m.new_ref(x)
            r[0] = x[1]
            return m.freeze(r)

        return str(m.make_jaxpr(g)(m.numpy.zeros(3)))

    ours, theirs = _both(program2)
    assert ours == theirs


def test_native_backend_leaves_refs_to_numpy():
    r = jaxlite.new_ref(jaxlite.numpy.zeros(3))

    def f(r, x):
        r[...] += x
        return r[0]

    closed = jaxlite.make_jaxpr(f)(r, 1.0)
    assert "mutable array references run on NumPy" in native.refusal(closed)
    with override("jaxlite_backend", "native"):
        jf = jaxlite.jit(f)
        jf(r, 1.0)
        jf(r, 2.0)
    np.testing.assert_allclose(r[...], [3.0, 3.0, 3.0])


# ----------------------------------------------------------------------------------------
# Control flow


def _loops(m):
    lax = m.lax
    outs = []
    c = m.new_ref(m.numpy.zeros(()))

    def body(i, x):
        c[...] += i
        return x + 1.0

    outs.append(lax.fori_loop(0, 5, body, 0.0))  # eager
    outs.append(m.jit(lambda: lax.fori_loop(0, 5, body, 0.0))())
    outs.append(c[...])

    def sbody(carry, x):
        c[...] += x * carry
        return carry + 1.0, c[...]

    outs.append(lax.scan(sbody, 1.0, m.numpy.asarray(X3)))
    outs.append(m.jit(lambda xs: lax.scan(sbody, 1.0, xs))(m.numpy.asarray(X3)))

    def cf(p, x):
        def t(x):
            c[...] = x
            return x

        def e(x):
            c[...] += 100.0
            return -x

        return lax.cond(p, t, e, x)

    outs += [cf(True, 3.0), m.jit(cf)(False, 3.0), c[...]]

    def inner(xs):
        acc = m.new_ref(0.0)

        def b(carry, x):
            acc[...] += x
            return carry, None

        lax.scan(b, None, xs)
        return acc[...]

    outs += [inner(m.numpy.asarray(X3)), m.jit(inner)(m.numpy.asarray(X3))]
    return outs


def test_refs_in_loop_and_cond_bodies():
    _compare(_loops)


def test_while_loop_predicate_and_body_share_a_ref():
    # JAX 0.10.2 refuses this program (it passes the reference to its while twice).
    def loop(m):
        n = m.new_ref(0)
        out = m.lax.while_loop(
            lambda v: n[...] < 5,
            lambda v: (n.__setitem__(..., n[...] + 1), v * 2)[1],
            1.0,
        )
        return out, n[...]

    assert [int(v) for v in loop(jaxlite)] == [32, 5]
    assert [int(v) for v in jaxlite.jit(lambda: loop(jaxlite))()] == [32, 5]


# ----------------------------------------------------------------------------------------
# Differentiation


def _grads(m):
    lax = m.lax
    x = m.numpy.asarray(X3)

    def f1(x):
        r = m.new_ref(x)
        r[...] = r[...] * 2.0
        r[0] += x[1]
        return m.numpy.sum(r[...] ** 2)

    def f2(x):  # a reference made from a constant, given differentiated values
        r = m.new_ref(m.numpy.zeros(3))
        r[...] = x * 2
        return (r[...] ** 2).sum()

    def f3(x):
        r = m.new_ref(x)
        y = m.freeze(r)
        return (y**3).sum()

    def f4(x):
        r = m.new_ref(x)

        def body(i, c):
            r[i] = r[i] * c
            return c + 1.0

        lax.fori_loop(0, 3, body, 2.0)
        return r[...].sum()

    def f5(x):
        r = m.new_ref(m.numpy.zeros(()))

        def body(c, xi):
            r[...] += m.numpy.sin(xi) * c
            return c * 2.0, r[...]

        c, ys = lax.scan(body, 1.0, x)
        return r[...] + ys.sum() + c

    def f6(x):
        r = m.new_ref(x[0])

        def body(c, xi):
            r[...] = r[...] * xi
            return c, None

        lax.scan(body, None, x)
        return r[...]

    def f7(x):
        r = m.new_ref(x)

        @m.jit
        def g():
            r[...] = m.numpy.sin(r[...])

        g()
        return r[...].sum()

    out = []
    for f in (f1, f2, f3, f4, f5, f6, f7):
        out += [m.grad(f)(x), m.jit(m.grad(f))(x), m.grad(m.jit(f))(x)]
        out.append(m.jvp(f, (x,), (m.numpy.ones(3),)))
    return out


def test_grad_jvp_of_functions_that_make_refs():
    _compare(_grads, rtol=1e-5)


def test_refs_made_inside_loop_bodies_under_grad_and_vmap():
    def program(m):
        lax = m.lax

        def f(x):
            def body(c, xi):
                r = m.new_ref(c)
                r[...] = r[...] * xi + m.numpy.sin(c)

                def inner(i, d):
                    r[...] += d * xi
                    return d

                lax.fori_loop(0, 2, inner, 0.5)
                return r[...], r[...] ** 2

            c, ys = lax.scan(body, 1.0, x)
            return c + ys.sum()

        x = m.numpy.asarray(X3)
        xs = m.numpy.stack([x, x * 0.5])
        return [
            m.grad(f)(x),
            m.jit(m.grad(f))(x),
            m.vmap(m.grad(f))(xs),
            m.jvp(f, (x,), (m.numpy.ones(3),)),
        ]

    _compare(program, rtol=1e-5)


def test_grad_where_jax_fails_matches_pure_functions():
    # JAX 0.10.2 raises internal errors ('... has no attribute accum') on these.
    x = jaxlite.numpy.asarray(X3)
    lax = jaxlite.lax

    def with_ref(x):
        r = jaxlite.new_ref(x)
        r[1] = 5.0
        r.addupdate(x**2)
        lax.cond(x[0] > 0, lambda: r.__setitem__(..., r[...] * r[...]), lambda: None)
        return (r[...] * x).sum()

    def pure(x):
        v = x.at[1].set(5.0) + x**2
        return (v * v * x).sum()

    for transform in (jaxlite.grad, lambda f: jaxlite.jit(jaxlite.grad(f))):
        np.testing.assert_allclose(transform(with_ref)(x), jax.grad(pure)(X3), 1e-5)
    _, f_jvp = jaxlite.linearize(with_ref, x)
    assert "Ref" not in str(jaxlite.make_jaxpr(f_jvp)(x))  # tangents are values

    def rows(x):  # second order, and under checkpoint
        r = jaxlite.new_ref(jaxlite.numpy.zeros(3))

        def body(i, c):
            r[i] = jaxlite.numpy.cos(x[i]) * c
            return c * x[i]

        c = lax.fori_loop(0, 3, body, 1.0)
        return r[...].sum() * c

    def rows_pure(x):
        c = jax.numpy.concatenate([jax.numpy.ones(1), jax.numpy.cumprod(x)[:-1]])
        return (jax.numpy.cos(x) * c).sum() * jax.numpy.prod(x)

    expected = jax.hessian(rows_pure)(X3)
    np.testing.assert_allclose(jaxlite.jacrev(jaxlite.grad(rows))(x), expected, 1e-5)
    np.testing.assert_allclose(
        jaxlite.grad(jaxlite.checkpoint(rows))(x), jax.grad(rows_pure)(X3), 1e-5
    )


# ----------------------------------------------------------------------------------------
# vmap


def _batched(m):
    lax = m.lax
    xs = m.numpy.asarray(np.arange(6.0, dtype=np.float32).reshape(2, 3))

    def f(x):
        r = m.new_ref(x)
        r[...] = r[...] * 2.0
        r[0] += x[1]
        return m.numpy.sum(r[...] ** 2)

    def k(x):  # a reference made inside vmap from a constant holds a batch
        r = m.new_ref(m.numpy.zeros(()))

        def b(c, xi):
            r[...] += m.numpy.sin(xi)
            return c, None

        lax.scan(b, None, x)
        return r[...]

    def h(r, x):
        r[...] += x
        return r[...].sum()

    refs = m.new_ref(m.numpy.zeros((2, 3)))
    out = [m.vmap(f)(xs), m.vmap(k)(xs), m.vmap(h)(refs, xs), refs[...]]
    cols = m.new_ref(m.numpy.ones((3, 2)))
    out.append(m.vmap(lambda r: r[...].sum(), in_axes=1)(cols))
    table = m.new_ref(m.numpy.arange(5.0))
    out.append(m.vmap(lambda i: table[i])(m.numpy.array([4, 0, 2])))
    out.append(m.vmap(m.grad(f))(xs))
    return out


def test_vmap_of_refs():
    _compare(_batched, rtol=1e-5)


def test_vmap_where_jax_fails_matches_pure_functions():
    # JAX 0.10.2: "State effect not supported in vmap-of-cond".
    def with_ref(x, p):
        r = jaxlite.new_ref(x)
        jaxlite.lax.cond(
            p,
            lambda: r.__setitem__(..., r[...] * r[...]),
            lambda: r.__setitem__(0, 1.0),
        )
        return r[...].sum()

    xs = np.stack([X3, X3 + 1])
    ps = np.array([True, False])
    out = jaxlite.vmap(with_ref)(xs, ps)
    expected = [(xs[0] ** 2).sum(), 1.0 + xs[1, 1:].sum()]
    np.testing.assert_allclose(out, expected)

    def write_rows(x):
        r = jaxlite.new_ref(jaxlite.numpy.zeros(3))

        def body(c, i):
            r[i] = x[i] * 2
            return c, None

        jaxlite.lax.scan(body, None, jaxlite.numpy.arange(3))
        return r[...]

    np.testing.assert_allclose(jaxlite.vmap(write_rows)(xs), xs * 2)


# ----------------------------------------------------------------------------------------
# Errors, as JAX raises them


def _error(program):
    """The exception `program(m)` raises on jaxlite, after checking JAX raises too."""
    with pytest.raises(Exception):  # noqa: B017  (JAX raises bare Exceptions here)
        program(jax)
    with pytest.raises(Exception) as info:  # noqa: B017
        program(jaxlite)
    return info


def test_returning_a_ref_is_an_error():
    info = _error(lambda m: m.jit(lambda x: m.new_ref(x))(1.0))
    assert info.type is ValueError
    assert "mutable array references cannot be returned" in str(info.value)
    assert "traced for jit" in str(info.value)

    def carry(m):
        def b(r, _):
            r[...] += 1.0
            return r, None

        return m.lax.scan(b, m.new_ref(1.0), None, length=3)

    info = _error(carry)
    assert info.type is ValueError
    assert "at output tree path result[0]" in str(info.value)
    assert "passed in as the argument r" in str(info.value)


def test_scanning_over_a_ref_is_refused():
    r = jaxlite.new_ref(jaxlite.numpy.ones((3, 2)))
    with pytest.raises(NotImplementedError, match="scan over a mutable array"):
        jaxlite.lax.scan(lambda c, x: (c, x), 0.0, r)


def test_passing_one_ref_twice_is_an_error():
    def program(m):
        r = m.new_ref(m.numpy.zeros(3))
        return m.jit(lambda a, b: a[...] + b[...])(r, r)

    info = _error(program)
    assert info.type is ValueError
    assert "only one reference to a mutable array" in str(info.value)
    assert "appeared at both a and b" in str(info.value)


@pytest.mark.parametrize(
    "write, phrase",
    [
        (lambda m, r: r.__setitem__(..., m.numpy.ones(4)), "Invalid shape for `swap`"),
        (lambda m, r: r.__setitem__(0, m.numpy.ones(4)), "Invalid shape for `swap`"),
        (lambda m, r: r.__setitem__(..., m.numpy.ones(3, "int32")), "Invalid dtype"),
        (lambda m, r: r[5], "Out of bound indexer: idx=5, dim=3."),
        (lambda m, r: r[..., ...], "Only one ellipsis is supported."),
        (lambda m, r: r[0, 0], "`indices` must not be longer than `shape`"),
    ],
)
def test_index_and_value_errors(write, phrase):
    info = _error(lambda m: write(m, m.new_ref(m.numpy.zeros(3))))
    assert info.type is ValueError
    assert phrase in str(info.value)


def test_transformation_errors():
    def closed_grad(m):
        c = m.new_ref(m.numpy.zeros(3))

        def g(x):
            c[...] += x
            return x.sum()

        return m.grad(g)(m.numpy.ones(3))

    info = _error(closed_grad)
    assert "with a differentiated value on a non-differentiated array reference" in (
        str(info.value)
    )

    def closed_vmap(m):
        c = m.new_ref(m.numpy.zeros(3))
        return m.vmap(lambda x: c.addupdate(x))(m.numpy.ones((2, 3)))

    info = _error(closed_vmap)
    assert "performing an addupdate operation with vmapped value on an unbatched" in (
        str(info.value)
    )

    def ref_argument(m):
        def h(r, x):
            r[...] += x
            return r[...].sum()

        return m.grad(h)(m.new_ref(m.numpy.zeros(3)), m.numpy.ones(3))

    info = _error(ref_argument)
    assert info.type is ValueError
    assert "Expected cotangent type Ref{float32[3]} but got float32[3]" in str(
        info.value
    )


# ----------------------------------------------------------------------------------------
# Discharge, the machinery transformations of loops run on


def test_discharge_state_turns_refs_into_values():
    def body(r, x):
        r[...] += x
        return r[0] * x[1]

    ref_aval = AbstractRef(jaxlite.core.ShapedArray((3,), np.float32))
    closed = jaxlite.make_jaxpr(body)(
        ref_aval, jaxlite.ShapeDtypeStruct((3,), "float32")
    )
    pure = discharge.discharge_state(closed, [True, False])
    assert "Ref" not in str(pure)
    out, final = jaxlite.core.jaxpr_as_fun(pure)(X3, X3)
    np.testing.assert_allclose(out, 2.0 * 2.0)
    np.testing.assert_allclose(final, 2 * X3)


# ----------------------------------------------------------------------------------------
# The names libraries import, and flax.nnx with references


def test_hijax_names_for_flax():
    from jaxlite.experimental import hijax

    class P(hijax.HiPrimitive):
        multiple_results = True

    p = P("p")
    assert p.multiple_results and p.name == "p"
    with pytest.raises(NotImplementedError, match="cannot run on jaxlite"):
        p.bind(1.0)


NNX_REFS = """
import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

x = jnp.asarray(np.random.RandomState(0).randn(6, 4), jnp.float32)


class MLP(nnx.Module):
    def __init__(self, rngs):
        self.l1 = nnx.Linear(4, 8, rngs=rngs)
        self.l2 = nnx.Linear(8, 3, rngs=rngs)
        self.count = nnx.Variable(jnp.array(0))

    def __call__(self, x):
        self.count[...] += 1
        return self.l2(nnx.relu(self.l1(x)))


rngs = nnx.Rngs(0)  # keys stay arrays: jaxlite makes no references to keys
with nnx.var_defaults(ref=True):
    model = MLP(rngs)
    kind = type(model.l1.kernel.get_raw_value()).__name__
    eager = model(x)

    @nnx.jit
    def fwd(model, x):
        return model(x).sum()

    @jax.jit
    def fwd2(model, x):
        return model(x).sum()

    totals = [fwd(model, x), fwd2(model, x), fwd2(model, x)]
    batched = nnx.vmap(lambda m, x: m(x), in_axes=(None, 0))(model, jnp.stack([x, -x]))
results = {
    "kind": kind,
    "eager": eager,
    "totals": totals,
    "count": model.count[...],
    "batched": batched,
}
"""


def test_flax_nnx_with_references():
    import importlib.util

    for name in ("flax", "optax"):
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"{name} is not installed")
    from ecosystem.harness import assert_close, run_both

    ours, theirs = run_both(NNX_REFS, pytest.importorskip("tempfile").mkdtemp())
    assert ours["kind"] == theirs["kind"] == "Ref"
    assert_close(ours, theirs, rtol=1e-5, atol=1e-6)
