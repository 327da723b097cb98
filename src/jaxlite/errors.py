"""JAX's error classes, with messages that say what happened, where, and how to fix it.

A tracer error names the value's shape and dtype, the function being traced and, when it can
be found, the argument the value depends on.
"""

from __future__ import annotations

_DOCS = "https://docs.jax.dev/en/latest/errors.html"


class _JAXErrorMixin:
    """Adds the docs link for the error class to the message."""

    _error_page = _DOCS

    def __init__(self, message: str):
        name = type(self).__name__
        super().__init__(f"{message}\nSee {self._error_page}#jax.errors.{name}")


class JAXTypeError(_JAXErrorMixin, TypeError):
    pass


class JAXIndexError(_JAXErrorMixin, IndexError):
    pass


def jax_array_abstractification_error():
    """The ValueError for an object with `__jax_array__` where JAX 0.10.2 no longer
    converts one: traced arguments (jit, eval_shape, vmap, grad, control flow), lax
    operations and most jax.numpy functions."""
    return ValueError(
        "Triggering __jax_array__() during abstractification is no longer supported. "
        "To avoid this error, either explicitly convert your object using "
        "jax.numpy.array(), or register your object as a pytree."
    )


def float0_operation_error(name, position=None):
    """The TypeError for an operation `name` given a float0 array (at `position`)."""
    where = "a float0 array" if position is None else f"a float0 at position {position}"
    return TypeError(
        f"Called {name} with {where}. float0s do not support any operations by "
        "design, because they are not compatible with non-trivial vector spaces. No "
        "implicit dtype conversion is done. You can use "
        "np.zeros_like(arr, dtype=np.float32) to cast a float0 array to a regular "
        "zeros array.\nIf you didn't expect to get a float0 you might have "
        "accidentally taken a gradient with respect to an integer argument."
    )


def _tracing_context(tracer) -> str:
    trace = getattr(tracer, "_trace", None)
    describe = getattr(trace, "describe_tracer", None)
    return describe(tracer) if describe is not None else ""


def _short(tracer):
    return tracer.aval.str_short(short_dtypes=False)


class ConcretizationTypeError(JAXTypeError):
    """A concrete value was needed (Python control flow, shapes) but a tracer was found."""

    def __init__(self, tracer, context: str = ""):
        msg = (
            "Abstract tracer value encountered where concrete value is expected: "
            f"traced array with shape {_short(tracer)}\n"
        )
        if context:
            msg += context + "\n"
        msg += _tracing_context(tracer)
        msg += (
            "\nTo use this value in Python control flow or as a shape, mark the argument "
            "static (`static_argnums`/`static_argnames` of jit), or use lax.cond, "
            "lax.while_loop or jnp.where instead.\n"
        )
        super().__init__(msg)


class TracerBoolConversionError(ConcretizationTypeError):
    def __init__(self, tracer):
        msg = (
            f"Attempted boolean conversion of traced array with shape {_short(tracer)}.\n"
            + _tracing_context(tracer)
            + "\nPython `if`, `while`, `and`, `or` and `not` need a concrete bool; use "
            "jnp.where, lax.cond or lax.while_loop for values that depend on traced "
            "arguments, or mark the argument static."
        )
        JAXTypeError.__init__(self, msg)


class TracerIntegerConversionError(JAXTypeError):
    def __init__(self, tracer):
        super().__init__(
            "The __index__() method was called on traced array with shape "
            f"{_short(tracer)}\n"
            + _tracing_context(tracer)
            + "\nTo index a Python sequence with a traced value, make the sequence an "
            "array (`jnp.asarray(seq)[i]`) or mark the index argument static."
        )


class TracerArrayConversionError(JAXTypeError):
    def __init__(self, tracer):
        super().__init__(
            "The numpy.ndarray conversion method __array__() was called on traced array "
            f"with shape {_short(tracer)}\n"
            + _tracing_context(tracer)
            + "\nUse jax.numpy instead of numpy on traced values, or use "
            "jax.pure_callback to run NumPy code on the host."
        )


class NonConcreteBooleanIndexError(JAXIndexError):
    """A boolean mask index under a transformation: the result shape would depend on
    the data. The message is JAX's (and the seed's); the traced function and the fix
    come as a note, printed after it in tracebacks."""

    def __init__(self, tracer):
        super().__init__(f"Array boolean indices must be concrete; got {tracer.aval!r}")
        context = _tracing_context(tracer)
        self.__notes__ = [
            (context + "\n" if context else "")
            + "A boolean mask selects a number of elements that depends on the data, so "
            "the result has no static shape. Use jnp.where(mask, x, fill) to keep the "
            "shape (e.g. jnp.where(mask, x, 0).sum()), or the `size=` argument of "
            "jnp.nonzero to fix the number of selected elements."
        ]


class UnexpectedTracerError(JAXTypeError):
    def __init__(self, message):
        super().__init__(message)

    @classmethod
    def escaped(cls, tracer, where=None):
        trace = getattr(tracer, "_trace", None)
        name = getattr(trace, "debug_name", None) or "a transformed function"
        kind = type(tracer).__name__
        used = f" It was used by `{where}`." if where is not None else ""
        return cls(
            "Encountered an unexpected tracer. A function transformed by jaxlite had a "
            "side effect, allowing for a reference to an intermediate value with type "
            f"{tracer.aval.str_short(short_dtypes=False)} wrapped in a {kind} to escape "
            f"the scope of the transformation.{used}\n"
            "JAX transformations require that functions explicitly return their outputs, "
            "and disallow saving intermediate values to global state.\n"
            f"The function being traced when the value leaked was {name}."
        )


class KeyReuseError(JAXTypeError):
    pass


