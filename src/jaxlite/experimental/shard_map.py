"""`jax.experimental.shard_map`: the deprecated home of `jax.shard_map`."""

import warnings

from jaxlite.shard_map import shard_map as _shard_map

__all__ = ["shard_map"]


def shard_map(f=None, /, *, out_specs, in_specs=None, mesh=None, axis_names=frozenset(),
              check_rep=True, check_vma=None, auto=frozenset()):  # fmt: skip
    """Deprecated alias of `jaxlite.shard_map` (as in JAX 0.10)."""
    warnings.warn(
        "jax.experimental.shard_map is deprecated in v0.8.0. Used jax.shard_map "
        "instead.",
        DeprecationWarning,
        stacklevel=2,
    )
    check = check_rep if check_vma is None else check_vma
    kwargs = dict(
        out_specs=out_specs, mesh=mesh, axis_names=axis_names, check_vma=check
    )
    if in_specs is not None:
        kwargs["in_specs"] = in_specs
    if f is None:
        return lambda g: _shard_map(g, **kwargs)
    return _shard_map(f, **kwargs)
