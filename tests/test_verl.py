"""grpo_lab.verl (issue 30): grpo-lab's estimators in verl's registry, parity with verl's own, verl's own path."""

import subprocess
import sys

import numpy as np
import pytest
import torch

pytest.importorskip("verl", reason="verl is installed by the README's set-up (pip install --no-deps verl==0.9.1)")

from verl import DataProto  # noqa: E402
from verl.trainer.ppo import core_algos  # noqa: E402
from verl.trainer.ppo.ray_trainer import compute_advantage  # noqa: E402

import grpo_lab  # noqa: E402
import grpo_lab.verl as gv  # noqa: E402

G, T = 4, 6


def batch(rewards, seed=0, shuffle=True):
    """verl's inputs for flat rewards grouped by G: token rewards (the reward on a row's last response token),
    a response mask of varying length, and prompt uids; rows shuffled so that no group is contiguous."""
    r = torch.as_tensor(rewards, dtype=torch.float32)
    n = len(r)
    gen = torch.Generator().manual_seed(seed)
    length = torch.randint(1, T + 1, (n,), generator=gen)
    mask = (torch.arange(T).unsqueeze(0) < length.unsqueeze(1)).float()
    tlr = torch.zeros(n, T)
    tlr[torch.arange(n), length - 1] = r
    uids = np.array([f"prompt-{i // G}" for i in range(n)], dtype=object)
    perm = torch.randperm(n, generator=gen) if shuffle else torch.arange(n)
    return tlr[perm], mask[perm], uids[perm.numpy()], r[perm], perm


def rewards_cases():
    rng = np.random.default_rng(0)
    return {"binary": rng.integers(0, 2, 40).astype(float), "degenerate": np.repeat([0.0, 1.0, 0.0, 1.0, 0.0], G),
            "graded": rng.uniform(-2, 3, 40)}


@pytest.mark.parametrize("case", ["binary", "degenerate", "graded"])
def test_grpo_drgrpo_rloo_equal_verls_own_with_shuffled_uids(case):
    tlr, mask, uids, _, _ = batch(rewards_cases()[case])
    pairs = {"grpo": (core_algos.compute_grpo_outcome_advantage(tlr, mask, uids), {"eps": 1e-6}),  # verl's epsilon
             "drgrpo": (core_algos.compute_grpo_outcome_advantage(tlr, mask, uids, norm_adv_by_std_in_grpo=False), {}),
             "rloo": (core_algos.compute_rloo_outcome_advantage(tlr, mask, uids), {})}
    for method, ((theirs, _), options) in pairs.items():
        ours, returns = gv.outcome_advantages(tlr, mask, uids, method, **options)
        torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5, msg=method)  # float32 rounding
        assert ours is returns and bool((ours[mask == 0] == 0).all())


@pytest.mark.parametrize("case", ["binary", "degenerate", "graded"])
def test_gpg_verl_equals_verls_own_gpg(case):
    """verl's gpg (alpha = batch size over the count of non-zero rewards) is grpo-lab's gpg_verl; grpo-lab's gpg
    (the paper's B / (B - M)) differs from it wherever those counts differ."""
    tlr, mask, uids, r, _ = batch(rewards_cases()[case])
    theirs, _ = core_algos.compute_gpg_outcome_advantage(tlr, mask, uids)
    ours, _ = gv.outcome_advantages(tlr, mask, uids, "gpg_verl")
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5)
    if case == "binary":
        paper, _ = gv.outcome_advantages(tlr, mask, uids, "gpg")
        assert not torch.allclose(paper, theirs)


@pytest.mark.parametrize("name", ["grpo_lab.sign", "grpo_lab.avspo", "grpo_lab.avspo_code", "grpo_lab.dapo",
                                  "grpo_lab.gpg", "grpo_lab.maxrl"])
def test_verls_own_compute_advantage_gives_grpo_labs_advantages(name):
    gv.reset_state()
    r = rewards_cases()["binary"]
    tlr, mask, uids, _, perm = batch(r)
    data = DataProto.from_dict(tensors={"token_level_rewards": tlr, "response_mask": mask},
                               non_tensors={"uid": uids})
    out = compute_advantage(data, adv_estimator=name, num_repeat=G).batch["advantages"]
    method = name.split(".", 1)[1]
    want = grpo_lab.compute_advantages(torch.as_tensor(r, dtype=torch.float32), G, method)  # contiguous groups
    got = out.sum(dim=1) / mask.sum(dim=1)  # each row's advantage, constant over its response tokens
    torch.testing.assert_close(got, want[perm], rtol=1e-6, atol=1e-6)  # row j of the batch is row perm[j]
    assert bool((out[mask == 0] == 0).all())


