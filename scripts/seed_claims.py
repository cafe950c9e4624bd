"""Each paper's claim answered in its own terms, generated from the studies' data (issues 82 and 102).

    python scripts/seed_claims.py            # docs/results/claims.toml + the tracked runs -> the guide's blocks + figure
    python scripts/seed_claims.py --check    # exit 1 if a block or the figure differs (tests/test_seed_claims.py)

``docs/results/claims.toml`` states each claim as its paper does (its measure, model, task and regime, its comparator,
its direction and size) and the readings that bear on it: a study's planned hypothesis, planned comparison or
exploratory reading, or a profile of the start. Facts about a paper are typed there; nothing about the data is. Every
value, interval, verdict, comparator and scope line below is drawn from the tracked runs.

A reading says how it bears on the claim (``relation``):

- ``claim``: the claim's own quantity and direction (possibly on another comparator, which the row names). Its
  **verdict on the claim** (:func:`verdict_on_claim`): *supported* (separated after the study's correction in the
  claim's direction), *contradicted* (separated the other way), *smaller than the paper's* (the interval excludes the
  paper's size, which the task could have shown), *out of reach* (the task cannot show the paper's size at all: the
  comparator leaves less room than it; lesson 10), or *not settled*. A claim of the form "about v" is supported when
  the interval lies within ±margin of v, contradicted when it lies wholly outside, else not settled;
- ``proxy``: a mechanism under the claim's quantity (e.g. a share AVSPO lowers by construction): shown, never a
  verdict on the claim;
- ``explanation`` / ``beside``: a test of an explanation of the paper's result, or of a neighbouring question.

Where a claim is about a regime (one lucky success in a group), a read may name the measure that places each run in it
(``regime``): a study whose arm mostly left the regime says "not tested in its regime" and lists the runs that stayed.
The figure (``docs/guide/claims.png``) shows each reading's value with its interval beside the paper's, one panel per
claim and unit; its data are stamped in the PNG, so ``--check`` fails when it is stale.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import asdict, dataclass, field
from pathlib import Path

try:  # Python 3.11+
    import tomllib
except ImportError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
CLAIMS = RESULTS / "claims.toml"
PAGE = ROOT / "docs" / "guide" / "real-model.md"
FIGURE = ROOT / "docs" / "guide" / "claims.png"
MARKERS = ("<!-- seed-claims:begin -->", "<!-- seed-claims:end -->")
RELATIONS = ("claim", "proxy", "explanation", "beside")
RELATION_WORDS = {"proxy": "a proxy", "explanation": "an explanation", "beside": "a neighbouring question"}
FORMS = ("higher", "lower", "about")
UNITS = {  # how a value is shown: (scale, decimals, suffix)
    "points": (100.0, 1, " points"), "share": (1.0, 3, ""), "relative": (100.0, 0, "%"), "rank": (1.0, 1, ""),
    "rank-diff": (1.0, 1, ""),
}
AXES = {"points": "points of accuracy (the reading's difference)", "share": "share",
        "relative": "relative change (%)", "rank": "effective rank", "rank-diff": "difference of effective ranks"}
METHODS = {"grpo": "GRPO", "drgrpo": "Dr.GRPO", "sign": "Sign", "avspo": "AVSPO", "avspo_code": "AVSPO (code)"}
POLICIES = {"smollm2": "SmolLM2-135M-Instruct"}
VERDICTS = ("supported", "contradicted", "smaller than the paper's", "out of reach", "not settled",
            "not tested in its regime", "not a test of the claim", "not read yet", "no plan committed yet")
COLOURS = {"supported": "tab:green", "contradicted": "tab:red", "smaller than the paper's": "tab:orange",
           "out of reach": "tab:purple", "not settled": "tab:blue", "not tested in its regime": "tab:brown",
           "not a test of the claim": "tab:gray"}
CLAIM_KEYS = {"name", "paper", "says", "measure", "setting", "comparator", "form", "unit", "reported", "about",
              "margin", "reads"}
READ_KEYS = {"plan", "profile", "hypothesis", "comparison", "exploratory", "relation", "group_size", "unit", "form",
             "about", "margin", "reported", "quantity", "regime", "why", "relative_to", "short"}


class ClaimsError(ValueError):
    """claims.toml (or what it names) cannot be read as a claim: the message names the claim, the key and why."""


# ----------------------------------------------------------------------------------------------- the claims file

def _number(where: str, key: str, x, unit: str | None = None) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        raise ClaimsError(f"{where}: {key} must be a finite number, got {x!r}")
    if unit == "share" and not 0 <= x <= 1:
        raise ClaimsError(f"{where}: {key} = {x!r} is a share and must lie in [0, 1] (a percentage? write 0.69, "
                          "not 69)")
    if unit in ("points", "relative") and abs(x) > 1:
        raise ClaimsError(f"{where}: {key} = {x!r} is a fraction in unit {unit!r} (write +0.454 for 45.4 points, "
                          "-0.58 for a 58% cut)")
    return float(x)


def _reported(where: str, x, unit: str):
    """The paper's value: a number or a ``[low, high]`` range, in the claim's unit as a fraction; None where the
    paper gives none."""
    if x is None:
        return None
    if isinstance(x, list):
        if len(x) != 2:
            raise ClaimsError(f"{where}: reported must be a number or [low, high], got {x!r}")
        lo, hi = (_number(where, "reported", v, unit) for v in x)
        if lo > hi:
            raise ClaimsError(f"{where}: reported range [{lo}, {hi}] runs backwards")
        return [lo, hi]
    return _number(where, "reported", x, unit)


def load_claims(path: Path = CLAIMS) -> list[dict]:
    """The claims, checked: every key known, every number finite and possible in its unit, every read naming one
    source and one reading, every relation and form known, no claim without a read."""
    try:
        spec = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ClaimsError(f"{path}: {e}") from None
    claims = spec.get("claims")
    if not isinstance(claims, list) or not claims:
        raise ClaimsError(f"{path}: no [[claims]]")
    for c in claims:
        where = f"{path.name}: claim {c.get('name', '?')!r}"
        unknown = set(c) - CLAIM_KEYS
        if unknown:
            raise ClaimsError(f"{where}: unknown key(s) {sorted(unknown)}")
        for key in ("name", "paper", "says"):
            if not isinstance(c.get(key), str) or not c[key].strip():
                raise ClaimsError(f"{where}: needs {key} (text)")
        c.setdefault("form", "higher")
        c.setdefault("unit", "points")
        if c["form"] not in FORMS or c["unit"] not in UNITS:
            raise ClaimsError(f"{where}: form must be one of {FORMS} and unit one of {tuple(UNITS)}")
        c["reported"] = _reported(where, c.get("reported"), c["unit"])
        if not isinstance(c.get("reads"), list) or not c["reads"]:
            raise ClaimsError(f"{where}: reads = [] tests nothing; name at least one reading")
        for i, read in enumerate(c["reads"]):
            w = f"{where}, read {i + 1}"
            unknown = set(read) - READ_KEYS
            if unknown:
                raise ClaimsError(f"{w}: unknown key(s) {sorted(unknown)}")
            if ("plan" in read) == ("profile" in read):
                raise ClaimsError(f"{w}: name a plan or a profile, exactly one")
            if "plan" in read and sum(k in read for k in ("hypothesis", "comparison", "exploratory")) != 1:
                raise ClaimsError(f"{w}: name one hypothesis, comparison or exploratory reading of the plan")
            if "profile" in read and not isinstance(read.get("group_size"), int):
                raise ClaimsError(f"{w}: a profile read needs group_size (an integer)")
            read.setdefault("relation", "claim")
            if read["relation"] not in RELATIONS:
                raise ClaimsError(f"{w}: relation must be one of {RELATIONS}, got {read['relation']!r}")
            read.setdefault("unit", c["unit"])
            read.setdefault("form", c["form"])
            if read["form"] not in FORMS or read["unit"] not in UNITS:
                raise ClaimsError(f"{w}: form must be one of {FORMS} and unit one of {tuple(UNITS)}")
            same = read["unit"] == c["unit"] and read["form"] == c["form"] and read["relation"] == "claim"
            read["reported"] = _reported(w, read.get("reported"), read["unit"]) if "reported" in read else (
                c["reported"] if same else None)
            for key in ("about", "margin"):
                if key in read or (key in c and same):
                    read[key] = _number(w, key, read.get(key, c.get(key)))
            if "regime" in read:
                reg = read["regime"]
                if not isinstance(reg, dict) or set(reg) != {"arm", "measure", "at_least", "words"}:
                    raise ClaimsError(f"{w}: regime needs exactly arm, measure, at_least and words")
                _number(w, "regime.at_least", reg["at_least"])
            if read["relation"] != "claim" and not read.get("why"):
                raise ClaimsError(f"{w}: a {read['relation']} read needs why (what it tests instead of the claim)")
    return claims


# ------------------------------------------------------------------------------------------------- the verdicts

def verdict_on_claim(form: str, lo: float, hi: float, separated: bool | None, reported=None, about=None,
                     margin=None, reach: tuple | None = None) -> str:
    """The verdict on a claim of ``form`` from an interval ``[lo, hi]`` in the claim's units (a pure function).

    ``higher`` / ``lower``: the claim's effect lies above / below 0, of size ``reported`` (a number or a range, signed)
    where the paper gives one. ``separated``: the study's verdict after its correction (None: an exploratory reading,
    read as the interval excluding 0). ``reach``: ``(lowest, highest)`` the quantity can be on this task.
    ``about``: the claim's value lies within ``±margin`` of ``about``."""
    if form == "about":
        if about is None or margin is None:
            raise ValueError("a claim of the form 'about' needs its value and a margin")
        if about - margin <= lo and hi <= about + margin:
            return "supported"
        return "contradicted" if hi < about - margin or lo > about + margin else "not settled"
    s = 1 if form == "higher" else -1
    value = (lo + hi) / 2
    apart = (lo > 0 or hi < 0) if separated is None else separated
    if apart and s * value < 0:
        return "contradicted"
    if reported is not None:
        need = min(s * x for x in (reported if isinstance(reported, list) else [reported]))
        room = None if reach is None else (reach[1] if s > 0 else -reach[0])
        if room is not None and room < need:
            return "out of reach"
        if (hi if s > 0 else -lo) < need:
            return "smaller than the paper's"
    return "supported" if apart and s * value > 0 else "not settled"


