"""Issue 47: a study is a first-class object. A plan file is validated with errors that name the field; `grpo-lab
study run` trains exactly the plan's missing runs (shards together whole, never twice); `grpo-lab study report`
reads every result as --resume reads it (damaged, swapped, copied, re-fingerprinted, re-graded or foreign files are
left out by name), reads only the planned comparisons with the plan's correction, states nulls as bounds from
unrounded values, adds the start's noise, calls an evaluation held-out only when it is disjoint from training, and
lists the deviations it detects."""

import json
import math
import os
import re
import shutil
import subprocess
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

from grpo_lab import stats
from grpo_lab.cli import main
from grpo_lab.compare import write_config
from grpo_lab.config import RunConfig
from grpo_lab.io import run_name, write_json_atomic
from grpo_lab.study import (PlanError, Reading, Spec, Study, bound, build, claim_words, git_history, parse_measure,
                            headline, lead, read_plan, recorded_fingerprint, judge, shard_units, took_word, units,
                            verdict_word)

BASE = dict(policy="tiny-lm", task="arithmetic", steps=2, prompts_per_step=4, group_size=4, train_problems=64,
            eval_problems=10, eval_samples=4)


def toml_base(**changes) -> str:
    """The lines of a test plan's ``[base]`` table: BASE with ``changes`` (one place for the tiny-LM settings that
    the plans of every study test share, and that ``write_runs`` writes beside them)."""
    return "".join(f"{k} = {json.dumps(v)}\n" for k, v in {**BASE, **changes}.items())

PLAN = """title = "A two-arm study"
seeds = [0, 1, 2]

[base]
""" + toml_base() + """
[arms.grpo]
method = "grpo"

[arms.sign]
method = "sign"

[measures]
primary = "pass@1"
secondary = ["greedy"]

[analysis]
correction = "holm"
{analysis}

[[comparisons]]
a = "sign"
b = "grpo"
{comparison}

[[comparisons]]
a = "sign"
b = "start"

[manipulation]
measure = "pass@1"
"""


def evaluation(rng, p: float, n_problems: int = 10, n: int = 4, grader: str = "g1") -> dict:
    correct = [int(c) for c in rng.binomial(n, p, size=n_problems)]
    return dict(greedy=float(np.mean([c > n // 2 for c in correct])), greedy_by_level={"1": 0.5}, n_samples=n,
                correct=correct, pass_at_k={"1": float(np.mean(np.asarray(correct) / n))}, grader=grader)


def make_study(tmp_path, means=None, seeds=(0, 1, 2), analysis="", comparison="") -> Path:
    """A study directory with a plan and finished runs written directly (no training): each arm's pass@1 near its
    mean in ``means``; the start at 0.3."""
    means = means or {"grpo": 0.4, "sign": 0.6}
    tmp_path.mkdir(parents=True, exist_ok=True)
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(analysis=analysis, comparison=comparison))
    base = RunConfig(**BASE)
    d = tmp_path / "runs" / "base"
    write_config(d, list(means), list(seeds), base)
    rng = np.random.default_rng(0)
    write_json_atomic(d / "start.json", evaluation(rng, 0.3))
    (d / "results").mkdir()
    for m, mean in means.items():
        for s in seeds:
            cfg = asdict(base.with_run(m, s))
            res = dict(config=cfg, history=[{"reward": mean, "loss": float(rng.normal())}], train_seconds=60.0,
                       eval_seconds=30.0, eval=evaluation(rng, mean), fingerprint=recorded_fingerprint(cfg))
            write_json_atomic(d / "results" / f"{run_name(m, s)}.json", res)
    return plan


def write_runs(plan: Path, run, config: dict = BASE, start: float = 0.3, start_shape: dict | None = None,
               rng_seed: int = 1) -> Path:
    """Each arm of a plan file written as finished (no training): a start near ``start`` in each training
    directory, and for every seed the result ``run(arm name, seed, rng)`` returns (``history`` and ``eval``, and
    optionally ``log``: the rows of the run's metrics file) beside its true config and fingerprint."""
    from dataclasses import replace

    from grpo_lab.study import read_plan
    from grpo_lab.study.run import train_dir

    p = read_plan(plan)
    rng = np.random.default_rng(rng_seed)
    for name, arm in p.arms.items():
        d = train_dir(p, arm)
        base = replace(RunConfig(**config), **arm.settings)
        if not (d / "config.json").is_file():
            write_config(d, sorted({a.method for a in p.arms.values() if train_dir(p, a) == d}), p.seeds, base)
            write_json_atomic(d / "start.json", evaluation(rng, start, **(start_shape or {})))
        (d / "results").mkdir(exist_ok=True)
        for s in arm.seeds:
            cfg = asdict(base.with_run(arm.method, s))
            res = run(name, s, rng)
            log = res.pop("log", None)
            write_json_atomic(d / "results" / f"{run_name(arm.method, s)}.json",
                              dict(config=cfg, train_seconds=60.0, eval_seconds=30.0,
                                   fingerprint=recorded_fingerprint(cfg), **res))
            if log is not None:
                (d / "metrics").mkdir(exist_ok=True)
                (d / "metrics" / f"{run_name(arm.method, s)}.jsonl").write_text(
                    "".join(json.dumps(x) + "\n" for x in log))
    return plan


def result(plan: Path, m: str, s: int) -> Path:
    return plan.parent / "runs" / "base" / "results" / f"{run_name(m, s)}.json"


# --- the plan file ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace('title = "A two-arm study"', 'title = "x"\nwhatever = 1'), "unknown field 'whatever'"),
    (lambda t: t.replace('method = "sign"', 'method = "sign"\ngroup_size = 1'), "[arms.sign]: not a valid run"),
    (lambda t: t.replace('method = "sign"', 'method = "nope"'), "[arms.sign]: not a valid run"),
    (lambda t: t.replace('a = "sign"\nb = "grpo"', 'a = "sign"\nb = "rloo"'), "b = 'rloo' names no arm"),
    (lambda t: t.replace('correction = "holm"', 'correction = "bonferroni"'), "correction 'bonferroni' is not one"),
    (lambda t: t.replace('primary = "pass@1"', ''), "missing 'primary'"),
    (lambda t: t.replace('primary = "pass@1"', 'primary = "pass@one"'), "unknown metric 'pass@one'"),
    (lambda t: t + '\n[[exploratory]]\na = "sign"\nb = "grpo"\nverdict = true\n', "a verdict is drawn only from a planned"),
    (lambda t: t.replace('eval_samples = 4', 'eval_samples = 4\nestimator = "sign"'), "'estimator' is not a setting"),
    (lambda t: t.replace('seeds = [0, 1, 2]', 'seeds = [0, 0]'), "seeds list a seed twice"),
    (lambda t: t.replace('[[comparisons]]\na = "sign"\nb = "start"',
                         '[[comparisons]]\na = "sign"\nb = "start"\nlabel = "sign − grpo"'), "share the label"),
    # issue 56: the same comparison twice, a confounded one, an unknown df, a size rule without its interval
    (lambda t: t.replace('[[comparisons]]\na = "sign"\nb = "start"', '[[comparisons]]\na = "sign"\nb = "grpo"'),
     "'sign − grpo' repeats 'sign − grpo' (the same arms, measure and pairing)"),
    (lambda t: t.replace('[arms.sign]\nmethod = "sign"', '[arms.sign]\nmethod = "sign"\nlearning_rate = 1e-3'),
     "confounded: the arms differ in learning_rate and estimator (sign, grpo)"),
    (lambda t: t.replace('correction = "holm"', 'correction = "holm"\ndf = "satterthwaite"'),
     "df 'satterthwaite' is not a convention"),
    (lambda t: t + '\n[[hypotheses]]\nname = "H"\ntest = "sign − grpo"\nsize = 0.1\n',
     "a size rule says which interval it reads"),
    (lambda t: t + '\n[[hypotheses]]\nname = "H"\ntest = "nope"\n', "test 'nope' is not the label"),
    (lambda t: t + '\n[[hypotheses]]\nname = "H"\ntest = "sign − grpo"\nsize = nan\ninterval = "holm"\n',
     "size must be a positive finite number"),
])
def test_a_bad_plan_is_refused_in_one_line_naming_the_field(tmp_path, edit, message):
    plan = tmp_path / "plan.toml"
    plan.write_text(edit(PLAN.format(analysis="", comparison="")))
    with pytest.raises(PlanError) as e:
        read_plan(plan)
    assert message in str(e.value) and "\n" not in str(e.value) and str(plan) in str(e.value)


