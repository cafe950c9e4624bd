"""``grpo-lab compare``: every method x every seed under one fixed config, then a report.

A method is an estimator, optionally with a sampling rule (:func:`grpo_lab.config.parse_method`): ``grpo``,
``sign``, ``dapo`` (GRPO + DAPO's dynamic sampling), ``grpo+drop``, ``grpo+skip``, ... Every run records the
completions and tokens it generated; ``budget_completions`` stops every run at the same generation budget.

Layout of a comparison directory (``runs/<timestamp>/``)::

    config.json              what is compared and how (written first)
    start.json               evaluation of the shared starting policy
    results/<est>-seed<k>.json   one finished run each, written atomically (tmp file + rename)
    metrics/<est>-seed<k>.jsonl  per-step logs while a run trains (StarvationCallback)
    metrics.jsonl            all runs' per-step rows, with "estimator" and "seed" (written at the end)
    *.png                    plots
    report.md                written last, atomically: it exists only when every run finished

An interrupted comparison keeps its finished runs; ``grpo-lab compare --resume DIR``
trains only the missing ones and then writes the report. Every results file carries the
fingerprint of the settings it was trained with (:func:`grpo_lab.io.fingerprint`): a resume
refuses a ``config.json`` changed since the start (naming the keys), and retrains a damaged
or foreign results file after moving it aside (``<name>.rejected-<k>``, never deleted). ``.lock`` (the owner's pid) keeps a second
process out of a directory in use.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ._checks import as_number
from .config import RunConfig, method_name, parse_method
from .io import (DirLock, differing_keys, display_path, fingerprint, new_run_dir, read_json, read_jsonl, run_name,
                 write_json_atomic, write_text_atomic)
from .passk import pass_at_k_of
from .report import md_table
from .runner import KS, evaluate_start, train
from .sampling import get_sampling
from .starvation import start_starvation, summarize_rows
from .stats import fmt_ci, mean_ci, mean_ci_columns

PER_RUN = ("estimator", "seed", "sampling", "skip_prob")  # what differs between the runs of one comparison


def shared_settings(cfg) -> dict:
    """The settings every run of a comparison shares (a ``RunConfig`` or its dict, less the method and seed).
    A dict from an older grpo-lab gets today's defaults for the fields it lacks."""
    d = asdict(cfg) if not isinstance(cfg, dict) else asdict(RunConfig(**cfg))
    return {k: v for k, v in d.items() if k not in PER_RUN}


