"""Self-checks for the course's exercises: each says exactly what differs, or that all is well.

A check calls the student's function on cases with known answers (from the library's
reference implementation, itself tested against closed forms) and raises
``AssertionError`` naming the first case that differs, e.g.
``group 0 (k=0 of G=4, all wrong) should get -1 under sign; your function gave 0``.
On success it prints one line with the number of cases checked.

An exercise not yet done (its stub still raises the builder's ``NotImplementedError("exercise 01.1: replace this
line with your code")``) is not a failure: the check prints one line, "exercise 01.1 not done yet: fill in
`my_degeneracy_rate`", and the notebook goes on, so a student can run a whole exercises notebook before starting
(issue 81). A later cell that needs an exercise's result takes :func:`yours_or`, which falls back to the library's
reference and says so. nbgrader's own stub (an empty ``NotImplementedError()``) still fails its check: an
unanswered exercise earns no point.
"""

from __future__ import annotations

import functools
import math
import re

import torch

from .advantages import compute_advantages
from .simulator import policy_gradient
from .starvation import degeneracy_rate, jensen_gap


def _fmt(x) -> str:
    return f"{float(x):.4g}"


_STUB = re.compile(r"exercise (\S+): replace this line with your code")


def stub_exercise(error: BaseException) -> str | None:
    """The exercise whose unfinished stub raised ``error`` ("01.1"), or None for any other error (a student's own
    ``NotImplementedError``, nbgrader's empty stub)."""
    m = _STUB.fullmatch(str(error)) if isinstance(error, NotImplementedError) else None
    return m.group(1) if m else None


def _name(fn, error: BaseException | None = None) -> str:
    """The student's function's name: the function that raised the stub's error (a check may be handed a lambda
    that calls it), else ``fn``'s own name."""
    tb = error.__traceback__ if error is not None else None
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    name = tb.tb_frame.f_code.co_name if tb is not None else getattr(fn, "__name__", None)
    return name if name and not name.startswith("<") else (getattr(fn, "__name__", None) or "your answer")


_SAID: dict = {}  # exercise -> the notebook cell where its "not done yet" line was printed (one line a cell)


