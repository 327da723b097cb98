"""Memory and compiled-kernel benchmark: jaxlite and, side by side, real JAX when it
is importable.

- `random.normal 2000x2000`: peak resident memory (VmHWM) a fresh process gains
  while drawing `jax.random.normal(jax.random.key(0), (2000, 2000))` (a 16 MB
  result), after a small warm-up draw (imports, compilation). Target: <= 4x the
  result (64 MB).
- `MLP step`: one `jit(grad)` + SGD update of a 784-512-512-10 ReLU MLP on a batch
  of 128 (MNIST shapes), in a fresh process: the peak resident memory of the whole
  process (`peak`), and what five steps after a warm-up step add to it (`growth`).
  Target: jaxlite's peak within 1.3x of JAX's.
- `jit(f) / jit(exp)`: microseconds per call of `jit(jax.nn.sigmoid)`,
  `jit(lax.pow)`, `jit(lax.erf)` on 100 and 1,024 float32 values, and their ratio
  to `jit(jnp.exp)` on the same input (target: <= 3).

Every measurement runs in its own subprocess, with OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE removed from its environment. Prints a table, then one line of
JSON.

    python bench/bench_memory.py [--quick]
"""

import json
import os
import platform
import subprocess
import sys

import numpy as np

RESULT_MB = 2000 * 2000 * 4 / 2**20
TARGETS = {
    "normal_growth_mb": 4 * RESULT_MB,
    "mlp_peak_ratio": 1.3,
    "kernel_ratio": 3.0,
}

_PRELUDE = r"""
import sys, json, timeit
import numpy as np

def vm(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) / 1024

lib = sys.argv[1]
if lib == "jax":
    import jax
    jax.config.update("jax_platforms", "cpu")
else:
    import jaxlite as jax
jnp, lax = jax.numpy, jax.lax
"""

_NORMAL = r"""
jax.random.normal(jax.random.key(1), (10, 10)).block_until_ready()
before = vm("VmHWM")
x = jax.random.normal(jax.random.key(0), (2000, 2000))
x.block_until_ready()
print(json.dumps({"growth_mb": vm("VmHWM") - before, "peak_mb": vm("VmHWM")}))
"""

_MLP = r"""
sizes = [784, 512, 512, 10]
rng = np.random.default_rng(0)
params = [
    (jnp.asarray(rng.standard_normal((m, n)).astype(np.float32) * 0.05),
     jnp.zeros(n, jnp.float32))
    for m, n in zip(sizes[:-1], sizes[1:])
]
x = jnp.asarray(rng.standard_normal((128, 784)).astype(np.float32))
y = jnp.asarray(np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)])

def loss(params, x, y):
    h = x
    for w, b in params[:-1]:
        h = jax.nn.relu(h @ w + b)
    w, b = params[-1]
    logits = h @ w + b
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * y, axis=-1))

@jax.jit
def step(params, x, y):
    grads = jax.grad(loss)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)

params = step(params, x, y)
jax.block_until_ready(params)
before = vm("VmRSS")
for _ in range(5):
    params = step(params, x, y)
jax.block_until_ready(params)
print(json.dumps({"growth_mb": vm("VmHWM") - before, "peak_mb": vm("VmHWM")}))
"""

_KERNELS = r"""
quick = sys.argv[2] == "quick"
out = {}
for n in (100, 1024):
    x = jnp.asarray(np.linspace(-3, 3, n, dtype=np.float32))
    y = jnp.asarray(np.linspace(0.1, 0.9, n, dtype=np.float32))
    funs = {
        "exp": (jax.jit(jnp.exp), (x,)),
        "sigmoid": (jax.jit(jax.nn.sigmoid), (x,)),
        "pow": (jax.jit(lax.pow), (y, x)),
        "erf": (jax.jit(lax.erf), (x,)),
    }
    best = {k: float("inf") for k in funs}
    for f, args in funs.values():
        f(*args).block_until_ready()
    # interleaved, best of many short batches: the machine may be shared
    for _ in range(10 if quick else 60):
        for k, (f, args) in funs.items():
            t = timeit.timeit(lambda: f(*args).block_until_ready(), number=50)
            best[k] = min(best[k], t / 50 * 1e6)
    out[str(n)] = best
print(json.dumps(out))
"""


