"""The study's figures (matplotlib, through :mod:`grpo_lab.viz`). Part of :mod:`grpo_lab.study`."""

from __future__ import annotations

from .data import Study


def draw(study: Study) -> None:
    """The study's figures: each arm's primary measure per seed (dots), with its mean and interval, beside its
    start; and every comparison's interval (planned, then exploratory)."""
    from ..viz import comparison_intervals, arms_per_seed

    p = study.plan
    arms = {a.arm.label: list(study.values(n).values()) for n, a in study.data.items()}
    methods = {a.arm.method for a in study.data.values()}  # one colour per method; per arm where they share one
    colours = {a.arm.label: (a.arm.method if len(methods) > 1 else a.arm.label) for a in study.data.values()}
    start = next((study.start(n) for n in study.data if study.start(n)), None)
    fig = arms_per_seed(arms, colours=colours, ylabel=p.primary.text, start=start,
                        title=f"{p.title} — {p.primary.text} per arm",
                        clip=(0.0, 1.0) if p.primary.metric.fraction else None)  # as the tables clip them
    fig.savefig(p.home / "arms.png")
    sizes: dict = {}
    for h in p.hypotheses:  # each size rule's threshold on its comparison's row, on the side the hypothesis predicts
        if h.size is not None:
            sizes.setdefault(h.test, []).append((h.size if h.predicts == "a" else -h.size, "size"))
    rows = [(r.spec.label + ("" if r.spec.planned else " (exploratory)"), r.d, r.lo, r.hi, r.spec.planned,
             sizes.get(r.spec.label, []) + ([(r.spec.claim, "claim")] if r.spec.claim is not None else []))
            for r in [*study.planned, *study.exploratory] if r.d is not None]
    fig = comparison_intervals(rows, margin=p.margin, xlabel=f"difference (a − b), {100 * (1 - p.alpha):.4g}% interval before correction",
                               title=f"{p.title} — the comparisons")
    fig.savefig(p.home / "comparisons.png")
