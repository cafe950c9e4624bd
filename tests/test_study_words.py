"""Issue 80: words that follow the numbers. The plain lead and the direction words change when the data are
reversed; the start's sampling error counts problems when draws share their samples; a plan may draw its
evaluation without replacement (refused with the task's size where it cannot); a selection won by a near-tie is
re-read with its runner-up."""

import numpy as np
import pytest

from grpo_lab.study import PlanError, Study, lead, near_ties, read_plan
from grpo_lab.study.measures import _pass_at_se

from test_study import BASE, evaluation, make_study, toml_base, write_runs
from test_study_steps import history


def test_the_lead_says_who_is_ahead_and_reverses_with_the_data(tmp_path):
    up, down = (Study.load(make_study(tmp_path / n, means=m)) for n, m in
                (("up", {"grpo": 0.3, "sign": 0.8}), ("down", {"grpo": 0.8, "sign": 0.3})))
    assert lead(up).startswith("In short: ") and "sign ahead by" in lead(up) and "grpo ahead by" in lead(down)
    tie = Study.load(make_study(tmp_path / "tie", means={"grpo": 0.5, "sign": 0.5}))
    assert "told its arms apart: sign − grpo (" in lead(tie) and "ahead" not in lead(tie)


@pytest.mark.parametrize("n_samples", [4, 8])
def test_the_starts_error_counts_problems_when_draws_share_their_samples(n_samples):
    """Simulated: 200 draws of 40 problems (some drawn many times), each problem sampled once and its count given to
    every draw of it. The pass@1 of the draws varies, over repeated samplings, by the error counted by problem; the
    error that treats the draws as independent is far smaller."""
    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.6, 40)
    draws = rng.choice(40, size=200, p=np.arange(1, 41) / np.arange(1, 41).sum())
    means = []
    for _ in range(4000):
        c = rng.binomial(n_samples, p)
        means.append(c[draws].mean() / n_samples)
    c = rng.binomial(n_samples, p)
    ev = {"correct": c[draws].tolist(), "n_samples": n_samples}
    by_problem, by_draw = _pass_at_se(ev, 1, draws.tolist()), _pass_at_se(ev, 1)
    assert by_problem == pytest.approx(np.std(means), rel=0.15)
    assert by_draw < 0.7 * np.std(means)
    with pytest.raises(ValueError, match="do not share their samples"):
        _pass_at_se({"correct": [1, 2, 3], "n_samples": 4}, 1, [0, 0, 1])


def test_study_5s_start_reads_about_0025_by_problem():
    from pathlib import Path

    s = Study.load(Path(__file__).resolve().parents[1] / "docs" / "results" / "smollm2-study5" / "plan.toml")
    value, se = s.start("grpo-1e-4")
    assert value == pytest.approx(0.072, abs=5e-4) and 1.96 * se == pytest.approx(0.025, abs=1e-3)


def test_a_plan_may_draw_its_evaluation_without_replacement(tmp_path):
    """A tiny plan with eval_without_replacement: the overlap line says N distinct problems, each drawn once; a task
    whose test part is too small is refused before anything trains, naming its size."""
    from grpo_lab.study.words import held_out_line

    plan = make_study(tmp_path / "ok")
    plan.write_text(plan.read_text().replace("[base]\n", "[base]\neval_without_replacement = true\n"))
    text = "\n".join(held_out_line(Study.load(plan)))
    assert "10 distinct problems, each drawn once" in text and "evaluation draws of" not in text
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "plan.toml").write_text(plan.read_text().replace('task = "arithmetic"',
                                   'task = "gym:chain_sum:min_terms=2,max_terms=2,min_digits=1,max_digits=1"')
                                   .replace("eval_problems = 10", "eval_problems = 500")
                                   .replace('policy = "tiny-lm"', 'policy = "smollm2"'))
    with pytest.raises(PlanError, match=r"holds \d+ distinct problems in \d+ draws, fewer than the 500 asked"):
        read_plan(bad / "plan.toml")


def test_a_near_tie_on_validation_is_re_read_with_the_runner_up(tmp_path):
    """Two candidates whose validation means differ by noise: the selection's near-tie is named, every planned
    comparison that names the selection is re-read with the runner-up, and the robustness rows carry it."""
    plan = tmp_path / "plan.toml"
    tmp_path.mkdir(exist_ok=True)
    plan.write_text(f"""title = "tie"
seeds = [0, 1, 2]
[base]
{toml_base(validation_problems=10)}
[arms.grpo]
method = "grpo"
[arms.sign-a]
method = "sign"
learning_rate = 1e-4
[arms.sign-b]
method = "sign"
learning_rate = 3e-4
[selections.sign-best]
among = ["sign-a", "sign-b"]
by = "validation pass@1"
[measures]
primary = "pass@1"
[[comparisons]]
a = "sign-best"
b = "grpo"
""")

    def run(name, s, rng):
        ev = evaluation(rng, {"grpo": 0.3, "sign-a": 0.5, "sign-b": 0.45}[name])
        ev["validation"] = evaluation(rng, 0.5)
        return dict(history=history(0.1, 0.3, near=False, n=10), eval=ev)
    write_runs(plan, run, config={**BASE, "validation_problems": 10})
    s = Study.load(plan)
    ties = near_ties(s)
    assert [t[0] for t in ties] == ["sign-best"]
    name, win, run_up, r = ties[0]
    assert {win, run_up} == {"sign-a", "sign-b"} and r.lo <= 0 <= r.hi
    alt = f"sign-best's runner-up ({s.plan.arms[run_up].label})"
    row = next(row for row in s.robust if row.kind == "comparison")
    assert alt in row.got and row.got[alt].d == pytest.approx(s.variant({"sign-best": run_up}).planned[0].d)
