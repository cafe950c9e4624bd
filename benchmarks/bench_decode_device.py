"""The decode loop (issue 84, :mod:`grpo_lab.decoding`) on one device, prepared for a GPU draw: its canary (each
sampled token's log-prob against a forward pass of the same model, a LoRA adapter with B != 0 included), then the
time of one study-3 step's generation (16 rows x 48 new tokens, SmolLM2-135M-Instruct, LoRA r = 16, float32) by the
loop and by ``model.generate``, beside the weight-streaming bound measured on the same device (the bytes of the
weights over a measured copy bandwidth, per decoded token). The first call of each path warms up and is not counted.

    python benchmarks/bench_decode_device.py OUT.json                  # on a GPU (default --device cuda)
    python benchmarks/bench_decode_device.py OUT.json --device cpu --calls 1

A speed target is a ratio in one run (``ratio_to_bound``), never a timed test. On the GPU machine it needs the
wheel's GGUF (docs/gpu.md says how it travels). Executed on a CPU only so far (2026-11-30, docs/gpu.md).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch
from machine import copy_bandwidth, synchronize  # benchmarks/machine.py

TASK = "gym:chain_sum:min_terms=2,max_terms=2,min_digits=1,max_digits=2"  # study 3's
ROWS, NEW_TOKENS = 16, 48


def bound(model, device) -> dict:
    """The weight-streaming bound per decoded token: the weights' bytes over a copy bandwidth measured here."""
    bandwidth = copy_bandwidth(device, 256 * 2**20, copies=5)  # bytes read and written per second
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    return {"bandwidth_gbs": bandwidth / 1e9, "weights_mb": weights / 1e6, "bound_ms_per_token": weights / bandwidth * 1e3}


def canary(model, loop, prompts, device) -> float:
    """The largest gap, in nats, between a sampled token's log-prob from the loop and a forward pass's."""
    completions, logps, _ = loop(prompts, NEW_TOKENS, generator=torch.Generator(device=device).manual_seed(0))
    worst = 0.0
    with torch.no_grad():
        for p, c, lp in zip(prompts, completions, logps):
            if not c:
                continue
            logits = model(input_ids=torch.tensor([p + c], device=device)).logits[0].float()
            ref = torch.log_softmax(logits[len(p) - 1:-1], -1).gather(1, torch.tensor(c, device=device)[:, None])
            worst = max(worst, float((ref.squeeze(1) - torch.tensor(lp, device=device)).abs().max()))
    return worst


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--calls", type=int, default=5, help="timed calls per path, after one warm-up call")
    args = ap.parse_args(argv)
    device = torch.device(args.device)
    if device.type == "cpu":
        torch.set_num_threads(1)  # beside other work, two threads run far slower than one
    from grpo_lab import runner
    from grpo_lab.config import RunConfig
    from grpo_lab.decoding import DecodeLoop
    from grpo_lab.generation import get_engine

    cfg = RunConfig(policy="smollm2", task=TASK, lora_r=16, max_completion_length=NEW_TOKENS, eval_problems=ROWS // 4)
    model, tok, _ = runner.policy_adapter(cfg).load(cfg, lora=True)
    torch.manual_seed(0)
    with torch.no_grad():  # an adapter as after training: B != 0, so a loop that ignored it would fail the canary
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.02)
    model.to(device).eval()
    texts = [p.prompt for p in runner.as_prompted(tok, runner.eval_problems(cfg), runner.system_prompt(cfg))]
    prompts = [ids for t in texts for ids in [tok(t, add_special_tokens=False)["input_ids"]] * (ROWS // len(texts))]
    out = {"device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
           "torch": torch.__version__, "dtype": str(next(model.parameters()).dtype),
           "tf32": torch.backends.cuda.matmul.allow_tf32, **bound(model, device)}
    print(json.dumps(out), flush=True)
    loop = DecodeLoop(model, tok)
    out["canary_worst_nats"] = canary(model, loop, prompts, device)
    print("canary", out["canary_worst_nats"], flush=True)

    def timed(name, call):
        seconds, steps = [], 0
        for i in range(args.calls + 1):
            synchronize(device)
            t = time.perf_counter()
            steps = call(i)
            synchronize(device)
            seconds.append(time.perf_counter() - t)
        med = statistics.median(seconds[1:])
        out[name] = {"call_s": med, "calls": seconds, "steps": steps, "ms_per_step": med / steps * 1e3,
                     "ratio_to_bound": med / steps * 1e3 / out["bound_ms_per_token"]}
        print(name, json.dumps(out[name]), flush=True)

    def by_loop(i):
        completions, _, _ = loop(prompts, NEW_TOKENS, generator=torch.Generator(device=device).manual_seed(i))
        return max(map(len, completions))

    sample = get_engine("transformers").sampler(model, tok, batch_size=ROWS)

    def by_generate(i):
        got = sample(texts, ROWS // len(texts), max_new_tokens=NEW_TOKENS, seed=i, truncated=[])
        return min(NEW_TOKENS, max(len(tok(c, add_special_tokens=False)["input_ids"]) for cs in got for c in cs))

    timed("loop", by_loop)
    timed("generate", by_generate)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
