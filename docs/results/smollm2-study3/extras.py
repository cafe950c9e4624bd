"""Readings that belong to study 3 only (named by plan.toml; `grpo-lab study report` calls them).

- ``sections``: the mechanism, read on the quantities each hypothesis names (PLAN.md, "Measures": descriptive):
  per arm the gradient norm before clipping, the KL term's share of the loss (β = 0.04), the size of each update
  and the adapter's distance from its start after the last step, from every finished run's per-step history.
- ``headline``: H1 and H2 in words (once every run has finished), from the planned comparisons and PLAN.md's own
  refutation rule (an interval that excludes differences above +0.10 refutes a hypothesis as an explanation of
  the paper's size).
- ``outputs``: the study's block of docs/replication-2605.07689.md (its section "Why might the paper see +45
  points?") and lesson 10's data, grpo_lab/data/smollm2_study3.json (interim while runs are missing: it says so).
"""

import json
from pathlib import Path

import numpy as np

from grpo_lab.report import md_table
from grpo_lab.stats import diff_ci, fmt_ci
from grpo_lab.study import fill, interval, verdict_line, verdict_word

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
REPLICATION = ROOT / "docs" / "replication-2605.07689.md"
DATA = ROOT / "grpo_lab" / "data" / "smollm2_study3.json"
SIZE = 0.10  # PLAN.md: an interval excluding differences above +0.10 refutes a hypothesis as the paper's explanation
# (history key, how a run's steps are summarised, what the report calls it)
MECHANISM = (("grad_norm", "mean", "gradient norm before clipping (mean over steps)"),
             ("kl/share_of_loss", "mean", "KL term's share of the loss (mean over steps)"),
             ("update/step_norm", "mean", "size of one update, ‖θ_t − θ_(t−1)‖ (mean over steps)"),
             ("update/from_start", "last", "distance from the start after the last step, ‖θ_T − θ_0‖"))


def per_seed(study, arm: str, key: str, how: str) -> dict:
    """``{seed: value}``: one finished run's steps of ``key`` summarised (``mean`` over the steps that logged it, or
    its ``last`` value); a run that never logged it (the KL share at β = 0) is left out."""
    out = {}
    for seed, r in sorted(study.data[arm].runs.items()):
        v = [h[key] for h in r["history"] if isinstance(h.get(key), (int, float))]
        if v:
            out[seed] = float(np.mean(v)) if how == "mean" else float(v[-1])
    return out


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
            f"{d:+.2f} [{lo:+.2f}, {hi:+.2f}] (Welch, 95%).{why}")


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
            mechanism_words(study, mech), "", canary_words(study), ""]


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


def _reading(study, a: str, c: bool = False):
    return next(r for r in study.planned if r.spec.a == a and (r.spec.c is not None) == c)


def _tests(study) -> tuple:
    """``(h1, h2)``: H1's planned test (the KL penalty's interaction) and H2's (best against best)."""
    return _reading(study, "sign-kl", c=True), _reading(study, "sign-best")


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


def hypotheses(study) -> dict:
    """H1 and H2 in words from the planned readings (once complete), each with the side of its interval that PLAN.md's
    rule reads (a Sign advantage, or an interaction in its favour, up to the interval's top; both sides are in the
    report's planned comparisons)."""
    h1, h2 = _tests(study)
    rate = {m: _rate(study, study.chosen(f"{m}-best")) for m in ("sign", "drgrpo")}

    def words(r, what: str, excluded: str) -> str:
        if r.d is None:
            return f"cannot be read ({r.why_not})"
        if r.apart and r.lo > 0:
            return f"**supported**: {what} {interval(r)}, separated after Holm"
        if r.apart:
            return f"**contradicted**: {what} {interval(r)}, separated after Holm in the other direction"
        size = (f"its interval excludes {excluded} above +{SIZE:.2f}, so PLAN.md's rule **refutes it as an "
                "explanation of the paper's size**" if r.hi < SIZE else
                f"its interval still allows {excluded} up to {r.hi:+.3f}, above PLAN.md's +{SIZE:.2f}: not refuted "
                "as a part of the paper's size")
        return f"**not supported**: {what} {interval(r)}, not separated after Holm; {size}"

    best = f"lr {rate['sign']} for both" if rate["sign"] == rate["drgrpo"] else f"lr {rate['sign']} and {rate['drgrpo']}"
    return {"H1": words(h1, "the KL penalty's change of Sign − Dr.GRPO", "interactions"),
            "H2": words(h2, f"Sign − Dr.GRPO each at its best rate on validation ({best})", "Sign advantages")}


