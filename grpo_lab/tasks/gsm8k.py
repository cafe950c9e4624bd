"""GSM8K-format answer grading (introduced in notebook 05; used on real GSM8K in notebook 06).

``extract_answer(text)`` finds the final answer of a GSM8K-style solution and returns it as a
canonical number string, or ``None``. Where it looks:

1. answer markers: ``#### ...`` lines (GSM8K's own format), the last ``\\boxed{...}`` (braces may
   nest: ``\\boxed{\\frac{1}{2}}``, ``\\boxed{1{,}000}``) and "the answer is ..." (also
   "answer: ...", "answer = ...", case-insensitive, even when one line holds two; since issue 83 also a
   labelled "Result: ..." and "final result is ...", so an answer given first and worked after is read:
   "Result: 56 km. Day 1: 20 km, day 2: 36 km." → 56; "the result is" inside the working is no marker). The marker that
   comes **last in the text** wins, whatever its kind (an "answer is" phrase only if it holds a number; a
   ``####`` line or a box that holds no readable number means no answer): a completion that boxes 24
   and then says "that is wrong; the answer is 25" answered 25;
2. a completion with no marker and no words (letters outside LaTeX commands), such as ``4 1/2``,
   ``2^3`` or ``10-3=7``, is read as one marker fragment;
3. fallback: the last number anywhere in the text (a mixed number "7 1/2", a magnitude in words,
   "worth $3.5 billion", and since issue 83 a decimal comma before a unit of measure, "3,5 kg" → 3.5, are one
   number there too; without a unit "3,5" may be a list and stays two numbers; ranges are not read as hedges outside a marker:
   "from 3 to 5 apples" reads 5); in a text with no digit at all, the last number written in words
   ("so there are thirty-six eggs" → 36).

Within a marker fragment the first number is the answer, the one the completion commits to, after
four readings: a worked expression is read after its last "=" ("#### 3 + 4 = 7" → 7), but only the
expression up to the first word after its first number, so working shown after the answer is not the
answer ("The answer is 18. This is because 16 - 3 - 4 = 9 ..." → 18); a fragment that starts with
"not" skips the negated number ("the answer is not 5, it is 6" → 6); a hedge between two numbers
commits to neither ("either 5 or 6", "5, or maybe 6", and since issue 83 an alternative in the next sentence, "12. Or 13 if we count Tom." → no
answer, whatever the other markers say: a reward that accepted it would teach a policy to hedge), and so does a range ("5-7 days", "4 to 6",
"from 100 to 120", "between 8 and 10"), but one number spelt twice commits to it ("0.25 or 1/4" →
0.25); a fragment that only denies a number ("the answer is not 9.") is no answer either; a fragment
with no digit is read as number words ("#### five" → 5, "twenty-one", "one hundred and five", "a
hundred and twenty", "seven and a half" → 7.5, "one half", "three quarters", "two dozen", "half a
dozen" → 6). Inside a marker, a scale word multiplies ("1.5 million" → 1500000, "2 dozen" → 24,
"$1.2 billion"), parts whose scales fall add up ("3 million 400 thousand" → 3400000), a magnitude
suffix multiplies ("12k", "2.5M", "3B", "4bn"; a lower-case "m" is metres and is not one), "and a
half" after digits adds ("3 and a half" → 3.5), a worked expression also ends at its sentence's
full stop ("8. 8 + 2 = 10" → 8) and a comma followed by one or two digits is a decimal comma ("3,5"
→ 3.5; "1,250" keeps its thousands comma). Forms read inside a fragment, the earliest-starting one
first: ``\\frac{a}{b}`` and ``\\frac34``, mixed numbers ``2\\frac{1}{2}`` and ``4 1/2`` (→ 4.5, also
before a full stop; a sign belongs to the whole: ``-1 1/2`` and ``- 1 1/2`` → -1.5), powers ``10^3`` and ``2^{10}``, scientific ``1.5 \\times 10^3`` (also ``×``,
``\\cdot``, ``*``), ``\\sqrt{4}`` when the root is rational (an irrational root is not a number
here), "a/b", and plain numbers. In free text (3) a power of a unit ("12 m^2") is not a number, nor is
an irrational root. Issue 51's rules, inside a marker: a bound commits to no number ("at least 12", "no more than 9", "up to 70"), nor
does a margin ("8 ± 2", "50 +/- 5"), a question ("16?", in free text too: "Maybe 16?"), an alternative ("18, but
it might be 20") or two answers ("4 and 9"; "\\boxed{3} \\boxed{5}", "\\boxed{6} or \\boxed{8}"), while the
same number twice commits to it; a correction in the same line commits to the corrected number ("45. Wait, no: 54",
"8, sorry, I mean 9"); "20% of 150, which is 30" answers 30; "minus 4" and "negative twelve" are negative; "one
and a half dozen" is 18 and "2 and a half thousand" 2500; Unicode fractions are numbers ("½", "2¾", "5⁄8" with the
fraction slash); a compound unit ("3 hours 30 minutes", "5 dollars and 25 cents", "2 feet 6 inches") is one
quantity, right when the reference is its value in either unit (3.5 or 210).
Numbers are read exactly (as fractions, never through binary floats or a 28-digit decimal context) and written back
canonically: thousands commas dropped ("1,000" → "1000"; LaTeX's "1{,}000" too), "$" and "%"
ignored, trailing zeros gone ("72.00" → "72"), a leading-dot decimal read (".5" → "0.5"),
signs kept ("-3", "−3" with a Unicode minus), "+5" → "5", "-0" → "0".

Choices (documented, tested):

- **Scientific notation** is a number: "1e3" → "1000", "2.5E-2" → "0.025".
- **Fractions** are numbers with their exact value: ``\\frac{1}{2}``, ``\\dfrac``, ``\\tfrac``
  anywhere, and "a/b" inside an answer marker (1-3; "#### 3/4" → "0.75"). A fraction whose
  decimal does not terminate is written reduced, "1/3". In free text (4) "3/4" is not read as
  one number: "3/4 of the 20 cookies" has the answer 20 unless a marker says otherwise.
- **Space as thousands separator**: "1 000" (a space, thin space or LaTeX ``\\,``, groups of
  exactly three digits) is 1000 inside an answer marker only; in free text "1 000" is two numbers.

It never raises, whatever the text. ``is_correct(completion, reference)`` compares the
completion's answer with the reference's (a GSM8K answer field with its "#### N" line, a bare
number string, an int or a float: a float is read from its shortest repr, so ``1e20`` is
100000000000000000000, not 20, and a numpy float from the shortest text in its own precision, so
``numpy.float32(0.1)`` is 0.1).
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from .base import Problem, Task, register_task

_MAX_DIGITS = 400  # longer digit strings are not answers; refusing them keeps the arithmetic cheap

# one number: optional sign (a sign right after a digit or ")" is an operator, "10-3"), optional $,
# then digits with proper thousands commas (a comma after the last group ends the number: "1,000, which"), plain
# digits, or a leading-dot decimal; decimals; exponent
_SIGN = r"(?:(?<![\d)])[-+−])?"
_BODY = r"(?:\d{1,3}(?:,\d{3})+(?!\d)(?!,\d)(?:\.\d+)?|\d+(?:\.\d+)?|(?<![\w.])\.\d+)(?:[eE][-+]?\d+(?!\w)(?!\.\d))?"
_NUM_RE = re.compile(_SIGN + r"\$?\s?" + _BODY)
# inside an answer marker, "1 000" groups too
_SPACED = r"\d{1,3}(?:[ \u2009\u202f]\d{3})+(?!\d)(?:\.\d+)?"
_MARKED_NUM = _SIGN + r"\$?\s?(?:" + _SPACED + r"|" + _BODY + r")"
# the spaces between a sign and \frac are matched only after a sign: a leading "\s*" would rescan every run
# of whitespace from each of its positions (quadratic time on long blank runs of untrusted model output)
_FRAC_RE = re.compile(r"(?:([-+−])\s*)?\\[dt]?frac\s*\{\s*(" + _MARKED_NUM + r")\s*\}\s*\{\s*(" + _MARKED_NUM + r")\s*\}")
_MARKED_RE = re.compile(r"(" + _MARKED_NUM + r")(?:\s*/\s*(" + _BODY + r"))?")
_HASH_RE = re.compile(r"####[ \t]*([^\n]*)")
_BOXED_RE = re.compile(r"\\boxed\s*\{")
_ANSWER_IS_RE = re.compile(r"(?:answer\s*(?:is|:|=)|\bresult\s*:|\bfinal\s+result\s*(?:is|:|=))\s*:?",
                           re.IGNORECASE)  # issue 83: "Result: 56 km. Day 1: 20 km, ..." answered 56
_NUM = r"(" + _MARKED_NUM + r")"
_EXP = r"\^\s*(?:\{\s*([-+−]?\d{1,3})\s*\}|([-+−]?\d{1,3})(?!\d))"  # an exponent: ^3, ^{10}, ^{-2}
_FRAC_SHORT_RE = re.compile(r"(?:([-+−])\s*)?\\[dt]?frac\s*(\d)\s*(\d)")  # \frac34: one-digit arguments
# "-1 1/2" and "- 1 1/2" are -(1 + 1/2): the sign belongs to the whole mixed number
_MIXED_SIGN = r"(?:(?<![\d)])([-+−])[ \t]?)?"
_MIXED_TEX_RE = re.compile(r"(?<!\d)" + _MIXED_SIGN + r"(\d+)\s*\\[dt]?frac\s*(?:\{\s*(\d+)\s*\}|(\d))\s*"
                           r"(?:\{\s*(\d+)\s*\}|(\d))")
_MIXED_SLASH_RE = re.compile(r"(?<![\d.,/])" + _MIXED_SIGN + r"(\d+)[ \t]+(\d+)\s*/\s*(\d+)(?!\d|\.\d)")  # "4 1/2." ends
# inside an answer marker only: "1.5 million" (a scale word after a number), "3,5" (a decimal comma: one or two
# digits after the comma and no further group; "1,250" stays a thousands comma)
_SCALE_WORDS = {"dozen": 12, "hundred": 100, "thousand": 10**3, "million": 10**6, "billion": 10**9,
                "trillion": 10**12}  # "2 dozen", "1.5 million"; number words know every one but trillion (_SCALES)
_SCALE_WORD = "(?:" + "|".join(_SCALE_WORDS) + ")"
_SCALES_RUN = r"(" + _SCALE_WORD + r"(?:[ \t]+" + _SCALE_WORD + r")?)\b"  # "hundred thousand" is 10^5
_SCALED_RE = re.compile(r"(?<![\d.,])(" + _SIGN + r"\$?\s?" + _BODY + r")\s*" + _SCALES_RUN, re.IGNORECASE)
# the next part of a compound magnitude: "3 million 400 thousand", "1 billion, 200 million and 5 thousand"
_SCALED_NEXT_RE = re.compile(r"[ \t]*,?[ \t]*(?:and[ \t]+)?(" + _BODY + r")[ \t]*" + _SCALES_RUN, re.IGNORECASE)
_SUFFIX_RE = re.compile(r"(?<![\d.,])(" + _SIGN + r"\$?\s?" + _BODY + r")(k|K|M|B|bn)(?![A-Za-z\d])")
_SUFFIXES = {"k": 10**3, "K": 10**3, "M": 10**6, "B": 10**9, "bn": 10**9}
_AND_A_RE = re.compile(r"(?<![\d.,])(" + _SIGN + r"\$?\s?" + _BODY + r")[ \t]+and[ \t]+an?[ \t]+(half|quarter)\b"
                       r"(?:[ \t]+(dozen|hundred|thousand|million|billion)\b)?",
                       re.IGNORECASE)  # "3 and a half", "2 and a half dozen"
# a range commits to neither end: "5-7 days", "4 to 6", "100 – 120" after a number; "between 8 and 10"
_RANGE_RE = re.compile(r"(?:-|[ \t]*(?:–|—|\bto\b)[ \t]*)[$]?\.?\d", re.IGNORECASE)
_BETWEEN_RE = re.compile(r"\bbetween\s*$", re.IGNORECASE)
_BETWEEN_AND_RE = re.compile(r"[ \t]*and[ \t]+[-+−$]?\.?\d", re.IGNORECASE)
_SENTENCE_END_RE = re.compile(r"\.(?=\s)")
# a power or a scientific form starts where a number starts, never inside a run of digits or of spaced digit
# groups: tried at every position of a long run, each try rescanned the rest of it (quadratic time on
# "7" x 20000, "111," x N, "1 000 000 ...", "0.000...1": the degenerate outputs RL produces)
_NUM_START = r"(?<![\d.,])(?<!\d[ \u2009\u202f])"
_SCI_RE = re.compile(_NUM_START + _NUM + r"\s*(?:\\times|×|\\cdot|\*)\s*10\s*" + _EXP)
_POW_RE = re.compile(_NUM_START + _NUM + r"\s*" + _EXP)
_DECIMAL_COMMA_FREE_RE = re.compile(r"(?<![\d.,])(" + _SIGN + r"\d+),(\d{1,2})(?![\d,])"
                                    r"(?=[ \t]*(?:(?:kg|g|km|m|cm|mm|l|ml|lb|lbs|oz|kilo\w*|litre\w*|liter\w*|"
                                    r"meter\w*|metre\w*|euros?|dollars?|hours?)\b|%|€|£))", re.IGNORECASE)
# in free text a decimal comma is read only before a unit of measure ("3,5 kg", issue 83); elsewhere "3,5" may be a
# list of two numbers
_DECIMAL_COMMA_RE = re.compile(r"(?<![\d.,])(" + _SIGN + r"\d+),(\d{1,2})(?![\d,])")
# "either 5 or 6", "5 or 6": a hedge between two numbers commits to neither
_HEDGE_RE = re.compile(r"[ \t]*(?:,[ \t]*)?or[ \t]+(?:maybe[ \t]+|perhaps[ \t]+)?(?=[-+−$]?\.?\d)", re.IGNORECASE)
_WORD2_RE = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}")  # a word of 2+ letters, not a LaTeX command
# issue 51's rules. A bound commits to no number ("at least 12", "no more than 9", "up to 70"); so does a number
# with a margin ("8 ± 2", "50 +/- 5") or a question mark ("16?"), an alternative that "could" or "might" be
# another number ("18, but it might be 20"), and "4 and 9" (two answers)
_BOUND_RE = re.compile(r"\s*(?:(?:probably|likely|perhaps|maybe|about|roughly|approximately)[ \t]+)?(?:at[ \t]+(?:least|"
                       r"most)|no[ \t]+(?:more|less|fewer)[ \t]+than|(?:more|less|fewer)[ \t]+than|up[ \t]+to)\b",
                       re.IGNORECASE)
_MARGIN_RE = re.compile(r"[ \t]*(?:±|\+/-|\+-|\\pm)")
_QUESTION_RE = re.compile(r"[ \t]*\?")
_ALTERNATIVE_RE = re.compile(r"[ \t]*,?[ \t]*(?:but|though|although|or)[ \t]+(?:it[ \t]+|that[ \t]+)?(?:could|might|may)"
                             r"(?:[ \t]+also)?[ \t]+be[ \t]+(?=[-+−$]?\.?\d)", re.IGNORECASE)
_OR_NEXT_RE = re.compile(r"[ \t]*[.;!][ \t]*or[ \t]+(?:maybe[ \t]+|perhaps[ \t]+)?(?=[-+−$]?\.?\d)",
                         re.IGNORECASE)  # issue 83: "The answer is 12. Or 13 if we count Tom." commits to neither
_AND_NUM_RE = re.compile(r"[ \t]+and[ \t]+(?=[-+−$]?\.?\d)", re.IGNORECASE)
# a correction in the same line commits to the corrected number: "45. Wait, no: 54", "8, sorry, I mean 9"
_CORRECTION_RE = re.compile(r"\b(?:wait|sorry|actually|correction|i[ \t]+mean|i[ \t]+meant|scratch[ \t]+that)\b"
                            r"[^\d\n]{0,24}?(?=[-+−$]?\.?\d)", re.IGNORECASE)
# "20% of 150, which is 30": the value the sentence gives after the percentage of a quantity
_PERCENT_OF_RE = re.compile(r"[ \t]*%[ \t]+of[ \t]+[$]?\d[\d,]*(?:\.\d+)?[ \t]*,?[ \t]*(?:which[ \t]+is|that[ \t]+is|"
                            r"i\.e\.|=|equals|gives|is)[ \t]*", re.IGNORECASE)
_BETWEEN_BOXES_RE = re.compile(r"[\s,;]{0,8}(?:or[\s,;]{0,8})?", re.IGNORECASE)
_NEGATIVE_WORD_RE = re.compile(r"\s*(?:minus|negative)[ \t]+(?=[\d.$a-z])", re.IGNORECASE)
# compound units: "3 hours 30 minutes" is 3.5 hours or 210 minutes; either reading of one quantity is its answer
_UNIT_PAIRS = {("hour", "minute"): 60, ("minute", "second"): 60, ("day", "hour"): 24, ("week", "day"): 7,
               ("year", "month"): 12, ("dollar", "cent"): 100, ("pound", "ounce"): 16, ("foot", "inch"): 12,
               ("feet", "inch"): 12, ("meter", "centimeter"): 100, ("metre", "centimetre"): 100}
_UNIT_WORD = r"(hours?|hrs?|minutes?|mins?|seconds?|secs?|days?|weeks?|years?|months?|dollars?|cents?|pounds?|" \
             r"ounces?|oz|feet|foot|ft|inch(?:es)?|meters?|metres?|centimeters?|centimetres?|cm)"
_COMPOUND_RE = re.compile(r"(?<![\d.,])(\d+(?:\.\d+)?)[ \t]*" + _UNIT_WORD + r"\b[ \t]*,?[ \t]*(?:and[ \t]+)?"
                          r"(\d+(?:\.\d+)?)[ \t]*" + _UNIT_WORD + r"\b", re.IGNORECASE)
_UNIT_ALIASES = {"hr": "hour", "hrs": "hour", "min": "minute", "mins": "minute", "sec": "second", "secs": "second",
                 "oz": "ounce", "ft": "foot", "inches": "inch", "cm": "centimeter",
                 "centimetres": "centimetre", "metres": "metre"}
# Unicode fractions: "½", "2¾" (a mixed number), "5⁄8" (the fraction slash)
_VULGAR = {"½": (1, 2), "⅓": (1, 3), "⅔": (2, 3), "¼": (1, 4), "¾": (3, 4), "⅕": (1, 5), "⅖": (2, 5), "⅗": (3, 5),
           "⅘": (4, 5), "⅙": (1, 6), "⅚": (5, 6), "⅐": (1, 7), "⅛": (1, 8), "⅜": (3, 8), "⅝": (5, 8), "⅞": (7, 8),
           "⅑": (1, 9), "⅒": (1, 10)}
_VULGAR_RE = re.compile(r"(\d?)([" + "".join(_VULGAR) + r"])")


class _Compound(str):
    """An answer in compound units ("3 hours 30 minutes"): its value in the larger unit, with ``other``, the same
    quantity in the smaller one (210). Either is the answer: the reference's number is in the question's unit."""

    other: str | None = None


class _Hedge(str):
    """What :func:`_marked_number` returns for "either 5 or 6", "5-7", "between 8 and 10" or "not 9" alone: an
    answer marker that commits to no number (the completion then has no answer, whatever else it says)."""


HEDGE = _Hedge("hedge")
_SQRT_RE = re.compile(r"\\sqrt\s*\{\s*(" + _BODY + r")\s*\}")
_UNIT_POWER_RE = re.compile(r"(?<=[A-Za-z])\^\s*(?:\{[^{}]{0,8}\}|[-+−]?\d+)")  # m^2, cm^{3}: units
_NOT_RE = re.compile(r"\s*not\b", re.IGNORECASE)
_LATEX_CMD_RE = re.compile(r"\\[A-Za-z]+")
_ONES = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                                    "fourteen fifteen sixteen seventeen eighteen nineteen".split())}
_TENS = {w: 10 * i for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), start=2)}
_SCALES = {w: v for w, v in _SCALE_WORDS.items() if w != "trillion"}
_FRACTION_WORDS = {"half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4}
_WORD_RE = re.compile(r"[a-z]+", re.IGNORECASE)


def _fraction(token: str) -> Fraction | None:
    """The exact value of one number token (no fraction bar), or ``None``."""
    s = (token.strip().replace("−", "-").replace("$", "").replace(",", "")
         .replace(" ", "").replace("\u2009", "").replace("\u202f", ""))
    s = s.rstrip(".%") if s.endswith((".", "%")) else s
    if not s or len(s) > _MAX_DIGITS or not re.fullmatch(r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d{1,4})?", s):
        return None
    try:
        d = Decimal(s)  # exact: Decimal construction never rounds
    except InvalidOperation:  # pragma: no cover - the regex admits only valid decimals
        return None
    if d != 0 and abs(d.adjusted()) > _MAX_DIGITS:
        return None
    return Fraction(d)


def canonical(x: Fraction) -> str:
    """Exact canonical text of a rational: "1000", "-3.5", "0.0000001"; "1/3" when the decimal does not end."""
    if x == 0:
        return "0"
    num, den = abs(x.numerator), x.denominator
    sign = "-" if x < 0 else ""
    k, d = 0, den
    for p in (2, 5):
        while d % p == 0:
            d //= p
    if d != 1:
        return f"{sign}{num}/{den}"
    while (10**k) % den:
        k += 1
    digits = str(num * (10**k // den)).rjust(k + 1, "0")
    whole, frac = (digits[:-k], digits[-k:]) if k else (digits, "")
    frac = frac.rstrip("0")
    return sign + whole + ("." + frac if frac else "")


def normalize_number(token: str) -> str | None:
    """``" $1,000.50 "`` → ``"1000.5"``, ``"3/4"`` → ``"0.75"``; ``None`` if ``token`` is not a single number."""
    if not isinstance(token, str):
        return None
    if token.count("/") == 1:
        a, b = token.split("/")
        fa, fb = _fraction(a), _fraction(b)
        return canonical(fa / fb) if fa is not None and fb is not None and fb != 0 else None
    f = _fraction(token)
    return canonical(f) if f is not None else None


def _frac_value(m: re.Match) -> str | None:
    value = normalize_number(f"{m.group(2)}/{m.group(3)}")
    if value is None or m.group(1) not in ("-", "−"):
        return value
    return value[1:] if value.startswith("-") else ("0" if value == "0" else "-" + value)


def _words_number(fragment: str) -> str | None:
    """Number words at the start of a fragment, or None when it does not start with one: "five", "twenty-one",
    "one hundred and five", "a hundred and twenty", "two dozen", "half a dozen", "seven and a half", "one
    quarter", "three quarters" ("3 thousand" has a digit and is read as a number)."""
    total, current, seen = 0, Fraction(0), False
    pending = None  # "a" (1) or "half a" (1/2) before a scale or fraction word: "a dozen", "half a dozen"
    w = ""
    for m in _WORD_RE.finditer(fragment.replace("-", " ")):
        gap = fragment[m.start() - 1] if m.start() else " "
        before, w = w, m.group(0).lower()  # the word before (a slice of the text before would be quadratic)
        if (seen or pending is not None) and gap not in " -":
            break
        if w in _ONES and pending is None:
            current += _ONES[w]
        elif w in _TENS and pending is None:
            current += _TENS[w]
        elif w in _SCALES and (seen or pending is not None):
            count = current if seen else pending
            if _SCALES[w] <= 100:  # "two dozen", "three hundred": the count so far is multiplied
                current = count * _SCALES[w]
            else:
                total, current = total + count * _SCALES[w], Fraction(0)
            pending = None
        elif w == "and" and seen:
            continue
        elif w in ("a", "an") and seen and before == "and":
            continue  # "seven and a half"
        elif w in ("a", "an") and not seen and pending is None:
            pending = Fraction(1)  # "a hundred", "a dozen", "a quarter"
            continue
        elif w == "half" and not seen and pending is None:
            pending = Fraction(1, 2)  # "half a dozen"
            continue
        elif w == "a" and pending == Fraction(1, 2) and before == "half":
            continue
        elif w in _FRACTION_WORDS and seen and before in ("a", "an"):
            value = total + current + Fraction(1, _FRACTION_WORDS[w])  # "four and a quarter"
            scale = re.match(r"[ \t]+(dozen|hundred|thousand|million|billion)\b", fragment[m.end():m.end() + 12],
                             re.IGNORECASE)  # "two and a half dozen"
            return canonical(value * (_SCALE_WORDS[scale.group(1).lower()] if scale else 1))
        elif w in _FRACTION_WORDS and (seen or pending == 1):
            count = (total + current) if seen else pending  # "one half", "three quarters", "a quarter"
            return canonical(count / _FRACTION_WORDS[w])
        else:
            break
        seen = True
    return canonical(total + current) if seen else None


