"""Functions with transformations attached, in JAX's `linear_util` conventions.

Libraries written against JAX's extension API (flax's `lazy_init` and `nn.scan`,
numpyro's provenance tracking, distrax's function inversion) hand functions around as
`WrappedFun`s: a Python function `f`, plus a stack of transformations applied when it
is called with `call_wrapped`. A transformation may also leave an auxiliary result in
a `Store`, read through a thunk once the function has run (the output pytree of a
flattened function is the usual one).

jaxlite's transformations take plain callables; a `WrappedFun` is the boundary object
these libraries pass in (`api_util.flatten_fun`, `partial_eval.trace_to_jaxpr_nounits`
accept it and hand one back). The two styles of transformation JAX has are here:

- `transformation2(gen)`: `gen(f, *static_args, *args, **kwargs)` calls `f` itself
  and returns the result (`transformation_with_aux2`: `gen(f, store, *static_args,
  *args)` also stores an auxiliary value);
- `transformation(gen)`, the older generator form: `gen(*static_args, *args)` yields
  the arguments for `f`, receives its result and yields the final result
  (`transformation_with_aux`: yields `(result, aux)`).

Both are curried as in JAX: `transformation2(gen)(fun, *static_args)` is the wrapped
function (and the decorator form `@transformation2` reads the same).
"""

from __future__ import annotations

import functools
import weakref

__all__ = [
    "EqualStore",
    "Store",
    "StoreException",
    "WrappedFun",
    "cache",
    "merge_linear_aux",
    "transformation",
    "transformation2",
    "transformation_with_aux",
    "transformation_with_aux2",
    "wrap_init",
]


class StoreException(Exception):
    """Reading an empty `Store`, or storing into a full one."""


_EMPTY = object()


class Store:
    """A cell for one auxiliary result of a transformation."""

    __slots__ = ("_val",)

    def __init__(self):
        self._val = _EMPTY

    def store(self, val):
        if self._val is not _EMPTY:
            raise StoreException(
                "Store occupied: a transformation with an auxiliary output ran twice "
                "on the same WrappedFun; wrap the function again for each call."
            )
        self._val = val

    def reset(self):
        self._val = _EMPTY

    @property
    def val(self):
        if self._val is _EMPTY:
            raise StoreException(
                "Store empty: the auxiliary output is known only once the wrapped "
                "function has run (call `call_wrapped` first)."
            )
        return self._val

    def __bool__(self):
        return self._val is not _EMPTY


class EqualStore(Store):
    """A `Store` that accepts storing again a value equal to the one it holds."""

    __slots__ = ()

    def store(self, val):
        if self._val is not _EMPTY:
            try:
                same = bool(self._val == val)
            except Exception:  # noqa: BLE001 (arrays, uncomparable values)
                same = False
            if same:
                return
        super().store(val)


class WrappedFun:
    """`f` with `transforms` applied: `call_wrapped(*args)` runs `f_transformed`.

    `transforms` lists `(gen, static_args)` pairs, outermost first; `stores` holds
    each transformation's auxiliary-output store (None for those without); `params`
    are keyword arguments bound to `f` (`wrap_init(f, params)`); `debug_info`
    describes `f` for error messages (`api_util.debug_info`). Equal `WrappedFun`s
    (same function, transformations and params) hash alike, so they can key caches.
    """

    __slots__ = (
        "f",
        "f_transformed",
        "transforms",
        "stores",
        "params",
        "in_type",
        "debug_info",
    )

    def __init__(
        self, f, f_transformed, transforms, stores, params, in_type, debug_info
    ):
        self.f = f
        self.f_transformed = f_transformed
        self.transforms = transforms
        self.stores = stores
        self.params = params
        self.in_type = in_type
        self.debug_info = debug_info

    @property
    def __name__(self):
        return getattr(self.f, "__name__", "<unnamed wrapped function>")

    def wrap(self, gen, gen_static_args=(), out_store=None):
        """This function with one more transformation `gen` (`transformation2` style;
        with `out_store`, `gen(f, out_store, *static_args, *args)`)."""
        gen_static_args = tuple(gen_static_args)
        if out_store is None:
            call = functools.partial(gen, self.f_transformed, *gen_static_args)
        else:
            call = functools.partial(
                gen, self.f_transformed, out_store, *gen_static_args
            )
        return WrappedFun(
            self.f,
            call,
            ((gen, gen_static_args), *self.transforms),
            (out_store, *self.stores),
            self.params,
            None,
            self.debug_info,
        )

    def populate_stores(self, stores):
        """Copy the values of `stores` (another WrappedFun's) into this one's."""
        for mine, theirs in zip(self.stores, stores):
            if mine is not None:
                mine.store(theirs.val)

    def call_wrapped(self, *args, **kwargs):
        """Call the function with its transformations applied."""
        return self.f_transformed(*args, **kwargs)

    def replace_debug_info(self, debug_info):
        return WrappedFun(
            self.f,
            self.f_transformed,
            self.transforms,
            self.stores,
            self.params,
            self.in_type,
            debug_info,
        )

    def with_unknown_names(self):
        return self

    def __repr__(self):
        names = [getattr(gen, "__name__", repr(gen)) for gen, _ in self.transforms]
        return f"WrappedFun({self.__name__}, transforms={names})"

    def __hash__(self):
        return hash((self.f, self.transforms, self.params))

    def __eq__(self, other):
        return (
            isinstance(other, WrappedFun)
            and self.f == other.f
            and self.transforms == other.transforms
            and self.params == other.params
        )