def test_the_cli_says_a_bad_plan_in_one_line(tmp_path, capsys):
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(analysis="", comparison="").replace('correction = "holm"', 'correction = "fdr"'))
    with pytest.raises(SystemExit) as e:
        main(["study", "report", str(plan)])
    assert e.value.code == 2 and "correction 'fdr' is not one grpo-lab implements" in capsys.readouterr().err


def test_measures_name_a_task_of_the_plan():
    tasks = {"easy": "gym:chain_sum"}
    m = parse_measure("easy pass@4", tasks, "here")
    assert (m.k, m.task, m.alias) == (4, "gym:chain_sum", "easy")
    with pytest.raises(PlanError, match="'hard' is not a task of the plan"):
        parse_measure("hard pass@1", tasks, "here")


# --- reading results as --resume reads them ----------------------------------------------------------------------

def refused(plan: Path) -> dict:
    return {f: why for a in Study.load(plan).data.values() for f, why in a.refused}


def test_a_complete_study_reads_every_run(tmp_path):
    s = Study.load(make_study(tmp_path))
    assert s.complete and s.done == 6 and not refused(s.plan.path)


def test_swapped_files_are_left_out_by_name(tmp_path):
    plan = make_study(tmp_path)
    a, b = result(plan, "grpo", 0), result(plan, "sign", 2)
    ta, tb = a.read_text(), b.read_text()
    a.write_text(tb)
    b.write_text(ta)
    out = refused(plan)
    assert "holds sign seed 2, not grpo seed 0" in out["runs/base/results/grpo-seed0.json"]
    assert "holds grpo seed 0, not sign seed 2" in out["runs/base/results/sign-seed2.json"]
    s = Study.load(plan)
    assert not s.complete and "no verdict yet" in build(plan)[0][plan.parent / "REPORT.md"]


def test_a_copied_run_is_left_out_even_with_its_seed_edited(tmp_path):
    plan = make_study(tmp_path)
    shutil.copy(result(plan, "grpo", 0), result(plan, "grpo", 1))
    assert "holds grpo seed 0, not grpo seed 1" in refused(plan)["runs/base/results/grpo-seed1.json"]
    res = json.loads(result(plan, "grpo", 0).read_text())
    res["config"]["seed"] = 1
    res["fingerprint"] = recorded_fingerprint(res["config"])
    result(plan, "grpo", 1).write_text(json.dumps(res))
    assert "a copy of runs/base/results/grpo-seed0.json" in refused(plan)["runs/base/results/grpo-seed1.json"]


def test_a_changed_fingerprint_is_left_out(tmp_path):
    plan = make_study(tmp_path)
    res = json.loads(result(plan, "sign", 1).read_text())
    res["fingerprint"] = "0" * 16
    result(plan, "sign", 1).write_text(json.dumps(res))
    assert "does not match its own settings" in refused(plan)["runs/base/results/sign-seed1.json"]


def test_a_run_graded_by_another_grader_is_left_out(tmp_path):
    plan = make_study(tmp_path)
    res = json.loads(result(plan, "sign", 1).read_text())
    res["eval"]["grader"] = "000000000000"
    result(plan, "sign", 1).write_text(json.dumps(res))
    assert "graded by 000000000000, while the arm's other runs record g1" in \
        refused(plan)["runs/base/results/sign-seed1.json"]


def test_graders_the_plan_declares_alike_are_read_as_one(tmp_path):
    """Study 4's case (2026-11-27): a grading module changed where nothing is graded (an import's error message), so
    the runs after it record another fingerprint and each arm's minority was left out. A plan may declare the two
    fingerprints alike, saying why: then every run is read as one grader's, and the report says so. A declaration
    that does not name a run's fingerprint changes nothing for it."""
    plan = make_study(tmp_path)
    for m in ("grpo", "sign"):
        for s in (0, 1, 2):
            res = json.loads(result(plan, m, s).read_text())
            res["eval"]["grader"] = "aaaaaaaaaaaa" if s < 2 else "bbbbbbbbbbbb"
            result(plan, m, s).write_text(json.dumps(res))
    assert "graded by bbbbbbbbbbbb, while the arm's other runs record aaaaaaaaaaaa" in \
        refused(plan)["runs/base/results/sign-seed2.json"]
    text = plan.read_text()

    def declare(graders, why="only an error message changed"):
        plan.write_text(text.replace("[base]", f"[[same_graders]]\ngraders = {json.dumps(graders)}\n"
                                               f"why = {json.dumps(why)}\n\n[base]", 1))

    declare(["aaaaaaaaaaaa", "bbbbbbbbbbbb"])
    study = Study.load(plan)
    assert refused(plan) == {} and study.done == 6
    assert any(d.startswith("The plan declares graders aaaaaaaaaaaa, bbbbbbbbbbbb to grade alike (only an error "
                            "message changed); the runs read record aaaaaaaaaaaa, bbbbbbbbbbbb")
               for d in study.detected_deviations())
    assert not any(d.startswith("The arms were graded by more than one grader") for d in study.detected_deviations())
    declare(["aaaaaaaaaaaa", "cccccccccccc"])
    assert "runs/base/results/sign-seed2.json" in refused(plan)
    for graders, why, match in ((["aaaaaaaaaaaa"], "x", "at least two distinct"),
                                (["aaaaaaaaaaaa", "g1"], "x", "12 hex digits"),
                                (["aaaaaaaaaaaa", "bbbbbbbbbbbb"], " ", "why must say")):
        declare(graders, why)
        with pytest.raises(PlanError, match=match):
            read_plan(plan)
    plan.write_text(text.replace("[base]", '[[same_graders]]\ngraders = ["aaaaaaaaaaaa", "bbbbbbbbbbbb"]\nwhy = "x"\n'
                                           '[[same_graders]]\ngraders = ["bbbbbbbbbbbb", "cccccccccccc"]\nwhy = "y"\n\n'
                                           '[base]', 1))
    with pytest.raises(PlanError, match="bbbbbbbbbbbb is in two same_graders entries"):
        read_plan(plan)


def test_a_nan_score_is_left_out_not_counted(tmp_path):
    plan = make_study(tmp_path)
    res = json.loads(result(plan, "sign", 0).read_text())
    res["eval"]["greedy"] = float("nan")
    result(plan, "sign", 0).write_text(json.dumps(res))  # json writes NaN, which a reader parses
    assert "greedy is nan" in refused(plan)["runs/base/results/sign-seed0.json"]
    assert list(Study.load(plan).values("sign")) == [1, 2]


def test_a_vllm_run_among_transformers_runs_is_left_out(tmp_path):
    plan = make_study(tmp_path)
    res = json.loads(result(plan, "grpo", 2).read_text())
    res["config"]["generation"] = "vllm"
    res["fingerprint"] = recorded_fingerprint(res["config"])
    result(plan, "grpo", 2).write_text(json.dumps(res))
    assert "generation: 'transformers' != 'vllm'" in refused(plan)["runs/base/results/grpo-seed2.json"]


def test_a_damaged_file_is_left_out_with_its_name(tmp_path):
    plan = make_study(tmp_path)
    result(plan, "grpo", 1).write_text("{not json")
    assert "unreadable" in refused(plan)["runs/base/results/grpo-seed1.json"]


# --- the analysis ---------------------------------------------------------------------------------------------------

def reading(d, lo, hi, apart, b="grpo", claim=None, mean_b=None, kind="welch"):
    spec = Spec("sign", b, "sign − grpo", parse_measure("pass@1", {}, "t"), "planned", True, claim)
    return Reading(spec, 6, 6, d=d, lo=lo, hi=hi, p=0.5, kind=kind, apart=apart, mean_b=mean_b)


def test_a_null_is_its_bound_from_unrounded_values(tmp_path):
    s = Study.load(make_study(tmp_path, analysis="margin = 0.03"))
    inside = reading(0.0, -0.0299, 0.0299, False)
    assert "equivalent at the plan's margin" in verdict_word(s, inside)
    just_out = reading(0.0, -0.0304, 0.02, False)  # prints -0.030 but lies beyond the margin
    assert "undecided at this size" in verdict_word(s, just_out)
    assert bound(s, reading(-0.072, -0.1757, 0.0314, False)) == \
        "sign ahead by more than 0.031 and grpo ahead by more than 0.176 are excluded"
    assert "sign ahead" == verdict_word(s, reading(0.02, 0.0004, 0.04, True))  # +0.000 printed, above 0


