"""How often the GSM8K grader agrees with a human verdict, beside math-verify (issue 28).

    python benchmarks/grader_agreement.py            # a few seconds; needs math-verify (the dev extra)
    python benchmarks/grader_agreement.py --misses   # and list every case either grader gets wrong

Three tables: tests/data/grader_cases.py (the case table the grader's rules were written against),
tests/data/grader_heldout.py (written before the issue-28 rule change, whose misses the new rules were then
written to fix), tests/data/grader_fresh.py (written after the change, before the grader first ran on it:
the unseen-data figure) and tests/data/grader_heldout2.py (written before issue 38's rule change) and tests/data/grader_fresh2.py (written
after it, before the grader first ran on it), and tests/data/grader_heldout3.py (written before issue 51's rule
change) and tests/data/grader_fresh3.py (written after it, before the grader first ran on it). None is edited to fit the grader; docs/benchmarks.md records the figures.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "data"))

from grader_cases import CASES  # noqa: E402
from grader_fresh import FRESH  # noqa: E402
from grader_fresh2 import FRESH2  # noqa: E402
from grader_heldout import HELDOUT  # noqa: E402
from grader_heldout2 import HELDOUT2  # noqa: E402
from grader_heldout3 import HELDOUT3  # noqa: E402
from grader_fresh3 import FRESH3  # noqa: E402

from grpo_lab.tasks.gsm8k import is_correct  # noqa: E402


def math_verify(completion: str, reference: str) -> bool:
    from math_verify import parse, verify

    try:
        return bool(verify(parse(reference.rsplit("####", 1)[-1].strip()), parse(completion)))
    except Exception:  # noqa: BLE001 - its parser raises on some text: a miss
        return False


def agreement(cases, show: bool) -> tuple[int, int]:
    ours = theirs = 0
    for completion, reference, want in cases:
        a, b = is_correct(completion, reference), math_verify(completion, reference)
        ours += a == want
        theirs += b == want
        if show and (a != want or b != want):
            print(f"  human {want!s:5s} grpo-lab {a!s:5s} math-verify {b!s:5s} ref {reference!r:12s} {completion!r}")
    return ours, theirs


def main() -> None:
    show = "--misses" in sys.argv
    for name, cases in (("case table", CASES), ("held-out", HELDOUT), ("fresh", FRESH), ("held-out 2", HELDOUT2),
                        ("fresh 2", FRESH2), ("held-out 3", HELDOUT3), ("fresh 3", FRESH3)):
        if show:
            print(f"{name}:")
        ours, theirs = agreement(cases, show)
        n = len(cases)
        print(f"{name:10s} ({n} cases): grpo-lab agrees with the human verdict on {ours} ({ours / n:.0%}), "
              f"math-verify on {theirs} ({theirs / n:.0%})")


if __name__ == "__main__":
    main()
