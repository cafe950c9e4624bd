"""The structure of GRPO's gradient: per-completion contributions, effective rank, sparsity (notebook 08).

Definitions used throughout (say which one you quote):

- ``g_i = d/d theta  sum_t log pi(y_i,t | x_i, y_i,<t)`` for completion i, restricted to one
  parameter block (a weight matrix W of shape [out, in]) and flattened;
- the **contribution matrix** of a group is ``C = diag(A) [g_1; ...; g_G]`` (G x |W|): row i
  is what completion i adds to the update, so the group's update is ``C^T 1``. Its rank is at
  most the number of nonzero advantages;
- the **update matrix** of a block is ``dW = (1/N) sum_i A_i g_i`` reshaped to [out, in] for a
  batch of N completions (TRL's per-token normalisation aside);
- **effective rank** (Roy & Vetterli, 2007): ``exp(H(q))`` with ``q_j = s_j / sum_k s_k`` over
  the singular values ``s``; it equals r for r equal nonzero singular values. We also report
  the number of singular values above 1% of the largest;
- **sparsity** of a matrix: the fraction of entries whose magnitude is below 1e-3 of the
  largest entry.

arXiv 2606.29238 reports an effective rank of about 2 for GRPO gradients on GSM8K, which it
attributes to advantages summing to zero within a group; notebook 08 measures these
quantities on the tiny LM and compares.
"""

from __future__ import annotations

import torch


def effective_rank(M: torch.Tensor, eps: float = 1e-12) -> float:
    """Entropy effective rank ``exp(-sum q log q)``, ``q = s / sum(s)`` (0 for a zero matrix)."""
    s = torch.linalg.svdvals(M.double())
    total = s.sum()
    if total <= eps:
        return 0.0
    q = s / total
    q = q[q > 0]
    return float(torch.exp(-(q * q.log()).sum()))


def rank_above(M: torch.Tensor, frac: float = 0.01) -> int:
    """Number of singular values at least ``frac`` times the largest (0 for a zero matrix)."""
    s = torch.linalg.svdvals(M.double())
    if s.numel() == 0 or s[0] == 0:
        return 0
    return int((s >= frac * s[0]).sum())


def sparsity(M: torch.Tensor, rel: float = 1e-3) -> float:
    """Fraction of entries with ``|m| < rel * max|m|`` (1.0 for a zero matrix)."""
    a = M.abs()
    top = a.max()
    if top == 0:
        return 1.0
    return float((a < rel * top).float().mean())


def completion_grads(model, tokenizer, prompts, completions, block: str) -> torch.Tensor:
    """``[N, |W|]``: the gradient of each completion's summed log-probability w.r.t. parameter ``block``.

    ``prompts[i] + completions[i]`` is scored with the completion's tokens followed by EOS,
    exactly the tokens a GRPO update would push on.
    """
    params = dict(model.named_parameters())
    if block not in params:
        raise KeyError(f"no parameter named {block!r}; e.g. {', '.join(list(params)[:4])}")
    W = params[block]
    if len(prompts) != len(completions):
        raise ValueError(f"{len(prompts)} prompts but {len(completions)} completions")
    model.eval()
    rows = []
    for p, c in zip(prompts, completions):
        p_ids = tokenizer.convert_tokens_to_ids(list(p))
        c_ids = tokenizer.convert_tokens_to_ids(list(c)) + [tokenizer.eos_token_id]
        ids = torch.tensor([p_ids + c_ids])
        logits = model(input_ids=ids).logits[0, len(p_ids) - 1:-1]
        logp = torch.log_softmax(logits.float(), dim=-1).gather(1, torch.tensor(c_ids).unsqueeze(1)).sum()
        (g,) = torch.autograd.grad(logp, W)
        rows.append(g.detach().reshape(-1).clone())
    return torch.stack(rows)


def contribution_matrix(grads: torch.Tensor, advantages: torch.Tensor) -> torch.Tensor:
    """``diag(A) @ grads``: row i is completion i's contribution to the update."""
    adv = torch.as_tensor(advantages, dtype=grads.dtype).reshape(-1, 1)
    if adv.shape[0] != grads.shape[0]:
        raise ValueError(f"{adv.shape[0]} advantages for {grads.shape[0]} completions")
    return adv * grads


def update_matrix(grads: torch.Tensor, advantages: torch.Tensor, shape) -> torch.Tensor:
    """The block's update ``(1/N) sum_i A_i g_i`` reshaped to the weight's ``shape``."""
    return contribution_matrix(grads, advantages).mean(dim=0).reshape(shape)


__all__ = ["effective_rank", "rank_above", "sparsity", "completion_grads", "contribution_matrix", "update_matrix"]
