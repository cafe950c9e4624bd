"""Real, procedurally generated problems from reasoning-gym (notebook 06, ``grpo-lab profile``).

reasoning-gym (PyPI ``reasoning-gym``, Apache-2.0, pure Python) generates problems with exact
answers and a verifier per dataset; its generators run offline, so they are grpo-lab's real
problems where the Hugging Face hub (GSM8K) cannot be reached. Two ways in:

- ``task="gsm_symbolic"``: GSM-Symbolic, 100 templates derived from GSM8K problems with fresh names
  and numbers. It is graded like GSM8K, by :func:`grpo_lab.tasks.gsm8k.is_correct` on the
  reference number, with GSM8K's "#### N" system prompt, so a result on it reads like one on GSM8K.
  On generated problems our grader and reasoning-gym's verifier agree on every reference answer
  (``tests/test_gym.py`` checks 500).
- ``task="gym:<dataset>"`` or ``"gym:<dataset>:key=value,key=value"``: any reasoning-gym dataset, the
  options going to its config (``gym:chain_sum:min_terms=2,max_terms=2,min_digits=1,max_digits=1``
  is single-digit sums and differences). The binary reward is the dataset's own verifier:
  ``score_answer(answer, entry) == 1``. The system prompt asks for the answer inside
  ``<answer>...</answer>`` (reasoning-gym's convention); the answer handed to the verifier is the
  last such tag's content, else (a small model forgets the tags) the final number as the GSM8K
  grader reads it, else the whole completion stripped. That fallback is grpo-lab's choice.

Seeds: split ``"train"`` draws with ``seed``, ``"test"`` with ``seed + 10_000``; the same seed gives
the same problems every time. The two splits come from the same templates, so a test problem can
share a template (never, except by chance, its numbers) with a training problem.
A dataset whose verifier rejects every reference answer is refused; one that rejects some is
refused too, naming how many (the task could not grade its own answers).
"""

from __future__ import annotations

import json
import re

from .base import Problem, Task, register_family, register_task
from .gsm8k import extract_answer

DEFAULT_N = 1000  # problems when a split's size is not given (a generator has no "all")
TEST_SEED_OFFSET = 10_000
ANSWER_TAGS = re.compile(r"<answer>\s?(.*?)\s?</answer>", re.DOTALL)
GYM_SYSTEM_PROMPT = ("Given a problem, your task is to answer the question by thinking step-by-step. "
                     "Then give the final answer in the following format: <answer>answer here</answer>")


def _import_gym():
    try:
        import reasoning_gym
    except ImportError as e:
        if getattr(e, "name", None) != "reasoning_gym":  # installed, but something it imports is missing or broken
            raise RuntimeError(f"reasoning-gym is installed but does not import: {e} (a module it needs); reinstall it "
                               "with its dependencies: pip install --force-reinstall reasoning-gym") from e
        raise RuntimeError("reasoning-gym tasks need the reasoning-gym package: pip install 'grpo-lab[real]' "
                           "(or pip install reasoning-gym)") from None
    return reasoning_gym


def _parse_value(text: str):
    """An option value: JSON where it parses (2, 0.5, true, "x"), else the string itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_spec(spec: str) -> tuple[str, dict]:
    """``"chain_sum:min_terms=2,max_digits=1"`` -> ``("chain_sum", {"min_terms": 2, "max_digits": 1})``."""
    name, _, opts = spec.partition(":")
    options = {}
    for part in filter(None, (p.strip() for p in opts.split(","))):
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"reasoning-gym option {part!r} in {spec!r} is not key=value")
        options[key.strip()] = _parse_value(value.strip())
    return name.strip(), options


def gym_answer(completion: str) -> str:
    """What a completion answers: the last ``<answer>`` tag, else the GSM8K grader's final number, else the text."""
    tags = ANSWER_TAGS.findall(completion)
    if tags:
        return tags[-1].strip()
    number = extract_answer(completion)
    return number if number is not None else completion.strip()


