"""Loop benchmark: loop-heavy scientific programs, jaxlite side by side with real JAX.

Each program is written once against a JAX-like module `jx` and run with `jaxlite` and,
when it is importable, with `jax` (CPU):

- `lorenz`: RK4 on the Lorenz system, `fori_loop` of 10,000 steps over a float32 3-vector.
- `ema`: `lax.scan` over 100,000 float32 scalars, scalar carry (exponential moving average).
- `metropolis`: random-walk Metropolis, 5,000 steps, `random.split` in the `scan` body.
- `nbody`: 16-body gravity, 1,000 leapfrog steps in `fori_loop`, softened.
- `heat`: 1-d heat equation with `jnp.roll`, 256 cells, 10,000 steps.
- `grad_rk4`: `jit(grad(...))` through a 2,000-step RK4 `fori_loop` (damped pendulum),
  with respect to the initial state and the parameters.
- `odeint`: `experimental.ode.odeint` of a damped oscillator, 200 output times.
- `newton`, `newton_vmap`: Newton `while_loop` for sqrt(a); its `vmap` over 4,096 values.
- `rnn`: `lax.scan` RNN `h = tanh(W h + U x_t)`, hidden 64, 1,000 steps.

Every (program, library) pair runs in a fresh subprocess, so caches are cold. Before
the first, one untimed subprocess per library compiles a small loop, so that no
measurement includes reading a library's compiler from disk (XLA's shared object, or
LLVM's): importing JAX reads XLA's outside its first call, and the first native
compile reads LLVM's inside jaxlite's. `first call`
is trace + compile + run of the jitted function, from just before the call to
`block_until_ready` (imports and building the inputs excluded); `steady` is the best of
several repeats of the warm call. Milliseconds; ratios are jaxlite / JAX. Peak memory is
the subprocess's `ru_maxrss`. Results of the two libraries are compared (largest difference
over largest magnitude, per output, at most 1e-4; the chaotic `lorenz` after 1,000 steps)
and a warning is printed where they disagree. Prints a table, then one line of JSON.

`OPENBLAS_CORETYPE` and `OPENBLAS_L2_SIZE` are removed from the environment (they slow
NumPy's BLAS on this machine) and BLAS runs single-threaded (`OPENBLAS_NUM_THREADS=1`
unless set). `--backend` sets `JAXLITE_BACKEND` for the jaxlite subprocesses.

    python bench/bench_loops.py [--quick] [--only NAME[,NAME]] [--backend numpy|native|auto]
"""

import os

# Before NumPy is imported, here and in every subprocess (they inherit os.environ).
for _var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
    os.environ.pop(_var, None)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import importlib  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

RTOL = 1e-4


# --- the programs: each returns (jitted function, NumPy arguments) -------------------


def lorenz(jx, steps=10_000):
    jnp, lax = jx.numpy, jx.lax
    sigma, rho, beta, dt = 10.0, 28.0, 8.0 / 3.0, 0.01

    def rhs(s):
        x, y, z = s[0], s[1], s[2]
        return jnp.array([sigma * (y - x), x * (rho - z) - y, x * y - beta * z])

    def step(_, s):
        k1 = rhs(s)
        k2 = rhs(s + 0.5 * dt * k1)
        k3 = rhs(s + 0.5 * dt * k2)
        k4 = rhs(s + dt * k3)
        return s + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)

    def run(s0):
        return lax.fori_loop(0, steps, step, s0)

    return jx.jit(run), (np.array([1.0, 1.0, 1.0], np.float32),)


def ema(jx):
    jnp, lax = jx.numpy, jx.lax

    def run(xs):
        def step(c, x):
            c = c + 0.01 * (x - c)
            return c, c

        return lax.scan(step, jnp.zeros((), xs.dtype), xs)

    xs = np.random.default_rng(0).standard_normal(100_000).astype(np.float32)
    return jx.jit(run), (xs,)


