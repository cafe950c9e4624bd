"""The GSM8K grader on hostile model output (issue 18): its time must grow linearly with the text.

    python benchmarks/bench_grader.py           # a few seconds

Model outputs are untrusted text, and a reward function that takes quadratic time stalls training.
For each adversarial pattern, the grader's best-of-3 time on a text of n and of 8n characters is
printed with their ratio: about 8 is linear, about 64 quadratic. Before the fix (2026-11-23) 14 kB of
repeated unclosed "\\boxed{" took 2.5 s and 16k spaces 0.28 s (both quadratic); 1 MB never finished. Issue
28 added runs of digits and digit groups ("7" x 20000 took about 25 s, 1 MB never returned); issue 38 the
patterns of its new rules.
"""

import time

from grpo_lab.tasks.gsm8k import extract_answer

PATTERNS = {
    "unclosed \\boxed{": "\\boxed{",
    "spaces": " ",
    "whitespace mix": " \t\n",
    "\\boxed{ 1": "\\boxed{ 1",
    "the answer is": "the answer is ",
    "#### ": "#### ",
    "1,000": "1,000",
    "- \\frac{": "- \\frac{",
    "2^ (powers)": "2^",
    "4 1/2 (mixed numbers)": "4 1/2 ",
    "\\sqrt{": "\\sqrt{",
    "1 \\times 10^": "1 \\times 10^",
    "the answer is not ": "the answer is not ",
    "m^2 (unit powers)": "m^2 ",
    # issue 28: runs of digits and digit groups (about 25 s for 20,000 sevens before the fix)
    "7 (one digit run)": "7",
    "111, (comma groups)": "111,",
    " 000 (spaced groups after ####)": " 000",
    "0 (a long decimal)": "0",
    # issue 28's committed-answer rules: scale words, decimal commas, hedges, number words, working after it
    "5 million (scale words)": "5 million ",
    "3,5 (decimal commas)": "3,5 ",
    "5 or (hedges)": "5 or ",
    "twenty-one (words, no digit)": "twenty-one and ",
    "= 5 is (working after the answer)": "= 5 is ",
    # issue 38's rules: magnitudes, compound magnitudes, numbers and fractions in words, ranges, two spellings
    "3M (magnitude suffixes)": "3M ",
    "1 million 2 thousand (compound)": "1 million 2 thousand ",
    "$3.5 billion (free text)": "worth $3.5 billion ",
    "half a dozen (words)": "half a dozen and ",
    "one quarter (fraction words)": "one quarter ",
    "7 1/2. (mixed, free text)": "7 1/2. ",
    "5-7 (ranges)": "5-7 ",
    "between 8 and (ranges)": "between 8 and ",
    "0.5 or 1/2 (one number twice)": "0.5 or 1/2 ",
    "3 and a half": "3 and a half ",
    # issue 51's rules: bounds, margins, questions, alternatives, corrections, Unicode fractions, sign words,
    # compound words and units, percentages of a quantity, two boxes, two answers
    "at least (bounds)": "at least 5 ",
    "12 ± (margins)": "12 ± 3 ",
    "16? (questions)": "16? ",
    "but it might be (alternatives)": "18, but it might be ",
    "45. Wait, no: (corrections)": "45. Wait, no: ",
    "½ (Unicode fractions)": "2½ ",
    "minus (sign words)": "minus ",
    "one and a half dozen": "one and a half dozen ",
    "20% of 150, which is": "20% of 150, which is ",
    "\\boxed{1} \\boxed{2}": "\\boxed{1} \\boxed{2} ",
    "3 hours 30 minutes (units)": "3 hours 30 minutes ",
    "4 and 9 (two answers)": "4 and 9 ",
}
PREFIX = {" 000 (spaced groups after ####)": "#### 1", "0 (a long decimal)": "0.", "5 million (scale words)": "#### ",
          "3,5 (decimal commas)": "the answer is ", "5 or (hedges)": "the answer is ",
          "= 5 is (working after the answer)": "the answer is 3 ", "3M (magnitude suffixes)": "the answer is ",
          "1 million 2 thousand (compound)": "the answer is ", "half a dozen (words)": "the answer is ",
          "one quarter (fraction words)": "the answer is ", "5-7 (ranges)": "the answer is ",
          "between 8 and (ranges)": "the answer is ", "0.5 or 1/2 (one number twice)": "the answer is ",
          "3 and a half": "the answer is ", **{k: "the answer is " for k in (
              "at least (bounds)", "12 ± (margins)", "16? (questions)", "but it might be (alternatives)",
              "45. Wait, no: (corrections)", "½ (Unicode fractions)", "minus (sign words)", "one and a half dozen",
              "20% of 150, which is", "3 hours 30 minutes (units)", "4 and 9 (two answers)")}}
SUFFIX = {"0 (a long decimal)": "1"}


def best(text: str, reps: int = 3) -> float:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        extract_answer(text)
        times.append(time.perf_counter() - t)
    return min(times)


def main(n: int = 100_000):
    print(f"| pattern | {n // 1000} kB | {8 * n // 1000} kB | ratio (8 = linear, 64 = quadratic) |")
    print("|---|---|---|---|")
    for name, unit in PATTERNS.items():
        small, large = (PREFIX.get(name, "") + unit * (k // len(unit)) + SUFFIX.get(name, "") for k in (n, 8 * n))
        a, b = best(small), best(large)
        print(f"| {name} | {a * 1e3:.1f} ms | {b * 1e3:.1f} ms | {b / max(a, 1e-9):.1f} |")


if __name__ == "__main__":
    main()
