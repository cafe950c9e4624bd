"""Issue 58: the study guide's tiny plan runs as written (docs/guide/study.md, the block after
<!-- study-guide-plan -->): a newcomer copies it, runs `grpo-lab study run`, and gets a complete report."""

import re
from pathlib import Path

from grpo_lab.cli import main

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guide" / "study.md"


def test_the_guides_tiny_plan_runs_as_written(tmp_path, monkeypatch):
    text = GUIDE.read_text()
    block = re.search(r"<!-- study-guide-plan -->\n```toml\n(.*?)```", text, re.S)
    assert block, "the study guide lost its runnable plan"
    (tmp_path / "plan.toml").write_text(block.group(1))
    monkeypatch.chdir(tmp_path)
    assert main(["study", "run", "plan.toml"]) == 0
    report = (tmp_path / "REPORT.md").read_text()
    assert "## What it found" in report and "**Method (declared in the plan).**" in report
    lead = report.split("## What it found")[1].split("\n\n")[1]  # issue 107: the first sentence cannot mislead
    assert lead.startswith("In short: neither arm measurably moved from its start") or "fragile" in lead, lead
    assert "In progress" not in report and "## Does the verdict depend on a convention?" in report
    assert (tmp_path / "arms.png").is_file() and (tmp_path / "comparisons.png").is_file()
    assert main(["study", "report", "plan.toml", "--check"]) == 0
