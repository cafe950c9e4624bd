"""The harm experiment's report (issue 39; plan: docs/results/harm/PLAN.md), from the tracked runs, unrounded.

    python scripts/harm_report.py            # docs/results/harm/REPORT.md, harm.png, grpo_lab/data/harm.json, and
                                             # the verdict's line in README.md and docs/guide/real-model.md
    python scripts/harm_report.py --check    # exit 1 if they differ from what the runs give (tests/test_readme.py)

grpo_lab/data/harm.json is the data lesson 11 reads (the package ships it): per arm, the per-seed changes of every
measure, the lucky-success diagnostics and the completion that received each run's largest advantage.

Arms: grpo, drgrpo, grpo+drop and sign trained on the hard task (three-term sums; comparison directories hard-a and
hard-b), and a control trained on the easy task (single-digit sums; directory control). The primary measure is the
easy task's pass@1 (150 held-out problems x 4 samples) after training minus the start's; the planned comparisons are
the five of the plan, read with Holm's correction at family-wise 0.05 once every arm has its 4 seeds. Until then the
report says it is interim and reads nothing: the numbers are shown, the verdict is not given.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from grpo_lab.stats import diff_ci, diff_p, holm, mean_ci, mean_p  # noqa: E402
from paired_report import engine_finding  # noqa: E402
from readme_excerpt import fill, report_main  # noqa: E402

HERE = ROOT / "docs" / "results" / "harm"
HARD = "gym:chain_sum:min_terms=3,max_terms=3,min_digits=1,max_digits=1"
EASY = "gym:chain_sum:min_terms=2,max_terms=2,min_digits=1,max_digits=1"
ARMS = {"grpo-hard": ("hard-a", "grpo"), "drgrpo-hard": ("hard-a", "drgrpo"), "drop-hard": ("hard-b", "grpo+drop"),
        "sign-hard": ("hard-b", "sign"), "control": ("control", "grpo")}
SEEDS = 4
IDLE = 0.03  # the plan's band: not separated and within +-0.03 of no change is "idle"
# The planned comparisons: (label, arm a, arm b or None for "against the start")
PLANNED = [("grpo-hard vs the start", "grpo-hard", None), ("grpo-hard - drgrpo-hard", "grpo-hard", "drgrpo-hard"),
           ("grpo-hard - drop-hard", "grpo-hard", "drop-hard"), ("sign-hard vs the start", "sign-hard", None),
           ("control vs the start", "control", None)]


def comparison_dir(name: str) -> Path | None:
    """The comparison directory of ``name``: docs/results/harm/<name>, or the one run directory inside it
    (grpo-lab compare --out writes <name>/<timestamp>/)."""
    d = HERE / name
    if (d / "config.json").is_file():
        return d
    inner = sorted(p.parent for p in d.glob("*/config.json"))
    return inner[0] if len(inner) == 1 else None


def evals(result: dict, trained_on_hard: bool) -> tuple[dict, dict]:
    """(easy, hard) evaluations of one result or start: the trained task's is ``eval`` itself, the other's under
    ``extra``."""
    main, extra = result, result.get("extra", {})
    return (extra[EASY], main) if trained_on_hard else (main, extra[HARD])


def load() -> dict:
    """Per arm: its start and its finished runs (seeds in order), from the tracked directories."""
    out = {}
    for arm, (name, method) in ARMS.items():
        d = comparison_dir(name)
        if d is None or not (d / "start.json").is_file():
            out[arm] = {"start": None, "runs": [], "dir": d}
            continue
        runs = []
        for s in range(SEEDS):
            f = d / "results" / f"{method}-seed{s}.json"
            if f.is_file():
                runs.append(json.loads(f.read_text()))
        out[arm] = {"start": json.loads((d / "start.json").read_text()), "runs": runs, "dir": d}
    return out


def measures(data: dict) -> dict:
    """Per arm, per measure: the list over seeds of (after - start), at 6 decimals: the values lesson 11 reads from
    grpo_lab/data/harm.json, so the lesson and this report compute the same intervals from the same numbers (a mean
    of exactly 0.0225 printed +0.022 here and +0.023 there, from float noise below 1e-9)."""
    out = {}
    for arm, d in data.items():
        if d["start"] is None or not d["runs"]:
            continue
        hard = arm != "control"
        s_easy, s_hard = evals(d["start"], hard)
        m = {k: [] for k in ("easy pass@1", "easy greedy", "hard pass@1", "hard greedy", "repeats prompt",
                             "no working", "length", "answered")}
        for r in d["runs"]:
            e, h = evals(r["eval"], hard)
            m["easy pass@1"].append(e["pass_at_k"]["1"] - s_easy["pass_at_k"]["1"])
            m["easy greedy"].append(e["greedy"] - s_easy["greedy"])
            m["hard pass@1"].append(h["pass_at_k"]["1"] - s_hard["pass_at_k"]["1"])
            m["hard greedy"].append(h["greedy"] - s_hard["greedy"])
            for key, sig in (("repeats prompt", "repeats_prompt"), ("no working", "no_working"),
                             ("length", "length_mean"), ("answered", "answered")):
                m[key].append(e["signatures"][sig] - s_easy["signatures"][sig])
        out[arm] = {k: [round(x, 6) for x in v] for k, v in m.items()}
    return out


def lucky(data: dict) -> dict:
    """Per arm, from the training logs: the mean over runs of the largest advantage per step, the share of steps
    whose largest advantage came from a group with exactly one success, and the run's largest-advantage completion
    (the first run's)."""
    out = {}
    for arm, d in data.items():
        rows = [r["history"] for r in d["runs"]]
        if not rows:
            continue
        mx = [float(np.mean([h.get("starvation/max_advantage", 0.0) for h in hist])) for hist in rows]
        one = [float(np.mean([h.get("starvation/max_advantage_successes") == 1 for h in hist])) for hist in rows]
        reward = [float(np.mean([h["reward"] for h in hist])) for hist in rows]
        out[arm] = {"max_advantage": mx, "one_success_steps": one, "reward": reward}
    return out


DATA = ROOT / "grpo_lab" / "data" / "harm.json"


def largest(d: Path, method: str, seed: int) -> dict | None:
    """The completion that received a run's largest advantage (its training log's rows), with the step."""
    f = d / "metrics" / f"{method}-seed{seed}.jsonl"
    best = None
    for line in f.read_text().splitlines() if f.is_file() else []:
        row = json.loads(line)
        c = row.get("starvation/max_advantage_completion")
        if c and (best is None or c["advantage"] > best["advantage"]):
            best = {**c, "step": row["step"]}
    return best


def summarise(data: dict) -> dict:
    """What the report, the shipped data and the verdict's line are written from, computed once: the measures per
    arm, the lucky-success diagnostics, the planned comparisons (None while an arm lacks its seeds), the runs done."""
    m = measures(data)
    return dict(m=m, luck=lucky(data), rows=planned(m), done=sum(len(d["runs"]) for d in data.values()))


def export(data: dict, summary: dict) -> str:
    """The shipped data of lesson 11, as text (sorted keys, 6 significant digits: stable across rebuilds)."""
    m, luck = summary["m"], summary["luck"]
    arms = {}
    for arm, (name, method) in ARMS.items():
        d = data[arm]
        seeds = list(range(len(d["runs"])))
        arms[arm] = {"method": method, "trained_on": "easy" if arm == "control" else "hard", "seeds": len(seeds),
                     "changes": {k: [round(x, 6) for x in v] for k, v in m.get(arm, {}).items()},
                     "lucky": {k: [round(x, 6) for x in v] for k, v in luck.get(arm, {}).items()},
                     "largest_advantage": [largest(d["dir"], method, s) for s in seeds] if d["dir"] else []}
    starts = [evals(d["start"], a != "control") for a, d in data.items() if d["start"] is not None]
    start = {}
    if starts:
        e, h = starts[0]
        start = {"easy": {"pass@1": round(e["pass_at_k"]["1"], 6), "greedy": round(e["greedy"], 6)},
                 "hard": {"pass@1": round(h["pass_at_k"]["1"], 6), "greedy": round(h["greedy"], 6)}}
    out = {"source": "docs/results/harm (scripts/harm_report.py)", "plan": "docs/results/harm/PLAN.md",
           "runs_done": summary["done"], "runs_planned": len(ARMS) * SEEDS,
           "seeds_planned": SEEDS, "easy_task": EASY, "hard_task": HARD, "start": start, "arms": arms,
           "verdict": verdict(m, summary["rows"], summary["done"], "docs/results/harm/REPORT.md")}
    return json.dumps(out, indent=1, sort_keys=True) + "\n"


def fmt(values, digits=3, signed=True) -> str:
    f = f"{'+' if signed else ''}.{digits}f"
    if len(values) < 2:
        return f"{np.mean(values):{f}} (one seed)" if values else "—"
    m, lo, hi = mean_ci(values)
    return f"{m:{f}} [{lo:{f}}, {hi:{f}}]"


def planned(m: dict) -> list[dict] | None:
    """The five planned comparisons with Holm's verdict, or None while an arm lacks its 4 seeds."""
    if any(len(m.get(a, {}).get("easy pass@1", [])) < SEEDS for a in ARMS):
        return None
    rows = []
    for label, a, b in PLANNED:
        x = m[a]["easy pass@1"]
        if b is None:
            d, lo, hi = mean_ci(x)
            p = mean_p(x)
        else:
            y = m[b]["easy pass@1"]
            d, lo, hi = diff_ci(x, y)
            p = diff_p(x, y)
        rows.append(dict(label=label, d=d, lo=lo, hi=hi, p=p))
    for row, rejected in zip(rows, holm([r["p"] for r in rows])):
        row["apart"] = rejected
    return rows


def word(row: dict) -> str:
    if row["apart"]:
        return "below 0 (harm)" if row["hi"] < 0 else "above 0"
    if -IDLE <= row["lo"] and row["hi"] <= IDLE:
        return "not separated, within ±0.03 (idle)"
    return "not separated, and not within ±0.03: undecided at this size"


def finding(rows: list[dict]) -> str:
    """The plan's reading of the five comparisons, in words, from the unrounded numbers (no link, no heading)."""
    r = {row["label"]: row for row in rows}

    def say(label: str) -> str:
        row = r[label]
        return f"{row['d']:+.3f} [{row['lo']:+.3f}, {row['hi']:+.3f}] ({word(row)})"

    first = r["grpo-hard vs the start"]
    lo, hi = first["lo"], first["hi"]
    if first["apart"] and hi < 0:
        found = "harmful here, on the capability measured"
    elif first["apart"]:
        found = "helpful here, not harmful"
    elif -IDLE <= lo and hi <= IDLE:
        found = "idle here, within the plan's ±0.03"
    elif lo < 0 < hi and -lo < IDLE:
        found = (f"not shown to be harmful: a loss larger than {-lo:.3f} is ruled out (the 95% interval, before "
                 f"correction), a gain of up to {hi:.3f} is not, so the plan's 'idle' (within ±0.03) is not shown "
                 "either")
    elif lo < 0 < hi:
        found = (f"undecided at this size: the interval allows a loss of up to {-lo:.3f} and a gain of up to "
                 f"{hi:.3f}")
    else:
        found = (f"undecided: {'below' if hi < 0 else 'above'} 0 before the correction for five comparisons, "
                 "not after it")
    return (f"Single-digit pass@1 after GRPO on the hard task changed by {say('grpo-hard vs the start')}, so "
            f"lucky successes were **{found}**. GRPO minus Dr.GRPO {say('grpo-hard - drgrpo-hard')}; GRPO minus "
            f"grpo+drop {say('grpo-hard - drop-hard')}; Sign {say('sign-hard vs the start')}; the control (GRPO on "
            f"single-digit sums themselves) {say('control vs the start')}. 4 seeds per arm, Holm over the plan's "
            "five comparisons.")


def verdict(m: dict, rows: list[dict] | None, done: int, link: str) -> str:
    """The finding in words for the README and the guide (between the harm-verdict markers): the plan's reading of
    comparison 1 (harmful, idle or helpful; otherwise what the interval rules out), then whether Dr.GRPO or
    dropping the degenerate groups changes it, Sign, and the control; 'no verdict yet' while an arm lacks seeds."""
    head = (f"**Are nearly-degenerate groups harmful?** (SmolLM2 trained 48 steps on three-term sums, which it "
            f"almost never solves; [report]({link}))")
    if rows is None:
        return (f"{head} In progress: {done} of {len(ARMS) * SEEDS} runs finished; the plan's comparisons are read "
                "once every arm has its 4 seeds, so no verdict yet.")
    return f"{head} {finding(rows)}"


PAGES = {ROOT / "README.md": "docs/results/harm/REPORT.md",
         ROOT / "docs" / "guide" / "real-model.md": "../results/harm/REPORT.md"}
MARKERS = "<!-- harm-verdict:begin -->", "<!-- harm-verdict:end -->"


def figure(m: dict, path: Path) -> None:
    from grpo_lab.viz import changes_by_arm

    panels = {title: {arm: m[arm][key] for arm in ARMS if arm in m} | {arm: [] for arm in ARMS if arm not in m}
              for key, title in (("easy pass@1", "single-digit sums (the capability; primary)"),
                                 ("hard pass@1", "three-term sums (the hard task)"))}
    for t in panels:
        panels[t] = {arm: panels[t][arm] for arm in ARMS}  # the plan's order
    fig = changes_by_arm(panels, colours={arm: ARMS[arm][1] if arm != "control" else "control" for arm in ARMS},
                         ylabel="pass@1 after training minus the start",
                         title="Does training on problems it almost never solves lower what SmolLM2 could do? "
                               "(harm experiment)")
    fig.savefig(path)


def render(data: dict, summary: dict) -> str:
    m, luck, rows, done = summary["m"], summary["luck"], summary["rows"], summary["done"]
    md = ["# Are nearly-degenerate groups harmful, not just idle? (issue 39)", "",
          "Generated by `python scripts/harm_report.py` from the tracked runs, unrounded; the plan, written before any "
          "run, is [PLAN.md](PLAN.md).", ""]
    if rows is None:
        md += [f"**Interim: {done} of {len(ARMS) * SEEDS} runs finished.** The planned comparisons are read once "
               "every arm has its 4 seeds; until then the numbers below are shown and no verdict is drawn from them.",
               ""]
    else:
        md += ["## What it found", ""]
        for r in rows:
            md.append(f"- **{r['label']}**: {r['d']:+.3f} [{r['lo']:+.3f}, {r['hi']:+.3f}] (p = {r['p']:.3g}); "
                      f"after Holm over five: {word(r)}.")
        md += ["", f"In words: {finding(rows)}", ""]
    md += ["## Primary measure: pass@1 on single-digit sums, change from the start", "",
           "Mean [95% t-interval over seeds]. The hard arms never trained on these problems; the control trained on "
           "them. The start is the same model evaluated on the same problems.", "",
           "| arm | trained on | seeds | easy pass@1 (primary) | easy greedy | hard pass@1 | hard greedy |",
           "|---|---|---|---|---|---|---|"]
    for arm in ARMS:
        if arm not in m:
            md.append(f"| {arm} ({ARMS[arm][1]}) | {'easy' if arm == 'control' else 'hard'} | 0 | — | — | — | — |")
            continue
        x = m[arm]
        md.append(f"| {arm} ({ARMS[arm][1]}) | {'easy' if arm == 'control' else 'hard'} | {len(x['easy pass@1'])} | "
                  f"{fmt(x['easy pass@1'])} | {fmt(x['easy greedy'])} | {fmt(x['hard pass@1'])} | "
                  f"{fmt(x['hard greedy'])} |")
    starts = {a: evals(d["start"], a != "control") for a, d in data.items() if d["start"] is not None}
    if starts:
        e, h = next(iter(starts.values()))
        md += ["", f"Start: single-digit sums pass@1 {e['pass_at_k']['1']:.3f}, greedy {e['greedy']:.3f}; three-term "
                   f"sums pass@1 {h['pass_at_k']['1']:.3f}, greedy {h['greedy']:.3f}."]
    md += ["", "![the primary and the hard task's pass@1 change per arm](harm.png)", "",
           "## Signatures of a shortcut on single-digit sums (descriptive, change from the start)", "",
           "Shares of the easy task's samples: an answer that repeats a number of the prompt, an answer with no "
           "working, any answer the grader finds; and the mean length in tokens (`grpo_lab.tasks.signatures`).", "",
           "| arm | repeats a prompt number | no working | answered | mean length |", "|---|---|---|---|---|"]
    for arm in ARMS:
        if arm in m:
            x = m[arm]
            md.append(f"| {arm} | {fmt(x['repeats prompt'])} | {fmt(x['no working'])} | {fmt(x['answered'])} | "
                      f"{fmt(x['length'], 1)} |")
    md += ["", "## The lucky successes, from the training logs (descriptive)", "",
           "Per run: the mean over steps of the largest advantage any completion received, the share of steps whose "
           "largest advantage came from a group with exactly one success, and the mean training reward. Sign's largest "
           "advantage is +1 on a step with any success and -1 on one without (A = 2r - 1), so its mean can sit "
           "near 0.", "",
           "| arm | largest advantage per step | steps led by a one-success group | training reward |",
           "|---|---|---|---|"]
    for arm in ARMS:
        if arm in luck:
            x = luck[arm]
            md.append(f"| {arm} | {fmt(x['max_advantage'], signed=False)} | {fmt(x['one_success_steps'], signed=False)} | "
                      f"{fmt(x['reward'], signed=False)} |")
    md += ["", "## Deviations from the plan", "",
           "None in the settings. The runs were interrupted twice when the machine running them was shut down; "
           "`grpo-lab compare --resume` kept the finished runs (each result is written only when its run ends, "
           "after checking it holds its method, seed and settings) and started the interrupted ones over from "
           "their first step. Up to three runs shared the two cores at a time, which changes their time, not "
           "their result.", "",
           "## The engine", "",
           "Every arm ran on vLLM rollouts (the fast path). The paired run's extension found F - P on greedy accuracy "
           f"{engine_finding()} "
           "([REPORT](../smollm2-fastpath-paired/REPORT.md)): not separated, its point estimate below 0. It is "
           "common to every arm, so it shifts the start-to-after changes alike and cancels in the differences "
           "between arms; a comparison with the start could carry part of it.", ""]
    return "\n".join(md)


def build():
    data = load()
    s = summarise(data)
    want = {HERE / "REPORT.md": render(data, s), DATA: export(data, s)}
    want |= {page: fill(page.read_text(), MARKERS, verdict(s["m"], s["rows"], s["done"], link))
             for page, link in PAGES.items()}
    return want, (lambda: figure(s["m"], HERE / "harm.png")) if s["m"] else None


def main(argv=None) -> int:
    return report_main(argv, __doc__, "scripts/harm_report.py", build)


if __name__ == "__main__":
    raise SystemExit(main())
