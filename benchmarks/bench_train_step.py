"""``torch.compile`` of the training step (issue 84, item 4): the loss forward, backward and optimizer step of one
study-3 step (16 completions of 48 tokens after their prompts; SmolLM2-135M-Instruct with LoRA r = 16, float32, one
torch thread), eager against compiled, on the same batch from the same weights.

    python benchmarks/bench_train_step.py OUT.json              # 6 timed steps each, interleaved
    python benchmarks/bench_train_step.py OUT.json --steps 10

What it measures: the part of a GRPO step that is not generation, as TRL computes it at the learning rate studies
use (per-token log-probs of the completion tokens by a forward pass, a policy-gradient loss weighted by the
advantages, backward, AdamW). Eager and compiled steps alternate, so a load that comes and goes hits both alike;
the compiled model's first call (the compilation) is timed apart. Equivalence before speed: from the same weights and
batch, the compiled step's loss and its LoRA gradients are compared with the eager ones (largest absolute difference
beside the largest gradient, and the gradients' cosine); a compiled path whose numbers differ is reported as such,
whatever its speed. Speed targets are ratios in one run, never timed tests.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import time
from pathlib import Path

from machine import machine as describe_machine  # benchmarks/machine.py

TASK = "gym:chain_sum:min_terms=2,max_terms=2,min_digits=1,max_digits=2"  # study 3's
PROMPTS, G, NEW_TOKENS = 4, 4, 48


def batch(tok, cfg, seed: int = 0):
    """Study 3's step shape: 4 prompts (chat template, left-padded) each repeated G times, 48 completion tokens
    drawn at random from the vocabulary (the step's cost does not depend on which tokens), advantages ±1."""
    import torch

    from grpo_lab import runner

    prompts = [p.prompt for p in runner.as_prompted(tok, runner.eval_problems(cfg), runner.system_prompt(cfg))]
    tok.padding_side = "left"
    enc = tok([p for p in prompts for _ in range(G)], return_tensors="pt", padding=True, add_special_tokens=False)
    gen = torch.Generator().manual_seed(seed)
    completion = torch.randint(0, len(tok), (PROMPTS * G, NEW_TOKENS), generator=gen)
    ids = torch.cat([enc["input_ids"], completion], dim=1)
    mask = torch.cat([enc["attention_mask"], torch.ones_like(completion)], dim=1)
    adv = torch.randint(0, 2, (PROMPTS * G,), generator=gen).float() * 2 - 1
    return ids, mask, adv


def backward(model, ids, mask, adv):
    """The loss forward and backward, as TRL computes it: logits of the completion positions only
    (``logits_to_keep``), their log-probs at the completion's tokens, the advantage-weighted mean; returns the loss."""
    import torch

    logits = model(input_ids=ids, attention_mask=mask, logits_to_keep=NEW_TOKENS + 1).logits[:, :-1]
    logp = torch.log_softmax(logits.float(), dim=-1).gather(-1, ids[:, -NEW_TOKENS:, None]).squeeze(-1)
    loss = -(adv[:, None] * logp).mean()
    loss.backward()
    return float(loss.detach())


def step(model, opt, ids, mask, adv):
    """One optimizer step on the batch; returns the loss (a float)."""
    loss = backward(model, ids, mask, adv)
    opt.step()
    opt.zero_grad(set_to_none=False)
    return loss


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--steps", type=int, default=6, help="timed steps per path (after one warm-up)")
    ap.add_argument("--mode", default="default", help="torch.compile's mode (default, reduce-overhead, max-autotune)")
    args = ap.parse_args(argv)
    if args.out.exists():
        raise SystemExit(f"{args.out} exists; choose another path (a benchmark never overwrites a result)")

    import torch

    torch.set_num_threads(1)
    from grpo_lab import runner
    from grpo_lab.config import RunConfig

    cfg = RunConfig(policy="smollm2", task=TASK, lora_r=16, max_completion_length=NEW_TOKENS, eval_problems=PROMPTS,
                    learning_rate=3e-4)
    eager, tok, _ = runner.policy_adapter(cfg).load(cfg, lora=True)
    eager.train()
    ids, mask, adv = batch(tok, cfg)
    compiled_base = copy.deepcopy(eager)
    opts = {}
    for name, m in (("eager", eager), ("compiled", compiled_base)):
        opts[name] = torch.optim.AdamW([p for p in m.parameters() if p.requires_grad], lr=cfg.learning_rate)

    # equivalence first: the loss and the LoRA gradients from the same weights on the same batch
    t = time.perf_counter()
    compiled = torch.compile(compiled_base, mode=args.mode)
    loss_c = backward(compiled, ids, mask, adv)
    compile_s = time.perf_counter() - t
    loss_e = backward(eager, ids, mask, adv)
    pairs = [(a.grad, b.grad) for a, b in zip(eager.parameters(), compiled_base.parameters()) if a.requires_grad]
    grad_scale = max(float(a.abs().max()) for a, _ in pairs)
    grad_diff = max(float((a - b).abs().max()) for a, b in pairs)
    cosine = float(torch.nn.functional.cosine_similarity(torch.cat([a.double().flatten() for a, _ in pairs]),
                                                         torch.cat([b.double().flatten() for _, b in pairs]), dim=0))
    for name in opts:
        opts[name].step()
        opts[name].zero_grad(set_to_none=False)
    equivalence = dict(loss_eager=loss_e, loss_compiled=loss_c, loss_abs_diff=abs(loss_e - loss_c),
                       grad_max_abs_diff=grad_diff, grad_max_abs=grad_scale, grad_cosine=cosine)
    print("equivalence", json.dumps(equivalence), flush=True)

    times = {"eager": [], "compiled": []}
    for _ in range(args.steps):  # interleaved: eager, compiled, eager, ...
        for name, m in (("eager", eager), ("compiled", compiled)):
            t = time.perf_counter()
            step(m, opts[name], ids, mask, adv)
            times[name].append(time.perf_counter() - t)
    med = {k: statistics.median(v) for k, v in times.items()}
    out = dict(machine=describe_machine(),
               shape=dict(rows=PROMPTS * G, tokens=int(ids.shape[1]), completion_tokens=NEW_TOKENS),
               mode=args.mode, compile_s=compile_s, equivalence=equivalence, step_s=times, median_s=med,
               speedup=med["eager"] / med["compiled"],
               break_even_steps=compile_s / max(med["eager"] - med["compiled"], 1e-9)
               if med["eager"] > med["compiled"] else None)
    print(json.dumps({k: out[k] for k in ("median_s", "speedup", "compile_s", "break_even_steps")}, indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())
