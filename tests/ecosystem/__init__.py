"""Ecosystem tests: each library's quickstart on jaxlite (through the `jax` alias) and
on real JAX, in fresh processes, with the results compared (see harness.py)."""
