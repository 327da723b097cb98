"""`jit`: trace once per argument signature, compile, and call the compiled function.

The cache key is (pytree structure of the arguments, each leaf's shape/dtype/weak_type,
the static arguments, the config options that change tracing). On a miss the Python
function is traced to a jaxpr (its Python side effects happen only then), dead code is
removed, and the backend compiles it. On a hit, the call is: flatten, look up, run.

Under another transformation (jit inside jit, grad of jit, vmap of jit) the function is
staged as one `jit` equation holding its jaxpr, which that transformation then processes.
"""

from __future__ import annotations

import collections
import functools
import inspect
import keyword
import operator
import warnings
import weakref

import numpy as np

from jaxlite import backend, cache_misses, dtypes, tree_util
from jaxlite.api_util import (
    arg_type_error,
    check_callable,
    shaped_abstractify,
    trace_flat,
)
from jaxlite.backend import lowering_rules
from jaxlite.backend.lowering import call_lowering
from jaxlite.backend.native import native_rules
from jaxlite.config import config, current
from jaxlite.core import (
    AbstractToken,
    Array,
    Primitive,
    ShapedArray,
    ShapeDtypeStruct,
    Token,
    Tracer,
    _state,
    abstract_eval_rules,
    abstract_token,
    dce_closed_jaxpr,
    eager_rules_by_type,
    eval_trace,
    float0_value,
    has_data,
    impl_rules,
    jaxpr_as_fun,
    numpy_value,
    physical_rules,
    physical_value,
    pp_call_primitives,
    reference_types,
)
from jaxlite.debug_nans import call_primitives, check_jit_outputs
from jaxlite.distributed import spmd
from jaxlite.distributed.global_array import GlobalArray
from jaxlite.errors import JaxRuntimeError, UnexpectedTracerError
from jaxlite.interpreters import ad, batching, physical
from jaxlite.interpreters.partial_eval import abstractify, debug_info
from jaxlite.runtime import check_backend
from jaxlite.state.types import (
    AbstractRef,
    check_no_aliased_refs,
    check_no_returned_refs,
)
from jaxlite.util import fun_name, fun_sourceinfo

# ----------------------------------------------------------------------------------------
# The `jit` primitive: a call of a closed jaxpr.


def _jit_impl(*args, name, jaxpr):
    exe = _spmd_executable(jaxpr)
    if exe is not None:  # it makes values split across processes
        if exe.any_split_output():  # an eager impl gives Arrays only
            raise spmd.eager_split_error()
        return exe(*args)
    return backend.compile(jaxpr)(*args)


def _spmd_executable(jaxpr):
    """The `SpmdExecutable` of `jaxpr` if it is an SPMD program, else None."""
    if not spmd.seen.split:  # no value was ever split across processes here
        return None
    entry = _spmd_executables.get(id(jaxpr))
    if entry is None or entry[0] is not jaxpr:
        if not spmd.is_spmd(jaxpr):
            return None
        if len(_spmd_executables) >= 64:  # bounded: each keeps its jaxpr alive
            _spmd_executables.clear()
        entry = _spmd_executables[id(jaxpr)] = (jaxpr, spmd.SpmdExecutable(jaxpr))
    return entry[1]


_spmd_executables: dict = {}  # id(closed jaxpr) -> (it, its SpmdExecutable)


def _jit_abstract(*avals, name, jaxpr):
    return list(jaxpr.out_avals), jaxpr.effects


jit_p = Primitive("jit", multiple_results=True)
impl_rules[jit_p] = _jit_impl
abstract_eval_rules[jit_p] = _jit_abstract
lowering_rules[jit_p] = call_lowering("jaxpr", "jit")
native_rules[jit_p] = "call"
pp_call_primitives.add(jit_p)
call_primitives.add(jit_p)  # debug_nans: re-run equation by equation on a NaN
ad.jvp_rules[jit_p] = ad.jvp_of_jaxpr_rule
ad.transpose_rules[jit_p] = lambda cts, *args, name, jaxpr: ad.transpose_jaxpr_call(
    cts, args, jaxpr
)
batching.batch_rules[jit_p] = batching.batch_jaxpr_rule(jit_p)
physical_rules[jit_p] = physical.with_physical_jaxprs(jit_p)
spmd.local_rules[jit_p] = spmd.call_rule(jit_p, "jaxpr")


