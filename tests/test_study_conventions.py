"""Issue 56: the study engine's second edition. Every statistical choice is a plan field stated in the report
(the degrees of freedom, the interval each size rule reads); hypotheses are judged by the engine, never by an
extras module; every planned verdict is re-read under the reasonable alternatives and called fragile where one
flips it; the design checks a referee made are the engine's (a comparison counted twice, a confounded one, the
manipulation check's three words, the evaluation's distinct and effective size, near-duplicates)."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from grpo_lab import stats
from grpo_lab.study import (Hypothesis, Reading, Spec, Study, build, headline, judge, parse_measure,
                            verdict_word)
from grpo_lab.study.readings import bootstrap, holm_levels

from test_study import make_study

STUDY3 = Path(__file__).resolve().parents[1] / "docs" / "results" / "smollm2-study3" / "plan.toml"


@pytest.fixture(scope="module")
def study3():
    return Study.load(STUDY3)


def test_study3_declares_its_df_and_its_rules_and_the_report_names_them(study3):
    assert study3.plan.df == "min-n" and study3.conventions.df == "min-n"
    text = (STUDY3.parent / "REPORT.md").read_text()
    assert "smaller arm's n − 1 degrees of freedom (min-n" in text and "`df = \"min-n\"`" in text
    assert "H1's size rule reads the per-comparison interval" in text
    assert "## Does the verdict depend on a convention?" in text


def test_welch_df_moves_h2s_upper_bound_below_the_rule(study3):
    """The acceptance test from the tracked runs: under Welch-Satterthwaite df H2's interval tops out at about
    +0.095, below PLAN.md's +0.10, where min-n gives +0.105; the engine calls H2 fragile for it."""
    h2 = next(h for h in study3.plan.hypotheses if h.name == "H2")
    assert study3.reading(h2.test).hi == pytest.approx(0.1051, abs=5e-4)
    welch = Study(replace(study3.plan, df="welch"))
    r = welch.reading(h2.test)
    assert r.hi == pytest.approx(0.095, abs=1e-3)
    assert judge(h2, study3.reading(h2.test)).size == "not refuted" and judge(h2, r).size == "refuted"
    rows = {what[0].name: flips for kind, what, _, flips in study3.robust if kind == "hypothesis"}
    assert "Welch–Satterthwaite df" in rows["H2"] and any("Holm level" in a for a in rows["H1"])
    assert "**Fragile**" in headline(study3) and "H2" in headline(study3).split("**Fragile**")[1]


def test_the_doubled_comparison_is_counted_once(study3):
    """Comparisons 2 and 4 read the same arms once the selections chose lr 3e-4 for both: Holm counts 5 tests."""
    twins = [r for r in study3.planned if r.same_as]
    assert [r.spec.label for r in twins] == ["sign − drgrpo, each at its best rate on validation (H2's test)"]
    assert twins[0].same_as == "sign − drgrpo at β 0, lr 3e-4 (H1; the shared rate 3e-4)"
    unique = [r for r in study3.planned if not r.same_as]
    assert len(unique) == 5 and sorted(r.level for r in unique)[-1] == pytest.approx(1 - 0.05 / 5)


def test_the_lr_1e3_arms_moved_their_measure_the_wrong_way_not_did_not_take(study3):
    text = headline(study3)
    assert "did not measurably" not in text
    assert "the wrong way (down from the start) in sign, lr 1e-3, drgrpo, lr 1e-3" in text


def test_the_evaluation_size_and_near_duplicates(study3):
    """237 distinct problems in 500 draws, an effective number of about 68; 23 test problems (104 draws) are
    commuted twins of training problems; exact-text disjointness still holds."""
    (arms, task, o, err), = study3.overlap()
    assert err is None and (o["draws"], o["distinct"], o["in_training"]) == (500, 237, 0)
    assert round(o["effective"]) == 68 and (o["near"], o["near_draws"]) == (23, 104)


