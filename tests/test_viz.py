"""grpo_lab.viz, widgets and gradrank (issue 29): a figure has a title, labelled axes and a legend where it draws
series, one colour per estimator; the widget renders a static figure headless; gradrank against an independent SVD."""

import io

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from grpo_lab import gradrank, viz, widgets  # noqa: E402
from grpo_lab.advantages import ESTIMATORS  # noqa: E402


def assert_readable(fig, legend=True):
    """A title (figure or axes), every drawn axes labelled on both sides, a legend where asked."""
    axes = [ax for ax in fig.axes if ax.has_data()]
    assert axes, "an empty figure"
    title = (fig._suptitle.get_text() if fig._suptitle is not None else "") or axes[0].get_title()
    assert title.strip(), "no title"
    for ax in axes:
        assert ax.get_xlabel().strip() and ax.get_ylabel().strip(), f"unlabelled axes in {title!r}"
    if legend:
        assert any(ax.get_legend() is not None for ax in fig.axes) or fig.legends, f"no legend in {title!r}"


def test_every_estimator_has_its_own_colour_everywhere():
    colours = [viz.style(m)["color"] for m in ESTIMATORS]
    assert len(set(colours)) == len(colours)
    assert viz.style("sign, lr 1e-3")["color"] == viz.style("sign")["color"]  # a label keeps its estimator's colour
    assert viz.style("a-new-label")["color"] == viz.style("a-new-label")["color"]


def test_figures_carry_titles_labels_and_legends():
    rng = np.random.default_rng(0)
    r = torch.tensor([0.0, 1, 0, 0, 1, 1, 1, 1])
    assert_readable(viz.group_advantages(r, 4))
    assert_readable(viz.degeneracy_vs_p(4))
    assert_readable(viz.rate_vs_group_size([2, 4, 8], {"iid": [0.5, 0.3, 0.1], "beta": [0.6, 0.4, 0.3]}))
    sweep = viz.sweep([1e-4, 3e-4], {"grpo": [(0.5, 0.4, 0.6), (0.45, 0.3, 0.6)], "sign": [(0.4, 0.35, 0.45),
                                                                                           (0.5, 0.2, 0.8)]},
                      "learning rate", "greedy accuracy", n_seeds=4, reference=(0.31, "start"))
    assert_readable(sweep)
    hist = {m: [[{"step": s, "reward": rng.uniform(), "starvation/all_fail": rng.uniform(0, .6),
                  "starvation/all_pass": rng.uniform(0, .2)} for s in range(1, 9)] for _ in range(2)]
            for m in ("grpo", "sign")}
    fig = viz.starvation_curves(hist, window=2)
    assert_readable(fig)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert any("grpo" in t for t in labels) and any("sign" in t for t in labels)
    assert_readable(viz.count_bars([3, 1, 0, 2, 5], "correct completions (k)", "groups"), legend=False)


def test_a_sweep_clips_fraction_intervals_to_0_1():
    fig = viz.sweep([1, 2], {"grpo": [(0.9, 0.7, 1.3), (0.1, -0.2, 0.3)]}, "x", "accuracy", n_seeds=3)
    ax = fig.axes[0]
    ys = np.concatenate([seg[:, 1] for coll in ax.collections for seg in getattr(coll, "get_segments", lambda: [])()])
    assert ys.size and ys.min() >= 0.0 and ys.max() <= 1.0


def test_the_widget_draws_its_static_figure_headless(capsys):
    fig = widgets.bandit_figure(p=0.3, G=4, method="sign", n_groups=3, seed=1)
    assert_readable(fig)
    capsys.readouterr()
    box = widgets.bandit_explorer(p=0.3, G=4, method="grpo")
    assert type(box).__name__ == "VBox"  # the sliders, below the figure already displayed
    # the static figure is drawn once, and nothing goes into the output widget as it is built (a captured output
    # makes a headless nbclient send on the shell channel it waits on: the autograde hang, nbclient issue 312)
    assert capsys.readouterr().out.count("Figure(") == 1 and box.children[1].outputs == ()
    sliders = box.children[0]
    sliders.children[0].value = 0.5  # a slider moves (as in a live kernel): now it redraws
    assert capsys.readouterr().out.count("Figure(") == 1


