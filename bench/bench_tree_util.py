"""Pytree benchmark: jaxlite.tree_util against jax.tree_util and optree.

Times flatten, unflatten, flatten + hash of the treedef (what a `jit` cache lookup
does), tree_map and tree_leaves on a few structures, in microseconds per call (best
of several repeats). Prints a table, then one line of JSON. JAX and optree are
measured when importable, to judge whether an optional optree fast path is worth
having.

    python bench/bench_tree_util.py [--quick]
"""

import collections
import json
import platform
import sys
import timeit

import jaxlite.tree_util as jaxlite_tu


class Leaf:
    """An arbitrary leaf object (stands in for an array)."""


x, y = Leaf(), Leaf()
Point = collections.namedtuple("Point", ["x", "y"])

STRUCTURES = {
    "(x,)": (x,),
    "(x, y)": (x, y),
    "({'a': x, 'b': y},)": ({"a": x, "b": y},),
    "Point(x, [y, None])": Point(x, [y, None]),
    "list of 100": [Leaf() for _ in range(100)],
    "params 10x{w,b}": {f"layer{i}": {"w": Leaf(), "b": Leaf()} for i in range(10)},
}


def _libraries():
    """name -> (flatten, unflatten, tree_map, tree_leaves) of each library."""
    libs = {
        "jaxlite": (
            jaxlite_tu.tree_flatten,
            jaxlite_tu.tree_unflatten,
            jaxlite_tu.tree_map,
            jaxlite_tu.tree_leaves,
        )
    }
    try:
        import jax.tree_util as jtu
    except ImportError:
        pass
    else:
        libs["jax"] = (
            jtu.tree_flatten,
            jtu.tree_unflatten,
            jtu.tree_map,
            jtu.tree_leaves,
        )
    try:
        import optree
    except ImportError:
        pass
    else:
        libs["optree"] = (
            optree.tree_flatten,
            optree.tree_unflatten,
            optree.tree_map,
            optree.tree_leaves,
        )
    return libs


def _time_us(fn, min_seconds):
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    number = max(number, int(number * min_seconds / 0.2))
    best = min(timer.repeat(repeat=5, number=number))
    return best / number * 1e6


def _operations(flatten, unflatten, tree_map, tree_leaves, tree):
    leaves, treedef = flatten(tree)
    unflatten(treedef, leaves)  # builders compile on a repeated structure
    unflatten(treedef, leaves)
    return {
        "flatten": lambda: flatten(tree),
        "unflatten": lambda: unflatten(treedef, leaves),
        "flatten+hash": lambda: hash(flatten(tree)[1]),
        "tree_map": lambda: tree_map(id, tree),
        "tree_leaves": lambda: tree_leaves(tree),
    }


def run(min_seconds=0.2):
    results = []
    for lib, functions in _libraries().items():
        for name, tree in STRUCTURES.items():
            for op, fn in _operations(*functions, tree).items():
                us = _time_us(fn, min_seconds)
                results.append({"lib": lib, "structure": name, "op": op, "us": us})
    return results


def table(results):
    libs = list(dict.fromkeys(r["lib"] for r in results))
    by_key = {(r["structure"], r["op"], r["lib"]): r["us"] for r in results}
    rows = list(dict.fromkeys((r["structure"], r["op"]) for r in results))
    head = f"{'structure':22} {'op':13}" + "".join(f"{lib:>10}" for lib in libs)
    lines = [head, "-" * len(head)]
    for structure, op in rows:
        cells = "".join(f"{by_key[structure, op, lib]:10.3f}" for lib in libs)
        lines.append(f"{structure:22} {op:13}{cells}")
    return "\n".join(lines)


def main():
    min_seconds = 0.05 if "--quick" in sys.argv else 0.2
    results = run(min_seconds)
    print(f"microseconds per call, Python {platform.python_version()}")
    print(table(results))
    print(json.dumps({"benchmark": "tree_util", "unit": "us", "results": results}))


if __name__ == "__main__":
    main()
