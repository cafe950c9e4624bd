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


@pytest.mark.parametrize("kw,msg", [
    ({"temperature": -1.0}, "temperature must be >= 0"), ({"temperature": -0.001}, "temperature must be >= 0"),
    ({"temperature": float("nan")}, "temperature must be finite"), ({"temperature": 1e-40}, "at least 0.001"),
    ({"temperature": 1e-45}, "at least 0.001"), ({"max_new_tokens": 0}, "max_new_tokens must be >= 1"),
    ({"max_new_tokens": -1}, "max_new_tokens must be >= 1"), ({"top_p": 0.0}, "top_p must be > 0"),
    ({"top_k": -2}, "top_k must be >= 0")])
def test_the_decode_loop_refuses_arguments_no_sampler_could_mean(kw, msg):
    from grpo_lab.decoding import check_sampling

    args = {"max_new_tokens": 8, "temperature": 1.0, "top_k": 0, "top_p": 1.0, **kw}
    with pytest.raises(ValueError, match=msg):
        check_sampling(**args)
    check_sampling(8, 0.0, 0, 1.0)  # greedy
    check_sampling(8, 0.7, 50, 0.9)


# --- 6. exercise checks: every correct answer passes, every wrong one fails with expected beside actual, and no
# check raises from its own code --------------------------------------------------------------------------------

def _hist(r, G):
    out = [0] * (G + 1)
    for i in range(0, len(r), G):
        out[int(sum(r[i:i + G]))] += 1
    return out


def test_the_success_histogram_check_neither_truncates_nor_crashes():
    from grpo_lab import checks

    checks.check_success_hist(lambda r, G: [float(x) for x in _hist(r.tolist(), G)])  # floats of whole numbers
    checks.check_success_hist(lambda r, G: [x - 1e-7 if x else x for x in _hist(r.tolist(), G)])  # 0.9999999 is 1
    with pytest.raises(AssertionError, match="should be .* your function gave"):
        checks.check_success_hist(lambda r, G: [x + 0.4 for x in _hist(r.tolist(), G)])  # every count + 0.4
    with pytest.raises(AssertionError, match="got NaN, not a number"):
        checks.check_success_hist(lambda r, G: [float("nan")] * (G + 1))


def test_the_policy_gradient_check_passes_a_correct_float32_answer():
    import torch

    from grpo_lab import checks
    from grpo_lab.checks import policy_gradient

    checks.check_policy_gradient(lambda l, a, adv: policy_gradient(l, a, adv).float())
    with pytest.raises(AssertionError, match="should be"):
        checks.check_policy_gradient(lambda l, a, adv: policy_gradient(l, a, adv).float() * 1.01)
    with pytest.raises(AssertionError, match="real numbers"):
        checks.check_policy_gradient(lambda l, a, adv: torch.zeros(l.shape, dtype=torch.long))


def test_the_real_and_iid_check_names_a_single_number_instead_of_a_type_error():
    from grpo_lab import checks

    with pytest.raises(AssertionError, match=r"return two numbers, \(real, iid\)"):
        checks.check_real_and_iid(lambda p, G: 0.5)


def test_the_study_plan_check_names_exercise_15_2():
    from grpo_lab import checks

    with pytest.raises(AssertionError, match="exercise 15.2"):
        checks.check_study_plan(lambda: "")


def test_a_group_filter_mask_per_completion_is_named_as_such():
    from grpo_lab import checks

    with pytest.raises(AssertionError, match="table .* reduce each group's row to one bool"):
        checks.check_group_filter(lambda r, G: (r.reshape(-1, G) != r.reshape(-1, G)[:, :1]))


def test_a_runs_engine_record_is_its_own_share_of_the_process_counters(monkeypatch):
    """Issue 105, cause 3: the engine object is shared by every run of a process; a run records the hand-overs it
    made, not the process's total."""
    from types import SimpleNamespace

    from grpo_lab import generation, runner

    engine = SimpleNamespace(replaces_rollouts=True, syncs=6, sync_seconds=0.3, last_canary=1e-6,
                             describe=lambda: {"engine": "loop"})
    monkeypatch.setattr(generation, "get_engine", lambda name: engine)
    before = runner._engine_counters("loop")
    engine.syncs, engine.sync_seconds = 8, 0.4  # this run: two hand-overs, 0.1 s
    rec = runner._generation_record("loop", before)
    assert rec["syncs"] == 2 and rec["sync_seconds"] == pytest.approx(0.1)
    assert runner._generation_record("loop")["syncs"] == 8  # without a start: the process's count, as before


def test_a_run_that_sampled_with_another_engine_than_its_settings_say_is_named(tmp_path):
    """Issue 105, cause 8: a run whose generation record says vllm while its config says transformers was pooled
    with its arm without a word; it is now a detected deviation naming the file."""
    import json

    from grpo_lab.study import Study

    from test_study import make_study

    plan = make_study(tmp_path, means={"grpo": 0.4, "sign": 0.6})
    res = sorted((tmp_path / "runs" / "base" / "results").glob("grpo-seed*.json"))[0]
    r = json.loads(res.read_text())
    assert not any("records sampling with" in x for x in Study.load(plan).detected_deviations())
    r["generation"] = {"engine": "vllm", "version": "0.x"}
    res.write_text(json.dumps(r))
    said = [x for x in Study.load(plan).detected_deviations() if "records sampling with vllm" in x]
    assert len(said) == 1 and "grpo seed 0" in said[0] and "generation = 'transformers'" in said[0]


def test_a_damaged_start_is_said_to_be_damaged_not_missing(tmp_path):
    from grpo_lab.study import Study, headline

    from test_study import make_study

    plan = make_study(tmp_path, means={"grpo": 0.4, "sign": 0.6})
    start = tmp_path / "runs" / "base" / "start.json"
    start.write_text("{ not json")
    text = headline(Study.load(plan))
    assert "runs/base/start.json damaged (left out, named in the deviations)" in text and "missing" not in text
    start.unlink()
    assert "runs/base/start.json missing" in headline(Study.load(plan))


def test_study_status_refuses_what_study_run_refuses(tmp_path):
    """Issue 105, cause 8: ``generation = "loop"`` with the tabular policy was accepted by ``study status`` and
    ``study report`` (which validate without this machine's engines) and refused only by ``study run``."""
    from grpo_lab.config import RunConfig
    from grpo_lab.study import PlanError, read_plan

    from test_study import make_study

    with pytest.raises(ValueError, match="--generation loop cannot run here: the tabular policy"):
        RunConfig(policy="tabular", generation="loop").validate(here=False)
    with pytest.raises(ValueError, match="--generation vllm cannot run here: the tiny-lm policy"):
        RunConfig(policy="tiny-lm", generation="vllm").validate(here=False)
    plan = make_study(tmp_path)
    plan.write_text(plan.read_text().replace("[base]\n", '[base]\ngeneration = "vllm"\n', 1))
    with pytest.raises(PlanError, match="cannot run here: the tiny-lm policy"):
        read_plan(plan)