def _run(script, lib, *args):
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("OPENBLAS_L2_SIZE", None)
    proc = subprocess.run(
        [sys.executable, "-c", _PRELUDE + script, lib, *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{lib} benchmark failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _libraries():
    libs = ["jaxlite"]
    probe = subprocess.run(
        [sys.executable, "-c", "import jax"], capture_output=True, check=False
    )
    if probe.returncode == 0:
        libs.append("jax")
    return libs


def run(quick=False):
    results = []
    for lib in _libraries():
        normal = _run(_NORMAL, lib)
        mlp = _run(_MLP, lib)
        kernels = _run(_KERNELS, lib, "quick" if quick else "full")
        results.append({"lib": lib, "normal": normal, "mlp": mlp, "kernels": kernels})
    return results


def table(results):
    by_lib = {r["lib"]: r for r in results}
    libs = list(by_lib)
    lines = [f"{'memory (MB)':36}" + "".join(f"{lib:>12}" for lib in libs)]
    lines.append("-" * len(lines[0]))
    rows = [
        ("random.normal 2000x2000 growth", lambda r: r["normal"]["growth_mb"]),
        ("random.normal 2000x2000 peak", lambda r: r["normal"]["peak_mb"]),
        ("MLP step peak", lambda r: r["mlp"]["peak_mb"]),
        ("MLP step growth (5 warm steps)", lambda r: r["mlp"]["growth_mb"]),
    ]
    for name, get in rows:
        lines.append(
            f"{name:36}" + "".join(f"{get(by_lib[lib]):12.1f}" for lib in libs)
        )
    lines.append("")
    head = f"{'jit time (us), ratio to jit(exp)':36}" + "".join(
        f"{lib:>20}" for lib in libs
    )
    lines += [head, "-" * len(head)]
    for n in ("100", "1024"):
        for k in ("exp", "sigmoid", "pow", "erf"):
            cells = ""
            for lib in libs:
                times = by_lib[lib]["kernels"][n]
                cells += f"{times[k]:12.2f} ({times[k] / times['exp']:4.2f}x)"
            lines.append(f"{k + ' n=' + n:36}{cells}")
    return "\n".join(lines)


def summary(results):
    by_lib = {r["lib"]: r for r in results}
    ours = by_lib["jaxlite"]
    out = {
        "normal_growth_mb": round(ours["normal"]["growth_mb"], 1),
        "normal_meets_target": ours["normal"]["growth_mb"]
        <= TARGETS["normal_growth_mb"],
        "kernel_ratios": {
            n: {k: round(t[k] / t["exp"], 2) for k in ("sigmoid", "pow", "erf")}
            for n, t in ours["kernels"].items()
        },
    }
    out["kernels_meet_target"] = all(
        r <= TARGETS["kernel_ratio"]
        for ratios in out["kernel_ratios"].values()
        for r in ratios.values()
    )
    if "jax" in by_lib:
        ratio = ours["mlp"]["peak_mb"] / by_lib["jax"]["mlp"]["peak_mb"]
        out["mlp_peak_ratio_to_jax"] = round(ratio, 2)
        out["mlp_meets_target"] = ratio <= TARGETS["mlp_peak_ratio"]
    return out


def main():
    results = run(quick="--quick" in sys.argv)
    print(f"Python {platform.python_version()}, NumPy {np.__version__}")
    print(table(results))
    print(
        json.dumps(
            {
                "benchmark": "memory",
                "results": results,
                "summary": summary(results),
                "targets": TARGETS,
            }
        )
    )


if __name__ == "__main__":
    main()
