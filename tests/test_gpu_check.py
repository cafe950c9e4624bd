"""scripts/gpu_check.py: the stand-in model and the timed notebook-06 run work end to end (here on a CPU,
with the transformers backend); scripts/gpu_check.sh is valid bash. The GPU run itself is docs/gpu.md's."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_gpu_check_sh_is_valid_bash():
    assert subprocess.run(["bash", "-n", str(ROOT / "scripts" / "gpu_check.sh")]).returncode == 0


def test_standin_model_and_timed_run(tmp_path):
    script = str(ROOT / "scripts" / "gpu_check.py")
    model = tmp_path / "standin"
    made = subprocess.run([sys.executable, script, "make", str(model), "--layers", "1", "--hidden", "64"],
                          capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr[-2000:]
    assert (model / "config.json").is_file() and (model / "tokenizer_config.json").is_file()
    ran = subprocess.run([sys.executable, script, "run", str(model), "--backend", "transformers", "--steps", "2",
                          "--maxlen", "8", "--eval-problems", "2"], capture_output=True, text=True, timeout=300,
                         env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert ran.returncode == 0, ran.stderr[-3000:]
    steps = [line for line in ran.stdout.splitlines() if line.startswith("STEP ")]
    assert len(steps) == 2
    result = json.loads(next(line for line in ran.stdout.splitlines() if line.startswith("RESULT "))[7:])
    assert result["backend"] == "transformers" and result["steps"] == 2 and len(result["rewards"]) == 2
    assert result["first_step_s"] > 0 and result["eval_s"] >= 0
