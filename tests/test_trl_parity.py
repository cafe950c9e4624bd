"""TRL's real GRPOTrainer, one CPU step on a tiny random LM: its advantages equal ours."""

import pytest
import torch

from datasets import Dataset
from trl import GRPOConfig, GRPOTrainer

from grpo_lab import compute_advantages
from grpo_lab.policy import char_tokenizer, tiny_causal_lm
from conftest import USE_CPU

G = 4


class SpyTrainer(GRPOTrainer):
    """Records the gathered rewards and the advantages TRL computed from them."""

    def _calculate_rewards(self, *args, **kwargs):
        out = super()._calculate_rewards(*args, **kwargs)
        self.seen_rewards.append(out.clone())
        return out

    def _generate_and_score_completions(self, inputs):
        out = super()._generate_and_score_completions(inputs)
        self.seen_advantages.append(out["advantages"].clone())
        return out


def scripted_rewards():
    """0/1 rewards with degenerate groups, a mixed one, and an unscorable completion (None)."""
    batches = [
        [0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1, None, 0, 1],
        [0, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0],
    ]
    it = iter(batches)

    def reward(prompts, completions, **kwargs):
        rewards = next(it)
        assert len(rewards) == len(completions)
        return rewards

    return reward


def test_compute_advantages_grpo_equals_trl(tmp_path):
    tok = char_tokenizer()
    ds = Dataset.from_dict({"prompt": [f"{i}+{i}=" for i in range(8)]})
    args = GRPOConfig(output_dir=str(tmp_path), per_device_train_batch_size=16, num_generations=G,
                      max_completion_length=4, max_steps=2, learning_rate=1e-3, logging_steps=1, report_to="none",
                      use_cpu=USE_CPU, save_strategy="no", seed=0)
    trainer = SpyTrainer(model=tiny_causal_lm(tok), args=args, reward_funcs=scripted_rewards(), train_dataset=ds,
                         processing_class=tok)
    trainer.seen_rewards, trainer.seen_advantages = [], []
    trainer.train()
    assert len(trainer.seen_advantages) == 2
    for rewards_per_func, trl_adv in zip(trainer.seen_rewards, trainer.seen_advantages):
        rewards = rewards_per_func.squeeze(-1)  # one reward function; NaN marks the unscorable one
        ours = compute_advantages(rewards, G, "grpo")
        torch.testing.assert_close(ours, trl_adv, rtol=1e-5, atol=1e-6)
    first = trainer.seen_advantages[0]
    assert first[13] == 0 and torch.isnan(trainer.seen_rewards[0][13]).all()  # unscored: advantage 0
    assert first[:4].abs().sum() == 0 and first[4] > 1  # degenerate group idle; the lone success large
    # TRL's own starvation metric agrees with the batch: 2 of 4 groups have zero std in step 1
    assert trainer.state.log_history[0]["frac_reward_zero_std"] == pytest.approx(0.5)


def test_the_cache_keyword_and_the_checkpointing_flag_are_read_in_either_form():
    """Issue 50, item 5: transformers announces ``cache=`` for ``past_key_values=`` (5.40) and drops
    ``is_gradient_checkpointing`` (6); grpo-lab reads whichever form the installed version has."""
    import torch

    from grpo_lab.trl import cache_keyword, checkpointing

    class Old(torch.nn.Module):
        def forward(self, input_ids=None, attention_mask=None, past_key_values=None, use_cache=None):
            return input_ids

    class New(torch.nn.Module):
        def forward(self, input_ids=None, attention_mask=None, cache=None, use_cache=None):
            return input_ids

    assert cache_keyword(Old()) == "past_key_values" and cache_keyword(New()) == "cache"

    class Layer(torch.nn.Module):
        gradient_checkpointing = True

    class Five(torch.nn.Module):
        is_gradient_checkpointing = False

    six = torch.nn.Sequential(Layer())  # no is_gradient_checkpointing: the modules' flags say it
    assert checkpointing(six) is True and checkpointing(Five()) is False
    assert checkpointing(torch.nn.Sequential(torch.nn.Linear(2, 2))) is False
