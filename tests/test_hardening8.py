"""Issue 105 (round eight): values that are finite but impossible, a log step missing its value, and an unknown CPU
read as unknown. Each test fails on the code before the fix."""

import pytest

from grpo_lab import policy
from grpo_lab.compare import FLOAT32_MAX, MAX_RUN_SECONDS, result_problems
from grpo_lab.study.measures import parse_measure


def _result(**over) -> dict:
    res = {"config": {"task": "arithmetic"}, "train_seconds": 60.0, "eval_seconds": 30.0,
           "history": [{"step": 1, "loss": 0.1, "reward": 0.5, "grad_norm": 0.3},
                       {"step": 2, "loss": 0.2, "reward": 0.25, "grad_norm": 0.4}],
           "eval": {"greedy": 0.5, "n_samples": 4, "correct": [1, 2], "pass_at_k": {"1": 0.375}}}
    res.update(over)
    return res


@pytest.mark.parametrize("key", ["train_seconds", "eval_seconds"])
def test_a_run_time_beyond_a_year_is_damage_not_a_time(key):
    assert result_problems(_result(**{key: 1e300})) == f"{key} is 1e+300, more than a year: not a run's time"
    assert "more than a year" not in str(result_problems(_result(**{key: MAX_RUN_SECONDS / 2})))


def test_a_logged_number_beyond_float32_is_damage():
    res = _result()
    res["history"][1]["grad_norm"] = 1e300
    assert result_problems(res) == "history step 1 has grad_norm 1e+300, beyond any float32 value (damaged?)"
    res["history"][1]["grad_norm"] = FLOAT32_MAX / 10  # large, but a float32 step could log it
    assert "float32" not in str(result_problems(res))


def test_a_step_that_logged_its_loss_but_not_the_measure_is_named_not_averaged_over():
    """Round seven's regression: deleting ``reward`` from one step read the run's training reward over the other
    steps. Now the step is named; a history where every step has it reads as before."""
    m = parse_measure("reward", {}, "test")
    res = _result()
    assert m.of(res) == pytest.approx(0.375)
    del res["history"][1]["reward"]
    with pytest.raises(ValueError, match="reward is missing at step 2 .* which logged it at 1 other step"):
        m.of(res)
    res["history"].append({"step": 3, "train_runtime": 10.0})  # a summary row (no loss) is not a training step
    res["history"][1]["reward"] = 0.25
    assert m.of(res) == pytest.approx(0.375)


@pytest.mark.parametrize("text", ["processor\t: 0\nmodel name\t: Some CPU\n",
                                  "processor\t: 0\nisa\t\t: rv64imafdc\nmodel name\t: A RISC-V CPU\n"])
def test_a_cpuinfo_without_flags_is_unknown_not_a_cpu_without_avx2_or_bf16(monkeypatch, text):
    monkeypatch.setattr(policy, "_cpuinfo", lambda: text)
    assert policy.cpu_flags() is None and policy.cpu_has_bf16() is None
    desc = policy.cpu_description()
    assert "flags unknown" in desc and "no AVX2" not in desc and "no bf16" not in desc
    from grpo_lab.runner import train_precision

    monkeypatch.delenv("GRPO_LAB_CPU_BF16", raising=False)
    on, why = train_precision(cuda=False)
    assert on is False and "emulated" not in why and "can detect" in why


def test_a_cpuinfo_with_flags_still_reads_them(monkeypatch):
    monkeypatch.setattr(policy, "_cpuinfo", lambda: "model name\t: X\nflags\t\t: fpu avx2 avx512f amx_bf16\n")
    assert policy.cpu_has_bf16() is True and policy.cpu_description() == "X (AVX-512, bf16 units)"
    monkeypatch.setattr(policy, "_cpuinfo", lambda: "model name\t: Y\nflags\t\t: fpu avx2\n")
    assert policy.cpu_has_bf16() is False and policy.cpu_description() == "Y (AVX2, no bf16 units)"
