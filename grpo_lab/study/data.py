"""A study as read: every result checked as ``--resume`` checks it, the readings of the planned comparisons,
the design checks and the deviations the data show. Part of :mod:`grpo_lab.study`."""

from __future__ import annotations

import json
import math
import os
import subprocess
import time
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from ..compare import (_is_number, evaluation_problems, read_config, recorded_fingerprint, result_problems,
                       shared_settings)
from ..config import method_key, method_name
from ..io import (check_eval_dtypes, differing_keys, eval_dtype_of, metrics_path, read_json, read_jsonl,
                  result_path)
from .measures import Measure, NoReading
from .plan import Arm, Plan, Spec, read_plan
from . import readings
from .readings import Reading  # noqa: F401 (re-exported)
from .run import _rel, arm_dirs, plan_record


# ---------------------------------------------------------------------------------------------------------------
# Reading the results as --resume reads them.
# ---------------------------------------------------------------------------------------------------------------

@dataclass
class ArmData:
    arm: Arm
    dirs: list
    runs: dict            # seed -> result
    run_dir: dict         # seed -> the directory that holds it
    start: dict | None
    start_dir: Path | None
    refused: list         # (file, why)
    missing: list         # seeds


def _content_key(r: dict) -> str:
    ev = r.get("eval") or {}
    # what a run learned and scored, not how long it took (issue 58: a copy with its time nudged is still a copy)
    return json.dumps([ev.get("correct"), ev.get("greedy"), [h.get("loss") for h in r.get("history", [])]],
                      default=str)


def plan_measures(plan: Plan) -> list:
    """Every measure the plan reads from each of its runs, once by text: :attr:`Plan.reads` (primary, secondary,
    each comparison's, the selections', the curves' and the correlations'), less the steps table's (training-log
    quantities: a run without one is named by arm, not refused) and the manipulation check's (each read on its own
    arm only)."""
    return list({r.measure.text: r.measure for r in plan.reads if r.kind not in ("steps", "manipulation")}.values())


RUN_TIMES = ("train_seconds", "eval_seconds")


def _runs(n: int) -> str:
    return f"{n} run" + ("" if n == 1 else "s")


def run_seconds(result: dict, strict: bool = False) -> float:
    """A finished run's run time in seconds: its training plus its evaluation (``train_seconds`` and
    ``eval_seconds`` in its result). What a plan's budget and its run-time rules read.

    By default either missing counts 0 (results older than the evaluation's timing have none), which makes the
    budget line a lower bound. ``strict=True``, for a rule that decides on run time (study 6's budget cut, where a
    run read as faster than it was could leave uncut what the rule cuts): a time that is missing or no finite
    non-negative number is an error naming it."""
    if strict:
        gone = [k for k in RUN_TIMES if not _is_number(result.get(k), low=0)]
        if gone:
            raise ValueError(f"records no {' and no '.join(gone)}: its run time (training plus evaluation) cannot "
                             "be read")
    return sum(result.get(k) or 0 for k in RUN_TIMES)


def unreadable_measure(plan: Plan, r: dict) -> str | None:
    """Why a result cannot give a measure the plan reads (a missing pass@k, no validation split, a value that is no
    finite number), or None: such a run is left out by name, never read halfway into a table (issue 58)."""
    for m in plan_measures(plan):
        try:
            v = m.of(r)
        except NoReading:  # no value by the measure's definition: left out of that measure only (Study.unread)
            continue
        except (KeyError, TypeError, ValueError) as e:
            return f"it cannot give {m.text}: {str(e).strip(chr(39))[:120]}"
        if not (isinstance(v, float) and math.isfinite(v)):
            return f"its {m.text} is {v!r}, not a finite number"
    return None


