"""The reports' room: one markdown-table helper for ``grpo-lab compare``, ``profile`` and ``inspect`` (every
report's tables built the same way from rows of cells), and the comparison's report itself: its table data
(:func:`summary_table`), the verdict in words from the intervals (:func:`verdict_lines`) and the markdown with
its figures (:func:`write_comparison_report`). ``grpo_lab.compare`` runs a comparison and calls it; nothing
here trains or reads a run's settings beyond its results (introduced in notebook 04's report)."""

from __future__ import annotations

import json
import re
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

from .config import PER_RUN, RunConfig, parse_method
from .io import display_path, read_json, read_jsonl, metrics_path, result_path, run_name, settings_differ, write_text_atomic
from .passk import KS, pass_at_k_of
from .sampling import get_sampling
from .starvation import start_starvation, summarize_rows
from .stats import fmt_ci, mean_ci, mean_ci_columns


def duration(seconds: float) -> str:
    """A time for a person: seconds under a minute and a half, else minutes (the pace lines of ``compare``,
    ``study run`` and ``profile``: a 40 s forecast must not read "about 1 min", nor "0 min")."""
    if seconds < 10:  # issue 81: a tiny run's pace read "about 0 s of training per run"
        return f"{seconds:.1f} s" if seconds >= 0.1 else "under 0.1 s"
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def md_cell(value) -> str:
    """A table cell's text: ``str(value)`` with each ``|`` escaped and line breaks as spaces, so that a cell holding
    either (an arm named "a|b") is one cell, not two or a broken row (issue 83)."""
    return " ".join(str(value).replace("|", "\\|").split("\n")).replace("\r", " ")


def md_table(header, rows) -> list[str]:
    """The lines of a markdown table: ``header`` (cell texts), a separator, one line per row of ``rows``
    (each a sequence of cells, written with :func:`md_cell`). A row of another width than the header is an
    error."""
    header = [md_cell(h) for h in header]
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for i, row in enumerate(rows):
        cells = [md_cell(c) for c in row]
        if len(cells) != len(header):
            raise ValueError(f"table row {i} has {len(cells)} cells for {len(header)} columns: {cells}")
        out.append("| " + " | ".join(cells) + " |")
    return out


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
        gen = [r.get("generated") or {} for r in runs]
        row["steps_done"] = [r.get("steps_done", r["config"]["steps"]) for r in runs]
        row["completions"] = [r.get("completions") for r in runs]
        row["tokens"] = [g.get("tokens") for g in gen]
        row["informative"] = [g.get("trained_informative") for g in gen]
        row["rounds_per_step"] = [g["rounds"] / g["batches"] if g.get("batches") else None for g in gen]
        row["skipped"] = [g.get("skipped_prompts") for g in gen]
        row["short_steps"] = [sum(h.get("sampling/short", 0) or 0 for h in r["history"]) for r in runs]
        rows.append(row)
    return rows


def _budget_phrase(base: RunConfig) -> str:
    """At which cost the runs of a comparison were compared (the results table's heading)."""
    if base.budget_completions is not None:
        return (f"at an equal generation budget: every run stopped at the end of the first step at which it had "
                f"generated {base.budget_completions} training completions (or after {base.steps} steps)")
    return f"at equal optimizer steps ({base.steps} per run; the generation each spent is in the cost table)"


def one_setting_words(base: RunConfig) -> str:
    """What a comparison at one shared learning rate and KL coefficient can say (docs/guide/compare.md, "Comparing
    estimators fairly"): a ranking at one rate may not hold at another (under Adam the rate, not the advantage's
    scale, sets each step's length); each estimator's own best rate, chosen on a validation split, is a study's job."""
    return (f"Every method ran at one learning rate ({base.learning_rate:g}) and KL coefficient (β {base.beta:g}): a "
            "ranking read here holds at that setting only: the rate that suits one estimator may not suit another "
            "(study 3, docs/guide/real-model.md). To compare each at its own best rate, chosen on a validation "
            "split, plan a study (`grpo-lab study`, docs/guide/study.md).")