def _cell() -> int | None:
    """The running notebook cell's execution count, or None outside IPython (there every call says its line)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    return getattr(shell, "execution_count", None) if shell is not None else None


def exercise(check):
    """A check that says "not done yet" for an exercise whose stub is still in place, instead of a traceback; any
    other error (a wrong answer's AssertionError, a bug) goes through unchanged."""
    @functools.wraps(check)
    def run(fn, *args, **kwargs):
        try:
            return check(fn, *args, **kwargs)
        except NotImplementedError as e:
            which = stub_exercise(e)
            if which is None:
                raise
            cell = _cell()
            if cell is None or _SAID.get(which) != cell:
                print(f"exercise {which} not done yet: fill in `{_name(fn, e)}`")
            _SAID[which] = cell
            return None
    return run


def yours_or(fn, reference, what: str | None = None):
    """``fn`` (a student's function) where its exercise is done, else ``reference`` (the library's), saying so once
    in one line: the cells after an unfinished exercise run on the reference (issue 81)."""
    said = []

    @functools.wraps(reference)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except NotImplementedError as e:
            which = stub_exercise(e)
            if which is None:
                raise
            if not said:
                said.append(True)
                print(f"exercise {which} not done yet: this cell uses {what or _name(reference)} instead of "
                      f"`{_name(fn, e)}`")
            return reference(*args, **kwargs)
    return call


# The functions whose check passed in this process, by check name: a training cell that runs a student's function
# (notebooks 05 and 09) uses it only when its check passed for that very function (:func:`student_function`).
PASSED: dict[str, object] = {}


def _ok(name: str, n: int, fn=None) -> None:
    if fn is not None:
        PASSED[name] = fn
    print(f"✓ {name}: all {n} cases match the reference")


@exercise
def check_degeneracy_rate(fn) -> None:
    """Exercise 01.1: ``fn(p, G)`` must return ``p**G + (1 - p)**G``."""
    n = 0
    for G in (1, 2, 4, 8):
        for p in (0.0, 0.1, 0.5, 0.9, 1.0):
            got, want = fn(p, G), degeneracy_rate(p, G)
            n += 1
            v = real(got, f"degeneracy_rate(p={p}, G={G})")
            if not math.isclose(v, want, rel_tol=1e-6, abs_tol=1e-9):
                raise AssertionError(f"degeneracy_rate(p={p}, G={G}) should be {_fmt(want)}; your function gave {got}")
    _ok("degeneracy_rate", n)


@exercise
def check_real_and_iid(fn) -> None:
    """Exercise 02.1: ``fn(p, G)`` returns ``(real, iid)`` degeneracy for per-prompt rates ``p``."""
    cases = [([0.0, 0.0, 0.5, 1.0], 2), ([0.2] * 5, 4), ([0.0] * 575 + [0.5] * 425, 2), ([0.1, 0.9], 8)]
    for p, G in cases:
        got = fn(torch.tensor(p, dtype=torch.float64), G)
        if not isinstance(got, (tuple, list)) or len(got) != 2:  # issue 105: never a bare TypeError from here
            raise AssertionError(f"p={p[:4]}{'...' if len(p) > 4 else ''}, G={G}: return two numbers, (real, iid); "
                                 f"your function gave {type(got).__name__} {got!r:.60}")
        got_real, got_iid = got
        ref = jensen_gap(p, G)
        for label, got, want in (("real", got_real, ref.real), ("iid", got_iid, ref.iid)):
            if not math.isclose(real(got, f"{label} degeneracy for G={G}"), want, rel_tol=1e-6, abs_tol=1e-9):
                raise AssertionError(f"{label} degeneracy for p={p[:4]}{'...' if len(p) > 4 else ''}, G={G} "
                                     f"should be {_fmt(want)}; your function gave {_fmt(got)}")
    _ok("real_and_iid", len(cases))


def _describe(k: int, G: int) -> str:
    kind = "all wrong" if k == 0 else "all right" if k == G else "mixed"
    return f"k={k} of G={G}, {kind}"


@exercise
def check_estimator(fn, method: str, **options) -> None:
    """Exercise 03.1: ``fn(rewards [B, G], G)`` must equal ``compute_advantages(.., method)``.

    The cases are every composition of k successes out of G for G = 2, 4, 8, one group each.
    """
    n = 0
    for G in (2, 4, 8):
        r = torch.tensor([[1.0] * k + [0.0] * (G - k) for k in range(G + 1)])
        want = compute_advantages(r, G, method, **options)
        got = fn(r.clone(), G)
        if not isinstance(got, torch.Tensor) or got.shape != want.shape:
            raise AssertionError(f"for rewards of shape {tuple(r.shape)} your function should return a tensor of the "
                                 f"same shape; it gave {type(got).__name__} "
                                 f"{tuple(got.shape) if isinstance(got, torch.Tensor) else ''}")
        bad = ~torch.isclose(got.to(want.dtype), want, rtol=1e-4, atol=1e-6)
        if bad.any():
            k, i = (int(x) for x in torch.nonzero(bad)[0])
            raise AssertionError(f"group {k} ({_describe(k, G)}) should get {_fmt(want[k, i])} under {method} for "
                                 f"completion {i} (reward {int(r[k, i])}); your function gave {_fmt(got[k, i])}")
        n += G + 1
    _ok(f"{method} estimator", n)


def pass_at_G_gradient(logits: torch.Tensor, G: int) -> torch.Tensor:
    """``grad_logits pass@G`` for a softmax policy with answer 0 correct: ``pass@G = 1 - (1 - pi_0)**G``."""
    z = logits.detach().clone().requires_grad_(True)
    p = torch.softmax(z, dim=-1)[..., 0]
    (1 - (1 - p) ** G).sum().backward()
    return z.grad


def failure_descent_mc(logits: torch.Tensor, G: int, n_groups: int, generator) -> torch.Tensor:
    """The reference Monte Carlo estimator of exercise 03.3: the gradient of the Sign loss averaged over
    ``n_groups`` sampled groups, all-fail groups only (answer 0 correct)."""
    from .advantages import sign

    z = logits.detach().clone().requires_grad_(True)
    logp = torch.log_softmax(z, 0)
    actions = torch.multinomial(logp.exp().detach(), n_groups * G, replacement=True, generator=generator)
    actions = actions.view(n_groups, G)
    rewards = (actions == 0).to(logits.dtype)
    fail = rewards.sum(1) == 0
    loss = -(sign(rewards, G) * logp[actions]).mean(1)
    (loss * fail).mean().backward()
    return z.grad


@exercise
def check_failure_descent(fn, G: int = 4, n_groups: int = 200_000, seed: int = 0) -> None:
    """Exercise 03.3: ``fn(logits, G, n_groups, generator)`` returns a Monte Carlo estimate of the
    expected gradient (w.r.t. ``logits``) of the Sign loss restricted to all-fail groups.

    The identity (arXiv 2605.07689): it equals ``-(1/G) * grad pass@G``. A Monte Carlo answer is off by its
    own sampling noise, so the tolerance is measured, not guessed: 4 times the root-mean-square relative
    error of the reference estimator (:func:`failure_descent_mc`) over 8 independent runs of the same
    ``n_groups``, and at least 1%. A correct estimator of the same kind passes at any seed with
    overwhelming probability; an exact (noise-free) answer passes too.
    """
    logits = torch.tensor([-1.0, 0.3, 0.0, -0.5], dtype=torch.float64)
    want = -pass_at_G_gradient(logits, G) / G
    norm = torch.linalg.vector_norm(want)
    ref = [float(torch.linalg.vector_norm(failure_descent_mc(logits, G, n_groups,
                                                              torch.Generator().manual_seed(10_000 + k)) - want)
                 / norm) for k in range(8)]
    rtol = max(0.01, 4 * math.sqrt(sum(e * e for e in ref) / len(ref)))
    got = fn(logits.clone(), G, n_groups, torch.Generator().manual_seed(seed))
    if not isinstance(got, torch.Tensor) or got.shape != want.shape:
        raise AssertionError(f"expected a gradient of shape {tuple(want.shape)}; your function gave "
                             f"{tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__}")
    err = float(torch.linalg.vector_norm(got.to(want.dtype) - want) / norm)
    if not err <= rtol:
        raise AssertionError(f"your gradient {[round(float(x), 4) for x in got]} differs from -(1/G) grad pass@G = "
                             f"{[round(float(x), 4) for x in want]} by {err:.1%} of its norm; the Monte Carlo noise "
                             f"of {n_groups} groups allows {rtol:.1%} (4 x the reference estimator's RMS error)")
    print(f"✓ failure descent: Monte Carlo gradient within {err:.1%} of -(1/G) grad pass@G (its own sampling noise "
          f"allows {rtol:.1%})")


@exercise
def check_policy_gradient(fn) -> None:
    """Exercise 04.1: ``fn(logits [P, A], actions [P, G], adv [P, G])`` is the tabular REINFORCE direction.

    Compared against autograd of ``(1/G) sum_i A_i log softmax(logits)[a_i]``.
    """
    gen = torch.Generator().manual_seed(0)
    P, A, G = 5, 4, 6
    logits = torch.randn(P, A, generator=gen, dtype=torch.float64)
    actions = torch.randint(0, A, (P, G), generator=gen)
    adv = torch.randn(P, G, generator=gen, dtype=torch.float64)
    z = logits.clone().requires_grad_(True)
    (torch.log_softmax(z, 1).gather(1, actions) * adv).sum().div(G).backward()
    want = z.grad
    assert torch.allclose(policy_gradient(logits, actions, adv), want)  # the reference agrees with autograd
    got = fn(logits.clone(), actions.clone(), adv.clone())
    if not isinstance(got, torch.Tensor) or got.shape != want.shape:
        raise AssertionError(f"expected a [{P}, {A}] tensor; your function gave "
                             f"{tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__}")
    if not got.is_floating_point():
        raise AssertionError(f"expected a tensor of real numbers; your function gave dtype {got.dtype}")
    # issue 105: a correct float32 answer passes, at float32's tolerance (it was a "Float did not match Double")
    tight = got.dtype == torch.float64
    got = got.to(torch.float64)
    bad = ~torch.isclose(got, want, rtol=1e-6 if tight else 1e-5, atol=1e-9 if tight else 1e-6)
    if bad.any():
        p, a = (int(x) for x in torch.nonzero(bad)[0])
        raise AssertionError(f"prompt {p}, answer {a}: the gradient should be {_fmt(want[p, a])}; "
                             f"your function gave {_fmt(got[p, a])}")
    _ok("policy_gradient", P * A)


@exercise
def check_reward_function(fn) -> None:
    """Exercise 05.1: ``fn(prompts, completions, answer, **kwargs)`` is TRL's reward signature with the
    GSM8K grader's answer rules: a list of 0.0/1.0, one per completion."""
    PASSED.pop("reward function", None)  # a failed check leaves no earlier pass behind
    from .tasks.gsm8k import is_correct

    cases = [("1+2=", "3", "3"), ("9+9=", "18", "18"), ("9+9=", "17", "18"), ("7+5=", "12.00", "12"),
             ("7+5=", "", "12"), ("x", "The answer is 1,000.", "#### 1000"), ("x", "#### -4", "-4"),
             ("x", "no idea", "5"), ("60+40=", "100\n", "100"), ("1+1=", "2 or 3", "2")]
    prompts, completions, answers = (list(x) for x in zip(*cases))
    got = fn(prompts, completions, answer=answers, level=[1] * len(cases))
    if not isinstance(got, list) or len(got) != len(cases):
        raise AssertionError(f"a reward function returns a list with one reward per completion ({len(cases)} here); "
                             f"yours returned {type(got).__name__} of length {len(got) if hasattr(got, '__len__') else '?'}")
    for (p, c, a), r in zip(cases, got):
        want = float(is_correct(c, a))
        if not isinstance(r, float) or r != want:
            raise AssertionError(f"completion {c!r} for reference {a!r} should get {want}; your function gave {r!r}")
    _ok("reward function", len(cases), fn)


def real(x, what: str) -> float:
    """``x`` as a Python float when it is one real number in any of the forms a good answer takes (a Python
    int or float, a numpy scalar, a 0-d or one-element tensor or array), else an ``AssertionError`` saying what
    was given. Booleans (Python's, numpy's, a bool tensor's), strings, NaN and infinities are not numbers here."""
    if isinstance(x, (bool, str, bytes)) or x is None:
        raise AssertionError(f"{what}: give a number, got {x!r}")
    try:
        if hasattr(x, "numel") and x.numel() == 1 or hasattr(x, "size") and getattr(x, "size", 0) == 1:
            if "bool" in str(getattr(x, "dtype", "")):
                raise AssertionError(f"{what}: give a number, got a boolean ({x!r:.60})")
            x = x.item() if hasattr(x, "item") else x
        if isinstance(x, bool) or type(x).__name__ in ("bool_", "bool"):
            raise AssertionError(f"{what}: give a number, got a boolean ({x!r})")
        v = float(x)
    except (TypeError, ValueError):
        raise AssertionError(f"{what}: give a number, got {type(x).__name__} {x!r:.60}") from None
    if v != v:
        raise AssertionError(f"{what}: got NaN, not a number")
    if v in (float("inf"), float("-inf")):
        raise AssertionError(f"{what}: got {v}, not a finite number")
    return v


LUCKY_METHODS = ("grpo", "drgrpo", "rloo", "sign", "maxrl")


@exercise
def check_lucky_advantage(fn) -> None:
    """Exercise 14.2: ``fn(G, method)`` returns ``(A_success, A_failure)``: the advantages of the one success and of
    each of the G - 1 failures in a group with exactly one success, under ``method``; compared with
    :func:`grpo_lab.compute_advantages` on ``[1, 0, ..., 0]`` (a tolerance of 1e-3 covers GRPO's eps = 1e-4, so a
    closed form, a loop and a vectorised computation all pass). Names the first case that differs."""
    n = 0
    for method in LUCKY_METHODS:
        for G in (2, 3, 4, 8, 16):
            r = torch.zeros(G, dtype=torch.float64)
            r[0] = 1.0
            want = compute_advantages(r, G, method)
            got = fn(G, method)
            try:
                a_s, a_f = got
            except (TypeError, ValueError):
                raise AssertionError(f"{method}, G={G}: return two numbers (the success's advantage, a failure's); "
                                     f"your function gave {got!r:.80}") from None
            for label, value, ref in (("the lucky success", a_s, want[0]), ("each failure", a_f, want[1])):
                v = real(value, f"{method}, G={G}, {label}")
                if not math.isclose(v, float(ref), rel_tol=1e-3, abs_tol=1e-3):
                    hint = ""
                    if method == "grpo" and label == "the lucky success" and math.isclose(v, math.sqrt(G - 1),
                                                                                            rel_tol=1e-3):
                        hint = (" (that is what the population std gives, numpy's default ddof=0: GRPO, as TRL "
                                "computes it, uses the sample std, ddof=1)")
                    raise AssertionError(f"under {method} with G={G}, {label} should get {_fmt(ref)}; your function "
                                         f"gave {_fmt(v)}{hint}")
            n += 1
    _ok("lucky_advantage", n)


@exercise
def check_prediction(predicted, measured: float, name: str, tol: float, n: int | None = None,
                     fraction: bool = False, source: str = "the run") -> None:
    """A predict-first exercise: compare the number predicted *before* a run with the one it measured.

    Never fails for a wrong guess (that is the point of predicting); it fails only when no number was given, or
    when ``fraction`` (the quantity is a fraction, or a difference of fractions, within [-1, 1]) and the prediction
    lies beyond 1 in size: it looks like a percentage, and the message says how to write it. Any real scalar is a
    number (:func:`real`: Python, numpy, a 0-d tensor). ``n``: the measured value is a fraction over ``n``
    independent draws (groups, prompts), so it has sampling noise of its own; the window is then at least
    1.96 x sqrt(q (1 - q) / n) at the predicted q, and the message says so. A right prediction is judged against
    the noise of what it is compared with. ``source`` says where the measured value comes from ("the run": this
    notebook measured it; "the shipped study", for a value read from data shipped with the package).
    """
    if callable(predicted):  # the prediction function itself: an unfinished one says "not done yet" (@exercise)
        predicted = predicted()
    predicted = real(predicted, f"{name}: give your prediction as a number")
    try:  # issue 83: the measured value and the window are the notebook's, not the student's: a damaged one is a
        measured = real(measured, f"{name}: the measured value")  # ValueError naming it, never a verdict
        tol = real(tol, f"{name}: the tolerance")
    except AssertionError as e:
        raise ValueError(f"{e} (check_prediction's arguments, not your prediction)") from None
    if tol < 0:
        raise ValueError(f"{name}: the tolerance must be >= 0, got {tol:g} (check_prediction's arguments)")
    if fraction and abs(predicted) > 1:
        if abs(predicted) <= 100 and abs(predicted) >= 2:  # a percentage of a fraction lies within ±100
            raise AssertionError(f"{name}: {predicted:g} looks like a percentage; this quantity is a fraction, so "
                                 f"write {predicted / 100:g} for {predicted:g}%")
        raise AssertionError(f"{name}: {predicted:g} cannot be this quantity: it is a fraction (or a difference of "
                             "two), between -1 and 1")
    why = ""
    if n is not None:
        if isinstance(n, bool) or not isinstance(n, int) and type(n).__name__ not in ("int64", "int32") \
                or int(n) < 1:
            raise ValueError(f"{name}: n is the number of draws behind the measured value, a whole number >= 1; "
                             f"got {n!r}")
        q = min(max(float(predicted), 0.0), 1.0)
        noise = 1.96 * (q * (1 - q) / n) ** 0.5
        if noise > tol:
            tol, why = noise, f"; the run's value is a fraction of only {n}, so ±{noise:.2f} is its own sampling noise"
    verdict = "within" if abs(predicted - measured) <= tol else "outside"
    print(f"{name}: you predicted {predicted:.3f}, {source} measured {measured:.3f} ({verdict} ±{tol:.2g}{why}).")


@exercise
def check_group_advantages(fn) -> None:
    """Exercise 05.3 (build it): ``fn(rewards, G)`` is GRPO's advantage for flat rewards in TRL's layout:
    ``(r - group mean) / (group std + 1e-4)``, std with G - 1 in the denominator (Bessel, as TRL)."""
    PASSED.pop("group-normalised advantage", None)  # a failed check leaves no earlier pass behind
    from .advantages import grpo

    cases = [([0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 1], 4), ([1, 1, 1, 1], 2), ([0.5, 0.2, 0.9, 0.1, 0.3, 0.3], 3),
             ([1, 0] * 8, 8)]
    for r, G in cases:
        rewards = torch.tensor(r, dtype=torch.float32)
        want = grpo(rewards, G)
        got = torch.as_tensor(fn(rewards.clone(), G), dtype=torch.float32)
        if got.shape != want.shape:
            raise AssertionError(f"rewards {r}, G={G}: expected {tuple(want.shape)} advantages, got {tuple(got.shape)}")
        if not torch.allclose(got, want, atol=1e-4):
            i = int((got - want).abs().argmax())
            hint = (" (population std? use G - 1 in the denominator)" if torch.allclose(
                got, grpo(rewards, G, unbiased=False), atol=1e-4) else "")
            raise AssertionError(f"rewards {r}, G={G}: completion {i} should get {want[i]:.4f}, yours gives "
                                 f"{got[i]:.4f}{hint}")
    _ok("group-normalised advantage", len(cases), fn)


@exercise
def check_grpo_loss(fn) -> None:
    """Exercise 05.4 (build it): ``fn`` is the clipped, masked GRPO loss of :func:`grpo_lab.loss.grpo_loss`.

    Compares values *and* gradients (a ratio or clip computed on detached tensors has the right value and
    the wrong gradient) on cases that switch on one ingredient at a time: padding, clipping on each side,
    the KL term, and each normalisation.
    """
    PASSED.pop("clipped, masked GRPO loss (values and gradients)", None)  # a failed check leaves no earlier pass behind
    from .loss import grpo_loss

    g = torch.Generator().manual_seed(0)
    logp = -torch.rand(3, 5, generator=g, dtype=torch.float64) * 3
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0], [1, 1, 1, 0, 0]], dtype=torch.float64)
    adv = torch.tensor([1.0, -0.5, 2.0], dtype=torch.float64)
    shift = torch.tensor([[0.5, -0.5, 0.05, 0.3, -0.3], [0.4, -0.4, 0, 0, 0], [-0.05, 0.25, -0.25, 0, 0]],
                         dtype=torch.float64)
    ref = logp + 0.3 * torch.randn(3, 5, generator=g, dtype=torch.float64)
    cases = [  # (what the case switches on, keyword arguments, old log-probs)
        ("on-policy (ratio 1), grpo normalisation", dict(loss_type="grpo"), logp),
        ("ratios away from 1: clipping at 1 ± 0.2", dict(loss_type="grpo"), logp - shift),
        ("asymmetric clip (epsilon_high 0.28)", dict(loss_type="grpo", epsilon_high=0.28), logp - shift),
        ("KL term, beta 0.1", dict(loss_type="grpo", beta=0.1, ref_logp=ref), logp - shift),
        ("dapo normalisation (all tokens of the batch)", dict(loss_type="dapo"), logp - shift),
        ("dapo with num_tokens = 20 (a larger generation batch)", dict(loss_type="dapo", num_tokens=20.0),
         logp - shift),
        ("dr_grpo normalisation (max_completion_length 8)", dict(loss_type="dr_grpo", max_completion_length=8),
         logp - shift),
    ]
    for name, kw, old in cases:
        full = dict(epsilon_low=0.2, epsilon_high=0.2, beta=0.0, ref_logp=None, max_completion_length=None,
                    num_tokens=None)
        full.update(kw)
        x_ref, x_got = logp.clone().requires_grad_(), logp.clone().requires_grad_()
        want = grpo_loss(x_ref, old, adv, mask, **full)
        got = fn(x_got, old.clone(), adv.clone(), mask.clone(), **full)
        if not isinstance(got, torch.Tensor) or got.dim() != 0:
            raise AssertionError(f"{name}: return one scalar tensor, got {got!r:.60}")
        if not torch.isclose(got.double(), want, rtol=1e-5, atol=1e-8):
            raise AssertionError(f"{name}: the loss should be {want.item():.6f}; yours is {got.item():.6f}")
        want.backward()
        if not got.requires_grad:
            raise AssertionError(f"{name}: your loss has no gradient with respect to logp (a .detach() too many?)")
        got.backward()
        if not torch.allclose(x_got.grad, x_ref.grad, rtol=1e-5, atol=1e-8):
            i, t = divmod(int((x_got.grad - x_ref.grad).abs().argmax()), logp.shape[1])
            raise AssertionError(f"{name}: right value, wrong gradient at completion {i}, token {t}: "
                                 f"d loss / d logp should be {x_ref.grad[i, t]:.5f}, yours is {x_got.grad[i, t]:.5f}"
                                 + (" (that token is padding)" if mask[i, t] == 0 else ""))
    _ok("clipped, masked GRPO loss (values and gradients)", len(cases), fn)


