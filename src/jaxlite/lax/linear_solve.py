"""`custom_linear_solve` and `custom_root`: solvers whose derivatives come from the
equations they solve, not from the solver's iterations.

`custom_linear_solve(matvec, b, solve)` returns `x = solve(matvec, b)` for a linear
map `matvec` (`A`). Differentiating through an iterative solver would be slow and
inexact; instead, the derivative follows from `A x = b`:
`x_dot = A^{-1} (b_dot - A_dot x)`, one more call of `solve`. The solve is linear in
`b`, so reverse mode transposes it: the cotangent of `b` is `A^{-T} ct`, a call of
`transpose_solve` with the transposed map `vecmat` (or of `solve` again when
`symmetric=True`). The primitive `custom_linear_solve` holds the four traced
functions (matvec, vecmat, solve, transpose_solve); their closed-over values are its
first operands, then `b`. Batching vectorises the four together, finding by a fixed
point which parts of `x` and `b` end up batched so that all four agree.

`custom_root(f, initial_guess, solve, tangent_solve)` returns the root `x*` of `f`
that `solve` finds; by the implicit function theorem
`x*_dot = -(∂f/∂x)^{-1} (∂f/∂params · params_dot)`, where `tangent_solve(g, y)`
solves the linear system of `g = ∂f/∂x`. It is a `custom_jvp` function, so `grad`,
`vmap` and `jit` follow.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from jaxlite import backend, tree_util
from jaxlite.backend import lowering_rules
from jaxlite.core import (
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    eval_jaxpr,
    get_aval,
    impl_rules,
    jaxpr_as_fun,
)
from jaxlite.interpreters import ad, batching
from jaxlite.interpreters.batching import not_mapped
from jaxlite.lax import control_flow as cf
from jaxlite.lax.elementwise import neg
from jaxlite.util import split_list

__all__ = ["custom_linear_solve", "custom_root", "linear_solve_p"]


class _LinearSolveTuple(NamedTuple):
    matvec: object
    vecmat: object
    solve: object
    transpose_solve: object

    def transpose(self):
        return _LinearSolveTuple(
            self.vecmat, self.matvec, self.transpose_solve, self.solve
        )


def _split_args(args, const_lengths):
    """`(_LinearSolveTuple of const lists, b leaves)`."""
    *parts, b = split_list(list(args), list(const_lengths))
    return _LinearSolveTuple(*parts), b


def _flatten(consts):
    return [c for part in consts for c in part]


# --------------------------------------------------------------------------------------
# The primitive: custom_linear_solve(*consts, *b, const_lengths, jaxprs)


def _run(closed, args):
    """Run a body jaxpr on NumPy values (compiled if it already is)."""
    if closed._compiled is not None:
        return closed._compiled(*args)
    outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
    return [getattr(o, "_value", o) for o in outs]


def _linear_solve_impl(*args, const_lengths, jaxprs):
    consts, b = _split_args(args, const_lengths)
    return _run(jaxprs.solve, [*consts.solve, *b])


def _linear_solve_abstract(*avals, const_lengths, jaxprs):
    outs = [ShapedArray(a.shape, a.dtype, a.weak_type) for a in jaxprs.solve.out_avals]
    return outs, jaxprs.solve.effects


def _linear_solve_lowering(ctx, *args, const_lengths, jaxprs):
    fun = ctx.add_global(backend.compile(jaxprs.solve).fun, "linear_solve")
    start = sum(const_lengths[:2])
    operands = args[start : start + const_lengths.solve] + args[sum(const_lengths) :]
    return f"{fun}({', '.join(operands)})"


def _linear_solve_jvp(primals, tangents, *, const_lengths, jaxprs):
    """x_dot = A^{-1} (b_dot - A_dot x); the solver's own derivative is never used."""
    outs = linear_solve_p.bind(*primals, const_lengths=const_lengths, jaxprs=jaxprs)
    consts, _ = _split_args(primals, const_lengths)
    consts_dot, b_dot = _split_args(tangents, const_lengths)
    n_x = len(b_dot)
    x = outs[:n_x]
    rhs = list(b_dot)
    if not all(type(t) is ad.Zero for t in consts_dot.matvec):
        # A_dot x: the JVP of matvec in its closed-over values, at fixed x.
        matvec = jaxpr_as_fun(jaxprs.matvec)
        _, a_dot_x = ad.jvp_flat(
            lambda *c: matvec(*c, *x), list(consts.matvec), list(consts_dot.matvec)
        )
        rhs = [
            ad.add_tangents(r, t if type(t) is ad.Zero else neg(t))
            for r, t in zip(rhs, a_dot_x)
        ]
    zero_tangents = [ad.Zero(ad.tangent_aval(get_aval(o))) for o in outs]
    if all(type(r) is ad.Zero for r in rhs):
        return outs, zero_tangents
    rhs = [ad.instantiate(r) for r in rhs]
    x_dot = linear_solve_p.bind(
        *_flatten(consts), *rhs, const_lengths=const_lengths, jaxprs=jaxprs
    )
    return outs, x_dot[:n_x] + zero_tangents[n_x:]  # aux values get no tangent


