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

import collections
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
        self.shape = tuple(shape)
        # As JAX: the dtype is kept as given (int64 stays int64 with x64 off); the
        # aval, what tracing sees, is canonical.
        self.dtype = _given_dtype(dtype) if dtype is not None else None
        self.sharding = sharding
        self.weak_type = weak_type

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

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
    """The abstract value of any JAX value: Array, Tracer, NumPy value or Python scalar."""
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    dtype, weak = dtypes.dtype_and_weak(x)
    return ShapedArray(np.shape(x), dtype, weak)


# Three questions about a user's value, asked here once for every layer above: is it a
# JAX value (`is_jax_type`), what NumPy value stands for it (`numpy_value`), and what
# Array stands for it (`as_value`, jnp.asarray's rules when no dtype is asked for).


def is_jax_type(x) -> bool:
    """Whether `x` can be a JAX value (an array, a tracer, a NumPy value or a scalar)."""
    return isinstance(x, (Tracer, *_array_types)) or type(x) in _scalar_types


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
    raise TypeError(
        f"Value {x!r} of type {type(x)} is not a valid JAX type; primitives take "
        "jaxlite Arrays, NumPy arrays or Python scalars."
    )


def as_value(x):
    """`x` as a JAX value: an Array or a tracer as it is; a Python scalar as a weakly
    typed Array; anything NumPy converts (an array, a NumPy scalar, a nested list) as
    an Array of a canonical dtype owning its memory (`array.from_host`), so 64-bit
    NumPy inputs never leak into results and later writes to the caller's buffer
    cannot change them."""
    t = type(x)
    if t is Array or isinstance(x, Tracer):
        return x
    if t in _scalar_types:
        return Array(dtypes.coerce_to_array(x), t is not bool)
    if t is not np.ndarray:
        if hasattr(x, "__jax_array__"):
            return as_value(x.__jax_array__())
        if isinstance(x, Array):  # a key array (`array.register_virtual_array_type`)
            return x
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
        # NumPy's floating-point warnings off, as under jit (backend.Executable).
        token = quiet_fp()
        try:
            rule = eager_impl_rules.get(prim) or impl_rules.get(prim) or _no_impl(prim)
            outs = rule(*vals, **params)
        finally:
            restore_fp(token)
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
    return tuple(a.weak_type for a in out_avals)


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

    def __hash__(self):
        raise TypeError(f"unhashable type: {type(self).__name__}")

    def __setitem__(self, idx, value):
        raise TypeError(IMMUTABLE_MESSAGE)


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


def jaxpr_as_fun(closed_jaxpr):
    def fun(*args):
        return eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, *args)

    return fun


def eval_jaxpr(jaxpr: Jaxpr, consts, *args):
    """Interpret `jaxpr` by binding each equation under the current trace."""
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


# ----------------------------------------------------------------------------------------
# Pretty printing in JAX's text format
#
# A small document printer in the style of Wadler and Lindig ("strictly pretty"): a
# document is text, breaks, nesting and groups. A group prints flat (each break as its
# flat text) when its own flat text fits in the rest of the line, else its breaks become
# newlines at the current nesting. JAX prints jaxprs the same way, so lines break where
# JAX breaks them: a whole jaxpr on one line when it fits in 80 columns, an equation's
# `[params]` one per line when they do not fit, binders filling lines.

_LINE_WIDTH = 80


class _Brk:
    """A line break, printed as `text` when its group is flat."""

    __slots__ = ("text",)

    def __init__(self, text=" "):
        self.text = text


class _Nest:
    __slots__ = ("n", "child")

    def __init__(self, n, child):
        self.n = n
        self.child = child


class _Group:
    __slots__ = ("child",)

    def __init__(self, child):
        self.child = child


# A document is a str, a list (concatenation), or one of the three classes above.


def _fits(doc, width):
    """Whether `doc` printed flat takes at most `width` columns."""
    agenda = [doc]
    while agenda and width >= 0:
        d = agenda.pop()
        t = type(d)
        if t is str:
            width -= len(d)
        elif t is list:
            agenda.extend(reversed(d))
        elif t is _Brk:
            width -= len(d.text)
        else:
            agenda.append(d.child)
    return width >= 0


