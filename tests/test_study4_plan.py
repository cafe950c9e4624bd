"""Issue 57: study 4's plan reads study 3's runs in place. Its base is study 3's (so those runs are its points), every
one of study 3's runs it names is read without refusal, and `study run` would train exactly the 40 runs PLAN.md
budgets."""

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
    assert s.done == 32  # study 3's lr 1e-4 and 3e-4 arms (6 seeds) and its lr 1e-3 seeds 0-3
    plan = read_plan(PLAN4)
    todo = [(n, seed) for n, seed in units(plan) if finished_in(plan, plan.arms[n], seed) is None]
    assert len(todo) == 40 and {seed for n, seed in todo if n.endswith("1e-3")} == {4, 5}
