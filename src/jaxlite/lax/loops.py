"""Loops: `scan` and `while_loop`, and `fori_loop` and `map` built on them.

`scan` runs a body over the leading axis of its inputs with a carry; `while_loop` runs a
body while a predicate holds. Each body is traced once to a jaxpr and held by one
equation; running it is a Python loop around the body's compiled function (one call
per iteration), generated once per equation by the backend (`backend/loops.py`).

Loop carries need a fixed point in every transformation: a carry is differentiated,
unknown or batched when its initial value is or when one iteration makes it so. Reverse
mode works through `scan`: partial evaluation splits the body into a known scan, which
also stacks the per-iteration residuals as extra outputs, and an unknown scan over the
residuals, which transposes to a scan running the other way. A `while_loop` has no
bound on its trip count, so its transpose raises JAX's error; `fori_loop` with static
bounds is a `scan` and differentiates in both modes.
"""

from __future__ import annotations

import weakref

import numpy as np

from jaxlite import tree_util
from jaxlite.backend import lowering_rules
from jaxlite.backend.loops import (
    derived,
    scan_lowering,
    scan_runner,
    while_lowering,
    while_runner,
)
from jaxlite.backend.native import native_rules
from jaxlite.config import config
from jaxlite.core import (
    Jaxpr,
    JaxprEqn,
    Literal,
    Primitive,
    ShapedArray,
    Var,
    abstract_eval_rules,
    concrete_or_error,
    dce_rules,
    get_aval,
    impl_rules,
    jaxpr_as_fun,
    join_effects,
    physical_rules,
    set_current_trace,
)
from jaxlite.errors import ConcretizationTypeError
from jaxlite.interpreters import ad, batching, physical
from jaxlite.interpreters import partial_eval as pe
from jaxlite.interpreters.batching import not_mapped
from jaxlite.interpreters.partial_eval import trace_to_jaxpr
from jaxlite.lax import control_flow as cf
from jaxlite.lax.conditionals import cond_p, has_host_calls
from jaxlite.lax.elementwise import bitwise_and, convert_element_type, lt, select_n
from jaxlite.util import fun_name, merge_lists, safe_zip, split_list

zip = safe_zip

# ----------------------------------------------------------------------------------------
# scan: the public function


def scan(
    f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False
):
    """Scan `f(carry, x) -> (carry, y)` over the leading axis of `xs`.

    Returns the final carry and the stacked `y`s. `xs` and `y` may be pytrees (or None,
    with `length` giving the number of steps); the carry must keep its structure and
    types.
    """
    if not callable(f):
        raise TypeError("lax.scan: f argument should be a callable.")
    init_leaves, init_tree = cf.flatten_operands(init)
    xs_leaves, xs_tree = cf.flatten_operands(xs)
    length = _infer_scan_length(xs_leaves, length)
    if config.disable_jit:
        return _scan_in_python(f, init, xs_leaves, xs_tree, length, reverse)
    unroll = _check_unroll(unroll, length)
    x_avals = [cf.slice_aval(get_aval(x)) for x in xs_leaves]
    init_avals = [get_aval(x) for x in init_leaves]
    jaxpr, consts, carry_tree, ys_tree = _trace_scan_body(
        f, init_tree, init_avals, xs_tree, x_avals
    )
    carry_avals = jaxpr.out_avals[: carry_tree.num_leaves]
    if carry_tree != init_tree:
        cf.check_carry_type(
            "scan body", f, init_tree, init_avals, carry_tree, carry_avals
        )
    init_leaves, changed = cf.promote_weak_inputs(init_leaves, init_avals, carry_avals)
    if changed:
        init_avals = [get_aval(x) for x in init_leaves]
        jaxpr, consts, carry_tree, ys_tree = _trace_scan_body(
            f, init_tree, init_avals, xs_tree, x_avals
        )
        carry_avals = jaxpr.out_avals[: carry_tree.num_leaves]
    cf.check_carry_type("scan body", f, init_tree, init_avals, carry_tree, carry_avals)
    carry, ys = _bind_scan(
        jaxpr, consts, init_leaves, xs_leaves, length, reverse, unroll
    )
    return (
        tree_util.tree_unflatten(carry_tree, carry),
        tree_util.tree_unflatten(ys_tree, ys),
    )


def _trace_scan_body(f, init_tree, init_avals, xs_tree, x_avals):
    def body(carry, x):
        out = f(carry, x)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            leaves, tree = tree_util.tree_flatten(out)
            shown = cf.avals_tree_str(tree, [get_aval(leaf) for leaf in leaves])
            raise TypeError(f"scan body output must be a pair, got {shown}.")
        return tuple(out)

    in_tree = tree_util.tree_structure(
        (
            tree_util.tree_unflatten(init_tree, init_avals),
            tree_util.tree_unflatten(xs_tree, x_avals),
        )
    )
    jaxpr, consts, out_tree, _ = cf.trace_body(
        body, "scan", in_tree, [*init_avals, *x_avals], named=f
    )
    carry_tree, ys_tree = tree_util.treedef_children(out_tree)
    return jaxpr, consts, carry_tree, ys_tree


def _bind_scan(jaxpr, consts, init, xs, length, reverse, unroll):
    """Bind `scan` as JAX does: a carry the body returns unchanged becomes a constant,
    and a `y` that is just the current `x` is not stacked again."""
    num_consts, num_carry = len(consts), len(init)
    jaxpr, move, ys_from_xs = derived(
        [jaxpr],
        ("scan forwarding", num_consts, num_carry),
        lambda: _forward_scan_body(jaxpr, num_consts, num_carry),
    )
    moved = [x for x, m in zip(init, move) if m]
    init = [x for x, m in zip(init, move) if not m]
    consts = [*moved, *consts]
    outs = scan_p.bind(
        *consts,
        *init,
        *xs,
        jaxpr=jaxpr,
        length=length,
        num_carry=len(init),
        num_consts=len(consts),
        reverse=reverse,
        unroll=unroll,
    )
    carry, ys = outs[: len(init)], iter(outs[len(init) :])
    ys = [next(ys) if f is None else cf.as_value(xs[f]) for f in ys_from_xs]
    carry = merge_lists(move, carry, [cf.as_value(x) for x in moved])
    return carry, ys