def test_a_side_past_the_largest_possible_difference_excludes_nothing(tmp_path):
    """Two seeds far apart give a pass@1 difference an interval like [-1.890, +1.402]: "grpo ahead by more than
    1.890 is excluded" is true and empty (a difference of fractions cannot exceed 1), so the bound says so."""
    s = Study.load(make_study(tmp_path))
    assert bound(s, reading(-0.244, -1.890, 1.402, False)) == \
        "it excludes nothing yet (the interval reaches past ±1, the most a difference of fractions can be)"
    assert bound(s, reading(0.7, 0.3, 1.2, True)).startswith("its interval lies above 0; above it nothing is excluded")
    one_side = bound(s, reading(-0.2, -1.2, 0.3, False))
    assert one_side.startswith("sign ahead by more than 0.300 is excluded; on the other side nothing is")
    assert bound(s, reading(-0.2, -0.9, 0.3, False)).endswith("are excluded")  # within ±1: both sides bound


@pytest.mark.parametrize("start, lo, hi, said", [
    # a start of 0.15: a loss can be 0.15 at most, so "a loss larger than 0.927 is excluded" would be empty
    (0.15, -0.927, 1.083, "it excludes nothing yet (the interval reaches past [-0.150, +0.850], all a change from "
                          "the start's 0.150 can be)"),
    (0.15, -0.927, 0.6, "a gain larger than 0.600 is excluded; on the other side nothing is (the interval reaches "
                        "past [-0.150, +0.850]"),
    # the same data reversed (a start of 0.85): now the loss side bounds and the gain side cannot
    (0.85, -0.6, 0.927, "a loss larger than 0.600 is excluded; on the other side nothing is (the interval reaches "
                        "past [-0.850, +0.150]"),
    (0.15, -0.1, 0.6, "a gain larger than 0.600 and a loss larger than 0.100 are excluded"),  # within reach: both
    # study 7's control at two seeds: above 0, its top past reach (never "a loss larger than -0.268 is excluded")
    (0.15, 0.268, 0.990, "its interval lies above 0; above it nothing is excluded (the interval reaches past"),
    (0.85, -0.990, -0.268, "its interval lies below 0; below it nothing is excluded (the interval reaches past"),
])
def test_a_change_from_the_start_excludes_only_what_the_start_lets_it_reach(tmp_path, start, lo, hi, said):
    from grpo_lab.study import reach
    from grpo_lab.study.words import against_fixed

    s = Study.load(make_study(tmp_path))
    r = reading((lo + hi) / 2, lo, hi, False, b="start", mean_b=start, kind="start")
    assert bound(s, r).startswith(said)
    assert against_fixed(r) and reach(r) == pytest.approx((-start, 1 - start))
    between = reading(0.0, -0.5, 0.5, False, mean_b=start)
    assert not against_fixed(between) and reach(between) == (-1.0, 1.0)  # between two arms: ±1 whatever b's mean


@pytest.mark.parametrize("lo, hi, said", [
    # study 6's H1b at two seeds: a rank 161 below 2 would be below 0, so that side bounds nothing
    (-161.056, 211.480, "update-erank-end of grpo above 2 by more than 211.480 is excluded; on the other side "
                        "nothing is (the interval reaches below -2.000, the least a difference from 2 can be: update-erank-end is at least 0)"),
    (-1.5, 6.0, "update-erank-end of grpo above 2 by more than 6.000 and update-erank-end of grpo below 2 by more "
                "than 1.500 are excluded"),  # within reach: the quantity named, not the arm (issue 107)
    (-3.0, -2.5, "its interval lies below 0; below it nothing is excluded (the interval reaches below -2.000"),
])
def test_a_measure_with_a_floor_against_a_level_excludes_only_what_it_can_reach(tmp_path, lo, hi, said):
    """An effective rank is at least 0, so its difference from a level of 2 is at least -2: a side below that
    excludes nothing. A side above is never cut (no ceiling), and between two arms such a measure has no reach."""
    from grpo_lab.study import reach
    from grpo_lab.study.plan import Spec

    s = Study.load(make_study(tmp_path))
    spec = Spec("grpo", "2", "grpo − 2", parse_measure("update-erank-end", {}, "t"), "planned", True, level=2.0)
    r = Reading(spec, 2, 0, d=(lo + hi) / 2, lo=lo, hi=hi, p=0.3, kind="level", apart=False, mean_b=2.0)
    assert bound(s, r).startswith(said)
    assert reach(r) == (-2.0, math.inf)
    between = Spec("grpo", "sign", "grpo − sign", spec.measure, "planned", True)
    assert reach(Reading(between, 2, 2, d=1.0, lo=-300.0, hi=300.0, p=0.9, kind="welch", apart=False,
                         mean_b=40.0)) is None


def test_the_comparisons_figure_cuts_an_interval_at_what_its_difference_can_reach():
    """Issue 82's study 7 at two seeds: near-hard against a start of 0.15, [-0.927, +1.083] drawn as [-0.15, +0.85]
    with both ends marked cut; an interval within reach is drawn whole and unmarked."""
    from grpo_lab.viz import comparison_intervals

    fig = comparison_intervals([("near − start", 0.078, -0.927, 1.083, True, [], (-0.15, 0.85)),
                                ("grpo − start", 0.2, 0.05, 0.35, True, [], (-0.15, 0.85))], title="t")
    ax = fig.axes[0]
    ends = sorted(float(x) for line in ax.lines if line.get_marker() == "s" for x in line.get_xdata())
    assert ends == pytest.approx([-0.15, 0.85])  # the cut ends, on the near-hard row only
    left, right = ax.get_xlim()
    assert -0.4 < left < -0.15 and 0.85 < right < 1.1  # the axis fits the drawn intervals, not the t-interval's ±1
    assert "interval cut at what the difference can reach" in [t.get_text() for t in fig.legends[0].get_texts()]
    whole = comparison_intervals([("grpo − start", 0.2, 0.05, 0.35, True, [], (-0.15, 0.85))], title="t")
    assert not [x for line in whole.axes[0].lines if line.get_marker() == "s" for x in line.get_xdata()]
    assert all("cut" not in t.get_text() for t in whole.legends[0].get_texts())


def test_a_claim_the_task_cannot_reach_is_said_to_be_unreachable(tmp_path):
    s = Study.load(make_study(tmp_path))
    words = claim_words(s, reading(-0.035, -0.114, 0.043, False, claim=0.454, mean_b=0.711))
    assert "cannot occur here" in words and "[-0.711, +0.289]" in words and "outside the interval" not in words
    assert "exclude it at 95%" in claim_words(s, reading(0.0, -0.17, 0.17, False, claim=0.454, mean_b=0.1))


def test_a_comparison_with_the_start_carries_the_start_noise(tmp_path):
    s = Study.load(make_study(tmp_path))
    r = next(r for r in s.planned if r.spec.b == "start")
    x = list(s.values("sign").values())
    _, lo, hi = stats.mean_ci(x)
    assert r.start_se > 0 and r.hi - r.lo > hi - lo
    assert (r.d, r.lo, r.hi) == stats.change_ci(x, *s.start("sign"))


def test_seeds_that_agree_exactly_give_no_verdict(tmp_path):
    plan = make_study(tmp_path)
    for m in ("grpo", "sign"):
        for seed in (0, 1, 2):
            res = json.loads(result(plan, m, seed).read_text())
            res["eval"] = json.loads(result(plan, m, 0).read_text())["eval"]
            res["history"][0]["loss"] = seed + (m == "sign")  # not copies of one another
            result(plan, m, seed).write_text(json.dumps(res))
    s = Study.load(plan)
    r = next(r for r in s.planned if r.spec.b == "grpo")
    assert r.d is None and "cannot tell" in r.why_not


def test_pairing_by_seed_only_where_the_plan_says_so(tmp_path):
    unpaired = Study.load(make_study(tmp_path / "a"))
    paired = Study.load(make_study(tmp_path / "b", analysis='pairing = "seed"'))
    assert unpaired.planned[0].kind == "welch" and paired.planned[0].kind == "paired"
    a, b = (list(paired.values(m).values()) for m in ("sign", "grpo"))
    assert (paired.planned[0].d, paired.planned[0].lo, paired.planned[0].hi) == stats.paired_ci(a, b)