@exercise
def check_success_hist(fn) -> None:
    """Exercise 05.6: ``fn(rewards, G)`` returns, for k = 0 … G, how many groups had k correct completions."""
    from .starvation import batch_metrics

    cases = [([0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0], 4), ([1, 1, 0, 0, 0, 0], 2), ([0.0] * 8, 8),
             ([1, 0, 1, 1, 0, 1, 1, 1, 0], 3)]
    for r, G in cases:
        rewards = torch.tensor(r, dtype=torch.float32)
        want = batch_metrics(rewards, torch.zeros_like(rewards), G)["success_hist"]
        got = fn(rewards, G)
        got = list(got.tolist() if hasattr(got, "tolist") else got) if hasattr(got, "__iter__") or \
            hasattr(got, "tolist") else got
        if not isinstance(got, list) or len(got) != len(want):
            raise AssertionError(f"rewards {r} with G={G}: expected {len(want)} counts (k = 0..{G}); your function "
                                 f"gave {got!r:.80}")
        # issue 105: a count is a whole number; 2.4 is not 2, and 0.9999999 is not 0 (nor a NaN anything)
        counts = [real(x, f"the count of groups with k={k} correct") for k, x in enumerate(got)]
        if any(not float(x).is_integer() and abs(x - round(x)) > 1e-6 for x in counts):
            raise AssertionError(f"rewards {r} with G={G}: groups with k=0..{G} correct should be {want} (whole "
                                 f"numbers); your function gave {got}")
        got = [int(round(x)) for x in counts]
        if got != want:
            raise AssertionError(f"rewards {r} with G={G}: groups with k=0..{G} correct should be {want}; "
                                 f"your function gave {got}")
    _ok("success histogram", len(cases))


