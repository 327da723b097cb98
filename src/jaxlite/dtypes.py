"""JAX's dtype rules: canonical dtypes, weak types and the promotion lattice.

JAX does not promote like NumPy. Two ideas make up its rules, and jaxlite keeps
both so that programs give the same dtypes as under JAX:

- Canonical dtypes. Unless `jax_enable_x64` is on, 64-bit types are stored as
  their 32-bit counterparts (int64 -> int32, float64 -> float32, ...). Asking
  explicitly for a 64-bit dtype warns once per call site and truncates.
- Weak types. A Python scalar (`1`, `2.0`, `1j`) has no width of its own: it
  takes the width of whatever it meets. JAX models it as a "weak" node (i*, f*,
  c*) in a small lattice of types, and a binary operation's dtype is the least
  upper bound of its operands' nodes. So `int8 + 1` stays int8, `int8 + uint8`
  is int16 and `bfloat16 + float16` is float32, without going through float64
  as NumPy would.

`result_type` runs on every eager `jnp` operation, so its answers are cached
per (x64, strict promotion) mode, keyed on the operands' (dtype, weak_type) pairs.
The mode is the calling thread's (the config context managers are thread-local),
read once per call, and an answer is stored only if the configuration did not change
while it was computed, so a cache never holds an answer of another mode.

The default integer is int64 with x64 and int32 without, on every platform: never
NumPy's default (the C `long`), which is 32 bits on some platforms. The Python types
`int`, `float` and `complex` used as dtypes mean int64, float64 and complex128 before
canonicalisation, as in JAX.
"""

import sys
import warnings

import ml_dtypes
import numpy as np

from .config import current
from .errors import jax_array_abstractification_error

bfloat16 = ml_dtypes.bfloat16
float0 = np.dtype([("float0", np.void, 0)])

_bool = np.dtype(np.bool_)
_int8 = np.dtype(np.int8)
_int16 = np.dtype(np.int16)
_int32 = np.dtype(np.int32)
_int64 = np.dtype(np.int64)
_uint8 = np.dtype(np.uint8)
_uint16 = np.dtype(np.uint16)
_uint32 = np.dtype(np.uint32)
_uint64 = np.dtype(np.uint64)
_bfloat16 = np.dtype(ml_dtypes.bfloat16)
_float16 = np.dtype(np.float16)
_float32 = np.dtype(np.float32)
_float64 = np.dtype(np.float64)
_complex64 = np.dtype(np.complex64)
_complex128 = np.dtype(np.complex128)

# The narrow types of ml_dtypes that JAX has: 2- and 4-bit integers, and 4-, 6- and
# 8-bit floats (in JAX's order). NumPy knows them only as opaque ("V"-kind) dtypes, so
# their kind is kept here: `issubdtype` and the promotion lattice place them, and
# they promote implicitly with nothing but Python scalars and booleans.
_narrow_int_names = ("int2", "int4", "uint2", "uint4")
_narrow_float_names = (
    "float4_e2m1fn",
    "float6_e2m3fn",
    "float6_e3m2fn",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e8m0fnu",
    "float8_e4m3b11fnuz",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
)
# By name, those this ml_dtypes has (older ones lack the newest formats).
_narrow_dtypes = {
    name: np.dtype(getattr(ml_dtypes, name))
    for name in _narrow_int_names + _narrow_float_names
    if hasattr(ml_dtypes, name)
}
_narrow_ints = frozenset(
    _narrow_dtypes[n] for n in _narrow_int_names if n in _narrow_dtypes
)
_narrow_floats = frozenset(
    _narrow_dtypes[n] for n in _narrow_float_names if n in _narrow_dtypes
)
_narrow_unsigned = frozenset(dt for dt in _narrow_ints if dt.name.startswith("u"))
_float_parents = (np.floating, np.inexact, np.number, np.generic)
# Scalar class -> the NumPy abstract classes it belongs to (`issubdtype`).
_custom_parents = {ml_dtypes.bfloat16: _float_parents}
_custom_parents.update((dt.type, _float_parents) for dt in _narrow_floats)
_custom_parents.update(
    (dt.type, (np.unsignedinteger, np.integer, np.number, np.generic))
    for dt in _narrow_unsigned
)
_custom_parents.update(
    (dt.type, (np.signedinteger, np.integer, np.number, np.generic))
    for dt in _narrow_ints - _narrow_unsigned
)

