"""Native gather and scatter: XLA's general indexing forms as loop nests.

Both read their index vectors from the last axis of the indices operand, as
`lax/indexing.py` and `lax/scatter.py` define them (`index_vector_dim` is always the
last dimension).

- `gather` is a generator: the output index splits into batch positions (the
  dimensions not in `offset_dims`, which index the indices operand) and offset
  positions (the window). The start of the window in the operand comes from the index
  vector (`start_index_map`) and from the batch index itself (operand batching
  dimensions); starts are clamped so the window fits (CLIP, and PROMISE_IN_BOUNDS,
  which XLA runs clamped). In FILL_OR_DROP mode an element whose window does not fit
  in some indexed dimension (`0 <= start <= dim - slice_size`) is `fill_value`: the
  whole window is filled, as in XLA and JAX.
- A scatter copies its operand into a new buffer, then, for each index vector in
  order (row-major over the batch dimensions), combines its update window into it,
  element by element, row-major over the window. A window that does not fit is skipped
  (FILL_OR_DROP and PROMISE_IN_BOUNDS, as in `lax/scatter.py`) or has its start
  clamped (CLIP). The combiner is the primitive's (`scatter` replaces, `scatter-add`
  adds, ...); a `scatter` with an `update_jaxpr` (`lax.scatter_apply`) emits that
  scalar jaxpr inline. Repeated indices therefore apply one after another, in the
  order the NumPy backend applies them: `scatter-add` accumulates every duplicate, and
  in a `scatter` the last write wins.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir

from jaxlite.backend.native import Unsupported
from jaxlite.backend.native.scalar import I64, Elemental, constant, convert


def _i64(n):
    return ir.Constant(I64, int(n))


def _mode_name(mode):
    """ "clip", "fill" or "promise" for a `GatherScatterMode` (this layer does not import
    lax: the enum is read by its member name)."""
    name = getattr(mode, "name", mode)
    if name in ("CLIP", 1, "clip"):
        return "clip"
    if name in ("FILL_OR_DROP", 2, "fill", "drop", None):
        return "fill"
    if name in ("PROMISE_IN_BOUNDS", 3, "promise_in_bounds"):
        return "promise"
    raise Unsupported(f"gather/scatter mode {mode!r}")


class _IndexVector:
    """Reads the index vectors of an indices operand (index vector last) as i64."""

    def __init__(self, c, indices):
        self.c = c
        self.indices = c.cheap(indices)
        self.dtype = self.indices.dtype
        self.unsigned = self.dtype.kind == "u"

    def load(self, batch_idx, k):
        c = self.c
        v = self.indices.load(c, [*batch_idx, _i64(k)])
        # Widen to i64; a uint64 keeps its bits and is compared unsigned below.
        return convert(c.b, v, self.dtype, np.int64 if not self.unsigned else np.uint64)

    def clamp(self, v, hi):
        """`v` clamped to [0, hi] (hi >= 0)."""
        b = self.c.b
        if self.unsigned:
            return b.select(b.icmp_unsigned(">", v, _i64(hi)), _i64(hi), v)
        v = b.select(b.icmp_signed("<", v, _i64(0)), _i64(0), v)
        return b.select(b.icmp_signed(">", v, _i64(hi)), _i64(hi), v)

    def in_range(self, v, hi):
        """Whether 0 <= v <= hi."""
        b = self.c.b
        if self.unsigned:
            return b.icmp_unsigned("<=", v, _i64(hi))
        lo_ok = b.icmp_signed(">=", v, _i64(0))
        return b.and_(lo_ok, b.icmp_signed("<=", v, _i64(hi)))


def _and(b, acc, v):
    return v if acc is None else b.and_(acc, v)


def _default_fill(dtype):
    """JAX's fill of an out-of-bounds gather (`lax.indexing.default_fill_value`)."""
    if dtype.kind == "f":
        return np.nan
    if dtype.kind == "i":
        return int(np.iinfo(dtype).min)
    if dtype.kind == "u":
        return int(np.iinfo(dtype).max)
    return True


def _fill_constant(dtype, fill_value):
    if fill_value is None:
        fill_value = _default_fill(dtype)
    with np.errstate(all="ignore"):
        value = np.asarray(fill_value).astype(dtype)[()]
    return constant(dtype, value)


# ----------------------------------------------------------------------------------------
# gather


def _gather(
    c,
    eqn,
    x,
    indices,
    *,
    dimension_numbers,
    slice_sizes,
    mode,
    fill_value=None,
    indices_are_sorted=False,
    unique_indices=False,
):
    dn = dimension_numbers
    how = _mode_name(mode)
    out_aval = eqn.outvars[0].aval
    out_shape = tuple(out_aval.shape)
    x = c.cheap(x)
    iv = _IndexVector(c, indices)
    ndim = len(x.shape)
    offset_dims = tuple(dn.offset_dims)
    batch_positions = [p for p in range(len(out_shape)) if p not in offset_dims]
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    window_dims = [d for d in range(ndim) if d not in dropped]
    fill = _fill_constant(x.dtype, fill_value) if how == "fill" else None

    def fn(idx):
        b = c.b
        batch = [idx[p] for p in batch_positions]
        start = [None] * ndim
        ok = None
        for k, d in enumerate(dn.start_index_map):
            raw = iv.load(batch, k)
            hi = x.shape[d] - slice_sizes[d]
            if fill is not None:
                ok = _and(b, ok, iv.in_range(raw, hi))
            start[d] = iv.clamp(raw, max(hi, 0))
        for od, idim in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
            start[od] = batch[idim]
        src = list(start)
        for d, p in zip(window_dims, offset_dims):
            off = idx[p]
            src[d] = off if start[d] is None else b.add(start[d], off)
        src = [_i64(0) if s is None else s for s in src]
        v = x.load(c, src)
        if ok is not None:
            v = b.select(ok, v, fill)
        return v

    # A few loads and compares per element: cheap enough to recompute.
    return [_gen()(out_shape, x.dtype, fn, False)]


