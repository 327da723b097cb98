"""The External callbacks tutorial (seed 001, and 000 in Chinese) and the
`pure_callback` API page (seed 003) as tour data.

Each example is a tuple in the field order of `jaxlite.tour.Example`: `(title, source,
expected, setup)`, with a dict of further fields last where an example needs them. `source` is the seed's code verbatim; `expected` is what the tour
prints for it, which is the seed's output with two differences of form: a warning is
written as the tour writes it (`DeprecationWarning: message`, at the moment it is
raised, so before a value printed afterwards) instead of the notebook's
`<cell>:line: ...` line and quoted source, and a tracer prints as in seed 000
(`...with<DynamicJaxprTrace>`). Where 000 and 001 print differently, the example names
the seed it matches. The examples of a page run in order in one namespace.
`setup` holds code the page ran without showing it: 003's doctests have `jax` and
`jnp` predefined.
"""

from __future__ import annotations

__all__ = [
    "EXTERNAL_CALLBACKS_TITLE",
    "EXTERNAL_CALLBACKS",
    "PURE_CALLBACK_API_TITLE",
    "PURE_CALLBACK_API",
]

EXTERNAL_CALLBACKS_TITLE = "001 · External callbacks"
PURE_CALLBACK_API_TITLE = "003 · jax.pure_callback (Examples)"