def metropolis(jx):
    jnp, lax, random = jx.numpy, jx.lax, jx.random

    def logp(x):  # a correlated Gaussian with a quartic tail
        return -0.5 * (x[0] ** 2 + 2.0 * (x[1] - 0.5 * x[0]) ** 2) - 0.05 * x[0] ** 4

    def run(key, x0):
        def step(carry, _):
            key, x, lp = carry
            key, k_prop, k_acc = random.split(key, 3)
            prop = x + 0.5 * random.normal(k_prop, (2,))
            lp_prop = logp(prop)
            accept = jnp.log(random.uniform(k_acc)) < lp_prop - lp
            x = jnp.where(accept, prop, x)
            lp = jnp.where(accept, lp_prop, lp)
            return (key, x, lp), x

        _, xs = lax.scan(step, (key, x0, logp(x0)), None, length=5_000)
        return xs

    key = np.asarray(random.PRNGKey(0))
    return jx.jit(run), (key, np.zeros(2, np.float32))


def nbody(jx):
    jnp, lax = jx.numpy, jx.lax
    dt, soft2 = 1e-3, 0.01

    def run(pos, vel, mass):
        def accel(p):
            d = p[None, :, :] - p[:, None, :]  # d[i, j] = p[j] - p[i]
            r2 = jnp.sum(d * d, axis=-1) + soft2
            w = mass[None, :] / (r2 * jnp.sqrt(r2))
            return jnp.sum(d * w[:, :, None], axis=1)

        def step(_, state):  # kick-drift-kick leapfrog
            p, v, a = state
            v = v + 0.5 * dt * a
            p = p + dt * v
            a = accel(p)
            return p, v + 0.5 * dt * a, a

        p, v, _ = lax.fori_loop(0, 1_000, step, (pos, vel, accel(pos)))
        return p, v

    rng = np.random.default_rng(0)
    pos = rng.uniform(-1.0, 1.0, (16, 3)).astype(np.float32)
    vel = (0.1 * rng.standard_normal((16, 3))).astype(np.float32)
    mass = np.full(16, 1.0 / 16, np.float32)
    return jx.jit(run), (pos, vel, mass)


def heat(jx):
    jnp, lax = jx.numpy, jx.lax

    def run(u0):
        def step(_, u):
            return u + 0.25 * (jnp.roll(u, 1) - 2.0 * u + jnp.roll(u, -1))

        return lax.fori_loop(0, 10_000, step, u0)

    x = np.linspace(0.0, 1.0, 256, dtype=np.float32)
    return jx.jit(run), (np.exp(-(((x - 0.5) / 0.05) ** 2)).astype(np.float32),)


def grad_rk4(jx):
    jnp, lax = jx.numpy, jx.lax
    dt = 0.01

    def rhs(s, p):  # damped pendulum, p = (g / l, damping)
        return jnp.stack([s[1], -p[0] * jnp.sin(s[0]) - p[1] * s[1]])

    def loss(s0, p):
        def step(_, s):
            k1 = rhs(s, p)
            k2 = rhs(s + 0.5 * dt * k1, p)
            k3 = rhs(s + 0.5 * dt * k2, p)
            k4 = rhs(s + dt * k3, p)
            return s + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)

        s = lax.fori_loop(0, 2_000, step, s0)
        return jnp.sum(s * s)

    args = (np.array([1.0, 0.0], np.float32), np.array([9.81, 0.3], np.float32))
    return jx.jit(jx.grad(loss, argnums=(0, 1))), args


def odeint(jx):
    jnp = jx.numpy
    ode = importlib.import_module(jx.__name__ + ".experimental.ode")

    def f(y, t, k, c):
        return jnp.stack([y[1], -k * y[0] - c * y[1]])

    def run(y0, ts, k, c):
        return ode.odeint(f, y0, ts, k, c)

    ts = np.linspace(0.0, 10.0, 200, dtype=np.float32)
    return jx.jit(run), (
        np.array([1.0, 0.0], np.float32),
        ts,
        np.float32(4.0),
        np.float32(0.2),
    )