def _forward_scan_body(jaxpr, num_consts, num_carry):
    """`(body, moved carries, for each y the x it is)`: the body without forwarded
    carries (they become its first constants) and without `y`s that are `x`s."""
    num_xs = len(jaxpr.in_avals) - num_consts - num_carry
    fwd = pe.forwarding(jaxpr)
    carry_fwd, ys_fwd = fwd[:num_carry], fwd[num_carry:]
    move = [f == num_consts + i for i, f in enumerate(carry_fwd)]
    first_x = num_consts + num_carry
    ys_from_xs = [
        f - first_x if f is not None and f >= first_x else None for f in ys_fwd
    ]
    if any(move):
        jaxpr = pe.prune_outputs(jaxpr, [not m for m in move] + [True] * len(ys_fwd))
        flags = [False] * num_consts + move + [False] * num_xs
        order = [i for i, fl in enumerate(flags) if fl]
        order += [i for i, fl in enumerate(flags) if not fl]
        jaxpr = pe.permute(jaxpr, in_order=order)
    keep = [True] * (num_carry - sum(move)) + [f is None for f in ys_from_xs]
    return pe.prune_outputs(jaxpr, keep), move, ys_from_xs


def _infer_scan_length(xs_leaves, length):
    no_axis = [x for x in xs_leaves if not np.shape(x)]
    if no_axis:
        raise ValueError(
            "scan got value with no leading axis to scan over: "
            f"{', '.join(str(x) for x in no_axis)}."
        )
    lengths = [np.shape(x)[0] for x in xs_leaves]
    if length is not None:
        length = concrete_or_error(
            int,
            length,
            "The `length` argument to `scan` expects a concrete `int` value. For "
            "scan-like iteration with a dynamic length, use `while_loop` or "
            "`fori_loop`.",
        )
        if any(n != length for n in lengths):
            raise ValueError(
                f"scan got `length` argument of {length} which disagrees with leading "
                f"axis sizes {lengths}."
            )
        return length
    if len(set(lengths)) > 1:
        raise ValueError(
            "scan got values with different leading axis sizes: "
            f"{', '.join(str(n) for n in lengths)}."
        )
    if not lengths:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    return lengths[0]


def _check_unroll(unroll, length):
    if isinstance(unroll, (bool, np.bool_)):
        return max(length, 1) if unroll else 1
    unroll = concrete_or_error(
        int,
        unroll,
        "The `unroll` argument to `scan` expects a concrete `int` or `bool` value.",
    )
    if unroll < 0:
        raise ValueError("`unroll` must be a `bool` or a non-negative `int`.")
    return unroll


def _scan_in_python(f, init, xs_leaves, xs_tree, length, reverse):
    """`scan` under `disable_jit`: a plain Python loop calling `f`."""
    from jaxlite.lax.indexing import index_in_dim
    from jaxlite.lax.structural import stack

    if length == 0:
        raise ValueError(
            "zero-length scan is not supported in disable_jit() mode because the output "
            "type is unknown."
        )
    carry, ys = init, []
    steps = range(length - 1, -1, -1) if reverse else range(length)
    for i in steps:
        x = [index_in_dim(cf.as_value(x), i, keepdims=False) for x in xs_leaves]
        carry, y = f(carry, tree_util.tree_unflatten(xs_tree, x))
        ys.append(y)
    if reverse:
        ys.reverse()
    stacked = tree_util.tree_map(lambda *y: stack([cf.as_value(v) for v in y]), *ys)
    return carry, stacked


# ----------------------------------------------------------------------------------------
# The scan primitive: `scan(*consts, *carry, *xs, jaxpr, length, num_carry, num_consts,
# reverse, unroll)`; the body maps (consts, carry, x) to (carry, y).


def _scan_impl(*args, jaxpr, length, num_carry, num_consts, reverse, unroll):
    return scan_runner(jaxpr, length, num_carry, num_consts, reverse)(*args)


def _scan_abstract(*avals, jaxpr, length, num_carry, num_consts, reverse, unroll):
    if len(avals) != len(jaxpr.in_avals):
        raise TypeError(
            f"scan: {len(avals)} operands for a body of {len(jaxpr.in_avals)} inputs"
        )
    for a in avals[num_consts + num_carry :]:
        if not a.shape or a.shape[0] != length:
            raise TypeError(
                f"scan: scanned operand {a.str_short()} does not have "
                f"leading axis of length {length}"
            )
    carry, ys = split_list(jaxpr.out_avals, [num_carry])
    return [*carry, *(cf.stacked_aval(length, a) for a in ys)], jaxpr.effects


