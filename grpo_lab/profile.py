"""``grpo-lab profile``: before anyone trains, how starved will GRPO be on this model and these prompts?

For a policy and a task (:class:`grpo_lab.config.RunConfig`'s ``policy``, ``task``, ``eval_problems``
= m, ``eval_samples`` = n, ``max_completion_length``, ``eval_seed``): n samples at temperature 1
on each of m problems of the task's test split, graded by the task's grader, then

- per-problem success counts, and the fraction of problems never solved;
- unbiased pass@k (Chen et al. 2021) with a 95% bootstrap interval over problems;
- the degenerate-group fraction expected at G = 2, 4, 8, 16 (up to n): per problem
  ``C(n-c, G)/C(n, G) + C(c, G)/C(n, G)``, an unbiased estimate of ``(1-p)^G + p^G``, averaged
  with a 95% t-interval over problems, split into all-fail and all-pass, beside the i.i.d.
  prediction at the mean success rate (the Jensen gap, arXiv 2605.07689);
- the smallest G at which a given share of groups carries a signal.

TRL logs ``frac_reward_zero_std`` only once training runs; this answers the question first.
Layout of a profile directory (``runs/profile-<timestamp>/``)::

    config.json            the settings (written first) and their fingerprint
    chunks/NNNN.json       one chunk of problems each, written atomically when sampled
    profile.json           every number of the report (written at the end)
    profile.png            the figure
    report.md              written last: it exists only when every chunk is done

An interrupted profile keeps its finished chunks: ``grpo-lab profile --resume DIR`` samples only the
missing ones (each chunk has its own seed, so a resumed profile equals an uninterrupted one).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

from .config import RunConfig
from .io import DirLock, fingerprint, read_json, write_json_atomic, write_text_atomic
from .passk import pass_at_k_curve
from .report import duration, md_table
from .runner import apply_threads, as_prompted, eval_problems, policy_adapter, run_dtype, system_prompt
from .starvation import degenerate_per_problem
from .stats import mean_ci

GS = (2, 4, 8, 16)
KS = (1, 2, 4, 8, 16, 32, 64)
CHUNK = 16  # problems per chunk file
PILOT = True  # a one-chunk profile first samples one problem alone, to say how long it will take (issue 61)
# arXiv 2605.07689 (Qwen3.5-9B, GSM8K): what the profile is set beside
PAPER = {"degenerate_G4": 0.69, "measured_G2": 0.90, "iid_G2": 0.56}
PROFILE_KEYS = ("policy", "task", "data", "eval_problems", "eval_samples", "eval_seed", "max_completion_length",
                "backend", "smoke", "dtype", "generation", "generation_dtype")


def profile_settings(cfg: RunConfig) -> dict:
    """The settings that decide a profile's numbers (threads and batch size only decide its speed)."""
    return {k: v for k, v in asdict(cfg).items() if k in PROFILE_KEYS}


def summarize(n: int, correct, share: float = 0.5, Gs=GS, ks=KS) -> dict:
    """Every number of a profile from ``correct`` (successes out of ``n`` per problem): a pure function."""
    c = np.asarray(correct, dtype=int)
    if c.size == 0:
        raise ValueError("no problems were profiled")
    if not 0 < share < 1:
        raise ValueError(f"share must lie in (0, 1), got {share}")
    p = c / n
    pbar = float(p.mean())
    out = dict(n_samples=int(n), n_problems=int(c.size), mean_success=pbar, never_solved=float(np.mean(c == 0)),
               always_solved=float(np.mean(c == n)), share=share, degenerate={})
    for G in (g for g in Gs if g <= n):
        fail, ok = degenerate_per_problem(n, c, G)
        m, lo, hi = mean_ci(fail + ok)
        out["degenerate"][int(G)] = dict(real=m, lo=lo, hi=hi, all_fail=float(fail.mean()), all_pass=float(ok.mean()),
                                         iid=(1 - pbar) ** G + pbar ** G, iid_all_fail=(1 - pbar) ** G,
                                         iid_all_pass=pbar ** G)
    # smallest G (2..n) at which at least `share` of groups are mixed, i.e. carry a signal
    out["smallest_G_for_share"] = next((G for G in range(2, n + 1)
                                        if 1 - sum(a.mean() for a in degenerate_per_problem(n, c, G)) >= share), None)
    curve = pass_at_k_curve(n, c, [k for k in ks if k <= n])
    out["pass_at_k"] = {int(k): dict(mean=float(m), lo=float(lo), hi=float(hi))
                        for k, m, lo, hi in zip(curve.ks, curve.mean, curve.lo, curve.hi)}
    return out


