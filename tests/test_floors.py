"""The floors pyproject.toml declares are the versions noxfile.py's floor session tests (issue 50, item 4)."""

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _declared_floors():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    out = {}
    for dep in deps:
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9.]+)", dep.split(";")[0].strip())
        if m and ";" not in dep:
            out[m.group(1).lower()] = m.group(2)
    return out


def _tested_floors():
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["FLOOR"]:
            pins = ast.literal_eval(node.value)
            return {p.split("==")[0].lower(): p.split("==")[1] for p in pins}
    raise AssertionError("noxfile.py has no FLOOR list")


def _same(declared: str, tested: str) -> bool:
    """A floor of 5.0 is tested by 5.0.0; 2.0 by 2.0.2 (the first release of that minor line with a wheel)."""
    d = [int(x) for x in declared.split(".")]
    t = [int(x) for x in tested.split(".")]
    return t[:len(d)] == d


def test_every_declared_floor_is_the_version_the_floor_session_tests():
    declared, tested = _declared_floors(), _tested_floors()
    assert declared, "pyproject.toml declares no floors"
    missing = sorted(set(declared) - set(tested))
    assert not missing, f"floors declared in pyproject.toml but not tested by noxfile.py's FLOOR: {missing}"
    differ = {n: (declared[n], tested[n]) for n in declared if not _same(declared[n], tested[n])}
    assert not differ, f"pyproject.toml's floor and noxfile.py's tested version differ (declared, tested): {differ}"
