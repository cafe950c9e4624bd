"""``grpo-lab compare``: every estimator x every seed under one fixed config, then a report.

Layout of a comparison directory (``runs/<timestamp>/``)::

    config.json              what is compared and how (written first)
    start.json               evaluation of the shared starting policy
    results/<est>-seed<k>.json   one finished run each, written atomically (tmp file + rename)
    metrics/<est>-seed<k>.jsonl  per-step logs while a run trains (StarvationCallback)
    metrics.jsonl            all runs' per-step rows, with "estimator" and "seed" (written at the end)
    *.png                    plots
    report.md                written last, atomically: it exists only when every run finished

An interrupted comparison keeps its finished runs; ``grpo-lab compare --resume DIR``
trains only the missing ones and then writes the report.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

from .experiment import (RunConfig, _write_json_atomic, evaluate_start, gsm8k_config, pass_at_k_of,
                         start_starvation, summarize_rows, train_gsm8k, train_one, train_tabular)
from .simulator import mean_ci, mean_ci_columns

KS = (1, 2, 4, 8, 16)


def run_name(estimator: str, seed: int) -> str:
    return f"{estimator}-seed{seed}"


def _versions() -> dict:
    import torch

    out = {"python": platform.python_version(), "torch": torch.__version__}
    for mod in ("trl", "transformers", "grpo_lab"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception:  # pragma: no cover - optional at report time
            out[mod] = None
    return out


def write_config(out: Path, estimators, seeds, base: RunConfig, command: str | None = None) -> dict:
    conf = dict(estimators=list(estimators), seeds=[int(s) for s in seeds], base=asdict(base), command=command,
                versions=_versions(), created=time.strftime("%Y-%m-%d %H:%M:%S"))
    out.mkdir(parents=True, exist_ok=True)
    _write_json_atomic(out / "config.json", conf)
    return conf


def read_config(out: Path) -> dict:
    path = Path(out) / "config.json"
    if not path.is_file():
        raise FileNotFoundError(f"{out} is not a grpo-lab comparison directory (no config.json)")
    try:
        conf = json.loads(path.read_text())
        conf["base"] = RunConfig(**conf["base"]).validate()
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise ValueError(f"{path} is not a valid grpo-lab comparison config ({e})") from None
    return conf


def run_comparison(out: Path, conf: dict, progress: bool = True, echo=print) -> Path:
    """Train every missing (estimator, seed) run of ``conf`` into ``out``; then write plots and the report."""
    out = Path(out)
    base: RunConfig = conf["base"]
    (out / "results").mkdir(parents=True, exist_ok=True)
    (out / "metrics").mkdir(exist_ok=True)
    start_path = out / "start.json"
    if not start_path.is_file():
        _write_json_atomic(start_path, evaluate_start(base))
    todo = [(e, s) for e in conf["estimators"] for s in conf["seeds"]
            if not (out / "results" / f"{run_name(e, s)}.json").is_file()]
    total = len(conf["estimators"]) * len(conf["seeds"])
    if len(todo) < total:
        echo(f"resuming: {total - len(todo)} of {total} runs already finished in {out}")
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(todo), desc="runs", unit="run")
    for est, seed in todo:
        cfg = RunConfig(**{**asdict(base), "estimator": est, "seed": seed})
        name = run_name(est, seed)
        jsonl = out / "metrics" / f"{name}.jsonl"
        jsonl.unlink(missing_ok=True)  # an interrupted run starts over
        if cfg.policy == "tabular":
            res = train_tabular(cfg)
        elif cfg.task == "gsm8k":
            res = train_gsm8k(gsm8k_config(cfg), out / "gsm8k", progress=progress)
        else:
            import shutil
            import tempfile

            work = tempfile.mkdtemp(prefix="grpo-lab-")
            try:
                res = train_one(cfg, work, jsonl_path=jsonl, progress=progress)
            finally:
                shutil.rmtree(work, ignore_errors=True)
        _write_json_atomic(out / "results" / f"{name}.json", res)
        if bar is not None:
            bar.update(1)
            bar.set_postfix_str(f"last: {name}")
    if bar is not None:
        bar.close()
    return write_report(out, conf)


def load_results(out: Path, conf: dict) -> dict:
    """``{estimator: [result per seed]}``; a missing run is an error naming it."""
    res = {}
    for e in conf["estimators"]:
        for s in conf["seeds"]:
            path = Path(out) / "results" / f"{run_name(e, s)}.json"
            if not path.is_file():
                raise FileNotFoundError(f"run {run_name(e, s)} has not finished; resume the comparison first")
            res.setdefault(e, []).append(json.loads(path.read_text()))
    return res


def fmt_ci(values, digits: int = 3) -> str:
    """Mean [95% t-interval] of fractions, the interval clipped to [0, 1]."""
    vals = [v for v in values if v is not None and np.isfinite(v)]
    if not vals:
        return "n/a"
    m, lo, hi = mean_ci(vals)
    lo, hi = max(lo, 0.0), min(hi, 1.0)
    return f"{m:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def summary_table(results: dict) -> list[dict]:
    """One row per estimator: the per-seed finals that the report's table shows with CIs."""
    rows = []
    for est, runs in results.items():
        row = dict(estimator=est, seeds=len(runs))
        row["greedy"] = [r["eval"]["greedy"] for r in runs]
        for k in KS:
            row[f"pass@{k}"] = [_passk(r).get(k) for r in runs]
        summ = [summarize_rows(r["history"]) for r in runs]
        for key in ("acr_start", "acr_run", "all_fail_run", "all_pass_run"):
            row[key] = [s[key] for s in summ]
        row["train_seconds"] = [r["train_seconds"] for r in runs]
        rows.append(row)
    return rows


