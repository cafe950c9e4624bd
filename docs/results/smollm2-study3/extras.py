"""Readings that belong to study 3 only (named by plan.toml; `grpo-lab study report` calls them).

- ``sections``: the mechanism, read on the quantities each hypothesis names (PLAN.md, "Measures": descriptive):
  per arm the gradient norm before clipping, the KL term's share of the loss (β = 0.04), the size of each update
  and the adapter's distance from its start after the last step, from every finished run's per-step history.
  Also each run's training reward and completion length over its first and last 10% of steps (what tells
  "learns slowly" from "does not move").
- No headline and no verdict: H1 and H2 are judged by the engine from the plan's ``[[hypotheses]]`` (PLAN.md's
  rule, moved there by issue 56).
- ``outputs``: the study's block of docs/replication-2605.07689.md (its section "Why might the paper see +45
  points?") and lesson 10's data, grpo_lab/data/smollm2_study3.json (interim while runs are missing: it says so).
"""

import json
from pathlib import Path

import numpy as np

from grpo_lab.report import md_table
from grpo_lab.stats import diff_ci, fmt_ci
from grpo_lab.study import fill, hypothesis_line, interval, verdict_line

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
REPLICATION = ROOT / "docs" / "replication-2605.07689.md"
DATA = ROOT / "grpo_lab" / "data" / "smollm2_study3.json"
# (history key, how a run's steps are summarised, what the report calls it)
MECHANISM = (("grad_norm", "mean", "gradient norm before clipping (mean over steps)"),
             ("kl/share_of_loss", "mean", "KL term's share of the loss (mean over steps)"),
             ("update/step_norm", "mean", "size of one update, ‖θ_t − θ_(t−1)‖ (mean over steps)"),
             ("update/from_start", "last", "distance from the start after the last step, ‖θ_T − θ_0‖"))
# (history key, which steps, what the report calls it): the first and the last 10% of a run's steps
TRAJECTORY = (("reward", "first", "training reward, first 10% of steps"),
              ("reward", "last", "training reward, last 10% of steps"),
              ("completion_length", "first", "completion length (tokens), first 10% of steps"),
              ("completion_length", "last", "completion length (tokens), last 10% of steps"))


def _step_value(h: dict, key: str):
    if key == "completion_length":  # tokens per completion generated at that step
        t, c = h.get("sampling/tokens"), h.get("sampling/completions")
        return t / c if isinstance(t, (int, float)) and isinstance(c, (int, float)) and c > 0 else None
    v = h.get(key)
    return v if isinstance(v, (int, float)) else None