def show(x: float, unit: str, signed: bool = True) -> str:
    scale, dec, suffix = UNITS[unit]
    v = x * scale
    if round(v, dec) == 0:
        v = 0.0  # no "-0.0"
    return f"{v:+.{dec}f}{suffix}" if signed else f"{v:.{dec}f}{suffix}"


def excluded(quantity: str, lo: float, hi: float, unit: str, reach: tuple | None, signed: bool = True) -> str:
    """What the interval excludes, in plain words on the quantity; a side past what the quantity can be excludes
    nothing and is left out."""
    parts = []
    if reach is None or hi < reach[1]:
        parts.append(f"above {show(hi, unit, signed)}")
    if reach is None or lo > reach[0]:
        parts.append(f"below {show(lo, unit, signed)}")
    if not parts:
        return "nothing the task allows (the interval spans all it can be)"
    return f"{quantity} {' or '.join(parts)}"


# ------------------------------------------------------------------------------------------------- the readings

@dataclass
class Row:
    """One reading of one claim, every field from the data: what the page's row and the figure show."""
    short: str
    claim: str
    study: str
    link: str
    quantity: str
    relation: str
    unit: str
    verdict: str
    value: float | None = None
    lo: float | None = None
    hi: float | None = None
    level: str = ""
    reported: object = None
    about: float | None = None
    margin: float | None = None
    detail: str = ""
    firm: str = ""
    excludes: str = ""
    scope: list = field(default_factory=list)
    signed: bool = True  # a difference (signed) or a value of the quantity itself (a share, a rank)


