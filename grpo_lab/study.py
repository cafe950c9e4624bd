"""``grpo-lab study``: a planned study as a first-class object. A plan file names the arms, seeds, measures and the
comparisons it will read; ``grpo-lab study run`` trains exactly the runs it names that are missing;
``grpo-lab study report`` reads every result as ``--resume`` reads it and writes a report whose verdicts come from
the plan, never from its author (registered reports: the analysis is declared before the data).

The plan file (TOML, beside the study's prose plan; every key documented here, an unknown one refused by name)::

    title = "Sign against GRPO on SmolLM2"      # required
    question = "Does Sign beat GRPO ...?"       # one sentence: what the study asks
    plan = "PLAN.md"                            # the prose plan, committed before the first run
    port = "..."                                # only for a plan file written after its runs (say why)
    seeds = [0, 1, 2, 3, 4, 5]                  # every arm's seeds (an arm may set its own)
    budget_hours = 14                           # the machine-hours the plan allows
    report = "REPORT.md"                        # where the report goes (default)
    grader = "221cffcc6705"                     # optional: the grader every result must record

    [base]                                      # RunConfig settings every arm shares
    policy = "smollm2"
    task = "gym:chain_sum:min_terms=2,max_terms=2,min_digits=1,max_digits=1"
    steps = 64

    [tasks]                                     # short names for tasks that measures name
    easy = "gym:chain_sum:min_terms=2,max_terms=2,min_digits=1,max_digits=1"

    [arms.grpo-lr1e-4]                          # one table per arm: a method and its own settings
    method = "grpo"                             # a method name of grpo-lab compare (grpo, sign, dapo, grpo+drop...)
    learning_rate = 1e-4                        # any RunConfig field but estimator, seed, sampling, skip_prob
    label = "GRPO at lr 1e-4"                   # optional: how the report names it
    dirs = ["lr1e-4/*"]                         # optional: where its runs are (globs under the plan's directory;
                                                #   default runs/<settings>/, shared by the arms of one setting)
    seeds = [0, 1, 2, 3]                        # optional: this arm's seeds

    [measures]
    primary = "pass@1"                          # the measure the planned comparisons read (pass@k, greedy, or
    secondary = ["greedy", "easy pass@1"]       #   a task's name first: "easy pass@1"; reward: the training's)

    [analysis]
    correction = "holm"                         # holm or none, over each family of planned comparisons
    alpha = 0.05                                # family-wise
    pairing = "none"                            # "seed": arm-minus-arm differences pair runs by seed
    margin = 0.03                               # optional: within +-margin and not separated = "equivalent"

    [[comparisons]]                             # the planned comparisons: a minus b, b an arm or "start"
    a = "sign-lr1e-4"
    b = "grpo-lr1e-4"
    label = "sign - grpo at lr 1e-4"            # optional
    family = "stage A"                          # optional: Holm runs within a family (default "planned")
    claim = 0.454                               # optional: a published value to set beside the interval

    [[exploratory]]                             # readings the plan did not fix: intervals, never a verdict
    a = "drgrpo"
    b = "grpo-lr3e-4"
    measure = "greedy"                          # optional (comparisons too): default the primary measure

    [manipulation]                              # did the treatment take? each arm's change from its start
    measure = "pass@1"                          #   on this measure (default), or per arm:
    arms = { control = "easy pass@1" }

    deviations = ["..."]                        # the authors' own list; the report adds what it detects
    corrections = ["..."]                       # for a port: what changed from the hand-written report, and why
    extras = "extras.py"                        # optional: a module of readings that belong to this study only
    [[outputs]]                                 # pages that carry the study's verdict line between markers
    page = "README.md"
    markers = "harm-verdict"                    # <!-- harm-verdict:begin --> ... <!-- harm-verdict:end -->
    link = "docs/results/harm/REPORT.md"        # the report's address as that page links it
    form = "verdict"                            # the headline and every planned interval (default), or
                                                #   "headline": the headline only (a page short of room, the README)

What the report does by construction: it leads with the verdict in words; reads only the planned comparisons,
with the plan's correction, and labels everything else exploratory; states each null as the bound it sets (the
largest difference its interval excludes), and a published claim beside what the task can reach at all; pairs by
seed only when the plan says the design pairs; adds the start's own sampling error to a comparison with the start;
says "held-out" only where the evaluation's problems are disjoint from the training pool (it computes the
overlap); reports the manipulation check; and lists the deviations it detects (a run whose settings differ from
its arm's, another grader or engine within an arm, the plan committed after the first result, runs that started
vLLM's engine before it left the random generators as they were) beside the authors'. Every result is read as
``grpo-lab compare --resume`` reads it: a damaged file, one holding another method or seed than its name says, a
fingerprint that does not match its settings, a duplicate of another run, or a grader other than its arm's is left
out and named. Introduced with issue 47; lesson 12 plans a study of its own.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np

from . import stats
from .compare import (evaluation_problems, is_finished, prepare, read_config, result_problems, shared_settings,
                      train_run, write_config)
from .config import PER_RUN, RunConfig, method_key, method_name
from .io import DirLock, differing_keys, fingerprint, read_json, run_name, write_text_atomic
from .report import md_table

try:  # Python 3.11+; tomli is the same parser for 3.10
    import tomllib
except ImportError:  # pragma: no cover - Python 3.10
    import tomli as tomllib


class PlanError(ValueError):
    """A plan file that cannot be read as a study: the message names the file and the field."""


# ---------------------------------------------------------------------------------------------------------------
# Measures: a registry, like the estimators'. A measure reads one number from a run's result (or from the start's
# evaluation), and says how noisy the start's own evaluation of it is.
# ---------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Metric:
    """One kind of number a study can read. ``source``: "eval" (from an evaluation: a run's ``eval`` or the
    start's) or "history" (from the training log: no start value). ``fraction``: a share in [0, 1] (a difference
    of two then lies within [-1, 1], which bounds what a claim can reach)."""
    name: str
    source: str
    fraction: bool
    read: object  # callable: (evaluation or result, k) -> float
    start_se: object = None  # callable: (evaluation, k) -> float, the start's sampling standard error


def _pass_at(ev: dict, k: int) -> float:
    table = ev.get("pass_at_k") or {}
    if str(k) not in table:
        raise KeyError(f"pass@{k} (the evaluation holds pass@{', pass@'.join(sorted(table, key=int)) or 'nothing'})")
    return float(table[str(k)])


def _pass_at_se(ev: dict, k: int) -> float:
    """The start's sampling standard error of pass@k, given its problems (they are the same after training, so
    only the sampling is noise). pass@1: ``sqrt(sum_i c_i (n - c_i) / (n^2 (n - 1))) / P``, the unbiased
    within-problem variance of each problem's share correct; pass@k > 1: a parametric bootstrap of the counts
    (2,000 draws of Binomial(n, c_i / n), seed 0)."""
    from .passk import pass_at_k

    c = np.asarray(ev["correct"], dtype=float)
    n = int(ev["n_samples"])
    if n < 2:
        return 0.0
    if k == 1:
        return float(math.sqrt(np.sum(c * (n - c) / (n * n * (n - 1)))) / c.size)
    rng = np.random.default_rng(0)
    draws = rng.binomial(n, c / n, size=(2000, c.size))
    return float(np.std([np.mean(pass_at_k(n, d.astype(int), k)) for d in draws], ddof=1))


def _reward(result: dict, k: int) -> float:
    return float(np.mean([h["reward"] for h in result["history"]]))


METRICS: dict[str, Metric] = {}


def register_metric(metric: Metric) -> Metric:
    """Add a metric a plan can name (``pass@k`` is one entry for every k)."""
    METRICS[metric.name] = metric
    return metric


register_metric(Metric("pass@k", "eval", True, _pass_at, _pass_at_se))
register_metric(Metric("greedy", "eval", True, lambda ev, k: float(ev["greedy"]),
                       lambda ev, k: 0.0))  # greedy decoding of one model is deterministic: no sampling error
register_metric(Metric("reward", "history", True, _reward))


@dataclass(frozen=True)
class Measure:
    """A metric on a task: ``"pass@1"`` (the run's own task), ``"easy greedy"`` (the plan's task ``easy``),
    ``"validation pass@1"`` (the run's validation split, ``RunConfig.validation_problems``)."""
    text: str
    metric: Metric
    k: int
    alias: str | None
    task: str | None
    split: str = "test"

    def of(self, result: dict) -> float:
        """The value in a run's result (its evaluation on this task, or its training log)."""
        if self.metric.source == "history":
            return self.metric.read(result, self.k)
        return self.metric.read(self.evaluation(result["eval"], result["config"]["task"]), self.k)

    def evaluation(self, ev: dict, own_task: str) -> dict:
        if self.split == "validation":
            if "validation" not in ev:
                raise KeyError("an evaluation of the validation split (the run has no validation_problems)")
            return ev["validation"]
        if self.task is None or self.task == own_task:
            return ev
        extra = ev.get("extra") or {}
        if self.task not in extra:
            raise KeyError(f"an evaluation on {self.alias} ({self.task}); it was evaluated on "
                           f"{', '.join([own_task, *extra]) or 'nothing else'}")
        return extra[self.task]

    def of_start(self, start: dict, own_task: str) -> tuple[float, float]:
        """The start's value and its sampling standard error."""
        if self.metric.source != "eval":
            raise ValueError(f"{self.text} is read from training logs: the start has none")
        ev = self.evaluation(start, own_task)
        return self.metric.read(ev, self.k), self.metric.start_se(ev, self.k)


def parse_measure(text, tasks: dict, where: str) -> Measure:
    """``"pass@4"``, ``"greedy"``, ``"reward"``, or any of them after a task's short name (``"easy pass@1"``)."""
    if not isinstance(text, str) or not text.strip():
        raise PlanError(f"{where}: a measure is a name such as pass@1, greedy or 'easy pass@1', got {text!r}")
    words = text.split()
    alias = words[0] if len(words) == 2 else None
    if alias == "validation":  # the run's own task's validation split
        name = words[-1]
        inner = parse_measure(name, {}, where)
        if inner.metric.source != "eval":
            raise PlanError(f"{where}: {name} is read from the training log, which has no validation split")
        return Measure(text, inner.metric, inner.k, None, None, "validation")
    if len(words) > 2 or (alias is not None and alias not in tasks):
        raise PlanError(f"{where}: cannot read measure {text!r}: " +
                        (f"{alias!r} is not a task of the plan's [tasks] ({', '.join(tasks) or 'none'}) nor "
                         "'validation'"
                         if alias else "expected '[task] metric'"))
    name = words[-1]
    k = 0
    if re.fullmatch(r"pass@[1-9][0-9]*", name):
        name, k = "pass@k", int(name[5:])
    if name not in METRICS:
        raise PlanError(f"{where}: unknown metric {words[-1]!r}; choose pass@k, " +
                        ", ".join(n for n in METRICS if n != "pass@k"))
    metric = METRICS[name]
    if alias is not None and metric.source != "eval":
        raise PlanError(f"{where}: {name} is read from the training log, which has no task to choose")
    return Measure(text, metric, k, alias, tasks.get(alias))


# ---------------------------------------------------------------------------------------------------------------
# The plan file.
# ---------------------------------------------------------------------------------------------------------------

TOP_KEYS = {"title", "question", "plan", "port", "seeds", "budget_hours", "report", "grader", "base", "tasks",
            "arms", "selections", "measures", "analysis", "comparisons", "exploratory", "manipulation", "deviations",
            "corrections", "extras", "outputs"}
ARM_KEYS = {"method", "label", "dirs", "seeds"}
RUN_FIELDS = {f.name for f in fields(RunConfig)} - set(PER_RUN)
CORRECTIONS = ("holm", "none")
PAIRINGS = ("none", "seed")


@dataclass
class Arm:
    name: str
    method: str
    label: str
    settings: dict       # RunConfig overrides beside the base
    dirs: list | None    # glob patterns under the plan's directory, or None (the default directory)
    seeds: list
    config: RunConfig    # the arm's settings (seed 0)


@dataclass
class Selection:
    """An arm chosen among candidates by a validation measure (the best learning rate of a method), before any test
    comparison is read; comparisons name it like an arm."""
    name: str
    among: list
    by: Measure


@dataclass
class Spec:
    """A comparison as the plan states it: ``a - b`` on ``measure`` (b an arm or "start"); with ``c`` and ``d``, the
    interaction ``(a - b) - (c - d)`` (does a treatment change a difference?)."""
    a: str
    b: str
    label: str
    measure: Measure
    family: str
    planned: bool
    claim: float | None = None
    pairing: str = "none"
    c: str | None = None
    d: str | None = None


@dataclass
class Plan:
    path: Path
    title: str
    question: str
    prose: str | None
    port: str | None
    seeds: list
    budget_hours: float | None
    report: str
    grader: str | None
    base: dict
    tasks: dict
    arms: dict
    selections: dict
    primary: Measure
    secondary: list
    correction: str
    alpha: float
    pairing: str
    margin: float | None
    comparisons: list
    exploratory: list
    manipulation: dict    # arm -> Measure
    deviations: list
    corrections: list
    extras: str | None
    outputs: list
    raw: dict = field(repr=False, default_factory=dict)

    @property
    def home(self) -> Path:
        return self.path.parent


def _need(table: dict, key: str, kind, where: str, default=...):
    if key not in table:
        if default is ...:
            raise PlanError(f"{where}: missing {key!r}")
        return default
    value = table[key]
    ok = isinstance(value, kind) and not (isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple)
                                                                                   else (kind,)))
    if not ok:
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise PlanError(f"{where}: {key} must be {names}, got {type(value).__name__} {value!r}")
    return value


