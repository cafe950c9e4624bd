"""Issue 61, item 5: a comparison says, after its first run's first steps, how long it will take on this machine
and what to pass for a shorter one (a --quick run took 7 minutes on one machine and over 15 on another)."""

import re

import numpy as np

from grpo_lab.compare import pace_line


def test_the_pace_line_is_read_from_the_measured_steps():
    line = pace_line(6.0, 2.0, steps=8, runs_left=4, eval_s=30.0, where="CPU, 1 torch thread(s), float32")
    assert "first step 6.0 s, then 2.0 s a step" in line and "CPU, 1 torch thread(s), float32" in line
    assert "about 20 s of training per run and 30 s of evaluation" in line  # 6 + 7 x 2 = 20
    assert "about 3 min for the 4 runs left, training and evaluation" in line  # (20 + 30) x 4 = 200 s
    assert "Shorter" not in line  # under ten minutes: nothing to cut


def test_the_pace_line_changes_with_the_data_and_says_what_to_cut_when_long():
    slow = pace_line(60.0, 20.0, steps=64, runs_left=8, eval_s=None, where="CPU")
    assert "about 22 min of training per run" in slow  # 60 + 63 x 20 = 1,320 s
    assert "evaluation not included" in slow and "about 176 min for the 8 runs left" in slow
    assert "--steps 32 halves the training" in slow
    fast = pace_line(0.5, 0.1, steps=64, runs_left=8, eval_s=1.0, where="CPU")
    assert fast != slow and "Shorter" not in fast
    one = pace_line(3.0, None, steps=1, runs_left=1, eval_s=2.0, where="CPU")
    assert "then" not in one and "for the 1 run left" in one


def test_a_quick_comparison_prints_its_pace_once(tmp_path, capsys):
    from grpo_lab.cli import main

    assert main(["compare", "--quick", "--steps", "3", "--seeds", "0", "--out", str(tmp_path), "--no-progress"]) == 0
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith("pace on this machine")]
    assert len(lines) == 1, lines
    first, then = map(float, re.search(r"first step ([\d.]+) s, then ([\d.]+) s a step", lines[0]).groups())
    # the line rounds to 0.1 s: a later step under 0.05 s (a fast machine) prints 0.0, which is a pace, not a bug
    assert first > 0 and then >= 0 and "for the 2 runs left" in lines[0]  # --quick: grpo and sign, one seed
    assert "of evaluation (as long as the start's took here)" in lines[0]


def test_a_study_workers_pace_counts_the_runs_shared_and_gives_no_flags():
    """``study run --workers 2``: each worker's line divides the runs left between the workers, and names no flag
    (a plan fixes its runs; cutting them is a deviation, not an option)."""
    one = pace_line(60.0, 20.0, steps=64, runs_left=8, eval_s=600.0, where="CPU")
    two = pace_line(60.0, 20.0, steps=64, runs_left=8, eval_s=600.0, where="CPU", workers=2, advice=False)
    assert "about 256 min for the 8 runs left, training" in one  # (1,320 + 600) x 8 = 15,360 s
    assert "about 128 min for the 8 runs left across 2 workers" in two and "Shorter" not in two


def test_short_forecasts_say_seconds_not_zero_minutes():
    """A profile's pace and pilot lines once printed "about 0 min" for a forecast of under half a minute; every pace
    line now says a time under a minute and a half in seconds (grpo_lab.report.duration)."""
    from grpo_lab.config import RunConfig
    from grpo_lab.profile import _pace_line, _pilot_line
    from grpo_lab.report import duration

    assert [duration(s) for s in (0.04, 0.4, 9.6, 40, 89.4, 90, 600)] == ["under 0.1 s", "0.4 s", "9.6 s", "40 s", "89 s",
                                                                        "2 min", "10 min"]  # issue 81: not "0 s"
    cfg = RunConfig(eval_samples=8)
    pace = _pace_line(8.0, 8, 4, cfg, 1, "float32", 400)  # 1 s a problem, 4 left
    assert "about 4.0 s for the 4 problems left" in pace and "0 min" not in pace
    assert "float32: the default" in pace  # issue 81: the dtype that ran, and why
    pilot = _pilot_line(1.5, 8, cfg, 1, "float32")
    assert "will take about 12 s" in pilot and "0.2 min" not in pilot and "at most" not in pilot
    assert "will take about 20 min" in _pilot_line(150.0, 8, cfg, 1, "float32")


def test_a_rank_probe_s_slower_steps_are_counted_as_probed_not_as_every_step():
    """Study 6's runs probe their first and last 6 steps of 64, each about 3 times an unprobed step: a forecast
    from the first two steps said 111 min of training for a run that trained in 35. The probed steps are counted
    at their own pace and the rest at an unprobed step's."""
    plain = pace_line(100.0, 90.0, steps=64, runs_left=1, eval_s=None, where="CPU")
    probed = pace_line(100.0, 36.0, steps=64, runs_left=1, eval_s=None, where="CPU", probed=(12, 90.0))
    assert "about 96 min of training per run" in plain  # 100 + 63 x 90 = 5,770 s
    assert "about 49 min of training per run" in probed  # 100 + 11 x 90 + 52 x 36 = 2,962 s
    assert "the rank probe's other 11 steps 90.0 s each, then 36.0 s a step" in probed


def _drive(cfg, gaps):
    """The pace callback of ``cfg`` over steps of the given lengths (a fake clock), and the lines it echoed."""
    from grpo_lab.compare import pace_callback

    clock = iter(np.cumsum([0.0, *gaps]))
    said = []
    cb = pace_callback(cfg, 1, None, said.append, clock=lambda: float(next(clock)))
    for _ in gaps:
        cb.on_step_begin(None, None, None)
        cb.on_step_end(None, None, None)
    return said


def test_the_pace_callback_waits_for_an_unprobed_step_under_a_rank_probe():
    from grpo_lab.config import RunConfig

    base = RunConfig(policy="tiny-lm", steps=10, rank_probe=3)  # probed: steps 0-2 and 7-9
    said = _drive(base, [10.0, 8.0, 8.0, 2.0, 2.0, 2.0, 2.0, 8.0, 8.0, 8.0])
    assert len(said) == 1 and "first step 10.0 s, the rank probe's other 5 steps 8.0 s each, then 2.0 s a step" \
        in said[0] and "about 58 s of training per run" in said[0]  # 10 + 5 x 8 + 4 x 2 = 58
    said = _drive(RunConfig(policy="tiny-lm", steps=10), [10.0, 8.0, 8.0, 2.0])
    assert len(said) == 1 and "first step 10.0 s, then 8.0 s a step" in said[0]  # no probe: after step 2 as before
    said = _drive(RunConfig(policy="tiny-lm", steps=4, rank_probe=2), [10.0, 8.0, 8.0, 8.0])
    assert len(said) == 1 and "then 8.0 s a step" in said[0] and "probe" not in said[0]  # every step probed
