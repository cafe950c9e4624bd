"""Issue 84: the decode loop on the trained model itself (grpo_lab.decoding, generation="loop"). The canary: the
log-probs of the completions it samples equal a forward pass of the same model (a LoRA adapter included) within
float32 noise; greedy decoding gives model.generate's tokens; the first token's draws follow the model's
distribution; a loop that decoded another copy of the weights fails its canary; and a run records its rollout
path, which a comparison will not mix."""

import copy

import numpy as np
import pytest
import torch

from grpo_lab.decoding import DecodeLoop, supports
from grpo_lab.generation import LoopEngine, StaleWeights, get_engine


class _Tok:
    """The little a tokenizer needs to give the loop: its special ids (token ids are used as they are)."""
    eos_token_id, pad_token_id = 1, 0


def tiny_llama(lora: bool = True, seed: int = 0):
    """A small random Llama (2 layers, vocab 64) with a LoRA adapter whose B is not zero, as after training."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, max_position_embeddings=128, eos_token_id=1, pad_token_id=0)
    model = LlamaForCausalLM(cfg).float()
    if not lora:
        return model
    from peft import LoraConfig, get_peft_model

    model = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj", "up_proj"]))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.2)
    return model


def forward_logprobs(model, prompt, completion):
    model.eval()
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([prompt + completion])).logits[0].float()
    return torch.log_softmax(logits[len(prompt) - 1:-1], -1).gather(1, torch.tensor(completion)[:, None]).squeeze(1)


PROMPTS = [[5, 6, 7], [9, 10, 11, 12, 13], [5, 6, 7], [20], [9, 10, 11, 12, 13], [5, 6, 7]]  # repeats, unequal


@pytest.mark.parametrize("lora", [True, False])
def test_sampled_completions_log_probs_equal_a_forward_of_the_same_model(lora):
    """Padding (unequal prompts), repeated prompts (one prefill shared) and a LoRA adapter: every sampled token's
    log-prob is the model's own within 1e-4 nats."""
    model = tiny_llama(lora)
    loop = DecodeLoop(model, _Tok())
    comp, logps, cut = loop(PROMPTS, 12, generator=torch.Generator().manual_seed(0))
    assert len(comp) == len(PROMPTS) and any(len(c) > 1 for c in comp)
    worst = max(float((forward_logprobs(model, p, c) - torch.tensor(lp)).abs().max())
                for p, c, lp in zip(PROMPTS, comp, logps))
    assert worst < 1e-4, worst
    assert all(c[-1] == 1 or t for c, t in zip(comp, cut))  # each stops at end-of-sequence or is cut at the limit
    assert all(len(c) == 12 for c, t in zip(comp, cut) if t)


def test_greedy_decoding_gives_model_generates_tokens():
    model = tiny_llama()
    model.eval()
    comp, _, _ = DecodeLoop(model, _Tok())(PROMPTS, 10, temperature=0)
    for p, c in zip(PROMPTS, comp):
        with torch.no_grad():
            ref = model.generate(input_ids=torch.tensor([p]), attention_mask=torch.ones(1, len(p), dtype=torch.long),
                                 do_sample=False, max_new_tokens=10, eos_token_id=1, pad_token_id=0)[0, len(p):]
        ref = ref.tolist()
        ref = ref[:ref.index(1) + 1] if 1 in ref else ref
        assert c == ref, (p, c, ref)


def test_the_first_tokens_draws_follow_the_models_distribution():
    """2,000 draws of the first token for one prompt against the model's own probabilities: a chi-square test of
    the counts (p above 0.001), so the sampler is the categorical distribution, not only its log-probs."""
    from scipy.stats import chisquare

    model = tiny_llama()
    loop = DecodeLoop(model, _Tok())
    n = 2000
    comp, _, _ = loop([[5, 6, 7]] * n, 1, generator=torch.Generator().manual_seed(1))
    counts = np.bincount([c[0] for c in comp], minlength=64)
    model.eval()
    with torch.no_grad():
        probs = torch.softmax(model(input_ids=torch.tensor([[5, 6, 7]])).logits[0, -1].float(), -1).numpy()
    keep = probs * n >= 5  # the chi-square approximation needs expected counts of 5 or more (the rest pooled)
    expected, observed = probs[keep] * n, counts[keep]
    if probs[~keep].sum() * n >= 5:
        expected, observed = np.append(expected, probs[~keep].sum() * n), np.append(observed, counts[~keep].sum())
    assert chisquare(observed, expected * observed.sum() / expected.sum()).pvalue > 1e-3


