"""Figures for the course: pure functions that take numbers and return a matplotlib Figure.

Nothing here computes a result the notebooks assert on; the math lives in
:mod:`grpo_lab.advantages`, :mod:`grpo_lab.starvation` and :mod:`grpo_lab.simulator`.
Each function names the notebook that introduces it.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from .advantages import ESTIMATORS, compute_advantages
from .starvation import degeneracy_rate

WIDTH = 7.0  # inches: readable at notebook width

# One colour, line style and marker per estimator (and per sampling method: dapo = grpo + dynamic sampling,
# notebook 09) across every figure of the project. Dashed: the methods that change the sampling, not the advantage.
PALETTE = {
    "grpo": dict(color="#1f77b4", ls="-", marker="o"),
    "drgrpo": dict(color="#ff7f0e", ls="-", marker="s"),
    "rloo": dict(color="#2ca02c", ls="-", marker="^"),
    "sign": dict(color="#d62728", ls="-", marker="D"),
    "avspo": dict(color="#9467bd", ls="-", marker="v"),
    "avspo_code": dict(color="#8c564b", ls="-.", marker="P"),
    "gpg": dict(color="#e377c2", ls="-", marker="p"),
    "gpg_verl": dict(color="#e7969c", ls="-.", marker="p"),
    "maxrl": dict(color="#393b79", ls="-", marker="<"),
    "grpo_near": dict(color="#aec7e8", ls="-", marker=">"),
    "dapo": dict(color="#17becf", ls=(0, (4, 3)), marker="x"),
    "grpo+drop": dict(color="#7f7f7f", ls=(0, (4, 3)), marker="*"),
    "grpo+skip": dict(color="#bcbd22", ls=(0, (4, 3)), marker="h"),
    "start": dict(color="0.3", ls=":", marker="."),
}
_EXTRA = ["#637939", "#843c39", "#6b6ecf", "#8c6d31", "#5254a3", "#bd9e39"]
BAND_ALPHA = 0.18


def style(label: str) -> dict:
    """Colour, line style and marker of ``label``: an estimator (or "start"), possibly followed by more words
    ("sign, lr 1e-3"); other labels get a fixed colour by first use. A new estimator needs no entry here."""
    key = str(label).split(",")[0].split(" ")[0]
    if key not in PALETTE:
        PALETTE[key] = dict(color=_EXTRA[(len(PALETTE) - len(ESTIMATORS) - 1) % len(_EXTRA)], ls="-", marker="o")
    return PALETTE[key]


def _line(ax, x, y, label, **kw):
    st = style(label)
    return ax.plot(x, y, color=st["color"], ls=st["ls"], label=label, **kw)


def _band(ax, x, lo, hi, label, clip=(0.0, 1.0)):
    """A shaded 95% band in ``label``'s colour, clipped to ``clip`` (probabilities stay in [0, 1])."""
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    if clip is not None:
        lo, hi = np.clip(lo, *clip), np.clip(hi, *clip)
    ax.fill_between(x, lo, hi, color=style(label)["color"], alpha=BAND_ALPHA, lw=0)
    for edge in (lo, hi):  # thin edges in the series' colour: overlapping bands stay distinguishable
        ax.plot(x, edge, color=style(label)["color"], lw=0.6, alpha=0.7, ls=(0, (2, 2)))


def _same_as(label, values, seen: dict) -> str:
    """``label``, or ``"label (= other, drawn over it)"`` when its values equal an earlier series' (a figure never
    hides a series without saying so: dapo equals grpo in the tabular simulator)."""
    v = np.asarray(values, dtype=float)
    for other, w in seen.items():
        if w.shape == v.shape and np.array_equal(w, v):
            seen[label] = v
            return f"{label} (= {other}, drawn over it)"
    seen[label] = v
    return label


def _note_zoom(ax, ylabel: str) -> None:
    """Say so on the axis when a y-axis does not start at 0 (a zoomed axis makes small gaps look large)."""
    lo, hi = ax.get_ylim()
    if lo > 0:
        below = [t for t in ax.get_yticks() if t <= lo]  # start at a tick, so the label is a round number
        if below and max(below) >= 0:
            lo = float(max(below))
            ax.set_ylim(lo, hi)
        if lo > 0:
            ax.set_ylabel(f"{ylabel}\n(axis starts at {lo:g}, not 0)")


def _band_note(ax, n_seeds: int | tuple | None, what: str = "95% t-interval over seeds",
               others: dict | None = None) -> None:
    """Add a legend entry that says what the bands are (``others``: ``{label: what}`` for a series whose band is
    another kind of interval; ``n_seeds`` a ``(fewest, most)`` pair where the series have different counts); then
    draw the legend."""
    handles, labels = ax.get_legend_handles_labels()
    for label, kind in (others or {}).items():
        handles.append(Patch(color=style(label)["color"], alpha=BAND_ALPHA + 0.1, lw=0))
        labels.append(f"{label} band: {kind}")
    if isinstance(n_seeds, tuple):  # series with different seed counts: the range, never one series' count
        handles.append(Patch(color="0.5", alpha=BAND_ALPHA + 0.1, lw=0))
        labels.append(f"band{' (others)' if others else ''}: {what} (n={n_seeds[0]}–{n_seeds[1]} by series)")
    elif n_seeds is not None and n_seeds > 1:
        handles.append(Patch(color="0.5", alpha=BAND_ALPHA + 0.1, lw=0))
        labels.append(f"band{' (others)' if others else ''}: {what} (n={n_seeds})")
    elif n_seeds == 1:
        handles.append(Patch(color="none"))
        labels.append("one seed: no band")
    ax.legend(handles, labels, fontsize=7, ncols=2)


class LabFigure(Figure):
    """A matplotlib Figure that renders itself as PNG in Jupyter, with no pyplot state involved."""

    def _repr_png_(self) -> bytes:
        import io

        from matplotlib.backends.backend_agg import FigureCanvasAgg

        buf = io.BytesIO()
        FigureCanvasAgg(self).print_png(buf)
        return buf.getvalue()