def _chunk_path(out: Path, i: int) -> Path:
    return out / "chunks" / f"{i:04d}.json"


def run_profile(out: Path, cfg: RunConfig | None, progress: bool = True, echo=print, batch_size: int = 64,
                command: str | None = None, share: float = 0.5) -> Path:
    """Profile ``cfg`` into ``out``, or finish the interrupted profile in ``out`` with its own settings
    (``cfg=None``, or the same settings); returns the report's path."""
    out = Path(out)
    with DirLock(out):
        conf_path = out / "config.json"
        if conf_path.is_file():
            conf = read_json(conf_path, "profile config")
            try:
                stored = RunConfig(**conf["settings"]).validate()
            except (KeyError, TypeError, ValueError) as e:
                raise ValueError(f"{conf_path} is not a valid grpo-lab profile config ({e})") from None
            known = set(conf["settings"])  # a field added to RunConfig since the profile started is not in it
            if conf.get("fingerprint") != fingerprint({k: v for k, v in profile_settings(stored).items() if k in known}):
                raise ValueError(f"{conf_path} was changed after the profile started; restore it or start anew")
            cfg, share = stored, conf.get("share", share)
        elif cfg is None:
            raise FileNotFoundError(f"{out} is not a grpo-lab profile directory (no config.json)")
        else:
            conf = dict(settings=asdict(cfg), fingerprint=fingerprint(profile_settings(cfg)), command=command,
                        share=share, created=time.strftime("%Y-%m-%d %H:%M:%S"))
            write_json_atomic(conf_path, conf)
        return _profile(out, cfg, conf, progress, echo, batch_size, share)


def _profile(out: Path, cfg: RunConfig, conf: dict, progress: bool, echo, batch_size: int, share: float) -> Path:
    from .generation import get_engine
    from .tasks import grade, grader_version

    threads = apply_threads(cfg.threads)
    problems = eval_problems(cfg)
    n_chunks = -(-len(problems) // CHUNK)
    (out / "chunks").mkdir(exist_ok=True)
    sizes = [len(problems[i * CHUNK:(i + 1) * CHUNK]) for i in range(n_chunks)]
    todo = [i for i in range(n_chunks) if not _chunk_done(_chunk_path(out, i), echo, sizes[i], cfg.eval_samples)]
    if len(todo) < n_chunks:
        echo(f"resuming: {n_chunks - len(todo)} of {n_chunks} chunks already sampled in {out}")
    weights = None
    if todo:
        # chunks record the dtype the weights were loaded in; "default" (a GPU: the checkpoint's own) is known
        # only once they are loaded, so that case is checked after loading
        dtype = run_dtype(cfg, train=False)[0]
        earlier = {ch.get("dtype", "float32") for ch in _chunks(out, n_chunks)}  # before issue 26: float32
        if dtype != "default" and earlier - {dtype}:
            raise ValueError(_mixed_dtypes(out, earlier, f"this machine resolves dtype={cfg.dtype} to {dtype}"))
        t0 = time.perf_counter()
        model, tok, info = policy_adapter(cfg).load(cfg, lora=False, train=False)
        if earlier - {info.dtype}:
            raise ValueError(_mixed_dtypes(out, earlier, f"this machine loads the weights in {info.dtype} "
                                                         f"(dtype={cfg.dtype} resolves to {dtype})"))
        weights, load_s = info.weights, time.perf_counter() - t0
        prompted = as_prompted(tok, problems, system_prompt(cfg))
        sample = get_engine(cfg.generation).sampler(model, tok, batch_size=batch_size, dtype=cfg.generation_dtype)
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=sum(len(prompted[i * CHUNK:(i + 1) * CHUNK]) for i in todo), desc="problems",
                       unit="problem")  # the last chunk may be short: the bar ends at 100%
        if PILOT and len(todo) == 1 and sizes[todo[0]] > 1:  # one chunk (--quick): no pace to read before its end, so a pilot
            first = prompted[todo[0] * CHUNK]
            t0 = time.perf_counter()
            sample([first.prompt], cfg.eval_samples, max_new_tokens=cfg.max_completion_length, seed=cfg.eval_seed)
            echo(_pilot_line(time.perf_counter() - t0, sizes[todo[0]], cfg, threads, info.dtype))
        for done, i in enumerate(todo, 1):
            part = prompted[i * CHUNK:(i + 1) * CHUNK]
            t0 = time.perf_counter()
            cut: list = []
            comps = sample([p.prompt for p in part], cfg.eval_samples, max_new_tokens=cfg.max_completion_length,
                           seed=cfg.eval_seed + i, truncated=cut)
            secs = time.perf_counter() - t0
            new_tokens = int(sum(len(tok(c, add_special_tokens=False)["input_ids"]) for cs in comps for c in cs))
            ok = [[grade(c, p) for c in cs] for cs, p in zip(comps, part)]
            write_json_atomic(_chunk_path(out, i), dict(
                chunk=i, correct=[int(sum(o)) for o in ok],
                truncated=[int(sum(t)) for t in cut], truncated_wrong=[int(sum(t and not g for t, g in zip(ts, gs)))
                                                                      for ts, gs in zip(cut, ok)],
                answers=[p.answer for p in part], example=[cs[0] for cs in comps], seconds=secs,
                new_tokens=new_tokens, threads=threads, weights=weights, load_seconds=load_s, dtype=info.dtype,
                generation=cfg.generation, generation_dtype=cfg.generation_dtype, grader=grader_version()))
            if bar is not None:
                bar.update(len(part))
            if done < len(todo):  # issue 61: how long this machine will take, said after the first chunk
                left = sum(sizes[j] for j in todo[done:])
                echo(_pace_line(secs, len(part), left, cfg, threads, info.dtype, new_tokens))
        if bar is not None:
            bar.close()
    return write_profile_report(out, cfg, conf, share)


