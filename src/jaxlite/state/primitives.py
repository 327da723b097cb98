"""The primitives of mutable array references, each with all its rules.

    get(ref, *idx, indexer)            -> ref[idx]                      (Read)
    swap(ref, val, *idx, indexer)      -> ref[idx], then ref[idx] = val (Write)
    addupdate(ref, val, *idx, indexer) -> (), ref[idx] += val           (Accum)
    new_ref(init, memory_space, kind)  -> a new reference holding a copy of init
    freeze(ref)                        -> the value ref holds
    empty_ref(ty, memory_space)        -> a new reference of type ty (zeros)
    free_ref(ref)                      -> (), the reference is not used again

`idx` are the dynamic parts of the index; `indexer` (a `RefIndexer`) is the rest.
The NumPy backend runs each primitive's impl on the reference's own buffer, so a
write inside `jit` or a loop body is a write in place.

Transformations:

- Forward mode. The tangent of a reference is a `RefTangent`: the tangent of the
  value it holds now, replaced when the reference is written. A read gives the
  indexed tangent, a write scatters the written value's tangent into it. The tangent
  side is therefore pure array code (indexing and scatters), which reverse mode
  partially evaluates and transposes like any other: the linear jaxpr of `grad`
  holds no reference. `new_ref` gives a tangent even to a value without one, so a
  reference made under differentiation can later hold differentiated values; one
  made outside cannot (JAX's error).
- Batching. A batch of references is a reference with one more axis (any axis);
  reads and writes index it with that axis kept, or with an `iota` when the index
  is batched too. Writing batched values into an unbatched reference is JAX's error.
- Discharge (`discharge_rules`): the same operations on a value instead of a
  reference, which `jaxlite.state.discharge` uses to turn loops over references into
  loops over their values where a transformation needs it.
"""

from __future__ import annotations

import numpy as np

from jaxlite import dtypes
from jaxlite import numpy as jnp
from jaxlite.core import (
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    as_value,
    get_aval,
    impl_rules,
    is_jax_type,
    shaped_abstractify,
)
from jaxlite.interpreters import ad, batching
from jaxlite.interpreters.batching import not_mapped
from jaxlite.jaxpr_printer import pp_eqn_rules
from jaxlite.lax import broadcasted_iota, reshape
from jaxlite.state.indexing import RefIndexer, parse_index
from jaxlite.state.types import (
    AbstractRef,
    Ref,
    accum_effect,
    discharge_rules,
    internal_mutable_array_effect,
    is_ref,
    operations,
    read_effect,
    write_effect,
)

__all__ = [
    "RefTangent",
    "addupdate",
    "addupdate_p",
    "empty_ref",
    "empty_ref_p",
    "free_ref",
    "free_ref_p",
    "freeze",
    "freeze_p",
    "get",
    "get_p",
    "new_ref",
    "new_ref_p",
    "set",
    "swap",
    "swap_p",
]

Zero = ad.Zero

# ----------------------------------------------------------------------------------------
# The functions users call


def _check_ref(ref, what):
    if not is_ref(ref):
        raise TypeError(
            f"{what} takes a mutable array reference (made with jax.new_ref); got a "
            f"value of type {type(ref).__name__}."
        )


def _as_operand(value, what, ref):
    """`value` as an operand written into `ref`: a weakly typed value written into a
    strongly typed reference of its dtype is made strong first, as JAX does (a
    dtype that differs stays, for the check to report)."""
    if not is_jax_type(value) or is_ref(value):
        raise TypeError(
            f"Argument '{value}' of type '{type(value)}' is not a valid JAX type "
            f"(the value given to {what})."
        )
    value = as_value(value)
    aval, ref_aval = get_aval(value), get_aval(ref)
    if aval.dtype == ref_aval.dtype and aval.weak_type and not ref_aval.weak_type:
        value = ad.convert_to_aval(value, ref_aval)
    return value


def _parse(ref, idx):
    return parse_index(ref.shape, () if idx is None else idx)


def get(ref, idx=()):
    """`ref[idx]`: the indexed value (an Array), read now."""
    _check_ref(ref, "get")
    indexer, dynamic = _parse(ref, idx)
    return get_p.bind(ref, *dynamic, indexer=indexer)


