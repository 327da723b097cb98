"""jaxlite.nn: placeholder, filled by the jax.nn work."""
