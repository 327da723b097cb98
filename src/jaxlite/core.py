"""The core: primitives, traces, abstract values and jaxprs.

Every operation jaxlite knows is a `Primitive`. `Primitive.bind` hands the operation to the
*current trace*, which lives in one thread-local slot ("stackless" tracing): the eval trace
runs NumPy implementations, a jaxpr trace records equations, a JVP or batching trace applies
its rule and re-binds under its parent. A tracer always knows the trace that made it, so two
nested transformations of the same kind never confuse each other's values.

Rules live in tables owned by the interpreter that uses them (`impl_rules` and
`abstract_eval_rules` here, `jvp_rules` in `interpreters.ad`, ...). Every rule returns a list,
one entry per output.

The typed IR is the jaxpr: `Var`s and `Literal`s flow through `JaxprEqn`s. `eval_jaxpr`
interprets one by binding each equation's primitive, so evaluating a jaxpr under any trace
transforms it; `pretty_print` writes JAX's text format.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import numpy as np

from jaxlite import dtypes, source_info
from jaxlite.config import config
from jaxlite.errors import (
    ConcretizationTypeError,
    JaxprTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
    jax_array_abstractification_error,
)
from jaxlite.sharding import default_aval_sharding
from jaxlite.util import quiet_fp, restore_fp, safe_map, safe_zip

map, unsafe_map = safe_map, map
zip, unsafe_zip = safe_zip, zip

no_effects: frozenset = frozenset()

# ----------------------------------------------------------------------------------------
# Abstract values


class AbstractValue:
    """Base class of abstract values (JAX's `jax.core.AbstractValue`)."""

    __slots__ = ()


class ShapedArray(AbstractValue):
    """The abstract value of an array: shape, dtype and whether the dtype is weak.

    `sharding` is JAX's: replicated over the empty abstract mesh unless one was
    given. On one device it never changes a value, so equality and hashing (the
    jit cache keys) ignore it."""

    __slots__ = ("shape", "dtype", "weak_type", "_sharding")

    def __init__(self, shape, dtype, weak_type=False, sharding=None):
        self.shape = tuple(shape)
        if isinstance(dtype, dtypes.ExtendedDType):  # keys: see `physical_aval`
            self.dtype = dtype
        else:
            self.dtype = np.dtype(dtype)
        self.weak_type = bool(weak_type)
        if sharding is not None:  # else the default, made when asked for
            self._sharding = sharding

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    @property
    def sharding(self):
        try:
            return self._sharding
        except AttributeError:
            return default_aval_sharding(len(self.shape))

    def to_tangent_aval(self):
        """The aval of this value's tangents (float0 for integers and booleans)."""
        if dtypes.issubdtype(self.dtype, np.inexact):
            return ShapedArray(self.shape, self.dtype, self.weak_type)
        return ShapedArray(self.shape, dtypes.float0)

    to_ct_aval = to_tangent_aval
    at_least_vspace = to_tangent_aval  # JAX's older name, still in its API (distrax)

    def update_weak_type(self, weak_type):
        return self.update(weak_type=weak_type)

    def __eq__(self, other):
        return (
            type(other) is ShapedArray
            and self.shape == other.shape
            and self.dtype == other.dtype
            and self.weak_type == other.weak_type
        )

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))

    def update(self, shape=None, dtype=None, weak_type=None, sharding=None):
        shape = self.shape if shape is None else tuple(shape)
        if sharding is None and len(shape) == len(self.shape):
            sharding = getattr(self, "_sharding", None)  # kept where it still fits
        return ShapedArray(
            shape,
            self.dtype if dtype is None else dtype,
            self.weak_type if weak_type is None else weak_type,
            sharding,
        )

    def strip_weak_type(self):
        return ShapedArray(self.shape, self.dtype) if self.weak_type else self

    def str_short(self, short_dtypes=True):
        if short_dtypes:
            name = dtypes.short_name(self.dtype)
        else:  # NumPy calls float0 (a structured dtype) "void"
            name = "float0" if self.dtype == dtypes.float0 else self.dtype.name
        return f"{name}[{','.join(map(str, self.shape))}]"

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short(False)}{weak})"

    def __str__(self):  # as JAX: `float32[2,3]`, `~float32[]` when weakly typed
        return ("~" if self.weak_type else "") + self.str_short(short_dtypes=False)


