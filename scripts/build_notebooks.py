"""Build notebooks/, exercises/ and solutions/ from the single sources in course/.

    python scripts/build_notebooks.py            # write the notebooks and the README table
    python scripts/build_notebooks.py --check    # exit 1 and list what differs (tests/test_course.py)
    python scripts/build_notebooks.py --execute  # also execute the lessons in notebooks/ (smoke mode, CPU)

The lessons in notebooks/ are committed *with* their outputs, so that a reader on GitHub sees
the figures and numbers: ``--execute`` runs each lesson top to bottom and records, in the
notebook's metadata (``grpo_lab``), when, how long, and a hash of what produced the outputs
(the lesson's source and every file of the grpo_lab package). A plain rebuild keeps the
outputs of a lesson whose cells did not change; ``--check`` ignores outputs, and
tests/test_course.py fails when a lesson's recorded hash is not the current one (re-execute).
exercises/ and solutions/ are committed without outputs.

Source format (``course/NN_name.py``): cells start with a marker line.

- ``# %% [markdown]``  markdown, every line prefixed with ``# `` (or a bare ``#``);
- ``# %%``             code;
- ``# %% [exercise-md]`` markdown shown in exercises/ and solutions/ only;
- ``# %% [exercise]``  code shown in exercises/ and solutions/ only. The lines between
  ``### BEGIN SOLUTION`` and ``### END SOLUTION`` are the solution; in exercises/ they
  become ``raise NotImplementedError(...)`` at the same indentation;
- ``# %% [check]``     code (a grpo_lab.checks call) in exercises/ and solutions/ only;
- ``# %% [answer]``    markdown: the model answer to an open question (asked in an ``exercise-md``
  cell) in solutions/; exercises/ get an empty "Your answer" cell in its place.

Every source has at least one exercise and one open question with its model answer.

notebooks/ holds the lesson alone; exercises/ the lesson with stubs; solutions/ the lesson
with the stubs filled in. Every notebook starts with a Colab badge and a Colab-only install
cell, both derived from grpo_lab/project.py (left out while its repository address is unset).
"""

from __future__ import annotations

import argparse
import ast
import copy
import datetime
import hashlib
import re
import sys
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from grpo_lab import project  # noqa: E402

COURSE = ROOT / "course"
TARGETS = ("notebooks", "exercises", "solutions")
MARKER = re.compile(r"^# %%(?: \[(markdown|exercise-md|exercise|check|answer)\])?\s*$")
# Notebooks that want a GPU on Colab: the badge opens them with a GPU runtime requested (notebook
# metadata), and their install cell adds the pinned `gpu` extra (grpo_lab/requirements-gpu.txt).
GPU_NOTEBOOKS = {"06_gsm8k_unsloth"}
README_BEGIN, README_END = "<!-- notebook-table:begin -->", "<!-- notebook-table:end -->"
SITE_INDEX = ROOT / "docs" / "site" / "index.md"  # the landing page's run-time table, from the same metadata
SITE_BEGIN, SITE_END = "<!-- run-times:begin -->", "<!-- run-times:end -->"
SITE_LESSONS = "<!-- lessons:begin -->", "<!-- lessons:end -->"  # the landing page's lesson table, with objectives
SITE_TOC = "<!-- toctree:begin -->", "<!-- toctree:end -->"  # the site's lesson navigation: every lesson, none stale
OBJECTIVES = COURSE / "objectives.json"  # every lesson's learning objectives and reading time: the one source


def objectives(stem: str) -> dict:
    """Lesson ``stem``'s entry of course/objectives.json: {"time": "45 min", "objectives": [...]}, checked."""
    import json

    table = {k: v for k, v in json.loads(OBJECTIVES.read_text()).items() if not k.startswith("_")}
    entry = table.get(stem[:2])
    if not isinstance(entry, dict) or set(entry) != {"time", "objectives"} or not entry["objectives"] \
            or not all(isinstance(o, str) and o.strip() for o in entry["objectives"]):
        raise ValueError(f"course/objectives.json needs an entry \"{stem[:2]}\" with \"time\" and a non-empty list of "
                         f"\"objectives\" for {stem}")
    return entry