def test_gradrank_against_an_independent_svd():
    gen = torch.Generator().manual_seed(0)
    grads = torch.randn(8, 30, generator=gen, dtype=torch.float64)
    adv = torch.tensor([1.0, -1, 0, 0, 0.5, -0.5, 0, 2], dtype=torch.float64)
    C = gradrank.contribution_matrix(grads, adv)
    torch.testing.assert_close(C, adv[:, None] * grads)
    s = np.linalg.svd(C.numpy(), compute_uv=False)
    q = s / s.sum()
    q = q[q > 0]
    assert gradrank.effective_rank(C) == pytest.approx(float(np.exp(-(q * np.log(q)).sum())), rel=1e-10)
    assert gradrank.rank_above(C) == int((s >= 0.01 * s[0]).sum()) == 5  # five nonzero advantages: rank 5
    eye = torch.eye(3, dtype=torch.float64)
    assert gradrank.effective_rank(eye) == pytest.approx(3.0) and gradrank.effective_rank(torch.zeros(3, 3)) == 0.0
    U = gradrank.update_matrix(grads, adv, (5, 6))
    torch.testing.assert_close(U, (adv[:, None] * grads).mean(0).reshape(5, 6))
    M = torch.zeros(10, 10)
    M[0, 0] = 1.0
    M[1, 1] = 1e-4
    assert gradrank.sparsity(M) == pytest.approx(0.99) and gradrank.sparsity(torch.zeros(2, 2)) == 1.0
    with pytest.raises(ValueError, match="3 advantages for 8 completions"):
        gradrank.contribution_matrix(grads, adv[:3])


def test_one_markdown_table_helper():
    from grpo_lab.report import md_table

    assert md_table(("a", "b"), [(1, "x"), (2.5, None)]) == ["| a | b |", "|---|---|", "| 1 | x |", "| 2.5 | None |"]
    with pytest.raises(ValueError, match="table row 0 has 1 cells for 2 columns"):
        md_table(("a", "b"), [(1,)])


def test_a_zoomed_axis_starts_at_a_round_tick_and_says_so():
    """Issue 37, item 7: "(zoomed: axis starts at 0.00784)" became a round number the axis shows as a tick."""
    from grpo_lab import viz

    xs = [1e-4, 3e-4, 1e-3]
    rows = {"grpo": [(0.0081, 0.0080, 0.0082), (0.0085, 0.0084, 0.0086), (0.0090, 0.0089, 0.0091)]}
    ax = viz.sweep(xs, rows, "learning rate", "pass@1").axes[0]
    lo = ax.get_ylim()[0]
    assert 0 < lo <= 0.008 and f"axis starts at {lo:g}, not 0" in ax.get_ylabel()
    assert len(f"{lo:g}") <= 6  # a round number, e.g. 0.0078, not 0.00784213


def test_a_series_equal_to_one_drawn_before_stays_visible():
    """Issue 37 (notebook 06): grpo and sign trained two steps on the same batches logged identical curves and sign's
    line hid grpo's. A series equal to an earlier one is drawn dashed on top and its legend names the other."""
    rows = [[{"step": s, "reward": r, "starvation/all_fail": 0.25, "starvation/all_pass": 0.0}
             for s, r in ((1, 0.31), (2, 0.19))]]
    fig = viz.starvation_curves({"grpo": rows, "sign": rows, "rloo": [[{**r, "reward": 0.5} for r in rows[0]]]},
                                window=1)
    assert_readable(fig)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "grpo" in labels and "sign (same as grpo)" in labels and "rloo" in labels, labels
    sign = [ln for ln in fig.axes[0].get_lines() if ln.get_label() == "sign (same as grpo)"][0]
    assert sign.get_linestyle() != "-"  # dashed, so the grpo line under it shows through


