"""The differentiation API: jvp, linearize, vjp, grad, value_and_grad, jacfwd, jacrev,
hessian and linear_transpose, on pytrees, over the flat machinery of `interpreters.ad`."""

from __future__ import annotations

import functools

import numpy as np

from jaxlite import dtypes, tree_util
from jaxlite.api_util import check_callable, flatten_fun_aux, split_aux, trace_flat
from jaxlite.core import (
    Array,
    ShapedArray,
    as_value,
    eval_jaxpr,
    float0_value,
    get_aval,
    is_jax_type,
)
from jaxlite.interpreters import ad
from jaxlite.interpreters.partial_eval import abstractify
from jaxlite.util import fun_name, fun_sourceinfo, wraps

# Primals passed as Python scalars are literals of the linear jaxpr, not residual leaves
# of the returned function (as JAX).
_PY_SCALARS = (int, float, complex, bool)


def _tangent_leaf(t, p, where):
    aval = get_aval(p)
    expected = ad.tangent_dtype(aval.dtype)
    t_aval = get_aval(t)
    # JAX 0.10.2's messages, word for word (missing spaces included).
    if t_aval.shape != aval.shape:
        raise ValueError(
            f"{where} called with different primal and tangent shapes;Got primal "
            f"shape {aval.shape} and tangent shape as {t_aval.shape}"
        )
    if np.dtype(t_aval.dtype) != np.dtype(expected):
        raise TypeError(
            "primal and tangent arguments to jax.jvp do not match; dtypes must be "
            "equal, or in case of int/bool primal dtype the tangent dtype must be "
            f"float0.Got primal dtype {aval.dtype} and so expected tangent dtype "
            f"{np.dtype(expected)}, but got tangent dtype {t_aval.dtype} instead."
        )
    if expected == dtypes.float0:
        return ad.Zero(ad.tangent_aval(aval))
    return t


def jvp(fun, primals, tangents, has_aux=False):
    """Forward-mode: `(fun(*primals), d fun(primals) . tangents)`."""
    check_callable(fun)
    if not isinstance(primals, (tuple, list)) or not isinstance(
        tangents, (tuple, list)
    ):
        raise TypeError(
            "primal and tangent arguments to jax.jvp must be tuples or lists; found "
            f"{type(primals).__name__} and {type(tangents).__name__}."
        )
    # As JAX, a tuple of primals and a list of tangents differ.
    p_leaves, p_tree = tree_util.tree_flatten(primals)
    t_leaves, t_tree = tree_util.tree_flatten(tangents)
    if p_tree != t_tree:
        raise TypeError(
            "primal and tangent arguments to jax.jvp must have the same tree structure; "
            f"primals have tree structure {p_tree} whereas tangents have tree structure "
            f"{t_tree}."
        )
    p_tree = tree_util.tree_structure(tuple(primals))
    p_leaves = [as_value(p) for p in p_leaves]
    t_leaves = [
        _tangent_leaf(
            as_value(t) if get_aval(t).dtype != dtypes.float0 else t, p, "jvp"
        )
        for p, t in zip(p_leaves, t_leaves)
    ]
    flat_fun, box = flatten_fun_aux(fun, p_tree, has_aux)
    outs, out_tangents = ad.jvp_flat(flat_fun, p_leaves, t_leaves)
    outs, aux = split_aux(box, outs)
    out_tangents = [_user_value(ad.instantiate(t)) for t in out_tangents[: len(outs)]]
    out = tree_util.tree_unflatten(box["tree"], outs)
    out_t = tree_util.tree_unflatten(box["tree"], out_tangents)
    if has_aux:
        return out, out_t, aux
    return out, out_t


