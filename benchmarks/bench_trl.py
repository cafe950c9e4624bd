"""TRL integration (issue 4): the mixin's overhead on a GRPOTrainer step, and tiny-LM GRPO throughput.

    python benchmarks/bench_trl.py            # about 2 minutes on 2 cores

Stock ``trl.GRPOTrainer`` and ``grpo_lab.trl.trainer_class()`` (estimator "grpo", and with
the StarvationCallback) train the shipped tiny LM from the same weights, same config and
seed, alternating A/B/C for several rounds in one process. Reported: the median per-step
time of each over all rounds as a ratio to stock (target for the mixin: <= 1.02), and
throughput in sampled completions per second. Steps are timed by a callback (on_step_begin
to on_step_end), so trainer construction and evaluation are excluded.
"""

from __future__ import annotations

import statistics
import tempfile
import time
import warnings

import torch

warnings.filterwarnings("ignore")


def main(rounds: int = 5, steps: int = 30, prompts: int = 16, G: int = 4):
    from transformers import PrinterCallback, TrainerCallback
    from transformers.utils import logging as hf_logging
    from trl import GRPOConfig, GRPOTrainer

    from grpo_lab.policy import load_tiny_lm
    from grpo_lab.tasks import arithmetic_problems, correctness_reward, to_dataset
    from grpo_lab.trl import StarvationCallback, trainer_class

    hf_logging.set_verbosity_error()
    torch.set_num_threads(2)
    ds = to_dataset(arithmetic_problems(4000, seed=1))

    class Timer(TrainerCallback):
        def __init__(self):
            self.times = []

        def on_step_begin(self, *a, **k):
            self.t = time.perf_counter()

        def on_step_end(self, *a, **k):
            self.times.append(time.perf_counter() - self.t)

    def run(kind: str) -> list[float]:
        model, tok = load_tiny_lm()
        args = GRPOConfig(output_dir=tempfile.mkdtemp(), per_device_train_batch_size=prompts * G, num_generations=G,
                          max_completion_length=6, max_steps=steps, learning_rate=1e-4, logging_steps=1,
                          report_to="none", use_cpu=True, save_strategy="no", seed=0, disable_tqdm=True)
        timer = Timer()
        cbs = [timer] + ([StarvationCallback()] if kind == "grpo_lab+callback" else [])
        cls = GRPOTrainer if kind == "stock" else trainer_class()
        kw = {} if kind == "stock" else {"estimator": "grpo"}
        tr = cls(model=model, args=args, reward_funcs=correctness_reward, train_dataset=ds, processing_class=tok,
                 callbacks=cbs, **kw)
        tr.remove_callback(PrinterCallback)
        tr.train()
        return timer.times[3:]  # the first steps warm caches up

    kinds = ("stock", "grpo_lab", "grpo_lab+callback")
    times = {k: [] for k in kinds}
    for r in range(rounds):
        for k in kinds if r % 2 == 0 else reversed(kinds):
            times[k] += run(k)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"{rounds} rounds x {steps} steps, {prompts} prompts x G={G} = {prompts * G} completions per step")
    for k in kinds:
        print(f"{k:>18}: median step {med[k] * 1e3:.1f} ms, ratio to stock {med[k] / med['stock']:.3f}, "
              f"{prompts * G / med[k]:.0f} completions/s")


if __name__ == "__main__":
    main()
