"""Study 3's extras (docs/results/smollm2-study3/extras.py): H1 and H2 are worded by PLAN.md's own rule, whatever the
data say, and the mechanism table summarises each run's per-step history as it says."""

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


@pytest.mark.parametrize("h1, h2, words1, words2", [
    (dict(d=0.2, lo=0.1, hi=0.3, apart=True), dict(d=-0.2, lo=-0.3, hi=-0.1, apart=True),
     ["**supported**"], ["**contradicted**"]),
    (dict(d=0.0, lo=-0.05, hi=0.05, apart=False), dict(d=0.1, lo=-0.1, hi=0.3, apart=False),
     ["**not supported**", "excludes interactions above +0.10", "refutes it as an explanation of the paper's size"],
     ["**not supported**", "still allows Sign advantages up to +0.300", "not refuted as a part of the paper's size",
      "(lr 3e-4 for both)"]),
])
def test_h1_and_h2_are_worded_by_the_plans_rule(loaded, monkeypatch, h1, h2, words1, words2):
    study, extras = loaded
    monkeypatch.setattr(study, "chosen", lambda name: name.replace("-best", "-3e-4"))
    _set(study, "sign-kl", True, **h1)
    _set(study, "sign-best", False, **h2)
    h = extras.hypotheses(study)
    assert all(w in h["H1"] for w in words1), h["H1"]
    assert all(w in h["H2"] for w in words2), h["H2"]


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


def test_what_is_left_is_said_only_when_neither_hypothesis_holds(loaded, monkeypatch):
    """The replication page's "What is left of the +45 points": each hypothesis's bound as a share of the paper's
    +0.454, and the shared rate at which the estimators were furthest apart; nothing when a hypothesis holds."""
    study, extras = loaded
    monkeypatch.setattr(study, "complete", True)
    _set(study, "sign-kl", True, d=0.0, lo=-0.1, hi=0.0454, apart=False)
    _set(study, "sign-best", False, d=0.0, lo=-0.1, hi=0.227, apart=False)
    for a, d in (("sign-1e-4", -0.3), ("sign-3e-4", 0.02), ("sign-1e-3", -0.01)):
        r = next(r for r in study.planned if r.spec.a == a and r.spec.c is None)
        monkeypatch.setattr(r, "d", d)
        monkeypatch.setattr(r, "apart", a == "sign-1e-4")
    words = extras.left_words(study)
    assert "at most +0.045 (95%), 10% of the paper's +0.454" in words and "+0.227 open, 50% of it" in words
    assert "at lr 1e-4 the two estimators were 0.300 apart in pass@1, in Dr.GRPO's favour" in words
    assert "separated after Holm" in words and "at the other rates lr 3e-4" in words
    _set(study, "sign-kl", True, d=0.2, lo=0.1, hi=0.3, apart=True)
    assert extras.left_words(study) == ""
