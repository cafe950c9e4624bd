"""A study-3 run, timed part by part, and its evaluation through today's path and the fast one (issue 61).

    python benchmarks/bench_study_run.py train OUT                 # trains the runs below, keeps their adapters
    python benchmarks/bench_study_run.py eval OUT --dtype float32  # today's evaluation of each kept adapter
    python benchmarks/bench_study_run.py eval OUT --dtype bfloat16 --distinct   # the fast one
    python benchmarks/bench_study_run.py summary OUT               # the table and the float32/bf16 agreement

Every run is study 3's (``docs/results/smollm2-study3``: its arm's ``config.json``, the same seed), so the
adapter trained here is study 3's own run again: ``train`` says whether its per-step rewards equal the tracked
result's. Each phase writes one JSON per run (``OUT/<run>.train.json``, ``OUT/<run>.eval-<path>.json``) as it
finishes and skips what is there, so an interrupted phase resumes. One torch thread per process (study 3's);
two phases may run side by side on a 2-core machine, and ``summary`` says what ran beside what only as far as
the files record the load average.

Training is timed by TRL's own profiling contexts (generation, weight hand-over, rewards, the log-prob passes,
the loss) and the rest of each step (backward, optimizer). Evaluation is timed apart: the engine's start, the
weight hand-over and canary, the test split and the validation split.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

from machine import machine as describe_machine  # benchmarks/machine.py

STUDY3 = Path(__file__).resolve().parents[1] / "docs" / "results" / "smollm2-study3" / "runs"
RUNS = (("learning_rate=0.0003", "sign", 0), ("learning_rate=0.0003", "drgrpo", 0),
        ("learning_rate=0.0003", "sign", 1), ("learning_rate=0.0003", "drgrpo", 1))


def _name(directory: str, method: str, seed: int) -> str:
    return f"{directory.replace('=', '')}-{method}-seed{seed}"


def _config(directory: str, method: str, seed: int):
    from grpo_lab.compare import read_config

    return read_config(STUDY3 / directory)["base"].with_run(method, seed)


def _write(path: Path, obj) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(obj, indent=1))
    tmp.replace(path)


class _Profile:
    """Seconds per TRL profiling name, summed over a run (TRL sends them to W&B and the like only)."""

    def __enter__(self):
        from trl.extras import profiling

        self.seconds = defaultdict(float)
        self.calls = defaultdict(int)
        self._orig = profiling.ProfilingContext._log_metrics
        prof = self

        def log(ctx, duration):
            prof.seconds[ctx.name] += duration
            prof.calls[ctx.name] += 1

        profiling.ProfilingContext._log_metrics = log
        return self

    def __exit__(self, *exc):
        from trl.extras import profiling

        profiling.ProfilingContext._log_metrics = self._orig


def train(out: Path) -> None:
    import torch

    from grpo_lab.runner import apply_threads, train as train_run

    for directory, method, seed in RUNS:
        name = _name(directory, method, seed)
        if (out / f"{name}.train.json").is_file():
            continue
        cfg = _config(directory, method, seed)
        apply_threads(cfg.threads)
        machine = describe_machine()
        with _Profile() as prof:
            res = train_run(cfg, return_model=True, evaluate_after=False)
        model = res.pop("model")
        res.pop("tokenizer")
        model.save_pretrained(out / "adapters" / name)
        tracked = json.loads((STUDY3 / directory / "results" / f"{method}-seed{seed}.json").read_text())
        mine, theirs = [h.get("reward") for h in res["history"]], [h.get("reward") for h in tracked["history"]]
        steps = [h.get("step_time") for h in res["history"] if h.get("step_time") is not None]
        _write(out / f"{name}.train.json", dict(
            run=name, machine=machine, load_avg_after=os.getloadavg(), train_seconds=res["train_seconds"],
            steps=res["steps_done"], completions=res["completions"], step_seconds=steps,
            profile=dict(prof.seconds), profile_calls=dict(prof.calls), generation=res["generation"],
            rewards=mine, same_rewards_as_study3=mine == theirs,
            reward_steps_equal=sum(a == b for a, b in zip(mine, theirs)),
            study3_train_seconds=tracked["train_seconds"], study3_eval_seconds=tracked.get("eval_seconds"),
            threads=torch.get_num_threads()))
        print(f"{name}: trained in {res['train_seconds']:.0f} s; rewards equal to study 3's: {mine == theirs}",
              flush=True)
        del model



def evaluate(out: Path, dtype: str, distinct: bool, wait: bool = False) -> None:
    """Evaluate every kept adapter with ``eval_dtype=dtype`` (and ``eval_distinct``) through the library's own
    ``evaluate_policy``, timing the engine's start (once per process, as a worker pays it), each split and the
    whole; the engine's start is timed apart (a worker pays it once). ``wait``: evaluate each adapter as its
    training finishes, until every run's is done."""
    from grpo_lab import runner

    path = f"{dtype}{'-distinct' if distinct else ''}"
    calls = []
    plain = runner.evaluate

    def timed(*a, **k):
        t = time.perf_counter()
        ev = plain(*a, **k)
        calls.append(dict(problems=len(a[2]), seconds=time.perf_counter() - t))
        return ev

    runner.evaluate = timed
    def done(r) -> bool:
        return (out / f"{_name(*r)}.eval-{path}.json").is_file()

    while wait and not all(done(r) for r in RUNS):
        if not any((out / f"{_name(*r)}.train.json").is_file() and not done(r) for r in RUNS):
            time.sleep(30)  # the next adapter is still training
            continue
        _evaluate_present(out, dtype, distinct, path, calls)
    _evaluate_present(out, dtype, distinct, path, calls)


