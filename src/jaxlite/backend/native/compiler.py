"""A jaxpr becomes one LLVM function: values, fusion, loop nests and control flow.

Every jaxpr variable becomes a `Value` of its aval's static shape:

- a `Scalar`, an SSA register (every 0-d value: a loop over scalars never touches
  memory);
- a `Buffer`, a pointer to a contiguous row-major array (inputs, constants, and what
  was materialised);
- a `Gen`, XLA's elemental generator: a function emitting the IR of the element at an
  index. Elementwise operations, broadcasts, slices, transposes, reductions and dot
  products are generators of their operands' generators, so a chain of them fuses
  into the loop nest of whoever finally reads it, with no temporaries between.

A generator is materialised into a buffer (one loop nest) where recomputing it would
cost more than storing it: when it is read more than once, when it is a carried loop
value or an output, or when an operation reads its elements many times (a dot
product's operands). Buffers of up to `_STACK_BYTES` live on the stack, larger ones in
one heap block allocated at entry and freed at exit (`_Frame`).

`while`, `scan` and `cond` become LLVM control flow: loop-carried scalars are stack
slots that LLVM promotes to registers (`mem2reg`), carried arrays are buffers updated
at the end of each iteration, a scan's `xs` are read and its `ys` written in place.
Call-like primitives (jit, custom_jvp_call, custom_vjp_call, remat) are inlined.

What an op needs from the primitives is registered by `lax/` in
`jaxlite.backend.native.native_rules` (primitive -> op name); the ops themselves are
`OPS` here (and `Elemental`'s methods for the elementwise ones). An equation the
backend cannot compile raises `Unsupported`, with the reason the fallback reports.
"""

from __future__ import annotations

import collections
import math

import numpy as np
from llvmlite import ir

from jaxlite.backend.native import Unsupported, engine, native_rules
from jaxlite.backend.native.scalar import (
    I1,
    I8,
    I32,
    I64,
    SUPPORTED_DTYPES,
    Elemental,
    constant,
    convert,
    memory_type,
    value_type,
)
from jaxlite.core import ClosedJaxpr, Jaxpr, Literal

_STACK_BYTES = 1 << 14
_ALIGN = 64


def _size(shape):
    return math.prod(shape)


def _strides(shape):
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return tuple(reversed(strides))


def _i64(n):
    return ir.Constant(I64, int(n))


class Value:
    """A jaxpr value in the function being emitted (see the module docstring)."""

    __slots__ = ("shape", "dtype")
    expensive = False

    def load(self, c, idx):
        raise NotImplementedError


class Scalar(Value):
    __slots__ = ("value",)

    def __init__(self, value, dtype):
        self.shape, self.dtype, self.value = (), np.dtype(dtype), value

    def load(self, c, idx):
        return self.value


class Buffer(Value):
    """A contiguous row-major array at `ptr` (a pointer to its memory type)."""

    __slots__ = ("ptr",)

    def __init__(self, ptr, shape, dtype):
        self.ptr, self.shape, self.dtype = ptr, tuple(shape), np.dtype(dtype)

    def address(self, c, idx):
        flat = c.flat_index(idx, self.shape)
        return c.b.gep(self.ptr, [flat])

    def load(self, c, idx):
        v = c.b.load(self.address(c, idx))
        if self.dtype.kind == "b":
            v = c.b.trunc(v, I1)
        return v

    def store(self, c, idx, v):
        if self.dtype.kind == "b":
            v = c.b.zext(v, I8)
        c.b.store(v, self.address(c, idx))

    def at(self, c, i):
        """The buffer of `self[i]` (leading index `i`, an IR i64): a view."""
        inner = self.shape[1:]
        ptr = c.b.gep(self.ptr, [c.b.mul(i, _i64(_size(inner)))])
        return Buffer(ptr, inner, self.dtype)


class Gen(Value):
    """An elemental generator: `fn(idx)` emits the element at `idx`."""

    __slots__ = ("fn", "expensive")

    def __init__(self, shape, dtype, fn, expensive):
        self.shape, self.dtype, self.fn = tuple(shape), np.dtype(dtype), fn
        self.expensive = expensive

    def load(self, c, idx):
        return self.fn(idx)