class ShapeDtypeStruct:
    """A shape and dtype standing for an array (as JAX's `jax.ShapeDtypeStruct`)."""

    __slots__ = ("shape", "dtype", "sharding", "weak_type")

    def __init__(self, shape, dtype, *, sharding=None, weak_type=False):
        if dtype is None:
            raise ValueError("ShapeDtypeStruct: dtype must be specified.")
        init = object.__setattr__  # immutable, as JAX's: see __setattr__
        init(self, "shape", tuple(shape))
        # As JAX: the dtype is kept as given (int64 stays int64 with x64 off); the
        # aval, what tracing sees, is canonical.
        init(self, "dtype", _given_dtype(dtype))
        init(self, "sharding", sharding)
        init(self, "weak_type", weak_type)

    def __setattr__(self, name, value):
        raise RuntimeError(
            f"Cannot reassign attributes ({name}) of immutable ShapeDtypeStruct "
            "objects; make a new one with `.update()`."
        )

    @classmethod
    def like(cls, x):
        """The ShapeDtypeStruct of `x`: an array, a scalar, a ShapeDtypeStruct or any
        object with `.shape` and `.dtype`, in its canonical dtype and weak type."""
        aval = shaped_abstractify(x)
        return cls(aval.shape, aval.dtype, weak_type=aval.weak_type)

    def update(self, **kwargs):
        """A copy with the given fields (`shape`, `dtype`, `sharding`, `weak_type`)
        replaced."""
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields.update(kwargs)
        shape, dtype = fields.pop("shape"), fields.pop("dtype")
        return ShapeDtypeStruct(shape, dtype, **fields)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    def __len__(self):
        try:
            return self.shape[0]
        except IndexError:
            raise TypeError("len() of unsized object") from None  # NumPy's words

    @property
    def aval(self):
        return ShapedArray(
            self.shape, dtypes.canonicalize_dtype(self.dtype), self.weak_type
        )

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"

    def __eq__(self, other):
        return isinstance(other, ShapeDtypeStruct) and (
            self.shape,
            self.dtype,
            self.weak_type,
        ) == (other.shape, other.dtype, other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))

    # As in JAX, a ShapeDtypeStruct is an abstract constant: a traced function may
    # close over it or return it, and it stands in the jaxpr as a constant of its
    # aval (what `eval_shape` needs), but it has no value to compute with (running
    # such a jaxpr raises ABSTRACT_CONSTANT_MESSAGE). Like JAX's, it has no
    # `__array__`: NumPy sees an opaque object.


ABSTRACT_CONSTANT_MESSAGE = (
    "A ShapeDtypeStruct does not have a value and cannot be used as a constant in a "
    "JAX function: it describes an array's shape and dtype only. Pass an array of "
    "that shape and dtype (e.g. `jnp.zeros(s.shape, s.dtype)`) where a value is "
    "computed with."
)


def _given_dtype(dtype):
    try:
        return np.dtype(dtype)
    except TypeError:  # an extended dtype (PRNG keys)
        return dtypes.canonicalize_dtype(dtype)


# Tokens (`lax.create_token`, `lax.after_all`) carry no data, only an order. Their
# aval is a `ShapedArray` of shape `()` with an extended dtype of its own, so code that
# keys caches or builds variables on avals handles them without special cases.


class token(dtypes.extended):  # noqa: N801 (NumPy-style scalar class name)
    """Scalar class of the token dtype."""


class _TokenDType(dtypes.ExtendedDType):
    type = token
    name = "token"
    itemsize = 0

    def __eq__(self, other):
        return isinstance(other, _TokenDType)

    def __hash__(self):
        return hash(self.name)


class AbstractToken(ShapedArray):
    """The aval of a token: printed `Tok` in jaxprs, `AbstractToken()` by repr."""

    __slots__ = ()

    def __init__(self):
        self.shape = ()
        self.dtype = _TokenDType()
        self.weak_type = False

    def __eq__(self, other):
        return isinstance(other, AbstractToken)

    def __hash__(self):
        return hash("AbstractToken")

    def update(self, shape=None, dtype=None, weak_type=None):
        return self

    def strip_weak_type(self):
        return self

    def str_short(self, short_dtypes=True):
        return "Tok"

    def __repr__(self):
        return "AbstractToken()"

    def __str__(self):
        return "Tok"


abstract_token = AbstractToken()


class Token:
    """A token value: no data, only the type `AbstractToken()`."""

    __slots__ = ()

    aval = abstract_token

    def block_until_ready(self):
        return self


def get_aval(x) -> ShapedArray:
    """The abstract value of any JAX value: Array, Tracer, NumPy value or Python scalar
    (or a value of a type registered in `pytype_aval_mappings`)."""
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    t = type(x)
    if not (t in _scalar_types or t is np.ndarray or isinstance(x, np.generic)):
        mapping = registered_handler(pytype_aval_mappings, x)
        if mapping is not None:
            return mapping(x)
    dtype, weak = dtypes.dtype_and_weak(x)
    return ShapedArray(np.shape(x), dtype, weak)


# JAX's registries of Python types as JAX values: `jax.core.pytype_aval_mappings`
# (type -> function giving a value's aval) and `jax.interpreters.xla.
# canonicalize_dtype_handlers` (type -> function giving a value jaxlite knows, such as
# a NumPy array). jaxlite handles its own types directly (above); a library registers
# a type of its own here (TFP registers its ndarray proxy `Variable` with ndarray's
# entries, which it reads back), and the functions that meet a value of a type they
# do not know (`get_aval`, `shaped_abstractify`, `numpy_value`, tracing a constant)
# ask these tables, along the type's MRO, before refusing it (or duck-typing it by
# its `dtype`). The entries for NumPy values, Python scalars, Arrays and tracers, which
# libraries read, are added at the end of this module.
pytype_aval_mappings: dict = {}
canonicalize_value_handlers: dict = {}


