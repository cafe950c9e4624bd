"""The report's words: every verdict, bound and sentence drawn from the unrounded numbers. Part of
:mod:`grpo_lab.study`."""

from __future__ import annotations

import math

from .coverage import BAND, NOMINAL
from .data import Reading, Study, _fmt
from .readings import judge, silent_sides, took_word  # noqa: F401 (took_word: re-exported)


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
    if r.spec.level is not None:
        return label(study, r.spec.a), r.spec.b
    return label(study, r.spec.a), label(study, r.spec.b)


def interval(r: Reading) -> str:
    return f"{_fmt(r.d)} [{_fmt(r.lo)}, {_fmt(r.hi)}]"


def verdict_word(study: Study, r: Reading) -> str:
    """The plan's reading of one planned comparison (after its family's correction), or why there is none. The
    direction word follows the measure's better direction (:attr:`grpo_lab.study.measures.Measure.better`): "X
    ahead" only where higher is better, "X ahead: lower by …" where lower is, "X higher" where neither is."""
    a, b = _names(study, r)
    if r.why_not:
        return r.why_not
    if r.apart is None:
        return "not read yet (the plan reads its comparisons when every run has finished)"
    if r.apart:  # the side from d's sign: separation is read at the plan's alpha, which need not be 95%
        up = r.direction == "a"
        better = r.spec.measure.better
        if r.spec.level is not None:
            way = f"{a} above {b}" if up else f"{a} below {b}"
            if better == "neutral":
                return way
            good = up == (better == "higher")
            return way + f", {'the better' if good else 'the worse'} side ({better} is better here)"
        if r.spec.b == "start":
            way = "up from the start" if up else "down from the start"
            if better == "neutral":
                return way
            good = up == (better == "higher")
            return way + ("" if better == "higher" and good else
                          f", {'the better' if good else 'the worse'} direction ({better} is better here)")
        if r.spec.c is not None:
            return f"{a} exceeds {b}" if up else f"{b} exceeds {a}"
        if better == "neutral":
            return f"{a} higher" if up else f"{b} higher"
        if better == "higher":
            return f"{a} ahead" if up else f"{b} ahead"
        winner = b if up else a
        return f"{winner} ahead: lower by {abs(r.d):.3f} (lower is better here)"
    m = study.plan.margin
    if r.spec.level is not None:
        return f"not separated from {b}" + ("" if m is None else (
            f", and within ±{m:g} of it: equivalent at the plan's margin" if -m <= r.lo and r.hi <= m else
            f", and not within ±{m:g} of it: undecided at this size"))
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


def reach(r: Reading) -> tuple[float, float] | None:
    """``(lowest, highest)``: what a reading's difference can be at all; None for a measure without bounds. For a
    fraction against a fixed value (the start's evaluation, a plan's level ``v``), ``[-v, 1 - v]`` (a change of
    pass@1 from a start of 0.15 lies in [-0.15, +0.85]; the start is read at its own estimate, whose sampling error
    is small beside a change's); between two arms, ``±1``; a difference of two differences, ``±2``
    (:func:`largest_difference`). A measure with only a floor ``f`` (an effective rank is at least 0) against a
    fixed value ``v``: ``[f - v, +inf)`` (study 6's rank at G = 4 against 2 cannot lie 161 below it); between two
    arms it has no bound."""
    top = largest_difference(r)
    if top is None:
        floor = r.spec.measure.metric.floor
        return (floor - r.mean_b, math.inf) if floor is not None and against_fixed(r) else None
    if against_fixed(r):
        return -r.mean_b, 1.0 - r.mean_b
    return -top, top


def against_fixed(r: Reading) -> bool:
    """Whether a reading compares one arm with a fixed value (the start's evaluation or a plan's level), not with
    another arm nor as a difference of differences: the case in which that value sets how far a fraction can move
    (:func:`reach`)."""
    return r.spec.c is None and (r.spec.b == "start" or r.spec.level is not None) and r.mean_b is not None


def past_range(r: Reading) -> tuple[bool, bool]:
    """``(above, below)``: whether each side of a reading's interval reaches past what its difference can be
    (:func:`reach`); such a side excludes nothing. ``(False, False)`` for a measure without bounds."""
    span = reach(r)
    return (span is not None and r.hi >= span[1], span is not None and r.lo <= span[0])


