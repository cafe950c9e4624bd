"""The coverage of every interval the study engine reads, simulated with a study's structure
(:mod:`grpo_lab.study.calibrate`): writes grpo_lab/data/interval_coverage.json, which the engine reads to tell a
calibrated alternative from a narrow one (issue 80).

    python scripts/interval_coverage.py            # about 6 minutes on one core (4,000 simulated studies a cell)
    python scripts/interval_coverage.py --reps 500 # a quick look, not written

tests/test_study_coverage.py re-simulates fewer studies and checks both the band and this table.
"""

import argparse
import json
import time

from grpo_lab.study import calibrate as sim
from grpo_lab.study import coverage as cov


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=4000, help="simulated studies per method and seed count")
    args = ap.parse_args()
    out = {}
    for method in cov.METHODS:
        out[method] = {}
        for n in cov.SEEDS:
            t = time.time()
            out[method][str(n)] = round(sim.coverage(method, n, args.reps), 4)
            print(f"{method:16s} n={n:2d}: {out[method][str(n)]:.4f} ({time.time() - t:.0f} s)", flush=True)
    if args.reps != 4000:
        print("(not written: the table holds 4,000 studies a cell)")
        return
    table = {"about": "simulated coverage of 95% intervals, grpo_lab.study.coverage (python scripts/"
                      "interval_coverage.py)", "nominal": cov.NOMINAL, "band": list(cov.BAND), "reps": args.reps,
             "world": {k: (list(v) if isinstance(v, tuple) else v) for k, v in vars(sim.World()).items()},
             "methods": cov.METHODS, "coverage": out}
    cov.TABLE.write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {cov.TABLE}")


if __name__ == "__main__":
    main()
