"""Issue 61, item 6: `grpo-lab study run PLAN --executor ray` on a local Ray cluster of 2 CPUs writes the same results
as `--workers 2`; a worker killed mid-run is retried and leaves nothing partial; a run that still fails is named and
nothing of it is written, and running again trains exactly it."""

import contextlib
import io
import json
import re
import shutil
from pathlib import Path

import pytest

from grpo_lab.cli import main

ray = pytest.importorskip("ray")

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guide" / "study.md"
TIMES = {"train_seconds", "eval_seconds"}  # wall-clock, the only fields two executions may differ in


def tiny_plan(where: Path) -> Path:
    """The study guide's tiny plan (two arms), at two seeds and two steps."""
    text = re.search(r"<!-- study-guide-plan -->\n```toml\n(.*?)```", GUIDE.read_text(), re.S).group(1)
    text = text.replace("seeds = [0, 1, 2]", "seeds = [0, 1]").replace("steps = 4", "steps = 2")
    assert "seeds = [0, 1]" in text and "steps = 2" in text
    where.mkdir(parents=True)
    (where / "plan.toml").write_text(text)
    return where / "plan.toml"


def results(study: Path) -> dict:
    """Every result file of a study folder, less its timings."""
    out = {}
    for f in sorted((study / "runs").glob("*/results/*.json")):
        res = json.loads(f.read_text())
        res["history"] = [{k: v for k, v in h.items() if k != "step_time"} for h in res["history"]]
        out[f.relative_to(study).as_posix()] = {k: v for k, v in res.items() if k not in TIMES}
    return out


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    plan = tiny_plan(tmp_path_factory.mktemp("ref") / "workers")
    said = io.StringIO()
    with contextlib.redirect_stdout(said):
        assert main(["study", "run", str(plan), "--workers", "2", "--no-report"]) == 0
    assert "2 workers finished" in said.getvalue() and "trained 4 run(s)" in said.getvalue()  # the workers' runs
    ref = results(plan.parent)
    assert len(ref) == 4
    return ref, plan.parent


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A local cluster of 2 CPUs, and the one path the fault injection watches: one value of the variable for the
    whole module, so every call has the same runtime environment and reuses the workers that are alive (each new
    worker imports torch and TRL again)."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield tmp_path_factory.mktemp("fault") / "died"
    ray.shutdown()


def test_ray_writes_what_local_workers_write_and_a_killed_worker_is_retried(tmp_path, reference, cluster,
                                                                             monkeypatch):
    reference = reference[0]
    from grpo_lab.study import read_plan
    from grpo_lab.study.on_ray import DIE_ONCE_ENV, run_on_ray

    plan = tiny_plan(tmp_path / "ray")
    marker = cluster
    marker.unlink(missing_ok=True)  # armed: the first run to finish a step ends its worker
    monkeypatch.setenv(DIE_ONCE_ENV, str(marker))
    said = []
    out = run_on_ray(read_plan(plan), retries=1, echo=said.append)
    assert marker.is_file(), "no worker was killed: the retry was not exercised"
    assert sorted(out["trained"]) == ["grpo seed 0", "grpo seed 1", "sign seed 0", "sign seed 1"]
    assert out["failed"] == [] and any("2 CPU(s)" in m for m in said)
    assert results(plan.parent) == reference  # the killed run started over and gave the same result
    assert len(list((plan.parent / "runs" / "base" / "plans").glob("*.json"))) == 4  # the plan recorded per run
    assert not (plan.parent / "runs" / "base" / "locks").exists()
    assert main(["study", "report", str(plan)]) == 0  # the study surface reads what Ray wrote
    assert "In progress" not in (plan.parent / "REPORT.md").read_text()