def _linear_solve_transpose(cts, *args, const_lengths, jaxprs):
    if jaxprs.transpose_solve is None:
        raise TypeError(
            "transpose_solve required for backwards mode automatic differentiation of "
            "custom_linear_solve"
        )
    consts, b = _split_args(args, const_lengths)
    if any(ad.is_undefined(c) for c in _flatten(consts)) or not all(
        ad.is_undefined(x) for x in b
    ):
        raise NotImplementedError(
            "custom_linear_solve is linear in b only: its transpose needs the closed-"
            "over values of matvec and solve to be known."
        )
    n_x = len(b)
    cts_x = [
        cf.zeros_for(x.aval) if type(ct) is ad.Zero else ct
        for ct, x in zip(cts[:n_x], b)
    ]
    ct_b = linear_solve_p.bind(
        *_flatten(consts.transpose()),
        *cts_x,
        const_lengths=const_lengths.transpose(),
        jaxprs=jaxprs.transpose(),
    )
    return [None] * sum(const_lengths) + ct_b[:n_x]


def _batch_body(closed, axis_size, in_batched, out_batched):
    if closed is None:
        return None, [], None
    dims = [0 if b else not_mapped for b in in_batched]
    return batching.batch_body(closed, axis_size, dims, out_batched)


def _linear_solve_batch(axis_size, vals, dims, *, const_lengths, jaxprs):
    """Batch the four bodies consistently: iterate until the batched parts of x (what
    solve and vecmat return) and b (what matvec and transpose_solve return) settle."""
    consts, b = _split_args(vals, const_lengths)
    const_dims, b_dims = _split_args(dims, const_lengths)
    c_bat = _LinearSolveTuple(*([d is not not_mapped for d in ds] for ds in const_dims))
    b_orig = [d is not not_mapped for d in b_dims]
    n_x = len(b)
    n_aux = len(jaxprs.solve.out_avals) - n_x
    b_bat, x_bat = list(b_orig), [False] * (n_x + n_aux)
    for _ in range(2 * (n_x + n_aux) + 2):
        solve_b = _batch_body(jaxprs.solve, axis_size, c_bat.solve + b_bat, x_bat)
        x_new = list(solve_b[2])
        vecmat_b = _batch_body(jaxprs.vecmat, axis_size, c_bat.vecmat + b_bat, None)
        if vecmat_b[2] is not None:
            x_new = [a or v for a, v in zip(x_new, vecmat_b[2] + [True] * n_aux)]
        matvec_b = _batch_body(
            jaxprs.matvec, axis_size, c_bat.matvec + x_new[:n_x], b_bat
        )
        b_new = [a or m for a, m in zip(b_orig, matvec_b[2])]
        tsolve_b = _batch_body(
            jaxprs.transpose_solve,
            axis_size,
            c_bat.transpose_solve + x_new[:n_x],
            None,
        )
        if tsolve_b[2] is not None:
            b_new = [a or t for a, t in zip(b_new, tsolve_b[2][:n_x])]
        if x_new == x_bat and b_new == b_bat:
            break
        x_bat, b_bat = x_new, b_new
    # Final bodies with exactly these batched outputs.
    solve_b = _batch_body(jaxprs.solve, axis_size, c_bat.solve + b_bat, x_bat)
    vecmat_b = _batch_body(jaxprs.vecmat, axis_size, c_bat.vecmat + b_bat, x_bat[:n_x])
    matvec_b = _batch_body(jaxprs.matvec, axis_size, c_bat.matvec + x_bat[:n_x], b_bat)
    tsolve_b = _batch_body(
        jaxprs.transpose_solve,
        axis_size,
        c_bat.transpose_solve + x_bat[:n_x],
        b_bat + [True] * n_aux,
    )
    parts = (matvec_b, vecmat_b, solve_b, tsolve_b)
    new_consts = []
    for (_, extra, _), cs, ds in zip(parts, consts, const_dims):
        moved = [
            c if d is not_mapped else batching.moveaxis(c, d, 0) for c, d in zip(cs, ds)
        ]
        new_consts.append(list(extra) + moved)
    new_b = [
        batching.bdim_at_front(x, d, axis_size) if bat else x
        for x, d, bat in zip(b, b_dims, b_bat)
    ]
    new_jaxprs = _LinearSolveTuple(*(p[0] for p in parts))
    new_lengths = _LinearSolveTuple(*(len(c) for c in new_consts))
    outs = linear_solve_p.bind(
        *_flatten(new_consts), *new_b, const_lengths=new_lengths, jaxprs=new_jaxprs
    )
    return outs, [0 if bat else not_mapped for bat in x_bat]


