"""Issue 82: study 7's plan is read by the engine as its PLAN.md describes it: the pilot's training at the rate the
pilot's rule chose, three hard arms and a control over six seeds, the easy task evaluated on all 200 of its problems
(none of them in the hard training pool), six planned comparisons under Holm and the harm hypothesis's rule."""

import tomllib
from pathlib import Path

from grpo_lab.study import read_plan
from grpo_lab.study.run import units

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"
PLAN = RESULTS / "smollm2-study7" / "plan.toml"
PILOT = RESULTS / "smollm2-study7-pilot" / "plan.toml"
EASY = "gym:chain_sum:min_terms=2,max_terms=2,min_digits=1,max_digits=1"
HARD = "gym:chain_sum:min_terms=2,max_terms=2,min_digits=2,max_digits=2"
CHOSEN = 2.1e-4  # the pilot's rule (PLAN.md, "The pilot's result and the rule's outcome")


def test_study_7_trains_as_the_pilot_did_at_the_rate_its_rule_chose():
    base = tomllib.loads(PLAN.read_text())["base"]
    pilot = tomllib.loads(PILOT.read_text())["base"]
    for k in ("policy", "task", "steps", "prompts_per_step", "group_size", "max_completion_length", "lora_r",
              "train_problems", "eval_problems", "eval_samples", "disjoint", "eval_without_replacement",
              "generation", "eval_dtype", "logprobs", "gradient_checkpointing", "threads"):
        assert base[k] == pilot[k], k
    plan = read_plan(PLAN)
    assert sorted(plan.seeds) == list(range(6)) and len(units(plan)) == 24 and plan.budget_hours == 16
    assert {n: a.method for n, a in plan.arms.items()} == {
        "grpo-hard": "grpo", "drgrpo-hard": "drgrpo", "near-hard": "grpo_near", "control": "grpo"}
    assert {a.config.learning_rate for a in plan.arms.values()} == {CHOSEN}
    assert {n: a.config.task for n, a in plan.arms.items()} == {
        "grpo-hard": HARD, "drgrpo-hard": HARD, "near-hard": HARD, "control": EASY}
    assert plan.tasks == {"easy": EASY, "hard": HARD}
    assert plan.primary.text == "easy pass@1" and (plan.correction, plan.alpha, plan.df) == ("holm", 0.05, "welch")
    planned = [(c.a, c.b) for c in plan.comparisons if c.family == "planned"]
    assert planned == [("grpo-hard", "start"), ("drgrpo-hard", "start"), ("near-hard", "start"),
                       ("grpo-hard", "near-hard"), ("grpo-hard", "drgrpo-hard"), ("control", "start")]
    (h,) = plan.hypotheses
    assert (h.name, h.predicts, h.margin, h.interval) == ("harm", "b", 0.05, "per-comparison")
    assert {m.text for m in plan.manipulation.values()} == {"pass@1"} and set(plan.manipulation) == set(plan.arms)


def test_the_easy_evaluation_is_all_200_problems_and_none_is_in_the_hard_training_pool():
    from grpo_lab.runner import overlap
    from grpo_lab.tasks import get_task

    plan = read_plan(PLAN)
    everything = {p.prompt for p in get_task(EASY).problems("test", 4000, 0)}
    assert len(everything) == 200
    for name in ("grpo-hard", "drgrpo-hard", "near-hard"):
        cfg = plan.arms[name].config
        easy, hard = overlap(cfg, EASY), overlap(cfg)
        assert easy["distinct"] == easy["draws"] == 200 and easy["in_training"] == 0 and easy["near"] == 0, name
        assert hard["distinct"] == hard["draws"] == 200 and hard["in_training"] == 0, name
    # the control trains on the easy task itself: its easy score is the positive control, not a held-out reading
    control = overlap(plan.arms["control"].config)
    assert control["distinct"] == 200 and control["in_training"] == 200


def test_the_pilot_chose_the_rate_whose_runs_moved_the_hard_task():
    """The guide's hand-written reason for 2.1e-4 ("the rate whose runs moved the hard task") against the pilot's
    tracked runs: the validation selection chose it, its manipulation check reads "took", the other rate's does not;
    were the pilot's data otherwise, this fails and the sentence must change."""
    from grpo_lab.study import Study
    from grpo_lab.study.words import took_word

    pilot = Study.load(PILOT)
    chosen = pilot.chosen("grpo-best")
    assert pilot.plan.arms[chosen].config.learning_rate == CHOSEN
    took = {name: took_word(r) for name, _, r in pilot.manipulation()}
    assert took[chosen] == "took" and [w for n, w in took.items() if n != chosen] == ["did not move"]
    guide = (RESULTS.parent / "guide" / "real-model.md").read_text()
    assert "(2.1e-4, the rate whose runs moved the hard task)" in " ".join(guide.split())
