"""Tokens: values that carry no data, only an order (`lax.create_token`, `lax.after_all`).

XLA threads a token through side-effecting operations to sequence them; JAX exposes the
two operations that make tokens. jaxlite runs effects in program order anyway, so a token
here is a marker object, but it has JAX's type: its aval is `AbstractToken()`, printed
`Tok` in jaxprs (`b:Tok = create_token `), it is a pytree leaf, it passes through `jit`
as an argument and a result, and it has no tangent (differentiation gives it a float0
zero, as for integers) and no batch axis (`vmap` leaves it unmapped).

`AbstractToken` is a `ShapedArray` of shape `()` with an extended dtype of its own, so
the code that keys caches or builds variables on avals handles it without special
cases, while no jnp operation accepts it.
"""

from __future__ import annotations

from jaxlite.core import (
    AbstractToken,
    Array,
    Primitive,
    Token,
    Tracer,
    _state,
    abstract_eval_rules,
    abstract_token,
    eval_trace,
    impl_rules,
    no_effects,
)
from jaxlite.interpreters import ad, batching
from jaxlite.interpreters.partial_eval import DynamicJaxprTrace

__all__ = ["after_all", "create_token"]


def _is_token(x):
    return isinstance(x, Token) or isinstance(getattr(x, "aval", None), AbstractToken)


def _as_token(out):
    """The value a bind returned: an eager result (an Array around the impl's Token)
    becomes a Token; tracers stay tracers."""
    return Token() if type(out) is Array else out


# ----------------------------------------------------------------------------------------
# create_token


def _create_token_impl():
    return [Token()]


def _create_token_abstract():
    return [abstract_token], no_effects


def _create_token_jvp(primals, tangents):
    return [create_token_p.bind()], [ad.Zero(ad.tangent_aval(abstract_token))]


def _create_token_batch(axis_size, vals, dims):
    return [create_token_p.bind()], [batching.not_mapped]


create_token_p = Primitive("create_token")
impl_rules[create_token_p] = _create_token_impl
abstract_eval_rules[create_token_p] = _create_token_abstract
ad.jvp_rules[create_token_p] = _create_token_jvp
batching.batch_rules[create_token_p] = _create_token_batch


def create_token(_=None):
    """A new token, with no preconditions for sequencing effects. Experimental.

    The argument is ignored; it exists for backward compatibility (as in JAX).
    """
    if _state.trace is eval_trace:
        return Token()
    return _as_token(create_token_p.bind())


# ----------------------------------------------------------------------------------------
# after_all


def _after_all_impl(*tokens):
    return [Token()]


def _after_all_abstract(*avals):
    if any(not isinstance(a, AbstractToken) for a in avals):
        raise TypeError("Arguments to after_all must be tokens")
    return [abstract_token], no_effects


def _after_all_jvp(primals, tangents):
    return [after_all_p.bind(*primals)], [ad.Zero(ad.tangent_aval(abstract_token))]


def _after_all_batch(axis_size, vals, dims):
    # A token has no data, so a batch of tokens is one token.
    return [after_all_p.bind(*vals)], [batching.not_mapped]


after_all_p = Primitive("after_all")
impl_rules[after_all_p] = _after_all_impl
abstract_eval_rules[after_all_p] = _after_all_abstract
ad.jvp_rules[after_all_p] = _after_all_jvp
batching.batch_rules[after_all_p] = _after_all_batch


def after_all(*operands):
    """A token that comes after every token in `operands` (merges tokens).

    Experimental. Raises TypeError, as JAX does, when an operand is not a token.
    """
    if not all(_is_token(x) for x in operands):
        raise TypeError("Arguments to after_all must be tokens")
    staging = isinstance(_state.trace, DynamicJaxprTrace)
    if not staging and not any(isinstance(x, Tracer) for x in operands):
        return Token()  # tokens carry no data: concrete in, concrete out
    # A concrete token among traced ones stands for a fresh one: nothing is lost.
    operands = [create_token() if type(x) is Token else x for x in operands]
    return _as_token(after_all_p.bind(*operands))
