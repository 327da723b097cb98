"""Tracing a function of pytrees, shared by the transformations (as JAX's `api_util`).

Every transformation that traces a user's function does the same three things: it
flattens the arguments to leaves, gives the tracer a function of the leaves that
rebuilds the arguments, calls the user's function and flattens what it returns, and
remembers the output tree to rebuild the result. Those are the helpers here:

- `flatten_fun(fun, in_tree)` for `in_tree` the tree of `(args, kwargs)`, and
  `flatten_fun_nokwargs(fun, in_tree)` for the tree of the positional `args`: each
  returns `(flat_fun, out_tree)`, `out_tree()` giving the output tree once `flat_fun`
  has run. Given a `linear_util.WrappedFun` (JAX's convention, as flax and numpyro
  call them), `flat_fun` is a `WrappedFun` too: the flattening is one more
  transformation of it, run by `flat_fun.call_wrapped(*leaves)`;
- `flatten_fun_aux(fun, in_tree, has_aux)` and `split_aux`: the same for a function that
  returns `(output, aux)` (`has_aux` of the differentiation API);
- `trace_flat(fun, in_tree, in_avals, debug_info)`: `(closed jaxpr, out_tree)` of `fun`
  traced on the leaves `in_avals` of `in_tree`;
- `shaped_abstractify(fun, x, i, info)`: the aval of argument leaf `x`, or JAX's
  TypeError naming the argument that is not an array.

`debug_info` (the function name and argument paths a jaxpr records) lives with the
tracer, in `interpreters.partial_eval`; `debug_info` here makes one with JAX's
arguments (`debug_info(traced_for, fun, args, kwargs)`).
"""

from __future__ import annotations

import functools
import inspect

from jaxlite import tree_util
from jaxlite.core import Tracer, is_jax_type
from jaxlite.interpreters import partial_eval
from jaxlite.interpreters.partial_eval import abstractify, trace_to_jaxpr
from jaxlite.linear_util import WrappedFun
from jaxlite.util import safe_map, safe_zip  # noqa: F401  (JAX's api_util has them)

__all__ = [
    "arg_type_error",
    "check_callable",
    "debug_info",
    "flatten_fun",
    "flatten_fun_aux",
    "flatten_fun_nokwargs",
    "shaped_abstractify",
    "split_aux",
    "trace_flat",
]


def check_callable(fun):
    """JAX's checks of the function a transformation is given (TypeError): a
    callable, not a staticmethod object, not a generator function."""
    if isinstance(fun, staticmethod):
        raise TypeError(f"staticmethod arguments are not supported, got {fun}")
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun}")
    if inspect.isgeneratorfunction(fun):
        raise TypeError(f"Expected a function, got a generator function: {fun}")


def _out_tree_store():
    """A cell the flat function writes its output tree into, and its reader."""
    store = []

    def out_tree():
        if not store:
            raise RuntimeError("the output tree is known only once the function ran")
        return store[-1]

    return store, out_tree


def _flat_wrapped(fun, flat_fun):
    """`flat_fun(f, *leaves)` applied to `fun`: a callable, or a `WrappedFun` with the
    flattening as one more transformation (JAX's convention)."""
    if isinstance(fun, WrappedFun):
        return fun.wrap(flat_fun)
    return functools.partial(flat_fun, fun)


def flatten_fun(fun, in_tree):
    """`(flat_fun, out_tree)`: `flat_fun(*leaves)` calls `fun(*args, **kwargs)` with
    `(args, kwargs) = tree_unflatten(in_tree, leaves)` and returns the leaves of its
    output; `out_tree()` is the output's tree structure (after a call). For a
    `WrappedFun` `fun`, `flat_fun` is one (call it with `call_wrapped`)."""
    store, out_tree = _out_tree_store()

    def flat_fun(f, *leaves):
        args, kwargs = tree_util.tree_unflatten(in_tree, leaves)
        out_leaves, tree = tree_util.tree_flatten(f(*args, **kwargs))
        store.append(tree)
        return out_leaves

    return _flat_wrapped(fun, flat_fun), out_tree


def flatten_fun_nokwargs(fun, in_tree):
    """`flatten_fun` for `in_tree` the tree of the positional arguments only:
    `flat_fun(*leaves)` calls `fun(*tree_unflatten(in_tree, leaves))`."""
    store, out_tree = _out_tree_store()

    def flat_fun(f, *leaves):
        out_leaves, tree = tree_util.tree_flatten(
            f(*tree_util.tree_unflatten(in_tree, leaves))
        )
        store.append(tree)
        return out_leaves

    return _flat_wrapped(fun, flat_fun), out_tree


