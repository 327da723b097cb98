"""Host callbacks: `pure_callback`, `io_callback`, `debug.callback` and `debug.print`.

In jaxlite the host *is* the device, so a callback is just a Python call. Eagerly the
public functions call the user's function directly; under `jit` the NumPy backend
writes one line per callback equation that calls a small "host function" built once at
lowering time. That host function hands the user jaxlite Arrays, as JAX does, wrapping
jaxlite's own buffers (no copies: `np.asarray` of one is a read-only view), makes the
eval trace current while the user's code runs (so the callback may itself call
jaxlite), checks the result as JAX does (the flattened leaves against those of the
declared `result_shape_dtypes`: their number, shapes and dtypes, 64-bit values
canonicalised) and returns values that no one else can write: an Array the callback
returns, or one of its arguments or a read-only view of one, is used as it is; any other
array is copied, since the callback may keep it and write it later. An exception raised
by the user's function reaches the caller as one that is both a `JaxRuntimeError` (what
JAX raises) and an instance of its own type, with the original as its cause
(`errors.callback_error`), eagerly and under jit alike.

The four primitives differ in their effects, and hence in what the transformations may
do with them: `pure_callback` has none (dead-code elimination removes an unused one;
autodiff refuses it), `io_callback` has `IO`/`OrderedIO` (never removed; an ordered one
cannot be vmapped), the debug primitives have `Debug`/`OrderedDebug` (never removed;
JVP prints the primal values once; transposition drops them). Under `vmap` a callback
either runs once per batch element, in batch order (the "sequential" methods, io and
debug callbacks: a loop in the host function, no scan needed), or once on the whole
batch (`expand_dims`, `broadcast_all`, `legacy_vectorized`).

`batch_sequentially` is for the control-flow batching rules (which find host calls with
the backend's `calls_host`): a batched `cond` or `while_loop` whose body holds a
callback is run element by element, so a callback only ever sees the elements that
take its branch or are still looping.
"""

from __future__ import annotations

import re
import sys
import warnings

import numpy as np

from jaxlite import dtypes, effects, errors, tree_util
from jaxlite.array import from_host, owned_buffer
from jaxlite.backend import lowering_rules
from jaxlite.backend.loops import host_call_primitives
from jaxlite.backend.native import native_rules
from jaxlite.backend.native.host import host_functions
from jaxlite.core import (
    Array,
    Primitive,
    ShapedArray,
    ShapeDtypeStruct,
    Tracer,
    _state,
    abstract_eval_rules,
    eval_trace,
    get_aval,
    impl_rules,
    no_effects,
    physical_rules,
    set_current_trace,
    subjaxprs,
)
from jaxlite.distributed.callbacks import on_owner, owner_of
from jaxlite.interpreters import ad, batching, physical
from jaxlite.interpreters.batching import not_mapped
from jaxlite.util import (
    default_fp,
    merge_lists,
    partition_list,
    restore_fp,
    safe_map,
    safe_zip,
)

map, unsafe_zip, zip = safe_map, zip, safe_zip

__all__ = [
    "pure_callback",
    "io_callback",
    "effects_barrier",
    "pure_callback_p",
    "io_callback_p",
    "debug_callback_p",
    "debug_print_p",
]

VMAP_METHODS = [
    "sequential",
    "sequential_unrolled",
    "expand_dims",
    "broadcast_all",
    "legacy_vectorized",
    None,
]

PURE_JVP_MESSAGE = (
    "Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks "
    "while taking gradients."
)
PURE_TRANSPOSE_MESSAGE = (
    "Pure callbacks do not support transpose. Please use `jax.custom_vjp` to use "
    "callbacks while taking gradients."
)
IO_JVP_MESSAGE = "IO callbacks do not support JVP."
IO_TRANSPOSE_MESSAGE = "IO callbacks do not support transpose."
IO_VMAP_MESSAGE = "Cannot `vmap` ordered IO callback."
VMAP_NONE_DEPRECATION = (
    "The default behavior of pure_callback under vmap will soon change. Currently, the "
    "default behavior is to generate a sequential vmap (i.e. a loop), but in the future "
    "the default will be to raise an error. To keep the current default, set "
    "vmap_method='sequential'."
)
VECTORIZED_DEPRECATION = (
    "The vectorized argument of jax.pure_callback is deprecated and setting it will "
    "soon raise an error. To avoid an error in the future, and to suppress this "
    "warning, please use the vmap_method argument instead."
)


# ----------------------------------------------------------------------------------------
# Values crossing the host boundary


def _is_jax_value(x):
    t = type(x)
    if t is Array or isinstance(x, Tracer):
        return True
    if t in (int, float, complex, bool):
        return True
    if isinstance(x, (np.ndarray, np.generic)):
        return x.dtype.kind in "biufc" or x.dtype == dtypes.bfloat16
    return False


def _eager_arg(x):
    """The Array an eagerly called callback receives for a leaf: an Array argument
    itself (strongly typed, as JAX passes it), anything else converted as `jit` would
    (a NumPy array of the caller's is copied: it is not jaxlite's to share)."""
    if type(x) is Array:
        return Array(x._value) if x.weak_type else x
    return from_host(x)


