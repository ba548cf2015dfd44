"""Numbers in the docs pinned to the line they come from, for tests/test_docs.py.

A measured number in prose carries its source in an HTML comment right after it, which a reader
of the rendered page does not see, written without spaces and against the word before it, so
that it adds no word to the page's count (wc -w):

    the first version takes 328 us, 41% of cuBLAS's rate<!--src:docs/results/x/grid.csv:51-->
    | 1 | mma.sync | 328 | 236 | 41%<!--src:docs/results/x/grid.csv:51--> |

`src:` names one or more lines (`PATH:LINE`, `PATH:LINE,LINE`, several `PATH:LINE` separated by
`;`), PATH from the repository's root. The comment covers the measured numbers before it: in a
table row, every cell that is a number; in prose, every number with a unit (us, ms, TFLOP/s,
MB, MHz, W, ...), every percentage and every ratio (1.33x) since the previous comment of its
paragraph; both ends of a range (683-690 W, 0.08-0.13x). Each must equal a number on one of those lines as the prose rounds it: to the
decimals it shows, or to its significant digits (13,600 for 13,645), after a change of unit by
1000 or a million if need be (9.14 ms for 9144.8 us, 139 ms for 139,012,345 ns).
`<!--not-measured:WHY_IN_WORDS-->` covers numbers that are arithmetic on the shape, a datasheet's
or a ratio no file holds, and says so (underscores for spaces). The spaced forms
(`<!-- src: PATH:LINE -->`, `<!-- not measured: why -->`) are read too.

A page listed in PINNED must pin every measured number; on the others, pins are checked where
they are and the unpinned numbers are only counted.
"""
import os
import re

PINNED = ("README.md", "docs/01_matmul_add.md", "docs/02_linear.md", "docs/03_simple_mlp.md",
          "docs/04_fused_mlp.md", "docs/05_writing_the_gemm.md", "docs/pytorch-vs-c.md", "docs/reading-traces.md",
          "docs/nsight-systems.md", "docs/errors.md", "docs/04_design_notes.md", "01_matmul_add/README.md",
          "02_linear/README.md", "03_simple_mlp/README.md", "04_fused_mlp/README.md", "docs/ko/README.md",
          "docs/ko/01_matmul_add.md", "docs/ko/02_linear.md", "docs/ko/03_simple_mlp.md", "docs/ko/04_fused_mlp.md",
          "docs/ko/05_writing_the_gemm.md", "docs/ko/reading-traces.md", "docs/ko/nsight-systems.md",
          "docs/ko/pytorch-vs-c.md", "docs/validation.md", "docs/06_scheduling_the_gemm.md",
          "docs/ko/06_scheduling_the_gemm.md")

COMMENT = re.compile(r"<!--\s*(src|not[ -]measured):\s*(.*?)\s*-->")
NUMBER = r"[0-9][0-9,]*(?:\.[0-9]+)?"
UNITS = r"(?:us|µs|ms|s|ns|MB|GB|KB|TB/s|GB/s|TFLOP/s|GFLOP|TFLOP|MHz|W)"
# a number with a unit; a percentage or a ratio (1.33x) written against it; not '2 x 8192'. The
# letters around it are ASCII only: Korean prose writes a particle against the unit ('9.0 us에서').
MEASURED = re.compile(r"(?<![A-Za-z0-9_.#/-])(" + NUMBER + r")(?:\s?" + UNITS + r"(?![A-Za-z0-9_/])|%|x(?![A-Za-z0-9_]))")
# a range of them, '683-690 W': both ends are measured (MEASURED matches neither)
RANGE = re.compile(r"(?<![A-Za-z0-9_.#/-])(" + NUMBER + r")-(" + NUMBER + r")(?:\s?" + UNITS +
                   r"(?![A-Za-z0-9_/])|%|x(?![A-Za-z0-9_]))")
CELL_NUMBER = re.compile(r"^\s*(" + NUMBER + r")\s?(?:%|x)?\s*$")
LINE_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?")
SOURCE = re.compile(r"([^\s:,;]+):([0-9]+(?:,[0-9]+)*)")


def measured_spans(text):
    """Where the measured numbers of a stretch of prose are, (start, end): ranges' ends, then the
    rest."""
    return [m.span(g) for m in RANGE.finditer(text) for g in (1, 2)] + [m.span(1) for m in MEASURED.finditer(text)]


def measured(text):
    """The measured numbers of a stretch of prose, as written."""
    return [text[a:b] for a, b in measured_spans(text)]


def value_of(text):
    return float(text.replace(",", ""))


