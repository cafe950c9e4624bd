"""Issues 82 and 102: each paper's claim answered in its own terms, generated from the studies' data
(scripts/seed_claims.py). The verdict is on the claim, in its direction; a proxy, an explanation or a neighbouring
question is never a verdict on it; the comparator, the scope and the regime are named; and every word reverses when
the data do."""

import json
import math
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import seed_claims  # noqa: E402
from seed_claims import ClaimsError, verdict_on_claim  # noqa: E402

from test_study_levels import study  # noqa: E402


def test_the_guide_page_and_the_figure_are_what_the_tracked_runs_give():
    assert seed_claims.main(["--check"]) == 0, "run python scripts/seed_claims.py"


def test_every_claim_states_the_papers_terms_and_every_non_claim_read_says_why():
    claims = seed_claims.load_claims()
    assert {c["name"] for c in claims} >= {"starvation", "sign", "avspo-points", "avspo-collapse", "harm", "rank"}
    for c in claims:
        assert c["paper"] and c["says"] and c["measure"] and c["reads"], c["name"]
        for read in c["reads"]:
            assert read["relation"] == "claim" or read["why"], read


# --------------------------------------------------------------------------------------------- the verdict function

@pytest.mark.parametrize("form", ["higher", "lower"])
def test_a_directional_verdict_reverses_with_the_data(form):
    s = 1 if form == "higher" else -1
    way = (lambda lo, hi: (lo, hi)) if s > 0 else (lambda lo, hi: (-hi, -lo))
    assert verdict_on_claim(form, *way(0.1, 0.3), True) == "supported"
    assert verdict_on_claim(form, *way(-0.3, -0.1), True) == "contradicted"
    assert verdict_on_claim(form, *way(-0.1, 0.1), False) == "not settled"
    # the paper's size: excluded where reachable, untestable where the task cannot show it
    assert verdict_on_claim(form, *way(-0.1, 0.1), False, reported=s * 0.454) == "smaller than the paper's"
    assert verdict_on_claim(form, *way(-0.1, 0.5), False, reported=s * 0.454) == "not settled"
    room = way(-0.7, 0.29)
    assert verdict_on_claim(form, *way(-0.1, 0.1), False, reported=s * 0.454, reach=room) == "out of reach"
    assert verdict_on_claim(form, *way(-0.1, 0.1), False, reported=s * 0.454, reach=way(-0.5, 0.5)) \
        == "smaller than the paper's"
    # a range: excluded only below its nearer end
    assert verdict_on_claim(form, *way(0.01, 0.05), True, reported=[s * 0.04, s * 0.06]) == "supported"
    assert verdict_on_claim(form, *way(0.01, 0.03), True, reported=[s * 0.04, s * 0.06]) \
        == "smaller than the paper's"
    # an exploratory reading (no correction): the interval excluding 0 decides
    assert verdict_on_claim(form, *way(0.01, 0.2), None) == "supported"
    assert verdict_on_claim(form, *way(-0.2, -0.01), None) == "contradicted"


def test_an_about_verdict_reads_the_margin_both_ways():
    assert verdict_on_claim("about", 1.5, 2.6, None, about=2.0, margin=1.0) == "supported"
    assert verdict_on_claim("about", 3.2, 40.0, None, about=2.0, margin=1.0) == "contradicted"
    assert verdict_on_claim("about", -5.0, 0.9, None, about=2.0, margin=1.0) == "contradicted"
    assert verdict_on_claim("about", 1.4, 27.8, None, about=2.0, margin=1.0) == "not settled"
    with pytest.raises(ValueError, match="margin"):
        verdict_on_claim("about", 1.0, 2.0, None, about=2.0)


def test_a_null_whose_treatment_did_not_take_is_not_settled():
    assert seed_claims.untaken("smaller than the paper's", ["sign, lr 1e-3"])[0] == "not settled"
    assert "did not take in sign, lr 1e-3" in seed_claims.untaken("out of reach", ["sign, lr 1e-3"])[1]
    assert seed_claims.untaken("contradicted", ["x"]) == ("contradicted", None)
    assert seed_claims.untaken("smaller than the paper's", []) == ("smaller than the paper's", None)


