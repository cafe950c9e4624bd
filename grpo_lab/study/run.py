"""``grpo-lab study run``: where each arm's runs live, the work units, shards, locks and local workers. Part of
:mod:`grpo_lab.study`."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

from ..compare import evaluation_problems, is_finished, open_comparison, pace_callback, prepare, train_run
from ..io import DirLock, LockInUse, read_json, result_path, run_name
from .plan import Arm, Plan, PlanError, _rel, arm_dirs, default_dir  # noqa: F401 (re-exported)


# ---------------------------------------------------------------------------------------------------------------
# Where each arm's runs live, and the work units of ``study run``.
# ---------------------------------------------------------------------------------------------------------------

def train_dir(plan: Plan, arm: Arm) -> Path:
    """Where ``study run`` trains an arm's missing runs: its default directory, or its first ``dirs`` entry,
    which must then be a plain path (a glob names directories that exist, not one to create)."""
    if arm.dirs is None:
        return default_dir(plan, arm)
    first = arm.dirs[0]
    if any(ch in first for ch in "*?["):
        found = arm_dirs(plan, arm)
        if len(found) == 1:
            return found[0]
        raise PlanError(f"{plan.path}: [arms.{arm.name}] dirs: {first!r} is a pattern matching {len(found)} "
                        "directories; training needs one plain directory first")
    return plan.home / first


def finished_in(plan: Plan, arm: Arm, seed: int) -> Path | None:
    """The directory of the arm's (``dirs``) that holds a result file for ``seed``, other than a training directory
    of this study's own, or None: an arm that reads another study's runs in place (study 4 reads study 3's) trains
    only the seeds none of its directories holds, and never opens, locks or resumes another study's directory.
    Not checked here: ``study report`` reads and checks every file; a result in this study's own training
    directory is checked (and a damaged one retrained) by ``study run`` itself."""
    own = train_dir(plan, arm).resolve()
    ours = own.is_relative_to(plan.home.resolve())
    for d in arm_dirs(plan, arm):
        if (d.resolve() != own or not ours) and result_path(d, arm.method, seed).is_file():
            return d
    return None


def units(plan: Plan) -> list[tuple[str, int]]:
    """Every (arm, seed) the plan names, seed by seed, every arm within a seed (an interrupted study then holds
    every arm at the same number of seeds)."""
    seeds = sorted({s for a in plan.arms.values() for s in a.seeds})
    return [(name, s) for s in seeds for name, arm in plan.arms.items() if s in arm.seeds]


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` -> (K, N), 1 <= K <= N."""
    m = re.fullmatch(r"\s*([0-9]+)\s*/\s*([0-9]+)\s*", str(text))
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise ValueError(f"--shard is K/N with 1 <= K <= N (the K-th of N slices), got {text!r}")
    return int(m.group(1)), int(m.group(2))


def shard_units(plan: Plan, shard: tuple[int, int] = (1, 1)) -> list[tuple[str, int]]:
    """The K-th of N slices of :func:`units`: every N-th unit from the K-th, so the slices are disjoint, together
    whole, and balanced across arms and seeds (a Slurm array, a Ray job or a Kubernetes indexed job runs one
    slice each on a shared filesystem; a run's lock keeps one trainer per run)."""
    k, n = shard
    return [u for i, u in enumerate(units(plan)) if i % n == k - 1]


# ---------------------------------------------------------------------------------------------------------------
# study run
# ---------------------------------------------------------------------------------------------------------------

def _take_lock(directory: Path):
    """:class:`DirLock` on ``directory``, tried once: ``(lock, None)``, or ``(None, the LockInUse naming the
    holder)`` where another process holds it. Any other refusal (this process's own nested lock, a symbolic link
    where the lock file goes) raises: no wait mends it."""
    try:
        return DirLock(directory).__enter__(), None
    except LockInUse as e:
        return None, e


def _wait_lock(directory: Path, echo, wait: float = 2.0, most: float = 12 * 3600):
    """:func:`_take_lock`, waiting while another process holds the directory (it may be evaluating the start for
    every shard), at most ``most`` seconds; returns the lock."""
    t0 = time.monotonic()
    lock, busy = _take_lock(directory)
    if busy is not None:
        echo(f"waiting: {busy}")
    while busy is not None:
        if time.monotonic() - t0 > most:
            raise busy
        time.sleep(wait)
        lock, busy = _take_lock(directory)
    return lock


def _open(plan: Plan, directory: Path, arms: list, echo) -> dict:
    """The comparison in ``directory`` for these arms (one setting, their methods and seeds): created, or checked
    against the plan (a directory of other settings is refused, naming the fields)."""
    methods = list(dict.fromkeys(a.method for a in arms))
    seeds = sorted({s for a in arms for s in a.seeds})
    try:  # compare's own: a new directory gets its config, an existing one must hold these settings
        return open_comparison(directory, methods, seeds, arms[0].config,
                               command=f"grpo-lab study run {plan.path.name}")
    except ValueError as e:
        raise ValueError(f"{e} (the plan's arm {arms[0].name}: directory != plan)") from None


def _share_start(plan: Plan, directory: Path, conf: dict, echo) -> None:
    """Copy the start's evaluation from another directory of the study that evaluated the same start (the same
    :func:`grpo_lab.runner.start_key`: the learning rate or the method do not change it), instead of evaluating it
    again (minutes on a real model). The copy records where it came from."""
    from ..io import write_json_atomic
    from ..runner import start_key

    if (directory / "start.json").is_file():
        return
    key = start_key(conf["base"])
    for arm in plan.arms.values():
        other = train_dir(plan, arm).resolve()
        if other == directory or not (other / "start.json").is_file() or start_key(arm.config) != key:
            continue
        try:
            start = read_json(other / "start.json", "start evaluation")
        except ValueError:
            continue
        if evaluation_problems(start, problems=arm.config.eval_problems) is None:
            write_json_atomic(directory / "start.json", {**start, "copied_from": _rel(other, directory)})
            echo(f"{directory}: the start's evaluation copied from {other} (the same start)")
            return


def _has_result(plan: Plan, unit: tuple[str, int]) -> bool:
    """Whether the run ``unit`` = (arm, seed) has its result file, whoever trained it (run_study's count of the runs
    left, and of what its workers trained)."""
    arm = plan.arms[unit[0]]
    return result_path(train_dir(plan, arm), arm.method, unit[1]).is_file()


def run_study(plan: Plan, shard=(1, 1), workers: int = 1, progress: bool = False, echo=print,
              worker: tuple[int, int] | None = None, start_by: float | None = None) -> dict:
    """Train the runs of ``plan`` (this shard's) that are missing; return ``{"trained": [...], "finished": [...],
    "not_started": [...]}`` (with ``workers`` > 1: the runs that finished while the workers ran, and, under
    ``start_by``, the ones still missing when they stopped).

    Each arm's comparison directory is prepared once (its config, the start's evaluation, the trainer settings)
    under the directory's lock; each run is trained under a lock of its own, so shards and workers on a shared
    filesystem never train one run twice. A run is never trained with settings other than its arm's: a directory
    of other settings is refused, naming the fields. ``workers`` > 1 starts that many local processes (one torch
    thread each unless the plan sets ``threads``); this process only checks the directories and waits, holding no
    model. Worker ``w`` of ``n`` trains every ``n``-th run from the ``w``-th first, then sweeps the shard's other
    runs, skipping those another process holds: a worker that dies (out of memory, say) leaves its runs to the
    others, and an interrupted run starts over. ``start_by`` (seconds since the epoch, ``--start-within``): no run
    starts after it; the runs in flight finish and the rest are left for the next ``study run``, so a session or
    an allocation that ends at a known time loses no half-trained run."""
    mine = [(name, seed) for name, seed in shard_units(plan, shard) if finished_in(plan, plan.arms[name], seed) is None]
    left = sum(not _has_result(plan, u) for u in mine)  # runs left to train (the pace line; no more workers)
    if worker is not None:
        w, n = worker
        mine = mine[w - 1::n] + [u for i, u in enumerate(mine) if i % n != w - 1]
    if workers > 1 and worker is None:  # no more processes (each importing torch) than runs left to train
        if left < workers:
            echo(f"{left} run(s) left to train: {max(left, 1)} worker(s), not {workers}")
            workers = max(left, 1)
    spawning = workers > 1 and worker is None
    # the start's evaluation loads the model: with --workers the workers do it, not the parent
    prepared = prepare_dirs(plan, mine, echo, evaluate=not spawning)
    if spawning:  # what the workers did, read from the files they wrote (the parent trains nothing itself)
        had = [u for u in mine if _has_result(plan, u)]
        _spawn(plan, shard, workers, echo, start_by)
        now = {u: _has_result(plan, u) for u in mine}
        new = [u for u in mine if u not in had and now[u]]
        rest = [u for u in mine if not now[u]]  # left by the deadline (or held by another command)
        late = rest if start_by is not None else []
        return {key: [f"{n} seed {s}" for n, s in us]
                for key, us in (("trained", new), ("finished", had), ("not_started", late))}
    trained, done, waiting = [], [], []
    for name, seed in mine:
        arm = plan.arms[name]
        d = train_dir(plan, arm).resolve()
        start, expected = prepared[d]
        label = f"{arm.name} seed {seed}"
        lock_dir = d / "locks" / run_name(arm.method, seed)
        try:
            with DirLock(lock_dir):
                if is_finished(d, arm.config, arm.method, seed, echo):
                    done.append(label)
                elif start_by is not None and time.time() > start_by:
                    waiting.append(label)
                else:
                    echo(f"training {label} in {d}")
                    pace = () if trained or arm.config.policy == "tabular" else (  # issue 61: the pace, once
                        pace_callback(arm.config, left, START_SECONDS.get(d), echo, workers=worker[1] if worker else 1,
                                      advice=False),)
                    train_run(d, arm.config, arm.method, seed, start, expected, progress, callbacks=pace)
                    record_plan(plan, d, arm.method, seed)
                    trained.append(label)
        except LockInUse as e:
            echo(f"{label}: another process is training it ({e}); skipped here")
        remove_lock_dirs(lock_dir)
    if waiting:
        echo(f"not started, the time --start-within gave having passed: {', '.join(waiting)} (run again to resume)")
    return {"trained": trained, "finished": done, "not_started": waiting}


def prepare_dirs(plan: Plan, units_: list[tuple[str, int]], echo, evaluate: bool = True) -> dict:
    """Open each training directory these (arm, seed) units need, once, under the directory's lock: created or
    checked against the plan (:func:`_open`, with every arm that trains there); with ``evaluate``, the start's
    evaluation shared from a sibling directory or made (:func:`_share_start`, compare's ``prepare``). Returns
    ``{directory: (start, expected trainer settings)}`` (empty without ``evaluate``). For ``study run``'s local
    workers and for ``--executor ray``.

    A directory another process is preparing is left for last: the workers of one study then evaluate different
    starts side by side instead of all waiting on the first (study 7's two starts took about 17 minutes each on a
    CPU core, one after the other, while the second worker waited)."""
    dirs = list(dict.fromkeys(train_dir(plan, plan.arms[name]).resolve() for name, _ in units_))
    prepared, later = {}, []
    for d in dirs:
        lock, busy = _take_lock(d)
        if busy is not None:  # another process is preparing it: come back to it once the others are prepared
            later.append(d)
            continue
        _prepare_one(plan, d, lock, prepared, evaluate, echo)
    for d in later:
        _prepare_one(plan, d, _wait_lock(d, echo), prepared, evaluate, echo)
    return {d: prepared[d] for d in dirs if d in prepared}


def _prepare_one(plan: Plan, d: Path, lock, prepared: dict, evaluate: bool, echo) -> None:
    """:func:`prepare_dirs`' work on one directory whose lock ``lock`` this process holds (released here)."""
    try:
        conf = _open(plan, d, [a for a in plan.arms.values() if train_dir(plan, a).resolve() == d], echo)
        if evaluate:
            _share_start(plan, d, conf, echo)
            fresh, t0 = not (d / "start.json").is_file(), time.perf_counter()
            prepared[d] = prepare(d, conf, echo)
            if fresh:  # the start was evaluated here: the pace line counts its time (issue 81)
                START_SECONDS[d] = time.perf_counter() - t0
    finally:
        lock.__exit__(None, None, None)


START_SECONDS: dict = {}  # directory -> seconds its start's evaluation took in this process (the pace line's)


def remove_lock_dirs(lock_dir: Path) -> None:
    """Remove a run's lock folder and the ``locks/`` folder above it once empty (the lock files are gone with
    their owners; so are their folders)."""
    for empty in (lock_dir, lock_dir.parent):
        try:
            empty.rmdir()
        except OSError:
            pass


def plan_record(directory: Path, method: str, seed: int) -> Path:
    """Where ``study run`` records the plan a run was trained under: ``<directory>/plans/<run name>.json``."""
    return directory / "plans" / f"{run_name(method, seed)}.json"


def record_plan(plan: Plan, directory: Path, method: str, seed: int) -> None:
    """Record the plan's analysis fingerprint beside a run just trained (``study report`` compares it with the plan
    as it is then: an edit after the runs is a deviation, git or no git)."""
    from ..io import write_json_atomic

    plan_record(directory, method, seed).parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(plan_record(directory, method, seed),
                      {"plan": plan.analysis_fingerprint, "analysis": plan.analysis_normalized, "file": plan.path.name,
                       "trained": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})


def _spawn(plan: Plan, shard, workers: int, echo, start_by: float | None = None) -> None:
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    by = [] if start_by is None else ["--internal-start-by", repr(float(start_by))]  # one deadline for every worker
    procs = [subprocess.Popen([sys.executable, "-m", "grpo_lab.cli", "study", "run", str(plan.path),
                               "--shard", f"{shard[0]}/{shard[1]}", "--internal-worker-slice", f"{w}/{workers}", *by],
                              env=env)
             for w in range(1, workers + 1)]
    codes = [p.wait() for p in procs]
    if any(codes):
        raise RuntimeError(f"study run: worker(s) {', '.join(str(i + 1) for i, c in enumerate(codes) if c)} of "
                           f"{workers} failed (exit {', '.join(str(c) for c in codes if c)}); their finished runs "
                           "are kept: run again to resume")
    echo(f"{workers} workers finished")