def _eager_value(x):
    """The buffer of `_eager_arg(x)`, for host functions (which wrap it as an Array)."""
    return x._value if type(x) is Array else from_host(x)._value


def _check_args(leaves, what):
    for i, x in enumerate(leaves):
        if not _is_jax_value(x):
            raise TypeError(
                f"Error interpreting argument to {what} as a JAX value. The problematic "
                f"value is of type {type(x)} and was passed to {what} at position {i}."
            )


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _masked_repr(obj):
    """`repr(obj)` with memory addresses written as JAX writes them in jaxprs."""
    return _ADDRESS.sub(" at 0xXXXXXXXXXXXX", repr(obj))


def _fn_name(fn):
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    return name if name is not None else _masked_repr(fn)


def _host_error(e, fn, what):
    """The exception to raise for `e`, raised by the host function `fn` (see
    `errors.callback_error`): a JaxRuntimeError that is also a `type(e)`."""
    return errors.callback_error(
        e, f"(raised in the host function {_fn_name(fn)}, called by jaxlite.{what})"
    )


_positional_trees: dict = {}


def _positional_tree(n):
    """The PyTreeDef of `(args, kwargs)` for `n` array positionals: `((*, ..., *), {})`."""
    tree = _positional_trees.get(n)
    if tree is None:
        tree = _positional_trees[n] = tree_util.tree_structure(((0,) * n, {}))
    return tree


_LEAF_TREE = tree_util.tree_structure(0)


# ----------------------------------------------------------------------------------------
# Checking what a callback returns


def _describe(node):
    """A short description of a pytree node for messages: 'a tuple of 2 elements'."""
    data = node.node_data()
    if data is None:
        return "an array"
    typ, aux = data
    n = len(node.children())
    if typ is type(None):
        return "None"
    if typ is dict or issubclass(typ, dict):
        return f"a dict with keys {list(aux)}"
    return f"a {typ.__name__} of {n} element{'s' if n != 1 else ''}"


def _seq_kind(typ):
    return typ is tuple or typ is list or issubclass(typ, tuple)


def _structure_difference(declared, actual, path="the top level"):
    """None if `actual` (a PyTreeDef) has the structure of `declared`, else a sentence.

    Tuples, lists and namedtuples are interchangeable (a host function returning
    `np.linalg.eigh(x)` for a declared pair is fine), `None` and `()` both mean "no
    result"; otherwise node types, lengths and dict keys must agree.
    """
    d_data, a_data = declared.node_data(), actual.node_data()
    if d_data is None or a_data is None:
        if d_data is None and a_data is None:
            return None
        return f"expected {_describe(declared)} at {path}, got {_describe(actual)}"
    (d_typ, d_aux), (a_typ, a_aux) = d_data, a_data
    d_kids, a_kids = declared.children(), actual.children()
    empty = {type(None), tuple}
    if not d_kids and not a_kids and d_typ in empty and a_typ in empty:
        return None
    same_kind = (_seq_kind(d_typ) and _seq_kind(a_typ)) or (
        issubclass(d_typ, dict) and issubclass(a_typ, dict)
    )
    if not same_kind and (d_typ is not a_typ or d_aux != a_aux):
        return f"expected {_describe(declared)} at {path}, got {_describe(actual)}"
    if issubclass(d_typ, dict) and list(d_aux) != list(a_aux):
        return f"expected {_describe(declared)} at {path}, got {_describe(actual)}"
    if len(d_kids) != len(a_kids):
        return f"expected {_describe(declared)} at {path}, got {_describe(actual)}"
    keys = list(d_aux) if issubclass(d_typ, dict) else range(len(d_kids))
    for k, d, a in zip(list(keys), d_kids, a_kids):
        sub = f"{'' if path == 'the top level' else path}[{k!r}]"
        diff = _structure_difference(d, a, sub)
        if diff is not None:
            return diff
    return None


def _declared_pytree(result_tree, result_avals):
    sds = [ShapeDtypeStruct(a.shape, a.dtype) for a in result_avals]
    return tree_util.tree_unflatten(result_tree, sds)


def _result_error(msg, cb, result_avals, leaf=None):
    """JAX's error for a result that does not match `result_shape_dtypes` (a
    JaxRuntimeError, with JAX's phrase), naming the host function and the first
    mismatching leaf `leaf` (its index among the declared leaves)."""
    declared = _declared_pytree(cb.result_tree, result_avals)
    where = ""
    if leaf is not None and cb.result_tree.num_leaves > 1:
        path, _ = tree_util.tree_flatten_with_path(declared)[0][leaf]
        leaf_name = f"result_shape_dtypes{tree_util.keystr(path)}"
        where = f" The first mismatching leaf is {leaf_name}."
    return errors.JaxRuntimeError(
        f"{errors.CALLBACK_ERROR_PREFIX}{msg}\nThe host function "
        f"{_fn_name(cb.callback_func)} called by jaxlite.{cb.what} returned a value "
        f"that does not match its declared result_shape_dtypes {declared!r}.{where}"
    )


