"""The study's figures (matplotlib, through :mod:`grpo_lab.viz`). Part of :mod:`grpo_lab.study`."""

from __future__ import annotations

from .data import Study


def draw(study: Study) -> None:
    """The study's figures: each arm's primary measure per seed (dots), with its mean and interval, beside its
    start; and every comparison's interval (planned, then exploratory), cut at what its difference can reach."""
    from ..viz import arms_per_seed, comparison_intervals, runs_scatter, sweep
    from .words import reach

    p = study.plan
    arms = {a.arm.label: list(study.values(n).values()) for n, a in study.data.items()}
    methods = {a.arm.method for a in study.data.values()}  # one colour per method; per arm where they share one
    colours = {a.arm.label: (a.arm.method if len(methods) > 1 else a.arm.label) for a in study.data.values()}
    start = next((study.start(n) for n in study.data if study.start(n)), None)
    fig = arms_per_seed(arms, colours=colours, ylabel=p.primary.text, start=start,
                        title=f"{p.title} — {p.primary.text} per arm",
                        clip=p.primary.metric.clip, confidence=1 - p.alpha)  # as the tables clip them
    fig.savefig(p.home / "arms.png")
    sizes: dict = {}
    for h in p.hypotheses:  # each size rule's threshold on its comparison's row, on the side the hypothesis predicts
        if h.size is not None:
            sizes.setdefault(h.test, []).append((h.size if h.predicts == "a" else -h.size, "size"))
    rows = [(r.spec.label + ("" if r.spec.planned else " (exploratory)"), r.d, r.lo, r.hi, r.spec.planned,
             sizes.get(r.spec.label, []) + ([(r.spec.claim, "claim")] if r.spec.claim is not None else []),
             reach(r))  # drawn up to what the difference can be, as the report's bound words read it
            for r in [*study.planned, *study.exploratory] if r.d is not None]
    fig = comparison_intervals(rows, margin=p.margin, xlabel=f"difference (a − b), {100 * (1 - p.alpha):.4g}% interval before correction",
                               title=f"{p.title} — the comparisons")
    if not rows:  # an interim study whose comparisons have no interval yet: say so on the page, not an empty frame
        fig.axes[0].text(0.5, 0.5, f"no comparison can be read yet: {study.done} of {study.total} runs finished "
                         "(an interval needs at least 2 seeds an arm)", transform=fig.axes[0].transAxes, ha="center",
                         va="center", fontsize=9)
        fig.axes[0].set_yticks([])
        fig.axes[0].set_xticks([])  # an empty axis's ticks (±0.002 around 0) would read as a scale
    fig.savefig(p.home / "comparisons.png")

    for i, cr in enumerate(study.curves):  # issue 57: a measure against one setting, one line per method
        if not cr.lines:
            continue
        xs = sorted({x for pts in cr.lines.values() for x, *_ in pts})
        series = {}
        for label, pts in cr.lines.items():
            at = {x: (m, m if lo is None else lo, m if hi is None else hi) for x, m, lo, hi, _ in pts}
            series[label] = [at.get(x, (float("nan"),) * 3) for x in xs]
        seeds = sorted({n for pts in cr.lines.values() for *_, n in pts})
        fig = sweep(xs, series, xlabel=cr.curve.x, ylabel=cr.curve.measure.text, title=f"{p.title} — {cr.curve.label}",
                    n_seeds=seeds[0] if len(seeds) == 1 else None, log=all(x > 0 for x in xs),
                    clip=cr.curve.measure.metric.clip, legend_below=True, confidence=1 - p.alpha)
        fig.savefig(p.home / curve_file(i, cr.curve))

    for i, co in enumerate(study.correlations):  # issue 59: one dot per run, e.g. ACR against pass@1
        if not co.n:
            continue
        note = (f"Pearson r = {co.r:+.2f} [{co.lo:+.2f}, {co.hi:+.2f}] over {co.n} runs" if co.r is not None
                else co.why_not)
        fig = runs_scatter(co.points, xlabel=co.correlation.x.axis, ylabel=co.correlation.y.text,
                           title=f"{p.title} — {co.correlation.label}", note=note)
        fig.savefig(p.home / correlation_file(i))


def correlation_file(i: int) -> str:
    """The figure of the plan's ``i``-th correlation."""
    return f"correlation-{i + 1}.png"


def curve_file(i: int, cv) -> str:
    """The figure of the plan's ``i``-th curve: ``curve-<x>.png`` (``curve-<x>-<i>.png`` after the first)."""
    return f"curve-{cv.x}.png" if i == 0 else f"curve-{cv.x}-{i + 1}.png"