def _versions() -> dict:
    import torch

    out = {"python": platform.python_version(), "torch": torch.__version__}
    for mod in ("trl", "transformers", "grpo_lab"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception:  # pragma: no cover - optional at report time
            out[mod] = None
    return out


def write_config(out: Path, estimators, seeds, base: RunConfig, command: str | None = None,
                 quick: bool = False) -> dict:
    if not list(estimators) or not list(seeds):
        raise ValueError("a comparison needs at least one estimator and one seed")
    for m in estimators:  # an unreadable method name fails here, before anything is trained
        base.with_run(m, 0).validate()
    if base.policy != "tabular":
        from .runner import run_dtype

        run_dtype(base)  # bf16 that cannot train here (full fine-tuning, no bf16 on the device) fails before any work
    if base.policy != "tabular" and base.eval_samples < base.group_size:
        raise ValueError(f"eval_samples ({base.eval_samples}) must be at least the group size ({base.group_size}): "
                         "the report estimates the degenerate fraction at G from the evaluation's samples")
    conf = dict(estimators=list(estimators), seeds=[int(s) for s in seeds], base=asdict(base), command=command,
                quick=bool(quick),
                versions=_versions(), created=time.strftime("%Y-%m-%d %H:%M:%S"),
                fingerprint=fingerprint(shared_settings(base)),
                settings_at_start=shared_settings(base))  # to name what an edit changed
    out.mkdir(parents=True, exist_ok=True)
    write_json_atomic(out / "config.json", conf)
    return conf


def open_comparison(out: Path, estimators, seeds, base: RunConfig, command: str | None = None) -> dict:
    """The comparison in ``out`` with at least these estimators and seeds (notebook 06 adds runs one by one).

    A new directory gets a new ``config.json``; an existing one must have the same settings (else the
    resume error names the keys) and its estimator and seed lists are extended.
    """
    out = Path(out)
    if not (out / "config.json").is_file():
        conf = write_config(out, estimators, seeds, base, command)
        conf["base"] = RunConfig(**conf["base"])
        return conf
    conf = read_config(out)
    diff = differing_keys(shared_settings(conf["base"]), shared_settings(base))
    if diff:
        raise ValueError(f"{out} holds a comparison with other settings ({'; '.join(diff)}); "
                         "use another directory for these settings")
    est = list(dict.fromkeys([*conf["estimators"], *estimators]))
    sds = list(dict.fromkeys([*conf["seeds"], *(int(s) for s in seeds)]))
    if (est, sds) != (conf["estimators"], conf["seeds"]):
        stored = read_json(out / "config.json", "comparison config")
        stored.update(estimators=est, seeds=sds)
        write_json_atomic(out / "config.json", stored)
        conf.update(estimators=est, seeds=sds)
    return conf


def read_config(out: Path) -> dict:
    """Read ``out/config.json`` for a resume; refuse it if it was changed after the comparison started."""
    path = Path(out) / "config.json"
    if not path.is_file():
        raise FileNotFoundError(f"{out} is not a grpo-lab comparison directory (no config.json)")
    conf = read_json(path, "comparison config")
    try:
        conf["base"] = RunConfig(**conf["base"]).validate()
        if not conf["estimators"] or not conf["seeds"]:
            raise ValueError("no estimators or no seeds")
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{path} is not a valid grpo-lab comparison config ({e})") from None
    stored_keys = set(read_json(path, "comparison config")["base"])  # fields added since then are not in it
    now = fingerprint({k: v for k, v in shared_settings(conf["base"]).items() if k in stored_keys})
    if conf.get("fingerprint") != now:
        finished = sorted((Path(out) / "results").glob("*.json"))
        diff = []
        for f in finished:
            try:
                diff = differing_keys(shared_settings(read_json(f)["config"]), shared_settings(conf["base"]))
                break
            except (ValueError, KeyError, TypeError):
                continue
        at_start = conf.get("settings_at_start")
        edited = differing_keys({k: v for k, v in at_start.items() if k in stored_keys},
                                {k: v for k, v in shared_settings(conf["base"]).items() if k in stored_keys}) \
            if isinstance(at_start, dict) else []
        detail = (f"finished runs were trained with different settings (run value != config.json value): "
                  f"{'; '.join(diff)}" if diff else
                  f"settings changed since the start (start value != now): {'; '.join(edited)}" if edited else
                  f"its settings no longer match the fingerprint written when the comparison started "
                  f"({conf.get('fingerprint')} != {now})")
        raise ValueError(f"{path} was changed after the comparison started: {detail}. Restore it, or start a new "
                         "comparison with the settings you want")
    return conf


def _is_number(x, low=None, high=None) -> bool:
    """Whether a value read from JSON is a finite number in ``[low, high]`` (:func:`grpo_lab._checks.as_number`'s
    rule, as a predicate)."""
    try:
        as_number("value", x, low=low, high=high)
    except (TypeError, ValueError):
        return False
    return True


def evaluation_problems(ev, simulated: bool = False, problems: int | None = None) -> str | None:
    """What is wrong with an evaluation as ``runner.evaluate`` writes it (a run's ``eval`` or ``start.json``), or
    None: per-problem counts of correct samples (ints in [0, n_samples], one per problem when ``problems`` is
    given), greedy accuracy a fraction, pass@k a dict of fractions with whole-number keys."""
    if not isinstance(ev, dict):
        return "no evaluation"
    if simulated:  # the tabular simulator: exact pass@k, no samples
        pk = ev.get("pass_at_k")
        return None if isinstance(pk, dict) and pk and all(_is_number(v, 0, 1) for v in pk.values()) else \
            "pass_at_k is not a dict of fractions"
    n, correct = ev.get("n_samples"), ev.get("correct")
    if not (isinstance(n, int) and not isinstance(n, bool) and n >= 1):
        return f"n_samples is {n!r}, not a whole number >= 1"
    if not (isinstance(correct, list) and correct and all(isinstance(c, int) and not isinstance(c, bool)
                                                          and 0 <= c <= n for c in correct)):
        return f"correct is not a list of counts between 0 and {n}"
    if problems is not None and len(correct) != problems:
        return f"it holds {len(correct)} problems, the comparison evaluates {problems}"
    if not _is_number(ev.get("greedy"), 0, 1):
        return f"greedy is {ev.get('greedy')!r}, not a fraction"
    if not isinstance(ev.get("greedy_by_level"), dict):
        return "greedy_by_level is missing"
    pk = ev.get("pass_at_k")
    if "pass_at_k" in ev and not (isinstance(pk, dict) and pk and all(str(k).isdigit() and _is_number(v, 0, 1)
                                                                      for k, v in pk.items())):
        return "pass_at_k is not a dict of fractions keyed by k"
    return None


def result_problems(res, simulated: bool = False, problems: int | None = None) -> str | None:
    """What is wrong with a results file against the schema :func:`grpo_lab.runner.train` writes, or None (a
    damaged file is moved aside and its run trained again, never read into a report)."""
    if not isinstance(res, dict) or not isinstance(res.get("config"), dict):
        return "no config"
    hist = res.get("history")
    if not (isinstance(hist, list) and hist and all(isinstance(h, dict) for h in hist)):
        return "no history of logged steps"
    if not simulated and not _is_number(res.get("train_seconds"), 0):
        return "no training time"
    bad = evaluation_problems(res.get("eval"), simulated, problems)
    return f"its evaluation is damaged: {bad}" if bad else None


def _finished(path: Path, est: str, seed: int, shared: dict, echo) -> bool:
    """Whether ``path`` is a complete result of this comparison; a damaged or foreign one is moved aside, saying so."""
    if not path.is_file():
        return False
    try:
        res = read_json(path, "results file")
        cfg = res["config"]
        simulated = shared.get("policy") == "tabular"
        bad = result_problems(res, simulated, None if simulated else shared.get("eval_problems"))
        diff = differing_keys(shared_settings(cfg), shared)
        who = (method_name(cfg), cfg.get("seed"))
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        echo(f"{path} is damaged ({str(e)[:120]}); moved aside to {_aside(path).name}; retraining {run_name(est, seed)}")
        return False
    if bad:
        why = f"is incomplete or damaged ({bad})"
    elif who != (est, seed) or diff:
        why = f"does not belong to this comparison ({'; '.join(diff) if diff else f'it holds {who[0]} seed {who[1]}'})"
    else:
        return True
    echo(f"{path} {why}; moved aside to {_aside(path).name}; retraining {run_name(est, seed)}")
    return False


def _aside(path: Path) -> Path:
    """Move a results file that cannot be used out of the way (never delete a result): ``<name>.rejected-<k>``."""
    k = 0
    while path.with_name(f"{path.name}.rejected-{k}").exists():
        k += 1
    target = path.with_name(f"{path.name}.rejected-{k}")
    path.replace(target)
    return target


def _check_trainer_settings(out: Path, conf: dict, base: RunConfig) -> dict | None:
    """The effective trainer settings of this comparison's runs (seed aside), recorded in ``config.json`` by the
    first process that trains it; a later process (a resume, another kernel) that would train under other
    settings — an Unsloth import that patched TRL, another TRL version — is refused, naming the fields."""
    from .runner import policy_adapter

    now = policy_adapter(base).trainer_settings(base)
    if now is None:
        return None
    stored = read_json(out / "config.json", "comparison config")
    if stored.get("trainer_settings") is None:
        stored["trainer_settings"] = now
        write_json_atomic(out / "config.json", stored)
        return now
    diff = differing_keys(stored["trainer_settings"], now)
    if diff:
        raise ValueError(f"this process would train under other trainer settings than the runs of {out} "
                         f"(recorded != now): {'; '.join(diff[:8])}. Resume it in a process with the same "
                         "libraries (a fresh kernel, without importing unsloth first), or start a new comparison")
    return stored["trainer_settings"]


def run_comparison(out: Path, conf: dict, progress: bool = True, echo=print) -> Path:
    """Train every missing (estimator, seed) run of ``conf`` into ``out``; then write plots and the report."""
    out = Path(out)
    with DirLock(out):
        return _run_comparison(out, conf, progress, echo)


def _run_comparison(out: Path, conf: dict, progress: bool, echo) -> Path:
    base: RunConfig = conf["base"]
    shared = shared_settings(base)
    (out / "results").mkdir(parents=True, exist_ok=True)
    (out / "metrics").mkdir(exist_ok=True)
    start_path = out / "start.json"
    start = None
    if start_path.is_file():
        try:
            start = read_json(start_path, "start evaluation")
            bad = evaluation_problems(start, problems=None if base.policy == "tabular" else base.eval_problems)
            if bad:
                raise ValueError(f"{start_path} is not a starting-policy evaluation grpo-lab can use ({bad})")
        except ValueError as e:
            start = None
            echo(f"{e}; evaluating the starting policy again")
    if start is None:
        write_json_atomic(start_path, evaluate_start(base))
        start = read_json(start_path, "start evaluation")  # as later readers see it (JSON keys are strings)
    expected = _check_trainer_settings(out, conf, base)
    # seed by seed, every method within a seed: an interrupted comparison then holds every method at the
    # same number of seeds (the runs are independent, so the order changes no result)
    todo = [(e, s) for s in conf["seeds"] for e in conf["estimators"]
            if not _finished(out / "results" / f"{run_name(e, s)}.json", e, s, shared, echo)]
    total = len(conf["estimators"]) * len(conf["seeds"])
    if len(todo) < total:
        echo(f"resuming: {total - len(todo)} of {total} runs already finished in {out}")
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(todo), desc="runs", unit="run")
    for est, seed in todo:
        cfg = base.with_run(est, seed)
        name = run_name(est, seed)
        jsonl = out / "metrics" / f"{name}.jsonl"
        work = out / "checkpoints" / name if base.save_steps else None
        if work is None:
            jsonl.unlink(missing_ok=True)  # an interrupted run starts over
        res = train(cfg, work, jsonl_path=jsonl, progress=progress, start=start)
        diff = differing_keys(expected or {}, res.get("trainer_settings") or {}) if expected is not None else []
        if diff:
            raise ValueError(f"run {name} trained under other trainer settings than this comparison records "
                             f"(recorded != this run): {'; '.join(diff[:8])}; its result is not kept. Something "
                             "changed the trainer's configuration after it was built (a library patch?)")
        res["fingerprint"] = fingerprint(shared)
        write_json_atomic(out / "results" / f"{name}.json", res)
        if bar is not None:
            bar.update(1)
            bar.set_postfix_str(f"last: {name}")
    if bar is not None:
        bar.close()
    return write_report(out, conf)


