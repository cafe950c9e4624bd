"""grpo_lab.gradrank on token ids and under LoRA (issue 82, study 6's measurement): per-completion gradients of full
weight matrices from any causal LM, and the bounds the arithmetic alone sets on their rank."""

import pytest
import torch

import grpo_lab as gl
from grpo_lab import gradrank
from grpo_lab.policy import load_tiny_lm

Q = "model.layers.0.self_attn.q_proj.weight"
DOWN = "model.layers.1.mlp.down_proj.weight"


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    return load_tiny_lm()


def ids(tok, text):
    return tok.convert_tokens_to_ids(list(text))


def test_the_ids_path_is_the_strings_path_and_matches_a_finite_difference(tiny):
    model, tok = tiny
    prompts, comps = ["3+4=", "12+5=", "3+4="], ["7", "17", "8"]
    by_text = gradrank.completion_grads(model, tok, prompts, comps, Q)
    by_ids = gradrank.completion_grads_ids(model, [ids(tok, p) for p in prompts],
                                           [ids(tok, c) + [tok.eos_token_id] for c in comps], [Q, DOWN])
    assert torch.equal(by_text, by_ids[Q]) and by_ids[DOWN].shape[0] == 3
    # the largest entry of completion 1's gradient against a central difference of its log-probability (float64
    # weights; parts of the forward stay float32, so the step is 1e-3 and the tolerance 1%)
    m = model.double()
    try:
        W = dict(m.named_parameters())[Q]
        p, c = ids(tok, prompts[1]), ids(tok, comps[1]) + [tok.eos_token_id]

        def logp():
            with torch.no_grad():
                out = m(input_ids=torch.tensor([p + c])).logits[0, len(p) - 1:-1]
                return float(torch.log_softmax(out, -1).gather(1, torch.tensor(c).unsqueeze(1)).sum())
        g = gradrank.completion_grads_ids(m, [p], [c], [Q])[Q][0]
        k = int(g.abs().argmax())
        h, old = 1e-3, float(W.view(-1)[k])
        with torch.no_grad():
            W.view(-1)[k] = old + h
            up = logp()
            W.view(-1)[k] = old - h
            down = logp()
            W.view(-1)[k] = old
        assert abs((up - down) / (2 * h) - float(g[k])) < 0.01 * abs(float(g[k])) and abs(float(g[k])) > 1e-3
    finally:
        model.float()


def test_under_lora_the_frozen_base_weight_gives_the_full_weights_gradient(tiny):
    peft = pytest.importorskip("peft")
    model, tok = tiny
    lora = peft.get_peft_model(load_tiny_lm()[0], peft.LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj"],
                                                                  init_lora_weights=False))
    lora.train()
    base = next(n for n, _ in lora.named_parameters() if n.endswith("layers.0.self_attn.q_proj.base_layer.weight"))
    frozen = dict(lora.named_parameters())[base]
    assert not frozen.requires_grad  # LoRA freezes it; the gradient is taken all the same
    p, c = [ids(tok, "7+8=")], [ids(tok, "15") + [tok.eos_token_id]]
    g_lora = gradrank.completion_grads_ids(lora, p, c, [base])[base]
    assert not frozen.requires_grad and lora.training  # both put back
    merged = lora.merge_and_unload()  # W + s B A in one matrix: the same function, so the same gradient
    g_merged = gradrank.completion_grads_ids(merged, p, c, [Q])[Q]
    # float32 rounds W x + s B(A x) and (W + s B A) x differently: 1.5e-6 at most on an AVX-512 CPU, where the
    # gradient's largest entry is 0.13 (2026-12-01); the tolerance is 1e-4 of that entry, about 9x the rounding
    assert torch.allclose(g_lora, g_merged, atol=1e-4 * float(g_merged.abs().max()), rtol=1e-4)
    assert float(g_lora.abs().max()) > 0