def test_a_run_that_fails_is_named_nothing_of_it_is_written_and_a_rerun_trains_it(tmp_path, reference, cluster,
                                                                                    monkeypatch):
    reference = reference[0]
    from grpo_lab.study import read_plan
    from grpo_lab.study.on_ray import DIE_ONCE_ENV, run_on_ray

    plan = tiny_plan(tmp_path / "ray")
    cluster.unlink(missing_ok=True)  # armed
    monkeypatch.setenv(DIE_ONCE_ENV, str(cluster))
    said = []
    with pytest.raises(RuntimeError, match=r"1 run\(s\) failed: (grpo|sign) seed [01]; the 3 finished") as err:
        run_on_ray(read_plan(plan), retries=0, echo=said.append)
    failed = re.search(r"failed: (\w+) seed (\d)", str(err.value)).groups()
    name = f"{failed[0]}-seed{failed[1]}"
    base = plan.parent / "runs" / "base"
    assert not (base / "results" / f"{name}.json").exists() and not (base / "metrics" / f"{name}.jsonl").exists()
    assert len(list((base / "results").glob("*.json"))) == 3
    assert any("FAILED" in m and f"{failed[0]} seed {failed[1]}" in m for m in said)
    assert cluster.is_file()  # spent: the rerun (same environment, so the live worker is reused) kills nothing
    again = run_on_ray(read_plan(plan), echo=said.append)
    assert again["trained"] == [f"{failed[0]} seed {failed[1]}"]  # exactly the missing one
    assert results(plan.parent) == reference


def test_a_share_of_a_gpu_is_refused_where_the_cluster_has_none(tmp_path, cluster):
    """--gpus-per-run on a cluster without GPUs would leave every task waiting for a resource that never comes."""
    from grpo_lab.study import read_plan
    from grpo_lab.study.on_ray import run_on_ray

    plan = tiny_plan(tmp_path / "s")
    with pytest.raises(ValueError, match="gpus_per_run=0.25, but the Ray cluster has no GPUs"):
        run_on_ray(read_plan(plan), gpus_per_run=0.25, echo=lambda *_: None)
    with pytest.raises(ValueError, match=r"share of one GPU in \(0, 1\]"):
        run_on_ray(read_plan(plan), gpus_per_run=1.5)
    assert not list((tmp_path / "s").rglob("*.json*"))  # refused before anything is evaluated or trained


def test_a_result_sent_back_is_checked_before_it_is_written(tmp_path, reference):
    """The driver writes only a result that passes the checks a result read from disk passes."""
    from grpo_lab.study import read_plan
    from grpo_lab.study.on_ray import keep

    plan = read_plan(tiny_plan(tmp_path / "s"))
    good = json.loads((reference[1] / "runs" / "base" / "results" / "sign-seed0.json").read_text())
    arm, d = plan.arms["sign"], tmp_path / "out"
    with pytest.raises(ValueError, match="sign seed 1: the result sent back does not belong"):
        keep(d, arm, 1, {"result": good, "metrics": "{}\n"})  # seed 0's result as seed 1's
    broken = {**good, "eval": {}}
    with pytest.raises(ValueError, match="sign seed 0: the result sent back is incomplete or damaged"):
        keep(d, arm, 0, {"result": broken, "metrics": None})
    with pytest.raises(ValueError, match="another settings fingerprint"):
        keep(d, arm, 0, {"result": {**good, "fingerprint": "0000"}, "metrics": None})
    assert not d.exists()  # nothing written for any of them
    assert keep(d, arm, 0, {"result": good, "metrics": "{}\n"}).is_file()
    assert (d / "metrics" / "sign-seed0.jsonl").read_text() == "{}\n"


def test_the_cli_passes_ray_its_cluster_and_refuses_mixed_options(tmp_path, monkeypatch):
    import grpo_lab.study.on_ray as on_ray

    plan = tiny_plan(tmp_path / "s")
    seen = {}
    monkeypatch.setattr(on_ray, "run_on_ray", lambda p, shard, address, num_cpus, gpus_per_run: seen.update(
        shard=shard, address=address, cpus=num_cpus, gpus=gpus_per_run) or {"trained": [], "finished": [],
                                                                             "failed": []})
    assert main(["study", "run", str(plan), "--executor", "ray", "--workers", "3", "--shard", "2/4",
                 "--no-report"]) == 0
    assert seen == {"shard": (2, 4), "address": None, "cpus": 3, "gpus": None}
    assert main(["study", "run", str(plan), "--executor", "ray", "--address", "auto", "--gpus-per-run", "0.25",
                 "--no-report"]) == 0
    assert seen["address"] == "auto" and seen["gpus"] == 0.25
    for bad in (["--address", "auto"], ["--gpus-per-run", "0.5"],  # Ray's options without Ray
                ["--executor", "ray", "--gpus-per-run", "0"], ["--executor", "ray", "--gpus-per-run", "2"]):
        with pytest.raises(SystemExit) as refused:  # a usage error, named
            main(["study", "run", str(plan), *bad, "--no-report"])
        assert refused.value.code == 2, bad
    shutil.rmtree(tmp_path / "s")
