"""Issue 82 (study 7: "shortcut" measured, not assumed): what a training batch's successful completions look like,
the sole success of an otherwise all-fail group (k = 1) apart from the successes of groups with two or more; the
trainer's reading of each success against its own prompt; the study measures that pool them over a run."""

import math
from types import SimpleNamespace

import pytest
import torch

from grpo_lab.policy import char_tokenizer
from grpo_lab.starvation import SUCCESS_SIGNS, add_success_signatures, success_signatures
from grpo_lab.study.measures import METRICS

G = 4


def rec(length, answered=True, repeats=False, no_working=False):
    return {"length": length, "answered": answered, "repeats_prompt": repeats, "no_working": no_working}


def test_each_success_is_counted_by_its_groups_successes():
    rewards = [0, 0, 1, 0,   1, 1, 0, 0,   0, 0, 0, 0,   1, 1, 1, 1]  # k = 1, 2, 0, 4
    signs = [None] * 16
    signs[2] = rec(9, repeats=True, no_working=True)  # the lucky one
    for i, n in zip((4, 5, 12, 13, 14, 15), (20, 22, 18, 24, 30, 26)):
        signs[i] = rec(n)
    got = success_signatures(rewards, G, signs)
    assert got["sole"] == {"n": 1, "length": 9.0, "answered": 1.0, "repeats_prompt": 1.0, "no_working": 1.0}
    assert got["shared"] == {"n": 6, "length": 140.0, "answered": 6.0, "repeats_prompt": 0.0, "no_working": 0.0}
    # reversed: a second success in the first group makes its successes shared, and nothing is sole
    rewards[3], signs[3] = 1, rec(11)
    got = success_signatures(rewards, G, signs)
    assert got["sole"]["n"] == 0 and got["shared"]["n"] == 8 and got["shared"]["length"] == 160.0


def test_a_record_not_read_is_skipped_and_failures_are_never_read():
    rewards = [1, 0, 0, 0, 0, 1, 0, 0]
    signs = [None, rec(5), None, None, None, rec(7), None, None]  # the first success on another process
    got = success_signatures(rewards, G, signs)
    assert got["sole"]["n"] == 1 and got["sole"]["length"] == 7.0  # the failure's record is not counted
    nan = [math.nan, 1, 0, 0, 0, 0, 0, 0]  # an unscored completion counts as a failure, as batch_metrics counts it
    assert success_signatures(nan, G, [None, rec(3)] + [None] * 6)["sole"]["n"] == 1


def test_bad_input_is_named():
    assert success_signatures([0.5, 1, 0, 0], G, [None] * 4) is None  # not 0/1: nothing to split by
    with pytest.raises(ValueError, match="got 3 completion records for 4 rewards"):
        success_signatures([1, 0, 0, 0], G, [None] * 3)
    with pytest.raises(ValueError, match="completion 0's record lacks no_working"):
        success_signatures([1, 0, 0, 0], G, [{"length": 3, "answered": 1, "repeats_prompt": 0}, None, None, None])
    with pytest.raises(ValueError, match="group"):
        success_signatures([1, 0, 0], G, [None] * 3)


def test_windows_add_exactly():
    a = success_signatures([1, 0, 0, 0], G, [rec(4), None, None, None])
    b = success_signatures([1, 1, 0, 0], G, [rec(6), rec(8), None, None])
    s = add_success_signatures(a, b)
    assert s["sole"]["n"] == 1 and s["shared"]["n"] == 2 and s["shared"]["length"] == 14.0
    assert add_success_signatures(None, b) == b and add_success_signatures(a, None) == a
    assert add_success_signatures(None, None) is None


