"""Vectorisation: `vmap` by batching rules.

A `BatchTracer` carries a value with one extra axis, `bdim` (or `not_mapped` when the
value is the same for every batch element). `BatchTrace.process_primitive` calls the
primitive's batching rule under the parent trace; the rule returns the outputs and their
batch dimensions. Recurring shapes of rules have helpers: `defvectorized` (elementwise
unary, bdim passes through) and `defbroadcasting` (n-ary elementwise: batch axes go to the
front, unbatched operands get a size-1 axis).

Named axes. `vmap(f, axis_name="i")` names its batch axis, so that collectives in `f`
(`lax.psum(x, "i")`, `lax.axis_index("i")`, ..., in `lax/parallel.py`) can refer to it.
Two pieces of state make that work, both per thread: the *axis environment* (the names
and sizes of the enclosing named vmaps, consulted when a collective is traced into a
jaxpr, e.g. under `jit` inside the vmap), and the name of the BatchTrace whose rule is
running (`rule_axis_name()`), which collective batching rules read and `batch_jaxpr`
passes on to the trace it makes for a body. A collective always goes to its batching
rule, even with unbatched operands (`psum(1.0, "i")` is the axis size), and each trace
handles only its own name, handing the rest of the axes to its parent: so nested
vmaps find their collectives by name, whatever the nesting order.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import numpy as np

from jaxlite.core import (
    ClosedJaxpr,
    Jaxpr,
    ShapedArray,
    Trace,
    Tracer,
    current_trace,
    eval_jaxpr,
    get_aval,
    set_current_trace,
)
from jaxlite.core_extension import ConventionTable
from jaxlite.interpreters.partial_eval import (
    closure_call_primitives,
    convert_closure,
    hoist_consts,
    trace_to_jaxpr,
)
from jaxlite.state.types import AbstractRef, discharge_hook, discharge_hooks
from jaxlite.tracer_leaks import check_no_leaks
from jaxlite.util import safe_map, safe_zip

map, zip = safe_map, safe_zip

not_mapped = None
batch_rules: dict = {}
# Primitives whose batching rule runs even when no operand is batched: `new_ref`, so
# that a reference made inside `vmap` holds one value per batch element (it may be
# given batched values later), and the writes into references, which refuse an
# unbatched one (each batch element would write into the same reference).
always_batch: set = set()
# collective_axis_names[prim](params) -> the axis names (not positions) an equation of
# `prim` refers to; its batching rule runs even when no operand is batched.
collective_axis_names: dict = {}


# ----------------------------------------------------------------------------------------
# The axis environment: names and sizes of the enclosing named vmaps


class _AxisState(threading.local):
    env: tuple = ()  # ((name, size), ...), outermost first
    vma: frozenset = frozenset()  # the names in `env` bound with check_vma
    rule_axis_name = None  # the name of the BatchTrace whose rule is running


_axis_state = _AxisState()


@contextmanager
def extend_axis_env(pairs, vma=()):
    """Bind axis names to sizes while tracing, e.g. `[("i", 4)]` (make_jaxpr's
    `axis_env`): collectives over those names can then be staged into jaxprs. The
    names in `vma` are manual axes of a shard_map with check_vma (`vma_axes`)."""
    prev, prev_vma = _axis_state.env, _axis_state.vma
    pairs = tuple((name, int(size)) for name, size in pairs)
    _axis_state.env = prev + pairs
    _axis_state.vma = prev_vma.difference(n for n, _ in pairs).union(vma)
    try:
        yield
    finally:
        _axis_state.env, _axis_state.vma = prev, prev_vma


def axis_env():
    """The current axis environment as a hashable tuple of (name, size) pairs
    (`(name, size, "check_vma")` for a name in `vma_axes()`): jit's cache key."""
    vma = _axis_state.vma
    if not vma:
        return _axis_state.env
    return tuple(
        (n, size, "check_vma") if n in vma else (n, size) for n, size in _axis_state.env
    )


def vma_axes():
    """The names of the enclosing manual axes of shard_maps with `check_vma=True`."""
    return _axis_state.vma


