"""Issue 28: every RunConfig field refuses a wrong type or range by name, before any sampling or training (one
table-driven test over all fields; FIELD_RULES has a rule for each)."""

from dataclasses import fields

import pytest

from grpo_lab.config import FIELD_RULES, RunConfig

WRONG = {"int": ["5", 1.5, True], "number": ["0.1", True, float("nan"), float("inf")],
         "positive": ["1e-4", True, float("nan"), 0.0, -1e-4], "bool": ["yes", "False", 1, 0, None],
         "str": [5, b"x", ["grpo"]], "dict": [[], "eps=1", 3], "list": ["arithmetic", [3], {"a": 1}]}


def test_every_field_has_a_rule():
    assert set(FIELD_RULES) == {f.name for f in fields(RunConfig)}


@pytest.mark.parametrize("name", sorted(FIELD_RULES))
def test_each_field_refuses_a_wrong_value_by_name(name):
    kind, minimum, optional = FIELD_RULES[name]
    bad = [v for v in WRONG[kind] if not (v is None and optional)]
    if kind == "int" and minimum is not None:
        bad.append(minimum - 1)
    if kind == "number" and minimum is not None:
        bad.append(minimum - 0.5)
    if not optional and kind != "bool":
        bad.append(None)
    for value in bad:
        with pytest.raises(ValueError, match=name.replace("_", "[ _]")) as e:
            RunConfig(**{name: value}).validate()
        assert "\n" not in str(e.value)


@pytest.mark.parametrize("lora", [dict(lora_r=4), dict(lora_alpha=8)])
def test_lora_on_the_tiny_lm_is_refused_not_ignored(lora):
    with pytest.raises(ValueError, match="trained without LoRA"):
        RunConfig(**lora).validate()


def test_the_defaults_and_the_presets_are_valid():
    from grpo_lab.config import PAPER_PROTOCOL, cpu_real, gsm8k_config, smoke, smollm2_study

    for cfg in (RunConfig(), gsm8k_config(), smoke(gsm8k_config()), cpu_real(gsm8k_config()), smollm2_study(),
                PAPER_PROTOCOL["config"]):
        assert cfg.validate() is cfg


def test_eval_tasks_are_checked_and_the_cli_repeats_the_option():
    from grpo_lab.cli import build_parser

    with pytest.raises(ValueError, match="unknown task 'nope'"):
        RunConfig(eval_tasks=["nope"]).validate()
    with pytest.raises(ValueError, match="eval_tasks lists a task twice or the run's own task"):
        RunConfig(eval_tasks=["arithmetic"]).validate()
    a = build_parser().parse_args(["compare", "--eval-task", "gym:chain_sum:min_terms=2,max_terms=2",
                                   "--eval-task", "word_problems"])
    assert a.eval_tasks == ["gym:chain_sum:min_terms=2,max_terms=2", "word_problems"]
