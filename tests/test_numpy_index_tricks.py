"""Tests for index tricks (r_, c_, mgrid, ogrid, ix_, the *_indices helpers,
fill_diagonal, ravel_multi_index, unravel_index), array editing (put,
put_along_axis, place, extract, delete, insert, resize, block), bit packing, and
host I/O (frombuffer, fromstring, fromfunction, from_dlpack, load/save, printing).

Each case runs with jaxlite.numpy and with jax.numpy (values, dtypes, weak types,
error classes must agree); NumPy is the reference for the host functions; traced
index values are checked under jit and vmap.
"""

import io

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from test_numpy_ufunc_objects import assert_cases_match_jax
from testing import check_close, check_grads


@pytest.fixture(scope="module")
def rjax():
    return pytest.importorskip("jax")


A = np.arange(6).reshape(2, 3)
AF = np.arange(6.0).reshape(2, 3).astype(np.float32)


def _jit(m):
    return jaxlite.jit if m is jnp else __import__("jax").jit


INDEX_CASES = [
    ("unravel", lambda m: m.unravel_index(m.asarray([5, 22, -1, -30, 100]), (4, 6))),
    ("unravel scalar", lambda m: m.unravel_index(7, (4, 6))),
    ("unravel float", lambda m: m.unravel_index(7.0, (4, 6))),
    ("unravel empty shape", lambda m: m.unravel_index(m.asarray([0]), ())),
    (
        "ravel_multi",
        lambda m: m.ravel_multi_index((m.asarray([1, 3]), m.asarray([2, 5])), (4, 6)),
    ),  # fmt: skip
    (
        "ravel_multi clip",
        lambda m: m.ravel_multi_index(
            (m.asarray([1, 5]), m.asarray([2, 7])), (4, 6), mode="clip"
        ),
    ),  # fmt: skip
    (
        "ravel_multi wrap F",
        lambda m: m.ravel_multi_index(
            (m.asarray([1, 5]), m.asarray([-2, 7])), (4, 6), mode="wrap", order="F"
        ),
    ),  # fmt: skip
    (
        "ravel_multi raise",
        lambda m: m.ravel_multi_index((m.asarray([1, 5]), m.asarray([2, 7])), (4, 6)),
    ),  # fmt: skip
    (
        "ravel_multi traced raise",
        lambda m: _jit(m)(lambda i: m.ravel_multi_index((i, i), (4, 6)))(
            m.asarray([1])
        ),
    ),  # fmt: skip
    ("ravel_multi scalar", lambda m: m.ravel_multi_index((1, 2), (4, 6))),
    ("ix_", lambda m: m.ix_(m.asarray([0, 1]), m.asarray([2, 3, 4]))),
    ("ix_ bool", lambda m: m.ix_(m.asarray([True, False]))),
    ("ix_ 2d", lambda m: m.ix_(m.ones((2, 2), int))),
    ("ix_ empty", lambda m: m.ix_(m.asarray([], int), m.asarray([1]))),
    ("diag_indices", lambda m: [m.diag_indices(3), m.diag_indices(2, 3)]),
    ("diag_indices_from", lambda m: m.diag_indices_from(m.ones((3, 3)))),
    ("diag_indices_from bad", lambda m: m.diag_indices_from(m.ones((2, 3)))),
    ("tri indices", lambda m: [m.tril_indices(3, 1), m.triu_indices(3, 0, 4)]),
    (
        "tri indices from",
        lambda m: [
            m.tril_indices_from(m.ones((2, 3))),
            m.triu_indices_from(m.ones((4, 3)), -1),
        ],
    ),  # fmt: skip
    ("tri indices from bad", lambda m: m.tril_indices_from(m.ones((2, 3, 3)))),
    ("mask_indices", lambda m: m.mask_indices(3, m.triu, 1)),
    (
        "fill_diagonal",
        lambda m: m.fill_diagonal(
            m.zeros((5, 3)), m.asarray([1.0, 2.0]), inplace=False
        ),
    ),  # fmt: skip
    (
        "fill_diagonal 3d",
        lambda m: m.fill_diagonal(m.zeros((3, 3, 3)), 4, inplace=False),
    ),
    ("fill_diagonal inplace", lambda m: m.fill_diagonal(m.zeros((3, 3)), 1)),
    (
        "fill_diagonal wrap",
        lambda m: m.fill_diagonal(m.zeros((3, 3)), 1, wrap=True, inplace=False),
    ),  # fmt: skip
    (
        "fill_diagonal bad",
        lambda m: m.fill_diagonal(m.zeros((3, 3, 2)), 1, inplace=False),
    ),
    ("fill_diagonal 1d", lambda m: m.fill_diagonal(m.zeros(3), 1, inplace=False)),
    (
        "fill_diagonal matrix val",
        lambda m: m.fill_diagonal(m.zeros((3, 4)), m.ones((2, 2)) * 5, inplace=False),
    ),  # fmt: skip
    ("r_", lambda m: m.r_[1:4, 0, m.asarray([5, 6])]),
    ("r_ linspace", lambda m: m.r_[-1:1:5j, 0]),
    (
        "r_ directives",
        lambda m: [
            m.r_["0,2", [1, 2, 3], [4, 5, 6]],
            m.r_["0,2,0", [1, 2, 3], [4, 5, 6]],
            m.r_["0,2,-2", [1, 2, 3], [4, 5, 6]],
            m.r_["r", [1, 2, 3], [4, 5, 6]],
            m.r_["c", [1, 2, 3]],
            m.r_["1", m.ones((2, 2)), m.zeros((2, 1))],
        ],
    ),  # fmt: skip
    ("r_ bad directive", lambda m: m.r_["x,y", [1]]),
    ("r_ late directive", lambda m: m.r_[[1], "r"]),
    ("r_ mixed scalars", lambda m: m.r_[1, 2.5]),
    (
        "c_",
        lambda m: [
            m.c_[m.asarray(A), m.asarray(A)],
            m.c_[m.asarray([1, 2]), m.asarray([3, 4])],
            m.c_["0,2,-1", [1, 2, 3], [4, 5, 6]],
            m.c_["r", [1, 2, 3], [4, 5, 6]],
            m.c_[0:3, 3:6],
        ],
    ),  # fmt: skip
    (
        "mgrid",
        lambda m: [
            m.mgrid[0:3, 0:2],
            m.mgrid[0:1:3j, 0:2],
            m.mgrid[0:4],
            m.mgrid[0.5:2],
            m.mgrid[()],
        ],
    ),  # fmt: skip
    ("ogrid", lambda m: [m.ogrid[0:2, 0:3], m.ogrid[0:2:3j, 0:3], m.ogrid[1:3]]),
    ("s_", lambda m: [m.s_[1:2, ::3] == np.s_[1:2, ::3], m.index_exp[1] == (1,)]),
]