def _render(doc, width=_LINE_WIDTH):
    out = []
    col = 0
    stack = [(0, False, doc)]  # (indent, flat, doc)
    while stack:
        indent, flat, d = stack.pop()
        t = type(d)
        if t is str:
            out.append(d)
            col += len(d)
        elif t is list:
            stack.extend((indent, flat, c) for c in reversed(d))
        elif t is _Brk:
            if flat:
                out.append(d.text)
                col += len(d.text)
            else:
                out.append("\n" + " " * indent)
                col = indent
        elif t is _Nest:
            stack.append((indent + d.n, flat, d.child))
        else:
            stack.append((indent, flat or _fits(d.child, width - col), d.child))
    return "".join(out)


def _join(sep, docs):
    out = []
    for i, d in enumerate(docs):
        if i:
            out.append(sep)
        out.append(d)
    return out


class _Namer:
    """Names variables a, b, ..., z, ba, bb, ... in order of first appearance.

    `shared` maps the jaxprs printed once, in a `let` prelude, to their names."""

    def __init__(self):
        self.names = {}
        self.count = 0
        self.shared = {}

    def fresh(self):
        name = _var_name(self.count)
        self.count += 1
        return name

    def __call__(self, v):
        if type(v) is Literal:
            return repr(v)
        name = self.names.get(v)
        if name is None:
            name = self.names[v] = self.fresh()
        return name

    def binder(self, v):
        return f"{self(v)}:{v.aval.str_short()}"


def _var_name(i):
    letters = ""
    while True:
        letters = chr(ord("a") + i % 26) + letters
        i //= 26
        if i == 0:
            return letters


# Primitives whose `jaxpr` parameter is a call of the equation's operands (jit): JAX
# prints that jaxpr's inputs and outputs with the names of the equation's own operands
# and results, so a nested jit reads like the code around it.
pp_call_primitives: set = set()


def _pp_vars(names, sep=""):
    return _Nest(2, _Group(_join([sep, _Group(_Brk())], names)))


def _pp_param(key, value, namer, eqn):
    if isinstance(value, (Jaxpr, ClosedJaxpr)):
        shared = namer.shared.get(_open(value))
        if shared is not None:
            return shared
        if eqn is not None and key == "jaxpr" and eqn.primitive in pp_call_primitives:
            _share_call_names(value, eqn, namer)
        return _pp_jaxpr_doc(value, namer)
    if isinstance(value, tuple) and any(
        isinstance(v, (Jaxpr, ClosedJaxpr)) for v in value
    ):
        docs = [_pp_param(key, v, namer, None) for v in value]
        return _Group([_Nest(2, ["(", _Brk(""), _join(_Brk(), docs)]), _Brk(""), ")"])
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    if isinstance(value, str):
        return value
    if callable(value) and hasattr(value, "__name__") and not isinstance(value, type):
        return value.__name__
    return repr(value)


def _share_call_names(closed, eqn, namer):
    """Give a called jaxpr's inputs and outputs the names of the equation's operands
    and results (unless a name would repeat among the inputs)."""
    jaxpr = closed.jaxpr if isinstance(closed, ClosedJaxpr) else closed
    taken = set()
    for inner, outer in zip(jaxpr.invars, eqn.invars):
        name = namer.names.get(outer) if type(outer) is Var else None
        if name is not None and name not in taken:
            namer.names[inner] = name
            taken.add(name)
    own = set(jaxpr.invars) | set(jaxpr.constvars)
    for inner, outer in zip(jaxpr.outvars, eqn.outvars):
        if type(inner) is Var and inner not in own and inner not in namer.names:
            namer.names[inner] = namer.names.get(outer, "_")