def linearize(fun, *primals, has_aux=False):
    """`(fun(*primals), f_jvp)` where `f_jvp(*tangents)` evaluates the linear map."""
    check_callable(fun)
    p_leaves, p_tree = tree_util.tree_flatten(primals)
    literal = [type(p) in _PY_SCALARS for p in p_leaves]
    p_leaves = [as_value(p) for p in p_leaves]
    flat_fun, box = flatten_fun_aux(fun, p_tree, has_aux)
    outs, linear = ad.linearize_flat(flat_fun, p_leaves, literal)
    outs, aux = split_aux(box, outs)
    out_tree = box["tree"]
    n_out = len(outs)
    p_avals = [get_aval(p) for p in p_leaves]

    jaxpr = linear.jaxpr

    def f_jvp(consts, *tangents):
        t_leaves, t_tree = tree_util.tree_flatten(tangents)
        if t_tree != p_tree:
            raise TypeError(
                f"linearized function called on tangent values inconsistent with the "
                f"original primal values: expected {p_tree}, got {t_tree}."
            )
        t_leaves = [as_value(t) for t in t_leaves]
        for t, p_aval in zip(t_leaves, p_avals):
            _check_linearized_tangent(get_aval(t), p_aval)
        out_t = eval_jaxpr(jaxpr, consts, *t_leaves)[:n_out]
        return tree_util.tree_unflatten(out_tree, [_user_value(t) for t in out_t])

    # A pytree (as in JAX): the residuals are its leaves, so it can be passed to jit.
    f_jvp = tree_util.Partial(f_jvp, list(linear.consts))
    out = tree_util.tree_unflatten(out_tree, outs)
    if has_aux:
        return out, f_jvp, aux
    return out, f_jvp


def _check_linearized_tangent(t_aval, p_aval):
    """A tangent given to a linearized function has its primal's tangent type
    (shape and dtype; weak types aside), with JAX's ValueError otherwise."""
    expected = ad.tangent_aval(p_aval)
    if (t_aval.shape, t_aval.dtype) != (expected.shape, expected.dtype):
        raise ValueError(
            "linearized function called on tangent values inconsistent with the "
            f"original primal values:\nGot tangent aval {t_aval} for primal aval "
            f"{p_aval} but expected {expected}."
        )


_VJP_TOO_MANY_ARGS = """
The function returned by `jax.vjp` applied to {} was called with {} arguments,
but functions returned by `jax.vjp` must be called with a single argument
corresponding to the single value returned by the function being differentiated
(even if that returned value is a tuple or other container).

For example, if we have:

  def f(x):
    return (x, x)
  _, f_vjp = jax.vjp(f, 1.0)

the function `f` returns a single tuple as output, and so we call `f_vjp` with a
single tuple as its argument:

  x_bar, = f_vjp((2.0, 2.0))

If we instead call `f_vjp(2.0, 2.0)`, with the values 'splatted out' as
arguments rather than in a tuple, this error can arise.
"""