def objectives_cells(stem: str) -> tuple[str, str]:
    """The markdown that opens a lesson (what it teaches) and the one that closes it (a checklist of the same)."""
    entry = objectives(stem)
    items = "\n".join(f"- {o}" for o in entry["objectives"])
    opening = f"**In this lesson you will learn to** (about {entry['time']} of reading and exercises):\n\n{items}"
    closing = ("## What you should now be able to do\n\n" + "\n".join(f"- [ ] {o}" for o in entry["objectives"])
               + "\n\nIf one of these is not yet true, the section that teaches it is above; the exercises of "
               "exercises/ check most of them.")
    return opening, closing


def parse(source: str) -> list[tuple[str, str]]:
    cells, kind, lines = [], None, []
    for line in source.splitlines():
        m = MARKER.match(line)
        if m:
            if kind is not None:
                cells.append((kind, "\n".join(lines).strip("\n")))
            kind, lines = m.group(1) or "code", []
        elif kind is None:
            if line.strip():
                raise ValueError(f"text before the first cell marker: {line!r}")
        else:
            lines.append(line)
    if kind is not None:
        cells.append((kind, "\n".join(lines).strip("\n")))
    return cells


def markdown(text: str) -> str:
    out = []
    for line in text.splitlines():
        if line == "#":
            out.append("")
        elif line.startswith("# "):
            out.append(line[2:])
        else:
            raise ValueError(f"markdown line without '# ' prefix: {line!r}")
    return "\n".join(out)


def stub(code: str, name: str) -> str:
    out, inside = [], False
    for line in code.splitlines():
        s = line.strip()
        if s == "### BEGIN SOLUTION":
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f'{indent}raise NotImplementedError("exercise {name}: replace this line with your code")')
            inside = True
        elif s == "### END SOLUTION":
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError(f"exercise {name}: BEGIN SOLUTION without END SOLUTION")
    return "\n".join(out)


def solution(code: str) -> str:
    return "\n".join(line for line in code.splitlines() if line.strip() not in ("### BEGIN SOLUTION",
                                                                                 "### END SOLUTION"))


def gpu_install_cell() -> str:
    """The first code cell of a GPU lesson (06): on Colab, install grpo-lab with its pinned GPU set from the URL of
    the user's copy of the repository (``project.repo_url()`` once the public address is set) or from a wheel they
    upload; say what pip will do with Colab's own torch, and that the runtime must restart. Self-contained: on
    Colab grpo_lab is not importable before it runs. Elsewhere it does nothing."""
    url = project.repo_url()
    below = ".".join(map(str, project.GPU_TORCH_BELOW))
    return (
        "# On Colab: install grpo-lab and its pinned GPU set (Unsloth, TRL, transformers, ...). Elsewhere this cell\n"
        "# does nothing (grpo-lab is installed already). grpo-lab comes from one of two places:\n"
        "#   1. your copy of its repository: its git address here, or\n"
        "#   2. a wheel uploaded to /content (Files panel): where you have the repository, `pip install build`\n"
        "#      then `python -m build --wheel` writes dist/grpo_lab-<version>-py3-none-any.whl.\n"
        f"GRPO_LAB_URL = {url!r}  # e.g. \"https://github.com/you/grpo-lab@main\"\n"
        "import glob\n"
        "import subprocess\n"
        "import sys\n"
        "\n"
        "if \"google.colab\" in sys.modules:\n"
        "    from importlib import metadata\n"
        "\n"
        "    try:  # run again after the restart: nothing to do\n"
        "        print(f\"grpo-lab {metadata.version('grpo-lab')} is installed; if you have not restarted since, \"\n"
        "              \"restart the runtime now (Runtime > Restart session)\")\n"
        "        spec = None\n"
        "    except metadata.PackageNotFoundError:\n"
        "        spec = \"\"\n"
        "if \"google.colab\" in sys.modules and spec is not None:\n"
        "    wheels = sorted(glob.glob(\"/content/grpo_lab-*.whl\"))\n"
        "    if wheels:\n"
        "        spec = f\"grpo-lab[gpu] @ file://{wheels[-1]}\"\n"
        "    elif GRPO_LAB_URL:\n"
        "        spec = f\"grpo-lab[gpu] @ git+{GRPO_LAB_URL}\"\n"
        "    else:\n"
        "        raise RuntimeError(\"set GRPO_LAB_URL to your copy of grpo-lab (a git address), or upload a wheel \"\n"
        "                           \"built with `python -m build --wheel` to /content, then run this cell again\")\n"
        "    torch_now = metadata.version(\"torch\")\n"
        f"    if tuple(int(x) for x in torch_now.split(\"+\")[0].split(\".\")[:2]) >= {project.GPU_TORCH_BELOW!r}:\n"
        f"        print(f\"Colab has torch {{torch_now}}; the pinned set needs torch < {below}, so pip replaces it (Colab's \"\n"
        "              \"torchvision and torchaudio will no longer match it: this lesson uses neither)\")\n"
        "    else:\n"
        f"        print(f\"Colab's torch {{torch_now}} fits the pinned set (torch < {below}): it stays\")\n"
        "    print(f\"installing {spec} with the pinned GPU set: a few minutes\")\n"
        "    subprocess.run([sys.executable, \"-m\", \"pip\", \"install\", \"-q\", spec], check=True)\n"
        "    print(\"Installed. Now restart the runtime (Runtime > Restart session): the pinned transformers and TRL \"\n"
        "          \"replace Colab's, and this Python still holds the old ones. Then run the notebook from the next cell.\")"
    )


