"""One run, whatever the policy and the task: :func:`train` (notebooks 05, 06, 08 and ``grpo-lab compare``).

``train(cfg)`` looks up the policy adapter for ``cfg.policy`` and returns one result schema::

    config          the RunConfig, as a dict
    history         per logged step: step, reward, frac_reward_zero_std, grad_norm, loss, starvation/...,
                    update/step_norm and update/from_start, kl and kl/* (with a KL penalty), avspo/* (AVSPO's
                    gate per step: threshold, active, k)
    eval            greedy, greedy_by_level, n_samples, correct (per problem), levels, pass_at_k {k: mean}
    train_seconds, backend, backend_why, weights, device, threads, dtype (the weights' dtype), dtype_why
    completions       training completions generated (with dynamic sampling, every round's)
    generated         completions, new tokens, groups, kept groups, rounds, generation batches, prompts skipped
    steps_done        optimizer steps taken (fewer than ``steps`` when ``budget_completions`` stopped the run)
    trainer_settings  every GRPOConfig field that can change the run, as the trainer saw it (after any patching)

Language models (the tiny LM, or any causal LM by directory / hub id) are trained through
TRL's real ``GRPOTrainer`` (:func:`grpo_lab.trl.trainer_class`), with ``GRPOConfig`` built in
one place (:func:`grpo_args`), everything else held fixed by the config: the starting weights,
the prompts, the optimizer (TRL's default AdamW, constant learning rate), clipping, batch,
steps and the evaluation set. ``policy="tabular"`` runs the simulator of notebook 04 instead.
A new policy kind = one adapter class registered with :func:`register_policy`.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Callable

import numpy as np

from .config import RunConfig, method_name
from .sampling import get_sampling
from .passk import KS, pass_at_k_of  # noqa: F401 (KS: runner.KS, as before)

HISTORY_KEYS = ("step", "reward", "reward_std", "frac_reward_zero_std", "grad_norm", "loss", "entropy", "step_time",
                "learning_rate", "kl")


# ----------------------------------------------------------------------------- evaluation

def evaluate(model, tokenizer, problems, n_samples: int = 16, seed: int = 5, max_new_tokens: int = 6,
             batch_size: int = 256, generation: str = "transformers", generation_dtype: str | None = None,
             distinct: bool = False) -> dict:
    """Greedy accuracy (overall, per level), correct counts out of ``n_samples`` per problem (temperature 1),
    and the unbiased pass@k they give (for every k in 1, 2, 4, 8, 16 up to ``n_samples``); sampled by the
    ``generation`` engine (:mod:`grpo_lab.generation`: vLLM gets the model's weights once, checked) in
    ``generation_dtype`` (None: the model's).

    ``distinct``: each distinct prompt is sampled once (greedy and ``n_samples``) and every draw of it gets those
    counts, so ``correct`` still has one entry per draw and every mean over draws estimates what it did (issue
    61); the draws of one problem then share their samples, so the evaluation's own sampling noise is larger
    than with a sample per draw. ``ev["sampling"]`` records the engine, the dtype that sampled, ``distinct``, the
    prompts sampled, the share of sampled completions cut at ``max_new_tokens`` (``truncated``) and, with
    ``distinct``, each draw's distinct problem (``problem_of_draw``: the start's sampling error is counted by
    problem, issue 80)."""
    from .generation import _dtype_of, get_engine
    from .tasks import grade, grader_version

    if distinct:  # the first draw of each prompt, in order of first appearance; each draw's place among them
        first = {}
        for p in problems:
            first.setdefault(p.prompt, p)
        index = {prompt: i for i, prompt in enumerate(first)}
        unique, where = list(first.values()), [index[p.prompt] for p in problems]
    else:
        unique, where = list(problems), list(range(len(problems)))
    prompts = [p.prompt for p in unique]
    sample = get_engine(generation).sampler(model, tokenizer, batch_size=batch_size, dtype=generation_dtype)
    greedy_u = sample(prompts, 1, temperature=0, max_new_tokens=max_new_tokens)
    cut_u: list = []  # per prompt, whether each sampled completion stopped at max_new_tokens
    sampled_u = sample(prompts, n_samples, seed=seed, max_new_tokens=max_new_tokens, truncated=cut_u)
    greedy, sampled = [greedy_u[i] for i in where], [sampled_u[i] for i in where]
    g = np.array([grade(c[0], p) for c, p in zip(greedy, problems)], dtype=float)
    counts = [int(sum(grade(c, p) for c in cs)) for cs, p in zip(sampled, problems)]
    levels = np.array([p.level for p in problems])
    ev = dict(greedy=float(g.mean()),
              greedy_by_level={int(lv): float(g[levels == lv].mean()) for lv in sorted(set(levels.tolist()))},
              n_samples=n_samples, correct=counts, levels=levels.tolist(), grader=grader_version(),
              signatures=sample_signatures(tokenizer, sampled, problems),
              sampling=dict(engine=generation, dtype=generation_dtype or _dtype_of(model), distinct=bool(distinct),
                            prompts_sampled=len(prompts)))
    if len(cut_u) == len(prompts):  # the share of sampled completions cut at the limit, over draws (issue 80)
        ev["sampling"]["truncated"] = float(np.mean([x for i in where for x in cut_u[i]]))
    if distinct:  # each draw's distinct problem: the draws of one share their samples (grpo_lab.study.measures)
        ev["sampling"]["problem_of_draw"] = where
    ev["pass_at_k"] = pass_at_k_of(ev, KS)
    return ev


def sample_signatures(tokenizer, sampled, problems) -> dict:
    """Over every sampled completion of an evaluation: the mean length in tokens and the shares that answer, repeat
    a number of the prompt as their answer, and answer without working (:func:`grpo_lab.tasks.signatures`; the
    shortcut signs of issue 39, lesson 14)."""
    from .tasks import signatures

    flat = [(c, p) for cs, p in zip(sampled, problems) for c in cs]
    if not flat:
        return {}
    sig = [signatures(c, p) for c, p in flat]
    out = {k: float(np.mean([x[k] for x in sig])) for k in ("answered", "repeats_prompt", "no_working")}
    out["length_mean"] = float(np.mean([len(tokenizer(c, add_special_tokens=False)["input_ids"]) for c, _ in flat]))
    return out


def resolve_eval_dtype(cfg: RunConfig) -> tuple[str | None, str]:
    """``(dtype, why)`` vLLM samples a run's evaluations in (``cfg.eval_dtype``; issue 61): None when it is the
    rollouts' (``generation_dtype``, else the weights'), as before the setting existed; ``auto``: bfloat16 where
    this device computes in it natively (:func:`grpo_lab.policy.resolve_dtype` with nothing to train), else
    float32, saying why."""
    from .policy import resolve_dtype

    if cfg.eval_dtype is None:
        return cfg.generation_dtype, "as the rollouts (eval_dtype unset)"
    dtype, why = resolve_dtype(cfg.eval_dtype, cfg.policy, cfg.lora_r, train=False)
    return dtype, f"eval_dtype={cfg.eval_dtype}: {why}"


def evaluate_policy(model, tokenizer, cfg: RunConfig) -> dict:
    """:func:`evaluate` on the run's held-out problems, and on those of every task in ``cfg.eval_tasks`` (under
    ``extra``: a capability the run does not train on, issue 39), each with its own system prompt; sampled in
    :func:`resolve_eval_dtype`'s dtype, each distinct problem once with ``cfg.eval_distinct``."""
    dtype, why = resolve_eval_dtype(cfg)
    kw = dict(n_samples=cfg.eval_samples, seed=cfg.eval_seed, max_new_tokens=cfg.max_completion_length,
              generation=cfg.generation, generation_dtype=dtype, distinct=cfg.eval_distinct)
    out = {}
    for task in (cfg.task, *cfg.eval_tasks):
        c = task_config(cfg, task)
        system = system_prompt(c)
        ev = evaluate(model, tokenizer, as_prompted(tokenizer, eval_problems(c), system),
                      batch_size=_eval_batch(system), **kw)
        if task == cfg.task:
            out = ev
        else:
            out.setdefault("extra", {})[task] = ev
    if cfg.validation_problems:  # the run's own task's validation split (issue 49)
        system = system_prompt(cfg)
        out["validation"] = evaluate(model, tokenizer, as_prompted(tokenizer, validation_problems(cfg), system),
                                     batch_size=_eval_batch(system), **kw)
    out["sampling"]["why"] = why
    return out


def as_prompted(tokenizer, problems, system: str | None):
    """Problems whose prompt is what the model sees: with a ``system`` prompt, the chat template applied
    to ``[system, user]`` as TRL applies it to a conversational dataset; without, the raw prompt."""
    if system is None:
        return list(problems)
    return [replace(p, prompt=tokenizer.apply_chat_template([{"role": "system", "content": system},
                                                             {"role": "user", "content": p.prompt}], tokenize=False,
                                                            add_generation_prompt=True))
            for p in problems]


def system_prompt(cfg: RunConfig) -> str | None:
    """The system prompt a run's model sees, or None when the model gets the raw prompt (tiny LM, plain tasks)."""
    from .tasks import get_task, system_prompt as task_prompt

    return task_prompt(cfg.task) if get_task(cfg.task).chat and cfg.policy != "tiny-lm" else None


VALIDATION_SEED_OFFSET = 1000  # the validation split: the test split drawn with eval_seed + 1000
# cfg.disjoint splits the problem space itself by a hash of each prompt: one tenth is test, one tenth validation, the
# rest training; each split is drawn from the task's generator restricted to its part, so all three follow the
# same distribution (a filter that only removed the test prompts from training would remove the most frequent,
# easiest problems from training alone)
TEST_BUCKET, VALIDATION_BUCKET, BUCKETS = 0, 1, 10


def bucket(prompt: str) -> int:
    """The part of the problem space a prompt belongs to (:data:`BUCKETS` parts, by a SHA-256 of its text)."""
    import hashlib

    return int(hashlib.sha256(prompt.encode()).hexdigest()[:8], 16) % BUCKETS


def _draw(cfg: RunConfig, n: int | None, seed: int, split: str, keep, unique: bool = False) -> list:
    """``n`` problems of ``split`` drawn with ``seed`` whose prompts' bucket satisfies ``keep`` (all of them when
    ``cfg.disjoint`` is off): the generator is asked for more until ``n`` are found. ``unique``: without
    replacement, the first ``n`` distinct prompts of the same stream; a ``ValueError`` naming the task's size where
    its part of the problem space holds fewer (a fourfold longer stream brought no new problem, or the generator
    ran out)."""
    from .tasks import make_problems

    if not cfg.disjoint and not unique:
        return make_problems(cfg.task, n, seed=seed, split=split, smoke=cfg.smoke, data=cfg.data)
    want = n if n is not None else None
    size = (want or 1000) * 4
    distinct = -1
    for _ in range(7):
        drawn = make_problems(cfg.task, size, seed=seed, split=split, smoke=cfg.smoke, data=cfg.data)
        out = [p for p in drawn if not cfg.disjoint or keep(bucket(p.prompt))]
        if unique:
            first: dict = {}
            for p in out:
                first.setdefault(p.prompt, p)
            if want is None or len(first) >= want:
                return list(first.values())[:want]
            if len(first) == distinct or len(drawn) < size:  # nothing new in 4x the draws, or no more to draw
                raise ValueError(f"task {cfg.task}: its {split} part"
                                 + (" (the part of the problem space this split may use)" if cfg.disjoint else "")
                                 + f" holds {len(first)} distinct problems in {len(drawn)} draws, fewer than the "
                                 f"{want} asked without replacement (eval_without_replacement): ask for at most "
                                 f"{len(first)}, or draw with replacement")
            distinct = len(first)
        elif want is None or len(out) >= want or len(drawn) < size:  # enough, or the task has no more
            return out if want is None else out[:want]
        size *= 4
    if unique:
        raise ValueError(f"task {cfg.task}: {distinct} distinct {split} problems after {size // 4} draws, fewer than "
                         f"the {want} asked without replacement (eval_without_replacement)")
    return out[:want]


def eval_problems(cfg: RunConfig):
    """The run's test problems (``eval_problems`` of the task's test split, drawn with ``eval_seed``; with
    ``cfg.disjoint``, from the test part of the problem space only; with ``cfg.eval_without_replacement``, each
    distinct problem at most once, issue 80)."""
    return _draw(cfg, cfg.eval_problems, cfg.eval_seed, "test", lambda b: b == TEST_BUCKET,
                 unique=cfg.eval_without_replacement)


def validation_problems(cfg: RunConfig):
    """The run's validation split (``cfg.validation_problems`` problems, or []): drawn from the task's test split
    with ``eval_seed + 1000``; with ``cfg.disjoint``, from the validation part of the problem space, so disjoint
    from the test problems and from training (issue 49: a study chooses its learning rate here, never on the test
    problems)."""
    if not cfg.validation_problems:
        return []
    return _draw(cfg, cfg.validation_problems, cfg.eval_seed + VALIDATION_SEED_OFFSET, "test",
                 lambda b: b == VALIDATION_BUCKET, unique=cfg.eval_without_replacement)


def train_problems(cfg: RunConfig):
    """The training pool (``train_problems`` of the task's train split, drawn with ``data_seed``); with
    ``cfg.disjoint``, from the training part of the problem space only, so that the evaluation is held out by
    construction (``grpo-lab study report`` computes the overlap and says so)."""
    out = _draw(cfg, cfg.train_problems, cfg.data_seed, "train", lambda b: b not in (TEST_BUCKET, VALIDATION_BUCKET))
    if not out:
        raise ValueError(f"task {cfg.task}: no training problem outside the evaluation's part of the problem space")
    return out


def task_config(cfg: RunConfig, task: str) -> RunConfig:
    """The settings that draw the evaluation problems of ``task``, the run's own or one of its ``eval_tasks``: the
    run's, with that task and no eval tasks; an eval task under ``eval_tasks_whole`` is drawn from its whole problem
    space (not the disjoint split's test tenth), which only a task held out by construction should be."""
    other = task != cfg.task
    return replace(cfg, task=task, eval_tasks=[], disjoint=cfg.disjoint and not (other and cfg.eval_tasks_whole),
                   eval_tasks_whole=False)


def overlap(cfg: RunConfig, task: str | None = None) -> dict:
    """How held out the evaluation of ``task`` (default: the run's own) is, from the settings alone: ``draws``
    (evaluation problems drawn), ``distinct`` (distinct prompts among them), ``in_training`` (how many of those are
    in the training pool of ``cfg``) and ``pool`` (distinct training prompts). An evaluation is held out only where
    ``in_training`` is 0 (issue 47: study 2's 129 distinct evaluation problems were all in its training pool).
    Issue 56 adds ``effective``, Kish's effective number of problems ``(sum w)^2 / sum w^2`` over the draws' counts
    per distinct problem (500 draws of 237 problems, some drawn 19 times, weigh like about 68), and ``near``: the
    distinct evaluation problems not in the pool whose task's canonical form (``Task.canonical``: a commuted sum)
    is."""
    from collections import Counter

    from .tasks import get_task

    c = task_config(cfg, task or cfg.task)
    ev = eval_problems(c)
    train = train_problems(cfg)
    pool = {p.prompt for p in train}
    counts = Counter(p.prompt for p in ev)
    w = np.asarray(list(counts.values()), dtype=float)
    forms = get_task(c.task).canonical, get_task(cfg.task).canonical
    pool_forms = {forms[1](p) for p in train}
    near = {p.prompt for p in ev if p.prompt not in pool and forms[0](p) in pool_forms}
    return dict(draws=len(ev), distinct=len(counts), in_training=len(set(counts) & pool), pool=len(pool),
                effective=float(w.sum() ** 2 / (w ** 2).sum()) if w.size else 0.0, near=len(near),
                near_draws=sum(counts[x] for x in near))


def held_out_words(cfg: RunConfig) -> str:
    """"held-out problems" where the evaluation is disjoint from the training pool, else what it is (the report's
    wording; a task that cannot be generated here is said to be unchecked, never assumed held out)."""
    try:
        o = overlap(cfg)
    except Exception as e:  # noqa: BLE001 (a task this machine cannot generate: say so)
        return f"evaluation problems (overlap with training not checked here: {type(e).__name__})"
    if o["in_training"] == 0:
        return "held-out problems"
    return (f"evaluation problems, not held out ({o['in_training']} of their {o['distinct']} distinct problems are "
            f"in the training pool)")


def apply_threads(threads: int | None) -> int:
    """Set torch's CPU threads for this process, once, where a run starts; returns the count in force.

    ``None``: 1 thread on a machine with at most 4 cores, else torch's default. Measured on 2 cores
    (docs/benchmarks.md): a second thread gains 1.35-1.54x on a quiet machine and loses 1.7-2.6x (up to
    15x in another measurement) when another process holds a core, so one thread is the safe choice
    where cores are few.
    """
    import os

    import torch

    if threads is None:
        threads = 1 if (os.cpu_count() or 1) <= 4 else torch.get_num_threads()
    if torch.get_num_threads() != threads:
        torch.set_num_threads(int(threads))
    return torch.get_num_threads()


# ----------------------------------------------------------------------------- policies

POLICIES: dict = {}


@dataclass(frozen=True)
class TrainRequest:
    """What :func:`train` asks of a policy adapter beside the run's settings (a :class:`RunConfig`): where and how
    to train one run. ``workdir``: TRL's output_dir; ``jsonl_path``: where the starvation callback writes its rows;
    ``progress``: a progress bar; ``return_model``: add the trained model and tokenizer to the result; ``start``:
    the starting policy's evaluation when the caller has it; ``evaluate_after``: evaluate the trained policy;
    ``callbacks``: extra TrainerCallbacks; ``reward_fn``, ``loss_fn``, ``group_filter``: a caller's own reward,
    policy loss and group filter (None: the library's)."""

    workdir: Path
    jsonl_path: Path | None = None
    progress: bool = False
    return_model: bool = False
    start: dict | None = None
    evaluate_after: bool = True
    callbacks: tuple = ()
    reward_fn: Callable | None = None
    loss_fn: Callable | None = None
    group_filter: Callable | None = None


def register_policy(name: str):
    """Class decorator: the adapter for ``RunConfig(policy=name)``; ``"*"`` is the fallback (any model path).

    An adapter has ``train(cfg, request)`` (a :class:`TrainRequest`; it refuses by name what it cannot honour, e.g.
    a token loss for the tabular policy), ``evaluate_start(cfg)``, ``trainer_settings(cfg)`` and ``defaults``: the
    settings its policy needs when the caller gave none (``grpo-lab compare`` and ``profile`` apply them).
    """
    def deco(cls):
        POLICIES[name] = cls()
        return cls
    return deco


def policy_adapter(cfg: RunConfig):
    return POLICIES.get(cfg.policy, POLICIES["*"])


# Every GRPOConfig field that changes what a run computes and that RunConfig does not set, with grpo-lab's
# value: TRL 1.16's defaults (so published comparisons keep their meaning), written out because
# `import unsloth` replaces TRL's defaults for the whole process (learning rate, optimizer "adamw_8bit",
# weight decay 0.001, beta 0.001, seed 3407, ...; read in unsloth 2026.10's models/rl.py). A field the
# installed TRL lacks is skipped (it cannot change the run).
TRAINER_CONSTANTS = dict(
    optim="adamw_torch_fused", weight_decay=0.0, adam_beta1=0.9, adam_beta2=0.999, adam_epsilon=1e-8,
    lr_scheduler_type="constant", warmup_steps=0, gradient_accumulation_steps=1,
    beta=0.0, loss_type="dapo",  # beta: RunConfig.beta sets it (a constant here, so Unsloth's 0.001 never stays)
    epsilon=0.2, delta=None, scale_rewards="group",
    vllm_importance_sampling_mode="sequence_mask", vllm_importance_sampling_clip_min=None,
    vllm_importance_sampling_clip_max=3.0,
    importance_sampling_level="token", num_iterations=1, steps_per_generation=1,
    multi_objective_aggregation="sum_then_normalize", reward_weights=None, top_entropy_quantile=1.0,
    entropy_coef=0.0, use_adaptive_entropy=False, off_policy_mask_threshold=None, use_bias_correction_kl=True,
    vllm_importance_sampling_correction=True, sync_ref_model=False, disable_dropout=False, shuffle_dataset=True,
    cast_lm_head_to_fp32=False, temperature=1.0, top_p=1.0, top_k=0, min_p=None, repetition_penalty=1.0,
    generation_kwargs=None, label_smoothing_factor=0.0, torch_compile=False,
)
# the constants a RunConfig field sets instead (their value above is the field's default)
RUN_SETTINGS = ("beta", "lr_scheduler_type", "warmup_steps", "adam_beta2", "adam_epsilon")
# What a run's effective trainer settings are compared on (the per-run seed and paths aside)
_NOT_SETTINGS = ("output_dir", "logging_dir", "run_name", "seed", "data_seed", "disable_tqdm", "report_to",
                 "save_strategy", "save_steps", "logging_steps", "hub_token", "push_to_hub")


def grpo_args(cfg: RunConfig, output_dir, progress: bool = False):
    """TRL's ``GRPOConfig`` for ``cfg``: the one place where a run's trainer settings are made.

    Every field that changes what is computed is set here, from ``cfg`` or :data:`TRAINER_CONSTANTS`,
    never left to a default that another library may have patched (see :func:`trainer_settings`).
    """
    import dataclasses

    import torch
    from trl import GRPOConfig

    cuda = torch.cuda.is_available()
    # on a GPU: bf16 where supported, else fp16 (a T4); on a CPU: bf16 autocast (TRL's default, which every published
    # grpo-lab comparison used) where the CPU computes in bf16 natively, float32 where it does not (train_precision)
    precision = dict(bf16=torch.cuda.is_bf16_supported(), fp16=not torch.cuda.is_bf16_supported()) if cuda else \
        dict(bf16=train_precision()[0], fp16=False)
    saving = dict(save_strategy="steps", save_steps=cfg.save_steps) if cfg.save_steps else dict(save_strategy="no")
    known = {f.name for f in dataclasses.fields(GRPOConfig)}
    wanted = dict(per_device_train_batch_size=cfg.prompts_per_step * cfg.group_size, num_generations=cfg.group_size,
                  max_completion_length=cfg.max_completion_length, max_steps=cfg.steps,
                  learning_rate=cfg.learning_rate, max_grad_norm=cfg.max_grad_norm, seed=cfg.seed, beta=cfg.beta,
                  lr_scheduler_type=cfg.lr_scheduler, warmup_steps=cfg.warmup_steps, adam_beta2=cfg.adam_beta2,
                  adam_epsilon=cfg.adam_epsilon,
                  epsilon_high=cfg.epsilon_high, mask_truncated_completions=cfg.mask_truncated_completions,
                  gradient_checkpointing=cfg.gradient_checkpointing,
                  **{k: v for k, v in TRAINER_CONSTANTS.items() if k in known and k not in RUN_SETTINGS}, **precision)
    if cfg.generation == "vllm":
        # grpo-lab's vLLM engine samples from the trained weights in their own dtype (the canary holds it to the
        # policy within 1e-3 nats in float32), as model.generate does: no sampler/learner gap for TRL's
        # importance-sampling correction to fix, and no extra forward pass for it. Sampling in another dtype
        # (generation_dtype) is off-policy by its rounding: then the correction is on (docs/benchmarks.md)
        wanted["vllm_importance_sampling_correction"] = cfg.generation_dtype not in (None, run_dtype(cfg)[0])
    args = GRPOConfig(output_dir=str(output_dir), logging_steps=1, report_to="none", use_cpu=not cuda,
                      disable_tqdm=not progress, **wanted, **saving)
    # a patched GRPOConfig may rewrite explicit values after construction (Unsloth turns an explicit
    # loss_type="dapo" into mask_truncated_completions=True and epsilon_high=0.28): put ours back
    for k, v in wanted.items():
        if getattr(args, k) != v:
            setattr(args, k, v)
    return args


def train_precision(cuda: bool | None = None, bf16: bool | None = None) -> tuple[bool, str]:
    """``(bf16 autocast?, why)`` of a run's training on this machine. On a GPU: bf16 where supported (else fp16). On
    a CPU: bf16 autocast where the CPU computes in bf16 natively (AVX-512 BF16, AMX, Arm BF16:
    :func:`grpo_lab.policy.cpu_has_bf16`), float32 where it does not: there bf16 is emulated, and a SmolLM2
    forward and backward of 16 x 100 tokens took 385 s against 27 s in float32 (an AVX2-only AMD EPYC core,
    2026-11-29, issue 81), which made lesson 06's two CPU steps run past 15 minutes. Every result records the
    path that ran (``trainer_settings``' bf16, and ``precision_why``); a comparison or study refuses to pool runs
    trained on both. ``GRPO_LAB_CPU_BF16=0`` (:func:`grpo_lab.policy.cpu_bf16_switched_off`) trains in float32 on a
    CPU with bf16 units, so a study started on one without them resumes under the same settings."""
    import torch

    from .policy import CPU_BF16_SWITCH, cpu_bf16_switched_off, cpu_has_bf16

    cuda = torch.cuda.is_available() if cuda is None else cuda
    if cuda:
        ok = torch.cuda.is_bf16_supported()
        return ok, "bf16 autocast (this GPU supports it)" if ok else "fp16 autocast (this GPU has no bf16)"
    if bf16 is None and cpu_bf16_switched_off():
        return False, f"float32, no autocast ({CPU_BF16_SWITCH}=0 leaves this CPU's native bf16 unused)"
    native = cpu_has_bf16() if bf16 is None else bf16
    if native:
        return True, "bf16 autocast (this CPU computes in bf16 natively)"
    return False, ("float32, no autocast (this CPU has no native bf16 arithmetic" +
                   (", so bf16 would be emulated, about 14x slower here)" if native is False else
                    " that grpo-lab can detect)"))


def trainer_settings(args) -> dict:
    """The effective settings of a ``GRPOConfig`` (after any patching): every field that can change what a
    run computes, as JSON-ready values. Recorded in every result; a comparison refuses runs that differ."""
    import dataclasses
    import json

    out = {}
    for f in dataclasses.fields(args):
        if f.name in _NOT_SETTINGS or f.name.startswith(("hub_", "push_", "logging_", "save_", "eval")):
            continue
        v = getattr(args, f.name, None)
        try:
            json.dumps(v)
        except TypeError:
            v = str(v)
        out[f.name] = v
    return out


def _checkpoint_step(workdir: Path) -> int | None:
    steps = [int(p.name.split("-")[-1]) for p in Path(workdir).glob("checkpoint-*") if p.name.split("-")[-1].isdigit()]
    return max(steps) if steps else None


@register_policy("*")
class LanguageModel:
    """The shipped tiny LM or any causal LM (directory / hub id), trained through TRL's GRPOTrainer."""

    # an instruct model writes sentences: new tokens per completion, and LoRA rather than full fine-tuning
    defaults = dict(max_completion_length=256, lora_r=16)

    def load(self, cfg: RunConfig, lora: bool = True, train: bool = True):
        """``(model, tokenizer, PolicyInfo)`` for ``cfg``; ``lora=False``: the bare starting weights (evaluation),
        in the dtype a run of ``cfg`` trains in; ``train=False``: for sampling alone (profile)."""
        from .policy import apply_unsloth_environment, choose_backend, load_policy, unsloth_environment

        backend, _ = choose_backend(cfg.backend)
        if backend == "unsloth":
            apply_unsloth_environment(unsloth_environment(cfg.unsloth_compile, cfg.unsloth_cache))
        lora_r = cfg.lora_r if lora else None
        return load_policy(cfg.policy, backend=cfg.backend, lora_r=lora_r,
                           lora_alpha=cfg.lora_alpha or (2 * lora_r if lora_r else None),
                           max_seq_length=1024, seed=cfg.seed, dtype=run_dtype(cfg, train)[0],
                           fast_inference=use_fast_inference(cfg.fast_inference, backend, _vllm_installed()))

    def trainer_settings(self, cfg: RunConfig) -> dict:
        """The effective trainer settings a run of ``cfg`` will train with (the per-run seed aside), and the
        weights' dtype it resolves to here (``model_dtype``: a resume on a machine that resolves ``auto``
        otherwise is refused, naming it)."""
        import tempfile

        return {**trainer_settings(grpo_args(cfg, tempfile.gettempdir())), "model_dtype": run_dtype(cfg)[0]}

    def evaluate_start(self, cfg: RunConfig) -> dict:
        from .generation import get_engine

        model, tok, info = self.load(cfg, lora=False)
        ev = evaluate_policy(model, tok, cfg)
        ev["weights"], ev["dtype"], ev["generation"] = info.weights, info.dtype, get_engine(cfg.generation).describe()
        return ev

    def train(self, cfg: RunConfig, request: TrainRequest) -> dict:
        import torch
        from transformers import PrinterCallback, TrainerCallback

        from .policy import cpu_description
        from .tasks import correctness_reward, to_dataset
        from .trl import CompletionBudget, RankProbe, StarvationCallback, trainer_class

        workdir, jsonl_path, reward_fn, loss_fn = request.workdir, request.jsonl_path, request.reward_fn, request.loss_fn
        model, tok, info = self.load(cfg)
        dtype, dtype_why = run_dtype(cfg)  # resolved once: the dtype the weights were loaded in, and why
        system = system_prompt(cfg)
        train_set = train_problems(cfg)
        resume = _checkpoint_step(workdir) if cfg.save_steps else None
        if jsonl_path is not None and Path(jsonl_path).is_file():
            _truncate_jsonl(Path(jsonl_path), resume or 0)  # rows after the checkpoint are retrained
        callbacks = [StarvationCallback(jsonl_path), *request.callbacks]
        if cfg.budget_completions is not None:
            callbacks.append(CompletionBudget(cfg.budget_completions))
        if request.progress:
            callbacks.append(_progress_bar(cfg, TrainerCallback))
        trainer = trainer_class(model=model)(
            model=model, args=grpo_args(cfg, workdir), reward_funcs=reward_fn or correctness_reward,
            train_dataset=to_dataset(train_set, system), processing_class=tok,
            estimator=cfg.estimator, estimator_options=dict(cfg.estimator_options), callbacks=callbacks,
            loss_fn=loss_fn, sampling=cfg.sampling, max_generation_rounds=cfg.max_generation_rounds,
            on_exhausted=cfg.on_exhausted, skip_prob=cfg.skip_prob, group_filter=request.group_filter,
            generation=cfg.generation, generation_dtype=cfg.generation_dtype, logprobs=cfg.logprobs)
        trainer.remove_callback(PrinterCallback)  # with tqdm off, transformers would print every log row
        if cfg.rank_probe:
            trainer.rank_probe = RankProbe(cfg.steps, cfg.rank_probe)
        settings = {**trainer_settings(trainer.args), "model_dtype": dtype}
        before = _engine_counters(cfg.generation)  # the engine outlives a run: its record is this run's share
        t0 = time.perf_counter()
        trainer.train(resume_from_checkpoint=bool(resume))
        train_s = time.perf_counter() - t0
        cuda = torch.cuda.is_available()
        out = dict(config=asdict(cfg), history=_history(trainer.state.log_history), train_seconds=train_s,
                   completions=trainer.generated["completions"], generated=dict(trainer.generated),
                   steps_done=trainer.state.global_step, backend=info.backend,
                   backend_why=info.why, weights=info.weights, device=torch.cuda.get_device_name(0) if cuda else "cpu",
                   threads=torch.get_num_threads(), resumed_from_step=resume, trainer_settings=settings,
                   cpu=None if cuda else cpu_description(),
                   dtype=info.dtype, dtype_why=dtype_why, precision_why=train_precision()[1],
                   generation=_generation_record(cfg.generation, before))
        if cfg.rank_probe:
            out["rank_probe"] = trainer.rank_probe.record()
        if request.evaluate_after:
            t0 = time.perf_counter()
            out["eval"] = evaluate_policy(trainer.model, tok, cfg)
            out["eval_seconds"] = time.perf_counter() - t0
        if request.return_model:
            out["model"], out["tokenizer"] = trainer.model, tok
        return out


@register_policy("tiny-lm")
class TinyLM(LanguageModel):
    """The shipped warm-started tiny LM (0.34M parameters, arithmetic): full fine-tuning on a CPU."""

    defaults = dict(max_completion_length=6)  # at most 4 digits and EOS; RunConfig's own default

    def load(self, cfg: RunConfig, lora: bool = True, train: bool = True):
        from .policy import load_policy

        return load_policy("tiny-lm", backend="transformers", lora_r=None, dtype=run_dtype(cfg, train)[0])


@register_policy("tabular")
class Tabular:
    """The tabular softmax policy of notebook 04 (no language model; seconds).

    The initial per-prompt success rates are resampled from the tiny LM's, measured on the
    evaluation set, so both policies start from the same starvation profile (floored at 0.001
    as in notebook 04). Every one of ``n_prompts`` prompts is sampled every step; plain SGD on
    the logits, so the learning rate means what it means in notebook 04, not what it means for
    AdamW. pass@k is exact (``1 - (1 - p)^k``), not estimated from samples.
    """

    n_prompts = 2000
    defaults: dict = {}

    def trainer_settings(self, cfg: RunConfig) -> None:
        return None  # no trainer: plain SGD in grpo_lab.simulator, every setting in the RunConfig

    def evaluate_start(self, cfg: RunConfig) -> dict:
        return POLICIES["tiny-lm"].evaluate_start(replace(cfg, policy="tiny-lm"))

    def train(self, cfg: RunConfig, request: TrainRequest) -> dict:
        from .simulator import SimConfig, simulate

        if request.reward_fn is not None or request.loss_fn is not None or request.group_filter is not None:
            raise ValueError("the tabular policy is a simulation with exact 0/1 rewards, no token loss and no "
                             "sampling: reward_fn, loss_fn and group_filter apply to language-model policies only")

        ev = request.start if request.start is not None else self.evaluate_start(cfg)
        p = np.asarray(ev["correct"]) / ev["n_samples"]
        rng = np.random.default_rng(cfg.data_seed)
        p0 = np.clip(rng.choice(p, size=self.n_prompts), 1e-3, 1 - 1e-3)
        sim = simulate(p0, SimConfig(method=cfg.estimator, G=cfg.group_size, steps=cfg.steps, lr=cfg.learning_rate,
                                     seed=cfg.seed, estimator_options=dict(cfg.estimator_options)))
        history = [{"step": int(t) + 1, "reward": float(s), "starvation/acr": float(f + a),
                    "starvation/all_fail": float(f), "starvation/all_pass": float(a)}
                   for t, s, f, a in zip(sim.steps, sim.success, sim.all_fail, sim.all_pass)]
        pf = sim.p_final
        return dict(config=asdict(cfg), history=history, train_seconds=None,
                    completions=cfg.steps * self.n_prompts * cfg.group_size, backend="simulator",
                    backend_why="policy='tabular'", device="cpu", resumed_from_step=None,
                    eval=dict(greedy=None, greedy_by_level={}, n_samples=None,
                              pass_at_k={int(k): float(np.mean(1 - (1 - pf) ** k)) for k in KS}))


def _engine_counters(name: str) -> tuple[int, float]:
    """``(syncs, sync_seconds)`` of engine ``name`` so far in this process ((0, 0.0) for one that hands none over)."""
    from .generation import get_engine

    engine = get_engine(name)
    return (engine.syncs, engine.sync_seconds) if engine.replaces_rollouts else (0, 0.0)


def _generation_record(name: str, before: tuple = (0, 0.0)) -> dict:
    """What sampled a run's completions (:mod:`grpo_lab.generation`), with the weight hand-overs it made and the
    canary's last difference when the engine hands weights over. ``before``: the engine's counters when the run
    started (:func:`_engine_counters`): the engine is shared by every run of a process, so the record is the
    difference (issue 105: four runs of one ``study run`` recorded 2, 4, 6, 8 syncs)."""
    from .generation import get_engine

    engine = get_engine(name)
    out = engine.describe()
    if engine.replaces_rollouts:
        out.update(syncs=engine.syncs - before[0], sync_seconds=engine.sync_seconds - before[1],
                   last_canary=engine.last_canary)
    return out


def run_dtype(cfg: RunConfig, train: bool = True) -> tuple[str, str]:
    """``(dtype, why)`` of a run's weights (:func:`grpo_lab.policy.resolve_dtype` on ``cfg``): the same for its
    start evaluation and its training, so that both measure one model; ``train=False`` for sampling alone
    (``grpo-lab profile``)."""
    from .policy import resolve_dtype

    return resolve_dtype(cfg.dtype, cfg.policy, cfg.lora_r, train=train)


def _vllm_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("vllm") is not None


def use_fast_inference(setting: bool | None, backend: str, vllm_installed: bool) -> bool:
    """Whether to load with Unsloth's ``fast_inference=True`` (vLLM generation).

    ``None`` (auto): exactly when the backend is Unsloth and vLLM is installed (Colab). ``True``
    without them is an error that names what is missing; the transformers backend never uses it.
    """
    if setting is None:
        return backend == "unsloth" and vllm_installed
    if setting and backend != "unsloth":
        raise ValueError(f"fast_inference=True needs the Unsloth backend, but the backend is {backend}")
    if setting and not vllm_installed:
        raise ValueError("fast_inference=True needs vLLM: pip install vllm (Colab has it with the gpu extra), "
                         "or set fast_inference=None")
    return bool(setting)


def _eval_batch(system: str | None) -> int:
    """Sequences per generate call in an evaluation: 64 for chat prompts on a GPU (long sequences), else 256."""
    import torch

    return 64 if system is not None and torch.cuda.is_available() else 256


def _history(log_history) -> list[dict]:
    return [{k: v for k, v in row.items()
             if k in HISTORY_KEYS or k.startswith(("starvation/", "sampling/", "generation/", "update/", "kl/", "avspo/"))}
            for row in log_history if "reward" in row]


def _truncate_jsonl(path: Path, last_step: int) -> None:
    import json

    from .io import read_jsonl, write_text_atomic

    rows = read_jsonl(path, hint="; move the file aside to resume")
    write_text_atomic(path, "".join(json.dumps(r) + "\n" for _, r in rows if r.get("step", 0) <= last_step))


def _progress_bar(cfg: RunConfig, TrainerCallback):
    from tqdm.auto import tqdm

    class Bar(TrainerCallback):
        def on_train_begin(self, args, state, *a, **k):
            self.bar = tqdm(total=cfg.steps, initial=state.global_step, desc=f"{method_name(cfg)} seed {cfg.seed}",
                            leave=False)

        def on_step_end(self, *a, **k):
            self.bar.update(1)

        def on_train_end(self, *a, **k):
            self.bar.close()

    return Bar()


# ----------------------------------------------------------------------------- runtime estimate

# Plain `generate` on an H100 (2026-11-22, a 0.36B stand-in; docs/gpu.md): about 250 new tokens/s
GENERATE_TOKENS_PER_S_H100 = 250.0
# transformers + peft (float32, its faster configuration) over Unsloth (4-bit, compilation off), later steps on one
# H100 in one command (2026-11-26, SmolLM2-135M, 4 prompts x G = 4 x 128 new tokens; docs/gpu.md): 5.53 s / 2.21 s
TRANSFORMERS_OVER_UNSLOTH = 5.53 / 2.21
# Two model sizes at one step shape (issue 60: an H200, 2026-11-26, Unsloth 2026.10.9 in 4-bit, lesson 06's
# 2 prompts x G = 4 x 192 new tokens; docs/gpu.md): SmolLM2-135M-Instruct inside lesson 06 itself (134.5M
# parameters; later steps 3.9 s on average, first step 42 s) and shared/gpu/probe.py's random-weight 0.5B-shaped
# stand-in (358.4M; later steps 8.2 s, first step 53 s). One run each.
MEASURED_SIZES = dict(gpu="H200", tokens_per_step=2 * 4 * 192, params_m=(134.5, 358.4), step_s=(3.9, 8.2),
                      first_s=(42.0, 53.0))
# How much slower than an H100 a GPU is for this workload (memory-bandwidth ratio: 3.35 TB/s vs 0.32 on a T4)
SLOWER_THAN_H100 = {"H100": 1.0, "H200": 0.8, "A100": 1.7, "L4": 11.0, "T4": 10.5}
ASSUMED_PARAMS_M = 500.0  # a model whose size its name does not say


def local_params_m(policy: str) -> float | None:
    """A local model directory's parameter count in millions, summed from its ``*.safetensors`` headers (each
    file starts with an 8-byte length and a JSON table of tensor shapes: nothing is loaded); None when ``policy``
    is not a directory holding such files. (Issue 60: lesson 06 pointed at a converted model directory read as
    "no size" and got the 500M guess.)"""
    import json
    import math
    import struct

    files = sorted(Path(policy).glob("*.safetensors")) if Path(policy).is_dir() else []
    if not files:
        return None
    total = 0
    for f in files:
        with open(f, "rb") as fh:
            (length,) = struct.unpack("<Q", fh.read(8))
            header = json.loads(fh.read(length))
        total += sum(math.prod(t["shape"]) for k, t in header.items() if k != "__metadata__")
    return total / 1e6


def policy_params_m(policy: str) -> float | None:
    """A policy's parameter count in millions: a local model directory's from its weights' files
    (:func:`local_params_m`), else from its name ("Qwen2.5-0.5B-Instruct": 500, "SmolLM2-135M": 135; "smollm2" is
    SmolLM2-135M-Instruct, "tiny-lm" the shipped 0.3M model); None when neither says."""
    import re

    on_disk = local_params_m(policy)
    if on_disk is not None:
        return on_disk
    known = {"smollm2": 134.5, "tiny-lm": 0.3}
    if policy in known:
        return known[policy]
    found = re.findall(r"(?<![\d.])(\d+(?:\.\d+)?)\s*([BbMm])(?![a-zA-Z])", policy.rsplit("/", 1)[-1])
    if not found:
        return None
    value, unit = found[-1]
    return float(value) * (1000.0 if unit in "Bb" else 1.0)


def step_seconds_h100(params_m: float, tokens: int) -> float:
    """Seconds of one Unsloth GRPO step with ``tokens`` new tokens for a ``params_m``-million-parameter model, in
    H100 time: the line through the two sizes of :data:`MEASURED_SIZES`, linear in new tokens, scaled from the
    H200 it was measured on by :data:`SLOWER_THAN_H100`."""
    (p0, p1), (t0, t1) = MEASURED_SIZES["params_m"], MEASURED_SIZES["step_s"]
    slope = (t1 - t0) / (p1 - p0)
    at_size = max(t0 + slope * (params_m - p0), 0.0)
    return at_size / SLOWER_THAN_H100[MEASURED_SIZES["gpu"]] * tokens / MEASURED_SIZES["tokens_per_step"]


def rough_runtime(cfg: RunConfig, backend: str, gpu_name: str) -> tuple[float, str]:
    """A *rough* training + evaluation time in seconds for ``cfg`` on ``gpu_name``, and how it was made.

    A step's time is a straight line in the model's parameters through two measurements on one GPU
    (:data:`MEASURED_SIZES`, Unsloth; :func:`step_seconds_h100`), linear in new tokens, scaled by
    :data:`SLOWER_THAN_H100`; the transformers backend is :data:`TRANSFORMERS_OVER_UNSLOTH` times slower (one
    measurement). Two points of one run each fix a line, not its uncertainty. Evaluation is
    :data:`GENERATE_TOKENS_PER_S_H100` at full length (an upper bound on completion length). Printed before notebook 06
    trains, so nobody waits in silence; the progress bar's ETA during training is the better number.
    """
    factor = next((v for k, v in SLOWER_THAN_H100.items() if k in gpu_name), None)
    known = factor is not None
    factor = factor if known else 10.0
    on_disk = local_params_m(cfg.policy)  # the safetensors headers read once
    size = on_disk if on_disk is not None else policy_params_m(cfg.policy)
    params = size if size is not None else ASSUMED_PARAMS_M
    where = ("assumed: neither its name nor its files give a size" if size is None else
             "from the model's files" if on_disk is not None else "from the name")
    tokens = cfg.prompts_per_step * cfg.group_size * cfg.max_completion_length
    per_step = step_seconds_h100(params, tokens)
    if backend != "unsloth":
        per_step *= TRANSFORMERS_OVER_UNSLOTH
    # the first step's extra time is mostly compilation, CPU work a slower GPU does not stretch: added once,
    # unscaled (the larger of the two sizes' extras)
    warmup = max(f - t for f, t in zip(MEASURED_SIZES["first_s"], MEASURED_SIZES["step_s"]))
    train_s = warmup + per_step * max(cfg.steps, 1) * factor
    n_eval = cfg.eval_problems or 1319
    eval_s = n_eval * (cfg.eval_samples + 1) * cfg.max_completion_length / GENERATE_TOKENS_PER_S_H100 * factor
    (p0, p1), (t0, t1) = MEASURED_SIZES["params_m"], MEASURED_SIZES["step_s"]
    how = (f"a step's time as a line in model size through two {MEASURED_SIZES['gpu']} measurements (Unsloth, "
           f"{MEASURED_SIZES['tokens_per_step']} new tokens: {t0} s at {p0:g}M parameters, {t1} s at {p1:g}M; one "
           f"run each), at {params:.4g}M ({where})"
           f", linear in new tokens{'' if backend == 'unsloth' else f', x{TRANSFORMERS_OVER_UNSLOTH:.1f} for {backend}'}"
           f"; first-step compilation {warmup:.0f} s once; generation {GENERATE_TOKENS_PER_S_H100:.0f} tokens/s at "
           f"full length; x{factor:g} for "
           f"{gpu_name if known else 'an unknown GPU (assumed T4-like)'}")
    return train_s + eval_s, how


# ----------------------------------------------------------------------------- entry points

_START_CACHE: dict = {}


START_SETTINGS = ("policy", "task", "data", "eval_problems", "eval_seed", "eval_samples", "max_completion_length",
                  "smoke", "backend", "dtype", "lora_r", "generation", "generation_dtype", "eval_tasks",
                  "validation_problems", "disjoint", "eval_dtype", "eval_distinct",
                  "eval_without_replacement", "eval_tasks_whole")  # what the start's evaluation depends on (not the learning rate)


def start_key(cfg: RunConfig) -> str:
    """A fingerprint of the settings the start's evaluation depends on: two comparison directories with one key
    evaluate the same start (a study evaluates it once and copies it)."""
    from .io import fingerprint

    return fingerprint({k: v for k, v in asdict(cfg).items() if k in START_SETTINGS})


def evaluate_start(cfg: RunConfig) -> dict:
    """The shared starting policy's evaluation (cached per evaluation setting)."""
    key = start_key(cfg)
    apply_threads(cfg.threads)
    if key not in _START_CACHE:
        _START_CACHE[key] = policy_adapter(cfg).evaluate_start(cfg)
    return _START_CACHE[key]


def train(cfg: RunConfig, workdir=None, jsonl_path=None, progress: bool = False, return_model: bool = False,
          start: dict | None = None, evaluate_after: bool = True, callbacks=(), reward_fn=None, loss_fn=None,
          group_filter=None) -> dict:
    """Train one (estimator, seed) run of ``cfg`` and evaluate it; the result schema is in the module doc.

    ``workdir`` is TRL's ``output_dir`` (checkpoints when ``cfg.save_steps``; a temporary directory
    when None); ``jsonl_path`` receives the :class:`~grpo_lab.trl.StarvationCallback` rows while
    training; ``start`` is the starting policy's evaluation when the caller has it (tabular uses it).
    ``return_model=True`` adds the trained ``model`` and its ``tokenizer`` (not JSON);
    ``evaluate_after=False`` skips the evaluation (the result then has no ``eval``); ``callbacks`` are extra
    ``transformers.TrainerCallback`` objects for a language-model run (timing, scripts/gpu_check.py);
    ``reward_fn`` replaces the task's correctness reward during training (TRL's signature; notebook 05
    trains with the student's own reward function). The evaluation always uses the library's grader.
    ``loss_fn`` replaces TRL's policy loss (signature of :func:`grpo_lab.loss.grpo_loss`; notebook 05
    trains with the student's own loss). ``group_filter`` replaces the library's group filter of dynamic sampling
    (``fn(rewards, G)`` -> one bool per group; notebook 09 trains with the student's own).
    """
    cfg.validate()
    apply_threads(cfg.threads)
    adapter = policy_adapter(cfg)
    if group_filter is not None and not get_sampling(cfg.sampling).drops:
        raise ValueError(f"group_filter is used by a sampling rule that drops groups (dynamic, drop); this run "
                         f"samples {cfg.sampling!r}")

    def request(work) -> TrainRequest:
        return TrainRequest(Path(work), jsonl_path=jsonl_path, progress=progress, return_model=return_model,
                            start=start, evaluate_after=evaluate_after, callbacks=tuple(callbacks),
                            reward_fn=reward_fn, loss_fn=loss_fn, group_filter=group_filter)

    if workdir is not None:
        return adapter.train(cfg, request(workdir))
    import shutil
    import tempfile

    work = tempfile.mkdtemp(prefix="grpo-lab-")
    try:
        return adapter.train(cfg, request(work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