def _sides(study: Study, r: Reading) -> tuple[str, str]:
    """``(above, below)``: what a difference above the interval's top and below its bottom would mean, in the
    measure's direction words ("a ahead by more than" where higher is better, "b ahead (lower) by more than" where
    lower is, "a higher by more than" where neither is)."""
    a, b = _names(study, r)
    hi, lo = f"{r.hi:.3f}", f"{-r.lo:.3f}"
    better = r.spec.measure.better
    if r.spec.level is not None:  # issue 107: name the quantity, not the arm ("update-erank-change of grpo, G = 16")
        q = f"{r.spec.measure.text} of {a}"
        return f"{q} above {b} by more than {hi}", f"{q} below {b} by more than {lo}"
    if r.spec.b == "start":
        if better == "higher":
            return f"a gain larger than {hi}", f"a loss larger than {lo}"
        return f"a rise larger than {hi}", f"a fall larger than {lo}"
    if r.spec.c is not None:
        return f"{a} exceeding {b} by more than {hi}", f"{b} exceeding {a} by more than {lo}"
    if better == "higher":
        return f"{a} ahead by more than {hi}", f"{b} ahead by more than {lo}"
    if better == "lower":
        return f"{b} ahead (lower) by more than {hi}", f"{a} ahead (lower) by more than {lo}"
    return f"{a} higher by more than {hi}", f"{b} higher by more than {lo}"


def bound(study: Study, r: Reading) -> str:
    """What a reading excludes, in words (the null stated as the bound it sets), from the unrounded interval; a side
    that reaches past what the difference can be at all (:func:`reach`: a fraction's range, or a floor against a
    fixed value) excludes nothing."""
    if r.d is None:
        return ""
    gain, loss = _sides(study, r)
    above, below = past_range(r)
    if above or below:
        top, (low, high) = largest_difference(r), reach(r)
        if against_fixed(r):  # the value sets how far a fraction (or a measure with a floor) can move
            frm = f"a change from the start's {r.mean_b:.3f}" if r.spec.b == "start" else f"a difference from {r.mean_b:g}"
            past = (f"the interval reaches past [{low:+.3f}, {high:+.3f}], all {frm} can be" if math.isfinite(high)
                    else f"the interval reaches below {low:+.3f}, the least {frm} can be: "
                         f"{r.spec.measure.text} is at least {r.spec.measure.metric.floor:g}")
        else:
            what = "a difference of fractions" if top == 1 else "a difference of two differences of fractions"
            past = f"the interval reaches past ±{top:g}, the most {what} can be"
        if above and below:
            return f"it excludes nothing yet ({past})"
        if above and r.lo > 0:  # above 0, and its top past reach: no bound on the gain (nor a "loss" of −lo)
            return f"its interval lies above 0; above it nothing is excluded ({past})"
        if below and r.hi < 0:
            return f"its interval lies below 0; below it nothing is excluded ({past})"
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
    return f"The claim {c:+.3f} lies outside the interval: these runs exclude it at {level(r)} (per comparison)."


def level(r: Reading) -> str:
    """The per-comparison level a reading's interval is at, ``1 - alpha`` ("95%")."""
    return f"{100 * (1 - r.alpha):.4g}%"


def how(study: Study, r: Reading) -> str:
    """How a reading was made, naming its convention: Welch's standard error with which degrees of freedom."""
    df = "Welch–Satterthwaite df" if study.conventions.df == "welch" else "min-n df"
    return {"welch": f"Welch's standard error, {df}", "paired": "paired by seed, n − 1 df",
            "start": "with the start's sampling error, n − 1 df",
            "level": f"the arm's seeds against {r.spec.b}, a one-sample t-interval, n − 1 df",
            "interaction": f"a difference of differences, Welch's standard error over the four arms, {df}"}[r.kind]


