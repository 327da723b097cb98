"""Tests for jaxlite.tree_util and jaxlite.tree: pytree semantics, reprs, key paths,
registration, errors, and differential checks against JAX 0.10.2 where installed."""

import collections
import dataclasses
import functools
import pickle
import subprocess
import sys

import pytest

import jaxlite.tree as jtree
import jaxlite.tree_keys as tree_keys
import jaxlite.tree_registry as tree_registry
import jaxlite.tree_util as tu

Point = collections.namedtuple("Point", ["x", "y"])
Other = collections.namedtuple("Other", ["x", "y"])


class Pair:
    """A custom node with aux data and no keys."""

    def __init__(self, a, b, tag="t"):
        self.a, self.b, self.tag = a, b, tag

    def __eq__(self, other):
        return type(other) is Pair and (self.a, self.b, self.tag) == (
            other.a,
            other.b,
            other.tag,
        )

    def __repr__(self):
        return f"Pair({self.a!r}, {self.b!r}, {self.tag!r})"


def _pair_flatten(p):
    return (p.a, p.b), p.tag


def _pair_unflatten(tag, children):
    return Pair(*children, tag)


class Keyed:
    """A custom node registered with keys."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __eq__(self, other):
        return type(other) is Keyed and (self.x, self.y) == (other.x, other.y)


def _keyed_unflatten(_, children):
    return Keyed(*children)


@dataclasses.dataclass
class Params:
    w: object
    b: object
    name: str = dataclasses.field(default="p", metadata=dict(static=True))


class Boxed:
    """A register_pytree_node_class node."""

    def __init__(self, value, label):
        self.value, self.label = value, label

    def __eq__(self, other):
        return type(other) is Boxed and (self.value, self.label) == (
            other.value,
            other.label,
        )

    def tree_flatten(self):
        return (self.value,), self.label

    @classmethod
    def tree_unflatten(cls, label, children):
        return cls(children[0], label)


class StaticTag:
    """A register_static type."""

    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return type(other) is StaticTag and other.name == self.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return f"StaticTag({self.name!r})"


def _register_all(m):
    """Registers the test classes in a tree_util module (jaxlite's or JAX's)."""
    m.register_pytree_node(Pair, _pair_flatten, _pair_unflatten)

    def keyed_flatten_with_keys(k):
        return ((m.GetAttrKey("x"), k.x), (m.GetAttrKey("y"), k.y)), None

    m.register_pytree_with_keys(Keyed, keyed_flatten_with_keys, _keyed_unflatten)
    m.register_dataclass(Params)
    m.register_pytree_node_class(Boxed)
    m.register_static(StaticTag)


_register_all(tu)


@pytest.fixture(scope="module")
def jtu():
    """JAX's tree_util with the test classes registered (differential tests)."""
    jax = pytest.importorskip("jax")
    m = jax.tree_util
    try:
        _register_all(m)
    except ValueError:  # already registered by an earlier module-scoped run
        pass
    return m


def corpus(partial_cls):
    """Trees covering every node kind; `partial_cls` is jaxlite's or JAX's Partial."""
    return [
        1,
        None,
        (),
        [],
        {},
        (1,),
        (1, 2),
        [1, [2, (3,)]],
        (1, {"a": [2, None], "b": 3}),
        {"b": 1, "a": 2, "c": {"z": 3, "y": ()}},
        {1: "x", 0: ["y", None]},
        [None, (None,), {"k": None}],
        Point(1, [2, 3]),
        Point(Point(1, 2), None),
        collections.OrderedDict([("b", 1), ("a", (2, 3))]),
        collections.defaultdict(list, {"z": 1, "y": [2]}),
        collections.defaultdict(None, {"z": 1}),
        Pair(1, (2, 3), "tag"),
        Pair([Pair(1, 2)], None, 7),
        Keyed(1, {"q": 2}),
        Params(w=[1, 2], b=3, name="dense"),
        Boxed((1, 2), "lbl"),
        [StaticTag("s"), 1],
        partial_cls(max, 1, key=abs),
        {"it's": 1, 'say "hi"': 2},
    ]


def _tree_id(tree):
    return type(tree).__name__


def _pair_ids(value):
    return "" if isinstance(value, str) else type(value).__name__


# ---------------------------------------------------------------------------
# Flatten / unflatten semantics.


@pytest.mark.parametrize("tree", corpus(tu.Partial), ids=_tree_id)
def test_round_trip(tree):
    leaves, treedef = tu.tree_flatten(tree)
    assert treedef.num_leaves == len(leaves)
    rebuilt = tu.tree_unflatten(treedef, leaves)
    assert tu.tree_structure(rebuilt) == treedef
    assert tu.tree_leaves(rebuilt) == leaves
    assert tu.tree_leaves(tree) == leaves
    if not isinstance(tree, tu.Partial):
        assert rebuilt == tree
    assert type(rebuilt) is type(tree)


def test_none_is_a_node_without_children():
    assert tu.tree_leaves([None]) == []
    assert tu.tree_leaves(None) == []
    assert repr(tu.tree_structure(None)) == "PyTreeDef(None)"
    assert tu.tree_structure(None).num_leaves == 0
    assert tu.tree_structure(None).num_nodes == 1
    assert tu.tree_unflatten(tu.tree_structure([None, 1]), ["a"]) == [None, "a"]


def test_dict_keys_sorted_and_unflatten_in_sorted_order():
    leaves, treedef = tu.tree_flatten({"b": 1, "a": 2, "c": 3})
    assert leaves == [2, 1, 3]
    rebuilt = treedef.unflatten([10, 20, 30])
    assert list(rebuilt) == ["a", "b", "c"]
    assert rebuilt == {"a": 10, "b": 20, "c": 30}


def test_unsortable_dict_keys():
    with pytest.raises(ValueError, match="Comparator raised exception while sorting"):
        tu.tree_flatten({1: 1, "a": 2})


def test_ordered_dict_keeps_insertion_order():
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    leaves, treedef = tu.tree_flatten(od)
    assert leaves == [1, 2]
    rebuilt = treedef.unflatten([3, 4])
    assert type(rebuilt) is collections.OrderedDict
    assert list(rebuilt.items()) == [("b", 3), ("a", 4)]
    assert repr(treedef) == "PyTreeDef(CustomNode(OrderedDict[('b', 'a')], [*, *]))"


