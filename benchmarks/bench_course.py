"""Course performance (issue 3): the simulator's throughput and the notebooks' wall time.

    python benchmarks/bench_course.py

Targets: 10,000 prompts x G = 8 x 200 steps "in a few seconds"; executing the four
solution notebooks (the longest variant) in <= 3 minutes on the 2-core machine.
Times are printed with the machine's core count; they are wall times of one run.
"""

import os
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from grpo_lab.simulator import SimConfig, sample_success_rates, simulate

ROOT = Path(__file__).resolve().parents[1]


def main():
    p0 = sample_success_rates("bimodal", 10_000, seed=0)
    t = time.perf_counter()
    simulate(p0, SimConfig(method="grpo", G=8, steps=200))
    sim = time.perf_counter() - t
    print(f"simulator, 10,000 prompts x G=8 x 200 steps (grpo): {sim:.2f} s on {os.cpu_count()} cores "
          f"({10_000 * 8 * 200 / sim / 1e6:.1f}M sampled completions/s)")
    total = 0.0
    for path in sorted((ROOT / "solutions").glob("0[1-4]_*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        t = time.perf_counter()
        NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
        dt = time.perf_counter() - t
        total += dt
        print(f"{path.name}: {dt:.1f} s")
    print(f"notebooks 01-04 together: {total:.1f} s (target <= 180 s)")


if __name__ == "__main__":
    main()
