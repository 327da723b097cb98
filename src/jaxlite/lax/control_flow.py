"""Structured control flow: cond, switch, while_loop, fori_loop, scan and map.

A Python `if` or `for` on a traced value cannot be staged out, so these functions take
their bodies as functions, trace each body to a jaxpr once, and bind one primitive
(`cond`, `while` or `scan`) that holds the jaxprs. Every transformation then works on the
primitive through its rules: JVP differentiates the bodies, partial evaluation splits
them into a known and an unknown part, transposition runs a scan backwards, batching
vectorises the bodies. Effects of the bodies become effects of the equation, so a loop
with a callback inside is never pruned or reordered.

This module holds what the primitives share: tracing a body with JAX's checks and error
messages, small helpers for their rules (carry fixed points, zero tangents, the avals
of slices), and what the loop compiler must know about lax primitives (it lives in
`backend/loops.py`, below `lax/`, and knows no primitive by name). Operations on whole jaxprs live in `interpreters/partial_eval.py`,
the JVP and the batched version of a body in `interpreters/ad.py` and
`interpreters/batching.py`, and the Python code that runs a loop on the NumPy backend in
`backend/loops.py`. The primitives themselves live in `conditionals.py` and
`loops.py`; the public functions are re-exported here.
"""

from __future__ import annotations

import inspect
import weakref

import numpy as np

from jaxlite import dtypes, tree_util
from jaxlite.api_util import trace_flat
from jaxlite.backend.loops import accumulators, product_sums
from jaxlite.config import config
from jaxlite.core import (  # noqa: F401  (as_value, is_concrete: the loops use them)
    ShapedArray,
    Tracer,
    as_value,
    get_aval,
    is_concrete,
    is_jax_type,
)
from jaxlite.interpreters import ad
from jaxlite.interpreters.partial_eval import debug_info, hoist_consts
from jaxlite.lax.dot import dot_general_p
from jaxlite.lax.elementwise import (
    add_p,
    convert_element_type,
)
from jaxlite.lax.reductions import reduce_sum
from jaxlite.state.types import AbstractRef, check_no_returned_refs
from jaxlite.util import fun_name, safe_zip

zip = safe_zip

# ----------------------------------------------------------------------------------------
# Operands


def flatten_operands(tree):
    """The leaves of an operand pytree, each checked to be a JAX value. NumPy arrays
    become Arrays (copied now, as JAX does, and one constant when used twice)."""
    leaves, treedef = tree_util.tree_flatten(tree)
    for i, x in enumerate(leaves):
        if isinstance(x, np.ndarray) or hasattr(x, "__jax_array__"):
            leaves[i] = as_value(x)
        elif not is_jax_type(x):
            raise TypeError(
                f"Argument '{x}' of type '{type(x)}' is not a valid JAX type"
            )
    return leaves, treedef


def typematch(a, b):
    """Equal shape and dtype; weak types may differ."""
    return a.shape == b.shape and a.dtype == b.dtype


def long_str(aval):
    return aval.str_short(short_dtypes=False)


# ----------------------------------------------------------------------------------------
# Tracing bodies


def fun_sourceinfo(fun):
    """`name at file:line`, as JAX names a function in error messages."""
    while hasattr(fun, "func") and hasattr(fun, "args"):  # functools.partial
        fun = fun.func
    fun = inspect.unwrap(fun)
    try:
        code = fun.__code__
        return f"{fun.__name__} at {code.co_filename}:{code.co_firstlineno}"
    except AttributeError:
        return fun_name(fun, "<unknown>")


