"""Which of the study engine's interval methods cover at their nominal level: the tracked table
(grpo_lab/data/interval_coverage.json, written by ``scripts/interval_coverage.py`` from the simulation in
:mod:`grpo_lab.study.calibrate`) and the rule the engine reads from it: an alternative whose simulated coverage is
below :data:`BAND` is narrow and cannot by itself call a verdict fragile (issue 80: a bootstrap that divided the
seeds' variance by n and read normal tails called two verdicts fragile). Part of :mod:`grpo_lab.study`.
"""

from __future__ import annotations

import json
from pathlib import Path

BAND = (0.93, 0.97)  # a 95% interval whose simulated coverage lies here is calibrated; below it, narrow
NOMINAL = 0.95
SEEDS = (3, 5, 6, 10)  # the seed counts the table holds (the studies have 3 to 6; 10 for a larger one)
METHODS = {  # name -> what the engine reads with it
    "t-welch": "a difference of two arms' means, t-interval over seeds, Welch–Satterthwaite df",
    "t-min-n": "a difference of two arms' means, t-interval over seeds, the smaller arm's n − 1 df",
    "t-paired": "a difference paired by seed, t-interval of the n differences, n − 1 df",
    "t-start": "an arm's change from its start, the start's sampling error added, n − 1 df",
    "t-interaction": "a difference of differences over four arms, Welch–Satterthwaite df",
    "bootstrap": "the bootstrap over seeds × problems as the engine reads it (seeds rescaled by √(n/(n − 1)), its "
                 "standard error with t quantiles, Welch–Satterthwaite df)",
    "t-log-level": "a positive measure against a value on the log scale: the ratio of the seeds' geometric mean to "
                   "it, one-sample t over the logs, n − 1 df (log-normal seeds; issue 102)",
    "t-log": "two arms of a positive measure on the log scale: the ratio of their geometric means, Welch's standard "
             "error of the logs' difference, Welch–Satterthwaite df (log-normal seeds; issue 102)",
    "t-welch-mixture": "t-welch where each seed of arm a fails to take with chance 1/6 (its run scores as the "
                       "start), against the arm's mean over that mixture: what a seed mixture does to the nominal "
                       "level (study 7's seed spread; issue 102)",
    "t-welch-without": "the same mixture read without the seeds that did not take, against the arm's mean when "
                       "training takes: the seed-mixture alternative (issue 102)",
    "bootstrap-plain": "the bootstrap before issue 80 (seeds resampled as they are, percentile interval): no longer "
                       "read, kept to show what the correction buys",
}
TABLE = Path(__file__).resolve().parents[1] / "data" / "interval_coverage.json"


def table() -> dict:
    """The tracked coverage table (``scripts/interval_coverage.py`` writes it): ``{method: {n: coverage}}`` with
    the reps it was simulated with."""
    return json.loads(TABLE.read_text())


def narrow(method: str, n: int) -> str | None:
    """Why an interval method is too narrow to call a verdict fragile at ``n`` seeds (its simulated coverage below
    :data:`BAND`), or None where it is calibrated there. ``n`` is read at the nearest seed count the table holds at
    or below it (the smallest where it is below them all: fewer seeds cover worse)."""
    t = table()["coverage"].get(method)
    if t is None:
        return f"its coverage was never checked ({method} is not in {TABLE.name})"
    held = sorted(int(k) for k in t)
    at = max((k for k in held if k <= n), default=held[0])
    c = t[str(at)]
    if c < BAND[0]:
        return (f"its simulated coverage at {at} seeds is {c:.3f} for a nominal {NOMINAL:.0%} "
                f"({TABLE.name}): too narrow to call a verdict fragile by itself")
    return None
