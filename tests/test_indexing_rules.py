"""Derivative and batching rules of the indexing primitives (slice, dynamic_slice,
dynamic_update_slice, gather and the scatter family), through the code users write:
`x[0]`, `x[:, 1:3]`, `x[idx]`, `x[i]` with a traced `i`, `x.at[idx].set/add/mul/min/max`,
`jnp.take`, `jnp.take_along_axis`.

Every program is written once against a module namespace `m` (jaxlite, or real JAX when
it is installed), so the same line is checked four ways: derivatives against finite
differences (`check_grads`, orders 1 and 2, forward and reverse), `vmap` against a loop
over the examples for every combination of batched arguments, compositions with `jit`,
and values, derivatives and batched values against JAX.
"""

import itertools
import types

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import lax
from testing import check_close, check_grads

JAXLITE = types.SimpleNamespace(numpy=jnp, lax=lax, jit=jaxlite.jit)

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 5)).astype(np.float32)
V = RNG.standard_normal((3, 5)).astype(np.float32)
DUP = np.array([2, 0, 2], np.int32)  # a repeated index: scatters must pick a winner
UNIQUE = np.array([2, 0, 1], np.int32)


# Windows (2, 3) at index vectors (row, column): overlapping, one clipped.
WIN_IDX = np.array([[0, 1], [3, 4], [1, 1]], np.int32)
W = RNG.standard_normal((3, 2, 3)).astype(np.float32)
# Row b of the operand reads column BATCH_IDX[b]: an operand batching dimension.
BATCH_IDX = np.array([[4], [0], [2], [2]], np.int32)


def _window_dn(m):
    return m.lax.GatherDimensionNumbers(
        offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0, 1)
    )


def _window_scatter_dn(m):
    return m.lax.ScatterDimensionNumbers(
        update_window_dims=(1, 2),
        inserted_window_dims=(),
        scatter_dims_to_operand_dims=(0, 1),
    )


def _batching_dn(m):
    return m.lax.GatherDimensionNumbers(
        offset_dims=(),
        collapsed_slice_dims=(1,),
        start_index_map=(1,),
        operand_batching_dims=(0,),
        start_indices_batching_dims=(0,),
    )


def _jax():
    jax = pytest.importorskip("jax")
    return types.SimpleNamespace(numpy=jax.numpy, lax=jax.lax, jit=jax.jit, jax=jax)


def _ds(m, x, starts, sizes):
    return m.lax.dynamic_slice(x, [m.numpy.int32(s) for s in starts], sizes)


# ----------------------------------------------------------------------------------------
# Derivatives of user-level indexing, with respect to every float argument

