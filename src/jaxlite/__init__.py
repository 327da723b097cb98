"""jaxlite: JAX's programming model on NumPy.

Trace numerical Python functions to jaxprs and transform them (jit, grad, vmap, ...), with host
callbacks as nearly free operations. `import jaxlite as jax` runs JAX code unchanged.
"""

from jaxlite import config as _config_module
from jaxlite.config import config, disable_jit, enable_x64
from jaxlite.config import (
    allow_f16_reductions,
    check_tracer_leaks,
    debug_key_reuse,
    default_prng_impl,
    enable_checks,
    enable_custom_prng,
    explain_cache_misses,
    legacy_prng_key,
    no_execution,
    no_tracing,
    softmax_custom_jvp,
    threefry_partitionable,
)

# `jaxlite.debug_nans` / `debug_infs` are the context managers, as in JAX; importing
# them from the module of the same name first keeps a later import of that module
# from rebinding the names (reach the module with importlib, as for `config`).
from jaxlite.debug_nans import debug_infs, debug_nans
from jaxlite.core import Array
from jaxlite.api import (
    ShapeDtypeStruct,
    block_until_ready,
    checking_leaks,
    default_device,
    default_matmul_precision,
    device_get,
    device_put,
    ensure_compile_time_eval,
    eval_shape,
    jit,
    log_compiles,
    make_jaxpr,
    named_call,
    named_scope,
    numpy_dtype_promotion,
    numpy_rank_promotion,
    pmap,
    transfer_guard,
    transfer_guard_device_to_device,
    transfer_guard_device_to_host,
    transfer_guard_host_to_device,
    typeof,
)
from jaxlite.runtime import (
    Device,
    clear_caches,
    default_backend,
    device_count,
    devices,
    host_count,
    host_id,
    host_ids,
    live_arrays,
    local_device_count,
    local_devices,
    make_array_from_callback,
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
    print_environment_info,
    process_count,
    process_index,
    process_indices,
)
from jaxlite.sharding import NamedSharding, make_mesh, reshard, set_mesh
from jaxlite.sharding import PartitionSpec as P
from jaxlite.shard_map import shard_map, smap
from jaxlite.api_autodiff import (
    grad,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linear_transpose,
    linearize,
    value_and_grad,
    vjp,
)
from jaxlite.api_vmap import vmap
from jaxlite.ad_checkpoint import checkpoint, checkpoint_policies, remat
from jaxlite.custom_derivatives import (
    closure_convert,
    custom_gradient,
    custom_jvp,
    custom_vjp,
)
from jaxlite import ad_checkpoint, dtypes, errors, lax, numpy, tree, tree_util
from jaxlite.lax.callbacks import effects_barrier, pure_callback
from jaxlite import debug, experimental
from jaxlite import random
from jaxlite import nn, scipy
from jaxlite import custom_batching, custom_derivatives, distributed, sharding, version

# As JAX: `jax.interpreters.mlir` (register_lowering) is there after `import jax`.
from jaxlite.interpreters import mlir as _mlir
from jaxlite import dlpack
from jaxlite import image, monitoring, profiler, stages, typing
from jaxlite import ref
from jaxlite.ref import Ref, empty_ref, free_ref, freeze, new_ref
from jaxlite.dtypes import float0
from jaxlite.version import __version__, __version_info__
from jaxlite.jax_alias import install_as_jax

jacobian = jacrev

__all__ = [
    "allow_f16_reductions",
    "check_tracer_leaks",
    "debug_key_reuse",
    "default_prng_impl",
    "dlpack",
    "enable_checks",
    "enable_custom_prng",
    "explain_cache_misses",
    "legacy_prng_key",
    "no_execution",
    "no_tracing",
    "softmax_custom_jvp",
    "threefry_partitionable",
    "Device",
    "NamedSharding",
    "P",
    "checking_leaks",
    "checkpoint_policies",
    "clear_caches",
    "closure_convert",
    "custom_batching",
    "custom_derivatives",
    "custom_gradient",
    "default_device",
    "default_matmul_precision",
    "distributed",
    "ensure_compile_time_eval",
    "float0",
    "host_count",
    "host_id",
    "host_ids",
    "install_as_jax",
    "live_arrays",
    "log_compiles",
    "make_array_from_callback",
    "make_array_from_process_local_data",
    "make_array_from_single_device_arrays",
    "make_mesh",
    "reshard",
    "set_mesh",
    "named_call",
    "named_scope",
    "numpy_dtype_promotion",
    "numpy_rank_promotion",
    "pmap",
    "print_environment_info",
    "process_count",
    "process_index",
    "process_indices",
    "sharding",
    "shard_map",
    "smap",
    "transfer_guard",
    "transfer_guard_device_to_device",
    "transfer_guard_device_to_host",
    "transfer_guard_host_to_device",
    "typeof",
    "version",
    "debug",
    "effects_barrier",
    "experimental",
    "pure_callback",
    "Array",
    "checkpoint",
    "remat",
    "custom_jvp",
    "custom_vjp",
    "debug_infs",
    "debug_nans",
    "grad",
    "hessian",
    "jacfwd",
    "jacobian",
    "jacrev",
    "jvp",
    "linear_transpose",
    "linearize",
    "value_and_grad",
    "vjp",
    "vmap",
    "tree",
    "ShapeDtypeStruct",
    "block_until_ready",
    "config",
    "default_backend",
    "device_count",
    "device_get",
    "device_put",
    "devices",
    "disable_jit",
    "dtypes",
    "enable_x64",
    "errors",
    "eval_shape",
    "jit",
    "lax",
    "nn",
    "scipy",
    "local_device_count",
    "local_devices",
    "make_jaxpr",
    "numpy",
    "random",
    "tree_util",
    "Ref",
    "empty_ref",
    "free_ref",
    "freeze",
    "new_ref",
    "ref",
]

del _config_module
