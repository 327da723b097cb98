"""Tracing Python functions to jaxprs.

`DynamicJaxprTrace` records every primitive bound while it is current as a `JaxprEqn`,
after asking the primitive's abstract evaluation rule for the output types and effects.
Values that are not its own tracers become constants: scalars are written inline as
`Literal`s, arrays (and tracers of enclosing traces) become constvars, the "closed-over"
values of the resulting `ClosedJaxpr`.

When tracing ends the trace is marked dead; a tracer of a dead trace that is used later
has leaked out of its transformation and raises `UnexpectedTracerError`, and so does a
live tracer of a transformation running *inside* this trace (only tracers of the traces
it was opened under may become its constants).

Tracer constants of a staged call (a `jit` or `checkpoint` closing over an enclosing
transformation's values) are made explicit operands by `convert_closure`, so the
enclosing transformation sees them.

The last section holds small operations on whole jaxprs (constants as operands, pruning
outputs and inputs, reordering them), which control-flow rules and the loop compiler
use to rebuild the bodies they hold.
"""

from __future__ import annotations

import contextlib
import inspect
import threading

import numpy as np

from jaxlite import dtypes, source_info
from jaxlite.core import (
    Array,
    ClosedJaxpr,
    Jaxpr,
    JaxprEqn,
    Literal,
    ShapedArray,
    ShapeDtypeStruct,
    Trace,
    Tracer,
    Var,
    abstract_eval,
    canonicalize_value_handlers,
    current_trace,
    dce_jaxpr,
    eval_trace,
    get_aval,
    join_effects,
    reference_types,
    registered_handler,
    set_current_trace,
    shaped_abstractify,
)
from jaxlite.errors import UnexpectedTracerError, jax_array_abstractification_error
from jaxlite.tracer_leaks import check_no_leaks
from jaxlite.util import fun_sourceinfo, safe_zip


class DebugInfo:
    """What is being traced: for error messages that point at the user's function."""

    __slots__ = ("func_name", "what", "arg_names")

    def __init__(self, func_name, what, arg_names=None):
        self.func_name = func_name
        self.what = what
        self.arg_names = arg_names


def debug_info(fun, what, args=None, kwargs=None, static_argnums=()):
    """A `DebugInfo` naming `fun` by name and source location, and its flat arguments."""
    name = fun_sourceinfo(fun)
    arg_names = None
    if args is not None:
        arg_names = _flat_arg_names(fun, args, kwargs or {}, static_argnums)
    return DebugInfo(name, what, arg_names)


def _flat_arg_names(fun, args, kwargs, static_argnums):
    from jaxlite.tree_util import keystr, tree_flatten_with_path

    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        params = []
    names = []
    for i, a in enumerate(args):
        if i in static_argnums:
            continue
        base = params[i] if i < len(params) else f"args[{i}]"
        for path, _ in tree_flatten_with_path(a)[0]:
            names.append(base + keystr(path))
    for k in sorted(kwargs):
        for path, _ in tree_flatten_with_path(kwargs[k])[0]:
            names.append(k + keystr(path))
    return names


class JaxprTracer(Tracer):
    # `_var`, not `var`: a public attribute would hide the Array method of that
    # name (`x.var()` under jit).
    __slots__ = ("_var",)

    def __init__(self, trace, var):
        self._trace = trace
        self._var = var

    @property
    def aval(self):
        return self._var.aval


