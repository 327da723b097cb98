"""Pytrees: nested containers of leaves, flattened to a list plus a structure.

Every transformation in jaxlite starts by flattening its arguments into leaves and
a `PyTreeDef`, and ends by unflattening results. Tuples, lists, dicts (keys
sorted), `None`, namedtuples, `OrderedDict`, `defaultdict` and registered classes
are nodes; everything else is a leaf. The semantics, reprs and error messages are
JAX 0.10.2's.

A `PyTreeDef` is a flat tuple of node descriptors in preorder: `_LEAF` for a leaf,
`(kind, aux, arity)` for a node. Flat tuples are cheap to build in one recursive
pass, compare and hash in C, and walk top-down for `flatten_up_to`; the hash is
computed once per treedef because treedefs are part of `jit` cache keys. Node
kinds are looked up by exact `type(x)` in one dict that also caches the verdict for
leaf types and namedtuple classes, so the hot path does one dict lookup per object.

The node kinds and their registry (`register_pytree_node`, ...) live in
`tree_registry`. This module, `tree_registry` and `tree_keys` (key paths) are the
bottom layer of jaxlite: pure Python, no other imports from jaxlite.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeVar

from jaxlite.tree_keys import DictKey as DictKey  # re-exported: JAX's tree_util names
from jaxlite.tree_keys import FlattenedIndexKey as FlattenedIndexKey
from jaxlite.tree_keys import GetAttrKey as GetAttrKey
from jaxlite.tree_keys import KeyPath as KeyPath
from jaxlite.tree_keys import PytreeLeaf as PytreeLeaf
from jaxlite.tree_keys import SequenceKey as SequenceKey
from jaxlite.tree_keys import keystr as keystr
from jaxlite.tree_keys import prefix_error
from jaxlite.tree_keys import tree_prefix_errors as prefix_errors  # JAX's private name
from jaxlite.tree_registry import (  # noqa: F401  (re-exported: JAX's tree_util names)
    _DICT,
    _LEAF,
    _LEAF_KIND,
    _LIST,
    _NONE,
    _NONE_DESC,
    _TUPLE,
    _classify,
    _kind_for_type,
    _kind_of,
    _kinds,
    _kinds_get,
    _sorted_keys,
    is_tree_node,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    register_pytree_with_keys,
    register_pytree_with_keys_class,
    register_static,
)

T = TypeVar("T")
KeyEntry = Any

# ---------------------------------------------------------------------------
# Flattening. `_flatten` is the hot path: tuples, lists and dicts are inlined
# and a leaf child costs one dict lookup and two appends.


def _flatten(node, leaves, spec):
    kind = _kinds_get(type(node)) or _classify(type(node))
    if kind is _LEAF_KIND:
        leaves.append(node)
        spec.append(_LEAF)
    elif kind is _TUPLE or kind is _LIST:
        spec.append((kind, None, len(node)))
        for child in node:
            if _kinds_get(type(child)) is _LEAF_KIND:
                leaves.append(child)
                spec.append(_LEAF)
            else:
                _flatten(child, leaves, spec)
    elif kind is _DICT:
        try:
            keys = tuple(sorted(node))
        except TypeError:
            keys = _sorted_keys(node)  # raises the pytree error
        spec.append((_DICT, keys, len(keys)))
        for key in keys:
            child = node[key]
            if _kinds_get(type(child)) is _LEAF_KIND:
                leaves.append(child)
                spec.append(_LEAF)
            else:
                _flatten(child, leaves, spec)
    elif kind is _NONE:
        spec.append(_NONE_DESC)
    else:
        children, aux = _custom_children(kind, node)
        spec.append((kind, aux, len(children)))
        for child in children:
            _flatten(child, leaves, spec)


def _custom_children(kind, node):
    """`(children, aux_data)` of a custom node, children as a tuple or list."""
    try:
        children, aux = kind.flatten(node)
        if type(children) is not tuple and type(children) is not list:
            children = tuple(children)
    except (TypeError, ValueError):
        raise _bad_flatten_error(kind.flatten(node)) from None
    return children, aux


def _bad_flatten_error(result):
    """JAX's error for a custom node's flatten function that did not return a
    `(children, aux_data)` pair whose children are iterable."""
    msg = (
        "The to_iterable function for a custom PyTree node should return a "
        "(children, aux_data) tuple"
    )
    try:
        _, _ = result
    except (TypeError, ValueError):
        return ValueError(f"{msg}, got {result!r}")
    return ValueError(f"{msg} where 'children' is iterable, got {result!r}")


def _flatten_is_leaf(node, leaves, spec, is_leaf):
    kind = _kinds_get(type(node)) or _classify(type(node))
    if is_leaf(node) or kind is _LEAF_KIND:
        leaves.append(node)
        spec.append(_LEAF)
        return
    children, aux = _custom_children(kind, node)
    spec.append((kind, aux, len(children)))
    for child in children:
        _flatten_is_leaf(child, leaves, spec, is_leaf)


def _collect_leaves(node, leaves):
    kind = _kinds_get(type(node)) or _classify(type(node))
    if kind is _LEAF_KIND:
        leaves.append(node)
    elif kind is _TUPLE or kind is _LIST:
        for child in node:
            if _kinds_get(type(child)) is _LEAF_KIND:
                leaves.append(child)
            else:
                _collect_leaves(child, leaves)
    elif kind is _DICT:
        for key in _sorted_keys(node):
            _collect_leaves(node[key], leaves)
    elif kind is not _NONE:
        try:
            children, _ = kind.flatten(node)
            children = iter(children)
        except (TypeError, ValueError):
            raise _bad_flatten_error(kind.flatten(node)) from None
        for child in children:
            _collect_leaves(child, leaves)


def _flatten_with_path(node, path, pairs, spec, is_leaf, takes_path):
    kind = _kinds_get(type(node)) or _classify(type(node))
    if is_leaf is not None:
        stop = is_leaf(path, node) if takes_path else is_leaf(node)
    else:
        stop = False
    if stop or kind is _LEAF_KIND:
        pairs.append((path, node))
        spec.append(_LEAF)
        return
    try:
        keyed, aux = kind.flatten_with_keys(node)
        if type(keyed) is not tuple and type(keyed) is not list:
            keyed = tuple(keyed)
    except (TypeError, ValueError):
        raise _bad_flatten_error(kind.flatten(node)) from None
    spec.append((kind, aux, len(keyed)))
    for key, child in keyed:
        _flatten_with_path(child, (*path, key), pairs, spec, is_leaf, takes_path)


def _make_treedef(spec, num_leaves):
    treedef = _new_object(PyTreeDef)
    treedef._spec = spec
    treedef._num_leaves = num_leaves
    treedef._hash = None
    treedef._builder = None
    return treedef


def tree_flatten(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[Any], PyTreeDef]:
    """Returns the leaves of `tree` (left to right) and its structure."""
    leaves = []
    spec = []
    if is_leaf is None:
        _flatten(tree, leaves, spec)
    else:
        _flatten_is_leaf(tree, leaves, spec, is_leaf)
    treedef = _new_object(PyTreeDef)
    treedef._spec = tuple(spec)
    treedef._num_leaves = len(leaves)
    treedef._hash = None
    treedef._builder = None
    return leaves, treedef


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of `tree`, left to right."""
    leaves = []
    if is_leaf is None:
        _collect_leaves(tree, leaves)
    else:
        _flatten_is_leaf(tree, leaves, [], is_leaf)
    return leaves


