"""jaxlite.scipy.linalg: placeholder, filled by the linalg work."""

__all__ = []
