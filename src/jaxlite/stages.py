"""The stages of ahead-of-time compilation, as in `jax.stages`.

`jit(f)` is a `Wrapped` function; `jit(f).trace(*args)` is `Traced` (the jaxpr),
`.lower(*args)` (or `traced.lower()`) is `Lowered` and `lowered.compile()` is
`Compiled`, a callable fixed to the argument types it was lowered for. In jaxlite
lowering and compiling are one cheap step shared with the `jit` call path: the three
stages hold the same cache entry (closed jaxpr, executable, output tree), so
`lower` then `compile` then calling costs what the first `jit` call does, and a later
`jit` call of the same signature reuses it.

What each stage shows, in jaxlite's terms: the "compiler IR" is the jaxpr (the input
of the backend), `as_text()` the code that runs (the generated Python, or LLVM IR on
the native backend), `cost_analysis()` an estimate made from the jaxpr (flops,
transcendentals and bytes accessed, with XLA's key names), `memory_analysis()` the
sizes of arguments, outputs, donated aliases and the peak of live intermediates.

A `Compiled` checks its arguments as JAX's does, with JAX's errors: the pytree of
`(args, kwargs)` must be the one it was lowered for (TypeError listing where they
differ), each leaf must have the shape and dtype it was lowered for (weak types
aside), and it refuses tracers (it cannot be transformed). Static arguments are not
passed again. Donated arguments are deleted by the call, as by the `jit` call.

Compiler options (`lowered.compile(compiler_options)`, `jit(...,
compiler_options=...)`) are checked as XLA checks their names; XLA's own options are
accepted and have no effect here. jaxlite's option `jaxlite_backend` ("numpy",
"native" or "auto") chooses the backend that compiles this one function.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import math
from typing import Any, Union

from jaxlite import backend, tree_util
from jaxlite.api_util import shaped_abstractify
from jaxlite.config import override
from jaxlite.core import (
    ClosedJaxpr,
    Literal,
    ShapeDtypeStruct,
    Tracer,
    eval_trace,
    jaxpr_as_fun,
    subjaxprs,
)
from jaxlite.core import _state as _trace_state
from jaxlite.cpu_device import check_backend, default_device
from jaxlite.dispatch import (
    JitFunction,
    _match_donations,
    _outputs,
    _py_name,
    _to_numpy,
)
from jaxlite.errors import JaxRuntimeError
from jaxlite.interpreters.partial_eval import abstractify
from jaxlite.sharding import SingleDeviceSharding

__all__ = [
    "ArgInfo",
    "Compiled",
    "CompiledMemoryStats",
    "CompilerOptions",
    "Lowered",
    "Stage",
    "Traced",
    "Wrapped",
]

Wrapped = JitFunction

CompilerOptions = dict[str, Union[str, bool]]  # noqa: UP007 (JAX's spelling)


@dataclasses.dataclass(frozen=True)
class ArgInfo:
    """The abstract value of one argument leaf and whether its buffer is donated."""

    _aval: Any
    donated: bool

    @property
    def shape(self):
        if not hasattr(self._aval, "shape"):
            raise TypeError(f"No shape attribute with aval of type {type(self._aval)}")
        return self._aval.shape

    @property
    def dtype(self):
        if not hasattr(self._aval, "dtype"):
            raise TypeError(f"No dtype attribute with aval of type {type(self._aval)}")
        return self._aval.dtype


@dataclasses.dataclass(frozen=True)
class CompiledMemoryStats:
    """`Compiled.memory_analysis()`: sizes in bytes, with the fields of XLA's."""

    generated_code_size_in_bytes: int = 0
    argument_size_in_bytes: int = 0
    output_size_in_bytes: int = 0
    alias_size_in_bytes: int = 0
    temp_size_in_bytes: int = 0
    host_generated_code_size_in_bytes: int = 0
    host_argument_size_in_bytes: int = 0
    host_output_size_in_bytes: int = 0
    host_alias_size_in_bytes: int = 0
    host_temp_size_in_bytes: int = 0


# ----------------------------------------------------------------------------------------
# Compiler options

# XLA's ExecutableBuildOptions that JAX accepts beside the `xla_*` DebugOptions.
_BUILD_OPTIONS = frozenset(
    {
        "exec_time_optimization_effort",
        "memory_fitting_effort",
        "optimization_level",
        "memory_optimization_level",
    }
)
_BACKENDS = ("auto", "numpy", "native")