def test_a_commuted_sum_is_one_problem_in_canonical_form():
    from grpo_lab.tasks import Problem, get_task

    t = get_task("gym:chain_sum:min_terms=2,max_terms=2,min_digits=1,max_digits=2")
    form = lambda prompt: t.canonical(Problem(prompt, "0", 0))  # noqa: E731
    head = "State the final answer to the following arithmetic problem: "
    assert form(head + "3 + 1 =") == form(head + "1 + 3 =") != form(head + "3 - 1 =")
    assert form(head + "4 - 7 =") == form(head + "-7 + 4 =")
    assert get_task("arithmetic").canonical(Problem("1+3=", "4", 0)) == "1+3="  # the default: exact text


def _reading(d, lo, hi, apart, level=None, label="x − y") -> Reading:
    spec = Spec("x", "y", label, parse_measure("pass@1", {}, "t"), "planned", True)
    r = Reading(spec, 4, 4, d=d, lo=lo, hi=hi, p=0.01 if apart else 0.5, kind="welch", apart=apart, level=level)
    r.se, r.dof = (hi - lo) / 2 / stats.t_quantile(3), 3.0
    return r


@pytest.mark.parametrize("d, apart, predicts, verdict", [
    (0.2, True, "a", "supported"), (-0.2, True, "a", "contradicted"),
    (-0.2, True, "b", "supported"), (0.2, True, "b", "contradicted"), (0.01, False, "a", "not supported")])
def test_a_hypothesis_verdict_reverses_with_the_data(d, apart, predicts, verdict):
    h = Hypothesis("H", "", "x − y", predicts)
    assert judge(h, _reading(d, d - 0.1, d + 0.1, apart)).verdict == verdict


def test_a_size_rule_reads_the_interval_the_plan_names():
    """Per comparison a top of +0.08 refutes a +0.10 explanation; at the Holm level (a wider interval) the same data
    may not: the rule says which it reads, and the robustness section reads the other."""
    r = _reading(0.0, -0.08, 0.08, False, level=1 - 0.05 / 4)
    per = judge(Hypothesis("H", "", "x − y", "a", 0.10, "per-comparison"), r)
    holm = judge(Hypothesis("H", "", "x − y", "a", 0.10, "holm"), r)
    assert per.size == "refuted" and per.rule_hi == pytest.approx(0.08)
    assert holm.size == "not refuted" and holm.rule_hi > 0.10 and holm.rule_level == pytest.approx(0.9875)
    low = judge(Hypothesis("H", "", "x − y", "b", 0.10, "per-comparison"), _reading(-0.05, -0.13, 0.03, False))
    assert low.size == "not refuted"  # predicts b ahead by 0.10: the interval reaches -0.13
    idle = judge(Hypothesis("H", "", "x − y", "b", None, "per-comparison", 0.03), _reading(0.0, -0.02, 0.02, False))
    assert idle.idle is True and judge(Hypothesis("H", "", "x − y", "b", None, "per-comparison", 0.01),
                                       _reading(0.0, -0.02, 0.02, False)).idle is False


def test_holm_levels_follow_the_step_down():
    assert holm_levels([0.3, 0.001, 0.02], 0.05) == pytest.approx([1 - 0.05, 1 - 0.05 / 3, 1 - 0.05 / 2])


def test_the_bootstrap_resamples_problems_and_seeds():
    rng = np.random.default_rng(0)
    a, b = rng.random((6, 50)), rng.random((6, 50)) * 0.5
    d, draws = bootstrap([(a, 1), (b, -1)], resamples=2000)
    assert d == pytest.approx(a.mean() - b.mean()) and abs(draws.mean() - d) < 0.01
    same, none = bootstrap([(a, 1), (a, -1)], paired=True)
    assert same == 0 and np.allclose(none, 0)  # the same arm paired by seed and problem: no difference at all
    _, fixed = bootstrap([(a[:1], 1)], resamples=500)  # one seed: only the problems vary
    assert fixed.std() > 0


def test_the_direction_is_read_at_the_plans_alpha(tmp_path):
    """Issue 58's first finding: at alpha 0.45 without correction a difference favouring sign was reported as
    "grpo ahead" (the direction came from the 95% interval's side). The side is d's sign, at the plan's level."""
    plan = make_study(tmp_path, means={"grpo": 0.50, "sign": 0.58}, analysis="alpha = 0.45")
    plan.write_text(plan.read_text().replace('correction = "holm"', 'correction = "none"'))
    s = Study.load(plan)
    r = s.planned[0]
    assert r.d > 0 and r.apart and 0.05 < r.p < 0.45
    assert stats.diff_ci(*(list(s.values(x).values()) for x in ("sign", "grpo")), df="welch")[1] < 0  # 95%: not apart
    assert verdict_word(s, r) == "sign ahead" and "grpo ahead" not in headline(s)
    assert "α = 0.45" in headline(s) and "55% before correction" in build(plan)[0][plan.parent / "REPORT.md"]


