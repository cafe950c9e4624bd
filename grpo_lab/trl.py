"""Use any grpo_lab estimator inside TRL's real ``GRPOTrainer`` (introduced in notebook 05).

TRL has no advantage hook, so :func:`trainer_class` builds, at call time, a subclass of
whatever ``trl.GRPOTrainer`` is *then* (Unsloth patches it when imported first) that

1. records the rewards TRL gathered from every process (``_calculate_rewards``);
2. lets TRL score the batch as usual (``_generate_and_score_completions``), then replaces
   its advantages with ``compute_advantages(rewards, G, estimator)`` on the gathered rewards,
   sliced to this process, and rewrites the logged advantages so TRL's completions table
   shows the ones actually used.

Only ``multi_objective_aggregation="sum_then_normalize"`` (TRL's default) is supported: the
weighted sum of the reward functions is the reward the estimator sees, NaN where no function
could score a completion (advantage 0, as in TRL).

``loss_fn=`` (optional) replaces TRL's policy loss by a function with the signature of
:func:`grpo_lab.loss.grpo_loss` (notebook 05 trains with a student's one). TRL computes the
per-token log-probabilities as usual; only the loss formula is swapped. It is refused, with the
reason, for settings that formula does not cover (other loss types, sequence-level importance
sampling, vLLM importance-sampling correction, entropy masks or bonuses, MoE auxiliary loss,
Unsloth's rewritten trainer).

``sampling=`` (optional, notebook 09) spends generation where the gradient is: a rule of
:mod:`grpo_lab.sampling` (``"none"``, ``"drop"``, ``"dynamic"``: DAPO's dynamic sampling, or one registered with
:func:`grpo_lab.sampling.register_sampling`), with ``max_generation_rounds``, ``on_exhausted`` and ``skip_prob``;
:class:`TrainerOptions` documents each option.

Every generation batch logs ``sampling/*``: rounds, groups generated, kept, dropped all-fail / all-pass /
other, prompts skipped, completions and new tokens generated, whether it ran short; cumulative totals are in
``trainer.generated``. Rows move between processes (every process sees every round's rows, then keeps its
slice), so under ``accelerate launch`` the kept groups and the update equal a one-process run's on the same
rewards; with vLLM rollouts (``generation="vllm"``) their sampling log-probs and importance ratios are merged
too. Refused, by name: Unsloth's trainer (never executed there), multimodal batches, iterable datasets, and loss
types whose normaliser counts padded rows (``grpo``, ``dr_grpo``, ...).

``generation=`` (optional): the engine that samples the rollouts (:mod:`grpo_lab.generation`); ``"vllm"`` serves
TRL's colocated-vLLM interface from grpo-lab's engine, whose weight hand-over after every optimizer step is checked
by a canary (a run whose hand-over did not take effect stops with :class:`grpo_lab.generation.StaleWeights`).
"""

from __future__ import annotations

import torch

from dataclasses import dataclass, field
from typing import Callable

from .advantages import AVSPOController, compute_advantages, estimator_names, is_estimator
from .generation import get_engine
from .loss import LOSS_TYPES, kl_k3
from .sampling import PromptStream, check_sampling, check_trainer_settings, get_sampling, sampled_batch
from .starvation import add_success_signatures, batch_metrics, filter_groups, success_signatures

try:  # transformers is optional for ``import grpo_lab``; the callback needs it
    from transformers import TrainerCallback
except ImportError:  # pragma: no cover
    TrainerCallback = object


def is_unsloth_patched(cls) -> bool:
    """Whether ``cls`` is Unsloth's rewrite of a TRL trainer (``import unsloth`` replaces ``trl.GRPOTrainer``)."""
    return cls.__name__.startswith("Unsloth") or "unsloth" in (cls.__module__ or "").lower()


def is_unsloth_model(model) -> bool:
    """Whether ``model`` was loaded by Unsloth's ``FastLanguageModel`` (it then has ``for_training``)."""
    seen = model
    for _ in range(4):  # the model, its PEFT wrapper's base model, that one's inner model
        if seen is None:
            return False
        if hasattr(seen, "for_training") or "unsloth" in type(seen).__module__.lower():
            return True
        seen = getattr(seen, "base_model", None) if getattr(seen, "base_model", None) is not seen else None
    return False


_PRISTINE = {}


def _vllm_left_unloaded(*_args, **_kwargs) -> bool:
    """TRL's vLLM probe while grpo-lab imports TRL's trainer on a machine that cannot want TRL's vLLM path
    (:func:`import_trl_trainer`): vLLM counts as absent, so TRL's generation modules skip their import of it."""
    return False


def import_trl_trainer():
    """Import TRL's ``trl.trainer.grpo_trainer``; on a machine without CUDA and without Unsloth, without its vLLM path.

    With vLLM installed, TRL's trainer module imports vLLM's engine (and Ray through it) whether or not a run sets
    ``use_vllm``: most of the module's import time (``benchmarks/bench_trl_import.py``; about 12 s of CPU on this
    project's 2-core machine), paid by every process that trains (a study worker, a lesson's kernel, a test that
    starts a process). grpo-lab's own vLLM rollouts (``generation="vllm"``) do not use TRL's vLLM classes, so where
    TRL's own vLLM path cannot be wanted (no CUDA device, and Unsloth, which drives that path, neither imported nor
    installed), TRL's vLLM probe answers False while the module is first imported. TRL's own path
    (``GRPOConfig(use_vllm=True)``) is then unavailable in this process, and :class:`GrpoLabMixin` refuses it by
    name. Nothing changes where the module or vLLM was already imported, on a GPU, or beside Unsloth."""
    import sys

    from .policy import unsloth_installed

    if ("trl.trainer.grpo_trainer" in sys.modules or "vllm" in sys.modules or "unsloth" in sys.modules
            or unsloth_installed() or torch.cuda.is_available()):
        import trl.trainer.grpo_trainer  # noqa: F401
        return
    import trl.import_utils as probe

    real = probe.is_vllm_available
    probe.is_vllm_available = _vllm_left_unloaded
    try:
        import trl.trainer.grpo_trainer  # noqa: F401
    finally:
        probe.is_vllm_available = real