def _as_result_leaf(r):
    """A returned leaf as a NumPy value in its canonical dtype (no copy yet: the checked
    value of anything but an Array goes through `owned_buffer`)."""
    t = type(r)
    if t is Array:
        return r._value
    if t is np.ndarray or isinstance(r, np.generic):
        v = r
    else:
        v = np.asarray(r)
    dt = dtypes.canonicalize_dtype(v.dtype)
    if dt != v.dtype:
        v = v.astype(dt)
    return v


def _check_result(cb, result_avals, result, args=()):
    """The flat, checked outputs of a callback that returned `result` when called on
    `args` (jaxlite's buffers: a result viewing them is not copied).

    As in JAX, the result's leaves are compared with the declared ones (their number,
    then each shape and dtype): the pytree structure itself is not (a list for a
    declared tuple, a namedtuple for a pair are fine). A wrong number of leaves is
    explained with the first place where the structures differ.
    """
    leaves, tree = tree_util.tree_flatten(result)
    if len(leaves) != len(result_avals):
        diff = _structure_difference(cb.result_tree, tree)
        msg = (
            "Mismatched number of outputs from callback. Expected: "
            f"{len(result_avals)}, Actual: {len(leaves)}"
        )
        raise _result_error(msg + (f" ({diff})" if diff else ""), cb, result_avals)
    outs = []
    for i, (r, aval) in enumerate(zip(leaves, result_avals)):
        v = _as_result_leaf(r)
        if v.shape != aval.shape:
            raise _result_error(
                f"Incorrect output shape for return value #{i}: Expected: "
                f"{aval.shape}, Actual: {v.shape}",
                cb,
                result_avals,
                i,
            )
        if v.dtype != aval.dtype:
            raise _result_error(
                f"Incorrect output dtype for return value #{i}: Expected: "
                f"{aval.dtype}, Actual: {v.dtype}",
                cb,
                result_avals,
                i,
            )
        outs.append(v if type(r) is Array else owned_buffer(v, r, args))
    return outs


def _fast_result(r, aval, args):
    """`r` (or its copy, see `owned_buffer`) if it is already a NumPy value or an
    Array of `aval`'s shape and dtype, else None."""
    t = type(r)
    if t is np.ndarray:
        if r.shape == aval.shape and r.dtype == aval.dtype:
            return owned_buffer(r, r, args)
    elif t is Array:
        v = r._value
        if v.shape == aval.shape and v.dtype == aval.dtype:
            return v
    elif t is aval.dtype.type and not aval.shape:
        return r
    return None


def _result_checker(cb, result_avals):
    """`check(result, args) -> list of outputs`, with a fast path for one array
    (`args`: the buffers the callback was called on)."""
    if len(result_avals) == 1 and cb.result_tree.num_nodes == 1:
        (aval,) = result_avals
        shape, dtype = aval.shape, aval.dtype
        scalar_type = dtype.type if not shape else None

        def check_one(r, args):
            t = type(r)
            if t is np.ndarray:
                if r.shape == shape and r.dtype == dtype:
                    return [owned_buffer(r, r, args)]
            elif t is Array:
                v = r._value
                if v.shape == shape and v.dtype == dtype:
                    return [v]
            elif t is scalar_type:
                return [r]
            return _check_result(cb, result_avals, r, args)

        return check_one

    def check(r, args):
        return _check_result(cb, result_avals, r, args)

    return check


# ----------------------------------------------------------------------------------------
# Callback objects: the `callback` parameter of the equations
#
# They are unhashable on purpose: the eager evaluator then skips its per-parameter cache,
# which would otherwise keep every callback closure alive.


class _FlatCallback:
    """The user's function with the pytree structure of its arguments.

    `host_fn(result_avals)` is what runs: NumPy values in, checked NumPy values out.
    """

    __slots__ = (
        "callback_func",
        "in_tree",
        "static_args",
        "result_tree",
        "what",
        "_positional",
        "_fns",
    )
    __hash__ = None

    def __init__(self, callback_func, in_tree, result_tree, what, static_args=()):
        self.callback_func = callback_func
        self.in_tree = in_tree
        self.static_args = static_args
        self.result_tree = result_tree
        self.what = what
        n = in_tree.num_leaves
        self._positional = not static_args and in_tree == _positional_tree(n)
        self._fns = {}

    def __repr__(self):
        return (
            f"_FlatCallback(callback_func={_masked_repr(self.callback_func)}, "
            f"in_tree={self.in_tree!r})"
        )

    def call(self, vals):
        """Call the user's function on the flat (dynamic) values."""
        if self._positional:
            return self.callback_func(*vals)
        leaves = _merge_static(vals, self.static_args)
        args, kwargs = tree_util.tree_unflatten(self.in_tree, leaves)
        return self.callback_func(*args, **kwargs)

    def host_fn(self, result_avals):
        fn = self._fns.get(result_avals)
        if fn is None:
            fn = self._fns[result_avals] = _build_host_fn(self, result_avals)
        return fn


class _PlacedCallback(_FlatCallback):
    """A callback whose `sharding` picks the process that runs it, in a program of
    several processes: there only, its results broadcast (`distributed/callbacks.py`)."""

    __slots__ = ("owner",)

    def host_fn(self, result_avals):
        fn = self._fns.get(result_avals)
        if fn is None:
            fn = self._fns[result_avals] = on_owner(
                _build_host_fn(self, result_avals), self.owner, result_avals, self.what
            )
        return fn