def test_holm_reads_the_planned_family_and_seeds_needed_at_its_strictest_level(tmp_path):
    s = Study.load(make_study(tmp_path, means={"grpo": 0.45, "sign": 0.55}))
    rows = s.planned
    assert [r.apart for r in rows] == stats.holm([r.p for r in rows])
    welch = rows[0]
    if not welch.apart:
        x, y = (list(s.values(m).values()) for m in ("sign", "grpo"))
        assert welch.need == stats.seeds_needed(x, y, alpha=0.05 / 2)


# --- design checks ----------------------------------------------------------------------------------------------------

@pytest.fixture
def toy_task():
    from grpo_lab.tasks import TASKS, Problem, Task, register_task

    @register_task
    class Shared(Task):  # the test split is the train split: every evaluation problem is in the training pool
        name = "toy_shared"
        tiny_lm_ok = True

        def problems(self, split, n, seed, smoke=False):
            return [Problem(f"{i}+1=", str(i + 1), 1) for i in range(n)]

    @register_task
    class Disjoint(Task):
        name = "toy_disjoint"
        tiny_lm_ok = True

        def problems(self, split, n, seed, smoke=False):
            return [Problem(f"{i}+{1 if split == 'train' else 2}=", str(i), 1) for i in range(n)]

    yield
    TASKS.pop("toy_shared")
    TASKS.pop("toy_disjoint")


@pytest.mark.parametrize("task, held_out", [("toy_shared", False), ("toy_disjoint", True)])
def test_an_evaluation_is_held_out_only_when_disjoint_from_training(tmp_path, toy_task, task, held_out):
    from grpo_lab.study import held_out_line

    plan = make_study(tmp_path)
    plan.write_text(plan.read_text().replace('task = "arithmetic"', f'task = "{task}"'))
    line = " ".join(held_out_line(Study.load(plan)))
    if held_out:
        assert "**held-out**" in line and "none in the training pool" in line
    else:
        assert "**not held-out**" in line and "10 of them in the training pool" in line and "all seen" in line


def test_a_treatment_that_did_not_take_is_said(tmp_path):
    s = Study.load(make_study(tmp_path, means={"grpo": 0.3, "sign": 0.9}))
    took = {name: r for name, _, r in s.manipulation()}
    assert took["sign"].lo > 0 and took["grpo"].lo < 0 < took["grpo"].hi
    report = build(s.plan.path)[0][s.plan.home / "REPORT.md"]
    assert "**did not move it**" in report and "did not measurably move its measure in grpo" in report


def test_a_treatment_that_moved_its_measure_down_is_not_called_untaken(tmp_path):
    """Issue 56: study 3's summary said the lr 1e-3 arms "did not take" while its own section showed both moved
    pass@1 down, separated. Three words now: took, moved it the wrong way, did not move it."""
    plan = make_study(tmp_path / "down", means={"grpo": 0.05, "sign": 0.9})
    write_json_atomic(plan.parent / "runs" / "base" / "start.json", evaluation(np.random.default_rng(0), 1.0))
    s = Study.load(plan)
    took = {name: r for name, _, r in s.manipulation()}
    assert took["grpo"].hi < 0  # the start solves everything: grpo moved it down, separated
    text = build(s.plan.path)[0][s.plan.home / "REPORT.md"]
    assert "**moved it the wrong way**" in text and "moved its measure the wrong way (down from the start) in grpo" in text
    assert "did not measurably move its measure in grpo" not in text


def commit(cwd, *args, day: int):
    """``git add`` of ``args`` and a commit dated 2026-01-<day> (committer date: what git log's %ct reads)."""
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "PATH": "/usr/bin:/bin", "HOME": str(cwd), "GIT_COMMITTER_DATE": f"2026-01-0{day}T00:00:00",
           "GIT_AUTHOR_DATE": f"2026-01-0{day}T00:00:00"}
    subprocess.run(["git", "init", "-q"], cwd=cwd, check=True, capture_output=True, env=env)
    subprocess.run(["git", "add", *args], cwd=cwd, check=True, capture_output=True, env=env)
    subprocess.run(["git", "commit", "-qm", f"day {day}"], cwd=cwd, check=True, capture_output=True, env=env)


def test_a_plan_committed_before_its_runs_and_never_edited_is_no_deviation(tmp_path):
    plan = make_study(tmp_path)
    commit(tmp_path, "plan.toml", day=1)
    commit(tmp_path, "runs", day=2)
    assert not [d for d in git_history(read_plan(plan)) if "plan" in d]
    plan.write_text(plan.read_text().replace('title = "A two-arm study"', 'title = "A two-arm study, edited"'))
    assert any("has changes not committed" in d for d in git_history(read_plan(plan)))
    commit(tmp_path, "plan.toml", day=3)
    assert any("was edited after the first result" in d for d in git_history(read_plan(plan)))


def test_a_plan_committed_after_its_first_result_is_a_deviation(tmp_path):
    plan = make_study(tmp_path)
    commit(tmp_path, "runs", day=1)
    commit(tmp_path, "plan.toml", day=2)
    assert any("first committed after the first result" in d for d in git_history(read_plan(plan)))


def test_a_run_that_started_vllm_before_the_fix_is_a_deviation(tmp_path):
    plan = make_study(tmp_path)
    res = json.loads(result(plan, "sign", 1).read_text())
    res["generation"] = dict(engine="vllm", syncs=2)
    res["steps_done"] = 2
    result(plan, "sign", 1).write_text(json.dumps(res))
    found = [d for d in Study.load(plan).detected_deviations() if "started vLLM's engine" in d]
    assert len(found) == 1 and "sign-seed1.json" in found[0]
    res["generation"]["generators_kept"] = True  # run after the fix: the engine keeps the generators
    result(plan, "sign", 1).write_text(json.dumps(res))
    assert not [d for d in Study.load(plan).detected_deviations() if "started vLLM's engine" in d]


# --- study run ------------------------------------------------------------------------------------------------------

def test_shards_are_disjoint_and_together_whole(tmp_path):
    plan = read_plan(make_study(tmp_path, seeds=(0, 1, 2)))
    every = units(plan)
    for n in (1, 2, 3, 4, 7):
        slices = [shard_units(plan, (k, n)) for k in range(1, n + 1)]
        assert sorted(u for s in slices for u in s) == sorted(every)
        assert sum(len(s) for s in slices) == len(every)


def test_study_run_trains_exactly_the_plans_runs_once_across_shards(tmp_path, capsys):
    """The smoke plan of the tiny LM: two arms, two seeds; --shard 1/2 then 2/2 train the four runs, a third call
    trains none, and the report has a verdict, a bound and the overlap line."""
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(analysis="", comparison="").replace("seeds = [0, 1, 2]", "seeds = [0, 1]"))
    assert main(["study", "run", str(plan), "--shard", "1/2", "--no-report"]) == 0
    first = capsys.readouterr().out
    assert main(["study", "run", str(plan), "--shard", "2/2"]) == 0
    second = capsys.readouterr().out
    trains = [sum(x.startswith("training ") for x in out.splitlines()) for out in (first, second)]
    assert trains == [2, 2]
    assert first.count("pace on this machine") == 1 and "for the 2 runs left" in first  # issue 61: once a process
    assert "Shorter:" not in first  # a plan fixes its runs: no flags to cut them
    trained = sorted(p.name for p in (tmp_path / "runs" / "base" / "results").glob("*.json"))
    assert trained == ["grpo-seed0.json", "grpo-seed1.json", "sign-seed0.json", "sign-seed1.json"]
    assert main(["study", "run", str(plan)]) == 0
    assert "trained 0 run(s)" in capsys.readouterr().out
    report = (tmp_path / "REPORT.md").read_text()
    assert "## What it found" in report and "planned comparisons separated" in report
    assert "are excluded" in report  # each null as the bound it sets
    assert "## Is the evaluation held out?" in report and "evaluated on `arithmetic`" in report
    assert (tmp_path / "arms.png").is_file() and (tmp_path / "comparisons.png").is_file()
    assert main(["study", "report", "--check", str(plan)]) == 0
    assert not (tmp_path / "runs" / "base" / "locks").exists()


