"""GPU check helpers for scripts/gpu_check.sh (issue 12): a stand-in model, and a timed notebook-06 run.

    python scripts/gpu_check.py make DIR [--layers 24 --hidden 896]   # random-weight Qwen2 + char tokenizer
    python scripts/gpu_check.py run DIR --backend unsloth|transformers [--steps 20 --maxlen 64 --no-compile]
    python scripts/gpu_check.py canary DIR --backend unsloth|transformers [--steps 4]
    python scripts/gpu_check.py convert GGUF DIR      # the real model (SmolLM2's GGUF) as a model directory
    python scripts/gpu_check.py data TASK DIR [--n 4000]             # a task's problems as a GSM8K JSONL directory
    python scripts/gpu_check.py lesson NOTEBOOK OUTDIR --model DIR --data DIR   # a lesson executed, cell times
    python scripts/gpu_check.py study DIR --data DIR [--steps 64]    # one study-3-sized run, training/eval timed

``make`` builds a Qwen2-architecture causal LM with random weights (about 0.5B parameters by default:
the shape of Qwen2.5-0.5B) and grpo-lab's character tokenizer with a ChatML chat template, saved
as a local model directory: a stand-in for a hub model on a machine with no hub. Random weights
mean the rewards are almost always 0, so grpo must give a zero gradient norm and sign must not.

``run`` trains it through ``grpo_lab.runner.train`` on the synthetic GSM8K stand-in (exactly
notebook 06's code path, smoke data) and prints one ``STEP`` line per optimizer step (wall-clock
seconds, CUDA synchronised) and a final ``RESULT`` JSON line with the first-step time, the
median of the later steps, the evaluation time and the peak GPU memory.

``data`` writes ``n`` problems of a registered task (a reasoning-gym one) per split as GSM8K JSONL
(``train.jsonl``, ``test.jsonl``; the answer field ends in ``#### N``), for ``RunConfig.data``: the GPU machine
has no hub and no reasoning-gym, so the problems travel as a file (issue 60). ``lesson`` executes a course
notebook with nbclient (the engine of ``jupyter nbconvert --execute``), its settings line pointed at a local model
and data directory and nothing else changed, and writes the executed notebook and each cell's seconds.
``study`` runs one run at study 3's settings (docs/results/smollm2-study3/plan.toml's base: 64 steps of 4
prompts x G = 4, 48 new tokens, LoRA r 16, 500 test problems x 8 samples + greedy, 64 validation problems)
on a local model and data, under the machine's default backend, and prints training and evaluation seconds.

``canary`` (issue 46) catches a generation path that ignores the LoRA adapter (met with Unsloth's
``fast_inference`` and newer TRL: rollouts silently from the base model). It trains a few steps with
the sign advantage (which moves the weights even when every reward is 0), then on fixed prompts
compares greedy completions of the trained model as the trainer holds it with (a) the same model
with its adapter disabled: they must differ, else generation does not see the training; and (b) the
argmax of the model's own forward pass over those completions (the weights the loss is computed
with): they must agree, near-ties (top-2 logit margin < 0.05, 0.5 in 16-bit) aside. It prints a
``CANARY`` JSON line and exits 1 when generation ignores the adapter, 2 when the adapter changed no
greedy token (no power: train longer or at a larger rate).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
          "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def make(path: Path, layers: int, hidden: int) -> None:
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from grpo_lab.policy import char_tokenizer

    tok = char_tokenizer()
    tok.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>"]})
    tok.chat_template = CHATML
    cfg = Qwen2Config(vocab_size=len(tok), hidden_size=hidden, intermediate_size=hidden * 4 + hidden // 2,
                      num_hidden_layers=layers, num_attention_heads=max(2, hidden // 64), num_key_value_heads=2,
                      max_position_embeddings=2048, tie_word_embeddings=True, pad_token_id=tok.pad_token_id,
                      bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(cfg).to(torch.bfloat16)
    model.save_pretrained(path)
    tok.save_pretrained(path)
    print(f"stand-in model: {sum(p.numel() for p in model.parameters()) / 1e6:.0f}M parameters -> {path}")


def _unsloth_first(compile: bool, cache: str | None) -> None:
    """Unsloth's compile settings are read when it is imported: set them, then import it before trl."""
    from grpo_lab.policy import apply_unsloth_environment, unsloth_environment

    apply_unsloth_environment(unsloth_environment(compile, cache))
    import unsloth  # noqa: F401  (first, so that it patches trl)