class _DebugFlatCallback(_FlatCallback):
    """A `debug.callback` function: its result is ignored. Prints as JAX's does."""

    __slots__ = ()

    def __repr__(self):
        return (
            "<function debug_callback.<locals>._debug_callback.<locals>._flat_callback "
            "at 0xXXXXXXXXXXXX>"
        )


def _merge_static(vals, static_args):
    if not static_args:
        return list(vals)
    out = [None] * (len(vals) + len(static_args))
    static = dict(static_args)
    it = iter(vals)
    for i in range(len(out)):
        out[i] = static[i] if i in static else next(it)
    return out


def _build_host_fn(cb, result_avals):
    """The host function of a callback equation: NumPy values (jaxlite's buffers) in,
    checked NumPy values out. The user's function receives them as Arrays."""
    fn = cb.callback_func
    what = cb.what
    positional = cb._positional
    check = _result_checker(cb, result_avals) if cb.result_tree is not None else None

    # The user's function runs under NumPy's default floating-point warnings (see
    # `util.default_fp`), not the quiet state of the compiled code calling it.
    def call_in_eval_trace(args):
        with set_current_trace(eval_trace):
            token = default_fp()
            try:
                return cb.call(args)
            except BaseException as e:
                raise _host_error(e, fn, what)  # noqa: B904 (its cause is e)
            finally:
                restore_fp(token)

    if check is None:  # debug callbacks: the result is ignored

        def host_debug(*vals):
            args = [Array(v) for v in vals]
            if _state.trace is not eval_trace:
                call_in_eval_trace(args)
                return []
            token = default_fp()
            try:
                if positional:
                    fn(*args)
                else:
                    cb.call(args)
            except BaseException as e:
                raise _host_error(e, fn, what)  # noqa: B904 (its cause is e)
            finally:
                restore_fp(token)
            return []

        return host_debug

    if positional and cb.in_tree.num_leaves == 1:

        def host_one(v):
            if _state.trace is not eval_trace:
                return check(call_in_eval_trace([Array(v)]), (v,))
            token = default_fp()
            try:
                r = fn(Array(v))
            except BaseException as e:
                raise _host_error(e, fn, what)  # noqa: B904 (its cause is e)
            finally:
                restore_fp(token)
            return check(r, (v,))

        return host_one

    def host(*vals):
        args = [Array(v) for v in vals]
        if _state.trace is not eval_trace:
            return check(call_in_eval_trace(args), vals)
        token = default_fp()
        try:
            r = fn(*args) if positional else cb.call(args)
        except BaseException as e:
            raise _host_error(e, fn, what)  # noqa: B904 (its cause is e)
        finally:
            restore_fp(token)
        return check(r, vals)

    return host


class _SequentialCallback:
    """A callback looping over a vmap batch: one call per element, in batch order.

    `inner` is the unbatched callback with its `inner_avals`; `batched[i]` says whether
    operand i carries the batch on axis 0 (the others are passed whole to every call).
    """

    __slots__ = ("inner", "inner_avals", "batched", "axis_size", "_fns")
    __hash__ = None

    def __init__(self, inner, inner_avals, batched, axis_size):
        self.inner = inner
        self.inner_avals = tuple(inner_avals)
        self.batched = tuple(batched)
        self.axis_size = axis_size
        self._fns = {}

    def __repr__(self):
        return repr(self.inner)

    def host_fn(self, result_avals):
        fn = self._fns.get(result_avals)
        if fn is None:
            fn = self._fns[result_avals] = _build_sequential(self, result_avals)
        return fn


def _build_sequential(seq, result_avals):
    inner = seq.inner.host_fn(seq.inner_avals)
    batched = seq.batched
    size = seq.axis_size
    specs = [(a.shape, a.dtype) for a in result_avals]
    one_arg = batched == (True,)

    def host_sequential(*vals):
        outs = [np.empty(shape, dtype) for shape, dtype in specs]
        i = 0
        try:
            if one_arg:
                (v,) = vals
                for i in range(size):
                    for o, r in unsafe_zip(outs, inner(v[i, ...])):
                        o[i] = r
            else:
                for i in range(size):
                    args = [v[i, ...] if b else v for v, b in unsafe_zip(vals, batched)]
                    for o, r in unsafe_zip(outs, inner(*args)):
                        o[i] = r
        except BaseException as e:
            e.add_note(f"(at vmap batch index {i} of {size})")
            raise
        for o in outs:
            o.flags.writeable = False
        return outs

    return host_sequential


# ----------------------------------------------------------------------------------------
# Shared rule pieces


def _is_nonzero_tangent(t):
    return type(t) is not ad.Zero and get_aval(t).dtype != dtypes.float0


def _move_batch_to_front(vals, dims):
    return [
        v if d is not_mapped else batching.moveaxis(v, d, 0) for v, d in zip(vals, dims)
    ]


def _batched_avals(avals, size):
    return tuple(ShapedArray((size, *a.shape), a.dtype) for a in avals)


def _callback_host_fn(params):
    return params["callback"].host_fn(tuple(params["result_avals"]))


