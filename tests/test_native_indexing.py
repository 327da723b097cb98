"""Native gather and the scatter family (backend/native/indexing_ops.py), issue 15.

Each program is written once over a module pair `(jnp, lax)` and run three ways: the
jaxpr compiled by the native backend (`native.compile` must accept it), jit on the
NumPy backend, and real JAX. Values are small integers (also as floats), so sums of
repeated updates are exact in every order and the comparisons are exact.
"""

from __future__ import annotations

import numpy as np
import pytest

import jaxlite
import jaxlite.lax as llax
import jaxlite.numpy as ljnp
from jaxlite.config import config

pytest.importorskip("llvmlite")

from jaxlite.backend import native  # noqa: E402


def _native(f, *args):
    closed = jaxlite.make_jaxpr(f)(*args)
    ex = native.compile(closed)
    assert ex is not None, "the native backend left this program to NumPy"
    return [np.asarray(o) for o in ex(*args)]


def _numpy_backend(f, *args):
    config.update("jaxlite_backend", "numpy")  # conftest restores the configuration
    out = jaxlite.jit(f)(*args)
    return [np.asarray(o) for o in jaxlite.tree_util.tree_leaves(out)]


def _real_jax(prog, *args):
    jax = pytest.importorskip("jax")
    out = jax.jit(prog(jax.numpy, jax.lax, jax))(*args)
    return [np.asarray(o) for o in jax.tree_util.tree_leaves(out)]


def check(prog, *args, against_jax=True):
    """`prog(jnp, lax, jax)` returns the function to run on `args` (NumPy arrays)."""
    f = prog(ljnp, llax, jaxlite)
    got = _native(f, *args)
    want = _numpy_backend(f, *args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
    if against_jax:
        for g, w in zip(got, _real_jax(prog, *args)):
            assert g.shape == w.shape
            np.testing.assert_array_equal(g, w.astype(g.dtype))
    return got


X = np.arange(20, dtype=np.float32).reshape(4, 5) - 7
XI = (np.arange(20, dtype=np.int32).reshape(4, 5) * 7) % 11 - 5


# ----------------------------------------------------------------------------------------
# gather through jnp indexing


@pytest.mark.parametrize("x", [X, XI], ids=["f32", "i32"])
def test_rows_columns_and_pairs(x):
    rows = np.array([2, 0, 3, 3, 1], np.int32)
    cols = np.array([4, 0, 2], np.int32)
    check(lambda jnp, lax, jax: lambda x, i: x[i], x, rows)
    check(lambda jnp, lax, jax: lambda x, j: x[:, j], x, cols)
    check(lambda jnp, lax, jax: lambda x, i, j: x[i, j], x, rows[:3], cols)
    check(lambda jnp, lax, jax: lambda x, i, j: x[i[:, None], j], x, rows, cols)


def test_negative_and_out_of_bounds_indices_clamp():
    # Negative indices count from the end; past the ends jnp's gather clamps.
    i = np.array([-1, -4, 3, 7, -9, 100], np.int32)
    (out,) = check(lambda jnp, lax, jax: lambda x, i: x[i], X, i)
    np.testing.assert_array_equal(out, X[[3, 0, 3, 3, 0, 3]])
    check(lambda jnp, lax, jax: lambda x, i: x[1, i], X, i)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int64, np.uint32])
def test_index_dtypes(dtype):
    big = {np.uint8: 200, np.int8: 100}.get(dtype, 9)  # past the end: clamps
    i = np.array([1, 0, 3, big, -2 if np.dtype(dtype).kind == "i" else 2], dtype)
    if dtype == np.int64:
        with jaxlite.enable_x64(True):
            check(lambda jnp, lax, jax: lambda x, i: x[i], X, i, against_jax=False)
        return
    check(lambda jnp, lax, jax: lambda x, i: x[i], X, i)


def test_take_fill_mode():
    i = np.array([0, 4, 5, -1, -6, 2], np.int32)
    (out,) = check(
        lambda jnp, lax, jax: lambda x, i: jnp.take(x, i, axis=1, mode="fill"), X, i
    )
    # -1 wraps to the last column; 5 and -6 are out of bounds and read NaN.
    assert np.isnan(out[:, [2, 4]]).all() and not np.isnan(out[:, [0, 1, 3, 5]]).any()
    check(
        lambda jnp, lax, jax: (
            lambda x, i: jnp.take(x, i, axis=0, mode="fill", fill_value=-99)
        ),
        XI,
        i,
    )
    # The integer default fill is the lowest value of the dtype.
    (out,) = check(
        lambda jnp, lax, jax: lambda x, i: jnp.take(x, i, mode="fill"), XI, i * 5
    )
    np.testing.assert_array_equal(out[[2, 4]], np.iinfo(np.int32).min)


