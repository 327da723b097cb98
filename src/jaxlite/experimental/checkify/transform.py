"""The `checkify` transformation: run a function's jaxpr with an Error threaded through.

`checkify(f)(*args)` traces `f` (closing over the arguments, as JAX does) and then
interprets the jaxpr equation by equation under the current trace, carrying an Error
value (`error.py`). Most equations are simply bound again. A `check` equation is
discharged: its failure is merged into the Error instead of raising. For the enabled
automatic checks, equations get a check added after them: NaN produced by a floating
point primitive, division by zero, out-of-bounds gather / dynamic slice / scatter
indices. Because the interpreter binds ordinary primitives on ordinary values, the
result is traceable: `jit(checkify(f))` compiles to one program whose Error leaves are
outputs, and `vmap(checkify(f))` returns batched Errors.

Equations with bodies (`jit`, `cond`, `while`, `scan`, `checkpoint`, `custom_jvp`,
`custom_vjp`) get their bodies checkified: each body becomes a jaxpr taking and
returning the Error leaves besides its own values. Loops and branches must return an
Error of the same structure as they receive, so a body is traced once to find the kinds
of error it adds, the incoming Error gets placeholders for them, and the body is traced
again. Bodies with nothing to check are bound unchanged.
"""

from __future__ import annotations

import functools

import numpy as np

from jaxlite import lax, tree_util
from jaxlite import numpy as jnp
from jaxlite.ad_checkpoint import remat_p
from jaxlite.api_util import trace_flat
from jaxlite.core import Literal, get_aval
from jaxlite.dispatch import jit_p
from jaxlite.experimental.checkify.error import (
    DivisionByZeroError,
    FailedCheckError,
    NaNError,
    OOBError,
    assert_func,
    init_error,
    merge_errors,
    with_metadata,
    with_placeholders,
)
from jaxlite.experimental.checkify.primitive import check_p
from jaxlite.interpreters import ad
from jaxlite.interpreters import partial_eval as pe
from jaxlite.interpreters.partial_eval import DebugInfo, trace_to_jaxpr
from jaxlite.lax import control_flow as cf
from jaxlite.lax import elementwise as ew
from jaxlite.lax import special as sp
from jaxlite.lax.conditionals import cond_p
from jaxlite.lax.convolution import conv_general_dilated_p
from jaxlite.lax.custom_derivatives import custom_jvp_call_p, custom_vjp_call_p
from jaxlite.lax.dot import dot_general_p
from jaxlite.lax.fft import fft_p
from jaxlite.lax.indexing import dynamic_slice_p, dynamic_update_slice_p, gather_p
from jaxlite.lax.linear_solve import linear_solve_p
from jaxlite.lax.loops import scan_p, while_p
from jaxlite.lax.parallel import psum_p
from jaxlite.lax.reductions import reduce_prod_p, reduce_sum_p
from jaxlite.lax.rng import rng_uniform_p
from jaxlite.lax.scatter import (
    scatter_add_p,
    scatter_max_p,
    scatter_min_p,
    scatter_mul_p,
    scatter_p,
)
from jaxlite.lax.sorting import cumlogsumexp_p, cummax_p, cummin_p, cumprod_p, cumsum_p
from jaxlite.lax.structural import pad_p
from jaxlite.lax.windowed import reduce_p, reduce_window_p, reduce_window_sum_p
from jaxlite.util import fun_name, safe_zip, split_list

zip = safe_zip

user_checks = frozenset({FailedCheckError})
nan_checks = frozenset({NaNError})
index_checks = frozenset({OOBError})
div_checks = frozenset({DivisionByZeroError})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = automatic_checks | user_checks

# checkify_rules[prim](error, enabled, *args, **params) -> (error, list of outputs)
checkify_rules: dict = {}


# ----------------------------------------------------------------------------------------
# The transformation


