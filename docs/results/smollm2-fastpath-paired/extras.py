"""Readings that belong to the fast path's paired run only (named by plan.toml; `grpo-lab study report` calls them).

The cost per training step and the completions' length per arm, from the runs' own timing and training logs:
descriptive, and machine-dependent (these arms ran beside each other, one per core; T beside another study's run).
"""

import numpy as np

from grpo_lab.report import md_table
from grpo_lab.stats import fmt_ci


def sections(study) -> list:
    rows = []
    for name, a in study.data.items():
        runs = list(a.runs.values())
        if not runs:
            continue
        step = [r["train_seconds"] / r["steps_done"] for r in runs]
        evals = [r["eval_seconds"] for r in runs if r.get("eval_seconds")]
        tokens = [float(np.mean([h["sampling/tokens"] for h in r["history"]])) for r in runs
                  if all("sampling/tokens" in h for h in r["history"])]
        rows.append([a.arm.label, len(runs), f"{np.mean(step):.1f}", f"{np.mean(evals):.0f}" if evals else "—",
                     fmt_ci(tokens, digits=1, clip=None) if tokens else "—"])
    return ["## Cost and completion length (descriptive)", "",
            "Seconds per training step and per evaluation (means over seeds; one process per core, other work on the "
            "machine at times: docs/benchmarks.md has the ratios measured in one process), and new tokens per "
            "training step (a systematic difference in completion length would show a sampler that differs).", ""] \
        + md_table(["arm", "seeds", "s per training step", "s per evaluation", "new tokens per step"], rows) + [""]
