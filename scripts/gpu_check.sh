#!/usr/bin/env bash
# The GPU check of issue 12, on one GPU machine with the `gpu` extra installed (or the carried site of
# ../shared/gpu/make_site.sh): versions, the whole test suite, then a 20-step notebook-06 run on a
# random-weight stand-in model under both backends, with per-step, first-step and evaluation times.
#
#   bash scripts/gpu_check.sh [OUTDIR]        # default OUTDIR: gpu-check (logs and the stand-in model)
#   MODEL=DIR bash scripts/gpu_check.sh       # the canary on a real model directory (a random stand-in has too
#                                             # little power: its adapter rarely changes a greedy token)
#
# Record what it prints (date, GPU, versions, RESULT lines) in docs/gpu.md.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-gpu-check}
mkdir -p "$OUT"
export HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1
date -u +"date: %Y-%m-%d %H:%M UTC" | tee "$OUT/summary.txt"
python - <<'PY' 2>&1 | tee -a "$OUT/summary.txt"
import importlib.metadata as md, torch
print("gpu:", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "NONE (this check needs a CUDA GPU)")
for p in ("torch", "trl", "transformers", "peft", "accelerate", "unsloth", "unsloth_zoo", "bitsandbytes", "vllm"):
    try:
        print(f"{p} {md.version(p)}")
    except md.PackageNotFoundError:
        print(f"{p} not installed")
PY
echo "== pytest (tests/; the notebooks run in CI on a CPU)" | tee -a "$OUT/summary.txt"
python -m pytest tests -q -p no:cacheprovider -p no:nbval -o addopts="" -x -W ignore 2>&1 | tee "$OUT/pytest.log" | tail -5 \
  | tee -a "$OUT/summary.txt"
echo "== stand-in model" | tee -a "$OUT/summary.txt"
[ -d "$OUT/standin" ] || python scripts/gpu_check.py make "$OUT/standin" 2>&1 | tail -1 | tee -a "$OUT/summary.txt"
for backend in unsloth transformers; do
  echo "== notebook-06 path, backend $backend, 20 steps" | tee -a "$OUT/summary.txt"
  python scripts/gpu_check.py run "$OUT/standin" --backend "$backend" --steps 20 2>&1 | tee "$OUT/run-$backend.log" \
    | grep -E "^(STEP|RESULT)|Error" | tee -a "$OUT/summary.txt"
done
for backend in unsloth transformers; do
  echo "== canary: does generation see the trained adapter? backend $backend" | tee -a "$OUT/summary.txt"
  python scripts/gpu_check.py canary "${MODEL:-$OUT/standin}" --backend "$backend" --steps 4 2>&1 \
    | tee "$OUT/canary-$backend.log" | grep -E "^CANARY|Error" | tee -a "$OUT/summary.txt"
done
echo "summary: $OUT/summary.txt"
