"""Time every estimator on 1M rewards (G = 8) as a ratio to bare group-mean centring.

    python benchmarks/bench_estimators.py [--n 1000000] [--G 8] [--repeats 20]

The baseline is ``r.view(-1, G).mean(1)`` in the same process, so the ratios are
comparable across machines even when absolute times are not. Targets (issue 2):
<= 3x for every estimator, <= 5x for AVSPO.
"""

import argparse
import time

import torch

from grpo_lab.advantages import ESTIMATORS, compute_advantages

TARGET = {m: 3.0 for m in ESTIMATORS} | {"avspo": 5.0, "avspo_code": 5.0}


def best_time(fn, repeats):
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--G", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--p-solved", type=float, default=0.3, help="Bernoulli success rate of the synthetic rewards")
    a = ap.parse_args()
    torch.manual_seed(0)
    # realistic mix: per-prompt p from a bimodal distribution, so many groups are degenerate
    p = torch.where(torch.rand(a.n // a.G) < 0.5, torch.zeros(a.n // a.G), torch.rand(a.n // a.G))
    r = (torch.rand(a.n // a.G, a.G) < p[:, None]).float().reshape(-1)
    base = best_time(lambda: r.view(-1, a.G).mean(1), a.repeats)
    print(f"{a.n:,} rewards, G={a.G}, torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"baseline r.view(-1, G).mean(1): {base * 1e3:.2f} ms")
    print(f"{'estimator':<12} {'ratio':>7} {'target':>7}  ok")
    worst_ok = True
    for m in ESTIMATORS:
        t = best_time(lambda: compute_advantages(r, a.G, m), a.repeats)
        ok = t / base <= TARGET[m]
        worst_ok &= ok
        print(f"{m:<12} {t / base:7.2f} {TARGET[m]:7.1f}  {'yes' if ok else 'NO'}")
    print("all within target" if worst_ok else "SOME ESTIMATORS MISS THEIR TARGET")


if __name__ == "__main__":
    main()
