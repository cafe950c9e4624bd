"""Issue 21: grpo-lab profile: the numbers (pure), the report, resume, and bad input."""

from math import comb

import numpy as np
import pytest

from grpo_lab.cli import main
from grpo_lab.profile import read_profile, summarize


def test_summarize_is_unbiased_and_splits_fail_and_pass():
    n, c = 8, np.array([0, 0, 2, 8, 4])
    s = summarize(n, c)
    for G in (2, 4, 8):
        want_fail = np.mean([comb(n - k, G) / comb(n, G) for k in c])
        want_pass = np.mean([comb(k, G) / comb(n, G) for k in c])
        d = s["degenerate"][G]
        assert d["all_fail"] == pytest.approx(want_fail) and d["all_pass"] == pytest.approx(want_pass)
        assert d["real"] == pytest.approx(want_fail + want_pass) and d["lo"] <= d["real"] <= d["hi"]
        pbar = c.mean() / n
        assert d["iid"] == pytest.approx(pbar ** G + (1 - pbar) ** G)
    assert 16 not in s["degenerate"]  # G > n cannot be estimated from n samples
    assert s["never_solved"] == 0.4 and s["always_solved"] == 0.2
    # 3 of 5 problems are all-fail or all-pass at every G: never half the groups mixed
    assert s["smallest_G_for_share"] is None


def brute_smallest_G(n, c, share):
    for G in range(2, n + 1):
        mixed = np.mean([1 - (comb(n - k, G) + comb(k, G)) / comb(n, G) for k in c])
        if mixed >= share:
            return G
    return None


@pytest.mark.parametrize("c, share", [([1, 2, 1, 0, 3], 0.5), ([1, 1, 1, 1], 0.3), ([1, 1, 1, 1], 0.9),
                                      ([0, 0, 0], 0.5), ([4, 4], 0.5)])
def test_smallest_G_for_a_share_of_informative_groups(c, share):
    assert summarize(16, c, share)["smallest_G_for_share"] == brute_smallest_G(16, c, share)


@pytest.mark.parametrize("args, match", [
    (["--samples", "1"], "samples must be >= 2"),
    (["--policy", "tabular"], "samples no text"),
    (["--task", "gym:nope"], "unknown reasoning-gym dataset"),
    (["--problems", "0"], "eval_problems must be"),
])
def test_bad_profile_options_are_clear_errors(tmp_path, capsys, args, match):
    with pytest.raises(SystemExit) as e:
        main(["profile", "--out", str(tmp_path), "--no-progress", *args])
    assert e.value.code == 2 and match in capsys.readouterr().err


def test_profile_writes_a_report_and_resumes_to_the_same_numbers(tmp_path, capsys):
    args = ["profile", "--out", str(tmp_path), "--problems", "20", "--samples", "4", "--no-progress"]
    assert main(args) == 0
    out = next(tmp_path.glob("profile-*"))
    report = (out / "report.md").read_text()
    assert "smallest G" in report and "arXiv 2605.07689" in report and (out / "profile.png").stat().st_size > 5000
    full = read_profile(out)
    assert full["n_problems"] == 20 and set(full["degenerate"]) == {"2", "4"}
    said = capsys.readouterr().out  # after the first of two chunks: the pace here and the time left (issue 61)
    assert said.count("pace on this machine") == 1 and "for the 4 problems left" in said and "--problems N" in said
    # an interruption after the first chunk, then a resume: the same numbers
    chunks = sorted((out / "chunks").glob("*.json"))
    assert len(chunks) == 2
    chunks[1].unlink()
    (out / "report.md").unlink()
    chunks[0].write_text("{broken")
    assert main(["profile", "--resume", str(out), "--no-progress"]) == 0
    said = capsys.readouterr().out
    assert "damaged" in said and "moved aside" in said and (out / "chunks" / "0000.json.damaged").is_file()
    assert read_profile(out)["degenerate"] == full["degenerate"]
    with pytest.raises(SystemExit):
        main(["profile", "--resume", str(out), "--samples", "8"])


