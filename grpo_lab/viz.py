"""Figures for the course: pure functions that take numbers and return a matplotlib Figure.

Nothing here computes a result the notebooks assert on; the math lives in
:mod:`grpo_lab.advantages`, :mod:`grpo_lab.starvation` and :mod:`grpo_lab.simulator`.
Each function names the notebook that introduces it.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from .advantages import compute_advantages
from .starvation import degeneracy_rate

WIDTH = 7.0  # inches: readable at notebook width


class LabFigure(Figure):
    """A matplotlib Figure that renders itself as PNG in Jupyter, with no pyplot state involved."""

    def _repr_png_(self) -> bytes:
        import io

        from matplotlib.backends.backend_agg import FigureCanvasAgg

        buf = io.BytesIO()
        FigureCanvasAgg(self).print_png(buf)
        return buf.getvalue()


def _fig(ncols: int = 1, height: float = 3.4, width: float = WIDTH):
    fig = LabFigure(figsize=(width, height), layout="constrained", dpi=100)
    axes = fig.subplots(1, ncols)
    return fig, axes


def group_advantages(rewards, G: int, methods=("grpo", "drgrpo", "sign")) -> Figure:
    """Bars of each completion's reward and advantage under several estimators (notebook 01)."""
    r = np.asarray(rewards, dtype=float).reshape(-1)
    fig, ax = _fig(height=3.2)
    x = np.arange(r.size)
    width = 0.8 / (len(methods) + 1)
    ax.bar(x - 0.4 + width / 2, r, width, label="reward", color="0.6")
    for i, m in enumerate(methods, start=1):
        adv = compute_advantages(r, G, m).numpy()
        ax.bar(x - 0.4 + width * (i + 0.5), adv, width, label=f"A ({m})")
    for b in range(1, r.size // G):
        ax.axvline(b * G - 0.5, color="k", lw=0.8, ls=":")
    ax.axhline(0, color="k", lw=0.6)
    ax.set_xlabel(f"completion (groups of G={G}, separated by dotted lines)")
    ax.set_ylabel("reward / advantage")
    ax.legend(fontsize=8, ncols=len(methods) + 1, loc="upper left")
    return fig


def degeneracy_vs_p(G: int, p_mc=None, rate_mc=None, rate_mc_se=None) -> Figure:
    """The closed form p^G + (1-p)^G against Monte Carlo points (notebook 01)."""
    fig, ax = _fig()
    p = np.linspace(0, 1, 201)
    ax.plot(p, degeneracy_rate(p, G), label=f"closed form, G={G}")
    if p_mc is not None:
        ax.errorbar(p_mc, rate_mc, yerr=None if rate_mc_se is None else 2 * np.asarray(rate_mc_se), fmt="o",
                    ms=4, label="Monte Carlo (±2 s.e.)")
    ax.set_xlabel("success probability p")
    ax.set_ylabel("P(group degenerate)")
    ax.set_ylim(0, 1.02)
    ax.legend()
    return fig


def degeneracy_heatmap(ps, Gs) -> Figure:
    """Heatmap of p^G + (1-p)^G over a grid of p and G (notebook 01)."""
    ps, Gs = np.asarray(ps, dtype=float), np.asarray(Gs)
    rate = degeneracy_rate(ps[None, :], Gs[:, None])
    fig, ax = _fig(height=3.6)
    im = ax.imshow(rate, aspect="auto", origin="lower", cmap="magma", vmin=0, vmax=1,
                   extent=(ps[0], ps[-1], -0.5, len(Gs) - 0.5))
    ax.set_yticks(range(len(Gs)), [str(g) for g in Gs])
    ax.set_xlabel("success probability p")
    ax.set_ylabel("group size G")
    fig.colorbar(im, ax=ax, label="P(group degenerate)")
    for level in (0.5, 0.9):
        ax.contour(ps, np.arange(len(Gs)), rate, levels=[level], colors="w", linewidths=0.8)
    return fig


def jensen_bars(gaps: dict) -> Figure:
    """Real vs i.i.d. degeneracy, split into all-fail and all-pass, per population (notebook 02).

    ``gaps`` maps a population name to a :class:`grpo_lab.starvation.JensenGap`.
    """
    names = list(gaps)
    fig, ax = _fig(height=3.6)
    x = np.arange(len(names))
    w = 0.38
    real_f = [gaps[n].real_all_fail for n in names]
    real_p = [gaps[n].real_all_pass for n in names]
    iid_f = [gaps[n].iid_all_fail for n in names]
    iid_p = [gaps[n].iid_all_pass for n in names]
    ax.bar(x - w / 2, real_f, w, color="C3", label="real: all fail")
    ax.bar(x - w / 2, real_p, w, bottom=real_f, color="C2", label="real: all pass")
    ax.bar(x + w / 2, iid_f, w, color="C3", alpha=0.45, hatch="//", label="i.i.d. at mean p: all fail")
    ax.bar(x + w / 2, iid_p, w, bottom=iid_f, color="C2", alpha=0.45, hatch="//", label="i.i.d.: all pass")
    ax.set_xticks(x, names, fontsize=8)
    ax.set_ylabel("fraction of groups degenerate")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=7, ncols=2)
    return fig


