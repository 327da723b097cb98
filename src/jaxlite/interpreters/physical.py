"""Keys as their data: jaxprs over extended dtypes become jaxprs over stored arrays.

A typed PRNG key array of shape `s` (dtype `key<fry>`, an extended dtype with data
rules) is stored as a uint32 array of shape `(*s, 2)`: `core.physical_aval`. Tracing,
autodiff and batching work on the logical avals, so a jaxpr may hold variables of
dtype `key<fry>`; backends know only NumPy dtypes. `physicalize` rewrites such a jaxpr
before a backend compiles it, as JAX's lowering does: each equation that takes or
gives keys (or holds a sub-jaxpr that does) runs its primitive's physical rule
(`core.physical_rules`) on the stored arrays while the new jaxpr is traced; every
other equation is bound unchanged. The eval trace runs the same rules for eager
operations on keys (`core._process_extended`).

The rules that recur have one helper each here:

- `by_elements(prim)`: a structural primitive (reshape, gather, select_n, ...) on
  keys is the same primitive on their data, mapped over the element axis at the end:
  the primitive's own batching rule with that axis as the batch dimension.
- `with_physical_jaxprs(prim)`: a primitive holding sub-jaxprs (jit, scan, while,
  cond) is bound again with its sub-jaxprs physicalized and its operands' data.
- `on_data(prim)`: host callbacks are given the keys' data, as in JAX.
- `inline_call(param)`: a call of a sub-jaxpr (remat, closed_call, custom_jvp_call,
  ...) runs its sub-jaxpr on the data. Evaluation is below every transformation, so
  nothing is lost by inlining. A call-like equation whose primitive has no rule (its
  sub-jaxpr takes exactly the equation's operands and gives its outputs) is inlined
  the same way.
"""

from __future__ import annotations

from jaxlite import source_info
from jaxlite.core import (
    ClosedJaxpr,
    Jaxpr,
    eval_jaxpr,
    has_data,
    no_physical_rule_error,
    physical_aval,
    physical_rules,
    physical_value,
    subjaxprs,
)
from jaxlite.interpreters import batching
from jaxlite.interpreters.partial_eval import trace_to_jaxpr
from jaxlite.util import safe_map, safe_zip

map, zip = safe_map, safe_zip


def has_extended(jaxpr) -> bool:
    """Whether `jaxpr` (or a jaxpr inside it) has a variable of an extended dtype
    with data (keys)."""
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    if any(has_data(v.aval.dtype) for v in (*jaxpr.constvars, *jaxpr.invars)):
        return True
    return any(_eqn_has_extended(e) for e in jaxpr.eqns)


def _eqn_has_extended(eqn):
    if any(has_data(v.aval.dtype) for v in eqn.outvars):
        return True
    if any(has_data(x.aval.dtype) for x in eqn.invars):
        return True
    return any(has_extended(j) for j in subjaxprs(eqn.params))


def physicalize(closed: ClosedJaxpr) -> ClosedJaxpr:
    """`closed` computing on stored arrays: keys in, out and inside become their
    uint32 data (`closed` itself when it has none)."""
    # A rule may stage primitives over keys again (a jitted function that wraps the
    # data it is given as keys, as `random_gamma`'s does): rewrite until none is left.
    while has_extended(closed):
        jaxpr = closed.jaxpr
        consts = [
            physical_value(c, v.aval) for c, v in zip(closed.consts, jaxpr.constvars)
        ]
        in_avals = [physical_aval(v.aval) for v in jaxpr.invars]
        closed = trace_to_jaxpr(
            lambda *args, j=jaxpr, c=consts: eval_physical(j, c, args), in_avals
        )
    return closed


def _physical_jaxpr(jaxpr):
    if isinstance(jaxpr, ClosedJaxpr):
        return physicalize(jaxpr)
    # A bare Jaxpr's constvars are operands its equation passes (linear_solve's
    # const_lengths): rewritten as leading inputs, then made constvars again.
    n = len(jaxpr.constvars)
    opened = Jaxpr([], [*jaxpr.constvars, *jaxpr.invars], jaxpr.outvars, jaxpr.eqns)
    new = physicalize(ClosedJaxpr(opened, []))
    if new.consts:  # a bare Jaxpr has nowhere to keep constants
        raise NotImplementedError(
            "physicalize: a bare Jaxpr parameter over keys gained constants"
        )
    j = new.jaxpr
    return Jaxpr(j.invars[:n], j.invars[n:], j.outvars, j.eqns, j.effects)


def eval_physical(jaxpr: Jaxpr, consts, args):
    """Evaluate `jaxpr` on stored arrays (`consts` and `args` are the data of keys)
    under the current trace: equations over keys run their physical rules."""
    return eval_jaxpr(jaxpr, consts, *args, eqn_rule=_physical_eqn)


