"""jaxlite.scipy.stats: placeholder, filled by the special-functions work."""
