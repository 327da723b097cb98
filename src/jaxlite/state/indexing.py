"""Indexing a reference: `RefIndexer`, the static part of `ref[idx]`.

`ref[idx]` binds a primitive whose operands are the reference and the dynamic parts
of the index (traced or array-valued integer indices), and whose `indexer` parameter
is a `RefIndexer` holding the rest: one entry per dimension of the reference, a slice
(normalised by `slice.indices`), a static integer (made non-negative, checked against
the dimension now) or a dynamic integer index. Indexing means what it means in NumPy
(and `jax.numpy`): integer arrays are advanced indices, broadcast together, and their
axes replace theirs in the result, or lead it when slices separate them. Dynamic
indices count from the end when negative and are clamped into range, as
`lax.dynamic_slice` clamps, so a traced index never reads or writes outside.

The same indexer gives the result's shape (`result_shape`), the NumPy index the
backend applies to a reference's buffer (`numpy_index`), and the text a jaxpr shows
(`b[c,:]`, `b[...]`, as JAX prints it).
"""

from __future__ import annotations

import operator

import numpy as np

from jaxlite import dtypes
from jaxlite.core import Array, Tracer, as_value

__all__ = ["RefIndexer", "parse_index"]


class RefIndexer:
    """The static part of an index into a reference of shape `shape`.

    `entries` has one entry per dimension: `("s", start, stop, step)` for a slice,
    `("i", k)` for a static integer, `("d",)` for a dynamic index (the next dynamic
    operand: a scalar or an integer array)."""

    __slots__ = ("entries", "shape")

    def __init__(self, entries, shape):
        self.entries = tuple(entries)
        self.shape = tuple(shape)

    @classmethod
    def whole(cls, shape):
        """`ref[...]`: every element."""
        return cls([("s", 0, d, 1) for d in shape], shape)

    def __eq__(self, other):
        return (
            type(other) is RefIndexer
            and self.entries == other.entries
            and self.shape == other.shape
        )

    def __hash__(self):
        return hash((self.entries, self.shape))

    def __repr__(self):
        names = iter(f"<{k}>" for k in range(self.num_dynamic))
        return f"RefIndexer{self.pp(names)}"

    @property
    def num_dynamic(self):
        return sum(e[0] == "d" for e in self.entries)

    def is_whole(self):
        return all(
            e[0] == "s" and e[1] == 0 and e[2] == d and e[3] == 1
            for e, d in zip(self.entries, self.shape)
        )

    # -- meaning ---------------------------------------------------------------------------

    def layout(self, dyn_shapes):
        """`(shape, axes)`: the result's shape, and for each entry the result axis it
        becomes (a slice), the first axis of the broadcast advanced indices (an
        entry that takes part in them), or None (an integer, with no array index
        anywhere: it drops its axis). NumPy's rule: with an integer array among the
        entries, the integers are advanced indices too; their broadcast axes stand
        where they are when they are adjacent, else first."""
        dyn = iter(dyn_shapes)
        kinds = []  # per entry: ("s", size), ("i", ()) or ("a", shape)
        for e in self.entries:
            if e[0] == "s":
                kinds.append(("s", len(range(e[1], e[2], e[3]))))
            elif e[0] == "i":
                kinds.append(("i", ()))
            else:
                s = tuple(next(dyn))
                kinds.append(("a", s) if s else ("i", ()))
        slices = [size for k, size in kinds if k == "s"]
        if not any(k == "a" for k, _ in kinds):
            axes, n = [], 0
            for k, _ in kinds:
                axes.append(n if k == "s" else None)
                n += k == "s"
            return tuple(slices), axes
        adv = [n for n, (k, _) in enumerate(kinds) if k != "s"]
        try:
            bshape = np.broadcast_shapes(*(s for k, s in kinds if k != "s"))
        except ValueError:
            shapes = " ".join(str(s) for k, s in kinds if k == "a")
            raise IndexError(
                "shape mismatch: indexing arrays could not be broadcast together "
                f"with shapes {shapes}"
            ) from None
        if adv == list(range(adv[0], adv[-1] + 1)):  # adjacent: in place
            start = sum(k == "s" for k, _ in kinds[: adv[0]])
        else:
            start = 0
        axes, n = [], 0
        for k, _ in kinds:
            if k == "s":
                axes.append(n + (len(bshape) if n >= start else 0))
                n += 1
            else:
                axes.append(start)
        shape = (*slices[:start], *bshape, *slices[start:])
        return shape, axes

    def result_shape(self, dyn_shapes):
        return self.layout(dyn_shapes)[0]

    def numpy_index(self, dyn_vals):
        """`(index, basic)`: the NumPy index that applies this indexer to a buffer,
        dynamic indices normalised and clamped; `basic` when it has no array, so
        NumPy gives a view (copy it before handing it out)."""
        out, basic = [], True
        dyn = iter(dyn_vals)
        for e, dim in zip(self.entries, self.shape):
            kind = e[0]
            if kind == "s":
                out.append(slice(e[1], e[2], e[3]))
            elif kind == "i":
                out.append(e[1])
            else:
                v = np.asarray(next(dyn))
                v = np.clip(np.where(v < 0, v + dim, v), 0, max(dim - 1, 0))
                if v.ndim:
                    out.append(v)
                    basic = False
                else:
                    out.append(int(v))
        return tuple(out), basic

    # -- printing --------------------------------------------------------------------------

    def pp(self, names):
        """The index as a jaxpr shows it, `names` giving the dynamic operands' names:
        `[...]` for the whole reference, else `[c,1:,:3]`."""
        if self.is_whole():
            return "[...]"
        names = iter(names)
        parts = []
        for e, dim in zip(self.entries, self.shape):
            if e[0] == "s":
                _, start, stop, step = e
                text = f"{start or ''}:{'' if stop == dim else stop}"
                parts.append(text if step == 1 else f"{text}:{step}")
            elif e[0] == "i":
                parts.append(str(e[1]))
            else:
                parts.append(next(names))
        return f"[{','.join(parts)}]"


