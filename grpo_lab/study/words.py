"""The report's words: every verdict, bound and sentence drawn from the unrounded numbers. Part of
:mod:`grpo_lab.study`."""

from __future__ import annotations

from .data import Reading, Study, _fmt
from .readings import judge


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
    if r.apart:  # the side from d's sign: separation is read at the plan's alpha, which need not be 95%
        up = r.direction == "a"
        if r.spec.b == "start":
            return "up from the start" if up else "down from the start"
        if r.spec.c is not None:
            return f"{a} exceeds {b}" if up else f"{b} exceeds {a}"
        return f"{a} ahead" if up else f"{b} ahead"
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


def level(r: Reading) -> str:
    """The per-comparison level a reading's interval is at, ``1 - alpha`` ("95%")."""
    return f"{100 * (1 - r.alpha):.4g}%"


def how(study: Study, r: Reading) -> str:
    """How a reading was made, naming its convention: Welch's standard error with which degrees of freedom."""
    df = "Welch–Satterthwaite df" if study.conventions.df == "welch" else "min-n df"
    return {"welch": f"Welch's standard error, {df}", "paired": "paired by seed, n − 1 df",
            "start": "with the start's sampling error, n − 1 df",
            "interaction": f"a difference of differences, Welch's standard error over the four arms, {df}"}[r.kind]


def reading_line(study: Study, r: Reading) -> str:
    if r.d is None:
        return f"**{r.spec.label}** ({r.spec.measure.text}): {r.why_not}."
    text = (f"**{r.spec.label}** ({r.spec.measure.text}): {interval(r)} ({how(study, r)}, p = {r.p:.3g}); "
            f"{verdict_word(study, r)}; {bound(study, r)} ({level(r)}, before correction).")
    if r.same_as:
        text += (f" The same arms as **{r.same_as}** once the selections chose: one test, counted once by the "
                 "correction.")
    if r.need is not None and r.apart is False:
        m = len([x for x in study.readings[r.spec.family] if not x.same_as])
        strict = f"α/{m}" if study.plan.correction == "holm" and m > 1 else "α"
        text += (f" If the true difference were the {_fmt(r.d)} measured, about {r.need} seeds per arm would "
                 f"separate it with 80% power at {strict}.")
    elif r.apart is False and r.kind == "welch" and r.need is None:
        text += " No seed count up to 1,000 would separate a difference this size."
    cw = claim_words(study, r)
    return text + (" " + cw if cw else "")


def headline(study: Study, brief: bool = False) -> str:
    """The verdict in the sentences a newcomer reads first: each hypothesis judged by the plan's rule; how many
    planned comparisons separated after the plan's correction and which way, and which did not (their bounds
    follow); a manipulation that did not move its measure or moved it the wrong way; which verdicts are fragile
    (an alternative convention flips them) or that all are firm. ``brief``: the same findings in fewer words, for
    a page short of room (the README)."""
    if not study.complete:
        return (f"In progress: {study.done} of {study.total} runs finished; no verdict yet (the plan reads its "
                "comparisons when every run has finished).")
    rows = study.planned
    unread = [r for r in rows if r.d is None]
    if unread:  # a family is read together: one unreadable comparison leaves the others without a correction
        return ("No verdict: every run finished, but the plan reads its comparisons together and "
                + "; ".join(f"{r.spec.label} cannot be read ({r.why_not})" for r in unread) + ".")
    read = [r for r in rows if r.d is not None]
    apart = [r for r in read if r.apart]
    words = []
    for r in apart:
        words.append(f"{r.spec.label}: {verdict_word(study, r)}")
    corr = (f"Holm's correction at family-wise α = {study.plan.alpha:g}" if study.plan.correction == "holm" else
            f"no correction, each at α = {study.plan.alpha:g}")
    twins = [r for r in rows if r.same_as]
    text = (f"{len(apart)} of {len(rows)} planned comparisons separated ({corr}"
            + (f"; {len(twins)} read the same arms as another and counted once" if twins else "") + ")"
            + (": " + "; ".join(words) if words else "") + ".")
    nulls = [r for r in read if not r.apart]
    if nulls and not brief:
        text += (f" {'The other' if apart else 'All'} {len(nulls)} {'is' if len(nulls) == 1 else 'are'} "
                 "not separated: each is read as the differences it excludes, not as no difference.")
    moved = {"did not move": [], "wrong way": []}
    for name, _, r in study.manipulation():
        word = took_word(r)
        if word in moved:
            moved[word].append(study.plan.arms[name].label)
    if moved["did not move"]:
        text += (f" The treatment did not measurably move its measure in {', '.join(moved['did not move'])} (the "
                 "manipulation check)" + ("." if brief else ": a null there says little about the treatment's effect."))
    if moved["wrong way"]:
        text += (f" The treatment moved its measure down from the start in {', '.join(moved['wrong way'])} (the "
                 "manipulation check)" + ("." if brief else ": it took, the wrong way."))
    return hypotheses_words(study, brief) + text + fragility_words(study, brief)


