"""``grpo-lab study run PLAN --executor ray``: a study's runs as Ray tasks, their results written by the driver (issue
61). Part of :mod:`grpo_lab.study`; the optional extra ``pip install 'grpo-lab[ray]'``.

How it differs from ``--workers`` and ``--shard``: each (arm, seed) to train is one Ray task that asks for one CPU
(and one GPU, or the share ``gpus_per_run`` of one, where the cluster has GPUs), trains in a temporary directory of the machine that runs it and sends its
result and its per-step metrics back; the driver (the process that runs ``study run``) checks each result as it
checks a file it reads (:func:`grpo_lab.compare.result_problem`) and writes it atomically in the study's own
directories. So the workers need grpo-lab and the plan's packages installed, not the study's folder: no shared
filesystem. The driver prepares each arm's directory first (its settings, the start's evaluation), as a local
``study run`` does, and holds each run's lock from submission to writing, so a local ``study run`` of the same
plan never trains a run the cluster is training.

Failures: a worker process that dies (killed, out of memory) is retried by Ray up to ``retries`` times, the run
starting over; a run that raises is not retried (a bug is not fixed by a second try); either way nothing of that
run is written, the other runs go on, and the command ends naming each failed run. Checkpoints stay with the
worker: a run interrupted here starts over.

``address`` joins an existing cluster (``ray start --head`` on one machine, ``ray start --address`` on the
others); without it a local cluster of ``num_cpus`` CPUs is started for this command and stopped after it.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from ..compare import is_finished, result_problem, shared_settings, trained_result
from ..io import (DirLock, LockInUse, fingerprint, metrics_path, result_path, run_name, write_json_atomic,
                  write_text_atomic)
from .plan import Plan
from .run import finished_in, prepare_dirs, record_plan, remove_lock_dirs, shard_units, train_dir

# Fault injection for the test that kills a worker mid-run: when this variable names a file that does not exist,
# the first task to reach the end of its first training step creates the file and ends its process at once.
DIE_ONCE_ENV = "GRPO_LAB_RAY_DIE_ONCE"


def _die_once_callback(marker: str):
    from transformers import TrainerCallback

    class DieOnce(TrainerCallback):
        def on_step_end(self, args, state, control, **kw):
            try:
                fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                return
            os.write(fd, str(os.getpid()).encode())
            os.close(fd)
            os._exit(17)  # no cleanup, no exception: as a worker killed from outside

    return DieOnce()


def train_task(base, method: str, seed: int, start: dict, expected: dict | None) -> dict:
    """One run on a Ray worker (a plain function, made a remote task by :func:`run_on_ray`): trained in a
    temporary directory, then ``{"result": ..., "metrics": the per-step JSONL text, "host", "seconds"}``."""
    import socket

    marker = os.environ.get(DIE_ONCE_ENV)
    callbacks = (_die_once_callback(marker),) if marker and not os.path.exists(marker) else ()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="grpo-lab-ray-") as tmp:
        res = trained_result(Path(tmp), base, method, seed, start, expected, progress=False, callbacks=callbacks)
        jsonl = metrics_path(tmp, method, seed)
        metrics = jsonl.read_text() if jsonl.is_file() else None
    return {"result": res, "metrics": metrics, "host": socket.gethostname(),
            "seconds": round(time.perf_counter() - t0, 1)}


def keep(directory: Path, arm, seed: int, sent: dict) -> Path:
    """Write a result that came back from a worker into ``directory`` (the arm's training directory), after the
    checks a result read from disk passes; a result that fails them is refused, naming the run, and nothing of it
    is written. The metrics go first, the result last (a result file present means its run is complete)."""
    res = sent.get("result")
    try:
        why = result_problem(res, arm.method, seed, shared_settings(arm.config))
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        why = f"cannot be read as a result ({type(e).__name__}: {str(e)[:160]})"
    if why is None and res.get("fingerprint") != fingerprint(shared_settings(arm.config)):
        why = f"carries another settings fingerprint ({res.get('fingerprint')})"
    if why is not None:
        raise ValueError(f"{arm.name} seed {seed}: the result sent back {why}; not written")
    out, log = result_path(directory, arm.method, seed), metrics_path(directory, arm.method, seed)
    out.parent.mkdir(parents=True, exist_ok=True)
    if sent.get("metrics") is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(log, sent["metrics"])
    return write_json_atomic(out, res)


def _ray():
    try:
        import ray
    except ImportError:
        raise ImportError("--executor ray needs Ray: pip install 'grpo-lab[ray]' (or pip install ray)") from None
    return ray


def check_gpus_per_run(gpus_per_run: float | None) -> None:
    """``gpus_per_run``: None (one GPU a run where the cluster has GPUs) or a share of one card in (0, 1]."""
    if gpus_per_run is None:
        return
    if isinstance(gpus_per_run, bool) or not isinstance(gpus_per_run, (int, float)) or not 0 < gpus_per_run <= 1:
        raise ValueError(f"gpus_per_run must be a share of one GPU in (0, 1], got {gpus_per_run!r} (0.25: four runs "
                         "a card)")


def run_on_ray(plan: Plan, shard=(1, 1), address: str | None = None, num_cpus: int | None = None,
               retries: int = 1, echo=print, gpus_per_run: float | None = None) -> dict:
    """Train the runs of ``plan`` (this shard's) that are missing, one Ray task each; return ``{"trained": [...],
    "finished": [...], "failed": [...]}`` (labels ``"<arm> seed <s>"``). Raises at the end, naming them, when any run
    failed; the runs that finished are written and kept.

    ``gpus_per_run``: the share of a GPU each run asks for where the cluster has GPUs (default 1). A study run of
    study 3's shapes used 1.25 GiB of an H200, and four on one card gave 3.1x the throughput of one at a time, each
    run 1.2-1.3x slower (docs/gpu.md, 2026-11-27): 0.25 puts four on a card. Refused on a cluster without GPUs,
    where such tasks would wait forever."""
    check_gpus_per_run(gpus_per_run)
    ray = _ray()
    mine = [(n, s) for n, s in shard_units(plan, shard) if finished_in(plan, plan.arms[n], s) is None]
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=address, num_cpus=None if address else num_cpus, include_dashboard=False,
                 log_to_driver=False, configure_logging=False)
    trained, done, failed, locks, pending = [], [], [], {}, {}
    try:
        gpus = ray.cluster_resources().get("GPU", 0) > 0
        if gpus_per_run is not None and not gpus:
            raise ValueError(f"gpus_per_run={gpus_per_run:g}, but the Ray cluster has no GPUs: leave it unset to "
                             "train on CPUs")
        share = (gpus_per_run or 1) if gpus else 0
        prepared = prepare_dirs(plan, mine, echo)  # the start is evaluated here if no directory of the study has it
        env = {"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"), "TOKENIZERS_PARALLELISM": "false",
               **({DIE_ONCE_ENV: os.environ[DIE_ONCE_ENV]} if os.environ.get(DIE_ONCE_ENV) else {})}
        task = ray.remote(train_task).options(num_cpus=1, num_gpus=share, max_retries=retries,
                                              retry_exceptions=False, runtime_env={"env_vars": env})
        for name, seed in mine:
            arm = plan.arms[name]
            d = train_dir(plan, arm).resolve()
            label = f"{arm.name} seed {seed}"
            lock_dir = d / "locks" / run_name(arm.method, seed)
            lock = DirLock(lock_dir)
            try:
                lock.__enter__()
            except LockInUse as e:
                echo(f"{label}: another process is training it ({e}); skipped here")
                continue
            locks[label] = (lock, lock_dir)
            if is_finished(d, arm.config, arm.method, seed, echo):
                done.append(label)
                continue
            start, expected = prepared[d]
            pending[task.remote(arm.config, arm.method, seed, start, expected)] = (arm, seed, d, label)
        total = len(pending)
        where = "a local cluster" if started_here and not address else (address or "the cluster already joined")
        res = ray.cluster_resources()
        echo(f"{total} run(s) sent to Ray ({where}: {res.get('CPU', 0):g} CPU(s), {res.get('GPU', 0):g} GPU(s)); "
             f"each asks for 1 CPU{f' and {share:g} GPU' if gpus else ''}")
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            arm, seed, d, label = pending.pop(ready[0])
            try:
                sent = ray.get(ready[0])
                keep(d, arm, seed, sent)
                record_plan(plan, d, arm.method, seed)
                trained.append(label)
                echo(f"{label}: trained on {sent.get('host')} in {sent.get('seconds')} s and written "
                     f"({len(trained) + len(failed)}/{total})")
            except Exception as e:  # a run that failed is named, the others go on; nothing of it is written
                failed.append(label)
                last = str(e).strip().splitlines()[-1][:300] if str(e).strip() else ""
                echo(f"{label}: FAILED ({type(e).__name__}: {last}); nothing of it written")
    finally:
        for lock, lock_dir in locks.values():
            lock.__exit__(None, None, None)
            remove_lock_dirs(lock_dir)
        if started_here:
            ray.shutdown()
    if failed:
        raise RuntimeError(f"study run --executor ray: {len(failed)} run(s) failed: {', '.join(failed)}; the "
                           f"{len(trained)} finished run(s) are kept: run again to train the rest")
    return {"trained": trained, "finished": done, "failed": failed}