def test_check_names_a_page_the_runs_no_longer_give_and_ignores_the_git_lines(tmp_path, capsys):
    from grpo_lab.study import GIT_LINE

    plan = make_study(tmp_path)
    assert main(["study", "report", str(plan)]) == 0
    report = tmp_path / "REPORT.md"
    report.write_text(report.read_text() + f"{GIT_LINE}The plan file was first committed after ...\n")
    capsys.readouterr()
    assert main(["study", "report", "--check", str(plan)]) == 0  # a line from git's history: not the runs'
    report.write_text(report.read_text().replace("## What it found", "## What it found (edited)"))
    assert main(["study", "report", "--check", str(plan)]) == 1
    assert "REPORT.md differs from what grpo-lab study report writes" in capsys.readouterr().out


def test_study_run_refuses_a_directory_of_other_settings(tmp_path):
    plan = make_study(tmp_path)
    conf = tmp_path / "runs" / "base" / "config.json"
    c = json.loads(conf.read_text())
    c["base"]["steps"] = 3
    from grpo_lab.compare import shared_settings
    from grpo_lab.io import fingerprint

    c["fingerprint"] = fingerprint(shared_settings(RunConfig(**c["base"])))
    c["settings_at_start"] = shared_settings(RunConfig(**c["base"]))
    conf.write_text(json.dumps(c))
    with pytest.raises(ValueError, match="steps: 3 != 2"):
        from grpo_lab.study import run_study

        run_study(read_plan(plan), echo=lambda m: None)


# --- issue 49: validation splits, selections, disjoint pools -----------------------------------------------------

SELECTION_PLAN = """title = "Best against best"
seeds = [0, 1, 2]

[base]
""" + toml_base(validation_problems=10) + """
[arms.grpo-a]
method = "grpo"
learning_rate = 1e-4
[arms.grpo-b]
method = "grpo"
learning_rate = 1e-3
[arms.sign-a]
method = "sign"
learning_rate = 1e-4
[arms.sign-b]
method = "sign"
learning_rate = 1e-3

[selections.grpo-best]
among = ["grpo-a", "grpo-b"]
by = "validation pass@1"
[selections.sign-best]
among = ["sign-a", "sign-b"]
by = "{by}"

[measures]
primary = "pass@1"

[[comparisons]]
a = "sign-best"
b = "grpo-best"
"""


def make_selection_study(tmp_path, test, validation, by="validation pass@1") -> Path:
    """Four arms (two methods at two rates); ``test[arm]`` and ``validation[arm]``: their mean pass@1 on each."""
    from grpo_lab.study import default_dir

    plan = tmp_path / "plan.toml"
    plan.write_text(SELECTION_PLAN.replace("{by}", by))
    rng = np.random.default_rng(1)
    parsed = read_plan(plan) if by.startswith("validation") else None
    for arm, lr in (("grpo-a", 1e-4), ("grpo-b", 1e-3), ("sign-a", 1e-4), ("sign-b", 1e-3)):
        base = RunConfig(**BASE, validation_problems=10, learning_rate=lr)
        d = default_dir(parsed, parsed.arms[arm]) if parsed else tmp_path / "runs" / f"lr{lr}"
        if not (d / "config.json").is_file():
            write_config(d, ["grpo", "sign"], [0, 1, 2], base)
            write_json_atomic(d / "start.json", {**evaluation(rng, 0.3), "validation": evaluation(rng, 0.3)})
            (d / "results").mkdir()
        method = arm.split("-")[0]
        for s in (0, 1, 2):
            cfg = asdict(base.with_run(method, s))
            ev = {**evaluation(rng, test[arm]), "validation": evaluation(rng, validation[arm])}
            write_json_atomic(d / "results" / f"{run_name(method, s)}.json",
                              dict(config=cfg, history=[{"reward": 0.5, "loss": float(rng.normal())}], train_seconds=1.0,
                                   eval_seconds=1.0, eval=ev, fingerprint=recorded_fingerprint(cfg)))
    return plan


def test_a_selection_chooses_on_the_validation_split_and_the_comparison_reads_the_test_split(tmp_path):
    test = {"grpo-a": 0.5, "grpo-b": 0.2, "sign-a": 0.3, "sign-b": 0.7}
    validation = {"grpo-a": 0.2, "grpo-b": 0.6, "sign-a": 0.3, "sign-b": 0.8}  # grpo's best on validation is b
    s = Study.load(make_selection_study(tmp_path, test, validation))
    assert s.chosen("grpo-best") == "grpo-b" and s.chosen("sign-best") == "sign-b"
    r = s.planned[0]
    x, y = (list(s.values(a).values()) for a in ("sign-b", "grpo-b"))
    d, lo, hi = stats.diff_ci(x, y, df="welch")  # the plan's default df (issue 56)
    assert (r.d, r.lo, r.hi) == pytest.approx((d, lo, hi), rel=1e-12)  # the test values of the arms chosen
    report = build(s.plan.path)[0][s.plan.home / "REPORT.md"]
    assert "## Selections (on the validation split" in report and "**grpo-b**" in report


def test_the_data_output_names_the_arm_each_selection_chose(tmp_path):
    """A notebook reads which rate the validation split chose for each method; reversed validation data reverse the
    choice; before every candidate has all its runs, nothing is chosen."""
    for name, validation, want in (("a", {"grpo-a": 0.2, "grpo-b": 0.6, "sign-a": 0.3, "sign-b": 0.8}, "b"),
                                   ("b", {"grpo-a": 0.6, "grpo-b": 0.2, "sign-a": 0.8, "sign-b": 0.3}, "a")):
        (tmp_path / name).mkdir()
        plan = make_selection_study(tmp_path / name, dict.fromkeys(validation, 0.4), validation)
        plan.write_text(plan.read_text() + '\n[[outputs]]\npage = "s.json"\nform = "data"\n')
        data = json.loads(build(plan, root=tmp_path / name)[0][tmp_path / name / "s.json"])
        assert data["selections"] == {m + "-best": {"among": [m + "-a", m + "-b"], "by": "validation pass@1",
                                                    "chosen": f"{m}-{want}"} for m in ("grpo", "sign")}
    next((tmp_path / "b").rglob("grpo-seed2.json")).unlink()
    data = json.loads(build(plan, root=tmp_path / "b")[0][tmp_path / "b" / "s.json"])
    assert data["selections"]["grpo-best"]["chosen"] is None  # grpo-a or grpo-b still lacks a run
    assert data["selections"]["sign-best"]["chosen"] == "sign-a"


def test_a_selection_on_the_test_split_is_refused(tmp_path):
    plan = make_selection_study(tmp_path, dict.fromkeys(["grpo-a", "grpo-b", "sign-a", "sign-b"], 0.5),
                                dict.fromkeys(["grpo-a", "grpo-b", "sign-a", "sign-b"], 0.5), by="pass@1")
    with pytest.raises(PlanError, match="reads the test problems; a selection reads the validation split"):
        read_plan(plan)


def test_a_disjoint_pool_makes_an_overlapping_task_held_out(tmp_path, toy_task):
    from grpo_lab.runner import eval_problems, train_problems, validation_problems
    from grpo_lab.study import held_out_line

    cfg = RunConfig(**{**BASE, "task": "toy_shared"}, validation_problems=5, disjoint=True)
    train, test, val = ({p.prompt for p in f(cfg)} for f in (train_problems, eval_problems, validation_problems))
    assert not train & test and not train & val and not val & test
    plan = make_study(tmp_path)
    plan.write_text(plan.read_text().replace('task = "arithmetic"', 'task = "toy_shared"\ndisjoint = true'))
    line = " ".join(held_out_line(Study.load(plan)))
    assert "**held-out**" in line and "not held-out" not in line


