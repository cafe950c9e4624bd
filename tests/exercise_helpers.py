"""Shared by the checks' tests: what a check does with an exercise whose stub is still in place (issue 81)."""

import contextlib
import io


def assert_not_done(check, stub):
    """``check(stub)`` returns None and prints exactly one line, "exercise ... not done yet: fill in `<the stub's
    name>`", in place of the stub's NotImplementedError traceback."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        got = check(stub)
    lines = out.getvalue().splitlines()
    assert got is None, f"{check.__name__} returned {got!r} for an unfinished exercise"
    assert len(lines) == 1 and f"not done yet: fill in `{stub.__name__}`" in lines[0], (
        f"{check.__name__} on an unfinished exercise printed {lines!r}, not one 'not done yet' line")