def axis_exists(name):
    return any(n == name for n, _ in _axis_state.env)


def axis_size_of(name):
    """The size of the innermost enclosing axis called `name`; NameError if none."""
    for n, size in reversed(_axis_state.env):
        if n == name:
            return size
    raise NameError(
        f"unbound axis name: {name}. Collectives over a named axis must run inside "
        f"jax.vmap(..., axis_name={name!r}) or jax.pmap(..., axis_name={name!r})."
    )


def rule_axis_name():
    """The axis name of the BatchTrace whose batching rule is running (None when that
    vmap is unnamed)."""
    return _axis_state.rule_axis_name


def _mentions_axis(params, name):
    """Whether a sub-jaxpr in `params` holds a collective over axis `name`."""
    stack = list(params.values())
    while stack:
        v = stack.pop()
        if isinstance(v, (tuple, list)):
            stack.extend(v)
            continue
        if isinstance(v, ClosedJaxpr):
            v = v.jaxpr
        if not isinstance(v, Jaxpr):
            continue
        for eqn in v.eqns:
            names = collective_axis_names.get(eqn.primitive)
            if names is not None and name in names(eqn.params):
                return True
            stack.extend(eqn.params.values())
    return False


class BatchTracer(Tracer):
    __slots__ = ("val", "bdim")

    def __init__(self, trace, val, bdim):
        self._trace = trace
        self.val = val
        self.bdim = bdim

    @property
    def aval(self):
        aval = get_aval(self.val)
        if self.bdim is not_mapped:
            return aval
        shape = aval.shape[: self.bdim] + aval.shape[self.bdim + 1 :]
        if type(aval) is AbstractRef:  # a batch of references (jaxlite.state)
            return aval.update(shape=shape)
        return ShapedArray(shape, aval.dtype, aval.weak_type)


class BatchTrace(Trace):
    """One `vmap`. Its `tag` names the vmap: a sub-trace made for a function staged
    under it (a custom rule, a closure) shares the tag, so the vmap's tracers that such
    a function closes over count as its own there too."""

    def __init__(self, parent, axis_size, axis_name=None, tag=None):
        self.parent = parent
        self.axis_size = axis_size
        self.axis_name = axis_name
        self.tag = object() if tag is None else tag

    def __repr__(self):
        return "BatchTrace"

    def to_batch_info(self, x):
        if isinstance(x, BatchTracer) and x._trace.tag is self.tag:
            return x.val, x.bdim
        return x, not_mapped

    def subtrace(self):
        """A trace of the same vmap over the current trace (see the class docstring)."""
        return BatchTrace(current_trace(), self.axis_size, self.axis_name, self.tag)

    def process_primitive(self, prim, args, params):
        if prim in closure_call_primitives:
            args, params = convert_closure(args, params)
        vals, dims = [], []
        for x in args:
            v, d = self.to_batch_info(x)
            vals.append(v)
            dims.append(d)
        if (
            all(d is not_mapped for d in dims)
            and prim not in always_batch
            and not self._names_own_axis(prim, params)
        ):
            with set_current_trace(self.parent):
                outs = prim.bind(*vals, **params)
            return outs if prim.multiple_results else [outs]
        if prim in discharge_hooks:
            hook = discharge_hook(prim, vals)
            if hook is not None:  # a loop over references: run on their values
                return hook(args, params)
        prev_name = _axis_state.rule_axis_name
        _axis_state.rule_axis_name = self.axis_name
        try:
            with set_current_trace(self.parent):
                outs, out_dims = self._apply_rule(prim, vals, dims, params)
        finally:
            _axis_state.rule_axis_name = prev_name
        return [
            v if d is not_mapped else BatchTracer(self, v, d)
            for v, d in zip(outs, out_dims)
        ]

    def _names_own_axis(self, prim, params):
        """Whether an equation with unbatched operands still needs this vmap: a
        collective over its axis, or a body (jit, scan, ...) holding one."""
        if self.axis_name is None:
            return False
        names = collective_axis_names.get(prim)
        if names is not None:
            return self.axis_name in names(params)
        return _mentions_axis(params, self.axis_name)

    def _apply_rule(self, prim, vals, dims, params):
        rule = batch_rules.get(prim)
        if rule is None:
            raise NotImplementedError(
                f"Batching rule for '{prim}' not implemented: vmap cannot vectorise "
                f"'{prim}'. Use jax.lax.map to loop over the batch instead."
            )
        return rule(self.axis_size, vals, dims, **params)


