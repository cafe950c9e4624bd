"""The replication status of every seed claim, in one table generated from the studies' data (issue 82).

    python scripts/seed_claims.py            # docs/results/claims.toml + the tracked runs -> docs/guide/real-model.md
    python scripts/seed_claims.py --check    # exit 1 if the page's table differs (tests/test_seed_claims.py)

``docs/results/claims.toml`` lists each claim (its paper, what it says) and the readings that test it: a study's
planned hypothesis or planned comparison, or a profile's measurement. Nothing in a row's verdict is typed by hand:

- a **hypothesis** is judged by the study engine under the plan's own rule (:func:`grpo_lab.study.readings.judge`:
  supported, not supported, contradicted; its size rule and its margin where the plan has them); "fragile" where a
  reasonable alternative of the engine's robustness check changes the judgement; a trained arm whose manipulation
  check reads "did not move" is named, since a null that involves it says little;
- a planned **comparison** with a published value (``claim`` in the plan) reads as the engine's verdict word and
  whether its interval excludes that value;
- a **profile** reads the start's degenerate share at one G with its interval over problems, against the i.i.d.
  guess at the mean success rate (a measurement, not a planned test);
- a plan not committed yet, or a study whose runs have not all finished, says so with its count of runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

try:  # Python 3.11+
    import tomllib
except ImportError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
CLAIMS = RESULTS / "claims.toml"
PAGE = ROOT / "docs" / "guide" / "real-model.md"
MARKERS = ("<!-- seed-claims:begin -->", "<!-- seed-claims:end -->")
HEAD = ["| claim | study | what is read | verdict | interval and what it bounds |",
        "|---|---|---|---|---|"]


def _link(path: Path, page: Path) -> str:
    import os

    return Path(os.path.relpath(path, page.parent)).as_posix()


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def profile_row(read: dict, results: Path, page: Path) -> tuple[str, str, str, str]:
    """``(study, what, verdict, interval)`` of a profile's degenerate share at one G against the i.i.d. guess."""
    d = results / read["profile"]
    prof = json.loads((d / "profile.json").read_text())
    g = str(read["group_size"])
    if g not in prof["degenerate"]:
        raise ValueError(f"{d / 'profile.json'} has no degenerate share at G = {g}")
    x = prof["degenerate"][g]
    real, lo, hi, iid = x["real"], x["lo"], x["hi"], x["iid"]
    way = ("above the i.i.d. guess" if lo > iid else "below the i.i.d. guess" if hi < iid
           else "not told apart from the i.i.d. guess")
    verdict = f"**{way}** (a measurement of the start, not a planned test)"
    claim = read.get("claim")
    bound = f"{real:.3f} [{lo:.3f}, {hi:.3f}] (95%, over problems); the i.i.d. guess {iid:.3f}"
    if claim is not None:
        where = "inside" if lo <= claim <= hi else ("above" if claim > hi else "below")
        bound += f"; the paper's {claim:g} lies {where} the interval (another model and task)"
    what = (f"the start's share of degenerate groups at G = {g}, {prof['n_problems']} problems × "
            f"{prof['n_samples']} samples, against the i.i.d. guess (1 − p̄)^G + p̄^G at p̄ = {prof['mean_success']:.3f}")
    return f"[{d.name}]({_link(d / 'report.md', page)})", what, verdict, bound


def _fragile(study, kind: str, key: str) -> str:
    for row in study.robust:
        if row.kind != kind or not row.flips:
            continue
        name = row.what.spec.label if kind == "comparison" else row.what[0].name
        if name == key:
            return f"; **fragile** (under {' and under '.join(row.flips)})"
    return ""


def _did_not_take(study, r) -> str:
    """The arms of reading ``r`` whose manipulation check reads "did not move" (or "wrong way"), in a clause."""
    from grpo_lab.study.words import took_word

    arms = {study.resolve(n) for n in (r.spec.a, r.spec.b, r.spec.c, r.spec.d) if isinstance(n, str)}
    words = {"did not move": "did not measurably move its measure", "wrong way": "moved its measure the wrong way"}
    off: dict = {}
    for name, _, m in study.manipulation():
        if name in arms and took_word(m) in words:
            off.setdefault(took_word(m), []).append(study.plan.arms[name].label)
    if not off:
        return ""
    return ("; the treatment " + " and ".join(f"{words[w]} in {' and '.join(labs)}" for w, labs in off.items())
            + " (the manipulation check): a null that involves it says little")