def _unknown(table: dict, allowed: set, where: str) -> None:
    extra = sorted(set(table) - allowed)
    if extra:
        raise PlanError(f"{where}: unknown field {extra[0]!r} (allowed: {', '.join(sorted(allowed))})")


def _seeds(value, where: str) -> list:
    if not isinstance(value, list) or not value or not all(isinstance(s, int) and not isinstance(s, bool)
                                                           and s >= 0 for s in value):
        raise PlanError(f"{where}: seeds must be a non-empty list of whole numbers >= 0, got {value!r}")
    if len(set(value)) != len(value):
        raise PlanError(f"{where}: seeds list a seed twice: {value}")
    return list(value)


def read_plan(path) -> Plan:
    """Read and validate a plan file; every problem is a :class:`PlanError` naming the file and the field."""
    path = Path(path)
    if not path.is_file():
        raise PlanError(f"{path}: no such plan file")
    w = str(path)  # errors name the file as it was given
    path = path.resolve()
    try:
        raw = tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise PlanError(f"{w}: not a valid TOML file ({e})") from None
    _unknown(raw, TOP_KEYS, w)
    title = _need(raw, "title", str, w)
    seeds = _seeds(_need(raw, "seeds", list, w), f"{w}: seeds")
    base = dict(_need(raw, "base", dict, w, {}))
    bad = sorted(set(base) - RUN_FIELDS)
    if bad:
        raise PlanError(f"{w}: [base]: {bad[0]!r} is not a setting of a run (RunConfig fields, less "
                        f"{', '.join(PER_RUN)}, which a method or seed sets)")
    tasks = _need(raw, "tasks", dict, w, {})
    for alias, task in tasks.items():
        if not isinstance(task, str):
            raise PlanError(f"{w}: [tasks]: {alias} must name a task, got {task!r}")
    arms = {}
    for name, t in _need(raw, "arms", dict, w).items():
        where = f"{w}: [arms.{name}]"
        if name == "start":
            raise PlanError(f"{where}: 'start' is the starting policy's name; choose another")
        if not isinstance(t, dict):
            raise PlanError(f"{where}: an arm is a table with a method")
        _unknown(t, ARM_KEYS | RUN_FIELDS, where)
        method = _need(t, "method", str, where)
        settings = {k: v for k, v in t.items() if k in RUN_FIELDS}
        try:
            cfg = RunConfig(**{**base, **settings}).with_run(method, 0)
            cfg.validate(here=False)
        except (TypeError, ValueError) as e:
            raise PlanError(f"{where}: not a valid run: {e}") from None
        dirs = t.get("dirs")
        if dirs is not None and not (isinstance(dirs, list) and dirs and all(isinstance(d, str) for d in dirs)):
            raise PlanError(f"{where}: dirs must be a list of paths under the plan's directory, got {dirs!r}")
        arm_seeds = _seeds(t["seeds"], f"{where}: seeds") if "seeds" in t else seeds
        arms[name] = Arm(name, method, _need(t, "label", str, where, name), settings, dirs, arm_seeds, cfg)
    if not arms:
        raise PlanError(f"{w}: [arms]: a study needs at least one arm")
    same = {}
    for arm in arms.values():  # two arms of the same runs would be one arm read twice
        key = (method_key(arm.method), json.dumps(shared_settings(arm.config), sort_keys=True),
               json.dumps(arm.dirs))
        if key in same and set(arm.seeds) & set(arms[same[key]].seeds):
            raise PlanError(f"{w}: arms {same[key]} and {arm.name} are the same runs (one method, one setting)")
        same[key] = arm.name
    selections = {}
    for name, t in _need(raw, "selections", dict, w, {}).items():
        where = f"{w}: [selections.{name}]"
        if name in arms or name == "start":
            raise PlanError(f"{where}: {name!r} is already an arm's name")
        if not isinstance(t, dict):
            raise PlanError(f"{where}: a selection is a table with among and by")
        _unknown(t, {"among", "by"}, where)
        among = _need(t, "among", list, where)
        if len(among) < 2 or any(a not in arms for a in among):
            raise PlanError(f"{where}: among must list at least two of the plan's arms, got {among!r}")
        by = parse_measure(_need(t, "by", str, where), tasks, where)
        if by.split != "validation":
            raise PlanError(f"{where}: by = {by.text!r} reads the test problems; a selection reads the validation "
                            "split ('validation pass@1'), so that the test comparisons stay unbiased")
        selections[name] = Selection(name, list(among), by)
    m = _need(raw, "measures", dict, w)
    _unknown(m, {"primary", "secondary"}, f"{w}: [measures]")
    if "primary" not in m:
        raise PlanError(f"{w}: [measures]: missing 'primary' (the one measure the planned comparisons read)")
    primary = parse_measure(m["primary"], tasks, f"{w}: [measures] primary")
    secondary = [parse_measure(x, tasks, f"{w}: [measures] secondary") for x in _need(m, "secondary", list, w, [])]
    an = _need(raw, "analysis", dict, w, {})
    _unknown(an, {"correction", "alpha", "pairing", "margin"}, f"{w}: [analysis]")
    correction = _need(an, "correction", str, f"{w}: [analysis]", "holm")
    if correction not in CORRECTIONS:
        raise PlanError(f"{w}: [analysis]: correction {correction!r} is not one grpo-lab implements "
                        f"({', '.join(CORRECTIONS)})")
    alpha = float(_need(an, "alpha", (int, float), f"{w}: [analysis]", 0.05))
    if not 0 < alpha < 1:
        raise PlanError(f"{w}: [analysis]: alpha must lie strictly between 0 and 1, got {alpha}")
    pairing = _need(an, "pairing", str, f"{w}: [analysis]", "none")
    if pairing not in PAIRINGS:
        raise PlanError(f"{w}: [analysis]: pairing must be {' or '.join(PAIRINGS)}, got {pairing!r}")
    margin = an.get("margin")
    if margin is not None and (isinstance(margin, bool) or not isinstance(margin, (int, float)) or margin <= 0):
        raise PlanError(f"{w}: [analysis]: margin must be a positive number, got {margin!r}")

    def specs(key: str, planned: bool) -> list:
        out = []
        for i, c in enumerate(_need(raw, key, list, w, [])):
            where = f"{w}: [[{key}]] #{i + 1}"
            if not isinstance(c, dict):
                raise PlanError(f"{where}: a comparison is a table with a and b")
            _unknown(c, {"a", "b", "c", "d", "label", "measure", "family", "claim", "pairing", "verdict"}, where)
            if "verdict" in c:
                raise PlanError(f"{where}: a verdict is drawn only from a planned comparison"
                                + (" ([[comparisons]]); this one is exploratory" if not planned else
                                   "; it is not a field (the report draws it)"))
            a, b = _need(c, "a", str, where), _need(c, "b", str, where)
            cc, dd = _need(c, "c", str, where, None), _need(c, "d", str, where, None)
            if (cc is None) != (dd is None) or (cc is not None and "start" in (b, dd)):
                raise PlanError(f"{where}: an interaction names four arms, (a - b) - (c - d); give both c and d, "
                                "none of them the start")
            for side, name in (("a", a), ("b", b), ("c", cc), ("d", dd)):
                if name is None:
                    continue
                if name not in arms and name not in selections and not (side == "b" and name == "start"):
                    raise PlanError(f"{where}: {side} = {name!r} names no arm (arms: {', '.join(arms)}"
                                    + (f"; selections: {', '.join(selections)}" if selections else "")
                                    + (", or 'start' for b" if side == "b" else "") + ")")
            if b == "start" and a in selections:
                raise PlanError(f"{where}: a selection is compared with arms, not with the start (its arms are)")
            if a == b:
                raise PlanError(f"{where}: a and b are the same arm ({a})")
            meas = parse_measure(c["measure"], tasks, where) if "measure" in c else primary
            if b == "start" and meas.metric.source != "eval":
                raise PlanError(f"{where}: {meas.text} comes from the training log; the start has none")
            claim = c.get("claim")
            if claim is not None and (isinstance(claim, bool) or not isinstance(claim, (int, float))):
                raise PlanError(f"{where}: claim must be a number, got {claim!r}")
            pair = _need(c, "pairing", str, where, pairing)
            if pair not in PAIRINGS:
                raise PlanError(f"{where}: pairing must be {' or '.join(PAIRINGS)}, got {pair!r}")
            label = _need(c, "label", str, where, f"{a} − {b}" if b != "start" else f"{a} − start")
            if cc is not None:
                label = _need(c, "label", str, where, f"({a} − {b}) − ({cc} − {dd})")
                if pair == "seed":
                    raise PlanError(f"{where}: an interaction is read unpaired (Welch over the four arms)")
            out.append(Spec(a, b, label, meas, _need(c, "family", str, where, "planned" if planned else
                                                     "exploratory"), planned, claim, pair, cc, dd))
        return out

    comparisons = specs("comparisons", True)
    if not comparisons:
        raise PlanError(f"{w}: [[comparisons]]: a plan needs at least one planned comparison")
    labels = [s.label for s in comparisons]
    if len(set(labels)) != len(labels):
        raise PlanError(f"{w}: [[comparisons]]: two planned comparisons share the label "
                        f"{next(x for x in labels if labels.count(x) > 1)!r}")
    exploratory = specs("exploratory", False)
    man = _need(raw, "manipulation", dict, w, {})
    _unknown(man, {"measure", "arms"}, f"{w}: [manipulation]")
    default = parse_measure(man["measure"], tasks, f"{w}: [manipulation]") if "measure" in man else None
    per_arm = _need(man, "arms", dict, f"{w}: [manipulation]", {})
    for name in per_arm:
        if name not in arms:
            raise PlanError(f"{w}: [manipulation] arms: {name!r} names no arm")
    manipulation = {}
    for name in arms:
        meas = parse_measure(per_arm[name], tasks, f"{w}: [manipulation] arms.{name}") if name in per_arm \
            else default
        if meas is not None:
            if meas.metric.source != "eval":
                raise PlanError(f"{w}: [manipulation]: {meas.text} has no start value to move from")
            manipulation[name] = meas
    outputs = []
    for i, o in enumerate(_need(raw, "outputs", list, w, [])):
        where = f"{w}: [[outputs]] #{i + 1}"
        if not isinstance(o, dict):
            raise PlanError(f"{where}: an output is a table with page, markers and link")
        _unknown(o, {"page", "markers", "link", "form"}, where)
        out = {k: _need(o, k, str, where) for k in ("page", "markers", "link")}
        out["form"] = _need(o, "form", str, where, "verdict")
        if out["form"] not in FORMS:
            raise PlanError(f"{where}: form {out['form']!r} is not one of {', '.join(map(repr, FORMS))}")
        outputs.append(out)
    budget = raw.get("budget_hours")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, (int, float)) or budget <= 0):
        raise PlanError(f"{w}: budget_hours must be a positive number, got {budget!r}")
    for key in ("deviations", "corrections"):
        if not all(isinstance(x, str) for x in _need(raw, key, list, w, [])):
            raise PlanError(f"{w}: {key} must be a list of sentences")
    return Plan(path=path, title=title, question=_need(raw, "question", str, w, ""),
                prose=_need(raw, "plan", str, w, None), port=_need(raw, "port", str, w, None), seeds=seeds,
                budget_hours=budget, report=_need(raw, "report", str, w, "REPORT.md"),
                grader=_need(raw, "grader", str, w, None), base=base, tasks=dict(tasks), arms=arms,
                selections=selections, primary=primary,
                secondary=secondary, correction=correction, alpha=alpha, pairing=pairing, margin=margin,
                comparisons=comparisons, exploratory=exploratory, manipulation=manipulation,
                deviations=list(raw.get("deviations", [])), corrections=list(raw.get("corrections", [])),
                extras=_need(raw, "extras", str, w, None), outputs=outputs, raw=raw)