def swap(ref, idx, value):
    """Write `value` into `ref[idx]` and return what was there."""
    _check_ref(ref, "swap")
    value = _as_operand(value, "swap", ref)
    indexer, dynamic = _parse(ref, idx)
    return swap_p.bind(ref, value, *dynamic, indexer=indexer)


def set(ref, idx, value):  # noqa: A001  (JAX's name, `jax.ref.set`)
    """`ref[idx] = value`."""
    swap(ref, idx, value)


def addupdate(ref, idx, value):
    """`ref[idx] += value`, in place (one operation, unlike a read and a write)."""
    _check_ref(ref, "addupdate")
    value = _as_operand(value, "addupdate", ref)
    indexer, dynamic = _parse(ref, idx)
    addupdate_p.bind(ref, value, *dynamic, indexer=indexer)


operations.get = get
operations.set = set
operations.addupdate = addupdate


def new_ref(init_val, *, memory_space=None, kind=None):
    """A new mutable array reference holding a copy of `init_val` (`jax.new_ref`)."""
    if is_ref(init_val):
        raise TypeError(
            "new_ref takes an array; got a mutable array reference. Read its value "
            "first: jax.new_ref(ref[...])."
        )
    if not is_jax_type(init_val):
        raise TypeError(
            "Error interpreting argument to new_ref as a JAX value. The problematic "
            f"value is of type {type(init_val)} and was passed to new_ref at "
            "position 0."
        )
    x = as_value(init_val)
    return new_ref_p.bind(x, kind=kind, memory_space=memory_space)


def freeze(ref):
    """The value `ref` holds, as an Array; the reference is not used again."""
    _check_ref(ref, "freeze")
    return freeze_p.bind(ref)


def empty_ref(ty, memory_space=None):
    """A new reference of the type of `ty` (an array or ShapeDtypeStruct); jaxlite
    fills it with zeros."""
    aval = shaped_abstractify(ty)
    return empty_ref_p.bind(ty=aval, memory_space=memory_space)


def free_ref(ref):
    """Declare that `ref` is not used again."""
    _check_ref(ref, "free_ref")
    free_ref_p.bind(ref)
    return ()


# ----------------------------------------------------------------------------------------
# What the rules share


class RefTangent:
    """The tangent of a reference under forward-mode differentiation: the tangent of
    the value it holds now (`value`: an array, or a symbolic `Zero`), replaced when
    the reference is written."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"RefTangent({self.value!r})"


def _ref_tangent(t, ref):
    """The `RefTangent` of a reference operand, or None when it has none (`Zero`). A
    tangent of another kind was given for a reference argument of `grad` or `jvp`:
    JAX's error, as jaxlite differentiates with respect to values only."""
    if type(t) is RefTangent:
        return t
    if type(t) is Zero:
        return None
    aval = get_aval(ref)
    raise ValueError(
        f"Expected cotangent type {aval} but got {get_aval(t).str_short(False)}: a "
        "mutable array reference was given as an argument to differentiate with "
        "respect to. Differentiate with respect to the value it holds (pass "
        "`ref[...]` and make the reference inside the function)."
    )


def _differentiable(aval):
    return dtypes.issubdtype(aval.dtype, np.inexact)


def _not_differentiated_error(what, aval):
    return ValueError(
        f"performing {what} operation with a differentiated value on a "
        f"non-differentiated array reference of type {aval}. Move the array "
        "reference to be an argument of the differentiated function?"
    )


def _unbatched_error(what, aval):
    return ValueError(
        f"performing {what} operation with vmapped value on an unbatched array "
        f"reference of type {aval}. Move the array reference to be an argument to "
        "the vmapped function?"
    )


def _jnp_index(indexer, idx):
    """The `jax.numpy` index that applies `indexer` to a value (dynamic indices
    normalised and clamped, as the NumPy kernels do)."""
    out = []
    dynamic = iter(idx)
    for e, dim in zip(indexer.entries, indexer.shape):
        if e[0] == "s":
            out.append(slice(e[1], e[2], e[3]))
        elif e[0] == "i":
            out.append(e[1])
        else:
            i = next(dynamic)
            out.append(jnp.clip(jnp.where(i < 0, i + dim, i), 0, max(dim - 1, 0)))
    return tuple(out)