def test_index_tricks_match_jax(rjax):
    assert_cases_match_jax(rjax, INDEX_CASES)


def test_index_tricks_match_numpy():
    for n, k, m in [(4, 0, None), (3, -1, 5), (5, 2, 2)]:
        for ours, ref in ((jnp.tril_indices, np.tril_indices),
                          (jnp.triu_indices, np.triu_indices)):  # fmt: skip
            for a, b in zip(ours(n, k, m), ref(n, k, m)):
                np.testing.assert_array_equal(np.asarray(a), b)
    idx = np.array([0, 5, 17, 23])
    for a, b in zip(jnp.unravel_index(idx, (4, 6)), np.unravel_index(idx, (4, 6))):
        np.testing.assert_array_equal(np.asarray(a), b)
    coords = (np.array([3, 0, 1]), np.array([1, 4, 2]), np.array([0, 1, 1]))
    for order in ("C", "F"):
        np.testing.assert_array_equal(
            np.asarray(jnp.ravel_multi_index(coords, (4, 5, 2), order=order)),
            np.ravel_multi_index(coords, (4, 5, 2), order=order),
        )
    np.testing.assert_array_equal(np.asarray(jnp.r_[0:3, 7, -1:1:3j]),
                                  np.r_[0:3, 7, -1:1:3j].astype(np.float32))  # fmt: skip
    np.testing.assert_array_equal(np.asarray(jnp.mgrid[0:2, 1:4]), np.mgrid[0:2, 1:4])
    x = np.arange(20.0).reshape(4, 5)
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x)[jnp.ix_(jnp.asarray([0, 2]), jnp.asarray([1, 4]))]),
                                  x[np.ix_([0, 2], [1, 4])])  # fmt: skip


