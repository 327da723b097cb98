"""The types of mutable array references: the aval `AbstractRef` and the value `Ref`.

A reference is a box around an array that programs read and write in place. Its
abstract value, `AbstractRef`, wraps the aval of the array it holds (`Ref{f32[3]}` in
a jaxpr); its runtime value, `Ref`, owns a NumPy buffer that the NumPy backend's
kernels for `get`, `swap` and `addupdate` read and write (`jaxlite.state.primitives`).
A `Ref` is never an `Array`: evaluation and tracing hand it to primitives as it is
(`core.reference_types`), and `jit` passes it to compiled code as it is, so a write
inside a compiled function is a write to the caller's reference.

Operations on references are primitives with effects (`ReadEffect`, `WriteEffect`,
`AccumEffect`, and `InternalMutableArrayEffect` for making and freezing one), so
dead-code elimination never drops a write and loop rewrites never move a read.

This module is at the core layer: it knows no primitive. The operations a `Ref` and a
tracer of a reference support (`ref[idx]`, `ref[idx] = v`, `ref.addupdate(v, idx)`)
call the functions `jaxlite.state.primitives` registers in `operations`, and the
traces below `lax/` find what they need about references in the tables here
(`discharge_hooks`, `discharge_rules`).
"""

from __future__ import annotations

from jaxlite import effects, tree_util
from jaxlite.core import (
    AbstractValue,
    Array,
    Tracer,
    pytype_aval_mappings,
    reference_types,
    tracer_attributes,
)

__all__ = [
    "AbstractRef",
    "AccumEffect",
    "InternalMutableArrayEffect",
    "ReadEffect",
    "Ref",
    "WriteEffect",
    "discharge_hooks",
    "discharge_rules",
    "is_ref",
]

# ----------------------------------------------------------------------------------------
# Effects


class RefEffect(effects.Effect):
    """Base class of the effects of reading, writing and making references."""

    __slots__ = ()


class ReadEffect(RefEffect):
    __slots__ = ()
    name = "Read"


class WriteEffect(RefEffect):
    __slots__ = ()
    name = "Write"


class AccumEffect(RefEffect):
    __slots__ = ()
    name = "Accum"


class InternalMutableArrayEffect(RefEffect):
    __slots__ = ()
    name = "InternalMutableArrayEffect"


read_effect = ReadEffect()
write_effect = WriteEffect()
accum_effect = AccumEffect()
internal_mutable_array_effect = InternalMutableArrayEffect()

for _effect_type in (ReadEffect, WriteEffect, AccumEffect, InternalMutableArrayEffect):
    effects.control_flow_allowed_effects.add_type(_effect_type)
    effects.remat_allowed_effects.add_type(_effect_type)
del _effect_type

# ----------------------------------------------------------------------------------------
# The abstract value


class AbstractRef(AbstractValue):
    """The aval of a mutable array reference: `inner_aval` is the aval of the array
    it holds. Shape, dtype and weak type are those of the held array."""

    __slots__ = ("inner_aval", "memory_space", "kind")

    def __init__(self, inner_aval, memory_space=None, kind=None):
        self.inner_aval = inner_aval
        self.memory_space = memory_space
        self.kind = kind

    shape = property(lambda self: self.inner_aval.shape)
    dtype = property(lambda self: self.inner_aval.dtype)
    weak_type = property(lambda self: self.inner_aval.weak_type)
    ndim = property(lambda self: len(self.inner_aval.shape))
    size = property(lambda self: self.inner_aval.size)
    sharding = property(lambda self: self.inner_aval.sharding)

    def update(self, inner_aval=None, **changes):
        """A reference to `inner_aval`, or to the held aval updated with `changes`
        (`shape`, `dtype`, `weak_type`, as `ShapedArray.update` takes them)."""
        if inner_aval is None:
            inner_aval = self.inner_aval.update(**changes)
        return AbstractRef(inner_aval, self.memory_space, self.kind)

    def to_tangent_aval(self):
        return AbstractRef(
            self.inner_aval.to_tangent_aval(), self.memory_space, self.kind
        )

    to_ct_aval = to_tangent_aval

    def strip_weak_type(self):
        return self.update(self.inner_aval.strip_weak_type())

    def str_short(self, short_dtypes=True):
        return f"Ref{{{self.inner_aval.str_short(short_dtypes)}}}"

    def __repr__(self):  # as JAX: `Ref{float32[3]}`
        return self.str_short(short_dtypes=False)

    __str__ = __repr__

    def __eq__(self, other):
        return (
            type(other) is AbstractRef
            and self.inner_aval == other.inner_aval
            and self.memory_space == other.memory_space
            and self.kind == other.kind
        )

    def __hash__(self):
        return hash(("Ref", self.inner_aval, self.memory_space, self.kind))

    # What a tracer of a reference does (`Tracer.__getitem__` and `__setitem__` ask
    # its aval), as JAX's tracers do: the same as a `Ref` does.
    def _getitem(self, tracer, idx):
        return operations.get(tracer, idx)

    def _setitem(self, tracer, idx, value):
        operations.set(tracer, idx, value)

    def _addupdate(self, tracer, idx, value):
        operations.addupdate(tracer, idx, value)