def test_defaultdict_keeps_factory():
    dd = collections.defaultdict(list, {"b": 1, "a": 2})
    leaves, treedef = tu.tree_flatten(dd)
    assert leaves == [2, 1]
    rebuilt = treedef.unflatten([5, 6])
    assert type(rebuilt) is collections.defaultdict
    assert rebuilt.default_factory is list
    assert rebuilt == {"a": 5, "b": 6}
    assert treedef.node_data() == (collections.defaultdict, (list, ("a", "b")))


def test_namedtuple_is_a_node():
    leaves, treedef = tu.tree_flatten(Point(1, (2, 3)))
    assert leaves == [1, 2, 3]
    assert repr(treedef) == "PyTreeDef(CustomNode(namedtuple[Point], [*, (*, *)]))"
    assert treedef.unflatten("abc") == Point("a", ("b", "c"))
    assert treedef.node_data() == (Point, None)
    assert tu.tree_structure(Point(1, 2)) != tu.tree_structure(Other(1, 2))
    assert tu.tree_structure(Point(1, 2)) != tu.tree_structure((1, 2))


def test_unregistered_subclasses_are_leaves():
    class MyTuple(tuple):
        pass

    class MyDict(dict):
        pass

    class MyList(list):
        pass

    for x in [MyTuple((1, 2)), MyDict(a=1), MyList([1])]:
        assert tu.tree_leaves(x) == [x]
        assert repr(tu.tree_structure(x)) == "PyTreeDef(*)"


def test_leaf_objects_and_treedefs_are_leaves():
    class Anything:
        pass

    a = Anything()
    assert tu.tree_leaves([a, "s", 1.5, b"b"]) == [a, "s", 1.5, b"b"]
    assert tu.tree_leaves(tu.tree_structure((1, 2))) == [tu.tree_structure((1, 2))]


def test_is_leaf_stops_recursion():
    tree = [1, (2, 3), [4, [5]]]
    leaves, treedef = tu.tree_flatten(tree, is_leaf=lambda x: isinstance(x, tuple))
    assert leaves == [1, (2, 3), 4, 5]
    assert repr(treedef) == "PyTreeDef([*, *, [*, [*]]])"
    assert tu.tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]
    assert tu.tree_flatten(None, is_leaf=lambda x: x is None)[0] == [None]
    assert tu.tree_structure(tree, is_leaf=lambda x: x is tree).num_leaves == 1


def test_is_leaf_is_called_on_every_subtree_in_preorder():
    calls = []

    def record(x):
        calls.append(x)
        return False

    tree = (1, [2, None], {"a": 3})
    tu.tree_flatten(tree, is_leaf=record)
    assert calls == [tree, 1, [2, None], 2, None, {"a": 3}, 3]


def test_unflatten_accepts_any_iterable():
    treedef = tu.tree_structure((1, [2, 3]))
    assert treedef.unflatten(iter([4, 5, 6])) == (4, [5, 6])
    assert treedef.unflatten(x for x in "abc") == ("a", ["b", "c"])
    assert tu.tree_structure(7).unflatten(["only"]) == "only"


def test_unflatten_wrong_number_of_leaves():
    treedef = tu.tree_structure((1, {"a": [2, None], "b": 3}))
    with pytest.raises(
        ValueError, match="Too few leaves for PyTreeDef; expected 3, got 2"
    ):
        treedef.unflatten([1, 2])
    with pytest.raises(ValueError, match="Too many leaves for PyTreeDef; expected 3."):
        tu.tree_unflatten(treedef, [1, 2, 3, 4])


def test_custom_unflatten_errors_propagate_unchanged():
    class Broken:
        pass

    def unflatten(aux, children):
        raise AttributeError("from user code")

    tu.register_pytree_node(Broken, lambda b: ((1,), None), unflatten)
    treedef = tu.tree_structure(Broken())
    for _ in range(3):  # interpreted, then compiled
        with pytest.raises(AttributeError, match="from user code"):
            treedef.unflatten([1])


def test_custom_node_children_arrive_as_tuple():
    class Gen:
        def __init__(self, xs):
            self.xs = xs

    seen = []

    def unflatten(aux, children):
        seen.append(type(children))
        return Gen(list(children))

    tu.register_pytree_node(Gen, lambda g: (iter(g.xs), None), unflatten)
    leaves, treedef = tu.tree_flatten(Gen([1, [2, 3]]))
    assert leaves == [1, 2, 3]
    for _ in range(3):
        assert treedef.unflatten([4, 5, 6]).xs == [4, [5, 6]]
    assert set(seen) == {tuple}


STRUCTURES = [
    (1,),
    (1, 2),
    ({"a": 1, "b": 2},),
    [1, (2, {"k": [3, None, ()]}), Point(4, 5)],
    {"p": Pair(1, [2], "t"), "o": collections.OrderedDict(z=1, a=2)},
    collections.defaultdict(int, a=(1,)),
    Params(w={"x": 1}, b=None),
    [tu.Partial(max, 1), StaticTag("s")],
]


@pytest.mark.parametrize("tree", STRUCTURES, ids=_tree_id)
def test_compiled_builder_matches_interpreter(tree):
    leaves, treedef = tu.tree_flatten(tree)
    new_leaves = [f"leaf{i}" for i in range(len(leaves))]
    expected = tu._build(new_leaves, treedef._spec)
    for _ in range(4):  # first unflatten interprets, later ones compile
        fresh = tu.tree_structure(tree)
        assert tu.tree_flatten(fresh.unflatten(new_leaves)) == (new_leaves, treedef)
    for _ in range(3):  # the same treedef compiles its own builder
        rebuilt = treedef.unflatten(new_leaves)
        assert type(rebuilt) is type(expected)
        assert tu.tree_flatten(rebuilt) == (new_leaves, treedef)
    assert treedef._builder not in (None, tu._SEEN_ONCE, tu._build)


def test_global_builder_cache_keeps_no_user_objects():
    def make(i):
        return tu.Partial(lambda a, b: a + b + i, 1)

    for i in range(3):
        fresh = tu.tree_structure(make(i))
        for _ in range(3):
            assert fresh.unflatten([5])(1) == 6 + i
    assert all(
        all(d is tu._LEAF or tu._is_plain(d[1]) for d in spec) for spec in tu._builders
    )
    dict_spec = tu.tree_structure({"a": 1, "b": (2,)})._spec
    for _ in range(3):
        tu.tree_structure({"a": 1, "b": (2,)}).unflatten([3, 4])
    assert dict_spec in tu._builders


