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

import math
import platform
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

from ._checks import as_number
from .config import PER_RUN, RunConfig, method_key, method_name
from .io import (DirLock, check_eval_dtypes, differing_keys, eval_dtype_of, fingerprint,  # noqa: F401 (new_run_dir:
                 metrics_path, new_run_dir, read_json, result_path, run_name, settings_differ, write_json_atomic)  # the CLI's, from here)
from .report import duration, verdict_lines, write_comparison_report  # noqa: F401 (verdict_lines: part of this API)
from .runner import evaluate_start, train



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


def check_eval_samples(cfg: RunConfig) -> None:
    """``ValueError`` where a language-model run's evaluation samples fewer completions a problem than its group size:
    the report estimates the degenerate fraction at G from them. A study plan checks every arm with it before anything
    runs (issue 82: study 6's G = 8 arm was refused only after the G = 4 arm's start had been evaluated)."""
    if cfg.policy != "tabular" and cfg.eval_samples < cfg.group_size:
        raise ValueError(f"eval_samples ({cfg.eval_samples}) must be at least the group size ({cfg.group_size}): "
                         "the report estimates the degenerate fraction at G from the evaluation's samples")


def write_config(out: Path, estimators, seeds, base: RunConfig, command: str | None = None,
                 quick: bool = False) -> dict:
    if not list(estimators) or not list(seeds):
        raise ValueError("a comparison needs at least one estimator and one seed")
    for m in estimators:  # an unreadable method name fails here, before anything is trained
        base.with_run(m, 0).validate()
    if base.policy != "tabular":
        from .runner import run_dtype, train_precision

        run_dtype(base)  # bf16 that cannot train here (full fine-tuning, no bf16 on the device) fails before any work
    check_eval_samples(base)
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
    est = list(conf["estimators"])
    for m in estimators:  # another spelling of a method already there is that method
        if method_key(m) not in {method_key(x) for x in est}:
            est.append(m)
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
        conf["base"] = RunConfig(**conf["base"]).validate(here=False)  # reading needs no engine; training checks
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


MAX_RUN_SECONDS = 366 * 24 * 3600.0  # a run's training or evaluation time beyond a year is damage, not a time
FLOAT32_MAX = 3.4028234663852886e38  # what a float32 (or bf16) training step can log at most, in magnitude


def _is_number(x, low=None, high=None) -> bool:
    """Whether a value read from JSON is a finite number in ``[low, high]`` (:func:`grpo_lab._checks.as_number`'s
    rule, as a predicate)."""
    try:
        as_number("value", x, low=low, high=high)
    except (TypeError, ValueError):
        return False
    return True


def sampling_problem(ev: dict) -> str | None:
    """What is wrong with an evaluation's ``sampling`` record (how ``runner.evaluate`` sampled it), or None: a
    record is a table whose ``dtype`` names a dtype, whose ``distinct`` is a switch, whose ``truncated`` is a
    fraction and whose ``problem_of_draw`` gives each draw a problem. Issue 83: ``"sampling": "bfloat16"`` or a
    ``dtype`` of ``""`` was read as float32, so a bf16 run was pooled with float32 ones without a word."""
    if "sampling" not in ev:
        return None
    rec = ev["sampling"]
    if not isinstance(rec, dict):
        return f"sampling is {rec!r:.60}, not the sampler's record (a table)"
    if "dtype" in rec and not (isinstance(rec["dtype"], str) and rec["dtype"] in EVAL_DTYPES):
        return f"sampling.dtype is {rec['dtype']!r}, not one of {', '.join(EVAL_DTYPES)}"
    if "distinct" in rec and not isinstance(rec["distinct"], bool):
        return f"sampling.distinct is {rec['distinct']!r}, not true or false"
    if "truncated" in rec and not _is_number(rec["truncated"], 0, 1):
        return f"sampling.truncated is {rec['truncated']!r}, not a fraction"
    draws = rec.get("problem_of_draw")
    if draws is not None and not (isinstance(draws, list) and len(draws) == len(ev.get("correct") or [])
                                  and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in draws)):
        return "sampling.problem_of_draw does not give each draw a problem"
    return None