_NUMBER_WORD = "|".join([*_ONES, *_TENS, *_SCALES])
_WORDS_RUN_RE = re.compile(r"(?:\b(?:half[ ]+)?an?[ ]+(?=(?:" + "|".join(_SCALES) + r"|half|quarter)\b))?"
                           r"\b(?:" + _NUMBER_WORD + r")(?:(?:[ -]+(?:and[ ]+)?)(?:" + _NUMBER_WORD + r"))*\b"
                           r"(?:[ ]+and[ ]+a[ ]+(?:half|quarter)\b|[ ]+(?:" + "|".join(_FRACTION_WORDS) + r")\b)?",
                           re.IGNORECASE)


def _last_words_number(text: str) -> str | None:
    """The last number written in words in ``text`` ("so there are thirty-six eggs" → 36), or None."""
    last = None
    for last in _WORDS_RUN_RE.finditer(text):
        pass
    return _words_number(last.group(0)) if last is not None else None


def _scale(words: str) -> int:
    out = 1
    for w in words.lower().split():
        out *= _SCALE_WORDS[w]
    return out


def _scaled(text: str, m: re.Match) -> tuple[int, Fraction] | None:
    """``(end, value)`` of the magnitude that ``m`` (:data:`_SCALED_RE`) starts: "1.5 million" → 1500000, and
    its next parts while their scales fall ("3 million 400 thousand" → 3400000; at most a few parts, so a long
    run of them is still read in linear time)."""
    x = _fraction(m.group(1))
    if x is None:
        return None
    scale = _scale(m.group(2))
    value, end = x * scale, m.end()
    while True:
        nxt = _SCALED_NEXT_RE.match(text, end)
        part = _fraction(nxt.group(1)) if nxt is not None else None
        if part is None or _scale(nxt.group(2)) >= scale:
            return end, value
        scale = _scale(nxt.group(2))
        value, end = value + part * scale, nxt.end()