# ---------------------------------------------------------------------------------------------------------------
# Where each arm's runs live, and the work units of ``study run``.
# ---------------------------------------------------------------------------------------------------------------

def _slug(value) -> str:
    return re.sub(r"[^A-Za-z0-9_.=+-]+", "_", str(value))


def default_dir(plan: Plan, arm: Arm) -> Path:
    """``runs/<the settings that set this arm apart from [base]>`` (``runs/base`` when none): arms of one setting
    share a comparison directory, so the start is evaluated once for them."""
    shared = shared_settings(arm.config)
    base = shared_settings(RunConfig(**plan.base))
    diff = [f"{k}={_slug(shared[k])}" for k in sorted(shared) if shared[k] != base[k]]
    return plan.home / "runs" / ("-".join(diff) or "base")


def arm_dirs(plan: Plan, arm: Arm) -> list[Path]:
    """The comparison directories that hold an arm's runs (globs expanded, sorted; a pattern that matches nothing
    contributes nothing: the arm's runs are then missing)."""
    if arm.dirs is None:
        return [default_dir(plan, arm)]
    out = []
    for pattern in arm.dirs:
        hits = sorted(p.parent for p in plan.home.glob(f"{pattern}/config.json")) if any(
            ch in pattern for ch in "*?[") else [plan.home / pattern]
        out += [h.resolve() for h in hits if h.resolve() not in out]
    return out


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

