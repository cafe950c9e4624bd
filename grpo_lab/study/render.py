"""What ``grpo-lab study report`` and ``status`` write: the report page, the lines of pages that carry a study,
the extras module, ``--check``. Part of :mod:`grpo_lab.study`."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np

from .. import stats
from ..io import write_text_atomic
from ..report import md_table
from .data import Study, git_history
from .figures import correlation_file, curve_file, draw
from .measures import Measure
from .plan import REPORT_MARK, Plan, PlanError
from .run import _rel
from . import screen
from .robust import mixed_seeds, near_ties
from .words import (bound, claim_words, finding, headline, held_out_line, interval, lead, left_out, past_range,
                    reading_line, robustness_section, took_word, verdict_word, _fmt)


# ---------------------------------------------------------------------------------------------------------------

def _per_seed(values: dict) -> str:
    return ", ".join(_fmt(v, signed=False) for v in values.values()) or "—"


def confidence(study: Study) -> tuple[float, str]:
    """The report's one confidence level, ``1 - alpha``, and its words ("95%"): every table, figure, interval and
    ± of a report uses it (issue 80: a plan at alpha 0.1 printed 90% headlines beside 95% tables)."""
    conf = 1 - study.plan.alpha
    return conf, f"{100 * conf:.4g}%"


def z_of(conf: float) -> float:
    """The two-sided normal quantile at ``conf`` (the start's ± its sampling error)."""
    from scipy.stats import norm

    return float(norm.ppf(0.5 + conf / 2))


def arm_table(study: Study, measure: Measure) -> list:
    conf, pct = confidence(study)
    z = z_of(conf)
    rows, unread = [], []
    for name, a in study.data.items():
        v, why = study.read_runs(name, measure)  # each run read once: its value, or why it has none
        unread += [f"{a.arm.label} seed {s} ({w})" for s, w in sorted(why.items())]
        st = study.start(name, measure)
        # fmt_ci says "the n seeds agree exactly: no interval" itself where they do
        cells = stats.fmt_ci(list(v.values()), clip=measure.metric.clip, confidence=conf) if v else "—"
        rows.append([a.arm.label, a.arm.method, f"{len(v)} of {len(a.arm.seeds)}", cells,
                     f"{st[0]:.3f} ± {z * st[1]:.3f}" if st else "—", _per_seed(v)])
    out = md_table(["arm", "method", "seeds", f"{measure.text}: mean [{pct} t-interval over seeds]",
                    f"start (± {z:.3g} × its sampling s.e., {pct})", "per seed"], rows)
    if unread:
        out += ["", f"Left out of {measure.text} by its definition, kept for the other measures: " + "; ".join(unread)
                + "."]
    return out


def method_line(study: Study) -> str:
    """The conventions the verdicts rest on, as the plan declares them, in words."""
    p = study.plan
    corr = (f"Holm's step-down correction over each family at family-wise α = {p.alpha:g}" if p.correction == "holm"
            else f"no correction (each comparison at α = {p.alpha:g})")
    rules = "; ".join(f"{h.name}'s size rule reads " + ("the per-comparison interval" if h.interval == "per-comparison"
                                                       else "the Holm-level interval (its step's level)")
                      for h in p.hypotheses if h.interval)
    return (f"**Method (declared in the plan).** Intervals: {study.conventions.words()}"
            + (" (`df = \"welch\"`)" if p.df == "welch" else " (`df = \"min-n\"`)") + f"; {corr}"
            + (f"; {rules}" if rules else "") + ". Every verdict below is re-read under the alternatives in "
            "\"Does the verdict depend on a convention?\".")


def render_report(study: Study, extra_sections: list | None = None, extra_headline: str | None = None,
                  extra_deviations: list | None = None) -> str:
    """The report. ``extra_headline`` (an extras module's ``headline``) is printed as the authors' reading, under
    the engine's verdict and labelled as no verdict: an extras module never words the study's verdict."""
    p = study.plan
    md = [f"# {p.title}", "",
          f"{REPORT_MARK} {p.path.name}` from the tracked runs, unrounded"
          + (f"; the plan, written before any run, is [{p.prose}]({p.prose})" if p.prose else "")
          + f"; the plan file is [{p.path.name}]({p.path.name}).", ""]
    if p.port:
        md += [f"> **A port, not a pre-registration.** {p.port}", ""]
    if p.question:
        md += [f"**Question.** {p.question}", ""]
    if not study.complete:
        md += [f"**Interim: {study.done} of {study.total} runs finished.** The plan's comparisons are read once "
               "every run has finished; until then the numbers below are shown and no verdict is drawn.", ""]
    first = [lead(study), ""] if lead(study) else []
    if study.complete and study.planned:  # the first screen (issue 107): the sentence, the figure, one row each
        first += ["![the planned comparisons (black) and the exploratory ones (grey), each with its interval]"
                  "(comparisons.png)", "", *screen.table(study), ""]
    md += ["## What it found", "", *first, "## The verdicts in full", "", finding(study), ""]
    if extra_headline:
        md += ["**The authors' reading, not a verdict** (the study's extras module; the verdicts are the engine's, "
               "above): " + extra_headline, ""]
    md += [method_line(study), ""]
    for fam, rows in study.readings.items():
        m = len([r for r in rows if not r.same_as])
        twins = len(rows) - m
        corr = (f"Holm over {m} at family-wise {p.alpha:g}" + (f"; {twins} listed twice, counted once" if twins
                                                                else "")
                if p.correction == "holm" else "no correction")
        md += [f"### Planned comparisons{'' if fam == 'planned' else ': ' + fam} ({corr})", ""]
        md += [f"- {reading_line(study, r)}" for r in rows]
        md += [""]
    md += extreme_sections(study)
    if p.selections:
        conf, pct = confidence(study)
        ties = {name: (win, run, r) for name, win, run, r in near_ties(study)}
        md += ["## Selections (on the validation split, before the test comparisons)", ""]
        for name, sel in p.selections.items():
            rows = [[p.arms[a].label, stats.fmt_ci(list(study.values(a, sel.by).values()), confidence=conf)
                     if study.values(a, sel.by) else "—"] for a in sel.among]
            chosen = study.chosen(name)
            best = "lowest" if sel.by.better == "lower" else "highest"
            md += [f"**{name}**: the arm with the {best} mean {sel.by.text} among {len(sel.among)}: "
                   + (f"**{p.arms[chosen].label}**." if chosen else "not chosen yet (its candidates are unfinished).")]
            ranked = study.ranking(name)
            if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
                md[-1] += (f" An exact tie with {p.arms[ranked[1][0]].label} ({ranked[0][1]:.3f}): the first listed "
                           "wins a tie.")
            if name in ties:
                win, run, r = ties[name]
                diff = (f"{interval(r)} ({pct} t-interval, {'Welch–Satterthwaite' if p.df == 'welch' else 'min-n'} "
                        "df)" if r.lo is not None else f"{_fmt(r.d)} (no interval)")
                md[-1] += (f" **A near-tie**: {p.arms[win].label} − {p.arms[run].label} = {diff}, not separated, so "
                           "the choice rests on noise; every planned comparison naming it is re-read with the "
                           "runner-up (\"Does the verdict depend on a convention?\").")
            md += [""] + md_table(["candidate", f"{sel.by.text}: mean [{pct} t-interval over seeds]"], rows) + [""]
    md += ["## Is the evaluation held out?", "",
           "The overlap between each evaluation's problems and the training pool its arm draws from, computed from "
           "the settings (the same problems every run of the arm sees):", ""]
    md += held_out_line(study) + [""]
    man = study.manipulation()
    if man:
        md += ["## Did the treatment take? (manipulation check)", "",
               "Each arm's change from its start on the measure its training targets, with the start's own "
               "sampling error; a treatment that did not move it cannot show an effect elsewhere.", ""]
        for name, meas, r in man:
            label = p.arms[name].label
            if r.d is None:
                md.append(f"- {label} ({meas.text}): {r.why_not}.")
                continue
            word = took_word(r)
            way = "up" if r.d > 0 else "down"
            md.append(f"- {label} ({meas.text}): {interval(r)}: " + {
                "took": "took" + (f" ({way} from the start)" if meas.better == "neutral" else ""),
                "wrong way": f"**moved it the wrong way** ({way} from the start; {meas.better} is better)",
                "did not move": "**did not move it** (its interval includes no change)"}[word] + ".")
        md += [""]
    md += truncation_section(study)
    md += ["## Results per arm", ""]
    if any(isinstance((a.start or {}).get("sampling"), dict) and a.start["sampling"].get("distinct")
           for a in study.data.values()):
        md += ["The start's sampling error counts problems, not draws: the evaluation sampled each distinct problem "
               "once and gave its counts to every draw of it (`eval_distinct`), so draws of one problem share their "
               "samples.", ""]
    for meas in [p.primary, *p.secondary]:
        md += [f"### {meas.text}" + (" (primary)" if meas is p.primary else " (secondary, descriptive)"), ""]
        md += arm_table(study, meas) + [""]
    figs = [f for f in ("arms.png", "comparisons.png") if (p.home / f).is_file() or study.done]
    md += [f"![each arm's {p.primary.text} per seed, with its mean and {confidence(study)[1]} interval](arms.png)", ""
           ] if figs else []
    if figs and not (study.complete and study.planned):  # shown on the first screen once the study is complete
        md += ["![the planned and exploratory comparisons with their intervals](comparisons.png)", ""]
    if study.exploratory:
        md += ["## Exploratory readings (not planned: intervals, no correction, no verdict)", ""]
        for r in study.exploratory:
            out = left_out(study, r)
            if r.d is None:
                md.append(f"- {r.spec.label} ({r.spec.measure.text}): {r.why_not}." + (" " + out if out else ""))
                continue
            how = {"welch": "Welch", "paired": "paired by seed", "start": "with the start's error",
                   "level": f"against {r.spec.b}", "interaction": "difference of differences"}[r.kind]
            cw = claim_words(study, r)
            md.append(f"- {r.spec.label} ({r.spec.measure.text}): {interval(r)} ({how}); {bound(study, r)}."
                      + (" " + cw if cw else "") + (" " + out if out else ""))
        md += [""]
    md += curve_sections(study)
    md += step_sections(study)
    md += correlation_sections(study)
    md += robustness_section(study)
    md += extra_sections or []
    md += ["## Deviations from the plan", ""]
    dev = [f"- {d}" for d in [*p.deviations, *(extra_deviations or [])]] + \
        [f"- (detected) {d}" for d in study.detected_deviations()] + [f"{GIT_LINE}{d}" for d in git_history(p)]
    missing = [f"{n} " + ("seeds " if len(a.missing) > 1 else "seed ") + ", ".join(map(str, a.missing))
               for n, a in study.data.items() if a.missing]
    if missing:
        dev.append("- (detected) Not finished: " + "; ".join(missing) + ".")
    md += dev or ["None found."]
    hours = study.machine_hours()
    if hours > 0:
        took = f"{hours:.1f} hours" if hours >= 1 else (f"{60 * hours:.0f} minutes" if hours >= 1 / 60
                                                         else "under a minute")
        md += ["", f"Run time of the finished runs, summed over runs: {took} of training and evaluation"
               + (f" (the plan's budget: {p.budget_hours:g} hours, read as the same sum)" if p.budget_hours else "")
               + ". Runs trained side by side on one machine take less wall-clock time than this."]
    else:  # issue 107: no "0.0 hours" for runs that record no time (simulated ones)
        md += ["", "The finished runs record no run time (runs written without training record none)."]
    if p.corrections:
        md += ["", "## Corrections", "", "What this report says differently from its earlier editions (the report "
               "written by hand, or an earlier edition of the engine), and why:", ""] + [f"- {c}" for c in p.corrections]
    md += ["", "## How to reproduce", "", "```", f"grpo-lab study run {_rel(p.path, Path.cwd())}     # trains "
           "what is missing (resumable; --workers N, --shard K/N)",
           f"grpo-lab study report {_rel(p.path, Path.cwd())}  # this page and its figures", "```", ""]
    return "\n".join(md)


TRUNCATION_WARNING = 0.20  # above this share of completions cut at the length limit, the report warns


def _and(names: list) -> str:
    """``a``, ``a and b``, ``a, b and c``: a list in a sentence."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def truncation_section(study: Study) -> list:
    """The design check on the length limit (issue 80): the share of completions cut at ``max_completion_length``
    at the start (the start's evaluation, where it recorded it) and in each arm's first and last tenth of training
    steps (TRL's ``completions/clipped_ratio`` in each run's metrics file), with a warning above
    :data:`TRUNCATION_WARNING`: a reward the limit cuts off is a limit of the design, not of the method."""
    from .measures import TRUNCATED, _share, tenth

    conf, pct = confidence(study)
    limits = sorted({a.arm.config.max_completion_length for a in study.data.values()})
    md = ["## Are completions cut at the length limit? (design check)", "",
          f"The share of sampled completions that stopped at the limit ({', '.join(map(str, limits))} tokens) "
          f"instead of ending: at the start (its evaluation's samples) and over the first and last tenth of each "
          f"arm's training steps (mean over seeds, {pct} t-interval). Above {TRUNCATION_WARNING:.0%}, the limit "
          "itself may bound what a run can show.", ""]
    warn = []
    starts = {}  # each start's directory: (its share, the arms that share it), for the warning's words
    for name, a in study.data.items():
        if a.start is not None:
            samp = a.start.get("sampling") if isinstance(a.start.get("sampling"), dict) else {}
            starts.setdefault(_rel(a.start_dir, study.plan.home), (samp.get("truncated"), []))[1].append(name)
    unrecorded = [w for w, (share, _) in starts.items() if share is None]
    if unrecorded:
        md.append(f"- The start ({', '.join(f'`{w}/start.json`' for w in unrecorded)}): not recorded (an evaluation "
                  "records its share since issue 80).")
    for where, (share, arms) in starts.items():
        if share is not None:
            md.append(f"- The start (`{where}/start.json`): {share:.3f} of its sampled completions cut.")
            if share > TRUNCATION_WARNING:  # several starts (one per setting that changes it): each by its arms
                warn.append(f"the start ({share:.2f})" if len(starts) == 1 else
                            f"the start of {_and(arms)} ({share:.2f})")
    rows, short = [], []
    for name, a in study.data.items():
        first, last = [], []
        for seed, r in a.runs.items():
            try:
                v = _share(TRUNCATED)(r)
            except (KeyError, ValueError) as e:
                short.append(f"{name} seed {seed} ({str(e).strip(chr(39))[:140]})")
                continue
            n = tenth(v.size)
            first.append(float(v[:n].mean()))
            last.append(float(v[-n:].mean()))
        cells = [stats.fmt_ci(x, confidence=conf) if x else "—" for x in (first, last)]
        rows.append([a.arm.label, str(len(first)), *cells])
        for when, x in (("first", first), ("last", last)):
            if x and float(np.mean(x)) > TRUNCATION_WARNING:
                warn.append(f"{a.arm.label}, {when} tenth ({np.mean(x):.2f})")
    md += [""] if starts else []
    md += md_table(["arm", "runs", f"cut, first tenth of steps [{pct}]", f"cut, last tenth of steps [{pct}]"], rows)
    if short:
        md += ["", f"Not in the training log of {len(short)} run(s), left out of their cells: " + "; ".join(short[:6])
               + ("; ..." if len(short) > 6 else "") + "."]
    if warn:
        md += ["", f"**Warning**: more than {TRUNCATION_WARNING:.0%} of completions were cut at the length limit in "
               + "; ".join(warn) + ". A completion cut before its answer scores 0 whatever the method, so the "
               "limit may bound what these runs can show; read a null in its light."]
    return md + [""]


def curve_sections(study: Study) -> list:
    """Each ``[[curves]]`` reading: a table of the points per line and its figure (exploratory, no verdict)."""
    if not study.curves:
        return []
    md = ["## Curves (exploratory: each point one arm's mean, no verdict)", ""]
    for i, cr in enumerate(study.curves):
        cv = cr.curve
        pct = confidence(study)[1]
        md += [f"### {cv.label}", "", f"{cv.measure.text} against `{cv.x}`, one line per method (and per other "
               f"setting the arms vary): each point is an arm's mean over its finished seeds with a {pct} "
               "t-interval (the arm's n − 1 degrees of freedom). Read two lines' gap at a setting from the planned "
               "comparisons, not from here.", ""]
        lo_hi = cv.measure.metric.clip or (-float("inf"), float("inf"))
        cut = (lambda v: min(max(v, lo_hi[0]), lo_hi[1]))  # as arm_table
        rows = [[label, f"{x:g}", f"{m:.3f}" + (f" [{cut(lo):.3f}, {cut(hi):.3f}]" if lo is not None else
                                                " (one seed)"), str(n)]
                for label, pts in cr.lines.items() for x, m, lo, hi, n in pts]
        md += md_table(["line", cv.x, f"{cv.measure.text}: mean [{pct} t-interval]", "seeds"], rows) if rows else \
            ["No arm of this curve has a finished run yet."]
        if rows:
            md += ["", f"![{cv.label}, one line per method]({curve_file(i, cv)})"]
        md += [""]
    return md


def extreme_picks(study: Study, ex) -> tuple:
    """``(read, [(favour, side, reading or None), ...])`` for one ``[[extremes]]``: how many of its comparisons can
    be read, then for each side of 0 the words for it (``"in sign's favour"``, ``"sign − drgrpo above 0"``; ``a``
    and ``b`` unless every comparison is one method minus another) and the comparison furthest out on it."""
    rows = [r for r in study.planned if r.spec.label in ex.comparisons]
    methods = {(study.plan.arms[r.spec.a].method, study.plan.arms[r.spec.b].method)
               for r in rows if r.spec.a in study.plan.arms and r.spec.b in study.plan.arms and r.spec.c is None}
    a, b = next(iter(methods)) if len(methods) == 1 and len(rows) == len(ex.comparisons) else ("a", "b")
    read = [r for r in rows if r.d is not None]
    picks = []
    for sign, pick, favour, above in ((1, max, a, "above"), (-1, min, b, "below")):
        on_side = [r for r in read if sign * r.d > 0]
        picks.append((f"in {favour}'s favour", f"{a} − {b} {above} 0",
                      pick(on_side, key=lambda x: x.d) if on_side else None))
    return len(read), picks


def extreme_sections(study: Study) -> list:
    """Each ``[[extremes]]``: which of its planned comparisons lies furthest above 0 and which furthest below, each
    with its interval and its family's verdict (no further test: the family's correction already covers choosing
    among them). The sides are named by the methods when every comparison is one method minus another."""
    out = []
    for ex in study.plan.extremes:
        n_read, picks = extreme_picks(study, ex)
        out += [f"### {ex.label}", "", f"Among {len(ex.comparisons)} planned comparisons ({', '.join(ex.comparisons)}),"
                " each read in its family above: choosing the largest after the fact needs no correction beyond the "
                "family's.", ""]
        for favour, side, r in picks:
            out.append(f"- Largest {favour} ({side}): " + (f"**{r.spec.label}**, {interval(r)}: {verdict_word(study, r)}."
                                                 if r else f"none of the {n_read} read lies on this side."))
        if n_read < len(ex.comparisons):
            out.append(f"- {len(ex.comparisons) - n_read} of them cannot be read yet.")
        out += [""]
    return out


def step_sections(study: Study) -> list:
    """The plan's ``steps``: per arm, each training-log quantity's mean over the arm's finished seeds with a
    t-interval at the report's level (n − 1 df), cut at what the quantity can take; descriptive, no verdict. A run whose log lacks one
    (a quantity logged only since some version) is left out of that cell, and the arms short of it are named."""
    if not study.plan.steps:
        return []
    md = ["## Per-step quantities (descriptive: what the training logs show, no verdict)", "",
          "Each cell: one number per run, summarised from its training log as the legend says; the arm's mean over "
          f"its finished seeds with a {confidence(study)[1]} t-interval (the arm's n − 1 degrees of freedom).", ""]
    rows, short, damaged = [], {}, []
    for name, a in study.data.items():
        row = [a.arm.label, str(len(a.runs))]
        for m in study.plan.steps:
            got = {}
            for seed, r in a.runs.items():
                v, why = _step_value(m, r)  # one place tells a quantity the log lacks from a damaged one
                if why:  # issue 83: a damaged value is named with its file, never averaged in
                    damaged.append(f"`{m.text}` of {name} seed {seed}: {why}")
                elif v is None:
                    short.setdefault(m.text, {}).setdefault(name, []).append(seed)
                else:
                    got[seed] = v
            row.append(stats.fmt_ci(list(got.values()), clip=m.metric.clip, confidence=confidence(study)[0])
                       if got else "—")
        rows.append(row)
    md += md_table(["arm", "runs", *(m.text for m in study.plan.steps)], rows)
    md += ["", *(f"- `{m.text}`: {m.metric.about or m.metric.name}." for m in study.plan.steps)]
    for text in damaged:
        md.append(f"- Left out, damaged: {text}.")
    for text, arms in short.items():
        md.append(f"- `{text}` is not in the training log of {sum(map(len, arms.values()))} run(s), left out of "
                  "their arms' cells: " + "; ".join(
                      f"{name} " + ("(all its runs)" if len(seeds) == len(study.data[name].runs)
                                    else "seed" + ("s " if len(seeds) > 1 else " ") + ", ".join(map(str, seeds)))
                      for name, seeds in arms.items()) + ".")
    return md + [""]


def correlation_sections(study: Study) -> list:
    """Each ``[[correlations]]`` reading: Pearson's r across runs with its interval, R², and its figure
    (exploratory, no verdict)."""
    if not study.correlations:
        return []
    md = ["## Correlations across runs (exploratory: one point per run, no verdict)", "",
          f"Each finished run is one point; Pearson's r over all of them with its {confidence(study)[1]} interval "
          "(Fisher's z), and R². "
          "The arms' own differences are part of it: it describes how the two measures move together over these "
          "runs, not what causes what.", ""]
    rows = []
    for co in study.correlations:
        c = co.correlation
        what = (f"{co.r:+.3f} [{co.lo:+.3f}, {co.hi:+.3f}]" if co.r is not None else co.why_not)
        rows.append([c.label, c.x.text, c.y.text, str(co.n), what, "—" if co.r2 is None else f"{co.r2:.3f}"])
    md += md_table(["reading", "x", "y", "runs", f"Pearson r [{confidence(study)[1]}]", "R²"], rows)
    for i, co in enumerate(study.correlations):
        if co.n:
            md += ["", f"![{co.correlation.label}, one dot per run]({correlation_file(i)})"]
    return md + [""]


def verdict_line(study: Study, link: str, form: str = "verdict") -> str:
    """The study's line for a page that carries it (the README, a guide page): the engine's headline (an extras
    module never replaces it), then, in the ``"verdict"`` form, each planned comparison's interval, a null with the
    differences it rules out; the ``"headline"`` form stops after the headline and sends the reader to the
    report."""
    head = f"**{study.plan.title}** ([report]({link})) "
    if not study.complete:
        return head + headline(study)
    head += (lead(study) + " ") if lead(study) else ""
    if form == "headline":
        return head + headline(study, brief=True) + " Each planned comparison's interval is in the report."
    parts = []
    for r in study.planned:
        if r.d is None:
            parts.append(f"{r.spec.label}: {r.why_not}")
        elif r.apart:
            parts.append(f"{r.spec.label} {interval(r)} ({verdict_word(study, r)})")
        else:
            parts.append(f"{r.spec.label} {interval(r)} " + (
                f"({bound(study, r)})" if any(past_range(r))
                else f"(rules out more than {_fmt(r.hi)} and less than {_fmt(r.lo)})"))
    seeds = sorted({len(a.seeds) for a in study.plan.arms.values()})
    measures = sorted({r.spec.measure.text for r in study.planned})
    corr = "Holm" if study.plan.correction == "holm" else "no correction"
    ext = ""
    for ex in study.plan.extremes:  # which way the furthest of some comparisons lay, each with its family's verdict
        picks = [f"{favour}, {r.spec.label} {interval(r)} ({verdict_word(study, r)})" if r else f"{favour}, none"
                 for favour, _, r in extreme_picks(study, ex)[1]]
        ext += f" {ex.label}: " + "; ".join(picks) + "."
    return (head + headline(study) + f" Planned ({', '.join(measures)}, "
            f"{'/'.join(map(str, seeds))} seeds per arm, {100 * (1 - study.plan.alpha):.4g}% intervals, {corr}): "
            + "; ".join(parts) + "." + ext)


# ---------------------------------------------------------------------------------------------------------------
# Extras, outputs, --check.
# ---------------------------------------------------------------------------------------------------------------

def load_extras(plan: Plan):
    """The plan's extras module (readings that belong to this study only), or None."""
    if not plan.extras:
        return None
    path = plan.home / plan.extras
    if not path.is_file():
        raise PlanError(f"{plan.path}: extras = {plan.extras!r}: no such file")
    spec = importlib.util.spec_from_file_location(f"grpo_lab_study_extras_{abs(hash(str(path)))}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def fill(page: str, markers: str, block: str, where: str) -> str:
    begin, end = f"<!-- {markers}:begin -->", f"<!-- {markers}:end -->"
    if begin not in page or end not in page:
        raise PlanError(f"{where} holds no {begin} ... {end} block")
    a, b = page.index(begin) + len(begin), page.index(end)
    return page[:a] + "\n" + block + "\n" + page[b:]


def build(plan_path, root: Path | None = None) -> tuple[dict, object]:
    """Everything ``study report`` writes: ``({path: text}, draw())``. ``root``: the directory the outputs'
    pages are relative to (the repository: found upward from the plan, where a README.md and a pyproject.toml
    sit)."""
    study = Study.load(plan_path)
    p = study.plan
    extras = load_extras(p)
    sections = list(extras.sections(study)) if extras and hasattr(extras, "sections") else []
    head = extras.headline(study) if extras and hasattr(extras, "headline") and study.complete else None
    devs = list(extras.deviations(study)) if extras and hasattr(extras, "deviations") else []
    want = {p.home / p.report: render_report(study, sections, head, devs)}
    root = root or _root(p.home)
    for o in p.outputs:
        page = root / o["page"]
        if o["form"] == "data":
            _own_data_file(page, p)
            want[page] = json.dumps(study_data(study), indent=1, sort_keys=True, allow_nan=False) + "\n"
            continue
        text = want.get(page, page.read_text() if page.is_file() else "")
        want[page] = fill(text, o["markers"], verdict_line(study, o["link"], o["form"]), str(page))
    if extras and hasattr(extras, "outputs"):  # given the pages so far, so that it can add to one of them
        for path, text in extras.outputs(study, dict(want)).items():
            want[Path(path)] = text

    def drawing():
        if study.done:
            draw(study)
        if extras and hasattr(extras, "draw"):
            extras.draw(study)
    return want, drawing


def _number(x):
    """A float for JSON, None where there is none (a missing or non-finite value is never written as NaN)."""
    import math

    return None if x is None or not math.isfinite(float(x)) else float(x)


def _own_data_file(page: Path, plan: Plan) -> None:
    """A data output writes a whole file: refuse one that is not this engine's (a user's file is never overwritten),
    and a directory that does not exist (a typo in the page is not created)."""
    if not page.parent.is_dir():
        raise PlanError(f"{plan.path.name}: [[outputs]] data page {page}: its directory does not exist")
    if page.exists():
        try:
            mine = json.loads(page.read_text()).get("written_by") == WRITTEN_BY
        except (ValueError, AttributeError, UnicodeDecodeError):
            mine = False
        if not mine:
            raise PlanError(f"{plan.path.name}: [[outputs]] data page {page} exists and was not written by "
                            f"`{WRITTEN_BY}`: it is not overwritten (remove it, or name another page)")


WRITTEN_BY = "grpo-lab study report"


def study_data(study: Study) -> dict:
    """What a notebook reads of a study (an ``[[outputs]]`` page with ``form = "data"``): every arm's finished runs
    on each plan measure, its start, the settings that differ between arms; each planned reading under the plan's
    conventions (the difference, its interval at the plan's level, the level Holm read it at, separated or not once
    the family is complete) and each exploratory one; each run's ``steps`` quantities (the training log's, as the
    report's steps table reads them: None where a log lacks one) and, under ``damaged``, each damaged one with why
    (issue 83: named, never read as missing); the arm each selection chose; each hypothesis's judgement; each curve's
    points; each correlation (Pearson's r, its interval, R²); every planned verdict under each alternative
    (``robustness``); the plain lead and the headline. Written as JSON with the report and checked by ``report
    --check``, so a notebook that asserts these numbers fails when the runs change (lessons 12 and 13 read studies 4
    and 5)."""
    from .readings import judge, varied_settings

    p = study.plan
    settings, varied = varied_settings(p, p.arms)
    measures = [p.primary, *p.secondary]
    arms = {}
    for name, a in study.data.items():
        arms[name] = {
            "method": a.arm.method,
            "settings": {k: settings[name].get(k) for k in varied},
            "seeds": {str(seed): {m.text: _number(m.reading(r)) for m in measures}  # None: no reading (NoReading)
                      for seed, r in sorted(a.runs.items())},
            "start": {m.text: [_number(x) for x in st] for m in measures
                      for st in [study.start(name, m)] if st is not None},
        }
        if p.steps:  # the steps table's quantities, per run; a damaged value is None there and named here
            got = {str(seed): {m.text: _step_value(m, r) for m in p.steps} for seed, r in sorted(a.runs.items())}
            arms[name]["steps"] = {seed: {k: v for k, (v, _) in q.items()} for seed, q in got.items()}
            bad = {seed: {k: why for k, (_, why) in q.items() if why} for seed, q in got.items()}
            arms[name]["damaged"] = {seed: whys for seed, whys in bad.items() if whys}
    def row(r, family):
        return {"label": r.spec.label, "family": family, "a": r.spec.a, "b": r.spec.b,
                "measure": r.spec.measure.text, "n_a": r.n_a, "n_b": r.n_b, "d": _number(r.d),
                "lo": _number(r.lo), "hi": _number(r.hi), "level": _number(r.level),
                "separated": r.apart, "why_not": r.why_not,
                "counted_unread": r.counted_unread}  # unread for want of readings, counted by the correction as p = 1

    planned = [row(r, family) for family, rows in study.readings.items() for r in rows]
    exploratory = [row(r, "exploratory") for r in study.exploratory]  # intervals at the plan's level, no verdict
    selections = {name: {"among": list(sel.among), "by": sel.by.text, "chosen": study.chosen(name)}
                  for name, sel in p.selections.items()}  # "chosen": None until every candidate has all its runs
    correlations = [{"label": c.correlation.label, "x": c.correlation.x.text, "y": c.correlation.y.text,
                     "arms": list(c.correlation.arms), "n": c.n, "r": _number(c.r), "lo": _number(c.lo),
                     "hi": _number(c.hi), "r2": _number(c.r2), "why_not": c.why_not} for c in study.correlations]
    manipulation = [{"arm": name, "measure": meas.text, "better": meas.better, "d": _number(r.d), "lo": _number(r.lo),
                     "hi": _number(r.hi), "word": took_word(r), "why_not": r.why_not}
                    for name, meas, r in study.manipulation()]  # the report's words: took, wrong way, did not move
    hypotheses = []
    for h in p.hypotheses:
        j = judge(h, study.reading(h.test))
        hypotheses.append({"name": h.name, "says": h.says, "test": h.test, "predicts": h.predicts,
                           "size": h.size, "verdict": j.verdict, "size_rule": j.size, "margin": h.margin,
                           "idle": j.idle,  # within +-margin by the rule's interval; None without a margin
                           "rule_interval": [_number(j.rule_lo), _number(j.rule_hi)], "rule_level": j.rule_level})
    curves = [{"label": c.curve.label, "x": c.curve.x, "measure": c.curve.measure.text,
               "lines": {line: [[_number(x), _number(m), _number(lo), _number(hi), n] for x, m, lo, hi, n in pts]
                         for line, pts in c.lines.items()},
               "arms": c.arms} for c in study.curves]  # "arms": each line's arm per point, in the points' order
    robustness = []  # every planned verdict under each alternative (issue 80: a lesson reads why a verdict is fragile)
    for row in study.robust:
        if row.kind == "comparison":
            name = row.what.spec.label
            alts = {a: {"separated": x.apart, "d": _number(x.d), "lo": _number(x.lo), "hi": _number(x.hi),
                        "why_not": x.why_not} for a, x in row.got.items()}
        else:
            name = row.what[0].name
            alts = {a: {"verdict": x.verdict, "size_rule": x.size,
                        "rule_interval": [_number(x.rule_lo), _number(x.rule_hi)]} for a, x in row.got.items()}
        robustness.append({"kind": row.kind, "name": name, "flips": list(row.flips), "narrow": list(row.narrow),
                           "alternatives": alts})
    return {"written_by": WRITTEN_BY, "title": p.title, "plan": _rel(p.path, _root(p.home)),
            "done": study.done, "total": study.total, "complete": study.complete,
            "alpha": p.alpha, "correction": p.correction, "df": p.df,
            "primary": p.primary.text, "measures": [m.text for m in measures], "steps": [m.text for m in p.steps],
            "varied": varied, "arms": arms,
            "selections": selections, "planned": planned, "exploratory": exploratory, "manipulation": manipulation,
            "hypotheses": hypotheses, "curves": curves,
            "correlations": correlations, "robustness": robustness, "lead": lead(study), "headline": headline(study),
            "mixed": [{"arm": a, "seed": s, "why": why} for a, s, why in (mixed_seeds(study) if study.complete else [])]}


def _step_value(m, run) -> tuple:
    """One run's value of a ``steps`` quantity, and why it is damaged: ``(value, None)``, or ``(None, None)`` where
    its log lacks the quantity, or ``(None, why)`` for a damaged value (an entry the log check refuses, or a summary
    that is not a finite number). The report's steps table (:func:`step_sections`) and the data output
    (:func:`study_data`) both read a run through it, so the two never disagree on what is missing and what is
    damaged; a damaged value is named and left out of the arm's cell, and :func:`data_values` refuses it."""
    import math

    try:
        v = m.of(run)
    except KeyError:
        return None, None
    except ValueError as e:
        return None, str(e)
    if not math.isfinite(float(v)):
        return None, f"its summary over the training log is {v!r}, not a finite number (damaged?)"
    return float(v), None


def data_arm(data: dict, method: str, **settings) -> str:
    """The one arm of a study's data output (:func:`study_data`) that runs ``method`` with ``settings``, named by
    the settings that differ between arms (``data_arm(s4, "sign", learning_rate=3e-4, lr_scheduler="cosine")``).
    A notebook or a test that reads one arm by what it is, not by its name in the plan, uses this; none or several
    matching is an error that names what the data hold."""
    unknown = sorted(set(settings) - set(data["varied"]))
    if unknown:
        raise KeyError(f"{', '.join(unknown)}: not a setting that differs between this study's arms "
                       f"({', '.join(data['varied']) or 'none'})")
    found = [name for name, a in data["arms"].items()
             if a["method"] == method and all(a["settings"].get(k) == v for k, v in settings.items())]
    if len(found) != 1:
        raise KeyError(f"{len(found)} arms run {method} with {settings or 'any settings'} "
                       f"({', '.join(found) or 'none'}); the arms: " +
                       "; ".join(f"{n} ({a['method']}, {a['settings']})" for n, a in data["arms"].items()))
    return found[0]


def data_values(data: dict, arm: str, measure: str | None = None) -> list:
    """The per-seed values of ``measure`` (default: the study's primary) in ``arm``'s finished runs of a study's data
    output (:func:`study_data`), in seed order: a plan measure, or one of the plan's ``steps`` quantities (the
    training log's, None for a run whose log lacks it). A damaged value in a log is a ValueError naming the run and
    what is wrong, never a None a lesson would read as "not logged"."""
    measure = measure or data["primary"]
    if measure in data["measures"]:
        seeds = data["arms"][arm]["seeds"]
    elif measure in data.get("steps", []):
        seeds = data["arms"][arm]["steps"]
        bad = [f"seed {s}: {why[measure]}" for s, why in sorted(data["arms"][arm].get("damaged", {}).items(),
                                                                  key=lambda x: int(x[0])) if measure in why]
        if bad:
            raise ValueError(f"{measure} of {arm} is damaged in {len(bad)} run(s), left out of the report's steps "
                             f"table: " + "; ".join(bad))
    else:
        steps = f"; steps: {', '.join(data['steps'])}" if data.get("steps") else ""
        raise KeyError(f"{measure}: the data hold {', '.join(data['measures'])}{steps}")
    return [seeds[s][measure] for s in sorted(seeds, key=int)]


def _root(start: Path) -> Path:
    for d in [start, *start.resolve().parents]:
        if (d / "pyproject.toml").is_file() or (d / ".git").exists():
            return d
    return start


GIT_LINE = "- (from git) "  # a deviation read from the repository's history: it depends on the checkout


def _without_git(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith(GIT_LINE))


def write_or_check(want: dict, check: bool, echo=print) -> int:
    """Write every page; with ``check``, write nothing and name every page that differs (exit status 1). The lines
    read from git's history are left out of the comparison: a shallow clone or an uncommitted edit changes them,
    not the runs."""
    if check:
        stale = [p for p, text in want.items()
                 if not Path(p).is_file() or _without_git(Path(p).read_text()) != _without_git(text)]
        for p in stale:
            echo(f"{_rel(Path(p), Path.cwd())} differs from what grpo-lab study report writes; run it")
        return 1 if stale else 0
    for p, text in want.items():
        write_text_atomic(p, text)
        echo(f"wrote {_rel(Path(p), Path.cwd())}")
    return 0


def status_lines(study: Study) -> list:
    """``grpo-lab study status``: per arm, finished, missing and refused runs; the run time so far, summed."""
    out = [f"{study.plan.title}: {study.done} of {study.total} runs finished"
           + (" (complete)" if study.complete else "")]
    for name, a in study.data.items():
        out.append(f"  {name} ({a.arm.method}): {len(a.runs)} of {len(a.arm.seeds)}"
                   + (f"; missing seeds {', '.join(map(str, a.missing))}" if a.missing else "")
                   + (f"; refused {len(a.refused)}: " + "; ".join(f"{f} ({why})" for f, why in a.refused)
                      if a.refused else ""))
    out.append(f"  run time so far, summed over runs: {study.machine_hours():.1f} h"
               + (f" of the plan's {study.plan.budget_hours:g}" if study.plan.budget_hours else ""))
    return out
