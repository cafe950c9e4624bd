"""Argument checks shared by every module: one definition of "an integer" and "a valid option".

Pure Python (no torch, no numpy import needed), so any layer can use it.
"""

from __future__ import annotations

import math
import operator


def as_int(name: str, value, minimum: int | None = None) -> int:
    """``value`` as a Python int. Any integer type is accepted (``int``, ``numpy.int64``, a 0-d
    integer tensor); ``bool``, floats (even whole ones) and strings are a ``TypeError``, and
    values below ``minimum`` a ``ValueError``; both name ``name``."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, got a bool ({value})")
    try:
        out = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}") from None
    if minimum is not None and out < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {out}")
    return out


def as_number(name: str, value, *, low: float | None = None, high: float | None = None,
              low_open: bool = False) -> float:
    """``value`` as a finite float within ``[low, high]`` (``(low, high]`` with ``low_open=True``).

    NaN, inf, out-of-range values are a ``ValueError`` and non-numbers a ``TypeError``, naming ``name``.
    """
    if isinstance(value, (bool, str, bytes)) or not hasattr(value, "__float__"):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if low is not None and (v <= low if low_open else v < low):
        raise ValueError(f"{name} must be {'>' if low_open else '>='} {low:g}, got {value!r}")
    if high is not None and v > high:
        raise ValueError(f"{name} must be <= {high:g}, got {value!r}")
    return v


def as_flag(name: str, value) -> bool:
    """``value`` as a bool: ``True``/``False`` or a numpy bool; anything else (``"False"``, ``1``) a ``TypeError``
    naming ``name``, because a string like ``"False"`` would otherwise count as true."""
    if isinstance(value, bool) or (type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_")):
        return bool(value)
    raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
