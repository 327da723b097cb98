"""Automatic differentiation: forward mode by JVP, reverse mode by JVP + partial
evaluation + transposition, as in JAX.

Forward mode. A `JVPTracer` carries a primal and a tangent. `JVPTrace.process_primitive`
applies the primitive's JVP rule *under the parent trace*, so nested differentiation works
and each trace only ever unpacks its own tracers (no perturbation confusion). A tangent
may be the symbolic `Zero`; rules skip work for it.

Reverse mode. `linearize` runs the JVP with the tangents as inputs of a fresh jaxpr trace
and a `LinearizeTrace` underneath the JVP trace that routes each primitive by data
dependence: an operation on known values (primals) runs in the enclosing trace right away,
an operation that touches a tangent is recorded into the linear jaxpr. That split is
partial evaluation; the known values the linear jaxpr reads are its residuals.
`backward_pass` then transposes the linear jaxpr: each linear equation's transpose rule
maps output cotangents to input cotangents, in reverse order.
"""

from __future__ import annotations

import threading

import numpy as np

from jaxlite import dtypes, tree_util
from jaxlite.core import (
    Array,
    ClosedJaxpr,
    Jaxpr,
    Literal,
    Primitive,
    ShapedArray,
    Trace,
    Tracer,
    abstract_eval_rules,
    current_trace,
    eval_jaxpr,
    float0_value,
    get_aval,
    impl_rules,
    jaxpr_as_fun,
    no_effects,
    set_current_trace,
)
from jaxlite.core_extension import ConventionTable
from jaxlite.interpreters import batching
from jaxlite.interpreters.partial_eval import (
    DynamicJaxprTrace,
    JaxprTracer,
    closure_call_primitives,
    convert_closure,
    hoist_consts,
    trace_to_jaxpr,
)
from jaxlite.state.types import discharge_hook, discharge_hooks
from jaxlite.util import safe_map, safe_zip

map, zip = safe_map, safe_zip

jvp_rules: dict = {}
transpose_rules: dict = {}
# Primitives whose JVP rule runs even when every tangent is zero: `new_ref`, so that a
# reference made under differentiation can be given differentiated values later.
always_jvp: set = set()
# partial_eval_rules[prim](trace, args, params) -> outputs: how a LinearizeTrace splits an
# equation whose operands are partly known and partly tangent (for scan, while, cond).
partial_eval_rules: dict = {}

# ----------------------------------------------------------------------------------------
# Symbolic zeros and tangent types


class Zero:
    """A tangent or cotangent known to be zero, carrying only its abstract value."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Zero({self.aval.str_short()})"

    @staticmethod
    def from_primal_value(x):
        return Zero(tangent_aval(get_aval(x)))


# As in JAX, a Zero is a pytree with no leaves (its aval is static): a function
# transformed inside a rule (vmap of a JVP rule that returns symbolic zeros) passes
# it through as structure rather than as a value.
tree_util.register_pytree_node(Zero, lambda z: ((), z.aval), lambda aval, _: Zero(aval))


def tangent_dtype(dtype):
    """Tangents of integer and boolean values have dtype float0, as in JAX."""
    if dtypes.issubdtype(dtype, np.inexact):
        return dtype
    return dtypes.float0


def tangent_aval(aval):
    """Tangents share the primal's shape, dtype and weak type (float0 for integers)."""
    dtype = tangent_dtype(aval.dtype)
    return ShapedArray(aval.shape, dtype, aval.weak_type and dtype != dtypes.float0)


def zeros_like_aval(aval):
    """Zeros of type `aval` (weak type included); staged under a jaxpr trace."""
    if aval.dtype == dtypes.float0:
        return float0_value(aval.shape)
    return full_like_aval(aval, 0)


def full_like_aval(aval, fill_value):
    """An array of type `aval` (weak type included) filled with `fill_value` (ones
    to seed a gradient); staged under a jaxpr trace."""
    scalar = Array(np.array(fill_value, aval.dtype), aval.weak_type)
    if not aval.shape:
        return scalar
    from jaxlite import lax  # lazy, as JAX: lax (above) builds on this module

    return lax.broadcast_in_dim(scalar, aval.shape, ())