def _wait_lock(directory: Path, echo, wait: float = 2.0, most: float = 12 * 3600):
    """Take :class:`DirLock` on ``directory``, waiting while another process holds it (it may be evaluating the
    start for every shard)."""
    t0, said = time.monotonic(), False
    while True:
        try:
            return DirLock(directory).__enter__()
        except RuntimeError as e:
            if "already locked by this process" in str(e) or time.monotonic() - t0 > most:
                raise
            if not said:
                echo(f"waiting: {e}")
                said = True
            time.sleep(wait)


def _open(plan: Plan, directory: Path, arms: list, echo) -> dict:
    """The comparison in ``directory`` for these arms (one setting, their methods and seeds): created, or checked
    against the plan (a directory of other settings is refused, naming the fields)."""
    base = arms[0].config
    methods = list(dict.fromkeys(a.method for a in arms))
    seeds = sorted({s for a in arms for s in a.seeds})
    if not (directory / "config.json").is_file():
        conf = write_config(directory, methods, seeds, base, command=f"grpo-lab study run {plan.path.name}")
        conf["base"] = RunConfig(**conf["base"])
        return conf
    conf = read_config(directory)
    diff = differing_keys(shared_settings(conf["base"]), shared_settings(base))
    if diff:
        raise ValueError(f"{directory} holds runs of other settings than the plan's arm {arms[0].name} "
                         f"(directory != plan): {'; '.join(diff)}")
    stored = read_json(directory / "config.json", "comparison config")
    est = list(dict.fromkeys([*stored["estimators"], *methods]))
    sds = sorted({*stored["seeds"], *seeds})
    if (est, sds) != (stored["estimators"], stored["seeds"]):
        from .io import write_json_atomic

        stored.update(estimators=est, seeds=sds)
        write_json_atomic(directory / "config.json", stored)
        conf.update(estimators=est, seeds=sds)
    return conf


def _share_start(plan: Plan, directory: Path, conf: dict, echo) -> None:
    """Copy the start's evaluation from another directory of the study that evaluated the same start (the same
    :func:`grpo_lab.runner.start_key`: the learning rate or the method do not change it), instead of evaluating it
    again (minutes on a real model). The copy records where it came from."""
    from .io import write_json_atomic
    from .runner import start_key

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


def run_study(plan: Plan, shard=(1, 1), workers: int = 1, progress: bool = False, echo=print,
              worker: tuple[int, int] | None = None) -> dict:
    """Train the runs of ``plan`` (this shard's) that are missing; return ``{"trained": [...], "finished": [...]}``.

    Each arm's comparison directory is prepared once (its config, the start's evaluation, the trainer settings)
    under the directory's lock; each run is trained under a lock of its own, so shards and workers on a shared
    filesystem never train one run twice. A run is never trained with settings other than its arm's: a directory
    of other settings is refused, naming the fields. ``workers`` > 1 starts that many local processes (one torch
    thread each unless the plan sets ``threads``); this process only checks the directories and waits, holding no
    model. Worker ``w`` of ``n`` trains every ``n``-th run from the ``w``-th first, then sweeps the shard's other
    runs, skipping those another process holds: a worker that dies (out of memory, say) leaves its runs to the
    others, and an interrupted run starts over."""
    mine = shard_units(plan, shard)
    if worker is not None:
        w, n = worker
        mine = mine[w - 1::n] + [u for i, u in enumerate(mine) if i % n != w - 1]
    groups: dict[Path, list] = {}
    for name, _ in mine:
        arm = plan.arms[name]
        d = train_dir(plan, arm).resolve()
        if arm not in groups.setdefault(d, []):
            groups[d].append(arm)
    spawning = workers > 1 and worker is None
    prepared = {}
    for d, arms in groups.items():
        lock = _wait_lock(d, echo)
        try:
            conf = _open(plan, d, [a for a in plan.arms.values() if train_dir(plan, a).resolve() == d], echo)
            if not spawning:  # the start's evaluation loads the model: the workers do it, not the parent
                _share_start(plan, d, conf, echo)
                prepared[d] = (conf, *prepare(d, conf, echo))
        finally:
            lock.__exit__(None, None, None)
    if spawning:
        return _spawn(plan, shard, workers, echo)
    trained, done = [], []
    for name, seed in mine:
        arm = plan.arms[name]
        d = train_dir(plan, arm).resolve()
        conf, start, expected = prepared[d]
        label = f"{arm.name} seed {seed}"
        lock_dir = d / "locks" / run_name(arm.method, seed)
        try:
            with DirLock(lock_dir):
                if is_finished(d, arm.config, arm.method, seed, echo):
                    done.append(label)
                else:
                    echo(f"training {label} in {d}")
                    train_run(d, arm.config, arm.method, seed, start, expected, progress)
                    trained.append(label)
        except RuntimeError as e:
            if "in use by process" not in str(e):
                raise
            echo(f"{label}: another process is training it ({e}); skipped here")
        for empty in (lock_dir, lock_dir.parent):  # the lock files are gone with their owners; so are their folders
            try:
                empty.rmdir()
            except OSError:
                pass
    return {"trained": trained, "finished": done}


def _spawn(plan: Plan, shard, workers: int, echo) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    procs = [subprocess.Popen([sys.executable, "-m", "grpo_lab.cli", "study", "run", str(plan.path),
                               "--shard", f"{shard[0]}/{shard[1]}", "--worker", f"{w}/{workers}"], env=env)
             for w in range(1, workers + 1)]
    codes = [p.wait() for p in procs]
    if any(codes):
        raise RuntimeError(f"study run: worker(s) {', '.join(str(i + 1) for i, c in enumerate(codes) if c)} of "
                           f"{workers} failed (exit {', '.join(str(c) for c in codes if c)}); their finished runs "
                           "are kept: run again to resume")
    echo(f"{workers} workers finished")
    return {"trained": [], "finished": []}


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
    return json.dumps([ev.get("correct"), ev.get("greedy"), [h.get("loss") for h in r.get("history", [])],
                       r.get("train_seconds")], default=str)


def recorded_fingerprint(cfg: dict) -> str:
    """The fingerprint of a run's recorded settings as the grpo-lab that wrote it computed it: over the fields it
    recorded (a field added since is not part of it; ``compare.read_config`` reads a config the same way)."""
    return fingerprint({k: v for k, v in shared_settings(cfg).items() if k in cfg})


def _rel(path: Path, home: Path) -> str:
    try:
        return Path(os.path.relpath(path, home)).as_posix()
    except ValueError:  # pragma: no cover - another drive
        return str(path)


