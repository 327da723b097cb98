"""A jaxpr becomes one LLVM function: emission, fusion decisions, memory.

`FunctionCompiler` walks the jaxpr and gives every variable a `Value` (`values.py`):
a register for 0-d values, a buffer in memory, or an elemental generator that fuses
into whoever reads it. A generator is materialised into a buffer (one loop nest)
where recomputing it would cost more than storing it: when it is read more than once,
when it is a carried loop value or an output, or when an operation reads its elements
many times (a dot product's operands). Buffers of up to `_STACK_BYTES` live on the
stack, larger ones in one heap block allocated at entry and freed at exit (`_Frame`).

What an op needs from the primitives is registered by `lax/` in
`jaxlite.backend.native.native_rules` (primitive -> op name); the ops are `OPS`:
elementwise ones are `scalar.Elemental`'s methods (`_elementwise` here), the others
live in `array_ops.py`, `control_flow.py` and `indexing_ops.py`. An equation the
backend cannot compile raises `Unsupported`, with the reason the fallback reports.
"""

from __future__ import annotations

import collections
import re

import numpy as np
from llvmlite import ir

from jaxlite.backend.native import (
    Unsupported,
    array_ops,
    control_flow,
    engine,
    host,
    indexing_ops,
    native_rules,
)
from jaxlite.backend.native.scalar import (
    I8,
    I32,
    I64,
    SUPPORTED_DTYPES,
    Elemental,
    constant,
    memory_type,
    value_type,
)
from jaxlite.backend.native.values import (
    Buffer,
    Gen,
    Reduction,
    Scalar,
    declare,
    i64,
    merged_cuts,
    operand_index,
    size,
    strides,
)
from jaxlite.core import ClosedJaxpr, Jaxpr, Literal