EXTERNAL_CALLBACKS = (
    (
        "Why callbacks? · print() under jit",
        """\
import jax

@jax.jit
def f(x):
    y = x + 1
    print("intermediate value: {}".format(y))
    return y * 2

result = f(2)
""",
        """\
intermediate value: Traced<ShapedArray(int32[], weak_type=True)>with<DynamicJaxprTrace>
""",
        "",
        {"seeds": "000", "note": "seed 001 adds `(level=1/0)` after DynamicJaxprTrace"},
    ),
    (
        "Why callbacks? · jax.debug.print under jit",
        """\
@jax.jit
def f(x):
    y = x + 1
    jax.debug.print("intermediate value: {}", y)
    return y * 2

result = f(2)
""",
        """\
intermediate value: 3
""",
    ),
    (
        "Exploring pure_callback · f_host / f with pure_callback",
        """\
import jax
import jax.numpy as jnp
import numpy as np

def f_host(x):
    # call a numpy (not jax.numpy) operation:
    return np.sin(x).astype(x.dtype)

def f(x):
    result_shape = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return jax.pure_callback(f_host, result_shape, x)

x = jnp.arange(5.0)
f(x)
""",
        """\
Array([ 0. , 0.841471 , 0.9092974, 0.14112 , -0.7568025], dtype=float32)
""",
    ),
    (
        "Exploring pure_callback · jit of f",
        """\
jax.jit(f)(x)
""",
        """\
Array([ 0. , 0.841471 , 0.9092974, 0.14112 , -0.7568025], dtype=float32)
""",
    ),
    (
        "Exploring pure_callback · vmap of f (no vmap_method)",
        """\
jax.vmap(f)(x)
""",
        """\
DeprecationWarning: The default behavior of pure_callback under vmap will soon change. Currently, the default behavior is to generate a sequential vmap (i.e. a loop), but in the future the default will be to raise an error. To keep the current default, set vmap_method='sequential'.
Array([ 0. , 0.841471 , 0.9092974, 0.14112 , -0.7568025], dtype=float32)
""",
    ),
    (
        "Exploring pure_callback · scan over f",
        """\
def body_fun(_, x):
    return _, f(x)

jax.lax.scan(body_fun, None, jnp.arange(5.0))[1]
""",
        """\
Array([ 0. , 0.841471 , 0.9092974, 0.14112 , -0.7568025], dtype=float32)
""",
    ),
    (
        "Exploring pure_callback · grad of f",
        """\
jax.grad(f)(x)
""",
        """\
ValueError: Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks while taking gradients.
""",
    ),
    (
        "Exploring pure_callback · f1/f2 elision — f1 (output used)",
        """\
def print_something():
    print('printing something')
    return np.int32(0)

@jax.jit
def f1():
    return jax.pure_callback(print_something, np.int32(0))

f1();
""",
        """\
printing something
""",
    ),
    (
        "Exploring pure_callback · f1/f2 elision — f2 (output unused)",
        """\
@jax.jit
def f2():
    jax.pure_callback(print_something, np.int32(0))
    return 1.0

f2();
""",
        "",
    ),
    (
        "Exploring io_callback · numpy_random_like with io_callback",
        '''\
from jax.experimental import io_callback
from functools import partial

global_rng = np.random.default_rng(0)

def host_side_random_like(x):
    """Generate a random array like x using the global_rng state"""
    # We have two side-effects here:
    # - printing the shape and dtype
    # - calling global_rng, thus updating its state
    print(f'generating {x.dtype}{list(x.shape)}')
    return global_rng.uniform(size=x.shape).astype(x.dtype)

@jax.jit
def numpy_random_like(x):
    return io_callback(host_side_random_like, x, x)

x = jnp.zeros(5)
numpy_random_like(x)
''',
        """\
generating float32[5]
Array([0.6369617 , 0.26978672, 0.04097353, 0.01652764, 0.8132702 ], dtype=float32)
""",
    ),
    (
        "Exploring io_callback · vmap of io_callback",
        """\
jax.vmap(numpy_random_like)(x)
""",
        """\
generating float32[]
generating float32[]
generating float32[]
generating float32[]
generating float32[]
Array([0.91275555, 0.60663575, 0.72949654, 0.543625 , 0.9350724 ], dtype=float32)
""",
    ),
    (
        "Exploring io_callback · ordered=True under vmap",
        """\
@jax.jit
def numpy_random_like_ordered(x):
    return io_callback(host_side_random_like, x, x, ordered=True)

jax.vmap(numpy_random_like_ordered)(x)
""",
        """\
ValueError: Cannot `vmap` ordered IO callback.
""",
    ),
    (
        "Exploring io_callback · scan over ordered io_callback",
        """\
def body_fun(_, x):
    return _, numpy_random_like_ordered(x)

jax.lax.scan(body_fun, None, jnp.arange(5.0))[1]
""",
        """\
generating float32[]
generating float32[]
generating float32[]
generating float32[]
generating float32[]
Array([0.81585354, 0.0027385 , 0.8574043 , 0.03358557, 0.72965544], dtype=float32)
""",
    ),
    (
        "Exploring io_callback · grad of io_callback",
        """\
jax.grad(numpy_random_like)(x)
""",
        """\
ValueError: IO callbacks do not support JVP.
""",
    ),
    (
        "Exploring io_callback · grad with an unused io_callback",
        """\
@jax.jit
def f(x):
    io_callback(lambda: print('hello'), None)
    return x

jax.grad(f)(1.0);
""",
        """\
hello
""",
    ),
    (
        "Exploring debug.callback · debug.callback under jit",
        """\
from jax import debug

def log_value(x):
    # This could be an actual logging call; we'll use
    # print() for demonstration
    print("log:", x)

@jax.jit
def f(x):
    debug.callback(log_value, x)
    return x

f(1.0);
""",
        """\
log: 1.0
""",
    ),
    (
        "Exploring debug.callback · debug.callback under vmap",
        """\
x = jnp.arange(5.0)
jax.vmap(f)(x);
""",
        """\
log: 0.0
log: 1.0
log: 2.0
log: 3.0
log: 4.0
""",
    ),
    (
        "Exploring debug.callback · debug.callback under grad",
        """\
jax.grad(f)(1.0);
""",
        """\
log: 1.0
""",
    ),
    (
        "Example: pure_callback with custom_jvp · jv wrapper around scipy.special.jv",
        """\
import jax
import jax.numpy as jnp
import scipy.special

def jv(v, z):
    v, z = jnp.asarray(v), jnp.asarray(z)

    # Require the order v to be integer type: this simplifies
    # the JVP rule below.
    assert jnp.issubdtype(v.dtype, jnp.integer)

    # Promote the input to inexact (float/complex).
    # Note that jnp.result_type() accounts for the enable_x64 flag.
    z = z.astype(jnp.result_type(float, z.dtype))

    # Wrap scipy function to return the expected dtype.
    _scipy_jv = lambda v, z: scipy.special.jv(v, z).astype(z.dtype)

    # Define the expected shape & dtype of output.
    result_shape_dtype = jax.ShapeDtypeStruct(
        shape=jnp.broadcast_shapes(v.shape, z.shape),
        dtype=z.dtype)

    # You use vectorize=True because scipy.special.jv handles broadcasted inputs.
    return jax.pure_callback(_scipy_jv, result_shape_dtype, v, z, vectorized=True)
""",
        "",
    ),
    (
        "Example: pure_callback with custom_jvp · j1 = partial(jv, 1)",
        """\
from functools import partial

j1 = partial(jv, 1)
z = jnp.arange(5.0)
print(j1(z))
""",
        """\
DeprecationWarning: The vectorized argument of jax.pure_callback is deprecated and setting it will soon raise an error. To avoid an error in the future, and to suppress this warning, please use the vmap_method argument instead.
[ 0. 0.44005057 0.5767248 0.33905897 -0.06604332]
""",
    ),
    (
        "Example: pure_callback with custom_jvp · jit of j1",
        """\
print(jax.jit(j1)(z))
""",
        """\
DeprecationWarning: The vectorized argument of jax.pure_callback is deprecated and setting it will soon raise an error. To avoid an error in the future, and to suppress this warning, please use the vmap_method argument instead.
[ 0. 0.44005057 0.5767248 0.33905897 -0.06604332]
""",
    ),
    (
        "Example: pure_callback with custom_jvp · vmap of j1",
        """\
print(jax.vmap(j1)(z))
""",
        """\
DeprecationWarning: The vectorized argument of jax.pure_callback is deprecated and setting it will soon raise an error. To avoid an error in the future, and to suppress this warning, please use the vmap_method argument instead.
[ 0. 0.44005057 0.5767248 0.33905897 -0.06604332]
""",
    ),
    (
        "Example: pure_callback with custom_jvp · grad of j1 without a JVP rule",
        """\
jax.grad(j1)(z)
""",
        """\
DeprecationWarning: The vectorized argument of jax.pure_callback is deprecated and setting it will soon raise an error. To avoid an error in the future, and to suppress this warning, please use the vmap_method argument instead.
ValueError: Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks while taking gradients.
""",
    ),
    (
        "Example: pure_callback with custom_jvp · custom_jvp rule for jv",
        """\
jv = jax.custom_jvp(jv)

@jv.defjvp
def _jv_jvp(primals, tangents):
    v, z = primals
    _, z_dot = tangents  # Note: v_dot is always 0 because v is integer.
    jv_minus_1, jv_plus_1 = jv(v - 1, z), jv(v + 1, z)
    djv_dz = jnp.where(v == 0, -jv_plus_1, 0.5 * (jv_minus_1 - jv_plus_1))
    return jv(v, z), z_dot * djv_dz
""",
        "",
    ),
    (
        "Example: pure_callback with custom_jvp · grad of j1 with the custom JVP",
        """\
j1 = partial(jv, 1)
print(jax.grad(j1)(2.0))
""",
        """\
DeprecationWarning: The vectorized argument of jax.pure_callback is deprecated and setting it will soon raise an error. To avoid an error in the future, and to suppress this warning, please use the vmap_method argument instead.
DeprecationWarning: The vectorized argument of jax.pure_callback is deprecated and setting it will soon raise an error. To avoid an error in the future, and to suppress this warning, please use the vmap_method argument instead.
DeprecationWarning: The vectorized argument of jax.pure_callback is deprecated and setting it will soon raise an error. To avoid an error in the future, and to suppress this warning, please use the vmap_method argument instead.
-0.06447162
""",
        "",
        {"seeds": "001", "note": "seed 000 shows the warning once"},
    ),
    (
        "Example: pure_callback with custom_jvp · hessian of j1",
        """\
jax.hessian(j1)(2.0)
""",
        """\
DeprecationWarning: The vectorized argument of jax.pure_callback is deprecated and setting it will soon raise an error. To avoid an error in the future, and to suppress this warning, please use the vmap_method argument instead.
DeprecationWarning: The vectorized argument of jax.pure_callback is deprecated and setting it will soon raise an error. To avoid an error in the future, and to suppress this warning, please use the vmap_method argument instead.
DeprecationWarning: The vectorized argument of jax.pure_callback is deprecated and setting it will soon raise an error. To avoid an error in the future, and to suppress this warning, please use the vmap_method argument instead.
DeprecationWarning: The vectorized argument of jax.pure_callback is deprecated and setting it will soon raise an error. To avoid an error in the future, and to suppress this warning, please use the vmap_method argument instead.
DeprecationWarning: The vectorized argument of jax.pure_callback is deprecated and setting it will soon raise an error. To avoid an error in the future, and to suppress this warning, please use the vmap_method argument instead.
DeprecationWarning: The vectorized argument of jax.pure_callback is deprecated and setting it will soon raise an error. To avoid an error in the future, and to suppress this warning, please use the vmap_method argument instead.
DeprecationWarning: The vectorized argument of jax.pure_callback is deprecated and setting it will soon raise an error. To avoid an error in the future, and to suppress this warning, please use the vmap_method argument instead.
DeprecationWarning: The vectorized argument of jax.pure_callback is deprecated and setting it will soon raise an error. To avoid an error in the future, and to suppress this warning, please use the vmap_method argument instead.
DeprecationWarning: The vectorized argument of jax.pure_callback is deprecated and setting it will soon raise an error. To avoid an error in the future, and to suppress this warning, please use the vmap_method argument instead.
Array(-0.4003078, dtype=float32, weak_type=True)
""",
        "",
        {"seeds": "001", "note": "seed 000 shows the warning once"},
    ),
)

