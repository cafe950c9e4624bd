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
