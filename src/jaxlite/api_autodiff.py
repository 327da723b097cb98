"""The differentiation API: jvp, linearize, vjp, grad, value_and_grad, jacfwd, jacrev,
hessian and linear_transpose, on pytrees, over the flat machinery of `interpreters.ad`."""

from __future__ import annotations

import functools

import numpy as np

from jaxlite import dtypes, tree_util
from jaxlite.core import Array, get_aval
from jaxlite.interpreters import ad
from jaxlite.interpreters.partial_eval import trace_to_jaxpr


def _flatten_fun(fun, in_tree, has_aux=False):
    """`flat_fun(*leaves) -> out leaves`, recording the output tree in a box.

    With `has_aux`, the aux leaves are appended to the outputs (so that transformations
    hand back their primal values) and `split_aux` separates them again.
    """
    box = {"n_aux": 0}

    def flat_fun(*leaves):
        args = tree_util.tree_unflatten(in_tree, leaves)
        out = fun(*args)
        aux_leaves = []
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError(
                    "has_aux=True requires the function to return a pair (output, aux), "
                    f"got {type(out).__name__}."
                )
            out, aux = out
            aux_leaves, box["aux_tree"] = tree_util.tree_flatten(aux)
            box["n_aux"] = len(aux_leaves)
        leaves_out, box["tree"] = tree_util.tree_flatten(out)
        return leaves_out + aux_leaves

    return flat_fun, box


def split_aux(box, outs):
    """`(outputs, aux pytree or None)` from the flat outputs of `_flatten_fun`."""
    n = box["n_aux"]
    if not n and "aux_tree" not in box:
        return outs, None
    main, aux = outs[: len(outs) - n], outs[len(outs) - n :]
    return main, tree_util.tree_unflatten(box["aux_tree"], aux)


def _as_value(x):
    from jaxlite.numpy import asarray

    return x if isinstance(x, Array) or hasattr(x, "_trace") else asarray(x)


def _tangent_leaf(t, p, where):
    aval = get_aval(p)
    expected = ad.tangent_dtype(aval.dtype)
    t_aval = get_aval(t)
    if t_aval.shape != aval.shape:
        raise ValueError(
            f"{where}: primal and tangent arguments to jax.jvp must have the same shape; "
            f"got primal shape {aval.shape} and tangent shape {t_aval.shape}."
        )
    if np.dtype(t_aval.dtype) != np.dtype(expected):
        raise TypeError(
            f"{where}: primal and tangent arguments to jax.jvp do not match; dtypes must "
            f"be equal, or in case of int/bool primal dtype the tangent dtype must be "
            f"float0. Got primal dtype {aval.dtype.name} and so expected tangent dtype "
            f"{np.dtype(expected).name}, but got tangent dtype {t_aval.dtype.name} "
            "instead."
        )
    if expected == dtypes.float0:
        return ad.Zero(ad.tangent_aval(aval))
    return t


def jvp(fun, primals, tangents, has_aux=False):
    """Forward-mode: `(fun(*primals), d fun(primals) . tangents)`."""
    if not isinstance(primals, (tuple, list)) or not isinstance(
        tangents, (tuple, list)
    ):
        raise TypeError(
            "primal and tangent arguments to jax.jvp must be tuples or lists; found "
            f"{type(primals).__name__} and {type(tangents).__name__}."
        )
    p_leaves, p_tree = tree_util.tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_util.tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError(
            "primal and tangent arguments to jax.jvp must have the same tree structure; "
            f"primals have tree structure {p_tree} whereas tangents have tree structure "
            f"{t_tree}."
        )
    p_leaves = [_as_value(p) for p in p_leaves]
    t_leaves = [
        _tangent_leaf(
            _as_value(t) if get_aval(t).dtype != dtypes.float0 else t, p, "jvp"
        )
        for p, t in zip(p_leaves, t_leaves)
    ]
    flat_fun, box = _flatten_fun(fun, p_tree, has_aux)
    outs, out_tangents = ad.jvp_flat(flat_fun, p_leaves, t_leaves)
    outs, aux = split_aux(box, outs)
    out_tangents = [ad.instantiate(t) for t in out_tangents[: len(outs)]]
    out = tree_util.tree_unflatten(box["tree"], outs)
    out_t = tree_util.tree_unflatten(box["tree"], out_tangents)
    if has_aux:
        return out, out_t, aux
    return out, out_t