@exercise
def check_effective_rank(fn) -> None:
    """Exercise 08.1: ``fn(M)`` is the entropy effective rank exp(H(s / sum s)) of a matrix."""
    from .gradrank import effective_rank

    gen = torch.Generator().manual_seed(0)
    cases = [("3x3 identity", torch.eye(3)), ("rank-1 outer product", torch.outer(torch.arange(1., 5), torch.ones(6))),
             ("diag(1, 1, 0, 0)", torch.diag(torch.tensor([1., 1, 0, 0]))),
             ("diag(3, 1)", torch.diag(torch.tensor([3., 1]))), ("random 5x8", torch.randn(5, 8, generator=gen)),
             ("zero matrix", torch.zeros(3, 3))]
    for name, M in cases:
        want, got = effective_rank(M), fn(M)
        if not math.isclose(real(got, f"effective rank of {name}"), want, rel_tol=1e-5, abs_tol=1e-9):
            raise AssertionError(f"effective rank of {name} should be {_fmt(want)}; your function gave {got}")
    _ok("effective_rank", len(cases))


@exercise
def check_pass_at_k(fn) -> None:
    """Exercise 07.1: ``fn(n, c, k)`` is the unbiased pass@k, 1 - C(n-c, k) / C(n, k), for integers."""
    cases = [(10, 0, 1), (10, 10, 5), (10, 3, 1), (10, 3, 2), (10, 3, 8), (16, 1, 16), (16, 15, 2), (5, 2, 4),
             (200, 7, 100)]
    for n, c, k in cases:
        want = 1 - math.comb(n - c, k) / math.comb(n, k)
        got = fn(n, c, k)
        if not math.isclose(real(got, f"pass@{k} with {c} correct of n={n}"), want, rel_tol=1e-7, abs_tol=1e-12):
            raise AssertionError(f"pass@{k} with {c} correct of n={n} should be {_fmt(want)}; your function gave {got}")
    _ok("pass_at_k", len(cases))