_STACK_BYTES = 1 << 14
_FULL_UNROLL_MAX = 8
_ALIGN = 64


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
        slot = b.alloca(t, size=None if count == 1 else i64(count))
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
        self._loop_ids = 0
        self._error = None
        self.consts = []  # the arrays passed by pointer, in `consts` order
        self._const_ids = {}
        self._const_ptrs = {}

    # -- memory ------------------------------------------------------------------------
    def alloc(self, shape, dtype):
        """A new buffer of `shape` and `dtype` (valid for the whole function)."""
        t = memory_type(dtype)
        count = max(size(shape), 1)
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
        return b.bitcast(b.gep(base, [i64(offset)]), t.as_pointer())

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
            raw = b.load(b.gep(self.function.args[2], [i64(k)]))
            ptr = self._const_ptrs[k] = b.bitcast(raw, memory_type(dtype).as_pointer())
        return Buffer(ptr, value.shape, dtype)

    # -- indices and loops -------------------------------------------------------------
    def flat_index(self, idx, shape):
        if not shape:
            return i64(0)
        flat = None
        for i, s in zip(idx, strides(shape)):
            term = i if s == 1 else self.b.mul(i, i64(s))
            flat = term if flat is None else self.b.add(flat, term)
        return flat

    def for_range(self, n, body, interleave=False):
        """Emits `for i in range(n): body(i)` (i an i64 IR value). `interleave` asks the
        vectoriser for several independent accumulators (a reduction's loop)."""
        if n <= 0:
            return
        if n == 1:
            body(i64(0))
            return
        b = self.b
        pre = b.block
        header = b.append_basic_block("loop")
        after = b.append_basic_block("loop_end")
        b.branch(header)
        b.position_at_end(header)
        i = b.phi(I64)
        i.add_incoming(i64(0), pre)
        body(i)
        nxt = b.add(i, i64(1))
        i.add_incoming(nxt, b.block)
        branch = b.cbranch(b.icmp_unsigned("<", nxt, i64(n)), header, after)
        if n > _FULL_UNROLL_MAX:
            # LLVM would unroll every loop with a constant trip count, nests included:
            # tens of times the code, slower to compile and to run. Long loops are
            # vectorised instead (the loop vectoriser ignores this hint).
            self._loop_ids += 1
            tag = f"jaxlite.loop.{self._loop_ids}" + (
                ".interleave" if interleave else ""
            )
            branch.set_metadata("llvm.loop", self.module.add_metadata([tag]))
        b.position_at_end(after)

    def loop_nest(self, shape, body, interleave=False, cuts=()):
        """Emits `body(idx)` for every index of `shape`, row-major (`interleave`: see
        `for_range`, for the innermost loop). The innermost loop is split at `cuts`
        (see `values.Gen`): one loop per piece."""

        def level(k, idx):
            if k == len(shape):
                body(idx)
                return
            if k < len(shape) - 1:
                self.for_range(shape[k], lambda i: level(k + 1, [*idx, i]))
                return
            bounds = [0, *cuts, shape[k]]
            for lo, hi in zip(bounds, bounds[1:]):

                def piece(i, lo=lo):
                    body([*idx, self.offset(i, lo)])

                self.for_range(hi - lo, piece, interleave)

        level(0, [])

    def offset(self, i, k):
        """`i + k` for an i64 `i` and a Python int `k`, folded when `i` is a constant
        (a one-element loop's index): then generators can choose statically."""
        if isinstance(i, ir.Constant):
            return i64(i.constant + k)
        return self.b.add(i, i64(k)) if k else i

    # -- values ------------------------------------------------------------------------
    def materialize(self, v, dest=None):
        """`v` as a Buffer (a new one, or `dest`)."""
        if isinstance(v, Buffer) and dest is None:
            return v
        if dest is None:
            dest = self.alloc(v.shape, v.dtype)
        if isinstance(v, Reduction) and v.tile is not None:
            rank = len(v.shape) - v.tile_rank
            inner = list(np.ndindex(v.shape[rank:]))

            def tile(idx):
                for k, value in zip(inner, v.tile(idx)):
                    dest.store(self, [*idx, *map(i64, k)], value)

            self.loop_nest(v.shape[:rank], tile)
            return dest
        self.loop_nest(
            v.shape, lambda idx: dest.store(self, idx, v.load(self, idx)), cuts=v.cuts
        )
        return dest

    def cheap(self, v):
        """`v` if reading an element costs a load, else `v` materialised."""
        return self.materialize(v) if v.expensive else v

    def scalar(self, v):
        if isinstance(v, Scalar):
            return v
        return Scalar(v.load(self, []), v.dtype)

    # -- jaxprs ------------------------------------------------------------------------
    def emit_jaxpr(self, jaxpr, consts, args, dests=None):
        """Emit `jaxpr` (a Jaxpr or ClosedJaxpr) on Values; returns its output Values.

        `dests[k]`, where given, is the buffer output k ends up in (a carry's next
        buffer, a function output): an output that must be materialised anyway is
        materialised there, and its copy saved."""
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
        home = {}
        for v, d in zip(jaxpr.outvars, dests or ()):
            if d is not None and type(v) is not Literal and v.aval.shape:
                home.setdefault(v, d)

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
                    x = self.materialize(x, home.get(v))
                env[v] = x
        return [read(x) for x in jaxpr.outvars]

    def emit_call(self, closed, args, dests=None):
        if isinstance(closed, Jaxpr):
            return self.emit_jaxpr(closed, [], args, dests)
        return self.emit_jaxpr(closed, None, args, dests)

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
            raw = engine.input_pointer(b, ins, k, aval)
            ptr = b.bitcast(raw, memory_type(aval.dtype).as_pointer())
            buf = Buffer(ptr, aval.shape, aval.dtype)
            args.append(self.scalar(buf) if not aval.shape else buf)
        out_buffers = []
        for k, v in enumerate(jaxpr.outvars):
            raw = engine.output_pointer(b, outs, k, v.aval)
            ptr = b.bitcast(raw, memory_type(v.aval.dtype).as_pointer())
            out_buffers.append(Buffer(ptr, v.aval.shape, v.aval.dtype))
        results = self.emit_call(self.closed, args, out_buffers)
        for x, out in zip(results, out_buffers):
            if x is not out:
                self.materialize(x, out)
        self._finish()
        return _loop_metadata(str(self.module))

    def error_block(self):
        """The block that returns `host.FAILED` (after a host call raised)."""
        if self._error is None:
            self._error = self.function.append_basic_block("failed")
        return self._error

    def _finish(self):
        b = self.b
        heap = self.frame.heap_bytes
        exits = [(b, 0)]
        if self._error is not None:
            exits.append((ir.IRBuilder(self._error), host.FAILED))
        for eb, status in exits:
            if heap:
                free = declare(self.module, "free", ir.VoidType(), [I8.as_pointer()])
                eb.call(free, [eb.load(self._heap_slot)])
            eb.ret(ir.Constant(I32, status))
        # The entry block: allocas, the heap block, then on to the body.
        eb = ir.IRBuilder(self.entry)
        eb.position_at_end(self.entry)
        start = self.function.blocks[1]
        if heap:
            malloc = declare(self.module, "malloc", I8.as_pointer(), [I64])
            # The heap slot is filled before anything loads it: put the call first.
            eb.position_at_start(self.entry)
            first_load = next(
                ins
                for ins in self.entry.instructions
                if isinstance(ins, ir.LoadInstr) and ins.operands[0] is self._heap_slot
            )
            eb.position_before(first_load)
            base = eb.call(malloc, [i64(heap)])
            eb.store(base, self._heap_slot)
            failed = self.function.append_basic_block("out_of_memory")
            eb.position_at_end(self.entry)
            is_null = eb.icmp_unsigned("==", base, ir.Constant(I8.as_pointer(), None))
            eb.cbranch(is_null, failed, start)
            fb = ir.IRBuilder(failed)
            fb.ret(ir.Constant(I32, 1))
        else:
            eb.branch(start)


