"""Structured control flow: cond, switch, while_loop, fori_loop, scan and map.

A Python `if` or `for` on a traced value cannot be staged out, so these functions take
their bodies as functions, trace each body to a jaxpr once, and bind one primitive
(`cond`, `while` or `scan`) that holds the jaxprs. Every transformation then works on the
primitive through its rules: JVP differentiates the bodies, partial evaluation splits
them into a known and an unknown part, transposition runs a scan backwards, batching
vectorises the bodies. Effects of the bodies become effects of the equation, so a loop
with a callback inside is never pruned or reordered.

This module holds what the primitives share: tracing a body with JAX's checks and error
messages, small operations on whole jaxprs (constants as operands, pruning outputs, the
JVP and the batched version of a body), and the Python code that runs a loop on the
NumPy backend. The primitives themselves live in `conditionals.py` and `loops.py`; the
public functions are re-exported here.
"""

from __future__ import annotations

import builtins
import collections
import inspect
import weakref

import numpy as np

from jaxlite import backend, dtypes, tree_util
from jaxlite.config import config
from jaxlite.core import (
    ClosedJaxpr,
    Jaxpr,
    ShapedArray,
    Tracer,
    Var,
    dce_jaxpr,
    get_aval,
    is_jax_type,
    jaxpr_as_fun,
)
from jaxlite.interpreters import ad, batching
from jaxlite.interpreters.batching import not_mapped
from jaxlite.interpreters.partial_eval import debug_info, trace_to_jaxpr
from jaxlite.lax.dot import dot_general_p
from jaxlite.lax.elementwise import add_p
from jaxlite.util import safe_zip, split_list

zip, unsafe_zip = safe_zip, zip

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


def as_value(x):
    """`x` as an Array or tracer (Python scalars become weakly typed Arrays)."""
    from jaxlite.lax.structural import operand

    return operand(x)


def is_concrete(x):
    return not isinstance(x, Tracer) or x.to_concrete_value() is not None


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
        return getattr(fun, "__name__", "<unknown>")


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
    box = {}

    def flat_fun(*leaves):
        out = fun(*tree_util.tree_unflatten(in_tree, leaves))
        out_leaves, box["tree"] = tree_util.tree_flatten(out)
        return out_leaves

    closed = trace_to_jaxpr(flat_fun, in_avals, info)
    jaxpr, consts = hoist_consts(closed)
    result = (jaxpr, consts, box["tree"], jaxpr.out_avals)
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
    fori_loop's, hit the trace cache too)."""
    try:
        wrapper = cache.get(fun)
        if wrapper is None:
            wrapper = cache[fun] = make(fun)
        return wrapper
    except TypeError:
        return make(fun)


def promote_weak_inputs(vals, in_avals, out_avals):
    """Weakly typed initial values whose type the body changes take the body's type
    (`fori_loop(0, n, f, 0)` with `f` adding an int32 array). Returns (vals, changed)."""
    from jaxlite.lax.elementwise import convert_element_type

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
# Operations on whole jaxprs. The jaxprs held by control-flow equations have no
# constvars: what a body closes over is passed as leading operands.


def hoist_consts(closed):
    """`(jaxpr without constvars, consts)`: constvars become the first invars."""
    j = closed.jaxpr
    if not j.constvars:
        return closed, []
    new = Jaxpr([], [*j.constvars, *j.invars], j.outvars, j.eqns, j.effects)
    return ClosedJaxpr(new, []), list(closed.consts)


def make_closed(invars, outvars, eqns):
    return ClosedJaxpr(Jaxpr([], invars, outvars, eqns), [])


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
    return make_closed(closed.jaxpr.invars, new.outvars, new.eqns)


def dce_closed(closed, used_outputs):
    """`(jaxpr computing only the used outputs, used_inputs)`; invars are kept."""
    new, used_inputs = dce_jaxpr(closed.jaxpr, list(used_outputs))
    return make_closed(closed.jaxpr.invars, new.outvars, new.eqns), used_inputs


def select_invars(closed, keep):
    """`closed` with only the invars where `keep` is True (the others must be unused)."""
    j = closed.jaxpr
    return make_closed([v for v, k in zip(j.invars, keep) if k], j.outvars, j.eqns)


def add_invars(closed, avals, position):
    """`closed` taking extra unused inputs of `avals` at `position`."""
    j = closed.jaxpr
    new = [Var(a) for a in avals]
    invars = [*j.invars[:position], *new, *j.invars[position:]]
    return make_closed(invars, j.outvars, j.eqns)