def rate_vs_group_size(Gs, curves: dict) -> Figure:
    """Degenerate fraction and samples per informative group against G (notebook 02)."""
    fig, (a, b) = _fig(ncols=2)
    Gs = np.asarray(Gs)
    for name, rates in curves.items():
        rates = np.asarray(rates)
        a.plot(Gs, rates, "o-", ms=3, label=name)
        b.plot(Gs, Gs / np.clip(1 - rates, 1e-9, None), "o-", ms=3, label=name)
    a.set_xlabel("group size G")
    a.set_ylabel("degenerate fraction")
    a.set_xscale("log", base=2)
    b.set_xlabel("group size G")
    b.set_ylabel("samples per informative group")
    b.set_xscale("log", base=2)
    b.set_yscale("log")
    a.legend(fontsize=7)
    return fig


def advantage_table(G: int, methods, values: dict) -> Figure:
    """Heatmap: advantage of a success / a failure for each k-of-G composition (notebook 03).

    ``values[method]`` is a ``[G+1, 2]`` array: (advantage of a success, of a failure) for
    k = 0..G successes; NaN where no such completion exists.
    """
    fig, axes = _fig(ncols=2, height=0.45 * len(methods) + 1.4)
    for j, (ax, title) in enumerate(zip(axes, ("a success", "a failure"))):
        grid = np.array([values[m][:, j] for m in methods])
        lim = np.nanmax(np.abs(grid))
        ax.imshow(grid, cmap="RdBu", vmin=-lim, vmax=lim, aspect="auto")
        for (i, k), v in np.ndenumerate(grid):
            if np.isfinite(v):
                ax.text(k, i, f"{v:.2f}", ha="center", va="center", fontsize=6)
        ax.set_xticks(range(G + 1))
        ax.set_yticks(range(len(methods)), methods if j == 0 else [""] * len(methods), fontsize=8)
        ax.set_xlabel(f"k successes out of G={G}")
        ax.set_title(f"advantage of {title}", fontsize=9)
    return fig


def training_curves(results: dict, key: str = "success", ylabel: str = "mean success probability") -> Figure:
    """Mean over seeds with a 95% band, one line per label (notebook 04).

    ``results[label]`` is a list of :class:`grpo_lab.simulator.SimResult` (one per seed).
    """
    fig, ax = _fig()
    for label, runs in results.items():
        y = np.stack([getattr(r, key) for r in runs])
        m = y.mean(0)
        half = 1.96 * y.std(0, ddof=1) / np.sqrt(len(runs)) if len(runs) > 1 else np.zeros_like(m)
        ax.plot(runs[0].steps, m, label=label)
        ax.fill_between(runs[0].steps, m - half, m + half, alpha=0.2)
    ax.set_xlabel("step")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7, ncols=2)
    return fig


def success_histograms(before, after: dict, bins: int = 20) -> Figure:
    """Per-prompt success probability before training and after, per estimator (notebook 04)."""
    fig, ax = _fig()
    edges = np.linspace(0, 1, bins + 1)
    ax.hist(before, bins=edges, histtype="stepfilled", color="0.8", label="before")
    for label, p in after.items():
        ax.hist(p, bins=edges, histtype="step", lw=1.4, label=label)
    ax.set_yscale("log")
    ax.set_xlabel("per-prompt success probability")
    ax.set_ylabel("prompts")
    ax.legend(fontsize=7, ncols=2)
    return fig


def passk_curves(ks, curves: dict, bands: dict | None = None) -> Figure:
    """pass@k against k for several policies, with optional (lo, hi) bands (notebooks 04, 07)."""
    fig, ax = _fig()
    for label, y in curves.items():
        ax.plot(ks, y, "o-", ms=3, label=label)
        if bands and label in bands:
            lo, hi = bands[label]
            ax.fill_between(ks, lo, hi, alpha=0.2)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("k")
    ax.set_ylabel("pass@k")
    ax.legend(fontsize=7, ncols=2)
    return fig


def sweep(xs, results: dict, xlabel: str, ylabel: str) -> Figure:
    """Final metric (mean, lo, hi) against a swept setting, one line per estimator (notebook 04)."""
    fig, ax = _fig()
    for label, rows in results.items():
        m, lo, hi = (np.asarray(v) for v in zip(*rows))
        ax.errorbar(xs, m, yerr=[m - lo, hi - m], fmt="o-", ms=3, capsize=2, label=label)
    ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7, ncols=2)
    return fig