def left_out(study: Study, r: Reading) -> str:
    """The finished runs a reading leaves out because its measure has no value for them by the measure's own
    definition (:class:`grpo_lab.study.measures.NoReading`: study 6's rank probe over an end window in which every
    group was degenerate), named per arm with what is left, so that the n behind an interval is never larger on
    the page than in the arithmetic; "" when none is left out."""
    parts = []
    for name, gone in silent_sides(study, r.spec).items():
        n = len(study.data[name].runs)
        seeds = ", ".join(map(str, sorted(gone)))
        parts.append(f"{study.plan.arms[name].label} is read on {n - len(gone)} of its {n} finished runs (seed"
                     f"{'s' if len(gone) > 1 else ''} {seeds} left out: no reading of {r.spec.measure.text} by its "
                     "definition, named under its table)")
    text = "; ".join(parts) + "." if parts else ""
    if r.counted_unread:
        text += (" The correction counts it as p = 1: it never separates, no verdict is drawn on it, and the other "
                 "planned comparisons keep the family's declared size.")
    return text


def reading_line(study: Study, r: Reading) -> str:
    out = left_out(study, r)
    if r.d is None:
        return f"**{r.spec.label}** ({r.spec.measure.text}): {r.why_not}." + (" " + out if out else "")
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
    return text + (" " + cw if cw else "") + (" " + out if out else "")


def headline(study: Study, brief: bool = False) -> str:
    """The verdict in the sentences a newcomer reads first: each hypothesis judged by the plan's rule; how many
    planned comparisons separated after the plan's correction and which way, and which did not (their bounds
    follow); a manipulation that did not move its measure or moved it the wrong way; which verdicts are fragile
    (an alternative convention flips them) or that all are firm. ``brief``: the same findings in fewer words, for
    a page short of room (the README), which follows :func:`lead`: the hypotheses and the separated comparisons
    are then left to the lead, the count, the manipulation check and the fragility stay."""
    if not study.complete:
        return (f"In progress: {study.done} of {study.total} runs finished; no verdict yet (the plan reads its "
                "comparisons when every run has finished).")
    rows = study.planned
    unread = [r for r in rows if r.d is None and not r.counted_unread]
    if unread:  # a family is read together: one unreadable comparison leaves the others without a correction
        return ("No verdict: every run finished, but the plan reads its comparisons together and "
                + "; ".join(f"{r.spec.label} cannot be read ({r.why_not})" for r in unread) + ".")
    counted = [r for r in rows if r.counted_unread]
    read = [r for r in rows if r.d is not None]
    apart = [r for r in read if r.apart]
    led = brief and bool(lead(study))  # the brief form follows the plain lead, which names each verdict already
    words = [] if led else [f"{r.spec.label}: {verdict_word(study, r)}" for r in apart]
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
    if counted:
        text += (" " + "; ".join(f"{r.spec.label} cannot be read ({r.why_not})" for r in counted)
                 + ": its arm has too few runs with a reading of its measure (the others are left out by the "
                 f"measure's definition), and the correction counts {'it' if len(counted) == 1 else 'each'} as "
                 "p = 1, a comparison that did not separate.")
    moved = {"did not move": [], "wrong way": []}
    way = {}
    for name, _, r in study.manipulation():
        word = took_word(r)
        if word in moved:
            moved[word].append(name)
            way[name] = "down" if r.hi < 0 else "up"
    labels = lambda names: ", ".join(study.plan.arms[n].label for n in names)  # noqa: E731
    if moved["did not move"]:
        text += (f" The treatment did not measurably move its measure in {labels(moved['did not move'])} (the "
                 "manipulation check)")
        idle = set(moved["did not move"])
        nulls_there = [r for r in nulls if idle & {study.resolve(x) for x in (r.spec.a, r.spec.b, r.spec.c, r.spec.d)
                                                   if x not in (None, "start")}]
        text += (f": a null that involves {'it' if len(idle) == 1 else 'them'} says little about the treatment's "
                 "effect." if nulls_there and not brief else ".")
    if moved["wrong way"]:
        ways = sorted({way[n] for n in moved["wrong way"]})
        text += (f" The treatment moved its measure the wrong way ({' or '.join(ways)} from the start) in "
                 f"{labels(moved['wrong way'])} (the manipulation check).")
    return ("" if led else hypotheses_words(study, brief)) + text + fragility_words(study, brief)


