"""The composition matrix: base programs x transformations.

Each base program is written once against a module `jx` (jaxlite, or real JAX when it
is importable) and run under every transformation in `TRANSFORMS`. A result is checked
three ways: against jaxlite's own reference for that transformation (eager values for
jit, central differences in float64 for jvp/vjp/linearize and the second-order ones, a
per-example loop for vmap), and against real JAX running the same program through the
same transformation. Where JAX refuses a combination (reverse mode of `while_loop`,
forward mode of `custom_vjp`), jaxlite must refuse it with the same error class and key
phrase; those expectations are data in the program, so they are checked without JAX too.
"""

from __future__ import annotations

import functools
import os

import numpy as np
import pytest
from tests.testing import check_close, numerical_jvp

import jaxlite

try:
    import jax as real_jax
except ImportError:  # the matrix still runs; only the differential half is skipped
    real_jax = None

B = 3  # batch size for the vmap transformations


# ----------------------------------------------------------------------------------------
# Base programs. `make(jx)` returns the function; `gen(rng, batch)` its arguments (with a
# leading batch axis of size `batch` when batch is not None); `diff` the positions of the
# float arguments that are differentiated.


class Program:
    def __init__(
        self, name, make, gen, diff=(0,), errors=None, jax_errors=None, jax_fails=()
    ):
        self.name = name
        self.make = make
        self.gen = gen
        self.diff = diff
        self.errors = errors or {}
        # Where JAX raises a different error than jaxlite for an expected error.
        self.jax_errors = {**self.errors, **(jax_errors or {})}
        # Transformations that JAX 0.10.2 itself gets wrong (it raises) while jaxlite
        # gives the right answer: checked against the references only.
        self.jax_fails = frozenset(jax_fails)


def _f32(rng, shape, batch, lo=-1.0, hi=1.0):
    shape = shape if batch is None else (batch, *shape)
    return rng.uniform(lo, hi, shape).astype(np.float32)


def _elementwise(jx):
    jnp = jx.numpy

    def f(x, y):
        return (
            jnp.sin(x) * jnp.exp(0.5 * y)
            + x**2 / (1 + y**2)
            + jnp.tanh(x * y)
            + jnp.log1p(x**2)
            - jnp.sqrt(y + 2.0)
        )

    return f


def _broadcasting(jx):
    jnp = jx.numpy

    def f(x, y):
        return x[:, None] * y + 2.0 * jnp.cos(x)[:, None] - y**3 / 3 + 1

    return f


def _reductions(jx):
    jnp = jx.numpy

    def f(x):
        a = jnp.sum(x**2, axis=0)
        b = jnp.max(x, axis=1).sum() + jnp.min(x, axis=0)
        c = jnp.cumsum(x, axis=1)[1]
        return a + b + jnp.mean(jnp.exp(x)) + c + jnp.prod(x[0] + 2.0)

    return f


def _dot(jx):
    jnp = jx.numpy
    lax = jx.lax

    def f(a, x, b):
        y = a @ x + jnp.dot(a, b).sum(1) + jnp.einsum("ij,j->i", a, jnp.tanh(x))
        z = lax.dot_general(b, b, (((0,), (0,)), ((), ())))  # b.T @ b
        return y * jnp.trace(z) + jnp.matmul(a, jnp.sin(b))[:, 0]

    return f


def _gather_scatter(jx):
    jnp = jx.numpy
    lax = jx.lax

    def f(x, y, idx, i):
        x = jnp.asarray(x)  # differences call f on NumPy arrays
        z = x.at[idx].set(y * 3.0).at[1:3].add(x[idx] ** 2)
        w = lax.dynamic_slice(x, (i,), (2,))
        u = lax.dynamic_update_slice(z, jnp.sin(w), (i + 1,))
        return u * x[::-1] + x[idx].sum() + jnp.take(x, idx).prod()

    return f


def _gen_gather_scatter(rng, batch):
    idx = np.array([0, 3], np.int32)
    i = np.int32(1)
    if batch is not None:
        idx = np.array([[0, 3], [4, 1], [2, 0]], np.int32)
        i = np.array([0, 2, 3], np.int32)
    return _f32(rng, (5,), batch), _f32(rng, (2,), batch), idx, i


def _where(jx):
    jnp = jx.numpy

    def f(x, y):
        a = jnp.where(x > 0, x * y, jnp.sin(y))
        return a + jnp.maximum(x, 0.3 * y) + jnp.clip(x, -0.5, 0.5) + jnp.abs(y)

    return f


def _gen_where(rng, batch):
    # values kept away from the kinks (0, +-0.5, x == 0.3 y) so differences are smooth
    base = np.array([-0.9, -0.3, 0.2, 0.7], np.float32)
    y = np.array([0.8, -0.6, 0.35, -0.9], np.float32)
    if batch is None:
        return base, y
    return np.stack([base, -base, base[::-1]]), np.stack([y, y[::-1], -y])


def _shape_ops(jx):
    jnp = jx.numpy
    lax = jx.lax

    def f(x, y):
        z = jnp.concatenate([x, y[None]], axis=0)
        s = jnp.stack([y, 2 * y])
        t = lax.transpose(z, (1, 0)).reshape(-1)
        return jnp.concatenate([t * 2, jnp.flip(y) ** 2, s.ravel(), z[:, ::2].T[1]])

    return f