def test_index_functions_traced():
    flat = jnp.asarray([3, 10, 23])
    f = jaxlite.jit(lambda i: jnp.unravel_index(i, (4, 6)))
    check_close(f(flat), jnp.unravel_index(flat, (4, 6)))
    g = jaxlite.jit(lambda i, j: jnp.ravel_multi_index((i, j), (4, 6), mode="wrap"))
    check_close(g(jnp.asarray([1, 5]), jnp.asarray([2, 7])), np.array([8, 7]))
    h = jaxlite.vmap(lambda v: jnp.fill_diagonal(jnp.zeros((3, 3)), v, inplace=False))
    out = h(jnp.arange(2.0))
    check_close(out, np.stack([np.zeros((3, 3)), np.eye(3)]).astype(np.float32))
    check_grads(lambda v: jnp.fill_diagonal(jnp.ones((3, 3)), v, inplace=False),
                (jnp.asarray([1.0, 2.0, 3.0]),), order=1)  # fmt: skip


# ----------------------------------------------------------------------------------
# Array editing


def _jit_call(m, f, *args):
    return _jit(m)(f)(*args)


EDIT_CASES = [
    (
        "put",
        lambda m: m.put(
            m.asarray(A), m.asarray([0, 5, 7]), m.asarray([9, 8]), inplace=False
        ),
    ),  # fmt: skip
    (
        "put wrap",
        lambda m: m.put(
            m.asarray(A),
            m.asarray([0, 5, 7]),
            m.asarray([9, 8]),
            mode="wrap",
            inplace=False,
        ),
    ),  # fmt: skip
    (
        "put clip",
        lambda m: m.put(
            m.asarray(A),
            m.asarray([-1, -9, 9]),
            m.asarray([7, 8, 9]),
            mode="clip",
            inplace=False,
        ),
    ),  # fmt: skip
    (
        "put negative",
        lambda m: m.put(m.asarray(A), m.asarray([-1, 1]), 1.5, inplace=False),
    ),
    ("put inplace", lambda m: m.put(m.asarray(A), 0, 1)),
    ("put raise", lambda m: m.put(m.asarray(A), 0, 1, mode="raise", inplace=False)),
    ("put bad mode", lambda m: m.put(m.asarray(A), 0, 1, mode="x", inplace=False)),
    (
        "put empty",
        lambda m: m.put(m.asarray(A), m.asarray([1]), m.asarray([]), inplace=False),
    ),
    (
        "put 2d values",
        lambda m: m.put(
            m.arange(6.0),
            m.asarray([[0, 1]]),
            m.asarray([[1.0, 2], [3, 4]]),
            inplace=False,
        ),
    ),  # fmt: skip
    (
        "put_along_axis",
        lambda m: m.put_along_axis(
            m.asarray(A), m.asarray([[0], [2]]), 7, axis=1, inplace=False
        ),
    ),  # fmt: skip
    (
        "put_along_axis neg",
        lambda m: m.put_along_axis(
            m.asarray(AF),
            m.asarray([[0], [-1]]),
            m.asarray([[10.0], [20.0]]),
            axis=1,
            inplace=False,
        ),
    ),  # fmt: skip
    (
        "put_along_axis ax0",
        lambda m: m.put_along_axis(
            m.asarray(AF),
            m.asarray([[0, 1, 1]]),
            m.asarray([10.0, 20, 30]),
            axis=0,
            inplace=False,
        ),
    ),  # fmt: skip
    (
        "put_along_axis None",
        lambda m: m.put_along_axis(
            m.asarray(AF), m.asarray([1, 4]), 5.0, axis=None, inplace=False
        ),
    ),  # fmt: skip
    (
        "put_along_axis oob",
        lambda m: [
            m.put_along_axis(
                m.asarray(AF),
                m.asarray([[0], [5]]),
                9.0,
                axis=1,
                inplace=False,
                mode=mode,
            )
            for mode in (None, "clip")
        ],
    ),  # fmt: skip
    (
        "put_along_axis ndim",
        lambda m: m.put_along_axis(
            m.arange(6), m.asarray([[0], [2]]), 7, axis=None, inplace=False
        ),
    ),  # fmt: skip
    (
        "put_along_axis inplace",
        lambda m: m.put_along_axis(m.arange(6), m.asarray([0]), 7, axis=0),
    ),  # fmt: skip
    (
        "put_along_axis broadcast",
        lambda m: m.put_along_axis(
            m.zeros((2, 3, 4)), m.asarray([[[1]], [[2]]]), 7.0, axis=2, inplace=False
        ),
    ),  # fmt: skip
    (
        "place",
        lambda m: m.place(
            m.asarray(A), m.asarray(A) > 2, m.asarray([10, 20]), inplace=False
        ),
    ),  # fmt: skip
    (
        "place traced",
        lambda m: _jit_call(
            m,
            lambda k: m.place(m.arange(6), k, m.asarray([1, 2]), inplace=False),
            m.arange(6) > 2,
        ),
    ),  # fmt: skip
    ("place inplace", lambda m: m.place(m.arange(3), m.arange(3) > 0, m.asarray([1]))),
    (
        "extract",
        lambda m: [
            m.extract(m.asarray(A) > 2, m.asarray(A)),
            m.extract(m.asarray(A) > 2, m.asarray(A), size=5, fill_value=-1),
            m.extract(m.asarray([1, 0, 1]), m.asarray(A)),
        ],
    ),  # fmt: skip
    (
        "delete",
        lambda m: [
            m.delete(m.arange(6), 2),
            m.delete(m.asarray(A), m.asarray([0]), axis=1),
            m.delete(m.asarray(A), slice(0, 2), axis=1),
            m.delete(m.asarray(A), m.asarray([0, 0, -1])),
            m.delete(m.arange(6), m.asarray([True, False] * 3)),
            m.delete(m.arange(5), m.asarray([[1]])),
            m.delete(m.arange(5), -1),
        ],
    ),  # fmt: skip
    ("delete oob", lambda m: m.delete(m.arange(5), m.asarray([7]))),
    ("delete bad bool", lambda m: m.delete(m.arange(5), m.asarray([True, False]))),
    ("delete float", lambda m: m.delete(m.arange(5), m.asarray([1.0]))),
    ("delete list", lambda m: m.delete(m.arange(5), [1])),
    (
        "delete traced",
        lambda m: _jit_call(m, lambda i: m.delete(m.arange(5), i), m.asarray([1, 2])),
    ),  # fmt: skip
    (
        "delete traced unique",
        lambda m: _jit_call(
            m,
            lambda i: m.delete(m.arange(5), i, assume_unique_indices=True),
            m.asarray([1, -1]),
        ),
    ),  # fmt: skip
    (
        "insert",
        lambda m: [
            m.insert(m.asarray(A), 1, m.asarray([7, 8]), axis=1),
            m.insert(m.arange(4), m.asarray([1, 1, 3]), m.asarray([7, 8, 9])),
            m.insert(m.arange(4), slice(0, 2), 5.5),
            m.insert(m.arange(5), m.asarray([-2, 5]), 9),
            m.insert(m.arange(5), 8, 9),
            m.insert(m.asarray(A), 1, m.asarray([[7, 8, 9], [1, 2, 3]]), axis=0),
        ],
    ),  # fmt: skip
    ("insert 2d obj", lambda m: m.insert(m.arange(5), m.asarray([[1]]), 9)),
    ("insert bool obj", lambda m: m.insert(m.arange(5), m.asarray([True, False]), 9)),
    (
        "insert traced",
        lambda m: [
            _jit_call(m, lambda i: m.insert(m.arange(5), i, 9), 3),
            _jit_call(
                m,
                lambda i: m.insert(m.arange(5), i, m.asarray([9, 8])),
                m.asarray([3, 0]),
            ),
        ],
    ),  # fmt: skip
    (
        "resize",
        lambda m: [
            m.resize(m.arange(3), (2, 4)),
            m.resize(m.arange(3), 0),
            m.resize(m.asarray([]), 3),
        ],
    ),  # fmt: skip
    ("resize negative", lambda m: m.resize(m.arange(6), (2, -1))),
    ("resize float", lambda m: m.resize(m.arange(6), 4.0)),
    (
        "block",
        lambda m: [
            m.block([[m.ones((2, 2)), m.zeros((2, 1))], [m.zeros((1, 3))]]),
            m.block([1, 2, m.asarray([3, 4])]),
            m.block(m.asarray([1, 2])),
            m.block(3),
            m.block([[m.ones((2, 2))], [m.zeros(2)]]),
            m.block([[[m.ones((1, 1, 2))]], [[m.zeros((1, 1, 2))]]]),
        ],
    ),  # fmt: skip
    ("block depths", lambda m: m.block([[1, 2], 3])),
    ("block empty", lambda m: m.block([])),
    ("block tuple", lambda m: m.block((1, 2))),
]


