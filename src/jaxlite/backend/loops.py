"""Control flow on the NumPy backend: the loop compiler and the lowering of scan, while
and cond.

A loop equation runs as generated Python: a `for` or `while` around one call of the
body's compiled function per iteration, generated once per equation (`scan_runner`,
`while_runner`) like the rest of the NumPy backend. A Python loop pays per NumPy call,
so two rewrites take work out of a scan's loop: what does not depend on the carry runs
before it, vectorised over all iterations by the batching rules
(`_hoist_out_of_loop`), and carries that only accumulate products are summed after it
by one contraction (`_sink_accumulators`).

The backend sits below `lax/`, so it knows no primitive by name. What the loop compiler
must know about primitives, `lax/` registers in the tables below: which primitives call
the host (they never leave the loop), which add into an accumulator, and how to sum a
product over all iterations at once.
"""

from __future__ import annotations

import builtins
import collections
import functools

import numpy as np

from jaxlite.backend import numpy_backend, tiering
from jaxlite.backend.lowering import host_call_primitives, pinned_primitives
from jaxlite.core import ClosedJaxpr, Jaxpr, JaxprEqn, ShapedArray, Var, subjaxprs
from jaxlite.interpreters import ad, batching
from jaxlite.interpreters.batching import not_mapped
from jaxlite.interpreters.partial_eval import (
    dce_closed,
    make_closed,
    prune_outputs,
    select_invars,
    trace_to_jaxpr,
)
from jaxlite.util import safe_zip, split_list

zip, unsafe_zip = safe_zip, zip

# ----------------------------------------------------------------------------------------
# What the loop compiler knows about primitives, registered by `lax/`.

# Primitives that call into Python (callbacks, debug prints), a table of `lowering.py`:
# an equation that calls one, directly or in an inner jaxpr, stays in the loop, and so
# does what depends on it.

# Primitives `acc + x` that may accumulate into a carry (binary, associative and
# commutative sums); `add_any` is JAX's tangent accumulation.
accumulators: set = {ad.add_any_p}

# product_sums[prim](stacked, lhs, rhs, **params) -> the sum over the iterations of
# `prim(lhs_i, rhs_i, **params)`, where `stacked[k]` says whether operand k has the
# iteration axis in front (an operand without it is the same in every iteration). A
# carry that accumulates such a product leaves the loop.
product_sums: dict = {}


# Primitives whose batching rule is user code (`custom_vmap`): the loop compiler never
# vectorises them over the iterations (a rule may loop over the batch by calling the
# function again, as `sequential_vmap` does, which would be hoisted again, forever).
# An equation holding one, directly or in an inner jaxpr, stays in the loop.
user_batched_primitives: set = set()


def _user_batched(eqn):
    if eqn.primitive in user_batched_primitives:
        return True
    return any(
        any(
            _user_batched(e)
            for e in (j.jaxpr if isinstance(j, ClosedJaxpr) else j).eqns
        )
        for j in subjaxprs(eqn.params)
    )


def calls_host(jaxpr) -> bool:
    """Whether `jaxpr` (a Jaxpr or ClosedJaxpr, inner jaxprs included) calls the host."""
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    return any(_eqn_calls_host(eqn) for eqn in jaxpr.eqns)


def _eqn_calls_host(eqn):
    if eqn.primitive in host_call_primitives:
        return True
    return any(calls_host(j) for j in subjaxprs(eqn.params))


def _pinned(eqn):
    """Whether `eqn` is (or holds) an equation of `pinned_primitives`."""
    if eqn.primitive in pinned_primitives:
        return True
    return any(
        any(_pinned(e) for e in getattr(j, "jaxpr", j).eqns)
        for j in subjaxprs(eqn.params)
    )


# ----------------------------------------------------------------------------------------
# Values derived from jaxprs, cached by identity


