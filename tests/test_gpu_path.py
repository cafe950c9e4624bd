"""The GPU path, tested on a CPU: backend choice and its errors, the GSM8K loader, the pins, and the
Unsloth / TRL calls grpo_lab makes checked against the source of the pinned releases."""

import ast
import importlib.metadata
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from grpo_lab import policy
from grpo_lab.policy import char_tokenizer, choose_backend, load_policy, tiny_causal_lm
from grpo_lab.tasks.gsm8k import is_correct, load_gsm8k

PINS_FILE = Path(policy.__file__).with_name("requirements-gpu.txt")


def pins() -> dict:
    out = {}
    for line in PINS_FILE.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            req = Requirement(line)
            (spec,) = req.specifier
            out[req.name.lower().replace("-", "_")] = spec.version
    return out


@pytest.mark.parametrize("cuda, unsloth, want, why", [
    (False, False, "transformers", "no CUDA GPU"), (False, True, "transformers", "no CUDA GPU"),
    (True, False, "transformers", "unsloth not installed"), (True, True, "unsloth", "CUDA GPU visible"),
])
def test_auto_backend(cuda, unsloth, want, why):
    backend, reason = choose_backend("auto", cuda=cuda, unsloth=unsloth)
    assert backend == want and why in reason


def test_explicit_unsloth_errors():
    with pytest.raises(RuntimeError, match="needs a CUDA GPU"):
        choose_backend("unsloth", cuda=False, unsloth=True)
    with pytest.raises(RuntimeError, match="needs the unsloth package"):
        choose_backend("unsloth", cuda=True, unsloth=False)
    with pytest.raises(ValueError, match="unknown backend 'vllm'"):
        choose_backend("vllm")
    import torch

    cuda, has_unsloth = torch.cuda.is_available(), policy.unsloth_installed()
    want = ("needs a CUDA GPU" if not cuda else "needs the unsloth package" if not has_unsloth
            else "could not load 'Qwen/Qwen2.5-0.5B-Instruct': not a local model directory")  # offline, GPU machine
    with pytest.raises(RuntimeError, match=want):
        load_policy("Qwen/Qwen2.5-0.5B-Instruct", backend="unsloth")


def test_transformers_backend_with_lora_from_a_local_path(tmp_path):
    tok = char_tokenizer()
    tiny_causal_lm(tok).save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    import torch

    gpu = torch.cuda.is_available()  # auto picks Unsloth where a GPU and unsloth are present: ask for transformers
    model, tok2, info = load_policy(str(tmp_path), backend="transformers" if gpu else "auto", lora_r=4)
    assert info.backend == "transformers" and ("requested" if gpu else "no CUDA GPU") in info.why
    assert info.lora["alpha"] == 8
    assert any("lora_A" in n for n, _ in model.named_parameters())
    assert sum(p.requires_grad for p in model.parameters()) < len(list(model.parameters()))
    _, _, tiny = load_policy("tiny-lm")
    assert tiny.backend == "transformers" and "tiny LM" in tiny.why


def offline_error(call: str, tmp_path) -> str:
    """Run ``call`` in a fresh interpreter with the hub offline and an empty cache; the RuntimeError it printed."""
    module, fn = call.split(":")
    code = (f"from {module} import {fn.split('(')[0]}\n"
            f"try:\n    {fn}\nexcept RuntimeError as e:\n    print('ERR', e)\n")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path)}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120).stdout


def test_unknown_model_offline_is_a_clear_error(tmp_path):
    out = offline_error("grpo_lab.policy:load_policy('no-such-org/no-such-model')", tmp_path)
    assert "ERR could not load 'no-such-org/no-such-model'" in out and "tiny-lm" in out


def test_gsm8k_offline_error_and_smoke_fallback(tmp_path):
    out = offline_error("grpo_lab.tasks.gsm8k:load_gsm8k('test')", tmp_path)
    assert "ERR could not load GSM8K" in out and "save_to_disk" in out and "smoke=True" in out
    smoke = load_gsm8k("train", smoke=True, n=20)
    assert len(smoke) == 20 and all("####" in p.answer and is_correct(p.answer, p.answer) for p in smoke)
    assert load_gsm8k("test", smoke=True, n=5) != smoke[:5]  # test and train differ
    with pytest.raises(ValueError, match="splits train, test"):
        load_gsm8k("validation")