def vjp(fun, *primals, has_aux=False):
    """`(fun(*primals), f_vjp)` where `f_vjp(cotangent)` returns input cotangents."""
    check_callable(fun)
    p_leaves, p_tree = tree_util.tree_flatten(primals)
    literal = [type(p) in _PY_SCALARS for p in p_leaves]
    p_leaves = [as_value(p) for p in p_leaves]
    flat_fun, box = flatten_fun_aux(fun, p_tree, has_aux)
    outs, _, linear = ad.vjp_flat(flat_fun, p_leaves, literal)
    traced_aux = outs[len(outs) - box["n_aux"] :]
    aux_cts = [ad.Zero(ad.tangent_aval(get_aval(a))) for a in traced_aux]
    outs, aux = split_aux(box, outs)
    out_tree = box["tree"]
    out_avals = [get_aval(o) for o in outs]
    in_avals = [get_aval(p) for p in p_leaves]
    jaxpr = linear.jaxpr

    def f_vjp(consts, cotangent, *extra):
        if extra:
            raise TypeError(_VJP_TOO_MANY_ARGS.format(fun_name(fun), len(extra) + 1))
        ct_leaves, ct_tree = tree_util.tree_flatten(cotangent)
        if ct_tree != out_tree:
            raise ValueError(
                "unexpected tree structure.\n\nThe argument to a VJP function "
                "returned by `jax.vjp` must match the pytree structure of the "
                f"differentiated function {fun_sourceinfo(fun)}.\n\nBut the tree "
                f"structures differ: got {ct_tree}, expected {out_tree}."
            )
        cts = []
        for ct, aval in zip(ct_leaves, out_avals):
            ct_aval = get_aval(ct)
            expected = ad.tangent_aval(aval)
            # An integer or boolean output has float0 cotangents; as in JAX, a
            # cotangent of any dtype and the right shape stands for one (e.g. the
            # output itself, passed back).
            float0 = expected.dtype == dtypes.float0
            if ct_aval.shape != aval.shape or not (
                float0 or ct_aval.dtype == expected.dtype
            ):
                raise ValueError(
                    "unexpected JAX type (e.g. shape/dtype) for argument to VJP "
                    f"function: got {_long_type(ct_aval)}, but expected "
                    f"{_long_type(expected)} because the corresponding output of the "
                    f"differentiated function had JAX type {_long_type(aval)}"
                )
            cts.append(ad.Zero(expected) if float0 else as_value(ct))
        cts_in = ad.backward_pass(jaxpr, consts, cts + aux_cts)
        cts_in = [_zero_cotangent(ct, a) for ct, a in zip(cts_in, in_avals)]
        return tree_util.tree_unflatten(p_tree, cts_in)

    # A pytree (as in JAX): the residuals are its leaves, so it can be passed to jit.
    f_vjp = tree_util.Partial(f_vjp, list(linear.consts))
    out = tree_util.tree_unflatten(out_tree, outs)
    if has_aux:
        return out, f_vjp, aux
    return out, f_vjp


def _long_type(aval):
    """`float32[2,3]`, as JAX names types in its VJP errors."""
    dtype = aval.dtype
    name = "float0" if dtype == dtypes.float0 else np.dtype(dtype).name
    return f"{name}[{','.join(map(str, aval.shape))}]"


def _zero_cotangent(ct, aval):
    if type(ct) is ad.Zero:
        return ad.zeros_like_aval(ad.tangent_aval(aval))
    return _user_value(ct)


def _user_value(x):
    """A derivative as the API returns it: float0 ones as NumPy arrays, as JAX
    (`core.float0_value`; a jaxpr's constants hold them as Arrays)."""
    if type(x) is Array and x.dtype == dtypes.float0:
        return float0_value(x.shape)
    return x


def _dtype_name(x):
    dtype = getattr(x, "dtype", None)
    if dtypes.is_extended(dtype):  # typed PRNG keys
        return dtype, getattr(dtype, "name", str(dtype))
    dtype = get_aval(x).dtype
    return dtype, dtype.name


def _check_arg(x):
    """A differentiated input is a JAX value (JAX's `dispatch.check_arg`)."""
    dtype = getattr(x, "dtype", None)
    if not is_jax_type(x) or (isinstance(dtype, np.dtype) and dtype.kind == "O"):
        raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type.")


def _check_input_dtype_revderiv(name, holomorphic, allow_int, x):
    """Inputs of grad/jacrev: inexact, or (with allow_int) integer, bool or key."""
    _check_arg(x)
    dtype, dtype_name = _dtype_name(x)
    if holomorphic and not dtypes.issubdtype(dtype, np.complexfloating):
        raise TypeError(
            f"{name} with holomorphic=True requires inputs with complex dtype, but "
            f"got {dtype_name}."
        )
    if (
        dtypes.is_extended(dtype)
        or dtypes.issubdtype(dtype, np.integer)
        or dtype == np.bool_
    ):
        if not allow_int:
            raise TypeError(
                f"{name} requires real- or complex-valued inputs (input dtype that is "
                f"a sub-dtype of np.inexact), but got {dtype_name}. If you want to use "
                "Boolean- or integer-valued inputs, use vjp or set allow_int to True."
            )
    elif not dtypes.issubdtype(dtype, np.inexact):
        raise TypeError(
            f"{name} requires numerical-valued inputs (input dtype that is a sub-dtype "
            f"of np.bool_ or np.number), but got {dtype_name}."
        )


