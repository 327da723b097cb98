"""Running a jaxpr over arrays split across processes: each process on its blocks.

`jit` traces a function on its arguments' global avals; an argument that is a
`GlobalArray` keeps its `NamedSharding` in its aval (a GlobalArray closed over is a
constant split the same way). Only `shard_map` computes on such
a value (through `process_block` and `process_assemble`, `lax/process_blocks.py`),
since jaxlite has no automatic partitioner. `localize` turns such a jaxpr into the
program one process runs: it evaluates the jaxpr again, tracing, with every split
variable standing for this process's block, and records which results are split.
Equations that touch no split value are bound as they are (replicated values are
whole in every process). The others go through `local_rules[prim]`:

    rule(layouts, *operands, **params) -> (outputs, their layouts)

where a layout is the `NamedSharding` of a split value or None for a replicated one.
Elementwise operations run blockwise on operands split the same way (replicated
operands of the same shape are cut to the block, their size-1 axes and scalars
broadcast); anything else on a split value raises, suggesting `shard_map`. An eager
operation on a GlobalArray runs as its jit (`dispatch._eager_on_split`), so the same
holds outside `jit`. `SpmdExecutable` is the compiled result:
it takes the blocks of split arguments and gives GlobalArrays for split results.
"""

from __future__ import annotations

import numpy as np

from jaxlite import backend
from jaxlite.core import Array, Literal, ShapedArray, subjaxprs
from jaxlite.distributed.global_array import GlobalArray, seen, spans_processes
from jaxlite.distributed.topology import mesh_layout, spec_entries
from jaxlite.interpreters.partial_eval import trace_to_jaxpr
from jaxlite.sharding import NamedSharding, PartitionSpec

__all__ = ["SpmdExecutable", "is_spmd", "local_rules", "localize", "split_layout"]

# prim -> rule(layouts, *operands, **params) -> (outputs, layouts); see the doc above.
local_rules: dict = {}
# The primitives that mark where split values meet per-process code (filled by
# lax/process_blocks.py): "block" (global value -> this process's block, which cuts
# a replicated one) and "assemble".
layout_primitives: dict = {}

# Elementwise primitives: on operands split the same way, each process computes its
# block of the result from its blocks.
ELEMENTWISE = frozenset(
    "abs acos acosh add add_any and asin asinh atan atan2 atanh cbrt ceil clamp copy "
    "convert_element_type cos cosh div eq erf erf_inv erfc exp exp2 expm1 "
    "floor ge gt imag integer_pow is_finite le lgamma digamma log log1p logistic lt "
    "max min mul ne neg nextafter not or pow real reduce_precision rem round rsqrt "
    "select_n sign sin sinh sqrt square sub tan tanh xor "
    # (bitcast_convert_type between item sizes changes the shape: refused below)
    "bitcast_convert_type bessel_i0e bessel_i1e clz complex conj igamma igammac "
    "polygamma population_count regularized_incomplete_beta shift_left "
    "shift_right_arithmetic shift_right_logical stop_gradient zeta".split()
)


def split_layout(aval):
    """The `NamedSharding` of a value of `aval` split across processes, or None."""
    sharding = getattr(aval, "_sharding", None)
    if isinstance(sharding, NamedSharding) and spans_processes(
        sharding.mesh, sharding.spec, len(aval.shape)
    ):
        seen.split = True
        return sharding
    return None


def eager_split_error():
    """A result split across processes made outside jit under a transformation."""
    return NotImplementedError(
        "A shard_map result split across processes (its out_specs name a mesh axis "
        "that spans processes) was computed under a transformation (grad, jvp, "
        "vmap) outside jit; jaxlite makes such results GlobalArrays only from jit "
        "or from a shard_map called outside transformations. Put the "
        "transformation inside jit, e.g. jax.jit(jax.grad(f)), or make the result "
        "replicated (psum or all_gather it, with an out_spec that does not name "
        "the axis)."
    )


def partitioner_error(eqn, aval, layout):
    if eqn.primitive.name == "process_broadcast":  # a shard_map took it as whole
        return NotImplementedError(
            f"jit: a shard_map got an array split across processes ({aval.str_short()} "
            f"with {layout!r}) that jit computed outside it; jaxlite knows the layout "
            "of jit's arguments and of shard_map's results only (it has no "
            "automatic partitioner). Move that computation into the shard_map."
        )
    return NotImplementedError(
        f"jit: '{eqn.primitive}' is applied to an array split across processes "
        f"({aval.str_short()} with {layout!r}). That needs an automatic partitioner "
        "(GSPMD in JAX), which jaxlite does not have: outside shard_map only "
        "elementwise operations run on such arrays. Express the computation with "
        "jax.shard_map (e.g. a per-shard sum followed by lax.psum over the mesh "
        "axis), or gather the array first with "
        "jax.experimental.multihost_utils.process_allgather."
    )