def test_profile_advises_from_its_own_numbers(tmp_path, capsys):
    """Issue 27: a "What to do" section (group size and its cost, dynamic sampling's exact cost, the truncation
    rate), a progress bar that ends at 100% on a short last chunk, and no "-0.000"."""
    from grpo_lab.starvation import dynamic_sampling_rounds

    assert main(["profile", "--out", str(tmp_path), "--problems", "20", "--samples", "4"]) == 0
    err = capsys.readouterr().err
    assert "20/20" in err and "100%" in err  # 20 problems = a chunk of 16 and one of 4
    out = next(tmp_path.glob("profile-*"))
    report = (out / "report.md").read_text()
    prof = read_profile(out)
    todo = report.split("## What to do")[1].split("## Beside")[0]
    assert "**Group size**" in todo and "**Dynamic sampling**" in todo and "**Truncation**" in todo
    D = prof["degenerate"]["4"]["real"]
    assert f"about {dynamic_sampling_rounds(D, 16, 8):.2f} rounds" in todo
    assert 0 <= prof["truncated"] <= 1 and f"{prof['truncated']:.1%} of completions were cut at 6 new tokens" in todo
    assert "-0.000" not in report


def test_advice_says_when_a_task_is_out_of_reach_and_when_truncation_is_high():
    from grpo_lab.profile import _signed, advice

    hopeless = summarize(16, [0] * 95 + [1] * 5)
    hopeless.update(truncated=0.4, truncated_wrong=0.4)
    text = " ".join(advice(hopeless, 64))
    assert "**Out of reach**" in text and "cannot learn this task by RL from here" in text
    assert "raise `--max-new-tokens`" in text  # 40% cut at the limit
    regime = summarize(16, [0] * 30 + [4] * 40 + [12] * 30)
    assert "**Out of reach**" not in " ".join(advice(regime, 32))
    # issue 49: a learnable task gets the advice on comparing estimators fairly; a hopeless one does not need it
    assert "**Comparing estimators on this task**" in " ".join(advice(regime, 32)) and "own best rate" in \
        " ".join(advice(regime, 32))
    assert "**Comparing estimators" not in text
    assert _signed(-0.0001) == "+0.000" and _signed(-0.02) == "-0.020" and _signed(0.0) == "+0.000"


@pytest.mark.parametrize("damage", ["short", "booleans", "no seconds", "count above n"])
def test_a_damaged_chunk_is_sampled_again_and_a_stale_one_is_not_read(tmp_path, capsys, damage):
    """Issue 28: profile --resume validates each chunk (counts, types, problem count, seconds) and never folds a
    short, boolean or stale chunk into the report."""
    import json

    assert main(["profile", "--out", str(tmp_path), "--problems", "20", "--samples", "4", "--no-progress"]) == 0
    out = next(tmp_path.glob("profile-*"))
    full = read_profile(out)
    first = out / "chunks" / "0000.json"
    data = json.loads(first.read_text())
    {"short": lambda d: d.update(correct=d["correct"][:5]),
     "booleans": lambda d: d.update(correct=[bool(c) for c in d["correct"]]),
     "no seconds": lambda d: d.pop("seconds"),
     "count above n": lambda d: d["correct"].__setitem__(0, 9)}[damage](data)
    first.write_text(json.dumps(data))
    (out / "chunks" / "0005.json").write_text(json.dumps({**data, "correct": [4] * 16}))  # from a larger profile
    (out / "report.md").unlink()
    capsys.readouterr()
    assert main(["profile", "--resume", str(out), "--no-progress"]) == 0
    assert "0000.json is damaged" in capsys.readouterr().out
    again = read_profile(out)
    assert again["n_problems"] == 20 and again["degenerate"] == full["degenerate"]


def test_a_bad_share_is_refused_before_anything_is_made(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["profile", "--out", str(tmp_path), "--share", "1.5"])
    assert "--share must lie strictly between 0 and 1" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_the_dynamic_sampling_advice_says_which_way_the_naive_guess_errs():
    """The profile's advice said the naive 1/(1 - D) "underestimates" the rounds even where it was larger (8.48
    against 7.63 at D = 0.88, where the cap of 8 rounds binds): it now says which way it errs, from the numbers."""
    from grpo_lab.profile import advice

    def line(D):
        s = {"degenerate": {4: {"real": D, "all_fail": D / 2}}, "share": 0.5, "smallest_G_for_share": 8,
             "n_samples": 8, "never_solved": 0.1}
        return next(x for x in advice(s, 32) if x.startswith("**Dynamic sampling**"))

    assert "2.56 underestimates it" in line(0.61)
    high = line(0.88)
    assert "8.33 overestimates it here, since the cap of 8 rounds binds" in high and "underestimates" not in high


