"""Issue 11, item 4: pass@k and `grpo-lab inspect` edges get clear errors (each reproduction is a test)."""

import json
import os

import numpy as np
import pytest

from grpo_lab import cli
from grpo_lab.diagnose import LogFormatError, read_log
from grpo_lab.passk import maj_at_k, naive_best_of_k, pass_at_k_curve


def test_pass_at_k_curve_refuses_fractional_k():
    with pytest.raises(TypeError, match="k"):
        pass_at_k_curve([8, 8], [1, 2], ks=[1.7])


def test_pass_at_k_curve_refuses_empty_ks_and_zero_boot():
    with pytest.raises(ValueError, match="ks is empty"):
        pass_at_k_curve([8, 8], [1, 2], ks=[])
    with pytest.raises(ValueError, match="n_boot"):
        pass_at_k_curve([8, 8], [1, 2], ks=[1, 2], n_boot=0)
    with pytest.raises(ValueError, match="confidence"):
        pass_at_k_curve([8, 8], [1, 2], ks=[1], confidence=float("nan"))


def test_pass_at_k_curve_accepts_numpy_integer_ks():
    curve = pass_at_k_curve([8, 8], [1, 2], ks=np.array([1, 4]))
    assert curve.ks.tolist() == [1, 4]


def test_maj_at_k_refuses_zero_resamples():
    with pytest.raises(ValueError, match="n_resamples"):
        maj_at_k([["1", "2", "1"]], ["1"], k=2, n_resamples=0)


def test_naive_best_of_k_refuses_bad_k():
    with pytest.raises(ValueError, match="k"):
        naive_best_of_k([[1, 0]], k=0)


def _jsonl(path, rows):
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_inspect_rows_missing_keys_is_an_error_not_an_empty_report(tmp_path, capsys):
    log = _jsonl(tmp_path / "metrics.jsonl", [{"starvation/acr": None}, {"starvation/acr": 0.5}])
    with pytest.raises(LogFormatError, match="no row has both a step and a finite degenerate fraction"):
        read_log(log)
    with pytest.raises(SystemExit) as e:
        cli.main(["inspect", str(log)])
    assert e.value.code == 2
    assert "no row has both" in capsys.readouterr().err


def test_inspect_warns_about_rows_that_lack_keys(tmp_path, capsys):
    rows = [{"step": i, "starvation/acr": 0.5, "reward": 0.3} for i in range(1, 5)] + [{"starvation/acr": 0.4}]
    log = _jsonl(tmp_path / "metrics.jsonl", rows)
    assert cli.main(["inspect", str(log)]) == 0
    err = capsys.readouterr().err
    assert "warning: 1 of 5 rows lack a step" in err
    assert "warning: 1 of 5 rows lack a mean reward" in err
    report = (tmp_path / "starvation" / "report.md").read_text()
    assert "**Warning:** 1 of 5 rows lack a step" in report


def test_inspect_histogram_with_a_string_is_a_clear_error(tmp_path):
    log = _jsonl(tmp_path / "metrics.jsonl",
                 [{"step": 1, "starvation/acr": 0.5, "starvation/success_hist": [1, "x", 2, 0, 1]}])
    with pytest.raises(LogFormatError, match="line 1: 'starvation/success_hist' must be a list"):
        read_log(log)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this OS")
def test_inspect_does_not_hang_on_a_fifo(tmp_path):
    fifo = tmp_path / "metrics.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(LogFormatError, match="not a regular file"):
        read_log(fifo)