EVAL_DTYPES = ("float32", "bfloat16", "float16")  # what an evaluation can record it sampled in


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
    from .passk import pass_at_k

    for k, v in (pk or {}).items():  # issue 58: an in-range number that contradicts the file's own counts
        if not 1 <= int(k) <= n:
            return f"pass@{k} cannot be estimated from {n} samples per problem"
        own = float(np.mean(pass_at_k(n, np.asarray(correct), int(k))))
        if abs(float(v) - own) > 1e-6:
            return f"pass@{k} is {float(v):.6g}, but its own correct counts give {own:.6g}"
    if "grader" in ev and not isinstance(ev["grader"], str):
        return f"grader is {ev['grader']!r}, not a version string"
    bad = sampling_problem(ev)
    if bad:
        return bad
    if "validation" in ev:
        bad = evaluation_problems(ev["validation"])
        if bad:
            return f"its validation split: {bad}"
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
    for key in ("train_seconds", "eval_seconds"):  # issue 105: finite but impossible is damaged too
        if _is_number(res.get(key), 0) and res[key] > MAX_RUN_SECONDS:
            return f"{key} is {res[key]!r}, more than a year: not a run's time"
    for i, h in enumerate(hist):  # issue 58: a reward or share the report would average must be one
        for key in ("reward", "starvation/acr", "starvation/frac_nonzero_adv"):
            if key in h and not _is_number(h[key], 0, 1):
                return f"history step {i} has {key} {h[key]!r}, not a fraction between 0 and 1"
        for key, v in h.items():  # issue 105: no float32 training step logs a number beyond float32's range
            if isinstance(v, float) and math.isfinite(v) and abs(v) > FLOAT32_MAX:
                return f"history step {i} has {key} {v!r}, beyond any float32 value (damaged?)"
    steps = [h.get("step") for h in hist]
    if all(isinstance(x, int) and not isinstance(x, bool) for x in steps) and \
            any(b <= a for a, b in zip(steps, steps[1:])):  # a step logged twice would be averaged twice
        return f"its history repeats or reorders steps ({next(b for a, b in zip(steps, steps[1:]) if b <= a)})"
    if "eval_seconds" in res and not _is_number(res["eval_seconds"], 0):
        return f"eval_seconds is {res['eval_seconds']!r}, not a time"
    if "generation" in res and not isinstance(res["generation"], dict):
        return f"generation is {res['generation']!r}, not the engine's record (a table)"
    if "rank_probe" in res:
        probe = res["rank_probe"]
        if not isinstance(probe, dict) or not isinstance(probe.get("blocks"), list):
            return f"rank_probe is {str(probe)[:60]!r}, not a rank probe's record (a table with its blocks)"
        for which in ("start", "end"):
            if which in probe and not (isinstance(probe[which], list) and all(
                    isinstance(x, dict) and isinstance(x.get("by_estimator"), dict) for x in probe[which])):
                return f"its rank probe's {which} readings are damaged (a list of readings by estimator expected)"
    bad = evaluation_problems(res.get("eval"), simulated, problems)
    return f"its evaluation is damaged: {bad}" if bad else None


def recorded_fingerprint(cfg: dict) -> str:
    """The fingerprint of a run's recorded settings as the grpo-lab that wrote it computed it: over the fields it
    recorded (a field added since is not part of it; :func:`read_config` reads a config the same way)."""
    return fingerprint({k: v for k, v in shared_settings(cfg).items() if k in cfg})


def result_problem(res: dict, est: str, seed: int, shared: dict) -> str | None:
    """What keeps ``res`` from being run ``(est, seed)`` of the comparison whose shared settings are ``shared``
    (incomplete or damaged, another run's, other settings), or None when it is one: the check every result passes
    before a comparison reads it, and before ``study run --executor ray`` writes one that came back from a worker.
    A result too malformed to check raises (ValueError, KeyError, TypeError, AttributeError)."""
    cfg = res["config"]
    simulated = shared.get("policy") == "tabular"
    bad = result_problems(res, simulated, None if simulated else shared.get("eval_problems"))
    diff = differing_keys(shared_settings(cfg), shared)
    who = (method_key(cfg), cfg.get("seed"))
    if bad:
        return f"is incomplete or damaged ({bad})"
    if who != (method_key(est), seed) or diff:
        return (f"does not belong to this comparison ("
                f"{'; '.join(diff) if diff else f'it holds {method_name(cfg)} seed {who[1]}'})")
    return None


