"""A fresh set for the GSM8K grader after issue 51's rule change: (completion, reference, is it correct?).

Written on 2026-11-25 after the rules of issue 51 (item 9) were committed and before the grader first ran on it,
and committed on its own: it is the unseen-data figure for those rules, as ``grader_fresh2.py`` was for issue 38's.
Its completions are new (none is a case of the rules' tests, of the held-out sets or of the issue's probes). It is
never edited to fit the grader; ``benchmarks/grader_agreement.py`` reports the agreement.

The verdicts follow the rules of ``grader_heldout3.py``.
"""

FRESH3 = [
    # --- bounds, margins, questions, alternatives
    ("So she needs at least 8 more stamps. The answer is at least 8.", "8", False),
    ("The answer is more than 100 visitors.", "100", False),
    ("The answer is approximately 64 ± 4 beads.", "64", False),
    ("Could the answer be 27?", "27", False),
    ("The answer is 27, although it might also be 28.", "27", False),
    ("The answer is 27. He reads at least 3 pages an hour.", "27", True),
    ("Therefore, the answer is 96.", "96", True),
    # --- corrections
    ("The answer is 330. Wait, I need to subtract the 30: 300.", "300", True),
    ("#### 14 actually 41", "41", True),
    ("The answer is 19, no wait, 21.", "21", True),
    ("The answer is 19, no wait, 21.", "19", False),
    # --- Unicode fractions
    ("The recipe needs ¼ cup, so the answer is ¼.", "0.25", True),
    ("The answer is 3½ miles.", "3.5", True),
    ("The answer is 11⁄4.", "2.75", True),
    ("The answer is ⅝.", "0.625", True),
    # --- sign words
    ("The balance is minus 35 dollars, so the answer is minus 35.", "-35", True),
    ("The answer is negative 0.5.", "-0.5", True),
    ("The answer is minus 35.", "35", False),
    # --- compound quantity words
    ("The answer is four and a half dozen.", "54", True),
    ("The answer is one and a half thousand.", "1500", True),
    # --- a percentage of a quantity, then its value
    ("The answer is 75% of 48, which is 36.", "36", True),
    ("The answer is 5% of 200 = 10 dollars.", "10", True),
    ("The answer is 5% of 200 = 10 dollars.", "5", False),
    # --- two different final answers
    ("\\boxed{48}\\boxed{84}", "48", False),
    ("The answer is 15 and 16.", "16", False),
    ("The final answer is \\boxed{22}. Double-checking gives \\boxed{22}.", "22", True),
    # --- compound units
    ("The answer is 2 hours 10 minutes.", "130", True),
    ("The answer is 2 hours 10 minutes.", "2", False),
    ("The answer is 7 dollars and 50 cents.", "7.5", True),
    ("The answer is 5 feet 3 inches tall.", "63", True),
    ("The answer is 1 week and 3 days.", "10", True),
    ("The answer is 3 minutes 20 seconds.", "200", True),
]
