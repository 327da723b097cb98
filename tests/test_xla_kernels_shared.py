"""XLA's float32 kernels are written once (jaxlite/backend/xla_kernels.py) and run by
several interpreters of one arithmetic `m`: NumPy arrays and Python floats
(jaxlite.lax.xla_float32, eager) and LLVM IR (jaxlite.backend.native.xla_math,
compiled). Each interpreter must implement every operation the kernels use, with the
same roundings: every kernel, run on IR values and compiled, gives the eager kernel's
bits and JAX's, including those the native backend does not emit yet (asin, tan,
pow, ...), so the IR arithmetic is complete for any kernel added later.
"""

from __future__ import annotations

import ast
import ctypes
import inspect
import warnings

import numpy as np
import pytest

pytest.importorskip("llvmlite")

from llvmlite import ir  # noqa: E402

from jaxlite.backend import xla_kernels  # noqa: E402
from jaxlite.backend.native import engine, xla_math  # noqa: E402
from jaxlite.backend.native.scalar import F32, I32, I64  # noqa: E402
from jaxlite.lax import xla_float32  # noqa: E402

F = np.float32
TINY = np.finfo(F).tiny
N = 8 * 1024  # a multiple of 1024: JAX's results depend on the size below ~64


def _imports(module):
    """The top-level names of the modules `module` imports."""
    names = set()
    for node in ast.walk(ast.parse(inspect.getsource(module))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_kernels_module_is_importable_by_lax_and_the_native_backend():
    # Below both users: plain NumPy, no llvmlite, nothing from lax.
    assert _imports(xla_kernels) <= {"__future__", "numpy"}
    assert not any(name.startswith("jaxlite.lax") for name in _imports(xla_math))


def test_native_kernels_are_the_shared_kernels():
    # One definition: the native emitters run the shared kernels, they have none of
    # their own (no second copy of a coefficient table to drift).
    assert set(xla_math.KERNELS) <= set(xla_kernels.KERNELS)
    tables = [v for v in vars(xla_math).values() if isinstance(v, tuple)]
    assert all(not any(isinstance(c, float) for c in t) for t in tables)


def _compiled(name, arity):
    """`out[i] = kernel(x[i], ...)` for N elements, the kernel run on `IRMath`."""
    module = ir.Module(name=name)
    module.triple = engine.triple()
    module.data_layout = engine.data_layout()
    ptr = F32.as_pointer()
    fn = ir.Function(module, ir.FunctionType(I32, [ptr] * 3), f"kernel_{name}")
    entry = fn.append_basic_block("entry")
    loop = fn.append_basic_block("loop")
    done = fn.append_basic_block("done")
    b = ir.IRBuilder(entry)
    b.branch(loop)
    b.position_at_end(loop)
    i = b.phi(I64)
    i.add_incoming(ir.Constant(I64, 0), entry)
    args = [b.load(b.gep(p, [i])) for p in fn.args[:arity]]
    out = xla_kernels.KERNELS[name](*args, xla_math.IRMath(b))
    b.store(out, b.gep(fn.args[2], [i]))
    following = b.add(i, ir.Constant(I64, 1))
    i.add_incoming(following, loop)
    b.cbranch(b.icmp_unsigned("<", following, ir.Constant(I64, N)), loop, done)
    b.position_at_end(done)
    b.ret(ir.Constant(I32, 0))
    text = str(module)
    assert "br i1" in text and text.count("br ") == 2  # the loop's: the kernel has none
    return engine.load(engine.optimize(text), f"kernel_{name}")


def _run(function, *args):
    out = np.empty(N, F)
    pointers = [a.ctypes.data for a in args] + [None] * (2 - len(args))
    function(*(ctypes.c_void_p(p) for p in pointers[:2]), out.ctypes.data)
    return out


def _inputs(name, seed):
    """Normal floats, zeros, infinities and NaN (no subnormals: the C library reads a
    subnormal its own way under XLA's flags, which the eager calls set and compiled
    code does not)."""
    rng = np.random.default_rng(seed)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, TINY, -TINY, 1.0, -1.0, 0.5, 2.0]
    special += [20.0, -20.0, 88.72, -87.3, 4e-4, 0.41421357, 2.0**64, 3e38, -3e38]
    bits = rng.integers(0, 2**32, 2048, dtype=np.uint64).astype(np.uint32).view(F)
    parts = [np.array(special, F), bits, rng.uniform(-10, 10, 2048).astype(F)]
    parts.append(rng.uniform(-1, 1, 2048).astype(F))
    x = np.concatenate(parts)
    x = np.concatenate([x, rng.uniform(-3, 3, N - x.size).astype(F)])
    return np.where(np.abs(x) < TINY, F(0), x).astype(F)


def _assert_bits_equal(actual, expected, inputs):
    same = actual.view(np.uint32) == np.asarray(expected, F).view(np.uint32)
    same |= np.isnan(actual) & np.isnan(expected)
    bad = np.flatnonzero(~same)[:5]
    assert same.all(), (
        f"{np.sum(~same)} of {same.size} differ, e.g. at "
        f"{[a[bad].tolist() for a in inputs]}: {actual[bad].tolist()} != "
        f"{np.asarray(expected)[bad].tolist()}"
    )


BINARY = {"atan2", "pow"}


@pytest.mark.parametrize("name", sorted(xla_kernels.KERNELS))
def test_every_kernel_on_ir_values_equals_eager_kernel_and_jax(name):
    arity = 2 if name in BINARY else 1
    args = [_inputs(name, seed) for seed in range(arity)]
    if name == "pow":
        args[0] = np.abs(args[0])  # a negative base's fractional powers are NaN
    got = _run(_compiled(name, arity), *args)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _assert_bits_equal(got, getattr(xla_float32, name)(*args), args)
        jax = pytest.importorskip("jax")
        expected = np.asarray(getattr(jax.lax, name)(*args))
    _assert_bits_equal(got, expected, args)
