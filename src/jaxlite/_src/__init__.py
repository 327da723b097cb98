"""JAX's private modules (`jax._src.X`), as far as libraries written for JAX import
them, provided for `jaxlite.install_as_jax()` only.

Under the alias `jax._src.X` is `jaxlite._src.X`. Each module here provides exactly
the names that flax, equinox, chex, numpyro, blackjax, lineax, jaxtyping, ... take
from JAX's module of that name: jaxlite's own objects where jaxlite has them, or a
small implementation with JAX's meaning on jaxlite (one CPU backend, synchronous
effects, no traceback filtering). A name no library uses is left out, so that a new
use fails loudly with the name rather than finding a guess. jaxlite itself never
imports this package, and code written for jaxlite should use the public modules.

All of them are imported here, because libraries reach some of them as attributes
(`jax._src.xla_bridge._backends`) without importing them, as JAX imports them all.
"""

from jaxlite._src import (
    ad_util,
    checkify,
    compiler,
    core,
    dispatch,
    dtypes,
    flatten_util,
    state,
    traceback_util,
    tree_util,
    xla_bridge,
)