def _power(base: str, exp: str | None) -> str | None:
    b = _fraction(base)
    if b is None or exp is None:
        return None
    e = int(exp.replace("−", "-"))
    if b == 0 and e < 0:
        return None
    size = abs(e) * max(len(str(abs(b.numerator))), len(str(b.denominator)))
    return canonical(b ** e) if size <= _MAX_DIGITS else None


def _sqrt(token: str) -> str | None:
    import math

    x = _fraction(token)
    if x is None or x < 0:
        return None
    rn, rd = math.isqrt(x.numerator), math.isqrt(x.denominator)
    return canonical(Fraction(rn, rd)) if rn * rn == x.numerator and rd * rd == x.denominator else None


def _signed(sign, x: Fraction) -> str:
    return canonical(-x if sign in ("-", "−") else x)


def _mixed_slash(m: re.Match) -> str | None:
    """The value of a :data:`_MIXED_SLASH_RE` match, "4 1/2" → 4.5 with its sign, or None when the fraction is not a
    proper one after a whole number ("4 3/2" is not a mixed number)."""
    whole, a, b = int(m.group(2)), int(m.group(3)), int(m.group(4))
    return _signed(m.group(1), whole + Fraction(a, b)) if 0 < a < b else None


def _unit(word: str) -> str:
    w = word.lower()
    w = _UNIT_ALIASES.get(w, w)
    return w if w in ("feet", "inch") else w[:-1] if w.endswith("s") else w