def test_the_band_legend_names_the_seed_counts_of_every_series():
    """Study 2's stage-B figure: series with 6 and 4 seeds in one panel; the band's legend said n=4, the last
    series' count. With different counts it gives the range; with equal counts, the count."""
    def runs(n):
        return [[{"step": s, "starvation/all_fail": 0.1 * k + 0.01 * s} for s in range(1, 5)] for k in range(n)]

    def band_label(hist):
        labels = [t.get_text() for t in viz.log_curves(hist, "starvation/all_fail", "all-fail", window=1).axes[0]
                  .get_legend().get_texts()]
        return next(t for t in labels if t.startswith("band"))

    assert band_label({"grpo": runs(6), "dapo": runs(4)}).endswith("(n=4–6 by series)")
    assert band_label({"grpo": runs(3), "dapo": runs(3)}).endswith("(n=3)")


def test_changes_by_arm_can_share_one_scale_across_panels():
    """Study 2's figure: one panel per learning rate of the same measure. Each panel scaled to its own values made a
    change of -0.05 at lr 1e-3 look as large as +0.6 at lr 1e-4; with same_scale every panel spans the largest."""
    panels = {"lr 1e-4": {"grpo": [0.6, 0.65], "sign": [0.5, 0.55]}, "lr 1e-3": {"grpo": [-0.05], "sign": []}}
    own = viz.changes_by_arm(panels)
    assert own.axes[1].get_ylim()[1] < 0.1  # the default: each panel its own span
    fig = viz.changes_by_arm(panels, same_scale=True)
    assert_readable(fig)
    assert fig.axes[0].get_ylim() == fig.axes[1].get_ylim()
    assert fig.axes[1].get_ylim()[1] >= 0.65


def test_a_sweep_shows_two_bars_where_two_methods_have_the_same_value():
    """Issue 40, item 6: in lesson 10's sweep grpo and drgrpo both had 0.570 at lr 1e-4 and one bar hid the other.
    Each series is now drawn a little to the side (the ticks stay at the swept values)."""
    xs = [1e-4, 3e-4]
    same = [(0.57, 0.46, 0.68), (0.52, 0.28, 0.75)]
    fig = viz.sweep(xs, {"grpo": same, "drgrpo": [(0.57, 0.46, 0.68), (0.6, 0.5, 0.7)]}, "learning rate", "greedy")
    assert_readable(fig)
    ax = fig.axes[0]
    x0, x1 = (c.lines[0].get_xdata() for c in ax.containers)  # the two errorbar series, in order
    assert x0[0] != x1[0] and abs(np.log10(x0[0] / x1[0])) < 0.1  # apart, and still at the same setting
    assert list(ax.get_xticks()) == xs


def test_a_second_series_of_one_estimator_keeps_its_colour_and_looks_different():
    """Study 4's curve: Sign at constant rates and Sign under the paper's optimizer (one point) shared a colour and a
    3-point marker, so the single point could not be told from the line's. A second series of an estimator keeps the
    colour (one colour per estimator) with another marker, drawn hollow and larger."""
    fig = viz.sweep([1e-4, 3e-4], {"sign": [(0.1, 0.05, 0.15), (0.5, 0.4, 0.6)],
                                   "sign, adam_beta2 0.95": [(float("nan"),) * 3, (0.15, 0.1, 0.2)]},
                    "learning rate", "pass@1")
    assert_readable(fig)
    first, second = (c.lines[0] for c in fig.axes[0].containers)
    assert first.get_color() == second.get_color()
    assert first.get_marker() != second.get_marker() and second.get_markersize() > first.get_markersize()
    assert second.get_markerfacecolor() == "white" != first.get_markerfacecolor()


