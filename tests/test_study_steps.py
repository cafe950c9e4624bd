"""Issue 57, item 4: a plan's `steps` table, the training log's quantities per arm (the gradient norm, the update's
size, the distance from the start, the reward's rise, the completion length, Adam's ε share): descriptive, outside
the analysis fingerprint, every cell computed from the runs' own logs."""


import pytest

from grpo_lab.study import PlanError, Study, read_plan
from grpo_lab.study.render import step_sections

from test_study import BASE, evaluation, toml_base, write_runs

PLAN = """title = "Steps"
seeds = [0, 1, 2]
{steps}

[base]
""" + toml_base() + """
[arms.grpo]
method = "grpo"

[arms.sign]
method = "sign"

[measures]
primary = "pass@1"

[[comparisons]]
a = "sign"
b = "grpo"
"""
STEPS = 'steps = ["grad-norm", "from-start", "reward-first", "reward-last", "length", "adam-near-eps", "truncated"]'


def history(scale: float, rise: float, near: bool, n: int = 20) -> list:
    """A run's log: grad_norm = scale * (1 + step/n), reward from 0.1 to 0.1 + rise, 30 tokens a completion."""
    out = []
    for t in range(n):
        h = {"reward": 0.1 + rise * t / (n - 1), "grad_norm": scale * (1 + t / n), "update/step_norm": 0.01,
             "update/from_start": 0.01 * (t + 1), "sampling/tokens": 480, "sampling/completions": 16}
        if near:
            h["update/adam_near_eps"] = 0.25
        out.append(h | {"step": t + 1})
    return out


def make(tmp_path, steps=STEPS, scale=None):
    scale = scale or {"grpo": 0.1, "sign": 0.4}
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "plan.toml").write_text(PLAN.format(steps=steps))

    def run(name, s, rng):
        h = history(scale[name] * (1 + 0.1 * s), 0.3 + 0.1 * s, near=name == "sign")
        # the metrics file holds what the history leaves out (TRL's completions/*): 0.1 of sign's cut, 0.2 of grpo's
        return dict(history=h, eval=evaluation(rng, 0.4),
                    log=[x | {"completions/clipped_ratio": 0.1 if name == "sign" else 0.2} for x in h])

    return write_runs(tmp_path / "plan.toml", run)


def cells(md: list) -> dict:
    """{arm label: [cells]} from the section's table."""
    return {r.split("|")[1].strip(): [c.strip() for c in r.split("|")[3:-1]]
            for r in md if r.startswith("| ") and not r.startswith("| arm")}


def test_the_steps_table_is_each_arms_log_summarised(tmp_path):
    plan = make(tmp_path / "s")
    md = step_sections(Study.load(plan))
    assert md[0].startswith("## Per-step quantities")
    got = cells(md)
    # grad-norm of a run: scale * mean(1 + t/20) = scale * 1.475; seeds scale by 1, 1.1, 1.2 -> mean 1.1 * 1.475 * s
    assert got["sign"][0].startswith(f"{0.4 * 1.1 * 1.475:.3f} [")
    assert got["grpo"][0].startswith(f"{0.1 * 1.1 * 1.475:.3f} [")
    assert got["sign"][1].startswith("0.200 (the 3 seeds agree exactly")  # from-start: the last step's, 0.01 * 20
    # reward over the first and the last two steps (a tenth of 20): the rise is read, not the mean
    assert float(got["sign"][2].split()[0]) < 0.13 < float(got["sign"][3].split()[0])
    assert got["sign"][4].startswith("30.000 (the 3 seeds agree")  # 480 tokens / 16 completions
    assert got["grpo"][5] == "—" and got["sign"][5].startswith("0.250")
    short = [x for x in md if "adam-near-eps` is not in the training log of 3 run(s)" in x]
    assert short and short[0].endswith("their arms' cells: grpo (all its runs).")
    assert got["sign"][6].startswith("0.100 (the 3 seeds agree") and got["grpo"][6].startswith("0.200")


def test_a_metrics_file_of_other_steps_is_not_read(tmp_path):
    """The truncation share lives only in the metrics file; a file whose steps are not the result's (another
    attempt's, or cut short) is not read, and the report names the run as lacking it."""
    plan = make(tmp_path / "s")
    log = next((tmp_path / "s").rglob("metrics/sign-seed1.jsonl"))
    log.write_text("".join(log.read_text().splitlines(keepends=True)[:5]))  # 5 of 20 steps
    md = step_sections(Study.load(plan))
    assert cells(md)["sign"][6].startswith("0.100 (the 2 seeds agree exactly")
    assert any(x.startswith("- `truncated` is not in the training log of 1 run(s)") and x.endswith("sign seed 1.")
               for x in md)