def _newton_sqrt(jx):
    jnp, lax = jx.numpy, jx.lax

    def newton_sqrt(a):
        def cond(state):
            x, i = state
            return (jnp.abs(x * x - a) > 1e-6 * a) & (i < 50)

        def body(state):
            x, i = state
            return 0.5 * (x + a / x), i + 1

        x, _ = lax.while_loop(cond, body, (jnp.maximum(a, 1.0), 0))
        return x

    return newton_sqrt


def newton(jx):
    return jx.jit(_newton_sqrt(jx)), (np.float32(2.0),)


def newton_vmap(jx):
    a = np.linspace(0.1, 100.0, 4_096, dtype=np.float32)
    return jx.jit(jx.vmap(_newton_sqrt(jx))), (a,)


def rnn(jx):
    jnp, lax = jx.numpy, jx.lax
    hidden, steps = 64, 1_000

    def run(w, u, h0, xs):
        def cell(h, x):
            h = jnp.tanh(w @ h + u @ x)
            return h, h

        return lax.scan(cell, h0, xs)

    rng = np.random.default_rng(0)
    scale = 1.0 / np.sqrt(hidden)
    w = (rng.standard_normal((hidden, hidden)) * scale).astype(np.float32)
    u = (rng.standard_normal((hidden, hidden)) * scale).astype(np.float32)
    xs = rng.standard_normal((steps, hidden)).astype(np.float32)
    return jx.jit(run), (w, u, np.zeros(hidden, np.float32), xs)


# name: (builder, description). The Lorenz system is chaotic: XLA's code rounds
# differently from the third step on, and the difference passes 1e-4 after ~1,300 steps,
# so CHECKED_WITH compares the values of a shorter run built with these keywords.
PROGRAMS = {
    "lorenz": (lorenz, "RK4 Lorenz, fori_loop 10k steps, 3-vector"),
    "ema": (ema, "scan 100k scalars, scalar carry"),
    "metropolis": (metropolis, "Metropolis 5k steps, random.split in body"),
    "nbody": (nbody, "16-body gravity, 1k leapfrog steps"),
    "heat": (heat, "heat equation, roll, 256 cells, 10k steps"),
    "grad_rk4": (grad_rk4, "jit(grad) through 2k-step RK4 fori_loop"),
    "odeint": (odeint, "odeint damped oscillator, 200 times"),
    "newton": (newton, "Newton while_loop sqrt, scalar"),
    "newton_vmap": (newton_vmap, "vmap of Newton while_loop, 4096"),
    "rnn": (rnn, "RNN scan, hidden 64, 1k steps"),
}
CHECKED_WITH = {"lorenz": {"steps": 1_000}}


# --- the worker: one program, one library, one fresh process -------------------------


def _block(jx, out):
    for leaf in jx.tree_util.tree_leaves(out):
        leaf.block_until_ready()
    return out


def worker(lib, name, repeat, batch_s, out_path):
    """Time one program with one library; save its outputs; print one JSON line."""
    jx = importlib.import_module(lib)
    if lib == "jax":
        jx.config.update("jax_platforms", "cpu")
    fn, np_args = PROGRAMS[name][0](jx)
    args = [jx.numpy.asarray(a) for a in np_args]
    _block(jx, args)  # the backend is up and the inputs are on it

    start = time.perf_counter()
    out = _block(jx, fn(*args))
    first = time.perf_counter() - start

    start = time.perf_counter()
    _block(jx, fn(*args))
    once = time.perf_counter() - start
    number = max(1, int(batch_s / max(once, 1e-9)))
    times = [once] if number == 1 else []
    while len(times) < repeat:
        start = time.perf_counter()
        for _ in range(number):
            _block(jx, fn(*args))
        times.append((time.perf_counter() - start) / number)

    if name in CHECKED_WITH:
        check_fn, check_args = PROGRAMS[name][0](jx, **CHECKED_WITH[name])
        out = check_fn(*[jx.numpy.asarray(a) for a in check_args])
    leaves = [np.asarray(leaf) for leaf in jx.tree_util.tree_leaves(out)]
    np.savez(out_path, *leaves)
    if lib == "jaxlite":
        assert "jax" not in sys.modules, "the jaxlite worker imported jax"
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    result = {
        "lib": lib,
        "program": name,
        "version": jx.__version__,
        "first_ms": first * 1e3,
        "steady_ms": min(times) * 1e3,
        "calls_per_repeat": number,
        "repeats": len(times),
        "peak_rss_mb": rss / 1024 if sys.platform != "darwin" else rss / 2**20,
    }
    print(json.dumps(result))


