"""`jit`: trace once per argument signature, compile, and call the compiled function.

The cache key is (pytree structure of the arguments, each leaf's shape/dtype/weak_type,
the static arguments, the config options that change tracing). On a miss the Python
function is traced to a jaxpr (its Python side effects happen only then), dead code is
removed, and the backend compiles it. On a hit, the call is: flatten, look up, run.

Under another transformation (jit inside jit, grad of jit, vmap of jit) the function is
staged as one `jit` equation holding its jaxpr, which that transformation then processes.
"""

from __future__ import annotations

import functools
import inspect
import weakref

import numpy as np

from jaxlite import backend, cache_misses, tree_util
from jaxlite.backend import lowering_rules
from jaxlite.config import config
from jaxlite.core import (
    Array,
    Primitive,
    ShapedArray,
    Tracer,
    _state,
    abstract_eval_rules,
    dce_closed_jaxpr,
    eval_trace,
    impl_rules,
    jaxpr_as_fun,
    pp_call_primitives,
)
from jaxlite.debug_nans import call_primitives, check_jit_outputs
from jaxlite.errors import UnexpectedTracerError
from jaxlite.interpreters import ad, batching
from jaxlite.interpreters.partial_eval import debug_info, trace_to_jaxpr

# ----------------------------------------------------------------------------------------
# The `jit` primitive: a call of a closed jaxpr.


def _jit_impl(*args, name, jaxpr):
    return backend.compile(jaxpr)(*args)


def _jit_abstract(*avals, name, jaxpr):
    return list(jaxpr.out_avals), jaxpr.effects


def _jit_lowering(ctx, *args, name, jaxpr):
    exe = backend.compile(jaxpr)
    fn = ctx.add_global(exe.fun, "jit")
    return f"{fn}({', '.join(args)})"


jit_p = Primitive("jit", multiple_results=True)
impl_rules[jit_p] = _jit_impl
abstract_eval_rules[jit_p] = _jit_abstract
lowering_rules[jit_p] = _jit_lowering
pp_call_primitives.add(jit_p)
call_primitives.add(jit_p)  # debug_nans: re-run equation by equation on a NaN
ad.jvp_rules[jit_p] = ad.jvp_of_jaxpr_rule
ad.transpose_rules[jit_p] = lambda cts, *args, name, jaxpr: ad.transpose_jaxpr_call(
    cts, args, jaxpr
)
batching.batch_rules[jit_p] = batching.batch_jaxpr_rule(jit_p)


# ----------------------------------------------------------------------------------------
# Arguments


def _leaf_signature(x):
    """The part of a jit cache key that one argument leaf contributes."""
    t = type(x)
    if t is Array:
        v = x._value
        return (v.shape, v.dtype, x.weak_type)
    if t is float or t is int or t is bool or t is complex:
        return t
    if t is np.ndarray or isinstance(x, np.generic):
        return (x.shape, x.dtype, False)
    aval = getattr(x, "aval", None)  # a Tracer, or a ShapeDtypeStruct (`lower`)
    if isinstance(aval, ShapedArray):
        return (aval.shape, aval.dtype, aval.weak_type)
    return None


def _to_numpy(x):
    """The NumPy value the compiled function receives for an argument leaf."""
    t = type(x)
    if t is Array:
        return x._value
    if isinstance(x, Tracer):
        raise UnexpectedTracerError.escaped(x, "jit")
    if t is np.ndarray:
        from jaxlite import dtypes

        return np.array(x, dtypes.canonicalize_dtype(x.dtype))
    from jaxlite import dtypes

    try:
        return dtypes.coerce_to_array(x)[()]
    except TypeError:
        if isinstance(getattr(x, "aval", None), ShapedArray):  # a token: no data
            return None
        raise


def _check_hashable(value, argname):
    try:
        hash(value)
    except TypeError as e:
        raise ValueError(
            "Non-hashable static arguments are not supported. An error occurred while "
            f"trying to hash an object of type {type(value)}, {value}. The error was:\n"
            f"TypeError: {e}\n"
            f"(static argument {argname}; pass a hashable value such as a tuple, or make "
            "the argument a traced array instead of a static one.)"
        ) from None