def reach(r) -> tuple | None:
    """``(lowest, highest)`` a reading's difference can be: for a fraction (pass@1) compared with an arm, the start or
    a level, what its own side can still move given the comparator's mean (lesson 10: where GRPO already scores 0.71,
    Sign − GRPO cannot exceed +0.29, so "+0.45 excluded" could not have failed); the engine's reach otherwise."""
    from grpo_lab.study.words import reach as engine_reach

    if r.spec.measure.metric.fraction and r.spec.c is None and r.mean_b is not None:
        return -r.mean_b, 1.0 - r.mean_b
    return engine_reach(r)


def _link(path: Path, page: Path) -> str:
    return Path(os.path.relpath(path, page.parent)).as_posix()


def tracked(path: Path) -> bool:
    """Whether git tracks ``path`` (an untracked draft plan is not a committed study); True outside a repository."""
    try:
        out = subprocess.run(["git", "ls-files", "--error-unmatch", path.name], cwd=path.parent,
                             capture_output=True, text=True)
    except OSError:
        return True
    if "not a git repository" in out.stderr:
        return True
    return out.returncode == 0


def task_words(task: str) -> str:
    """A task in words: reasoning-gym's chain_sum as "two-term sums of 1-to-2-digit numbers"; others as named."""
    m = re.fullmatch(r"gym:chain_sum:min_terms=(\d+),max_terms=(\d+),min_digits=(\d+),max_digits=(\d+)", task)
    if not m:
        return task
    t0, t1, d0, d1 = (int(x) for x in m.groups())
    terms = {2: "two", 3: "three"}.get(t0, str(t0)) if t0 == t1 else f"{t0}-to-{t1}"
    digits = f"{d0}-digit" if d0 == d1 else f"{d0}-to-{d1}-digit"
    return f"{terms}-term sums of {digits} numbers"


