"""Products of jax.numpy: dot, matmul (`@`), vdot, inner, outer, tensordot, einsum, trace,
kron, vecdot, matvec and vecmat.

Every contraction is one `lax.dot_general`, as in JAX, so a jaxpr of `x @ y` reads the same
in both libraries. Operands keep their dtypes and the promoted dtype is passed as
`preferred_element_type` (an `int8 @ float32` product is not preceded by a cast); only
weakly typed operands such as Python scalars are converted first. `matmul` maps NumPy's
broadcasting of batch axes onto dot_general: equal batch axes become batch dimensions, an
axis of size 1 is squeezed so that the other operand's axis becomes a free dimension, and
one transpose restores NumPy's output order.

`einsum` parses its subscripts (with `...` and the implicit output), takes diagonals and
sums axes that only one operand has, then contracts pairs of operands with dot_general in
an order chosen by NumPy's greedy path search.
"""

from __future__ import annotations

import string
from collections import Counter

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.core import Array, Tracer, get_aval
from jaxlite.numpy.creation import asarray
from jaxlite.numpy.ufuncs import check_arraylike, conjugate, multiply, promote_dtypes
from jaxlite.util import canonicalize_axis

__all__ = [
    "dot",
    "vdot",
    "matmul",
    "inner",
    "outer",
    "tensordot",
    "einsum",
    "einsum_path",
    "trace",
    "kron",
    "vecdot",
    "matvec",
    "vecmat",
]


def _dot_operands(fun_name, operands, preferred_element_type):
    """Arrays for a contraction and the dtype to ask dot_general for."""
    if preferred_element_type is None and len(operands) == 2:
        a, b = operands
        if (
            isinstance(a, _VALUES)
            and isinstance(b, _VALUES)
            and a.dtype == b.dtype
            and not a.weak_type
            and not b.weak_type
        ):
            return [a, b], a.dtype  # the common case: nothing to convert
    check_arraylike(fun_name, *operands)
    dtype, weak = dtypes.result_type(*operands, return_weak_type_flag=True)
    out = []
    for x in operands:
        x = asarray(x)
        if (weak and preferred_element_type is None) or (
            dtypes.is_weakly_typed(x) and x.dtype != dtype
        ):
            # A weak result (every operand weak but strong integers against a weak
            # float, as JAX types it): all operands in the weak result dtype.
            x = lax.convert_element_type(x, dtype, weak)
        out.append(x)
    if preferred_element_type is None:
        return out, dtype
    return out, dtypes.check_user_dtype_supported(preferred_element_type, fun_name)


_VALUES = (Array, Tracer)


def _ravel(x):
    return lax.reshape(x, (int(np.prod(np.shape(x), dtype=np.int64)),))


def _is_complex(x):
    return dtypes.issubdtype(x.dtype, np.complexfloating)


def dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """NumPy's dot: a sum over the last axis of `a` and the second-to-last of `b`."""
    (a, b), dtype = _dot_operands("dot", (a, b), preferred_element_type)
    na, nb = a.ndim, b.ndim
    if na == 0 or nb == 0:
        contract = ((), ())
    elif nb == 1:
        contract = ((na - 1,), (0,))
    else:
        contract = ((na - 1,), (nb - 2,))
    return lax.dot_general(a, b, (contract, ((), ())), precision, dtype)