def linearize(fun, *primals, has_aux=False):
    """`(fun(*primals), f_jvp)` where `f_jvp(*tangents)` evaluates the linear map."""
    p_leaves, p_tree = tree_util.tree_flatten(primals)
    p_leaves = [_as_value(p) for p in p_leaves]
    flat_fun, box = _flatten_fun(fun, p_tree, has_aux)
    outs, linear = ad.linearize_flat(flat_fun, p_leaves)
    outs, aux = split_aux(box, outs)
    out_tree = box["tree"]
    n_out = len(outs)

    jaxpr = linear.jaxpr

    def f_jvp(consts, *tangents):
        t_leaves, t_tree = tree_util.tree_flatten(tangents)
        if t_tree != p_tree:
            raise TypeError(
                f"linearized function called on tangent values inconsistent with the "
                f"original primal values: expected {p_tree}, got {t_tree}."
            )
        from jaxlite.core import eval_jaxpr

        t_leaves = [_as_value(t) for t in t_leaves]
        out_t = eval_jaxpr(jaxpr, consts, *t_leaves)[:n_out]
        return tree_util.tree_unflatten(out_tree, out_t)

    # A pytree (as in JAX): the residuals are its leaves, so it can be passed to jit.
    f_jvp = tree_util.Partial(f_jvp, list(linear.consts))
    out = tree_util.tree_unflatten(out_tree, outs)
    if has_aux:
        return out, f_jvp, aux
    return out, f_jvp


def vjp(fun, *primals, has_aux=False):
    """`(fun(*primals), f_vjp)` where `f_vjp(cotangent)` returns input cotangents."""
    p_leaves, p_tree = tree_util.tree_flatten(primals)
    p_leaves = [_as_value(p) for p in p_leaves]
    flat_fun, box = _flatten_fun(fun, p_tree, has_aux)
    outs, _, linear = ad.vjp_flat(flat_fun, p_leaves)
    outs, aux = split_aux(box, outs)
    out_tree = box["tree"]
    out_avals = [get_aval(o) for o in outs]
    aux_cts = [
        ad.Zero(ad.tangent_aval(get_aval(a))) for a in tree_util.tree_leaves(aux)
    ]
    in_avals = [get_aval(p) for p in p_leaves]
    jaxpr = linear.jaxpr

    def f_vjp(consts, cotangent):
        ct_leaves, ct_tree = tree_util.tree_flatten(cotangent)
        if ct_tree != out_tree:
            raise TypeError(
                "Tree structure of cotangent input "
                f"{ct_tree}, does not match structure of primal output {out_tree}."
            )
        cts = []
        for ct, aval in zip(ct_leaves, out_avals):
            ct_aval = get_aval(ct)
            if ct_aval.shape != aval.shape:
                raise ValueError(
                    "Shape of cotangent input to vjp pullback function "
                    f"{ct_aval.shape} must be the same as the shape of corresponding "
                    f"primal input {aval.shape}."
                )
            cts.append(
                ad.Zero(ad.tangent_aval(aval))
                if ct_aval.dtype == dtypes.float0
                else _as_value(ct)
            )
        cts_in = ad.backward_pass(jaxpr, consts, cts + aux_cts)
        cts_in = [_zero_cotangent(ct, a) for ct, a in zip(cts_in, in_avals)]
        return tree_util.tree_unflatten(p_tree, cts_in)

    # A pytree (as in JAX): the residuals are its leaves, so it can be passed to jit.
    f_vjp = tree_util.Partial(f_vjp, list(linear.consts))
    out = tree_util.tree_unflatten(out_tree, outs)
    if has_aux:
        return out, f_vjp, aux
    return out, f_vjp


def _zero_cotangent(ct, aval):
    if type(ct) is ad.Zero:
        return ad.zeros_like_aval(ad.tangent_aval(aval))
    return ct


def _check_grad_input(x, allow_int, holomorphic=False):
    if dtypes.is_extended(getattr(x, "dtype", None)):  # typed PRNG keys
        dtype = x.dtype
        if holomorphic:
            raise TypeError(
                "grad with holomorphic=True requires inputs with complex dtype, but "
                f"got {dtype}."
            )
        if allow_int:
            return
        raise TypeError(
            "grad requires real- or complex-valued inputs (input dtype that is a "
            f"sub-dtype of np.inexact), but got {dtype}. If you want to use Boolean- "
            "or integer-valued inputs, use vjp or set allow_int to True."
        )
    dtype = get_aval(x).dtype
    if holomorphic:
        if not dtypes.issubdtype(dtype, np.complexfloating):
            raise TypeError(
                "grad with holomorphic=True requires inputs with complex dtype, but "
                f"got {dtype.name}."
            )
        return
    if dtypes.issubdtype(dtype, np.inexact):
        return
    if allow_int and (dtypes.issubdtype(dtype, np.integer) or dtype == np.bool_):
        return
    raise TypeError(
        "grad requires real- or complex-valued inputs (input dtype that is a sub-dtype "
        f"of np.inexact), but got {dtype.name}. If you want to use Boolean- or "
        "integer-valued inputs, use vjp or set allow_int to True."
    )


