"""Issue 21: reasoning-gym tasks (gsm_symbolic, gym:<dataset>) and GSM8K from a local JSONL file."""

import json

import pytest

from grpo_lab.config import RunConfig
from grpo_lab.tasks import correctness_reward, get_task, grade, make_problems, to_dataset
from grpo_lab.tasks.gym import gym_answer, parse_spec

SUMS = "gym:chain_sum:min_terms=2,max_terms=2,min_digits=1,max_digits=1"


def test_our_grader_and_reasoning_gyms_verifier_agree_on_500_gsm_symbolic_references():
    task = get_task("gsm_symbolic")
    problems = make_problems("gsm_symbolic", 500, seed=11)
    assert len({p.prompt for p in problems}) > 450  # generated, not repeated
    assert task.verifier_agrees(problems) == []
    assert all(grade(f"#### {p.answer}", p) for p in problems)
    assert not any(grade(f"#### {int(p.answer) + 1}", p) for p in problems[:50])


def test_seeds_give_the_same_problems_and_splits_differ():
    a, b = make_problems("gsm_symbolic", 20, seed=4), make_problems("gsm_symbolic", 20, seed=4)
    assert a == b
    test = make_problems("gsm_symbolic", 20, seed=4, split="test")
    assert {p.prompt for p in a}.isdisjoint({p.prompt for p in test})


def test_a_gym_task_is_graded_by_its_own_verifier():
    problems = make_problems(SUMS, 30, seed=2)
    assert all(p.task == SUMS for p in problems)
    p = problems[0]
    assert grade(f"<answer>{p.answer}</answer>", p)
    assert grade(f"thinking... the result is {p.answer}", p)  # no tags: the final number is the answer
    assert not grade(f"<answer>{int(p.answer) + 1}</answer> {p.answer}", p)  # the tag wins over the text
    assert not grade("", p)
    rewards = correctness_reward(None, [f"<answer>{q.answer}</answer>" for q in problems[:4]] + ["no"],
                                 [q.answer for q in problems[:5]], task=[q.task for q in problems[:5]],
                                 meta=[q.meta for q in problems[:5]])
    assert rewards == [1.0, 1.0, 1.0, 1.0, 0.0]
    ds = to_dataset(problems[:3], system="Be brief.")
    assert ds[0]["prompt"][0] == {"role": "system", "content": "Be brief."} and ds[0]["task"] == SUMS


def test_gym_answer_and_option_parsing():
    assert gym_answer("a <answer> 7 </answer> b <answer>8</answer>") == "8"
    assert gym_answer("it is 12.") == "12" and gym_answer("  yes ") == "yes"
    assert parse_spec("chain_sum:min_terms=2,x=true,y=abc") == ("chain_sum", {"min_terms": 2, "x": True, "y": "abc"})


@pytest.mark.parametrize("name, match", [
    ("gym:no_such_dataset", "unknown reasoning-gym dataset"),
    ("gym:chain_sum:bogus=1", "refused the options"),
    ("gym:chain_sum:min_terms", "not key=value"),
    ("gym:", "needs a dataset name"),
    ("nope", "unknown task"),
])
def test_bad_task_names_are_clear_errors(name, match):
    with pytest.raises(ValueError, match=match):
        RunConfig(task=name, policy="smollm2").validate()


def test_a_verifier_that_rejects_every_reference_is_refused(monkeypatch):
    from grpo_lab.tasks.gym import GymTask

    task = GymTask("chain_sum", {"min_terms": 2, "max_terms": 2})
    monkeypatch.setattr(task, "grade", lambda completion, problem: False)
    with pytest.raises(ValueError, match="rejects 5 of 5 reference answers"):
        task.problems("train", 5, 0)


def test_chat_tasks_need_a_language_model_with_a_chat_template():
    with pytest.raises(ValueError, match="smollm2"):
        RunConfig(task="gsm_symbolic").validate()  # the tiny LM
    RunConfig(task="gsm_symbolic", policy="smollm2").validate()


def _gsm8k_line(q, n):
    return json.dumps({"question": q, "answer": f"Some steps.\n#### {n}"})


def test_gsm8k_from_a_local_jsonl_file(tmp_path):
    f = tmp_path / "gsm8k.jsonl"
    f.write_text("\n".join(_gsm8k_line(f"q{i}?", i) for i in range(10)) + "\n")
    train, test = (make_problems("gsm8k", None, split=s, data=str(f)) for s in ("train", "test"))
    assert len(train) == 8 and len(test) == 2 and {p.prompt for p in test} == {"q4?", "q9?"}
    assert grade("#### 9", test[1])
    d = tmp_path / "dir"
    d.mkdir()
    (d / "train.jsonl").write_text(_gsm8k_line("a?", 1) + "\n")
    (d / "test.jsonl").write_text("\ufeff" + _gsm8k_line("b?", 2) + "\n")  # a BOM is not part of the line
    assert [p.prompt for p in make_problems("gsm8k", None, split="test", data=str(d))] == ["b?"]
    assert [p.prompt for p in make_problems("gsm8k", None, data=str(d / "{split}.jsonl"))] == ["a?"]
    RunConfig(task="gsm8k", policy="smollm2", data=str(f)).validate()
    with pytest.raises(ValueError, match="for --task gsm8k"):
        RunConfig(task="gsm_symbolic", policy="smollm2", data=str(f)).validate()


@pytest.mark.parametrize("line, match", [
    ("not json", "line 2: not JSON"),
    (json.dumps({"question": "q"}), "line 2: needs string fields"),
    (json.dumps({"question": "q", "answer": "no final line"}), r"line 2: the answer does not end in '####"),
])
def test_a_bad_gsm8k_line_is_named(tmp_path, line, match):
    f = tmp_path / "bad.jsonl"
    f.write_text(_gsm8k_line("ok?", 1) + "\n" + line + "\n")
    with pytest.raises(ValueError, match=match) as e:
        make_problems("gsm8k", None, data=str(f))
    assert str(f) in str(e.value)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        make_problems("gsm8k", None, data=str(tmp_path / "missing.jsonl"))


def test_a_missing_dependency_of_reasoning_gym_is_named_not_reasoning_gym(tmp_path, monkeypatch):
    """On the GPU draw of 2026-11-27 reasoning-gym was installed but two of its dependencies were not, and the error
    said to install reasoning-gym. The message names the module that failed; a package truly absent keeps its own."""
    import sys

    from grpo_lab.tasks.gym import _import_gym

    pkg = tmp_path / "reasoning_gym"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("import no_such_dependency_of_the_gym\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "reasoning_gym", raising=False)
    with pytest.raises(RuntimeError, match="installed but does not import.*no_such_dependency_of_the_gym"):
        _import_gym()
    monkeypatch.setitem(sys.modules, "reasoning_gym", None)  # what an absent package raises: its own name
    with pytest.raises(RuntimeError, match="need the reasoning-gym package"):
        _import_gym()