def _callback_lowering(ctx, *args, **params):
    fn = ctx.add_global(_callback_host_fn(params), "host")
    return f"{fn}({', '.join(args)})"


def _warn_at_user_code(message, category):
    warnings.warn(message, category, stacklevel=dtypes._user_stacklevel())


# ----------------------------------------------------------------------------------------
# pure_callback


def _pure_callback_impl(*args, callback, result_avals, sharding, vmap_method):
    return callback.host_fn(result_avals)(*args)


def _pure_callback_abstract(*avals, callback, result_avals, sharding, vmap_method):
    return list(result_avals), no_effects


def _pure_callback_jvp(primals, tangents, **params):
    if any(_is_nonzero_tangent(t) for t in tangents):
        raise ValueError(PURE_JVP_MESSAGE)
    outs = pure_callback_p.bind(*primals, **params)
    return outs, [ad.Zero(ad.tangent_aval(get_aval(o))) for o in outs]


def _pure_callback_transpose(cts, *args, **params):
    raise ValueError(PURE_TRANSPOSE_MESSAGE)


def _pure_callback_batch(
    axis_size, vals, dims, *, callback, result_avals, sharding, vmap_method
):
    from jaxlite import lax

    vals = _move_batch_to_front(vals, dims)
    out_avals = _batched_avals(result_avals, axis_size)
    if vmap_method in ("sequential", "sequential_unrolled", None):
        if vmap_method is None:
            _warn_at_user_code(VMAP_NONE_DEPRECATION, DeprecationWarning)
        batched = [d is not not_mapped for d in dims]
        callback = _SequentialCallback(callback, result_avals, batched, axis_size)
    elif vmap_method in ("expand_dims", "broadcast_all"):
        size = 1 if vmap_method == "expand_dims" else axis_size
        vals = [
            lax.broadcast(v, (size,)) if d is not_mapped else v
            for v, d in zip(vals, dims)
        ]
    elif vmap_method != "legacy_vectorized":
        raise NotImplementedError(
            "vmap is only supported for the pure_callback primitive when vmap_method is "
            "one of 'sequential', 'sequential_unrolled', 'expand_dims', "
            f"'broadcast_all', or 'legacy_vectorized'. Got vmap_method={vmap_method!r}."
        )
    outs = pure_callback_p.bind(
        *vals,
        callback=callback,
        result_avals=out_avals,
        sharding=sharding,
        vmap_method=vmap_method,
    )
    return outs, [0] * len(outs)


# Each callback primitive is given keys as their uint32 data (`physical.on_data`).
pure_callback_p = Primitive("pure_callback", multiple_results=True)
impl_rules[pure_callback_p] = _pure_callback_impl
abstract_eval_rules[pure_callback_p] = _pure_callback_abstract
lowering_rules[pure_callback_p] = _callback_lowering
native_rules[pure_callback_p] = "host_call"
host_functions[pure_callback_p] = _callback_host_fn
ad.jvp_rules[pure_callback_p] = _pure_callback_jvp
ad.transpose_rules[pure_callback_p] = _pure_callback_transpose
batching.batch_rules[pure_callback_p] = _pure_callback_batch
physical_rules[pure_callback_p] = physical.on_data(pure_callback_p)


# ----------------------------------------------------------------------------------------
# io_callback


def _io_callback_impl(*args, callback, ordered, result_avals, sharding):
    return callback.host_fn(result_avals)(*args)


def _io_callback_abstract(*avals, callback, ordered, result_avals, sharding):
    return list(result_avals), {effects.OrderedIO if ordered else effects.IO}


def _io_callback_jvp(primals, tangents, **params):
    if any(_is_nonzero_tangent(t) for t in tangents):
        raise ValueError(IO_JVP_MESSAGE)
    outs = io_callback_p.bind(*primals, **params)
    return outs, [ad.Zero(ad.tangent_aval(get_aval(o))) for o in outs]


def _io_callback_transpose(cts, *args, **params):
    raise ValueError(IO_TRANSPOSE_MESSAGE)


def _io_callback_batch(
    axis_size, vals, dims, *, callback, ordered, result_avals, sharding
):
    if ordered:
        raise ValueError(IO_VMAP_MESSAGE)
    vals = _move_batch_to_front(vals, dims)
    batched = [d is not not_mapped for d in dims]
    outs = io_callback_p.bind(
        *vals,
        callback=_SequentialCallback(callback, result_avals, batched, axis_size),
        ordered=False,
        result_avals=_batched_avals(result_avals, axis_size),
        sharding=sharding,
    )
    return outs, [0] * len(outs)


io_callback_p = Primitive("io_callback", multiple_results=True)
impl_rules[io_callback_p] = _io_callback_impl
abstract_eval_rules[io_callback_p] = _io_callback_abstract
lowering_rules[io_callback_p] = _callback_lowering
native_rules[io_callback_p] = "host_call"
host_functions[io_callback_p] = _callback_host_fn
ad.jvp_rules[io_callback_p] = _io_callback_jvp
ad.transpose_rules[io_callback_p] = _io_callback_transpose
batching.batch_rules[io_callback_p] = _io_callback_batch
physical_rules[io_callback_p] = physical.on_data(io_callback_p)