def _cond(jx):
    jnp = jx.numpy
    lax = jx.lax

    def f(x, y):
        return lax.cond(
            jnp.sum(x) > 0,
            lambda a, b: jnp.sin(a) * b,
            lambda a, b: a - jnp.cos(b) * a,
            x,
            y,
        )

    return f


def _gen_cond(rng, batch):
    x = np.array([0.5, -0.2, 0.3], np.float32)
    y = _f32(rng, (3,), batch)
    if batch is None:
        return x, y
    return np.stack([x, -x, 2 * x]), y


def _switch(jx):
    jnp = jx.numpy
    lax = jx.lax

    def f(x, i):
        branches = [
            lambda a: jnp.sin(a),
            lambda a: a**2 * 0.5,
            lambda a: jnp.exp(a) - a,
        ]
        return lax.switch(i, branches, x)

    return f


def _gen_switch(rng, batch):
    i = np.int32(1) if batch is None else np.array([0, 2, 1], np.int32)
    return _f32(rng, (3,), batch), i


def _while(jx):
    jnp = jx.numpy
    lax = jx.lax

    def f(x):
        def cond(c):
            return (c[0] < 4) & (jnp.sum(c[1]) < 3.0)

        def body(c):
            return c[0] + 1, jnp.sin(c[1]) * 1.5 + 0.4

        return lax.while_loop(cond, body, (0, x))[1]

    return f


def _gen_while(rng, batch):
    # sums cross 3.0 after different numbers of steps; never close to it
    x = np.array([0.1, 0.2, 0.3], np.float32)
    if batch is None:
        return (x,)
    return (np.stack([x, x + 0.6, x - 0.8]),)


_REVERSE_WHILE = (
    ValueError,
    "Reverse-mode differentiation does not work for lax.while",
)


def _fori(jx):
    jnp = jx.numpy
    lax = jx.lax

    def f(x, y):
        return lax.fori_loop(
            0, 3, lambda i, c: c * jnp.cos(y) + i * 0.1 * jnp.sin(c), x
        )

    return f


def _scan(jx):
    jnp = jx.numpy
    lax = jx.lax

    def f(x, xs):
        def step(c, a):
            return c * jnp.sin(a) + a, c**2 + a

        carry, ys = lax.scan(step, x, xs)
        return carry, ys

    return f


def _gen_scan(rng, batch):
    return _f32(rng, (3,), batch), _f32(rng, (4, 3), batch)


def _custom_jvp(jx):
    jnp = jx.numpy

    @jx.custom_jvp
    def softplus(x):
        return jnp.log1p(jnp.exp(x))

    @softplus.defjvp
    def softplus_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return softplus(x), t / (1 + jnp.exp(-x))

    def f(x, y):
        return softplus(x * y) + jnp.sin(softplus(x))

    return f


def _custom_vjp(jx):
    jnp = jx.numpy

    @jx.custom_vjp
    def sin_mul(x, y):
        return jnp.sin(x) * y

    def fwd(x, y):
        return sin_mul(x, y), (jnp.cos(x), jnp.sin(x), y)

    def bwd(res, ct):
        cos_x, sin_x, y = res
        return ct * cos_x * y, ct * sin_x

    sin_mul.defvjp(fwd, bwd)

    def f(x, y):
        return sin_mul(x**2, y) + x

    return f


_FWD_CUSTOM_VJP = (TypeError, "can't apply forward-mode autodiff (jvp) to a custom_vjp")
# Reverse mode over forward mode of a custom_vjp function: JAX finds no JVP rule for
# the custom_lin primitive; jaxlite gives the forward-mode error above.
_JAX_GRAD_JVP_CUSTOM_VJP = {
    "grad(jvp)": (NotImplementedError, "Differentiation rule for 'custom_lin'")
}


def _checkpoint(jx):
    jnp = jx.numpy

    def f(x, y):
        g = jx.checkpoint(lambda a, b: jnp.sin(jnp.sin(a) * b) * jnp.exp(a))
        h = jx.checkpoint(
            lambda a: jnp.tanh(a @ a.T).sum(0),
            policy=jx.checkpoint_policies.dots_saveable,
        )
        return g(x, y) * 2 + h(jnp.outer(x, y))

    return f


def _callback(jx):
    """A host function with its derivative given by custom_jvp (the seed's pattern,
    twice differentiable because each derivative is again a custom_jvp callback)."""
    jnp = jx.numpy

    def host(fn):
        def call(x):
            shape = jx.ShapeDtypeStruct(x.shape, x.dtype)
            return jx.pure_callback(
                lambda v: fn(np.asarray(v)).astype(v.dtype),
                shape,
                x,
                vmap_method="sequential",
            )

        return call

    @jx.custom_jvp
    def hsin(x):
        return host(np.sin)(x)

    @jx.custom_jvp
    def hcos(x):
        return host(np.cos)(x)

    hsin.defjvps(lambda t, ans, x: hcos(x) * t)
    hcos.defjvps(lambda t, ans, x: -hsin(x) * t)

    def f(x, y):
        return hsin(x * y) + jnp.cos(x) * hcos(y)

    return f


