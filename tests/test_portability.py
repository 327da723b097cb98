"""Behaviour that must not depend on the platform (see tools/portability.sh), checked
here by standing in for the platform's limits: NumPy's 2 GiB arrays on 32-bit
platforms, and namedtuple fields read through `__getitem__` (PyPy)."""

import math
import operator

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.errors import JaxRuntimeError
from jaxlite.lax import structural

# -------------------------------------------------------------------------------------
# A broadcast NumPy cannot index on this platform (32-bit: past 2 GiB) is XLA's
# RESOURCE_EXHAUSTED error, as laying it out is on a 64-bit one, not NumPy's ValueError.

HUGE_VIEWS = {
    "broadcast_to": (lambda: jnp.broadcast_to(jnp.ones(3), (10**9, 3)), (10**9, 3)),
    "zeros": (lambda: jnp.zeros((10**5, 10**5)), (10**5, 10**5)),
    "iota": (lambda: lax.broadcasted_iota(np.int32, (10**5, 10**5), 0), (10**5, 10**5)),
    "under jit": (
        lambda: jax.jit(lambda: jnp.ones((10**5, 10**5)).sum())(),
        (10**5, 10**5),
    ),
}


@pytest.fixture
def numpy_32_bit_limit(monkeypatch):
    monkeypatch.setattr(structural, "_MAX_NBYTES", 2**31 - 1)


@pytest.mark.numpy_backend
@pytest.mark.parametrize("name", list(HUGE_VIEWS))
def test_a_view_past_numpys_limit_is_resource_exhausted(name, numpy_32_bit_limit):
    make, shape = HUGE_VIEWS[name]
    with pytest.raises(JaxRuntimeError, match="RESOURCE_EXHAUSTED") as info:
        make()
    nbytes = 4 * math.prod(shape)
    assert f"{nbytes} bytes" in str(info.value)
    assert str(shape) in str(info.value)


@pytest.mark.numpy_backend
def test_a_view_within_numpys_limit_stays_a_view(numpy_32_bit_limit):
    # 400 MB if laid out, within 2 GiB: summed from a view inside jit.
    f = jax.jit(lambda: jnp.ones((10**4, 10**4)).sum())
    assert float(f()) == 1e8


# -------------------------------------------------------------------------------------
# Rotation is a NamedTuple with its own __getitem__ (indexing rotations, as in JAX);
# reading its field must not go through that __getitem__, as collections.namedtuple's
# fallback field accessor (`property(itemgetter(0))`, PyPy's) would.


def test_rotation_field_is_read_without_its_getitem():
    from jaxlite.scipy.spatial.transform import Rotation

    quat = jnp.array([[0.0, 0.0, 0.0, 1.0], [1.0, 0.0, 0.0, 0.0]])
    rot = Rotation(quat)
    assert Rotation.quat.fget(rot) is quat
    assert isinstance(operator.itemgetter(0)(rot), Rotation)  # its __getitem__
    assert rot[1].single and not rot.single
    np.testing.assert_allclose(rot.apply(jnp.array([0.0, 1.0, 0.0]))[1], [0, -1, 0])


# -------------------------------------------------------------------------------------
# JAX names a primitive's accepted dtype kinds in the order of a set of NumPy's classes,
# which follows their addresses in this NumPy build: so must jaxlite.

KIND_ERRORS = {
    "sin of int32": lambda lax, np_: lax.sin(np_.int32(1)),
    "neg of bool": lambda lax, np_: lax.neg(np_.bool_(True)),
    "floor of int32": lambda lax, np_: lax.floor(np_.int32(1)),
    "not of float32": lambda lax, np_: lax.bitwise_not(np_.float32(1)),
}


@pytest.mark.parametrize("name", list(KIND_ERRORS))
def test_accepted_dtype_kinds_are_named_in_jaxs_order(name):
    real_jax = pytest.importorskip("jax")
    call = KIND_ERRORS[name]
    with pytest.raises(TypeError) as theirs:
        call(real_jax.lax, real_jax.numpy)
    with pytest.raises(TypeError) as ours:
        call(lax, jnp)
    assert str(ours.value) == str(theirs.value)