class _IdentityCache:
    """Values derived from jaxprs, keyed by the jaxprs' identities (an entry holds the
    jaxprs, so their ids cannot be reused while it is cached); cleared when full.

    Tracing is cached per body function (`trace_body`), so an eager loop called again
    gets the same jaxprs; deriving the same equation from them again (and not a new,
    equal one) lets the compiled loop be reused too."""

    def __init__(self, size=512):
        self.entries = {}
        self.size = size

    def get(self, objs, tag, make):
        key = (tag, *(id(o) for o in objs))
        hit = self.entries.get(key)
        if hit is not None and all(a is b for a, b in unsafe_zip(hit[0], objs)):
            return hit[1]
        value = make()
        if len(self.entries) >= self.size:
            self.entries.clear()
        self.entries[key] = (tuple(objs), value)
        return value


_derived = _IdentityCache()


def derived(objs, tag, make):
    """`make()`, computed once for the jaxprs `objs` (see `_IdentityCache`)."""
    return _derived.get(objs, tag, make)


# ----------------------------------------------------------------------------------------
# Lowering rules of the control-flow primitives (registered by `lax/` with the rest of
# each primitive's rules): a call of the equation's runner or branch functions.


def scan_lowering(ctx, *args, jaxpr, length, num_carry, num_consts, reverse, unroll):
    eqn = ctx.eqn

    def tiered():
        runner = functools.partial(
            scan_runner, jaxpr, length, num_carry, num_consts, reverse
        )
        form = functools.partial(native_scan_form, eqn)
        work = tiering.work(jaxpr)
        return tiering.TieredLoop(eqn, runner, work, length=length, native_form=form)

    key = ("tiered scan", length, num_carry, num_consts, reverse)
    name = ctx.add_global(derived([jaxpr], key, tiered), "scan")
    return f"{name}({', '.join(args)})"


def while_lowering(ctx, *args, body_jaxpr, body_nconsts, cond_jaxpr, cond_nconsts):
    eqn = ctx.eqn

    def steps():
        cond, body = (
            numpy_backend.compile(cond_jaxpr).fun,
            numpy_backend.compile(body_jaxpr).fun,
        )
        return cond, body, (cond_nconsts, body_nconsts)

    def tiered():
        runner = functools.partial(
            while_runner, cond_jaxpr, cond_nconsts, body_jaxpr, body_nconsts
        )
        body_work = tiering.work(body_jaxpr) + tiering.work(cond_jaxpr)
        return tiering.TieredLoop(eqn, runner, body_work, step_runner=steps)

    key = ("tiered while", cond_nconsts, body_nconsts)
    name = ctx.add_global(derived([cond_jaxpr, body_jaxpr], key, tiered), "while")
    return f"{name}({', '.join(args)})"


def cond_lowering(ctx, index, *args, branches):
    fns = tuple(numpy_backend.compile(b).fun for b in branches)
    name = ctx.add_global(fns, "cond")
    return f"{name}[{index}]({', '.join(args)})"


def native_scan_form(eqn):
    """What the native backend compiles for scan equation `eqn`: the scan of its body
    without the work that does not depend on the carry, which runs first on NumPy,
    vectorised over all iterations (`_hoist_out_of_loop`: `U @ x_t` for every t is one
    BLAS product, where the native loop would do it one small product at a time).
    Returns `(closed, wrap)` for `tiering.TieredLoop`."""
    p = eqn.params
    jaxpr, num_consts, num_carry = p["jaxpr"], p["num_consts"], p["num_carry"]
    pre, body, stacked = _hoist_out_of_loop(jaxpr, num_consts, num_carry, p["length"])
    if pre is None:
        return tiering.single_equation_jaxpr(eqn), None
    n_inv = stacked.count(False)
    params = dict(p, jaxpr=body, num_consts=num_consts + n_inv)
    n_fixed = num_consts + n_inv + num_carry  # then the xs: stacked operands
    invars = [
        Var(a if k < n_fixed else _stacked_aval(p["length"], a))
        for k, a in enumerate(body.in_avals)
    ]
    outvars = [Var(v.aval) for v in eqn.outvars]
    scan = JaxprEqn(eqn.primitive, invars, params, outvars, eqn.effects)
    closed = ClosedJaxpr(Jaxpr([], invars, outvars, [scan]), [])

    def wrap(exe):
        def run(*args):
            consts, carry, xs = split_list(args, [num_consts, num_carry])
            hoisted = pre(*consts, *xs)
            inv = [h for h, st in zip(hoisted, stacked) if not st]
            st = [h for h, st in zip(hoisted, stacked) if st]
            return exe(*consts, *inv, *carry, *xs, *st)

        return run

    return closed, wrap


