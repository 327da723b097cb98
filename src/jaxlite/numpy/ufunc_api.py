"""`jnp.ufunc`: NumPy's universal-function objects, with `reduce`, `accumulate`,
`reduceat`, `outer` and `at` methods, as JAX 0.10 has them.

A ufunc wraps an elementwise function of `nin` arguments. The common ones (`jnp.add`,
`jnp.multiply`, `jnp.maximum`, ...) supply fast implementations of their methods (a
sum, a cumulative product, a scatter-add); any other ufunc, including those made by
`jnp.frompyfunc`, gets generic ones built from loops over the reduced axis, so every
method works for every binary ufunc.

Calling `jnp.add(x, y)` is on the hot path of eager code (about 2 us), and calling an
object costs tens of nanoseconds more than calling a plain function. So the built-in
ufuncs stay plain functions that *carry* the ufunc interface: `jnp.add.reduce`,
`.accumulate`, `.reduceat`, `.outer`, `.at`, `.nin`, `.nout`, `.nargs` and `.identity`
are attributes of the function, delegating to a `ufunc` object kept beside it, and
`isinstance(jnp.add, jnp.ufunc)` is true. Only their `repr` differs from JAX's.
"""

from __future__ import annotations

import operator

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.numpy import ufuncs as uf

__all__ = ["frompyfunc", "ufunc"]

_AT_INPLACE_ERROR = (
    "Because JAX arrays are immutable, jnp.ufunc.at() cannot operate inplace like "
    "np.ufunc.at(). Instead, you can pass inplace=False and capture the result; e.g.\n"
    ">>> arr = jnp.add.at(arr, ind, val, inplace=False)\n"
)


def _jnp():
    import jaxlite.numpy as jnp

    return jnp


_check_arraylike = uf.check_arraylike


class _UfuncMeta(type):
    def __instancecheck__(cls, obj):
        return type.__instancecheck__(cls, obj) or _carried_ufunc(obj) is not None


def _carried_ufunc(obj):
    """The ufunc object behind a built-in ufunc function, else None."""
    d = getattr(obj, "__dict__", None)
    return d.get("_ufunc") if isinstance(d, dict) else None