def took_word(r: Reading) -> str | None:
    """The manipulation check in one of three words: "took" (up from the start, separated at the plan's level),
    "wrong way" (down, separated), "did not move" (the interval includes no change); None when not read."""
    if r.d is None:
        return None
    return "took" if r.lo > 0 else ("wrong way" if r.hi < 0 else "did not move")


# ---------------------------------------------------------------------------------------------------------------
# Hypotheses and robustness: the plan's rules, drawn by the engine; each verdict re-read under the alternatives.
# ---------------------------------------------------------------------------------------------------------------

def rule_words(h, j) -> str:
    """Which interval a size rule read, at which level, in words."""
    pct = f"{100 * j.rule_level:.4g}%"
    return f"the per-comparison {pct} interval" if h.interval == "per-comparison" else \
        f"the {pct} interval (the level Holm's step-down tests it at)"


def hypothesis_line(study: Study, h, j=None, r=None) -> str:
    """One hypothesis, judged by the plan's rule (:func:`grpo_lab.study.readings.judge`), in a sentence."""
    r = r if r is not None else study.reading(h.test)
    j = j if j is not None else judge(h, r)
    name = f"{h.name}" + (f" ({h.says})" if h.says else "")
    if j.verdict == "cannot be read":
        return f"{name} cannot be read yet ({r.why_not if r is not None and r.why_not else 'not every run finished'})."
    corr = "after Holm" if study.plan.correction == "holm" else f"at α = {study.plan.alpha:g}"
    text = (f"{name} **{j.verdict}**: {r.spec.label} {interval(r)}, "
            + ("separated" if r.apart else "not separated") + f" {corr}")
    if j.size is not None:
        size = h.size if h.predicts == "a" else -h.size
        side = "above" if h.predicts == "a" else "below"
        far = j.rule_hi if h.predicts == "a" else j.rule_lo
        where = f"{rule_words(h, j)} [{_fmt(j.rule_lo)}, {_fmt(j.rule_hi)}]"
        text += (f"; {where} excludes differences {side} {size:+.2f}: **refuted as an explanation of a difference of "
                 f"{size:+.2f}**" if j.size == "refuted" else
                 f"; {where} still allows {_fmt(far)}: **not refuted** as an explanation of a difference of "
                 f"{size:+.2f}")
    if j.idle is not None:
        text += (f"; within ±{h.margin:g}: **idle** at the plan's margin" if j.idle else
                 f"; not within ±{h.margin:g}: not shown idle")
    return text + "."


def hypothesis_brief(study: Study, h) -> str:
    """A hypothesis's judgement in a few words: "H1 not supported; refuted as an explanation of +0.10"."""
    r = study.reading(h.test)
    j = judge(h, r)
    name = f"{h.name} ({h.says})" if h.says else h.name
    text = f"{name} **{j.verdict}** ({interval(r)})" if r is not None and r.d is not None else f"{name} {j.verdict}"
    if j.size is not None:
        size = h.size if h.predicts == "a" else -h.size
        text += (f", {'refuted' if j.size == 'refuted' else 'not refuted'} as an explanation of {size:+.2f} "
                 f"({'per comparison' if h.interval == 'per-comparison' else 'at the Holm level'})")
    if j.idle is not None:
        text += f", {'idle' if j.idle else 'not shown idle'} within ±{h.margin:g}"
    return text


def hypotheses_words(study: Study, brief: bool = False) -> str:
    """The plan's hypotheses, each judged, before the count of separated comparisons ("" without hypotheses)."""
    if not study.plan.hypotheses:
        return ""
    if brief:
        return "; ".join(hypothesis_brief(study, h) for h in study.plan.hypotheses) + ". "
    return " ".join(hypothesis_line(study, h) for h in study.plan.hypotheses) + " "


def outcome_words(study: Study, kind: str, outcome) -> str:
    """A robustness row's outcome in a few words."""
    if kind == "comparison":
        if outcome.why_not is not None:
            return f"not read ({outcome.why_not})"
        if not outcome.apart:
            return "not separated"
        return f"separated: {verdict_word(study, outcome)}"
    parts = [outcome.verdict]
    if outcome.size is not None:
        parts.append("size: " + outcome.size)
    if outcome.idle is not None:
        parts.append("idle" if outcome.idle else "not idle")
    return "; ".join(parts)


def change_words(study: Study, kind: str, mine, alt) -> str:
    """What an alternative changes in one verdict: "not refuted instead of refuted as an explanation of the size"."""
    if kind == "comparison":
        return f"{outcome_words(study, kind, alt)} instead of {outcome_words(study, kind, mine)}"
    bits = []
    if alt.verdict != mine.verdict:
        bits.append(f"{alt.verdict} instead of {mine.verdict}")
    if alt.size != mine.size:
        bits.append(f"{alt.size} instead of {mine.size} as an explanation of its size")
    if alt.idle != mine.idle:
        bits.append(("idle" if alt.idle else "not idle") + " instead of " + ("idle" if mine.idle else "not idle"))
    return "; ".join(bits)