def checkify(f, errors=user_checks):
    """`f` returning `(error, out)`: its `check`s (and the automatic checks in
    `errors`: `nan_checks`, `div_checks`, `index_checks`, ...) functionalized into an
    `Error` value instead of raising. `error.get()` is the first failure's message."""
    enabled = frozenset(errors)

    @functools.wraps(f)
    def checked_fun(*args, **kwargs):
        closed, out_tree = trace_flat(
            lambda: f(*args, **kwargs),
            tree_util.tree_structure(()),
            [],
            DebugInfo(fun_name(f), "checkify"),
        )
        error, outs = checkify_jaxpr(closed, enabled, init_error, [])
        return error, tree_util.tree_unflatten(out_tree, outs)

    return checked_fun


def checkify_jaxpr(closed, enabled, error, args):
    """Interpret `closed` on `args` under the current trace, threading `error`."""
    env = {}

    def read(x):
        return x.val if type(x) is Literal else env[x]

    jaxpr = closed.jaxpr
    for v, val in zip(jaxpr.constvars, closed.consts):
        env[v] = val
    for v, val in zip(jaxpr.invars, args):
        env[v] = val
    for eqn in jaxpr.eqns:
        args_in = [read(x) for x in eqn.invars]
        rule = checkify_rules.get(eqn.primitive)
        if rule is None:
            outs = eqn.primitive.bind(*args_in, **eqn.params)
            if not eqn.primitive.multiple_results:
                outs = [outs]
        else:
            error, outs = rule(error, enabled, *args_in, **eqn.params)
        for v, val in zip(eqn.outvars, outs):
            env[v] = val
    return error, [read(v) for v in jaxpr.outvars]


def _step_of(closed, enabled):
    """The checkified body `closed` as a step `(error, args) -> (error, outs)`."""

    def step(error, args):
        return checkify_jaxpr(closed, enabled, error, args)

    return step


def _trace_checked(step, error, arg_avals, err_at=0):
    """Trace `step` to a ClosedJaxpr taking the Error leaves at input position
    `err_at` and returning them first. Returns it and the layout of its out Error."""
    err_leaves, layout = error._leaves(), error._layout()
    n = len(err_leaves)
    box = {}

    def fun(*flat):
        args = [*flat[:err_at], *flat[err_at + n :]]
        inner = layout.unflatten(flat[err_at : err_at + n])
        inner, outs = step(inner, args)
        box["layout"] = inner._layout()
        return [*inner._leaves(), *outs]

    avals = list(arg_avals)
    avals[err_at:err_at] = [get_aval(x) for x in err_leaves]
    closed = trace_to_jaxpr(fun, avals, DebugInfo("checkified body", "checkify"))
    return closed, box["layout"]


def _trace_body(step, error, arg_avals, err_at=0):
    """`_trace_checked` for a loop or branch body, whose jaxpr has no constvars:
    `(jaxpr, consts to pass as its leading operands, out layout)`."""
    closed, layout = _trace_checked(step, error, arg_avals, err_at)
    return (*pe.hoist_consts(closed), layout)


def _prepare(trace_layouts, error):
    """Give `error` placeholders for every kind of error the bodies may add.
    `trace_layouts(error)` traces the bodies and returns their out layouts."""
    effects = set()
    for layout in trace_layouts(error):
        effects.update(layout.effects)
    return with_placeholders(error, effects)


def _out_error(layout, leaves, *metadatas):
    error = layout.unflatten(leaves)
    for meta in metadatas:
        error = with_metadata(error, meta)
    return error


# ----------------------------------------------------------------------------------------
# Which bodies need checkifying

_nan_prims: set = set()
_index_prims: set = set()


def _needs_checkify(jaxpr, enabled):
    """Whether interpreting `jaxpr` may change anything: it has a `check` equation or
    a primitive with an enabled automatic check, here or in a body."""
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    for eqn in jaxpr.eqns:
        prim = eqn.primitive
        if prim is check_p:
            return True
        if NaNError in enabled and prim in _nan_prims:
            return True
        if DivisionByZeroError in enabled and prim is ew.div_p:
            return True
        if OOBError in enabled and prim in _index_prims:
            return True
        for value in eqn.params.values():
            values = value if isinstance(value, tuple) else (value,)
            for v in values:
                if hasattr(v, "eqns") and _needs_checkify(v, enabled):
                    return True
    return False


