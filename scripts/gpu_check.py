"""GPU check helpers for scripts/gpu_check.sh (issue 12): a stand-in model, and a timed notebook-06 run.

    python scripts/gpu_check.py make DIR [--layers 24 --hidden 896]   # random-weight Qwen2 + char tokenizer
    python scripts/gpu_check.py run DIR --backend unsloth|transformers [--steps 20 --maxlen 64]

``make`` builds a Qwen2-architecture causal LM with random weights (about 0.5B parameters by default:
the shape of Qwen2.5-0.5B) and grpo-lab's character tokenizer with a ChatML chat template, saved
as a local model directory: a stand-in for a hub model on a machine with no hub. Random weights
mean the rewards are almost always 0, so grpo must give a zero gradient norm and sign must not.

``run`` trains it through ``grpo_lab.runner.train`` on the synthetic GSM8K stand-in (exactly
notebook 06's code path, smoke data) and prints one ``STEP`` line per optimizer step (wall-clock
seconds, CUDA synchronised) and a final ``RESULT`` JSON line with the first-step time, the
median of the later steps, the evaluation time and the peak GPU memory.
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

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
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


def run(path: Path, backend: str, steps: int, maxlen: int, estimator: str, eval_problems: int) -> None:
    t_start = time.perf_counter()
    if backend == "unsloth":
        import unsloth  # noqa: F401  (first, so that it patches trl)
    import torch
    from transformers import TrainerCallback

    from grpo_lab.config import RunConfig
    from grpo_lab.runner import train

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

    cfg = RunConfig(policy=str(path), task="gsm8k", smoke=True, backend=backend, estimator=estimator, steps=steps,
                    group_size=4, prompts_per_step=4, max_completion_length=maxlen, train_problems=64,
                    eval_problems=eval_problems, eval_samples=8, learning_rate=5e-6, lora_r=16, lora_alpha=32)
    res = train(cfg, callbacks=[Stamp()])
    gaps = [b - a for a, b in zip(stamps, stamps[1:])]
    later = sorted(gaps[1:])
    print("RESULT " + json.dumps(dict(
        backend=res["backend"], why=res["backend_why"], device=res["device"], estimator=estimator, steps=steps,
        new_tokens_per_step=4 * 4 * maxlen, first_step_s=round(gaps[0], 1) if gaps else None,
        median_later_step_s=round(later[len(later) // 2], 2) if later else None,
        eval_problems=eval_problems, eval_samples=8, eval_s=round(res.get("eval_seconds", float("nan")), 1),
        rewards=[h.get("reward") for h in res["history"]],
        grad_norm=[h.get("grad_norm") for h in res["history"]],
        max_mem_gib=round(torch.cuda.max_memory_allocated() / 2**30, 2) if torch.cuda.is_available() else None,
        wall_from_import_s=round(time.perf_counter() - t_start, 1))), flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cmd", choices=("make", "run"))
    ap.add_argument("path", type=Path)
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--hidden", type=int, default=896)
    ap.add_argument("--backend", default="unsloth", choices=("unsloth", "transformers"))
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--maxlen", type=int, default=64)
    ap.add_argument("--estimator", default="grpo")
    ap.add_argument("--eval-problems", type=int, default=32)
    a = ap.parse_args(argv)
    if a.cmd == "make":
        make(a.path, a.layers, a.hidden)
    else:
        run(a.path, a.backend, a.steps, a.maxlen, a.estimator, a.eval_problems)
    return 0


if __name__ == "__main__":
    sys.exit(main())
