"""Dynamic sampling and its relatives (issue 17): the group filter, the refill loop, the budget, bad input."""

import math

import numpy as np
import pytest
import torch
from datasets import Dataset
from trl import GRPOConfig

from conftest import USE_CPU
from grpo_lab.config import RunConfig, check_sampling, method_name, parse_method
from grpo_lab.policy import char_tokenizer, tiny_causal_lm
from grpo_lab.starvation import collapse_rate, filter_groups
from grpo_lab.sampling import choose_groups, merge_rows
from grpo_lab.trl import CompletionBudget, trainer_class


G = 4


# ----------------------------------------------------------------------------- the filter (a pure function)

def test_filter_keeps_exactly_the_groups_with_spread():
    r = torch.tensor([0., 0, 0, 0,   1, 0, 0, 0,   1, 1, 1, 1,   0, 1, 1, 0,   1, 1, 1, 0])
    f = filter_groups(r, G)
    assert f.keep.tolist() == [False, True, False, True, True]
    assert f.all_fail.tolist() == [True, False, False, False, False]
    assert f.all_pass.tolist() == [False, False, True, False, False]
    assert not f.other.any() and f.binary
    assert f.counts() == dict(keep=3, all_fail=1, all_pass=1, other=0)
    # the same verdicts by brute force on every 0/1 group of 4
    every = torch.tensor([[(i >> b) & 1 for b in range(G)] for i in range(2 ** G)], dtype=torch.float32)
    f = filter_groups(every, G)
    assert f.keep.tolist() == [0 < int(row.sum()) < G for row in every]


def test_filter_partitions_every_group_and_agrees_with_collapse_rate():
    gen = torch.Generator().manual_seed(0)
    r = (torch.rand(64, G, generator=gen) < 0.3).float()
    r[3, 1] = torch.nan  # unscored: left out
    r[5] = torch.nan  # a group nobody could score: degenerate, "other"
    f = filter_groups(r, G)
    total = f.keep.int() + f.all_fail.int() + f.all_pass.int() + f.other.int()
    assert (total == 1).all()
    assert bool(f.other[5]) and not f.keep[5]
    cs = collapse_rate(r, G)
    assert (cs.mixed, cs.all_fail, cs.all_pass, cs.other_homogeneous) == \
        (int(f.keep.sum()), int(f.all_fail.sum()), int(f.all_pass.sum()), int(f.other.sum()))


def test_filter_rule_for_graded_rewards():
    # not 0/1: a group is degenerate only when all its rewards are equal, whatever their level
    r = torch.tensor([0.5, 0.5, 0.5, 0.5,   0.2, 0.3, 0.2, 0.2,   1.0, 1.0, 1.0, 1.0])
    f = filter_groups(r, G)
    assert f.keep.tolist() == [False, True, False]
    assert f.other.tolist() == [True, False, False] and f.all_pass.tolist() == [False, False, True]
    assert not f.binary


def test_choose_groups_takes_the_first_informative_then_pads():
    keep = torch.tensor([False, True, False, True, True, False, True])
    assert choose_groups(keep, 3) == ([1, 3, 4], [])
    assert choose_groups(keep, 6) == ([1, 3, 4, 6], [0, 2])  # short: train on the 4 found, 2 padding slots
    assert choose_groups(keep, 6, "skip") == ([], [0, 1, 2, 3, 4, 5])
    assert choose_groups(torch.zeros(4, dtype=torch.bool), 2) == ([], [0, 1])


def test_merge_rows_pads_prompts_left_and_completions_right():
    a = dict(prompt_ids=torch.tensor([[5, 6]]), prompt_mask=torch.tensor([[1, 1]]),
             completion_ids=torch.tensor([[7]]), completion_mask=torch.tensor([[1]]), advantages=torch.tensor([0.5]),
             num_items_in_batch=torch.tensor(1))
    b = dict(prompt_ids=torch.tensor([[4, 5, 6]]), prompt_mask=torch.tensor([[1, 1, 1]]),
             completion_ids=torch.tensor([[8, 9, 3]]), completion_mask=torch.tensor([[1, 1, 1]]),
             advantages=torch.tensor([-1.0]), num_items_in_batch=torch.tensor(3))
    m = merge_rows([a, b], pad_token_id=0)
    assert m["prompt_ids"].tolist() == [[0, 5, 6], [4, 5, 6]] and m["prompt_mask"].tolist() == [[0, 1, 1], [1, 1, 1]]
    assert m["completion_ids"].tolist() == [[7, 0, 0], [8, 9, 3]]
    assert m["completion_mask"].tolist() == [[1, 0, 0], [1, 1, 1]]
    assert m["advantages"].tolist() == [0.5, -1.0] and "num_items_in_batch" not in m
    with pytest.raises(ValueError, match="pixel_values"):
        merge_rows([{**a, "pixel_values": torch.zeros(1)}], 0)


