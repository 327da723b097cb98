"""`check`, `debug_check` and `check_error`: the `check` primitive.

`check(pred, msg, *fmt_args)` builds a one-failure Error (see `error.py`) and binds
`check_p` on its leaves; the Error's static part rides along as the `err_tree`
parameter. What the equation means depends on where it ends up:

- eagerly, its implementation raises `JaxRuntimeError` with the formatted message;
- under `checkify`, the interpreter *discharges* it: the failure is merged into the
  Error that the checkified function returns (see `transform.py`);
- left in a compiled program (`jit` without `checkify`), running it raises JAX's
  ValueError telling the user to functionalize the check with `checkify.checkify`;
- `debug=True` (`debug_check`) makes the last two a no-op.

The equation has an `ErrorEffect`, so dead-code elimination keeps it. Its JVP checks the
primal values; under `vmap` the batched Error is reduced to the last failing element
(as JAX does) and checked once.
"""

from __future__ import annotations

import numpy as np

from jaxlite import numpy as jnp
from jaxlite import tree_util
from jaxlite.backend import lowering_rules
from jaxlite.core import Array, Primitive, Tracer, abstract_eval_rules, impl_rules
from jaxlite.experimental.checkify.error import (
    Error,
    FailedCheckError,
    JaxRuntimeError,
    assert_func,
    concrete_payload,
    init_error,
    reduce_batched,
)
from jaxlite.interpreters import ad, batching
from jaxlite.util import safe_zip

zip = safe_zip

# ----------------------------------------------------------------------------------------
# The check primitive: check_p.bind(*error_leaves, debug=..., err_tree=ErrorLayout)

FUNCTIONALIZATION_MESSAGE = (
    "Cannot abstractly evaluate a checkify.check which was not functionalized. This "
    "probably means you tried to stage (jit/scan/pmap/...) a `check` without "
    "functionalizing it through `checkify.checkify`."
)


def _check_impl(*leaves, debug, err_tree):
    if debug:
        return []
    error = err_tree.unflatten([concrete_payload(x) for x in leaves])
    exc = error.get_exception()
    if exc is not None:
        raise JaxRuntimeError(str(exc)) from exc
    return []


def _check_abstract(*avals, debug, err_tree):
    return [], frozenset(err_tree.effects)


def _check_jvp(primals, tangents, *, debug, err_tree):
    check_p.bind(*primals, debug=debug, err_tree=err_tree)
    return [], []


def _check_batch(axis_size, vals, dims, *, debug, err_tree):
    vals = [batching.bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims)]
    bind_check(err_tree.unflatten(vals), debug)
    return [], []


def _raise_not_functionalized():
    raise ValueError(FUNCTIONALIZATION_MESSAGE)


def _check_lowering(ctx, *args, debug, err_tree):
    # Compiled without `checkify`: the program raises when it runs (jaxlite compiles
    # nested jits while tracing, so raising here would break `checkify(jit(f))`).
    if debug:
        return "[]"
    return f"{ctx.add_global(_raise_not_functionalized, 'check')}()"


check_p = Primitive("check", multiple_results=True)
impl_rules[check_p] = _check_impl
abstract_eval_rules[check_p] = _check_abstract
ad.jvp_rules[check_p] = _check_jvp
batching.batch_rules[check_p] = _check_batch
lowering_rules[check_p] = _check_lowering


def bind_check(error, debug=False):
    """Bind `check_p` on `error` (reduced to scalar predicates first if batched)."""
    if any(np.shape(p) for p in error._pred.values()):
        error = reduce_batched(error)
    check_p.bind(*error._leaves(), debug=debug, err_tree=error._layout())


# ----------------------------------------------------------------------------------------
# Public functions


def check(pred, msg, *fmt_args, debug=False, **fmt_kwargs):
    """Check that `pred` holds; if not, fail with `msg` formatted with the runtime
    values of `fmt_args`/`fmt_kwargs` (`"{x} must be positive", x=x`).

    Eagerly a failure raises `JaxRuntimeError`; inside a staged function the check
    must be functionalized by `checkify.checkify`, which returns it as an Error.
    """
    _check(pred, msg, debug, fmt_args, fmt_kwargs)


def debug_check(pred, msg, *fmt_args, **fmt_kwargs):
    """Like `check`, but only enforced under `checkify`; elsewhere it does nothing."""
    _check(pred, msg, True, fmt_args, fmt_kwargs)


def check_error(error):
    """Raise `JaxRuntimeError` if `error` holds a failure; `checkify` functionalizes
    it again (so a checkified function's Error can be re-raised inside another)."""
    if not isinstance(error, Error):
        raise TypeError(
            f"check_error takes an Error as argument, got type {type(error)} instead."
        )
    bind_check(error, debug=False)


def _is_scalar_pred(pred):
    if isinstance(pred, bool):
        return True
    return (
        isinstance(pred, (Array, Tracer))
        and pred.shape == ()
        and pred.dtype == np.dtype(bool)
    )


def _check(pred, msg, debug, fmt_args, fmt_kwargs):
    if not _is_scalar_pred(pred):
        name = "debug_check" if debug else "check"
        raise TypeError(f"{name} takes a scalar pred as argument, got {pred}")
    leaves, tree = tree_util.tree_flatten((fmt_args, fmt_kwargs))
    for arg in leaves:
        if not isinstance(arg, (Array, Tracer, np.ndarray)):
            raise TypeError(
                "Formatting arguments to checkify.check need to be PyTrees of arrays, "
                f"but got {arg!r} of type {type(arg)}."
            )
    leaves = [jnp.asarray(x) if isinstance(x, np.ndarray) else x for x in leaves]
    fmt_args, fmt_kwargs = tree_util.tree_unflatten(tree, leaves)
    failure = FailedCheckError(None, msg, *fmt_args, **fmt_kwargs)
    error = assert_func(init_error, jnp.logical_not(pred), failure)
    bind_check(error, debug)