def _log2_x(ax, xs, xlabel: str, ylabel: str, title: str | None = None) -> None:
    """A log2 x axis labelled at ``xs`` (group sizes, k), a [0, 1] y axis, labels and a panel title."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(xs), [str(x) for x in xs])
    ax.minorticks_off()
    ax.set_ylim(0, 1.02)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=9)


def _fig(ncols: int = 1, height: float = 3.4, width: float = WIDTH, title: str | None = None, nrows: int = 1,
         **kw):
    import textwrap

    fig = LabFigure(figsize=(width, height), layout="constrained", dpi=100)
    axes = fig.subplots(nrows, ncols, **kw)
    if title:  # wrapped to the figure's width: a long task name must not run off the edge
        fig.suptitle("\n".join(textwrap.wrap(title, int(width * 11))), fontsize=10)
    return fig, axes


def group_advantages(rewards, G: int, methods=("grpo", "drgrpo", "sign"), title: str | None = None) -> Figure:
    """Bars of each completion's reward and advantage under several estimators (notebook 01)."""
    r = np.asarray(rewards, dtype=float).reshape(-1)
    fig, ax = _fig(height=3.2, title=title or f"Reward and advantage of each completion (groups of G={G})")
    x = np.arange(r.size)
    width = 0.8 / (len(methods) + 1)
    ax.bar(x - 0.4 + width / 2, r, width, label="reward", color="0.6")
    for i, m in enumerate(methods, start=1):
        adv = compute_advantages(r, G, m).numpy()
        ax.bar(x - 0.4 + width * (i + 0.5), adv, width, label=f"A ({m})", color=style(m)["color"])
    for b in range(1, r.size // G):
        ax.axvline(b * G - 0.5, color="k", lw=0.8, ls=":")
    ax.axhline(0, color="k", lw=0.6)
    ax.set_xlabel(f"completion (groups of G={G}, separated by dotted lines)")
    ax.set_ylabel("reward / advantage")
    ax.legend(fontsize=8, ncols=len(methods) + 1, loc="upper left")
    return fig


def degeneracy_vs_p(G: int, p_mc=None, rate_mc=None, rate_mc_se=None, title: str | None = None) -> Figure:
    """The closed form p^G + (1-p)^G against Monte Carlo points (notebook 01)."""
    fig, ax = _fig(title=title or f"P(a group of G={G} is degenerate) against the success probability")
    p = np.linspace(0, 1, 201)
    ax.plot(p, degeneracy_rate(p, G), color="0.2", label=f"closed form p^G + (1-p)^G, G={G}")
    if p_mc is not None:
        ax.errorbar(p_mc, rate_mc, yerr=None if rate_mc_se is None else 2 * np.asarray(rate_mc_se), fmt="o",
                    ms=4, color="#d62728", label="Monte Carlo (bars: ±2 standard errors)")
    ax.set_xlabel("success probability p")
    ax.set_ylabel("P(group degenerate)")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=8)
    return fig


def degeneracy_heatmap(ps, Gs, title: str | None = None) -> Figure:
    """Heatmap of p^G + (1-p)^G over a grid of p and G (notebook 01)."""
    ps, Gs = np.asarray(ps, dtype=float), np.asarray(Gs)
    rate = degeneracy_rate(ps[None, :], Gs[:, None])
    fig, ax = _fig(height=3.6, title=title or "P(group degenerate) over p and G (white contours: 0.5 and 0.9)")
    im = ax.imshow(rate, aspect="auto", origin="lower", cmap="magma", vmin=0, vmax=1,
                   extent=(ps[0], ps[-1], -0.5, len(Gs) - 0.5))
    ax.set_yticks(range(len(Gs)), [str(g) for g in Gs])
    ax.set_xlabel("success probability p")
    ax.set_ylabel("group size G")
    fig.colorbar(im, ax=ax, label="P(group degenerate)")
    for level in (0.5, 0.9):
        ax.contour(ps, np.arange(len(Gs)), rate, levels=[level], colors="w", linewidths=0.8)
    return fig


def jensen_bars(gaps: dict, title: str | None = None) -> Figure:
    """Real vs i.i.d. degeneracy, split into all-fail and all-pass, per population (notebook 02).

    ``gaps`` maps a population name to a :class:`grpo_lab.starvation.JensenGap`.
    """
    names = list(gaps)
    fig, ax = _fig(height=3.6, title=title or "Degenerate groups: real population vs i.i.d. at its mean p")
    x = np.arange(len(names))
    w = 0.38
    real_f = [gaps[n].real_all_fail for n in names]
    real_p = [gaps[n].real_all_pass for n in names]
    iid_f = [gaps[n].iid_all_fail for n in names]
    iid_p = [gaps[n].iid_all_pass for n in names]
    ax.bar(x - w / 2, real_f, w, color="#d62728", label="real: all fail")
    ax.bar(x - w / 2, real_p, w, bottom=real_f, color="#2ca02c", label="real: all pass")
    ax.bar(x + w / 2, iid_f, w, color="#d62728", alpha=0.45, hatch="//", label="i.i.d. at mean p: all fail")
    ax.bar(x + w / 2, iid_p, w, bottom=iid_f, color="#2ca02c", alpha=0.45, hatch="//", label="i.i.d.: all pass")
    ax.set_xticks(x, names, fontsize=8)
    ax.set_ylabel("fraction of groups degenerate")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=7, ncols=2)
    return fig


def rate_vs_group_size(Gs, curves: dict, title: str | None = None) -> Figure:
    """Degenerate fraction and samples per informative group against G (notebook 02)."""
    fig, (a, b) = _fig(ncols=2, title=title or "Larger groups: fewer degenerate groups, but at a price in samples")
    Gs = np.asarray(Gs)
    for name, rates in curves.items():
        rates = np.asarray(rates)
        a.plot(Gs, rates, "o-", ms=3, label=name)
        b.plot(Gs, Gs / np.clip(1 - rates, 1e-9, None), "o-", ms=3, label=name)
    for ax, ylabel in ((a, "degenerate fraction"), (b, "samples per informative group")):
        ax.set_xlabel("group size G")
        ax.set_ylabel(ylabel)
        ax.set_xscale("log", base=2)
        ax.set_xticks(Gs, [str(g) for g in Gs])
        ax.minorticks_off()
    a.set_ylim(0, 1.02)
    b.set_yscale("log")
    a.legend(fontsize=7)
    return fig


