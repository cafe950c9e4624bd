"""Issue 58: `grpo-lab study` under damaged plans and results (fault battery six). Each class of silent-wrong
result, raw traceback or data-loss path is a test here: refused or named, no traceback, nothing written outside the
study's folder, no file the study owns overwritten."""

import json

import pytest

from grpo_lab.cli import build_parser, main
from grpo_lab.study import PlanError, Study, headline, read_plan
from grpo_lab.study.run import record_plan

from test_study import make_study, result


def _edit(path, fn):
    data = json.loads(path.read_text())
    fn(data)
    path.write_text(json.dumps(data))


def _refused(study, name: str) -> str:
    """Why the run ``name`` (e.g. "grpo-seed1") was left out, or "" if it was read."""
    return " ".join(why for a in study.data.values() for f, why in a.refused if name in f)


# ----------------------------------------------------------------------------------------- the report's path

@pytest.mark.parametrize("report, message", [
    ("plan.toml", "must name a markdown file"),
    ("runs/base/results/grpo-seed0.json", "must name a markdown file"),
    ("runs/base/config.json", "must name a markdown file"),
    ("runs/base/NOTES.md", "would overwrite a file the study owns (runs/base)"),
    ("../outside.md", "lies outside the study's folder"),
    ("", "must name a markdown file"),
    ("nosuchdir/REPORT.md", "its folder nosuchdir does not exist"),
])
def test_the_report_path_is_confined_to_the_study_and_never_a_file_it_owns(tmp_path, report, message):
    plan = make_study(tmp_path / "s")
    before = {p: p.read_bytes() for p in (tmp_path / "s").rglob("*") if p.is_file()}
    plan.write_text(f"report = {json.dumps(report)}\n" + plan.read_text())
    with pytest.raises(PlanError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_plan(plan)
    with pytest.raises(SystemExit) as e:  # the CLI names it (exit 2, one line), no traceback, writes nothing
        main(["study", "report", str(plan)])
    assert e.value.code == 2
    after = {p: p.read_bytes() for p in (tmp_path / "s").rglob("*") if p.is_file() and p != plan}
    assert after == {p: b for p, b in before.items() if p != plan} and not (tmp_path / "outside.md").exists()


# ---------------------------------------------------------------------- numbers checked against their own file

def test_a_pass_at_1_that_contradicts_its_own_counts_is_left_out(tmp_path):
    plan = make_study(tmp_path)
    _edit(result(plan, "grpo", 1), lambda r: r["eval"]["pass_at_k"].update({"1": 0.99}))
    why = _refused(Study.load(plan), "grpo-seed1")
    assert "pass@1 is 0.99, but its own correct counts give" in why


def test_a_start_whose_pass_at_1_contradicts_its_counts_is_left_out(tmp_path):
    plan = make_study(tmp_path)
    _edit(plan.parent / "runs" / "base" / "start.json", lambda s: s["pass_at_k"].update({"1": 0.99}))
    s = Study.load(plan)
    assert any("start.json" in f and "pass@1 is 0.99" in why for a in s.data.values() for f, why in a.refused)
    assert headline(s).startswith("No verdict: every run finished")


def test_a_copy_with_its_seed_and_time_edited_is_still_a_copy(tmp_path):
    plan = make_study(tmp_path)
    src, dst = result(plan, "grpo", 0), result(plan, "grpo", 1)
    data = json.loads(src.read_text())
    data["config"]["seed"] = 1
    data["train_seconds"] += 0.5
    from grpo_lab.study import recorded_fingerprint

    data["fingerprint"] = recorded_fingerprint(data["config"])
    dst.write_text(json.dumps(data))
    assert "a copy of" in _refused(Study.load(plan), "grpo-seed1")


@pytest.mark.parametrize("reward", [float("nan"), float("inf"), 1.5, -0.1, True, None, "0.5"])
def test_a_damaged_training_reward_leaves_its_run_out_by_name(tmp_path, reward):
    plan = make_study(tmp_path)
    f = result(plan, "sign", 2)
    f.write_text(f.read_text().replace('"reward": 0.6', f'"reward": {json.dumps(reward)}'))
    assert "reward" in json.loads(f.read_text())["history"][0]
    s = Study.load(plan)
    assert "history step 0 has reward" in _refused(s, "sign-seed2")
    assert 2 not in s.data["sign"].runs


def test_a_duplicated_step_leaves_its_run_out(tmp_path):
    """With primary = "reward" a step logged twice moved the verdict line; now the run is left out, named."""
    plan = make_study(tmp_path)
    _edit(result(plan, "sign", 1), lambda r: r.update(history=[dict(r["history"][0], step=1),
                                                               dict(r["history"][0], step=1)]))
    assert "repeats or reorders steps (1)" in _refused(Study.load(plan), "sign-seed1")


def test_a_missing_reward_key_is_not_a_traceback_with_primary_reward(tmp_path):
    plan = make_study(tmp_path)
    plan.write_text(plan.read_text().replace('primary = "pass@1"', 'primary = "reward"')
                    .replace('[manipulation]\nmeasure = "pass@1"\n', "")
                    .replace('[[comparisons]]\na = "sign"\nb = "start"\n', ""))
    _edit(result(plan, "sign", 2), lambda r: r["history"][0].pop("reward"))
    assert "it cannot give reward" in _refused(Study.load(plan), "sign-seed2")


@pytest.mark.parametrize("field, value, said", [
    ("generation", "vllm", "generation is 'vllm', not the engine's record"),
    ("eval_seconds", "0.5", "eval_seconds is '0.5', not a time"),
    ("eval_seconds", float("nan"), "eval_seconds is nan, not a time"),
    ("eval_seconds", -1e6, "not a time"),
])
def test_other_damaged_fields_leave_the_run_out(tmp_path, field, value, said):
    plan = make_study(tmp_path)
    _edit(result(plan, "grpo", 0), lambda r: r.update({field: value}))
    s = Study.load(plan)
    assert said in _refused(s, "grpo-seed0")
    assert "nan" not in " ".join(f"{s.machine_hours():.1f}") and s.machine_hours() >= 0


def test_a_grader_that_is_not_a_string_leaves_the_run_out(tmp_path):
    plan = make_study(tmp_path)
    _edit(result(plan, "grpo", 0), lambda r: r["eval"].update({"grader": ["x"]}))
    assert "grader is ['x'], not a version string" in _refused(Study.load(plan), "grpo-seed0")
    assert main(["study", "status", str(plan)]) == 0


# ------------------------------------------------------------------------- plans refused before any run trains

@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace('primary = "pass@1"', 'primary = "pass@8"'), "pass@8 needs at least 8 samples per problem"),
    (lambda t: t.replace('[base]', '[tasks]\nhard = "arithmetic_hard"\n\n[base]')
     .replace('secondary = ["greedy"]', 'secondary = ["hard pass@1"]'), "which arm grpo does not evaluate"),
    (lambda t: t.replace('secondary = ["greedy"]', 'secondary = ["validation pass@1"]'),
     "reads a validation split; arm grpo has none"),
    (lambda t: t.replace('seeds = [0, 1, 2]', 'seeds = [0, 9223372036854775807]'), "larger than 2147483647"),
    (lambda t: t.replace('policy = "tiny-lm"', 'policy = "tiny_lm"'), "did you mean 'tiny-lm'?"),
    (lambda t: t.replace('policy = "tiny-lm"', 'policy = "nosuch"'), "policy 'nosuch' is not one grpo-lab knows"),
    (lambda t: t.replace('[arms.sign]\nmethod = "sign"', '[arms.sign]\nmethod = "sign"\n\n[arms.grpo2]\n'
                         'method = "grpo"\ndirs = ["./runs/base"]').replace('[arms.grpo]\nmethod = "grpo"',
                                                                      '[arms.grpo]\nmethod = "grpo"\ndirs = ["runs/base"]'),
     "arms grpo and grpo2 are the same runs"),
    (lambda t: t.replace('[arms.sign]\nmethod = "sign"', '[arms.sign]\nmethod = "sign"\n\n[arms.all]\n'
                         'method = "grpo"\ndirs = ["runs/*", "runs/more"]\nseeds = [0, 1]').replace(
        '[[comparisons]]\na = "sign"\nb = "start"', '[[comparisons]]\na = "all"\nb = "grpo"'),
     "all and grpo read the same runs"),
    (lambda t: t.replace('correction = "holm"', 'correction = "holm"\nmargin = nan'), "margin must be a positive number"),
    (lambda t: t.replace('b = "grpo"', 'b = "grpo"\nclaim = inf'), "claim must be a finite number"),
    (lambda t: 'budget_hours = nan\n' + t, "budget_hours must be a positive number"),
    (lambda t: t + '\n[[exploratory]]\na = "sign"\nb = "grpo"\nc = "sign"\nd = "grpo"\n',
     "names four different arms"),
])
def test_a_plan_the_runs_cannot_answer_is_refused_before_training(tmp_path, edit, message):
    plan = make_study(tmp_path)
    plan.write_text(edit(plan.read_text()))
    with pytest.raises(PlanError, match=message.replace("(", r"\(").replace("?", r"\?")):
        read_plan(plan)