def header(target: str, stem: str, title: str) -> list:
    """The first cells: a badge (once the public address is set) and the Colab install cell (a GPU lesson always
    has one: from the user's copy or an uploaded wheel; the others once the address is set), or only a title."""
    path = f"{target}/{stem}.ipynb"
    gpu = stem in GPU_NOTEBOOKS
    kind = {"notebooks": "Lesson", "exercises": "Exercises", "solutions": "Solutions"}[target]
    if gpu:
        badge = (f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
                 f"({project.colab_url(path)})  \n" if project.colab_url(path) else "")
        return [nbformat.v4.new_markdown_cell(f"{badge}*{kind}* — {title}"),
                nbformat.v4.new_code_cell(gpu_install_cell())]
    if project.colab_url(path) is None:
        return [nbformat.v4.new_markdown_cell(f"*{kind}* — {title}")]
    badge = (f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({project.colab_url(path)})"
             f"  \n*{kind}* — {title}")
    comment = ("# On Colab, install grpo_lab with its pinned GPU stack (Unsloth, TRL, ...); elsewhere it is already "
               "installed.\n" if gpu else
               "# On Colab, install grpo_lab first; elsewhere it is already installed (pip install -e \".[dev]\").\n")
    spec = project.pip_spec("gpu" if gpu else None)
    install = (
        comment
        + "import sys\n"
        "if \"google.colab\" in sys.modules:\n"
        "    import subprocess\n"
        f"    subprocess.run([sys.executable, \"-m\", \"pip\", \"install\", \"-q\", \"{spec}\"], check=True)"
    )
    return [nbformat.v4.new_markdown_cell(badge), nbformat.v4.new_code_cell(install)]


def title_of(cells) -> str:
    for kind, text in cells:
        if kind == "markdown":
            first = markdown(text).splitlines()[0]
            return first.lstrip("# ").strip()
    raise ValueError("a course source needs a markdown title")