def test_measured_ranks_never_exceed_the_arithmetic_bounds(tiny):
    model, tok = tiny
    G = 4
    prompts = ["3+4="] * G + ["12+5="] * G
    comps = ["7", "7", "8", "1", "17", "17", "17", "17"]  # group 0 mixed, group 1 all correct
    rewards = torch.tensor([1., 1., 0., 0., 1., 1., 1., 1.])
    p_ids = [ids(tok, p) for p in prompts]
    c_ids = [ids(tok, c) + [tok.eos_token_id] for c in comps]
    grads = gradrank.completion_grads_ids(model, p_ids, c_ids, [DOWN])[DOWN]
    shape = dict(model.named_parameters())[DOWN].shape
    for est in ("grpo", "sign"):
        A = gl.compute_advantages(rewards, G, est)
        for i in range(2):
            a = A[i * G:(i + 1) * G]
            C = gradrank.contribution_matrix(grads[i * G:(i + 1) * G], a)
            bound = gradrank.group_rank_bound(a)
            assert gradrank.rank_above(C, 1e-5) <= bound  # 1e-5: float32 gradients' numerical rank
            assert gradrank.effective_rank(C) <= bound + 1e-9
        U = gradrank.update_matrix(grads, A, shape)
        lengths = [len(p) + len(c) for p, c in zip(p_ids, c_ids)]
        assert gradrank.rank_above(U, 1e-5) <= gradrank.update_rank_bound(shape, lengths, A)
    A = gl.compute_advantages(rewards, G, "grpo")
    assert gradrank.group_rank_bound(A[G:]) == 0 and gradrank.group_rank_bound(gl.compute_advantages(rewards, G, "sign")[G:]) == G
    # positions read: each nonzero-advantage completion's tokens but its last; all-correct group 1 adds none
    lengths = [len(p) + len(c) for p, c in zip(p_ids, c_ids)]
    assert gradrank.update_rank_bound((1000, 1000), lengths, A) == sum(n - 1 for n in lengths[:G])
    assert gradrank.update_rank_bound((3, 1000), lengths, A) == 3


def test_the_orthogonal_reference_is_the_row_sizes_effective_rank():
    Q_, _ = torch.linalg.qr(torch.randn(50, 5, dtype=torch.float64))
    sizes = torch.tensor([4.0, 1.0, 1.0, 1.0, 1.0], dtype=torch.float64)
    C = sizes[:, None] * Q_.T  # orthogonal rows: the measured effective rank is the reference
    assert gradrank.effective_rank(C) == pytest.approx(gradrank.orthogonal_reference(C), rel=1e-9)
    q = sizes / sizes.sum()
    assert gradrank.orthogonal_reference(C) == pytest.approx(float(torch.exp(-(q * q.log()).sum())), rel=1e-12)
    same = torch.ones(3, 1, dtype=torch.float64) * Q_[:, 0]  # three equal rows: rank 1, reference 3
    assert gradrank.effective_rank(same) == pytest.approx(1.0) and gradrank.orthogonal_reference(same) == pytest.approx(3.0)
    # one lucky success in a group of 16 under GRPO: half the rows' size on one row
    r = torch.zeros(16)
    r[0] = 1
    A = gl.compute_advantages(r, 16, "grpo")
    assert gradrank.orthogonal_reference(torch.diag(A)) == pytest.approx(7.746, abs=1e-3)
    assert gradrank.orthogonal_reference(torch.diag(gl.compute_advantages(r, 16, "sign"))) == pytest.approx(16.0)


def test_bad_input_is_named(tiny):
    model, tok = tiny
    with pytest.raises(KeyError, match=r"no parameter named 'model.layers.0.self_attn.qq_proj.weight'"):
        gradrank.completion_grads_ids(model, [[1]], [[2]], ["model.layers.0.self_attn.qq_proj.weight"])
    with pytest.raises(ValueError, match="2 prompts but 1 completions"):
        gradrank.completion_grads_ids(model, [[1], [1]], [[2]], [Q])
    with pytest.raises(ValueError, match="an empty prompt or completion"):
        gradrank.completion_grads_ids(model, [[1]], [[]], [Q])
    with pytest.raises(ValueError, match="an advantage is NaN"):
        gradrank.group_rank_bound([1.0, float("nan")])
    with pytest.raises(ValueError, match="3 lengths for 2 advantages"):
        gradrank.update_rank_bound((4, 4), [3, 3, 3], [1.0, -1.0])


# ----------------------------------------------------------------------------- the rank probe of a training run

def _recompute(model, reading, blocks, shapes, estimator):
    G = reading["G"]
    prompts = [p for p in reading["prompts"] for _ in range(G)]
    grads = gradrank.completion_grads_ids(model, prompts, reading["completions"], blocks)
    adv = {estimator: gl.compute_advantages(torch.tensor(reading["rewards"]), G, estimator)}
    lengths = [len(p) + len(c) for p, c in zip(prompts, reading["completions"])]
    return gradrank.rank_readings(grads, shapes, lengths, adv, G, reading["completions"])[estimator]