@exercise
def check_group_filter(fn) -> None:
    """Exercise 09.2 (build it): ``fn(rewards, G)`` says, per group, whether dynamic sampling keeps it: the
    group's rewards are not all equal (:func:`grpo_lab.starvation.filter_groups`). Flat rewards in TRL's
    layout; the answer is one bool per group (a tensor, array or list). Cases include graded rewards, where
    "some right, some wrong" is not the same as "not all equal"."""
    PASSED.pop("group filter", None)  # a failed check leaves no earlier pass behind
    from .starvation import filter_groups

    cases = [([0, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1, 0, 1, 1, 0], 4), ([1, 1, 0, 1, 0, 0], 2),
             ([0.0] * 8 + [1.0] * 7 + [0.0], 8), ([0.5, 0.5, 0.5, 0.2, 0.7, 0.2, 1.0, 1.0, 1.0], 3),
             ([3.0, 3.0, -1.0, -1.0, 0.25, 0.75], 2)]
    for r, G in cases:
        rewards = torch.tensor(r, dtype=torch.float32)
        want = filter_groups(rewards, G).keep.tolist()
        got = fn(rewards.clone(), G)
        got = got.tolist() if hasattr(got, "tolist") else got
        if isinstance(got, (list, tuple)) and got and all(isinstance(x, (list, tuple)) for x in got):
            raise AssertionError(f"rewards {r} with G={G}: expected one verdict per group, a flat sequence of "  # 105
                                 f"{len(want)} bools; your function returned a {len(got)} × {len(got[0])} table "
                                 "(one value per completion?): reduce each group's row to one bool")
        if not isinstance(got, (list, tuple)):  # one bool for the whole batch, e.g. rewards.std() > 0
            raise AssertionError(f"rewards {r} with G={G}: expected one verdict per group, a sequence of "
                                 f"{len(want)} bools (shape ({len(want)},): the rewards reshaped to "
                                 f"({len(want)}, {G}), one answer per row); your function returned a single "
                                 f"{type(got).__name__} ({got!r}) for the whole batch")
        got = list(got)
        if len(got) != len(want):
            raise AssertionError(f"rewards {r} with G={G}: expected one verdict per group ({len(want)}), got "
                                 f"{len(got)}")
        for i, (a, b) in enumerate(zip(got, want)):
            if bool(a) != b:
                group = r[i * G:(i + 1) * G]
                hint = ("; counting right answers works for 0/1 rewards only: compare the rewards themselves"
                        if any(x not in (0, 1) for x in group) else "")
                raise AssertionError(f"rewards {r} with G={G}: group {i} {group} should be "
                                     f"{'kept (its rewards differ)' if b else 'dropped (all equal)'}; your function "
                                     f"says {'keep' if a else 'drop'}{hint}")
    _ok("group filter", len(cases), fn)


