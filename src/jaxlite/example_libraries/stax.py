"""Stax: neural-network layers as pairs of pure functions.

A layer is `(init_fun, apply_fun)`. `init_fun(rng, input_shape)` returns
`(output_shape, params)`; shapes are tuples and may hold -1 for a batch size not
known yet. `apply_fun(params, inputs, **kwargs)` runs the layer; the only keyword
the layers use is `rng`, a PRNG key for `Dropout`. Combinators (`serial`,
`parallel`, `FanOut`, `FanInSum`, `FanInConcat`, `shape_dependent`) build layers
from layers, so a whole network is again a pair of functions whose params are a
pytree -- ready for `grad`, `jit` and the `optimizers` module.
"""

from __future__ import annotations

import functools
import operator

from jaxlite import lax, random
from jaxlite import numpy as jnp
from jaxlite.nn import (
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    selu,
    sigmoid,
    softmax,
    softplus,
    standardize,
)
from jaxlite.nn.initializers import glorot_normal, normal, ones, zeros

logsoftmax = log_softmax
glorot = glorot_normal
randn = normal

# Default initializers (built once, shared by every layer that uses them).
_GLOROT_NORMAL = glorot_normal()
_NORMAL = normal()
_NORMAL_1E_6 = normal(1e-6)

__all__ = [
    "AvgPool",
    "BatchNorm",
    "Conv",
    "Conv1DTranspose",
    "ConvTranspose",
    "Dense",
    "Dropout",
    "Elu",
    "Exp",
    "FanInConcat",
    "FanInSum",
    "FanOut",
    "Flatten",
    "Gelu",
    "GeneralConv",
    "GeneralConvTranspose",
    "Identity",
    "LeakyRelu",
    "LogSoftmax",
    "MaxPool",
    "Relu",
    "Selu",
    "Sigmoid",
    "Softmax",
    "Softplus",
    "SumPool",
    "Tanh",
    "elementwise",
    "parallel",
    "serial",
    "shape_dependent",
]


# Layers with parameters


def Dense(out_dim, W_init=_GLOROT_NORMAL, b_init=_NORMAL):
    """Fully connected layer: `inputs @ W + b`."""

    def init_fun(rng, input_shape):
        output_shape = tuple(input_shape[:-1]) + (out_dim,)
        k1, k2 = random.split(rng)
        W = W_init(k1, (input_shape[-1], out_dim))
        b = b_init(k2, (out_dim,))
        return output_shape, (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return jnp.dot(inputs, W) + b

    return init_fun, apply_fun


def _kernel_shape(rhs_spec, lhs_spec, input_shape, out_chan, filter_shape):
    spatial = iter(filter_shape)
    shape = []
    for c in rhs_spec:
        if c == "O":
            shape.append(out_chan)
        elif c == "I":
            shape.append(input_shape[lhs_spec.index("C")])
        else:
            shape.append(next(spatial))
    return shape


def _conv_layer(
    shape_rule,
    conv,
    dimension_numbers,
    out_chan,
    filter_shape,
    strides,
    padding,
    W_init,
    b_init,
):
    """The layer both convolutions share: `shape_rule` gives the output shape and
    `conv(inputs, W, strides)` applies the kernel."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    strides = strides or (1,) * len(filter_shape)
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        kernel_shape = _kernel_shape(
            rhs_spec, lhs_spec, input_shape, out_chan, filter_shape
        )
        output_shape = shape_rule(
            input_shape, kernel_shape, strides, padding, dimension_numbers
        )
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        W, b = W_init(k1, kernel_shape), b_init(k2, bias_shape)
        return output_shape, (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return conv(inputs, W, strides) + b

    return init_fun, apply_fun


def GeneralConv(
    dimension_numbers,
    out_chan,
    filter_shape,
    strides=None,
    padding="VALID",
    W_init=None,
    b_init=_NORMAL_1E_6,
):
    """Convolution with the layouts of `dimension_numbers` (lhs, rhs, out specs)."""
    one = (1,) * len(filter_shape)

    def conv(inputs, W, strides):
        return lax.conv_general_dilated(
            inputs, W, strides, padding, one, one, dimension_numbers=dimension_numbers
        )

    return _conv_layer(
        lax.conv_general_shape_tuple,
        conv,
        dimension_numbers,
        out_chan,
        filter_shape,
        strides,
        padding,
        W_init,
        b_init,
    )


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(
    dimension_numbers,
    out_chan,
    filter_shape,
    strides=None,
    padding="VALID",
    W_init=None,
    b_init=_NORMAL_1E_6,
):
    """Transposed convolution with the layouts of `dimension_numbers`."""

    def conv(inputs, W, strides):
        return lax.conv_transpose(
            inputs, W, strides, padding, dimension_numbers=dimension_numbers
        )

    return _conv_layer(
        lax.conv_transpose_shape_tuple,
        conv,
        dimension_numbers,
        out_chan,
        filter_shape,
        strides,
        padding,
        W_init,
        b_init,
    )


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(
    axis=(0, 1, 2),
    epsilon=1e-5,
    center=True,
    scale=True,
    beta_init=zeros,
    gamma_init=ones,
):
    """Normalize over `axis` (batch statistics), then scale by gamma, shift by beta.

    Only the batch statistics are used: there are no running averages."""
    axis = (axis,) if jnp.isscalar(axis) else axis

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        ed = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[ed] * z + beta[ed]
        if center:
            return z + beta[ed]
        if scale:
            return gamma[ed] * z
        return z

    return init_fun, apply_fun


# Parameter-free layers


def elementwise(fun, **fun_kwargs):
    """A layer applying `fun(inputs, **fun_kwargs)`; shape-preserving, no params."""

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)

    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _pool_window_sizes(window_shape, strides, padding):
    """AvgPool's rescaling: divide by how many (unpadded) inputs each window saw."""

    def rescale(outputs, inputs, spec):
        if spec is None:
            non_spatial_axes = 0, inputs.ndim - 1
        else:
            non_spatial_axes = spec.index("N"), spec.index("C")
        spatial_shape = tuple(
            inputs.shape[i] for i in range(inputs.ndim) if i not in non_spatial_axes
        )
        one = jnp.ones(spatial_shape, dtype=inputs.dtype)
        window_sizes = lax.reduce_window(
            one, 0.0, lax.add, window_shape, strides, padding
        )
        for i in sorted(non_spatial_axes):
            window_sizes = jnp.expand_dims(window_sizes, i)
        return outputs / window_sizes

    return rescale


def _pooling_layer(reducer, init_val, rescaler=None):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        """Pooling over the spatial axes; inputs are NHWC unless `spec` says."""
        strides = strides or (1,) * len(window_shape)
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        if spec is None:
            non_spatial_axes = 0, len(window_shape) + 1
        else:
            non_spatial_axes = spec.index("N"), spec.index("C")
        full_window = tuple(window_shape)
        full_strides = tuple(strides)
        for i in sorted(non_spatial_axes):
            full_window = full_window[:i] + (1,) + full_window[i:]
            full_strides = full_strides[:i] + (1,) + full_strides[i:]

        def init_fun(rng, input_shape):
            pads = lax.padtype_to_pads(input_shape, full_window, full_strides, padding)
            ones_ = (1,) * len(full_window)
            out_shape = lax.reduce_window_shape_tuple(
                input_shape, full_window, full_strides, pads, ones_, ones_
            )
            return out_shape, ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(
                inputs, init_val, reducer, full_window, full_strides, padding
            )
            return rescale(out, inputs, spec) if rescale else out

        return init_fun, apply_fun

    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -jnp.inf)