def read_arm(plan: Plan, arm: Arm, seen: dict) -> ArmData:
    """An arm's finished runs, each checked as ``--resume`` checks it; what fails is left out and named.
    ``seen`` maps each result's contents to the file that first held it (a copy of another run is refused)."""
    dirs = arm_dirs(plan, arm)
    runs, where, refused = {}, {}, []
    start, start_dir = None, None
    expected = shared_settings(arm.config)
    for d in dirs:
        if not (d / "config.json").is_file():
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
            f = d / "results" / f"{run_name(arm.method, seed)}.json"
            if not f.is_file():
                continue
            name = _rel(f, plan.home)
            why = None
            try:
                r = read_json(f, "results file")
                why = result_problems(r, False, arm.config.eval_problems)
                if why is None:
                    cfg = r["config"]
                    if (method_key(cfg), cfg.get("seed")) != (method_key(arm.method), seed):
                        why = f"it holds {method_name(cfg)} seed {cfg.get('seed')}, not {arm.method} seed {seed}"
                    elif r.get("fingerprint") != recorded_fingerprint(cfg):
                        why = (f"its fingerprint {r.get('fingerprint')!r} does not match its own settings "
                               f"({recorded_fingerprint(cfg)}): edited after it was written?")
                    elif differing_keys(expected, shared_settings(cfg)):
                        why = f"its settings are not the arm's: {'; '.join(differing_keys(expected, shared_settings(cfg))[:3])}"
                    elif plan.grader is not None and (r["eval"].get("grader") or "unrecorded") != plan.grader:
                        why = f"graded by {r['eval'].get('grader') or 'an unrecorded grader'}, the plan's is {plan.grader}"
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
        if r["eval"].get("grader"):
            graders.setdefault(r["eval"]["grader"], []).append(seed)
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
                refused.append((_rel(where[seed] / "results" / f"{run_name(arm.method, seed)}.json", plan.home),
                                f"graded by {g}, while " + (f"the arm's other runs record {keep}" if keep else
                                                             "the arm's runs split evenly between graders")))
                runs.pop(seed)
                where.pop(seed)
    missing = [s for s in arm.seeds if s not in runs]
    return ArmData(arm, dirs, dict(sorted(runs.items())), where, start, start_dir, refused, missing)


# ---------------------------------------------------------------------------------------------------------------
# The analysis.
# ---------------------------------------------------------------------------------------------------------------

@dataclass
class Reading:
    """One comparison read from the data: ``d = a - b`` with its interval, or why it cannot be read."""
    spec: Spec
    n_a: int
    n_b: int
    d: float | None = None
    lo: float | None = None
    hi: float | None = None
    p: float | None = None
    kind: str = ""             # welch, paired, start
    start_se: float | None = None
    apart: bool | None = None  # after the family's correction (planned, complete) or None
    why_not: str | None = None
    need: int | None = None
    mean_b: float | None = None


def _fmt(x: float, signed: bool = True) -> str:
    return f"{x:+.3f}" if signed else f"{x:.3f}"


class Study:
    """A plan and its runs as read: ``Study.load(path)``; the report is :func:`render_report`."""

    def __init__(self, plan: Plan):
        self.plan = plan
        seen: dict = {}
        self.data = {name: read_arm(plan, arm, seen) for name, arm in plan.arms.items()}
        self.done = sum(len(a.runs) for a in self.data.values())
        self.total = sum(len(a.seeds) for a in plan.arms.values())
        self.complete = all(not a.missing for a in self.data.values())
        self.readings = {fam: self._family(specs) for fam, specs in self._families(plan.comparisons).items()}
        self.exploratory = [self._read(s) for s in plan.exploratory]

    @classmethod
    def load(cls, path) -> "Study":
        return cls(read_plan(path))

    # values --------------------------------------------------------------------------------------------------
    def chosen(self, name: str) -> str | None:
        """The arm a selection chose: the highest mean of its ``by`` measure among its candidates, once every
        candidate has all its runs (None before; the first listed wins a tie)."""
        sel = self.plan.selections[name]
        if any(self.data[a].missing for a in sel.among):
            return None
        means = [float(np.mean(list(self.values(a, sel.by).values()))) for a in sel.among]
        return sel.among[int(np.argmax(means))]

    def values(self, arm: str, measure: Measure | None = None) -> dict:
        """``{seed: value}`` of an arm's finished runs on ``measure`` (default the primary); a selection gives its
        chosen arm's (nothing before it has chosen)."""
        measure = measure or self.plan.primary
        if arm in self.plan.selections:
            arm = self.chosen(arm)
            if arm is None:
                return {}
        return {s: measure.of(r) for s, r in self.data[arm].runs.items()}

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
        return measure.of_start(a.start, a.arm.config.task)

    # comparisons ----------------------------------------------------------------------------------------------
    @staticmethod
    def _families(specs) -> dict:
        out: dict = {}
        for s in specs:
            out.setdefault(s.family, []).append(s)
        return out

    def _read(self, spec: Spec) -> Reading:
        if spec.c is not None:
            return self._interaction(spec)
        a = self.values(spec.a, spec.measure)
        if spec.b == "start":
            st = self.start(spec.a, spec.measure)
            r = Reading(spec, len(a), 0, kind="start")
            if st is None:
                r.why_not = "no start evaluation yet"
                return r
            x = list(a.values())
            r.mean_b, r.start_se = st
            if len(x) < 2:
                r.why_not = f"{len(x)} seed(s): an interval needs 2"
                return r
            if not stats.spread(x) and st[1] == 0:
                r.why_not = f"cannot tell: the {len(x)} seeds agree exactly and the start has no sampling error"
                return r
            r.d, r.lo, r.hi = stats.change_ci(x, st[0], st[1])
            r.p = stats.change_p(x, st[0], st[1])
            return r
        b = self.values(spec.b, spec.measure)
        r = Reading(spec, len(a), len(b))
        if spec.pairing == "seed":
            common = sorted(set(a) & set(b))
            x, y = [a[s] for s in common], [b[s] for s in common]
            r.kind, r.n_a, r.n_b = "paired", len(common), len(common)
        else:
            x, y = list(a.values()), list(b.values())
            r.kind = "welch"
        if y:
            r.mean_b = float(np.mean(y))
        if len(x) < 2 or len(y) < 2:
            r.why_not = f"{len(x)} and {len(y)} seeds: an interval needs 2 on each side"
            return r
        if r.kind == "paired":
            diffs = np.asarray(x) - np.asarray(y)
            if not stats.spread(diffs):
                r.why_not = f"cannot tell: the {len(x)} paired differences agree exactly"
                return r
            r.d, r.lo, r.hi = stats.paired_ci(x, y)
            r.p = stats.paired_p(x, y)
        else:
            if not stats.spread(x) and not stats.spread(y):
                r.why_not = f"cannot tell: the seeds of each side agree exactly"
                return r
            r.d, r.lo, r.hi = stats.diff_ci(x, y)
            r.p = stats.diff_p(x, y)
        return r

    def _interaction(self, spec: Spec) -> Reading:
        """``(a - b) - (c - d)`` over four independent arms: the difference of means, its standard error
        ``sqrt(sum s_i^2 / n_i)`` and the t quantile at the smallest ``n_i - 1`` (Welch's conservative choice)."""
        samples = [list(self.values(x, spec.measure).values()) for x in (spec.a, spec.b, spec.c, spec.d)]
        r = Reading(spec, len(samples[0]), len(samples[1]), kind="interaction")
        if any(len(x) < 2 for x in samples):
            r.why_not = "an interaction needs 2 seeds in each of its four arms"
            return r
        if not any(stats.spread(x) for x in samples):
            r.why_not = "cannot tell: every arm's seeds agree exactly"
            return r
        means = [float(np.mean(x)) for x in samples]
        se = math.sqrt(sum(float(np.var(x, ddof=1)) / len(x) for x in samples))
        r.d = means[0] - means[1] - (means[2] - means[3])
        t = stats.t_quantile(min(len(x) for x in samples) - 1)
        r.lo, r.hi = r.d - t * se, r.d + t * se
        r.p = 1.0 if se == 0 and r.d == 0 else 0.0 if se == 0 else \
            min(1.0, 2 * (1 - stats.t_cdf(abs(r.d) / se, min(len(x) for x in samples) - 1)))
        return r

    def _family(self, specs) -> list:
        rows = [self._read(s) for s in specs]
        if not self.complete or any(r.p is None for r in rows):
            return rows
        m = len(rows)
        rejected = stats.holm([r.p for r in rows], self.plan.alpha) if self.plan.correction == "holm" else \
            [r.p < self.plan.alpha for r in rows]
        for r, rej in zip(rows, rejected):
            r.apart = bool(rej)
            if r.kind == "welch":
                x = list(self.values(r.spec.a, r.spec.measure).values())
                y = list(self.values(r.spec.b, r.spec.measure).values())
                strict = self.plan.alpha / m if self.plan.correction == "holm" else self.plan.alpha
                r.need = stats.seeds_needed(x, y, alpha=strict)
        return rows

    @property
    def planned(self) -> list:
        return [r for rows in self.readings.values() for r in rows]

    # design checks --------------------------------------------------------------------------------------------
    def manipulation(self) -> list:
        """Per arm with a manipulation measure: ``(arm, measure, reading)``: its change from its start, with the
        start's noise: did the treatment take?"""
        out = []
        for name, meas in self.plan.manipulation.items():
            out.append((name, meas, self._read(Spec(name, "start", f"{name} − start", meas, "manipulation", False))))
        return out

    def overlap(self) -> list:
        """Per evaluated task of each arm: (arms, task, evaluation draws, distinct problems, how many of them
        are in the training pool), computed from the settings; arms with the same pools share a row."""
        from .runner import overlap

        rows: dict = {}
        for name, arm in self.plan.arms.items():
            cfg = arm.config
            for task in (cfg.task, *cfg.eval_tasks):
                key = (task, cfg.eval_problems, cfg.eval_seed, cfg.task, cfg.train_problems, cfg.data_seed,
                       cfg.smoke, cfg.data)
                if key in rows:
                    rows[key][0].append(name)
                    continue
                try:
                    o = overlap(cfg, task)
                    rows[key] = ([name], task, o["draws"], o["distinct"], o["in_training"], o["pool"], None)
                except Exception as e:  # a task that cannot be generated here: say so, never guess
                    rows[key] = ([name], task, None, None, None, None, f"{type(e).__name__}: {e}"[:160])
        return list(rows.values())

    def own_runs(self) -> dict:
        """``{file: result}``: the finished runs in the study's own directories (under the plan's), each once
        (two arms may read one run; an arm may reuse another study's runs, which are not this study's cost)."""
        out = {}
        for a in self.data.values():
            for seed, r in a.runs.items():
                d = a.run_dir[seed]
                if d.is_relative_to(self.plan.home):
                    out[d / "results" / f"{run_name(a.arm.method, seed)}.json"] = r
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
                if g.get("engine") == "vllm" and not g.get("generators_kept") and \
                        g.get("syncs") == r.get("steps_done", len(r["history"])):
                    f = _rel(a.run_dir[seed] / "results" / f"{run_name(a.arm.method, seed)}.json", self.plan.home)
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
                    graders.setdefault(r["eval"]["grader"], set()).add(name)
                else:
                    unrecorded.append(f"{name} seed {seed}")
        if unrecorded:
            out.append(f"{len(unrecorded)} runs record no grader (written before grpo-lab recorded it): "
                       f"{', '.join(unrecorded[:12])}{', ...' if len(unrecorded) > 12 else ''}; their scores "
                       "cannot be checked against the others' grader.")
        if len(graders) > 1:
            out.append("The arms were graded by more than one grader: " + "; ".join(
                f"{g} ({', '.join(sorted(arms))})" for g, arms in graders.items()) +
                ": a score depends on the grader, so a difference between these arms may be partly the grader's.")
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
        if self.plan.budget_hours is not None:
            hours = self.machine_hours()
            if hours > self.plan.budget_hours:
                out.append(f"The finished runs took {hours:.1f} machine-hours, over the plan's {self.plan.budget_hours:g}.")
        return out

    def machine_hours(self) -> float:
        """Training and evaluation time of the study's own finished runs, in hours."""
        return sum((r.get("train_seconds") or 0) + (r.get("eval_seconds") or 0) for r in self.own_runs().values()) \
            / 3600


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


