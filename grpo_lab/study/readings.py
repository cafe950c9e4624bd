"""The readings: each comparison as ``(d, standard error, degrees of freedom)`` under a study's declared conventions,
its family's correction, and the hypotheses' judgements (the same verdicts re-read under the reasonable alternatives:
:mod:`grpo_lab.study.robust`). Part of :mod:`grpo_lab.study`.

A reading is computed under :class:`Conventions`: the degrees of freedom of a difference of means (``"welch"``,
Welch-Satterthwaite, or ``"min-n"``, the smaller arm's n - 1: :data:`grpo_lab.stats.DFS`) and the method
(``"t"``: a t-interval over seeds; ``"bootstrap"``: a bootstrap over seeds x problems, :func:`bootstrap`, whose
standard error is read with the same t quantiles). The plan declares the df and, for each size rule, the interval
it reads (:data:`RULE_INTERVALS`): the per-comparison ``1 - alpha`` interval, or the interval at the level Holm's
step-down tests that comparison at, ``1 - alpha / (m - rank)``. Every interval method is checked for coverage
(:mod:`grpo_lab.study.coverage`, ``tests/test_study_coverage.py``): an alternative whose coverage misses the band
is shown as narrow and cannot by itself call a verdict fragile (issue 80).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .. import stats
from .plan import Spec, _rel

BOOTSTRAP_RESAMPLES = 4000  # a standard error to about 1% (sqrt(1 / (2 B))); seed 0 (reproducible)


@dataclass(frozen=True)
class Conventions:
    """The statistical choices a reading depends on (the plan declares ``df``; the method is ``"t"``). ``scale``:
    ``"log"`` reads a positive measure (one its metric declares ``log_scale``: a rank, a length) on the log scale,
    every other measure as on the linear one (issue 102: a rank is positive and skewed)."""
    df: str = "welch"
    method: str = "t"
    scale: str = "linear"

    def words(self) -> str:
        if self.scale == "log":
            return ("a log scale for the positive measures (ranks, lengths): t-intervals over seeds of the logs "
                    "(geometric means; an arm against a value as their ratio, two arms as the ratio of their "
                    "geometric means), back-transformed to the measure's own scale")
        if self.method == "bootstrap":
            return (f"a bootstrap over seeds × problems ({BOOTSTRAP_RESAMPLES:,} resamples: seeds within each arm, "
                    "rescaled by √(n/(n − 1)) so that their spread is not understated, the evaluation's problems "
                    "shared by every arm), its standard error read with t quantiles at "
                    + ("Welch–Satterthwaite df" if self.df == "welch" else "the smaller arm's n − 1 df"))
        return ("t-intervals over seeds with Welch–Satterthwaite degrees of freedom" if self.df == "welch" else
                "t-intervals over seeds with the smaller arm's n − 1 degrees of freedom (min-n, the conservative "
                "choice)")


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
    kind: str = ""             # welch, paired, start, interaction
    start_se: float | None = None
    apart: bool | None = None  # after the family's correction (planned, complete) or None
    why_not: str | None = None
    need: int | None = None
    mean_b: float | None = None
    se: float | None = None    # t method: the standard error and the degrees of freedom of d
    dof: float | None = None
    draws: np.ndarray | None = field(default=None, repr=False)  # bootstrap method: the resampled d (se: their sd)
    level: float | None = None  # the confidence the family's correction read it at (Holm's step level)
    same_as: str | None = None  # the label of an earlier comparison of the same arms (counted once)
    counted_unread: bool = False  # unread for want of runs with a reading, counted by the correction as p = 1
    alpha: float = 0.05
    log_ref: float | None = None  # a log-scale reading (issue 102): d = ref · (exp(log_d) − 1), se and dof of log_d
    log_d: float | None = None

    def interval_at(self, confidence: float) -> tuple[float, float]:
        """The two-sided interval at ``confidence``: ``d ± t · se`` (a t-interval over seeds, or the bootstrap's
        standard error with the same t quantiles); a log-scale reading's, back-transformed from the logs."""
        if self.log_ref is not None:
            lo, hi = stats.t_interval(self.log_d, self.se, self.dof, confidence)
            return self.log_ref * math.expm1(lo), self.log_ref * math.expm1(hi)
        return stats.t_interval(self.d, self.se, self.dof, confidence)

    @property
    def direction(self) -> str | None:
        """``"a"`` or ``"b"``: the side whose value is higher when separated (the sign of d: separation at the
        plan's alpha, not at 95%, decides it), else None. Which side is *better* depends on the measure:
        :attr:`better_side`."""
        if not self.apart or self.d is None:
            return None
        return "a" if self.d > 0 else "b"

    @property
    def better_side(self) -> str | None:
        """``"a"`` or ``"b"``: the side ahead on the measure's better direction when separated (for a
        lower-is-better measure the side with the lower value); None when not separated or the measure is
        neutral."""
        better = self.spec.measure.better
        if self.direction is None or better == "neutral":
            return None
        return self.direction if better == "higher" else ("b" if self.direction == "a" else "a")


