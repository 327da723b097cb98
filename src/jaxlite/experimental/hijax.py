"""`jax.experimental.hijax`: the names of JAX's experimental "high-level types" API.

In JAX, a high-level type (`HiType`, `MutableHiType`) is an aval whose values lower
to several ordinary arrays, and a `HiPrimitive` says how to compute on such values
by lowering them (`to_lojax`); mutable ones carry quasi-dynamic data (`AvalQDD`).
Libraries define such types and primitives when they are imported: flax.nnx defines
its "hijax" Variables, which it only uses when `flax_hijax_variable` is on (it is
off by default).

jaxlite does not lower high-level types. This module gives the API's names with
their JAX meaning as far as defining goes: types can be declared and registered,
primitives subclassed and instantiated, `aval_method` and `aval_property` wrap
functions as JAX's do. Binding a `HiPrimitive` raises NotImplementedError, which
names the primitive: a program that computes with high-level values does not run.
"""

from __future__ import annotations

from jaxlite.core import AbstractValue, Primitive, ShapedArray, pytype_aval_mappings
from jaxlite.effects import control_flow_allowed_effects
from jaxlite.interpreters.ad import Zero, instantiate_zeros, is_undefined_primal
from jaxlite.state.types import AbstractRef

__all__ = [
    "AbstractRef",
    "AbstractValue",
    "AvalMutableQDD",
    "AvalQDD",
    "HiPrimitive",
    "HiPspec",
    "HiType",
    "MutableHiType",
    "ShapedArray",
    "VJPHiPrimitive",
    "Zero",
    "aval_method",
    "aval_property",
    "control_flow_allowed_effects",
    "instantiate_zeros",
    "is_undefined_primal",
    "register_hitype",
]


class aval_method:  # noqa: N801  (JAX's name)
    """A method declared on an aval for the values of that type (`fun(value, ...)`)."""

    def __init__(self, fun):
        self.fun = fun


class aval_property:  # noqa: N801  (JAX's name)
    """A property declared on an aval for the values of that type (`fget(value)`)."""

    def __init__(self, fget):
        self.fget = fget


class AvalQDD:
    """An aval together with its quasi-dynamic data (`qdd`), as JAX pairs them."""

    is_high = True
    has_qdd = True

    def __init__(self, aval, qdd):
        self.aval = aval
        self.qdd = qdd

    def __repr__(self):
        return f"AvalQDD({self.aval}, {self.qdd})"


class AvalMutableQDD:
    """An aval together with mutable quasi-dynamic data (`mutable_qdd`)."""

    def __init__(self, aval, mutable_qdd):
        self.aval = aval
        self.mutable_qdd = mutable_qdd


class HiType(AbstractValue):
    """Base class of high-level types: avals whose values lower to several arrays."""

    is_high = True
    has_qdd = False


class MutableHiType(AbstractValue):
    """Base class of mutable high-level types (their values carry `AvalQDD` data)."""

    is_high = True
    has_qdd = True


class HiPspec:
    """A sharding specification of a high-level type's lowered arrays."""


def register_hitype(val_cls, typeof_fn):
    """Declare `typeof_fn(value)` the aval of the values of class `val_cls` (what
    `jax.typeof` gives for them)."""
    pytype_aval_mappings[val_cls] = typeof_fn


class HiPrimitive(Primitive):
    """A primitive on high-level values, given by methods (`abstract_eval`,
    `to_lojax`, `jvp`, `transpose`, ...). jaxlite defines such primitives but does
    not run them: `bind` raises NotImplementedError."""

    multiple_results = False

    def __init__(self, name):
        super().__init__(name, type(self).multiple_results)

    def is_high(self, *avals, **params):
        return True

    def bind(self, *args, **params):
        raise NotImplementedError(
            f"The high-level primitive '{self.name}' (jax.experimental.hijax) cannot "
            "run on jaxlite: jaxlite does not lower high-level types to arrays. For "
            "flax.nnx, leave `flax_hijax_variable` off (its default)."
        )


class VJPHiPrimitive(HiPrimitive):
    """A high-level primitive given by a forward and a backward function."""
