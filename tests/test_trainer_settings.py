"""Issue 20: every run's effective trainer settings are set explicitly, recorded, and equal across backends.

``import unsloth`` replaces TRL's ``GRPOConfig`` for the whole process with one whose defaults differ
(read in unsloth 2026.10's models/rl.py): learning rate 5e-5, optim "adamw_8bit", weight decay 0.001,
seed 3407, num_generations 8, beta 0.001; an explicit loss_type "dapo" turns on
mask_truncated_completions and epsilon_high 0.28; "dr_grpo" forces scale_rewards False. Simulated here
on a CPU; the real patch is exercised by scripts/gpu_check.sh on a GPU machine.
"""

import dataclasses
import json

import pytest
import trl

from grpo_lab.config import RunConfig
from grpo_lab.runner import TRAINER_CONSTANTS, grpo_args, trainer_settings


@dataclasses.dataclass
class UnslothGRPOConfig(trl.GRPOConfig):
    learning_rate: float = 5e-5
    optim: str = "adamw_8bit"
    weight_decay: float = 0.001
    seed: int = 3407
    num_generations: int = 8
    beta: float = 0.001

    def __post_init__(self):
        super().__post_init__()
        if self.loss_type == "dapo":
            self.mask_truncated_completions, self.epsilon_high = True, 0.28
        if self.loss_type == "dr_grpo":
            self.scale_rewards = False


@pytest.fixture
def unsloth_patch(monkeypatch):
    monkeypatch.setattr(trl, "GRPOConfig", UnslothGRPOConfig)


CFG = RunConfig(steps=3, prompts_per_step=2, learning_rate=3e-4, seed=1)


def test_the_simulated_patch_really_changes_defaults(unsloth_patch, tmp_path):
    plain = trl.GRPOConfig(output_dir=str(tmp_path), use_cpu=True, loss_type="dapo")
    assert (plain.optim, plain.beta, plain.mask_truncated_completions, plain.epsilon_high) == \
        ("adamw_8bit", 0.001, True, 0.28)


def test_the_effective_settings_are_the_same_with_and_without_the_patch(tmp_path, monkeypatch):
    without = trainer_settings(grpo_args(CFG, tmp_path))
    monkeypatch.setattr(trl, "GRPOConfig", UnslothGRPOConfig)
    args = grpo_args(CFG, tmp_path)
    assert type(args) is UnslothGRPOConfig  # the patched class was used ...
    assert trainer_settings(args) == without  # ... and every setting that changes the run is still ours
    assert (args.learning_rate, args.seed, args.num_generations, args.beta) == (3e-4, 1, 4, 0.0)
    assert (args.mask_truncated_completions, args.epsilon_high) == (False, 0.2)
    json.dumps(without)  # recorded as JSON in every result


def test_every_constant_is_a_trainer_field_and_is_applied(tmp_path):
    args = grpo_args(CFG, tmp_path)
    fields = {f.name for f in dataclasses.fields(args)}
    missing = set(TRAINER_CONSTANTS) - fields
    assert missing <= {"use_adaptive_entropy", "off_policy_mask_threshold"}, missing  # newer TRL only
    for k, v in TRAINER_CONSTANTS.items():
        if k in fields:
            assert getattr(args, k) == v, k


def test_a_comparison_records_its_trainer_settings_and_refuses_a_patched_process(tmp_path, monkeypatch, capsys):
    from grpo_lab.cli import main

    args = ["compare", "--estimators", "grpo", "--seeds", "0,1", "--steps", "2", "--prompts-per-step", "2",
            "--eval-problems", "4", "--eval-samples", "4", "--out", str(tmp_path), "--no-progress"]
    monkeypatch.setattr("grpo_lab.compare.train", _interrupt_after_one())
    assert main(args) == 130  # interrupted after the first run, as Ctrl-C would
    out = next(tmp_path.iterdir())
    recorded = json.loads((out / "config.json").read_text())["trainer_settings"]
    assert recorded["optim"] == "adamw_torch_fused" and recorded["beta"] == 0.0
    monkeypatch.undo()
    monkeypatch.setattr(trl, "GRPOConfig", _Drifted)
    with pytest.raises(SystemExit):
        main(["compare", "--resume", str(out), "--no-progress"])
    err = capsys.readouterr().err
    assert "other trainer settings" in err and "max_grad_norm: 1.0 != 0.5" in err
    monkeypatch.undo()
    assert main(["compare", "--resume", str(out), "--no-progress"]) == 0
    assert "identical in every run" in (out / "report.md").read_text()
    with pytest.raises(SystemExit):  # caught before training, not after it
        main(args[:-5] + ["--eval-samples", "2", "--out", str(tmp_path / "x"), "--no-progress"])
    assert "must be at least the group size" in capsys.readouterr().err