def convert_to_aval(x, aval):
    """`x` with `aval`'s dtype and weak type (a `convert_element_type` equation
    unless it has them already)."""
    x_aval = get_aval(x)
    if x_aval.dtype == aval.dtype and x_aval.weak_type == aval.weak_type:
        return x
    from jaxlite import lax  # lazy, as JAX: lax (above) builds on this module

    return lax.convert_element_type_p.bind(
        x, new_dtype=aval.dtype, weak_type=aval.weak_type
    )


def reshape(x, shape):
    """`x` reshaped to `shape` (Jacobian blocks of a flat basis)."""
    from jaxlite import lax  # lazy, as JAX: lax (above) builds on this module

    return lax.reshape(x, tuple(shape))


def slice_in_dim(x, start, stop, axis):
    """`x[start:stop]` along `axis` (one input's or output's block of a Jacobian)."""
    from jaxlite import lax  # lazy, as JAX: lax (above) builds on this module

    return lax.slice_in_dim(x, start, stop, axis=axis)


def instantiate(t):
    return zeros_like_aval(t.aval) if type(t) is Zero else t


def add_tangents(x, y):
    if type(x) is Zero:
        return y
    if type(y) is Zero:
        return x
    return add_any_p.bind(x, y)


# add_any: tangent accumulation (JAX's `add_any`), linear in both arguments.


def _add_any_abstract(x, y):
    return [ShapedArray(x.shape, x.dtype, x.weak_type and y.weak_type)], no_effects


def _add_any_jvp(primals, tangents):
    return [add_any_p.bind(*primals)], [add_tangents(*tangents)]


def _add_any_transpose(ct, x, y):
    return [ct, ct]


def _add_any_batch(axis_size, vals, dims):
    x, y = (batching.bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims))
    return [add_any_p.bind(x, y)], [0]


add_any_p = Primitive("add_any")
impl_rules[add_any_p] = lambda x, y: [np.add(x, y)]
abstract_eval_rules[add_any_p] = _add_any_abstract
jvp_rules[add_any_p] = _add_any_jvp
transpose_rules[add_any_p] = _add_any_transpose
# Its lowering is registered by the backend (backend/__init__.py), a layer above.
batching.batch_rules[add_any_p] = _add_any_batch


# ----------------------------------------------------------------------------------------
# Forward mode


class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent")

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self):
        return get_aval(self.primal)

    def to_concrete_value(self):
        p = self.primal
        if type(p) is Array:
            return p._value
        if isinstance(p, Tracer):
            return p.to_concrete_value()
        return p


class JVPTrace(Trace):
    def __init__(self, parent):
        self.parent = parent

    def __repr__(self):
        return "JVPTrace"

    def to_primal_tangent(self, x):
        if isinstance(x, JVPTracer) and x._trace is self:
            return x.primal, x.tangent
        return x, Zero.from_primal_value(x)

    def process_primitive(self, prim, args, params):
        if prim in closure_call_primitives:
            args, params = convert_closure(args, params)
        primals, tangents = [], []
        for x in args:
            p, t = self.to_primal_tangent(x)
            primals.append(p)
            tangents.append(t)
        zero = all(type(t) is Zero for t in tangents)
        if not zero and prim in discharge_hooks:
            hook = discharge_hook(prim, primals)
            if hook is not None:  # a loop over references: run on their values
                return hook(args, params)
        with set_current_trace(self.parent):
            if zero and prim not in always_jvp:
                outs = prim.bind(*primals, **params)
                return outs if prim.multiple_results else [outs]
            rule = jvp_rules.get(prim)
            if rule is None:
                raise NotImplementedError(
                    f"Differentiation rule for '{prim}' not implemented: the primitive "
                    f"'{prim}' has no JVP rule, so jvp/grad cannot differentiate it. "
                    "Wrap the computation in jax.custom_jvp or jax.custom_vjp to supply one."
                )
            primal_outs, tangent_outs = rule(primals, tangents, **params)
        return [self.lift(p, t) for p, t in zip(primal_outs, tangent_outs)]

    def lift(self, primal, tangent):
        """A tracer carrying `tangent`, or `primal` itself when the tangent is zero:
        symbolically, or a float0 value (an integer's tangent, which a rule given in
        JAX's convention or a custom rule may materialise), as JAX's
        `maybe_jvp_tracer`. A primitive without a JVP rule may then still read it."""
        if type(tangent) is Zero or _is_float0(tangent):
            return primal
        return JVPTracer(self, primal, tangent)