def test_a_byte_order_mark_is_named(tmp_path):
    plan = make_study(tmp_path)
    plan.write_bytes(b"\xef\xbb\xbf" + plan.read_bytes())
    with pytest.raises(PlanError, match="byte-order mark"):
        read_plan(plan)


# --------------------------------------------------------------------------------- missing files, edited plans

def test_a_missing_config_is_named(tmp_path):
    plan = make_study(tmp_path)
    (plan.parent / "runs" / "base" / "config.json").unlink()
    s = Study.load(plan)
    assert any(f.endswith("config.json") and "missing" in why for a in s.data.values() for f, why in a.refused)


def test_a_missing_start_is_named_and_no_verdict_is_drawn(tmp_path):
    plan = make_study(tmp_path)
    (plan.parent / "runs" / "base" / "start.json").unlink()
    s = Study.load(plan)
    assert s.complete
    text = headline(s)
    assert text.startswith("No verdict") and "runs/base/start.json missing" in text
    assert "0 of 2 planned comparisons separated" not in text


def test_a_plan_edited_after_its_runs_is_a_deviation_without_git(tmp_path):
    plan = make_study(tmp_path)
    p = read_plan(plan)
    for name, arm in p.arms.items():
        for seed in arm.seeds:
            record_plan(p, plan.parent / "runs" / "base", arm.method, seed)
    assert not any("edited after them" in d for d in Study.load(plan).detected_deviations())
    plan.write_text(plan.read_text().replace('correction = "holm"', 'correction = "none"'))
    devs = Study.load(plan).detected_deviations()
    assert any("not the one 6 run(s) were trained under" in d and "edited after them" in d for d in devs), devs