def start_regime(task: str, policy: str, group_size: int, results: Path) -> str | None:
    """The start's pass@1 and degenerate share at ``group_size`` on ``task``, from the profile of the same task and
    policy (None where none was measured)."""
    for p in sorted(results.glob("profile-*/profile.json")):
        prof = json.loads(p.read_text())
        s = prof.get("settings", {})
        if s.get("task") == task and s.get("policy") == policy and str(group_size) in prof.get("degenerate", {}):
            x = prof["degenerate"][str(group_size)]
            return (f"the start: pass@1 {prof['mean_success']:.3f}, {x['real']:.2f} of G = {group_size} groups "
                    f"degenerate ({p.parent.name})")
    return None


def _fragile(study, kind: str, key: str) -> str:
    if kind == "exploratory":
        return "exploratory: not re-read under alternatives"
    for row in study.robust:
        if row.kind != kind:
            continue
        name = row.what.spec.label if kind == "comparison" else row.what[0].name
        if name == key:
            return f"**fragile**: flips under {' and under '.join(row.flips)}" if row.flips else \
                "firm under the engine's alternatives"
    return "firm under the engine's alternatives"


def _alternative_readings(study, kind: str, key: str, label: str) -> list:
    """``[(alternative, reading), ...]``: the comparison's readings under the alternatives that flip its verdict
    or its hypothesis's (the claim's verdict is then re-drawn on them)."""
    if kind == "exploratory":
        return []
    flips = set()
    for row in study.robust:
        name = row.what.spec.label if row.kind == "comparison" else row.what[0].name
        if name in (key, label):
            flips.update(row.flips)
    comp = next((row for row in study.robust if row.kind == "comparison" and row.what.spec.label == label), None)
    if comp is None:
        return []
    return [(a, x) for a, x in comp.got.items() if a in flips and x.d is not None and x.apart is not None]


def _did_not_take(study, spec) -> list:
    from grpo_lab.study.words import took_word

    arms = {study.resolve(n) for n in spec.arms}
    return [study.plan.arms[name].label for name, _, m in study.manipulation()
            if name in arms and took_word(m) in ("did not move", "wrong way")]


def _name(study, arm: str) -> str:
    name = study.resolve(arm) or arm
    a = study.plan.arms.get(name)
    return METHODS.get(a.method, a.method) if a is not None else arm


def _quantity(study, spec) -> str:
    m = spec.measure.text
    if spec.level is not None:
        return f"{m} of {study.plan.arms[study.resolve(spec.a)].label}"
    if spec.b == "start":
        return f"{m}: {study.plan.arms[study.resolve(spec.a)].label} − the start"
    if spec.c is not None:
        return f"{m}: ({_name(study, spec.a)} − {_name(study, spec.b)}) − ({_name(study, spec.c)} − {_name(study, spec.d)})"
    return f"{m}: {_name(study, spec.a)} − {_name(study, spec.b)}"


def _comparator(study, spec, claim: dict) -> str | None:
    """The comparator the reading used, named beside the paper's where they differ."""
    want = claim.get("comparator")
    if spec.level is not None or spec.c is not None or not want:
        return None
    if spec.b == "start":
        return None if want == "the start" else f"against the start, not {want}"
    got = _name(study, spec.b)
    return None if got == want else f"against {got}, not the paper's {want}"


def profile_row(claim: dict, read: dict, results: Path, page: Path) -> Row:
    d = results / read["profile"]
    path = d / "profile.json"
    if not path.is_file():
        raise ClaimsError(f"claim {claim['name']!r}: no {path}")
    prof = json.loads(path.read_text())
    missing = [k for k in ("n_problems", "n_samples", "mean_success", "degenerate") if k not in prof]
    if missing:  # issue 105: a missing key is named, never a bare KeyError
        raise ClaimsError(f"{path} has no {', '.join(missing)}: not a profile grpo-lab profile wrote")
    g = str(read["group_size"])
    x = prof.get("degenerate", {}).get(g)
    if x is None:
        raise ClaimsError(f"{path} has no degenerate share at G = {g}")
    for key in ("real", "lo", "hi", "iid"):
        _number(str(path), f"degenerate[{g}].{key}", x.get(key), "share")
    real, lo, hi, iid = x["real"], x["lo"], x["hi"], x["iid"]
    if not lo <= real <= hi:
        raise ClaimsError(f"{path}: the interval [{lo}, {hi}] at G = {g} does not hold its value {real}")
    p = _number(str(path), "mean_success", prof.get("mean_success"), "share")
    # the claim: the share lies above the i.i.d. guess (Jensen), so the quantity is share − guess
    verdict = verdict_on_claim("higher", lo - iid, hi - iid, None)
    se = (hi - lo) / (2 * 1.959964)
    strict = verdict_on_claim("higher", real - iid - 2.807 * se, real - iid + 2.807 * se, None)
    firm = "firm: the same at 99.5%" if strict == verdict else f"**fragile**: {strict} at 99.5%"
    task = prof.get("settings", {}).get("task", "?")
    policy = prof.get("settings", {}).get("policy", "?")
    reported = claim["reported"]
    where = ("inside" if lo <= reported <= hi else "above" if reported > hi else "below") if reported is not None \
        else None
    return Row(read.get("short") or d.name, claim["name"], d.name, _link(d / "report.md", page),
               f"the start's degenerate share at G = {g} (i.i.d. guess {iid:.3f} at p̄ = {p:.3f})", "claim", "share",
               verdict, real, lo, hi, "95%, over problems", reported,
               detail=(f"{real - iid:+.3f} above the guess" if real >= iid else f"{iid - real:.3f} below the guess")
               + (f"; the paper's {reported:g} lies {where} the interval" if where else ""),
               firm=firm, excludes=f"a share below {lo:.3f} or above {hi:.3f}", signed=False,
               scope=[f"{POLICIES.get(policy, policy)} on {task_words(task)}, {prof['n_problems']} problems × "
                      f"{prof['n_samples']} samples: a measurement of the start, not a planned test"])


