"""A fresh set for the GSM8K grader after issue 38's rule change: (completion, reference, is it correct?).

Written on 2026-11-25 after the rules of issue 38 (item 6) were committed and before the grader first ran on
it, and committed on its own: it is the unseen-data figure for those rules, as ``grader_fresh.py`` was for issue
28's. Its completions are new (none is a case of the rules' own table, of the held-out sets or of the issue's
probes). It is never edited to fit the grader; ``benchmarks/grader_agreement.py`` reports the agreement.

The verdicts follow the rules of ``grader_heldout2.py``: the completion is correct when the one answer it commits
to equals the reference; working after the answer does not change it; a hedge or a range between two different
numbers commits to neither; two spellings of one number commit to it; a magnitude word or suffix scales the
number; "a dozen" is 12.
"""

FRESH2 = [
    # --- magnitudes
    ("Revenue was 4.2M last year, so the answer is 4.2M.", "4200000", True),
    ("The answer is 850K.", "850000", True),
    ("The answer is 6 billion.", "6000000000", True),
    ("So the population is about 2 million 50 thousand people.", "2050000", True),
    ("The answer is 1.25 million dollars.", "1250000", True),
    ("The answer is 3 hundred.", "300", True),
    ("The answer is 7k steps.", "7", False),
    # --- numbers and fractions in words
    ("The answer is eleven and a half.", "11.5", True),
    ("The answer is two thirds of the pie.", "2/3", True),
    ("The answer is a quarter.", "0.25", True),
    ("The answer is three dozen.", "36", True),
    ("There are nine boxes with a dozen each, so the answer is one hundred and eight.", "108", True),
    ("The answer is 5 and a quarter.", "5.25", True),
    ("Each friend gets one third.", "1/3", True),
    # --- mixed numbers and signs
    ("The answer is 12 1/2.", "12.5", True),
    ("The answer is 3 2/3.", "11/3", True),
    ("The change is - 4 3/4 points.", "-4.75", True),
    ("She ran 2 1/2 miles on Monday and 3 1/4 miles on Tuesday, 5 3/4 miles in all.", "5.75", True),
    # --- ranges, "between", hedges
    ("The answer is between 20 and 25 minutes.", "20", False),
    ("The answer is 30 to 40.", "35", False),
    ("The answer is 12–15 cookies.", "12", False),
    ("The answer is 9 or 10.", "10", False),
    ("The answer is 1/2 or 0.5.", "0.5", True),
    ("The answer is 100, or maybe 110.", "100", False),
    # --- "not N"
    ("The answer is not 40 but 42.", "42", True),
    ("The answer is definitely not 13.", "13", False),
    ("The answer is 6. Not 7, since 42 / 7 = 6.", "6", True),
    # --- working after the answer, and plain controls
    ("The answer is 15. Then 15 x 2 = 30 would be the double.", "15", True),
    ("The answer is 64. Check: 8^2 = 64.", "64", True),
    ("#### 1,250", "1250", True),
    ("The answer is 0.2.", "1/5", True),
    ("Total = 4 + 5 + 6 = 15 apples.", "15", True),
]
