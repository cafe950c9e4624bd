"""Issue 59: the Advantage Collapse Rate as a study measure (``acr``, ``zero-adv``, read from the training log) and
a correlation across runs (``[[correlations]]``: e.g. each run's ACR against its final pass@1, the paper's R²),
exploratory, drawn by the engine for any plan that declares one."""

import json

import numpy as np
import pytest
from scipy import stats as sps

from grpo_lab.compare import result_problems
from grpo_lab.study import PlanError, Study, build, read_plan

from test_study import evaluation, toml_base, write_runs

PLAN = """title = "Collapse and pass@1"
seeds = [0, 1, 2, 3]

[base]
""" + toml_base() + """
[arms.grpo]
method = "grpo"

[arms.avspo]
method = "avspo"

[measures]
primary = "pass@1"
secondary = ["acr", "zero-adv"]

[[comparisons]]
a = "avspo"
b = "grpo"

[[comparisons]]
a = "avspo"
b = "grpo"
measure = "zero-adv"
family = "manipulation"
label = "avspo − grpo, zero-advantage share"

{extra}
"""
CORR = '[[correlations]]\nx = "acr"\nlabel = "ACR against pass@1"\n'


def history(acr: list, nonzero: list) -> list:
    return [{"reward": 0.5, "starvation/acr": a, "starvation/frac_nonzero_adv": z, "step": i + 1}
            for i, (a, z) in enumerate(zip(acr, nonzero))]


def make(tmp_path, pass1, acr, extra=CORR, zero=None):
    """Arm ``name``, seed ``s``: evaluation near ``pass1[name][s]``, a two-step log whose ACR averages
    ``acr[name][s]`` and whose zero-advantage share averages ``zero[name][s]`` (default: the ACR)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(extra=extra))
    zero = zero or acr

    def run(name, s, rng):
        a, z = acr[name][s], zero[name][s]
        return dict(history=history([a - 0.05, a + 0.05], [1 - z + 0.02, 1 - z - 0.02]),
                    eval=evaluation(rng, pass1[name][s]))

    return write_runs(plan, run)


PASS1 = {"grpo": [0.2, 0.3, 0.4, 0.5], "avspo": [0.3, 0.45, 0.55, 0.7]}
ACR = {"grpo": [0.8, 0.7, 0.6, 0.5], "avspo": [0.75, 0.6, 0.5, 0.35]}
ZERO = {"grpo": [0.8, 0.7, 0.6, 0.5], "avspo": [0.3, 0.25, 0.2, 0.15]}


def test_acr_and_zero_adv_are_the_logs_means():
    from grpo_lab.study.measures import parse_measure

    res = {"history": history([1.0, 0.5, 0.75], [0.0, 0.5, 0.25])}
    assert parse_measure("acr", {}, "t").of(res) == pytest.approx(0.75)
    assert parse_measure("zero-adv", {}, "t").of(res) == pytest.approx(1 - 0.25)
    with pytest.raises(KeyError, match="starvation/acr"):
        parse_measure("acr", {}, "t").of({"history": [{"reward": 0.1}]})
    with pytest.raises(PlanError, match="training log"):  # a log measure has no start to move from
        parse_measure("validation acr", {}, "t")


def test_the_manipulation_family_reads_zero_adv_and_reversed_data_reverse_it(tmp_path):
    s = Study.load(make(tmp_path / "a", PASS1, ACR, zero=ZERO))
    (man,) = s.readings["manipulation"]
    assert man.d == pytest.approx(np.mean(ZERO["avspo"]) - np.mean(ZERO["grpo"]), abs=1e-9) and man.hi < 0
    s2 = Study.load(make(tmp_path / "b", PASS1, ACR, zero={"grpo": ZERO["avspo"], "avspo": ZERO["grpo"]}))
    assert s2.readings["manipulation"][0].lo > 0


def test_a_correlation_is_pearsons_r_over_runs_with_fishers_interval(tmp_path):
    plan = make(tmp_path / "a", PASS1, ACR)
    s = Study.load(plan)
    (co,) = s.correlations
    x = [np.mean([a - 0.05, a + 0.05]) for m in ("grpo", "avspo") for a in ACR[m]]
    y = [s.values(m, s.plan.primary)[k] for m in ("grpo", "avspo") for k in range(4)]
    ref = sps.pearsonr(x, y)
    assert co.n == 8 and co.r == pytest.approx(ref.statistic) and co.r < -0.5
    assert co.lo < co.r < co.hi and co.r2 == pytest.approx(co.r ** 2)
    assert set(co.points) == {"grpo", "avspo"}
    pages, drawing = build(plan)
    text = pages[plan.parent / "REPORT.md"]
    assert "## Correlations across runs" in text and f"{co.r:+.3f} [{co.lo:+.3f}, {co.hi:+.3f}]" in text
    drawing()
    assert (plan.parent / "correlation-1.png").is_file()
    # reversed data: the ACR now rises with pass@1, so r changes sign, and so does the report's line
    flipped = Study.load(make(tmp_path / "b", PASS1, {m: v[::-1] for m, v in ACR.items()}))
    assert flipped.correlations[0].r > 0.5


def test_the_correlation_figure_says_what_a_training_log_measure_is(tmp_path, monkeypatch):
    """The x axis of "ACR against pass@1" says what "acr" is (a mean over training steps of the share of groups
    whose sampled rewards are all equal), not only the plan's short name; an evaluation measure keeps its name."""
    import grpo_lab.viz as viz

    seen, real = {}, viz.runs_scatter

    def spy(points, xlabel, ylabel, **kw):
        seen.update(xlabel=xlabel, ylabel=ylabel)
        return real(points, xlabel, ylabel, **kw)

    monkeypatch.setattr(viz, "runs_scatter", spy)
    build(make(tmp_path, PASS1, ACR))[1]()
    assert seen["xlabel"].startswith("acr: ") and "sampled rewards are all equal" in seen["xlabel"]
    assert "mean over steps" in seen["xlabel"] and seen["ylabel"] == "pass@1"


