"""Issue 82: study 6's plan (the rank of GRPO's gradient on SmolLM2) is read by the engine as PLAN.md describes it:
study 3's task and training with 16 completions a step at every G, the rank probe over six first and six last steps,
nine arms of four seeds, the five planned tests with their rules, and the budget with its cut."""

import tomllib
from pathlib import Path

import pytest

from grpo_lab.study import Study, read_plan
from grpo_lab.study.run import units

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"
PLAN6 = RESULTS / "smollm2-study6" / "plan.toml"


def test_study_6s_base_is_study_3s_task_and_training_with_a_probe_and_a_small_evaluation():
    six = tomllib.loads(PLAN6.read_text())["base"]
    three = tomllib.loads((RESULTS / "smollm2-study3" / "plan.toml").read_text())["base"]
    for k in ("policy", "task", "steps", "max_completion_length", "lora_r", "train_problems", "disjoint",
              "generation", "logprobs", "gradient_checkpointing", "threads"):
        assert six[k] == three[k], k
    assert (six["rank_probe"], six["eval_without_replacement"], six["eval_dtype"]) == (6, True, "float32")
    assert "PLAN.md" in PLAN6.read_text() and (PLAN6.parent / "PLAN.md").is_file()


def test_study_6_has_nine_arms_of_equal_completions_and_its_five_planned_tests():
    plan = read_plan(PLAN6)
    assert len(plan.arms) == 9 and len(units(plan)) == 36 and plan.budget_hours == 30
    shapes = {(a.method, a.config.group_size, a.config.prompts_per_step) for a in plan.arms.values()}
    assert shapes == {(m, g, 16 // g) for m in ("grpo", "drgrpo", "sign") for g in (4, 8, 16)}
    assert {a.config.learning_rate for a in plan.arms.values()} == {2.1e-4}
    assert all(a.seeds == [0, 1, 2, 3] for a in plan.arms.values())
    assert plan.primary.text == "update-erank-end" and plan.primary.better == "neutral"
    assert (plan.df, plan.correction, plan.alpha) == ("welch", "holm", 0.05)
    planned = [c for c in plan.comparisons if c.family == "planned"]
    assert [(c.a, c.b, c.level, c.measure.text) for c in planned] == [
        ("grpo-g16", "2", 2.0, "update-erank-end"), ("grpo-g4", "2", 2.0, "update-erank-end"),
        ("grpo-g4", "grpo-g16", None, "update-erank-end"), ("grpo-g16", "0", 0.0, "update-erank-change"),
        ("grpo-g16", "0", 0.0, "update-signgap-end")]
    hyp = {h.name: h for h in plan.hypotheses}
    assert [(n, h.predicts, h.margin) for n, h in hyp.items()] == [
        ("H1", "a", 1.0), ("H1b", "a", 1.0), ("H2", "a", 1.0), ("H3", "b", None), ("H4", "a", None)]
    assert set(plan.manipulation) == set(plan.arms) and {m.text for m in plan.manipulation.values()} == {"pass@1"}


def test_study_6_status_reads_offline():
    from grpo_lab.cli import main

    s = Study.load(PLAN6)
    assert not [(n, a.refused) for n, a in s.data.items() if a.refused]
    assert s.total == 36
    assert main(["study", "status", str(PLAN6)]) == 0


def test_an_arm_whose_evaluation_samples_fewer_than_its_group_is_refused_before_anything_runs(tmp_path):
    """Study 6's first start had been evaluated before its G = 8 arm was refused (eval_samples 4 < G): the plan is
    now refused when read, naming the arm, so no work is spent on a study that cannot finish."""
    from grpo_lab.study import PlanError

    text = PLAN6.read_text().replace('plan = "PLAN.md"\n', "").replace("eval_samples = 16", "eval_samples = 4")
    (tmp_path / "plan.toml").write_text(text)
    with pytest.raises(PlanError, match=r"\[arms.grpo-g8\]: not a valid run: eval_samples \(4\) must be at least the "
                                        r"group size \(8\)"):
        read_plan(tmp_path / "plan.toml")


def test_a_run_whose_window_had_no_signal_is_left_out_of_that_measure_only():
    """grpo-g16 seed 1 learned (pass@1 0.44 from the start's 0.055), but each of its last six groups was all-correct
    or all-wrong: GRPO's update was 0 at every end step and has no rank. The plan leaves such a run out of that
    measure by name; the engine once refused the whole run. Here it is read on pass@1 and the start's readings,
    left out of the end readings, named in the report, and None (not a number) on the data page."""
    from grpo_lab.study import NoReading, build, reading_line, study_data
    from grpo_lab.study.render import arm_table
    from grpo_lab.study.words import left_out

    s = Study.load(PLAN6)
    run = s.data["grpo-g16"].runs.get(1)
    assert run is not None, "grpo-g16 seed 1 is not read: refused, or not tracked"
    m = {x.text: x for x in [s.plan.primary, *s.plan.secondary]}
    with pytest.raises(NoReading, match="no step of the window had a group with a nonzero advantage"):
        m["update-erank-end"].of(run)
    assert 1 in s.values("grpo-g16", m["pass@1"]) and 1 in s.values("grpo-g16", m["update-erank-start"])
    for name in ("update-erank-end", "update-erank-change", "update-signgap-end"):
        assert 1 not in s.values("grpo-g16", m[name]) and 1 in s.unread("grpo-g16", m[name]), name
    assert s.unread("grpo-g16", m["pass@1"]) == {}
    assert "Left out of update-erank-end by its definition" in "\n".join(arm_table(s, m["update-erank-end"]))
    assert "grpo, G = 16 seed 1" in "\n".join(arm_table(s, m["update-erank-end"]))
    seeds = study_data(s)["arms"]["grpo-g16"]["seeds"]["1"]
    assert seeds["update-erank-end"] is None and seeds["pass@1"] > 0.3
    # a comparison reading the arm names the run it leaves out and the n left, planned or exploratory
    h1 = s.reading("grpo at G = 16, update rank − 2 (H1)")
    n = len(s.data["grpo-g16"].runs)
    said = left_out(s, h1)
    assert f"is read on {n - len(s.unread('grpo-g16', m['update-erank-end']))} of its {n} finished runs" in said
    assert "seed 1" in said and said in reading_line(s, h1)
    assert left_out(s, s.reading("grpo at G = 4, update rank − 2 (H1b)")) == ""  # its window always had signal
    assert said in build(PLAN6)[0][PLAN6.parent / "REPORT.md"]


def test_the_budget_cut_is_read_from_the_runs_by_plans_rule():
    """PLAN.md's cut (median seed-0 run time over 50 min: Dr.GRPO's seed 3 cut; over 54.5: every seed 3) is read by
    extras.py from the recorded times: the tracked runs cut nothing, and slower runs would cut what the plan says."""
    from grpo_lab.study import load_extras

    s = Study.load(PLAN6)
    ex = load_extras(s.plan)
    mins = ex.seed0_minutes(s)
    said = ex.cut_words(mins, len(s.plan.arms))
    if len(mins) == len(s.plan.arms):
        import statistics
        assert ("nothing is cut" in said) == (statistics.median(mins) <= 50), said
    assert "nothing is cut" in ex.cut_words([30.0] * 9, 9)
    assert "Dr.GRPO arms is cut, leaving 33" in ex.cut_words([52.0] * 9, 9)
    assert "every arm is cut, leaving 27" in ex.cut_words([40.0] * 4 + [55.0] * 5, 9)
    assert "not read yet" in ex.cut_words([60.0] * 8, 9)


def test_the_budget_cut_refuses_a_seed0_run_without_its_evaluation_time():
    """The engine's run time counts a missing time as 0; the cut would then read a run as faster than it was, so
    extras.py names the run and the missing time instead of reading it."""
    from grpo_lab.study import load_extras

    s = Study.load(PLAN6)
    ex = load_extras(s.plan)
    name, a = next((n, a) for n, a in s.data.items() if 0 in a.runs)
    del a.runs[0]["eval_seconds"]
    with pytest.raises(ValueError, match=f"{name} seed 0 records no eval_seconds"):
        ex.seed0_minutes(s)