def lead(study: Study) -> str:
    """The study's verdict in one plain sentence a newcomer can read first, above the precise verdict line
    (issue 80): each hypothesis as yes, no or not shown, with the difference and its direction in the measure's
    own words (arms named by what they are, a selection by the arm it chose); without hypotheses, each planned
    comparison. Drawn from the same readings as every other line, so it changes when the data do."""
    if not study.complete or any(r.d is None and not r.counted_unread for r in study.planned):
        return ""
    parts = []
    tested = set()
    for h in study.plan.hypotheses:
        r = study.reading(h.test)
        j = judge(h, r)
        tested.add(h.test)
        what = f"{h.name} ({h.says})" if h.says else h.name
        if r is not None and r.counted_unread:
            parts.append(f"{what}: cannot be read (too few runs with a reading)")
        elif j.verdict == "supported":
            parts.append(f"{what}: yes ({_plain(study, r)})")
        elif j.verdict == "contradicted":
            parts.append(f"{what}: no, the opposite ({_plain(study, r)})")
        else:
            size = ""
            if j.size is not None:
                gap = h.size if h.predicts == "a" else -h.size
                size = f"; {gap:+.2f} is {'ruled out' if j.size == 'refuted' else 'not ruled out'}"
            parts.append(f"{what}: not shown ({_plain(study, r, named=False)}{size})")
    rest = [r for r in study.planned if r.spec.label not in tested and not r.same_as]
    parts += [f"{r.spec.label}: {_plain(study, r)}" for r in rest if r.apart]
    parts += [f"{r.spec.label}: cannot be read (too few runs with a reading)" for r in rest if r.counted_unread]
    nulls = [r for r in rest if r.apart is False]
    if nulls:
        parts.append(("not told apart: " if parts else "no planned comparison told its arms apart: ")
                     + ", ".join(f"{r.spec.label} ({_fmt(r.d)})" for r in nulls))
    return "In short: " + "".join(f"{c}; " for c in caveats(study)) + "; ".join(parts) + "."


def caveats(study: Study) -> list:
    """What the lead must say before any difference (issue 107: a lead that cannot mislead): that no trained arm
    moved from its start, or which did not (the manipulation check), and which verdicts an alternative reading
    changes (fragile)."""
    out = []
    checks = [(name, took_word(m)) for name, _, m in study.manipulation() if m.d is not None]
    still = [study.plan.arms[n].label for n, w in checks if w == "did not move"]
    if checks and len(still) == len(checks):
        who = "neither arm" if len(checks) == 2 else ("the arm" if len(checks) == 1 else "no arm")
        out.append(f"{who} measurably moved from its start (the manipulation check), so no comparison here can "
                   "show a treatment's effect")
    elif still:
        out.append(f"{', '.join(still)} did not measurably move from {'its' if len(still) == 1 else 'their'} start "
                   "(the manipulation check)")
    hyps = {row.what[0].test: row.what[0].name for row in study.robust if row.kind == "hypothesis" and row.flips}
    flipped = [row.what[0].name if row.kind == "hypothesis" else row.what.spec.label for row in study.robust
               if row.flips and not (row.kind == "comparison" and row.what.spec.label in hyps)]
    if flipped:  # a hypothesis and its comparison are named once, by the hypothesis
        out.append(f"fragile: an alternative reading changes {', '.join(dict.fromkeys(flipped))}")
    return out


def _short(study: Study, name: str) -> str:
    """An arm as the lead names it: its label; a selection by the arm it chose; "the start"."""
    if name == "start":
        return "the start"
    chosen = study.resolve(name)
    return study.plan.arms[chosen].label if chosen in study.plan.arms else name


def _plain(study: Study, r: Reading, named: bool = True) -> str:
    """A reading in plain words: which side is ahead (or higher) by how much, or that the two were not told apart
    (``named``: with the two sides' names; a hypothesis's clause, whose words name them, goes without)."""
    a, b = _short(study, r.spec.a), _short(study, r.spec.b)
    if r.spec.c is not None:
        a, b = f"({a} − {b})", f"({_short(study, r.spec.c)} − {_short(study, r.spec.d)})"
    if not r.apart:
        return f"{a} vs {b}: {r.d:+.3f}, not told apart" if named else f"{r.d:+.3f}, not told apart"
    better, up = r.spec.measure.better, r.d > 0
    if r.spec.level is not None:
        return f"{a} {'above' if up else 'below'} {b} by {abs(r.d):.3f}"
    if r.spec.b == "start":
        return f"{a} {'up' if up else 'down'} from the start by {abs(r.d):.3f}" + (
            "" if better == "neutral" else f", the {'better' if up == (better == 'higher') else 'worse'} direction")
    hi, lo = (a, b) if up else (b, a)
    if better == "higher":
        return f"{hi} ahead by {abs(r.d):.3f}"
    if better == "lower":
        return f"{lo} lower by {abs(r.d):.3f} (lower is better here)"
    return f"{hi} higher by {abs(r.d):.3f}"