def _step_stamps():
    """``(callback, stamps)``: a TrainerCallback that appends the wall-clock time before the first optimizer step
    and after each one (CUDA synchronised) to ``stamps``, and prints a ``STEP`` line per step. Import it after
    :func:`_unsloth_first` where Unsloth trains (it imports transformers)."""
    import torch
    from transformers import TrainerCallback

    stamps = []

    class Stamp(TrainerCallback):
        def on_step_begin(self, args, state, control, **kw):
            if not stamps:
                stamps.append(time.perf_counter())

        def on_step_end(self, args, state, control, **kw):
            if torch.cuda.is_available():
                torch.cuda.synchronize()
            stamps.append(time.perf_counter())
            print(f"STEP {state.global_step} {stamps[-1] - stamps[-2]:.2f} s", flush=True)

    return Stamp(), stamps


def run(path: Path, backend: str, steps: int, maxlen: int, estimator: str, eval_problems: int,
        compile: bool = True, cache: str | None = None, dtype: str | None = None, prompts: int = 4) -> None:
    t_start = time.perf_counter()
    if backend == "unsloth":
        _unsloth_first(compile, cache)
    import torch

    from grpo_lab.config import RunConfig
    from grpo_lab.runner import train

    stamp, stamps = _step_stamps()
    cfg = RunConfig(policy=str(path), task="gsm8k", smoke=True, backend=backend, estimator=estimator, steps=steps,
                    group_size=4, prompts_per_step=prompts, max_completion_length=maxlen, train_problems=64,
                    eval_problems=eval_problems, eval_samples=8, learning_rate=5e-6, lora_r=16, lora_alpha=32,
                    unsloth_compile=compile, unsloth_cache=cache, dtype=dtype)
    res = train(cfg, callbacks=[stamp])
    gaps = [b - a for a, b in zip(stamps, stamps[1:])]
    later = sorted(gaps[1:])
    print("RESULT " + json.dumps(dict(
        backend=res["backend"], why=res["backend_why"], device=res["device"], estimator=estimator, steps=steps,
        compile=compile, cache=cache, dtype=res.get("dtype"), trainer_settings=res.get("trainer_settings"),
        new_tokens_per_step=prompts * 4 * maxlen, first_step_s=round(gaps[0], 1) if gaps else None,
        median_later_step_s=round(later[len(later) // 2], 2) if later else None,
        eval_problems=eval_problems, eval_samples=8, eval_s=round(res.get("eval_seconds", float("nan")), 1),
        rewards=[h.get("reward") for h in res["history"]],
        grad_norm=[h.get("grad_norm") for h in res["history"]],
        completion_mean_length=[h.get("completions/mean_length") for h in res["history"]],
        completion_max_length=[h.get("completions/max_length") for h in res["history"]],
        max_mem_gib=round(torch.cuda.max_memory_allocated() / 2**30, 2) if torch.cuda.is_available() else None,
        wall_from_import_s=round(time.perf_counter() - t_start, 1))), flush=True)


def _greedy(model, tok, prompt: str, n: int) -> list[int]:
    import torch

    ids = tok(prompt, return_tensors="pt", add_special_tokens=False).to(model.device)
    with torch.no_grad():
        out = model.generate(**ids, max_new_tokens=n, do_sample=False, pad_token_id=tok.pad_token_id)
    return out[0, ids["input_ids"].shape[1]:].tolist()


def _forward_agreement(model, tok, prompt: str, completion: list[int], tie: float) -> tuple[int, int]:
    """(positions where the forward pass's argmax differs from the generated token, positions compared),
    near-ties (top-2 logit margin < ``tie``) not compared."""
    import torch

    p = tok(prompt, return_tensors="pt", add_special_tokens=False)["input_ids"][0].tolist()
    ids = torch.tensor([p + completion], device=model.device)
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0, len(p) - 1:-1].float()
    top2 = logits.topk(2, dim=-1).values
    clear = (top2[:, 0] - top2[:, 1]) >= tie
    differ = (logits.argmax(-1) != torch.tensor(completion, device=logits.device)) & clear
    return int(differ.sum()), int(clear.sum())


def check_generation(model, tok, texts: list[str], new_tokens: int = 24) -> dict:
    """The canary's reading on a LoRA model: greedy completions of ``model`` as it is (the adapter on), of the same
    model with the adapter disabled, and whether the first agree with the argmax of ``model``'s own forward pass.
    ``ok`` is True (generation sees the adapter), False (it does not: a completion differs from what the adapted
    forward pass picks), or None (the adapter changed no greedy token, so the check has no power)."""
    import torch

    model.eval()
    trained = [_greedy(model, tok, t, new_tokens) for t in texts]
    with model.disable_adapter():
        base = [_greedy(model, tok, t, new_tokens) for t in texts]
    # generation with a KV cache and one full forward pass round differently: by ~1e-5 in float32, by up to a few
    # tenths of a logit in bfloat16/float16, so a near-tie may flip; positions with a clear winner must agree
    tie = 0.05 if next(model.parameters()).dtype == torch.float32 else 0.5
    agree = [_forward_agreement(model, tok, t, c, tie) for t, c in zip(texts, trained) if c]
    differ, compared = sum(a for a, _ in agree), sum(b for _, b in agree)
    changed = sum(a != b for a, b in zip(trained, base))
    ok = False if differ or not compared else (True if changed else None)
    return dict(dtype=str(next(model.parameters()).dtype), tie_margin=tie, prompts=len(texts),
                greedy_changed_by_lora=changed, forward_positions_compared=compared, forward_argmax_differs=differ,
                ok=ok)


def canary(path: Path, backend: str, steps: int, lr: float = 2e-3, new_tokens: int = 24, prompts: int = 4):
    import os

    os.environ["UNSLOTH_RETURN_LOGITS"] = "1"  # Unsloth's training forward returns no logits otherwise
    if backend == "unsloth":
        _unsloth_first(False, None)
    from grpo_lab.config import RunConfig
    from grpo_lab.runner import as_prompted, eval_problems, system_prompt, train

    cfg = RunConfig(policy=str(path), task="gsm8k", smoke=True, backend=backend, estimator="sign", steps=steps,
                    group_size=4, prompts_per_step=4, max_completion_length=32, train_problems=64,
                    eval_problems=prompts, eval_samples=1, learning_rate=lr, lora_r=16, lora_alpha=32,
                    unsloth_compile=False)
    res = train(cfg, return_model=True, evaluate_after=False)
    model, tok = res["model"], res["tokenizer"]
    texts = [p.prompt for p in as_prompted(tok, eval_problems(cfg)[:prompts], system_prompt(cfg))]
    out = dict(backend=res["backend"], device=res["device"], steps=res["steps_done"],
               **check_generation(model, tok, texts, new_tokens))
    print("CANARY " + json.dumps(out), flush=True)
    return out["ok"]


def convert(gguf: Path, out: Path) -> None:
    from grpo_lab.policy import SMOLLM2, convert_gguf

    print(f"converted: {convert_gguf(gguf, out, SMOLLM2['sha256'])}", flush=True)


def data(task: str, out: Path, n: int) -> None:
    """``n`` problems of ``task`` per split (train, test) as GSM8K JSONL: the question, and an answer field that
    ends in ``#### N`` (reasoning-gym's worked solution above it where the task gives one)."""
    from grpo_lab.tasks import make_problems

    out.mkdir(parents=True, exist_ok=True)
    for split in ("train", "test"):
        rows = []
        for p in make_problems(task, n, seed=0, split=split):
            meta = json.loads(p.meta) if p.meta else {}
            cot = (meta.get("metadata") or {}).get("answer_cot") or ""
            rows.append(json.dumps({"question": p.prompt, "answer": f"{cot}\n#### {p.answer}".lstrip()}))
        (out / f"{split}.jsonl").write_text("\n".join(rows) + "\n")
        print(f"{split}: {len(rows)} problems of {task} -> {out / (split + '.jsonl')}", flush=True)


SETTINGS_LINE = 'CFG = gsm8k_config(estimator="sign", seed=0)'


def lesson(notebook: Path, out: Path, model: str, data_dir: str, timeout: int = 1200) -> bool:
    """Execute ``notebook`` with nbclient, its settings line (``SETTINGS_LINE``) pointed at ``model`` and
    ``data_dir``; write the executed notebook and ``cell_times.json`` under ``out``; print a ``CELL`` line as each
    cell finishes. True when every cell ran without an error."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    model, data_dir = str(Path(model).resolve()), str(Path(data_dir).resolve())  # the kernel runs in ``out``
    nb = nbformat.read(notebook, as_version=4)
    hits = [c for c in nb.cells if c.cell_type == "code" and SETTINGS_LINE in c.source]
    if len(hits) != 1:
        raise SystemExit(f"{notebook}: expected one settings cell with {SETTINGS_LINE!r}, found {len(hits)}")
    hits[0].source = hits[0].source.replace(SETTINGS_LINE, SETTINGS_LINE[:-1] + f", policy={model!r}, "
                                            f"data={data_dir!r})  # issue 60: the GPU machine's local copies")
    out.mkdir(parents=True, exist_ok=True)
    times, t0 = [], [time.perf_counter()]

    def done(cell, cell_index, execute_reply=None, **kw):
        now = time.perf_counter()
        times.append(dict(cell=cell_index, seconds=round(now - t0[0], 2), first_line=cell.source.split("\n")[0][:80]))
        print(f"CELL {cell_index} {now - t0[0]:.1f} s  {times[-1]['first_line']}", flush=True)
        t0[0] = now

    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(out)}},
                            on_cell_executed=done)
    ok = True
    try:
        client.execute()
    except CellExecutionError as err:
        ok = False
        print(f"LESSON FAILED: {str(err)[-3000:]}", flush=True)
    nbformat.write(nb, out / notebook.name)
    (out / "cell_times.json").write_text(json.dumps(times, indent=1))
    print("LESSON " + json.dumps(dict(notebook=notebook.name, ok=ok, cells=len(times),
                                      seconds=round(sum(t["seconds"] for t in times), 1))), flush=True)
    return ok


STUDY3_BASE = dict(steps=64, prompts_per_step=4, group_size=4, max_completion_length=48, lora_r=16,
                   train_problems=4000, eval_problems=500, eval_samples=8, validation_problems=64, disjoint=True)


def study(path: Path, data_dir: str, steps: int, estimator: str = "sign", lr: float = 3e-4, compile: bool = True,
          cache: str | None = None, **override) -> None:
    """One run at study 3's settings (``STUDY3_BASE``, its plan's base less the policy, task and the CPU's engine
    and threads) on the local model ``path`` and the GSM8K-format problems in ``data_dir``, under the machine's
    default backend; prints STEP lines, then a RESULT line with training and evaluation seconds."""
    import torch

    from grpo_lab.config import RunConfig
    from grpo_lab.policy import choose_backend
    from grpo_lab.runner import train

    if choose_backend("auto")[0] == "unsloth":
        _unsloth_first(compile, cache)
    stamp, stamps = _step_stamps()
    cfg = RunConfig(**{**STUDY3_BASE, "steps": steps, **override}, policy=str(path), task="gsm8k", data=data_dir,
                    estimator=estimator, learning_rate=lr, seed=0)
    t0 = time.perf_counter()
    res = train(cfg, callbacks=[stamp])
    ev = res.get("eval") or {}
    print("RESULT " + json.dumps(dict(
        kind="study-run", backend=res["backend"], why=res["backend_why"], device=res["device"], dtype=res.get("dtype"),
        estimator=estimator, learning_rate=lr, steps=steps, completions=steps * cfg.prompts_per_step * cfg.group_size,
        settings={k: getattr(cfg, k) for k in (*STUDY3_BASE, "eval_distinct")},
        prompts_sampled=(ev.get("sampling") or {}).get("prompts_sampled"),
        train_s=round(res["train_seconds"], 1), eval_s=round(res.get("eval_seconds", float("nan")), 1),
        wall_s=round(time.perf_counter() - t0, 1), first_step_s=round(stamps[1] - stamps[0], 1) if len(stamps) > 1
        else None, eval_problems=len(ev.get("correct", [])), greedy=ev.get("greedy"),
        rewards=[h.get("reward") for h in res["history"]],
        max_mem_gib=round(torch.cuda.max_memory_allocated() / 2**30, 2) if torch.cuda.is_available() else None)),
        flush=True)


def main(argv=None) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout's grpo_lab, installed or not
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cmd", choices=("make", "run", "canary", "convert", "data", "lesson", "study"))
    ap.add_argument("path", help="the model directory (make, run, canary, study), the GGUF (convert), the task "
                                 "(data) or the notebook (lesson)")
    ap.add_argument("out", type=Path, nargs="?", help="convert: the model directory to write; data, lesson: the "
                                                      "directory to write")
    ap.add_argument("--model", help="lesson: the local model directory the settings line names")
    ap.add_argument("--data", help="lesson, study: the GSM8K-format data directory (from `data`)")
    ap.add_argument("--n", type=int, default=4000, help="data: problems per split")
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--hidden", type=int, default=896)
    ap.add_argument("--backend", default="unsloth", choices=("unsloth", "transformers"))
    ap.add_argument("--steps", type=int, default=None, help="run, canary: 20; study: 64 (study 3's)")
    ap.add_argument("--maxlen", type=int, default=64)
    ap.add_argument("--prompts", type=int, default=4, help="run: prompts per step (G = 4 each)")
    ap.add_argument("--estimator", default=None, help="run: grpo; study: sign (at study 3's lr 3e-4)")
    ap.add_argument("--eval-problems", type=int, default=None, help="run: 32; study: 500 (study 3's)")
    ap.add_argument("--validation", type=int, default=64, help="study with --eval-problems: validation problems")
    ap.add_argument("--eval-distinct", action="store_true", help="study: each distinct test problem sampled once "
                    "(RunConfig.eval_distinct, study 5's evaluation)")
    ap.add_argument("--lr", type=float, default=2e-3, help="canary: the learning rate (large, so the adapter moves)")
    ap.add_argument("--no-compile", action="store_true", help="Unsloth: skip compilation (unsloth_compile=False)")
    ap.add_argument("--cache", default=None, help="Unsloth: a compile-cache directory shared between processes")
    ap.add_argument("--dtype", default=None, choices=("float32", "bfloat16", "auto"),
                    help="run: the weights' dtype (RunConfig.dtype; unset: the loader's own choice on a GPU)")
    a = ap.parse_args(argv)
    if a.cmd in ("data", "lesson") and a.out is None:
        ap.error(f"{a.cmd} needs an output directory")
    if a.cmd == "data":
        data(a.path, a.out, a.n)
        return 0
    if a.cmd == "lesson":
        if not (a.model and a.data):
            ap.error("lesson needs --model and --data")
        return 0 if lesson(Path(a.path), a.out, a.model, a.data) else 1
    if a.cmd == "study":
        if not a.data:
            ap.error("study needs --data")
        study(Path(a.path), a.data, a.steps or 64, a.estimator or "sign", compile=not a.no_compile, cache=a.cache,
              **({"eval_problems": a.eval_problems, "validation_problems": a.validation} if a.eval_problems else {}),
              **({"eval_distinct": True} if a.eval_distinct else {}))
        return 0
    a.path, a.steps, a.estimator = Path(a.path), a.steps or 20, a.estimator or "grpo"
    a.eval_problems = a.eval_problems or 32
    if a.cmd == "make":
        make(a.path, a.layers, a.hidden)
    elif a.cmd == "convert":
        if a.out is None:
            ap.error("convert needs GGUF and DIR")
        convert(a.path, a.out)
    elif a.cmd == "canary":
        ok = canary(a.path, a.backend, a.steps, a.lr)
        return 0 if ok else 2 if ok is None else 1  # 2: no power (the adapter moved no greedy token)
    else:
        run(a.path, a.backend, a.steps, a.maxlen, a.estimator, a.eval_problems, not a.no_compile, a.cache, a.dtype,
            prompts=a.prompts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