def test_array_editing_matches_jax(rjax):
    assert_cases_match_jax(rjax, EDIT_CASES)


def test_array_editing_matches_numpy():
    x = np.arange(24).reshape(4, 6)
    for obj, axis in [(1, 0), ([0, 3], 1), (slice(1, 5, 2), 1), (-1, None)]:
        np.testing.assert_array_equal(
            np.asarray(jnp.delete(jnp.asarray(x), jnp.asarray(obj)
                                  if not isinstance(obj, slice) else obj, axis=axis)),
            np.delete(x, obj, axis=axis),
        )  # fmt: skip
    for obj, values, axis in [(2, [-1], 1), ([0, 2, 2], [-1, -2, -3], 1),
                              (4, [[-1] * 6], 0), (slice(0, 3), -7, None)]:  # fmt: skip
        ours = jnp.insert(
            jnp.asarray(x),
            obj if isinstance(obj, slice) else jnp.asarray(obj),
            jnp.asarray(values),
            axis=axis,
        )
        np.testing.assert_array_equal(np.asarray(ours), np.insert(x, obj, values, axis))
    np.testing.assert_array_equal(np.asarray(jnp.resize(jnp.arange(5), (3, 4))),
                                  np.resize(np.arange(5), (3, 4)))  # fmt: skip
    blocks = [[np.ones((2, 2)), np.zeros((2, 3))], [np.full((1, 5), 7.0)]]
    np.testing.assert_array_equal(
        np.asarray(jnp.block([[jnp.asarray(b) for b in row] for row in blocks])),
        np.block(blocks).astype(np.float32),
    )
    expected = x.copy()
    np.place(expected, expected % 5 == 0, [100, 200])
    ours = jnp.place(jnp.asarray(x), jnp.asarray(x % 5 == 0), jnp.asarray([100, 200]),
                     inplace=False)  # fmt: skip
    np.testing.assert_array_equal(np.asarray(ours), expected)
    ids = np.array([[1, 0], [5, 2], [3, 3], [0, 4]])
    expected = x.copy()
    np.put_along_axis(expected, ids, -1, axis=1)
    np.testing.assert_array_equal(
        np.asarray(jnp.put_along_axis(jnp.asarray(x), jnp.asarray(ids), -1, axis=1,
                                      inplace=False)), expected)  # fmt: skip