def build(src: Path, nbgrader: bool = False) -> dict[str, nbformat.NotebookNode]:
    """The lesson's notebooks, one per target; with ``nbgrader``, also the nbgrader source notebook (the solutions
    with nbgrader's cell metadata and solution markers: :func:`nbgrader_tree`)."""
    cells = parse(src.read_text())
    title = title_of(cells)
    if not any(kind == "exercise" for kind, _ in cells):
        raise ValueError(f"{src.name} has no exercise")
    if not any(kind == "answer" for kind, _ in cells):
        raise ValueError(f"{src.name} has no open question with a model answer ([answer] cell)")
    out = {}
    for target in TARGETS + (("nbgrader",) if nbgrader else ()):
        grading = target == "nbgrader"
        kinds = []  # each cell's kind, for nbgrader's metadata
        nb = nbformat.v4.new_notebook()
        nb.metadata = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                       "language_info": {"name": "python"}}
        if src.stem in GPU_NOTEBOOKS:  # Colab reads these and starts a GPU runtime
            nb.metadata["accelerator"] = "GPU"
            nb.metadata["colab"] = {"gpuType": "T4", "provenance": []}
        nb.cells = header("solutions" if grading else target, src.stem, title)
        kinds += ["header"] * len(nb.cells)
        opening, closing = objectives_cells(src.stem)
        n_ex, heading, opened = 0, None, False
        for kind, text in cells:
            if kind in ("exercise-md", "exercise", "check", "answer") and target == "notebooks":
                continue
            if kind == "answer":
                nb.cells.append(nbformat.v4.new_markdown_cell(
                    "**Your answer:** *(double-click to write it; the model answer is in solutions/)*"
                    if target == "exercises" else "**Model answer.** " + markdown(text)))
            elif kind in ("markdown", "exercise-md"):
                nb.cells.append(nbformat.v4.new_markdown_cell(markdown(text)))
                if kind == "exercise-md":
                    heading = re.search(r"(?:Exercise|question) (\d\d\.\d+)", text)
            elif kind == "exercise":
                n_ex += 1
                # the stub names the exercise its heading names (not its position among the code cells)
                name = heading.group(1) if heading else f"{src.stem[:2]}.{n_ex}"
                nb.cells.append(nbformat.v4.new_code_cell(stub(text, name) if target == "exercises"
                                                          else text if grading else solution(text)))
            else:
                nb.cells.append(nbformat.v4.new_code_cell(text))
            kinds.append(kind)
            if kind == "markdown" and not opened:  # right after the lesson's title and introduction
                nb.cells.append(nbformat.v4.new_markdown_cell(opening))
                kinds.append("markdown")
                opened = True
        nb.cells.append(nbformat.v4.new_markdown_cell(closing))
        kinds.append("markdown")
        for i, cell in enumerate(nb.cells):  # stable ids, so a rebuild is byte-identical
            cell["id"] = f"{src.stem[:2]}-{i:03d}"
        if grading:
            for cell, kind in zip(nb.cells, kinds):
                cell.metadata["nbgrader"] = nbgrader_metadata(cell, kind)
        out[target] = nb
    return out


def nbgrader_metadata(cell, kind: str) -> dict:
    """nbgrader's metadata (schema 3) for a cell of ``kind``: an exercise is a solution cell (nbgrader replaces the
    lines between ``### BEGIN SOLUTION`` and ``### END SOLUTION``), its check an autograded test cell worth one
    point, an open question's model answer a manually graded answer cell worth one point, every other cell read-only
    (its checksum is verified when a submission is graded)."""
    meta = {"grade_id": cell["id"], "schema_version": 3, "task": False, "grade": False, "solution": False,
            "locked": True}
    if kind == "exercise":
        meta.update(solution=True, locked=False)
    elif kind == "check":
        meta.update(grade=True, points=1)
    elif kind == "answer":
        meta.update(solution=True, grade=True, points=1, locked=False)
    return meta


NBGRADER_CONFIG = """# nbgrader's configuration for the course (written by scripts/build_notebooks.py --nbgrader).
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "grpo-lab"
c.ExecutePreprocessor.timeout = 1800  # a lesson's smoke mode runs in minutes on a CPU; the full mode is not graded
"""


def nbgrader_dest(text) -> Path:
    """The course directory ``--nbgrader`` writes into, refusing what would scatter files where an instructor does
    not expect them: an empty name (the current directory), the file system's root, the home directory, or this
    repository's root."""
    if text is None or not str(text).strip():
        raise SystemExit("--nbgrader needs a directory for the course (e.g. course-dir); an empty name would write "
                         "into the current directory")
    dest = Path(str(text)).expanduser()
    resolved = dest.resolve()
    if resolved in (Path("/").resolve(), Path.home().resolve(), ROOT.resolve()):
        raise SystemExit(f"--nbgrader {text}: refusing to write an nbgrader course into {resolved}; give a directory "
                         "of its own (e.g. course-dir)")
    return dest