def _compound(m: re.Match) -> _Compound | None:
    """The value of a :data:`_COMPOUND_RE` match in the larger unit, with the smaller unit's beside it, when the
    two units are a known pair ("3 hours 30 minutes" -> 3.5, other 210); else None."""
    big, small = _unit(m.group(2)), _unit(m.group(4))
    factor = _UNIT_PAIRS.get((big, small))
    a, b = _fraction(m.group(1)), _fraction(m.group(3))
    if factor is None or a is None or b is None:
        return None
    out = _Compound(canonical(a + b / factor))
    out.other = canonical(a * factor + b)
    return out


def _negate(value: str) -> str:
    if isinstance(value, _Compound) or value == "0":
        return value
    return value[1:] if value.startswith("-") else "-" + value


def _candidates(fragment: str):
    """``(start, -length, value)`` for every number form of a marker fragment (see the module doc)."""
    def exp_of(m, i):
        return m.group(i) if m.group(i) is not None else m.group(i + 1)

    for m in _MIXED_TEX_RE.finditer(fragment):
        whole, a, b = m.group(2), m.group(3) or m.group(4), m.group(5) or m.group(6)
        if int(b) != 0:
            yield m.start(), -len(m.group(0)), _signed(m.group(1), Fraction(int(whole)) + Fraction(int(a), int(b)))
    for m in _MIXED_SLASH_RE.finditer(fragment):
        value = _mixed_slash(m)
        if value is not None:
            yield m.start(), -len(m.group(0)), value
    for m in _SCALED_RE.finditer(fragment):
        scaled = _scaled(fragment, m)
        if scaled is not None:
            yield m.start(), -(scaled[0] - m.start()), canonical(scaled[1])
    for m in _SUFFIX_RE.finditer(fragment):
        x = _fraction(m.group(1))
        if x is not None:
            yield m.start(), -len(m.group(0)), canonical(x * _SUFFIXES[m.group(2)])
    for m in _AND_A_RE.finditer(fragment):
        x = _fraction(m.group(1))
        if x is not None:
            half = Fraction(1, 2 if m.group(2).lower() == "half" else 4)
            scale = _SCALE_WORDS[m.group(3).lower()] if m.group(3) else 1
            yield m.start(), -len(m.group(0)), canonical((x - half if x < 0 else x + half) * scale)
    for m in _COMPOUND_RE.finditer(fragment):
        value = _compound(m)
        if value is not None:
            yield m.start(), -len(m.group(0)), value
    for m in _DECIMAL_COMMA_RE.finditer(fragment):
        yield m.start(), -len(m.group(0)), normalize_number(f"{m.group(1)}.{m.group(2)}")
    for regex in (_FRAC_RE, _FRAC_SHORT_RE):
        for m in regex.finditer(fragment):
            yield m.start(), -len(m.group(0)), _frac_value(m)
    for m in _SCI_RE.finditer(fragment):
        mant, e = _fraction(m.group(1)), exp_of(m, 2)
        ten = _power("10", e)
        if mant is not None and ten is not None:
            yield m.start(), -len(m.group(0)), canonical(mant * Fraction(ten))
    for m in _POW_RE.finditer(fragment):
        yield m.start(), -len(m.group(0)), _power(m.group(1), exp_of(m, 2))
    for m in _SQRT_RE.finditer(fragment):
        yield m.start(), -len(m.group(0)), _sqrt(m.group(1))
    for m in _MARKED_RE.finditer(fragment):
        yield m.start(), -len(m.group(0)), normalize_number(m.group(1) + (f"/{m.group(2)}" if m.group(2) else ""))


