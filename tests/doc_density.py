#!/usr/bin/env python3
"""How many numbers the docs' prose carries: per 100 words, and per sentence.

  python3 tests/doc_density.py [PAGE...]     (default: every page test_docs.py holds to it)

Per 100 words, the count is blunt on purpose: everything outside fenced code blocks, table rows
and HTML comments is read, headings, inline code (commands, flags, file names) and link targets
included, and a number is any run of digits (with its commas and decimals) not glued to a letter,
a digit or a point before it: '768 -> 3072' is two, '--size 4096' one, '../01_matmul_add/' one,
'fp16' and 'H200' none. What the reader meets outside a table or a code block counts.

Per sentence, the count reads the sentences themselves: inline code and link targets are dropped
there, and digits that are part of a name ('sm_90', 'v6') are not numbers.

A page passes at most 5 numbers per 100 words and at most 3 in any sentence. Prints one line per
page (and one per sentence over the limit), and exits 1 when a page does not pass.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PER_100_WORDS = 5.0
PER_SENTENCE = 3
PAGES = ["README.md", "docs/00_gpu_primer.md", "docs/01_matmul_add.md", "docs/02_linear.md",
         "docs/03_simple_mlp.md", "docs/04_fused_mlp.md", "docs/05_writing_the_gemm.md",
         "docs/06_scheduling_the_gemm.md", "docs/07_filling_the_waves.md", "docs/reading-traces.md", "docs/nsight-systems.md",
         "docs/pytorch-vs-c.md"]

FENCE = re.compile(r"^\s*(```|~~~)")
COMMENT = re.compile(r"<!--.*?-->", re.S)
NUMBER = re.compile(r"(?<![A-Za-z0-9_.#/-])[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?(?![0-9]*[A-Za-z_])")
# a sentence ends at . ? ! followed by a space or the end, not inside '1.5' or 'e.g.'
SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)[.?!](?=\s|$)")


def prose(text):
    """The page's prose, paragraph by paragraph (a list of strings)."""
    text = COMMENT.sub("", text)
    paragraphs, current, fence = [], [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fence = not fence
            continue
        s = line.strip()
        if fence or s.startswith("|") or s.startswith("#") or not s:
            if current:
                paragraphs.append(" ".join(current))
                current = []
            continue
        current.append(s)
    if current:
        paragraphs.append(" ".join(current))
    out = []
    for p in paragraphs:
        p = re.sub(r"`[^`]*`", " ", p)               # inline code
        p = re.sub(r"(?<=\])\([^)]*\)", "", p)       # link targets
        p = re.sub(r"!\[[^\]]*\]", " ", p)           # an image's alt text
        p = re.sub(r"</?(details|summary|sub|sup|br)\s*/?>", " ", p)
        out.append(p)
    return out


PAGE_NUMBER = re.compile(r"(?<![\w.])\d[\d,.]*")
CODE_BLOCK = re.compile(r"```.*?```", re.S)


def page_count(text):
    """(words, numbers) of the page outside code blocks, comments and table rows."""
    text = COMMENT.sub("", CODE_BLOCK.sub("", text))
    kept = " ".join(line for line in text.splitlines() if not line.lstrip().startswith("|"))
    return len(kept.split()), len(PAGE_NUMBER.findall(kept))


def numbers(s):
    return NUMBER.findall(s)


def density(text):
    """(words, numbers, [(count, sentence)] over the per-sentence limit)."""
    dense = []
    for p in prose(text):
        for sentence in SENTENCE_END.split(p):
            n = len(numbers(sentence))
            if n > PER_SENTENCE:
                dense.append((n, sentence.strip()))
    words, count = page_count(text)
    return words, count, dense


def main(argv):
    pages = argv[1:] or [p for p in PAGES if os.path.isfile(os.path.join(ROOT, p))]
    bad = 0
    for page in pages:
        path = page if os.path.isabs(page) else os.path.join(ROOT, page)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            print(f"error: {page}: {e.strerror}")
            return 1
        words, count, dense = density(text)
        rate = 100.0 * count / max(words, 1)
        ok = rate <= PER_100_WORDS and not dense
        bad += not ok
        print(f"{'PASS' if ok else 'FAIL'} {page}: {rate:.1f} numbers per 100 words ({count} in {words}), "
              f"{len(dense)} sentences over {PER_SENTENCE}")
        for n, s in dense:
            print(f"    {n}: {s[:160]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
