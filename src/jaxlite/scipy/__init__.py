"""jaxlite.scipy: the jax.scipy API (special functions, linear algebra, statistics)."""

from jaxlite.scipy import linalg, special, stats
from jaxlite.scipy import cluster, fft, integrate, interpolate, ndimage, signal
from jaxlite.scipy import sparse