def _t(r: Reading, d: float, se: float, dof: float, alpha: float) -> Reading:
    r.d, r.se, r.dof = float(d), float(se), float(dof)
    r.lo, r.hi = r.interval_at(1 - alpha)
    r.p = stats.t_p(r.d, r.se, r.dof)
    return r


def read(study, spec: Spec, conv: Conventions) -> Reading:
    """One comparison under ``conv`` (no correction yet); the interval at the plan's ``1 - alpha``."""
    alpha = study.plan.alpha
    if conv.scale == "log" and on_log_scale(spec):
        return _log(study, spec, conv, alpha)
    if spec.c is not None:
        return _interaction(study, spec, conv, alpha)
    if spec.level is not None:
        return _level(study, spec, conv, alpha)
    a = study.values(spec.a, spec.measure)
    if spec.b == "start":
        st = study.start(spec.a, spec.measure)
        r = Reading(spec, len(a), 0, kind="start", alpha=alpha)
        if st is None:
            name = study.resolve(spec.a)
            d = study.data[name].dirs if name in study.data else []
            r.why_not = ("no start evaluation: " + ", ".join(  # issue 105: a damaged file is not a missing one
                f"{_rel(x, study.plan.home)}/start.json "
                + ("damaged (left out, named in the deviations)" if (x / "start.json").is_file() else "missing")
                for x in d) if d else "no start evaluation yet")
            return r
        x = np.asarray(list(a.values()), dtype=float)
        r.mean_b, r.start_se = st
        if len(x) < 2:
            r.why_not = f"{len(x)} seed(s): an interval needs 2"
            return r
        if not stats.spread(x) and st[1] == 0:
            r.why_not = f"cannot tell: the {len(x)} seeds agree exactly and the start has no sampling error"
            return r
        if conv.method == "bootstrap":
            return _boot(study, r, [(spec.a, 1)], conv, alpha, start=(spec.a, -1))
        return _t(r, x.mean() - st[0], math.sqrt(x.var(ddof=1) / x.size + st[1] ** 2), x.size - 1, alpha)
    b = study.values(spec.b, spec.measure)
    r = Reading(spec, len(a), len(b), alpha=alpha)
    r.why_not = _not_chosen(study, (spec.a, spec.b))
    if r.why_not:
        return r
    if spec.pairing == "seed":
        common = sorted(set(a) & set(b))
        x, y = np.asarray([a[s] for s in common], float), np.asarray([b[s] for s in common], float)
        r.kind, r.n_a, r.n_b = "paired", len(common), len(common)
    else:
        x, y = np.asarray(list(a.values()), float), np.asarray(list(b.values()), float)
        r.kind = "welch"
    if y.size:
        r.mean_b = float(y.mean())
    if x.size < 2 or y.size < 2:
        r.why_not = f"{x.size} and {y.size} seeds: an interval needs 2 on each side"
        return r
    if r.kind == "paired":
        diffs = x - y
        if not stats.spread(diffs):
            r.why_not = f"cannot tell: the {x.size} paired differences agree exactly"
            return r
        if conv.method == "bootstrap":
            return _boot(study, r, [(spec.a, 1), (spec.b, -1)], conv, alpha, paired=True)
        return _t(r, diffs.mean(), diffs.std(ddof=1) / math.sqrt(diffs.size), diffs.size - 1, alpha)
    if not stats.spread(x) and not stats.spread(y):
        r.why_not = "cannot tell: the seeds of each side agree exactly"
        return r
    if conv.method == "bootstrap":
        return _boot(study, r, [(spec.a, 1), (spec.b, -1)], conv, alpha)
    return _t(r, *stats.diff_parts(x, y, conv.df), alpha)


