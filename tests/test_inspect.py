"""`grpo-lab inspect`: a real TRL trainer_state.json, grpo-lab's own logs, CSV exports, malformed input."""

import json
import os

import numpy as np
import pytest
from datasets import Dataset
from hypothesis import given, settings
from hypothesis import strategies as st
from trl import GRPOConfig, GRPOTrainer

from conftest import USE_CPU
from grpo_lab import cli
from grpo_lab.diagnose import LogFormatError, beta_degeneracy, implied_beta, inspect_run, read_log
from grpo_lab.policy import char_tokenizer, tiny_causal_lm
from grpo_lab.trl import StarvationCallback, trainer_class


G = 4


def coin(prompts, completions, **kw):  # a deterministic 0/1 reward that mixes within groups
    return [float(len(c) % 2) for c in completions]


def tiny_run(out, stock=True, callbacks=()):
    tok = char_tokenizer()
    ds = Dataset.from_dict({"prompt": [f"{i}+{i}=" for i in range(16)]})
    args = GRPOConfig(output_dir=str(out), per_device_train_batch_size=8, num_generations=G, max_completion_length=4,
                      max_steps=4, logging_steps=1, report_to="none", use_cpu=USE_CPU, save_strategy="no", seed=0)
    cls = GRPOTrainer if stock else trainer_class()
    kw = {} if stock else {"estimator": "grpo"}
    tr = cls(model=tiny_causal_lm(tok), args=args, reward_funcs=coin, train_dataset=ds, processing_class=tok,
             callbacks=list(callbacks), **kw)
    tr.train()
    tr.save_state()  # writes output_dir/trainer_state.json, as TRL users have it
    return tr


def test_inspect_a_real_trl_output_dir(tmp_path, capsys):
    tr = tiny_run(tmp_path / "run")
    zero = [h["frac_reward_zero_std"] for h in tr.state.log_history if "frac_reward_zero_std" in h]
    assert len(zero) == 4
    assert cli.main(["inspect", str(tmp_path / "run"), "--group-size", "4", "--out", str(tmp_path / "rep")]) == 0
    assert f"report: {tmp_path / 'rep' / 'report.md'}" in capsys.readouterr().out
    report = (tmp_path / "rep" / "report.md").read_text()
    assert "Log kind: **trl**" in report and "4 logged rows" in report
    assert f"whole run {np.mean(zero):.3f}" in report
    assert "not logged: which degenerate groups were all-fail" in report
    assert "## Implied per-prompt success distribution" in report
    for png in ("degenerate.png", "reward.png"):
        assert (tmp_path / "rep" / png).stat().st_size > 0
    # without G the report says what it would need
    assert cli.main(["inspect", str(tmp_path / "run" / "trainer_state.json"), "--out", str(tmp_path / "r2")]) == 0
    assert "rerun with `--group-size G`" in (tmp_path / "r2" / "report.md").read_text()


def test_inspect_grpo_lab_logs(tmp_path):
    cb = StarvationCallback(tmp_path / "metrics.jsonl")
    tiny_run(tmp_path / "run", stock=False, callbacks=[cb])
    rows = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    log = read_log(tmp_path / "metrics.jsonl")
    assert log.kind == "grpo_lab" and log.group_size == G and len(log.rows) == len(rows) == 4
    assert cli.main(["inspect", str(tmp_path / "metrics.jsonl")]) == 0
    report = (tmp_path / "starvation" / "report.md").read_text()
    fail = np.mean([r["starvation/all_fail"] for r in rows])
    assert f"all-fail fraction {fail:.3f}" in report
    total = np.sum([r["starvation/success_hist"] for r in rows], axis=0).tolist()
    assert f"correct, whole run: {total}" in report
    assert (tmp_path / "starvation" / "success_hist.png").is_file()


def test_inspect_a_csv_export(tmp_path):
    (tmp_path / "wandb.csv").write_text("Step,train/frac_reward_zero_std,train/reward\n1,0.75,0.2\n2,0.70,0.25\n")
    log = read_log(tmp_path / "wandb.csv")
    assert log.kind == "csv" and [r["degenerate"] for r in log.rows] == [0.75, 0.70]


