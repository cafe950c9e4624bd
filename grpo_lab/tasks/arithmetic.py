"""Synthetic arithmetic in difficulty levels (introduced in notebook 05).

Each problem is a prompt like ``"47+38="`` whose completion should be the sum, ``"85"``.
Levels go from one-digit sums, which a tiny model learns in a minute, to three-digit sums
with carries, which it does not: the spread of per-prompt success that makes GRPO starve.
"""

from __future__ import annotations

import random

from .base import Problem, Task, register_task

LEVELS = {
    1: "one-digit + one-digit",
    2: "two-digit + one-digit",
    3: "two-digit + two-digit, no carry",
    4: "two-digit + two-digit, with a carry",
    5: "three-digit + three-digit",
}




def _operands(level: int, rng: random.Random) -> tuple[int, int]:
    if level == 1:
        return rng.randint(0, 9), rng.randint(0, 9)
    if level == 2:
        return rng.randint(10, 99), rng.randint(0, 9)
    if level in (3, 4):
        while True:
            a, b = rng.randint(10, 99), rng.randint(10, 99)
            carry = (a % 10 + b % 10 >= 10) or (a // 10 + b // 10 >= 10)
            if carry == (level == 4):
                return a, b
    if level == 5:
        return rng.randint(100, 999), rng.randint(100, 999)
    raise ValueError(f"arithmetic level must be one of {sorted(LEVELS)}, got {level!r}")


def arithmetic_problems(n: int, levels=tuple(LEVELS), seed: int = 0, weights=None) -> list[Problem]:
    """``n`` problems drawn with ``random.Random(seed)``; level drawn uniformly (or by ``weights``)."""
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    levels = list(levels)
    for lv in levels:
        if lv not in LEVELS:
            raise ValueError(f"arithmetic level must be one of {sorted(LEVELS)}, got {lv!r}")
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        lv = rng.choices(levels, weights=weights)[0]
        a, b = _operands(lv, rng)
        out.append(Problem(f"{a}+{b}=", str(a + b), lv))
    return out


@register_task
class Arithmetic(Task):
    """Sums in five levels (the tiny LM's task); train and test differ by seed only."""

    name = "arithmetic"
    tiny_lm_ok = True

    def problems(self, split, n, seed, smoke=False):
        return arithmetic_problems(n, seed=seed)