def _is_float0(t):
    return getattr(t, "dtype", None) == dtypes.float0


def jvp_of_jaxpr_rule(primals, tangents, *, jaxpr, **params):
    """JVP rule for call-like primitives (`jit`): differentiate the body inline.

    Running the body under a nested JVP trace keeps linearize's split of known and
    tangent work exact (the body's primal work is not moved into the linear jaxpr).
    """
    return jvp_flat(jaxpr_as_fun(jaxpr), primals, tangents)


def jvp_flat(fun, primals, tangents):
    """Forward mode on flat lists: `fun(*primals) -> list`; returns (outs, out_tangents)."""
    trace = JVPTrace(current_trace())
    tracers = [trace.lift(p, t) for p, t in zip(primals, tangents)]
    with set_current_trace(trace):
        outs = fun(*tracers)
    primal_outs, tangent_outs = [], []
    for x in outs:
        p, t = trace.to_primal_tangent(x)
        primal_outs.append(p)
        tangent_outs.append(t)
    trace.is_live = False
    return primal_outs, tangent_outs


def jvp_jaxpr(closed, nonzeros, instantiate):
    """The JVP of a body, as a jaxpr.

    Inputs: the primals, then the tangents where `nonzeros` is True. Outputs: the primal
    outputs, then the nonzero tangents. An output tangent is nonzero when it depends on
    an input tangent, or when `instantiate` asks for it (zeros are then materialised).
    Returns `(jaxpr, consts, out_nonzeros)`: as in `hoist_consts`, the first invars of
    `jaxpr` stand for `consts`, values the JVP closes over (those of a `jit` or a
    custom JVP rule called in the body), to be passed as operands.
    """
    in_avals = closed.in_avals
    t_avals = [tangent_aval(a) for a, nz in zip(in_avals, nonzeros) if nz]
    n = len(in_avals)
    box = []

    def fun(*args):
        primals, nz_tangents = args[:n], iter(args[n:])
        tangents = [
            next(nz_tangents) if nz else Zero(tangent_aval(a))
            for a, nz in zip(in_avals, nonzeros)
        ]
        outs, out_tangents = jvp_flat(jaxpr_as_fun(closed), list(primals), tangents)
        out_nz, kept = [], []
        for o, t, inst in zip(outs, out_tangents, instantiate):
            if not dtypes.issubdtype(get_aval(o).dtype, np.inexact):
                out_nz.append(False)
                continue
            if type(t) is Zero and inst:
                t = zeros_like_aval(t.aval)
            out_nz.append(type(t) is not Zero)
            if type(t) is not Zero:
                kept.append(t)
        box.append(out_nz)
        return [*outs, *kept]

    jaxpr, consts = hoist_consts(trace_to_jaxpr(fun, [*in_avals, *t_avals]))
    return jaxpr, consts, box[0]


# ----------------------------------------------------------------------------------------
# Rule helpers


def defjvp(prim, *tangent_fns):
    """JVP rule from one function per operand: `fn(t, *primals, **params) -> tangent`."""

    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        out_t = Zero(tangent_aval(get_aval(out)))
        for fn, t in zip(tangent_fns, tangents):
            if fn is not None and type(t) is not Zero:
                out_t = add_tangents(out_t, fn(t, *primals, **params))
        return [out], [out_t]

    jvp_rules[prim] = rule


def defjvp_with_output(prim, *tangent_fns):
    """Like `defjvp` but each function also receives the primal output:
    `fn(t, out, *primals, **params)`."""

    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        out_t = Zero(tangent_aval(get_aval(out)))
        for fn, t in zip(tangent_fns, tangents):
            if fn is not None and type(t) is not Zero:
                out_t = add_tangents(out_t, fn(t, out, *primals, **params))
        return [out], [out_t]

    jvp_rules[prim] = rule