def _check_scalar(out, holomorphic=False):
    aval = get_aval(out)
    if aval.shape != ():
        raise TypeError(
            "Gradient only defined for scalar-output functions. Output had shape: "
            f"{aval.shape}."
        )
    complex_out = dtypes.issubdtype(aval.dtype, np.complexfloating)
    if holomorphic and not complex_out:
        raise TypeError(
            "grad with holomorphic=True requires outputs with complex dtype, but got "
            f"{aval.dtype.name}."
        )
    if complex_out and not holomorphic:
        raise TypeError(
            "grad requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {aval.dtype.name}. For holomorphic "
            "differentiation, pass holomorphic=True. For differentiation of "
            "non-holomorphic functions involving complex outputs, use jax.vjp directly."
        )
    if not dtypes.issubdtype(aval.dtype, np.inexact):
        raise TypeError(
            "grad requires real- or complex-valued outputs (output dtype that is a "
            f"sub-dtype of np.inexact), but got {aval.dtype.name}. For holomorphic "
            "differentiation, pass holomorphic=True."
        )


def _argnums_partial(fun, args, kwargs, argnums, allow_int, holomorphic=False):
    """`(partial_fun, diff_args)`: `fun` as a function of `args[argnums]` only, with the
    other arguments fixed; the differentiated arguments are checked."""
    for a in argnums:
        if a >= len(args):
            raise TypeError(
                f"differentiating with respect to argnums={argnums} requires at least "
                f"{max(argnums) + 1} positional arguments to be passed by the "
                f"caller, but got only {len(args)} positional arguments."
            )
    diff_args = tuple(args[a] for a in argnums)
    is_key = lambda x: dtypes.is_extended(getattr(x, "dtype", None))  # noqa: E731
    for leaf in tree_util.tree_leaves(diff_args, is_leaf=is_key):
        _check_grad_input(leaf, allow_int, holomorphic)

    def partial_fun(*diff):
        full = list(args)
        for a, d in zip(argnums, diff):
            full[a] = d
        return fun(*full, **kwargs)

    return partial_fun, diff_args


def value_and_grad(
    fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()
):
    """A function returning `(fun(*args), grad of fun with respect to args[argnums])`."""
    int_argnums = isinstance(argnums, int)
    argnums_t = (argnums,) if int_argnums else tuple(argnums)

    @functools.wraps(fun)
    def value_and_grad_f(*args, **kwargs):
        partial_fun, diff_args = _argnums_partial(
            fun, args, kwargs, argnums_t, allow_int, holomorphic
        )

        if has_aux:
            out, f_vjp, aux = vjp(partial_fun, *diff_args, has_aux=True)
        else:
            out, f_vjp = vjp(partial_fun, *diff_args)
        _check_scalar(out, holomorphic)
        from jaxlite import lax

        ct = lax.full_like(out, 1.0)
        grads = f_vjp(ct)
        grads = grads[0] if int_argnums else grads
        if has_aux:
            return (out, aux), grads
        return out, grads

    return value_and_grad_f


def grad(
    fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()
):
    """The gradient of scalar-output `fun` with respect to `args[argnums]`."""
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def grad_f(*args, **kwargs):
        if has_aux:
            (_, aux), g = vg(*args, **kwargs)
            return g, aux
        return vg(*args, **kwargs)[1]

    return grad_f


def _std_basis(leaves):
    """One-hot tangents for every element of every leaf, stacked along a new axis 0.

    Each block keeps its leaf's weak type, so Jacobians of Python scalars stay weak.
    """
    sizes = [int(np.prod(get_aval(x).shape, dtype=np.int64)) for x in leaves]
    total = sum(sizes)
    dtype = dtypes.result_type(*leaves) if leaves else np.float32
    eye = np.eye(total, dtype=dtype)
    out, start = [], 0
    for x, n in zip(leaves, sizes):
        aval = get_aval(x)
        block_dtype = aval.dtype if dtypes.issubdtype(aval.dtype, np.inexact) else dtype
        block = (
            eye[:, start : start + n].reshape((total, *aval.shape)).astype(block_dtype)
        )
        out.append(Array(block, aval.weak_type))
        start += n
    return out, total


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """Jacobian by forward mode: one JVP per input element (vectorized with vmap)."""
    from jaxlite.api_vmap import vmap

    int_argnums = isinstance(argnums, int)
    argnums_t = (argnums,) if int_argnums else tuple(argnums)

    def jacfun(*args, **kwargs):
        partial_fun, diff_args = _argnums_partial(fun, args, kwargs, argnums_t, False)
        d_leaves, d_tree = tree_util.tree_flatten(diff_args)
        d_leaves = [_as_value(x) for x in d_leaves]

        basis, total = _std_basis(d_leaves)

        def push(*tangent_leaves):
            tangents = tree_util.tree_unflatten(d_tree, tangent_leaves)
            return jvp(
                partial_fun,
                tree_util.tree_unflatten(d_tree, d_leaves),
                tangents,
                has_aux=has_aux,
            )

        if has_aux:
            out, jac_cols, aux = vmap(push, out_axes=(None, -1, None))(*basis)
        else:
            out, jac_cols = vmap(push, out_axes=(None, -1))(*basis)
        jac = tree_util.tree_map(
            lambda col: _split_last(col, d_leaves, d_tree, int_argnums), jac_cols
        )
        return (jac, aux) if has_aux else jac

    return jacfun