def test_the_canary_catches_a_loop_that_decodes_another_copy_of_the_weights():
    """A loop over a stale copy (as if the weights had been handed over once and then not again) fails the canary
    after the policy moves; the loop over the trained model itself passes it."""

    class Tok(_Tok):
        chat_template = None

        def __call__(self, text, add_special_tokens=False):
            return {"input_ids": [2 + (ord(ch) % 60) for ch in text][:40]}

    model = tiny_llama()
    engine = LoopEngine()
    assert engine.check(model, Tok()) < 1e-4
    stale = DecodeLoop(copy.deepcopy(model), Tok())
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.add_(0.5)
    with pytest.raises(StaleWeights, match="not sampling from the policy being trained"):
        engine.check(model, Tok(), stale)
    assert engine.check(model, Tok()) < 1e-4


def test_an_architecture_the_loop_does_not_know_is_refused_by_name():
    from transformers import GPT2Config, GPT2LMHeadModel

    from grpo_lab.policy import load_tiny_lm

    model = GPT2LMHeadModel(GPT2Config(n_layer=1, n_head=2, n_embd=16, vocab_size=32))
    assert "GPT2LMHeadModel is not one of the architectures the decode loop runs" in supports(model)
    assert supports(load_tiny_lm()[0]) is None  # the tiny LM is a Qwen2: the loop decodes it
    with pytest.raises(ValueError, match="generation='loop' cannot decode this model"):
        DecodeLoop(model, _Tok())
    assert get_engine("loop").unavailable("tabular") and get_engine("loop").unavailable("smollm2") is None


def test_a_rollout_paths_runs_are_not_pooled_with_another_paths():
    """A result records its rollout path (config.generation and the engine's record); a comparison or a study reads
    a run of another path as another setting and leaves it out, as for the evaluation dtype."""
    from grpo_lab.compare import result_problem, shared_settings
    from grpo_lab.config import RunConfig

    loop_cfg = RunConfig(policy="smollm2", lora_r=16, generation="loop", eval_problems=1)
    res = {"config": {**shared_settings(loop_cfg), "estimator": "grpo", "seed": 0}}
    why = result_problem({**res, "history": [{"reward": 0.5, "step": 1}], "train_seconds": 1.0,
                          "eval": {"n_samples": 2, "correct": [1], "greedy": 0.0, "greedy_by_level": {}}},
                         "grpo", 0, shared_settings(RunConfig(policy="smollm2", lora_r=16, generation="vllm",
                                                              eval_problems=1)))
    assert why and "generation: 'loop' != 'vllm'" in why


def test_a_run_trains_with_the_loop_and_records_its_path(tmp_path):
    """The tiny LM (a Qwen2) trained two steps with generation="loop": TRL's rollouts came from the loop (its canary
    logged at every step, within float32 noise), the result records the engine, and its evaluation sampled with it."""
    from grpo_lab.config import RunConfig
    from grpo_lab.runner import train

    cfg = RunConfig(policy="tiny-lm", steps=2, prompts_per_step=2, group_size=4, eval_problems=4, eval_samples=2,
                    train_problems=16, generation="loop")
    res = train(cfg, tmp_path, evaluate_after=True)
    assert res["generation"]["engine"] == "loop" and res["generation"]["syncs"] >= 2
    canary = [h["generation/canary_logp_diff"] for h in res["history"]]
    assert len(canary) == 2 and max(canary) < 1e-3
    assert res["eval"]["sampling"]["engine"] == "loop" and len(res["eval"]["correct"]) == 4