# ----------------------------------------------------------------------------------------
# Eager operations on arrays split across processes


def _eager_on_split(prim, args, params):
    """An eager primitive with an operand split across processes (a GlobalArray): no
    process holds the operand, so it runs as the `jit` of the primitive, as every
    eager operation does in JAX. Each process computes its block of an elementwise
    result (a GlobalArray); what needs an automatic partitioner raises jit's error."""
    if prim is jit_p:  # already a jit (grad of a jit, outside it): its program
        exe = _spmd_executable(params["jaxpr"])  # its in_avals are split: not None
        vals = exe(*map(_to_numpy, args))
        return exe.wrap_outputs(vals, [a.weak_type for a in params["jaxpr"].out_avals])
    try:
        fun = _primitive_jit(prim, tuple(params.items()))
    except TypeError:  # an unhashable parameter: a jit for this call only
        fun = _primitive_jit.__wrapped__(prim, tuple(params.items()))
    # Compiled even under disable_jit (as JAX's eager operations): the Python
    # function would bind the primitive on the GlobalArray again.
    _, (_, exe, _, out_weak) = fun._lookup(args, {})
    return _outputs(exe, exe(*map(_to_numpy, args)), out_weak)


@functools.lru_cache(maxsize=256)
def _primitive_jit(prim, params):
    """`jit` of `prim.bind` with `params` (a tuple of items), giving a list."""
    params = dict(params)

    def apply(*args):
        outs = prim.bind(*args, **params)
        return list(outs) if prim.multiple_results else [outs]

    apply.__name__ = apply.__qualname__ = _py_name(prim.name)
    return jit(apply)


eager_rules_by_type[GlobalArray] = _eager_on_split


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
    if t is GlobalArray:  # its layout over the processes changes the program
        return (x.shape, x.dtype, x.weak_type, x.sharding)
    if t is np.ndarray or isinstance(x, np.generic):
        return (x.shape, x.dtype, False)
    aval = getattr(x, "aval", None)  # a Tracer, or a ShapeDtypeStruct (`lower`)
    if isinstance(aval, ShapedArray):
        return (aval.shape, aval.dtype, aval.weak_type)
    if isinstance(x, type):  # a scalar type such as `jnp.int32`: no value (as JAX)
        return None
    if type(aval) is AbstractRef:  # a reference (or a tracer of one): its aval
        return aval
    if hasattr(x, "dtype") or hasattr(x, "__jax_array__"):
        aval = abstractify(x)  # duck typed (`lower`), as JAX
        return (aval.shape, aval.dtype, aval.weak_type)
    return None


def _to_numpy(x):
    """The NumPy value the compiled function receives for an argument leaf."""
    t = type(x)
    if t is Array:
        return x._value
    if isinstance(x, Tracer):
        raise UnexpectedTracerError.escaped(x, "jit")
    if isinstance(x, Token):  # no data
        return None
    if t in reference_types:  # compiled code reads and writes the reference itself
        return x
    if t is GlobalArray:  # the program runs on this process's block
        return x._local
    aval = getattr(x, "aval", None)
    if aval is not None and has_data(aval.dtype):  # keys: their uint32 data
        return _to_numpy(physical_value(x, aval))
    return numpy_value(x)


class _TokenBox:
    """A pytree node around one jit result leaf that is a token: unflattening turns the
    compiled program's placeholder back into a Token (see `_box_token_outputs`)."""

    __slots__ = ("child",)

    def __init__(self, child):
        self.child = child


def _unbox_token(aux, children):
    (x,) = children
    if isinstance(x, Tracer) or type(x) is Token:
        return x
    if isinstance(x, ShapeDtypeStruct):
        return abstract_token  # `eval_shape`: JAX gives the token's aval
    return Token()


tree_util.register_pytree_node(_TokenBox, lambda b: ((b.child,), None), _unbox_token)