class DynamicJaxprTrace(Trace):
    """Records primitives into a jaxpr."""

    def __init__(self, debug_info=None, parent=None):
        # The trace this one was opened under: its tracers (and those of its own
        # parents) may be captured as constants; any other tracer has leaked.
        self.parent = current_trace() if parent is None else parent
        self.eqns = []
        self.invars = []
        self.constvars = []
        self.consts = []
        self._const_ids = {}
        # ids of scalar Arrays that stay constvars rather than literals: the residuals
        # of a linearization (kept alive by their owner, see ad.linearize_flat).
        self.residual_ids = ()
        self.debug_info = debug_info
        self.is_live = True

    def __repr__(self):
        return "DynamicJaxprTrace"

    @property
    def debug_name(self):
        info = self.debug_info
        return f"{info.func_name} traced for {info.what}" if info else None

    def new_arg(self, aval):
        var = Var(aval)
        self.invars.append(var)
        return JaxprTracer(self, var)

    def to_atom(self, x):
        """The Var or Literal standing for `x` in the jaxpr being built."""
        if isinstance(x, Tracer):
            if x._trace is self:
                return x._var
            if not x._trace.is_live or not self._is_ancestor(x._trace):
                raise UnexpectedTracerError.escaped(x)
            return self._constvar(x, x.aval)
        t = type(x)
        if t is Array:
            if not x._value.shape and id(x) not in self.residual_ids:
                return Literal(x, ShapedArray((), x._value.dtype, x.weak_type))
            return self._constvar(x, x.aval)
        if t in (int, float, bool, complex):
            dtype, weak = dtypes.dtype_and_weak(x)
            val = Array(np.asarray(x, dtype)[()], weak)
            return Literal(val, ShapedArray((), dtype, weak))
        if isinstance(x, (np.ndarray, np.generic)):
            # A copy: writing to `x` after tracing must not change the traced program.
            v = np.array(x, dtypes.canonicalize_dtype(x.dtype))
            if not v.shape:
                return Literal(Array(v[()]), ShapedArray((), v.dtype))
            return self._constvar(Array(v), ShapedArray(v.shape, v.dtype))
        if t is ShapeDtypeStruct:
            # An abstract constant (see ShapeDtypeStruct): a constvar of its aval,
            # whose missing value only running the jaxpr finds.
            return self._constvar(x, x.aval)
        if isinstance(x, Array):  # a key array: a constvar of its key aval
            return self._constvar(x, x.aval)
        if t in reference_types:  # a mutable array reference: one of its own aval
            return self._constvar(x, x.aval)
        if getattr(x, "__jax_array__", None) is not None:
            raise jax_array_abstractification_error()
        canonicalize = registered_handler(canonicalize_value_handlers, x)
        if canonicalize is not None:  # a type a library registered
            return self.to_atom(canonicalize(x))
        raise TypeError(f"Value {x!r} of type {t} is not a valid JAX type")

    def _is_ancestor(self, trace):
        todo = [self.parent]
        while todo:
            t = todo.pop()
            if t is trace:
                return True
            if t is not None:
                todo.extend(t.enclosing)
        return False

    def _constvar(self, x, aval):
        var = self._const_ids.get(id(x))
        if var is None:
            var = self._const_ids[id(x)] = Var(aval)
            self.constvars.append(var)
            self.consts.append(x)
        return var

    def process_primitive(self, prim, args, params):
        if prim in closure_call_primitives:
            args, params = convert_closure(args, params)
        if _compile_time_eval.on and not any(isinstance(x, Tracer) for x in args):
            return eval_trace.process_primitive(prim, args, params)
        atoms = [self.to_atom(x) for x in args]
        out_avals, effects = abstract_eval(prim, [a.aval for a in atoms], params)
        outvars = [Var(a) for a in out_avals]
        eqn = JaxprEqn(prim, atoms, params, outvars, frozenset(effects))
        if source_info.is_capturing():
            eqn.source_info = source_info.current()
        self.eqns.append(eqn)
        return [JaxprTracer(self, v) for v in outvars]

    def to_jaxpr(self, outs):
        outvars = [self.to_atom(x) for x in outs]
        effects = join_effects(*(e.effects for e in self.eqns))
        jaxpr = Jaxpr(self.constvars, self.invars, outvars, self.eqns, effects)
        return ClosedJaxpr(jaxpr, self.consts)

    def describe_tracer(self, tracer):
        """Where `tracer` came from: the traced function and the arguments it depends on."""
        info = self.debug_info
        if info is None:
            return ""
        msg = f"The error occurred while tracing the function {info.func_name} for "
        msg += f"{info.what}."
        names = self._input_names(getattr(tracer, "_var", None))
        if names:
            plural = "s" if len(names) > 1 else ""
            msg += (
                " This concrete value was not available in Python because it depends "
                f"on the value{plural} of the argument{plural} {', '.join(names)}."
            )
        return msg

    def _input_names(self, var):
        info = self.debug_info
        if var is None or not info.arg_names:
            return []
        deps, live = set(), {var}
        for eqn in reversed(self.eqns):
            if any(v in live for v in eqn.outvars):
                live.update(x for x in eqn.invars if type(x) is Var)
        for i, v in enumerate(self.invars):
            if v in live and i < len(info.arg_names):
                deps.add(i)
        return [info.arg_names[i] for i in sorted(deps)]


