"""Small helpers used everywhere: length-checked map/zip, splitting and caching."""

from __future__ import annotations

import builtins


def safe_map(f, *xs):
    """`map` that returns a list and insists that all its arguments have one length."""
    n = len(xs[0])
    for x in xs[1:]:
        if len(x) != n:
            raise ValueError(f"safe_map: lengths differ: {[len(x) for x in xs]}")
    return list(builtins.map(f, *xs))


def safe_zip(*xs):
    """`zip` that returns a list and insists that all its arguments have one length."""
    n = len(xs[0])
    for x in xs[1:]:
        if len(x) != n:
            raise ValueError(f"safe_zip: lengths differ: {[len(x) for x in xs]}")
    return list(builtins.zip(*xs))


def split_list(xs, sizes):
    """Split `xs` into consecutive pieces of the given sizes plus the remainder."""
    out, start = [], 0
    for n in sizes:
        out.append(list(xs[start : start + n]))
        start += n
    out.append(list(xs[start:]))
    return out


def partition_list(flags, xs):
    """`(xs where not flag, xs where flag)`."""
    no, yes = [], []
    for f, x in safe_zip(flags, xs):
        (yes if f else no).append(x)
    return no, yes


def merge_lists(flags, no, yes):
    """Inverse of `partition_list`."""
    no_it, yes_it = iter(no), iter(yes)
    return [next(yes_it) if f else next(no_it) for f in flags]


def canonicalize_axis(axis, ndim, name="axis"):
    """A non-negative axis, with the message NumPy users expect when it is out of range."""
    try:
        axis = int(axis.__index__())
    except AttributeError:
        raise TypeError(f"{name} must be an integer, got {axis!r}") from None
    if not -ndim <= axis < ndim:
        raise ValueError(
            f"{name} {axis} is out of bounds for array of dimension {ndim}"
        )
    return axis % ndim if ndim else 0


def prod(xs):
    out = 1
    for x in xs:
        out *= int(x)
    return out
