"""The clipped, masked GRPO policy loss as a pure function (introduced in notebook 05, exercise 05.4).

Per completion token t of completion i (``mask`` is 1 on real completion tokens, 0 on padding):

    ratio_it = exp(logp_it - old_logp_it)
    l_it     = -min(ratio_it * A_i, clip(ratio_it, 1 - eps_low, 1 + eps_high) * A_i)
               + beta * KL_it,     KL_it = exp(ref_it - logp_it) - (ref_it - logp_it) - 1

The clipped ratio is PPO's (arXiv 1707.06347) with DAPO's separate upper bound (arXiv 2503.14476);
the KL term is the k3 estimator of KL(pi || pi_ref) used by GRPO (arXiv 2402.03300). What differs
between the published variants is how the token losses are averaged (``loss_type``):

- ``"grpo"``: mean over tokens of each completion, then mean over completions (arXiv 2402.03300).
  A long completion's tokens each weigh less than a short one's.
- ``"dapo"``: sum over every token / number of completion tokens in the whole generation batch
  (``num_tokens``; token-level, DAPO, arXiv 2503.14476). TRL's default loss type.
- ``"bnpo"``: the same, with the tokens of this batch only (``num_tokens`` is ignored).
- ``"dr_grpo"``: sum over every token / (completions x ``max_completion_length``): a constant
  denominator, no length bias (Dr. GRPO, arXiv 2503.20783).

These are the formulas of TRL's ``GRPOTrainer`` for those three loss types (token-level importance
sampling, one process, no gradient accumulation); ``tests/test_loss.py`` checks that training with
this function gives the same updates as TRL's own loss (TRL passes ``num_tokens`` for ``"dapo"``:
the generation batch's token count, rescaled for gradient accumulation and processes). The hook
follows TRL 1.16's ``"dapo"`` normaliser, which also multiplies by ``gradient_accumulation_steps /
steps_per_generation`` in training; some older TRL versions do not, which matters only when those two
settings differ (by default they are equal). The parity test runs against whichever TRL is installed. :func:`grpo_lab.trl.trainer_class` takes
``loss_fn=`` to train with it (or with a student's version).
"""

from __future__ import annotations

import torch

from ._checks import as_int, as_number

LOSS_TYPES = ("grpo", "dapo", "bnpo", "dr_grpo")