def _flatten_arrays(x, vals, sig):
    """For the hot path: append the leaves of `x`, a pytree of dicts, lists, tuples
    and None over Arrays, to `vals` in `tree_flatten`'s order (dict keys sorted), and
    its structure and leaf signatures to `sig`. False for any other pytree."""
    t = type(x)
    if t is dict:
        try:
            keys = tuple(sorted(x))
        except TypeError:
            return False
        sig.append((dict, keys))
        children = [x[k] for k in keys]
    elif t is list or t is tuple:
        sig.append((t, len(x)))
        children = x
    elif t is Array:
        children = (x,)
    elif x is None:
        sig.append(None)
        return True
    else:
        return False
    for c in children:
        if type(c) is Array:
            v = c._value
            vals.append(v)
            sig += (v.shape, v.dtype, c.weak_type)
        elif not _flatten_arrays(c, vals, sig):
            return False
    return True


class _JitCache:
    """Compiled entries of one function under one set of jit options.

    `entries` maps the full key (argument structure, leaf signatures, static arguments,
    tracing config) to `(closed_jaxpr, executable, out_tree, out_weak)`. `fast` maps the
    signature of an all-Array positional call straight to what the hot path needs.
    """

    __slots__ = ("entries", "fast")

    def __init__(self):
        self.entries = {}
        self.fast = {}


# Caches are shared by every `jit(f)` of the same function with the same options, as in
# JAX: `jit(f)(x)` twice traces `f` once. They live as long as the function does.
_jit_caches: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _shared_cache(fun, options):
    try:
        per_fun = _jit_caches.get(fun)
        if per_fun is None:
            per_fun = _jit_caches[fun] = {}
    except TypeError:  # not weak-referenceable or not hashable: a private cache
        return _JitCache()
    cache = per_fun.get(options)
    if cache is None:
        cache = per_fun[options] = _JitCache()
    return cache