def test_gpu_pins_live_in_one_place():
    try:
        req = importlib.metadata.requires("grpo-lab") or []
    except importlib.metadata.PackageNotFoundError:  # a checkout on PYTHONPATH (the GPU machine): no metadata
        pytest.skip("grpo-lab is not installed here, so it has no metadata to read (CI installs it)")
    gpu = sorted(r.split(";")[0].strip().lower().replace("-", "_") for r in req if 'extra == "gpu"' in r)
    assert gpu == sorted(f"{k}=={v}" for k, v in pins().items())
    nb = (Path(__file__).resolve().parents[1] / "notebooks" / "06_gsm8k_unsloth.ipynb").read_text()
    assert '"accelerator": "GPU"' in nb
    from grpo_lab import project

    if project.GITHUB_REPO:  # the install cell exists only with a repository address (tests/test_course.py)
        assert "[gpu]" in nb


class _Installed:
    """The installed release's files, read like a wheel (``read(path)``): used when the installed version is the
    pinned one, so the check runs on a machine with no package index (the GPU machine)."""

    def __init__(self, name: str):
        self.dist = importlib.metadata.distribution(name)

    def read(self, path: str) -> bytes:
        return Path(self.dist.locate_file(path)).read_bytes()

    def namelist(self) -> list[str]:
        return [str(f) for f in self.dist.files or ()]


def _wheel(tmp_path: Path, name: str, version: str):
    try:
        if importlib.metadata.version(name) == version:
            return _Installed(name)
    except importlib.metadata.PackageNotFoundError:
        pass
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(tmp_path),
                    f"{name}=={version}"], check=True, capture_output=True, timeout=300)
    (whl,) = [p for p in tmp_path.glob("*.whl") if p.name.lower().startswith(name.lower().replace("-", "_"))]
    return zipfile.ZipFile(whl)


def test_an_installed_release_reads_like_its_wheel():
    """On the GPU machine (no package index) the pinned release's files come from the installed package: it must
    answer what the checks ask of a wheel (``namelist``, ``read``); an H100 run on 2026-11-26 found ``namelist``
    missing."""
    inst = _Installed("pytest")
    meta = next(n for n in inst.namelist() if n.endswith(".dist-info/METADATA"))
    assert b"Name: pytest" in inst.read(meta)


def _params(source: str, cls: str, fn: str) -> set:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for f in node.body:
                if isinstance(f, ast.FunctionDef) and f.name == fn:
                    a = f.args
                    return {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
    raise AssertionError(f"{cls}.{fn} not found")


def test_unsloth_calls_match_the_pinned_release(tmp_path):
    p = pins()
    whl = _wheel(tmp_path, "unsloth", p["unsloth"])
    loader = whl.read("unsloth/models/loader.py").decode()
    llama = whl.read("unsloth/models/llama.py").decode()
    assert "class FastLanguageModel(FastLlamaModel)" in loader  # get_peft_model is inherited from FastLlamaModel
    missing = set(policy.UNSLOTH_FROM_PRETRAINED_KW) - _params(loader, "FastLanguageModel", "from_pretrained")
    assert not missing, f"FastLanguageModel.from_pretrained has no {missing}"
    missing = set(policy.UNSLOTH_GET_PEFT_MODEL_KW) - _params(llama, "FastLlamaModel", "get_peft_model")
    assert not missing, f"FastLlamaModel.get_peft_model has no {missing}"
    # the pinned set satisfies unsloth's own requirements
    meta = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
    for line in whl.read(meta).decode().splitlines():
        if line.startswith("Requires-Dist:") and "extra ==" not in line:
            req = Requirement(line.split(":", 1)[1].strip())
            key = req.name.lower().replace("-", "_")
            if key in p:
                assert req.specifier.contains(p[key], prereleases=True), f"{key}=={p[key]} violates {req}"


def test_trl_hooks_exist_in_the_pinned_trl(tmp_path):
    whl = _wheel(tmp_path, "trl", pins()["trl"])
    src = whl.read("trl/trainer/grpo_trainer.py").decode()
    for needle in ("def _calculate_rewards(", "def _generate_and_score_completions(", 'self._logs["advantages"]',
                   "self.multi_objective_aggregation", "self.reward_weights", "self.num_generations_eval",
                   "def log(", 'self._metrics[mode]'):
        assert needle in src, needle
