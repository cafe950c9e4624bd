"""Issue 11, item 1: resume checks its config, damaged results are retrained, one writer per directory,
empty lists are errors, SIGTERM is handled like Ctrl-C. All on the tabular policy (seconds)."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from grpo_lab import cli
from grpo_lab.compare import read_config, write_report
from grpo_lab.io import DirLock

BASE = ["compare", "--policy", "tabular", "--estimators", "grpo,sign", "--seeds", "0,1", "--steps", "3",
        "--no-progress"]


def only_run(root: Path) -> Path:
    (d,) = [p for p in root.iterdir() if p.is_dir()]
    return d


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    assert cli.main([*BASE, "--out", str(root)]) == 0
    return only_run(root)


def copy_of(run: Path, tmp_path: Path) -> Path:
    import shutil

    dst = tmp_path / "copy"
    shutil.copytree(run, dst)
    (dst / "report.md").unlink()
    return dst


def test_resume_refuses_a_changed_config_and_names_the_keys(finished, tmp_path, capsys):
    run = copy_of(finished, tmp_path)
    conf = json.loads((run / "config.json").read_text())
    conf["base"]["group_size"] = 8
    conf["base"]["learning_rate"] = 0.5
    (run / "config.json").write_text(json.dumps(conf))
    with pytest.raises(SystemExit) as e:
        cli.main(["compare", "--resume", str(run), "--no-progress"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "was changed after the comparison started" in err
    assert "group_size: 4 != 8" in err and "learning_rate:" in err
    assert not (run / "report.md").exists()


def test_damaged_and_foreign_results_are_retrained_after_saying_which(finished, tmp_path, capsys):
    run = copy_of(finished, tmp_path)
    res = run / "results"
    text = (res / "grpo-seed0.json").read_text()
    (res / "grpo-seed0.json").write_text(text[: len(text) // 2])  # truncated
    (res / "grpo-seed1.json").write_text("{}")  # empty object
    (res / "sign-seed1.json").write_text((res / "sign-seed0.json").read_text())  # another run's file
    assert cli.main(["compare", "--resume", str(run), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert f"{res / 'grpo-seed0.json'} is damaged" in out
    assert f"{res / 'grpo-seed1.json'} is damaged" in out
    assert f"{res / 'sign-seed1.json'} does not belong to this comparison (it holds sign seed 0)" in out
    assert "resuming: 1 of 4 runs already finished" in out
    from grpo_lab.io import display_path

    assert (run / "report.md").read_text() == (finished / "report.md").read_text().replace(
        display_path(finished), display_path(run))
    # nothing is deleted: each rejected file is kept beside, as it was, and the message says where
    assert "moved aside to sign-seed1.json.rejected-0" in out
    assert (res / "grpo-seed0.json.rejected-0").read_text() == text[: len(text) // 2]
    assert (res / "grpo-seed1.json.rejected-0").read_text() == "{}"


def test_a_damaged_results_file_at_report_time_is_named(finished, tmp_path):
    from grpo_lab.compare import read_config, write_report

    run = copy_of(finished, tmp_path)
    (run / "results" / "sign-seed0.json").write_text('{"config": ')
    with pytest.raises(ValueError, match=r"results file .*sign-seed0.json is damaged"):
        write_report(run, read_config(run))


def test_a_second_writer_gets_a_clear_error(finished, tmp_path, capsys):
    run = copy_of(finished, tmp_path)
    holder = ("import sys, time\nfrom grpo_lab.io import DirLock\nwith DirLock(sys.argv[1]):\n"
              "    print('held', flush=True)\n    time.sleep(60)\n")
    other = subprocess.Popen([sys.executable, "-c", holder, str(run)], stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline().strip() == "held"
        with pytest.raises(SystemExit) as e:
            cli.main(["compare", "--resume", str(run), "--no-progress"])
        assert e.value.code == 2
        assert f"is in use by process {other.pid}" in capsys.readouterr().err
        from grpo_lab.io import LockInUse

        with pytest.raises(LockInUse, match=f"in use by process {other.pid}"):  # the error a study's workers wait on
            DirLock(run).__enter__()
    finally:
        other.kill()
        other.wait()
    # the owner was killed (its .lock file is left behind): the kernel released its lock, so it is taken over
    assert (run / ".lock").exists()
    assert cli.main(["compare", "--resume", str(run), "--no-progress"]) == 0
    assert not (run / ".lock").exists()


def test_a_pid_written_in_a_lock_file_never_blocks(tmp_path):
    """A leftover lock file naming a live but unrelated process (a reused pid) is not a lock."""
    (tmp_path / ".lock").write_text(str(os.getppid()))
    with DirLock(tmp_path):
        assert (tmp_path / ".lock").read_text() == str(os.getpid())


def test_a_nested_lock_is_refused_and_keeps_the_outer_one(tmp_path):
    from grpo_lab.io import LockInUse

    with DirLock(tmp_path):
        with pytest.raises(RuntimeError, match="already locked by this process") as e:
            with DirLock(tmp_path):
                pass
        assert not isinstance(e.value, LockInUse)  # no wait mends it: a waiter raises it at once
        assert (tmp_path / ".lock").read_text() == str(os.getpid())  # the outer lock still stands
    assert not (tmp_path / ".lock").exists()


def test_racing_processes_never_both_hold_the_lock(tmp_path):
    """Processes released together, each trying the lock many times: at most one holds it at any moment."""
    racer = ("import os, sys, time\nfrom grpo_lab.io import DirLock\nd, log, t0 = sys.argv[1], sys.argv[2], "
             "float(sys.argv[3])\nwhile time.time() < t0: pass\nfor _ in range(60):\n    try:\n"
             "        with DirLock(d):\n            with open(log, 'a') as f: f.write(f'in {os.getpid()}\\n')\n"
             "            time.sleep(0.001)\n            with open(log, 'a') as f: f.write(f'out {os.getpid()}\\n')\n"
             "    except RuntimeError:\n        pass\n")
    import time as _time

    log = tmp_path / "log.txt"
    t0 = _time.time() + 2.0
    procs = [subprocess.Popen([sys.executable, "-c", racer, str(tmp_path / "d"), str(log), str(t0)]) for _ in range(4)]
    for p in procs:
        assert p.wait(timeout=120) == 0
    holder = None
    lines = log.read_text().splitlines()
    assert len(lines) >= 2
    for line in lines:
        what, pid = line.split()
        if what == "in":
            assert holder is None, f"{pid} took the lock while {holder} held it"
            holder = pid
        else:
            assert holder == pid
            holder = None


def test_lock_is_exclusive_within_one_directory(tmp_path):
    with DirLock(tmp_path):
        assert (tmp_path / ".lock").read_text() == str(os.getpid())
    assert not (tmp_path / ".lock").exists()


@pytest.mark.parametrize("flag", ["--estimators", "--seeds"])
def test_empty_lists_are_errors_not_the_default(tmp_path, capsys, flag):
    args = ["compare", "--policy", "tabular", "--no-progress", "--out", str(tmp_path / "runs"), flag, ""]
    with pytest.raises(SystemExit) as e:
        cli.main(args)
    assert e.value.code == 2
    assert f"{flag} needs at least one value" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_one_seed_says_there_are_no_intervals(tmp_path, capsys):
    assert cli.main(["compare", "--policy", "tabular", "--estimators", "grpo", "--seeds", "0", "--steps", "2",
                     "--no-progress", "--out", str(tmp_path)]) == 0
    assert "no confidence intervals" in capsys.readouterr().out
    report = (only_run(tmp_path) / "report.md").read_text()
    assert "One seed per estimator: there are no intervals" in report
    line = next(x for x in report.splitlines() if x.startswith("| grpo |"))
    assert "(1 seed, no interval)" in line and "[" not in line


SLOW_RUN = textwrap.dedent("""
    import sys, time
    from grpo_lab import cli, compare, runner
    compare.evaluate_start = lambda cfg: {"greedy": 0.5, "greedy_by_level": {}, "n_samples": 4,
                                          "correct": [1, 2], "levels": [1, 1]}
    real = compare.train
    def slow(cfg, workdir, **kw):  # the real tiny-LM path (a temporary work directory), made slow
        runner.LanguageModel.train = lambda *a, **k: (print("training", flush=True), time.sleep(60))
        return real(cfg, workdir, **kw)
    compare.train = slow
    sys.exit(cli.main(["compare", "--estimators", "grpo", "--seeds", "0", "--steps", "2", "--no-progress",
                       "--out", sys.argv[1]]))