def test_take_along_axis():
    idx = np.array([[0, 4, 1, 1, 3], [2, 2, 0, 4, 1], [3, 0, 0, 0, 4], [1, 1, 1, 2, 0]])
    idx = idx.astype(np.int32)
    check(lambda jnp, lax, jax: lambda x, i: jnp.take_along_axis(x, i, axis=1), X, idx)
    check(
        lambda jnp, lax, jax: lambda x, i: jnp.take_along_axis(x, i[:3] - 1, axis=0),
        X,
        idx,
    )


def test_vmap_of_indexing():
    i = np.array([3, 0, -1, 2, 9], np.int32)
    # Batched index only (the operand is shared), and both batched: the gather gets
    # operand batching dimensions.
    check(lambda jnp, lax, jax: jax.vmap(lambda x, i: x[i], (None, 0)), X, i)
    check(lambda jnp, lax, jax: jax.vmap(lambda x, i: x[i]), X, i[:4])
    check(lambda jnp, lax, jax: jax.vmap(lambda r, j: r[j]), X, np.array([[0, 4]] * 4))
    u = np.arange(4, dtype=np.float32) + 1
    check(
        lambda jnp, lax, jax: jax.vmap(lambda r, j, u: r.at[j].add(u)),
        X,
        i[:4],
        u,
    )


# ----------------------------------------------------------------------------------------
# scatter through .at[]


DUPS = np.array([1, 3, 1, 0, 1, 3], np.int32)


@pytest.mark.parametrize("method", ["add", "mul", "min", "max"])
@pytest.mark.parametrize("x", [X, XI], ids=["f32", "i32"])
def test_at_with_repeated_indices(method, x):
    u = (
        np.array([[2, -1, 3, 1, 2]]) * np.array([[1], [2], [-1], [1], [3], [1]])
    ).astype(x.dtype)

    def prog(jnp, lax, jax):
        return lambda x, i, u: getattr(x.at[i], method)(u)

    (out,) = check(prog, x, DUPS, u)
    if method == "add":  # every duplicate accumulates
        np.testing.assert_array_equal(out[1], x[1] + u[0] + u[2] + u[4])


def test_at_set():
    u = np.arange(30, dtype=np.float32).reshape(6, 5)
    # Distinct values at a repeated index: the last write wins, as on the NumPy backend
    # (which update XLA keeps is not specified, so JAX is asked only about unique ones).
    (out,) = check(
        lambda jnp, lax, jax: lambda x, i, u: x.at[i].set(u),
        X,
        DUPS,
        u,
        against_jax=False,
    )
    np.testing.assert_array_equal(out[1], u[4])
    check(
        lambda jnp, lax, jax: lambda x, i, u: x.at[i].set(u),
        X,
        np.array([2, 0], np.int32),
        u[:2],
    )
    check(
        lambda jnp, lax, jax: lambda x, i, j: x.at[i, j].set(-1.0),
        X,
        np.array([2, 0, 2], np.int32),
        np.array([1, 1, 1], np.int32),
    )


def test_scatter_out_of_bounds_is_dropped():
    i = np.array([1, 4, -5, 9, 2], np.int32)  # 4, -5 and 9 are out of bounds
    u = np.ones((5, 5), np.float32) * 10
    (out,) = check(lambda jnp, lax, jax: lambda x, i, u: x.at[i].add(u), X, i, u)
    np.testing.assert_array_equal(out[[0, 3]], X[[0, 3]])
    check(lambda jnp, lax, jax: lambda x, i, u: x.at[i].set(u), X, i, u)
    check(lambda jnp, lax, jax: lambda x, i, u: x.at[i].add(u, mode="clip"), X, i, u)


def test_scatter_booleans():
    x = np.array([True, False, False, True])
    i = np.array([1, 2, 1, 7], np.int32)
    u = np.array([True, False, True, True])
    check(lambda jnp, lax, jax: lambda x, i, u: x.at[i].set(u), x, i[2:], u[2:])
    check(lambda jnp, lax, jax: lambda x, i, u: x.at[i].max(u), x, i, u)
    check(lambda jnp, lax, jax: lambda x, i, u: x.at[i].min(u), x, i, u)


# ----------------------------------------------------------------------------------------
# lax.gather and lax.scatter in general form: windows, modes, operand batching dims


def test_general_gather_windows():
    x = np.arange(42, dtype=np.float32).reshape(6, 7)
    idx = np.array([[0, 0], [4, 5], [-1, 2], [5, 6], [3, 1]], np.int32)

    def prog(mode):
        def make(jnp, lax, jax):
            dn = lax.GatherDimensionNumbers(
                offset_dims=(0, 2), collapsed_slice_dims=(), start_index_map=(1, 0)
            )
            return lambda x, i: lax.gather(
                x, i, dn, slice_sizes=(2, 3), mode=mode, fill_value=-1.0
            )

        return make

    for mode in ["clip", "fill", "promise_in_bounds"]:
        (out,) = check(prog(mode), x, idx)
        assert out.shape == (2, 5, 3)
    (out,) = check(prog("fill"), x, idx)
    # Windows starting at column 4, 5 or -1 do not fit (start <= 7 - 3 = 4 is fine):
    # [4, 5] and [5, 6] and [-1, 2] are filled whole.
    assert (
        (out[:, 1] == -1).all() and (out[:, 2] == -1).all() and (out[:, 3] == -1).all()
    )
    assert (out[:, 0] != -1).any()