def read_arm(plan: Plan, arm: Arm, seen: dict) -> ArmData:
    """An arm's finished runs, each checked as ``--resume`` checks it; what fails is left out and named.
    ``seen`` maps each result's contents to the file that first held it (a copy of another run is refused)."""
    dirs = arm_dirs(plan, arm)
    runs, where, refused = {}, {}, []
    start, start_dir = None, None
    expected = shared_settings(arm.config)
    for d in dirs:
        if not (d / "config.json").is_file():
            if (d / "results").is_dir() and any((d / "results").glob("*.json")):  # issue 58: say which file is gone
                refused.append((_rel(d / "config.json", plan.home), "missing: the directory holds results but not "
                                "the settings they were trained with, so none of them can be checked"))
            continue
        try:
            conf = read_config(d)
        except (ValueError, FileNotFoundError) as e:
            refused.append((_rel(d / "config.json", plan.home), str(e).replace(str(d), _rel(d, plan.home))[:200]))
            continue
        diff = differing_keys(expected, shared_settings(conf["base"]))
        if diff:
            refused.append((_rel(d, plan.home), f"its settings are not arm {arm.name}'s (plan != directory): "
                                                f"{'; '.join(diff[:4])}"))
            continue
        if start is None and (d / "start.json").is_file():
            try:
                s = read_json(d / "start.json", "start evaluation")
                bad = evaluation_problems(s, problems=arm.config.eval_problems)
                if bad:
                    refused.append((_rel(d / "start.json", plan.home), bad))
                else:
                    start, start_dir = s, d
            except ValueError as e:
                refused.append((_rel(d / "start.json", plan.home), str(e)[:160]))
        for seed in arm.seeds:
            f = result_path(d, arm.method, seed)
            if f.is_symlink() and not f.exists():  # issue 83: said by name, not a raw [Errno 2] nor silence
                refused.append((_rel(f, plan.home), f"a symbolic link to a missing file ({os.readlink(f)}): the run "
                                "counts as not finished"))
                continue
            if not f.is_file():
                continue
            name = _rel(f, plan.home)
            why = None
            try:
                r = read_json(f, "results file")
                why = result_problems(r, False, arm.config.eval_problems)
                if why is None:  # every run's full per-step log beside it (the truncation check reads it), before
                    # any measure is read from it (issue 83: a measure only the log holds left every run out)
                    r = _with_log({**r, "result_source": name}, metrics_path(d, arm.method, seed), plan.home)
                if why is None:
                    cfg = r["config"]
                    if (method_key(cfg), cfg.get("seed")) != (method_key(arm.method), seed):
                        why = f"it holds {method_name(cfg)} seed {cfg.get('seed')}, not {arm.method} seed {seed}"
                    elif r.get("fingerprint") != recorded_fingerprint(cfg):
                        why = (f"its fingerprint {r.get('fingerprint')!r} does not match its own settings "
                               f"({recorded_fingerprint(cfg)}): edited after it was written?")
                    elif differing_keys(expected, shared_settings(cfg)):
                        why = f"its settings are not the arm's: {'; '.join(differing_keys(expected, shared_settings(cfg))[:3])}"
                    elif plan.grader is not None and \
                            plan.grader_of(r["eval"].get("grader") or "unrecorded") != plan.grader_of(plan.grader):
                        why = f"graded by {r['eval'].get('grader') or 'an unrecorded grader'}, the plan's is {plan.grader}"
                if why is None:
                    why = unreadable_measure(plan, r)
            except (ValueError, KeyError, TypeError, AttributeError) as e:
                why = f"unreadable ({str(e).replace(str(f), f.name)[:160]})"
            if why is None:  # the same file read by two arms is one run; two files with one content are a copy
                key = _content_key(r)
                if seen.setdefault(key, (name, f.resolve()))[1] != f.resolve():
                    why = f"a copy of {seen[key][0]} (the same evaluation and training log)"
            if why is None and seed in runs:
                why = f"seed {seed} already finished in {_rel(where[seed], plan.home)}"
            if why is not None:
                refused.append((name, why))
                continue
            runs[seed], where[seed] = r, d
    graders = {}
    for seed, r in runs.items():  # a run that records no grader (older grpo-lab) is unknown, not different
        if r["eval"].get("grader"):  # fingerprints the plan declares to grade alike count as one
            graders.setdefault(plan.grader_of(r["eval"]["grader"]), []).append(seed)
    if len(graders) > 1:  # the arm's own grader: the one most of its runs record; the others are not comparable
        ranked = sorted(graders.items(), key=lambda kv: -len(kv[1]))
        if len(ranked[0][1]) == len(ranked[1][1]):
            keep = None
        else:
            keep = ranked[0][0]
        for g, seeds in graders.items():
            if g == keep:
                continue
            for seed in seeds:
                refused.append((_rel(result_path(where[seed], arm.method, seed), plan.home),
                                f"graded by {runs[seed]['eval']['grader']}, while " +
                                (f"the arm's other runs record {keep}" if keep else
                                 "the arm's runs split evenly between graders")))
                runs.pop(seed)
                where.pop(seed)
    missing = [s for s in arm.seeds if s not in runs]
    return ArmData(arm, dirs, dict(sorted(runs.items())), where, start, start_dir, refused, missing)


