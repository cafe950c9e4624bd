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


class NoReading(ValueError):
    """A run that has no value of a measure by the measure's own definition, not by damage: a rank probe's window in
    which every group was degenerate has a zero update and no rank (study 6's grpo-g16 seed 1: one prompt a step,
    each group of 16 all-correct or all-wrong over its last six steps). Its plan leaves such a run out of that
    measure by name and reads it on the others; a damaged value is still a plain ValueError, which refuses the
    run (:func:`grpo_lab.study.data.unreadable_measure`)."""


# ---------------------------------------------------------------------------------------------------------------
# Measures: a registry, like the estimators'. A measure reads one number from a run's result (or from the start's
# evaluation), and says how noisy the start's own evaluation of it is.
# ---------------------------------------------------------------------------------------------------------------

DIRECTIONS = ("higher", "lower", "neutral")  # a measure's better direction: what "ahead" and "took" mean on it


@dataclass(frozen=True)
class Metric:
    """One kind of number a study can read. ``source``: "eval" (from an evaluation: a run's ``eval`` or the
    start's) or "history" (from the training log: no start value). ``fraction``: a share in [0, 1] (a difference
    of two then lies within [-1, 1], which bounds what a claim can reach). ``better``: which direction is better
    (:data:`DIRECTIONS`): "higher" (pass@k, greedy, reward), "lower" (the zero-gradient share, ACR, truncation) or
    "neutral" (a length or a norm, where neither is); the report's direction words follow it (issue 80: a
    lower-is-better share read as "ahead" is the costliest wrong word). A plan may declare its own
    (``[measures] direction``)."""
    name: str
    source: str
    fraction: bool
    read: object  # callable: (evaluation or result, k) -> float
    start_se: object = None  # callable: (evaluation, k, groups) -> float, the start's sampling standard error
    per_problem: object = None  # callable: (evaluation, k) -> array, the score of each evaluation draw (bootstrap)
    floor: float | None = None  # the least value it can take (a norm's 0), where its interval is cut (a fraction: 0)
    about: str = ""  # what it is, for a report's legend
    better: str = "higher"
    log_scale: bool = False  # positive and skewed (a rank, a length): also read on the log scale (issue 102)

    def __post_init__(self):
        if self.better not in DIRECTIONS:
            raise ValueError(f"metric {self.name}: better must be one of {', '.join(DIRECTIONS)}, got {self.better!r}")

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


def _problem_weights(groups, draws: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct problems of an evaluation's ``draws`` draws: for each problem its first draw, for each draw its
    problem's index, and ``w_j``, the draws of problem ``j``. ``groups[i]`` is the problem of draw ``i``, one entry
    per draw (else ValueError); None: every draw its own problem, ``w_j = 1``."""
    if groups is None:
        return np.arange(draws), np.arange(draws), np.ones(draws)
    g = np.asarray(groups)
    if g.shape != (draws,):
        raise ValueError(f"the draws' problems ({g.size}) do not match the evaluation's draws ({draws})")
    _, first, inverse = np.unique(g, return_index=True, return_inverse=True)
    return first, inverse, np.bincount(inverse).astype(float)


def _pass_at_se(ev: dict, k: int, groups=None) -> float:
    """The start's sampling standard error of pass@k, given its problems (they are the same after training, so
    only the sampling is noise), counted by problem: ``groups[i]`` is the distinct problem of draw ``i`` where
    draws of one problem share their samples (``eval_distinct``; None: every draw sampled on its own). With
    ``w_j`` the draws of problem ``j`` among ``D``, pass@1's is ``sqrt(sum_j w_j^2 c_j (n - c_j) / (n^2 (n - 1)))
    / D``, the unbiased within-problem variance of each problem's share correct (``w_j = 1`` for independent
    draws; issue 80: treating study 5's 500 draws of 237 problems as independent understated it about 3x);
    pass@k > 1: a parametric bootstrap of each problem's count (2,000 draws of Binomial(n, c_j / n), seed 0)."""
    from ..passk import pass_at_k

    c = np.asarray(ev["correct"], dtype=float)
    n = int(ev["n_samples"])
    if n < 2:
        return 0.0
    first, inverse, w = _problem_weights(groups, c.size)
    if np.any(c[first][inverse] != c):
        raise ValueError("draws of one problem record different counts: they do not share their samples")
    cu = c[first]
    if k == 1:
        return float(math.sqrt(np.sum(w * w * cu * (n - cu) / (n * n * (n - 1)))) / c.size)
    rng = np.random.default_rng(0)
    draws = rng.binomial(n, cu / n, size=(2000, cu.size))
    return float(np.std([np.sum(w * pass_at_k(n, d.astype(int), k)) / c.size for d in draws], ddof=1))