class _Frame:
    """Memory of one function: stack slots in the entry block, and one heap block for
    the large buffers (carved at fixed offsets, allocated at entry, freed at exit)."""

    def __init__(self, function, entry):
        self.function = function
        self.entry = entry
        self.alloca_builder = ir.IRBuilder(entry)
        self.heap_requests = []  # (offset, ptr placeholder (bitcast), type)
        self.heap_bytes = 0

    def stack(self, t, count=1):
        b = self.alloca_builder
        b.position_at_start(self.entry)
        slot = b.alloca(t, size=None if count == 1 else _i64(count))
        slot.align = _ALIGN if count > 1 else None
        return slot


class FunctionCompiler:
    """Emits one jaxpr as the body of `i32 name(i8** ins, i8** outs, i8** consts)`."""

    def __init__(self, closed: ClosedJaxpr, name="jaxpr_fun"):
        self.closed = closed
        self.module = ir.Module(name=name)
        self.module.triple = engine.triple()
        self.module.data_layout = engine.data_layout()
        i8pp = I8.as_pointer().as_pointer()
        fnty = ir.FunctionType(I32, [i8pp, i8pp, i8pp])
        self.function = ir.Function(self.module, fnty, name=name)
        self.name = name
        self.entry = self.function.append_basic_block("entry")
        self.frame = _Frame(self.function, self.entry)
        start = self.function.append_basic_block("start")
        self.b = ir.IRBuilder(start)
        self.consts = []  # the arrays passed by pointer, in `consts` order
        self._const_ids = {}
        self._const_ptrs = {}

    # -- memory ------------------------------------------------------------------------
    def alloc(self, shape, dtype):
        """A new buffer of `shape` and `dtype` (valid for the whole function)."""
        t = memory_type(dtype)
        count = max(_size(shape), 1)
        nbytes = count * np.dtype(dtype).itemsize
        if nbytes <= _STACK_BYTES:
            return Buffer(self.frame.stack(t, count), shape, dtype)
        offset = self.frame.heap_bytes
        self.frame.heap_bytes += -(-nbytes // _ALIGN) * _ALIGN
        placeholder = self._heap_pointer(offset, t)
        return Buffer(placeholder, shape, dtype)

    def _heap_pointer(self, offset, t):
        # The heap block's base is loaded from a slot filled at entry (`finish`).
        if not hasattr(self, "_heap_slot"):
            self._heap_slot = self.frame.stack(I8.as_pointer())
        b = self.frame.alloca_builder
        b.position_at_end(self.entry)
        base = b.load(self._heap_slot)
        return b.bitcast(b.gep(base, [_i64(offset)]), t.as_pointer())

    def slot(self, dtype):
        return self.frame.stack(value_type(dtype))

    def constant_value(self, value, aval_dtype=None):
        value = np.asarray(value)
        dtype = np.dtype(aval_dtype) if aval_dtype is not None else value.dtype
        _check_dtype(dtype, "a constant")
        if value.ndim == 0:
            return Scalar(constant(dtype, value[()]), dtype)
        key = id(value)
        if key not in self._const_ids:
            self._const_ids[key] = len(self.consts)
            self.consts.append(np.ascontiguousarray(value, dtype))
        k = self._const_ids[key]
        ptr = self._const_ptrs.get(k)
        if ptr is None:
            b = self.frame.alloca_builder
            b.position_at_end(self.entry)
            raw = b.load(b.gep(self.function.args[2], [_i64(k)]))
            ptr = self._const_ptrs[k] = b.bitcast(raw, memory_type(dtype).as_pointer())
        return Buffer(ptr, value.shape, dtype)

    # -- indices and loops -------------------------------------------------------------
    def flat_index(self, idx, shape):
        if not shape:
            return _i64(0)
        flat = None
        for i, s in zip(idx, _strides(shape)):
            term = i if s == 1 else self.b.mul(i, _i64(s))
            flat = term if flat is None else self.b.add(flat, term)
        return flat

    def for_range(self, n, body):
        """Emits `for i in range(n): body(i)` (i an i64 IR value)."""
        if n <= 0:
            return
        if n == 1:
            body(_i64(0))
            return
        b = self.b
        pre = b.block
        header = b.append_basic_block("loop")
        after = b.append_basic_block("loop_end")
        b.branch(header)
        b.position_at_end(header)
        i = b.phi(I64)
        i.add_incoming(_i64(0), pre)
        body(i)
        nxt = b.add(i, _i64(1))
        i.add_incoming(nxt, b.block)
        b.cbranch(b.icmp_unsigned("<", nxt, _i64(n)), header, after)
        b.position_at_end(after)

    def loop_nest(self, shape, body):
        """Emits `body(idx)` for every index of `shape`, row-major."""

        def level(k, idx):
            if k == len(shape):
                body(idx)
                return
            self.for_range(shape[k], lambda i: level(k + 1, [*idx, i]))

        level(0, [])

    # -- values ------------------------------------------------------------------------
    def materialize(self, v, dest=None):
        """`v` as a Buffer (a new one, or `dest`)."""
        if isinstance(v, Buffer) and dest is None:
            return v
        if dest is None:
            dest = self.alloc(v.shape, v.dtype)
        self.loop_nest(v.shape, lambda idx: dest.store(self, idx, v.load(self, idx)))
        return dest

    def cheap(self, v):
        """`v` if reading an element costs a load, else `v` materialised."""
        return self.materialize(v) if v.expensive else v

    def scalar(self, v):
        if isinstance(v, Scalar):
            return v
        return Scalar(v.load(self, []), v.dtype)

    # -- jaxprs ------------------------------------------------------------------------
    def emit_jaxpr(self, jaxpr, consts, args):
        """Emit `jaxpr` (a Jaxpr or ClosedJaxpr) on Values; returns its output Values."""
        if isinstance(jaxpr, ClosedJaxpr):
            consts = [self.constant_value(c) for c in jaxpr.consts]
            jaxpr = jaxpr.jaxpr
        env = {}
        for v, x in zip(jaxpr.constvars, consts):
            env[v] = x
        for v, x in zip(jaxpr.invars, args):
            env[v] = x
        uses = collections.Counter(
            v for e in jaxpr.eqns for v in e.invars if type(v) is not Literal
        )
        uses.update(v for v in jaxpr.outvars if type(v) is not Literal)

        def read(x):
            if type(x) is Literal:
                return self.constant_value(x.val, x.aval.dtype)
            return env[x]

        for eqn in jaxpr.eqns:
            op = native_rules.get(eqn.primitive)
            if op is None:
                raise Unsupported(f"no native rule for primitive {eqn.primitive.name}")
            for v in (*eqn.invars, *eqn.outvars):
                if hasattr(v.aval, "dtype") and hasattr(v.aval, "shape"):
                    _check_dtype(v.aval.dtype, eqn.primitive.name)
                else:
                    raise Unsupported(f"{eqn.primitive.name}: operand of {v.aval}")
            rule = OPS.get(op)
            if rule is None:
                if not hasattr(Elemental, op) and op not in _ELEMENTAL_LIBM:
                    raise Unsupported(f"native op {op!r} is not implemented")
                outs = _elementwise(self, eqn, op, *map(read, eqn.invars))
            else:
                outs = rule(self, eqn, *map(read, eqn.invars), **eqn.params)
            for v, x in zip(eqn.outvars, outs):
                if not v.aval.shape and not isinstance(x, Scalar):
                    x = self.scalar(x)
                elif x.expensive and uses[v] > 1:
                    x = self.materialize(x)
                env[v] = x
        return [read(x) for x in jaxpr.outvars]

    def emit_call(self, closed, args):
        if isinstance(closed, Jaxpr):
            return self.emit_jaxpr(closed, [], args)
        return self.emit_jaxpr(closed, None, args)

    # -- the function ------------------------------------------------------------------
    def compile_ir(self):
        """Emit the whole function; returns the module's IR text."""
        jaxpr = self.closed.jaxpr
        b = self.b
        ins, outs = self.function.args[0], self.function.args[1]
        args = []
        for k, v in enumerate(jaxpr.invars):
            aval = v.aval
            _check_dtype(aval.dtype, "an argument")
            raw = b.load(b.gep(ins, [_i64(k)]))
            ptr = b.bitcast(raw, memory_type(aval.dtype).as_pointer())
            buf = Buffer(ptr, aval.shape, aval.dtype)
            args.append(self.scalar(buf) if not aval.shape else buf)
        results = self.emit_call(self.closed, args)
        for k, (v, x) in enumerate(zip(jaxpr.outvars, results)):
            raw = b.load(b.gep(outs, [_i64(k)]))
            ptr = b.bitcast(raw, memory_type(v.aval.dtype).as_pointer())
            self.materialize(x, Buffer(ptr, v.aval.shape, v.aval.dtype))
        self._finish()
        return str(self.module)

    def _finish(self):
        b = self.b
        heap = self.frame.heap_bytes
        if heap:
            free = _declare(self.module, "free", ir.VoidType(), [I8.as_pointer()])
            b.call(free, [b.load(self._heap_slot)])
        b.ret(ir.Constant(I32, 0))
        # The entry block: allocas, the heap block, then on to the body.
        eb = ir.IRBuilder(self.entry)
        eb.position_at_end(self.entry)
        start = self.function.blocks[1]
        if heap:
            malloc = _declare(self.module, "malloc", I8.as_pointer(), [I64])
            # The heap slot is filled before anything loads it: put the call first.
            eb.position_at_start(self.entry)
            first_load = next(
                ins
                for ins in self.entry.instructions
                if isinstance(ins, ir.LoadInstr) and ins.operands[0] is self._heap_slot
            )
            eb.position_before(first_load)
            base = eb.call(malloc, [_i64(heap)])
            eb.store(base, self._heap_slot)
            failed = self.function.append_basic_block("out_of_memory")
            eb.position_at_end(self.entry)
            is_null = eb.icmp_unsigned("==", base, ir.Constant(I8.as_pointer(), None))
            eb.cbranch(is_null, failed, start)
            fb = ir.IRBuilder(failed)
            fb.ret(ir.Constant(I32, 1))
        else:
            eb.branch(start)


def _declare(module, name, ret, args):
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret, args), name)
    return fn


