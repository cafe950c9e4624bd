"""grpo_lab.loss: the clipped, masked GRPO loss, by hand on small cases and against TRL's own loss in training."""

import math

import numpy as np
import pytest
import torch
from datasets import Dataset
from trl import GRPOConfig

from grpo_lab.loss import grpo_loss
from grpo_lab.policy import char_tokenizer, tiny_causal_lm
from grpo_lab.trl import trainer_class
from conftest import USE_CPU

MASK = torch.tensor([[1.0, 1.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0]])  # lengths 3 and 1


def test_on_policy_loss_is_minus_the_length_normalised_advantage():
    logp = torch.randn(2, 4, requires_grad=True)
    adv = torch.tensor([1.0, -2.0])
    loss = grpo_loss(logp, logp.detach(), adv, MASK)
    assert loss.item() == pytest.approx(-(1.0 + -2.0) / 2)
    loss.backward()
    # d/dlogp of -A * ratio at ratio 1 is -A, divided by the completion's length, then by the 2 completions
    expected = torch.tensor([[-1 / 3, -1 / 3, -1 / 3, 0.0], [2.0, 0.0, 0.0, 0.0]]) / 2
    torch.testing.assert_close(logp.grad, expected)


@pytest.mark.parametrize("loss_type, expected", [
    ("grpo", (-(1.0 * 3) / 3 + -(-2.0 * 1) / 1) / 2),  # per completion, then mean: 0.5
    ("bnpo", (-(1.0 * 3) + 2.0) / 4),  # per token over the batch: -0.25
    ("dapo", (-(1.0 * 3) + 2.0) / 4),  # the same when this batch is the whole generation batch
    ("dr_grpo", (-(1.0 * 3) + 2.0) / (2 * 8)),  # constant denominator B x max_completion_length
])
def test_the_three_normalisations(loss_type, expected):
    logp = torch.zeros(2, 4)
    loss = grpo_loss(logp, logp, torch.tensor([1.0, -2.0]), MASK, loss_type=loss_type, max_completion_length=8)
    assert loss.item() == pytest.approx(expected)


def test_clipping_stops_the_gradient_only_where_the_ratio_left_the_trust_region_in_the_advantage_direction():
    old = torch.zeros(4, 1)
    logp = torch.log(torch.tensor([[1.5], [1.5], [0.5], [0.5]])).requires_grad_()
    adv = torch.tensor([1.0, -1.0, -1.0, 1.0])
    grpo_loss(logp, old, adv, torch.ones(4, 1), epsilon_low=0.2, epsilon_high=0.28).backward()
    g = logp.grad.squeeze(1)
    assert g[0] == 0 and g[2] == 0  # ratio 1.5 > 1.28 with A > 0; ratio 0.5 < 0.8 with A < 0: clipped
    assert g[1] != 0 and g[3] != 0  # the pessimistic side is never clipped


def test_kl_term_is_the_k3_estimator_and_vanishes_at_the_reference():
    logp = torch.log(torch.tensor([[0.5]]))
    ref = torch.log(torch.tensor([[0.25]]))
    zero_adv = torch.zeros(1)
    loss = grpo_loss(logp, logp, zero_adv, torch.ones(1, 1), beta=0.1, ref_logp=ref)
    assert loss.item() == pytest.approx(0.1 * (0.5 - math.log(0.5) - 1))
    assert grpo_loss(logp, logp, zero_adv, torch.ones(1, 1), beta=0.1, ref_logp=logp).item() == 0


@pytest.mark.parametrize("kwargs, match", [
    (dict(loss_type="cispo"), "unknown loss_type 'cispo'"),
    (dict(loss_type="dr_grpo"), "max_completion_length"),
    (dict(beta=0.1), "ref_logp is needed"),
    (dict(epsilon_low=float("nan")), "epsilon_low must be finite"),
    (dict(beta=-1.0), "beta must be >= 0"),
    (dict(advantages=torch.zeros(3)), "advantages of shape"),
    (dict(mask=torch.ones(2, 3)), "mask has shape"),
])
def test_bad_input_is_refused_with_its_name(kwargs, match):
    args = dict(logp=torch.zeros(2, 4), old_logp=torch.zeros(2, 4), advantages=torch.zeros(2), mask=MASK)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        grpo_loss(**args)


