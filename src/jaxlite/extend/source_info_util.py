"""`jax.extend.source_info_util`: the user's source line of an equation (see
`jaxlite.source_info`). `register_exclusion(path)` lets a library hide its own frames,
so the line found is the user's.

JAX's name stacks (`current_name_stack`, `extend_name_stack`, ...) have no counterpart:
jaxlite's equations carry no name stack.
"""

from jaxlite.source_info import SourceInfo, current, register_exclusion, summarize

__all__ = [
    "SourceInfo",
    "current",
    "new_source_info",
    "register_exclusion",
    "summarize",
]


def new_source_info():
    """An unknown source (what an equation built by hand carries)."""
    return None