def fragility_words(study: Study, brief: bool = False) -> str:
    """" Fragile: ..." naming each verdict an alternative flips, the alternative and what it changes, or
    " Firm: ..." when none does (once every run has finished). ``brief``: the verdicts and alternatives only."""
    rows = study.robust
    if not rows:
        return ""
    flipped = []
    for kind, what, got, flips in rows:
        if flips:
            name, mine = (what.spec.label, what) if kind == "comparison" else (what[0].name, what[1])
            if brief:
                flipped.append(f"{name} (under {' and under '.join(flips)})")
            else:
                flipped.append(f"{name} reads " + " and ".join(
                    f"{change_words(study, kind, mine, got[a])} under {a}" for a in flips))
    if not flipped:
        return (" **Firm**: every verdict above holds under the reasonable alternatives"
                + ("." if brief else " (the other degrees of freedom, the other interval for the size rules, a "
                   "bootstrap over seeds × problems)."))
    return (" **Fragile**: " + "; ".join(flipped) + (" (an alternative convention flips it; see the report)." if brief
                                                     else " (the section \"Does the verdict depend on a convention?\" "
                                                     "has each reading)."))


def robustness_section(study: Study) -> list:
    """The report's section: every planned verdict and hypothesis under the plan's conventions and under each
    alternative; a verdict any alternative changes is fragile."""
    rows = study.robust
    if not rows:
        return []
    alts = list(dict.fromkeys(name for _, _, got, _ in rows for name in got))
    table = []
    for kind, what, got, flips in rows:
        if kind == "comparison":
            name, plan_out = what.spec.label, outcome_words(study, kind, what)
        else:
            name, plan_out = f"{what[0].name} (on {what[0].test})", outcome_words(study, kind, what[1])
        cells = []
        for a in alts:
            if a not in got:
                cells.append("—")
                continue
            x = got[a]
            word = outcome_words(study, kind, x)
            if kind == "comparison" and x.d is not None:
                word += f" {interval(x)}"
            elif kind == "hypothesis" and x.rule_lo is not None:
                word += f" [{_fmt(x.rule_lo)}, {_fmt(x.rule_hi)}]"
            cells.append(word)
        table.append([name, plan_out, *cells, "**fragile**" if flips else "firm"])
    from ..report import md_table

    return ["## Does the verdict depend on a convention?", "",
            f"Each planned verdict as the plan reads it ({study.conventions.words()}; the correction and each size "
            "rule's interval as declared), and re-read under the reasonable alternatives. A verdict that changes "
            "under any of them is **fragile**: the data alone do not settle it. The alternatives: the other degrees "
            "of freedom; the other interval for a size rule (per-comparison, or the level Holm's step-down tests "
            "that comparison at); a percentile bootstrap that resamples the evaluation's problems as well as the "
            "seeds. The bootstrap covers the problems' noise, which the t-intervals leave out, but with few seeds it "
            "understates their spread (it divides by n and has no t quantile), so it is often the narrowest: a "
            "verdict that flips only under it is the weakest kind of fragility.", "",
            *md_table(["verdict", "as planned", *alts, "reading"], table), ""]


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
            + f" ({', '.join(measures)}; {'/'.join(map(str, seeds))} seeds per arm; intervals at "
            f"{100 * (1 - study.plan.alpha):.4g}% before "
            "correction).")


def held_out_line(study: Study) -> list:
    """The overlap between each evaluation and its training pool: "held-out" only when disjoint; the draws, the
    distinct problems and their effective number (Kish), and near-duplicates where the task has a canonical form."""
    lines = []
    for arms, task, o, err in study.overlap():
        who = ", ".join(arms)
        if err:
            lines.append(f"- {who}, evaluated on `{task}`: overlap not computed here ({err}).")
            continue
        size = (f"{o['draws']} evaluation draws of {o['distinct']} distinct problems (their effective number, Kish's "
                f"(Σw)²/Σw² over how often each was drawn: {o['effective']:.0f})")
        near = (f"; {o['near']} of them are near-duplicates of training problems (the same problem in the task's "
                f"canonical form, e.g. a commuted sum: {o['near_draws']} draws)" if o.get("near") else "")
        if o["in_training"] == 0:
            lines.append(f"- {who}, evaluated on `{task}`: **held-out** (exact text): {size}, none in the training "
                         f"pool ({o['pool']} distinct prompts){near}.")
        else:
            lines.append(f"- {who}, evaluated on `{task}`: **not held-out**: {size}, {o['in_training']} of them in "
                         f"the training pool ({o['pool']} distinct prompts){near}; the measure is the skill on the "
                         "task's problems, " + ("all seen in training." if o["in_training"] == o["distinct"]
                                                 else "some seen in training."))
    return lines