def _train(tmp_path, loss_type, loss_fn, steps=3):
    tok = char_tokenizer()
    ds = Dataset.from_dict({"prompt": [f"{i}+{i}=" for i in range(8)]})
    step = iter(range(10_000))

    def reward(prompts, completions, **kwargs):  # mixed groups, a different pattern every call
        k = next(step)
        return [float((i * 7 + k) % 3 == 0) for i in range(len(completions))]

    # two optimisation steps per generated batch, so that the second one sees ratios != 1 (clipping bites),
    # and a KL term against the reference model
    args = GRPOConfig(output_dir=str(tmp_path), per_device_train_batch_size=8, num_generations=4,
                      max_completion_length=6, max_steps=steps, learning_rate=3e-2, logging_steps=1,
                      report_to="none", use_cpu=USE_CPU, save_strategy="no", seed=0, num_iterations=2,
                      beta=0.05, epsilon=0.1, loss_type=loss_type, bf16=False, use_bias_correction_kl=False)
    torch.manual_seed(0)
    tiny_causal_lm(tok).save_pretrained(tmp_path / "model")  # a path: TRL loads the KL reference model from it
    trainer = trainer_class()(model=str(tmp_path / "model"), args=args, reward_funcs=reward, train_dataset=ds, processing_class=tok,
                              estimator="grpo", loss_fn=loss_fn)
    trainer.train()
    return trainer


@pytest.mark.parametrize("loss_type", ["grpo", "dapo", "bnpo", "dr_grpo"])
def test_training_with_grpo_loss_is_training_with_trls_loss(tmp_path, loss_type):
    ours = _train(tmp_path / "ours", loss_type, grpo_loss)
    trls = _train(tmp_path / "trl", loss_type, None)
    rows = [(a, b) for a, b in zip(ours.state.log_history, trls.state.log_history) if "loss" in a]
    assert len(rows) == 3
    for a, b in rows:
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-4, abs=1e-7)
        assert a["grad_norm"] == pytest.approx(b["grad_norm"], rel=1e-4)
        assert a["kl"] == pytest.approx(b["kl"], rel=1e-4, abs=1e-9)
    assert any(r["grad_norm"] > 0 for r, _ in rows)
    for (name, p), q in zip(ours.model.named_parameters(), trls.model.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-6, msg=name)


def test_a_wrong_loss_changes_training(tmp_path):
    """The parity above could not pass by accident: a loss without the clip trains differently."""
    def unclipped(logp, old_logp, advantages, mask, **kw):
        return grpo_loss(logp, old_logp, advantages, mask, **{**kw, "epsilon_low": 10.0, "epsilon_high": 10.0})

    ours = _train(tmp_path / "ours", "grpo", unclipped, steps=2)
    trls = _train(tmp_path / "trl", "grpo", None, steps=2)
    assert any(not torch.allclose(p, q, rtol=1e-4, atol=1e-6)
               for p, q in zip(ours.model.parameters(), trls.model.parameters()))


def test_loss_fn_is_refused_where_it_cannot_stand_for_trls_loss(tmp_path):
    tok = char_tokenizer()
    ds = Dataset.from_dict({"prompt": ["1+1="] * 4})
    args = GRPOConfig(output_dir=str(tmp_path), per_device_train_batch_size=4, num_generations=4,
                      max_completion_length=4, max_steps=1, report_to="none", use_cpu=USE_CPU, loss_type="cispo")
    with pytest.raises(ValueError, match="loss_type='cispo'"):
        trainer_class()(model=tiny_causal_lm(tok), args=args, reward_funcs=lambda completions, **k: [0.0] * 4,
                        train_dataset=ds, processing_class=tok, loss_fn=grpo_loss)
    with pytest.raises(TypeError, match="loss_fn must be a function"):
        trainer_class()(model=None, loss_fn="grpo")


def test_a_loss_fn_that_returns_no_scalar_is_named(tmp_path):
    with pytest.raises(ValueError, match="loss_fn must return a scalar tensor"):
        _train(tmp_path, "grpo", lambda logp, *a, **k: logp.sum(-1), steps=1)


@pytest.mark.parametrize("junk", [float("nan"), float("inf"), -float("inf"), 1e30])
@pytest.mark.parametrize("loss_type", ["grpo", "dapo", "bnpo", "dr_grpo"])
def test_masked_positions_never_matter(junk, loss_type):
    """Issue 18: NaN or inf at masked positions leaked into the loss and the gradient (multiply, not select)."""
    torch.manual_seed(0)
    logp = torch.randn(3, 5, requires_grad=True)
    old, ref = torch.randn(3, 5), torch.randn(3, 5)
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]], dtype=torch.float32)
    adv = torch.tensor([0.5, -1.0, 2.0])
    kw = dict(loss_type=loss_type, beta=0.04, max_completion_length=5)
    clean = grpo_loss(logp, old, adv, mask, ref_logp=ref, **kw)
    (g_clean,) = torch.autograd.grad(clean, logp)
    dirty = logp.detach().clone()
    dirty[mask == 0] = junk
    dirty.requires_grad_(True)
    old_d, ref_d = old.clone(), ref.clone()
    old_d[mask == 0], ref_d[mask == 0] = junk, junk
    loss = grpo_loss(dirty, old_d, adv, mask, ref_logp=ref_d, **kw)
    (g,) = torch.autograd.grad(loss, dirty)
    assert torch.equal(loss, clean) and torch.isfinite(g).all()
    assert torch.allclose(g, g_clean) and (g[mask == 0] == 0).all()