def test_array_editing_grads_and_vmap():
    x = jnp.asarray(AF)
    check_grads(lambda x: jnp.insert(x, 1, 9.0, axis=1), (x,), order=1)
    check_grads(lambda x: jnp.delete(x, 1, axis=1), (x,), order=1)
    check_grads(lambda v: jnp.put(x, jnp.asarray([0, 4]), v, inplace=False),
                (jnp.asarray([1.0, 2.0]),), order=1)  # fmt: skip
    check_grads(lambda x: jnp.block([[x, x], [x, x]]), (x,), order=1)
    f = jaxlite.vmap(lambda r, i: jnp.insert(r, i, -1.0))
    out = f(x, jnp.asarray([0, 2]))
    check_close(out, np.stack([np.insert(AF[0], 0, -1), np.insert(AF[1], 2, -1)]))


# ----------------------------------------------------------------------------------
# Bit packing and host I/O

U8 = np.array([[2, 255], [7, 128]], np.uint8)
BITS = np.array([[1, 0, 1], [0, 1, 1]], bool)

BITS_IO_CASES = [
    (
        "packbits",
        lambda m: [
            m.packbits(m.asarray(BITS)),
            m.packbits(m.asarray(BITS), axis=1),
            m.packbits(m.asarray(BITS), axis=0, bitorder="little"),
            m.packbits(m.asarray([2, 0, -1, 1, 1, 1, 1, 1, 1, 0])),
        ],
    ),  # fmt: skip
    ("packbits float", lambda m: m.packbits(m.asarray([1.0]))),
    ("packbits order", lambda m: m.packbits(m.asarray(BITS), bitorder="middle")),
    (
        "unpackbits",
        lambda m: [
            m.unpackbits(m.asarray(U8)),
            m.unpackbits(m.asarray(U8), axis=1, count=3),
            m.unpackbits(m.asarray(U8), axis=0, count=-2, bitorder="little"),
            m.unpackbits(m.asarray(U8), count=40),
        ],
    ),  # fmt: skip
    ("unpackbits int", lambda m: m.unpackbits(m.asarray([1]))),
    (
        "fromfunction",
        lambda m: [
            m.fromfunction(lambda i, j: i + j, (2, 3)),
            m.fromfunction(lambda i, j, k: i * 100 + j * 10 + k, (2, 3, 4), dtype=int),
            m.fromfunction(lambda i, j, c: i * c + j, (2, 3), c=10.0),
        ],
    ),  # fmt: skip
    (
        "frombuffer",
        lambda m: [
            m.frombuffer(b"\x01\x02\x03\x04", dtype=m.uint8),
            m.frombuffer(np.arange(3.0).tobytes()),
        ],
    ),  # fmt: skip
    ("fromstring", lambda m: m.fromstring("1 2 3", sep=" ", dtype=int)),
    ("fromiter", lambda m: m.fromiter(iter([1]), float)),
    ("fromfile", lambda m: m.fromfile("x")),
    ("from_dlpack", lambda m: m.from_dlpack(np.arange(3.0))),
    (
        "print options",
        lambda m: [m.get_printoptions()["precision"], m.array_str(m.arange(3.0))],
    ),  # fmt: skip
]


