"""What study 6's measurement costs (issue 82): per-completion gradients of full weight matrices of SmolLM2-135M-Instruct
under its LoRA adapter, and the singular values of a group's contribution matrix and of a batch update, at study 3's
step shape (16 completions of 48 tokens after their chat-template prompts; float32; one torch thread).

    python benchmarks/bench_rank_probe.py OUT.json               # 6 blocks: q_proj and down_proj at 3 depths
    python benchmarks/bench_rank_probe.py OUT.json --completions 32

It sizes the study's machine-hours before its plan is written, so it measures time only: the completions are tokens
drawn at random from the vocabulary (the cost does not depend on which tokens) and no rank is printed or recorded.
Speed targets are ratios in one run, never timed tests.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from machine import machine as describe_machine  # benchmarks/machine.py

TASK = "gym:chain_sum:min_terms=2,max_terms=2,min_digits=1,max_digits=2"  # study 3's
NEW_TOKENS = 48
LAYERS = (0, 15, 29)  # SmolLM2-135M has 30 decoder layers: the first, the middle, the last
PROJ = ("self_attn.q_proj", "mlp.down_proj")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--completions", type=int, default=16, help="completions in the batch (study 3: 4 prompts x G=4)")
    args = ap.parse_args(argv)
    if args.out.exists():
        raise SystemExit(f"{args.out} exists; choose another path (a benchmark never overwrites a result)")

    import torch

    torch.set_num_threads(1)
    from grpo_lab import gradrank, runner
    from grpo_lab.config import RunConfig

    cfg = RunConfig(policy="smollm2", task=TASK, lora_r=16, max_completion_length=NEW_TOKENS, eval_problems=4)
    t = time.perf_counter()
    model, tok, _ = runner.policy_adapter(cfg).load(cfg, lora=True)
    load_s = time.perf_counter() - t
    names = [n for n, _ in model.named_parameters()]
    blocks = [next(n for n in names if n.endswith(f"layers.{i}.{p}.base_layer.weight")) for i in LAYERS for p in PROJ]
    shapes = {b: tuple(dict(model.named_parameters())[b].shape) for b in blocks}
    prompts = [p.prompt for p in runner.as_prompted(tok, runner.eval_problems(cfg), runner.system_prompt(cfg))]
    p_ids = [tok(prompts[i % len(prompts)], add_special_tokens=False)["input_ids"] for i in range(args.completions)]
    gen = torch.Generator().manual_seed(0)
    c_ids = [torch.randint(0, len(tok), (NEW_TOKENS,), generator=gen).tolist() for _ in range(args.completions)]

    per = []
    grads = {b: [] for b in blocks}
    for p, c in zip(p_ids, c_ids):
        t = time.perf_counter()
        g = gradrank.completion_grads_ids(model, [p], [c], blocks)
        per.append(time.perf_counter() - t)
        for b in blocks:
            grads[b].append(g[b][0])
    grads = {b: torch.stack(v) for b, v in grads.items()}
    adv = torch.randint(0, 2, (args.completions,), generator=gen).float() * 2 - 1
    t = time.perf_counter()
    for b in blocks:  # what a reading computes: every group of 4 and the batch update, for each block
        for i in range(0, args.completions, 4):
            gradrank.effective_rank(gradrank.contribution_matrix(grads[b][i:i + 4], adv[i:i + 4]))
        gradrank.effective_rank(gradrank.update_matrix(grads[b], adv, shapes[b]))
    svd_s = time.perf_counter() - t
    mb = sum(v.numel() * v.element_size() for v in grads.values()) / 2**20
    out = dict(machine=describe_machine(), blocks=blocks, shapes={b: list(s) for b, s in shapes.items()},
               completions=args.completions, prompt_tokens=[len(p) for p in p_ids], completion_tokens=NEW_TOKENS,
               load_s=load_s, grad_s_per_completion=per, median_grad_s=statistics.median(per),
               readings_s=svd_s, grads_mib=mb,
               probe_s=sum(per) + svd_s)
    print(json.dumps({k: out[k] for k in ("median_grad_s", "readings_s", "probe_s", "grads_mib", "load_s")}, indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
