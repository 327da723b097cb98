"""`vmap`: vectorise a function over a batch axis, on pytrees, over `interpreters.batching`."""

from __future__ import annotations

import collections
import inspect

import numpy as np

from jaxlite import tree_util
from jaxlite.api_util import check_callable
from jaxlite.core import as_value, get_aval
from jaxlite.interpreters import batching
from jaxlite.interpreters.batching import not_mapped
from jaxlite.util import fun_name, wraps


def _is_axis_leaf(x):
    return x is None


def broadcast_prefix(prefix, tree, name, shown=None):
    """One entry of `prefix` (a tree prefix of `tree`, None an entry) per leaf of
    `tree`; else JAX's ValueError naming `prefix` `name` ("vmap in_axes") and listing
    each place where they differ, for `shown` (the prefix as the user gave it,
    compared with `tree`'s first child: the positional arguments) when given."""
    axes, prefix_tree = tree_util.tree_flatten(prefix, is_leaf=_is_axis_leaf)
    try:
        subtrees = prefix_tree.flatten_up_to(tree)
    except (ValueError, TypeError):
        full = tree if shown is None else tree[0]
        raise tree_prefix_error(
            name, prefix if shown is None else shown, full
        ) from None
    out = []
    for axis, sub in zip(axes, subtrees):
        out.extend([axis] * tree_util.tree_structure(sub).num_leaves)
    return out


def tree_prefix_error(name, prefix, tree):
    """JAX's ValueError for a specification `prefix` (axes, devices) that is not a
    tree prefix of the value `tree`, with the details of each mismatch."""
    leaves, treedef = tree_util.tree_flatten(tree)
    dummy = treedef.unflatten([tree_util.PytreeLeaf() for _ in leaves])
    errors = tree_util.prefix_errors(prefix, dummy)  # None a node here, as JAX
    details = "\n  ".join(e(name).args[0] for e in errors)
    return ValueError(
        f"{name} specification must be a tree prefix of the corresponding value; "
        f"\n  Mismatch details ({len(errors)} found):\n  {details}"
    )


# Types that vmap maps as a whole rather than leaf by leaf (JAX's
# `batching.register_vmappable`): a sparse array's static shape loses the mapped axis
# inside the function and regains it on the way out. {type: (to_elt, from_elt)}.
_vmappables: dict = {}


def register_vmappable(cls, to_elt, from_elt):
    """Make `vmap` map values of type `cls` (a pytree node type) as a whole.

    `to_elt(x, axis)` returns `(x_elt, leaf_axes)`: a `cls` value whose static data
    describes one element of `x` but whose leaves are still `x`'s full arrays, and the
    axis along which each leaf is mapped (None where a leaf is shared).
    `from_elt(y, axis_size, axis)` returns the batched value of an output `y` of type
    `cls`, whose leaves have already been moved (or broadcast) to `axis`.
    """
    _vmappables[cls] = (to_elt, from_elt)


def _is_vmappable(x):
    return type(x) in _vmappables


def _map_vmappables(prefix, tree, convert):
    """`tree` with each registered value at a mapped axis replaced by
    `convert(value, axis)`, which returns `(new value, its leaves' axes)`; also the
    axis of every leaf of the new tree."""
    axes, prefix_tree = tree_util.tree_flatten(prefix, is_leaf=_is_axis_leaf)
    subtrees, dims = [], []
    for axis, sub in zip(axes, prefix_tree.flatten_up_to(tree)):
        nodes, node_tree = tree_util.tree_flatten(sub, is_leaf=_is_vmappable)
        new = []
        for node in nodes:
            if _is_vmappable(node) and axis is not None:
                node, leaf_axes = convert(node, axis)
                dims.extend(leaf_axes)
            else:
                dims.extend([axis] * len(tree_util.tree_leaves(node)))
            new.append(node)
        subtrees.append(tree_util.tree_unflatten(node_tree, new))
    return tree_util.tree_unflatten(prefix_tree, subtrees), dims


def _has_vmappable(tree):
    return bool(_vmappables) and any(
        _is_vmappable(x) for x in tree_util.tree_leaves(tree, is_leaf=_is_vmappable)
    )


def _check_axis(axis, ndim, what):
    if axis is None:
        return None
    if not isinstance(axis, int):
        raise TypeError(f"vmap {what} must be an int or None, got {axis!r}")
    if not -ndim - 1 <= axis <= ndim:
        raise ValueError(f"vmap {what} {axis} out of range for rank {ndim}")
    return axis


def _argument_names(fun, args, kwargs):
    """How JAX names each array leaf of a vmapped call: `argument x[0]`, `args[2]`,
    `kwargs['y']`, using the parameter names of `fun`'s signature where it binds."""
    try:
        params = list(inspect.signature(fun).bind(*args, **kwargs).signature.parameters)
    except (TypeError, ValueError):
        params = None
    names = []
    for path, _ in tree_util.tree_flatten_with_path(args)[0]:
        i = path[0].idx
        if params is None or i >= len(params):
            names.append(f"args{tree_util.keystr(path)}")
        else:
            names.append(f"argument {params[i]}{tree_util.keystr(path[1:])}")
    for path, _ in tree_util.tree_flatten_with_path(kwargs)[0]:
        names.append(f"kwargs{tree_util.keystr(path)}")
    return names