def _passk(result: dict) -> dict:
    ev = result["eval"]
    if "pass_at_k" in ev:
        return {int(k): v for k, v in ev["pass_at_k"].items()}
    return pass_at_k_of(ev, KS)


def write_report(out: Path, conf: dict) -> Path:
    from . import viz

    out = Path(out)
    base: RunConfig = conf["base"]
    results = load_results(out, conf)
    start = json.loads((out / "start.json").read_text())
    G = base.group_size
    tabular = base.policy == "tabular"

    # metrics.jsonl: every logged step of every run (the callback's rows when present: they carry the histogram)
    lines = []
    for est, runs in results.items():
        for r in runs:
            seed = r["config"]["seed"]
            jsonl = out / "metrics" / f"{run_name(est, seed)}.jsonl"
            rows = [json.loads(x) for x in jsonl.read_text().splitlines()] if jsonl.is_file() else r["history"]
            lines += [json.dumps({"estimator": est, "seed": seed, **row}) for row in rows]
    tmp = out / "metrics.jsonl.tmp"
    tmp.write_text("\n".join(lines) + "\n")
    os.replace(tmp, out / "metrics.jsonl")

    histories = {e: [r["history"] for r in runs] for e, runs in results.items()}
    figs = {"training.png": viz.starvation_curves(histories)}
    start_pk = pass_at_k_of(start, KS)
    ks = [k for k in KS if k in start_pk]
    curves = {"start": [start_pk[k] for k in ks]}
    bands = {}
    for e, runs in results.items():
        per_seed = np.array([[_passk(r)[k] for k in ks] for r in runs])
        curves[e], lo, hi = mean_ci_columns(per_seed)
        bands[e] = (lo, hi)
    figs["passk.png"] = viz.passk_curves(ks, curves, bands)
    if not tabular:
        after = {e: {int(lv): mean_ci([r["eval"]["greedy_by_level"][lv] for r in runs])
                     for lv in runs[0]["eval"]["greedy_by_level"]} for e, runs in results.items()}
        figs["levels.png"] = viz.level_bars({int(k): v for k, v in start["greedy_by_level"].items()}, after)
    for name, fig in figs.items():
        fig.savefig(out / name)

    st = start_starvation(start, G)
    table = summary_table(results)
    v = conf.get("versions", {})
    md = [f"# grpo-lab compare — {conf.get('created', '')}", "",
          f"Command: `{conf.get('command') or 'grpo-lab compare'}`  ", f"Directory: `{out}`", "",
          "## Settings (the same for every run)", "",
          "| setting | value |", "|---|---|"]
    for k, val in asdict(base).items():
        if k not in ("estimator", "seed"):
            md.append(f"| {k} | {val} |")
    md += [f"| estimators | {', '.join(conf['estimators'])} |", f"| seeds | {', '.join(map(str, conf['seeds']))} |",
           "| trainer | " + ("grpo_lab.simulator (tabular softmax, SGD on logits)" if tabular else
                             f"TRL {v.get('trl')} GRPOTrainer via grpo_lab.trl.trainer_class, AdamW, constant lr, "
                             f"TRL's default loss_type, beta 0") + " |",
           f"| versions | python {v.get('python')}, torch {v.get('torch')}, transformers {v.get('transformers')}, "
           f"grpo_lab {v.get('grpo_lab')} |", "",
           "## Starting point (shared by every run)", ""]
    if not tabular:
        md.append(f"- greedy accuracy {start['greedy']:.3f} on {len(start['correct'])} held-out problems; per level: "
                  + ", ".join(f"{lv}: {a:.2f}" for lv, a in start["greedy_by_level"].items()))
    md += [f"- pass@k from {start['n_samples']} samples per problem: "
           + ", ".join(f"pass@{k} {start_pk[k]:.3f}" for k in ks),
           f"- degenerate groups at G={G} implied by those samples, E[p^G + (1-p)^G] estimated without bias "
           f"per problem as C(c,G)/C(n,G) + C(n-c,G)/C(n,G): {st['degenerate']:.3f} (all-fail {st['all_fail']:.3f}, all-pass {st['all_pass']:.3f}); "
           f"problems never solved in {start['n_samples']} samples: {st['never_solved']:.3f}", "",
           "## Results (mean [95% t-interval over seeds, clipped to [0, 1]])", "",
           "| estimator | seeds | greedy acc | pass@1 | pass@16 | degenerate, first 10 steps | degenerate, whole run "
           "| all-fail, run | all-pass, run |",
           "|---|---|---|---|---|---|---|---|---|"]
    for row in table:
        md.append(f"| {row['estimator']} | {row['seeds']} | {fmt_ci(row['greedy'])} | {fmt_ci(row['pass@1'])} | "
                  f"{fmt_ci(row['pass@16'])} | {fmt_ci(row['acr_start'])} | {fmt_ci(row['acr_run'])} | "
                  f"{fmt_ci(row['all_fail_run'])} | {fmt_ci(row['all_pass_run'])} |")
    secs = [s for row in table for s in row["train_seconds"] if s]
    start_line = f"Start: pass@1 {start_pk[1]:.3f}" + (f", pass@16 {start_pk[16]:.3f}" if 16 in start_pk else "")
    if not tabular:
        start_line += f", greedy {start['greedy']:.3f}"
    md += ["", start_line + ".", "",
           "Reading it: intervals come from few seeds and are wide; an estimator is better than another here only "
           "where the intervals do not overlap. Degenerate = fraction of training groups with zero reward spread "
           "(GRPO's advantage is 0 on them); 'first 10 steps' is the starvation the estimators start from.", ""]
    if secs:
        md += [f"Training time per run: {np.mean(secs):.1f} s on average ({len(secs)} runs).", ""]
    md += ["## Plots", "", "![training](training.png)", "", "![pass@k](passk.png)", ""]
    if not tabular:
        md += ["![levels](levels.png)", ""]
    md += ["Raw data: `metrics.jsonl` (every logged step), `results/*.json` (each run), `start.json`.", ""]
    tmp = out / "report.md.tmp"
    tmp.write_text("\n".join(md))
    os.replace(tmp, out / "report.md")
    return out / "report.md"


def new_run_dir(root: Path) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = Path(root) / stamp
    i = 1
    while path.exists():
        path = Path(root) / f"{stamp}-{i}"
        i += 1
    return path


def command_line() -> str:
    return " ".join(["grpo-lab"] + sys.argv[1:])
