"""Data to and from the host: `frombuffer`, `fromstring`, `from_dlpack`, `load`,
`save`, `savez`, and printing (`array_repr`, `array_str`, the print options).

These read or write host memory, files or text, so they work on concrete values
only: each hands the job to NumPy and wraps the result as an Array (with JAX's
32-bit defaults). `fromiter` and `fromfile` consume an iterator or a file, side
effects that a traced function could repeat or skip, so, as in JAX, they are not
implemented and say what to use instead. Arrays print through NumPy, so NumPy's
print options (`jnp.printoptions` is `np.printoptions`) apply to them.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "array_repr",
    "array_str",
    "from_dlpack",
    "frombuffer",
    "fromfile",
    "fromiter",
    "fromstring",
    "get_printoptions",
    "load",
    "printoptions",
    "save",
    "savez",
    "set_printoptions",
]

get_printoptions = np.get_printoptions
set_printoptions = np.set_printoptions
printoptions = np.printoptions
save = np.save
savez = np.savez


def _asarray(x, dtype=None):
    from jaxlite.numpy.creation import asarray

    return asarray(x, dtype=dtype)


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    """An Array of the values in a bytes-like `buffer` (as `np.frombuffer`)."""
    return _asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string, dtype=float, count=-1, *, sep):
    """An Array of the numbers in the text `string`, separated by `sep`."""
    return _asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def _impure(name):
    def fun(*args, **kwargs):
        raise NotImplementedError(
            f"jnp.{name}() is not implemented because it may be non-pure and thus "
            "unsafe for use with JIT and other JAX transformations. Consider using "
            f"jnp.asarray(np.{name}(...)) instead, although care should be taken if "
            f"np.{name} is used within a jax transformations because of its "
            "potential side-effect of consuming the iterable object; for more "
            "information see https://docs.jax.dev/en/latest/notebooks/"
            "Common_Gotchas_in_JAX.html#pure-functions"
        )

    fun.__name__ = fun.__qualname__ = name
    fun.__doc__ = f"Not implemented: use `jnp.asarray(np.{name}(...))`."
    return fun


fromiter = _impure("fromiter")
fromfile = _impure("fromfile")


def from_dlpack(x, /, *, device=None, copy=None):
    """An Array of a DLPack-capable object (a NumPy array, a tensor of another
    library, ...). The data are copied unless `copy=False`: the producer could
    later change memory an immutable Array would share."""
    from jaxlite.core import Array, Tracer

    if type(x) is Array or isinstance(x, Tracer):
        return x
    if not hasattr(x, "__dlpack__"):
        raise TypeError(
            f"from_dlpack: expected an object with a __dlpack__ method, got {type(x)}."
        )
    value = np.from_dlpack(x)
    if copy is not False:
        value = value.copy()
    return _asarray(value)


def load(file, *args, **kwargs):
    """`np.load`: an .npy file becomes an Array (bfloat16 data, which NumPy saves
    as raw 2-byte records, is restored); an .npz archive is returned as NumPy's."""
    out = np.load(file, *args, **kwargs)
    if not isinstance(out, np.ndarray):
        return out
    if out.dtype == np.dtype("V2"):
        import ml_dtypes

        out = out.view(ml_dtypes.bfloat16)
    try:
        return _asarray(out)
    except (TypeError, ValueError):
        return out


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """The repr of `arr` as text, with NumPy's formatting options."""
    text = np.array_repr(
        np.asarray(arr),
        max_line_width=max_line_width,
        precision=precision,
        suppress_small=suppress_small,
    )
    body = text[len("array") :]
    return "Array" + body


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """The str of `a` (its values only), with NumPy's formatting options."""
    return np.array_str(
        np.asarray(a),
        max_line_width=max_line_width,
        precision=precision,
        suppress_small=suppress_small,
    )
