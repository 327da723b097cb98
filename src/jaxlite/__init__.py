"""jaxlite: JAX's programming model on NumPy.

Trace numerical Python functions to jaxprs and transform them (jit, grad, vmap, ...), with host
callbacks as nearly free operations. `import jaxlite as jax` runs JAX code unchanged.
"""

from jaxlite import config as _config_module
from jaxlite.config import config, disable_jit, enable_x64

# `jaxlite.debug_nans` / `debug_infs` are the context managers, as in JAX; importing
# them from the module of the same name first keeps a later import of that module
# from rebinding the names (reach the module with importlib, as for `config`).
from jaxlite.debug_nans import debug_infs, debug_nans
from jaxlite.core import Array
from jaxlite.api import (
    ShapeDtypeStruct,
    block_until_ready,
    default_backend,
    device_count,
    device_get,
    device_put,
    devices,
    eval_shape,
    jit,
    local_device_count,
    local_devices,
    make_jaxpr,
)
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
from jaxlite.ad_checkpoint import checkpoint, remat
from jaxlite.lax.custom_derivatives import custom_jvp, custom_vjp
from jaxlite import ad_checkpoint, dtypes, errors, lax, numpy, tree, tree_util
from jaxlite.lax.callbacks import effects_barrier, pure_callback
from jaxlite import debug, experimental
from jaxlite import random
from jaxlite import nn, scipy

jacobian = jacrev

__version__ = "0.1.0"

__all__ = [
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
]

del _config_module
