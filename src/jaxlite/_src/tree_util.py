"""`jax._src.tree_util` for `jaxlite.install_as_jax()` only: `_registry`, the pytree
node types registered in Python (flax.nnx asks `type(x) in _registry`).

In JAX it is a dict from a node type to its `(to_iter, from_iter)` functions,
holding tuple, list, dict, None, OrderedDict, defaultdict and every registered class,
not namedtuples (those are recognised by type). Here it is a read-only live view of
jaxlite's registry with the same keys and values.
"""

import collections
from collections.abc import Mapping

from jaxlite import tree_util

__all__ = ["_registry"]

_RegistryEntry = collections.namedtuple("_RegistryEntry", ["to_iter", "from_iter"])


class _RegistryView(Mapping):
    """The registered node types of `jaxlite.tree_util`, as JAX's `_registry`."""

    @staticmethod
    def _kind(typ):
        kind = tree_util._kinds.get(typ)
        if kind is None or kind.label in ("leaf", "namedtuple"):
            return None
        return kind

    def __getitem__(self, typ):
        kind = self._kind(typ)
        if kind is None:
            raise KeyError(typ)
        return _RegistryEntry(kind.flatten, kind.unflatten)

    def __contains__(self, typ):
        return self._kind(typ) is not None

    def __iter__(self):
        return iter([typ for typ in list(tree_util._kinds) if typ in self])

    def __len__(self):
        return sum(1 for _ in self)

    def __repr__(self):
        return f"<pytree registry of {len(self)} node types>"


_registry = _RegistryView()
