"""Rollout paths at the decode limit (issue 84): one generation call of a study-3 step (4 prompts x G = 4 = 16
completions of at most 48 tokens, SmolLM2-135M-Instruct with LoRA r = 16, float32, one torch thread) through each
path, beside the bounds this machine sets.

    python benchmarks/bench_rollouts.py OUT.json            # every path installed here, 3 calls each
    python benchmarks/bench_rollouts.py OUT.json --calls 5

The paths: ``transformers`` (``model.generate``), ``loop`` (grpo-lab's decode loop on the trained model,
:mod:`grpo_lab.decoding`) and ``vllm`` (its CPU engine, eager and compiled, with the weight hand-over timed apart).
Two bounds per decode step, both measured here, not assumed: the weights streamed once at this machine's copy
bandwidth (what the issue called the decode bound), and the step's matrix products at the rate one thread reaches
on the model's own shapes at 16 rows (a CPU without wide vector units is bound by that first). The ratio is a call's
time over the larger bound times the steps. Speed targets are ratios in one run, never timed tests.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from machine import copy_bandwidth, machine as describe_machine  # benchmarks/machine.py

TASK = "gym:chain_sum:min_terms=2,max_terms=2,min_digits=1,max_digits=2"  # study 3's
ROWS, NEW_TOKENS = 16, 48


def _machine(model) -> dict:
    import torch

    bandwidth = copy_bandwidth("cpu", 128 * 2**20, copies=1)  # bytes read and written per second
    shapes = [tuple(m.weight.shape) for m in model.modules() if isinstance(m, torch.nn.Linear)]
    distinct = {s: shapes.count(s) for s in shapes}
    seconds, flops = 0.0, 0.0
    a = {}
    for (out_f, in_f), count in distinct.items():
        w = torch.randn(out_f, in_f)
        a.setdefault(in_f, torch.randn(ROWS, in_f))
        torch.nn.functional.linear(a[in_f], w)
        reps = 3 if out_f * in_f > 1e7 else 20
        t = time.perf_counter()
        for _ in range(reps):
            torch.nn.functional.linear(a[in_f], w)
        seconds += (time.perf_counter() - t) / reps * count
        flops += 2 * ROWS * out_f * in_f * count
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    return dict(describe_machine(), bandwidth_gbs=bandwidth / 1e9,
                gemm_gflops=flops / seconds / 1e9, weights_mb=weights / 1e6, linear_flops_per_step=flops,
                bound_bandwidth_ms=weights / bandwidth * 1e3, bound_compute_ms=seconds * 1e3)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--calls", type=int, default=3)
    args = ap.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    from grpo_lab import runner
    from grpo_lab.config import RunConfig
    from grpo_lab.generation import get_engine

    cfg = RunConfig(policy="smollm2", task=TASK, lora_r=16, max_completion_length=NEW_TOKENS,
                    eval_problems=ROWS // 4)
    model, tok, _ = runner.policy_adapter(cfg).load(cfg, lora=True)
    prompts = [p.prompt for p in runner.as_prompted(tok, runner.eval_problems(cfg), runner.system_prompt(cfg))]
    machine = _machine(model)
    print(json.dumps(machine, indent=1), flush=True)
    paths = {}

    def timed(name, sample, start_s=None):
        calls, steps = [], []
        for i in range(args.calls):
            cut: list = []
            t = time.perf_counter()
            out = sample(prompts, ROWS // len(prompts), max_new_tokens=NEW_TOKENS, seed=i, truncated=cut)
            calls.append(time.perf_counter() - t)
            lengths = [len(tok(c, add_special_tokens=False)["input_ids"]) for cs in out for c in cs]
            steps.append(min(NEW_TOKENS, max(lengths)))
        per_step_bound = max(machine["bound_bandwidth_ms"], machine["bound_compute_ms"]) / 1e3
        paths[name] = dict(call_s=statistics.median(calls), calls=calls, steps=statistics.median(steps),
                           start_s=start_s,
                           ratio=statistics.median(calls) / (per_step_bound * statistics.median(steps)))
        print(name, json.dumps(paths[name]), flush=True)

    timed("transformers", get_engine("transformers").sampler(model, tok, batch_size=ROWS))
    timed("loop", get_engine("loop").sampler(model, tok))
    if get_engine("vllm").unavailable("smollm2") is None:
        for eager in ("1", "0"):
            os.environ["GRPO_LAB_VLLM_EAGER"] = eager
            engine = get_engine("vllm")
            engine.close()
            t = time.perf_counter()
            sample = engine.sampler(model, tok)
            start = time.perf_counter() - t
            timed("vllm (eager)" if eager == "1" else "vllm (compiled)", sample, start)
            t = time.perf_counter()
            engine.load_weights(model, tok)
            paths["vllm (eager)" if eager == "1" else "vllm (compiled)"]["handover_s"] = time.perf_counter() - t
    args.out.write_text(json.dumps(dict(machine=machine, paths=paths), indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())