# ----------------------------------------------------------------------------- method names and bad input

@pytest.mark.parametrize("name,want", [
    ("dapo", dict(estimator="grpo", sampling="dynamic", skip_prob=0.0)),
    ("grpo", dict(estimator="grpo", sampling="none", skip_prob=0.0)),
    ("grpo+drop", dict(estimator="grpo", sampling="drop", skip_prob=0.0)),
    ("sign+dynamic", dict(estimator="sign", sampling="dynamic", skip_prob=0.0)),
    ("grpo+skip", dict(estimator="grpo", sampling="none", skip_prob=0.5)),
    ("rloo+dynamic+skip=0.8", dict(estimator="rloo", sampling="dynamic", skip_prob=0.8)),
])
def test_method_names_round_trip(name, want):
    assert parse_method(name) == want
    assert method_name(want) == name
    assert method_name(RunConfig().with_run(name, 3)) == name


@pytest.mark.parametrize("name,match", [("ppo", "unknown estimator 'ppo'"), ("grpo+dynamic+drop", r"\+drop"),
                                        ("grpo+skip=1", "strictly between 0 and 1"), ("grpo+skip=x", "not a probability"),
                                        ("grpo+fast", r"\+fast"), ("", "a method is")])
def test_bad_method_names_are_named(name, match):
    with pytest.raises(ValueError, match=match):
        parse_method(name)


@pytest.mark.parametrize("kw,match", [
    (dict(max_generation_rounds=0), "max_generation_rounds must be >= 1"),
    (dict(max_generation_rounds=1.5), "max_generation_rounds"),
    (dict(on_exhausted="wait"), "on_exhausted must be 'train'"),
    (dict(sampling="filter"), "sampling must be one of"),
    (dict(skip_prob=1.0), r"skip_prob must be a number in \[0, 1\)"),
    (dict(skip_prob=math.nan), "skip_prob"),
])
def test_bad_sampling_settings_are_named(kw, match):
    with pytest.raises((ValueError, TypeError), match=match):  # a float count is a TypeError
        check_sampling(**kw)
    with pytest.raises((ValueError, TypeError), match=match):
        RunConfig(**kw).validate()


def test_a_budget_smaller_than_one_step_is_refused():
    with pytest.raises(ValueError, match=r"smaller than one step \(16 prompts x G=4 = 64"):
        RunConfig(budget_completions=63).validate()
    RunConfig(budget_completions=64).validate()
    with pytest.raises(ValueError, match="tabular"):
        RunConfig(policy="tabular", sampling="dynamic").validate()


# ----------------------------------------------------------------------------- the trainer

def _trainer(tmp_path, reward, steps=2, per_device=8, callbacks=(), loss_type="dapo", args_extra=None, **kw):
    tok = char_tokenizer()
    ds = Dataset.from_dict({"prompt": [f"{i}+{i}=" for i in range(40)]})
    args = GRPOConfig(output_dir=str(tmp_path), per_device_train_batch_size=per_device, num_generations=G,
                      max_completion_length=4, max_steps=steps, learning_rate=1e-3, logging_steps=1,
                      report_to="none", use_cpu=USE_CPU, save_strategy="no", seed=0, loss_type=loss_type,
                      disable_tqdm=True, **(args_extra or {}))
    torch.manual_seed(0)
    return trainer_class()(model=tiny_causal_lm(tok), args=args, reward_funcs=reward, train_dataset=ds,
                           processing_class=tok, callbacks=list(callbacks), **kw)


