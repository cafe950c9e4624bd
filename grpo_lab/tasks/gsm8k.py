"""GSM8K-format answer grading (introduced in notebook 05; used on real GSM8K in notebook 06).

``extract_answer(text)`` finds the final answer of a GSM8K-style solution and returns it as a
normalised number string, or ``None``. Where it looks, first match wins:

1. the last ``#### N`` line (GSM8K's own answer format);
2. the last ``\\boxed{N}``;
3. the last "the answer is N" (also "answer: N"), case-insensitive;
4. fallback: the last number anywhere in the text.

Normalisation: thousands commas are dropped ("1,000" → "1000"), "$" and "%" and a trailing
period are ignored, trailing zeros go ("72.00" → "72", "3.50" → "3.5"), signs are kept
("-3", "−3" with a Unicode minus), "+5" → "5", "-0" → "0". It never raises, whatever the text.

``is_correct(completion, reference)`` compares the completion's answer with the reference's
(a GSM8K answer field with its "#### N" line, or a bare number).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

# a number: optional sign, optional $, digits with proper thousands commas or plain digits, decimals
# (a sign right after a digit is an operator, "10-3", not part of the number)
_NUM = r"(?:(?<![\d)])[-+−])?\$?\s?(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?"
_NUM_RE = re.compile(_NUM)
_HASH_RE = re.compile(r"####\s*(.*)")
_BOXED_RE = re.compile(r"\\boxed\s*\{([^{}]*)\}")
_ANSWER_IS_RE = re.compile(r"answer\s*(?:is|:|=)\s*:?\s*(.*)", re.IGNORECASE)
_MAX_DIGITS = 400  # longer digit strings are not answers; refusing them keeps Decimal cheap


def normalize_number(token: str) -> str | None:
    """``" $1,000.50 "`` → ``"1000.5"``; ``None`` if ``token`` is not a single number."""
    s = token.strip().replace("−", "-").replace("$", "").replace(" ", "").replace(",", "")
    s = s.rstrip(".%") if s.endswith((".", "%")) else s
    if not s or len(s) > _MAX_DIGITS or not re.fullmatch(r"[-+]?(\d+(\.\d*)?|\.\d+)", s):
        return None
    try:
        d = Decimal(s)
    except InvalidOperation:  # pragma: no cover - the regex admits only valid decimals
        return None
    if d == 0:
        return "0"
    out = format(d.normalize(), "f")
    return out


def _first_number(fragment: str) -> str | None:
    m = _NUM_RE.search(fragment)
    return normalize_number(m.group(0)) if m else None


def _last_number(fragment: str) -> str | None:
    found = None
    for m in _NUM_RE.finditer(fragment):
        found = m.group(0)
    return normalize_number(found) if found is not None else None


def extract_answer(text) -> str | None:
    """The final answer in ``text`` as a normalised number string, or ``None`` (see module doc)."""
    if not isinstance(text, str) or not text:
        return None
    hashes = _HASH_RE.findall(text)
    if hashes:
        return _first_number(hashes[-1])
    boxed = _BOXED_RE.findall(text)
    if boxed:
        return _first_number(boxed[-1])
    said = _ANSWER_IS_RE.findall(text)
    if said:
        ans = _first_number(said[-1].split("\n", 1)[0])
        if ans is not None:
            return ans
    return _last_number(text)


def reference_answer(reference) -> str:
    """The normalised answer of a reference: a GSM8K answer field, a bare number string, or an int/float.

    A reference with no number in it is an error, not a silent "wrong".
    """
    if isinstance(reference, bool) or not isinstance(reference, (str, int, float)):
        raise TypeError(f"reference must be a GSM8K answer string or a number, got {type(reference).__name__}")
    if isinstance(reference, float) and reference != reference:
        raise ValueError("reference is NaN")
    ans = extract_answer(str(reference)) if not isinstance(reference, str) else extract_answer(reference)
    if ans is None:
        raise ValueError(f"reference {str(reference)[:60]!r} contains no number to grade against")
    return ans


def is_correct(completion, reference) -> bool:
    """Whether ``extract_answer(completion)`` equals the reference's answer (as normalised numbers)."""
    want = reference_answer(reference)
    got = extract_answer(completion)
    return got is not None and got == want


# ---------------------------------------------------------------------------------------------
# The GSM8K data (notebook 06). Never committed here; downloaded from the hub by `datasets`.

GSM8K_ID, GSM8K_CONFIG = "openai/gsm8k", "main"
GSM8K_SIZES = {"train": 7473, "test": 1319}
SYSTEM_PROMPT = ("Solve the math problem. Think step by step, then write the final answer on its own line "
                 "as '#### <number>'.")


def load_gsm8k(split: str = "train", smoke: bool = False, n: int | None = None, seed: int = 0):
    """GSM8K problems as :class:`grpo_lab.tasks.Problem` (question, answer field with its "#### N" line).

    ``smoke=True`` returns ``n`` (default 64) of the project's synthetic GSM8K-style word
    problems instead: same fields, same grader, no download. Otherwise
    ``datasets.load_dataset("openai/gsm8k", "main")`` is used (7,473 train / 1,319 test); when
    the hub cannot be reached a ``RuntimeError`` explains how to get the data.
    """
    from .arithmetic import Problem
    from .word_problems import word_problems

    if split not in GSM8K_SIZES:
        raise ValueError(f"GSM8K has splits {', '.join(GSM8K_SIZES)}; got {split!r}")
    if smoke:
        return word_problems(64 if n is None else n, seed=seed + (0 if split == "train" else 10_000))
    try:
        from datasets import load_dataset

        ds = load_dataset(GSM8K_ID, GSM8K_CONFIG, split=split)
    except Exception as e:  # datasets raises ConnectionError, OSError, DatasetNotFoundError, ... offline
        raise RuntimeError(
            f"could not load GSM8K ({GSM8K_ID!r}, {GSM8K_CONFIG!r}, split {split!r}): {type(e).__name__}: "
            f"{str(e)[:200]}\nTo get it: run once with access to huggingface.co (it is then cached), or on a "
            f"connected machine run datasets.load_dataset('{GSM8K_ID}', '{GSM8K_CONFIG}').save_to_disk(DIR) and "
            f"copy DIR here; offline runs can use load_gsm8k(..., smoke=True) for synthetic problems.") from None
    problems = [Problem(q, a, 0) for q, a in zip(ds["question"], ds["answer"])]
    return problems if n is None else problems[:n]


def as_chat_dataset(problems, system_prompt: str = SYSTEM_PROMPT):
    """A ``datasets.Dataset`` with conversational ``prompt`` (system + user), ``answer`` and ``level`` columns."""
    from datasets import Dataset

    return Dataset.from_dict({
        "prompt": [[{"role": "system", "content": system_prompt}, {"role": "user", "content": p.prompt}]
                   for p in problems],
        "answer": [p.answer for p in problems], "level": [p.level for p in problems]})