# ---------------------------------------------------------------------------------------------------------------
# Words: every verdict comes from the unrounded numbers.
# ---------------------------------------------------------------------------------------------------------------

def label(study: Study, name: str) -> str:
    """How the report names an arm, a selection (with the arm it chose) or the start."""
    if name == "start":
        return "the start"
    if name in study.plan.selections:
        chosen = study.chosen(name)
        return f"{name} ({study.plan.arms[chosen].label})" if chosen else name
    return study.plan.arms[name].label


def _names(study: Study, r: Reading) -> tuple[str, str]:
    """The two sides' names: two arms (or an arm and the start), or for an interaction its two differences."""
    if r.spec.c is not None:
        return (f"({label(study, r.spec.a)} − {label(study, r.spec.b)})",
                f"({label(study, r.spec.c)} − {label(study, r.spec.d)})")
    return label(study, r.spec.a), label(study, r.spec.b)


def interval(r: Reading) -> str:
    return f"{_fmt(r.d)} [{_fmt(r.lo)}, {_fmt(r.hi)}]"


def verdict_word(study: Study, r: Reading) -> str:
    """The plan's reading of one planned comparison (after its family's correction), or why there is none."""
    a, b = _names(study, r)
    if r.why_not:
        return r.why_not
    if r.apart is None:
        return "not read yet (the plan reads its comparisons when every run has finished)"
    if r.apart:
        if r.spec.b == "start":
            return "up from the start" if r.lo > 0 else "down from the start"
        if r.spec.c is not None:
            return f"{a} exceeds {b}" if r.lo > 0 else f"{b} exceeds {a}"
        return f"{a} ahead" if r.lo > 0 else f"{b} ahead"
    m = study.plan.margin
    if m is not None and -m <= r.lo and r.hi <= m:
        return f"not separated, and within ±{m:g}: equivalent at the plan's margin"
    return "not separated" + (f", and not within ±{m:g}: undecided at this size" if m is not None else "")


def largest_difference(r: Reading) -> float | None:
    """The largest difference a reading's measure allows: 1 for a difference of two fractions (or a fraction and its
    start), 2 for a difference of two such differences; None for a measure without bounds. A side of an interval
    beyond it excludes nothing (two seeds far apart give a t-interval of ±1.9 on a pass@1 difference)."""
    if not r.spec.measure.metric.fraction:
        return None
    return 2.0 if r.spec.c is not None else 1.0


def past_range(r: Reading) -> tuple[bool, bool]:
    """``(above, below)``: whether each side of a reading's interval reaches past the largest difference its
    measure allows (:func:`largest_difference`); such a side excludes nothing. ``(False, False)`` for a measure
    without bounds."""
    top = largest_difference(r)
    return (top is not None and r.hi >= top, top is not None and -r.lo >= top)


def bound(study: Study, r: Reading) -> str:
    """What a reading excludes, in words (the null stated as the bound it sets), from the unrounded interval; a side
    that reaches past the largest difference the measure allows (:func:`largest_difference`) excludes nothing."""
    if r.d is None:
        return ""
    a, b = _names(study, r)
    if r.spec.b == "start":
        gain, loss = f"a gain larger than {r.hi:.3f}", f"a loss larger than {-r.lo:.3f}"
    elif r.spec.c is not None:
        gain, loss = f"{a} exceeding {b} by more than {r.hi:.3f}", f"{b} exceeding {a} by more than {-r.lo:.3f}"
    else:
        gain, loss = f"{a} ahead by more than {r.hi:.3f}", f"{b} ahead by more than {-r.lo:.3f}"
    above, below = past_range(r)
    if above or below:
        top = largest_difference(r)
        what = "a difference of fractions" if top == 1 else "a difference of two differences of fractions"
        past = f"the interval reaches past ±{top:g}, the most {what} can be"
        if above and below:
            return f"it excludes nothing yet ({past})"
        kept = loss if above else gain
        return f"{kept} is excluded; on the other side nothing is ({past})"
    if r.lo > 0:
        return f"its interval lies above 0; {gain} is excluded"
    if r.hi < 0:
        return f"its interval lies below 0; {loss} is excluded"
    return f"{gain} and {loss} are excluded"


def claim_words(study: Study, r: Reading) -> str:
    """A published value beside the reading, and whether this task could show it at all."""
    c = r.spec.claim
    if c is None or r.d is None:
        return ""
    a, b = _names(study, r)
    if r.spec.measure.metric.fraction and r.mean_b is not None:
        top, bottom = 1 - r.mean_b, -r.mean_b
        if not bottom <= c <= top:
            return (f"The claim {c:+.3f} cannot occur here: {b} scores {r.mean_b:.3f}, so {a} − {b} lies within "
                    f"[{bottom:+.3f}, {top:+.3f}]; this comparison can exclude smaller differences only (above).")
    if r.lo <= c <= r.hi:
        return f"The claim {c:+.3f} lies inside the interval: these runs are compatible with it."
    return f"The claim {c:+.3f} lies outside the interval: these runs exclude it at 95% (per comparison)."


def reading_line(study: Study, r: Reading) -> str:
    if r.d is None:
        return f"**{r.spec.label}** ({r.spec.measure.text}): {r.why_not}."
    how = {"welch": "Welch over seeds", "paired": "paired by seed", "start": "with the start's sampling error",
           "interaction": "a difference of differences, Welch over the four arms"}
    text = (f"**{r.spec.label}** ({r.spec.measure.text}): {interval(r)} ({how[r.kind]}, p = {r.p:.3g}); "
            f"{verdict_word(study, r)}; {bound(study, r)} (95%, before correction).")
    if r.need is not None and r.apart is False:
        m = len(study.readings[r.spec.family])
        strict = f"α/{m}" if study.plan.correction == "holm" and m > 1 else "α"
        text += (f" If the true difference were the {_fmt(r.d)} measured, about {r.need} seeds per arm would "
                 f"separate it with 80% power at {strict}.")
    elif r.apart is False and r.kind == "welch" and r.need is None:
        text += " No seed count up to 1,000 would separate a difference this size."
    cw = claim_words(study, r)
    return text + (" " + cw if cw else "")


