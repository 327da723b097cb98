"""jaxlite.lax.linalg: placeholder, filled by the linalg work."""

__all__ = []
