"""Native array ops: structural ops as index arithmetic, reductions, cumulative ops
and dot products.

Structural ops (broadcast, reshape, transpose, slice, concatenate, pad, ...) are
generators that read their operand at a computed index: they fuse into their
consumer's loop nest and never copy. Reductions and dot products are generators with
an inner loop (one output element per call); `dynamic_update_slice` and the
cumulative ops materialise their result. An op that would replicate an expensive
generator's elements (a broadcast, a dot product's operands) materialises it first.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir

from jaxlite.backend.native import DOT_LIMIT, Unsupported, values
from jaxlite.backend.native.scalar import I1, Elemental, constant, convert
from jaxlite.backend.native.values import Buffer, Gen, Reduction, Remap, i64

# Structural ops: index arithmetic over the operand's generator.


def _broadcast_in_dim(c, eqn, x, *dyn, shape, broadcast_dimensions, sharding=None):
    if dyn:
        raise Unsupported("broadcast_in_dim with dynamic shapes")
    if values.size(shape) > values.size(x.shape):
        x = c.cheap(x)
    if not x.shape:
        return [Gen(shape, x.dtype, lambda idx: x.load(c, []), False)]

    def index_map(idx):
        return [
            i64(0) if x.shape[i] == 1 else idx[d]
            for i, d in enumerate(broadcast_dimensions)
        ]

    return [Remap(c, x, shape, index_map)]


def _unflatten(c, flat, shape):
    idx = []
    for s in reversed(shape):
        if s == 1:
            idx.append(i64(0))
            continue
        idx.append(c.b.urem(flat, i64(s)))
        flat = c.b.udiv(flat, i64(s))
    return list(reversed(idx))


def _reshape_to(c, x, shape):
    shape = tuple(shape)
    if isinstance(x, Buffer):
        return Buffer(x.ptr, shape, x.dtype)
    if [d for d in x.shape if d != 1] == [d for d in shape if d != 1]:
        # Only unit dimensions change: the index maps dimension by dimension.
        keep_out = [i for i, d in enumerate(shape) if d != 1]
        keep_in = [i for i, d in enumerate(x.shape) if d != 1]
        pairs = dict(zip(keep_in, keep_out))

        def index_map(idx):
            return [
                idx[pairs[i]] if i in pairs else i64(0) for i in range(len(x.shape))
            ]

        return Remap(c, x, shape, index_map)
    return Remap(
        c, x, shape, lambda idx: _unflatten(c, c.flat_index(idx, shape), x.shape)
    )


def _reshape(c, eqn, x, *dyn, new_sizes, dimensions=None, sharding=None):
    if dyn:
        raise Unsupported("reshape with dynamic shapes")
    if dimensions is not None and tuple(dimensions) != tuple(range(len(x.shape))):
        x = _transpose(c, eqn, x, permutation=dimensions)[0]
    return [_reshape_to(c, x, eqn.outvars[0].aval.shape)]


def _squeeze(c, eqn, x, *, dimensions):
    return [_reshape_to(c, x, eqn.outvars[0].aval.shape)]


def _expand_dims(c, eqn, x, **params):
    return [_reshape_to(c, x, eqn.outvars[0].aval.shape)]


def _transpose(c, eqn, x, *, permutation):
    shape = tuple(x.shape[p] for p in permutation)
    inverse = np.argsort(permutation)
    return [Remap(c, x, shape, lambda idx: [idx[int(k)] for k in inverse])]


def _slice(c, eqn, x, *, start_indices, limit_indices, strides=None):
    shape = eqn.outvars[0].aval.shape
    strides = strides or (1,) * len(shape)

    def index_map(idx):
        out = []
        for i, start, stride in zip(idx, start_indices, strides):
            if stride != 1:
                i = c.b.mul(i, i64(stride))
            out.append(c.b.add(i, i64(start)) if start else i)
        return out

    return [Remap(c, x, shape, index_map)]


def _rev(c, eqn, x, *, dimensions):
    dims = set(dimensions)

    def index_map(idx):
        return [
            c.b.sub(i64(x.shape[k] - 1), i) if k in dims else i
            for k, i in enumerate(idx)
        ]

    return [Remap(c, x, x.shape, index_map)]


def _pieces(c, eqn, operands, dimension, out_shape):
    """A generator of the concatenation of `operands` along `dimension`."""
    operands = [c.cheap(x) for x in operands]
    bounds, acc = [], 0
    for x in operands:
        bounds.append(acc)
        acc += x.shape[dimension]
    dtype = operands[0].dtype

    def fn(idx):
        b = c.b
        i = idx[dimension]
        if isinstance(i, ir.Constant):  # the operand is known: no selects
            k = max(j for j, start in enumerate(bounds) if start <= i.constant)
            at = i64(i.constant - bounds[k])
            return operands[k].load(c, [*idx[:dimension], at, *idx[dimension + 1 :]])
        out = None
        for x, start in zip(operands, bounds):
            n = x.shape[dimension]
            local = b.sub(i, i64(start)) if start else i
            if len(operands) > 1:
                # Clamp to the operand's range: every operand is read, one is chosen.
                clamped = b.select(b.icmp_signed("<", local, i64(0)), i64(0), local)
                clamped = b.select(
                    b.icmp_signed(">=", clamped, i64(n)), i64(n - 1), clamped
                )
            else:
                clamped = local
            v = x.load(c, [*idx[:dimension], clamped, *idx[dimension + 1 :]])
            if out is None:
                out = v
            else:
                out = b.select(b.icmp_signed(">=", i, i64(start)), v, out)
        return out

    last = len(out_shape) - 1
    if dimension == last:
        cuts = {*bounds[1:]}
        for x, start in zip(operands, bounds):
            cuts.update(start + k for k in x.cuts)
    else:
        cuts = {k for x in operands for k in x.cuts}
    return Gen(out_shape, dtype, fn, False, tuple(sorted(cuts)))


def _concatenate(c, eqn, *operands, dimension):
    return [_pieces(c, eqn, operands, dimension, eqn.outvars[0].aval.shape)]


def _stack(c, eqn, *operands, axis):
    expanded = [
        _reshape_to(c, x, (*x.shape[:axis], 1, *x.shape[axis:])) for x in operands
    ]
    return [_pieces(c, eqn, expanded, axis, eqn.outvars[0].aval.shape)]


def _split(c, eqn, x, *, sizes, axis):
    outs, start = [], 0
    for v, size in zip(eqn.outvars, sizes):

        def index_map(idx, start=start):
            return [
                c.b.add(i, i64(start)) if k == axis and start else i
                for k, i in enumerate(idx)
            ]

        outs.append(Remap(c, x, v.aval.shape, index_map))
        start += size
    return outs


def _pad(c, eqn, x, padding_value, *, padding_config):
    shape = eqn.outvars[0].aval.shape
    pad = c.scalar(padding_value)

    def fn(idx):
        b = c.b
        valid = ir.Constant(I1, 1)
        src = []
        for i, n, (lo, _, interior) in zip(idx, x.shape, padding_config):
            j = b.sub(i, i64(lo))
            step = interior + 1
            q = b.sdiv(j, i64(step)) if step != 1 else j
            ok = b.icmp_signed(">=", j, i64(0))
            ok = b.and_(ok, b.icmp_signed("<", q, i64(n)))
            if step != 1:
                ok = b.and_(ok, b.icmp_signed("==", b.srem(j, i64(step)), i64(0)))
            valid = b.and_(valid, ok)
            src.append(b.select(ok, q, i64(0)))
        return b.select(valid, x.load(c, src), pad.value)

    x = c.cheap(x)
    return [Gen(shape, x.dtype, fn, False)]


def _iota(c, eqn, *dyn, dtype, shape, dimension, sharding=None):
    out_dtype = np.dtype(dtype)

    def fn(idx):
        return convert(c.b, idx[dimension], np.int64, out_dtype)

    return [Gen(shape, out_dtype, fn, False)]


def _clamped_starts(c, starts, operand_shape, sizes):
    b = c.b
    out = []
    for s, n, size in zip(starts, operand_shape, sizes):
        v = convert(b, c.scalar(s).value, s.dtype, np.int64)
        hi = i64(n - size)
        v = b.select(b.icmp_signed("<", v, i64(0)), i64(0), v)
        out.append(b.select(b.icmp_signed(">", v, hi), hi, v))
    return out


def _dynamic_slice(c, eqn, x, *starts, slice_sizes):
    starts = _clamped_starts(c, starts, x.shape, slice_sizes)
    return [
        Remap(
            c,
            x,
            tuple(slice_sizes),
            lambda idx: [c.b.add(i, s) for i, s in zip(idx, starts)],
        )
    ]


def _dynamic_update_slice(c, eqn, x, update, *starts):
    starts = _clamped_starts(c, starts, x.shape, update.shape)
    out = c.materialize(x, c.alloc(x.shape, x.dtype))

    def body(idx):
        target = [c.b.add(i, s) for i, s in zip(idx, starts)]
        out.store(c, target, update.load(c, idx))

    c.loop_nest(update.shape, body)
    return [out]


# ----------------------------------------------------------------------------------------
# Reductions, cumulative ops and dot products: generators with an inner loop.

_REDUCERS = {
    "reduce_sum": ("add", 0),
    "reduce_prod": ("mul", 1),
    "reduce_max": ("max", "lowest"),
    "reduce_min": ("min", "highest"),
    "reduce_and": ("and_", "all_ones"),
    "reduce_or": ("or_", 0),
    "reduce_xor": ("xor", 0),
}


_BLOCK = 1024  # elements per partial sum of a long float reduction
# Shorter reduction loops get no request for interleaved accumulators: with 4 of them
# (and 8 lanes each) a loop must run 32 times before its vector body runs at all.
_INTERLEAVE_MIN = 128


def _identity(dtype, which):
    dtype = np.dtype(dtype)
    if which == "all_ones":
        return True if dtype.kind == "b" else -1
    if which == "lowest":
        if dtype.kind == "f":
            return -np.inf
        return False if dtype.kind == "b" else np.iinfo(dtype).min
    if which == "highest":
        if dtype.kind == "f":
            return np.inf
        return True if dtype.kind == "b" else np.iinfo(dtype).max
    return which


def _accumulate(c, dtype, op, acc, v):
    if dtype.kind == "f" and op in ("add", "mul"):
        fn = c.b.fadd if op == "add" else c.b.fmul
        return fn(acc, v, flags=("reassoc", "contract"))
    return getattr(Elemental(c.b, dtype), op)(acc, v)


def _reducer(name):
    op, init = _REDUCERS[name]

    def rule(c, eqn, x, *, axes, **params):
        if not all(isinstance(a, int) for a in axes):  # psum over a named axis
            raise Unsupported(f"{eqn.primitive.name} over named axes {axes}")
        axes = tuple(sorted(axes))
        kept = [d for d in range(len(x.shape)) if d not in axes]
        red_shape = tuple(x.shape[d] for d in axes)
        dtype = x.dtype
        if dtype.kind == "b" and op in ("max", "min"):
            raise Unsupported(f"{name} of booleans")
        slot = c.slot(dtype)
        start = constant(dtype, _identity(dtype, init))
        n = red_shape[-1] if red_shape else 1
        blocked = dtype.kind == "f" and op in ("add", "mul") and n > 2 * _BLOCK
        partial = c.slot(dtype) if blocked else slot

        def fn(idx):
            c.b.store(start, slot)

            def element(ridx):
                full = _placed(len(x.shape), (kept, idx), (axes, ridx))
                acc = c.b.load(partial)
                c.b.store(_accumulate(c, dtype, op, acc, x.load(c, full)), partial)

            def run(outer):
                # The last reduced axis in blocks of `_BLOCK`, each summed apart and
                # then added to the total: a float32 sum of 10^8 ones is 10^8, as with
                # NumPy's pairwise sums and XLA's vectorised ones (one running sum
                # stops growing at 2^24).
                def block(k, count):
                    c.b.store(start, partial)
                    c.for_range(
                        count,
                        lambda j: element(
                            [*outer, c.b.add(c.b.mul(k, i64(_BLOCK)), j)]
                        ),
                    )
                    total = c.b.load(slot)
                    c.b.store(_accumulate(c, dtype, op, total, c.b.load(partial)), slot)

                c.for_range(n // _BLOCK, lambda k: block(k, _BLOCK))
                if n % _BLOCK:
                    block(i64(n // _BLOCK), n % _BLOCK)

            if blocked:
                c.loop_nest(red_shape[:-1], run)
            else:
                c.loop_nest(red_shape, element, interleave=n >= _INTERLEAVE_MIN)
            return c.b.load(slot)

        out_shape = eqn.outvars[0].aval.shape
        # The kept axes after the last reduced one, accumulated together (see
        # `Reduction.tile`) when they are few.
        trailing = [d for d in kept if d > axes[-1]] if axes else []
        tile_shape = [x.shape[d] for d in trailing]
        if not trailing or blocked or math.prod(tile_shape) > Reduction.TILE:
            return [Reduction(out_shape, dtype, fn, True)]

        def tile(lead):
            slots = []
            for _ in np.ndindex(*tile_shape):
                slots.append(c.slot(dtype))
                c.b.store(start, slots[-1])

            def element(ridx):
                for s, t in zip(slots, np.ndindex(*tile_shape)):
                    at = [*lead, *map(i64, t)]
                    full = _placed(len(x.shape), (kept, at), (axes, ridx))
                    acc = c.b.load(s)
                    c.b.store(_accumulate(c, dtype, op, acc, x.load(c, full)), s)

            c.loop_nest(red_shape, element)
            return [c.b.load(s) for s in slots]

        return [Reduction(out_shape, dtype, fn, True, tile, len(trailing))]

    return rule


def _arg_reducer(is_max):
    def rule(c, eqn, x, *, axes, index_dtype):
        (axis,) = axes
        x = c.cheap(x)
        dtype = x.dtype
        out_dtype = np.dtype(index_dtype)
        best = c.slot(dtype)
        where = c.slot(np.int64)
        n = x.shape[axis]

        def fn(idx):
            b = c.b
            c.b.store(x.load(c, [*idx[:axis], i64(0), *idx[axis:]]), best)
            b.store(i64(0), where)

            def body(i):
                b = c.b
                v = x.load(c, [*idx[:axis], i, *idx[axis:]])
                cur = b.load(best)
                em = Elemental(b, dtype)
                better = em.gt(v, cur) if is_max else em.lt(v, cur)
                if dtype.kind == "f":
                    # The first NaN wins, as in JAX.
                    v_nan = b.fcmp_unordered("uno", v, v)
                    cur_nan = b.fcmp_unordered("uno", cur, cur)
                    better = b.and_(b.or_(better, v_nan), b.not_(cur_nan))
                b.store(b.select(better, v, cur), best)
                b.store(b.select(better, i, b.load(where)), where)

            c.for_range(n, body)
            return convert(c.b, c.b.load(where), np.int64, out_dtype)

        return [Reduction(eqn.outvars[0].aval.shape, out_dtype, fn, True)]

    return rule


_CUMULATIVE = {"cumsum": "add", "cumprod": "mul", "cummax": "max", "cummin": "min"}


def _cumulative(name):
    op = _CUMULATIVE[name]

    def rule(c, eqn, x, *, axis, reverse):
        out = c.alloc(x.shape, x.dtype)
        outer = tuple(d for i, d in enumerate(x.shape) if i != axis)
        n = x.shape[axis]
        slot = c.slot(x.dtype)

        def line(idx):
            def body(i):
                b = c.b
                j = b.sub(i64(n - 1), i) if reverse else i
                full = [*idx[:axis], j, *idx[axis:]]
                v = x.load(c, full)
                first = b.icmp_unsigned("==", i, i64(0))
                acc = getattr(Elemental(b, x.dtype), op)(b.load(slot), v)
                acc = b.select(first, v, acc)
                b.store(acc, slot)
                out.store(c, full, acc)

            c.for_range(n, body)

        c.loop_nest(outer, line)
        return [out]

    return rule


def _placed(rank, *groups):
    """An index of `rank` dimensions from `(dimensions, indices)` groups."""
    idx = [None] * rank
    for dims, indices in groups:
        for d, i in zip(dims, indices):
            idx[d] = i
    return idx


def _dot_general(
    c, eqn, lhs, rhs, *, dimension_numbers, preferred_element_type=None, **_
):
    (lc, rc), (lb, rb) = dimension_numbers
    out_aval = eqn.outvars[0].aval
    out_dtype = np.dtype(out_aval.dtype)
    contract_shape = tuple(lhs.shape[d] for d in lc)
    if lhs.dtype == rhs.dtype and lhs.dtype.kind != out_dtype.kind:
        # XLA multiplies in the operands' type and converts the sums (the NumPy
        # backend's `dot_general_value`); not reproduced here.
        raise Unsupported(f"dot_general of {lhs.dtype} into {out_dtype}")
    if values.size(out_aval.shape) * values.size(contract_shape) > DOT_LIMIT:
        raise Unsupported(
            f"dot_general of {lhs.shape} and {rhs.shape}: large products run on BLAS"
        )
    lhs, rhs = c.cheap(lhs), c.cheap(rhs)
    lf = [d for d in range(len(lhs.shape)) if d not in lc and d not in lb]
    rf = [d for d in range(len(rhs.shape)) if d not in rc and d not in rb]
    slot = c.slot(out_dtype)
    zero = constant(out_dtype, 0)

    def fn(idx):
        nb = len(lb)
        batch, li, ri = idx[:nb], idx[nb : nb + len(lf)], idx[nb + len(lf) :]
        c.b.store(zero, slot)

        def body(k):
            b = c.b
            lidx = _placed(len(lhs.shape), (lb, batch), (lf, li), (lc, k))
            ridx = _placed(len(rhs.shape), (rb, batch), (rf, ri), (rc, k))
            x = convert(b, lhs.load(c, lidx), lhs.dtype, out_dtype)
            y = convert(b, rhs.load(c, ridx), rhs.dtype, out_dtype)
            em = Elemental(b, out_dtype)
            prod = em.and_(x, y) if out_dtype.kind == "b" else em.mul(x, y)
            acc = b.load(slot)
            if out_dtype.kind == "b":
                b.store(b.or_(acc, prod), slot)
            else:
                b.store(_accumulate(c, out_dtype, "add", acc, prod), slot)

        c.loop_nest(contract_shape, body, interleave=True)
        return c.b.load(slot)

    return [Reduction(out_aval.shape, out_dtype, fn, True)]


OPS = {
    "broadcast_in_dim": _broadcast_in_dim,
    "reshape": _reshape,
    "squeeze": _squeeze,
    "expand_dims": _expand_dims,
    "transpose": _transpose,
    "slice": _slice,
    "rev": _rev,
    "concatenate": _concatenate,
    "stack": _stack,
    "split": _split,
    "pad": _pad,
    "iota": _iota,
    "dynamic_slice": _dynamic_slice,
    "dynamic_update_slice": _dynamic_update_slice,
    **{name: _reducer(name) for name in _REDUCERS},
    "argmax": _arg_reducer(True),
    "argmin": _arg_reducer(False),
    **{name: _cumulative(name) for name in _CUMULATIVE},
    "dot_general": _dot_general,
}