# Every dtype jaxlite knows, by NumPy name, in lattice order.
dtype_names = {
    "bool": _bool,
    "int8": _int8,
    "int16": _int16,
    "int32": _int32,
    "int64": _int64,
    "uint8": _uint8,
    "uint16": _uint16,
    "uint32": _uint32,
    "uint64": _uint64,
    "bfloat16": _bfloat16,
    "float16": _float16,
    "float32": _float32,
    "float64": _float64,
    "complex64": _complex64,
    "complex128": _complex128,
    **_narrow_dtypes,
    "float0": float0,
}

_short_names = {
    _bool: "bool",
    _int8: "i8",
    _int16: "i16",
    _int32: "i32",
    _int64: "i64",
    _uint8: "u8",
    _uint16: "u16",
    _uint32: "u32",
    _uint64: "u64",
    _bfloat16: "bf16",
    _float16: "f16",
    _float32: "f32",
    _float64: "f64",
    _complex64: "c64",
    _complex128: "c128",
    float0: "float0",
    # JAX's: i4, u2, f8_e4m3fn, f4_e2m1fn, ...
    **{
        dt: name.replace("uint", "u").replace("int", "i").replace("float", "f")
        for name, dt in _narrow_dtypes.items()
    },
}

_to_32_bit = {
    _int64: _int32,
    _uint64: _uint32,
    _float64: _float32,
    _complex128: _complex64,
}

_python_scalar_types = frozenset({bool, int, float, complex})
_weak_python_types = frozenset({int, float, complex})


# --- canonical dtypes ------------------------------------------------------------

# One cache per x64 mode (indexed by the bool).
_canonical_caches = ({}, {})

# The Python types as dtypes, as JAX reads them (NumPy's `np.dtype(int)` is the C
# `long`, 32 bits on some platforms).
_python_type_dtypes = {
    bool: _bool,
    int: _int64,
    float: _float64,
    complex: _complex128,
}


def _as_np_dtype(x):
    """np.dtype of a dtype-like, or of an object whose `.dtype` is an np.dtype."""
    if isinstance(x, np.dtype):
        return x
    dt = getattr(x, "dtype", None)
    if isinstance(dt, np.dtype):
        return dt
    if type(x) is type and x in _python_type_dtypes:
        return _python_type_dtypes[x]
    return np.dtype(x)


def canonicalize_dtype(dtype):
    """The dtype that values of `dtype` are stored in (64 -> 32 bits unless x64)."""
    x64 = current().x64_enabled
    cache = _canonical_caches[x64]
    try:
        return cache[dtype]
    except (KeyError, TypeError):
        pass
    if isinstance(dtype, ExtendedDType):
        return dtype
    dt = _as_np_dtype(dtype)
    if not dt.isnative:
        dt = dt.newbyteorder("=")
    if not x64:
        dt = _to_32_bit.get(dt, dt)
    if isinstance(dtype, (np.dtype, type, str)):
        cache[dtype] = dt
    return dt


def default_int_dtype():
    return _int64 if current().x64_enabled else _int32


_INT_RANGES = {
    _int32: (-(2**31), 2**31 - 1),
    _int64: (-(2**63), 2**63 - 1),
}


def check_python_int(x):
    """The default integer dtype, after checking that the Python int `x` fits it: JAX
    parses a Python int as that type (weakly) before any promotion, so one that does
    not fit raises OverflowError instead of wrapping around."""
    dt = default_int_dtype()
    low, high = _INT_RANGES[dt]
    if not low <= x <= high:
        raise OverflowError(f"Python int {x} too large to convert to {dt}")
    return dt


def default_uint_dtype():
    return _uint64 if current().x64_enabled else _uint32


def default_float_dtype():
    return _float64 if current().x64_enabled else _float32


def default_complex_dtype():
    return _complex128 if current().x64_enabled else _complex64


def _default_dtype_of_python_type(t):
    if t is int:
        return default_int_dtype()
    if t is float:
        return default_float_dtype()
    if t is complex:
        return default_complex_dtype()
    return _bool


def _is_supported(dt):
    return (
        dt.kind in "biufc"
        or dt == _bfloat16
        or dt == float0
        or dt in _narrow_ints
        or dt in _narrow_floats
    )


