"""Discharging state: a jaxpr over references as a pure jaxpr over their values.

`discharge_state(closed, should_discharge)` rewrites a jaxpr some of whose inputs are
references into one that takes the values those references hold instead, and returns
the values they hold at the end after its own outputs. Each equation that reads or
writes such a reference runs by its primitive's discharge rule
(`types.discharge_rules`): `get` becomes indexing, `swap` and `addupdate` become
scatters into the current value, and a loop, conditional or `jit` over the reference
becomes the same primitive over its value, by the rules below.

Where it is used. Compiled code runs loops over references as they are: the body
writes in place. Forward-mode differentiation and batching cannot keep a reference
inside a loop body (a tangent or a batch axis would have to live in it), so
`JVPTrace` and `BatchTrace` run an equation of `scan`, `while` or `cond` with
reference operands through `discharge_hooks`: read the references' values, run the
pure loop (each written reference a carry, a reference only read a constant), write
the final values back. The reads and writes are bound under the transformation, so
the references' tangents or batch axes follow, and JAX's errors about writing
differentiated or batched values into a reference without them apply.

The rules of `scan`, `while`, `cond`, `jit` and `checkpoint` live here rather than with those
primitives: this table belongs to the state machinery, which sits above them.
"""

from __future__ import annotations

from jaxlite.ad_checkpoint import remat_p
from jaxlite.core import Var, eval_jaxpr, get_aval
from jaxlite.dispatch import jit_p
from jaxlite.interpreters.partial_eval import (
    forwarding,
    hoist_consts,
    merge_branch_consts,
    trace_to_jaxpr,
)
from jaxlite.lax.conditionals import cond_p
from jaxlite.lax.loops import scan_p, while_p
from jaxlite.state.primitives import get, set
from jaxlite.state.types import AbstractRef, discharge_hooks, discharge_rules, is_ref
from jaxlite.util import safe_zip, split_list

zip = safe_zip

__all__ = ["discharge_state"]


def discharge_state(closed, should_discharge):
    """`closed` (a ClosedJaxpr) with the reference inputs flagged in
    `should_discharge` given as the values they hold: the result takes those values
    in their place and returns, after the original outputs, the value each holds at
    the end (in input order)."""
    jaxpr = closed.jaxpr
    flags = list(should_discharge)
    in_avals = [a.inner_aval if f else a for a, f in zip(jaxpr.in_avals, flags)]

    def fun(*args):
        env = dict(zip(jaxpr.constvars, closed.consts))
        values = {}  # discharged reference var -> the value it holds now
        for v, a, f in zip(jaxpr.invars, args, flags):
            if f:
                values[v] = a
            else:
                env[v] = a

        def read(x):
            return x.val if type(x) is not Var else env[x]

        for eqn in jaxpr.eqns:
            touched = [type(x) is Var and x in values for x in eqn.invars]
            if not any(touched):
                outs = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
                if not eqn.primitive.multiple_results:
                    outs = [outs]
            else:
                rule = discharge_rules.get(eqn.primitive)
                if rule is None:
                    raise NotImplementedError(
                        f"'{eqn.primitive}' cannot take a mutable array reference "
                        "here: a transformation (grad, jvp or vmap) runs this loop or "
                        "branch on the reference's value, and jaxlite does not know "
                        f"'{eqn.primitive}' on values. Read the reference "
                        "(`ref[...]`) outside it and pass the value instead."
                    )
                first = {}
                same = [
                    first.setdefault(x, i) if t else i
                    for i, (x, t) in enumerate(zip(eqn.invars, touched))
                ]
                vals = [
                    values[x] if t else read(x) for x, t in zip(eqn.invars, touched)
                ]
                avals = [x.aval for x in eqn.invars]
                new_vals, outs = rule(avals, same, *vals, **eqn.params)
                for x, t, new in zip(eqn.invars, touched, new_vals):
                    if t and new is not None:
                        values[x] = new
            for v, o in zip(eqn.outvars, outs):
                env[v] = o
        finals = [values[v] for v, f in zip(jaxpr.invars, flags) if f]
        return [read(v) for v in jaxpr.outvars] + finals

    return trace_to_jaxpr(fun, in_avals)


def _trace(fun, avals):
    """`(jaxpr, consts)` of `fun` on `avals`: the constants hoisted as leading inputs,
    as the bodies of control flow hold them."""
    return hoist_consts(trace_to_jaxpr(fun, avals))


def _check_no_aliases(prim, same, refs):
    for i, (j, r) in enumerate(zip(same, refs)):
        if r and j != i:
            raise NotImplementedError(
                f"{prim}: the same mutable array reference is passed twice to a loop "
                "or branch that a transformation runs on values. Pass it once."
            )


def _written(closed, n_outs, ref_positions):
    """For each discharged reference (input `ref_positions[k]`), whether the
    discharged `closed` may change it: its final value (output `n_outs + k`) is not
    its input returned as it is."""
    fwd = forwarding(closed)
    return [fwd[n_outs + k] != p for k, p in enumerate(ref_positions)]