def per_seed(study, arm: str, key: str, how: str) -> dict:
    """``{seed: value}``: one finished run's steps of ``key`` summarised (``mean`` over the steps that logged it, or
    its ``last`` value); a run that never logged it (the KL share at β = 0) is left out."""
    out = {}
    for seed, r in sorted(study.data[arm].runs.items()):
        v = [x for x in (_step_value(h, key) for h in r["history"]) if x is not None]
        if not v:
            continue
        tenth = max(1, len(v) // 10)
        out[seed] = float({"mean": np.mean(v), "last": v[-1], "first": np.mean(v[:tenth]),
                           "last10": np.mean(v[-tenth:])}[how])
    return out


def trajectory(study) -> dict:
    """``{arm: {"reward first": {seed: value}, ...}}``: :data:`TRAJECTORY` per arm."""
    return {arm: {f"{key} {which}": per_seed(study, arm, key, "first" if which == "first" else "last10")
                  for key, which, _ in TRAJECTORY} for arm in study.data}


def mechanism(study) -> dict:
    """``{arm: {key: {seed: value}}}`` for every arm and every quantity of :data:`MECHANISM`."""
    return {arm: {key: per_seed(study, arm, key, how) for key, how, _ in MECHANISM} for arm in study.data}


def _cell(values: dict, key: str) -> str:
    """Mean [95% t-interval] over seeds (grpo_lab.stats.fmt_ci, which also says when the seeds agree exactly), the
    interval kept where the quantity can be: a share of the loss within [0, 1], a norm or a distance at or above 0."""
    if not values:
        return "—"
    return fmt_ci(list(values.values()), clip=(0.0, 1.0) if key == "kl/share_of_loss" else (0.0, float("inf")))


def _mean(values: dict) -> float | None:
    return float(np.mean(list(values.values()))) if values else None


def mechanism_words(study, mech: dict) -> str:
    """What the KL arms' logs show, in numbers: the KL term's share of each method's loss and how far each adapter
    went from its start (the lesson's predict-first question), or that they have not run yet."""
    kl = {m: mech[f"{m}-kl"] for m in ("sign", "drgrpo")}
    if not all(len(kl[m]["update/from_start"]) >= 2 for m in kl):
        return "The KL arms have fewer than two finished runs each: no interval yet."
    share = {m: _mean(kl[m]["kl/share_of_loss"]) for m in kl}
    far = {m: list(kl[m]["update/from_start"].values()) for m in kl}
    gn = {m: _mean(kl[m]["grad_norm"]) for m in kl}
    d, lo, hi = diff_ci(far["drgrpo"], far["sign"])
    if lo > 0 or hi < 0:
        moved = f"Dr.GRPO's adapter went {'further from' if lo > 0 else 'less far from'} its start than Sign's"
        why = ""
    else:
        moved = "the adapters went about as far from their starts"
        why = (" One reading: AdamW's step is set by the learning rate, not by the gradient's size, so the KL term "
               "changed the direction of Dr.GRPO's steps more than their length.")
    return (f"At β 0.04 (lr 3e-4; {len(far['sign'])} and {len(far['drgrpo'])} seeds) the KL term was "
            f"{share['drgrpo']:.3f} of Dr.GRPO's loss and {share['sign']:.4f} of Sign's (means over steps and seeds), "
            f"beside gradient norms of {gn['drgrpo']:.3f} and {gn['sign']:.3f}; {moved}: ‖θ_T − θ_0‖ "
            f"{np.mean(far['drgrpo']):.2f} for Dr.GRPO and {np.mean(far['sign']):.2f} for Sign, a difference of "
            f"{d:+.2f} [{lo:+.2f}, {hi:+.2f}] (Welch's standard error, min-n df, 95%).{why}")


def sections(study) -> list:
    mech = mechanism(study)
    rows = [[study.plan.arms[arm].label, f"{len(study.data[arm].runs)} of {len(study.plan.arms[arm].seeds)}"]
            + [_cell(mech[arm][key], key) for key, _, _ in MECHANISM]
            for arm in study.data]
    return ["## The mechanism, read on the quantities it names (descriptive)", "",
            "PLAN.md reads each hypothesis on the quantity it names: the gradient's size, the KL term's share of the "
            "loss (β = 0.04 only; `kl/share_of_loss`, β × KL over the loss's policy-gradient and KL parts, as "
            "logged) and the size of the updates (`update/step_norm`, `update/from_start`: the LoRA adapter's "
            "parameters). Each cell is a mean over seeds [95% t-interval] of one summary per run. No test: these "
            "say how the arms differ, not which is better.", "",
            *md_table(["arm", "seeds", *[what for _, _, what in MECHANISM]], rows), "",
            mechanism_words(study, mech), "", *trajectory_table(study), canary_words(study), ""]


def trajectory_table(study) -> list:
    """Each arm's training reward and completion length at the start and the end of training: an arm whose adapter
    moved while neither did learned nothing it could show (lesson 10 reads lr 1e-4 this way)."""
    traj = trajectory(study)
    rows = [[study.plan.arms[arm].label]
            + [fmt_ci(list(traj[arm][f"{key} {which}"].values()),
                      clip=(0.0, 1.0) if key == "reward" else (0.0, float("inf"))) if traj[arm][f"{key} {which}"]
               else "—" for key, which, _ in TRAJECTORY] for arm in study.data]
    return ["Training reward and completion length over the first and the last 10% of each run's steps (mean over "
            "seeds [95% t-interval]; the length is tokens per sampled completion, `sampling/tokens` over "
            "`sampling/completions`):", "", *md_table(["arm", *[what for _, _, what in TRAJECTORY]], rows), ""]


def canary_words(study) -> str:
    """The rollout engine's canary over every step of every finished run: vLLM sampled from the weights being
    trained (grpo_lab.generation: a run stops when it does not), so no result comes from stale rollouts."""
    from grpo_lab.generation import CANARY_TOLERANCE

    diffs = [h["generation/canary_logp_diff"] for a in study.data.values() for r in a.runs.values()
             for h in r["history"] if isinstance(h.get("generation/canary_logp_diff"), (int, float))]
    steps = sum(len(r["history"]) for a in study.data.values() for r in a.runs.values())
    if not diffs:
        return "The rollout engine's canary logged nothing (no finished run, or not vLLM)."
    return (f"**The rollout canary.** After each optimizer step vLLM's log-probs on a fixed probe were compared with "
            f"the trained model's own: at most {max(diffs):.2g} nats over {len(diffs)} checks in {steps} steps "
            f"(float32 tolerance {CANARY_TOLERANCE['float32']:g}; a run stops above it), so the rollouts came from "
            "the weights being trained, as far as a fixed probe can tell.")


def _rate(study, arm: str) -> str:
    """An arm's learning rate as the plan writes it (3e-4)."""
    return f"{study.plan.arms[arm].config.learning_rate:.0e}".replace("e-0", "e-")


def _shared_rates(study) -> list:
    """The planned Sign − Dr.GRPO readings at one shared learning rate and β 0 (read from the arms' settings)."""
    out = []
    for r in study.planned:
        a, b = study.plan.arms.get(r.spec.a), study.plan.arms.get(r.spec.b)
        if r.spec.c is None and r.d is not None and a and b and (a.method, b.method) == ("sign", "drgrpo") \
                and a.config.learning_rate == b.config.learning_rate and a.config.beta == b.config.beta == 0:
            out.append(r)
    return out


def _sign_drgrpo(study, r) -> bool:
    a, b = study.plan.arms.get(r.spec.a), study.plan.arms.get(r.spec.b)
    return bool(a and b and (a.method, b.method) == ("sign", "drgrpo"))


def left_words(study) -> str:
    """What study 3 leaves of the paper's +45 points, from the planned readings (once complete): each hypothesis's
    bound as a share of the paper's size (the engine's judgement, per-comparison interval), then the shared rates:
    in which direction the largest gap ran, separated or not, and how far in Sign's favour any shared rate reached.
    Every clause follows the readings: reversed data give the reversed sentence (tests/test_study3_extras.py)."""
    rates = _shared_rates(study)
    tests = [study.reading(h.test) for h in study.plan.hypotheses]
    if not study.complete or len(rates) < 2 or any(r is None or r.d is None for r in tests):
        return ""
    claim = next((r.spec.claim for r in tests if r.spec.claim), None)
    bounds = "; ".join(f"{h.name} leaves at most {r.hi:+.3f} in Sign's favour (95% per comparison)"
                       + (f", {r.hi / claim:.0%} of the paper's {claim:+.3f}" if claim and r.hi > 0 else "")
                       for h, r in zip(study.plan.hypotheses, tests))
    far = max(rates, key=lambda r: abs(r.d))
    best_sign = max(rates, key=lambda r: r.hi)
    towards = "Sign's" if far.d > 0 else "Dr.GRPO's"
    direction = ("in the paper's direction" if far.d > 0 else "against the paper's direction")
    sep = "separated after Holm" if far.apart else "not separated"
    sign_apart = [r for r in rates if r.apart and r.d > 0]
    reach = (f"a shared rate put Sign ahead, separated: {'; '.join(f'lr {_rate(study, r.spec.a)} {interval(r)}' for r in sign_apart)}"
             if sign_apart else
             f"no shared rate put Sign ahead by more than {best_sign.hi:+.3f} (the top of the interval at lr "
             f"{_rate(study, best_sign.spec.a)}, {interval(best_sign)})")
    return (f"**What is left of the +45 points.** {bounds}. Among the shared learning rates the largest gap was at lr "
            f"{_rate(study, far.spec.a)}, {abs(far.d):.3f} in pass@1 in {towards} favour, {direction} ({interval(far)}, "
            f"{sep}); {reach}. On this model, then, a mismatched rate moved the gap "
            + ("towards Sign" if far.d > 0 else "towards Dr.GRPO") + ". Whether a rate chosen for one method and not "
            "the other made the paper's gap is not something these runs can tell: study 4 reads a finer rate grid, "
            "and the question at the paper's scale needs its model and GPUs. "
            "How to compare estimators fairly: [the compare guide](guide/compare.md#comparing-estimators-fairly).")


def block(study) -> str:
    """The replication report's study-3 block: the engine's line, then (once complete) H1 and H2 in words, and the
    mechanism as logged."""
    line = verdict_line(study, "results/smollm2-study3/REPORT.md")
    left = left_words(study)
    return (line + "\n\n" + ("" if study.complete else "Interim, descriptive. ") + mechanism_words(study, mechanism(study))
            + (f"\n\n{left}" if left else ""))


def shipped(study) -> str:
    """Lesson 10's copy: per arm its settings and per seed the finals and the mechanism's summaries; the planned
    readings; H1 and H2 in words once complete. Interim while runs are missing (``done`` of ``total``)."""
    mech, traj = mechanism(study), trajectory(study)
    arms = {}
    for name, a in study.data.items():
        cfg = a.arm.config
        arms[name] = dict(label=a.arm.label, method=a.arm.method, learning_rate=cfg.learning_rate, beta=cfg.beta,
                          planned_seeds=list(a.arm.seeds), seeds={
                              str(s): dict(pass_at_1=r["eval"]["pass_at_k"]["1"], greedy=r["eval"]["greedy"],
                                           **{key: mech[name][key].get(s) for key, _, _ in MECHANISM},
                                           **{key: traj[name][key].get(s) for key in traj[name]})
                              for s, r in sorted(a.runs.items())})
    planned = [dict(label=r.spec.label, d=r.d, lo=r.lo, hi=r.hi, p=r.p, apart=r.apart) for r in study.planned]
    out = dict(source="grpo-lab study report docs/results/smollm2-study3/plan.toml (plan: PLAN.md there)",
               done=study.done, total=study.total, complete=study.complete, arms=arms, planned=planned,
               mechanism_words=mechanism_words(study, mech),
               hypotheses={h.name: hypothesis_line(study, h) for h in study.plan.hypotheses}
               if study.complete else None, left_words=left_words(study) or None,
               fragile={what[0].name: flips for kind, what, _, flips in study.robust if kind == "hypothesis"})
    return json.dumps(out, indent=None, separators=(",", ":"), default=float) + "\n"


def outputs(study, pages: dict) -> dict:
    page = pages.get(REPLICATION) or REPLICATION.read_text()
    return {REPLICATION: fill(page, "study3", block(study), str(REPLICATION)), DATA: shipped(study)}
