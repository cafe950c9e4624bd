"""Issue 57: study 4's plan reads study 3's runs in place. Its base is study 3's (so those runs are its points), every
one of study 3's runs it names is read without refusal, and `study run` would train exactly the 40 runs PLAN.md
budgets, less the 6 its declared budget cut removed once the first 8 had been timed."""

import tomllib
from pathlib import Path

from grpo_lab.study import Study, read_plan
from grpo_lab.study.run import finished_in, units

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"
PLAN4 = RESULTS / "smollm2-study4" / "plan.toml"


def test_study_4s_base_is_study_3s():
    four = tomllib.loads(PLAN4.read_text())["base"]
    three = tomllib.loads((RESULTS / "smollm2-study3" / "plan.toml").read_text())["base"]
    assert four == three


def test_study_4_reads_study_3s_runs_and_trains_the_40_its_plan_budgets():
    s = Study.load(PLAN4)
    assert not [(n, a.refused) for n, a in s.data.items() if a.refused]
    own = len(list((PLAN4.parent / "runs").glob("*/results/*.json")))  # study 4's own runs, as they land
    assert s.done == 32 + own  # + study 3's lr 1e-4 and 3e-4 arms (6 seeds) and its lr 1e-3 seeds 0-3
    plan = read_plan(PLAN4)
    todo = [(n, seed) for n, seed in units(plan) if finished_in(plan, plan.arms[n], seed) is None]
    # 40 new runs planned, less the 6 of the declared budget cut (seed 5 of the new-rate and paper arms, 2026-11-27)
    assert len(todo) == 34 and {seed for n, seed in todo if n.endswith("1e-3")} == {4, 5}
    assert {n for n, seed in todo if seed == 5} == {"sign-1e-3", "drgrpo-1e-3"}


def test_the_paper_scale_plan_is_read_offline_and_keeps_the_papers_settings():
    """Issue 57, item 6: the paper-scale plan (not run here) is tracked, `grpo-lab study status` reads it without the
    hub, and its base keeps the paper's stated settings; its arms are study 4's rate grid and the paper's optimizer."""
    from grpo_lab.cli import main

    paper = PLAN4.parent / "paper-scale" / "plan.toml"
    plan = read_plan(paper)
    base = plan.arms["sign-1e-4"].config
    assert (base.policy, base.task, base.group_size, base.steps, base.lora_r, base.lora_alpha) == (
        "Qwen/Qwen3.5-9B", "gsm8k", 4, 200, 64, 128)
    assert sorted({s for a in plan.arms.values() for s in a.seeds}) == list(range(7))
    rates4 = {a.config.learning_rate for a in read_plan(PLAN4).arms.values() if a.config.lr_scheduler == "constant"}
    assert {a.config.learning_rate for a in plan.arms.values() if a.config.lr_scheduler == "constant"} == rates4
    opt = plan.arms["sign-paper"].config
    assert (opt.learning_rate, opt.lr_scheduler, opt.adam_beta2, opt.adam_epsilon, opt.max_grad_norm) == (
        1e-6, "cosine", 0.95, 1e-8, 1.0)
    s = Study.load(paper)
    assert s.done == 0 and len(units(plan)) == 84
    assert main(["study", "status", str(paper)]) == 0
