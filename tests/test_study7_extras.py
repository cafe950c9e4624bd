"""Issue 102: study 7's report says which regime its dose tested, from the runs: the share of sole successes per hard
arm, and the runs that stayed in the claim's regime with their reading. Reversed runs reverse the sentence."""

import importlib.util
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
HOME = ROOT / "docs" / "results" / "smollm2-study7"


def extras():
    spec = importlib.util.spec_from_file_location("study7_extras", HOME / "extras.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def fake(grpo: dict, drgrpo: dict, ends: dict):
    arms = {"grpo-hard": SimpleNamespace(label="grpo-hard"), "drgrpo-hard": SimpleNamespace(label="drgrpo-hard")}
    shares = {"grpo-hard": grpo, "drgrpo-hard": drgrpo}
    plan = SimpleNamespace(tasks={}, arms=arms, primary=SimpleNamespace(text="easy pass@1"))
    return SimpleNamespace(plan=plan, start=lambda arm: (0.15, 0.01),
                           values=lambda arm, m=None: shares[arm] if m is not None else ends)


def test_the_regime_is_read_from_claims_toml():
    reg = extras().regime()
    assert reg["arm"] == "grpo-hard" and reg["measure"] == "sole-share" and reg["at_least"] == 0.5


def test_the_headline_names_the_runs_that_stayed_and_reverses_with_the_data():
    x = extras()
    mostly_shared = fake({0: 0.2, 1: 1.0, 2: 0.1}, {0: 0.2, 1: 0.3, 2: 0.1}, {0: 0.6, 1: 0.1, 2: 0.6})
    text = x.headline(mostly_shared)
    assert "1 of 3 grpo-hard runs stayed in the claim's regime" in text
    assert "seed 1 (sole-share 1.00): easy pass@1 0.150 → 0.100, down" in text
    assert "harm at the dose tested" in text and "grpo-hard 0.20 (0.10 to 1.00)" in text
    mostly_sole = fake({0: 0.9, 1: 1.0, 2: 0.1}, {0: 0.2, 1: 0.3, 2: 0.1}, {0: 0.2, 1: 0.3, 2: 0.6})
    text = x.headline(mostly_sole)
    assert "2 of 3 grpo-hard runs" in text and "Most runs stayed" in text and ", up" in text
    none = fake({0: 0.2, 1: 0.3, 2: 0.1}, {0: 0.2, 1: 0.3, 2: 0.1}, {0: 0.6, 1: 0.6, 2: 0.6})
    assert "No grpo-hard run stayed" in x.headline(none)


def test_the_report_carries_it():
    text = (HOME / "REPORT.md").read_text()
    assert "**The authors' reading, not a verdict**" in text and "seed 1 (sole-share 1.00)" in text
