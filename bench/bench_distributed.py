"""Multi-process benchmark: collectives across processes and a data-parallel training
step, jaxlite over MPI side by side with JAX's multi-process CPU runtime.

Each program is written once against a JAX-like module `jx` and runs in N processes
joined by `jx.distributed.initialize`: JAX's with gloo CPU collectives
(`jax_cpu_collectives_implementation="gloo"`, a coordinator on a free local port,
the N processes started here), jaxlite's under `mpiexec` (`jaxlite.launch`).

- `allreduce`: `jit(shard_map(lambda x: lax.psum(x, "p")))` over a 1-D mesh "p" of
  the processes (one device each), on a float32 array of which each process holds
  one block (`make_array_from_process_local_data`): per message size (the bytes of a
  block, 4 B to 64 MB), the median time per call (the slowest process's median of
  timed batches) and the algorithm bandwidth, message bytes / time, in GB/s.
- `mlp`: one SGD step of a 784-512-512-10 ReLU MLP, mean cross-entropy, global batch
  256 split over "p", parameters replicated, gradients and loss `pmean`ed over "p"
  inside `jit(shard_map(...))`: the first call (trace + compile + run) and the median
  steady step, in milliseconds, and the loss after each of the first steps, which
  must agree between the libraries and across process counts.

Every (program, library, process count) runs in fresh processes. Times are the
slowest process's; peak memory is the largest `ru_maxrss` of the processes.
More processes than cores are oversubscribed (marked in the output): their times
measure the scheduler as much as the library. `OPENBLAS_CORETYPE` and
`OPENBLAS_L2_SIZE` are removed from the processes' environment. NumPy's BLAS gets
the cores divided among the processes (`OPENBLAS_NUM_THREADS` = cores // N unless
set: more threads than cores spin against each other); XLA keeps its defaults, a
thread pool of every core in each process.
Prints the tables, then one line of JSON.

`--backend` sets `JAXLITE_BACKEND` for the jaxlite processes.

    python bench/bench_distributed.py [--quick] [--only allreduce|mlp] [--procs 2,4]
                                      [--backend numpy|native|auto]
"""

import os
import sys

# Before NumPy is imported, here and in every process started (they inherit it).
for _var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
    os.environ.pop(_var, None)

import argparse  # noqa: E402
import importlib  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import socket  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

SIZES = [4 * 4**k for k in range(13)]  # 4 B .. 64 MiB
QUICK_SIZES = [4, 1024, 256 * 1024, 16 * 2**20]
PROCS = {"allreduce": (2, 4), "mlp": (1, 2, 4)}
LAYERS = (784, 512, 512, 10)
BATCH = 256
LR = 0.1
LOSS_STEPS = 5  # the losses compared
RTOL = 1e-4
TIMEOUT_S = 900


# --- the programs, written once against `jx` ------------------------------------------


def _join(jx, lib, n, rank, port):
    """Join the N processes; the 1-D mesh "p" over them."""
    if lib == "jax":
        jx.config.update("jax_platforms", "cpu")
        jx.config.update("jax_cpu_collectives_implementation", "gloo")
        jx.distributed.initialize(
            coordinator_address=f"127.0.0.1:{port}", num_processes=n, process_id=rank
        )
    else:
        jx.distributed.initialize()  # rank and size from mpiexec
    assert jx.process_count() == n, (jx.process_count(), n)
    return jx.make_mesh((n,), ("p",))


def _global_jit_works(jx, mesh):
    """Whether `jit` takes an argument split across processes (jaxlite's did not
    before jit of GlobalArrays). Where it does not, the processes pass the whole
    array, the same in each, and the shard_map cuts out the process's block (a
    view), as JAX does with a NumPy argument; the output says so."""
    P = jx.sharding.PartitionSpec
    local = np.ones(1, np.float32)
    x = jx.make_array_from_process_local_data(
        jx.sharding.NamedSharding(mesh, P("p")), local
    )
    probe = jx.jit(
        jx.shard_map(
            lambda v: jx.lax.psum(v, "p"), mesh=mesh, in_specs=P("p"), out_specs=P()
        )
    )
    try:
        probe(x).block_until_ready()
    except NotImplementedError as e:
        if "split across processes" not in str(e):
            raise
        return False
    return True