# ----------------------------------------------------------------------------------------
# The scan runner


def _exec_source(lines, namespace, name):
    source = "\n".join(lines) + "\n"
    exec(builtins.compile(source, f"<jaxlite:{name}>", "exec"), namespace)
    fun = namespace[name]
    fun.source = source
    return fun


def scan_runner(jaxpr, length, num_carry, num_consts, reverse):
    """A Python function running the whole scan on NumPy values: generated source with
    one call of the compiled body per iteration, the `y`s written into preallocated
    arrays."""
    return derived(
        [jaxpr],
        ("scan", length, num_carry, num_consts, reverse),
        lambda: _make_scan_runner(jaxpr, length, num_carry, num_consts, reverse),
    )


def _make_scan_runner(jaxpr, length, num_carry, num_consts, reverse):
    num_xs = len(jaxpr.in_avals) - num_consts - num_carry
    num_ys = len(jaxpr.out_avals) - num_carry
    ks = [f"k{i}" for i in range(num_consts)]
    cs = [f"c{i}" for i in range(num_carry)]
    xs = [f"x{i}" for i in range(num_xs)]
    posts, body = _sink_accumulators(jaxpr, num_consts, num_carry, length)
    kept = [c for i, c in enumerate(cs) if i not in posts]
    pre, body, hoisted = _hoist_out_of_loop(body, num_consts, len(kept), length)
    hs = [f"h{i}" for i in range(len(hoisted))]
    h_inv = [h for h, stacked in zip(hs, hoisted) if not stacked]
    h_st = [h for h, stacked in zip(hs, hoisted) if stacked]
    args = [*ks, *h_inv, *kept, *(f"{x}[i]" for x in xs), *(f"{h}[i]" for h in h_st)]
    # A `y` that is an iteration's slice of an array (an `x` or a hoisted value) is
    # that array: it needs no copying in the loop.
    arg_of = dict(unsafe_zip(body.jaxpr.invars, args))
    y_vars = body.jaxpr.outvars[len(kept) : len(kept) + num_ys]
    direct = {}
    for n, v in enumerate(y_vars):
        arg = arg_of.get(v) if type(v) is Var else None
        if arg is not None and arg.endswith("[i]"):
            direct[n] = arg[:-3]
    n_extra = len(body.out_avals) - len(kept) - num_ys
    keep = [True] * len(kept) + [n not in direct for n in range(num_ys)]
    body = prune_outputs(body, keep + [True] * n_extra)
    first_carry = len(ks) + len(h_inv)
    body, used = dce_closed(body, [True] * len(body.out_avals))
    used = [u or first_carry <= i < first_carry + len(kept) for i, u in enumerate(used)]
    body = select_invars(body, used)
    args = [a for a, u in zip(args, used) if u]
    stacked_avals = body.out_avals[len(kept) :]
    ys = [f"y{i}" for i in range(num_ys) if i not in direct]
    es = [f"e{i}" for i in range(n_extra)]
    namespace = {"_body": numpy_backend.compile(body).fun, "_empty": np.empty}
    lines = [f"def scan_loop({', '.join(ks + cs + xs)}):"]
    if pre is not None:
        namespace["_pre"] = pre
        lines.append(f"    {_targets(hs)} = _pre({', '.join(ks + xs)})")
    for j, (name, a) in enumerate(zip(ys + es, stacked_avals)):
        namespace[f"_dt{j}"] = a.dtype
        lines.append(f"    {name}s = _empty({(length, *a.shape)!r}, _dt{j})")
    steps = f"range({length - 1}, -1, -1)" if reverse else f"range({length})"
    call = f"_body({', '.join(args)})"
    targets = kept + ys + es
    if targets or body.jaxpr.eqns:
        lines.append(f"    for i in {steps}:")
        lines.append(
            f"        {_targets(targets)} = {call}" if targets else f"        {call}"
        )
    lines += [f"        {name}s[i] = {name}" for name in ys + es]
    for i, (fn, sources) in posts.items():
        namespace[f"_post{i}"] = fn
        operands = [f"{kind}{j}" if kind != "e" else f"e{j}s" for kind, j in sources]
        lines.append(f"    c{i}, = _post{i}(c{i}, {', '.join(operands)})")
    y_arrays = [direct.get(i, f"y{i}s") for i in range(num_ys)]
    lines.append(f"    return [{', '.join(cs + y_arrays)}]")
    return _exec_source(lines, namespace, "scan_loop")