def _reading(study, read: dict):
    """``(kind, key, reading, hypothesis or None)`` for the read."""
    from grpo_lab.study.readings import judge  # noqa: F401 (the engine's judgement is read beside ours)

    if "hypothesis" in read:
        h = next((h for h in study.plan.hypotheses if h.name == read["hypothesis"]), None)
        if h is None:
            raise ClaimsError(f"{study.plan.path}: no hypothesis {read['hypothesis']!r}")
        return "hypothesis", h.name, study.reading(h.test), h
    if "comparison" in read:
        r = study.reading(read["comparison"])
        if r is None:
            raise ClaimsError(f"{study.plan.path}: no planned comparison {read['comparison']!r}")
        return "comparison", r.spec.label, r, None
    r = next((x for x in study.exploratory if x.spec.label == read["exploratory"]), None)
    if r is None:
        raise ClaimsError(f"{study.plan.path}: no exploratory reading {read['exploratory']!r}")
    return "exploratory", r.spec.label, r, None


def _regime(study, read: dict, r) -> tuple[list, bool]:
    """``(lines, left)``: the runs of the regime's arm that stayed in the claim's regime (``regime.measure`` at least
    ``regime.at_least``), each with its primary measure beside the start; ``left``: most of the arm's runs left it."""
    from grpo_lab.study.measures import parse_measure

    reg = read["regime"]
    arm = reg["arm"]
    m = parse_measure(reg["measure"], study.plan.tasks, f"{study.plan.path}: regime")
    share = study.values(arm, m)
    if not share:
        return [f"{reg['measure']} is not recorded by {arm}'s runs: the regime was not read"], False
    end = study.values(arm)
    start = study.start(arm)
    inside = sorted(s for s, v in share.items() if v >= reg["at_least"])
    others = [v for s, v in share.items() if s not in inside]
    label = study.plan.arms[arm].label
    p = study.plan.primary.text
    line = (f"{label}: {len(inside)} of {len(share)} runs stayed in the claim's regime ({reg['measure']} ≥ "
            f"{reg['at_least']:g}: {reg['words']})")
    if others:
        line += f"; the others {min(others):.2f}–{max(others):.2f}"
    lines = [line]
    for s in inside:
        was = f"{start[0]:.3f} → " if start else ""
        lines.append(f"seed {s} ({reg['measure']} {share[s]:.2f}): {p} {was}{end[s]:.3f}")
    return lines, 2 * len(inside) < len(share)