def _scan_jvp(
    primals, tangents, *, jaxpr, length, num_carry, num_consts, reverse, unroll
):
    nonzeros = [cf.tangent_nonzero(p, t) for p, t in zip(primals, tangents)]
    const_nz, init_nz, xs_nz = split_list(nonzeros, [num_consts, num_carry])
    num_ys = len(jaxpr.out_avals) - num_carry

    def step(carry_nz):
        _, _, out_nz = ad.jvp_jaxpr(
            jaxpr, const_nz + carry_nz + xs_nz, carry_nz + [False] * num_ys
        )
        return out_nz[:num_carry]

    carry_nz = cf.fixed_point(step, init_nz)
    jvp, extra, out_nz = ad.jvp_jaxpr(
        jaxpr, const_nz + carry_nz + xs_nz, carry_nz + [False] * num_ys
    )
    ys_nz = out_nz[num_carry:]
    # Reorder the JVP body (its constants, primals, then tangents) into scan's layout.
    n_ct, n_cat, n_xt, n_yt = sum(const_nz), sum(carry_nz), sum(xs_nz), sum(ys_nz)
    n_e = len(extra)
    num_in = n_e + len(primals)
    c0, x0 = n_e + num_consts, n_e + num_consts + num_carry
    in_order = [
        *range(c0),
        *range(num_in, num_in + n_ct),
        *range(c0, x0),
        *range(num_in + n_ct, num_in + n_ct + n_cat),
        *range(x0, num_in),
        *range(num_in + n_ct + n_cat, num_in + n_ct + n_cat + n_xt),
    ]
    n_out = num_carry + num_ys
    out_order = [
        *range(num_carry),
        *range(n_out, n_out + n_cat),
        *range(num_carry, n_out),
        *range(n_out + n_cat, n_out + n_cat + n_yt),
    ]
    jvp = pe.permute(jvp, in_order, out_order)
    consts, init, xs = split_list(primals, [num_consts, num_carry])
    consts_t, init_t, xs_t = split_list(tangents, [num_consts, num_carry])
    args = [
        *extra,
        *consts,
        *(t for t, nz in zip(consts_t, const_nz) if nz),
        *init,
        *(cf.instantiate_zeros(t) for t, nz in zip(init_t, carry_nz) if nz),
        *xs,
        *(t for t, nz in zip(xs_t, xs_nz) if nz),
    ]
    outs = scan_p.bind(
        *args,
        jaxpr=jvp,
        length=length,
        num_carry=num_carry + n_cat,
        num_consts=n_e + num_consts + n_ct,
        reverse=reverse,
        unroll=unroll,
    )
    carry, carry_t, ys, ys_t = split_list(outs, [num_carry, n_cat, num_ys])
    out_avals = _scan_abstract(
        *(get_aval(p) for p in primals),
        jaxpr=jaxpr,
        length=length,
        num_carry=num_carry,
        num_consts=num_consts,
        reverse=reverse,
        unroll=unroll,
    )[0]
    zeros = [ad.Zero(ad.tangent_aval(a)) for a in out_avals]
    out_t = merge_lists(carry_nz + ys_nz, zeros, carry_t + ys_t)
    return carry + ys, out_t


def _scan_partial_eval(trace, args, params):
    """Split a scan whose operands are partly unknown (tangents under linearize).

    The known scan computes the known carries and `y`s now and stacks the residuals
    the unknown body needs as extra `y`s; residuals that are the same in every
    iteration (a constant operand) or that are an `x` are passed to the unknown scan
    directly instead. The unknown scan over the residuals is recorded. Effectful
    equations stay inside their loop: the known body keeps those whose inputs are known.
    """
    jaxpr = params["jaxpr"]
    num_consts, num_carry = params["num_consts"], params["num_carry"]
    unknowns = [trace.is_unknown(x) for x in args]
    const_uk, init_uk, xs_uk = split_list(unknowns, [num_consts, num_carry])
    num_ys = len(jaxpr.out_avals) - num_carry

    def split_body(carry_uk):
        return ad.partial_eval_jaxpr(
            jaxpr, const_uk + carry_uk + xs_uk, instantiate=carry_uk + [False] * num_ys
        )

    carry_uk = cf.fixed_point(lambda uk: split_body(uk)[2][:num_carry], init_uk)
    known, unknown, out_uk, num_res = split_body(carry_uk)
    ys_uk = out_uk[num_carry:]
    consts, init, xs = split_list(args, [num_consts, num_carry])
    consts_k = [x for x, uk in zip(consts, const_uk) if not uk]
    init_k = [x for x, uk in zip(init, carry_uk) if not uk]
    xs_k = [x for x, uk in zip(xs, xs_uk) if not uk]
    known, extra = pe.hoist_consts(known)
    n_known_out = len(known.out_avals) - num_res
    # Where each residual comes from: a loop-invariant value, an `x`, or stacked.
    invar_index = {v: i for i, v in enumerate(known.jaxpr.invars)}
    first_carry = len(extra) + len(consts_k)
    first_x = first_carry + len(init_k)
    known_ins = [*extra, *consts_k, *init_k, *xs_k]
    kinds = []
    for v in known.jaxpr.outvars[n_known_out:]:
        i = invar_index.get(v) if type(v) is Var else None
        if type(v) is Literal:
            kinds.append(("const", v.val))
        elif i is not None and i < first_carry:
            kinds.append(("const", known_ins[i]))
        elif i is not None and i >= first_x:
            kinds.append(("x", known_ins[i]))
        else:
            kinds.append(("stacked", None))
    known = pe.prune_outputs(
        known, [True] * n_known_out + [kind == "stacked" for kind, _ in kinds]
    )
    with set_current_trace(trace.parent):
        outs = scan_p.bind(
            *extra,
            *consts_k,
            *init_k,
            *xs_k,
            **dict(
                params,
                jaxpr=known,
                num_carry=len(init_k),
                num_consts=len(extra) + len(consts_k),
            ),
        )
    n_ys_k = num_ys - sum(ys_uk)
    carry_k, ys_k, stacked = split_list(outs, [len(init_k), n_ys_k])
    stacked = iter(stacked)
    res_vars = unknown.jaxpr.invars[:num_res]
    res_consts, res_const_vars, res_xs, res_x_vars = [], [], [], []
    for (kind, val), v in zip(kinds, res_vars):
        if kind == "const":
            res_consts.append(val)
            res_const_vars.append(v)
        else:
            res_xs.append(next(stacked) if kind == "stacked" else val)
            res_x_vars.append(v)
    uj = unknown.jaxpr
    n_cu, n_caru = sum(const_uk), sum(carry_uk)
    cu_vars, caru_vars, xu_vars = split_list(uj.invars[num_res:], [n_cu, n_caru])
    body_u = pe.make_closed(
        [*res_const_vars, *cu_vars, *caru_vars, *res_x_vars, *xu_vars],
        uj.outvars,
        uj.eqns,
    )
    u_args = [
        *res_consts,
        *(x for x, uk in zip(consts, const_uk) if uk),
        *(x for x, uk in zip(init, carry_uk) if uk),
        *res_xs,
        *(x for x, uk in zip(xs, xs_uk) if uk),
    ]
    if uj.outvars or uj.effects:
        u_params = dict(
            params, jaxpr=body_u, num_carry=n_caru, num_consts=len(res_consts) + n_cu
        )
        u_outs = trace.tangent_trace.process_primitive(scan_p, u_args, u_params)
    else:
        u_outs = []
    carry_u, ys_u = split_list(u_outs, [n_caru])
    return merge_lists(carry_uk, carry_k, carry_u) + merge_lists(ys_uk, ys_k, ys_u)