# --------------------------------------------------------------------------------------
# Which jaxprs need it


def _has_layout_equations(jaxpr):
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    for eqn in jaxpr.eqns:
        if eqn.primitive in layout_primitives.values():
            return True
        if any(_has_layout_equations(sub) for sub in subjaxprs(eqn.params)):
            return True
    return False


def is_spmd(closed):
    """Whether `closed` has arguments or constants split across processes or makes
    such values."""
    if not seen.split:
        return False
    if any(map(split_layout, closed.in_avals)):
        return True
    if any(type(c) is GlobalArray for c in closed.consts):
        return True
    return _has_layout_equations(closed)


# --------------------------------------------------------------------------------------
# The process-local program


def _local_aval(aval, layout):
    if layout is None:
        return aval
    counts = mesh_layout(layout.mesh).counts
    shape = []
    for n, entry in zip(aval.shape, spec_entries(layout.spec, len(aval.shape))):
        c = 1
        for a in entry:
            c *= counts[a]
        shape.append(n // c)
    return ShapedArray(tuple(shape), aval.dtype, aval.weak_type)


def localize(closed, in_layouts):
    """`(local, out_layouts)`: the jaxpr each process runs on its blocks of
    `closed`'s arguments (split as `in_layouts` say), and how its results are split."""
    jaxpr = closed.jaxpr
    out_layouts = []

    def run(*args):
        env, layouts = {}, {}

        def read(v):
            return v.val if type(v) is Literal else env[v]

        for v, c in zip(jaxpr.constvars, closed.consts):
            if type(c) is GlobalArray:  # closed over: its block, split as it is
                env[v], layouts[v] = c._local, c.sharding
            else:
                env[v] = c
        for v, x, layout in zip(jaxpr.invars, args, in_layouts):
            env[v] = x
            if layout is not None:
                layouts[v] = layout
        for eqn in jaxpr.eqns:
            invals = [read(v) for v in eqn.invars]
            inl = [None if type(v) is Literal else layouts.get(v) for v in eqn.invars]
            outs, outl = _local_equation(eqn, inl, invals)
            for v, x, layout in zip(eqn.outvars, outs, outl):
                env[v] = x
                if layout is not None:
                    layouts[v] = layout
        out_layouts[:] = [
            None if type(v) is Literal else layouts.get(v) for v in jaxpr.outvars
        ]
        return [read(v) for v in jaxpr.outvars]

    avals = [_local_aval(a, layout) for a, layout in zip(closed.in_avals, in_layouts)]
    local = trace_to_jaxpr(run, avals)
    return local, out_layouts


def _local_equation(eqn, layouts, invals):
    prim = eqn.primitive
    rule = local_rules.get(prim)
    split = any(layout is not None for layout in layouts)
    if prim in layout_primitives.values() or (
        rule is not None
        and (split or any(map(_has_layout_equations, subjaxprs(eqn.params))))
    ):
        return rule(layouts, *invals, **eqn.params)
    if split:
        if prim.name in ELEMENTWISE and not prim.multiple_results:
            return _elementwise(eqn, layouts, invals)
        i = next(i for i, layout in enumerate(layouts) if layout is not None)
        raise partitioner_error(eqn, eqn.invars[i].aval, layouts[i])
    if any(map(_has_layout_equations, subjaxprs(eqn.params))):
        raise NotImplementedError(
            f"jit: a shard_map whose arguments or results are split across "
            f"processes runs inside '{prim}'; jaxlite runs such shard_maps only "
            "directly in the jitted function (or in a jit inside it). Move the "
            f"{prim} into the shard_map's function."
        )
    outs = prim.bind(*invals, **eqn.params)
    outs = outs if prim.multiple_results else [outs]
    return outs, [None] * len(outs)


def _elementwise(eqn, layouts, invals):
    block_p = layout_primitives["block"]
    first = next(layout for layout in layouts if layout is not None)
    shape = eqn.outvars[0].aval.shape
    args = []
    for v, x, layout in zip(eqn.invars, invals, layouts):
        aval = v.aval
        if layout is None:
            if aval.shape == shape and shape:  # replicated: this process's block
                x = block_p.bind(x, mesh=first.mesh, spec=first.spec)
            elif _broadcasts(aval.shape, shape):  # size-1 axes stay whole
                entries = spec_entries(first.spec, len(shape))
                spec = PartitionSpec(
                    *(
                        e if d == n else None
                        for d, n, e in zip(aval.shape, shape, entries)
                    )
                )
                x = block_p.bind(x, mesh=first.mesh, spec=spec)
            elif aval.shape:
                raise partitioner_error(eqn, eqn.outvars[0].aval, first)
        elif layout != first or aval.shape != shape:
            raise partitioner_error(eqn, aval, layout)
        args.append(x)
    return [eqn.primitive.bind(*args, **eqn.params)], [first]


def _broadcasts(operand_shape, shape):
    """Whether an operand of `operand_shape` broadcasts to `shape` by its size-1
    axes (as lax's elementwise operations take them)."""
    return len(operand_shape) == len(shape) and all(
        d == n or d == 1 for d, n in zip(operand_shape, shape)
    )


def call_rule(prim, param):
    """The local rule of a call primitive (jit): the call of its localized jaxpr."""

    def rule(layouts, *args, **params):
        local, out_layouts = localize(params[param], list(layouts))
        outs = prim.bind(*args, **{**params, param: local})
        return outs, out_layouts

    return rule


# --------------------------------------------------------------------------------------
# The executable


class SpmdExecutable:
    """`closed` compiled for this process: called on the blocks of split arguments
    (and the whole replicated ones); `wrap_outputs` makes GlobalArrays of the blocks
    of split results."""

    def __init__(self, closed, name="jit", tiered=False):
        in_layouts = [split_layout(a) for a in closed.in_avals]
        local, self.out_layouts = localize(closed, in_layouts)
        self.local = local
        self.out_avals = closed.out_avals
        self.exe = backend.compile(local, name, tiered=tiered)

    def __call__(self, *vals):
        return self.exe(*vals)

    @property
    def source(self):
        """The code this process runs (`jit(f).lower(...).as_text()`)."""
        return self.exe.source

    def wrap_outputs(self, outs, out_weak):
        return [
            Array(o, w) if layout is None else GlobalArray(o, aval.shape, layout, w)
            for o, w, layout, aval in zip(
                outs, out_weak, self.out_layouts, self.out_avals
            )
        ]

    def any_split_output(self):
        return any(layout is not None for layout in self.out_layouts)


def block_of(x):
    """The value a compiled SPMD program takes for argument `x`."""
    return x._local if isinstance(x, GlobalArray) else x


# --------------------------------------------------------------------------------------
# jit's in_shardings and out_shardings


def _per_leaf(shardings, tree, what):
    from jaxlite import tree_util
    from jaxlite.sharding import Sharding

    def is_leaf(s):
        return s is None or isinstance(s, Sharding)

    if is_leaf(shardings):
        return [shardings] * len(tree_util.tree_leaves(tree))
    out = []
    try:
        tree_util.tree_map(
            lambda s, sub: out.extend([s] * len(tree_util.tree_leaves(sub))),
            shardings,
            tree,
            is_leaf=is_leaf,
        )
    except (ValueError, TypeError) as e:
        raise ValueError(
            f"jit {what} must be a pytree prefix of the {what[:-10]}s "
            f"(a Sharding for each, or one for all): {e}"
        ) from None
    return out


def lay_out(values, shardings, what):
    """`values` (a pytree) laid out as `shardings` (jit's `in_shardings` or
    `out_shardings`): a whole array given a sharding split across processes becomes
    the GlobalArray of this process's block; an array already split must be laid out
    that way (jaxlite moves no data between processes)."""
    from jaxlite import tree_util
    from jaxlite.distributed.global_array import cut_block, global_array

    leaves, tree = tree_util.tree_flatten(values)
    out = []
    for x, s in zip(leaves, _per_leaf(shardings, values, what)):
        ndim = np.ndim(x) if type(x) is not GlobalArray else x.ndim
        if isinstance(s, NamedSharding) and spans_processes(s.mesh, s.spec, ndim):
            if type(x) is GlobalArray:
                if x.sharding.mesh != s.mesh or spec_entries(
                    x.sharding.spec, ndim
                ) != spec_entries(s.spec, ndim):
                    raise NotImplementedError(
                        f"jit {what}: an array laid out as {x.sharding!r} was asked "
                        f"to be laid out as {s!r}; jaxlite does not move data "
                        "between processes to change a layout (reshard it inside "
                        "jax.shard_map with collectives)."
                    )
            else:  # whole in every process: keep this process's block
                x = global_array(cut_block(np.asarray(x), s.mesh, s.spec), s.mesh,
                                 s.spec)  # fmt: skip
        out.append(x)
    return tree_util.tree_unflatten(tree, out)