def _split_last(col, in_leaves, in_tree, int_argnums):
    """A column block `[..., total]` split and reshaped per input leaf."""
    from jaxlite import lax

    out_shape = get_aval(col).shape[:-1]
    pieces, start = [], 0
    for x in in_leaves:
        shape = get_aval(x).shape
        n = int(np.prod(shape, dtype=np.int64))
        piece = col if len(in_leaves) == 1 else _slice_last(col, start, start + n)
        pieces.append(lax.reshape(piece, (*out_shape, *shape)))
        start += n
    tree = tree_util.tree_unflatten(in_tree, pieces)
    return tree[0] if int_argnums else tree


def _slice_last(x, start, stop):
    from jaxlite import lax

    shape = get_aval(x).shape
    return lax.slice(x, (0,) * (len(shape) - 1) + (start,), (*shape[:-1], stop))


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """Jacobian by reverse mode: one VJP per output element (vectorized with vmap)."""
    from jaxlite import lax
    from jaxlite.api_vmap import vmap

    int_argnums = isinstance(argnums, int)
    argnums_t = (argnums,) if int_argnums else tuple(argnums)

    def jacfun(*args, **kwargs):
        partial_fun, diff_args = _argnums_partial(
            fun, args, kwargs, argnums_t, allow_int
        )

        if has_aux:
            out, f_vjp, aux = vjp(partial_fun, *diff_args, has_aux=True)
        else:
            out, f_vjp = vjp(partial_fun, *diff_args)
        o_leaves, o_tree = tree_util.tree_flatten(out)
        basis, total = _std_basis(o_leaves)
        rows = vmap(lambda *cts: f_vjp(tree_util.tree_unflatten(o_tree, cts)))(*basis)
        # rows: pytree like diff_args with leaves [total, *in_shape]; split over outputs
        per_input = []
        for r in tree_util.tree_leaves(rows):
            in_shape = get_aval(r).shape[1:]
            blocks, start = [], 0
            for o in o_leaves:
                shape = get_aval(o).shape
                n = int(np.prod(shape, dtype=np.int64))
                if len(o_leaves) == 1:
                    blocks.append(lax.reshape(r, (*shape, *in_shape)))
                    continue
                block = lax.slice(
                    r, (start,) + (0,) * len(in_shape), (start + n, *in_shape)
                )
                blocks.append(lax.reshape(block, (*shape, *in_shape)))
                start += n
            per_input.append(blocks)
        in_tree = tree_util.tree_structure(diff_args)
        # Jacobian layout: output tree outer, input tree inner (as JAX).
        jac_leaves = []
        for k in range(len(o_leaves)):
            inner = tree_util.tree_unflatten(
                in_tree, [blocks[k] for blocks in per_input]
            )
            jac_leaves.append(inner[0] if int_argnums else inner)
        jac = tree_util.tree_unflatten(o_tree, jac_leaves)
        return (jac, aux) if has_aux else jac

    return jacfun


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Hessian, as `jacfwd(jacrev(fun))`."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux), argnums, has_aux=has_aux)


def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of the linear function `fun`, traced at `primals`' shapes."""
    p_leaves, p_tree = tree_util.tree_flatten(primals)
    in_avals = [get_aval(_as_value(p)).strip_weak_type() for p in p_leaves]
    flat_fun, box = _flatten_fun(fun, p_tree)
    closed = trace_to_jaxpr(flat_fun, in_avals)
    out_tree = box["tree"]

    def transposed(*cotangent):
        (cotangent,) = cotangent if len(cotangent) == 1 else (cotangent,)
        ct_leaves, ct_tree = tree_util.tree_flatten(cotangent)
        if ct_tree != out_tree:
            raise TypeError(
                f"cotangent tree does not match function output: expected {out_tree}, "
                f"got {ct_tree}"
            )
        cts = [_as_value(c) for c in ct_leaves]
        cts_in = ad.backward_pass(closed.jaxpr, closed.consts, cts)
        cts_in = [
            ad.zeros_like_aval(a) if type(c) is ad.Zero else c
            for c, a in zip(cts_in, in_avals)
        ]
        return tree_util.tree_unflatten(p_tree, cts_in)

    return transposed