def _marked_number(fragment: str, depth: int = 0) -> str | None:
    """The answer in an answer-marker fragment (the readings and forms of the module doc), or None. ``depth``: how
    many corrections, percentages or sign words were read before (hostile text repeats them; past a few the
    fragment commits to nothing, and the recursion stays shallow)."""
    if depth > 4:
        return HEDGE
    fragment = (fragment.replace("{,}", ",").replace("\\,", " ").replace("\\!", "").replace("\\left", "")
                .replace("\\right", ""))
    digit = re.search(r"\d", fragment)
    if digit is not None:  # a worked expression is read for its result, "3 + 4 = 7" -> 7, but only the expression
        word = _WORD2_RE.search(fragment, digit.start())  # the answer commits to: what follows the first word
        stop = _SENTENCE_END_RE.search(fragment, digit.start())  # after a number, or the sentence's end ("18.
        ends = [x.start() for x in (word, stop) if x is not None]  # This is because 16 - 3 - 4 = 9 ...", "8. 8 +
        expression = fragment[:min(ends)] if ends else fragment  # 2 = 10") is working shown after the answer
        if "=" in expression:
            fragment = expression.rsplit("=", 1)[1]
    minus = _NEGATIVE_WORD_RE.match(fragment)
    if minus:  # "minus 4", "negative twelve"
        value = _marked_number(fragment[minus.end():], depth + 1)
        return value if value is None or value is HEDGE else _negate(value)
    if _BOUND_RE.match(fragment):  # "at least 15", "no more than 9": a bound commits to no number
        return HEDGE
    negated = _NOT_RE.match(fragment)
    if negated:  # "not 5, it is 6": the first number is the one denied
        rest = fragment[negated.end():]
        first = min(_candidates(rest), key=lambda c: c[:2], default=None)
        if first is None:
            return None
        fragment = rest[first[0] - first[1]:]
    best = min(_candidates(fragment), key=lambda c: c[:2], default=None)
    if negated and best is None:
        return HEDGE  # "the answer is not 9." and nothing else: it denies a number and commits to none
    if best is not None:  # the earliest, longest form; None when that form has no exact value (sqrt(2), 1/0)
        end = best[0] - best[1]
        correction = None
        for correction in _CORRECTION_RE.finditer(fragment, end):
            pass
        if correction is not None:  # "45. Wait, no: 54": the corrected number is the answer
            return _marked_number(fragment[correction.end():], depth + 1)
        percent = _PERCENT_OF_RE.match(fragment, end)
        if percent:  # "20% of 150, which is 30": the value, not the percentage
            value = _marked_number(fragment[percent.end():], depth + 1)
            if value is not None:
                return value
        for pattern in (_HEDGE_RE, _ALTERNATIVE_RE, _AND_NUM_RE, _OR_NEXT_RE):
            hedge = pattern.match(fragment, end)
            if hedge:  # "5 or 6", "18, but it might be 20", "4 and 9": no single answer; "0.25 or 1/4" names one
                other = min(_candidates(fragment[hedge.end():]), key=lambda c: c[:2], default=None)  # number twice
                return best[2] if other is not None and other[0] == 0 and other[2] == best[2] else HEDGE
        if _RANGE_RE.match(fragment, end) or (_BETWEEN_RE.search(fragment[max(0, best[0] - 12):best[0]])
                                              and _BETWEEN_AND_RE.match(fragment, end)):
            return HEDGE  # "5-7 days", "4 to 6", "between 8 and 10": a range commits to neither end
        if _MARGIN_RE.match(fragment, end) or _QUESTION_RE.match(fragment, end):
            return HEDGE  # "12 ± 3", "16?": a margin or a question commits to no number
        return best[2]
    return _words_number(fragment) if not re.search(r"\d", fragment) else None