# ------------------------------------------------------------------------------------------- the command line

def test_worker_is_read_as_workers_not_as_a_hidden_option():
    a = build_parser().parse_args(["study", "run", "plan.toml", "--worker", "2"])
    assert a.workers == 2 and a.worker is None


def test_workers_are_capped_at_the_runs_left(tmp_path, monkeypatch):
    from grpo_lab.study import run as study_run

    plan = read_plan(make_study(tmp_path))  # every run finished
    spawned = []
    monkeypatch.setattr(study_run, "_spawn", lambda plan, shard, workers, echo, *by: spawned.append(workers) or {})
    said = []
    study_run.run_study(plan, workers=100, echo=said.append)
    assert spawned == [] and any("0 run(s) left to train" in s for s in said)


def test_the_lock_survives_its_folder_being_removed_between_mkdir_and_open(tmp_path, monkeypatch):
    """The race battery six found: a study removes a run's empty lock folder while another process is between
    mkdir and open; the lock now makes the folder again instead of raising FileNotFoundError."""
    import os

    from grpo_lab.io import DirLock

    real_open, calls = os.open, []

    def racing_open(path, *a, **k):
        if str(path).endswith(".lock") and not calls:
            calls.append(path)
            os.rmdir(os.path.dirname(path))  # another process cleaned up the empty folder just now
        return real_open(path, *a, **k)

    monkeypatch.setattr(os, "open", racing_open)
    with DirLock(tmp_path / "locks" / "grpo-seed0"):
        assert (tmp_path / "locks" / "grpo-seed0" / ".lock").is_file()
    assert calls


# ---------------------------------------------------------------------- a run with no reading by definition