def _pass_at_each(ev: dict, k: int) -> np.ndarray:
    """pass@k of each evaluation draw, unbiased from its ``n_samples`` and ``correct`` (their mean is pass@k)."""
    from ..passk import pass_at_k

    return np.asarray(pass_at_k(int(ev["n_samples"]), np.asarray(ev["correct"], dtype=int), k), dtype=float)


def _cut(ev: dict, k: int) -> float:
    """The share of the evaluation's sampled completions cut at its length limit (``ev["sampling"]["truncated"]``,
    over draws; :func:`grpo_lab.runner.evaluate`)."""
    share = (ev.get("sampling") or {}).get("truncated")
    if share is None:
        raise KeyError("cut (the evaluation recorded no share of completions cut at the length limit: it was "
                       "written before grpo-lab recorded one, issue 80)")
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share <= 1:
        raise ValueError(f"cut: the evaluation's share of completions cut at the length limit is {share!r}, not a "
                         "share in [0, 1]")
    return float(share)


def _cut_se(ev: dict, k: int, groups=None) -> float:
    """A standard error of the start's cut share that is never smaller than its sampling error given its problems
    (only the cut per completion is recorded, not per problem). With ``D`` draws of ``n`` samples each sampled on
    its own, the share's variance is ``sum_j q_j (1 - q_j) / (n D^2)`` for problem ``j``'s chance ``q_j`` of a cut,
    at most ``c (1 - c) / (n D)`` by Jensen's inequality (``c`` the share); where draws of one problem share their
    samples (``groups``, ``w_j`` draws of problem ``j``), ``q_j (1 - q_j) <= 1/4`` gives ``sqrt(sum_j w_j^2 /
    (4 n)) / D``."""
    c, n, draws = _cut(ev, k), int(ev["n_samples"]), len(ev["correct"])
    if groups is None:
        return float(math.sqrt(c * (1 - c) / (n * draws)))
    w = _problem_weights(groups, draws)[2]
    return float(math.sqrt(np.sum(w * w) / (4 * n)) / draws)


def _reward(result: dict, k: int) -> float:
    """The training reward, mean over logged steps (a 0/1 reward's mean lies in [0, 1]; other rewards are not
    range-checked)."""
    return float(_logged(result, "reward").mean())


