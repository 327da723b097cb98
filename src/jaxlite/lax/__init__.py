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
from jaxlite.lax.special import *  # noqa: F403
from jaxlite.lax.reductions import *  # noqa: F403
from jaxlite.lax.structural import *  # noqa: F403
from jaxlite.lax.indexing import *  # noqa: F403
from jaxlite.lax.scatter import *  # noqa: F403
from jaxlite.lax.dot import *  # noqa: F403
from jaxlite.lax.sorting import *  # noqa: F403
from jaxlite.lax.convolution import *  # noqa: F403
from jaxlite.lax.windowed import *  # noqa: F403
from jaxlite.lax.parallel_prefix import associative_scan  # noqa: F401
from jaxlite.lax.linear_solve import *  # noqa: F403
from jaxlite.lax.bits import *  # noqa: F403
from jaxlite.lax.compiler_hints import *  # noqa: F403
from jaxlite.lax.selection import *  # noqa: F403
from jaxlite.lax.from_types import *  # noqa: F403
from jaxlite.lax.parallel import *  # noqa: F403
from jaxlite.lax.structural import (  # noqa: F401  (JAX exports these primitives)
    broadcast_in_dim_p,
    concatenate_p,
    copy_p,
    iota_p,
    pad_p,
    reshape_p,
    rev_p,
    split_p,
    squeeze_p,
    stack_p,
    tile_p,
    transpose_p,
)
from jaxlite.lax.conditionals import cond_p  # noqa: F401
from jaxlite.lax.loops import scan_p, while_p  # noqa: F401
from jaxlite.lax.fft import FftType, fft, fft_p  # noqa: F401
from jaxlite.lax.control_flow import cond, fori_loop, map, scan, switch, while_loop  # noqa: F401
from jaxlite.lax.constructors import full, full_like, zeros_like_array  # noqa: F401
from jaxlite.lax.custom_derivatives import custom_jvp, custom_vjp  # noqa: F401
from jaxlite.lax import linalg  # noqa: F401
from jaxlite.lax.rng import *  # noqa: F403
from jaxlite.lax.ragged import *  # noqa: F403
from jaxlite.lax.platform import *  # noqa: F403
from jaxlite.lax.tokens import *  # noqa: F403
from jaxlite.lax.tokens import after_all_p, create_token_p  # noqa: F401
