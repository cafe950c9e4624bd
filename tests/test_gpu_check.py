"""scripts/gpu_check.py: the stand-in model and the timed notebook-06 run work end to end (here on a CPU,
with the transformers backend); scripts/gpu_check.sh is valid bash. The GPU run itself is docs/gpu.md's."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_gpu_check_sh_is_valid_bash():
    for script in ("gpu_check.sh", "gpu_course.sh", "gpu_slim.sh", "gpu_gym_site.sh"):
        assert subprocess.run(["bash", "-n", str(ROOT / "scripts" / script)]).returncode == 0, script


def test_gpu_slim_takes_the_large_folders_out_of_what_travels_and_puts_them_back(tmp_path):
    """scripts/gpu_slim.sh (the device tool sends tracked and unignored files, 64 MiB at most): on, docs/results and
    notebooks/ leave git's index and are ignored, their files untouched; off, the index and .gitignore are exactly
    as before (a clean status)."""
    import shutil

    def git(*args):
        return subprocess.run(["git", *args], cwd=tmp_path, capture_output=True, text=True, check=True).stdout

    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "gpu_slim.sh", tmp_path / "scripts")
    for f, text in {"docs/results/a/r.json": "{}", "notebooks/01.ipynb": "{}", "grpo_lab/x.py": "x = 1",
                    ".gitignore": "results/\n!docs/results/\n!docs/results/**\n"}.items():
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text(text)
    git("init", "-q")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "start")
    slim = ["bash", str(tmp_path / "scripts" / "gpu_slim.sh")]
    on = subprocess.run(slim + ["on"], capture_output=True, text=True)
    assert on.returncode == 0 and "travels without carry" in on.stdout, on.stderr
    travels = git("ls-files", "-co", "--exclude-standard").split()
    assert "grpo_lab/x.py" in travels and not any(t.startswith(("docs/results", "notebooks")) for t in travels)
    assert (tmp_path / "docs/results/a/r.json").read_text() == "{}"  # nothing deleted
    assert subprocess.run(slim + ["on"], capture_output=True).returncode == 1  # never twice
    assert subprocess.run(slim + ["off"], capture_output=True).returncode == 0
    assert git("status", "--porcelain") == ""


def test_standin_model_and_timed_run(tmp_path):
    script = str(ROOT / "scripts" / "gpu_check.py")
    model = tmp_path / "standin"
    made = subprocess.run([sys.executable, script, "make", str(model), "--layers", "1", "--hidden", "64"],
                          capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr[-2000:]
    assert (model / "config.json").is_file() and (model / "tokenizer_config.json").is_file()
    ran = subprocess.run([sys.executable, script, "run", str(model), "--backend", "transformers", "--steps", "2",
                          "--maxlen", "8", "--eval-problems", "2"], capture_output=True, text=True, timeout=300,
                         env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                              "PYTHONPATH": os.environ.get("PYTHONPATH", "")})
    assert ran.returncode == 0, ran.stderr[-3000:]
    steps = [line for line in ran.stdout.splitlines() if line.startswith("STEP ")]
    assert len(steps) == 2
    result = json.loads(next(line for line in ran.stdout.splitlines() if line.startswith("RESULT "))[7:])
    assert result["backend"] == "transformers" and result["steps"] == 2 and len(result["rewards"]) == 2
    assert result["first_step_s"] > 0 and result["eval_s"] >= 0


def _lora_model(tmp_path, scale: float):
    """The stand-in (1 layer) with a LoRA adapter whose B weights are set to ``scale`` x noise: an adapter that
    changes the greedy completions (scale large), or none (scale 0, peft's own start)."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    script = str(ROOT / "scripts" / "gpu_check.py")
    subprocess.run([sys.executable, script, "make", str(tmp_path / "m"), "--layers", "1", "--hidden", "64"],
                   check=True, capture_output=True, timeout=120)
    tok = AutoTokenizer.from_pretrained(tmp_path / "m")
    model = AutoModelForCausalLM.from_pretrained(tmp_path / "m", dtype=torch.float32)
    torch.manual_seed(0)  # peft draws lora_A from the global generator: fixed here, whatever ran before
    model = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj", "o_proj",
                                                                                 "down_proj", "up_proj"]))
    torch.manual_seed(0)
    with torch.no_grad():
        for n, p in model.named_parameters():
            if "lora_B" in n:
                p.copy_(scale * torch.randn_like(p))
    return model, tok


def _canary_module():
    sys.path.insert(0, str(ROOT / "scripts"))
    import gpu_check

    return gpu_check