def _scripted(batches):
    it = iter(batches)

    def reward(prompts, completions, **kw):
        return [float(x) for x in next(it)]
    return reward


def test_dynamic_sampling_refills_until_the_batch_is_informative(tmp_path):
    # round 1: one informative group of 2; round 2: none; round 3: two (one is surplus)
    rounds = [[0, 0, 0, 0, 1, 0, 1, 0], [1, 1, 1, 1, 0, 0, 0, 0], [0, 1, 1, 1, 1, 1, 0, 1]]
    tr = _trainer(tmp_path, _scripted(rounds), steps=1, sampling="dynamic")
    seen = []
    orig = tr._prepare_inputs

    def spy(batch):
        out = orig(batch)
        seen.append({k: v.clone() for k, v in out.items() if isinstance(v, torch.Tensor)})
        return out
    tr._prepare_inputs = spy
    tr.train()
    s = tr.last_sampling
    assert s["rounds"] == 3 and s["kept_groups"] == [1, 4] and s["padding_groups"] == []
    assert (s["groups"], s["kept"], s["dropped_all_fail"], s["dropped_all_pass"]) == (6, 2, 2, 1)
    assert tr.generated["completions"] == 24 and tr.generated["trained_informative"] == 2
    batch = seen[0]
    # the trained rows are the kept groups' rewards: [1,0,1,0] and [0,1,1,1] (TRL shuffles rows within the batch)
    assert sorted(tr.last_rewards.tolist()) == sorted([1., 0, 1, 0, 0, 1, 1, 1])
    assert int(batch["num_items_in_batch"]) == int(batch["completion_mask"].sum())
    assert tr.state.log_history[0]["sampling/rounds"] == 3
    assert tr.state.log_history[0]["sampling/completions_total"] == 24


@pytest.mark.parametrize("on_exhausted", ["train", "skip"])
def test_refill_terminates_on_an_all_degenerate_stream(tmp_path, on_exhausted):
    calls = []

    def never(prompts, completions, **kw):
        calls.append(len(completions))
        return [0.0] * len(completions)

    tr = _trainer(tmp_path, never, steps=2, sampling="dynamic", max_generation_rounds=3, on_exhausted=on_exhausted)
    tr.train()
    assert calls == [8] * 6  # 3 rounds per step, then the step goes on with what it has
    for row in tr.state.log_history[:2]:
        assert row["sampling/rounds"] == 3 and row["sampling/short"] == 1 and row["sampling/kept"] == 0
        assert row["grad_norm"] == 0.0  # nothing informative: every row is padding, no gradient
    assert tr.generated["completions"] == 48


def test_on_exhausted_skip_trains_on_nothing_when_short(tmp_path):
    rounds = [[1, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0]]
    tr = _trainer(tmp_path / "t", _scripted(rounds), steps=1, sampling="dynamic", max_generation_rounds=2)
    tr.train()
    assert tr.last_sampling["kept_groups"] == [0] and tr.state.log_history[0]["grad_norm"] > 0
    tr = _trainer(tmp_path / "s", _scripted(rounds), steps=1, sampling="dynamic", max_generation_rounds=2,
                  on_exhausted="skip")
    tr.train()
    assert tr.last_sampling["kept_groups"] == [] and tr.state.log_history[0]["grad_norm"] == 0
    assert all(torch.isfinite(p).all() for p in tr.model.parameters()), "a skipped step left non-finite weights"


def test_drop_leaves_degenerate_groups_out_of_the_normaliser(tmp_path):
    batch = [1, 0, 0, 0, 1, 1, 1, 1]
    seen = {}
    for sampling in ("none", "drop"):
        tr = _trainer(tmp_path / sampling, _scripted([batch]), steps=1, sampling=sampling)
        orig = tr._prepare_inputs
        tr._prepare_inputs = lambda b, orig=orig, s=sampling: seen.setdefault(s, orig(b))
        tr.train()
    none, drop = seen["none"], seen["drop"]
    assert drop["completion_mask"].sum() < none["completion_mask"].sum()  # the all-pass group is gone
    assert int(drop["num_items_in_batch"]) == int(drop["completion_mask"].sum())
    assert int(none["num_items_in_batch"]) == int(none["completion_mask"].sum())
    assert tr.last_sampling["rounds"] == 1 and tr.last_sampling["kept_groups"] == [0]