def _mean_or_na(values, fmt="{:.0f}") -> str:
    v = [x for x in values if x is not None]
    return fmt.format(float(np.mean(v))) if v else "n/a"


def _trainer_line(results: dict, recorded: dict | None) -> str:
    """Whether every run trained under the recorded effective trainer settings, naming any field that differs."""
    runs = [r for rs in results.values() for r in rs if r.get("trainer_settings") is not None]
    if not runs:
        return "n/a (no trainer, or runs from before grpo-lab recorded them)"
    recorded = recorded or runs[0]["trainer_settings"]
    diffs = sorted({d.split(":")[0] for r in runs for d in settings_differ(recorded, r["trainer_settings"])})
    if diffs:
        return f"**differ between runs in: {', '.join(diffs)}**"
    return (f"identical in every run ({len(recorded)} settings: GRPOConfig's fields and the weights' dtype, seed aside; "
            f"optimizer {recorded.get('optim')}, "
            f"beta {recorded.get('beta')}, loss_type {recorded.get('loss_type')}; all in config.json)")


def _distinct(results: dict, key: str) -> str:
    """The distinct values of ``key`` over every run, for the report ("n/a" where runs predate the key)."""
    vals = list(dict.fromkeys(str(r[key]) for runs in results.values() for r in runs if r.get(key) is not None))
    return ", ".join(vals) if vals else "n/a"


def _passk(result: dict) -> dict:
    ev = result["eval"]
    return {int(k): v for k, v in ev["pass_at_k"].items()} if "pass_at_k" in ev else pass_at_k_of(ev, KS)


# Settings a run's report leaves out when they cannot have acted on it (issue 27): the Unsloth backend's own fields
# on another backend, and dynamic sampling's on a comparison where no method samples dynamically.
UNSLOTH_ONLY = ("unsloth_compile", "unsloth_cache", "fast_inference")
DYNAMIC_ONLY = ("max_generation_rounds", "on_exhausted")


def graders_of(start: dict, results: dict) -> list[str]:
    """The grader versions (:func:`grpo_lab.tasks.grader_version`) that scored the start evaluation and the runs;
    "unrecorded" for results from before grpo-lab recorded it."""
    evals = [start] + [r.get("eval") or {} for runs in results.values() for r in runs]
    return sorted({e.get("grader") or "unrecorded" for e in evals if e.get("n_samples")})  # the simulator grades none


def _eval_sampling(results: dict) -> str:
    """How the runs' evaluations were sampled: the dtype (:func:`grpo_lab.io.eval_dtype_of`) and whether each
    distinct problem was sampled once (issue 61)."""
    from .io import eval_dtype_of

    runs = [r for rs in results.values() for r in rs]
    dtypes = sorted({eval_dtype_of(r) or "n/a" for r in runs})
    once = {bool(((r.get("eval") or {}).get("sampling") or {}).get("distinct")) for r in runs}
    how = ("each distinct problem sampled once, its counts given to every draw" if once == {True} else
           "a sample per draw" if once == {False} else "mixed: some runs sampled each distinct problem once")
    return f"{', '.join(dtypes)}; {how}"


def unused_settings(base: RunConfig, methods, backends) -> list[str]:
    """The settings of ``base`` that did not act on any run: Unsloth's fields where no run used Unsloth, dynamic
    sampling's where no method samples dynamically, LoRA's on a fully fine-tuned or tabular policy."""
    out = [] if "unsloth" in backends else list(UNSLOTH_ONLY)
    if not any(get_sampling(parse_method(m)["sampling"]).refills for m in methods):
        out += DYNAMIC_ONLY
    if base.lora_r is None or base.policy in ("tiny-lm", "tabular"):
        out += ["lora_r", "lora_alpha"]
    if base.generation_dtype is None:
        out += ["generation_dtype"]
    if base.eval_dtype is None:
        out += ["eval_dtype"]
    return out


