"""Tasks, graders and TRL reward functions (introduced in notebook 05).

- :mod:`grpo_lab.tasks.arithmetic`: synthetic sums in difficulty levels, for the tiny LM;
- :mod:`grpo_lab.tasks.word_problems`: synthetic GSM8K-style word problems (our own templates);
- :mod:`grpo_lab.tasks.gsm8k`: the GSM8K answer grader (``extract_answer``, ``is_correct``) and GSM8K itself.

Each registers itself by name (:mod:`grpo_lab.tasks.base`); ``TASKS`` maps names to tasks.

Reward functions follow TRL's signature ``f(prompts, completions, **columns) -> list[float]``.
"""

from __future__ import annotations

from .arithmetic import LEVELS, arithmetic_problems
from .base import TASKS, Problem, Task, get_task, register_task
from .gsm8k import extract_answer, is_correct, reference_answer
from .word_problems import word_problems


def _text(completion) -> str:
    """A completion as text: TRL passes strings, or message lists for conversational data."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        return str(completion[-1].get("content", ""))
    raise TypeError(f"a completion must be a string or a list of messages, got {type(completion).__name__}")


def correctness_reward(prompts, completions, answer, **kwargs) -> list[float]:
    """TRL reward function: 1.0 when the completion's final answer equals ``answer``, else 0.0.

    ``answer`` is the dataset column of the same name (a GSM8K answer field or a bare number).
    """
    if len(answer) != len(completions):
        raise ValueError(f"got {len(completions)} completions but {len(answer)} answers")
    return [float(is_correct(_text(c), a)) for c, a in zip(completions, answer)]


def make_problems(task: str, n: int | None, seed: int = 0, split: str = "train", smoke: bool = False) -> list[Problem]:
    """``n`` problems of the registered ``task`` (see ``TASKS``)."""
    return get_task(task).problems(split, n, seed, smoke)


def to_dataset(problems):
    """A ``datasets.Dataset`` with columns ``prompt``, ``answer``, ``level`` (what TRL consumes)."""
    from datasets import Dataset

    return Dataset.from_dict({"prompt": [p.prompt for p in problems], "answer": [p.answer for p in problems],
                              "level": [p.level for p in problems]})


__all__ = ["LEVELS", "TASKS", "Problem", "Task", "get_task", "register_task", "arithmetic_problems", "word_problems", "extract_answer", "is_correct",
           "reference_answer", "correctness_reward", "make_problems", "to_dataset"]
