"""Issue 11, item 5: the README is true — its results section is generated from tracked reports, every file it
links exists and is tracked, and it describes `--quick` as the CLI does."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_results_section_matches_the_tracked_reports():
    res = subprocess.run([sys.executable, "scripts/readme_excerpt.py", "--check"], cwd=ROOT, capture_output=True,
                         text=True)
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize("lr", ["1e-4", "3e-4", "1e-3"])
def test_every_cited_learning_rate_has_its_report_and_config(lr):
    d = ROOT / "docs" / "results" / f"lr{lr}"
    for name in ("report.md", "config.json", "start.json", "training.png", "passk.png", "levels.png"):
        assert (d / name).is_file(), f"{d / name} is cited by the README but missing"
    assert f"lr {lr}" in README.replace("**", "")


def _tracked() -> set[str] | None:
    res = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    return set(res.stdout.splitlines()) if res.returncode == 0 and res.stdout else None


GUIDE = sorted((ROOT / "docs" / "guide").glob("*.md"))


@pytest.mark.parametrize("page", [ROOT / "README.md", *GUIDE], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_linked_file_exists_and_is_tracked(page):
    """The README and the guide pages it sends readers to (issue 37: everything but the front door moved there)."""
    text = page.read_text()
    links = {m for m in re.findall(r"\]\(([^)#\s]+)\)", text) if not m.startswith(("http://", "https://"))}
    assert links or page.name != "README.md", "no relative links found"
    tracked = _tracked()
    for link in sorted(links):
        path = (page.parent / link).resolve()
        name = path.relative_to(ROOT).as_posix()
        assert path.exists(), f"{page.name} links {link}, which does not exist"
        if tracked is not None and path.is_file():
            assert name in tracked, f"{page.name} links {link}, which git does not track"


def test_the_readme_is_a_front_door():
    """Issue 37: at most 2,500 words, the lesson table, the students' set-up without verl or the test suite, the
    practitioner's three commands, and every guide page linked."""
    words = len(README.split())
    assert words <= 2500, f"README.md has {words} words"
    start = README[README.index("## Start here"):README.index("## For practitioners")]
    assert "verl" not in start and "pytest" not in start
    for command in ("grpo-lab profile", "grpo-lab compare", "grpo-lab inspect"):
        assert command in README
    for page in GUIDE:
        assert f"docs/guide/{page.name}" in README, f"the README does not link docs/guide/{page.name}"
    assert "<!-- notebook-table:begin -->" in README


def test_quick_is_described_as_the_cli_does():
    from grpo_lab.cli import build_parser

    help_text = build_parser()._subparsers._group_actions[0].choices["compare"].format_help()
    assert "about half a minute" in " ".join(help_text.split())
    assert "about half a minute" in " ".join(README.split())


def test_ci_runs_exactly_the_readme_commands():
    run = (ROOT / ".ci" / "run").read_text()
    assert "readme_block setup" in run and "readme_block test" in run
    assert "<!-- ci:setup -->" in README and "<!-- ci:test -->" in README and "<!-- ci:main -->" in README


# What .gitignore may hide: caches, virtual environments and build outputs. Anything else that git ignores would
# work here and be missing from a clean checkout (stop 14: `site/` also hid the Sphinx config in docs/site/).
BUILD_OUTPUTS = re.compile(r"(^|/)(\.venv|__pycache__|[^/]*\.egg-info|\.pytest_cache|\.hypothesis|\.ruff_cache|"
                           r"\.ipynb_checkpoints|runs|build|dist)(/|$)|^(site|jupyter_execute)/|"
                           r"^(?!docs/)(.*/)?results/")


