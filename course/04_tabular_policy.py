# %% [markdown]
# # 04 — A tabular policy under GRPO: does fixing starvation help?
#
# Many prompts, each with its own softmax policy over 8 answers (answer 0 correct), initial
# success rates from the bimodal population of notebook 02. Every estimator trains the
# **same** prompts with the **same** optimizer (SGD on the logits), learning rate, budget
# and seeds; only the advantage changes. We then vary the learning rate, match update norms,
# and vary how hopeless the "never solved" prompts are. Every figure and table below is
# computed here; set `GRPO_LAB_FULL=1` for the larger run (10,000 prompts, 5 seeds).

# %%
import os
import time

import numpy as np
import torch

import grpo_lab as gl
from grpo_lab import checks, viz
from grpo_lab.simulator import SimConfig, expected_pass_at_k, sample_success_rates, simulate
from grpo_lab.stats import mean_ci, separated

FULL = os.environ.get("GRPO_LAB_FULL") == "1"
N_PROMPTS, SEEDS, STEPS, G = (10_000, 5, 200, 4) if FULL else (2_000, 3, 150, 4)
# The estimators of lessons 01-03 and DAPO. grpo_lab.ESTIMATORS also holds GPG and MaxRL (their formulas and sources
# are in grpo_lab/advantages.py), which rescale the batch by how many groups carry a signal: not part of this lesson.
METHODS = ["grpo", "drgrpo", "rloo", "sign", "avspo", "avspo_code", "dapo"]
assert set(METHODS) <= set(gl.ESTIMATORS)
print(f"{N_PROMPTS} prompts, G={G}, {STEPS} steps, seeds {list(range(SEEDS))}, estimators {METHODS}")

# %% [exercise-md]
# ### Exercise 04.1 — the simulator's update
# For a tabular softmax, $\nabla_z \log\pi(a) = \mathrm{onehot}(a) - \pi$. Write
# `my_policy_gradient(logits, actions, adv)` for `logits [P, A]`, `actions [P, G]` and
# `adv [P, G]`: the gradient of $\frac{1}{G}\sum_i A_i\log\pi(a_i)$ for every prompt, without
# autograd and without a Python loop over prompts.

# %% [exercise]
def my_policy_gradient(logits, actions, adv):
    ### BEGIN SOLUTION
    pi = torch.softmax(logits, dim=1)
    hits = torch.zeros_like(logits).scatter_add_(1, actions, adv)
    return (hits - adv.sum(1, keepdim=True) * pi) / actions.shape[1]
    ### END SOLUTION

# %% [check]
checks.check_policy_gradient(my_policy_gradient)

# %% [markdown]
# **Your update drives the simulator.** Every run in this notebook below uses the policy
# gradient of exercise 04.1 when you have written it (`SimConfig(gradient_fn=...)`); in the
# lesson, or while the exercise is unsolved, the library's `policy_gradient` stands in. The next
# cell checks, on one short run, that both give the same training curve.

# %%
try:
    my_policy_gradient(torch.zeros(1, 2), torch.zeros(1, 2, dtype=torch.long), torch.zeros(1, 2))  # noqa: F821
    GRADIENT, used = my_policy_gradient, "your my_policy_gradient"  # noqa: F821
except (NameError, NotImplementedError):
    GRADIENT, used = None, "the library's policy_gradient (exercise 04.1 not solved here)"
p_check = sample_success_rates("bimodal", 200, seed=0, zero_frac=0.5, p_floor=1e-3)
ours = simulate(p_check, SimConfig(method="grpo", G=4, steps=20, seed=0, gradient_fn=GRADIENT))
ref = simulate(p_check, SimConfig(method="grpo", G=4, steps=20, seed=0))
assert np.allclose(ours.success, ref.success, atol=1e-6) and np.allclose(ours.p_final, ref.p_final, atol=1e-6)
print(f"the simulator runs with {used}; 20 steps agree with the library's")

# %% [markdown]
# ## 1. The same budget for every estimator
#
# Half the prompts are "never solved" (p = 0.001), the rest Beta(2, 2). Learning rate 1.

# %%
p0 = sample_success_rates("bimodal", N_PROMPTS, seed=0, zero_frac=0.5, p_floor=1e-3)
never = p0 < 0.01


def run(method, lr, seeds=SEEDS, p=p0, **kw):
    return [simulate(p, SimConfig(method=method, G=G, steps=STEPS, lr=lr, seed=s, gradient_fn=GRADIENT, **kw))
            for s in range(seeds)]


