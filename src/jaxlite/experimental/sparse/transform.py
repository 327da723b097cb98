"""`sparsify`: run a function written with `jax.numpy` on sparse arguments.

The function is traced to a jaxpr on abstract values of its arguments' dense shapes,
and the jaxpr is then interpreted (`eval_sparse`) over an environment of buffers
(`SparsifyEnv`): each value is a `SparsifyValue`, a shape plus references to the
buffers holding its data (and indices, for a sparse value). An equation whose inputs
are all dense is bound as usual; one with a sparse input goes to the rule its
primitive has in `sparse_rules_bcoo` (or `sparse_rules_bcsr`), which computes the
result with the sparse operations (`bcoo_dot_general`, `bcoo_multiply_dense`,
`bcoo_reduce_sum`, ...) and may return a sparse or a dense value. Values that share
indices (`M * 2 + M`) share the buffer reference, so elementwise operations between
them stay sparse. A primitive with no sparse rule raises a NotImplementedError
naming it, and says when the result would be dense (use `sparse.todense`).

Calls (`jit`, `checkpoint`, `custom_jvp`/`custom_vjp` functions) with sparse inputs
are interpreted inline (their custom derivative rules are not applied to the sparse
operands). Unlike JAX, `use_tracer=True` is accepted but runs the same interpreter.

The arithmetic operators, `sum`, `reshape`, `astype` and indexing of BCOO (and `@`,
indexing of BCSR) are defined at the end of this module as `sparsify` of the
corresponding `jax.numpy` function, as in JAX.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np

import jaxlite.numpy as jnp
from jaxlite import lax, tree_util
from jaxlite.ad_checkpoint import remat_p
from jaxlite.api_util import trace_flat
from jaxlite.core import Literal, ShapedArray, get_aval
from jaxlite.dispatch import jit_p
from jaxlite.experimental.sparse.api import todense_p
from jaxlite.experimental.sparse.bcoo import BCOO, bcoo_transpose
from jaxlite.experimental.sparse.bcoo_ops import (
    bcoo_broadcast_in_dim,
    bcoo_concatenate,
    bcoo_dot_general,
    bcoo_multiply_dense,
    bcoo_multiply_sparse,
    bcoo_reduce_sum,
    bcoo_reshape,
    bcoo_rev,
    bcoo_slice,
    bcoo_squeeze,
)
from jaxlite.experimental.sparse.bcsr import (
    BCSR,
    bcsr_broadcast_in_dim,
    bcsr_concatenate,
    bcsr_dot_general,
)
from jaxlite.lax.custom_derivatives import custom_jvp_call_p, custom_vjp_call_p

__all__ = ["SparseTracer", "SparsifyEnv", "SparsifyValue", "sparsify"]

sparse_rules_bcoo: dict = {}
sparse_rules_bcsr: dict = {}

_zero_preserving_linear_unary_primitives = [
    lax.conj_p,
    lax.copy_p,
    lax.imag_p,
    lax.neg_p,
    lax.real_p,
]

_zero_preserving_unary_primitives = [
    lax.abs_p,
    lax.asin_p,
    lax.asinh_p,
    lax.atan_p,
    lax.atanh_p,
    lax.bessel_i1e_p,
    lax.expm1_p,
    lax.log1p_p,
    lax.sign_p,
    lax.sin_p,
    lax.sinh_p,
    lax.sqrt_p,
    lax.square_p,
    lax.tan_p,
    lax.tanh_p,
    lax.convert_element_type_p,
]

_densifying_primitives = [
    lax.acos_p,
    lax.acosh_p,
    lax.bessel_i0e_p,
    lax.cos_p,
    lax.cosh_p,
    lax.eq_p,
    lax.exp_p,
    lax.ge_p,
    lax.gt_p,
    lax.le_p,
    lax.lt_p,
    lax.log_p,
    lax.ne_p,
    lax.xor_p,
]

# Calls whose body is a ClosedJaxpr under `jaxpr` or `call_jaxpr`: interpreted inline.
_CALL_PRIMITIVES = {jit_p, remat_p, custom_jvp_call_p, custom_vjp_call_p}


def _raise_unimplemented_primitive(primitive):
    if primitive in _densifying_primitives:
        raise NotImplementedError(
            f"sparse rule for {primitive} is not implemented because it would result "
            "in dense output. If this is your intent, use sparse.todense() to convert "
            "your arguments to dense matrices."
        )
    raise NotImplementedError(f"sparse rule for {primitive} is not implemented.")


# --------------------------------------------------------------------------------------
# The environment of buffers and the values that point into it


class SparsifyEnv:
    """The buffers (arrays or tracers) that one or more `SparsifyValue`s refer to."""

    def __init__(self, bufs=()):
        self._buffers = list(bufs)

    def _push(self, arr):
        if not isinstance(arr, (np.generic, np.ndarray)) or np.ndim(arr):
            arr = jnp.asarray(arr)
        self._buffers.append(arr)
        return len(self._buffers) - 1

    def _buffer(self, ref, name):
        if ref is None:
            raise RuntimeError(
                f"Internal: requested {name} from spvalue with {name}_ref=None"
            )
        return self._buffers[ref]

    def data(self, spvalue):
        """The data buffer of a value."""
        return self._buffer(spvalue.data_ref, "data")

    def indices(self, spvalue):
        """The indices buffer of a sparse value."""
        return self._buffer(spvalue.indices_ref, "indices")

    def indptr(self, spvalue):
        """The row-pointer buffer of a BCSR value."""
        return self._buffer(spvalue.indptr_ref, "indptr")

    def dense(self, data):
        """A new dense value."""
        return SparsifyValue(np.shape(data), self._push(data))

    def sparse(
        self,
        shape,
        data=None,
        indices=None,
        indptr=None,
        *,
        data_ref=None,
        indices_ref=None,
        indptr_ref=None,
        indices_sorted=False,
        unique_indices=False,
    ):
        """A new sparse value: given buffers are added, references reused."""
        if data is not None:
            data_ref = self._push(data)
        if indices is not None:
            indices_ref = self._push(indices)
        if indptr is not None:
            indptr_ref = self._push(indptr)
        assert data_ref is not None and indices_ref is not None
        return SparsifyValue(
            tuple(shape),
            data_ref,
            indices_ref,
            indptr_ref,
            indices_sorted=indices_sorted,
            unique_indices=unique_indices,
        )


class SparsifyValue(NamedTuple):
    """A value of `eval_sparse`: a shape and references into the environment."""

    shape: tuple
    data_ref: int | None
    indices_ref: int | None = None
    indptr_ref: int | None = None
    indices_sorted: bool | None = False
    unique_indices: bool | None = False

    @property
    def ndim(self):
        return len(self.shape)

    def is_sparse(self):
        return self.indices_ref is not None

    def is_dense(self):
        return self.indices_ref is None

    def is_bcoo(self):
        return self.is_sparse() and self.indptr_ref is None

    def is_bcsr(self):
        return self.is_sparse() and self.indptr_ref is not None


def _is_sparse_obj(x):
    return isinstance(x, (BCOO, BCSR))


def _is_spvalue(x):
    return isinstance(x, SparsifyValue)


def arrays_to_spvalues(spenv, args):
    """A pytree of (sparse) arrays as a pytree of values in `spenv`."""

    def array_to_spvalue(arg):
        if isinstance(arg, (BCOO, BCSR)):  # buffers: data, indices (and indptr)
            return spenv.sparse(
                arg.shape,
                *arg._bufs,
                indices_sorted=arg.indices_sorted,
                unique_indices=arg.unique_indices,
            )
        return spenv.dense(arg)

    return tree_util.tree_map(array_to_spvalue, args, is_leaf=_is_sparse_obj)


def spvalues_to_arrays(spenv, spvalues):
    """A pytree of values in `spenv` as a pytree of (sparse) arrays."""

    def spvalue_to_array(spvalue):
        if spvalue.is_dense():
            return spenv.data(spvalue)
        cls, bufs = BCOO, (spenv.data(spvalue), spenv.indices(spvalue))
        if spvalue.is_bcsr():
            cls, bufs = BCSR, (*bufs, spenv.indptr(spvalue))
        return cls(
            bufs,
            shape=spvalue.shape,
            indices_sorted=spvalue.indices_sorted,
            unique_indices=spvalue.unique_indices,
        )

    return tree_util.tree_map(spvalue_to_array, spvalues, is_leaf=_is_spvalue)


def spvalues_to_avals(spenv, spvalues):
    """The abstract values (dense shapes) of a pytree of values."""

    def spvalue_to_aval(spvalue):
        aval = get_aval(spenv.data(spvalue))
        return ShapedArray(spvalue.shape, aval.dtype, aval.weak_type)

    return tree_util.tree_map(spvalue_to_aval, spvalues, is_leaf=_is_spvalue)


class SparseTracer:
    """JAX's tracer-based `sparsify` is not implemented: jaxlite interprets the
    traced jaxpr (`eval_sparse`). Kept so that `isinstance` checks import."""


# --------------------------------------------------------------------------------------
# The interpreter


def _call_body(eqn):
    params = eqn.params
    return params.get("jaxpr", params.get("call_jaxpr"))


def eval_sparse(jaxpr, consts, spvalues, spenv):
    """Interpret `jaxpr` on `spvalues` (its constants are dense)."""
    env = {}

    def read(var):
        if type(var) is Literal:
            return spenv.dense(var.val)
        return env[var]

    for v, c in zip(jaxpr.constvars, consts):
        env[v] = spenv.dense(c)
    for v, val in zip(jaxpr.invars, spvalues, strict=True):
        env[v] = val
    for eqn in jaxpr.eqns:
        prim = eqn.primitive
        invals = [read(v) for v in eqn.invars]
        if any(v.is_sparse() for v in invals) and prim in _CALL_PRIMITIVES:
            body = _call_body(eqn)
            out = eval_sparse(body.jaxpr, body.consts, invals, spenv)
        elif any(v.is_bcsr() for v in invals):
            if prim not in sparse_rules_bcsr:
                _raise_unimplemented_primitive(prim)
            out = sparse_rules_bcsr[prim](spenv, *invals, **eqn.params)
        elif any(v.is_bcoo() for v in invals):
            if prim not in sparse_rules_bcoo:
                _raise_unimplemented_primitive(prim)
            out = sparse_rules_bcoo[prim](spenv, *invals, **eqn.params)
        else:
            outs = prim.bind(*(spenv.data(v) for v in invals), **eqn.params)
            outs = outs if prim.multiple_results else [outs]
            out = [spenv.dense(o) for o in outs]
        for v, val in zip(eqn.outvars, out, strict=True):
            env[v] = val
    return [read(v) for v in jaxpr.outvars]


def sparsify_raw(f):
    """`f` as a function of `(spenv, *spvalues, **params) -> (out spvalues, tree)`."""

    def wrapped(spenv, *spvalues, **params):
        flat, in_tree = tree_util.tree_flatten(spvalues, is_leaf=_is_spvalue)
        avals = spvalues_to_avals(spenv, flat)
        fun = functools.partial(f, **params) if params else f
        closed, out_tree = trace_flat(fun, in_tree, avals)
        result = eval_sparse(closed.jaxpr, closed.consts, flat, spenv)
        return result, out_tree

    return wrapped


def sparsify(f, use_tracer=False):
    """`f` made to accept BCOO and BCSR arrays where it takes arrays.

    >>> @sparse.sparsify
    ... def f(M, v):
    ...   return 2 * M.T @ v

    Operations on sparse values stay sparse where a sparse rule exists (products,
    sums, transposes, reshapes, slices, zero-preserving elementwise functions);
    sparse times dense gives sparse, a matrix product with a dense operand gives
    dense, as in JAX.
    """
    del use_tracer  # jaxlite always uses the jaxpr interpreter
    f_raw = sparsify_raw(f)

    @functools.wraps(f)
    def wrapped(*args, **params):
        spenv = SparsifyEnv()
        spvalues = arrays_to_spvalues(spenv, args)
        out, out_tree = f_raw(spenv, *spvalues, **params)
        return tree_util.tree_unflatten(out_tree, spvalues_to_arrays(spenv, out))

    return wrapped


# --------------------------------------------------------------------------------------
# Sparse rules


def _with_data(spenv, spvalue, data, unique_indices=None):
    """A sparse value with new `data` on the index buffers of `spvalue` (shared, not
    copied), keeping what is known of them (`unique_indices` overrides)."""
    if unique_indices is None:
        unique_indices = spvalue.unique_indices
    return spenv.sparse(
        spvalue.shape,
        data,
        indices_ref=spvalue.indices_ref,
        indptr_ref=spvalue.indptr_ref,
        indices_sorted=spvalue.indices_sorted,
        unique_indices=unique_indices,
    )


def _ensure_unique_indices(spenv, spvalue):
    """`spvalue` with duplicate indices summed (same nse)."""
    if spvalue.is_dense() or spvalue.unique_indices:
        return spvalue
    arr = spvalues_to_arrays(spenv, spvalue)
    arr = arr.sum_duplicates(nse=arr.nse, remove_zeros=False)
    return arrays_to_spvalues(spenv, arr)


def _zero_preserving_unary_op(prim, linear):
    """f(0) = 0: apply f to the stored data (after summing duplicates unless f is
    linear, since f(a + b) != f(a) + f(b))."""

    def rule(spenv, spvalue, **params):
        if not linear:
            spvalue = _ensure_unique_indices(spenv, spvalue)
        out = prim.bind(spenv.data(spvalue), **params)
        return (_with_data(spenv, spvalue, out),)

    return rule


for _prim in _zero_preserving_unary_primitives:
    sparse_rules_bcoo[_prim] = _zero_preserving_unary_op(_prim, linear=False)
    sparse_rules_bcsr[_prim] = _zero_preserving_unary_op(_prim, linear=False)
for _prim in _zero_preserving_linear_unary_primitives:
    sparse_rules_bcoo[_prim] = _zero_preserving_unary_op(_prim, linear=True)
    sparse_rules_bcsr[_prim] = _zero_preserving_unary_op(_prim, linear=True)


def _integer_pow_sparse(spenv, spvalue, *, y):
    if y <= 0:
        raise NotImplementedError(
            f"sparse rule for {lax.integer_pow_p} with non-positive exponent {y} is not "
            "implemented because it would result in dense output. If this is your "
            "intent, use sparse.todense() to convert your argument to a dense array."
        )
    return _zero_preserving_unary_op(lax.integer_pow_p, False)(spenv, spvalue, y=y)


sparse_rules_bcoo[lax.integer_pow_p] = _integer_pow_sparse
sparse_rules_bcsr[lax.integer_pow_p] = _integer_pow_sparse


def _standard_sparse_rule(prim, sparse_op):
    """A rule that calls `sparse_op` on the (sparse) arrays themselves."""

    def rule(spenv, *spvalues, **params):
        result = sparse_op(*spvalues_to_arrays(spenv, spvalues), **params)
        return arrays_to_spvalues(spenv, result if prim.multiple_results else [result])

    return rule


def _dot_general(op):
    def call(
        lhs, rhs, *, dimension_numbers, precision=None, preferred_element_type=None, **_
    ):
        return op(
            lhs,
            rhs,
            dimension_numbers=dimension_numbers,
            precision=precision,
            preferred_element_type=preferred_element_type,
        )

    return call


def _reshape(mat, *, new_sizes, dimensions=None, **_):
    return bcoo_reshape(mat, new_sizes=new_sizes, dimensions=dimensions)


def _broadcast_in_dim(op):
    def call(mat, *, shape, broadcast_dimensions, **_):
        return op(mat, shape=shape, broadcast_dimensions=broadcast_dimensions)

    return call


def _concatenate(op):
    def call(*operands, dimension):
        operands = [
            x if isinstance(x, (BCOO, BCSR)) else _fromdense_like(x, operands)
            for x in operands
        ]
        return op(operands, dimension=dimension)

    return call


def _fromdense_like(x, operands):
    """A dense operand of a sparse concatenation, made sparse like the others."""
    template = next(op for op in operands if isinstance(op, (BCOO, BCSR)))
    mat = BCOO.fromdense(x, n_batch=template.n_batch, n_dense=template.n_dense)
    return mat if isinstance(template, BCOO) else BCSR.from_bcoo(mat)


_BCOO_STANDARD_PRIMITIVES = {
    lax.broadcast_in_dim_p: _broadcast_in_dim(bcoo_broadcast_in_dim),
    lax.concatenate_p: _concatenate(bcoo_concatenate),
    lax.dot_general_p: _dot_general(bcoo_dot_general),
    lax.reshape_p: _reshape,
    lax.rev_p: bcoo_rev,
    lax.slice_p: bcoo_slice,
    lax.squeeze_p: bcoo_squeeze,
}
for _prim, _op in _BCOO_STANDARD_PRIMITIVES.items():
    sparse_rules_bcoo[_prim] = _standard_sparse_rule(_prim, _op)

_BCSR_STANDARD_PRIMITIVES = {
    lax.dot_general_p: _dot_general(bcsr_dot_general),
    lax.broadcast_in_dim_p: _broadcast_in_dim(bcsr_broadcast_in_dim),
    lax.concatenate_p: _concatenate(bcsr_concatenate),
}
for _prim, _op in _BCSR_STANDARD_PRIMITIVES.items():
    sparse_rules_bcsr[_prim] = _standard_sparse_rule(_prim, _op)


def _stack_sparse(spenv, *spvalues, axis, broadcast_in_dim, concatenate):
    arrays = spvalues_to_arrays(spenv, spvalues)
    base_shape = arrays[0].shape
    new_shape = (*base_shape[:axis], 1, *base_shape[axis:])
    dims = [d if d < axis else d + 1 for d in range(len(base_shape))]
    expanded = [
        broadcast_in_dim(x, shape=new_shape, broadcast_dimensions=dims) for x in arrays
    ]
    return arrays_to_spvalues(spenv, [concatenate(expanded, dimension=axis)])


sparse_rules_bcoo[lax.stack_p] = functools.partial(
    _stack_sparse,
    broadcast_in_dim=bcoo_broadcast_in_dim,
    concatenate=bcoo_concatenate,
)
sparse_rules_bcsr[lax.stack_p] = functools.partial(
    _stack_sparse,
    broadcast_in_dim=bcsr_broadcast_in_dim,
    concatenate=bcsr_concatenate,
)


def _transpose_sparse(spenv, spvalue, *, permutation):
    permutation = tuple(permutation)
    mat = spvalues_to_arrays(spenv, spvalue)
    out = bcoo_transpose(mat, permutation=permutation)
    n_batch, n_sparse = mat.n_batch, mat.n_sparse
    batch_same = permutation[:n_batch] == tuple(range(n_batch))
    sparse_same = permutation[n_batch : n_batch + n_sparse] == tuple(
        range(n_batch, n_batch + n_sparse)
    )
    dense_same = permutation[n_batch + n_sparse :] == tuple(
        range(n_batch + n_sparse, mat.ndim)
    )
    # Buffers the permutation leaves alone keep their references (so that values
    # sharing indices still do).
    kwds = {}
    if batch_same and dense_same:
        kwds["data_ref"] = spvalue.data_ref
    else:
        kwds["data"] = out.data
    if batch_same and sparse_same:
        kwds["indices_ref"] = spvalue.indices_ref
    else:
        kwds["indices"] = out.indices
    return (
        spenv.sparse(
            out.shape,
            indices_sorted=out.indices_sorted,
            unique_indices=out.unique_indices,
            **kwds,
        ),
    )


sparse_rules_bcoo[lax.transpose_p] = _transpose_sparse


def _add_sparse(spenv, X, Y):
    out_shape = tuple(jnp.broadcast_shapes(X.shape, Y.shape))
    if X.is_sparse() and Y.is_sparse():
        if X.shape != Y.shape:
            raise NotImplementedError(
                "Addition between sparse matrices of different shapes."
            )
        if X.indices_ref == Y.indices_ref:
            out = lax.add(spenv.data(X), spenv.data(Y))
            return (_with_data(spenv, X, out),)
        x_indices, y_indices = spenv.indices(X), spenv.indices(Y)
        x_data, y_data = spenv.data(X), spenv.data(Y)
        if x_indices.ndim != y_indices.ndim or x_data.ndim != y_data.ndim:
            raise NotImplementedError(
                "Addition between sparse matrices with different batch/dense dimensions."
            )
        axis = x_indices.ndim - 2
        indices = lax.concatenate([x_indices, y_indices], axis)
        data = lax.concatenate([x_data, y_data], axis)
        return (spenv.sparse(X.shape, data, indices),)
    if Y.is_sparse():
        X, Y = Y, X
    if Y.shape != out_shape:
        raise NotImplementedError(
            "Addition between a sparse array X and a dense array Y is not implemented "
            "when the output shape is larger than Y.shape. This is to prevent silent "
            "densification of a large sparse array. If this is your intent, you can "
            "explicitly cast the sparse array to a dense matrix."
        )
    x, y = spvalues_to_arrays(spenv, (X, Y))
    return (spenv.dense(x.todense() + y),)


sparse_rules_bcoo[lax.add_p] = _add_sparse


def _sub_sparse(spenv, X, Y):
    if X.is_sparse() and Y.is_sparse():
        return _add_sparse(spenv, X, *sparse_rules_bcoo[lax.neg_p](spenv, Y))
    raise NotImplementedError("Subtraction between sparse and dense array.")


sparse_rules_bcoo[lax.sub_p] = _sub_sparse


def _mul_sparse(spenv, X, Y):
    if X.is_sparse() and Y.is_sparse():
        if X.indices_ref == Y.indices_ref and X.unique_indices:
            out = lax.mul(spenv.data(X), spenv.data(Y))
            return (_with_data(spenv, X, out, unique_indices=True),)
        x, y = spvalues_to_arrays(spenv, (X, Y))
        mat = bcoo_multiply_sparse(x, y)
        return (spenv.sparse(mat.shape, mat.data, mat.indices),)
    if Y.is_sparse():
        X, Y = Y, X
    out = bcoo_multiply_dense(spvalues_to_arrays(spenv, X), spenv.data(Y))
    return (_with_data(spenv, X, out),)


sparse_rules_bcoo[lax.mul_p] = _mul_sparse


def _div_sparse(spenv, X, Y):
    if Y.is_sparse():
        raise NotImplementedError(
            "Division by a sparse array is not implemented because it would result in "
            "dense output. If this is your intent, use sparse.todense() to convert your "
            "arguments to a dense array."
        )
    out = bcoo_multiply_dense(spvalues_to_arrays(spenv, X), 1.0 / spenv.data(Y))
    return (_with_data(spenv, X, out),)


sparse_rules_bcoo[lax.div_p] = _div_sparse


def _reduce_sum_sparse(spenv, spvalue, *, axes, **_):
    mat = bcoo_reduce_sum(spvalues_to_arrays(spenv, spvalue), axes=axes)
    if mat.shape == ():
        return (spenv.dense(mat.data.sum()),)
    return (spenv.sparse(mat.shape, mat.data, mat.indices),)


sparse_rules_bcoo[lax.reduce_sum_p] = _reduce_sum_sparse


def _todense_sparse_rule(spenv, spvalue):
    return (spenv.dense(spvalues_to_arrays(spenv, spvalue).todense()),)


sparse_rules_bcoo[todense_p] = _todense_sparse_rule
sparse_rules_bcsr[todense_p] = _todense_sparse_rule


# --------------------------------------------------------------------------------------
# BCOO and BCSR methods, through sparsify


def _sum(self, *args, **kwargs):
    """Sum of the array (over `axis`), sparse unless the result is a scalar."""
    return sparsify(lambda x: x.sum(*args, **kwargs))(self)


def _reshape_method(self, *args, **kwargs):
    """The array with a new shape (batch, sparse and dense dims must not mix)."""
    return sparsify(lambda x: x.reshape(*args, **kwargs))(self)


def _astype(self, *args, **kwargs):
    """The array cast to a dtype."""
    return sparsify(lambda x: x.astype(*args, **kwargs))(self)


def _rewriting_take(arr, idx):
    """`arr[idx]` for static indices (integers, slices, None, Ellipsis)."""
    result = sparsify(lambda x: x[idx])(arr)
    if isinstance(arr, BCOO) and not isinstance(result, BCOO) and np.size(result) == 0:
        result = BCOO.fromdense(result)
    return result


def _sparse_iter(arr):
    return iter(arr[i] for i in range(arr.shape[0]))


def _swap_args(f):
    return lambda a, b: f(b, a)


def _pow(x, y):
    return sparsify(lambda x: jnp.power(x, y))(x)


_bcoo_methods: dict[str, Any] = {
    "astype": _astype,
    "reshape": _reshape_method,
    "sum": _sum,
    "__abs__": sparsify(jnp.abs),
    "__neg__": sparsify(jnp.negative),
    "__pos__": sparsify(jnp.positive),
    "__matmul__": sparsify(jnp.matmul),
    "__rmatmul__": sparsify(_swap_args(jnp.matmul)),
    "__mul__": sparsify(jnp.multiply),
    "__rmul__": sparsify(_swap_args(jnp.multiply)),
    "__truediv__": sparsify(jnp.divide),
    "__rtruediv__": sparsify(_swap_args(jnp.divide)),
    "__add__": sparsify(jnp.add),
    "__radd__": sparsify(_swap_args(jnp.add)),
    "__sub__": sparsify(jnp.subtract),
    "__rsub__": sparsify(_swap_args(jnp.subtract)),
    "__pow__": _pow,
    "__rpow__": sparsify(_swap_args(jnp.power)),
    "__getitem__": _rewriting_take,
    "__iter__": _sparse_iter,
    "__gt__": sparsify(jnp.greater),
    "__ge__": sparsify(jnp.greater_equal),
    "__lt__": sparsify(jnp.less),
    "__le__": sparsify(jnp.less_equal),
    "__eq__": sparsify(jnp.equal),
    "__ne__": sparsify(jnp.not_equal),
}
for _name, _impl in _bcoo_methods.items():
    setattr(BCOO, _name, _impl)

_bcsr_methods: dict[str, Any] = {
    "__matmul__": sparsify(jnp.matmul),
    "__rmatmul__": sparsify(_swap_args(jnp.matmul)),
    "__getitem__": _rewriting_take,
}
for _name, _impl in _bcsr_methods.items():
    setattr(BCSR, _name, _impl)