# ----------------------------------------------------------------------------------------
# Moving batch axes


def moveaxis(x, src, dst):
    from jaxlite import lax  # lazy, as JAX: lax (above) builds on this module

    ndim = np.ndim(x)
    dst = dst % ndim
    if src == dst:
        return x
    perm = [i for i in range(ndim) if i != src]
    perm.insert(dst, src)
    return lax.transpose(x, perm)


def bdim_at_front(x, bdim, size):
    """`x` with its batch axis first; an unbatched `x` is broadcast to `size`."""
    from jaxlite import lax  # lazy, as JAX: lax (above) builds on this module

    if bdim is not_mapped:
        shape = np.shape(x)
        return lax.broadcast_in_dim(x, (size, *shape), tuple(range(1, len(shape) + 1)))
    return moveaxis(x, bdim, 0)


def move_to(x, bdim, dst, size):
    """`x` with its batch axis at `dst` (broadcast there when unbatched)."""
    if dst is not_mapped:
        return x
    return moveaxis(bdim_at_front(x, bdim, size), 0, dst)


# ----------------------------------------------------------------------------------------
# Rule helpers


def defvectorized(prim):
    """Elementwise unary (with static params): apply to the batched value as is."""

    def rule(axis_size, vals, dims, **params):
        out = prim.bind(*vals, **params)
        outs = out if prim.multiple_results else [out]
        return outs, [dims[0]] * len(outs)

    batch_rules[prim] = rule


def broadcast_batched_operands(vals, dims):
    """Batch axes to the front; give every operand the full rank lax needs."""
    from jaxlite import lax  # lazy, as JAX: lax (above) builds on this module

    ranks = [np.ndim(v) - (d is not not_mapped) for v, d in zip(vals, dims)]
    rank = max(ranks)
    out = []
    for v, d, r in zip(vals, dims, ranks):
        if d is not_mapped:
            if r == 0:
                out.append(v)
            else:
                out.append(
                    lax.broadcast_in_dim(v, (1, *np.shape(v)), tuple(range(1, r + 1)))
                )
            continue
        v = moveaxis(v, d, 0)
        if r < rank:
            shape = np.shape(v)
            v = lax.broadcast_in_dim(
                v,
                (shape[0],) + (1,) * (rank - r) + shape[1:],
                (0, *range(rank - r + 1, rank + 1)),
            )
        out.append(v)
    return out


def defbroadcasting(prim):
    """Elementwise n-ary: operands broadcast against each other as lax allows."""

    def rule(axis_size, vals, dims, **params):
        first = next(d for d in dims if d is not not_mapped)
        same = all(d == first for d in dims) and len({np.ndim(v) for v in vals}) == 1
        if same:
            out = prim.bind(*vals, **params)
            return [out], [first]
        out = prim.bind(*broadcast_batched_operands(vals, dims), **params)
        return [out], [0]

    batch_rules[prim] = rule


# ----------------------------------------------------------------------------------------
# Batching whole jaxprs (for jit, control flow, callbacks)


