"""Issue 59: study 5's plan (AVSPO against GRPO on study 3's task) is read by the engine as PLAN.md describes it:
study 3's base with the distinct-problem float32 evaluation, three rates per method, each method's best rate chosen on
validation, the two planned families (pass@1 and the zero-advantage share) and the correlations across runs."""

import re
import tomllib
from pathlib import Path

from grpo_lab.study import Study, read_plan
from grpo_lab.study.run import units

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"
PLAN5 = RESULTS / "smollm2-study5" / "plan.toml"


def test_study_5s_base_is_study_3s_with_a_distinct_float32_evaluation():
    five = tomllib.loads(PLAN5.read_text())["base"]
    three = tomllib.loads((RESULTS / "smollm2-study3" / "plan.toml").read_text())["base"]
    assert {k: v for k, v in five.items() if k not in ("eval_dtype", "eval_distinct")} == three
    assert (five["eval_dtype"], five["eval_distinct"]) == ("float32", True)
    assert five["steps"] * five["prompts_per_step"] * five["group_size"] >= 1024  # the floor


def test_study_5_has_its_arms_selections_families_and_budget():
    plan = read_plan(PLAN5)
    rates = {m: sorted(a.config.learning_rate for a in plan.arms.values() if a.method == m)
             for m in ("grpo", "avspo")}
    assert rates == {"grpo": [1e-4, 2.1e-4, 4.5e-4], "avspo": [1e-4, 2.1e-4, 4.5e-4]}
    assert all(a.seeds == list(range(6)) for a in plan.arms.values())
    assert len(units(plan)) == 42 and plan.budget_hours == 12
    assert re.fullmatch(r"[0-9a-f]{12}", plan.grader)
    for sel in plan.selections.values():
        assert sel.by.text == "validation pass@1" and len(sel.among) == 3
    fams = {s.family: s for s in plan.comparisons}
    assert set(fams) == {"planned", "manipulation"}
    assert fams["manipulation"].measure.text == "zero-adv" and fams["planned"].measure.text == "pass@1"
    assert (plan.df, plan.correction) == ("welch", "holm")
    hyp = {h.name: h for h in plan.hypotheses}
    assert (hyp["P"].size, hyp["P"].predicts, hyp["P"].interval) == (0.04, "a", "per-comparison")
    assert (hyp["M"].size, hyp["M"].predicts, hyp["M"].interval) == (0.39, "b", "per-comparison")
    assert [c.x.text for c in plan.correlations] == ["acr", "acr"]
    assert plan.correlations[1].arms == ("grpo-1e-4", "grpo-2.1e-4", "grpo-4.5e-4")


def test_study_5_status_reads_offline():
    from grpo_lab.cli import main

    s = Study.load(PLAN5)
    assert not [(n, a.refused) for n, a in s.data.items() if a.refused]
    assert s.total == 42
    assert main(["study", "status", str(PLAN5)]) == 0
