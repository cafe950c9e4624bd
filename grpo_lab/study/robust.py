"""Every planned verdict re-read under the reasonable alternatives (issue 80; the log scale and the seed mixture:
issue 102): the other df, the other interval for a size rule, a bootstrap over seeds × problems, a selection's
runner-up where its winner won by a near-tie, a log scale for the positive measures, and the study without the seeds
that did not take or lie far from their arm. A verdict a calibrated alternative changes is fragile; an alternative
whose simulated coverage misses the band (:mod:`grpo_lab.study.coverage`) is narrow and is shown, never counted.
Part of :mod:`grpo_lab.study`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import stats
from .plan import Spec
from .readings import Conventions, Reading, _t, families, judge, on_log_scale, took_word

MODIFIED_Z = 3.5  # Iglewicz and Hoaglin's cut for a seed far from its arm: 0.6745 |x − median| / MAD above it
FAR_MIN_SEEDS = 4  # with fewer seeds an arm's median absolute deviation says little
TOOK_Z = 1.959964 * math.sqrt(2)  # a seed took when it moved beyond this many of the start's sampling errors


@dataclass(frozen=True)
class Alternative:
    """A reasonable alternative every verdict is re-read under: another convention (``conv``: the df, the bootstrap,
    the log scale), the other interval for the size rules (``swap``), a selection's runner-up on validation where its
    winner won by a near-tie (``choose``: ``((selection, arm),)``), or the study without some runs (``drop``:
    ``((arm, seed), ...)``, the seeds :func:`mixed_seeds` names). ``narrow``: why its intervals are too narrow to
    call a verdict fragile by themselves (their simulated coverage is below the band,
    :func:`grpo_lab.study.coverage.narrow`), else None."""
    name: str
    conv: Conventions
    swap: bool = False
    choose: tuple = ()
    narrow: str | None = None
    drop: tuple = ()

    def applies(self, spec: Spec | None) -> bool:
        """Whether it reads a comparison differently at all: the log scale only a positive measure's, a re-choice
        only a comparison naming its selection, the dropped seeds only a comparison reading their arms."""
        if spec is None:
            return not (self.choose or self.drop or self.conv.scale == "log")
        if self.conv.scale == "log":
            return on_log_scale(spec)
        if self.choose:
            return _names_selection(spec, self.choose)
        if self.drop:
            return bool({a for a, _ in self.drop} & set(spec.arms))
        return True


def near_ties(study) -> list:
    """``[(selection, winner, runner-up, reading), ...]`` for each selection whose winner and runner-up are not
    separated on validation: ``winner − runner-up`` on the selection's measure, a t-interval over seeds at the
    plan's ``1 - alpha`` and df (no correction: a tie is what is looked for, so the narrower interval is the
    stricter test). The choice then rests on noise, and every planned comparison naming the selection is re-read
    with the runner-up (issue 80: study 5's P took AVSPO at 2.1e-4 over 4.5e-4 on 0.439 against 0.411)."""
    out = []
    plan = study.plan
    for name, sel in plan.selections.items():
        ranked = study.ranking(name)
        if len(ranked) < 2:
            continue
        (win, _), (run, _) = ranked[0], ranked[1]
        x = list(study.values(win, sel.by).values())
        y = list(study.values(run, sel.by).values())
        spec = Spec(win, run, f"{name}: {win} − {run}", sel.by, "selection", False)
        r = Reading(spec, len(x), len(y), kind="welch", alpha=plan.alpha)
        if len(x) < 2 or len(y) < 2 or (not stats.spread(x) and not stats.spread(y)):
            r.d = float(np.mean(x) - np.mean(y))  # no interval: only an exact tie is a tie
            if r.d == 0:
                out.append((name, win, run, r))
            continue
        _t(r, *stats.diff_parts(x, y, plan.df), plan.alpha)
        r.apart = not (r.lo <= 0 <= r.hi)
        if not r.apart:
            out.append((name, win, run, r))
    return out


def alternatives(study) -> list:
    """The :class:`Alternative` readings every verdict is re-read under: the other df convention; the other
    interval for the size rules (where the plan has any); a bootstrap over seeds × problems instead of seeds alone
    (narrow where its simulated coverage at the study's fewest seeds misses the band); for each selection won
    by a near-tie on validation (:func:`near_ties`), its runner-up; a log scale where a planned comparison reads a
    positive measure; and the study without the seeds :func:`mixed_seeds` names."""
    from .coverage import narrow

    plan = study.plan
    fewest = min(len(a.seeds) for a in plan.arms.values())
    other_df = "min-n" if plan.df == "welch" else "welch"
    out = [Alternative("Welch–Satterthwaite df" if other_df == "welch" else "min-n df (the smaller arm's n − 1)",
                       Conventions(df=other_df), narrow=narrow(f"t-{other_df}", fewest))]
    if any(h.size is not None or h.margin is not None for h in plan.hypotheses):
        out.append(Alternative("the other interval for the size rules", Conventions(df=plan.df), swap=True))
    out.append(Alternative("a bootstrap over seeds × problems", Conventions(df=plan.df, method="bootstrap"),
                           narrow=narrow("bootstrap", fewest)))
    for name, win, run, _ in near_ties(study):
        out.append(Alternative(f"{name}'s runner-up ({plan.arms[run].label})", Conventions(df=plan.df),
                               choose=((name, run),)))
    if any(on_log_scale(s) for s in plan.comparisons):
        out.append(Alternative("a log scale", Conventions(df=plan.df, scale="log"),
                               narrow=narrow("t-log", fewest) or narrow("t-log-level", fewest)))
    mixed = mixed_seeds(study)
    if mixed:
        out.append(Alternative("without the seeds of the seed mixture",
                               Conventions(df=plan.df), drop=tuple((a, s) for a, s, _ in mixed),
                               narrow=narrow("t-welch-without", fewest)))
    return out


SWAPPED = {"holm": "the size rule at the Holm level", "per-comparison": "the size rule per comparison"}


def verdict_key(r: Reading) -> tuple:
    return (r.apart, r.direction) if r.why_not is None else ("unread",)


@dataclass
class Robust:
    """One planned verdict (``kind`` "comparison": ``what`` a :class:`Reading`; "hypothesis": ``(h, Judgement)``)
    re-read under each alternative (``got``: alternative name -> reading or judgement), the alternatives that
    change it (``flips``: calibrated ones, which make it fragile) and the narrow ones that change it (``narrow``:
    shown, never a verdict's fragility)."""
    kind: str
    what: object
    got: dict
    flips: list
    narrow: list

    def __iter__(self):  # (kind, what, got, flips), as the rows were tuples before issue 80
        return iter((self.kind, self.what, self.got, self.flips))

    def __getitem__(self, i):
        return tuple(self)[i]


def robustness(study) -> list:
    """Every planned verdict and hypothesis re-read under each :class:`Alternative`: ``[Robust, ...]``."""
    if not study.complete:
        return []
    plan = study.plan
    base = study.readings
    alts = []
    for alt in alternatives(study):
        if alt.swap:
            fams, who = base, study
        elif alt.choose or alt.drop:
            who = study.variant(dict(alt.choose)) if alt.choose else study.without(alt.drop)
            fams = who.readings
        else:
            fams, who = families(study, alt.conv), study
        alts.append((alt, fams, who))
    named = {alt.name: alt for alt, _, _ in alts}

    def split(got: dict, changed) -> tuple:
        names = [n for n, x in got.items() if changed(x)]
        return [n for n in names if not named[n].narrow], [n for n in names if named[n].narrow]

    rows = []
    for fam, readings in base.items():
        for i, r in enumerate(readings):
            if r.same_as is not None:
                continue
            got = {alt.name: fams[fam][i] for alt, fams, _ in alts if not alt.swap and alt.applies(r.spec)}
            flips, narrow_ = split(got, lambda x: verdict_key(x) != verdict_key(r) and x.why_not is None)
            rows.append(Robust("comparison", r, got, flips, narrow_))
    for h in plan.hypotheses:
        r = study.reading(h.test)
        j = judge(h, r)
        got = {}
        for alt, fams, who in alts:
            if alt.swap:
                if h.size is None and h.margin is None:
                    continue
                other = "holm" if h.interval == "per-comparison" else "per-comparison"
                got[SWAPPED[other]] = judge(h, r, other)
                named.setdefault(SWAPPED[other], alt)
            elif not alt.applies(r.spec if r is not None else None):
                continue
            else:
                twin = next((x for rows_ in fams.values() for x in rows_ if x.spec.label == h.test), None)
                got[alt.name] = judge(h, twin)
        flips, narrow_ = split(got, lambda x: x.outcome() != j.outcome() and x.verdict != "cannot be read")
        rows.append(Robust("hypothesis", (h, j), got, flips, narrow_))
    return rows


def _names_selection(spec: Spec, choose: tuple) -> bool:
    """Whether a comparison names one of the selections an alternative re-chooses."""
    return any(name in (spec.a, spec.b, spec.c, spec.d) for name, _ in choose)


def mixed_seeds(study) -> list:
    """``[(arm, seed, why), ...]``: the seeds whose runs may come from another distribution than their arm's
    (issue 102), declared here before any study read them:

    - **did not take**: in an arm whose manipulation check took, a seed that did not move its manipulation measure
      from the start in the better direction (either way for a neutral measure) by more than ``TOOK_Z`` of the
      start's sampling errors (1.96 · √2: the seed's own evaluation is as noisy as the start's);
    - **far from its arm**: on a measure a planned comparison reads, a seed whose modified z-score
      ``0.6745 |x − median| / MAD`` exceeds :data:`MODIFIED_Z` (Iglewicz and Hoaglin), in an arm of at least
      :data:`FAR_MIN_SEEDS` seeds with a nonzero MAD. Where the measure comes from an evaluation, the MAD is at least
      what one evaluation's sampling error gives (``0.6745 ×`` the start's standard error): seeds closer together
      than that are not told apart by their evaluations, and a seed is not far for lying outside a spread the
      evaluation cannot resolve.

    With such a seed in an arm a t-interval's coverage falls below its nominal level (one seed in six that did not
    take: ``t-welch-mixture`` in the coverage table), so the report says the nominal level is in doubt and the
    comparisons are re-read without them."""
    out: dict = {}
    for name, meas, m in study.manipulation():
        if took_word(m) != "took":
            continue
        st = study.start(name, meas)
        if st is None or not st[1] > 0:
            continue
        better = meas.better
        for seed, v in study.values(name, meas).items():
            move = (v - st[0]) * (-1 if better == "lower" else 1)
            if (abs(move) if better == "neutral" else move) <= TOOK_Z * st[1]:
                out[(name, seed)] = (f"did not take: {meas.text} {v:.3f} against the start's {st[0]:.3f} "
                                     f"(± {1.959964 * st[1]:.3f})")
    seen = set()
    for spec in study.plan.comparisons:
        for side in spec.arms:
            name = study.resolve(side)
            if name is None or (name, spec.measure.text) in seen:
                continue
            seen.add((name, spec.measure.text))
            vals = study.values(name, spec.measure)
            if len(vals) < FAR_MIN_SEEDS:
                continue
            x = np.asarray(list(vals.values()), dtype=float)
            med = float(np.median(x))
            st = study.start(name, spec.measure)  # seeds cannot be told apart more finely than one evaluation's noise
            mad = max(float(np.median(np.abs(x - med))), 0.6745 * (st[1] if st else 0.0))
            if not mad > 0:
                continue
            for seed, v in vals.items():
                z = 0.6745 * abs(v - med) / mad
                if z > MODIFIED_Z and (name, seed) not in out:
                    out[(name, seed)] = (f"far from its arm: {spec.measure.text} {v:.3g} against the arm's median "
                                         f"{med:.3g} (modified z {z:.1f})")
    return [(a, s, why) for (a, s), why in sorted(out.items(), key=lambda kv: (kv[0][0], kv[0][1]))]