def load_results(out: Path, conf: dict, partial: bool = False) -> dict:
    """``{estimator: [result per seed]}``; a missing run is an error naming it (``partial=True``: left out)."""
    res = {}
    for e in conf["estimators"]:
        for s in conf["seeds"]:
            path = Path(out) / "results" / f"{run_name(e, s)}.json"
            if not path.is_file() and partial:
                continue
            if not path.is_file():
                raise FileNotFoundError(f"run {run_name(e, s)} has not finished; resume the comparison first")
            res.setdefault(e, []).append(read_json(path, "results file"))
    return res


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


def _mean_or_na(values, fmt="{:.0f}") -> str:
    v = [x for x in values if x is not None]
    return fmt.format(float(np.mean(v))) if v else "n/a"


def _trainer_line(results: dict, recorded: dict | None) -> str:
    """Whether every run trained under the recorded effective trainer settings, naming any field that differs."""
    runs = [r for rs in results.values() for r in rs if r.get("trainer_settings") is not None]
    if not runs:
        return "n/a (no trainer, or runs from before grpo-lab recorded them)"
    recorded = recorded or runs[0]["trainer_settings"]
    diffs = sorted({d.split(":")[0] for r in runs for d in differing_keys(recorded, r["trainer_settings"])})
    if diffs:
        return f"**differ between runs in: {', '.join(diffs)}**"
    return (f"identical in every run ({len(recorded)} settings: GRPOConfig's fields and the weights' dtype, seed aside; "
            f"optimizer {recorded.get('optim')}, "
            f"beta {recorded.get('beta')}, loss_type {recorded.get('loss_type')}; all in config.json)")


