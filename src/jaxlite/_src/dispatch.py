"""`jax._src.dispatch` for `jaxlite.install_as_jax()` only: `wait_for_tokens`, which
waits for the ordered effects issued so far (equinox calls it at exit). jaxlite runs
effects synchronously, in program order, so it is `effects_barrier`."""

from jaxlite.lax.callbacks import effects_barrier

__all__ = ["wait_for_tokens"]

wait_for_tokens = effects_barrier