@pytest.mark.parametrize("name, content, message", [
    ("trainer_state.json", "{not json", "is not valid JSON"),
    ("trainer_state.json", '{"epoch": 1}', "no 'log_history' list"),
    ("trainer_state.json", '{"log_history": [{"loss": 1.0, "step": 1}]}', "no GRPO metrics"),
    ("metrics.jsonl", "", "is empty"),
    ("metrics.jsonl", '{"loss": 1}\n', "not a grpo-lab metrics.jsonl"),
    ("export.csv", "a,b\n1,2\n", "needs a step column and a frac_reward_zero_std column"),
    ("model.bin", "\x00\x01", "unknown log type"),
])
def test_malformed_input_is_a_clear_error(tmp_path, capsys, name, content, message):
    (tmp_path / name).write_text(content)
    with pytest.raises(SystemExit) as e:
        cli.main(["inspect", str(tmp_path / name)])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "starvation" / "report.md").exists()


def test_missing_and_empty_paths(tmp_path, capsys):
    for path, message in ((tmp_path / "nope", "does not exist"), (tmp_path, "holds no trainer_state.json")):
        with pytest.raises(SystemExit):
            cli.main(["inspect", str(path)])
        assert message in capsys.readouterr().err
    with pytest.raises(LogFormatError):
        read_log(tmp_path)


@settings(max_examples=60, deadline=None)
@given(st.floats(0.05, 0.95), st.floats(0.05, 50), st.sampled_from([2, 4, 8]))
def test_implied_beta_recovers_the_population(mu, kappa, G):
    d = beta_degeneracy(mu, kappa, G)
    a, b, why = implied_beta(mu, d, G)
    if why is None:
        assert a / (a + b) == pytest.approx(mu) and beta_degeneracy(mu, a + b, G) == pytest.approx(d, abs=1e-7)
    else:  # only when d is numerically at the i.i.d. value
        assert d - (mu**G + (1 - mu) ** G) < 1e-6


def test_a_comparison_is_read_per_method_with_labelled_series(tmp_path):
    """Issue 27: a comparison directory's log is read per method (two labelled series in the project's colours,
    a summary row each), never one curve pooled over methods; first/last summaries name how many steps they
    cover and say when that is too few."""
    import json

    from grpo_lab import viz
    from grpo_lab.diagnose import method_figures, read_log

    rows = []
    for est, base in (("grpo", 0.8), ("sign", 0.4)):
        for seed in (0, 1, 2):
            for step in range(1, 31):
                d = base - 0.01 * step + 0.01 * seed
                rows.append({"estimator": est, "seed": seed, "step": step, "reward": 0.3, "starvation/acr": d,
                             "starvation/all_fail": d / 2, "starvation/all_pass": d / 2})
    path = tmp_path / "metrics.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    log = read_log(path)
    methods = log.methods()
    assert set(methods) == {"grpo", "sign"} and all(len(v) == 3 for v in methods.values())
    fig = method_figures(log, methods)["degenerate.png"]
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[:2] == ["grpo", "sign"] and any("95% t-interval over seeds (n=3)" in x for x in labels)
    colours = {line.get_label(): line.get_color() for line in ax.get_lines()}
    assert colours["grpo"] == viz.style("grpo")["color"] and colours["sign"] == viz.style("sign")["color"]
    report = inspect_run(path, tmp_path / "out").read_text()
    assert "6 runs of 2 methods (read per method)" in report
    grpo = next(x for x in report.splitlines() if x.startswith("| grpo | 3 | 30 |"))
    assert grpo.split("|")[4].strip().startswith("0.790")  # grpo alone, steps 1-3, seeds 0-2: 0.8 - 0.02 + 0.01
    assert "(3 steps); with fewer than 5 steps these are single noisy numbers" in report
    assert "mean over runs" not in report


def test_a_csv_export_is_averaged_per_step_and_bounded(tmp_path, monkeypatch):
    """Issue 28: a 100 MB export (3.9M rows) took 2.9 GB; now each row keeps three floats and the rows become at
    most CSV_POINTS points, averaged per step (what the report's series did with them anyway)."""
    import grpo_lab.diagnose as d

    monkeypatch.setattr(d, "CSV_POINTS", 50)
    rng = np.random.default_rng(0)
    steps = np.repeat(np.arange(200), 3)  # three runs logged at each step, 200 steps
    deg = rng.uniform(0, 1, steps.size)
    lines = ["Step,train/frac_reward_zero_std,train/reward"] + [f"{s},{x:.6f},{1 - x:.6f}" for s, x in zip(steps, deg)]
    lines.append("7,0.5,")  # a row without a reward
    (tmp_path / "big.csv").write_text("\n".join(lines) + "\n")
    log = read_log(tmp_path / "big.csv")
    assert log.n_rows == steps.size + 1 and len(log.rows) == 50  # 200 steps -> 50 ranges of 4 steps
    assert any("200 distinct steps averaged into 50" in n for n in log.notes)
    assert log.warnings == [f"1 of {steps.size + 1} rows lack a mean reward; they are left out of that series"]
    first = deg[:12]  # steps 0-3, three rows each: the first range
    assert log.rows[0]["step"] == pytest.approx(1.5)
    assert log.rows[0]["degenerate"] == pytest.approx(first.mean(), abs=1e-6)
    monkeypatch.setattr(d, "CSV_POINTS", 10_000)  # every step its own point: the per-step means
    log = read_log(tmp_path / "big.csv")
    assert len(log.rows) == 200
    s7 = [r for r in log.rows if r["step"] == 7][0]
    assert s7["degenerate"] == pytest.approx((deg[21:24].sum() + 0.5) / 4, abs=1e-6)
    assert s7["reward"] == pytest.approx((1 - deg[21:24]).mean(), abs=1e-6)  # the row without one left out