class ufunc(metaclass=_UfuncMeta):  # noqa: N801  (NumPy's and JAX's name)
    """A universal function: an elementwise function of `nin` arrays with NumPy's
    broadcasting, plus the methods `reduce`, `accumulate`, `reduceat`, `outer` and
    `at` (binary ufuncs) derived from it.

    `ufunc(func, nin, nout, name=..., identity=...)` wraps a function written for
    scalars; it is vectorised over its (broadcast) arguments. `call`, `reduce`,
    `accumulate`, `at` and `reduceat` may supply faster implementations.
    """

    def __init__(
        self,
        func,
        /,
        nin,
        nout,
        *,
        name=None,
        nargs=None,
        identity=None,
        call=None,
        reduce=None,
        accumulate=None,
        at=None,
        reduceat=None,
    ):
        self.__name__ = name or func.__name__
        self.__doc__ = func.__doc__
        # Read-only properties below: a ufunc may be a static argument of jit, so it
        # must not change after construction.
        self._props = {
            "func": func,
            "nin": operator.index(nin),
            "nout": operator.index(nout),
            "nargs": operator.index(nargs or nin),
            "identity": identity,
            "call": call,
            "reduce": reduce,
            "accumulate": accumulate,
            "at": at,
            "reduceat": reduceat,
        }

    _func = property(lambda self: self._props["func"])
    nin = property(lambda self: self._props["nin"])
    nout = property(lambda self: self._props["nout"])
    nargs = property(lambda self: self._props["nargs"])
    identity = property(lambda self: self._props["identity"])

    def _key(self):
        p = self._props
        return (p["func"], self.__name__, p["identity"], p["nin"], p["nout"])

    def __hash__(self):
        return hash(self._key())

    def __eq__(self, other):
        other = _carried_ufunc(other) or other
        return type.__instancecheck__(ufunc, other) and self._key() == other._key()

    def __repr__(self):
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args, out=None, where=None):
        _check_arraylike(self.__name__, *args)
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        if len(args) != self.nin:
            raise TypeError(
                f"{self.__name__}() takes {self.nin} positional arguments but "
                f"{len(args)} were given."
            )
        if self._props["call"] is not None:
            return self._props["call"](*args)
        return _vectorized_call(self._func, self.nout, args)

    # ------------------------------------------------------------------------------
    # Methods of binary ufuncs

    def _check_binary(self, method):
        if self.nin != 2:
            raise ValueError(f"{method} only supported for binary ufuncs")
        if self.nout != 1:
            raise ValueError(
                f"{method} only supported for functions returning a single value"
            )

    def reduce(
        self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=None
    ):
        """Combine the elements of `a` along `axis` (an int, a tuple, or None for
        every axis) with this ufunc, as `np.ufunc.reduce`."""
        name = f"{self.__name__}.reduce"
        _check_arraylike(name, a)
        self._check_binary("reduce")
        if out is not None:
            raise NotImplementedError(f"out argument of {name}()")
        if initial is not None:
            _check_arraylike(name, initial)
        if where is not None:
            _check_arraylike(name, where)
            if self.identity is None and initial is None:
                raise ValueError(
                    f"reduction operation {self.__name__!r} does not have an "
                    "identity, so to use a where mask one has to specify 'initial'."
                )
            if dtypes.dtype(where) != np.bool_:
                raise ValueError(
                    "where argument must have dtype=bool; got "
                    f"dtype={dtypes.dtype(where)}"
                )
        if dtype is not None:
            dtype = dtypes.check_user_dtype_supported(dtype, name)
        impl = self._props["reduce"] or self._reduce_via_loop
        return impl(
            a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where
        )

    def _reduce_via_loop(self, a, axis, dtype, keepdims, initial, where):
        jnp = _jnp()
        arr = jnp.asarray(a)
        if initial is None:
            initial = self.identity
        if dtype is None:
            dtype = self._result_dtype(arr, arr)
        if where is not None:
            where = jnp.broadcast_to(where, arr.shape)
        if isinstance(axis, tuple):
            raise NotImplementedError(
                f"{self.__name__}.reduce over a tuple of axes: this ufunc has no "
                "fast reduction; reduce one axis at a time."
            )
        if axis is None:
            final_shape = (1,) * arr.ndim if keepdims else ()
            arr = jnp.ravel(arr)
            where = None if where is None else jnp.ravel(where)
            axis = 0
        else:
            axis = _canonical_axis(axis, arr.ndim, f"{self.__name__}.reduce")
            rest = arr.shape[axis + 1 :]
            final_shape = (*arr.shape[:axis], *((1,) if keepdims else ()), *rest)
        arr = jnp.moveaxis(arr, axis, 0)
        if where is not None:
            where = jnp.moveaxis(where, axis, 0)
        if arr.shape[0] == 0:
            if initial is None:
                raise ValueError(
                    f"zero-size array to reduction operation {self.__name__} which "
                    "has no identity"
                )
            return lax.full(final_shape, initial, dtype)
        arr = lax.convert_element_type(arr, dtype)
        if initial is None:
            start, xs = arr[0], arr[1:]
            where = None if where is None else where[1:]
        else:
            init = lax.convert_element_type(initial, dtype)
            start, xs = jnp.broadcast_to(init, arr.shape[1:]), arr

        def step(carry, x):
            if where is None:
                return self(carry, x), None
            x, keep = x
            return jnp.where(keep, self(carry, x), carry), None

        result, _ = lax.scan(step, start, xs if where is None else (xs, where))
        return jnp.reshape(result, final_shape)

    def accumulate(self, a, axis=0, dtype=None, out=None):
        """The running reduction of `a` along `axis`, as `np.ufunc.accumulate`."""
        name = f"{self.__name__}.accumulate"
        _check_arraylike(name, a)
        self._check_binary("accumulate")
        if out is not None:
            raise NotImplementedError(f"out argument of {name}()")
        if dtype is not None:
            dtype = dtypes.check_user_dtype_supported(dtype, name)
        impl = self._props["accumulate"] or self._accumulate_via_loop
        return impl(a, axis=axis, dtype=dtype)

    def _accumulate_via_loop(self, a, axis=0, dtype=None):
        jnp = _jnp()
        arr = jnp.asarray(a)
        if dtype is None:
            dtype = self._result_dtype(arr, arr)
        if axis is None or isinstance(axis, tuple):
            raise ValueError("accumulate does not allow multiple axes")
        axis = _canonical_axis(axis, arr.ndim, f"{self.__name__}.accumulate")
        if arr.size == 0:
            return lax.full(arr.shape, 0, dtype)
        arr = lax.convert_element_type(jnp.moveaxis(arr, axis, 0), dtype)

        def step(carry, x):
            y = self(carry, x)
            return y, y

        _, rest = lax.scan(step, arr[0], arr[1:])
        return jnp.moveaxis(jnp.concatenate([arr[:1], rest]), 0, axis)

    def reduceat(self, a, indices, axis=0, dtype=None, out=None):
        """Reductions over the slices `a[indices[i]:indices[i+1]]` along `axis` (a
        single element where `indices[i] >= indices[i+1]`), as `np.ufunc.reduceat`."""
        name = f"{self.__name__}.reduceat"
        _check_arraylike(name, a, indices)
        self._check_binary("reduceat")
        if out is not None:
            raise NotImplementedError(f"out argument of {name}()")
        impl = self._props["reduceat"] or self._reduceat_via_loop
        return impl(a, indices, axis=axis, dtype=dtype)

    def _reduceat_via_loop(self, a, indices, axis=0, dtype=None):
        jnp = _jnp()
        arr = jnp.asarray(a)
        indices = jnp.asarray(indices)
        if arr.ndim == 0:
            raise ValueError(
                f"reduceat: a must have 1 or more dimension, got a.shape={arr.shape}"
            )
        if indices.ndim != 1:
            raise ValueError(
                "reduceat: indices must be one-dimensional, got "
                f"indices.shape={indices.shape}"
            )
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError("reduceat requires a single integer axis.")
        axis = _canonical_axis(axis, arr.ndim, f"{self.__name__}.reduceat")
        if dtype is not None:
            arr = lax.convert_element_type(arr, dtype)
        n = arr.shape[axis]
        arr = jnp.moveaxis(arr, axis, 0)
        starts = indices
        ends = jnp.concatenate([indices[1:], jnp.full((1,), n, indices.dtype)])
        out = jnp.take(arr, starts, axis=0)
        bshape = (indices.shape[0],) + (1,) * (arr.ndim - 1)
        starts, ends = jnp.reshape(starts, bshape), jnp.reshape(ends, bshape)

        def body(i, acc):
            inside = jnp.logical_and(i > starts, i < ends)
            return jnp.where(inside, self(acc, arr[i]), acc)

        out = lax.fori_loop(0, n, body, out)
        return jnp.moveaxis(out, 0, axis)

    def outer(self, A, B, /):  # noqa: N803  (NumPy's names)
        """This ufunc applied to every pair of elements of `A` and `B`: the result
        has shape `(*A.shape, *B.shape)`."""
        self._check_binary("outer")
        _check_arraylike(f"{self.__name__}.outer", A, B)
        jnp = _jnp()
        A, B = jnp.asarray(A), jnp.asarray(B)  # noqa: N806
        a = jnp.reshape(A, (*A.shape, *(1,) * B.ndim))
        return self(a, B)

    def at(self, a, indices, b=None, /, *, inplace=True):
        """`a` with this ufunc applied at `indices` (with `b` as second operand for a
        binary ufunc); repeated indices apply repeatedly. JAX arrays are immutable,
        so pass `inplace=False` and use the returned array."""
        if inplace:
            raise NotImplementedError(_AT_INPLACE_ERROR)
        impl = self._props["at"] or self._at_via_loop
        return impl(a, indices) if b is None else impl(a, indices, b)

    def _at_via_loop(self, a, indices, *args):
        jnp = _jnp()
        _check_arraylike(f"{self.__name__}.at", a, *args)
        dtype = self._result_dtype(a, *args)
        a = lax.convert_element_type(jnp.asarray(a), dtype)
        args = [lax.convert_element_type(jnp.asarray(x), dtype) for x in args]
        idx = indices if isinstance(indices, tuple) else (indices,)
        if not idx:
            return a
        arrays = [i for i in idx if not isinstance(i, slice) and i is not Ellipsis]
        if not arrays or all(np.ndim(i) == 0 for i in arrays):
            return a.at[indices].set(self(a[indices], *args))
        shape = jnp.broadcast_shapes(*(np.shape(i) for i in arrays))
        count = int(np.prod(shape))
        flat_idx = [
            i
            if isinstance(i, slice) or i is Ellipsis
            else jnp.ravel(jnp.broadcast_to(jnp.asarray(i), shape))
            for i in idx
        ]
        if args:
            (b,) = args
            trailing = b.shape[len(shape) :] if b.ndim > len(shape) else ()
            b = jnp.broadcast_to(b, (*shape, *trailing))
            args = [jnp.reshape(b, (count, *trailing))]

        def body(k, acc):
            where = tuple(
                i if isinstance(i, slice) or i is Ellipsis else i[k] for i in flat_idx
            )
            return acc.at[where].set(self(acc[where], *(x[k] for x in args)))

        return lax.fori_loop(0, count, body, a)

    def _result_dtype(self, *args):
        from jaxlite.api import eval_shape

        ones = [lax.full((), 1, dtypes.dtype(x)) for x in args]
        return eval_shape(self._func, *ones).dtype


