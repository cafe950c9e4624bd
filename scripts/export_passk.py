"""Export the per-problem correct counts of `grpo-lab compare` runs for notebook 07 (shipped in the package).

    python scripts/export_passk.py lr1e-4=RUN_DIR lr3e-4=RUN_DIR lr1e-3=RUN_DIR   # the labels notebook 07 reads

Writes grpo_lab/data/tiny_lm_passk.json: for each labelled comparison, its settings, the
starting policy's counts and, per estimator and seed, the counts after training (correct out
of n samples at temperature 1 for each held-out problem) and the problems' levels.
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from grpo_lab.compare import load_results, read_config  # noqa: E402
from grpo_lab.io import read_json, strip_out_option  # noqa: E402


def main(argv):
    out = {}
    for arg in argv:
        label, run = arg.split("=", 1)
        run = Path(run)
        conf = read_config(run)
        start = read_json(run / "start.json", "start evaluation")
        runs = {est: {str(seed): r["eval"]["correct"] for seed, r in zip(conf["seeds"], results)}
                for est, results in load_results(run, conf).items()}
        out[label] = dict(command=strip_out_option(conf.get("command")), created=conf.get("created"),
                          base=read_json(run / "config.json")["base"], n_samples=start["n_samples"],
                          levels=start["levels"], start=start["correct"], after=runs)
    path = ROOT / "grpo_lab" / "data" / "tiny_lm_passk.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(out, separators=(",", ":")) + "\n")
    print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main(sys.argv[1:])
