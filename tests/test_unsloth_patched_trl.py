"""Issue 12: once `unsloth` is imported, trl.GRPOTrainer is Unsloth's rewrite and breaks on plain models.

Simulated on a CPU: trl.GRPOTrainer is replaced, as Unsloth does, by a class named
UnslothGRPOTrainer that fails like Unsloth's on a model without `for_training`. The real
Unsloth patch is exercised by scripts/gpu_check.sh on a GPU machine.
"""

import pytest
import trl
import trl.trainer.grpo_trainer as grpo_module
from datasets import Dataset
from trl import GRPOConfig

from grpo_lab.policy import char_tokenizer, tiny_causal_lm
from grpo_lab.trl import is_unsloth_model, is_unsloth_patched, pristine_grpo_trainer, trainer_class
from conftest import USE_CPU

REAL = grpo_module.GRPOTrainer


class UnslothGRPOTrainer(REAL):  # the name and the failure of Unsloth's patched trainer
    def __init__(self, *args, model=None, **kwargs):
        model.for_training()  # AttributeError on a plain model, as reported on the H100
        super().__init__(*args, model=model, **kwargs)


@pytest.fixture
def patched(monkeypatch):
    for owner in (trl, trl.trainer, grpo_module):
        monkeypatch.setattr(owner, "GRPOTrainer", UnslothGRPOTrainer, raising=False)
    yield


def one_step(tmp_path, cls, model, tok):
    ds = Dataset.from_dict({"prompt": [f"{i}+{i}=" for i in range(4)]})
    args = GRPOConfig(output_dir=str(tmp_path), per_device_train_batch_size=4, num_generations=4,
                      max_completion_length=2, max_steps=1, report_to="none", use_cpu=USE_CPU, save_strategy="no")
    tr = cls(model=model, args=args, reward_funcs=lambda completions, **k: [1.0, 0.0] * (len(completions) // 2),
             train_dataset=ds, processing_class=tok, estimator="sign")
    tr.train()
    return tr


def test_detection():
    tok = char_tokenizer()
    model = tiny_causal_lm(tok)
    assert not is_unsloth_patched(REAL) and is_unsloth_patched(UnslothGRPOTrainer)
    assert not is_unsloth_model(model)
    model.for_training = lambda: None
    assert is_unsloth_model(model)


def test_plain_model_gets_trl_own_trainer_under_a_patched_trl(patched, tmp_path):
    tok = char_tokenizer()
    model = tiny_causal_lm(tok)
    cls = trainer_class(model=model)
    base = cls._grpo_lab_base
    assert base.__name__ == "GRPOTrainer" and not is_unsloth_patched(base)
    assert base is pristine_grpo_trainer()  # rebuilt once from TRL's source, then reused
    tr = one_step(tmp_path, cls, model, tok)
    assert tr.state.global_step == 1 and tr.last_advantages is not None


def test_without_model_a_plain_model_gets_a_clear_error(patched, tmp_path):
    tok = char_tokenizer()
    with pytest.raises(TypeError, match=r"Unsloth.s trainer .*trainer_class\(model=model\)"):
        one_step(tmp_path, trainer_class(), tiny_causal_lm(tok), tok)


def test_unsloth_model_keeps_unsloth_trainer(patched):
    tok = char_tokenizer()
    model = tiny_causal_lm(tok)
    model.for_training = lambda: None
    assert trainer_class(model=model)._grpo_lab_base is UnslothGRPOTrainer


def test_unpatched_trl_is_used_as_is():
    assert pristine_grpo_trainer() is REAL
    assert trainer_class(model=tiny_causal_lm(char_tokenizer()))._grpo_lab_base is REAL


def test_dynamic_sampling_under_unsloths_trainer_is_refused_by_name(patched):
    tok = char_tokenizer()
    model = tiny_causal_lm(tok)
    model.for_training = lambda: None
    with pytest.raises(ValueError, match="under Unsloth's trainer has never been executed"):
        trainer_class(model=model)(model=model, sampling="dynamic")
