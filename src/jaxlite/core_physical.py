"""Values of extended dtypes (typed PRNG keys): the arrays that store them.

An array of an extended dtype with data rules (`dtypes.ExtendedDType._rules`) is
stored as an ordinary array with the element's own axes appended: keys of shape `s`
are uint32 data of shape `(*s, 2)`. Tracing, autodiff and batching see the logical
aval (`key<fry>[s]`); only evaluation needs the stored arrays. So a primitive that
may take or give such values registers a *physical rule* in `physical_rules`:

    rule(avals_in, avals_out, *args, **params) -> list of outputs

computing the equation on the stored arrays (the other operands as they are) by
binding primitives on them. The eval trace runs it for eager operations on keys
(`_process_extended`); `interpreters.physical` runs it to turn a jaxpr over keys into
one over their data before a backend compiles it. Part of the core (re-exported by
`jaxlite.core`), kept in its own module.
"""

from __future__ import annotations

from jaxlite import dtypes
from jaxlite.core import ShapedArray, abstract_eval, as_value, get_aval

physical_rules: dict = {}

# Array types that no eager operation computes on directly, each with the rule that
# runs such an operation instead: `rule(prim, args, params) -> list of outputs`.
# `GlobalArray` (split across processes) registers the front end's: the operation
# runs as its `jit`, as every eager operation does in JAX. Asked before the physical
# rules, by `_process_extended` (the eval trace's branch for virtual array types).
eager_rules_by_type: dict = {}


def has_data(dtype) -> bool:
    """Whether `dtype` is an extended dtype stored as arrays (keys; not the token)."""
    return isinstance(dtype, dtypes.ExtendedDType) and dtype._rules is not None


def physical_aval(aval):
    """The aval of the array that stores a value of `aval` (itself for NumPy dtypes)."""
    dt = aval.dtype
    if not has_data(dt):
        return aval
    shape, stored = dt._rules.physical_element_aval(dt)
    return ShapedArray((*aval.shape, *shape), stored, aval.weak_type)


def physical_value(x, aval):
    """The stored array under `x`, a value of `aval` (`x` itself for NumPy dtypes)."""
    return aval.dtype._rules.physical_data(x) if has_data(aval.dtype) else x


def from_physical(x, aval):
    """The value of `aval` stored as `x` (`x` itself for NumPy dtypes)."""
    dt = aval.dtype
    return dt._rules.wrap(dt, x) if has_data(dt) else x


def _process_extended(prim, args, params):
    """An eager `prim` taking or giving values of an extended dtype: its physical
    rule runs on the stored arrays (under the eval trace), and the outputs of an
    extended dtype are wrapped again. An operand of a type with an entry in
    `eager_rules_by_type` hands the whole operation to that rule instead."""
    if eager_rules_by_type:
        for x in args:
            rule = eager_rules_by_type.get(type(x))
            if rule is not None:
                return rule(prim, args, params)
    avals_in = [get_aval(x) for x in args]
    avals_out, _ = abstract_eval(prim, avals_in, params)
    rule = physical_rules.get(prim)
    if rule is None:
        raise no_physical_rule_error(prim, avals_in + list(avals_out))
    stored = [
        physical_value(x, a) if has_data(a.dtype) else as_value(x)
        for x, a in zip(args, avals_in)
    ]
    outs = rule(avals_in, avals_out, *stored, **params)
    return [from_physical(o, a) for o, a in zip(outs, avals_out)]


def no_physical_rule_error(prim, avals):
    names = sorted({str(a.dtype) for a in avals if has_data(a.dtype)})
    return TypeError(
        f"{prim} does not accept dtype {', '.join(names)}: arrays of that dtype "
        f"support structural operations only (reshape, indexing, concatenate, "
        f"where, ...), and '{prim}' is not one. For keys, use "
        "jax.random.key_data(keys) to get their uint32 data."
    )