# ---------------------------------------------------------------------------------------------------------------
# Hypotheses and robustness: the plan's rules, drawn by the engine; each verdict re-read under the alternatives.
# ---------------------------------------------------------------------------------------------------------------

def margin_words(study: Study, h) -> tuple[str, str, str]:
    """How a hypothesis's margin rule names its outcome: ``(within, yes, no)``, "±0.03", "idle", "not shown idle"
    for a difference of two arms; for an arm against a value (issue 82), "±1 of 2", "about 2", "not shown about
    2"."""
    spec = next((c for c in study.plan.comparisons if c.label == h.test), None)
    if spec is not None and spec.level is not None:
        return f"±{h.margin:g} of {spec.b}", f"about {spec.b}", f"not shown about {spec.b}"
    return f"±{h.margin:g}", "idle", "not shown idle"


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
    if r is not None and r.counted_unread:
        return (f"{name} cannot be read ({r.why_not}; its arm's other runs have no reading by the measure's "
                "definition): no verdict, and the correction counts it as p = 1.")
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
        within, yes, no = margin_words(study, h)
        text += (f"; within {within}: **{yes}** at the plan's margin" if j.idle else
                 f"; not within {within}: {no}")
    return text + "."


def judgement_clauses(study: Study, h, j) -> tuple[str | None, str | None]:
    """A judged hypothesis's size and margin clauses in a few words, each None where its rule has none: ("not
    refuted as an explanation of +0.45", "not idle within ±0.03"). The brief line and the seed claims' table
    (scripts/seed_claims.py) both say them this way."""
    size = idle = None
    if j.size is not None:
        gap = h.size if h.predicts == "a" else -h.size
        size = f"{j.size} as an explanation of {gap:+.2f}"
    if j.idle is not None:
        within, yes, no = margin_words(study, h)
        idle = f"{yes if j.idle else no} within {within}"
    return size, idle


def hypothesis_brief(study: Study, h) -> str:
    """A hypothesis's judgement in a few words: "H1 not supported; refuted as an explanation of +0.10"."""
    r = study.reading(h.test)
    j = judge(h, r)
    name = f"{h.name} ({h.says})" if h.says else h.name
    text = f"{name} **{j.verdict}** ({interval(r)})" if r is not None and r.d is not None else f"{name} {j.verdict}"
    size, idle = judgement_clauses(study, h, j)
    if size is not None:
        text += f", {size} ({'per comparison' if h.interval == 'per-comparison' else 'at the Holm level'})"
    if idle is not None:
        text += f", {idle}"
    return text


def hypotheses_words(study: Study, brief: bool = False) -> str:
    """The plan's hypotheses, each judged, before the count of separated comparisons ("" without hypotheses)."""
    if not study.plan.hypotheses:
        return ""
    if brief:
        return "; ".join(hypothesis_brief(study, h) for h in study.plan.hypotheses) + ". "
    return " ".join(hypothesis_line(study, h) for h in study.plan.hypotheses) + " "


def outcome_words(study: Study, kind: str, outcome, h=None) -> str:
    """A robustness row's outcome in a few words (``h``: the hypothesis of a hypothesis row)."""
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
        yes, no = margin_words(study, h)[1:] if h is not None else ("idle", "not idle")
        no = "not idle" if yes == "idle" else no  # a robustness row's shorter word (as before issue 82)
        parts.append(yes if outcome.idle else no)
    return "; ".join(parts)