def _inconsistent_sizes_error(fun, args, kwargs, dims, sizes, axis_size=None):
    """JAX's ValueError for mapped axes of different sizes (or other than the
    `axis_size` given): the most common size first, one example argument per size."""
    names = _argument_names(fun, args, kwargs)
    counts = collections.Counter(s for s, *_ in sizes).most_common()
    lines = []
    if axis_size is not None:
        lines.append(f"  * the `axis_size` argument was {axis_size}")
    for rank, (size, count) in enumerate(counts):
        _, i, _, aval = next(entry for entry in sizes if entry[0] == size)
        where = (
            f"axis {dims[i]} of {names[i]} of type {aval.str_short(short_dtypes=False)}"
        )
        if count == 1:
            lines.append(f"  * one axis had size {size}: {where}")
        else:
            many = "most" if rank == 0 else "some"
            lines.append(
                f"  * {many} axes ({count} of them) had size {size}, e.g. {where}"
            )
    return ValueError(
        "vmap got inconsistent sizes for array axes to be mapped:\n" + ";\n".join(lines)
    )


def vmap(
    fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None
):
    """Vectorise `fun` over axis `in_axes` of its arguments (JAX's semantics)."""
    check_callable(fun)
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    # As JAX, checked here rather than at the call: axes are Python ints (not bools
    # or NumPy integers) or None, in_axes a tuple over the positional arguments.
    if not (in_axes is None or type(in_axes) in (int, tuple)):
        raise TypeError(
            "vmap in_axes must be an int, None, or a tuple of entries corresponding to "
            f"the positional arguments passed to the function, but got {in_axes}."
        )
    for what, axes in (("in_axes", in_axes), ("out_axes", out_axes)):
        if not all(type(a) is int for a in tree_util.tree_leaves(axes)):
            raise TypeError(
                f"vmap {what} must be an int, None, or (nested) container with those "
                f"types as leaves, but got {axes}."
            )

    name = fun_name(fun)
    docstr = (
        f"Vectorized version of {name}. Takes similar arguments as {name} but with "
        f"additional array axes over which {name} is mapped."
    )
    if getattr(fun, "__doc__", None):
        docstr += "\n\nOriginal documentation:\n\n" + fun.__doc__

    @wraps(fun)
    def vmapped(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                "vmap in_axes must be an int, None, or a tuple of entries corresponding to "
                "the positional arguments passed to the function, but got "
                f"len(in_axes)={len(in_axes)}, len(args)={len(args)}"
            )
        leaves, in_tree = tree_util.tree_flatten((args, kwargs))
        axes_prefix = (
            in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args),
            0,
        )
        dims = broadcast_prefix(axes_prefix, (args, kwargs), "vmap in_axes", in_axes)
        if _has_vmappable((args, kwargs)):
            (args, kwargs), dims = _map_vmappables(
                axes_prefix,
                (args, kwargs),
                lambda x, axis: _vmappables[type(x)][0](x, axis),
            )
            leaves, in_tree = tree_util.tree_flatten((args, kwargs))
        vals, in_dims, sizes = [], [], []
        for i, (x, d) in enumerate(zip(leaves, dims)):
            if d is None:
                vals.append(x)
                in_dims.append(not_mapped)
                continue
            x = as_value(x)
            shape = get_aval(x).shape
            if not -len(shape) <= d < len(shape):
                raise ValueError(
                    f"vmap was requested to map its argument along axis {d}, which implies "
                    f"that its rank should be at least {d + 1 if d >= 0 else -d}, but is "
                    f"only {len(shape)} (its shape is {shape})"
                )
            d = d % len(shape)
            vals.append(x)
            in_dims.append(d)
            sizes.append((shape[d], i, d, get_aval(x)))
        size = axis_size
        distinct = {s for s, *_ in sizes}
        if size is None and not leaves:
            raise ValueError(
                "vmap wrapped function must be passed at least one argument "
                "containing an array or axis_size must be specified, got empty "
                f"*args={args} and **kwargs={kwargs}"
            )
        if size is None and not sizes:
            raise ValueError(
                "vmap must have at least one non-None value in in_axes or axis_size "
                "must be specified"
            )
        if len(distinct | ({size} - {None})) > 1:
            raise _inconsistent_sizes_error(fun, args, kwargs, dims, sizes, size)
        if size is None:
            size = sizes[0][0]
        out_box = {}

        def flat_fun(*flat):
            a, kw = tree_util.tree_unflatten(in_tree, flat)
            out = fun(*a, **kw)
            out_leaves, out_box["tree"] = tree_util.tree_flatten(out)
            return out_leaves

        outs, out_dims = batching.vmap_flat(flat_fun, size, vals, in_dims, axis_name)
        out_tree = out_box["tree"]
        out_spec = broadcast_prefix(
            out_axes, tree_util.tree_unflatten(out_tree, outs), "vmap out_axes"
        )
        results = []
        for o, d, spec in zip(outs, out_dims, out_spec):
            if spec is None:
                if d is not not_mapped and axis_name is not None:
                    raise ValueError(
                        f"vmap has mapped output (axis_name={axis_name}) but out_axes "
                        "is None"
                    )
                if d is not not_mapped:
                    raise ValueError(
                        f"at vmap out_axes, got axis spec None but output was batched on "
                        f"axis {d}"
                    )
                results.append(o)
                continue
            o = as_value(o)
            ndim = np.ndim(o) + (d is not_mapped)
            if not -ndim <= spec < ndim:
                raise ValueError(
                    f"axis {spec} is out of bounds for array of dimension {ndim}"
                )
            results.append(batching.move_to(o, d, spec % ndim, size))
        out = tree_util.tree_unflatten(out_tree, results)
        if _has_vmappable(out):
            out, _ = _map_vmappables(
                out_axes,
                out,
                lambda y, axis: (_vmappables[type(y)][1](y, size, axis), ()),
            )
        return out

    vmapped.__doc__ = docstr  # as JAX's
    return vmapped