def read_value(value, indexer, idx):
    """`get` on a value: `value[idx]`."""
    if indexer.is_whole():
        return value
    return value[_jnp_index(indexer, idx)]


def write_value(value, indexer, idx, x):
    """`swap`'s new value on a value: `value` with `x` at `idx`."""
    if indexer.is_whole():
        return x
    return value.at[_jnp_index(indexer, idx)].set(x)


def accumulate_value(value, indexer, idx, x):
    """`addupdate` on a value: `value` with `x` added at `idx`."""
    if indexer.is_whole():
        return value + x
    return value.at[_jnp_index(indexer, idx)].add(x)


def _batched_indexer(indexer, ref_dim, idx, idx_dims, axis_size):
    """`(indexer, operands, out_dim)` applying `indexer` to every element of a batch
    at once: the reference is batched at `ref_dim` (or not_mapped), the dynamic
    operands at `idx_dims`; `out_dim` is the result's batch axis."""
    entries, shape = list(indexer.entries), list(indexer.shape)
    if all(d is not_mapped for d in idx_dims):
        # Only the reference is batched: a whole slice over its batch axis.
        entries.insert(ref_dim, ("s", 0, axis_size, 1))
        shape.insert(ref_dim, axis_size)
        new = RefIndexer(entries, shape)
        _, axes = new.layout([np.shape(v) for v in idx])
        return new, list(idx), axes[ref_dim]
    # A batched index: every batched dynamic index gets the batch axis in front,
    # padded to the rank of the advanced indices, so that it broadcasts with them.
    example_shapes = [
        np.shape(v) if d is not_mapped else tuple(np.delete(np.shape(v), d))
        for v, d in zip(idx, idx_dims)
    ]
    rank = max(len(s) for s in example_shapes)
    operands = []
    for v, d, s in zip(idx, idx_dims, example_shapes):
        if d is not_mapped:
            operands.append(v)
            continue
        v = batching.moveaxis(v, d, 0)
        operands.append(reshape(v, (axis_size, *(1,) * (rank - len(s)), *s)))
    if ref_dim is not not_mapped:  # element b of the batch reads its own reference
        iota = broadcasted_iota(np.int32, (axis_size, *(1,) * rank), 0)
        operands.insert(sum(e[0] == "d" for e in entries[:ref_dim]), iota)
        entries.insert(ref_dim, ("d",))
        shape.insert(ref_dim, axis_size)
    new = RefIndexer(entries, shape)
    _, axes = new.layout([np.shape(v) for v in operands])
    first = next(n for n, e in enumerate(entries) if e[0] != "s")
    return new, operands, axes[first]


def _batched_write(what, axis_size, vals, dims, indexer):
    """The operands of a write (`swap`, `addupdate`) into a batched reference:
    `(ref, val, operands, indexer, out_dim)`, `val` moved to the batch axis the
    index gives (`out_dim`). An unbatched reference cannot take a batched write."""
    ref, val, *idx = vals
    ref_dim, val_dim, idx_dims = dims[0], dims[1], dims[2:]
    if ref_dim is not_mapped:
        raise _unbatched_error(what, get_aval(ref))
    new, operands, out_dim = _batched_indexer(
        indexer, ref_dim, idx, idx_dims, axis_size
    )
    val = batching.move_to(val, val_dim, out_dim, axis_size)
    return ref, val, operands, new, out_dim


def _pp_ref_eqn(what):
    """The printing rule of get, swap or addupdate, in JAX's form."""

    def rule(eqn, names, binders):
        indexer = eqn.params["indexer"]
        if what == "get":
            ref, *idx = names
            return f"{binders[0]} <- {ref}{indexer.pp(idx)}"
        ref, val, *idx = names
        place = f"{ref}{indexer.pp(idx)}"
        if what == "addupdate":
            return f"{place} += {val}"
        if binders[0].startswith("_:"):  # the old value is unused: a plain write
            return f"{place} <- {val}"
        return f"{binders[0]}, {place} <- {place}, {val}"

    return rule