def registered_handler(table, x):
    """The entry of `table` for the type of `x` or its nearest base class, or None."""
    for t in type(x).__mro__:
        handler = table.get(t)
        if handler is not None:
            return handler
    return None


def shaped_abstractify(x) -> ShapedArray:
    """The aval of a value standing for an array where no data is read (jit and
    `eval_shape` arguments, `ShapeDtypeStruct.like`): an array, tracer or scalar, an
    aval, a ShapeDtypeStruct, or any object with `.shape` and `.dtype` (duck typed, as
    JAX accepts). An object with `__jax_array__` is refused, as in JAX."""
    if isinstance(x, (Tracer, Array)):
        return x.aval
    if isinstance(x, AbstractValue):
        return x
    aval = getattr(x, "aval", None)  # a ShapeDtypeStruct
    if isinstance(aval, ShapedArray):
        return aval
    if type(x) in _scalar_types or isinstance(x, (np.ndarray, np.generic)):
        dtype, weak = dtypes.dtype_and_weak(x)
    elif getattr(x, "__jax_array__", None) is not None:
        raise jax_array_abstractification_error()
    elif registered_handler(pytype_aval_mappings, x) is not None:
        return get_aval(x)
    elif hasattr(x, "dtype"):
        dtype = dtypes.canonicalize_dtype(x.dtype)
        weak = bool(getattr(x, "weak_type", False))
    else:
        raise TypeError(
            f"Cannot interpret value of type {type(x)} as an abstract array; it does "
            "not have a dtype attribute"
        )
    if not dtypes.is_extended(dtype) and not dtypes._is_supported(dtype):
        raise TypeError(  # object, string, datetime, structured
            f"Dtype {dtype} is not a valid JAX array type. Only arrays of numeric "
            "types are supported by JAX."
        )
    return ShapedArray(np.shape(x), dtype, weak)


# Three questions about a user's value, asked here once for every layer above: is it a
# JAX value (`is_jax_type`), what NumPy value stands for it (`numpy_value`), and what
# Array stands for it (`as_value`, jnp.asarray's rules when no dtype is asked for).


def is_jax_type(x) -> bool:
    """Whether `x` can be a JAX value (an array, a tracer, a NumPy value or a scalar)."""
    return (
        isinstance(x, (Tracer, *_array_types))
        or type(x) in _scalar_types
        or registered_handler(pytype_aval_mappings, x) is not None
    )


_scalar_types = {bool, int, float, complex}
_array_types: tuple = (np.ndarray, np.generic)  # Array is added by jaxlite.array


def numpy_value(x):
    """The NumPy value of a non-Array operand in its canonical dtype (float64 -> float32
    unless x64 is on), copied from a NumPy array so that later writes to it cannot
    change the result."""
    if type(x) in _scalar_types:
        return dtypes.coerce_to_array(x)[()]
    if isinstance(x, np.ndarray):
        return np.array(x, dtypes.canonicalize_dtype(x.dtype))
    if isinstance(x, np.generic):
        return dtypes.coerce_to_array(x)[()]
    if getattr(x, "__jax_array__", None) is not None:
        raise jax_array_abstractification_error()
    if isinstance(x, ShapeDtypeStruct):
        raise TypeError(ABSTRACT_CONSTANT_MESSAGE)
    canonicalize = registered_handler(canonicalize_value_handlers, x)
    if canonicalize is not None:
        return numpy_value(canonicalize(x))
    raise TypeError(
        f"Value {x!r} of type {type(x)} is not a valid JAX type; primitives take "
        "jaxlite Arrays, NumPy arrays or Python scalars."
    )


def as_value(x):
    """`x` as a JAX value: an Array or a tracer as it is; a Python scalar as a weakly
    typed Array; anything NumPy converts (an array, a NumPy scalar, a nested list) as
    an Array of a canonical dtype owning its memory (`array.from_host`), so 64-bit
    NumPy inputs never leak into results and later writes to the caller's buffer
    cannot change them; a NumPy array of dtype float0 as it is (`float0_value`)."""
    t = type(x)
    if t is Array or isinstance(x, Tracer):
        return x
    if t in _scalar_types:
        return Array(dtypes.coerce_to_array(x), t is not bool)
    if t is np.ndarray and x.dtype == dtypes.float0:
        return x  # float0 values stay NumPy arrays (`float0_value`)
    if t is not np.ndarray:
        if isinstance(x, Array):  # a key array (`array.register_virtual_array_type`)
            return x
        if t in reference_types:  # a mutable array reference (jaxlite.state)
            return x
        if getattr(x, "__jax_array__", None) is not None:
            raise jax_array_abstractification_error()  # as JAX 0.10.2
    return from_host(x)


def is_concrete(x) -> bool:
    """Whether `x` has a concrete value (is not a tracer, or a tracer that knows it)."""
    return not isinstance(x, Tracer) or x.to_concrete_value() is not None


def concrete_or_error(force, x, context=""):
    """`force(value)` if `x` has a concrete value, else a ConcretizationTypeError."""
    if isinstance(x, Tracer):
        val = x.to_concrete_value()
        if val is None:
            raise ConcretizationTypeError(x, context)
        return force(val)
    return force(x)


# ----------------------------------------------------------------------------------------
# Primitives and rule tables