# ----------------------------------------------------------------------------------------
# debug_callback


def _debug_callback_impl(*args, callback, effect, partitioned):
    return callback.host_fn(())(*args)


def _debug_callback_abstract(*avals, callback, effect, partitioned):
    return [], {effect}


def _debug_callback_jvp(primals, tangents, **params):
    debug_callback_p.bind(*primals, **params)
    return [], []


def _debug_callback_transpose(cts, *args, **params):
    return [None] * len(args)


def _debug_callback_batch(axis_size, vals, dims, *, callback, effect, partitioned):
    vals = _move_batch_to_front(vals, dims)
    batched = [d is not not_mapped for d in dims]
    debug_callback_p.bind(
        *vals,
        callback=_SequentialCallback(callback, (), batched, axis_size),
        effect=effect,
        partitioned=partitioned,
    )
    return [], []


def _debug_callback_host_fn(params):
    return params["callback"].host_fn(())


def _debug_callback_lowering(ctx, *args, **params):
    fn = ctx.add_global(_debug_callback_host_fn(params), "debug")
    return f"{fn}({', '.join(args)})"


debug_callback_p = Primitive("debug_callback", multiple_results=True)
impl_rules[debug_callback_p] = _debug_callback_impl
abstract_eval_rules[debug_callback_p] = _debug_callback_abstract
lowering_rules[debug_callback_p] = _debug_callback_lowering
native_rules[debug_callback_p] = "host_call"
host_functions[debug_callback_p] = _debug_callback_host_fn
ad.jvp_rules[debug_callback_p] = _debug_callback_jvp
ad.transpose_rules[debug_callback_p] = _debug_callback_transpose
batching.batch_rules[debug_callback_p] = _debug_callback_batch
physical_rules[debug_callback_p] = physical.on_data(debug_callback_p)


# ----------------------------------------------------------------------------------------
# debug_print: formatting happens on the host, at run time, under the NumPy print
# options captured when the print was traced.


class _PrintArray(Array):
    """An Array as `debug.print` formats it: `{}` of a scalar formats the NumPy scalar
    (float32 shows float64 digits, as JAX prints), `{!r}` is the Array repr."""

    __slots__ = ()

    def __format__(self, spec):
        v = self._value
        return format(v[()] if np.ndim(v) == 0 else v, spec)


class _PrintCallback:
    """The host side of one `debug.print`: format the values and write the line."""

    __slots__ = (
        "fmt",
        "has_placeholders",
        "in_tree",
        "static_args",
        "np_printoptions",
        "logging_record",
    )
    __hash__ = None

    def __init__(
        self,
        fmt,
        has_placeholders,
        in_tree,
        static_args,
        np_printoptions,
        logging_record,
    ):
        self.fmt = fmt
        self.has_placeholders = has_placeholders
        self.in_tree = in_tree
        self.static_args = static_args
        self.np_printoptions = np_printoptions
        self.logging_record = logging_record

    def __repr__(self):
        return (
            "<function debug_callback.<locals>._debug_callback.<locals>._flat_callback "
            "at 0xXXXXXXXXXXXX>"
        )

    def host_fn(self, result_avals=()):
        def host_print(*vals):
            _format_and_write(self, vals)
            return []

        return host_print


def _format_and_write(pc, vals):
    """Format `vals` (and the static arguments) with `pc.fmt`, write the line."""
    if _state.trace is not eval_trace:  # `{x[0]}` indexes an Array: eagerly
        with set_current_trace(eval_trace):
            return _format_and_write(pc, vals)
    leaves = _merge_static([_PrintArray(v) for v in vals], pc.static_args)
    args, kwargs = tree_util.tree_unflatten(pc.in_tree, leaves)
    try:
        if pc.has_placeholders:
            options = pc.np_printoptions
            if tuple(np.get_printoptions().items()) == options:
                msg = pc.fmt.format(*args, **kwargs)
            else:
                with np.printoptions(**dict(options)):
                    msg = pc.fmt.format(*args, **kwargs)
        else:
            msg = " ".join((pc.fmt, *(str(a) for a in args)))
    except BaseException as e:
        note = f"(raised while formatting jaxlite.debug.print({pc.fmt!r}, ...))"
        raise errors.callback_error(e, note)  # noqa: B904 (its cause is e)
    if pc.logging_record is not None:
        _log(pc.logging_record, msg)
        return
    out = sys.stdout
    out.write(msg + "\n")
    out.flush()


def _log(record, msg):
    import logging

    logger = logging.getLogger("jaxlite.debug")
    filename, lineno = record
    rec = logger.makeRecord(logger.name, logging.INFO, filename, lineno, msg, (), None)
    logger.handle(rec)


def _print_callback_of(params):
    return _PrintCallback(
        params["fmt"],
        params["has_placeholders"],
        params["in_tree"],
        params["static_args"],
        params["np_printoptions"],
        params["logging_record"],
    )


def _debug_print_impl(*args, **params):
    _format_and_write(_print_callback_of(params), args)
    return []


def _debug_print_abstract(*avals, ordered, **params):
    return [], {effects.OrderedDebug if ordered else effects.Debug}