def _level(study, spec: Spec, conv: Conventions, alpha: float) -> Reading:
    """An arm against the plan's value (issue 82): its seeds' mean minus the value, with the one-sample t-interval
    over seeds (n - 1 df under every df convention: one side has no second variance to pool). The bootstrap over
    seeds x problems does not read it (a value has no problems)."""
    r = Reading(spec, 0, 0, kind="level", alpha=alpha)
    r.why_not = _not_chosen(study, (spec.a,))
    if r.why_not:
        return r
    x = np.asarray(list(study.values(spec.a, spec.measure).values()), dtype=float)
    r.n_a, r.mean_b = len(x), spec.level
    if conv.method == "bootstrap":
        r.why_not = f"not read by a bootstrap over seeds × problems: {spec.b} is a value, with no problems"
        return r
    if len(x) < 2:
        r.why_not = f"{len(x)} seed(s): an interval needs 2"
        return r
    if not stats.spread(x):
        r.why_not = f"cannot tell: the {len(x)} seeds agree exactly"
        return r
    return _t(r, x.mean() - spec.level, x.std(ddof=1) / math.sqrt(x.size), x.size - 1, alpha)


def on_log_scale(spec: Spec) -> bool:
    """Whether the log-scale alternative reads this comparison: a measure its metric declares positive
    (``log_scale``), an arm against a value or against another arm, unpaired (issue 102)."""
    return bool(spec.measure.metric.log_scale and spec.c is None and spec.b != "start" and spec.pairing != "seed")


def _log(study, spec: Spec, conv: Conventions, alpha: float) -> Reading:
    """A positive measure on the log scale (issue 102): an arm against a value ``v`` as the ratio of its geometric
    mean to ``v`` (one-sample t over the seeds' logs, n − 1 df); two arms as the ratio of their geometric means
    (Welch's standard error of the logs' difference, the plan's df). The estimate and its interval are
    back-transformed to the measure's own scale, ``ref · (exp(·) − 1)`` with ``ref`` the value or b's geometric mean,
    so a size rule or a margin reads them as it reads the linear ones; the p-value is the logs'. A skewed positive
    quantity (one seed's rank 97 beside 11, 12, 15) is read by its typical size rather than pulled by its largest."""
    level = spec.level is not None
    r = Reading(spec, 0, 0, kind="level" if level else "welch", alpha=alpha)
    r.why_not = _not_chosen(study, (spec.a,) if level else (spec.a, spec.b))
    if r.why_not:
        return r
    x = np.asarray(list(study.values(spec.a, spec.measure).values()), dtype=float)
    y = None if level else np.asarray(list(study.values(spec.b, spec.measure).values()), dtype=float)
    r.n_a, r.n_b = len(x), (0 if level else len(y))
    if np.any(x <= 0) or (y is not None and np.any(y <= 0)) or (level and spec.level <= 0):
        r.why_not = f"not read on a log scale: a value of {spec.measure.text} at or below 0 has no logarithm"
        return r
    if len(x) < 2 or (y is not None and len(y) < 2):
        r.why_not = "an interval needs 2 seeds on each side"
        return r
    lx = np.log(x)
    if level:
        ref, (d, se, dof) = spec.level, (float(lx.mean() - math.log(spec.level)),
                                          float(lx.std(ddof=1) / math.sqrt(lx.size)), float(lx.size - 1))
    else:
        ly = np.log(y)
        ref, (d, se, dof) = float(math.exp(ly.mean())), stats.diff_parts(lx, ly, conv.df)
    if se == 0:
        r.why_not = "cannot tell: the seeds agree exactly"
        return r
    r.mean_b, r.log_ref, r.log_d, r.se, r.dof = ref, ref, d, se, dof
    r.d = ref * math.expm1(d)
    r.lo, r.hi = r.interval_at(1 - alpha)
    r.p = stats.t_p(d, se, dof)
    return r


def _not_chosen(study, names) -> str | None:
    """Why a comparison naming a selection cannot be read yet: the selection has not chosen its arm (it chooses
    once every candidate has all its runs, :meth:`~grpo_lab.study.data.Study.chosen`); None when nothing waits."""
    waiting = [x for x in names if x in study.plan.selections and study.chosen(x) is None]
    if not waiting:
        return None
    return ("not read yet: " + " and ".join(waiting) + (" choose arms" if len(waiting) > 1 else " chooses an arm")
            + " once every candidate has all its runs")


