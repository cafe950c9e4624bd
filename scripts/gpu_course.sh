#!/usr/bin/env bash
# Issue 60 on a GPU machine (no network; the carried site of ../shared/gpu/make_site.sh and its jupyter part):
# lesson 06 executed as a student runs it, a second model size for rough_runtime, one study-3-sized run timed.
#
#   bash scripts/gpu_course.sh standin OUT        # the 0.5B random-weight stand-in (shared/gpu/probe.py's, carried as
#                                                 # .gpu/probe.py) at lesson 06's step shape: 2 prompts x G 4 x 192 tokens
#   bash scripts/gpu_course.sh model OUT GGUF     # SmolLM2 converted from GGUF; lesson 06 (solutions copy, settings line
#                                                 # pointed at it and at .gpu/data-gsm); one run at study 3's settings on
#                                                 # .gpu/data-sums ($STUDY_EVAL test problems, default 100 of 500)
#   STUDY_S=0 bash scripts/gpu_course.sh model ...  # the lesson alone (no study run); GSM_DATA=DIR for the lesson's data
#
# The data directories come from `python scripts/gpu_check.py data TASK DIR` on a machine with reasoning-gym.
# Everything it prints goes to OUT/summary.txt too; record it in docs/gpu.md.
set -uo pipefail
cd "$(dirname "$0")/.."
what=${1:?standin or model}; OUT=${2:?output directory}; mkdir -p "$OUT"
export HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1 JUPYTER_RUNTIME_DIR=/tmp/jupyter-runtime GRPO_LAB_RESULTS=/tmp/results-06
log() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$OUT/summary.txt"; }
keep() { grep -E "^(STEP|RESULT|CELL|LESSON|converted|\{)|Error|error:" | cut -c1-4000 | tee -a "$OUT/summary.txt"; }
case $what in
standin)
  log "versions"
  python - <<'PY' 2>&1 | tee -a "$OUT/summary.txt"
import importlib.metadata as md, platform, torch
print("gpu:", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "NONE", "| python", platform.python_version())
for p in ("torch", "trl", "transformers", "peft", "accelerate", "unsloth", "unsloth_zoo", "bitsandbytes", "nbclient",
          "ipykernel", "matplotlib"):
    try:
        print(f"{p} {md.version(p)}")
    except md.PackageNotFoundError:
        print(f"{p} not installed")
PY
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee -a "$OUT/summary.txt"
  log "0.5B stand-in (probe.py make --size 0.5b)"
  python .gpu/probe.py make /tmp/standin --size 0.5b 2>&1 | keep
  log "stand-in, unsloth, lesson 06's step shape, 8 steps"
  timeout "${STANDIN_S:-240}" python scripts/gpu_check.py run /tmp/standin --backend unsloth --steps 8 --prompts 2 \
    --maxlen 192 --eval-problems 4 2>&1 | tee "$OUT/standin.log" | keep
  ;;
model)
  GGUF=${3:?the SmolLM2 GGUF}
  log "convert $GGUF"
  python scripts/gpu_check.py convert "$GGUF" /tmp/smollm2 2>&1 | keep
  log "lesson 06 (solutions/06_gsm8k_unsloth.ipynb), nbclient"
  timeout "${LESSON_S:-330}" python scripts/gpu_check.py lesson solutions/06_gsm8k_unsloth.ipynb "$OUT/lesson06" \
    --model /tmp/smollm2 --data "${GSM_DATA:-.gpu/data-gsm}" 2>&1 | tee "$OUT/lesson06.log" | keep
  [ "${STUDY_S:-300}" = 0 ] && { log "done (STUDY_S=0: no study run)"; exit 0; }
  log "one run at study 3's settings (sign, lr 3e-4, seed 0), ${STUDY_EVAL:-100} test + 16 validation problems"
  timeout "${STUDY_S:-300}" python scripts/gpu_check.py study /tmp/smollm2 --data .gpu/data-sums \
    --eval-problems "${STUDY_EVAL:-100}" --validation 16 2>&1 | tee "$OUT/study.log" | keep
  ;;
*) echo "unknown: $what (standin or model)"; exit 2 ;;
esac
log "done"
