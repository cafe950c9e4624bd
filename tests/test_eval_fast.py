"""Issue 61: evaluation at the machine's speed. Each distinct problem sampled once with the per-draw counts kept,
the evaluation's dtype chosen by the CPU's flags and recorded, a comparison or study across evaluation dtypes
refused by name, and one vLLM engine per dtype kept across runs with the adapter evaluated being the one handed
over (the field's silent failure: a LoRA ignored at generation)."""

import json
import os
from dataclasses import replace

import pytest
import torch

from grpo_lab.io import check_eval_dtypes, eval_dtype_of
from grpo_lab.config import RunConfig, smollm2_study
from grpo_lab.runner import evaluate, resolve_eval_dtype

from test_generation import HAVE_VLLM, needs_vllm
from test_study import make_study, result

os.environ.setdefault("GRPO_LAB_VLLM_EAGER", "1")


# ------------------------------------------------------------------------------------------ distinct problems

@pytest.fixture(scope="module")
def tiny():
    from grpo_lab.policy import load_tiny_lm
    from grpo_lab.tasks import make_problems

    model, tok = load_tiny_lm()
    problems = make_problems("arithmetic", 60, seed=3, split="test")
    return model, tok, problems


def test_distinct_samples_each_problem_once_and_keeps_one_count_per_draw(tiny):
    model, tok, problems = tiny
    distinct = len({p.prompt for p in problems})
    assert distinct < len(problems)  # the draws repeat problems, or the test tests nothing
    ev = evaluate(model, tok, problems, n_samples=4, seed=2, distinct=True)
    assert len(ev["correct"]) == len(problems) and ev["levels"] == [p.level for p in problems]
    rec = dict(ev["sampling"])
    draws, cut = rec.pop("problem_of_draw"), rec.pop("truncated")
    assert rec == dict(engine="transformers", dtype="float32", distinct=True, prompts_sampled=distinct)
    assert 0 <= cut <= 1  # issue 80: the share of sampled completions cut at max_new_tokens
    first, index = {}, {}
    for p, c, i in zip(problems, ev["correct"], draws):  # every draw of a problem carries that problem's one count
        assert first.setdefault(p.prompt, c) == c
        assert index.setdefault(p.prompt, i) == i  # and names that problem (issue 80: the start's error by problem)
    assert sorted(set(draws)) == list(range(distinct))
    plain = evaluate(model, tok, problems, n_samples=4, seed=2)
    assert plain["sampling"]["distinct"] is False and plain["sampling"]["prompts_sampled"] == len(problems)


def test_without_distinct_the_evaluation_is_what_it_was(tiny):
    """The default path samples exactly as before issue 61 (the same calls, the same counts): study 3's runs stay
    comparable with runs evaluated today."""
    from grpo_lab.generation import get_engine
    from grpo_lab.tasks import grade

    model, tok, problems = tiny
    ev = evaluate(model, tok, problems, n_samples=4, seed=2)
    sample = get_engine("transformers").sampler(model, tok, batch_size=256)
    prompts = [p.prompt for p in problems]
    sample(prompts, 1, temperature=0, max_new_tokens=6)
    counts = [int(sum(grade(c, p) for c in cs)) for cs, p in zip(sample(prompts, 4, seed=2, max_new_tokens=6),
                                                                     problems)]
    assert ev["correct"] == counts


# ------------------------------------------------------------------------------------------ the evaluation's dtype

def test_eval_dtype_follows_the_cpu_flags_and_says_why(monkeypatch):
    import grpo_lab.policy as policy

    cfg = smollm2_study(generation="vllm")
    assert resolve_eval_dtype(cfg)[0] is None  # unset: as the rollouts, as before
    assert resolve_eval_dtype(replace(cfg, generation_dtype="bfloat16"))[0] == "bfloat16"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(policy, "cpu_has_bf16", lambda: True)
    assert resolve_eval_dtype(replace(cfg, eval_dtype="auto"))[0] == "bfloat16"
    monkeypatch.setattr(policy, "cpu_has_bf16", lambda: False)
    dtype, why = resolve_eval_dtype(replace(cfg, eval_dtype="auto"))
    assert dtype == "float32" and "eval_dtype=auto" in why and "no native bfloat16" in why
    assert resolve_eval_dtype(replace(cfg, eval_dtype="float32"))[0] == "float32"


@pytest.mark.parametrize("change, message", [
    (dict(eval_dtype="bf16"), "eval_dtype must be auto, float32 or bfloat16"),
    (dict(eval_dtype="auto", generation="transformers"), "eval_dtype=auto applies to --generation vllm"),
    (dict(eval_distinct="yes"), "eval_distinct"),
])
def test_bad_evaluation_settings_are_named(change, message):
    cfg = replace(smollm2_study(generation="vllm"), **change)
    with pytest.raises(ValueError, match=message):
        cfg.validate(here=False)