def _last_number(text: str) -> tuple[str | None, int]:
    """``(value, end)`` of the last number in free text (its end in ``text``, which the caller reads further), or
    ``(None, 0)``."""
    text = _UNIT_POWER_RE.sub("", text.replace("{,}", ","))
    text = _SQRT_RE.sub(lambda m: f" {_sqrt(m.group(1)) or ''} ", text)  # sqrt(2) is not the number 2
    ends = []  # (end, -start, value): the number that ends last wins, the longest (earliest-starting) of those
    for m in _FRAC_RE.finditer(text):
        ends.append((m.end(), -m.start(), _frac_value(m)))
    for m in _MIXED_SLASH_RE.finditer(text):  # "7 1/2" is 7.5 (a lone "3/4" in free text is not read as one number)
        value = _mixed_slash(m)
        if value is not None:
            ends.append((m.end(), -m.start(), value))
    for m in _SCALED_RE.finditer(text):  # "worth $3.5 billion", "3 million 400 thousand"
        scaled = _scaled(text, m)
        if scaled is not None:
            ends.append((scaled[0], -m.start(), canonical(scaled[1])))
    for m in _DECIMAL_COMMA_FREE_RE.finditer(text):  # "3,5 kg" is 3.5 (issue 83)
        ends.append((m.end(), -m.start(), normalize_number(f"{m.group(1)}.{m.group(2)}")))
    last = max(ends, default=None)
    for m in _NUM_RE.finditer(text):
        if last is None or m.end() > last[0]:
            last = (m.end(), -m.start(), normalize_number(m.group(0)))
    return (last[2], last[0]) if last is not None else (None, 0)


