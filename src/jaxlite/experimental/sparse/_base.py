"""`JAXSparse`: the base class of the sparse array types (BCOO, BCSR).

A sparse array is a pytree of its buffers (`data` and index arrays) with the shape and
what is known of its indices as static auxiliary data, so it passes through `jit`,
`grad` (with respect to `data`) and `vmap` like any container of arrays.
"""

from __future__ import annotations

import abc
import math

from jaxlite.core import Tracer

__all__ = ["JAXSparse"]


class JAXSparse(abc.ABC):
    """Base class of the high-level sparse array types."""

    data: object
    shape: tuple

    __hash__ = None

    @property
    @abc.abstractmethod
    def dtype(self): ...

    @property
    @abc.abstractmethod
    def nse(self) -> int: ...

    def __init__(self, args, *, shape):
        self.shape = tuple(int(s) for s in shape)

    def __len__(self):
        return self.shape[0]

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self):
        return sparse_repr(self)

    @abc.abstractmethod
    def tree_flatten(self): ...

    @classmethod
    @abc.abstractmethod
    def tree_unflatten(cls, aux_data, children): ...

    @abc.abstractmethod
    def transpose(self, axes=None): ...

    @abc.abstractmethod
    def todense(self): ...

    @property
    def T(self):
        return self.transpose()

    def block_until_ready(self):
        for buf in self.tree_flatten()[0]:
            buf.block_until_ready()
        return self

    # Operators a subclass may define (BCOO's come from `sparsify`, in transform.py).

    def sum(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__}.sum")

    def __neg__(self):
        raise NotImplementedError(f"{type(self).__name__}.__neg__")

    def __pos__(self):
        raise NotImplementedError(f"{type(self).__name__}.__pos__")

    def __matmul__(self, other):
        raise NotImplementedError(f"{type(self).__name__}.__matmul__")

    def __rmatmul__(self, other):
        raise NotImplementedError(f"{type(self).__name__}.__rmatmul__")

    def __mul__(self, other):
        raise NotImplementedError(f"{type(self).__name__}.__mul__")

    def __rmul__(self, other):
        raise NotImplementedError(f"{type(self).__name__}.__rmul__")

    def __add__(self, other):
        raise NotImplementedError(f"{type(self).__name__}.__add__")

    def __radd__(self, other):
        raise NotImplementedError(f"{type(self).__name__}.__radd__")

    def __sub__(self, other):
        raise NotImplementedError(f"{type(self).__name__}.__sub__")

    def __rsub__(self, other):
        raise NotImplementedError(f"{type(self).__name__}.__rsub__")

    def __getitem__(self, item):
        raise NotImplementedError(f"{type(self).__name__}.__getitem__")


def sparse_repr(arr, batched=False):
    """`Name(dtype[shape], nse=...)`, and with `batched` also its batch and dense
    dimension counts when nonzero (BCOO's and BCSR's); `Name(<invalid>)` when its
    buffers cannot say; prefixed by the tracer's type under a transformation."""
    name = type(arr).__name__
    try:
        extra = f", nse={arr.nse}"
        if batched and arr.n_batch:
            extra += f", n_batch={arr.n_batch}"
        if batched and arr.n_dense:
            extra += f", n_dense={arr.n_dense}"
        text = f"{name}({arr.dtype}{list(arr.shape)}{extra})"
    except Exception:
        text = f"{name}(<invalid>)"
    if isinstance(arr.data, Tracer):
        text = f"{type(arr.data).__name__}[{text}]"
    return text