def _check_dtype(dtype, where):
    if np.dtype(dtype) not in SUPPORTED_DTYPES:
        raise Unsupported(f"{where}: dtype {np.dtype(dtype)} is not compiled natively")


# ----------------------------------------------------------------------------------------
# Elementwise ops: a generator of the operands' elements.

_ELEMENTAL_LIBM = frozenset(
    {"tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh"}
    | {"log1p", "expm1", "cbrt", "erf", "erfc", "lgamma"}
)
_FLOAT32_ONLY = frozenset({"erf_inv"})


def _elementwise(c, eqn, op, *args):
    in_dtype = args[-1].dtype if op == "select_n" else args[0].dtype
    (out_var,) = eqn.outvars
    out_aval = out_var.aval
    if op in _FLOAT32_ONLY and in_dtype != np.float32:
        raise Unsupported(f"{op} on {in_dtype}")
    if op in _ELEMENTAL_LIBM | {"pow", "atan2", "nextafter", "fma"} and (
        in_dtype.kind != "f"
    ):
        raise Unsupported(f"{op} on {in_dtype}")
    params = eqn.params
    out_dtype = out_aval.dtype

    def element(idx):
        em = Elemental(c.b, in_dtype, out_dtype, params)
        xs = [a.load(c, _operand_index(a.shape, idx)) for a in args]
        return getattr(em, op)(*xs)

    if not out_aval.shape:
        return [Scalar(element([]), out_dtype)]
    args = [c.cheap(a) if _replicates(a, out_aval.shape) else a for a in args]
    return [Gen(out_aval.shape, out_dtype, element, True)]