def _with_log(r: dict, path: Path, home: Path) -> dict:
    """A run's result with its full per-step log as ``r["log"]`` (and where it came from, ``r["log_source"]``):
    ``metrics/<run>.jsonl`` holds every number the trainer logged (TRL's ``completions/clipped_ratio``, the
    truncation share, among them), which the result's ``history`` leaves out. Kept only when it has exactly the
    history's steps; a log of another attempt, a damaged one or none leaves ``r["log_problem"]`` saying why, which
    a measure only the log holds then names (the run is left out of that reading by name, never silently)."""
    name = _rel(path, home)
    if not path.is_file():
        return {**r, "log_problem": f"no metrics file {name}"}
    try:
        rows = [x for _, x in read_jsonl(path) if "reward" in x]
    except ValueError as e:
        return {**r, "log_problem": f"{name} is unreadable ({str(e)[:120]})"}
    if [x.get("step") for x in rows] != [h.get("step") for h in r["history"]]:
        return {**r, "log_problem": f"{name} does not hold the result's steps (another attempt's log?)"}
    return {**r, "log": rows, "log_source": name}


# ---------------------------------------------------------------------------------------------------------------
# The analysis.
# ---------------------------------------------------------------------------------------------------------------

def _fmt(x: float, signed: bool = True) -> str:
    """Three decimals, never "-0.000" (issue 107: a number printed as a bug): what rounds to zero prints as zero."""
    x = 0.0 if round(x, 3) == 0 else x
    return f"{x:+.3f}" if signed else f"{x:.3f}"