def advantage_table(G: int, methods, values: dict, title: str | None = None) -> Figure:
    """Heatmap: advantage of a success / a failure for each k-of-G composition (notebook 03).

    ``values[method]`` is a ``[G+1, 2]`` array: (advantage of a success, of a failure) for
    k = 0..G successes; NaN where no such completion exists.
    """
    fig, axes = _fig(ncols=2, height=0.45 * len(methods) + 1.6,
                     title=title or f"Advantage per estimator and group composition (G={G}; blank: no such completion)")
    for j, (ax, what) in enumerate(zip(axes, ("a success", "a failure"))):
        grid = np.array([values[m][:, j] for m in methods])
        lim = np.nanmax(np.abs(grid))
        ax.imshow(grid, cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto")
        for (i, k), v in np.ndenumerate(grid):
            if np.isfinite(v):
                ax.text(k, i, f"{v:.2f}", ha="center", va="center", fontsize=6)
        ax.set_xticks(range(G + 1))
        ax.set_yticks(range(len(methods)), methods if j == 0 else [""] * len(methods), fontsize=8)
        ax.set_xlabel(f"k successes out of G={G}")
        ax.set_title(f"advantage of {what}", fontsize=9)
    return fig


def _mean_band(y: np.ndarray):
    """Per column (step) of ``y`` [seeds, steps]: the mean and the 95% t-interval over the seeds that logged a finite
    value there (a NaN in a log, "not measured", is left out of its step, never a reason to draw nothing)."""
    from .stats import mean_ci

    if y.shape[0] < 2:
        return y[0], None, None
    out = []
    for col in np.asarray(y, dtype=float).T:
        v = col[np.isfinite(col)]
        out.append((np.nan,) * 3 if v.size == 0 else (float(v[0]),) * 3 if v.size == 1 else mean_ci(v))
    m, lo, hi = (np.array(x) for x in zip(*out))
    return m, lo, hi


def training_curves(results: dict, key: str = "success", ylabel: str = "mean success probability",
                    title: str | None = None, clip=(0.0, 1.0)) -> Figure:
    """Mean over seeds with its 95% t-interval band, one line per label (notebook 04).

    ``results[label]`` is a list of :class:`grpo_lab.simulator.SimResult` (one per seed).
    """
    fig, ax = _fig(title=title or f"{ylabel} over training")
    n = None
    seen: dict = {}
    for label, runs in results.items():
        y = np.stack([getattr(r, key) for r in runs])
        m, lo, hi = _mean_band(y)
        _line(ax, runs[0].steps, m, _same_as(label, m, seen))
        if lo is not None:
            _band(ax, runs[0].steps, lo, hi, label, clip)
        n = len(runs)
    ax.set_xlabel("step")
    ax.set_ylabel(ylabel)
    _note_zoom(ax, ylabel)
    _band_note(ax, n)
    return fig


def success_histograms(before, after: dict, bins: int = 20, title: str | None = None) -> Figure:
    """Per-prompt success probability before training (grey) and after, one small panel per estimator
    (notebook 04). Counts on a log axis: the mass near 0 is the never-solved prompts."""
    labels = list(after)
    ncols = min(4, len(labels))
    nrows = -(-len(labels) // ncols)
    fig, axes = _fig(ncols=ncols, nrows=nrows, height=2.0 * nrows + 0.8, width=WIDTH * 1.15, sharex=True,
                     sharey=True, squeeze=False,
                     title=title or "Per-prompt success probability after training (grey: before)")
    edges = np.linspace(0, 1, bins + 1)
    for ax in axes.flat[len(labels):]:
        ax.set_visible(False)
    for ax, label in zip(axes.flat, labels):
        ax.hist(before, bins=edges, histtype="stepfilled", color="0.82", label="before")
        ax.hist(after[label], bins=edges, histtype="step", lw=1.5, color=style(label)["color"], label=label)
        ax.set_title(label, fontsize=9, color=style(label)["color"])
        ax.set_yscale("log")
    for ax in axes[-1]:
        ax.set_xlabel("success probability")
    for ax in axes[:, 0]:
        ax.set_ylabel("prompts")
    return fig


def passk_curves(ks, curves: dict, bands: dict | None = None, title: str | None = None,
                 n_seeds: int | None = None, band_kinds: dict | None = None) -> Figure:
    """pass@k against k for several policies, with optional (lo, hi) bands clipped to [0, 1] (notebooks 04, 07).

    ``n_seeds`` names what the bands are in the legend (a 95% t-interval over that many seeds); ``band_kinds``
    ``{label: what}`` names another kind of band for some series (e.g. the start's bootstrap over problems).
    """
    fig, ax = _fig(title=title or "pass@k against k")
    for label in curves:
        st = style(label)
        ax.plot(ks, curves[label], color=st["color"], ls=st["ls"], marker=st["marker"], ms=3, label=label)
        if bands and label in bands:
            _band(ax, ks, *bands[label], label)
    _log2_x(ax, ks, "k (samples per problem)", "pass@k")
    kinds = {k: v for k, v in (band_kinds or {}).items() if bands and k in bands}
    _band_note(ax, n_seeds if bands else None, others=kinds)
    return fig


def sweep(xs, results: dict, xlabel: str, ylabel: str, title: str | None = None, n_seeds: int | None = None,
          reference: tuple[float, str] | None = None, clip=(0.0, 1.0), dodge: float = 0.025, log: bool = True,
          legend_below: bool = False, confidence: float = 0.95) -> Figure:
    """Final metric (mean, lo, hi) against a swept setting, one line per estimator or setting (notebooks 04, 05).

    Bars are t-intervals over ``n_seeds`` seeds at ``confidence`` (the legend says which), clipped to ``clip`` (fractions by default; None: not
    clipped); ticks sit at the swept values, and each series is drawn ``dodge`` decades to the side of its
    neighbour (centred on the tick), so two methods with the same value at a setting show two bars, not one
    (issue 40: grpo and drgrpo both at 0.570 hid each other). ``reference``: a ``(value, label)`` drawn as a
    dotted horizontal line (e.g. the starting policy's value). ``log=False``: a linear x axis (a setting that can
    be 0), each series dodged by ``dodge`` of the axis' span. A point may be NaN (a series without that setting).
    ``legend_below``: the legend under the axes instead of on them, for wide intervals that reach its corner (a
    study's curve, lessons 12 and 13).
    """
    fig, ax = _fig(title=title or f"{ylabel} against {xlabel}")
    if reference is not None:
        st = style("start")
        ax.axhline(reference[0], color=st["color"], ls=st["ls"], lw=1, label=reference[1])
    seen: dict = {}
    used: dict = {}
    n = len(results)
    for i, (label, rows) in enumerate(results.items()):
        m, lo, hi = (np.asarray(v, dtype=float) for v in zip(*rows))
        if clip is not None:  # a fraction's interval drawn inside [0, 1], as the bands of the other figures
            lo, hi = np.clip(lo, *clip), np.clip(hi, *clip)
        st = dict(style(label))
        key = str(label).split(",")[0].split(" ")[0]  # a second series of one estimator: its colour, another line
        j = used.get(key, 0)
        used[key] = j + 1
        st.update(ms=3, mfc=st["color"])
        if j:  # a second series: another line, hollow and larger markers
            st.update(ls=("-", "--", ":", "-.")[j % 4], marker=("o", "s", "^", "D")[j % 4], ms=5, mfc="white")
        x = np.asarray(xs, dtype=float)
        shifted = x * 10 ** (dodge * (i - (n - 1) / 2)) if log else \
            x + dodge * (np.ptp(x) or 1.0) * (i - (n - 1) / 2)
        ax.errorbar(shifted, m, yerr=[m - lo, hi - m], color=st["color"], ls=st["ls"], marker=st["marker"],
                    ms=st["ms"], mfc=st["mfc"], capsize=2, label=_same_as(label, m, seen))
    if log:
        ax.set_xscale("log")
    ax.set_xticks(list(xs), [f"{x:g}" for x in xs])
    ax.minorticks_off()
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    _note_zoom(ax, ylabel)
    handles, labels = ax.get_legend_handles_labels()
    where = dict(loc="outside lower center") if legend_below else {}
    (fig if legend_below else ax).legend(handles, labels, fontsize=7, ncols=2, title_fontsize=7, **where,
                                         title=f"bars: {100 * confidence:.4g}% t-interval over {n_seeds} seeds"
                                         if n_seeds else None)
    return fig


def _smooth(y: np.ndarray, window: int) -> np.ndarray:
    if window <= 1 or y.size < window:
        return y
    k = np.ones(window) / window
    return np.convolve(np.pad(y, (window - 1, 0), mode="edge"), k, mode="valid")


X_AXES = {"step": ("step", "optimizer step"),
          "completions": ("sampling/completions_total", "training completions generated (all rounds)")}


def log_curves(histories: dict, key: str, ylabel: str, window: int = 10, ax=None, clip=(0.0, 1.0),
               title: str | None = None, x: str = "step") -> Figure:
    """A logged metric over training: mean over seeds (moving average of ``window`` steps), with its
    95% t-interval band over seeds, clipped to ``clip`` (notebook 05, ``grpo-lab compare``).

    ``histories[label]`` is a list (one per seed) of log rows ``{"step": …, key: …}``. ``x="completions"``
    draws against the training completions generated so far (``sampling/completions_total``; notebook 09):
    each seed is interpolated onto a common grid up to the smallest total any seed reached, so methods that
    spend different generation per step are compared at equal cost.
    """
    if x not in X_AXES:
        raise ValueError(f"x must be one of {', '.join(X_AXES)}, got {x!r}")
    xkey, xlabel = X_AXES[x]
    fig, ax = _fig(title=title) if ax is None else (ax.figure, ax)
    counts = []  # seeds per series drawn
    drawn = []  # (label, grid, mean) of the series drawn so far
    for label in histories:
        runs = histories[label]
        rows = [[(r[xkey], r[key]) for r in h if r.get(key) is not None and r.get(xkey) is not None] for h in runs]
        length = min(len(r) for r in rows) if rows else 0
        if length == 0:
            continue
        y = [_smooth(np.array([v for _, v in r[:length]], dtype=float), window) for r in rows]
        if x == "step":
            grid = np.array([s for s, _ in rows[0][:length]])
        else:
            xs = [np.array([c for c, _ in r[:length]], dtype=float) for r in rows]
            grid = np.linspace(max(v[0] for v in xs), min(v[-1] for v in xs), 100)
            y = [np.interp(grid, xv, yv) for xv, yv in zip(xs, y)]
        m, lo, hi = _mean_band(np.stack(y))
        same = next((other for other, g, v in drawn if len(g) == len(grid) and np.allclose(g, grid)
                     and np.allclose(v, m, atol=1e-9)), None)
        if same is None:
            _line(ax, grid, m, label, lw=1.3)
        else:  # a series equal to one already drawn would hide it: dashed on top, and the legend says so
            st = style(label)
            ax.plot(grid, m, color=st["color"], ls=(0, (3, 3)), lw=1.6, label=f"{label} (same as {same})")
        drawn.append((label, grid, m))
        if lo is not None:
            _band(ax, grid, lo, hi, label, clip)
        counts.append(len(rows))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if x == "step":
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # steps are whole: no tick at 2.5
    if clip is not None:
        ax.set_ylim(clip[0], clip[1] + 0.02)
    _band_note(ax, None if not counts else counts[0] if min(counts) == max(counts) else (min(counts), max(counts)))
    return fig


def starvation_curves(histories: dict, window: int = 10, title: str | None = None, x: str = "step") -> Figure:
    """Reward, all-fail and all-pass fractions of the training groups generated, side by side, over steps or
    (``x="completions"``) over training completions generated (notebooks 05, 09)."""
    fig, axes = _fig(ncols=3, height=3.4, width=WIDTH * 1.6,
                     title=title or ("Training batches, per step (no smoothing)" if window <= 1 else
                                     f"Training batches, moving average over {window} steps"))
    for i, (ax, (key, label)) in enumerate(zip(axes, [("reward", "mean reward of the step's completions"),
                                                      ("starvation/all_fail", "all-fail fraction of groups"),
                                                      ("starvation/all_pass", "all-pass fraction of groups")])):
        log_curves(histories, key, label, window=window, ax=ax, x=x)
        if i:
            ax.get_legend().remove()  # one legend, in the first panel
    return fig


def level_bars(start: dict, after: dict, ylabel: str = "greedy accuracy", title: str | None = None,
               n_seeds: int | None = None) -> Figure:
    """Accuracy per difficulty level: the starting policy, and each label's mean with its 95% t-interval over
    seeds, clipped to [0, 1] (notebook 05).

    ``start`` maps level → accuracy; ``after[label]`` maps level → (mean, lo, hi).
    """
    fig, ax = _fig(title=title or f"{ylabel} per difficulty level")
    levels = sorted(start, key=int)
    x = np.arange(len(levels))
    width = 0.8 / (len(after) + 1)
    ax.bar(x - 0.4 + width / 2, [start[lv] for lv in levels], width, color="0.7", label="start")
    for i, (label, by_level) in enumerate(after.items(), start=1):
        key = {int(k): v for k, v in by_level.items()}
        m = np.array([key[int(lv)][0] for lv in levels])
        lo = np.clip([key[int(lv)][1] for lv in levels], 0, 1)
        hi = np.clip([key[int(lv)][2] for lv in levels], 0, 1)
        st = style(label)
        ax.bar(x - 0.4 + width * (i + 0.5), m, width, yerr=[m - lo, hi - m], capsize=2, label=label,
               color=st["color"], hatch="//" if st["ls"] != "-" else None, edgecolor="white", lw=0)
    ax.set_xticks(x, [f"level {lv}" for lv in levels])
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=7, ncols=4, title=f"bars: 95% t-interval over {n_seeds} seeds" if n_seeds else None,
              title_fontsize=7)
    return fig


def log_series(log, keys, ylabel: str, title: str | None = None) -> Figure:
    """A logged metric of an existing run over steps (``grpo-lab inspect``): each run as a thin line and,
    when the log holds several runs, their mean per step as a thick one.

    ``log`` is a :class:`grpo_lab.diagnose.RunLog`; ``keys`` one key or a tuple of keys.
    """
    keys = (keys,) if isinstance(keys, str) else tuple(keys)
    fig, ax = _fig(height=3.2, title=title or f"{ylabel} over training: {log.source.name}")
    runs = {}
    for r in log.rows:
        runs.setdefault(r.get("run"), []).append(r)
    colors = ("#d62728", "#2ca02c", "#1f77b4")
    for j, key in enumerate(keys):
        color = colors[j % len(colors)]
        name = key.replace("_", "-")
        for i, (run, rows) in enumerate(runs.items()):
            pts = [(r["step"], r[key]) for r in rows if r.get(key) is not None]
            if not pts:
                continue
            s, v = zip(*pts)
            several = len(runs) > 1
            ax.plot(s, v, lw=0.6 if several else 1.4, alpha=0.35 if several else 1, color=color,
                    label=(f"{name}: each of {len(runs)} runs" if several else name) if i == 0 else None)
        if len(runs) > 1:
            steps, mean = log.series(key)
            ax.plot(steps, mean, lw=2.0, color=color, label=f"{name}: mean over runs")
    ax.set_xlabel("step")
    ax.set_ylabel(ylabel)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, ncols=2)
    return fig