def _scan_transpose(cts, *args, jaxpr, length, num_carry, num_consts, reverse, unroll):
    """Transpose a linear scan: a scan running the other way, carrying the carries'
    cotangents and accumulating those of the linear constants, emitting those of the
    linear `x`s. Known operands (residuals) are read as they are."""
    consts, carry, xs = split_list(args, [num_consts, num_carry])
    # A carry with a known initial value (zeros a JVP instantiated) is still linear:
    # its cotangent is computed and dropped.
    init_lin = [ad.is_undefined(x) for x in carry]
    carry = [
        x if lin else ad.UndefinedPrimal(get_aval(x)) for x, lin in zip(carry, init_lin)
    ]
    c_lin = [ad.is_undefined(x) for x in consts]
    x_lin = [ad.is_undefined(x) for x in xs]
    num_ys = len(jaxpr.out_avals) - num_carry
    ct_carry, ct_ys = split_list(cts, [num_carry])
    ct_carry = [
        cf.zeros_for(x.aval) if type(ct) is ad.Zero else ct
        for ct, x in zip(ct_carry, carry)
    ]
    ys_nz = [type(ct) is not ad.Zero for ct in ct_ys]
    res_c = [x for x, lin in zip(consts, c_lin) if not lin]
    res_x = [x for x, lin in zip(xs, x_lin) if not lin]
    lin_c_avals = [ad.tangent_aval(x.aval) for x, lin in zip(consts, c_lin) if lin]
    carry_avals = [ad.tangent_aval(x.aval) for x in carry]
    lin_x_avals = [
        ad.tangent_aval(cf.slice_aval(x.aval)) for x, lin in zip(xs, x_lin) if lin
    ]
    y_avals = jaxpr.out_avals[num_carry:]
    j = jaxpr.jaxpr
    c_vars, car_vars, x_vars = split_list(j.invars, [num_consts, num_carry])
    lin_jaxpr = Jaxpr(
        [
            *(v for v, lin in zip(c_vars, c_lin) if not lin),
            *(v for v, lin in zip(x_vars, x_lin) if not lin),
        ],
        [
            *(v for v, lin in zip(c_vars, c_lin) if lin),
            *car_vars,
            *(v for v, lin in zip(x_vars, x_lin) if lin),
        ],
        j.outvars,
        j.eqns,
    )
    n_rc, n_acc = len(res_c), len(lin_c_avals)

    def body(*a):
        rc, acc, cc, rx, cy = split_list(a, [n_rc, n_acc, num_carry, len(res_x)])
        cy = iter(cy)
        cts_out = [
            *cc,
            *(
                next(cy) if nz else ad.Zero(ad.tangent_aval(ya))
                for nz, ya in zip(ys_nz, y_avals)
            ),
        ]
        cts_in = ad.backward_pass(lin_jaxpr, [*rc, *rx], cts_out)
        ct_c, ct_car, ct_x = split_list(cts_in, [n_acc, num_carry])
        acc = [
            a if type(c) is ad.Zero else ad.add_tangents(a, c)
            for a, c in zip(acc, ct_c)
        ]
        ct_car = [
            cf.zeros_for(av) if type(c) is ad.Zero else c
            for c, av in zip(ct_car, carry_avals)
        ]
        ct_x = [
            cf.zeros_for(av) if type(c) is ad.Zero else c
            for c, av in zip(ct_x, lin_x_avals)
        ]
        return [*acc, *ct_car, *ct_x]

    in_avals = [
        *(get_aval(x) for x in res_c),
        *lin_c_avals,
        *carry_avals,
        *(cf.slice_aval(get_aval(x)) for x in res_x),
        *(ad.tangent_aval(a) for a, nz in zip(y_avals, ys_nz) if nz),
    ]
    t_jaxpr, extra = pe.hoist_consts(trace_to_jaxpr(body, in_avals))
    acc_init = [cf.zeros_for(a) for a in lin_c_avals]
    given = [ct for ct in ct_ys if type(ct) is not ad.Zero]
    outs = scan_p.bind(
        *extra,
        *res_c,
        *acc_init,
        *ct_carry,
        *res_x,
        *given,
        jaxpr=t_jaxpr,
        length=length,
        num_carry=n_acc + num_carry,
        num_consts=len(extra) + n_rc,
        reverse=not reverse,
        unroll=unroll,
    )
    ct_consts, ct_init, ct_xs = split_list(outs, [n_acc, num_carry])
    assert len(ct_xs) == len(lin_x_avals) and num_ys == len(ys_nz)
    return [
        *merge_lists(c_lin, [None] * n_rc, ct_consts),
        *(ct if lin else None for ct, lin in zip(ct_init, init_lin)),
        *merge_lists(x_lin, [None] * len(res_x), ct_xs),
    ]


def _scan_batch(
    axis_size, vals, dims, *, jaxpr, length, num_carry, num_consts, reverse, unroll
):
    const_dims, init_dims, xs_dims = split_list(dims, [num_consts, num_carry])
    num_ys = len(jaxpr.out_avals) - num_carry
    x_dims = [not_mapped if d is not_mapped else 0 for d in xs_dims]

    def body_dims(carry_bat):
        return [*const_dims, *(0 if b else not_mapped for b in carry_bat), *x_dims]

    def step(carry_bat):
        out = batching.batch_body(
            jaxpr, axis_size, body_dims(carry_bat), carry_bat + [False] * num_ys
        )[2]
        return out[:num_carry]

    carry_bat = cf.fixed_point(step, [d is not not_mapped for d in init_dims])
    body, extra, out_bat = batching.batch_body(
        jaxpr, axis_size, body_dims(carry_bat), carry_bat + [False] * num_ys
    )
    consts, init, xs = split_list(vals, [num_consts, num_carry])
    init = [
        batching.bdim_at_front(x, d, axis_size) if b else x
        for x, d, b in zip(init, init_dims, carry_bat)
    ]
    xs = [
        x if d is not_mapped else batching.moveaxis(x, d, 1)
        for x, d in zip(xs, xs_dims)
    ]
    outs = scan_p.bind(
        *extra,
        *consts,
        *init,
        *xs,
        jaxpr=body,
        length=length,
        num_carry=num_carry,
        num_consts=len(extra) + num_consts,
        reverse=reverse,
        unroll=unroll,
    )
    out_dims = [0 if b else not_mapped for b in carry_bat]
    out_dims += [1 if b else not_mapped for b in out_bat[num_carry:]]
    return outs, out_dims