def test_the_table_follows_the_data(tmp_path):
    """Reversed data, reversed table: the arm with the larger gradient is the one the logs say."""
    one = cells(step_sections(Study.load(make(tmp_path / "a"))))
    two = cells(step_sections(Study.load(make(tmp_path / "b", scale={"grpo": 0.4, "sign": 0.1}))))
    assert one["sign"][0] == two["grpo"][0] and one["grpo"][0] == two["sign"][0] != one["sign"][0]


def test_steps_are_outside_the_fingerprint_and_bad_entries_are_named(tmp_path):
    with_steps = read_plan(make(tmp_path / "a"))
    without = read_plan(make(tmp_path / "b", steps=""))
    assert with_steps.analysis_fingerprint == without.analysis_fingerprint  # descriptive: no verdict reads it
    assert step_sections(Study.load(without.path)) == []
    for bad, match in (('steps = ["pass@1"]', "is read from an evaluation"),
                       ('steps = ["grad-norm", "grad-norm"]', "listed twice"),
                       ('steps = ["gradnorm"]', "unknown metric 'gradnorm'")):
        (tmp_path / "b" / "plan.toml").write_text(PLAN.format(steps=bad))
        with pytest.raises(PlanError, match=match):
            read_plan(tmp_path / "b" / "plan.toml")


RATES = """title = "Two rates"
seeds = [0, 1, 2, 3]

[base]
""" + toml_base(eval_problems=40, eval_samples=8) + """
[arms.grpo-lo]
method = "grpo"
learning_rate = 1e-4

[arms.sign-lo]
method = "sign"
learning_rate = 1e-4

[arms.grpo-hi]
method = "grpo"
learning_rate = 1e-3

[arms.sign-hi]
method = "sign"
learning_rate = 1e-3

[measures]
primary = "pass@1"

[[comparisons]]
a = "sign-lo"
b = "grpo-lo"
label = "at lo"

[[comparisons]]
a = "sign-hi"
b = "grpo-hi"
label = "at hi"

[[extremes]]
comparisons = {extreme}
label = "Largest gap"
"""


def make_rates(tmp_path, means, extreme='["at lo", "at hi"]'):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "plan.toml").write_text(RATES.format(extreme=extreme))
    shape = dict(n_problems=40, n=8)
    return write_runs(tmp_path / "plan.toml", lambda name, s, rng: dict(
        history=history(0.1, 0.2, False), eval=evaluation(rng, means[name], **shape)),
        config={**BASE, "eval_problems": 40, "eval_samples": 8}, start_shape=shape, rng_seed=3)


def test_the_largest_gap_on_each_side_is_named_with_its_familys_verdict(tmp_path):
    """Sign far ahead at the low rate, GRPO at the high one: each side's largest is named with the verdict its family
    gave it; reversed data swap them; a side no comparison reaches says so."""
    from grpo_lab.study.render import extreme_sections

    md = extreme_sections(Study.load(make_rates(tmp_path / "a", {"sign-lo": 0.8, "grpo-lo": 0.2, "sign-hi": 0.3,
                                                                  "grpo-hi": 0.6})))
    assert md[0] == "### Largest gap"
    up = next(x for x in md if x.startswith("- Largest in sign's favour"))
    down = next(x for x in md if x.startswith("- Largest in grpo's favour"))
    assert "**at lo**, +0.5" in up and up.endswith(": sign-lo ahead."), up
    assert "**at hi**, -0.3" in down and down.endswith(": grpo-hi ahead."), down
    md = extreme_sections(Study.load(make_rates(tmp_path / "b", {"sign-lo": 0.2, "grpo-lo": 0.8, "sign-hi": 0.6,
                                                                  "grpo-hi": 0.3})))
    assert "**at hi**, +0.3" in next(x for x in md if x.startswith("- Largest in sign's favour"))
    assert "**at lo**, -0.5" in next(x for x in md if x.startswith("- Largest in grpo's favour"))
    md = extreme_sections(Study.load(make_rates(tmp_path / "c", {"sign-lo": 0.7, "grpo-lo": 0.3, "sign-hi": 0.7,
                                                                  "grpo-hi": 0.3})))
    assert "- Largest in grpo's favour (sign − grpo below 0): none of the 2 read lies on this side." in md


def test_bad_extremes_are_named(tmp_path):
    for bad, match in (('["at lo"]', "at least two distinct"), ('["at lo", "at mid"]', "'at mid' is not the label"),
                       ('["at lo", "at lo"]', "at least two distinct")):
        with pytest.raises(PlanError, match=match):
            make_rates(tmp_path / "x", {}, extreme=bad)