class _Float0Box(_TokenBox):
    """A pytree node around one jit result leaf of dtype float0: unflattening turns
    the compiled program's value into a NumPy array, as JAX returns them (see
    `core.float0_value`)."""

    __slots__ = ()


def _unbox_float0(aux, children):
    (x,) = children
    if type(x) is Array:
        return float0_value(x.shape)
    return x


tree_util.register_pytree_node(_Float0Box, lambda b: ((b.child,), None), _unbox_float0)


class _ExtendedBox(_TokenBox):
    """A pytree node around one jit result leaf of an extended dtype (keys): the
    compiled program returns the keys' data, which unflattening wraps as keys."""

    __slots__ = ("dtype",)

    def __init__(self, child, dtype):
        self.child = child
        self.dtype = dtype


def _unbox_extended(dtype, children):
    (x,) = children
    if type(x) is Array:
        return dtype._rules.wrap(dtype, x)
    return x


tree_util.register_pytree_node(
    _ExtendedBox, lambda b: ((b.child,), b.dtype), _unbox_extended
)


def _box_token_outputs(out_tree, out_avals):
    """`out_tree` with each token result wrapped in a `_TokenBox` node and each float0
    result in a `_Float0Box`; `out_tree` itself when there are none (the usual case,
    checked once per trace)."""
    boxes = [_output_box(a) for a in out_avals]
    if not any(boxes):
        return out_tree
    leaves = [box(0) if box else 0 for box in boxes]
    return tree_util.tree_structure(tree_util.tree_unflatten(out_tree, leaves))


def _output_box(aval):
    if isinstance(aval, AbstractToken):
        return _TokenBox
    if has_data(aval.dtype):
        return functools.partial(_ExtendedBox, dtype=aval.dtype)
    if aval.dtype == dtypes.float0:
        return _Float0Box
    return None


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