# ----------------------------------------------------------------------------------------
# scan: a written reference becomes a carry, one only read a constant.


def _scan_discharge(
    in_avals, same, *args, jaxpr, length, num_carry, num_consts, reverse, unroll
):
    refs = [type(a) is AbstractRef for a in in_avals]
    if any(refs[num_consts:]):
        raise NotImplementedError(
            "scan over mutable array references as carries or scanned inputs under "
            "a transformation is not supported: close over the reference instead."
        )
    _check_no_aliases("scan", same, refs)
    consts, carry, xs = split_list(list(args), [num_consts, num_carry])
    num_ys = len(jaxpr.out_avals) - num_carry
    ref_pos = [i for i in range(num_consts) if refs[i]]
    body = discharge_state(jaxpr, refs)
    written = _written(body, num_carry + num_ys, ref_pos)
    state = [p for p, w in zip(ref_pos, written) if w]
    fixed = [i for i in range(num_consts) if i not in state]

    def new_body(*vals):
        k_vals, s_vals, c_vals, x_vals = split_list(
            list(vals), [len(fixed), len(state), num_carry]
        )
        full = [None] * num_consts
        for i, v in zip(fixed, k_vals):
            full[i] = v
        for i, v in zip(state, s_vals):
            full[i] = v
        outs = eval_jaxpr(body.jaxpr, body.consts, *full, *c_vals, *x_vals)
        outs, finals = split_list(outs, [num_carry + num_ys])
        finals = [f for f, w in zip(finals, written) if w]
        return [*finals, *outs]

    avals = [body.in_avals[i] for i in fixed] + [body.in_avals[i] for i in state]
    avals += body.in_avals[num_consts:]
    new, extra = _trace(new_body, avals)
    outs = scan_p.bind(
        *extra,
        *(consts[i] for i in fixed),
        *(consts[i] for i in state),
        *carry,
        *xs,
        jaxpr=new,
        length=length,
        num_carry=len(state) + num_carry,
        num_consts=len(extra) + len(fixed),
        reverse=reverse,
        unroll=unroll,
    )
    finals, outs = split_list(outs, [len(state)])
    new_vals = [None] * len(in_avals)
    for i, v in zip(state, finals):
        new_vals[i] = v
    return new_vals, outs


# ----------------------------------------------------------------------------------------
# while: a reference the body writes becomes a carry (the predicate reads the carry
# when it reads the same reference); one only read is a constant.


def _while_discharge(
    in_avals, same, *args, cond_jaxpr, cond_nconsts, body_jaxpr, body_nconsts
):
    refs = [type(a) is AbstractRef for a in in_avals]
    n_carry = len(in_avals) - cond_nconsts - body_nconsts
    if any(refs[cond_nconsts + body_nconsts :]):
        raise NotImplementedError(
            "while_loop over mutable array references as carries under a "
            "transformation is not supported: close over the reference instead."
        )
    cconsts, bconsts, carry = split_list(list(args), [cond_nconsts, body_nconsts])
    c_refs, b_refs = (
        refs[:cond_nconsts],
        refs[cond_nconsts : cond_nconsts + body_nconsts],
    )
    roots = same[cond_nconsts : cond_nconsts + body_nconsts]  # first operand alike
    firsts = {}
    b_same = [firsts.setdefault(r, i) for i, r in enumerate(roots)]
    _check_no_aliases("while_loop", b_same, b_refs)
    b_pos = [i for i in range(body_nconsts) if b_refs[i]]
    body = discharge_state(body_jaxpr, b_refs + [False] * n_carry)
    written = _written(body, n_carry, b_pos)
    state = [p for p, w in zip(b_pos, written) if w]  # body consts that become carries
    b_fixed = [i for i in range(body_nconsts) if i not in state]
    # The predicate's references: the same as a written body reference (the carry),
    # else a constant it only reads.
    by_root = {roots[p]: k for k, p in enumerate(state)}
    c_state = {}
    for i in range(cond_nconsts):
        k = by_root.get(same[i]) if c_refs[i] else None
        if k is not None:
            c_state[i] = k
    pred = discharge_state(cond_jaxpr, c_refs + [False] * n_carry)
    c_pos = [i for i in range(cond_nconsts) if c_refs[i]]
    if any(_written(pred, 1, c_pos)):
        raise NotImplementedError(
            "while_loop: the predicate writes a mutable array reference; only the "
            "body may write one."
        )
    c_fixed = [i for i in range(cond_nconsts) if i not in c_state]
    state_avals = [body.in_avals[p] for p in state]
    carry_avals = body.in_avals[body_nconsts:]

    def new_cond(*vals):
        k_vals, s_vals, c_vals = split_list(list(vals), [len(c_fixed), len(state)])
        full = [None] * cond_nconsts
        for i, v in zip(c_fixed, k_vals):
            full[i] = v
        for i, k in c_state.items():
            full[i] = s_vals[k]
        return eval_jaxpr(pred.jaxpr, pred.consts, *full, *c_vals)[:1]

    def new_body(*vals):
        k_vals, s_vals, c_vals = split_list(list(vals), [len(b_fixed), len(state)])
        full = [None] * body_nconsts
        for i, v in zip(b_fixed, k_vals):
            full[i] = v
        for i, v in zip(state, s_vals):
            full[i] = v
        outs = eval_jaxpr(body.jaxpr, body.consts, *full, *c_vals)
        outs, finals = split_list(outs, [n_carry])
        return [*(f for f, w in zip(finals, written) if w), *outs]

    c_avals = [pred.in_avals[i] for i in c_fixed] + state_avals + carry_avals
    new_c, c_extra = _trace(new_cond, c_avals)
    b_avals = [body.in_avals[i] for i in b_fixed] + state_avals + carry_avals
    new_b, b_extra = _trace(new_body, b_avals)
    c_args = [*c_extra, *(cconsts[i] for i in c_fixed)]
    b_args = [*b_extra, *(bconsts[i] for i in b_fixed)]
    outs = while_p.bind(
        *c_args,
        *b_args,
        *(bconsts[i] for i in state),
        *carry,
        cond_jaxpr=new_c,
        cond_nconsts=len(c_args),
        body_jaxpr=new_b,
        body_nconsts=len(b_args),
    )
    finals, outs = split_list(outs, [len(state)])
    new_vals = [None] * len(in_avals)
    for p, v in zip(state, finals):
        new_vals[cond_nconsts + p] = v
    return new_vals, outs


