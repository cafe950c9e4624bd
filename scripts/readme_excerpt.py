"""Write the results sections of the README and the guide pages (docs/guide/*.md) from the tracked comparison reports
(nothing in them is typed by hand).

    python scripts/readme_excerpt.py            # docs/results/*/report.md -> README.md, docs/guide/*.md
    python scripts/readme_excerpt.py --check    # exit 1 if one of them differs (tests/test_readme.py)

Wherever a page holds a pair of markers (README.md or docs/guide/*.md), the block between them is rewritten.
Between the ``report-excerpt`` markers it writes the "## Results" table of
``docs/results/lr1e-4/report.md`` (heading demoted to "####", up to its "Start:" line), and between
the ``verdicts`` markers one line per tracked comparison (each learning rate at equal steps, and the
equal-generation comparison): for pass@1 and pass@16, which methods' 95% t-intervals over seeds lie
wholly above or below the starting policy's value, and which pairs of methods have intervals apart,
read from the reports' tables with :func:`verdicts` (an interval that contains the start is "no
detectable change"). The budget each was compared at comes from its ``config.json``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results"
MAIN = RESULTS / "lr1e-4" / "report.md"
MARKERS = {"excerpt": ("<!-- report-excerpt:begin -->", "<!-- report-excerpt:end -->"),
           "verdicts": ("<!-- verdicts:begin -->", "<!-- verdicts:end -->"),
           "study": ("<!-- study-verdicts:begin -->", "<!-- study-verdicts:end -->")}
STUDY = "smollm2-study-lr*"  # the real-model study (issue 26): one comparison per learning rate
EQUAL = "smollm2-study-equalgen-lr*"  # dapo stopped at the completions 16 steps of grpo generate, per learning rate
BF16 = "smollm2-study-bf16-lr*"  # grpo with bfloat16 weights, the same seeds: does it learn like float32?
PAPER = ("arXiv 2605.07689 (Qwen3.5-9B on GSM8K, G = 4, 7 seeds): Sign 73.8% against normalised group-mean "
         "Dr.GRPO 28.4%, with the learning rate not controlled across methods")
CELL = re.compile(r"([0-9.]+) \[([0-9.]+), ([0-9.]+)\]")


def excerpt(report: str) -> str:
    lines = report.splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith("## Results"))
    stop = next(i for i, x in enumerate(lines) if i > start and x.startswith("Start:"))
    return "\n".join(["#" + lines[start]] + lines[start + 1:stop + 1])


def table(report: str) -> tuple[dict, dict]:
    """``({estimator: {column: (mean, lo, hi)}}, {"pass@1": start, "pass@16": start})`` from a report."""
    lines = report.splitlines()
    head = next(x for x in lines if x.startswith("| estimator |"))
    cols = [c.strip() for c in head.strip("|").split("|")]
    rows = {}
    for x in lines[lines.index(head) + 2:]:
        if not x.startswith("|"):
            break
        cells = [c.strip() for c in x.strip("|").split("|")]
        rows[cells[0]] = {c: tuple(map(float, m.groups())) for c, v in zip(cols, cells) if (m := CELL.fullmatch(v))}
    start_line = next(x for x in lines if x.startswith("Start:"))
    start = {k: float(v) for k, v in re.findall(r"(pass@\d+) ([0-9.]+)", start_line)}
    return rows, start


ROUNDING = 0.0005  # a report's table rounds to 3 decimals: a bound this close to the start is not decided by it


def unrounded(report: Path) -> tuple[dict, dict] | None:
    """``table()``'s shape computed from the unrounded per-seed data shipped with the package
    (grpo_lab/data/tiny_lm_passk.json, the lr1e-4, lr3e-4 and lr1e-3 comparisons), or None for a comparison
    whose per-seed data is not shipped (its report's rounded table is then all there is)."""
    import numpy as np

    sys.path.insert(0, str(ROOT))
    from grpo_lab.stats import mean_ci

    data = json.loads((ROOT / "grpo_lab" / "data" / "tiny_lm_passk.json").read_text()).get(report.parent.name)
    if data is None:
        return None
    n = data["n_samples"]
    start = {"pass@1": float(np.mean(np.asarray(data["start"]) / n)),
             "pass@16": float(np.mean(np.asarray(data["start"]) > 0))}
    rows = {}
    for e, seeds in data["after"].items():
        counts = [np.asarray(c) for c in seeds.values()]
        rows[e] = {"pass@1": mean_ci([float(np.mean(c / n)) for c in counts]),
                   "pass@16": mean_ci([float(np.mean(c > 0)) for c in counts])}
    return rows, start


def verdicts(report: str, path: Path | None = None) -> str:
    """The verdict line of one comparison: from the unrounded per-seed data where the package ships it
    (:func:`unrounded`), else from the report's table, where a bound within rounding of the start or of another
    method's bound decides nothing and is named as such."""
    exact = unrounded(path) if path is not None else None
    rows, start = exact if exact else table(report)
    slack = 0.0 if exact else ROUNDING
    parts = []
    for col in ("pass@1", "pass@16"):
        up = [e for e, r in rows.items() if col in r and r[col][1] > start[col] + slack]
        down = [e for e, r in rows.items() if col in r and r[col][2] < start[col] - slack]
        close = [e for e, r in rows.items() if col in r and e not in up and e not in down
                 and min(abs(r[col][1] - start[col]), abs(r[col][2] - start[col])) <= slack]
        same = [e for e in rows if e not in up and e not in down and e not in close]
        means = [r[col][0] for r in rows.values() if col in r]
        words = [f"{col} {start[col]:.3f} → {min(means):.3f}–{max(means):.3f}"]
        words += [f"up for {', '.join(up)}"] if up else []
        words += [f"down for {', '.join(down)}"] if down else []
        words += [f"no detectable change for {', '.join(same)}"] if same else []
        words += [f"a bound within the table's rounding of the start for {', '.join(close)}"] if close else []
        parts.append(": ".join([words[0], "; ".join(words[1:])]))
    names = list(rows)
    n_pairs = len(names) * (len(names) - 1) // 2
    for col in ("pass@1", "pass@16") if n_pairs else ():
        apart = [f"{a} above {b}" for a in names for b in names
                 if col in rows[a] and col in rows[b] and rows[a][col][1] > rows[b][col][2] + slack]
        parts.append(f"methods apart on {col} ({n_pairs} pair{'s' if n_pairs > 1 else ''}, no correction for "
                     "multiplicity): " + (", ".join(apart) if apart else "none"))
    source = "unrounded per-seed data" if exact else "the report's rounded table"
    return "; ".join(parts) + f" (from {source})"


def comparisons():
    """Every tracked comparison of the tiny LM (a docs/results directory with a report and a config.json), with the label
    the README gives it: learning rate, and steps or generation budget."""
    out = []
    for report in RESULTS.glob("*/report.md"):
        conf = report.with_name("config.json")
        if not conf.is_file() or '"estimators"' not in conf.read_text():
            continue
        base = json.loads(conf.read_text())["base"]
        if base.get("policy") != "tiny-lm":  # the real model's comparison has its own README section
            continue
        budget = base.get("budget_completions")
        label = f"lr {('%.0e' % base['learning_rate']).replace('e-0', 'e-')}, " + (f"equal generation ({budget} completions per run)" if budget
                                                     else f"{base['steps']} steps per run")
        if base.get("prompts_per_step", 16) != 16:
            label += f", {base['prompts_per_step']} prompts per step"
        out.append((budget is not None, base.get("prompts_per_step", 16), base["steps"], base["learning_rate"],
                    label, report))
    return [(label, report) for *_, label, report in sorted(out, key=lambda t: t[:4])]


def study_verdicts() -> str:
    """The real-model study's lines, in words, beside the paper's claim: per learning rate, each method's held-out
    greedy accuracy and pass@1 against the start and against GRPO (apart only where 95% t-intervals over seeds do
    not overlap), the seeds a measured Sign - GRPO difference would need, and each method at its own best rate.
    Read from the finished runs of each ``docs/results/smollm2-study-lr*`` comparison (an interim study says so)."""
    import numpy as np

    sys.path.insert(0, str(ROOT))
    from grpo_lab.compare import load_results, read_config
    from grpo_lab.io import read_json
    from grpo_lab.stats import fmt_ci, mean_ci, seeds_needed, separated

    dirs = sorted(RESULTS.glob(STUDY), key=lambda d: read_config(d)["base"].learning_rate)
    if not dirs:
        return "- (the study has not started)"
    val = {}
    lines = []
    for d in dirs:
        conf = read_config(d)
        base, res = conf["base"], load_results(d, conf, partial=True)
        lr = base.learning_rate
        start = read_json(d / "start.json")
        g = {m: [r["eval"]["greedy"] for r in rs] for m, rs in res.items()}
        p1 = {m: [r["eval"]["pass_at_k"]["1"] for r in rs] for m, rs in res.items()}
        val[lr] = g
        n = sorted({len(v) for v in g.values()})
        done, total = sum(map(len, g.values())), len(conf["estimators"]) * len(conf["seeds"])
        state = "" if done == total else f" (interim: {done} of {total} runs)"
        words = []
        for m in g:
            _, lo, hi = mean_ci(g[m])
            if len(g[m]) < 2:
                words.append(f"{m} {fmt_ci(g[m])}")  # one seed: no interval, so no verdict
                continue
            up = "up" if lo > start["greedy"] else "down" if hi < start["greedy"] else "no detectable change"
            words.append(f"{m} {fmt_ci(g[m])} ({up})")
        apart = [f"{a} above {b}" for a in g for b in g if a != b and separated(g[a], g[b]) == "a"]
        line = (f"- **SmolLM2, lr {('%.0e' % lr).replace('e-0', 'e-')}, {base.steps} steps of {base.prompts_per_step} "
                f"prompts × G = {base.group_size}, {'/'.join(map(str, n))} {'seeds' if max(n) > 1 else 'seed'}{state}**: "
                "greedy accuracy "
                f"{start['greedy']:.3f} → " + ", ".join(words) + "; pass@1 " + f"{start['pass_at_k']['1']:.3f} → "
                + ", ".join(f"{m} {fmt_ci(v)}" for m, v in p1.items())
                + "; methods apart on greedy accuracy: " + (", ".join(apart) if apart else "none"))
        if "sign" in g and "grpo" in g and min(len(g["sign"]), len(g["grpo"])) >= 2:
            diff = np.mean(g["sign"]) - np.mean(g["grpo"])
            k = seeds_needed(g["sign"], g["grpo"])
            sep = separated(g["sign"], g["grpo"])
            line += (f"; sign − grpo {diff:+.3f}" + (f", apart: {'Sign' if sep == 'a' else 'GRPO'} ahead" if sep else
                     ", not separated: the means agree to 3 decimals" if abs(diff) < 5e-4 else
                     f", not separated: {f'about {k}' if k else 'more than 1000'} seeds per method would resolve "
                     f"a difference that size in a two-sample t-test (from the spread of these "
                     f"{min(len(g['sign']), len(g['grpo']))}; intervals that do not overlap need more)"))
        lines.append(line + ".")
    common = [m for m in val[min(val)] if all(m in v and len(v[m]) >= 2 for v in val.values())]
    if len(val) > 1 and common:
        best = {m: max(val, key=lambda lr: np.mean(val[lr][m])) for m in common}
        ref = val[best["grpo"]]["grpo"] if "grpo" in best else None
        said = [f"{m} {fmt_ci(val[best[m]][m])} at lr {best[m]:g}" for m in common]
        ahead = [m for m in common if m != "grpo" and ref is not None and separated(val[best[m]][m], ref) == "a"]
        behind = [m for m in common if m != "grpo" and ref is not None and separated(val[best[m]][m], ref) == "b"]
        lines.append("- **Each method at its own best learning rate** (greedy accuracy): " + ", ".join(said)
                     + "; against grpo at its best: " + (f"ahead: {', '.join(ahead)}" if ahead else "none ahead")
                     + (f"; behind: {', '.join(behind)}" if behind else "") + f". Beside {PAPER}.")
    lines += [_paired_line(d, val, kind) for kind, pattern in (("equal", EQUAL), ("bf16", BF16))
              for d in sorted(RESULTS.glob(pattern))]
    if len(val) > 1 and all("sign" in v and "grpo" in v and min(len(v["sign"]), len(v["grpo"])) >= 2
                            for v in val.values()):
        said = []
        for lr, v in sorted(val.items()):
            sep = separated(v["sign"], v["grpo"])
            diff = np.mean(v["sign"]) - np.mean(v["grpo"])
            said.append(f"at lr {lr:g} " + ("Sign is ahead of GRPO" if sep == "a" else "GRPO is ahead of Sign"
                                             if sep == "b" else "Sign and GRPO are not separated")
                        + f" (Sign − GRPO {diff:+.2f} in greedy accuracy)")
        ahead_any = any(separated(v["sign"], v["grpo"]) == "a" for v in val.values())
        best = {m: max(val, key=lambda lr: np.mean(val[lr][m])) for m in ("sign", "grpo")}
        ahead_any |= separated(val[best["sign"]]["sign"], val[best["grpo"]]["grpo"]) == "a"  # each at its best
        lines.append("- **In words**: " + "; ".join(said) + ". " + (
            "Sign is ahead at neither of the two learning rates tried, nor each at its own best against GRPO at its "
            "best: the paper's gap in Sign's favour is not reproduced in this pilot (128 completions per run, 32 "
            "problems, uncorrected comparisons; study 2 asks again with a plan, three rates and 8× the training)."
            if not ahead_any else
            "Sign is ahead at a shared learning rate or each at its best: see the lines above for where and by how "
            "much."))
    return "\n".join(lines)


def _paired_line(d, val, kind: str) -> str:
    """A comparison run beside the study, against the study's grpo at the same learning rate and seeds: dapo stopped
    at equal generation (``kind="equal"``), or grpo with bfloat16 weights (``"bf16"``)."""
    import numpy as np

    from grpo_lab.compare import load_results, read_config
    from grpo_lab.stats import diff_ci, fmt_ci, separated

    conf = read_config(d)
    base, res = conf["base"], load_results(d, conf, partial=True)
    lr = base.learning_rate
    (m, rs), = res.items()
    g = [r["eval"]["greedy"] for r in rs]
    ref = val.get(lr, {}).get("grpo", [])
    lrs = ('%.0e' % lr).replace('e-0', 'e-')
    done, total = len(rs), len(conf["seeds"])
    state = "" if done == total else f" (interim: {done} of {total} runs)"
    if kind == "equal":
        steps = np.mean([r.get("steps_done", len(r["history"])) for r in rs])
        comp = np.mean([r["completions"] for r in rs])
        head = (f"- **At equal generation, lr {lrs}{state}**: {m} stopped at {base.budget_completions} completions "
                f"({comp:.0f} generated, {steps:.1f} steps on average): greedy accuracy {fmt_ci(g)}, against grpo's "
                f"{fmt_ci(ref)} after 16 steps (128 completions)")
    else:
        head = (f"- **bfloat16 weights, {m}, lr {lrs}{state}**: greedy accuracy {fmt_ci(g)} against float32's "
                f"{fmt_ci(ref)} (the same seeds)")
    if len(g) < 2 or len(ref) < 2:
        return head + "."
    dd, lo, hi = diff_ci(g, ref)
    word = {"a": "apart, above", "b": "apart, below", None: "not separated"}[separated(g, ref)]
    return head + f"; difference {dd:+.3f} [{lo:+.3f}, {hi:+.3f}]: {word}."


def pages() -> list[Path]:
    """The pages that may hold generated blocks: the README and the guide."""
    return [ROOT / "README.md", *sorted((ROOT / "docs" / "guide").glob("*.md"))]


def fill(page: str, markers: tuple[str, str], block: str) -> str:
    """``page`` with what stands between the two markers replaced by ``block``, on lines of its own (the blocks this
    script writes; a study's own lines are written by ``grpo-lab study report``)."""
    begin, end = markers
    a, b = page.index(begin) + len(begin), page.index(end)
    return page[:a] + "\n" + block + "\n" + page[b:]


def render(readme: str, blocks: dict[str, str] | None = None) -> str:
    """``readme`` with every generated block it holds rewritten (a page without a block comes back unchanged)."""
    blocks = blocks or all_blocks()
    for key, markers in MARKERS.items():
        if markers[0] in readme:
            readme = fill(readme, markers, blocks[key])
    return readme


def all_blocks() -> dict[str, str]:
    return {"excerpt": excerpt(MAIN.read_text()),
            "verdicts": "\n".join(f"- **{label}**: {verdicts(p.read_text(), p)}." for label, p in comparisons()),
            "study": study_verdicts()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args(argv)
    blocks, found, stale = all_blocks(), set(), []
    for path in pages():
        text = path.read_text()
        found |= {key for key, (begin, _) in MARKERS.items() if begin in text}
        want = render(text, blocks)
        if want != text:
            stale.append(path.relative_to(ROOT).as_posix())
            if not a.check:
                path.write_text(want)
    missing = sorted(set(MARKERS) - found)
    if missing:
        print(f"no page holds the markers of {missing} (README.md, docs/guide/*.md)", file=sys.stderr)
        return 1
    if a.check and stale:
        print(f"{', '.join(stale)}: the results sections differ from docs/results/*/report.md; "
              "run python scripts/readme_excerpt.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