class _StaticArg:
    """A static argument in a cache key: equal only to a value of the same type, as
    in JAX (`1`, `1.0` and `True` are equal and hash alike in Python, but trace to
    different dtypes)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        if type(other) is not _StaticArg or type(self.value) is not type(other.value):
            return False
        try:
            return bool(self.value == other.value)
        except Exception as e:
            raise ValueError(
                "static arguments should be comparable using __eq__.The following "
                "error was raised when comparing two objects of types "
                f"{type(self.value)} and {type(other.value)}. The error was:\n"
                f"{type(e).__name__}: {e}"
            ) from e

    def __hash__(self):
        return hash(self.value)

    def __repr__(self):
        return repr(self.value)


def _outputs(exe, vals, out_weak):
    """The results of a compiled call: Arrays, or GlobalArrays for the results an
    SPMD program gives split across processes."""
    if type(exe) is spmd.SpmdExecutable:
        return exe.wrap_outputs(vals, out_weak)
    return [Array(o, w) for o, w in zip(vals, out_weak)]


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
    signature of an all-Array positional call straight to what the hot path needs
    (never used when arguments are donated: donation happens on the slow path).
    """

    __slots__ = ("entries", "fast", "donations")

    def __init__(self):
        self.entries = {}
        self.fast = {}
        self.donations = {}  # closed jaxpr -> the donated leaves an output takes over


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
        static_argnums=None,
        static_argnames=None,
        donate_argnums=None,
        inline=False,
        donate_argnames=None,
        backend=None,
        compiler_options=None,
    ):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self._backend = backend  # checked when first traced, as JAX does
        self._compiler_options = compiler_options  # checked when compiled, as JAX
        self._inline = inline  # under a trace, record the equations, not a jit call
        self._signature = _signature_or_none(fun)
        self.static_argnums, self.static_argnames = _resolve_argnums(
            fun, self._signature, static_argnums, static_argnames, "static"
        )
        self.donate_argnums, self.donate_argnames = _resolve_argnums(
            fun, self._signature, donate_argnums, donate_argnames, "donate"
        )
        both = self.static_argnames & self.donate_argnames
        if both:
            raise ValueError(
                "static_argnames and donate_argnames cannot intersect. Argument names "
                f"{set(both)} appear in both static_argnames and donate_argnames"
            )
        self._has_static = bool(self.static_argnums or self.static_argnames)
        self._donates = bool(self.donate_argnums or self.donate_argnames)
        shared = _shared_cache(
            fun,
            (
                self.static_argnums,
                self.static_argnames,
                self.donate_argnums,
                self.donate_argnames,
                _options_key(compiler_options),
            ),
        )
        self._cache = shared.entries
        self._fast = shared.fast
        self._donations = shared.donations
        self._name = fun_name(fun)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __repr__(self):
        return f"<jaxlite.jit of {self.fun!r}>"

    @property
    def __signature__(self):
        # The wrapped function's, as JAX's jitted functions report it, also to
        # `inspect.signature(f, follow_wrapped=False)` (chex's fake_pmap asks so):
        # without it, inspect takes a JitFunction (it has `__get__`) for a builtin.
        return self._signature

    # -- the hot path -----------------------------------------------------------------------

    def __call__(self, *args, **kwargs):
        view = current()  # this thread's config (one read: the hot path)
        if view.jit_slow_path:  # disable_jit or debug_nans/infs: see _call_debug
            return self._call_debug(args, kwargs)
        if not kwargs and _state.trace is eval_trace:
            # Fast path: positional Arrays (or dicts, lists and tuples of them) whose
            # signature was seen before; static ones enter the key as (type, value).
            vals = []
            sig = [view.trace_context]
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
                except Exception:  # a static argument that does not hash or compare:
                    hit = None  # the slow path says why
                if hit is not None:
                    exe, out_weak, out_tree = hit
                    outs = exe.entry(*vals)  # read each call: a tiered one changes
                    if out_tree is None:
                        return Array(outs[0], out_weak[0])
                    return tree_util.tree_unflatten(
                        out_tree, [Array(o, w) for o, w in zip(outs, out_weak)]
                    )
        leaves, entry = self._lookup(args, kwargs)
        closed, exe, out_tree, out_weak = entry
        if _state.trace is eval_trace:
            donated = (
                self._donated(args, kwargs, leaves, closed) if self._donates else ()
            )
            outs = _outputs(exe, exe(*map(_to_numpy, leaves)), out_weak)
            for x in donated:
                x.delete()
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
        outs = _outputs(exe, vals, out_weak)
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
        if any(type(s) is AbstractRef for s in sig):  # references: none twice
            check_no_aliased_refs(leaves, self._describe, "jit", args, kwargs)
        context = config.trace_context
        # Named axes in scope (vmap's axis_name): collectives bake their sizes in.
        key = (treedef, sig, statics, context, batching.axis_env())
        entry = self._cache.get(key)
        if entry is None:
            cache_misses.on_miss(self, key, args, kwargs)  # no_tracing, explain
            entry = self._compile(args, kwargs, leaves, treedef, sig)
            if entry[1] is None:  # closes over an enclosing trace's tracers: no caching
                return leaves, entry
            if config.trace_context != context:
                # `config.update` in another thread while tracing: the trace may have
                # seen both values, so it is cached under neither.
                return leaves, entry
            self._cache[key] = entry
            if not kwargs and not key[-1]:
                self._remember_fast(args, entry, context)
        return leaves, entry

    def _remember_fast(self, args, entry, context):
        if self._donates or type(entry[1]) is spmd.SpmdExecutable:
            return
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
            exe,
            tuple(out_weak),
            None if single else out_tree,
        )

    # -- donation ---------------------------------------------------------------------------

    def _donated(self, args, kwargs, leaves, closed):
        """The donated argument Arrays whose buffers an output can take over: the
        call deletes them, as JAX does (a later use raises "Array has been
        deleted"). The others stay usable, with JAX's warning the first time.
        jaxlite never writes a buffer, so this only keeps programs portable: code
        that reads a donated argument fails here as it would under JAX."""
        taken = self._donations.get(closed)
        if taken is None:
            flags = self._donated_leaves(args, kwargs)
            taken, unusable = _match_donations(closed.in_avals, flags, closed.out_avals)
            if unusable:
                warnings.warn(
                    "Some donated buffers were not usable: "
                    f"{', '.join(map(str, unusable))}.\nSee an explanation at "
                    "https://docs.jax.dev/en/latest/faq.html#buffer-donation.",
                    UserWarning,
                    stacklevel=3,
                )
            self._donations[closed] = taken
        donated = [leaves[i] for i in taken if type(leaves[i]) is Array]
        for x in donated:
            if sum(leaf is x for leaf in leaves) > 1:
                raise JaxRuntimeError(
                    "INVALID_ARGUMENT: Attempt to use a buffer that was previously "
                    "donated in the same call to Execute(). Toy example for this bug: "
                    "`f(donate(a), a)`. Pass a copy (`a.copy()`) as one of the two "
                    "arguments, or do not donate it."
                )
        return donated

    def _donated_leaves(self, args, kwargs):
        """For each flat argument leaf (in `_lookup`'s order), whether it belongs to
        a donated argument."""
        flags = []
        for i, a in enumerate(args):
            if i not in self.static_argnums:
                n = len(tree_util.tree_leaves(a))
                flags += [i in self.donate_argnums] * n
        for k in sorted(kwargs):
            if k not in self.static_argnames:
                n = len(tree_util.tree_leaves(kwargs[k]))
                flags += [k in self.donate_argnames] * n
        return flags

    # -- tracing ----------------------------------------------------------------------------

    def _split_static(self, args, kwargs):
        # As in JAX, arguments stay as they are given (positional or keyword): the
        # static (and donated) positions and names were completed from each other at
        # `jit` time, so either form is found. The signature is not bound to the
        # call: it may be a wrapped function's (`functools.wraps`), not `fun`'s own.
        statics = []
        dyn_args = []
        for i, a in enumerate(args):
            if i in self.static_argnums:
                _check_hashable(a, f"at position {i}")
                statics.append((i, _StaticArg(a)))
            else:
                dyn_args.append(a)
        dyn_kwargs = {}
        for k in sorted(kwargs):
            if k in self.static_argnames:
                _check_hashable(kwargs[k], repr(k))
                statics.append((k, _StaticArg(kwargs[k])))
            else:
                dyn_kwargs[k] = kwargs[k]
        return tuple(dyn_args), dyn_kwargs, tuple(statics)

    def _compile(self, args, kwargs, leaves, treedef, sig):
        """Trace and compile; the executable is None when the jaxpr closes over
        tracers of an enclosing transformation (a jit inside jit/vmap/grad that reads
        an outer traced value): such a call is only ever bound as a `jit` equation,
        whose tracer constants the enclosing trace turns into operands."""
        check_backend(self._backend)
        closed, out_tree = self._trace(args, kwargs, leaves, treedef, sig)
        out_tree = _box_token_outputs(out_tree, closed.out_avals)  # tokens, float0s
        out_weak = [a.weak_type for a in closed.out_avals]
        if any(isinstance(c, Tracer) for c in closed.consts):
            return closed, None, out_tree, out_weak
        if spmd.is_spmd(closed):  # over values split across processes
            exe = spmd.SpmdExecutable(closed, _py_name(self._name), tiered=True)
        elif self._compiler_options is None:
            exe = backend.compile(closed, _py_name(self._name), tiered=True)
        else:
            from jaxlite.stages import compiling_with  # the AOT module, above this one

            with compiling_with(self._compiler_options):
                exe = backend.compile(closed, _py_name(self._name), tiered=True)
        return closed, exe, out_tree, out_weak

    def _trace(self, args, kwargs, leaves, treedef, sig):
        packed = (
            bool(kwargs) or self._has_static
        )  # as in `_lookup`: (args, kwargs) tree
        info = debug_info(self.fun, "jit", args, kwargs, self.static_argnums)
        in_avals = []
        for i, (leaf, s) in enumerate(zip(leaves, sig)):
            if s is None:  # the signature saw a non-array leaf
                raise arg_type_error(self.fun, leaf, i, info)
            in_avals.append(shaped_abstractify(self.fun, leaf, i, info))

        def dynamic_fun(*dyn_args, **dyn_kwargs):
            full_args, full_kwargs = self._merge_static(
                args, kwargs, dyn_args, dyn_kwargs, packed
            )
            return self.fun(*full_args, **full_kwargs)

        closed, out_tree = trace_flat(
            dynamic_fun, treedef, in_avals, info, kwargs=packed
        )
        check_no_returned_refs(
            fun_sourceinfo(self.fun), "jit", out_tree, closed, info.arg_names
        )
        return dce_closed_jaxpr(closed), out_tree

    def _describe(self, args, kwargs):
        """(`name at file:line`, the flat argument names) for error messages."""
        info = debug_info(self.fun, "jit", args, kwargs, self.static_argnums)
        return fun_sourceinfo(self.fun), info.arg_names

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
        """The `stages.Traced` jaxpr of the function for these arguments."""
        from jaxlite import stages  # the AOT stages, built on this module

        return stages.Traced(stages.signature(self, args, kwargs))

    def lower(self, *args, **kwargs):
        """The `stages.Lowered` computation for these arguments (`.compile()` it)."""
        from jaxlite import stages

        return stages.Lowered(stages.signature(self, args, kwargs))

    def eval_shape(self, *args, **kwargs):
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
        self._donations.clear()

    def _cache_size(self):
        return len(self._cache)


