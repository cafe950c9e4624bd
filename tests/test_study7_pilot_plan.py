"""Issue 82: study 7's pilot plan is read by the engine as its PLAN.md describes it: GRPO at two rates on two-digit
sums with study 5's and study 6's training, the hard task's evaluation held out, the easy task not evaluated at all,
and a hard training pool that holds none of the easy task's problems (what study 7's held-out primary needs)."""

import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from grpo_lab.study import read_plan
from grpo_lab.study.run import units

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"
PILOT = RESULTS / "smollm2-study7-pilot" / "plan.toml"
EASY = "gym:chain_sum:min_terms=2,max_terms=2,min_digits=1,max_digits=1"


def test_the_pilot_trains_as_studies_5_and_6_do_on_the_hard_task_and_evaluates_it_alone():
    pilot = tomllib.loads(PILOT.read_text())["base"]
    six = tomllib.loads((RESULTS / "smollm2-study6" / "plan.toml").read_text())["base"]
    for k in ("policy", "steps", "max_completion_length", "lora_r", "train_problems", "disjoint", "generation",
              "eval_dtype", "logprobs", "gradient_checkpointing", "threads", "eval_without_replacement"):
        assert pilot[k] == six[k], k
    assert pilot["task"] == "gym:chain_sum:min_terms=2,max_terms=2,min_digits=2,max_digits=2"
    assert "eval_tasks" not in pilot  # study 7's primary (the easy task) is not seen before its plan
    plan = read_plan(PILOT)
    assert len(units(plan)) == 6 and plan.budget_hours == 6
    assert {n: a.config.learning_rate for n, a in plan.arms.items()} == {"grpo-2.1e-4": 2.1e-4, "grpo-4.5e-4": 4.5e-4}
    assert {(a.method, a.config.group_size, a.config.prompts_per_step) for a in plan.arms.values()} == {("grpo", 4, 4)}
    assert all(a.config.eval_tasks in (None, []) for a in plan.arms.values())
    planned = [c for c in plan.comparisons if c.family == "planned"]
    assert [(c.a, c.b) for c in planned] == [("grpo-2.1e-4", "start"), ("grpo-4.5e-4", "start")]
    assert plan.primary.text == "pass@1" and (plan.correction, plan.alpha) == ("holm", 0.05)
    assert plan.selections["grpo-best"].by.text == "validation pass@1"
    assert {m.text for m in plan.manipulation.values()} == {"pass@1"} and set(plan.manipulation) == set(plan.arms)


def test_the_hard_training_pool_holds_none_of_the_easy_tasks_problems_and_its_evaluation_is_held_out():
    from grpo_lab.runner import overlap, train_problems
    from grpo_lab.tasks import get_task

    cfg = next(iter(read_plan(PILOT).arms.values())).config
    pool = {p.prompt for p in train_problems(cfg)}
    easy = {p.prompt for p in get_task(EASY).problems("test", 4000, 0)}
    assert len(easy) == 200 and not pool & easy  # the easy task's every problem; none in the hard pool
    o = overlap(cfg)
    assert o["in_training"] == 0 and o["distinct"] == o["draws"] == 200
    # with disjoint = true every evaluation task draws from one tenth of its problem space: the easy task's tenth
    # holds 25 of its 200 problems (PLAN.md: what study 7's plan must settle)
    with pytest.raises(ValueError, match="holds 25 distinct problems"):
        overlap(replace(cfg, eval_tasks=[EASY]), EASY)