class _CompileTimeEval(threading.local):
    on = False


_compile_time_eval = _CompileTimeEval()


@contextlib.contextmanager
def compile_time_eval():
    """While on, a jaxpr trace runs operations whose operands are all concrete values
    instead of recording them (`jax.ensure_compile_time_eval`)."""
    previous = _compile_time_eval.on
    _compile_time_eval.on = True
    try:
        yield
    finally:
        _compile_time_eval.on = previous


def trace_to_jaxpr(fun, in_avals, debug_info=None):
    """Trace `fun(*tracers) -> list of outputs` to a `ClosedJaxpr` over `in_avals`."""
    trace = DynamicJaxprTrace(debug_info)
    tracers = [trace.new_arg(a) for a in in_avals]
    try:
        with set_current_trace(trace):
            outs = fun(*tracers)
            closed = trace.to_jaxpr(outs)
    finally:
        trace.is_live = False
    del tracers, outs  # the trace's own references: any tracer left alive leaked
    check_no_leaks(trace)
    return closed


# ----------------------------------------------------------------------------------------
# Closure conversion
#
# A function traced while another transformation is running may close over that
# transformation's tracers (`jit(lambda a: a * x)` inside a function being
# differentiated in `x`). They become constvars of the traced jaxpr whose constant is a
# tracer. Every trace that receives such a call turns them into explicit leading
# operands first, so that the tracer's own trace sees them (their tangents, batch axes
# and data dependence flow), and only concrete constants stay inside the jaxpr.

# Primitives whose `jaxpr` parameter is a ClosedJaxpr applied to the operands (jit,
# checkpoint): their closures are converted as described above.
closure_call_primitives: set = set()


def split_tracer_consts(closed):
    """`(closed', tracer_consts)`: `closed` with every constant that is a tracer moved
    to a leading input of the jaxpr (the others stay constants)."""
    consts = closed.consts
    if not any(isinstance(c, Tracer) for c in consts):
        return closed, []
    jaxpr = closed.jaxpr
    kept_vars, kept, moved_vars, moved = [], [], [], []
    for v, c in zip(jaxpr.constvars, consts):
        if isinstance(c, Tracer):
            moved_vars.append(v)
            moved.append(c)
        else:
            kept_vars.append(v)
            kept.append(c)
    new = Jaxpr(
        kept_vars, moved_vars + jaxpr.invars, jaxpr.outvars, jaxpr.eqns, jaxpr.effects
    )
    return ClosedJaxpr(new, kept), moved


def convert_closure(args, params):
    """Operands and params of a call-like primitive with its tracer closures made
    explicit operands (see above)."""
    closed, moved = split_tracer_consts(params["jaxpr"])
    if not moved:
        return args, params
    return (*moved, *args), {**params, "jaxpr": closed}


def abstractify(x) -> ShapedArray:
    """The aval of a jit argument (`core.shaped_abstractify`: arrays, scalars,
    ShapeDtypeStructs and duck-typed objects with `.shape` and `.dtype`), with a clear
    TypeError for anything else."""
    if isinstance(x, (Tracer, Array)):
        return x.aval
    return shaped_abstractify(x)