# ----------------------------------------------------------------------------------------
# check: discharge


def _check_rule(error, enabled, *leaves, debug, err_tree):
    return merge_errors(error, err_tree.unflatten(leaves), enabled), []


checkify_rules[check_p] = _check_rule


# ----------------------------------------------------------------------------------------
# NaN and division checks


def _check_nans(name, error, enabled, outs):
    if NaNError not in enabled:
        return error
    floats = [o for o in outs if jnp.issubdtype(get_aval(o).dtype, np.inexact)]
    if not floats:
        return error
    any_nan = jnp.any(jnp.isnan(floats[0]))
    for o in floats[1:]:
        any_nan = jnp.logical_or(any_nan, jnp.any(jnp.isnan(o)))
    return assert_func(error, any_nan, NaNError(None, name))


def _nan_rule(prim):
    def rule(error, enabled, *args, **params):
        outs = prim.bind(*args, **params)
        outs = outs if prim.multiple_results else [outs]
        return _check_nans(prim.name, error, enabled, outs), outs

    return rule


def _div_rule(error, enabled, x, y):
    if DivisionByZeroError in enabled:
        any_zero = jnp.any(jnp.equal(y, 0))
        error = assert_func(error, any_zero, DivisionByZeroError(None))
    out = ew.div_p.bind(x, y)
    return _check_nans(ew.div_p.name, error, enabled, [out]), [out]


_NAN_PRIMS = [
    *(
        getattr(ew, f"{name}_p")
        for name in (
            "acos acosh add asin asinh atan2 atan atanh cbrt cos cosh exp expm1 "
            "integer_pow log1p log logistic mul pow rem rsqrt sin sinh sqrt sub tan "
            "tanh"
        ).split()
    ),
    *(
        getattr(sp, f"{name}_p")
        for name in (
            "bessel_i0e bessel_i1e digamma erf_inv erf erfc igamma_grad_a igamma "
            "igammac lgamma regularized_incomplete_beta"
        ).split()
    ),
    conv_general_dilated_p,
    cumlogsumexp_p,
    cummax_p,
    cummin_p,
    cumprod_p,
    cumsum_p,
    dot_general_p,
    fft_p,
    linear_solve_p,
    pad_p,
    psum_p,
    reduce_p,
    reduce_prod_p,
    reduce_sum_p,
    reduce_window_p,
    reduce_window_sum_p,
    rng_uniform_p,
]
for _prim in _NAN_PRIMS:
    checkify_rules[_prim] = _nan_rule(_prim)
_nan_prims.update(_NAN_PRIMS, [ew.div_p])
checkify_rules[ew.div_p] = _div_rule


# ----------------------------------------------------------------------------------------
# Index checks


def _oob_payload(oob, indices, dims_map, operand_shape):
    """int32[3]: the first out-of-bounds index (in the order of `indices`, whose last
    axis holds index vectors), the operand axis it indexes and that axis's size."""
    flat = jnp.argmax(jnp.reshape(oob, (-1,)))
    index = _pick(jnp.reshape(indices, (-1,)), flat)
    dims = np.asarray(dims_map, np.int32)
    sizes = np.asarray(operand_shape, np.int32)[dims]
    if len(dims) == 1:
        axis, size = dims[0], sizes[0]
    else:
        pos = lax.rem(flat, np.int32(len(dims)))
        axis, size = _pick(jnp.asarray(dims), pos), _pick(jnp.asarray(sizes), pos)
    return jnp.stack([jnp.asarray(v).astype(np.int32) for v in (index, axis, size)])


def _pick(vector, i):
    return lax.dynamic_index_in_dim(
        vector, i, keepdims=False, allow_negative_indices=False
    )


def _add_oob(error, prim_name, oob, indices, dims_map, operand_shape):
    payload = _oob_payload(oob, indices, dims_map, operand_shape)
    failure = OOBError(None, prim_name, operand_shape, payload)
    return assert_func(error, jnp.any(oob), failure)