def test_the_generation_canary_catches_an_adapter_ignored_by_generation(tmp_path):
    """Issue 46's canary (the failure met with Unsloth's fast_inference: rollouts from the base model, the LoRA
    ignored): honest generation passes; generation that disables the adapter fails; an adapter that changes
    nothing is reported as a check without power, not as a pass."""
    gc = _canary_module()
    model, tok = _lora_model(tmp_path, scale=3.0)
    texts = ["<|im_start|>user\n3 + 4 =<|im_end|>\n<|im_start|>assistant\n", "<|im_start|>user\n12 - 5 =<|im_end|>\n"]
    honest = gc.check_generation(model, tok, texts, new_tokens=12)
    assert honest["ok"] is True and honest["greedy_changed_by_lora"] > 0 and honest["forward_argmax_differs"] == 0

    real_generate = model.generate

    def ignores_lora(*a, **kw):  # what a rollout engine holding the base weights does
        with model.disable_adapter():
            return real_generate(*a, **kw)

    model.generate = ignores_lora
    stale = gc.check_generation(model, tok, texts, new_tokens=12)
    assert stale["ok"] is False and stale["forward_argmax_differs"] > 0

    still, tok = _lora_model(tmp_path / "zero", scale=0.0)
    assert gc.check_generation(still, tok, texts, new_tokens=12)["ok"] is None


def test_run_passes_the_requested_dtype_to_the_run(monkeypatch):
    """`gpu_check.py run --dtype bfloat16` (the bf16 transformers baseline of docs/gpu.md) reaches RunConfig.dtype."""
    gpu_check = _canary_module()
    seen = {}
    monkeypatch.setattr(gpu_check, "run", lambda *a, **kw: seen.update(args=a, kw=kw))
    assert gpu_check.main(["run", "m", "--backend", "transformers", "--dtype", "bfloat16"]) == 0
    assert seen["args"][-1] == "bfloat16" and seen["kw"] == {"prompts": 4}
    assert gpu_check.main(["run", "m", "--prompts", "2"]) == 0 and seen["args"][-1] is None
    assert seen["kw"] == {"prompts": 2} and seen["args"][2:6] == (20, 64, "grpo", 32)  # run's own defaults


def test_data_writes_a_task_as_gsm8k_files_that_read_back(tmp_path):
    """`gpu_check.py data` (issue 60): a reasoning-gym task's problems as GSM8K JSONL, for a GPU machine without
    reasoning-gym; the GSM8K reader gives back every question and answer."""
    pytest.importorskip("reasoning_gym")
    from grpo_lab.tasks import make_problems
    from grpo_lab.tasks.gsm8k import extract_answer, load_gsm8k

    gc = _canary_module()
    task = "gym:chain_sum:min_terms=2,max_terms=2,min_digits=1,max_digits=2"
    assert gc.main(["data", task, str(tmp_path / "d"), "--n", "20"]) == 0
    for split in ("train", "test"):
        want = make_problems(task, 20, seed=0, split=split)
        got = load_gsm8k(split, data=tmp_path / "d")
        assert [p.prompt for p in got] == [p.prompt for p in want]
        assert [extract_answer(p.answer) for p in got] == [extract_answer(p.answer) for p in want]


def test_the_lesson_command_finds_lesson_06s_settings_line():
    """`gpu_check.py lesson` edits exactly one line of lesson 06 (its settings); a lesson whose line changed must
    fail here, not on a GPU machine."""
    import nbformat

    gc = _canary_module()
    for folder in ("solutions", "notebooks"):
        nb = nbformat.read(ROOT / folder / "06_gsm8k_unsloth.ipynb", as_version=4)
        assert sum(gc.SETTINGS_LINE in c.source for c in nb.cells if c.cell_type == "code") == 1, folder


def test_the_study_command_copies_study_3s_base_settings():
    """`gpu_check.py study` carries study 3's base settings as a copy (the GPU machine gets no docs/results): the copy
    must equal the plan it names, so that a GPU figure is for study 3's run, not a drifted one."""
    import tomllib

    gc = _canary_module()
    base = tomllib.loads((ROOT / "docs/results/smollm2-study3/plan.toml").read_text())["base"]
    assert {k: base[k] for k in gc.STUDY3_BASE} == gc.STUDY3_BASE


def test_the_study_command_passes_study_5s_evaluation_only_when_asked(monkeypatch):
    """`--eval-distinct` reaches the run's config as `eval_distinct=True` (study 5's evaluation, timed on the H200 of
    2026-11-27), and without it the run keeps study 3's evaluation: a flag dropped on the way would time the wrong
    evaluation on a GPU draw nobody can repeat cheaply."""
    gc = _canary_module()
    calls = []
    monkeypatch.setattr(gc, "study", lambda *a, **k: calls.append((a, k)))
    common = ["study", "/tmp/model", "--data", "d", "--eval-problems", "500", "--validation", "64"]
    assert gc.main(common + ["--eval-distinct"]) == 0 and gc.main(common) == 0
    unsloth = {"compile": True, "cache": None}
    assert calls[0][1] == {**unsloth, "eval_problems": 500, "validation_problems": 64, "eval_distinct": True}
    assert calls[1][1] == {**unsloth, "eval_problems": 500, "validation_problems": 64}
    assert calls[0][0][2:] == (64, "sign")  # study 3's steps and estimator by default
    # Unsloth's compile options reach the study command too (before the 09:28 draw it accepted and ignored them)
    assert gc.main(common + ["--no-compile", "--cache", "/tmp/c"]) == 0
    assert calls[2][1] == {"compile": False, "cache": "/tmp/c", "eval_problems": 500, "validation_problems": 64}