def permute(closed, in_order=None, out_order=None):
    """`closed` with invars and/or outvars reordered: `in_order[i]` is the old index
    of the new i-th input."""
    j = closed.jaxpr
    invars = j.invars if in_order is None else [j.invars[i] for i in in_order]
    outvars = j.outvars if out_order is None else [j.outvars[i] for i in out_order]
    return make_closed(invars, outvars, j.eqns)


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
    for closed, consts in zip(jaxprs, consts_lists):
        j = closed.jaxpr
        own = dict(unsafe_zip([index[id(c)] for c in consts], j.invars[: len(consts)]))
        const_vars = [own.get(i) or Var(get_aval(c)) for i, c in enumerate(merged)]
        out.append(
            make_closed([*const_vars, *j.invars[len(consts) :]], j.outvars, j.eqns)
        )
    return out, merged


# ----------------------------------------------------------------------------------------
# Transformations of whole bodies


def tangent_nonzero(primal, tangent):
    """Whether a tangent may be nonzero (integer and boolean values have none)."""
    return type(tangent) is not ad.Zero and dtypes.issubdtype(
        get_aval(primal).dtype, np.inexact
    )


def is_float(aval):
    return dtypes.issubdtype(aval.dtype, np.inexact)


def jvp_jaxpr(closed, nonzeros, instantiate):
    """The JVP of a body, as a jaxpr.

    Inputs: the primals, then the tangents where `nonzeros` is True. Outputs: the primal
    outputs, then the nonzero tangents. An output tangent is nonzero when it depends on
    an input tangent, or when `instantiate` asks for it (zeros are then materialised).
    Returns `(jaxpr, out_nonzeros)`.
    """
    in_avals = closed.in_avals
    t_avals = [ad.tangent_aval(a) for a, nz in zip(in_avals, nonzeros) if nz]
    n = len(in_avals)
    box = []

    def fun(*args):
        primals, nz_tangents = args[:n], iter(args[n:])
        tangents = [
            next(nz_tangents) if nz else ad.Zero(ad.tangent_aval(a))
            for a, nz in zip(in_avals, nonzeros)
        ]
        outs, out_tangents = ad.jvp_flat(jaxpr_as_fun(closed), list(primals), tangents)
        out_nz, kept = [], []
        for o, t, inst in zip(outs, out_tangents, instantiate):
            if not is_float(get_aval(o)):
                out_nz.append(False)
                continue
            if type(t) is ad.Zero and inst:
                t = ad.instantiate(t)
            out_nz.append(type(t) is not ad.Zero)
            if type(t) is not ad.Zero:
                kept.append(t)
        box.append(out_nz)
        return [*outs, *kept]

    jaxpr = trace_to_jaxpr(fun, [*in_avals, *t_avals])
    return jaxpr, box[0]


def batch_body(closed, axis_size, in_dims, out_batched=None):
    """`closed` vectorised over a batch: inputs batched at `in_dims` (or not_mapped),
    outputs at axis 0 or not_mapped (forced to 0 where `out_batched` says True).

    Returns `(jaxpr, consts, out_batched)`; `consts` are values the batched body needs
    (its first invars), as in `trace_body`.
    """
    batched, out_dims = batching.batch_jaxpr(closed, axis_size, in_dims, out_batched)
    jaxpr, consts = hoist_consts(batched)
    return jaxpr, consts, [d is not batching.not_mapped for d in out_dims]


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
    return ShapedArray(aval.shape[1:], aval.dtype, aval.weak_type)


def stacked_aval(length, aval):
    """The aval of `length` stacked values of `aval`."""
    return ShapedArray((length, *aval.shape), aval.dtype, aval.weak_type)


# ----------------------------------------------------------------------------------------
# Loops on the NumPy backend. A loop equation runs as generated Python: a `for` or
# `while` around one call of the body's compiled function per iteration. A Python loop
# pays per NumPy call, so two rewrites take work out of a scan's loop: what does not
# depend on the carry runs before it, vectorised over all iterations, and carries that
# only accumulate products are summed after it by one contraction.


