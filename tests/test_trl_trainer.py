"""grpo_lab.trl: the trainer subclass really uses our advantages and really changes the gradient."""

import pytest
import torch
from datasets import Dataset
from trl import GRPOConfig

from grpo_lab import compute_advantages
from grpo_lab.policy import char_tokenizer, tiny_causal_lm
from grpo_lab.trl import trainer_class

G = 4


def run(tmp_path, estimator, rewards_fn, steps=1):
    tok = char_tokenizer()
    ds = Dataset.from_dict({"prompt": [f"{i}+{i}=" for i in range(8)]})
    args = GRPOConfig(output_dir=str(tmp_path), per_device_train_batch_size=8, num_generations=G,
                      max_completion_length=4, max_steps=steps, learning_rate=1e-3, logging_steps=1,
                      report_to="none", use_cpu=True, save_strategy="no", seed=0)
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


def test_unknown_estimator_is_refused():
    with pytest.raises(ValueError, match="unknown advantage estimator 'ppo'"):
        trainer_class()(model=None, estimator="ppo")