def deflinear(prim, transpose_rule):
    """A primitive linear in all its operands: its JVP applies it to the tangents."""

    def rule(primals, tangents, **params):
        outs = prim.bind(*primals, **params)
        tangents = [instantiate(t) for t in tangents]
        t_outs = prim.bind(*tangents, **params)
        if not prim.multiple_results:
            outs, t_outs = [outs], [t_outs]
        return outs, t_outs

    jvp_rules[prim] = rule
    transpose_rules[prim] = transpose_rule


def defbilinear(prim, lhs_rule, rhs_rule):
    """`prim(x, y)` linear in each argument separately (mul, dot_general)."""

    def jvp(primals, tangents, **params):
        x, y = primals
        tx, ty = tangents
        out = prim.bind(x, y, **params)
        out_t = Zero(tangent_aval(get_aval(out)))
        if type(tx) is not Zero:
            out_t = add_tangents(out_t, prim.bind(tx, y, **params))
        if type(ty) is not Zero:
            out_t = add_tangents(out_t, prim.bind(x, ty, **params))
        return [out], [out_t]

    def transpose(ct, x, y, **params):
        if is_undefined(x) and is_undefined(y):
            raise NotImplementedError(f"{prim} is not linear in both operands at once")
        if is_undefined(x):
            return [lhs_rule(ct, x, y, **params), None]
        return [None, rhs_rule(ct, x, y, **params)]

    jvp_rules[prim] = jvp
    transpose_rules[prim] = transpose


# ----------------------------------------------------------------------------------------
# Partial evaluation for linearize


class LinearizeTrace(Trace):
    """Routes each primitive: onto the linear jaxpr if it reads a tangent, else to the
    enclosing trace (so primal work happens now and its results become residuals)."""

    def __init__(self, parent, tangent_trace, residuals=None):
        self.parent = parent
        self.tangent_trace = tangent_trace
        # id -> concrete value computed on the known side (kept alive here), so that a
        # scalar residual becomes a constvar of the linear jaxpr, not a literal.
        self.residuals = residuals

    def __repr__(self):
        return "LinearizeTrace"

    def process_known(self, prim, args, params):
        outs = self.parent.process_primitive(prim, args, params)
        if self.residuals is not None:
            for o in outs:
                if type(o) is Array:
                    self.residuals[id(o)] = o
        return outs

    def is_unknown(self, x):
        return isinstance(x, JaxprTracer) and x._trace is self.tangent_trace

    @property
    def enclosing(self):
        # Tangents are tracers of the linear jaxpr's trace: a rule run under this
        # trace (a JVP rule calling `eval_shape` or `jit`) may close over them too.
        return (self.parent, self.tangent_trace)

    def process_primitive(self, prim, args, params):
        if prim in closure_call_primitives:
            args, params = convert_closure(args, params)
        unknown = [self.is_unknown(x) for x in args]
        if not any(unknown):
            return self.process_known(prim, args, params)
        rule = partial_eval_rules.get(prim)
        if rule is not None and not all(unknown):
            return rule(self, args, params)
        return self.tangent_trace.process_primitive(prim, args, params)

    @property
    def is_live(self):
        return self.tangent_trace.is_live


class _OrderedLinearizeTrace(LinearizeTrace):
    """A LinearizeTrace between two jaxpr traces that also lists the equations it
    records on either side, in program order."""

    def __init__(self, parent, tangent_trace, order):
        super().__init__(parent, tangent_trace)
        self.order = order

    def process_primitive(self, prim, args, params):
        n_known, n_unknown = len(self.parent.eqns), len(self.tangent_trace.eqns)
        outs = super().process_primitive(prim, args, params)
        self.order += self.parent.eqns[n_known:] + self.tangent_trace.eqns[n_unknown:]
        return outs