def _distinct(results: dict, key: str) -> str:
    """The distinct values of ``key`` over every run, for the report ("n/a" where runs predate the key)."""
    vals = list(dict.fromkeys(str(r[key]) for runs in results.values() for r in runs if r.get(key) is not None))
    return ", ".join(vals) if vals else "n/a"


def _read_jsonl(path: Path) -> list[dict]:
    """The rows of a metrics file; a line that is not a JSON object is an error naming the file and the line."""
    return [row for _, row in read_jsonl(path, hint="; move the file aside to write the report from the results "
                                                    "files' own histories")]


def _passk(result: dict) -> dict:
    ev = result["eval"]
    return {int(k): v for k, v in ev["pass_at_k"].items()} if "pass_at_k" in ev else pass_at_k_of(ev, KS)


# Settings a run's report leaves out when they cannot have acted on it (issue 27): the Unsloth backend's own fields
# on another backend, and dynamic sampling's on a comparison where no method samples dynamically.
UNSLOTH_ONLY = ("unsloth_compile", "unsloth_cache", "fast_inference")
DYNAMIC_ONLY = ("max_generation_rounds", "on_exhausted")


def unused_settings(base: RunConfig, methods, backends) -> list[str]:
    """The settings of ``base`` that did not act on any run: Unsloth's fields where no run used Unsloth, dynamic
    sampling's where no method samples dynamically, LoRA's on a fully fine-tuned or tabular policy."""
    out = [] if "unsloth" in backends else list(UNSLOTH_ONLY)
    if not any(get_sampling(parse_method(m)["sampling"]).refills for m in methods):
        out += DYNAMIC_ONLY
    if base.lora_r is None or base.policy in ("tiny-lm", "tabular"):
        out += ["lora_r", "lora_alpha"]
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
        up, down, same = [], [], []
        for r in rows:
            m, lo, hi = mean_ci(r[key])
            (same if len(r[key]) < 2 else up if lo > s0 else down if hi < s0 else same).append(
                f"{r['estimator']} {m:.3f}")
        words = [f"**{name}** from {s0:.3f}:"]
        words += [f"up for {', '.join(up)};"] if up else []
        words += [f"down for {', '.join(down)};"] if down else []
        words += [f"no detectable change for {', '.join(same)};"] if same else []
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


