"""Study 7's own reading, beside the engine's: which regime the dose tested (issue 102).

The claim is about near-degenerate groups: one lucky success among G, which GRPO's std normalisation makes a large
advantage. The plan chose its dose so that the hard task moves (PLAN.md, the pilot's rate), and a hard task that moves
is one whose successes are shared. So the verdict reads harm at that dose, mostly outside the claim's regime. This
module says so in the report's first section, from the runs: each hard arm's share of training successes that were the
only one of their group (``sole-share``), and the runs that stayed in the claim's regime with their reading on the
primary measure. The regime's cut is declared once, in docs/results/claims.toml (the harm claim's study-7 read); the
sentences are generated, so they change when the runs do (tests/test_study7_extras.py feeds them reversed runs).
"""

from __future__ import annotations

import statistics
from pathlib import Path

try:  # Python 3.11+
    import tomllib
except ImportError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

CLAIMS = Path(__file__).resolve().parents[1] / "claims.toml"
HARD = ("grpo-hard", "drgrpo-hard")


def regime(claims: Path = CLAIMS) -> dict:
    """The harm claim's regime for this study, as claims.toml declares it (arm, measure, at_least, words)."""
    spec = tomllib.loads(claims.read_text())
    for c in spec["claims"]:
        for read in c["reads"]:
            if read.get("plan") == "smollm2-study7/plan.toml" and "regime" in read:
                return read["regime"]
    raise ValueError(f"{claims} declares no regime for study 7's harm reading")


def headline(study, reg: dict | None = None) -> str:
    """The regime the dose tested, and the runs that stayed in the claim's."""
    from grpo_lab.study.measures import parse_measure

    reg = reg or regime()
    m = parse_measure(reg["measure"], study.plan.tasks, "study 7 extras")
    shares = {arm: study.values(arm, m) for arm in HARD}
    if not all(shares.values()):
        return ""
    spans = "; ".join(f"{study.plan.arms[a].label} {statistics.median(v.values()):.2f} ({min(v.values()):.2f} to "
                      f"{max(v.values()):.2f})" for a, v in shares.items())
    arm = reg["arm"]
    inside = sorted(s for s, v in shares[arm].items() if v >= reg["at_least"])
    label = study.plan.arms[arm].label
    n = len(shares[arm])
    most = 2 * len(inside) >= n
    text = (f"The dose was chosen so that the hard task moves; the claim is about groups with one lucky success. "
            f"The share of a run's training successes that were the only one of their group ({reg['measure']}), "
            f"median over runs (range): {spans}.")
    if not inside:
        return text + (f" No {label} run stayed in the claim's regime ({reg['measure']} ≥ {reg['at_least']:g}), so "
                       "the verdict reads harm outside it.")
    start = study.start(arm)
    ends = study.values(arm)
    p = study.plan.primary.text
    runs = "; ".join(f"seed {s} ({reg['measure']} {shares[arm][s]:.2f}): {p} "
                     + (f"{start[0]:.3f} → " if start else "") + f"{ends[s]:.3f}"
                     + ("" if not start else (", down" if ends[s] < start[0] else ", up" if ends[s] > start[0]
                                              else ", unchanged"))
                     for s in inside)
    return text + (f" {len(inside)} of {n} {label} runs stayed in the claim's regime ({reg['measure']} ≥ {reg['at_least']:g}): "
                   f"{runs}. " + ("Most runs stayed in the claim's regime, so the verdict reads it there." if most
                                  else f"The verdict reads harm at the dose tested; in the claim's regime {len(inside)} "
                                  f"run{'s' if len(inside) != 1 else ''}, read descriptively, no test."))