def batch_jaxpr(closed: ClosedJaxpr, axis_size, in_dims, out_dims_wanted=None):
    """A jaxpr computing `closed` over a batch: inputs batched at `in_dims` (or
    not_mapped), outputs batched at axis 0 or not_mapped. Returns (jaxpr, out_dims).

    `out_dims_wanted` forces outputs to be batched (0) where it says True. The batch
    axis takes the name of the vmap whose rule is running, so that the body's
    collectives over that name are batched here.
    """
    axis_name = _axis_state.rule_axis_name
    in_avals = []
    for aval, d in zip(closed.in_avals, in_dims):
        if d is not_mapped:
            in_avals.append(aval)
        else:
            shape = list(aval.shape)
            shape.insert(d, axis_size)
            if type(aval) is AbstractRef:  # a batch of references (jaxlite.state)
                in_avals.append(aval.update(shape=shape))
            else:
                in_avals.append(ShapedArray(shape, aval.dtype, aval.weak_type))
    out_dims_box = []

    def fun(*args):
        trace = BatchTrace(current_trace(), axis_size, axis_name)
        tracers = [
            a if d is not_mapped else BatchTracer(trace, a, d)
            for a, d in zip(args, in_dims)
        ]
        with set_current_trace(trace):
            outs = eval_jaxpr(closed.jaxpr, closed.consts, *tracers)
        vals, dims = [], []
        for i, o in enumerate(outs):
            v, d = trace.to_batch_info(o)
            force = out_dims_wanted is not None and out_dims_wanted[i]
            if d is not_mapped and not force:
                vals.append(v)
                dims.append(not_mapped)
            else:
                vals.append(bdim_at_front(v, d, axis_size))
                dims.append(0)
        out_dims_box.append(dims)
        return vals

    batched = trace_to_jaxpr(fun, in_avals)
    return batched, out_dims_box[0]


def batch_body(closed, axis_size, in_dims, out_batched=None):
    """`closed` vectorised over a batch: inputs batched at `in_dims` (or not_mapped),
    outputs at axis 0 or not_mapped (forced to 0 where `out_batched` says True).

    Returns `(jaxpr, consts, out_batched)`; `consts` are values the batched body needs
    (its first invars), as `hoist_consts` makes them.
    """
    batched, out_dims = batch_jaxpr(closed, axis_size, in_dims, out_batched)
    jaxpr, consts = hoist_consts(batched)
    return jaxpr, consts, [d is not not_mapped for d in out_dims]


def batch_jaxpr_rule(prim):
    """Batching rule for call-like primitives with a `jaxpr` param (e.g. `jit`)."""

    def rule(axis_size, vals, dims, *, jaxpr, **params):
        batched, out_dims = batch_jaxpr(jaxpr, axis_size, dims)
        outs = prim.bind(*vals, **params, jaxpr=batched)
        return outs, out_dims

    return rule


_RULE_AXIS = object()


def vmap_flat(
    fun, axis_size, in_vals, in_dims, axis_name=_RULE_AXIS, trace=None, vma=False
):
    """Run `fun(*vals) -> list` batched; returns (values, their batch dims). `trace`, if
    given, is the BatchTrace to use (a `subtrace()` of an enclosing one). Without an
    `axis_name` (a batching rule vectorising a body), the batch axis is that of the
    vmap whose rule is running, name included. `vma`: the named axis is a manual axis
    of a shard_map with check_vma (`vma_axes`)."""
    env = ()
    own_trace = trace is None
    if trace is None:
        if axis_name is _RULE_AXIS:
            axis_name = _axis_state.rule_axis_name
        elif axis_name is not None:
            env = ((axis_name, axis_size),)
        trace = BatchTrace(current_trace(), axis_size, axis_name)
    tracers = [
        v if d is not_mapped else BatchTracer(trace, v, d)
        for v, d in zip(in_vals, in_dims)
    ]
    with set_current_trace(trace), extend_axis_env(env, (axis_name,) if vma else ()):
        outs = fun(*tracers)
    trace.is_live = False
    vals, dims = [], []
    for o in outs:
        v, d = trace.to_batch_info(o)
        vals.append(v)
        dims.append(d)
    if own_trace:
        o = tracers = outs = None  # the trace's own references: the rest leaked
        check_no_leaks(trace)
    return vals, dims


# ----------------------------------------------------------------------------------------
# JAX's names and conventions (`jax.interpreters.batching`), for primitives defined
# outside jaxlite. JAX has three forms of batching rule, each a view of `batch_rules`
# here (core_extension.ConventionTable); each returns `(out, out_dim)`, single values
# for a single-result primitive:
#   primitive_batchers[p](vals, dims, **params)
#   axis_primitive_batchers[p](axis_size, axis_name, trace_type, vals, dims, **params)
#   fancy_primitive_batchers[p](axis_data, vals, dims, **params)
# As in JAX, `vals` and `dims` reach such a rule as tuples (rules store `dims` in the
# params of the equations they bind, and tuples compare with tuples there).


