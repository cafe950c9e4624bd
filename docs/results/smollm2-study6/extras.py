"""Study 6's own reading, beside the engine's: PLAN.md's budget cut ("The cut, fixed now"), read from the runs.

The plan fixed the rule before any run: after seed 0 of every arm has finished, the median of those runs' times
(training plus evaluation, as the engine's budget line sums them) decides whether seed 3 is cut. Over 50 min a run
puts the 36 runs over the 30-hour budget, and seed 3 of the three Dr.GRPO arms is cut (33 runs); over 54.5 min the 33
are still over it, and seed 3 of every arm is cut (27 runs). The sentence below is generated from the runs, so it
changes when they do (tests/test_study6_plan.py feeds it slower runs).
"""

from __future__ import annotations

import statistics

from grpo_lab.study.data import run_seconds

# PLAN.md, "The cut, fixed now": median minutes a run above which each cut applies, and what it leaves
CUTS = ((54.5, "seed 3 of every arm is cut, leaving 27 runs"),
        (50.0, "seed 3 of the three Dr.GRPO arms is cut, leaving 33 runs"))


def cut_words(minutes: list[float], arms: int) -> str:
    """The cut as PLAN.md fixed it, read on the seed-0 run times ``minutes`` (one per finished arm of ``arms``)."""
    rule = "PLAN.md's cut (\"The cut, fixed now\") is read on seed 0 of every arm"
    if len(minutes) < arms:
        return f"{rule}: {len(minutes)} of {arms} have finished, so it is not read yet."
    m = statistics.median(minutes)
    for limit, what in CUTS:
        if m > limit:
            return (f"{rule}: their median run time is {m:.1f} min, over {limit:g} min, so {what} "
                    f"({len(minutes)} runs, {min(minutes):.1f} to {max(minutes):.1f} min each).")
    return (f"{rule}: their median run time is {m:.1f} min, under the 50 min that would cut seed 3 of the Dr.GRPO "
            f"arms, so nothing is cut and all 36 runs are planned ({len(minutes)} runs, {min(minutes):.1f} to "
            f"{max(minutes):.1f} min each, training plus evaluation).")


def seed0_minutes(study) -> list[float]:
    """Each arm's seed-0 run time in minutes (training plus evaluation), for the arms whose seed 0 has finished.
    A seed-0 run without both times is refused by name (``run_seconds(strict=True)``): counted as 0, a missing time
    would read a run as faster than it was and could leave uncut what the rule cuts."""
    out = []
    for name, a in study.data.items():
        r = a.runs.get(0)
        if r is not None:
            try:
                out.append(run_seconds(r, strict=True) / 60)
            except ValueError as e:
                raise ValueError(f"{name} seed 0 {e}; PLAN.md's cut reads each seed-0 run's time") from None
    return out


def sections(study) -> list:
    return ["## The budget cut (PLAN.md's rule, read from the runs)", "",
            cut_words(seed0_minutes(study), len(study.plan.arms)), ""]