def _operand_index(shape, idx):
    """Where an operand of `shape` is read for output index `idx`: lax broadcasts
    rank-0 operands and size-1 dimensions of operands of the output's rank."""
    if not shape:
        return []
    return [_i64(0) if n == 1 else i for n, i in zip(shape, idx)]


def _replicates(v, shape):
    """Whether reading `v` at every index of `shape` reads some element many times."""
    return v.expensive and v.shape != tuple(shape)


# ----------------------------------------------------------------------------------------
# Structural ops: index arithmetic over the operand's generator.


class _Remap(Gen):
    """A generator reading `operand` at `index_map(idx)`."""

    __slots__ = ()

    def __init__(self, c, operand, shape, index_map):
        def fn(idx):
            return operand.load(c, index_map(idx))

        super().__init__(shape, operand.dtype, fn, operand.expensive)


def _broadcast_in_dim(c, eqn, x, *dyn, shape, broadcast_dimensions, sharding=None):
    if dyn:
        raise Unsupported("broadcast_in_dim with dynamic shapes")
    if _size(shape) > _size(x.shape):
        x = c.cheap(x)
    if not x.shape:
        return [Gen(shape, x.dtype, lambda idx: x.load(c, []), False)]

    def index_map(idx):
        return [
            _i64(0) if x.shape[i] == 1 else idx[d]
            for i, d in enumerate(broadcast_dimensions)
        ]

    return [_Remap(c, x, shape, index_map)]


