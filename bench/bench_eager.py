"""Eager benchmark: the per-call cost of ~70 everyday operations, jaxlite against JAX.

jaxlite has no XLA dispatch, so un-jitted (eager) work on small and medium arrays
should cost less than in JAX. Each case is one call of a common operation on a small
(shape (8,)) or medium ((256, 256)) float32 array: ufuncs, reductions, indexing,
creation, shape ops, linalg, sorting, random, nn, a warm `jit` call with a dict of
ten arrays, eager `grad`/`vmap`/`scan`/`fori_loop`, `tree_map` and host conversions.

Both libraries run in the same process, interleaved case by case and repeat by
repeat (so a change in machine load hits both alike); a figure is the best time per
call over many short `timeit` batches. Every JAX result is waited for with
`block_until_ready`. Prints a table (the ratio column is jaxlite / JAX; `<-` marks
cases where jaxlite is slower, or above 20 µs on a small input), then one line of
JSON.

    python bench/bench_eager.py [--quick] [--only SUBSTRING]
"""

from __future__ import annotations

import json
import platform
import sys
import timeit

import numpy as np

SMALL_LIMIT_US = 20.0


def _libraries():
    import jaxlite
    import jaxlite.numpy

    libs = {"jaxlite": (jaxlite, jaxlite.numpy)}
    try:
        import jax
        import jax.numpy
    except ImportError:
        pass
    else:
        jax.config.update("jax_platforms", "cpu")
        libs["jax"] = (jax, jax.numpy)
    return libs