def _options_key(options):
    """The compiler options as part of a cache key (their values are scalars)."""
    if options is None:
        return None
    try:
        return tuple(sorted((str(k), repr(v)) for k, v in dict(options).items()))
    except (TypeError, ValueError):  # not a dict: reported when compiled
        return repr(options)


def _py_name(name):
    clean = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    if keyword.iskeyword(clean):  # a primitive's name: `and`, `or`, `not`
        return f"{clean}_"
    return clean if clean and not clean[0].isdigit() else f"f_{clean}"


def _signature_or_none(fun):
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


_POSITIONAL = (
    inspect.Parameter.POSITIONAL_ONLY,
    inspect.Parameter.POSITIONAL_OR_KEYWORD,
)


def _index_tuple(x):
    try:
        return (operator.index(x),)
    except TypeError:
        return tuple(map(operator.index, x))  # TypeError for a non-integer, as JAX


def _str_tuple(x):
    if isinstance(x, str):
        return (x,)
    for name in x:
        if not isinstance(name, str):
            raise TypeError(f"argument is not a string: {name}")
    return tuple(x)


def _resolve_argnums(fun, sig, argnums, argnames, kind):
    """The `{kind}_argnums` and `{kind}_argnames` of `jit`, checked against the
    function's signature as JAX checks them (ValueError naming the bad entries). As
    in JAX, when only one of the two is given, the other is completed from it (a
    position names its parameter, a name its position); when both are given, they
    are taken as they are (flax's lifted jit gives both, for a function whose
    signature is the one it wraps)."""
    complete = (argnums is None) != (argnames is None)
    argnums = () if argnums is None else _index_tuple(argnums)
    argnames = () if argnames is None else _str_tuple(argnames)
    if sig is None:  # some builtins have none: nothing to check against
        if kind == "donate" and argnames:
            raise ValueError(
                f"Getting the signature of function {fun} failed. Pass donate_argnums "
                "instead of donate_argnames."
            )
        return frozenset(argnums), frozenset(argnames)
    params = list(sig.parameters.values())
    positional = [p.name for p in params if p.kind in _POSITIONAL]
    varargs = any(p.kind is p.VAR_POSITIONAL for p in params)
    n = len(positional)
    if argnums and not varargs and (-min(argnums) > n or max(argnums) >= n):
        raise ValueError(
            f"Jitted function has {kind}_argnums={argnums}, but only accepts {n} "
            "positional arguments."
        )
    # As JAX: `*args` is no keyword either ("positional-only").
    positional_only = {
        p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL)
    }
    if positional_only & set(argnames):
        raise ValueError(
            f"Jitted function has invalid argnames {positional_only & set(argnames)} "
            f"in {kind}_argnames. These are positional-only"
        )
    keywords = {
        p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }
    if not any(p.kind is p.VAR_KEYWORD for p in params) and set(argnames) - keywords:
        raise ValueError(
            f"Jitted function has invalid argnames {set(argnames) - keywords} in "
            f"{kind}_argnames. Function does not take these args."
        )
    nums = {i % n if i < 0 and n else i for i in argnums}
    names = set(argnames)
    if complete:
        by_keyword = [p.kind is p.POSITIONAL_OR_KEYWORD for p in params]
        names.update(positional[i] for i in nums if i < n and by_keyword[i])
        nums.update(positional.index(name) for name in names if name in positional)
    return frozenset(nums), frozenset(names)