def _debug_print_jvp(primals, tangents, **params):
    debug_print_p.bind(*primals, **params)
    return [], []


def _debug_print_batch(axis_size, vals, dims, **params):
    vals = _move_batch_to_front(vals, dims)
    batched = [d is not not_mapped for d in dims]
    printer = _print_callback_of(params)
    debug_callback_p.bind(
        *vals,
        callback=_SequentialCallback(printer, (), batched, axis_size),
        effect=effects.OrderedDebug if params["ordered"] else effects.Debug,
        partitioned=params["partitioned"],
    )
    return [], []


def _debug_print_host_fn(params):
    return _print_callback_of(params).host_fn()


def _debug_print_lowering(ctx, *args, **params):
    fn = ctx.add_global(_debug_print_host_fn(params), "print")
    return f"{fn}({', '.join(args)})"


debug_print_p = Primitive("debug_print", multiple_results=True)
impl_rules[debug_print_p] = _debug_print_impl
abstract_eval_rules[debug_print_p] = _debug_print_abstract
lowering_rules[debug_print_p] = _debug_print_lowering
native_rules[debug_print_p] = "host_call"
host_functions[debug_print_p] = _debug_print_host_fn
ad.jvp_rules[debug_print_p] = _debug_print_jvp
ad.transpose_rules[debug_print_p] = _debug_callback_transpose
batching.batch_rules[debug_print_p] = _debug_print_batch
physical_rules[debug_print_p] = physical.on_data(debug_print_p)


# ----------------------------------------------------------------------------------------
# The public functions


_SIMPLE_SPEC_TYPES = (np.ndarray, np.generic, Array, Tracer)


def _result_avals(result_shape_dtypes, what):
    """(flat ShapedArrays, PyTreeDef) of a `result_shape_dtypes` pytree."""
    if type(result_shape_dtypes) is ShapeDtypeStruct or isinstance(
        result_shape_dtypes, _SIMPLE_SPEC_TYPES
    ):
        leaves, tree = [result_shape_dtypes], _LEAF_TREE
    else:
        leaves, tree = tree_util.tree_flatten(result_shape_dtypes)
    avals = []
    for i, leaf in enumerate(leaves):
        shape = getattr(leaf, "shape", None)
        dtype = getattr(leaf, "dtype", None)
        if shape is None or dtype is None:
            raise TypeError(
                f"result_shape_dtypes of {what} must be a pytree of values with `shape` "
                f"and `dtype` (such as jax.ShapeDtypeStruct), but leaf {i} is {leaf!r} "
                f"of type {type(leaf)}."
            )
        dt = np.dtype(dtype)
        if dtypes.canonicalize_dtype(dt) != dt:
            raise ValueError(
                "result_shape_dtypes cannot specify 64-bit types when `jax_enable_x64` "
                "is disabled"
            )
        avals.append(ShapedArray(shape, dt))
    return tuple(avals), tree


def _check_sharding(sharding, what):
    if sharding is None:
        return
    from jaxlite.api import SingleDeviceSharding

    if not isinstance(sharding, SingleDeviceSharding):
        raise NotImplementedError(
            f"{what} only supports SingleDeviceSharding, but got {type(sharding)}"
        )


def _flatten_args(args, kwargs):
    """Flat leaves and the PyTreeDef of `(args, kwargs)`; cheap for plain arrays."""
    if not kwargs and all(type(a) is Array or isinstance(a, Tracer) for a in args):
        return list(args), None
    return tree_util.tree_flatten((args, kwargs))


def _call_eagerly(cb, result_avals, leaves):
    """Run a callback right away (the eval trace is current): call the user's function
    on Arrays and wrap its checked, owned results as Arrays."""
    args = [_eager_arg(x) for x in leaves]
    try:
        r = cb.callback_func(*args) if cb._positional else cb.call(args)
    except BaseException as e:
        raise _host_error(e, cb.callback_func, cb.what)  # noqa: B904
    # Every argument is jaxlite's own buffer: a result viewing one stays a view.
    private = [a._value for a in args]
    if len(result_avals) == 1 and cb.result_tree is _LEAF_TREE:
        out = _fast_result(r, result_avals[0], private)
        if out is not None:
            return [Array(out)]
    return [Array(o) for o in _check_result(cb, result_avals, r, private)]


def _callback(
    prim, what, callback, result_shape_dtypes, args, kwargs, make_params, sharding
):
    """Stage (or, eagerly, run) a pure or io callback; `make_params(cb, avals)` gives the
    equation's parameters in the order JAX prints them."""
    if not callable(callback):
        raise TypeError(
            f"first argument to {what} must be callable, but got an object of type "
            f"{type(callback)}"
        )
    leaves, in_tree = _flatten_args(args, kwargs)
    _check_args(leaves, what)
    if in_tree is None:
        in_tree = _positional_tree(len(leaves))
    result_avals, result_tree = _result_avals(result_shape_dtypes, what)
    owner = owner_of(sharding)
    if owner is None:
        cb = _FlatCallback(callback, in_tree, result_tree, what)
    else:
        cb = _PlacedCallback(callback, in_tree, result_tree, what)
        cb.owner = owner
    if (
        owner is None
        and _state.trace is eval_trace
        and not any(isinstance(x, Tracer) for x in leaves)
    ):
        outs = _call_eagerly(cb, result_avals, leaves)
    else:
        outs = prim.bind(*leaves, **make_params(cb, result_avals))
    return tree_util.tree_unflatten(result_tree, outs)


