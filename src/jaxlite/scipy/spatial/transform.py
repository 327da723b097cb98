"""jaxlite.scipy.spatial.transform: `Rotation` and `Slerp` as in
jax.scipy.spatial.transform.

A `Rotation` is a NamedTuple holding unit quaternions in SciPy's scalar-last order
(x, y, z, w), shape (4,) for one rotation or (N, 4) for a stack; being a NamedTuple
it is a pytree, so rotations pass through jit, vmap and grad. Conversions (matrices,
rotation vectors, modified Rodrigues parameters, Euler angles) are SciPy's formulas
written with jnp on the last axis and broadcasting over the leading ones; choices that
depend on values (the best-conditioned matrix column, small-angle series) are `where`
selections, so everything traces. `Slerp` interpolates between key rotations along
the geodesic: the relative rotation vector of each interval is scaled by the fraction
of the interval elapsed.
"""

from __future__ import annotations

import re
import typing

import numpy as np

__all__ = ["Rotation", "Slerp"]

Array = typing.Any


def _jnp():
    from jaxlite import numpy as jnp

    return jnp


def _norm(v):
    jnp = _jnp()
    return jnp.sqrt(jnp.sum(v * v, axis=-1))


def _normalize(q):
    return q / _norm(q)[..., None]


def _compose(p, q):
    """Quaternion product p * q (apply q, then p)."""
    jnp = _jnp()
    px, py, pz, pw = (p[..., i] for i in range(4))
    qx, qy, qz, qw = (q[..., i] for i in range(4))
    return jnp.stack(
        [
            pw * qx + qw * px + (py * qz - pz * qy),
            pw * qy + qw * py + (pz * qx - px * qz),
            pw * qz + qw * pz + (px * qy - py * qx),
            pw * qw - px * qx - py * qy - pz * qz,
        ],
        axis=-1,
    )


def _as_matrix(q):
    jnp = _jnp()
    x, y, z, w = (q[..., i] for i in range(4))
    x2, y2, z2, w2 = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    rows = [
        [x2 - y2 - z2 + w2, 2 * (xy - zw), 2 * (xz + yw)],
        [2 * (xy + zw), -x2 + y2 - z2 + w2, 2 * (yz - xw)],
        [2 * (xz - yw), 2 * (yz + xw), -x2 - y2 + z2 + w2],
    ]
    return jnp.stack([jnp.stack(r, axis=-1) for r in rows], axis=-2)


def _from_matrix(m):
    jnp = _jnp()
    m = jnp.asarray(m)
    trace = m[..., 0, 0] + m[..., 1, 1] + m[..., 2, 2]
    decision = jnp.stack([m[..., 0, 0], m[..., 1, 1], m[..., 2, 2], trace], axis=-1)
    choice = jnp.argmax(decision, axis=-1)
    candidates = []
    for i in range(3):  # the largest diagonal entry i gives the best-conditioned q_i
        j, k = (i + 1) % 3, (i + 2) % 3
        c = [None] * 4
        c[i] = 1 - trace + 2 * m[..., i, i]
        c[j] = m[..., j, i] + m[..., i, j]
        c[k] = m[..., k, i] + m[..., i, k]
        c[3] = m[..., k, j] - m[..., j, k]
        candidates.append(jnp.stack(c, axis=-1))
    candidates.append(
        jnp.stack(
            [
                m[..., 2, 1] - m[..., 1, 2],
                m[..., 0, 2] - m[..., 2, 0],
                m[..., 1, 0] - m[..., 0, 1],
                1 + trace,
            ],
            axis=-1,
        )
    )
    cand = jnp.stack(candidates, axis=-2)  # (..., 4 choices, 4 components)
    q = jnp.take_along_axis(cand, choice[..., None, None], axis=-2)[..., 0, :]
    return _normalize(q)


