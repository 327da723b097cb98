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


class JaxprTypeError(TypeError):
    """A jaxpr that is not well typed (raised by `core.typecheck_jaxpr`)."""