def verdict_lines(table: list[dict], start: dict, keys=(("greedy", "greedy accuracy"), ("pass@1", "pass@1"))) -> list:
    """The report's opening sentences, from the intervals alone (the wording of the README's verdicts): for each
    metric, which methods moved from the start (a 95% t-interval over seeds wholly above or below it) and which
    pairs of methods are apart (intervals that do not overlap; no correction for multiplicity)."""
    from .stats import separated

    out = []
    for key, name in keys:
        rows = [r for r in table if r.get(key) and all(v is not None for v in r[key])]
        if key not in start or start[key] is None or not rows:
            continue
        s0 = start[key]
        up, down, same, agree = [], [], [], []
        for r in rows:
            m, lo, hi = mean_ci(r[key])
            if len(r[key]) >= 2 and not np.ptp(r[key]) > 0:  # seeds that agree exactly: a [x, x] interval says
                agree.append(f"{r['estimator']} {m:.3f}")  # nothing about the start
                continue
            (same if len(r[key]) < 2 else up if lo > s0 else down if hi < s0 else same).append(
                f"{r['estimator']} {m:.3f}")
        words = [f"**{name}** from {s0:.3f}:"]
        words += [f"up for {', '.join(up)};"] if up else []
        words += [f"down for {', '.join(down)};"] if down else []
        words += [f"no detectable change for {', '.join(same)};"] if same else []
        words += [f"cannot tell for {', '.join(agree)} (its seeds agree exactly);"] if agree else []
        names = [r["estimator"] for r in rows]
        apart = [f"{a['estimator']} above {b['estimator']}" for a in rows for b in rows
                 if a is not b and separated(a[key], b[key]) == "a"]
        n_pairs = len(names) * (len(names) - 1) // 2
        if n_pairs:
            words.append(f"methods apart ({n_pairs} pair{'s' if n_pairs > 1 else ''}): "
                         + (", ".join(apart) if apart else "none") + ".")
        else:
            words[-1] = words[-1].rstrip(";") + "."
        out.append(" ".join(words))
    return out