def _unflatten(c, flat, shape):
    idx = []
    for s in reversed(shape):
        if s == 1:
            idx.append(_i64(0))
            continue
        idx.append(c.b.urem(flat, _i64(s)))
        flat = c.b.udiv(flat, _i64(s))
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
                idx[pairs[i]] if i in pairs else _i64(0) for i in range(len(x.shape))
            ]

        return _Remap(c, x, shape, index_map)
    return _Remap(
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
    return [_Remap(c, x, shape, lambda idx: [idx[int(k)] for k in inverse])]


def _slice(c, eqn, x, *, start_indices, limit_indices, strides=None):
    shape = eqn.outvars[0].aval.shape
    strides = strides or (1,) * len(shape)

    def index_map(idx):
        out = []
        for i, start, stride in zip(idx, start_indices, strides):
            if stride != 1:
                i = c.b.mul(i, _i64(stride))
            out.append(c.b.add(i, _i64(start)) if start else i)
        return out

    return [_Remap(c, x, shape, index_map)]


def _rev(c, eqn, x, *, dimensions):
    dims = set(dimensions)

    def index_map(idx):
        return [
            c.b.sub(_i64(x.shape[k] - 1), i) if k in dims else i
            for k, i in enumerate(idx)
        ]

    return [_Remap(c, x, x.shape, index_map)]


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
        out = None
        for x, start in zip(operands, bounds):
            n = x.shape[dimension]
            local = b.sub(i, _i64(start)) if start else i
            if len(operands) > 1:
                # Clamp to the operand's range: every operand is read, one is chosen.
                clamped = b.select(b.icmp_signed("<", local, _i64(0)), _i64(0), local)
                clamped = b.select(
                    b.icmp_signed(">=", clamped, _i64(n)), _i64(n - 1), clamped
                )
            else:
                clamped = local
            v = x.load(c, [*idx[:dimension], clamped, *idx[dimension + 1 :]])
            if out is None:
                out = v
            else:
                out = b.select(b.icmp_signed(">=", i, _i64(start)), v, out)
        return out

    return Gen(out_shape, dtype, fn, False)


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
                c.b.add(i, _i64(start)) if k == axis and start else i
                for k, i in enumerate(idx)
            ]

        outs.append(_Remap(c, x, v.aval.shape, index_map))
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
            j = b.sub(i, _i64(lo))
            step = interior + 1
            q = b.sdiv(j, _i64(step)) if step != 1 else j
            ok = b.icmp_signed(">=", j, _i64(0))
            ok = b.and_(ok, b.icmp_signed("<", q, _i64(n)))
            if step != 1:
                ok = b.and_(ok, b.icmp_signed("==", b.srem(j, _i64(step)), _i64(0)))
            valid = b.and_(valid, ok)
            src.append(b.select(ok, q, _i64(0)))
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
        hi = _i64(n - size)
        v = b.select(b.icmp_signed("<", v, _i64(0)), _i64(0), v)
        out.append(b.select(b.icmp_signed(">", v, hi), hi, v))
    return out