def _finished(path: Path, est: str, seed: int, shared: dict, echo) -> bool:
    """Whether ``path`` is a complete result of this comparison; a damaged or foreign one is moved aside, saying so."""
    if not path.is_file():
        return False
    try:
        why = result_problem(read_json(path, "results file"), est, seed, shared)
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        echo(f"{path} is damaged ({str(e).replace(str(path), path.name)[:160]}); moved aside to {_aside(path).name}; retraining {run_name(est, seed)}")
        return False
    if why is None:
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
    diff = settings_differ(stored["trainer_settings"], now)
    if diff:
        raise ValueError(f"this process would train under other trainer settings than the runs of {out} "
                         f"(recorded != now): {'; '.join(diff[:8])}. Resume it in a process with the same "
                         "libraries (a fresh kernel, without importing unsloth first), or start a new comparison")
    return stored["trainer_settings"]


def _say_other_graders(out: Path, start: dict, echo) -> None:
    """Name the finished runs (and the start evaluation) scored by another grader than this process's
    (:func:`grpo_lab.tasks.grader_version`): a resume goes on, and the report says so too."""
    from .tasks import grader_version

    now = grader_version()
    other = {} if start.get("grader") == now or not start.get("n_samples") else \
        {"start.json": start.get("grader") or "unrecorded"}
    for f in sorted((Path(out) / "results").glob("*.json")):
        try:
            ev = read_json(f, "results file").get("eval") or {}
        except (ValueError, AttributeError):
            continue  # a damaged file is _finished's to report
        g = ev.get("grader") or "unrecorded"
        if ev.get("n_samples") and g != now:  # the simulator's results grade no sample
            other[f.name] = g
    if other:
        echo(f"graded by another grader than this process's ({now}): "
             + ", ".join(f"{name} ({g})" for name, g in other.items())
             + "; the report will say so (the grader's code changed since they were scored)")


def run_comparison(out: Path, conf: dict, progress: bool = True, echo=print) -> Path:
    """Train every missing (estimator, seed) run of ``conf`` into ``out``; then write plots and the report."""
    out = Path(out)
    with DirLock(out):
        return _run_comparison(out, conf, progress, echo)


def prepare(out: Path, conf: dict, echo=print) -> tuple[dict, dict | None]:
    """What every run of a comparison directory needs before it trains, done once by the process that holds the
    directory's lock: its ``results/`` and ``metrics/`` folders, the start's evaluation (``start.json``, evaluated
    again when damaged) and the trainer settings its runs must share. Returns ``(start, expected trainer
    settings)``. ``grpo-lab compare`` and ``grpo-lab study run`` both start here."""
    base: RunConfig = conf["base"]
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
    _say_other_graders(out, start, echo)
    return start, expected


def is_finished(out: Path, base: RunConfig, est: str, seed: int, echo=print) -> bool:
    """Whether run ``(est, seed)`` of the comparison in ``out`` has a complete result of these settings (a damaged
    or foreign file is moved aside, saying so, and the run counts as missing)."""
    return _finished(result_path(out, est, seed), est, seed, shared_settings(base), echo)


def train_run(out: Path, base: RunConfig, est: str, seed: int, start: dict, expected: dict | None,
              progress: bool = True, callbacks=()) -> Path:
    """Train one run of a comparison and write its result (atomically, with the settings' fingerprint): the one
    place a comparison's run is trained, for ``grpo-lab compare`` and ``grpo-lab study run``. The caller holds
    the directory's lock or the run's own (:func:`grpo_lab.study`), and has called :func:`prepare`."""
    out = Path(out)
    res = trained_result(out, base, est, seed, start, expected, progress, callbacks)
    return write_json_atomic(result_path(out, est, seed), res)


def trained_result(out: Path, base: RunConfig, est: str, seed: int, start: dict, expected: dict | None,
                   progress: bool = True, callbacks=()) -> dict:
    """:func:`train_run` up to its result, not written: trained with its metrics (and checkpoints) under ``out``,
    the trainer settings checked against ``expected``, the settings' fingerprint added. ``study run --executor
    ray`` calls it on a worker, in a directory of the worker's own, and sends the result back."""
    out = Path(out)
    cfg = base.with_run(est, seed)
    name = run_name(est, seed)
    jsonl = metrics_path(out, est, seed)
    work = out / "checkpoints" / name if base.save_steps else None
    if work is None:
        jsonl.unlink(missing_ok=True)  # an interrupted run starts over
    res = train(cfg, work, jsonl_path=jsonl, progress=progress, start=start, callbacks=callbacks)
    diff = settings_differ(expected or {}, res.get("trainer_settings") or {}) if expected is not None else []
    if diff:
        raise ValueError(f"run {name} trained under other trainer settings than this comparison records "
                         f"(recorded != this run): {'; '.join(diff[:8])}; its result is not kept. Something "
                         "changed the trainer's configuration after it was built (a library patch?)")
    res["fingerprint"] = fingerprint(shared_settings(base))
    return res