def test_an_interaction_is_the_difference_of_two_differences(tmp_path):
    """Issue 49's H1 is an interaction: does a KL penalty change sign − drgrpo? (a − b) − (c − d) over four arms,
    Welch's standard error, the degrees of freedom the plan declares (issue 56: Welch-Satterthwaite by default,
    min-n when the plan says so)."""
    plan = make_selection_study(tmp_path, {"grpo-a": 0.5, "grpo-b": 0.2, "sign-a": 0.3, "sign-b": 0.7},
                                {"grpo-a": 0.5, "grpo-b": 0.5, "sign-a": 0.5, "sign-b": 0.5})
    plan.write_text(plan.read_text() + '\n[[comparisons]]\na = "sign-b"\nb = "grpo-b"\nc = "sign-a"\nd = "grpo-a"\n')
    s = Study.load(plan)
    r = s.planned[1]
    v = {a: list(s.values(a).values()) for a in ("sign-b", "grpo-b", "sign-a", "grpo-a")}
    d = np.mean(v["sign-b"]) - np.mean(v["grpo-b"]) - (np.mean(v["sign-a"]) - np.mean(v["grpo-a"]))
    se = math.sqrt(sum(np.var(x, ddof=1) / len(x) for x in v.values()))
    dof = stats.welch_df_of([(np.var(x, ddof=1), len(x)) for x in v.values()])
    assert r.kind == "interaction" and r.d == pytest.approx(d) and r.hi - r.d == pytest.approx(stats.t_quantile(dof) * se)
    assert (r.d, r.lo, r.hi, r.p) == pytest.approx(stats.interaction_ci(*v.values(), df="welch"), rel=1e-12)
    plan.write_text(plan.read_text() + '\n[analysis]\ndf = "min-n"\n')
    r = Study.load(plan).planned[1]
    assert r.hi - r.d == pytest.approx(stats.t_quantile(2) * se)
    assert r.spec.label == "(sign-b − grpo-b) − (sign-a − grpo-a)" and "exceed" in bound(s, r)
    bad = plan.read_text() + '\n[[comparisons]]\na = "sign-b"\nb = "grpo-b"\nc = "sign-a"\n'
    plan.write_text(bad)
    with pytest.raises(PlanError, match="an interaction names four arms"):
        read_plan(plan)


def test_an_interaction_naming_a_selection_not_chosen_yet_says_so(tmp_path):
    """A comparison that names a selection waits for its choice, and says so: an interaction used to say "needs 2
    seeds in each of its four arms" while every arm had three. Both kinds of reading give the same reason."""
    plan = make_selection_study(tmp_path, {"grpo-a": 0.5, "grpo-b": 0.2, "sign-a": 0.3, "sign-b": 0.7},
                                {"grpo-a": 0.2, "grpo-b": 0.6, "sign-a": 0.3, "sign-b": 0.8})
    plan.write_text(plan.read_text() + '\n[[comparisons]]\na = "sign-best"\nb = "grpo-best"\nc = "sign-a"\nd = "grpo-a"\n')
    s = Study.load(plan)
    assert [r.why_not for r in s.planned] == [None, None]  # both read once every candidate has its runs
    next(tmp_path.rglob("grpo-seed2.json")).unlink()
    s = Study.load(plan)
    assert s.chosen("grpo-best") is None and s.chosen("sign-best") == "sign-b"
    want = "not read yet: grpo-best chooses an arm once every candidate has all its runs"
    assert [r.why_not for r in s.planned] == [want, want]
    assert all(r.d is None for r in s.planned)
    report = build(s.plan.path)[0][s.plan.home / "REPORT.md"]
    assert want in report and "needs 2 seeds" not in report


def test_directories_that_evaluate_the_same_start_share_it(tmp_path, capsys):
    """Issue 49: a study with arms at two learning rates evaluates its start once (the rate does not change it)."""
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(analysis="", comparison="").replace("seeds = [0, 1, 2]", "seeds = [0]")
                    .replace('method = "sign"', 'method = "sign"\nlearning_rate = 1e-3')
                    .replace('a = "sign"\nb = "grpo"', 'a = "sign"\nb = "grpo"\ncontrast = "a test of the shared start"'))
    assert main(["study", "run", str(plan), "--no-report"]) == 0
    out = capsys.readouterr().out
    starts = sorted(tmp_path.glob("runs/*/start.json"))
    assert len(starts) == 2 and "copied from" in out
    a, b = (json.loads(p.read_text()) for p in starts)
    assert {k: v for k, v in a.items() if k != "copied_from"} == {k: v for k, v in b.items() if k != "copied_from"}


def _four_run_plan(tmp_path) -> Path:
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN.format(analysis="", comparison="").replace("seeds = [0, 1, 2]", "seeds = [0, 1]"))
    return plan


def test_a_worker_trains_its_slice_first_then_the_runs_no_one_else_did(tmp_path):
    """Issue 47 (found in study 3, when one of two workers was killed for memory): worker 2 of 2 alone trains its
    own slice first, then sweeps the others' runs, so a dead worker's runs are not left undone."""
    from grpo_lab.study import run_study

    plan = read_plan(_four_run_plan(tmp_path))
    said = []
    out = run_study(plan, worker=(2, 2), echo=said.append)
    order = [m.split(" in ")[0].removeprefix("training ") for m in said if m.startswith("training ")]
    slice2 = [f"{name} seed {seed}" for name, seed in shard_units(plan)[1::2]]
    assert order[:len(slice2)] == slice2 and len(order) == len(units(plan)) == 4
    assert [m for m in said if m.startswith("pace on this machine")][0].count("across 2 workers") == 1
    assert sorted(out["trained"]) == sorted(order)


def test_start_by_starts_no_run_after_its_time_and_the_next_run_resumes(tmp_path):
    """``--start-within``: a study that must stop at a known time (a session, an allocation) starts no run after
    it; the runs left are named, nothing of theirs is written, and the next ``study run`` trains them."""
    import time

    from grpo_lab.study import run_study, train_dir

    plan = read_plan(_four_run_plan(tmp_path))
    said = []
    out = run_study(plan, echo=said.append, start_by=time.time() - 1)
    assert out["trained"] == [] and len(out["not_started"]) == 4
    assert any(m.startswith("not started, the time --start-within gave having passed") and "run again" in m
               for m in said)
    d = train_dir(plan, plan.arms["grpo"])
    assert not list((d / "results").glob("*.json")) and not (d / "locks").exists()
    out = run_study(plan, echo=lambda m: None, start_by=time.time() + 3600)
    assert len(out["trained"]) == 4 and out["not_started"] == []


def test_start_within_reaches_every_worker_and_is_refused_where_it_cannot_act(tmp_path, monkeypatch, capsys):
    """The parent turns minutes into one deadline and hands the same one to each worker; a negative or
    non-finite number, or the Ray executor, is refused by name."""
    import time

    from grpo_lab.cli import main
    from grpo_lab.study import run as study_run

    plan = _four_run_plan(tmp_path)
    started = []

    class Proc:
        def __init__(self, args, env=None):
            started.append(args)

        def wait(self):
            return 0

    monkeypatch.setattr(study_run.subprocess, "Popen", Proc)
    t0 = time.time()
    assert main(["study", "run", str(plan), "--workers", "2", "--start-within", "30", "--no-report"]) == 0
    by = [float(a[a.index("--internal-start-by") + 1]) for a in started]
    assert len(by) == 2 and by[0] == by[1] and t0 + 1800 <= by[0] <= time.time() + 1800
    for args, message in [(["--start-within", bad], "--start-within is a number of minutes >= 0")
                          for bad in ("-1", "nan", "inf")] + [(["--executor", "ray", "--start-within", "5"],
                                                               "--start-within is for the local executor")]:
        with pytest.raises(SystemExit) as e:
            main(["study", "run", str(plan), *args])
        assert e.value.code == 2 and message in capsys.readouterr().err


def test_a_run_held_by_another_process_is_skipped_and_a_dead_ones_lock_is_taken(tmp_path):
    """A run another live process holds is skipped; once that process is killed (its lock file left behind, as
    after an out-of-memory kill), the next study run trains it from the start."""
    import multiprocessing as mp
    import os
    import signal

    from grpo_lab.io import run_name
    from grpo_lab.study import run_study, train_dir

    plan = read_plan(_four_run_plan(tmp_path))
    name, seed = units(plan)[0]
    arm = plan.arms[name]
    lock_dir = train_dir(plan, arm) / "locks" / run_name(arm.method, seed)
    ctx = mp.get_context("spawn")
    ready = ctx.Event()
    owner = ctx.Process(target=_hold_lock, args=(str(lock_dir), ready))
    owner.start()
    try:
        assert ready.wait(60)
        said = []
        out = run_study(plan, echo=said.append)
        assert any(f"{name} seed {seed}: another process is training it" in m for m in said)
        assert len(out["trained"]) == 3 and f"{name} seed {seed}" not in out["trained"]
    finally:
        os.kill(owner.pid, signal.SIGKILL)
        owner.join(30)
    assert (lock_dir / ".lock").is_file()  # left behind by the killed owner
    out = run_study(plan, echo=lambda m: None)
    assert out["trained"] == [f"{name} seed {seed}"] and len(out["finished"]) == 3