def headline(study) -> str:
    """H1 and H2, then what else the planned family separated, and whether the paper's +0.454 lies inside any
    planned interval that names it."""
    h, tests = hypotheses(study), _tests(study)
    other = [f"{r.spec.label} {interval(r)} ({verdict_word(study, r)})" for r in study.planned
             if r.apart and all(r is not t for t in tests)]
    claims = [r for r in study.planned if r.spec.claim is not None and r.d is not None]
    out = f"H1 (a KL penalty of fixed scale) {h['H1']}. H2 (the starved regime) {h['H2']}."
    if other:
        out += " Separated after Holm: " + "; ".join(other) + "."
    if claims and all(not r.lo <= r.spec.claim <= r.hi for r in claims):
        out += f" The paper's {claims[0].spec.claim:+.3f} lies outside every planned interval that names it."
    return out


def left_words(study) -> str:
    """What study 3 leaves of the paper's +45 points, from the planned readings (once complete, and only where neither
    hypothesis is supported): the bound each sets as a share of the paper's size, and the shared rate at which the
    two estimators were furthest apart beside the others."""
    (h1, h2), rates = _tests(study), _shared_rates(study)
    if not study.complete or h1.d is None or h2.d is None or h1.apart or h2.apart or len(rates) < 2:
        return ""
    claim = h2.spec.claim
    far = max(rates, key=lambda r: abs(r.d))
    ahead = "Dr.GRPO's" if far.d < 0 else "Sign's"
    others = "; ".join(f"lr {_rate(study, r.spec.a)} {interval(r)}" for r in rates if r is not far)
    return (f"**What is left of the +45 points.** Neither hypothesis explains it here: the KL penalty's change of the "
            f"gap in Sign's favour is at most {h1.hi:+.3f} (95%), {h1.hi / claim:.0%} of the paper's {claim:+.3f}, and "
            f"each method at its best rate leaves a Sign advantage of at most {h2.hi:+.3f} open, {h2.hi / claim:.0%} "
            f"of it. The largest difference among the shared rates is the learning rate's doing: at lr "
            f"{_rate(study, far.spec.a)} the two estimators were {abs(far.d):.3f} apart in pass@1, in {ahead} favour (Sign − "
            f"Dr.GRPO {interval(far)}{', separated after Holm' if far.apart else ''}); at the other rates {others}. "
            "A shared rate that suits one estimator and starves the other can make a gap of this "
            "order by itself. Whether that happened in the paper this study cannot say (the paper does not report "
            "each method's rate chosen on its own): a hypothesis for a study at the paper's scale, not a finding. "
            "How to compare estimators fairly: [the compare guide](guide/compare.md#comparing-estimators-fairly).")


def block(study) -> str:
    """The replication report's study-3 block: the engine's line, then (once complete) H1 and H2 in words, and the
    mechanism as logged."""
    line = verdict_line(study, "results/smollm2-study3/REPORT.md", headline(study) if study.complete else None)
    left = left_words(study)
    return (line + "\n\n" + ("" if study.complete else "Interim, descriptive. ") + mechanism_words(study, mechanism(study))
            + (f"\n\n{left}" if left else ""))


def shipped(study) -> str:
    """Lesson 10's copy: per arm its settings and per seed the finals and the mechanism's summaries; the planned
    readings; H1 and H2 in words once complete. Interim while runs are missing (``done`` of ``total``)."""
    mech = mechanism(study)
    arms = {}
    for name, a in study.data.items():
        cfg = a.arm.config
        arms[name] = dict(label=a.arm.label, method=a.arm.method, learning_rate=cfg.learning_rate, beta=cfg.beta,
                          planned_seeds=list(a.arm.seeds), seeds={
                              str(s): dict(pass_at_1=r["eval"]["pass_at_k"]["1"], greedy=r["eval"]["greedy"],
                                           **{key: mech[name][key].get(s) for key, _, _ in MECHANISM})
                              for s, r in sorted(a.runs.items())})
    planned = [dict(label=r.spec.label, d=r.d, lo=r.lo, hi=r.hi, p=r.p, apart=r.apart) for r in study.planned]
    out = dict(source="grpo-lab study report docs/results/smollm2-study3/plan.toml (plan: PLAN.md there)",
               done=study.done, total=study.total, complete=study.complete, arms=arms, planned=planned,
               mechanism_words=mechanism_words(study, mech),
               hypotheses=hypotheses(study) if study.complete else None)
    return json.dumps(out, indent=None, separators=(",", ":"), default=float) + "\n"


def outputs(study, pages: dict) -> dict:
    page = pages.get(REPLICATION) or REPLICATION.read_text()
    return {REPLICATION: fill(page, "study3", block(study), str(REPLICATION)), DATA: shipped(study)}