def write_comparison_report(out: Path, conf: dict, results: dict, interim: bool = False,
                            skipped: list | None = None) -> Path:
    """A comparison's ``report.md`` with its plots and ``metrics.jsonl`` from its finished ``results``
    (``{method: [result per seed]}``, :func:`grpo_lab.compare.load_results`); ``grpo_lab.compare.write_report``
    loads them and calls this.

    ``interim=True`` (``grpo-lab compare --interim-report DIR``): the same from the runs finished so far, written
    to ``DIR/interim/`` (so ``report.md`` still appears only when the comparison is complete), opening with how
    many runs it holds and how to resume. It reads only finished, atomically written results files, so it can
    run while another process trains the comparison.
    """
    from . import viz

    out = Path(out)
    base: RunConfig = conf["base"]
    dest = out / "interim" if interim else out
    if interim:
        if not results:
            raise FileNotFoundError(f"no run of {out} has finished yet: nothing to report")
        dest.mkdir(exist_ok=True)
    start = read_json(out / "start.json", "start evaluation")
    G = base.group_size
    # what the results hold decides what is shown: a simulated policy has exact pass@k and no greedy decoding
    simulated = any(r.get("backend") == "simulator" for runs in results.values() for r in runs)
    has_greedy = all(r["eval"].get("greedy") is not None for runs in results.values() for r in runs)

    # metrics.jsonl: every logged step of every run (the callback's rows when present: they carry the histogram)
    lines = []
    for est, runs in results.items():
        for r in runs:
            seed = r["config"]["seed"]
            jsonl = metrics_path(out, est, seed)
            rows = ([row for _, row in read_jsonl(jsonl, hint="; move the file aside to write the report from the "
                                                              "results files' own histories")]
                    if jsonl.is_file() else r["history"])
            lines += [json.dumps({"estimator": est, "seed": seed, **row}) for row in rows]
    write_text_atomic(dest / "metrics.jsonl", "\n".join(lines) + "\n")

    histories = {e: [r["history"] for r in runs] for e, runs in results.items()}
    n_seeds = min(len(runs) for runs in results.values())
    budget = f"budget {base.budget_completions} completions" if base.budget_completions else f"{base.steps} steps"
    setting = (f"{base.policy}, {base.task}, lr {base.learning_rate:g}, G={G}, {budget}, "
               f"{n_seeds} " + ("seeds" if n_seeds > 1 else "seed"))
    steps_min = min(len(h) for hs in histories.values() for h in hs)
    window = max(1, min(10, steps_min // 4))  # never longer than a quarter of the shortest run
    smooth = f"moving average over {window} steps" if window > 1 else "per step, not smoothed"
    figs = {"training.png": viz.starvation_curves(histories, window=window,
                                                  title=f"Training batches ({setting}); {smooth}")}
    if all(any("sampling/completions_total" in row for row in h) for hs in histories.values() for h in hs):
        figs["training_by_completions.png"] = viz.starvation_curves(
            histories, x="completions", window=window, title=f"The same against generation cost ({setting}); {smooth}")
    start_pk = pass_at_k_of(start, KS)
    ks = [k for k in KS if k in start_pk]
    curves = {"start": [start_pk[k] for k in ks]}
    bands = {}
    for e, runs in results.items():
        per_seed = np.array([[_passk(r)[k] for k in ks] for r in runs])
        curves[e], lo, hi = mean_ci_columns(per_seed)
        bands[e] = (lo, hi)
    figs["passk.png"] = viz.passk_curves(ks, curves, bands, n_seeds=n_seeds,
                                         title=f"pass@k on the evaluation problems after training ({setting})")
    by_level = has_greedy and len(start.get("greedy_by_level") or {}) > 1  # a task without levels gets no bar chart
    if by_level:
        after = {e: {int(lv): mean_ci([r["eval"]["greedy_by_level"][lv] for r in runs])
                     for lv in runs[0]["eval"]["greedy_by_level"]} for e, runs in results.items()}
        figs["levels.png"] = viz.level_bars({int(k): v for k, v in start["greedy_by_level"].items()}, after,
                                            n_seeds=n_seeds, title=f"Greedy accuracy per level ({setting})")
    for name, fig in figs.items():
        fig.savefig(dest / name)

    st = start_starvation(start, G)
    table = summary_table(results)
    k_top = max(ks)  # the largest k the evaluation's samples give (16 by default; 8 with --eval-samples 8)
    v = conf.get("versions", {})
    md = [f"# grpo-lab compare — {conf.get('created', '')}", ""]
    if interim:
        total = len(conf["estimators"]) * len(conf["seeds"])
        done = sum(len(runs) for runs in results.values())
        missing = [run_name(e, sd) for sd in conf["seeds"] for e in conf["estimators"]
                   if not result_path(out, e, sd).is_file()]
        md += [f"**Interim report ({time.strftime('%Y-%m-%d %H:%M')}): {done} of {total} runs finished**; not yet: "
               f"{', '.join(missing) or 'none'}. Resume with `grpo-lab compare --resume {display_path(out)}`; the "
               "final `report.md` appears beside `results/` when every run has finished.", ""]
        if skipped:
            md += ["**Left out of this report** (checked as `--resume` checks them; a resume retrains them): "
                   + "; ".join(f"`{name}`: {why}" for name, why in skipped) + ".", ""]
    from .runner import held_out_words

    held = held_out_words(base)
    if conf.get("quick"):
        md += [f"**A smoke run (`--quick`)**: {base.steps} steps, {len(conf['seeds'])} seeds, {base.eval_problems} "
               f"{held}. It shows that the pipeline runs end to end; its numbers are too few to measure "
               "anything. Drop `--quick` for the real comparison.", ""]
    graders = graders_of(start, results)
    if len(graders) > 1:
        md += [f"**Graded by different graders** ({', '.join(graders)}: grpo_lab.tasks.grader_version): the start "
               "evaluation and the runs were not all scored by the same code, so the same completion may have scored "
               "differently; compare these numbers with care.", ""]
    start_row = {"greedy": start.get("greedy") if has_greedy else None, "pass@1": pass_at_k_of(start, KS).get(1)}
    n_min = min(len(runs) for runs in results.values())
    md += ["## Verdict", ""]
    if n_min < 2:
        md += ["One seed per method so far: no intervals yet, so no verdict." if interim else
               "One seed per method: no intervals, so no verdict. Rerun with at least 2 seeds.", ""]
    else:
        md += [f"- {line}" for line in verdict_lines(summary_table(results), start_row)]
        md += [f"- Compared {_budget_phrase(base)}; {n_min}"
               f"{'' if n_min == max(len(r) for r in results.values()) else '+'} seeds per method. \"Up\", "
               "\"down\" and \"apart\" only where 95% t-intervals over seeds do not overlap; with few seeds most "
               "differences are not detectable, which is not the same as no difference.",
               f"- {one_setting_words(base)}", ""]
    # where a comparison was first written is not part of how to reproduce it (the Directory line says where it is)
    command = re.sub(r"\s+--out(?:=|\s+)\S+", "", conf.get("command") or "grpo-lab compare")
    md += [f"Command: `{command}`  ", f"Directory: `{display_path(out)}`", "",
          "## Settings (the same for every run)", ""]
    hidden = unused_settings(base, conf["estimators"], {r.get("backend") for rs in results.values() for r in rs})
    settings = [(k, val) for k, val in asdict(base).items() if k not in PER_RUN and k not in hidden]
    settings += [
        ("methods", ", ".join(conf["estimators"])), ("seeds", ", ".join(map(str, conf["seeds"]))),
        ("trainer", "grpo_lab.simulator (tabular softmax, SGD on logits)" if simulated else
         f"TRL {v.get('trl')} GRPOTrainer via grpo_lab.trl.trainer_class; every setting explicit "
         f"(grpo_lab.runner.TRAINER_CONSTANTS: AdamW, loss_type dapo; the schedule, betas and beta as above)"),
        ("versions", f"python {v.get('python')}, torch {v.get('torch')}, transformers {v.get('transformers')}, "
                     f"grpo_lab {v.get('grpo_lab')}"),
        ("backend, device", f"{_distinct(results, 'backend')}; {_distinct(results, 'device')}"
         + ("" if _distinct(results, "cpu") == "n/a" else f" ({_distinct(results, 'cpu')})")),
        ("weights", _distinct(results, "weights")), ("torch threads", _distinct(results, "threads")),
        ("weights' dtype", f"{_distinct(results, 'dtype')} ({_distinct(results, 'dtype_why')})"),
        ("training precision", _distinct(results, "precision_why") if any(r.get("precision_why") for rs in
                                                                            results.values() for r in rs)
         else "bf16 autocast (recorded before issue 81, when every CPU run trained under it)"),
        ("evaluation sampled in", _eval_sampling(results)),
        ("trainer settings", _trainer_line(results, read_json(out / "config.json").get("trainer_settings"))),
        ("grader", ", ".join(graders_of(start, results)))]
    md += md_table(("setting", "value"), settings)
    md += ["", *([f"Not listed, since they acted on no run here: {', '.join(hidden)}.", ""] if hidden else []),
           "## Starting point (shared by every run)", ""]
    if has_greedy:
        md.append(f"- greedy accuracy {start['greedy']:.3f} on {len(start['correct'])} {held}; per level: "
                  + ", ".join(f"{lv}: {a:.2f}" for lv, a in start["greedy_by_level"].items()))
    md += [f"- pass@k from {start['n_samples']} samples per problem: "
           + ", ".join(f"pass@{k} {start_pk[k]:.3f}" for k in ks),
           f"- degenerate groups at G={G} implied by those samples, E[p^G + (1-p)^G] estimated without bias "
           f"per problem as C(c,G)/C(n,G) + C(n-c,G)/C(n,G): {st['degenerate']:.3f} (all-fail {st['all_fail']:.3f}, all-pass {st['all_pass']:.3f}); "
           f"problems never solved in {start['n_samples']} samples: {st['never_solved']:.3f}", "",
           "## Results (mean [95% t-interval over seeds, clipped to [0, 1]])", "",
           *(["**One seed per estimator: there are no intervals, and these numbers cannot separate estimators. "
              "Rerun with at least 2 seeds (`--seeds 0,1,2`).**", ""] if len(conf["seeds"]) < 2 else []),
           ]
    md += md_table(("estimator", "seeds", "greedy acc", "pass@1", f"pass@{k_top}", "degenerate, first 10 steps",
                    "degenerate, whole run", "all-fail, run", "all-pass, run"),
                   [(row["estimator"], row["seeds"], *(fmt_ci(row[c]) for c in (
                       "greedy", "pass@1", f"pass@{k_top}", "acr_start", "acr_run", "all_fail_run", "all_pass_run")))
                    for row in table])
    md += ["", f"Compared {_budget_phrase(base)}.", "", "### Generation cost (mean per run)", ""]
    md += md_table(("method", "steps", "completions generated", "new tokens", "informative groups trained",
                    "rounds per step", "steps short of informative groups", "prompts skipped", "training seconds"),
                   [(row["estimator"], _mean_or_na(row["steps_done"], "{:.1f}"), _mean_or_na(row["completions"]),
                     _mean_or_na(row["tokens"]), _mean_or_na(row["informative"]),
                     _mean_or_na(row["rounds_per_step"], "{:.2f}"), _mean_or_na(row["short_steps"], "{:.1f}"),
                     _mean_or_na(row["skipped"]), _mean_or_na(row["train_seconds"], "{:.1f}")) for row in table])
    md += ["", "Informative groups trained: groups with reward spread that reached the loss (plain GRPO trains its "
               "degenerate groups too, at advantage 0). A round is one generation batch of prompts_per_step prompts; "
               "dynamic sampling (dapo) generates rounds until the step holds prompts_per_step informative groups or "
               f"max_generation_rounds ({base.max_generation_rounds}) is reached."]
    secs = [s for row in table for s in row["train_seconds"] if s]
    start_line = f"Start: pass@1 {start_pk[1]:.3f}" + (f", pass@{k_top} {start_pk[k_top]:.3f}" if k_top > 1 else "")
    if has_greedy:
        start_line += f", greedy {start['greedy']:.3f}"
    md += ["", start_line + ".", "",
           "Reading it: intervals come from few seeds and are wide; an estimator is better than another here only "
           "where the intervals do not overlap. Degenerate = fraction of the groups generated for training with zero "
           "reward spread (GRPO's advantage is 0 on them; under dynamic sampling, of every round generated, before "
           "the filter); 'first 10 steps' is the starvation the methods start from.", ""]
    if secs:
        evals = [r["eval_seconds"] for runs in results.values() for r in runs if r.get("eval_seconds")]
        steps = [s for row in table for s, t in zip(row["steps_done"], row["train_seconds"]) if t]
        md += [f"Training time per run: {np.mean(secs):.1f} s on average ({sum(secs) / max(sum(steps), 1):.2g} s per "
               f"step, "
               f"{len(secs)} runs, torch threads {_distinct(results, 'threads')})"
               + (f"; evaluation {np.mean(evals):.1f} s per run." if evals else "."), ""]
    listed = {run_name(e, sd) for e in conf["estimators"] for sd in conf["seeds"]}
    extra = sorted(p.name for p in (out / "results").glob("*.json") if p.stem not in listed)
    if extra:
        md += [f"**Not in this report:** {', '.join(extra)} in `results/`: config.json does not list their method "
               "or seed (was it edited?). Add them back to its `estimators` / `seeds` to report them.", ""]
    md += ["## Plots", "", "![training](training.png)", ""]
    if "training_by_completions.png" in figs:
        md += ["![training against completions generated](training_by_completions.png)", ""]
    md += ["![pass@k](passk.png)", ""]
    if by_level:
        md += ["![levels](levels.png)", ""]
    md += ["Raw data: `metrics.jsonl` (every logged step), `results/*.json` (each run), `start.json`.", ""]
    if interim:
        md = [x.replace("`results/*.json`", "`../results/*.json`").replace("`start.json`", "`../start.json`")
              for x in md]
    return write_text_atomic(dest / "report.md", "\n".join(md))
