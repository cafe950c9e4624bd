"""Study 3's extras (docs/results/smollm2-study3/extras.py): no verdict of their own (H1 and H2 are the engine's,
from the plan's [[hypotheses]]), "what is left" follows the readings (reversed data, reversed sentence), and the
mechanism table summarises each run's per-step history as it says."""

from pathlib import Path

import pytest

from grpo_lab.study import Study, load_extras

PLAN = Path(__file__).resolve().parents[1] / "docs" / "results" / "smollm2-study3" / "plan.toml"


@pytest.fixture(scope="module")
def loaded():
    study = Study.load(PLAN)
    return study, load_extras(study.plan)


def _set(study, a, c, **values):
    r = next(r for r in study.planned if r.spec.a == a and (r.spec.c is not None) == c)
    for k, v in dict(why_not=None, p=0.01, **values).items():
        setattr(r, k, v)


def test_the_extras_word_no_verdict_and_h1_h2_are_the_engines(loaded):
    """Issue 56: extras.py has no headline; the report's H1 and H2 lines come from the plan's [[hypotheses]]."""
    study, extras = loaded
    assert not hasattr(extras, "headline") and not hasattr(extras, "hypotheses")
    assert [h.name for h in study.plan.hypotheses] == ["H1", "H2"]
    assert all(h.size == 0.10 and h.interval == "per-comparison" for h in study.plan.hypotheses)


def test_the_mechanism_is_each_runs_history_summarised(loaded):
    study, extras = loaded
    arm = next(a for a, d in study.data.items() if d.runs and study.plan.arms[a].config.beta)
    seed, run = next(iter(sorted(study.data[arm].runs.items())))
    hist = run["history"]
    got = extras.mechanism(study)[arm]
    assert got["update/from_start"][seed] == hist[-1]["update/from_start"]  # the last step's distance
    assert got["grad_norm"][seed] == pytest.approx(sum(h["grad_norm"] for h in hist) / len(hist))
    assert 0 < got["kl/share_of_loss"][seed] < 1
    beta0 = next(a for a, d in study.data.items() if d.runs and not study.plan.arms[a].config.beta)
    assert extras.mechanism(study)[beta0]["kl/share_of_loss"] == {}  # no KL term at β = 0: nothing to summarise


def _rates(study, monkeypatch, ds: dict, apart: set):
    for a, d in ds.items():
        r = next(r for r in study.planned if r.spec.a == a and r.spec.c is None)
        for k, v in dict(d=d, lo=d - 0.05, hi=d + 0.05, apart=a in apart, why_not=None).items():
            monkeypatch.setattr(r, k, v)


def test_what_is_left_follows_the_readings_and_reverses_with_them(loaded, monkeypatch):
    """Issue 56: the first edition said "a shared rate that suits one estimator and starves the other can make a gap
    of this order by itself" whatever the data were. Now each clause is read off the data: with Dr.GRPO far ahead at
    lr 1e-4 it says the gap ran against the paper; with the data reversed (Sign far ahead) it says the opposite."""
    study, extras = loaded
    monkeypatch.setattr(study, "complete", True)
    _set(study, "sign-kl", True, d=0.0, lo=-0.1, hi=0.0454, apart=False)
    _set(study, "sign-best", False, d=0.0, lo=-0.1, hi=0.227, apart=False)
    _rates(study, monkeypatch, {"sign-1e-4": -0.3, "sign-3e-4": 0.02, "sign-1e-3": -0.01}, {"sign-1e-4"})
    words = extras.left_words(study)
    assert "H1 leaves at most +0.045 in Sign's favour (95% per comparison), 10% of the paper's +0.454" in words
    assert "H2 leaves at most +0.227" in words and "50% of the paper's" in words
    assert "largest gap was at lr 1e-4, 0.300 in pass@1 in Dr.GRPO's favour, against the paper's direction" in words
    assert "separated after Holm" in words and "no shared rate put Sign ahead by more than +0.070" in words
    assert "moved the gap towards Dr.GRPO" in words and "starves" not in words
    _rates(study, monkeypatch, {"sign-1e-4": 0.3, "sign-3e-4": -0.02, "sign-1e-3": 0.01}, {"sign-1e-4"})
    reversed_words = extras.left_words(study)
    assert reversed_words != words
    assert "0.300 in pass@1 in Sign's favour, in the paper's direction" in reversed_words
    assert "a shared rate put Sign ahead, separated: lr 1e-4" in reversed_words
    assert "moved the gap towards Sign" in reversed_words