def _check_value(what, ref_aval, val_aval, indexer, idx_avals):
    """The shape the index gives, after checking that `val_aval` fits it."""
    expected = indexer.result_shape([a.shape for a in idx_avals])
    if tuple(val_aval.shape) != tuple(expected):
        raise ValueError(
            f"Invalid shape for `{what}`. Ref shape: {ref_aval.shape}. Expected "
            f"shape: {tuple(expected)}. Value shape: {tuple(val_aval.shape)}. "
            f"Transforms: {'()' if indexer.is_whole() else f'({indexer},)'}. "
        )
    if val_aval.dtype != ref_aval.dtype:
        raise ValueError(
            f"Invalid dtype for `{what}`. Ref dtype: {ref_aval.dtype}. Value dtype: "
            f"{val_aval.dtype}. "
        )
    return expected


def _check_ref_aval(aval, what):
    if type(aval) is not AbstractRef:
        raise TypeError(f"{what} takes a mutable array reference; got {aval}.")


def _check_indices(idx_avals):
    for a in idx_avals:
        if not dtypes.issubdtype(a.dtype, np.integer):
            raise TypeError(
                f"A mutable array reference is indexed by integers; got an index of "
                f"type {a.str_short()}."
            )


# ----------------------------------------------------------------------------------------
# get


def _get_impl(ref, *idx, indexer):
    index, basic = indexer.numpy_index(idx)
    out = ref._buf[index]
    return [np.array(out) if basic else out]  # never a view of the buffer


def _get_abstract(ref_aval, *idx_avals, indexer):
    _check_ref_aval(ref_aval, "get")
    _check_indices(idx_avals)
    shape = indexer.result_shape([a.shape for a in idx_avals])
    return [ShapedArray(shape, ref_aval.dtype, ref_aval.weak_type)], {read_effect}


def _get_jvp(primals, tangents, *, indexer):
    ref, *idx = primals
    out = get_p.bind(ref, *idx, indexer=indexer)
    t = _ref_tangent(tangents[0], ref)
    if t is None or type(t.value) is Zero:
        return [out], [Zero.from_primal_value(out)]
    return [out], [read_value(t.value, indexer, idx)]


def _get_batch(axis_size, vals, dims, *, indexer):
    ref, *idx = vals
    new, operands, out_dim = _batched_indexer(
        indexer, dims[0], idx, dims[1:], axis_size
    )
    return [get_p.bind(ref, *operands, indexer=new)], [out_dim]


def _get_discharge(in_avals, same, ref_val, *idx, indexer):
    return [None] * len(in_avals), [read_value(ref_val, indexer, idx)]


get_p = Primitive("get")
impl_rules[get_p] = _get_impl
abstract_eval_rules[get_p] = _get_abstract
ad.jvp_rules[get_p] = _get_jvp
batching.batch_rules[get_p] = _get_batch
discharge_rules[get_p] = _get_discharge
pp_eqn_rules[get_p] = _pp_ref_eqn("get")

# ----------------------------------------------------------------------------------------
# swap


def _swap_impl(ref, val, *idx, indexer):
    index, basic = indexer.numpy_index(idx)
    buf = ref._buf
    old = buf[index]
    if basic:
        old = np.array(old)  # a copy, before the write
    buf[index] = val
    return [old]


def _swap_abstract(ref_aval, val_aval, *idx_avals, indexer):
    _check_ref_aval(ref_aval, "swap")
    _check_indices(idx_avals)
    shape = _check_value("swap", ref_aval, val_aval, indexer, idx_avals)
    return [ShapedArray(shape, ref_aval.dtype, ref_aval.weak_type)], {write_effect}


def _swap_jvp(primals, tangents, *, indexer):
    ref, val, *idx = primals
    t_ref, t_val = _ref_tangent(tangents[0], ref), tangents[1]
    old = swap_p.bind(ref, val, *idx, indexer=indexer)
    zero = Zero.from_primal_value(old)
    if not _differentiable(get_aval(ref)):
        return [old], [zero]
    if t_ref is None:
        if type(t_val) is not Zero:
            raise _not_differentiated_error("a set/swap", get_aval(ref))
        return [old], [zero]
    current = t_ref.value
    old_t = zero if type(current) is Zero else read_value(current, indexer, idx)
    if type(current) is not Zero or type(t_val) is not Zero:
        current = ad.instantiate(current)
        t_ref.value = write_value(current, indexer, idx, ad.instantiate(t_val))
    return [old], [old_t]