def erank_vs_group_size(Gs, panels: dict, reference: float | None = 2.0, title: str | None = None) -> Figure:
    """Effective rank against G (notebook 08): one panel per weight block, one line per label.

    ``panels[block][label]`` is a list of effective ranks, one per G; a label ending in "(after)" is drawn
    thick, "(start)" thin. ``reference`` draws the value a paper reports, for comparison.
    """
    fig, axes = _fig(ncols=len(panels), height=3.3, width=WIDTH * (1.0 if len(panels) == 1 else 1.3), squeeze=False,
                     title=title or "Effective rank of the update against the group size")
    for ax, (block, curves) in zip(axes[0], panels.items()):
        for label, vals in curves.items():
            st = style(label)
            ax.plot(Gs, vals, color=st["color"], marker=st["marker"], ms=3, label=label,
                    lw=2.0 if "after" in label else 0.9, alpha=1.0 if "after" in label else 0.7)
        if reference is not None:
            ax.axhline(reference, color="0.3", ls=":", lw=1, label=f"paper's claim: ≈ {reference:g}")
        ax.set_xscale("log", base=2)
        ax.set_xticks(list(Gs), [str(g) for g in Gs])
        ax.minorticks_off()
        ax.set_xlabel("group size G")
        ax.set_ylabel("effective rank")
        ax.set_title(block, fontsize=8)
    axes[0][0].legend(fontsize=7)
    return fig