def _parser_accepts_nesting(depth):
    try:
        compile("[" * depth + "0" + "]" * depth, "<nesting>", "eval")
    except (SyntaxError, RecursionError, MemoryError):
        return False
    return True


@pytest.mark.parametrize("depth", [250, 400])
def test_deep_tree_falls_back_to_interpreter(depth):
    # 250 levels is small enough to try compiling; CPython's parser rejects that
    # nesting (PyPy's accepts it). 400 levels is over the compiled-node limit.
    tree = 0
    for _ in range(depth):
        tree = [tree]
    leaves, treedef = tu.tree_flatten(tree)
    assert leaves == [0]
    for _ in range(3):
        rebuilt = treedef.unflatten([1])
    too_big = depth + 1 > tu._MAX_COMPILED_NODES
    if too_big or not _parser_accepts_nesting(depth):
        assert treedef._builder is tu._build
    else:
        assert callable(treedef._builder) and treedef._builder is not tu._build
    for _ in range(depth):
        rebuilt = rebuilt[0]
    assert rebuilt == 1
    assert treedef.num_nodes == depth + 1


def test_equal_dict_keys_of_other_types_are_kept():
    # 1 == 1.0 == True: equal specs share a compiled builder, but each treedef
    # rebuilds its own keys.
    defs = [tu.tree_structure({k: 0}) for k in (1, 1.0, True)]
    for _ in range(3):
        for k, treedef in zip((1, 1.0, True), defs):
            (key,) = treedef.unflatten([0])
            assert type(key) is type(k)


# ---------------------------------------------------------------------------
# PyTreeDef.


def test_treedef_equality_and_hash():
    a = tu.tree_structure((1, {"a": [2, None], "b": 3}))
    b = tu.tree_structure(("x", {"a": ["y", None], "b": "z"}))
    assert a == b
    assert hash(a) == hash(b)
    assert {a: "cached"}[b] == "cached"
    assert a != tu.tree_structure((1, {"a": [2, None], "c": 3}))
    assert a != tu.tree_structure([1, {"a": [2, None], "b": 3}])
    assert tu.tree_structure((1,)) != tu.tree_structure([1])
    assert tu.tree_structure(1) == tu.tree_structure("leaf")
    assert tu.tree_structure(None) != tu.tree_structure(1)
    assert tu.tree_structure(Pair(1, 2, "a")) != tu.tree_structure(Pair(1, 2, "b"))
    assert (tu.tree_structure((1,)) == 3) is False
    assert (tu.tree_structure((1,)) != (1,)) is True


def test_treedef_with_unhashable_aux_is_still_hashable():
    treedef = tu.tree_structure(Pair(1, 2, ["unhashable"]))
    assert hash(treedef) == hash(tu.tree_structure(Pair(3, 4, ["unhashable"])))
    assert treedef == tu.tree_structure(Pair(3, 4, ["unhashable"]))
    assert treedef != tu.tree_structure(Pair(3, 4, ["other"]))
    for _ in range(3):
        assert treedef.unflatten([5, 6]) == Pair(5, 6, ["unhashable"])


def test_treedef_is_not_constructible_directly():
    with pytest.raises(TypeError):
        tu.PyTreeDef()


def test_treedef_counts_children_node_data():
    treedef = tu.tree_structure((1, {"a": [2, None], "b": 3}))
    assert treedef.num_leaves == 3
    assert treedef.num_nodes == 7
    assert [repr(c) for c in treedef.children()] == [
        "PyTreeDef(*)",
        "PyTreeDef({'a': [*, None], 'b': *})",
    ]
    assert tu.treedef_children(treedef) == treedef.children()
    assert treedef.node_data() == (tuple, None)
    assert tu.tree_structure({"a": 1}).node_data() == (dict, ["a"])
    assert tu.tree_structure(None).node_data() == (type(None), None)
    assert tu.tree_structure(1).node_data() is None
    assert tu.tree_structure(1).children() == []
    assert tu.tree_structure(Pair(1, 2, "t")).node_data() == (Pair, "t")


def test_from_node_data_and_children_inverts_node_data():
    for tree in STRUCTURES + [1, None, {}]:
        treedef = tu.tree_structure(tree)
        rebuilt = tu.PyTreeDef.from_node_data_and_children(
            None, treedef.node_data(), treedef.children()
        )
        assert rebuilt == treedef
        assert rebuilt.num_leaves == treedef.num_leaves


def test_treedef_is_leaf_and_tuple_and_compose():
    assert tu.treedef_is_leaf(tu.tree_structure(1))
    assert tu.treedef_is_leaf(tu.tree_structure(None))
    assert tu.treedef_is_leaf(tu.tree_structure(()))
    assert not tu.treedef_is_leaf(tu.tree_structure((1,)))
    combined = tu.treedef_tuple([tu.tree_structure(1), tu.tree_structure([1, None])])
    assert repr(combined) == "PyTreeDef((*, [*, None]))"
    assert combined.num_leaves == 2
    assert combined == tu.tree_structure((0, [0, None]))
    composed = tu.tree_structure((1, (2, 3))).compose(tu.tree_structure({"a": 1}))
    assert repr(composed) == "PyTreeDef(({'a': *}, ({'a': *}, {'a': *})))"
    assert composed.num_leaves == 3
    with pytest.raises(TypeError):
        tu.treedef_tuple([1])


def test_treedef_walk():
    treedef = tu.tree_structure((1, {"a": 2, "b": [3]}))
    out = treedef.walk(lambda xs, data: ("node", xs, data), lambda x: x * 10, [1, 2, 3])
    assert out == (
        "node",
        (10, ("node", (20, ("node", (30,), None)), ["a", "b"])),
        None,
    )


def test_treedef_pickles():
    for tree in STRUCTURES:
        treedef = tu.tree_structure(tree)
        clone = pickle.loads(pickle.dumps(treedef))
        assert clone == treedef
        assert repr(clone) == repr(treedef)


def test_flatten_up_to():
    treedef = tu.tree_structure((1, {"a": 2, "b": 3}))
    full = ([1, 2], {"a": (3,), "b": {"c": 4}})
    assert treedef.flatten_up_to(full) == [[1, 2], (3,), {"c": 4}]
    assert tu.tree_structure([1, None]).flatten_up_to([[5], None]) == [[5]]


