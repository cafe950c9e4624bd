# %% [markdown]
# # 03 — Advantage estimators side by side
#
# | estimator | advantage of completion i | source |
# |---|---|---|
# | GRPO | $(r_i - \bar r)/(\mathrm{std} + \epsilon)$ | arXiv 2402.03300 |
# | Dr.GRPO | $r_i - \bar r$ | arXiv 2503.20783 |
# | RLOO | $r_i - $ mean of the other G − 1 | arXiv 2402.14740 |
# | Sign | $2r_i - 1$ | arXiv 2605.07689 |
# | AVSPO | GRPO with virtual rewards in the statistics | arXiv 2605.21125 |
# | DAPO | GRPO, degenerate groups dropped | arXiv 2503.14476 |
#
# std is the sample standard deviation (G − 1 in the denominator), as in TRL. One term before
# we start: the **ACR** (Advantage Collapse Rate, arXiv 2605.21125) of a batch is the fraction
# of its groups whose rewards have zero spread — the degenerate fraction of notebooks 01–02
# under another name. AVSPO switches its virtual samples on when the ACR exceeds a threshold.

# %%
import numpy as np
import torch

import grpo_lab as gl
from grpo_lab import checks, viz
from grpo_lab.checks import pass_at_G_gradient

# %% [markdown]
# ## 1. Every k-of-G composition
#
# For G = 4 and each number k of successes: the advantage a success gets, and a failure.

# %%
G = 4
methods = ["grpo", "drgrpo", "rloo", "sign", "avspo", "avspo_code", "dapo"]
table = {}
for m in methods:
    rows = []
    for k in range(G + 1):
        r = torch.tensor([[1.0] * k + [0.0] * (G - k)])
        a = gl.compute_advantages(r, G, m)[0]  # a one-group batch: ACR is 1 when it is degenerate
        rows.append([a[0].item() if k > 0 else np.nan, a[-1].item() if k < G else np.nan])
    table[m] = np.array(rows)
viz.advantage_table(G, methods, table)

# %%
# group-centred estimators give nothing to k = 0 or k = G; Sign and both AVSPOs do
for m in ("grpo", "drgrpo", "rloo", "dapo"):
    assert table[m][0, 1] == 0 and table[m][G, 0] == 0, m
assert table["sign"][0, 1] == -1 and table["sign"][G, 0] == 1
assert table["avspo"][0, 1] < 0 and table["avspo_code"][0, 1] < 0

# %% [exercise-md]
# ### Exercise 03.1 — write RLOO
# `my_rloo(r, G)` gets a `[B, G]` tensor and returns each completion's reward minus the mean of
# the **other** G − 1 rewards of its group.

# %% [exercise]
def my_rloo(r, G):
    ### BEGIN SOLUTION
    others = (r.sum(dim=1, keepdim=True) - r) / (G - 1)
    return r - others
    ### END SOLUTION

# %% [check]
checks.check_estimator(my_rloo, "rloo")

# %% [markdown]
# ## 2. The signal each estimator keeps on a realistic batch
#
# 256 prompts from the bimodal population of notebook 02 (half never solved), G = 4.

# %%
from grpo_lab.simulator import sample_success_rates

p = torch.as_tensor(sample_success_rates("bimodal", 256, seed=0, zero_frac=0.5))
gen = torch.Generator().manual_seed(0)
batch = (torch.rand(256, G, generator=gen, dtype=torch.float64) < p[:, None]).double()
stats = gl.collapse_rate(batch)
print(f"ACR {stats.acr:.2f}: {stats.all_fail} all-fail, {stats.all_pass} all-pass, {stats.mixed} mixed groups")
kept = gl.signal_kept(batch, methods=methods)
for m, s in kept.items():
    print(f"{m:11s} mean|A| {s.mean_abs:.3f}   A != 0 for {s.frac_nonzero:.0%} of completions")

# %%
assert abs(kept["grpo"].frac_groups_with_signal - stats.mixed / 256) < 1e-9  # GRPO: mixed groups only
assert kept["sign"].frac_nonzero == 1.0  # Sign: every completion
assert kept["avspo"].frac_nonzero > kept["grpo"].frac_nonzero  # ACR > 0.5 switches AVSPO's virtual samples on

# %% [markdown]
# ## 3. Why std normalisation is dangerous next to a degenerate group
#
# One success among G − 1 failures: a prompt the model "cannot" solve, sampled once lucky. How
# large an advantage does GRPO give that one success?