def test_inspect_says_how_long_a_big_file_takes(tmp_path, monkeypatch):
    import grpo_lab.diagnose as d

    path = tmp_path / "w.csv"
    path.write_text("Step,train/frac_reward_zero_std\n1,0.5\n")
    monkeypatch.setattr(d.Path, "stat", lambda self: type("S", (), {"st_size": 100e6, "st_mode": 0o100644})())
    said = []
    monkeypatch.setattr(d, "read_log", lambda p: (_ for _ in ()).throw(RuntimeError("stop")))
    with pytest.raises(RuntimeError, match="stop"):
        d.inspect_run(path, warn=said.append)
    assert said == [f"{path} is 100 MB: reading it takes about {100 / d.CSV_MB_PER_S:.0f} s at the measured "
                    f"{d.CSV_MB_PER_S:g} MB/s"]


def _trl_log(tmp_path, rows):
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps({"log_history": rows}))
    return path


def _jsonl(path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_beta_degeneracy_at_a_huge_group_size_is_fast_and_continuous():
    mu, kappa = 0.3, 2.0
    small = beta_degeneracy(mu, kappa, 1000)
    big = beta_degeneracy(mu, kappa, 1001)  # the log-gamma route
    assert 0 < big < small and big == pytest.approx(small, rel=1e-2)
    assert 0 < beta_degeneracy(mu, kappa, 10 ** 9) < 1


def test_inspect_refuses_fractions_outside_0_1_and_all_nan_logs(tmp_path):
    bad = _trl_log(tmp_path, [{"step": 1, "reward": 0.3, "frac_reward_zero_std": 7}])
    with pytest.raises(LogFormatError, match="degenerate = 7.0, not a fraction"):
        read_log(bad)
    nan = _trl_log(tmp_path, [{"step": 1, "reward": 0.3, "frac_reward_zero_std": float("nan")}])
    with pytest.raises(LogFormatError, match="finite degenerate fraction"):
        read_log(nan)


def test_inspect_refuses_a_group_size_below_2(tmp_path, capsys):
    path = _trl_log(tmp_path, [{"step": 1, "reward": 0.3, "frac_reward_zero_std": 0.7}])
    with pytest.raises(SystemExit):
        cli.main(["inspect", str(path), "-G", "1"])
    assert "group size must be >= 2" in capsys.readouterr().err


def test_inspect_reads_null_seeds_bom_csvs_and_names_non_utf8(tmp_path):
    a = tmp_path / "a.jsonl"
    a.write_text(json.dumps({"step": 1, "seed": None, "estimator": "grpo", "starvation/acr": 0.5, "reward": 0.3}) + "\n")
    assert read_log(a).rows[0]["run"] is None
    b = tmp_path / "b.jsonl"
    b.write_bytes(b'{"step": 1, "starvation/acr": 0.5, "x": "\xff"}\n')
    with pytest.raises(LogFormatError, match="b.jsonl is not UTF-8 text"):
        read_log(b)
    c = tmp_path / "c.csv"
    c.write_text("\ufeffStep,train/frac_reward_zero_std,train/reward\n1,0.5,0.3\n", encoding="utf-8")
    assert read_log(c).rows[0]["degenerate"] == 0.5


def test_inspect_rows_missing_keys_is_an_error_not_an_empty_report(tmp_path, capsys):
    log = _jsonl(tmp_path / "metrics.jsonl", [{"starvation/acr": None}, {"starvation/acr": 0.5}])
    with pytest.raises(LogFormatError, match="no row has both a step and a finite degenerate fraction"):
        read_log(log)
    with pytest.raises(SystemExit) as e:
        cli.main(["inspect", str(log)])
    assert e.value.code == 2
    assert "no row has both" in capsys.readouterr().err


def test_inspect_warns_about_rows_that_lack_keys(tmp_path, capsys):
    rows = [{"step": i, "starvation/acr": 0.5, "reward": 0.3} for i in range(1, 5)] + [{"starvation/acr": 0.4}]
    log = _jsonl(tmp_path / "metrics.jsonl", rows)
    assert cli.main(["inspect", str(log)]) == 0
    err = capsys.readouterr().err
    assert "warning: 1 of 5 rows lack a step" in err
    assert "warning: 1 of 5 rows lack a mean reward" in err
    report = (tmp_path / "starvation" / "report.md").read_text()
    assert "**Warning:** 1 of 5 rows lack a step" in report


def test_inspect_histogram_with_a_string_is_a_clear_error(tmp_path):
    log = _jsonl(tmp_path / "metrics.jsonl",
                 [{"step": 1, "starvation/acr": 0.5, "starvation/success_hist": [1, "x", 2, 0, 1]}])
    with pytest.raises(LogFormatError, match="line 1: 'starvation/success_hist' must be a list"):
        read_log(log)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this OS")
def test_inspect_does_not_hang_on_a_fifo(tmp_path):
    fifo = tmp_path / "metrics.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(LogFormatError, match="not a regular file"):
        read_log(fifo)


def test_inspect_reports_lucky_successes_where_the_log_has_them(tmp_path):
    """Issue 39: the largest advantage per step, the share carried by groups with one success or one failure, and
    the completion that received the largest advantage, from a grpo-lab log whose answer is known; a TRL log says
    it cannot tell."""
    import json

    from grpo_lab.diagnose import capabilities, inspect_run, read_log

    rows = []
    for step, (top, near) in enumerate([(1.5, 1.0), (0.87, 0.0), (1.5, 0.46)], start=1):
        rows.append({"step": step, "reward": 0.1, "starvation/acr": 0.5, "starvation/all_fail": 0.5,
                     "starvation/all_pass": 0.0, "starvation/success_hist": [1, 1, 0, 0, 0],
                     "starvation/max_advantage": top, "starvation/near_degenerate_share": near,
                     "starvation/max_advantage_completion": {"advantage": top, "group": 1,
                                                             "group_rewards": [1.0, 0.0, 0.0, 0.0],
                                                             "completion": f"<answer>{step}</answer>"}})
    path = tmp_path / "metrics.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    report = inspect_run(path, out=tmp_path / "r").read_text()
    assert "largest advantage of any completion per step: median 1.5 over 3 logged steps; the largest, 1.5, at step 1" \
        in report
    assert "one success or one failure: 0.487" in report  # (1.0 + 0.0 + 0.46) / 3
    assert 'largest advantage (1.50; its group\'s rewards [1.0, 0.0, 0.0, 0.0]): "<answer>1</answer>"' in report
    trl = tmp_path / "trainer_state.json"
    trl.write_text(json.dumps({"log_history": [{"step": 1, "reward": 0.2, "frac_reward_zero_std": 0.5}]}))
    assert any("each completion's advantage" in c for c in capabilities(read_log(trl)))


def _lucky_row(run, step, top, near=0.5, fluke=True):
    est, seed = run.split("-seed")
    row = {"estimator": est, "seed": int(seed), "step": step, "reward": 0.1, "starvation/acr": 0.5,
           "starvation/all_fail": 0.5, "starvation/all_pass": 0.0, "starvation/success_hist": [1, 1, 0, 0, 0],
           "starvation/max_advantage": top, "starvation/near_degenerate_share": near}
    if fluke:
        row["starvation/max_advantage_completion"] = {"advantage": top, "group": 0, "group_rewards": [1, 0, 0, 0],
                                                       "completion": f"{run} {step}"}
    return row


def test_the_largest_advantage_is_a_maximum_with_its_run_and_step(tmp_path):
    """Issue 51: two seeds at one step with 3.0 and 1.0 read "largest 2.00" (a mean), a duplicated step with 7.0
    "4.25"; the largest is now a maximum, named with its run and step."""
    rows = [_lucky_row("grpo-seed0", 3, 3.0), _lucky_row("grpo-seed1", 3, 1.0), _lucky_row("grpo-seed1", 4, 0.5)]
    report = inspect_run(_jsonl(tmp_path / "metrics.jsonl", rows), out=tmp_path / "r").read_text()
    assert "the largest, 3, at run grpo-seed0, step 3" in report
    rows.append(_lucky_row("grpo-seed0", 3, 7.0))
    report = inspect_run(_jsonl(tmp_path / "metrics.jsonl", rows), out=tmp_path / "r").read_text()
    assert "the largest, 7, at run grpo-seed0, step 3" in report
    assert (tmp_path / "r" / "lucky.png").is_file() and (tmp_path / "r" / "one_success_share.png").is_file()


@pytest.mark.parametrize("field, value", [("advantage", None), ("advantage", "abc"), ("advantage", "missing"),
                                          ("group_rewards", "missing")])
def test_an_ill_typed_largest_advantage_completion_is_left_out_by_name(tmp_path, field, value):
    row = _lucky_row("grpo-seed0", 1, 1.5)
    if value == "missing":
        del row["starvation/max_advantage_completion"][field]
    else:
        row["starvation/max_advantage_completion"][field] = value
    report = inspect_run(_jsonl(tmp_path / "metrics.jsonl", [row, _lucky_row("grpo-seed0", 2, 1.0)]),
                         out=tmp_path / "r").read_text()
    assert "starvation/max_advantage_completion that is not what grpo-lab logs" in report and "line 1" in report


@pytest.mark.parametrize("value, left_out", [(2.5e5, False), (1e308, True), ("1.5", True), ([1.5], True),
                                             (True, True)])
def test_the_largest_advantage_field_is_read_as_a_number_or_named(tmp_path, value, left_out):
    """A largest advantage is a finite number no estimator exceeds on sanely scaled rewards (issue 83: 1e308 was
    shown as "the largest, 1e+308" without a word); a large but possible one is shown in a readable form."""
    report = inspect_run(_jsonl(tmp_path / "metrics.jsonl", [_lucky_row("grpo-seed0", 1, value, fluke=False),
                                                             _lucky_row("grpo-seed0", 2, 1.0, fluke=False)]),
                         out=tmp_path / "r").read_text()
    assert ("starvation/max_advantage that is not what grpo-lab logs" in report) is left_out
    if not left_out:
        assert "2.5e+05" in report and "250000.0" not in report


@pytest.mark.parametrize("share", [2.0, -0.5, "x"])
def test_a_one_success_share_outside_0_1_is_never_averaged_in(tmp_path, share):
    report = inspect_run(_jsonl(tmp_path / "metrics.jsonl", [_lucky_row("grpo-seed0", 1, 1.0, near=share),
                                                             _lucky_row("grpo-seed0", 2, 1.0, near=0.2)]),
                         out=tmp_path / "r").read_text()
    assert "starvation/near_degenerate_share that is not what grpo-lab logs" in report
    assert "one success or one failure: 0.200" in report


def test_inspect_reads_an_interrupted_comparison_from_its_run_logs(tmp_path, capsys):
    """Issue 51: a comparison with finished runs' metrics/*.jsonl and no report or metrics.jsonl yet was "holds no
    trainer_state.json ... or metrics.jsonl", naming none of the files there."""
    d = tmp_path / "cmp"
    (d / "metrics").mkdir(parents=True)
    for run in ("grpo-seed0", "sign-seed0"):
        _jsonl(d / "metrics" / f"{run}.jsonl", [_lucky_row(run, 1, 1.0), _lucky_row(run, 2, 1.2)])
    report = inspect_run(d).read_text()
    assert "per-run logs in metrics/" in report and "grpo" in report and "sign" in report
    empty = tmp_path / "empty"
    (empty / "results").mkdir(parents=True)
    with pytest.raises(LogFormatError, match="it holds: results"):
        read_log(empty)


def test_a_nan_in_a_comparison_log_is_left_out_of_its_step_not_a_crash(tmp_path):
    """Issue 51: mean_ci's NaN refusal stopped inspect on a log with a NaN acr (a regression of round four)."""
    rows = [{"estimator": m, "seed": s, "step": i, "reward": 0.1,
             "starvation/acr": float("nan") if (m, i) == ("grpo", 2) else 0.5}
            for m in ("grpo", "sign") for s in (0, 1) for i in (1, 2, 3)]
    report = inspect_run(_jsonl(tmp_path / "metrics.jsonl", rows), out=tmp_path / "r").read_text()
    assert "grpo" in report and (tmp_path / "r" / "degenerate.png").is_file()