def _int_aux(jx):
    jnp = jx.numpy

    def f(x, n, mask):
        a = jnp.where(mask, x * n, x**2)
        return a + n.astype(jnp.float32) * jnp.sin(x) + jnp.sum(mask) * x

    return f


def _gen_int_aux(rng, batch):
    n = np.array([1, -2, 3], np.int32)
    mask = np.array([True, False, True])
    if batch is not None:
        n = np.stack([n, n * 2, -n])
        mask = np.stack([mask, ~mask, mask])
    return _f32(rng, (3,), batch), n, mask


def _closure_cond(jx):
    """Branches that close over an outer traced value."""
    jnp = jx.numpy
    lax = jx.lax

    def f(x, y):
        return lax.cond(
            jnp.sum(y) > 0, lambda a: a * x**2, lambda a: a + jnp.sin(x) * a, y
        )

    return f


def _closure_scan(jx):
    """A scan body (checkpointed) that closes over an outer traced value."""
    jnp = jx.numpy
    lax = jx.lax

    def f(x, xs):
        @jx.checkpoint
        def step(c, a):
            c = jnp.sin(c * x) + a * jnp.cos(x)
            return c, c * a

        carry, ys = lax.scan(step, x * 0.5, xs, reverse=True)
        return carry + ys.sum(0), lax.map(lambda r: r * x, ys)

    return f


def _inner_transforms(jx):
    """grad, vmap, jvp and jit applied inside the program, over closed-over values."""
    jnp = jx.numpy

    def f(x, y):
        g = jx.grad(lambda z: jnp.sum(jnp.sin(z * x)))(y)
        v = jx.vmap(lambda a, b: a * jnp.sum(x * b), in_axes=(0, None))(y, x)
        _, t = jx.jvp(lambda a: jnp.exp(a) * y, (x,), (jnp.ones_like(x),))
        h = jx.jit(lambda a, n: a**n, static_argnums=1)(x, 3)
        return g * x + v + t + h

    return f


def _sorting(jx):
    jnp = jx.numpy

    def f(x, i):
        s = jnp.sort(x)
        order = jnp.argsort(-x)
        return (
            s * jnp.cumprod(x + 1.5)
            + x[order] ** 2
            + x[i] * jnp.take_along_axis(x, order, axis=0)
        )

    return f


def _gen_sorting(rng, batch):
    i = np.int32(2) if batch is None else np.array([0, 3, 1], np.int32)
    return _f32(rng, (4,), batch), i


def _random(jx):
    """Random numbers from a key built from an integer argument."""
    jnp = jx.numpy
    random = jx.random

    def f(x, seed):
        k1, k2 = random.split(random.PRNGKey(seed))
        f32 = jnp.float32  # the same draws in x64 mode (finite differences use it)
        z = random.normal(k1, (3,), f32) * x + random.uniform(k2, (3,), f32) * x**2
        return z * random.bernoulli(k2, f32(0.5), (3,))

    return f


def _gen_random(rng, batch):
    seed = np.int32(7) if batch is None else np.array([1, 2, 3], np.int32)
    return _f32(rng, (3,), batch), seed


def _closures(jx):
    """checkpoint, custom_jvp and custom_vjp functions closing over the arguments
    (`s` is not differentiated: JAX refuses closures over differentiated values in
    custom rules)."""
    jnp = jx.numpy

    def f(x, s):
        g = jx.checkpoint(lambda a: jnp.sin(a * s) * x)

        @jx.custom_jvp
        def k(a):
            return jnp.sin(a) * s

        @k.defjvp
        def k_jvp(primals, tangents):
            return k(primals[0]), jnp.cos(primals[0]) * s * tangents[0]

        @jx.custom_vjp
        def m(a, b):
            return a**2 * s + b

        def m_fwd(a, b):
            return m(a, b), a

        def m_bwd(a, ct):
            return 2 * a * s * ct, None  # None: a zero cotangent for b

        m.defvjp(m_fwd, m_bwd)
        return g(x) + k(x) + m(x, 1.0)

    return f


def _gen_floats(*shapes):
    def gen(rng, batch):
        return tuple(_f32(rng, s, batch) for s in shapes)

    return gen