class Study:
    """A plan and its runs as read: ``Study.load(path)``; the report is :func:`render_report`."""

    def __init__(self, plan: Plan):
        self.plan = plan
        seen: dict = {}
        self.data = {name: read_arm(plan, arm, seen) for name, arm in plan.arms.items()}
        named = {_rel(result_path(a.run_dir[seed], a.arm.method, seed), plan.home):
                 eval_dtype_of(r) for a in self.data.values() for seed, r in a.runs.items()}
        named.update({_rel(a.start_dir / "start.json", plan.home): eval_dtype_of(a.start, start=True)
                      for a in self.data.values() if a.start is not None})
        check_eval_dtypes(named, f"study {plan.path.name}")
        self.done = sum(len(a.runs) for a in self.data.values())
        self.total = sum(len(a.seeds) for a in plan.arms.values())
        self.complete = all(not a.missing for a in self.data.values())
        self.conventions = readings.Conventions(df=plan.df)
        self.overrides: dict = {}  # selection -> arm, in an alternative reading only (variant)
        self._groups: dict = {}
        self.readings = readings.families(self, self.conventions)
        self.exploratory = [readings.read(self, s, self.conventions) for s in plan.exploratory]
        self.curves = [readings.curve(self, c) for c in plan.curves]
        self.correlations = [readings.correlation(self, c) for c in plan.correlations]

    @classmethod
    def load(cls, path) -> "Study":
        return cls(read_plan(path))

    # values --------------------------------------------------------------------------------------------------
    def chosen(self, name: str) -> str | None:
        """The arm a selection chose: the best mean of its ``by`` measure among its candidates (the highest, or the
        lowest where lower is better), once every candidate has all its runs (None before; the first listed wins
        an exact tie, :meth:`ranking` says so). An alternative reading may choose another (:meth:`variant`)."""
        if name in self.overrides:
            return self.overrides[name]
        ranked = self.ranking(name)
        return ranked[0][0] if ranked else None

    def ranking(self, name: str) -> list:
        """``[(arm, mean), ...]``: a selection's candidates from best to worst on its ``by`` measure (a stable sort:
        of two equal means the first listed comes first); ``[]`` until every candidate has all its runs."""
        sel = self.plan.selections[name]
        if any(self.data[a].missing for a in sel.among):
            return []
        sign = -1.0 if sel.by.better == "lower" else 1.0
        means = [(a, float(np.mean(list(self.values(a, sel.by).values())))) for a in sel.among]
        return sorted(means, key=lambda am: -sign * am[1])

    def variant(self, choose: dict) -> "Study":
        """The same runs read with some selections choosing other arms (``{selection: arm}``): the alternative a
        near-tie on validation calls for (:func:`grpo_lab.study.robust.alternatives`). Its readings are
        recomputed; its robustness is never read (no alternative of an alternative)."""
        import copy

        twin = copy.copy(self)
        twin.__dict__.pop("robust", None)
        twin.overrides = {**self.overrides, **choose}
        twin.readings = readings.families(twin, twin.conventions)
        return twin

    def without(self, drop) -> "Study":
        """The same study read without some runs (``drop``: ``((arm, seed), ...)``): the alternative a seed mixture
        calls for (:func:`grpo_lab.study.robust.mixed_seeds`). Its readings are recomputed; its robustness is never
        read."""
        import copy
        from dataclasses import replace

        twin = copy.copy(self)
        twin.__dict__.pop("robust", None)
        gone = set(drop)
        twin.data = {name: replace(a, runs={s: r for s, r in a.runs.items() if (name, s) not in gone})
                     for name, a in self.data.items()}
        twin.readings = readings.families(twin, twin.conventions)
        return twin

    def values(self, arm: str, measure: Measure | None = None) -> dict:
        """``{seed: value}`` of an arm's finished runs on ``measure`` (default the primary); a selection gives its
        chosen arm's (nothing before it has chosen)."""
        return self.read_runs(arm, measure)[0]

    def unread(self, arm: str, measure: Measure) -> dict:
        """``{seed: why}`` for the arm's finished runs that have no reading of ``measure`` by its definition
        (:class:`grpo_lab.study.measures.NoReading`): left out of it, named in the report, kept for the others."""
        return self.read_runs(arm, measure)[1]

    def read_runs(self, arm: str, measure: Measure | None = None) -> tuple[dict, dict]:
        """``({seed: value}, {seed: why})``: each of an arm's finished runs read once on ``measure`` (default the
        primary), either a value or the reason it has none by the measure's definition (:class:`NoReading`). A
        selection reads its chosen arm (nothing before it has chosen). A damaged value raises."""
        measure = measure or self.plan.primary
        name = self.resolve(arm)
        values, unread = {}, {}
        if name is None:
            return values, unread
        for s, r in self.data[name].runs.items():
            try:
                values[s] = measure.of(r)
            except NoReading as e:
                unread[s] = str(e)
        return values, unread

    def start(self, arm: str, measure: Measure | None = None) -> tuple[float, float] | None:
        """The start's value and sampling standard error on ``measure``, from the arm's directory."""
        measure = measure or self.plan.primary
        if arm in self.plan.selections:
            arm = self.chosen(arm)
            if arm is None:
                return None
        a = self.data[arm]
        if a.start is None or measure.metric.source != "eval":
            return None
        return measure.of_start(a.start, a.arm.config.task, self.draw_groups(arm, measure))

    def draw_groups(self, arm: str, measure: Measure):
        """Each evaluation draw's distinct problem, where the start's evaluation sampled each distinct problem once
        and gave its counts to every draw of it (``eval_distinct``): its sampling error is then counted by problem
        (issue 80), else None. Recorded in the evaluation since issue 80 (``sampling.problem_of_draw``); for an
        older one, recomputed from the arm's settings (the problems are a function of them)."""
        a = self.data[arm]
        ev = measure.evaluation(a.start, a.arm.config.task)
        sampling = ev.get("sampling") if isinstance(ev.get("sampling"), dict) else {}
        if not sampling.get("distinct"):
            return None
        if sampling.get("problem_of_draw") is not None:
            return sampling["problem_of_draw"]
        key = (arm, measure.split, measure.task)
        if key not in self._groups:
            from ..runner import eval_problems, task_config, validation_problems

            cfg = a.arm.config if measure.task is None else task_config(a.arm.config, measure.task)
            probs = validation_problems(cfg) if measure.split == "validation" else eval_problems(cfg)
            index: dict = {}
            self._groups[key] = [index.setdefault(p.prompt, len(index)) for p in probs]
        return self._groups[key]

    def resolve(self, name: str) -> str | None:
        """An arm's own name, a selection's chosen arm (None before it has chosen), or "start"."""
        return self.chosen(name) if name in self.plan.selections else name

    def matrix(self, arm: str, measure: Measure | None = None):
        """``[seeds, problems]``: each finished run's score per evaluation draw on ``measure`` (in the order of
        :meth:`values`), for the bootstrap over problems; None where the measure has no per-problem score."""
        measure = measure or self.plan.primary
        name = self.resolve(arm)
        if name is None or measure.metric.per_problem is None:
            return None
        rows = [measure.per_problem(r) for r in self.data[name].runs.values()]
        if not rows or len({len(x) for x in rows}) > 1:
            return None
        return np.asarray(rows, dtype=float)

    def start_row(self, arm: str, measure: Measure | None = None):
        """``[1, problems]``: the start's score per evaluation draw (see :meth:`matrix`), or None."""
        measure = measure or self.plan.primary
        name = self.resolve(arm)
        a = self.data.get(name) if name else None
        if a is None or a.start is None or measure.metric.per_problem is None:
            return None
        return np.asarray([measure.metric.per_problem(measure.evaluation(a.start, a.arm.config.task), measure.k)])

    @cached_property
    def robust(self) -> list:
        """Every planned verdict re-read under the reasonable alternatives (:func:`robust.robustness`)."""
        from . import robust

        return robust.robustness(self)

    def reading(self, label: str):
        """The planned reading with this label (under the plan's conventions), or None."""
        return next((r for r in self.planned if r.spec.label == label), None)

    @property
    def planned(self) -> list:
        return [r for rows in self.readings.values() for r in rows]

    # design checks --------------------------------------------------------------------------------------------
    def manipulation(self) -> list:
        """Per arm with a manipulation measure: ``(arm, measure, reading)``: its change from its start, with the
        start's noise: did the treatment take?"""
        out = []
        for name, meas in self.plan.manipulation.items():
            out.append((name, meas, readings.read(self, Spec(name, "start", f"{name} − start", meas, "manipulation",
                                                           False), self.conventions)))
        return out

    def overlap(self) -> list:
        """Per evaluated task of each arm: ``(arms, task, overlap, error)``, the overlap as
        :func:`grpo_lab.runner.overlap` computes it from the settings (draws, distinct and effective problems, how
        many are in the training pool, near-duplicates); arms with the same pools share a row."""
        from ..runner import overlap

        rows: dict = {}
        for name, arm in self.plan.arms.items():
            cfg = arm.config
            for task in (cfg.task, *cfg.eval_tasks):
                key = (task, cfg.eval_problems, cfg.eval_seed, cfg.task, cfg.train_problems, cfg.data_seed,
                       cfg.smoke, cfg.data, cfg.disjoint, cfg.eval_without_replacement, cfg.eval_tasks_whole)
                if key in rows:
                    rows[key][0].append(name)
                    continue
                try:
                    o = overlap(cfg, task)
                    rows[key] = ([name], task, o, None)
                except Exception as e:  # a task that cannot be generated here: say so, never guess
                    rows[key] = ([name], task, None, f"{type(e).__name__}: {e}"[:160])
        return list(rows.values())

    def own_runs(self) -> dict:
        """``{file: result}``: the finished runs in the study's own directories (under the plan's), each once
        (two arms may read one run; an arm may reuse another study's runs, which are not this study's cost)."""
        out = {}
        for a in self.data.values():
            for seed, r in a.runs.items():
                d = a.run_dir[seed]
                if d.is_relative_to(self.plan.home):
                    out[result_path(d, a.arm.method, seed)] = r
        return out

    def detected_deviations(self) -> list:
        """What the report finds that departs from the plan or from its own runs, in words."""
        out = []
        for name, a in self.data.items():
            for f, why in a.refused:
                out.append(f"Left out of arm {name}: `{f}`: {why}.")
        reseeded: dict = {}
        for name, a in self.data.items():
            versions = {}
            for seed, r in a.runs.items():
                g = r.get("generation") or {}
                versions.setdefault(g.get("version") or "unrecorded", []).append(seed)
                said = r["config"].get("generation")
                if g.get("engine") and said and g["engine"] != said:  # issue 105: never pooled without a word
                    f = _rel(result_path(a.run_dir[seed], a.arm.method, seed), self.plan.home)
                    out.append(f"`{f}` ({name} seed {seed}) records sampling with {g['engine']}, but its settings say "
                               f"generation = {said!r}: read with its arm, named here.")
                if g.get("engine") == "vllm" and not g.get("generators_kept") and \
                        g.get("syncs") == r.get("steps_done", len(r["history"])):
                    f = _rel(result_path(a.run_dir[seed], a.arm.method, seed), self.plan.home)
                    reseeded.setdefault(f, []).append(f"{name} seed {seed}")
            if len(versions) > 1:
                out.append(f"Arm {name}'s runs sampled with more than one engine version: " + "; ".join(
                    f"{v} (seeds {', '.join(map(str, s))})" for v, s in versions.items()) + ".")
        for f, who in reseeded.items():
            out.append(f"`{f}` ({', '.join(who)}) started vLLM's engine in its own process before the engine left "
                       "the random generators as they were (fixed in commit 3616e94): its rollouts were sampled from "
                       "seed 0's stream, its prompts still from its own seed.")
        graders, unrecorded = {}, []
        for name, a in self.data.items():
            for seed, r in a.runs.items():
                if r["eval"].get("grader"):
                    graders.setdefault(self.plan.grader_of(r["eval"]["grader"]), set()).add(name)
                else:
                    unrecorded.append(f"{name} seed {seed}")
        if unrecorded:
            out.append(f"{len(unrecorded)} runs record no grader (written before grpo-lab recorded it): "
                       f"{', '.join(unrecorded[:12])}{', ...' if len(unrecorded) > 12 else ''}; their scores "
                       "cannot be checked against the others' grader.")
        for gs, why in self.plan.same_graders:
            used = sorted({r["eval"].get("grader") for a in self.data.values() for r in a.runs.values()} & set(gs))
            out.append(f"The plan declares graders {', '.join(gs)} to grade alike ({why}); the runs read record "
                       + (", ".join(used) if used else "none of them") + ", each read as graded by " + gs[0] + ".")
        if len(graders) > 1:
            out.append("The arms were graded by more than one grader: " + "; ".join(
                f"{g} ({', '.join(sorted(arms))})" for g, arms in graders.items()) +
                ": a score depends on the grader, so a difference between these arms may be partly the grader's.")
        out += self._machines()
        starts: dict = {}
        for name, a in self.data.items():  # directories that evaluate one start must agree, value for value
            c = a.arm.config
            key = (c.policy, c.task, tuple(c.eval_tasks), c.eval_problems, c.eval_samples, c.eval_seed,
                   c.max_completion_length, c.generation, c.dtype)
            for d in a.dirs:
                if (d / "start.json").is_file():
                    try:  # the scores, not what records how they were made (timing, grader, versions)
                        st = read_json(d / "start.json")
                        text = json.dumps([st.get("correct"), st.get("greedy"),
                                           {t: [e.get("correct"), e.get("greedy")]
                                            for t, e in (st.get("extra") or {}).items()}], sort_keys=True)
                    except (ValueError, AttributeError):
                        continue
                    starts.setdefault(key, {}).setdefault(text, set()).add(_rel(d, self.plan.home))
        for key, texts in starts.items():
            if len(texts) > 1:
                out.append("Directories that evaluate the same start disagree: " + " vs ".join(
                    ", ".join(sorted(ds)) for ds in texts.values()) + " (another engine, grader or model?).")
        edited, missing, damaged = [], [], []  # runs trained under another version of the plan's analysis
        for a in self.data.values():
            for seed in a.runs:
                d = a.run_dir[seed]
                name = _rel(result_path(d, a.arm.method, seed), self.plan.home)
                if not d.is_relative_to(self.plan.home):
                    continue  # another study's run, recorded (or not) against that study's plan
                rec = plan_record(d, a.arm.method, seed)
                if not rec.is_file():
                    missing.append(name)
                    continue
                try:
                    got = read_json(rec)
                    fp, norm = got.get("plan"), got.get("analysis")
                except (ValueError, AttributeError):
                    fp, norm = None, None
                if not isinstance(fp, str) or (norm is not None and not isinstance(norm, str)):
                    damaged.append(name)  # issue 83: {"plan": null} hid an edit made after the run
                elif (norm if norm is not None else fp) != (self.plan.analysis_normalized if norm is not None
                                                            else self.plan.analysis_fingerprint):
                    edited.append(name)
        if edited:
            out.append(f"The plan's analysis (its arms, seeds, measures, comparisons, hypotheses or conventions) is "
                       f"not the one {len(edited)} run(s) were trained under ({', '.join(edited[:4])}"
                       f"{', ...' if len(edited) > 4 else ''}; recorded in each directory's plans/): edited after "
                       "them. The report reads the plan as it is now.")
        if damaged:
            out.append(f"The plan record beside {len(damaged)} run(s) is damaged ({', '.join(damaged[:4])}"
                       f"{', ...' if len(damaged) > 4 else ''}; each directory's plans/): whether the analysis was "
                       "edited after them cannot be checked from the files; git's history of the plan file can.")
        if missing:
            why = ("a port: its runs predate the study engine's records" if self.plan.port else
                   "trained before `study run` recorded one, or the record was removed")
            out.append(f"{len(missing)} of the study's own runs have no plan record ({why}; e.g. "
                       f"{', '.join(missing[:2])}): an edit of the analysis after them cannot be detected from the "
                       "files; git's history of the plan file can.")
        if self.plan.budget_hours is not None:
            hours = self.machine_hours()
            if hours > self.plan.budget_hours:
                out.append(f"The finished runs took {hours:.1f} hours of run time (each run's training and evaluation, "
                           f"summed over runs), over the plan's budget of {self.plan.budget_hours:g}.")
        return out

    def _machines(self) -> list:
        """The CPUs and training-precision paths the runs record (``cpu``, ``precision_why``), where there is more
        than one: the largest group by count, the others by name. Runs trained under differing trainer settings are
        refused before this; these name what still differed (study 6 moved to another CPU after 28 runs)."""
        out = []
        for key, what, why in (
                ("cpu", "CPU", "float32 kernels round differently on different CPUs, so these runs differ by machine "
                               "as well as by arm and seed"),
                ("precision_why", "reason for their training precision",
                 "their recorded trainer settings agree (runs that differ are refused), so this names the path taken "
                 "or the reason for it, not another computation")):
            seen: dict = {}
            unrecorded = 0
            for name, a in self.data.items():
                for seed, r in a.runs.items():
                    if isinstance(r.get(key), str):
                        seen.setdefault(r[key], []).append(f"{name} seed {seed}")
                    else:
                        unrecorded += 1
            if len(seen) > 1:
                groups = sorted(seen.items(), key=lambda kv: -len(kv[1]))
                out.append(f"The runs record more than one {what}: " + "; ".join(
                    f"`{v}` ({_runs(len(who))}" + ("" if i == 0 else f": {', '.join(who[:12])}"
                                                 f"{', ...' if len(who) > 12 else ''}") + ")"
                    for i, (v, who) in enumerate(groups)) + f"; {why}.")
            if seen and unrecorded:
                out.append(f"{_runs(unrecorded)} record{'s' if unrecorded == 1 else ''} no {what} (written before "
                           "grpo-lab recorded it).")
        return out

    def machine_hours(self) -> float:
        """Training and evaluation time of the study's own finished runs, summed over runs, in hours: run time, not
        wall-clock time (runs trained side by side on one machine take less of the clock), and what ``budget_hours``
        is compared with."""
        return sum(map(run_seconds, self.own_runs().values())) / 3600