def _feed(jx, mesh, spec, local, whole, global_ok):
    """The argument for `spec` over `mesh` whose block here is `local`: a global
    array, or (see `_global_jit_works`) `whole()`, the whole value."""
    if global_ok:
        sharding = jx.sharding.NamedSharding(mesh, spec)
        return jx.make_array_from_process_local_data(sharding, local)
    return jx.numpy.asarray(whole())  # an Array, as JAX's is: jit copies no NumPy


def _here(x):
    """This process's copy of a replicated result, as NumPy."""
    if hasattr(x, "addressable_data"):
        x = x.addressable_data(0)
    return np.asarray(x)


def _barrier(jx, name):
    mu = importlib.import_module(jx.__name__ + ".experimental.multihost_utils")
    mu.sync_global_devices(name)


# Untimed calls before a steady state is timed: jaxlite's tiering times a jitted
# function on its NumPy tier, compiles it and tries both tiers for ~13 calls before it
# keeps the faster (backend/tiering.py).
WARM_UP_CALLS = 20


def allreduce(jx, mesh, global_ok, sizes, repeat):
    """Per message size: first call, median seconds per call, the result checked."""
    P = jx.sharding.PartitionSpec
    n, rank = jx.process_count(), jx.process_index()
    out = []
    for size in sizes:
        count = size // 4

        def whole(count=count):
            return np.repeat(np.arange(1, n + 1, dtype=np.float32), count)

        local = np.full(count, rank + 1, np.float32)
        x = _feed(jx, mesh, P("p"), local, whole, global_ok)
        fn = jx.jit(
            jx.shard_map(
                lambda v: jx.lax.psum(v, "p"), mesh=mesh, in_specs=P("p"), out_specs=P()
            )
        )
        _barrier(jx, f"size {size}")
        start = time.perf_counter()
        y = fn(x).block_until_ready()
        first = time.perf_counter() - start
        got = _here(y)
        want = n * (n + 1) / 2
        assert got.shape == (count,) and got[0] == want and got[-1] == want, got
        del y, got
        number = max(1, min(200, 2**20 // size))  # the same in every process
        for _ in range(WARM_UP_CALLS):  # past jaxlite's choice of tier, as steady
            fn(x).block_until_ready()
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            for _ in range(number):
                fn(x).block_until_ready()
            times.append((time.perf_counter() - start) / number)
        out.append(
            {
                "bytes": size,
                "first_s": first,
                "median_s": statistics.median(times),
                "calls": number,
                "repeats": repeat,
            }
        )
        del x
    return {"sizes": out}


def _init_params():
    rng = np.random.default_rng(0)
    params = {}
    for i, (m, k) in enumerate(zip(LAYERS[:-1], LAYERS[1:])):
        params[f"w{i}"] = (rng.standard_normal((m, k)) / np.sqrt(m)).astype(np.float32)
        params[f"b{i}"] = np.zeros(k, np.float32)
    return params


def _batch():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((BATCH, LAYERS[0])).astype(np.float32)
    labels = rng.integers(0, LAYERS[-1], BATCH)
    return x, np.eye(LAYERS[-1], dtype=np.float32)[labels]


def _mlp_step(jx):
    jnp, lax = jx.numpy, jx.lax
    depth = len(LAYERS) - 1

    def loss_fn(params, x, y):
        h = x
        for i in range(depth - 1):
            h = jnp.maximum(h @ params[f"w{i}"] + params[f"b{i}"], 0.0)
        logits = h @ params[f"w{depth - 1}"] + params[f"b{depth - 1}"]
        return -jnp.mean(jnp.sum(y * jx.nn.log_softmax(logits), axis=-1))

    def step(params, x, y):  # per process: its rows of the batch
        loss, grads = jx.value_and_grad(loss_fn)(params, x, y)
        grads = lax.pmean(grads, "p")
        params = jx.tree_util.tree_map(lambda p, g: p - LR * g, params, grads)
        return params, lax.pmean(loss, "p")

    return step


def mlp(jx, mesh, global_ok, steps):
    """First call, median seconds per step, the losses of the first steps."""
    P = jx.sharding.PartitionSpec
    n, rank = jx.process_count(), jx.process_index()
    rows = BATCH // n
    x, y = _batch()
    mine = slice(rank * rows, (rank + 1) * rows)
    xb = _feed(jx, mesh, P("p"), x[mine], lambda: x, global_ok)
    yb = _feed(jx, mesh, P("p"), y[mine], lambda: y, global_ok)
    replicated = jx.sharding.NamedSharding(mesh, P())
    params = {
        k: jx.make_array_from_process_local_data(replicated, v)
        for k, v in _init_params().items()
    }
    # check_vma=False: the classic data-parallel step, whose gradients are each
    # process's own until the pmean. (With JAX's default check_vma=True, the gradient
    # of a replicated input is already summed over "p" by the transpose of its
    # implicit pvary, and the pmean then leaves N times the full-batch gradient;
    # jaxlite's shard_map does not model varying manual axes and computes the
    # check_vma=False result either way.)
    step = jx.jit(
        jx.shard_map(
            _mlp_step(jx),
            mesh=mesh,
            in_specs=(P(), P("p"), P("p")),
            out_specs=(P(), P()),
            check_vma=False,
        )
    )
    _barrier(jx, "mlp")
    start = time.perf_counter()
    params, loss = step(params, xb, yb)
    loss.block_until_ready()
    first = time.perf_counter() - start
    losses, times = [float(_here(loss))], []
    for i in range(max(LOSS_STEPS, WARM_UP_CALLS) + steps):
        start = time.perf_counter()
        params, loss = step(params, xb, yb)
        loss.block_until_ready()
        if i >= max(LOSS_STEPS, WARM_UP_CALLS):  # steady: past the choice of tier
            times.append(time.perf_counter() - start)
        if len(losses) < LOSS_STEPS:
            losses.append(float(_here(loss)))
    return {
        "first_s": first,
        "median_s": statistics.median(times),
        "steps": len(times),
        "losses": losses,
    }


# --- the worker: one process of one (program, library, process count) -----------------


def worker(lib, program, n, rank, port, out_dir, quick):
    jx = importlib.import_module(lib)
    mesh = _join(jx, lib, n, None if rank == "-" else int(rank), port)
    rank = jx.process_index()
    global_ok = _global_jit_works(jx, mesh)
    if program == "allreduce":
        sizes = QUICK_SIZES if quick else SIZES
        result = allreduce(jx, mesh, global_ok, sizes, 3 if quick else 7)
    else:
        result = mlp(jx, mesh, global_ok, 10 if quick else 40)
    _barrier(jx, "done")
    if lib == "jaxlite":
        assert "jax" not in sys.modules, "the jaxlite worker imported jax"
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    result.update(
        rank=rank,
        version=jx.__version__,
        global_arrays=global_ok,
        peak_rss_mb=rss / 1024 if sys.platform != "darwin" else rss / 2**20,
    )
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
        json.dump(result, f)
    jx.distributed.shutdown()


# --- the parent: start the processes, gather, tabulate ----------------------------------


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _child_env(n):
    env = dict(os.environ)
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        env.pop(var, None)
    env.setdefault("OPENBLAS_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // n)))
    env["JAX_PLATFORMS"] = "cpu"
    for k in list(env):  # a stale MPI or CPU-device setting would change the run
        if k.startswith(("PMI_", "OMPI_", "JAX_NUM_CPU")):
            del env[k]
    return env


def _last_error(paths):
    for path in paths:
        with open(path) as f:
            lines = [ln for ln in f.read().splitlines() if ln.strip()]
        errors = [ln for ln in lines if "Error" in ln or "error" in ln]
        if errors:
            return errors[-1][:300]
    return "failed"


def run_config(lib, program, n, quick, backend, tmpdir):
    """Run one (library, program, process count) in fresh processes; the per-process
    results, or {"error": ...}."""
    out_dir = tempfile.mkdtemp(prefix=f"{lib}-{program}-{n}-", dir=tmpdir)
    me = os.path.abspath(__file__)
    extra = ["--quick"] if quick else []
    env = _child_env(n)
    if lib == "jaxlite" and backend:
        env["JAXLITE_BACKEND"] = backend
    logs = [os.path.join(out_dir, f"log{i}.txt") for i in range(n)]
    if lib == "jax":
        port = str(_free_port())
        procs = []
        for rank in range(n):
            cmd = [
                sys.executable,
                me,
                "--worker",
                lib,
                program,
                str(n),
                str(rank),
                port,
                out_dir,
                *extra,
            ]
            with open(logs[rank], "w") as log:
                procs.append(subprocess.Popen(cmd, env=env, stdout=log, stderr=log))
        codes = _wait_all(procs)
    else:
        from jaxlite.launch import mpiexec_command

        logs = logs[:1]
        program_args = [me, "--worker", lib, program, str(n), "-", "-", out_dir, *extra]
        with open(logs[0], "w") as log:
            proc = subprocess.Popen(
                mpiexec_command(n, program_args), env=env, stdout=log, stderr=log
            )
            codes = _wait_all([proc])
    if any(codes):
        return {"error": _last_error(logs)}
    ranks = []
    for rank in range(n):
        with open(os.path.join(out_dir, f"rank{rank}.json")) as f:
            ranks.append(json.load(f))
    return {"ranks": ranks}


def _wait_all(procs):
    """Wait for every process; once one fails, give the others 10 s, then end them
    (a JAX process left alone waits in its next collective for ever)."""
    deadline = time.monotonic() + TIMEOUT_S
    failed_at = None
    while True:
        codes = [p.poll() for p in procs]
        if all(c is not None for c in codes):
            return codes
        if failed_at is None and any(c not in (None, 0) for c in codes):
            failed_at = time.monotonic()
        now = time.monotonic()
        if now > deadline or (failed_at is not None and now - failed_at > 10):
            for p in procs:
                if p.poll() is None:
                    p.kill()
            return [p.wait() or -9 for p in procs]
        time.sleep(0.05)


def _summary(result):
    """One (library, program, process count): the slowest process's times."""
    if "error" in result:
        return result
    ranks = result["ranks"]
    out = {
        "version": ranks[0]["version"],
        "global_arrays": ranks[0]["global_arrays"],
        "peak_rss_mb": max(r["peak_rss_mb"] for r in ranks),
    }
    if "sizes" in ranks[0]:
        out["sizes"] = [
            {
                "bytes": s["bytes"],
                "first_ms": max(r["sizes"][i]["first_s"] for r in ranks) * 1e3,
                "median_us": max(r["sizes"][i]["median_s"] for r in ranks) * 1e6,
                "calls": s["calls"],
                "repeats": s["repeats"],
            }
            for i, s in enumerate(ranks[0]["sizes"])
        ]
        for s in out["sizes"]:
            s["gb_per_s"] = s["bytes"] / (s["median_us"] * 1e-6) / 1e9
    else:
        out["first_ms"] = max(r["first_s"] for r in ranks) * 1e3
        out["steady_ms"] = max(r["median_s"] for r in ranks) * 1e3
        out["steps"] = ranks[0]["steps"]
        out["losses"] = ranks[0]["losses"]
        out["losses_agree_across_processes"] = all(
            r["losses"] == ranks[0]["losses"] for r in ranks
        )
    return out


def _size(nbytes):
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes // scale} {unit}"
    return f"{nbytes} B"


def _num(value, width):
    if value is None:
        return f"{'-':>{width}}"
    if value >= 100:
        return f"{value:>{width},.0f}"
    return f"{value:>{width}.3g}"


def _ratio(mine, theirs, width):
    if mine is None or theirs is None:
        return f"{'-':>{width}}"
    ratio = mine / theirs
    text = f"{ratio:,.0f}x" if ratio >= 100 else f"{ratio:.3g}x"
    return f"{text:>{width}}"


def _oversubscribed(n):
    cores = os.cpu_count() or 1
    return f" (oversubscribed: {n} processes on {cores} cores)" if n > cores else ""


def allreduce_table(rows):
    lines = [
        "allreduce: jit(shard_map(psum)) over the processes, float32; median µs per "
        "call (slowest process); GB/s = message bytes / time; ratio = jaxlite / JAX",
    ]
    head = (
        f"{'procs':>5} {'message':>9}{'jax µs':>11}{'jaxlite µs':>12}"
        f"{'ratio':>9}{'jax GB/s':>10}{'jaxlite GB/s':>14}"
    )
    lines += [head, "-" * len(head)]
    for row in rows:
        j, m = row.get("jax", {}), row.get("jaxlite", {})
        by_size = {}
        for lib, r in (("jax", j), ("jaxlite", m)):
            for s in r.get("sizes", []):
                by_size.setdefault(s["bytes"], {})[lib] = s
        for nbytes in sorted(by_size):
            js, ms = by_size[nbytes].get("jax", {}), by_size[nbytes].get("jaxlite", {})
            lines.append(
                f"{row['procs']:>5} {_size(nbytes):>9}"
                + _num(js.get("median_us"), 11)
                + _num(ms.get("median_us"), 12)
                + _ratio(ms.get("median_us"), js.get("median_us"), 9)
                + _num(js.get("gb_per_s"), 10)
                + _num(ms.get("gb_per_s"), 14)
            )
    lines.append("")
    for row in rows:
        parts = []
        for lib in ("jax", "jaxlite"):
            r = row.get(lib)
            if r is None or "error" in r:
                continue
            first = r["sizes"][0]["first_ms"]
            parts.append(
                f"{lib} first call {first:.1f} ms, peak RSS {r['peak_rss_mb']:.0f} MB"
            )
        lines.append(
            f"{row['procs']} processes{_oversubscribed(row['procs'])}: "
            + "; ".join(parts)
        )
    return lines


def mlp_table(rows):
    lines = [
        f"data-parallel MLP step {'-'.join(map(str, LAYERS))}, global batch {BATCH}, "
        "SGD, pmean of grads in jit(shard_map); ms (slowest process); "
        "ratio = jaxlite / JAX",
    ]
    head = (
        f"{'procs':>5}{'first ms':>20}{'':9}{'steady ms':>20}{'':9}"
        f"{'peak RSS MB':>18}{'loss after ' + str(LOSS_STEPS) + ' steps':>26}"
        "  agree"
    )
    sub = f"{'':5}" + (f"{'jax':>10}{'jaxlite':>10}{'ratio':>9}" * 2)
    sub += f"{'jax':>9}{'jaxlite':>9}{'jax':>13}{'jaxlite':>13}"
    lines += [head, sub, "-" * len(head)]
    for row in rows:
        j, m = row.get("jax", {}), row.get("jaxlite", {})
        cells = ""
        for key in ("first_ms", "steady_ms"):
            cells += _num(j.get(key), 10) + _num(m.get(key), 10)
            cells += _ratio(m.get(key), j.get(key), 9)
        for r in (j, m):
            rss = r.get("peak_rss_mb")
            cells += f"{rss:9.0f}" if rss is not None else f"{'-':>9}"
        for r in (j, m):
            loss = r.get("losses")
            cells += f"{loss[-1]:13.6f}" if loss else f"{'-':>13}"
        agree = row.get("agree")
        mark = "-" if agree is None else ("yes" if agree else "NO")
        lines.append(f"{row['procs']:>5}{cells}  {mark}{_oversubscribed(row['procs'])}")
    return lines


def _losses_agree(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= RTOL * np.abs(b)))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="fewer message sizes, repeats and steps"
    )
    parser.add_argument("--only", choices=sorted(PROCS), help="one program")
    parser.add_argument("--procs", help="comma-separated process counts")
    parser.add_argument("--backend", choices=("numpy", "native", "auto"))
    parser.add_argument(
        "--worker", nargs=6, metavar=("LIB", "PROGRAM", "N", "RANK", "PORT", "OUT")
    )
    opts = parser.parse_args(argv)
    if opts.worker:
        lib, program, n, rank, port, out_dir = opts.worker
        worker(lib, program, int(n), rank, port, out_dir, opts.quick)
        return

    libs = ["jax", "jaxlite"] if importlib.util.find_spec("jax") else ["jaxlite"]
    if libs == ["jaxlite"]:
        print("jax is not importable: running jaxlite alone")
    programs = [opts.only] if opts.only else list(PROCS)
    wanted = {int(p) for p in opts.procs.split(",")} if opts.procs else None
    results = {}
    with tempfile.TemporaryDirectory() as tmpdir:
        for program in programs:
            rows = []
            for n in PROCS[program]:
                if wanted is not None and n not in wanted:
                    continue
                row = {"procs": n}
                for lib in libs:
                    row[lib] = _summary(
                        run_config(lib, program, n, opts.quick, opts.backend, tmpdir)
                    )
                rows.append(row)
            results[program] = rows
    mlp_rows = results.get("mlp", [])
    reference = next(
        (r["jax"]["losses"] for r in mlp_rows if "losses" in r.get("jax", {})), None
    )
    for row in mlp_rows:
        if len(libs) == 2 and all("losses" in row[lib] for lib in libs):
            row["agree"] = _losses_agree(row["jaxlite"]["losses"], row["jax"]["losses"])
            row["agree_with_first_row_jax"] = _losses_agree(
                row["jaxlite"]["losses"], reference
            )

    versions = {}
    for rows in results.values():
        for row in rows:
            for lib in libs:
                if "version" in row.get(lib, {}):
                    versions[lib] = row[lib]["version"]
    print(
        f"multi-process SPMD, jaxlite over MPI vs JAX with gloo CPU collectives; "
        f"JAXLITE_BACKEND={opts.backend or os.environ.get('JAXLITE_BACKEND', '(unset)')}"
        f" ({platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, NumPy {np.__version__}, "
        + ", ".join(f"{lib} {v}" for lib, v in versions.items())
        + ")"
    )
    for program, rows in results.items():
        print()
        print(
            "\n".join(
                allreduce_table(rows) if program == "allreduce" else mlp_table(rows)
            )
        )
        for row in rows:
            for lib in libs:
                r = row.get(lib, {})
                if "error" in r:
                    print(
                        f"error: {program} on {row['procs']} processes with {lib}: "
                        f"{r['error']}"
                    )
                elif lib == "jaxlite" and not r.get("global_arrays", True):
                    note = (
                        f"note: {program} on {row['procs']} processes: jaxlite's jit "
                        "does not take global arrays yet; each process passed the "
                        "whole array"
                    )
                    print(note)
                if r.get("losses_agree_across_processes") is False:
                    print(
                        f"warning: {program} on {row['procs']} processes with {lib}: "
                        "the processes' losses differ"
                    )
            if row.get("agree") is False:
                print(
                    f"warning: mlp on {row['procs']} processes: jaxlite's losses "
                    f"{row['jaxlite']['losses']} differ from JAX's "
                    f"{row['jax']['losses']} (rtol {RTOL})"
                )
    print(
        json.dumps(
            {
                "benchmark": "distributed",
                "quick": opts.quick,
                "backend": opts.backend,
                "cores": os.cpu_count(),
                "results": results,
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1:])