t0 = time.perf_counter()
main = {m: run(m, 1.0) for m in METHODS}
print(f"{len(METHODS) * SEEDS} runs in {time.perf_counter() - t0:.1f} s")
SETTING_ONE = f"tabular policy, {N_PROMPTS} prompts, G={G}, lr 1"  # a figure of one seed
SETTING = f"{SETTING_ONE}, {SEEDS} seeds"
viz.training_curves(main, "success", "mean success probability", title=f"Mean success over training ({SETTING})")

# %%
viz.training_curves(main, "all_fail", "fraction of groups all wrong", title=f"All-fail groups ({SETTING})")

# %%
viz.training_curves(main, "all_pass", "fraction of groups all right", title=f"All-pass groups ({SETTING})")


# %%
def summary(results):
    rows = {}
    for m, runs in results.items():
        rows[m] = (mean_ci([r.success[-1] for r in runs]), mean_ci([(r.p_final[never] < 0.01).mean() for r in runs]))
    return rows


def show(rows, title):
    print(title)
    print(f"{'estimator':11s} {'final success (95% CI)':>26s} {'never-solved still < 0.01':>28s}")
    for m, ((s, slo, shi), (n, nlo, nhi)) in rows.items():
        print(f"{m:11s} {s:8.3f} [{slo:.3f}, {shi:.3f}] {n:14.2f} [{nlo:.2f}, {nhi:.2f}]")


main_rows = summary(main)
show(main_rows, "lr = 1.0")

# %%
start = {m: runs[0].success[0] for m, runs in main.items()}
assert max(start.values()) - min(start.values()) < 1e-12  # every estimator starts from the same policy
for m, ((s, lo, hi), (stuck, _, _)) in main_rows.items():
    assert lo <= s <= hi
    assert s > start[m]  # every estimator improves the solvable prompts
    assert stuck > 0.9, m  # ... and at lr = 1 none of them rescues the never-solved prompts

# %% [markdown]
# At this learning rate **no estimator rescues the never-solved prompts**, Sign and AVSPO
# included: notebook 03's identity says Sign's push on an all-fail prompt is proportional to
# its success probability, and here that is 0.001. The gain comes from the prompts that were
# already sometimes solved.

# %% [markdown]
# ## 2. Per-prompt success before and after; pass@k

# %%
after = {m: runs[0].p_final for m, runs in main.items()}
viz.success_histograms(p0, after, title=f"Per-prompt success after {STEPS} steps, seed 0 (grey: before; {SETTING_ONE})")

# %%
ks = [1, 2, 4, 8, 16, 32, 64]
curves = {"start": [expected_pass_at_k(p0, k) for k in ks]}
curves.update({m: [expected_pass_at_k(runs[0].p_final, k) for k in ks] for m, runs in main.items()})
viz.passk_curves(ks, curves, title=f"Exact pass@k after training, seed 0 ({SETTING_ONE})")

# %%
for m in METHODS:
    gain1 = curves[m][0] - curves["start"][0]
    gain64 = curves[m][-1] - curves["start"][-1]
    print(f"{m:11s} pass@1 {gain1:+.3f}   pass@64 {gain64:+.3f}")
    assert gain1 > gain64  # training sharpens what is already reachable more than it widens it

# %% [markdown]
# pass@k is exact here ($1 - (1-p)^k$ per prompt). Every estimator raises pass@1 more than
# pass@64: in this model RL compresses search over reachable answers rather than expanding
# what can be reached at all (the reading of arXiv 2504.13837; notebook 07 revisits it).
# Whether an estimator *lowers* pass@64 (concentrating the policy on fewer answers) is printed
# above for this run; it is not asserted, because it changes sign with the setting.

# %% [markdown]
# ## 3. The learning rate matters more than the estimator — or does it?
#
# The same comparison at several learning rates. Sign's advantages are ±1 and not normalised,
# GRPO's are divided by the group std, Dr.GRPO's are smaller than 1: the same lr means a
# different step size for each.

# %%
lrs = [0.3, 1.0, 3.0]
by_lr = {m: [] for m in METHODS}
res_by_lr = {}
for lr in lrs:
    res_by_lr[lr] = res = main if lr == 1.0 else {m: run(m, lr) for m in METHODS}
    rows = summary(res)
    show(rows, f"lr = {lr}")
    for m in METHODS:
        by_lr[m].append(rows[m][0])
viz.sweep(lrs, by_lr, "learning rate", "final mean success", n_seeds=SEEDS,
          title=f"Tabular policy: final mean success against the learning rate (G={G}, {STEPS} steps)")