@dataclasses.dataclass
class _Drifted(trl.GRPOConfig):
    """A patch that changes a setting after construction in a way grpo_args does not set back (a new field
    grpo-lab did not know about would look like this)."""

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "_drift", True)

    def __getattribute__(self, name):
        if name == "max_grad_norm" and object.__getattribute__(self, "__dict__").get("_drift"):
            return 0.5
        return super().__getattribute__(name)


def _interrupt_after_one():
    from grpo_lab.runner import train

    calls = []

    def fake(cfg, *a, **k):
        if calls:
            raise KeyboardInterrupt
        calls.append(cfg)
        return train(cfg, *a, **k)

    return fake


# ----------------------------------------------------------------------------- issue 20, item 3: the first step

def test_unsloth_environment_names_the_cache_and_the_compile_switch(tmp_path):
    from grpo_lab.policy import unsloth_environment

    assert unsloth_environment() == {}
    assert unsloth_environment(cache_dir=tmp_path) == {"UNSLOTH_MEGA_CACHE": "1", "UNSLOTH_MEGA_CACHE_DIR": str(tmp_path)}
    assert unsloth_environment(compile=False) == {"UNSLOTH_COMPILE_DISABLE": "1", "TORCHDYNAMO_DISABLE": "1"}


def test_unsloth_settings_are_refused_once_unsloth_is_imported(monkeypatch):
    import sys
    import types

    from grpo_lab.policy import apply_unsloth_environment

    monkeypatch.delenv("UNSLOTH_COMPILE_DISABLE", raising=False)
    monkeypatch.setitem(sys.modules, "unsloth", types.ModuleType("unsloth"))
    with pytest.raises(RuntimeError, match="unsloth is already imported.*UNSLOTH_COMPILE_DISABLE.*restart"):
        apply_unsloth_environment({"UNSLOTH_COMPILE_DISABLE": "1"})
    monkeypatch.setenv("UNSLOTH_COMPILE_DISABLE", "1")
    apply_unsloth_environment({"UNSLOTH_COMPILE_DISABLE": "1"})  # already in force: nothing to change


def test_a_run_on_the_unsloth_backend_sets_them_before_loading(monkeypatch, tmp_path):
    import os

    from grpo_lab import policy, runner
    from grpo_lab.config import RunConfig

    for k in ("UNSLOTH_MEGA_CACHE", "UNSLOTH_MEGA_CACHE_DIR", "UNSLOTH_COMPILE_DISABLE", "TORCHDYNAMO_DISABLE"):
        monkeypatch.delenv(k, raising=False)
    seen = {}
    monkeypatch.setattr(policy, "choose_backend", lambda backend: ("unsloth", "simulated"))
    monkeypatch.setattr(policy, "load_policy", lambda *a, **k: seen.update(
        {k: os.environ.get(k) for k in ("UNSLOTH_MEGA_CACHE_DIR", "UNSLOTH_COMPILE_DISABLE")}) or ("m", "t", None))
    monkeypatch.setattr(runner, "use_fast_inference", lambda *a: False)
    cfg = RunConfig(policy="some/model", unsloth_compile=False, unsloth_cache=str(tmp_path))
    runner.LanguageModel().load(cfg)
    assert seen == {"UNSLOTH_MEGA_CACHE_DIR": str(tmp_path), "UNSLOTH_COMPILE_DISABLE": "1"}
    with pytest.raises(ValueError, match="unsloth_compile must be True or False"):
        RunConfig(unsloth_compile="no").validate()


# ----------------------------------------------------------------------------- issue 60: what Unsloth's trainer sets

def _trainer_that_sets(field, value):
    """``compare.train`` as under a trainer whose ``__init__`` rewrites ``field`` of its args after the comparison
    recorded its settings (Unsloth's GRPOTrainer sets ``bf16_full_eval=True`` there: met on an H200, 2026-11-26)."""
    from grpo_lab.runner import train

    def patched(cfg, *a, **k):
        res = train(cfg, *a, **k)
        res["trainer_settings"] = {**res["trainer_settings"], field: value}
        return res

    return patched