SMOKE_PROBLEMS = 50  # a profile of fewer problems opens with a smoke banner


def _pace_line(secs: float, problems: int, left: int, cfg: RunConfig, threads: int, dtype: str,
               new_tokens: int) -> str:
    """What a chunk took on this machine and what the rest will take at that pace (issue 61: a profile says how long
    it will run where it runs, since the project's machines differ by several-fold); the dtype with why it ran
    (issue 81)."""
    per = secs / max(problems, 1)
    return (f"pace on this machine ({threads} thread(s), {_dtype_words(cfg, dtype)}, {cfg.generation}): {secs:.0f} s for {problems} "
            f"problems x {cfg.eval_samples} samples ({new_tokens / max(secs, 1e-9):.0f} new tokens/s), so about "
            f"{duration(per * left)} for the {left} problems left; a shorter profile: --problems N (each problem "
            f"{per:.0f} s here), or stop it and finish later with --resume")


def _dtype_words(cfg: RunConfig, dtype: str) -> str:
    """The dtype that sampled and why (issue 81: ``--quick`` takes bfloat16 where the CPU has bf16 units)."""
    return f"{dtype}: {run_dtype(cfg, train=False)[1]}"


def _pilot_line(secs: float, problems: int, cfg: RunConfig, threads: int, dtype: str) -> str:
    """A one-chunk profile's forecast from one problem sampled alone first (its samples are not used: every call
    reseeds the sampler, so the profile's own samples are the same with or without the pilot)."""
    return (f"pilot on this machine ({threads} thread(s), {_dtype_words(cfg, dtype)}, {cfg.generation}): one problem x "
            f"{cfg.eval_samples} samples took {secs:.1f} s, so the {problems} problems will take about "
            f"{duration(secs * problems)} (sampled together they can be faster or, where the longest completions set "
            f"the pace, slower: 12 min against a forecast of 6 was seen, issue 81); a shorter profile: --problems N")


def chunk_problems(data, size: int, n: int) -> str | None:
    """What is wrong with a profile chunk against what ``_profile`` writes, or None: ``size`` counts of correct
    samples, each a whole number (not a bool) in [0, ``n``], and the seconds it took."""
    if not isinstance(data, dict):
        return "not a JSON object"
    c = data.get("correct")
    if not (isinstance(c, list) and all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= n for x in c)):
        return f"'correct' is not a list of counts between 0 and {n}"
    if len(c) != size:
        return f"{len(c)} problems where this chunk has {size}"
    if not (isinstance(data.get("seconds"), (int, float)) and not isinstance(data.get("seconds"), bool)):
        return "no 'seconds'"
    for key in ("truncated", "truncated_wrong"):
        t = data.get(key)
        if key in data and not (isinstance(t, list) and len(t) == size and all(
                isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= n for x in t)):
            return f"'{key}' is not {size} counts between 0 and {n}"
    return None


