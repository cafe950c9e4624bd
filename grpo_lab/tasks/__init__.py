"""Tasks, graders and TRL reward functions (introduced in notebook 05).

- :mod:`grpo_lab.tasks.arithmetic`: synthetic sums in difficulty levels, for the tiny LM;
- :mod:`grpo_lab.tasks.word_problems`: synthetic GSM8K-style word problems (our own templates);
- :mod:`grpo_lab.tasks.gsm8k`: the GSM8K answer grader (``extract_answer``, ``is_correct``) and GSM8K itself
  (from the hub, or from a local JSONL file);
- :mod:`grpo_lab.tasks.gym`: real generated problems from reasoning-gym: ``gsm_symbolic`` and ``gym:<dataset>``.

Each registers itself by name (:mod:`grpo_lab.tasks.base`); ``TASKS`` maps names to tasks.

Reward functions follow TRL's signature ``f(prompts, completions, **columns) -> list[float]``.
"""

from __future__ import annotations

import re

from .arithmetic import LEVELS, arithmetic_problems
from .base import TASKS, Problem, Task, get_task, register_task
from .gsm8k import SYSTEM_PROMPT, extract_answer, is_correct, reference_answer
from .gym import GymTask
from .word_problems import word_problems


def grade(completion, problem: Problem) -> bool:
    """Whether ``completion`` answers ``problem``: its task's grader, the GSM8K grader by default."""
    task = get_task(problem.task) if problem.task else None
    if task is not None and task.grade is not None:
        return bool(task.grade(_text(completion), problem))
    return is_correct(_text(completion), problem.answer)


_GRADER_MODULES = ("__init__.py", "gsm8k.py", "gym.py", "arithmetic.py", "word_problems.py", "base.py")
_GRADER: dict = {}


def grader_version() -> str:
    """A fingerprint of what grades a completion here: the source of grpo-lab's grading modules (this package's
    graders and answer extraction) and reasoning-gym's version (its verifiers grade the ``gym:`` tasks), 12 hex
    digits. Recorded in every result, start evaluation and profile chunk: two results graded by different code say
    so (a report notes it, a resume names it), since the same completion can score differently (issue 38)."""
    if "v" not in _GRADER:
        import hashlib
        import importlib.metadata as md
        from pathlib import Path

        h = hashlib.sha256()
        here = Path(__file__).parent
        for name in _GRADER_MODULES:
            h.update(name.encode() + b"\0" + (here / name).read_bytes())
        try:
            h.update(b"reasoning-gym " + md.version("reasoning-gym").encode())
        except md.PackageNotFoundError:
            h.update(b"no reasoning-gym")
        _GRADER["v"] = h.hexdigest()[:12]
    return _GRADER["v"]


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_WORKING = re.compile(r"\d\s*[-+*/×x÷]\s*-?\d|=")


def signatures(completion, problem: Problem) -> dict:
    """Signs of a shortcut in one completion (issue 39, lesson 14), pure text rules:

    - ``answered``: the grader finds an answer in it (:func:`grpo_lab.tasks.gsm8k.extract_answer`);
    - ``repeats_prompt``: that answer is a number written in the prompt (answering "4 - 7 =" with 4 or 7);
    - ``no_working``: it answers without any working before the answer: no arithmetic between two numbers
      (``3 + 4``, ``12 x 2``) and no ``=`` sign in the text before the answer's first occurrence.
    """
    text = _text(completion)
    ans = extract_answer(text)
    if ans is None:
        return dict(answered=False, repeats_prompt=False, no_working=False)
    prompt_numbers = {float(x) for x in _NUMBER.findall(problem.prompt)}
    try:
        value = float(ans)
    except ValueError:
        value = None
    first = re.search(rf"(?<![\d.]){re.escape(ans)}(?![\d.])", text)  # the answer as a whole number, first seen
    before = text[:first.start()] if first else text
    return dict(answered=True, repeats_prompt=value is not None and value in prompt_numbers,
                no_working=_WORKING.search(before) is None)


def system_prompt(task: str) -> str:
    """What an instruct model is told before each problem of ``task``."""
    return get_task(task).system_prompt or SYSTEM_PROMPT


def _text(completion) -> str:
    """A completion as text: TRL passes strings, or message lists for conversational data."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        return str(completion[-1].get("content", ""))
    raise TypeError(f"a completion must be a string or a list of messages, got {type(completion).__name__}")


def correctness_reward(prompts, completions, answer, task=None, meta=None, **kwargs) -> list[float]:
    """TRL reward function: 1.0 when the completion answers its problem, else 0.0.

    ``answer`` is the dataset column of the same name (a GSM8K answer field or a bare number), graded
    by the GSM8K grader; where the dataset also has ``task`` and ``meta`` columns (:func:`to_dataset`
    writes them), each completion is graded by its task's grader (reasoning-gym's verifier for ``gym:``).
    """
    if len(answer) != len(completions):
        raise ValueError(f"got {len(completions)} completions but {len(answer)} answers")
    if task is None:
        return [float(is_correct(_text(c), a)) for c, a in zip(completions, answer)]
    meta = meta if meta is not None else [""] * len(answer)
    return [float(grade(c, Problem("", a, 0, t, m))) for c, a, t, m in zip(completions, answer, task, meta)]


def make_problems(task: str, n: int | None, seed: int = 0, split: str = "train", smoke: bool = False,
                  data=None) -> list[Problem]:
    """``n`` problems of the registered ``task`` (see ``TASKS``); ``data``: a local file, for tasks that read one."""
    t = get_task(task)
    if data is None:
        return t.problems(split, n, seed, smoke)
    if not getattr(t, "takes_data", False):
        raise ValueError(f"task {task!r} does not read a data file; --data is for the gsm8k task")
    return t.problems(split, n, seed, smoke, data=data)


def to_dataset(problems, system: str | None = None):
    """A ``datasets.Dataset`` with columns ``prompt``, ``answer``, ``level``, ``task``, ``meta`` (what TRL consumes).

    With ``system`` (a system prompt), ``prompt`` is conversational: ``[system, user]`` messages, for
    instruct models that TRL prompts through their chat template.
    """
    from datasets import Dataset

    prompts = [p.prompt if system is None else
               [{"role": "system", "content": system}, {"role": "user", "content": p.prompt}] for p in problems]
    return Dataset.from_dict({"prompt": prompts, "answer": [p.answer for p in problems],
                              "level": [p.level for p in problems], "task": [p.task for p in problems],
                              "meta": [p.meta for p in problems]})


__all__ = ["LEVELS", "TASKS", "Problem", "Task", "GymTask", "get_task", "register_task", "arithmetic_problems",
           "word_problems", "extract_answer", "is_correct", "reference_answer", "grade", "grader_version", "signatures", "system_prompt",
           "correctness_reward", "make_problems", "to_dataset"]
