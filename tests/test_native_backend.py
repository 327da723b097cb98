"""The native backend (jaxprs to machine code through LLVM) against the NumPy backend
and real JAX, and the tiering policy that decides which loops it runs.

Each program is compiled natively as a whole (`backend.native.compile` must accept
it), run on the same inputs as the NumPy backend's `jit` and JAX's `jit`, and the
results compared: exactly for integer and boolean results, within float tolerance
otherwise (the native backend's transcendental functions may round differently from
NumPy's by an ulp or two).
"""

import logging
import subprocess
import sys
import textwrap
import traceback

import numpy as np
import pytest

pytest.importorskip("llvmlite")

import jaxlite  # noqa: E402
import jaxlite.numpy as jnp  # noqa: E402
from jaxlite import lax  # noqa: E402
from jaxlite.backend import native, tiering  # noqa: E402
from jaxlite.config import override  # noqa: E402
from jaxlite.interpreters.physical import physicalize  # noqa: E402

RNG = np.random.default_rng(0)


def _f32(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def _lorenz(jx):
    jn = jx.numpy

    def rhs(s):
        x, y, z = s[0], s[1], s[2]
        return jn.array([10.0 * (y - x), x * (28.0 - z) - y, x * y - 8 / 3 * z])

    def step(i, s):
        dt = 0.01
        k1 = rhs(s)
        k2 = rhs(s + dt / 2 * k1)
        k3 = rhs(s + dt / 2 * k2)
        k4 = rhs(s + dt * k3)
        return s + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    return lambda s: jx.lax.fori_loop(0, 200, step, s)


def _ema(jx):
    def f(xs):
        def step(c, x):
            c = 0.9 * c + 0.1 * x
            return c, c * 2.0

        return jx.lax.scan(step, jx.numpy.float32(0.0), xs)

    return f


def _newton(jx):
    jn = jx.numpy

    def f(a):
        def cond(c):
            return (jn.abs(c[1] * c[1] - a) > 1e-6 * a) & (c[0] < 50)

        def body(c):
            return c[0] + 1, 0.5 * (c[1] + a / c[1])

        return jx.lax.while_loop(cond, body, (0, a))

    return f


def _newton_vmap(jx):
    return jx.vmap(_newton(jx))


def _heat(jx):
    jn = jx.numpy

    def f(u):
        def step(i, u):
            return u + 0.1 * (jn.roll(u, 1) - 2 * u + jn.roll(u, -1))

        return jx.lax.fori_loop(0, 100, step, u)

    return f


def _nbody(jx):
    jn = jx.numpy

    def f(x, v):
        def step(i, c):
            x, v = c
            d = x[None, :, :] - x[:, None, :]
            r2 = jn.sum(d * d, -1) + 0.01
            a = jn.sum(d / (r2 * jn.sqrt(r2))[..., None], 1)
            v = v + 0.001 * a
            return x + 0.001 * v, v

        return jx.lax.fori_loop(0, 50, step, (x, v))

    return f


def _grad_loop(jx):
    jn = jx.numpy

    def loss(p, s):
        def step(i, s):
            return s + 0.01 * jn.sin(p * s) * jn.cos(s)

        return jn.sum(jx.lax.fori_loop(0, 100, step, s) ** 2)

    return jx.grad(loss, argnums=(0, 1))


def _cond_in_loop(jx):
    jn = jx.numpy

    def f(x):
        def step(c, i):
            branch = jx.lax.rem(i, 3)
            c = jx.lax.switch(branch, [jn.sin, jn.cos, lambda c: c * 0.5], c)
            y = jx.lax.cond(c.sum() > 0, lambda c: c + 1.0, lambda c: c - 1.0, c)
            return y, jn.argmax(y)

        return jx.lax.scan(step, x, jn.arange(20))

    return f


def _reductions(jx):
    jn = jx.numpy

    def f(x):
        return (
            x.sum(0),
            x.max(1),
            x.min(),
            jn.prod(x[:2], 1),
            jn.argmax(x, 1),
            jn.argmin(x, 0),
            jn.cumsum(x, 1),
            jn.cumprod(x[:, :3], 0),
            jx.lax.cummax(x, axis=0, reverse=True),
            (x > 0).any(1),
            (x > -2).all(0),
        )

    return f


def _shapes(jx):
    jn = jx.numpy
    lax_ = jx.lax

    def f(x, i):
        y = jn.transpose(x).reshape(3, 8)[::-1, 1::2]
        z = lax_.pad(x, 0.5, ((1, 2, 1), (0, -1, 0)))
        w = lax_.dynamic_slice(x, (i, i + 1), (2, 3))
        u = lax_.dynamic_update_slice(x, jn.ones((2, 2), x.dtype), (i + 5, -1))
        c = jn.concatenate([x, 2 * x], axis=1)
        s = jn.stack([x[0], x[1]], axis=1)
        t = jn.split(x, [1, 3], axis=0)
        return y, z, w, u, c, s, t[1], jax_iota(jx, x.dtype)

    return f


def jax_iota(jx, dtype):
    return jx.lax.broadcasted_iota(dtype, (3, 4), 1) + jx.lax.iota(dtype, 3)[:, None]


def _dots(jx):
    jn = jx.numpy

    def f(a, b, c):
        return a @ b, jn.einsum("bij,bjk->bik", c, c), jn.dot(a[0], b[:, 0])

    return f


def _integer_semantics(jx):
    lax_ = jx.lax

    def f(x, y, s):
        return (
            lax_.div(x, y),
            lax_.rem(x, y),
            lax_.shift_left(x, s),
            lax_.shift_right_logical(x, s),
            lax_.shift_right_arithmetic(x, s),
            lax_.max(x, y),
            lax_.sign(x),
            x // jx.numpy.int32(3),
            lax_.population_count(x),
        )

    return f


def _float_semantics(jx):
    lax_ = jx.lax
    jn = jx.numpy

    def f(x, y):
        return (
            lax_.max(x, y),
            lax_.min(x, y),
            x < y,
            x != y,
            lax_.convert_element_type(x * 1e10, jn.int32),
            lax_.convert_element_type(x * 1e3, jn.uint8),
            lax_.convert_element_type(x, jn.bool_),
            lax_.round(x * 10, lax_.RoundingMethod.TO_NEAREST_EVEN),
            lax_.round(x * 10),
            lax_.sign(x),
            lax_.is_finite(x / y),
            lax_.rem(x, y),
            lax_.clamp(-0.5, x, 0.5),
            jn.where(x > 0, x, y),
            lax_.integer_pow(x, -3),
            lax_.select_n(jn.int32(1), x, y, x + y),
        )

    return f


def _custom_rules(jx):
    jn = jx.numpy

    @jx.custom_jvp
    def soft(x):
        return jn.log1p(jn.exp(x))

    soft.defjvp(lambda p, t: (soft(p[0]), t[0] * jx.nn.sigmoid(p[0])))

    @jx.custom_vjp
    def clip_grad(x):
        return x

    clip_grad.defvjp(lambda x: (x, None), lambda _, g: (jn.clip(g, -1.0, 1.0),))

    def f(x):
        def step(c, _):
            return soft(clip_grad(c)) * 0.5, None

        return jx.lax.scan(step, x, None, length=10)[0]

    return jx.value_and_grad(lambda x: f(x).sum())


def _random_in_loop(jx):
    def f(key):
        def step(carry, _):
            key, x = carry
            key, k1, k2 = jx.random.split(key, 3)
            p = x + jx.random.normal(k1, (2,))
            accept = jx.numpy.log(jx.random.uniform(k2)) < -0.5 * (p @ p - x @ x)
            x = jx.numpy.where(accept, p, x)
            return (key, x), x

        return jx.lax.scan(step, (key, jx.numpy.zeros(2)), None, length=50)

    return f


def _big_carry(jx):
    # Carries over 65,536 elements are double-buffered: the two swap every step.
    def f(u, v):
        def step(i, c):
            u, v = c
            return v * 0.5 + jx.numpy.roll(u, 1), u - 1.0

        return jx.lax.fori_loop(0, 5, step, (u, v))

    return f


def _middle_reductions(jx):
    # Reductions over axes before small trailing ones accumulate a tile of outputs at
    # once (array_ops: `Reduction.tile`); float, integer, max and a two-axis case.
    jn = jx.numpy

    def f(x, k):
        return (
            jn.sum(x, axis=1),
            jn.max(x * 2.0, axis=(0, 1)),
            jn.sum(x[:, :, :2], axis=0),
            jn.prod(x[:3, :4], axis=1),
            jn.sum(k, axis=1),
            jn.min(k, axis=0),
            jn.sum(x.reshape(16, 2, 6), axis=1) + 1.0,  # 6 > 3: not tiled
            jn.sum(jn.sum(x, axis=1), axis=0),
        )

    return f


def _concat_cuts(jx):
    # Loops over a concatenation's last axis are split where its pieces meet
    # (compiler: `loop_nest` cuts); 2-d rolls, three pieces, a piece inside a sum.
    jn = jx.numpy

    def f(u, v):
        def step(i, c):
            u, v = c
            u = u + 0.1 * (jn.roll(u, 2, axis=1) - 2 * u + jn.roll(u, -3, axis=1))
            v = 0.5 * jn.concatenate([v[:, 5:], v[:, :1] * 2.0, v[:, 1:5]], axis=1)
            w = jn.concatenate([u, v], axis=0)  # a cut on a leading axis
            return u + 0.01 * w[3:, :].sum(), v + jn.roll(u, 1, axis=0)

        return jx.lax.fori_loop(0, 20, step, (u, v))

    return f


PROGRAMS = {
    "middle_reductions": (
        _middle_reductions,
        lambda: (_f32(16, 4, 3), RNG.integers(-50, 50, (5, 7, 2)).astype(np.int32)),
    ),
    "concat_cuts": (_concat_cuts, lambda: (_f32(3, 37), _f32(3, 37))),
    "big_carry": (_big_carry, lambda: (_f32(70_000), _f32(70_000))),
    "lorenz": (_lorenz, lambda: (np.array([1.0, 1.0, 1.0], np.float32),)),
    "ema": (_ema, lambda: (_f32(500),)),
    "newton": (_newton, lambda: (np.float32(7.5),)),
    "newton_vmap": (_newton_vmap, lambda: (np.linspace(1, 50, 64, dtype=np.float32),)),
    "heat": (_heat, lambda: (_f32(64),)),
    "nbody": (_nbody, lambda: (_f32(8, 3), _f32(8, 3, scale=0.1))),
    "grad_loop": (_grad_loop, lambda: (np.float32(1.3), _f32(5))),
    "cond_in_loop": (_cond_in_loop, lambda: (_f32(4),)),
    "reductions": (_reductions, lambda: (_f32(4, 6),)),
    "shapes": (_shapes, lambda: (_f32(4, 6), np.int32(1))),
    "dots": (_dots, lambda: (_f32(3, 5), _f32(5, 2), _f32(2, 4, 4))),
    "integer_semantics": (
        _integer_semantics,
        lambda: (
            np.array([7, -7, np.iinfo(np.int32).min, 0, 5, -1], np.int32),
            np.array([2, 0, -1, 0, -3, 7], np.int32),
            np.array([1, 31, 32, 40, -1, 3], np.int32),
        ),
    ),
    "float_semantics": (
        _float_semantics,
        lambda: (
            np.array([1.5, -0.0, np.nan, np.inf, -2.5, 0.25, 3e-3], np.float32),
            np.array([np.nan, 0.0, 1.0, -np.inf, -2.5, 0.0, 7.0], np.float32),
        ),
    ),
    "custom_rules": (_custom_rules, lambda: (_f32(3),)),
    "random_in_loop": (_random_in_loop, lambda: (np.array([0, 42], np.uint32),)),
}


def _compare(actual, expected, name):
    for a, e in zip(_leaves(actual), _leaves(expected), strict=True):
        a, e = np.asarray(a), np.asarray(e)
        assert a.shape == e.shape and a.dtype == e.dtype, name
        if e.dtype.kind in "biu":
            np.testing.assert_array_equal(a, e, err_msg=name)
        else:
            np.testing.assert_allclose(a, e, rtol=2e-5, atol=1e-6, err_msg=name)


def _leaves(tree):
    return jaxlite.tree_util.tree_leaves(tree)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_native_matches_numpy_backend_and_jax(name):
    make, make_args = PROGRAMS[name]
    f, args = make(jaxlite), make_args()
    # As `backend.compile` hands it to a backend: keys as their uint32 data.
    closed = physicalize(jaxlite.make_jaxpr(f)(*args))
    exe = native.compile(closed)
    assert exe is not None, f"{name} did not compile natively"
    flat_args = _leaves(args)
    native_out = exe(*flat_args)
    with override("jaxlite_backend", "numpy"):
        numpy_out = _leaves(jaxlite.jit(f)(*args))
    _compare(native_out, numpy_out, name)
    with override("jaxlite_backend", "native"):
        _compare(_leaves(jaxlite.jit(f)(*args)), numpy_out, name)
    jax = pytest.importorskip("jax")
    jax_out = jax.jit(make(jax))(*args)
    _compare(native_out, _leaves(jax_out), name)


def test_lowered_text_is_llvm_ir_in_native_mode():
    f = jaxlite.jit(lambda x: lax.fori_loop(0, 3, lambda i, x: x * 2.0, x))
    with override("jaxlite_backend", "native"):
        text = f.lower(np.float32(1.0)).as_text()
        assert "define" in text and "ret i32 0" in text
        assert f(np.float32(1.5)) == 12.0


# ----------------------------------------------------------------------------------------
# Tiering


@pytest.fixture
def native_log(caplog):
    caplog.set_level(logging.WARNING, logger="jaxlite.backend.native")
    with override("jaxlite_native_log", True):
        yield caplog


@pytest.fixture
def loops_only(monkeypatch):
    """Whole jitted functions never turn native (TieredFunction): these tests count
    the compiles of a loop, however slow the machine."""
    monkeypatch.setattr(tiering.TieredFunction, "MIN_CALLS", float("inf"))


def _compiled(caplog, name):
    return [r for r in caplog.records if f"compiled natively: {name}" in r.message]


def test_a_long_scan_runs_natively_from_its_first_call(native_log, loops_only):
    xs = _f32(50_000)
    f = jaxlite.jit(_ema(jaxlite))
    with override("jaxlite_backend", "auto"):
        out = f(xs)
    assert len(_compiled(native_log, "scan")) == 1
    with override("jaxlite_backend", "numpy"):
        _compare(out, jaxlite.jit(_ema(jaxlite))(xs), "ema")


def test_a_hot_scan_runs_its_carry_free_work_first_on_numpy(native_log, loops_only):
    # `u @ x_t` does not depend on the carry: it runs before the native loop as one
    # product over all steps; `w @ h` stays in the loop.
    w, u, xs = _f32(8, 8, scale=0.3), _f32(8, 8, scale=0.3), _f32(3000, 8)

    def rnn(jx):
        def f(w, u, h, xs):
            def cell(h, x):
                h = jx.numpy.tanh(w @ h + u @ x)
                return h, h.sum()

            return jx.lax.scan(cell, h, xs)

        return f

    h0 = np.zeros(8, np.float32)
    with override("jaxlite_backend", "auto"):
        out = jaxlite.jit(rnn(jaxlite))(w, u, h0, xs)
    assert len(_compiled(native_log, "scan")) == 1
    with override("jaxlite_backend", "numpy"):
        _compare(out, jaxlite.jit(rnn(jaxlite))(w, u, h0, xs), "rnn")
    jax = pytest.importorskip("jax")
    _compare(out, jax.jit(rnn(jax))(w, u, h0, xs), "rnn")


def test_a_short_scan_stays_on_numpy_until_hot(native_log, loops_only):
    xs = _f32(10)
    f = jaxlite.jit(_ema(jaxlite))
    (scan,) = [e for e in jaxlite.make_jaxpr(f)(xs).eqns[0].params["jaxpr"].eqns]
    body = scan.params["jaxpr"]
    per_call = 10 * tiering.work(body)
    calls = -(-tiering.compile_cost([body]) // per_call)  # rent until it pays to buy
    with override("jaxlite_backend", "auto"):
        for _ in range(calls - 1):
            f(xs)
        assert not _compiled(native_log, "scan")
        f(xs)
        out = f(xs)
    assert len(_compiled(native_log, "scan")) == 1
    with override("jaxlite_backend", "numpy"):
        _compare(out, jaxlite.jit(_ema(jaxlite))(xs), "ema")


def test_a_hot_while_loop_continues_natively_from_its_carry(native_log, loops_only):
    def f(n):
        return lax.while_loop(
            lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.0001 + 1.0), (0, 0.0)
        )

    with override("jaxlite_backend", "auto"):
        i, x = jaxlite.jit(f)(100_000)
    assert len(_compiled(native_log, "while")) == 1
    assert int(i) == 100_000
    with override("jaxlite_backend", "numpy"):
        j, y = jaxlite.jit(f)(100_000)
    assert int(j) == 100_000
    np.testing.assert_allclose(x, y, rtol=1e-4)


def test_host_callbacks_in_a_native_loop_keep_order_and_values(native_log):
    seen = []

    def f(x):
        def step(c, i):
            jaxlite.debug.callback(lambda i, v: seen.append((int(i), float(v))), i, c)
            y = jaxlite.pure_callback(
                lambda v: np.cos(v).astype(np.float32),
                jaxlite.ShapeDtypeStruct((), np.float32),
                c,
            )
            return c + y, y

        return lax.scan(step, x, jnp.arange(3))

    with override("jaxlite_backend", "native"):
        c, ys = jaxlite.jit(f)(np.float32(1.0))
    assert _compiled(native_log, "f")
    expected, ref = [], np.float32(1.0)
    for i in range(3):
        expected.append((i, float(ref)))
        ref = ref + np.cos(ref)
    assert [i for i, _ in seen] == [0, 1, 2]
    np.testing.assert_allclose(
        [v for _, v in seen], [v for _, v in expected], rtol=1e-6
    )
    np.testing.assert_allclose(c, ref, rtol=1e-6)


class _Boom(ValueError):
    pass


def test_an_exception_in_a_native_host_call_keeps_its_type_and_traceback():
    def bad(v):
        if v > 2:
            raise _Boom("too big")
        return v

    def f(x):
        def step(c, _):
            y = jaxlite.pure_callback(bad, jaxlite.ShapeDtypeStruct((), np.float32), c)
            return y + 1.0, None

        return lax.scan(step, x, None, length=5)[0]

    with override("jaxlite_backend", "native"):
        with pytest.raises(_Boom, match="_Boom: too big") as info:
            jaxlite.jit(f)(np.float32(0.0))
    # As on the NumPy backend: a JaxRuntimeError too, caused by the original.
    assert isinstance(info.value, jaxlite.errors.JaxRuntimeError)
    original = info.value.__cause__
    assert type(original) is _Boom
    frames = traceback.extract_tb(original.__traceback__)
    assert any(frame.name == "bad" for frame in frames)


def test_a_loop_the_native_backend_cannot_compile_stays_on_numpy_and_says_why(
    native_log,
):
    def f(m):
        return lax.fori_loop(0, 3, lambda i, m: jnp.linalg.inv(m) * 0.5, m)

    m = np.eye(3, dtype=np.float32) * 2
    with override("jaxlite_backend", "native"):
        out = jaxlite.jit(f)(m)
    np.testing.assert_allclose(out, np.eye(3) * 0.25, rtol=1e-6)
    assert any("left to NumPy" in r.message for r in native_log.records)


def test_backend_option_rejects_unknown_values():
    with pytest.raises(ValueError, match="must be one of 'auto', 'numpy' or 'native'"):
        jaxlite.config.update("jaxlite_backend", "llvm")


def test_without_llvmlite_everything_runs_on_numpy():
    script = textwrap.dedent(
        """
        import sys
        sys.modules["llvmlite"] = None  # as if it were not installed
        import numpy as np
        import jaxlite
        from jaxlite import lax
        from jaxlite.backend import native, tiering
        assert not native.available() and tiering.mode() == "numpy"
        f = jaxlite.jit(lambda x: lax.fori_loop(0, 30_000, lambda i, x: x * 0.5 + 1.0, x))
        print(float(f(np.float32(0.0))))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={"JAXLITE_BACKEND": "native", "PATH": ""},
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert float(out.stdout) == 2.0


def test_the_persistent_cache_skips_llvm_on_a_second_run(tmp_path):
    script = textwrap.dedent(
        """
        import logging, sys
        import numpy as np
        import jaxlite
        from jaxlite import lax
        logging.basicConfig(format="%(message)s")
        f = jaxlite.jit(lambda x: lax.fori_loop(0, 50_000, lambda i, x: x * 0.5 + 1.0, x))
        print(float(f(np.float32(0.0))))
        """
    )
    env = {
        "JAX_COMPILATION_CACHE_DIR": str(tmp_path),
        "JAXLITE_NATIVE_LOG": "1",
        "PATH": "",
    }
    runs = [
        subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        for _ in range(2)
    ]
    assert [r.returncode for r in runs] == [0, 0], runs[1].stderr
    assert [float(r.stdout) for r in runs] == [2.0, 2.0]
    assert "compiled natively: scan" in runs[0].stderr
    assert "loaded from the compilation cache: scan" in runs[1].stderr
    assert list((tmp_path / "jaxlite-native").glob("*.o"))


# -- whole jitted functions (tiering.TieredFunction) --------------------------------------


def _tiered(f, *args):
    """The executable `jit` compiled for `f(*args)` (called once, under "auto")."""
    with override("jaxlite_backend", "auto"):
        f(*args)
    ((_, exe, _, _),) = f._cache.values()
    return exe


def _erf():
    """A new `jit(erf)` and its input (jit(lax.erf) itself shares one cache)."""

    def erf(x):
        return lax.erf(x)

    return jaxlite.jit(erf), jnp.asarray(np.linspace(-3, 3, 100, dtype=np.float32))


def test_a_jitted_function_starts_on_numpy_and_is_timed():
    f, x = _erf()
    exe = _tiered(f, x)
    assert isinstance(exe, tiering.TieredFunction)
    assert exe.native is None and exe.entry == exe._rent
    assert 0 < exe.spent < exe.hot and exe.calls == 1


@pytest.mark.parametrize("chosen", ["numpy", "native"])
def test_a_hot_function_keeps_the_faster_tier(native_log, chosen):
    f, x = _erf()
    exe = _tiered(f, x)
    exe.hot = 0  # hot already
    with override("jaxlite_backend", "auto"):
        f(x)  # the second call: still too early to compile (MIN_CALLS)
        assert exe.native is None
        f(x)
        assert _compiled(native_log, "erf") and exe.entry == exe._trial
        # Each tier's best call in the trial (ns), made to lose against the other.
        if chosen == "numpy":
            exe.best = 0
        else:
            exe.native_best = -1
        outs = [f(x) for _ in range(2 * exe.TRIALS)]
    winner = exe.native if chosen == "native" else exe.numpy
    assert exe.entry == winner.entry
    assert (chosen == "native") == exe.source.lstrip().startswith(
        ("; ModuleID", "target")
    )
    with override("jaxlite_backend", "numpy"):
        expected = np.asarray(jaxlite.jit(lax.erf)(x))
    for out in [*outs, f(x)]:  # the trial calls and the chosen tier's agree
        np.testing.assert_allclose(np.asarray(out), expected, rtol=2e-6, atol=1e-7)


def test_a_function_native_code_cannot_compile_stays_on_numpy(native_log):
    f = jaxlite.jit(lambda x: jnp.fft.fft(x).real * 2.0)
    x = _f32(16)
    exe = _tiered(f, x)
    exe.hot = 0
    with override("jaxlite_backend", "auto"):
        for _ in range(exe.MIN_CALLS + 1):
            out = f(x)
    assert exe.native is None and exe.entry == exe.numpy.entry
    assert any("left to NumPy" in r.message for r in native_log.records)
    np.testing.assert_allclose(np.asarray(out), np.fft.fft(x).real * 2, rtol=1e-5)


def test_a_function_that_only_calls_the_host_is_not_tiered():
    def f(x):
        return jaxlite.pure_callback(np.sin, jaxlite.ShapeDtypeStruct((3,), x.dtype), x)

    exe = _tiered(jaxlite.jit(f), _f32(3))
    assert not isinstance(exe, tiering.TieredFunction)


def test_erf_turns_native_under_repeated_calls_and_matches_jax_bits():
    jax = pytest.importorskip("jax")
    f, x = _erf()
    exe = _tiered(f, x)
    with override("jaxlite_backend", "auto"):
        while exe.entry == exe._rent:  # until it is hot, however slow this machine
            f(x)
        assert exe.native is not None
        out = f(x)  # a trial call, native code
    expected = jax.jit(jax.lax.erf)(np.asarray(x))
    np.testing.assert_array_equal(np.asarray(out), np.asarray(expected))


def test_a_native_compile_pauses_the_cyclic_collector_and_restores_it(monkeypatch):
    """The compile's temporaries never reach a collection (see util.gc_paused); the
    collector's state is restored afterwards, also when it was off, or nested, or
    when the compile fails."""
    import gc

    from jaxlite.util import gc_paused

    during = []
    compile_ = native._compile

    def spy(*args):
        during.append(gc.isenabled())
        return compile_(*args)

    monkeypatch.setattr(native, "_compile", spy)
    with override("jaxlite_backend", "native"):
        f = jaxlite.jit(lambda x: lax.fori_loop(0, 5, lambda i, c: c * 1.5 + i, x))
        np.testing.assert_allclose(f(np.float32(1.0)), 23.96875)
    assert during and not any(during)
    assert gc.isenabled()
    with gc_paused():
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # it was off: left off
    finally:
        gc.enable()
    with pytest.raises(ZeroDivisionError):
        with gc_paused():
            1 / 0
    assert gc.isenabled()


def test_a_loop_with_an_optimization_barrier_compiles_natively(native_log):
    def f(x):
        def body(i, c):
            a, b = lax.optimization_barrier((c * 2.0, c + 1.0))
            return a - b

        return lax.fori_loop(0, 4, body, x)

    x = np.arange(3, dtype=np.float32)
    with override("jaxlite_backend", "native"):
        out = jaxlite.jit(f)(x)
    np.testing.assert_array_equal(out, jaxlite.jit(f)(x))
    np.testing.assert_array_equal(out, x - 4.0)  # each step: 2c - (c + 1)
    assert not any("left to NumPy" in r.message for r in native_log.records)


def test_same_width_bitcasts_compile_natively_and_match_jax(native_log):
    jax = pytest.importorskip("jax")

    def f(lib):
        def g(x):
            def body(i, c):
                bits = lib.lax.bitcast_convert_type(c, np.int32)
                return lib.lax.bitcast_convert_type(bits ^ np.int32(1), np.float32)

            u = lib.lax.bitcast_convert_type(x, np.uint32)
            return lib.lax.fori_loop(0, 3, body, x), u

        return g

    x = np.array([1.0, -2.5, np.inf, 3e-39], np.float32)
    with override("jaxlite_backend", "native"):
        out = jaxlite.jit(f(jaxlite))(x)
    assert not any("left to NumPy" in r.message for r in native_log.records)
    expected = jax.jit(f(jax))(x)
    for a, b in zip(out, expected):
        np.testing.assert_array_equal(
            np.asarray(a).view(np.uint32), np.asarray(b).view(np.uint32)
        )