def _dynamic_slice_rule(error, enabled, x, *starts, slice_sizes):
    out = dynamic_slice_p.bind(x, *starts, slice_sizes=slice_sizes)
    if OOBError in enabled and starts:
        starts_v = jnp.stack([jnp.asarray(s) for s in starts])
        limit = np.asarray(x.shape) - np.asarray(slice_sizes)
        oob = (starts_v < 0) | (starts_v > limit.astype(starts_v.dtype))
        dims = range(len(starts))
        error = _add_oob(error, "dynamic_slice", oob, starts_v, dims, x.shape)
    return error, [out]


def _dynamic_update_slice_rule(error, enabled, x, update, *starts):
    out = dynamic_update_slice_p.bind(x, update, *starts)
    if OOBError in enabled and starts:
        starts_v = jnp.stack([jnp.asarray(s) for s in starts])
        limit = np.asarray(x.shape) - np.asarray(update.shape)
        oob = (starts_v < 0) | (starts_v > limit.astype(starts_v.dtype))
        dims = range(len(starts))
        error = _add_oob(error, "dynamic_update_slice", oob, starts_v, dims, x.shape)
    return error, [out]


def _gather_rule(error, enabled, x, indices, **params):
    out = gather_p.bind(x, indices, **params)
    dnums = params["dimension_numbers"]
    if OOBError in enabled and dnums.start_index_map and np.size(indices):
        starts = list(dnums.start_index_map)
        limit = np.asarray(x.shape)[starts] - np.asarray(params["slice_sizes"])[starts]
        oob = (indices < 0) | (indices > limit.astype(indices.dtype))
        error = _add_oob(error, "gather", oob, indices, starts, x.shape)
    return error, [out]


def _scatter_rule(prim):
    def rule(error, enabled, x, indices, updates, **params):
        out = prim.bind(x, indices, updates, **params)
        if OOBError not in enabled:
            return error, [out]
        dnums = params["dimension_numbers"]
        dims = list(dnums.scatter_dims_to_operand_dims)
        if dims and np.size(indices):
            window = iter(dnums.update_window_dims)
            sizes = [
                1
                if i in dnums.inserted_window_dims or i in dnums.operand_batching_dims
                else updates.shape[next(window)]
                for i in range(x.ndim)
            ]
            limit = np.asarray(x.shape)[dims] - np.asarray(sizes)[dims]
            limit = np.minimum(limit, np.iinfo(indices.dtype).max)
            oob = (indices < 0) | (indices > limit.astype(indices.dtype))
            error = _add_oob(error, prim.name, oob, indices, dims, x.shape)
        return _check_nans(prim.name, error, enabled, [out]), [out]

    return rule


checkify_rules[dynamic_slice_p] = _dynamic_slice_rule
checkify_rules[dynamic_update_slice_p] = _dynamic_update_slice_rule
checkify_rules[gather_p] = _gather_rule
_index_prims.update([dynamic_slice_p, dynamic_update_slice_p, gather_p])
for _prim in (scatter_p, scatter_add_p, scatter_mul_p, scatter_min_p, scatter_max_p):
    checkify_rules[_prim] = _scatter_rule(_prim)
    _index_prims.add(_prim)


# ----------------------------------------------------------------------------------------
# Calls: jit and checkpoint


def _call_rule(prim):
    def rule(error, enabled, *args, jaxpr, **params):
        if not _needs_checkify(jaxpr, enabled):
            return error, prim.bind(*args, jaxpr=jaxpr, **params)
        avals = [get_aval(x) for x in args]
        closed, layout = _trace_checked(_step_of(jaxpr, enabled), error, avals)
        outs = prim.bind(*error._leaves(), *args, jaxpr=closed, **params)
        n = layout.num_leaves
        return layout.unflatten(outs[:n]), outs[n:]

    return rule


checkify_rules[jit_p] = _call_rule(jit_p)
checkify_rules[remat_p] = _call_rule(remat_p)


# ----------------------------------------------------------------------------------------
# cond


