"""LLVM in-process: optimise a module, compile it to machine code, call it on NumPy
buffers.

One MCJIT engine per compiled module, built for the host processor (its name and
features, as XLA:CPU does), with LLVM's default `-O3` pipeline. A compiled function has
the signature `i32 f(i8** ins, i8** outs, i8** consts)`: three arrays of pointers to
contiguous row-major buffers. It returns 0, or a nonzero status when it could not run
to the end (an allocation failed). Python calls it through `ctypes`.
"""

from __future__ import annotations

import ctypes
import threading

import llvmlite.binding as llvm
import numpy as np

from jaxlite.errors import JaxRuntimeError

_lock = threading.RLock()
_target_machine = None


def target_machine():
    global _target_machine
    with _lock:
        if _target_machine is None:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            target = llvm.Target.from_default_triple()
            _target_machine = target.create_target_machine(
                cpu=llvm.get_host_cpu_name(),
                features=llvm.get_host_cpu_features().flatten(),
                opt=3,
                jit=True,
            )
        return _target_machine


def triple():
    return llvm.get_process_triple()


def data_layout():
    return str(target_machine().target_data)


def optimize(llvm_ir):
    """Parse, verify and optimise (`-O3`) textual IR; returns the llvmlite module."""
    tm = target_machine()
    module = llvm.parse_assembly(llvm_ir)
    module.verify()
    pto = llvm.PipelineTuningOptions(speed_level=3)
    pb = llvm.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(module, pb)
    return module


_SIGNATURE = ctypes.CFUNCTYPE(
    ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p
)
_engines = []  # engines own the machine code: they live as long as the process


def load(module, name):
    """Compile the optimised `module` to machine code; the ctypes function `name`."""
    with _lock:
        engine = llvm.create_mcjit_compiler(module, target_machine())
        engine.finalize_object()
        _engines.append(engine)
        return _SIGNATURE(engine.get_function_address(name))


def _pointer(x):
    return x.__array_interface__["data"][0]


class NativeExecutable:
    """A natively compiled jaxpr: call it with NumPy values, get a list of arrays.

    `ir` is the optimised LLVM IR (what `.lower().as_text()` shows). Constants are
    passed by pointer at each call, never copied into the module."""

    __slots__ = (
        "cfunc",
        "ir",
        "closed",
        "in_avals",
        "out_avals",
        "consts",
        "_const_ptrs",
    )

    def __init__(self, cfunc, ir_text, closed, consts):
        in_avals, out_avals = closed.in_avals, closed.out_avals
        self.closed = closed
        self.cfunc = cfunc
        self.ir = ir_text
        self.in_avals = [(tuple(a.shape), np.dtype(a.dtype)) for a in in_avals]
        self.out_avals = [(tuple(a.shape), np.dtype(a.dtype)) for a in out_avals]
        self.consts = [np.ascontiguousarray(c) for c in consts]
        ptrs = [_pointer(c) for c in self.consts]
        self._const_ptrs = (ctypes.c_void_p * max(len(ptrs), 1))(*ptrs)

    # What the NumPy backend's `Executable` offers, for callers of `backend.compile`.
    source = property(lambda self: self.ir)
    fun = property(lambda self: self)
    entry = property(lambda self: self)

    def __call__(self, *args):
        ins = []
        keep = []
        for x, (_, dtype) in zip(args, self.in_avals):
            if (
                type(x) is not np.ndarray
                or x.dtype != dtype
                or not x.flags.c_contiguous
            ):
                x = np.ascontiguousarray(x, dtype)
            keep.append(x)
            ins.append(_pointer(x))
        outs = [np.empty(shape, dtype) for shape, dtype in self.out_avals]
        in_ptrs = (ctypes.c_void_p * max(len(ins), 1))(*ins)
        out_ptrs = (ctypes.c_void_p * max(len(outs), 1))(*map(_pointer, outs))
        status = self.cfunc(in_ptrs, out_ptrs, self._const_ptrs)
        if status:
            raise JaxRuntimeError(
                "RESOURCE_EXHAUSTED: natively compiled code could not allocate a "
                "buffer. Free memory, or run this function on the NumPy backend "
                '(jax.config.update("jaxlite_backend", "numpy")).'
            )
        return outs