""")


def test_sigterm_is_handled_like_ctrl_c(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", SLOW_RUN, str(tmp_path / "runs")], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(tmp)})
    assert proc.stdout.readline().startswith("grpo-lab compare")
    for line in proc.stdout:  # wait until a run is training
        if line.startswith("training"):
            break
    time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err
    assert "terminated: finished runs are kept" in err and "resume with: grpo-lab compare --resume" in err
    assert not list(tmp.iterdir())  # the run's temporary directory is removed
    run = only_run(tmp_path / "runs")
    assert not (run / ".lock").exists() and not (run / "report.md").exists()


def test_a_damaged_metrics_file_is_named(finished, tmp_path):
    run = copy_of(finished, tmp_path)
    metrics = run / "metrics" / "grpo-seed0.jsonl"  # a language-model run's per-step log, damaged
    metrics.parent.mkdir(exist_ok=True)
    metrics.write_text('{"step": 1}\n{"step": 2, \n')
    with pytest.raises(ValueError, match=r"grpo-seed0.jsonl, line 2: not JSON"):
        write_report(run, read_config(run))


def test_an_empty_start_or_eval_is_redone_not_a_traceback(finished, tmp_path, capsys):
    run = copy_of(finished, tmp_path)
    (run / "start.json").write_text("{}")
    res = sorted((run / "results").glob("*.json"))[0]
    data = json.loads(res.read_text())
    data["eval"] = {}
    res.write_text(json.dumps(data))
    assert cli.main(["compare", "--resume", str(run), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "not a starting-policy evaluation" in out and "is incomplete" in out
    assert (run / "report.md").is_file() and any(p.name.startswith(res.name + ".rejected-") for p in res.parent.iterdir())


def test_an_interim_report_shows_the_finished_runs_and_leaves_report_md_to_the_end(tmp_path, capsys):
    """Issue 26: a long study is committed as it goes; ``--interim-report`` reports the finished runs without
    training, under interim/, and says how many are missing and how to resume."""
    import json

    from grpo_lab.cli import main

    assert main(["compare", "--estimators", "grpo,sign", "--seeds", "0,1", "--steps", "1", "--prompts-per-step", "2",
                 "-G", "2", "--eval-problems", "4", "--eval-samples", "2", "--out", str(tmp_path),
                 "--no-progress"]) == 0
    out = next(tmp_path.iterdir())
    final = (out / "report.md").read_text()
    (out / "report.md").unlink()
    (out / "results" / "sign-seed1.json").unlink()  # as if the comparison were still running
    capsys.readouterr()
    assert main(["compare", "--interim-report", str(out)]) == 0
    assert "interim" in capsys.readouterr().out
    report = (out / "interim" / "report.md").read_text()
    assert "Interim report" in report.splitlines()[2] and "3 of 4 runs finished" in report
    assert "not yet: sign-seed1" in report and "--resume" in report
    assert "| sign | 1 |" in report and "| grpo | 2 |" in report  # each method with the seeds it has
    assert not (out / "report.md").exists()  # the final report is still only written by a finished comparison
    assert (out / "interim" / "training.png").is_file() and (out / "interim" / "metrics.jsonl").is_file()
    rows = [json.loads(x) for x in (out / "interim" / "metrics.jsonl").read_text().splitlines()]
    assert {(r["estimator"], r["seed"]) for r in rows} == {("grpo", 0), ("grpo", 1), ("sign", 0)}
    assert "| grpo | 2 |" in final  # the complete report had both seeds
    with pytest.raises(SystemExit):
        main(["compare", "--interim-report", str(out), "--steps", "3"])
    assert "trains nothing" in capsys.readouterr().err

    # issue 38: the interim report checks what it reads as --resume does: swapped files, a damaged time
    g0, s0 = out / "results" / "grpo-seed0.json", out / "results" / "sign-seed0.json"
    a, b = g0.read_text(), s0.read_text()
    g0.write_text(b)
    s0.write_text(a)
    assert main(["compare", "--interim-report", str(out)]) == 0
    report = (out / "interim" / "report.md").read_text()
    assert "**Left out of this report**" in report
    assert "`grpo-seed0.json`: does not belong to this comparison (it holds sign seed 0)" in report
    assert "`sign-seed0.json`: does not belong to this comparison (it holds grpo seed 0)" in report
    assert "| grpo | 1 |" in report and "| sign |" not in report  # each method only with the runs that are its own
    g0.write_text(a)
    s0.write_text(b)
    damaged = json.loads((out / "results" / "grpo-seed1.json").read_text())
    damaged["train_seconds"] = float("nan")
    (out / "results" / "grpo-seed1.json").write_text(json.dumps(damaged))
    assert main(["compare", "--interim-report", str(out)]) == 0
    report = (out / "interim" / "report.md").read_text()
    assert "`grpo-seed1.json`: is incomplete or damaged (no training time)" in report and "nan s" not in report


@pytest.fixture(scope="module")
def finished_lm(tmp_path_factory):
    """A finished comparison of the tiny LM (real evaluations with per-problem counts), for damaging."""
    root = tmp_path_factory.mktemp("lm")
    assert cli.main(["compare", "--estimators", "grpo", "--seeds", "0,1", "--steps", "1", "--prompts-per-step", "2",
                     "-G", "2", "--eval-problems", "4", "--eval-samples", "2", "--no-progress", "--out", str(root)]) == 0
    return only_run(root)


DAMAGES = {
    "pass_at_k null": lambda r: r["eval"].update(pass_at_k=None),
    "pass_at_k empty": lambda r: r["eval"].update(pass_at_k={}),
    "pass_at_k strings": lambda r: r["eval"].update(pass_at_k={"1": "0.5"}),
    "no train_seconds": lambda r: r.pop("train_seconds"),
    "greedy null": lambda r: r["eval"].update(greedy=None),
    "empty history": lambda r: r.update(history=[]),
    "counts of booleans": lambda r: r["eval"].update(correct=[True] * len(r["eval"]["correct"])),
    "a problem missing": lambda r: r["eval"].update(correct=r["eval"]["correct"][:-1]),
    "a count above n": lambda r: r["eval"]["correct"].__setitem__(0, 99),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_damaged_result_is_moved_aside_and_retrained_never_a_traceback(finished_lm, tmp_path, capsys, damage):
    """Issue 28: resume validates every results file against the schema it wrote; a damaged one is moved aside
    (named) and its run trained again, so the report never silently uses fewer seeds or crashes."""
    import json
    import shutil

    run = tmp_path / "copy"
    shutil.copytree(finished_lm, run)
    path = run / "results" / "grpo-seed1.json"
    res = json.loads(path.read_text())
    DAMAGES[damage](res)
    path.write_text(json.dumps(res))
    (run / "report.md").unlink()
    capsys.readouterr()
    assert cli.main(["compare", "--resume", str(run), "--no-progress"]) == 0
    said = capsys.readouterr().out
    assert "grpo-seed1.json is incomplete or damaged" in said and "retraining grpo-seed1" in said
    assert (run / "results" / "grpo-seed1.json.rejected-0").is_file()
    assert "| grpo | 2 |" in (run / "report.md").read_text()


def test_a_start_without_levels_is_evaluated_again(finished_lm, tmp_path, capsys):
    import json
    import shutil

    run = tmp_path / "copy"
    shutil.copytree(finished_lm, run)
    start = json.loads((run / "start.json").read_text())
    start.pop("greedy_by_level")
    (run / "start.json").write_text(json.dumps(start))
    (run / "report.md").unlink()
    assert cli.main(["compare", "--resume", str(run), "--no-progress"]) == 0
    assert "greedy_by_level is missing" in capsys.readouterr().out
    assert "greedy_by_level" in json.loads((run / "start.json").read_text())


SPELLINGS = [("dapo", "grpo+dynamic"), ("grpo+skip", "grpo+skip=0.5"), ("grpo+skip=0.5", "grpo+skip=.5"),
             ("grpo+skip", "grpo+skip=5e-1"), ("sign+skip=0.3+drop", "sign+drop+skip=0.3"),
             ("grpo+dynamic+skip=0.8", "grpo+skip=0.8+dynamic")]


@pytest.mark.parametrize("a,b", SPELLINGS)
def test_a_method_has_one_identity_whatever_its_spelling(a, b):
    """Issue 38: methods were compared by their spelling: a resumed grpo+dynamic run 'held dapo' and was retrained."""
    from grpo_lab.config import RunConfig, method_key, method_name

    assert method_key(a) == method_key(b)
    for m in (a, b):
        cfg = RunConfig().with_run(m, 0)
        assert method_key(cfg) == method_key(m) == method_key(method_name(cfg))  # the canonical name reads back
    with pytest.raises(cli.UsageError, match="lists one method twice .* are the same method"):
        cli._estimators(f"{a},{b}")


def test_the_skip_probability_keeps_its_full_precision_and_a_plain_spelling():
    from grpo_lab.config import RunConfig, method_key, method_name, parse_method

    cfg = RunConfig().with_run("grpo+skip=0.1234567891", 0)
    assert method_name(cfg) == "grpo+skip=0.1234567891" and method_key(method_name(cfg)) == method_key(cfg)
    assert method_key("grpo+skip=0.1234567") != method_key("grpo+skip=0.123457")  # no rounding to 6 digits
    for bad in ("0.1_5", " 0.2", "0x1p-2", "nan"):
        with pytest.raises(ValueError, match="plain decimal number"):
            parse_method(f"grpo+skip={bad}")


def test_a_resume_knows_the_methods_it_ran_under_any_spelling(tmp_path, capsys):
    args = ["compare", "--quick", "--seeds", "0", "--estimators", "grpo+dynamic,sign+skip=0.3+drop", "--no-progress",
            "--out", str(tmp_path)]
    assert cli.main(args) == 0
    run = only_run(tmp_path)
    (run / "report.md").unlink()
    capsys.readouterr()
    assert cli.main(["compare", "--resume", str(run), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "resuming: 2 of 2 runs already finished" in out
    assert not list((run / "results").glob("*.rejected-*")) and (run / "report.md").is_file()


def test_every_result_names_its_grader_and_a_report_says_when_they_differ(tmp_path, capsys):
    """Issue 38: a rerun reproduced a tracked run's training but graded 1 of 256 samples differently, and no result
    said which grader scored it."""
    from grpo_lab.tasks import grader_version

    assert cli.main(["compare", "--quick", "--estimators", "grpo", "--seeds", "0", "--no-progress",
                     "--out", str(tmp_path)]) == 0
    run = only_run(tmp_path)
    (run / "report.md").unlink()
    res = run / "results" / "grpo-seed0.json"
    data = json.loads(res.read_text())
    assert data["eval"]["grader"] == grader_version() == json.loads((run / "start.json").read_text())["grader"]
    data["eval"]["grader"] = "0123456789ab"  # scored by an older grader
    res.write_text(json.dumps(data))
    capsys.readouterr()
    assert cli.main(["compare", "--resume", str(run), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert f"graded by another grader than this process's ({grader_version()}): grpo-seed0.json (0123456789ab)" in out
    report = (run / "report.md").read_text()
    assert "**Graded by different graders** (0123456789ab, " in report
