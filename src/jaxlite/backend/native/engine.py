"""LLVM in-process: optimise a module, compile it to machine code, call it on NumPy
values.

One MCJIT engine per compiled module, built for the host processor (its name and
features, as XLA:CPU does), with LLVM's default `-O3` pipeline. A compiled function has
the signature `i32 f(i8** ins, i8** outs, i8** consts)` and returns 0, or a nonzero
status when it could not run to the end (an allocation failed). Python calls it through
`ctypes`, with the GIL released.

How `ins` and `outs` reach the buffers is the calling convention, owned here
(`input_pointer`, `output_pointer`); `consts` is always an array of pointers to
contiguous row-major buffers. Two conventions:

- Objects (CPython): `ins` and `outs` are the addresses of tuples of Python objects, and
  the compiled code reads each buffer's address from the object itself: an ndarray's
  `data` field, or the value inside a NumPy scalar (the 0-d inputs). Python only checks
  that each input already is what the code reads (a C-contiguous ndarray of the aval's
  dtype, a NumPy scalar of its type) and converts the others, so a call costs about a
  microsecond, not one NumPy `__array_interface__` (~1.4 µs) per buffer. The field
  offsets are not assumed: `_probe_layout` finds them at import in known objects'
  memory, and where it cannot (another Python, where `id` is not an address, or an
  unexpected layout) the second convention is used.
- Pointers: `ins` and `outs` are arrays of pointers to contiguous row-major buffers.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import struct
import sys
import threading

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir

from jaxlite.backend.native import host
from jaxlite.backend.native.scalar import SUPPORTED_DTYPES
from jaxlite.errors import JaxRuntimeError

_lock = threading.RLock()
_WORD = ctypes.sizeof(ctypes.c_void_p)
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


def _load_object(data, name):
    """Load machine code (an object file's bytes); the ctypes function `name`."""
    with _lock:
        empty = llvm.parse_assembly(f'target triple = "{triple()}"')
        engine = llvm.create_mcjit_compiler(empty, target_machine())
        engine.add_object_file(llvm.ObjectFileRef.from_data(data))
        engine.finalize_object()
        _engines.append(engine)
        return _SIGNATURE(engine.get_function_address(name))


def compile_ir(llvm_ir, name, cache_dir=None):
    """`(function, optimised IR text, whether it came from the cache)` for the IR of
    function `name`.

    With `cache_dir` (the `jax_compilation_cache_dir` option, as JAX's persistent
    cache), the machine code is kept on disk under a hash of the IR, the processor and
    the LLVM version, so that a script run again skips LLVM (a compile costs 10-300 ms;
    loading the code, about a millisecond)."""
    path = None
    if cache_dir:
        key = hashlib.sha256(
            "\n".join(
                [
                    llvm_ir,
                    llvm.get_host_cpu_name(),
                    llvm.get_host_cpu_features().flatten(),
                    ".".join(map(str, llvm.llvm_version_info)),
                ]
            ).encode()
        ).hexdigest()
        path = os.path.join(cache_dir, "jaxlite-native", key)
        try:
            with open(path + ".o", "rb") as f:
                data = f.read()
            with open(path + ".ll") as f:
                text = f.read()
        except OSError:
            pass
        else:
            return _load_object(data, name), text, True
    module = optimize(llvm_ir)
    text = str(module)
    if path is None:
        return load(module, name), text, False
    data = target_machine().emit_object(module)
    _write_atomically(path + ".ll", text.encode())
    _write_atomically(path + ".o", data)  # last: its presence means both are whole
    return _load_object(data, name), text, False


def _write_atomically(path, data):
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:  # a read-only or full disk only costs the next run a compile
        pass


# ----------------------------------------------------------------------------------------
# The calling convention.

# The dtypes a 0-d input may have: those the backend compiles, bool last (its probe
# needs uint8's).
_SCALAR_DTYPES = sorted(SUPPORTED_DTYPES, key=lambda d: (d.kind == "b", d.str))


class _Layout:
    """Byte offsets, from an object's address, of what the compiled code reads:
    `items`, a tuple's first item; `data`, an ndarray's data pointer; `scalar`, per
    dtype, the value in a NumPy scalar of that dtype."""

    def __init__(self, items, data, scalar):
        self.items = items
        self.data = data
        self.scalar = scalar


def _memory(obj):
    """The bytes of `obj`'s C struct (CPython: `id` is its address)."""
    t = type(obj)
    size = t.__basicsize__ + t.__itemsize__ * (len(obj) if t.__itemsize__ else 0)
    return ctypes.string_at(id(obj), size)


def _only(offsets):
    return offsets[0] if len(offsets) == 1 else None


def _probe_layout():
    """The `_Layout` of this interpreter, found in known objects' memory, or None."""
    if sys.implementation.name != "cpython":
        return None
    word = _WORD
    fmt = {4: "I", 8: "Q"}.get(word)
    if fmt is None:
        return None

    def words(obj):
        raw = _memory(obj)
        n = len(raw) // word
        return struct.unpack(f"={n}{fmt}", raw[: n * word])

    try:
        probes = [np.arange(n, dtype=np.float64) for n in (3, 5, 7)]
        probes.append(np.empty((), np.int8))
        ids = [id(a) for a in probes]
        tuple_words = words(tuple(probes))
        items = _only(
            [
                i * word
                for i in range(len(tuple_words) - len(ids) + 1)
                if list(tuple_words[i : i + len(ids)]) == ids
            ]
        )
        array_words = [words(a) for a in probes]
        data = _only(
            [
                i * word
                for i in range(min(map(len, array_words)))
                if all(
                    w[i] == a.__array_interface__["data"][0]
                    for w, a in zip(array_words, probes)
                )
            ]
        )
        if items is None or data is None:
            return None
        scalar = {}
        for dtype in _SCALAR_DTYPES:
            if dtype.kind == "b":
                # Too few values to tell a byte apart: it is where uint8's is.
                values = [np.True_, np.False_]
                at = scalar.get(np.dtype(np.uint8))
            else:
                values = [dtype.type(v) for v in (0x5A, 0x3C, 0x17)]
                values.append(np.array(-0x31).astype(dtype)[()])
                at = None
            raws = [(_memory(v), np.array(v).tobytes()) for v in values]
            size = dtype.itemsize
            found = [
                o
                for o in range(0, min(len(r) for r, _ in raws) - size + 1, size)
                if all(r[o : o + size] == b for r, b in raws)
            ]
            if at is None:
                at = _only(found)
            if at is None or at not in found:
                return None
            scalar[dtype] = at
        return _Layout(items, data, scalar)
    except Exception:  # an unexpected object model: the pointer convention
        return None


LAYOUT = _probe_layout()


def _i64(n):
    return ir.Constant(ir.IntType(64), n)


def _i8p():
    return ir.IntType(8).as_pointer()


def _item(b, tuple_address, k):
    """IR: the object (an i8*) at index `k` of the tuple at `tuple_address`."""
    raw = b.bitcast(tuple_address, _i8p())
    at = b.gep(raw, [_i64(LAYOUT.items + k * _WORD)])
    return b.load(b.bitcast(at, _i8p().as_pointer()))


def _array_data(b, obj):
    at = b.gep(obj, [_i64(LAYOUT.data)])
    return b.load(b.bitcast(at, _i8p().as_pointer()))


def input_pointer(b, ins, k, aval):
    """IR: the address (an i8*) of input `k`'s buffer, from the `ins` parameter."""
    if LAYOUT is None:
        return b.load(b.gep(ins, [_i64(k)]))
    obj = _item(b, ins, k)
    if not aval.shape:
        return b.gep(obj, [_i64(LAYOUT.scalar[np.dtype(aval.dtype)])])
    return _array_data(b, obj)


def output_pointer(b, outs, k, aval):
    """IR: the address (an i8*) of output `k`'s buffer, from the `outs` parameter."""
    if LAYOUT is None:
        return b.load(b.gep(outs, [_i64(k)]))
    return _array_data(b, _item(b, outs, k))


# ----------------------------------------------------------------------------------------
# Executables.


def _pointer(x):
    return x.__array_interface__["data"][0]


def _failed(status):
    """Raise what the nonzero `status` of a compiled function means: the exception of
    a host call that raised (`host.py`), or an allocation that failed."""
    if status == host.FAILED:
        host.raise_pending()
    raise JaxRuntimeError(
        "RESOURCE_EXHAUSTED: natively compiled code could not allocate a "
        "buffer. Free memory, or run this function on the NumPy backend "
        '(jax.config.update("jaxlite_backend", "numpy")).'
    )


def _wrong_shape(k, value, shape):
    return ValueError(
        f"A natively compiled function received input {k} of shape "
        f"{np.shape(value)}, where it was compiled for shape {shape}. Call it with "
        "values of the shapes it was traced with."
    )


def _scalar_input(k, x, dtype):
    """`x` as the NumPy scalar of `dtype` a 0-d input is passed as."""
    v = np.asarray(x, dtype)
    if v.shape:
        raise _wrong_shape(k, v, ())
    s = v[()]
    return s if type(s) is dtype.type else dtype.type(s)


def _array_input(k, x, shape, dtype):
    """`x` as the C-contiguous ndarray of `dtype` an input is passed as."""
    v = np.asarray(x, dtype, order="C")  # (np.ascontiguousarray makes 0-d 1-d)
    if v.shape != shape:
        raise _wrong_shape(k, v, shape)
    return v


def _object_caller(cfunc, in_avals, out_avals, consts):
    """The Python function that calls `cfunc` under the object convention: generated
    for these avals, so that each input costs one or two checks (see the module
    docstring). 0-d outputs are returned as NumPy scalars, as the NumPy backend does."""
    ns = {
        "_cfunc": cfunc,
        "_id": id,
        "_empty": np.empty,
        "_ndarray": np.ndarray,
        "_consts": consts,
        "_scalar": _scalar_input,
        "_array": _array_input,
        "_failed": _failed,
    }
    params = [f"a{k}" for k in range(len(in_avals))]
    body = []
    for k, (shape, dtype) in enumerate(in_avals):
        ns[f"_D{k}"], ns[f"_S{k}"], ns[f"_T{k}"] = dtype, shape, dtype.type
        a = params[k]
        if shape:
            body.append(
                f"if type({a}) is not _ndarray or {a}.dtype is not _D{k} "
                f"or not {a}.flags.c_contiguous:\n"
                f"        {a} = _array({k}, {a}, _S{k}, _D{k})"
            )
        else:
            body.append(
                f"if type({a}) is not _T{k}:\n"
                f"        if type({a}) is _ndarray:\n"
                f"            {a} = {a}[()]  # a 0-d array's scalar\n"
                f"        if type({a}) is not _T{k}:\n"
                f"            {a} = _scalar({k}, {a}, _D{k})"
            )
    outs = []
    for k, (shape, dtype) in enumerate(out_avals):
        ns[f"_OD{k}"], ns[f"_OS{k}"] = dtype, shape
        body.append(f"o{k} = _empty(_OS{k}, _OD{k})")
        outs.append(f"o{k}" if shape else f"o{k}[()]")
    tup = lambda names: f"({', '.join(names)},)" if names else "()"  # noqa: E731
    body.append(f"ins = {tup(params)}")
    body.append(f"outs = {tup([f'o{k}' for k in range(len(out_avals))])}")
    body.append("status = _cfunc(_id(ins), _id(outs), _consts)")
    body.append("if status:\n        _failed(status)")
    body.append(f"return [{', '.join(outs)}]")
    source = f"def call({', '.join(params)}):\n" + "".join(f"    {s}\n" for s in body)
    exec(compile(source, "<native call>", "exec"), ns)
    return ns["call"]


def _pointer_caller(cfunc, in_avals, out_avals, consts):
    """The Python function that calls `cfunc` under the pointer convention."""

    def call(*args):
        ins = []
        keep = []
        for k, (x, (shape, dtype)) in enumerate(zip(args, in_avals)):
            if (
                type(x) is not np.ndarray
                or x.dtype != dtype
                or not x.flags.c_contiguous
            ):
                x = _array_input(k, x, shape, dtype)
            keep.append(x)
            ins.append(_pointer(x))
        outs = [np.empty(shape, dtype) for shape, dtype in out_avals]
        in_ptrs = (ctypes.c_void_p * max(len(ins), 1))(*ins)
        out_ptrs = (ctypes.c_void_p * max(len(outs), 1))(*map(_pointer, outs))
        status = cfunc(in_ptrs, out_ptrs, consts)
        if status:
            _failed(status)
        return outs

    return call


class NativeExecutable:
    """A natively compiled jaxpr: call it with NumPy values, get a list of arrays
    (NumPy scalars for 0-d outputs under the object convention).

    `ir` is the optimised LLVM IR (what `.lower().as_text()` shows). Constants are
    passed by pointer at each call, never copied into the module. `entry` is the
    function a call runs (the jit hot path calls it directly)."""

    __slots__ = (
        "cfunc",
        "ir",
        "closed",
        "in_avals",
        "out_avals",
        "consts",
        "entry",
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
        if LAYOUT is None:
            caller = _pointer_caller
            const_arg = self._const_ptrs
        else:
            caller = _object_caller
            const_arg = ctypes.addressof(self._const_ptrs) if ptrs else None
        self.entry = caller(cfunc, self.in_avals, self.out_avals, const_arg)

    # What the NumPy backend's `Executable` offers, for callers of `backend.compile`.
    source = property(lambda self: self.ir)
    fun = property(lambda self: self.entry)

    def __call__(self, *args):
        return self.entry(*args)