linear_solve_p = Primitive("custom_linear_solve", multiple_results=True)
impl_rules[linear_solve_p] = _linear_solve_impl
abstract_eval_rules[linear_solve_p] = _linear_solve_abstract
lowering_rules[linear_solve_p] = _linear_solve_lowering
ad.jvp_rules[linear_solve_p] = _linear_solve_jvp
ad.transpose_rules[linear_solve_p] = _linear_solve_transpose
batching.batch_rules[linear_solve_p] = _linear_solve_batch


# --------------------------------------------------------------------------------------
# Public functions


def _check_tree(func_name, expected_name, actual, expected, has_aux):
    if has_aux:
        children = tree_util.treedef_children(actual)
        if len(children) != 2:
            raise TypeError(
                f"{func_name}() produced a pytree with structure {actual}, but a pytree "
                "tuple with auxiliary output was expected because has_aux was set to "
                "True."
            )
        actual = children[0]
    if actual != expected:
        raise TypeError(
            f"{func_name}() output pytree structure must match {expected_name}, got "
            f"{actual} and {expected}."
        )


def _check_avals(func_name, expected_name, actual, expected):
    if [a.shape for a in actual] != [e.shape for e in expected]:
        raise ValueError(
            f"{func_name}() output shapes must match {expected_name}, got "
            f"{[a.shape for a in actual]} and {[e.shape for e in expected]}"
        )
    if any(a.dtype != e.dtype for a, e in zip(actual, expected)):
        raise TypeError(
            f"{func_name}() output dtypes must match {expected_name}, got "
            f"{[x.str_short() for x in actual]} and "
            f"{[x.str_short() for x in expected]}."
        )


def _trace(fun, in_tree, avals):
    """`(jaxpr, consts, out_tree, out_avals)` of `fun(*args)` for args of `in_tree`."""
    return cf.trace_body(fun, "custom_linear_solve", in_tree, avals)


def custom_linear_solve(
    matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False
):
    """`solve(matvec, b)`, differentiated implicitly through `matvec(x) = b`.

    `matvec` must be linear in x; `solve(matvec, b)` returns x (and auxiliary data if
    `has_aux`); `transpose_solve(vecmat, b)` solves the transposed system (needed for
    reverse mode unless `symmetric`, when `solve` serves).
    """
    b_leaves, tree = cf.flatten_operands(b)
    b_avals = [get_aval(x) for x in b_leaves]
    in_tree = tree_util.tree_structure((tree_util.tree_unflatten(tree, b_avals),))
    if symmetric and transpose_solve is None:
        transpose_solve = solve

    matvec_j, matvec_c, out_tree, out_avals = _trace(matvec, in_tree, b_avals)
    _check_tree("matvec", "b", out_tree, tree, False)
    _check_avals("matvec", "b", out_avals, b_avals)
    solve_j, solve_c, out_tree, out_avals = _trace(
        functools.partial(solve, matvec), in_tree, b_avals
    )
    _check_tree("solve", "b", out_tree, tree, has_aux)
    _check_avals("solve", "b", out_avals[: len(b_avals)], b_avals)
    aux_tree = tree_util.treedef_children(out_tree)[1] if has_aux else None

    vecmat_j = tsolve_j = None
    vecmat_c = tsolve_c = []
    if transpose_solve is not None:
        if symmetric:
            vecmat, vecmat_j, vecmat_c = matvec, matvec_j, matvec_c
        else:
            vecmat = _transposed(matvec, b)
            vecmat_j, vecmat_c, out_tree, _ = _trace(vecmat, in_tree, b_avals)
            _check_tree("vecmat", "b", out_tree, tree, False)
        tsolve_j, tsolve_c, out_tree, out_avals = _trace(
            functools.partial(transpose_solve, vecmat), in_tree, b_avals
        )
        _check_tree("transpose_solve", "b", out_tree, tree, has_aux)
        _check_avals("transpose_solve", "b", out_avals[: len(b_avals)], b_avals)

    jaxprs = _LinearSolveTuple(matvec_j, vecmat_j, solve_j, tsolve_j)
    consts = _LinearSolveTuple(matvec_c, vecmat_c, solve_c, tsolve_c)
    lengths = _LinearSolveTuple(*(len(c) for c in consts))
    outs = linear_solve_p.bind(
        *_flatten(consts), *b_leaves, const_lengths=lengths, jaxprs=jaxprs
    )
    x = tree_util.tree_unflatten(tree, outs[: len(b_leaves)])
    if has_aux:
        return x, tree_util.tree_unflatten(aux_tree, outs[len(b_leaves) :])
    return x