def nbgrader_tree(dest: Path, sources, force: bool = False) -> list[Path]:
    """An nbgrader course directory in ``dest``: ``source/<lesson>/<lesson>.ipynb`` for every lesson (one assignment
    per lesson) and ``nbgrader_config.py``. Then, in ``dest``: ``nbgrader generate_assignment <lesson>`` writes the
    student version (stubs, empty answers) to ``release/``; submissions go to ``submitted/<student>/<lesson>/``;
    ``nbgrader autograde <lesson>`` runs them and scores the check cells (one point each; open questions are
    graded by hand in formgrader). A file already there that differs from what would be written (an instructor's
    edit) is never overwritten: the build stops naming it, unless ``force``."""
    want = {dest / "nbgrader_config.py": NBGRADER_CONFIG}
    for src in sources:
        want[dest / "source" / src.stem / f"{src.stem}.ipynb"] = nbformat.writes(build(src, nbgrader=True)["nbgrader"]) \
            + "\n"
    edited = [p for p, text in want.items() if p.is_file() and p.read_text() != text]
    if edited and not force:
        raise SystemExit(f"--nbgrader: {len(edited)} file(s) in {dest} differ from what the course would write "
                         f"(edited there?): {', '.join(str(p.relative_to(dest)) for p in edited[:5])}; nothing was "
                         "written. Keep them, or pass --force to overwrite them")
    dest.mkdir(parents=True, exist_ok=True)
    for path, text in want.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return [p for p in want if p.suffix == ".ipynb"]


PKG = ROOT / "grpo_lab"


def _module_path(name: str) -> Path | None:
    """The file of grpo_lab module ``name`` ("" is the package, "tasks.gsm8k" a submodule), or None."""
    base = PKG.joinpath(*name.split(".")) if name else PKG
    for p in (base.with_suffix(".py"), base / "__init__.py"):
        if p.is_file():
            return p
    return None


def _imports_of(path: Path, name: str | None) -> set[str]:
    """The grpo_lab modules that ``path`` imports anywhere (top level or inside functions), as names relative to
    the package; ``name``: the module's own name (None for a lesson, which imports absolutely)."""
    if name is None:
        package = []
    else:
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        package = [p for p in package if p]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                mod = package[:len(package) - (node.level - 1)] + (node.module.split(".") if node.module else [])
            elif node.module == "grpo_lab" or (node.module or "").startswith("grpo_lab."):
                mod = node.module.split(".")[1:]
            else:
                continue
            out.add(".".join(mod))
            out.update(".".join(mod + [a.name]) for a in node.names)  # a submodule imported by name
        elif isinstance(node, ast.Import):
            out.update(".".join(a.name.split(".")[1:]) for a in node.names
                       if a.name == "grpo_lab" or a.name.startswith("grpo_lab."))
    return {m for m in out if _module_path(m) is not None}


def lesson_modules(src: Path) -> set[str]:
    """Every grpo_lab module a lesson can run: the ones it imports, what they import (at any depth, imports inside
    functions included) and the packages that hold them."""
    todo, seen = list(_imports_of(src, None) | {""}), set()
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        parts = m.split(".") if m else []
        todo += [".".join(parts[:i]) for i in range(len(parts))]  # importing a.b runs a's __init__
        todo += list(_imports_of(_module_path(m), m))
    return seen


def inputs_hash(src: Path) -> str:
    """What a lesson's outputs depend on: its source, the grpo_lab modules it can run (:func:`lesson_modules`), the
    package's data files that the lesson or those modules name (``grpo_lab/data/smollm2_study.json`` for lesson 10)
    and its other files (weights): editing a module no lesson imports (the verl plugin, the CLI), or one lesson's
    shipped data, leaves the other executed lessons current."""
    h = hashlib.sha256()
    modules = {_module_path(m) for m in lesson_modules(src)}
    texts = "\n".join(p.read_text() for p in [src, *modules])

    def used(p: Path) -> bool:  # a data file counts when the lesson or one of its modules names it
        return p.parent != PKG / "data" or p.name in texts

    files = [src] + sorted(p for p in PKG.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                           and (p in modules if p.suffix == ".py" else used(p)))
    for p in files:
        h.update(p.relative_to(ROOT).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]


# ----------------------------------------------------------------------------- exercises fail only at stubs

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.ListComp, ast.SetComp, ast.DictComp,
          ast.GeneratorExp)