PURE_CALLBACK_API = (
    (
        "Examples · callback",
        """\

def callback(x, y):
    print(jnp.shape(x), jnp.shape(y))
    return x + y
""",
        "",
        """\
import jax
import jax.numpy as jnp
""",
    ),
    (
        "Examples · fun with vmap_method",
        """\
def fun(x, y, *, vmap_method):
    shape = jnp.broadcast_shapes(jnp.shape(x), jnp.shape(y))
    dtype = jnp.result_type(x, y)
    out_type = jax.ShapeDtypeStruct(shape, dtype)
    return jax.pure_callback(callback, out_type, x, y,
                             vmap_method=vmap_method)
""",
        "",
    ),
    (
        'Examples · vmap_method="expand_dims"',
        """\
from functools import partial

x = jnp.arange(4)
y = 1.0
jax.vmap(partial(fun, vmap_method="expand_dims"), in_axes=(0, None))(x, y)
""",
        """\
(4,) (1,)
Array([1., 2., 3., 4.], dtype=float32)
""",
    ),
    (
        'Examples · vmap_method="broadcast_all"',
        """\
jax.vmap(partial(fun, vmap_method="broadcast_all"),
         in_axes=(0, None))(x, y)
""",
        """\
(4,) (4,)
Array([1., 2., 3., 4.], dtype=float32)
""",
    ),
)