# %%
# A ranking is read only from intervals that do not touch: "a > b at this lr" needs a's lowest plausible
# value above b's highest (grpo_lab.stats.separated). A reversal is a pair ordered one way at one lr and
# the other way at another, both times with separated intervals.
final = {lr: {m: [r.success[-1] for r in res[m]] for m in METHODS} for lr, res in res_by_lr.items()}
above = {lr: {(a, b) for a in METHODS for b in METHODS if a != b and separated(f[a], f[b]) == "a"}
         for lr, f in final.items()}
reversals = sorted({(a, b, lo, hi) for lo in lrs for hi in lrs if lo < hi
                    for (a, b) in above[lo] if (b, a) in above[hi]})
def gap(a, b, lr):
    return float(np.mean(final[lr][a]) - np.mean(final[lr][b]))


for a, b, lo, hi in reversals:
    print(f"{a} above {b} at lr {lo} (by {gap(a, b, lo):.4f}), {b} above {a} at lr {hi} (by {gap(b, a, hi):.4f}); "
          "non-overlapping 95% intervals both times")
assert reversals  # the ranking really changes with the learning rate, beyond the seed noise
small = [(a, b, lo, hi) for a, b, lo, hi in reversals if max(gap(a, b, lo), gap(b, a, hi)) < 0.01]
print(f"{len(small)} of {len(reversals)} reversals are by less than 0.01 in mean success at both learning rates")
assert ("sign", "grpo", 0.3, 1.0) in reversals or ("sign", "grpo", 0.3, 3.0) in reversals

# %% [markdown]
# ## 4. Matching the update norm
#
# To separate the *direction* an estimator picks from the *size* of its step, rescale every
# update to the same global L2 norm (0.5 per step, for every estimator).

# %%
matched = {m: run(m, 1.0, match_norm=0.5) for m in METHODS}
matched_rows = summary(matched)
show(matched_rows, "matched update norm 0.5")
viz.training_curves(matched, "success", "mean success", title=f"Matched update norm 0.5 per step ({SETTING})")

# %%
for m, runs in matched.items():
    norms = np.concatenate([r.update_norm for r in runs])
    assert np.allclose(norms[norms > 0], 0.5), m  # the control worked: equal step sizes
spread = {name: max(v[0][0] for v in rows.values()) - min(v[0][0] for v in rows.values())
          for name, rows in (("lr = 1", main_rows), ("lr = 3", summary(res_by_lr[3.0])), ("matched", matched_rows))}
print("spread of final success across estimators:", {k: round(v, 3) for k, v in spread.items()})
print("mean final success, matched runs:", round(np.mean([v[0][0] for v in matched_rows.values()]), 3),
      "vs lr = 1:", round(np.mean([v[0][0] for v in main_rows.values()]), 3))
# The matched runs start from the same lr = 1; against that baseline matching does NOT bring the estimators
# together, it spreads them (and every estimator ends lower: a norm of 0.5 is a different step size).
assert spread["matched"] > spread["lr = 1"]
assert max(v[0][0] for v in matched_rows.values()) < min(v[0][0] for v in main_rows.values())  # all end lower
assert spread["matched"] < spread["lr = 3"]  # ... though much less spread than at lr = 3

# %% [markdown]
# At lr = 3 something else happens: some never-solved prompts (p = 0.001) are rescued, by some
# estimators only. The fraction of them above p = 0.5 after training:

# %%
rescued_lr3 = {m: mean_ci([(r.p_final[never] > 0.5).mean() for r in res_by_lr[3.0][m]]) for m in METHODS}
print("rescued at lr = 3:", ", ".join(f"{m} {v[0]:.2f} [{max(v[1], 0):.2f}, {min(v[2], 1):.2f}]"
                                        for m, v in rescued_lr3.items()))
assert rescued_lr3["grpo"][1] > rescued_lr3["sign"][2]  # GRPO rescues some, separated from Sign
assert rescued_lr3["sign"][0] < 0.01  # Sign rescues none

# %% [markdown]
# ## 5. How hopeless is "never solved"?
#
# Move the never-solved prompts from p = 0.001 to p = 0.01 and 0.05 (lr = 1).

# %% [exercise-md]
# ### Exercise 04.2 — predict first
# At lr = 1 no estimator lifted a p = 0.001 prompt above 0.5. Start those prompts at p = 0.05
# instead, same budget. Before running the next cell: what fraction of them will GRPO lift above
# 0.5? Return your number from `my_prediction()`.