def _evaluate_present(out: Path, dtype: str, distinct: bool, path: str, calls: list) -> None:
    import resource
    from dataclasses import replace

    from peft import PeftModel

    from grpo_lab import runner
    from grpo_lab.generation import get_engine

    for directory, method, seed in RUNS:
        name = _name(directory, method, seed)
        target = out / f"{name}.eval-{path}.json"
        if target.is_file() or not (out / f"{name}.train.json").is_file():  # written after the adapter
            continue
        cfg = replace(_config(directory, method, seed), eval_dtype=dtype, eval_distinct=distinct)
        runner.apply_threads(cfg.threads)
        machine = describe_machine()
        base, tok, _ = runner.policy_adapter(cfg).load(cfg, lora=False)
        model = PeftModel.from_pretrained(base, out / "adapters" / name)
        t = time.perf_counter()
        get_engine(cfg.generation)._engine(model, runner.resolve_eval_dtype(cfg)[0])
        start_s = time.perf_counter() - t
        calls.clear()
        t = time.perf_counter()
        ev = runner.evaluate_policy(model, tok, cfg)
        total = time.perf_counter() - t
        _write(target, dict(run=name, path=path, machine=machine, load_avg_after=os.getloadavg(),
                            engine_start_seconds=start_s, eval_seconds=total, splits=list(calls),
                            peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                            sampling=ev["sampling"], pass1=ev["pass_at_k"][1], greedy=ev["greedy"],
                            correct=ev["correct"], n_samples=ev["n_samples"],
                            validation=dict(correct=ev["validation"]["correct"],
                                            pass1=ev["validation"]["pass_at_k"][1])))
        print(f"{name} [{path}]: engine start {start_s:.0f} s, evaluation {total:.0f} s, pass@1 "
              f"{ev['pass_at_k'][1]:.3f}", flush=True)
        del model, base



def _load(out: Path, pattern: str) -> dict:
    loaded = [json.loads(f.read_text()) for f in sorted(out.glob(pattern))]
    return {r["run"]: r for r in loaded}


def paired(diffs, prompts) -> tuple[float, float, float]:
    """Mean of per-draw differences with a 95% interval that treats the draws of one problem as one cluster
    (their samples share a problem; with ``--distinct`` they share the samples too): Student's t with one
    fewer degrees of freedom than there are problems."""
    import numpy as np
    from scipy import stats

    d = np.asarray(diffs, dtype=float)
    keys = sorted(set(prompts))
    index = {k: i for i, k in enumerate(keys)}
    c = np.array([index[p] for p in prompts])
    m = d.mean()
    sums = np.bincount(c, weights=d - m, minlength=len(keys))
    k = len(keys)
    se = float(np.sqrt(k / (k - 1) * np.sum(sums ** 2)) / d.size)
    half = float(stats.t.ppf(0.975, k - 1) * se)
    return float(m), float(m - half), float(m + half)