def ranks_beside_bounds(arms: dict, reference: float | None = 2.0, title: str | None = None) -> Figure:
    """Each arm's effective rank at the start and the end of training beside the bound the arithmetic sets (notebook
    08, study 6), one column per arm, a log scale (ranks are positive and skewed).

    ``arms[label] = {"start": [...], "end": [...], "bound": [...]}``, one value per seed (None: no reading); the
    label's first word names the estimator and so the colour. Each seed is a small point (start hollow, end
    filled), each arm's bound a short bar; ``reference`` draws the value a paper reports."""
    fig, ax = _fig(height=3.6, title=title or "The batch update's effective rank at the start and the end of "
                   "training, beside its bound")
    seen = set()
    for i, (label, v) in enumerate(arms.items()):
        st = style(label)
        for key, dx, face in (("start", -0.15, "none"), ("end", 0.15, st["color"])):
            ys = [y for y in v[key] if y is not None]
            name = f"{key} (one point a seed)"
            ax.scatter([i + dx] * len(ys), ys, s=18, marker=st["marker"], facecolors=face, edgecolors=st["color"],
                       label=name if name not in seen else None, zorder=3)
            seen.add(name)
        bounds = [b for b in v["bound"] if b]
        if bounds:
            ax.hlines(float(np.mean(bounds)), i - 0.3, i + 0.3, color="0.2", lw=2,
                      label="the arithmetic's bound (mean over seeds)" if "bound" not in seen else None)
            seen.add("bound")
    if reference is not None:
        ax.axhline(reference, color="0.3", ls=":", lw=1, label=f"paper's claim: ≈ {reference:g}")
    ax.set_yscale("log")
    ax.set_xticks(range(len(arms)), list(arms), rotation=30, ha="right", fontsize=8)
    ax.set_xlabel("arm (estimator, group size)")
    ax.set_ylabel("effective rank (log scale)")
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return fig