def same_run(mine, reference, exact=("reward",), close=("grad_norm",), rtol: float = 1e-3, what: str = "your run") -> int:
    """Step by step, ``mine`` and ``reference`` (two runs' histories) agree: the keys in ``exact`` equal, those in
    ``close`` within ``rtol * (1 + |reference|)``. Otherwise an ``AssertionError`` that names the first step and
    key that differ with both values (not two whole log rows). Returns the number of steps compared (notebooks
    05 and 09 check the run that trained with the student's functions against the library's)."""
    if len(mine) != len(reference):
        raise AssertionError(f"{what} logged {len(mine)} steps, the library's {len(reference)}")
    for a, b in zip(mine, reference):
        step = b.get("step", "?")
        for key in exact:
            if a.get(key) != b.get(key):
                raise AssertionError(f"{what} differs first at step {step}, {key}: yours {a.get(key)!r}, the "
                                     f"library's {b.get(key)!r}")
        for key in close:
            x, y = a.get(key), b.get(key)
            if x is None or y is None or abs(x - y) > rtol * (1 + abs(y)):
                raise AssertionError(f"{what} differs first at step {step}, {key}: yours {x!r}, the library's "
                                     f"{y!r} (allowed: {rtol:g} x (1 + |library's|))")
    return len(reference)


def student_function(namespace: dict, name: str, probe_call, check: str | None = None):
    """The student's function ``name`` from ``namespace`` (a notebook's ``globals()``), or None while it is not
    written (the lesson, which has no exercise cells) or still a stub (``NotImplementedError`` when probed with
    ``probe_call(fn)``). Any other error is the student's bug and is raised, not hidden behind the library's
    function (notebooks 05 and 09 train with the student's functions where they exist).

    ``check``: the name the exercise's check prints on success ("group filter"). A written function is handed to
    training only when that check passed for this very function (redefined since: not); else an
    ``AssertionError`` in one line says which check to pass first, so a training cell never reports agreement for
    a function its check refused (0/1 rewards alone may not expose the mistake)."""
    fn = namespace.get(name)
    if fn is None:
        return None
    try:
        probe_call(fn)
    except NotImplementedError:
        return None
    if check is not None and PASSED.get(check) is not fn:
        state = "was redefined since its check passed" if check in PASSED else "has not passed its check"
        raise AssertionError(f"{name} {state} ({check}): run the check cell above until it prints ✓ {check}; this "
                             f"cell trains with {name}, and a run cannot tell every wrong {name} from a right one")
    return fn