class _IdentityCache:
    """Values derived from jaxprs, keyed by the jaxprs' identities (an entry holds the
    jaxprs, so their ids cannot be reused while it is cached); cleared when full.

    Tracing is cached per body function (`trace_body`), so an eager loop called again
    gets the same jaxprs; deriving the same equation from them again (and not a new,
    equal one) lets the compiled loop be reused too."""

    def __init__(self, size=512):
        self.entries = {}
        self.size = size

    def get(self, objs, tag, make):
        key = (tag, *(id(o) for o in objs))
        hit = self.entries.get(key)
        if hit is not None and all(a is b for a, b in unsafe_zip(hit[0], objs)):
            return hit[1]
        value = make()
        if len(self.entries) >= self.size:
            self.entries.clear()
        self.entries[key] = (tuple(objs), value)
        return value


_derived = _IdentityCache()


def derived(objs, tag, make):
    """`make()`, computed once for the jaxprs `objs` (see `_IdentityCache`)."""
    return _derived.get(objs, tag, make)


def _exec_source(lines, namespace, name):
    source = "\n".join(lines) + "\n"
    exec(builtins.compile(source, f"<jaxlite:{name}>", "exec"), namespace)
    fun = namespace[name]
    fun.source = source
    return fun


def scan_runner(jaxpr, length, num_carry, num_consts, reverse):
    """A Python function running the whole scan on NumPy values: generated source with
    one call of the compiled body per iteration, the `y`s written into preallocated
    arrays."""
    return derived(
        [jaxpr],
        ("scan", length, num_carry, num_consts, reverse),
        lambda: _make_scan_runner(jaxpr, length, num_carry, num_consts, reverse),
    )


def _make_scan_runner(jaxpr, length, num_carry, num_consts, reverse):
    num_xs = len(jaxpr.in_avals) - num_consts - num_carry
    num_ys = len(jaxpr.out_avals) - num_carry
    ks = [f"k{i}" for i in range(num_consts)]
    cs = [f"c{i}" for i in range(num_carry)]
    xs = [f"x{i}" for i in range(num_xs)]
    posts, body = _sink_accumulators(jaxpr, num_consts, num_carry, length)
    kept = [c for i, c in enumerate(cs) if i not in posts]
    pre, body, hoisted = _hoist_out_of_loop(body, num_consts, len(kept), length)
    hs = [f"h{i}" for i in range(len(hoisted))]
    h_inv = [h for h, stacked in zip(hs, hoisted) if not stacked]
    h_st = [h for h, stacked in zip(hs, hoisted) if stacked]
    args = [*ks, *h_inv, *kept, *(f"{x}[i]" for x in xs), *(f"{h}[i]" for h in h_st)]
    # A `y` that is an iteration's slice of an array (an `x` or a hoisted value) is
    # that array: it needs no copying in the loop.
    arg_of = dict(unsafe_zip(body.jaxpr.invars, args))
    y_vars = body.jaxpr.outvars[len(kept) : len(kept) + num_ys]
    direct = {}
    for n, v in enumerate(y_vars):
        arg = arg_of.get(v) if type(v) is Var else None
        if arg is not None and arg.endswith("[i]"):
            direct[n] = arg[:-3]
    n_extra = len(body.out_avals) - len(kept) - num_ys
    keep = [True] * len(kept) + [n not in direct for n in range(num_ys)]
    body = prune_outputs(body, keep + [True] * n_extra)
    first_carry = len(ks) + len(h_inv)
    body, used = dce_closed(body, [True] * len(body.out_avals))
    used = [u or first_carry <= i < first_carry + len(kept) for i, u in enumerate(used)]
    body = select_invars(body, used)
    args = [a for a, u in zip(args, used) if u]
    stacked_avals = body.out_avals[len(kept) :]
    ys = [f"y{i}" for i in range(num_ys) if i not in direct]
    es = [f"e{i}" for i in range(n_extra)]
    namespace = {"_body": backend.compile(body).fun, "_empty": np.empty}
    lines = [f"def scan_loop({', '.join(ks + cs + xs)}):"]
    if pre is not None:
        namespace["_pre"] = pre
        lines.append(f"    {_targets(hs)} = _pre({', '.join(ks + xs)})")
    for j, (name, a) in enumerate(zip(ys + es, stacked_avals)):
        namespace[f"_dt{j}"] = a.dtype
        lines.append(f"    {name}s = _empty({(length, *a.shape)!r}, _dt{j})")
    steps = f"range({length - 1}, -1, -1)" if reverse else f"range({length})"
    call = f"_body({', '.join(args)})"
    targets = kept + ys + es
    if targets or body.jaxpr.eqns:
        lines.append(f"    for i in {steps}:")
        lines.append(
            f"        {_targets(targets)} = {call}" if targets else f"        {call}"
        )
    lines += [f"        {name}s[i] = {name}" for name in ys + es]
    for i, (fn, sources) in posts.items():
        namespace[f"_post{i}"] = fn
        operands = [f"{kind}{j}" if kind != "e" else f"e{j}s" for kind, j in sources]
        lines.append(f"    c{i}, = _post{i}(c{i}, {', '.join(operands)})")
    y_arrays = [direct.get(i, f"y{i}s") for i in range(num_ys)]
    lines.append(f"    return [{', '.join(cs + y_arrays)}]")
    return _exec_source(lines, namespace, "scan_loop")