def _logged(result: dict, key: str, lo: float | None = None, hi: float | None = None) -> np.ndarray:
    """A training-log series, one value per logged step, from the result's history or else its full per-step log
    (``result["log"]``, read by the study engine from the run's metrics file, ``result["log_source"]``); a run that
    never logged it cannot give it (KeyError). Every value must be a finite number within ``[lo, hi]`` (what the
    quantity can take: a share in [0, 1], a norm >= 0); a damaged one is a ValueError naming the entry, the step
    and the file (issue 83: a clipped share of 5.0, a NaN or a norm of -1 was averaged in without a word)."""
    rows, where = [h for h in result["history"] if key in h], f"{result.get('result_source', 'its result file')}'s history"
    source = result["history"]
    if not rows:
        source, where = result.get("log", []), result.get("log_source", "its metrics file")
        rows = [h for h in source if key in h]
    # issue 105: a training step that logged its loss but not this key would shrink the average without a word
    gaps = [h.get("step", i + 1) for i, h in enumerate(source) if rows and "loss" in h and key not in h]
    if gaps:
        raise ValueError(f"{key} is missing at step{'s' if len(gaps) > 1 else ''} "
                         f"{', '.join(str(s) for s in gaps[:5])}{' …' if len(gaps) > 5 else ''} in {where}, which "
                         f"logged it at {len(rows)} other step{'s' if len(rows) != 1 else ''} (damaged?)")
    if not rows:
        why = result.get("log_problem")
        raise KeyError(f"{key} (its training log has no such entry: logged by grpo_lab.trl.StarvationCallback"
                       + (f"; {why}" if why else "") + ")")
    vals = []
    for i, h in enumerate(rows):
        v, step = h[key], h.get("step", i + 1)
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        if not ok or (lo is not None and v < lo) or (hi is not None and v > hi):
            rng = "" if ok else "not a finite number"
            if ok:
                rng = f"below {lo:g}" if lo is not None and v < lo else f"above {hi:g}"
            raise ValueError(f"{key} at step {step} in {where} is {v!r}, {rng} (damaged?)")
        vals.append(float(v))
    return np.asarray(vals, dtype=float)


def _share(key: str):
    """A training-log share's series (each value in [0, 1])."""
    return lambda result: _logged(result, key, 0.0, 1.0)


def _norm(key: str):
    """A training-log norm's series (each value >= 0)."""
    return lambda result: _logged(result, key, 0.0)


def _acr(result: dict, k: int) -> float:
    """The Advantage Collapse Rate over training (arXiv 2605.21125): the mean over logged steps of the share of
    groups whose rewards are all equal (``starvation/acr``, :func:`grpo_lab.starvation.collapse_rate`). It reads
    the rewards sampled, so it is the same quantity for every estimator: AVSPO's virtual rewards do not enter it."""
    return float(_share("starvation/acr")(result).mean())


def _zero_adv(result: dict, k: int) -> float:
    """The share of completions trained with a zero advantage (no gradient), averaged over logged steps:
    ``1 - starvation/frac_nonzero_adv``, read from the advantages the estimator actually used. For GRPO and
    Dr.GRPO with 0/1 rewards it equals :func:`_acr` (a homogeneous group is exactly a group with no signal);
    AVSPO lowers it wherever its virtual rewards give a homogeneous group a signal, Sign makes it 0."""
    return float(1.0 - _share("starvation/frac_nonzero_adv")(result).mean())


