"""Readings that belong to the harm experiment only (named by plan.toml; `grpo-lab study report` calls them).

- No headline and no verdict: PLAN.md's reading of comparison 1 (harmful, idle within +-0.03, helpful) is the plan's
  ``[[hypotheses]]`` entry "harm", judged by the engine (issue 56).
- ``sections``: the shortcut signatures on single-digit sums, the lucky successes in the training logs, and the
  engine check the studies on the fast path quote (read from the paired run's plan by the same engine).
- ``outputs``: ``grpo_lab/data/harm.json``, the data lesson 11 reads.
"""

import json
from pathlib import Path

import numpy as np

from grpo_lab.report import md_table
from grpo_lab.stats import fmt_ci
from grpo_lab.study import Study, interval

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
DATA = ROOT / "grpo_lab" / "data" / "harm.json"
SIGNATURES = (("repeats prompt", "repeats_prompt"), ("no working", "no_working"), ("answered", "answered"),
              ("length", "length_mean"))


def engine_check() -> str:
    paired = Study.load(ROOT / "docs" / "results" / "smollm2-fastpath-paired" / "plan.toml")
    r = {x.spec.label: x for x in paired.exploratory}
    g, p = r["F − P, all 12 seeds"], r["F − P, all 12 seeds, pass@1"]
    return (f"F − P over the paired run's 12 seeds: on pass@1, the measure the studies read, {interval(p)}; on "
            f"greedy accuracy {interval(g)}")


def lucky(study) -> dict:
    out = {}
    for name, a in study.data.items():
        hist = [r["history"] for r in a.runs.values()]
        if hist:
            out[name] = {"max_advantage": [float(np.mean([h.get("starvation/max_advantage", 0.0) for h in x]))
                                           for x in hist],
                         "one_success_steps": [float(np.mean([h.get("starvation/max_advantage_successes") == 1
                                                              for h in x])) for x in hist],
                         "reward": [float(np.mean([h["reward"] for h in x])) for x in hist]}
    return out


def changes(study) -> dict:
    """Per arm and measure, the per-seed change from the start (6 decimals: the numbers lesson 11 reads)."""
    meas = {"easy pass@1": "easy pass@1", "easy greedy": "easy greedy", "hard pass@1": "hard pass@1",
            "hard greedy": "hard greedy"}
    from grpo_lab.study import parse_measure

    out = {}
    for name, a in study.data.items():
        if not a.runs or a.start is None:
            continue
        m = {}
        for key, text in meas.items():
            ms = parse_measure(text, study.plan.tasks, "harm extras")
            start = study.start(name, ms)[0]
            m[key] = [round(v - start, 6) for v in study.values(name, ms).values()]
        easy = parse_measure("easy pass@1", study.plan.tasks, "harm extras")
        s_easy = ms_eval(a.start, easy, a.arm.config.task)
        for key, sig in SIGNATURES:
            m[key] = [round(ms_eval(r["eval"], easy, a.arm.config.task)["signatures"][sig] - s_easy["signatures"][sig],
                            6) for r in a.runs.values()]
        out[name] = m
    return out


def ms_eval(ev: dict, measure, own_task: str) -> dict:
    return measure.evaluation(ev, own_task)


def largest(d: Path, method: str, seed: int) -> dict | None:
    """The completion that received a run's largest advantage (its training log's rows), with the step."""
    from grpo_lab.io import read_jsonl, run_name

    f = d / "metrics" / f"{run_name(method, seed)}.jsonl"
    best = None
    for _, row in read_jsonl(f) if f.is_file() else []:
        c = row.get("starvation/max_advantage_completion")
        if c and (best is None or c["advantage"] > best["advantage"]):
            best = {**c, "step": row["step"]}
    return best