def test_a_planned_comparison_without_enough_readings_is_counted_as_p1_not_a_block(tmp_path):
    """Study 6's declared rule: once every run has finished, a planned comparison unread because its arm's runs have
    no reading of its measure by definition (NoReading) is counted by Holm's correction as p = 1, so the family's
    other comparison is still judged at the declared size and the unread one gets no verdict. The same comparison
    unread because of a refused (damaged) run still leaves the family without a verdict."""
    from grpo_lab.study import Metric, NoReading, lead, reading_line, register_metric
    from grpo_lab.study.words import hypothesis_line

    def silent(r, k):
        if r["history"][0].get("silent"):
            raise NoReading("test-silent: no step of the window had a signal")
        return float(r["history"][0]["reward"])

    register_metric(Metric("test-silent", "history", False, silent))
    plan = make_study(tmp_path, means={"grpo": 0.2, "sign": 0.9}, comparison='measure = "test-silent"')
    plan.write_text(plan.read_text() + '\n[[hypotheses]]\nname = "H"\ntest = "sign − grpo"\n')
    for s in (1, 2):  # grpo keeps one run with a reading: its comparison cannot be read
        _edit(result(plan, "grpo", s), lambda r: r["history"][0].update({"silent": True}))
    st = Study.load(plan)
    assert st.complete and not any(a.refused for a in st.data.values())
    (unread,), (read,) = [[r for r in st.planned if (r.d is None) == want] for want in (True, False)]
    assert unread.counted_unread and unread.apart is None and read.apart is not None
    assert read.level == pytest.approx(1 - 0.05 / 2)  # Holm over 2 (the unread one's p = 1 is the larger), not 1
    said = headline(st)
    assert not said.startswith("No verdict") and "counts it as p = 1" in said and unread.spec.label in said
    assert "is read on 1 of its 3 finished runs (seeds 1, 2 left out" in reading_line(st, unread)
    h = st.plan.hypotheses[0]
    assert "cannot be read" in hypothesis_line(st, h) and "yet" not in hypothesis_line(st, h)
    assert "cannot be read (too few runs with a reading)" in lead(st)
    # the other comparison is judged as if the unread one had p = 1: Holm over both, its own p the smaller
    from grpo_lab import stats
    assert read.apart == bool(stats.holm([read.p, 1.0], 0.05)[0])
    # a refused start is damage, not a definition: the comparison it leaves unread leaves the whole family unread
    _edit(plan.parent / "runs" / "base" / "start.json", lambda s: s["pass_at_k"].update({"1": 0.99}))
    st = Study.load(plan)
    assert headline(st).startswith("No verdict: every run finished"), headline(st)


def test_run_seconds_is_a_lower_bound_unless_strict():
    """A run's time (training plus evaluation): a missing time counts 0 for the budget line, and a rule that decides
    on run time (strict) is refused, naming the time that is missing or no time."""
    from grpo_lab.study.data import run_seconds

    assert run_seconds({"train_seconds": 60.0, "eval_seconds": 30}) == run_seconds(
        {"train_seconds": 60.0, "eval_seconds": 30}, strict=True) == 90
    assert run_seconds({"train_seconds": 60.0}) == 60
    with pytest.raises(ValueError, match="records no eval_seconds: its run time"):
        run_seconds({"train_seconds": 60.0}, strict=True)
    for bad in (float("nan"), -1.0, "30", True):
        with pytest.raises(ValueError, match="records no eval_seconds"):
            run_seconds({"train_seconds": 60.0, "eval_seconds": bad}, strict=True)
    with pytest.raises(ValueError, match="records no train_seconds and no eval_seconds"):
        run_seconds({}, strict=True)


def test_runs_on_two_cpus_or_two_precision_reasons_are_named_and_one_is_not(tmp_path):
    """Sessions draw different machines (study 6 moved from an AVX2 EPYC to an AMX Xeon after 28 runs): the report
    names every CPU and every training-precision reason its runs record when there is more than one, the minority by
    run; one CPU throughout, or none recorded (runs written before the record), says nothing."""
    plan = make_study(tmp_path)
    s = Study.load(plan)
    assert not any("more than one CPU" in d or "record no CPU" in d for d in s.detected_deviations())
    for m in ("grpo", "sign"):
        for seed in (0, 1, 2):
            _edit(result(plan, m, seed), lambda r: r.update(cpu="AMD EPYC (AVX2, no bf16 units)",
                                                            precision_why="float32, no autocast (no bf16 here)"))
    assert not any("more than one" in d for d in Study.load(plan).detected_deviations())  # one of each: nothing
    _edit(result(plan, "sign", 2), lambda r: r.update(cpu="Intel Xeon (AVX-512, bf16 units)",
                                                      precision_why="float32, no autocast (GRPO_LAB_CPU_BF16=0)"))
    _edit(result(plan, "grpo", 1), lambda r: r.pop("cpu"))
    said = Study.load(plan).detected_deviations()
    cpu = next(d for d in said if "more than one CPU" in d)
    assert "`AMD EPYC (AVX2, no bf16 units)` (4 runs)" in cpu and \
        "`Intel Xeon (AVX-512, bf16 units)` (1 run: sign seed 2)" in cpu and "differ by machine" in cpu
    assert "1 run records no CPU" in " ".join(said)
    why = next(d for d in said if "more than one reason for their training precision" in d)
    assert "(5 runs)" in why and "GRPO_LAB_CPU_BF16=0)` (1 run: sign seed 2)" in why
