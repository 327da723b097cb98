"""Pytree node kinds and their registry: which types are nodes, and how each one
flattens, unflattens and names its children's keys.

A `_NodeKind` describes one node type; `_kinds` maps an exact type to its kind.
Tuples, lists, dicts, `None`, `OrderedDict` and `defaultdict` are built in;
`register_pytree_node` and its variants (classes, keyed flattens, dataclasses,
static types) add more. Namedtuple classes and leaf types are classified the first
time they are met and cached in the same dict, so that `tree_util`'s hot path does
one lookup per object. Pure Python, importing only `tree_keys`, like `tree_util`.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import operator
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, TypeVar

from jaxlite.tree_keys import DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey

T = TypeVar("T")
Typ = TypeVar("Typ", bound=type)


class _NodeKind:
    """How one node type flattens and unflattens.

    `flatten(x) -> (children, aux)`, `unflatten(aux, children) -> x` and
    `flatten_with_keys(x) -> ((key, child) pairs, aux)`. `label` names the kind
    in `flatten_up_to` errors; `name` is its repr inside `CustomNode(...)`.
    """

    __slots__ = ("type", "flatten", "unflatten", "flatten_with_keys", "name", "label")

    def __init__(self, typ, flatten, unflatten, flatten_with_keys, name, label):
        self.type = typ
        self.flatten = flatten
        self.unflatten = unflatten
        self.flatten_with_keys = flatten_with_keys
        self.name = name
        self.label = label

    def __repr__(self):
        return f"<pytree node kind {self.name}>"

    def __reduce__(self):
        return _kind_for_type, (self.type,)


class _LeafMarker:
    """The descriptor of a leaf in a treedef's spec (a singleton)."""

    __slots__ = ()

    def __repr__(self):
        return "*"

    def __reduce__(self):
        return "_LEAF"


_LEAF = _LeafMarker()
# Exact type -> kind. Leaf types and namedtuple classes are cached here as they
# are met, so that each object costs one lookup; `_MAX_CACHED_TYPES` bounds the
# cache of unregistered types for programs that create classes dynamically.
_kinds: dict[type, _NodeKind] = {}
_MAX_CACHED_TYPES = 4096
_kinds_get = _kinds.get


def _sorted_keys(d) -> tuple:
    try:
        return tuple(sorted(d))
    except TypeError as e:
        raise ValueError(
            "Comparator raised exception while sorting pytree dictionary keys."
        ) from e


def _with_keys(flatten, make_keys):
    """A `flatten_with_keys` from a `flatten` and `make_keys(node, aux)`."""

    def flatten_with_keys(x):
        children, aux = flatten(x)
        return list(zip(make_keys(x, aux), children)), aux

    return flatten_with_keys


def _dict_flatten(d):
    keys = _sorted_keys(d)
    return tuple([d[k] for k in keys]), keys


def _defaultdict_flatten(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], (d.default_factory, keys)


def _builtin(typ, flatten, unflatten, make_keys, name, label=None):
    with_keys = _with_keys(flatten, make_keys)
    kind = _NodeKind(typ, flatten, unflatten, with_keys, name, label or name)
    _kinds[typ] = kind
    return kind


def _sequence_keys(x, aux):
    return map(SequenceKey, range(len(x)))


def _dict_keys(x, keys):
    return map(DictKey, keys)


def _flat_index_keys(x, aux):
    return map(FlattenedIndexKey, itertools.count())


def _as_is(x):
    return x, None


_TUPLE = _builtin(tuple, _as_is, lambda _, xs: tuple(xs), _sequence_keys, "tuple")
_LIST = _builtin(list, _as_is, lambda _, xs: list(xs), _sequence_keys, "list")
_DICT = _builtin(
    dict, _dict_flatten, lambda ks, xs: dict(zip(ks, xs)), _dict_keys, "dict"
)
_NONE = _builtin(
    type(None), lambda x: ((), None), lambda *_: None, _flat_index_keys, "None"
)
_builtin(
    collections.OrderedDict,
    lambda d: (list(d.values()), tuple(d)),
    lambda keys, xs: collections.OrderedDict(zip(keys, xs)),
    _dict_keys,
    "OrderedDict",
    "custom",
)
_builtin(
    collections.defaultdict,
    _defaultdict_flatten,
    lambda aux, xs: collections.defaultdict(aux[0], zip(aux[1], xs)),
    lambda x, aux: map(DictKey, aux[1]),
    "defaultdict",
    "custom",
)
# The verdict "leaf" for a cached type; never registered.
_LEAF_KIND = _NodeKind(None, None, None, None, "leaf", "leaf")
_NONE_DESC = (_NONE, None, 0)


def _namedtuple_kind(typ) -> _NodeKind:
    with_keys = _with_keys(_as_is, lambda x, aux: map(GetAttrKey, typ._fields))
    name = f"namedtuple[{typ.__name__}]"
    return _NodeKind(typ, _as_is, lambda _, xs: typ(*xs), with_keys, name, "namedtuple")


def _classify(typ) -> _NodeKind:
    """The kind of an unregistered type (a namedtuple or a leaf), cached."""
    if issubclass(typ, tuple) and hasattr(typ, "_fields"):
        kind = _namedtuple_kind(typ)
    else:
        kind = _LEAF_KIND
    if len(_kinds) < _MAX_CACHED_TYPES:
        _kinds[typ] = kind
    return kind


def _kind_of(typ) -> _NodeKind:
    return _kinds_get(typ) or _classify(typ)


