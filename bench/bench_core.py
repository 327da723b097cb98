"""Core benchmark: eager dispatch, jit dispatch and first-call (trace + compile) cost,
for jaxlite and, side by side in the same run, real JAX when it is importable.

- `eager add`: `jnp.add(x, y)` on two 100-element float32 arrays (target <= 3 µs).
- `jit dispatch`: a warm `jit(lambda x: x + 1)` on a float32 scalar (target <= 3 µs).
- `first call`: `jit(f)(x)` of a fresh 50-op elementwise function, i.e. tracing,
  compiling and one run (target <= 10 ms = 10,000 µs). A new function object each
  repetition, so nothing is cached.

Times are microseconds per call: the minimum and the median over repeats (each repeat
of the fast cases times enough calls to last ~0.1 s). JAX results are waited for with
`block_until_ready`. Prints a table, then one line of JSON.

    python bench/bench_core.py [--quick]
"""

import json
import platform
import statistics
import sys
import time
import timeit

import numpy as np

TARGETS_US = {"eager add": 3.0, "jit dispatch": 3.0, "first call": 10_000.0}
N_OPS = 50


def _libraries():
    import jaxlite
    import jaxlite.numpy as jnp

    libs = {"jaxlite": (jaxlite, jnp)}
    try:
        import jax
        import jax.numpy as jax_jnp
    except ImportError:
        pass
    else:
        jax.config.update("jax_platforms", "cpu")
        libs["jax"] = (jax, jax_jnp)
    return libs


def _per_call_us(fn, repeat, min_seconds):
    """(min, median) microseconds per call of `fn` over `repeat` timed batches."""
    timer = timeit.Timer(fn)
    number, elapsed = timer.autorange()
    number = max(1, int(number * min_seconds / max(elapsed, 1e-9)))
    times = [t / number * 1e6 for t in timer.repeat(repeat=repeat, number=number)]
    return min(times), statistics.median(times)


def _fifty_op_function(jnp):
    """A fresh function object of N_OPS elementwise primitives (one equation each)."""
    ops = (
        lambda x: x * 1.5,
        lambda x: x + 2.0,
        jnp.sin,
        jnp.cos,
        jnp.tanh,
    )

    def f(x):
        for i in range(N_OPS):
            x = ops[i % len(ops)](x)
        return x

    return f


def bench_eager_add(jax, jnp, repeat, min_seconds):
    x = jnp.asarray(np.arange(100, dtype=np.float32))
    y = jnp.asarray(np.ones(100, dtype=np.float32))
    jnp.add(x, y).block_until_ready()
    return _per_call_us(lambda: jnp.add(x, y).block_until_ready(), repeat, min_seconds)


def bench_jit_dispatch(jax, jnp, repeat, min_seconds):
    f = jax.jit(lambda x: x + 1)
    x = jnp.float32(1.0)
    f(x).block_until_ready()
    return _per_call_us(lambda: f(x).block_until_ready(), repeat, min_seconds)


def bench_first_call(jax, jnp, repeat, min_seconds):
    x = jnp.asarray(np.linspace(0, 1, 100, dtype=np.float32))
    n_eqns = len(jax.make_jaxpr(_fifty_op_function(jnp))(x).eqns)
    assert n_eqns == N_OPS, f"the benchmark function has {n_eqns} equations"
    times = []
    for _ in range(repeat):
        f = _fifty_op_function(jnp)
        start = time.perf_counter()
        jax.jit(f)(x).block_until_ready()
        times.append((time.perf_counter() - start) * 1e6)
    return min(times), statistics.median(times)


BENCHMARKS = {
    "eager add": bench_eager_add,
    "jit dispatch": bench_jit_dispatch,
    "first call": bench_first_call,
}


def run(quick=False):
    results = []
    for lib, (jax, jnp) in _libraries().items():
        for name, bench in BENCHMARKS.items():
            if name == "first call":
                repeat = 5 if quick else (10 if lib == "jax" else 30)
            else:
                repeat = 5 if quick else 9
            best, median = bench(jax, jnp, repeat, 0.02 if quick else 0.1)
            target = TARGETS_US[name]
            results.append(
                {
                    "lib": lib,
                    "benchmark": name,
                    "min_us": round(best, 3),
                    "median_us": round(median, 3),
                    "target_us": target if lib == "jaxlite" else None,
                    "meets_target": (best <= target) if lib == "jaxlite" else None,
                }
            )
    return results


def table(results):
    libs = list(dict.fromkeys(r["lib"] for r in results))
    by_key = {(r["benchmark"], r["lib"]): r for r in results}
    head = f"{'benchmark':14}{'target':>10}" + "".join(
        f"{lib + ' min':>16}{lib + ' median':>16}" for lib in libs
    )
    lines = [head, "-" * len(head)]
    for name in BENCHMARKS:
        cells = ""
        for lib in libs:
            r = by_key[name, lib]
            cells += f"{r['min_us']:16.2f}{r['median_us']:16.2f}"
        ok = by_key[name, "jaxlite"]["meets_target"]
        mark = "" if ok else "   <- misses the target"
        lines.append(f"{name:14}{TARGETS_US[name]:10.0f}{cells}{mark}")
    return "\n".join(lines)


def main():
    results = run(quick="--quick" in sys.argv)
    print(
        f"microseconds per call, Python {platform.python_version()}, NumPy {np.__version__}"
    )
    print(table(results))
    print(json.dumps({"benchmark": "core", "unit": "us", "results": results}))


if __name__ == "__main__":
    main()