def debug_info(
    traced_for,
    fun,
    args,
    kwargs,
    *,
    static_argnums=(),
    static_argnames=(),
    result_paths_thunk=None,
    sourceinfo=None,
    signature=None,
):
    """What is being traced, with JAX's arguments: `traced_for` (e.g. "scan"), the
    function and its arguments (a `partial_eval.DebugInfo` naming `fun` and the
    paths of the arguments' leaves). JAX's other keywords (`static_argnames`,
    `result_paths_thunk`, `sourceinfo`, `signature`) are accepted and unused."""
    return partial_eval.debug_info(
        fun, traced_for, tuple(args), dict(kwargs), tuple(static_argnums)
    )


def flatten_fun_aux(fun, in_tree, has_aux=False):
    """`flatten_fun_nokwargs` recording the output tree in a box (`box["tree"]`).

    With `has_aux`, `fun` returns `(output, aux)`: the aux leaves that are tracers are
    appended to the outputs (so that transformations hand back their primal values);
    other aux leaves (strings, Python numbers, concrete arrays) pass through unchanged.
    `split_aux` separates them again.
    """
    box = {"n_aux": 0}

    def flat_fun(*leaves):
        args = tree_util.tree_unflatten(in_tree, leaves)
        out = fun(*args)
        aux_leaves = []
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError(
                    "expected function with aux output to return a two-element "
                    f"tuple, but got type {type(out)} with value {out!r}"
                )
            out, aux = out
            all_aux, box["aux_tree"] = tree_util.tree_flatten(aux)
            box["aux_traced"] = [isinstance(x, Tracer) for x in all_aux]
            box["aux_static"] = all_aux
            aux_leaves = [x for x in all_aux if isinstance(x, Tracer)]
            box["n_aux"] = len(aux_leaves)
        leaves_out, box["tree"] = tree_util.tree_flatten(out)
        return leaves_out + aux_leaves

    return flat_fun, box


def split_aux(box, outs):
    """`(outputs, aux pytree or None)` from the flat outputs of `flatten_fun_aux`."""
    n = box["n_aux"]
    if "aux_tree" not in box:
        return outs, None
    main, traced = outs[: len(outs) - n], iter(outs[len(outs) - n :])
    aux = [
        next(traced) if is_traced else x
        for x, is_traced in zip(box["aux_static"], box["aux_traced"])
    ]
    return main, tree_util.tree_unflatten(box["aux_tree"], aux)


def trace_flat(fun, in_tree, in_avals, debug_info=None, *, kwargs=False):
    """`(closed_jaxpr, out_tree)` of `fun` traced on the pytree `in_tree` whose leaves
    have the avals `in_avals`: `fun(*args)` with `in_tree` the tree of `args`, or
    `fun(*args, **kw)` with `kwargs=True` and `in_tree` the tree of `(args, kw)`."""
    flatten = flatten_fun if kwargs else flatten_fun_nokwargs
    flat_fun, out_tree = flatten(fun, in_tree)
    suspects = []  # outputs that may be no JAX values (never tracers: no leaks)

    def traced(*leaves):
        outs = flat_fun(*leaves)
        suspects[:] = [
            (i, x)
            for i, x in enumerate(outs)
            if not (isinstance(x, Tracer) or is_jax_type(x))
        ]
        return outs

    try:
        closed = trace_to_jaxpr(traced, in_avals, debug_info)
    except TypeError:
        if suspects and debug_info is not None:  # the jaxpr could not take it
            raise _returned_non_jaxtype(debug_info, out_tree(), *suspects[0]) from None
        raise
    return closed, out_tree()


def _returned_non_jaxtype(info, out_tree, i, x):
    """JAX's TypeError naming the traced function and its output `x` (leaf `i`),
    which is not a JAX value."""
    dummy = tree_util.tree_unflatten(out_tree, range(out_tree.num_leaves))
    path = tree_util.tree_flatten_with_path(dummy)[0][i][0]
    where = f" at output component {tree_util.keystr(path)}" if path else ""
    return TypeError(
        f"function {info.func_name} traced for {info.what} returned a value of "
        f"type {type(x)}{where}, which is not a valid JAX type"
    )


def arg_type_error(fun, x, i, info):
    """JAX's TypeError for argument leaf `x` (number `i`) of `fun`, not an array."""
    where = (
        info.arg_names[i] if info is not None and info.arg_names else f"position {i}"
    )
    return TypeError(
        f"Error interpreting argument to {fun} as an abstract array. The "
        f"problematic value is of type {type(x)} and was passed to the function at "
        f"path {where}.\nThis typically means that a jit-wrapped "
        "function was called with a non-array argument, and this argument was not "
        "marked as static using the static_argnums or static_argnames parameters of "
        "jax.jit."
    )


def shaped_abstractify(fun, x, i, info):
    """The aval of argument leaf `x` (number `i`) of `fun` (arrays, scalars,
    `ShapeDtypeStruct`s), or `arg_type_error` for any other value."""
    try:
        return abstractify(x)
    except TypeError:
        raise arg_type_error(fun, x, i, info) from None
