"""Issue 18, second round of bad input: each reproduction of the issue gives the right result or a clear error."""

import json
import math

import numpy as np
import pytest
import torch

import grpo_lab as gl
from grpo_lab import cli
from grpo_lab.config import RunConfig
from grpo_lab.diagnose import LogFormatError, beta_degeneracy, read_log
from grpo_lab.passk import maj_at_k, pass_at_k


def test_a_negative_learning_rate_in_scientific_notation_is_named(tmp_path, capsys):
    with pytest.raises(SystemExit):
        cli.main(["compare", "--lr", "-1e-4", "--out", str(tmp_path)])
    assert "learning rate must be a positive number, got -0.0001" in capsys.readouterr().err


@pytest.mark.parametrize("kw", [dict(learning_rate=True), dict(learning_rate=math.inf), dict(max_grad_norm=False),
                                dict(max_grad_norm=-1.0)])
def test_run_config_refuses_bools_and_non_positive_numbers(kw):
    with pytest.raises(ValueError, match="must be a positive number"):
        RunConfig(**kw).validate()


@pytest.mark.parametrize("tol", [0, -1.0, math.nan])
def test_collapse_rate_refuses_a_tolerance_that_is_not_positive(tol):
    with pytest.raises(ValueError, match="tol must be"):
        gl.collapse_rate(torch.tensor([0.0, 1, 0, 0]), 4, tol=tol)


def test_signal_kept_names_a_misspelt_option():
    with pytest.raises(ValueError, match="'avpso', which is not among the methods"):
        gl.signal_kept(torch.tensor([0.0, 1, 0, 0]), 4, avpso={"threshold": 0.3})


@pytest.mark.parametrize("out,match", [(lambda r: torch.as_tensor(r) > 0, "torch.bool"),
                                       (lambda r: torch.as_tensor(r) * 1j, "complex"),
                                       (lambda r: None, "returned None"),
                                       (lambda r: "nope", "not numbers")])
def test_a_registered_estimator_must_return_real_numbers(out, match):
    name = f"bad_{abs(hash(match)) % 10_000}"
    gl.register_estimator(name, lambda r, G: out(r))
    with pytest.raises(ValueError, match=match):
        gl.compute_advantages(torch.tensor([0.0, 1, 0, 0]), 4, name)


def test_pass_at_k_with_huge_counts():
    assert pass_at_k(2 ** 40, 2 ** 39, 1) == pytest.approx(0.5, abs=1e-12)
    assert pass_at_k(10 ** 6, 5 * 10 ** 5, 3) == pytest.approx(1 - 0.5 ** 3, abs=1e-6)
    # the many-correct route agrees with the explicit product where both apply
    n, c, k = 20_000, 5_000, 3
    exact = 1 - math.comb(n - c, k) / math.comb(n, k)
    assert pass_at_k(n, c, k) == pytest.approx(exact, rel=1e-12)
    for n in (1e20, 2 ** 63):
        with pytest.raises(ValueError, match="too large to be a count"):
            pass_at_k(n, 1, 1)


def test_maj_at_k_ties_numbers_and_answer_fields():
    assert maj_at_k([["72", "71"]], ["72"], 2).tolist() == [0.5]  # a tie: the chance a fair tie-break is right
    assert maj_at_k([["71", "72"]], ["72"], 2).tolist() == [0.5]  # ... whatever the order
    assert maj_at_k([["72", "72", "5"]], [np.int64(72)], 3).tolist() == [1.0]
    assert maj_at_k([["1,000", "7"]], [1000], 1, n_resamples=400).item() == pytest.approx(0.5, abs=0.1)
    assert maj_at_k([["72.0"]], [72], 1).tolist() == [1.0]
    with pytest.raises(ValueError, match="whole GSM8K answer field"):
        maj_at_k([["72"]], ["She has 8 * 9 = 72 apples.\n#### 72"], 1)


def test_beta_degeneracy_at_a_huge_group_size_is_fast_and_continuous():
    mu, kappa = 0.3, 2.0
    small = beta_degeneracy(mu, kappa, 1000)
    big = beta_degeneracy(mu, kappa, 1001)  # the log-gamma route
    assert 0 < big < small and big == pytest.approx(small, rel=1e-2)
    assert 0 < beta_degeneracy(mu, kappa, 10 ** 9) < 1


def _trl_log(tmp_path, rows):
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps({"log_history": rows}))
    return path


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


def test_an_edited_config_names_the_changed_setting(tmp_path):
    from grpo_lab.compare import read_config, write_config

    write_config(tmp_path, ["grpo"], [0], RunConfig(policy="tabular", steps=5))
    conf = json.loads((tmp_path / "config.json").read_text())
    conf["base"]["learning_rate"] = 0.5
    (tmp_path / "config.json").write_text(json.dumps(conf))
    with pytest.raises(ValueError, match=r"settings changed since the start \(start value != now\): "
                                         r"learning_rate: 0.0001 != 0.5"):
        read_config(tmp_path)


@pytest.mark.parametrize("method", ["drgrpo", "rloo"])
def test_advantages_that_overflow_the_dtype_are_an_error_not_inf(method):
    half = torch.tensor([65504.0, -65504, -65504, -65504], dtype=torch.half)
    with pytest.raises(ValueError, match="exceed the range of torch.float16"):
        gl.compute_advantages(half, 4, method)
    big = torch.tensor([3e38, -3e38, 3e38, -3e38])
    if method == "rloo":
        with pytest.raises(ValueError, match="exceed the range of torch.float32"):
            gl.compute_advantages(big, 4, method)
    wide = gl.compute_advantages(big.double(), 4, method)  # the remedy the message names
    assert torch.isfinite(wide).all()


def test_a_degenerate_group_is_zero_even_when_eps_underflows():
    out = gl.compute_advantages(torch.ones(4), 4, "grpo", eps=1e-50)  # 1e-50 is 0 in float32
    assert out.tolist() == [0.0] * 4


def test_numpy_references_and_overlong_numbers():
    from grpo_lab.tasks.gsm8k import is_correct

    assert is_correct("#### 72", np.float64(72)) and is_correct("#### 72", np.int64(72))
    assert is_correct("#### 0.1", np.float32(0.5)) is False
    with pytest.raises(ValueError, match="more than 400 digits"):
        is_correct("#### 72", "1" * 401)


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