class JaxRuntimeError(RuntimeError):
    """An error while running a compiled computation (XLA's runtime errors in JAX)."""

    @classmethod
    def out_of_memory(cls, shape, dtype, nbytes, where):
        """XLA's RESOURCE_EXHAUSTED error for an array that cannot be allocated."""
        return cls(
            f"RESOURCE_EXHAUSTED: Out of memory allocating {nbytes} bytes: an array of "
            f"shape {tuple(shape)} and dtype {dtype} for {where}, more than this host "
            "can hold. Make the array smaller, or compute in pieces (`lax.map` or a "
            "`scan` over chunks)."
        )


class InconclusiveDimensionOperation(Exception):
    """A shape computation whose result depends on the value of a symbolic dimension.
    jaxlite has no symbolic shapes, so it never raises it; the class exists for
    `except` clauses written for JAX."""


class DuplicateSpecError(Exception):
    """A PartitionSpec names one mesh axis for two array axes (JAX's class, which
    is not a ValueError)."""


class JaxprTypeError(TypeError):
    """A jaxpr that is not well typed (raised by `core.typecheck_jaxpr`)."""


# ----------------------------------------------------------------------------------------
# Exceptions raised by host callbacks
#
# JAX turns an exception raised in a callback into an XLA runtime error whose message
# holds the formatted traceback: the type is lost, and users catch `JaxRuntimeError`.
# jaxlite raises an exception that is both: an instance of a class deriving from the
# original type and from `JaxRuntimeError` (built once per type), carrying the
# original's arguments and attributes, its message JAX's (so code that searches it for
# `<TypeName>: <message>` still works), and the original exception as its cause, with
# its traceback. `except ValueError` and `except JaxRuntimeError` both catch it.

CALLBACK_ERROR_PREFIX = "INTERNAL: CpuCallback error calling callback: "


class _CallbackError(JaxRuntimeError):
    """The base of the classes `callback_error` builds (never raised itself)."""

    def __str__(self):
        message = self.__dict__.get("_callback_message")
        return message if message is not None else super().__str__()

    def __reduce__(self):
        original_type = type(self).__bases__[0]
        return (
            _rebuild_callback_error,
            (original_type, self.args, _exception_state(self, notes=True)),
        )


_combined_types: dict = {}


def _combined_type(original_type):
    """The class deriving from `original_type` and `JaxRuntimeError`, or None when
    there can be none (a class that refuses subclasses or this combination)."""
    try:
        return _combined_types[original_type]
    except KeyError:
        pass
    namespace = {
        "__module__": __name__,
        "__qualname__": "JaxRuntimeError",
        "__doc__": (
            f"A {original_type.__qualname__} raised by a host callback, as the "
            "JaxRuntimeError JAX raises for it."
        ),
        "__str__": _CallbackError.__str__,
        "__reduce__": _CallbackError.__reduce__,
    }
    try:
        cls = type(original_type)(
            "JaxRuntimeError", (original_type, _CallbackError), namespace
        )
    except Exception:  # a final class, a layout or metaclass conflict, a hook
        cls = None
    _combined_types[original_type] = cls
    return cls


def _exception_state(e, notes=False):
    """The attributes of exception `e` beyond `args`: its `__dict__` (its notes only
    if `notes`) and the values of the slots and C-level fields of its classes
    (`errno`, `name`, ...)."""
    state = {
        k: list(v) if k == "__notes__" else v
        for k, v in getattr(e, "__dict__", {}).items()
        if notes or k != "__notes__"
    }
    fields = {}
    for klass in type(e).__mro__:
        for name, attr in vars(klass).items():
            if name.startswith("__") or name in fields:
                continue
            if type(attr).__name__ == "member_descriptor":
                try:
                    fields[name] = getattr(e, name)
                except AttributeError:
                    pass
    return state, fields


def _restore_state(e, state):
    attrs, fields = state
    for name, value in fields.items():
        try:
            setattr(e, name, value)
        except (AttributeError, TypeError):
            pass
    e.__dict__.update(attrs)


def _exception_line(e):
    """`<TypeName>: <message>`, the last line of the traceback JAX puts in its message
    (the class's bare name, and the colon even when the message is empty)."""
    try:
        text = str(e)
    except Exception:
        text = "<exception str() failed>"
    return f"{type(e).__name__}: {text}"


def _new_combined(cls, args, state, message):
    try:
        e = cls.__new__(cls, *args)
    except Exception:
        e = BaseException.__new__(cls)
        e.args = args
    _restore_state(e, state)
    e.__dict__["_callback_message"] = message  # past a frozen class's __setattr__
    return e


def _rebuild_callback_error(original_type, args, state):
    """Unpickle an exception built by `callback_error`."""
    message = state[0].get("_callback_message")
    cls = _combined_type(original_type)
    if cls is None:
        return JaxRuntimeError(message)
    return _new_combined(cls, args, state, message)


def callback_error(e, note):
    """The exception to raise for `e`, raised by a host callback: one that is both a
    `JaxRuntimeError` and an instance of `type(e)` (see above), with `e` as its cause
    and `note` added. `e` itself (with the note) when it is a JaxRuntimeError already
    or not an `Exception` (KeyboardInterrupt, SystemExit propagate unchanged). Where
    no class can derive from `type(e)`, a plain JaxRuntimeError with the same message.

    Raise the result from the `except` block that caught `e`.
    """
    if isinstance(e, JaxRuntimeError) or not isinstance(e, Exception):
        e.add_note(note)
        return e
    message = CALLBACK_ERROR_PREFIX + _exception_line(e)
    cls = _combined_type(type(e))
    new = None
    if cls is not None:
        try:
            new = _new_combined(cls, e.args, _exception_state(e), message)
        except Exception:
            new = None
    if new is None:
        new = JaxRuntimeError(message)
    new.__cause__ = e
    new.add_note(note)
    return new
