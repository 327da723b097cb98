"""jaxlite.scipy.special: placeholder, filled by the special-functions work."""

__all__ = []
