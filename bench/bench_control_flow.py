"""Control-flow benchmark: a jitted `lax.scan` RNN, forward and gradient.

The cell is `h = tanh(W h + U x_t)` with hidden size 64, 1000 steps, float32. Times
`jit(forward)` and `jit(grad(loss))` in jaxlite and, when it is importable, in JAX, next
to a plain Python loop over NumPy (the forward only, and a hand-written backward pass).
Milliseconds per call, best of several repeats. Prints a table, then one line of JSON.
BLAS runs single-threaded (`OPENBLAS_NUM_THREADS=1` unless set) for every library.

    python bench/bench_control_flow.py [--quick]
"""

import json
import os
import platform
import sys
import timeit

# The matrices are small: BLAS threads only add contention (on a busy machine OpenBLAS
# threads spinning for a 64x1000 product cost tens of milliseconds). Must precede NumPy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

HIDDEN = 64
STEPS = 1000


def make_inputs(seed=0):
    rng = np.random.default_rng(seed)
    scale = 1.0 / np.sqrt(HIDDEN)
    w = (rng.standard_normal((HIDDEN, HIDDEN)) * scale).astype(np.float32)
    u = (rng.standard_normal((HIDDEN, HIDDEN)) * scale).astype(np.float32)
    h0 = np.zeros(HIDDEN, np.float32)
    xs = rng.standard_normal((STEPS, HIDDEN)).astype(np.float32)
    return w, u, h0, xs


def rnn_functions(jax_module):
    """(jit(forward), jit(grad(loss))) written against a JAX-like module."""
    jnp, lax = jax_module.numpy, jax_module.lax

    def forward(w, u, h0, xs):
        def cell(h, x):
            h = jnp.tanh(w @ h + u @ x)
            return h, h

        h, hs = lax.scan(cell, h0, xs)
        return h, hs

    def loss(w, u, h0, xs):
        h, hs = forward(w, u, h0, xs)
        return jnp.sum(h) + jnp.sum(hs) * 0.01

    grad = jax_module.grad(loss, argnums=(0, 1))
    return jax_module.jit(forward), jax_module.jit(grad)


def numpy_forward(w, u, h0, xs):
    h, hs = h0, np.empty_like(xs)
    for t in range(xs.shape[0]):
        h = np.tanh(w @ h + u @ xs[t])
        hs[t] = h
    return h, hs


def numpy_grad(w, u, h0, xs):
    h, hs = numpy_forward(w, u, h0, xs)
    dw, du = np.zeros_like(w), np.zeros_like(u)
    dh = np.ones_like(h)
    for t in range(xs.shape[0] - 1, -1, -1):
        dh = dh + 0.01
        dpre = dh * (1 - hs[t] * hs[t])
        prev = hs[t - 1] if t else h0
        dw += np.outer(dpre, prev)
        du += np.outer(dpre, xs[t])
        dh = w.T @ dpre
    return dw, du


def best_ms(fn, args, number, repeat):
    def call():
        out = fn(*args)
        for leaf in out if isinstance(out, tuple) else (out,):
            if hasattr(leaf, "block_until_ready"):
                leaf.block_until_ready()

    call()  # compile / warm up
    times = timeit.repeat(call, number=number, repeat=repeat)
    return min(times) / number * 1e3


def main():
    quick = "--quick" in sys.argv
    number, repeat = (2, 3) if quick else (10, 7)
    args = make_inputs()
    results = {}

    import jaxlite

    fwd, grad = rnn_functions(jaxlite)
    lite_args = [jaxlite.numpy.asarray(a) for a in args]
    results["jaxlite_forward_ms"] = best_ms(fwd, lite_args, number, repeat)
    try:
        results["jaxlite_grad_ms"] = best_ms(grad, lite_args, number, repeat)
    except NotImplementedError as e:  # a primitive without a derivative rule yet
        results["jaxlite_grad_ms"] = None
        results["jaxlite_grad_error"] = str(e).splitlines()[0]
    results["numpy_forward_ms"] = best_ms(numpy_forward, args, number, repeat)
    results["numpy_grad_ms"] = best_ms(numpy_grad, args, number, repeat)
    try:
        import jax
    except ImportError:
        jax = None
    if jax is not None:
        jfwd, jgrad = rnn_functions(jax)
        jargs = [jax.numpy.asarray(a) for a in args]
        results["jax_forward_ms"] = best_ms(jfwd, jargs, number, repeat)
        results["jax_grad_ms"] = best_ms(jgrad, jargs, number, repeat)
        out, ref = fwd(*args), jfwd(*jargs)
        results["forward_max_abs_diff"] = float(
            np.max(np.abs(np.asarray(out[1]) - np.asarray(ref[1])))
        )

    rows = [("forward", "forward"), ("grad", "grad")]
    print(
        f"lax.scan RNN, hidden {HIDDEN}, {STEPS} steps, float32 "
        f"({platform.machine()}, Python {platform.python_version()})"
    )
    print(
        f"{'':10}{'jaxlite ms':>12}{'jax ms':>10}{'numpy ms':>10}"
        f"{'vs jax':>9}{'vs numpy':>10}"
    )
    for label, key in rows:
        mine = results.get(f"jaxlite_{key}_ms")
        theirs = results.get(f"jax_{key}_ms")
        base = results.get(f"numpy_{key}_ms")

        def fmt(v, width):
            return f"{v:>{width}.3f}" if v is not None else f"{'-':>{width}}"

        def ratio(a, b, width):
            return f"{a / b:>{width - 1}.2f}x" if a and b else f"{'-':>{width}}"

        print(
            f"{label:10}{fmt(mine, 12)}{fmt(theirs, 10)}{fmt(base, 10)}"
            f"{ratio(mine, theirs, 9)}{ratio(mine, base, 10)}"
        )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
