"""`jax.extend.core`: primitives, jaxprs and the trace state, for libraries that
extend JAX.

`Primitive` is jaxlite's own: a primitive made here is an ordinary jaxlite primitive
whose rules are given in JAX's conventions (`def_impl`, `def_abstract_eval`,
`def_effectful_abstract_eval`, and the interpreters' tables `ad.primitive_jvps`, ...;
see `jaxlite.core_extension`). The jaxpr classes are jaxlite's too, so a jaxpr made by
`jax.make_jaxpr` can be walked with them, and `primitives` names JAX's primitives.
"""

from jaxlite.core import (
    AbstractToken,
    ClosedJaxpr,
    Jaxpr,
    JaxprEqn,
    Literal,
    Primitive,
    Token,
    Var,
    concrete_or_error,
    jaxpr_as_fun,
    no_effects,
    set_current_trace,
)
from jaxlite.core_extension import (
    CallPrimitive,
    Effect,
    Effects,
    check_jaxpr,
    find_top_trace,
    get_opaque_trace_state,
    jaxprs_in_params,
    mapped_aval,
    new_jaxpr_eqn,
    primal_dtype_to_tangent_dtype,
    subjaxprs,
    take_current_trace,
    unmapped_aval,
    valid_jaxtype,
)
from jaxlite.errors import InconclusiveDimensionOperation, JaxprTypeError
from jaxlite.interpreters.partial_eval import DebugInfo
from jaxlite.extend.core import primitives

__all__ = [
    "AbstractToken",
    "CallPrimitive",
    "ClosedJaxpr",
    "DebugInfo",
    "Effect",
    "Effects",
    "InconclusiveDimensionOperation",
    "Jaxpr",
    "JaxprEqn",
    "JaxprTypeError",
    "Literal",
    "Primitive",
    "Token",
    "Var",
    "check_jaxpr",
    "concrete_or_error",
    "find_top_trace",
    "get_opaque_trace_state",
    "jaxpr_as_fun",
    "jaxprs_in_params",
    "mapped_aval",
    "new_jaxpr_eqn",
    "no_effects",
    "primal_dtype_to_tangent_dtype",
    "primitives",
    "set_current_trace",
    "subjaxprs",
    "take_current_trace",
    "unmapped_aval",
    "valid_jaxtype",
]
