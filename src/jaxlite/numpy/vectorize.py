"""Lifting functions over arrays: vectorize (NumPy's generalised ufuncs, by vmap),
piecewise, apply_along_axis and apply_over_axes.

`vectorize` reads a gufunc signature such as "(m,n),(n)->(m)", checks the core
dimensions of every argument, broadcasts the remaining ("loop") dimensions, and wraps
the function in one `vmap` per loop dimension. An argument of size 1 along a loop
dimension is not mapped there (in_axes=None), so nothing is materialised by the
broadcast. Without a signature every argument is a scalar core. Excluded arguments
(positions or keyword names) and keyword arguments are passed through unchanged.

piecewise picks, for each element, the branch of the last true condition (or the
"otherwise" branch) with a vectorized `lax.switch`, so each function sees one
element at a time, as in JAX.
"""

from __future__ import annotations

import functools
import re

import numpy as np

from jaxlite import lax
from jaxlite.numpy.creation import asarray
from jaxlite.numpy.ufuncs import check_arraylike
from jaxlite.util import canonicalize_axis

__all__ = ["vectorize", "piecewise", "apply_along_axis", "apply_over_axes"]

_DIMENSION = r"\w+"
_CORE = rf"(?:{_DIMENSION}(?:,{_DIMENSION})*)?"
_ARGUMENT = rf"\({_CORE}\)"
_ARGUMENT_LIST = rf"{_ARGUMENT}(?:,{_ARGUMENT})*"
_SIGNATURE = re.compile(rf"^{_ARGUMENT_LIST}->{_ARGUMENT_LIST}$")


def _parse_signature(signature):
    """'(m,n),(n)->(m)' -> ([('m', 'n'), ('n',)], [('m',)])."""
    text = signature.replace(" ", "")
    if not _SIGNATURE.match(text):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    inputs, outputs = text.split("->")

    def cores(part):
        return [
            tuple(re.findall(_DIMENSION, group))
            for group in re.findall(rf"\(({_CORE})\)", part)
        ]

    return cores(inputs), cores(outputs)


def _where(excluded, signature):
    return f" on vectorized function with excluded={excluded!r} and signature={signature!r}"


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """`pyfunc` lifted to arrays: it is applied to every core slice (scalars without a
    `signature`) of its broadcast arguments, via vmap."""
    excluded = frozenset(excluded)
    if any(not isinstance(e, (int, str)) for e in excluded):
        raise TypeError(
            f"jnp.vectorize: excluded must hold argument positions (int) or keyword "
            f"names (str); got {sorted(map(repr, excluded))}."
        )

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        where = _where(excluded, signature)
        static = {i: a for i, a in enumerate(args) if i in excluded}
        mapped = [i for i in range(len(args)) if i not in excluded]
        arrays = [asarray(args[i]) for i in mapped]

        def call(*mapped_args):
            full = list(args)
            for i, a in zip(mapped, mapped_args):
                full[i] = a
            for i, a in static.items():
                full[i] = a
            return pyfunc(*full, **kwargs)

        if signature is None:
            in_cores, out_cores = [()] * len(arrays), None
        else:
            in_cores, out_cores = _parse_signature(signature)
            if len(in_cores) != len(arrays):
                raise TypeError(
                    "wrong number of positional arguments: expected "
                    f"{len(in_cores)}, got {len(arrays)}{where}"
                )
        sizes = _core_sizes(arrays, in_cores, where)
        if out_cores is not None:
            call = _checking_outputs(call, out_cores, sizes, where)
        return _map_loop_dims(call, arrays, in_cores)

    return wrapped


def _core_sizes(arrays, in_cores, where):
    sizes = {}
    for x, core in zip(arrays, in_cores):
        if x.ndim < len(core):
            raise ValueError(
                f"input with shape {x.shape} does not have enough dimensions for all "
                f"core dimensions {core}{where}"
            )
        for name, size in zip(core, x.shape[x.ndim - len(core) :]):
            if sizes.setdefault(name, size) != size:
                raise ValueError(
                    f"inconsistent size for core dimension {name!r}: {size} vs "
                    f"{sizes[name]}{where}"
                )
    return sizes


def _checking_outputs(call, out_cores, sizes, where):
    def checked(*args):
        out = call(*args)
        if len(out_cores) == 1:
            if isinstance(out, tuple):
                raise TypeError(
                    f"wrong number of output arguments: expected 1, got {len(out)}"
                    f"{where}"
                )
            outs = (out,)
        else:
            got = len(out) if isinstance(out, tuple) else 1
            if got != len(out_cores):
                raise TypeError(
                    "wrong number of output arguments: expected "
                    f"{len(out_cores)}, got {got}{where}"
                )
            outs = out
        for y, core in zip(outs, out_cores):
            shape = np.shape(y)
            if len(shape) != len(core):
                raise ValueError(
                    f"output shape {shape} does not match core dimensions {core}{where}"
                )
            for name, size in zip(core, shape):
                if sizes.setdefault(name, size) != size:
                    raise ValueError(
                        f"inconsistent size for core dimension {name!r}: {size} vs "
                        f"{sizes[name]}{where}"
                    )
        return out

    return checked


