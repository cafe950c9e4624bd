"""Issue 49: every run logs what each optimizer step moved (update/step_norm, update/from_start over the trained
weights), beside TRL's gradient norm before clipping, and with a KL penalty the KL term's part of the loss; tested
on tiny-LM runs whose answer is known."""

import json

import pytest

from grpo_lab.config import RunConfig
from grpo_lab.runner import train

BASE = dict(policy="tiny-lm", task="arithmetic", steps=3, prompts_per_step=4, group_size=4, train_problems=64,
            eval_problems=8, eval_samples=4, learning_rate=1e-3)


def rows(tmp_path, cfg, reward_fn=None):
    path = tmp_path / f"log-{cfg.beta}.jsonl"
    train(cfg, jsonl_path=path, evaluate_after=False, reward_fn=reward_fn)
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def no_signal(prompts, completions, **kwargs):  # every group all-fail: GRPO's advantages are all zero
    return [0.0] * len(completions)


@pytest.mark.parametrize("beta", [0.0, 0.04])
def test_steps_whose_advantages_are_all_zero_move_nothing(tmp_path, beta):
    """Zero advantages give a zero policy gradient, and AdamW with a zero gradient and no weight decay moves
    nothing. With beta > 0 the KL term's gradient is zero too while the policy equals its reference, which it never
    leaves here: every step's update is exactly 0, and so is the KL."""
    out = rows(tmp_path, RunConfig(**BASE, beta=beta), reward_fn=no_signal)
    assert len(out) == 3
    assert all(r["update/step_norm"] == 0.0 and r["update/from_start"] == 0.0 for r in out)
    if beta:
        assert all(abs(r["kl"]) < 1e-6 and r["kl/term"] == pytest.approx(beta * r["kl"]) for r in out)
    else:
        assert "kl/term" not in out[0]


def test_a_step_with_a_signal_moves_the_weights_and_the_logs_add_up(tmp_path):
    out = rows(tmp_path, RunConfig(**BASE))
    moved = [r for r in out if r["update/step_norm"] > 0]
    assert moved, "no step moved the weights although groups carried a signal"
    first = next(i for i, r in enumerate(out) if r["update/step_norm"] > 0)
    assert out[first]["update/from_start"] == pytest.approx(out[first]["update/step_norm"], rel=1e-5)
    for a, b in zip(out, out[1:]):  # the triangle inequality: a step cannot move further from the start than its size
        assert b["update/from_start"] <= a["update/from_start"] + b["update/step_norm"] + 1e-6
    assert all("grad_norm" in r for r in out)


def test_a_kl_penalty_is_logged_as_its_part_of_the_loss(tmp_path):
    out = rows(tmp_path, RunConfig(**BASE, beta=0.04))
    for r in out:
        assert r["kl/term"] == pytest.approx(0.04 * r["kl"])
        assert 0.0 <= r["kl/share_of_loss"] <= 1.0
    assert out[0]["kl"] == pytest.approx(0.0, abs=1e-6)  # the first step: the policy is its reference


def test_the_run_result_keeps_the_update_and_kl_logs(tmp_path):
    """The result's history (what a study reads) holds what the JSONL holds: update/* and, with beta, kl and kl/*."""
    res = train(RunConfig(**BASE, beta=0.04), evaluate_after=False)
    last = res["history"][-1]
    for key in ("update/step_norm", "update/from_start", "grad_norm", "kl", "kl/term", "kl/share_of_loss"):
        assert key in last, key


def test_adams_share_near_epsilon_is_all_with_no_gradient_and_follows_the_gradients_size():
    """Issue 57: the share of weights whose Adam denominator sqrt(v_hat) is below 10 eps. All of them when every
    gradient is zero; none when the gradients are large; and a weight's gradient scaled down far enough moves it
    below the line (where Adam stops being scale-invariant)."""
    import torch

    from grpo_lab.trl import adam_near_eps

    w = torch.nn.Parameter(torch.zeros(4))
    opt = torch.optim.AdamW([w], lr=1e-3, betas=(0.9, 0.95), eps=1e-8)
    assert adam_near_eps(opt) is None  # no step yet: no state
    for grad, expected in ((torch.zeros(4), 1.0), (torch.ones(4), 0.0),
                           (torch.tensor([1.0, 1.0, 1e-12, 1e-12]), None)):
        opt = torch.optim.AdamW([w], lr=1e-3, betas=(0.9, 0.95), eps=1e-8)
        w.grad = grad
        opt.step()
        got = adam_near_eps(opt)
        assert got == (0.5 if expected is None else expected)
    assert adam_near_eps(torch.optim.SGD([w], lr=0.1)) is None


def test_every_run_logs_the_share(tmp_path):
    out = rows(tmp_path, RunConfig(**BASE))
    assert all(0.0 <= r["update/adam_near_eps"] <= 1.0 for r in out)
    zero = rows(tmp_path / "z", RunConfig(**BASE), reward_fn=no_signal)
    assert all(r["update/adam_near_eps"] == 1.0 for r in zero)  # no gradient at all: every denominator is 0
