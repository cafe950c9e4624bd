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
from grpo_lab.stats import mean_ci

FULL = os.environ.get("GRPO_LAB_FULL") == "1"
N_PROMPTS, SEEDS, STEPS, G = (10_000, 5, 200, 4) if FULL else (2_000, 3, 150, 4)
METHODS = list(gl.ESTIMATORS)
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
# ## 1. The same budget for every estimator
#
# Half the prompts are "never solved" (p = 0.001), the rest Beta(2, 2). Learning rate 1.

# %%
p0 = sample_success_rates("bimodal", N_PROMPTS, seed=0, zero_frac=0.5, p_floor=1e-3)
never = p0 < 0.01


def run(method, lr, seeds=SEEDS, p=p0, **kw):
    return [simulate(p, SimConfig(method=method, G=G, steps=STEPS, lr=lr, seed=s, **kw)) for s in range(seeds)]


t0 = time.perf_counter()
main = {m: run(m, 1.0) for m in METHODS}
print(f"{len(METHODS) * SEEDS} runs in {time.perf_counter() - t0:.1f} s")
viz.training_curves(main, "success", "mean success probability")

# %%
viz.training_curves(main, "all_fail", "fraction of groups all wrong")

# %%
viz.training_curves(main, "all_pass", "fraction of groups all right")


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
viz.success_histograms(p0, after)

# %%
ks = [1, 2, 4, 8, 16, 32, 64]
curves = {"before": [expected_pass_at_k(p0, k) for k in ks]}
curves.update({m: [expected_pass_at_k(runs[0].p_final, k) for k in ks] for m, runs in main.items()})
viz.passk_curves(ks, curves)

# %%
for m in METHODS:
    gain1 = curves[m][0] - curves["before"][0]
    gain64 = curves[m][-1] - curves["before"][-1]
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
for lr in lrs:
    res = main if lr == 1.0 else {m: run(m, lr) for m in METHODS}
    rows = summary(res)
    show(rows, f"lr = {lr}")
    for m in METHODS:
        by_lr[m].append(rows[m][0])
viz.sweep(lrs, by_lr, "learning rate", "final mean success (95% CI)")

# %%
best = {m: lrs[int(np.argmax([r[0] for r in by_lr[m]]))] for m in METHODS}
print("best lr per estimator:", best)
ranking_at = {lr: sorted(METHODS, key=lambda m: -by_lr[m][i][0]) for i, lr in enumerate(lrs)}
for lr, order in ranking_at.items():
    print(f"lr={lr}: {' > '.join(order)}")
assert len({tuple(order) for order in ranking_at.values()}) > 1  # the ranking changes with the learning rate

# %% [markdown]
# ## 4. Matching the update norm
#
# To separate the *direction* an estimator picks from the *size* of its step, rescale every
# update to the same global L2 norm (0.5 per step, for every estimator).

# %%
matched = {m: run(m, 1.0, match_norm=0.5) for m in METHODS}
matched_rows = summary(matched)
show(matched_rows, "matched update norm 0.5")
viz.training_curves(matched, "success", "mean success, matched update norm")

# %%
for m, runs in matched.items():
    norms = np.concatenate([r.update_norm for r in runs])
    assert np.allclose(norms[norms > 0], 0.5), m  # the control worked: equal step sizes
spread = {name: max(v[0][0] for v in rows.values()) - min(v[0][0] for v in rows.values())
          for name, rows in (("lr = 3", summary({m: run(m, 3.0) for m in METHODS})), ("matched", matched_rows))}
print("spread of final success across estimators:", {k: round(v, 3) for k, v in spread.items()})
assert spread["matched"] < spread["lr = 3"]  # matching step sizes brings the estimators together

# %% [markdown]
# ## 5. How hopeless is "never solved"?
#
# Move the never-solved prompts from p = 0.001 to p = 0.01 and 0.05 (lr = 1).

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

# %% [markdown]
# **What we measured** (numbers printed above, 95% t-intervals over seeds): at lr = 1 every
# estimator improves the solvable prompts and none rescues prompts at p = 0.001; every estimator
# raises pass@1 more than pass@64. The ranking of the estimators changes with the learning
# rate (§3), and with the update norm matched the spread between them shrinks, so a raw
# comparison at one lr mostly measures step size. Whether the never-solved prompts are rescued
# depends first on how close to zero they start: none is rescued from p = 0.001, all are from
# p = 0.05, and only in between does the estimator make a difference. This is a tabular toy:
# it shows mechanisms, not which estimator wins on GSM8K (notebooks 05–06).