def _map_loop_dims(call, arrays, in_cores):
    """`call` mapped over the broadcast loop dimensions of `arrays`."""
    from jaxlite.api_vmap import vmap
    from jaxlite.tree_util import tree_map

    loops = [x.shape[: x.ndim - len(c)] for x, c in zip(arrays, in_cores)]
    shape = tuple(np.broadcast_shapes(*loops)) if loops else ()
    ndim = len(shape)
    mapped_dims = [d for d in range(ndim) if shape[d] != 1]
    # Give every argument all loop dimensions (leading ones), then drop the size-1
    # ones: each argument then holds, in order, the dims it is mapped over.
    prepared, axes = [], []
    for x, loop in zip(arrays, loops):
        x = lax.reshape(x, (1,) * (ndim - len(loop)) + x.shape)
        keep = [d for d in mapped_dims if x.shape[d] != 1]
        drop = tuple(d for d in range(ndim) if d not in keep)
        prepared.append(lax.squeeze(x, drop) if drop else x)
        axes.append([0 if d in keep else None for d in mapped_dims])
    fun = call
    for level in reversed(range(len(mapped_dims))):
        fun = vmap(fun, in_axes=tuple(a[level] for a in axes))
    out = fun(*prepared)

    def restore(y):
        y = asarray(y)
        return lax.reshape(y, shape + y.shape[len(mapped_dims) :])

    return tree_map(restore, out)


# --------------------------------------------------------------------------------------
# piecewise


def piecewise(x, condlist, funclist, *args, **kw):
    """For each element of `x`: `funclist[i](element, *args, **kw)` for the last true
    condition `condlist[i]`, else the extra "otherwise" entry of `funclist` (or 0).
    Entries of `funclist` may be constants. The result has x's dtype."""
    from jaxlite.numpy.ufuncs import equal

    check_arraylike("piecewise", x)
    x = asarray(x)
    n_conds = len(condlist)
    if len(funclist) not in (n_conds, n_conds + 1):
        raise ValueError(
            f"with {n_conds} condition(s), either {n_conds} or {n_conds + 1} functions "
            f"are expected; got {len(funclist)}"
        )
    if len(funclist) == n_conds:
        funclist = [0, *funclist]
    else:
        funclist = [funclist[-1], *funclist[:-1]]
    conds = []
    for c in condlist:
        c = asarray(c)
        if c.dtype != np.bool_:
            c = lax.ne(c, lax.full_like(c, 0))
        conds.append(lax.convert_element_type(_broadcast(c, x.shape), np.int32))
    # index of the last true condition (1-based), 0 when none holds.
    index = lax.full(x.shape, 0, np.int32)
    for i, c in enumerate(conds):
        index = lax.select(equal(c, 1), lax.full(x.shape, i + 1, np.int32), index)
    dtype = x.dtype

    def branch(f):
        if callable(f):
            return lambda v: lax.convert_element_type(asarray(f(v, *args, **kw)), dtype)
        value = lax.convert_element_type(asarray(f), dtype)
        return lambda v: value

    branches = [branch(f) for f in funclist]
    return vectorize(lambda i, v: lax.switch(i, branches, v))(index, x)


def _broadcast(c, shape):
    from jaxlite.numpy.shape import broadcast_to

    return broadcast_to(c, shape)


# --------------------------------------------------------------------------------------
# apply_along_axis and apply_over_axes


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """`func1d` applied to every 1-D slice of `arr` along `axis` (by vmap); the
    dimensions of its result replace that axis."""
    from jaxlite.api_vmap import vmap

    check_arraylike("apply_along_axis", arr)
    arr = asarray(arr)
    ndim = arr.ndim
    axis = canonicalize_axis(axis, ndim)

    def fun(a):
        return func1d(a, *args, **kwargs)

    # Axes after `axis` are mapped innermost, their results going to the end; the
    # ones before it outermost, their results in front.
    for i in range(1, ndim - axis):
        fun = vmap(fun, in_axes=i, out_axes=-1)
    for _ in range(axis):
        fun = vmap(fun, in_axes=0, out_axes=0)
    return fun(arr)


def apply_over_axes(func, a, axes):
    """`func(a, axis)` applied for each axis in turn, each result keeping the rank
    (a dimension removed by `func` is put back with size 1)."""
    check_arraylike("apply_over_axes", a)
    a = asarray(a)
    for axis in [axes] if np.ndim(axes) == 0 else list(axes):
        b = asarray(func(a, axis))
        if b.ndim == a.ndim - 1:
            b = lax.expand_dims(b, (canonicalize_axis(axis, a.ndim),))
        elif b.ndim != a.ndim:
            raise ValueError("function is not returning an array of the correct shape")
        a = b
    return a