def _targets(names):
    return ", ".join(names) + ("," if len(names) == 1 else "")


# Two rewrites of a scan body for the NumPy backend. A Python loop pays per NumPy call,
# so work that need not be in the loop leaves it: before it, vectorised over all
# iterations; after it, for sums of products accumulated in a carry.

_HOIST_LIMIT_BYTES = 1 << 28


def _hoist_out_of_loop(jaxpr, num_consts, num_carry, length):
    """Move the body's work that does not depend on the carry out of the loop.

    It runs before the loop for every iteration at once, vectorised over the
    iteration axis by the batching rules (`U @ x_t` for all t is one matrix product);
    what depends on the constants only is computed once. Effectful equations, host
    callbacks, pinned primitives (`lowering.pinned_primitives`) and equations batched
    by user rules stay in the loop, and so does everything downstream of them. Returns
    `(pre, body, stacked)`: `pre(*consts, *xs)` gives the hoisted values, `stacked`
    says which have the iteration axis; the new body takes `(consts, invariant values,
    carry, xs, stacked values)`. `pre` is None when nothing moves.
    """
    j = jaxpr.jaxpr
    consts, carry, xs = split_list(j.invars, [num_consts, num_carry])
    if length < 2:
        return None, jaxpr, []
    variant, hoisted, kept = set(carry), [], []
    for eqn in j.eqns:
        if (
            eqn.effects
            or _eqn_calls_host(eqn)
            or (pinned_primitives and _pinned(eqn))
            or (user_batched_primitives and _user_batched(eqn))
            or any(type(v) is Var and v in variant for v in eqn.invars)
        ):
            variant.update(eqn.outvars)
            kept.append(eqn)
        else:
            hoisted.append(eqn)
    needed = {v for e in kept for v in e.invars if type(v) is Var}
    needed.update(v for v in j.outvars if type(v) is Var)
    boundary = list(dict.fromkeys(v for e in hoisted for v in e.outvars if v in needed))
    if not boundary:
        return None, jaxpr, []
    pre = make_closed([*consts, *xs], boundary, hoisted)
    try:
        batched, dims = batching.batch_jaxpr(
            pre, length, [not_mapped] * len(consts) + [0] * len(xs)
        )
    except (NotImplementedError, TypeError, ValueError):
        return None, jaxpr, []
    stacked = [d is not not_mapped for d in dims]
    size = sum(
        length * v.aval.size * v.aval.dtype.itemsize
        for v, st in zip(boundary, stacked)
        if st
    )
    if size > _HOIST_LIMIT_BYTES:
        return None, jaxpr, []
    inv = [v for v, st in zip(boundary, stacked) if not st]
    st = [v for v, st in zip(boundary, stacked) if st]
    body = make_closed([*consts, *inv, *carry, *xs, *st], j.outvars, kept)
    return numpy_backend.compile(batched).fun, body, stacked