def _pp_eqn_doc(eqn, namer, used):
    lhs = []
    for v in eqn.outvars:
        name = namer.names.get(v)
        if name is None:
            name = "_" if used is not None and v not in used else namer(v)
        lhs.append(f"{name}:{v.aval.str_short()}")
    doc = [_pp_vars(lhs), " = "] if lhs else []
    doc.append(eqn.primitive.name)
    if eqn.params:
        kvs = [[f"{k}=", _pp_param(k, v, namer, eqn)] for k, v in eqn.params.items()]
        doc.append(
            _Group([_Nest(2, ["[", _Brk(""), _join(_Brk(), kvs)]), _Brk(""), "]"])
        )
    doc += [" ", _pp_vars([namer(x) for x in eqn.invars])]
    return doc


def _used_vars(jaxpr):
    used = {x for eqn in jaxpr.eqns for x in eqn.invars if type(x) is Var}
    used.update(v for v in jaxpr.outvars if type(v) is Var)
    return used


def _pp_jaxpr_doc(jaxpr, namer):
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    used = _used_vars(jaxpr)
    consts = _pp_vars([namer.binder(v) for v in jaxpr.constvars])
    invars = _pp_vars([namer.binder(v) for v in jaxpr.invars])
    eqns = [_pp_eqn_doc(e, namer, used) for e in jaxpr.eqns]
    outs = [namer(v) for v in jaxpr.outvars]
    close = ",)" if len(outs) == 1 else ")"
    body = ["{ lambda ", consts, "; ", invars, ". let"]
    body += [_Nest(2, [_Brk(), _join(_Brk("; "), eqns)]), _Brk(), "in ("]
    body += [_pp_vars(outs, ","), close]
    return _Group([_Nest(2, body), " }"])


def pp_eqn(eqn):
    """One equation in JAX's text format (variables named from `a` in this equation)."""
    return _render(_pp_eqn_doc(eqn, _Namer(), None))


def _open(jaxpr):
    return jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr


def _sub_jaxprs(params):
    for value in params.values():
        values = value if isinstance(value, tuple) else (value,)
        for v in values:
            if isinstance(v, (Jaxpr, ClosedJaxpr)):
                yield _open(v)


def _shared_jaxprs(top):
    """The sub-jaxprs that occur more than once (the same object) or have more than 10
    equations, in breadth-first order, with unique names: the `name` of the equation
    that calls them (`<lambda>` becomes `lambda`), else `jaxpr`; a repeated name gets a
    counter (`lambda1`)."""
    counts, names = {}, {}
    queue = collections.deque([top])
    while queue:
        jaxpr = queue.popleft()
        counts[jaxpr] = counts.get(jaxpr, 0) + 1
        if jaxpr is not top and len(jaxpr.eqns) > 10:  # big ones print apart too
            counts[jaxpr] += 1
        for eqn in jaxpr.eqns:
            name = eqn.params.get("name")
            for sub in _sub_jaxprs(eqn.params):
                if isinstance(name, str):
                    names[sub] = name.strip("<>")
                queue.append(sub)
    shared, taken = {}, collections.Counter()
    for jaxpr, count in counts.items():
        if count == 1:
            continue
        name = names.get(jaxpr, "jaxpr")
        seen = taken[name]
        taken[name] += 1
        if seen:
            name += str(seen)
            taken[name] += 1
        shared[jaxpr] = name
    return shared


def pretty_print(jaxpr):
    """A jaxpr in JAX's text format. Sub-jaxprs used more than once (a jitted function
    called twice) or longer than 10 equations are printed once, first, as
    `let name = { lambda ... } in`."""
    jaxpr = _open(jaxpr)
    namer = _Namer()
    namer.shared = _shared_jaxprs(jaxpr)
    docs = []
    for sub, name in namer.shared.items():
        docs.append(_render([f"let {name} = ", _pp_jaxpr_doc(sub, namer), " in"]))
    docs.append(_render(_pp_jaxpr_doc(jaxpr, namer)))
    return "\n".join(docs)


from jaxlite.array import Array, from_host  # noqa: E402  (needs the classes above)

_array_types = (Array, np.ndarray, np.generic)

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