def _kind_for_type(typ) -> _NodeKind:
    """The node kind of `typ`, for unpickling treedefs."""
    kind = _kind_of(typ)
    if kind is _LEAF_KIND:
        raise ValueError(f"{typ!r} is not a registered pytree node type.")
    return kind


def _register(nodetype, flatten, unflatten, flatten_with_keys, label="custom"):
    current = _kinds_get(nodetype, _LEAF_KIND)
    if current.label not in ("leaf", "namedtuple"):
        raise ValueError(
            f"Duplicate custom PyTreeDef type registration for {nodetype!r}."
        )
    if flatten_with_keys is None:
        flatten_with_keys = _with_keys(flatten, _flat_index_keys)
    name = getattr(nodetype, "__name__", repr(nodetype))
    _kinds[nodetype] = _NodeKind(
        nodetype, flatten, unflatten, flatten_with_keys, name, label
    )


def register_pytree_node(
    nodetype: type[T],
    flatten_func: Callable[[T], tuple[Iterable[Any], Hashable]],
    unflatten_func: Callable[[Hashable, Iterable[Any]], T],
    flatten_with_keys_func: Callable[[T], tuple[Iterable[tuple[Any, Any]], Hashable]]
    | None = None,
) -> None:
    """Makes `nodetype` a pytree node.

    `flatten_func(x)` returns `(children, aux_data)`; `unflatten_func(aux_data,
    children)` rebuilds the node (children arrive as a tuple). `aux_data` should
    be hashable and comparable: it is part of the treedef.
    """
    _register(nodetype, flatten_func, unflatten_func, flatten_with_keys_func)


def register_pytree_with_keys(
    nodetype: type[T],
    flatten_with_keys: Callable[[T], tuple[Iterable[tuple[Any, Any]], Hashable]],
    unflatten_func: Callable[[Hashable, Iterable[Any]], T],
    flatten_func: Callable[[T], tuple[Iterable[Any], Hashable]] | None = None,
) -> None:
    """Like `register_pytree_node`, with a flatten that names each child's key."""
    if flatten_func is None:

        def flatten_func(x):
            pairs, aux = flatten_with_keys(x)
            return [child for _, child in pairs], aux

    _register(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls: Typ) -> Typ:
    """Class decorator: uses `x.tree_flatten()` and `cls.tree_unflatten(aux, xs)`."""
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


def register_pytree_with_keys_class(cls: Typ) -> Typ:
    """Class decorator: uses `x.tree_flatten_with_keys()` and `cls.tree_unflatten`."""
    flatten_func = None
    if hasattr(cls, "tree_flatten"):
        flatten_func = operator.methodcaller("tree_flatten")
    register_pytree_with_keys(
        cls,
        operator.methodcaller("tree_flatten_with_keys"),
        cls.tree_unflatten,
        flatten_func,
    )
    return cls


def register_static(cls: type[T]) -> type[T]:
    """Makes instances of `cls` nodes without children: the object is the aux data."""
    register_pytree_node(cls, lambda x: ((), x), lambda aux, _: aux)
    return cls


def register_dataclass(
    nodetype: Typ,
    data_fields: Sequence[str] | None = None,
    meta_fields: Sequence[str] | None = None,
    drop_fields: Sequence[str] = (),
) -> Typ:
    """Makes a dataclass-like type a node: data fields are children, meta fields aux.

    Without `data_fields`/`meta_fields`, the fields of a dataclass are split by
    their `metadata=dict(static=True)`. Rebuilding calls `nodetype(**fields)`.
    Usable as a class decorator.
    """
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError(
                "register_dataclass: data_fields and meta_fields must both be "
                f"specified when either is specified. Got {data_fields=} "
                f"{meta_fields=}."
            )
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(
                "register_dataclass: data_fields and meta_fields are required when"
                f" nodetype is not a dataclass. Got {nodetype=}."
            )
        fields = dataclasses.fields(nodetype)
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data_fields = tuple(data_fields)
    meta_fields = tuple(meta_fields)
    named = {*data_fields, *meta_fields}
    if dataclasses.is_dataclass(nodetype):
        init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init}
        init_fields.difference_update(drop_fields)
        if named != init_fields:
            msg = (
                "data_fields and meta_fields must include all dataclass fields with"
                " ``init=True`` and only them."
            )
            missing = init_fields - named
            if missing:
                msg += (
                    f" Missing fields: {missing}. Add them to drop_fields to "
                    "suppress this error."
                )
            unexpected = named - init_fields
            if unexpected:
                msg += f" Unexpected fields: {unexpected}."
            raise ValueError(msg)
    overlap = set(data_fields) & set(meta_fields)
    if overlap:
        raise ValueError(
            "data_fields and meta_fields must not overlap. Overlapping fields:"
            f" {overlap}."
        )
    keys = tuple(GetAttrKey(name) for name in data_fields)

    def flatten(x):
        data = tuple([getattr(x, name) for name in data_fields])
        return data, tuple([getattr(x, name) for name in meta_fields])

    def flatten_with_keys(x):
        data, meta = flatten(x)
        return list(zip(keys, data)), meta

    def unflatten(meta, data):
        return nodetype(**dict(zip(meta_fields, meta)), **dict(zip(data_fields, data)))

    _register(nodetype, flatten, unflatten, flatten_with_keys, "custom dataclass")
    return nodetype


def is_tree_node(typ: type) -> bool:
    """Whether `typ` is a pytree node type (built-in, registered or namedtuple)."""
    return _kind_of(typ) is not _LEAF_KIND
