"""jaxlite.numpy: the jax.numpy API, written only in terms of jaxlite.lax.

Arrays are immutable (`x.at[idx].set(y)` instead of `x[idx] = y`), dtypes follow JAX's
promotion lattice with weak Python scalars and 32-bit defaults, out-of-bounds gathers clamp
and out-of-bounds scatters are dropped.
"""

from jaxlite.core import Array as ndarray  # noqa: F401
from jaxlite.dtypes import (  # noqa: F401
    finfo,
    iinfo,
    issubdtype,
    promote_types,
    result_type,
)
from jaxlite.numpy import fft, indexing, linalg  # noqa: F401
from jaxlite.numpy.creation import *  # noqa: F403
from jaxlite.numpy.indexing import *  # noqa: F403
from jaxlite.numpy.products import *  # noqa: F403
from jaxlite.numpy.reductions import *  # noqa: F403
from jaxlite.numpy.scalar_types import *  # noqa: F403
from jaxlite.numpy.shape import *  # noqa: F403
from jaxlite.numpy.sorting import *  # noqa: F403
from jaxlite.numpy.setops import *  # noqa: F403
from jaxlite.numpy.calculus import *  # noqa: F403
from jaxlite.numpy.statistics import *  # noqa: F403
from jaxlite.numpy.polynomial import *  # noqa: F403
from jaxlite.numpy.signal import *  # noqa: F403
from jaxlite.numpy.vectorize import *  # noqa: F403
from jaxlite.numpy.ufuncs import *  # noqa: F403
from jaxlite.numpy.ufunc_api import *  # noqa: F403
from jaxlite.numpy.number_parts import *  # noqa: F403
from jaxlite.numpy.logic import *  # noqa: F403
from jaxlite.numpy.index_tricks import *  # noqa: F403
from jaxlite.numpy.array_editing import *  # noqa: F403
from jaxlite.numpy.bit_packing import *  # noqa: F403
from jaxlite.numpy.host_io import *  # noqa: F403
from jaxlite.numpy.array_api_metadata import *  # noqa: F403
from jaxlite.numpy.array_methods import attach_methods as _attach_methods  # noqa: I001
import numpy as _np

dtype = _np.dtype
generic, number, inexact, floating = _np.generic, _np.number, _np.inexact, _np.floating
integer, signedinteger = _np.integer, _np.signedinteger
unsignedinteger, complexfloating = _np.unsignedinteger, _np.complexfloating
pi, e, inf, nan, euler_gamma = _np.pi, _np.e, _np.inf, _np.nan, _np.euler_gamma
newaxis = None


_attach_methods(__import__(__name__, fromlist=["*"]))