def names_assigned(tree):
    """Names bound at module scope (a def's or a comprehension's own locals are not)."""
    out = set()
    todo = [tree]
    while todo:
        node = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(child.name)
                continue
            if isinstance(child, SCOPES):
                continue
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                out.add(child.id)
            elif isinstance(child, (ast.Import, ast.ImportFrom)):
                out.update((a.asname or a.name).split(".")[0] for a in child.names)
            todo.append(child)
    return out

CATCHES = {"NotImplementedError", "RuntimeError", "Exception", "BaseException"}


def names_read(tree):
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def calls_outside_guards(tree):
    """Names read outside what handles an unfinished stub: a ``try`` whose handlers catch NotImplementedError, or
    an argument handed by name (or in a lambda) to a ``checks.*`` call (a check says "not done yet" for an unfinished
    exercise, and
    ``checks.yours_or`` falls back to the library's reference: grpo_lab.checks). ``checks.check(my_f())`` calls the
    stub before the check runs, so that one counts."""
    out, todo = set(), [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Try) and any(h.type is None or any(
                isinstance(n, ast.Name) and n.id in CATCHES for n in ast.walk(h.type)) for h in node.handlers):
            todo += node.handlers + node.orelse + node.finalbody
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name) and node.func.value.id == "checks":
            todo += [a for a in [*node.args, *(k.value for k in node.keywords)]
                     if not isinstance(a, (ast.Name, ast.Lambda))]  # a lambda's body runs inside the check
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            out.add(node.id)
        todo += list(ast.iter_child_nodes(node))
    return out


def top_level_raise(tree):
    """a raise NotImplementedError not inside a def"""
    bad = []
    def visit(node, in_def):
        for child in ast.iter_child_nodes(node):
            d = in_def or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Raise) and not in_def and "NotImplementedError" in ast.unparse(child):
                bad.append(child.lineno)
            visit(child, d)
    visit(tree, False)
    return bad