def _check_output_dtype_revderiv(name, holomorphic, x):
    """Outputs of grad/jacrev: real floats, or complex with holomorphic=True."""
    dtype, dtype_name = _dtype_name(x)
    if dtypes.is_extended(dtype):
        raise TypeError(f"{name} with output element type {dtype_name}")
    if holomorphic:
        if not dtypes.issubdtype(dtype, np.complexfloating):
            raise TypeError(
                f"{name} with holomorphic=True requires outputs with complex dtype, "
                f"but got {dtype_name}."
            )
    elif dtypes.issubdtype(dtype, np.complexfloating):
        raise TypeError(
            f"{name} requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {dtype_name}. For holomorphic differentiation, "
            "pass holomorphic=True. For differentiation of non-holomorphic functions "
            "involving complex outputs, use jax.vjp directly."
        )
    elif not dtypes.issubdtype(dtype, np.floating):
        raise TypeError(
            f"{name} requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {dtype_name}. For differentiation of functions "
            "with integer outputs, use jax.vjp directly."
        )


def _check_input_dtype_jacfwd(holomorphic, x):
    """Inputs of jacfwd: real floats, or complex with holomorphic=True."""
    _check_arg(x)
    dtype, dtype_name = _dtype_name(x)
    if dtypes.is_extended(dtype):
        raise TypeError(f"jacfwd with input element type {dtype_name}")
    if holomorphic:
        if not dtypes.issubdtype(dtype, np.complexfloating):
            raise TypeError(
                "jacfwd with holomorphic=True requires inputs with complex dtype, but "
                f"got {dtype_name}."
            )
    elif not dtypes.issubdtype(dtype, np.floating):
        raise TypeError(
            "jacfwd requires real-valued inputs (input dtype that is a sub-dtype of "
            f"np.floating), but got {dtype_name}. For holomorphic differentiation, "
            "pass holomorphic=True. For differentiation of non-holomorphic functions "
            "involving complex inputs or integer inputs, use jax.jvp directly."
        )


def _check_output_dtype_jacfwd(holomorphic, x):
    dtype, dtype_name = _dtype_name(x)
    if holomorphic and not dtypes.issubdtype(dtype, np.complexfloating):
        raise TypeError(
            "jacfwd with holomorphic=True requires outputs with complex dtype, but got "
            f"{dtype_name}."
        )


def _check_scalar(out, holomorphic=False):
    try:
        aval = get_aval(out)
    except TypeError:
        raise TypeError(
            f"Gradient only defined for scalar-output functions. Output was {out}."
        ) from None
    if aval.shape != ():
        raise TypeError(
            "Gradient only defined for scalar-output functions. Output had shape: "
            f"{aval.shape}."
        )
    _check_output_dtype_revderiv("grad", holomorphic, out)


def _is_key(x):
    return dtypes.is_extended(getattr(x, "dtype", None))