def wrap_init(f, params=None, *, debug_info=None):
    """`f` as a `WrappedFun` with no transformations; `params` (a dict) are keyword
    arguments it is always called with."""
    params = () if params is None else tuple(sorted(params.items()))
    call = functools.partial(f, **dict(params)) if params else f
    return WrappedFun(f, call, (), (), params, None, debug_info)


def _curry(f):
    return functools.partial(functools.partial, f)


@_curry
def transformation2(gen, fun, *gen_static_args):
    """`fun` with `gen(f, *gen_static_args, *args, **kwargs)` applied on calls."""
    return fun.wrap(gen, gen_static_args, None)


@_curry
def transformation_with_aux2(gen, fun, *gen_static_args, use_eq_store=False):
    """`(fun with gen applied, thunk)`: `gen(f, store, *gen_static_args, *args)`
    stores an auxiliary value, which the thunk returns once the function has run."""
    out_store = EqualStore() if use_eq_store else Store()
    return fun.wrap(gen, gen_static_args, out_store), _thunk(out_store)


def _thunk(store):
    def out_thunk():
        return store.val

    return out_thunk


@_curry
def transformation(gen, fun, *gen_static_args):
    """The generator form: `gen(*gen_static_args, *args)` yields `(args, kwargs)` for
    the function, is sent its result, and yields the final result."""

    def gen2(f, *args, **kwargs):
        gen_inst = gen(*args, **kwargs)
        args_, kwargs_ = next(gen_inst)
        return gen_inst.send(f(*args_, **kwargs_))

    gen2.__name__ = getattr(gen, "__name__", "transformation")
    return transformation2(gen2, fun, *gen_static_args)()


@_curry
def transformation_with_aux(gen, fun, *gen_static_args, use_eq_store=False):
    """The generator form with an auxiliary output: the generator's final yield is
    `(result, aux)`; returns `(wrapped function, thunk for aux)`."""

    def gen2(f, store, *args, **kwargs):
        gen_inst = gen(*args, **kwargs)
        args_, kwargs_ = next(gen_inst)
        ans, aux = gen_inst.send(f(*args_, **kwargs_))
        store.store(aux)
        return ans

    gen2.__name__ = getattr(gen, "__name__", "transformation_with_aux")
    return transformation_with_aux2(
        gen2, fun, *gen_static_args, use_eq_store=use_eq_store
    )()


def cache(call):
    """Memoize `call(fun: WrappedFun, *args)` on `fun`'s function, transformations,
    params and `args` (which must be hashable). A hit copies the auxiliary outputs
    the first call left into `fun`'s stores, so their thunks answer as after a call."""
    fun_caches = weakref.WeakKeyDictionary()

    def memoized_fun(fun, *args):
        try:
            table = fun_caches.setdefault(fun.f, {})
        except TypeError:  # a function that cannot be weakly referenced
            return call(fun, *args)
        key = (fun.transforms, fun.params, args)
        hit = table.get(key)
        if hit is not None:
            ans, stores = hit
            fun.populate_stores(stores)
            return ans
        ans = call(fun, *args)
        table[key] = (ans, fun.stores)
        return ans

    memoized_fun.cache_clear = fun_caches.clear
    return memoized_fun


def merge_linear_aux(aux1, aux2):
    """`(True, aux1())` if the first store was filled, else `(False, aux2())`:
    exactly one of two alternative transformations ran."""
    try:
        out1 = aux1()
    except StoreException:
        try:
            out2 = aux2()
        except StoreException:
            raise StoreException("neither store occupied") from None
        return False, out2
    try:
        aux2()
    except StoreException:
        return True, out1
    raise StoreException("both stores occupied")
