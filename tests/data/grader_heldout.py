"""A held-out set for the GSM8K grader: (completion, reference, is it correct?), written for grpo-lab.

Written on 2026-11-23, before the grader's rules for "the answer a completion commits to" were changed
(issue 28), and committed on its own so that the history shows it came first. It is never edited to
fit the grader: ``benchmarks/grader_agreement.py`` reports how often grpo-lab's grader and math-verify
agree with these verdicts, and docs/benchmarks.md records that before and after each change.

The verdict is a careful human grader's: the completion is correct when the one answer it commits to
equals the reference. Working shown after the answer (a check, a restatement, a reason) does not change
the answer. A hedge between two different numbers ("either 5 or 6") commits to neither, so it is wrong
whatever the reference: a reward that accepted it would teach a policy to hedge. "About 5" or
"approximately 5" commits to 5. Completions imitate what a small instruct model writes on GSM8K-style
problems (SmolLM2-135M-Instruct, Qwen2.5-0.5B-Instruct): chatty, with units, currency and restatements.
"""

HELDOUT = [
    # --- the answer first, then working that ends on another number
    ("The answer is 18. This is because 16 - 3 - 4 = 9 eggs are sold at $2 each.", "18", True),
    ("The answer is 48. Let me verify: 24 + 24 = 48, and 48 / 2 = 24.", "48", True),
    ("The answer is 5, since 2 + 3 = 5 and 5 - 0 = 5.", "5", True),
    ("The answer is 12 apples. She started with 20 and gave away 8, so 20 - 8 = 12.", "12", True),
    ("The answer is 30 minutes because 2 hours = 120 minutes and 120 / 4 = 30.", "30", True),
    ("The answer is $64. Each shirt costs $16 and 4 x 16 = 64.", "64", True),
    ("The answer is 7. To check: 7 x 3 = 21, which matches.", "7", True),
    ("The answer is 250 dollars. Explanation: 500 / 2 = 250.", "250", True),
    ("The answer is 9 (because 3 x 3 = 9).", "9", True),
    ("The answer is 100. That means he saved 100 - 40 = 60 more than last year.", "100", True),
    ("The answer is 100. That means he saved 100 - 40 = 60 more than last year.", "60", False),
    ("The answer is 15. This is because 5 + 5 + 5 = 15, so each of the 3 friends gets 5.", "15", True),
    ("Answer: 42. Steps: 6 * 7 = 42, then 42 + 0 = 42.", "42", True),
    ("The answer is 3. He has 3 left after giving 2 to his sister and 1 to his brother.", "3", True),
    ("The answer is 3. He has 3 left after giving 2 to his sister and 1 to his brother.", "1", False),
    # --- working that ends on the answer, then the answer marker: plain
    ("She buys 3 packs of 12 pencils, so 3 * 12 = 36 pencils. The answer is 36.", "36", True),
    ("First, 45 + 15 = 60. Then 60 / 3 = 20.\nThe answer is 20.", "20", True),
    ("He runs 3 miles a day for 7 days: 3 * 7 = 21 miles.\n#### 21", "21", True),
    ("The total cost is 4 * $2.50 = $10.\n#### 10", "10", True),
    ("The answer is 3 + 4 = 7.", "7", True),
    ("The answer is 10 * 6 = 60 cookies.", "60", True),
    ("So the answer is 8 + 8 + 8 = 24", "24", True),
    ("The answer is 24.", "25", False),
    ("Janet makes 16 - 3 - 4 = 9 eggs a day, and 9 * 2 = $18.\n#### 18", "18", True),
    # --- the answer restated with its unit, or repeated
    ("So she has 12 apples. The answer is 12 apples, 12 in total.", "12", True),
    ("The answer is $18 per day, since 9 * 2 = 18.", "18", True),
    ("The answer is 20 dollars. 20 dollars is what she earns.", "20", True),
    ("The answer is 6 hours, or 360 minutes.", "6", True),
    ("The answer is 75%. That is 3 out of 4, or 75 percent.", "75", True),
    # --- hedges
    ("The answer is either 5 or 6.", "5", False),
    ("The answer is either 5 or 6.", "6", False),
    ("The answer is 5 or 6, depending on whether you count Tom.", "5", False),
    ("The answer is about 40 miles.", "40", True),
    ("The answer is approximately 12.5.", "12.5", True),
    ("The answer is roughly 300 people.", "300", True),
    # --- scale words, decimal commas, mixed numbers, number words
    ("The answer is 1.5 million.", "1500000", True),
    ("The answer is 2 million dollars.", "2000000", True),
    ("The city has 3 thousand trees, so the answer is 3 thousand.", "3000", True),
    ("The answer is 2.5 billion.", "2500000000", True),
    ("The answer is 1.5 million.", "1.5", False),
    ("The answer is 3,5 kg.", "3.5", True),
    ("Answer: 0,75", "0.75", True),
    ("The answer is 1,250.", "1250", True),
    ("The answer is 12,5.", "12.5", True),
    ("#### -1 1/2", "-1.5", True),
    ("#### -1 1/2", "-1", False),
    ("#### 2 1/4", "2.25", True),
    ("#### seven and a half", "7.5", True),
    ("#### seven and a half", "7", False),
    ("The answer is twelve.", "12", True),
    ("The answer is forty-two.", "42", True),
    ("She has twelve apples left.", "12", True),
    ("Each box holds a dozen, so there are thirty-six eggs.", "36", True),
    # --- several markers, corrections
    ("The answer is 24. Wait, I forgot the last day. The answer is 32.", "32", True),
    ("#### 15\nActually, that is wrong. The answer is 17.", "17", True),
    ("\\boxed{8}", "8", True),
    ("So we get \\boxed{14} apples in total.", "14", True),
    # --- references as numbers (ints, floats, numpy)
    ("#### 0.1", "0.1", True),
    ("The answer is 7.", "7.0", True),
    ("The answer is 7.5.", "7.50", True),
    # --- no answer at all, or an answer to another question
    ("I am not sure how to solve this problem.", "10", False),
    ("Let's think step by step. First we need to find the total.", "10", False),
    ("The answer is the number of apples.", "4", False),
]