def test_git_ignores_nothing_but_caches_and_build_outputs():
    res = subprocess.run(["git", "ls-files", "--others", "--ignored", "--exclude-standard", "--directory"],
                         cwd=ROOT, capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip("not a git checkout")
    hidden = [p for p in res.stdout.splitlines() if not BUILD_OUTPUTS.search(p)]
    assert not hidden, f"git ignores files a clean checkout would lack: {hidden}"


def test_the_fast_path_report_and_its_verdict_match_the_tracked_runs():
    """Issue 36: the paired run's REPORT.md and the guide's verdict line are generated from the tracked results."""
    res = subprocess.run([sys.executable, "scripts/paired_report.py", "--check"], cwd=ROOT, capture_output=True,
                         text=True)
    assert res.returncode == 0, res.stderr


def test_verdicts_come_from_unrounded_values_and_a_rounded_bound_at_the_start_decides_nothing():
    """Issue 40, item 5: grpo+skip's lower bound at lr 1e-4 is 0.39450 against a start of 0.394375: "up" from the
    shipped per-seed data (as lesson 07 reads it); a report table rounded to 3 decimals cannot decide it."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import readme_excerpt as rx

    path = ROOT / "docs" / "results" / "lr1e-4" / "report.md"
    exact = rx.verdicts(path.read_text(), path)
    p1 = exact.split("; pass@16")[0]
    assert "up for" in p1 and "grpo+skip" in p1.split("up for")[1].split(";")[0]
    assert exact.endswith("(from unrounded per-seed data)")
    table = ("| estimator | seeds | pass@1 | pass@16 |\n|---|---|---|---|\n"
             "| a | 3 | 0.407 [0.394, 0.419] | 0.700 [0.690, 0.710] |\n"
             "| b | 3 | 0.420 [0.400, 0.440] | 0.650 [0.640, 0.660] |\n\nStart: pass@1 0.394, pass@16 0.710, greedy 0.477.\n")
    rounded = rx.verdicts(table)
    assert "up for b" in rounded and "a bound within the table's rounding of the start for a" in rounded
    assert "up for a" not in rounded and rounded.endswith("(from the report's rounded table)")


def test_the_harm_report_matches_the_tracked_runs():
    """Issue 39: docs/results/harm/REPORT.md is generated from the tracked runs (interim until every arm has its
    seeds), never typed."""
    res = subprocess.run([sys.executable, "scripts/harm_report.py", "--check"], cwd=ROOT, capture_output=True,
                         text=True)
    assert res.returncode == 0, res.stderr


def test_the_harm_verdict_reads_the_plan_from_unrounded_numbers():
    """Issue 39: the README's harm line follows the plan's reading of comparison 1 (harmful if it separates below 0
    after Holm, idle if not and its interval lies within +-0.03, helpful if above), from unrounded bounds, and says
    "no verdict" while an arm lacks its seeds."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import harm_report as hr

    def rows(d, lo, hi, apart):
        first = dict(label="grpo-hard vs the start", d=d, lo=lo, hi=hi, p=0.01, apart=apart)
        rest = [dict(label=label, d=0.0, lo=-0.01, hi=0.01, p=0.9, apart=False) for label, *_ in hr.PLANNED[1:]]
        return [first] + rest

    assert "no verdict yet" in hr.verdict({}, None, 7, "R.md") and "7 of 20" in hr.verdict({}, None, 7, "R.md")
    harm = hr.verdict({}, rows(-0.02, -0.04, -0.0004, True), 20, "R.md")  # the upper bound rounds to -0.000
    assert "**harmful here" in harm and "-0.020 [-0.040, -0.000]" in harm
    assert "**idle here" in hr.verdict({}, rows(0.0, -0.029, 0.0299, False), 20, "R.md")
    undecided = hr.verdict({}, rows(0.0, -0.0304, 0.02, False), 20, "R.md")  # -0.030 printed, beyond the band
    assert "**undecided at this size" in undecided and "a loss of up to 0.030" in undecided
    no_harm = hr.verdict({}, rows(0.022, -0.006, 0.051, False), 20, "R.md")
    assert "**not shown to be harmful" in no_harm and "a loss larger than 0.006 is ruled out" in no_harm
    assert "before the correction" in hr.verdict({}, rows(-0.03, -0.05, -0.01, False), 20, "R.md")
    assert "**helpful here" in hr.verdict({}, rows(0.05, 0.01, 0.09, True), 20, "R.md")
    for page, link in hr.PAGES.items():  # the line sits in both pages, linked from each
        assert f"[report]({link})" in page.read_text(), page


def test_the_study2_reports_match_the_tracked_runs():
    """Issue 40: study 2's REPORT.md, the replication report and the verdict lines of the README and the guide are
    generated from the tracked runs (interim until every method has its 6 seeds at every rate), never typed."""
    res = subprocess.run([sys.executable, "scripts/study2_report.py", "--check"], cwd=ROOT, capture_output=True,
                         text=True)
    assert res.returncode == 0, res.stderr


def test_a_stage_b_item_may_span_directories_of_one_setting(tmp_path, monkeypatch):
    """Issue 40, stage B: an item's seeds may be split over two comparison directories (one process per core); the
    report merges their finished runs in seed order, and refuses directories with other settings, a method the plan
    does not run there or a seed finished twice, naming them."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import study2_report as sr

    def comparison(name, seeds, fp="f1", methods=("grpo", "sign")):
        d = tmp_path / "G8-lr3e-4" / name
        (d / "results").mkdir(parents=True)
        (d / "config.json").write_text(json.dumps(dict(estimators=list(methods), seeds=seeds, fingerprint=fp)))
        for m in methods:
            for k in seeds:
                (d / "results" / f"{m}-seed{k}.json").write_text(json.dumps(dict(config=dict(seed=k), train_seconds=600, eval_seconds=300)))

    monkeypatch.setattr(sr, "STAGE_B", tmp_path)
    comparison("20261125-180000", [3, 4, 5])
    comparison("20261125-170000", [0, 1, 2])
    sb = sr.load_stage_b()
    assert [r["config"]["seed"] for r in sb["G8-lr3e-4"]["runs"]["sign"]] == [0, 1, 2, 3, 4, 5]
    assert len(sb["G8-lr3e-4"]["dirs"]) == 2 and sb["methods-lr3e-4"]["dirs"] == []
    assert not sr.stage_b_complete(sb)  # the other items have not started
    assert "ran as more than one comparison directory" in sr.stage_b_layout(sb)
    comparison("20261125-190000", [5], fp="f2")
    with pytest.raises(SystemExit, match="different settings"):
        sr.load_stage_b()
    (tmp_path / "G8-lr3e-4" / "20261125-190000" / "config.json").write_text(
        json.dumps(dict(estimators=["sign"], seeds=[5], fingerprint="f1")))
    with pytest.raises(SystemExit, match="sign seed 5 finished in two directories"):
        sr.load_stage_b()
    (tmp_path / "G8-lr3e-4" / "20261125-190000" / "config.json").write_text(
        json.dumps(dict(estimators=["rloo"], seeds=[5], fingerprint="f1")))
    with pytest.raises(SystemExit, match="the plan has"):
        sr.load_stage_b()


def test_the_study2_verdict_reads_the_plan_from_unrounded_numbers():
    """Issue 40, items 2 and 5: 'Sign ahead' only where a comparison separates above 0 after Holm, 'GRPO ahead' only
    below, otherwise 'not separated' with the seeds it would need; 'the learning rate explains it' only when the sign
    of the difference changes between rates with one of them separated; 'no verdict' while runs are missing. A
    lower bound that prints +0.000 still reads above 0 when Holm rejects: the bound itself decides, unrounded."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import study2_report as sr

    def row(rate, d, lo, hi, apart, need=40):
        return dict(rate=rate, d=d, lo=lo, hi=hi, p=0.01 if apart else 0.5, apart=apart, boot=(d, lo, hi), need=need)

    def vals(sign_p1, grpo_p1, sign_greedy, grpo_greedy):  # per-seed values at the two rates the pilot shares
        return {(rate, m): dict(pass1=p, greedy=g) for rate in ("1e-4", "3e-4")
                for m, p, g in (("sign", sign_p1, sign_greedy), ("grpo", grpo_p1, grpo_greedy))}

    same = vals([0.5, 0.6], [0.6, 0.7], [0.70, 0.72], [0.71, 0.73])  # the pilot's direction in pass@1, greedy equal
    interim = sr.verdict(dict(rows=None, done=8), "R.md")
    assert "no verdict yet" in interim and "8 of 36" in interim
    ahead = sr.verdict(dict(rows=[row("1e-4", 0.02, 0.0004, 0.04, True), row("3e-4", 0.01, -0.02, 0.04, False),
                                  row("1e-3", 0.0, -0.03, 0.03, False, None)], done=36, vals=same), "R.md")
    assert "+0.020 [+0.000, +0.040] at lr 1e-4 (Sign ahead)" in ahead and "**Sign ahead at lr 1e-4**" in ahead
    assert "no seed count up to 1,000" in ahead and "about 40 seeds" in ahead
    assert "explains no difference" in ahead  # every difference is >= 0: no change of sign
    assert "pass@1 direction held at lr 1e-4 and lr 3e-4" in ahead and ") did not (here" in ahead
    flips = sr.verdict(dict(rows=[row("1e-4", -0.1, -0.15, -0.05, True), row("3e-4", 0.02, -0.05, 0.09, False),
                                  row("1e-3", 0.01, -0.05, 0.07, False)], done=36,
                            vals=vals([0.7, 0.8], [0.5, 0.6], [0.40, 0.42], [0.60, 0.62])), "R.md")
    assert "(GRPO ahead)" in flips and "**GRPO ahead at lr 1e-4**" in flips and "explains part of it" in flips
    assert "Sign ahead" not in flips and "neither method" not in flips
    assert "pass@1 direction held at neither shared rate and turned at lr 1e-4 and lr 3e-4" in flips
    assert ") did (here" in flips  # GRPO ahead in greedy accuracy, as the pilot said
    none = sr.verdict(dict(rows=[row("1e-4", -0.07, -0.17, 0.03, False, 16), row("3e-4", 0.0, -0.1, 0.1, False),
                                 row("1e-3", 0.0, -0.1, 0.1, False)], done=36, vals=same), "R.md")
    assert "**neither method ahead at any rate**" in none and "about 16 seeds per method would resolve it" in none
    # the replication's answer and what more seeds could change, from the same rows
    rows_none = [row("1e-4", -0.07, -0.17, 0.03, False, 16), row("3e-4", 0.0, -0.1, 0.5, False, None),
                 row("1e-3", 0.0, -0.1, 0.1, False, 90)]
    words = sr.in_words(rows_none)
    assert "not reproduced here" in words and "+0.454 lies outside" not in words  # 3e-4's interval reaches 0.5
    assert "reproduced in direction" in sr.in_words([row("1e-4", 0.1, 0.05, 0.15, True)] + rows_none[1:])
    more = sr.more_seeds(rows_none)
    assert "16 seeds per method at lr 1e-4" in more and "90 seeds per method at lr 1e-3" in more and "3e-4" not in more
    for page, link in sr.PAGES.items():  # the line sits in both pages, linked from each
        assert f"[replication report]({link})" in page.read_text(), page
