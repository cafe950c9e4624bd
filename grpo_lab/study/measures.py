"""A study's measures: a registry of metrics (like the estimators'), each read from a run's result or the
start's evaluation with the start's own sampling error, and the measure names a plan writes ("pass@1",
"easy greedy", "validation pass@1"). Part of :mod:`grpo_lab.study`."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np


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
    per_problem: object = None  # callable: (evaluation, k) -> array, the score of each evaluation draw (bootstrap)
    floor: float | None = None  # the least value it can take (a norm's 0), where its interval is cut (a fraction: 0)
    about: str = ""  # what it is, for a report's legend

    @property
    def clip(self) -> tuple | None:
        """Where an interval of its mean is cut, in every table and figure: a fraction's at [0, 1], a quantity with
        a ``floor`` at [floor, ∞), any other not at all."""
        if self.fraction:
            return (0.0, 1.0)
        return None if self.floor is None else (self.floor, float("inf"))


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
    from ..passk import pass_at_k

    c = np.asarray(ev["correct"], dtype=float)
    n = int(ev["n_samples"])
    if n < 2:
        return 0.0
    if k == 1:
        return float(math.sqrt(np.sum(c * (n - c) / (n * n * (n - 1)))) / c.size)
    rng = np.random.default_rng(0)
    draws = rng.binomial(n, c / n, size=(2000, c.size))
    return float(np.std([np.mean(pass_at_k(n, d.astype(int), k)) for d in draws], ddof=1))


def _pass_at_each(ev: dict, k: int) -> np.ndarray:
    """pass@k of each evaluation draw, unbiased from its ``n_samples`` and ``correct`` (their mean is pass@k)."""
    from ..passk import pass_at_k

    return np.asarray(pass_at_k(int(ev["n_samples"]), np.asarray(ev["correct"], dtype=int), k), dtype=float)


def _reward(result: dict, k: int) -> float:
    return float(np.mean([h["reward"] for h in result["history"]]))


def _logged(result: dict, key: str) -> np.ndarray:
    """A training-log series, one value per logged step, from the result's history or else its full per-step log
    (``result["log"]``, read by the study engine from the run's metrics file); a run that never logged it cannot
    give it (KeyError)."""
    vals = [h[key] for h in result["history"] if key in h] or [h[key] for h in result.get("log", []) if key in h]
    if not vals:
        raise KeyError(f"{key} (its training log has no such entry: logged by grpo_lab.trl.StarvationCallback)")
    return np.asarray(vals, dtype=float)


def _acr(result: dict, k: int) -> float:
    """The Advantage Collapse Rate over training (arXiv 2605.21125): the mean over logged steps of the share of
    groups whose rewards are all equal (``starvation/acr``, :func:`grpo_lab.starvation.collapse_rate`). It reads
    the rewards sampled, so it is the same quantity for every estimator: AVSPO's virtual rewards do not enter it."""
    return float(_logged(result, "starvation/acr").mean())


def _zero_adv(result: dict, k: int) -> float:
    """The share of completions trained with a zero advantage (no gradient), averaged over logged steps:
    ``1 - starvation/frac_nonzero_adv``, read from the advantages the estimator actually used. For GRPO and
    Dr.GRPO with 0/1 rewards it equals :func:`_acr` (a homogeneous group is exactly a group with no signal);
    AVSPO lowers it wherever its virtual rewards give a homogeneous group a signal, Sign makes it 0."""
    return float(1.0 - _logged(result, "starvation/frac_nonzero_adv").mean())


def _tenth(result: dict, key: str, which: str) -> float:
    """The mean of a training-log series over its first or last tenth of logged steps (at least one step)."""
    v = _logged(result, key)
    n = max(1, v.size // 10)
    return float(v[:n].mean() if which == "first" else v[-n:].mean())


def _length(result: dict, k: int) -> float:
    """Tokens per completion generated, averaged over steps (``sampling/tokens / sampling/completions``)."""
    per = [h["sampling/tokens"] / h["sampling/completions"] for h in result["history"]
           if h.get("sampling/completions") and "sampling/tokens" in h]
    if not per:
        raise KeyError("sampling/tokens (its training log has no completion lengths)")
    return float(np.mean(per))


METRICS: dict[str, Metric] = {}


def register_metric(metric: Metric) -> Metric:
    """Add a metric a plan can name (``pass@k`` is one entry for every k)."""
    METRICS[metric.name] = metric
    return metric


register_metric(Metric("pass@k", "eval", True, _pass_at, _pass_at_se, _pass_at_each))
register_metric(Metric("greedy", "eval", True, lambda ev, k: float(ev["greedy"]),
                       lambda ev, k: 0.0))  # greedy decoding of one model is deterministic: no sampling error
register_metric(Metric("reward", "history", True, _reward))
register_metric(Metric("acr", "history", True, _acr,
                       about="the share of groups whose sampled rewards are all equal (ACR), mean over steps"))
register_metric(Metric("zero-adv", "history", True, _zero_adv,
                       about="the share of completions trained with a zero advantage, mean over steps"))
# The training log's per-step quantities (issue 57, item 4: what tells "learns slowly" from "collapses"), for a
# plan's `steps` table: descriptive, one number per run.
register_metric(Metric("grad-norm", "history", False, lambda r, k: float(_logged(r, "grad_norm").mean()),
                       floor=0.0, about="the gradient norm before clipping, mean over steps"))
register_metric(Metric("step-size", "history", False, lambda r, k: float(_logged(r, "update/step_norm").mean()),
                       floor=0.0, about="the size of one update of the trained weights, ‖θ_t − θ_(t−1)‖, mean over "
                       "steps"))
register_metric(Metric("from-start", "history", False, lambda r, k: float(_logged(r, "update/from_start")[-1]),
                       floor=0.0, about="the trained weights' distance from the start after the last step, "
                       "‖θ_T − θ_0‖"))
register_metric(Metric("reward-first", "history", True, lambda r, k: _tenth(r, "reward", "first"),
                       about="the training reward over the first tenth of steps"))
register_metric(Metric("reward-last", "history", True, lambda r, k: _tenth(r, "reward", "last"),
                       about="the training reward over the last tenth of steps"))
register_metric(Metric("length", "history", False, _length, floor=0.0,
                       about="tokens per completion generated in training, mean over steps"))
register_metric(Metric("truncated", "history", True,
                       lambda r, k: float(_logged(r, "completions/clipped_ratio").mean()),
                       about="the share of training completions cut at max_completion_length (TRL's "
                       "completions/clipped_ratio, from the run's metrics file), mean over steps"))
register_metric(Metric("adam-near-eps", "history", True,
                       lambda r, k: float(_logged(r, "update/adam_near_eps").mean()),
                       about="the share of trained weights whose Adam √v̂ is below 10 × ε (where Adam's step stops "
                       "being invariant to the gradient's scale), mean over steps"))


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

    @property
    def axis(self) -> str:
        """How a figure's axis names it: the plan's text, and what a training-log quantity is ("acr" alone does not
        say it is a mean over steps of the rollouts' share of homogeneous groups)."""
        about = self.metric.about if self.metric.source == "history" else ""
        return f"{self.text}: {about}" if about else self.text

    def per_problem(self, result: dict):
        """The score of each evaluation draw in a run's result (its mean is :meth:`of`), or None."""
        if self.metric.per_problem is None:
            return None
        return self.metric.per_problem(self.evaluation(result["eval"], result["config"]["task"]), self.k)

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


