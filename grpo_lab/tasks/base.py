"""What a task is: problems with a reference answer, a grader, and a registry by name (notebook 05).

A task is registered once with :func:`register_task` and is then available to
``RunConfig(task=...)``, ``grpo-lab compare --task`` and :func:`make_problems`.
Adding a task = one module with a ``@register_task`` class, imported in ``tasks/__init__.py``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    prompt: str
    answer: str  # the reference: a bare number, or a GSM8K answer field ending in "#### N"
    level: int
    task: str = ""  # the registered task that grades it ("": the GSM8K grader on ``answer``)
    meta: str = ""  # what that task's grader needs besides the answer (JSON; reasoning-gym's entry)


class Task:
    """A source of problems. ``chat``: whether hub instruct models get it through their chat template.

    ``problems(split, n, seed, smoke)`` returns ``n`` problems of ``split`` ("train" or "test");
    ``n=None`` means all there are. ``smoke=True`` may substitute offline stand-ins.
    ``tiny_lm_ok``: whether the shipped tiny LM (warm-started on arithmetic) is meant for it.
    ``system_prompt``: what an instruct model is told before each problem (None: GSM8K's "#### N" prompt).
    ``grade``: None for the GSM8K grader on ``problem.answer``, or a method ``grade(completion, problem)``
    (see :func:`grpo_lab.tasks.grade`).
    """

    name = ""
    chat = False
    tiny_lm_ok = False
    system_prompt: str | None = None
    grade = None

    def problems(self, split: str, n: int | None, seed: int, smoke: bool = False) -> list[Problem]:
        raise NotImplementedError

    def canonical(self, problem: Problem) -> str:
        """A form two problems share when they are the same problem in other words ("3 + 1" and "1 + 3"): a study's
        overlap line counts evaluation problems whose form is in the training pool as near-duplicates. The default
        is the prompt itself (only exact text counts)."""
        return problem.prompt


TASKS: dict[str, Task] = {}
FAMILIES: dict = {}  # prefix -> factory(rest of the name) -> Task, for names like "gym:chain_sum"


def register_task(cls):
    """Class decorator: register an instance of ``cls`` under ``cls.name``."""
    if not cls.name or cls.name in TASKS:
        raise ValueError(f"a task needs a new, non-empty name; got {cls.name!r}")
    TASKS[cls.name] = cls()
    return cls


def register_family(prefix: str, factory) -> None:
    """Tasks named ``"<prefix>:<rest>"``, made on first use by ``factory(rest)`` (which raises on a bad name)."""
    FAMILIES[prefix] = factory


def get_task(name: str) -> Task:
    if name in TASKS:
        return TASKS[name]
    prefix, sep, rest = str(name).partition(":")
    if sep and prefix in FAMILIES:
        task = FAMILIES[prefix](rest)
        TASKS[name] = task
        return task
    families = "".join(f", {p}:<name>" for p in FAMILIES)
    raise ValueError(f"unknown task {name!r}; choose one of {', '.join(TASKS)}{families}")