def _canonical_axis(axis, ndim, where):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(
            f"axis {axis} is out of bounds for array of dimension {ndim} (in {where})"
        )
    return axis % ndim


def _vectorized_call(func, nout, args):
    """`func`, written for scalars, applied to every element of the broadcast
    `args` (flattened, mapped with vmap, reshaped back)."""
    from jaxlite.api_vmap import vmap

    jnp = _jnp()
    arrays = [jnp.asarray(x) for x in args]
    shape = jnp.broadcast_shapes(*(x.shape for x in arrays))
    if not shape:
        return func(*arrays)
    flat = [jnp.ravel(jnp.broadcast_to(x, shape)) for x in arrays]
    out = vmap(func)(*flat)
    if nout == 1:
        return jnp.reshape(out, shape)
    return tuple(jnp.reshape(o, shape) for o in out)


def ufunc_function(fun, nin, *, identity=None, **methods):
    """`fun` (a fast elementwise function) given the ufunc interface as attributes;
    see the module docstring. Returns `fun` itself."""
    u = ufunc(fun, nin, 1, name=fun.__name__, call=fun, identity=identity, **methods)
    fun._ufunc = u
    for name in ("reduce", "accumulate", "reduceat", "outer", "at"):
        setattr(fun, name, getattr(u, name))
    fun.nin, fun.nout, fun.nargs, fun.identity = u.nin, u.nout, u.nargs, u.identity
    return fun


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A `jnp.ufunc` from `func`, a function of `nin` scalars (written with jaxlite
    operations) returning `nout` values; `identity` is the starting value of its
    reductions."""
    return ufunc(func, nin, nout, identity=identity)


# ----------------------------------------------------------------------------------
# The built-in ufuncs: fast methods for jnp.add, jnp.multiply, ...
#
# The functions below are given the ufunc interface in place (see ufunc_function);
# their methods call jnp reductions, cumulative reductions and scatters, resolved
# lazily because those modules import this one's neighbours.


def _np_fun(name):
    """A function of jaxlite.numpy resolved when first called (no import cycle)."""

    def fun(*args, **kwargs):
        import jaxlite.numpy as jnp

        return getattr(jnp, name)(*args, **kwargs)

    return fun


def _as_dtype(a, dtype):
    from jaxlite.numpy.creation import asarray

    a = asarray(a)
    return a if dtype is None else lax.convert_element_type(a, dtype)


def _reduce_with(fun_name):
    fun = _np_fun(fun_name)

    def reduce(a, axis=0, dtype=None, keepdims=False, initial=None, where=None):
        kwargs = {"where": where} if where is not None else {}
        if initial is not None:
            kwargs["initial"] = initial
        return fun(_as_dtype(a, dtype), axis=axis, keepdims=keepdims, **kwargs)

    return reduce


def _reduce_bitwise(name, prim_fun, logical=False):
    """reduce for the bitwise and logical ufuncs: one `reduce_and/or/xor`, with
    masked-out elements replaced by the ufunc's identity."""

    def reduce(a, axis=0, dtype=None, keepdims=False, initial=None, where=None):
        from jaxlite.numpy.log_domain import reduction_axes
        from jaxlite.numpy.shape import broadcast_to

        uf.check_arraylike(f"{name}.reduce", a)
        a = _as_dtype(a, dtype)
        a = uf._to_bool(a) if logical else uf.promote_dtypes(a)[0]
        kind = np.dtype(a.dtype)
        if not (kind == np.bool_ or dtypes.issubdtype(kind, np.integer)):
            raise TypeError(
                f"{name}.reduce requires integer or bool inputs, got {kind}"
            )
        if where is not None:
            identity = getattr(uf, name).identity
            ident = lax.full_like(a, bool(identity) if kind == np.bool_ else identity)
            a = lax.select(broadcast_to(where, np.shape(a)), a, ident)
        axes = reduction_axes(np.ndim(a), axis, f"{name}.reduce")
        out = prim_fun(a, axes)
        if initial is not None:
            out = getattr(uf, name)(out, lax.convert_element_type(initial, kind))
        if keepdims:
            out = lax.expand_dims(out, axes)
        return out

    return reduce


