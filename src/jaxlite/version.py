"""jaxlite's version (`jax.version` has the same names)."""

__version__ = "0.1.0"
__version_info__ = tuple(int(part) for part in __version__.split("."))

_version = __version__

__all__ = ["__version__", "__version_info__"]