def test_a_pages_verdict_line_says_which_way_the_largest_gaps_lay(tmp_path):
    """The verdict form a page carries (the replication page's study-4 block) ends with the extremes, from the data:
    reversed data, reversed line."""
    from grpo_lab.study.render import verdict_line

    one = verdict_line(Study.load(make_rates(tmp_path / "a", {"sign-lo": 0.8, "grpo-lo": 0.2, "sign-hi": 0.3,
                                                                "grpo-hi": 0.6})), "R.md")
    assert " Largest gap: in sign's favour, at lo +0.5" in one and "; in grpo's favour, at hi -0.3" in one, one
    two = verdict_line(Study.load(make_rates(tmp_path / "b", {"sign-lo": 0.2, "grpo-lo": 0.5, "sign-hi": 0.2,
                                                                "grpo-hi": 0.8})), "R.md")
    tail = two.split(" Largest gap: ")[1]
    assert tail.startswith("in sign's favour, none; in grpo's favour, at hi -0.6") and tail.endswith("(grpo-hi ahead).")


def test_every_runs_metrics_file_is_read_for_the_truncation_check(tmp_path):
    """Issue 80: every report carries the truncation share (a design check), read from each run's metrics file, so
    the file is read beside every result, whether or not the plan's own measures come from the training log (it
    was read only for those before); a run without one says why a log-only quantity is missing."""
    with_steps, without = Study.load(make(tmp_path / "a")), Study.load(make(tmp_path / "b", steps=""))
    assert read_plan(with_steps.plan.path).reads_training_log and not without.plan.reads_training_log
    assert all("log" in r for s in (with_steps, without) for a in s.data.values() for r in a.runs.values())
    f = next(iter(without.data.values())).run_dir[0] / "metrics"
    for x in f.glob("*.jsonl"):
        x.unlink()
    gone = Study.load(without.plan.path)
    assert all("log" not in r and "no metrics file" in r["log_problem"] for a in gone.data.values()
               for r in a.runs.values())


def test_what_each_run_must_give_is_chosen_by_what_a_read_is_not_by_which_object_it_holds(tmp_path):
    """`plan_measures` leaves out the steps table's and the manipulation check's reads by their kind: a measure
    object shared by the primary read and a manipulation read is still one that every run must give."""
    from grpo_lab.study.data import plan_measures
    from grpo_lab.study.plan import Read

    plan = read_plan(make(tmp_path))
    kinds = {r.kind for r in plan.reads}
    assert {"measures", "steps"} <= kinds <= {"measures", "steps", "comparison", "selection", "curve",
                                               "manipulation", "correlation"}
    assert all(r.measure.metric.source != "history" for r in plan.reads if r.kind != "steps")
    primary = plan.primary
    plan.reads = [Read(primary, ["sign"], "w", "measures"), Read(primary, ["sign"], "w", "manipulation")]
    plan.manipulation = {"sign": primary}
    assert [m.text for m in plan_measures(plan)] == [primary.text]
    plan.reads = plan.reads[1:]
    assert plan_measures(plan) == []


def test_the_data_output_carries_each_runs_steps_as_the_table_reads_them(tmp_path):
    """A lesson reads the steps table's quantities from the study's data output (study 7's sole and shared
    successes, lesson 14): each run's value, the one the table averages; None where the log lacks it; reversed
    data, reversed values."""
    import numpy as np

    from grpo_lab.study import data_values
    from grpo_lab.study.render import study_data

    one, two = (Study.load(make(tmp_path / k, scale=sc)) for k, sc in (("a", None), ("b", {"grpo": 0.4, "sign": 0.1})))
    data = study_data(one)
    assert data["steps"] == ["grad-norm", "from-start", "reward-first", "reward-last", "length", "adam-near-eps",
                             "truncated"]
    table = cells(step_sections(one))
    for arm in ("grpo", "sign"):
        got = data_values(data, arm, "grad-norm")
        assert len(got) == 3 and table[arm][0].startswith(f"{np.mean(got):.3f} [")
        assert data_values(data, arm, "truncated") == pytest.approx([0.1 if arm == "sign" else 0.2] * 3)
    assert data_values(data, "grpo", "adam-near-eps") == [None] * 3  # grpo's log lacks it: the table's "—"
    assert data_values(data, "sign", "adam-near-eps") == pytest.approx([0.25] * 3)
    assert data_values(data, "sign", "pass@1") == [data["arms"]["sign"]["seeds"][s]["pass@1"] for s in "012"]
    reversed_ = study_data(two)
    assert data_values(reversed_, "grpo", "grad-norm") == pytest.approx(data_values(data, "sign", "grad-norm"))
    with pytest.raises(KeyError, match="grad-norms: the data hold pass@1; steps: grad-norm, from-start"):
        data_values(data, "grpo", "grad-norms")