# %% [exercise]
def my_prediction():
    ### BEGIN SOLUTION
    # at G = 4, p = 0.05 gives a mixed group about 19% of the time, and every success is amplified
    return 0.9
    ### END SOLUTION

# %%
floors = [0.001, 0.01, 0.05]
by_floor = {}
for fl in floors:
    pf = sample_success_rates("bimodal", N_PROMPTS, seed=0, zero_frac=0.5, p_floor=fl)
    low = pf < 0.1
    by_floor[fl] = {m: mean_ci([(r.p_final[low] > 0.5).mean() for r in run(m, 1.0, p=pf)]) for m in METHODS}
    print(f"p_floor={fl}: fraction of low prompts above 0.5 after training: " +
          ", ".join(f"{m} {v[0]:.2f}" for m, v in by_floor[fl].items()))

# %%
assert all(v[0] < 0.1 for v in by_floor[0.001].values())  # from p = 0.001, no estimator rescues them
assert all(v[0] > 0.9 for v in by_floor[0.05].values())  # from p = 0.05, every estimator does
mid = {m: v[0] for m, v in by_floor[0.01].items()}
print(f"at p_floor = 0.01 the estimators differ: {min(mid, key=mid.get)} {min(mid.values()):.2f} "
      f"... {max(mid, key=mid.get)} {max(mid.values()):.2f}")

# %% [check]
checks.check_prediction(my_prediction, by_floor[0.05]["grpo"][0], "GRPO: share of p = 0.05 prompts lifted above 0.5",
                        tol=0.15, fraction=True)

# %% [markdown]
# **What we measured** (numbers printed above, 95% t-intervals over 3 seeds): at lr = 1 every
# estimator improves the solvable prompts and none rescues prompts at p = 0.001; every estimator
# raises pass@1 more than pass@64. The ranking of the estimators changes with the learning rate
# beyond the seed noise (§3: Sign is above GRPO at lr 0.3 and below it at lr 1, with intervals
# apart both times): statistically separable, and practically nothing at lr 0.3 and 1, where the
# gaps are a few thousandths of mean success (printed in §3; the seeds share the prompts' starting
# rates, so the intervals are very narrow). Only at lr 3 are the gaps large. Matching the update norm (§4) does **not** bring the estimators together
# relative to the same base lr of 1: their spread grows (printed above), and all of them end
# lower, so at a matched step size the direction an estimator picks does matter here; only
# against lr = 3, where the step sizes differ most, is the matched spread smaller.
#
# The most interesting result is at lr = 3: GRPO (and DAPO, which is identical here) rescues
# about a fifth of the never-solved prompts and Sign none. This is notebook 03's warning turned
# around: when a p = 0.001 prompt's group happens to contain its one success, GRPO's std
# normalisation gives that success the largest advantage any group can produce, (G−1)/√G, and
# with a large step that single event lifts the prompt; Sign gives the same success only +1 and
# its all-fail push lowers the sampled wrong answers without pointing at the right one. The same
# mechanism is what makes GRPO unstable elsewhere, so this is not a recommendation.
# Whether the never-solved prompts are rescued depends first on how close to zero they start:
# none is rescued from p = 0.001 at lr = 1, all are from p = 0.05, and only in between does the
# estimator make a difference. This is a tabular toy: it shows mechanisms, not which estimator
# wins on GSM8K (notebooks 05–06).

# %% [exercise-md]
# ### Open question 04.3 — a fair comparison
# Section 3 compared estimators at the same learning rate, section 4 at the same update norm,
# and the two gave different pictures. Why is "same learning rate" not the same step for every
# estimator, and how would you design a comparison whose ranking you would trust?

# %% [answer]
# The step is the learning rate times the gradient, and the gradient's size depends on the
# estimator: Sign's advantages are ±1 on every completion, GRPO's are divided by the group std
# (up to $(G-1)/\sqrt G$ for a lone success), Dr.GRPO's are below 1 and zero on degenerate
# groups. The same lr is therefore a different effective step for each, and section 3 partly
# ranks step sizes. Matching the norm fixes the size but imposes one schedule on all. A
# comparison worth trusting sweeps the learning rate for *each* estimator over the same grid,
# with the same budget, prompts and seeds, reports the whole sweep with intervals, and compares
# each estimator at its own best lr (chosen on held-out prompts, not on the reported ones). A
# ranking then means "best achievable in this budget", and the sweep shows how fragile it is.