def signed(values, digits: int = 3) -> str:
    """A change over seeds: ``+0.013 [-0.073, +0.098]``."""
    from grpo_lab.stats import mean_ci

    m, lo, hi = mean_ci(values)
    m, lo, hi = (0.0 if round(x, digits) == 0 else x for x in (m, lo, hi))  # never "-0.000" (issue 107)
    return f"{m:+.{digits}f} [{lo:+.{digits}f}, {hi:+.{digits}f}]"


def sections(study) -> list:
    ch, luck = changes(study), lucky(study)
    rows = [[name, signed(ch[name]["repeats prompt"]), signed(ch[name]["no working"]), signed(ch[name]["answered"]),
             signed(ch[name]["length"], 1)] for name in ch]
    md = ["## Signatures of a shortcut on single-digit sums (descriptive, change from the start)", "",
          "Shares of the easy task's samples: an answer that repeats a number of the prompt, an answer with no "
          "working, any answer the grader finds; and the mean length in tokens (`grpo_lab.tasks.signatures`).", ""]
    md += md_table(["arm", "repeats a prompt number", "no working", "answered", "mean length"], rows)
    rows = [[name, fmt_ci(x["max_advantage"], clip=None), fmt_ci(x["one_success_steps"]), fmt_ci(x["reward"])]
            for name, x in luck.items()]
    md += ["", "## The lucky successes, from the training logs (descriptive)", "",
           "Per run: the mean over steps of the largest advantage any completion received, the share of steps whose "
           "largest advantage came from a group with exactly one success, and the mean training reward. Sign's "
           "largest advantage is +1 on a step with any success and -1 on one without (A = 2r - 1), so its mean can "
           "sit near 0.", ""]
    md += md_table(["arm", "largest advantage per step", "steps led by a one-success group", "training reward"], rows)
    md += ["", "## The engine", "",
           f"Every arm ran on vLLM rollouts (the fast path). The paired run's engine check: {engine_check()} "
           "([REPORT](../smollm2-fastpath-paired/REPORT.md)): neither separated. It is common to every arm, so it "
           "cancels in the differences between arms; a comparison with the start could carry part of it.", ""]
    return md


def outputs(study, pages: dict) -> dict:
    from grpo_lab.study import verdict_line

    ch, luck = changes(study), lucky(study)
    arms = {}
    for name, a in study.data.items():
        seeds = list(a.runs)
        d = a.run_dir[seeds[0]] if seeds else None
        arms[name] = {"method": a.arm.method, "trained_on": "easy" if name == "control" else "hard",
                      "seeds": len(seeds), "changes": ch.get(name, {}),
                      "lucky": {k: [round(x, 6) for x in v] for k, v in luck.get(name, {}).items()},
                      "largest_advantage": [largest(a.run_dir[s], a.arm.method, s) for s in seeds]}
    first = study.data["grpo-hard"]
    from grpo_lab.study import parse_measure

    start = {}
    if first.start is not None:
        for t in ("easy", "hard"):
            ev = parse_measure(f"{t} pass@1", study.plan.tasks, "harm").evaluation(first.start, first.arm.config.task)
            p1, se = study.start("grpo-hard", parse_measure(f"{t} pass@1", study.plan.tasks, "harm"))
            start[t] = {"pass@1": round(p1, 6), "greedy": round(ev["greedy"], 6), "pass@1_se": round(se, 6)}
    out = {"source": "docs/results/harm (grpo-lab study report docs/results/harm/plan.toml)",
           "plan": "docs/results/harm/PLAN.md", "runs_done": study.done, "runs_planned": study.total,
           "seeds_planned": len(study.plan.seeds), "easy_task": study.plan.tasks["easy"],
           "hard_task": study.plan.tasks["hard"], "start": start, "arms": arms,
           "verdict": verdict_line(study, "docs/results/harm/REPORT.md"),
           "planned": [dict(label=r.spec.label, d=r.d, lo=r.lo, hi=r.hi, p=r.p, apart=r.apart)
                       for r in study.planned]}
    return {DATA: json.dumps(out, indent=1, sort_keys=True) + "\n"}
