"""jax.lax.linalg.schur: the Schur decomposition `x = q t q^H` as a primitive.

`t` is upper triangular for complex matrices and quasi-triangular (2 x 2 blocks for
complex conjugate eigenvalue pairs) for real ones, and `q` is unitary; both are
computed by the shifted QR algorithm of `linalg_schur_numpy` (NumPy has no `gees`).
As in JAX on CPU: stacks of matrices are decomposed one by one (so vmap moves the
batch axis to the front), a matrix the algorithm cannot decompose gives NaNs,
`sort_eig_vals=True` is refused when the primitive runs (LAPACK's sorting is not
wired up in JAX either) and `select_callable` is ignored. The decomposition is not
unique, so it has no derivative rule; JAX has none either, and the error says so.
"""

from __future__ import annotations

from jaxlite.core import (
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    impl_rules,
    no_effects,
)
from jaxlite.interpreters import ad, batching
from jaxlite.lax import linalg_schur_numpy as kernels
from jaxlite.lax.linalg import _check_inexact, _check_rank, _move_front_rule
from jaxlite.lax.structural import operand

__all__ = ["schur", "schur_p"]


def _schur_impl(x, *, compute_schur_vectors, select_callable, sort_eig_vals):
    if sort_eig_vals:
        raise NotImplementedError(
            "The sort feature of LAPACK's gees routine is not implemented. Call "
            "lax.linalg.schur with sort_eig_vals=False and reorder the eigenvalues "
            "of the result yourself."
        )
    return kernels.schur(x, compute_schur_vectors)


def _schur_abstract(x, *, compute_schur_vectors, select_callable, sort_eig_vals):
    _check_rank("schur", 0, x.shape)
    _check_inexact("schur", 0, x.dtype)
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(
            f"The input to schur must be a square matrix. Got shape {x.shape[-2:]}."
        )
    out = ShapedArray(x.shape, x.dtype)
    return [out, out] if compute_schur_vectors else [out], no_effects


def _schur_jvp(primals, tangents, **params):
    raise NotImplementedError(
        "Differentiation rule for 'schur' not implemented (as in JAX): the Schur "
        "form is not unique, so it has no derivative. Differentiate a function of "
        "the matrix that does not go through the Schur decomposition (e.g. "
        "eigenvalues through jnp.linalg.eigvals) instead."
    )


schur_p = Primitive("schur", multiple_results=True)
impl_rules[schur_p] = _schur_impl
abstract_eval_rules[schur_p] = _schur_abstract
ad.jvp_rules[schur_p] = _schur_jvp
batching.batch_rules[schur_p] = _move_front_rule(schur_p)


def schur(x, *, compute_schur_vectors=True, sort_eig_vals=False, select_callable=None):
    """Schur decomposition of square matrices (..., n, n): `[t, q]` with
    `x = q t q^H`, or `[t]` when `compute_schur_vectors=False`."""
    return list(
        schur_p.bind(
            operand(x),
            compute_schur_vectors=bool(compute_schur_vectors),
            select_callable=select_callable,
            sort_eig_vals=bool(sort_eig_vals),
        )
    )