impl_rules: dict = {}
abstract_eval_rules: dict = {}
# Kernels for operations run one at a time only (EvalTrace), taking precedence over
# `impl_rules` there: e.g. XLA-exact float32 math (lax/xla_float32.py), too slow to
# run inside compiled code. The backend never reads this table.
eager_impl_rules: dict = {}


class Primitive:
    """A named operation. `bind` applies it under whatever trace is current."""

    __slots__ = ("name", "multiple_results")

    def __init__(self, name, multiple_results=False):
        self.name = name
        self.multiple_results = multiple_results

    def bind(self, *args, **params):
        outs = _state.trace.process_primitive(self, args, params)
        return outs if self.multiple_results else outs[0]

    def __repr__(self):
        return self.name

    # A primitive defined outside jaxlite gives its rules as JAX's Primitive takes
    # them; `core_extension` translates each into the tables above.
    call_primitive = False

    def def_impl(self, impl):
        """`impl(*arrays, **params)` computes the outputs on Arrays (JAX's form)."""
        impl_rules[self] = impl_from_jax(self, impl)
        return impl

    def def_abstract_eval(self, rule):
        """`rule(*avals, **params)` returns the output aval(s) (JAX's form)."""
        abstract_eval_rules[self] = abstract_eval_from_jax(self, rule, False)
        return rule

    def def_effectful_abstract_eval(self, rule):
        """`rule(*avals, **params)` returns `(output aval(s), effects)`."""
        abstract_eval_rules[self] = abstract_eval_from_jax(self, rule, True)
        return rule

    def impl(self, *args, **params):
        """The outputs on concrete values, outside any transformation."""
        with set_current_trace(eval_trace):
            return self.bind(*args, **params)

    def abstract_eval(self, *avals, **params):
        """`(output aval(s), effects)`, as JAX's `Primitive.abstract_eval`."""
        outs, effects = abstract_eval(self, avals, params)
        return (outs if self.multiple_results else outs[0]), effects


def abstract_eval(prim, avals, params):
    rule = abstract_eval_rules.get(prim)
    if rule is None:
        raise NotImplementedError(f"no abstract evaluation rule for primitive '{prim}'")
    return rule(*avals, **params)


# ----------------------------------------------------------------------------------------
# Traces and tracers


class Trace:
    """Interprets primitives. Subclasses override `process_primitive` and friends."""

    is_live = True

    def process_primitive(self, prim, args, params):
        raise NotImplementedError

    def process_custom_jvp_call(self, prim, fun, jvp, args, name, symbolic_zeros):
        rule = _trace_rule(custom_jvp_call_rules, self, "custom_jvp")
        return rule(self, prim, fun, jvp, args, name, symbolic_zeros)

    def process_custom_vjp_call(self, prim, fun, fwd, bwd, args, name, symbolic_zeros):
        rule = _trace_rule(custom_vjp_call_rules, self, "custom_vjp")
        return rule(self, prim, fun, fwd, bwd, args, name, symbolic_zeros)

    def __repr__(self):
        return type(self).__name__

    @property
    def enclosing(self):
        """The traces this one was opened under, whose tracers may reach it as
        operands (and become constants of a jaxpr traced inside it): its `parent`."""
        parent = getattr(self, "parent", None)
        return () if parent is None else (parent,)

    @property
    def main(self):
        """What identifies the transformation this trace carries out: the trace itself
        (JAX's deprecated `Trace.main`, its trace tag; equinox's `filter_jvp` tells
        its own tracers by `tracer._trace.main is find_top_trace(...).main`)."""
        return self


# How each kind of trace processes a call of a function with custom derivative rules,
# keyed by Trace class (a subclass inherits its base's rule). Filled by
# lax/custom_derivatives.py, which defines those calls.
custom_jvp_call_rules: dict = {}
custom_vjp_call_rules: dict = {}


def _trace_rule(table, trace, what):
    for cls in type(trace).__mro__:
        rule = table.get(cls)
        if rule is not None:
            return rule
    raise NotImplementedError(f"{what} is not supported under {type(trace).__name__}.")


