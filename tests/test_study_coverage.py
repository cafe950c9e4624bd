"""Issue 80: every interval the study engine reads covers at its nominal level, checked by simulation with a
study's structure (grpo_lab.study.calibrate); an alternative whose coverage misses the band is narrow and cannot by
itself make a headline say Fragile; the bootstrap's seed part is not divided by n."""

import json

import numpy as np
import pytest

from grpo_lab.study import calibrate as sim
from grpo_lab.study import coverage as cov
from grpo_lab.study.readings import bootstrap

# The simulated studies a cell: a 95% coverage's Monte Carlo s.e. is about 0.0065 at 1,100 (deterministic seeds).
REPS = {"t-welch": 700, "t-min-n": 500, "t-paired": 700, "t-start": 700, "t-interaction": 500, "bootstrap": 1100,
        "t-log": 1100, "t-log-level": 1100, "t-welch-without": 1100}
FAILURES = {"bootstrap-plain", "t-welch-mixture"}  # simulated to show what goes wrong: below the band on purpose
CONSERVATIVE = {"t-min-n"}  # the smaller arm's n - 1 df: conservative by construction (0.99 at 3 seeds is allowed)


@pytest.mark.parametrize("method", [m for m in cov.METHODS if m not in FAILURES])
@pytest.mark.parametrize("n", [3, 6])
def test_every_interval_the_engine_reads_covers_at_its_nominal_level(method, n):
    """The band is about 0.93-0.97 for a nominal 95% (a method below 0.93 is narrow; a little above the top is
    allowed up to 0.98, and a conservative convention up to 0.99): the engine's intervals at 3 and 6 seeds, the
    studies' range."""
    c = sim.coverage(method, n, REPS[method])
    top = 0.99 if method in CONSERVATIVE else 0.98
    assert cov.BAND[0] <= c <= top, f"{method} at {n} seeds covers {c:.3f} (nominal {cov.NOMINAL})"


def test_the_bootstrap_standard_error_is_the_seeds_own_when_problems_do_not_vary():
    """With every problem scored alike in a run (no problem noise), the bootstrap's spread must be the seeds'
    unbiased standard error sqrt(s_a^2/n_a + s_b^2/n_b): a plain bootstrap gives sqrt((n - 1)/n) of it (x0.816 at
    3 seeds, the ÷n issue 80 found). Fails when the ÷n is put back."""
    rng = np.random.default_rng(0)
    for n in (3, 5):
        a = np.repeat(rng.normal(0.5, 0.08, (n, 1)), 50, axis=1)
        b = np.repeat(rng.normal(0.4, 0.05, (n, 1)), 50, axis=1)
        _, draws = bootstrap([(a, 1), (b, -1)], resamples=20000)
        want = np.sqrt(a[:, 0].var(ddof=1) / n + b[:, 0].var(ddof=1) / n)
        assert draws.std(ddof=1) == pytest.approx(want, rel=0.03), n
        _, plain = bootstrap([(a, 1), (b, -1)], resamples=20000, rescale=False)
        assert plain.std(ddof=1) == pytest.approx(want * np.sqrt((n - 1) / n), rel=0.03)


def test_the_plain_bootstrap_is_narrow_and_the_table_says_so():
    """The bootstrap as it was before issue 80 (seeds resampled as they are, percentile tails) falls short of the
    band with few seeds; the tracked table, which the engine reads, records it and the engine calls it narrow."""
    assert sim.coverage("bootstrap-plain", 3, 600) < cov.BAND[0]
    assert cov.narrow("bootstrap-plain", 3) and "too narrow" in cov.narrow("bootstrap-plain", 3)
    assert cov.narrow("bootstrap", 3) is None and cov.narrow("t-welch", 6) is None


def test_a_seed_mixture_takes_a_t_interval_below_its_nominal_level():
    """Issue 102: where each seed fails to take with chance 1/6 (study 7's grpo-hard: one in six), a t-interval over
    the arm's seeds covers its mean well below 95% (the seeds are not one distribution), and the re-read without
    the seeds that did not take covers the arm's mean when training takes."""
    assert sim.coverage("t-welch-mixture", 6, 800) < cov.BAND[0] - 0.05
    assert cov.BAND[0] <= sim.coverage("t-welch-without", 6, 800) <= 0.98


def test_the_tracked_table_is_what_the_simulation_gives():
    """grpo_lab/data/interval_coverage.json (scripts/interval_coverage.py, 4,000 studies a cell) agrees with this
    code's simulation within Monte Carlo error, for every method at 5 seeds, and holds every method and seed count."""
    t = cov.table()
    assert set(t["coverage"]) == set(cov.METHODS) and t["reps"] == 4000
    assert all(set(v) == {str(n) for n in cov.SEEDS} for v in t["coverage"].values())
    assert t["world"] == json.loads(json.dumps({k: (list(v) if isinstance(v, tuple) else v)
                                                for k, v in vars(sim.World()).items()}))
    for method in ("t-welch", "bootstrap"):
        fresh = sim.coverage(method, 5, 800, seed=7)
        se = np.sqrt(0.95 * 0.05 * (1 / 800 + 1 / 4000))
        assert abs(fresh - t["coverage"][method]["5"]) < 3.5 * se, method


def test_a_narrow_alternative_cannot_make_a_headline_fragile(tmp_path, monkeypatch):
    """A study whose verdict flips under the other df and the bootstrap: while their methods are calibrated the
    headline says Fragile and names them; with the coverage table saying those methods are narrow at these seeds,
    the same flips are shown in the robustness section as narrow and the headline says Firm."""
    from grpo_lab.study import Study, headline
    from grpo_lab.study import words
    from test_study import make_study

    plan = make_study(tmp_path, means={"grpo": 0.4, "sign": 0.75}, seeds=(0, 1, 2))
    row = next(row for row in Study.load(plan).robust if row.flips)
    text = headline(Study.load(plan))
    assert "**Fragile**" in text and all(a in text.split("**Fragile**")[1] for a in row.flips)
    methods = {"a bootstrap over seeds × problems": "bootstrap", "min-n df (the smaller arm's n − 1)": "t-min-n"}
    narrow = {methods[a] for a in row.flips}
    real = cov.narrow
    monkeypatch.setattr(cov, "narrow", lambda m, n: "too narrow here (a test)" if m in narrow else real(m, n))
    s = Study.load(plan)
    assert "**Fragile**" not in headline(s) and "**Firm**" in headline(s)
    section = "\n".join(words.robustness_section(s))
    assert all(f"{a} (narrow)" in section for a in row.flips) and "only a narrow alternative differs" in section
    assert "too narrow here (a test)" in section