def _cases(jax, jnp):
    """name -> zero-argument function; names ending in "(8)" use small inputs."""
    lax, nn, random, tu = jax.lax, jax.nn, jax.random, jax.tree_util
    rng = np.random.default_rng(0)
    xs_np = rng.standard_normal(8).astype(np.float32)
    xm_np = rng.standard_normal((256, 256)).astype(np.float32)
    xs, ys = jnp.asarray(xs_np), jnp.asarray(xs_np[::-1].copy())
    xm, ym = jnp.asarray(xm_np), jnp.asarray(xm_np.T.copy())
    a4 = jnp.asarray(rng.standard_normal((4, 4)).astype(np.float32) + 4 * np.eye(4))
    b4 = jnp.asarray(rng.standard_normal(4).astype(np.float32))
    idx3 = jnp.asarray(np.array([0, 3, 5], np.int32))
    mask = xs > 0
    rows = jnp.asarray(rng.integers(0, 256, 64).astype(np.int32))
    col_idx = jnp.asarray(rng.integers(0, 8, (8, 1)).astype(np.int32))
    x88 = jnp.asarray(rng.standard_normal((8, 8)).astype(np.float32))
    ints = jnp.asarray(rng.integers(0, 5, 8).astype(np.int32))
    labels = jnp.asarray(np.arange(8, dtype=np.int32) % 4)
    key = random.PRNGKey(0)
    logits = jnp.asarray(rng.standard_normal((8, 4)).astype(np.float32))
    params = {
        f"w{i}": jnp.asarray(rng.standard_normal(8).astype(np.float32))
        for i in range(10)
    }
    tree100 = [jnp.asarray(np.float32(i)) for i in range(100)]
    pytree_fn = jax.jit(lambda p: sum(v.sum() for v in p.values()))
    grad_fn = jax.grad(lambda x: jnp.sum(jnp.tanh(x) * x))
    vmap_fn = jax.vmap(lambda x: jnp.dot(x, x) + jnp.sin(x).sum())
    scalar = jnp.asarray(np.float32(1.5))
    list8 = [float(v) for v in xs_np]

    def scan_body(c, x):
        return c + x, c

    def fori_body(i, c):
        return c + 1.0

    steps = jnp.arange(100, dtype=np.float32)

    cases = {
        # elementwise
        "add python scalar (8)": lambda: xs + 1.0,
        "add python scalar (256,256)": lambda: xm + 1.0,
        "mul (8)": lambda: xs * ys,
        "mul (256,256)": lambda: xm * ym,
        "exp (8)": lambda: jnp.exp(xs),
        "exp (256,256)": lambda: jnp.exp(xm),
        "tanh (8)": lambda: jnp.tanh(xs),
        "where (8)": lambda: jnp.where(mask, xs, ys),
        "where (256,256)": lambda: jnp.where(xm > 0, xm, ym),
        "maximum (8)": lambda: jnp.maximum(xs, 0.0),
        # reductions
        "sum (8)": lambda: jnp.sum(xs),
        "sum (256,256)": lambda: jnp.sum(xm),
        "mean axis=0 (256,256)": lambda: jnp.mean(xm, axis=0),
        "mean (8)": lambda: jnp.mean(xs),
        "max (8)": lambda: jnp.max(xs),
        "argmax (8)": lambda: jnp.argmax(xs),
        "argmax axis=1 (256,256)": lambda: jnp.argmax(xm, axis=1),
        "var (8)": lambda: jnp.var(xs),
        "std (256,256)": lambda: jnp.std(xm),
        "logsumexp (8)": lambda: jax.scipy.special.logsumexp(xs),
        # indexing
        "x[0] (8)": lambda: xs[0],
        "x[1:3] (8)": lambda: xs[1:3],
        "x[idx_array] (8)": lambda: xs[idx3],
        "x[rows] (256,256)": lambda: xm[rows],
        "x[bool_mask] (8)": lambda: xs[mask],
        "x.at[i].set(v) (8)": lambda: xs.at[2].set(5.0),
        "x.at[idx].add(v) (8)": lambda: xs.at[idx3].add(1.0),
        "x.at[i].set(v) (256,256)": lambda: xm.at[3].set(0.0),
        "take (8)": lambda: jnp.take(xs, idx3),
        "take_along_axis (8)": lambda: jnp.take_along_axis(x88, col_idx, axis=1),
        "dynamic_slice (8)": lambda: lax.dynamic_slice(xs, (2,), (3,)),
        "dynamic_update_slice (8)": lambda: lax.dynamic_update_slice(xs, ys[:2], (3,)),
        # creation
        "array(list) (8)": lambda: jnp.array(list8),
        "zeros (8)": lambda: jnp.zeros(8),
        "zeros (256,256)": lambda: jnp.zeros((256, 256)),
        "arange (8)": lambda: jnp.arange(8),
        "linspace (8)": lambda: jnp.linspace(0.0, 1.0, 8),
        "eye (8)": lambda: jnp.eye(8),
        "full (8)": lambda: jnp.full((8,), 2.0),
        # shape ops
        "reshape (8)": lambda: xs.reshape(2, 4),
        "reshape (256,256)": lambda: xm.reshape(-1),
        "transpose (256,256)": lambda: xm.T,
        "concatenate (8)": lambda: jnp.concatenate([xs, ys]),
        "stack (8)": lambda: jnp.stack([xs, ys]),
        "split (8)": lambda: jnp.split(xs, 2),
        "expand_dims (8)": lambda: jnp.expand_dims(xs, 0),
        "squeeze (8)": lambda: jnp.squeeze(xs[None]),
        "broadcast_to (8)": lambda: jnp.broadcast_to(xs, (4, 8)),
        "tile (8)": lambda: jnp.tile(xs, 3),
        "repeat (8)": lambda: jnp.repeat(xs, 2),
        "pad (8)": lambda: jnp.pad(xs, 2),
        # linalg
        "dot (8)": lambda: jnp.dot(xs, ys),
        "matmul (256,256)": lambda: xm @ ym,
        "einsum ij,j (8)": lambda: jnp.einsum("ij,j->i", x88, xs),
        "inv 4x4 (8)": lambda: jnp.linalg.inv(a4),
        "solve 4x4 (8)": lambda: jnp.linalg.solve(a4, b4),
        "norm (8)": lambda: jnp.linalg.norm(xs),
        "svd 8x8 (8)": lambda: jnp.linalg.svd(x88),
        # sorting
        "sort (8)": lambda: jnp.sort(xs),
        "sort axis=-1 (256,256)": lambda: jnp.sort(xm),
        "argsort (8)": lambda: jnp.argsort(xs),
        "unique (8)": lambda: jnp.unique(ints),
        "cumsum (8)": lambda: jnp.cumsum(xs),
        "cumsum axis=0 (256,256)": lambda: jnp.cumsum(xm, axis=0),
        # random
        "random.PRNGKey (8)": lambda: random.PRNGKey(0),
        "random.split (8)": lambda: random.split(key),
        "random.normal (8)": lambda: random.normal(key, (8,)),
        "random.normal (256,256)": lambda: random.normal(key, (256, 256)),
        "random.uniform (8)": lambda: random.uniform(key, (8,)),
        "random.randint (8)": lambda: random.randint(key, (8,), 0, 10),
        "random.permutation (8)": lambda: random.permutation(key, 8),
        "random.categorical (8)": lambda: random.categorical(key, logits),
        # nn
        "relu (8)": lambda: nn.relu(xs),
        "softmax (8)": lambda: nn.softmax(xs),
        "softmax (256,256)": lambda: nn.softmax(xm),
        "log_softmax (8)": lambda: nn.log_softmax(xs),
        "gelu (8)": lambda: nn.gelu(xs),
        "one_hot (8)": lambda: nn.one_hot(labels, 4),
        # transformations
        "jit dispatch dict of 10 (8)": lambda: pytree_fn(params),
        "grad eager (8)": lambda: grad_fn(xs),
        "vmap eager (8)": lambda: vmap_fn(x88),
        "tree_map 100 leaves (8)": lambda: tu.tree_map(lambda v: v, tree100),
        "scan eager 100 steps (8)": lambda: lax.scan(scan_body, scalar, steps),
        "fori_loop eager 100 steps (8)": lambda: lax.fori_loop(
            0, 100, fori_body, scalar
        ),
        # host conversions
        "asarray(np array) (8)": lambda: jnp.asarray(xs_np),
        "asarray(np array) (256,256)": lambda: jnp.asarray(xm_np),
        "np.asarray(array) (8)": lambda: np.asarray(xs),
        "float(x) (8)": lambda: float(scalar),
        "block_until_ready (8)": lambda: xs.block_until_ready(),
    }
    return cases