def summary(out: Path) -> dict:
    """The timing table (training split by TRL's profiling names; evaluation per path) and the agreement of
    bfloat16 with float32 on the same adapters, paired by draw, clustered by problem."""
    import numpy as np

    from grpo_lab.runner import eval_problems, validation_problems

    trains = _load(out, "*.train.json")
    paths = {p: _load(out, f"*.eval-{p}.json") for p in ("float32", "bfloat16", "bfloat16-distinct")}
    lines = ["| run | training s | vLLM generation | weight hand-over | loss forward + other scoring | rest (backward, optimizer, callbacks) |"
             " eval float32 s | eval bf16 s | eval bf16 distinct s | rewards = study 3's |", "|" + "---|" * 10]
    for name, t in trains.items():
        prof = {k.split("GRPOTrainer.", 1)[-1]: v for k, v in t["profile"].items()}  # "<Trainer>.vLLM.generate"
        gen, sync = prof.get("vLLM.generate", 0.0), prof.get("sync_weights", 0.0)
        fwd = prof.get("compute_loss", 0.0)
        prep = prof.get("_prepare_inputs", 0.0)
        rest = t["train_seconds"] - prep - fwd
        ev = [paths[p].get(name, {}).get("eval_seconds") for p in paths]
        same = "yes" if t["same_rewards_as_study3"] else f"{t['reward_steps_equal']} of {t['steps']} steps"
        lines.append(f"| {name} | {t['train_seconds']:.0f} | {gen:.0f} | {sync:.0f} | {fwd:.0f} + "
                     f"{prep - gen - sync:.0f} in scoring | {rest:.0f} | "
                     + " | ".join("–" if e is None else f"{e:.0f}" for e in ev) + f" | {same} |")
    print("\n".join(lines))
    result = dict(table=lines)
    # the per-run figure: training + evaluation (+ the evaluation engine's start, once per worker of 22 runs)
    med = lambda xs: float(np.median(xs)) if xs else None  # noqa: E731
    tr = med([t["train_seconds"] for t in trains.values()])
    for p, evs in paths.items():
        e = med([v["eval_seconds"] for v in evs.values()])
        s = med([v["engine_start_seconds"] for v in evs.values()])
        if tr and e:
            result[p] = dict(train=tr, eval=e, engine_start=s, per_run=tr + e + (s / 22 if p != "float32" else 0))
            print(f"{p}: training {tr:.0f} s + evaluation {e:.0f} s (engine start {s:.0f} s once per worker) "
                  f"= {result[p]['per_run']:.0f} s a run")
    if "float32" in result:
        for p in ("bfloat16", "bfloat16-distinct"):
            if p in result:
                result[f"ratio {p}"] = result["float32"]["per_run"] / result[p]["per_run"]
                print(f"ratio today / {p}: {result[f'ratio {p}']:.2f}x per run")
    # agreement: bfloat16 against float32 on the same adapters
    both = [n for n in paths["float32"] if n in paths["bfloat16"]]
    if both:
        cfg = _config(*RUNS[0])
        test = [p.prompt for p in eval_problems(cfg)]
        val = [p.prompt for p in validation_problems(cfg)]
        per, d_by = {}, {}
        for n in both:
            a, b = paths["float32"][n], paths["bfloat16"][n]
            d = (np.asarray(b["correct"]) - np.asarray(a["correct"])) / a["n_samples"]
            d_by[n] = d
            per[n] = dict(test=paired(d, test), f32=a["pass1"], bf16=b["pass1"],
                          validation=paired((np.asarray(b["validation"]["correct"])
                                             - np.asarray(a["validation"]["correct"])) / a["n_samples"], val))
            m, lo, hi = per[n]["test"]
            print(f"{n}: pass@1 float32 {a['pass1']:.3f}, bfloat16 {b['pass1']:.3f}; difference {m:+.4f} "
                  f"[{lo:+.4f}, {hi:+.4f}] (paired by draw, clustered by problem)")
        methods = sorted({n.split("-")[1] for n in both})
        if len(methods) == 2:
            arm = {m: np.mean([d_by[n] for n in both if n.split("-")[1] == m], axis=0) for m in methods}
            did = paired(arm["sign"] - arm["drgrpo"], test)
            per["difference of differences (sign - drgrpo)"] = did
            print(f"(sign - drgrpo) in bfloat16 minus in float32: {did[0]:+.4f} [{did[1]:+.4f}, {did[2]:+.4f}]")
        result["agreement"] = per
    dist = [n for n in paths["bfloat16"] if n in paths["bfloat16-distinct"]]
    if dist:
        cfg = _config(*RUNS[0])
        test = [p.prompt for p in eval_problems(cfg)]
        result["distinct"] = {}
        for n in dist:
            a, b = paths["bfloat16"][n], paths["bfloat16-distinct"][n]
            res = paired((np.asarray(b["correct"]) - np.asarray(a["correct"])) / a["n_samples"], test)
            result["distinct"][n] = res
            print(f"{n}: bfloat16 pass@1 a sample per draw {a['pass1']:.3f}, each problem once {b['pass1']:.3f}; "
                  f"difference {res[0]:+.4f} [{res[1]:+.4f}, {res[2]:+.4f}]")
    _write(out / "summary.json", result)
    return result


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("phase", choices=("train", "eval", "summary"))
    ap.add_argument("out", type=Path)
    ap.add_argument("--dtype", choices=("float32", "bfloat16"), default="float32")
    ap.add_argument("--distinct", action="store_true", help="each distinct problem sampled once (the fast path)")
    ap.add_argument("--wait", action="store_true", help="evaluate each adapter as its training finishes")
    a = ap.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    {"train": lambda: train(a.out), "eval": lambda: evaluate(a.out, a.dtype, a.distinct, a.wait),
     "summary": lambda: summary(a.out)}[a.phase]()


if __name__ == "__main__":
    sys.exit(main())