def _interaction(study, spec: Spec, conv: Conventions, alpha: float) -> Reading:
    """``(a - b) - (c - d)`` over four independent arms: the difference of means, its standard error
    ``sqrt(sum s_i^2 / n_i)``, the degrees of freedom by the plan's convention (Welch-Satterthwaite over the four,
    or the smallest ``n_i - 1``)."""
    names = (spec.a, spec.b, spec.c, spec.d)
    samples = [np.asarray(list(study.values(x, spec.measure).values()), float) for x in names]
    r = Reading(spec, len(samples[0]), len(samples[1]), kind="interaction", alpha=alpha)
    r.why_not = _not_chosen(study, names)
    if r.why_not:
        return r
    if any(x.size < 2 for x in samples):
        r.why_not = "an interaction needs 2 seeds in each of its four arms"
        return r
    if not any(stats.spread(x) for x in samples):
        r.why_not = "cannot tell: every arm's seeds agree exactly"
        return r
    if conv.method == "bootstrap":
        return _boot(study, r, list(zip(names, (1, -1, -1, 1))), conv, alpha)
    return _t(r, *stats.interaction_parts(*samples, df=conv.df), alpha)


def _boot(study, r: Reading, sides: list, conv: Conventions, alpha: float, paired: bool = False,
          start: tuple | None = None) -> Reading:
    """The reading by :func:`bootstrap` over the sides' per-problem scores; where the measure has none (greedy, a
    training-log measure) or the arms were evaluated on different problems, ``why_not`` says so."""
    mats = [(study.matrix(name, r.spec.measure), sign) for name, sign in sides]
    if start is not None:
        mats.append((study.start_row(start[0], r.spec.measure), start[1]))
    if any(m is None for m, _ in mats):
        r.why_not = f"no per-problem scores of {r.spec.measure.text} to resample"
        return r
    if len({m.shape[1] for m, _ in mats}) > 1:
        r.why_not = "the arms were evaluated on different numbers of problems: nothing to pair by problem"
        return r
    d, draws = bootstrap(mats, paired=paired)
    r.draws = draws
    return _t(r, d, float(draws.std(ddof=1)), _boot_df([m for m, _ in mats], conv.df, paired), alpha)


def _boot_df(mats: list, df: str, paired: bool) -> float:
    """The degrees of freedom a bootstrap's standard error is read with: the plan's convention over the sides'
    seed means (a side of one row, the start, adds none); paired: the pairs' n - 1."""
    sides = [m.mean(axis=1) for m in mats if m.shape[0] > 1]
    ns = [x.size for x in sides]
    if paired or len(sides) == 1:
        return float(min(ns) - 1)
    if df == "min-n":
        return float(min(ns) - 1)
    return stats.welch_df_of([(x.var(ddof=1), x.size) for x in sides])


def bootstrap(sides: list, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0,
              paired: bool = False, rescale: bool = True) -> tuple[float, np.ndarray]:
    """``(d, draws)`` for ``d = sum_k sign_k * mean(M_k)`` over ``sides = [(M_k [seeds, problems], sign_k), ...]``:
    each resample draws the problems once (with replacement, the same for every side: the arms were evaluated on
    the same problems) and each side's seeds (with replacement, independently; ``paired``: the same seed indices
    for every side, whose rows are then aligned by seed). A hierarchical bootstrap: its spread covers the choice
    of problems as well as the seeds (an interval over seeds alone treats the problem set as fixed).

    ``rescale``: each side's rows are first moved away from the side's mean row by ``sqrt(n / (n - 1))``, so that
    resampling n seeds gives the seeds' unbiased variance ``s^2 / n`` instead of ``(n - 1) s^2 / n^2`` (a plain
    bootstrap's ÷n: ×0.894 of the standard error at n = 5, ×0.816 at n = 3; issue 80 found it made two headlines
    "Fragile"). The engine reads the draws' standard deviation with t quantiles (:func:`_boot`), not their
    percentiles, whose normal tails are too narrow with few seeds; ``tests/test_study_coverage.py`` checks the
    result covers at its nominal level."""
    rng = np.random.default_rng(seed)
    n_prob = sides[0][0].shape[1]
    w = rng.multinomial(n_prob, np.full(n_prob, 1 / n_prob), size=resamples) / n_prob  # [B, problems]
    shared = None
    draws = np.zeros(resamples)
    d = 0.0
    for m, sign in sides:
        n = m.shape[0]
        if rescale and n > 1:
            centre = m.mean(axis=0, keepdims=True)
            m = centre + (m - centre) * math.sqrt(n / (n - 1))
        if paired:
            if shared is None:
                shared = rng.multinomial(n, np.full(n, 1 / n), size=resamples) / n
            u = shared
        else:
            u = rng.multinomial(n, np.full(n, 1 / n), size=resamples) / n  # [B, seeds]
        draws += sign * np.einsum("bp,bp->b", u @ m, w)
        d += sign * float(m.mean())
    return d, draws


