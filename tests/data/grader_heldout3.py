"""A third held-out set for the GSM8K grader: (completion, reference, is it correct?), written for grpo-lab.

Written on 2026-11-25, before the rule change of issue 51 (item 9: hedges with a bound or an alternative, a
correction in the same line, Unicode fractions, signed number words, compound quantity words, a percentage of a
quantity followed by its value, two different final answers, compound units), and committed on its own so that the
history shows it came first. Its completions are new: none is one of the issue's examples or its probe set (kept
aside, never seen here). It is never edited to fit the grader: ``benchmarks/grader_agreement.py`` reports how often
grpo-lab's grader and math-verify agree with these verdicts, before and after the change.

The verdict is a careful human grader's, with the rules of ``grader_heldout2.py``: the completion is correct when
the one answer it commits to equals the reference. Also: an answer hedged with an alternative ("probably 30, though
it might be 35") or given as a bound ("at least 12", "no more than 9", "8 ± 2") commits to no number, and so does a
question ("Perhaps 14?"); a correction in the same line ("72. Wait, no: 27") commits to the corrected number; two
different final answers ("\\boxed{3} \\boxed{5}", "the answer is 6 and 11") commit to neither; "minus 6" is -6;
"two and a half dozen" is 30; "25% of 80, that is 20" answers 20; a compound unit answers in its own units only when
the reference's unit is the completion's larger one and the sum is stated in it ("2 hours 15 minutes" is 2.25 hours,
135 minutes: the reference's number must be read from the whole, so "2 hours 15 minutes" is right for 2.25 and for
135 when the question asks in hours or minutes; here the reference is the number a question in the stated unit
wants); "3 dollars and 40 cents" is 3.40.
"""

HELDOUT3 = [
    # --- hedges with an alternative, a bound, a question
    ("It is probably 40, though it could also be 45.", "40", False),
    ("The answer is likely 18, but it might be 20.", "18", False),
    ("The answer is at least 15 cookies.", "15", False),
    ("The answer is no more than 9.", "9", False),
    ("The answer is at most 70 dollars.", "70", False),
    ("The answer is roughly 12 ± 3.", "12", False),
    ("The answer is 50 +/- 5 people.", "50", False),
    ("Maybe 16?", "16", False),
    ("The answer is 16? I am not sure.", "16", False),
    ("The answer is 32.", "32", True),  # a plain answer stays an answer
    ("The answer is about 32.", "32", True),  # "about" commits, as before
    ("At least 3 of them are red; the answer is 7.", "7", True),  # a bound in the working, not the answer
    # --- corrections in the same line
    ("The answer is 45. Wait, no: 54.", "54", True),
    ("The answer is 45. Wait, no: 54.", "45", False),
    ("#### 120. Actually, correction: 102", "102", True),
    ("The answer is 8, sorry, I mean 9.", "9", True),
    ("The answer is 8, sorry, I mean 9.", "8", False),
    # --- Unicode fractions
    ("The answer is ½ a cup.", "0.5", True),
    ("The answer is 2¾.", "2.75", True),
    ("The answer is ⅔ of the cake.", "2/3", True),
    ("The answer is 5⁄8.", "0.625", True),
    ("Each gets 1⅓ pizzas, so the answer is 1⅓.", "4/3", True),
    # --- signed number words
    ("The temperature drops to minus 4, so the answer is minus 4.", "-4", True),
    ("The answer is negative twelve.", "-12", True),
    ("The answer is minus 4.", "4", False),
    # --- compound quantity words
    ("The answer is one and a half dozen.", "18", True),
    ("The answer is three and a half dozen eggs.", "42", True),
    ("The answer is two and a half thousand.", "2500", True),
    # --- a percentage of a quantity, then its value
    ("The answer is 20% of 150, which is 30.", "30", True),
    ("The answer is 40% of 60, that is 24.", "24", True),
    ("The answer is 10% of 90 = 9.", "9", True),
    ("The answer is 15%.", "15", True),  # a percentage alone stays the number
    # --- two different final answers
    ("\\boxed{12} \\boxed{14}", "12", False),
    ("The answer is \\boxed{6} or \\boxed{8}.", "6", False),
    ("The answer is 4 and 9.", "4", False),
    ("The answer is 4 and 9.", "9", False),
    ("\\boxed{7} and to check, \\boxed{7}", "7", True),  # the same answer twice commits to it
    ("The answer is 3 and a half.", "3.5", True),  # "and a half" is one number
    # --- compound units
    ("The answer is 3 hours 30 minutes.", "3.5", True),
    ("The answer is 1 hour and 45 minutes.", "105", True),
    ("The answer is 5 dollars and 25 cents.", "5.25", True),
    ("The answer is 2 feet 6 inches.", "2.5", True),
    ("The answer is 4 hours 20 minutes.", "4", False),
]
