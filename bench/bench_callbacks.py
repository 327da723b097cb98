"""Host-callback benchmark: jaxlite against JAX, side by side in one run.

Measures what a callback costs where users feel it: a jitted function with one
`pure_callback` on a float32 scalar, an ordered `io_callback` in every step of a
1000-step `scan`, a `debug.callback` under jit, `vmap` with `vmap_method="sequential"`
over 1000 elements, a `pure_callback` on 1,000,000 floats against the host function
alone (no copies means a ratio near 1), and `jit(grad(j1))` of the External callbacks
tutorial's Bessel function (a `custom_jvp` around `scipy.special.jv`). Every JAX call is
followed by `block_until_ready`, so both columns are latencies. Each figure is the best
of several repeats (the median is in the JSON); JAX is measured when importable.

Prints a table with the targets, then one line of JSON.

    python bench/bench_callbacks.py [--quick] [--no-jax]
"""

from __future__ import annotations

import json
import platform
import statistics
import sys
import timeit
from functools import partial

import numpy as np

N_SCAN = 1000
N_VMAP = 1000
N_BIG = 1_000_000


def _libraries(with_jax):
    import jaxlite
    import jaxlite.experimental
    import jaxlite.numpy

    libs = {"jaxlite": (jaxlite, jaxlite.numpy, jaxlite.experimental.io_callback)}
    if with_jax:
        try:
            import jax
            import jax.numpy
            from jax.experimental import io_callback
        except ImportError:
            pass
        else:
            libs["jax"] = (jax, jax.numpy, io_callback)
    return libs


def _identity(x):
    return x


def _noop(x):
    pass


def _bessel_j1(api, jnp):
    import scipy.special

    def jv(v, z):
        v, z = jnp.asarray(v), jnp.asarray(z)
        z = z.astype(jnp.result_type(float, z.dtype))
        _scipy_jv = lambda v, z: scipy.special.jv(v, z).astype(z.dtype)
        result_shape_dtype = api.ShapeDtypeStruct(
            shape=jnp.broadcast_shapes(v.shape, z.shape), dtype=z.dtype
        )
        return api.pure_callback(
            _scipy_jv, result_shape_dtype, v, z, vmap_method="legacy_vectorized"
        )

    jv = api.custom_jvp(jv)

    @jv.defjvp
    def _jv_jvp(primals, tangents):
        v, z = primals
        _, z_dot = tangents
        jv_minus_1, jv_plus_1 = jv(v - 1, z), jv(v + 1, z)
        djv_dz = jnp.where(v == 0, -jv_plus_1, 0.5 * (jv_minus_1 - jv_plus_1))
        return jv(v, z), z_dot * djv_dz

    return lambda z: jv(1, z)


def _cases(api, jnp, io_callback):
    """name -> (zero-argument function to time, calls it stands for, scale to report)."""
    f32 = api.ShapeDtypeStruct((), np.float32)
    x = jnp.asarray(np.float32(1.5))
    cases = {}

    pure = api.jit(lambda x: api.pure_callback(_identity, f32, x))
    cases["jit pure_callback (f32 scalar), us/call"] = (lambda: pure(x), 1)

    def scan_body(c, x):
        return c + io_callback(_identity, f32, x, ordered=True), None

    xs = jnp.arange(N_SCAN, dtype=np.float32)
    scan = api.jit(lambda xs: api.lax.scan(scan_body, np.float32(0), xs)[0])
    cases[f"io_callback(ordered) in {N_SCAN}-step scan, us/step"] = (
        lambda: scan(xs),
        N_SCAN,
    )

    def with_debug(x):
        api.debug.callback(_noop, x)
        return x

    dbg = api.jit(with_debug)
    cases["jit debug.callback, us/call"] = (lambda: dbg(x), 1)

    seq = api.jit(
        api.vmap(
            lambda x: api.pure_callback(_identity, f32, x, vmap_method="sequential")
        )
    )
    vs = jnp.arange(N_VMAP, dtype=np.float32)
    cases[f"vmap sequential over {N_VMAP}, us total"] = (lambda: seq(vs), 1)

    big_spec = api.ShapeDtypeStruct((N_BIG,), np.float32)
    big = api.jit(lambda x: api.pure_callback(np.sin, big_spec, x))
    bx = jnp.asarray(np.linspace(0, 1, N_BIG, dtype=np.float32))
    cases[f"pure_callback(np.sin) on {N_BIG:,} floats, us/call"] = (lambda: big(bx), 1)

    j1 = _bessel_j1(api, jnp)
    grad_j1 = api.jit(api.grad(j1))
    two = jnp.asarray(np.float32(2.0))
    cases["jit(grad(j1)) Bessel, us/call"] = (lambda: grad_j1(two), 1)
    return cases


