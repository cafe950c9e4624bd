"""Issue 57: a curve reading, a measure against one setting the arms vary (the learning rate), one line per method
and per other setting, drawn by the engine for any plan that declares one; exploratory, no verdict."""


import numpy as np
import pytest

from grpo_lab.study import PlanError, Study, build, read_plan

from test_study import evaluation, toml_base, write_runs

PLAN = """title = "A rate curve"
seeds = [0, 1, 2]

[base]
""" + toml_base() + """
[arms.grpo-lo]
method = "grpo"
learning_rate = 1e-4

[arms.grpo-hi]
method = "grpo"
learning_rate = 1e-3

[arms.sign-lo]
method = "sign"
learning_rate = 1e-4

[arms.sign-hi]
method = "sign"
learning_rate = 1e-3

[arms.sign-paper]
method = "sign"
learning_rate = 1e-3
adam_beta2 = 0.95

[measures]
primary = "pass@1"

[[comparisons]]
a = "sign-hi"
b = "grpo-hi"

{curves}
"""
CURVE = '[[curves]]\nx = "learning_rate"\n'


def make(tmp_path, means, curves=CURVE):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "plan.toml").write_text(PLAN.format(curves=curves))
    return write_runs(tmp_path / "plan.toml",
                      lambda name, s, rng: dict(history=[{"reward": 0.5}], eval=evaluation(rng, means[name])))


MEANS = {"grpo-lo": 0.2, "grpo-hi": 0.6, "sign-lo": 0.5, "sign-hi": 0.3, "sign-paper": 0.7}


def test_a_curve_has_a_line_per_method_and_setting_with_each_arms_mean(tmp_path):
    plan = make(tmp_path, MEANS)
    s = Study.load(plan)
    (cr,) = s.curves
    assert set(cr.lines) == {"grpo", "sign", "sign, adam_beta2 0.95"}
    for label, arms in (("grpo", ("grpo-lo", "grpo-hi")), ("sign", ("sign-lo", "sign-hi"))):
        pts = cr.lines[label]
        assert [x for x, *_ in pts] == [1e-4, 1e-3]
        for (x, m, lo, hi, n), arm in zip(pts, arms):
            v = list(s.values(arm).values())
            assert m == pytest.approx(np.mean(v)) and lo < m < hi and n == 3
    assert [x for x, *_ in cr.lines["sign, adam_beta2 0.95"]] == [1e-3]
    assert cr.arms == {"grpo": ["grpo-lo", "grpo-hi"], "sign": ["sign-lo", "sign-hi"],
                       "sign, adam_beta2 0.95": ["sign-paper"]}


def test_each_point_names_its_arm_in_the_data_output_whatever_order_the_plan_declares_them(tmp_path):
    """A notebook pairs each curve point with the arm behind it from the data output (no parsing of a line's
    label): the arms follow the points' x order even when the plan declares the high rate first."""
    import json

    from grpo_lab.study import build

    lo = '[arms.grpo-lo]\nmethod = "grpo"\nlearning_rate = 1e-4\n\n'
    text = PLAN.replace(lo, "").replace("[arms.sign-lo]", lo + "[arms.sign-lo]")
    assert text.index("[arms.grpo-hi]") < text.index("[arms.grpo-lo]")
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "plan.toml").write_text(text.format(curves=CURVE) + '\n[[outputs]]\npage = "s.json"\nform = "data"\n')
    plan = write_runs(tmp_path / "plan.toml",
                      lambda name, s, rng: dict(history=[{"reward": 0.5}], eval=evaluation(rng, MEANS[name])))
    want, _ = build(plan, root=tmp_path)
    data = json.loads(want[tmp_path / "s.json"])
    (curve,) = data["curves"]
    assert curve["arms"]["grpo"] == ["grpo-lo", "grpo-hi"]
    for line, points in curve["lines"].items():
        assert len(points) == len(curve["arms"][line])
        for (x, m, *_), arm in zip(points, curve["arms"][line]):
            assert data["arms"][arm]["settings"]["learning_rate"] == x
            assert m == pytest.approx(np.mean(list(v["pass@1"] for v in data["arms"][arm]["seeds"].values())))
    assert data["varied"] == ["adam_beta2", "learning_rate"]  # what differs between arms, the method aside