def runs_scatter(points: dict, xlabel: str, ylabel: str, title: str | None = None, note: str | None = None) -> Figure:
    """One dot per run, ``points[method] = [(x, y), ...]``, one colour per method (the study engine's correlations
    across runs, issue 59). ``note``: a line in the legend's title (e.g. Pearson's r and its interval). The legend
    sits under the axes: a scatter has no empty corner to put it in (on the axes it covered study 5's runs)."""
    fig, ax = _fig(height=3.6, title=title or f"{ylabel} against {xlabel}")
    for label, pts in points.items():
        if not pts:
            continue
        x, y = (np.asarray(v, dtype=float) for v in zip(*pts))
        st = style(label)
        ax.scatter(x, y, s=18, color=st["color"], marker=st["marker"], label=f"{label} ({x.size} runs)", alpha=0.85)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=7, title=note, title_fontsize=7, loc="outside lower center",
               ncols=max(1, len(labels)))
    return fig


def count_bars(counts, xlabel: str, ylabel: str, title: str | None = None) -> Figure:
    """Bars of counts indexed 0 … len-1 (``grpo-lab inspect``)."""
    fig, ax = _fig(height=3.0, title=title or f"{ylabel} by {xlabel}")
    counts = np.asarray(counts)
    ax.bar(np.arange(counts.size), counts, color="#1f77b4")
    ax.set_xticks(np.arange(counts.size))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return fig


def profile_figure(n: int, correct, Gs, real, real_lo, real_hi, iid, all_fail, ks, passk, passk_lo, passk_hi,
                   paper: dict | None = None, title: str | None = None) -> Figure:
    """Before training: how starved will GRPO be? (``grpo-lab profile``, notebook 07).

    Three panels: problems by number correct out of ``n``; the degenerate-group fraction against G
    (unbiased estimate with its 95% interval over problems, the i.i.d. prediction at the mean success
    rate, the all-fail part, and ``paper`` points ``{label: (G, value)}``); pass@k with its bootstrap band.
    """
    fig, (a, b, c) = _fig(ncols=3, height=3.5, width=WIDTH * 1.45, title=title)
    counts = np.bincount(np.asarray(correct, dtype=int), minlength=n + 1)
    a.bar(np.arange(n + 1), counts, color="#1f77b4")
    a.set_xlabel(f"correct out of {n} samples")
    a.set_ylabel("problems")
    a.set_title("per-problem success", fontsize=9)
    Gs = np.asarray(Gs)
    # drawn wide and underneath: where all three coincide (a model that almost never succeeds) it still shows
    b.plot(Gs, real, "o-", color="#1f77b4", ms=6, lw=3.5, alpha=0.55, zorder=1, label="estimated (unbiased, per problem)")
    b.fill_between(Gs, np.clip(real_lo, 0, 1), np.clip(real_hi, 0, 1), color="#1f77b4", alpha=BAND_ALPHA, lw=0)
    b.plot(Gs, all_fail, "v--", color="#d62728", ms=3, label="of which all fail")
    b.plot(Gs, iid, "s:", color="0.35", ms=3, label="i.i.d. at the mean success rate")
    for label, (g, v) in (paper or {}).items():
        b.plot([g], [v], "*", ms=9, color="#ff7f0e", label=label)
    _log2_x(b, Gs, "group size G", "fraction of groups degenerate", "GRPO groups with no signal")
    handles, labels = b.get_legend_handles_labels()
    handles.append(Patch(color="#1f77b4", alpha=BAND_ALPHA + 0.1, lw=0))
    labels.append("band: 95% t-interval over problems")
    b.legend(handles, labels, fontsize=6.5, loc="lower left")
    c.plot(ks, passk, "o-", color="#1f77b4", ms=3, label="pass@k (unbiased)")
    c.fill_between(ks, passk_lo, passk_hi, color="#1f77b4", alpha=BAND_ALPHA, lw=0,
                   label="band: 95% bootstrap over problems")
    _log2_x(c, ks, "k (samples per problem)", "pass@k", "pass@k")
    c.legend(fontsize=7, loc="best")
    return fig


def sampling_cost(costs: dict, title: str | None = None) -> Figure:
    """What a step costs and what it buys, per method (notebook 09): completions generated per optimizer step,
    and informative groups trained per 100 completions generated; bars are means over seeds with their 95%
    t-interval.

    ``costs[method]`` is a list (one per seed) of ``{"completions", "steps", "informative"}`` totals of a run
    (a result's ``completions``, ``steps_done`` and ``generated["trained_informative"]``).
    """
    from .stats import mean_ci

    fig, (a1, a2) = _fig(ncols=2, height=3.2, title=title or "Generation cost of a step, and what it buys")
    labels = list(costs)
    x = np.arange(len(labels))
    n_seeds = min(len(v) for v in costs.values()) if costs else 0
    for ax, what, ylabel in ((a1, lambda c: c["completions"] / c["steps"], "completions generated per step"),
                             (a2, lambda c: 100 * c["informative"] / c["completions"],
                              "informative groups trained\nper 100 completions generated")):
        top = 0.0
        for i, label in enumerate(labels):
            m, lo, hi = mean_ci([what(c) for c in costs[label]])
            st = style(label)
            ax.bar(i, m, 0.7, yerr=[[m - lo], [hi - m]], capsize=3, color=st["color"], label=label,
                   hatch="//" if st["ls"] != "-" else None, edgecolor="white", lw=0)
            top = max(top, hi, m)
        ax.set_xticks(x, labels, rotation=20, fontsize=8)
        ax.set_ylabel(ylabel)
        ax.set_xlabel("method")
        ax.set_ylim(0, top * 1.5 if top > 0 else 1)  # room for the legend above the bars
    a1.legend(fontsize=7, ncols=2, loc="upper right", title=f"error bars: 95% t-interval over {n_seeds} seeds"
              if n_seeds > 1 else "one seed: no interval", title_fontsize=7)
    return fig


