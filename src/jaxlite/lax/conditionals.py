"""`cond` and `switch`: run one of several branches, chosen by a traced index.

Each branch is traced to a jaxpr over the same operands; the `cond` primitive holds the
tuple of branch jaxprs and an int32 index picks one (for `lax.cond`, branch 0 is
`false_fun`). The rules work branch by branch: the JVP differentiates every branch with
the same pattern of nonzero tangents, partial evaluation splits every branch and pads
the residuals so that all branches return the same types, transposition transposes
every branch. Under `vmap` with a batched index every branch runs and `select_n` picks
the results, unless the branches have effects: a callback must only run for the
elements that take its branch (`_batched_cond_with_effects`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from jaxlite import dtypes, tree_util
from jaxlite.backend import lowering_rules
from jaxlite.backend.loops import calls_host, cond_lowering, derived
from jaxlite.backend.native import native_rules
from jaxlite.config import config
from jaxlite.core import (
    Jaxpr,
    JaxprEqn,
    Primitive,
    ShapedArray,
    Var,
    abstract_eval_rules,
    dce_rules,
    eval_jaxpr,
    get_aval,
    impl_rules,
    jaxpr_as_fun,
    join_effects,
    physical_rules,
    set_current_trace,
)
from jaxlite.interpreters import ad, batching, physical
from jaxlite.interpreters import partial_eval as pe
from jaxlite.interpreters.batching import not_mapped
from jaxlite.interpreters.partial_eval import trace_to_jaxpr
from jaxlite.lax import control_flow as cf
from jaxlite.lax.elementwise import (
    clamp,
    convert_element_type,
    eq,
    select_n,
    stop_gradient,
)
from jaxlite.lax.structural import broadcast_in_dim
from jaxlite.util import merge_lists, safe_zip

zip, unsafe_zip = safe_zip, zip

_no_operand = object()

# ----------------------------------------------------------------------------------------
# The public functions


def cond(pred, true_fun, false_fun, *operands, operand=_no_operand):
    """`true_fun(*operands)` if `pred` else `false_fun(*operands)`, with `pred` traced.

    Both branches are traced; they must return the same pytree of the same types.
    """
    if not (callable(true_fun) and callable(false_fun)):
        if callable(false_fun) and len(operands) == 2 and callable(operands[1]):
            # The old five-argument form: cond(pred, x_true, f_true, x_false, f_false).
            x_true, f_true, x_false, f_false = true_fun, false_fun, *operands
            return cond(
                pred, lambda x, _: f_true(x), lambda _, x: f_false(x), x_true, x_false
            )
        raise TypeError(
            "lax.cond: true_fun and false_fun arguments should be callable."
        )
    operands = _single_operand(operand, operands)
    if pred is None:
        raise TypeError("cond predicate is None")
    if isinstance(pred, Sequence) or np.ndim(pred) != 0:
        what = (
            f"type {type(pred)}"
            if isinstance(pred, Sequence)
            else f"shape {np.shape(pred)}."
        )
        raise TypeError(f"Pred must be a scalar, got {pred} of {what}")
    try:
        pred_dtype = dtypes.dtype(pred)
    except (TypeError, ValueError) as err:
        raise TypeError(
            f"Pred type must be either boolean or number, got {pred}."
        ) from err
    if pred_dtype.kind != "b":
        if pred_dtype.kind not in "iuf":
            raise TypeError(
                f"Pred type must be either boolean or number, got {pred_dtype}."
            )
        pred = cf.as_value(pred) != 0
    if config.disable_jit and cf.is_concrete(pred):
        return true_fun(*operands) if pred else false_fun(*operands)

    leaves, in_tree = cf.flatten_operands(operands)
    avals = [get_aval(x) for x in leaves]
    true_jaxpr, true_consts, out_tree, out_avals = cf.trace_body(
        true_fun, "cond", in_tree, avals
    )
    false_jaxpr, false_consts, false_tree, false_avals = cf.trace_body(
        false_fun, "cond", in_tree, avals
    )
    cf.check_branch_outputs(
        "cond",
        "true_fun",
        "false_fun",
        true_fun,
        false_fun,
        out_tree,
        out_avals,
        false_tree,
        false_avals,
    )
    (true_jaxpr, false_jaxpr), consts = pe.merge_branch_consts(
        [true_jaxpr, false_jaxpr], [true_consts, false_consts]
    )
    index = convert_element_type(pred, np.int32)
    outs = _bind_forwarding(index, [false_jaxpr, true_jaxpr], [*consts, *leaves])
    return tree_util.tree_unflatten(out_tree, outs)


def switch(index, branches, *operands, operand=_no_operand):
    """`branches[clamp(0, index, len(branches) - 1)](*operands)`, with `index` traced."""
    if not all(callable(b) for b in branches):
        raise TypeError(
            "lax.switch: branches argument should be a sequence of callables."
        )
    operands = _single_operand(operand, operands)
    if np.ndim(index) != 0:
        raise TypeError(
            f"Branch index must be scalar, got {index} of shape {np.shape(index)}."
        )
    try:
        index_dtype = dtypes.dtype(index)
    except (TypeError, ValueError) as err:
        raise TypeError(f"Index type must be an integer, got {index}.") from err
    if index_dtype.kind not in "iu":
        raise TypeError(f"Index type must be an integer, got {index} as {index_dtype}")
    branches = tuple(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    if len(branches) == 1:
        return branches[0](*operands)
    index = convert_element_type(index, np.int32)
    index = clamp(np.int32(0), index, np.int32(len(branches) - 1))
    if config.disable_jit and cf.is_concrete(index):
        return branches[int(index)](*operands)
    return switch_traced(index, branches, operands)


def switch_traced(index, branches, operands):
    """Trace every branch and bind `cond` on `index` (an int32 scalar in range, as
    checked and clamped by `switch`; `lax.platform_dependent` passes its platform
    index)."""
    leaves, in_tree = cf.flatten_operands(operands)
    avals = [get_aval(x) for x in leaves]
    traced = [cf.trace_body(b, "switch", in_tree, avals) for b in branches]
    _, _, tree0, avals0 = traced[0]
    for i, (_, _, tree, out_avals) in enumerate(traced[1:]):
        cf.check_branch_outputs(
            "switch",
            "branch 0",
            f"branch{i + 1}",
            branches[0],
            branches[i + 1],
            tree0,
            avals0,
            tree,
            out_avals,
        )
    jaxprs, consts = pe.merge_branch_consts(
        [t[0] for t in traced], [t[1] for t in traced]
    )
    outs = _bind_forwarding(index, jaxprs, [*consts, *leaves])
    return tree_util.tree_unflatten(tree0, outs)


def _single_operand(operand, operands):
    if operand is _no_operand:
        return operands
    if operands:
        raise TypeError(
            "if 'operand' keyword is passed then no positional operands can be passed, "
            f"got operand={operand!r} and positional operands {operands}"
        )
    return (operand,)


def _bind_forwarding(index, jaxprs, args):
    """Bind `cond`; outputs that every branch returns straight from the same input are
    not passed through the equation (JAX does the same, so jaxprs print alike)."""
    branches, in_fwd = derived(jaxprs, "cond forwarding", lambda: _forward(jaxprs))
    outs = iter(cond_p.bind(index, *args, branches=branches))
    return [next(outs) if f is None else cf.as_value(args[f]) for f in in_fwd]


def _forward(jaxprs):
    fwds = [pe.forwarding(j) for j in jaxprs]
    in_fwd = [f[0] if len(set(f)) == 1 else None for f in unsafe_zip(*fwds)]
    keep = [f is None for f in in_fwd]
    return tuple(pe.prune_outputs(j, keep) for j in jaxprs), in_fwd


# ----------------------------------------------------------------------------------------
# The cond primitive: `cond(index, *operands, branches=(jaxpr, ...))`


def _cond_impl(index, *args, branches):
    """Eagerly, one branch runs once: interpret it op by op unless it is compiled
    already (compiling costs more than running a small branch once)."""
    branch = branches[int(index)]
    if branch._compiled is not None:
        return branch._compiled(*args)
    outs = eval_jaxpr(branch.jaxpr, branch.consts, *args)
    return [getattr(o, "_value", o) for o in outs]


def _cond_abstract(index, *avals, branches):
    if index.shape != () or index.dtype != np.int32:
        raise TypeError(
            f"cond: the branch index must be an int32 scalar, got {index.str_short()}"
        )
    # The branches agree up to weak types; as in JAX, the outputs are typed as the
    # first branch's (`switch`'s first function, `cond`'s false_fun): equinox's
    # `error_if` keeps a value's weak type by returning it from that branch.
    outs = [ShapedArray(a.shape, a.dtype, a.weak_type) for a in branches[0].out_avals]
    return outs, join_effects(*(b.effects for b in branches))


def _cond_jvp(primals, tangents, *, branches):
    index, ops = primals[0], primals[1:]
    nonzeros = [cf.tangent_nonzero(p, t) for p, t in zip(ops, tangents[1:])]
    out_avals = branches[0].out_avals
    first = [ad.jvp_jaxpr(b, nonzeros, [False] * len(out_avals)) for b in branches]
    out_nz = [any(nz) for nz in unsafe_zip(*(f[2] for f in first))] if out_avals else []
    jvps = [
        f if f[2] == out_nz else ad.jvp_jaxpr(b, nonzeros, out_nz)
        for b, f in zip(branches, first)
    ]
    jvps, consts = pe.merge_branch_consts([j[0] for j in jvps], [j[1] for j in jvps])
    ts = [t for t, nz in zip(tangents[1:], nonzeros) if nz]
    outs = cond_p.bind(index, *consts, *ops, *ts, branches=tuple(jvps))
    n = len(out_avals)
    out_ts = iter(outs[n:])
    return outs[:n], [
        next(out_ts) if nz else ad.Zero(ad.tangent_aval(a))
        for nz, a in zip(out_nz, out_avals)
    ]


def _cond_partial_eval(trace, args, params):
    """Split a cond whose operands are partly unknown (tangents under linearize): a
    known cond computes the known outputs and residuals now, an unknown cond taking the
    residuals is recorded. Residuals of all branches share slots by type; a branch
    fills the slots it does not use with zeros."""
    branches = params["branches"]
    index, ops = args[0], list(args[1:])
    if trace.is_unknown(index):
        return trace.tangent_trace.process_primitive(cond_p, args, params)
    unknowns = [trace.is_unknown(x) for x in ops]
    n_out = len(branches[0].out_avals)
    out_uk = [False] * n_out
    for b in branches:
        b_uk = ad.partial_eval_jaxpr(b, unknowns, instantiate=False)[2]
        out_uk = [x or y for x, y in zip(out_uk, b_uk)]
    splits = [ad.partial_eval_jaxpr(b, unknowns, instantiate=out_uk) for b in branches]
    n_known = n_out - sum(out_uk)
    res_avals = [k.out_avals[n_known:] for k, _, _, _ in splits]
    slots, owned = _residual_slots(res_avals)
    known, known_consts = [], []
    for (k, _, _, _), own in zip(splits, owned):
        j, consts = pe.hoist_consts(_pad_residuals(k, n_known, slots, own))
        known.append(j)
        known_consts.append(consts)
    known, consts = pe.merge_branch_consts(known, known_consts)
    unknown = [
        _spread_residuals(u, len(own), slots, own)
        for (_, u, _, _), own in zip(splits, owned)
    ]
    known_ops = [x for x, uk in zip(ops, unknowns) if not uk]
    with set_current_trace(trace.parent):
        outs = cond_p.bind(index, *consts, *known_ops, branches=tuple(known))
    known_outs, residuals = outs[:n_known], outs[n_known:]
    unknown_ops = [x for x, uk in zip(ops, unknowns) if uk]
    unknown_outs = trace.tangent_trace.process_primitive(
        cond_p, [index, *residuals, *unknown_ops], dict(branches=tuple(unknown))
    )
    return merge_lists(out_uk, known_outs, unknown_outs)


def _residual_slots(res_avals):
    """Shared residual slots: `(slot avals, for each branch the slot of each of its
    residuals)`; residuals of equal shape and dtype in different branches share."""
    slots, owned = [], []
    for avals in res_avals:
        taken, own = set(), []
        for a in avals:
            slot = next(
                (
                    i
                    for i, s in enumerate(slots)
                    if i not in taken and cf.typematch(s, a)
                ),
                None,
            )
            if slot is None:
                slot = len(slots)
                slots.append(a)
            taken.add(slot)
            own.append(slot)
        owned.append(own)
    return slots, owned


def _pad_residuals(known, n_known, slots, own):
    """The known branch returning every slot: its own residuals, zeros elsewhere."""
    from jaxlite.lax.constructors import full

    def fun(*args):
        outs = jaxpr_as_fun(known)(*args)
        vals = [None] * len(slots)
        for r, s in enumerate(own):
            vals[s] = outs[n_known + r]
        vals = [
            full(a.shape, 0, a.dtype) if v is None else v for v, a in zip(vals, slots)
        ]
        return [*outs[:n_known], *vals]

    return trace_to_jaxpr(fun, known.in_avals)


def _spread_residuals(unknown, num_res, slots, own):
    """The unknown branch taking every slot (ignoring the slots it does not own)."""
    j = unknown.jaxpr
    res_vars = dict(unsafe_zip(own, j.invars[:num_res]))
    invars = [res_vars.get(s) or Var(a) for s, a in enumerate(slots)]
    return pe.make_closed([*invars, *j.invars[num_res:]], j.outvars, j.eqns)


def _cond_transpose(cts, index, *args, branches):
    linear = [ad.is_undefined(x) for x in args]
    res = [x for x, lin in zip(args, linear) if not lin]
    lin_avals = [x.aval for x, lin in zip(args, linear) if lin]
    out_avals = branches[0].out_avals
    ct_nz = [type(ct) is not ad.Zero for ct in cts]
    res_avals = [get_aval(x) for x in res]
    ct_avals = [ad.tangent_aval(a) for a, nz in zip(out_avals, ct_nz) if nz]

    def transpose_branch(branch):
        j = branch.jaxpr
        lin_jaxpr = Jaxpr(
            [v for v, lin in zip(j.invars, linear) if not lin],
            [v for v, lin in zip(j.invars, linear) if lin],
            j.outvars,
            j.eqns,
        )

        def fun(*a):
            given = iter(a[len(res) :])
            cts_out = [
                next(given) if nz else ad.Zero(ad.tangent_aval(av))
                for nz, av in zip(ct_nz, out_avals)
            ]
            cts_in = ad.backward_pass(lin_jaxpr, a[: len(res)], cts_out)
            return [
                cf.zeros_for(av) if type(ct) is ad.Zero else ct
                for ct, av in zip(cts_in, lin_avals)
            ]

        return pe.hoist_consts(trace_to_jaxpr(fun, [*res_avals, *ct_avals]))

    transposed = [transpose_branch(b) for b in branches]
    jaxprs, consts = pe.merge_branch_consts(
        [t[0] for t in transposed], [t[1] for t in transposed]
    )
    given = [ct for ct in cts if type(ct) is not ad.Zero]
    outs = iter(cond_p.bind(index, *consts, *res, *given, branches=tuple(jaxprs)))
    return [None] + [next(outs) if lin else None for lin in linear]


def _cond_batch(axis_size, vals, dims, *, branches):
    index, ops = vals[0], vals[1:]
    index_dim, op_dims = dims[0], dims[1:]
    n_out = len(branches[0].out_avals)
    if index_dim is not_mapped:
        out_bat = [False] * n_out
        for b in branches:
            out_bat = [
                x or y
                for x, y in zip(out_bat, batching.batch_body(b, axis_size, op_dims)[2])
            ]
        batched = [
            batching.batch_body(b, axis_size, op_dims, out_bat) for b in branches
        ]
        jaxprs, consts = pe.merge_branch_consts(
            [b[0] for b in batched], [b[1] for b in batched]
        )
        outs = cond_p.bind(index, *consts, *ops, branches=tuple(jaxprs))
        return outs, [0 if b else not_mapped for b in out_bat]
    if has_host_calls(branches):
        return _batched_cond_with_effects(axis_size, vals, dims, branches)
    # A batched index: every branch runs on the whole batch, select_n picks.
    index = batching.moveaxis(index, index_dim, 0)
    floats = [cf.is_float(get_aval(x)) for x in ops]
    ops = [
        batching.bdim_at_front(x, d, axis_size) if f else x
        for x, d, f in zip(ops, op_dims, floats)
    ]
    op_dims = [0 if f else d for d, f in zip(op_dims, floats)]
    cases = []
    for i, b in enumerate(branches):
        taken = eq(index, np.int32(i))
        outs, out_dims = batching.vmap_flat(
            jaxpr_as_fun(b), axis_size, _cut_untaken(taken, ops, floats), op_dims
        )
        cases.append(
            [batching.bdim_at_front(o, d, axis_size) for o, d in zip(outs, out_dims)]
        )
    outs = [_select_batched(index, list(c)) for c in unsafe_zip(*cases)]
    return outs, [0] * n_out


def _cut_untaken(taken, ops, floats):
    """The operands of one branch, with no derivative where the branch is not taken.

    The elements that do not take the branch still run it, and their outputs are then
    dropped by `select_n`, whose transpose gives them zero cotangents. But a zero
    cotangent times an infinite derivative is NaN (the untaken `sqrt` branch of
    `cond(x < eps, lambda x: eps, jnp.sqrt, x)` at 0), and the chain rule would carry
    it back to the operand. Cutting the operand's derivative where the branch is not
    taken (`select(taken, x, stop_gradient(x))`, as JAX does) keeps that NaN inside
    the branch, where the output selection drops it.
    """
    return [
        _select_batched(taken, [stop_gradient(x), x]) if f else x
        for x, f in zip(ops, floats)
    ]


def _select_batched(index, cases):
    shape = np.shape(cases[0])
    which = index if len(shape) == 1 else broadcast_in_dim(index, shape, (0,))
    return select_n(which, *cases)


def has_host_calls(branches):
    """Whether any branch has effects or calls the host (a pure callback has no effect
    but must still only see the elements that take its branch)."""
    return any(b.effects or calls_host(b) for b in branches)


def _batched_cond_with_effects(axis_size, vals, dims, branches):
    """A cond with a batched index whose branches call the host (callbacks, effects).

    Running every branch on the whole batch would call the host for elements that do
    not take the branch (JAX does that, or refuses). Instead the cond runs once per
    element, in a loop over the batch (`callbacks.batch_sequentially`, which also
    refuses ordered IO), so each callback sees exactly the elements that take its
    branch, in batch order. A batched `while_loop` freezes finished elements with such
    conds, so its callbacks only see the elements still running.
    """
    from jaxlite.lax.callbacks import batch_sequentially

    return batch_sequentially(cond_p, axis_size, vals, dims, dict(branches=branches))


def _cond_dce(used_outs, eqn):
    """Prune unused outputs in every branch, then the operands no branch reads (the
    used inputs are those of the returned equation, as for scan)."""
    branches = eqn.params["branches"]
    n_ops = len(eqn.invars) - 1
    if not any(used_outs) and not eqn.effects:
        return [False] * len(eqn.invars), None
    pruned, used_ins = [], [False] * n_ops
    for b in branches:
        j, used = pe.dce_closed(b, used_outs)
        pruned.append(j)
        used_ins = [x or y for x, y in zip(used_ins, used)]
    new_branches = tuple(pe.select_invars(j, used_ins) for j in pruned)
    new_eqn = JaxprEqn(
        cond_p,
        [eqn.invars[0], *(x for x, u in zip(eqn.invars[1:], used_ins) if u)],
        dict(eqn.params, branches=new_branches),
        [v for v, u in zip(eqn.outvars, used_outs) if u],
        join_effects(*(b.effects for b in new_branches)),
    )
    return [True] * len(new_eqn.invars), new_eqn


cond_p = Primitive("cond", multiple_results=True)
impl_rules[cond_p] = _cond_impl
abstract_eval_rules[cond_p] = _cond_abstract
lowering_rules[cond_p] = cond_lowering
native_rules[cond_p] = "cond"
ad.jvp_rules[cond_p] = _cond_jvp
ad.partial_eval_rules[cond_p] = _cond_partial_eval
ad.transpose_rules[cond_p] = _cond_transpose
batching.batch_rules[cond_p] = _cond_batch
physical_rules[cond_p] = physical.with_physical_jaxprs(cond_p)
dce_rules[cond_p] = _cond_dce

__all__ = ["cond", "cond_p", "switch"]
