"""`grpo-lab compare`: the quick profile end to end, resuming after an interruption, and bad options."""

import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from grpo_lab import cli
from grpo_lab.config import RunConfig
from grpo_lab.stats import mean_ci


def only_run(root: Path) -> Path:
    (d,) = list(root.iterdir())
    return d


def test_compare_quick_end_to_end(tmp_path):
    exe = shutil.which("grpo-lab") or pytest.fail("the grpo-lab console script is not installed")
    res = subprocess.run([exe, "compare", "--quick", "--no-progress", "--out", str(tmp_path)], capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    run = only_run(tmp_path)
    assert f"report: {run}/report.md" in res.stdout
    for name in ("report.md", "metrics.jsonl", "training.png", "passk.png", "levels.png", "config.json"):
        assert (run / name).stat().st_size > 0, name
    rows = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    conf = cli.QUICK
    assert len(rows) == len(conf["estimators"]) * len(conf["seeds"]) * conf["steps"]
    assert {(r["estimator"], r["seed"]) for r in rows} == {(e, s) for e in conf["estimators"] for s in conf["seeds"]}
    assert all(0 <= r["starvation/acr"] <= 1 and len(r["starvation/success_hist"]) == 5 for r in rows)
    # the report's table shows what the result files hold
    report = (run / "report.md").read_text()
    for est in conf["estimators"]:
        greedy = [json.loads((run / "results" / f"{est}-seed{s}.json").read_text())["eval"]["greedy"]
                  for s in conf["seeds"]]
        m = mean_ci(greedy)[0]
        line = next(x for x in report.splitlines() if x.startswith(f"| {est} |"))
        assert re.search(rf"\| {m:.3f} (\[|\(the {len(greedy)} seeds agree exactly)", line), line  # issue 51
    assert "| learning_rate | 0.0001 |" in report and "(all-fail" in report
    # issue 27: what it found comes first, a smoke run says so at once, and settings that acted on no run are not
    # listed as if they had (a CPU tiny-LM run has no Unsloth backend and no dynamic sampling)
    head = report.split("## Settings")[0]
    assert "smoke run (`--quick`)" in head.splitlines()[2] and "## Verdict" in head
    assert re.search(r"\*\*pass@1\*\* from [0-9.]+: .*(up for|down for|no detectable change for|cannot tell for) ",
                     head)
    assert "methods apart (1 pair)" in head
    settings = report.split("## Settings")[1].split("## Starting point")[0]
    for hidden in ("unsloth_compile", "unsloth_cache", "fast_inference", "max_generation_rounds", "lora_r"):
        assert f"| {hidden} |" not in settings, hidden
    assert "acted on no run here: unsloth_compile" in settings


def test_verdict_lines_follow_the_intervals():
    from grpo_lab.compare import verdict_lines

    table = [dict(estimator="a", greedy=[0.6, 0.62, 0.61]), dict(estimator="b", greedy=[0.30, 0.31, 0.29]),
             dict(estimator="c", greedy=[0.1, 0.9, 0.5])]
    (line,) = verdict_lines(table, {"greedy": 0.4}, keys=(("greedy", "greedy accuracy"),))
    assert "up for a 0.610" in line and "down for b 0.300" in line and "no detectable change for c 0.500" in line
    assert "methods apart (3 pairs): a above b." in line  # c's interval overlaps both
    assert verdict_lines([dict(estimator="a", greedy=[None])], {"greedy": 0.4}) == []  # nothing to say


def test_dapo_is_dynamic_sampling_and_the_report_shows_its_cost(tmp_path):
    """The acceptance of issue 17: `--estimators grpo,dapo --seeds 0 --quick` gives different rows, and the report
    shows the completions each run generated; the figures are drawn against completions too."""
    exe = shutil.which("grpo-lab") or pytest.fail("the grpo-lab console script is not installed")
    res = subprocess.run([exe, "compare", "--quick", "--estimators", "grpo,dapo", "--seeds", "0", "--no-progress",
                          "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    run = only_run(tmp_path)
    grpo, dapo = (json.loads((run / "results" / f"{m}-seed0.json").read_text()) for m in ("grpo", "dapo"))
    assert dapo["config"]["sampling"] == "dynamic" and dapo["config"]["estimator"] == "grpo"
    assert grpo["eval"]["correct"] != dapo["eval"]["correct"]
    steps = cli.QUICK["steps"]
    assert grpo["completions"] == steps * cli.QUICK["prompts_per_step"] * 4 < dapo["completions"]
    report = (run / "report.md").read_text()
    rows = {m: next(x for x in report.splitlines() if x.startswith(f"| {m} | {steps}.0 |")) for m in ("grpo", "dapo")}
    assert f"| {grpo['completions']} |" in rows["grpo"] and f"| {dapo['completions']} |" in rows["dapo"]
    assert "dapo equals grpo" not in report and (run / "training_by_completions.png").stat().st_size > 0


def test_interrupted_compare_resumes_and_never_leaves_a_report(tmp_path, monkeypatch, capsys):
    from grpo_lab import compare

    real = compare.train
    calls = []

    def flaky(cfg, *a, **k):
        calls.append((cfg.estimator, cfg.seed))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(cfg, *a, **k)

    monkeypatch.setattr(compare, "train", flaky)
    args = ["compare", "--policy", "tabular", "--estimators", "grpo,sign", "--seeds", "0,1", "--steps", "5",
            "--no-progress", "--out", str(tmp_path)]
    assert cli.main(args) == 130
    run = only_run(tmp_path)
    assert "resume with: grpo-lab compare --resume" in capsys.readouterr().err
    assert not (run / "report.md").exists()  # nothing that looks complete
    assert [p.name for p in (run / "results").iterdir()] == ["grpo-seed0.json"]
    first = (run / "results" / "grpo-seed0.json").read_text()

    assert cli.main(["compare", "--resume", str(run), "--no-progress"]) == 0
    # only the missing runs, seed by seed (every method of a seed before the next seed)
    assert calls[:2] == [("grpo", 0), ("sign", 0)] and calls[2:] == [("sign", 0), ("grpo", 1), ("sign", 1)]
    assert (run / "results" / "grpo-seed0.json").read_text() == first
    report = (run / "report.md").read_text()
    assert "| grpo | 2 |" in report and "| sign | 2 |" in report
    assert not list(run.rglob("*.tmp"))


@pytest.mark.parametrize("argv, message", [
    (["--estimators", "grpo,ppo"], "unknown estimator 'ppo' in method 'ppo'"),
    (["--estimators", "grpo,dapo+skip"], "dapo is a recipe (grpo+dynamic)"),
    (["--budget-completions", "10"], "smaller than one step"),
    (["--max-generation-rounds", "0"], "max_generation_rounds must be >= 1"),
    (["--on-exhausted", "wait"], "on_exhausted must be 'train'"),
    (["--seeds", "0,x"], "--seeds takes comma-separated integers"),
    (["--seeds", "1,1"], "no repeats"),
    (["--group-size", "1"], "group size must be >= 2"),
    (["--lr", "-1"], "learning rate must be a positive number"),
    (["--steps", "0"], "steps must be >= 1"),
    (["--task", "word_problems"], "warm-started on arithmetic only"),
    (["--resume", "nowhere", "--steps", "3"], "drop --steps"),
    (["--task", "gsm8k"], "needs a real instruct model"),
    (["--resume", "nowhere"], "not a grpo-lab comparison directory"),
])
def test_bad_options_are_clear_errors(tmp_path, capsys, argv, message):
    with pytest.raises(SystemExit) as e:
        cli.main(["compare", "--out", str(tmp_path / "runs"), *argv])
    assert e.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()  # nothing half-written


def test_module_entry_point_help():
    res = subprocess.run([sys.executable, "-m", "grpo_lab.cli", "compare", "--help"], capture_output=True, text=True)
    assert res.returncode == 0 and "--quick" in res.stdout and "--resume" in res.stdout


def test_tabular_policy_report_has_exact_passk(tmp_path):
    assert cli.main(["compare", "--policy", "tabular", "--estimators", "grpo", "--seeds", "0,1", "--steps", "3",
                     "--no-progress", "--out", str(tmp_path)]) == 0
    run = only_run(tmp_path)
    res = json.loads((run / "results" / "grpo-seed0.json").read_text())
    assert np.isclose(res["eval"]["pass_at_k"]["1"], res["history"][-1]["reward"], atol=0.05)
    assert "grpo_lab.simulator" in (run / "report.md").read_text()


def test_gsm8k_with_an_unreachable_model_is_a_clear_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(SystemExit) as e:
        cli.main(["compare", "--task", "gsm8k", "--policy", "no-such-org/model", "--no-progress", "--out",
                  str(tmp_path)])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "could not load 'no-such-org/model'" in err and "Traceback" not in err
    assert not list(tmp_path.rglob("report.md"))


def test_a_negative_learning_rate_in_scientific_notation_is_named(tmp_path, capsys):
    with pytest.raises(SystemExit):
        cli.main(["compare", "--lr", "-1e-4", "--out", str(tmp_path)])
    assert "learning rate must be a positive number, got -0.0001" in capsys.readouterr().err


@pytest.mark.parametrize("kw", [dict(learning_rate=True), dict(learning_rate=math.inf), dict(max_grad_norm=False),
                                dict(max_grad_norm=-1.0)])
def test_run_config_refuses_bools_and_non_positive_numbers(kw):
    with pytest.raises(ValueError, match="must be a positive number"):
        RunConfig(**kw).validate()


def test_an_edited_config_names_the_changed_setting(tmp_path):
    from grpo_lab.compare import read_config, write_config

    write_config(tmp_path, ["grpo"], [0], RunConfig(policy="tabular", steps=5))
    conf = json.loads((tmp_path / "config.json").read_text())
    conf["base"]["learning_rate"] = 0.5
    (tmp_path / "config.json").write_text(json.dumps(conf))
    with pytest.raises(ValueError, match=r"settings changed since the start \(start value != now\): "
                                         r"learning_rate: 0.0001 != 0.5"):
        read_config(tmp_path)


def test_a_seed_removed_from_config_is_named_in_the_report(tmp_path):
    from grpo_lab.compare import read_config, write_report

    assert cli.main(["compare", "--policy", "tabular", "--estimators", "grpo", "--seeds", "0,1", "--steps", "3",
                     "--no-progress", "--out", str(tmp_path)]) == 0
    (run,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    conf = json.loads((run / "config.json").read_text())
    conf["seeds"] = [0]
    (run / "config.json").write_text(json.dumps(conf))
    report = write_report(run, read_config(run)).read_text()
    assert "**Not in this report:** grpo-seed1.json" in report


def test_the_verdict_says_it_holds_at_its_one_learning_rate(tmp_path):
    """Issue 49, item 5: study 3 found the learning rate deciding Sign against Dr.GRPO, so a comparison's verdict
    names the one rate and β it ran at and where to compare each estimator at its own best rate."""
    assert cli.main(["compare", "--policy", "tabular", "--estimators", "grpo,sign", "--seeds", "0,1", "--steps", "3",
                     "--lr", "0.05", "--no-progress", "--out", str(tmp_path)]) == 0
    (run,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    verdict = (run / "report.md").read_text().split("## Verdict")[1].split("Command:")[0]
    assert "one learning rate (0.05) and KL coefficient (β 0)" in verdict
    assert "own best rate, chosen on a validation split" in verdict and "grpo-lab study" in verdict


def test_a_refused_compare_leaves_no_run_directory(tmp_path, capsys):
    from grpo_lab import cli

    # refused inside write_config, after the timestamped directory was made
    with pytest.raises(SystemExit):
        cli.main(["compare", "--policy", "tabular", "--estimators", "dapo", "--no-progress", "--out", str(tmp_path)])
    assert "the tabular simulator has none" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    assert cli.main(["compare", "--policy", "tabular", "--estimators", "grpo", "--seeds", "0", "--steps", "2",
                     "--no-progress", "--out", str(tmp_path)]) == 0
    assert len(list(tmp_path.iterdir())) == 1  # an accepted one keeps its directory


def test_quick_with_a_real_model_uses_a_task_it_can_learn_and_its_token_budget(tmp_path, monkeypatch):
    """Issue 50, item 6: --quick --policy smollm2 kept the tiny LM's arithmetic (SmolLM2 scores 0.025 there) and
    SmolLM2's 256 new tokens: one run took 1,026 s and every group was all-fail. The real-model preset: single-digit
    sums (about 0.6 of its groups of 4 degenerate at the start, so some carry a signal), 32 new tokens, 4 steps."""
    import grpo_lab.compare as compare

    seen = {}
    monkeypatch.setattr(compare, "run_comparison", lambda out, conf, **kw: seen.setdefault("conf", conf))
    assert cli.main(["compare", "--quick", "--policy", "smollm2", "--out", str(tmp_path), "--no-progress"]) in (0, None)
    base = seen["conf"]["base"]
    assert base.task == cli.QUICK_REAL["task"] and base.max_completion_length == 32 and base.steps == 4
    assert base.lora_r == 16  # the policy's own defaults still apply where --quick sets nothing
    seen.clear()
    cli.main(["compare", "--quick", "--policy", "smollm2", "--task", "gym:chain_sum:min_terms=3,max_terms=3",
              "--out", str(tmp_path), "--no-progress"])
    assert seen["conf"]["base"].task.startswith("gym:chain_sum:min_terms=3")  # a task given is kept