PROGRAMS = [
    Program("elementwise", _elementwise, _gen_floats((4,), (4,)), diff=(0, 1)),
    Program("broadcasting", _broadcasting, _gen_floats((3,), (4,)), diff=(0, 1)),
    Program("reductions", _reductions, _gen_floats((3, 4))),
    Program("dot", _dot, _gen_floats((3, 4), (4,), (4, 2)), diff=(0, 1, 2)),
    Program("gather_scatter", _gather_scatter, _gen_gather_scatter, diff=(0, 1)),
    Program("where", _where, _gen_where, diff=(0, 1)),
    Program("shape_ops", _shape_ops, _gen_floats((2, 3), (3,)), diff=(0, 1)),
    Program("cond", _cond, _gen_cond, diff=(0, 1)),
    Program("switch", _switch, _gen_switch),
    Program(
        "while_loop",
        _while,
        _gen_while,
        errors={
            t: _REVERSE_WHILE
            for t in (
                "vjp",
                "grad(grad)",
                "jit(grad(jit))",
                "jacfwd(jacrev)",
                "vmap(grad)",
                "grad(vmap)",
                "grad(vmap(in_axes=(0,None)))",
                "grad(jvp)",
            )
        },
    ),
    Program("fori_loop", _fori, _gen_floats((3,), (3,)), diff=(0, 1)),
    Program("scan", _scan, _gen_scan, diff=(0, 1)),
    Program("custom_jvp", _custom_jvp, _gen_floats((3,), (3,)), diff=(0, 1)),
    Program(
        "custom_vjp",
        _custom_vjp,
        _gen_floats((3,), (3,)),
        diff=(0, 1),
        errors={
            t: _FWD_CUSTOM_VJP
            for t in (
                "jvp",
                "linearize",
                "jacfwd(jacrev)",
                "jvp(vmap)",
                "vmap(jvp)",
                "jacfwd",
                "grad(jvp)",
            )
        },
        jax_errors=_JAX_GRAD_JVP_CUSTOM_VJP,
    ),
    Program("checkpoint", _checkpoint, _gen_floats((3,), (3,)), diff=(0, 1)),
    Program("callback_custom_jvp", _callback, _gen_floats((3,), (3,)), diff=(0, 1)),
    Program("int_aux", _int_aux, _gen_int_aux),
    Program("closure_cond", _closure_cond, _gen_cond, diff=(0, 1)),
    Program("closure_scan", _closure_scan, _gen_scan, diff=(0, 1)),
    Program("inner_transforms", _inner_transforms, _gen_floats((3,), (3,)), (0, 1)),
    Program("sorting", _sorting, _gen_sorting),
    Program("random", _random, _gen_random),
    Program(
        "closures",
        _closures,
        _gen_floats((3,), (3,)),
        # JAX: "No constant handler for type DynamicJaxprTracer" (custom rules closing
        # over a jit tracer) and UnexpectedTracerError (a custom_vjp bwd closing over a
        # vmapped value, called after the vmap ended).
        jax_fails=("jit(grad(jit))", "grad(vmap)"),
        errors={
            t: _FWD_CUSTOM_VJP
            for t in (
                "jvp",
                "linearize",
                "jacfwd(jacrev)",
                "jvp(vmap)",
                "vmap(jvp)",
                "jacfwd",
                "grad(jvp)",
            )
        },
        jax_errors=_JAX_GRAD_JVP_CUSTOM_VJP,
    ),
]


# ----------------------------------------------------------------------------------------
# Transformations. `run(jx, prog, f, args, aux)` applies one to `f` with library `jx`;
# `check(prog, f, args, aux, got)` checks jaxlite's result against its own reference.


def _split(prog, args):
    """`g(*diff_args)` with the other arguments fixed, and the diff args."""
    diff = [args[i] for i in prog.diff]

    def bind(f):
        def g(*d):
            full = list(args)
            for i, v in zip(prog.diff, d):
                full[i] = v
            return f(*full)

        return g

    return bind, diff


def _loss(jx, f):
    """A scalar of all float outputs of `f`, non-linear so second derivatives matter."""
    jnp = jx.numpy

    def loss(*a):
        leaves = jx.tree_util.tree_leaves(f(*a))
        return sum(jnp.sum(jnp.sin(o) + 0.5 * o**2) for o in leaves)

    return loss


def _all(prog):
    return tuple(range(len(prog.diff)))


def _run_jit(jx, prog, f, args, aux):
    return jx.jit(f)(*args)


def _run_jit_jit(jx, prog, f, args, aux):
    return jx.jit(jx.jit(f))(*args)


def _run_jvp(jx, prog, f, args, aux):
    bind, diff = _split(prog, args)
    return jx.jvp(bind(f), tuple(diff), tuple(aux["tangents"]))


def _run_linearize(jx, prog, f, args, aux):
    bind, diff = _split(prog, args)
    y, f_jvp = jx.linearize(bind(f), *diff)
    return y, f_jvp(*aux["tangents"])


def _run_vjp(jx, prog, f, args, aux):
    bind, diff = _split(prog, args)
    y, pullback = jx.vjp(bind(f), *diff)
    ct = jx.tree_util.tree_map(lambda c: c.astype(np.float32), aux["ct"])
    return y, pullback(ct)


def _run_vmap(jx, prog, f, args, aux):
    return jx.vmap(f)(*aux["batched"])


def _run_vmap_last(jx, prog, f, args, aux):
    """vmap over the last axis of every argument, results batched on their last axis."""
    moved = [jx.numpy.moveaxis(a, 0, -1) for a in aux["batched"]]
    return jx.vmap(f, in_axes=-1, out_axes=-1)(*moved)


def _run_vmap_first(jx, prog, f, args, aux):
    """vmap over the first argument only; the others are shared by the batch."""
    in_axes = (0,) + (None,) * (len(args) - 1)
    return jx.vmap(f, in_axes=in_axes)(aux["batched"][0], *args[1:])


def _run_grad_vmap_first(jx, prog, f, args, aux):
    in_axes = (0,) + (None,) * (len(args) - 1)
    full = [aux["batched"][0], *args[1:]]
    diff = [full[i] for i in prog.diff]

    def total(*d):
        a = list(full)
        for i, v in zip(prog.diff, d):
            a[i] = v
        return jx.numpy.sum(jx.vmap(_loss(jx, f), in_axes=in_axes)(*a))

    return jx.grad(total, argnums=_all(prog))(*diff)