def kl_k3(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """Per-token k3 estimate of KL(pi || pi_ref): ``exp(r) - r - 1`` with ``r = ref_logp - logp`` (>= 0)."""
    delta = ref_logp - logp
    return torch.exp(delta) - delta - 1


def grpo_loss(logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor, mask: torch.Tensor, *,
              epsilon_low: float = 0.2, epsilon_high: float | None = None, beta: float = 0.0,
              ref_logp: torch.Tensor | None = None, loss_type: str = "grpo",
              max_completion_length: int | None = None, num_tokens: float | torch.Tensor | None = None
              ) -> torch.Tensor:
    """The scalar GRPO loss of a batch; see the module docstring for the formula and its sources.

    ``logp``, ``old_logp``, ``ref_logp`` and ``mask`` are (B, T): per-token log-probabilities under the
    policy being trained (with gradient), the policy that sampled the completions, and the reference
    policy; ``advantages`` is (B,) or (B, T). ``epsilon_high`` defaults to ``epsilon_low``. ``ref_logp``
    is needed when ``beta > 0``; ``max_completion_length`` when ``loss_type="dr_grpo"``. ``num_tokens``
    (``"dapo"`` only) is the token count to divide by; by default the tokens in ``mask``.
    """
    if loss_type not in LOSS_TYPES:
        raise ValueError(f"unknown loss_type {loss_type!r}; choose one of {', '.join(LOSS_TYPES)}")
    for name, t in (("logp", logp), ("old_logp", old_logp), ("advantages", advantages), ("mask", mask),
                    ("ref_logp", ref_logp)):
        if t is not None and not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch tensor, got {type(t).__name__} (torch.as_tensor converts it)")
    epsilon_high = epsilon_low if epsilon_high is None else epsilon_high
    for name, value in (("epsilon_low", epsilon_low), ("epsilon_high", epsilon_high), ("beta", beta)):
        as_number(name, value, low=0.0)
    if logp.dim() != 2:
        raise ValueError(f"logp must be (completions, tokens), got shape {tuple(logp.shape)}")
    for name, t in (("old_logp", old_logp), ("mask", mask)) + ((("ref_logp", ref_logp),) if beta else ()):
        if t is None:
            raise ValueError(f"{name} is needed (beta={beta})")
        if t.shape != logp.shape:
            raise ValueError(f"{name} has shape {tuple(t.shape)}, logp {tuple(logp.shape)}: they must match")
    if logp.numel() == 0:
        raise ValueError(f"the batch is empty (logp of shape {tuple(logp.shape)})")
    if advantages.dim() not in (1, 2):
        raise ValueError(f"advantages must be (completions,) or (completions, tokens), got shape "
                         f"{tuple(advantages.shape)}")
    if advantages.dim() == 1:
        advantages = advantages.unsqueeze(1)
    if advantages.shape[0] != logp.shape[0] or advantages.shape[1] not in (1, logp.shape[1]):
        raise ValueError(f"advantages of shape {tuple(advantages.shape)} do not fit logp of shape "
                         f"{tuple(logp.shape)}: one per completion, or one per token")
    if max_completion_length is not None:
        max_completion_length = as_int("max_completion_length", max_completion_length, minimum=1)
    if isinstance(num_tokens, bool):
        raise TypeError(f"num_tokens must be a number of tokens, got a bool ({num_tokens})")
    if loss_type == "dr_grpo" and (max_completion_length is None or max_completion_length < logp.shape[1]):
        raise ValueError("loss_type='dr_grpo' needs max_completion_length >= the number of tokens, "
                         f"got {max_completion_length!r} for {logp.shape[1]} tokens")
    if not bool(((mask == 0) | (mask == 1)).all()):
        raise ValueError("mask must hold only 0 and 1 (a 2 would double a token's weight, a -1 flip it)")
    if num_tokens is not None and loss_type == "dapo":
        n = torch.as_tensor(num_tokens)
        if n.numel() != 1 or not bool(torch.isfinite(n)) or float(n) <= 0:
            raise ValueError(f"num_tokens must be one positive, finite number, got {num_tokens!r}")
    keep = mask.bool()
    # masked positions must not matter, whatever they hold (NaN, inf): select, never multiply, and select the
    # inputs too, so that no NaN reaches the gradient through exp() at a position the loss ignores
    zero = torch.zeros((), dtype=logp.dtype, device=logp.device)
    logp, old_logp = torch.where(keep, logp, zero), torch.where(keep, old_logp, zero)
    ref_logp = torch.where(keep, ref_logp, zero) if beta else ref_logp
    advantages = torch.where(keep, advantages.expand_as(logp), zero)  # a NaN advantage on a fully masked row too
    mask = keep.to(logp.dtype)

    ratio = torch.exp(logp - old_logp)
    clipped = torch.clamp(ratio, 1 - epsilon_low, 1 + epsilon_high)
    per_token = -torch.min(ratio * advantages, clipped * advantages)
    if beta:
        per_token = per_token + beta * kl_k3(logp, ref_logp)

    if loss_type == "grpo":
        return ((per_token * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).mean()
    if loss_type == "bnpo" or (loss_type == "dapo" and num_tokens is None):
        return (per_token * mask).sum() / mask.sum().clamp(min=1.0)
    if loss_type == "dapo":
        return (per_token * mask).sum() / num_tokens
    return (per_token * mask).sum() / (logp.shape[0] * max_completion_length)