def _dynamic_slice(c, eqn, x, *starts, slice_sizes):
    starts = _clamped_starts(c, starts, x.shape, slice_sizes)
    return [
        _Remap(
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
    "reduce_and": ("and_", 1),
    "reduce_or": ("or_", 0),
    "reduce_xor": ("xor", 0),
}


def _identity(dtype, which):
    dtype = np.dtype(dtype)
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
        axes = tuple(sorted(axes))
        kept = [d for d in range(len(x.shape)) if d not in axes]
        red_shape = tuple(x.shape[d] for d in axes)
        dtype = x.dtype
        if dtype.kind == "b" and op in ("max", "min"):
            raise Unsupported(f"{name} of booleans")
        slot = c.slot(dtype)
        start = constant(dtype, _identity(dtype, init))

        def fn(idx):
            c.b.store(start, slot)

            def body(ridx):
                full = [None] * len(x.shape)
                for d, i in zip(kept, idx):
                    full[d] = i
                for d, i in zip(axes, ridx):
                    full[d] = i
                acc = c.b.load(slot)
                c.b.store(_accumulate(c, dtype, op, acc, x.load(c, full)), slot)

            c.loop_nest(red_shape, body)
            return c.b.load(slot)

        return [Gen(eqn.outvars[0].aval.shape, dtype, fn, True)]

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
            c.b.store(x.load(c, [*idx[:axis], _i64(0), *idx[axis:]]), best)
            b.store(_i64(0), where)

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

        return [Gen(eqn.outvars[0].aval.shape, out_dtype, fn, True)]

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
                j = b.sub(_i64(n - 1), i) if reverse else i
                full = [*idx[:axis], j, *idx[axis:]]
                v = x.load(c, full)
                first = b.icmp_unsigned("==", i, _i64(0))
                acc = getattr(Elemental(b, x.dtype), op)(b.load(slot), v)
                acc = b.select(first, v, acc)
                b.store(acc, slot)
                out.store(c, full, acc)

            c.for_range(n, body)

        c.loop_nest(outer, line)
        return [out]

    return rule


_DOT_LIMIT = 1 << 22  # multiply-adds; larger products stay on the NumPy tier (BLAS)


def _dot_general(
    c, eqn, lhs, rhs, *, dimension_numbers, preferred_element_type=None, **_
):
    (lc, rc), (lb, rb) = dimension_numbers
    out_aval = eqn.outvars[0].aval
    out_dtype = np.dtype(out_aval.dtype)
    contract_shape = tuple(lhs.shape[d] for d in lc)
    if _size(out_aval.shape) * _size(contract_shape) > _DOT_LIMIT:
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
            lidx = [None] * len(lhs.shape)
            ridx = [None] * len(rhs.shape)
            for d, i in zip(lb, batch):
                lidx[d] = i
            for d, i in zip(rb, batch):
                ridx[d] = i
            for d, i in zip(lf, li):
                lidx[d] = i
            for d, i in zip(rf, ri):
                ridx[d] = i
            for d, i in zip(lc, k):
                lidx[d] = i
            for d, i in zip(rc, k):
                ridx[d] = i
            x = convert(b, lhs.load(c, lidx), lhs.dtype, out_dtype)
            y = convert(b, rhs.load(c, ridx), rhs.dtype, out_dtype)
            em = Elemental(b, out_dtype)
            prod = em.and_(x, y) if out_dtype.kind == "b" else em.mul(x, y)
            acc = b.load(slot)
            if out_dtype.kind == "b":
                b.store(b.or_(acc, prod), slot)
            else:
                b.store(_accumulate(c, out_dtype, "add", acc, prod), slot)

        c.loop_nest(contract_shape, body)
        return c.b.load(slot)

    return [Gen(out_aval.shape, out_dtype, fn, True)]


# ----------------------------------------------------------------------------------------
# Control flow and calls.


def _call(param):
    def rule(c, eqn, *args, **params):
        return c.emit_call(params[param], args)

    return rule


def _carry_slots(c, values):
    """Storage for loop-carried values: a stack slot per scalar, a buffer per array,
    each filled with its initial value."""
    slots = []
    for v in values:
        if not v.shape:
            slot = c.slot(v.dtype)
            c.b.store(v.load(c, []), slot)
        else:
            slot = c.materialize(v, c.alloc(v.shape, v.dtype))
        slots.append(slot)
    return slots


def _read_carry(c, slots, dtypes):
    return [
        Scalar(c.b.load(s), d) if not isinstance(s, Buffer) else s
        for s, d in zip(slots, dtypes)
    ]


def _write_carry(c, slots, values):
    """Store a loop body's new carry: arrays go through fresh buffers first, since
    they may read the old carry."""
    staged = []
    for s, v in zip(slots, values):
        if isinstance(s, Buffer):
            fresh = (
                v
                if _independent(v, slots)
                else c.materialize(v, c.alloc(v.shape, v.dtype))
            )
            staged.append(fresh)
        else:
            staged.append(v.load(c, []))
    for s, v in zip(slots, staged):
        if isinstance(s, Buffer):
            if v is not s:
                c.materialize(v, s)
        else:
            c.b.store(v, s)


def _independent(v, slots):
    """Whether `v` is a buffer that is none of the carry buffers `slots`."""
    return isinstance(v, Buffer) and all(
        v.ptr is not s.ptr for s in slots if isinstance(s, Buffer)
    )


def _while(c, eqn, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cconsts = [c.cheap(a) for a in args[:cond_nconsts]]
    bconsts = [c.cheap(a) for a in args[cond_nconsts : cond_nconsts + body_nconsts]]
    init = args[cond_nconsts + body_nconsts :]
    dtypes = [v.dtype for v in init]
    slots = _carry_slots(c, init)
    b = c.b
    header = b.append_basic_block("while_cond")
    body = b.append_basic_block("while_body")
    after = b.append_basic_block("while_end")
    b.branch(header)
    b.position_at_end(header)
    (pred,) = c.emit_call(cond_jaxpr, [*cconsts, *_read_carry(c, slots, dtypes)])
    c.b.cbranch(c.scalar(pred).value, body, after)
    c.b.position_at_end(body)
    new = c.emit_call(body_jaxpr, [*bconsts, *_read_carry(c, slots, dtypes)])
    _write_carry(c, slots, new)
    c.b.branch(header)
    c.b.position_at_end(after)
    return _read_carry(c, slots, dtypes)


def _scan(c, eqn, *args, jaxpr, length, num_consts, num_carry, reverse, unroll=1, **_):
    consts = [c.cheap(a) for a in args[:num_consts]]
    init = args[num_consts : num_consts + num_carry]
    xs = [c.materialize(a) for a in args[num_consts + num_carry :]]
    dtypes = [v.dtype for v in init]
    slots = _carry_slots(c, init)
    ys_avals = [v.aval for v in eqn.outvars[num_carry:]]
    ys = [c.alloc(a.shape, a.dtype) for a in ys_avals]

    def step(i):
        b = c.b
        t = b.sub(_i64(length - 1), i) if reverse else i
        x_t = [x.at(c, t) for x in xs]
        x_t = [c.scalar(x) if not x.shape else x for x in x_t]
        outs = c.emit_call(jaxpr, [*consts, *_read_carry(c, slots, dtypes), *x_t])
        for y, v in zip(ys, outs[num_carry:]):
            c.materialize(v, y.at(c, t))
        _write_carry(c, slots, outs[:num_carry])

    c.for_range(length, step)
    return [*_read_carry(c, slots, dtypes), *ys]


def _cond(c, eqn, index, *args, branches):
    b = c.b
    out_avals = [v.aval for v in eqn.outvars]
    slots = [
        c.alloc(a.shape, a.dtype) if a.shape else c.slot(a.dtype) for a in out_avals
    ]
    args = [c.cheap(a) for a in args]
    which = c.scalar(index).value
    if which.type == I1:
        which = b.zext(which, I32)
    n = len(branches)
    which = convert(b, which, np.dtype(f"int{which.type.width}"), np.int64)
    which = b.select(b.icmp_signed("<", which, _i64(0)), _i64(0), which)
    which = b.select(b.icmp_signed(">", which, _i64(n - 1)), _i64(n - 1), which)
    after = b.append_basic_block("cond_end")
    blocks = [b.append_basic_block(f"branch{k}") for k in range(n)]
    switch = b.switch(which, blocks[-1])
    for k, block in enumerate(blocks[:-1]):
        switch.add_case(_i64(k), block)
    for branch, block in zip(branches, blocks):
        c.b.position_at_end(block)
        outs = c.emit_call(branch, args)
        for s, v in zip(slots, outs):
            if isinstance(s, Buffer):
                c.materialize(v, s)
            else:
                c.b.store(v.load(c, []), s)
        c.b.branch(after)
    c.b.position_at_end(after)
    return _read_carry(c, slots, [a.dtype for a in out_avals])


def _identity_op(c, eqn, *args, **params):
    return list(args)


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
    "while": _while,
    "scan": _scan,
    "cond": _cond,
    "call": _call("jaxpr"),
    "custom_call": _call("call_jaxpr"),
    "identity": _identity_op,
}