class EvalTrace(Trace):
    """Runs every primitive's NumPy implementation right away (eager mode).

    Inputs are checked as under `jit`: the primitive's abstract evaluation rule runs on
    the input avals (so a bad dtype or shape raises the same error eagerly), and it also
    gives the outputs' weak types. Its answers are cached per (primitive, params, input
    avals), which keeps eager dispatch to a dictionary lookup around the NumPy call.

    debug_nans hook: while jax_debug_nans or jax_debug_infs is on, `jaxlite.debug_nans`
    replaces `process_primitive` with a version that checks the outputs (a config
    listener swaps it in and out, so this method itself never checks).
    """

    def process_primitive(self, prim, args, params):
        vals = []
        key = [prim]
        for x in args:
            t = type(x)
            if t is Array:
                v = x._value
                vals.append(v)
                key += (v.shape, v.dtype, x.weak_type)
            elif isinstance(x, Tracer):
                raise UnexpectedTracerError.escaped(x, prim)
            elif t in _extended_value_types:  # keys: the primitive runs on their data
                return _process_extended(prim, args, params)
            elif t in reference_types:  # mutable array references (jaxlite.state)
                return _process_references(prim, args, params)
            else:
                v = numpy_value(x)
                vals.append(v)
                key += (v.shape, v.dtype, t in _weak_scalar_types)
        if params:
            key.append(tuple(params.items()))
        key = tuple(key)
        try:
            out_weak = _eager_weak_types.get(key)
        except TypeError:  # an unhashable parameter: check without the cache
            out_weak = _eager_abstract_eval(prim, key, params)
        else:
            if out_weak is None:
                out_weak = _eager_abstract_eval(prim, key, params)
                if len(_eager_weak_types) >= _EAGER_CACHE_SIZE:
                    _eager_weak_types.clear()  # bounded: keys may hold jaxpr params
                _eager_weak_types[key] = out_weak
        if type(out_weak) is _WithExtended:  # it gives keys (random_seed, ...)
            return _process_extended(prim, args, params)
        if type(out_weak) is _WithReferences:  # it gives references (new_ref)
            return _process_references(prim, args, params)
        # NumPy's floating-point warnings off, as under jit (backend.Executable).
        token = quiet_fp()
        try:
            rule = eager_impl_rules.get(prim) or impl_rules.get(prim) or _no_impl(prim)
            outs = rule(*vals, **params)
        finally:
            restore_fp(token)
        if type(out_weak) is not tuple:  # float0 outputs: NumPy arrays, as in JAX
            return out_weak.wrap(outs)
        if len(out_weak) == 1:
            return [Array(outs[0], out_weak[0])]
        return [Array(o, w) for o, w in unsafe_zip(outs, out_weak)]


def _no_impl(prim):
    raise NotImplementedError(
        f"Evaluation rule for '{prim}' not implemented: primitive '{prim}' has no "
        "impl, so it cannot run on concrete values: give it one with "
        f"`{prim}_p.def_impl(impl)`."
    )


_weak_scalar_types = frozenset({int, float, complex})
_eager_weak_types: dict = {}
_EAGER_CACHE_SIZE = 4096


def _eager_abstract_eval(prim, key, params):
    """Output weak types of `prim` from the eager cache key (prim, then shape, dtype, weak
    of each input, then the params)."""
    n = (len(key) - 1) // 3
    avals = [ShapedArray(*key[1 + 3 * i : 4 + 3 * i]) for i in range(n)]
    out_avals, _ = abstract_eval(prim, avals, params)
    out_weak = tuple(a.weak_type for a in out_avals)
    if not all(isinstance(a, ShapedArray) for a in out_avals):
        return _WithReferences(out_weak)
    if any(has_data(a.dtype) for a in out_avals):
        return _WithExtended(out_weak)
    if any(a.dtype == dtypes.float0 for a in out_avals):
        return _WithFloat0(out_weak)
    return out_weak


class _WithFloat0(tuple):
    """The output weak types of an eager primitive some of whose outputs are float0:
    those are NumPy arrays, never Arrays (see `float0_value`)."""

    __slots__ = ()

    def wrap(self, outs):
        return [
            float0_value(np.shape(o)) if o.dtype == dtypes.float0 else Array(o, w)
            for o, w in unsafe_zip(outs, self)
        ]


class _WithExtended(tuple):
    """The output weak types of an eager primitive some of whose outputs have an
    extended dtype (keys made from seeds or data): it runs by its physical rule."""

    __slots__ = ()


class _WithReferences(tuple):
    """The output weak types of an eager primitive that gives mutable array
    references (`new_ref`): it runs by `_process_references`."""

    __slots__ = ()


# Types of values that primitives take and give as they are, not as arrays: mutable
# array references (`jaxlite.state.types.Ref` registers itself). Eager evaluation
# hands them to impls untouched, tracing makes them constants of their own aval, and
# `jit` passes them to compiled code as they are, so writes reach the caller's.
reference_types: set = set()


def _process_references(prim, args, params):
    """An eager `prim` taking or giving references: its impl receives them (and
    returns new ones) as they are, and the other operands as NumPy values."""
    avals_in = [get_aval(x) for x in args]
    avals_out, _ = abstract_eval(prim, avals_in, params)
    vals = []
    for x in args:
        if type(x) is Array:
            vals.append(x._value)
        elif type(x) in reference_types:
            vals.append(x)
        elif isinstance(x, Tracer):
            raise UnexpectedTracerError.escaped(x, prim)
        else:
            vals.append(numpy_value(x))
    token = quiet_fp()
    try:
        outs = (impl_rules.get(prim) or _no_impl(prim))(*vals, **params)
    finally:
        restore_fp(token)
    results = []
    for o, a in unsafe_zip(outs, avals_out):
        if not isinstance(a, ShapedArray):
            if type(o) in reference_types:
                # A new reference takes the aval abstract evaluation gives: its impl
                # saw NumPy values only, which carry no weak type.
                o._aval = a
            results.append(o)
        elif a.dtype == dtypes.float0:
            results.append(float0_value(np.shape(o)))
        else:
            results.append(Array(o, a.weak_type))
    return results


