"""Export the real-model study's comparisons for notebook 10 (shipped in the package).

    python scripts/export_study.py docs/results/smollm2-study-lr1e-4 docs/results/smollm2-study-lr3e-4 [...]
    python scripts/export_study.py --out FILE DIR [...]    # elsewhere than grpo_lab/data/smollm2_study.json

Writes grpo_lab/data/smollm2_study.json: for each comparison directory (finished runs only, so an
interim export of a study still running is possible and says how many seeds each cell has), its
command, date, shared settings, the start, and per method the per-seed finals (greedy accuracy,
pass@k, steps, completions generated, training seconds) and per-step starvation (all-fail and all-pass
fractions of the groups trained on, and completions generated so far), read through
``grpo_lab.compare`` as the report reads them.
"""

import json
import sys
from pathlib import Path

from grpo_lab.compare import read_config
from grpo_lab.io import read_json, run_name
from grpo_lab.runner import KS

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "grpo_lab" / "data" / "smollm2_study.json"
HISTORY = ("step", "reward", "starvation/acr", "starvation/all_fail", "starvation/all_pass", "sampling/completions_total")


def finished(run: Path, conf: dict) -> dict:
    """``{method: [result per finished seed]}``, in the config's order."""
    out = {}
    for m in conf["estimators"]:
        for s in conf["seeds"]:
            path = run / "results" / f"{run_name(m, s)}.json"
            if path.is_file():
                out.setdefault(m, []).append(read_json(path, "results file"))
    return out


def seed_row(r: dict, history=HISTORY, problems: bool = False) -> dict:
    """One finished run's finals and its per-step ``history`` keys; with ``problems``, also each evaluation
    problem's count of correct samples (``correct``, out of ``n_samples``), which a paired bootstrap needs."""
    ev = r["eval"]
    hist = r["history"]
    row = dict(seed=r["config"]["seed"], greedy=ev["greedy"],
               pass_at_k={int(k): v for k, v in ev["pass_at_k"].items()},
               steps=r.get("steps_done", len(hist)), completions=r.get("completions"),
               train_seconds=r.get("train_seconds"), eval_seconds=r.get("eval_seconds"), dtype=r.get("dtype"))
    if problems:
        row |= dict(n_samples=ev["n_samples"], correct=ev["correct"])
    return row | dict(history=[{k: h[k] for k in history if k in h} for h in hist])


def key(run: Path) -> str:
    """A comparison's name in the export: its path under docs/results (``smollm2-study-lr1e-4``,
    ``smollm2-study2/lr1e-4/20261125-094414``), or its directory's name elsewhere."""
    results = ROOT / "docs" / "results"
    return run.relative_to(results).as_posix() if run.is_relative_to(results) else run.name


def export(run: Path, history=HISTORY, problems: bool = False) -> dict:
    conf = read_config(run)
    base = conf["base"]
    start = read_json(run / "start.json", "start evaluation")
    return dict(command=conf.get("command"), created=conf.get("created"),
                directory=str(run.relative_to(ROOT)) if run.is_relative_to(ROOT) else run.name,
                learning_rate=base.learning_rate, steps=base.steps, prompts_per_step=base.prompts_per_step,
                group_size=base.group_size, task=base.task, max_completion_length=base.max_completion_length,
                eval_problems=base.eval_problems, eval_samples=base.eval_samples, dtype=base.dtype,
                budget_completions=base.budget_completions, planned_seeds=conf["seeds"],
                start=dict(greedy=start["greedy"], n_samples=start["n_samples"], correct=start["correct"],
                           pass_at_k={int(k): v for k, v in start["pass_at_k"].items() if int(k) in KS}),
                methods={m: [seed_row(r, history, problems) for r in rs] for m, rs in finished(run, conf).items()})


def main(argv) -> int:
    out = OUT
    if argv[:1] == ["--out"]:
        out, argv = Path(argv[1]), argv[2:]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    data = {key(Path(a).resolve()): export(Path(a).resolve()) for a in argv}
    out.write_text(json.dumps(data, indent=1) + "\n")  # methods in the comparison's order
    for name, d in data.items():
        print(f"{name}: " + ", ".join(f"{m} {len(v)} seeds" for m, v in d["methods"].items()))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
