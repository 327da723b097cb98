"""What a jaxpr value is while the native backend emits it, and small IR helpers.

Every jaxpr variable becomes a `Value` of its aval's static shape:

- a `Scalar`, an SSA register (every 0-d value: a loop over scalars never touches
  memory);
- a `Buffer`, a pointer to a contiguous row-major array (inputs, constants, and what
  was materialised);
- a `Gen`, XLA's elemental generator: a function emitting the IR of the element at an
  index. Elementwise operations, broadcasts, slices, transposes, reductions and dot
  products are generators of their operands' generators, so a chain of them fuses
  into the loop nest of whoever finally reads it, with no temporaries between.

An op reads an operand with `value.load(c, idx)` (`c` the `FunctionCompiler`, whose
builder `c.b` emits at the current point) and returns Values of its own.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir

from jaxlite.backend.native.scalar import I1, I8, I64


def size(shape):
    return math.prod(shape)


def strides(shape):
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return tuple(reversed(strides))


def i64(n):
    return ir.Constant(I64, int(n))


class Value:
    """A jaxpr value in the function being emitted (see the module docstring)."""

    __slots__ = ("shape", "dtype")
    expensive = False

    def load(self, c, idx):
        raise NotImplementedError


class Scalar(Value):
    __slots__ = ("value",)
    cuts = ()

    def __init__(self, value, dtype):
        self.shape, self.dtype, self.value = (), np.dtype(dtype), value

    def load(self, c, idx):
        return self.value


class Buffer(Value):
    """A contiguous row-major array at `ptr` (a pointer to its memory type)."""

    __slots__ = ("ptr",)
    cuts = ()

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
        ptr = c.b.gep(self.ptr, [c.b.mul(i, i64(size(inner)))])
        return Buffer(ptr, inner, self.dtype)


class Gen(Value):
    """An elemental generator: `fn(idx)` emits the element at `idx`.

    `cuts`: indices along the last axis where the element's formula changes (where
    one operand of a concatenation ends and the next begins). A loop over the last
    axis is split there (`FunctionCompiler.loop_nest`): within each piece LLVM folds
    the choice of operand away, and the loop vectorises as a plain one."""

    __slots__ = ("fn", "expensive", "cuts")

    def __init__(self, shape, dtype, fn, expensive, cuts=()):
        self.shape, self.dtype, self.fn = tuple(shape), np.dtype(dtype), fn
        self.expensive = expensive
        self.cuts = cuts

    def load(self, c, idx):
        return self.fn(idx)


class Reduction(Gen):
    """A generator whose element is an inner loop (a reduction, a dot product).

    `tile`, when given, computes the `tile_rank` trailing axes at once:
    `tile(lead_idx)` emits one pass of the inner loop that accumulates every element
    of `self[lead_idx]` (an array of at most `TILE` elements) and returns their values
    in row-major order. A reduction over a middle axis (`sum(x, axis=1)` of a 16×16×3
    array) reads its operand contiguously so, with a few accumulators in registers,
    where one element at a time it would read with a stride."""

    __slots__ = ("tile", "tile_rank")
    TILE = 8

    def __init__(self, shape, dtype, fn, expensive, tile=None, tile_rank=0):
        super().__init__(shape, dtype, fn, expensive)
        self.tile, self.tile_rank = tile, tile_rank


class Remap(Gen):
    """A generator reading `operand` at `index_map(idx)`."""

    __slots__ = ()

    def __init__(self, c, operand, shape, index_map):
        def fn(idx):
            return operand.load(c, index_map(idx))

        super().__init__(shape, operand.dtype, fn, operand.expensive)


def merged_cuts(out_shape, operands):
    """The cuts of an elementwise result: those of each operand that spans the
    result's last axis (see `Gen`)."""
    n = out_shape[-1] if out_shape else 1
    found = set()
    for x in operands:
        if x.shape and x.shape[-1] == n and len(x.shape) == len(out_shape):
            found.update(x.cuts)
    return tuple(sorted(found))


def operand_index(shape, idx):
    """Where an operand of `shape` is read for output index `idx`: lax broadcasts
    rank-0 operands and size-1 dimensions of operands of the output's rank."""
    if not shape:
        return []
    return [i64(0) if n == 1 else i for n, i in zip(shape, idx)]


def declare(module, name, ret, args):
    """The declaration of external function `name` in `module` (once)."""
    fn = module.globals.get(name)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret, args), name)
    return fn