# %% [exercise-md]
# ### Exercise 03.2 — predict first
# One success among 15 failures (G = 16). Before the next cell prints it: what GRPO advantage
# does the success get? Work it out by hand from the sample std (no code that calls an
# estimator) and return it from `my_prediction()`.

# %% [exercise]
def my_prediction():
    ### BEGIN SOLUTION
    return 15 / 16 / (1 / 16**0.5)  # (1 - 1/G) / std, with std = 1/sqrt(G) for one success: 3.75
    ### END SOLUTION

# %%
for g in (4, 8, 16, 64):
    r = torch.tensor([1.0] + [0.0] * (g - 1))
    print(f"G={g:2d}: GRPO {gl.grpo(r, g)[0]:.2f}   Dr.GRPO {gl.drgrpo(r, g)[0]:.2f}   "
          f"(G-1)/sqrt(G) = {(g - 1) / np.sqrt(g):.2f}")
    assert abs(gl.grpo(r, g)[0].item() - (g - 1) / np.sqrt(g)) < 1e-2
    assert gl.drgrpo(r, g)[0].item() < 1

# %% [check]
checks.check_prediction(my_prediction, gl.grpo(torch.tensor([1.0] + [0.0] * 15), 16)[0].item(),
                        "GRPO advantage of one success in G = 16", tol=0.1)

# %% [markdown]
# The lone success gets $(G-1)/\sqrt{G}$ under GRPO, growing without bound in G, while Dr.GRPO's is
# $(G-1)/G < 1$: a single lucky sample of a prompt the model "cannot" solve gets the biggest push of
# the whole batch.

# %% [markdown]
# ## 4. Sign performs pass@G failure descent
#
# For a softmax policy with success probability $p$, consider the Sign loss
# $L = -\frac{1}{G}\sum_i A_i \log\pi(a_i)$ on **all-fail groups only** (every $A_i = -1$).
# arXiv 2605.07689's identity: $\mathbb{E}[\nabla L \cdot 1\{\text{all fail}\}] = -\frac{1}{G}\nabla\,\mathrm{pass@}G$,
# with $\mathrm{pass@}G = 1 - (1-p)^G$. So descending the Sign loss on failures raises the
# probability that a group contains a success.
#
# Exact check with autograd: the expectation is $(1-p)^{G-1}\sum_{a\ \mathrm{wrong}}\pi(a)\nabla\log\pi(a)$,
# written as a surrogate whose weights are held constant.

# %%
logits = torch.tensor([-1.0, 0.3, 0.0, -0.5], dtype=torch.float64, requires_grad=True)  # answer 0 correct
pi = torch.softmax(logits, 0)
weights = ((1 - pi[0]) ** (G - 1) * pi[1:]).detach()
surrogate = (weights * torch.log(pi[1:])).sum()  # E[1{all fail} * L], A = -1 folded into the sign of L
surrogate.backward()
exact = logits.grad.clone()
target = -pass_at_G_gradient(logits, G) / G
print("E[grad Sign loss; all fail] =", exact.numpy().round(5))
print("-(1/G) grad pass@G          =", target.numpy().round(5))
assert torch.allclose(exact, target, atol=1e-12)

# %% [exercise-md]
# ### Exercise 03.3 — the same identity by sampling
# Write `my_failure_descent(logits, G, n_groups, generator)`: sample `n_groups` groups of G
# answers from `softmax(logits)` (answer 0 correct), keep the all-fail groups, and return the
# gradient w.r.t. `logits` of $\frac{1}{n}\sum_{\text{groups}} 1\{\text{all fail}\}\cdot L_{\text{Sign}}$.
# Use `gl.sign` for the advantages.

# %% [exercise]
def my_failure_descent(logits, G, n_groups, generator):
    ### BEGIN SOLUTION
    z = logits.detach().clone().requires_grad_(True)
    logp = torch.log_softmax(z, 0)
    actions = torch.multinomial(logp.exp().detach(), n_groups * G, replacement=True, generator=generator)
    actions = actions.view(n_groups, G)
    rewards = (actions == 0).double()
    fail = rewards.sum(1) == 0
    adv = gl.sign(rewards, G)
    loss = -(adv * logp[actions]).mean(1)  # per-group Sign loss
    (loss * fail).mean().backward()
    return z.grad
    ### END SOLUTION

# %% [check]
checks.check_failure_descent(my_failure_descent, G=G)