def _hold_lock(lock_dir, ready):
    import time

    from grpo_lab.io import DirLock

    with DirLock(Path(lock_dir)):
        ready.set()
        time.sleep(600)


def test_with_workers_the_parent_loads_no_model(tmp_path, monkeypatch):
    """The start's evaluation loads the model: with --workers the workers do it, and the parent only checks the
    directories and waits (in study 3 an idle parent held 3.4 GB for the whole study)."""
    from grpo_lab.study import run as study

    plan = read_plan(_four_run_plan(tmp_path))

    def refuse(*a, **k):
        raise AssertionError("the parent evaluated the start")

    monkeypatch.setattr(study, "prepare", refuse)
    monkeypatch.setattr(study, "_share_start", refuse)
    spawned = []
    monkeypatch.setattr(study, "_spawn", lambda plan, shard, workers, echo, *by: spawned.append(workers) or {})
    study.run_study(plan, workers=2, echo=lambda m: None)
    assert spawned == [2] and (tmp_path / "runs" / "base" / "config.json").is_file()


def test_an_output_page_carries_the_whole_verdict_or_only_the_headline(tmp_path):
    """A page short of room (the README, at its word limit) takes ``form = "headline"``: the headline and a pointer
    to the report; the default form adds every planned comparison's interval. An unknown form is refused."""
    plan = make_study(tmp_path, means={"grpo": 0.3, "sign": 0.7})
    outputs = ('\n[[outputs]]\npage = "long.md"\nmarkers = "v"\nlink = "REPORT.md"\n'
               '\n[[outputs]]\npage = "short.md"\nmarkers = "v"\nlink = "REPORT.md"\nform = "headline"\n')
    plan.write_text(plan.read_text() + outputs)
    for name in ("long.md", "short.md"):
        (tmp_path / name).write_text("before\n<!-- v:begin -->\n<!-- v:end -->\nafter\n")
    want, _ = build(plan, root=tmp_path)
    long, short = want[tmp_path / "long.md"], want[tmp_path / "short.md"]
    head = f"**A two-arm study** ([report](REPORT.md)) " + lead(Study.load(plan)) + " "  # the plain lead first
    assert lead(Study.load(plan)).startswith("In short: ")
    assert head + headline(Study.load(plan)) in long
    assert head + headline(Study.load(plan), brief=True) in short  # issue 56: the brief form on a short page
    assert len(headline(Study.load(plan), brief=True)) < len(headline(Study.load(plan)))
    assert "Planned (pass@1, 3 seeds per arm" in long and "sign − grpo +" in long.split("Planned")[1]
    assert "Planned (" not in short and "Each planned comparison's interval is in the report." in short
    assert short.startswith("before\n") and short.endswith("\nafter\n")
    plan.write_text(plan.read_text().replace('form = "headline"', 'form = "short"'))
    with pytest.raises(PlanError, match=r"\[\[outputs\]\] #2: form 'short' is not one of 'verdict', 'headline'"):
        read_plan(plan)


@pytest.mark.parametrize("means, ahead", [({"grpo": 0.3, "sign": 0.7}, "sign"), ({"grpo": 0.7, "sign": 0.3}, "grpo")])
def test_a_data_output_carries_the_readings_a_notebook_asserts(tmp_path, means, ahead):
    """``form = "data"``: the whole page is the study's readings as JSON (each run's measures, the planned
    differences with their intervals, the headline), written with the report and checked by ``--check``; reversed
    data reverse it."""
    from grpo_lab.study import write_or_check

    plan = make_study(tmp_path, means=means)
    plan.write_text(plan.read_text() + '\n[[hypotheses]]\nname = "H"\ntest = "sign − grpo"\npredicts = "a"\n'
                    'margin = 0.05\ninterval = "per-comparison"\n\n[[outputs]]\npage = "pkg/study.json"\nform = "data"\n')
    with pytest.raises(PlanError, match="data page .*pkg/study.json: its directory does not exist"):
        build(plan, root=tmp_path)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "study.json").write_text('{"mine": 1}')
    with pytest.raises(PlanError, match="was not written by `grpo-lab study report`: it is not overwritten"):
        build(plan, root=tmp_path)
    (tmp_path / "pkg" / "study.json").unlink()
    want, _ = build(plan, root=tmp_path)
    data = json.loads(want[tmp_path / "pkg" / "study.json"])
    study = Study.load(plan)
    assert data["done"] == data["total"] == 6 and data["complete"] and data["primary"] == "pass@1"
    for arm in ("grpo", "sign"):
        got = {int(s): v["pass@1"] for s, v in data["arms"][arm]["seeds"].items()}
        assert got == pytest.approx(study.values(arm)) and set(got) == {0, 1, 2}
        assert data["arms"][arm]["method"] == arm and "greedy" in data["arms"][arm]["seeds"]["0"]
        assert data["arms"][arm]["start"]["pass@1"][0] == pytest.approx(study.start(arm)[0])
    first = data["planned"][0]
    r = study.reading(first["label"])
    assert (first["d"], first["lo"], first["hi"]) == pytest.approx((r.d, r.lo, r.hi))
    assert first["separated"] is True and (first["d"] > 0) == (ahead == "sign")
    assert data["headline"] == headline(study) and data["plan"] == "plan.toml"
    man = {m["arm"]: m for m in data["manipulation"]}  # the report's manipulation check, its word included
    (hyp,) = data["hypotheses"]  # the engine's judgement, its margin rule included
    j = judge(study.plan.hypotheses[0], study.reading("sign − grpo"))
    assert (hyp["verdict"], hyp["idle"], hyp["margin"]) == (j.verdict, j.idle, 0.05) and j.idle is not None
    assert set(man) == {"grpo", "sign"}
    for name, meas, r in study.manipulation():
        assert (man[name]["d"], man[name]["lo"], man[name]["hi"]) == pytest.approx((r.d, r.lo, r.hi))
        assert man[name]["word"] == took_word(r) and man[name]["measure"] == meas.text
    assert write_or_check(want, check=False, echo=lambda m: None) == 0
    assert write_or_check(build(plan, root=tmp_path)[0], check=True, echo=lambda m: None) == 0
    res = tmp_path / "runs" / "base" / "results" / "sign-seed0.json"
    changed = json.loads(res.read_text())
    ev = changed["eval"]  # a run that changed: the data file is now stale
    ev["correct"] = [ev["n_samples"] - c for c in ev["correct"]]
    ev["pass_at_k"]["1"] = 1 - ev["pass_at_k"]["1"]
    res.write_text(json.dumps(changed))
    said = []
    assert write_or_check(build(plan, root=tmp_path)[0], check=True, echo=said.append) == 1
    assert any("study.json differs" in x for x in said)


@pytest.mark.parametrize("budget, over", [(0.1, True), (1.0, False)])
def test_the_budget_is_read_as_run_time_summed_over_runs(tmp_path, budget, over):
    """Six runs of 90 s each are 0.15 hours of run time, whatever ran side by side: over a budget of 0.1, a detected
    deviation that says which count it is; under 1.0, none. The report's line and ``status`` name the same sum."""
    from grpo_lab.study import status_lines

    plan = make_study(tmp_path)
    plan.write_text(plan.read_text().replace("seeds = [0, 1, 2]\n", f"seeds = [0, 1, 2]\nbudget_hours = {budget}\n", 1))
    s = Study.load(plan)
    assert s.machine_hours() == pytest.approx(6 * 90 / 3600)
    report = build(plan)[0][plan.parent / "REPORT.md"]
    line = "The finished runs took 0.1 hours of run time (each run's training and evaluation, summed over runs), " \
           f"over the plan's budget of {budget:g}."
    assert (line in report) is over
    assert f"Run time of the finished runs, summed over runs: 9 minutes of training and evaluation (the plan's " \
           f"budget: {budget:g} hours, read as the same sum)" in report
    assert f"run time so far, summed over runs: 0.1 h of the plan's {budget:g}" in "\n".join(status_lines(s))