def float0_value(shape):
    """A value of dtype float0 (the tangent type of integers and booleans), as JAX
    gives them to users: a NumPy array, not an Array. float0 has one value, zero, and
    no operations; such arrays are accepted wherever a tangent or cotangent is."""
    return np.zeros(shape, dtypes.float0)


def _clear_eager_cache(name, value):
    _eager_weak_types.clear()


config.add_listener(_clear_eager_cache)


class _TraceState(threading.local):
    trace: Trace = EvalTrace()


_state = _TraceState()
eval_trace = _TraceState.trace


def current_trace() -> Trace:
    return _state.trace


@contextmanager
def set_current_trace(trace):
    prev = _state.trace
    _state.trace = trace
    try:
        yield
    finally:
        _state.trace = prev


def find_cur_trace_is_eval() -> bool:
    return _state.trace is eval_trace


class Tracer:
    """A value standing for an array while a function is traced or transformed.

    Subclasses store whatever their trace needs and expose `aval`. Operators, methods and
    properties (`shape`, `dtype`, `+`, `.sum()`, ...) are shared with `Array`.
    """

    __slots__ = ("_trace", "__weakref__")  # weakly referable, as JAX's tracers
    __array_priority__ = 1000

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

    def to_concrete_value(self):
        """A concrete NumPy value if this tracer has one (e.g. a JVP primal), else None."""
        return None

    def __repr__(self):
        return f"Traced<{self.aval!r}>with<{self._trace!r}>"

    # As in JAX: `bool`, `int`, `operator.index` and `item` may read a concrete value
    # (a JVP primal), since their results carry no derivative anyway and Python
    # control flow on them is well defined. `float`, `complex`, `__array__` (NumPy)
    # and `tolist` never do: the float would silently drop the derivative
    # (`grad(lambda x: np.sin(x))` must fail, not return 0).

    def __bool__(self):
        val = self.to_concrete_value()
        if val is None:
            raise TracerBoolConversionError(self)
        return bool(val)

    def _scalar_conversion_error(self, name):
        return ConcretizationTypeError(
            self,
            f"The problem arose with the `{name}` "
            f"function. If trying to convert the data type of "
            f"a value, try using `x.astype({name})` or "
            f"`jnp.array(x, {name})` instead.",
        )

    def __int__(self):
        val = self.to_concrete_value()
        if val is None:
            raise self._scalar_conversion_error("int")
        return int(val)

    def __float__(self):
        raise self._scalar_conversion_error("float")

    def __complex__(self):
        raise self._scalar_conversion_error("complex")

    def __index__(self):
        val = self.to_concrete_value()
        if val is None:
            raise TracerIntegerConversionError(self)
        return int(val.__index__() if hasattr(val, "__index__") else val)

    def __array__(self, dtype=None, copy=None):
        raise TracerArrayConversionError(self)

    def item(self, *args):
        val = self.to_concrete_value()
        if val is None:
            raise ConcretizationTypeError(
                self, "The problem arose with the `item` method."
            )
        return np.asarray(val).item(*args)

    def tolist(self):
        raise ConcretizationTypeError(
            self,
            "The tolist() method was called on traced array with shape "
            f"{self.aval.str_short()}.",
        )

    def __copy__(self):  # as JAX: `copy.copy` and `copy.deepcopy` stage a copy
        return self.copy()

    def __deepcopy__(self, memo):
        return self.copy()

    def __reduce__(self):
        raise ConcretizationTypeError(
            self,
            "The error occurred in the __reduce__ method, which may indicate an "
            "attempt to serialize/pickle a traced value.",
        )

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    __hash__ = None  # unhashable, as JAX's tracers and arrays

    def __setitem__(self, idx, value):
        setitem = getattr(self.aval, "_setitem", None)  # a reference (jaxlite.state)
        if setitem is None:
            raise TypeError(IMMUTABLE_MESSAGE)
        setitem(self, idx, value)

    def __getattr__(self, name):
        # What an aval type offers the tracers of its values, as JAX's tracers ask
        # their aval (a reference's `addupdate`): `tracer_attributes[name](tracer)`.
        get = tracer_attributes.get(name)
        if get is None:
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {name!r}"
            )
        return get(self)


# tracer_attributes[name](tracer) -> the attribute `name` of a tracer whose class does
# not have it, given by the tracer's aval (AttributeError when that aval has none).
tracer_attributes: dict = {}


IMMUTABLE_MESSAGE = (
    "JAX arrays are immutable and do not support in-place item assignment. Instead of "
    "x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
    "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html"
)


# ----------------------------------------------------------------------------------------
# Jaxprs