def test_the_reach_of_a_fraction_is_what_the_comparator_leaves():
    """Lesson 10's rule: where GRPO scores 0.71, Sign − GRPO cannot exceed +0.29."""
    metric = SimpleNamespace(fraction=True)
    r = SimpleNamespace(spec=SimpleNamespace(measure=SimpleNamespace(metric=metric), c=None), mean_b=0.71)
    lo, hi = seed_claims.reach(r)
    assert lo == pytest.approx(-0.71) and hi == pytest.approx(0.29)


def test_numbers_are_shown_in_the_claims_units_without_minus_zero():
    assert seed_claims.show(0.454, "points") == "+45.4 points"
    assert seed_claims.show(-0.0004, "points") == "+0.0 points"
    assert seed_claims.show(-0.58, "relative") == "-58%"
    assert seed_claims.show(14.617, "rank", signed=False) == "14.6"
    assert seed_claims.excluded("q", -0.1, 0.2, "points", (-0.1, 0.9)) == "q above +20.0 points"
    assert "nothing" in seed_claims.excluded("q", -0.2, 1.0, "points", (-0.1, 0.9))


# --------------------------------------------------------------------------------------------- rows from data

def _claims(tmp: Path, body: str, reads: str) -> Path:
    path = tmp / "claims.toml"
    path.write_text(f'[[claims]]\nname = "x"\npaper = "arXiv 0000.00000"\nsays = "a claim"\nmeasure = "m"\n'
                    f'{body}\nreads = [{reads}]\n')
    return path


def _rows(tmp: Path, body: str, reads: str) -> list:
    claims = seed_claims.load_claims(_claims(tmp, body, reads))
    return seed_claims.rows(claims, tmp, tmp / "page.md")


def test_a_rank_claim_reads_the_rank_itself_and_reverses_with_the_data(tmp_path):
    for name, end in (("near", 2.1), ("far", 7.0), ("low", 0.3)):
        study(tmp_path / name, grpo_end=end)
    body = 'form = "about"\nunit = "rank"\nabout = 2.0'
    reads = ", ".join(f'{{ plan = "{n}/plan.toml", hypothesis = "H1" }}' for n in ("near", "far", "low"))
    near, far, low = _rows(tmp_path, body, reads)
    assert near.verdict == "supported" and far.verdict == "contradicted" and low.verdict == "contradicted"
    from grpo_lab.study import Study

    s = Study.load(tmp_path / "far" / "plan.toml")
    ranks = list(s.values("grpo").values())
    assert far.value == pytest.approx(sum(ranks) / len(ranks))  # the rank, not the rank minus 2
    assert near.margin == 1.0 and "within ±1 of 2" in near.detail
    assert near.firm.startswith(("firm", "**fragile**: flips under"))


def test_a_comparison_names_its_comparator_when_it_is_not_the_papers(tmp_path):
    study(tmp_path / "a", grpo_end=7.5)
    body = 'comparator = "Dr.GRPO"\nform = "higher"\nunit = "rank-diff"'
    (row,) = _rows(tmp_path, body, '{ plan = "a/plan.toml", comparison = "sign − grpo" }')
    assert "against GRPO, not the paper's Dr.GRPO" in row.scope
    body = 'comparator = "GRPO"\nform = "higher"\nunit = "rank-diff"'
    (row,) = _rows(tmp_path, body, '{ plan = "a/plan.toml", comparison = "sign − grpo" }')
    assert not any("not the paper's" in x for x in row.scope)


def test_a_comparison_verdict_follows_the_side_the_data_favour(tmp_path):
    study(tmp_path / "a", grpo_end=7.5)  # grpo's rank above sign's (6)
    study(tmp_path / "b", grpo_end=2.0)  # below it
    body = 'form = "higher"\nunit = "rank-diff"'
    reads = ", ".join(f'{{ plan = "{n}/plan.toml", comparison = "sign − grpo" }}' for n in ("a", "b"))
    a, b = _rows(tmp_path, body, reads)
    assert (a.verdict, b.verdict) == ("contradicted", "supported")