# %% [markdown]
# Note what the identity also says: $\nabla\,\mathrm{pass@}G = G(1-p)^{G-1}\nabla p$ and for a
# softmax $\nabla p \propto p$. **The push Sign gives an all-fail prompt is proportional to its
# success probability.** A prompt at p ≈ 0 barely moves under Sign either; notebook 04 measures
# what this means for training.

# %%
for p0 in (0.3, 0.03, 0.003):
    z = torch.tensor([np.log(p0), np.log(1 - p0)], dtype=torch.float64)
    g = pass_at_G_gradient(z, G)
    print(f"p={p0:<6} |grad pass@G| = {torch.linalg.vector_norm(g):.5f}")
small = torch.linalg.vector_norm(pass_at_G_gradient(torch.tensor([np.log(0.003), np.log(0.997)]), G))
assert small < 0.02

# %% [markdown]
# ## 5. AVSPO: two readings of the paper, and a variant attributed to its code
#
# The paper adds K stratified virtual rewards $r_{max}(1 - (k-1)/K)$ to a homogeneous group's
# statistics. If $r_{max}$ is the **group's own maximum**, an all-wrong group has $r_{max} = 0$:
# its virtual rewards are 0 too, and it stays at zero advantage. If $r_{max}$ is the **reward
# scale's maximum** (1), all-wrong groups are pushed down. A third variant, `avspo_code`, does neither:
# one virtual sample with the opposite reward. grpo-lab's founding specification attributes it to the
# authors' code, which nobody here could read (the page the paper points to held no code when checked,
# November 2026), so treat it as a documented variant, not as what the authors ran.

# %%
batch = torch.tensor([[0.0] * 4, [0.0] * 4, [0.0] * 4, [1.0, 0, 0, 0]])  # ACR 0.75
readings = {
    "paper, r_max = group max": gl.avspo(batch, 4, r_max="group"),
    "paper, r_max = scale max": gl.avspo(batch, 4, r_max="scale"),
    "variant attributed to the code": gl.avspo_code(batch, 4),
    "GRPO": gl.grpo(batch, 4),
}
for name, a in readings.items():
    print(f"{name:30s} all-wrong group: {a[0].numpy().round(3)}   mixed group: {a[3].numpy().round(3)}")

# %%
assert torch.equal(readings["paper, r_max = group max"][0], torch.zeros(4))
code = readings["variant attributed to the code"]
assert (readings["paper, r_max = scale max"][0] < 0).all() and (code[0] < 0).all()
assert not torch.allclose(readings["paper, r_max = scale max"][0], code[0])
assert torch.allclose(code[3], readings["GRPO"][3])  # mixed groups: plain GRPO

# %% [markdown]
# **What we measured:** on a 256-prompt bimodal batch at G = 4, group-centred estimators
# give a signal only to the mixed groups (printed above), Sign to every completion. The lone
# success's GRPO advantage is $(G-1)/\sqrt G$ (1.5 at G = 4, 7.9 at G = 64). The failure-descent
# identity holds exactly (autograd, to 1e-12) and, in exercise 03.3's check, by sampling
# (200,000 groups); it shows
# Sign's push on a failing prompt shrinks with its success probability. The two AVSPO readings
# and the variant attributed to the code give three different advantages to the same all-wrong group.

# %% [exercise-md]
# ### Open question 03.4 — rewards that are not 0/1
# Suppose the reward becomes 10 for a right answer and 0 for a wrong one, or 1 for right and
# 0.5 for wrong (a partial-credit grader). For each estimator in the table at the top, does the
# advantage change, and would you have to change the learning rate? What does Sign do?

# %% [answer]
# GRPO divides by the group std, so it is unchanged (up to $\epsilon$) by any shift or positive
# rescaling of the rewards: same advantages, same learning rate. Dr.GRPO and RLOO subtract a
# baseline, so a shift changes nothing, but a rescaling multiplies every advantage by the same
# factor: ×10 for the 0/10 reward and ×0.5 for the 0.5/1 one, which is a ×10 or ×0.5 learning
# rate in disguise. DAPO follows GRPO; AVSPO's virtual rewards are placed relative to a
# reward maximum (`reward_max`), which has to be rescaled with the reward. Sign, $2r - 1$, is only defined for 0/1
# rewards; `grpo_lab` refuses anything else with an error rather than guessing a threshold,
# because "right" has to be decided by the grader, not by the estimator.
