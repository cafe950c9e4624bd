"""Copy the results table of a tracked comparison report into README.md (between its markers).

    python scripts/readme_excerpt.py            # docs/results/lr1e-4/report.md -> README.md
    python scripts/readme_excerpt.py --check    # exit 1 if README.md's excerpt differs (tests/test_readme.py)

The excerpt is the report's "## Results" section up to and including its "Start: ..." line,
with the heading demoted to "####". Nothing in it is typed by hand.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "docs" / "results" / "lr1e-4" / "report.md"
BEGIN, END = "<!-- report-excerpt:begin -->", "<!-- report-excerpt:end -->"


def excerpt(report: str) -> str:
    lines = report.splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith("## Results"))
    stop = next(i for i, x in enumerate(lines) if i > start and x.startswith("Start:"))
    return "\n".join(["#" + lines[start]] + lines[start + 1:stop + 1])


def with_excerpt(readme: str, text: str) -> str:
    a, b = readme.index(BEGIN) + len(BEGIN), readme.index(END)
    return readme[:a] + "\n" + text + "\n" + readme[b:]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args(argv)
    readme_path = ROOT / "README.md"
    readme = readme_path.read_text()
    want = with_excerpt(readme, excerpt(REPORT.read_text()))
    if a.check:
        if want != readme:
            print(f"README.md's report excerpt differs from {REPORT.relative_to(ROOT)}; "
                  "run python scripts/readme_excerpt.py", file=sys.stderr)
            return 1
        return 0
    readme_path.write_text(want)
    return 0


if __name__ == "__main__":
    sys.exit(main())