def _mixed_dtypes(out: Path, earlier: set, here: str) -> str:
    return (f"{out} was sampled with dtype {', '.join(sorted(earlier))}, and {here}: a profile mixes no dtypes. "
            "Resume it where the dtype resolves the same, or start a new profile")


def _chunk_done(path: Path, echo, size: int, n: int) -> bool:
    if not path.is_file():
        return False
    try:
        why = chunk_problems(read_json(path, "profile chunk"), size, n)
        if why is None:
            return True
    except ValueError as e:
        why = str(e)[:120]
    aside = path.with_name(path.name + ".damaged")
    path.replace(aside)
    echo(f"{path} is damaged ({why}); moved aside to {aside.name} and sampled again")
    return False


def _signed(x: float, digits: int = 3) -> str:
    """``+0.012`` / ``-0.012``, and ``+0.000`` for anything that rounds to zero (never ``-0.000``)."""
    text = f"{x:+.{digits}f}"
    return "+" + text[1:] if float(text) == 0 else text


def naive_word(naive: float, rounds: float, max_rounds: int) -> str:
    """How the naive 1/(1 - D) compares with the exact expected rounds: below it (a batch needs all its groups,
    not one), or above it where the cap of ``max_rounds`` binds (an earlier version said "underestimates" in both
    cases: 8.48 against 7.63 at D = 0.88)."""
    if abs(naive - rounds) < 0.005:
        return "agrees with it"
    if naive < rounds:
        return "underestimates it"
    return f"overestimates it here, since the cap of {max_rounds} rounds binds"


def advice(s: dict, max_new_tokens: int, G: int = 4, B: int = 16, max_rounds: int = 8, high_truncation=0.1) -> list:
    """"What to do", in sentences, from a profile's own numbers (``summarize``'s dict): the smallest G for the share
    of informative groups and its cost in completions against G = ``G``; what dynamic sampling would cost at this
    degeneracy (the exact expected rounds of notebook 09, batches of ``B`` groups, at most ``max_rounds``); the
    truncation rate with a suggestion when it is high; a plain sentence when the task is out of reach; else how to
    compare estimators on it fairly (each at its own best learning rate; study 3, issue 49)."""
    from .starvation import dynamic_sampling_rounds

    out = []
    d = s["degenerate"]
    D = d[G]["real"] if G in d else None
    share, g_share = s["share"], s["smallest_G_for_share"]
    if g_share is not None:
        out.append(f"**Group size**: at least {share:.0%} of groups carry a signal from G = {g_share}; that costs "
                   f"{g_share / G:.2g}x the completions per prompt of G = {G}" + (
                       " (G = 4 is already enough)." if g_share <= G else "."))
    else:
        out.append(f"**Group size**: no G up to {s['n_samples']} (the samples per problem) gives {share:.0%} of groups "
                   "a signal; a larger G alone will not fix this.")
    if D is not None:
        rounds = dynamic_sampling_rounds(min(max(D, 0.0), 1.0), B, max_rounds)
        naive = 1 / (1 - D) if D < 1 else float("inf")
        out.append(f"**Dynamic sampling** (`dapo`) at this degeneracy ({D:.2f} at G = {G}) generates about {rounds:.2f} "
                   f"rounds of {B} prompts per step (at most {max_rounds}; exact expectation, notebook 09; the naive "
                   f"1/(1 - D) = {naive:.2f} {naive_word(naive, rounds, max_rounds)}), i.e. {rounds:.2f}x the generation "
                   "of plain GRPO per step.")
    if "truncated" in s:
        t, tw = s["truncated"], s["truncated_wrong"]
        line = (f"**Truncation**: {t:.1%} of completions were cut at {max_new_tokens} new tokens ({tw:.1%} cut and "
                "graded wrong)")
        out.append(line + (f": more than {high_truncation:.0%}, so raise `--max-new-tokens` (or ask for shorter "
                           "answers) before reading the rest as the model's ability." if t > high_truncation else "."))
    else:
        out.append("**Truncation**: not recorded (a profile made before grpo-lab counted completions cut at the limit).")
    out_of_reach = s["never_solved"] >= 0.9 or (D is not None and D >= 0.95 and d[G]["all_fail"] >= 0.9 * D)
    if out_of_reach:
        out.append(f"**Out of reach**: {s['never_solved']:.0%} of the problems were never solved in {s['n_samples']} "
                   "samples, so almost every group is all-fail: this model cannot learn this task by RL from here. "
                   "Use an easier task (or fewer steps per problem), more new tokens if truncation is high, or a "
                   "supervised warm start first.")
    elif D is not None and 0.6 <= D <= 0.75:
        out.append(f"**Regime**: {D:.2f} of groups degenerate at G = {G}, the range of arXiv 2605.07689 (0.69): GRPO "
                   "learns, from a minority of groups; this is where the fixes of notebooks 03-09 are tested.")
    if not out_of_reach:
        out.append("**Comparing estimators on this task**: a comparison at one shared learning rate holds at that "
                   "rate only (under Adam the rate sets each step's length, and the rate that suits one estimator may "
                   "not suit another); compare each at its own best rate, chosen on a validation split disjoint from "
                   "the test split, and state the KL coefficient β, whose term is a larger share of the loss beside "
                   "small advantages (study 3, docs/guide/real-model.md; plan it with `grpo-lab study`).")
    return out