def trl_vllm_left_unloaded() -> bool:
    """Whether TRL's own vLLM path is unavailable in this process because :func:`import_trl_trainer` left it
    unloaded: vLLM is installed, and TRL's generation module still holds the probe that answered False while it was
    imported (its ``VLLMGeneration`` asks that probe, so it would refuse to start)."""
    import importlib.util
    import sys

    module = sys.modules.get("trl.generation.vllm_generation")
    return (module is not None and getattr(module, "is_vllm_available", None) is _vllm_left_unloaded
            and importlib.util.find_spec("vllm") is not None)


def pristine_grpo_trainer():
    """TRL's own ``GRPOTrainer``, even after Unsloth replaced ``trl.GRPOTrainer`` in this process.

    Unsloth rewrites TRL's trainer source into a new class, so the original is not in its MRO.
    When ``trl.GRPOTrainer`` is patched, TRL's ``grpo_trainer.py`` is executed once more into a
    private module (same package, so its relative imports resolve) and its class is returned.
    Unsloth's global patches to transformers still apply to it: this path has been exercised on a
    CPU with a simulated patch, not yet on a GPU with Unsloth (see docs/gpu.md).
    """
    import importlib.util
    import sys

    import trl

    import_trl_trainer()
    import trl.trainer.grpo_trainer as module

    if not is_unsloth_patched(trl.GRPOTrainer) and not is_unsloth_patched(module.GRPOTrainer):
        return module.GRPOTrainer
    if "cls" not in _PRISTINE:
        name = "trl.trainer._grpo_lab_pristine_grpo_trainer"
        spec = importlib.util.spec_from_file_location(name, module.__file__)
        fresh = importlib.util.module_from_spec(spec)
        sys.modules[name] = fresh
        spec.loader.exec_module(fresh)
        if is_unsloth_patched(fresh.GRPOTrainer):  # pragma: no cover - Unsloth rewrote the file on disk
            raise RuntimeError("TRL's own GRPOTrainer cannot be recovered in this process (Unsloth rewrote it); "
                               "restart the Python process (Colab: Runtime > Restart) before training a plain model")
        _PRISTINE["cls"] = fresh.GRPOTrainer
    return _PRISTINE["cls"]


@dataclass
class TrainerOptions:
    """grpo-lab's options of a :func:`trainer_class` trainer (keywords of its constructor, beside TRL's own).

    ``estimator``: an advantage estimator's name (:func:`grpo_lab.advantages.estimator_names`);
    ``estimator_options``: its keyword options (``avspo`` gets an :class:`~grpo_lab.advantages.AVSPOController`
    unless one is given); ``loss_fn``: a function like :func:`grpo_lab.loss.grpo_loss` in place of TRL's loss
    formula (None: TRL's); ``sampling``: a rule of :mod:`grpo_lab.sampling`; ``max_generation_rounds``: a
    refilling rule's most rounds per step; ``on_exhausted``: what a refilling rule does when they run out
    ("train" on the informative groups found, or "skip" the policy-gradient step); ``skip_prob``: the
    probability of replacing, before generation, a prompt whose latest group was degenerate; ``group_filter``:
    ``fn(rewards, G) -> one bool per group`` in place of the rule's filter (notebook 09's exercise);
    ``generation``: the engine that samples the rollouts (:mod:`grpo_lab.generation`: "transformers", TRL's own
    ``model.generate``; "vllm", vLLM in this process with the weights handed over after every optimizer step and
    checked by the canary); ``generation_dtype``: the dtype vLLM samples in (None: the model's); ``logprobs``: how the training pass computes the completions' log-probabilities
    ("trl": TRL's fused LM-head kernel; "completion": :func:`completion_logprobs`, the completion positions only,
    on a one-process CPU run).
    """

    estimator: str = "grpo"
    estimator_options: dict = field(default_factory=dict)
    loss_fn: Callable | None = None
    sampling: str = "none"
    max_generation_rounds: int = 8
    on_exhausted: str = "train"
    skip_prob: float = 0.0
    group_filter: Callable | None = None
    generation: object = "transformers"
    generation_dtype: str | None = None
    logprobs: str = "trl"

    def validate(self, base) -> "TrainerOptions":
        """Raise naming the first bad option (``base``: the trainer class they will run under)."""
        check_sampling(self.sampling, self.max_generation_rounds, self.on_exhausted, self.skip_prob)
        if (get_sampling(self.sampling).acts or self.skip_prob > 0) and is_unsloth_patched(base):
            raise ValueError(f"sampling={self.sampling!r} / skip_prob under Unsloth's trainer has never been "
                             "executed; build the trainer with grpo_lab.trl.trainer_class(model=model) on a "
                             "plain model, or train with sampling='none'")
        if self.loss_fn is not None and not callable(self.loss_fn):
            raise TypeError(f"loss_fn must be a function like grpo_lab.loss.grpo_loss, got {type(self.loss_fn).__name__}")
        if not is_estimator(self.estimator):
            raise ValueError(f"unknown advantage estimator {self.estimator!r}; choose one of "
                             f"{', '.join(estimator_names())}")
        options = {k: v for k, v in self.estimator_options.items() if k != "controller"}
        try:  # a bad option fails here, when the trainer is built, not at the first step after loading and generation
            compute_advantages(torch.tensor([0.0, 1.0, 1.0, 0.0]), 2, self.estimator, **options)
        except (TypeError, ValueError) as e:
            raise type(e)(str(e)) from None
        if self.logprobs not in LOGPROB_PASSES:
            raise ValueError(f"logprobs must be one of {', '.join(LOGPROB_PASSES)}, got {self.logprobs!r}")
        engine = get_engine(self.generation)
        if engine.replaces_rollouts and is_unsloth_patched(base):
            raise ValueError(f"generation={engine.name!r} replaces TRL's rollouts, which Unsloth's trainer rewrites; "
                             "on Unsloth use its own vLLM path (RunConfig.fast_inference)")
        if self.group_filter is not None and not callable(self.group_filter):
            raise TypeError(f"group_filter must be a function (rewards, G) -> keep per group, got "
                            f"{type(self.group_filter).__name__}")
        return self