# ----------------------------------------------------------------------------------------
# Operations on whole jaxprs. The jaxprs held by control-flow equations have no
# constvars: what a body closes over is passed as leading operands. Every function
# that makes a new body by tracing (`trace_body`, `jvp_jaxpr`, `batch_body`, the
# transposes) hoists its constants that way; a body that calls a `jit` or a custom
# derivative rule closing over an array gets such constants when it is transformed.
# The operations below that rebuild a jaxpr keep any constants it has.


def hoist_consts(closed):
    """`(jaxpr without constvars, consts)`: constvars become the first invars."""
    j = closed.jaxpr
    if not j.constvars:
        return closed, []
    new = Jaxpr([], [*j.constvars, *j.invars], j.outvars, j.eqns, j.effects)
    return ClosedJaxpr(new, []), list(closed.consts)


def make_closed(invars, outvars, eqns):
    return ClosedJaxpr(Jaxpr([], invars, outvars, eqns), [])


def _rebuild(closed, invars, outvars, eqns, constvars=None):
    """A jaxpr made from parts of `closed`, keeping its constants (those of
    `constvars`, when given, a subset of its constvars)."""
    j = closed.jaxpr
    if constvars is None or len(constvars) == len(j.constvars):
        return ClosedJaxpr(Jaxpr(j.constvars, invars, outvars, eqns), closed.consts)
    kept = set(constvars)
    consts = [c for v, c in zip(j.constvars, closed.consts) if v in kept]
    return ClosedJaxpr(Jaxpr(list(constvars), invars, outvars, eqns), consts)


def forwarding(closed):
    """For each output, the index of the input it returns unchanged, else None."""
    index = {v: i for i, v in enumerate(closed.jaxpr.invars)}
    return [index.get(v) if type(v) is Var else None for v in closed.jaxpr.outvars]


def prune_outputs(closed, keep):
    """`closed` with only the outputs where `keep` is True (dead equations removed,
    effectful ones kept)."""
    if all(keep):
        return closed
    new, _ = dce_jaxpr(closed.jaxpr, list(keep))
    return _rebuild(closed, closed.jaxpr.invars, new.outvars, new.eqns, new.constvars)


def dce_closed(closed, used_outputs):
    """`(jaxpr computing only the used outputs, used_inputs)`; invars are kept."""
    new, used_inputs = dce_jaxpr(closed.jaxpr, list(used_outputs))
    pruned = _rebuild(closed, closed.jaxpr.invars, new.outvars, new.eqns, new.constvars)
    return pruned, used_inputs


def select_invars(closed, keep):
    """`closed` with only the invars where `keep` is True (the others must be unused)."""
    j = closed.jaxpr
    invars = [v for v, k in safe_zip(j.invars, keep) if k]
    return _rebuild(closed, invars, j.outvars, j.eqns)


def add_invars(closed, avals, position):
    """`closed` taking extra unused inputs of `avals` at `position`."""
    j = closed.jaxpr
    new = [Var(a) for a in avals]
    invars = [*j.invars[:position], *new, *j.invars[position:]]
    return _rebuild(closed, invars, j.outvars, j.eqns)


def permute(closed, in_order=None, out_order=None):
    """`closed` with invars and/or outvars reordered: `in_order[i]` is the old index
    of the new i-th input."""
    j = closed.jaxpr
    invars = j.invars if in_order is None else [j.invars[i] for i in in_order]
    outvars = j.outvars if out_order is None else [j.outvars[i] for i in out_order]
    return _rebuild(closed, invars, outvars, j.eqns)


def merge_branch_consts(jaxprs, consts_lists):
    """Give every branch all the branches' consts (first, deduplicated by identity), as
    JAX's cond does, so that one list of operands serves every branch."""
    if not any(consts_lists):
        return list(jaxprs), []
    merged, index = [], {}
    for consts in consts_lists:
        for c in consts:
            if id(c) not in index:
                index[id(c)] = len(merged)
                merged.append(c)
    out = []
    for closed, consts in safe_zip(jaxprs, consts_lists):
        j = closed.jaxpr
        own = dict(zip([index[id(c)] for c in consts], j.invars[: len(consts)]))
        const_vars = [own.get(i) or Var(get_aval(c)) for i, c in enumerate(merged)]
        invars = [*const_vars, *j.invars[len(consts) :]]
        out.append(_rebuild(closed, invars, j.outvars, j.eqns))
    return out, merged