@pytest.fixture(scope="module")
def probed():
    """A 3-step GRPO run of the tiny LM probing windows of 2 steps (start: steps 1 and 2; end: steps 2 and 3, step 2
    read once and recorded in both), a large learning rate (so one update moves the weights), and the weights after
    its second update kept: the ones the last end reading must have used."""
    import copy
    import tempfile

    from transformers import TrainerCallback

    from grpo_lab.config import RunConfig
    from grpo_lab.runner import train

    kept = {}

    class Keep(TrainerCallback):
        def on_step_end(self, args, state, control, model=None, **kw):
            if state.global_step == 2:
                kept["after_2"] = copy.deepcopy(model.state_dict())

    cfg = RunConfig(steps=3, prompts_per_step=4, group_size=4, train_problems=64, eval_problems=4, eval_samples=2,
                    learning_rate=1e-2, rank_probe=2, estimator="grpo")
    out = train(cfg, tempfile.mkdtemp(), evaluate_after=False, callbacks=[Keep()])
    return out, kept["after_2"]


def test_a_probed_run_records_both_readings_within_their_bounds(probed):
    out, _ = probed
    rp = out["rank_probe"]
    model, _ = load_tiny_lm()
    assert rp["blocks"] == gradrank.probe_blocks(model) and set(rp["estimators"]) == {"grpo", "drgrpo", "sign"}
    assert [r["step"] for r in rp["start"]] == [1, 2] and [r["step"] for r in rp["end"]] == [2, 3]
    assert rp["start"][1] == rp["end"][0] and rp["seconds"] > 0  # step 2: read once, in both windows
    for r in (*rp["start"], rp["end"][1]):
        assert set(r["by_estimator"]) == {"grpo", "drgrpo", "sign"} and len(r["completions"]) == 16
        rewards = torch.tensor(r["rewards"]).view(-1, 4)
        for block in rp["blocks"]:
            grpo, sign = r["by_estimator"]["grpo"][block], r["by_estimator"]["sign"][block]
            for g, row in enumerate(rewards):
                mixed = bool(row.min() != row.max())
                assert (grpo["group_nonzero"][g] > 0) == mixed and sign["group_nonzero"][g] == 4
                assert grpo["group_bound"][g] <= grpo["group_nonzero"][g]
                assert grpo["group_count"][g] <= grpo["group_bound"][g]
                assert grpo["group_erank"][g] <= grpo["group_bound"][g] + 1e-6
            assert sign["update_count"] <= sign["update_bound"]


def test_the_probe_reads_the_weights_being_trained_not_a_stale_copy(probed):
    """The canary: each reading recomputed from its recorded tokens equals the record under the weights of its step
    (the start's for the first; after two updates for the last), and the last does not equal what the start's
    weights give, so a probe that read a stale copy would fail here. Read under sign's advantages, which give every
    completion a signal (a step whose groups are all degenerate has a zero GRPO update under any weights)."""
    out, after_2 = probed
    rp = out["rank_probe"]
    model, _ = load_tiny_lm()
    start = _recompute(model, rp["start"][0], rp["blocks"], rp["shapes"], "sign")
    stale = _recompute(model, rp["end"][1], rp["blocks"], rp["shapes"], "sign")
    model.load_state_dict(after_2)
    end = _recompute(model, rp["end"][1], rp["blocks"], rp["shapes"], "sign")
    b = rp["blocks"][1]
    for mine, rec in ((start, rp["start"][0]), (end, rp["end"][1])):
        got = rec["by_estimator"]["sign"][b]
        assert mine[b]["update_erank"] == pytest.approx(got["update_erank"], rel=1e-4, abs=1e-6)
        assert mine[b]["group_erank"] == pytest.approx(got["group_erank"], rel=1e-4, abs=1e-6)
    assert abs(stale[b]["update_erank"] - rp["end"][1]["by_estimator"]["sign"][b]["update_erank"]) > 1e-4