def partial_eval_jaxpr(closed, in_unknowns, instantiate=False, order=None):
    """Split `closed` into a known part and an unknown part.

    Returns `(known, unknown, out_unknowns, num_res)`: `known` maps the known inputs to
    the known outputs followed by `num_res` residuals; `unknown` maps the residuals
    followed by the unknown inputs to the unknown outputs. `instantiate` (a bool or one
    per output) forces outputs to be unknown. Effectful equations whose inputs are all
    known stay on the known side, so they run exactly once. A list passed as `order`
    receives the equations of both parts in program order.
    """
    known_trace = DynamicJaxprTrace()
    unknown_trace = DynamicJaxprTrace(parent=known_trace)  # residuals are known values
    if order is None:
        router = LinearizeTrace(known_trace, unknown_trace)
    else:
        router = _OrderedLinearizeTrace(known_trace, unknown_trace, order)
    args = [
        unknown_trace.new_arg(a) if u else known_trace.new_arg(a)
        for a, u in zip(closed.in_avals, in_unknowns)
    ]
    if isinstance(instantiate, bool):
        instantiate = [instantiate] * len(closed.jaxpr.outvars)
    try:
        with set_current_trace(router):
            outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
            out_unknowns = [router.is_unknown(o) for o in outs]
            for i, (o, force) in enumerate(zip(outs, instantiate)):
                if force and not out_unknowns[i]:
                    with set_current_trace(unknown_trace):
                        outs[i] = _forward_into(unknown_trace, o)
                    out_unknowns[i] = True
        unknown_part = unknown_trace.to_jaxpr(
            [o for o, u in zip(outs, out_unknowns) if u]
        )
        residuals = unknown_part.consts
        uj = unknown_part.jaxpr
        unknown = Jaxpr([], uj.constvars + uj.invars, uj.outvars, uj.eqns, uj.effects)
        known_outs = [o for o, u in zip(outs, out_unknowns) if not u]
        known = known_trace.to_jaxpr(known_outs + list(residuals))
    finally:
        known_trace.is_live = unknown_trace.is_live = False
    return known, ClosedJaxpr(unknown, []), out_unknowns, len(residuals)


def _forward_into(trace, value):
    """A tracer of `trace` equal to the known `value` (it becomes a residual)."""
    var = trace.to_atom(value)
    if type(var) is Literal:
        from jaxlite import lax  # lazy, as JAX: lax (above) builds on this module

        return lax.convert_element_type_p.bind(
            value, new_dtype=var.aval.dtype, weak_type=var.aval.weak_type
        )
    return JaxprTracer(trace, var)


def linearize_flat(fun, primals, literal_primals=None):
    """`(primal_outs, linear ClosedJaxpr from input tangents to output tangents)`.

    Output tangents that are symbolically zero appear as literals or zeros in the jaxpr.
    The linear jaxpr's constants are its residuals, as in JAX: first the primal inputs
    it reads (in input order), then the values computed by the primal pass, in order of
    first use. Scalars stay residuals too, except the primals flagged in
    `literal_primals` (those the user passed as Python scalars), which are literals.
    """
    parent = current_trace()
    tangent_trace = DynamicJaxprTrace()
    residuals = {}
    for i, p in enumerate(primals):
        if type(p) is Array and not (literal_primals and literal_primals[i]):
            residuals[id(p)] = p
    tangent_trace.residual_ids = residuals
    lin_trace = LinearizeTrace(parent, tangent_trace, residuals)
    tangents = []
    for p in primals:
        t_aval = tangent_aval(get_aval(p))
        t = tangent_trace.new_arg(t_aval)  # every primal has an input of the linear map
        tangents.append(Zero(t_aval) if t_aval.dtype == dtypes.float0 else t)
    jvp_trace = JVPTrace(lin_trace)
    tracers = [jvp_trace.lift(p, t) for p, t in zip(primals, tangents)]
    try:
        with set_current_trace(jvp_trace):
            outs = fun(*tracers)
        primal_outs, tangent_outs = [], []
        for x in outs:
            p, t = jvp_trace.to_primal_tangent(x)
            primal_outs.append(p)
            tangent_outs.append(t)
        with set_current_trace(tangent_trace):
            tangent_outs = [instantiate(t) for t in tangent_outs]
        linear = _inputs_first(tangent_trace.to_jaxpr(tangent_outs), primals)
    finally:
        tangent_trace.is_live = False
        jvp_trace.is_live = False
    return primal_outs, linear


def _inputs_first(closed, primals):
    """`closed` with the residuals that are primal inputs moved first, in input order."""
    j = closed.jaxpr
    position = {id(p): i for i, p in reversed(list(enumerate(primals)))}
    pairs = list(zip(j.constvars, closed.consts))
    inputs = sorted(
        (pair for pair in pairs if id(pair[1]) in position),
        key=lambda pair: position[id(pair[1])],
    )
    if not inputs:
        return closed
    rest = [pair for pair in pairs if id(pair[1]) not in position]
    constvars = [v for v, _ in inputs + rest]
    consts = [c for _, c in inputs + rest]
    return ClosedJaxpr(Jaxpr(constvars, j.invars, j.outvars, j.eqns, j.effects), consts)