class GymTask(Task):
    """One reasoning-gym dataset with fixed options; problems carry their gym entry (JSON) for the verifier."""

    chat = True
    system_prompt = GYM_SYSTEM_PROMPT

    def __init__(self, dataset: str = "", options: dict | None = None, name: str | None = None):
        self.dataset, self.options = dataset, dict(options or {})
        self.name = name or f"gym:{dataset}" + (":" + ",".join(f"{k}={v}" for k, v in self.options.items())
                                                  if self.options else "")
        self._scorer = None

    def canonical(self, problem: Problem) -> str:
        """chain_sum: the multiset of its signed terms ("28 + 79" and "79 + 28" are one sum; "4 - 7" and "-7 + 4"
        too), so a commuted twin of a training problem is a near-duplicate; other datasets: the prompt."""
        if self.dataset == "chain_sum":
            expr = problem.prompt.rsplit(":", 1)[-1].split("=")[0]
            terms = re.findall(r"([+-]?)\s*(\d+)", expr.replace(" ", ""))
            if terms:
                return "sum:" + ",".join(sorted(f"{sign or '+'}{int(n)}" for sign, n in terms))
        return problem.prompt

    def _make(self, seed: int, size: int):
        rg = _import_gym()
        from reasoning_gym.factory import DATASETS

        if self.dataset not in DATASETS:
            close = [d for d in sorted(DATASETS) if d.startswith(self.dataset[:3])][:8]
            raise ValueError(f"unknown reasoning-gym dataset {self.dataset!r}"
                             + (f" (did you mean {', '.join(close)}?)" if close else "")
                             + f"; {len(DATASETS)} are registered: reasoning_gym.factory.DATASETS")
        try:
            return rg.create_dataset(self.dataset, seed=seed, size=size, **self.options)
        except (TypeError, ValueError, AssertionError) as e:
            raise ValueError(f"reasoning-gym dataset {self.dataset!r} refused the options {self.options}: "
                             f"{type(e).__name__}: {e}") from None

    def problems(self, split, n, seed, smoke=False):
        if split not in ("train", "test"):
            raise ValueError(f"split must be 'train' or 'test', got {split!r}")
        size = DEFAULT_N if n is None else n
        if size < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        ds = self._make(seed + (TEST_SEED_OFFSET if split == "test" else 0), size)
        self._scorer = ds
        out = [Problem(e["question"], str(e["answer"]), _level(e), self.name, json.dumps(e, default=str))
               for e in ds]
        bad = [p for p in out if not self.grade(self._reference_completion(p), p)]
        if bad:
            raise ValueError(f"task {self.name}: its verifier rejects {len(bad)} of {len(out)} reference answers "
                             f"(first: {bad[0].answer!r} for {bad[0].prompt[:80]!r}), so it cannot grade "
                             "completions; choose other options or another dataset")
        return out

    def _reference_completion(self, p: Problem) -> str:
        return f"<answer>{p.answer}</answer>"

    def grade(self, completion: str, problem: Problem) -> bool:
        if self._scorer is None:
            self._scorer = self._make(0, 1)
        entry = json.loads(problem.meta) if problem.meta else {"answer": problem.answer}
        try:
            return self._scorer.score_answer(gym_answer(str(completion)), entry) == 1.0
        except Exception:  # a verifier that crashes on odd text has not been answered correctly
            return False


def _level(entry: dict) -> int:
    d = entry.get("metadata", {}).get("difficulty")
    return int(d) if isinstance(d, (int, float)) and float(d).is_integer() else 0


@register_task
class GSMSymbolic(GymTask):
    """GSM-Symbolic from reasoning-gym, graded like GSM8K (our grader, "#### N" prompt)."""

    name = "gsm_symbolic"
    system_prompt = None  # GSM8K's

    def __init__(self):
        super().__init__("gsm_symbolic", {}, name="gsm_symbolic")

    def _reference_completion(self, p: Problem) -> str:
        return f"#### {p.answer}"

    def grade(self, completion: str, problem: Problem) -> bool:
        from .gsm8k import is_correct

        return is_correct(completion, problem.answer)

    def verifier_agrees(self, problems) -> list[Problem]:
        """The problems on whose reference answer our grader and reasoning-gym's verifier disagree."""
        if self._scorer is None:
            self._scorer = self._make(0, 1)
        return [p for p in problems
                if self.grade(f"#### {p.answer}", p) != (self._scorer.score_answer(p.answer, json.loads(p.meta)) == 1.0)]


def _gym_family(rest: str) -> GymTask:
    dataset, options = parse_spec(rest)
    if not dataset:
        raise ValueError("task 'gym:' needs a dataset name, e.g. gym:chain_sum or gym:basic_arithmetic")
    task = GymTask(dataset, options)
    task._make(0, 1)  # an unknown dataset or option fails here, when the name is first used
    return task


register_family("gym", _gym_family)
