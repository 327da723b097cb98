"""Autodiff benchmark: `jit(grad(loss))` of an MLP 784-512-512-10 with tanh, batch 128,
float32, for jaxlite and, side by side in the same run, real JAX when importable; plus a
hand-written NumPy forward/backward as the floor.

- `step`: a warm call of the jitted gradient (targets: <= JAX's time per step).
- `first call`: trace + compile + one run of a fresh `jit(grad(loss))` (target: <= 0.3x
  JAX's).

Prints a table, then one line of JSON. `python bench/bench_autodiff.py [--quick]`
"""

import gc
import json
import statistics
import sys
import time

import numpy as np

SIZES = (784, 512, 512, 10)
BATCH = 128


def _params(rng):
    return [
        (
            (rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32),
            np.zeros(n, np.float32),
        )
        for m, n in zip(SIZES[:-1], SIZES[1:])
    ]


def _loss_fn(jnp):
    def loss(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = jnp.tanh(h @ w + b)
        w, b = params[-1]
        out = h @ w + b
        return jnp.mean((out - y) ** 2)

    return loss


def numpy_step(params, x, y):
    """Forward and backward by hand, in NumPy: the floor for a Python library."""
    hs, h = [x], x
    for w, b in params[:-1]:
        h = np.tanh(h @ w + b)
        hs.append(h)
    w, b = params[-1]
    out = h @ w + b
    g = 2.0 * (out - y) / out.size
    grads = [None] * len(params)
    grads[-1] = (hs[-1].T @ g, g.sum(0))
    g = g @ w.T
    for i in range(len(params) - 2, -1, -1):
        g = g * (1.0 - hs[i + 1] ** 2)
        grads[i] = (hs[i].T @ g, g.sum(0))
        g = g @ params[i][0].T
    return grads


def _time(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return min(times), statistics.median(times)


def _block(tree, jax):
    for leaf in jax.tree_util.tree_leaves(tree):
        leaf.block_until_ready()


def _measure(lib, quick):
    """Time one library in this process: (step, first call) rows."""
    rng = np.random.default_rng(0)
    params = _params(rng)
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    y = rng.standard_normal((BATCH, SIZES[-1])).astype(np.float32)
    repeat = 5 if quick else 30
    if lib == "numpy (hand-written)":
        best, median = _time(lambda: numpy_step(params, x, y), repeat)
        return [
            {
                "lib": lib,
                "benchmark": "step",
                "min_ms": round(best, 3),
                "median_ms": round(median, 3),
            }
        ]
    if lib == "jax":
        import jax as jax_mod

        jax_mod.config.update("jax_platforms", "cpu")
    else:
        import jaxlite as jax_mod
    p = jax_mod.tree_util.tree_map(jax_mod.numpy.asarray, params)
    xs, ys = jax_mod.numpy.asarray(x), jax_mod.numpy.asarray(y)
    first = []
    for _ in range(3 if quick else 5):
        step = jax_mod.jit(jax_mod.grad(_loss_fn(jax_mod.numpy)))
        start = time.perf_counter()
        _block(step(p, xs, ys), jax_mod)
        first.append((time.perf_counter() - start) * 1e3)
    step = jax_mod.jit(jax_mod.grad(_loss_fn(jax_mod.numpy)))
    _block(step(p, xs, ys), jax_mod)
    gc.collect()  # the first-call loop above leaves garbage; don't time its collection
    best, median = _time(lambda: _block(step(p, xs, ys), jax_mod), repeat)
    return [
        {
            "lib": lib,
            "benchmark": "step",
            "min_ms": round(best, 3),
            "median_ms": round(median, 3),
        },
        {
            "lib": lib,
            "benchmark": "first call",
            "min_ms": round(min(first), 3),
            "median_ms": round(statistics.median(first), 3),
        },
    ]


def run(quick=False):
    """Each library in its own process (one run of this script), so that one library's
    thread pools cannot slow the other's BLAS calls."""
    import subprocess

    libs = ["jaxlite", "numpy (hand-written)"]
    try:
        import importlib.util

        if importlib.util.find_spec("jax") is not None:
            libs.insert(1, "jax")
    except ImportError:
        pass
    results = []
    for lib in libs:
        args = [sys.executable, __file__, "--lib", lib] + (["--quick"] if quick else [])
        out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
        results += json.loads(out.strip().splitlines()[-1])
    return results


def main():
    if "--lib" in sys.argv:
        lib = sys.argv[sys.argv.index("--lib") + 1]
        print(json.dumps(_measure(lib, "--quick" in sys.argv)))
        return
    results = run(quick="--quick" in sys.argv)
    print(f"jit(grad(loss)) MLP {SIZES} tanh, batch {BATCH}, float32; milliseconds")
    print(f"{'lib':24}{'benchmark':12}{'min':>10}{'median':>10}")
    for r in results:
        print(
            f"{r['lib']:24}{r['benchmark']:12}{r['min_ms']:10.3f}{r['median_ms']:10.3f}"
        )
    by = {(r["lib"], r["benchmark"]): r["min_ms"] for r in results}
    if ("jax", "step") in by:
        print(
            f"step ratio jaxlite/jax: {by['jaxlite', 'step'] / by['jax', 'step']:.2f} "
            "(target <= 1)"
        )
        print(
            f"first-call ratio jaxlite/jax: "
            f"{by['jaxlite', 'first call'] / by['jax', 'first call']:.2f} (target <= 0.3)"
        )
    print(json.dumps({"benchmark": "autodiff_mlp", "unit": "ms", "results": results}))


if __name__ == "__main__":
    main()
