"""Export the dynamic-sampling measurement of `grpo-lab compare` runs for notebook 09 (shipped in the package).

    python scripts/export_sampling.py "equal steps=RUN_DIR" "equal completions=RUN_DIR"   # notebook 09
    python scripts/export_sampling.py --out sweep.json "lr 1e-4, 16 prompts, 150 steps=RUN_DIR" ...  # notebook 05

Writes grpo_lab/data/sampling.json (or the --out name there): for each labelled comparison, its command, date and settings, the
starting policy's pass@1 / pass@16 / greedy accuracy and, per method and seed, the same after training plus
what the run generated (completions, new tokens, optimizer steps, informative groups trained, rounds,
prompts skipped, and the degenerate / all-fail / all-pass fractions of the groups generated over the run).
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from grpo_lab.compare import load_results, read_config  # noqa: E402
from grpo_lab.io import read_json, strip_out_option  # noqa: E402
from grpo_lab.passk import pass_at_k_of  # noqa: E402
from grpo_lab.starvation import summarize_rows  # noqa: E402


def main(argv):
    name = "sampling.json"
    if argv[:1] == ["--out"]:
        name, argv = argv[1], argv[2:]
    out = {}
    for arg in argv:
        label, run = arg.split("=", 1)
        run = Path(run)
        conf = read_config(run)
        start = read_json(run / "start.json", "start evaluation")
        spk = pass_at_k_of(start, (1, 16))
        methods = {}
        for m, results in load_results(run, conf).items():
            for seed, r in zip(conf["seeds"], results):
                pk = pass_at_k_of(r["eval"], (1, 16))
                g = r["generated"]
                st = summarize_rows(r["history"])
                methods.setdefault(m, []).append(dict(
                    seed=seed, pass1=pk[1], pass16=pk[16], greedy=r["eval"]["greedy"], completions=g["completions"],
                    tokens=g["tokens"], steps=r["steps_done"], informative=g["trained_informative"],
                    rounds=g["rounds"], skipped=g["skipped_prompts"], degenerate=st["acr_run"],
                    all_fail=st["all_fail_run"], all_pass=st["all_pass_run"]))
        out[label] = dict(command=strip_out_option(conf.get("command")), created=conf.get("created"),
                          base=read_json(run / "config.json")["base"],
                          start=dict(pass1=spk[1], pass16=spk[16], greedy=start["greedy"]), methods=methods)
    path = ROOT / "grpo_lab" / "data" / name
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KiB)")


if __name__ == "__main__":
    main(sys.argv[1:])