def _targets(names):
    return ", ".join(names) + ("," if len(names) == 1 else "")


# Two rewrites of a scan body for the NumPy backend. A Python loop pays per NumPy call,
# so work that need not be in the loop leaves it: before it, vectorised over all
# iterations; after it, for sums of products accumulated in a carry.

_HOIST_LIMIT_BYTES = 1 << 28


def _hoist_out_of_loop(jaxpr, num_consts, num_carry, length):
    """Move the body's work that does not depend on the carry out of the loop.

    It runs before the loop for every iteration at once, vectorised over the
    iteration axis by the batching rules (`U @ x_t` for all t is one matrix product);
    what depends on the constants only is computed once. Effectful equations and host
    callbacks stay in the loop, and so does everything downstream of them. Returns
    `(pre, body, stacked)`: `pre(*consts, *xs)` gives the hoisted values, `stacked`
    says which have the iteration axis; the new body takes `(consts, invariant values,
    carry, xs, stacked values)`. `pre` is None when nothing moves.
    """
    j = jaxpr.jaxpr
    consts, carry, xs = split_list(j.invars, [num_consts, num_carry])
    if length < 2:
        return None, jaxpr, []
    variant, hoisted, kept = set(carry), [], []
    for eqn in j.eqns:
        if (
            eqn.effects
            or _calls_host(eqn)
            or any(type(v) is Var and v in variant for v in eqn.invars)
        ):
            variant.update(eqn.outvars)
            kept.append(eqn)
        else:
            hoisted.append(eqn)
    needed = {v for e in kept for v in e.invars if type(v) is Var}
    needed.update(v for v in j.outvars if type(v) is Var)
    boundary = list(dict.fromkeys(v for e in hoisted for v in e.outvars if v in needed))
    if not boundary:
        return None, jaxpr, []
    pre = make_closed([*consts, *xs], boundary, hoisted)
    try:
        batched, dims = batching.batch_jaxpr(
            pre, length, [not_mapped] * len(consts) + [0] * len(xs)
        )
    except (NotImplementedError, TypeError, ValueError):
        return None, jaxpr, []
    stacked = [d is not not_mapped for d in dims]
    size = sum(
        length * v.aval.size * v.aval.dtype.itemsize
        for v, st in zip(boundary, stacked)
        if st
    )
    if size > _HOIST_LIMIT_BYTES:
        return None, jaxpr, []
    inv = [v for v, st in zip(boundary, stacked) if not st]
    st = [v for v, st in zip(boundary, stacked) if st]
    body = make_closed([*consts, *inv, *carry, *xs, *st], j.outvars, kept)
    return backend.compile(batched).fun, body, stacked


def _calls_host(eqn):
    from jaxlite.lax.callbacks import jaxpr_has_callbacks

    return jaxpr_has_callbacks(Jaxpr([], [], [], [eqn]))


