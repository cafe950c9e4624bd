"""The ``grpo-lab`` command line: ``compare`` (the starvation experiment end to end) and ``inspect`` (an existing run)."""

from __future__ import annotations

import argparse
import signal
import sys
from dataclasses import asdict
from pathlib import Path

from .advantages import ESTIMATORS
from .config import RunConfig, cli_fields, gsm8k_config
from .tasks import TASKS

DEFAULT_ESTIMATORS = ("grpo", "drgrpo", "rloo", "sign", "avspo", "dapo")
# --quick: what the tests run; about half a minute on 2 CPU cores (measured 2026-11-22)
QUICK = dict(estimators=("grpo", "sign"), seeds=(0, 1), steps=8, prompts_per_step=8, eval_problems=40,
             eval_samples=8, train_problems=500)


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
    bad = [x for x in out if x not in ESTIMATORS]
    if bad:
        raise UsageError(f"unknown estimator(s) {', '.join(bad)}; choose from {', '.join(ESTIMATORS)}")
    if len(set(out)) != len(out):
        raise UsageError(f"--estimators lists one twice: {text!r}")
    return out


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="grpo-lab", description="Gradient starvation in GRPO under binary rewards.")
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("compare", help="train every estimator x seed under one config and write a report",
                       description="Train every estimator and seed with TRL's GRPOTrainer under the same settings, "
                                   "then write runs/<timestamp>/report.md with plots and metrics.jsonl.")
    c.add_argument("--estimators", default=None,
                   help=f"comma-separated, from {', '.join(ESTIMATORS)} (default: {','.join(DEFAULT_ESTIMATORS)})")
    c.add_argument("--seeds", default=None, help="comma-separated seeds (default: 0,1,2)")
    for f, flag in cli_fields():  # one option per documented RunConfig field marked cli
        extra = {"choices": tuple(TASKS)} if f.name == "task" else {}
        names = (flag, "-G") if f.name == "group_size" else (flag,)
        c.add_argument(*names, dest=f.name, type=type(f.default), default=None, metavar=f.name.upper(),
                       help=f"{f.metadata['help']} (default: {f.default})", **extra)
    c.add_argument("--quick", action="store_true", help="a smoke profile of about half a minute on 2 CPU cores (2 estimators, 2 seeds, 8 steps)")
    c.add_argument("--out", type=Path, default=Path("runs"), help="parent directory of the run (default: runs)")
    c.add_argument("--resume", type=Path, default=None, metavar="DIR",
                   help="finish an interrupted comparison in DIR with its own settings")
    c.add_argument("--no-progress", action="store_true", help="no progress bars")
    i = sub.add_parser("inspect", help="did an existing GRPO run starve? write a starvation report",
                       description="Read a TRL output directory / trainer_state.json, a grpo-lab metrics.jsonl "
                                   "(or comparison directory), or a W&B / TensorBoard CSV export, and write a "
                                   "starvation report with plots.")
    i.add_argument("path", type=Path)
    i.add_argument("--out", type=Path, default=None, help="report directory (default: <run dir>/starvation)")
    i.add_argument("--group-size", "-G", type=int, default=None,
                   help="G of the run, for the implied per-prompt success distribution (TRL does not log it)")
    return p


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
    if a.resume is not None:
        given = [flag for name, flag in options.items() if getattr(a, name) is not None]
        given += [f"--{k}" for k in ("estimators", "seeds") if getattr(a, k) is not None] + \
            (["--quick"] if a.quick else [])
        if given:
            raise UsageError(f"--resume takes its settings from {a.resume}/config.json; drop {', '.join(given)}")
        conf = read_config(a.resume)
        out = a.resume
    else:
        prof = QUICK if a.quick else {}
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
        for name in options:
            if getattr(a, name) is not None:
                setattr(base, name, getattr(a, name))
        base.validate()
        out = new_run_dir(a.out)
        conf = write_config(out, estimators, seeds, base, command=command_line())
        conf["base"] = base
    n = len(conf["estimators"]) * len(conf["seeds"])
    print(f"grpo-lab compare: {n} runs ({', '.join(conf['estimators'])} x seeds {conf['seeds']}) -> {out}")
    if len(conf["seeds"]) < 2:
        print("note: with one seed there are no confidence intervals; the report cannot separate estimators. "
              "Use --seeds with at least 2 seeds for intervals.")
    previous = signal.signal(signal.SIGTERM, _terminated)  # SIGTERM ends a run like Ctrl-C: cleanly, resumable
    try:
        report = run_comparison(out, conf, progress=not a.no_progress)
    except (KeyboardInterrupt, _Terminated) as e:
        print(f"\n{'terminated' if isinstance(e, _Terminated) else 'interrupted'}: finished runs are kept in "
              f"{out}/results; no report was written.\nresume with: grpo-lab compare --resume {out}", file=sys.stderr)
        return 143 if isinstance(e, _Terminated) else 130
    finally:
        signal.signal(signal.SIGTERM, previous)
    print(f"report: {report}")
    return 0


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


def main(argv=None) -> int:
    parser = build_parser()
    a = parser.parse_args(argv)
    try:
        if a.command == "compare":
            return _compare(a)
        if a.command == "inspect":
            return _inspect(a)
    except (UsageError, ValueError, FileNotFoundError, RuntimeError, OSError) as e:
        parser.exit(2, f"grpo-lab {a.command}: error: {e}\n")
    return 1  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main())