class _Operations:
    """The operations on references, registered by `jaxlite.state.primitives` (they
    bind its primitives): `get(ref, idx)`, `set(ref, idx, value)`,
    `addupdate(ref, idx, value)`."""

    __slots__ = ("get", "set", "addupdate")


operations = _Operations()


def _tracer_addupdate(tracer):
    aval = tracer.aval
    if type(aval) is not AbstractRef:
        raise AttributeError(
            f"{type(tracer).__name__!r} object has no attribute 'addupdate'"
        )
    return lambda x, idx=(): aval._addupdate(tracer, idx, x)


tracer_attributes["addupdate"] = _tracer_addupdate


def is_ref(x) -> bool:
    """Whether `x` is a reference: a `Ref`, or a tracer of one."""
    return type(getattr(x, "aval", None)) is AbstractRef


# ----------------------------------------------------------------------------------------
# The value


class _RefType(type):
    """`isinstance(x, Ref)` holds for tracers of references too, as in JAX."""

    def __instancecheck__(cls, x):
        return type.__instancecheck__(cls, x) or (
            isinstance(x, Tracer) and type(x.aval) is AbstractRef
        )


class Ref(metaclass=_RefType):
    """A mutable array reference (`jax.Ref`). Make one with `jax.new_ref(value)`.

    `ref[idx]` reads (an Array), `ref[idx] = value` writes, `ref.addupdate(value,
    idx)` adds, `jax.freeze(ref)` gives the final value. Indexing takes integers,
    slices with steps of at least 1, `...` and integer arrays, with NumPy's meaning;
    a written value must have the indexed shape and the reference's dtype.

    `_buf` is the NumPy array the reference owns: no Array ever shares it (reads copy
    out of it), so writes never change a value a program already holds.
    """

    __slots__ = ("_aval", "_buf", "__weakref__")

    def __init__(self, aval, buf):
        self._aval = aval
        self._buf = buf

    aval = property(lambda self: self._aval)
    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)
    weak_type = property(lambda self: self._aval.weak_type)
    ndim = property(lambda self: len(self._aval.shape))
    size = property(lambda self: self._aval.size)
    committed = property(lambda self: True)

    @property
    def sharding(self):
        return Array(self._buf).sharding

    def __len__(self):
        if not self._aval.shape:
            raise TypeError("len() of unsized object")
        return self._aval.shape[0]

    def __getitem__(self, idx):
        return operations.get(self, idx)

    def __setitem__(self, idx, value):
        operations.set(self, idx, value)

    def addupdate(self, x, idx=()):
        """Add `x` into `self[idx]` in place (`self[...]` when no index is given)."""
        operations.addupdate(self, idx, x)

    @property
    def at(self):
        raise NotImplementedError(
            "Ref.at is not implemented (as in JAX): a reference is updated in place. "
            "Write `ref[idx] = value` to set and `ref.addupdate(value, idx)` to add."
        )

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            f"A mutable array reference ({self._aval}) is not an array: read its "
            "value with `ref[...]` (or `jax.freeze(ref)`) and convert that."
        )

    def __copy__(self):  # an independent reference holding the same values
        return Ref(self._aval, self._buf.copy())

    def __deepcopy__(self, memo):
        return self.__copy__()

    def __repr__(self):  # as JAX: `Ref([0., 1.], dtype=float32)`
        return "Ref" + repr(Array(self._buf.copy(), self._aval.weak_type))[5:]


