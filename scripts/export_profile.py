"""Export finished `grpo-lab profile` runs for notebook 02 (shipped in the package).

    python scripts/export_profile.py "SmolLM2 on GSM-Symbolic=docs/results/profile-smollm2-gsm_symbolic" [more ...]

Writes grpo_lab/data/profiles.json: for each labelled profile, its settings, where its weights came
from, how long it took, and the per-problem correct counts out of n samples (the numbers of the
report are recomputed from these by grpo_lab.profile.summarize).
"""

import json
import sys
from pathlib import Path

from grpo_lab.profile import read_profile

ROOT = Path(__file__).resolve().parents[1]


def main(argv):
    out = {}
    for arg in argv:
        label, run = arg.split("=", 1)
        run = Path(run).resolve()
        conf = json.loads((run / "config.json").read_text())
        prof = read_profile(run)
        correct = [c for p in sorted((run / "chunks").glob("[0-9]*.json")) for c in json.loads(p.read_text())["correct"]]
        out[label] = dict(command=conf.get("command"), created=conf.get("created"), settings=prof["settings"],
                          n_samples=prof["n_samples"], correct=correct, weights=prof["weights"],
                          seconds=prof["seconds"], new_tokens=prof["new_tokens"], threads=prof["threads"],
                          report=str(run.relative_to(ROOT) / "report.md") if run.is_relative_to(ROOT) else None)
    path = ROOT / "grpo_lab" / "data" / "profiles.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main(sys.argv[1:])