def _match_donations(in_avals, donated, out_avals):
    """(indices of the donated inputs that an output can take over, avals of those
    none can), by JAX's rule: an output of the same shape and dtype first, then one
    of the same number of elements, each output taken once, inputs in order."""
    by_type = collections.defaultdict(collections.deque)
    for i, (aval, d) in enumerate(zip(in_avals, donated)):
        if d:
            by_type[(aval.shape, aval.dtype)].append(i)
    taken = []
    unmatched_outs = collections.defaultdict(int)
    for aval in out_avals:
        waiting = by_type.get((aval.shape, aval.dtype))
        if waiting:
            taken.append(waiting.popleft())
        else:
            unmatched_outs[aval.size] += 1
    unusable = []
    for i in sorted(i for waiting in by_type.values() for i in waiting):
        size = in_avals[i].size
        if unmatched_outs[size]:
            unmatched_outs[size] -= 1
            taken.append(i)
        else:
            unusable.append(in_avals[i].strip_weak_type())
    return tuple(sorted(taken)), unusable


def jit(
    fun=None,
    *,
    static_argnums=None,
    static_argnames=None,
    donate_argnums=None,
    donate_argnames=None,
    inline=False,
    keep_unused=False,
    device=None,
    backend=None,
    in_shardings=None,
    out_shardings=None,
    abstracted_axes=None,
    compiler_options=None,
):
    """Compile `fun` by tracing it to a jaxpr once per argument signature.

    Usable as `jit(f)`, `@jit`, or `functools.partial(jit, static_argnums=...)`.
    `compiler_options` are checked when it compiles (see `jaxlite.stages`).
    """
    if fun is None:
        return functools.partial(
            jit,
            static_argnums=static_argnums,
            static_argnames=static_argnames,
            donate_argnums=donate_argnums,
            donate_argnames=donate_argnames,
            inline=inline,
            keep_unused=keep_unused,
            device=device,
            backend=backend,
            in_shardings=in_shardings,
            out_shardings=out_shardings,
            abstracted_axes=abstracted_axes,
            compiler_options=compiler_options,
        )
    check_callable(fun)
    if backend is not None or device is not None:
        warnings.warn(
            "backend and device argument on jit is deprecated. You can use "
            '`jax.device_put(..., jax.local_devices(backend="cpu")[0])` on the inputs '
            "to the jitted function to get the same behavior.",
            DeprecationWarning,
            stacklevel=2,
        )
        if device is not None and backend is not None:
            raise ValueError(
                "can't specify both a device and a backend for jit, got "
                f"device={device} and backend={backend!r}"
            )
    args = (fun, static_argnums, static_argnames, donate_argnums, inline,
            donate_argnames, backend, compiler_options)  # fmt: skip
    if in_shardings is not None or out_shardings is not None:
        return _LaidOutJit(*args, in_shardings=in_shardings,
                           out_shardings=out_shardings)  # fmt: skip
    return JitFunction(*args)


class _LaidOutJit(JitFunction):
    """`jit(..., in_shardings=, out_shardings=)`: on one process the layouts change
    no value; across processes an argument or result given a sharding split across
    them becomes the GlobalArray of this process's block (`spmd.lay_out`)."""

    def __init__(self, *args, in_shardings, out_shardings):
        super().__init__(*args)
        self._in_shardings = in_shardings
        self._out_shardings = out_shardings

    def __call__(self, *args, **kwargs):
        eager = _state.trace is eval_trace
        if eager and self._in_shardings is not None:
            args = spmd.lay_out(args, self._in_shardings, "in_shardings")
        outs = super().__call__(*args, **kwargs)
        if eager and self._out_shardings is not None:
            outs = spmd.lay_out(outs, self._out_shardings, "out_shardings")
        return outs