def trace_body(fun, what, in_tree, in_avals, named=None):
    """Trace `fun(*args)` where `args` is the pytree `in_tree` of values of `in_avals`.

    Returns `(jaxpr, consts, out_tree, out_avals)`: a ClosedJaxpr whose first invars stand
    for `consts` (the values the body closes over, to be passed as operands), the
    output pytree structure and the output avals. Error messages name `fun` (or the
    user's function `named`, when `fun` only wraps it).

    As in JAX, a function is traced once per argument signature: the result is cached
    on the function object, so calling `lax.scan(body, ...)` again with the same body
    neither retraces it (its Python side effects happen once) nor compiles it again.
    Results that close over tracers of an enclosing transformation are not cached.
    """
    owner = named or fun
    key = (what, in_tree, tuple(in_avals), config.trace_context)
    cached = _trace_cache_get(owner, key)
    if cached is not None:
        return cached
    args = tree_util.tree_unflatten(in_tree, in_avals)
    info = debug_info(owner, what, tuple(args))
    closed, out_tree = trace_flat(fun, in_tree, in_avals, info)
    check_no_returned_refs(
        fun_sourceinfo(owner), what, out_tree, closed, info.arg_names
    )
    jaxpr, consts = hoist_consts(closed)
    result = (jaxpr, consts, out_tree, jaxpr.out_avals)
    if not any(isinstance(c, Tracer) for c in consts):
        _trace_cache_put(owner, key, result)
    return result


_trace_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _trace_cache_get(owner, key):
    try:
        return _trace_cache.get(owner, {}).get(key)
    except TypeError:  # not weakly referenceable, or an unhashable key
        return None


def _trace_cache_put(owner, key, result):
    try:
        _trace_cache.setdefault(owner, {})[key] = result
    except TypeError:
        pass


def memoized_wrapper(cache, fun, make):
    """`make(fun)`, the same object for the same `fun` (so that wrapped bodies, like
    fori_loop's, hit the trace cache too). `cache` is weakly keyed by `fun`, so the
    wrapper holds `fun` weakly: an entry that held its own key would keep every body
    (and the arrays it closes over) alive for good."""
    try:
        wrapper = cache.get(fun)
        if wrapper is None:
            wrapper = cache[fun] = make(_WeakFun(fun))
        return wrapper
    except TypeError:
        return make(fun)


class _WeakFun:
    """Calls `fun`, held weakly (alive while its caller uses the wrapper), under its
    name."""

    __slots__ = ("_ref", "__name__", "__weakref__")

    def __init__(self, fun):
        self._ref = weakref.ref(fun)
        self.__name__ = getattr(fun, "__name__", type(fun).__name__)

    def __call__(self, *args, **kwargs):
        return self._ref()(*args, **kwargs)


def promote_weak_inputs(vals, in_avals, out_avals):
    """Weakly typed initial values whose type the body changes take the body's type
    (`fori_loop(0, n, f, 0)` with `f` adding an int32 array). Returns (vals, changed)."""
    new, changed = [], False
    for v, a_in, a_out in zip(vals, in_avals, out_avals):
        if a_in.weak_type and not typematch(a_in, a_out):
            v = convert_element_type(v, dtypes.result_type(v, a_out))
            changed = True
        new.append(v)
    return new, changed


# ----------------------------------------------------------------------------------------
# JAX's type errors


def _structure_differences(t1, t2, path=()):
    """`(path, thing1, thing2, why)` for each place where two pytrees differ."""
    is_leaf1 = tree_util.treedef_is_leaf(tree_util.tree_structure(t1))
    is_leaf2 = tree_util.treedef_is_leaf(tree_util.tree_structure(t2))
    if is_leaf1 and is_leaf2:
        return []
    if type(t1) is not type(t2):
        return [(path, _type_name(t1), _type_name(t2), "their Python types differ")]
    if isinstance(t1, (list, tuple)) and len(t1) != len(t2):
        return [
            (
                path,
                f"{type(t1).__name__} of length {len(t1)}",
                f"{type(t2).__name__} of length {len(t2)}",
                "the lengths do not match",
            )
        ]
    kids1 = tree_util.flatten_one_level_with_keys(t1)[0]
    kids2 = tree_util.flatten_one_level_with_keys(t2)[0]
    keys1 = [k for k, _ in kids1]
    keys2 = [k for k, _ in kids2]
    if keys1 != keys2:
        return [
            (
                path,
                f"{type(t1).__name__} with keys {keys1}",
                f"{type(t2).__name__} with keys {keys2}",
                "the keys do not match",
            )
        ]
    out = []
    for (k, c1), (_, c2) in zip(kids1, kids2):
        out += _structure_differences(c1, c2, (*path, k))
    return out


