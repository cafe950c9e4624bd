"""Issue 82: a plan compares an arm with a value (``b = 2``: is GRPO's update rank about 2?), and reads a run's rank
probe as measures (``update-erank-end``, ``…-change``). The words follow the data: reversed, they reverse."""

import pytest

from grpo_lab.study import PlanError, Study, lead, read_plan
from grpo_lab.study.words import hypotheses_words, verdict_word

from test_study import BASE, evaluation, toml_base, write_runs

PLAN = """title = "rank"
seeds = [0, 1, 2, 3]
[base]
""" + toml_base(rank_probe=1) + """
[arms.grpo]
method = "grpo"
[arms.sign]
method = "sign"
[measures]
primary = "update-erank-end"
secondary = ["update-erank-change", "group-erank-end", "group-bound-end"]
[analysis]
correction = "holm"
alpha = 0.05
df = "welch"
pairing = "none"

[[comparisons]]
a = "grpo"
b = 2
label = "grpo − 2"

[[comparisons]]
a = "sign"
b = "grpo"
label = "sign − grpo"

[[hypotheses]]
name = "H1"
says = "GRPO's update rank is above 2"
test = "grpo − 2"
margin = 1.0
interval = "per-comparison"

[[exploratory]]
a = "grpo"
b = 0
measure = "update-erank-change"
label = "grpo's change over training"
"""


def probe(start: float, end: float, groups=(1.5, 1.8), bounds=(2, 3)) -> dict:
    def reading(x):
        row = dict(update_erank=x, update_count=3, update_bound=40, group_erank=[*groups, 0.0],
                   group_count=[2, 2, 0], group_nonzero=[4, 4, 0], group_bound=[*bounds, 0],
                   group_reference=[2.5, 2.9, 0.0])
        return dict(step=1, G=4, by_estimator={e: {"w": dict(row)} for e in ("grpo", "drgrpo", "sign")})
    return dict(blocks=["w"], shapes={"w": [8, 8]}, estimators=["grpo", "drgrpo", "sign"], seconds=1.0,
                start=[reading(start)], end=[reading(end)])


def study(tmp_path, grpo_end: float, grpo_start: float = 3.0) -> Study:
    tmp_path.mkdir(parents=True, exist_ok=True)
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)

    def run(arm, seed, rng):
        end = (grpo_end if arm == "grpo" else 6.0) + rng.normal(0, 0.2)
        return dict(history=[{"reward": 0.5}], eval=evaluation(rng, 0.5),
                    rank_probe=probe(grpo_start if arm == "grpo" else 3.0, end))

    write_runs(plan, run, config={**BASE, "rank_probe": 1})
    return Study.load(plan)


def test_an_arm_against_a_value_reads_about_2_and_the_words_reverse_with_the_data(tmp_path):
    near, far = study(tmp_path / "near", grpo_end=2.1), study(tmp_path / "far", grpo_end=7.0)
    rn, rf = near.reading("grpo − 2"), far.reading("grpo − 2")
    assert rn.kind == rf.kind == "level" and rn.n_a == 4 and rn.mean_b == 2.0
    vals = list(near.values("grpo", near.plan.primary).values())
    assert rn.d == pytest.approx(sum(vals) / 4 - 2.0)
    assert not rn.apart and -1 <= rn.lo and rn.hi <= 1
    assert "within ±1 of 2: **about 2** at the plan's margin" in hypotheses_words(near)
    assert rf.apart and verdict_word(far, rf) == "grpo above 2"
    words = hypotheses_words(far)
    assert "**supported**" in words and "not within ±1 of 2: not shown about 2" in words
    assert "grpo above 2 by" in lead(far) and "grpo above 2" not in lead(near)
    low = study(tmp_path / "low", grpo_end=0.8)  # below the value: the other word, not a fixed one
    assert verdict_word(low, low.reading("grpo − 2")) == "grpo below 2"
    assert "**contradicted**" in hypotheses_words(low)


def test_the_change_over_training_is_end_minus_start_and_group_readings_skip_degenerate_groups(tmp_path):
    s = study(tmp_path, grpo_end=2.0, grpo_start=3.0)
    change = s.values("grpo", next(m for m in s.plan.secondary if m.text == "update-erank-change"))
    end = s.values("grpo", s.plan.primary)
    assert all(change[k] == pytest.approx(end[k] - 3.0) for k in end)
    group = s.values("grpo", next(m for m in s.plan.secondary if m.text == "group-erank-end"))
    assert all(v == pytest.approx(1.65) for v in group.values())  # (1.5 + 1.8) / 2: the group of bound 0 left out
    r = next(x for x in s.exploratory if x.spec.label == "grpo's change over training")
    assert r.kind == "level" and r.d == pytest.approx(sum(change.values()) / 4)
    assert r.hi < 0  # the rank fell over training in every seed (3 to about 2): the interval lies below 0


def test_a_comparison_with_a_value_is_refused_where_it_cannot_be_read(tmp_path):
    tmp_path.mkdir(parents=True, exist_ok=True)
    bad = tmp_path / "plan.toml"
    for old, new, msg in (
            ('b = 2\nlabel = "grpo − 2"', 'b = 2\nc = "sign"\nd = "grpo"\nlabel = "grpo − 2"', "it has no c and d"),
            ('b = 2\nlabel = "grpo − 2"', 'b = 2\npairing = "seed"\nlabel = "grpo − 2"', "no pairing and no contrast"),
            ('a = "grpo"\nb = 2', 'a = "nope"\nb = 2', "a = 'nope' names no arm"),
            ('b = 2\nlabel', 'b = nan\nlabel', "b must be an arm, 'start' or a finite number"),
            ('b = 2\nlabel', 'b = true\nlabel', "b must be str or int or float, got bool")):
        bad.write_text(PLAN.replace(old, new, 1))
        with pytest.raises(PlanError, match=msg):
            read_plan(bad)


def test_the_sign_gap_reads_the_same_rows_under_signs_advantages_minus_the_runs_own(tmp_path):
    """update-signgap: Sign's effective rank minus the run's own on the same completions and gradients; its group
    form reads only the groups the run's own advantages gave a signal (bound not 0)."""
    from grpo_lab.study.measures import METRICS

    res = {"config": {"estimator": "grpo"}, "rank_probe": probe(3.0, 2.0)}
    for step in res["rank_probe"]["end"]:
        step["by_estimator"]["sign"]["w"].update(update_erank=5.5, group_erank=[2.5, 3.0, 3.5])
    assert METRICS["update-signgap-end"].read(res, 0) == pytest.approx(3.5)
    assert METRICS["group-signgap-end"].read(res, 0) == pytest.approx(((2.5 - 1.5) + (3.0 - 1.8)) / 2)  # not 3rd
    res["rank_probe"]["end"][0]["by_estimator"]["sign"]["w"]["update_erank"] = -1.0
    with pytest.raises(ValueError, match="not a number >= 0"):
        METRICS["update-signgap-end"].read(res, 0)
    del res["rank_probe"]["end"][0]["by_estimator"]["sign"]
    with pytest.raises(KeyError, match="has no sign readings"):
        METRICS["group-signgap-end"].read(res, 0)
