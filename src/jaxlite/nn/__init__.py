"""jaxlite.nn: the `jax.nn` API: activation functions, `softmax` and friends,
`one_hot`, `dot_product_attention`, and the parameter initializers in
`jaxlite.nn.initializers`."""

from jaxlite.nn import initializers  # noqa: F401
from jaxlite.nn.functions import *  # noqa: F403