def git_history(plan: Plan) -> list:
    """Deviations the repository's history shows: the plan committed after the first result, or edited after it
    (``git log``); nothing where the study is not in a git repository."""
    def log(*paths) -> list:
        try:
            res = subprocess.run(["git", "log", "--format=%H %ct", "--", *map(str, paths)], cwd=plan.home,
                                 capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return []
        if res.returncode != 0:
            return []
        return [(h, int(t)) for h, t in (line.split() for line in res.stdout.splitlines() if line.strip())]

    dirs = sorted({d for arm in plan.arms.values() for d in arm_dirs(plan, arm)
                   if d.is_dir() and d.is_relative_to(plan.home)})  # another study's runs predate this one
    results = [d / "results" for d in dirs]
    first_result = min((t for _, t in log(*results)), default=None)
    if first_result is None:
        return []
    out = []
    for what, path in (("plan file", plan.path), ("prose plan", plan.home / plan.prose if plan.prose else None)):
        if path is None or not path.is_file():
            continue
        commits = log(path)
        if not commits:
            out.append(f"The {what} `{path.name}` is not committed, while results are.")
            continue
        first, last = min(t for _, t in commits), max(t for _, t in commits)
        stamp = time.strftime("%Y-%m-%d %H:%M", time.gmtime(first_result))
        if first > first_result:
            out.append(f"The {what} `{path.name}` was first committed after the first result (first result "
                       f"committed {stamp} UTC)" + (": a port, as it says." if what == "plan file" and plan.port
                                                    else "."))
        elif last > first_result and not plan.port:
            out.append(f"The {what} `{path.name}` was edited after the first result was committed ({stamp} UTC): "
                       "an edit after the data is not a pre-registration; its history says what changed.")
        try:
            dirty = subprocess.run(["git", "status", "--porcelain", "--", str(path)], cwd=plan.home,
                                   capture_output=True, text=True, timeout=60).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            dirty = ""
        if dirty:
            out.append(f"The {what} `{path.name}` has changes not committed.")
    return out


