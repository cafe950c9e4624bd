"""A second held-out set for the GSM8K grader: (completion, reference, is it correct?), written for grpo-lab.

Written on 2026-11-25, before the rule change of issue 38 (item 6: magnitudes such as "3M" and "7k", number words
and fractions in words, ranges and "between" as hedges, a sentence's full stop after a mixed number, "not N", two
spellings of one number), and committed on its own so that the history shows it came first. Its completions are new:
none is one of the issue's probes. It is never edited to fit the grader: ``benchmarks/grader_agreement.py`` reports
how often grpo-lab's grader and math-verify agree with these verdicts, before and after the change.

The verdict is a careful human grader's, with the rules of ``grader_heldout.py``: the completion is correct when
the one answer it commits to equals the reference; working after the answer does not change it; a hedge between
two different numbers (also a range, "between 8 and 10", "5-7 days") commits to neither and is wrong whatever the
reference; two spellings of the same number ("0.25 or 1/4", "16 or sixteen") commit to that number; "about" and
"roughly" commit; a magnitude word or suffix scales the number ("2.5M" is 2,500,000, "$3.5 billion"
3,500,000,000); "a dozen" is 12.
"""

HELDOUT2 = [
    # --- magnitudes: suffixes and words
    ("The answer is 2.5M dollars.", "2500000", True),
    ("She earns 12k a year, so the answer is 12k.", "12000", True),
    ("The answer: 3.2k", "3200", True),
    ("The total is 3 million 400 thousand.", "3400000", True),
    ("The answer is 1 million.", "1000000", True),
    ("The answer is 1.5 thousand.", "1500", True),
    ("The company is worth $3.5 billion.", "3500000000", True),
    ("The answer is 2,000,000 (2 million).", "2000000", True),
    ("The answer is 2.5M dollars.", "2.5", False),
    # --- numbers and fractions in words
    ("The answer is 3 and a half cups.", "3.5", True),
    ("The answer is four and a quarter.", "4.25", True),
    ("The answer is one quarter.", "0.25", True),
    ("She bought two dozen eggs, so the answer is 2 dozen.", "24", True),
    ("The answer is half a dozen.", "6", True),
    ("The answer is twenty-five. First, 5 x 5 = 25.", "25", True),
    ("Total: forty two apples. Check: 6 * 7 = 42.", "42", True),
    ("He has 5 apples and she has 7, so together the answer is twelve.", "12", True),
    ("The answer is a hundred and twenty.", "120", True),
    # --- mixed numbers, with and without the sentence's full stop
    ("The answer is 6 3/4.", "6.75", True),
    ("So the final answer is 2 1/4.", "2.25", True),
    ("Final answer: -3 1/4", "-3.25", True),
    ("The temperature ends at - 2 1/2 degrees.", "-2.5", True),
    ("We get 7.5, which is 7 1/2.", "7.5", True),
    # --- ranges and "between": hedges
    ("The answer is somewhere between 8 and 10.", "9", False),
    ("It takes 4 to 6 hours.", "5", False),
    ("The answer is 5-7 days.", "6", False),
    ("The answer is from 100 to 120 people.", "110", False),
    ("The answer is 7 or 8.", "7", False),
    ("The answer is 3/4 or 0.8.", "0.75", False),
    # --- "not N"
    ("It is not 12. The answer is 14.", "14", True),
    ("The answer is 14, not 12.", "14", True),
    ("The answer is not 9.", "9", False),
    ("The answer is 9. Not 8.", "9", True),
    # --- one number, two spellings
    ("The answer is 0.25 or 1/4.", "0.25", True),
    ("The answer is 0.75, i.e. 3/4.", "0.75", True),
    ("The answer is 16 or sixteen.", "16", True),
    # --- working after a free-text answer; plain controls
    ("The answer is 45 minutes. That is 3/4 of an hour.", "45", True),
    ("The answer is 8. 8 + 2 = 10 is the next step.", "8", True),
    ("The answer is 1/2 an hour, so 30 minutes.", "30", True),
    ("The answer is roughly 30.", "30", True),
    ("The answer is $4.50.", "4.5", True),
    ("The answer is 10%.", "10", True),
    ("The answer is 2.", "2.0", True),
]