def write_report(out: Path, conf: dict, interim: bool = False) -> Path:
    """``report.md`` with its plots and ``metrics.jsonl``, once every run has finished.

    ``interim=True`` (``grpo-lab compare --interim-report DIR``): the same from the runs finished so far, written
    to ``DIR/interim/`` (so ``report.md`` still appears only when the comparison is complete), opening with how
    many runs it holds and how to resume. It reads only finished, atomically written results files, so it can
    run while another process trains the comparison.
    """
    from . import viz

    out = Path(out)
    base: RunConfig = conf["base"]
    results = load_results(out, conf, partial=interim)
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
            jsonl = out / "metrics" / f"{run_name(est, seed)}.jsonl"
            rows = _read_jsonl(jsonl) if jsonl.is_file() else r["history"]
            lines += [json.dumps({"estimator": est, "seed": seed, **row}) for row in rows]
    write_text_atomic(dest / "metrics.jsonl", "\n".join(lines) + "\n")

    histories = {e: [r["history"] for r in runs] for e, runs in results.items()}
    n_seeds = min(len(runs) for runs in results.values())
    budget = f"budget {base.budget_completions} completions" if base.budget_completions else f"{base.steps} steps"
    setting = (f"{base.policy}, {base.task}, lr {base.learning_rate:g}, G={G}, {budget}, "
               f"{n_seeds} seed{'s' if n_seeds > 1 else ''}")
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
                                         title=f"pass@k on held-out problems after training ({setting})")
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
                   if not (out / "results" / f"{run_name(e, sd)}.json").is_file()]
        md += [f"**Interim report ({time.strftime('%Y-%m-%d %H:%M')}): {done} of {total} runs finished**; not yet: "
               f"{', '.join(missing) or 'none'}. Resume with `grpo-lab compare --resume {display_path(out)}`; the "
               "final `report.md` appears beside `results/` when every run has finished.", ""]
    if conf.get("quick"):
        md += [f"**A smoke run (`--quick`)**: {base.steps} steps, {len(conf['seeds'])} seeds, {base.eval_problems} "
               "held-out problems. It shows that the pipeline runs end to end; its numbers are too few to measure "
               "anything. Drop `--quick` for the real comparison.", ""]
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
               "differences are not detectable, which is not the same as no difference.", ""]
    md += [f"Command: `{conf.get('command') or 'grpo-lab compare'}`  ", f"Directory: `{display_path(out)}`", "",
          "## Settings (the same for every run)", ""]
    hidden = unused_settings(base, conf["estimators"], {r.get("backend") for rs in results.values() for r in rs})
    settings = [(k, val) for k, val in asdict(base).items() if k not in PER_RUN and k not in hidden]
    settings += [
        ("methods", ", ".join(conf["estimators"])), ("seeds", ", ".join(map(str, conf["seeds"]))),
        ("trainer", "grpo_lab.simulator (tabular softmax, SGD on logits)" if simulated else
         f"TRL {v.get('trl')} GRPOTrainer via grpo_lab.trl.trainer_class; every setting explicit "
         f"(grpo_lab.runner.TRAINER_CONSTANTS: AdamW, constant lr, loss_type dapo, beta 0)"),
        ("versions", f"python {v.get('python')}, torch {v.get('torch')}, transformers {v.get('transformers')}, "
                     f"grpo_lab {v.get('grpo_lab')}"),
        ("backend, device", f"{_distinct(results, 'backend')}; {_distinct(results, 'device')}"),
        ("weights", _distinct(results, "weights")), ("torch threads", _distinct(results, "threads")),
        ("weights' dtype", f"{_distinct(results, 'dtype')} ({_distinct(results, 'dtype_why')}; training under bf16 "
                           "autocast)"),
        ("trainer settings", _trainer_line(results, read_json(out / "config.json").get("trainer_settings")))]
    md += md_table(("setting", "value"), settings)
    md += ["", *([f"Not listed, since they acted on no run here: {', '.join(hidden)}.", ""] if hidden else []),
           "## Starting point (shared by every run)", ""]
    if has_greedy:
        md.append(f"- greedy accuracy {start['greedy']:.3f} on {len(start['correct'])} held-out problems; per level: "
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


def command_line() -> str:
    return " ".join(["grpo-lab"] + sys.argv[1:])