# --------------------------------------------------------------------------- lesson 10: a study's statistics

def _study_samples():
    """Samples over seeds of two methods, as lesson 10's study holds them (pass@1 per seed): equal and unequal
    counts, small and large spreads, one side nearly constant."""
    import numpy as np

    rng = np.random.default_rng(10)
    cases = [(rng.normal(0.70, 0.08, 6), rng.normal(0.64, 0.06, 6)), (rng.normal(0.5, 0.1, 4), rng.normal(0.45, 0.2, 7)),
             (rng.normal(0.1, 0.05, 3), rng.normal(0.12, 0.01, 5)), (rng.normal(0.3, 0.02, 8), rng.normal(0.2, 0.15, 8))]
    return [(list(map(float, a)), list(map(float, b))) for a, b in cases]


def _welch(a, b, confidence: float = 0.95, df: str = "min-n") -> tuple:
    """mean(a) - mean(b) and its interval under the ``df`` convention (grpo_lab.stats.diff_ci)."""
    from .stats import diff_ci

    return diff_ci(a, b, confidence, df=df)


def _triple(x, what: str):
    try:
        d, lo, hi = x
    except (TypeError, ValueError):
        raise AssertionError(f"{what}: return three numbers, (difference, low, high); got {x!r:.80}") from None
    return real(d, what), real(lo, what), real(hi, what)


@exercise
def check_welch(fn) -> None:
    """Exercise 10.2: ``fn(a, b)`` is the difference of two means over seeds with its 95% Welch interval,
    ``(d, lo, hi)``. Two conventions for the degrees of freedom are right: the smaller sample's n - 1 (grpo-lab's,
    conservative) and Welch-Satterthwaite's (scipy's); the pooled (Student) interval is not."""
    import numpy as np

    cases = _study_samples()
    for i, (a, b) in enumerate(cases):
        got = _triple(fn(list(a), list(b)), f"case {i}")
        ours, scipys = _welch(a, b), _welch(a, b, df="welch")
        if any(np.allclose(got, want, atol=1e-6) for want in (ours, scipys)):
            continue
        n, m = len(a), len(b)
        sp = math.sqrt(((n - 1) * np.var(a, ddof=1) + (m - 1) * np.var(b, ddof=1)) / (n + m - 2) * (1 / n + 1 / m))
        pooled = abs(got[2] - got[0] - 1.96 * sp) < 0.5 * sp or abs((got[2] - got[0]) / sp) < 3.5
        hint = (" (your half-width fits a pooled variance: Welch keeps each side's own, s_a^2/n_a + s_b^2/n_b)"
                if pooled and not np.isclose(got[2] - got[0], ours[2] - ours[0], atol=1e-6) else "")
        raise AssertionError(f"case {i} (seeds {len(a)} and {len(b)}): expected {_fmt(ours[0])} "
                             f"[{_fmt(ours[1])}, {_fmt(ours[2])}] (df = min(n) - 1) or [{_fmt(scipys[1])}, "
                             f"{_fmt(scipys[2])}] (Welch-Satterthwaite df), got {_fmt(got[0])} [{_fmt(got[1])}, "
                             f"{_fmt(got[2])}]{hint}")
    _ok("Welch interval", len(cases), fn)


@exercise
def check_holm(fn) -> None:
    """Exercise 10.3: ``fn(pvalues, alpha)`` returns, in the input's order, which hypotheses Holm's step-down
    procedure rejects at family-wise ``alpha``."""
    from .stats import holm

    cases = [([0.133, 0.301, 0.992], 0.05), ([0.01, 0.04, 0.03], 0.05), ([0.2, 0.012, 0.024], 0.05),
             ([0.001, 0.001, 0.5], 0.05), ([0.02], 0.05), ([0.011, 0.03, 0.04, 0.049], 0.05), ([0.04, 0.04], 0.1)]
    for p, alpha in cases:
        got = fn(list(p), alpha)
        try:
            got = [bool(x) for x in got]
        except TypeError:
            raise AssertionError(f"p-values {p}: return one True/False per p-value, got {got!r:.60}") from None
        want = holm(p, alpha)
        if got != want:
            bonferroni = [x <= alpha / len(p) for x in p]
            hint = (" (that is Bonferroni: every p against alpha/m; Holm compares the i-th smallest with "
                    "alpha/(m - i) and stops at the first it keeps)" if got == bonferroni else "")
            raise AssertionError(f"p-values {p} at alpha {alpha}: expected {want}, got {got}{hint}")
    _ok("Holm's correction", len(cases), fn)


def bound_reference(a, b, m) -> float:
    """The library's answer to exercise 10.4: the upper end of the interval at confidence ``1 - 0.05/m`` (the
    smaller sample's n - 1 df)."""
    return _welch(a, b, 1 - 0.05 / m)[2]


def seeds_reference(a, b, alpha: float = 0.05) -> int | None:
    """The library's answer to exercise 10.5 (:func:`grpo_lab.stats.seeds_needed`)."""
    from .stats import seeds_needed

    return seeds_needed(a, b, alpha=alpha)


@exercise
def check_bound(fn) -> None:
    """Exercise 10.4: ``fn(a, b, m)`` is the largest advantage of ``a`` over ``b`` that a study of ``m`` planned
    comparisons still leaves open at family-wise 95%: the upper end of the Welch interval at confidence
    1 - 0.05/m (Bonferroni's simultaneous interval, which Holm's verdicts never contradict). Both conventions for
    the degrees of freedom are right."""
    import numpy as np

    cases = [(a, b, m) for (a, b), m in zip(_study_samples(), (3, 1, 2, 3))]
    for i, (a, b, m) in enumerate(cases):
        got = real(fn(list(a), list(b), m), f"case {i}")
        wants = [_welch(a, b, 1 - 0.05 / m)[2], _welch(a, b, 1 - 0.05 / m, df="welch")[2]]
        if any(abs(got - w) < 1e-6 for w in wants):
            continue
        hint = (" (that is the 95% interval's end: with m comparisons the family-wise bound uses 1 - 0.05/m)"
                if m > 1 and abs(got - _welch(a, b)[2]) < 1e-6 else "")
        raise AssertionError(f"case {i} (m = {m}): expected {_fmt(wants[0])} (df = min(n) - 1) or "
                             f"{_fmt(wants[1])} (Welch-Satterthwaite), got {_fmt(got)}{hint}")
    _ok("the bound a null sets", len(cases), fn)