# (name, f(m, *args), args): differentiable in every float argument.
PROGRAMS = [
    ("int_index", lambda m, x: x[0], (X,)),
    ("scalar_index", lambda m, x: x[1, 2], (X,)),
    ("negative_index", lambda m, x: x[-1, ::-1], (X,)),
    ("basic_slice", lambda m, x: x[:, 1:3], (X,)),
    ("strided_slice", lambda m, x: x[::2, 1::3], (X,)),
    ("empty_slice", lambda m, x: x[2:2] + 1.0, (X,)),
    ("newaxis_ellipsis", lambda m, x: x[None, ..., 3], (X,)),
    ("index_array", lambda m, x: x[DUP], (X,)),
    ("index_array_2d", lambda m, x: x[DUP[:, None], UNIQUE[None, :2]], (X,)),
    ("bool_mask", lambda m, x: x[np.array([True, False, True, True])], (X,)),
    ("mixed", lambda m, x: x[1:, DUP], (X,)),
    ("dynamic_slice", lambda m, x: _ds(m, x, (1, 2), (2, 3)), (X,)),
    ("dynamic_slice_clamped", lambda m, x: _ds(m, x, (3, -9), (2, 3)), (X,)),
    (
        "dynamic_update_slice",
        lambda m, x, v: m.lax.dynamic_update_slice(
            x, v[:2, :3], [m.numpy.int32(3), m.numpy.int32(1)]
        ),
        (X, V),
    ),
    ("set", lambda m, x, v: m.numpy.asarray(x).at[DUP].set(v), (X, V)),
    (
        "set_unique",
        lambda m, x, v: m.numpy.asarray(x).at[UNIQUE].set(v, unique_indices=True),
        (X, V),
    ),
    ("set_scalar", lambda m, x, v: m.numpy.asarray(x).at[1, 2].set(v[0, 0]), (X, V)),
    (
        "set_slice",
        lambda m, x, v: m.numpy.asarray(x).at[1:4, ::2].set(v[:, :3]),
        (X, V),
    ),
    ("add", lambda m, x, v: m.numpy.asarray(x).at[DUP].add(v), (X, V)),
    ("subtract", lambda m, x, v: m.numpy.asarray(x).at[DUP].subtract(v), (X, V)),
    (
        "mul_unique",
        lambda m, x, v: m.numpy.asarray(x).at[UNIQUE].mul(v, unique_indices=True),
        (X, V),
    ),
    ("min", lambda m, x, v: m.numpy.asarray(x).at[DUP].min(v), (X, V)),
    ("max", lambda m, x, v: m.numpy.asarray(x).at[DUP].max(v), (X, V)),
    ("take", lambda m, x: m.numpy.take(x, np.array([4, 0, 3, 4]), axis=1), (X,)),
    (
        "take_clip",
        lambda m, x: m.numpy.take(x, np.array([4, 0, 7]), axis=1, mode="clip"),
        (X,),
    ),
    (
        "take_along_axis",
        lambda m, x: m.numpy.take_along_axis(
            x, np.array([[0, 1], [2, 2], [4, 3], [1, 1]]), axis=1
        ),
        (X,),
    ),
    ("nested", lambda m, x: m.numpy.asarray(x)[1:].at[DUP].add(x[0])[:, ::2], (X,)),
    (
        "gather_windows_clip",
        lambda m, x: m.lax.gather(x, WIN_IDX, _window_dn(m), (2, 3), mode="clip"),
        (X,),
    ),
    (
        "gather_windows_fill",
        lambda m, x: m.lax.gather(
            x, WIN_IDX, _window_dn(m), (2, 3), mode="fill", fill_value=0.0
        ),
        (X,),
    ),
    (
        "gather_operand_batching_dims",
        lambda m, x: m.lax.gather(x, BATCH_IDX, _batching_dn(m), (1, 1)),
        (X,),
    ),
    (
        "scatter_windows_clip",
        lambda m, x, w: m.lax.scatter(
            x, WIN_IDX, w, _window_scatter_dn(m), mode="clip"
        ),
        (X, W),
    ),
    (
        "scatter_add_windows_drop",
        lambda m, x, w: m.lax.scatter_add(x, WIN_IDX, w, _window_scatter_dn(m)),
        (X, W),
    ),
    (
        "scatter_max_windows_clip",
        lambda m, x, w: m.lax.scatter_max(
            x, WIN_IDX, w, _window_scatter_dn(m), mode="clip"
        ),
        (X, W),
    ),
]


def _program(case):
    name, f, args = case
    return (lambda *a: f(JAXLITE, *a)), args


@pytest.mark.parametrize("case", PROGRAMS, ids=[c[0] for c in PROGRAMS])
def test_derivatives_match_finite_differences(case):
    f, args = _program(case)
    check_grads(f, args, order=2, modes=("fwd", "rev"))


def test_scatter_mul_with_repeated_indices_is_differentiable():
    # JAX refuses this case (unique_indices=False); jaxlite uses, for each update, the
    # product of the other updates on the same element, zeros included (exact to the
    # first order at zeros, to every order elsewhere).
    def f(x, v):
        return jnp.asarray(x).at[DUP].mul(v)

    check_grads(f, (X, V), order=2, modes=("fwd", "rev"))
    v = V.copy()
    v[0, 1] = 0.0
    v[2, 3] = 0.0
    v[0, 3] = 0.0
    check_grads(f, (X, v), order=1, modes=("fwd", "rev"))
    g = jaxlite.grad(lambda v: jnp.sum(f(np.ones((4, 5), np.float32), v)))(v)
    prod_others = np.ones_like(v)
    prod_others[0], prod_others[2] = v[2], v[0]
    prod_others[1] = 1.0
    np.testing.assert_allclose(np.asarray(g), prod_others, rtol=1e-6)


# Programs whose JAX 0.10.2 derivative is wrong (jaxlite's passes check_grads above).
JAX_WRONG = {
    # The updates of the clipped window get an infinite cotangent, and operand
    # elements the updates replaced get one.
    "scatter_max_windows_clip": "JAX's scatter-max JVP breaks on clipped windows",
}


