# %% [markdown]
# # 07 — pass@k: does RL compress search or expand capacity?
#
# RL with verifiable rewards can raise pass@1 in two ways: by making the model *find* more
# reliably what it could already sample (search compression: pass@k at large k stays put or
# falls), or by making it solve problems it could not solve at any k (capacity expansion:
# pass@k rises at every k). arXiv 2504.13837 reports mostly the first for RLVR; arXiv
# 2605.07689 argues that fixed-reference advantages such as Sign push on never-solved
# prompts and could do the second. pass@k curves before and after training tell them apart —
# if pass@k is estimated without bias, and with its uncertainty.
#
# Data: the tiny-LM comparisons of notebook 05, made by `grpo-lab compare` (8 methods × 3
# seeds, 150 steps, 300 evaluation problems (not held out: lesson 05) × 16 samples; commands and dates printed below) and
# shipped in the package; GSM8K results from notebook 06 when a `results/gsm8k` directory
# exists (only after a GPU run).

# %%
import json
from importlib import resources

import numpy as np
from IPython.display import display

from grpo_lab import checks, viz
from grpo_lab.compare import read_config
from grpo_lab.io import display_path, results_home, run_name
from grpo_lab.passk import naive_best_of_k, pass_at_k, pass_at_k_curve
from grpo_lab.stats import change_vs_start, mean_ci_columns, separated

DATA = json.loads((resources.files("grpo_lab") / "data" / "tiny_lm_passk.json").read_text())
for label, d in DATA.items():
    print(f"{label}: `{d['command']}` ({d['created']}), lr {d['base']['learning_rate']}, "
          f"{len(d['start'])} problems x {d['n_samples']} samples")

# %% [exercise-md]
# ### Exercise 07.1 — the unbiased pass@k estimator
# With n samples of which c are correct, the probability that k samples drawn without
# replacement contain at least one correct one is `1 - C(n-c, k) / C(n, k)` (Chen et al.
# 2021). Write `my_pass_at_k(n, c, k)` for integers, without computing huge binomials: use
# the product `prod_{i=n-c+1}^{n} (1 - k / i)` for `C(n-c, k) / C(n, k)`, and return 1.0 when
# `n - c < k`.

# %% [exercise]
def my_pass_at_k(n, c, k):
    ### BEGIN SOLUTION
    if n - c < k:
        return 1.0
    return 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))
    ### END SOLUTION

# %% [check]
checks.check_pass_at_k(my_pass_at_k)

# %% [markdown]
# ## 1. Naive estimators are biased low
#
# Two shortcuts are common: the plug-in `1 - (1 - c/n)^k`, and "best of k" by resampling k of
# the n samples *with* replacement (a bootstrap). Both are below the unbiased estimate for
# 1 < k ≤ n whenever 0 < c < n; at k = n the unbiased value is 1 for any c > 0. Measured on
# the starting policy's samples:

# %%
base = DATA["lr1e-4"]
n, c0 = base["n_samples"], np.asarray(base["start"])
KS = [1, 2, 4, 8, 16]
unbiased = [float(pass_at_k(n, c0, k).mean()) for k in KS]
plugin = [float(np.mean(1 - (1 - c0 / n) ** k)) for k in KS]
rows = [[1] * c + [0] * (n - c) for c in c0]
boot = [naive_best_of_k(rows, k, n_boot=200, seed=0) for k in KS]
for k, u, p, b in zip(KS, unbiased, plugin, boot):
    print(f"pass@{k:<2}: unbiased {u:.3f}   plug-in {p:.3f} (bias {p - u:+.3f})   bootstrap {b:.3f} (bias {b - u:+.3f})")
assert abs(unbiased[0] - plugin[0]) < 1e-12  # identical at k=1
assert all(p < u for p, u in zip(plugin[1:], unbiased[1:]))
assert boot[-1] < unbiased[-1] - 0.02  # best-of-n by resampling misses part of pass@n
viz.passk_curves(KS, {"unbiased": unbiased, "plug-in": plugin, "bootstrap best-of-k": boot},
                 title="pass@k of the starting policy by three estimators (300 problems x 16 samples)")

# %% [markdown]
# ## 2. Before and after RL, per estimator and learning rate
#
# The start curve's band is a bootstrap over problems; each estimator's band is a 95%
# t-interval over its three seeds.

# %%
def curves(d):
    start = pass_at_k_curve(d["n_samples"], d["start"], KS, n_boot=500, seed=0)
    out, bands = {"start": start.mean}, {"start": (start.lo, start.hi)}
    per_est = {}
    for est, seeds in d["after"].items():
        per_seed = np.array([[pass_at_k(d["n_samples"], np.asarray(c), k).mean() for k in KS] for c in seeds.values()])
        per_est[est] = per_seed
        out[est], lo, hi = mean_ci_columns(per_seed)
        bands[est] = (lo, hi)
    return start, per_est, out, bands


analysis = {}
for label, d in DATA.items():
    start, per_est, out, bands = curves(d)
    analysis[label] = (start, per_est)
    print(label)
    display(viz.passk_curves(KS, out, bands, n_seeds=len(next(iter(d["after"].values()))),
                             band_kinds={"start": "95% bootstrap over problems"},
                             title=f"pass@k after 150 steps, {label} (tiny LM, G=4)"))

# %% [markdown]
# ## 3. Compression or expansion? The intervals decide
#
# For each run: is pass@1 up, and is pass@16 up or down, relative to the start (t-interval
# over seeds against the start value)? "Compression" = pass@1 up and pass@16 down;
# "expansion" = pass@16 up. Anything else is reported as it is.