def test_bits_and_io_match_jax(rjax):
    assert_cases_match_jax(rjax, BITS_IO_CASES)


def test_bits_match_numpy_and_trace():
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2, (3, 13)).astype(bool)
    for axis in (None, 0, 1):
        for order in ("big", "little"):
            packed = np.packbits(bits, axis=axis, bitorder=order)
            ours = jnp.packbits(jnp.asarray(bits), axis=axis, bitorder=order)
            np.testing.assert_array_equal(np.asarray(ours), packed)
            back = jnp.unpackbits(ours, axis=axis, bitorder=order, count=None)
            np.testing.assert_array_equal(
                np.asarray(back), np.unpackbits(packed, axis=axis, bitorder=order)
            )
    f = jaxlite.jit(lambda b: jnp.unpackbits(jnp.packbits(b, axis=1), axis=1, count=13))
    np.testing.assert_array_equal(
        np.asarray(f(jnp.asarray(bits))), bits.astype(np.uint8)
    )


def test_host_io_round_trips():
    x = jnp.asarray(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    buf = io.BytesIO()
    jnp.save(buf, x)
    buf.seek(0)
    y = jnp.load(buf)
    assert isinstance(y, jaxlite.Array)
    check_close(y, x)
    buf = io.BytesIO()
    jnp.save(buf, jnp.asarray([1.5, 2.0], jnp.bfloat16))
    buf.seek(0)
    assert jnp.load(buf).dtype == jnp.bfloat16
    buf = io.BytesIO()
    jnp.savez(buf, a=x)
    buf.seek(0)
    np.testing.assert_array_equal(jnp.load(buf)["a"], np.asarray(x))
    assert jnp.array_repr(x) == repr(x)
    assert jnp.array_str(x) == np.array_str(np.asarray(x))
    with jnp.printoptions(precision=2):
        assert "0.33" in jnp.array_str(jnp.asarray([1 / 3]))
    src = np.arange(4.0)
    z = jnp.from_dlpack(src)
    src[0] = 99.0  # the Array holds a copy
    assert float(z[0]) == 0.0
    with pytest.raises(TypeError, match="__dlpack__"):
        jnp.from_dlpack([1, 2])
    with pytest.raises(NotImplementedError, match="non-pure"):
        jnp.fromiter(iter([1, 2]), float)
