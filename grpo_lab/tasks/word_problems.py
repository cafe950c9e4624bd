"""Synthetic GSM8K-style word problems written by this project (templates with numbers).

They exercise the same grader and reward path as GSM8K (answers end in a "#### N" line)
without shipping any of GSM8K's text. Used offline, in tests, and as the smoke fallback of
the GSM8K notebooks.
"""

from __future__ import annotations

import random

from .base import Problem, Task, register_task

_NAMES = ("Ada", "Bo", "Chen", "Dara", "Eli", "Femi", "Gus", "Hana", "Ines", "Joss")
_ITEMS = ("apples", "stickers", "marbles", "books", "shells", "pencils", "stamps", "coins")


def _one(level: int, rng: random.Random) -> Problem:
    name, item = rng.choice(_NAMES), rng.choice(_ITEMS)
    if level == 1:
        a, b = rng.randint(2, 20), rng.randint(2, 20)
        q = f"{name} has {a} {item} and finds {b} more. How many {item} does {name} have now?"
        work, ans = f"{a} + {b} = {a + b}", a + b
    elif level == 2:
        a, b = rng.randint(3, 12), rng.randint(3, 12)
        q = f"{name} buys {a} boxes with {b} {item} in each box. How many {item} is that?"
        work, ans = f"{a} * {b} = {a * b}", a * b
    elif level == 3:
        b, c = rng.randint(2, 9), rng.randint(2, 9)
        a = rng.randint(b * c + 1, b * c + 60)
        q = (f"{name} has {a} {item}, gives away {b} to each of {c} friends, and keeps the rest. "
             f"How many {item} are left?")
        ans = a - b * c
        work = f"{b} * {c} = {b * c}; {a} - {b * c} = {ans}"
    elif level == 4:
        price, n, paid = rng.randint(2, 15), rng.randint(2, 6), 100
        q = (f"{name} buys {n} {item} at ${price} each and pays with a ${paid} note. "
             f"How much change, in dollars, does {name} get?")
        ans = paid - n * price
        work = f"{n} * {price} = {n * price}; {paid} - {n * price} = {ans}"
    else:
        raise ValueError(f"word-problem level must be 1-4, got {level!r}")
    answer = f"{work}.\n#### {ans:,}"
    return Problem(f"Question: {q}\nAnswer:", answer, level)


def word_problems(n: int, levels=(1, 2, 3, 4), seed: int = 0) -> list[Problem]:
    """``n`` GSM8K-style problems; each ``answer`` is a worked line ending in ``#### N``."""
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    rng = random.Random(seed)
    return [_one(rng.choice(list(levels)), rng) for _ in range(n)]


@register_task
class WordProblems(Task):
    """The project's GSM8K-style word problems, levels 1-4; train and test differ by seed only."""

    name = "word_problems"

    def problems(self, split, n, seed, smoke=False):
        return word_problems(n, seed=seed)