def test_an_extras_headline_is_the_authors_reading_not_the_verdict(tmp_path):
    plan = make_study(tmp_path, means={"grpo": 0.3, "sign": 0.7})
    (tmp_path / "extras.py").write_text('def headline(study):\n    return "SIGN WINS BIG, the authors say."\n')
    plan.write_text('extras = "extras.py"\n' + plan.read_text())
    text = build(plan)[0][tmp_path / "REPORT.md"]
    found = text.split("## What it found")[1]
    assert found.lstrip().startswith("In short: ")  # the engine's plain lead, then its verdict, come first
    assert found.index(headline(Study.load(plan))[:40]) < found.index("SIGN WINS BIG")
    assert "**The authors' reading, not a verdict**" in found and "SIGN WINS BIG" in found
    assert found.index("SIGN WINS BIG") > found.index(headline(Study.load(plan))[:40])


def test_a_hypothesis_in_the_plan_is_judged_in_the_headline_and_reverses_with_the_data(tmp_path):
    hyp = '\n[[hypotheses]]\nname = "H"\nsays = "sign helps"\ntest = "sign − grpo"\nsize = 0.05\ninterval = "holm"\n'
    up = make_study(tmp_path / "up", means={"grpo": 0.3, "sign": 0.8})
    up.write_text(up.read_text() + hyp)
    down = make_study(tmp_path / "down", means={"grpo": 0.8, "sign": 0.3})
    down.write_text(down.read_text() + hyp)
    a, b = headline(Study.load(up)), headline(Study.load(down))
    assert "H (sign helps) **supported**" in a and "H (sign helps) **contradicted**" in b
    report = build(up)[0][up.parent / "REPORT.md"]
    assert "H's size rule reads the Holm-level interval" in report
    assert "| H (on sign − grpo) |" in report  # its row in the robustness table


def test_a_fragile_verdict_is_named_in_the_headline_and_a_firm_one_is_called_firm(study3, tmp_path):
    assert "**Fragile**" in headline(study3) and headline(study3).split("settle it): ")[1].startswith("H1 ")
    firm = Study.load(make_study(tmp_path, means={"grpo": 0.2, "sign": 0.9}))
    assert "**Firm**" in headline(firm) and "**Fragile**" not in headline(firm)


def test_comparisons_figure_draws_the_threshold_and_an_off_axis_claim():
    from grpo_lab.viz import comparison_intervals

    fig = comparison_intervals([("a − b", 0.02, -0.05, 0.1, True, [(0.10, "size"), (0.454, "claim")]),
                                ("c − d", -0.1, -0.2, 0.0, True)], title="t")
    ax = fig.axes[0]
    assert any(t.get_text() == "claim +0.454" for t in ax.texts)  # off the axis: an arrow with its value
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "a size rule's threshold" in labels and any("published claim" in x for x in labels)
    assert ax.get_xlim()[1] >= 0.10  # the threshold is on the axis


@pytest.mark.parametrize("name", ["smollm2-study2", "smollm2-study3", "harm", "smollm2-fastpath-paired"])
def test_each_tracked_study_names_its_df_and_lists_its_corrections(name):
    """Issue 56, item 7: the four tracked studies keep the df they were analysed with (min-n, now named), re-read
    every verdict under the alternatives, and list what changed in a Corrections section."""
    plan = STUDY3.parents[1] / name / "plan.toml"
    s = Study.load(plan)
    text = (plan.parent / "REPORT.md").read_text()
    assert s.plan.df == "min-n" and "(`df = \"min-n\"`)" in text
    assert "## Does the verdict depend on a convention?" in text and ("**Fragile**" in text or "**Firm**" in text)
    corrections = text.split("## Corrections")[1]
    assert "degrees of freedom" in corrections or "min-n" in corrections