def test_the_study_measures_read_the_probe_and_name_what_is_missing_or_damaged(probed):
    import copy

    from grpo_lab.compare import result_problems
    from grpo_lab.study.measures import METRICS

    out, _ = probed
    res = {k: v for k, v in out.items() if k not in ("model", "tokenizer")}
    rows = [r for step in res["rank_probe"]["end"] for r in step["by_estimator"]["grpo"].values()]
    nonzero = [r["update_erank"] for r in rows if r["update_bound"] > 0]
    if nonzero:  # a step whose every group is degenerate has no update to read
        assert METRICS["update-erank-end"].read(res, 0) == pytest.approx(sum(nonzero) / len(nonzero))
    groups = [(e, n) for r in rows for e, n in zip(r["group_erank"], r["group_bound"]) if n > 0]
    if groups:
        assert METRICS["group-erank-end"].read(res, 0) == pytest.approx(sum(e for e, _ in groups) / len(groups))
        assert METRICS["group-bound-end"].read(res, 0) == pytest.approx(sum(n for _, n in groups) / len(groups))
    with pytest.raises(KeyError, match="the run has no rank probe: train it with rank_probe = N"):
        METRICS["update-erank-start"].read({k: v for k, v in res.items() if k != "rank_probe"}, 0)
    no_start = copy.deepcopy(res)
    del no_start["rank_probe"]["start"]
    with pytest.raises(KeyError, match="no start reading: resumed past those steps"):
        METRICS["update-erank-start"].read(no_start, 0)
    bad = copy.deepcopy(res)
    first = next(iter(bad["rank_probe"]["end"][0]["by_estimator"]["grpo"].values()))
    first["update_bound"] = max(first["update_bound"], 1)
    first["update_erank"] = first["update_bound"] + 5
    with pytest.raises(ValueError, match="above its arithmetic bound .* \\(damaged\\?\\)"):
        METRICS["update-erank-end"].read(bad, 0)
    first["update_erank"] = float("nan")
    with pytest.raises(ValueError, match="not a number >= 0"):
        METRICS["update-erank-end"].read(bad, 0)
    broken = {**res, "rank_probe": "oops"}
    assert "not a rank probe's record" in result_problems(broken, False, None)
    broken = {**res, "rank_probe": {**res["rank_probe"], "end": [{"step": 2}]}}
    assert "rank probe's end readings are damaged" in result_problems(broken, False, None)


def test_the_probe_is_refused_where_it_cannot_read_one_batch_a_step():
    from grpo_lab.config import RunConfig

    for bad in (dict(policy="tabular"), dict(sampling="dynamic"), dict(skip_prob=0.5),
                dict(mask_truncated_completions=True)):
        with pytest.raises(ValueError, match="rank_probe reads the gradients"):
            RunConfig(rank_probe=1, **bad).validate()
    with pytest.raises(ValueError, match="rank_probe"):
        RunConfig(rank_probe="yes").validate()
    with pytest.raises(ValueError, match=r"rank_probe \(4\) probes more first or last steps than the run has \(3\)"):
        RunConfig(rank_probe=4, steps=3).validate()


def test_probe_blocks_name_the_first_middle_and_last_layer_and_refuse_a_model_without_layers():
    model, _ = load_tiny_lm()
    assert gradrank.probe_blocks(model) == [Q, "model.layers.0.mlp.down_proj.weight",
                                            "model.layers.1.self_attn.q_proj.weight", DOWN]
    with pytest.raises(ValueError, match="no decoder layers named layers.N"):
        gradrank.probe_blocks(torch.nn.Linear(2, 2))


def test_the_gradients_are_read_without_autocast_even_where_training_uses_it(tiny):
    """The probe's canary for any machine: accelerate's bf16 mixed precision wraps the trained model's forward in
    autocast (keeping the bare one as ``_original_forward``), and a caller may hold an autocast context; the
    per-completion gradients are the same float32 ones either way, while the wrapped forward alone gives others."""
    import types

    model, tok = tiny
    p, c = [ids(tok, "7+8=")], [ids(tok, "15") + [tok.eos_token_id]]
    plain = gradrank.completion_grads_ids(model, p, c, [Q])[Q]
    model.forward = types.MethodType(torch.autocast("cpu", dtype=torch.bfloat16)(type(model).forward), model)
    try:
        rounded = gradrank.completion_grads_ids(model, p, c, [Q])[Q]  # no bare forward kept: autocast reads
        model._original_forward = types.MethodType(type(model).forward, model)
        wrapped = gradrank.completion_grads_ids(model, p, c, [Q])[Q]
        with torch.autocast("cpu", dtype=torch.bfloat16):
            inside = gradrank.completion_grads_ids(model, p, c, [Q])[Q]
    finally:
        del model.forward
        model.__dict__.pop("_original_forward", None)
    assert not torch.allclose(rounded, plain, atol=1e-6, rtol=1e-3)  # bf16 does change them: the test can fail
    assert torch.equal(wrapped, plain) and torch.equal(inside, plain)