def _chunks(out: Path, n_chunks: int) -> list[dict]:
    """Chunks 0 .. n_chunks - 1 of a profile (a stale chunk beyond them, from a larger profile, is not read)."""
    return [read_json(p, "profile chunk") for i in range(n_chunks) if (p := _chunk_path(out, i)).is_file()]


def write_profile_report(out: Path, cfg: RunConfig, conf: dict, share: float = 0.5) -> Path:
    """``profile.json``, ``profile.png`` and ``report.md`` from the chunks in ``out``."""
    from . import viz

    out = Path(out)
    n_chunks = -(-len(eval_problems(cfg)) // CHUNK)
    chunks = _chunks(out, n_chunks)
    if len(chunks) != n_chunks:
        raise FileNotFoundError(f"{out} holds {len(chunks)} of its {n_chunks} chunks: resume it first")
    correct = [c for ch in chunks for c in ch["correct"]]
    n = cfg.eval_samples
    s = summarize(n, correct, share)
    secs = sum(ch["seconds"] for ch in chunks)
    tokens = sum(ch["new_tokens"] for ch in chunks)
    if all("truncated" in ch for ch in chunks):
        total = len(correct) * n
        s.update(truncated=sum(sum(ch["truncated"]) for ch in chunks) / total,
                 truncated_wrong=sum(sum(ch["truncated_wrong"]) for ch in chunks) / total)
    s.update(seconds=secs, new_tokens=tokens, threads=sorted({ch["threads"] for ch in chunks}),
             dtype=sorted({ch.get("dtype", "float32") for ch in chunks}),
             weights=sorted({ch["weights"] for ch in chunks if ch.get("weights")}), settings=profile_settings(cfg),
             graders=sorted({ch.get("grader", "unrecorded") for ch in chunks}))
    write_json_atomic(out / "profile.json", s)
    Gs = sorted(s["degenerate"])
    d = s["degenerate"]
    ks = sorted(s["pass_at_k"])
    pk = s["pass_at_k"]
    paper = {"arXiv 2605.07689, G=4 (GSM8K)": (4, PAPER["degenerate_G4"])} if 4 in d else {}
    setting = f"{cfg.policy} on {cfg.task}: {s['n_problems']} problems x {n} samples, {cfg.max_completion_length} new tokens"
    fig = viz.profile_figure(n, correct, Gs, [d[g]["real"] for g in Gs], [d[g]["lo"] for g in Gs],
                             [d[g]["hi"] for g in Gs], [d[g]["iid"] for g in Gs], [d[g]["all_fail"] for g in Gs],
                             ks, [pk[k]["mean"] for k in ks], [pk[k]["lo"] for k in ks], [pk[k]["hi"] for k in ks],
                             paper=paper, title=f"Starvation profile before training ({setting})")
    fig.savefig(out / "profile.png")
    g_share = s["smallest_G_for_share"]
    md = [f"# grpo-lab profile — {conf.get('created', '')}", "",
          f"Command: `{conf.get('command') or 'grpo-lab profile'}`  ", ""]
    if s["n_problems"] < SMOKE_PROBLEMS:  # issue 81: 8 problems were read as 0.938 [0.790, 1.000] without a word
        md += [f"**A smoke profile**: {s['n_problems']} problems × {n} samples. Its intervals are wide and its numbers "
               "move with the draw of problems: it shows that the pipeline runs and roughly how fast, not how starved "
               "the model is. Drop `--quick` (200 problems × 16 samples) for a profile to read.", ""]
    md += ["## Settings", ""]
    md += md_table(("setting", "value"), [*profile_settings(cfg).items(),
                                          ("weights", "; ".join(s["weights"]) or "n/a"),
                                          ("threads", ", ".join(map(str, s["threads"]))),
                                          ("weights' dtype", ", ".join(s["dtype"])),
                                          ("grader", ", ".join(s["graders"]) + (
                                              " (**chunks graded by different graders**)" if len(s["graders"]) > 1
                                              else ""))])
    md += ["",
           "## What GRPO would see", "",
           f"- mean success rate p̄ = {s['mean_success']:.3f} over {s['n_problems']} problems, {n} samples each "
           f"(temperature 1); never solved: {s['never_solved']:.3f}; always solved: {s['always_solved']:.3f}",
           f"- smallest G at which at least {share:.0%} of groups carry a signal (rewards not all equal): "
           + (f"**G = {g_share}**" if g_share else f"none up to G = {n} (the samples per problem)"), "",
           ]
    md += md_table(("G", "degenerate (estimated) [95% t-interval over problems]", "all fail", "all pass", "i.i.d. at p̄",
                    "Jensen gap"),
                   [(g, f"{d[g]['real']:.3f} [{max(d[g]['lo'], 0):.3f}, {min(d[g]['hi'], 1):.3f}]",
                     f"{d[g]['all_fail']:.3f}", f"{d[g]['all_pass']:.3f}", f"{d[g]['iid']:.3f}",
                     _signed(d[g]['real'] - d[g]['iid'])) for g in Gs])
    md += [""] + md_table(("k", "pass@k [95% bootstrap interval over problems]"),
                          [(k, f"{pk[k]['mean']:.3f} [{pk[k]['lo']:.3f}, {pk[k]['hi']:.3f}]") for k in ks])
    md += ["", "## What to do", "", *[f"- {x}" for x in advice(s, cfg.max_completion_length)]]
    md += ["", "## Beside arXiv 2605.07689", "",
           f"The paper reports {PAPER['degenerate_G4']} of groups degenerate at G = 4 in Qwen3.5-9B's GSM8K training, "
           f"and at G = 2 {PAPER['measured_G2']} measured against {PAPER['iid_G2']} i.i.d. Here: "
           + (f"{d[4]['real']:.3f} at G = 4; " if 4 in d else "")
           + (f"{d[2]['real']:.3f} measured against {d[2]['iid']:.3f} i.i.d. at G = 2." if 2 in d else ""),
           "Another model, other problems and another grader: the comparison is of regimes, not a reproduction.",
           "", "## How it was measured", "",
           f"Sampling took {secs:.0f} s for {tokens:,} new tokens ({tokens / max(secs, 1e-9):.0f} new tokens/s) with "
           f"{', '.join(map(str, s['threads']))} torch thread(s); a completion cut at {cfg.max_completion_length} new "
           "tokens is graded as it stands. Degenerate fractions are unbiased per-problem estimates "
           "C(n-c,G)/C(n,G) + C(c,G)/C(n,G); the i.i.d. column is (1-p̄)^G + p̄^G.", "",
           "![profile](profile.png)", "", "## Examples (first sample of the first problems)", ""]
    for ch in chunks[:1]:
        for ans, ex, c in list(zip(ch["answers"], ch["example"], ch["correct"]))[:3]:
            md += [f"- reference `{ans[-40:]}`, {c}/{n} correct; first sample:", "",
                   "  ```", *("  " + line for line in ex.strip()[:600].splitlines()), "  ```", ""]
    md += ["Raw data: `profile.json` (every number above), `chunks/*.json` (counts per problem).", ""]
    return write_text_atomic(out / "report.md", "\n".join(md))


def read_profile(path) -> dict:
    """A finished profile's numbers (``profile.json`` in ``path``, or the file itself)."""
    path = Path(path)
    return json.loads((path / "profile.json" if path.is_dir() else path).read_text())
