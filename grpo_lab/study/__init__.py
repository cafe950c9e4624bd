"""``grpo-lab study``: a planned study as a first-class object. A plan file names the arms, seeds, measures and the
comparisons it will read; ``grpo-lab study run`` trains exactly the runs it names that are missing;
``grpo-lab study report`` reads every result as ``--resume`` reads it and writes a report whose verdicts come from
the plan, never from its author (registered reports: the analysis is declared before the data).

The plan file (TOML, beside the study's prose plan; every key documented here, an unknown one refused by name)::

    title = "Sign against GRPO on SmolLM2"      # required
    question = "Does Sign beat GRPO ...?"       # one sentence: what the study asks
    plan = "PLAN.md"                            # the prose plan, committed before the first run
    port = "..."                                # only for a plan file written after its runs (say why)
    seeds = [0, 1, 2, 3, 4, 5]                  # every arm's seeds (an arm may set its own)
    budget_hours = 14                           # the hours of run time the plan allows, summed over its runs
    report = "REPORT.md"                        # where the report goes (default)
    grader = "221cffcc6705"                     # optional: the grader every result must record

    [base]                                      # RunConfig settings every arm shares
    policy = "smollm2"
    task = "gym:chain_sum:min_terms=2,max_terms=2,min_digits=1,max_digits=1"
    steps = 64

    [tasks]                                     # short names for tasks that measures name
    easy = "gym:chain_sum:min_terms=2,max_terms=2,min_digits=1,max_digits=1"

    [arms.grpo-lr1e-4]                          # one table per arm: a method and its own settings
    method = "grpo"                             # a method name of grpo-lab compare (grpo, sign, dapo, grpo+drop...)
    learning_rate = 1e-4                        # any RunConfig field but estimator, seed, sampling, skip_prob
    label = "GRPO at lr 1e-4"                   # optional: how the report names it
    dirs = ["lr1e-4/*"]                         # optional: where its runs are (globs under the plan's directory;
                                                #   default runs/<settings>/, shared by the arms of one setting)
    seeds = [0, 1, 2, 3]                        # optional: this arm's seeds

    [measures]
    primary = "pass@1"                          # the measure the planned comparisons read (pass@k, greedy, or
    secondary = ["greedy", "easy pass@1"]       #   a task's name first: "easy pass@1"; reward: the training's)

    [analysis]
    correction = "holm"                         # holm or none, over each family of planned comparisons
    alpha = 0.05                                # family-wise
    pairing = "none"                            # "seed": arm-minus-arm differences pair runs by seed
    margin = 0.03                               # optional: within +-margin and not separated = "equivalent"
    df = "welch"                                # degrees of freedom of a difference of means: "welch"
                                                #   (Welch-Satterthwaite, default) or "min-n" (the smaller n - 1)

    [[comparisons]]                             # the planned comparisons: a minus b, b an arm or "start"
    a = "sign-lr1e-4"
    b = "grpo-lr1e-4"
    label = "sign - grpo at lr 1e-4"            # optional
    family = "stage A"                          # optional: Holm runs within a family (default "planned")
    claim = 0.454                               # optional: a published value to set beside the interval
    contrast = "..."                            # only where a and b differ in more than one setting on purpose:
                                                #   why (otherwise such a planned comparison is refused: confounded)

    [[hypotheses]]                              # optional: a named hypothesis the engine judges on one comparison
    name = "H1"
    says = "a KL penalty of fixed scale"        # optional: what it proposes, in words
    test = "sign - grpo at lr 1e-4"             # the label of a planned comparison
    predicts = "a"                              # the side it expects ahead ("b": b ahead, e.g. the start: a loss)
    size = 0.10                                 # optional: refuted as an explanation of this difference where
    interval = "per-comparison"                 #   the interval named here excludes it ("per-comparison", 1 - alpha,
    margin = 0.03                               #   or "holm", Holm's step level); margin: "idle" within +-margin

    [[exploratory]]                             # readings the plan did not fix: intervals, never a verdict
    a = "drgrpo"
    b = "grpo-lr3e-4"
    measure = "greedy"                          # optional (comparisons too): default the primary measure

    [manipulation]                              # did the treatment take? each arm's change from its start
    measure = "pass@1"                          #   on this measure (default), or per arm:
    arms = { control = "easy pass@1" }

    deviations = ["..."]                        # the authors' own list; the report adds what it detects
    corrections = ["..."]                       # for a port: what changed from the hand-written report, and why
    extras = "extras.py"                        # optional: a module of readings that belong to this study only
    [[outputs]]                                 # pages that carry the study's verdict line between markers
    page = "README.md"
    markers = "harm-verdict"                    # <!-- harm-verdict:begin --> ... <!-- harm-verdict:end -->
    link = "docs/results/harm/REPORT.md"        # the report's address as that page links it
    form = "verdict"                            # the headline and every planned interval (default), or
                                                #   "headline": the headline only (a page short of room, the README)

What the report does by construction: it leads with the verdict in words (the hypotheses judged by their rules,
the planned comparisons, the manipulation check, and whether each verdict is fragile or firm); names the
conventions it read them with (the method line) and re-reads every verdict under the other df, the other interval
for a size rule and a bootstrap over seeds x problems (the robustness section); reads only the planned
comparisons, with the plan's correction (two that read the same arms after the selections chose count once), and
labels everything else exploratory; states each null as the bound it sets (the
largest difference its interval excludes), and a published claim beside what the task can reach at all; pairs by
seed only when the plan says the design pairs; adds the start's own sampling error to a comparison with the start;
says "held-out" only where the evaluation's problems are disjoint from the training pool (it computes the
overlap); reports the manipulation check; and lists the deviations it detects (a run whose settings differ from
its arm's, another grader or engine within an arm, the plan committed after the first result, runs that started
vLLM's engine before it left the random generators as they were) beside the authors'. Every result is read as
``grpo-lab compare --resume`` reads it: a damaged file, one holding another method or seed than its name says, a
fingerprint that does not match its settings, a duplicate of another run, or a grader other than its arm's is left
out and named. An extras module adds readings, never a verdict: its ``headline`` is printed as the authors'
reading. Introduced with issue 47 (the second edition, conventions declared and re-read: issue 56); lesson 15
plans a study of its own.
"""

from .data import ArmData, Reading, Study, git_history, read_arm, recorded_fingerprint
from .figures import draw
from .measures import METRICS, Measure, Metric, NoReading, PlanError, parse_measure, register_metric
from .plan import FORMS, RULE_INTERVALS, Arm, Hypothesis, Plan, Selection, Spec, confounds, read_plan
from .readings import Conventions, Judgement, bootstrap, judge
from .robust import Alternative, alternatives, mixed_seeds, near_ties, robustness
from .render import (GIT_LINE, arm_table, build, data_arm, data_values, fill, load_extras, render_report, status_lines,
                     study_data, verdict_line, write_or_check)
from .run import arm_dirs, default_dir, parse_shard, run_study, shard_units, train_dir, units
from .words import (bound, claim_words, compact, finding, fragility_words, headline, held_out_line, hypothesis_line,
                    interval, label, largest_difference, lead, past_range, reach, reading_line, robustness_section, took_word,
                    verdict_word)

__all__ = [name for name in dir() if not name.startswith("_")]