def test_graded_rewards_get_the_rule_in_a_warning(tmp_path):
    tr = _trainer(tmp_path, lambda prompts, completions, **kw: [0.5] * len(completions), steps=1,
                  sampling="dynamic", max_generation_rounds=1)
    with pytest.warns(UserWarning, match="not all 0/1. A group is dropped only when all its scored rewards are equal"):
        tr.train()


def test_loss_types_that_count_padding_are_refused(tmp_path):
    with pytest.raises(ValueError, match="loss_type='grpo': its normaliser counts padded rows"):
        _trainer(tmp_path, _scripted([]), sampling="dynamic", loss_type="grpo")


def test_skip_replaces_prompts_whose_latest_group_was_degenerate(tmp_path):
    tr = _trainer(tmp_path, lambda prompts, completions, **kw: [0.0] * len(completions), steps=1,
                  sampling="none", skip_prob=0.99)
    tr.train()
    assert tr.generated["skipped_prompts"] == 0  # nothing seen yet
    assert len(tr._seen) == 2 and all(tr._seen.values())  # both prompts' groups were all-fail
    from grpo_lab.sampling import _skip_degenerate

    known = [tr.train_dataset[i] for i in range(40) if tr._seen.get(f'"{tr.train_dataset[i]["prompt"]}"')]
    out, skipped = _skip_degenerate(tr, known)
    assert skipped >= len(known) and all(not tr._seen.get(f'"{ex["prompt"]}"') for ex in out)


def test_budget_stops_every_run_within_one_step(tmp_path):
    for sampling, per_step in (("none", 8), ("dynamic", None)):
        gen = torch.Generator().manual_seed(1)
        tr = _trainer(tmp_path / sampling, lambda prompts, completions, **kw:
                      (torch.rand(len(completions), generator=gen) < 0.3).float().tolist(), steps=50,
                      sampling=sampling, callbacks=[CompletionBudget(40)])
        tr.train()
        done = tr.generated["completions"]
        last = tr.state.log_history[tr.state.global_step - 1]["sampling/completions"]
        assert done >= 40 and done - last < 40, (sampling, done, last)
        assert tr.state.global_step < 50
        if per_step:
            assert tr.state.global_step == 5


def test_budget_callback_needs_our_trainer_and_a_positive_budget(tmp_path):
    with pytest.raises(ValueError, match="budget"):
        CompletionBudget(0)


def test_dynamic_sampling_with_steps_per_generation_and_several_iterations(tmp_path):
    """A generation batch spanning 2 optimizer steps (steps_per_generation=2), each used twice (num_iterations=2):
    the refill fills the whole generation batch (4 groups), the old log-probabilities of every round are merged
    with it, and each of the 4 steps trains on informative groups only."""
    gen = torch.Generator().manual_seed(3)
    calls = []

    def reward(prompts, completions, **kw):
        calls.append(len(completions))
        return (torch.rand(len(completions), generator=gen) < 0.25).float().tolist()

    tr = _trainer(tmp_path, reward, steps=4, sampling="dynamic",
                  args_extra=dict(steps_per_generation=2, num_iterations=2))
    seen = []
    orig = tr._generate_and_score_completions

    def spy(inputs):
        out = orig(inputs)
        seen.append(out)
        return out
    tr._generate_and_score_completions = spy
    tr.train()
    assert len(seen) == 1 and calls and all(c == 16 for c in calls)  # one generation batch, rounds of 16 rows
    batch = seen[0]
    assert "old_per_token_logps" in batch and batch["old_per_token_logps"].shape == batch["completion_mask"].shape
    assert tr.last_sampling["kept"] == 4 and tr.generated["batches"] == 1
    rewards = tr.last_rewards.view(-1, G)
    assert all(0 < float(g.sum()) < G for g in rewards)  # every trained group has a contrast
    assert all(row["grad_norm"] > 0 for row in tr.state.log_history[:4])