def _sink_accumulators(jaxpr, num_consts, num_carry, length):
    """Carries that only accumulate products (`acc = acc + dot_general(a, b)`, as the
    transpose of a scan accumulates the cotangents of its constants) leave the loop.

    The loop stacks the operands instead, and after it one product that also sums over
    the iteration axis (`product_sums`) adds up all the products (a sum of outer
    products is one matrix product). Returns `(posts, body)`: for each such carry
    `(post(init, lhs, rhs), sources)` where `sources` name the operands (`k`onstant,
    `x`, or `e`xtra stacked output of the new body), and the body without those carries.
    """
    j = jaxpr.jaxpr
    consts, carry, xs = split_list(j.invars, [num_consts, num_carry])
    uses = collections.Counter(v for e in j.eqns for v in e.invars if type(v) is Var)
    uses.update(v for v in j.outvars if type(v) is Var)
    producer = {v: e for e in j.eqns for v in e.outvars}
    where = {v: ("k", i) for i, v in enumerate(consts)}
    where.update({v: ("x", i) for i, v in enumerate(xs)})
    sunk, dropped, extras = {}, set(), []
    for i, (c, out) in enumerate(zip(carry, j.outvars[:num_carry])):
        add = producer.get(out) if type(out) is Var else None
        if (
            add is None
            or add.primitive not in accumulators
            or uses[c] != 1
            or uses[out] != 1
            or c not in add.invars
        ):
            continue
        v = add.invars[1] if add.invars[0] is c else add.invars[0]
        prod = producer.get(v) if type(v) is Var else None
        if (
            prod is None
            or prod.primitive not in product_sums
            or uses[v] != 1
            or v.aval.shape != c.aval.shape
            or prod in dropped
            or any(type(op) is not Var for op in prod.invars)
        ):
            continue
        kinds = [where.get(op, ("e", None))[0] for op in prod.invars]
        if kinds == ["k", "k"]:
            continue
        sources = []
        for op in prod.invars:
            if op in where:
                sources.append(where[op])
            else:
                if op not in extras:
                    extras.append(op)
                sources.append(("e", extras.index(op)))
        sunk[i] = (prod, add, sources)
        dropped.update((prod, add))
    if not sunk:
        return {}, jaxpr
    keep = [i not in sunk for i in range(num_carry)]
    body = make_closed(
        [*consts, *(c for c, k in zip(carry, keep) if k), *xs],
        [
            *(o for o, k in zip(j.outvars[:num_carry], keep) if k),
            *j.outvars[num_carry:],
            *extras,
        ],
        [e for e in j.eqns if e not in dropped],
    )
    posts = {
        i: (_sum_of_products(carry[i], prod, add, sources, length), sources)
        for i, (prod, add, sources) in sunk.items()
    }
    return posts, body


def _sum_of_products(acc, prod, add, sources, length):
    """The compiled `post(init, lhs, rhs)`: `init + sum over iterations of prod`."""
    stacked = [kind != "k" for kind, _ in sources]
    avals = [acc.aval] + [
        _stacked_aval(length, op.aval) if st else op.aval
        for op, st in zip(prod.invars, stacked)
    ]
    sum_rule = product_sums[prod.primitive]

    def post(init, lhs, rhs):
        total = sum_rule(stacked, lhs, rhs, **prod.params)
        args = [init, total] if add.invars[0] is acc else [total, init]
        return [add.primitive.bind(*args, **add.params)]

    return numpy_backend.compile(trace_to_jaxpr(post, avals)).fun


def _stacked_aval(length, aval):
    return ShapedArray((length, *aval.shape), aval.dtype, aval.weak_type)


# ----------------------------------------------------------------------------------------
# The while runner


def while_runner(cond_jaxpr, cond_nconsts, body_jaxpr, body_nconsts):
    """A Python function running the whole while loop on NumPy values: a generated
    `while` around the compiled predicate and body."""
    return derived(
        [cond_jaxpr, body_jaxpr],
        ("while", cond_nconsts, body_nconsts),
        lambda: _make_while_runner(cond_jaxpr, cond_nconsts, body_jaxpr, body_nconsts),
    )


def _make_while_runner(cond_jaxpr, cond_nconsts, body_jaxpr, body_nconsts):
    namespace = {
        "_cond": numpy_backend.compile(cond_jaxpr).fun,
        "_body": numpy_backend.compile(body_jaxpr).fun,
    }
    n_carry = len(body_jaxpr.in_avals) - body_nconsts
    ccs = [f"p{i}" for i in range(cond_nconsts)]
    bcs = [f"k{i}" for i in range(body_nconsts)]
    cs = [f"c{i}" for i in range(n_carry)]
    lines = [
        f"def while_loop({', '.join(ccs + bcs + cs)}):",
        f"    while _cond({', '.join(ccs + cs)})[0]:",
    ]
    call = f"_body({', '.join(bcs + cs)})"
    if cs:
        lines.append(f"        {', '.join(cs)}{',' if len(cs) == 1 else ''} = {call}")
    else:
        lines.append(f"        {call}")
    lines.append(f"    return [{', '.join(cs)}]")
    return _exec_source(lines, namespace, "while_loop")