def tenth(steps: int) -> int:
    """How many logged steps a first or last tenth holds (at least one)."""
    return max(1, steps // 10)


def _tenth(result: dict, key: str, which: str) -> float:
    """The mean of a training-log series over its first or last tenth of logged steps (at least one step)."""
    v = _logged(result, key)
    n = tenth(v.size)
    return float(v[:n].mean() if which == "first" else v[-n:].mean())


def _length(result: dict, k: int) -> float:
    """Tokens per completion generated, averaged over steps (``sampling/tokens / sampling/completions``)."""
    rows = [h for h in result["history"] if h.get("sampling/completions") and "sampling/tokens" in h]
    if not rows:
        raise KeyError("sampling/tokens (its training log has no completion lengths)")
    tokens = _logged({"history": rows}, "sampling/tokens", 0.0)
    count = _logged({"history": rows}, "sampling/completions", 1.0)
    return float(np.mean(tokens / count))


SUCCESSES = "starvation/successes"  # grpo_lab.starvation.success_signatures' sums, one per logging window


def _successes(result: dict) -> dict:
    """The run's :func:`grpo_lab.starvation.success_signatures` sums added over its training log; each window's
    entry checked (a count that is no whole number >= 0, a sum of shares above its count or a negative length is a
    ValueError naming the step, issue 83). A run that logged none (before issue 82's study 7) is a KeyError."""
    from ..starvation import SUCCESS_SIGNS, add_success_signatures, no_successes

    rows = [h for h in result["history"] if h.get(SUCCESSES) is not None]
    where = f"{result.get('result_source', 'its result file')}'s history"
    if not rows:
        raise KeyError(f"{SUCCESSES} (its training log records no successes' signs: logged since issue 82)")
    total = no_successes()
    for i, h in enumerate(rows):
        step = h.get("step", i + 1)
        for kind in total:
            rec = (h[SUCCESSES] or {}).get(kind)
            n = rec.get("n") if isinstance(rec, dict) else None
            ok = isinstance(n, int) and not isinstance(n, bool) and n >= 0
            for sign in SUCCESS_SIGNS:
                v = rec.get(sign) if ok else None
                ok = ok and isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0 \
                    and (sign == "length" or v <= n)
            if not ok:
                raise ValueError(f"{SUCCESSES} ({kind}) at step {step} in {where} is {rec!r} (damaged?)")
        total = add_success_signatures(total, h[SUCCESSES])
    return total


def _success_mean(kind: str, sign: str):
    """A run's ``kind`` successes' mean ``sign`` (a share, or tokens for ``length``), pooled over its training: the
    sum over every logged window over their count. A run with no such success gives none (KeyError): a plan reads
    these in its descriptive ``steps`` table, where such a run is named, not in its measures, where it would be
    left out of the study."""
    def read(result: dict, k: int) -> float:
        t = _successes(result)[kind]
        if t["n"] == 0:
            raise KeyError(f"{SUCCESSES} (no {kind} success in its training log)")
        return t[sign] / t["n"]
    return read


def _sole_share(result: dict, k: int) -> float:
    """The share of a run's successful training completions that were the only success of their group."""
    t = _successes(result)
    n = t["sole"]["n"] + t["shared"]["n"]
    if n == 0:
        raise KeyError(f"{SUCCESSES} (no success in its training log)")
    return t["sole"]["n"] / n


RANK_READINGS = {  # a rank probe's readings (RunConfig.rank_probe, issue 82): metric stem -> what it is
    "update-erank": "the effective rank of the batch update, mean over the probe's steps with a nonzero update and "
                    "its blocks",
    "update-count": "the batch update's singular values above 1% of the largest, mean over the probe's steps with "
                    "a nonzero update and its blocks",
    "update-bound": "the most rank the batch update can have by arithmetic, mean over the probe's steps with a "
                    "nonzero update and its blocks",
    "group-erank": "the effective rank of a group's contribution matrix, mean over groups with a nonzero bound",
    "group-count": "a group's singular values above 1% of the largest, mean over groups with a nonzero bound",
    "group-bound": "the most rank a group's contribution matrix can have by arithmetic (distinct completions with "
                   "a nonzero advantage), mean over groups with a nonzero bound",
    "group-reference": "the effective rank a group's contribution matrix would have with orthogonal rows, mean over "
                       "groups with a nonzero bound",
    "update-signgap": "how much higher the batch update's effective rank is under Sign's equal-size advantages than "
                      "under the run's own, on the same completions and gradients (what the advantages' sizes "
                      "alone do), mean over the probe's steps with a nonzero update and its blocks",
    "group-signgap": "how much higher a group's effective rank is under Sign's advantages than under the run's own, "
                     "on the same completions and gradients, mean over the groups with a nonzero bound",
}


def _recorded(x, bound, where: str) -> float:
    """A rank probe's recorded value, or a ValueError naming where it is damaged: not a number >= 0, or above
    ``bound`` (a rank or a count above its arithmetic bound; None: no bound applies)."""
    ok = isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x >= 0
    if not ok or (bound is not None and x > bound + 1e-6):
        raise ValueError(f"{where} is {x!r}, " + ("not a number >= 0" if not ok else
                                                  f"above its arithmetic bound {bound}") + " (damaged?)")
    return float(x)


def _rank(result: dict, stem: str, which: str) -> float:
    """A rank probe's readings over the run's ``which`` window ("start": its first steps, "end": its last), under
    the advantages the run trained on: a batch-update reading averaged over the window's steps whose update is not
    0 (bound 0: every group degenerate) and the probe's blocks; a group reading over the groups whose bound is not 0
    (a degenerate group has no contribution to measure), of every step and block. "change": end minus start.
    ``…-signgap``: Sign's reading minus the run's own on the same rows, over the groups (steps) the run's own
    advantages gave a signal. Damaged values are named, not averaged."""
    if which == "change":
        return _rank(result, stem, "end") - _rank(result, stem, "start")
    probe = result.get("rank_probe")
    if not isinstance(probe, dict):
        raise KeyError(f"{stem}-{which} (the run has no rank probe: train it with rank_probe = N, its window)")
    readings = probe.get(which)
    if not isinstance(readings, list) or not readings:
        raise KeyError(f"{stem}-{which} (its rank probe has no {which} reading: "
                       + ("resumed past those steps?)" if which == "start" else "did it finish?)"))
    est = result["config"]["estimator"]
    kind, what = stem.split("-")
    vals = []
    for reading in readings:
        per = (reading.get("by_estimator") or {}).get(est)
        if not isinstance(per, dict) or not per:
            raise KeyError(f"{stem}-{which} (its {which} reading of step {reading.get('step')} has no {est} readings)")
        for block, row in per.items():
            where = f"{stem}-{which} of {block} at step {reading.get('step')}"
            xs, bounds = row[f"{kind}_{'erank' if what == 'signgap' else what}"], row[f"{kind}_bound"]
            if kind == "update":
                xs, bounds = [xs], [bounds]
            xs = [_recorded(x, n if what in ("erank", "count") else None, where) for x, n in zip(xs, bounds)]
            if what == "signgap":  # the same rows weighted by Sign's advantages, minus the run's own
                sign = (reading.get("by_estimator") or {}).get("sign", {}).get(block)
                if not isinstance(sign, dict):
                    raise KeyError(f"{stem}-{which} (its {which} reading of step {reading.get('step')} has no sign "
                                   "readings)")
                theirs = [sign["update_erank"]] if kind == "update" else sign["group_erank"]
                xs = [_recorded(y, None, where) - x for y, x in zip(theirs, xs)]
            vals += [x for x, n in zip(xs, bounds) if n > 0]
    if not vals:
        raise NoReading(f"{stem}-{which}: no step of the window had a group with a nonzero advantage ({est})")
    return float(np.mean(vals))


METRICS: dict[str, Metric] = {}


def register_metric(metric: Metric) -> Metric:
    """Add a metric a plan can name (``pass@k`` is one entry for every k)."""
    METRICS[metric.name] = metric
    return metric


register_metric(Metric("pass@k", "eval", True, _pass_at, _pass_at_se, _pass_at_each))
register_metric(Metric("greedy", "eval", True, lambda ev, k: float(ev["greedy"]),
                       lambda ev, k, groups=None: 0.0))  # greedy decoding is deterministic: no sampling error
register_metric(Metric("reward", "history", True, _reward))
register_metric(Metric("cut", "eval", True, _cut, _cut_se, better="lower",
                       about="the share of the evaluation's sampled completions cut at its length limit (a completion "
                       "cut before its answer scores 0): how much of pass@1 the limit itself can withhold"))
register_metric(Metric("acr", "history", True, _acr, better="lower",
                       about="the share of groups whose sampled rewards are all equal (ACR), mean over steps"))
register_metric(Metric("zero-adv", "history", True, _zero_adv, better="lower",
                       about="the share of completions trained with a zero advantage, mean over steps"))
register_metric(Metric("all-fail", "history", True, lambda r, k: float(_share("starvation/all_fail")(r).mean()),
                       better="lower", about="the share of groups whose sampled rewards are all 0 (all-fail), mean "
                       "over steps: one of the two parts of ACR"))
register_metric(Metric("all-pass", "history", True, lambda r, k: float(_share("starvation/all_pass")(r).mean()),
                       better="neutral", about="the share of groups whose sampled rewards are all 1 (all-pass), mean "
                       "over steps: the other part of ACR, which rises as a policy learns"))
# The training log's per-step quantities (issue 57, item 4: what tells "learns slowly" from "collapses"), for a
# plan's `steps` table: descriptive, one number per run.
register_metric(Metric("grad-norm", "history", False, lambda r, k: float(_norm("grad_norm")(r).mean()),
                       floor=0.0, better="neutral", about="the gradient norm before clipping, mean over steps"))
register_metric(Metric("step-size", "history", False, lambda r, k: float(_norm("update/step_norm")(r).mean()),
                       floor=0.0, better="neutral", about="the size of one update of the trained weights, "
                       "‖θ_t − θ_(t−1)‖, mean over steps"))
register_metric(Metric("from-start", "history", False, lambda r, k: float(_norm("update/from_start")(r)[-1]),
                       floor=0.0, better="neutral", about="the trained weights' distance from the start after the "
                       "last step, ‖θ_T − θ_0‖"))
register_metric(Metric("reward-first", "history", True, lambda r, k: _tenth(r, "reward", "first"),
                       about="the training reward over the first tenth of steps"))
register_metric(Metric("reward-last", "history", True, lambda r, k: _tenth(r, "reward", "last"),
                       about="the training reward over the last tenth of steps"))
register_metric(Metric("length", "history", False, _length, floor=0.0, better="neutral", log_scale=True,
                       about="tokens per completion generated in training, mean over steps"))
for _stem, _about in RANK_READINGS.items():  # a rank probe's readings at the first and the last step (issue 82)
    for _which, _when in (("start", "over the first steps (the probe's window)"),
                          ("end", "over the last steps (the probe's window)"),
                          ("change", "its change over training (last steps − first steps)")):
        register_metric(Metric(f"{_stem}-{_which}", "history", False,
                               lambda r, k, s=_stem, w=_which: _rank(r, s, w),
                               floor=None if _which == "change" or "signgap" in _stem else 0.0, better="neutral",
                               log_scale=_which != "change" and "signgap" not in _stem, about=f"{_about}, {_when}"))
TRUNCATED = "completions/clipped_ratio"  # TRL's share of a step's completions cut at max_completion_length
register_metric(Metric("truncated", "history", True, lambda r, k: float(_share(TRUNCATED)(r).mean()), better="lower",
                       about="the share of training completions cut at max_completion_length (TRL's "
                       "completions/clipped_ratio, from the run's metrics file), mean over steps"))
# What the successful training completions look like (issue 82, study 7: "shortcut" measured, not assumed): the
# sole success of an otherwise all-fail group (the lucky success GRPO scales up) beside the successes of groups with
# two or more; descriptive, for a plan's `steps` table.
register_metric(Metric("sole-share", "history", True, _sole_share, better="neutral",
                       about="the share of successful training completions that were their group's only success "
                       "(k = 1), pooled over training"))
for _kind, _which in (("sole", "the only success of their group (k = 1)"),
                      ("shared", "successes of a group with two or more (k >= 2)")):
    register_metric(Metric(f"{_kind}-length", "history", False, _success_mean(_kind, "length"), floor=0.0,
                           better="neutral", log_scale=True, about=f"tokens per completion of the training completions that were "
                           f"{_which}, pooled over training"))
    for _sign, _what in (("repeats_prompt", "answer with a number of the prompt"),
                         ("no_working", "answer without working")):
        register_metric(Metric(f"{_kind}-{_sign.replace('_', '-')}", "history", True, _success_mean(_kind, _sign),
                               better="neutral", about=f"of the training completions that were {_which}, "
                               f"the share that {_what} (grpo_lab.tasks.signatures), pooled over training"))
register_metric(Metric("adam-near-eps", "history", True,
                       lambda r, k: float(_share("update/adam_near_eps")(r).mean()), better="neutral",
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
    declared: str | None = None  # the plan's own better direction for this measure ([measures] direction)

    @property
    def better(self) -> str:
        """The better direction (:data:`DIRECTIONS`): the plan's declaration, else the metric's default."""
        return self.declared or self.metric.better

    def of(self, result: dict) -> float:
        """The value in a run's result (its evaluation on this task, or its training log); :class:`NoReading` where
        the run has none by the measure's definition (see :meth:`reading`)."""
        if self.metric.source == "history":
            return self.metric.read(result, self.k)
        return self.metric.read(self.evaluation(result["eval"], result["config"]["task"]), self.k)

    def reading(self, result: dict) -> float | None:
        """:meth:`of`, or None where the run has no reading of this measure (:class:`NoReading`): such a run is left
        out of this measure, by name, and kept for the others."""
        try:
            return self.of(result)
        except NoReading:
            return None

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

    def of_start(self, start: dict, own_task: str, groups=None) -> tuple[float, float]:
        """The start's value and its sampling standard error (counted by problem where ``groups`` names each
        draw's distinct problem: draws that share their samples, ``eval_distinct``)."""
        if self.metric.source != "eval":
            raise ValueError(f"{self.text} is read from training logs: the start has none")
        ev = self.evaluation(start, own_task)
        return self.metric.read(ev, self.k), self.metric.start_se(ev, self.k, groups)


def parse_measure(text, tasks: dict, where: str, directions: dict | None = None) -> Measure:
    """``"pass@4"``, ``"greedy"``, ``"reward"``, or any of them after a task's short name (``"easy pass@1"``).
    ``directions``: the plan's declared better direction per metric name (``{"length": "lower"}``)."""
    m = _parse_measure(text, tasks, where)
    d = (directions or {}).get("pass@k" if m.metric.name == "pass@k" else m.metric.name)
    if d is None and m.metric.name == "pass@k":
        d = (directions or {}).get(f"pass@{m.k}")
    return m if d is None else Measure(m.text, m.metric, m.k, m.alias, m.task, m.split, d)


def parse_directions(table, where: str) -> dict:
    """A plan's ``[measures] direction`` table: metric name (``"length"``, ``"pass@1"``) -> "higher", "lower" or
    "neutral"; a name no metric has, or another word, is refused by name."""
    if not isinstance(table, dict):
        raise PlanError(f"{where}: direction must be a table of metric = \"higher\" | \"lower\" | \"neutral\", "
                        f"got {table!r}")
    for name, d in table.items():
        known = name in METRICS or re.fullmatch(r"pass@[1-9][0-9]*", name)
        if not known:
            raise PlanError(f"{where}: direction names {name!r}, not a metric (" + ", ".join(
                n for n in METRICS) + ")")
        if d not in DIRECTIONS:
            raise PlanError(f"{where}: direction of {name} must be one of {', '.join(DIRECTIONS)}, got {d!r}")
    return dict(table)


def _parse_measure(text, tasks: dict, where: str) -> Measure:
    if not isinstance(text, str) or not text.strip():
        raise PlanError(f"{where}: a measure is a name such as pass@1, greedy or 'easy pass@1', got {text!r}")
    words = text.split()
    alias = words[0] if len(words) == 2 else None
    if alias == "validation":  # the run's own task's validation split
        name = words[-1]
        inner = _parse_measure(name, {}, where)
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


