"""shard_map's `check_vma`: reverse mode inside the body on a mesh axis of several
devices, against JAX 0.10.

With check_vma=True (the default) a value unbatched over a manual axis is invariant:
the gradient of an invariant input is one value, summed over the devices; with
check_vma=False each device differentiates its own view. The program below (this
file run as a script) computes gradients inside the body (g1..g10, grad of grad,
jacrev, has_aux, custom_vjp, scan; eager and under jit),
gradients of the whole shard_map, a data-parallel value_and_grad with pmean, and
psum/pmean of invariant values, for both settings; JAX runs it with N host devices
in a subprocess, jaxlite with N devices in one process, in 2 processes (MPI) and in
2 processes of 2 devices, and the results must agree. A 2-D mesh part runs where
N is 4. Replicated out_specs for a varying value raise JAX's error with check_vma.
"""

import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

from mpi_util import needs_mpi

HERE = os.path.abspath(__file__)


# --------------------------------------------------------------------------------------
# The program, for `jax` or `jaxlite`


def program(jax, n, whole):
    """Results (name -> NumPy array) on a mesh of `n` devices; `whole(v)` makes an
    output a NumPy array of its global value."""
    lax, jnp = jax.lax, jax.numpy
    P = jax.sharding.PartitionSpec
    mesh = jax.sharding.Mesh(np.array(jax.devices()), ("i",))
    x = np.arange(2.0 * n, dtype=np.float32)
    w = np.float32(2.0)
    out = {}

    def body(w, x):
        def grad(f):
            return jax.grad(f)(w)

        gs = {
            "g1": grad(lambda w: lax.psum(jnp.sum(w * x), "i")),
            "g2": grad(lambda w: jnp.sum(w * x)),
            "g3": grad(lambda w: lax.pmean(jnp.sum(w * x), "i")),
            "g4": jax.jit(jax.grad(lambda w: jnp.sum(w * x)))(w),
            # invariant and varying cotangents meeting (add_any)
            "g5": grad(lambda w: lax.psum(jnp.sum(w * x), "i") + w**2),
            "g6": grad(lambda w: lax.psum(w * w, "i")),
            "g7": grad(lambda w: jnp.sum(jnp.sin(w * x)) + jnp.cos(w)),
            "g8": grad(lambda w: jnp.sin(w)),
            "g9": jax.jit(jax.grad(lambda w: lax.pmean(jnp.sum(w * x), "i")))(w),
            "psum_inv": lax.psum(w, "i"),
            "pmean_inv": lax.pmean(w, "i"),
        }
        gw, gx = jax.grad(
            lambda w, x: lax.pmean(jnp.sum(jnp.sin(w * x)), "i"), argnums=(0, 1)
        )(w, x)
        gs["g10w"] = gw
        # higher order, jacrev, has_aux, custom_vjp, scan
        f = lambda w: lax.psum(jnp.sum(jnp.sin(w * x)), "i") * w  # noqa: E731
        gs["gg"] = jax.grad(jax.grad(f))(w)
        gs["gg_local"] = jax.grad(jax.grad(lambda w: jnp.sum(jnp.sin(w * x))))(w)
        gs["jacrev"] = jax.jacrev(
            lambda w: jnp.stack([lax.psum(jnp.sum(w * x), "i"), w * w])
        )(w)
        gs["aux"] = jax.grad(
            lambda w: (lax.pmean(jnp.sum(w * x), "i"), 3), has_aux=True
        )(w)[0]
        gs["custom"] = grad(lambda w: jnp.sum(custom_sin(w) * x))
        gs["scan"] = grad(
            lambda w: lax.scan(
                lambda c, xi: (c * jnp.cos(w * xi), None),
                lax.pcast(w, "i", to="varying"), x,
            )[0]
        )  # fmt: skip
        gs["scan_psum"] = grad(
            lambda w: lax.scan(lambda c, xi: (lax.psum(c * xi, "i"), None), w, x)[0]
        )
        out = {k: jnp.reshape(v, (1, -1)) for k, v in gs.items()}
        out["g10x"] = gx  # varying: split over "i"
        return out

    def dp_loss(params, x):
        h = jnp.tanh(x * params["a"]) - params["b"]
        return lax.pmean(jnp.mean(h**2), "i")

    def dp(params, x):
        loss, grads = jax.value_and_grad(dp_loss)(params, x)
        return loss[None], jax.tree.map(lambda g: g[None], grads)

    def outer_loss(w, x):
        return lax.psum(jnp.sum(jnp.sin(w * x)), "i")

    @jax.custom_vjp
    def custom_sin(w):
        return jnp.sin(w)

    custom_sin.defvjp(lambda w: (jnp.sin(w), jnp.cos(w)), lambda c, g: (c * g,))

    params = {"a": np.float32(0.5), "b": np.float32(0.25)}
    for cv in (True, False):
        sm = jax.shard_map(body, mesh=mesh, in_specs=(P(), P("i")),
                           out_specs=P("i"), check_vma=cv)  # fmt: skip
        for mode, f in (("eager", sm), ("jit", jax.jit(sm))):
            for k, v in f(w, x).items():
                out[f"{cv}/{mode}/{k}"] = whole(v)
        loss = jax.shard_map(outer_loss, mesh=mesh, in_specs=(P(), P("i")),
                             out_specs=P(), check_vma=cv)  # fmt: skip
        gw, gx = jax.grad(loss, argnums=(0, 1))(w, x)
        out[f"{cv}/outer/gw"], out[f"{cv}/outer/gx"] = whole(gw), whole(gx)
        gw, gx = jax.jit(jax.grad(loss, argnums=(0, 1)))(w, x)
        out[f"{cv}/outer_jit/gw"], out[f"{cv}/outer_jit/gx"] = whole(gw), whole(gx)
        step = jax.shard_map(dp, mesh=mesh, in_specs=(P(), P("i")),
                             out_specs=P("i"), check_vma=cv)  # fmt: skip
        value, grads = step(params, x)
        out[f"{cv}/dp/loss"] = whole(value)
        out.update({f"{cv}/dp/{k}": whole(v) for k, v in grads.items()})
    if n == 4:
        out.update(program_2d(jax, whole))
    return out