def _gen():
    # `compiler` imports this module at its end: its classes are looked up when used.
    from jaxlite.backend.native.values import Gen

    return Gen


# ----------------------------------------------------------------------------------------
# The scatter family


def _elemental_combiner(kind, dtype):
    """`combine(b, old, update)` of scatter-`kind` on `dtype`."""
    op = {"add": "add", "sub": "sub", "mul": "mul", "min": "min", "max": "max"}[kind]
    if dtype.kind == "b":
        # NumPy's (and XLA's) arithmetic on booleans: add is or, mul is and.
        op = {"add": "or_", "mul": "and_", "min": "min", "max": "max"}.get(kind)
        if op is None:
            raise Unsupported(f"scatter-{kind} of booleans")

    def combine(c, old, update):
        return getattr(Elemental(c.b, dtype), op)(old, update)

    return combine


def _jaxpr_combiner(c, dtype, update_jaxpr, update_consts):
    """`combine` that emits the scalar jaxpr `update_jaxpr(old, update)` inline."""
    from jaxlite.backend.native.values import Scalar

    def combine(c, old, update):
        consts = [c.constant_value(v) for v in update_consts]
        args = [Scalar(old, dtype), Scalar(update, dtype)]
        (new,) = c.emit_jaxpr(update_jaxpr, consts, args)
        new = c.scalar(new)
        return convert(c.b, new.value, new.dtype, dtype)

    return combine


def _scatter_rule(kind):
    def rule(
        c,
        eqn,
        x,
        indices,
        updates,
        *,
        dimension_numbers,
        mode,
        update_jaxpr=None,
        update_consts=(),
        indices_are_sorted=False,
        unique_indices=False,
    ):
        dtype = x.dtype
        if kind != "replace":
            combine = _elemental_combiner(kind, dtype)
        elif update_jaxpr is not None:
            if len(update_jaxpr.invars) != 2 or len(update_jaxpr.outvars) != 1:
                raise Unsupported(
                    "scatter with an update_jaxpr that is not (a, b) -> c"
                )
            combine = _jaxpr_combiner(c, dtype, update_jaxpr, update_consts)
        else:
            combine = None
        return [
            _scatter(
                c, x, indices, updates, dimension_numbers, _mode_name(mode), combine
            )
        ]

    return rule


def _scatter(c, x, indices, updates, dn, how, combine):
    out = c.materialize(x, c.alloc(x.shape, x.dtype))
    iv = _IndexVector(c, indices)
    updates = c.cheap(updates)
    ndim = len(x.shape)
    batch_shape = tuple(iv.indices.shape[:-1])
    not_window = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    window_dims = [d for d in range(ndim) if d not in not_window]
    update_window_dims = tuple(dn.update_window_dims)
    window = [1] * ndim
    for od, ud in zip(window_dims, update_window_dims):
        window[od] = updates.shape[ud]
    window_shape = tuple(updates.shape[ud] for ud in update_window_dims)
    scatter_dims = [d for d in range(len(updates.shape)) if d not in update_window_dims]

    def per_index_vector(batch):
        b = c.b
        start = [None] * ndim
        ok = None
        for k, d in enumerate(dn.scatter_dims_to_operand_dims):
            raw = iv.load(batch, k)
            hi = x.shape[d] - window[d]
            if how == "clip":
                start[d] = iv.clamp(raw, max(hi, 0))
            else:
                ok = _and(b, ok, iv.in_range(raw, hi))
                start[d] = raw
        for od, idim in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims):
            start[od] = batch[idim]

        def element(widx):
            b = c.b
            target = list(start)
            for d, w in zip(window_dims, widx):
                target[d] = w if start[d] is None else b.add(start[d], w)
            target = [_i64(0) if t is None else t for t in target]
            uidx = [None] * len(updates.shape)
            for d, i in zip(scatter_dims, batch):
                uidx[d] = i
            for d, i in zip(update_window_dims, widx):
                uidx[d] = i
            new = updates.load(c, uidx)
            if combine is not None:
                new = combine(c, out.load(c, target), new)
            out.store(c, target, new)

        if ok is None:
            c.loop_nest(window_shape, element)
        else:
            with c.b.if_then(ok):
                c.loop_nest(window_shape, element)

    if 0 not in window_shape:
        c.loop_nest(batch_shape, per_index_vector)
    return out


OPS = {
    "gather": _gather,
    "scatter": _scatter_rule("replace"),
    "scatter_add": _scatter_rule("add"),
    "scatter_sub": _scatter_rule("sub"),
    "scatter_mul": _scatter_rule("mul"),
    "scatter_min": _scatter_rule("min"),
    "scatter_max": _scatter_rule("max"),
}