def _box_at(text: str, m: re.Match) -> tuple[int, str, int]:
    """``(position, contents, end)`` of the box ``m`` opens (nested braces balanced; an unclosed one runs to the
    end of the text)."""
    depth, i = 1, m.end()
    while i < len(text) and depth:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return m.start(), text[m.end():i - 1 if depth == 0 else i], i


def _last_boxed(text: str) -> tuple[int, str] | None:
    """``(position, contents)`` of the last ``\\boxed{...}``, or None; :data:`HEDGE` as its contents when the box
    just before it, with nothing but "or", a comma or spaces between, holds another number ("\\boxed{3}
    \\boxed{5}", "\\boxed{6} or \\boxed{8}": two different final answers commit to neither; "first \\boxed{5},
    then \\boxed{6}, and \\boxed{8}" orders them, and the last is the answer). Only the last two are scanned, so the time is linear in the
    text however many ``\\boxed{`` it holds."""
    last = before = None
    for m in _BOXED_RE.finditer(text):
        before, last = last, m
    if last is None:
        return None
    pos, contents, _ = _box_at(text, last)
    if before is not None and last.start() - before.end() < 200:
        _, first, end = _box_at(text, before)
        gap = text[end:pos]
        a, b = _marked_number(first), _marked_number(contents)
        if end <= pos and _BETWEEN_BOXES_RE.fullmatch(gap) and a is not None and b is not None \
                and a is not HEDGE and b is not HEDGE and a != b:
            return pos, HEDGE
    return pos, contents


def extract_answer(text) -> str | None:
    """The final answer in ``text`` as a canonical number string, or ``None`` (see module doc)."""
    if not isinstance(text, str) or not text:
        return None
    if "\u2044" in text or _VULGAR_RE.search(text):  # "½", "2¾" (mixed), "5⁄8" (the fraction slash)
        text = _VULGAR_RE.sub(lambda m: f"{m.group(1)}{' ' if m.group(1) else ''}{_VULGAR[m.group(2)][0]}/"
                                        f"{_VULGAR[m.group(2)][1]}", text.replace("\u2044", "/"))
    markers = [(m.start(), m.group(1), True) for m in _HASH_RE.finditer(text)]
    boxed = _last_boxed(text)
    if boxed is not None and boxed[1] is HEDGE:
        return None
    if boxed is not None:
        markers.append((*boxed, True))
    said = list(_ANSWER_IS_RE.finditer(text))
    for i, m in enumerate(said):
        end = said[i + 1].start() if i + 1 < len(said) else len(text)
        markers.append((m.start(), text[m.end():end].split("\n", 1)[0], False))
    for _, fragment, final in sorted(markers, key=lambda t: t[0], reverse=True):
        ans = _marked_number(fragment)
        if ans is HEDGE:
            return None
        if ans is not None or final:  # a "####" line or a box is the answer, readable or not; a phrase
            return ans                 # without a number ("the answer is the total") is passed over
    if not re.search(r"[A-Za-z]", _LATEX_CMD_RE.sub("", text)):  # no words: the whole text is the answer
        ans = _marked_number(text)
        if ans is not None:
            return None if ans is HEDGE else ans
    if not re.search(r"\d", text):  # no digit anywhere: the last number written in words ("thirty-six eggs")
        return _last_words_number(text)
    value, end = _last_number(text)
    return None if value is not None and _QUESTION_RE.match(text, end) else value  # "Maybe 16?" asks, not answers


def reference_answer(reference) -> str:
    """The canonical answer of a reference: a GSM8K answer field, a bare number string, or an int/float.

    A reference with no number in it is an error, not a silent "wrong".
    """
    import numbers

    if isinstance(reference, numbers.Integral) and not isinstance(reference, bool):
        reference = int(reference)  # numpy and other integer types
    elif isinstance(reference, numbers.Real) and not isinstance(reference, (bool, int)):
        if type(reference).__module__ == "numpy" and math.isfinite(reference):
            # numpy's str is the shortest text that reads back in the scalar's own precision: float32(0.1) is
            # "0.1", where float() would give 0.10000000149011612
            return canonical(Fraction(Decimal(str(reference))))
        reference = float(reference)
    if isinstance(reference, bool) or not isinstance(reference, (str, int, float)):
        raise TypeError(f"reference must be a GSM8K answer string or a number, got {type(reference).__name__}")
    if isinstance(reference, float) and reference != reference:
        raise ValueError("reference is NaN")
    if isinstance(reference, float):
        if reference in (float("inf"), float("-inf")):
            raise ValueError("reference is infinite")
        return canonical(Fraction(Decimal(repr(reference))))  # shortest repr: 0.1 is 0.1, 1e20 is 10**20
    if isinstance(reference, int):
        return canonical(Fraction(reference))
    whole = normalize_number(reference)  # a bare number, "3/4" included
    ans = whole if whole is not None else extract_answer(reference)
    if ans is None:
        if re.search(r"\d{%d}" % (_MAX_DIGITS + 1), reference):
            raise ValueError(f"reference {reference[:40]!r}... has a number of more than {_MAX_DIGITS} digits; "
                             "the grader reads numbers up to that length")
        raise ValueError(f"reference {str(reference)[:60]!r} contains no number to grade against")
    return ans