def rounding(prose, x):
    """How prose ('13,600', '9.14', '41') rounds the source number x: (scale, 'f', decimals) or
    (scale, 'g', significant digits), or None when it is not x as rounded."""
    p = value_of(prose)
    digits = prose.replace(",", "")
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    kept = digits.replace(".", "").lstrip("0")
    if "." not in digits:
        kept = kept.rstrip("0")
    significant = max(len(kept), 2)  # prose rounds to 2 or 3 significant digits, never to 1
    for scale in (1.0, 1e-3, 1e3, 1e-6, 1e6):
        v = x * scale
        if round(v, decimals) == p:
            return scale, "f", decimals
        if v != 0 and float("%.*g" % (significant, v)) == p:
            return scale, "g", significant
    return None


def matches(prose, candidates):
    """prose equals one of the candidates as the prose rounds it."""
    return any(rounding(prose, x) for x in candidates)


def outside_fences(lines, start=1):
    """(number, line) for each line outside fenced code blocks, the fences themselves left out."""
    fence = False
    for n, line in enumerate(lines, start):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        elif not fence:
            yield n, line


def source_numbers(root, spec, cache):
    """The numbers on the lines a src comment names, or (None, why)."""
    found = []
    pairs = SOURCE.findall(spec)
    if not pairs:
        return None, f"'{spec}' names no PATH:LINE"
    for path, lines in pairs:
        if path not in cache:
            full = os.path.join(root, path)
            if not os.path.isfile(full):
                return None, f"{path} does not exist"
            with open(full, encoding="utf-8", errors="replace") as f:
                cache[path] = f.read().splitlines()
        for n in lines.split(","):
            n = int(n)
            if not 1 <= n <= len(cache[path]):
                return None, f"{path} has no line {n}"
            found += [float(t) for t in LINE_NUMBER.findall(cache[path][n - 1].replace(",", " "))]
    return found, None


def spans(text):
    """(line number, covered text, kind, spec) for each comment, and the measured numbers no
    comment covers as (line number, number)."""
    covered, loose = [], []
    paragraph = []  # (line number, text) since the last comment or blank line
    for n, line in outside_fences(text.splitlines()):
        if not line.strip():
            for m, rest in paragraph:
                loose += [(m, v) for v in measured(strip_code(rest))]
            paragraph = []
            continue
        if line.lstrip().startswith("|"):  # a table row is a span of its own
            for m, rest in paragraph:
                loose += [(m, v) for v in measured(strip_code(rest))]
            paragraph = []
            c = COMMENT.search(line)
            cells = [x for x in COMMENT.sub("", line).strip().strip("|").split("|")]
            numbers = [m.group(1) for x in cells for m in [CELL_NUMBER.match(strip_code(x))] if m]
            if c:
                covered.append((n, numbers, c.group(1), c.group(2)))
            elif not re.match(r"^\s*\|[-:| ]+\|\s*$", line):
                loose += [(n, v) for v in numbers]
            continue
        pos = 0
        for c in COMMENT.finditer(line):
            paragraph.append((n, line[pos:c.start()]))
            numbers = [v for _, t in paragraph for v in measured(strip_code(t))]
            covered.append((n, numbers, c.group(1), c.group(2)))
            paragraph, pos = [], c.end()
        paragraph.append((n, line[pos:]))
    for m, rest in paragraph:
        loose += [(m, v) for v in measured(strip_code(rest))]
    return covered, loose


def strip_code(text, blank=False):
    """Prose without inline code and link targets: flags and file names are not measurements.
    blank: each is overwritten with spaces instead, so that what is left keeps its place."""
    def cut(m):
        return " " * len(m.group(0)) if blank else ""
    for pattern in (r"`[^`]*`", r"(?<=\])\([^)]*\)", r"<details>|</details>|<summary>[^<]*</summary>"):
        text = re.sub(pattern, cut, text)
    return text


def check_page(root, page, text):
    """(problems, pinned count, loose count) of one page."""
    problems, cache, pinned = [], {}, 0
    covered, loose = spans(text)
    for n, numbers, kind, spec in covered:
        if kind.replace("-", " ") == "not measured":
            if not spec:
                problems.append(f"{page}:{n}: 'not measured' says not why")
            continue
        candidates, why = source_numbers(root, spec, cache)
        if candidates is None:
            problems.append(f"{page}:{n}: {why}")
            continue
        if not numbers:
            problems.append(f"{page}:{n}: a src comment that covers no number")
        for v in numbers:
            pinned += 1
            if not matches(v, candidates):
                problems.append(f"{page}:{n}: {v} is not on {spec}")
    return problems, pinned, len(loose), loose