def _cond_rule(error, enabled, index, *ops, branches):
    if not any(_needs_checkify(b, enabled) for b in branches):
        return error, cond_p.bind(index, *ops, branches=branches)
    avals = [get_aval(x) for x in ops]

    def trace_all(err):
        return [_trace_body(_step_of(b, enabled), err, avals) for b in branches]

    error = _prepare(lambda e: [t[2] for t in trace_all(e)], error)
    traced = trace_all(error)
    jaxprs, consts = pe.merge_branch_consts(
        [t[0] for t in traced], [t[1] for t in traced]
    )
    leaves = error._leaves()
    outs = cond_p.bind(index, *consts, *leaves, *ops, branches=tuple(jaxprs))
    n = len(leaves)
    metas = [dict(t[2].metadata) for t in traced]
    return _out_error(traced[0][2], outs[:n], *metas), outs[n:]


checkify_rules[cond_p] = _cond_rule


# ----------------------------------------------------------------------------------------
# scan


def _scan_rule(error, enabled, *args, jaxpr, length, num_carry, num_consts, **params):
    if not _needs_checkify(jaxpr, enabled):
        return error, scan_p.bind(
            *args,
            jaxpr=jaxpr,
            length=length,
            num_carry=num_carry,
            num_consts=num_consts,
            **params,
        )
    consts, carry, xs = split_list(args, [num_consts, num_carry])
    avals = [get_aval(x) for x in (*consts, *carry)]
    avals += [cf.slice_aval(get_aval(x)) for x in xs]
    step = _step_of(jaxpr, enabled)
    error = _prepare(lambda e: [_trace_body(step, e, avals, num_consts)[2]], error)
    body, hoisted, layout = _trace_body(step, error, avals, num_consts)
    leaves = error._leaves()
    outs = scan_p.bind(
        *hoisted,
        *consts,
        *leaves,
        *carry,
        *xs,
        jaxpr=body,
        length=length,
        num_carry=len(leaves) + num_carry,
        num_consts=len(hoisted) + num_consts,
        **params,
    )
    n = len(leaves)
    return layout.unflatten(outs[:n]), outs[n:]


checkify_rules[scan_p] = _scan_rule


# ----------------------------------------------------------------------------------------
# while: the predicate is checked on the initial carry, then after every body step


def _while_rule(
    error, enabled, *args, body_jaxpr, body_nconsts, cond_jaxpr, cond_nconsts
):
    params = dict(
        body_jaxpr=body_jaxpr,
        body_nconsts=body_nconsts,
        cond_jaxpr=cond_jaxpr,
        cond_nconsts=cond_nconsts,
    )
    if not (
        _needs_checkify(body_jaxpr, enabled) or _needs_checkify(cond_jaxpr, enabled)
    ):
        return error, while_p.bind(*args, **params)
    cc, bc, carry = split_list(args, [cond_nconsts, body_nconsts])
    error, _ = checkify_jaxpr(cond_jaxpr, enabled, error, [*cc, *carry])

    def body_then_cond(err, vals):
        cc_, bc_, carry_ = split_list(vals, [cond_nconsts, body_nconsts])
        err, new_carry = checkify_jaxpr(body_jaxpr, enabled, err, [*bc_, *carry_])
        err, _ = checkify_jaxpr(cond_jaxpr, enabled, err, [*cc_, *new_carry])
        return err, new_carry

    def cond_only(err, vals):
        return err, checkify_jaxpr(cond_jaxpr, enabled, err, vals)[1]

    b_avals = [get_aval(x) for x in (*cc, *bc, *carry)]
    nb = cond_nconsts + body_nconsts
    error = _prepare(lambda e: [_trace_body(body_then_cond, e, b_avals, nb)[2]], error)
    body, b_hoisted, layout = _trace_body(body_then_cond, error, b_avals, nb)
    c_avals = [get_aval(x) for x in (*cc, *carry)]
    cond, c_hoisted, _ = _trace_body(cond_only, error, c_avals, cond_nconsts)
    n = len(error._leaves())
    cond = pe.prune_outputs(cond, [False] * n + [True])
    outs = while_p.bind(
        *c_hoisted,
        *cc,
        *b_hoisted,
        *cc,
        *bc,
        *error._leaves(),
        *carry,
        body_jaxpr=body,
        body_nconsts=len(b_hoisted) + nb,
        cond_jaxpr=cond,
        cond_nconsts=len(c_hoisted) + cond_nconsts,
    )
    return layout.unflatten(outs[:n]), outs[n:]