def program_2d(jax, whole):
    """A 2x2 mesh ("a", "b"): w invariant over both, x split over "a" only."""
    lax, jnp = jax.lax, jax.numpy
    P = jax.sharding.PartitionSpec
    mesh = jax.sharding.Mesh(np.array(jax.devices()).reshape(2, 2), ("a", "b"))
    x = np.arange(4.0, dtype=np.float32)
    w = np.float32(3.0)
    out = {}

    def body(w, x):
        gs = [
            jax.grad(lambda w: jnp.sum(w * x))(w),
            jax.grad(lambda w: lax.psum(jnp.sum(w * x), "a"))(w),
            jax.grad(lambda w: lax.psum(jnp.sum(w * x), "b"))(w),
            jax.grad(lambda w: lax.pmean(jnp.sum(w * x * lax.axis_index("b")), "b"))(w),
        ]
        return jnp.stack(gs)[None]

    for cv in (True, False):
        sm = jax.shard_map(body, mesh=mesh, in_specs=(P(), P("a")),
                           out_specs=P(("a", "b")), check_vma=cv)  # fmt: skip
        out[f"{cv}/2d"] = whole(sm(w, x))
        out[f"{cv}/2d_jit"] = whole(jax.jit(sm)(w, x))
    return out


def main(lib, n, outdir, processes):
    if lib == "jax":
        import jax

        def whole(v):
            return np.asarray(v)

        rank = 0
    else:
        import warnings

        import jaxlite as jax
        from jaxlite.experimental import multihost_utils as mu

        if processes == 1:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "jaxlite has one CPU device"
                jax.config.update("jax_num_cpu_devices", n)
            jax.distributed.initialize("localhost:1234", num_processes=1,
                                       process_id=0)  # fmt: skip
        else:
            jax.distributed.initialize()
        assert jax.device_count() == n, jax.device_count()

        def whole(v):
            if getattr(v, "is_fully_addressable", True):
                return np.asarray(v)
            return np.asarray(mu.process_allgather(v, tiled=True))

        rank = jax.process_index()
    out = program(jax, n, whole)
    np.savez(os.path.join(outdir, f"rank{rank}.npz"), **out)


# --------------------------------------------------------------------------------------
# The tests