class _NotGiven:
    def __repr__(self):
        return "<not given>"


_NOT_GIVEN = _NotGiven()


def pure_callback(
    callback,
    result_shape_dtypes,
    *args,
    sharding=None,
    vmap_method=None,
    vectorized=_NOT_GIVEN,
    **kwargs,
):
    """Call the pure Python function `callback(*args, **kwargs)` from jaxlite code.

    `callback` receives jaxlite Arrays (sharing memory with jaxlite's buffers: NumPy
    and SciPy functions take them without copies) and must return arrays whose
    flattened leaves match those of `result_shape_dtypes` (a pytree of
    `ShapeDtypeStruct`-like values). It must be pure: an unused call may be removed,
    and `vmap_method` says how `vmap` runs it ("sequential", "sequential_unrolled",
    "expand_dims", "broadcast_all" or "legacy_vectorized"). Differentiating through it
    needs `custom_jvp`/`custom_vjp`. An exception it raises reaches the caller as a
    `JaxRuntimeError` that is also of its own type (`except ValueError` works).
    `sharding` (a `SingleDeviceSharding`) names the device that runs it: across
    processes, only that device's process, whose results every process receives.
    """
    if vectorized is not _NOT_GIVEN:
        if vmap_method is not None:
            raise ValueError(
                "the vectorized and vmap_method arguments of jax.pure_callback cannot "
                "be used together. Please use the vmap_method argument."
            )
        _warn_at_user_code(VECTORIZED_DEPRECATION, DeprecationWarning)
        vmap_method = "legacy_vectorized" if vectorized else "sequential"
    if vmap_method not in VMAP_METHODS:
        raise ValueError(
            f"vmap_method must be on of the allowed methods {VMAP_METHODS}, but got: "
            f"{vmap_method}"
        )
    _check_sharding(sharding, "pure_callback")

    def make_params(cb, result_avals):
        return dict(
            callback=cb,
            result_avals=result_avals,
            sharding=sharding,
            vmap_method=vmap_method,
        )

    return _callback(
        pure_callback_p,
        "pure_callback",
        callback,
        result_shape_dtypes,
        args,
        kwargs,
        make_params,
        sharding,
    )


def io_callback(
    callback, result_shape_dtypes, *args, sharding=None, ordered=False, **kwargs
):
    """Call the impure Python function `callback(*args, **kwargs)` from jaxlite code.

    Like `pure_callback` but with an `IO` effect (`OrderedIO` when `ordered=True`):
    the call is never removed, and ordered calls keep program order. It cannot be
    differentiated, and an ordered one cannot be vmapped. `result_shape_dtypes=None`
    means the callback returns None.
    """
    for name in ("vmap_method", "vectorized"):
        if name in kwargs:
            raise TypeError(
                f"io_callback got the keyword argument {name!r}, which only "
                "pure_callback takes; under vmap an unordered io_callback runs once per "
                "element. (Pass it inside a dict if your callback really takes it.)"
            )
    _check_sharding(sharding, "io_callback")
    ordered = bool(ordered)

    def make_params(cb, result_avals):
        return dict(
            callback=cb, ordered=ordered, result_avals=result_avals, sharding=sharding
        )

    return _callback(
        io_callback_p,
        "io_callback",
        callback,
        result_shape_dtypes,
        args,
        kwargs,
        make_params,
        sharding,
    )


def effects_barrier():
    """Wait until every effect issued so far has happened. In jaxlite callbacks run
    synchronously, in program order, so there is never anything to wait for."""


# ----------------------------------------------------------------------------------------
# For the control-flow batching rules: a batched cond (and so a while loop with a batched
# predicate, whose iterations are batched conds) whose branches call the host runs
# element by element.


def batch_sequentially(prim, axis_size, vals, dims, params):
    """A batching rule's answer computed one batch element at a time.

    Binds `prim` (a cond, ...) once per element with that element's operands, inside a
    `lax.map`, so a callback in a branch runs only for the elements that take the
    branch. Returns `(outs, out_dims)` with every output batched at 0. Ordered IO
    callbacks cannot be vmapped (JAX's ValueError), whatever the method.
    """
    from jaxlite import lax

    for j in subjaxprs(params):
        if effects.OrderedIO in j.effects:
            raise ValueError(IO_VMAP_MESSAGE)
    vals = _move_batch_to_front(vals, dims)
    is_batched = [d is not not_mapped for d in dims]
    unbatched, batched = partition_list(is_batched, vals)

    def one_element(xs):
        outs = prim.bind(*merge_lists(is_batched, unbatched, list(xs)), **params)
        return list(outs) if prim.multiple_results else [outs]

    outs = lax.map(one_element, batched)
    return list(outs), [0] * len(outs)


# The backend keeps host calls in loop bodies (no hoisting, no sinking past them).
host_call_primitives.update(
    (pure_callback_p, io_callback_p, debug_callback_p, debug_print_p)
)
