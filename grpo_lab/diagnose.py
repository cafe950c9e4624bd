"""Did an existing GRPO run starve? Read its logs and write a starvation report (``grpo-lab inspect``).

Used by ``grpo-lab inspect`` (docs/guide/profile.md); no notebook uses it yet. Three kinds of
log are understood:

- **TRL**: an output directory or a ``trainer_state.json`` (its ``log_history`` holds
  ``frac_reward_zero_std``, ``reward`` and ``reward_std`` per logging step). TRL logs the
  fraction of groups with zero reward spread, but not which of them were all-fail and which
  all-pass, nor the group size.
- **grpo-lab**: a ``metrics.jsonl`` written by :class:`grpo_lab.trl.StarvationCallback` or by
  ``grpo-lab compare`` (a comparison directory works too). These hold the all-fail / all-pass
  split and the per-prompt success histogram directly.
- **CSV exports** (W&B "Export CSV", TensorBoard's CSV download) with a step column and a
  ``frac_reward_zero_std`` column (a ``train/`` prefix is fine).

From mean reward mu and the degenerate fraction d at group size G, the implied per-prompt
success distribution is the Beta(mu*kappa, (1-mu)*kappa) whose E[p^G + (1-p)^G] equals d:
one concentration kappa fits, because the degeneracy of a Beta with fixed mean falls
monotonically from 1 (kappa -> 0, every prompt always or never solved) to the i.i.d. value
mu^G + (1-mu)^G (kappa -> inf). That is a *model* of the population (notebook 02 shows that
different populations can share the same mean and degeneracy); the report says so.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .io import read_jsonl, run_name, write_text_atomic
from .report import md_table


class LogFormatError(ValueError):
    """The file is not a log grpo-lab can read; the message says what was expected."""


@dataclass
class RunLog:
    kind: str  # "trl" | "grpo_lab" | "csv" | "verl"
    source: Path
    rows: list[dict]  # per logging step: step, reward, degenerate, and whatever else is known
    group_size: int | None = None
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # rows that lack keys: shown in the report and by the CLI
    n_rows: int | None = None  # rows in the file, when ``rows`` holds them averaged per step (a CSV export)
    step_unit: str = "step"  # what one row spans: "step", or "step range" for a CSV export averaged into ranges

    @property
    def n_runs(self) -> int:
        return len({r.get("run") for r in self.rows})

    def methods(self) -> dict:
        """``{method: {run: [rows]}}`` for a log whose rows name their run (``<method>-seed<k>``: a comparison's
        metrics.jsonl); empty otherwise. A comparison is read per method, never pooled across methods."""
        out: dict = {}
        for r in self.rows:
            run = r.get("run")
            if isinstance(run, str) and "-seed" in run:
                out.setdefault(run.rsplit("-seed", 1)[0], {}).setdefault(run, []).append(r)
        return out if len(out) > 0 and sum(len(v) for v in out.values()) == self.n_runs else {}

    def series(self, key: str):
        """``(steps, values)`` sorted by step; with several runs in one log, the mean over runs at each step."""
        by_step: dict = {}
        for r in self.rows:
            v = r.get(key)
            if v is not None and r.get("step") is not None and np.isfinite(v):
                by_step.setdefault(r["step"], []).append(v)
        if not by_step:
            return np.array([]), np.array([])
        steps = np.array(sorted(by_step), dtype=float)
        return steps, np.array([np.mean(by_step[s]) for s in sorted(by_step)], dtype=float)


def _num(x):
    if isinstance(x, bool) or x is None:
        return None
    if isinstance(x, (int, float)):
        return float(x)
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def _from_trl(path: Path) -> RunLog:
    try:
        state = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise LogFormatError(f"{path} is not valid JSON ({e})") from None
    if not isinstance(state, dict) or not isinstance(state.get("log_history"), list):
        raise LogFormatError(f"{path} has no 'log_history' list: not a transformers/TRL trainer_state.json")
    rows = []
    for entry in state["log_history"]:
        if not isinstance(entry, dict) or "frac_reward_zero_std" not in entry:
            continue
        rows.append(dict(step=_num(entry.get("step")), reward=_num(entry.get("reward")),
                         reward_std=_num(entry.get("reward_std")), degenerate=_num(entry.get("frac_reward_zero_std"))))
    if not rows:
        raise LogFormatError(f"{path} has a log_history but no GRPO metrics (no 'frac_reward_zero_std'): "
                             "not a GRPOTrainer run, or logging never happened")
    return RunLog("trl", path, rows)


def _run_of(row: dict) -> str | None:
    """The run a metrics row belongs to (``<method>-seed<k>``), or None when the row does not say (a missing or
    null estimator or seed)."""
    est, seed = row.get("estimator"), row.get("seed")
    if not isinstance(est, str) or isinstance(seed, bool) or not isinstance(seed, int):
        return None
    return run_name(est, seed)


def _lucky_fields(r: dict, i: int, bad: dict) -> dict:
    """The lucky-success fields of one metrics row, each read as ``--resume`` reads a result: a largest advantage
    that is a finite number, a one-success share within [0, 1], a completion whose advantage is a finite number and
    whose group rewards are a list; anything else is left out and counted by name in ``bad`` (field -> lines)."""
    def finite(x):
        return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)

    out = {}
    top = r.get("starvation/max_advantage")
    if top is not None and not (finite(top) and abs(top) <= MAX_ADVANTAGE):  # issue 83: 1e308 was "the largest"
        bad.setdefault("starvation/max_advantage", []).append(f"line {i} ({top!r:.30})")
        top = None
    out["max_advantage"] = float(top) if top is not None else None
    near = r.get("starvation/near_degenerate_share")
    if near is not None and not (finite(near) and 0 <= near <= 1):
        bad.setdefault("starvation/near_degenerate_share", []).append(f"line {i} ({near!r:.30})")
        near = None
    out["near_degenerate"] = float(near) if near is not None else None
    fluke = r.get("starvation/max_advantage_completion")
    if fluke is not None and not (isinstance(fluke, dict) and finite(fluke.get("advantage"))
                                  and abs(fluke["advantage"]) <= MAX_ADVANTAGE
                                  and isinstance(fluke.get("group_rewards"), list)
                                  and isinstance(fluke.get("completion", ""), str)  # issue 83: a number or null
                                  and (top is None or fluke["advantage"] <= top + 1e-6 * max(1.0, abs(top)))):
        bad.setdefault("starvation/max_advantage_completion", []).append(f"line {i}")
        fluke = None
    out["fluke"] = fluke
    return out


MAX_ADVANTAGE = 1e6  # no estimator gives a 0/1 (or any sanely scaled) reward an advantage this large: damaged


def _from_jsonl(path: Path, run: str | None = None) -> RunLog:
    """A grpo-lab metrics log: a comparison's ``metrics.jsonl`` (rows name their run) or one run's
    ``metrics/<method>-seed<k>.jsonl`` (``run``: its name)."""
    rows, G, bad = [], None, {}
    lines = read_jsonl(path, error=LogFormatError, hint="; is it a metrics.jsonl?")
    if lines and isinstance(lines[0][1].get("data"), dict) and "step" in lines[0][1]:
        return _from_verl(path, lines)
    for i, r in lines:
        if "starvation/acr" not in r:
            raise LogFormatError(f"{path}, line {i}: no 'starvation/acr' key: not a grpo-lab metrics.jsonl (nor "
                                 "verl's file log: one {'step', 'data'} object per line)")
        hist = r.get("starvation/success_hist")
        if hist is not None and not (isinstance(hist, list) and len(hist) >= 3 and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x >= 0
                for x in hist)):
            raise LogFormatError(f"{path}, line {i}: 'starvation/success_hist' must be a list of G + 1 >= 3 "
                                 f"non-negative counts, got {str(hist)[:60]}")
        if isinstance(hist, list):
            if G is not None and len(hist) - 1 != G:
                raise LogFormatError(f"{path}, line {i}: success histogram of length {len(hist)} after rows with "
                                     f"G = {G}: one log, one group size")
            G = len(hist) - 1
        step = r.get("step")
        if step is not None and not (isinstance(step, (int, float)) and not isinstance(step, bool)
                                     and math.isfinite(step)):  # issue 83: a NaN step was shown as "step nan"
            bad.setdefault("step", []).append(f"line {i} ({step!r:.30})")
            step = None
        rows.append(dict(step=_num(step), reward=_num(r.get("reward")), degenerate=_num(r["starvation/acr"]),
                         all_fail=_num(r.get("starvation/all_fail")), all_pass=_num(r.get("starvation/all_pass")),
                         success_hist=hist if isinstance(hist, list) else None, **_lucky_fields(r, i, bad),
                         run=run or _run_of(r)))
    if not rows:
        raise LogFormatError(f"{path} is empty")
    warnings = [f"{len(lines)} row(s) of {path.name} have a {field} that is not what grpo-lab logs (left out, never "
                f"averaged in): {', '.join(lines[:5])}{', ...' if len(lines) > 5 else ''}"
                for field, lines in bad.items()]
    return RunLog("grpo_lab", path, rows, group_size=G, warnings=warnings)


def _from_run_logs(path: Path) -> RunLog:
    """An interrupted comparison (its finished and running runs' ``metrics/*.jsonl``, no ``metrics.jsonl`` yet):
    every run's log, each row tagged with its run."""
    files = sorted((path / "metrics").glob("*.jsonl"))
    logs = [_from_jsonl(f, run=f.stem) for f in files]
    sizes = {log.group_size for log in logs if log.group_size}
    if len(sizes) > 1:
        raise LogFormatError(f"{path / 'metrics'}: runs with group sizes {sorted(sizes)}: one comparison, one G")
    log = RunLog("grpo_lab", path / "metrics", [r for x in logs for r in x.rows], group_size=sizes.pop() if sizes
                 else None, warnings=[w for x in logs for w in x.warnings])
    log.notes.append(f"read from the {len(files)} per-run logs in metrics/ (no metrics.jsonl: the comparison has not "
                     "finished)")
    return log


# verl's metric names (verl/trainer/ppo/metric_utils.py and its V1 replay buffer, verl 0.9.1)
VERL_REWARD = "critic/score/mean"  # the mean sequence score of the step's batch
VERL_EVICTED = "training/filter_groups/evicted_samples"  # samples of degenerate groups dropped (filter_groups on)
VERL_SURPLUS = "training/filter_groups/discarded_surplus_samples"  # informative samples generated beyond the batch


def _from_verl(path: Path, lines: list[tuple[int, dict]]) -> RunLog:
    """verl's file log (``trainer.logger=[..., 'file']``: one ``{"step": s, "data": {metric: value}}`` per line).

    verl logs no per-group statistic by itself. With ``algorithm.filter_groups`` on, it logs the samples of the
    degenerate groups it dropped (``training/filter_groups/evicted_samples``) and of the informative ones it did
    not need (``.../discarded_surplus_samples``); the samples trained on are ``perf/total_num_tokens`` divided by
    the mean prompt + response length (the batch's tokens over its mean tokens per sample). The degenerate
    fraction of the groups generated is then evicted / (evicted + trained + surplus)."""
    rows, unreadable = [], []
    for i, r in lines:
        data = r.get("data")
        if not isinstance(data, dict):
            raise LogFormatError(f"{path}, line {i}: not a verl file-log row (one {{'step', 'data'}} object per line)")
        degenerate = evicted = None
        if VERL_EVICTED in data and (_num(data.get(VERL_EVICTED)) is None
                                     or not math.isfinite(_num(data.get(VERL_EVICTED)))):
            unreadable.append(f"line {i} ({data.get(VERL_EVICTED)!r})")  # not a count: no degenerate fraction
        elif VERL_EVICTED in data:
            evicted = _num(data.get(VERL_EVICTED))
            tokens, plen, rlen = (_num(data.get(k)) for k in ("perf/total_num_tokens", "prompt_length/mean",
                                                               "response_length/mean"))
            if tokens is not None and plen is not None and rlen is not None and plen + rlen > 0:
                trained = tokens / (plen + rlen)
                generated = evicted + trained + (_num(data.get(VERL_SURPLUS)) or 0.0)
                degenerate = evicted / generated if generated > 0 else None
        rows.append(dict(step=_num(r.get("step")), reward=_num(data.get(VERL_REWARD)), degenerate=degenerate,
                         evicted=evicted))
    if not rows:
        raise LogFormatError(f"{path} is empty")
    log = RunLog("verl", path, rows)
    if unreadable:
        log.warnings.append(f"{len(unreadable)} row(s) have a {VERL_EVICTED} that is not a number, so no degenerate "
                            f"fraction for their steps: {', '.join(unreadable[:3])}{' ...' if len(unreadable) > 3 else ''}")
    steps = [row["step"] for row in rows if row["step"] is not None]
    if len(steps) != len(set(steps)):
        log.notes.append(f"{len(steps) - len(set(steps))} step(s) appear more than once (a resumed run logs some "
                         "steps again); rows at one step are averaged")
    return log


CSV_POINTS = 10_000  # an export with more distinct steps is averaged into this many equal-width step ranges
CSV_MB_PER_S = 4.0  # measured reading rate of a W&B export (docs/benchmarks.md), for the time estimate


def _from_csv(path: Path) -> RunLog:
    """A W&B-style CSV export, streamed: each row keeps three floats (step, degenerate fraction, reward), so a
    100 MB export of 3.9M rows fits in about 100 MB; rows at one step are averaged (as :meth:`RunLog.series`
    does), and more than :data:`CSV_POINTS` distinct steps are averaged into that many step ranges."""
    from array import array

    steps, degs, rews = array("d"), array("d"), array("d")
    n_rows = no_step = no_reward = 0
    try:
        with path.open(newline="", encoding="utf-8-sig") as f:  # spreadsheet exports often start with a BOM
            reader = csv.reader(f)
            cols = next(reader, None)
            if not cols:
                raise LogFormatError(f"{path} has no rows")

            def find(*names):
                return next((i for i, c in enumerate(cols) if c.split("/")[-1] in names), None)

            step, zero, reward = find("Step", "step", "_step", "global_step"), find("frac_reward_zero_std"), find("reward")
            if step is None or zero is None:
                raise LogFormatError(f"{path}: a CSV export needs a step column and a frac_reward_zero_std column; "
                                     f"found {', '.join(cols[:8])}")
            nan = float("nan")
            for row in reader:
                n_rows += 1
                d = _num(row[zero]) if zero < len(row) else None
                if d is None:
                    continue
                s = _num(row[step]) if step < len(row) else None
                r = _num(row[reward]) if reward is not None and reward < len(row) else None
                no_step += s is None
                no_reward += r is None
                steps.append(nan if s is None else s)
                degs.append(d)
                rews.append(nan if r is None else r)
    except (csv.Error, UnicodeDecodeError) as e:
        raise LogFormatError(f"{path} is not a readable CSV ({e})") from None
    if n_rows == 0:
        raise LogFormatError(f"{path} has no rows")
    st, de, rw = (np.frombuffer(a, dtype=float) if len(a) else np.zeros(0) for a in (steps, degs, rews))
    bad = np.flatnonzero(np.isfinite(de) & ((de < 0) | (de > 1)))
    if bad.size:
        i = int(bad[0])
        raise LogFormatError(f"{path}: row {i} (step {st[i]:g}) has degenerate = {de[i]}, not a fraction in [0, 1]; "
                             "is this the right column?")
    log = RunLog("csv", path, [], n_rows=n_rows)
    for missing, what in ((no_step, "a step"), (no_reward if reward is not None else len(st), "a mean reward")):
        if missing:
            log.warnings.append(f"{missing} of {len(st)} rows lack {what}; they are left out of that series")
    keep = np.isfinite(st) & np.isfinite(de)
    st, de, rw = st[keep], de[keep], rw[keep]
    if not st.size:
        return log
    uniq, where = np.unique(st, return_inverse=True)
    if uniq.size > CSV_POINTS:  # equal-width step ranges, each reported at its mean step
        edges = np.linspace(uniq[0], uniq[-1], CSV_POINTS + 1)
        where = np.clip(np.searchsorted(edges, st, side="right") - 1, 0, CSV_POINTS - 1)
        log.notes.append(f"{uniq.size} distinct steps averaged into {CSV_POINTS} equal step ranges")
        log.step_unit = "step range"
    size = int(where.max()) + 1
    count = np.bincount(where, minlength=size)
    has_r = np.isfinite(rw)
    n_r = np.bincount(where, weights=has_r, minlength=size)
    mean = {k: np.bincount(where, weights=v, minlength=size) / np.maximum(c, 1)
            for k, v, c in (("step", st, count), ("degenerate", de, count), ("reward", np.where(has_r, rw, 0), n_r))}
    if count.sum() > size:
        log.notes.append(f"{n_rows} CSV rows read; rows at one step averaged ({size} points)")
    log.rows = [dict(step=float(mean["step"][i]), degenerate=float(mean["degenerate"][i]),
                     reward=float(mean["reward"][i]) if n_r[i] else None) for i in range(size) if count[i]]
    return log


def read_log(path) -> RunLog:
    """Find and parse a run's log at ``path`` (file or directory); :class:`LogFormatError` if it is not one."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist")
    if not path.is_dir() and not path.is_file():  # a FIFO, socket or device would block or never end
        raise LogFormatError(f"{path} is not a regular file or a directory")
    if path.is_dir():
        for name in ("metrics.jsonl", "trainer_state.json"):
            if (path / name).is_file():
                return read_log(path / name)
        ckpts = sorted(path.glob("checkpoint-*/trainer_state.json"), key=lambda p: int(p.parent.name.split("-")[-1])
                       if p.parent.name.split("-")[-1].isdigit() else -1)
        if ckpts:
            log = read_log(ckpts[-1])
            log.notes.append(f"read from the latest checkpoint, {ckpts[-1].parent.name}")
            return log
        if any((path / "metrics").glob("*.jsonl")):  # an interrupted grpo-lab comparison
            return _check_rows(_from_run_logs(path))
        there = sorted(p.name for p in path.iterdir())[:8]
        raise LogFormatError(f"{path} holds no trainer_state.json, checkpoint-*/trainer_state.json, metrics.jsonl or "
                             f"metrics/*.jsonl (it holds: {', '.join(there) or 'nothing'})")
    readers = {".jsonl": _from_jsonl, ".csv": _from_csv, ".json": _from_trl}
    if path.suffix in readers:
        return _check_rows(readers[path.suffix](path))
    raise LogFormatError(f"{path}: unknown log type (expected trainer_state.json, metrics.jsonl or a CSV export)")


def _check_rows(log: RunLog) -> RunLog:
    """Refuse a log with no usable row; note (``log.warnings``) rows that lack a key the report needs."""
    for i, r in enumerate(log.rows):
        for key in ("degenerate", "all_fail", "all_pass"):
            v = r.get(key)
            if v is not None and np.isfinite(v) and not 0 <= v <= 1:
                raise LogFormatError(f"{log.source}: row {i} (step {r.get('step')}) has {key} = {v}, not a fraction "
                                     "in [0, 1]; is this the right column?")
    usable = [r for r in log.rows if r.get("step") is not None and r.get("degenerate") is not None
              and np.isfinite(r["degenerate"])]
    if log.kind == "verl":  # a verl log without filter_groups has no degenerate fraction: the reward still reports
        usable = usable or [r for r in log.rows if r.get("step") is not None and r.get("reward") is not None]
    if not usable:
        raise LogFormatError(f"{log.source}: no row has both a step and a finite degenerate fraction; nothing to "
                             "report")
    for key, what in (("step", "a step"), ("degenerate", "a degenerate fraction"), ("reward", "a mean reward")):
        if log.n_rows is not None:  # counted over the file's rows as they were read
            break
        if log.kind == "verl" and key == "degenerate" and not any(r.get(key) is not None for r in log.rows):
            continue  # verl without filter_groups logs none at all: the report's capabilities say so
        missing = sum(1 for r in log.rows if r.get(key) is None)
        if missing:
            log.warnings.append(f"{missing} of {len(log.rows)} rows lack {what}; they are left out of that series")
    return log


def beta_degeneracy(mu: float, kappa: float, G: int) -> float:
    """E[p^G + (1-p)^G] for p ~ Beta(mu*kappa, (1-mu)*kappa) (exact, a product of G ratios)."""
    a, b = mu * kappa, (1 - mu) * kappa
    if G <= 1000:  # the exact product
        up = math.prod((a + i) / (kappa + i) for i in range(G))
        down = math.prod((b + i) / (kappa + i) for i in range(G))
        return up + down
    # large G: the same ratio of rising factorials through log-gamma (time independent of G)
    lg = math.lgamma
    return math.exp(lg(a + G) - lg(a) - lg(kappa + G) + lg(kappa)) + \
        math.exp(lg(b + G) - lg(b) - lg(kappa + G) + lg(kappa))


def implied_beta(mu: float, degenerate: float, G: int):
    """The Beta(a, b) with mean ``mu`` and degeneracy ``degenerate`` at ``G``, or ``None`` with a reason.

    Returns ``(a, b, None)`` or ``(None, None, reason)``.
    """
    if not (0 < mu < 1):
        return None, None, f"mean reward {mu:.3f} is not strictly between 0 and 1"
    iid = mu**G + (1 - mu) ** G
    if degenerate <= iid:
        return None, None, (f"degenerate fraction {degenerate:.3f} is at or below the i.i.d. value {iid:.3f}: "
                            "no spread of per-prompt success is needed to explain it")
    if degenerate >= 1:
        return None, None, "every group degenerate: the spread is not identifiable"
    lo, hi = 1e-6, 1e6  # degeneracy falls as kappa grows; bisect on log kappa
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if beta_degeneracy(mu, mid, G) > degenerate:
            lo = mid
        else:
            hi = mid
    k = math.sqrt(lo * hi)
    return mu * k, (1 - mu) * k, None


def capabilities(log: RunLog) -> list[str]:
    """What this kind of log can and cannot tell (goes into the report)."""
    if log.kind == "verl":
        with_filter = any(r.get("evicted") is not None for r in log.rows)
        return (["mean reward per step (verl's critic/score/mean)"]
                + (["degenerate fraction per step: the samples of degenerate groups filter_groups dropped, over every "
                    "sample generated (trained: perf/total_num_tokens over the mean prompt + response length)"]
                   if with_filter else
                   ["not logged: the degenerate fraction (verl logs group statistics only with algorithm.filter_groups "
                    "on, as evicted samples; or train with grpo-lab's estimators and grpo_lab.starvation.batch_metrics)"])
                + ["not logged: which degenerate groups were all-fail and which all-pass (verl sends those counts to "
                   "its own console logger, not to the file log)",
                   "not logged: the group size G (verl's rollout.n; pass --group-size for the implied success "
                   "distribution)"])
    if log.kind == "grpo_lab":
        lucky = any(r.get("max_advantage") is not None for r in log.rows)
        return ["degenerate fraction (ACR), all-fail and all-pass fractions per step: logged directly",
                "per-prompt success histogram (groups with k of G correct): logged directly",
                "group size G: read from the histogram's length",
                "the largest advantage per step, and the share of the update carried by groups with one success or "
                "one failure: logged directly" if lucky else
                "not logged: the largest advantage per step (this log predates grpo-lab 0.1's issue-39 metrics)"]
    can = ["degenerate fraction per logging step (TRL's frac_reward_zero_std)", "mean reward per logging step"]
    cannot = ["not logged: which degenerate groups were all-fail and which all-pass",
              "not logged: each completion's advantage, so neither the largest advantage of a step nor the share "
              "of the update carried by groups with one success or one failure (train with grpo_lab.trl's "
              "StarvationCallback, which logs both)",
              "not logged: the group size G (pass --group-size to get the implied success distribution)",
              "not logged: per-prompt success; only a Beta model of it can be implied from mean reward and "
              "degeneracy, and only for 0/1 rewards"]
    return can + cannot


def write_report(log: RunLog, out: Path, group_size: int | None = None) -> Path:
    """Write ``report.md`` and PNG plots for ``log`` into ``out``; return the report's path."""
    from . import viz

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if group_size is not None:
        from ._checks import as_int

        if as_int("group size", group_size) < 2:
            raise ValueError(f"--group-size must be >= 2 (a group of one has no baseline), got {group_size}")
    G = log.group_size or group_size
    if log.group_size and group_size and log.group_size != group_size:
        raise ValueError(f"--group-size {group_size} contradicts the log's histograms (G={log.group_size})")
    methods = log.methods() if len(log.methods()) > 1 else {}
    if methods:  # a comparison: one series per method in the project's colours, never one pooled curve
        figs = method_figures(log, methods)
    else:
        figs = {"degenerate.png": viz.log_series(log, "degenerate", "degenerate fraction of groups"),
                "reward.png": viz.log_series(log, "reward", "mean reward")}
        if not any(r.get("degenerate") is not None for r in log.rows):  # a verl log without filter_groups
            figs.pop("degenerate.png").clf()
    s_deg, deg = log.series("degenerate")
    s_rew, rew = log.series("reward")
    runs = (f" from {log.n_runs} runs of {len(methods)} methods (read per method)" if methods else
            f" from {log.n_runs} runs (averaged per step)" if log.n_runs > 1 else "")
    md = [f"# Starvation report: `{log.source}`", "", f"Log kind: **{log.kind}**; {log.n_rows if log.n_rows is not None else len(log.rows)} logged rows{runs}.",
          *[f"Note: {n}." for n in log.notes], *[f"**Warning:** {w}." for w in log.warnings], "", "## What this log can and cannot tell", "",
          *[f"- {c}" for c in capabilities(log)], "", "## Summary", ""]
    if methods:
        md += method_summary(methods)
    if deg.size and not methods:
        md.append(f"- degenerate fraction: {_first_last(deg, log.step_unit)}, whole run {deg.mean():.3f}")
    if rew.size and not methods:
        md.append(f"- mean reward: {_first_last(rew, log.step_unit)}")
    if log.kind == "grpo_lab" and not methods:
        s_f, fail = log.series("all_fail")
        s_p, pas = log.series("all_pass")
        if fail.size:
            md.append(f"- all-fail fraction {fail.mean():.3f}, all-pass fraction {pas.mean():.3f} (whole run): "
                      f"{'mostly all-fail' if fail.mean() > pas.mean() else 'mostly all-pass'} starvation")
            figs["split.png"] = viz.log_series(log, ("all_fail", "all_pass"), "fraction of groups")
        hists = [r["success_hist"] for r in log.rows if r.get("success_hist")]
        if hists:
            total = np.sum(hists, axis=0)
            md.append(f"- groups with k = 0 … {len(total) - 1} correct, whole run: {total.astype(int).tolist()}")
            figs["success_hist.png"] = viz.count_bars(total, "correct completions in the group (k)", "groups")
        md += lucky_lines(log)
        if any(r.get("max_advantage") is not None for r in log.rows):
            figs["lucky.png"] = viz.log_series(log, ("max_advantage",), "largest advantage of a completion")
        if any(r.get("near_degenerate") is not None for r in log.rows):
            figs["one_success_share.png"] = viz.log_series(log, ("near_degenerate",),
                                                           "share of |A| in one-success/one-failure groups")
    md.append("")
    if G and rew.size and deg.size and log.kind != "grpo_lab":
        q = max(1, min(deg.size, rew.size) // 10)
        span = f"{q} step{'s' if q > 1 else ''}"
        md += ["## Implied per-prompt success distribution", ""]
        from scipy.stats import beta as beta_dist
        for label, mu, d in ((f"start (first 10% of steps: {span})", rew[:q].mean(), deg[:q].mean()),
                             (f"end (last 10% of steps: {span})", rew[-q:].mean(), deg[-q:].mean())):
            a, b, why = implied_beta(float(mu), float(d), G)
            if why:
                md.append(f"- {label}: cannot imply one: {why}")
            else:
                md.append(f"- {label}: Beta({a:.3f}, {b:.3f}) reproduces mean reward {mu:.3f} and degenerate "
                          f"fraction {d:.3f} at G={G} (never-solved-like mass P(p < 0.05) = "
                          f"{beta_dist.cdf(0.05, a, b):.2f})")
        md += ["", "This is one population consistent with two numbers, not a measurement of the prompts.", ""]
    elif not G and log.kind != "grpo_lab":
        md += ["The implied per-prompt success distribution needs the group size: rerun with `--group-size G`.", ""]
    for name, fig in figs.items():
        fig.savefig(out / name)
        md.append(f"![{name[:-4]}]({name})")
    return write_text_atomic(out / "report.md", "\n".join(md) + "\n")


def lucky_lines(log: RunLog) -> list[str]:
    """The report's lines on lucky successes (issue 39): the largest advantage of any completion per step, the share
    of the update carried by groups with exactly one success or one failure, and the completion that received the
    run's largest advantage. Empty where the log has none of it."""
    rows = [r for r in log.rows if r.get("max_advantage") is not None]
    _, near = log.series("near_degenerate")
    out = []
    if rows:  # each row's own value (one run's step), never a mean over runs: the largest is a maximum
        top = max(rows, key=lambda r: r["max_advantage"])
        where = (f"run {top['run']}, " if top.get("run") else "") + f"step {top['step']:g}" if top.get("step") \
            is not None else (f"run {top['run']}" if top.get("run") else "")
        out.append(f"- largest advantage of any completion per step: median {np.median([r['max_advantage'] for r in rows]):.3g} "
                   f"over {len(rows)} logged steps; the largest, {top['max_advantage']:.3g}, at {where}")
    if near.size:
        out.append(f"- share of the update's weight (sum of |A|) carried by groups with one success or one failure: "
                   f"{near.mean():.3f} over the steps that had a signal (whole run)")
    flukes = [r["fluke"] for r in log.rows if r.get("fluke") and r["fluke"].get("completion") is not None]
    if flukes:
        f = max(flukes, key=lambda x: float(x["advantage"]))
        text = " ".join(str(f["completion"]).split())[:160]
        out.append(f"- the completion that received the run's largest advantage ({f['advantage']:.2f}; its group's "
                   f"rewards {f['group_rewards']}): \"{text}\"")
    return out


def method_figures(log: RunLog, methods: dict) -> dict:
    """``{file name: figure}`` for a comparison's log: the degenerate fraction and the mean reward per step, one
    series per method (mean over its runs, 95% t-interval band over runs), in the project's colours."""
    from . import viz

    hist = {m: list(runs.values()) for m, runs in methods.items()}
    return {name: viz.log_curves(hist, key, label, window=1, title=f"{label} per method, per step: {log.source.name}")
            for name, key, label in (("degenerate.png", "degenerate", "degenerate fraction of groups"),
                                     ("reward.png", "reward", "mean reward"))}


FEW_STEPS = 5  # a "first"/"last" window of fewer logged steps than this is one noisy number, and says so


def _first_last(values, unit: str = "step") -> str:
    """"first k steps (10%) X, last k steps Y", naming k, and saying when k is too few steps to read a trend.
    ``unit`` names what one value is ("step", or "step range" for a binned CSV export)."""
    v = np.asarray(values, dtype=float)
    q = max(1, v.size // 10)
    units = unit + ("s" if q > 1 else "")
    few = f" (only {q} {units} each: too few to read a trend)" if q < FEW_STEPS else ""
    return f"first {q} {units} (10% of {v.size}) {v[:q].mean():.3f}, last {q} {v[-q:].mean():.3f}{few}"


def method_summary(methods: dict) -> list[str]:
    """One table row per method of a comparison: runs, the degenerate fraction at the start and end of training
    and over the whole run, all-fail and all-pass, each a mean over runs with a 95% t-interval over runs."""
    from .stats import fmt_ci

    table = []
    notes = set()
    for m, runs in methods.items():
        per_run = []
        for rows in runs.values():
            d = np.array([r["degenerate"] for r in sorted(rows, key=lambda r: r["step"] or 0)
                          if r.get("degenerate") is not None], dtype=float)
            q = max(1, d.size // 10)
            notes.add(q)
            fail = [r["all_fail"] for r in rows if r.get("all_fail") is not None]
            pas = [r["all_pass"] for r in rows if r.get("all_pass") is not None]
            per_run.append((d.size, d[:q].mean(), d[-q:].mean(), d.mean(), np.mean(fail) if fail else None,
                            np.mean(pas) if pas else None))
        cols = list(zip(*per_run))
        steps = f"{min(cols[0])}" if min(cols[0]) == max(cols[0]) else f"{min(cols[0])}–{max(cols[0])}"
        table.append((m, len(runs), steps, *(fmt_ci([x for x in c if x is not None]) for c in cols[1:])))
    md = md_table(("method", "runs", "steps", "degenerate, first steps", "degenerate, last steps",
                   "degenerate, whole run", "all-fail, run", "all-pass, run"), table)
    q = max(notes)
    span = f"{q}" if min(notes) == q else f"{min(notes)}–{q}"
    md += ["", f"First and last steps: the first and last 10% of each run's logged steps ({span} step"
           f"{'s' if q > 1 else ''})"
           + (f"; with fewer than {FEW_STEPS} steps these are single noisy numbers, not a trend." if q < FEW_STEPS
              else ".") + " Intervals: 95% t-interval over runs (seeds).", ""]
    return md


def inspect_run(path, out=None, group_size: int | None = None, warn=None) -> Path:
    """Read the log at ``path`` and write the starvation report to ``out`` (default: ``<path dir>/starvation``).

    ``warn`` (e.g. ``print``) receives each warning about rows that lack keys; they are also in the report.
    """
    size_mb = Path(path).stat().st_size / 1e6 if Path(path).is_file() else 0.0
    if size_mb > 20 and warn is not None:
        warn(f"{path} is {size_mb:.0f} MB: reading it takes about {size_mb / CSV_MB_PER_S:.0f} s at the measured "
             f"{CSV_MB_PER_S:g} MB/s")
    log = read_log(path)
    for w in log.warnings:
        if warn is not None:
            warn(f"warning: {w}")
    if out is None:
        base = Path(path) if Path(path).is_dir() else Path(path).parent
        out = base / "starvation"
    return write_report(log, out, group_size=group_size)
