"""`grpo-lab inspect` on big W&B CSV exports (issue 28): time and memory must grow linearly, and memory stay small.

    python benchmarks/bench_inspect.py            # about a minute

Writes a W&B-style export (Step, train/frac_reward_zero_std, train/reward; three rows per step) of n and of 8n
rows to a temporary directory and reads each with ``grpo_lab.diagnose.read_log``, printing the time, the peak
of Python-tracked memory (tracemalloc: numpy's buffers included) and the ratios 8n / n (8 = linear). Before the
fix (2026-11-23) a 100 MB export of 3.9M rows took 77 s and 2.9 GB: every row was kept as a dict of strings.
"""

import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

from grpo_lab.diagnose import CSV_MB_PER_S, read_log


def write_csv(path: Path, rows: int) -> float:
    rng = np.random.default_rng(0)
    steps = np.arange(rows) // 3
    d, r = rng.uniform(0, 1, rows).round(4), rng.uniform(0, 1, rows).round(4)
    with path.open("w") as f:
        f.write("Step,train/frac_reward_zero_std,train/reward\n")
        for i in range(0, rows, 100_000):
            f.write("".join(f"{s},{a},{b}\n" for s, a, b in zip(steps[i:i + 100_000], d[i:i + 100_000],
                                                                 r[i:i + 100_000])))
    return path.stat().st_size / 1e6


def measure(path: Path) -> tuple[float, float]:
    """Seconds of one read, then the peak traced memory of a second (tracemalloc slows reading about 3x)."""
    t = time.perf_counter()
    log = read_log(path)
    seconds = time.perf_counter() - t
    assert log.n_rows and log.rows
    tracemalloc.start()
    read_log(path)
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return seconds, peak


def main(n: int = 250_000) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = {}
        for rows in (n, 8 * n):
            path = Path(tmp) / f"export-{rows}.csv"
            mb = write_csv(path, rows)
            out[rows] = (mb, *measure(path))
    print("| rows | file | read time | MB/s | peak memory (tracemalloc) |")
    print("|---|---|---|---|---|")
    for rows, (mb, s, peak) in out.items():
        print(f"| {rows:,} | {mb:.0f} MB | {s:.2f} s | {mb / s:.1f} | {peak:.0f} MB |")
    (mb1, s1, p1), (mb8, s8, p8) = out.values()
    print(f"ratios 8n / n: time {s8 / s1:.1f}, memory {p8 / p1:.1f} (8 = linear); "
          f"the estimate grpo-lab inspect prints assumes {CSV_MB_PER_S:g} MB/s")


if __name__ == "__main__":
    main()