def vdot(a, b, *, precision=None, preferred_element_type=None):
    """The dot product of the flattened arrays, conjugating `a` when it is complex."""
    check_arraylike("vdot", a, b)
    a = asarray(a)
    if _is_complex(a):
        a = conjugate(a)
    return dot(
        _ravel(a),
        _ravel(asarray(b)),
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def inner(a, b, *, precision=None, preferred_element_type=None):
    """A sum over the last axes of `a` and `b` (a product when either is a scalar)."""
    (a, b), dtype = _dot_operands("inner", (a, b), preferred_element_type)
    if a.ndim == 0 or b.ndim == 0:
        contract = ((), ())
    else:
        contract = ((a.ndim - 1,), (b.ndim - 1,))
    return lax.dot_general(a, b, (contract, ((), ())), precision, dtype)


def outer(a, b, out=None):
    """`ravel(a)[:, None] * ravel(b)[None, :]`."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.outer is not supported.")
    check_arraylike("outer", a, b)
    a = lax.expand_dims(_ravel(asarray(a)), (1,))
    b = lax.expand_dims(_ravel(asarray(b)), (0,))
    return multiply(a, b)


# --------------------------------------------------------------------------------------
# matmul


def matmul(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """Matrix product with NumPy's rules: 1-D operands are vectors, leading axes are
    batch axes that broadcast against each other."""
    (a, b), dtype = _dot_operands("matmul", (a, b), preferred_element_type)
    for i, x in enumerate((a, b)):
        if x.ndim == 0:
            raise ValueError(
                f"matmul input operand {i} must have ndim at least 1, but it has ndim 0"
            )
    if a.ndim <= 2 and b.ndim <= 2:  # vectors and matrices: NumPy's layout already
        dims = (((a.ndim - 1,), (0,)), ((), ()))
        return lax.dot_general(a, b, dims, precision, dtype)
    if a.ndim == b.ndim and a.shape[:-2] == b.shape[:-2] and 1 not in a.shape[:-2]:
        batch = tuple(range(a.ndim - 2))
        dims = (((a.ndim - 1,), (b.ndim - 2,)), (batch, batch))
        return lax.dot_general(a, b, dims, precision, dtype)
    a_batch, b_batch = a.shape[:-2], b.shape[:-2]
    nbatch = max(len(a_batch), len(b_batch))
    a_squeeze, b_squeeze, batch_pairs = [], [], []
    a_free, b_free = [], []  # batch axes (original numbering) that stay free
    sources = []  # per output batch axis: ("batch", k), ("a", axis), ("b", axis), ("one",)
    for i in range(nbatch):
        ia = i - (nbatch - len(a_batch))
        ib = i - (nbatch - len(b_batch))
        sa = a_batch[ia] if ia >= 0 else None
        sb = b_batch[ib] if ib >= 0 else None
        if sa is not None and sb is not None:
            if sa == sb == 1:
                a_squeeze.append(ia)
                b_squeeze.append(ib)
                sources.append(("one",))
            elif sa == sb:
                sources.append(("batch", len(batch_pairs)))
                batch_pairs.append((ia, ib))
            elif sa == 1:
                a_squeeze.append(ia)
                b_free.append(ib)
                sources.append(("b", ib))
            elif sb == 1:
                b_squeeze.append(ib)
                a_free.append(ia)
                sources.append(("a", ia))
            else:
                raise ValueError(
                    "Incompatible types for matmul arguments: "
                    f"{get_aval(a).str_short(False)} and {get_aval(b).str_short(False)}"
                )
        elif sa is not None:
            a_free.append(ia)
            sources.append(("a", ia))
        else:
            b_free.append(ib)
            sources.append(("b", ib))

    a_keep = [d for d in range(a.ndim) if d not in a_squeeze]
    b_keep = [d for d in range(b.ndim) if d not in b_squeeze]
    a = lax.squeeze(a, a_squeeze)
    b = lax.squeeze(b, b_squeeze)
    a_contract = a_keep.index(a.ndim + len(a_squeeze) - 1)
    b_row = (
        len(b_keep) + len(b_squeeze) - (2 if len(b_keep) + len(b_squeeze) >= 2 else 1)
    )
    b_contract = b_keep.index(b_row)
    a_batch_dims = [a_keep.index(ia) for ia, _ in batch_pairs]
    b_batch_dims = [b_keep.index(ib) for _, ib in batch_pairs]
    dims = (([a_contract], [b_contract]), (a_batch_dims, b_batch_dims))
    out = lax.dot_general(a, b, dims, precision, dtype)

    # dot_general's output axes: batch, free axes of a (in order), free axes of b.
    a_out = [d for d in range(a.ndim) if d not in a_batch_dims and d != a_contract]
    b_out = [d for d in range(b.ndim) if d not in b_batch_dims and d != b_contract]
    nb = len(batch_pairs)
    position = {}
    for ia in a_free:
        position[("a", ia)] = nb + a_out.index(a_keep.index(ia))
    for ib in b_free:
        position[("b", ib)] = nb + len(a_out) + b_out.index(b_keep.index(ib))
    perm = []
    ones = []
    for i, src in enumerate(sources):
        if src[0] == "one":
            ones.append(i)
        elif src[0] == "batch":
            perm.append(src[1])
        else:
            perm.append(position[src])
    if len(a_keep) >= 2:  # the row axis of a
        perm.append(nb + len(a_out) - 1)
    if len(b_keep) + len(b_squeeze) >= 2:  # the column axis of b
        perm.append(nb + len(a_out) + len(b_out) - 1)
    if perm != list(range(len(perm))):
        out = lax.transpose(out, perm)
    if ones:
        out = lax.expand_dims(out, ones)
    return out


def _check_core_dims(fun_name, x1, x2):
    """The checks (and errors) of JAX's `vectorize` over matvec's or vecmat's
    signature: enough dimensions, and one size per core dimension."""
    if fun_name == "matvec":
        signature, cores = "(n,m),(m)->(n)", (("n", "m"), ("m",))
    else:
        signature, cores = "(n),(n,m)->(m)", (("n",), ("n", "m"))
    suffix = f" on vectorized function with excluded=frozenset() and {signature=}"
    sizes = {}
    for x, core in zip((x1, x2), cores):
        if x.ndim < len(core):
            raise ValueError(
                f"input with shape {x.shape} does not have enough dimensions for all "
                f"core dimensions {core}{suffix}"
            )
        for name, size in zip(core, x.shape[x.ndim - len(core) :]):
            if sizes.setdefault(name, size) != size:
                raise ValueError(
                    f"inconsistent size for core dimension {name!r}: {size} vs "
                    f"{sizes[name]}{suffix}"
                )


def matvec(x1, x2, /):
    """Matrix-vector products over broadcast batch axes: `(..., m, n), (..., n)`."""
    check_arraylike("matvec", x1, x2)
    x1, x2 = asarray(x1), asarray(x2)
    _check_core_dims("matvec", x1, x2)
    out = matmul(x1, lax.expand_dims(x2, (x2.ndim,)))
    return lax.squeeze(out, (out.ndim - 1,))


def vecmat(x1, x2, /):
    """Vector-matrix products over broadcast batch axes: `(..., m), (..., m, n)`,
    conjugating `x1`."""
    check_arraylike("vecmat", x1, x2)
    x1, x2 = asarray(x1), asarray(x2)
    _check_core_dims("vecmat", x1, x2)
    if _is_complex(x1):
        x1 = conjugate(x1)
    out = matmul(lax.expand_dims(x1, (x1.ndim - 1,)), x2)
    return lax.squeeze(out, (out.ndim - 2,))


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """`sum(conj(x1) * x2, axis)` with broadcasting of the other axes."""
    (x1, x2), dtype = _dot_operands("vecdot", (x1, x2), preferred_element_type)
    ax1 = canonicalize_axis(axis, x1.ndim)
    ax2 = canonicalize_axis(axis, x2.ndim)
    if x1.shape[ax1] != x2.shape[ax2]:
        raise ValueError(
            f"vecdot requires x1 and x2 to have the same size along axis {axis}, got "
            f"shapes {x1.shape} and {x2.shape}"
        )
    if _is_complex(x1):
        x1 = conjugate(x1)
    x1 = lax.transpose(x1, [d for d in range(x1.ndim) if d != ax1] + [ax1])
    x2 = lax.transpose(x2, [d for d in range(x2.ndim) if d != ax2] + [ax2])
    try:
        batch = np.broadcast_shapes(x1.shape[:-1], x2.shape[:-1])
    except ValueError:
        raise ValueError(
            f"vecdot got incompatible shapes for broadcasting: {x1.shape} and {x2.shape}"
        ) from None
    n = len(batch)
    x1 = lax.broadcast_in_dim(x1, (*batch, x1.shape[-1]), range(n + 1 - x1.ndim, n + 1))
    x2 = lax.broadcast_in_dim(x2, (*batch, x2.shape[-1]), range(n + 1 - x2.ndim, n + 1))
    dims = (([n], [n]), (list(range(n)), list(range(n))))
    return lax.dot_general(x1, x2, dims, precision, dtype)


# --------------------------------------------------------------------------------------
# tensordot, trace, kron


def _axes_list(ax, ndim):
    if isinstance(ax, (int, np.integer)):
        ax = [ax]
    return [canonicalize_axis(a, ndim) for a in ax]


def tensordot(
    a, b, axes=2, *, precision=None, preferred_element_type=None, out_sharding=None
):
    """Contract the last `axes` axes of `a` with the first of `b`, or the listed pairs
    `axes = (axes_a, axes_b)`."""
    (a, b), dtype = _dot_operands("tensordot", (a, b), preferred_element_type)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n > min(a.ndim, b.ndim):
            raise TypeError(
                f"Number of tensordot axes (axes {n}) exceeds input ranks ({a.shape} and "
                f"{b.shape})"
            )
        if n < 0:
            raise ValueError(
                f"tensordot requires a nonnegative number of axes, got {n}"
            )
        contract = (list(range(a.ndim - n, a.ndim)), list(range(n)))
    elif isinstance(axes, (list, tuple)) and len(axes) == 2:
        ax_a, ax_b = axes
        if isinstance(ax_a, (list, tuple)) and isinstance(ax_b, (list, tuple)):
            if len(ax_a) != len(ax_b):
                raise TypeError(
                    "tensordot requires axes lists to have equal length, got "
                    f"{list(ax_a)} and {list(ax_b)}."
                )
        elif isinstance(ax_a, (list, tuple)) or isinstance(ax_b, (list, tuple)):
            raise TypeError(
                "tensordot requires both axes lists to be either ints or lists of ints, "
                f"got {ax_a!r} and {ax_b!r}."
            )
        contract = (_axes_list(ax_a, a.ndim), _axes_list(ax_b, b.ndim))
    else:
        raise TypeError(
            "tensordot axes argument must be an int, a pair of ints, or a pair of "
            "lists/tuples of ints."
        )
    return lax.dot_general(a, b, (contract, ((), ())), precision, dtype)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum of the diagonal (shifted by `offset`) of the 2-D slices along axis1, axis2."""
    from jaxlite.numpy.reductions import sum as _sum

    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.trace is not supported.")
    check_arraylike("trace", a)
    a = asarray(a)
    axis1 = canonicalize_axis(axis1, a.ndim)
    axis2 = canonicalize_axis(axis2, a.ndim)
    if axis1 == axis2:
        raise ValueError(
            f"axis1 and axis2 can not be same. axis1={axis1} and axis2={axis2}"
        )
    rows = lax.broadcasted_iota(np.int32, a.shape, axis1)
    cols = lax.broadcasted_iota(np.int32, a.shape, axis2)
    if not isinstance(offset, int):
        offset = lax.convert_element_type(offset, np.int32)
    on_diagonal = lax.eq(lax.add(rows, offset), cols)
    a = lax.select(on_diagonal, a, lax.full_like(a, 0))
    return _sum(a, axis=(axis1, axis2), dtype=dtype)


def kron(a, b):
    """Kronecker product: blocks `a[i, j] * b` tiled in `a`'s layout."""
    check_arraylike("kron", a, b)
    a, b = promote_dtypes(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    n = max(a.ndim, b.ndim)
    a, b = lax.broadcast_to_rank(a, n), lax.broadcast_to_rank(b, n)
    a_shape = [d for s in a.shape for d in (s, 1)]
    b_shape = [d for s in b.shape for d in (1, s)]
    a = lax.broadcast_in_dim(a, a_shape, range(0, 2 * n, 2))
    b = lax.broadcast_in_dim(b, b_shape, range(1, 2 * n, 2))
    out_shape = [sa * sb for sa, sb in zip(a.shape[::2], b.shape[1::2])]
    return lax.reshape(lax.mul(a, b), out_shape)


# --------------------------------------------------------------------------------------
# einsum

_LETTERS = string.ascii_letters


def _interleaved(first, rest):
    """`einsum(op0, sublist0, op1, sublist1, ..., [sublist_out])` to a subscripts string."""
    args = (first, *rest)
    operands, terms = list(args[0::2]), [args[i] for i in range(1, len(args), 2)]
    out = None
    if len(operands) > len(terms):
        out = operands.pop()

    def term(sublist):
        chars = []
        for s in sublist:
            if s is Ellipsis:
                chars.append("...")
            elif isinstance(s, (int, np.integer)) and 0 <= s < len(_LETTERS):
                chars.append(_LETTERS[s])
            else:
                raise ValueError(
                    f"einsum sublist entries must be Ellipsis or ints in [0, 52), got {s!r}"
                )
        return "".join(chars)

    subscripts = ",".join(term(t) for t in terms)
    if out is not None:
        subscripts += "->" + term(out)
    return subscripts, operands


def _split_ellipsis(term, ndim, i):
    if "..." not in term:
        labels = list(term)
        if len(labels) != ndim:
            raise ValueError(
                f"Einstein sum subscript '{term}' does not contain the correct number of "
                f"indices for operand {i}."
            )
        return labels, None, []
    if term.count("...") > 1 or "." in term.replace("...", "", 1):
        raise ValueError(f"Invalid Ellipsis in einsum subscript '{term}'.")
    before, after = term.split("...")
    n_ell = ndim - len(before) - len(after)
    if n_ell < 0:
        raise ValueError(
            f"Einstein sum subscript '{term}' does not contain the correct number of "
            f"indices for operand {i}."
        )
    return list(before), n_ell, list(after)


def _parse_subscripts(subscripts, ndims):
    """Per-operand label lists and the output label list (`...` axes get labels of their
    own, aligned from the right)."""
    s = subscripts.replace(" ", "")
    if s.count("->") > 1:
        raise ValueError("Subscripts can only contain one '->'.")
    lhs, _, out = s.partition("->")
    explicit = "->" in s
    terms = lhs.split(",")
    if len(terms) != len(ndims):
        raise ValueError(
            f"Number of einsum subscripts, {len(terms)}, must be equal to the number of "
            f"operands, {len(ndims)}."
        )
    for c in s.replace("->", "").replace(",", "").replace(".", ""):
        if c not in _LETTERS:
            raise ValueError(f"Character '{c}' is not a valid symbol.")
    split = [_split_ellipsis(t, nd, i) for i, (t, nd) in enumerate(zip(terms, ndims))]
    n_ell = max((k for _, k, _ in split if k is not None), default=0)
    ell = [f"...{i}" for i in range(n_ell)]
    in_labels = [
        before + (ell[n_ell - k :] if k else []) + after for before, k, after in split
    ]
    if not explicit:
        counts = Counter(c for b, _, a in split for c in (*b, *a))
        return in_labels, ell + sorted(c for c, n in counts.items() if n == 1)
    if "..." in out:
        before, after = out.split("...", 1)
        out_labels = list(before) + ell + list(after)
    else:
        out_labels = list(out)
    seen = set()
    present = {c for labels in in_labels for c in labels}
    for c in out_labels:
        if c in seen:
            raise ValueError(
                f"Output character '{c}' appeared more than once in the output."
            )
        if c not in present:
            raise ValueError(f"Output character '{c}' did not appear in the input")
        seen.add(c)
    return in_labels, out_labels


def _label_sizes(in_labels, shapes):
    sizes = {}
    for i, (labels, shape) in enumerate(zip(in_labels, shapes)):
        for label, d in zip(labels, shape):
            prev = sizes.get(label)
            if prev is None or prev == 1:
                sizes[label] = d
            elif d not in (1, prev):
                name = "..." if label.startswith("...") else label
                raise ValueError(
                    f"Size of label '{name}' for operand {i} ({d}) does not match "
                    f"previous terms ({prev})."
                )
    return sizes


def _sum_axes(x, axes):
    if not axes:
        return x
    if x.dtype == np.bool_:
        return lax.reduce_or(x, axes)
    return lax.reduce_sum(x, axes)


def _diagonal(x, i, j):
    """Keep the entries with equal indices along axes i and j, summing away axis j."""
    same = lax.eq(
        lax.broadcasted_iota(np.int32, x.shape, i),
        lax.broadcasted_iota(np.int32, x.shape, j),
    )
    return _sum_axes(lax.select(same, x, lax.full_like(x, 0)), (j,))


def _prepare(x, labels, sizes, needed):
    """Squeeze broadcast axes, take diagonals of repeated labels and sum the labels no
    other operand (nor the output) needs."""
    squeeze = [i for i, lbl in enumerate(labels) if x.shape[i] == 1 and sizes[lbl] != 1]
    if squeeze:
        x = lax.squeeze(x, squeeze)
        labels = [lbl for i, lbl in enumerate(labels) if i not in squeeze]
    while len(set(labels)) != len(labels):
        counts = Counter(labels)
        label = next(lbl for lbl in labels if counts[lbl] > 1)
        i = labels.index(label)
        j = labels.index(label, i + 1)
        x = _diagonal(x, i, j)
        labels = labels[:j] + labels[j + 1 :]
    unique = [i for i, lbl in enumerate(labels) if lbl not in needed]
    x = _sum_axes(x, unique)
    return x, [lbl for i, lbl in enumerate(labels) if i not in unique]


def _contract_pair(x, lx, y, ly, keep, precision, dtype, dot_general):
    only_x = [i for i, lbl in enumerate(lx) if lbl not in keep and lbl not in ly]
    only_y = [i for i, lbl in enumerate(ly) if lbl not in keep and lbl not in lx]
    x, lx = _sum_axes(x, only_x), [lbl for i, lbl in enumerate(lx) if i not in only_x]
    y, ly = _sum_axes(y, only_y), [lbl for i, lbl in enumerate(ly) if i not in only_y]
    shared = [lbl for lbl in lx if lbl in ly]
    batch = [lbl for lbl in shared if lbl in keep]
    contract = [lbl for lbl in shared if lbl not in keep]
    dims = (
        ([lx.index(lbl) for lbl in contract], [ly.index(lbl) for lbl in contract]),
        ([lx.index(lbl) for lbl in batch], [ly.index(lbl) for lbl in batch]),
    )
    out = dot_general(x, y, dims, precision, preferred_element_type=dtype)
    labels = (
        batch
        + [lbl for lbl in lx if lbl not in ly]
        + [lbl for lbl in ly if lbl not in lx]
    )
    return out, labels


def _contraction_path(in_labels, shapes, out_labels, optimize):
    n = len(in_labels)
    if n < 3 or optimize is False or optimize is None or optimize == "none":
        return [(0, 1)] * (n - 1)
    if isinstance(optimize, (list, tuple)):
        return [tuple(step) for step in optimize if step != "einsum_path"]
    names = sorted({lbl for labels in in_labels for lbl in labels})
    if len(names) > len(_LETTERS):
        return [(0, 1)] * (n - 1)
    letter = dict(zip(names, _LETTERS))
    expr = ",".join("".join(letter[lbl] for lbl in labels) for labels in in_labels)
    expr += "->" + "".join(letter[lbl] for lbl in out_labels)
    dummies = [np.broadcast_to(np.zeros((), np.float32), s) for s in shapes]
    strategy = "optimal" if optimize == "optimal" else "greedy"
    path, _ = np.einsum_path(expr, *dummies, optimize=strategy)
    return [tuple(step) for step in path[1:]]


def einsum(
    subscripts,
    /,
    *operands,
    out=None,
    optimize="auto",
    precision=None,
    preferred_element_type=None,
    _dot_general=lax.dot_general,
    out_sharding=None,
):
    """Einstein summation, lowered to dot_general, transpose and reduce_sum."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.einsum is not supported.")
    if not isinstance(subscripts, str):
        subscripts, operands = _interleaved(subscripts, operands)
    if not operands:
        raise ValueError("No input operands")
    ops, dtype = _dot_operands("einsum", operands, preferred_element_type)
    in_labels, out_labels = _parse_subscripts(subscripts, [x.ndim for x in ops])
    sizes = _label_sizes(in_labels, [x.shape for x in ops])

    prepared = []
    for k, (x, labels) in enumerate(zip(ops, in_labels)):
        needed = set(out_labels).union(
            *(set(lbls) for j, lbls in enumerate(in_labels) if j != k)
        )
        prepared.append(_prepare(x, labels, sizes, needed))

    path = _contraction_path(
        [lbls for _, lbls in prepared],
        [x.shape for x, _ in prepared],
        out_labels,
        optimize,
    )
    for step in path:
        picked = [prepared[i] for i in sorted(step)]
        prepared = [p for i, p in enumerate(prepared) if i not in step]
        x, lx = picked[0]
        for k in range(1, len(picked)):
            y, ly = picked[k]
            later = [lbls for _, lbls in (*prepared, *picked[k + 1 :])]
            keep = set(out_labels).union(*map(set, later))
            x, lx = _contract_pair(x, lx, y, ly, keep, precision, dtype, _dot_general)
        prepared.append((x, lx))

    ((x, labels),) = prepared
    x = _sum_axes(x, [i for i, lbl in enumerate(labels) if lbl not in out_labels])
    labels = [lbl for lbl in labels if lbl in out_labels]
    x = lax.transpose(x, [labels.index(lbl) for lbl in out_labels])
    if x.dtype != dtype:
        x = lax.convert_element_type(x, dtype)
    return x


def einsum_path(subscripts, /, *operands, optimize="greedy"):
    """The contraction order einsum would use, as NumPy's `einsum_path` reports it."""
    arrays = [np.broadcast_to(np.zeros((), np.float32), np.shape(x)) for x in operands]
    return np.einsum_path(subscripts, *arrays, optimize=optimize)
