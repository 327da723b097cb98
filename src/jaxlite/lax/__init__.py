"""jaxlite.lax: JAX's primitive operations, with JAX's names, so that jaxprs read alike."""

from jaxlite.lax.elementwise import *  # noqa: F403
from jaxlite.lax.elementwise import (  # noqa: F401
    RoundingMethod,
    abs,
    convert_element_type,
    max,
    min,
    round,
)
from jaxlite.lax.reductions import *  # noqa: F403
from jaxlite.lax.structural import *  # noqa: F403
from jaxlite.lax.indexing import *  # noqa: F403
from jaxlite.lax.scatter import *  # noqa: F403
from jaxlite.lax.dot import *  # noqa: F403
from jaxlite.lax.sorting import *  # noqa: F403
from jaxlite.lax.control_flow import cond, fori_loop, map, scan, switch, while_loop  # noqa: F401
from jaxlite.lax.constructors import full, full_like, zeros_like_array  # noqa: F401
from jaxlite.lax.custom_derivatives import custom_jvp, custom_vjp  # noqa: F401
from jaxlite.lax import linalg  # noqa: F401