def _run_jvp_vmap(jx, prog, f, args, aux):
    batched = aux["batched"]
    tangents = [jx.numpy.stack([t] * B) for t in aux["tangents"]]
    return jx.jvp(
        _split(prog, batched)[0](jx.vmap(f)),
        tuple(batched[i] for i in prog.diff),
        tuple(tangents),
    )


def _run_vmap_jvp(jx, prog, f, args, aux):
    def jvp_at(*a):
        bind, diff = _split(prog, a)
        return jx.jvp(bind(f), tuple(diff), tuple(aux["tangents"]))

    return jx.vmap(jvp_at)(*aux["batched"])


def _jvp_loss(jx, prog, f, args, aux):
    """A scalar of the JVP's tangent output, as a function of the diff args."""
    bind, _ = _split(prog, args)
    jnp = jx.numpy

    def inner(*d):
        tangents = [t.astype(x.dtype) for t, x in zip(aux["tangents"], d)]
        _, t = jx.jvp(bind(f), tuple(d), tuple(tangents))
        return sum(jnp.sum(jnp.sin(o)) for o in jx.tree_util.tree_leaves(t))

    return inner


def _run_grad_jvp(jx, prog, f, args, aux):
    """Reverse mode over forward mode."""
    _, diff = _split(prog, args)
    return jx.grad(_jvp_loss(jx, prog, f, args, aux), argnums=_all(prog))(*diff)


def _run_jacfwd(jx, prog, f, args, aux):
    bind, diff = _split(prog, args)
    return jx.jacfwd(bind(f), argnums=_all(prog))(*diff)


def _grad_fn(jx, prog, f, args):
    bind, diff = _split(prog, args)
    return jx.grad(_loss(jx, bind(f)), argnums=_all(prog)), diff


def _run_grad_grad(jx, prog, f, args, aux):
    """A Hessian-vector product as the gradient of <grad(loss), v>."""
    jnp = jx.numpy
    g, diff = _grad_fn(jx, prog, f, args)

    def inner(*d):
        return sum(jnp.vdot(a, v) for a, v in zip(g(*d), aux["tangents"]))

    return jx.grad(inner, argnums=_all(prog))(*diff)


def _run_jit_grad_jit(jx, prog, f, args, aux):
    bind, diff = _split(prog, args)
    loss = _loss(jx, jx.jit(bind(f)))
    return jx.jit(jx.grad(loss, argnums=_all(prog)))(*diff)


def _run_jacfwd_jacrev(jx, prog, f, args, aux):
    bind, diff = _split(prog, args)
    argnums = _all(prog)
    loss = _loss(jx, bind(f))
    return jx.jacfwd(jx.jacrev(loss, argnums=argnums), argnums=argnums)(*diff)


def _per_example(prog, args, fun):
    """`fun(example args)` for each example of the batched `args`, stacked."""
    outs = [fun(*(a[b] for a in args)) for b in range(B)]
    return jaxlite.tree_util.tree_map(lambda *xs: np.stack(xs), *outs)


def _run_vmap_grad(jx, prog, f, args, aux):
    def grad_at(*a):
        g, diff = _grad_fn(jx, prog, f, a)
        return g(*diff)

    return jx.vmap(grad_at)(*aux["batched"])


def _run_grad_vmap(jx, prog, f, args, aux):
    batched = aux["batched"]
    diff = [batched[i] for i in prog.diff]
    jnp = jx.numpy

    def total(*d):
        full = list(batched)
        for i, v in zip(prog.diff, d):
            full[i] = v
        return jnp.sum(jx.vmap(_loss(jx, f))(*full))

    return jx.grad(total, argnums=_all(prog))(*diff)


# References, computed with jaxlite only.


def _grad_reference(prog, f, args):
    g, diff = _grad_fn(jaxlite, prog, f, args)
    return g(*diff)


def _check_eager(prog, f, args, aux, got):
    check_close(got, f(*args), rtol=1e-5, atol=1e-6)


def _check_jvp(prog, f, args, aux, got):
    bind, diff = _split(prog, args)
    y, y_dot = got
    check_close(y, f(*args), rtol=1e-5, atol=1e-6)
    want = numerical_jvp(bind(f), tuple(diff), tuple(aux["tangents"]))
    check_close(_f64(y_dot), want, rtol=2e-3, atol=2e-3)


def _check_vjp(prog, f, args, aux, got):
    """The dot-product test <vjp(ct), t> == <ct, J t> with J t by differences."""
    bind, diff = _split(prog, args)
    y, cts_in = got
    check_close(y, f(*args), rtol=1e-5, atol=1e-6)
    jt = numerical_jvp(bind(f), tuple(diff), tuple(aux["tangents"]))
    lhs = _inner(cts_in, aux["tangents"])
    rhs = _inner(aux["ct"], jt)
    assert abs(lhs - rhs) <= 2e-3 * (1 + abs(rhs)), (lhs, rhs)


def _check_vmap(prog, f, args, aux, got):
    check_close(got, _per_example(prog, aux["batched"], f), rtol=1e-5, atol=1e-5)


def _check_vmap_last(prog, f, args, aux, got):
    got = jaxlite.tree_util.tree_map(lambda x: np.moveaxis(np.asarray(x), -1, 0), got)
    _check_vmap(prog, f, args, aux, got)