def _accumulate_with(lax_fun, promote):
    def accumulate(a, axis=0, dtype=None):
        uf.check_arraylike("accumulate", a)
        (a,) = promote(_as_dtype(a, dtype))
        if np.dtype(a.dtype) == np.bool_:
            # max/min of booleans: or/and, computed on 0/1 integers.
            a = lax.convert_element_type(a, np.uint8)
            out = accumulate(a, axis)
            return lax.convert_element_type(out, np.bool_)
        if axis is None:
            raise ValueError("accumulate does not allow multiple axes")
        return lax_fun(a, axis=_canonical_axis(axis, np.ndim(a), "accumulate"))

    return accumulate


def _cumulative(fun_name):
    fun = _np_fun(fun_name)

    def accumulate(a, axis=0, dtype=None):
        if axis is None:
            raise ValueError("accumulate does not allow multiple axes")
        return fun(a, axis=axis, dtype=dtype)

    return accumulate


def _at_with(method):
    def at(a, indices, b):
        from jaxlite.numpy.creation import asarray

        uf.check_arraylike(f"{method}.at", a, b)
        return getattr(asarray(a).at[indices], method)(b)

    return at


def _logsumexp_reduce(a, axis=0, dtype=None, keepdims=False, initial=None, where=None):
    from jaxlite.numpy.log_domain import logsumexp

    a = _as_dtype(a, dtype)
    out = logsumexp(a, axis=axis, keepdims=keepdims, where=where)
    return out if initial is None else uf.logaddexp(out, initial)