FLATTEN_UP_TO_ERRORS = [
    (
        (1, {"a": [2, None], "b": 3}),
        (1, {"a": [2, 5], "b": 3}),
        "Expected None, got 5.",
    ),
    ((1, 2), [1, 2], "Expected tuple, got [1, 2]."),
    ((1, 2), (1, 2, 3), "Tuple arity mismatch: 3 != 2; tuple: (1, 2, 3)."),
    ([1, 2], [1, 2, 3], "List arity mismatch: 3 != 2; list: [1, 2, 3]."),
    (
        {"a": 1},
        {"b": 1},
        "Dict key mismatch; expected keys: ['a']; present keys: ['b'].",
    ),
    ({"a": 1}, collections.OrderedDict(a=1), "Expected dict, got OrderedDict"),
    (Point(1, 2), (1, 2), "Expected named tuple, got (1, 2)."),
    (Point(1, 2), Other(1, 2), "Named tuple type mismatch: expected type: <class"),
    (Pair(1, 2, "a"), Pair(1, 2, "b"), "Mismatch custom node data: 'a' != 'b'; value:"),
    (Pair(1, 2), Keyed(1, 2), "Custom node type mismatch: expected type: <class"),
    (
        Params(1, 2, "n"),
        Params(1, 2, "m"),
        "Mismatch custom dataclass node data: ('n',)",
    ),
    (Params(1, 2), (1,), "Custom dataclass node type mismatch: expected type:"),
]


@pytest.mark.parametrize("prefix, full, phrase", FLATTEN_UP_TO_ERRORS, ids=_pair_ids)
def test_flatten_up_to_errors(prefix, full, phrase):
    with pytest.raises(ValueError) as info:
        tu.tree_structure(prefix).flatten_up_to(full)
    assert phrase in str(info.value)


def test_none_prefix_error_explains_the_change():
    with pytest.raises(ValueError, match="flatten-up-to used to consider None"):
        tu.tree_structure([None]).flatten_up_to([1])


def test_custom_arity_mismatch():
    class Var:
        def __init__(self, *xs):
            self.xs = xs

    tu.register_pytree_node(Var, lambda v: (v.xs, None), lambda _, xs: Var(*xs))
    with pytest.raises(ValueError, match=r"Custom type arity mismatch: 3 != 2; value:"):
        tu.tree_structure(Var(1, 2)).flatten_up_to(Var(1, 2, 3))


# ---------------------------------------------------------------------------
# Reprs.

REPRS = [
    (1, "PyTreeDef(*)"),
    (None, "PyTreeDef(None)"),
    ((), "PyTreeDef(())"),
    ((1,), "PyTreeDef((*,))"),
    ((1, {"a": [2, None], "b": 3}), "PyTreeDef((*, {'a': [*, None], 'b': *}))"),
    ({1: (), 2: [None, {}]}, "PyTreeDef({1: (), 2: [None, {}]})"),
    (Point(1, 2), "PyTreeDef(CustomNode(namedtuple[Point], [*, *]))"),
    (Pair(1, 2, "aux"), "PyTreeDef(CustomNode(Pair[aux], [*, *]))"),
    (Params(1, [2]), "PyTreeDef(CustomNode(Params[('p',)], [*, [*]]))"),
    (StaticTag("s"), "PyTreeDef(CustomNode(StaticTag[StaticTag('s')], []))"),
    (
        collections.defaultdict(list, a=1),
        "PyTreeDef(CustomNode(defaultdict[(<class 'list'>, ('a',))], [*]))",
    ),
    (
        tu.Partial(max, 1, key=abs),
        "PyTreeDef(CustomNode(Partial[<built-in function max>], [(*,), {'key': *}]))",
    ),
]


@pytest.mark.parametrize("tree, expected", REPRS, ids=_tree_id)
def test_repr(tree, expected):
    assert repr(tu.tree_structure(tree)) == expected
    assert str(tu.tree_structure(tree)) == expected


# ---------------------------------------------------------------------------
# Key paths.


def test_key_classes():
    assert repr(tu.SequenceKey(0)) == "SequenceKey(idx=0)"
    assert str(tu.SequenceKey(0)) == "[0]"
    assert repr(tu.DictKey("b")) == "DictKey(key='b')"
    assert str(tu.DictKey("b")) == "['b']"
    assert repr(tu.GetAttrKey("name")) == "GetAttrKey(name='name')"
    assert str(tu.GetAttrKey("name")) == ".name"
    assert repr(tu.FlattenedIndexKey(3)) == "FlattenedIndexKey(key=3)"
    assert str(tu.FlattenedIndexKey(3)) == "[<flat index 3>]"
    assert tu.SequenceKey(1).idx == 1
    assert tu.DictKey("k").key == "k"
    assert tu.GetAttrKey("n").name == "n"
    assert tu.FlattenedIndexKey(2).key == 2
    assert tu.DictKey("a") == tu.DictKey("a")
    assert hash(tu.DictKey("a")) == hash(tu.DictKey("a"))
    assert tu.SequenceKey(1) != tu.FlattenedIndexKey(1)
    assert tu.SequenceKey(idx=3) == tu.SequenceKey(3)
    assert pickle.loads(pickle.dumps(tu.GetAttrKey("n"))) == tu.GetAttrKey("n")
    with pytest.raises(AttributeError):
        tu.SequenceKey(1).idx = 2
    with pytest.raises(TypeError):
        tu.SequenceKey("a")
    with pytest.raises(TypeError):
        tu.GetAttrKey(1)
    match tu.DictKey("m"):
        case tu.DictKey(key):
            assert key == "m"


def test_keystr():
    path = (
        tu.SequenceKey(1),
        tu.DictKey("a"),
        tu.GetAttrKey("x"),
        tu.FlattenedIndexKey(0),
    )
    assert tu.keystr(path) == "[1]['a'].x[<flat index 0>]"
    assert tu.keystr(path, simple=True, separator="/") == "1/a/x/0"
    assert tu.keystr(()) == ""
    with pytest.raises(TypeError):
        tu.keystr(path, True)


def test_flatten_with_path():
    tree = (1, {"a": [2, None], "b": 3}, Point(4, 5), Pair(6, 7), Keyed(8, 9))
    pairs, treedef = tu.tree_flatten_with_path(tree)
    assert treedef == tu.tree_structure(tree)
    assert [x for _, x in pairs] == list(range(1, 10))
    assert [tu.keystr(p) for p, _ in pairs] == [
        "[0]",
        "[1]['a'][0]",
        "[1]['b']",
        "[2].x",
        "[2].y",
        "[3][<flat index 0>]",
        "[3][<flat index 1>]",
        "[4].x",
        "[4].y",
    ]
    assert tu.tree_leaves_with_path(5) == [((), 5)]
    assert tu.tree_leaves_with_path(None) == []
    params = tu.tree_leaves_with_path(Params(w=1, b=2))
    assert params == [((tu.GetAttrKey("w"),), 1), ((tu.GetAttrKey("b"),), 2)]