def headline(study: Study) -> str:
    """The verdict in one or two sentences a newcomer reads first: how many planned comparisons separated after
    the plan's correction and which way, and which did not (their bounds follow); a manipulation that did not take."""
    if not study.complete:
        return (f"In progress: {study.done} of {study.total} runs finished; no verdict yet (the plan reads its "
                "comparisons when every run has finished).")
    rows = study.planned
    read = [r for r in rows if r.d is not None]
    apart = [r for r in read if r.apart]
    words = []
    for r in apart:
        words.append(f"{r.spec.label}: {verdict_word(study, r)}")
    corr = "Holm's correction" if study.plan.correction == "holm" else "no correction"
    text = (f"{len(apart)} of {len(rows)} planned comparisons separated (95%, {corr})"
            + (": " + "; ".join(words) if words else "") + ".")
    nulls = [r for r in read if not r.apart]
    if nulls:
        text += (f" {'The other' if apart else 'All'} {len(nulls)} {'is' if len(nulls) == 1 else 'are'} "
                 "not separated: each is read as the differences it excludes, not as no difference.")
    unread = [r for r in rows if r.d is None]
    if unread:
        text += f" Not readable: {'; '.join(f'{r.spec.label} ({r.why_not})' for r in unread)}."
    took = [study.plan.arms[name].label for name, _, r in study.manipulation() if r.d is not None and not r.lo > 0]
    if took:
        text += (f" The treatment did not measurably take in {', '.join(took)} (the manipulation check): a null "
                 "there says little about the treatment's effect.")
    return text


def compact(study: Study, r: Reading) -> str:
    """One planned comparison in a few words: its interval, the plan's reading, what a null excludes."""
    if r.d is None:
        return f"{r.spec.label}: {r.why_not}"
    word = verdict_word(study, r)
    if r.apart:
        return f"{r.spec.label} {interval(r)} ({word})"
    return f"{r.spec.label} {interval(r)} ({word}; {bound(study, r)})"


def finding(study: Study) -> str:
    """The study's verdict in words: the headline, then each planned comparison compactly, unrounded underneath;
    the top of the report and the line of every page that carries the study."""
    if not study.complete:
        return headline(study)
    seeds = sorted({len(a.seeds) for a in study.plan.arms.values()})
    measures = sorted({r.spec.measure.text for r in study.planned})
    return (headline(study) + " " + "; ".join(compact(study, r) for r in study.planned)
            + f" ({', '.join(measures)}; {'/'.join(map(str, seeds))} seeds per arm; intervals at 95% before "
            "correction).")


def held_out_line(study: Study) -> list:
    """The overlap between each evaluation and its training pool: "held-out" only when disjoint."""
    lines = []
    for arms, task, n, distinct, seen, pool, err in study.overlap():
        who = ", ".join(arms)
        if err:
            lines.append(f"- {who}, evaluated on `{task}`: overlap not computed here ({err}).")
        elif seen == 0:
            lines.append(f"- {who}, evaluated on `{task}`: **held-out**: {n} evaluation draws, {distinct} distinct "
                         f"problems, none in the training pool ({pool} distinct prompts).")
        else:
            lines.append(f"- {who}, evaluated on `{task}`: **not held-out**: {n} evaluation draws, {distinct} "
                         f"distinct problems, {seen} of them in the training pool ({pool} distinct prompts); the "
                         "measure is the skill on the task's problems, "
                         + ("all seen in training." if seen == distinct else "some seen in training."))
    return lines


# ---------------------------------------------------------------------------------------------------------------
# The report.
# ---------------------------------------------------------------------------------------------------------------

def _per_seed(values: dict) -> str:
    return ", ".join(f"{v:.3f}" for v in values.values()) or "—"


def arm_table(study: Study, measure: Measure) -> list:
    rows = []
    for name, a in study.data.items():
        v = study.values(name, measure)
        st = study.start(name, measure)
        # fmt_ci says "the n seeds agree exactly: no interval" itself where they do
        cells = stats.fmt_ci(list(v.values()), clip=(0.0, 1.0) if measure.metric.fraction else None) if v else "—"
        rows.append([a.arm.label, a.arm.method, f"{len(v)} of {len(a.arm.seeds)}", cells,
                     f"{st[0]:.3f} ± {1.96 * st[1]:.3f}" if st else "—", _per_seed(v)])
    return md_table(["arm", "method", "seeds", f"{measure.text}: mean [95% t-interval over seeds]",
                     "start (± 1.96 × its sampling s.e.)", "per seed"], rows)


def render_report(study: Study, extra_sections: list | None = None, extra_headline: str | None = None,
                  extra_deviations: list | None = None) -> str:
    p = study.plan
    md = [f"# {p.title}", "",
          f"Generated by `grpo-lab study report {p.path.name}` from the tracked runs, unrounded"
          + (f"; the plan, written before any run, is [{p.prose}]({p.prose})" if p.prose else "")
          + f"; the plan file is [{p.path.name}]({p.path.name}).", ""]
    if p.port:
        md += [f"> **A port, not a pre-registration.** {p.port}", ""]
    if p.question:
        md += [f"**Question.** {p.question}", ""]
    if not study.complete:
        md += [f"**Interim: {study.done} of {study.total} runs finished.** The plan's comparisons are read once "
               "every run has finished; until then the numbers below are shown and no verdict is drawn.", ""]
    md += ["## What it found", ""] + ([extra_headline, ""] if extra_headline else []) + [finding(study), ""]
    for fam, rows in study.readings.items():
        m = len(rows)
        corr = f"Holm over {m} at family-wise {p.alpha:g}" if p.correction == "holm" else "no correction"
        md += [f"### Planned comparisons{'' if fam == 'planned' else ': ' + fam} ({corr})", ""]
        md += [f"- {reading_line(study, r)}" for r in rows]
        md += [""]
    if p.selections:
        md += ["## Selections (on the validation split, before the test comparisons)", ""]
        for name, sel in p.selections.items():
            rows = [[p.arms[a].label, stats.fmt_ci(list(study.values(a, sel.by).values()))
                     if study.values(a, sel.by) else "—"] for a in sel.among]
            chosen = study.chosen(name)
            md += [f"**{name}**: the arm with the highest mean {sel.by.text} among {len(sel.among)}: "
                   + (f"**{p.arms[chosen].label}**." if chosen else "not chosen yet (its candidates are unfinished)."),
                   ""] + md_table(["candidate", f"{sel.by.text}: mean [95% t-interval over seeds]"], rows) + [""]
    md += ["## Is the evaluation held out?", "",
           "The overlap between each evaluation's problems and the training pool its arm draws from, computed from "
           "the settings (the same problems every run of the arm sees):", ""]
    md += held_out_line(study) + [""]
    man = study.manipulation()
    if man:
        md += ["## Did the treatment take? (manipulation check)", "",
               "Each arm's change from its start on the measure its training targets, with the start's own "
               "sampling error; a treatment that did not move it cannot show an effect elsewhere.", ""]
        for name, meas, r in man:
            label = p.arms[name].label
            if r.d is None:
                md.append(f"- {label} ({meas.text}): {r.why_not}.")
            else:
                took = "took" if r.lo > 0 else ("moved it down" if r.hi < 0 else
                                                "**did not measurably take** (its interval includes no change)")
                md.append(f"- {label} ({meas.text}): {interval(r)}: {took}.")
        md += [""]
    md += ["## Results per arm", ""]
    for meas in [p.primary, *p.secondary]:
        md += [f"### {meas.text}" + (" (primary)" if meas is p.primary else " (secondary, descriptive)"), ""]
        md += arm_table(study, meas) + [""]
    figs = [f for f in ("arms.png", "comparisons.png") if (p.home / f).is_file() or study.done]
    md += [f"![each arm's {p.primary.text} per seed, with its mean and 95% interval](arms.png)", "",
           "![the planned and exploratory comparisons with their intervals](comparisons.png)", ""] if figs else []
    if study.exploratory:
        md += ["## Exploratory readings (not planned: intervals, no correction, no verdict)", ""]
        for r in study.exploratory:
            if r.d is None:
                md.append(f"- {r.spec.label} ({r.spec.measure.text}): {r.why_not}.")
                continue
            how = {"welch": "Welch", "paired": "paired by seed", "start": "with the start's error",
                   "interaction": "difference of differences"}[r.kind]
            cw = claim_words(study, r)
            md.append(f"- {r.spec.label} ({r.spec.measure.text}): {interval(r)} ({how}); {bound(study, r)}."
                      + (" " + cw if cw else ""))
        md += [""]
    md += extra_sections or []
    md += ["## Deviations from the plan", ""]
    dev = [f"- {d}" for d in [*p.deviations, *(extra_deviations or [])]] + \
        [f"- (detected) {d}" for d in study.detected_deviations()] + [f"{GIT_LINE}{d}" for d in git_history(p)]
    missing = [f"{n} " + ("seeds " if len(a.missing) > 1 else "seed ") + ", ".join(map(str, a.missing))
               for n, a in study.data.items() if a.missing]
    if missing:
        dev.append("- (detected) Not finished: " + "; ".join(missing) + ".")
    md += dev or ["None found."]
    md += ["", f"Machine time of the finished runs: {study.machine_hours():.1f} hours of training and evaluation"
           + (f" (the plan's budget: {p.budget_hours:g})" if p.budget_hours else "") + "."]
    if p.corrections:
        md += ["", "## Corrections", "", "What this report says differently from the report written by hand before "
               "the study engine, and why:", ""] + [f"- {c}" for c in p.corrections]
    md += ["", "## How to reproduce", "", "```", f"grpo-lab study run {_rel(p.path, Path.cwd())}     # trains "
           "what is missing (resumable; --workers N, --shard K/N)",
           f"grpo-lab study report {_rel(p.path, Path.cwd())}  # this page and its figures", "```", ""]
    return "\n".join(md)


