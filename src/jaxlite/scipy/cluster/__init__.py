"""jaxlite.scipy.cluster: jax.scipy.cluster (vector quantisation, `vq.vq`)."""

from jaxlite.scipy.cluster import vq  # noqa: F401