def test_a_sweep_can_put_its_legend_below_the_axes():
    """A study's curve (study 4: intervals over three seeds reach the top corner): ``legend_below`` lays the legend
    under the axes; by default it stays on them, as the lessons' sweeps draw it."""
    rows = {m: [(0.45, 0.0, 1.0), (0.5, 0.1, 0.9)] for m in ("sign", "drgrpo", "sign, other", "drgrpo, other")}
    for below in (True, False):
        fig = viz.sweep([1e-4, 1e-3], rows, xlabel="lr", ylabel="pass@1", title="t", legend_below=below)
        fig.savefig(io.BytesIO(), format="png")
        box = fig.axes[0].get_window_extent()
        legend = (fig.legends[0] if below else fig.axes[0].get_legend()).get_window_extent()
        assert (legend.y1 <= box.y0 + 1) == below and legend.y0 >= fig.bbox.y0 - 1
        assert len(fig.legends) == int(below) and (fig.axes[0].get_legend() is None) == below


def test_arms_per_seed_says_the_start_band_only_where_it_draws_one():
    arms = {"grpo": [0.70, 0.72, 0.68], "sign": [0.66, 0.69, 0.71]}
    for se, band in ((0.01, True), (None, False), (0.0, False)):
        fig = viz.arms_per_seed(arms, ylabel="pass@1", start=(0.65, se), title="t")
        ax = fig.axes[0]
        labels = [t.get_text() for t in fig.legends[0].get_texts()]
        assert "the start" in labels
        assert any("sampling s.e." in t for t in labels) is band, labels
        assert (len(ax.patches) > 0) is band  # the band is drawn exactly where the legend names it
        lo, hi = ax.get_ylim()
        assert lo > 0.5 and hi < 0.85  # fitted to the seeds and the start, not to [0, 1]
    fig = viz.arms_per_seed(arms, ylabel="pass@1", title="t")
    colours = {ln.get_color() for ln in fig.axes[0].lines if ln.get_marker() == "o"}
    assert len(colours) == 2  # one colour per arm


def test_arms_per_seed_keeps_its_legend_off_the_data():
    """Twelve arms whose last interval reaches the top (study 4's figure): the legend sits below the axes, so it
    covers no dot, no interval and not the title; a floor-only clip is said as such."""
    arms = {f"arm {i}": [0.1 + 0.04 * i, 0.15 + 0.04 * i, 0.3 + 0.04 * i] for i in range(12)}
    fig = viz.arms_per_seed(arms, ylabel="pass@1", start=(0.08, 0.004), title="t", clip=(0.0, float("inf")))
    fig.savefig(io.BytesIO(), format="png")  # lays the figure out as the report's file is
    ax = fig.axes[0]
    legend, box = fig.legends[0].get_window_extent(), ax.get_window_extent()
    assert legend.y1 <= box.y0 + 1  # below the axes, not over them (nor over the title)
    assert legend.y0 >= fig.bbox.y0 - 1 and legend.x1 <= fig.bbox.x1 + 1  # and inside the figure
    assert any(t.get_text().endswith("drawn at or above 0") for t in fig.legends[0].get_texts())


def test_arms_per_seed_draws_a_fractions_interval_inside_its_range_when_asked():
    """Two seeds far apart give a t-interval reaching below 0; the study report's tables clip a fraction's interval
    to [0, 1], so its figure draws it there too (study 3's interim figure ran from -1.5 to 2 for pass@1)."""
    arms = {"a": [0.52, 0.40], "b": [0.10, 0.12, 0.11]}
    raw = viz.arms_per_seed(arms, ylabel="pass@1", title="t")
    assert raw.axes[0].get_ylim()[0] < -0.3  # the raw t-interval over two seeds (0.46 ± 0.76)
    fig = viz.arms_per_seed(arms, ylabel="pass@1", title="t", clip=(0.0, 1.0))
    ax = fig.axes[0]
    lo, hi = ax.get_ylim()
    assert -0.15 < lo <= 0.0 and 1.0 <= hi < 1.15  # the clipped intervals and a margin
    ends = [y for c in ax.containers for seg in c.lines[2][0].get_segments() for _, y in seg]
    assert min(ends) >= 0.0 and max(ends) <= 1.0
    assert any("within [0, 1]" in t.get_text() for t in fig.legends[0].get_texts())