def _swap_batch(axis_size, vals, dims, *, indexer):
    ref, val, operands, new, out_dim = _batched_write(
        "a set/swap", axis_size, vals, dims, indexer
    )
    return [swap_p.bind(ref, val, *operands, indexer=new)], [out_dim]


def _swap_discharge(in_avals, same, ref_val, val, *idx, indexer):
    old = read_value(ref_val, indexer, idx)
    new = ad.convert_to_aval(write_value(ref_val, indexer, idx, val), in_avals[0])
    return [new] + [None] * (len(in_avals) - 1), [old]


swap_p = Primitive("swap")
impl_rules[swap_p] = _swap_impl
abstract_eval_rules[swap_p] = _swap_abstract
ad.jvp_rules[swap_p] = _swap_jvp
batching.batch_rules[swap_p] = _swap_batch
batching.always_batch.add(swap_p)  # no write into an unbatched reference in vmap
discharge_rules[swap_p] = _swap_discharge
pp_eqn_rules[swap_p] = _pp_ref_eqn("swap")

# ----------------------------------------------------------------------------------------
# addupdate


def _addupdate_impl(ref, val, *idx, indexer):
    index, basic = indexer.numpy_index(idx)
    if basic:
        ref._buf[index] += val
    else:
        np.add.at(ref._buf, index, val)  # repeated indices add up, as in a scatter
    return []


def _addupdate_abstract(ref_aval, val_aval, *idx_avals, indexer):
    _check_ref_aval(ref_aval, "addupdate")
    _check_indices(idx_avals)
    _check_value("addupdate", ref_aval, val_aval, indexer, idx_avals)
    return [], {accum_effect}


def _addupdate_jvp(primals, tangents, *, indexer):
    ref, val, *idx = primals
    t_ref, t_val = _ref_tangent(tangents[0], ref), tangents[1]
    addupdate_p.bind(ref, val, *idx, indexer=indexer)
    if not _differentiable(get_aval(ref)) or type(t_val) is Zero:
        return [], []
    if t_ref is None:
        raise _not_differentiated_error("an addupdate", get_aval(ref))
    current = ad.instantiate(t_ref.value)
    t_ref.value = accumulate_value(current, indexer, idx, t_val)
    return [], []


def _addupdate_batch(axis_size, vals, dims, *, indexer):
    ref, val, operands, new, _ = _batched_write(
        "an addupdate", axis_size, vals, dims, indexer
    )
    addupdate_p.bind(ref, val, *operands, indexer=new)
    return [], []


def _addupdate_discharge(in_avals, same, ref_val, val, *idx, indexer):
    new = accumulate_value(ref_val, indexer, idx, val)
    return [ad.convert_to_aval(new, in_avals[0])] + [None] * (len(in_avals) - 1), []


addupdate_p = Primitive("addupdate", multiple_results=True)
impl_rules[addupdate_p] = _addupdate_impl
abstract_eval_rules[addupdate_p] = _addupdate_abstract
ad.jvp_rules[addupdate_p] = _addupdate_jvp
batching.batch_rules[addupdate_p] = _addupdate_batch
batching.always_batch.add(addupdate_p)
discharge_rules[addupdate_p] = _addupdate_discharge
pp_eqn_rules[addupdate_p] = _pp_ref_eqn("addupdate")

# ----------------------------------------------------------------------------------------
# new_ref


def _new_ref_impl(init, *, memory_space, kind):
    if memory_space is not None:
        raise NotImplementedError(
            "array ref with memory space only works inside of a `jit`."
        )
    buf = np.array(init)  # the reference's own copy, always an ndarray
    aval = ShapedArray(buf.shape, buf.dtype)
    return [Ref(AbstractRef(aval, kind=kind), buf)]


def _new_ref_abstract(init_aval, *, memory_space, kind):
    if not isinstance(init_aval, ShapedArray) or dtypes.is_extended(init_aval.dtype):
        raise TypeError(
            f"new_ref takes an array of a numeric dtype; got a value of type "
            f"{init_aval}."
        )
    aval = AbstractRef(init_aval, memory_space=memory_space, kind=kind)
    return [aval], {internal_mutable_array_effect}


def _new_ref_jvp(primals, tangents, *, memory_space, kind):
    (x,), (t,) = primals, tangents
    ref = new_ref_p.bind(x, kind=kind, memory_space=memory_space)
    if not _differentiable(get_aval(x)):
        return [ref], [Zero(ad.tangent_aval(get_aval(x)))]
    return [ref], [RefTangent(t)]