def _check_vmap_first(prog, f, args, aux, got):
    want = [f(x, *args[1:]) for x in aux["batched"][0]]
    want = jaxlite.tree_util.tree_map(lambda *xs: np.stack(xs), *want)
    check_close(got, want, rtol=1e-5, atol=1e-5)


def _check_grad_vmap_first(prog, f, args, aux, got):
    """Per-example gradients for the batched argument, summed ones for the others."""
    grads = [_grad_reference(prog, f, (x, *args[1:])) for x in aux["batched"][0]]
    want = [
        np.stack(g) if i == 0 else np.sum(g, axis=0)
        for i, g in zip(prog.diff, zip(*grads))
    ]
    check_close(got, tuple(want), rtol=1e-5, atol=1e-5)


def _jvp_at(prog, f, aux):
    def jvp_at(*a):
        bind, diff = _split(prog, a)
        return jaxlite.jvp(bind(f), tuple(diff), tuple(aux["tangents"]))

    return jvp_at


def _check_batched_jvp(prog, f, args, aux, got):
    check_close(
        got,
        _per_example(prog, aux["batched"], _jvp_at(prog, f, aux)),
        rtol=1e-5,
        atol=1e-5,
    )


def _check_grad_jvp(prog, f, args, aux, got):
    """<grad, v> against a central difference of the same scalar along v."""
    _, diff = _split(prog, args)
    v = aux["tangents"]
    inner = _jvp_loss(jaxlite, prog, f, args, aux)
    want = float(numerical_jvp(inner, tuple(diff), tuple(v)))
    lhs = _inner(got, v)
    assert abs(lhs - want) <= 3e-3 * (1 + abs(want)), (lhs, want)


def _check_jacfwd(prog, f, args, aux, got):
    """The Jacobian contracted with the tangents is the JVP."""
    bind, diff = _split(prog, args)
    _, want = jaxlite.jvp(bind(f), tuple(diff), tuple(aux["tangents"]))
    got_leaves = jaxlite.tree_util.tree_leaves(want)
    jac = jaxlite.tree_util.tree_leaves(got)
    n = len(prog.diff)
    for k, w in enumerate(got_leaves):
        total = 0.0
        for j in range(n):
            v = np.asarray(aux["tangents"][j], np.float64)
            block = np.asarray(jac[k * n + j], np.float64)
            total = total + np.tensordot(block, v, axes=v.ndim)
        check_close(total, _f64(w), rtol=1e-4, atol=1e-5)


def _hvp_reference(prog, f, args, aux):
    """H v by central differences of jaxlite's gradient."""
    bind, diff = _split(prog, args)
    g = jaxlite.grad(_loss(jaxlite, bind(f)), argnums=_all(prog))
    return numerical_jvp(g, tuple(diff), tuple(aux["tangents"]))


def _check_grad_grad(prog, f, args, aux, got):
    check_close(_f64(got), _hvp_reference(prog, f, args, aux), rtol=3e-3, atol=3e-3)


def _check_jit_grad_jit(prog, f, args, aux, got):
    check_close(got, _grad_reference(prog, f, args), rtol=1e-5, atol=1e-5)


def _check_jacfwd_jacrev(prog, f, args, aux, got):
    """Contract the Hessian blocks with v and compare with H v by differences."""
    n = len(prog.diff)
    hv = []
    for i in range(n):
        row = 0.0
        for j in range(n):
            block = np.asarray(got[i][j], np.float64)
            v = np.asarray(aux["tangents"][j], np.float64)
            row = row + np.tensordot(block, v, axes=v.ndim)
        hv.append(row)
    want = _hvp_reference(prog, f, args, aux)
    check_close(tuple(hv), want, rtol=3e-3, atol=3e-3)


def _check_vmap_grad(prog, f, args, aux, got):
    def grad_at(*a):
        return _grad_reference(prog, f, a)

    want = _per_example(prog, aux["batched"], grad_at)
    check_close(got, want, rtol=1e-5, atol=1e-5)


def _check_grad_vmap(prog, f, args, aux, got):
    _check_vmap_grad(prog, f, args, aux, got)  # every diff arg is batched


def _f64(tree):
    return jaxlite.tree_util.tree_map(lambda x: np.asarray(x, np.float64), tree)


def _inner(xs, ys):
    xs, ys = jaxlite.tree_util.tree_leaves(xs), jaxlite.tree_util.tree_leaves(ys)
    assert len(xs) == len(ys)
    return sum(
        float(np.sum(np.asarray(a, np.float64) * np.asarray(b, np.float64)))
        for a, b in zip(xs, ys)
    )


