"""The plan file: its fields (documented in :mod:`grpo_lab.study`), read and checked before any run. Part of
:mod:`grpo_lab.study`."""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import SimpleNamespace
from typing import NamedTuple

from ..compare import check_eval_samples, shared_settings
from ..config import PER_RUN, RunConfig, method_key
from ..io import fingerprint
from ..stats import DFS
from .measures import METRICS, Measure, PlanError, parse_directions, parse_measure

try:  # Python 3.11+; tomli is the same parser for 3.10
    import tomllib
except ImportError:  # pragma: no cover - Python 3.10
    import tomli as tomllib


# ---------------------------------------------------------------------------------------------------------------
# The plan file.
# ---------------------------------------------------------------------------------------------------------------

TOP_KEYS = {"title", "question", "plan", "port", "seeds", "budget_hours", "report", "grader", "base", "tasks",
            "hypotheses",
            "arms", "selections", "measures", "analysis", "comparisons", "exploratory", "manipulation", "deviations",
            "corrections", "extras", "outputs", "curves", "correlations", "steps", "extremes", "same_graders"}
ARM_KEYS = {"method", "label", "dirs", "seeds"}
RUN_FIELDS = {f.name for f in fields(RunConfig)} - set(PER_RUN)
CORRECTIONS = ("holm", "none")
PAIRINGS = ("none", "seed")
ANALYSIS_KEYS = ("seeds", "base", "tasks", "arms", "selections", "measures", "analysis", "comparisons", "exploratory",
                 "hypotheses", "manipulation", "curves", "correlations")
LATER_KEYS = ("curves", "correlations")  # added since plans were first fingerprinted: in a plan's fingerprint only where it has them
# Not in the fingerprint: deviations, corrections, extras, outputs (what pages carry), `steps` (a descriptive table
# of training-log quantities: it reads no comparison and draws no verdict) and `extremes` (which of some planned
# comparisons lies furthest on each side: it adds no test, each keeps its family's verdict), `same_graders` (two
# fingerprints of one set of grading rules, a fact about the code, shown in the report). Adding one after the
# runs does not mark them as trained under another analysis; git's history of the plan file still shows the edit.
ANALYSIS_DEFAULTS = {"correction": "holm", "alpha": 0.05, "pairing": "none", "df": "welch"}  # [analysis], unwritten
RULE_INTERVALS = ("per-comparison", "holm")  # the interval a size rule reads (grpo_lab.study.readings)
FORMS = ("verdict", "headline", "data")  # what an [[outputs]] page carries: render.verdict_line; "data": a JSON
# file of the readings (render.study_data), for a notebook to read and assert