def _bullets(diffs, capitalize=True):
    """One difference as a sentence, several as a bulleted list (as JAX writes them)."""
    if len(diffs) == 1:
        text = diffs[0]
        return (text[0].upper() if capitalize else text[0]) + text[1:] + ".\n"
    return "\n".join(f"  * {d};" for d in diffs[:-1]) + f"\n  * {diffs[-1]}.\n"


def _mismatch_extra(a1, a2):
    reasons = []
    if a1.dtype != a2.dtype:
        reasons.append("the dtypes do not match")
    if a1.shape != a2.shape:
        reasons.append("the shapes do not match")
    if not reasons:
        return ""
    return ", so " + ", and ".join(reasons)


def check_carry_type(name, body_fun, in_tree, in_avals, out_tree, out_avals):
    """JAX's TypeError when a loop body changes the structure or type of its carry."""
    try:
        carry_name = list(inspect.signature(body_fun).parameters)[0]
    except (ValueError, TypeError, IndexError):
        carry_name = None

    def component(path):
        key = tree_util.keystr(path)
        if carry_name:
            if path:
                return f"the input carry component {carry_name}{key}"
            return f"the input carry {carry_name}"
        return f"the input carry at path {key}" if path else "the input carry"

    if in_tree != out_tree:
        ins = tree_util.tree_unflatten(in_tree, in_avals)
        outs = tree_util.tree_unflatten(out_tree, out_avals)
        diffs = [
            f"{component(p)} is a {a} but the corresponding component of the carry "
            f"output is a {b}, so {why}"
            for p, a, b, why in _structure_differences(ins, outs)
        ]
        differences = (
            _bullets(diffs)
            if diffs
            else (
                f"the input tree structure is:\n{in_tree}\n"
                f"the output tree structure is:\n{out_tree}\n"
            )
        )
        raise TypeError(
            f"{name} function carry input and carry output must have the same pytree "
            f"structure, but they differ:\n\n{differences}\nRevise the function so that "
            "the carry output has the same pytree structure as the carry input."
        )
    if all(typematch(a, b) for a, b in zip(in_avals, out_avals)):
        return
    paths = _leaf_paths(in_tree, in_avals)
    diffs = [
        f"{component(p)} has type {long_str(a)} but the corresponding output carry "
        f"component has type {long_str(b)}{_mismatch_extra(a, b)}"
        for p, a, b in zip(paths, in_avals, out_avals)
        if not typematch(a, b)
    ]
    raise TypeError(
        f"{name} function carry input and carry output must have equal types, but they "
        f"differ:\n\n{_bullets(diffs)}\nRevise the function so that all output types "
        "match the corresponding input types."
    )


def _leaf_paths(tree, leaves):
    """The key path of each leaf of `tree`."""
    pairs, _ = tree_util.tree_flatten_with_path(tree_util.tree_unflatten(tree, leaves))
    return [path for path, _ in pairs]


def check_branch_outputs(api, name1, name2, f1, f2, tree1, avals1, tree2, avals2):
    """JAX's TypeError when two branches of a cond/switch return different types."""
    where = f"{name1} is {fun_sourceinfo(f1)}\n{name2} is {fun_sourceinfo(f2)}\n\n"
    if tree1 != tree2:
        leaf = _PytreeLeaf()
        t1 = tree_util.tree_unflatten(tree1, [leaf] * tree1.num_leaves)
        t2 = tree_util.tree_unflatten(tree2, [leaf] * tree2.num_leaves)
        diffs = [
            f"{name1} output{_at_path(p)} is a {a} but {name2} output{_at_path(p)} is a "
            f"{b}, so {why}"
            for p, a, b, why in _structure_differences(t1, t2)
        ]
        differences = _bullets(diffs, capitalize=False) if diffs else ""
        raise TypeError(
            f"{api} branch outputs must have the same pytree structure, but they "
            f"differ:\n\n{where}{differences}\nRevise {name1} and/or {name2} so that "
            "they have the same pytree structure."
        )
    if all(typematch(a, b) for a, b in zip(avals1, avals2)):
        return
    paths = _leaf_paths(tree1, avals1)
    diffs = [
        f"the output of {name1}{_at_path(p)} has type {long_str(a)} but the "
        f"corresponding output of {name2} has type {long_str(b)}{_mismatch_extra(a, b)}"
        for p, a, b in zip(paths, avals1, avals2)
        if not typematch(a, b)
    ]
    raise TypeError(
        f"{api} branches must have equal output types but they differ.\n\n{where}"
        f"{_bullets(diffs)}\nRevise {name1} and/or {name2} so that all output types "
        "match."
    )