def study_row(claim: dict, read: dict, results: Path, page: Path, cache: dict) -> Row:
    from grpo_lab.study import Study

    plan = results / read["plan"]
    unit = read["unit"]
    if not plan.is_file() or not tracked(plan):
        return Row(read.get("short") or read["plan"], claim["name"], Path(read["plan"]).parent.name, "", read.get("quantity", read["plan"]),
                   read["relation"], unit, "no plan committed yet")
    study = cache[plan] = cache.get(plan) or Study.load(plan)
    home = plan.parent
    report = home / study.plan.report
    link = _link(report if report.is_file() else home / (study.plan.prose or plan.name), page)
    kind, key, r, h = _reading(study, read)
    spec = r.spec if r is not None else None
    quantity = read.get("quantity") or (_quantity(study, spec) if spec is not None else key)
    row = Row(read.get("short") or f"{home.name}: {key}", claim["name"], home.name, link, quantity, read["relation"], unit, "not read yet",
              reported=read.get("reported"), about=read.get("about"), margin=read.get("margin"))
    if h is not None and row.margin is None and h.margin is not None and read["form"] == "about":
        row.margin = float(h.margin)
    if r is None or r.d is None or (kind != "exploratory" and r.apart is None):
        why = r.why_not if r is not None else None
        row.detail = (f"{why}; " if why else "") + f"{study.done} of {study.total} runs finished"
        if r is not None and r.counted_unread:
            row.verdict, row.detail = "not settled", f"cannot be read: {why} (Holm counted it as p = 1)"
        return row
    # a claim "about v" on an arm against a level reads the arm's own value (rank − 2 shown as the rank)
    shift = spec.level if spec.level is not None and read["form"] == "about" else 0.0
    base = 1.0
    if read.get("relative_to"):
        vals = list(study.values(read["relative_to"], spec.measure).values())
        base = sum(vals) / len(vals)
        if not base > 0:
            raise ClaimsError(f"{plan}: {read['relative_to']}'s mean {base} cannot scale a relative change")
    row.value, row.lo, row.hi = (shift + r.d) / base, (shift + r.lo) / base, (shift + r.hi) / base
    row.signed = not shift
    row.level = "95%, per comparison" + ("" if kind != "exploratory" else ", exploratory: no correction")
    span = reach(r)
    span = None if span is None else ((shift + span[0]) / base, (shift + span[1]) / base)
    separated = None if kind == "exploratory" else bool(r.apart)
    comp = _comparator(study, spec, claim)
    row.excludes = excluded(quantity, row.lo, row.hi, unit, span, row.signed)
    row.firm = _fragile(study, kind, key)
    cfg = study.plan.arms[study.resolve(spec.a)].config
    scope = [f"{POLICIES.get(cfg.policy, cfg.policy)} on {task_words(cfg.task)}"
             + (f" (the {'paper' if claim['paper'].startswith('arXiv') else 'claim'}: {claim['setting']})"
               if claim.get("setting") else "")]
    regime = start_regime(cfg.task, cfg.policy, cfg.group_size, results)
    if regime:
        scope.append(regime)
    if comp:
        scope.append(comp)
    off = _did_not_take(study, spec)
    if off:
        scope.append(f"the treatment did not take in {' and '.join(off)} (manipulation check): a null involving it "
                     "says little")
    if read["relation"] != "claim":
        row.verdict = "not a test of the claim"
        row.detail = f"{RELATION_WORDS[read['relation']]}: {read['why']}"
        row.scope = scope
        return row
    row.verdict = verdict_on_claim(read["form"], row.lo, row.hi, separated, row.reported, row.about, row.margin,
                                   span)
    details = []
    for alt, x in _alternative_readings(study, kind, key, spec.label):  # what the claim's verdict would be there
        lo, hi = (shift + x.lo) / base, (shift + x.hi) / base
        other = verdict_on_claim(read["form"], lo, hi, bool(x.apart), row.reported, row.about, row.margin, span)
        if other != row.verdict:
            row.firm += (f"; under {alt}: {show((shift + x.d) / base, unit, row.signed)} "
                         f"[{show(lo, unit, row.signed)}, {show(hi, unit, row.signed)}], {other}")
    if read["form"] == "about":
        details.append(f"the claim: within ±{row.margin:g} of {row.about:g}")
    if separated is not None:
        details.append("separated after the study's correction" if separated else "not separated after the "
                       "study's correction")
    if row.verdict == "out of reach":
        s = 1 if read["form"] == "higher" else -1
        room = span[1] if s > 0 else -span[0]
        details.append(f"at most {show(s * room, unit)} can occur here, less than the paper's "
                       f"{show(_near(row.reported, s), unit)}: the interval cannot test the paper's size")
    elif row.reported is not None and read["form"] != "about":
        details.append(f"the paper reported {_reported_words(row.reported, unit)}")
    if spec.level is not None or spec.b == "start":
        vals = list(study.values(spec.a, spec.measure).values())
        ref = spec.level if spec.level is not None else (study.start(spec.a, spec.measure) or (None,))[0]
        if ref is not None and read["form"] != "about":
            s = 1 if read["form"] == "higher" else -1
            way = sum(1 for v in vals if s * (v - ref) > 0)
            details.append(f"{way} of {len(vals)} runs on the claim's side")
    row.verdict, note = untaken(row.verdict, off)
    if note:
        details.insert(0, note)
    if read.get("regime"):
        lines, left = _regime(study, read, r)
        scope += lines
        if left:
            details.insert(0, f"at the dose tested: {row.verdict}")
            row.verdict = "not tested in its regime"
    row.detail = "; ".join(details)
    row.scope = scope
    return row


