"""grpo_lab.tasks: the GSM8K grader's pitfalls, the synthetic tasks, and reward functions through TRL."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grpo_lab.tasks import (LEVELS, arithmetic_problems, correctness_reward, make_problems, to_dataset,
                            word_problems)
from grpo_lab.tasks.gsm8k import extract_answer, is_correct, normalize_number
from conftest import USE_CPU


@pytest.mark.parametrize("text, want", [
    ("She pays 3 + 4 = 7 dollars.\n#### 7", "7"),
    ("#### 1,000", "1000"),
    ("so the total is $1,234,567.\n#### $1,234,567", "1234567"),
    ("The answer is 72.00.", "72"),
    ("the answer is: -3.50", "-3.5"),
    ("Thus \\boxed{42} apples", "42"),
    ("\\boxed{1,500}", "1500"),
    ("first 5, then \\boxed{6}, and \\boxed{8}", "8"),          # the last box
    ("#### 5\n#### 9", "9"),                                   # the last #### line
    ("10 - 3 = 7", "7"),                                        # fallback: the last number
    ("10-3=7", "7"),                                            # an operator is not a sign
    ("It is −4 degrees", "-4"),                                 # Unicode minus
    ("The answer is 5. Then 6 more steps", "5"),                # "answer is" before the fallback
    ("+5", "5"),
    ("-0.0", "0"),
    ("3.", "3"),
    ("50%", "50"),
    ("#### \\boxed{12}", "12"),
    ("no number here", None),
    ("####", None),
    ("", None),
    ("#### seven", "7"),  # number words are read inside a marker (issue 18)
    ("#### seven apples or eight", "7"),
    ("#### apples", None),
])
def test_extract_answer(text, want):
    assert extract_answer(text) == want


def test_extract_answer_non_strings_are_none():
    assert extract_answer(None) is None
    assert extract_answer(12) is None


@settings(max_examples=400, deadline=None)
@given(st.text())
def test_extract_answer_never_raises(text):
    out = extract_answer(text)
    assert out is None or normalize_number(out) == out  # already normalised


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=-10**12, max_value=10**12))
def test_integers_round_trip_with_commas_and_dollars(n):
    assert extract_answer(f"#### ${n:,}") == str(n)
    assert extract_answer(f"The answer is {n}.") == str(n)


@pytest.mark.parametrize("completion, reference, want", [
    ("#### 72", "Natalia sold 48/2 = 24 clips.\n#### 72", True),
    ("72.00", "72", True),
    ("The answer is 1,000", 1000, True),
    ("The answer is 71", "#### 72", False),
    ("I don't know", "#### 72", False),
    ("#### 2.5", 2.5, True),
])
def test_is_correct(completion, reference, want):
    assert is_correct(completion, reference) is want


def test_bad_references_are_errors():
    with pytest.raises(ValueError, match="contains no number"):
        is_correct("5", "#### none")
    with pytest.raises(ValueError, match="NaN"):
        is_correct("5", float("nan"))
    with pytest.raises(TypeError, match="reference must be"):
        is_correct("5", None)


def test_arithmetic_levels_and_answers():
    ps = arithmetic_problems(500, seed=3)
    assert {p.level for p in ps} == set(LEVELS)
    for p in ps:
        a, b = p.prompt.rstrip("=").split("+")
        assert int(a) + int(b) == int(p.answer)
        if p.level == 3:
            assert int(a) % 10 + int(b) % 10 < 10 and int(a) // 10 + int(b) // 10 < 10
        if p.level == 4:
            assert int(a) % 10 + int(b) % 10 >= 10 or int(a) // 10 + int(b) // 10 >= 10
    assert arithmetic_problems(20, seed=3) == ps[:20]  # seeded and reproducible
    assert arithmetic_problems(20, seed=4) != ps[:20]
    with pytest.raises(ValueError, match="level must be one of"):
        arithmetic_problems(3, levels=(9,))
    with pytest.raises(ValueError, match="unknown task 'gsm9k'"):
        make_problems("gsm9k", 3)


def test_word_problems_grade_with_the_gsm8k_grader():
    ps = word_problems(200, seed=1)
    assert {p.level for p in ps} == {1, 2, 3, 4}
    for p in ps:
        assert "####" in p.answer and is_correct(p.answer, p.answer)
        assert int(extract_answer(p.answer)) >= 0


def test_correctness_reward_signature_and_messages():
    r = correctness_reward(["1+1="] * 3, ["2", "3", [{"role": "assistant", "content": "#### 2"}]],
                           answer=["2", "2", "#### 2"], level=[1, 1, 1])
    assert r == [1.0, 0.0, 1.0]
    with pytest.raises(ValueError, match="3 completions but 2 answers"):
        correctness_reward(["p"] * 3, ["1", "2", "3"], answer=["1", "2"])


def test_reward_function_through_trl(tmp_path):
    from trl import GRPOConfig

    from grpo_lab.policy import char_tokenizer, tiny_causal_lm
    from grpo_lab.trl import trainer_class

    tok = char_tokenizer()
    ds = to_dataset(arithmetic_problems(8, levels=(1,), seed=0))
    args = GRPOConfig(output_dir=str(tmp_path), per_device_train_batch_size=8, num_generations=4,
                      max_completion_length=3, max_steps=1, logging_steps=1, report_to="none", use_cpu=USE_CPU,
                      save_strategy="no", seed=0)
    seen = {}

    def spy(prompts, completions, answer, **kw):
        seen["args"] = (list(prompts), list(completions), list(answer), list(kw["level"]))
        return correctness_reward(prompts, completions, answer, **kw)

    trainer = trainer_class()(model=tiny_causal_lm(tok), args=args, reward_funcs=spy, train_dataset=ds,
                              processing_class=tok, estimator="grpo")
    trainer.train()
    prompts, completions, answers, levels = seen["args"]
    assert len(completions) == 8 and set(levels) == {1}
    want = [float(is_correct(c, a)) for c, a in zip(completions, answers)]
    assert trainer.last_rewards.tolist() == want


def test_shortcut_signatures_of_a_completion():
    """Issue 39: repeating a number of the prompt as the answer, answering without working."""
    from grpo_lab.tasks import Problem, signatures

    p = Problem("State the final answer to the following arithmetic problem: 4 - 7 =", "-3", 0)
    assert signatures("<answer>4</answer>", p) == dict(answered=True, repeats_prompt=True, no_working=True)
    assert signatures("4 - 7 = -3, so <answer>-3</answer>", p) == dict(answered=True, repeats_prompt=False,
                                                                        no_working=False)
    assert signatures("The answer is -3.", p)["no_working"] is True
    assert signatures("I cannot tell.", p) == dict(answered=False, repeats_prompt=False, no_working=False)
    q = Problem("What is 12 + 3 =", "15", 0)
    assert signatures("12 + 3 = 15 <answer>15</answer>", q)["no_working"] is False  # "15" is found whole, after working
    assert signatures("it is 1, then <answer>1</answer>", q)["repeats_prompt"] is False  # 1 is not 12