def test_flatten_with_path_is_leaf_takes_path():
    tree = {"a": [1, 2], "b": [3]}
    pairs = tu.tree_leaves_with_path(
        tree,
        is_leaf=lambda path, x: path == (tu.DictKey("a"),),
        is_leaf_takes_path=True,
    )
    assert pairs == [
        ((tu.DictKey("a"),), [1, 2]),
        ((tu.DictKey("b"), tu.SequenceKey(0)), 3),
    ]
    plain = tu.tree_leaves_with_path(tree, is_leaf=lambda x: x == [3])
    assert plain[-1] == ((tu.DictKey("b"),), [3])


def test_map_with_path():
    out = tu.tree_map_with_path(
        lambda p, x, y: f"{tu.keystr(p)}={x + y}",
        {"a": 1, "b": [2]},
        {"a": 3, "b": [4]},
    )
    assert out == {"a": "['a']=4", "b": ["['b'][0]=6"]}
    with pytest.raises(ValueError, match=r"tree_map_with_path tree\['b'\]"):
        tu.tree_map_with_path(lambda p, x, y: x, {"b": [1]}, {"b": [1, 2]})


# ---------------------------------------------------------------------------
# tree_map and friends.


def test_tree_map():
    assert tu.tree_map(lambda x: x * 2, {"a": 1, "b": (2, None)}) == {
        "a": 2,
        "b": (4, None),
    }
    assert tu.tree_map(lambda x, y: x + y, [1, (2,)], [10, (20,)]) == [11, (22,)]
    # `rest` trees may be deeper than the first: the first is a prefix.
    assert tu.tree_map(lambda x, y: (x, y), [1, 2], [[3], {"a": 4}]) == [
        (1, [3]),
        (2, {"a": 4}),
    ]
    assert tu.tree_map(lambda x: x, {}) == {}
    assert tu.tree_map(lambda x: x + 1, Pair(1, 2, "t")) == Pair(2, 3, "t")
    out = tu.tree_map(lambda x: x, [[1], 2], is_leaf=lambda x: x == [1])
    assert out == [[1], 2]


TREE_MAP_ERRORS = [
    (
        (1, 2),
        (1, 2, 3),
        "pytree structure error: different lengths of tuple at key path\n"
        "    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type tuple "
        "of length 2, but the full pytree has a subtree of the same type but of length 3.",
    ),
    (
        (1, 2),
        [1, 2],
        "pytree structure error: different types at key path\n"
        "    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'tuple'>\n"
        "but at the same key path the full pytree has a subtree of different type\n"
        "    <class 'list'>.",
    ),
    (
        {"a": 1, "b": 2},
        {"a": 1},
        "pytree structure error: different numbers of pytree children at key path\n"
        "    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'dict'>\n"
        "with 2 child keys\n"
        "    a b\n"
        "but at the same key path the full pytree has a subtree of the same type but "
        "with 1 child keys\n"
        "    a\n"
        "so the symmetric difference on key sets is\n"
        "    b",
    ),
    (
        {"a": 1},
        {"b": 1},
        "pytree structure error: different pytree metadata at key path\n"
        "    tree_map tree\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'dict'>\n"
        "with metadata\n"
        "    ('a',)\n"
        "but at the same key path the full pytree has a subtree of the same type but "
        "with metadata\n"
        "    ('b',)\n"
        "so the diff in the metadata at these pytree nodes is\n"
        "    - ('a',)\n"
        "    ?   ^\n"
        "\n"
        "    + ('b',)\n"
        "    ?   ^\n",
    ),
    (
        {"a": {"x": [1, 2]}},
        {"a": {"x": [1, 2, 3]}},
        "pytree structure error: different lengths of list at key path\n"
        "    tree_map tree['a']['x']\n",
    ),
    (
        [1, None],
        [1, 2],
        "pytree structure error: different types at key path\n"
        "    tree_map tree[1]\n"
        "At that key path, the prefix pytree tree_map tree has a subtree of type\n"
        "    <class 'NoneType'>\n",
    ),
    (
        Point(1, 2),
        Other(1, 2),
        "different types at key path\n    tree_map tree\n",
    ),
    (
        {"k": Pair(1, 2, "a")},
        {"k": Pair(1, 2, "b")},
        "different pytree metadata at key path\n    tree_map tree['k']\n",
    ),
]


@pytest.mark.parametrize("tree, other, message", TREE_MAP_ERRORS, ids=_pair_ids)
def test_tree_map_structure_errors(tree, other, message):
    with pytest.raises(ValueError) as info:
        tu.tree_map(lambda x, y: x, tree, other)
    assert message in str(info.value)


def test_tree_map_error_names_the_failing_tree():
    with pytest.raises(ValueError, match="different lengths of list"):
        tu.tree_map(lambda x, y, z: x, [1, 2], [1, 2], [1, 2, 3])


def test_tree_map_reraises_original_error_without_diagnosis():
    class Fussy:
        def __init__(self, ok):
            self.ok = ok

    def flatten(x):
        if not x.ok:
            raise RuntimeError("flatten failed")
        return (), None

    tu.register_pytree_node(Fussy, flatten, lambda a, c: Fussy(True))
    with pytest.raises(RuntimeError, match="flatten failed"):
        tu.tree_map(lambda x, y: x, [Fussy(True)], [Fussy(False)])


def test_tree_all_reduce_and_associative():
    assert tu.tree_all([1, (True, {"a": 2})])
    assert not tu.tree_all([1, (0,)])
    assert tu.tree_all([])
    assert tu.tree_all([None, 0], is_leaf=lambda x: x is None) is False
    assert tu.tree_reduce(lambda a, b: a + b, [1, (2, {"c": 3})]) == 6
    assert tu.tree_reduce(lambda a, b: a + b, [1, 2], 10) == 13
    assert tu.tree_reduce(lambda a, b: a + b, [], None) is None
    with pytest.raises(TypeError, match="reduce\\(\\) of empty"):
        tu.tree_reduce(lambda a, b: a + b, [])
    pair = lambda a, b: (a, b)
    assert tu.tree_reduce_associative(pair, [1, 2, 3, 4, 5]) == ((1, 2), (3, (4, 5)))
    assert tu.tree_reduce_associative(pair, [7]) == 7
    assert tu.tree_reduce_associative(pair, [], identity=0) == 0
    with pytest.raises(TypeError, match="Must specify identity"):
        tu.tree_reduce_associative(pair, [])


