"""JAX's extension API on the core: primitives given their rules in JAX's
conventions, and the questions libraries ask the core.

Libraries define primitives of their own (equinox's `unvmap_any`, its `filter_primitive`
machinery, a user's fused kernel) through `jax.extend.core.Primitive`, which is
jaxlite's `core.Primitive`: `prim.def_impl(impl)`, `prim.def_abstract_eval(rule)`,
`ad.primitive_jvps[prim] = ...`, `batching.primitive_batchers[prim] = ...`. JAX's
conventions differ from jaxlite's tables (see core's docstring) in two ways: a rule of
a single-result primitive returns a value, not a one-element list, and an `impl`
receives and returns Arrays, where jaxlite's `impl_rules` work on NumPy values. The
adapters here translate once, when the rule is registered, so every trace, the
backends included, sees an ordinary jaxlite primitive:

- `impl_from_jax`: the NumPy-level impl rule of a JAX-style `impl` (Arrays in,
  Array(s) out, run outside any transformation, as JAX's eager evaluation does);
- `abstract_eval_from_jax`: `(list of avals, effects)` from a rule returning an aval
  or a sequence of them (and, for `def_effectful_abstract_eval`, the effects);
- `ConventionTable`: one of the interpreters' rule tables seen in JAX's convention
  (`ad.primitive_jvps`, `batching.primitive_batchers`, ...): a rule stored through it
  is translated on the way in, and reading a jaxlite rule translates it on the way out.

The rest answers what `jax.core` and `jax.extend.core` answer: the current trace as an
opaque comparable token (`get_opaque_trace_state`, flax's check that a module is used
under the trace it was made in), `find_top_trace`, `valid_jaxtype`, `mapped_aval`,
`new_jaxpr_eqn`, `jaxprs_in_params`, ... `core` re-exports them.
"""

from __future__ import annotations

import collections.abc
import contextlib
import weakref
from typing import Any

import numpy as np

from jaxlite import dtypes
from jaxlite.core import (
    AbstractValue,
    Array,
    ClosedJaxpr,
    Jaxpr,
    JaxprEqn,
    Primitive,
    ShapedArray,
    Tracer,
    _scalar_types,
    as_value,
    current_trace,
    eval_trace,
    set_current_trace,
    typecheck_jaxpr,
)
from jaxlite.effects import Effect
from jaxlite.errors import UnexpectedTracerError

__all__ = [
    "CallPrimitive",
    "ConventionTable",
    "Effect",
    "Effects",
    "OpaqueTraceState",
    "ParamDict",
    "Value",
    "abstract_eval_from_jax",
    "check_jaxpr",
    "eval_context",
    "find_top_trace",
    "get_opaque_trace_state",
    "impl_from_jax",
    "jaxprs_in_params",
    "mapped_aval",
    "max_dim",
    "min_dim",
    "new_jaxpr_eqn",
    "primal_dtype_to_tangent_dtype",
    "subjaxprs",
    "take_current_trace",
    "unmapped_aval",
    "valid_jaxtype",
]

Value = Any
ParamDict = dict
Effects = set
check_jaxpr = typecheck_jaxpr


class CallPrimitive(Primitive):
    """A primitive that calls a jaxpr given as its `call_jaxpr` parameter (JAX's
    `call_p`, `closed_call_p`): always several results."""

    __slots__ = ()
    call_primitive = True

    def __init__(self, name):
        super().__init__(name, multiple_results=True)


# ----------------------------------------------------------------------------------------
# Rules in JAX's conventions


def impl_from_jax(prim, impl):
    """The NumPy-level impl rule of a JAX-style `impl(*arrays, **params)`.

    The operands arrive as Arrays and `impl` runs under the eval trace (it is the
    primitive's meaning on concrete values, whatever trace the caller is in); what
    it returns (an Array, a NumPy value or a Python scalar, a sequence of them when
    the primitive has several results) becomes NumPy values in canonical dtypes."""

    def rule(*vals, **params):
        args = [Array(v) for v in vals]
        with set_current_trace(eval_trace):
            outs = impl(*args, **params)
        if not prim.multiple_results:
            outs = (outs,)
        return [_host_value(prim, o) for o in outs]

    rule.__name__ = getattr(impl, "__name__", f"{prim.name}_impl")
    return rule


def _host_value(prim, out):
    if type(out) is Array:
        return out._value
    if isinstance(out, Tracer):
        raise UnexpectedTracerError(
            f"The impl rule of primitive '{prim}' returned a tracer "
            f"({out!r}): an impl computes on concrete values only. It closed over a "
            "value of an enclosing transformation; pass that value as an operand of "
            f"'{prim}' instead."
        )
    return as_value(out)._value


def abstract_eval_from_jax(prim, rule, effectful):
    """`(list of avals, effects)` from a JAX-style abstract evaluation rule: it returns
    an aval (a sequence of them for a primitive with several results), and with
    `effectful` the pair `(aval(s), effects)`."""

    def abstract(*avals, **params):
        out = rule(*avals, **params)
        effects = set()
        if effectful:
            out, effects = out
        outs = out if prim.multiple_results else (out,)
        return [_as_aval(prim, o) for o in outs], set(effects)

    abstract.__name__ = getattr(rule, "__name__", f"{prim.name}_abstract_eval")
    return abstract


def _as_aval(prim, out):
    if isinstance(out, AbstractValue):
        return out
    aval = getattr(out, "aval", None)  # a ShapeDtypeStruct
    if isinstance(aval, AbstractValue):
        return aval
    if hasattr(out, "shape") and hasattr(out, "dtype"):
        return ShapedArray(out.shape, dtypes.canonicalize_dtype(out.dtype))
    raise TypeError(
        f"The abstract evaluation rule of primitive '{prim}' returned {out!r} of type "
        f"{type(out).__name__}, which is not an abstract value: return a "
        "jax.core.ShapedArray(shape, dtype) per output (a sequence of them when the "
        "primitive has multiple_results=True)."
    )