# Brief's numbers (JAX 0.10.2, 2 devices, x = arange(4.), w = 2.0)
EXPECTED_2 = {
    "True": {"g1": [6, 6], "g2": [6, 6], "g3": [3, 3], "g4": [6, 6]},
    "False": {"g1": [2, 10], "g2": [1, 5], "g3": [1, 5], "g4": [1, 5]},
}


def _environ(**extra):
    environ = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("JAX_NUM_CPU", "JAXLITE_BACKEND", "PMI_", "OMPI_", "XLA_"))
    }
    environ.update(extra)
    return environ


def _run(command, env, timeout=300):
    done = subprocess.run(command, capture_output=True, text=True, env=env,
                          timeout=timeout)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


_jax_results = {}


def _jax_reference(n, tmp_path_factory):
    if n not in _jax_results:
        pytest.importorskip("jax")
        outdir = tmp_path_factory.mktemp(f"jax{n}")
        flags = f"--xla_force_host_platform_device_count={n}"
        env = _environ(XLA_FLAGS=flags, JAX_PLATFORMS="cpu")
        _run([sys.executable, HERE, "jax", str(n), str(outdir), "1"], env)
        _jax_results[n] = dict(np.load(outdir / "rank0.npz"))
    return _jax_results[n]


def _check(got, want):
    assert sorted(got) == sorted(want)
    for name, value in want.items():
        assert got[name].shape == value.shape, name
        np.testing.assert_allclose(got[name], value, rtol=1e-5, atol=1e-6,
                                   err_msg=name)  # fmt: skip


def _check_brief(got):
    for cv, gs in EXPECTED_2.items():
        for mode in ("eager", "jit"):
            for k, v in gs.items():
                np.testing.assert_array_equal(got[f"{cv}/{mode}/{k}"].ravel(), v)


@pytest.mark.parametrize("n", [2, 4])
def test_one_process_devices_match_jax(tmp_path, tmp_path_factory, n):
    _run([sys.executable, HERE, "jaxlite", str(n), str(tmp_path), "1"], _environ())
    got = dict(np.load(tmp_path / "rank0.npz"))
    if n == 2:
        _check_brief(got)
    if importlib.util.find_spec("jax") is not None:
        _check(got, _jax_reference(n, tmp_path_factory))


@needs_mpi
@pytest.mark.parametrize("processes,devices", [(2, 1), (2, 2)])
def test_processes_match_jax(tmp_path, tmp_path_factory, processes, devices):
    from jaxlite import launch

    n = processes * devices
    command = launch.mpiexec_command(
        processes, [HERE, "jaxlite", str(n), str(tmp_path), str(processes)]
    )
    _run(command, _environ(JAX_NUM_CPU_DEVICES=str(devices)))
    want = None
    if importlib.util.find_spec("jax") is not None:
        want = _jax_reference(n, tmp_path_factory)
    for rank in range(processes):
        got = dict(np.load(tmp_path / f"rank{rank}.npz"))
        if n == 2:
            _check_brief(got)
        if want is not None:
            _check(got, want)


@pytest.mark.parametrize("lib", ["jaxlite", "jax"])
def test_replicated_out_spec_of_varying_value_raises(lib):
    jax = pytest.importorskip(lib)
    P = jax.sharding.PartitionSpec
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("i",))
    x = np.arange(4.0, dtype=np.float32)

    def f(x):
        return x * 2

    sm = jax.shard_map(f, mesh=mesh, in_specs=P("i"), out_specs=P())
    with pytest.raises(ValueError, match="out_specs which require replication") as e:
        sm(x)
    assert "replicated across mesh axis 'i'" in str(e.value)
    assert "check_vma=False" in str(e.value)
    with pytest.raises(ValueError, match="out_specs which require replication"):
        jax.jit(sm)(x)
    # An invariant value (psum, or an unsplit input) may be replicated; so may a
    # varying one with check_vma=False.
    ok = jax.shard_map(lambda x, y: (jax.lax.psum(x, "i"), y), mesh=mesh,
                       in_specs=(P("i"), P()), out_specs=P())  # fmt: skip
    np.testing.assert_array_equal(ok(x, x)[0], x)
    unchecked = jax.shard_map(f, mesh=mesh, in_specs=P("i"), out_specs=P(),
                              check_vma=False)  # fmt: skip
    np.testing.assert_array_equal(unchecked(x), 2 * x)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]))