@pytest.mark.parametrize("case", PROGRAMS, ids=[c[0] for c in PROGRAMS])
def test_derivatives_match_jax(case):
    jm = _jax()
    name, f, args = case
    out = f(JAXLITE, *args)
    ct = RNG.standard_normal(np.shape(out)).astype(np.float32)
    tangents = [RNG.standard_normal(np.shape(a)).astype(np.float32) for a in args]
    _, pullback = jaxlite.vjp(lambda *a: f(JAXLITE, *a), *args)
    _, jax_pullback = jm.jax.vjp(lambda *a: f(jm, *a), *args)
    if name in JAX_WRONG:
        assert not all(np.isfinite(c).all() for c in jax_pullback(ct)), JAX_WRONG[name]
        return
    check_close(
        [np.asarray(c) for c in pullback(ct)],
        [np.asarray(c) for c in jax_pullback(ct)],
        rtol=1e-5,
        atol=1e-5,
    )
    tangents = tuple(tangents)
    _, t_out = jaxlite.jvp(lambda *a: f(JAXLITE, *a), args, tangents)
    _, jax_t_out = jm.jax.jvp(lambda *a: f(jm, *a), args, tangents)
    check_close(np.asarray(t_out), np.asarray(jax_t_out), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", PROGRAMS[::3], ids=[c[0] for c in PROGRAMS[::3]])
def test_jit_of_grad_and_grad_of_jit(case):
    f, args = _program(case)

    def loss(*a):
        return jnp.sum(jnp.sin(f(*a)))

    argnums = tuple(range(len(args)))
    expected = jaxlite.grad(loss, argnums)(*args)
    check_close(jaxlite.jit(jaxlite.grad(loss, argnums))(*args), expected)
    check_close(jaxlite.grad(jaxlite.jit(loss), argnums)(*args), expected)
    check_close(jaxlite.jit(jaxlite.grad(jaxlite.jit(loss), argnums))(*args), expected)


# ----------------------------------------------------------------------------------------
# Out-of-bounds indices and modes: where the cotangent goes, as in JAX


def test_grad_of_out_of_bounds_gather_follows_the_mode():
    x = np.arange(3.0, dtype=np.float32)
    idx = jnp.array([5, -7, 1])
    promise = jaxlite.grad(lambda x: jnp.sum(x[idx]))(x)
    clip = jaxlite.grad(lambda x: jnp.sum(jnp.asarray(x).at[idx].get(mode="clip")))(x)
    fill = jaxlite.grad(lambda x: jnp.sum(jnp.asarray(x).at[idx].get(mode="fill")))(x)
    # PROMISE_IN_BOUNDS reads clamp but the transposed scatter drops (as in JAX);
    # CLIP clamps both ways; FILL_OR_DROP reads the fill value and drops.
    np.testing.assert_array_equal(np.asarray(promise), [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(np.asarray(clip), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(np.asarray(fill), [0.0, 1.0, 0.0])
    jm = _jax()
    jx = jm.numpy.asarray(x)
    jidx = jm.numpy.array([5, -7, 1])
    np.testing.assert_array_equal(
        np.asarray(clip),
        jm.jax.grad(lambda x: x.at[jidx].get(mode="clip").sum())(jx),
    )
    np.testing.assert_array_equal(
        np.asarray(promise), jm.jax.grad(lambda x: x[jidx].sum())(jx)
    )


def test_tangent_of_filled_gather_is_zero():
    x = np.arange(4.0, dtype=np.float32)
    out, t = jaxlite.jvp(
        lambda x: jnp.take(x, jnp.array([1, 9])), (x,), (np.ones(4, np.float32),)
    )
    assert np.isnan(np.asarray(out)[1])
    np.testing.assert_array_equal(np.asarray(t), [1.0, 0.0])


def test_grad_of_clamped_dynamic_slice():
    x = np.arange(6.0, dtype=np.float32)
    g = jaxlite.grad(lambda x, i: jnp.sum(lax.dynamic_slice(x, (i,), (2,))))(x, 10)
    np.testing.assert_array_equal(np.asarray(g), [0, 0, 0, 0, 1, 1])


def test_traced_index_under_grad_and_jit():
    x = np.arange(5.0, dtype=np.float32)

    def f(x, i):
        return jnp.sum(x[i] * x)

    for i in (2, -1, 7):
        g = jaxlite.jit(jaxlite.grad(f))(x, i)
        j = min(i % 5, 4) if i < 0 else min(i, 4)
        expected = np.full(5, x[j])
        expected[j] += x.sum()
        np.testing.assert_allclose(np.asarray(g), expected)


# ----------------------------------------------------------------------------------------
# Repeated indices in scatters


def test_scatter_set_with_repeated_indices_last_write_wins():
    x = np.zeros(3, np.float32)
    idx = jnp.array([0, 0, 1])
    v = np.array([1.0, 2.0, 3.0], np.float32)

    def f(x, v):
        return jnp.asarray(x).at[idx].set(v)

    out, t = jaxlite.jvp(f, (x, v), (np.ones(3, np.float32), np.array([10, 20, 30.0])))
    np.testing.assert_array_equal(np.asarray(out), [2.0, 3.0, 0.0])
    np.testing.assert_array_equal(np.asarray(t), [20.0, 30.0, 1.0])
    weights = np.array([1.0, 2.0, 3.0], np.float32)
    gx, gv = jaxlite.grad(lambda x, v: jnp.sum(f(x, v) * weights), (0, 1))(x, v)
    np.testing.assert_array_equal(np.asarray(gx), [0.0, 0.0, 3.0])
    np.testing.assert_array_equal(np.asarray(gv), [0.0, 1.0, 2.0])
    jm = _jax()
    j_gv = jm.jax.grad(
        lambda v: (
            jm.numpy.zeros(3).at[jm.numpy.array([0, 0, 1])].set(v) * weights
        ).sum()
    )(v)
    np.testing.assert_array_equal(np.asarray(gv), j_gv)


@pytest.mark.parametrize("op", ["min", "max"])
def test_scatter_extremum_ties_share_the_tangent_as_in_jax(op):
    x = np.array([1.0, 2.0, 3.0], np.float32)
    v = np.array([1.0, 1.0, 0.5], np.float32) if op == "max" else np.array([1, 1, 5.0])
    v = v.astype(np.float32)
    tx = np.array([1.0, 10.0, 100.0], np.float32)
    tv = np.array([1e3, 1e4, 1e5], np.float32)
    idx = [0, 0, 1]

    def f(m, x, v):
        return getattr(m.numpy.asarray(x).at[m.numpy.array(idx)], op)(v)

    out, t = jaxlite.jvp(lambda x, v: f(JAXLITE, x, v), (x, v), (tx, tv))
    # Element 0: the operand and both updates tie, so the tangent is their mean.
    np.testing.assert_allclose(np.asarray(t)[0], (1.0 + 1e3 + 1e4) / 3, rtol=1e-6)
    jm = _jax()
    j_out, j_t = jm.jax.jvp(lambda x, v: f(jm, x, v), (x, v), (tx, tv))
    np.testing.assert_array_equal(np.asarray(out), j_out)
    np.testing.assert_allclose(np.asarray(t), j_t, rtol=1e-6)


def test_scatter_apply_has_no_derivative():
    dnums = lax.ScatterDimensionNumbers((), (0,), (0,))

    def f(x):
        return lax.scatter_apply(x, jnp.array([[1]]), jnp.sin, dnums, update_shape=(1,))

    with pytest.raises(NotImplementedError, match="scatter_apply"):
        jaxlite.grad(lambda x: jnp.sum(f(x)))(np.ones(3, np.float32))
    out = jaxlite.vmap(f)(np.zeros((2, 3), np.float32) + 1)
    np.testing.assert_allclose(np.asarray(out)[:, 1], np.sin(1.0))


def test_lax_scatters_are_linear_where_jax_says():
    # scatter-add: linear in operand and updates jointly (vjp of a linear map).
    dnums = lax.ScatterDimensionNumbers((1,), (0,), (0,))
    idx = jnp.array([[2], [0], [2]])

    def f(x, v):
        return lax.scatter_add(x, idx, v, dnums)

    _, pullback = jaxlite.vjp(f, X, V)
    ct = RNG.standard_normal((4, 5)).astype(np.float32)
    ct_x, ct_v = pullback(ct)
    np.testing.assert_array_equal(np.asarray(ct_x), ct)
    np.testing.assert_array_equal(np.asarray(ct_v), ct[[2, 0, 2]])
    _, pullback = jaxlite.vjp(lambda x, v: lax.scatter_sub(x, idx, v, dnums), X, V)
    np.testing.assert_array_equal(np.asarray(pullback(ct)[1]), -ct[[2, 0, 2]])


# ----------------------------------------------------------------------------------------
# vmap: every combination of batched arguments, against a loop over the examples

B = 3
XB = RNG.standard_normal((B, 4, 5)).astype(np.float32)
VB = RNG.standard_normal((B, 3, 5)).astype(np.float32)
IB = np.array([[2, 0, 2], [1, 1, 3], [3, 2, -1]], np.int32)

# (name, f(m, x, i, v)): x float (4, 5), i int (3,), v float (3, 5).
BATCHED = [
    ("slice", lambda m, x, i, v: x[1:3, ::2] * v[0, 0]),
    ("int_index", lambda m, x, i, v: x[i[0]]),
    ("index_array", lambda m, x, i, v: x[i]),
    ("index_2d", lambda m, x, i, v: x[i, i[::-1]]),
    ("take", lambda m, x, i, v: m.numpy.take(x, i, axis=1)),
    (
        "take_along_axis",
        lambda m, x, i, v: m.numpy.take_along_axis(
            x, m.numpy.stack([i] * 4) % 5, axis=1
        ),
    ),
    ("dynamic_slice", lambda m, x, i, v: m.lax.dynamic_slice(x, (i[0], i[1]), (2, 3))),
    (
        "dynamic_update_slice",
        lambda m, x, i, v: m.lax.dynamic_update_slice(x, v[:2, :3], (i[0], i[1])),
    ),
    ("set", lambda m, x, i, v: x.at[i].set(v)),
    ("set_2d", lambda m, x, i, v: x.at[i[:2], i[1:]].set(v[0, :2])),
    ("add", lambda m, x, i, v: x.at[i].add(v)),
    ("mul", lambda m, x, i, v: x.at[i].mul(v)),
    ("min", lambda m, x, i, v: x.at[i].min(v)),
    ("max", lambda m, x, i, v: x.at[i].max(v)),
    (
        "gather_windows",
        lambda m, x, i, v: m.lax.gather(
            x, _window_starts(m, i), _window_dn(m), (2, 3), mode="clip"
        ),
    ),
    (
        "scatter_add_windows",
        lambda m, x, i, v: m.lax.scatter_add(
            x, _window_starts(m, i), _windows(m, v), _window_scatter_dn(m)
        ),
    ),
    (
        "scatter_windows",
        lambda m, x, i, v: m.lax.scatter(
            x, _window_starts(m, i), _windows(m, v), _window_scatter_dn(m), mode="clip"
        ),
    ),
]


def _window_starts(m, i):
    return m.numpy.stack([i, i[::-1]], 1)


def _windows(m, v):
    return m.numpy.stack([v[:, :3], v[:, 2:]], 1)


IN_AXES = [
    axes
    for axes in itertools.product([0, 1, None], [0, None], [0, 2, None])
    if axes != (None, None, None)
]


def _batched_args(axes, xs=XB, iss=IB, vs=VB, asarray=jnp.asarray):
    """The batched arguments moved to their `in_axes`; unbatched ones are the first
    example of the full batch."""
    return [
        asarray(full[0]) if ax is None else asarray(np.moveaxis(a, 0, ax))
        for a, full, ax in zip((xs, iss, vs), (XB, IB, VB), axes)
    ]


def _loop(f, args, axes, size):
    outs = []
    for b in range(size):
        outs.append(
            f(
                *[
                    a if ax is None else jnp.take(a, b, axis=ax)
                    for a, ax in zip(args, axes)
                ]
            )
        )
    return np.stack([np.asarray(o) for o in outs])


@pytest.mark.parametrize("case", BATCHED, ids=[c[0] for c in BATCHED])
def test_vmap_matches_loop_for_every_in_axes(case):
    _, g = case

    def f(x, i, v):
        return g(JAXLITE, x, i, v)

    for axes in IN_AXES:
        args = _batched_args(axes)
        expected = _loop(f, args, axes, B)
        out = jaxlite.vmap(f, in_axes=axes)(*args)
        check_close(np.asarray(out), expected, err_msg=str(axes))
        out = jaxlite.jit(jaxlite.vmap(f, in_axes=axes))(*args)
        check_close(np.asarray(out), expected, err_msg=f"jit {axes}")


@pytest.mark.parametrize("case", BATCHED, ids=[c[0] for c in BATCHED])
def test_vmap_of_empty_batch_matches_jax(case):
    jm = _jax()
    _, g = case
    xs, iss, vs = XB[:0], IB[:0], VB[:0]
    for axes in [(0, 0, 0), (0, None, None), (None, 0, None), (None, None, 0)]:
        args = _batched_args(axes, xs, iss, vs)
        out = jaxlite.vmap(lambda *a: g(JAXLITE, *a), in_axes=axes)(*args)
        j_args = _batched_args(axes, xs, iss, vs, jm.numpy.asarray)
        ref = jm.jax.vmap(lambda *a: g(jm, *a), in_axes=axes)(*j_args)
        assert out.shape == ref.shape and out.dtype == ref.dtype, axes


@pytest.mark.parametrize("case", BATCHED, ids=[c[0] for c in BATCHED])
def test_vmap_matches_jax(case):
    jm = _jax()
    _, g = case
    for axes in [(0, 0, 0), (1, None, 2), (None, 0, None)]:
        out = jaxlite.vmap(lambda *a: g(JAXLITE, *a), in_axes=axes)(
            *_batched_args(axes)
        )
        j_args = _batched_args(axes, asarray=jm.numpy.asarray)
        ref = jm.jax.vmap(lambda *a: g(jm, *a), in_axes=axes)(*j_args)
        check_close(np.asarray(out), np.asarray(ref), err_msg=str(axes))


@pytest.mark.parametrize("case", BATCHED, ids=[c[0] for c in BATCHED])
def test_vmap_and_grad_compose(case):
    _, g = case

    def loss(x, v, i):
        return jnp.sum(jnp.sin(g(JAXLITE, x, i, v)))

    grad = jaxlite.grad(loss, (0, 1))
    x, v = XB, VB
    per_example = [grad(jnp.asarray(x[b]), jnp.asarray(v[b]), IB[b]) for b in range(B)]
    expected = [np.stack([np.asarray(p[k]) for p in per_example]) for k in range(2)]
    check_close([np.asarray(a) for a in jaxlite.vmap(grad)(x, v, IB)], expected)
    batched_loss = jaxlite.vmap(loss, in_axes=(0, 0, 0))
    check_close(
        [
            np.asarray(a)
            for a in jaxlite.grad(lambda x, v: jnp.sum(batched_loss(x, v, IB)), (0, 1))(
                x, v
            )
        ],
        expected,
    )


def test_nested_vmap_of_gather_and_scatter():
    xs = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    idx = RNG.integers(0, 4, (2, 3, 6)).astype(np.int32)
    vs = RNG.standard_normal((2, 3, 6, 5)).astype(np.float32)

    def f(x, i, v):
        return x[i] + x.at[i].add(v)[i[::-1]]

    out = jaxlite.vmap(jaxlite.vmap(f))(xs, idx, vs)
    expected = np.stack(
        [
            np.stack(
                [
                    np.asarray(f(jnp.asarray(xs[a, b]), idx[a, b], vs[a, b]))
                    for b in range(3)
                ]
            )
            for a in range(2)
        ]
    )
    check_close(np.asarray(out), expected)
    check_grads(
        lambda x, v: jaxlite.vmap(jaxlite.vmap(f))(x, idx, v), (xs, vs), order=1
    )


def test_vmap_of_grad_of_dynamic_index():
    xs = RNG.standard_normal((4, 6)).astype(np.float32)
    idx = np.array([0, 5, 9, -2], np.int32)

    def loss(x, i):
        return jnp.sum(x[i] * x) + jnp.sum(lax.dynamic_slice(x, (i,), (3,)) ** 2)

    out = jaxlite.vmap(jaxlite.grad(loss))(xs, idx)
    expected = np.stack(
        [np.asarray(jaxlite.grad(loss)(xs[b], idx[b])) for b in range(4)]
    )
    check_close(np.asarray(out), expected)
    jm = _jax()
    ref = jm.jax.vmap(
        jm.jax.grad(
            lambda x, i: (
                (x[i] * x).sum() + (jm.lax.dynamic_slice(x, (i,), (3,)) ** 2).sum()
            )
        )
    )(xs, idx)
    check_close(np.asarray(out), np.asarray(ref))


# ----------------------------------------------------------------------------------------
# Staged forms


def test_transpose_of_strided_slice_pads_like_jax():
    text = str(
        jaxlite.make_jaxpr(jaxlite.grad(lambda x: jnp.sum(x[1:5:2])))(jnp.ones(7))
    )
    assert "pad[padding_config=((1, 3, 1),)]" in text


def test_vmap_of_dynamic_slice_with_batched_index_is_a_clipped_gather():
    text = str(
        jaxlite.make_jaxpr(jaxlite.vmap(lambda x, i: lax.dynamic_slice(x, (i,), (2,))))(
            jnp.ones((4, 5)), jnp.arange(4)
        )
    )
    assert "gather[" in text and "mode=GatherScatterMode.CLIP" in text
    assert "operand_batching_dims=(0,)" in text