FORMS = ("verdict", "headline")  # what an [[outputs]] page carries: see verdict_line


def verdict_line(study: Study, link: str, extra_headline: str | None = None, form: str = "verdict") -> str:
    """The study's line for a page that carries it (the README, a guide page): its headline (the study's own, or
    the engine's), then, in the ``"verdict"`` form, each planned comparison's interval, a null with the differences
    it rules out; the ``"headline"`` form stops after the headline and sends the reader to the report."""
    head = f"**{study.plan.title}** ([report]({link})) "
    if not study.complete:
        return head + headline(study)
    if form == "headline":
        return head + (extra_headline or headline(study)) + " Each planned comparison's interval is in the report."
    parts = []
    for r in study.planned:
        if r.d is None:
            parts.append(f"{r.spec.label}: {r.why_not}")
        elif r.apart or extra_headline:
            parts.append(f"{r.spec.label} {interval(r)}" + (f" ({verdict_word(study, r)})" if r.apart else ""))
        else:
            parts.append(f"{r.spec.label} {interval(r)} " + (
                f"({bound(study, r)})" if any(past_range(r))
                else f"(rules out more than {_fmt(r.hi)} and less than {_fmt(r.lo)})"))
    seeds = sorted({len(a.seeds) for a in study.plan.arms.values()})
    measures = sorted({r.spec.measure.text for r in study.planned})
    corr = "Holm" if study.plan.correction == "holm" else "no correction"
    return (head + (extra_headline or headline(study)) + f" Planned ({', '.join(measures)}, "
            f"{'/'.join(map(str, seeds))} seeds per arm, 95% intervals, {corr}): " + "; ".join(parts) + ".")


def draw(study: Study) -> None:
    """The study's figures: each arm's primary measure per seed (dots), with its mean and interval, beside its
    start; and every comparison's interval (planned, then exploratory)."""
    from .viz import comparison_intervals, arms_per_seed

    p = study.plan
    arms = {a.arm.label: list(study.values(n).values()) for n, a in study.data.items()}
    methods = {a.arm.method for a in study.data.values()}  # one colour per method; per arm where they share one
    colours = {a.arm.label: (a.arm.method if len(methods) > 1 else a.arm.label) for a in study.data.values()}
    start = next((study.start(n) for n in study.data if study.start(n)), None)
    fig = arms_per_seed(arms, colours=colours, ylabel=p.primary.text, start=start,
                        title=f"{p.title} — {p.primary.text} per arm",
                        clip=(0.0, 1.0) if p.primary.metric.fraction else None)  # as the tables clip them
    fig.savefig(p.home / "arms.png")
    rows = [(r.spec.label + ("" if r.spec.planned else " (exploratory)"), r.d, r.lo, r.hi, r.spec.planned)
            for r in [*study.planned, *study.exploratory] if r.d is not None]
    fig = comparison_intervals(rows, margin=p.margin, xlabel="difference (a − b), 95% interval before correction",
                               title=f"{p.title} — the comparisons")
    fig.savefig(p.home / "comparisons.png")


# ---------------------------------------------------------------------------------------------------------------
# Extras, outputs, --check.
# ---------------------------------------------------------------------------------------------------------------

def load_extras(plan: Plan):
    """The plan's extras module (readings that belong to this study only), or None."""
    if not plan.extras:
        return None
    path = plan.home / plan.extras
    if not path.is_file():
        raise PlanError(f"{plan.path}: extras = {plan.extras!r}: no such file")
    spec = importlib.util.spec_from_file_location(f"grpo_lab_study_extras_{abs(hash(str(path)))}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def fill(page: str, markers: str, block: str, where: str) -> str:
    begin, end = f"<!-- {markers}:begin -->", f"<!-- {markers}:end -->"
    if begin not in page or end not in page:
        raise PlanError(f"{where} holds no {begin} ... {end} block")
    a, b = page.index(begin) + len(begin), page.index(end)
    return page[:a] + "\n" + block + "\n" + page[b:]


def build(plan_path, root: Path | None = None) -> tuple[dict, object]:
    """Everything ``study report`` writes: ``({path: text}, draw())``. ``root``: the directory the outputs'
    pages are relative to (the repository: found upward from the plan, where a README.md and a pyproject.toml
    sit)."""
    study = Study.load(plan_path)
    p = study.plan
    extras = load_extras(p)
    sections = list(extras.sections(study)) if extras and hasattr(extras, "sections") else []
    head = extras.headline(study) if extras and hasattr(extras, "headline") and study.complete else None
    devs = list(extras.deviations(study)) if extras and hasattr(extras, "deviations") else []
    want = {p.home / p.report: render_report(study, sections, head, devs)}
    root = root or _root(p.home)
    for o in p.outputs:
        page = root / o["page"]
        text = want.get(page, page.read_text() if page.is_file() else "")
        want[page] = fill(text, o["markers"], verdict_line(study, o["link"], head, o["form"]), str(page))
    if extras and hasattr(extras, "outputs"):  # given the pages so far, so that it can add to one of them
        for path, text in extras.outputs(study, dict(want)).items():
            want[Path(path)] = text

    def drawing():
        if study.done:
            draw(study)
        if extras and hasattr(extras, "draw"):
            extras.draw(study)
    return want, drawing


def _root(start: Path) -> Path:
    for d in [start, *start.resolve().parents]:
        if (d / "pyproject.toml").is_file() or (d / ".git").exists():
            return d
    return start


GIT_LINE = "- (from git) "  # a deviation read from the repository's history: it depends on the checkout


def _without_git(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith(GIT_LINE))


def write_or_check(want: dict, check: bool, echo=print) -> int:
    """Write every page; with ``check``, write nothing and name every page that differs (exit status 1). The lines
    read from git's history are left out of the comparison: a shallow clone or an uncommitted edit changes them,
    not the runs."""
    if check:
        stale = [p for p, text in want.items()
                 if not Path(p).is_file() or _without_git(Path(p).read_text()) != _without_git(text)]
        for p in stale:
            echo(f"{_rel(Path(p), Path.cwd())} differs from what grpo-lab study report writes; run it")
        return 1 if stale else 0
    for p, text in want.items():
        write_text_atomic(p, text)
        echo(f"wrote {_rel(Path(p), Path.cwd())}")
    return 0


def status_lines(study: Study) -> list:
    """``grpo-lab study status``: per arm, finished, missing and refused runs; the plan's machine-hours."""
    out = [f"{study.plan.title}: {study.done} of {study.total} runs finished"
           + (" (complete)" if study.complete else "")]
    for name, a in study.data.items():
        out.append(f"  {name} ({a.arm.method}): {len(a.runs)} of {len(a.arm.seeds)}"
                   + (f"; missing seeds {', '.join(map(str, a.missing))}" if a.missing else "")
                   + (f"; refused {len(a.refused)}: " + "; ".join(f"{f} ({why})" for f, why in a.refused)
                      if a.refused else ""))
    out.append(f"  machine time so far: {study.machine_hours():.1f} h"
               + (f" of the plan's {study.plan.budget_hours:g}" if study.plan.budget_hours else ""))
    return out
