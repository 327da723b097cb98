"""The stages of ahead-of-time compilation, named as in `jax.stages`.

`jit(f)` is a `Wrapped` function; `jit(f).trace(*args)` is `Traced`,
`.lower(*args)` is `Lowered` and `.lower(*args).compile()` is `Compiled`. In
jaxlite the three later stages are one object (the staged jaxpr with its generated
NumPy source, see `jaxlite.dispatch.Lowered`), because lowering and compiling are
the same cheap step, so the three names refer to the same class and `isinstance`
checks written for JAX hold.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Union

from jaxlite.dispatch import JitFunction, Lowered

__all__ = ["ArgInfo", "Compiled", "CompilerOptions", "Lowered", "Traced", "Wrapped"]

Wrapped = JitFunction
Traced = Lowered
Compiled = Lowered

CompilerOptions = dict[str, Union[str, bool]]  # noqa: UP007 (JAX's spelling)


@dataclasses.dataclass(frozen=True)
class ArgInfo:
    """The abstract value of one argument and whether its buffer is donated."""

    _aval: Any
    donated: bool

    @property
    def shape(self):
        return self._aval.shape

    @property
    def dtype(self):
        return self._aval.dtype
