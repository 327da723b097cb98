"""`jax.experimental.multihost_utils`: coordination between the processes of a
multi-process program. jaxlite runs in one process, so each call answers as JAX
does with a single process: barriers return at once, a broadcast or an all-gather
sees only this process's values (as NumPy arrays, as JAX returns them).
"""

from __future__ import annotations

import numpy as np

from jaxlite import tree_util


def sync_global_devices(name):
    """A barrier across all processes (only this one): returns at once."""
    del name


def broadcast_one_to_all(in_tree, is_source=None):
    """The source process's values for every process: this process's, as NumPy."""
    return tree_util.tree_map(np.asarray, in_tree)


def process_allgather(in_tree, tiled=False):
    """Every process's values, stacked on a new leading axis (of size 1 here), or
    concatenated along the first axis when `tiled` (unchanged here), as NumPy."""
    if tiled:
        return tree_util.tree_map(np.asarray, in_tree)
    return tree_util.tree_map(lambda x: np.expand_dims(np.asarray(x), 0), in_tree)


def assert_equal(in_tree, fail_message=""):
    """Checks that every process holds the same values: true with one process."""
    del in_tree, fail_message


def reached_preemption_sync_point(step_id):
    """Whether the processes agreed to stop for preemption at `step_id` (never)."""
    return False


__all__ = [
    "assert_equal",
    "broadcast_one_to_all",
    "process_allgather",
    "reached_preemption_sync_point",
    "sync_global_devices",
]