def _smooth(y: np.ndarray, window: int) -> np.ndarray:
    if window <= 1 or y.size < window:
        return y
    k = np.ones(window) / window
    return np.convolve(np.pad(y, (window - 1, 0), mode="edge"), k, mode="valid")


def log_curves(histories: dict, key: str, ylabel: str, window: int = 10, ax=None) -> Figure:
    """A logged metric over training steps: mean over seeds (moving average of ``window`` steps), with a band
    of ±1.96 standard errors across seeds (notebook 05, ``grpo-lab compare``).

    ``histories[label]`` is a list (one per seed) of log rows ``{"step": …, key: …}``.
    """
    fig, ax = _fig() if ax is None else (ax.figure, ax)
    for label, runs in histories.items():
        rows = [[(r["step"], r[key]) for r in h if r.get(key) is not None] for h in runs]
        n = min(len(r) for r in rows) if rows else 0
        if n == 0:
            continue
        steps = np.array([s for s, _ in rows[0][:n]])
        y = np.stack([_smooth(np.array([v for _, v in r[:n]], dtype=float), window) for r in rows])
        m = y.mean(0)
        half = 1.96 * y.std(0, ddof=1) / np.sqrt(len(rows)) if len(rows) > 1 else np.zeros_like(m)
        ax.plot(steps, m, label=label)
        ax.fill_between(steps, m - half, m + half, alpha=0.2)
    ax.set_xlabel("step")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7, ncols=2)
    return fig


def starvation_curves(histories: dict, window: int = 10) -> Figure:
    """Reward, all-fail and all-pass fractions of the training groups over steps, side by side (notebook 05)."""
    fig, axes = _fig(ncols=3, height=3.2, width=WIDTH * 1.6)
    for ax, (key, label) in zip(axes, [("reward", "mean reward (training batch)"),
                                       ("starvation/all_fail", "all-fail fraction of groups"),
                                       ("starvation/all_pass", "all-pass fraction of groups")]):
        log_curves(histories, key, label, window=window, ax=ax)
    return fig


def level_bars(start: dict, after: dict, ylabel: str = "greedy accuracy") -> Figure:
    """Accuracy per difficulty level: the starting policy, and each label's mean ± 95% CI over seeds (notebook 05).

    ``start`` maps level → accuracy; ``after[label]`` maps level → (mean, lo, hi).
    """
    fig, ax = _fig()
    levels = sorted(start)
    x = np.arange(len(levels))
    width = 0.8 / (len(after) + 1)
    ax.bar(x - 0.4 + width / 2, [start[lv] for lv in levels], width, color="0.7", label="start")
    for i, (label, by_level) in enumerate(after.items(), start=1):
        m = np.array([by_level[lv][0] for lv in levels])
        lo = np.array([by_level[lv][1] for lv in levels])
        hi = np.array([by_level[lv][2] for lv in levels])
        ax.bar(x - 0.4 + width * (i + 0.5), m, width, yerr=[m - lo, hi - m], capsize=2, label=label)
    ax.set_xticks(x, [f"level {lv}" for lv in levels])
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=7, ncols=3)
    return fig


def log_series(log, keys, ylabel: str) -> Figure:
    """A logged metric of an existing run over steps, one thin line per run in the log (notebook 08, inspect).

    ``log`` is a :class:`grpo_lab.diagnose.RunLog`; ``keys`` one key or a tuple of keys.
    """
    keys = (keys,) if isinstance(keys, str) else tuple(keys)
    fig, ax = _fig(height=3.0)
    runs = {}
    for r in log.rows:
        runs.setdefault(r.get("run"), []).append(r)
    for j, key in enumerate(keys):
        for i, (run, rows) in enumerate(runs.items()):
            pts = [(r["step"], r[key]) for r in rows if r.get(key) is not None]
            if not pts:
                continue
            s, v = zip(*pts)
            label = key if (i == 0 and len(keys) > 1) else (None if len(keys) > 1 or len(runs) > 8 else run)
            ax.plot(s, v, lw=0.8 if len(runs) > 1 else 1.4, alpha=0.6 if len(runs) > 1 else 1, color=f"C{j}"
                    if len(keys) > 1 else None, label=label)
    ax.set_xlabel("step")
    ax.set_ylabel(ylabel)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, ncols=2)
    return fig


def count_bars(counts, xlabel: str, ylabel: str) -> Figure:
    """Bars of counts indexed 0 … len-1 (notebook 08, ``grpo-lab inspect``)."""
    fig, ax = _fig(height=3.0)
    counts = np.asarray(counts)
    ax.bar(np.arange(counts.size), counts, color="C0")
    ax.set_xticks(np.arange(counts.size))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return fig