_LOOP_TAG = re.compile(
    r'^(![0-9]+) = !\{ *!"jaxlite\.loop\.[0-9]+(\.interleave)?" *\}$', re.M
)


def _loop_metadata(text):
    """The IR with each tagged loop's metadata made a loop ID that disables unrolling,
    and for a reduction's loop asks for 4 interleaved accumulators (llvmlite cannot
    write the self-referencing node a loop ID needs)."""
    if not _LOOP_TAG.search(text):
        return text

    def loop_id(m):
        hints = "!9999999, !9999998" if m.group(2) else "!9999999"
        return f"{m.group(1)} = distinct !{{{m.group(1)}, {hints}}}"

    return _LOOP_TAG.sub(loop_id, text) + (
        '\n!9999999 = !{!"llvm.loop.unroll.disable"}'
        '\n!9999998 = !{!"llvm.loop.interleave.count", i32 4}\n'
    )


def _check_dtype(dtype, where):
    try:
        supported = np.dtype(dtype) in SUPPORTED_DTYPES
    except TypeError:  # tokens, key types: not NumPy dtypes
        supported = False
    if not supported:
        raise Unsupported(f"{where}: dtype {dtype} is not compiled natively")


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
    out_dtype = out_aval.dtype
    if op == "bitcast_convert_type" and (
        out_dtype.itemsize != in_dtype.itemsize or "b" in in_dtype.kind + out_dtype.kind
    ):  # a shape-changing bitcast stays on NumPy
        raise Unsupported(f"bitcast_convert_type from {in_dtype} to {out_dtype}")
    params = eqn.params

    def element(idx):
        em = Elemental(c.b, in_dtype, out_dtype, params)
        xs = [a.load(c, operand_index(a.shape, idx)) for a in args]
        return getattr(em, op)(*xs)

    if not out_aval.shape:
        return [Scalar(element([]), out_dtype)]
    # An operand with an inner loop per element (a reduction, a dot product) is
    # materialised first: with it inside, this op's loop would not vectorise.
    args = [
        c.materialize(a)
        if isinstance(a, Reduction) or _replicates(a, out_aval.shape)
        else a
        for a in args
    ]
    cuts = merged_cuts(out_aval.shape, args)
    return [Gen(out_aval.shape, out_dtype, element, True, cuts)]


def _replicates(v, shape):
    """Whether reading `v` at every index of `shape` reads some element many times."""
    return v.expensive and v.shape != tuple(shape)


OPS = {**array_ops.OPS, **control_flow.OPS, **indexing_ops.OPS}