def test_tree_transpose():
    outer = tu.tree_structure([0, 0])
    inner = tu.tree_structure((0, 0))
    assert tu.tree_transpose(outer, inner, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    assert tu.tree_transpose(outer, None, [(1, 2), (3, 4)]) == ([1, 3], [2, 4])
    nested = {"a": {"x": 1, "y": 2}, "b": {"x": 3, "y": 4}}
    out = tu.tree_transpose(
        tu.tree_structure({"a": 0, "b": 0}), tu.tree_structure({"x": 0, "y": 0}), nested
    )
    assert out == {"x": {"a": 1, "b": 3}, "y": {"a": 2, "b": 4}}
    with pytest.raises(TypeError, match="Mismatch\nPyTreeDef"):
        tu.tree_transpose(outer, tu.tree_structure((0, 0, 0)), [(1, 2), (3, 4)])


def test_tree_broadcast():
    assert tu.tree_broadcast([1, {"a": 2}], [[3, 4], {"a": (5, 6)}]) == [
        [1, 1],
        {"a": (2, 2)},
    ]
    assert tu.tree_broadcast([1, None], [[3, 4], None]) == [[1, 1], None]


def test_all_leaves_and_flatten_one_level():
    assert tu.all_leaves([1, 2, "x"])
    assert not tu.all_leaves([1, None])
    assert not tu.all_leaves([1, (2,)])
    assert tu.all_leaves([1, (2,)], is_leaf=lambda x: isinstance(x, tuple))
    assert tu.flatten_one_level({"b": 1, "a": 2}) == ((2, 1), ("a", "b"))
    assert tu.flatten_one_level(None) == ((), None)
    assert tu.flatten_one_level(Point(1, 2)) == ([1, 2], Point)
    with pytest.raises(ValueError, match="can't tree-flatten type: <class 'int'>"):
        tu.flatten_one_level(1)
    pairs, aux = tu.flatten_one_level_with_keys(Pair(1, 2, "t"))
    assert (list(pairs), aux) == (
        [(tu.FlattenedIndexKey(0), 1), (tu.FlattenedIndexKey(1), 2)],
        "t",
    )
    assert tu.is_tree_node(tuple) and tu.is_tree_node(type(None))
    assert tu.is_tree_node(Point) and tu.is_tree_node(Pair)
    assert not tu.is_tree_node(int)


# ---------------------------------------------------------------------------
# Registration.


def test_register_twice_fails():
    with pytest.raises(
        ValueError, match="Duplicate custom PyTreeDef type registration"
    ):
        tu.register_pytree_node(Pair, _pair_flatten, _pair_unflatten)
    with pytest.raises(ValueError, match="registration for <class 'tuple'>"):
        tu.register_pytree_node(tuple, lambda x: (x, None), lambda a, c: tuple(c))


def test_registering_a_seen_leaf_type_or_namedtuple_makes_it_a_node():
    class Late:
        def __init__(self, v):
            self.v = v

    Late2 = collections.namedtuple("Late2", "a b")
    assert tu.tree_leaves(Late(1)) != [1]  # cached as a leaf type first
    assert tu.tree_leaves(Late2(1, 2)) == [1, 2]
    tu.register_pytree_node(Late, lambda x: ((x.v,), None), lambda a, c: Late(*c))
    tu.register_pytree_node(Late2, lambda x: ((x.a,), x.b), lambda b, c: Late2(c[0], b))
    assert tu.tree_leaves(Late(1)) == [1]
    assert tu.tree_leaves(Late2(1, 2)) == [1]
    assert (
        repr(tu.tree_structure(Late2(1, 2))) == "PyTreeDef(CustomNode(Late2[2], [*]))"
    )


def test_register_pytree_node_class_and_with_keys_class():
    leaves, treedef = tu.tree_flatten(Boxed([1, 2], "l"))
    assert leaves == [1, 2]
    assert repr(treedef) == "PyTreeDef(CustomNode(Boxed[l], [[*, *]]))"
    assert treedef.unflatten([3, 4]).value == [3, 4]

    @tu.register_pytree_with_keys_class
    class Named:
        def __init__(self, x):
            self.x = x

        def tree_flatten_with_keys(self):
            return ((tu.GetAttrKey("x"), self.x),), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    assert tu.tree_leaves(Named([1])) == [1]
    assert tu.keystr(tu.tree_leaves_with_path(Named([1]))[0][0]) == ".x[0]"
    assert tu.tree_map(lambda v: v + 1, Named(1)).x == 2


def test_register_with_keys_and_flatten_with_keys_func():
    class Both:
        def __init__(self, x):
            self.x = x

    tu.register_pytree_node(
        Both,
        lambda b: ((b.x,), None),
        lambda a, c: Both(*c),
        lambda b: (((tu.DictKey("q"), b.x),), None),
    )
    assert tu.keystr(tu.tree_leaves_with_path(Both(5))[0][0]) == "['q']"


def test_register_static():
    leaves, treedef = tu.tree_flatten([StaticTag("s"), 1])
    assert leaves == [1]
    assert treedef.unflatten([2]) == [StaticTag("s"), 2]
    assert treedef != tu.tree_structure([StaticTag("t"), 1])


def test_register_dataclass_inferred_and_decorator():
    leaves, treedef = tu.tree_flatten(Params(w=[1, 2], b=3, name="n"))
    assert leaves == [1, 2, 3]
    assert treedef.unflatten([4, 5, 6]) == Params(w=[4, 5], b=6, name="n")

    @tu.register_dataclass
    @dataclasses.dataclass
    class WithStatic:
        x: int
        op: str = jtree.static(default="add")

    assert repr(tu.tree_structure(WithStatic(1))) == (
        "PyTreeDef(CustomNode(WithStatic[('add',)], [*]))"
    )


def test_register_dataclass_explicit_fields_and_drop():
    @dataclasses.dataclass
    class D:
        a: int
        b: int = 0

    assert (
        tu.register_dataclass(D, data_fields=["a"], meta_fields=[], drop_fields=["b"])
        is D
    )
    assert tu.tree_unflatten(tu.tree_structure(D(1, 2)), [5]) == D(a=5, b=0)

    class NotDC:
        def __init__(self, a, b):
            self.a, self.b = a, b

    tu.register_dataclass(NotDC, data_fields=["a"], meta_fields=["b"])
    leaves, treedef = tu.tree_flatten(NotDC(1, 2))
    assert leaves == [1]
    assert treedef.unflatten([7]).a == 7
    assert treedef.unflatten([7]).b == 2


def test_register_dataclass_errors():
    @dataclasses.dataclass
    class E:
        a: int
        b: int

    with pytest.raises(
        ValueError, match="Missing fields: {'b'}. Add them to drop_fields"
    ):
        tu.register_dataclass(E, data_fields=["a"], meta_fields=[])
    with pytest.raises(ValueError, match="Unexpected fields: {'c'}"):
        tu.register_dataclass(E, data_fields=["a", "b", "c"], meta_fields=[])
    with pytest.raises(ValueError, match="must not overlap. Overlapping fields: {'a'}"):
        tu.register_dataclass(E, data_fields=["a"], meta_fields=["a", "b"])
    with pytest.raises(TypeError, match="must both be specified"):
        tu.register_dataclass(E, data_fields=["a"])
    with pytest.raises(TypeError, match="required when nodetype is not a dataclass"):
        tu.register_dataclass(Pair)

    @dataclasses.dataclass
    class NoInit:
        a: int
        c: int = dataclasses.field(default=0, init=False)

    with pytest.raises(ValueError, match="Unexpected fields: {'c'}"):
        tu.register_dataclass(NoInit)


# ---------------------------------------------------------------------------
# Partial.

# Partial keeps functools.partial's repr, as JAX's does; from Python 3.13 on that
# names the class with its module (`jax.tree_util.Partial(...)` in JAX).
PARTIAL = "jaxlite.tree_util.Partial" if sys.version_info >= (3, 13) else "Partial"


def test_partial_is_a_pytree():
    p = tu.Partial(max, 1, key=abs)
    assert isinstance(p, functools.partial)
    assert (
        repr(p) == f"{PARTIAL}(<built-in function max>, 1, key=<built-in function abs>)"
    )
    leaves, treedef = tu.tree_flatten(p)
    assert leaves == [1, abs]
    q = treedef.unflatten([-5, abs])
    assert type(q) is tu.Partial
    assert q(3) == -5
    assert tu.tree_map(lambda x: x * 10 if isinstance(x, int) else x, p)(3) == 10
    assert tu.tree_structure(tu.Partial(max)) == tu.tree_structure(tu.Partial(max))
    assert tu.tree_structure(tu.Partial(max)) != tu.tree_structure(tu.Partial(min))


def test_partial_repr_matches_jax():
    jax = pytest.importorskip("jax")
    theirs = repr(jax.tree_util.Partial(max, 1, key=abs))
    assert repr(tu.Partial(max, 1, key=abs)) == theirs.replace("jax.", "jaxlite.", 1)


def test_partial_of_partial_keeps_inner_arguments_static():
    inner = tu.Partial(lambda a, b, c: (a, b, c), 1)
    outer = tu.Partial(inner, 2)
    assert outer(3) == (1, 2, 3)
    leaves, treedef = tu.tree_flatten(outer)
    assert leaves == [2]
    assert repr(treedef).startswith(
        f"PyTreeDef(CustomNode(Partial[_HashableCallableShim({PARTIAL}(<function"
    )
    assert treedef.unflatten([20])(30) == (1, 20, 30)
    assert outer.func.func is inner.func
    assert outer.func.args == (1,)
    assert tu.tree_structure(tu.Partial(inner, 5)) == treedef
    merged = functools.partial(functools.partial(max, 1), 2)
    assert tu.tree_leaves(merged) == [merged]  # plain partials are leaves


# ---------------------------------------------------------------------------
# jaxlite.tree and module hygiene.


def test_tree_module_aliases():
    tree = {"a": [1, 2], "b": (3, None)}
    leaves, treedef = jtree.flatten(tree)
    assert leaves == [1, 2, 3]
    assert jtree.unflatten(treedef, leaves) == tree
    assert jtree.structure(tree) == treedef
    assert jtree.leaves(tree) == leaves
    assert jtree.map(lambda x: -x, tree) == {"a": [-1, -2], "b": (-3, None)}
    assert jtree.all(tree) and not jtree.all([0])
    assert jtree.reduce(lambda a, b: a * b, tree) == 6
    assert jtree.reduce_associative(lambda a, b: a + b, tree) == 6
    assert jtree.transpose(jtree.structure([0, 0]), None, [(1, 2), (3, 4)]) == (
        [1, 3],
        [2, 4],
    )
    assert jtree.leaves_with_path([5]) == [((tu.SequenceKey(0),), 5)]
    assert jtree.flatten_with_path([5])[1] == jtree.structure([0])
    assert jtree.map_with_path(lambda p, x: len(p), [[1]]) == [[2]]
    assert jtree.broadcast(1, [2, 3]) == [1, 1]


def test_tree_util_imports_nothing_heavy():
    # tree_util, its key-path module and its node registry are the bottom layer:
    # loaded on their own (tree_keys and tree_registry registered under their names
    # first), they import no NumPy, no JAX and no other part of jaxlite.
    code = (
        "import importlib.util, sys\n"
        "def load(name, path):\n"
        "    spec = importlib.util.spec_from_file_location(name, path)\n"
        "    m = importlib.util.module_from_spec(spec)\n"
        "    sys.modules[name] = m\n"
        "    spec.loader.exec_module(m)\n"
        "    return m\n"
        f"load('jaxlite.tree_keys', {tree_keys.__file__!r})\n"
        f"load('jaxlite.tree_registry', {tree_registry.__file__!r})\n"
        f"m = load('tu', {tu.__file__!r})\n"
        "assert m.tree_leaves({'a': (1, None)}) == [1]\n"
        "assert m.keystr(m.tree_leaves_with_path([[5]])[0][0]) == '[0][0]'\n"
        "bad = [n for n in sys.modules if n.split('.')[0] in "
        "('jax', 'jaxlib', 'numpy', 'jaxlite') and n not in "
        "('jaxlite.tree_keys', 'jaxlite.tree_registry')]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ---------------------------------------------------------------------------
# Differential tests against JAX 0.10.2.


def _keys_text(pairs):
    return [(tuple(repr(k) for k in path), leaf) for path, leaf in pairs]


@pytest.mark.parametrize("index", range(len(corpus(tu.Partial))))
def test_matches_jax_flatten_repr_and_paths(jtu, index):
    ours = corpus(tu.Partial)[index]
    theirs = corpus(jtu.Partial)[index]
    leaves, treedef = tu.tree_flatten(ours)
    j_leaves, j_treedef = jtu.tree_flatten(theirs)
    assert leaves == j_leaves
    assert repr(treedef) == repr(j_treedef)
    assert treedef.num_leaves == j_treedef.num_leaves
    assert treedef.num_nodes == j_treedef.num_nodes
    assert [repr(c) for c in treedef.children()] == [
        repr(c) for c in j_treedef.children()
    ]
    node_data, j_node_data = treedef.node_data(), j_treedef.node_data()
    if j_node_data is None:
        assert node_data is None
    elif not isinstance(ours, tu.Partial):
        assert node_data == j_node_data
    pairs = tu.tree_flatten_with_path(ours)[0]
    j_pairs = jtu.tree_flatten_with_path(theirs)[0]
    assert _keys_text(pairs) == _keys_text(j_pairs)
    assert [tu.keystr(p) for p, _ in pairs] == [jtu.keystr(p) for p, _ in j_pairs]
    simple = [tu.keystr(p, simple=True, separator="/") for p, _ in pairs]
    assert simple == [jtu.keystr(p, simple=True, separator="/") for p, _ in j_pairs]
    assert tu.treedef_is_leaf(treedef) == jtu.treedef_is_leaf(j_treedef)
    assert tu.all_leaves([ours]) == jtu.all_leaves([theirs])


@pytest.mark.parametrize("tree, other, message", TREE_MAP_ERRORS, ids=_pair_ids)
def test_matches_jax_tree_map_errors(jtu, tree, other, message):
    with pytest.raises(ValueError) as ours:
        tu.tree_map(lambda x, y: x, tree, other)
    with pytest.raises(ValueError) as theirs:
        jtu.tree_map(lambda x, y: x, tree, other)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("prefix, full, phrase", FLATTEN_UP_TO_ERRORS, ids=_pair_ids)
def test_matches_jax_flatten_up_to_errors(jtu, prefix, full, phrase):
    with pytest.raises(ValueError) as theirs:
        jtu.tree_structure(prefix).flatten_up_to(full)
    with pytest.raises(ValueError) as ours:
        tu.tree_structure(prefix).flatten_up_to(full)
    assert phrase in str(theirs.value)
    ours_text = str(ours.value).split(" at 0x")[0]
    assert ours_text == str(theirs.value).split(" at 0x")[0]


def test_matches_jax_unflatten_errors(jtu):
    tree = (1, {"a": [2, None], "b": 3})
    for leaves in ([1, 2], [1, 2, 3, 4]):
        with pytest.raises(ValueError) as ours:
            tu.tree_structure(tree).unflatten(leaves)
        with pytest.raises(ValueError) as theirs:
            jtu.tree_structure(tree).unflatten(leaves)
        assert str(ours.value) == str(theirs.value)


def test_matches_jax_is_leaf_calls(jtu):
    tree = (1, [2, None], {"a": Point(3, 4)})
    ours, theirs = [], []
    tu.tree_flatten(tree, is_leaf=lambda x: ours.append(x) or False)
    jtu.tree_flatten(tree, is_leaf=lambda x: theirs.append(x) or False)
    assert ours == theirs
    ours, theirs = [], []
    tu.tree_flatten_with_path(
        tree,
        is_leaf=lambda p, x: ours.append(tu.keystr(p)) or False,
        is_leaf_takes_path=True,
    )
    jtu.tree_flatten_with_path(
        tree,
        is_leaf=lambda p, x: theirs.append(jtu.keystr(p)) or False,
        is_leaf_takes_path=True,
    )
    assert ours == theirs


def test_matches_jax_reductions_and_transpose(jtu):
    pair = lambda a, b: (a, b)
    for n in range(1, 9):
        xs = list(range(n))
        assert tu.tree_reduce_associative(pair, xs) == jtu.tree_reduce_associative(
            pair, xs
        )
    tree = [{"x": 1, "y": (2, 3)}, {"x": 4, "y": (5, 6)}]
    outer, inner = [0, 0], {"x": 0, "y": (0, 0)}
    ours = tu.tree_transpose(tu.tree_structure(outer), tu.tree_structure(inner), tree)
    theirs = jtu.tree_transpose(
        jtu.tree_structure(outer), jtu.tree_structure(inner), tree
    )
    assert ours == theirs
    with pytest.raises(TypeError) as ours_error:
        tu.tree_transpose(tu.tree_structure(outer), tu.tree_structure((0,)), tree)
    with pytest.raises(TypeError) as theirs_error:
        jtu.tree_transpose(jtu.tree_structure(outer), jtu.tree_structure((0,)), tree)
    assert str(ours_error.value) == str(theirs_error.value)
    prefix, full = [1, {"a": 2}], [[3, 4], {"a": (5, 6)}]
    assert tu.tree_broadcast(prefix, full) == jtu.tree_broadcast(prefix, full)


def test_matches_jax_treedef_operations(jtu):
    a, b = (1, (2, 3)), {"a": 1, "b": [None, 2]}
    ours = tu.tree_structure(a).compose(tu.tree_structure(b))
    theirs = jtu.tree_structure(a).compose(jtu.tree_structure(b))
    assert repr(ours) == repr(theirs)
    assert ours.num_leaves == theirs.num_leaves
    defs = [1, [1, None], {"k": (1,)}]
    ours = tu.treedef_tuple(tu.tree_structure(t) for t in defs)
    theirs = jtu.treedef_tuple(jtu.tree_structure(t) for t in defs)
    assert repr(ours) == repr(theirs)
    walk_args = (lambda xs, d: ("n", xs, d), lambda x: x + 1, [1, 2, 3])
    tree = (1, {"a": Point(2, 3)})
    assert tu.tree_structure(tree).walk(*walk_args) == jtu.tree_structure(tree).walk(
        *walk_args
    )


def test_matches_jax_register_dataclass_errors(jtu):
    def attempt(m):
        @dataclasses.dataclass
        class E:
            a: int
            b: int

        with pytest.raises(ValueError) as info:
            m.register_dataclass(E, data_fields=["a"], meta_fields=[])
        return str(info.value)

    assert attempt(tu) == attempt(jtu)