def _scan_dce(used_outs, eqn):
    """Drop unused `y`s and carries nothing needs (fixed point: a carry is needed when
    it is used outside or a needed output reads it). Effectful bodies are kept. The
    used inputs are those of the returned equation (`core.dce_jaxpr` reads them
    against its operands); all of them are used."""
    params = eqn.params
    jaxpr, num_consts, num_carry = (
        params["jaxpr"],
        params["num_consts"],
        params["num_carry"],
    )
    if not any(used_outs) and not eqn.effects:
        return [False] * len(eqn.invars), None
    used_ys = list(used_outs[num_carry:])

    def step(used_carry):
        return pe.dce_closed(jaxpr, used_carry + used_ys)[1][
            num_consts : num_consts + num_carry
        ]

    used_carry = cf.fixed_point(step, used_outs[:num_carry])
    body, used_ins = pe.dce_closed(jaxpr, used_carry + used_ys)
    used_consts, _, used_xs = split_list(used_ins, [num_consts, num_carry])
    keep = used_consts + used_carry + used_xs
    body = pe.select_invars(body, keep)
    new_eqn = JaxprEqn(
        scan_p,
        [x for x, k in zip(eqn.invars, keep) if k],
        dict(
            params, jaxpr=body, num_carry=sum(used_carry), num_consts=sum(used_consts)
        ),
        [v for v, u in zip(eqn.outvars, used_carry + used_ys) if u],
        body.effects,
    )
    return [True] * len(new_eqn.invars), new_eqn


scan_p = Primitive("scan", multiple_results=True)
impl_rules[scan_p] = _scan_impl
abstract_eval_rules[scan_p] = _scan_abstract
lowering_rules[scan_p] = scan_lowering
native_rules[scan_p] = "scan"
ad.jvp_rules[scan_p] = _scan_jvp
ad.partial_eval_rules[scan_p] = _scan_partial_eval
ad.transpose_rules[scan_p] = _scan_transpose
batching.batch_rules[scan_p] = _scan_batch
physical_rules[scan_p] = physical.with_physical_jaxprs(scan_p)
dce_rules[scan_p] = _scan_dce


# ----------------------------------------------------------------------------------------
# while_loop: the public function


def while_loop(cond_fun, body_fun, init_val):
    """`body_fun` applied to `init_val` while `cond_fun` holds (both traced once)."""
    if not (callable(body_fun) and callable(cond_fun)):
        raise TypeError(
            "lax.while_loop: body_fun and cond_fun arguments should be callable."
        )
    if config.disable_jit:
        try:
            val = tree_util.tree_map(cf.as_value, init_val)
            while cond_fun(val):
                val = tree_util.tree_map(cf.as_value, body_fun(val))
            return val
        except ConcretizationTypeError:
            pass  # under vmap or grad: fall back to the primitive
    leaves, in_tree = cf.flatten_operands((init_val,))
    avals = [get_aval(x) for x in leaves]
    carry_tree = tree_util.treedef_children(in_tree)[0]
    cond_j, cond_consts, body_j, body_consts, body_tree = _trace_while(
        cond_fun, body_fun, in_tree, avals
    )
    if body_tree != carry_tree:
        cf.check_carry_type(
            "while_loop body", body_fun, carry_tree, avals, body_tree, body_j.out_avals
        )
    leaves, changed = cf.promote_weak_inputs(leaves, avals, body_j.out_avals)
    if changed:
        avals = [get_aval(x) for x in leaves]
        cond_j, cond_consts, body_j, body_consts, body_tree = _trace_while(
            cond_fun, body_fun, in_tree, avals
        )
    cf.check_carry_type(
        "while_loop body", body_fun, carry_tree, avals, body_tree, body_j.out_avals
    )
    # A carry the body returns unchanged and the predicate does not read is a constant.
    n_cc, n_bc = len(cond_consts), len(body_consts)
    cond_j, body_j, move = derived(
        [cond_j, body_j],
        ("while forwarding", n_cc, n_bc),
        lambda: _forward_while_body(cond_j, body_j, n_cc, n_bc),
    )
    moved = [x for x, m in zip(leaves, move) if m]
    leaves = [x for x, m in zip(leaves, move) if not m]
    body_consts = [*moved, *body_consts]
    outs = while_p.bind(
        *cond_consts,
        *body_consts,
        *leaves,
        body_jaxpr=body_j,
        body_nconsts=len(body_consts),
        cond_jaxpr=cond_j,
        cond_nconsts=n_cc,
    )
    outs = merge_lists(move, outs, [cf.as_value(x) for x in moved])
    return tree_util.tree_unflatten(body_tree, outs)


def _forward_while_body(cond_j, body_j, n_cc, n_bc):
    """`(cond, body, moved carries)`: carries the body returns unchanged and the
    predicate does not read become the body's first constants."""
    n_carry = len(body_j.in_avals) - n_bc
    fwd = pe.forwarding(body_j)
    no_fwd = [fwd[i] != n_bc + i for i in range(n_carry)]
    cond_dce, cond_used = pe.dce_closed(cond_j, [True])
    keep = [u or nf for u, nf in zip(cond_used[n_cc:], no_fwd)]
    move = [not k for k in keep]
    if not any(move):
        return cond_j, body_j, move
    cond_j = pe.select_invars(cond_dce, [True] * n_cc + keep)
    body_j = pe.prune_outputs(body_j, keep)
    flags = [False] * n_bc + move
    order = [i for i, fl in enumerate(flags) if fl]
    order += [i for i, fl in enumerate(flags) if not fl]
    return cond_j, pe.permute(body_j, in_order=order), move