def _not_read(study, r) -> str:
    """A planned reading (``r``, None where the study has none yet) without a verdict: not yet (runs missing), or for
    good where every run finished but its arm has too few runs with a reading (``r.counted_unread``: Holm's
    correction counted it as p = 1)."""
    why = r.why_not if r is not None else None
    runs = f"{study.done} of {study.total} runs finished"
    if r is not None and r.counted_unread:
        return f"**cannot be read** ({why}; too few runs with a reading, counted by Holm's correction as p = 1)"
    return f"not read yet ({why}; {runs})" if why else f"not read yet ({runs})"


def study_row(read: dict, results: Path, page: Path, cache: dict | None = None) -> tuple[str, str, str, str]:
    """``(study, what, verdict, interval)`` of a study's planned hypothesis or planned comparison (``cache``: the
    studies loaded so far, by plan path)."""
    from grpo_lab.study import Study
    from grpo_lab.study.readings import judge
    from grpo_lab.study.words import bound, interval, judgement_clauses, level, verdict_word

    plan = results / read["plan"]
    if not plan.is_file():
        return "—", read.get("what", read["plan"]), "**no plan committed yet**", "—"
    cache = {} if cache is None else cache
    study = cache[plan] = cache.get(plan) or Study.load(plan)
    home = plan.parent
    report = home / study.plan.report
    link = f"[{home.name}]({_link(report if report.is_file() else home / (study.plan.prose or plan.name), page)})"
    if "hypothesis" in read:
        h = next((h for h in study.plan.hypotheses if h.name == read["hypothesis"]), None)
        if h is None:
            raise ValueError(f"{plan}: no hypothesis {read['hypothesis']!r}")
        r = study.reading(h.test)
        what = f"{h.name}: {h.says}" if h.says else h.name
        j = judge(h, r)
        if j.verdict == "cannot be read":
            return link, what, _not_read(study, r), "—"
        verdict = f"**{j.verdict}**" + "".join(f"; {c}" for c in judgement_clauses(study, h, j) if c)
        verdict += _fragile(study, "hypothesis", h.name) + _did_not_take(study, r)
    else:
        r = study.reading(read["comparison"])
        if r is None:
            raise ValueError(f"{plan}: no planned comparison {read['comparison']!r}")
        what = r.spec.label
        if r.d is None or r.apart is None:
            return link, what, _not_read(study, r), "—"
        verdict = f"**{verdict_word(study, r)}**"
        c = r.spec.claim
        if c is not None:
            verdict += (f"; the paper's {c:+.3f} lies inside the interval" if r.lo <= c <= r.hi else
                        f"; the paper's {c:+.3f} is excluded")
        verdict += _fragile(study, "comparison", r.spec.label) + _did_not_take(study, r)
    return link, what, verdict, f"{interval(r)} ({level(r)}, per comparison): {bound(study, r)}"


def table(claims_path: Path = CLAIMS, results: Path = RESULTS, page: Path = PAGE) -> str:
    """The markdown table, one row per reading, the claim named on its first row."""
    spec = tomllib.loads(claims_path.read_text())
    lines, cache = list(HEAD), {}
    for claim in spec["claims"]:
        for i, read in enumerate(claim["reads"]):
            row = profile_row(read, results, page) if "profile" in read else study_row(read, results, page, cache)
            first = f"**{claim['says']}** ({claim['paper']})" if i == 0 else ""
            lines.append("| " + " | ".join(_cell(x) for x in (first, *row)) + " |")
    return "\n".join(lines)


def fill(text: str, block: str) -> str:
    """``text`` with the table between its markers (readme_excerpt.fill), or a ValueError naming the missing block."""
    from readme_excerpt import fill as fill_between

    if MARKERS[0] not in text or MARKERS[1] not in text:
        raise ValueError(f"the page holds no {MARKERS[0]} ... {MARKERS[1]} block")
    return fill_between(text, MARKERS, block)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="exit 1 if the page's table differs; write nothing")
    a = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    text = PAGE.read_text()
    want = fill(text, table())
    if want == text:
        return 0
    if a.check:
        print(f"{PAGE.relative_to(ROOT)}: the seed claims' table differs from the studies' data; "
              "run python scripts/seed_claims.py", file=sys.stderr)
        return 1
    PAGE.write_text(want)
    return 0


if __name__ == "__main__":
    sys.exit(main())