def _transposed(matvec, b):
    """vecmat: the transpose of the linear map `matvec` at `b`'s types."""
    from jaxlite.api_autodiff import linear_transpose

    transpose = linear_transpose(matvec, b)

    def vecmat(y):
        (x,) = transpose(y)
        return x

    return vecmat


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """The root of `f` found by `solve(f, initial_guess)`, differentiated implicitly.

    `tangent_solve(g, y)` must solve `g(x) = y` for the linear map `g` (the Jacobian
    of `f` at the root), e.g. `lambda g, y: y / g(1.0)` for scalars.
    """
    from jaxlite.api_autodiff import linearize
    from jaxlite.lax.custom_derivatives import custom_jvp

    guess_leaves, tree = cf.flatten_operands(initial_guess)
    avals = [get_aval(x) for x in guess_leaves]
    in_tree = tree_util.tree_structure((tree_util.tree_unflatten(tree, avals),))
    f_j, f_c, out_tree, _ = cf.trace_body(f, "custom_root", in_tree, avals)
    _check_tree("f", "initial_guess", out_tree, tree, False)
    solve_j, solve_c, solution_tree, _ = cf.trace_body(
        functools.partial(solve, f), "custom_root", in_tree, avals
    )
    _check_tree("solve", "initial_guess", solution_tree, tree, has_aux)

    def linearize_and_solve(x, b):
        _, f_jvp = linearize(f, x)
        return tangent_solve(f_jvp, b)

    pair_tree = tree_util.tree_structure(
        (tree_util.tree_unflatten(tree, avals), tree_util.tree_unflatten(tree, avals))
    )
    ls_j, ls_c, out_tree, _ = cf.trace_body(
        linearize_and_solve, "custom_root", pair_tree, avals * 2
    )
    _check_tree("tangent_solve", "x", out_tree, tree, False)
    n_f, n_solve, n_x = len(f_c), len(solve_c), len(guess_leaves)

    def root(*args):
        solve_consts = args[n_f : n_f + n_solve]
        guess = args[n_f + n_solve + len(ls_c) :]
        return jaxpr_as_fun(solve_j)(*solve_consts, *guess)

    def root_jvp(primals, tangents):
        f_consts = list(primals[:n_f])
        ls_consts = primals[n_f + n_solve : n_f + n_solve + len(ls_c)]
        # The solution through `rooted` itself, so that its own derivative (needed
        # for higher orders) is again the implicit one, not the solver's.
        sol = rooted(*primals)
        solution, aux = sol[:n_x], sol[n_x:]
        # f(params, x*(params)) = 0, so ∂f/∂x x*_dot = -∂f/∂params params_dot.
        _, rhs = ad.jvp_flat(
            lambda *c: jaxpr_as_fun(f_j)(*c, *solution),
            f_consts,
            list(tangents[:n_f]),
        )
        rhs = [
            cf.zeros_for(get_aval(s)) if type(r) is ad.Zero else r
            for r, s in zip(rhs, solution)
        ]
        dx = jaxpr_as_fun(ls_j)(*ls_consts, *solution, *rhs)
        return sol, [neg(d) for d in dx] + [_zeros_like(a) for a in aux]

    rooted = custom_jvp(root)
    rooted.defjvp(root_jvp)
    outs = rooted(*f_c, *solve_c, *ls_c, *guess_leaves)
    if has_aux:
        return (
            tree_util.tree_unflatten(tree, outs[:n_x]),
            tree_util.tree_unflatten(
                tree_util.treedef_children(solution_tree)[1], outs[n_x:]
            ),
        )
    return tree_util.tree_unflatten(tree, outs)


def _zeros_like(x):
    from jaxlite.lax.constructors import full

    return full(np.shape(x), 0, np.dtype(get_aval(x).dtype))