def _sink_accumulators(jaxpr, num_consts, num_carry, length):
    """Carries that only accumulate products (`acc = acc + dot_general(a, b)`, as the
    transpose of a scan accumulates the cotangents of its constants) leave the loop.

    The loop stacks the operands instead, and after it one `dot_general` that also
    contracts the iteration axis adds up all the products (a sum of outer products is
    one matrix product). Returns `(posts, body)`: for each such carry
    `(post(init, lhs, rhs), sources)` where `sources` name the operands (`k`onstant,
    `x`, or `e`xtra stacked output of the new body), and the body without those carries.
    """
    j = jaxpr.jaxpr
    consts, carry, xs = split_list(j.invars, [num_consts, num_carry])
    uses = collections.Counter(v for e in j.eqns for v in e.invars if type(v) is Var)
    uses.update(v for v in j.outvars if type(v) is Var)
    producer = {v: e for e in j.eqns for v in e.outvars}
    where = {v: ("k", i) for i, v in enumerate(consts)}
    where.update({v: ("x", i) for i, v in enumerate(xs)})
    sunk, dropped, extras = {}, set(), []
    for i, (c, out) in enumerate(zip(carry, j.outvars[:num_carry])):
        add = producer.get(out) if type(out) is Var else None
        if (
            add is None
            or add.primitive not in (add_p, ad.add_any_p)
            or uses[c] != 1
            or uses[out] != 1
            or c not in add.invars
        ):
            continue
        v = add.invars[1] if add.invars[0] is c else add.invars[0]
        prod = producer.get(v) if type(v) is Var else None
        if (
            prod is None
            or prod.primitive is not dot_general_p
            or uses[v] != 1
            or v.aval.shape != c.aval.shape
            or prod in dropped
            or any(type(op) is not Var for op in prod.invars)
        ):
            continue
        kinds = [where.get(op, ("e", None))[0] for op in prod.invars]
        if kinds == ["k", "k"]:
            continue
        sources = []
        for op in prod.invars:
            if op in where:
                sources.append(where[op])
            else:
                if op not in extras:
                    extras.append(op)
                sources.append(("e", extras.index(op)))
        sunk[i] = (prod, add, sources)
        dropped.update((prod, add))
    if not sunk:
        return {}, jaxpr
    keep = [i not in sunk for i in range(num_carry)]
    body = make_closed(
        [*consts, *(c for c, k in zip(carry, keep) if k), *xs],
        [
            *(o for o, k in zip(j.outvars[:num_carry], keep) if k),
            *j.outvars[num_carry:],
            *extras,
        ],
        [e for e in j.eqns if e not in dropped],
    )
    posts = {
        i: (_sum_of_products(carry[i], prod, add, sources, length), sources)
        for i, (prod, add, sources) in sunk.items()
    }
    return posts, body


def _sum_of_products(acc, prod, add, sources, length):
    """The compiled `post(init, lhs, rhs)`: `init + sum over iterations of prod`."""
    from jaxlite.lax.reductions import reduce_sum

    stacked = [kind != "k" for kind, _ in sources]
    avals = [acc.aval] + [
        stacked_aval(length, op.aval) if st else op.aval
        for op, st in zip(prod.invars, stacked)
    ]

    def post(init, lhs, rhs):
        (lc, rc), (lb, rb) = prod.params["dimension_numbers"]
        if all(stacked):
            dims = (
                (
                    type(lc)([0, *(d + 1 for d in lc)]),
                    type(rc)([0, *(d + 1 for d in rc)]),
                ),
                (type(lb)(d + 1 for d in lb), type(rb)(d + 1 for d in rb)),
            )
        else:
            lhs = reduce_sum(lhs, (0,)) if stacked[0] else lhs
            rhs = reduce_sum(rhs, (0,)) if stacked[1] else rhs
            dims = prod.params["dimension_numbers"]
        total = dot_general_p.bind(
            lhs, rhs, **dict(prod.params, dimension_numbers=dims)
        )
        args = [init, total] if add.invars[0] is acc else [total, init]
        return [add.primitive.bind(*args, **add.params)]

    return backend.compile(trace_to_jaxpr(post, avals)).fun


def while_runner(cond_jaxpr, cond_nconsts, body_jaxpr, body_nconsts):
    return derived(
        [cond_jaxpr, body_jaxpr],
        ("while", cond_nconsts, body_nconsts),
        lambda: _make_while_runner(cond_jaxpr, cond_nconsts, body_jaxpr, body_nconsts),
    )


def _make_while_runner(cond_jaxpr, cond_nconsts, body_jaxpr, body_nconsts):
    namespace = {
        "_cond": backend.compile(cond_jaxpr).fun,
        "_body": backend.compile(body_jaxpr).fun,
    }
    n_carry = len(body_jaxpr.in_avals) - body_nconsts
    ccs = [f"p{i}" for i in range(cond_nconsts)]
    bcs = [f"k{i}" for i in range(body_nconsts)]
    cs = [f"c{i}" for i in range(n_carry)]
    lines = [
        f"def while_loop({', '.join(ccs + bcs + cs)}):",
        f"    while _cond({', '.join(ccs + cs)})[0]:",
    ]
    call = f"_body({', '.join(bcs + cs)})"
    if cs:
        lines.append(f"        {', '.join(cs)}{',' if len(cs) == 1 else ''} = {call}")
    else:
        lines.append(f"        {call}")
    lines.append(f"    return [{', '.join(cs)}]")
    return _exec_source(lines, namespace, "while_loop")


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