def _trace_while(cond_fun, body_fun, in_tree, avals):
    cond_j, cond_consts, cond_tree, cond_avals = cf.trace_body(
        cond_fun, "while_cond", in_tree, avals
    )
    if not tree_util.treedef_is_leaf(cond_tree) or len(cond_avals) != 1:
        raise TypeError(
            f"cond_fun must return a boolean scalar, but got pytree {cond_tree}."
        )
    pred = cond_avals[0]
    if pred.shape != () or pred.dtype != np.bool_:
        raise TypeError(
            f"cond_fun must return a boolean scalar, but got output type(s) [{pred!r}]."
        )
    body_j, body_consts, body_tree, _ = cf.trace_body(
        body_fun, "while_body", in_tree, avals
    )
    return cond_j, cond_consts, body_j, body_consts, body_tree


# ----------------------------------------------------------------------------------------
# The while primitive: `while(*cond_consts, *body_consts, *carry, body_jaxpr,
# body_nconsts, cond_jaxpr, cond_nconsts)`.


def _while_impl(*args, body_jaxpr, body_nconsts, cond_jaxpr, cond_nconsts):
    return while_runner(cond_jaxpr, cond_nconsts, body_jaxpr, body_nconsts)(*args)


def _while_abstract(*avals, body_jaxpr, body_nconsts, cond_jaxpr, cond_nconsts):
    n = len(avals) - cond_nconsts - body_nconsts
    if len(body_jaxpr.in_avals) != body_nconsts + n:
        raise TypeError(f"while: {len(avals)} operands do not match the body's inputs")
    effects = join_effects(cond_jaxpr.effects, body_jaxpr.effects)
    return list(body_jaxpr.out_avals), effects


def _while_jvp(
    primals, tangents, *, body_jaxpr, body_nconsts, cond_jaxpr, cond_nconsts
):
    cc, bc, init = split_list(primals, [cond_nconsts, body_nconsts])
    _, bc_t, init_t = split_list(tangents, [cond_nconsts, body_nconsts])
    bc_nz = [cf.tangent_nonzero(p, t) for p, t in zip(bc, bc_t)]
    init_nz = [cf.tangent_nonzero(p, t) for p, t in zip(init, init_t)]

    def step(carry_nz):
        return ad.jvp_jaxpr(body_jaxpr, bc_nz + carry_nz, carry_nz)[2]

    carry_nz = cf.fixed_point(step, init_nz)
    jvp, extra, _ = ad.jvp_jaxpr(body_jaxpr, bc_nz + carry_nz, carry_nz)
    n_b, n_c, n_bt, n_ct = len(extra) + len(bc), len(init), sum(bc_nz), sum(carry_nz)
    n_in = n_b + n_c
    jvp = pe.permute(
        jvp,
        [
            *range(n_b),
            *range(n_in, n_in + n_bt),
            *range(n_b, n_in),
            *range(n_in + n_bt, n_in + n_bt + n_ct),
        ],
    )
    carry_avals = body_jaxpr.out_avals
    t_avals = [ad.tangent_aval(a) for a, nz in zip(carry_avals, carry_nz) if nz]
    cond_aug = pe.add_invars(cond_jaxpr, t_avals, len(cond_jaxpr.in_avals))
    outs = while_p.bind(
        *cc,
        *extra,
        *bc,
        *(t for t, nz in zip(bc_t, bc_nz) if nz),
        *init,
        *(cf.instantiate_zeros(t) for t, nz in zip(init_t, carry_nz) if nz),
        body_jaxpr=jvp,
        body_nconsts=n_b + n_bt,
        cond_jaxpr=cond_aug,
        cond_nconsts=cond_nconsts,
    )
    zeros = [ad.Zero(ad.tangent_aval(a)) for a in carry_avals]
    return outs[:n_c], merge_lists(carry_nz, zeros, outs[n_c:])


def _while_partial_eval(trace, args, params):
    """Known carries that the predicate alone depends on are computed by a known loop
    now; the unknown carries by the whole loop, recorded (it recomputes the known
    part, as JAX does). Transposing that recorded loop raises JAX's error."""
    body_jaxpr, body_nconsts = params["body_jaxpr"], params["body_nconsts"]
    cond_jaxpr, cond_nconsts = params["cond_jaxpr"], params["cond_nconsts"]
    unknowns = [trace.is_unknown(x) for x in args]
    cc_uk, bc_uk, init_uk = split_list(unknowns, [cond_nconsts, body_nconsts])

    def record_all():
        return trace.tangent_trace.process_primitive(while_p, args, params)

    if any(cc_uk):
        return record_all()

    def split_body(carry_uk):
        return ad.partial_eval_jaxpr(body_jaxpr, bc_uk + carry_uk, instantiate=carry_uk)

    carry_uk = cf.fixed_point(lambda uk: split_body(uk)[2], init_uk)
    cond_dce, cond_used = pe.dce_closed(cond_jaxpr, [True])
    if all(carry_uk) or any(
        u and uk for u, uk in zip(cond_used[cond_nconsts:], carry_uk)
    ):
        return record_all()
    known, _, _, num_res = split_body(carry_uk)
    n_known = len(known.out_avals) - num_res
    known, extra = pe.hoist_consts(
        pe.prune_outputs(known, [True] * n_known + [False] * num_res)
    )
    known_cond = pe.select_invars(
        cond_dce, [True] * cond_nconsts + [not uk for uk in carry_uk]
    )
    cc, bc, init = split_list(args, [cond_nconsts, body_nconsts])
    bc_k = [x for x, uk in zip(bc, bc_uk) if not uk]
    with set_current_trace(trace.parent):
        known_outs = while_p.bind(
            *cc,
            *extra,
            *bc_k,
            *(x for x, uk in zip(init, carry_uk) if not uk),
            body_jaxpr=known,
            body_nconsts=len(extra) + len(bc_k),
            cond_jaxpr=known_cond,
            cond_nconsts=cond_nconsts,
        )
    unknown_outs = record_all()
    return merge_lists(
        carry_uk, known_outs, [o for o, uk in zip(unknown_outs, carry_uk) if uk]
    )


def _while_transpose(cts, *args, **params):
    raise ValueError(
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop "
        "with dynamic start/stop values. Try using lax.scan, or using fori_loop with "
        "static start/stop."
    )