def test_general_scatter_windows_and_modes():
    x = np.zeros((6, 7), np.int32)
    idx = np.array([[0, 0], [4, 5], [3, 1], [5, 6], [3, 1]], np.int32)
    upd = np.arange(30, dtype=np.int32).reshape(5, 2, 3) + 1

    def prog(name, mode):
        def make(jnp, lax, jax):
            dn = lax.ScatterDimensionNumbers(
                update_window_dims=(1, 2),
                inserted_window_dims=(),
                scatter_dims_to_operand_dims=(0, 1),
            )
            fn = getattr(lax, name)
            return lambda x, i, u: fn(x, i, u, dn, mode=mode)

        return make

    for name in ["scatter_add", "scatter_sub", "scatter_mul", "scatter_max"]:
        for mode in ["clip", "drop"]:
            check(prog(name, mode), x + 1, idx, upd)
    check(prog("scatter", "clip"), x, idx[:3], upd[:3])


def test_scatter_apply_runs_its_function_natively():
    idx = np.array([[1], [3], [1]], np.int32)

    def prog(jnp, lax, jax):
        dn = lax.ScatterDimensionNumbers(
            update_window_dims=(1,),
            inserted_window_dims=(0,),
            scatter_dims_to_operand_dims=(0,),
        )
        return lambda x, i: lax.scatter_apply(
            x, i, lambda v: v * 2 + 1, dn, update_shape=(3, 5)
        )

    (out,) = check(prog, X, idx)
    np.testing.assert_array_equal(out[1], (X[1] * 2 + 1) * 2 + 1)  # applied twice


def test_operand_batching_dims():
    # vmap of a gather and a scatter with both operand and indices batched.
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    i = np.array([[1, 3], [0, 0], [3, 9]], np.int32)
    u = np.ones((3, 2, 5), np.float32)
    check(lambda jnp, lax, jax: jax.vmap(lambda x, i: x[i]), x, i)
    check(lambda jnp, lax, jax: jax.vmap(lambda x, i, u: x.at[i].add(u)), x, i, u)
    check(lambda jnp, lax, jax: jax.vmap(lambda x, i: x[:, i]), x, i)
    closed = jaxlite.make_jaxpr(jaxlite.vmap(lambda x, i, u: x.at[i].add(u)))(x, i, u)
    (eqn,) = [e for e in closed.jaxpr.eqns if e.primitive.name == "scatter-add"]
    assert eqn.params["dimension_numbers"].operand_batching_dims == (0,)


# ----------------------------------------------------------------------------------------
# Inside loops


def test_histogram_in_fori_loop():
    idx = np.array([3, 1, 3, 0, 3, 2, 1, 9, -1], np.int32)
    w = np.arange(9, dtype=np.float32)

    def prog(jnp, lax, jax):
        def f(idx, w):
            def body(k, h):
                return h.at[idx[k]].add(w[k])

            return lax.fori_loop(0, idx.shape[0], body, jnp.zeros(4, jnp.float32))

        return f

    (out,) = check(prog, idx, w)
    # -1 counts from the end; 9 is dropped.
    np.testing.assert_array_equal(out, [3, 1 + 6, 5, 0 + 2 + 4 + 8])


def test_gather_and_scatter_in_scan():
    table = np.arange(10, dtype=np.int32) * 3
    idx = np.array([2, 7, 2, 0, 11, 5], np.int32)

    def prog(jnp, lax, jax):
        def f(table, idx):
            def step(carry, i):
                counts, total = carry
                v = table[i]  # out of bounds clamps
                counts = counts.at[i].add(1)  # out of bounds is dropped
                return (counts, total + v), v * 2

            init = (jnp.zeros(10, jnp.int32), jnp.int32(0))
            return lax.scan(step, init, idx)

        return f

    counts, total, ys = check(prog, table, idx)
    assert counts[2] == 2 and counts.sum() == 5
    np.testing.assert_array_equal(ys, table[np.minimum(idx, 9)] * 2)


# ----------------------------------------------------------------------------------------
# What stays on NumPy


def test_boolean_scatter_sub_stays_on_numpy():
    x = np.array([True, False])

    def f(x, i, u):
        dn = llax.ScatterDimensionNumbers((), (0,), (0,))
        return llax.scatter_sub_p.bind(
            x,
            i,
            u,
            dimension_numbers=dn,
            indices_are_sorted=False,
            mode=llax.GatherScatterMode.FILL_OR_DROP,
            unique_indices=False,
            update_consts=(),
            update_jaxpr=None,
        )

    closed = jaxlite.make_jaxpr(f)(x, np.array([[1]], np.int32), np.array([True]))
    assert native.compile(closed) is None
