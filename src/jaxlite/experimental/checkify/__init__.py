"""`jaxlite.experimental.checkify`: runtime checks that survive `jit`, as in JAX.

`check(pred, msg, *fmt_args)` asserts a condition on (possibly traced) values.
`checkify(f, errors=...)` functionalizes those checks, and optionally adds automatic
ones (NaN results, division by zero, out-of-bounds indexing), so that `f` returns an
`Error` value next to its output instead of raising; the Error is ordinary array data,
so the checked function can be jitted, vmapped and differentiated. `err.get()` gives
the first failure's message, `err.throw()` raises it.

The pieces: `error.py` (the Error value and the exception classes), `primitive.py`
(the `check` primitive and the public check functions), `transform.py` (the
interpreter that threads an Error through a jaxpr, and its per-primitive rules).
"""

# The exception classes and the primitive are reachable too (`name as name`), though
# not in JAX's public list.
from jaxlite.experimental.checkify.error import (
    DivisionByZeroError as DivisionByZeroError,
)
from jaxlite.experimental.checkify.error import (
    Error,
    ErrorCategory,
    JaxRuntimeError,
    init_error,
)
from jaxlite.experimental.checkify.error import ErrorEffect as ErrorEffect
from jaxlite.experimental.checkify.error import FailedCheckError as FailedCheckError
from jaxlite.experimental.checkify.error import JaxException as JaxException
from jaxlite.experimental.checkify.error import NaNError as NaNError
from jaxlite.experimental.checkify.error import OOBError as OOBError
from jaxlite.experimental.checkify.primitive import check, check_error, debug_check
from jaxlite.experimental.checkify.primitive import check_p as check_p
from jaxlite.experimental.checkify.transform import (
    all_checks,
    automatic_checks,
    checkify,
    div_checks,
    float_checks,
    index_checks,
    nan_checks,
    user_checks,
)

__all__ = [
    "Error",
    "ErrorCategory",
    "JaxRuntimeError",
    "all_checks",
    "automatic_checks",
    "check",
    "check_error",
    "checkify",
    "debug_check",
    "div_checks",
    "float_checks",
    "index_checks",
    "init_error",
    "nan_checks",
    "user_checks",
]