def _while_batch(
    axis_size, vals, dims, *, body_jaxpr, body_nconsts, cond_jaxpr, cond_nconsts
):
    cc, bc, init = split_list(vals, [cond_nconsts, body_nconsts])
    cc_dims, bc_dims, init_dims = split_list(dims, [cond_nconsts, body_nconsts])

    def carry_dims(carry_bat):
        return [0 if b else not_mapped for b in carry_bat]

    def pred_batched(carry_bat):
        return batching.batch_body(
            cond_jaxpr, axis_size, cc_dims + carry_dims(carry_bat)
        )[2][0]

    def step(carry_bat):
        if pred_batched(carry_bat):
            return [True] * len(carry_bat)
        return batching.batch_body(
            body_jaxpr, axis_size, bc_dims + carry_dims(carry_bat), carry_bat
        )[2]

    carry_bat = cf.fixed_point(step, [d is not not_mapped for d in init_dims])
    init = [
        batching.bdim_at_front(x, d, axis_size) if b else x
        for x, d, b in zip(init, init_dims, carry_bat)
    ]
    if pred_batched(carry_bat):
        outs = _while_with_batched_pred(
            axis_size, cc, cc_dims, bc, bc_dims, init, cond_jaxpr, body_jaxpr
        )
        return outs, [0] * len(outs)
    body, body_extra, _ = batching.batch_body(
        body_jaxpr, axis_size, bc_dims + carry_dims(carry_bat), carry_bat
    )
    cond, cond_extra, _ = batching.batch_body(
        cond_jaxpr, axis_size, cc_dims + carry_dims(carry_bat)
    )
    outs = while_p.bind(
        *cond_extra,
        *cc,
        *body_extra,
        *bc,
        *init,
        body_jaxpr=body,
        body_nconsts=len(body_extra) + len(bc),
        cond_jaxpr=cond,
        cond_nconsts=len(cond_extra) + len(cc),
    )
    return outs, carry_dims(carry_bat)


def _while_with_batched_pred(
    axis_size, cc, cc_dims, bc, bc_dims, init, cond_jaxpr, body_jaxpr
):
    """A while loop whose predicate differs across the batch. The loop carries one
    predicate per element and runs until none holds; each iteration is, per element,
    `cond(running, body, identity)` and then `running = cond(running, cond_fun, False)`.
    Batched, those conds select between both branches, which freezes finished
    elements; with effects they go through `_batched_cond_with_effects`, so callbacks
    only run for the elements still running. Without host calls the step selects
    directly: a `while` has no transpose, so the batched cond's guard for reverse mode
    (see `conditionals._cut_untaken`) would only cost time in every iteration."""
    from jaxlite.lax.reductions import reduce_or

    n_cc, n_bc, n = len(cc), len(bc), len(init)
    carry_avals = body_jaxpr.out_avals
    bc_avals = body_jaxpr.in_avals[:n_bc]
    carry_vars = [Var(a) for a in carry_avals]
    identity = pe.make_closed(
        [*(Var(a) for a in bc_avals), *carry_vars], carry_vars, []
    )
    never = trace_to_jaxpr(lambda *a: [np.bool_(False)], cond_jaxpr.in_avals)
    host = has_host_calls([cond_jaxpr, body_jaxpr])

    def elem_step(running, *args):
        cc_e, bc_e, c_e = split_list(args, [n_cc, n_bc])
        if not host:
            stepped = jaxpr_as_fun(body_jaxpr)(*bc_e, *c_e)
            new_c = [select_n(running, c, s) for c, s in zip(c_e, stepped)]
            (pred,) = jaxpr_as_fun(cond_jaxpr)(*cc_e, *new_c)
            return [bitwise_and(running, pred), *new_c]
        i = convert_element_type(running, np.int32)
        new_c = cond_p.bind(i, *bc_e, *c_e, branches=(identity, body_jaxpr))
        new_running = cond_p.bind(i, *cc_e, *new_c, branches=(never, cond_jaxpr))
        return [*new_running, *new_c]

    def new_body(*args):
        cc_, bc_, (running, *c) = split_list(args, [n_cc, n_bc])
        outs, dims = batching.vmap_flat(
            elem_step,
            axis_size,
            [running, *cc_, *bc_, *c],
            [0, *cc_dims, *bc_dims, *[0] * n],
        )
        return [batching.bdim_at_front(o, d, axis_size) for o, d in zip(outs, dims)]

    def new_cond(*args):
        return [reduce_or(args[n_cc], (0,))]

    cc_avals = [get_aval(x) for x in cc]
    running_aval = ShapedArray((axis_size,), np.bool_)
    init_avals = [get_aval(x) for x in init]
    body, body_extra = pe.hoist_consts(
        trace_to_jaxpr(
            new_body, [*cc_avals, *(get_aval(x) for x in bc), running_aval, *init_avals]
        )
    )
    cond, cond_extra = pe.hoist_consts(
        trace_to_jaxpr(new_cond, [*cc_avals, running_aval, *init_avals])
    )
    preds, pred_dims = batching.vmap_flat(
        jaxpr_as_fun(cond_jaxpr), axis_size, [*cc, *init], [*cc_dims, *[0] * n]
    )
    running = batching.bdim_at_front(preds[0], pred_dims[0], axis_size)
    outs = while_p.bind(
        *cond_extra,
        *cc,
        *body_extra,
        *cc,
        *bc,
        running,
        *init,
        body_jaxpr=body,
        body_nconsts=len(body_extra) + n_cc + n_bc,
        cond_jaxpr=cond,
        cond_nconsts=len(cond_extra) + n_cc,
    )
    return outs[1:]


