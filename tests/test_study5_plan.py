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


def _signed(x: float, places: int = 3) -> str:
    """A number as the page writes it: a sign always, a true minus sign."""
    return f"{x:+.{places}f}".replace("-", "−")


def _rate(x: float) -> str:
    """A learning rate as the plan writes it: 2.1e-4, not 0.00021."""
    mantissa, exponent = f"{x:e}".split("e")
    return f"{float(mantissa):g}e{int(exponent)}"


def _interval(d: float, lo: float, hi: float, places: int = 3) -> str:
    return f"{_signed(d, places)} [{_signed(lo, places)}, {_signed(hi, places)}]"


def test_the_replication_pages_section_after_study_5_says_what_its_data_say():
    """The hand-written section "What the runs say, after study 5" of docs/replication-2605.21125.md: each number
    and each direction word is derived here from the data output and the runs (the bootstrap, the selections'
    near-ties, the runner-up's reading, the parts of ACR), so the section fails when the data change under it:
    reversed data flip "trailed" and every sign."""
    import json

    import numpy as np
    from scipy import stats as sps

    from grpo_lab.study import near_ties, parse_measure, readings

    page = (RESULTS.parents[1] / "docs" / "replication-2605.21125.md").read_text()
    section = " ".join(page.split("## What the runs say, after study 5")[1].split("\n## ")[0].split())
    data = json.loads((RESULTS.parents[1] / "grpo_lab" / "data" / "smollm2_study5.json").read_text())
    assert data["complete"] and data["done"] == data["total"] == 42, "the section reads the finished study"
    lr = {m: data["arms"][data["selections"][f"{m}-best"]["chosen"]]["settings"]["learning_rate"] for m in ("grpo", "avspo")}
    assert f"chose {_rate(lr['grpo'])} for GRPO and {_rate(lr['avspo'])} for AVSPO" in section
    s = Study.load(PLAN5)
    ties = {name: (win, run, r) for name, win, run, r in near_ties(s)}
    assert set(ties) == {"grpo-best", "avspo-best"} and "each by a near-tie" in section
    for m in ("grpo", "avspo"):
        win, run, r = ties[f"{m}-best"]
        rate = _rate(s.plan.arms[run].config.learning_rate)
        assert f"{m.upper()}'s {_rate(lr[m])} over its {rate} by {_interval(r.d, r.lo, r.hi)}" in section

    hyp = {h["name"]: h for h in data["hypotheses"]}
    planned = {h["name"]: r for h in data["hypotheses"] for r in data["planned"] if r["label"] == h["test"]}
    assert set(planned) == {"P", "M"}  # each hypothesis and the planned comparison it reads
    p = planned["P"]
    assert hyp["P"]["verdict"] == "not supported" and "**Accuracy (P): not supported.**" in section
    assert (f"was {_interval(p['d'], p['lo'], p['hi'])}: AVSPO {'trailed' if p['d'] < 0 else 'led'}, "
            f"{'not separated' if not p['separated'] else 'separated'}.") in section
    assert f"exclude AVSPO ahead by more than {p['hi']:.3f}" in section
    assert hyp["P"]["size_rule"] == "not refuted" and f"do not exclude the paper's +{hyp['P']['size']:.2f}" in section
    boot = readings.read(s, s.planned[0].spec, readings.Conventions(df=s.plan.df, method="bootstrap"))
    assert boot.hi >= hyp["P"]["size"] and f"agrees ([{_signed(boot.lo)}, {_signed(boot.hi)}])" in section
    runner = s.variant({"avspo-best": ties["avspo-best"][1]}).reading(s.planned[0].spec.label)
    assert runner.hi < hyp["P"]["size"] and "**Fragile**" in data["headline"] and "**fragile**" in section
    assert f"the interval is [{_signed(runner.lo)}, {_signed(runner.hi)}], which excludes +0.04" in section

    m = planned["M"]
    zero = {k: np.mean([v["zero-adv"] for v in data["arms"][data["selections"][f"{k}-best"]["chosen"]]["seeds"].values()])
            for k in ("grpo", "avspo")}
    assert hyp["M"]["verdict"] == "supported" and "**The manipulation check (M): supported.**" in section
    assert f"fell from {zero['grpo']:.3f} under GRPO to {zero['avspo']:.3f} under AVSPO" in section
    assert f"a difference of {_interval(m['d'], m['lo'], m['hi'])}" in section
    cut = 100 * (1 - zero["avspo"] / zero["grpo"])
    where = "beyond" if round(cut) > 63 else "inside" if round(cut) >= 58 else "short of"
    assert f"a cut of {cut:.0f}%, {where} the paper's 58–63%" in section

    ex = {r["label"]: r for r in data["exploratory"]}

    def word(r):  # how the page says a difference: ahead or behind beyond the noise, or level
        if r["lo"] > 0:
            return "led"
        if r["hi"] < 0:
            return "trailed"
        return "level" if abs(r["d"]) < 0.01 else "not separated"

    acr = ex["avspo − grpo at best rates, ACR of the rewards sampled"]
    assert word(acr) == "not separated" and f"all equal, the ACR as the paper's abstract defines it, differed by " \
        f"{_interval(acr['d'], acr['lo'], acr['hi'])}" in section
    grpo_acr = np.mean([v["acr"] for v in data["arms"][data["selections"]["grpo-best"]["chosen"]]["seeds"].values()])
    assert f"{-acr['d'] / grpo_acr:.0%} of GRPO's {grpo_acr:.3f}" in section and "did not move" in section
    low, high = ex["avspo − grpo at lr 1e-4"], ex["avspo − grpo at lr 4.5e-4"]
    code = ex["avspo_code − grpo at lr 2.1e-4"]
    assert f"AVSPO {word(low)} GRPO at 1e-4, {_interval(low['d'], low['lo'], low['hi'])}" in section
    assert word(high) == "level" and f"level at 4.5e-4 ({_interval(high['d'], high['lo'], high['hi'])})" in section
    assert word(code) == "level" and f"was level with GRPO at 2.1e-4 ({_interval(code['d'], code['lo'], code['hi'])})" in section

    every, grpo = data["correlations"]
    assert f"r = {_interval(every['r'], every['lo'], every['hi'], 2)}, R² {every['r2']:.2f}" in section
    assert f"over GRPO's {grpo['n']} runs alone, r = {_interval(grpo['r'], grpo['lo'], grpo['hi'], 2)}" in section
    bound = max(every["lo"] ** 2, every["hi"] ** 2)
    assert bound < 0.25 and "bounds R² below 0.25" in section and "is excluded" not in section
    parts = {}
    for name in ("all-fail", "all-pass"):  # mean ACR's two parts against pass@1, over every run
        x, y = [], []
        for arm in s.plan.arms:
            v, p1 = s.values(arm, parse_measure(name, {}, "test")), s.values(arm)
            x += [v[k] for k in sorted(v)]
            y += [p1[k] for k in sorted(v)]
        res = sps.pearsonr(x, y)
        ci = res.confidence_interval(0.95)
        parts[name] = (res.statistic, ci.low, ci.high)
    (f, fl, fh), (a, al, ah) = parts["all-fail"], parts["all-pass"]
    assert f < 0 < a and f"all-fail share alone gives r = {_interval(f, fl, fh, 2)}" in section
    assert f"the all-pass share r = {_interval(a, al, ah, 2)}" in section
