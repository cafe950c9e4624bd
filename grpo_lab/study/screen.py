"""A study report's first screen (issue 107): the answer in one plain sentence (:func:`grpo_lab.study.words.lead`,
its caveat first), the planned comparisons' figure, then one table row per planned comparison: the quantity compared
with its unit, the estimate and its interval, whether it separated after the plan's correction, the verdict, firm or
fragile, and what the data exclude, in words on the quantity. Everything else follows it, each said once (rliable:
interval estimates first, in a figure; a registered report's summary: one table of hypotheses and outcomes). Part of
:mod:`grpo_lab.study`.
"""

from __future__ import annotations

from .readings import judge
from .words import _fmt, past_range, verdict_word


def _side(study, name: str) -> str:
    chosen = study.resolve(name)
    return study.plan.arms[chosen].label if chosen in study.plan.arms else name


def quantity(study, spec) -> str:
    """What a planned comparison measures, named as a quantity (issue 107: a label never names an arm where a
    quantity is meant): ``update-erank-end of grpo, G = 16 − 2``; ``pass@1: sign − grpo``; ``pass@1: grpo-hard −
    the start``; ``pass@1: (a − b) − (c − d)``."""
    m = spec.measure.text
    if spec.level is not None:
        return f"{m} of {_side(study, spec.a)}" + (f" − {spec.level:g}" if spec.level else "")
    if spec.c is not None:
        return (f"{m}: ({_side(study, spec.a)} − {_side(study, spec.b)}) − ({_side(study, spec.c)} − "
                f"{_side(study, spec.d)})")
    b = "the start" if spec.b == "start" else _side(study, spec.b)
    return f"{m}: {_side(study, spec.a)} − {b}"


def excluded(r) -> str:
    """What the interval excludes, on the quantity's own scale: "above +0.031 or below −0.176"; a side past what
    the difference can be at all excludes nothing and is left out."""
    above, below = past_range(r)
    parts = ([] if above else [f"above {_fmt(r.hi)}"]) + ([] if below else [f"below {_fmt(r.lo)}"])
    return " or ".join(parts) if parts else "nothing the quantity can be"


def _firm(study, r, hyp) -> str:
    flips = []
    for row in study.robust:
        if (row.kind == "comparison" and row.what is r) or (hyp is not None and row.kind == "hypothesis"
                                                             and row.what[0].name == hyp.name):
            flips += [f for f in row.flips if f not in flips]
    if not study.robust:
        return "—"
    return f"**fragile** (under {', '.join(flips)})" if flips else "firm"


def table(study) -> list:
    """The first screen's table: one row per planned comparison (its hypothesis beside it), read once."""
    from ..report import md_table

    if not study.complete:
        return []
    by_test = {h.test: h for h in study.plan.hypotheses}
    rows = []
    for r in study.planned:
        h = by_test.get(r.spec.label)
        name = f"{h.name}: {r.spec.label}" if h else r.spec.label
        if r.d is None:
            rows.append([name, quantity(study, r.spec), "—", "cannot be read", r.why_not or "—", "—", "—"])
            continue
        if r.same_as:
            after = f"counted once, with {r.same_as}"
        else:
            after = "separated" if r.apart else "not separated"
        if h is not None:
            j = judge(h, r)
            verdict = j.verdict + (f"; size {j.size}" if j.size else "") + (
                "" if j.idle is None else ("; within the margin" if j.idle else "; not within the margin"))
        else:
            verdict = verdict_word(study, r) if r.apart else "not separated"
        rows.append([name, quantity(study, r.spec), f"{_fmt(r.d)} [{_fmt(r.lo)}, {_fmt(r.hi)}]", after, verdict,
                     _firm(study, r, h), excluded(r)])
    head = ["planned comparison", "quantity", f"estimate [{100 * (1 - study.plan.alpha):.4g}% interval]",
            "after the correction", "verdict", "firm or fragile", "the data exclude"]
    return md_table(head, rows)