class Var:
    """A variable of a jaxpr. Its printed name is given when the jaxpr is printed."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Var({self.aval.str_short()})"


class Literal:
    """A scalar constant written inline in a jaxpr (`2.0:f32[]`)."""

    __slots__ = ("val", "aval")

    def __init__(self, val, aval):
        self.val = val
        self.aval = aval

    def __repr__(self):
        return f"{_literal_text(self.val, self.aval.weak_type)}:{self.aval.str_short()}"


Atom = Var | Literal  # what an equation reads (JAX's `jax.core.Atom`)


def _literal_text(val, weak):
    """The value as JAX 0.10.2 writes it. A strongly typed float prints as the Python
    float (double) it converts to: float32 0.1 is `0.10000000149011612`. A weak one
    came from a Python float, which JAX prints as written; jaxlite keeps the value
    rounded to its dtype, so it prints the shortest text that reads back as that
    value (`0.1`, the same unless the Python literal had more digits than the dtype)."""
    v = np.asarray(val)
    if v.dtype == np.bool_:
        return str(bool(v))
    if np.issubdtype(v.dtype, np.integer):
        return str(int(v))
    if weak:
        return str(v[()])
    if np.issubdtype(v.dtype, np.complexfloating):
        return repr(complex(v))
    return repr(float(v))


class JaxprEqn:
    __slots__ = ("primitive", "invars", "params", "outvars", "effects", "source_info")

    def __init__(
        self, primitive, invars, params, outvars, effects=no_effects, source_info=None
    ):
        self.primitive = primitive
        self.invars = invars
        self.params = params
        self.outvars = outvars
        self.effects = effects
        self.source_info = source_info  # a source_info.SourceInfo, when captured

    def replace(self, **kwargs):
        fields = {name: getattr(self, name) for name in self.__slots__}
        fields.update(kwargs)
        return JaxprEqn(**fields)

    def __repr__(self):
        return pp_eqn(self)


class Jaxpr:
    """A typed, closed-form program: `constvars; invars. let eqns in outvars`."""

    __slots__ = ("constvars", "invars", "outvars", "eqns", "effects")

    def __init__(self, constvars, invars, outvars, eqns, effects=None):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.eqns = list(eqns)
        if effects is None:
            effects = join_effects(*(e.effects for e in self.eqns))
        self.effects = effects

    in_avals = property(lambda self: [v.aval for v in self.invars])
    out_avals = property(lambda self: [v.aval for v in self.outvars])

    def __repr__(self):
        return pretty_print(self)

    __str__ = __repr__


class ClosedJaxpr:
    """A jaxpr together with the values of its constvars."""

    # `_compiled`: the NumPy backend's executable; `_native`: the native backend's,
    # or False where it cannot compile this jaxpr (both made on first use).
    __slots__ = ("jaxpr", "consts", "_compiled", "_native")

    def __init__(self, jaxpr, consts):
        assert len(jaxpr.constvars) == len(consts)
        self.jaxpr = jaxpr
        self.consts = list(consts)
        self._compiled = None
        self._native = None

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    eqns = property(lambda self: self.jaxpr.eqns)
    effects = property(lambda self: self.jaxpr.effects)
    literals = property(lambda self: self.consts)  # JAX's name for the consts

    def __repr__(self):
        return pretty_print(self.jaxpr)

    __str__ = __repr__

    def pretty_print(self, **_):
        return pretty_print(self.jaxpr)


def join_effects(*effect_sets):
    out = set()
    for effects in effect_sets:
        out.update(effects)
    return frozenset(out)


def subjaxprs(params):
    """The jaxprs among an equation's parameters (alone, or in a tuple or list)."""
    for v in params.values():
        if isinstance(v, (Jaxpr, ClosedJaxpr)):
            yield v
        elif isinstance(v, (tuple, list)):
            for x in v:
                if isinstance(x, (Jaxpr, ClosedJaxpr)):
                    yield x


def jaxpr_as_fun(closed_jaxpr):
    def fun(*args):
        return eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, *args)

    return fun


def eval_jaxpr(jaxpr: Jaxpr, consts, *args, eqn_rule=None):
    """Interpret `jaxpr` by binding each equation under the current trace.

    `eqn_rule(eqn, invals)`, when given, is asked first for each equation: it returns
    the equation's outputs as a list, or None to have the equation bound as usual."""
    env = {}

    def read(x):
        return x.val if type(x) is Literal else env[x]

    for v, val in zip(jaxpr.constvars, consts):
        env[v] = val
    for v, val in zip(jaxpr.invars, args):
        env[v] = val
    capture = source_info.is_capturing()
    for eqn in jaxpr.eqns:
        invals = unsafe_map(read, eqn.invars)
        outs = None if eqn_rule is None else eqn_rule(eqn, invals)
        if outs is None:
            if capture:  # re-bound equations keep their user source line
                with source_info.override(eqn.source_info):
                    outs = eqn.primitive.bind(*invals, **eqn.params)
            else:
                outs = eqn.primitive.bind(*invals, **eqn.params)
            if not eqn.primitive.multiple_results:
                outs = [outs]
        for v, val in zip(eqn.outvars, outs):
            env[v] = val
    return [read(v) for v in jaxpr.outvars]


# ----------------------------------------------------------------------------------------
# Typechecking