TRANSFORMS = {
    "jit": (_run_jit, _check_eager),
    "jit(jit)": (_run_jit_jit, _check_eager),
    "jvp": (_run_jvp, _check_jvp),
    "linearize": (_run_linearize, _check_jvp),
    "vjp": (_run_vjp, _check_vjp),
    "vmap": (_run_vmap, _check_vmap),
    "vmap(in_axes=-1)": (_run_vmap_last, _check_vmap_last),
    "vmap(in_axes=(0,None))": (_run_vmap_first, _check_vmap_first),
    "grad(vmap(in_axes=(0,None)))": (_run_grad_vmap_first, _check_grad_vmap_first),
    "jvp(vmap)": (_run_jvp_vmap, _check_batched_jvp),
    "vmap(jvp)": (_run_vmap_jvp, _check_batched_jvp),
    "jacfwd": (_run_jacfwd, _check_jacfwd),
    "grad(grad)": (_run_grad_grad, _check_grad_grad),
    "jit(grad(jit))": (_run_jit_grad_jit, _check_jit_grad_jit),
    "grad(jvp)": (_run_grad_jvp, _check_grad_jvp),
    "jacfwd(jacrev)": (_run_jacfwd_jacrev, _check_jacfwd_jacrev),
    "vmap(grad)": (_run_vmap_grad, _check_vmap_grad),
    "grad(vmap)": (_run_grad_vmap, _check_grad_vmap),
}


def _aux(prog, args, seed):
    rng = np.random.default_rng(seed + 1)
    _, diff = _split(prog, args)
    f = prog.make(jaxlite)
    tangents = [rng.standard_normal(np.shape(d)).astype(np.float32) for d in diff]
    out = jaxlite.eval_shape(f, *args)
    ct = jaxlite.tree_util.tree_map(
        lambda s: rng.standard_normal(s.shape).astype(np.float32), out
    )
    batched = _as_arrays(jaxlite, prog.gen(np.random.default_rng(seed + 2), B))
    return {"tangents": tangents, "ct": ct, "batched": batched}


def _compare_with_jax(prog, transform):
    """Whether this cell is also run in JAX. JAX compiles every cell (about 0.2 s each,
    95% of the matrix's time), so a Latin-square quarter of the cells is compared:
    every program under several transformations and every transformation for several
    programs; cells where an error is expected always are. JAXLITE_FULL_ORACLE=1
    compares all of them."""
    if os.environ.get("JAXLITE_FULL_ORACLE") == "1":
        return True
    if transform in prog.errors or transform in prog.jax_fails:
        return True
    i, j = PROGRAMS.index(prog), list(TRANSFORMS).index(transform)
    return (i + j) % 4 == 0


def _as_arrays(jx, tree):
    return jx.tree_util.tree_map(jx.numpy.asarray, tree)


def _run_or_error(run, jx, prog, args, aux):
    args = _as_arrays(jx, args)
    aux = {**aux, "batched": _as_arrays(jx, aux["batched"])}
    fun = functools.partial(run, jx, prog, prog.make(jx))
    if jx is real_jax:  # one compilation instead of many op-by-op ones: much faster
        fun = real_jax.jit(fun)
    try:
        return fun(args, aux), None
    except Exception as e:  # noqa: BLE001  (the error is the result being compared)
        return None, e


@pytest.mark.parametrize("transform", list(TRANSFORMS))
@pytest.mark.parametrize("prog", PROGRAMS, ids=lambda p: p.name)
def test_composition(prog, transform):
    seed = sum(map(ord, prog.name))
    args = _as_arrays(jaxlite, prog.gen(np.random.default_rng(seed), None))
    aux = _aux(prog, args, seed)
    run, check = TRANSFORMS[transform]
    got, err = _run_or_error(run, jaxlite, prog, args, aux)
    expected_error = prog.errors.get(transform)
    if expected_error is not None:
        cls, phrase = expected_error
        assert isinstance(err, cls), f"expected {cls.__name__}, got {err!r}"
        assert phrase in str(err), str(err)
    elif err is not None:
        raise err
    else:
        check(prog, prog.make(jaxlite), args, aux, got)
    if real_jax is None or not _compare_with_jax(prog, transform):
        return
    want, jax_err = _run_or_error(run, real_jax, prog, args, aux)
    if transform in prog.jax_fails:
        assert jax_err is not None, "JAX handles this now: take it off jax_fails"
        return
    if expected_error is not None:
        cls, phrase = prog.jax_errors[transform]
        assert isinstance(jax_err, cls), jax_err
        assert phrase in str(jax_err)
        return
    assert jax_err is None, jax_err
    check_close(
        _f64(got),
        real_jax.tree_util.tree_map(lambda x: np.asarray(x, np.float64), want),
        rtol=2e-5,
        atol=2e-5,
    )


# ----------------------------------------------------------------------------------------
# Closures over traced values: functions staged inside a transformation (jit,
# checkpoint, custom rules) that close over that transformation's values.

XC = np.array([0.3, 0.5, 0.7], np.float32)
YC = np.array([1.1, 0.2, -0.4], np.float32)


def _closure_programs(jx):
    jnp = jx.numpy

    def ckpt(x, y):
        return jx.checkpoint(lambda a: jnp.sin(a * x))(y)

    def nested_jit(x, y):
        return jx.jit(lambda a: jnp.sin(a * x))(y)

    def cjvp(x, y):
        @jx.custom_jvp
        def g(a):
            return jnp.sin(a * x)

        @g.defjvp
        def g_jvp(p, t):
            return g(p[0]), jnp.cos(p[0] * x) * x * t[0]

        return g(y)

    return {"checkpoint": ckpt, "jit": nested_jit, "custom_jvp": cjvp}