def _physical_eqn(eqn, invals):
    """`eval_jaxpr`'s rule for an equation over keys: its physical rule's outputs
    (None for any other equation, which is bound unchanged)."""
    if not _eqn_has_extended(eqn):
        return None
    with source_info.override(eqn.source_info):
        return _apply_physical(eqn, invals)


def _apply_physical(eqn, invals):
    avals_in = [x.aval for x in eqn.invars]
    avals_out = [v.aval for v in eqn.outvars]
    rule = physical_rules.get(eqn.primitive)
    if rule is None:
        call = _call_param(eqn)
        if call is not None:
            return _inline(eqn.params[call], invals)
        if any(has_data(a.dtype) for a in avals_in + avals_out):
            raise no_physical_rule_error(eqn.primitive, avals_in + avals_out)
        # Keys only inside its sub-jaxprs (a linear_solve whose matvec draws keys):
        # the equation itself with those rewritten.
        rule = with_physical_jaxprs(eqn.primitive)
    return rule(avals_in, avals_out, *invals, **eqn.params)


def _call_param(eqn):
    """The parameter holding the sub-jaxpr of a call-like equation (the sub-jaxpr
    takes exactly the operands and gives the outputs), else None."""
    found = None
    for name, v in eqn.params.items():
        if not isinstance(v, (Jaxpr, ClosedJaxpr)):
            continue
        j = v.jaxpr if isinstance(v, ClosedJaxpr) else v
        ins = [x.aval for x in j.invars]
        outs = [x.aval for x in j.outvars]
        if ins == [x.aval for x in eqn.invars] and outs == [
            x.aval for x in eqn.outvars
        ]:
            if found is not None:
                return None
            found = name
    return found


def _inline(jaxpr, invals):
    if isinstance(jaxpr, ClosedJaxpr):
        consts = [
            physical_value(c, v.aval)
            for c, v in zip(jaxpr.consts, jaxpr.jaxpr.constvars)
        ]
        return eval_physical(jaxpr.jaxpr, consts, invals)
    return eval_physical(jaxpr, [], invals)


# ----------------------------------------------------------------------------------------
# The recurring physical rules


def by_elements(prim):
    """The physical rule of a structural primitive: itself on the stored arrays,
    mapped over the element axis (last) of every operand of an extended dtype, by the
    primitive's batching rule; outputs of an extended dtype keep that axis last."""

    def rule(avals_in, avals_out, *args, **params):
        vals, dims, size = [], [], None
        for x, aval in zip(args, avals_in):
            vals.append(x)
            if has_data(aval.dtype):
                size = _element_size(aval)
                dims.append(aval.ndim)
            else:
                dims.append(batching.not_mapped)
        outs, out_dims = batching.batch_rules[prim](size, vals, dims, **params)
        return [
            _element_axis_last(o, d, a, size)
            for o, d, a in zip(list(outs), list(out_dims), avals_out)
        ]

    return rule


def _element_size(aval):
    shape, _ = aval.dtype._rules.physical_element_aval(aval.dtype)
    if len(shape) != 1:
        raise NotImplementedError(
            f"{aval.dtype}: structural operations support elements of one axis, "
            f"not of shape {shape}"
        )
    return shape[0]


def _element_axis_last(x, bdim, aval, size):
    if not has_data(aval.dtype):
        return x
    if bdim is batching.not_mapped:
        return batching.broadcast(x, size, aval.ndim)
    return batching.moveaxis(x, bdim, aval.ndim)


def with_physical_jaxprs(prim):
    """The physical rule of a primitive holding sub-jaxprs (jit, scan, while,
    cond): bound again with each sub-jaxpr physicalized."""

    def rule(avals_in, avals_out, *args, **params):
        new = {k: _physical_param(v) for k, v in params.items()}
        outs = prim.bind(*args, **new)
        return outs if prim.multiple_results else [outs]

    return rule


def _physical_param(v):
    if isinstance(v, (Jaxpr, ClosedJaxpr)):
        return _physical_jaxpr(v)
    if isinstance(v, tuple) and any(isinstance(x, (Jaxpr, ClosedJaxpr)) for x in v):
        items = [_physical_param(x) for x in v]
        return type(v)(*items) if hasattr(v, "_fields") else tuple(items)
    return v


def on_data(prim):
    """The physical rule of a primitive that takes keys as the data it is given (a
    host callback receives their uint32 data, as JAX's lowering passes it): bound
    again on the stored arrays."""

    def rule(avals_in, avals_out, *args, **params):
        if any(has_data(a.dtype) for a in avals_out):
            raise no_physical_rule_error(prim, avals_out)
        outs = prim.bind(*args, **params)
        return outs if prim.multiple_results else [outs]

    return rule


def inline_call(param):
    """The physical rule of a call of the sub-jaxpr `params[param]` on the
    operands: the sub-jaxpr evaluated on the stored arrays."""

    def rule(avals_in, avals_out, *args, **params):
        return _inline(params[param], args)

    return rule