def test_the_refill_stream_is_reproducible_from_the_seed():
    from grpo_lab.sampling import PromptStream

    ds = Dataset.from_dict({"prompt": [f"{i}+{i}=" for i in range(30)]})
    draws = lambda seed: [ex["prompt"] for ex in PromptStream(ds, seed).draw(45)]  # noqa: E731 - past one epoch
    assert draws(0) == draws(0) and draws(0) != draws(1)
    first = draws(0)
    assert sorted(first[:30]) == sorted(ds["prompt"])  # a permutation, then a fresh one
    with pytest.raises(ValueError, match="map-style dataset with a length"):
        PromptStream(iter([]), 0)


def test_filter_never_keeps_an_all_equal_group_at_any_magnitude_or_dtype():
    """Property (issue 18's class of input): equal rewards are degenerate at every magnitude and dtype, and a
    group with one different reward is kept wherever the difference is representable."""
    from hypothesis import given, settings, strategies as st

    @settings(max_examples=200, deadline=None)
    @given(st.sampled_from([torch.float16, torch.bfloat16, torch.float32, torch.float64]),
           st.floats(min_value=-6e4, max_value=6e4, allow_nan=False), st.integers(min_value=2, max_value=9))
    def prop(dtype, value, g):
        r = torch.full((3 * g,), value, dtype=dtype)
        assert not filter_groups(r, g).keep.any()
        r[g] = r[g] + max(1.0, abs(float(r[g])) * 0.01)  # a representable difference in group 1
        if r[g] != r[g + 1]:
            assert filter_groups(r, g).keep.tolist() == [False, True, False]

    prop()


def test_the_sampling_registry_refuses_bad_rules_by_name():
    from grpo_lab.sampling import SamplingRule, get_sampling, register_sampling, sampling_names, unregister_sampling

    assert sampling_names()[:3] == ("none", "dynamic", "drop")
    assert get_sampling("dynamic").refills and get_sampling("drop").drops and not get_sampling("none").acts
    with pytest.raises(ValueError, match="'drop' is already registered"):
        register_sampling(SamplingRule("drop", drops=True, refills=False))
    with pytest.raises(ValueError, match="refills without dropping"):
        register_sampling(SamplingRule("refill_only", drops=False, refills=True))
    with pytest.raises(ValueError, match="must be an identifier"):
        register_sampling(SamplingRule("a+b", drops=True, refills=False))
    with pytest.raises(TypeError, match="keep must be a function"):
        register_sampling(SamplingRule("bad_keep", drops=True, refills=False, keep=3))
    with pytest.raises(ValueError, match="built-in sampling rule 'none' cannot be removed"):
        unregister_sampling("none")
    assert sampling_names()[:3] == ("none", "dynamic", "drop") and len(sampling_names()) == 3


@pytest.mark.parametrize("p", [np.float32(0.5), np.float64(0.25), 0.5, 0])
def test_skip_prob_takes_any_real_number_type(p):
    check_sampling(skip_prob=p)
    assert RunConfig(skip_prob=p).validate().skip_prob == p


@pytest.mark.parametrize("p", [1, 1.0, -0.1, float("nan"), "0.5", True, np.float32(1.5)])
def test_skip_prob_out_of_range_or_not_a_number_is_named(p):
    with pytest.raises(ValueError, match=r"skip_prob must be a number in \[0, 1\)"):
        check_sampling(skip_prob=p)


def test_the_registry_refuses_a_rule_that_would_change_what_a_method_name_means():
    """Issue 38: register_sampling(SamplingRule("skip", True, False)) silently changed what grpo+skip meant, and a
    rule's fields were not type-checked."""
    from grpo_lab.sampling import SamplingRule, register_sampling

    with pytest.raises(ValueError, match="'skip' is a built-in part of method names"):
        register_sampling(SamplingRule("skip", True, False))
    with pytest.raises(TypeError, match="drops must be True or False, got 'yes'"):
        register_sampling(SamplingRule("typed_rule", "yes", False))
    with pytest.raises(TypeError, match="refills must be True or False, got 1"):
        register_sampling(SamplingRule("typed_rule", True, 1))
    with pytest.raises(TypeError, match="doc must be a string"):
        register_sampling(SamplingRule("typed_rule", True, False, doc=3))