def _new_ref_batch(axis_size, vals, dims, *, memory_space, kind):
    (x,), (d,) = vals, dims
    if d is not_mapped:  # a reference made inside vmap holds one value per element
        x, d = batching.bdim_at_front(x, d, axis_size), 0
    return [new_ref_p.bind(x, kind=kind, memory_space=memory_space)], [d]


new_ref_p = Primitive("new_ref")
impl_rules[new_ref_p] = _new_ref_impl
abstract_eval_rules[new_ref_p] = _new_ref_abstract
ad.jvp_rules[new_ref_p] = _new_ref_jvp
ad.always_jvp.add(new_ref_p)  # a reference made under differentiation has a tangent
batching.batch_rules[new_ref_p] = _new_ref_batch
batching.always_batch.add(new_ref_p)  # and one made under vmap is batched

# ----------------------------------------------------------------------------------------
# freeze


def _freeze_impl(ref):
    return [ref._buf.copy()]


def _freeze_abstract(ref_aval):
    _check_ref_aval(ref_aval, "freeze")
    return [ref_aval.inner_aval], {internal_mutable_array_effect}


def _freeze_jvp(primals, tangents):
    out = freeze_p.bind(primals[0])
    t = _ref_tangent(tangents[0], primals[0])
    if t is None or type(t.value) is Zero:
        return [out], [Zero.from_primal_value(out)]
    return [out], [t.value]


def _freeze_batch(axis_size, vals, dims):
    return [freeze_p.bind(vals[0])], [dims[0]]


def _freeze_discharge(in_avals, same, ref_val):
    return [None], [ref_val]


freeze_p = Primitive("freeze")
impl_rules[freeze_p] = _freeze_impl
abstract_eval_rules[freeze_p] = _freeze_abstract
ad.jvp_rules[freeze_p] = _freeze_jvp
batching.batch_rules[freeze_p] = _freeze_batch
discharge_rules[freeze_p] = _freeze_discharge

# ----------------------------------------------------------------------------------------
# empty_ref and free_ref


def _empty_ref_impl(*, ty, memory_space):
    buf = np.zeros(ty.shape, ty.dtype)
    return [Ref(AbstractRef(ty, memory_space=memory_space), buf)]


def _empty_ref_abstract(*, ty, memory_space):
    return [AbstractRef(ty, memory_space=memory_space)], {internal_mutable_array_effect}


def _empty_ref_jvp(primals, tangents, *, ty, memory_space):
    ref = empty_ref_p.bind(ty=ty, memory_space=memory_space)
    if not _differentiable(ty):
        return [ref], [Zero(ad.tangent_aval(ty))]
    return [ref], [RefTangent(Zero(ad.tangent_aval(ty)))]


empty_ref_p = Primitive("empty_ref")
impl_rules[empty_ref_p] = _empty_ref_impl
abstract_eval_rules[empty_ref_p] = _empty_ref_abstract
ad.jvp_rules[empty_ref_p] = _empty_ref_jvp
ad.always_jvp.add(empty_ref_p)


def _empty_ref_batch(axis_size, vals, dims, *, ty, memory_space):
    ty = ty.update(shape=(axis_size, *ty.shape))
    return [empty_ref_p.bind(ty=ty, memory_space=memory_space)], [0]


batching.batch_rules[empty_ref_p] = _empty_ref_batch
batching.always_batch.add(empty_ref_p)


def _free_ref_impl(ref):
    return []


def _free_ref_abstract(ref_aval):
    _check_ref_aval(ref_aval, "free_ref")
    return [], {internal_mutable_array_effect}


def _free_ref_jvp(primals, tangents):
    free_ref_p.bind(primals[0])
    return [], []


def _free_ref_batch(axis_size, vals, dims):
    free_ref_p.bind(vals[0])
    return [], []


free_ref_p = Primitive("free_ref", multiple_results=True)
impl_rules[free_ref_p] = _free_ref_impl
abstract_eval_rules[free_ref_p] = _free_ref_abstract
ad.jvp_rules[free_ref_p] = _free_ref_jvp
batching.batch_rules[free_ref_p] = _free_ref_batch
