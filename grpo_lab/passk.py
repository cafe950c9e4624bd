"""pass@k and maj@k from sampled completions (introduced in notebooks 04 and 07).

The unbiased estimator of Chen et al. 2021 (arXiv 2107.03374): with n samples of which
c are correct, ``pass@k = 1 - C(n - c, k) / C(n, k)``. Computed in the numerically
stable product form ``1 - prod_{i = n-c+1}^{n} (1 - k / i)``. Unlike the widely copied
reference snippet, ``n < k`` is an error here, not a silent 1.0.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from ._checks import as_int, as_number

KS = (1, 2, 4, 8, 16)  # the k at which evaluations and reports give pass@k (runs, comparisons)


_MAX_COUNT = 2 ** 62  # counts are int64; anything larger is not a number of samples


def _counts(x, name: str) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype == object:  # Python ints beyond int64
        raise ValueError(f"{name} is too large to be a count of samples (at most 2**62)")
    if a.dtype.kind == "f":
        if not np.all(np.isfinite(a)) or not np.all(a == np.round(a)):
            raise ValueError(f"{name} must hold whole numbers, got {a[~(np.isfinite(a) & (a == np.round(a)))][:5]}")
        if np.any(np.abs(a) > _MAX_COUNT):
            raise ValueError(f"{name} is too large to be a count of samples (at most 2**62), got {a.max():g}")
        a = a.astype(np.int64)
    elif a.dtype.kind not in "iu":
        raise TypeError(f"{name} must be integers, got dtype {a.dtype}")
    if a.dtype.kind == "u" and a.size and int(a.max()) > _MAX_COUNT:
        raise ValueError(f"{name} is too large to be a count of samples (at most 2**62)")
    return a.astype(np.int64)


_PRODUCT_WIDTH = 4096  # beyond this many factors, log-gamma instead of the explicit product


def _all_wrong(n: int, c: int, k: int) -> float:
    """``C(n - c, k) / C(n, k)`` for one problem with n - c >= k and many correct samples: the product over the
    k factors ``(n - c - j) / (n - j)``, summed as logs in chunks (memory independent of n and c)."""
    total, start = 0.0, 0
    while start < k:
        j = np.arange(start, min(k, start + 1_000_000), dtype=np.float64)
        total += float(np.log1p(-c / (n - j)).sum())
        start += len(j)
    return float(np.exp(total))


def pass_at_k(n, c, k: int):
    """Unbiased pass@k per problem: ``1 - C(n - c, k) / C(n, k)`` (arXiv 2107.03374).

    ``n`` (samples per problem) and ``c`` (correct among them) broadcast against each
    other; ``k`` is one integer. Returns a float for scalar input, else a numpy array.
    Raises ``ValueError`` for ``k < 1``, ``n < k``, ``c < 0`` or ``c > n``.
    """
    k = as_int("k", k, minimum=1)
    n_arr, c_arr = np.broadcast_arrays(_counts(n, "n"), _counts(c, "c"))
    if (n_arr < k).any():
        raise ValueError(f"pass@{k} needs at least k={k} samples per problem; got n={int(n_arr.min())}")
    if (c_arr < 0).any():
        raise ValueError(f"c (correct samples) must be >= 0, got {int(c_arr.min())}")
    if (c_arr > n_arr).any():
        i = int(np.argmax(c_arr > n_arr))
        raise ValueError(f"c > n: {int(c_arr.flat[i])} correct out of {int(n_arr.flat[i])} samples")
    flat_n, flat_c = n_arr.reshape(-1), c_arr.reshape(-1)
    out = np.ones(flat_n.shape, dtype=np.float64)
    need = flat_n - flat_c >= k  # otherwise every k-subset holds a correct sample
    if need.any():
        nn, cc = flat_n[need], flat_c[need]
        width = int(cc.max()) if cc.size else 0
        if width > _PRODUCT_WIDTH and k < width:  # many correct: k factors instead of c
            out[need] = [1.0 - _all_wrong(int(a), int(b), k) for a, b in zip(nn, cc)]
        elif width > 0:
            # factors (1 - k/i) for i = n-c+1 .. n, padded with 1
            j = np.arange(width)[None, :]
            i = (nn - cc + 1)[:, None] + j
            factors = np.where(j < cc[:, None], 1.0 - k / i, 1.0)
            out[need] = 1.0 - np.prod(factors, axis=1)
        else:
            out[need] = 0.0
    out = out.reshape(n_arr.shape)
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class PassKCurve:
    """Mean pass@k over problems for several k, with a bootstrap confidence interval over problems."""

    ks: np.ndarray
    mean: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    n_problems: int
    confidence: float


def pass_at_k_curve(n, c, ks, n_boot: int = 1000, confidence: float = 0.95, seed: int = 0) -> PassKCurve:
    """pass@k averaged over problems for every k in ``ks``, with a percentile bootstrap CI.

    The bootstrap resamples problems (not samples), which is the uncertainty of a
    benchmark score: the same resampled problem sets are used for every k, so the
    curve's bands are consistent across k.
    """
    n_arr, c_arr = np.broadcast_arrays(_counts(n, "n"), _counts(c, "c"))
    n_arr, c_arr = n_arr.reshape(-1), c_arr.reshape(-1)
    if n_arr.size == 0:
        raise ValueError("no problems given")
    confidence = as_number("confidence", confidence, low=0.0, high=1.0, low_open=True)
    if confidence == 1.0:
        raise ValueError("confidence must be < 1, got 1")
    n_boot = as_int("n_boot", n_boot, minimum=1)
    ks = [as_int("each k in ks", k, minimum=1) for k in np.asarray(ks, dtype=object).reshape(-1)]
    if not ks:
        raise ValueError("ks is empty: give at least one k")
    ks = np.asarray(sorted(set(ks)))
    per_problem = np.stack([pass_at_k(n_arr, c_arr, int(k)) for k in ks])  # [K, P]
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n_arr.size, size=(n_boot, n_arr.size))
    boot = per_problem[:, idx].mean(axis=2)  # [K, n_boot]
    a = (1 - confidence) / 2
    return PassKCurve(ks=ks, mean=per_problem.mean(axis=1), lo=np.quantile(boot, a, axis=1),
                      hi=np.quantile(boot, 1 - a, axis=1), n_problems=int(n_arr.size), confidence=confidence)


def naive_best_of_k(correct, k: int, n_boot: int = 200, seed: int = 0) -> float:
    """A common biased estimate of pass@k: draw k of the n samples *with replacement*, check any correct.

    Its expectation is ``1 - (1 - c/n)**k``, which is below the unbiased
    :func:`pass_at_k` whenever 1 < k <= n and 0 < c < n, since resampling repeats
    samples. ``correct`` is a list (one entry per problem) of 0/1 sequences.
    Kept to show the bias (notebook 07), not to be used.
    """
    k = as_int("k", k, minimum=1)
    n_boot = as_int("n_boot", n_boot, minimum=1)
    rng = np.random.default_rng(seed)
    scores = []
    for row in correct:
        row = np.asarray(row, dtype=bool)
        if row.size == 0:
            raise ValueError("a problem has no samples")
        draws = rng.integers(0, row.size, size=(n_boot, k))
        scores.append(row[draws].any(axis=1).mean())
    return float(np.mean(scores))


def _canon(x):
    """An answer or reference for comparison: numbers (int, float, numpy, or a string that is one, commas allowed)
    by value, other strings stripped; None stays None."""
    if x is None:
        return None
    if isinstance(x, (bool, np.bool_)):
        return str(x)
    if isinstance(x, (int, float, np.integer, np.floating)):
        return float(x)
    text = str(x).strip()
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return text


def maj_at_k(answers, reference, k: int, n_resamples: int = 200, seed: int = 0) -> np.ndarray:
    """maj@k per problem: is the majority answer among k samples the reference?

    ``answers`` is one list of extracted answers per problem (``None`` = no answer, which
    never wins a vote); ``reference`` one reference answer per problem. Answers and references are
    compared by value when both are numbers (``72``, ``"72"``, ``"72.0"``, ``np.int64(72)`` and
    ``"1,000"`` vs ``1000`` are equal), else as stripped strings. A reference that is a whole GSM8K
    answer field (it contains ``####``) is an error: pass its final number
    (:func:`grpo_lab.tasks.gsm8k.extract_answer`). With k equal to the number of samples the vote is
    taken once over all of them; with fewer, the result is the mean over ``n_resamples`` random
    k-subsets. A tie between the most voted answers scores the chance that a uniformly random
    tie-break picks the reference (1/m when it is one of m tied answers, else 0), never an order.
    """
    if len(answers) != len(reference):
        raise ValueError(f"{len(answers)} answer lists but {len(reference)} references")
    k = as_int("k", k, minimum=1)
    n_resamples = as_int("n_resamples", n_resamples, minimum=1)
    rng = np.random.default_rng(seed)
    out = np.zeros(len(answers))
    for p, (row, ref) in enumerate(zip(answers, reference)):
        if isinstance(ref, str) and "####" in ref:
            raise ValueError(f"reference {p} is a whole GSM8K answer field ({ref[-40:]!r}); pass its final number "
                             "(grpo_lab.tasks.gsm8k.extract_answer)")
        if isinstance(row, (str, bytes)) or not hasattr(row, "__len__"):
            raise ValueError(f"answers[{p}] is {type(row).__name__} {row!r}, not a list of one problem's sampled "
                             "answers: answers is one list per problem (a flat list of answers is one problem each?)")
        row = [_canon(a) for a in row]
        ref = _canon(ref)
        if len(row) < k:
            raise ValueError(f"maj@{k} needs at least k={k} samples; problem {p} has {len(row)}")
        subsets = [list(range(len(row)))] if k == len(row) else [rng.permutation(len(row))[:k] for _ in range(n_resamples)]
        score = 0.0
        for s in subsets:
            votes = Counter(row[i] for i in s if row[i] is not None)
            if votes:
                best = max(votes.values())
                tied = [a for a, v in votes.items() if v == best]
                score += (ref in tied) / len(tied)
        out[p] = score / len(subsets)
    return out


def pass_at_k_of(ev: dict, ks=(1, 2, 4, 8, 16)) -> dict:
    """Mean unbiased pass@k of an evaluation (``{"n_samples": n, "correct": [c per problem]}``),
    for every k in ``ks`` up to n (notebooks 05-07, ``grpo-lab compare``)."""
    n = ev["n_samples"]
    c = np.asarray(ev["correct"])
    return {int(k): float(pass_at_k(n, c, int(k)).mean()) for k in ks if k <= n}


def finishing_ceiling(pass1, cut, pass1_se=0.0, cut_se=0.0) -> tuple[float, float]:
    """The most pass@1 a policy could reach if training only stopped its completions from being cut at the length
    limit, their accuracy among finished completions unchanged (lesson 14: format or skill?).

    With pass@1 ``p`` and a share ``c`` of sampled completions cut, at most ``p`` of all completions are finished
    and correct, so the accuracy among finished ones is at most ``p / (1 - c)``: if none were cut any more, pass@1
    would be at most ``min(1, p / (1 - c))``. A policy above it has gained more than finishing. Its standard error
    by the delta method from ``pass1_se`` and ``cut_se`` treated as independent (where a cut completion is less
    often correct than others, the two covary negatively and this overstates it). With every completion cut the
    finished ones say nothing: 1.0, error 0. Returns ``(ceiling, standard error)``."""
    p = as_number("pass1", pass1, low=0.0, high=1.0)
    c = as_number("cut", cut, low=0.0, high=1.0)
    p_se = as_number("pass1_se", pass1_se, low=0.0)
    c_se = as_number("cut_se", cut_se, low=0.0)
    if c == 1.0 or p >= 1.0 - c:
        return 1.0, 0.0
    return p / (1.0 - c), float(np.hypot(p_se / (1.0 - c), p * c_se / (1.0 - c) ** 2))