class _PytreeLeaf:
    """Stands for any leaf when only tree structures are compared."""


def _type_name(x):
    return "pytree leaf" if isinstance(x, _PytreeLeaf) else str(type(x))


def _at_path(path):
    return f" at path {tree_util.keystr(path)}" if path else ""


def avals_tree_str(tree, avals):
    """A pytree of avals printed as JAX prints them in messages (`~float32[]` weak)."""

    leaves = [_Shown(str(a)) for a in avals]
    return str(tree_util.tree_unflatten(tree, leaves))


class _Shown:
    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


# ----------------------------------------------------------------------------------------
# Transformations of whole bodies


def tangent_nonzero(primal, tangent):
    """Whether a tangent may be nonzero (integer and boolean values have none)."""
    return type(tangent) is not ad.Zero and dtypes.issubdtype(
        get_aval(primal).dtype, np.inexact
    )


def is_float(aval):
    return dtypes.issubdtype(aval.dtype, np.inexact)


def fixed_point(step, flags):
    """Iterate `flags = flags | step(flags)` until nothing changes (at most len+1 times).

    Used for loop carries: a carry is differentiated / unknown / batched when its
    initial value is, or when one iteration makes it so.
    """
    flags = list(flags)
    for _ in range(len(flags) + 1):
        out = step(flags)
        new = [a or b for a, b in zip(flags, out)]
        if new == flags:
            return flags
        flags = new
    return flags


def zeros_for(aval):
    """A zero tangent/cotangent of `aval` as a value, under the current trace."""
    return ad.zeros_like_aval(ad.tangent_aval(aval))


def instantiate_zeros(t):
    return ad.instantiate(t) if type(t) is ad.Zero else t


def slice_aval(aval):
    """The aval of one iteration's slice of a scanned array."""
    if type(aval) is AbstractRef:
        raise NotImplementedError(
            f"scan over a mutable array reference ({aval}) is not supported: close "
            "over the reference in the body and index it with the iteration number "
            "(`lax.fori_loop`), or scan over its value (`ref[...]`)."
        )
    return ShapedArray(aval.shape[1:], aval.dtype, aval.weak_type)


def stacked_aval(length, aval):
    """The aval of `length` stacked values of `aval`."""
    return ShapedArray((length, *aval.shape), aval.dtype, aval.weak_type)


# ----------------------------------------------------------------------------------------
# What the loop compiler (`backend/loops.py`, which cannot import `lax`) must know about
# lax primitives: host calls stay in a loop; a carry `acc + dot_general(a, b)` leaves
# the loop and becomes one `dot_general` that also contracts the iteration axis.


def _dot_general_sum(stacked, lhs, rhs, **params):
    """The sum over iterations of `dot_general(lhs_i, rhs_i)`; `stacked[k]` says whether
    operand k has the iteration axis in front (a sum of outer products is one matrix
    product)."""
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    if all(stacked):
        dims = (
            (type(lc)([0, *(d + 1 for d in lc)]), type(rc)([0, *(d + 1 for d in rc)])),
            (type(lb)(d + 1 for d in lb), type(rb)(d + 1 for d in rb)),
        )
    else:
        lhs = reduce_sum(lhs, (0,)) if stacked[0] else lhs
        rhs = reduce_sum(rhs, (0,)) if stacked[1] else rhs
        dims = params["dimension_numbers"]
    return dot_general_p.bind(lhs, rhs, **dict(params, dimension_numbers=dims))


accumulators.add(add_p)
product_sums[dot_general_p] = _dot_general_sum


# The primitives and the public functions (imported last: they use the helpers above).
from jaxlite.lax.conditionals import cond, cond_p, switch  # noqa: E402
from jaxlite.lax.loops import (  # noqa: E402
    fori_loop,
    map,
    scan,
    scan_p,
    while_loop,
    while_p,
)

__all__ = [
    "cond",
    "cond_p",
    "fori_loop",
    "map",
    "scan",
    "scan_p",
    "switch",
    "while_loop",
    "while_p",
]