def stub_problems(ex, sol) -> list[str]:
    """Why executing the exercises notebook ``ex`` top to bottom before any exercise is done could stop, given that
    its solutions notebook ``sol`` runs clean (nbval runs it): read from the cells, not by executing them again
    (issue 81: an exercises notebook runs top to bottom unfinished). An exercise cell differs from its solution
    only by stubs that raise NotImplementedError inside a function (so the cell still defines the same names); every
    other cell hands a stub only to a check or to ``checks.yours_or`` (which handle the unfinished stub), never calls
    it outside them; and every stub is handed to something (an exercise nobody runs is a problem). Empty when an
    unfinished notebook runs to its end."""
    problems = []
    ec = [c for c in ex.cells if c.cell_type == "code"]
    sc = [c for c in sol.cells if c.cell_type == "code"]
    if len(ec) != len(sc):
        return [f"{len(ec)} code cells in the exercises, {len(sc)} in the solutions"]
    stubs, used = set(), set()
    for i, (e, s) in enumerate(zip(ec, sc)):
        src = "\n".join(l for l in e.source.splitlines() if not l.lstrip().startswith(("%", "!")))
        try:
            tree = ast.parse(src)
        except SyntaxError as err:
            problems.append(f"cell {i}: not Python ({err})"); continue
        if e.source != s.source:
            if "raise NotImplementedError" not in e.source:
                problems.append(f"cell {i} differs from the solution without a stub")
            bad = top_level_raise(tree)
            if bad:
                problems.append(f"cell {i}: a stub raises at top level (line {bad}), so the names it defines would be missing")
            sol_defs = names_assigned(ast.parse(s.source))
            if names_assigned(tree) != sol_defs:
                problems.append(f"cell {i}: the stub defines {sorted(names_assigned(tree))}, the solution {sorted(sol_defs)}")
            stubs |= {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
            continue
        used |= names_read(tree) & stubs
        called = calls_outside_guards(tree) & stubs
        if called:
            problems.append(f"cell {i} calls {sorted(called)} outside a check: an unfinished exercise would stop the "
                            "notebook there (hand it to its check, or take checks.yours_or(..., the library's))")
    if not stubs:
        problems.append("no stub: an exercises notebook without an exercise")
    elif not used:
        problems.append(f"no cell calls a stub ({', '.join(sorted(stubs))}): an exercise nobody runs")
    return problems


def strip_outputs(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The notebook as the builder writes it before execution: no outputs, counts or execution record."""
    nb = copy.deepcopy(nb)
    nb.metadata.pop("grpo_lab", None)
    nb.metadata.pop("widgets", None)
    nb.metadata["language_info"] = {"name": "python"}  # the kernel fills in its version
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            cell.metadata.pop("execution", None)
    return nb


def carry_outputs(built: nbformat.NotebookNode, path: Path) -> nbformat.NotebookNode:
    """``built`` with the outputs of the committed ``path`` when the cells are the same (else unexecuted)."""
    if not path.exists():
        return built
    old = nbformat.read(path, as_version=4)
    if nbformat.writes(strip_outputs(old)) != nbformat.writes(built):
        return built
    return old


def cores_busy(seconds: float = 1.0) -> float:
    """How many cores other work kept busy over the last ``seconds`` (from /proc/stat: not the load average, which
    still counts the lesson executed just before); the 1-minute load average where /proc/stat is missing."""
    import os

    def sample():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + v[4]  # all jiffies, idle + iowait

    try:
        t0, i0 = sample()
        time.sleep(seconds)
        t1, i1 = sample()
    except OSError:
        return os.getloadavg()[0]
    return (1 - (i1 - i0) / max(t1 - t0, 1)) * (os.cpu_count() or 1)


def execute(path: Path, src: Path) -> float:
    """Run a lesson top to bottom in its smoke mode and store the outputs and the execution record."""
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    nb = strip_outputs(nb)
    import os

    busy = cores_busy()  # other work on the cores just before the kernel starts (a study running beside it)
    t0 = time.perf_counter()
    NotebookClient(nb, timeout=1800, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
                   ).execute()
    seconds = time.perf_counter() - t0
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.metadata.pop("execution", None)
    nb.metadata["grpo_lab"] = {"executed": datetime.date.today().isoformat(), "seconds": round(seconds),
                               "mode": "smoke, CPU", "cores": os.cpu_count(), "busy_cores": round(busy, 1),
                               "inputs": inputs_hash(src)}
    path.write_text(nbformat.writes(nb) + "\n")
    return seconds


def _run_time(src, short: bool = False) -> str:
    """How long the committed lesson took to execute, from its metadata (written by --execute); ``short``: the
    README's form ("42 s, busy, 2026-11-26": the README says the cores were two)."""
    path = ROOT / "notebooks" / f"{src.stem}.ipynb"
    meta = nbformat.read(path, as_version=4).metadata.get("grpo_lab", {}) if path.is_file() else {}
    if "seconds" not in meta:
        return "not executed yet"
    load = meta.get("busy_cores")  # "busy": other work kept half a core or more busy just before it started
    busy = " busy" if load is not None and load >= 0.5 else ""
    if short:
        return f"{meta['seconds']} s,{busy + ',' if busy else ''} {meta['executed']}"
    cores = f" on {meta['cores']}{busy} cores" if meta.get("cores") else ""
    return f"{meta['seconds']} s{cores} ({meta['executed']})"


def _short_title(src) -> str:
    return title_of(parse(src.read_text())).split("—", 1)[-1].strip()


def readme_table(sources) -> str:
    rows = ["| # | lesson | you will learn to | time | exercises | solutions |", "|---|---|---|---|---|---|"]
    for src in sources:
        links = []
        for target in TARGETS:
            path = f"{target}/{src.stem}.ipynb"
            badge = (f" [![Colab](https://colab.research.google.com/assets/colab-badge.svg)]({project.colab_url(path)})"
                     if project.colab_url(path) else "")
            links.append(f"[{_short_title(src) if target == 'notebooks' else target[:-1]}]({path}){badge}")
        entry = objectives(src.stem)
        rows.append(f"| {src.stem[:2]} | {links[0]} | " + "; ".join(entry["objectives"])
                    + f" | {entry['time']} ({_run_time(src, short=True)}) | " + " | ".join(links[1:]) + " |")
    return "\n".join(rows)


def site_lessons(sources) -> str:
    rows = ["| # | lesson | you will learn to | reading + exercises (our estimate) |", "|---|---|---|---|"]
    rows += [f"| {src.stem[:2]} | [{_short_title(src)}](../../notebooks/{src.stem}.ipynb) | "
             + "; ".join(objectives(src.stem)["objectives"]) + f" | {objectives(src.stem)['time']} |" for src in sources]
    return "\n".join(rows)


def site_table(sources) -> str:
    rows = ["| # | lesson | executed in (smoke mode, CPU) |", "|---|---|---|"]
    rows += [f"| {src.stem[:2]} | {title_of(parse(src.read_text()))} | {_run_time(src)} |" for src in sources]
    return "\n".join(rows)


def site_toctree(sources) -> str:
    """The landing page's lesson toctree, from the course's sources: a renumbered or new lesson is in the site's
    navigation (a hand-kept list kept lessons 11 and 12 after they became 14 and 15, and left 11-15 out)."""
    return "\n".join(["```{toctree}", ":maxdepth: 1", ":caption: Lessons", ""]
                     + [f"/notebooks/{src.stem}" for src in sources] + ["```"])


def with_tables(sources) -> dict:
    """README.md and the site's landing page with their generated tables (lessons, links, run times)."""
    out = {}
    for path, (begin, end), table in ((ROOT / "README.md", (README_BEGIN, README_END), readme_table(sources)),
                                      (SITE_INDEX, (SITE_BEGIN, SITE_END), site_table(sources)),
                                      (SITE_INDEX, SITE_LESSONS, site_lessons(sources)),
                                      (SITE_INDEX, SITE_TOC, site_toctree(sources))):
        text = out.get(path) or path.read_text()
        if begin not in text or end not in text:
            raise SystemExit(f"{path.relative_to(ROOT)} lacks the markers {begin} ... {end}")
        before, rest = text.split(begin, 1)
        _, after = rest.split(end, 1)
        out[path] = f"{before}{begin}\n{table}\n{end}{after}"
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare with the committed files instead of writing")
    ap.add_argument("--execute", nargs="*", metavar="NN", default=None,
                    help="execute the lessons in notebooks/ (all, or those whose number is given) and keep outputs")
    ap.add_argument("--nbgrader", metavar="DIR", default=None,
                    help="only write an nbgrader course directory (source/ and nbgrader_config.py) into DIR")
    ap.add_argument("--force", action="store_true",
                    help="with --nbgrader: overwrite source notebooks that were edited in DIR")
    args = ap.parse_args(argv)
    sources = sorted(COURSE.glob("[0-9][0-9]_*.py"))
    if args.nbgrader is not None:
        dest = nbgrader_dest(args.nbgrader)
        paths = nbgrader_tree(dest, sources, force=args.force)
        print(f"wrote {len(paths)} nbgrader assignments to {dest / 'source'}; in {dest}: "
              "nbgrader generate_assignment <lesson>, then nbgrader autograde <lesson>")
        return 0
    expected: dict[Path, str] = {}
    for src in sources:
        for target, nb in build(src).items():
            path = ROOT / target / f"{src.stem}.ipynb"
            if target == "notebooks":  # outputs are kept, and not compared, while the cells are unchanged
                nb = carry_outputs(nb, path)
            expected[path] = nbformat.writes(nb) + "\n"
    expected.update(with_tables(sources))
    stale = [p for p, text in expected.items() if not p.exists() or p.read_text() != text]
    for target in TARGETS:  # generated notebooks without a source are stale too
        for p in (ROOT / target).glob("*.ipynb"):
            if p not in expected:
                stale.append(p)
    if args.check:
        for p in stale:
            print(f"out of date: {p.relative_to(ROOT)}")
        return 1 if stale else 0
    for p, text in expected.items():
        p.parent.mkdir(exist_ok=True)
        p.write_text(text)
    for p in stale:
        if p not in expected:
            p.unlink()
    print(f"built {len(sources)} sources into {', '.join(TARGETS)}; README and site tables updated")
    if args.execute is not None:
        for src in sources:
            if args.execute and src.stem[:2] not in args.execute:
                continue
            seconds = execute(ROOT / "notebooks" / f"{src.stem}.ipynb", src)
            print(f"executed notebooks/{src.stem}.ipynb in {seconds:.0f} s")
        for path, text in with_tables(sources).items():  # the tables' run times come from the lessons' metadata
            path.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
