"""A second held-out set for the GSM8K grader, written on 2026-11-23 *after* the issue-28 rule change and
before the grader was run on it (committed before its first run; see git log).

tests/data/grader_heldout.py was written before the change, but the new rules were then written to fix its
misses, so the grader's agreement there is no longer an unseen-data figure. This set is: the same kinds
of output (working after the answer, hedges, scale words, decimal commas, signed mixed numbers, number
words), phrased anew, and the same verdict rules (see grader_heldout.py). It is not edited to fit the
grader: benchmarks/grader_agreement.py reports agreement on it beside math-verify.
"""

FRESH = [
    ("The answer is 14. We know 2 * 7 = 14 and 14 - 7 = 7.", "14", True),
    ("The final answer is 33 because 11 + 11 + 11 = 33, and each bag then holds 11.", "33", True),
    ("The answer is 56 stickers; she gave 8 away, leaving 64 - 8 = 56.", "56", True),
    ("The answer is 2 hours. Then she rests for 30 minutes.", "2", True),
    ("The answer is 2 hours. Then she rests for 30 minutes.", "30", False),
    ("So, the answer is 90 degrees, as 180 - 90 = 90.", "90", True),
    ("The answer is $5.25, so he gets 75 cents back from 6 dollars.", "5.25", True),
    ("Total = 4 + 4 + 2 = 10. The answer is 10 + 0 = 10.", "10", True),
    ("The answer is 6 or maybe 7 apples.", "6", False),
    ("The answer is 6 or maybe 7 apples.", "7", False),
    ("I think the answer is 45, or possibly 50.", "45", False),
    ("The answer is around 18 kilometers.", "18", True),
    ("The answer is nearly 1,000 people.", "1000", True),
    ("The answer is 4.2 million people.", "4200000", True),
    ("The answer is 7 thousand dollars.", "7000", True),
    ("Each farm has 2,5 tons of wheat, so the answer is 2,5 tons.", "2.5", True),
    ("The answer is 1,75 liters.", "1.75", True),
    ("The answer is 3,000 steps.", "3000", True),
    ("#### -2 3/4", "-2.75", True),
    ("#### 5 1/2 cups", "5.5", True),
    ("The answer is three and a half.", "3.5", True),
    ("The answer is sixty.", "60", True),
    ("They have eighteen cookies in total.", "18", True),
    ("He walked twenty-five miles.", "25", True),
    ("The answer is 11. Oops, I mean the answer is 13.", "13", True),
    ("The answer is 11. Oops, I mean the answer is 13.", "11", False),
    ("#### 40\nThe answer is 40.", "40", True),
    ("Let x be the price. Then 3x = 27, so x = 9. The answer is 9.", "9", True),
    ("The answer is: 8 * 5 = 40 marbles.", "40", True),
    ("Answer: 15 (15 red + 0 blue).", "15", True),
    ("The answer is 12, which is 3 more than 9.", "12", True),
    ("I cannot determine the answer from the information given.", "7", False),
]