def _argnums_partial(fun, args, kwargs, argnums, check_input, shown=None):
    """`(partial_fun, diff_args)`: `fun` as a function of `args[argnums]` only, with the
    other arguments fixed; `check_input(leaf)` checks each differentiated leaf.
    `shown` is `argnums` as the user wrote it, for messages."""
    for a in argnums:
        if a >= len(args):
            shown = argnums if shown is None else shown
            raise TypeError(
                f"differentiating with respect to argnums={shown} requires at least "
                f"{max(argnums) + 1} positional arguments to be passed by the "
                f"caller, but got only {len(args)} positional arguments."
            )
    diff_args = tuple(args[a] for a in argnums)
    for leaf in tree_util.tree_leaves(diff_args, is_leaf=_is_key):
        check_input(leaf)

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
    check_callable(fun)
    int_argnums = isinstance(argnums, int)
    argnums_t = (argnums,) if int_argnums else tuple(argnums)

    @wraps(fun)
    def value_and_grad_f(*args, **kwargs):
        check = functools.partial(
            _check_input_dtype_revderiv, "grad", holomorphic, allow_int
        )
        partial_fun, diff_args = _argnums_partial(
            fun, args, kwargs, argnums_t, check, argnums
        )

        if has_aux:
            out, f_vjp, aux = vjp(partial_fun, *diff_args, has_aux=True)
        else:
            out, f_vjp = vjp(partial_fun, *diff_args)
        _check_scalar(out, holomorphic)
        ct = ad.full_like_aval(get_aval(out), 1.0)
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

    @wraps(fun)
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

    check_callable(fun)
    int_argnums = isinstance(argnums, int)
    argnums_t = (argnums,) if int_argnums else tuple(argnums)

    @wraps(fun)
    def jacfun(*args, **kwargs):
        check = functools.partial(_check_input_dtype_jacfwd, holomorphic)
        partial_fun, diff_args = _argnums_partial(
            fun, args, kwargs, argnums_t, check, argnums
        )
        d_leaves, d_tree = tree_util.tree_flatten(diff_args)
        d_leaves = [as_value(x) for x in d_leaves]

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
        for leaf in tree_util.tree_leaves(out):
            _check_output_dtype_jacfwd(holomorphic, leaf)
        jac = tree_util.tree_map(
            lambda y, col: _split_last(
                _float0_as_zeros(col, y), d_leaves, d_tree, int_argnums
            ),
            out,
            jac_cols,
        )
        return (jac, aux) if has_aux else jac

    return jacfun


def _float0_as_zeros(col, y):
    """Integer outputs have float0 tangents; their Jacobian is zeros of the output's
    dtype (as JAX)."""
    aval = get_aval(col)
    if aval.dtype != dtypes.float0:
        return col
    return ad.zeros_like_aval(ShapedArray(aval.shape, get_aval(y).dtype))


def _split_last(col, in_leaves, in_tree, int_argnums):
    """A column block `[..., total]` split and reshaped per input leaf."""
    out_shape = get_aval(col).shape[:-1]
    pieces, start = [], 0
    for x in in_leaves:
        shape = get_aval(x).shape
        n = int(np.prod(shape, dtype=np.int64))
        piece = col
        if len(in_leaves) > 1:
            piece = ad.slice_in_dim(col, start, start + n, axis=len(out_shape))
        pieces.append(ad.reshape(piece, (*out_shape, *shape)))
        start += n
    tree = tree_util.tree_unflatten(in_tree, pieces)
    return tree[0] if int_argnums else tree


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """Jacobian by reverse mode: one VJP per output element (vectorized with vmap)."""
    from jaxlite.api_vmap import vmap

    check_callable(fun)
    int_argnums = isinstance(argnums, int)
    argnums_t = (argnums,) if int_argnums else tuple(argnums)

    @wraps(fun)
    def jacfun(*args, **kwargs):
        check = functools.partial(
            _check_input_dtype_revderiv, "jacrev", holomorphic, allow_int
        )
        partial_fun, diff_args = _argnums_partial(
            fun, args, kwargs, argnums_t, check, argnums
        )

        if has_aux:
            out, f_vjp, aux = vjp(partial_fun, *diff_args, has_aux=True)
        else:
            out, f_vjp = vjp(partial_fun, *diff_args)
        o_leaves, o_tree = tree_util.tree_flatten(out)
        for leaf in o_leaves:
            _check_output_dtype_revderiv("jacrev", holomorphic, leaf)
        basis, total = _std_basis(o_leaves)
        rows = vmap(lambda *cts: f_vjp(tree_util.tree_unflatten(o_tree, cts)))(*basis)
        # rows: pytree like diff_args with leaves [total, *in_shape]; split over outputs
        per_input = []
        in_leaves = tree_util.tree_leaves(diff_args, is_leaf=_is_key)
        for r, x in zip(tree_util.tree_leaves(rows), in_leaves):
            in_shape = get_aval(r).shape[1:]
            blocks, start = [], 0
            for o in o_leaves:
                shape = get_aval(o).shape
                n = int(np.prod(shape, dtype=np.int64))
                block = r
                if len(o_leaves) > 1:
                    block = ad.slice_in_dim(r, start, start + n, axis=0)
                    start += n
                block = ad.reshape(block, (*shape, *in_shape))
                blocks.append(_like_input(block, x))
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