def check_compiler_options(options):
    """`options` (a dict or None) checked as XLA checks them: JAX's JaxRuntimeError
    for a name that is not an option. XLA's debug options (every `xla_*` name: jaxlite
    cannot know which of them XLA has) and build options are accepted and ignored."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise TypeError(
            f"compiler_options must be a dict of option names to values, got {options!r}"
        )
    for name, value in options.items():
        if name == "jaxlite_backend":
            if value not in _BACKENDS:
                raise JaxRuntimeError(
                    f"INVALID_ARGUMENT: While setting option jaxlite_backend, {value!r} "
                    f"is not one of {list(_BACKENDS)}."
                )
        elif not isinstance(name, str) or not (
            name.startswith("xla_") or name in _BUILD_OPTIONS
        ):
            raise JaxRuntimeError(f"INVALID_ARGUMENT: No such compile option: {name!r}")
        elif not isinstance(value, (str, bool, int, float)):
            raise JaxRuntimeError(
                f"INVALID_ARGUMENT: While setting option {name}, {value!r} is not a "
                "valid value (options take strings, booleans and numbers)."
            )
    return dict(options)


def compiling_with(options):
    """A context in which `backend.compile` honours the compiler `options` (checked)."""
    options = check_compiler_options(options)
    chosen = options.get("jaxlite_backend")
    if chosen is None:
        return contextlib.nullcontext()
    return override("jaxlite_backend", chosen)


# ----------------------------------------------------------------------------------------
# Arguments: JAX's view `((dynamic positional args), {dynamic keyword args})`


def _split(jitted, args, kwargs):
    """The dynamic positional and keyword arguments of a call (static ones left out,
    keywords left as keywords: JAX's `in_tree`), and the static ones by position
    and by name."""
    dyn_args = tuple(a for i, a in enumerate(args) if i not in jitted.static_argnums)
    dyn_kwargs = {k: v for k, v in kwargs.items() if k not in jitted.static_argnames}
    static_pos = {i: a for i, a in enumerate(args) if i in jitted.static_argnums}
    static_kw = {k: v for k, v in kwargs.items() if k in jitted.static_argnames}
    return dyn_args, dyn_kwargs, static_pos, static_kw


def _arg_names(fun, dyn_args, dyn_kwargs, static_pos):
    """JAX's names of the flat argument leaves for messages: `x`, `p['w']`, `args[0]`
    (a `*args` parameter's name with the index), `z` for a keyword."""
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = [
        p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    varargs = next((p.name for p in params if p.kind is p.VAR_POSITIONAL), "args")
    names = []
    dyn_positions = [
        i for i in range(len(dyn_args) + len(static_pos)) if i not in static_pos
    ]
    for i, a in zip(dyn_positions, dyn_args):
        if i < len(positional):
            base = positional[i].name
        else:
            base = f"{varargs}[{i - len(positional)}]"
        for path, _ in tree_util.tree_flatten_with_path(a)[0]:
            names.append(base + tree_util.keystr(path))
    for k in sorted(dyn_kwargs):
        for path, _ in tree_util.tree_flatten_with_path(dyn_kwargs[k])[0]:
            names.append(k + tree_util.keystr(path))
    return names


def _tree_mismatches(given, compiled, path=()):
    """JAX's `(path, compiled thing, given thing, explanation)` for where the pytree
    `given` of a call differs from the one `compiled` for (PyTreeDefs)."""
    g_data, c_data = given.node_data(), compiled.node_data()
    if g_data is None and c_data is None:
        return
    if g_data is None or c_data is None or g_data[0] is not c_data[0]:
        yield (
            path,
            "pytree leaf" if c_data is None else str(c_data[0]),
            "pytree leaf" if g_data is None else str(g_data[0]),
            "their Python types differ",
        )
        return
    (typ, g_aux), (_, c_aux) = g_data, c_data
    g_kids, c_kids = given.children(), compiled.children()
    if issubclass(typ, (list, tuple)) and len(g_kids) != len(c_kids):
        yield (
            path,
            f"{typ.__name__} of length {len(c_kids)}",
            f"{typ.__name__} of length {len(g_kids)}",
            "the lengths do not match",
        )
        return
    if len(g_kids) != len(c_kids):
        diff = ""
        if issubclass(typ, dict):
            diff = " ".join(repr(k) for k in set(g_aux) ^ set(c_aux))
        yield (
            path,
            f"{typ} with {len(c_kids)} child{'ren' if len(c_kids) > 1 else ''}",
            f"{typ} with {len(g_kids)} child{'ren' if len(g_kids) > 1 else ''}",
            "the numbers of children do not match"
            + (
                f", with the symmetric difference of key sets: {{{diff}}}"
                if diff
                else ""
            ),
        )
        return
    if g_aux != c_aux:
        yield (
            path,
            f"{typ} with pytree metadata {c_aux}",
            f"{typ} with pytree metadata {g_aux}",
            "the pytree node metadata does not match",
        )
        return
    if issubclass(typ, dict):
        keys = [f"[{k!r}]" for k in c_aux]
    elif issubclass(typ, (list, tuple)):
        keys = [f"[{i}]" for i in range(len(c_kids))]
    else:
        keys = [f"[<flat index {i}>]" for i in range(len(c_kids))]
    for key, g, c in zip(keys, g_kids, c_kids):
        yield from _tree_mismatches(g, c, (*path, key))


def _tree_error(given, compiled):
    errs = list(_tree_mismatches(given, compiled))
    lines = [
        "Function compiled with input pytree does not match the input pytree it was "
        f"called with. There are {len(errs)} mismatches, including:"
    ]
    for path, thing_compiled, thing_given, explanation in errs:
        (top, *rest) = path if path else ("[0]",)
        base = "kwargs" if top == "[1]" else "args"
        lines.append(
            f"    * at {base}{''.join(rest)}, seen {thing_compiled} but now given "
            f"{thing_given}, so {explanation}"
        )
    return TypeError("\n".join(lines))


class _Signature:
    """What a stage knows of the call it was made for: the jitted function, the cache
    entry, the static arguments and JAX's view of the dynamic ones."""

    def __init__(self, jitted, args, kwargs, entry):
        self.jitted = jitted
        self.closed, self.exe, self.boxed_out_tree, self.out_weak = entry
        dyn_args, dyn_kwargs, self.static_pos, self.static_kw = _split(
            jitted, args, kwargs
        )
        leaves, self.in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
        info = None
        self.in_avals = [
            shaped_abstractify(jitted.fun, x, i, info) for i, x in enumerate(leaves)
        ]
        self.names = _arg_names(jitted.fun, dyn_args, dyn_kwargs, self.static_pos)
        flags = _donated_flags(jitted, dyn_args, dyn_kwargs, self.static_pos)
        self.args_info = self.in_tree.unflatten(
            [ArgInfo(a, d) for a, d in zip(self.in_avals, flags)]
        )
        self.out_tree = tree_util.tree_structure(
            tree_util.tree_unflatten(self.boxed_out_tree, [0] * len(self.out_weak))
        )
        if jitted._donates:  # JAX's warning for unusable donations comes when lowering
            n = len(self.closed.in_avals)
            jitted._donated(args, kwargs, [None] * n, self.closed)

    def full_call(self, args, kwargs):
        """The call's arguments with the static ones put back where they were."""
        full = list(args)
        for i in sorted(self.static_pos):
            full.insert(i, self.static_pos[i])
        return full, {**kwargs, **self.static_kw}

    def execution_leaves(self, args, kwargs):
        """The flat leaves in the order the executable takes them (`jit`'s)."""
        jitted = self.jitted
        if kwargs or jitted._has_static:
            dyn_args, dyn_kwargs, _ = jitted._split_static(args, kwargs)
            return tree_util.tree_leaves((dyn_args, dyn_kwargs))
        return tree_util.tree_leaves(args)

    def check(self, args, kwargs):
        """JAX's checks of a call of a compiled stage: tree, tracers, then types."""
        leaves, tree = tree_util.tree_flatten((tuple(args), dict(kwargs)))
        if tree != self.in_tree:
            raise _tree_error(tree, self.in_tree)
        for x in leaves:
            if isinstance(x, Tracer):
                raise TypeError(
                    "Cannot apply JAX transformations to a function lowered and "
                    "compiled for a particular signature. Detected argument of Tracer "
                    f"type {type(x)}."
                )
        mismatches = []
        for i, (x, aval) in enumerate(zip(leaves, self.in_avals)):
            try:
                given = abstractify(x)
            except TypeError:
                raise TypeError(
                    f"Argument '{x}' of type {type(x)} is not a valid JAX type"
                ) from None
            if given.shape != aval.shape or given.dtype != aval.dtype:
                mismatches.append(
                    f"Argument '{self.names[i]}' compiled with "
                    f"{aval.str_short(short_dtypes=False)} and called with "
                    f"{given.str_short(short_dtypes=False)}"
                )
        if mismatches:
            raise TypeError(
                "Argument types differ from the types for which this computation was "
                "compiled. Perhaps you are calling the compiled executable with a "
                "different enable_x64 mode than when it was AOT compiled? The "
                "mismatches are:\n" + "\n".join(mismatches)
            )

    def out_info(self):
        outs = [
            ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
            for a in self.closed.out_avals
        ]
        return tree_util.tree_unflatten(self.boxed_out_tree, outs)


def signature(jitted, args, kwargs):
    """The `_Signature` of a call of the jitted function `jitted` (traced and compiled
    through `jit`'s cache)."""
    return _Signature(jitted, args, kwargs, jitted._entry(args, kwargs))


def _donated_flags(jitted, dyn_args, dyn_kwargs, static_pos):
    flags = []
    positions = [
        i for i in range(len(dyn_args) + len(static_pos)) if i not in static_pos
    ]
    for i, a in zip(positions, dyn_args):
        flags += [i in jitted.donate_argnums] * len(tree_util.tree_leaves(a))
    for k in sorted(dyn_kwargs):
        flags += [k in jitted.donate_argnames] * len(
            tree_util.tree_leaves(dyn_kwargs[k])
        )
    return flags


class Stage:
    """What the stages share: the arguments they were made for."""

    _sig: _Signature

    @property
    def args_info(self):
        """The pytree of `(args, kwargs)` with an `ArgInfo` for each array leaf."""
        return self._sig.args_info

    @property
    def in_tree(self):
        """The pytree structure of `(positional arguments, keyword arguments)`."""
        return self._sig.in_tree

    @property
    def in_avals(self):
        return self._sig.in_tree.unflatten(self._sig.in_avals)

    @property
    def donate_argnums(self):
        """The indices of the donated leaves among the flat arguments."""
        leaves = tree_util.tree_leaves(self._sig.args_info)
        return tuple(i for i, x in enumerate(leaves) if x.donated)

    @property
    def out_tree(self):
        return self._sig.out_tree

    @property
    def out_info(self):
        """The pytree of the outputs' `ShapeDtypeStruct`s."""
        return self._sig.out_info()

    @property
    def jaxpr(self):
        """The closed jaxpr being compiled (DCE'd, as `jit` runs it)."""
        return self._sig.closed


# ----------------------------------------------------------------------------------------
# The stages


class Traced(Stage):
    """`jit(f).trace(*args)`: the jaxpr of `f` for these argument types."""

    def __init__(self, sig):
        self._sig = sig

    @property
    def fun_name(self):
        return self._sig.jitted._name

    @property
    def out_avals(self):
        return tree_util.tree_unflatten(self._sig.boxed_out_tree, self.jaxpr.out_avals)

    def __call__(self, *args, **kwargs):
        """Evaluate the jaxpr on `args` (dynamic arguments only; transformable)."""
        sig = self._sig
        _, tree = tree_util.tree_flatten((tuple(args), dict(kwargs)))
        if tree != sig.in_tree:
            raise _tree_error(tree, sig.in_tree)
        leaves = sig.execution_leaves(*sig.full_call(args, kwargs))
        outs = jaxpr_as_fun(sig.closed)(*leaves)
        return tree_util.tree_unflatten(sig.boxed_out_tree, outs)

    def lower(self, *, lowering_platforms=None, _private_parameters=None):
        """Lower for the CPU, returning a `Lowered`."""
        if lowering_platforms is not None:
            for platform in lowering_platforms:
                check_backend(platform)
        return Lowered(self._sig)


class Lowered(Stage):
    """`jit(f).lower(*args)`: the computation ready to compile."""

    def __init__(self, sig):
        self._sig = sig

    def compile(self, compiler_options=None, *, device_assignment=None):
        """The `Compiled` executable (compiled afresh only for options that change
        it: `jaxlite_backend`)."""
        options = check_compiler_options(compiler_options)
        sig = self._sig
        if sig.exe is None:
            raise TypeError(
                "Cannot compile a function that closes over values traced by an "
                "enclosing transformation; lower it outside the transformation."
            )
        if "jaxlite_backend" not in options:
            return Compiled(sig, sig.exe)
        with compiling_with(options):
            exe = backend.compile(sig.closed, _py_name(sig.jitted._name), tiered=True)
        return Compiled(sig, exe)

    def as_text(self, dialect=None, *, debug_info=False):
        """The code that runs this computation (the generated Python, or LLVM IR when
        the native backend compiled it), or with `dialect="jaxpr"` the jaxpr."""
        return _text(self._sig, self._sig.exe, dialect)

    def compiler_ir(self, dialect=None):
        """The compiler's input, the closed jaxpr (None for XLA's dialects, which
        jaxlite does not produce)."""
        if dialect in (None, "jaxpr"):
            return self._sig.closed
        if dialect in _XLA_DIALECTS:
            return None
        raise ValueError(f"unknown dialect: {dialect}")

    def cost_analysis(self):
        """Estimated costs: `flops`, `transcendentals`, `bytes accessed` (with XLA's
        per-operand `bytes accessed{i}{}` and `bytes accessedout{}`)."""
        return cost_analysis(self._sig.closed)


class Compiled(Stage):
    """`jit(f).lower(*args).compile()`: callable on arguments of the lowered types."""

    def __init__(self, sig, exe):
        self._sig = sig
        self._exe = exe

    def __call__(self, *args, **kwargs):
        sig = self._sig
        sig.check(args, kwargs)
        full_args, full_kwargs = sig.full_call(args, kwargs)
        leaves = sig.execution_leaves(full_args, full_kwargs)
        jitted = sig.jitted
        donated = ()
        if jitted._donates and _trace_state.trace is eval_trace:
            donated = jitted._donated(full_args, full_kwargs, leaves, sig.closed)
        outs = _outputs(self._exe, self._exe(*map(_to_numpy, leaves)), sig.out_weak)
        for x in donated:
            x.delete()
        return tree_util.tree_unflatten(sig.boxed_out_tree, outs)

    def as_text(self):
        """The code that runs (the generated Python, or LLVM IR)."""
        return _text(self._sig, self._exe, None)

    def cost_analysis(self):
        return cost_analysis(self._sig.closed)

    def memory_analysis(self):
        return memory_analysis(self._sig, self._exe)

    def runtime_executable(self):
        """The executable itself: `exe(*numpy_arrays) -> list of outputs`, with the
        `.source` it runs."""
        return self._exe

    @property
    def input_shardings(self):
        sharding = SingleDeviceSharding(default_device())
        return self._sig.in_tree.unflatten([sharding] * self._sig.in_tree.num_leaves)

    @property
    def output_shardings(self):
        sharding = SingleDeviceSharding(default_device())
        tree = self._sig.boxed_out_tree
        return tree_util.tree_unflatten(tree, [sharding] * tree.num_leaves)


_XLA_DIALECTS = ("stablehlo", "hlo", "mhlo")


def _text(sig, exe, dialect):
    if dialect is None:
        return exe.source
    if dialect == "jaxpr":
        return str(sig.closed)
    if dialect in _XLA_DIALECTS:
        raise NotImplementedError(
            f"jaxlite does not lower to {dialect}: its compiler's input is the jaxpr "
            "(as_text(dialect='jaxpr')) and its output Python or LLVM IR (as_text())."
        )
    raise ValueError(f"unknown dialect: {dialect}")


# ----------------------------------------------------------------------------------------
# Cost and memory estimates, from the jaxpr

# Primitives that move or relabel data without arithmetic.
_DATA_MOVEMENT = frozenset(
    """reshape broadcast_in_dim transpose squeeze expand_dims slice dynamic_slice
    dynamic_update_slice concatenate pad rev gather copy copy_p convert_element_type
    bitcast_convert_type iota device_put platform_index stop_gradient split
    optimization_barrier select_n""".split()
)
_TRANSCENDENTAL = frozenset(
    """exp exp2 log log1p expm1 sin cos tan tanh asin acos atan atan2 sinh cosh asinh
    acosh atanh logistic erf erfc erf_inv lgamma digamma igamma igammac
    random_gamma_grad bessel_i0e bessel_i1e pow sqrt rsqrt cbrt polygamma zeta
    regularized_incomplete_beta""".split()
)


def _nbytes(aval):
    size = math.prod(getattr(aval, "shape", ()))
    dtype = getattr(aval, "dtype", None)
    return size * (dtype.itemsize if dtype is not None else 0)


def _size(aval):
    return math.prod(getattr(aval, "shape", ()))


def _jaxpr_cost(jaxpr):
    """(flops, transcendentals, bytes accessed) of running `jaxpr` once."""
    flops = trans = nbytes = 0.0
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        ins = [v.aval for v in eqn.invars]
        outs = [v.aval for v in eqn.outvars]
        subs = list(subjaxprs(eqn.params))
        if subs:
            costs = [
                _jaxpr_cost(j.jaxpr if isinstance(j, ClosedJaxpr) else j) for j in subs
            ]
            if name == "cond":
                f, t, b = max(costs)
            else:
                f, t, b = (sum(c[k] for c in costs) for k in range(3))
            times = eqn.params.get("length", 1) if name == "scan" else 1
            flops, trans, nbytes = (
                flops + f * times,
                trans + t * times,
                nbytes + b * times,
            )
            continue
        nbytes += sum(map(_nbytes, ins)) + sum(map(_nbytes, outs))
        if name in _DATA_MOVEMENT:
            continue
        if name == "dot_general":
            (lhs_contract, _), _ = eqn.params["dimension_numbers"]
            k = math.prod(ins[0].shape[d] for d in lhs_contract)
            flops += 2.0 * sum(map(_size, outs)) * k
        elif name == "conv_general_dilated":
            rhs = ins[1]
            out_features = max(rhs.shape[0], 1) if rhs.shape else 1
            flops += 2.0 * sum(map(_size, outs)) * _size(rhs) / out_features
        elif name.startswith(("reduce_", "arg")):  # n - 1 steps for n elements
            flops += float(max(sum(map(_size, ins)) - sum(map(_size, outs)), 0))
        elif name.startswith("cum") or name in ("sort", "top_k"):
            flops += float(sum(map(_size, ins)))
        elif name in _TRANSCENDENTAL:
            trans += float(sum(map(_size, outs)))
        else:
            flops += float(sum(map(_size, outs)))
    return flops, trans, nbytes


def cost_analysis(closed):
    """Estimated costs of running the closed jaxpr `closed` once (see `Lowered`)."""
    jaxpr = closed.jaxpr
    flops, trans, nbytes = _jaxpr_cost(jaxpr)
    out = {"flops": flops, "transcendentals": trans, "bytes accessed": nbytes}
    for i, v in enumerate(jaxpr.invars):
        out[f"bytes accessed{i}{{}}"] = float(_nbytes(v.aval))
    out["bytes accessedout{}"] = float(
        sum(_nbytes(v.aval) for v in jaxpr.outvars if not isinstance(v, Literal))
    )
    return out


def _peak_temp_bytes(jaxpr):
    """The most bytes that intermediate values (neither inputs nor outputs) hold at
    once when the equations run in order and each value is freed after its last use."""
    last_use = {}
    for i, eqn in enumerate(jaxpr.eqns):
        for v in eqn.invars:
            if not isinstance(v, Literal):
                last_use[v] = i
    outputs = {v for v in jaxpr.outvars if not isinstance(v, Literal)}
    live = peak = 0
    frees = {}
    for i, eqn in enumerate(jaxpr.eqns):
        for v in eqn.outvars:
            if v in outputs or v not in last_use:
                continue
            live += _nbytes(v.aval)
            frees.setdefault(last_use[v], []).append(v)
        peak = max(peak, live)
        for v in frees.pop(i, ()):
            live -= _nbytes(v.aval)
    return peak


def memory_analysis(sig, exe):
    closed = sig.closed
    in_avals, out_avals = closed.in_avals, closed.out_avals
    flags = sig.jitted._donated_leaves(*sig.full_call(*_example_call(sig)))
    taken, _ = _match_donations(in_avals, flags, out_avals) if any(flags) else ((), ())
    source = getattr(exe, "source", "") or ""
    return CompiledMemoryStats(
        generated_code_size_in_bytes=len(source.encode()),
        argument_size_in_bytes=sum(map(_nbytes, in_avals)),
        output_size_in_bytes=sum(map(_nbytes, out_avals)),
        alias_size_in_bytes=sum(_nbytes(in_avals[i]) for i in taken),
        temp_size_in_bytes=_peak_temp_bytes(closed.jaxpr),
    )


def _example_call(sig):
    """`(args, kwargs)` of the dynamic arguments' shapes (for the donation flags)."""
    args, kwargs = sig.in_tree.unflatten(sig.in_avals)
    return tuple(args), dict(kwargs)