SumPool = _pooling_layer(lax.add, 0.0)
AvgPool = _pooling_layer(lax.add, 0.0, _pool_window_sizes)


def Flatten():
    """Flatten all but the leading (batch) axis."""

    def init_fun(rng, input_shape):
        rest = functools.reduce(operator.mul, input_shape[1:], 1)
        return (input_shape[0], rest), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.reshape(inputs, (inputs.shape[0], -1))

    return init_fun, apply_fun


Flatten = Flatten()


def Identity():
    """The identity layer."""

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return inputs

    return init_fun, apply_fun


Identity = Identity()


def FanOut(num):
    """Send the input to `num` branches (a list of `num` copies)."""

    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num

    return init_fun, apply_fun


def FanInSum():
    """Sum a list of inputs of the same shape (e.g. residual connections)."""

    def init_fun(rng, input_shape):
        return input_shape[0], ()

    def apply_fun(params, inputs, **kwargs):
        return sum(inputs)

    return init_fun, apply_fun


FanInSum = FanInSum()


def FanInConcat(axis=-1):
    """Concatenate a list of inputs along `axis`."""

    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        concat_size = sum(shape[ax] for shape in input_shape)
        first = tuple(input_shape[0])
        return first[:ax] + (concat_size,) + first[ax + 1 :], ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def Dropout(rate, mode="train"):
    """Keep each input with probability `rate` (scaled by `1 / rate`) in "train"
    mode; the identity otherwise. `apply_fun` needs `rng=key` in "train" mode."""

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError(
                "Dropout layer requires apply_fun to be called with a PRNG key "
                "argument. That is, instead of `apply_fun(params, inputs)`, call "
                "it like `apply_fun(params, inputs, rng)` where `rng` is a PRNG "
                "key (e.g. from `jax.random.key`)."
            )
        if mode == "train":
            keep = random.bernoulli(rng, rate, inputs.shape)
            return jnp.where(keep, inputs / rate, 0)
        return inputs

    return init_fun, apply_fun


# Combinators


def _split_or_none(rng, n):
    if rng is None:
        return (None,) * n
    return random.split(rng, n)


def serial(*layers):
    """Compose layers in sequence; params are a list, one entry per layer."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = _split_or_none(rng, nlayers)
        for fun, param, layer_rng in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=layer_rng, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers):
    """Apply layer k to input k of a sequence of inputs (use after `FanOut`)."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        rngs = random.split(rng, nlayers)
        results = [
            init(layer_rng, shape)
            for init, layer_rng, shape in zip(init_funs, rngs, input_shape)
        ]
        return tuple(r[0] for r in results), tuple(r[1] for r in results)

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = _split_or_none(rng, nlayers)
        return [
            f(p, x, rng=r, **kwargs)
            for f, p, x, r in zip(apply_funs, params, inputs, rngs)
        ]

    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer built from the input shape: `make_layer(shape)` returns the
    `(init_fun, apply_fun)` to use, at init time and again at apply time."""

    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun
