"""The starvation experiment on a language model, one run at a time (notebook 05, ``grpo-lab compare``).

One run = one estimator and one seed, trained through TRL's real ``GRPOTrainer`` (built by
:func:`grpo_lab.trl.trainer_class`) with everything else held fixed by :class:`RunConfig`:
the starting weights, the training prompts, the optimizer (TRL's default AdamW, constant
learning rate), the clipping, the batch, the number of steps and the evaluation set.

:func:`evaluate` measures a policy on held-out problems: greedy accuracy (overall and per
difficulty level) and the per-problem number of correct samples out of ``eval_samples``,
from which :func:`grpo_lab.passk.pass_at_k` gives unbiased pass@k.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .advantages import ESTIMATORS
from .io import run_name, write_json_atomic
from .passk import pass_at_k

POLICIES = ("tiny-lm", "tabular")  # or a local path / hub id of a causal LM


@dataclass
class RunConfig:
    """Settings of one GRPO run; every estimator and seed of a comparison shares all but two of them."""

    estimator: str = "grpo"  # any of grpo_lab.ESTIMATORS
    seed: int = 0  # TRL's seed: sampling and data order
    learning_rate: float = 1e-4  # AdamW (TRL's default optimizer), constant schedule, no warm-up
    steps: int = 150  # optimizer steps
    group_size: int = 4  # G, completions per prompt
    prompts_per_step: int = 16  # prompts per step; the batch is prompts_per_step * G completions
    task: str = "arithmetic"  # "arithmetic" | "word_problems"
    policy: str = "tiny-lm"  # "tiny-lm" (the shipped warm-started model) or a causal-LM path / hub id
    max_completion_length: int = 6  # tokens; the tiny LM's answers are at most 4 digits + EOS
    max_grad_norm: float = 1.0  # TRL's default gradient clipping
    train_problems: int = 4000  # training prompts, drawn with data_seed: the same for every run
    data_seed: int = 1
    eval_problems: int = 300  # held-out problems (eval_seed), the same for every run
    eval_samples: int = 16  # samples per held-out problem at temperature 1, for pass@k
    eval_seed: int = 5
    estimator_options: dict = field(default_factory=dict)

    def validate(self) -> "RunConfig":
        """Raise ``ValueError`` naming the first bad setting."""
        if self.estimator not in ESTIMATORS:
            raise ValueError(f"unknown estimator {self.estimator!r}; choose from {', '.join(ESTIMATORS)}")
        for name in ("steps", "prompts_per_step", "max_completion_length", "train_problems", "eval_problems",
                     "eval_samples"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.group_size < 2:
            raise ValueError(f"group size must be >= 2 (a group of one has no baseline), got {self.group_size}")
        if not (self.learning_rate > 0 and np.isfinite(self.learning_rate)):
            raise ValueError(f"learning rate must be a positive number, got {self.learning_rate}")
        if self.task not in ("arithmetic", "word_problems", "gsm8k"):
            raise ValueError(f"unknown task {self.task!r}; choose arithmetic, word_problems or gsm8k")
        if self.task == "gsm8k" and self.policy in POLICIES:
            raise ValueError("--task gsm8k needs a real instruct model: pass its hub id or path as --policy "
                             "(notebook 06 has the CPU smoke version)")
        if self.policy == "tiny-lm" and self.task != "arithmetic":
            raise ValueError("the tiny LM was warm-started on arithmetic only; use --task arithmetic, "
                             "or pass a causal-LM path as --policy")
        return self


def load_policy_model(policy: str):
    """``(model, tokenizer)`` for ``policy``: the shipped tiny LM, or a causal LM by local path / hub id,
    loaded with transformers for full fine-tuning (:func:`grpo_lab.policy.load_policy` without LoRA)."""
    from .policy import load_policy

    model, tok, _ = load_policy(policy, backend="transformers", lora_r=None)
    return model, tok


def problems_for(cfg: RunConfig, split: str):
    from .tasks import make_problems

    if split == "train":
        return make_problems(cfg.task, cfg.train_problems, seed=cfg.data_seed)
    return make_problems(cfg.task, cfg.eval_problems, seed=cfg.eval_seed)


def evaluate(model, tokenizer, problems, n_samples: int = 16, seed: int = 5, max_new_tokens: int = 6,
             batch_size: int = 256) -> dict:
    """Greedy accuracy (overall, per level) and correct counts out of ``n_samples`` per problem (temperature 1)."""
    from .policy import sample_completions
    from .tasks.gsm8k import is_correct

    greedy = sample_completions(model, tokenizer, [p.prompt for p in problems], 1, temperature=0,
                                max_new_tokens=max_new_tokens, batch_size=batch_size)
    g = np.array([is_correct(c[0], p.answer) for c, p in zip(greedy, problems)], dtype=float)
    sampled = sample_completions(model, tokenizer, [p.prompt for p in problems], n_samples, seed=seed,
                                 max_new_tokens=max_new_tokens, batch_size=batch_size)
    counts = [int(sum(is_correct(c, p.answer) for c in cs)) for cs, p in zip(sampled, problems)]
    levels = np.array([p.level for p in problems])
    return dict(greedy=float(g.mean()),
                greedy_by_level={int(lv): float(g[levels == lv].mean()) for lv in sorted(set(levels.tolist()))},
                n_samples=n_samples, correct=counts, levels=levels.tolist())


def pass_at_k_of(ev: dict, ks=(1, 2, 4, 8, 16)) -> dict:
    """Mean unbiased pass@k of an :func:`evaluate` result, for every k <= its number of samples."""
    n = ev["n_samples"]
    c = np.asarray(ev["correct"])
    return {int(k): float(pass_at_k(n, c, int(k)).mean()) for k in ks if k <= n}


def start_starvation(ev: dict, G: int) -> dict:
    """Degenerate fraction of groups of ``G`` implied by an evaluation: E[p^G + (1-p)^G] over problems.

    With c correct out of n samples, ``C(c, G) / C(n, G)`` is the unbiased estimate of p^G (the chance
    that G samples drawn without replacement are all correct), and likewise for (1-p)^G; the plug-in
    (c/n)^G would be biased. Needs n >= G.
    """
    from math import comb

    n = ev["n_samples"]
    if n < G:
        raise ValueError(f"need at least G={G} samples per problem to estimate degeneracy, got {n}")
    c = np.asarray(ev["correct"])
    all_pass = np.array([comb(int(k), G) for k in c]) / comb(n, G)
    all_fail = np.array([comb(n - int(k), G) for k in c]) / comb(n, G)
    return dict(degenerate=float(np.mean(all_pass + all_fail)), all_fail=float(all_fail.mean()),
                all_pass=float(all_pass.mean()), never_solved=float(np.mean(c == 0)))


def train_one(cfg: RunConfig, workdir, jsonl_path=None, progress: bool = False, evaluate_after: bool = True,
              return_model: bool = False) -> dict:
    """Train one (estimator, seed) through TRL's ``GRPOTrainer``; return its log history and evaluation.

    ``workdir`` is TRL's ``output_dir`` (nothing is saved there but what TRL creates itself);
    ``jsonl_path`` receives the :class:`~grpo_lab.trl.StarvationCallback` rows while training.
    ``return_model=True`` adds the trained ``model`` and its ``tokenizer`` to the result (not JSON).
    """
    import torch
    from transformers import PrinterCallback, TrainerCallback
    from trl import GRPOConfig

    from .tasks import correctness_reward, to_dataset
    from .trl import StarvationCallback, trainer_class

    cfg.validate()
    model, tok = load_policy_model(cfg.policy)
    args = GRPOConfig(
        output_dir=str(Path(workdir)), per_device_train_batch_size=cfg.prompts_per_step * cfg.group_size,
        num_generations=cfg.group_size, max_completion_length=cfg.max_completion_length, max_steps=cfg.steps,
        learning_rate=cfg.learning_rate, lr_scheduler_type="constant", warmup_steps=0,
        max_grad_norm=cfg.max_grad_norm, logging_steps=1, report_to="none", save_strategy="no", seed=cfg.seed,
        use_cpu=not torch.cuda.is_available(), disable_tqdm=True, temperature=1.0,
    )
    callbacks = [StarvationCallback(jsonl_path)]
    if progress:
        from tqdm.auto import tqdm

        class _Bar(TrainerCallback):
            def on_train_begin(self, *a, **k):
                self.bar = tqdm(total=cfg.steps, desc=f"{cfg.estimator} seed {cfg.seed}", leave=False)

            def on_step_end(self, *a, **k):
                self.bar.update(1)

            def on_train_end(self, *a, **k):
                self.bar.close()

        callbacks.append(_Bar())
    trainer = trainer_class(model=model)(model=model, args=args, reward_funcs=correctness_reward,
                              train_dataset=to_dataset(problems_for(cfg, "train")), processing_class=tok,
                              estimator=cfg.estimator, estimator_options=dict(cfg.estimator_options),
                              callbacks=callbacks)
    trainer.remove_callback(PrinterCallback)  # with tqdm off, transformers would print every log row
    t0 = time.perf_counter()
    trainer.train()
    train_s = time.perf_counter() - t0
    keep = ("step", "reward", "reward_std", "frac_reward_zero_std", "grad_norm", "loss", "entropy")
    history = [{k: v for k, v in row.items() if k in keep or k.startswith("starvation/")}
               for row in trainer.state.log_history if "reward" in row]
    out = dict(config=asdict(cfg), history=history, train_seconds=train_s,
               completions=cfg.steps * cfg.prompts_per_step * cfg.group_size)
    if evaluate_after:
        out["eval"] = evaluate(trainer.model, tok, problems_for(cfg, "eval"), cfg.eval_samples, cfg.eval_seed,
                               cfg.max_completion_length)
    if return_model:
        out["model"], out["tokenizer"] = trainer.model, tok
    return out


def train_tabular(cfg: RunConfig, n_prompts: int = 2000) -> dict:
    """The same comparison on the tabular policy of notebook 04 (no language model; seconds).

    The initial per-prompt success rates are resampled from the tiny LM's, measured on the
    evaluation set, so both policies start from the same starvation profile (floored at
    0.001 as in notebook 04). Every prompt is sampled every step; plain SGD on the logits, so
    the learning rate means what it means in notebook 04, not what it means for AdamW.
    pass@k is exact (``1 - (1 - p)^k``), not estimated from samples.
    """
    from .simulator import SimConfig, simulate

    cfg.validate()
    ev = evaluate_start(cfg)
    p = np.asarray(ev["correct"]) / ev["n_samples"]
    rng = np.random.default_rng(cfg.data_seed)
    p0 = np.clip(rng.choice(p, size=n_prompts), 1e-3, 1 - 1e-3)
    sim = simulate(p0, SimConfig(method=cfg.estimator, G=cfg.group_size, steps=cfg.steps, lr=cfg.learning_rate,
                                 seed=cfg.seed, estimator_options=dict(cfg.estimator_options)))
    history = [{"step": int(t) + 1, "reward": float(s), "starvation/acr": float(f + a),
                "starvation/all_fail": float(f), "starvation/all_pass": float(a)}
               for t, s, f, a in zip(sim.steps, sim.success, sim.all_fail, sim.all_pass)]
    pf = sim.p_final
    return dict(config=asdict(cfg), history=history, train_seconds=None,
                completions=cfg.steps * n_prompts * cfg.group_size,
                eval=dict(greedy=None, greedy_by_level={}, n_samples=None,
                          pass_at_k={int(k): float(np.mean(1 - (1 - pf) ** k)) for k in (1, 2, 4, 8, 16)}))


_START_CACHE: dict = {}


def evaluate_start(cfg: RunConfig) -> dict:
    """The shared starting policy's evaluation (cached per evaluation setting)."""
    if cfg.task == "gsm8k":
        return _gsm8k_start(cfg)
    key = (cfg.policy if cfg.policy != "tabular" else "tiny-lm", cfg.task, cfg.eval_problems, cfg.eval_seed,
           cfg.eval_samples, cfg.max_completion_length)
    if key not in _START_CACHE:
        model, tok = load_policy_model(key[0])
        _START_CACHE[key] = evaluate(model, tok, problems_for(cfg, "eval"), cfg.eval_samples, cfg.eval_seed,
                                     cfg.max_completion_length)
    return _START_CACHE[key]


def summarize_rows(history: list[dict], first: int = 10) -> dict:
    """Mean starvation over the first ``first`` logged steps and over the whole run."""
    def mean(key, rows):
        v = [r[key] for r in rows if r.get(key) is not None]
        return float(np.mean(v)) if v else float("nan")

    return {f"{k}_{span}": mean(f"starvation/{k}", rows) for k in ("acr", "all_fail", "all_pass")
            for span, rows in (("start", history[:first]), ("run", history))}




def change_vs_start(start: float, values, confidence: float = 0.95) -> str:
    """"up", "down" or "no detectable change": where a t-interval over seeds lies relative to ``start``.

    Used to word results from the numbers themselves (notebook 05), never the other way round.
    """
    from .simulator import mean_ci

    _, lo, hi = mean_ci(values, confidence)
    if len(values) < 2:
        return "no detectable change (one seed: no interval)"
    if lo > start:
        return "up"
    if hi < start:
        return "down"
    return "no detectable change"


# ---------------------------------------------------------------------------------------------
# GSM8K with a real instruct model (notebook 06; `grpo-lab compare --policy <model> --task gsm8k`)

@dataclass
class GSM8KConfig:
    """One GSM8K GRPO run. The Colab default fits a free T4: a 1.5B Qwen instruct model in 4-bit with LoRA.

    Every estimator of a comparison shares all of these but ``estimator`` and ``seed``.
    ``smoke=True`` swaps in the tiny LM and the synthetic word problems (CPU, seconds) and
    keeps every other step of the code path.
    """

    model: str = "unsloth/Qwen2.5-1.5B-Instruct"
    estimator: str = "grpo"
    seed: int = 0
    learning_rate: float = 5e-6  # AdamW, constant
    steps: int = 250
    group_size: int = 4
    prompts_per_step: int = 4  # x G completions per step
    max_completion_length: int = 320
    max_grad_norm: float = 1.0
    lora_r: int = 16
    lora_alpha: int = 32
    backend: str = "auto"
    train_n: int | None = None  # None: all 7,473 training problems
    eval_n: int | None = None  # None: all 1,319 test problems
    eval_samples: int = 8  # samples per test problem at temperature 1, for pass@k
    smoke: bool = False


# The protocol of arXiv 2605.07689 as we read it, for bigger GPUs: Qwen3.5-9B, LoRA r=64 / alpha=128 on all
# linear projections, G=4, 7 seeds. The hub id and the optimiser settings are not in the paper's text we have;
# the ones below are ours and must be checked against the paper before quoting a reproduction.
PAPER_PROTOCOL = dict(config=GSM8KConfig(model="Qwen/Qwen3.5-9B", lora_r=64, lora_alpha=128, group_size=4),
                      seeds=list(range(7)))


def smoke_gsm8k(cfg: GSM8KConfig) -> GSM8KConfig:
    """The CPU smoke version of ``cfg``: tiny LM, synthetic problems, a few steps."""
    return GSM8KConfig(**{**asdict(cfg), "model": "tiny-lm", "steps": 3, "prompts_per_step": 4,
                          "max_completion_length": 8, "train_n": 32, "eval_n": 16, "eval_samples": 4,
                          "learning_rate": 1e-4, "smoke": True})


def _prompts_for_generation(tok, problems, chat: bool) -> list[str]:
    from .tasks.gsm8k import SYSTEM_PROMPT

    if not chat:
        return [p.prompt for p in problems]
    return [tok.apply_chat_template([{"role": "system", "content": SYSTEM_PROMPT},
                                     {"role": "user", "content": p.prompt}], tokenize=False,
                                    add_generation_prompt=True) for p in problems]


def train_gsm8k(cfg: GSM8KConfig, out_dir, progress: bool = True) -> dict:
    """Train one estimator on GSM8K (or its smoke stand-in), evaluate on the test split, save ``result.json``.

    The result (config, backend and why, log history with starvation metrics, greedy accuracy
    and per-problem correct counts for pass@k, device) is written atomically to
    ``out_dir/<estimator>-seed<k>.json``, where notebook 07 finds it.
    """
    import torch
    from transformers import PrinterCallback
    from trl import GRPOConfig

    from .policy import load_policy
    from .tasks import correctness_reward, to_dataset
    from .tasks.gsm8k import as_chat_dataset, load_gsm8k
    from .trl import StarvationCallback, trainer_class

    if cfg.estimator not in ESTIMATORS:
        raise ValueError(f"unknown estimator {cfg.estimator!r}; choose from {', '.join(ESTIMATORS)}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    model, tok, info = load_policy(cfg.model, backend=cfg.backend, lora_r=cfg.lora_r, lora_alpha=cfg.lora_alpha,
                                   max_seq_length=1024, seed=cfg.seed)
    chat = cfg.model != "tiny-lm"
    train = load_gsm8k("train", smoke=cfg.smoke, n=cfg.train_n, seed=cfg.seed)
    test = load_gsm8k("test", smoke=cfg.smoke, n=cfg.eval_n)
    cuda = torch.cuda.is_available()
    bf16 = bool(cuda and torch.cuda.is_bf16_supported())
    args = GRPOConfig(
        output_dir=str(out_dir / "trainer"), per_device_train_batch_size=cfg.prompts_per_step * cfg.group_size,
        num_generations=cfg.group_size, max_completion_length=cfg.max_completion_length, max_steps=cfg.steps,
        learning_rate=cfg.learning_rate, lr_scheduler_type="constant", warmup_steps=0, max_grad_norm=cfg.max_grad_norm,
        logging_steps=1, report_to="none", save_strategy="no", seed=cfg.seed, use_cpu=not cuda, bf16=bf16,
        fp16=cuda and not bf16, disable_tqdm=not progress, temperature=1.0)
    name = run_name(cfg.estimator, cfg.seed)
    trainer = trainer_class(model=model)(model=model, args=args, reward_funcs=correctness_reward,
                              train_dataset=as_chat_dataset(train) if chat else to_dataset(train),
                              processing_class=tok, estimator=cfg.estimator,
                              callbacks=[StarvationCallback(out_dir / f"{name}.metrics.jsonl")])
    trainer.remove_callback(PrinterCallback)
    t0 = time.perf_counter()
    trainer.train()
    train_s = time.perf_counter() - t0
    ev = evaluate(trainer.model, tok, _as_prompted(test, _prompts_for_generation(tok, test, chat)),
                  n_samples=cfg.eval_samples, seed=cfg.seed, max_new_tokens=cfg.max_completion_length,
                  batch_size=256 if cfg.smoke else 64)
    res = dict(config=asdict(cfg), backend=info.backend, backend_why=info.why, train_seconds=train_s,
               device=torch.cuda.get_device_name(0) if cuda else "cpu", history=[
                   {k: v for k, v in row.items() if k in ("step", "reward", "frac_reward_zero_std")
                    or k.startswith("starvation/")} for row in trainer.state.log_history if "reward" in row],
               eval=ev)
    write_json_atomic(out_dir / f"{name}.json", res)
    return res


def _as_prompted(problems, prompts):
    from .tasks import Problem

    return [Problem(text, p.answer, p.level) for p, text in zip(problems, prompts)]


__all__ = ["RunConfig", "POLICIES", "evaluate", "evaluate_start", "pass_at_k_of", "start_starvation", "train_one",
           "train_tabular", "load_policy_model", "summarize_rows", "change_vs_start", "GSM8KConfig", "PAPER_PROTOCOL",
           "smoke_gsm8k", "train_gsm8k"]


def gsm8k_config(cfg: RunConfig) -> GSM8KConfig:
    """The GSM8K run that ``grpo-lab compare --task gsm8k`` makes of a :class:`RunConfig`."""
    return GSM8KConfig(model=cfg.policy, estimator=cfg.estimator, seed=cfg.seed, learning_rate=cfg.learning_rate,
                       steps=cfg.steps, group_size=cfg.group_size, prompts_per_step=cfg.prompts_per_step,
                       max_grad_norm=cfg.max_grad_norm, eval_n=cfg.eval_problems, eval_samples=cfg.eval_samples)


def _gsm8k_start(cfg: RunConfig) -> dict:
    import torch

    from .policy import load_policy
    from .tasks.gsm8k import load_gsm8k

    g = gsm8k_config(cfg)
    model, tok, _ = load_policy(g.model, backend=g.backend, lora_r=None)
    test = load_gsm8k("test", n=g.eval_n)
    return evaluate(model, tok, _as_prompted(test, _prompts_for_generation(tok, test, True)), g.eval_samples,
                    cfg.eval_seed, g.max_completion_length, batch_size=64 if torch.cuda.is_available() else 8)
