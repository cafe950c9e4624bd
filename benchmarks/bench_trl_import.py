"""What building a trainer costs a fresh process, with and without TRL's import of vLLM (grpo_lab.trl).

    python benchmarks/bench_trl_import.py            # about 2 minutes on 2 quiet cores

With vLLM installed, ``from trl import GRPOTrainer`` imports vLLM's engine and Ray whether or not a run uses them.
Each round starts two fresh Python processes, alternating which goes first: one imports TRL's trainer as TRL does
("trl"), the other builds grpo-lab's trainer class ("grpo_lab": on a machine without CUDA or Unsloth, TRL's trainer
without its vLLM path). Reported: each one's median CPU time and wall time of the import alone, and their ratio.
Both import torch and transformers first, outside the timed part, so the ratio is the trainer module's own import.
"""

from __future__ import annotations

import json
import resource
import statistics
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
import torch, transformers  # noqa: F401  (outside the timed part)
c0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
if sys.argv[1] == "trl":
    from trl import GRPOTrainer  # noqa: F401
else:
    from grpo_lab.trl import trainer_class
    trainer_class()
c1, t1 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
print(json.dumps({"cpu": (c1.ru_utime + c1.ru_stime) - (c0.ru_utime + c0.ru_stime), "wall": t1 - t0,
                  "vllm": "vllm" in sys.modules, "ray": "ray" in sys.modules}))
"""


def one(kind: str) -> dict:
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", CHILD, kind], capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(rounds: int = 5) -> dict:
    seen = {"trl": [], "grpo_lab": []}
    for i in range(rounds):
        for kind in (("trl", "grpo_lab") if i % 2 == 0 else ("grpo_lab", "trl")):
            seen[kind].append(one(kind))
    out = {}
    for kind, runs in seen.items():
        out[kind] = {"cpu_s": statistics.median(r["cpu"] for r in runs),
                     "wall_s": statistics.median(r["wall"] for r in runs),
                     "imports_vllm": all(r["vllm"] for r in runs), "imports_ray": all(r["ray"] for r in runs)}
        print(f"{kind:9s} median CPU {out[kind]['cpu_s']:5.1f} s, wall {out[kind]['wall_s']:5.1f} s; vLLM imported: "
              f"{out[kind]['imports_vllm']}, Ray: {out[kind]['imports_ray']}")
    out["cpu_ratio"] = out["grpo_lab"]["cpu_s"] / out["trl"]["cpu_s"]
    out["wall_ratio"] = out["grpo_lab"]["wall_s"] / out["trl"]["wall_s"]
    print(f"grpo_lab / trl: CPU {out['cpu_ratio']:.2f}, wall {out['wall_ratio']:.2f} ({rounds} rounds)")
    return out


if __name__ == "__main__":
    main()