def _timer(fn, block, min_seconds):
    def call():
        block(fn())

    for _ in range(4):  # trace, compile, warm up
        call()
    timer = timeit.Timer(call)
    number, took = timer.autorange()
    return timer, max(1, int(number * min_seconds / max(took, 1e-9)))


def _time_us(fn, per, min_seconds, block, repeat=7):
    timer, number = _timer(fn, block, min_seconds)
    times = [t / number / per * 1e6 for t in timer.repeat(repeat=repeat, number=number)]
    return min(times), statistics.median(times)


def _ratio(fn, host, min_seconds, block, samples=60):
    """Best time of `fn` over best time of `host`, sampled alternately in short runs (so
    that changes in machine load hit both alike, and the best runs are quiet ones)."""
    t_fn, n_fn = _timer(fn, block, min_seconds / 10)
    t_host, n_host = _timer(host, _identity, min_seconds / 10)
    fns, hosts = [], []
    for _ in range(samples):
        fns.append(t_fn.timeit(n_fn) / n_fn)
        hosts.append(t_host.timeit(n_host) / n_host)
    return min(fns) / min(hosts), min(hosts) * 1e6


TARGETS = {
    "jit pure_callback (f32 scalar), us/call": 5.0,
    f"io_callback(ordered) in {N_SCAN}-step scan, us/step": 5.0,
    "jit debug.callback, us/call": 5.0,
    f"vmap sequential over {N_VMAP}, us total": 5000.0,
    "jit(grad(j1)) Bessel, us/call": 30.0,
}
RATIO_CASE = f"pure_callback(np.sin) on {N_BIG:,} floats, us/call"
BASELINE_CASE = "baseline: jit(lambda x: x), us/call"


def run(min_seconds=0.3, with_jax=True):
    results = []
    bx = np.linspace(0, 1, N_BIG, dtype=np.float32)
    for lib, (api, jnp, io_callback) in _libraries(with_jax).items():
        block = api.block_until_ready
        base = partial(api.jit(_identity), jnp.asarray(np.float32(1.5)))
        best, median = _time_us(base, 1, min_seconds, block)
        results.append(
            {
                "lib": lib,
                "case": BASELINE_CASE,
                "best_us": best,
                "median_us": median,
            }
        )
        for case, (fn, per) in _cases(api, jnp, io_callback).items():
            best, median = _time_us(fn, per, min_seconds, block)
            row = {"lib": lib, "case": case, "best_us": best, "median_us": median}
            if case == RATIO_CASE:
                row["ratio_to_host"], row["host_us"] = _ratio(
                    fn, lambda: np.sin(bx), min_seconds, block
                )
            results.append(row)
    return results


def table(results):
    libs = [lib for lib in ("jaxlite", "jax") if any(r["lib"] == lib for r in results)]
    cases = list(dict.fromkeys(r["case"] for r in results))
    by = {(r["lib"], r["case"]): r for r in results}
    head = f"{'case':52}" + "".join(f"{lib:>12}" for lib in libs) + f"{'target':>20}"
    lines = [head, "-" * len(head)]
    for case in cases:
        cells = "".join(f"{by[lib, case]['best_us']:12.2f}" for lib in libs)
        ours = by["jaxlite", case]
        if case in TARGETS:
            ok = "ok" if ours["best_us"] <= TARGETS[case] else "MISS"
            target = f"<= {TARGETS[case]:g} {ok}"
        elif case == RATIO_CASE:
            ratio = ours["ratio_to_host"]
            ok = "ok" if ratio <= 1.2 else "MISS"
            target = f"x{ratio:.2f} of host {ok}"
        else:
            target = ""
        lines.append(f"{case:52}{cells}{target:>20}")
    return "\n".join(lines)


def main():
    min_seconds = 0.05 if "--quick" in sys.argv else 0.3
    results = run(min_seconds, with_jax="--no-jax" not in sys.argv)
    print(
        f"best of 7 repeats, Python {platform.python_version()}, NumPy {np.__version__}"
    )
    print(table(results))
    print(json.dumps({"benchmark": "callbacks", "unit": "us", "results": results}))


if __name__ == "__main__":
    main()