def test_the_data_output_carries_each_correlation_and_exploratory_reading(tmp_path):
    """A notebook reads the correlation (r, its interval, R²) and the exploratory intervals from the data output,
    as it reads the planned ones; reversed data reverse them."""
    extra = CORR + '\n[[exploratory]]\na = "avspo"\nb = "grpo"\nmeasure = "acr"\n\n[[outputs]]\npage = "s.json"\n' \
        'form = "data"\n'
    for name, acr, sign in (("a", ACR, -1), ("b", {"grpo": ACR["avspo"][::-1], "avspo": ACR["grpo"][::-1]}, 1)):
        plan = make(tmp_path / name, PASS1, acr, extra=extra)
        s = Study.load(plan)
        data = json.loads(build(plan, root=tmp_path / name)[0][tmp_path / name / "s.json"])
        (co,), (ex,) = s.correlations, s.exploratory
        (got,) = data["correlations"]
        assert got["x"] == "acr" and got["y"] == "pass@1" and got["n"] == co.n == 8 and got["arms"] == ["grpo", "avspo"]
        assert (got["r"], got["lo"], got["hi"], got["r2"]) == pytest.approx((co.r, co.lo, co.hi, co.r ** 2))
        assert np.sign(got["r"]) == sign and got["why_not"] is None
        (row,) = data["exploratory"]
        assert row["family"] == "exploratory" and row["measure"] == "acr" and row["label"] == ex.spec.label
        assert (row["d"], row["lo"], row["hi"]) == pytest.approx((ex.d, ex.lo, ex.hi))
        assert np.sign(row["d"]) == sign  # avspo's ACR below grpo's in "a", above it in "b"


def test_too_few_runs_or_no_spread_says_why(tmp_path):
    few = {m: {0: v[0], 1: v[1], 2: v[2], 3: v[3]} for m, v in ACR.items()}
    plan = make(tmp_path / "a", PASS1, few, extra=CORR.replace('label', 'arms = ["grpo"]\nlabel'))
    co = Study.load(plan).correlations[0]
    assert co.n == 4 and co.r is not None
    flat = {m: [0.5] * 4 for m in ACR}
    co = Study.load(make(tmp_path / "b", PASS1, flat)).correlations[0]
    assert co.r is None and "every run has the same acr" in co.why_not


@pytest.mark.parametrize("extra, message", [
    ('[[correlations]]\nx = "acr"\ny = "acr"\n', "same measure"),
    ('[[correlations]]\nx = "nope"\n', "unknown metric 'nope'"),
    ('[[correlations]]\nx = "acr"\narms = ["zzz"]\n', "are not arms"),
    ('[[correlations]]\nx = "pass@8"\n', "needs at least 8 samples"),
    ('[[correlations]]\nx = "acr"\nwhat = 1\n', "unknown field 'what'"),
])
def test_a_correlation_the_plan_cannot_read_is_refused_by_name(tmp_path, extra, message):
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "plan.toml").write_text(PLAN.format(extra=extra))
    with pytest.raises(PlanError, match=message):
        read_plan(tmp_path / "plan.toml")


@pytest.mark.parametrize("key, value", [("starvation/acr", 1.5), ("starvation/frac_nonzero_adv", float("nan")),
                                        ("starvation/acr", None)])
def test_a_damaged_collapse_log_leaves_the_run_out_by_name(tmp_path, key, value):
    plan = make(tmp_path, PASS1, ACR)
    f = next((plan.parent).glob("runs/*/results/avspo-seed2.json"))
    r = json.loads(f.read_text())
    r["history"][1][key] = value
    f.write_text(json.dumps(r))
    assert f"history step 1 has {key}" in result_problems(r)
    s = Study.load(plan)
    assert 2 not in s.data["avspo"].runs


def test_a_run_without_the_log_cannot_give_acr_and_is_named(tmp_path):
    plan = make(tmp_path, PASS1, ACR)
    f = next((plan.parent).glob("runs/*/results/grpo-seed1.json"))
    r = json.loads(f.read_text())
    r["history"] = [{"reward": 0.5, "step": 1}]
    f.write_text(json.dumps(r))
    s = Study.load(plan)
    assert 1 not in s.data["grpo"].runs
    assert any("cannot give acr" in why for _, why in s.data["grpo"].refused)


def test_a_correlation_is_part_of_the_plans_fingerprint(tmp_path):
    """Declared before the data: adding or editing a correlation after the runs is an edit the engine sees."""
    fps = []
    for i, extra in enumerate(("", CORR, CORR.replace('x = "acr"', 'x = "zero-adv"'))):
        (tmp_path / f"{i}.toml").write_text(PLAN.format(extra=extra))
        fps.append(read_plan(tmp_path / f"{i}.toml").analysis_fingerprint)
    assert len(set(fps)) == 3
