"""grpo_lab.trl: the trainer subclass really uses our advantages and really changes the gradient."""

import pytest
import torch
from datasets import Dataset
from trl import GRPOConfig

from grpo_lab import compute_advantages
from grpo_lab.policy import char_tokenizer, tiny_causal_lm
from grpo_lab.trl import trainer_class
from conftest import USE_CPU

G = 4


def run(tmp_path, estimator, rewards_fn, steps=1):
    tok = char_tokenizer()
    ds = Dataset.from_dict({"prompt": [f"{i}+{i}=" for i in range(8)]})
    args = GRPOConfig(output_dir=str(tmp_path), per_device_train_batch_size=8, num_generations=G,
                      max_completion_length=4, max_steps=steps, learning_rate=1e-3, logging_steps=1,
                      report_to="none", use_cpu=USE_CPU, save_strategy="no", seed=0)
    Trainer = trainer_class()
    trainer = Trainer(model=tiny_causal_lm(tok), args=args, reward_funcs=rewards_fn, train_dataset=ds,
                      processing_class=tok, estimator=estimator)
    trainer.train()
    return trainer


def all_fail(prompts, completions, **kwargs):
    return [0.0] * len(completions)


def test_all_fail_batch_grpo_has_zero_gradient_sign_does_not(tmp_path):
    grpo = run(tmp_path / "g", "grpo", all_fail)
    assert grpo.state.log_history[0]["grad_norm"] == 0
    sign = run(tmp_path / "s", "sign", all_fail)
    assert torch.equal(sign.last_advantages, -torch.ones(8))
    assert sign.state.log_history[0]["grad_norm"] > 0
    assert list(sign._logs["advantages"])[-8:] == [-1.0] * 8  # the logged table shows what was used


@pytest.mark.parametrize("estimator", ["rloo", "avspo_code", "drgrpo"])
def test_advantages_are_the_estimators(tmp_path, estimator):
    pattern = iter([[1, 0, 0, 0, 1, 1, 1, 1]])

    def scripted(prompts, completions, **kwargs):
        return next(pattern)

    tr = run(tmp_path, estimator, scripted)
    torch.testing.assert_close(tr.last_advantages, compute_advantages(torch.tensor([1., 0, 0, 0, 1, 1, 1, 1]), G,
                                                                      estimator))


def test_avspo_in_the_trainer_carries_its_controller_across_steps(tmp_path):
    """Issue 59's canary: the paper's AVSPO inside the trainer is stateful (its ACR threshold adapts between
    batches). A trainer that rebuilt the controller each step, or dropped it, would train every batch at the
    starting threshold and silently be another method: the controller must see every batch, in order, and the
    advantages used must be avspo's at the threshold the controller held for that batch."""
    from grpo_lab.advantages import avspo

    batches = [[0, 0, 0, 0, 1, 0, 0, 0], [0, 0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 0, 1, 1, 1, 1]]
    pattern = iter(batches)

    def scripted(prompts, completions, **kwargs):
        return [float(x) for x in next(pattern)]

    tr = run(tmp_path, "avspo", scripted, steps=3)
    ctl = tr.estimator_options["controller"]
    assert [round(a, 6) for a, *_ in ctl.history] == [0.5, 1.0, 1.0]  # one entry per batch, in order
    assert [active for _, _, active, _ in ctl.history] == [False, True, True]  # ACR 0.5 is not above 0.5
    assert ctl.history[2][1] == pytest.approx(0.9 * 0.5 + 0.1 * 1.0)  # the threshold moved after batch 2
    used = ctl.history[2][1]
    expect = avspo(torch.tensor(batches[2], dtype=torch.float32), G, threshold=used)
    torch.testing.assert_close(tr.last_advantages, expect.reshape(tr.last_advantages.shape))
    assert bool((tr.last_advantages != 0).all())  # the all-fail group learns: the treatment took
    logged = [h for h in tr.state.log_history if "avspo/active" in h]  # the gate reaches the run's log, per step
    assert [h["avspo/active"] for h in logged] == [0.0, 1.0, 1.0] and [h["avspo/k"] for h in logged] == [0, 4, 4]
    assert logged[2]["avspo/threshold"] == pytest.approx(0.55)
    from grpo_lab.runner import _history  # a run's result keeps them (a smoke on SmolLM2 found them dropped)

    kept = _history(tr.state.log_history)
    assert [h["avspo/k"] for h in kept] == [0, 4, 4]


def test_unknown_estimator_is_refused():
    with pytest.raises(ValueError, match="unknown advantage estimator 'ppo'"):
        trainer_class()(model=None, estimator="ppo")