def tree_structure(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> PyTreeDef:
    """The `PyTreeDef` of `tree`."""
    return tree_flatten(tree, is_leaf)[1]


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuilds the pytree with structure `treedef` from `leaves`."""
    return treedef.unflatten(leaves)


def tree_flatten_with_path(
    tree: Any,
    is_leaf: Callable[..., bool] | None = None,
    is_leaf_takes_path: bool = False,
) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """Like `tree_flatten`, each leaf paired with its key path."""
    pairs = []
    spec = []
    _flatten_with_path(tree, (), pairs, spec, is_leaf, is_leaf_takes_path)
    return pairs, _make_treedef(tuple(spec), len(pairs))


def tree_leaves_with_path(
    tree: Any,
    is_leaf: Callable[..., bool] | None = None,
    is_leaf_takes_path: bool = False,
) -> list[tuple[KeyPath, Any]]:
    """The `(key_path, leaf)` pairs of `tree`."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Hashable]:
    """The children and metadata of the node `tree` (ValueError for a leaf)."""
    kind = _kind_of(type(tree))
    if kind is _LEAF_KIND:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    try:
        children, aux = kind.flatten(tree)
    except (TypeError, ValueError):
        raise _bad_flatten_error(kind.flatten(tree)) from None
    if kind.label == "namedtuple":
        return list(children), kind.type
    return children, aux


def flatten_one_level_with_keys(
    tree: Any,
) -> tuple[Iterable[tuple[Any, Any]], Hashable]:
    """The `(key, child)` pairs and metadata of the node `tree`."""
    kind = _kind_of(type(tree))
    if kind is _LEAF_KIND:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    pairs, aux = kind.flatten_with_keys(tree)
    if kind.label == "namedtuple":
        return pairs, kind.type
    return pairs, aux


def all_leaves(
    iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None
) -> bool:
    """Whether every element of `iterable` is a leaf (`None` is not)."""
    for x in iterable:
        if is_leaf is not None and is_leaf(x):
            continue
        if _kind_of(type(x)) is not _LEAF_KIND:
            return False
    return True


# ---------------------------------------------------------------------------
# PyTreeDef.

_new_object = object.__new__


def _fold(spec, leaf_fn, node_fn):
    """Folds a spec bottom-up in preorder: `leaf_fn()` at each leaf,
    `node_fn(i, desc, results)` at the node at `i`, with its children's results."""

    def fold(i):
        desc = spec[i]
        if desc is _LEAF:
            return leaf_fn(), i + 1
        j = i + 1
        results = []
        for _ in range(desc[2]):
            result, j = fold(j)
            results.append(result)
        return node_fn(i, desc, results), j

    return fold(0)[0]


def _subtree_end(spec, start):
    """The index one past the subtree of `spec` rooted at `start`."""
    pending = 1
    i = start
    while pending:
        pending += -1 if spec[i] is _LEAF else spec[i][2] - 1
        i += 1
    return i


def _spec_hash(spec):
    try:
        return hash(spec)
    except TypeError:
        # Unhashable aux data: hash the shape of the tree only.
        return hash(tuple(d if d is _LEAF else (d[0], d[2]) for d in spec))


def _build(leaves, spec):
    """Rebuilds a pytree from a spec and as many leaves as it has leaf slots.

    Walks the preorder spec backwards with a stack: a leaf pushes the next leaf
    (from the right), a node pops its children (the top of the stack is its first
    child) and pushes itself.
    """
    stack = []
    push = stack.append
    i = len(leaves)
    for desc in reversed(spec):
        if desc is _LEAF:
            i -= 1
            push(leaves[i])
            continue
        kind, aux, n = desc
        children = stack[: -n - 1 : -1]
        del stack[len(stack) - n :]
        if kind is _TUPLE:
            push(tuple(children))
        elif kind is _LIST:
            push(children)
        elif kind is _DICT:
            push(dict(zip(aux, children)))
        else:
            push(kind.unflatten(aux, tuple(children)))
    return stack[0]


# Compiled builders. The second time a structure is unflattened, its spec is
# turned into one Python expression, e.g. `(l[0], {s[1][1][0]: l[1], ...})`,
# which runs several times faster than `_build`. Keys and aux data are read
# from the spec `s` at call time, so one builder serves every equal spec. A
# treedef keeps its builder; the global cache (bounded) holds only specs whose
# aux data are plain values, so that it never keeps user objects alive, and
# remembers structures seen once by their hash.
_MAX_COMPILED_NODES = 256
_MAX_CACHED_BUILDERS = 2048
_builders: dict[tuple, Callable] = {}
_seen_hashes: set[int] = set()
_PLAIN_TYPES = (type(None), bool, int, float, complex, str, bytes, type)
_SEEN_ONCE = object()  # a treedef's `_builder` after its first unflatten


def _is_plain(aux):
    if type(aux) is tuple:
        return all(map(_is_plain, aux))
    return isinstance(aux, _PLAIN_TYPES)


def _builder_expr(i, desc, parts):
    kind = desc[0]
    if kind is _TUPLE:
        return f"({''.join(p + ', ' for p in parts)})"
    if kind is _LIST:
        return f"[{', '.join(parts)}]"
    if kind is _DICT:
        return f"{{{', '.join(f's[{i}][1][{k}]: {p}' for k, p in enumerate(parts))}}}"
    if kind is _NONE:
        return "None"
    if kind.label == "namedtuple":
        return f"s[{i}][0].type({', '.join(parts)})"
    return f"s[{i}][0].unflatten(s[{i}][1], ({''.join(p + ', ' for p in parts)}))"


def _compile_builder(spec):
    counter = itertools.count()
    body = _fold(spec, lambda: f"l[{next(counter)}]", _builder_expr)
    namespace = {}
    try:
        code = compile(f"def build(l, s):\n    return {body}\n", "<pytree>", "exec")
    except (SyntaxError, RecursionError, MemoryError):  # too deeply nested
        return _build
    exec(code, namespace)
    return namespace["build"]


def _builder_for(spec, seen):
    """The builder for the next unflatten of a treedef with `spec`, or None to
    interpret this once; `seen` says the treedef was unflattened before."""
    try:
        builder = _builders.get(spec)
    except TypeError:  # unhashable aux data
        builder = None
    if builder is not None:
        return builder
    if len(spec) > _MAX_COMPILED_NODES:
        return _build
    plain = all(d is _LEAF or _is_plain(d[1]) for d in spec)
    if not seen and not (plain and hash(spec) in _seen_hashes):
        if plain:
            if len(_seen_hashes) >= _MAX_CACHED_BUILDERS:
                _seen_hashes.clear()
            _seen_hashes.add(hash(spec))
        return None
    builder = _compile_builder(spec)
    if plain:
        if len(_builders) >= _MAX_CACHED_BUILDERS:
            _builders.clear()
        _builders[spec] = builder
    return builder


def _walk_up_to(spec, i, tree, out):
    """Matches `tree` against the subtree of `spec` at `i`; appends the subtrees
    at its leaves to `out` and returns the index after the subtree."""
    desc = spec[i]
    if desc is _LEAF:
        out.append(tree)
        return i + 1
    kind, aux, n = desc
    i += 1
    if kind is _TUPLE or kind is _LIST:
        name = kind.name
        if type(tree) is not kind.type:
            raise ValueError(f"Expected {name}, got {tree!r}.")
        if len(tree) != n:
            raise ValueError(
                f"{name.capitalize()} arity mismatch: {len(tree)} != {n}; "
                f"{name}: {tree!r}."
            )
        children = tree
    elif kind is _DICT:
        if type(tree) is not dict:
            raise ValueError(f"Expected dict, got {tree!r}.")
        keys = _sorted_keys(tree)
        if keys != aux:
            raise ValueError(
                f"Dict key mismatch; expected keys: {list(aux)}; present keys: "
                f"{list(keys)}."
            )
        children = [tree[k] for k in keys]
    elif kind is _NONE:
        if tree is not None:
            raise ValueError(
                f"Expected None, got {tree!r}.\n\n"
                "In previous releases of JAX, flatten-up-to used to consider None "
                "to be a tree-prefix of non-None values. To obtain the previous "
                "behavior, you can usually write:\n"
                "  jax.tree.map(lambda x, y: None if x is None else f(x, y), a, b, "
                "is_leaf=lambda x: x is None)"
            )
        return i
    elif kind.label == "namedtuple":
        if not (isinstance(tree, tuple) and hasattr(tree, "_fields")):
            raise ValueError(f"Expected named tuple, got {tree!r}.")
        if type(tree) is not kind.type:
            raise ValueError(
                f"Named tuple type mismatch: expected type: {kind.type!r}, "
                f"tuple: {tree!r}."
            )
        if len(tree) != n:
            raise ValueError(
                f"Named tuple arity mismatch: {len(tree)} != {n}; tuple: {tree!r}."
            )
        children = tree
    else:
        label = kind.label.capitalize()
        if type(tree) is not kind.type:
            raise ValueError(
                f"{label} node type mismatch: expected type: {kind.type!r}, "
                f"value: {tree!r}."
            )
        children, tree_aux = kind.flatten(tree)
        if tree_aux != aux:
            raise ValueError(
                f"Mismatch {kind.label} node data: {aux!r} != {tree_aux!r}; "
                f"value: {tree!r}."
            )
        children = tuple(children)
        if len(children) != n:
            raise ValueError(
                f"{label} type arity mismatch: {len(children)} != {n}; value: {tree!r}."
            )
    for child in children:
        i = _walk_up_to(spec, i, child, out)
    return i


def _repr_node(i, desc, parts):
    kind, aux, n = desc
    if kind is _TUPLE:
        return f"({parts[0]},)" if n == 1 else f"({', '.join(parts)})"
    if kind is _LIST:
        return f"[{', '.join(parts)}]"
    if kind is _DICT:
        return f"{{{', '.join(f'{k!r}: {p}' for k, p in zip(aux, parts))}}}"
    if kind is _NONE:
        return "None"
    if kind.label == "namedtuple":
        return f"CustomNode({kind.name}, [{', '.join(parts)}])"
    return f"CustomNode({kind.name}[{aux}], [{', '.join(parts)}])"


def _public_node_data(kind, aux):
    if kind is _DICT:
        return kind.type, list(aux)
    return kind.type, aux


class PyTreeDef:
    """The structure of a pytree: what `tree_flatten` returns besides the leaves.

    Hashable and comparable; equal structures compare equal. Build one with
    `tree_structure`, never directly.
    """

    __slots__ = ("_spec", "_num_leaves", "_hash", "_builder", "__weakref__")

    def __init__(self):
        raise TypeError("PyTreeDef objects are made by tree_flatten/tree_structure.")

    @property
    def num_leaves(self) -> int:
        return self._num_leaves

    @property
    def num_nodes(self) -> int:
        return len(self._spec)

    def __hash__(self):
        h = self._hash
        if h is None:
            h = self._hash = _spec_hash(self._spec)
        return h

    def __eq__(self, other):
        if self is other:
            return True
        if type(other) is not PyTreeDef:
            return NotImplemented
        try:
            return self._spec == other._spec
        except Exception as e:  # metadata whose == does not give a bool (arrays)
            raise ValueError(
                "Exception raised while checking equality of metadata fields of "
                "pytree. Make sure that metadata fields are hashable and have simple "
                "equality semantics. (Note: arrays cannot be passed as metadata "
                "fields!)"
            ) from e

    def __repr__(self):
        return f"PyTreeDef({_fold(self._spec, lambda: '*', _repr_node)})"

    def __reduce__(self):
        return _make_treedef, (self._spec, self._num_leaves)

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """Rebuilds a pytree of this structure from `leaves`."""
        if type(leaves) is not list and type(leaves) is not tuple:
            leaves = list(leaves)
        if len(leaves) != self._num_leaves:
            if len(leaves) < self._num_leaves:
                raise ValueError(
                    "Too few leaves for PyTreeDef; expected "
                    f"{self._num_leaves}, got {len(leaves)}"
                )
            raise ValueError(
                f"Too many leaves for PyTreeDef; expected {self._num_leaves}."
            )
        builder = self._builder
        if builder is None or builder is _SEEN_ONCE:
            builder = _builder_for(self._spec, builder is _SEEN_ONCE)
            if builder is None:
                self._builder = _SEEN_ONCE
                return _build(leaves, self._spec)
            self._builder = builder
        return builder(leaves, self._spec)

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """The subtrees of `tree` at this structure's leaves (it must be a prefix)."""
        out = []
        _walk_up_to(self._spec, 0, tree, out)
        return out

    def children(self) -> list[PyTreeDef]:
        """The structures of the root's children."""
        spec = self._spec
        if spec[0] is _LEAF:
            return []
        out = []
        start = 1
        for _ in range(spec[0][2]):
            end = _subtree_end(spec, start)
            sub = spec[start:end]
            out.append(_make_treedef(sub, sub.count(_LEAF)))
            start = end
        return out

    def node_data(self) -> tuple[type, Any] | None:
        """`(type, aux_data)` of the root node, or None for a leaf."""
        desc = self._spec[0]
        if desc is _LEAF:
            return None
        return _public_node_data(desc[0], desc[1])

    @staticmethod
    def from_node_data_and_children(
        registry: Any, node_data: tuple[type, Any] | None, children: Iterable[PyTreeDef]
    ) -> PyTreeDef:
        """Inverse of `node_data()` and `children()`; `registry` is ignored."""
        children = list(children)
        if node_data is None:
            if children:
                raise ValueError("A leaf PyTreeDef has no children.")
            return _make_treedef((_LEAF,), 1)
        typ, data = node_data
        kind = _kind_for_type(typ)
        aux = tuple(data) if kind is _DICT else data
        spec = [(kind, aux, len(children))]
        for child in children:
            spec.extend(child._spec)
        return _make_treedef(tuple(spec), sum(c._num_leaves for c in children))

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """This structure with every leaf replaced by `inner`."""
        spec = []
        for desc in self._spec:
            if desc is _LEAF:
                spec.extend(inner._spec)
            else:
                spec.append(desc)
        return _make_treedef(tuple(spec), self._num_leaves * inner._num_leaves)

    def walk(self, f_node: Callable, f_leaf: Callable | None, leaves: Iterable[Any]):
        """Folds over the structure: `f_leaf(leaf)` at leaves, `f_node(children,
        node_data)` at nodes (children already folded)."""
        leaves_iter = iter(leaves)

        def leaf_fn():
            leaf = next(leaves_iter)
            return leaf if f_leaf is None else f_leaf(leaf)

        def node_fn(i, desc, results):
            kind, aux, _ = desc
            data = kind.type if kind.label == "namedtuple" else aux
            return f_node(tuple(results), list(aux) if kind is _DICT else data)

        return _fold(self._spec, leaf_fn, node_fn)


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple whose children have structures `treedefs`."""
    treedefs = list(treedefs)
    for td in treedefs:
        if type(td) is not PyTreeDef:
            raise TypeError(f"treedef_tuple expects PyTreeDefs, got {td!r}.")
    spec = [(_TUPLE, None, len(treedefs))]
    for td in treedefs:
        spec.extend(td._spec)
    return _make_treedef(tuple(spec), sum(td._num_leaves for td in treedefs))


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    return treedef.children()


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether `treedef` has a single node (a leaf, `None`, `()`, ...)."""
    return len(treedef._spec) == 1


# ---------------------------------------------------------------------------
# Mapping, reducing, transposing.


def _mismatch_error(name, tree, rest, treedef, is_leaf, error):
    """The 'pytree structure error' for the first tree of `rest` that `treedef` is
    not a prefix of, or `error` when the mismatch cannot be pinned down."""
    for other in rest:
        try:
            treedef.flatten_up_to(other)
        except Exception:
            return prefix_error(name, (), tree, other, is_leaf) or error
    return error


def tree_map(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Applies `f` leafwise; the other trees must have `tree`'s structure as prefix."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    try:
        others = [treedef.flatten_up_to(r) for r in rest]
    except Exception as e:
        raise _mismatch_error(
            "tree_map tree", tree, rest, treedef, is_leaf, e
        ) from None
    return treedef.unflatten([f(*xs) for xs in zip(leaves, *others)])


def tree_map_with_path(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[..., bool] | None = None,
    is_leaf_takes_path: bool = False,
) -> Any:
    """Like `tree_map`, with `f(key_path, leaf, *others)`."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    try:
        others = [treedef.flatten_up_to(r) for r in rest]
    except Exception as e:
        plain_is_leaf = None if is_leaf_takes_path else is_leaf
        raise _mismatch_error(
            "tree_map_with_path tree", tree, rest, treedef, plain_is_leaf, e
        ) from None
    paths = [p for p, _ in pairs]
    leaves = [x for _, x in pairs]
    return treedef.unflatten([f(*xs) for xs in zip(paths, leaves, *others)])


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every leaf is truthy."""
    return all(tree_leaves(tree, is_leaf))


class Unspecified:
    """Marks an argument that was not passed (None is a valid initializer)."""

    def __repr__(self):
        return "<unspecified>"


_UNSPECIFIED = Unspecified()


def tree_reduce(
    function: Callable[[T, Any], T],
    tree: Any,
    initializer: Any = _UNSPECIFIED,
    is_leaf: Callable[[Any], bool] | None = None,
) -> T:
    """`functools.reduce` over the leaves."""
    if initializer is _UNSPECIFIED:
        return functools.reduce(function, tree_leaves(tree, is_leaf))
    return functools.reduce(function, tree_leaves(tree, is_leaf), initializer)


def tree_reduce_associative(
    operation: Callable[[T, T], T],
    tree: Any,
    *,
    identity: Any = _UNSPECIFIED,
    is_leaf: Callable[[Any], bool] | None = None,
) -> T:
    """Reduces the leaves with an associative `operation` as a balanced tree."""
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is _UNSPECIFIED:
            raise TypeError(
                "Must specify identity for parallel reduction of empty sequence."
            )
        return identity

    def reduce(xs):
        if len(xs) == 1:
            return xs[0]
        mid = len(xs) // 2
        return operation(reduce(xs[:mid]), reduce(xs[mid:]))

    return reduce(leaves)


def tree_transpose(
    outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose: Any
) -> Any:
    """Turns an outer-of-inner pytree into an inner-of-outer one."""
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(
            outer_treedef.flatten_up_to(pytree_to_transpose)[0]
        )
    inner_size = inner_treedef.num_leaves
    outer_size = outer_treedef.num_leaves
    if treedef.num_leaves != inner_size * outer_size:
        expected = outer_treedef.compose(inner_treedef)
        raise TypeError(f"Mismatch\n{treedef}\n != \n{expected}")
    rows = [flat[i * inner_size : (i + 1) * inner_size] for i in range(outer_size)]
    columns = [outer_treedef.unflatten(col) for col in zip(*rows)]
    if not rows:
        columns = [outer_treedef.unflatten([]) for _ in range(inner_size)]
    return inner_treedef.unflatten(columns)


def tree_broadcast(
    prefix_tree: Any, full_tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> Any:
    """Repeats each leaf of `prefix_tree` over the matching subtree of `full_tree`."""
    leaves = broadcast_prefix(prefix_tree, full_tree, is_leaf)
    return tree_structure(full_tree).unflatten(leaves)


def broadcast_prefix(
    prefix_tree: Any, full_tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> list[Any]:
    """The leaves of `full_tree`'s structure, each the leaf of `prefix_tree` over
    the subtree holding it (JAX's private `broadcast_prefix`); JAX's "pytree structure
    error" ValueError when `prefix_tree` is no prefix of `full_tree`."""
    prefix_leaves, prefix_def = tree_flatten(prefix_tree, is_leaf)
    try:
        subtrees = prefix_def.flatten_up_to(full_tree)
    except (TypeError, ValueError) as e:
        errors = prefix_errors(prefix_tree, full_tree, is_leaf)
        raise (errors[0]("broadcast_prefix prefix_tree") if errors else e) from None
    leaves = []
    for leaf, subtree in zip(prefix_leaves, subtrees):
        leaves.extend([leaf] * tree_structure(subtree).num_leaves)
    return leaves


# ---------------------------------------------------------------------------
# Partial: a functools.partial whose bound arguments are pytree children.


class _HashableCallableShim:
    """Wraps a partial that is the `func` of a `Partial`, so that
    `functools.partial` does not merge its arguments into the new one; the wrapped
    partial and its arguments stay static (aux data)."""

    __slots__ = ("fun",)

    def __init__(self, fun):
        self.fun = fun

    def __call__(self, *args, **kw):
        return self.fun(*args, **kw)

    def __hash__(self):
        return hash(self.fun)

    def __eq__(self, other):
        if isinstance(other, _HashableCallableShim):
            return self.fun == other.fun
        return self.fun == other

    def __repr__(self):
        return f"_HashableCallableShim({self.fun!r})"

    def __getattr__(self, name):  # `func`, `args`, `keywords` of the wrapped partial
        if name == "fun":
            raise AttributeError(name)
        return getattr(self.fun, name)


class Partial(functools.partial):
    """A `functools.partial` that is a pytree: the function is static aux data, the
    bound `args` and `keywords` are children, so a `Partial` can be passed through
    transformed functions."""

    def __new__(cls, func, *args, **kw):
        if isinstance(func, functools.partial):
            func = _HashableCallableShim(func)
        return super().__new__(cls, func, *args, **kw)


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, xs: Partial(func, *xs[0], **xs[1]),
)


class PyTreeRegistry:
    """The registry of pytree node types, as an object (JAX's `default_registry`):
    its methods are the module's flatten and register functions."""

    def flatten(self, tree, leaf_predicate=None):
        return tree_flatten(tree, is_leaf=leaf_predicate)

    def flatten_one_level(self, tree):
        return flatten_one_level(tree)

    def flatten_one_level_with_keys(self, tree):
        return flatten_one_level_with_keys(tree)

    def flatten_with_path(self, tree, leaf_predicate=None):
        return tree_flatten_with_path(tree, is_leaf=leaf_predicate)

    def is_node(self, typ):
        return is_tree_node(typ)

    def register_node(
        self, type_, to_iterable, from_iterable, to_iterable_with_keys=None
    ):
        if to_iterable_with_keys is None:
            register_pytree_node(type_, to_iterable, from_iterable)
        else:
            register_pytree_with_keys(
                type_, to_iterable_with_keys, from_iterable, to_iterable
            )

    def register_dataclass_node(self, type_, data_fields, meta_fields):
        register_dataclass(type_, data_fields, meta_fields)


default_registry = PyTreeRegistry()
