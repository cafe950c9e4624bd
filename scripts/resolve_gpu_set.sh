#!/usr/bin/env bash
# Does the pinned GPU set (grpo_lab/requirements-gpu.txt) resolve beside a given torch? (issue 50, item 3)
#
#   bash scripts/resolve_gpu_set.sh 2.11.0     # Colab's torch, say; prints what pip would install, and the verdict
#
# In a fresh virtual environment (removed at the end): the given torch first, then `pip install --dry-run` of the
# pinned set with pip's JSON report; nothing is installed but torch. Needs the package index (PyPI).
set -euo pipefail
TORCH=${1:?give the torch version to resolve against, e.g. 2.11.0}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install -q --upgrade pip
"$WORK/venv/bin/python" -m pip install -q "torch==$TORCH"
if "$WORK/venv/bin/python" -m pip install --dry-run --quiet --report "$WORK/report.json" \
    -r "$ROOT/grpo_lab/requirements-gpu.txt" "torch==$TORCH"; then
  "$WORK/venv/bin/python" - "$WORK/report.json" "$TORCH" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
items = sorted((i["metadata"]["name"], i["metadata"]["version"]) for i in report["install"])
print(f"resolves beside torch {sys.argv[2]}: {len(items)} packages to install")
print(", ".join(f"{n} {v}" for n, v in items))
PY
else
  echo "does NOT resolve beside torch $TORCH"
  exit 1
fi