class ConventionTable(collections.abc.MutableMapping):
    """One of jaxlite's rule tables seen in JAX's calling convention.

    `table[prim] = rule` stores `from_jax(prim, rule)` in the jaxlite table (so the
    interpreter that owns it applies the rule like any other); `table[prim]` gives
    the rule as it was stored here, or `to_jax(prim, jaxlite_rule)` for a rule
    jaxlite registered itself. Iteration and length are the jaxlite table's."""

    def __init__(self, table, from_jax, to_jax):
        self._table = table
        self._from_jax = from_jax
        self._to_jax = to_jax
        self._given = {}  # prim -> (rule as given here, rule as stored in the table)

    def __setitem__(self, prim, rule):
        stored = self._from_jax(prim, rule)
        self._table[prim] = stored
        self._given[prim] = (rule, stored)

    def __getitem__(self, prim):
        stored = self._table[prim]
        given = self._given.get(prim)
        if given is not None and given[1] is stored:
            return given[0]
        return self._to_jax(prim, stored)

    def __delitem__(self, prim):
        del self._table[prim]
        self._given.pop(prim, None)

    def __iter__(self):
        return iter(self._table)

    def __len__(self):
        return len(self._table)

    def __repr__(self):
        return f"ConventionTable({len(self)} rules)"


# ----------------------------------------------------------------------------------------
# The trace state, as libraries query it


class OpaqueTraceState:
    """The current trace, comparable and nothing else: equal while the same trace is
    current. It holds the trace weakly, so keeping one alive keeps no jaxpr alive."""

    __slots__ = ("_trace_ref",)

    def __init__(self, trace_ref):
        self._trace_ref = trace_ref

    def __eq__(self, other):
        return (
            isinstance(other, OpaqueTraceState) and self._trace_ref == other._trace_ref
        )

    def __hash__(self):
        return hash(self._trace_ref)

    def __repr__(self):
        trace = self._trace_ref()
        return f"OpaqueTraceState({trace!r})"


def get_opaque_trace_state(convention=None):
    """The current trace as an `OpaqueTraceState` (`convention` names the caller, as
    in JAX, and changes nothing)."""
    return OpaqueTraceState(weakref.ref(current_trace()))


def find_top_trace(xs=()):
    """The current trace (JAX's stackless core answers the same for any `xs`)."""
    return current_trace()


@contextlib.contextmanager
def take_current_trace():
    """Yield the current trace with the eval trace current meanwhile."""
    trace = current_trace()
    with set_current_trace(eval_trace):
        yield trace


@contextlib.contextmanager
def eval_context():
    """Evaluate eagerly inside this block, whatever transformation is running."""
    with set_current_trace(eval_trace):
        yield


# ----------------------------------------------------------------------------------------
# Values, avals and jaxprs


def valid_jaxtype(x) -> bool:
    """Whether `x` can be a JAX value: an Array, a tracer, a Python scalar, or a NumPy
    value of a dtype JAX supports (not strings or objects)."""
    if isinstance(x, (Tracer, Array)) or type(x) in _scalar_types:
        return True
    if isinstance(x, (np.ndarray, np.generic)):
        return dtypes._is_supported(x.dtype)
    return hasattr(x, "__jax_array__")


def mapped_aval(size, axis, aval):
    """`aval` without its axis `axis` (of length `size`); `aval` when `axis` is None."""
    if axis is None:
        return aval
    axis = axis % len(aval.shape)
    if aval.shape[axis] != size:
        raise ValueError(
            f"mapped_aval: axis {axis} of {aval.str_short()} has length "
            f"{aval.shape[axis]}, not the mapped size {size}."
        )
    return aval.update(shape=aval.shape[:axis] + aval.shape[axis + 1 :])


def unmapped_aval(size, axis, aval, explicit_mesh_axis=None):
    """`aval` with an axis of length `size` inserted at `axis`; `aval` when `axis`
    is None."""
    if axis is None:
        return aval
    shape = list(aval.shape)
    shape.insert(axis % (len(shape) + 1), size)
    return aval.update(shape=tuple(shape))


def primal_dtype_to_tangent_dtype(dtype):
    """The dtype of tangents of `dtype`: itself if inexact, else float0."""
    if dtypes.issubdtype(dtype, np.inexact):
        return dtype
    return dtypes.float0


def max_dim(d1, d2):
    return max(d1, d2)


def min_dim(d1, d2):
    return min(d1, d2)


def new_jaxpr_eqn(
    invars, outvars, primitive, params, effects, source_info=None, ctx=None
):
    """A `JaxprEqn`, arguments in JAX's order (jaxlite's constructor takes the
    primitive first)."""
    eqn = JaxprEqn(primitive, list(invars), dict(params), list(outvars))
    eqn.effects = frozenset(effects)
    eqn.source_info = source_info
    return eqn


def jaxprs_in_params(params):
    """The jaxprs among an equation's parameters (alone or in a tuple), opened."""
    for value in params.values():
        for v in value if isinstance(value, tuple) else (value,):
            if isinstance(v, Jaxpr):
                yield v
            elif isinstance(v, ClosedJaxpr):
                yield v.jaxpr


def subjaxprs(jaxpr):
    """The jaxprs in the parameters of `jaxpr`'s equations (not recursively)."""
    for eqn in jaxpr.eqns:
        yield from jaxprs_in_params(eqn.params)