# ----------------------------------------------------------------------------------------
# Transposition


class UndefinedPrimal:
    """Stands for a linear input of an equation being transposed."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined(x):
    return type(x) is UndefinedPrimal


class _BackwardState(threading.local):
    depth = 0  # backward passes running (a vjp inside one is part of a rule)


_backward = _BackwardState()

# How a vjp marks its linear map's tangents inside manual axes of a shard_map with
# check_vma: "vma" -> `mark(tangents, primals, kind, axes)`, registered by
# lax/parallel.py, where the collectives it is made of live.
vjp_boundary_rules: dict = {}


def backward_pass(jaxpr, consts, cts_out):
    """Cotangents of `jaxpr`'s inputs given cotangents of its outputs.

    `jaxpr` is linear in its invars; its constvars (residuals) are known. Equations that do
    not read a linear value are evaluated forward first; the rest are transposed.
    """
    _backward.depth += 1
    try:
        return _backward_pass(jaxpr, consts, cts_out)
    finally:
        _backward.depth -= 1


def _backward_pass(jaxpr, consts, cts_out):
    env = {}
    linear = set(jaxpr.invars)
    for v, c in zip(jaxpr.constvars, consts):
        env[v] = c

    def read(x):
        return x.val if type(x) is Literal else env[x]

    linear_eqns = []
    for eqn in jaxpr.eqns:
        if any(type(x) is not Literal and x in linear for x in eqn.invars):
            linear.update(eqn.outvars)
            linear_eqns.append(eqn)
        else:
            outs = eqn.primitive.bind(*[read(x) for x in eqn.invars], **eqn.params)
            if not eqn.primitive.multiple_results:
                outs = [outs]
            for v, val in zip(eqn.outvars, outs):
                env[v] = val

    ct_env = {}

    def write_ct(v, ct):
        if ct is None or type(ct) is Zero or type(v) is Literal or v not in linear:
            return
        prev = ct_env.get(v)
        ct_env[v] = ct if prev is None else add_any_p.bind(prev, ct)

    for v, ct in zip(jaxpr.outvars, cts_out):
        write_ct(v, ct)
    for eqn in reversed(linear_eqns):
        cts = [ct_env.pop(v, None) for v in eqn.outvars]
        if all(ct is None for ct in cts):
            continue
        cts = [Zero(v.aval) if ct is None else ct for v, ct in zip(eqn.outvars, cts)]
        args = [
            UndefinedPrimal(x.aval)
            if type(x) is not Literal and x in linear
            else read(x)
            for x in eqn.invars
        ]
        rule = transpose_rules.get(eqn.primitive)
        if rule is None:
            raise NotImplementedError(
                f"Transpose rule (for reverse-mode differentiation) for "
                f"'{eqn.primitive}' not implemented."
            )
        ct_arg = cts if eqn.primitive.multiple_results else cts[0]
        cts_in = rule(ct_arg, *args, **eqn.params)
        for x, ct in zip(eqn.invars, cts_in):
            if type(x) is not Literal:
                write_ct(x, ct)
    return [ct_env.get(v, Zero(v.aval)) for v in jaxpr.invars]


def transpose_jaxpr_call(cts, args, closed):
    """Transpose rule of a call-like primitive (jit, remat) with body `closed`: its
    known operands act as residuals, its UndefinedPrimal operands are the linear inputs."""
    j = closed.jaxpr
    linear = [is_undefined(a) for a in args]
    known_vars = [v for v, lin in zip(j.invars, linear) if not lin]
    linear_vars = [v for v, lin in zip(j.invars, linear) if lin]
    known_vals = [a for a in args if not is_undefined(a)]
    split = Jaxpr(j.constvars + known_vars, linear_vars, j.outvars, j.eqns, j.effects)
    cts_lin = iter(backward_pass(split, list(closed.consts) + known_vals, cts))
    return [next(cts_lin) if lin else None for lin in linear]


def vjp_flat(fun, primals, literal_primals=None):
    """`(primal_outs, vjp_fun)` where `vjp_fun(cts_out) -> cts_in` (flat lists).

    Inside manual axes of a shard_map with check_vma (`batching.vma_axes()`), the
    linear map's inputs and outputs are marked so that the cotangent of a value
    invariant over such an axis is one value, summed over its devices
    (`vma_boundary` in `lax/parallel.py`); not for a vjp that a rule runs within a
    backward pass (a transpose rule, a custom_vjp's bwd), whose cotangents stay
    partial sums there."""
    primal_outs, linear = linearize_flat(fun, primals, literal_primals)
    axes = tuple(sorted(batching.vma_axes(), key=str))
    if axes and not _backward.depth:
        linear = _mark_vma_boundary(linear, primals, primal_outs, axes)

    def vjp_fun(cts_out):
        return backward_pass(linear.jaxpr, linear.consts, cts_out)

    return primal_outs, vjp_fun, linear


def _mark_vma_boundary(linear, primals, primal_outs, axes):
    """`linear` with its tangents marked as those of `primals` where they enter and
    of `primal_outs` where they leave, for reverse mode over the check_vma manual
    axes `axes`: only this vjp transposes the marks (a derivative of its backward
    pass differentiates the transposed marks, linear maps of their own)."""
    vma_boundary = vjp_boundary_rules["vma"]

    def fun(*tangents):
        tangents = vma_boundary(tangents, primals, "in", axes)
        outs = eval_jaxpr(linear.jaxpr, linear.consts, *tangents)
        return vma_boundary(outs, primal_outs, "out", axes)

    marked = trace_to_jaxpr(fun, [v.aval for v in linear.jaxpr.invars])
    return _inputs_first(marked, primals)


# ----------------------------------------------------------------------------------------
# JAX's names and conventions (`jax.interpreters.ad`), for primitives defined outside
# jaxlite. A JVP rule in `primitive_jvps` returns `(primal_out, tangent_out)`, single
# values for a single-result primitive; a transpose rule in `primitive_transposes`
# returns one cotangent per operand (None or a `Zero` where there is none), or the
# class `Zero` itself for "none for any operand". Both tables are views of
# `jvp_rules` and `transpose_rules` (core_extension.ConventionTable). JAX's `deflinear`
# takes `transpose_rule(ct, **params)`; jaxlite's `deflinear` is JAX's `deflinear2`
# (`transpose_rule(ct, *operands, **params)`), kept under both names here.


def _jvp_from_jax(prim, rule):
    def jvp(primals, tangents, **params):
        out, out_t = rule(tuple(primals), tuple(tangents), **params)  # JAX's tuples
        if prim.multiple_results:
            return list(out), list(out_t)
        return [out], [out_t]

    return jvp


def _jvp_to_jax(prim, rule):
    def jvp(primals, tangents, **params):
        outs, outs_t = rule(list(primals), list(tangents), **params)
        if prim.multiple_results:
            return outs, outs_t
        return outs[0], outs_t[0]

    return jvp


def _transpose_from_jax(prim, rule):
    def transpose(ct, *args, **params):
        cts = rule(ct, *args, **params)
        if cts is Zero:
            return [None] * len(args)
        return list(cts)

    return transpose


def _transpose_to_jax(prim, rule):
    return rule  # the same convention


primitive_jvps = ConventionTable(jvp_rules, _jvp_from_jax, _jvp_to_jax)
primitive_transposes = ConventionTable(
    transpose_rules, _transpose_from_jax, _transpose_to_jax
)
is_undefined_primal = is_undefined
instantiate_zeros = instantiate
defjvp2 = defjvp_with_output
deflinear2 = deflinear
add_jaxvals_p = add_any_p


def add_jaxvals(x, y):
    return add_any_p.bind(x, y)


def get_primitive_transpose(prim):
    """`prim`'s transpose rule in JAX's convention."""
    try:
        return primitive_transposes[prim]
    except KeyError:
        raise NotImplementedError(
            f"Transpose rule (for reverse-mode differentiation) for '{prim}' not "
            f"implemented: register one with `ad.primitive_transposes[{prim}_p] = "
            "rule`."
        ) from None
