"""Course performance (issue 3): the simulator's throughput and the notebooks' wall time.

    python benchmarks/bench_course.py

Targets: 10,000 prompts x G = 8 x 200 steps "in a few seconds"; executing solution notebooks
01-04 (the longest variant) in <= 3 minutes together, 05 and 08 in <= 3 minutes and 06 and 07
in <= 2 minutes each, on the 2-core machine. Run nothing else meanwhile: two torch processes on
2 cores slow each other down many-fold.
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
    for path in sorted((ROOT / "solutions").glob("0*_*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        t = time.perf_counter()
        NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
        dt = time.perf_counter() - t
        total += dt
        print(f"{path.name}: {dt:.1f} s")
    print(f"all notebooks together: {total:.1f} s (targets: 01-04 together <= 180 s; 05 and 08 <= 180 s, 06 and 07 <= 120 s each)")


if __name__ == "__main__":
    main()
