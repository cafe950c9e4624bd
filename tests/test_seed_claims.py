"""Issue 82: the replication status of every seed claim in one table, generated from the studies' data
(scripts/seed_claims.py). The table on the guide page is what the tracked runs say, and its words reverse when the
data do."""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import seed_claims  # noqa: E402

from test_study_levels import study  # noqa: E402


def test_the_guide_page_holds_the_table_the_tracked_runs_give():
    assert seed_claims.main(["--check"]) == 0, "run python scripts/seed_claims.py"


def test_every_claim_names_its_paper_and_at_least_one_reading():
    import tomllib

    claims = tomllib.loads(seed_claims.CLAIMS.read_text())["claims"]
    assert {c["name"] for c in claims} >= {"starvation", "sign", "avspo-points", "harm", "rank"}
    for c in claims:
        assert c["paper"] and c["says"] and c["reads"], c["name"]
        for read in c["reads"]:
            assert ("profile" in read) != ("plan" in read), read


def _claims(tmp: Path, reads: str) -> Path:
    path = tmp / "claims.toml"
    path.write_text(f'[[claims]]\nname = "x"\npaper = "arXiv 0000.00000"\nsays = "a claim"\nreads = [{reads}]\n')
    return path


def _rows(tmp: Path, reads: str) -> list[str]:
    text = seed_claims.table(_claims(tmp, reads), tmp, tmp / "page.md")
    return text.splitlines()[2:]


def test_a_hypothesis_row_reverses_with_the_data(tmp_path):
    for name, end in (("near", 2.1), ("far", 7.0), ("low", 0.8)):
        study(tmp_path / name, grpo_end=end)
    reads = ", ".join(f'{{ plan = "{n}/plan.toml", hypothesis = "H1" }}' for n in ("near", "far", "low"))
    near, far, low = _rows(tmp_path, reads)
    assert "**not supported**" in near and "about 2 within ±1 of 2" in near and "not shown" not in near
    assert "**supported**" in far and "not shown about 2" in far
    assert "**contradicted**" in low and "not shown about 2" in low
    assert "(95%, per comparison)" in far and "fragile" not in near


def test_a_comparison_row_names_the_side_the_data_favour(tmp_path):
    study(tmp_path / "a", grpo_end=7.5)  # grpo's rank above sign's (6)
    study(tmp_path / "b", grpo_end=2.0)  # below it
    reads = ", ".join(f'{{ plan = "{n}/plan.toml", comparison = "sign − grpo" }}' for n in ("a", "b"))
    a, b = _rows(tmp_path, reads)
    assert "**grpo higher**" in a and "**sign higher**" in b


def test_a_profile_row_reads_above_or_below_the_iid_guess_from_its_numbers(tmp_path):
    for name, (real, lo, hi) in {"up": (0.7, 0.66, 0.74), "down": (0.5, 0.46, 0.54), "tie": (0.6, 0.5, 0.7)}.items():
        d = tmp_path / name
        d.mkdir()
        (d / "profile.json").write_text(json.dumps({
            "n_problems": 50, "n_samples": 8, "mean_success": 0.2,
            "degenerate": {"4": {"real": real, "lo": lo, "hi": hi, "iid": 0.6}}}))
    reads = ", ".join(f'{{ profile = "{n}", group_size = 4, claim = 0.69 }}' for n in ("up", "down", "tie"))
    up, down, tie = _rows(tmp_path, reads)
    assert "**above the i.i.d. guess**" in up and "the paper's 0.69 lies inside" in up
    assert "**below the i.i.d. guess**" in down and "the paper's 0.69 lies above" in down
    assert "**not told apart from the i.i.d. guess**" in tie


def test_a_study_not_finished_or_not_planned_says_so(tmp_path):
    s = study(tmp_path / "part", grpo_end=7.0)
    runs = sorted(p for p in (tmp_path / "part").rglob("grpo-seed*.json") if "results" in p.parts)
    assert len(runs) == 4
    for p in runs[:3]:
        p.unlink()
    part, missing = _rows(tmp_path, '{ plan = "part/plan.toml", hypothesis = "H1" }, '
                                    '{ plan = "none/plan.toml", hypothesis = "H1", what = "study 9" }')
    assert f"of {s.total} runs finished" in part and "not read yet" in part and "**supported**" not in part
    assert "study 9" in missing and "**no plan committed yet**" in missing


def test_a_reading_counted_as_p1_is_worded_for_good_not_yet():
    """A hypothesis whose arm kept too few runs with a reading once every run finished (Holm counts it as p = 1) is
    "cannot be read" in the table, not "not read yet"; the same reading while runs are missing stays "yet"."""
    from types import SimpleNamespace

    st = SimpleNamespace(done=36, total=36)
    why = "1 seed(s): an interval needs 2"
    counted = SimpleNamespace(counted_unread=True, why_not=why)
    assert "**cannot be read**" in seed_claims._not_read(st, counted) and why in seed_claims._not_read(st, counted)
    assert "yet" not in seed_claims._not_read(st, counted)
    assert "not read yet" in seed_claims._not_read(SimpleNamespace(done=20, total=36),
                                                   SimpleNamespace(counted_unread=False, why_not=why))
    assert seed_claims._not_read(SimpleNamespace(done=3, total=36), None) == "not read yet (3 of 36 runs finished)"