def _check_supported(dt, what):
    if not _is_supported(dt):
        raise TypeError(
            f"jaxlite only supports number and bool dtypes, got dtype {what}. "
            "Use one of: " + ", ".join(dtype_names) + "."
        )


def _in_jaxlite(frame):
    module = frame.f_globals.get("__name__", "")
    return module == "jaxlite" or module.startswith("jaxlite.")


def _user_stacklevel():
    """`stacklevel` for a warning raised by our caller that names user code.

    Walks up from the caller's frame past every frame inside the jaxlite package.
    """
    frame = sys._getframe(1)
    level = 1
    while frame.f_back is not None and _in_jaxlite(frame):
        frame = frame.f_back
        level += 1
    return level


def canonicalize_user_dtype(dtype, fun_name=None, stacklevel=None):
    """Checks a dtype the user asked for and returns its canonical form.

    Asking for a 64-bit dtype while x64 is off warns as JAX does, except for
    the Python types `int`, `float` and `complex`, which just mean "the
    default". `None` passes through. `stacklevel` is counted from the caller of
    this function (1 = the caller); by default the warning names the first
    frame outside jaxlite.
    """
    if dtype is None:
        return None
    if isinstance(dtype, type) and dtype in _python_scalar_types:
        return canonicalize_dtype(dtype)
    if isinstance(dtype, ExtendedDType):  # keys (`jnp.zeros(3, key.dtype)`)
        return dtype
    dt = _as_np_dtype(dtype)
    _check_supported(dt, dtype)
    canonical = canonicalize_dtype(dt)
    if canonical != dt:
        where = f" requested in {fun_name}" if fun_name else ""
        msg = (
            f"Explicitly requested dtype {dt}{where} is not available, and will be "
            f"truncated to dtype {canonical}. To enable more dtypes, set the "
            "jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell "
            "environment variable. See https://github.com/jax-ml/jax#current-gotchas "
            "for more."
        )
        if stacklevel is None:
            level = _user_stacklevel()
        else:
            level = stacklevel + 1
        warnings.warn(msg, UserWarning, stacklevel=level)
    return canonical


# JAX's historical name for the same check.
check_user_dtype_supported = canonicalize_user_dtype


# --- values: dtypes and weak types -----------------------------------------------


def is_python_scalar(x):
    """True for bool, int, float and complex (not their subclasses)."""
    return type(x) in _python_scalar_types


def is_weakly_typed(x):
    """True for Python int/float/complex and for values with `weak_type=True`."""
    if type(x) in _weak_python_types:
        return True
    return bool(getattr(x, "weak_type", False))


def _arg_key(x):
    """Hashable summary of one `result_type` operand.

    A Python scalar, or the Python type `int`/`float`/`complex`/`bool` used as a
    dtype, is summarised by its type; everything else by (np.dtype, weak_type).
    """
    t = type(x)
    if t in _python_scalar_types:
        return t
    if isinstance(x, np.dtype):
        return (x, False)
    dt = getattr(x, "dtype", None)
    if isinstance(dt, np.dtype):
        return (dt, bool(getattr(x, "weak_type", False)))
    if t is type and x in _python_scalar_types:
        return x
    if isinstance(x, (int, float, complex)):
        # Subclasses of Python scalars (IntEnum, ...) are strong, as in JAX; their
        # dtype is the 64-bit one of their base type (canonicalised later).
        base = next(b for b in (bool, int, float, complex) if isinstance(x, b))
        return (_python_type_dtypes[base], False)
    if x is None or isinstance(x, (list, tuple)):
        raise TypeError(
            f"Cannot determine dtype of {x!r}: pass an array, a scalar or a dtype."
        )
    if getattr(x, "__jax_array__", None) is not None:  # as JAX 0.10.2's lax
        raise jax_array_abstractification_error()
    return (np.dtype(x), False)


def _canonical_pair(key):
    if type(key) is tuple:
        return canonicalize_dtype(key[0]), key[1]
    return _default_dtype_of_python_type(key), key is not bool


def dtype_and_weak(x):
    """(canonical np.dtype, weak_type) of one value, Python scalar or dtype-like."""
    return _canonical_pair(_arg_key(x))