# ----------------------------------------------------------------------------------------
# JAX's partial evaluation API (`jax.interpreters.partial_eval`), for libraries that
# trace a `linear_util.WrappedFun` themselves: flax's `lazy_init` and `nn.scan` run the
# part of a function that depends only on known values and stage the rest.


class PartialVal(tuple):
    """A value that is known (`(None, value)`) or unknown (`(aval, None)`)."""

    def __new__(cls, xs):
        pv, const = xs
        if (pv is None) == (const is None):
            raise ValueError(
                "A PartialVal is (None, value) when known or (aval, None) when "
                f"unknown; got {xs!r}. Build one with PartialVal.known(value) or "
                "PartialVal.unknown(aval)."
            )
        return tuple.__new__(cls, xs)

    @classmethod
    def known(cls, const):
        return cls((None, const))

    @classmethod
    def unknown(cls, aval):
        return cls((aval, None))

    def is_known(self):
        return self[0] is None

    def get_known(self):
        return self[1] if self[0] is None else None

    def get_aval(self):
        return get_aval(self[1]) if self[0] is None else self[0]


def trace_to_jaxpr_nounits(fun, pvals, instantiate=False):
    """Partially evaluate the `WrappedFun` `fun` on `pvals`.

    Operations on known values only run now (under the current trace); the others
    are staged into a jaxpr over the unknown inputs. Returns `(jaxpr, out_pvals,
    consts)`: `jaxpr` (its constvars stand for `consts`, the known values it reads)
    computes the unknown outputs; `out_pvals` are `PartialVal.known(value)` for the
    known outputs and `PartialVal.unknown(aval)` for the others. `instantiate` (a
    bool, or one per output) makes known outputs outputs of the jaxpr too."""
    # ad routes each operation to the known or the unknown side, as for linearize
    # (ad imports this module, so not at the top).
    from jaxlite.interpreters.ad import LinearizeTrace

    parent = current_trace()
    unknown_trace = DynamicJaxprTrace(parent=parent)
    router = LinearizeTrace(parent, unknown_trace)
    args = [
        const if aval is None else unknown_trace.new_arg(aval) for aval, const in pvals
    ]
    try:
        with set_current_trace(router):
            outs = list(fun.call_wrapped(*args))
            if isinstance(instantiate, bool):
                instantiate = [instantiate] * len(outs)
            out_pvals, staged = [], []
            for o, inst in safe_zip(outs, list(instantiate)):
                if router.is_unknown(o) or inst:
                    out_pvals.append(PartialVal.unknown(get_aval(o)))
                    staged.append(o)
                else:
                    out_pvals.append(PartialVal.known(o))
            closed = unknown_trace.to_jaxpr(staged)
    finally:
        unknown_trace.is_live = False
    return closed.jaxpr, out_pvals, closed.consts


def trace_to_jaxpr_dynamic(fun, in_avals, *, keep_inputs=None):
    """Trace the `WrappedFun` `fun` on `in_avals` to `(jaxpr, out_avals, consts)`,
    the jaxpr's constvars standing for `consts`. With `keep_inputs`, `fun` receives
    only the inputs marked True (the jaxpr still takes all of them)."""
    keep = [True] * len(in_avals) if keep_inputs is None else list(keep_inputs)

    def flat(*args):
        return list(fun.call_wrapped(*[a for a, k in safe_zip(args, keep) if k]))

    info = getattr(fun, "debug_info", None)
    closed = trace_to_jaxpr(
        flat, in_avals, info if isinstance(info, DebugInfo) else None
    )
    return closed.jaxpr, closed.out_avals, closed.consts


def convert_constvars_jaxpr(jaxpr):
    """`jaxpr` with its constvars moved to the front of its invars."""
    return Jaxpr(
        [], [*jaxpr.constvars, *jaxpr.invars], jaxpr.outvars, jaxpr.eqns, jaxpr.effects
    )