class GrpoLabMixin:
    """What :func:`trainer_class` adds to a ``GRPOTrainer`` (TRL's, or Unsloth's rewrite of it): grpo-lab's
    advantages in place of TRL's, an optional loss function, a sampling rule, and the bookkeeping the callbacks
    read. Its options are :class:`TrainerOptions`; its state is declared in ``__init__``."""

    _grpo_lab_base = None  # the trainer class it was combined with (set by trainer_class; next in the MRO)

    def __init__(self, *args, estimator: str = "grpo", estimator_options: dict | None = None, loss_fn=None,
                 sampling: str = "none", max_generation_rounds: int = 8, on_exhausted: str = "train",
                 skip_prob: float = 0.0, group_filter=None, generation="transformers", generation_dtype=None,
                 logprobs: str = "trl", **kwargs):
        base = self._grpo_lab_base
        opts = TrainerOptions(estimator, dict(estimator_options or {}), loss_fn, sampling, max_generation_rounds,
                              on_exhausted, skip_prob, group_filter, generation, generation_dtype,
                              logprobs).validate(base)
        plain = kwargs.get("model", args[0] if args else None)
        if is_unsloth_patched(base) and plain is not None and not isinstance(plain, str) \
                and not is_unsloth_model(plain):
            raise TypeError(f"{base.__name__} is Unsloth's trainer (unsloth was imported in this process) and "
                            f"{type(plain).__name__} was not loaded by Unsloth. Build the class with "
                            "grpo_lab.trl.trainer_class(model=model) to get TRL's own trainer for it.")
        config = kwargs.get("args", args[2] if len(args) > 2 else None)
        if getattr(config, "use_vllm", False) and trl_vllm_left_unloaded():
            raise ValueError("GRPOConfig(use_vllm=True) asks for TRL's own vLLM path, which grpo_lab left unloaded "
                             "in this process (no CUDA device and no Unsloth: grpo_lab.trl.import_trl_trainer; on a "
                             "CPU that path fails at its first weight sync, docs/guide/generation.md). Use "
                             "generation='vllm' (grpo-lab's vLLM rollouts), or run `import trl.trainer.grpo_trainer` "
                             "in a fresh process before building the trainer class.")
        super().__init__(*args, **kwargs)
        if getattr(self, "multi_objective_aggregation", "sum_then_normalize") != "sum_then_normalize":
            raise ValueError("grpo_lab estimators need multi_objective_aggregation='sum_then_normalize'")
        self.grpo_lab_options = opts
        engine = get_engine(opts.generation)
        if engine.replaces_rollouts:  # TRL's colocated-vLLM interface, served by grpo-lab's engine
            if getattr(self, "use_vllm", False):
                raise ValueError(f"generation={engine.name!r} replaces TRL's own vLLM path: leave use_vllm=False")
            self.vllm_generation = engine.rollouts(self, opts.generation_dtype)
            self.use_vllm, self.vllm_mode, self._last_loaded_step = True, "colocate", -1
        self.estimator, self.estimator_options, self.loss_fn = opts.estimator, opts.estimator_options, opts.loss_fn
        if opts.loss_fn is not None:
            _check_loss_fn_settings(self, base)
        if opts.estimator == "avspo" and "controller" not in self.estimator_options:
            self.estimator_options["controller"] = AVSPOController()
        self.sampling, self.sampling_rule = opts.sampling, get_sampling(opts.sampling)
        self.max_generation_rounds, self.on_exhausted = int(opts.max_generation_rounds), opts.on_exhausted
        self.skip_prob, self.group_filter = float(opts.skip_prob), opts.group_filter  # None: the rule's filter
        # state
        self.last_rewards = None  # gathered rewards of the latest batch, all processes
        self.last_advantages = None  # advantages used for them, all processes
        self.last_sampling = None  # what the latest generation batch's sampling did (its rounds' rewards, ...)
        self.generated = dict(completions=0, tokens=0, groups=0, kept=0, trained_informative=0, rounds=0,
                              batches=0, skipped_prompts=0)  # cumulative over the run
        self._grpo_lab_rewards_per_func = None  # TRL's per-function rewards of the batch being scored
        self.last_fluke = None  # the latest round's largest-advantage completion: text, advantage, its group's rewards
        self.last_successes = None  # the latest round's successes: sole and shared, their lengths and signs
        self._warned_binary = False  # the sampling warning about non-0/1 rewards is given once
        self._stream = self._seen = self._skip_gen = None  # the prompt stream, prompts' latest verdicts, skip draws
        if self.sampling_rule.acts or self.skip_prob > 0:
            check_trainer_settings(self)
            self._stream, self._seen = PromptStream(self.train_dataset, self.args.seed), {}
            self._skip_gen = torch.Generator().manual_seed(int(self.args.seed) * 1_000_003 + 15_485_863)
        self.add_callback(UpdateNorms(self))  # every run logs the size of its updates (update/*, issue 49)
        for cb in self.callback_handler.callbacks:
            if isinstance(cb, (StarvationCallback, CompletionBudget)):
                cb.attached = True
            if isinstance(cb, CompletionBudget):
                cb.trainer = self  # it reads self.generated

    def _calculate_rewards(self, *args, **kwargs):
        rewards_per_func = super()._calculate_rewards(*args, **kwargs)
        self._grpo_lab_rewards_per_func = rewards_per_func
        return rewards_per_func

    def _score(self, inputs):
        """One generation round: TRL generates and scores, then grpo_lab's advantages replace TRL's."""
        output = super()._generate_and_score_completions(inputs)
        per_func = self._grpo_lab_rewards_per_func
        unscorable = torch.isnan(per_func).all(dim=1)
        rewards = (per_func * self.reward_weights.to(per_func.device).unsqueeze(0)).nansum(dim=1)
        rewards[unscorable] = torch.nan
        mode = "train" if self.model.training else "eval"
        G = self.num_generations if mode == "train" else self.num_generations_eval
        ctl = self.estimator_options.get("controller")
        seen = len(ctl.history) if isinstance(ctl, AVSPOController) else None
        adv = compute_advantages(rewards.float().cpu(), G, self.estimator, **self.estimator_options)
        adv = adv.to(output["advantages"].device, output["advantages"].dtype)
        if seen is not None and len(ctl.history) > seen:  # AVSPO's gate as it acted on this batch (issue 59)
            _, threshold, active, k = ctl.history[-1]
            for name, v in (("threshold", threshold), ("active", float(active)), ("k", float(k))):
                self._metrics[mode][f"avspo/{name}"].append(float(v))
        n_local = len(inputs)
        start = self.accelerator.process_index * n_local
        output["advantages"] = adv[start:start + n_local]
        logged = self._logs["advantages"]  # TRL appended this batch's advantages last
        for _ in range(min(len(adv), len(logged))):
            logged.pop()
        logged.extend(adv.tolist())
        self.last_rewards, self.last_advantages = rewards.detach().cpu(), adv.detach().cpu()
        top = int(torch.argmax(self.last_advantages))
        self.last_fluke = None  # the completion that received the round's largest advantage (issue 39)
        if start <= top < start + n_local:
            ids = output["completion_ids"][top - start][output["completion_mask"][top - start].bool()]
            group = self.last_rewards[(top // G) * G:(top // G + 1) * G]
            self.last_fluke = dict(advantage=float(self.last_advantages[top]), group=top // G,
                                   group_rewards=[None if torch.isnan(r) else float(r) for r in group],
                                   completion=self._tokenizer.decode(ids, skip_special_tokens=True))
        self.last_successes = None  # what the round's successes look like, sole (k = 1) and shared (issue 82)
        if mode == "train" and any(isinstance(cb, StarvationCallback) for cb in self.callback_handler.callbacks):
            self.last_successes = self._success_signs(inputs, output, start, G)
        for cb in self.callback_handler.callbacks:
            if isinstance(cb, StarvationCallback):
                cb.observe(self, mode, self.last_rewards, self.last_advantages, G)
        probe = getattr(self, "rank_probe", None)
        if probe is not None and mode == "train":
            probe.observe(self, output, G)
        return output

    def _success_signs(self, inputs, output, start: int, G: int):
        """:func:`grpo_lab.starvation.success_signatures` of this process's successes: each one's length in tokens
        and its shortcut signs (:func:`grpo_lab.tasks.signatures`, read against its own prompt), each counted as the
        sole success of its group or a shared one by the whole batch's rewards. Other processes' completions are
        not read (a multi-process run records the main process's share)."""
        from .tasks import Problem, _text, signatures

        signs = [None] * len(self.last_rewards)
        for i, x in enumerate(inputs):
            if self.last_rewards[start + i] == 1:
                mask = output["completion_mask"][i].bool()
                text = self._tokenizer.decode(output["completion_ids"][i][mask], skip_special_tokens=True)
                problem = Problem(_text(x["prompt"]), str(x.get("answer", "")), 0)
                signs[start + i] = {**signatures(text, problem), "length": int(mask.sum())}
        return success_signatures(self.last_rewards, G, signs)

    def _generate_and_score_completions(self, inputs):
        if not self.model.training:
            return self._score(inputs)
        if not self.sampling_rule.acts and self.skip_prob == 0:
            output = self._score(inputs)
            f = filter_groups(self.last_rewards, self.num_generations)
            tokens = int(self.accelerator.gather(output["completion_mask"].sum().reshape(1)).sum())
            self._account(rounds=1, f=f, kept=int(f.keep.numel()), skipped=0, short=False,
                          rewards=[self.last_rewards], tokens=tokens)
            return output
        return sampled_batch(self, inputs)

    def log(self, logs, *args, **kwargs):
        """Every training log row also carries the run's cumulative ``sampling/completions_total`` and
        ``sampling/tokens_total`` (exact at any logging window: the x axis of equal-cost figures)."""
        if "loss" in logs and self.generated["batches"]:
            logs = {**logs, "sampling/completions_total": self.generated["completions"],
                    "sampling/tokens_total": self.generated["tokens"]}
        return super().log(logs, *args, **kwargs)

    def _account(self, rounds, f, kept, skipped, short, rewards, tokens):
        """Log this generation batch's sampling (``f``: the filter over every group generated for it) and add
        it to ``self.generated``."""
        done = [r for r in self.state.log_history if "sampling/completions_total" in r]
        if self.generated["batches"] == 0 and done:  # resumed from a checkpoint: carry the totals on
            self.generated.update(completions=done[-1]["sampling/completions_total"],
                                  tokens=done[-1]["sampling/tokens_total"])
        G = self.num_generations
        n_groups = int(f.keep.numel())
        step = dict(rounds=rounds, groups=n_groups, kept=kept, informative=int(f.keep.sum()),
                    dropped_all_fail=int(f.all_fail.sum()), dropped_all_pass=int(f.all_pass.sum()),
                    dropped_other=int(f.other.sum()), completions=n_groups * G, tokens=tokens,
                    skipped_prompts=skipped, short=int(short))
        step["trained_informative"] = kept
        if not self.sampling_rule.drops:  # nothing is dropped: the degenerate groups train with advantage 0
            step.update(dropped_all_fail=0, dropped_all_pass=0, dropped_other=0, trained_informative=step["informative"])
        for k, v in step.items():
            self._metrics["train"][f"sampling/{k}"].append(float(v))
        for k in ("completions", "tokens", "rounds", "skipped_prompts"):
            self.generated[k] += step[k]
        self.generated["groups"] += n_groups
        self.generated["kept"] += step["kept"]
        self.generated["trained_informative"] += step["trained_informative"]
        self.generated["batches"] += 1
        self.last_sampling = dict(step, round_rewards=[r.tolist() for r in rewards])

    def _get_per_token_logps_and_entropies(self, model, input_ids, attention_mask, logits_to_keep, batch_size=None,
                                           compute_entropy=False, compute_aux_loss=False, **extra):
        why = self._completion_pass_refused(model, compute_aux_loss, extra)
        if why is not None:  # TRL's own pass (logprobs="trl", or what completion_logprobs does not cover)
            return super()._get_per_token_logps_and_entropies(model, input_ids, attention_mask, logits_to_keep,
                                                              batch_size, compute_entropy, compute_aux_loss, **extra)
        with self.accelerator.autocast():
            logps, entropies = completion_logprobs(model, input_ids, attention_mask, logits_to_keep,
                                                   batch_size=batch_size, temperature=self.temperature,
                                                   compute_entropy=compute_entropy)
        return logps, entropies, None

    def _completion_pass_refused(self, model, aux_loss, extra) -> str | None:
        """Why this forward goes through TRL's own pass, or None (``logprobs="completion"`` applies)."""
        if self.grpo_lab_options.logprobs != "completion":
            return "logprobs='trl'"
        if aux_loss or any(v is not None for v in extra.values()):
            return "multimodal inputs or a MoE auxiliary loss"
        if self.accelerator.num_processes > 1:
            return "several processes (the backbone is called past DDP's forward)"
        if getattr(self, "_entropy_bonus_enabled", False) or getattr(self, "top_entropy_quantile", 1.0) < 1.0:
            return "an entropy bonus or entropy mask (their entropy needs a gradient)"
        return None

    def _compute_loss(self, model, inputs):
        if self.loss_fn is None:
            return super()._compute_loss(model, inputs)
        return _loss_from_fn(self, model, inputs)


LOGPROB_PASSES = ("trl", "completion")  # RunConfig.logprobs


def completion_logprobs(model, input_ids, attention_mask, logits_to_keep: int, batch_size: int | None = None,
                        temperature: float = 1.0, compute_entropy: bool = False, share_prompts: bool = True):
    """Per-token log-probabilities of the last ``logits_to_keep`` tokens of ``input_ids`` (the completion), and
    their entropies (without gradient), computed on those positions only: the LM head runs only where a
    completion token is predicted, in the autocast dtype of the caller, the log-softmax in float32 (issue 36).

    ``share_prompts``: rows whose prompt part is identical (a GRPO group: G completions of one prompt) run that
    prompt through the backbone once, and their completions attend to its keys and values (a cache expanded to
    every row, through which the gradient flows back to the shared prompt). Causal attention makes this the same
    computation as one forward per row; with G = 4 and prompts longer than completions it halves the tokens the
    backbone sees. Not under gradient checkpointing (which refuses a cache): then one forward per row.

    TRL's fused LM-head kernel scores every position on a device without Triton (a CPU) and recomputes the head in
    its backward: on SmolLM2 with 8 rows of 67 prompt + 32 completion tokens that was 2.8 s of a 15 s step
    (docs/benchmarks.md). The values are TRL's up to the dtype's rounding (tested against a full forward, values
    and gradients); padding positions (``attention_mask == 0``) get 0, as TRL's do. Logit soft-capping and scaling
    are not applied: a model that has them is refused by name.
    """
    inner = model.get_base_model() if hasattr(model, "get_base_model") else model
    text = inner.config.get_text_config() if hasattr(inner.config, "get_text_config") else inner.config
    for attr in ("final_logit_softcapping", "logit_scale", "output_multiplier", "lm_head_multiplier",
                 "logits_scaling"):
        if getattr(text, attr, None) not in (None, 1.0):
            raise ValueError(f"logprobs='completion' does not apply {attr} ({type(inner).__name__}); use "
                             "logprobs='trl'")
    backbone, head = inner.base_model, inner.get_output_embeddings()
    share = share_prompts and not checkpointing(inner) and input_ids.size(1) > logits_to_keep
    n = input_ids.size(0)
    batch_size = batch_size or n
    logps, ents = [], []
    for start in range(0, n, batch_size):
        ids, mask = input_ids[start:start + batch_size], attention_mask[start:start + batch_size]
        hidden = (_shared_prompt_hidden(backbone, ids, mask, logits_to_keep) if share else
                  backbone(input_ids=ids, attention_mask=mask, use_cache=False).last_hidden_state[
                      :, -logits_to_keep - 1:-1])
        logits = head(hidden).float()
        if temperature != 1.0:
            logits = logits / temperature
        log_z = logits.logsumexp(-1)
        target = ids[:, -logits_to_keep:]
        keep = mask[:, -logits_to_keep:].to(logits.dtype)
        logps.append((logits.gather(-1, target.unsqueeze(-1)).squeeze(-1) - log_z) * keep)
        if compute_entropy:
            with torch.no_grad():
                probs = (logits - log_z.unsqueeze(-1)).exp()
                ents.append((log_z - (probs * logits).sum(-1)) * keep)
    return torch.cat(logps), (torch.cat(ents) if compute_entropy else None)


def checkpointing(model) -> bool:
    """Whether gradient checkpointing is on, read in whichever form the installed transformers has:
    ``model.is_gradient_checkpointing`` (transformers 5), or the modules' own ``gradient_checkpointing`` flags
    (the attribute is gone in transformers 6)."""
    flag = getattr(model, "is_gradient_checkpointing", None)
    if flag is not None:
        return bool(flag)
    return any(bool(getattr(m, "gradient_checkpointing", False)) for m in model.modules())


def cache_keyword(backbone) -> str:
    """The keyword a model's forward takes its key/value cache by: ``past_key_values`` (transformers 5), or
    ``cache`` where the model's forward has it and not the old name (announced for transformers 5.40)."""
    import inspect

    params = inspect.signature(backbone.forward).parameters
    return "cache" if "cache" in params and "past_key_values" not in params else "past_key_values"


def _shared_prompt_hidden(backbone, ids, mask, K: int):
    """The hidden states that predict the last ``K`` tokens of each row (``[rows, K, hidden]``), each distinct
    prompt (the first ``len - K`` tokens and their mask) run once: its last hidden state predicts the first
    completion token, and its keys and values, expanded to its rows, serve the completions' forward."""
    P = ids.size(1) - K
    prompt = torch.cat([ids[:, :P], mask[:, :P].to(ids.dtype)], dim=1)
    unique, inverse = torch.unique(prompt, dim=0, return_inverse=True)
    if unique.size(0) == ids.size(0):  # nothing to share
        return backbone(input_ids=ids, attention_mask=mask, use_cache=False).last_hidden_state[:, -K - 1:-1]
    first = backbone(input_ids=unique[:, :P], attention_mask=unique[:, P:], use_cache=True)
    key = cache_keyword(backbone)
    cache = getattr(first, key, None) if getattr(first, key, None) is not None else first.past_key_values
    cache.batch_select_indices(inverse)
    rest = backbone(input_ids=ids[:, P:], attention_mask=mask, use_cache=True, **{key: cache})
    return torch.cat([first.last_hidden_state[inverse, -1:], rest.last_hidden_state[:, :-1]], dim=1)


def trainer_class(base=None, model=None):
    """A ``GRPOTrainer`` subclass that takes ``estimator=`` and ``estimator_options=``.

    ``base`` defaults to ``trl.GRPOTrainer`` looked up now, not at import time, chosen by the
    model: once ``unsloth`` has been imported, ``trl.GRPOTrainer`` is Unsloth's, which only
    works with models loaded by Unsloth. Pass ``model=`` and a plain (transformers / peft)
    model gets TRL's own trainer (:func:`pristine_grpo_trainer`) while an Unsloth model gets
    Unsloth's. Without ``model=`` under a patched TRL, constructing the trainer with a plain
    model is a ``TypeError`` that says what to do (instead of Unsloth's ``no attribute
    'for_training'`` deep in training).
    """
    if base is None:
        import trl

        import_trl_trainer()
        base = trl.GRPOTrainer
        if model is not None and is_unsloth_patched(base) and not is_unsloth_model(model):
            base = pristine_grpo_trainer()

    return type(f"GrpoLab{base.__name__}", (GrpoLabMixin, base), {"_grpo_lab_base": base})


def _check_loss_fn_settings(trainer, base) -> None:
    """Refuse ``loss_fn`` where TRL's loss would do more than :func:`grpo_lab.loss.grpo_loss` computes."""
    args = trainer.args
    unsupported = {
        "Unsloth's rewritten trainer": is_unsloth_patched(base),
        f"loss_type={trainer.loss_type!r} (supported: {', '.join(LOSS_TYPES)})": trainer.loss_type not in LOSS_TYPES,
        "importance_sampling_level='sequence'": getattr(trainer, "importance_sampling_level", "token") != "token",
        "top_entropy_quantile < 1": getattr(trainer, "top_entropy_quantile", 1.0) < 1.0,
        "off_policy_mask_threshold": getattr(trainer, "off_policy_mask_threshold", None) is not None,
        "use_vllm (importance-sampling correction)": bool(getattr(trainer, "use_vllm", False)),
        "an entropy bonus": bool(getattr(trainer, "_entropy_bonus_enabled", False)),
        "a MoE auxiliary loss": bool(getattr(trainer, "aux_loss_enabled", False)),
        "delta (two-sided clipping)": getattr(args, "delta", None) is not None,
        "use_bias_correction_kl with beta != 0 (set use_bias_correction_kl=False)":
            trainer.beta != 0.0 and bool(getattr(args, "use_bias_correction_kl", False)),
    }
    refused = [name for name, on in unsupported.items() if on]
    if refused:
        raise ValueError("loss_fn replaces TRL's clipped GRPO loss and cannot honour: " + "; ".join(refused))


def _loss_from_fn(trainer, model, inputs):
    """TRL's log-probabilities, then ``trainer.loss_fn`` in place of TRL's loss formula (same scaling and logs)."""
    prompt_ids, completion_ids = inputs["prompt_ids"], inputs["completion_ids"]
    input_ids = torch.cat([prompt_ids, completion_ids], dim=1)
    attention_mask = torch.cat([inputs["prompt_mask"], inputs["completion_mask"]], dim=1)
    mask = inputs["completion_mask"] if "tool_mask" not in inputs else inputs["completion_mask"] * inputs["tool_mask"]
    logp, entropies, _ = trainer._get_per_token_logps_and_entropies(
        model, input_ids, attention_mask, completion_ids.size(1), compute_entropy=True)
    old = inputs.get("old_per_token_logps")
    old = logp.detach() if old is None else old
    ref = inputs.get("ref_per_token_logps") if trainer.beta != 0.0 else None
    mode = "train" if trainer.model.training else "eval"
    accumulation = trainer.current_gradient_accumulation_steps if mode == "train" else 1.0
    num_tokens = None
    if trainer.loss_type == "dapo":  # TRL's normaliser: the generation batch's tokens, per accumulation window
        num_tokens = inputs["num_items_in_batch"].clamp(min=1.0) / trainer.accelerator.num_processes
        if mode == "train":
            num_tokens = num_tokens * accumulation / trainer.args.steps_per_generation
        accumulation = 1.0  # already inside num_tokens
    loss = trainer.loss_fn(logp, old, inputs["advantages"], mask, epsilon_low=trainer.epsilon_low,
                           epsilon_high=trainer.epsilon_high, beta=trainer.beta, ref_logp=ref,
                           loss_type=trainer.loss_type, max_completion_length=trainer.max_completion_length,
                           num_tokens=num_tokens)
    if not isinstance(loss, torch.Tensor) or loss.dim() != 0:
        raise ValueError(f"loss_fn must return a scalar tensor, got {loss!r:.80}")
    if not torch.isfinite(loss):
        raise ValueError(f"loss_fn returned {loss.item()} on a batch of {len(logp)} completions")

    def masked_mean(x):
        totals = trainer.accelerator.reduce(torch.stack([(x * mask).sum(), mask.sum().float()]), reduction="sum")
        return (totals[0] / totals[1].clamp(min=1.0)).item()

    trainer._metrics[mode]["entropy"].append(masked_mean(entropies))
    if ref is not None:
        trainer._metrics[mode]["kl"].append(masked_mean(kl_k3(logp, ref).detach()))
    return loss / accumulation


class StarvationCallback(TrainerCallback):
    """Logs starvation metrics of every batch a :func:`trainer_class` trainer scores (notebook 05).

    Per generation batch (all processes' rewards, the advantages actually used) it records
    ``starvation/acr``, ``starvation/all_fail``, ``starvation/all_pass``, ``starvation/mixed``
    and ``starvation/frac_nonzero_adv`` into TRL's metrics (with dynamic sampling: of every round generated,
    so they describe what the policy produced, not the filtered batch; the trainer's ``sampling/*`` say what
    was kept), so they are averaged over the
    logging window and reach the trainer's logs, ``trainer_state.json`` and whatever
    ``report_to`` names (TensorBoard, W&B, …). The per-prompt success histogram (groups with
    k = 0 … G correct, summed over the window) is not a scalar: it goes to the JSONL file
    and to the trainer's log history as ``starvation/success_hist``; so does ``starvation/max_advantage_completion``:
    the completion that received the window's largest advantage (its text, advantage and its group's rewards: the
    update that carried a lucky success, issue 39); and ``starvation/successes``, what the window's successful
    completions look like, the sole success of an otherwise all-fail group apart from the others (their counts and
    summed lengths and shortcut signs, :func:`grpo_lab.starvation.success_signatures`; issue 82's study 7).

    With ``jsonl_path``, the main process appends one JSON object per log: the trainer's
    logs plus ``step`` and the histogram. Formulas: :func:`grpo_lab.starvation.batch_metrics`.
    """

    def __init__(self, jsonl_path=None):
        self.jsonl_path = jsonl_path
        self.attached = False
        self._hist = None
        self._fluke = None
        self._successes = None

    def observe(self, trainer, mode: str, rewards, advantages, G: int) -> None:
        m = batch_metrics(rewards, advantages, G)
        for k, v in m.items():  # every scalar of batch_metrics: a new diagnostic needs no change here
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                trainer._metrics[mode][f"starvation/{k}"].append(float(v))
        if m["success_hist"] is not None and mode == "train":
            h = m["success_hist"]
            self._hist = h if self._hist is None or len(self._hist) != len(h) else [a + b for a, b in
                                                                                   zip(self._hist, h)]
        if mode == "train":
            self._successes = add_success_signatures(self._successes, getattr(trainer, "last_successes", None))
        fluke = getattr(trainer, "last_fluke", None)
        if mode == "train" and fluke is not None and (self._fluke is None or fluke["advantage"] > self._fluke["advantage"]):
            self._fluke = fluke  # the logging window's largest advantage, for the JSONL row

    def on_train_begin(self, args, state, control, **kwargs):
        if not self.attached:
            raise RuntimeError("StarvationCallback needs a trainer built by grpo_lab.trl.trainer_class(); "
                               "a stock GRPOTrainer does not report its rewards and advantages to callbacks")

    def on_log(self, args, state, control, logs=None, **kwargs):
        logs = dict(logs or {})
        if not any(k.startswith("starvation/") for k in logs):
            return
        beta = float(getattr(args, "beta", 0.0) or 0.0)
        if beta and isinstance(logs.get("kl"), (int, float)) and isinstance(logs.get("loss"), (int, float)):
            # the KL penalty's part of the loss, beta * mean KL, and its share beside the policy-gradient part
            # (loss - beta * KL; approximately: TRL normalises both alike, over the batch's tokens) (issue 49)
            term = beta * float(logs["kl"])
            derived = {"kl/term": term, "kl/share_of_loss": term / (abs(float(logs["loss"]) - term) + term)
                       if term else 0.0}
            logs.update(derived)
            if state.log_history:  # and in the history a run's result keeps
                state.log_history[-1].update(derived)
        row = {"step": state.global_step, **logs, "starvation/success_hist": self._hist,
               "starvation/max_advantage_completion": self._fluke, "starvation/successes": self._successes}
        if state.log_history:
            state.log_history[-1]["starvation/success_hist"] = self._hist
            state.log_history[-1]["starvation/max_advantage_completion"] = self._fluke
            state.log_history[-1]["starvation/successes"] = self._successes
        self._hist = self._fluke = self._successes = None
        if self.jsonl_path is not None and state.is_world_process_zero:
            import json
            from pathlib import Path

            path = Path(self.jsonl_path)
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a") as f:
                f.write(json.dumps(row) + "\n")


class RankProbe:
    """The rank of a training step's gradient, over the first and the last ``window`` steps (``RunConfig.rank_probe``;
    issue 82, study 6). Set as ``trainer.rank_probe = RankProbe(steps, window)``; the trainer calls :meth:`observe`
    with each training batch it scores. At each of the steps ``0 .. window - 1`` ("start": the first from the
    start's weights) and ``steps - window .. steps - 1`` ("end": the last from the weights after ``steps - 1``
    updates), it takes every completion's gradient of the full weight matrices
    :func:`grpo_lab.gradrank.probe_blocks` names, exactly the prompt and completion tokens the step trains on,
    and records :func:`grpo_lab.gradrank.rank_readings` under the run's own advantages (as the step used them) and
    under grpo, drgrpo and sign's of the same rewards. A window of several steps, because one step of a starved
    policy often has no group with a signal (its update is 0 and says nothing about rank). One process only; a
    run resumed inside a window has no reading of the steps it skipped (each reading names its step)."""

    ESTIMATORS = ("grpo", "drgrpo", "sign")

    def __init__(self, steps: int, window: int = 1):
        steps, window = int(steps), int(window)
        if not 1 <= window <= steps:
            raise ValueError(f"a rank probe's window is 1 to the run's {steps} steps, got {window}")
        self.at: dict = {}
        for i in range(window):  # a step in both windows (2 x window > steps) is read once, recorded in both
            self.at.setdefault(i, []).append("start")
            self.at.setdefault(steps - window + i, []).append("end")
        self.readings: dict = {"start": [], "end": []}
        self.blocks: list[str] = []
        self.shapes: dict = {}
        self.seconds = 0.0

    def observe(self, trainer, output: dict, G: int) -> None:
        import time

        from .gradrank import completion_grads_ids, probe_blocks, rank_readings

        step = int(trainer.state.global_step)
        names = self.at.get(step, [])
        if not names or any(r["step"] == step + 1 for r in self.readings[names[0]]):  # read once a step
            return
        if trainer.accelerator.num_processes != 1:
            raise RuntimeError("rank_probe reads every completion's gradient in one process; this run has "
                               f"{trainer.accelerator.num_processes}")
        t0 = time.perf_counter()
        model = trainer.model
        if not self.blocks:
            params = dict(model.named_parameters())
            self.blocks = probe_blocks(model)
            self.shapes = {b: list(params[b].shape) for b in self.blocks}
        prompts = [ids[m.bool()].tolist() for ids, m in zip(output["prompt_ids"].cpu(), output["prompt_mask"].cpu())]
        comps = [ids[m.bool()].tolist() for ids, m in zip(output["completion_ids"].cpu(),
                                                          output["completion_mask"].cpu())]
        if any(prompts[i] != prompts[i - i % G] for i in range(len(prompts))):
            raise RuntimeError("rank_probe: a group's completions do not share one prompt")
        grads = completion_grads_ids(model, prompts, comps, self.blocks)
        rewards = trainer.last_rewards
        advantages = {trainer.estimator: trainer.last_advantages}  # what the step trained on
        for e in self.ESTIMATORS:
            if e not in advantages:
                advantages[e] = compute_advantages(rewards.float(), G, e)
        lengths = [len(p) + len(c) for p, c in zip(prompts, comps)]
        reading = dict(step=step + 1, G=int(G), rewards=[float(r) for r in rewards],
                       prompts=prompts[::G], completions=comps,  # the tokens, so a reader can recompute it
                       by_estimator=rank_readings(grads, self.shapes, lengths, advantages, G, comps))
        for w in names:
            self.readings[w].append(reading)
        self.seconds += time.perf_counter() - t0

    def record(self) -> dict:
        """What a result keeps: the blocks and their shapes, the readings of each window ("start", "end": one per
        step read, in order) and the seconds."""
        return dict(blocks=list(self.blocks), shapes=dict(self.shapes), estimators=list(self.ESTIMATORS),
                    seconds=self.seconds, **self.readings)


class UpdateNorms(TrainerCallback):
    """How far each optimizer step moves the trained weights (issue 49: under AdamW a rescaled advantage moves the
    weights alike; a KL term of fixed scale need not). Per step, over the trainable parameters (a LoRA run's
    adapters): ``update/step_norm`` = ||theta_t - theta_(t-1)|| and ``update/from_start`` = ||theta_t - theta_0||,
    logged into the trainer's metrics (the JSONL rows of :class:`StarvationCallback`, TRL's log history). The
    gradient norm before clipping is TRL's ``grad_norm``. Added by every :func:`trainer_class` trainer."""

    def __init__(self, trainer):
        self.trainer = trainer
        self._start = self._before = None

    def _weights(self) -> list:
        return [p.detach().float().clone() for p in self.trainer.model.parameters() if p.requires_grad]

    def on_train_begin(self, args, state, control, **kwargs):
        self._start = self._weights()

    def on_pre_optimizer_step(self, args, state, control, **kwargs):
        self._before = self._weights()

    def on_optimizer_step(self, args, state, control, **kwargs):
        if self._before is None or self._start is None:
            return
        after = [p.detach().float() for p in self.trainer.model.parameters() if p.requires_grad]

        def norm(a, b):
            return float(torch.sqrt(sum(((x - y) ** 2).sum() for x, y in zip(a, b)))) if a else 0.0

        metrics = self.trainer._metrics["train"]
        metrics["update/step_norm"].append(norm(after, self._before))
        metrics["update/from_start"].append(norm(after, self._start))
        near = adam_near_eps(getattr(self.trainer, "optimizer", None))
        if near is not None:
            metrics["update/adam_near_eps"].append(near)
        self._before = None


def adam_near_eps(optimizer, factor: float = 10.0) -> float | None:
    """The share of the trained weights whose Adam denominator is not yet dominated by the gradient's size: the
    elements whose bias-corrected ``sqrt(v_hat)`` is below ``factor`` x epsilon (issue 57). There Adam is no longer
    invariant to the gradient's scale (an advantage twice as large moves the weight further); elsewhere its step is
    about the learning rate whatever the scale. None for an optimizer without Adam's state (SGD, or before the
    first step)."""
    opt = getattr(optimizer, "optimizer", optimizer)  # accelerate wraps it
    if opt is None or not hasattr(opt, "param_groups"):
        return None
    near = total = 0
    with torch.no_grad():
        for group in opt.param_groups:
            eps, beta2 = group.get("eps"), (group.get("betas") or (None, None))[1]
            if eps is None or beta2 is None:
                return None
            for p in group["params"]:
                st = opt.state.get(p) or {}
                v, step = st.get("exp_avg_sq"), st.get("step")
                if v is None or step is None:
                    continue
                t = float(step)
                denom = (v.float() / (1 - beta2 ** t)).sqrt() if t > 0 else v.float().sqrt()
                near += int((denom < factor * eps).sum())
                total += v.numel()
    return near / total if total else None


class CompletionBudget(TrainerCallback):
    """Stops a :func:`trainer_class` trainer at the end of the first step at which it has generated at least
    ``completions`` training completions (``trainer.generated``): runs whose steps cost different amounts of
    generation stop at the same generation budget, each within one step of it (notebook 09,
    ``grpo-lab compare --budget-completions``)."""

    def __init__(self, completions: int):
        from ._checks import as_int

        self.completions = as_int("budget (completions)", completions, minimum=1)
        self.attached = False
        self.trainer = None

    def on_train_begin(self, args, state, control, **kwargs):
        if not self.attached:
            raise RuntimeError("CompletionBudget needs a trainer built by grpo_lab.trl.trainer_class(): it counts "
                               "the completions that trainer generates")

    def on_step_end(self, args, state, control, **kwargs):
        if self.trainer.generated["completions"] >= self.completions:
            control.should_training_stop = True
