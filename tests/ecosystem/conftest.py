"""The `run_programs` fixture: run a program on jaxlite and on JAX (harness.run_both),
with JAX's results cached by pytest's cache (keyed by the program and every version
involved) unless the cache provider is off (`-p no:cacheprovider`, as in .ci/run) or
JAXLITE_ECOSYSTEM_FRESH=1 asks for a fresh reference run."""

import os

import pytest

from .harness import run_both


@pytest.fixture
def run_programs(request, tmp_path):
    cache = getattr(request.config, "cache", None)
    if os.environ.get("JAXLITE_ECOSYSTEM_FRESH", "0") not in ("", "0"):
        cache = None

    def run(source):
        return run_both(source, tmp_path, cache=cache)

    return run