checkify_rules[while_p] = _while_rule


# ----------------------------------------------------------------------------------------
# custom_jvp and custom_vjp: the function is checkified; the derivative rules are not
# (as in JAX), they pass the incoming Error through.


def _custom_prepare(error, enabled, call_jaxpr, args):
    avals = [get_aval(x) for x in args]
    step = _step_of(call_jaxpr, enabled)
    error = _prepare(lambda e: [_trace_checked(step, e, avals)[1]], error)
    leaves, layout = error._leaves(), error._layout()
    metadata = dict(layout.metadata)

    def fun(*flat):
        inner = layout.unflatten(flat[: len(leaves)])
        inner, outs = checkify_jaxpr(call_jaxpr, enabled, inner, flat[len(leaves) :])
        metadata.update(inner._metadata)
        return [*inner._leaves(), *outs]

    return leaves, layout, metadata, fun


def _custom_jvp_rule(
    error, enabled, *args, name, call_jaxpr, jvp, num_consts=0, symbolic_zeros=False
):
    if not _needs_checkify(call_jaxpr, enabled):
        return error, custom_jvp_call_p.bind(
            *args,
            name=name,
            call_jaxpr=call_jaxpr,
            jvp=jvp,
            num_consts=num_consts,
            symbolic_zeros=symbolic_zeros,
        )
    leaves, layout, metadata, fun = _custom_prepare(error, enabled, call_jaxpr, args)
    n, skip = len(leaves), len(leaves) + num_consts
    fun.__name__ = name

    def jvp_rule(primals, tangents):
        outs, out_tangents = jvp(list(primals[skip:]), list(tangents[skip:]))
        zeros = [ad.Zero(ad.tangent_aval(get_aval(p))) for p in primals[:n]]
        return [*primals[:n], *outs], [*zeros, *out_tangents]

    outs = custom_jvp_call_p.bind(
        *leaves, *args, name=name, fun=fun, jvp=jvp_rule, symbolic_zeros=symbolic_zeros
    )
    return _out_error(layout, outs[:n], metadata), outs[n:]


def _custom_vjp_rule(
    error,
    enabled,
    *args,
    name,
    call_jaxpr,
    fwd,
    bwd,
    num_consts=0,
    symbolic_zeros=False,
):
    if not _needs_checkify(call_jaxpr, enabled):
        return error, custom_vjp_call_p.bind(
            *args,
            name=name,
            call_jaxpr=call_jaxpr,
            fwd=fwd,
            bwd=bwd,
            num_consts=num_consts,
            symbolic_zeros=symbolic_zeros,
        )
    leaves, layout, metadata, fun = _custom_prepare(error, enabled, call_jaxpr, args)
    n, skip = len(leaves), len(leaves) + num_consts
    fun.__name__ = name

    def fwd_rule(perturbed, *flat):
        outs, residuals = fwd(perturbed[skip:], *flat[skip:])
        return [*flat[:n], *outs], residuals

    def bwd_rule(residuals, cts):
        return [None] * skip + list(bwd(residuals, cts[n:]))

    fwd_rule.__name__ = fun_name(fwd, "fwd")
    bwd_rule.__name__ = fun_name(bwd, "bwd")
    outs = custom_vjp_call_p.bind(
        *leaves,
        *args,
        name=name,
        fun=fun,
        fwd=fwd_rule,
        bwd=bwd_rule,
        symbolic_zeros=symbolic_zeros,
    )
    return _out_error(layout, outs[:n], metadata), outs[n:]


checkify_rules[custom_jvp_call_p] = _custom_jvp_rule
checkify_rules[custom_vjp_call_p] = _custom_vjp_rule