def changes_by_arm(panels: dict, colours: dict | None = None, ylabel: str = "change from the start",
                   title: str | None = None, floor: float = 0.05, same_scale: bool = False,
                   xlabel: str = "arm", width: float | None = None) -> Figure:
    """Per-seed changes from a shared start, one column per arm, one panel per measure (lesson 14, the harm report):
    ``panels[panel title][arm] = [change per seed]``. Dots are seeds; a diamond and bar the mean and its 95%
    t-interval over seeds (two seeds or more); a dotted line at 0 (no change). Every arm keeps its column, finished
    or not; the y axis spans at least ``±floor`` so a change of a few thousandths does not fill it, and with
    ``same_scale`` every panel spans the largest (panels of one measure, e.g. one per learning rate). ``colours``:
    ``{arm: a label of :func:`style`}`` (an arm trained by grpo in the grpo colour); ``xlabel`` names what the arms
    are (e.g. "estimator"); ``width`` the figure's, in inches (by default it grows with the panels)."""
    from .stats import mean_ci

    titles = list(panels)
    fig, axes = _fig(ncols=len(titles), height=3.6, width=width or WIDTH * (0.62 * len(titles) + 0.1), title=title)
    axes = np.atleast_1d(axes)
    arms = list(dict.fromkeys(a for t in titles for a in panels[t]))
    ns = set()
    common = max([floor, *(abs(float(x)) for t in titles for v in panels[t].values() for x in v)])
    for ax, t in zip(axes, titles):
        span = common if same_scale else floor
        for i, arm in enumerate(arms):
            v = [float(x) for x in panels[t].get(arm, [])]
            span = max([span, *np.abs(v)])
            colour = style((colours or {}).get(arm, arm))["color"]
            ax.plot([i] * len(v), v, "o", color=colour, alpha=0.5, ms=4)
            if len(v) >= 2:
                m, lo, hi = mean_ci(v)
                ax.errorbar([i], [m], yerr=[[m - lo], [hi - m]], color=colour, marker="D", ms=6, capsize=4)
                ns.add(len(v))
        ax.axhline(0, color="0.4", lw=1, ls=":")
        ax.set_ylim(-1.15 * span, 1.15 * span)
        ax.set_xlim(-0.5, len(arms) - 0.5)
        ax.set_xticks(range(len(arms)), arms, rotation=20, fontsize=8)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(t, fontsize=9)
    n = "/".join(map(str, sorted(ns))) or "none yet: an interval needs 2 seeds"
    axes[0].legend(handles=[Patch(color="0.5", alpha=0.5, label="dots: one seed each"),
                            Patch(color="0.2", label=f"diamond and bar: mean, 95% t-interval over seeds (n={n})")],
                   fontsize=7)
    return fig


def _fit(values, pad: float = 0.12, floor: float = 0.02) -> tuple[float, float] | None:
    """A y (or x) range fitted to ``values`` with a margin: the differences a figure is about stay visible."""
    v = [float(x) for x in values if x is not None and np.isfinite(x)]
    if not v:
        return
    lo, hi = min(v), max(v)
    span = max(hi - lo, floor)
    return lo - pad * span, hi + pad * span


def arms_per_seed(arms: dict, colours: dict | None = None, ylabel: str = "measure", start=None,
                  title: str | None = None, xlabel: str = "arm", clip=None, confidence: float = 0.95) -> Figure:
    """One column per arm (the study engine, ``grpo-lab study report``): ``arms[label] = [value per seed]``. Dots are
    seeds, drawn at their values (no jitter: a dot is a run); a diamond and bar the mean and its t-interval over
    seeds at ``confidence`` (a study's plan level; none where the seeds agree exactly); ``start = (value, standard
    error)`` a dotted line with its band at the same level (normal quantile).
    The y axis is fitted to the data, not to [0, 1] or to a symmetric range, so the differences the report
    discusses show. ``colours``: ``{label: a label of :func:`style`}`` (an arm in its method's colour). ``clip``:
    ``(lo, hi)`` that the intervals are drawn inside (a fraction's: ``(0, 1)``, as the report's tables clip them; a
    t-interval over two seeds can reach far below 0), the legend saying so."""
    from scipy.stats import norm

    from .stats import mean_ci, spread

    labels = list(arms)
    pct = f"{100 * confidence:.4g}%"
    z = float(norm.ppf(0.5 + confidence / 2))
    # wide enough for its legend: with two arms the two-column legend ran past both edges (issue 81)
    fig, ax = _fig(width=max(WIDTH * 0.7, 1.1 * len(labels) + 2.5, 6.4), height=3.8, title=title)
    shown = []
    for i, label in enumerate(labels):
        v = [float(x) for x in arms[label]]
        colour = style((colours or {}).get(label, label))["color"]
        ax.plot([i] * len(v), v, "o", color=colour, alpha=0.55, ms=4, ls="none")
        shown += v
        if len(v) >= 2 and spread(v):
            m, lo, hi = mean_ci(v, confidence)
            if clip is not None:
                lo, hi = max(lo, clip[0]), min(hi, clip[1])
            ax.errorbar([i + 0.18], [m], yerr=[[m - lo], [hi - m]], color=colour, marker="D", ms=6, capsize=4)
            shown += [lo, hi]
    within = "" if clip is None else (f", drawn at or above {clip[0]:g}" if clip[1] == float("inf") else
                                      f", drawn within [{clip[0]:g}, {clip[1]:g}]")
    handles = [Patch(color="0.5", alpha=0.55, label="dots: one seed each"),
               Patch(color="0.2", label=f"diamond and bar: mean, {pct} t-interval over seeds{within}")]
    if start is not None:
        value, se = start
        ax.axhline(value, color="0.3", ls=":", lw=1.2)
        handles.append(Line2D([], [], color="0.3", ls=":", lw=1.2, label="the start"))
        if se:
            ax.axhspan(value - z * se, value + z * se, color="0.5", alpha=0.15, lw=0)
            handles.append(Patch(color="0.5", alpha=0.3, label=f"the start ± {z:.3g} × its sampling s.e. ({pct})"))
        shown += [value - z * (se or 0), value + z * (se or 0)]
    limits = _fit(shown)
    if limits:
        ax.set_ylim(*limits)
    ax.set_xlim(-0.5, len(labels) - 0.5)
    ax.set_xticks(range(len(labels)), labels, rotation=20 if len(labels) > 3 else 0, fontsize=8, ha="right"
                  if len(labels) > 3 else "center")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    # below the axes, not on them: inside, it covered the last arm's interval (study 4's report, 2026-11-27)
    fig.legend(handles=handles, fontsize=7, loc="outside lower center", ncols=2)
    return fig