def test_two_arms_at_the_same_x_on_one_line_keep_their_own_points(monkeypatch):
    """Points and arms are sorted together, once: two arms that share a line and an x (settings the line's label
    does not name) each keep their own mean, whichever of them has the larger one."""
    from types import SimpleNamespace

    from grpo_lab.config import RunConfig
    from grpo_lab.study import readings

    for means in ({"b-arm": 0.9, "a-arm": 0.1}, {"b-arm": 0.1, "a-arm": 0.9}):
        arms = {a: SimpleNamespace(method="sign", config=RunConfig(learning_rate=1e-3)) for a in means}
        study = SimpleNamespace(plan=SimpleNamespace(arms=arms, alpha=0.05),
                                values=lambda a, measure: {0: means[a], 1: means[a] + 0.01})
        monkeypatch.setattr(readings, "varied_settings", lambda plan, names, besides=None: ({a: {} for a in names}, []))
        cr = readings.curve(study, SimpleNamespace(arms=list(means), x="learning_rate", measure="pass@1"))
        assert cr.arms == {"sign": ["a-arm", "b-arm"]}  # by x, then by arm name
        for (x, m, *_), arm in zip(cr.lines["sign"], cr.arms["sign"], strict=True):
            assert m == pytest.approx(means[arm] + 0.005)


def test_the_report_shows_the_curve_and_its_figure_and_follows_reversed_data(tmp_path):
    plan = make(tmp_path / "a", MEANS)
    pages, drawing = build(plan)
    text = pages[plan.parent / "REPORT.md"]
    drawing()
    assert "## Curves (exploratory" in text and "![pass@1 against learning_rate" in text
    assert (plan.parent / "curve-learning_rate.png").is_file()
    reversed_plan = make(tmp_path / "b", {k: 1 - v for k, v in MEANS.items()})
    lo_a = Study.load(plan).curves[0].lines["grpo"]
    lo_b = Study.load(reversed_plan).curves[0].lines["grpo"]
    assert lo_a[0][1] < lo_a[1][1] and lo_b[0][1] > lo_b[1][1]  # rising, then falling when the data are reversed


@pytest.mark.parametrize("curves, message", [
    ('[[curves]]\nx = "nope"\n', "x = 'nope' is not a run setting"),
    ('[[curves]]\nx = "group_size"\n', "do not vary group_size"),
    ('[[curves]]\nx = "learning_rate"\narms = ["grpo-lo", "zzz"]\n', "arms \\['zzz'\\] are not arms"),
    ('[[curves]]\nx = "learning_rate"\nwhat = 1\n', "unknown field 'what'"),
])
def test_a_curve_the_arms_cannot_draw_is_refused_by_name(tmp_path, curves, message):
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(curves=curves))
    with pytest.raises(PlanError, match=message):
        read_plan(plan)


def test_a_plan_without_curves_keeps_its_fingerprint(tmp_path):
    """Plans written before curves existed: their runs recorded a fingerprint that must still match."""
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text(PLAN.format(curves=""))
    b.write_text(PLAN.format(curves=CURVE))
    assert read_plan(a).analysis_fingerprint != read_plan(b).analysis_fingerprint
    from grpo_lab.io import fingerprint
    from grpo_lab.study.plan import ANALYSIS_KEYS, LATER_KEYS

    old = read_plan(a)  # the keys added later (curves, correlations) are absent from an older plan's fingerprint
    assert old.analysis_fingerprint == fingerprint({k: old.raw.get(k) for k in ANALYSIS_KEYS if k not in LATER_KEYS})