@pytest.mark.parametrize("kw, match", [
    (dict(num_tokens=0), "num_tokens must be one positive"),
    (dict(num_tokens=-3), "num_tokens must be one positive"),
    (dict(num_tokens=float("nan")), "num_tokens must be one positive"),
    (dict(num_tokens=torch.tensor([4.0, 5.0])), "num_tokens must be one positive"),
    (dict(mask=torch.full((2, 3), 2.0)), "only 0 and 1"),
    (dict(mask=-torch.ones(2, 3)), "only 0 and 1"),
    (dict(advantages=torch.ones(2, 2, 1)), "advantages must be"),
    (dict(advantages=torch.tensor(1.0)), "advantages must be"),
    (dict(advantages=np.ones(2)), "must be a torch tensor"),
])
def test_bad_loss_inputs_are_named(kw, match):
    args = dict(logp=torch.zeros(2, 3), old_logp=torch.zeros(2, 3), advantages=torch.ones(2), mask=torch.ones(2, 3),
                loss_type="dapo")
    args.update(kw)
    with pytest.raises((ValueError, TypeError), match=match):
        grpo_loss(**args)
    with pytest.raises(ValueError, match="empty"):
        grpo_loss(torch.zeros(0, 3), torch.zeros(0, 3), torch.ones(0), torch.ones(0, 3))


@pytest.mark.parametrize("loss_type", ["grpo", "bnpo", "dapo", "dr_grpo"])
@pytest.mark.parametrize("junk", [float("nan"), float("inf"), -float("inf")])
def test_a_fully_masked_row_with_a_junk_advantage_changes_nothing(loss_type, junk):
    """Issue 28: a completion whose every token is masked carries no loss and no gradient, whatever its advantage
    holds: the same loss and gradient as with advantage 0 there, and (token-summing loss types) as without the row."""
    torch.manual_seed(0)
    base = torch.randn(3, 4)
    mask = torch.tensor([[1.0, 1, 1, 0], [0, 0, 0, 0], [1, 1, 0, 0]])
    kw = dict(loss_type=loss_type, max_completion_length=4)

    def run(adv, rows=slice(None)):
        logp = base[rows].clone().requires_grad_(True)
        loss = grpo_loss(logp, base[rows].detach() - 0.1, adv, mask[rows], **kw)
        loss.backward()
        return loss, logp.grad

    loss_junk, grad_junk = run(torch.tensor([1.0, junk, -0.5]))
    loss_zero, grad_zero = run(torch.tensor([1.0, 0.0, -0.5]))
    assert torch.isfinite(loss_junk) and torch.isfinite(grad_junk).all()
    torch.testing.assert_close(loss_junk, loss_zero)
    torch.testing.assert_close(grad_junk, grad_zero)
    if loss_type in ("bnpo", "dapo"):
        loss_without, grad_without = run(torch.tensor([1.0, -0.5]), rows=[0, 2])
        torch.testing.assert_close(loss_junk, loss_without)
        torch.testing.assert_close(grad_junk[[0, 2]], grad_without)


def test_the_issue_case_gives_minus_a_half():
    loss = grpo_loss(torch.zeros(2, 3), torch.zeros(2, 3), torch.tensor([1.0, float("nan")]),
                     torch.tensor([[1.0, 1, 1], [0, 0, 0]]))
    assert float(loss) == pytest.approx(-0.5)


def test_integer_options_are_type_checked():
    """Issue 38 (the smaller probes): max_completion_length=2.5 or True was reported as too short, and
    num_tokens=True was taken as one token; each is now a TypeError naming the option. Integer values for the
    float options (epsilon_low=1, beta=0) stay accepted: an int is a number."""
    import pytest
    import torch

    from grpo_lab.loss import grpo_loss

    lp, m, a = torch.zeros(2, 3), torch.ones(2, 3), torch.tensor([1.0, -1.0])
    for bad in (2.5, True):
        with pytest.raises(TypeError, match="max_completion_length"):
            grpo_loss(lp, lp, a, m, loss_type="dr_grpo", max_completion_length=bad)
    with pytest.raises(TypeError, match="num_tokens"):
        grpo_loss(lp, lp, a, m, loss_type="dapo", num_tokens=True)
    assert float(grpo_loss(lp, lp, a, m, epsilon_low=1, beta=0)) == 0.0