def _from_rotvec(rotvec, degrees):
    jnp = _jnp()
    rotvec = jnp.asarray(rotvec)
    rotvec = jnp.where(degrees, jnp.deg2rad(rotvec), rotvec)
    angle = _norm(rotvec)
    a2 = angle * angle
    small = 0.5 - a2 / 48 + a2 * a2 / 3840
    tiny = angle <= 1e-3  # series branch; the other divides by a safe angle
    large = jnp.sin(angle / 2) / jnp.where(tiny, 1.0, angle)
    scale = jnp.where(tiny, small, large)
    return jnp.concatenate(
        [scale[..., None] * rotvec, jnp.cos(angle / 2)[..., None]], axis=-1
    )


def _as_rotvec(q, degrees):
    jnp = _jnp()
    q = jnp.where(q[..., 3:] < 0, -q, q)
    angle = 2.0 * jnp.arctan2(_norm(q[..., :3]), q[..., 3])
    a2 = angle * angle
    small = 2 + a2 / 12 + 7 * a2 * a2 / 2880
    tiny = angle <= 1e-3
    large = angle / jnp.sin(jnp.where(tiny, 1.0, angle) / 2)
    scale = jnp.where(tiny, small, large)
    scale = jnp.where(degrees, jnp.rad2deg(scale), scale)
    return scale[..., None] * q[..., :3]


def _from_mrp(mrp):
    jnp = _jnp()
    mrp = jnp.asarray(mrp)
    sq1 = jnp.sum(mrp * mrp, axis=-1)[..., None] + 1
    return jnp.concatenate([2 * mrp[..., :3], 2 - sq1], axis=-1) / sq1


def _as_mrp(q):
    jnp = _jnp()
    sign = jnp.where(q[..., 3:] < 0, -1.0, 1.0)
    return sign * q[..., :3] / (1.0 + sign * q[..., 3:])


def _canonical(q):
    jnp = _jnp()
    neg, zero = q < 0, q == 0
    flip = (
        neg[..., 3]
        | (zero[..., 3] & neg[..., 0])
        | (zero[..., 3] & zero[..., 0] & neg[..., 1])
        | (zero[..., 3] & zero[..., 0] & zero[..., 1] & neg[..., 2])
    )
    return jnp.where(flip[..., None], -q, q)


def _check_seq(seq, exact3):
    n = len(seq)
    if exact3 and n != 3:
        raise ValueError(f"Expected 3 axes, got {seq}.")
    if n < 1 or n > 3:
        raise ValueError(
            "Expected axis specification to be a non-empty string of upto 3 "
            f"characters, got {seq}"
        )
    intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
    extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
    if not (intrinsic or extrinsic):
        raise ValueError(
            "Expected axes from `seq` to be from ['x', 'y', 'z'] or "
            f"['X', 'Y', 'Z'], got {seq}"
        )
    if any(seq[i] == seq[i + 1] for i in range(n - 1)):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return ["xyz".index(c) for c in seq.lower()], intrinsic


def _elementary(axis, angle):
    jnp = _jnp()
    zero = jnp.zeros_like(angle)
    comps = [zero, zero, zero, jnp.cos(angle / 2.0)]
    comps[axis] = jnp.sin(angle / 2.0)
    return jnp.stack(comps, axis=-1)


def _euler_from_quat(q, axes, extrinsic, degrees):
    """SciPy's quaternion-to-Euler algorithm (Bernardes & Viollet, 2022)."""
    jnp = _jnp()
    first, third = (0, 2) if extrinsic else (2, 0)
    i, j, k = axes if extrinsic else axes[::-1]
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2
    qi, qj, qk, qw = q[..., i], q[..., j], q[..., k], q[..., 3]
    if symmetric:
        a, b, c, d = qw, qi, qj, qk * sign
    else:
        a, b, c, d = qw - qj, qi + qk * sign, qj + qw, qk * sign - qi
    theta1 = 2 * jnp.arctan2(jnp.hypot(c, d), jnp.hypot(a, b))
    eps = 1e-7
    case = jnp.where(jnp.abs(theta1 - np.pi) <= eps, 2, 0)
    case = jnp.where(jnp.abs(theta1) <= eps, 1, case)
    half_sum = jnp.arctan2(b, a)
    half_diff = jnp.arctan2(d, c)
    zero = jnp.zeros_like(theta1)
    angles = [zero, theta1, zero]
    # Degenerate (gimbal-locked) cases put the whole angle in slot 0.
    angles[0] = jnp.where(
        case == 1, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1)
    )
    angles[first] = jnp.where(case == 0, half_sum - half_diff, angles[first])
    angles[third] = jnp.where(case == 0, half_sum + half_diff, angles[third])
    if not symmetric:
        angles[third] = angles[third] * sign
        angles[1] = angles[1] - np.pi / 2
    out = jnp.stack(angles, axis=-1)
    out = (out + np.pi) % (2 * np.pi) - np.pi
    return jnp.where(degrees, jnp.rad2deg(out), out)


