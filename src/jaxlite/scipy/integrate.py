"""jaxlite.scipy.integrate: numerical integration of sampled data as in
jax.scipy.integrate (only `trapezoid`, which is jnp.trapezoid under SciPy's name)."""

from __future__ import annotations

__all__ = ["trapezoid"]


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integrate `y` along `axis` with the composite trapezoidal rule."""
    from jaxlite import numpy as jnp

    return jnp.trapezoid(y, x, dx, axis)