@pytest.mark.parametrize("field, value, kept", [("bf16_full_eval", True, True), ("torch_empty_cache_steps", 250, True),
                                                ("max_grad_norm", 0.5, False)])
def test_a_trainer_that_rewrites_an_evaluation_only_field_keeps_its_run(tmp_path, monkeypatch, capsys, field, value,
                                                                        kept):
    from grpo_lab.cli import main

    monkeypatch.setattr("grpo_lab.compare.train", _trainer_that_sets(field, value))
    try:
        rc = main(["compare", "--estimators", "grpo", "--seeds", "0", "--steps", "1", "--prompts-per-step", "2",
                   "--eval-problems", "4", "--eval-samples", "4", "--out", str(tmp_path), "--no-progress"])
    except SystemExit as exit_:  # the CLI's error exit
        rc = exit_.code
    out = next(tmp_path.iterdir())
    assert (rc == 0) is kept and (out / "results" / "grpo-seed0.json").is_file() is kept
    if kept:  # recorded as the trainer ran it, and the report still calls the settings identical
        assert json.loads((out / "results" / "grpo-seed0.json").read_text())["trainer_settings"][field] == value
        assert "identical in every run" in (out / "report.md").read_text()
    else:
        assert f"{field}: 1.0 != 0.5" in capsys.readouterr().err


def test_evaluation_only_fields_are_fields_of_the_trainer_config(tmp_path):
    from grpo_lab.io import EVAL_ONLY_SETTINGS, settings_differ

    recorded = trainer_settings(grpo_args(CFG, tmp_path))
    assert set(EVAL_ONLY_SETTINGS) <= set(recorded)  # a renamed field would silently stop being ignored
    assert settings_differ(recorded, {**recorded, "bf16_full_eval": not recorded["bf16_full_eval"]}) == []
    assert settings_differ(recorded, {**recorded, "learning_rate": 1.0}) == [f"learning_rate: {CFG.learning_rate!r} != 1.0"]


# ------------------------------------------------------------------ issue 57: the optimizer as run settings

def test_the_schedule_and_adams_moments_are_run_settings_with_todays_values_as_defaults(tmp_path):
    """The Sign paper's optimizer (warmup then cosine decay, betas 0.9/0.95, epsilon 1e-8) is four RunConfig fields;
    their defaults are the constants every earlier run trained with, so earlier results still read as the same
    settings."""
    default = grpo_args(RunConfig(), tmp_path)
    for field, arg in (("lr_scheduler", "lr_scheduler_type"), ("warmup_steps", "warmup_steps"),
                       ("adam_beta2", "adam_beta2"), ("adam_epsilon", "adam_epsilon")):
        assert str(getattr(default, arg)).removeprefix("SchedulerType.").lower() == str(TRAINER_CONSTANTS[arg]).lower()
        assert getattr(RunConfig(), field) == TRAINER_CONSTANTS[arg]
    paper = grpo_args(RunConfig(lr_scheduler="cosine", warmup_steps=6, adam_beta2=0.95, adam_epsilon=1e-8), tmp_path)
    rec = trainer_settings(paper)
    assert "cosine" in str(rec["lr_scheduler_type"]).lower() and rec["warmup_steps"] == 6 and rec["adam_beta2"] == 0.95


@pytest.mark.parametrize("change, message", [
    (dict(lr_scheduler="linear"), "lr_scheduler must be constant or cosine"),
    (dict(warmup_steps=20, steps=20), r"warmup_steps \(20\) must be fewer than steps \(20\)"),
    (dict(adam_beta2=1.0), r"adam_beta2 must be in \[0, 1\)"),
    (dict(adam_epsilon=0.0), "adam_epsilon"),
])
def test_bad_optimizer_settings_are_named(change, message):
    with pytest.raises(ValueError, match=message):
        RunConfig(**change).validate(here=False)


def test_a_run_warms_up_then_decays_as_it_says():
    """The learning rate a tiny run logs at each step: rising over the warmup, then falling to the end."""
    from grpo_lab.runner import train

    cfg = RunConfig(steps=8, prompts_per_step=2, train_problems=40, eval_problems=4, eval_samples=2,
                    learning_rate=1e-3, lr_scheduler="cosine", warmup_steps=3, threads=1)
    rates = [h["learning_rate"] for h in train(cfg, evaluate_after=False)["history"]]
    assert len(rates) == 8 and rates[0] < rates[1] < rates[2] <= 1e-3
    assert all(a > b for a, b in zip(rates[3:], rates[4:])) and rates[-1] < 0.5e-3