def is_correct(completion, reference) -> bool:
    """Whether ``extract_answer(completion)`` equals the reference's answer (as normalised numbers)."""
    want = reference_answer(reference)
    got = extract_answer(completion)
    return got is not None and (got == want or getattr(got, "other", None) == want)


# ---------------------------------------------------------------------------------------------
# The GSM8K data (notebook 06). Never committed here; downloaded from the hub by `datasets`.

GSM8K_ID, GSM8K_CONFIG = "openai/gsm8k", "main"
GSM8K_SIZES = {"train": 7473, "test": 1319}
SYSTEM_PROMPT = ("Solve the math problem. Think step by step, then write the final answer on its own line "
                 "as '#### <number>'.")


def read_gsm8k_jsonl(path) -> list[Problem]:
    """GSM8K problems from a local JSONL file as the dataset ships it: one ``{"question", "answer"}`` per line,
    the answer ending in ``#### N``. A line that does not fit is an error naming the file and the line."""
    import json
    from pathlib import Path

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"GSM8K file {path} does not exist")
    out = []
    with open(path, encoding="utf-8-sig") as f:  # a BOM is not part of the first line
        for i, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as e:
                raise ValueError(f"{path}, line {i}: not JSON ({e})") from None
            if not isinstance(row, dict) or not isinstance(row.get("question"), str) \
                    or not isinstance(row.get("answer"), str):
                raise ValueError(f"{path}, line {i}: needs string fields 'question' and 'answer' (GSM8K's "
                                 f"format), got {str(line.strip())[:100]!r}")
            if not _HASH_RE.search(row["answer"]) or extract_answer(row["answer"]) is None:
                raise ValueError(f"{path}, line {i}: the answer does not end in '#### <number>' as GSM8K's do: "
                                 f"{row['answer'][-80:]!r}")
            out.append(Problem(row["question"], row["answer"], 0))
    if not out:
        raise ValueError(f"{path} holds no problems")
    return out


def split_local(problems: list[Problem], split: str) -> list[Problem]:
    """One local file, two disjoint splits: every 5th problem (index 4, 9, ...) is "test", the rest "train"."""
    return [p for i, p in enumerate(problems) if (i % 5 == 4) == (split == "test")]


def load_gsm8k(split: str = "train", smoke: bool = False, n: int | None = None, seed: int = 0, data=None):
    """GSM8K problems as :class:`grpo_lab.tasks.Problem` (question, answer field with its "#### N" line).

    ``smoke=True`` returns ``n`` (default 64) of the project's synthetic GSM8K-style word
    problems instead: same fields, same grader, no download. ``data`` reads a local copy: a
    directory holding ``train.jsonl`` and ``test.jsonl`` (GSM8K's own file names), a path with
    ``{split}`` in it, or one JSONL file split in two by :func:`split_local` (4 in 5 problems train).
    Otherwise ``datasets.load_dataset("openai/gsm8k", "main")`` is used (7,473 train / 1,319 test);
    when the hub cannot be reached a ``RuntimeError`` explains how to get the data.
    """
    from pathlib import Path

    from .word_problems import word_problems

    if split not in GSM8K_SIZES:
        raise ValueError(f"GSM8K has splits {', '.join(GSM8K_SIZES)}; got {split!r}")
    if smoke:
        return word_problems(64 if n is None else n, seed=seed + (0 if split == "train" else 10_000))
    if data is not None:
        data = str(data)
        if "{split}" in data:
            problems = read_gsm8k_jsonl(data.format(split=split))
        elif Path(data).is_dir():
            problems = read_gsm8k_jsonl(Path(data) / f"{split}.jsonl")
        else:
            problems = split_local(read_gsm8k_jsonl(data), split)
        return problems if n is None else problems[:n]
    try:
        from datasets import load_dataset

        ds = load_dataset(GSM8K_ID, GSM8K_CONFIG, split=split)
    except Exception as e:  # datasets raises ConnectionError, OSError, DatasetNotFoundError, ... offline
        raise RuntimeError(
            f"could not load GSM8K ({GSM8K_ID!r}, {GSM8K_CONFIG!r}, split {split!r}): {type(e).__name__}: "
            f"{str(e)[:200]}\nTo get it: run once with access to huggingface.co (it is then cached), or on a "
            f"connected machine run datasets.load_dataset('{GSM8K_ID}', '{GSM8K_CONFIG}').save_to_disk(DIR) and "
            f"copy DIR here, or pass a local GSM8K JSONL file (--data / RunConfig.data); offline, "
            f"task 'gsm_symbolic' has real GSM8K-derived problems (reasoning-gym), and smoke=True synthetic ones.") from None
    problems = [Problem(q, a, 0) for q, a in zip(ds["question"], ds["answer"])]
    return problems if n is None else problems[:n]


@register_task
class GSM8K(Task):
    """GSM8K from the hub (chat-formatted for instruct models); ``smoke=True``: the synthetic word problems."""

    name = "gsm8k"
    chat = True
    takes_data = True  # RunConfig.data / --data: a local JSONL copy

    def problems(self, split, n, seed, smoke=False, data=None):
        return load_gsm8k(split, smoke=smoke, n=n, seed=seed, data=data)