def test_starvation_callback_matches_grpo_lab_starvation(tmp_path):
    import json

    from grpo_lab.starvation import collapse_rate
    from grpo_lab.tasks import Problem, signatures
    from grpo_lab.trl import StarvationCallback

    batches = [[0, 0, 0, 0, 1, 0, 0, 0], [1, 1, 1, 1, 0, 0, 0, 0], [1, 0, 1, 0, 0, 1, 1, 1]]
    pattern = iter(batches)
    seen = []  # each batch's prompts and completions, as the reward function got them

    def scripted(prompts, completions, **kwargs):
        seen.append((list(prompts), list(completions)))
        return [float(x) for x in next(pattern)]

    tok = char_tokenizer()
    ds = Dataset.from_dict({"prompt": [f"{i}+{i}=" for i in range(8)]})
    args = GRPOConfig(output_dir=str(tmp_path), per_device_train_batch_size=8, num_generations=G,
                      max_completion_length=4, max_steps=3, learning_rate=1e-3, logging_steps=1,
                      report_to="none", use_cpu=USE_CPU, save_strategy="no", seed=0)
    cb = StarvationCallback(jsonl_path=tmp_path / "m.jsonl")
    trainer = trainer_class()(model=tiny_causal_lm(tok), args=args, reward_funcs=scripted, train_dataset=ds,
                              processing_class=tok, estimator="sign", callbacks=[cb])
    trainer.train()
    rows = [json.loads(line) for line in (tmp_path / "m.jsonl").read_text().splitlines()]
    assert len(rows) == 3
    assert len(seen) == 3  # one scored batch a step
    for b, row, hist, (prompts, completions) in zip(batches, rows, trainer.state.log_history, seen):
        cs = collapse_rate(torch.tensor(b, dtype=torch.float32), G)
        for key, want in [("acr", cs.acr), ("all_fail", cs.frac_all_fail), ("all_pass", cs.frac_all_pass)]:
            assert row[f"starvation/{key}"] == pytest.approx(want)
            assert hist[f"starvation/{key}"] == pytest.approx(want)  # the trainer's own logs
        assert row["starvation/frac_nonzero_adv"] == 1.0  # Sign: every completion keeps a signal
        k = torch.tensor(b).view(-1, G).sum(1)
        assert row["starvation/success_hist"] == torch.bincount(k, minlength=G + 1).tolist()
        assert row["reward"] == pytest.approx(sum(b) / len(b))
        # issue 82: the successes' signs, each success counted as its group's only one (k = 1) or a shared one
        got = row["starvation/successes"]
        assert got == hist["starvation/successes"]
        assert got["sole"]["n"] == int((k == 1).sum()) and got["shared"]["n"] == int(k[k >= 2].sum())
        for kind, want in (("sole", k == 1), ("shared", k >= 2)):
            picked = [(pr, c) for i, (pr, c) in enumerate(zip(prompts, completions))
                      if b[i] == 1 and bool(want[i // G])]
            sig = [signatures(c, Problem(pr, "", 0)) for pr, c in picked]
            for sign in ("answered", "repeats_prompt", "no_working"):
                assert got[kind][sign] == sum(x[sign] for x in sig), (kind, sign)
            assert len(picked) <= got[kind]["length"] <= 4 * len(picked)  # 1 to max_completion_length tokens each
    assert [r["starvation/successes"]["sole"]["n"] for r in rows] == [1, 0, 0]  # the one lucky success of batch 1
    assert rows[0]["starvation/acr"] == 0.5 and rows[1]["starvation/acr"] == 1.0 and rows[2]["starvation/acr"] == 0


def test_starvation_callback_refuses_a_stock_trainer(tmp_path):
    from trl import GRPOTrainer

    from grpo_lab.trl import StarvationCallback

    tok = char_tokenizer()
    ds = Dataset.from_dict({"prompt": ["1+1="] * 8})
    args = GRPOConfig(output_dir=str(tmp_path), per_device_train_batch_size=8, num_generations=G,
                      max_completion_length=2, max_steps=1, report_to="none", use_cpu=USE_CPU, save_strategy="no")
    trainer = GRPOTrainer(model=tiny_causal_lm(tok), args=args, reward_funcs=all_fail, train_dataset=ds,
                          processing_class=tok, callbacks=[StarvationCallback()])
    with pytest.raises(RuntimeError, match="needs a trainer built by grpo_lab.trl.trainer_class"):
        trainer.train()


def test_lora_adapter_trains_with_sign(tmp_path):
    """PEFT LoRA: only adapter weights change, and they do change on an all-fail batch under Sign."""
    from peft import LoraConfig

    tok = char_tokenizer()
    ds = Dataset.from_dict({"prompt": [f"{i}+{i}=" for i in range(8)]})
    args = GRPOConfig(output_dir=str(tmp_path), per_device_train_batch_size=8, num_generations=G,
                      max_completion_length=4, max_steps=1, learning_rate=1e-2, logging_steps=1,
                      report_to="none", use_cpu=USE_CPU, save_strategy="no", seed=0)
    trainer = trainer_class()(model=tiny_causal_lm(tok), args=args, reward_funcs=all_fail, train_dataset=ds,
                              processing_class=tok, estimator="sign",
                              peft_config=LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"]))
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.train()
    assert trainer.state.log_history[0]["grad_norm"] > 0
    after = dict(trainer.model.named_parameters())
    lora = [n for n in before if "lora_" in n]
    assert lora and any(not torch.equal(after[n], before[n]) for n in lora)  # adapters learned Sign's signal
    for n in before:
        if "lora_" not in n:  # the frozen base weights did not move
            assert not after[n].requires_grad and torch.equal(after[n], before[n]), n


@pytest.mark.parametrize("estimator, options", [("gpg", {"tol": -1.0}), ("maxrl", {"eps": 0}), ("grpo", {"nope": 1})])
def test_bad_estimator_options_are_refused_when_the_trainer_is_built(estimator, options):
    """Issue 51, item 7: the TRL hook accepted bad options for gpg/maxrl when the trainer was built and refused them
    at the first training step, after model loading and generation; now with compute_advantages's own message."""
    import torch

    from grpo_lab.advantages import compute_advantages
    from grpo_lab.trl import TrainerOptions, trainer_class

    with pytest.raises((TypeError, ValueError)) as want:
        compute_advantages(torch.tensor([0.0, 1.0, 1.0, 0.0]), 2, estimator, **options)
    with pytest.raises(type(want.value), match=str(want.value)[:30].replace("(", r"\(").replace(")", r"\)")):
        TrainerOptions(estimator, options, None, "none", 8, "train", 0.0, None, "transformers", None,
                       "trl").validate(trainer_class()._grpo_lab_base)