def comparison_intervals(rows, margin: float | None = None, xlabel: str = "difference",
                         title: str | None = None) -> Figure:
    """A forest plot of comparisons (the study engine): ``rows`` of ``(label, d, lo, hi, planned)``,
    ``(label, d, lo, hi, planned, marks)`` or ``(label, d, lo, hi, planned, marks, reach)``; planned ones in black,
    exploratory in grey; a line at 0 and, with ``margin``, the plan's band of equivalence. ``marks``:
    ``[(x, "size" or "claim"), ...]`` on that row: a size rule's threshold (a red bar across the row) and a published
    claim (an orange star; where it lies off the axis, an arrow at the edge with its value). ``reach``: ``(lowest,
    highest)``, what the difference can be at all (:func:`grpo_lab.study.reach`): an interval that runs past it is
    drawn up to it, with a hollow square at the cut end, and the legend says so (a t-interval over two seeds of a
    pass@1 change from a start of 0.15 can run from -0.93 to +1.08, where only [-0.15, +0.85] can occur). The x axis
    is fitted to the intervals as drawn and the thresholds."""
    longest = max([len(r[0]) for r in rows] or [10])
    fig, ax = _fig(width=max(WIDTH, 4.5 + 0.065 * longest), height=max(2.4, 0.4 * len(rows) + 1.8), title=title)
    shown = [0.0]
    claims = []
    kinds = set()
    cut = False
    for i, (label, d, lo, hi, planned, *rest) in enumerate(rows):
        y = len(rows) - 1 - i
        colour = "0.1" if planned else "0.55"
        low, high = rest[1] if len(rest) > 1 and rest[1] is not None else (-np.inf, np.inf)
        lo_shown, hi_shown = max(lo, low), min(hi, high)
        ax.errorbar([d], [y], xerr=[[d - lo_shown], [hi_shown - d]], color=colour, marker="D" if planned else "o",
                    ms=5, capsize=3, ls="none")
        for end in [x for x, past in ((lo_shown, lo < low), (hi_shown, hi > high)) if past]:
            ax.plot([end], [y], marker="s", ms=7, mfc="white", mec=colour, mew=1.5, ls="none", zorder=3)
            cut = True
        shown += [lo_shown, hi_shown]
        for x, kind in (rest[0] if rest else []):
            kinds.add(kind)
            if kind == "size":
                ax.plot([x, x], [y - 0.35, y + 0.35], color="#d62728", lw=2)
                shown.append(x)
            else:
                claims.append((x, y))
    ax.axvline(0, color="0.4", lw=1, ls=":")
    handles = [Patch(color="0.1", label="planned (read with the plan's correction)"),
               Patch(color="0.55", label="exploratory (no verdict)")]
    if margin:
        ax.axvspan(-margin, margin, color="#2ca02c", alpha=0.1, lw=0)
        handles.append(Patch(color="#2ca02c", alpha=0.25, label=f"the plan's margin, ±{margin:g}"))
        shown += [-margin, margin]
    limits = _fit(shown)
    if limits:
        ax.set_xlim(*limits)
    left, right = ax.get_xlim()
    for x, y in claims:
        if left <= x <= right:
            ax.plot([x], [y], marker="*", color="#ff7f0e", ms=11, ls="none")
        else:  # off the axis: an arrow at the edge pointing to it, with its value
            edge = right if x > right else left
            span = right - left
            ax.annotate(f"claim {x:+.3f}", xy=(edge, y), xytext=(edge - 0.2 * span if x > right else edge + 0.2 * span,
                                                                   y + 0.3),
                        color="#ff7f0e", fontsize=7, ha="center",
                        arrowprops=dict(arrowstyle="->", color="#ff7f0e"))
    if cut:
        handles.append(Line2D([], [], marker="s", ms=6, mfc="white", mec="0.1", ls="none",
                              label="interval cut at what the difference can reach"))
    if "size" in kinds:
        handles.append(Patch(color="#d62728", label="a size rule's threshold"))
    if claims:
        handles.append(Patch(color="#ff7f0e", label="the published claim (arrow: off the axis)"))
    ax.set_yticks(range(len(rows)), [r[0] for r in rows][::-1], fontsize=8)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlabel(xlabel)
    fig.legend(handles=handles, fontsize=7, loc="outside lower center", ncols=min(len(handles), 3))
    return fig


def lucky_advantages(Gs, values: dict, title: str | None = None) -> Figure:
    """One success in a group of G (lesson 14): ``values[method] = [(A_success, A_failure) per G]``. Two panels,
    the success's advantage (log axis: 0.5 to 15 share it) and each failure's (linear), each point where it is
    (exact values: no jitter, no error bars), one colour and marker per estimator; a method whose values equal an
    earlier one's in a panel says so in that panel's legend."""
    fig, axes = _fig(ncols=2, height=3.4, width=WIDTH * 1.3, title=title)
    for ax, j, name in ((axes[0], 0, "advantage of the one success"), (axes[1], 1, "advantage of each failure")):
        seen: dict = {}
        for method, rows in values.items():
            y = [r[j] for r in rows]
            st = style(method)
            ax.plot(Gs, y, color=st["color"], marker=st["marker"], ls="-", lw=1.2, ms=6,
                    label=_same_as(method, y, seen))
        ax.set_xscale("log", base=2)
        ax.set_xticks(list(Gs), [str(g) for g in Gs])
        ax.minorticks_off()
        if j == 0:
            ax.set_yscale("log", base=2)
            top = max(r[0] for rows in values.values() for r in rows)
            ticks = [2.0 ** k for k in range(-3, 8) if 2.0 ** (k - 1) <= top * 1.5]
            ax.set_yticks(ticks, [f"{t:g}" for t in ticks])
            ax.minorticks_off()
        else:
            ax.axhline(0, color="0.5", lw=0.8, ls=":")
        ax.set_xlabel("group size G")
        ax.set_ylabel(name)
        ax.legend(fontsize=7)
    return fig