def _block(out):
    """Wait for every array in `out` (a JAX result may still be computing)."""
    if hasattr(out, "block_until_ready"):
        out.block_until_ready()
    elif isinstance(out, (tuple, list)):
        for o in out:
            _block(o)
    elif isinstance(out, dict):
        for o in out.values():
            _block(o)
    return out


def _timer(fn, min_seconds):
    def call():
        _block(fn())

    for _ in range(3):  # warm caches (jit traces, eager compiles)
        call()
    timer = timeit.Timer(call)
    number, took = timer.autorange()
    return timer, max(1, int(number * min_seconds / max(took, 1e-9)))


def run(quick=False, only=None):
    """Interleaved best-of-repeats per case: [{case, lib, best_us}]."""
    libs = _libraries()
    cases = {lib: _cases(jax, jnp) for lib, (jax, jnp) in libs.items()}
    names = [n for n in cases["jaxlite"] if only is None or only in n]
    repeats, min_seconds = (3, 0.005) if quick else (15, 0.01)
    results = []
    for name in names:
        timers = {lib: _timer(cases[lib][name], min_seconds) for lib in libs}
        best = dict.fromkeys(libs, float("inf"))
        for _ in range(repeats):
            for lib, (timer, number) in timers.items():
                best[lib] = min(best[lib], timer.timeit(number) / number * 1e6)
        for lib in libs:
            results.append({"case": name, "lib": lib, "best_us": round(best[lib], 3)})
    return results


def table(results):
    libs = list(dict.fromkeys(r["lib"] for r in results))
    by = {(r["case"], r["lib"]): r["best_us"] for r in results}
    cases = list(dict.fromkeys(r["case"] for r in results))
    head = f"{'case':34}" + "".join(f"{lib + ' us':>14}" for lib in libs)
    head += f"{'ratio':>8}" if "jax" in libs else ""
    lines = [head, "-" * len(head)]
    for case in cases:
        ours = by[case, "jaxlite"]
        line = f"{case:34}" + "".join(f"{by[case, lib]:14.2f}" for lib in libs)
        slow = case.endswith("(8)") and ours > SMALL_LIMIT_US
        if "jax" in libs:
            ratio = ours / by[case, "jax"]
            line += f"{ratio:8.2f}"
            slow = slow or ratio > 1.0
        lines.append(line + ("   <-" if slow else ""))
    return "\n".join(lines)


def main():
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    results = run(quick="--quick" in sys.argv, only=only)
    print(
        f"best us per call, Python {platform.python_version()}, NumPy {np.__version__}"
    )
    print(table(results))
    print(json.dumps({"benchmark": "eager", "unit": "us", "results": results}))


if __name__ == "__main__":
    main()