class Rotation(typing.NamedTuple):
    """Rotations in 3 dimensions, stored as unit quaternions (x, y, z, w)."""

    quat: Array

    @classmethod
    def concatenate(cls, rotations: typing.Sequence):
        """One stack of rotations from a sequence of Rotations."""
        return cls(_jnp().concatenate([r.quat for r in rotations]))

    @classmethod
    def from_euler(cls, seq: str, angles: Array, degrees: bool = False):
        """Rotations from Euler angles ('xyz' extrinsic, 'XYZ' intrinsic)."""
        jnp = _jnp()
        axes, intrinsic = _check_seq(seq, False)
        angles = jnp.atleast_1d(jnp.asarray(angles))
        angles = jnp.where(degrees, jnp.deg2rad(angles), angles)
        result = _elementary(axes[0], angles[..., 0])
        for n in range(1, len(axes)):
            q = _elementary(axes[n], angles[..., n])
            result = _compose(result, q) if intrinsic else _compose(q, result)
        return cls(result)

    @classmethod
    def from_matrix(cls, matrix: Array):
        """Rotations from (..., 3, 3) rotation matrices."""
        return cls(_from_matrix(matrix))

    @classmethod
    def from_mrp(cls, mrp: Array):
        """Rotations from modified Rodrigues parameters."""
        return cls(_from_mrp(mrp))

    @classmethod
    def from_quat(cls, quat: Array):
        """Rotations from (normalised) scalar-last quaternions."""
        return cls(_normalize(_jnp().asarray(quat)))

    @classmethod
    def from_rotvec(cls, rotvec: Array, degrees: bool = False):
        """Rotations from rotation vectors (axis times angle)."""
        return cls(_from_rotvec(rotvec, degrees))

    @classmethod
    def identity(cls, num: int | None = None, dtype=float):
        """The identity rotation (`num` must be None, as in JAX)."""
        assert num is None
        return cls(_jnp().array([0.0, 0.0, 0.0, 1.0], dtype=dtype))

    @classmethod
    def random(cls, random_key: Array, num: int | None = None):
        """Not implemented in JAX either."""
        raise NotImplementedError()

    def __getitem__(self, indexer):
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self):
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __mul__(self, other) -> Rotation:
        return Rotation.from_quat(_compose(self.quat, other.quat))

    def apply(self, vectors: Array, inverse: bool = False) -> Array:
        """Rotate `vectors` (..., 3), or rotate by the inverse if `inverse`."""
        jnp = _jnp()
        m = self.as_matrix()
        m = jnp.where(inverse, jnp.swapaxes(m, -1, -2), m)
        v = jnp.asarray(vectors)
        return jnp.matmul(m, v[..., None])[..., 0]

    def as_euler(self, seq: str, degrees: bool = False):
        """Euler angles (..., 3) for the axis sequence `seq` of length 3."""
        axes, intrinsic = _check_seq(seq, True)
        return _euler_from_quat(self.quat, axes, not intrinsic, degrees)

    def as_matrix(self) -> Array:
        """Rotation matrices (..., 3, 3)."""
        return _as_matrix(self.quat)

    def as_mrp(self) -> Array:
        """Modified Rodrigues parameters (..., 3)."""
        return _as_mrp(self.quat)

    def as_rotvec(self, degrees: bool = False) -> Array:
        """Rotation vectors (..., 3), angle in [0, pi]."""
        return _as_rotvec(self.quat, degrees)

    def as_quat(self, canonical: bool = False, scalar_first: bool = False) -> Array:
        """Quaternions; `canonical` picks w >= 0, `scalar_first` gives (w, x, y, z)."""
        q = _canonical(self.quat) if canonical else self.quat
        return _jnp().roll(q, shift=1, axis=-1) if scalar_first else q

    def inv(self):
        """The inverse rotation(s)."""
        jnp = _jnp()
        return Rotation(self.quat * jnp.array([-1, -1, -1, 1], dtype=self.quat.dtype))

    def magnitude(self) -> Array:
        """Rotation angles in radians, in [0, pi]."""
        jnp = _jnp()
        return 2.0 * jnp.arctan2(_norm(self.quat[..., :3]), jnp.abs(self.quat[..., 3]))

    def mean(self, weights: Array | None = None):
        """The (weighted) chordal L2 mean: the top eigenvector of sum w q q^T."""
        jnp = _jnp()
        q = self.quat
        if weights is None:
            w = jnp.ones(q.shape[0], dtype=q.dtype)
        else:
            w = jnp.asarray(weights, dtype=q.dtype)
        if w.ndim != 1:
            raise ValueError(
                f"Expected `weights` to be 1 dimensional, got shape {w.shape}."
            )
        if w.shape[0] != len(self):
            raise ValueError(
                "Expected `weights` to have number of values equal to number of "
                f"rotations, got {w.shape[0]} values and {len(self)} rotations."
            )
        k = jnp.dot(w[None, :] * q.T, q)
        _, v = jnp.linalg.eigh(k)
        return Rotation(v[:, -1])

    @property
    def single(self) -> bool:
        """Whether this holds one rotation (quat of shape (4,))."""
        return self.quat.ndim == 1


