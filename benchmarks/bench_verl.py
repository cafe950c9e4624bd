"""The starvation diagnostics and grpo-lab's estimators at verl's scale (issue 30; docs/scale.md).

    python benchmarks/bench_verl.py          # about a minute; needs verl (README set-up)

At 10^6 rewards (groups of G = 8), one run prints the time of grpo-lab's ``compute_advantages`` (grpo, sign,
avspo), of ``starvation.batch_metrics`` (the per-step diagnostics), and of a verl step's advantage computation
through ``grpo_lab.verl`` (grouping rows by uid, shuffled, and broadcasting over 16 response tokens), beside
verl's own ``grpo`` and ``grpo_vectorized`` on the same inputs: as ratios to verl's vectorized GRPO.
"""

import time

import numpy as np
import torch

N, G, T = 1_000_000, 8, 16


def best(fn, reps: int = 3) -> float:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    import grpo_lab
    import grpo_lab.verl as gv
    from grpo_lab.starvation import batch_metrics
    from verl.trainer.ppo import core_algos

    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(0)
    p = torch.rand(N // G, 1, generator=gen) ** 3  # many prompts near p = 0: the starvation regime
    r = (torch.rand(N // G, G, generator=gen) < p).float().reshape(-1)
    adv = grpo_lab.compute_advantages(r, G, "grpo")
    perm = torch.randperm(N, generator=gen)
    tlr = torch.zeros(N, T)
    tlr[:, -1] = r[perm]
    mask = torch.ones(N, T)
    uids = np.array([f"u{i // G}" for i in range(N)], dtype=object)[perm.numpy()]
    rows = {
        "grpo_lab.compute_advantages grpo (contiguous groups)": lambda: grpo_lab.compute_advantages(r, G, "grpo"),
        "grpo_lab.compute_advantages sign": lambda: grpo_lab.compute_advantages(r, G, "sign"),
        "grpo_lab.compute_advantages avspo": lambda: grpo_lab.compute_advantages(r, G, "avspo"),
        "starvation.batch_metrics (ACR, all-fail/pass, histogram)": lambda: batch_metrics(r, adv, G),
        "grpo_lab.verl sign on verl's inputs (uids shuffled)": lambda: gv.outcome_advantages(tlr, mask, uids, "sign"),
        "verl's grpo_vectorized": lambda: core_algos.compute_grpo_vectorized_outcome_advantage(tlr, mask, uids),
    }
    times = {name: best(fn) for name, fn in rows.items()}
    loop = time.perf_counter()
    core_algos.compute_grpo_outcome_advantage(tlr[:N // 10], mask[:N // 10], uids[:N // 10])
    times["verl's grpo (its Python loop; timed at 10^5 rows, x 10)"] = 10 * (time.perf_counter() - loop)
    ref = times["verl's grpo_vectorized"]
    print(f"10^6 rewards, G = {G}, {T} response tokens, 1 torch thread")
    print("| computation | seconds | ratio to verl's grpo_vectorized |")
    print("|---|---|---|")
    for name, s in times.items():
        print(f"| {name} | {s:.3f} | {s / ref:.3g} |")


if __name__ == "__main__":
    main()
