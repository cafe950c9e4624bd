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

The summary of arXiv 2606.29238 (shared/papers, seed 004) says that GRPO's gradient matrices converge to rank 2
whatever the group size, on GSM8K, and that GRPO's baseline gives every token of a sequence one scalar advantage; it
names neither the matrix nor the measure of rank, and gives no cause for the 2. What the project chose: the effective
rank (above) as the measure, read on the batch update (study 6's primary) and on each group's contribution matrix,
with the count above 1% of the largest beside it; a log scale as the reasonable alternative for a positive, skewed
rank (issue 102). Notebook 08 measures these quantities on the tiny LM and on SmolLM2 (study 6).

What the arithmetic alone allows, before any training (issue 82, study 6 reads its measurements against these):

- a group's contribution matrix has rank at most its number of nonzero advantages, and at most its number of
  distinct completions among them (:func:`group_rank_bound`): 0 for a degenerate group under GRPO, at most G
  under Sign, 1 for a group that repeated one completion;
- its effective rank is shaped by the rows' sizes ``|A_i| ||g_i||`` as well as their directions:
  :func:`orthogonal_reference` is the effective rank the same rows would have if they were
  orthogonal. With 0/1 rewards GRPO's advantages take two values, so one lucky success in a
  group of 16 gets ``A = 3.75`` and each failure ``-0.25`` (``compute_advantages``, std with n - 1): one
  row carries half of the rows' total size, and even orthogonal gradients of equal norm would give an
  effective rank of 7.7, not 16;
- with two advantage values the group's update ``a+ S+ + a- S-`` lies in the span of two vectors
  (``S+``, ``S-``: the sums of the correct and the wrong completions' gradients): a matrix that stacks
  updates by reward class has rank at most 2 by construction;
- a batch update ``dW`` (``[out, in]``) is a sum of outer products ``delta_t x_t^T``, one per position of
  each completion with a nonzero advantage (prompt positions included: the completion's tokens attend
  to them), so its rank is at most ``min(out, in, positions)`` (:func:`update_rank_bound`).
"""

from __future__ import annotations

import re

import torch

# A rank probe's blocks (issue 82, study 6): one attention and one MLP projection, at the first, middle and last
# decoder layer (RunConfig.rank_probe; :func:`probe_blocks`).
PROBE_PROJECTIONS = ("self_attn.q_proj", "mlp.down_proj")


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
    exactly the tokens a GRPO update would push on. Strings of the tiny LM's character tokenizer
    (notebook 08); for token ids from any causal LM, :func:`completion_grads_ids`.
    """
    if len(prompts) != len(completions):
        raise ValueError(f"{len(prompts)} prompts but {len(completions)} completions")
    p_ids = [tokenizer.convert_tokens_to_ids(list(p)) for p in prompts]
    c_ids = [tokenizer.convert_tokens_to_ids(list(c)) + [tokenizer.eos_token_id] for c in completions]
    return completion_grads_ids(model, p_ids, c_ids, [block])[block]


def completion_grads_ids(model, prompt_ids, completion_ids, blocks) -> dict[str, torch.Tensor]:
    """``{block: [N, |W|]}``: per completion, the gradient of ``sum_t log pi(c_t | p, c_<t)`` w.r.t. each
    weight named in ``blocks``, from token ids (any Hugging Face causal LM; issue 82, study 6).

    ``prompt_ids[i]`` and ``completion_ids[i]`` are lists of ints: the completion's ids exactly as trained
    on (with its EOS where one was generated). One forward and one backward per completion give every
    block. A frozen weight is differentiated too, so under a LoRA adapter the base matrix ``W`` of an adapted
    layer gives the gradient of the full weight ``W + s B A`` (the layer's output depends on both only
    through their sum); ``requires_grad`` and the model's training mode are restored afterwards.

    Always in the weights' own dtype, never under autocast: a trainer with bf16 mixed precision has its forward
    wrapped in autocast by accelerate (``_original_forward`` keeps the bare one, which is called here), and bf16
    rounding moved the tiny LM's update rank by 3% (5.82 against 5.99) on a CPU with bf16 units (2026-12-01), so a
    probe reading through it would measure the rounding as well as the gradients, and differ by machine.
    """
    params = dict(model.named_parameters())
    blocks = list(blocks)
    unknown = [b for b in blocks if b not in params]
    if unknown:
        tail = unknown[0].split(".")[-2] if unknown[0].count(".") else unknown[0]
        near = [n for n in params if tail in n][:3] or list(params)[:3]
        raise KeyError(f"no parameter named {unknown[0]!r}; e.g. {', '.join(near)}")
    if len(prompt_ids) != len(completion_ids):
        raise ValueError(f"{len(prompt_ids)} prompts but {len(completion_ids)} completions")
    if any(len(p) == 0 for p in prompt_ids) or any(len(c) == 0 for c in completion_ids):
        raise ValueError("an empty prompt or completion has no log-probability to differentiate")
    weights = [params[b] for b in blocks]
    was_training, needed = model.training, [w.requires_grad for w in weights]
    forward = getattr(model, "_original_forward", model)  # the bare forward, without accelerate's autocast wrapper
    model.eval()
    rows = {b: [] for b in blocks}
    try:
        for w in weights:
            w.requires_grad_(True)
        for p, c in zip(prompt_ids, completion_ids):
            ids = torch.tensor([list(p) + list(c)])
            with torch.autocast(weights[0].device.type, enabled=False):  # nor under a caller's autocast
                logits = forward(input_ids=ids).logits[0, len(p) - 1:-1]
                logp = torch.log_softmax(logits.float(), dim=-1).gather(1, torch.tensor(list(c)).unsqueeze(1)).sum()
                for b, g in zip(blocks, torch.autograd.grad(logp, weights)):
                    rows[b].append(g.detach().reshape(-1).clone())
    finally:
        for w, r in zip(weights, needed):
            w.requires_grad_(r)
        model.train(was_training)
    return {b: torch.stack(r) for b, r in rows.items()}


def group_rank_bound(advantages, completions=None) -> int:
    """The most a group's contribution matrix ``diag(A) [g_1; ...]`` can have: its number of nonzero advantages,
    or, given each completion (``completions``: its tokens, any hashable), of distinct completions among them (two
    identical completions of one prompt have one gradient: a confident policy's repeats lower the rank by
    arithmetic)."""
    a = torch.as_tensor(advantages)
    if torch.isnan(a).any():
        raise ValueError("an advantage is NaN")
    if completions is None:
        return int((a != 0).sum())
    if len(completions) != a.numel():
        raise ValueError(f"{len(completions)} completions for {a.numel()} advantages")
    return len({c for c, x in zip(completions, a.tolist()) if x != 0})


def orthogonal_reference(C: torch.Tensor) -> float:
    """The effective rank ``C`` would have if its rows were orthogonal: that of its row norms (0 for a zero matrix).

    What the advantages' and gradients' sizes alone give; read a measured :func:`effective_rank` beside it to
    see how much of a low effective rank is direction (rows that point alike) and how much is size (one row
    much longer than the rest, as std normalisation makes a lucky success's row). Every nonzero row counts as its own
    direction, identical completions included: where a group repeats a completion (common late in training) the
    reference can exceed :func:`group_rank_bound`'s count of distinct completions, and the gap is duplication, not
    the gradients' geometry.
    """
    return effective_rank(torch.diag(C.double().norm(dim=1)))


def update_rank_bound(shape, lengths, advantages) -> int:
    """The most a batch update of a weight of ``shape`` ``[out, in]`` can have: ``min(out, in, positions)``.

    ``lengths[i]``: completion i's prompt plus completion tokens; its gradient is a sum of one outer product
    per position whose output is read (every position but the last), counted for nonzero advantages only.
    Loose for a model's last layer, which only the positions whose logits are read (the completion's) reach.
    """
    a = torch.as_tensor(advantages)
    if len(lengths) != a.numel():
        raise ValueError(f"{len(lengths)} lengths for {a.numel()} advantages")
    positions = sum(max(int(n) - 1, 0) for n, x in zip(lengths, a.tolist()) if x != 0)
    return min(int(shape[0]), int(shape[1]), positions)


def contribution_matrix(grads: torch.Tensor, advantages: torch.Tensor) -> torch.Tensor:
    """``diag(A) @ grads``: row i is completion i's contribution to the update."""
    adv = torch.as_tensor(advantages, dtype=grads.dtype).reshape(-1, 1)
    if adv.shape[0] != grads.shape[0]:
        raise ValueError(f"{adv.shape[0]} advantages for {grads.shape[0]} completions")
    return adv * grads


def update_matrix(grads: torch.Tensor, advantages: torch.Tensor, shape) -> torch.Tensor:
    """The block's update ``(1/N) sum_i A_i g_i`` reshaped to the weight's ``shape``."""
    return contribution_matrix(grads, advantages).mean(dim=0).reshape(shape)


def probe_blocks(model) -> list[str]:
    """The full weight matrices a rank probe reads: :data:`PROBE_PROJECTIONS` at the first, the middle and the last
    decoder layer (``layers.N``), each the adapted layer's base weight under a LoRA adapter."""
    names = [n for n, _ in model.named_parameters()]
    layers = sorted({int(m.group(1)) for n in names if (m := re.search(r"\blayers\.(\d+)\.", n))})
    if not layers:
        raise ValueError("the model has no decoder layers named layers.N: a rank probe reads none")
    out = []
    for i in sorted({layers[0], layers[len(layers) // 2], layers[-1]}):
        for proj in PROBE_PROJECTIONS:
            hit = [n for n in names if n.endswith((f"layers.{i}.{proj}.base_layer.weight", f"layers.{i}.{proj}.weight"))]
            if len(hit) != 1:
                raise ValueError(f"layer {i} has {len(hit)} weights named {proj} ({', '.join(hit) or 'none'})")
            out.append(hit[0])
    return out


def rank_readings(grads: dict, shapes: dict, lengths, advantages: dict, G: int, completions=None) -> dict:
    """What a rank probe records of one batch (issue 82, study 6): for each estimator's advantages (``{name:
    [N]}``) and each block's per-completion gradients (``grads``: ``{block: [N, |W|]}``, ``shapes``: its ``[out,
    in]``), the batch update's effective rank, its count of singular values above 1% of the largest and its bound
    (:func:`update_rank_bound`, ``lengths``: each completion's prompt plus completion tokens); and per group of
    ``G`` (every group, a degenerate one included, with its bound 0) the same two readings of its contribution
    matrix, its count of nonzero advantages, its bound (:func:`group_rank_bound`: distinct completions among them
    where ``completions`` gives each completion's tokens) and the orthogonal rows' reference
    (:func:`orthogonal_reference`).
    """
    if completions is not None:
        completions = [tuple(c) for c in completions]
    out = {}
    for est, adv in advantages.items():
        adv = torch.as_tensor(adv, dtype=torch.float32).reshape(-1)
        if adv.numel() % G:
            raise ValueError(f"{adv.numel()} advantages are not whole groups of G={G}")
        per = {}
        for b, g in grads.items():
            if g.shape[0] != adv.numel():
                raise ValueError(f"{g.shape[0]} gradients of {b} for {adv.numel()} advantages")
            U = update_matrix(g, adv, shapes[b])
            row = dict(update_erank=effective_rank(U), update_count=rank_above(U),
                       update_bound=update_rank_bound(shapes[b], lengths, adv),
                       group_erank=[], group_count=[], group_nonzero=[], group_bound=[], group_reference=[])
            for i in range(0, adv.numel(), G):
                C = contribution_matrix(g[i:i + G], adv[i:i + G])
                row["group_erank"].append(effective_rank(C))
                row["group_count"].append(rank_above(C))
                row["group_nonzero"].append(group_rank_bound(adv[i:i + G]))
                row["group_bound"].append(group_rank_bound(adv[i:i + G], None if completions is None
                                                            else completions[i:i + G]))
                row["group_reference"].append(orthogonal_reference(C))
            per[b] = row
        out[est] = per
    return out


__all__ = ["effective_rank", "rank_above", "sparsity", "completion_grads", "completion_grads_ids", "contribution_matrix",
           "update_matrix", "group_rank_bound", "orthogonal_reference", "update_rank_bound", "PROBE_PROJECTIONS",
           "probe_blocks", "rank_readings"]