reference_types.add(Ref)
pytype_aval_mappings[Ref] = lambda x: x._aval

# ----------------------------------------------------------------------------------------
# What transformations need to know about references: tables filled by the layers
# that define the rules.

# discharge_rules[prim](in_avals, same, *args, **params) -> (new_values, outputs): the
# pure meaning of an equation of `prim` whose reference operands are given as the
# values they hold. `new_values[i]` is the value reference operand i holds afterwards
# (None for an operand that is no reference or that the equation does not write);
# `same[i]` is the index of the first operand that is the same reference as operand
# i (i itself for the others). `jaxlite.state.discharge` turns a whole jaxpr pure with
# these rules, for the state primitives and for the primitives that hold jaxprs.
discharge_rules: dict = {}

# discharge_hooks[prim](args, params) -> outputs: how a transformation whose rules
# cannot keep references (forward-mode differentiation, batching) runs an equation of
# `prim` with references among its operands (a loop or conditional whose bodies read
# or write them): as pure operations on their values, under the current trace,
# reading the references before and writing them back after (`jaxlite.state.
# discharge`). `JVPTrace` and `BatchTrace` look here first.
discharge_hooks: dict = {}


def discharge_hook(prim, args):
    """The hook to run `prim` on `args` with, or None (no reference among them)."""
    hook = discharge_hooks.get(prim)
    if hook is not None and any(is_ref(x) for x in args):
        return hook
    return None


# ----------------------------------------------------------------------------------------
# JAX's errors about references crossing function boundaries


def returned_ref_error(fun_desc, what, aval, path="", arg_name=None):
    """The ValueError for a traced function that returns a reference."""
    where = f" at output tree path result{path}" if path else ""
    origin = (
        f"The returned mutable array was passed in as the argument {arg_name}."
        if arg_name
        else "The returned mutable array was created inside the function."
    )
    return ValueError(
        f"function {fun_desc} traced for {what} returned a mutable array reference "
        f"of type {aval}{where}, but mutable array references cannot be returned."
        f"\n\n{origin}"
    )


def check_no_returned_refs(fun_desc, what, out_tree, closed, arg_names=None):
    """Raise `returned_ref_error` if the traced `closed` (outputs of tree `out_tree`)
    returns a reference; `arg_names` name its inputs."""
    jaxpr = closed.jaxpr
    if not any(type(v.aval) is AbstractRef for v in jaxpr.outvars):
        return
    paths = [
        tree_util.keystr(path)
        for path, _ in tree_util.tree_flatten_with_path(
            tree_util.tree_unflatten(out_tree, [0] * len(jaxpr.outvars))
        )[0]
    ]
    invars = {v: i for i, v in enumerate(jaxpr.invars)}
    for v, path in zip(jaxpr.outvars, paths):
        if type(v.aval) is AbstractRef:
            i = invars.get(v)
            name = None
            if i is not None and arg_names and i < len(arg_names):
                name = arg_names[i]
            raise returned_ref_error(fun_desc, what, v.aval, path, name)


def check_no_aliased_refs(leaves, describe, what, *describe_args):
    """The ValueError JAX raises when one reference is passed twice to a traced
    function; `describe(*describe_args)` gives (the function's description, the
    names of the flat arguments), asked only when raising."""
    seen = {}
    for i, x in enumerate(leaves):
        if is_ref(x):
            j = seen.setdefault(id(x), i)
            if j != i:
                fun_desc, arg_names = describe(*describe_args)
                raise ValueError(
                    "only one reference to a mutable array may be passed as an "
                    f"argument to a function, but when tracing {fun_desc} for {what} "
                    f"the mutable array reference of type {x.aval} appeared at both "
                    f"{_arg_name(arg_names, j)} and {_arg_name(arg_names, i)}."
                )


def _arg_name(arg_names, k):
    if arg_names and k < len(arg_names):
        return arg_names[k]
    return f"args[{k}]"
