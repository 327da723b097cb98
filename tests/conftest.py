"""Shared test set-up: every test starts from the same global state.

After each test the configuration is put back as it was (a test that turns x64 on and
forgets to turn it off must not change the dtypes of the tests after it), and the
current trace must be the eval trace again (a trace left current is a bug in the
library, reported as an error of the test that left it). After each test module the
compilation caches of both libraries are emptied: real JAX keeps every XLA executable
the differential tests compile, which grew the suite's memory to about 8 GB.

A test marked `numpy_backend` checks the NumPy backend itself (its generated source,
its buffer reuse, its zero-copy paths): it runs on that backend whatever
`JAXLITE_BACKEND` says, so the suite can run under `JAXLITE_BACKEND=native` as a
conformance test of the native backend.

`JAXLITE_TEST_WITHOUT_LLVMLITE=1` runs the suite as if llvmlite were not installed
(as on PyPy or 32-bit platforms): everything on the NumPy tier. It is set here, in
each test process (pytest-xdist's workers too), before jaxlite is imported.
"""

import gc
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))  # `from testing import check_grads`
if os.environ.get("JAXLITE_TEST_WITHOUT_LLVMLITE") == "1":
    sys.modules["llvmlite"] = None  # `import llvmlite` raises ImportError

from jaxlite import core  # noqa: E402
from jaxlite.config import config, override  # noqa: E402

_initial_config = config.values


@pytest.fixture(autouse=True)
def _restore_global_state():
    yield
    for name, value in _initial_config.items():
        if config.read(name) != value:
            config.update(name, value)
    if not core.find_cur_trace_is_eval():
        leaked = core.current_trace()
        core._state.trace = core.eval_trace
        pytest.fail(f"the test left {leaked!r} as the current trace")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "numpy_backend: the test checks the NumPy backend itself"
    )


@pytest.fixture(autouse=True)
def _numpy_backend_when_marked(request):
    if request.node.get_closest_marker("numpy_backend") is None:
        yield
        return
    with override("jaxlite_backend", "numpy"):
        yield


@pytest.fixture(autouse=True, scope="module")
def _clear_compilation_caches():
    yield
    jax = sys.modules.get("jax")
    if jax is not None:
        jax.clear_caches()
    sys.modules["jaxlite"].clear_caches()
    gc.collect()