# A namedtuple's field is `property(operator.itemgetter(0))` where CPython's C
# accessor `_collections._tuplegetter` is missing (PyPy): that would call the
# `__getitem__` above, which reads `quat` again. Read the tuple's own slot instead.
Rotation.quat = property(
    lambda self: tuple.__getitem__(self, 0), doc="Alias for field number 0"
)


class Slerp(typing.NamedTuple):
    """Spherical linear interpolation of rotations; build it with `Slerp.init`."""

    times: Array
    timedelta: Array
    rotations: Rotation
    rotvecs: Array

    @classmethod
    def init(cls, times: Array, rotations: Rotation):
        """Key `rotations` at increasing `times` (at least two)."""
        jnp = _jnp()
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = jnp.asarray(times, dtype=rotations.quat.dtype)
        if times.ndim != 1:
            raise ValueError(
                "Expected times to be specified in a 1 dimensional array, got "
                f"{times.ndim} dimensions."
            )
        if times.shape[0] != len(rotations):
            raise ValueError(
                "Expected number of rotations to be equal to number of timestamps "
                f"given, got {len(rotations)} rotations and {times.shape[0]} "
                "timestamps."
            )
        starts = Rotation(rotations.as_quat()[:-1])
        ends = Rotation(rotations.as_quat()[1:])
        return cls(
            times=times,
            timedelta=jnp.diff(times),
            rotations=starts,
            rotvecs=(starts.inv() * ends).as_rotvec(),
        )

    def __call__(self, times: Array):
        """The interpolated rotation(s) at `times` (a scalar or 1-d array)."""
        jnp = _jnp()
        t = jnp.asarray(times, dtype=self.times.dtype)
        if t.ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        single = t.ndim == 0
        t = jnp.atleast_1d(t)
        ind = jnp.maximum(jnp.searchsorted(self.times, t) - 1, 0)
        alpha = (t - self.times[ind]) / self.timedelta[ind]
        step = Rotation.from_rotvec(self.rotvecs[ind] * alpha[:, None])
        result = self.rotations[ind] * step
        return result[0] if single else result