def test_a_proxy_is_never_a_verdict_on_the_claim_whatever_its_data(tmp_path):
    for name, end in (("a", 7.5), ("b", 2.0)):
        study(tmp_path / name, grpo_end=end)
    body = 'form = "higher"\nunit = "rank-diff"'
    reads = ", ".join(f'{{ plan = "{n}/plan.toml", comparison = "sign − grpo", relation = "proxy", why = "w" }}'
                      for n in ("a", "b"))
    for row in _rows(tmp_path, body, reads):
        assert row.verdict == "not a test of the claim" and "a proxy: w" in row.detail
    text = seed_claims.markdown(seed_claims.load_claims(_claims(tmp_path, body, reads)),
                                _rows(tmp_path, body, reads))
    assert "No reading tests it in its own terms; 2 read a proxy" in text


def test_a_profile_reads_above_or_below_the_iid_guess_from_its_numbers(tmp_path):
    for name, (real, lo, hi) in {"up": (0.7, 0.66, 0.74), "down": (0.5, 0.46, 0.54), "tie": (0.6, 0.5, 0.7)}.items():
        d = tmp_path / name
        d.mkdir()
        (d / "profile.json").write_text(json.dumps({
            "n_problems": 50, "n_samples": 8, "mean_success": 0.2, "settings": {"task": "t", "policy": "p"},
            "degenerate": {"4": {"real": real, "lo": lo, "hi": hi, "iid": 0.6}}}))
    body = 'form = "higher"\nunit = "share"\nreported = 0.69'
    reads = ", ".join(f'{{ profile = "{n}", group_size = 4 }}' for n in ("up", "down", "tie"))
    up, down, tie = _rows(tmp_path, body, reads)
    assert (up.verdict, down.verdict, tie.verdict) == ("supported", "contradicted", "not settled")
    assert "0.69 lies inside" in up.detail and "0.69 lies above" in down.detail


def test_a_study_not_finished_or_not_planned_says_so(tmp_path):
    s = study(tmp_path / "part", grpo_end=7.0)
    runs = sorted(p for p in (tmp_path / "part").rglob("grpo-seed*.json") if "results" in p.parts)
    for p in runs[:3]:
        p.unlink()
    body = 'form = "about"\nunit = "rank"\nabout = 2.0'
    part, missing = _rows(tmp_path, body, '{ plan = "part/plan.toml", hypothesis = "H1" }, '
                                          '{ plan = "none/plan.toml", hypothesis = "H1" }')
    assert part.verdict == "not read yet" and f"of {s.total} runs finished" in part.detail
    assert missing.verdict == "no plan committed yet"


def test_a_regime_lists_the_runs_that_stayed_and_says_when_most_left():
    from grpo_lab.study.measures import parse_measure  # noqa: F401 (the real parser reads the regime's measure)

    def fake(shares):
        plan = SimpleNamespace(tasks={}, path=Path("p"), primary=SimpleNamespace(text="easy pass@1"),
                               arms={"g": SimpleNamespace(label="grpo-hard")})
        ends = {s: 0.1 + 0.1 * s for s in shares}
        return SimpleNamespace(plan=plan, start=lambda arm: (0.15, 0.01),
                               values=lambda arm, m=None: shares if m is not None else ends)

    read = {"regime": {"arm": "g", "measure": "sole-share", "at_least": 0.5, "words": "mostly sole"}}
    lines, left = seed_claims._regime(fake({0: 0.2, 1: 1.0, 2: 0.1}), read, None)
    assert left and "1 of 3 runs stayed" in lines[0] and "seed 1 (sole-share 1.00): easy pass@1 0.150 → 0.200" \
        in lines[1]
    lines, left = seed_claims._regime(fake({0: 0.9, 1: 1.0, 2: 0.1}), read, None)  # reversed: most stayed
    assert not left and "2 of 3 runs stayed" in lines[0] and len(lines) == 3


# --------------------------------------------------------------------------------------------- inputs refused