def holm_levels(pvalues: list, alpha: float) -> list:
    """The confidence at which Holm's step-down tests each p-value: ``1 - alpha / (m - rank)``, rank its place
    among the sorted p-values (0 for the smallest). A comparison's "Holm-level interval" is its interval there."""
    m = len(pvalues)
    out = [0.0] * m
    for rank, i in enumerate(np.argsort(pvalues, kind="stable")):
        out[int(i)] = 1 - alpha / (m - rank)
    return out


def key(study, spec: Spec) -> tuple:
    """What a comparison reads once selections have chosen: two comparisons with one key are one test (a - b and
    b - a are one test, its sign flipped: issue 83)."""
    if spec.level is not None:
        return (study.resolve(spec.a), spec.level, None, None, spec.measure.text, spec.pairing)
    res = [study.resolve(x) if x is not None else None for x in (spec.a, spec.b, spec.c, spec.d)]
    if spec.c is None and spec.b != "start" and None not in res[:2]:
        res[:2] = sorted(res[:2])
    return (*res, spec.measure.text, spec.pairing)


def silent_sides(study, spec: Spec) -> dict:
    """``{arm: {seed: why}}``: the arms a comparison reads that have finished runs left out of its measure by the
    measure's definition (:class:`grpo_lab.study.measures.NoReading`), for the words that name them and for the
    family's correction."""
    out = {}
    for side in spec.arms:
        name = study.resolve(side)
        if name is not None and name in study.data and (gone := study.unread(name, spec.measure)):
            out[name] = gone
    return out


def read_family(study, specs: list, conv: Conventions) -> list:
    """A family of planned comparisons under ``conv``, with the plan's correction (once every run has finished):
    comparisons that read the same arms (after selections chose) count once, the later one naming the earlier. A
    comparison that cannot be read because its arm's runs have no reading of its measure by definition is counted
    as p = 1: it never separates and gets no verdict, and the others keep the family's declared size (Holm rejects
    no more when a p-value rises, so the family-wise error stays at or below alpha; study 6's plan, declared
    before its last runs). Any other unread comparison (a damaged or refused run) leaves the family unread."""
    rows = [read(study, s, conv) for s in specs]
    first: dict = {}
    for r in rows:
        k = key(study, r.spec)
        if k in first and None not in k[:2]:
            r.same_as = first[k].spec.label
        else:
            first.setdefault(k, r)
    if not study.complete:
        return rows
    silent = [r for r in rows if r.p is None and silent_sides(study, r.spec)]
    if any(r.p is None and r not in silent for r in rows) or len(silent) == len(rows):
        return rows  # a damaged or refused run leaves the family unread: no verdict at all
    for r in silent:  # left unread by runs with no reading by definition: counted as p = 1, so the family keeps
        r.counted_unread = True  # its declared size and the others their declared correction (study 6's rule)
    alpha = study.plan.alpha
    unique = [r for r in rows if r.same_as is None]
    ps = [1.0 if r.p is None else r.p for r in unique]
    if study.plan.correction == "holm":
        rejected, levels = stats.holm(ps, alpha), holm_levels(ps, alpha)
    else:
        rejected, levels = [p < alpha for p in ps], [1 - alpha] * len(unique)
    m = len(unique)
    for r, rej, lev in zip(unique, rejected, levels):
        if r.p is None:
            continue  # counted, never separated, no verdict drawn on it
        r.apart, r.level = bool(rej), lev
        if r.kind == "welch" and conv.method == "t":
            x = list(study.values(r.spec.a, r.spec.measure).values())
            y = list(study.values(r.spec.b, r.spec.measure).values())
            strict = alpha / m if study.plan.correction == "holm" else alpha
            r.need = stats.seeds_needed(x, y, alpha=strict)
    by_label = {r.spec.label: r for r in unique}
    for r in rows:
        if r.same_as is not None:
            twin = by_label[r.same_as]
            r.apart, r.level, r.need = twin.apart, twin.level, twin.need
    return rows


