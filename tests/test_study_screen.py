"""Issue 107: a report's first screen is one plain sentence whose caveat comes first, the planned comparisons'
figure, and one table row per planned comparison naming the quantity it compares; numbers never print as bugs."""

from grpo_lab.study import Study, lead
from grpo_lab.study.data import _fmt
from grpo_lab.study.render import render_report
from grpo_lab.study.screen import quantity, table

from test_study import make_study
from test_study_robust import rank_study


def test_the_lead_says_first_when_no_arm_moved_and_not_when_both_did(tmp_path):
    still = Study.load(make_study(tmp_path / "still", means={"grpo": 0.3, "sign": 0.3}))
    assert lead(still).startswith("In short: neither arm measurably moved from its start")
    moved = Study.load(make_study(tmp_path / "moved", means={"grpo": 0.9, "sign": 0.95}))
    assert "measurably moved" not in lead(moved) and lead(moved).startswith("In short: ")


def test_the_first_screen_has_one_row_per_planned_comparison_before_the_verdicts_in_full(tmp_path):
    s = Study.load(make_study(tmp_path, means={"grpo": 0.4, "sign": 0.8}))
    rows = [line for line in table(s)[2:] if line.startswith("|")]
    assert len(rows) == len(s.planned)
    text = render_report(s)
    first = text.split("## What it found")[1].split("## The verdicts in full")[0]
    assert "(comparisons.png)" in first and "| planned comparison | quantity |" in first
    assert text.count("(comparisons.png)") == 1  # the figure said once
    assert len(first.split()) < 250


def test_a_quantity_is_named_as_a_quantity_not_as_an_arm(tmp_path):
    s = rank_study(tmp_path, {0: 12.0, 1: 16.0, 2: 18.0, 3: 14.0})
    spec = {x.label: x for x in s.plan.comparisons}
    assert quantity(s, spec["grpo − 2"]) == "update-erank-end of grpo − 2"
    assert quantity(s, spec["sign − grpo"]) == "update-erank-end: sign − grpo"


def test_study_6s_first_screen_names_the_change_over_training_and_the_sign_gap():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "results" / "smollm2-study6" / "REPORT.md").read_text()
    first = text.split("## What it found")[1].split("## The verdicts in full")[0]
    h3 = next(line for line in first.splitlines() if line.startswith("| H3"))
    h4 = next(line for line in first.splitlines() if line.startswith("| H4"))
    assert "change of the update rank over training" in h3 and "update-erank-change of grpo, G = 16 |" in h3
    assert "Sign's weights minus GRPO's" in h4 and "update-signgap-end of grpo, G = 16 |" in h4
    assert "**fragile** (under a log scale)" in next(line for line in first.splitlines() if line.startswith("| H1:"))


def test_no_number_prints_as_minus_zero():
    assert _fmt(-0.0004) == "+0.000" and _fmt(-0.0004, signed=False) == "0.000" and _fmt(-0.0006) == "-0.001"
    from grpo_lab.stats import fmt_ci

    assert "-0.000" not in fmt_ci([-0.0001, 0.0002, -0.0003], clip=None)