class JitFunction:
    """The result of `jit(fun)`: callable, with `lower`, `trace` and `eval_shape`."""

    def __init__(
        self,
        fun,
        static_argnums=(),
        static_argnames=(),
        donate_argnums=(),
        inline=False,
    ):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self._inline = inline  # under a trace, record the equations, not a jit call
        self._signature = _signature_or_none(fun)
        self.static_argnums, self.static_argnames = _resolve_static(
            self._signature, static_argnums, static_argnames
        )
        self.donate_argnums = donate_argnums
        self._has_static = bool(self.static_argnums or self.static_argnames)
        shared = _shared_cache(fun, (self.static_argnums, self.static_argnames))
        self._cache = shared.entries
        self._fast = shared.fast
        self._name = getattr(fun, "__name__", type(fun).__name__)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __repr__(self):
        return f"<jaxlite.jit of {self.fun!r}>"

    # -- the hot path -----------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        if config.jit_slow_path:  # disable_jit or debug_nans/infs: see _call_debug
            return self._call_debug(args, kwargs)
        if not kwargs and _state.trace is eval_trace:
            # Fast path: positional Arrays (or dicts, lists and tuples of them) whose
            # signature was seen before; static ones enter the key as (type, value).
            vals = []
            sig = [config.trace_context]
            static = self.static_argnums
            for i, a in enumerate(args):
                if static and i in static:
                    sig.append((type(a), a))
                elif type(a) is Array:
                    v = a._value
                    vals.append(v)
                    sig += (v.shape, v.dtype, a.weak_type)
                elif not _flatten_arrays(a, vals, sig):
                    break
            else:
                try:
                    hit = self._fast.get(tuple(sig))
                except TypeError:  # an unhashable static argument: see the slow path
                    hit = None
                if hit is not None:
                    fun, out_weak, out_tree = hit
                    outs = fun(*vals)
                    if out_tree is None:
                        return Array(outs[0], out_weak[0])
                    return tree_util.tree_unflatten(
                        out_tree, [Array(o, w) for o, w in zip(outs, out_weak)]
                    )
        leaves, entry = self._lookup(args, kwargs)
        closed, exe, out_tree, out_weak = entry
        if _state.trace is eval_trace:
            outs = exe(*map(_to_numpy, leaves))
            outs = [Array(o, w) for o, w in zip(outs, out_weak)]
        elif self._inline:
            outs = jaxpr_as_fun(closed)(*leaves)
        else:
            outs = jit_p.bind(*leaves, name=self._name, jaxpr=closed)
        return tree_util.tree_unflatten(out_tree, outs)

    # debug_nans hook: the call path while jax_disable_jit, jax_debug_nans or
    # jax_debug_infs is on, kept off the hot path above.
    def _call_debug(self, args, kwargs):
        """Run the Python function (disable_jit), or the compiled call with its
        outputs checked for NaN/inf (see `jaxlite.debug_nans`)."""
        if config.disable_jit:
            return self.fun(*args, **kwargs)
        leaves, entry = self._lookup(args, kwargs)
        closed, exe, out_tree, out_weak = entry
        if _state.trace is not eval_trace:
            outs = jit_p.bind(*leaves, name=self._name, jaxpr=closed)
            return tree_util.tree_unflatten(out_tree, outs)
        cache_misses.check_execution(f"jit({self._name})")  # jax_no_execution
        vals = exe(*map(_to_numpy, leaves))
        check_jit_outputs(self.fun, self._name, args, kwargs, vals)
        outs = [Array(o, w) for o, w in zip(vals, out_weak)]
        return tree_util.tree_unflatten(out_tree, outs)

    def _lookup(self, args, kwargs):
        """Flatten the arguments and find (or trace and compile) their cache entry."""
        if kwargs or self._has_static:
            dyn_args, dyn_kwargs, statics = self._split_static(args, kwargs)
            leaves, treedef = tree_util.tree_flatten((dyn_args, dyn_kwargs))
        else:
            statics = ()
            leaves, treedef = tree_util.tree_flatten(args)
        sig = tuple(map(_leaf_signature, leaves))
        context = config.trace_context
        # Named axes in scope (vmap's axis_name): collectives bake their sizes in.
        key = (treedef, sig, statics, context, batching.axis_env())
        entry = self._cache.get(key)
        if entry is None:
            cache_misses.on_miss(self, key, args, kwargs)  # no_tracing, explain
            entry = self._compile(args, kwargs, leaves, treedef, sig)
            if entry[1] is None:  # closes over an enclosing trace's tracers: no caching
                return leaves, entry
            self._cache[key] = entry
            if not kwargs and not key[-1]:
                self._remember_fast(args, entry, context)
        return leaves, entry

    def _remember_fast(self, args, entry, context):
        static = self.static_argnums
        sig = [context]
        for i, a in enumerate(args):
            if i in static:
                sig.append((type(a), a))
            elif not _flatten_arrays(a, [], sig):
                return
        closed, exe, out_tree, out_weak = entry
        single = out_tree == tree_util.tree_structure(0)
        self._fast[tuple(sig)] = (
            exe.fun,
            tuple(out_weak),
            None if single else out_tree,
        )

    # -- tracing ----------------------------------------------------------------------------

    def _split_static(self, args, kwargs):
        if self._signature is not None and kwargs:
            bound = self._signature.bind(*args, **kwargs)
            args = list(bound.args)
            kwargs = dict(bound.kwargs)
            # Arguments given by keyword that could be positional stay keywords in JAX;
            # binding first normalises them so static_argnames works for either form.
        statics = []
        dyn_args = []
        for i, a in enumerate(args):
            if i in self.static_argnums:
                _check_hashable(a, f"at position {i}")
                statics.append((i, a))
            else:
                dyn_args.append(a)
        dyn_kwargs = {}
        for k in sorted(kwargs):
            if k in self.static_argnames:
                _check_hashable(kwargs[k], repr(k))
                statics.append((k, kwargs[k]))
            else:
                dyn_kwargs[k] = kwargs[k]
        return tuple(dyn_args), dyn_kwargs, tuple(statics)

    def _compile(self, args, kwargs, leaves, treedef, sig):
        """Trace and compile; the executable is None when the jaxpr closes over
        tracers of an enclosing transformation (a jit inside jit/vmap/grad that reads
        an outer traced value): such a call is only ever bound as a `jit` equation,
        whose tracer constants the enclosing trace turns into operands."""
        closed, out_tree = self._trace(args, kwargs, leaves, treedef, sig)
        from jaxlite.lax.tokens import box_token_outputs

        out_tree = box_token_outputs(out_tree, closed.out_avals)  # tokens stay Tokens
        out_weak = [a.weak_type for a in closed.out_avals]
        if any(isinstance(c, Tracer) for c in closed.consts):
            return closed, None, out_tree, out_weak
        exe = backend.compile(closed, _py_name(self._name))
        return closed, exe, out_tree, out_weak

    def _trace(self, args, kwargs, leaves, treedef, sig):
        from jaxlite.interpreters.partial_eval import abstractify

        packed = (
            bool(kwargs) or self._has_static
        )  # as in `_lookup`: (args, kwargs) tree
        if self._signature is not None and kwargs:
            bound = self._signature.bind(*args, **kwargs)
            args, kwargs = tuple(bound.args), dict(bound.kwargs)
        info = debug_info(self.fun, "jit", args, kwargs, self.static_argnums)
        in_avals = []
        for i, (leaf, s) in enumerate(zip(leaves, sig)):
            if s is None:
                where = info.arg_names[i] if info.arg_names else f"position {i}"
                raise TypeError(
                    f"Error interpreting argument to {self.fun} as an abstract array. The "
                    f"problematic value is of type {type(leaf)} and was passed to the "
                    f"function at path {where}.\nThis typically means that a jit-wrapped "
                    "function was called with a non-array argument, and this argument "
                    "was not marked as static using the static_argnums or "
                    "static_argnames parameters of jax.jit."
                )
            in_avals.append(abstractify(leaf))
        out_tree_box = []

        def flat_fun(*tracers):
            tree = tree_util.tree_unflatten(treedef, tracers)
            dyn_args, dyn_kwargs = tree if packed else (tree, {})
            full_args, full_kwargs = self._merge_static(
                args, kwargs, dyn_args, dyn_kwargs, packed
            )
            out = self.fun(*full_args, **full_kwargs)
            out_leaves, out_tree = tree_util.tree_flatten(out)
            out_tree_box.append(out_tree)
            return out_leaves

        closed = trace_to_jaxpr(flat_fun, in_avals, info)
        return dce_closed_jaxpr(closed), out_tree_box[0]

    def _merge_static(self, args, kwargs, dyn_args, dyn_kwargs, packed):
        if not packed:
            return dyn_args, {}
        it = iter(dyn_args)
        full_args = [
            a if i in self.static_argnums else next(it) for i, a in enumerate(args)
        ]
        full_kwargs = {
            k: (v if k in self.static_argnames else dyn_kwargs[k])
            for k, v in kwargs.items()
        }
        return full_args, full_kwargs

    # -- ahead-of-time API --------------------------------------------------------------------

    def trace(self, *args, **kwargs):
        return Lowered(self, *self._entry(args, kwargs))

    def lower(self, *args, **kwargs):
        return Lowered(self, *self._entry(args, kwargs))

    def eval_shape(self, *args, **kwargs):
        from jaxlite.api import ShapeDtypeStruct

        closed, _, out_tree, _ = self._entry(args, kwargs)
        outs = [
            ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
            for a in closed.out_avals
        ]
        return tree_util.tree_unflatten(out_tree, outs)

    def _entry(self, args, kwargs):
        return self._lookup(args, kwargs)[1]

    def clear_cache(self):
        self._cache.clear()
        self._fast.clear()

    def _cache_size(self):
        return len(self._cache)