def families(study, conv: Conventions) -> dict:
    out: dict = {}
    for s in study.plan.comparisons:
        out.setdefault(s.family, []).append(s)
    return {fam: read_family(study, specs, conv) for fam, specs in out.items()}


def took_word(r: Reading) -> str | None:
    """The manipulation check in one of three words, by the measure's better direction: "took" (moved from the
    start the better way, separated at the plan's level; for a neutral measure, moved either way), "wrong way"
    (moved the worse way), "did not move" (the interval includes no change); None when not read."""
    if r.d is None:
        return None
    if r.lo <= 0 <= r.hi:
        return "did not move"
    better = r.spec.measure.better
    if better == "neutral":
        return "took"
    return "took" if (r.lo > 0) == (better == "higher") else "wrong way"


# ---------------------------------------------------------------------------------------------------------------
# Hypotheses and their size rules (every verdict re-read under the alternatives: robust.py).
# ---------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Judgement:
    """A hypothesis read on its planned comparison: the verdict after the correction, and the size rule read on
    the interval the plan names (``rule_lo``, ``rule_hi``)."""
    verdict: str            # supported, contradicted, not supported, cannot be read
    size: str | None        # refuted, not refuted, or None (no size rule / not read)
    idle: bool | None       # within the plan's margin (equivalence), or None (no margin)
    rule_lo: float | None = None
    rule_hi: float | None = None
    rule_level: float | None = None

    def outcome(self) -> tuple:
        return (self.verdict, self.size, self.idle)


def rule_interval(r: Reading, which: str) -> tuple[float, float, float]:
    """``(lo, hi, confidence)`` of the interval a size rule reads: ``per-comparison`` (``1 - alpha``) or ``holm``
    (the level Holm's step-down tested this comparison at; the per-comparison one without a correction)."""
    conf = 1 - r.alpha if which == "per-comparison" or r.level is None else r.level
    lo, hi = r.interval_at(conf)
    return lo, hi, conf


def judge(h, r: Reading | None, which: str | None = None) -> Judgement:
    """Hypothesis ``h`` (predicting the comparison's ``a`` ahead, or ``b`` with ``predicts = "b"``) on reading ``r``:
    supported when separated after the correction in the predicted direction, contradicted when separated in the
    other; its size rule: refuted as an explanation of a difference of ``h.size`` (in the predicted direction)
    when the rule's interval excludes it, else not refuted; idle when the rule's interval lies within
    ``+-h.margin``."""
    if r is None or r.d is None or r.apart is None:
        return Judgement("cannot be read", None, None)
    sign = 1 if h.predicts == "a" else -1
    verdict = "not supported" if not r.apart else ("supported" if sign * r.d > 0 else "contradicted")
    if h.size is None and h.margin is None:
        return Judgement(verdict, None, None)
    lo, hi, conf = rule_interval(r, which or h.interval)
    far = hi if sign > 0 else -lo  # the largest difference in the predicted direction the interval allows
    size = None if h.size is None else ("refuted" if far < h.size else "not refuted")
    idle = None if h.margin is None else bool(-h.margin <= lo and hi <= h.margin)
    return Judgement(verdict, size, idle, lo, hi, conf)


# ---------------------------------------------------------------------------------------------------------------
# Curves: a measure against one setting (exploratory, issue 57)
# ---------------------------------------------------------------------------------------------------------------

@dataclass
class CurveReading:
    """A :class:`~grpo_lab.study.plan.Curve` as read: ``lines`` maps a line's label to its points
    ``(x, mean, lo, hi, n)`` in increasing x (lo and hi None where fewer than two seeds have finished)."""
    curve: object
    lines: dict
    arms: dict = field(default_factory=dict)  # a line's label -> the arm behind each of its points, in x order