def _change(study: Study, kind: str, mine, alt, h=None) -> str:
    """What an alternative does to one verdict, in a short clause: "is no longer separated", "is refuted as an
    explanation of +0.04 (as planned: not refuted)"."""
    if kind == "comparison":
        if mine.apart and not alt.apart:
            return "is no longer separated"
        if alt.apart and not mine.apart:
            return f"separates ({verdict_word(study, alt)})"
        return f"separates the other way ({verdict_word(study, alt)})"
    bits = []
    if alt.verdict != mine.verdict:
        bits.append(f"is {alt.verdict} (as planned: {mine.verdict})")
    if alt.size != mine.size:
        gap = h.size if h.predicts == "a" else -h.size
        bits.append(f"is {alt.size} as an explanation of {gap:+.2f} (as planned: {mine.size})")
    if alt.idle != mine.idle:
        _, yes, no = margin_words(study, h)
        bits.append(f"is {yes if alt.idle else no} (as planned: {yes if mine.idle else no})")
    return " and ".join(bits)


def _unread(study: Study) -> dict:
    """``{alternative: [label, ...]}`` for each alternative that could not re-read some verdict (no per-problem
    scores for a bootstrap, say): a "firm" verdict never claims a check that did not run (issue 83). A hypothesis
    whose comparison is listed is not listed again."""
    return {a: [label for label, _ in rows] for a, rows in _unread_why(study).items()}


def _unread_why(study: Study) -> dict:
    """``{alternative: [(label, why), ...]}``: what :func:`_unread` lists, each with its reason."""
    out: dict = {}
    for row in study.robust:
        for name, x in row.got.items():
            if row.kind == "comparison":
                why = getattr(x, "why_not", None)
            elif x.verdict == "cannot be read" and row.what[0].test not in {lab for lab, _ in out.get(name, [])}:
                why = "its comparison cannot be read"
            else:
                why = None
            if why:
                label = row.what.spec.label if row.kind == "comparison" else row.what[0].name
                out.setdefault(name, []).append((label, why))
    return out


def _said_once(pairs: list) -> str:
    """``label (why)`` pairs grouped by reason, each reason said once: "H1, H1b: a value has no problems"."""
    by: dict = {}
    for label, why in pairs:
        by.setdefault(why, []).append(label)
    return "; ".join(f"{', '.join(labels)}: {why}" for why, labels in by.items())


def fragility_words(study: Study, brief: bool = False) -> str:
    """" **Fragile**: ..." naming each verdict a calibrated alternative changes, how and under which, or
    " **Firm**: ..." when none does, naming the alternatives that were read (once every run has finished). An
    alternative whose intervals are too narrow (:class:`grpo_lab.study.robust.Alternative`'s ``narrow``) never
    makes a verdict fragile by itself; the report's robustness section shows it. ``brief``: fewer words."""
    rows = study.robust
    if not rows:
        return ""
    unread = _unread(study)
    alts = list(dict.fromkeys(n for row in rows for n in row.got))

    def readable(row, a) -> bool:
        x = row.got[a]
        return x.why_not is None if row.kind == "comparison" else x.verdict != "cannot be read"

    read = [a for a in alts if a not in unread]  # read for every verdict it applies to
    partly = [a for a in alts if a in unread and any(a in row.got and readable(row, a) for row in rows)]
    flipped = []
    for row in rows:
        if not row.flips:
            continue
        name = row.what.spec.label if row.kind == "comparison" else row.what[0].name
        mine = row.what if row.kind == "comparison" else row.what[1]
        h = None if row.kind == "comparison" else row.what[0]
        if brief:
            flipped.append(f"{name} (under {' and under '.join(row.flips)})")
        else:
            flipped.append("; ".join(f"{name} {_change(study, row.kind, mine, row.got[a], h)} under {a}"
                                     for a in row.flips))
    if not flipped:
        under = read + [f"{a} where it could be read" for a in partly]
        if brief:
            return " **Firm**: no reasonable alternative changes a verdict."
        text = (" **Firm** (no reasonable alternative changes a verdict): every verdict above holds under "
                + ("; ".join(under) if under else "the plan's conventions, no alternative having been read") + ".")
        if unread and not brief:  # issue 83: never claim a check that did not run
            why = _unread_why(study)
            text += " Not read: " + "; ".join(f"{a} for {_said_once(why[a])}" for a in unread) + "."
        return text
    if brief:
        return " **Fragile** (an alternative reading changes it): " + "; ".join(flipped) + "."
    return (" **Fragile** (a reasonable alternative changes a verdict: the data alone do not settle it): "
            + "; ".join(flipped) + ("." if brief else " (each reading in \"Does the verdict depend on a "
                                                     "convention?\")."))


