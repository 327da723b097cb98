"""`jax.extend.linear_util`: functions with transformations attached (`WrappedFun`);
see `jaxlite.linear_util`."""

from jaxlite.linear_util import (  # noqa: F401  (re-exported)
    EqualStore,
    Store,
    StoreException,
    WrappedFun,
    cache,
    merge_linear_aux,
    transformation,
    transformation2,
    transformation_with_aux,
    transformation_with_aux2,
    wrap_init,
)
