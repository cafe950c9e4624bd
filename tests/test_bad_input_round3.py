"""Issue 28's smaller findings, one test each: a switch given as a string, a numpy probability, a flat answer list."""

import numpy as np
import pytest
import torch

import grpo_lab as gl
from grpo_lab.config import RunConfig, check_sampling
from grpo_lab.passk import maj_at_k

MIXED = torch.tensor([0.0, 1, 0, 0, 1, 1, 1, 1])


@pytest.mark.parametrize("method", ["grpo", "dapo", "avspo", "avspo_code"])
@pytest.mark.parametrize("bad", ["False", "no", 0, 1, None])
def test_unbiased_must_be_a_bool_not_anything_truthy(method, bad):
    # "False" used to count as True: Bessel's correction silently on
    with pytest.raises(TypeError, match="unbiased must be True or False"):
        gl.compute_advantages(MIXED, 4, method, unbiased=bad)


def test_unbiased_takes_numpy_bools_as_bools():
    for flag in (False, True):
        torch.testing.assert_close(gl.compute_advantages(MIXED, 4, "grpo", unbiased=np.bool_(flag)),
                                   gl.compute_advantages(MIXED, 4, "grpo", unbiased=flag))
    assert not torch.equal(gl.compute_advantages(MIXED, 4, "grpo", unbiased=False),
                           gl.compute_advantages(MIXED, 4, "grpo", unbiased=True))


@pytest.mark.parametrize("p", [np.float32(0.5), np.float64(0.25), 0.5, 0])
def test_skip_prob_takes_any_real_number_type(p):
    check_sampling(skip_prob=p)
    assert RunConfig(skip_prob=p).validate().skip_prob == p


@pytest.mark.parametrize("p", [1, 1.0, -0.1, float("nan"), "0.5", True, np.float32(1.5)])
def test_skip_prob_out_of_range_or_not_a_number_is_named(p):
    with pytest.raises(ValueError, match=r"skip_prob must be a number in \[0, 1\)"):
        check_sampling(skip_prob=p)


def test_maj_at_k_refuses_a_flat_answer_list():
    # a flat list used to be read as problems whose samples are characters: [0.] and no error
    with pytest.raises(ValueError, match=r"answers\[0\] is str '72', not a list of one problem's sampled answers"):
        maj_at_k(["72", "5"], ["72", "5"], 1)
    assert maj_at_k([["72"], ["5"]], ["72", "6"], 1).tolist() == [1.0, 0.0]


def test_a_refused_compare_leaves_no_run_directory(tmp_path, capsys):
    from grpo_lab import cli

    # refused inside write_config, after the timestamped directory was made
    with pytest.raises(SystemExit):
        cli.main(["compare", "--policy", "tabular", "--estimators", "dapo", "--no-progress", "--out", str(tmp_path)])
    assert "the tabular simulator has none" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
    assert cli.main(["compare", "--policy", "tabular", "--estimators", "grpo", "--seeds", "0", "--steps", "2",
                     "--no-progress", "--out", str(tmp_path)]) == 0
    assert len(list(tmp_path.iterdir())) == 1  # an accepted one keeps its directory