def _while_dce(used_outs, eqn):
    """Drop carries that neither the predicate, a used output nor a needed carry reads
    (the used inputs are those of the returned equation, as for scan)."""
    params = eqn.params
    body_jaxpr, body_nconsts = params["body_jaxpr"], params["body_nconsts"]
    cond_jaxpr, cond_nconsts = params["cond_jaxpr"], params["cond_nconsts"]
    if not any(used_outs) and not eqn.effects:
        return [False] * len(eqn.invars), None
    cond_dce, cond_used = pe.dce_closed(cond_jaxpr, [True])

    def step(used_carry):
        return pe.dce_closed(body_jaxpr, used_carry)[1][body_nconsts:]

    used_carry = cf.fixed_point(
        step, [u or c for u, c in zip(used_outs, cond_used[cond_nconsts:])]
    )
    body_dce, body_used = pe.dce_closed(body_jaxpr, used_carry)
    used_cc, used_bc = cond_used[:cond_nconsts], body_used[:body_nconsts]
    body = pe.select_invars(body_dce, used_bc + used_carry)
    cond = pe.select_invars(cond_dce, used_cc + used_carry)
    keep = used_cc + used_bc + used_carry
    new_eqn = JaxprEqn(
        while_p,
        [x for x, k in zip(eqn.invars, keep) if k],
        dict(
            params,
            body_jaxpr=body,
            body_nconsts=sum(used_bc),
            cond_jaxpr=cond,
            cond_nconsts=sum(used_cc),
        ),
        [v for v, u in zip(eqn.outvars, used_carry) if u],
        join_effects(body.effects, cond.effects),
    )
    return [True] * len(new_eqn.invars), new_eqn


while_p = Primitive("while", multiple_results=True)
impl_rules[while_p] = _while_impl
abstract_eval_rules[while_p] = _while_abstract
lowering_rules[while_p] = while_lowering
native_rules[while_p] = "while"
ad.jvp_rules[while_p] = _while_jvp
ad.partial_eval_rules[while_p] = _while_partial_eval
ad.transpose_rules[while_p] = _while_transpose
batching.batch_rules[while_p] = _while_batch
physical_rules[while_p] = physical.with_physical_jaxprs(while_p)
dce_rules[while_p] = _while_dce


# ----------------------------------------------------------------------------------------
# fori_loop and map


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """`body_fun(i, val)` for `i` in `range(lower, upper)`. Static bounds make a `scan`
    (differentiable in reverse mode); traced bounds a `while_loop`."""
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    from jaxlite import dtypes

    lower_dtype, upper_dtype = dtypes.dtype(lower), dtypes.dtype(upper)
    dtype = lower_dtype if lower_dtype == upper_dtype else None
    if dtype is None and (
        np.issubdtype(lower_dtype, np.signedinteger)
        and np.issubdtype(upper_dtype, np.signedinteger)
    ):
        lower_weak, upper_weak = (
            dtypes.is_weakly_typed(lower),
            dtypes.is_weakly_typed(upper),
        )
        if lower_weak and not upper_weak:
            dtype = upper_dtype
        elif upper_weak and not lower_weak:
            dtype = lower_dtype
    if dtype is None:
        raise TypeError(
            "lower and upper arguments to fori_loop must have equal types, "
            f"got {lower_dtype.name} and {upper_dtype.name}"
        )
    if cf.is_concrete(lower) and cf.is_concrete(upper):
        lower_, upper_ = int(lower), int(upper)
        if config.disable_jit and upper_ <= lower_:
            return init_val  # scan in Python refuses zero steps (no output type)
        (_, result), _ = scan(
            cf.memoized_wrapper(_fori_scan_bodies, body_fun, _fori_scan_body),
            (lower_, init_val),
            None,
            length=max(upper_ - lower_, 0),
            unroll=False if unroll is None else unroll,
        )
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError(
            "Can only use `unroll` in `fori_loop` if the loop bounds are "
            "statically known."
        )
    if lower_dtype != dtype:
        lower = convert_element_type(lower, dtype)
    if upper_dtype != dtype:
        upper = convert_element_type(upper, dtype)
    body = cf.memoized_wrapper(_fori_while_bodies, body_fun, _fori_while_body)
    _, _, result = while_loop(_fori_cond, body, (lower, upper, init_val))
    return result


_fori_scan_bodies: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_fori_while_bodies: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_map_bodies: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _fori_scan_body(body_fun):
    def scanned_fun(loop_carry, _):
        i, x = loop_carry
        return (i + 1, body_fun(i, x)), None

    scanned_fun.__name__ = fun_name(body_fun, "scanned_fun")
    return scanned_fun


def _fori_cond(loop_carry):
    i, upper, _ = loop_carry
    return lt(i, upper)


def _fori_while_body(body_fun):
    def while_body_fun(loop_carry):
        i, upper, x = loop_carry
        return i + 1, upper, body_fun(i, x)

    return while_body_fun


def _map_body(f):
    def mapped(_, x):
        return (), f(x)

    return mapped


def map(f, xs, *, batch_size=None):  # noqa: A001  (JAX's name)
    """`f` applied to each slice of `xs` along its leading axis, results stacked.

    With `batch_size`, slices go through `f` under `vmap`, `batch_size` at a time (the
    remainder in one more vmapped call).
    """
    if batch_size is None:
        _, ys = scan(cf.memoized_wrapper(_map_bodies, f, _map_body), (), xs)
        return ys
    from jaxlite.api_vmap import vmap
    from jaxlite.lax.indexing import slice_in_dim
    from jaxlite.lax.structural import concatenate, reshape

    leaves = tree_util.tree_leaves(xs)
    if not leaves:
        return vmap(f)(xs)
    n = np.shape(leaves[0])[0]
    num_batches, rest = divmod(n, batch_size) if batch_size else (0, n)
    full = num_batches * batch_size

    def batched(x):
        x = slice_in_dim(cf.as_value(x), 0, full)
        return reshape(x, (num_batches, batch_size, *np.shape(x)[1:]))

    def unbatched(y):
        return reshape(y, (num_batches * batch_size, *np.shape(y)[2:]))

    ys = None
    if num_batches:
        _, ys = scan(lambda _, x: ((), vmap(f)(x)), (), tree_util.tree_map(batched, xs))
        ys = tree_util.tree_map(unbatched, ys)
    if rest:
        tail = vmap(f)(
            tree_util.tree_map(lambda x: slice_in_dim(cf.as_value(x), full, n), xs)
        )
        ys = (
            tail
            if ys is None
            else tree_util.tree_map(lambda a, b: concatenate([a, b], 0), ys, tail)
        )
    return ys


__all__ = ["fori_loop", "map", "scan", "scan_p", "while_loop", "while_p"]