class AxisData:
    """The vmap a batching rule runs for: its axis name (None if unnamed) and size."""

    __slots__ = ("name", "size", "spmd_name", "explicit_mesh_axis")

    def __init__(self, name, size, spmd_name=None, explicit_mesh_axis=None):
        self.name = name
        self.size = size
        self.spmd_name = spmd_name
        self.explicit_mesh_axis = explicit_mesh_axis

    def __repr__(self):
        return f"AxisData(name={self.name!r}, size={self.size})"


def _as_lists(prim, out, out_dims):
    if prim.multiple_results:
        return list(out), list(out_dims)
    return [out], [out_dims]


def _batched_size(vals, dims):
    return next(np.shape(v)[d] for v, d in zip(vals, dims) if d is not not_mapped)


def _batcher_from_jax(prim, rule):
    def batch(axis_size, vals, dims, **params):
        if all(d is not_mapped for d in dims):  # as JAX: nothing to batch
            out = prim.bind(*vals, **params)
            outs = list(out) if prim.multiple_results else [out]
            return outs, [not_mapped] * len(outs)
        return _as_lists(prim, *rule(tuple(vals), tuple(dims), **params))

    return batch


def _batcher_to_jax(prim, rule):
    def batch(vals, dims, **params):
        outs, out_dims = rule(
            _batched_size(vals, dims), list(vals), list(dims), **params
        )
        if prim.multiple_results:
            return outs, out_dims
        return outs[0], out_dims[0]

    return batch


def _axis_batcher_from_jax(prim, rule):
    def batch(axis_size, vals, dims, **params):
        out = rule(
            axis_size, rule_axis_name(), None, tuple(vals), tuple(dims), **params
        )
        return _as_lists(prim, *out)

    return batch


def _axis_batcher_to_jax(prim, rule):
    def batch(axis_size, axis_name, trace_type, vals, dims, **params):
        outs, out_dims = rule(axis_size, list(vals), list(dims), **params)
        if prim.multiple_results:
            return outs, out_dims
        return outs[0], out_dims[0]

    return batch


def _fancy_batcher_from_jax(prim, rule):
    def batch(axis_size, vals, dims, **params):
        axis_data = AxisData(rule_axis_name(), axis_size)
        return _as_lists(prim, *rule(axis_data, tuple(vals), tuple(dims), **params))

    return batch


def _fancy_batcher_to_jax(prim, rule):
    def batch(axis_data, vals, dims, **params):
        outs, out_dims = rule(axis_data.size, list(vals), list(dims), **params)
        if prim.multiple_results:
            return outs, out_dims
        return outs[0], out_dims[0]

    return batch


primitive_batchers = ConventionTable(batch_rules, _batcher_from_jax, _batcher_to_jax)
axis_primitive_batchers = ConventionTable(
    batch_rules, _axis_batcher_from_jax, _axis_batcher_to_jax
)
fancy_primitive_batchers = ConventionTable(
    batch_rules, _fancy_batcher_from_jax, _fancy_batcher_to_jax
)


def broadcast(x, size, axis):
    """`x` broadcast along a new axis `axis` of length `size`."""
    return move_to(x, not_mapped, axis, size)


def batch(fun, axis_data, in_dims, out_dim_dests):
    """JAX's `batching.batch`: the `WrappedFun` `fun` vectorised over `axis_data`
    (an `AxisData`), inputs batched at `in_dims` (or not_mapped), outputs moved to
    `out_dim_dests` (a sequence, or a thunk giving one)."""

    def batched(f, *vals):
        outs, dims = vmap_flat(
            f, axis_data.size, vals, in_dims, axis_name=axis_data.name
        )
        dests = out_dim_dests() if callable(out_dim_dests) else out_dim_dests
        return [
            move_to(v, d, dst, axis_data.size) for v, d, dst in zip(outs, dims, dests)
        ]

    return fun.wrap(batched)