CLOSURE_TRANSFORMS = {
    "jit": lambda jx, f: jx.jit(f)(XC, YC),
    "vmap": lambda jx, f: jx.vmap(f)(np.stack([XC, XC + 1]), np.stack([YC, 2 * YC])),
    "vmap(in_axes=(0,None))": lambda jx, f: jx.vmap(f, (0, None))(
        np.stack([XC, XC + 1]), YC
    ),
    "grad(closed)": lambda jx, f: jx.grad(lambda a, b: f(a, b).sum())(XC, YC),
    "jit(grad(arg))": lambda jx, f: jx.jit(jx.grad(lambda a, b: f(a, b).sum(), 1))(
        XC, YC
    ),
    "vmap(grad(closed))": lambda jx, f: jx.vmap(jx.grad(lambda a, b: f(a, b).sum()))(
        np.stack([XC, XC + 1]), np.stack([YC, 2 * YC])
    ),
}

# A custom_jvp rule closing over a value being differentiated: JAX raises
# UnexpectedTracerError, and so does jaxlite.
_CUSTOM_RULE_CLOSURE = ("custom_jvp", ("grad(closed)", "vmap(grad(closed))"))


@pytest.mark.parametrize("transform", list(CLOSURE_TRANSFORMS))
@pytest.mark.parametrize("program", ["checkpoint", "jit", "custom_jvp"])
def test_closures_over_traced_values(program, transform):
    f = _closure_programs(jaxlite)[program]
    run = CLOSURE_TRANSFORMS[transform]
    if program == _CUSTOM_RULE_CLOSURE[0] and transform in _CUSTOM_RULE_CLOSURE[1]:
        with pytest.raises(jaxlite.errors.UnexpectedTracerError):
            run(jaxlite, f)
        return
    got = run(jaxlite, f)
    # The reference: the same function with the closure made an explicit argument
    # (no staging), under the same transformation.
    plain = _closure_programs(jaxlite)["checkpoint"]
    want = run(jaxlite, lambda x, y: jaxlite.numpy.sin(y * x) + 0 * plain(x, y))
    check_close(got, want, rtol=1e-6, atol=1e-6)
    if real_jax is not None:
        theirs = run(real_jax, _closure_programs(real_jax)[program])
        check_close(_f64(got), np.asarray(theirs, np.float64), rtol=1e-5, atol=1e-6)


def test_leaked_tracer_of_an_inner_transformation_is_an_error():
    """A jaxpr trace never captures a tracer of a transformation running inside it
    (it would silently treat it as a constant): JAX's UnexpectedTracerError."""
    jnp = jaxlite.numpy

    def f(x):
        @jaxlite.custom_jvp
        def g(a):
            return a

        # The rule closes over `x`, a JVP tracer of the grad below the jit.
        g.defjvp(lambda p, t: (g(p[0]), t[0] * x))
        return g(x) * 2

    with pytest.raises(jaxlite.errors.UnexpectedTracerError, match="JVPTracer"):
        jaxlite.jit(jaxlite.grad(lambda x: jnp.sum(f(x))))(XC)


def _staged_closures(jx):
    jnp = jx.numpy

    def f(x, y):
        @jx.custom_jvp
        def g(a):
            return jnp.sin(a * x)

        @g.defjvp
        def gj(p, t):
            return g(p[0]), jnp.cos(p[0] * x) * x * t[0]

        @jx.custom_vjp
        def h(a):
            return jnp.sin(a * x)

        h.defvjp(lambda a: (h(a), a), lambda a, ct: (jnp.cos(a * x) * x * ct,))
        k = jx.checkpoint(lambda a: a * x)
        return g(y) + h(y) + k(y)

    return f


STAGED_CLOSURES = """\
{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = custom_jvp_call[
      name=g
      call_jaxpr={ lambda ; d:f32[] e:f32[]. let
          f:f32[] = mul e d
          g:f32[] = sin f
        in (g,) }
      jvp=gj
      num_consts=1
      symbolic_zeros=False
    ] a b
    h:f32[] = custom_vjp_call[
      name=h
      bwd=<lambda>
      call_jaxpr={ lambda ; i:f32[] j:f32[]. let
          k:f32[] = mul j i
          l:f32[] = sin k
        in (l,) }
      fwd=<lambda>
      num_consts=1
      symbolic_zeros=False
    ] a b
    m:f32[] = add c h
    n:f32[] = remat2[
      differentiated=False
      jaxpr={ lambda ; o:f32[] p:f32[]. let q:f32[] = mul p o in (q,) }
      policy=None
      prevent_cse=True
    ] a b
    r:f32[] = add m n
  in (r,) }"""


def test_staged_closures_print_like_jax():
    """Closed-over tracers become leading operands (`num_consts`), as JAX prints."""
    text = str(jaxlite.make_jaxpr(_staged_closures(jaxlite))(1.0, 2.0))
    assert text == STAGED_CLOSURES
    if real_jax is not None:
        theirs = real_jax.make_jaxpr(_staged_closures(real_jax))(1.0, 2.0)
        assert text == str(theirs)
        x = np.ones(2, np.float32)
        ours = jaxlite.make_jaxpr(jaxlite.vmap(_staged_closures(jaxlite)))(x, x)
        theirs = real_jax.make_jaxpr(real_jax.vmap(_staged_closures(real_jax)))(x, x)
        assert str(ours) == str(theirs)