def pace_line(first_s: float, then_s: float | None, steps: int, runs_left: int, eval_s: float | None,
              where: str, workers: int = 1, advice: bool = True, probed: tuple[int, float] | None = None) -> str:
    """What the first steps of a comparison's first run say about the whole, on this machine (issue 61: a
    ``--quick`` run took 15 minutes on one machine and 7 on another): the training time per run from the first
    step and the next (``then_s``; None when the run has one step), the evaluation time from the start's own
    evaluation in this process (``eval_s``; None when it was read from disk), the total for ``runs_left`` runs,
    and what to pass for a shorter one. ``where``: the machine's path (device, threads, dtype); ``workers``: the
    processes sharing the runs left (``study run --workers``); ``advice=False``: no flags to shorten it (a study's
    plan fixes its runs). ``probed``: ``(n, seconds)`` where a rank probe (``RunConfig.rank_probe``) reads ``n``
    of the steps, the first included, at ``seconds`` a step after the first; ``then_s`` is then an unprobed
    step's. Study 6's first 6 steps are probed, each about 3 times an unprobed step: read from the first two,
    the line forecast 111 min of training for a run that trained in 35 (grpo-g8, seed 1); counted apart, about
    45 min, the rest being completions that shorten as training goes."""
    n_probed, probe_s = probed if probed else (1, first_s)
    per_run = first_s + (n_probed - 1) * probe_s + (steps - n_probed) * (then_s if then_s is not None else first_s)
    steps_text = f"first step {first_s:.1f} s" + (
        f", the rank probe's other {n_probed - 1} step{'s' * (n_probed != 2)} {probe_s:.1f} s each"
        if probed and n_probed > 1 else "") + (f", then {then_s:.1f} s a step" if then_s is not None else "")
    total = (per_run + (eval_s or 0.0)) / max(1, workers)
    line = (f"pace on this machine ({where}): {steps_text}, so about {duration(per_run)} of training per run"
            + (f" and {duration(eval_s)} of evaluation (as long as the start's took here)" if eval_s is not None else
               " (evaluation not included: the start's evaluation was not timed in this process)")
            + f"; about {duration(total * runs_left)} for the {runs_left} run{'s' * (runs_left != 1)} left"
            + (f" across {workers} workers" if workers > 1 else "") + ", training and evaluation")
    if advice and total * runs_left > 600 and steps > 1:  # more than ten minutes: say what would shorten it
        line += (f". Shorter: --steps {max(1, steps // 2)} halves the training, fewer --seeds or --estimators cut "
                 "whole runs, --eval-problems scales the evaluation")
    return line


def pace_callback(base: RunConfig, runs_left: int, eval_s: float | None, echo, workers: int = 1, advice: bool = True,
                  clock=None):
    """A TrainerCallback that echoes :func:`pace_line` once, after the first run's second step (or its only one);
    under a rank probe whose start window leaves later steps unprobed, after the first unprobed step, so that the
    forecast reads both kinds of step. ``clock``: seconds now (default ``time.perf_counter``; a test's fake)."""
    clock = clock or time.perf_counter

    import torch
    from transformers import TrainerCallback

    from .runner import run_dtype, train_precision

    w = int(base.rank_probe or 0)
    probed = set(range(w)) | set(range(base.steps - w, base.steps)) if w else set()
    # read after the first unprobed step where the probe covers the first steps (one step is the whole run's pace
    # only where every step costs alike), else after the second step as before
    unprobed = w if w and w < base.steps - w else None
    last = unprobed + 1 if unprobed is not None else min(2, base.steps)

    class Pace(TrainerCallback):
        def __init__(self):
            self.stamps = []

        def on_step_begin(self, args, state, control, **kw):
            if not self.stamps:
                self.stamps.append(clock())

        def on_step_end(self, args, state, control, **kw):
            self.stamps.append(clock())
            if len(self.stamps) == last + 1:
                gaps = [b - a for a, b in zip(self.stamps, self.stamps[1:])]
                device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "CPU"
                dtype, why = run_dtype(base)
                where = (f"{device}, {torch.get_num_threads()} torch thread(s), {dtype} weights ({why}), "
                         f"training in {train_precision()[1]}")
                if unprobed is not None:
                    probe = (len(probed), float(np.mean(gaps[1:w])) if w > 1 else gaps[0])
                    echo(pace_line(gaps[0], gaps[w], base.steps, runs_left, eval_s, where, workers, advice, probe))
                else:
                    echo(pace_line(gaps[0], gaps[1] if len(gaps) > 1 else None, base.steps, runs_left, eval_s,
                                   where, workers, advice))

    return Pace()