def _logsumexp2_reduce(a, axis=0, dtype=None, keepdims=False, initial=None, where=None):
    from jaxlite.numpy.log_domain import logsumexp2

    a = _as_dtype(a, dtype)
    out = logsumexp2(a, axis=axis, keepdims=keepdims, where=where)
    return out if initial is None else uf.logaddexp2(out, initial)


def _builtin(name, nin, identity=None, **methods):
    ufunc_function(getattr(uf, name), nin, identity=identity, **methods)


_builtin(
    "add",
    2,
    0,
    reduce=_reduce_with("sum"),
    accumulate=_cumulative("cumsum"),
    at=_at_with("add"),
)
_builtin(
    "multiply",
    2,
    1,
    reduce=_reduce_with("prod"),
    accumulate=_cumulative("cumprod"),
    at=_at_with("multiply"),
)
_builtin("subtract", 2, None, at=_at_with("subtract"))
_builtin(
    "maximum",
    2,
    None,
    reduce=_reduce_with("max"),
    accumulate=_accumulate_with(lax.cummax, uf.promote_dtypes),
    at=_at_with("max"),
)
_builtin(
    "minimum",
    2,
    None,
    reduce=_reduce_with("min"),
    accumulate=_accumulate_with(lax.cummin, uf.promote_dtypes),
    at=_at_with("min"),
)
_builtin("bitwise_and", 2, -1, reduce=_reduce_bitwise("bitwise_and", lax.reduce_and))
_builtin("bitwise_or", 2, 0, reduce=_reduce_bitwise("bitwise_or", lax.reduce_or))
_builtin("bitwise_xor", 2, 0, reduce=_reduce_bitwise("bitwise_xor", lax.reduce_xor))
_builtin(
    "logical_and", 2, True, reduce=_reduce_bitwise("logical_and", lax.reduce_and, True)
)
_builtin(
    "logical_or", 2, False, reduce=_reduce_bitwise("logical_or", lax.reduce_or, True)
)
_builtin(
    "logical_xor", 2, False, reduce=_reduce_bitwise("logical_xor", lax.reduce_xor, True)
)
_builtin(
    "logaddexp",
    2,
    -np.inf,
    reduce=_logsumexp_reduce,
    accumulate=_accumulate_with(lax.cumlogsumexp, uf.promote_dtypes_inexact),
)
_builtin("logaddexp2", 2, -np.inf, reduce=_logsumexp2_reduce)
_builtin("negative", 1)