# ----------------------------------------------------------------------------------------
# Parsing `ref[idx]`


def parse_index(shape, idx):
    """`(RefIndexer, dynamic operands)` for `ref[idx]` on a reference of `shape`."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    n_ellipsis = sum(i is Ellipsis for i in idx)
    if n_ellipsis > 1:
        raise ValueError("Only one ellipsis is supported.")
    if len(idx) - n_ellipsis > len(shape):
        raise ValueError(
            f"`indices` must not be longer than `shape`: indices={idx}, "
            f"shape={tuple(shape)}"
        )
    full = [slice(None)] * (len(shape) - (len(idx) - n_ellipsis))
    expanded = []
    for i in idx:
        if i is Ellipsis:
            expanded += full
        else:
            expanded.append(i)
    if not n_ellipsis:
        expanded += full
    entries, dynamic = [], []
    for pos, (i, dim) in enumerate(zip(expanded, shape)):
        if isinstance(i, slice):
            entries.append(("s", *_static_slice(i, dim, pos)))
            continue
        k = _static_int(i, pos)
        if k is not None:
            if not -dim <= k < dim:
                raise ValueError(f"Out of bound indexer: idx={k}, dim={dim}.")
            entries.append(("i", k + dim if k < 0 else k))
            continue
        entries.append(("d",))
        dynamic.append(_dynamic_index(i, pos))
    return RefIndexer(entries, shape), dynamic


def _index_type_error(i, pos):
    return TypeError(
        "A mutable array reference is indexed by integers, slices, `...` and integer "
        f"arrays; got {i!r} of type {type(i).__name__} at position {pos}."
    )


def _static_int(i, pos):
    """`i` as a Python int when it is a static integer (a concrete scalar), else
    None (a traced index or an array)."""
    if isinstance(i, (bool, np.bool_)):
        raise _index_type_error(i, pos)
    if isinstance(i, (int, np.integer)):
        return int(i)
    if isinstance(i, (list, tuple)):
        raise TypeError(
            "Using a non-tuple sequence for multidimensional indexing is not allowed; "
            "use `arr[array(seq)]` instead of `arr[seq]`."
        )
    if isinstance(i, Tracer):
        return None
    if isinstance(i, (Array, np.ndarray)) and not np.shape(i):
        _check_integer(i.dtype, i, pos)
        return int(np.asarray(i))
    return None


def _check_integer(dtype, i, pos):
    if not dtypes.issubdtype(dtype, np.integer):
        raise _index_type_error(i, pos)


def _dynamic_index(i, pos):
    if isinstance(i, Tracer):
        _check_integer(i.dtype, i, pos)
        return i
    if isinstance(i, (Array, np.ndarray)):
        _check_integer(i.dtype, i, pos)
        return as_value(i)
    raise _index_type_error(i, pos)


def _static_slice(s, dim, pos):
    parts = []
    for v in (s.start, s.stop, s.step):
        if v is None or isinstance(v, (int, np.integer)):
            parts.append(v)
            continue
        if isinstance(v, Tracer):
            concrete = v.to_concrete_value()
            if concrete is None:
                raise IndexError(
                    f"Slice entries must be static integers. Got {s} at position {pos}"
                )
            v = concrete
        try:
            parts.append(operator.index(v))
        except TypeError:
            raise TypeError(
                f"slice indices must be integers or None, got {s} at position {pos}"
            ) from None
    if parts[2] is not None and parts[2] < 1:
        raise ValueError(f"slice must have a step >= 1 (found: {parts[2]})")
    return slice(*parts).indices(dim)
