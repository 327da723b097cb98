"""Effects: what an equation does besides computing its outputs.

An effect is a small immutable object attached to an equation by its primitive's abstract
evaluation rule (`(avals, effects)`); a jaxpr's effects are the union of its equations'.
Dead-code elimination keeps every equation that has an effect, however unused its
outputs, so a host callback with a side effect is never silently dropped.

jaxlite has the four effects of JAX's host callbacks: `IO` and `OrderedIO`
(`io_callback`), `Debug` and `OrderedDebug` (`debug.callback`, `debug.print`). They print
by name, as JAX prints them in jaxprs (`effect=OrderedDebug`). The effect types are
grouped into the same sets as JAX's, which the interpreters consult: `ordered_effects`
(run in program order within a call and across calls), `control_flow_allowed_effects`
(may live in scan, while and cond bodies), `custom_derivatives_allowed_effects`,
`remat_allowed_effects` and `partial_eval_kept_effects` (partial evaluation keeps them
with the known values, so debug output shows primals). Everything in jaxlite runs
synchronously on the calling thread, so program order is simply execution order.
"""

from __future__ import annotations

__all__ = [
    "Effect",
    "IOEffect",
    "OrderedIOEffect",
    "DebugEffect",
    "OrderedDebugEffect",
    "IO",
    "OrderedIO",
    "Debug",
    "OrderedDebug",
    "EffectTypeSet",
    "ordered_effects",
    "lowerable_effects",
    "control_flow_allowed_effects",
    "custom_derivatives_allowed_effects",
    "remat_allowed_effects",
    "partial_eval_kept_effects",
    "is_ordered",
    "ordered_effects_of",
    "has_ordered",
]


class Effect:
    """Base class of effects. Instances are compared by identity and hashable."""

    __slots__ = ()
    name = "Effect"

    def __repr__(self):
        return self.name

    __str__ = __repr__


class IOEffect(Effect):
    """An `io_callback` may read or change state outside the program."""

    __slots__ = ()
    name = "IO"


class OrderedIOEffect(Effect):
    """An `io_callback(..., ordered=True)`: IO that keeps program order."""

    __slots__ = ()
    name = "OrderedIO"


class DebugEffect(Effect):
    """A `debug.callback` or `debug.print`: observes values, never changes them."""

    __slots__ = ()
    name = "Debug"


class OrderedDebugEffect(Effect):
    """A debug callback or print with `ordered=True`."""

    __slots__ = ()
    name = "OrderedDebug"


IO = IOEffect()
OrderedIO = OrderedIOEffect()
Debug = DebugEffect()
OrderedDebug = OrderedDebugEffect()


class EffectTypeSet:
    """A set of effect *types*; `effect in s` asks whether the effect's type is in it."""

    __slots__ = ("_types",)

    def __init__(self, *types):
        self._types = set(types)

    def add_type(self, effect_type):
        self._types.add(effect_type)

    def __contains__(self, effect):
        return type(effect) in self._types

    def filter_in(self, effects):
        return [e for e in effects if type(e) in self._types]

    def filter_not_in(self, effects):
        return [e for e in effects if type(e) not in self._types]

    def __repr__(self):
        names = sorted(t.name for t in self._types)
        return f"EffectTypeSet({', '.join(names)})"


_ALL = (IOEffect, OrderedIOEffect, DebugEffect, OrderedDebugEffect)

ordered_effects = EffectTypeSet(OrderedIOEffect, OrderedDebugEffect)
lowerable_effects = EffectTypeSet(*_ALL)
control_flow_allowed_effects = EffectTypeSet(*_ALL)
custom_derivatives_allowed_effects = EffectTypeSet(DebugEffect, OrderedDebugEffect)
remat_allowed_effects = EffectTypeSet(DebugEffect, OrderedDebugEffect)
partial_eval_kept_effects = EffectTypeSet(DebugEffect, OrderedDebugEffect)


def is_ordered(effect) -> bool:
    return effect in ordered_effects


def ordered_effects_of(effects):
    """The ordered effects among `effects`, sorted by name (a stable order)."""
    return sorted(ordered_effects.filter_in(effects), key=lambda e: e.name)


def has_ordered(effects) -> bool:
    return any(e in ordered_effects for e in effects)