def test_a_data_output_is_read_by_what_an_arm_is_not_by_its_name():
    """``data_arm`` finds the one arm with a method and settings (study 4's lesson cell and its page's test read it
    so); ``data_values`` gives its per-seed values in seed order (10 after 2, not before); none, several, a setting
    that does not vary or a measure the data lack is an error that names what the data hold."""
    from grpo_lab.study import data_arm, data_values

    def arm(method, rate, scheduler, seeds):
        return {"method": method, "settings": {"learning_rate": rate, "lr_scheduler": scheduler}, "seeds": seeds}

    data = {"primary": "pass@1", "measures": ["pass@1", "greedy"], "varied": ["learning_rate", "lr_scheduler"],
            "arms": {"s-const": arm("sign", 3e-4, "constant", {"10": {"pass@1": 0.3, "greedy": 0.1},
                                                               "2": {"pass@1": 0.2, "greedy": 0.0}}),
                     "s-cos": arm("sign", 3e-4, "cosine", {}),
                     "d-const": arm("drgrpo", 3e-4, "constant", {})}}
    assert data_arm(data, "sign", learning_rate=3e-4, lr_scheduler="cosine") == "s-cos"
    assert data_arm(data, "drgrpo") == "d-const"
    assert data_values(data, "s-const") == [0.2, 0.3] and data_values(data, "s-const", "greedy") == [0.0, 0.1]
    assert data_values(data, "s-cos") == []
    with pytest.raises(KeyError, match=r"2 arms run sign with \{'learning_rate': 0.0003\} \(s-const, s-cos\)"):
        data_arm(data, "sign", learning_rate=3e-4)
    with pytest.raises(KeyError, match=r"0 arms run sign .*\(none\); the arms: s-const \(sign, "):
        data_arm(data, "sign", learning_rate=1e-3)
    with pytest.raises(KeyError, match="warmup_steps: not a setting that differs between this study's arms"):
        data_arm(data, "sign", warmup_steps=6)
    with pytest.raises(KeyError, match="pass@4: the data hold pass@1, greedy"):
        data_values(data, "s-const", "pass@4")


@pytest.mark.parametrize("entry, message", [
    ('page = "s.json"\nform = "data"\nmarkers = "v"', "form 'data' writes the whole file, so it takes no markers"),
    ('page = "s.md"\nform = "data"', "its page must end in .json, got 's.md'"),
])
def test_a_data_output_is_a_whole_json_file(tmp_path, entry, message):
    plan = make_study(tmp_path)
    plan.write_text(plan.read_text() + f"\n[[outputs]]\n{entry}\n")
    with pytest.raises(PlanError, match=re.escape(message)):
        read_plan(plan)


def test_an_arm_that_reads_another_studys_runs_trains_only_the_seeds_they_lack(tmp_path):
    """Issue 57: study 4 reads study 3's runs in place and adds seeds to the same arms. The seeds another directory
    of the arm already holds are read there, never retrained in the arm's own directory."""
    from grpo_lab.study import run_study

    from grpo_lab.tasks import grader_version

    make_study(tmp_path / "old", seeds=(0, 1))
    for f in (tmp_path / "old" / "runs" / "base").rglob("*.json"):  # graded as a run trained here would be
        data = json.loads(f.read_text())
        for ev in (data.get("eval"), data if f.name == "start.json" else None):
            if isinstance(ev, dict) and "grader" in ev:
                ev["grader"] = grader_version()
        f.write_text(json.dumps(data))
    new = tmp_path / "new"
    new.mkdir()
    text = PLAN.format(analysis="", comparison="").replace('method = "sign"\n', 'method = "sign"\n'
                                                           'dirs = ["runs/own", "../old/runs/base"]\n')
    (new / "plan.toml").write_text(text.replace(
        'method = "grpo"\n', 'method = "grpo"\ndirs = ["../old/runs/base"]\nseeds = [0, 1]\n'))
    said = []
    out = run_study(read_plan(new / "plan.toml"), echo=said.append)
    assert out["trained"] == ["sign seed 2"], said
    assert sorted(p.name for p in (new / "runs" / "own" / "results").glob("*.json")) == ["sign-seed2.json"]
    s = Study.load(new / "plan.toml")
    assert sorted(s.data["sign"].runs) == [0, 1, 2] and not s.data["sign"].refused


def test_a_comparisons_figure_with_nothing_to_read_yet_says_so_and_draws_no_scale(tmp_path, monkeypatch):
    """An interim study whose comparisons have no interval yet: the figure says why it is empty, and keeps no axis
    ticks (an empty axis's default ±0.002 around 0 would read as the comparisons' scale)."""
    import grpo_lab.viz as viz
    from grpo_lab.study.figures import draw

    plan = make_selection_study(tmp_path, {"grpo-a": 0.5, "grpo-b": 0.2, "sign-a": 0.3, "sign-b": 0.7},
                                {"grpo-a": 0.2, "grpo-b": 0.6, "sign-a": 0.3, "sign-b": 0.8})
    drawn = []
    real = viz.comparison_intervals
    monkeypatch.setattr(viz, "comparison_intervals", lambda *a, **k: drawn.append(real(*a, **k)) or drawn[-1])
    draw(Study.load(plan))
    assert len(drawn[-1].axes[0].get_xticks()) > 0  # every comparison read: a scale
    for p in tmp_path.rglob("*-seed2.json"):
        p.unlink()
    s = Study.load(plan)
    assert all(r.d is None for r in [*s.planned, *s.exploratory])
    draw(s)
    ax = drawn[-1].axes[0]
    assert list(ax.get_xticks()) == [] and list(ax.get_yticks()) == []
    assert any("no comparison can be read yet" in t.get_text() for t in ax.texts)


def test_a_directory_another_process_is_preparing_is_left_for_last(tmp_path):
    """Two workers of one study evaluate different starts side by side: a worker that finds a directory locked by
    another process prepares the study's other directories first and waits for that one last (study 7's second
    worker waited about 17 minutes on the first one's start, then evaluated the control's start alone)."""
    import sys

    from grpo_lab.study.run import prepare_dirs, train_dir, units

    plan_path = tmp_path / "plan.toml"
    plan_path.write_text(PLAN.format(analysis="", comparison="").replace("seeds = [0, 1, 2]", "seeds = [0]")
                         .replace('method = "sign"', 'method = "sign"\nlearning_rate = 1e-3')
                         .replace('a = "sign"\nb = "grpo"', 'a = "sign"\nb = "grpo"\ncontrast = "two directories"'))
    plan = read_plan(plan_path)
    first, second = (train_dir(plan, arm).resolve() for arm in plan.arms.values())
    assert first != second and units(plan)[0][0] == next(iter(plan.arms))  # the first unit's directory is held
    go = tmp_path / "go"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import pathlib, time\nfrom grpo_lab.io import DirLock\n"
        f"with DirLock({str(first)!r}):\n    print('held', flush=True)\n"
        f"    while not pathlib.Path({str(go)!r}).exists():\n        time.sleep(0.05)\n")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        said = []

        def echo(msg):  # the moment this worker starts waiting: what has it prepared?
            said.append((msg, (second / "config.json").is_file(), (first / "config.json").is_file()))
            go.touch()

        prepare_dirs(plan, units(plan), echo, evaluate=False)
    finally:
        go.touch()
        holder.wait(timeout=60)
    waiting = [s for s in said if s[0].startswith("waiting:")]
    assert len(waiting) == 1 and str(first) in waiting[0][0]
    assert waiting[0][1:] == (True, False)  # the free directory first, then the held one
    assert (first / "config.json").is_file() and (second / "config.json").is_file()


def test_a_lock_refusal_no_wait_mends_is_raised_at_once(tmp_path):
    """Only another process's lock is waited on (:class:`grpo_lab.io.LockInUse`): a symbolic link where the lock
    file goes, or this process's own lock, raises at once. The old wait matched the error's words and waited out
    anything else, up to 12 hours for a worker's start, on a link that never goes away."""
    from grpo_lab.study.run import _take_lock, _wait_lock

    target = tmp_path / "elsewhere.txt"
    target.write_text("keep me")
    run = tmp_path / "run"
    run.mkdir()
    (run / ".lock").symlink_to(target)
    said = []
    with pytest.raises(RuntimeError, match="symbolic link"):
        _wait_lock(run, said.append, wait=0.01, most=0.3)
    assert said == []  # no "waiting:" line: it was never waited on
    with pytest.raises(RuntimeError, match="symbolic link"):
        _take_lock(run)
    assert target.read_text() == "keep me"
    (run / ".lock").unlink()
    lock, busy = _take_lock(run)
    try:
        assert busy is None and (run / ".lock").read_text() == str(os.getpid())
        with pytest.raises(RuntimeError, match="already locked by this process"):
            _wait_lock(run, said.append, wait=0.01, most=0.3)
        assert said == []
    finally:
        lock.__exit__(None, None, None)