@pytest.mark.parametrize("body,reads,msg", [
    ('reported = nan', '{ profile = "p", group_size = 4 }', "finite number"),
    ('unit = "share"\nreported = 69', '{ profile = "p", group_size = 4 }', "a percentage"),
    ('reported = 45.4', '{ profile = "p", group_size = 4 }', "write \\+0.454"),
    ('reported = [0.06, 0.04]', '{ profile = "p", group_size = 4 }', "runs backwards"),
    ('', '', "reads = \\[\\] tests nothing"),
    ('', '{ profile = "p", plan = "q/plan.toml", group_size = 4 }', "exactly one"),
    ('', '{ plan = "q/plan.toml" }', "one hypothesis, comparison or exploratory"),
    ('', '{ plan = "q/plan.toml", hypothesis = "H", relation = "proxy" }', "needs why"),
    ('', '{ plan = "q/plan.toml", hypothesis = "H", relation = "vibes" }', "relation must be one of"),
    ('', '{ profile = "p" }', "needs group_size"),
    ('form = "sideways"', '{ profile = "p", group_size = 4 }', "form must be one of"),
    ('colour = "red"', '{ profile = "p", group_size = 4 }', "unknown key"),
    ('', '{ plan = "q/plan.toml", hypothesis = "H", regime = { arm = "a" } }', "regime needs"),
])
def test_a_claims_file_that_cannot_be_read_is_refused_by_name(tmp_path, body, reads, msg):
    with pytest.raises(ClaimsError, match=msg):
        seed_claims.load_claims(_claims(tmp_path, body, reads))


def test_a_profile_with_an_impossible_value_is_refused(tmp_path):
    for name, x in {"nan": {"real": math.nan, "lo": 0.1, "hi": 0.2, "iid": 0.1},
                    "back": {"real": 0.65, "lo": 2.0, "hi": 0.655, "iid": 0.5},
                    "neg": {"real": 0.6, "lo": 0.5, "hi": 0.7, "iid": -0.1}}.items():
        d = tmp_path / name
        d.mkdir()
        (d / "profile.json").write_text(json.dumps({"n_problems": 5, "n_samples": 4, "mean_success": 0.2,
                                                    "degenerate": {"4": x}}))
        with pytest.raises(ClaimsError, match="degenerate|interval"):
            _rows(tmp_path, 'unit = "share"', f'{{ profile = "{name}", group_size = 4 }}')
    (tmp_path / "short").mkdir()
    (tmp_path / "short" / "profile.json").write_text(json.dumps({"degenerate": {}}))
    with pytest.raises(ClaimsError, match="has no n_problems, n_samples, mean_success"):
        _rows(tmp_path, 'unit = "share"', '{ profile = "short", group_size = 4 }')


def test_an_untracked_draft_plan_is_not_a_committed_study(tmp_path):
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    study(tmp_path / "draft", grpo_end=2.1)
    (row,) = _rows(tmp_path, 'form = "about"\nunit = "rank"\nabout = 2.0',
                   '{ plan = "draft/plan.toml", hypothesis = "H1" }')
    assert row.verdict == "no plan committed yet"


# --------------------------------------------------------------------------------------------- the figure

def test_the_figure_is_stamped_with_what_it_draws_and_a_change_makes_it_stale(tmp_path):
    data = [{"short": "a", "claim": "x", "study": "s", "quantity": "q", "unit": "points", "verdict": "supported",
             "value": 0.1, "lo": 0.05, "hi": 0.15, "reported": 0.454, "about": None, "margin": None},
            {"short": "b", "claim": "y", "study": "s", "quantity": "q", "unit": "rank", "verdict": "not settled",
             "value": 14.6, "lo": 1.4, "hi": 27.8, "reported": None, "about": 2.0, "margin": 1.0}]
    titles = {"x": "claim x", "y": "claim y"}
    path = tmp_path / "f.png"
    seed_claims.write_figure(data, titles, path)
    assert seed_claims.figure_stamp(path) == seed_claims.stamp(data, titles)
    moved = [dict(data[0], hi=0.2), data[1]]
    assert seed_claims.stamp(moved, titles) != seed_claims.stamp(data, titles)
    assert seed_claims.figure_stamp(tmp_path / "missing.png") is None