# %%
readings = {}
for label, (start, per_est) in analysis.items():
    for est, per_seed in per_est.items():
        d1 = change_vs_start(start.mean[0], per_seed[:, 0])
        d16 = change_vs_start(start.mean[-1], per_seed[:, -1])
        kind = ("search compression" if d1 == "up" and d16 == "down" else
                "capacity expansion" if d16 == "up" else f"pass@1 {d1}, pass@16 {d16}")
        readings[label, est] = kind
        print(f"{label:>7} {est:<7}: pass@1 {per_seed[:, 0].mean():.3f} ({d1}), pass@16 {per_seed[:, -1].mean():.3f} "
              f"({d16}) vs start {start.mean[0]:.3f} / {start.mean[-1]:.3f} -> {kind}")
    assert np.all(np.diff(per_seed, axis=1) >= -1e-12)  # pass@k never decreases in k
print("capacity expansion anywhere:", [k for k, v in readings.items() if v == "capacity expansion"] or "no")
sign_vs_grpo = {label: separated(per_est["sign"][:, -1], per_est["grpo"][:, -1])
                for label, (start, per_est) in analysis.items()}
print("pass@16, Sign against GRPO (which is higher beyond the intervals):",
      {k: {"a": "sign", "b": "grpo", None: "neither"}[v] for k, v in sign_vs_grpo.items()})
assert not [k for k, v in readings.items() if v == "capacity expansion"]  # what the conclusion says
assert all(v != "a" for v in sign_vs_grpo.values())  # Sign never above GRPO at pass@16

# %% [markdown]
# **What we measured** (the shipped comparisons: tiny LM on arithmetic, 150 steps, 3 seeds per
# estimator, 300 evaluation problems × 16 samples; readings from t-intervals, printed above):
#
# - **No capacity expansion anywhere**: no estimator at any learning rate raised pass@16 beyond
#   its interval. At lr 1e-4 some methods raised pass@1 while pass@16 fell or stayed — search
#   compression, in the sense of arXiv 2504.13837 — at 3e-4 pass@16 fell, with a pass@1 gain only
#   for dapo (grpo with dynamic sampling), and at 1e-3 every method collapsed at every k except
#   dapo, whose pass@1 held while its pass@16 fell (notebook 09: the larger batch it generates, not
#   its filter, is what held it).
# - **Sign did not expand capacity either.** The hypothesis that a fixed-reference advantage,
#   by pushing on never-solved prompts, lifts pass@k at large k (arXiv 2605.07689) predicts Sign
#   above GRPO at pass@16; Sign was never above GRPO beyond the intervals, at any learning rate.
#   In this setting the claim is not supported. It is one small model on one task: the GSM8K
#   section below is where a GPU run can test it at a more relevant scale.
# - The naive estimators of section 1 understate pass@k by up to 0.05 at k = 16 on these samples:
#   a bias as large as the effects being compared, which is why every number here uses the
#   unbiased estimator.

# %% [exercise-md]
# ### Open question 07.2 — sharpening or forgetting?
# At lr 1e-4 some runs raised pass@1 and lowered pass@16. Is the model then worse? Describe a
# measurement, on the data this notebook already has (per-problem counts of correct samples
# before and after), that tells "the model concentrates on answers it already found" from
# "the model lost problems it used to solve".

# %% [answer]
# Lower pass@16 with higher pass@1 means the distribution narrowed: on average the model is
# right more often per sample, but on fewer problems at least once. Per problem, compare the
# count c of correct samples out of n before and after. Sharpening shows as problems with
# 0 < c < n moving toward c = n while few problems move from c > 0 to c = 0; forgetting shows
# as problems solved at the start (c > 0, especially with large c) ending at c = 0. Count the
# problems in each transition, per seed, and put an interval on the counts across seeds; a
# paired per-problem comparison is far more sensitive than the averaged curves. Problems that
# went from c = 0 to c > 0 are the only evidence of new capacity.

# %% [markdown]
# ## 4. GSM8K results from notebook 06, if any
#
# A GPU run of notebook 06 saves its comparison where `grpo_lab.io.results_home()` says:
# `MyDrive/grpo-lab/gsm8k` when Google Drive is mounted on Colab (mount it in this notebook
# too), else `results/gsm8k`. The same analysis applies to every finished run there. Without a
# GPU run there is nothing to show, and this cell says so.

# %%
GPU_RESULTS = results_home("gsm8k")
found = {}
if (GPU_RESULTS / "config.json").is_file():
    conf = read_config(GPU_RESULTS)
    for est in conf["estimators"]:
        for seed in conf["seeds"]:
            path = GPU_RESULTS / "results" / f"{run_name(est, seed)}.json"
            if path.is_file():
                found[path.stem] = json.loads(path.read_text())
if not found:
    print(f"no GSM8K results in {display_path(GPU_RESULTS)}: run notebook 06 on a GPU first. Nothing is claimed "
          "here.")
for name, r in found.items():
    ev = r["eval"]
    ks = [k for k in KS if k <= ev["n_samples"]]
    cur = pass_at_k_curve(ev["n_samples"], ev["correct"], ks, n_boot=500)
    print(f"{name} on {r['device']} ({r['backend']}): greedy {ev['greedy']:.3f}; "
          + ", ".join(f"pass@{k} {m:.3f} [{lo:.3f}, {hi:.3f}]" for k, m, lo, hi in zip(ks, cur.mean, cur.lo, cur.hi)))