class Lowered:
    """What `jit(f).lower(*args)` returns: the jaxpr and the generated NumPy source."""

    def __init__(self, jitted, closed, exe, out_tree, out_weak):
        self.jitted = jitted
        self.jaxpr = closed
        self.executable = exe
        self.out_tree = out_tree

    def as_text(self, dialect=None):
        """The generated Python source that runs this computation."""
        return self.executable.source

    def compile(self):
        return self

    def __call__(self, *args, **kwargs):
        return self.jitted(*args, **kwargs)

    def cost_analysis(self):
        return {}


def _py_name(name):
    clean = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return clean if clean and not clean[0].isdigit() else f"f_{clean}"


def _signature_or_none(fun):
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


def _resolve_static(sig, static_argnums, static_argnames):
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    nums = set(static_argnums or ())
    names = set(static_argnames or ())
    if sig is not None:
        params = list(sig.parameters.values())
        positional = [
            p.name
            for p in params
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        nums = {n % len(positional) if n < 0 and positional else n for n in nums}
        for n in list(nums):
            if n < len(positional):
                names.add(positional[n])
        for name in list(names):
            if name in positional:
                nums.add(positional.index(name))
    return frozenset(nums), frozenset(names)


def jit(
    fun=None,
    *,
    static_argnums=(),
    static_argnames=(),
    donate_argnums=(),
    donate_argnames=(),
    inline=False,
    keep_unused=False,
    device=None,
    backend=None,
    in_shardings=None,
    out_shardings=None,
    abstracted_axes=None,
):
    """Compile `fun` by tracing it to a jaxpr once per argument signature.

    Usable as `jit(f)`, `@jit`, or `functools.partial(jit, static_argnums=...)`.
    """
    if fun is None:
        return functools.partial(
            jit,
            static_argnums=static_argnums,
            static_argnames=static_argnames,
            donate_argnums=donate_argnums,
            inline=inline,
        )
    if not callable(fun):
        raise TypeError(f"jit requires a callable as its first argument, got {fun!r}")
    return JitFunction(fun, static_argnums, static_argnames, donate_argnums, inline)