# ----------------------------------------------------------------------------------------
# cond: every branch takes the references' values and returns their final values
# (those no branch writes are left out).


def _cond_discharge(in_avals, same, index, *args, branches):
    refs = [type(a) is AbstractRef for a in in_avals[1:]]
    _check_no_aliases("cond", [j - 1 for j in same[1:]], refs)
    n_out = len(branches[0].out_avals)
    ref_pos = [i for i, r in enumerate(refs) if r]
    discharged = [discharge_state(b, refs) for b in branches]
    written = [any(w) for w in zip(*(_written(b, n_out, ref_pos) for b in discharged))]
    keep = [True] * n_out + written
    jaxprs, consts = [], []
    for b in discharged:

        def fun(*vals, b=b):
            outs = eval_jaxpr(b.jaxpr, b.consts, *vals)
            return [o for o, k in zip(outs, keep) if k]

        j, c = _trace(fun, b.in_avals)
        jaxprs.append(j)
        consts.append(c)
    jaxprs, merged = merge_branch_consts(jaxprs, consts)
    outs = cond_p.bind(index, *merged, *args, branches=tuple(jaxprs))
    outs, finals = split_list(outs, [n_out])
    new_vals = [None] * len(in_avals)
    for p, v in zip([p for p, w in zip(ref_pos, written) if w], finals):
        new_vals[1 + p] = v
    return new_vals, outs


# ----------------------------------------------------------------------------------------
# jit and checkpoint: the called jaxpr takes the values and returns the final ones.


def _call_discharge(prim):
    def rule(in_avals, same, *args, jaxpr, **params):
        refs = [type(a) is AbstractRef for a in in_avals]
        _check_no_aliases(prim, same, refs)
        called = discharge_state(jaxpr, refs)
        n_out = len(jaxpr.out_avals)
        outs = prim.bind(*args, jaxpr=called, **params)
        outs, finals = split_list(outs, [n_out])
        new_vals = [None] * len(in_avals)
        for p, v in zip([i for i, r in enumerate(refs) if r], finals):
            new_vals[p] = v
        return new_vals, outs

    return rule


discharge_rules[scan_p] = _scan_discharge
discharge_rules[while_p] = _while_discharge
discharge_rules[cond_p] = _cond_discharge
discharge_rules[jit_p] = _call_discharge(jit_p)
discharge_rules[remat_p] = _call_discharge(remat_p)

# ----------------------------------------------------------------------------------------
# The hook of JVPTrace and BatchTrace


def _run_discharged(prim):
    """`discharge_hooks[prim]`: read the references among the operands, run the
    pure equation, write back the values it changed, all under the current trace."""

    def hook(args, params):
        refs = [is_ref(x) for x in args]
        first = {}
        same = [
            first.setdefault(id(x), i) if r else i
            for i, (x, r) in enumerate(zip(args, refs))
        ]
        avals = [get_aval(x) for x in args]
        vals = [
            get(x) if r and same[i] == i else x
            for i, (x, r) in enumerate(zip(args, refs))
        ]
        vals = [vals[j] for j in same]  # a reference passed twice is read once
        new_vals, outs = discharge_rules[prim](avals, same, *vals, **params)
        for x, new in zip(args, new_vals):
            if new is not None:
                set(x, (), new)
        return outs

    return hook


for _prim in (scan_p, while_p, cond_p, remat_p):
    discharge_hooks[_prim] = _run_discharged(_prim)
del _prim
