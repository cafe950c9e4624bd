"""An evaluation task held out from training by construction can be drawn from its whole problem space under
``disjoint`` (``eval_tasks_whole``; what study 7 needs: two-digit training, the single-digit task's 200 problems as
its held-out capability, whose disjoint tenth holds 25). The held-out check reads the same draws the run evaluates,
and a plan whose evaluation task is too small is refused when read, not after a run has trained."""

from dataclasses import replace

import pytest

from grpo_lab.config import RunConfig
from grpo_lab.runner import eval_problems, overlap, task_config
from grpo_lab.study import PlanError, read_plan

HARD = "gym:chain_sum:min_terms=2,max_terms=2,min_digits=2,max_digits=2"
EASY = "gym:chain_sum:min_terms=2,max_terms=2,min_digits=1,max_digits=1"
MIXED = "gym:chain_sum:min_terms=2,max_terms=2,min_digits=1,max_digits=2"


def cfg(**kw) -> RunConfig:
    base = dict(policy="smollm2", task=HARD, eval_tasks=[EASY], disjoint=True, eval_problems=200,
                eval_without_replacement=True, train_problems=4000, eval_tasks_whole=True)
    return RunConfig(**{**base, **kw})


def test_an_eval_task_is_drawn_from_its_whole_space_only_when_asked_and_the_own_task_never():
    c = cfg()
    assert task_config(c, HARD).disjoint and not task_config(c, EASY).disjoint
    assert task_config(cfg(eval_tasks_whole=False), EASY).disjoint
    easy = eval_problems(task_config(c, EASY))
    assert len({p.prompt for p in easy}) == 200  # the whole single-digit task, each problem once
    o = overlap(c, EASY)
    assert (o["draws"], o["distinct"], o["in_training"]) == (200, 200, 0)  # held out by construction, checked


def test_the_held_out_check_says_so_when_the_whole_space_overlaps_training():
    o = overlap(cfg(task=MIXED), EASY)  # half of the mixed task's pool is single-digit sums: not held out
    assert o["distinct"] == 200 and o["in_training"] > 100  # all but the easy problems whose hash is not training's


@pytest.mark.parametrize("kw, msg", [(dict(disjoint=False), "needs disjoint = true"),
                                     (dict(eval_tasks=[]), "at least one eval task")])
def test_eval_tasks_whole_without_a_disjoint_split_or_an_eval_task_is_refused(kw, msg):
    with pytest.raises(ValueError, match=msg):
        cfg(**kw).validate(here=False)


def test_a_plan_whose_eval_task_is_too_small_is_refused_when_read(tmp_path):
    (tmp_path / "PLAN.md").write_text("a plan\n")
    text = f'''title = "t"
plan = "PLAN.md"
seeds = [0, 1]
[base]
policy = "smollm2"
task = "{HARD}"
eval_tasks = ["{EASY}"]
eval_problems = 200
eval_samples = 4
disjoint = true
eval_without_replacement = true
steps = 2
[arms.grpo]
method = "grpo"
[measures]
primary = "pass@1"
[analysis]
correction = "holm"
alpha = 0.05
df = "welch"
pairing = "none"
[[comparisons]]
a = "grpo"
b = "start"
'''
    plan = tmp_path / "plan.toml"
    plan.write_text(text)
    with pytest.raises(PlanError, match="holds 25 distinct problems"):
        read_plan(plan)
    plan.write_text(text.replace("disjoint = true\n", "disjoint = true\neval_tasks_whole = true\n"))
    assert read_plan(plan).arms["grpo"].config.eval_tasks_whole


def test_the_study_data_reads_an_eval_tasks_draws_as_the_run_drew_them():
    c = cfg()
    assert [p.prompt for p in eval_problems(task_config(c, EASY))] == \
        [p.prompt for p in eval_problems(replace(c, task=EASY, eval_tasks=[], disjoint=False, eval_tasks_whole=False))]