def test_the_trainer_reads_each_success_against_its_own_prompt():
    """The trainer's step between TRL's output and the sums: decoding each success under its mask, its prompt from
    the chat messages, its place in the whole batch (``start``: this process's first completion)."""
    from grpo_lab.trl import trainer_class

    tok = char_tokenizer()
    texts = ["12+34=46", "46", "x", "y", "5", "12", "z", "w"]  # group 1: 2 successes; group 2: one, repeating 12
    ids = [tok(t, add_special_tokens=False)["input_ids"] for t in texts]
    width = max(map(len, ids)) + 2
    completion_ids = torch.tensor([x + [tok.pad_token_id] * (width - len(x)) for x in ids])
    mask = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x in ids])
    prompt = [{"role": "system", "content": "Add 99."}, {"role": "user", "content": "What is 12 + 34?"}]
    inputs = [{"prompt": prompt, "answer": "46"} for _ in texts[:4]] + \
             [{"prompt": [{"role": "user", "content": "What is 12 - 7?"}], "answer": "5"} for _ in texts[4:]]
    rewards = torch.tensor([1, 1, 0, 0, 0, 1, 0, 0], dtype=torch.float32)
    me = SimpleNamespace(last_rewards=rewards, _tokenizer=tok)
    got = trainer_class()._success_signs(me, inputs, {"completion_ids": completion_ids, "completion_mask": mask}, 0, G)
    assert got["shared"] == {"n": 2, "length": 10.0, "answered": 2.0, "repeats_prompt": 0.0, "no_working": 1.0}
    assert got["sole"] == {"n": 1, "length": 2.0, "answered": 1.0, "repeats_prompt": 1.0, "no_working": 1.0}
    # the second process's half of the batch: its completions are the batch's 4..7, counted by the whole batch's k
    half = trainer_class()._success_signs(me, inputs[4:], {"completion_ids": completion_ids[4:],
                                                           "completion_mask": mask[4:]}, 4, G)
    assert half["sole"] == got["sole"] and half["shared"]["n"] == 0


def _result(rows):
    return {"history": [{"step": i + 1, "starvation/successes": r} for i, r in enumerate(rows)],
            "result_source": "runs/x/results/grpo-seed0.json"}


def test_the_study_measures_pool_over_the_run():
    w1 = success_signatures([1, 0, 0, 0, 1, 1, 0, 0], G, [rec(10, repeats=True), None, None, None, rec(20), rec(30),
                                                        None, None])
    w2 = success_signatures([0, 1, 0, 0, 0, 0, 0, 0], G, [None, rec(30, no_working=True)] + [None] * 6)
    r = _result([w1, w2, None])  # a window without a 0/1 batch logs None: skipped
    assert METRICS["sole-share"].read(r, 1) == pytest.approx(2 / 4)
    assert METRICS["sole-length"].read(r, 1) == pytest.approx(20.0)  # (10 + 30) / 2, pooled, not a mean of means
    assert METRICS["sole-repeats-prompt"].read(r, 1) == pytest.approx(0.5)
    assert METRICS["sole-no-working"].read(r, 1) == pytest.approx(0.5)
    assert METRICS["shared-length"].read(r, 1) == pytest.approx(25.0)
    assert METRICS["shared-no-working"].read(r, 1) == 0.0
    assert {m for m in METRICS if m.startswith(("sole-", "shared-"))} == {
        "sole-share", *(f"{k}-{s}" for k in ("sole", "shared") for s in ("length", "repeats-prompt", "no-working"))}
    assert all(METRICS[m].better == "neutral" for m in METRICS if m.startswith(("sole-", "shared-")))
    assert set(SUCCESS_SIGNS) == {"length", "answered", "repeats_prompt", "no_working"}
    from grpo_lab.study import parse_measure  # a plan's steps table names them as they are registered

    assert parse_measure("sole-no-working", {}, "plan.toml").metric is METRICS["sole-no-working"]


def test_a_run_without_such_successes_or_with_a_damaged_entry_is_named():
    only_shared = _result([success_signatures([1, 1, 0, 0], G, [rec(4), rec(5), None, None])])
    with pytest.raises(KeyError, match="no sole success in its training log"):
        METRICS["sole-length"].read(only_shared, 1)
    with pytest.raises(KeyError, match="records no successes' signs"):
        METRICS["sole-share"].read({"history": [{"step": 1, "reward": 0.5}]}, 1)
    good = success_signatures([1, 0, 0, 0], G, [rec(4), None, None, None])
    for damage in ({"n": -1}, {"n": 1.5}, {"no_working": 2.0}, {"length": -3.0}, {"answered": math.nan}):
        bad = {**good, "sole": {**good["sole"], **damage}}
        with pytest.raises(ValueError, match=r"starvation/successes \(sole\) at step 2 in runs/x/results"):
            METRICS["sole-length"].read(_result([good, bad]), 1)
