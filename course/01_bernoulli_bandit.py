# %% [markdown]
# # 01 — A Bernoulli bandit: where starvation comes from
#
# One prompt, solved with probability **p**. GRPO samples a **group** of G completions,
# scores each 0/1, and gives completion i the advantage
# $A_i = (r_i - \bar r) / (\mathrm{std}(r) + \epsilon)$, where std is the *sample* standard
# deviation, with G − 1 in the denominator (Bessel's correction, as TRL computes it), and
# $\epsilon = 10^{-4}$.
# When the group is all wrong or all right, every $A_i = 0$: the policy gets **no gradient**
# from that prompt. This notebook measures how often that happens.
#
# Every number below is computed in this notebook; cells that state a property assert it.

# %%
import numpy as np
import torch

import grpo_lab as gl
from grpo_lab import checks, viz, widgets

torch.manual_seed(0)
rng = np.random.default_rng(0)

# %% [markdown]
# ## 1. What group-mean centring does to each group
#
# Three groups of G = 4: all wrong, one lucky success, all right.

# %%
rewards = torch.tensor([0., 0, 0, 0,   1, 0, 0, 0,   1, 1, 1, 1])
adv = gl.compute_advantages(rewards, 4, "grpo")
print(adv.reshape(3, 4))
viz.group_advantages(rewards, 4, methods=("grpo", "drgrpo", "sign"))

# %%
# The claims of this section, checked:
assert torch.equal(adv[:4], torch.zeros(4)) and torch.equal(adv[8:], torch.zeros(4))  # degenerate: no signal
# one success of 4: mean 1/4, sample std sqrt((0.75**2 + 3 * 0.25**2) / 3) = 0.5, so (1 - 1/4) / 0.5 = 1.5
# (with the population std, dividing by G instead of G - 1, it would be 0.75 / 0.433 = 1.73)
assert abs(adv[4].item() - 3 / 2) < 1e-3
assert torch.equal(gl.sign(rewards, 4)[:4], -torch.ones(4))  # Sign still pushes an all-wrong group down

# %% [markdown]
# ## 2. The degeneracy rate, closed form against Monte Carlo
#
# The G rewards are i.i.d. Bernoulli(p), so
# $P(\text{degenerate}) = P(\text{all fail}) + P(\text{all pass}) = (1-p)^G + p^G$.

# %% [exercise-md]
# ### Exercise 01.1 — the degeneracy rate
# Write `my_degeneracy_rate(p, G)`: the probability that G i.i.d. Bernoulli(p) rewards are
# all equal. It must work for a float `p` and an int `G`. The check cell tells you the first
# case that differs.

# %% [exercise]
def my_degeneracy_rate(p, G):
    ### BEGIN SOLUTION
    return p**G + (1 - p) ** G
    ### END SOLUTION

# %% [check]
checks.check_degeneracy_rate(my_degeneracy_rate)

# %% [markdown]
# Monte Carlo: draw 20,000 groups for each p and count the degenerate ones. The library's
# `gl.degeneracy_rate` is the reference from here on.

# %%
G = 4
n_groups = 20_000
p_grid = np.linspace(0.05, 0.95, 10)
draws = rng.random((len(p_grid), n_groups, G)) < p_grid[:, None, None]
mc = (draws.all(-1) | ~draws.any(-1)).mean(-1)
se = np.sqrt(mc * (1 - mc) / n_groups)
closed = gl.degeneracy_rate(p_grid, G)
for p, m, c in zip(p_grid, mc, closed):
    print(f"p={p:.2f}  Monte Carlo {m:.4f}  closed form {c:.4f}")
viz.degeneracy_vs_p(G, p_grid, mc, se)

# %%
# every Monte Carlo estimate within 4 standard errors of the closed form
assert np.all(np.abs(mc - closed) <= 4 * np.maximum(se, 1e-4)), np.abs(mc - closed) / se

# %% [markdown]
# ## 3. The heatmap over (p, G)
#
# Larger groups starve less at moderate p. What about near p = 0, a prompt the model can barely
# solve? Predict before you look.

# %% [exercise-md]
# ### Exercise 01.2 — predict first
# Before running the next two cells: a prompt the model solves 1% of the time, in a group of
# G = 16. What fraction of its groups will be degenerate? Reason it out (no code that computes
# the formula) and return your number from `my_prediction()`; the check after the printout
# compares. A wrong guess is not an error.

# %% [exercise]
def my_prediction():
    ### BEGIN SOLUTION
    return 0.99**16  # all-fail dominates; about e^(-0.16) = 0.85
    ### END SOLUTION

# %% [markdown]
# The heatmap, then the numbers at p = 0.01.

# %%
ps = np.linspace(0, 1, 101)
Gs = np.array([2, 4, 8, 16, 32, 64])
viz.degeneracy_heatmap(ps, Gs)

# %%
rate_at_p001 = gl.degeneracy_rate(0.01, Gs)
print("degeneracy at p = 0.01:", dict(zip(Gs.tolist(), rate_at_p001.round(3).tolist())))
assert rate_at_p001[Gs.tolist().index(16)] > 0.85  # G = 16 still starves 85% of the time at p = 0.01
assert 0.45 < rate_at_p001[Gs.tolist().index(64)] < 0.6  # G = 64: still about half
assert gl.degeneracy_rate(0.5, 8) < 0.01  # but a p = 0.5 prompt almost never starves at G = 8

# %% [check]
checks.check_prediction(my_prediction, float(rate_at_p001[Gs.tolist().index(16)]),
                        "degenerate fraction at p = 0.01, G = 16", tol=0.05, fraction=True)

# %% [markdown]
# Near p = 0 larger groups help only slowly: $(1-p)^G \approx e^{-pG}$, so at p = 0.01 a group of
# 16 is still degenerate 85% of the time and a group of 64 about half the time (printed above);
# at p = 0 no G helps at all.
#
# ## 4. Explore
#
# The explorer samples a few groups at your p and G and shows the advantages under the
# chosen estimator. Executed headless (CI, a rendered page) it shows its static figure.

# %%
widgets.bandit_explorer(p=0.1, G=4, method="grpo")

# %% [markdown]
# **What we measured:** the degenerate fraction for a single prompt is exactly
# $p^G + (1-p)^G$ (Monte Carlo agrees within 4 s.e. at 10 values of p, 20,000 groups each);
# it is above 0.85 at p = 0.01 even with G = 16. Notebook 02 asks what happens over *many*
# prompts with different p.

# %% [exercise-md]
# ### Open question 01.3 — the ε in the denominator
# What advantage does an all-right group get, exactly, and what would it get without the
# $\epsilon = 10^{-4}$? Now take rewards that are not 0/1: a group scored 0.5000, 0.5001,
# 0.5000, 0.5001 by a noisy judge. What advantages does GRPO give it, and what does that say
# about std normalisation? (You may compute it with `gl.grpo`.)

# %% [answer]
# An all-right (or all-wrong) group has $r_i - \bar r = 0$ exactly and std 0, so
# $A_i = 0 / (0 + \epsilon) = 0$; without $\epsilon$ it is $0/0$, NaN, and one NaN advantage makes
# the whole loss NaN. For the noisy group the sample std is about $5.8 \times 10^{-5}$, comparable
# to $\epsilon$, and the advantages come out near ±0.32: a difference of $10^{-4}$ in the judge's
# score becomes a push over a third as large as a real success gets in a half-right 0/1 group (±0.87). Dividing by the group's std makes the
# advantage scale-free, which is also its danger: it amplifies whatever differences there are,
# noise included (notebook 03, section 3, shows the 0/1 version of this).
