"""Key paths: naming a place inside a pytree.

A key path is a tuple of key entries, one per level: `SequenceKey(1)` for the second
child of a tuple or list, `DictKey('a')` for a dict entry, `GetAttrKey('x')` for a
dataclass or namedtuple field, `FlattenedIndexKey(i)` for a child of a node registered
without keys. `keystr` formats a path as `[1]['a'].x`. Structure-mismatch errors (a
prefix tree that does not match a full tree, as in `vmap`'s `in_axes` or `tree_map`
over several trees) name the first key path where the two differ; they are built here
too, with JAX 0.10.2's texts.
"""

from __future__ import annotations

import difflib
import functools
import textwrap
from typing import Any

KeyPath = tuple[Any, ...]


class _KeyEntry:
    """Base of the key classes: one immutable value, compared by class and value."""

    __slots__ = ("_value",)
    _field = ""
    _value_type: type | None = None

    def _set(self, value):
        if self._value_type is not None and not isinstance(value, self._value_type):
            raise TypeError(
                f"{type(self).__name__}() expects {self._field} of type "
                f"{self._value_type.__name__}, got {type(value).__name__}: {value!r}."
            )
        self._value = value

    def __eq__(self, other):
        return type(other) is type(self) and self._value == other._value

    def __hash__(self):
        return hash((type(self).__name__, self._value))

    def __repr__(self):
        return f"{type(self).__name__}({self._field}={self._value!r})"

    def __reduce__(self):
        return type(self), (self._value,)


class SequenceKey(_KeyEntry):
    """Position `idx` in a tuple or list; prints as `[0]`."""

    __slots__ = ()
    __match_args__ = ("idx",)
    _field = "idx"
    _value_type = int

    def __init__(self, idx: int):
        self._set(idx)

    @property
    def idx(self) -> int:
        return self._value

    def __str__(self):
        return f"[{self._value!r}]"


class DictKey(_KeyEntry):
    """Key `key` of a dict-like node; prints as `['b']`."""

    __slots__ = ()
    __match_args__ = ("key",)
    _field = "key"

    def __init__(self, key: Any):
        self._set(key)

    @property
    def key(self) -> Any:
        return self._value

    def __str__(self):
        return f"[{self._value!r}]"


class GetAttrKey(_KeyEntry):
    """Attribute `name` of a namedtuple or dataclass; prints as `.name`."""

    __slots__ = ()
    __match_args__ = ("name",)
    _field = "name"
    _value_type = str

    def __init__(self, name: str):
        self._set(name)

    @property
    def name(self) -> str:
        return self._value

    def __str__(self):
        return f".{self._value}"


class FlattenedIndexKey(_KeyEntry):
    """Index among the children of a node registered without keys."""

    __slots__ = ()
    __match_args__ = ("key",)
    _field = "key"
    _value_type = int

    def __init__(self, key: int):
        self._set(key)

    @property
    def key(self) -> int:
        return self._value

    def __str__(self):
        return f"[<flat index {self._value}>]"


def _key_label(key) -> str:
    """A key without its brackets: `0`, `a`, `name`."""
    return str(key._value) if isinstance(key, _KeyEntry) else str(key)


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """Formats a key path: `[1]['a'].x` (or `1/a/x` with simple=True, separator='/')."""
    if simple:
        return separator.join(_key_label(k) for k in keys)
    return separator.join(str(k) for k in keys)


def prefix_error(name, key_path, prefix, full, is_leaf):
    """A ValueError naming the first place where `prefix` is not a prefix of
    `full`, or None; `name` names the prefix tree in the message."""
    return next(prefix_errors(name, key_path, prefix, full, is_leaf), None)


def prefix_errors(name, key_path, prefix, full, is_leaf):
    """A ValueError for each place where `prefix` is not a prefix of `full` (JAX
    looks no further inside a subtree once its root disagrees)."""
    from jaxlite.tree_util import _LEAF_KIND, _kind_of, flatten_one_level_with_keys

    if _kind_of(type(prefix)) is _LEAF_KIND or (
        is_leaf is not None and is_leaf(prefix)
    ):
        return
    where = keystr(key_path)
    if type(prefix) is not type(full):
        yield ValueError(
            "pytree structure error: different types at key path\n"
            f"    {name}{where}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {type(prefix)}\n"
            "but at the same key path the full pytree has a subtree of different type\n"
            f"    {type(full)}."
        )
        return
    prefix_pairs, prefix_meta = flatten_one_level_with_keys(prefix)
    full_pairs, full_meta = flatten_one_level_with_keys(full)
    prefix_keys = [k for k, _ in prefix_pairs]
    full_keys = [k for k, _ in full_pairs]
    if isinstance(prefix, list | tuple):
        if len(prefix) != len(full):
            ty = type(prefix).__name__
            yield ValueError(
                f"pytree structure error: different lengths of {ty} at key path\n"
                f"    {name}{where}\n"
                f"At that key path, the prefix pytree {name} has a subtree of type "
                f"{ty} of length {len(prefix)}, but the full pytree has a subtree of "
                f"the same type but of length {len(full)}."
            )
            return
    elif len(prefix_pairs) != len(full_pairs):
        try:
            diff = set(prefix_keys).symmetric_difference(full_keys)
        except TypeError:
            diff = None
        diff_text = ""
        if diff is not None:
            diff_text = "so the symmetric difference on key sets is\n    " + " ".join(
                _key_label(k) for k in diff
            )
        yield ValueError(
            "pytree structure error: different numbers of pytree children at key "
            f"path\n    {name}{where}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {type(prefix)}\n"
            f"with {len(prefix_pairs)} child keys\n"
            f"    {' '.join(_key_label(k) for k in prefix_keys)}\n"
            "but at the same key path the full pytree has a subtree of the same "
            f"type but with {len(full_pairs)} child keys\n"
            f"    {' '.join(_key_label(k) for k in full_keys)}\n" + diff_text
        )
        return
    if prefix_meta != full_meta:
        prefix_text = str(prefix_meta)
        full_text = str(full_meta)
        ndiff = difflib.ndiff(prefix_text.splitlines(), full_text.splitlines())
        meta_diff = textwrap.indent("\n".join(ndiff), prefix="    ")
        yield ValueError(
            "pytree structure error: different pytree metadata at key path\n"
            f"    {name}{where}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {type(prefix)}\n"
            "with metadata\n"
            f"    {prefix_text}\n"
            "but at the same key path the full pytree has a subtree of the same "
            "type but with metadata\n"
            f"    {full_text}\n"
            "so the diff in the metadata at these pytree nodes is\n"
            f"{meta_diff}"
        )
        return
    for key, (_, p), (_, f) in zip(prefix_keys, prefix_pairs, full_pairs):
        yield from prefix_errors(name, (*key_path, key), p, f, is_leaf)


def tree_prefix_errors(prefix_tree, full_tree, is_leaf=None):
    """Where `prefix_tree` is not a tree prefix of `full_tree`, as JAX's private
    `tree_util.prefix_errors`: one function per place, taking the name of the prefix
    tree for the message (`e("vmap in_axes")`) and returning the ValueError."""
    count = sum(1 for _ in prefix_errors("", (), prefix_tree, full_tree, is_leaf))

    def error(i, name):
        errors = prefix_errors(name, (), prefix_tree, full_tree, is_leaf)
        return next(e for j, e in enumerate(errors) if j == i)

    return [functools.partial(error, i) for i in range(count)]


class PytreeLeaf:
    """Stands for each leaf of a tree known by its structure only, when a prefix
    tree is compared with it (as JAX's)."""

    def __repr__(self):
        return "pytree leaf"
