"""The grader fingerprint as a pure function of source bytes, so that a past commit's fingerprint can be recomputed
from its files (``git show``) and a plan's ``[[same_graders]]`` checked (issue 38; docs/guide/studies.md).

Not one of the fingerprinted modules (``grpo_lab.tasks._GRADER_MODULES``): editing this file moves no study's grader.
:func:`grpo_lab.tasks.grader_version` still carries its own copy of the recipe, because changing
``grpo_lab/tasks/__init__.py`` would itself give every later run a new fingerprint while studies 4 and 5 are running
(tests/test_grader.py's canary). ``tests/test_grader.py`` checks the two agree on this installation; fold
``grader_version`` onto this function the next time the grading modules change for a reason of their own.
"""
from __future__ import annotations

from pathlib import Path


def grader_fingerprint(sources: dict, gym_version: str | None) -> str:
    """sha256 over ``name + b"\\0" + bytes`` for each grading module in ``_GRADER_MODULES``' order, then
    ``b"reasoning-gym " + version`` (``b"no reasoning-gym"`` when ``gym_version`` is None); the first 12 hex digits.

    ``sources`` maps each module's file name to its bytes; a missing module is an error, not an empty file.
    """
    import hashlib

    from . import _GRADER_MODULES

    missing = [n for n in _GRADER_MODULES if n not in sources]
    if missing:
        raise ValueError(f"grader_fingerprint: no source given for grading module(s) {missing}")
    h = hashlib.sha256()
    for name in _GRADER_MODULES:
        h.update(name.encode() + b"\0" + sources[name])
    h.update(b"reasoning-gym " + gym_version.encode() if gym_version is not None else b"no reasoning-gym")
    return h.hexdigest()[:12]


def grading_sources(root: Path | None = None) -> dict:
    """The grading modules' bytes from a checkout's ``grpo_lab/tasks`` (this installation's by default)."""
    from . import _GRADER_MODULES

    here = Path(__file__).parent if root is None else Path(root) / "grpo_lab" / "tasks"
    return {n: (here / n).read_bytes() for n in _GRADER_MODULES}
