"""Issue 10: the package's layers (no module imports upward) and the one-file extension points."""

import ast
from dataclasses import replace
from pathlib import Path

import pytest

import grpo_lab

# each module may import only from its own or lower layers (docs/architecture.md draws this)
LAYERS = [
    {"_checks", "choices", "io", "stats", "project", "gradrank", "loss", "tasks.base"},
    {"_groups", "passk", "tasks.arithmetic", "tasks.word_problems"},
    {"advantages", "tasks.gsm8k", "tasks.gym", "tasks", "tasks.fingerprint"},
    {"starvation", "sampling", "config", "policy", "generation", "decoding"},
    {"simulator", "trl", "viz", "verl"},
    {"runner", "diagnose", "widgets", "report"},
    {"compare", "profile"},
    {"study.measures", "study.plan", "study.run", "study.on_ray", "study.readings", "study.robust", "study.screen", "study.coverage", "study.calibrate", "study.data", "study.words", "study.figures", "study.render",
     "study"},  # the study room: one idea a file (docs/architecture.md)
    {"cli", "checks"},
    {""},  # the package itself
]
LAYER = {m: i for i, layer in enumerate(LAYERS) for m in layer}
ROOT = Path(grpo_lab.__file__).parent


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports(path: Path) -> set[str]:
    """Every grpo_lab module ``path`` imports, at top level or inside functions."""
    me = module_name(path)
    package = me.split(".")[:-1] if path.name != "__init__.py" else me.split(".") if me else []
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
            target = ".".join(base + ([node.module] if node.module else []))
            names = [target] if node.module else [".".join(base + [a.name]) for a in node.names]
            out.update(n for n in names if n in LAYER)
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("grpo_lab"):
            out.add(node.module.removeprefix("grpo_lab").lstrip("."))
    return out - {me}


def test_every_module_has_a_layer():
    modules = {module_name(p) for p in ROOT.rglob("*.py")}
    assert modules == set(LAYER), f"unplaced: {modules - set(LAYER)}; gone: {set(LAYER) - modules}"


@pytest.mark.parametrize("path", sorted(ROOT.rglob("*.py")), ids=lambda p: module_name(p) or "grpo_lab")
def test_no_module_imports_upward(path):
    me = module_name(path)
    upward = {m for m in imports(path) if LAYER[m] > LAYER[me]}
    assert not upward, f"{me or 'grpo_lab'} (layer {LAYER[me]}) imports {upward} from higher layers"


def test_a_new_task_is_one_class(tmp_path):
    from grpo_lab.cli import build_parser
    from grpo_lab.config import RunConfig
    from grpo_lab.tasks import TASKS, Problem, Task, make_problems, register_task

    @register_task
    class Doubling(Task):
        name = "doubling_test"
        tiny_lm_ok = True

        def problems(self, split, n, seed, smoke=False):
            return [Problem(f"{i}+{i}=", str(2 * i), 1) for i in range(n)]

    try:
        assert make_problems("doubling_test", 3)[2].answer == "4"
        RunConfig(task="doubling_test").validate()
        args = build_parser().parse_args(["compare", "--task", "doubling_test"])
        assert args.task == "doubling_test"
    finally:
        del TASKS["doubling_test"]


def test_a_new_policy_is_one_adapter():
    from grpo_lab import runner
    from grpo_lab.config import RunConfig

    @runner.register_policy("constant_test")
    class Constant:
        defaults: dict = {}

        def train(self, cfg, request):
            assert isinstance(request, runner.TrainRequest) and request.workdir.is_dir()
            return {"config": cfg, "eval": {"pass_at_k": {1: 0.5}}, "history": [], "evaluated": request.evaluate_after}

    try:
        out = runner.train(replace(RunConfig(), policy="constant_test"), evaluate_after=False)
        assert out["eval"]["pass_at_k"][1] == 0.5 and out["evaluated"] is False
    finally:
        del runner.POLICIES["constant_test"]


def test_a_new_sampling_rule_is_one_registration(tmp_path):
    """Issue 29: a toy rule registered here, and nowhere else, runs through RunConfig, the CLI and train: it drops
    the all-fail groups only (its own filter), one round, no refill."""
    from grpo_lab import cli
    from grpo_lab.config import RunConfig, method_name, parse_method
    from grpo_lab.runner import train
    from grpo_lab.sampling import SamplingRule, register_sampling, unregister_sampling

    def not_all_fail(rewards, G):
        return ~(rewards.reshape(-1, G) == 0).all(dim=1)

    register_sampling(SamplingRule("nofail_test", drops=True, refills=False, keep=not_all_fail))
    try:
        assert parse_method("grpo+nofail_test") == dict(estimator="grpo", sampling="nofail_test", skip_prob=0.0)
        cfg = RunConfig(estimator="grpo", sampling="nofail_test", steps=3, prompts_per_step=8, eval_problems=8,
                        eval_samples=4).validate()
        assert method_name(cfg) == "grpo+nofail_test"
        out = train(cfg, evaluate_after=False)
        for h in out["history"]:  # one round; kept = exactly the groups that are not all-fail (all-pass ones too)
            assert h["sampling/rounds"] == 1 and h["sampling/groups"] == 8
            assert h["sampling/kept"] == round(8 * (1 - h["starvation/all_fail"]))
        assert cli.main(["compare", "--estimators", "grpo+nofail_test", "--seeds", "0", "--steps", "2",
                         "--prompts-per-step", "8", "--eval-problems", "8", "--eval-samples", "4", "--no-progress",
                         "--out", str(tmp_path)]) == 0
        report = next(tmp_path.glob("*/report.md")).read_text()
        assert "grpo+nofail_test" in report
    finally:
        unregister_sampling("nofail_test")
    with pytest.raises(ValueError, match="sampling must be one of none, dynamic, drop, got 'nofail_test'"):
        RunConfig(sampling="nofail_test").validate()


def test_cli_options_come_from_the_config_fields():
    from grpo_lab.cli import build_parser
    from grpo_lab.config import cli_fields

    text = build_parser()._subparsers._group_actions[0].choices["compare"].format_help()
    for f, flag in cli_fields():
        assert flag in text and f.metadata["help"].split(" ")[0] in text


def test_the_package_imports_without_a_cycle():
    """Issue 47: no circle of imports, within a layer either (config -> generation -> policy -> config was one:
    the names they share live in grpo_lab.choices, below all three)."""
    graph = {module_name(p): imports(p) for p in ROOT.rglob("*.py")}
    graph = {m: {t for t in targets if t in graph and t != ""} for m, targets in graph.items() if m}
    state: dict = {}

    def visit(m, path):
        state[m] = "open"
        for t in sorted(graph.get(m, ())):
            if state.get(t) == "open":
                cycle = path[path.index(t):] + [t]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if t not in state:
                visit(t, path + [t])
        state[m] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
