"""jaxlite.scipy.spatial: jax.scipy.spatial (rotations, in `transform`)."""

from jaxlite.scipy.spatial import transform  # noqa: F401
