"""Issue 83: nothing silently wrong, round seven. Each cause the probe battery found on the study surface's new parts
(training-log measures, shares, mirror comparisons, curves and correlations, report paths) and on the older surfaces
(check_prediction, inspect, the interim report, two estimators), reproduced here: refused before anything trains,
named with its file, or read right."""

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
import torch

from grpo_lab.cli import main
from grpo_lab.study import PlanError, Study, build, headline, read_plan, verdict_word
from grpo_lab.study.render import step_sections, truncation_section

from test_study import BASE, evaluation, make_study, result, toml_base, write_runs
from test_study_steps import history

PLAN = """title = "Hardening"
seeds = [0, 1]
{top}
[base]
""" + toml_base() + """
[arms.grpo]
method = "grpo"

[arms.sign]
method = "sign"

[measures]
primary = "{primary}"

[analysis]
{analysis}

[[comparisons]]
a = "sign"
b = "grpo"
{extra}
"""


def plan_text(primary="pass@1", analysis="", extra="", top=""):
    return PLAN.format(primary=primary, analysis=analysis, extra=extra, top=top)


def make(tmp_path, primary="pass@1", extra="", top="", analysis="", log_edit=None, share=None):
    """A 2-arm x 2-seed study written as finished, each run with a full metrics log (TRL's clipped ratio in it)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "plan.toml").write_text(plan_text(primary, analysis, extra, top))
    share = share or {"grpo": 0.78, "sign": 0.01}

    def run(name, s, rng):
        h = [x | {"starvation/acr": share[name] + 0.01 * s, "starvation/frac_nonzero_adv": 1 - share[name] - 0.01 * s}
             for x in history(0.1 * (1 + s), 0.3, near=True, n=10)]
        log = [x | {"completions/clipped_ratio": 0.25 if name == "grpo" else 0.05} for x in h]
        if log_edit is not None:  # the same damage in the result's history and in its metrics file
            log_edit(name, s, log)
            log_edit(name, s, h)
        return dict(history=h, eval=evaluation(rng, 0.4 if name == "grpo" else 0.5), log=log)

    return write_runs(tmp_path / "plan.toml", run)


# --- 1. a measure only the metrics file holds -------------------------------------------------------------------

def test_truncated_as_a_correlation_reads_every_run(tmp_path):
    plan = make(tmp_path, extra='\n[[correlations]]\nx = "truncated"\n')
    s = Study.load(plan)
    assert s.complete and s.done == 4 and s.correlations[0].n == 4
    assert "In progress" not in headline(s)


def test_the_length_limit_warning_names_each_start_and_each_arm_above_it(tmp_path):
    """The design check's warning lists what was cut above 20%: each arm's tenth of steps, and each start by its file
    where the study has several (one per setting that changes the start) by the arms that share it, so three
    starts are not "the start" three times. Reversed shares move the warning to the other arm."""
    import copy

    s = Study.load(make(tmp_path))
    md = "\n".join(truncation_section(s))
    assert "grpo, first tenth (0.25)" in md and "grpo, last tenth (0.25)" in md and "sign, first" not in md
    assert "| grpo | 2 | 0.250" in md
    flipped = copy.deepcopy(s)
    for a in flipped.data.values():
        for r in a.runs.values():
            for x in [*r["history"], *(r.get("log") or [])]:
                if "completions/clipped_ratio" in x:
                    x["completions/clipped_ratio"] = 0.3 - x["completions/clipped_ratio"]
    md = "\n".join(truncation_section(flipped))
    assert "sign, first tenth (0.25)" in md and "grpo, first" not in md
    one, two = (copy.deepcopy(s) for _ in range(2))
    for a, where, share in zip(two.data.values(), ("runs/g4", "runs/g16"), (0.48, 0.1)):
        a.start, a.start_dir = {"sampling": {"truncated": share}}, tmp_path / where
    md = "\n".join(truncation_section(two))
    assert "in the start of grpo (0.48); grpo, first" in md and "(0.10)" not in md.split("**Warning**")[1]
    assert "- The start (`runs/g16/start.json`): 0.100 of its sampled completions cut." in md
    for a in one.data.values():
        a.start, a.start_dir = {"sampling": {"truncated": 0.48}}, tmp_path / "runs/base"
    md = "\n".join(truncation_section(one))
    assert "in the start (0.48); grpo" in md and md.count("The start (") == 1


# --- 2. damaged training-log values -----------------------------------------------------------------------------

@pytest.mark.parametrize("key, value, words", [
    ("completions/clipped_ratio", 5.0, "above 1"), ("grad_norm", -1.0, "below 0"),
    ("update/adam_near_eps", 5.0, "above 1"), ("grad_norm", "0.3", "not a finite number"),
])
def test_a_damaged_log_value_is_named_with_its_file_never_averaged(tmp_path, key, value, words):
    def edit(name, s, log):
        if (name, s) == ("sign", 1) and key in log[3]:
            log[3][key] = value
    plan = make(tmp_path, top='steps = ["grad-norm", "adam-near-eps", "truncated"]\n', log_edit=edit)
    md = "\n".join(step_sections(Study.load(plan)))
    where = "metrics/sign-seed1.jsonl" if key == "completions/clipped_ratio" else "results/sign-seed1.json's history"
    assert "Left out, damaged" in md and "sign seed 1" in md and f"runs/base/{where}" in md
    assert f"step 4" in md and words in md


def test_a_damaged_log_value_reaches_a_lessons_reading_as_damaged_not_as_missing(tmp_path):
    """The data output a lesson reads (lesson 14's signatures table): a damaged value is named per run, and
    data_values refuses it. Before, it was None there, which a lesson shows as "not logged" or "no such success"."""
    from grpo_lab.study import data_values
    from grpo_lab.study.render import study_data

    def edit(name, s, log):
        if (name, s) == ("sign", 1) and "grad_norm" in log[3]:
            log[3]["grad_norm"] = -1.0
    top = 'steps = ["grad-norm", "adam-near-eps"]\n'
    data = study_data(Study.load(make(tmp_path / "bad", top=top, log_edit=edit)))
    assert {s: list(q) for s, q in data["arms"]["sign"]["damaged"].items()} == {"1": ["grad-norm"]}
    why = data["arms"]["sign"]["damaged"]["1"]["grad-norm"]
    assert "step 4" in why and "below 0" in why and "results/sign-seed1.json" in why
    with pytest.raises(ValueError, match=r"grad-norm of sign is damaged in 1 run\(s\).*seed 1: grad_norm at step 4"):
        data_values(data, "sign", "grad-norm")
    assert len(data_values(data, "sign", "adam-near-eps")) == 2  # the run's other quantities are still read
    assert data["arms"]["grpo"]["damaged"] == {} and len(data_values(data, "grpo", "grad-norm")) == 2
    clean = study_data(Study.load(make(tmp_path / "clean", top=top)))  # the same study undamaged: nothing named
    assert clean["arms"]["sign"]["damaged"] == {} and None not in data_values(clean, "sign", "grad-norm")


def test_the_steps_table_and_the_data_page_classify_a_value_in_one_place(tmp_path, monkeypatch):
    """A summary that is not a finite number (no log entry refused, the reading itself gone wrong) is damaged in
    the report's steps table and in the data page alike: named with its run, never "not in the training log" in
    one and None in the other."""
    from grpo_lab.study.measures import Measure
    from grpo_lab.study.render import study_data

    study = Study.load(make(tmp_path, top='steps = ["grad-norm", "adam-near-eps"]\n'))
    real = Measure.of

    def of(self, r):
        v = real(self, r)
        return float("nan") if self.text == "grad-norm" and "sign-seed1" in str(r.get("result_source")) else v
    monkeypatch.setattr(Measure, "of", of)
    md = "\n".join(step_sections(study))
    assert "Left out, damaged: `grad-norm` of sign seed 1: its summary over the training log is nan" in md
    assert "not in the training log" not in md
    data = study_data(study)
    assert {s: list(q) for s, q in data["arms"]["sign"]["damaged"].items()} == {"1": ["grad-norm"]}
    assert data["arms"]["sign"]["steps"]["1"]["grad-norm"] is None
    assert data["arms"]["sign"]["steps"]["1"]["adam-near-eps"] is not None and data["arms"]["grpo"]["damaged"] == {}


def test_a_nan_in_the_log_of_a_measure_the_comparison_reads_leaves_the_run_out_by_name(tmp_path):
    def edit(name, s, log):
        if (name, s) == ("sign", 1) and "completions/clipped_ratio" in log[2]:  # the metrics file only
            log[2]["completions/clipped_ratio"] = float("nan")
    plan = make(tmp_path, extra='\n[[exploratory]]\na = "sign"\nb = "grpo"\nmeasure = "truncated"\n', log_edit=edit)
    s = Study.load(plan)
    (f, why), = s.data["sign"].refused
    assert f.endswith("sign-seed1.json") and "not a finite number" in why and "metrics/sign-seed1.jsonl" in why


# --- 3. "firm" never claims a check that did not run ------------------------------------------------------------

def test_firm_names_the_alternatives_it_read_and_those_it_could_not(tmp_path):
    s = Study.load(make(tmp_path, primary="greedy"))
    h = headline(s)
    if "**Firm**" in h:
        firm = h.split("**Firm**")[1]
        assert "a bootstrap over seeds × problems" not in firm.split("Not read")[0]
        assert "Not read: a bootstrap over seeds × problems" in firm and "no per-problem scores of greedy" in firm


# --- 4. a lower-is-better share is never "ahead" for the higher side --------------------------------------------

@pytest.mark.parametrize("primary", ["zero-adv", "acr"])
def test_a_lower_is_better_share_reads_the_lower_arm_ahead(tmp_path, primary):
    s = Study.load(make(tmp_path, primary=primary))
    r = s.planned[0]
    assert r.apart and r.d < 0
    assert verdict_word(s, r).startswith("sign ahead: lower by") and "grpo ahead" not in headline(s)
    rev = Study.load(make(tmp_path / "rev", primary=primary, share={"grpo": 0.01, "sign": 0.78}))
    assert verdict_word(rev, rev.planned[0]).startswith("grpo ahead: lower by")


def test_a_plan_may_declare_a_measures_direction_and_neutral_says_higher(tmp_path):
    plan = make(tmp_path, primary="zero-adv")
    text = plan.read_text().replace('[measures]\n', '[measures]\ndirection = { "zero-adv" = "neutral" }\n')
    plan.write_text(text)
    s = Study.load(plan)
    assert verdict_word(s, s.planned[0]) == "grpo higher" and "ahead" not in verdict_word(s, s.planned[0])
    plan.write_text(text.replace('"neutral"', '"sideways"'))
    with pytest.raises(PlanError, match="direction of zero-adv must be one of higher, lower, neutral"):
        read_plan(plan)


# --- 5-7, 12, 13: refused in the plan, before anything trains ---------------------------------------------------

@pytest.mark.parametrize("extra, message", [
    ('\n[[comparisons]]\na = "grpo"\nb = "sign"\n', "mirrors 'sign − grpo'"),
    ('\n[[correlations]]\nx = "acr"\narms = ["grpo", "grpo", "sign"]\n', "lists grpo more than once"),
    ('\n[[curves]]\nx = "learning_rate"\narms = []\n', "at least 2"),
    ('\n[[correlations]]\nx = "acr"\narms = []\n', "at least 1"),
])
def test_doubled_or_empty_lists_are_refused_by_name(tmp_path, extra, message):
    (tmp_path / "plan.toml").write_text(plan_text(extra=extra))
    with pytest.raises(PlanError, match=message):
        read_plan(tmp_path / "plan.toml")


def test_a_blank_contrast_does_not_waive_the_confound_check(tmp_path):
    text = plan_text().replace('[arms.sign]\nmethod = "sign"\n', '[arms.sign]\nmethod = "sign"\nlearning_rate = 3e-4\n')
    (tmp_path / "plan.toml").write_text(text)
    with pytest.raises(PlanError, match="confounded"):
        read_plan(tmp_path / "plan.toml")
    for blank in ('""', '"   "'):
        (tmp_path / "plan.toml").write_text(text.replace('b = "grpo"\n', f'b = "grpo"\ncontrast = {blank}\n'))
        with pytest.raises(PlanError, match="contrast is blank"):
            read_plan(tmp_path / "plan.toml")


def test_holms_interval_without_holms_correction_is_refused(tmp_path):
    hyp = '\n[[hypotheses]]\nname = "H"\ntest = "sign − grpo"\nsize = 0.1\ninterval = "holm"\n'
    (tmp_path / "plan.toml").write_text(plan_text(analysis='correction = "none"', extra=hyp))
    with pytest.raises(PlanError, match="correction = 'none': use interval = 'per-comparison'"):
        read_plan(tmp_path / "plan.toml")


def test_an_arm_named_blank_is_refused(tmp_path):
    (tmp_path / "plan.toml").write_text(plan_text().replace("[arms.sign]", '[arms.""]').replace('a = "sign"', 'a = ""'))
    with pytest.raises(PlanError, match="must be non-blank"):
        read_plan(tmp_path / "plan.toml")


# --- 8. a plan record that is missing or damaged ----------------------------------------------------------------

@pytest.mark.parametrize("damage", ["delete", "null"])
def test_a_missing_or_damaged_plan_record_is_a_deviation(tmp_path, damage):
    plan = make(tmp_path)
    from grpo_lab.study.run import record_plan
    p = read_plan(plan)
    for name, arm in p.arms.items():
        for s in arm.seeds:
            record_plan(p, tmp_path / "runs" / "base", arm.method, s)
    assert not [d for d in Study.load(plan).detected_deviations() if "plan record" in d or "edited" in d]
    recs = tmp_path / "runs" / "base" / "plans"
    if damage == "delete":
        for f in recs.glob("*.json"):
            f.unlink()
    else:
        for f in recs.glob("*.json"):
            f.write_text(json.dumps({"plan": None}))
    plan.write_text(plan.read_text().replace("[analysis]\n", "[analysis]\ncorrection = \"none\"\nalpha = 0.45\n"))
    devs = Study.load(plan).detected_deviations()
    want = "have no plan record" if damage == "delete" else "plan record beside 4 run(s) is damaged"
    assert any(want in d for d in devs), devs


def test_writing_out_a_default_is_not_an_edit_of_the_analysis(tmp_path):
    plan = make(tmp_path)
    from grpo_lab.study.run import record_plan
    p = read_plan(plan)
    for name, arm in p.arms.items():
        for s in arm.seeds:
            record_plan(p, tmp_path / "runs" / "base", arm.method, s)
    plan.write_text(plan.read_text().replace("[analysis]\n", '[analysis]\ndf = "welch"\nalpha = 0.05\n'))
    assert not [d for d in Study.load(plan).detected_deviations() if "edited after" in d]
    plan.write_text(plan.read_text().replace("alpha = 0.05", "alpha = 0.1"))
    assert [d for d in Study.load(plan).detected_deviations() if "edited after" in d]


# --- 9. a pipe in an arm's name -----------------------------------------------------------------------------------

def test_a_pipe_in_an_arms_name_keeps_every_table_row_whole(tmp_path):
    tmp_path.mkdir(exist_ok=True)
    text = plan_text().replace("[arms.sign]", '[arms."a|b"]').replace('a = "sign"', 'a = "a|b"')
    (tmp_path / "plan.toml").write_text(text)

    def run(name, s, rng):
        return dict(history=history(0.1, 0.3, near=False, n=10), eval=evaluation(rng, 0.5))
    write_runs(tmp_path / "plan.toml", run)
    report = build(tmp_path / "plan.toml")[0][tmp_path / "REPORT.md"]
    for block in report.split("\n\n"):
        rows = [r for r in block.splitlines() if r.startswith("|")]
        if rows:
            widths = {len(r.replace("\\|", "").split("|")) for r in rows}
            assert len(widths) == 1, rows


# --- 10. a damaged sampling record -------------------------------------------------------------------------------

@pytest.mark.parametrize("sampling", ["bfloat16", {"dtype": ""}, {"dtype": 16}])
def test_a_damaged_sampling_record_leaves_the_run_out_by_name(tmp_path, sampling):
    plan = make_study(tmp_path)
    f = result(plan, "sign", 1)
    r = json.loads(f.read_text())
    r["eval"]["sampling"] = sampling
    f.write_text(json.dumps(r))
    s = Study.load(plan)
    (name, why), = s.data["sign"].refused
    assert name.endswith("sign-seed1.json") and "sampling" in why


# --- 11. one confidence level per report -------------------------------------------------------------------------

def test_a_plan_at_alpha_01_prints_no_95_anywhere(tmp_path):
    plan = make(tmp_path, analysis="alpha = 0.1", extra="claim = 0.2\n", top='steps = ["grad-norm"]\n')
    want, draw = build(plan)
    report = want[tmp_path / "REPORT.md"]
    assert "95%" not in report and "1.96" not in report and "90%" in report
    draw()
    assert (tmp_path / "arms.png").is_file()


def test_a_claim_is_excluded_at_the_plans_level(tmp_path):
    s = Study.load(make(tmp_path, analysis="alpha = 0.1", extra="claim = -0.4\n"))
    from grpo_lab.study import claim_words
    assert s.planned[0].lo > -0.4 and "exclude it at 90% (per comparison)" in claim_words(s, s.planned[0])


# --- 14. a report path that would overwrite the prose plan -------------------------------------------------------

def test_a_report_named_like_the_prose_plan_is_refused_and_the_file_kept(tmp_path):
    plan = make(tmp_path)
    (tmp_path / "PLAN.md").write_text("# my plan, written before the runs\n")
    plan.write_text('report = "PLAN.md"\n' + plan.read_text())
    with pytest.raises(PlanError, match="exists and was not written by grpo-lab study report"):
        read_plan(plan)
    assert (tmp_path / "PLAN.md").read_text() == "# my plan, written before the runs\n"


# --- the unclear items, each said by name -------------------------------------------------------------------------

def test_a_dangling_result_link_is_named(tmp_path):
    plan = make_study(tmp_path)
    f = result(plan, "sign", 1)
    f.unlink()
    os.symlink(tmp_path / "nowhere.json", f)
    (name, why), = Study.load(plan).data["sign"].refused
    assert "a symbolic link to a missing file" in why and "not finished" in why


def test_a_symlinked_plan_says_which_folder_is_the_study(tmp_path, capsys):
    plan = make_study(tmp_path / "real")
    (tmp_path / "link.toml").symlink_to(plan)
    assert main(["study", "status", str(tmp_path / "link.toml")]) == 0
    assert f"the study is read and written in that file's folder" in capsys.readouterr().out


def test_an_exact_tie_in_a_selection_is_said(tmp_path):
    from grpo_lab.study.render import render_report
    tmp_path.mkdir(exist_ok=True)
    text = plan_text().replace('[measures]', '[arms.sign2]\nmethod = "sign"\nlearning_rate = 3e-4\n\n'
                                             '[selections.sign-best]\namong = ["sign", "sign2"]\n'
                                             'by = "validation pass@1"\n\n[measures]')
    (tmp_path / "plan.toml").write_text(text.replace('b = "grpo"\n', 'b = "grpo"\n').replace("[base]\n", "[base]\nvalidation_problems = 10\n"))

    def run(name, s, rng):
        ev = evaluation(rng, 0.5)
        ev["validation"] = evaluation(np.random.default_rng(s), 0.5)  # the same per seed in both candidates
        return dict(history=history(0.1, 0.3, near=False, n=10), eval=ev)
    write_runs(tmp_path / "plan.toml", run, config={**BASE, "validation_problems": 10})
    s = Study.load(tmp_path / "plan.toml")
    assert s.complete and s.chosen("sign-best") == "sign"
    report = render_report(s)
    assert "An exact tie with" in report and "the first listed wins a tie" in report


def test_the_lock_folder_made_again_when_another_process_removes_it(tmp_path, monkeypatch):
    """Issue 83: between making ``locks/`` and ``locks/<run>`` another worker may remove the empty ``locks/``;
    mkdir then raises FileNotFoundError, which the lock now retries instead of raising."""
    from grpo_lab.io import DirLock

    real = Path.mkdir
    calls = {"n": 0}

    def racy(self, *a, **k):
        calls["n"] += 1
        if calls["n"] <= 3:
            raise FileNotFoundError(2, "No such file or directory", str(self))
        return real(self, *a, **k)
    monkeypatch.setattr(Path, "mkdir", racy)
    with DirLock(tmp_path / "locks" / "grpo-seed0"):
        assert (tmp_path / "locks" / "grpo-seed0" / ".lock").is_file()


# --- the older surfaces ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("measured, tol", [(float("nan"), 0.05), (float("inf"), 0.05), (0.3, float("nan")),
                                           (0.3, -0.1), (None, 0.05), ("0.3", 0.05), (0.3, None)])
def test_check_prediction_refuses_a_damaged_measurement_or_window(measured, tol, capsys):
    from grpo_lab.checks import check_prediction
    with pytest.raises(ValueError, match="check_prediction's arguments"):
        check_prediction(0.3, measured, "x", tol)
    assert "you predicted" not in capsys.readouterr().out


def _metrics_row(step, top=1.5, fluke=None):
    row = {"step": step, "reward": 0.25, "starvation/acr": 0.5, "starvation/all_fail": 0.5, "starvation/all_pass": 0.0,
           "starvation/success_hist": [2, 1, 0, 0, 1], "starvation/max_advantage": top}
    if fluke is not None:
        row["starvation/max_advantage_completion"] = fluke
    return row


@pytest.mark.parametrize("field, row", [
    ("starvation/max_advantage", _metrics_row(2, top=1e308)),
    ("starvation/max_advantage_completion", _metrics_row(2, fluke={"advantage": 9.0, "group_rewards": [1, 0, 0, 0],
                                                                    "completion": "x"})),
    ("starvation/max_advantage_completion", _metrics_row(2, fluke={"advantage": 1.0, "group_rewards": [1, 0, 0, 0],
                                                                    "completion": 42})),
    ("starvation/max_advantage_completion", _metrics_row(2, fluke={"advantage": 1.0, "group_rewards": [1, 0, 0, 0],
                                                                    "completion": None})),
    ("step", _metrics_row(float("nan"))),
])
def test_inspect_names_damaged_largest_advantage_data(tmp_path, field, row):
    from grpo_lab.diagnose import read_log
    f = tmp_path / "metrics.jsonl"
    f.write_text(json.dumps(_metrics_row(1)) + "\n" + json.dumps(row) + "\n")
    log = read_log(f)
    assert any(field in w and "line 2" in w for w in log.warnings), log.warnings
    assert not any(r.get("max_advantage", 0) and r["max_advantage"] > 1e6 for r in log.rows)


@pytest.mark.parametrize("damage", ["engine", "fingerprint"])
def test_the_interim_report_leaves_out_a_foreign_or_edited_run_by_name(tmp_path, damage):
    from grpo_lab.compare import load_results, read_config
    from test_study import BASE

    plan = make_study(tmp_path)
    d = tmp_path / "runs" / "base"
    f = d / "results" / "sign-seed1.json"
    r = json.loads(f.read_text())
    if damage == "engine":
        r["config"]["generation"] = "vllm"
    else:
        r["fingerprint"] = "0" * 12
    f.write_text(json.dumps(r))
    skipped = []
    res = load_results(d, read_config(d), partial=True, skipped=skipped)
    assert len(res["sign"]) == 2 and [name for name, _ in skipped] == ["sign-seed1.json"]
    assert ("generation" in skipped[0][1]) if damage == "engine" else ("fingerprint" in skipped[0][1])


def test_maxrl_is_exact_for_tiny_float32_rewards():
    from grpo_lab.advantages import maxrl
    got = maxrl(torch.tensor([1e-44, 0, 0, 0], dtype=torch.float32), 4)
    assert got.dtype == torch.float32 and torch.equal(got, torch.tensor([3.0, -1, -1, -1]))


@pytest.mark.parametrize("method", ["gpg_verl", "drgrpo", "rloo"])
def test_an_all_equal_groups_autograd_zero_is_the_documented_convention(method):
    """At an all-equal group every estimator's advantage is exactly 0 by selection, so autograd gives 0 (intended,
    documented in gpg_verl's docstring) while the formula's one-sided derivative is not 0; away from it, autograd
    and finite differences agree."""
    from grpo_lab.advantages import compute_advantages
    f = lambda r: compute_advantages(r, 4, method)  # noqa: E731
    flat = torch.zeros(4, dtype=torch.float64) + 0.5
    jac = torch.autograd.functional.jacobian(f, flat)
    assert torch.equal(jac, torch.zeros(4, 4, dtype=torch.float64))
    h = 1e-6
    fd = (f(flat + torch.tensor([h, 0, 0, 0], dtype=torch.float64)) - f(flat)) / h
    assert abs(float(fd[0])) > 0.1  # the formula moves: the zero is the convention, not the derivative
    mixed = torch.tensor([0.1, 0.7, 0.3, 0.9], dtype=torch.float64)
    jac = torch.autograd.functional.jacobian(f, mixed)
    for i in range(4):
        e = torch.zeros(4, dtype=torch.float64)
        e[i] = 1e-6
        torch.testing.assert_close(jac[:, i], (f(mixed + e) - f(mixed - e)) / 2e-6, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("where", ["[base]", "[arms.sign]"])
def test_a_near_miss_of_a_field_gets_a_did_you_mean(tmp_path, where):
    """Issue 81: `step = 4` in a plan got no hint."""
    text = plan_text().replace(where + "\n", where + "\nstep = 4\n", 1)
    (tmp_path / "plan.toml").write_text(text)
    with pytest.raises(PlanError, match="did you mean 'steps'"):
        read_plan(tmp_path / "plan.toml")


def test_a_short_runs_pace_says_tenths_of_a_second_and_where_the_start_was_timed():
    """Issue 81: a fresh tiny study's pace line said "about 0 s of training per run (... the start's was read from
    disk)"."""
    from grpo_lab.compare import pace_line
    line = pace_line(0.2, 0.1, 4, 2, None, "CPU")
    assert "about 0.5 s of training per run" in line and "read from disk" not in line
    assert "0.3 s of evaluation" in pace_line(0.2, 0.1, 4, 2, 0.3, "CPU")