def test_a_result_from_before_reads_as_its_rollouts_dtype():
    assert eval_dtype_of({"config": {"policy": "smollm2", "generation_dtype": None}, "dtype": "float32",
                          "eval": {}}) == "float32"
    assert eval_dtype_of({"config": {"policy": "smollm2", "generation_dtype": "bfloat16"}, "dtype": "float32",
                          "eval": {}}) == "bfloat16"
    assert eval_dtype_of({"config": {}, "eval": {"sampling": {"dtype": "bfloat16"}}, "dtype": "float32"}) == "bfloat16"
    assert eval_dtype_of({"config": {"policy": "tabular"}, "eval": {}}) is None
    assert eval_dtype_of({"dtype": "float32", "generation": {"dtype": "bfloat16"}}, start=True) == "bfloat16"


def test_mixed_evaluation_dtypes_are_refused_naming_the_runs():
    check_eval_dtypes({"a": "float32", "b": "float32", "c": None})
    with pytest.raises(ValueError, match=r"mixes evaluation dtypes \(bfloat16: b; float32: a, c\)"):
        check_eval_dtypes({"a": "float32", "b": "bfloat16", "c": "float32"})


def test_a_study_whose_runs_were_evaluated_in_two_dtypes_is_refused_by_name(tmp_path):
    from grpo_lab.cli import main
    from grpo_lab.study import Study

    plan = make_study(tmp_path)
    for seed, dtype in ((0, "float32"), (1, "bfloat16")):
        path = result(plan, "grpo", seed)
        data = json.loads(path.read_text())
        data["eval"]["sampling"] = dict(engine="vllm", dtype=dtype, distinct=False, prompts_sampled=1)
        path.write_text(json.dumps(data))
        if seed == 0:
            Study.load(plan)  # one dtype (the others unrecorded): read
    with pytest.raises(ValueError, match=r"mixes evaluation dtypes \(bfloat16: runs/base/results/grpo-seed1.json;"):
        Study.load(plan)
    with pytest.raises(SystemExit) as e:
        main(["study", "report", str(plan)])
    assert e.value.code == 2


def test_a_comparison_whose_runs_were_evaluated_in_two_dtypes_is_not_reported(tmp_path):
    from grpo_lab.compare import load_results, read_config

    plan = make_study(tmp_path)
    out = plan.parent / "runs" / "base"
    conf = read_config(out)
    load_results(out, conf)
    for seed, dtype in ((0, "bfloat16"), (1, "float32")):
        path = result(plan, "grpo", seed)
        data = json.loads(path.read_text())
        data["eval"]["sampling"] = dict(engine="vllm", dtype=dtype, distinct=False, prompts_sampled=1)
        path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"bfloat16: grpo seed 0"):
        load_results(out, conf)


# ------------------------------------------------------------------------------------------ engines kept per dtype

def _perturbed(seed):
    from grpo_lab.runner import policy_adapter

    cfg = smollm2_study(generation="vllm")
    model, tok, _ = policy_adapter(cfg).load(cfg)
    torch.manual_seed(seed)
    with torch.no_grad():
        for n, p in model.named_parameters():
            if "lora_B" in n:
                p.normal_(0, 0.02)
    return model, tok


@needs_vllm
def test_an_engine_per_dtype_is_kept_and_each_samples_the_model_just_handed_over():
    """A worker trains in float32 and evaluates in bfloat16: both engines are kept (not rebuilt for each run), and
    the bfloat16 one evaluates the run just trained, not the previous run's adapter that it held."""
    from grpo_lab.generation import get_engine, policy_logprobs, probe_ids

    engine = get_engine("vllm")
    one, tok = _perturbed(1)
    two, _ = _perturbed(2)
    engine.load_weights(one, tok)
    f32 = engine.llm
    engine.load_weights(one, tok, dtype="bfloat16")
    bf16 = engine.llm
    assert engine.dtype == "bfloat16" and bf16 is not f32
    engine.load_weights(two, tok)  # the next run trains in float32: the same engine as before
    assert engine.llm is f32 and engine.dtype == "float32"
    diff = engine.load_weights(two, tok, dtype="bfloat16")  # and is evaluated in bfloat16
    assert engine.llm is bf16 and diff <= 1.0
    ids = probe_ids(tok)
    got = engine.probe_logprobs(two, ids)
    to_two = float((got - policy_logprobs(two, ids)).abs().mean())
    to_one = float((got - policy_logprobs(one, ids)).abs().mean())
    assert to_two < to_one / 2, (to_two, to_one)  # the adapter evaluated is the one just handed over
    engine.close()
    assert engine.llm is None and not engine._parked
