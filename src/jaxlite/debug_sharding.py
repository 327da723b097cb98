"""Looking at shardings: `jax.debug.inspect_array_sharding` and the box diagrams of
`visualize_array_sharding` / `visualize_sharding`.

jaxlite has one device, so every array lives whole on it and a diagram is one box
labelled `CPU 0`. The box is drawn with JAX's layout rules (10 rows per unit of
`scale`, columns by the aspect ratio times 2.5, clamped to `min_width`..`max_width`)
and the same box characters, so the printed text is what JAX prints when its output
is not a color terminal. No `rich` is needed.

`inspect_array_sharding` calls its callback with the sharding right away, eagerly or
while a function is being traced (JAX calls it once per compilation, which is when
jaxlite traces), so a jitted function reports on its first call only.
"""

from __future__ import annotations

import sys

from jaxlite import tree_util

__all__ = ["inspect_array_sharding", "visualize_array_sharding", "visualize_sharding"]


def inspect_array_sharding(value, *, callback):
    """Call `callback(sharding)` for every array leaf of `value`."""
    from jaxlite.sharding import make_single_device_sharding

    def inspect(leaf):
        sharding = getattr(leaf, "sharding", None)
        if sharding is None or not hasattr(sharding, "device_set"):
            sharding = make_single_device_sharding()  # a tracer: the one device
        callback(sharding)

    tree_util.tree_map(inspect, value)


def visualize_array_sharding(arr, **kwargs):
    """Print the diagram of how `arr` is laid out over the devices."""

    def show(sharding):
        visualize_sharding(arr.shape, sharding, **kwargs)

    inspect_array_sharding(arr, callback=show)


def visualize_sharding(
    shape,
    sharding,
    *,
    use_color=True,
    scale=1.0,
    min_width=9,
    max_width=80,
    color_map=None,
):
    """Print the diagram of `sharding` for an array of `shape` (1 or 2 dimensions).

    `use_color` and `color_map` are accepted and ignored: the diagram is plain text.
    """
    if len(shape) > 2 or len(shape) < 1:
        raise ValueError(
            "`visualize_sharding` only works for shapes with 1 and 2 dimensions."
        )
    devices = sorted(sharding.device_set, key=lambda d: d.id)
    kind = devices[0].platform.upper()
    label = f"{kind} " + ",".join(str(d.id) for d in devices)

    base_height = int(10 * scale)
    aspect_ratio = (shape[1] if len(shape) == 2 else 1) / shape[0]
    base_width = int(base_height * aspect_ratio)
    width = min(max(int(base_width * 2.5), min_width), max_width)
    height = base_height if len(shape) == 2 else 1

    left, extra = divmod(width - len(label) - 2, 2)
    right = left + extra
    top, extra = divmod(height - 2, 2)
    bottom = top + extra
    left, right, top, bottom = (max(n, 0) for n in (left, right, top, bottom))

    inner = left + len(label) + right
    blank = "│" + " " * inner + "│"
    lines = ["┌" + "─" * inner + "┐"]
    lines += [blank] * top
    lines.append("│" + " " * left + label + " " * right + "│")
    lines += [blank] * bottom
    lines.append("└" + "─" * inner + "┘")
    sys.stdout.write("\n".join(lines) + "\n")