# --- the parent: spawn workers, compare, tabulate ------------------------------------


def _worker_env(lib, backend):
    env = dict(os.environ)
    if lib == "jaxlite" and backend:
        env["JAXLITE_BACKEND"] = backend
    if lib == "jax":
        env.setdefault("JAX_PLATFORMS", "cpu")
    return env


_WARM_UP = """
import {lib} as jx
jx.jit(lambda x: jx.lax.fori_loop(0, 10_000, lambda i, c: c * 0.5 + 1.0, x))(1.0)
"""


def warm_up(lib, backend):
    """Compile a small loop in an untimed subprocess: the operating system then has
    the library's compiler in its file cache (see the module docstring)."""
    subprocess.run(
        [sys.executable, "-c", _WARM_UP.format(lib=lib)],
        env=_worker_env(lib, backend),
        capture_output=True,
        timeout=600,
    )


def run_worker(lib, name, quick, backend, tmpdir):
    env = _worker_env(lib, backend)
    out_path = os.path.join(tmpdir, f"{lib}-{name}.npz")
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", lib, name, out_path]
    if quick:
        cmd.append("--quick")
    try:
        proc = subprocess.run(
            cmd, env=env, capture_output=True, text=True, timeout=1800
        )
    except subprocess.TimeoutExpired:
        return {"lib": lib, "program": name, "error": "timed out after 1800 s"}
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        return {"lib": lib, "program": name, "error": lines[-1] if lines else "failed"}
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["outputs"] = out_path
    return result


def compare(lite_path, jax_path):
    """(agree, worst difference) of two saved output sets.

    An output's difference is its largest absolute difference over its largest
    magnitude: elementwise rtol would fail on the zero crossings of an oscillation.
    """
    with np.load(lite_path) as a, np.load(jax_path) as b:
        mine, ref = [a[k] for k in a.files], [b[k] for k in b.files]
    if len(mine) != len(ref):
        return False, float("inf")
    worst = 0.0
    for x, y in zip(mine, ref):
        if x.shape != y.shape or x.dtype != y.dtype:
            return False, float("inf")
        x, y = x.astype(np.float64), y.astype(np.float64)
        if np.any(np.isnan(x) != np.isnan(y)):
            return False, float("inf")
        diff = float(np.nanmax(np.abs(x - y), initial=0.0))
        scale = float(np.nanmax(np.abs(y), initial=0.0))
        worst = max(worst, diff / scale if scale else diff)
    return worst <= RTOL, worst


def _ms(value, width):
    if value is None:
        return f"{'-':>{width}}"
    return f"{value:>{width}.4g}" if value < 10 else f"{value:>{width}.0f}"


def _ratio(mine, theirs, width):
    if mine is None or theirs is None:
        return f"{'-':>{width}}"
    ratio = mine / theirs
    text = f"{ratio:,.0f}x" if ratio >= 100 else f"{ratio:.3g}x"
    return f"{text:>{width}}"


def table(rows, libs):
    head = (
        f"{'program':13}{'first ms':>20}{'':9}{'steady ms':>20}{'':9}"
        f"{'peak RSS MB':>18}  agree"
    )
    sub = f"{'':13}" + (f"{'jax':>10}{'jaxlite':>10}{'ratio':>9}" * 2)
    sub += f"{'jax':>9}{'jaxlite':>9}"
    lines = [head, sub, "-" * len(sub + "  agree")]
    for row in rows:
        j, m = row.get("jax", {}), row.get("jaxlite", {})
        cells = ""
        for key in ("first_ms", "steady_ms"):
            cells += _ms(j.get(key), 10) + _ms(m.get(key), 10)
            cells += _ratio(m.get(key), j.get(key), 9)
        for r in (j, m):
            rss = r.get("peak_rss_mb")
            cells += f"{rss:9.0f}" if rss is not None else f"{'-':>9}"
        agree = row.get("agree")
        mark = "-" if agree is None else ("yes" if agree else "NO")
        if agree is not None and row["program"] in CHECKED_WITH:
            kw = CHECKED_WITH[row["program"]]
            mark += " (" + ", ".join(f"{v:,} {k}" for k, v in kw.items()) + ")"
        lines.append(f"{row['program']:13}{cells}  {mark}")
    for row in rows:
        for lib in libs:
            if "error" in row.get(lib, {}):
                lines.append(f"error: {row['program']} with {lib}: {row[lib]['error']}")
    return "\n".join(lines)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--only", help="comma-separated program names")
    parser.add_argument("--backend", choices=("numpy", "native", "auto"))
    parser.add_argument("--worker", nargs=3, metavar=("LIB", "PROGRAM", "OUT"))
    opts = parser.parse_args(argv)
    if opts.worker:
        lib, name, out_path = opts.worker
        repeat, batch_s = (3, 0.02) if opts.quick else (7, 0.2)
        worker(lib, name, repeat, batch_s, out_path)
        return

    names = list(PROGRAMS)
    if opts.only:
        names = [n.strip() for n in opts.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in PROGRAMS]
        if unknown:
            parser.error(f"unknown program(s) {unknown}; choose from {list(PROGRAMS)}")
    libs = ["jax", "jaxlite"] if importlib.util.find_spec("jax") else ["jaxlite"]
    if libs == ["jaxlite"]:
        print("jax is not importable: running jaxlite alone")

    for lib in libs:
        warm_up(lib, opts.backend)
    rows = []
    with tempfile.TemporaryDirectory() as tmpdir:
        for name in names:
            row = {"program": name, "description": PROGRAMS[name][1]}
            for lib in libs:
                row[lib] = run_worker(lib, name, opts.quick, opts.backend, tmpdir)
            if all("outputs" in row[lib] for lib in libs) and len(libs) == 2:
                row["agree"], row["max_rel_diff"] = compare(
                    row["jaxlite"]["outputs"], row["jax"]["outputs"]
                )
            for lib in libs:
                row[lib].pop("outputs", None)
            rows.append(row)

    versions = {
        lib: r[lib]["version"] for r in rows for lib in libs if "version" in r[lib]
    }
    print(
        f"loop-heavy programs, milliseconds; ratio = jaxlite / JAX; "
        f"JAXLITE_BACKEND={opts.backend or os.environ.get('JAXLITE_BACKEND', '(unset)')} "
        f"({platform.machine()}, Python {platform.python_version()}, "
        f"NumPy {np.__version__}, "
        + ", ".join(f"{lib} {v}" for lib, v in versions.items())
        + ")"
    )
    print(table(rows, libs))
    for row in rows:
        if row.get("agree") is False:
            print(
                f"warning: {row['program']}: jaxlite and JAX disagree "
                f"(largest difference / largest magnitude {row['max_rel_diff']:.3g} > {RTOL})"
            )
    print(
        json.dumps(
            {
                "benchmark": "loops",
                "unit": "ms",
                "quick": opts.quick,
                "backend": opts.backend,
                "results": rows,
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1:])