def test_the_plugin_is_loaded_by_verl_itself():
    code = ("import verl\nfrom verl.trainer.ppo import core_algos\n"
            "print(sorted(k for k in core_algos.ADV_ESTIMATOR_REGISTRY if k.startswith('grpo_lab.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert ("['grpo_lab.avspo', 'grpo_lab.avspo_code', 'grpo_lab.dapo', 'grpo_lab.gpg', 'grpo_lab.grpo_near', "
            "'grpo_lab.maxrl', 'grpo_lab.sign']") in out.stdout


def test_bad_input_is_named():
    tlr, mask, uids, _, _ = batch([0.0, 1, 0, 0, 1, 1, 0, 1])
    with pytest.raises(ValueError, match="unknown grpo-lab estimator 'nope'"):
        gv.register_with_verl("nope")
    tlr16, mask16, uids16, _, _ = batch([0.0, 1, 0, 0] * 4)
    uneven = uids16.copy()
    uneven[np.flatnonzero(uneven == "prompt-3")[0]] = "prompt-x"  # one response of prompt 3 under another uid
    with pytest.raises(ValueError, match=r"groups of unequal size under one uid: most uids have 4 rows, but "
                                         r"(?=.*uid 'prompt-3' has 3)(?=.*uid 'prompt-x' has 1)"):
        gv.outcome_advantages(tlr16, mask16, uneven, "sign")
    graded = tlr * 0.5
    with pytest.raises(ValueError, match="0/1"):
        core_algos.get_adv_estimator_fn("grpo_lab.sign")(graded, mask, index=uids)
    with pytest.raises(ValueError, match="needs the prompt uid"):
        core_algos.get_adv_estimator_fn("grpo_lab.sign")(tlr, mask)


def test_a_users_own_estimator_joins_verl():
    grpo_lab.register_estimator("halfsign_test", lambda r, G, **kw: torch.as_tensor(r) - 0.5)
    try:
        name = gv.register_with_verl("halfsign_test")
        tlr, mask, uids, r, _ = batch([0.0, 1, 0, 0, 1, 1, 0, 1])
        adv, _ = core_algos.get_adv_estimator_fn(name)(tlr, mask, index=uids)
        torch.testing.assert_close(adv.sum(1) / mask.sum(1), r - 0.5)
    finally:
        core_algos.ADV_ESTIMATOR_REGISTRY.pop("grpo_lab.halfsign_test", None)
        grpo_lab.advantages._REGISTRY.pop("halfsign_test", None)


def test_options_come_from_verls_algorithm_config():
    from omegaconf import OmegaConf

    tlr, mask, uids, r, _ = batch([0.2, 0.9, 0.1, 0.7, 0.6, 0.8, 0.9, 0.95])
    config = OmegaConf.create({"adv_estimator": "grpo_lab.sign", "grpo_lab_options": {"sign": {"threshold": 0.5}}})
    adv, _ = core_algos.get_adv_estimator_fn("grpo_lab.sign")(tlr, mask, index=uids, config=config)
    torch.testing.assert_close(adv.sum(1) / mask.sum(1), torch.where(r > 0.5, 1.0, -1.0))


def test_avspos_threshold_adapts_across_verls_steps():
    """verl calls the estimator once per training step in its driver process: one controller per verl name keeps
    AVSPO's threshold moving (threshold <- (1 - ema) * threshold + ema * ACR) until reset_state()."""
    from omegaconf import OmegaConf

    gv.reset_state()
    fn = core_algos.get_adv_estimator_fn("grpo_lab.avspo")
    config = OmegaConf.create({"grpo_lab_options": {"avspo": {"threshold": 0.5, "ema": 0.5}}})
    tlr, mask, uids, _, _ = batch([0.0] * 12 + [1.0, 0, 0, 0])  # ACR 0.75
    for want in (0.625, 0.6875):
        fn(tlr, mask, index=uids, config=config)
        assert gv._CONTROLLERS["grpo_lab.avspo"].threshold == pytest.approx(want)
    gv.reset_state()
    fn(tlr, mask, index=uids, config=config)
    assert gv._CONTROLLERS["grpo_lab.avspo"].threshold == pytest.approx(0.625)


def _verl_log(path, with_filter: bool, steps: int = 6):
    """A log written by verl's own FileLogger (what trainer.logger=['file'] writes)."""
    import os

    from verl.utils.tracking import FileLogger

    os.environ["VERL_FILE_LOGGER_PATH"] = str(path)
    try:
        logger = FileLogger("grpo-lab", "test")
        for s in range(1, steps + 1):
            data = {"critic/score/mean": 0.1 * s, "perf/total_num_tokens": 64 * 30.0, "prompt_length/mean": 20.0,
                    "response_length/mean": 10.0, "actor/pg_loss": 0.01}
            if with_filter:  # 64 samples trained; 96 - 8 s samples of degenerate groups dropped, 8 surplus
                data |= {"training/filter_groups/evicted_samples": 96 - 8 * s,
                         "training/filter_groups/discarded_surplus_samples": 8}
            logger.log(data=data, step=s)
        logger.finish()
    finally:
        del os.environ["VERL_FILE_LOGGER_PATH"]


def test_inspect_reads_verls_file_log_with_filter_groups(tmp_path):
    from grpo_lab import cli
    from grpo_lab.diagnose import read_log

    _verl_log(tmp_path / "verl.jsonl", with_filter=True)
    log = read_log(tmp_path / "verl.jsonl")
    assert log.kind == "verl" and [r["step"] for r in log.rows] == [1, 2, 3, 4, 5, 6]
    for s, r in enumerate(log.rows, start=1):
        evicted = 96 - 8 * s
        assert r["degenerate"] == pytest.approx(evicted / (evicted + 64 + 8)) and r["reward"] == pytest.approx(0.1 * s)
    assert cli.main(["inspect", str(tmp_path / "verl.jsonl"), "--out", str(tmp_path / "rep")]) == 0
    report = (tmp_path / "rep" / "report.md").read_text()
    assert "Log kind: **verl**" in report and "filter_groups dropped" in report
    assert "- degenerate fraction: first" in report and (tmp_path / "rep" / "degenerate.png").is_file()


def test_inspect_says_what_a_verl_log_without_filter_groups_cannot_tell(tmp_path):
    from grpo_lab import cli

    _verl_log(tmp_path / "plain.jsonl", with_filter=False)
    assert cli.main(["inspect", str(tmp_path / "plain.jsonl"), "--out", str(tmp_path / "rep")]) == 0
    report = (tmp_path / "rep" / "report.md").read_text()
    assert "not logged: the degenerate fraction" in report and "- mean reward: first" in report
    assert not (tmp_path / "rep" / "degenerate.png").exists() and (tmp_path / "rep" / "reward.png").is_file()


@pytest.mark.parametrize("method", ["dapo", "avspo", "grpo", "gpg"])
def test_advantages_are_computed_in_the_rewards_own_precision(method):
    """Issue 38: an internal .float() turned float64 rewards near 1e8 into equal float32 values (dapo: all zeros,
    avspo: a wrong sign) and returned int64 rewards' advantages as integers."""
    gv.reset_state()
    r = torch.tensor([1e8, 1e8 + 1, 1e8, 1e8 + 1], dtype=torch.float64)
    tlr, mask = torch.zeros(4, 3, dtype=torch.float64), torch.ones(4, 3)
    tlr[:, 1] = r
    adv, _ = gv.outcome_advantages(tlr, mask, ["u"] * 4, method)
    want = grpo_lab.compute_advantages(r - 1e8, 4, method)  # the same differences, at a magnitude float32 keeps
    assert adv.dtype == torch.float64
    torch.testing.assert_close(adv[:, 0], want.double(), rtol=1e-6, atol=1e-6)
    ints = torch.zeros(4, 3, dtype=torch.int64)
    ints[0, 0] = 1
    adv, _ = gv.outcome_advantages(ints, torch.ones(4, 3, dtype=torch.int64), ["u"] * 4, "grpo")
    assert adv.is_floating_point() and adv[0, 0].item() == pytest.approx(1.4997, abs=1e-4)


def test_numpy_rewards_are_accepted_as_verl_may_hand_them():
    r = np.array([[1.0, 0], [0, 0], [0, 0], [0, 0]])
    adv, _ = gv.outcome_advantages(r, np.ones((4, 2)), np.array(["u"] * 4, dtype=object), "grpo")
    assert adv[0, 0].item() == pytest.approx(1.4997, abs=1e-4)


def test_an_option_block_that_is_not_a_mapping_or_a_misspelt_key_is_named():
    tlr, mask, uids, _, _ = batch(rewards_cases()["binary"])
    fn = core_algos.ADV_ESTIMATOR_REGISTRY["grpo_lab.avspo"]
    with pytest.raises(ValueError, match="grpo_lab_options.avspo must map option names to values, got 0.3"):
        fn(tlr, mask, uids, config={"grpo_lab_options": {"avspo": 0.3}})
    with pytest.raises(ValueError, match="grpo_lab_options.avspo has option\\(s\\) treshold that avspo does not take"):
        fn(tlr, mask, uids, config={"grpo_lab_options": {"avspo": {"treshold": 0.3}}})
    gv.reset_state()
    fn(tlr, mask, uids, config={"grpo_lab_options": {"avspo": {"threshold": 0.3, "ema": 0.0}}})  # known keys pass


def test_a_name_verl_holds_for_another_function_is_refused():
    def someone_elses(token_level_rewards, response_mask, index=None, config=None, **kw):
        return token_level_rewards, token_level_rewards

    grpo_lab.register_estimator("collision_test", lambda r, g: grpo_lab.compute_advantages(r, g, "drgrpo"))
    core_algos.ADV_ESTIMATOR_REGISTRY["grpo_lab.collision_test"] = someone_elses
    try:
        with pytest.raises(ValueError, match="already holds 'grpo_lab.collision_test' for another function"):
            gv.register_with_verl("collision_test")
    finally:
        del core_algos.ADV_ESTIMATOR_REGISTRY["grpo_lab.collision_test"]
    assert gv.register_with_verl("collision_test") == "grpo_lab.collision_test"
    assert gv.register_with_verl("collision_test") == "grpo_lab.collision_test"  # again: a no-op
    del core_algos.ADV_ESTIMATOR_REGISTRY["grpo_lab.collision_test"]


@pytest.mark.parametrize("bad", ["abc", None, True])
def test_inspect_names_an_unreadable_evicted_count_and_duplicated_steps(tmp_path, bad):
    """Issue 38: an evicted_samples of "abc", null or true read as 0 evicted (a degenerate fraction of 0.0 without a
    word), and duplicated steps were averaged silently."""
    import json

    from grpo_lab.diagnose import read_log

    rows = [{"step": s, "data": {"critic/score/mean": 0.1, "perf/total_num_tokens": 1920.0, "prompt_length/mean": 20.0,
                                 "response_length/mean": 10.0, "training/filter_groups/evicted_samples": 32}}
            for s in (1, 2, 2, 3)]
    rows[3]["data"]["training/filter_groups/evicted_samples"] = bad
    (tmp_path / "v.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    log = read_log(tmp_path / "v.jsonl")
    assert log.rows[3]["degenerate"] is None and log.rows[0]["degenerate"] == pytest.approx(32 / 96)
    assert any("not a number, so no degenerate fraction" in w and "line 4" in w for w in log.warnings)
    assert any("1 step(s) appear more than once" in n for n in log.notes)


def test_a_misspelt_options_block_or_estimator_name_is_refused():
    """Issue 51, item 8: 'grpo_lab_option' (a misspelt block) and 'grpo_lab_options.avpso' (a misspelt estimator)
    were ignored, so the run trained with the defaults."""
    from grpo_lab.verl import _options

    with pytest.raises(ValueError, match="algorithm.grpo_lab_option is not a grpo-lab setting"):
        _options({"grpo_lab_option": {"avspo": {"threshold": 0.3}}}, "avspo")
    with pytest.raises(ValueError, match="grpo_lab_options.avpso names no grpo-lab estimator"):
        _options({"grpo_lab_options": {"avpso": {"threshold": 0.3}}}, "avspo")
    assert _options({"grpo_lab_options": {"avspo": {"threshold": 0.3}}}, "avspo") == {"threshold": 0.3}