@exercise
def check_seeds_needed(fn) -> None:
    """Exercise 10.5: ``fn(a, b, alpha)`` is how many seeds per method a two-sided test at ``alpha`` needs for 80%
    power against a difference the size of ``mean(a) - mean(b)``, from the pooled spread: the smallest n with
    ``(t_{1-alpha/2, 2n-2} + t_{0.8, 2n-2}) sd sqrt(2/n) <= |difference|``. A noncentral-t power calculation
    (statsmodels) can land one seed away, so answers within one seed of it pass; the normal approximation promises
    too few seeds at these sizes and is named."""
    import numpy as np

    from .stats import seeds_needed

    cases = [(a, b, alpha) for (a, b), alpha in zip(_study_samples(), (0.05 / 3, 0.05, 0.05 / 2, 0.05 / 3))]
    for i, (a, b, alpha) in enumerate(cases):
        want = seeds_needed(a, b, most=100_000, alpha=alpha)
        got = fn(list(a), list(b), alpha)
        if isinstance(got, bool) or not isinstance(got, (int, np.integer)) or got < 2:
            raise AssertionError(f"case {i}: return a whole number of seeds (>= 2), got {got!r}")
        if abs(int(got) - want) <= 1:
            continue
        from statistics import NormalDist

        sd = math.sqrt((np.var(a, ddof=1) + np.var(b, ddof=1)) / 2)
        z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(0.8)
        normal = math.ceil(2 * (z * sd / abs(np.mean(a) - np.mean(b))) ** 2)
        hint = " (the normal approximation: with few seeds use t quantiles)" if abs(int(got) - normal) <= 1 else ""
        raise AssertionError(f"case {i} (alpha {alpha:.4g}): expected about {want} seeds per method, got {got}{hint}")
    _ok("seeds needed", len(cases), fn)


# --------------------------------------------------------------------------- lesson 15: a study's plan

@exercise
def check_study_plan(plan, most_runs: int = 24, most_steps: int = 8) -> None:
    """Exercise 15.2: ``plan`` (a function returning the text, or the text) is a plan file (TOML) for a small study
    of the tiny LM that ``grpo-lab study`` can read: at least two methods, at least two learning rates, at least
    three seeds, a primary measure and a correction, and small enough to run in this lesson (at most ``most_runs``
    runs of at most ``most_steps`` steps). Any valid plan passes; a plan the study engine refuses fails with the
    engine's own message (no primary measure, a comparison that names no arm, a verdict asked of an exploratory
    reading, a confounded comparison naming the settings its arms differ in, an unknown field, ...). A plan without
    a manipulation check passes with a note. A function that passes is the one lesson 15's run cell uses."""
    import tempfile
    from pathlib import Path

    from .study import PlanError, read_plan

    PASSED.pop("study plan", None)  # a failed check leaves no earlier pass behind
    text = plan() if callable(plan) else plan
    if not isinstance(text, str) or not text.strip():
        raise AssertionError("exercise 15.2: return the plan file's text (a TOML string)")
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "plan.toml"
        path.write_text(text)
        try:
            parsed = read_plan(path)
        except PlanError as e:
            raise AssertionError(f"the study engine refuses this plan: {str(e).replace(str(path), 'plan.toml')}") \
                from None
    arms = parsed.arms.values()
    methods = {a.method for a in arms}
    rates = {a.config.learning_rate for a in arms}
    runs = sum(len(a.seeds) for a in arms)
    problems = []
    if {a.config.policy for a in arms} != {"tiny-lm"}:
        problems.append("every arm trains the tiny LM (policy = \"tiny-lm\"): it runs in seconds here")
    if len(methods) < 2:
        problems.append(f"compare at least two methods (the plan has {', '.join(sorted(methods))})")
    if len(rates) < 2:
        problems.append(f"try at least two learning rates (the plan has {', '.join(f'{r:g}' for r in sorted(rates))})")
    if min(len(a.seeds) for a in arms) < 3:
        problems.append("give every arm at least three seeds")
    if runs > most_runs or max(a.config.steps for a in arms) > most_steps:
        problems.append(f"keep it small enough to run here: at most {most_runs} runs of at most {most_steps} steps "
                        f"(the plan has {runs} runs, up to {max(a.config.steps for a in arms)} steps)")
    if parsed.correction == "none" and len(parsed.comparisons) > 1:
        problems.append("with more than one planned comparison, correct for multiplicity (correction = \"holm\")")
    if problems:
        raise AssertionError("exercise 15.2: the plan is valid, but " + "; ".join(problems))
    if callable(plan):
        PASSED["study plan"] = plan
    if not parsed.manipulation:
        print("note: the plan has no [manipulation] section: its report will not say whether training moved the "
              "measure (add [manipulation] with measure = \"pass@1\")")
    print(f"✓ the study engine reads your plan: {len(parsed.arms)} arms ({', '.join(sorted(methods))} at "
          f"{', '.join(f'{r:g}' for r in sorted(rates))}), {runs} runs, primary measure {parsed.primary.text}, "
          f"{len(parsed.comparisons)} planned comparison(s), correction {parsed.correction}")