def _like_input(block, x):
    """A Jacobian block in the dtype and weak type of its input leaf `x`, as JAX's
    jacrev: an integer or boolean input's block is zeros of its own dtype, not
    float0."""
    aval = get_aval(x)
    if dtypes.is_extended(aval.dtype):
        return block
    b_aval = get_aval(block)
    target = ShapedArray(b_aval.shape, aval.dtype, aval.weak_type)
    if b_aval.dtype == dtypes.float0:
        return ad.zeros_like_aval(target)
    return ad.convert_to_aval(block, target)


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Hessian, as `jacfwd(jacrev(fun))`."""
    inner = jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic)
    return jacfwd(inner, argnums, has_aux=has_aux, holomorphic=holomorphic)


def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of the linear function `fun`, traced at `primals`' shapes and
    dtypes (arrays, scalars or `ShapeDtypeStruct`s). Returns a pytree (a `Partial`
    holding the traced constants) taking one cotangent like `fun`'s output."""
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to transpose is deprecated")
    p_leaves, p_tree = tree_util.tree_flatten(primals)
    in_avals = [abstractify(p) for p in p_leaves]
    closed, out_tree = trace_flat(fun, p_tree, in_avals)
    out_avals = tuple(closed.out_avals)
    in_dtypes = [a.dtype for a in in_avals]
    out_dtypes = [a.dtype for a in out_avals]
    kinds = in_dtypes + out_dtypes
    if not (
        all(dtypes.issubdtype(d, np.inexact) for d in kinds)
        or all(dtypes.issubdtype(d, np.integer) for d in kinds)
    ):
        raise TypeError(
            "linear_transpose only supports [float or complex] -> [float or complex], "
            f"and integer -> integer functions, but got {in_dtypes} -> {out_dtypes}."
        )

    def transposed(consts, out_cotangent):
        ct_leaves, ct_tree = tree_util.tree_flatten(out_cotangent)
        if ct_tree != out_tree:
            raise TypeError(
                "cotangent tree does not match function output, expected "
                f"{out_tree} but got {ct_tree}"
            )
        cts = [as_value(c) for c in ct_leaves]
        for ct, aval in zip(cts, out_avals):
            ct_aval = get_aval(ct)
            if ct_aval.shape != aval.shape or ct_aval.dtype != aval.dtype:
                raise TypeError(
                    "cotangent type does not match function output, expected "
                    f"{out_avals} but got {ct_leaves}"
                )
        cts_in = ad.backward_pass(closed.jaxpr, consts, cts)
        return tree_util.tree_unflatten(
            p_tree, [_as_aval(c, a) for c, a in zip(cts_in, in_avals)]
        )

    return tree_util.Partial(transposed, list(closed.consts))


def _as_aval(x, aval):
    """`x` (or zeros for a symbolic Zero) with `aval`'s dtype and weak type."""
    if type(x) is ad.Zero:
        return ad.zeros_like_aval(aval)
    return ad.convert_to_aval(x, aval)