def dtype(x):
    """Canonical dtype of a value (array, scalar, Python scalar) or a dtype-like.

    Key arrays and extended dtypes give their extended dtype (`key<fry>`)."""
    if x is None:
        raise ValueError("Invalid argument to dtype: None.")
    try:
        return _canonical_pair(_arg_key(x))[0]
    except (TypeError, ValueError):
        dt = x if is_extended(x) else getattr(x, "dtype", None)
        if is_extended(dt):
            return dt
        raise


def scalar_type_of(x):
    """The Python scalar type (bool, int, float or complex) matching x's dtype."""
    dt = dtype(x)
    if dt == _bool:
        return bool
    if is_int(dt):
        return int
    if is_float(dt):
        return float
    if dt.kind == "c":
        return complex
    raise TypeError(f"Invalid scalar value {x!r}")


def itemsize_bits(dtype):
    """Number of bits of one element of `dtype`."""
    return _as_np_dtype(dtype).itemsize * 8


# --- the promotion lattice -------------------------------------------------------


class _WeakNode:
    """A weak lattice node: the type of a Python int, float or complex."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


_weak_int = _WeakNode("i*")
_weak_float = _WeakNode("f*")
_weak_complex = _WeakNode("c*")
_weak_node_of_type = {int: _weak_int, float: _weak_float, complex: _weak_complex}


def _lattice_edges(x64):
    """Each node's direct upper neighbours (JAX's "Type promotion semantics").

    The 32-bit lattice differs in one edge: uint32 sits below int32, so that
    uint32 and int32 promote to int32 rather than to a non-canonical int64.
    """
    edges = {
        _bool: [_weak_int],
        _weak_int: [_uint8, _int8, _weak_float, *_narrow_ints],
        _uint8: [_int16, _uint16],
        _uint16: [_int32, _uint32],
        _uint32: [_int64 if x64 else _int32, _uint64],
        _uint64: [_weak_float],
        _int8: [_int16],
        _int16: [_int32],
        _int32: [_int64],
        _int64: [_weak_float],
        _weak_float: [_bfloat16, _float16, _weak_complex, *_narrow_floats],
        _bfloat16: [_float32],
        _float16: [_float32],
        _float32: [_float64, _complex64],
        _float64: [_complex128],
        _weak_complex: [_complex64],
        _complex64: [_complex128],
        _complex128: [],
    }
    for dt in _narrow_ints | _narrow_floats:  # no implicit promotion beyond themselves
        edges[dt] = []
    return edges


def _upper_sets(edges):
    """Maps each node to the frozenset of all nodes >= it."""
    upper = {}

    def visit(node):
        if node not in upper:
            above = {node}
            for parent in edges[node]:
                above |= visit(parent)
            upper[node] = frozenset(above)
        return upper[node]

    for node in edges:
        visit(node)
    return upper


def _strict_lattice_edges(x64):
    """The lattice of `jax_numpy_dtype_promotion='strict'`: only Python scalars
    (weak types) promote, to the dtypes of their kind and above; two different
    concrete dtypes have no upper bound, and bool none with anything."""
    edges = {node: [] for node in _lattice_edges(x64)}
    integers = [_uint8, _uint16, _uint32, _uint64, _int8, _int16, _int32, _int64]
    edges[_weak_int] = [_weak_float, *integers, *_narrow_ints]
    edges[_weak_float] = [
        _weak_complex,
        _bfloat16,
        _float16,
        _float32,
        _float64,
        *_narrow_floats,
    ]
    edges[_weak_complex] = [_complex64, _complex128]
    return edges


# indexed by (x64, strict)
_upper_by_mode = {
    (x64, strict): _upper_sets(
        (_strict_lattice_edges if strict else _lattice_edges)(x64)
    )
    for x64 in (False, True)
    for strict in (False, True)
}


class TypePromotionError(ValueError):
    """Operands whose dtypes have no implicit promotion (JAX's class, a ValueError)."""


class _NoUpperBound(Exception):
    pass


def _strict_promotion():
    return current().promotion_mode[1]


def _strict_error(names):
    return TypePromotionError(
        f"Input dtypes {tuple(names)} have no available implicit dtype promotion path "
        "when jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the "
        "desired output type, or set jax_numpy_dtype_promotion=standard."
    )


def _strict_name(key):
    """An operand as the strict-promotion error names it: weak values by their
    Python type (`<class 'float'>`), others by dtype name."""
    if type(key) is not tuple:
        return str(key)
    dt, weak = key
    if weak:
        return str({"i": int, "u": int, "c": complex}.get(dt.kind, float))
    return dt.name


def _least_upper_bound(nodes):
    upper = _upper_by_mode[current().promotion_mode]
    for node in nodes:
        if node not in upper:
            raise ValueError(
                f"dtype={node!r} is not a valid dtype for JAX type promotion. "
                "Supported dtypes are: "
                + ", ".join(name for name in dtype_names if name != "float0")
                + "."
            )
    common = frozenset.intersection(*(upper[node] for node in nodes))
    for node in common:
        if upper[node] == common:
            return node
    raise _NoUpperBound  # only in the strict lattice; callers name the operands


def _weak_default(dt):
    """Dtype of a weakly typed result whose strong dtype would be `dt`."""
    if is_unsigned(dt):
        return default_uint_dtype()
    if is_int(dt):
        return default_int_dtype()
    if dt.kind == "c":
        return default_complex_dtype()
    return default_float_dtype()


def _weak_node(dt):
    if dt == _bool:
        return _bool
    if is_int(dt):
        return _weak_int
    if dt.kind == "c":
        return _weak_complex
    return _weak_float


def _promote_keys(keys):
    """(dtype, weak) of a `result_type` call, from its operands' `_arg_key`s."""
    pairs = [_canonical_pair(key) for key in keys]
    try:
        return _promote_pairs(pairs)
    except _NoUpperBound:
        names = [_strict_name(key) for key in keys]
        raise _no_promotion_error(names, [dt for dt, _ in pairs]) from None


def _no_promotion_error(names, operand_dtypes):
    """JAX's TypePromotionError for operands without a common type: in strict mode,
    or (in the standard lattice) with a narrow type, which promotes with nothing
    but itself, booleans and Python scalars."""
    if _strict_promotion():
        return _strict_error(names)
    why = "Try explicitly casting inputs to the desired output type."
    narrow = [_narrow_kind(dt) for dt in operand_dtypes if isinstance(dt, np.dtype)]
    narrow = [kind for kind in narrow if kind is not None]
    if narrow:
        what, example = min(narrow, key=_NARROW_KIND_ORDER.index)  # JAX's order
        why = (
            f"To avoid unintended promotion, {what} do not support implicit "
            "promotion. If you'd like your inputs to be promoted to another type, "
            f"you can do so explicitly using e.g. x.astype('{example}')"
        )
    return TypePromotionError(
        f"Input dtypes {tuple(names)} have no available implicit dtype promotion "
        f"path. {why}"
    )


_NARROW_KIND_ORDER = [
    ("8-bit floats", "float32"),
    ("6-bit floats", "float32"),
    ("4-bit floats", "float32"),
    ("1-bit, 2-bit and 4-bit integers", "int32"),
]


def _narrow_kind(dt):
    """(what JAX's promotion error calls `dt`'s kind, a dtype to cast to), for the
    narrow types; None for the others."""
    if dt in _narrow_floats:
        bits = dt.name[len("float")]
        return f"{bits}-bit floats", "float32"
    if dt in _narrow_ints:
        return "1-bit, 2-bit and 4-bit integers", "int32"
    return None


def _promote_pairs(pairs):
    dtypes = {dt for dt, _ in pairs}
    all_weak = all(weak for _, weak in pairs)
    if len(pairs) == 1:
        dt, weak = pairs[0]
    elif len(dtypes) == 1 and not all_weak:
        dt, weak = pairs[0][0], False
    elif all_weak and not _strict_promotion():
        # All operands weak: promote their dtypes as if strong, then weaken.
        dt, weak = _least_upper_bound(dtypes), True
    else:
        nodes = {_weak_node(dt) if weak else dt for dt, weak in pairs}
        node = _least_upper_bound(nodes)
        weak = isinstance(node, _WeakNode)
        if weak:
            dt = _default_dtype_of_python_type(
                {_weak_int: int, _weak_float: float, _weak_complex: complex}[node]
            )
        else:
            dt = node
    if dt == _bool:
        weak = False
    elif weak:
        dt = _weak_default(dt)
    return canonicalize_dtype(dt), weak


# Caches by (x64, strict): the `promotion_mode` of `config.current()`.
_result_caches = {mode: {} for mode in _upper_by_mode}
_RESULT_CACHE_LIMIT = 4096


def result_type(*args, return_weak_type_flag=False):
    """Canonical dtype of combining `args` under JAX's promotion rules.

    `args` are dtype-likes, Python scalars (weak), NumPy arrays and scalars
    (strong) or any object with `.dtype` and optionally `.weak_type`. With
    `return_weak_type_flag=True` also returns whether the result is weak.
    """
    # Inlined `_arg_key` for the common operands: Python scalars and values with
    # `.dtype` and `.weak_type`. Anything else raises and takes the slow path.
    scalars = _python_scalar_types
    try:
        if len(args) == 2:
            a, b = args
            type_a = type(a)
            type_b = type(b)
            key = (
                type_a if type_a in scalars else (a.dtype, a.weak_type),
                type_b if type_b in scalars else (b.dtype, b.weak_type),
            )
        else:
            key = tuple(
                [
                    type(x) if type(x) in scalars else (x.dtype, x.weak_type)
                    for x in args
                ]
            )
        dt, weak = _result_caches[current().promotion_mode][key]
    except (AttributeError, KeyError, TypeError):
        dt, weak = _result_type_slow(args)
    if return_weak_type_flag:
        return dt, weak
    return dt


def _result_type_slow(args):
    if not args:
        raise ValueError("at least one array or dtype is required")
    extended_dtypes = [
        x if is_extended(x) else x.dtype
        for x in args
        if is_extended(x) or is_extended(getattr(x, "dtype", None))
    ]
    if extended_dtypes:
        return _extended_result_type(args, extended_dtypes)
    key = tuple([_arg_key(x) for x in args])
    view = current()
    version = view.version
    cache = _result_caches[view.promotion_mode]
    try:
        return cache[key]
    except KeyError:
        pass
    result = _promote_keys(key)
    if view.version == version:  # else `config.update` ran meanwhile: not cached
        if len(cache) >= _RESULT_CACHE_LIMIT:
            cache.clear()
        cache[key] = result
    return result


def _extended_result_type(args, extended_dtypes):
    """Arrays of one extended dtype (keys) have that dtype; nothing promotes with
    them, as in JAX."""
    dt = extended_dtypes[0]
    if any(is_extended(x) for x in args):
        raise TypeError(f"Cannot determine dtype of {dt}")
    if len(extended_dtypes) != len(args) or any(d != dt for d in extended_dtypes):
        raise ValueError(f"dtype={dt} is not a valid dtype for JAX type promotion.")
    return dt, False


def _node_name(node):
    """A lattice node as JAX's messages name it: a dtype by name, a weak node by its
    Python type (`<class 'float'>`)."""
    if isinstance(node, _WeakNode):
        types = {_weak_int: int, _weak_float: float, _weak_complex: complex}
        return str(types[node])
    return str(node)


def _promotion_node(x):
    if isinstance(x, type) and x in _weak_node_of_type:
        return _weak_node_of_type[x]
    return _as_np_dtype(x)


_promote_caches = {mode: {} for mode in _upper_by_mode}


def promote_types(a, b):
    """JAX's `jnp.promote_types`: least upper bound of two dtypes.

    As in JAX the result is not canonicalised: `promote_types(float32, float64)`
    is float64 even with x64 off. The Python types `int`, `float` and `complex`
    are weak and resolve to int64, float64 and complex128 when they win.
    """
    view = current()
    version = view.version
    cache = _promote_caches[view.promotion_mode]
    try:
        return cache[a, b]
    except (KeyError, TypeError):
        pass
    nodes = _promotion_node(a), _promotion_node(b)
    try:
        node = _least_upper_bound(set(nodes))
    except _NoUpperBound:
        names = [_node_name(n) for n in nodes]
        raise _no_promotion_error(names, nodes) from None
    if isinstance(node, _WeakNode):
        dt = {_weak_int: _int64, _weak_float: _float64, _weak_complex: _complex128}[
            node
        ]
    else:
        dt = node
    if (
        isinstance(a, (np.dtype, type, str))
        and isinstance(b, (np.dtype, type, str))
        and view.version == version
    ):
        cache[a, b] = dt
    return dt


# --- dtype classes ---------------------------------------------------------------


class extended(np.generic):  # noqa: N801 (JAX's name)
    """Scalar class of the extended dtypes: dtypes NumPy has no notion of, such as
    typed PRNG keys. `issubdtype(keys.dtype, extended)` is True for them."""


class prng_key(extended):  # noqa: N801 (JAX's name)
    """Scalar class of typed PRNG key dtypes (`key<fry>`)."""


class ExtendedDType:
    """Base of the extended dtype objects (not np.dtypes); `type` is the scalar class
    that `issubdtype` compares, `name` what jaxprs and reprs print.

    An extended dtype whose values hold data (typed PRNG keys) gives `_rules`, as in
    JAX: an object with

    - `physical_element_aval(dtype) -> (shape, np.dtype)`: what one element is made
      of (a threefry key: `((2,), uint32)`), so an array of shape `s` is stored as
      an array of shape `(*s, *shape)` (`core.physical_aval`);
    - `physical_data(value)`: the stored array under a value of the dtype;
    - `wrap(dtype, data)`: the value over a stored array;
    - `full(shape, fill_value, dtype)`: `lax.full` of the dtype.

    Primitives consult them (`core.physical_rules`): an operation on values of the
    dtype runs as the same operation on their stored arrays. Dtypes without data
    (the token) leave `_rules` None."""

    type = extended
    name = "extended"
    _rules = None

    def __repr__(self):
        return self.name

    __str__ = __repr__


def is_extended(dt):
    """Is `dt` (a dtype-like) an extended dtype such as `key<fry>`?"""
    return isinstance(dt, ExtendedDType)


def _scalar_class(x):
    """A NumPy scalar class for `x`: abstract classes stay as they are."""
    if isinstance(x, type) and issubclass(x, np.generic):
        return x
    if isinstance(x, ExtendedDType):
        return x.type
    dt = _as_np_dtype(x)
    if dt == float0:
        return float0
    return dt.type


def _issubdtype_uncached(a, b):
    a_class = _scalar_class(a)
    b_class = _scalar_class(b)
    if a_class is float0 or b_class is float0:
        return a_class is b_class or b_class is np.generic
    parents = _custom_parents.get(a_class)
    if parents is not None:  # bfloat16 and the narrow types of ml_dtypes
        return b_class is a_class or b_class in parents
    if b_class in _custom_parents:
        return False
    return issubclass(a_class, b_class)


_issubdtype_cache = {}


def issubdtype(a, b):
    """NumPy's `issubdtype`, with bfloat16 counted as a floating type."""
    try:
        return _issubdtype_cache[a, b]
    except (KeyError, TypeError):
        pass
    result = _issubdtype_uncached(a, b)
    cacheable = (np.dtype, type, str, ExtendedDType)
    if isinstance(a, cacheable) and isinstance(b, cacheable):
        _issubdtype_cache[a, b] = result
    return result


_isdtype_kinds = {
    "bool": (np.bool_,),
    "signed integer": (np.signedinteger,),
    "unsigned integer": (np.unsignedinteger,),
    "integral": (np.integer,),
    "real floating": (np.floating,),
    "complex floating": (np.complexfloating,),
    "numeric": (np.integer, np.inexact),
}


def isdtype(dtype, kind):
    """Array API `isdtype`: does `dtype` belong to `kind` (a name, dtype or tuple)?"""
    dt = _as_np_dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _isdtype_kinds:
                raise ValueError(
                    f"Unrecognized kind={k!r} expected one of "
                    f"{list(_isdtype_kinds)}, or a compatible input for jnp.dtype()"
                )
            if any(issubdtype(dt, parent) for parent in _isdtype_kinds[k]):
                return True
        elif isinstance(k, (np.dtype, type)) or isinstance(
            getattr(k, "dtype", None), np.dtype
        ):
            if dt == _as_np_dtype(k):
                return True
        else:
            raise TypeError(
                f"Expected kind to be a dtype, string, or tuple; got kind={k!r}"
            )
    return False


def finfo(dtype):
    """Machine limits of a floating dtype; works for bfloat16."""
    return ml_dtypes.finfo(_as_np_dtype(dtype))


def iinfo(dtype):
    """Machine limits of an integer dtype."""
    return ml_dtypes.iinfo(_as_np_dtype(dtype))


def short_name(dtype):
    """The name jaxprs print for a dtype: 'f32', 'i8', 'bf16', 'bool', ...; an
    extended dtype's own name (`key<fry>`)."""
    if isinstance(dtype, ExtendedDType):
        return dtype.name
    try:
        return _short_names[dtype]
    except (KeyError, TypeError):
        pass
    dt = _as_np_dtype(dtype)
    return _short_names.get(dt, dt.name)


def is_int(dt):
    """Signed or unsigned integer np.dtype (not bool), int4 and the like included."""
    return dt.kind in "iu" or dt in _narrow_ints


def is_unsigned(dt):
    return dt.kind == "u" or dt in _narrow_unsigned


def is_float(dt):
    """Real floating np.dtype, including bfloat16 and the 4-, 6- and 8-bit floats."""
    return dt.kind == "f" or dt.type is bfloat16 or dt in _narrow_floats


def is_complex(dt):
    return dt.kind == "c"


def is_inexact(dt):
    """Floating or complex np.dtype."""
    return dt.kind in "fc" or dt.type is bfloat16 or dt in _narrow_floats


def is_bool(dt):
    return dt.kind == "b"


# --- conversion ------------------------------------------------------------------


# Inexact dtypes a float64 value may overflow in (NumPy warns; XLA gives inf).
_narrow_inexact = (
    frozenset({_bfloat16, _float16, _float32, _complex64}) | _narrow_floats
)
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def coerce_to_array(x, dtype=None):
    """An np.ndarray of `x` in a canonical dtype (`dtype`, else x's own).

    Python ints that do not fit the default integer type raise OverflowError
    as in JAX rather than wrapping around.
    """
    if dtype is not None:
        dt = canonicalize_dtype(dtype)
        if dt in _narrow_inexact:
            with np.errstate(over="ignore"):  # out of range: inf, silently as XLA
                return np.asarray(x, dtype=dt)
        if type(x) is int and dt.kind in "iu":
            # NumPy's check and words; a 32-bit NumPy would first fail converting
            # to its C long, with other words.
            info = np.iinfo(dt)
            if not info.min <= x <= info.max:
                raise OverflowError(f"Python integer {x} out of bounds for {dt}")
        return np.asarray(x, dtype=dt)
    t = type(x)
    if t is int:
        return np.asarray(x, dtype=check_python_int(x))
    if t in _python_scalar_types:
        dt = _default_dtype_of_python_type(t)
        if t is not bool and abs(x) > _FLOAT32_MAX:  # inf without x64, silently
            with np.errstate(over="ignore"):
                return np.asarray(x, dtype=dt)
        return np.asarray(x, dtype=dt)
    sequence = isinstance(x, (list, tuple))
    try:
        arr = np.asarray(x)
    except OverflowError:  # ints beyond the C long (32 bits on some platforms)
        if not sequence:
            raise
        return _sequence_as(x, canonicalize_dtype(_sequence_dtype(x)))
    _check_supported(arr.dtype, arr.dtype)
    if sequence and arr.dtype.kind in "iu":
        # NumPy gives Python ints its default integer (the C long, 32 bits on some
        # platforms); JAX gives them the default int of the x64 mode.
        dt = canonicalize_dtype(_sequence_dtype(x))
    else:
        dt = canonicalize_dtype(arr.dtype)
    if dt == arr.dtype:
        return arr
    if sequence:
        return _sequence_as(x, dt)
    if arr.dtype.kind in "fc" and dt.kind in "fc":
        with np.errstate(over="ignore"):  # float64 beyond float32: inf, as JAX
            return arr.astype(dt)
    return arr.astype(dt)


def _sequence_as(x, dt):
    """A nested list or tuple converted from its Python values to `dt`: an int out of
    range raises OverflowError (NumPy's words where NumPy checks the range; a 32-bit
    NumPy may first fail converting to its C long, which is reworded the same way)."""
    try:
        return np.asarray(x, dtype=dt)
    except OverflowError as e:
        if "out of bounds" in str(e):
            raise
        raise OverflowError(f"Python integer out of bounds for {dt}") from None


def _sequence_dtype(x):
    """JAX's dtype of a nested list or tuple: its leaves' promotion, Python scalars
    weak (one leaf of each kind is enough)."""
    kinds = {}
    stack = [x]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        else:
            kinds.setdefault(_arg_key(item), item)
    return result_type(*kinds.values())