def varied_settings(plan, arm_names, besides: str | None = None) -> tuple[dict, list]:
    """Each named arm's recorded settings (:func:`grpo_lab.compare.shared_settings` of its config) and the sorted
    names of those that differ between the arms, ``besides`` left out: what names a curve's lines and what a
    study's data output records of each arm."""
    from ..compare import shared_settings

    settings = {a: shared_settings(plan.arms[a].config) for a in arm_names}
    varied = sorted(k for k in set().union(*settings.values())
                    if k != besides and len({repr(s.get(k)) for s in settings.values()}) > 1)
    return settings, varied


def curve(study, cv) -> CurveReading:
    """One line per method and per combination of the arms' other settings (those that differ among the curve's
    arms, ``x`` aside; a line is named by the method and the settings where it departs from the most frequent
    value, e.g. "sign" and "sign, adam_beta2 0.95"): each point an arm's mean over its finished seeds with a
    t-interval at the plan's ``1 - alpha`` (n - 1 degrees of freedom: one arm's seeds, no difference taken)."""
    plan = study.plan
    settings, varied = varied_settings(plan, cv.arms, besides=cv.x)
    common = {}  # each varied setting's most frequent value: a line is named by where it departs from it
    for k in varied:
        vals = [repr(settings[a].get(k)) for a in cv.arms]
        common[k] = max(vals, key=vals.count)
    rows: dict = {}  # label -> [(x, arm, point)]: each point travels with its arm, so one sort orders both
    for a in cv.arms:
        arm = plan.arms[a]
        label = ", ".join([arm.method] + [f"{k} {settings[a][k]}" for k in varied
                                          if repr(settings[a].get(k)) != common[k]])
        v = list(study.values(a, cv.measure).values())
        if not v:
            continue
        if len(v) > 1:
            m, lo, hi = stats.mean_ci(v, 1 - plan.alpha)
        else:
            m, lo, hi = float(v[0]), None, None
        x = getattr(arm.config, cv.x)
        rows.setdefault(label, []).append((x, a, (x, float(m), lo, hi, len(v))))
    for r in rows.values():
        r.sort(key=lambda row: row[:2])  # by x, then by arm name where two arms share an x
    return CurveReading(cv, {k: [p for _, _, p in r] for k, r in rows.items()},
                        {k: [a for _, a, _ in r] for k, r in rows.items()})


# ---------------------------------------------------------------------------------------------------------------
# Correlations across runs (exploratory, issue 59)
# ---------------------------------------------------------------------------------------------------------------

@dataclass
class CorrelationReading:
    """A :class:`~grpo_lab.study.plan.Correlation` as read: ``points`` maps a method to its runs' ``(x, y)``;
    ``r`` is Pearson's correlation over every point with its ``1 - alpha`` interval (Fisher's z, ``scipy.stats.pearsonr``'s
    ``confidence_interval``), or ``why_not`` says why it cannot be read."""
    correlation: object
    points: dict
    n: int = 0
    r: float | None = None
    lo: float | None = None
    hi: float | None = None
    p: float | None = None
    why_not: str | None = None

    @property
    def r2(self) -> float | None:
        return None if self.r is None else self.r ** 2


def correlation(study, co) -> CorrelationReading:
    """Each finished run of the correlation's arms is a point (its ``x`` and ``y`` measures); Pearson's r over all
    of them. A run is one point whatever its arm, so the reading mixes the arms' differences with the differences
    within an arm: it describes, it does not say what causes what. Fisher's interval needs at least 4 runs."""
    from scipy import stats as sps

    points: dict = {}
    for a in co.arms:
        arm = study.plan.arms[a]
        xs, ys = study.values(a, co.x), study.values(a, co.y)
        for seed in sorted(set(xs) & set(ys)):
            points.setdefault(arm.method, []).append((float(xs[seed]), float(ys[seed])))
    out = CorrelationReading(co, points)
    flat = [pt for pts in points.values() for pt in pts]
    out.n = len(flat)
    if out.n < 4:
        out.why_not = f"{out.n} finished run(s): an interval for r needs at least 4"
        return out
    x, y = (np.asarray(v, dtype=float) for v in zip(*flat))
    for v, m in ((x, co.x), (y, co.y)):
        if not stats.spread(v):
            out.why_not = f"cannot tell: every run has the same {m.text} ({v[0]:.4g})"
            return out
    res = sps.pearsonr(x, y)
    ci = res.confidence_interval(1 - study.plan.alpha)
    out.r, out.p, out.lo, out.hi = float(res.statistic), float(res.pvalue), float(ci.low), float(ci.high)
    return out