class Read(NamedTuple):
    """One place the plan reads a measure: on which arms, where in the plan (for errors) and as what (``kind``:
    measures, steps, comparison, selection, curve, manipulation or correlation)."""
    measure: Measure
    arms: list
    where: str
    kind: str


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
    interaction ``(a - b) - (c - d)`` (does a treatment change a difference?); with ``level`` (the plan's ``b`` a
    number), an arm against that value: its mean over seeds minus it (issue 82: is a rank about 2?), ``b`` then
    the number as text."""
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
    contrast: str | None = None  # why arms that differ in more than one setting are compared on purpose
    level: float | None = None  # b as a number: the arm against this value (a one-sample t over its seeds)

    @property
    def arms(self) -> tuple:
        """The arms (or selections) this comparison reads, in order, each once: ``a``, ``b``, ``c``, ``d`` without
        "start" and without ``b`` where it is a level (a number, not an arm)."""
        sides = (self.a,) if self.level is not None else (self.a, self.b, self.c, self.d)
        return tuple(x for x in dict.fromkeys(sides) if x is not None and x != "start")


@dataclass(frozen=True)
class Extreme:
    """Which of several planned comparisons of one family and measure lies furthest above 0 and furthest below it
    (issue 57: the largest shared-rate gap in each direction). Each keeps its family's correction and verdict, so
    choosing the largest after the fact needs no further correction; it adds no test."""
    label: str
    comparisons: tuple  # labels of planned comparisons


@dataclass(frozen=True)
class Curve:
    """An exploratory reading of a measure against one setting that the arms vary (``x``, a RunConfig field such as
    the learning rate): one line per method and per combination of the arms' other settings, each point an arm's
    mean with its interval over seeds. It draws no verdict (issue 57)."""
    x: str
    measure: Measure
    arms: tuple
    label: str


@dataclass(frozen=True)
class Correlation:
    """An exploratory reading across runs (issue 59): each finished run of ``arms`` is one point
    ``(x, y)``, two of its measures (e.g. the Advantage Collapse Rate over training against the final pass@1,
    arXiv 2605.21125's predictor); read as Pearson's r with its 95% interval, and R². It draws no verdict."""
    x: Measure
    y: Measure
    arms: tuple
    label: str


@dataclass(frozen=True)
class Hypothesis:
    """A named hypothesis the plan reads on one planned comparison (``test``, its label): supported when that
    comparison separates after the correction with ``predicts`` (``"a"`` or ``"b"``) ahead; its size rule refutes
    it as an explanation of a difference of ``size`` when the interval ``interval`` names excludes it; ``margin``:
    "idle" when that interval lies within +-margin."""
    name: str
    says: str
    test: str
    predicts: str = "a"
    size: float | None = None
    interval: str | None = None
    margin: float | None = None


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
    df: str
    hypotheses: list
    comparisons: list
    exploratory: list
    manipulation: dict    # arm -> Measure
    curves: list
    deviations: list
    corrections: list
    extras: str | None
    outputs: list
    raw: dict = field(repr=False, default_factory=dict)
    correlations: list = field(default_factory=list)
    steps: list = field(default_factory=list)  # Measures read from the training log, tabled per arm (descriptive)
    extremes: list = field(default_factory=list)  # Extreme readings of planned comparisons
    same_graders: list = field(default_factory=list)  # [(fingerprints, why)]: graders declared to grade alike
    reads: list = field(default_factory=list)  # [Read]: every measure read, on which arms, where and as what

    def grader_of(self, g: str | None) -> str | None:
        """The grader a run recording fingerprint ``g`` is read as: the first of its ``[[same_graders]]`` group
        (fingerprints the plan declares to grade alike), else ``g`` itself."""
        return next((gs[0] for gs, _ in self.same_graders if g in gs), g)

    @property
    def home(self) -> Path:
        return self.path.parent

    @property
    def analysis_fingerprint(self) -> str:
        """A fingerprint of everything in the plan file that decides what is trained and how it is read (arms,
        seeds, measures, analysis, comparisons, hypotheses, selections, manipulation): ``study run`` records it
        beside every run it trains, so a plan edited after its runs is caught without git (issue 58)."""
        return fingerprint({k: self.raw.get(k) for k in ANALYSIS_KEYS if k in self.raw or k not in LATER_KEYS})

    @property
    def analysis_normalized(self) -> str:
        """:attr:`analysis_fingerprint` with the ``[analysis]`` defaults written out (:data:`ANALYSIS_DEFAULTS`), so
        that writing out a default (``df = "welch"``) or leaving one out is not an edit of the analysis (issue 83).
        ``study run`` records it beside :attr:`analysis_fingerprint` since issue 83 (older records hold only the
        latter, compared as they were)."""
        raw = {k: self.raw.get(k) for k in ANALYSIS_KEYS if k in self.raw or k not in LATER_KEYS}
        raw["analysis"] = {**ANALYSIS_DEFAULTS, **(raw.get("analysis") or {})}
        raw["analysis"]["alpha"] = float(raw["analysis"]["alpha"])
        return fingerprint(raw)

    @property
    def reads_training_log(self) -> bool:
        """Whether any measure the plan reads comes from the training log (a ``history`` metric): only then does
        the engine read each run's metrics file beside its result (:func:`grpo_lab.study.data.read_arm`). Read off
        :attr:`reads`, the one list of what the plan reads that ``read_plan`` also checks each arm can give."""
        return any(r.measure.metric.source == "history" for r in self.reads)


# ---------------------------------------------------------------------------------------------------------------
# Where each arm's runs live (read here to refuse two arms of the same runs; `study run` trains into them).
# ---------------------------------------------------------------------------------------------------------------

def _rel(path: Path, home: Path) -> str:
    try:
        return Path(os.path.relpath(path, home)).as_posix()
    except ValueError:  # pragma: no cover - another drive
        return str(path)


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


def _did_you_mean(name, allowed) -> str:
    """"; did you mean 'steps'?" for a near miss (issue 81: `step = 4` got no hint), else ""."""
    import difflib

    close = difflib.get_close_matches(str(name), sorted(allowed), n=1, cutoff=0.75)
    return f"; did you mean {close[0]!r}?" if close else ""


def _unknown(table: dict, allowed: set, where: str) -> None:
    extra = sorted(set(table) - allowed)
    if extra:
        raise PlanError(f"{where}: unknown field {extra[0]!r}{_did_you_mean(extra[0], allowed)} (allowed: "
                        f"{', '.join(sorted(allowed))})")


def _tables(raw: dict, key: str, w: str, allowed: set, shape: str):
    """``(where, table)`` for each entry of the plan's ``[[key]]`` list, each checked to be a table (``shape`` says
    what one holds) with no field outside ``allowed``."""
    for i, t in enumerate(_need(raw, key, list, w, [])):
        where = f"{w}: [[{key}]] #{i + 1}"
        if not isinstance(t, dict):
            raise PlanError(f"{where}: {shape}")
        _unknown(t, allowed, where)
        yield where, t


def _members(names: list, arms: dict, where: str, least: int) -> list:
    """A curve's or a correlation's arms: at least ``least``, each an arm of the plan, each once (issue 83: an empty
    list was an IndexError, an arm listed twice counted its runs twice)."""
    unknown = [a for a in names if a not in arms]
    if unknown:
        raise PlanError(f"{where}: arms {unknown} are not arms of the plan ({', '.join(arms)})")
    if len(names) < least:
        raise PlanError(f"{where}: arms must name at least {least} of the plan's arms, got {names!r}")
    twice = sorted({a for a in names if names.count(a) > 1})
    if twice:
        raise PlanError(f"{where}: arms lists {', '.join(twice)} more than once (each run is one point)")
    return list(names)


def _seeds(value, where: str) -> list:
    if not isinstance(value, list) or not value or not all(isinstance(s, int) and not isinstance(s, bool)
                                                           and s >= 0 for s in value):
        raise PlanError(f"{where}: seeds must be a non-empty list of whole numbers >= 0, got {value!r}")
    if len(set(value)) != len(value):
        raise PlanError(f"{where}: seeds list a seed twice: {value}")
    if max(value) > MAX_SEED:
        raise PlanError(f"{where}: seed {max(value)} is larger than {MAX_SEED} (2^31 - 1), the largest every random "
                        "generator a run seeds accepts")
    return list(value)


MAX_SEED = 2**31 - 1


def _policy(name: str, home: Path, where: str) -> None:
    """A policy the runner knows, a hub model's id ("org/name"), or a local model directory; anything else (a typo
    such as "tiny_lm") is refused here, before a run would try the model hub for a minute (issue 58)."""
    import difflib

    from ..runner import POLICIES

    known = sorted({*(k for k in POLICIES if k != "*"), "smollm2"})  # smollm2: the wheel's GGUF (policy.load_policy)
    if name in known or "/" in name.strip("/") or (home / name).is_dir() or Path(name).is_dir():
        return
    close = difflib.get_close_matches(name, known, n=1)
    raise PlanError(f"{where}: policy {name!r} is not one grpo-lab knows ({', '.join(known)}), a hub model's id "
                    "(org/name) or a local model directory" + (f"; did you mean {close[0]!r}?" if close else ""))


_ENOUGH: dict = {}


def _enough_problems(cfg: RunConfig, where: str) -> None:
    """Draws without replacement are refused here, before any run trains, where the task's part of the problem space
    holds fewer distinct problems than the plan asks for (issue 80; the error names the task's size)."""
    from ..runner import eval_problems, task_config, validation_problems

    key = tuple(getattr(cfg, k) for k in ("task", "eval_problems", "validation_problems", "eval_seed", "disjoint",
                                          "smoke", "data", "eval_tasks_whole")) + tuple(cfg.eval_tasks)
    if key not in _ENOUGH:
        try:
            eval_problems(cfg)
            validation_problems(cfg)
            for task in cfg.eval_tasks:  # each evaluation task too: found here, not after a run has trained
                eval_problems(task_config(cfg, task))
            _ENOUGH[key] = None
        except ValueError as e:
            _ENOUGH[key] = str(e)
    if _ENOUGH[key]:
        raise PlanError(f"{where}: not a valid run: {_ENOUGH[key]}")


def _report_path(text: str, home: Path, owned: set, where: str) -> str:
    """The report's path: a markdown file inside the study's folder that the study does not own for anything else
    (the plan, the prose plan, a run directory's files); never a path outside, and its folder must exist."""
    if not text.strip() or not text.endswith(".md"):
        raise PlanError(f"{where}: report must name a markdown file (….md) inside the study's folder, got {text!r}")
    path = (home / text).resolve()
    if not path.is_relative_to(home):
        raise PlanError(f"{where}: report {text!r} lies outside the study's folder ({home}); a report is written "
                        "beside its plan")
    if not path.parent.is_dir():
        raise PlanError(f"{where}: report {text!r}: its folder {_rel_home(path.parent, home)} does not exist")
    for d in owned:
        if path == d or path.is_relative_to(d):
            raise PlanError(f"{where}: report {text!r} would overwrite a file the study owns "
                            f"({_rel_home(d, home)}): choose another name")
    if path.exists():  # issue 83: a prose PLAN.md named as the report (no plan = key) was overwritten
        try:
            head = path.read_text(encoding="utf-8")[:2000]
        except (OSError, UnicodeDecodeError):
            head = ""
        if REPORT_MARK not in head:
            raise PlanError(f"{where}: report {text!r} exists and was not written by grpo-lab study report: it is "
                            "not overwritten (name another file, or remove it)")
    return text


REPORT_MARK = "Generated by `grpo-lab study report"  # the line every report the engine writes opens with


def _rel_home(path: Path, home: Path) -> str:
    return str(path.relative_to(home)) if path.is_relative_to(home) else str(path)


def confounds(arms: dict, x: str, y: str | None) -> list:
    """The settings two arms differ in (``estimator`` for their methods, then each RunConfig field), or ``[]``
    where either side is not an arm (a selection, which differs on purpose, or the start)."""
    if x not in arms or y not in arms:
        return []
    ax, ay = arms[x], arms[y]
    sx, sy = shared_settings(ax.config), shared_settings(ay.config)
    mx, my = method_key(ax.method), method_key(ay.method)
    return [k for k in sorted(sx) if sx[k] != sy.get(k)] + [
        k for k, u, v in zip(("estimator", "sampling", "skip_prob"), mx, my) if u != v]


def read_plan(path) -> Plan:
    """Read and validate a plan file; every problem is a :class:`PlanError` naming the file and the field."""
    path = Path(path)
    if not path.is_file():
        raise PlanError(f"{path}: no such plan file")
    w = str(path)  # errors name the file as it was given
    path = path.resolve()
    try:
        text = path.read_text(encoding="utf-8")
        if text.startswith("\ufeff"):
            raise PlanError(f"{w}: the file starts with a UTF-8 byte-order mark (BOM), which TOML does not allow: "
                            "save it as UTF-8 without a BOM")
        raw = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise PlanError(f"{w}: not a valid TOML file ({e})") from None
    _unknown(raw, TOP_KEYS, w)
    title = _need(raw, "title", str, w)
    seeds = _seeds(_need(raw, "seeds", list, w), f"{w}: seeds")
    base = dict(_need(raw, "base", dict, w, {}))
    bad = sorted(set(base) - RUN_FIELDS)
    if bad:
        raise PlanError(f"{w}: [base]: {bad[0]!r} is not a setting of a run{_did_you_mean(bad[0], RUN_FIELDS)} "
                        f"(RunConfig fields, less {', '.join(PER_RUN)}, which a method or seed sets)")
    tasks = _need(raw, "tasks", dict, w, {})
    for alias, task in tasks.items():
        if not isinstance(task, str):
            raise PlanError(f"{w}: [tasks]: {alias} must name a task, got {task!r}")
    arms = {}
    for name, t in _need(raw, "arms", dict, w).items():
        where = f"{w}: [arms.{name}]"
        if not name.strip() or any(ch in name for ch in "\n\r\t"):  # issue 83: an arm named "" was accepted
            raise PlanError(f"{where}: an arm's name must be non-blank, without tabs or line breaks (it names the "
                            f"arm in the report's lines and tables), got {name!r}")
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
            check_eval_samples(cfg)  # what writing its directory's config would refuse, before any arm runs
        except (TypeError, ValueError) as e:
            raise PlanError(f"{where}: not a valid run: {e}") from None
        _policy(cfg.policy, path.parent, where)
        if cfg.eval_without_replacement:
            _enough_problems(cfg, where)
        dirs = t.get("dirs")
        if dirs is not None and not (isinstance(dirs, list) and dirs and all(isinstance(d, str) for d in dirs)):
            raise PlanError(f"{where}: dirs must be a list of paths under the plan's directory, got {dirs!r}")
        arm_seeds = _seeds(t["seeds"], f"{where}: seeds") if "seeds" in t else seeds
        arms[name] = Arm(name, method, _need(t, "label", str, where, name), settings, dirs, arm_seeds, cfg)
    if not arms:
        raise PlanError(f"{w}: [arms]: a study needs at least one arm")
    # the directories as resolved: "runs/base", "./runs/base", "runs/*" can be one
    home = SimpleNamespace(home=path.parent, base=base)  # what arm_dirs reads of a plan
    resolved = {name: set(arm_dirs(home, arm)) for name, arm in arms.items()}

    def shared_runs(x: str, y: str) -> list:
        """The directories where arms x and y read the same runs (one method, one setting, a seed in common)."""
        ax, ay = arms.get(x), arms.get(y)
        if ax is None or ay is None or method_key(ax.method) != method_key(ay.method) or \
                shared_settings(ax.config) != shared_settings(ay.config) or not set(ax.seeds) & set(ay.seeds):
            return []
        return sorted(_rel(d, path.parent) for d in resolved[x] & resolved[y])

    names = list(arms)
    for i, x in enumerate(names):  # two arms of the same runs would be one arm read twice
        for y in names[:i]:
            if resolved[x] == resolved[y] and shared_runs(x, y):
                raise PlanError(f"{w}: arms {y} and {x} are the same runs (one method, one setting, directory "
                                f"{shared_runs(x, y)[0]})")
    m = _need(raw, "measures", dict, w)
    _unknown(m, {"primary", "secondary", "direction"}, f"{w}: [measures]")
    directions = parse_directions(m.get("direction", {}), f"{w}: [measures]")

    def measure(text, where: str) -> Measure:
        return parse_measure(text, tasks, where, directions)

    selections = {}
    for name, t in _need(raw, "selections", dict, w, {}).items():
        where = f"{w}: [selections.{name}]"
        if name in arms or name == "start":
            raise PlanError(f"{where}: {name!r} is already an arm's name")
        if not isinstance(t, dict):
            raise PlanError(f"{where}: a selection is a table with among and by")
        _unknown(t, {"among", "by"}, where)
        among = _need(t, "among", list, where)
        if len(among) < 2 or any(a not in arms for a in among) or len(set(among)) != len(among):
            raise PlanError(f"{where}: among must list at least two of the plan's arms, each once, got {among!r}")
        by = measure(_need(t, "by", str, where), where)
        if by.better == "neutral":
            raise PlanError(f"{where}: by = {by.text!r} has no better direction (neutral): a selection chooses the "
                            "best candidate, so declare which direction is better ([measures] direction)")
        if by.split != "validation":
            raise PlanError(f"{where}: by = {by.text!r} reads the test problems; a selection reads the validation "
                            "split ('validation pass@1'), so that the test comparisons stay unbiased")
        selections[name] = Selection(name, list(among), by)
    if "primary" not in m:
        raise PlanError(f"{w}: [measures]: missing 'primary' (the one measure the planned comparisons read)")
    primary = measure(m["primary"], f"{w}: [measures] primary")
    secondary = [measure(x, f"{w}: [measures] secondary") for x in _need(m, "secondary", list, w, [])]
    an = _need(raw, "analysis", dict, w, {})
    _unknown(an, {"correction", "alpha", "pairing", "margin", "df"}, f"{w}: [analysis]")
    df = _need(an, "df", str, f"{w}: [analysis]", ANALYSIS_DEFAULTS["df"])
    if df not in DFS:
        raise PlanError(f"{w}: [analysis]: df {df!r} is not a convention grpo-lab implements ({', '.join(DFS)}: "
                        "Welch-Satterthwaite, or the smaller arm's n - 1)")
    correction = _need(an, "correction", str, f"{w}: [analysis]", ANALYSIS_DEFAULTS["correction"])
    if correction not in CORRECTIONS:
        raise PlanError(f"{w}: [analysis]: correction {correction!r} is not one grpo-lab implements "
                        f"({', '.join(CORRECTIONS)})")
    alpha = float(_need(an, "alpha", (int, float), f"{w}: [analysis]", ANALYSIS_DEFAULTS["alpha"]))
    if not 0 < alpha < 1:
        raise PlanError(f"{w}: [analysis]: alpha must lie strictly between 0 and 1, got {alpha}")
    pairing = _need(an, "pairing", str, f"{w}: [analysis]", ANALYSIS_DEFAULTS["pairing"])
    if pairing not in PAIRINGS:
        raise PlanError(f"{w}: [analysis]: pairing must be {' or '.join(PAIRINGS)}, got {pairing!r}")
    margin = an.get("margin")
    if margin is not None and (isinstance(margin, bool) or not isinstance(margin, (int, float))
                               or not math.isfinite(margin) or margin <= 0):
        raise PlanError(f"{w}: [analysis]: margin must be a positive number, got {margin!r}")

    def specs(key: str, planned: bool) -> list:
        out = []
        for where, c in _tables(raw, key, w, {"a", "b", "c", "d", "label", "measure", "family", "claim", "pairing",
                                              "verdict", "contrast"}, "a comparison is a table with a and b"):
            if "verdict" in c:
                raise PlanError(f"{where}: a verdict is drawn only from a planned comparison"
                                + (" ([[comparisons]]); this one is exploratory" if not planned else
                                   "; it is not a field (the report draws it)"))
            a = _need(c, "a", str, where)
            b = _need(c, "b", (str, int, float), where)
            cc, dd = _need(c, "c", str, where, None), _need(c, "d", str, where, None)
            if not isinstance(b, str):
                out.append(level_spec(c, a, float(b), cc, planned, where))
                continue
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
            if cc is not None and len({a, b, cc, dd}) < 4:
                raise PlanError(f"{where}: an interaction (a - b) - (c - d) names four different arms, got "
                                f"{a}, {b}, {cc}, {dd}")
            for x, y in ((a, b), (cc, dd)):
                if x is not None and shared_runs(x, y):
                    raise PlanError(f"{where}: {x} and {y} read the same runs (directory {shared_runs(x, y)[0]}): "
                                    "a difference between them is 0 by construction")
            meas = measure(c["measure"], where) if "measure" in c else primary
            if b == "start" and meas.metric.source != "eval":
                raise PlanError(f"{where}: {meas.text} comes from the training log; the start has none")
            claim = claim_of(c, where)
            contrast = _need(c, "contrast", str, where, None)
            if contrast is not None and not contrast.strip():  # issue 83: a blank one waived the confound check
                raise PlanError(f"{where}: contrast is blank; it says why arms that differ in more than one setting "
                                "are compared on purpose (or leave it out)")
            if contrast is None and planned:  # an exploratory reading draws no verdict: no design to protect
                for x, y in ((a, b), (cc, dd)):
                    differ = confounds(arms, x, y)
                    if len(differ) > 1:
                        raise PlanError(f"{where}: confounded: the arms differ in {' and '.join(differ)} ({x}, {y}); "
                                        "a comparison reads one setting's effect, so compare arms that differ in "
                                        "one, or say why this one is on purpose with contrast = \"...\"")
            pair = _need(c, "pairing", str, where, pairing)
            if pair not in PAIRINGS:
                raise PlanError(f"{where}: pairing must be {' or '.join(PAIRINGS)}, got {pair!r}")
            label = _need(c, "label", str, where, f"{a} − {b}" if b != "start" else f"{a} − start")
            if cc is not None:
                label = _need(c, "label", str, where, f"({a} − {b}) − ({cc} − {dd})")
                if pair == "seed":
                    raise PlanError(f"{where}: an interaction is read unpaired (Welch over the four arms)")
            out.append(Spec(a, b, label, meas, _need(c, "family", str, where, "planned" if planned else
                                                     "exploratory"), planned, claim, pair, cc, dd, contrast))
        seen: dict = {}
        for s in out:  # the same comparison twice would be one test counted twice by the correction
            k = (s.a, s.b, s.c, s.d, s.measure.text, s.pairing)
            mirror = (s.b, s.a, s.d, s.c, s.measure.text, s.pairing) if s.c is None or s.b != "start" else None
            if k in seen:
                raise PlanError(f"{w}: [[{key}]]: {s.label!r} repeats {seen[k]!r} (the same arms, measure and "
                                "pairing): list a comparison once")
            if mirror in seen:  # issue 83: b - a beside a - b is one test read twice (Holm counted 3 for 2)
                raise PlanError(f"{w}: [[{key}]]: {s.label!r} mirrors {seen[mirror]!r} (b − a of the same arms, "
                                "measure and pairing: one test, its sign flipped): list it once")
            seen[k] = s.label
        return out

    def level_spec(c: dict, a: str, level: float, cc, planned: bool, where: str) -> Spec:
        """``b`` a number: arm (or selection) ``a`` against that value on a measure of each run."""
        if not math.isfinite(level):
            raise PlanError(f"{where}: b must be an arm, 'start' or a finite number, got {level!r}")
        if cc is not None:
            raise PlanError(f"{where}: a comparison with a value (b = {level:g}) reads one arm; it has no c and d")
        if a not in arms and a not in selections:
            raise PlanError(f"{where}: a = {a!r} names no arm (arms: {', '.join(arms)})")
        if "pairing" in c or "contrast" in c:
            raise PlanError(f"{where}: a comparison with a value (b = {level:g}) reads one arm's seeds: it has no "
                            "pairing and no contrast")
        meas = measure(c["measure"], where) if "measure" in c else primary
        return Spec(a, f"{level:g}", _need(c, "label", str, where, f"{a} − {level:g}"), meas,
                    _need(c, "family", str, where, "planned" if planned else "exploratory"), planned,
                    claim_of(c, where), "none", level=level)

    def claim_of(c: dict, where: str) -> float | None:
        """A comparison's published claim (a finite number), or None."""
        claim = c.get("claim")
        if claim is not None and (isinstance(claim, bool) or not isinstance(claim, (int, float))
                                  or not math.isfinite(claim)):
            raise PlanError(f"{where}: claim must be a finite number, got {claim!r}")
        return claim

    comparisons = specs("comparisons", True)
    if not comparisons:
        raise PlanError(f"{w}: [[comparisons]]: a plan needs at least one planned comparison")
    labels = [s.label for s in comparisons]
    if len(set(labels)) != len(labels):
        raise PlanError(f"{w}: [[comparisons]]: two planned comparisons share the label "
                        f"{next(x for x in labels if labels.count(x) > 1)!r}")
    exploratory = specs("exploratory", False)
    curves = []
    for where, c in _tables(raw, "curves", w, {"x", "measure", "arms", "label"},
                            "a curve is a table with x (the setting the arms vary)"):
        x = _need(c, "x", str, where)
        if x not in RUN_FIELDS:
            raise PlanError(f"{where}: x = {x!r} is not a run setting (a RunConfig field such as learning_rate)")
        members_ = _members(_need(c, "arms", list, where, list(arms)), arms, where, 2)
        values = [getattr(arms[a].config, x) for a in members_]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            raise PlanError(f"{where}: x = {x!r} must be a number in every arm it reads")
        if len(set(values)) < 2:
            raise PlanError(f"{where}: the arms it reads do not vary {x} (all {values[0]!r}): no curve to draw")
        meas = measure(c["measure"], where) if "measure" in c else primary
        curves.append(Curve(x, meas, tuple(members_), _need(c, "label", str, where, f"{meas.text} against {x}")))
    correlations = []
    for where, c in _tables(raw, "correlations", w, {"x", "y", "arms", "label"},
                            "a correlation is a table with x (a measure of each run)"):
        mx = measure(_need(c, "x", str, where), where)
        my = measure(c["y"], where) if "y" in c else primary
        if mx.text == my.text:
            raise PlanError(f"{where}: x and y are the same measure ({mx.text}): a correlation of 1 by construction")
        members_ = _members(_need(c, "arms", list, where, list(arms)), arms, where, 1)
        correlations.append(Correlation(mx, my, tuple(members_),
                                        _need(c, "label", str, where, f"{mx.text} against {my.text}, across runs")))
    hypotheses = []
    for where, h in _tables(raw, "hypotheses", w, {"name", "says", "test", "predicts", "size", "interval", "margin"},
                            "a hypothesis is a table with name and test"):
        test = _need(h, "test", str, where)
        if test not in labels:
            raise PlanError(f"{where}: test {test!r} is not the label of a planned comparison "
                            f"({'; '.join(labels)})")
        predicts = _need(h, "predicts", str, where, "a")
        if predicts not in ("a", "b"):
            raise PlanError(f"{where}: predicts names the side the hypothesis expects ahead, 'a' or 'b'; "
                            f"got {predicts!r}")
        nums = {}
        for k in ("size", "margin"):
            v = h.get(k)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)
                                  or v <= 0):
                raise PlanError(f"{where}: {k} must be a positive finite number, got {v!r}")
            nums[k] = None if v is None else float(v)
        which = _need(h, "interval", str, where, None)
        if (nums["size"] is not None or nums["margin"] is not None) and which is None:
            raise PlanError(f"{where}: a size rule says which interval it reads: interval = "
                            f"{' or '.join(map(repr, RULE_INTERVALS))}")
        if which is not None and which not in RULE_INTERVALS:
            raise PlanError(f"{where}: interval {which!r} is not one of {', '.join(map(repr, RULE_INTERVALS))}")
        if which == "holm" and correction != "holm":  # issue 83: Holm's words were printed without Holm
            raise PlanError(f"{where}: interval = 'holm' reads the level Holm's step-down tests the comparison at, "
                            f"but [analysis] correction = {correction!r}: use interval = 'per-comparison'")
        name = _need(h, "name", str, where)
        if any(x.name == name for x in hypotheses):
            raise PlanError(f"{where}: two hypotheses are named {name!r}")
        hypotheses.append(Hypothesis(name, _need(h, "says", str, where, ""), test, predicts, nums["size"], which,
                                     nums["margin"]))
    man = _need(raw, "manipulation", dict, w, {})
    _unknown(man, {"measure", "arms"}, f"{w}: [manipulation]")
    default = measure(man["measure"], f"{w}: [manipulation]") if "measure" in man else None
    per_arm = _need(man, "arms", dict, f"{w}: [manipulation]", {})
    for name in per_arm:
        if name not in arms:
            raise PlanError(f"{w}: [manipulation] arms: {name!r} names no arm")
    manipulation = {}
    for name in arms:
        meas = measure(per_arm[name], f"{w}: [manipulation] arms.{name}") if name in per_arm \
            else default
        if meas is not None:
            if meas.metric.source != "eval":
                raise PlanError(f"{w}: [manipulation]: {meas.text} has no start value to move from")
            manipulation[name] = meas
    outputs = []
    for where, o in _tables(raw, "outputs", w, {"page", "markers", "link", "form"},
                            "an output is a table with page, markers and link"):
        form = _need(o, "form", str, where, "verdict")
        if form not in FORMS:
            raise PlanError(f"{where}: form {form!r} is not one of {', '.join(map(repr, FORMS))}")
        if form == "data":  # a whole file the engine owns: no markers in it, no link from it
            extra = sorted(set(o) & {"markers", "link"})
            if extra:
                raise PlanError(f"{where}: form 'data' writes the whole file, so it takes no {' or '.join(extra)}")
            out = {"page": _need(o, "page", str, where), "form": form}
            if not out["page"].endswith(".json"):
                raise PlanError(f"{where}: form 'data' writes JSON: its page must end in .json, got {out['page']!r}")
        else:
            out = {**{k: _need(o, k, str, where) for k in ("page", "markers", "link")}, "form": form}
        outputs.append(out)
    extremes = []
    by_label = {c.label: c for c in comparisons}
    for where, t in _tables(raw, "extremes", w, {"comparisons", "label"},
                            "an extreme is a table with comparisons (labels of planned comparisons) and a label"):
        names = _need(t, "comparisons", list, where)
        if len(names) < 2 or len(set(names)) != len(names) or not all(isinstance(x, str) for x in names):
            raise PlanError(f"{where}: comparisons must name at least two distinct planned comparisons by label")
        for x in names:
            if x not in by_label:
                raise PlanError(f"{where}: {x!r} is not the label of a planned comparison ([[comparisons]])")
        if len({(by_label[x].family, by_label[x].measure.text) for x in names}) > 1:
            raise PlanError(f"{where}: the comparisons must share one family and one measure (their verdicts are "
                            "read under one correction)")
        extremes.append(Extreme(_need(t, "label", str, where, "the largest difference on each side"), tuple(names)))
    steps = []
    for i, text in enumerate(_need(raw, "steps", list, w, [])):
        m = measure(text, f"{w}: steps[{i}]")
        if m.metric.source != "history":
            raise PlanError(f"{w}: steps[{i}]: {m.text} is read from an evaluation; `steps` tables the training "
                            "log's quantities (" + ", ".join(n for n, x in METRICS.items() if x.source == "history")
                            + "): put an evaluation's measure in [measures]")
        if any(x.text == m.text for x in steps):
            raise PlanError(f"{w}: steps[{i}]: {m.text} is listed twice")
        steps.append(m)
    same_graders, seen_graders = [], set()
    for where, t in _tables(raw, "same_graders", w, {"graders", "why"},
                            "a same_graders entry is a table with graders (fingerprints) and why"):
        gs = _need(t, "graders", list, where)
        if len(gs) < 2 or len(set(gs)) != len(gs) or not all(isinstance(g, str) and re.fullmatch(r"[0-9a-f]{12}", g)
                                                               for g in gs):
            raise PlanError(f"{where}: graders must be at least two distinct grader fingerprints (12 hex digits, as "
                            "results record them)")
        if seen_graders & set(gs):
            raise PlanError(f"{where}: {sorted(seen_graders & set(gs))[0]} is in two same_graders entries: make them one")
        why = _need(t, "why", str, where).strip()
        if not why:
            raise PlanError(f"{where}: why must say what shows the fingerprints grade alike (the code's diff between "
                            "them)")
        seen_graders |= set(gs)
        same_graders.append((tuple(gs), why))
    budget = raw.get("budget_hours")
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, (int, float))
                               or not math.isfinite(budget) or budget <= 0):
        raise PlanError(f"{w}: budget_hours must be a positive number, got {budget!r}")
    for key in ("deviations", "corrections"):
        if not all(isinstance(x, str) for x in _need(raw, key, list, w, [])):
            raise PlanError(f"{w}: {key} must be a list of sentences")
    def can_give(m: Measure, names, where: str) -> None:  # issue 58: refused before any run trains, not after
        for name in names:
            c = arms[name].config if name in arms else None
            if c is None:
                continue
            if m.metric.name == "pass@k" and m.k > c.eval_samples:
                raise PlanError(f"{where}: {m.text} needs at least {m.k} samples per problem; arm {name} evaluates "
                                f"{c.eval_samples} (eval_samples)")
            if m.split == "validation" and not c.validation_problems:
                raise PlanError(f"{where}: {m.text} reads a validation split; arm {name} has none "
                                "(validation_problems)")
            if m.task is not None and m.task != c.task and m.task not in c.eval_tasks:
                raise PlanError(f"{where}: {m.text} reads {m.alias} ({m.task}), which arm {name} does not evaluate "
                                "(its task or eval_tasks)")

    def members(name: str) -> list:
        return selections[name].among if name in selections else [name]

    reads = [*(Read(m, list(arms), f"{w}: [measures]", "measures") for m in [primary, *secondary]),
             *(Read(m, list(arms), f"{w}: steps", "steps") for m in steps),
             *(Read(spec.measure, [x for n in spec.arms for x in members(n)], f"{w}: {spec.label!r}", "comparison")
               for spec in [*comparisons, *exploratory]),
             *(Read(sel.by, sel.among, f"{w}: [selections.{sel.name}]", "selection") for sel in selections.values()),
             *(Read(cv.measure, list(cv.arms), f"{w}: curve {cv.label!r}", "curve") for cv in curves),
             *(Read(m, [name], f"{w}: [manipulation]", "manipulation") for name, m in manipulation.items()),
             *(Read(m, list(co.arms), f"{w}: correlation {co.label!r}", "correlation")
               for co in correlations for m in (co.x, co.y))]
    for r in reads:
        can_give(r.measure, r.arms, r.where)
    owned = {path, *((path.parent / raw["plan"]).resolve() for _ in [0] if isinstance(raw.get("plan"), str)),
             *(d for ds in resolved.values() for d in ds),
             *(p.resolve() for ex in [raw.get("extras")] if isinstance(ex, str) for p in [path.parent / ex])}
    report = _report_path(_need(raw, "report", str, w, "REPORT.md"), path.parent, owned, f"{w}: report")
    return Plan(path=path, title=title, question=_need(raw, "question", str, w, ""),
                prose=_need(raw, "plan", str, w, None), port=_need(raw, "port", str, w, None), seeds=seeds,
                budget_hours=budget, report=report,
                grader=_need(raw, "grader", str, w, None), base=base, tasks=dict(tasks), arms=arms,
                selections=selections, primary=primary,
                secondary=secondary, correction=correction, alpha=alpha, pairing=pairing, margin=margin, df=df,
                hypotheses=hypotheses,
                comparisons=comparisons, exploratory=exploratory, manipulation=manipulation, curves=curves,
                deviations=list(raw.get("deviations", [])), corrections=list(raw.get("corrections", [])),
                extras=_need(raw, "extras", str, w, None), outputs=outputs, raw=raw, correlations=correlations,
                steps=steps, extremes=extremes, same_graders=same_graders, reads=reads)


