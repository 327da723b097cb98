"""`jax._src.core` for `jaxlite.install_as_jax()` only: the names libraries take from
JAX's private core (numpyro's `trace_state_clean`, flax's `ShapedArray`)."""

from jaxlite.core import ShapedArray, find_cur_trace_is_eval
from jaxlite.interpreters.batching import axis_env

__all__ = ["ShapedArray", "trace_state_clean"]


def trace_state_clean():
    """True at the top level: no transformation is tracing (the current trace is the
    eager one) and no axis name is bound."""
    return find_cur_trace_is_eval() and not axis_env()