def untaken(verdict: str, off: list) -> tuple[str, str | None]:
    """A null read where the treatment did not take (``off``: the arms whose manipulation check did not move) is no
    verdict on the claim: "not settled", with the reason; a separated verdict stands (the arms differ all the same)."""
    if not off or verdict in ("supported", "contradicted"):
        return verdict, None
    return "not settled", (f"read as {verdict}, but the treatment did not take in {' and '.join(off)}, so the null "
                           "says little")


def _near(reported, s: int) -> float:
    return min((reported if isinstance(reported, list) else [reported]), key=lambda x: s * x)


def _reported_words(reported, unit: str) -> str:
    if isinstance(reported, list):
        return f"{show(reported[0], unit)} to {show(reported[1], unit)}"
    return show(reported, unit)


def rows(claims: list, results: Path = RESULTS, page: Path = PAGE) -> list[Row]:
    cache: dict = {}
    out = []
    for c in claims:
        for read in c["reads"]:
            out.append(profile_row(c, read, results, page) if "profile" in read
                       else study_row(c, read, results, page, cache))
    return out


# ------------------------------------------------------------------------------------------------- the page

def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def measured(r: Row) -> str:
    """``value [lo, hi] unit (level)``, the unit said once."""
    suffix = UNITS[r.unit][2]
    v, lo, hi = (show(x, r.unit, r.signed).removesuffix(suffix) for x in (r.value, r.lo, r.hi))
    return f"{v} [{lo}, {hi}]{suffix} ({r.level})"


def summary(claim: dict, rs: list) -> str:
    """The claim's line: how its own-terms readings came out, counted by verdict."""
    own = [r for r in rs if r.relation == "claim"]
    counts = {v: sum(r.verdict == v for r in own) for v in VERDICTS}
    said = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    other = len(rs) - len(own)
    if not own:
        return (f"No reading tests it in its own terms; {other} read a proxy, an explanation or a neighbouring "
                "question.")
    fragile = sum(r.firm.startswith("**fragile**") for r in own)
    return (f"In its own terms: {said} ({len(own)} reading{'s' if len(own) != 1 else ''}"
            + (f", {fragile} of them fragile" if fragile else "") + ")"
            + (f"; {other} more read{'s' if other == 1 else ''} a proxy, an explanation or a neighbouring question"
               if other else "") + ".")


def markdown(claims: list, all_rows: list) -> str:
    out = [f"![Each claim's readings with their 95% intervals beside the paper's value]"
           f"({_link(FIGURE, PAGE)})", ""]
    for c in claims:
        rs = [r for r in all_rows if r.claim == c["name"]]
        out.append(f"### {c['says']} ({c['paper']})")
        out.append("")
        who = "The paper" if c["paper"].startswith("arXiv") else "The claim"
        paper = [f"**{who}**: {c.get('measure', 'its measure')}"]
        if c.get("setting"):
            paper.append(c["setting"])
        if c.get("comparator"):
            paper.append(f"against {c['comparator']}")
        out += ["; ".join(paper) + ".", "", summary(c, rs), ""]
        out.append("| reading | measured | verdict on the claim | firm or fragile | the data exclude | scope |")
        out.append("|---|---|---|---|---|---|")
        for r in rs:
            what = f"[{r.study}]({r.link}): {r.quantity}" if r.link else f"{r.study}: {r.quantity}"
            meas = "—" if r.value is None else measured(r)
            verdict = f"**{r.verdict}**" + (f": {r.detail}" if r.detail else "")
            out.append("| " + " | ".join(_cell(x) for x in (what, meas, verdict, r.firm or "—", r.excludes or "—",
                                                           "; ".join(r.scope) or "—")) + " |")
        out.append("")
    return "\n".join(out).rstrip()


# ------------------------------------------------------------------------------------------------- the figure

def figure_data(all_rows: list) -> list[dict]:
    """What the figure draws, one dict per reading with a value (the stamp ``--check`` compares)."""
    keep = ("short", "claim", "study", "quantity", "unit", "verdict", "value", "lo", "hi", "reported", "about", "margin")
    return [{k: (round(v, 6) if isinstance(v, float) else v) for k, v in asdict(r).items() if k in keep}
            for r in all_rows if r.value is not None]


def stamp(data: list, titles: dict) -> str:
    """What the figure depends on: its data, its titles and the code that draws it."""
    import inspect

    what = json.dumps([data, titles], sort_keys=True, ensure_ascii=False) + inspect.getsource(forest)
    return hashlib.sha256(what.encode()).hexdigest()[:16]