def _run_comparison(out: Path, conf: dict, progress: bool, echo) -> Path:
    base: RunConfig = conf["base"]
    evaluated_here = not (out / "start.json").is_file()
    t0 = time.perf_counter()
    start, expected = prepare(out, conf, echo)
    start_s = time.perf_counter() - t0 if evaluated_here else None
    # seed by seed, every method within a seed: an interrupted comparison then holds every method at the
    # same number of seeds (the runs are independent, so the order changes no result)
    todo = [(e, s) for s in conf["seeds"] for e in conf["estimators"] if not is_finished(out, base, e, s, echo)]
    total = len(conf["estimators"]) * len(conf["seeds"])
    if len(todo) < total:
        echo(f"resuming: {total - len(todo)} of {total} runs already finished in {out}")
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(todo), desc="runs", unit="run")
    for i, (est, seed) in enumerate(todo):
        pace = (pace_callback(base, len(todo), start_s, echo),) if i == 0 and base.policy != "tabular" else ()
        train_run(out, base, est, seed, start, expected, progress, callbacks=pace)
        if bar is not None:
            bar.update(1)
            bar.set_postfix_str(f"last: {run_name(est, seed)}")
    if bar is not None:
        bar.close()
    return write_report(out, conf)


def load_results(out: Path, conf: dict, partial: bool = False, skipped: list | None = None) -> dict:
    """``{estimator: [result per seed]}``; a missing run is an error naming it (``partial=True``: left out).

    Every file is checked as ``--resume`` checks it (:func:`result_problems`, and that it holds the method and
    seed its name says): with ``partial=True`` (the interim report) a file that fails is left out and
    ``(file, why)`` appended to ``skipped``; otherwise it is an error naming it."""
    res = {}
    shared = shared_settings(conf["base"])
    simulated = shared.get("policy") == "tabular"
    for e in conf["estimators"]:
        for s in conf["seeds"]:
            path = result_path(out, e, s)
            if not path.is_file() and partial:
                continue
            if not path.is_file():
                raise FileNotFoundError(f"run {run_name(e, s)} has not finished; resume the comparison first")
            try:
                r = read_json(path, "results file")
                why = result_problem(r, e, s, shared)  # issue 83: settings too (another generation engine...)
                if why is None and "fingerprint" in r and r["fingerprint"] != recorded_fingerprint(r["config"]):
                    why = (f"its fingerprint {r['fingerprint']!r} does not match its own settings "
                           f"({recorded_fingerprint(r['config'])}): edited after it was written?")
            except (ValueError, KeyError, TypeError, AttributeError) as err:
                why = str(err).replace(str(path), path.name)[:160]  # the path is named once, outside
            if why is not None:
                if not partial:
                    raise ValueError(f"{path} cannot be reported ({why}); resume the comparison to retrain it")
                if skipped is not None:
                    skipped.append((path.name, why))
                continue
            res.setdefault(e, []).append(r)
    named = {f"{method_name(r['config'])} seed {r['config'].get('seed')}": eval_dtype_of(r)
             for rs in res.values() for r in rs}
    if (Path(out) / "start.json").is_file():
        named["the start (start.json)"] = eval_dtype_of(read_json(Path(out) / "start.json", "start evaluation"), True)
    check_eval_dtypes(named)
    return res


def write_report(out: Path, conf: dict, interim: bool = False) -> Path:
    """``report.md`` with its plots and ``metrics.jsonl``, once every run has finished
    (:func:`grpo_lab.report.write_comparison_report`).

    ``interim=True`` (``grpo-lab compare --interim-report DIR``): the same from the runs finished so far, written
    to ``DIR/interim/`` (so ``report.md`` still appears only when the comparison is complete), opening with how
    many runs it holds and how to resume. It reads only finished, atomically written results files, so it can
    run while another process trains the comparison.
    """
    skipped: list = []
    results = load_results(out, conf, partial=interim, skipped=skipped)
    return write_comparison_report(out, conf, results, interim, skipped=skipped)


def command_line() -> str:
    return " ".join(["grpo-lab"] + sys.argv[1:])