def typecheck_jaxpr(jaxpr: Jaxpr):
    """Check that every variable is defined once before use and that avals are consistent."""
    defined = set()

    def define(v):
        if v in defined:
            raise JaxprTypeError(f"variable {v} defined twice")
        defined.add(v)

    def check_atom(x, where):
        if type(x) is Literal:
            return x.aval
        if x not in defined:
            raise JaxprTypeError(f"variable {x} used before it is defined, in {where}")
        return x.aval

    for v in (*jaxpr.constvars, *jaxpr.invars):
        define(v)
    for eqn in jaxpr.eqns:
        in_avals = [check_atom(x, eqn.primitive) for x in eqn.invars]
        out_avals, effects = abstract_eval(eqn.primitive, in_avals, eqn.params)
        for v, aval in zip(eqn.outvars, out_avals):
            if (v.aval.shape, v.aval.dtype) != (aval.shape, aval.dtype):
                raise JaxprTypeError(
                    f"{eqn.primitive}: declared output type {v.aval.str_short()} but the "
                    f"rule gives {aval.str_short()}"
                )
            define(v)
        if not set(effects) <= set(eqn.effects):
            raise JaxprTypeError(f"{eqn.primitive}: missing effects {effects}")
    for x in jaxpr.outvars:
        check_atom(x, "the outputs")
    if not join_effects(*(e.effects for e in jaxpr.eqns)) <= set(jaxpr.effects):
        raise JaxprTypeError("jaxpr effects do not cover its equations' effects")


# ----------------------------------------------------------------------------------------
# Dead-code elimination

dce_rules: dict = {}


def dce_jaxpr(jaxpr: Jaxpr, used_outputs=None, prune_invars=False):
    """Drop equations whose outputs are unused and that have no effects.

    Returns `(new_jaxpr, used_inputs)`. A primitive with inner jaxprs may register a
    `dce_rules[prim](used_outs, eqn) -> (used_ins, new_eqn or None)` to prune inside.
    """
    if used_outputs is None:
        used_outputs = [True] * len(jaxpr.outvars)
    live = {v for v, u in zip(jaxpr.outvars, used_outputs) if u and type(v) is Var}
    new_eqns = []
    for eqn in reversed(jaxpr.eqns):
        used_outs = [v in live for v in eqn.outvars]
        rule = dce_rules.get(eqn.primitive)
        if rule is not None:
            used_ins, eqn = rule(used_outs, eqn)
            if eqn is None:
                continue
        elif any(used_outs) or eqn.effects:
            used_ins = [True] * len(eqn.invars)
        else:
            continue
        new_eqns.append(eqn)
        live.update(x for x, u in zip(eqn.invars, used_ins) if u and type(x) is Var)
    new_eqns.reverse()
    used_inputs = [v in live for v in jaxpr.invars]
    invars = jaxpr.invars
    if prune_invars:
        invars = [v for v, u in zip(invars, used_inputs) if u]
    outvars = [v for v, u in zip(jaxpr.outvars, used_outputs) if u]
    constvars = [v for v in jaxpr.constvars if v in live]
    new = Jaxpr(constvars, invars, outvars, new_eqns)
    return new, used_inputs


def dce_closed_jaxpr(closed: ClosedJaxpr) -> ClosedJaxpr:
    jaxpr = closed.jaxpr
    new, _ = dce_jaxpr(jaxpr)
    unchanged = len(new.constvars) == len(jaxpr.constvars) and len(new.eqns) == len(
        jaxpr.eqns
    )
    if unchanged and all(a is b for a, b in zip(new.eqns, jaxpr.eqns)):
        return closed
    kept = set(new.constvars)
    consts = [c for v, c in zip(jaxpr.constvars, closed.consts) if v in kept]
    return ClosedJaxpr(new, consts)


# Pretty printing in JAX's text format: `jaxpr_printer` (needs the classes above).
from jaxlite.array import Array, from_host  # noqa: E402  (needs the classes above)
from jaxlite.array import (  # noqa: E402  (key arrays: filled by the libs)
    _virtual_array_types as _extended_value_types,
)
from jaxlite.jaxpr_printer import (  # noqa: E402, F401
    _Namer,
    pp_call_primitives,
    pp_eqn,
    pretty_print,
)

_array_types = (Array, np.ndarray, np.generic)


def _host_aval(x):
    dtype, weak = dtypes.dtype_and_weak(x)
    return ShapedArray(np.shape(x), dtype, weak)


def _own_aval(x):
    return x.aval


for _t in (np.ndarray, np.generic, *_scalar_types):
    pytype_aval_mappings[_t] = _host_aval
    canonicalize_value_handlers[_t] = numpy_value
for _t in (Array, Tracer):
    pytype_aval_mappings[_t] = _own_aval
canonicalize_value_handlers[Array] = as_value
del _t

# JAX's extension API on the core (`jax.core`, `jax.extend.core`): needs the above.
from jaxlite.core_extension import (  # noqa: E402, F401  (re-exported)
    Effect,
    Effects,
    ParamDict,
    Value,
    abstract_eval_from_jax,
    check_jaxpr,
    eval_context,
    find_top_trace,
    get_opaque_trace_state,
    impl_from_jax,
    jaxprs_in_params,
    max_dim,
    min_dim,
    new_jaxpr_eqn,
    valid_jaxtype,
)

# Values of extended dtypes (typed PRNG keys) and their stored arrays: needs the above.
from jaxlite.core_physical import (  # noqa: E402, F401  (re-exported)
    _process_extended,
    eager_rules_by_type,
    from_physical,
    has_data,
    no_physical_rule_error,
    physical_aval,
    physical_rules,
    physical_value,
)