def test_a_profile_resumes_where_the_dtype_is_the_checkpoints_own(tmp_path, capsys, monkeypatch):
    """On a GPU, dtype=None resolves to "default" (the checkpoint's own dtype) while a chunk records the dtype the
    weights were loaded in: a resume compared the two and was refused every time (found on an H100, 2026-11-26).
    The check now reads the loaded dtype in that case, and still refuses a profile sampled in another one."""
    import json

    import grpo_lab.profile as profile

    assert main(["profile", "--out", str(tmp_path), "--problems", "20", "--samples", "4", "--no-progress"]) == 0
    out = next(tmp_path.glob("profile-*"))
    full = read_profile(out)
    monkeypatch.setattr(profile, "run_dtype", lambda cfg, train=True: ("default", "a GPU, simulated"))
    (out / "chunks" / "0001.json").unlink()
    (out / "report.md").unlink()
    assert main(["profile", "--resume", str(out), "--no-progress"]) == 0
    assert read_profile(out)["degenerate"] == full["degenerate"] and read_profile(out)["dtype"] == ["float32"]
    first = out / "chunks" / "0000.json"
    first.write_text(json.dumps({**json.loads(first.read_text()), "dtype": "bfloat16"}))
    (out / "chunks" / "0001.json").unlink()
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["profile", "--resume", str(out), "--no-progress"])
    err = capsys.readouterr().err
    assert "sampled with dtype bfloat16" in err and "loads the weights in float32" in err


def test_a_one_chunk_profile_forecasts_its_time_from_a_pilot_that_changes_no_sample(tmp_path, capsys, monkeypatch):
    """Issue 61, item 5: --quick's 8 problems are one chunk, so no pace could be said before the end; a pilot of one
    problem says it first. Every sampler call reseeds, so the profile's numbers are those of a profile without it."""
    import grpo_lab.profile as prof

    args = ["profile", "--problems", "8", "--samples", "4", "--no-progress"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    said = capsys.readouterr().out
    assert "pilot on this machine" in said and "the 8 problems will take about" in said
    monkeypatch.setattr(prof, "PILOT", False)
    assert main([*args, "--out", str(tmp_path / "b")]) == 0
    assert "pilot" not in capsys.readouterr().out
    a, b = (read_profile(next((tmp_path / x).glob("profile-*"))) for x in "ab")
    assert a["degenerate"] == b["degenerate"] and a["pass_at_k"] == b["pass_at_k"]


def test_a_small_profile_opens_with_a_smoke_banner(tmp_path):
    """Issue 81: a --quick profile read 8 problems as 0.938 [0.790, 1.000] without a word; a profile of fewer than
    SMOKE_PROBLEMS problems now says it is a smoke run, and one of more does not."""
    from grpo_lab.profile import SMOKE_PROBLEMS

    assert main(["profile", "--out", str(tmp_path / "a"), "--problems", "20", "--samples", "4", "--no-progress"]) == 0
    small = (next((tmp_path / "a").glob("profile-*")) / "report.md").read_text()
    assert 20 < SMOKE_PROBLEMS and "**A smoke profile**: 20 problems × 4 samples" in small
    assert small.index("**A smoke profile**") < small.index("## Settings")
    assert main(["profile", "--out", str(tmp_path / "b"), "--problems", str(SMOKE_PROBLEMS), "--samples", "2",
                 "--no-progress"]) == 0
    assert "smoke profile" not in (next((tmp_path / "b").glob("profile-*")) / "report.md").read_text()


@pytest.mark.parametrize("bf16, want", [(True, "bfloat16"), (False, "float32")])
def test_the_quick_commands_take_the_cpus_fast_path_and_say_why(bf16, want):
    """Issue 81: profile --quick and compare --quick ask for dtype "auto": bfloat16 on a CPU with bf16 units,
    float32 on one without, each saying why; a study keeps the dtype its plan declares (its base, not --quick)."""
    from grpo_lab.cli import PROFILE_QUICK, QUICK, QUICK_REAL
    from grpo_lab.policy import resolve_dtype

    assert PROFILE_QUICK["dtype"] == QUICK["dtype"] == QUICK_REAL["dtype"] == "auto"
    dtype, why = resolve_dtype("auto", "smollm2", None, train=False, cuda=False, bf16=bf16)
    assert dtype == want and why
    if not bf16:
        assert "no native bfloat16" in why
    dtype, why = resolve_dtype("auto", "smollm2", 16, train=True, cuda=False, bf16=bf16)  # compare --quick: LoRA 16
    assert dtype == want