def forest(data: list, titles: dict):
    """A forest plot: one panel per claim and unit, one row per reading (its value and 95% interval, coloured by the
    verdict on the claim), the paper's value (a diamond, or a band for a range or a margin) beside it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    panels: dict = {}
    for d in data:
        panels.setdefault((d["claim"], d["unit"]), []).append(d)
    heights = [len(v) + 1.6 for v in panels.values()]
    fig, axes = plt.subplots(len(panels), 1, figsize=(10, 0.45 * sum(heights) + 1.6),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    titled: set = set()
    for ax, ((claim, unit), ds) in zip(axes[:, 0], panels.items()):
        scale = UNITS[unit][0]
        for i, d in enumerate(ds):
            y = len(ds) - 1 - i
            colour = COLOURS.get(d["verdict"], "black")
            ax.plot([d["lo"] * scale, d["hi"] * scale], [y, y], color=colour, lw=2)
            ax.plot(d["value"] * scale, y, "o", color=colour, ms=6)
            rep = d["reported"]
            if isinstance(rep, list):
                ax.fill_betweenx([y - 0.4, y + 0.4], rep[0] * scale, rep[1] * scale, color="gold", alpha=0.45, lw=0)
            elif rep is not None:
                ax.plot(rep * scale, y, "D", color="goldenrod", ms=7, mec="black")
            if d["about"] is not None and d["margin"] is not None:
                ax.fill_betweenx([y - 0.4, y + 0.4], (d["about"] - d["margin"]) * scale,
                                 (d["about"] + d["margin"]) * scale, color="gold", alpha=0.45, lw=0)
        ax.axvline(0, color="black", lw=0.8, ls=":")
        ax.set_yticks(range(len(ds)))
        ax.set_yticklabels([d["short"] for d in reversed(ds)], fontsize=7)
        ax.set_ylim(-0.7, len(ds) - 0.3)
        ax.set_xlabel(AXES[unit], fontsize=8)
        title = titles[claim] if claim not in titled else f"The same claim, read on another quantity: {AXES[unit]}"
        titled.add(claim)
        ax.set_title(textwrap.fill(title, 110), fontsize=8, loc="left")
        ax.tick_params(axis="x", labelsize=7)
    handles = [Line2D([], [], color=c, marker="o", lw=2, label=v) for v, c in COLOURS.items()
               if any(d["verdict"] == v for d in data)]
    handles += [Line2D([], [], color="goldenrod", marker="D", ls="", mec="black", label="the paper's value"),
                Patch(color="gold", alpha=0.45, label="the paper's range, or the claim's margin")]
    fig.legend(handles=handles, loc="lower center", ncol=4, fontsize=7, frameon=False)
    fig.suptitle("Each paper's claim in its own terms: measured (95% interval) beside the paper", fontsize=11)
    fig.tight_layout(rect=(0, 0.05, 1, 0.98))
    return fig


def figure_stamp(path: Path) -> str | None:
    """The data stamp a figure was drawn from (its PNG text chunk), None for a missing or unstamped file."""
    if not path.is_file():
        return None
    from PIL import Image

    with Image.open(path) as im:
        return im.info.get("grpo-lab-data")


def write_figure(data: list, titles: dict, path: Path = FIGURE) -> None:
    import matplotlib.pyplot as plt

    fig = forest(data, titles)
    fig.savefig(path, dpi=110, metadata={"grpo-lab-data": stamp(data, titles)})
    plt.close(fig)


# ------------------------------------------------------------------------------------------------- main

def fill(text: str, block: str) -> str:
    """``text`` with the block between its markers (readme_excerpt.fill), or a ValueError naming the missing one."""
    from readme_excerpt import fill as fill_between

    if MARKERS[0] not in text or MARKERS[1] not in text:
        raise ValueError(f"the page holds no {MARKERS[0]} ... {MARKERS[1]} block")
    return fill_between(text, MARKERS, block)


def table(claims_path: Path = CLAIMS, results: Path = RESULTS, page: Path = PAGE) -> str:
    """The page's block: the figure's link, then one section per claim."""
    claims = load_claims(claims_path)
    return markdown(claims, rows(claims, results, page))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="exit 1 if the page's block or the figure differs")
    a = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "scripts"))
    claims = load_claims(CLAIMS)
    all_rows = rows(claims, RESULTS, PAGE)
    text = PAGE.read_text()
    want = fill(text, markdown(claims, all_rows))
    data = figure_data(all_rows)
    titles = {c["name"]: f"{c['says']} ({c['paper']})" for c in claims}
    stale = [p for p, ok in ((PAGE, want == text), (FIGURE, figure_stamp(FIGURE) == stamp(data, titles))) if not ok]
    if not stale:
        return 0
    if a.check:
        for p in stale:
            print(f"{p.relative_to(ROOT)}: differs from the studies' data; run python scripts/seed_claims.py",
                  file=sys.stderr)
        return 1
    if PAGE in stale:
        PAGE.write_text(want)
    if FIGURE in stale:
        write_figure(data, titles)
    return 0


if __name__ == "__main__":
    sys.exit(main())
