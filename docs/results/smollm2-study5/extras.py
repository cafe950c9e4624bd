"""Study 5's own reading beside the engine's lines (an extras module: readings, never a verdict; issue 80).

M's measure is the share of completions trained with a zero advantage, which AVSPO lowers by construction, so a
line that says "M supported" and nothing else reads as if AVSPO cut advantage collapse the paper's way. Every page
that carries the study's line (the README, the real-model guide, the replication page) gets one more sentence,
generated from the runs: what M's measure is, and the sampled ACR (the paper's quantity as its abstract defines
it) with its interval and its size against GRPO's.
"""

from pathlib import Path

import numpy as np

from grpo_lab.study import fill
from grpo_lab.study.words import interval

ROOT = Path(__file__).resolve().parents[3]
MARKERS = "study5-verdict", "study5"
ACR = "avspo − grpo at best rates, ACR of the rewards sampled"


def note(study) -> str:
    """One sentence beside M: its measure, and the sampled ACR's change with its interval (exploratory)."""
    r = next(x for x in study.exploratory if x.spec.label == ACR)
    if r.d is None:
        return ""
    base = float(np.mean(list(study.values("grpo-best", r.spec.measure).values())))
    moved = "did not move beyond the noise" if r.lo <= 0 <= r.hi else ("fell" if r.hi < 0 else "rose")
    return (f"M's share is one AVSPO lowers by construction; the sampled ACR (groups whose sampled rewards are all "
            f"equal, the paper's quantity) {moved}: {interval(r)} (exploratory), {abs(r.d) / base:.0%} of GRPO's "
            f"{base:.3f}.")


def outputs(study, pages: dict) -> dict:
    """The study's line on each page that carries it, with :func:`note` after the engine's words."""
    if not study.complete:
        return {}
    out = {}
    extra = note(study)
    for path, text in pages.items():
        for m in MARKERS:
            begin, end = f"<!-- {m}:begin -->", f"<!-- {m}:end -->"
            if begin in text and end in text:
                block = text[text.index(begin) + len(begin):text.index(end)].strip()
                out[path] = text = fill(text, m, block + " " + extra, str(path))
    return out