def robustness_section(study: Study) -> list:
    """The report's section: every planned verdict and hypothesis under the plan's conventions and under each
    alternative; a verdict a calibrated alternative changes is fragile; a narrow alternative is shown and named,
    never counted."""
    rows = study.robust
    if not rows:
        return []
    from .coverage import table as coverage_table
    from .robust import alternatives, mixed_seeds

    narrow = {a.name: a.narrow for a in alternatives(study) if a.narrow}
    alts = list(dict.fromkeys(name for _, _, got, _ in rows for name in got))
    table = []
    for row in rows:
        kind, what, got, flips = row
        if kind == "comparison":
            name, plan_out = what.spec.label, outcome_words(study, kind, what)
        else:
            name, plan_out = f"{what[0].name} (on {what[0].test})", outcome_words(study, kind, what[1], what[0])
        cells = []
        for a in alts:
            if a not in got:
                cells.append("—")
                continue
            x = got[a]
            word = outcome_words(study, kind, x, None if kind == "comparison" else what[0])
            if kind == "comparison" and x.d is not None:
                word += f" {interval(x)}"
            elif kind == "hypothesis" and x.rule_lo is not None:
                word += f" [{_fmt(x.rule_lo)}, {_fmt(x.rule_hi)}]"
            cells.append(word)
        verdict = "**fragile**" if flips else ("firm (only a narrow alternative differs)" if row.narrow else "firm")
        table.append([name, plan_out, *cells, verdict])
    from ..report import md_table

    fewest = min(len(a.seeds) for a in study.plan.arms.values())
    text = [f"Each planned verdict as the plan reads it ({study.conventions.words()}; the correction and each size "
            "rule's interval as declared), and re-read under the reasonable alternatives. **Firm**: no alternative "
            "changes it. **Fragile**: one does, so the data alone do not settle it. The alternatives: the other "
            "degrees of freedom; the other interval for a size rule (per-comparison, or the level Holm's step-down "
            "tests that comparison at); a bootstrap that resamples the evaluation's problems as well as the seeds "
            "(it covers the problems' noise, which the t-intervals leave out); where a selection's winner and "
            "runner-up are not separated on validation, the runner-up; where a planned comparison reads a positive, "
            "skewed measure (a rank, a length), a log scale; and, where a seed did not take or lies far from its arm, "
            "the study without it. Every interval method is checked for "
            "coverage by simulation (grpo_lab/data/interval_coverage.json): one whose simulated coverage at this "
            f"study's {fewest} seeds falls more than {100 * (NOMINAL - BAND[0]):.0f} points short of its nominal "
            "level is marked narrow and cannot by itself make a verdict fragile."]
    for a, why in narrow.items():
        text.append(f"**Narrow**: {a}: {why}.")
    mixed = mixed_seeds(study)
    if mixed:
        cov = coverage_table()["coverage"].get("t-welch-mixture", {})
        at = max((int(k) for k in cov if int(k) <= fewest), default=None)
        text.append("**A seed mixture**: " + "; ".join(f"{study.plan.arms[a].label} seed {s} ({why})"
                                                      for a, s, why in mixed)
                    + ". An arm whose runs are not one distribution breaks what a t-interval assumes, so these "
                    "intervals' nominal level is in doubt"
                    + (f" (simulated: {cov[str(at)]:.2f} at {at} seeds for a nominal 95% when each seed fails to "
                       "take with chance 1/6, interval_coverage.json's t-welch-mixture)" if at else "")
                    + "; the column \"without …\" re-reads every comparison of those arms without them.")
    for a, pairs in _unread_why(study).items():
        text.append(f"**Not read** under {a}: {_said_once(pairs)}.")
    head = [f"{a} (narrow)" if a in narrow else a for a in alts]
    return ["## Does the verdict depend on a convention?", "", "\n\n".join(text), "",
            *md_table(["verdict", "as planned", *head, "reading"], table), ""]


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
        size = (f"{o['distinct']} distinct problems, each drawn once" if o["draws"] == o["distinct"] else
                f"{o['draws']} evaluation draws of {o['distinct']} distinct problems (their effective number, Kish's "
                f"(Σw)²/Σw² over how often each was drawn: {o['effective']:.0f}; `eval_without_replacement = true` "
                "would draw each once)")
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
