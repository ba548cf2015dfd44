"""Numbers in the docs pinned to the line they come from, for tests/test_docs.py.

A measured number in prose carries its source in an HTML comment right after it, which a reader
of the rendered page does not see, written without spaces and against the word before it, so
that it adds no word to the page's count (wc -w):

    the first version takes 328 us, 41% of cuBLAS's rate<!--src:docs/results/x/grid.csv:51-->
    | 1 | mma.sync | 328 | 236 | 41%<!--src:docs/results/x/grid.csv:51--> |

`src:` names one or more lines (`PATH:LINE`, `PATH:LINE,LINE`, several `PATH:LINE` separated by
`;`), PATH from the repository's root. The comment covers the measured numbers before it: in a
table row, every cell that is a number; in prose, every number with a unit (us, µs, ms,
TFLOP/s, MB, MHz, W, ...), every percentage and every ratio (1.33x, or in Korean prose 0.36배,
a particle written against it: 0.36배로) since the previous comment of its paragraph; both ends
of a range (683-690 W, 0.08-0.13x). Each must equal a number on one of those lines as the prose
rounds it: to the decimals it shows, or to its significant digits (13,600 for 13,645), after a
change of unit by 1000 or a million if need be (9.14 ms for 9144.8 us, 139 ms for 139,012,345 ns).

Arithmetic is not measured, and says how it is made: `<!--not-measured:FORMULA-->`, FORMULA a
Python arithmetic expression without spaces (numbers, + - * / ** and parentheses), several
separated by `,` in the order of the numbers they cover (a range's two ends):

    the weights are 14 MB<!--not-measured:3*768*3072*2/1e6-->
    a step 5% slower<!--not-measured:(200.36/190.8-1)*100-->

Each covered number must equal one of the formulas' values as the prose rounds it (the same
rule as a pin). A formula is evaluated on its syntax tree, never run as code; one that is not
arithmetic (words, names, a bare number with no operation) fails. A datasheet's figure or a
design constant is not arithmetic: it is pinned to a file that holds it, or left out.
The spaced forms (`<!-- src: PATH:LINE -->`, `<!-- not measured: FORMULA -->`) are read too.

A page listed in PINNED must pin every measured number; on the others, pins are checked where
they are and the unpinned numbers are only counted.

Across pages (check_one_value, check_ladder, check_one_run):
- a number of a source line is written the same wherever it is pinned, on one page or several
  (tables included): 8.3 on one page and 8.34 on another are two values of one quantity;
- the fusion ladder's rows (a rung at a shape, in a `== comparison:` table of a log) are pinned
  to RESULTS's 04.log, the one ladder run; README.md and chapter 04 pin every rung of it at the
  article's shape;
- the learning path's pages (every page but ONE_RUN_EXEMPT) pin files under RESULTS (or the
  articles' PyTorch traces under REFERENCE) only. The one exception is a constant of the code, not
  a measurement: a number pinned to a source file of the repository (CODE, outside docs/), such as
  the 48 KB shared-memory limit that common/profiler/trace_occupancy.cu states; no run holds it.
"""
import ast
import math
import operator
import os
import re

PINNED = ("README.md", "docs/01_matmul_add.md", "docs/02_linear.md", "docs/03_simple_mlp.md",
          "docs/04_fused_mlp.md", "docs/05_writing_the_gemm.md", "docs/pytorch-vs-c.md", "docs/reading-traces.md",
          "docs/nsight-systems.md", "docs/errors.md", "docs/04_design_notes.md", "01_matmul_add/README.md",
          "02_linear/README.md", "03_simple_mlp/README.md", "04_fused_mlp/README.md", "docs/ko/README.md",
          "docs/ko/01_matmul_add.md", "docs/ko/02_linear.md", "docs/ko/03_simple_mlp.md", "docs/ko/04_fused_mlp.md",
          "docs/ko/05_writing_the_gemm.md", "docs/ko/reading-traces.md", "docs/ko/nsight-systems.md",
          "docs/ko/pytorch-vs-c.md", "docs/validation.md", "docs/00_gpu_primer.md", "docs/ko/00_gpu_primer.md",
          "docs/06_scheduling_the_gemm.md", "docs/ko/06_scheduling_the_gemm.md",
          "docs/07_filling_the_waves.md", "docs/ko/07_filling_the_waves.md")

# The one results run every page of the learning path pins (tools/repin_docs.py moves the pins
# when a new run replaces it), and the articles' PyTorch traces, which no run of ours replaces.
RESULTS = "docs/results/h200/"
REFERENCE = "tests/data/reference/"
# pages that may pin other runs: the design notes tell what was tried, each in its own run; the
# validation page is the maintainers'; errors.md shows what an earlier run's sanitizer did
ONE_RUN_EXEMPT = ("docs/04_design_notes.md", "docs/validation.md", "docs/errors.md")
# source files whose constants a page may pin outside the results run: code, never a log or a table
CODE = (".c", ".h", ".cu", ".cuh", ".cpp", ".hpp", ".py", ".sh")
# the fusion ladder: its one run, the pages that pin every rung at the article's shape, the shape
LADDER_LOG = RESULTS + "04.log"
LADDER_PAGES = ("README.md", "docs/04_fused_mlp.md")
ARTICLE_SHAPE = "64x128_768x3072_bf16"

COMMENT = re.compile(r"<!--\s*(src|not[ -]measured):\s*(.*?)\s*-->")
NUMBER = r"[0-9][0-9,]*(?:\.[0-9]+)?"
UNITS = r"(?:us|µs|ms|s|ns|MB|GB|KB|TB/s|GB/s|TFLOP/s|GFLOP|TFLOP|MHz|W)"
# A ratio's suffix: 'x' ('1.33x'), or in Korean prose '배' ('0.36배'), which a particle may follow
# ('0.36배로', '0.065배가'); not the words 배열 (array), 배치 (batch), 배포, 배경, 배정, 배수 (a multiple).
RATIO = r"(?:x(?![A-Za-z0-9_])|배(?![열치포경정수]))"
# a number with a unit; a percentage or a ratio (1.33x, 0.36배) written against it; not '2 x 8192'.
# The letters around it are ASCII only: Korean prose writes a particle against the unit ('9.0 us에서').
MEASURED = re.compile(r"(?<![A-Za-z0-9_.#/-])(" + NUMBER + r")(?:\s?" + UNITS + r"(?![A-Za-z0-9_/])|%|" + RATIO + ")")
# a range of them, '683-690 W': both ends are measured (MEASURED matches neither)
RANGE = re.compile(r"(?<![A-Za-z0-9_.#/-])(" + NUMBER + r")-(" + NUMBER + r")(?:\s?" + UNITS +
                   r"(?![A-Za-z0-9_/])|%|" + RATIO + ")")
CELL_NUMBER = re.compile(r"^\s*(" + NUMBER + r")\s?(?:%|x|배)?\s*$")
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


FORMULA = re.compile(r"^[0-9.eE+*/()-]+$")
OPERATIONS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
              ast.Pow: operator.pow}


def evaluate(node):
    """The value of an arithmetic syntax tree: numbers, + - * / ** and signs; anything else raises
    ValueError (nothing is run)."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        v = evaluate(node.operand)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATIONS:
        left, right = evaluate(node.left), evaluate(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 64:
            raise ValueError("an exponent over 64")
        v = OPERATIONS[type(node.op)](left, right)
        if not isinstance(v, float) or not math.isfinite(v):
            raise ValueError("no finite real value")
        return v
    raise ValueError("not arithmetic")


def formula_values(spec):
    """The values of a not-measured comment's formulas (separated by ','), or (None, why)."""
    values = []
    for part in spec.split(","):
        if not FORMULA.match(part):
            return None, f"'{spec[:80]}' is not a formula (numbers, + - * / ** and parentheses, no spaces)"
        try:
            tree = ast.parse(part, mode="eval")
            if not any(isinstance(x, ast.BinOp) for x in ast.walk(tree)):
                return None, f"'{part}' is a number, not arithmetic: pin it to the file that holds it"
            values.append(float("%.12g" % evaluate(tree.body)))  # 2.45, not 2.4499999999999993
        except (SyntaxError, ValueError, ZeroDivisionError, OverflowError) as e:
            return None, f"'{part}' is not a formula ({e.msg if isinstance(e, SyntaxError) else e})"
    return values, None


def check_page(root, page, text):
    """(problems, pinned count, loose count, loose) of one page."""
    problems, cache, pinned = [], {}, 0
    covered, loose = spans(text)
    for n, numbers, kind, spec in covered:
        if kind.replace("-", " ") == "not measured":
            values, why = formula_values(spec)
            if values is None:
                problems.append(f"{page}:{n}: {why}")
            elif not numbers:
                problems.append(f"{page}:{n}: a not-measured formula that covers no number")
            for v in numbers if values else ():
                if not matches(v, values):
                    problems.append(f"{page}:{n}: {v} is not {spec} (" +
                                    ", ".join("%.6g" % x for x in values) + ")")
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


def read_lines(root, path, cache):
    """The lines of a file of the repository (cached), or None."""
    if path not in cache:
        full = os.path.join(root, path)
        cache[path] = None
        if os.path.isfile(full):
            with open(full, encoding="utf-8", errors="replace") as f:
                cache[path] = f.read().splitlines()
    return cache[path]


def pinned_numbers(root, page, text, cache):
    """Each number a src comment of the page covers, with the source number it is: (line of the
    page, as written, PATH, LINE, index of the number on that line, its value in the source's unit).
    Of the lines a comment names, the number is the one it matches best (the same unit first, then
    the nearest)."""
    out = []
    for n, numbers, kind, spec in spans(text)[0]:
        if kind != "src":
            continue
        lines = []
        for path, line_numbers in SOURCE.findall(spec):
            src = read_lines(root, path, cache)
            for k in line_numbers.split(","):
                k = int(k)
                if src is not None and 1 <= k <= len(src):
                    lines.append((path, k, [float(t) for t in LINE_NUMBER.findall(src[k - 1].replace(",", " "))]))
        for v in numbers:
            best = None
            for path, k, candidates in lines:
                for i, x in enumerate(candidates):
                    r = rounding(v, x)
                    if r:
                        shown = value_of(v) / r[0]
                        score = (r[0] != 1.0, abs(shown - x) / max(abs(x), 1e-12))
                        if best is None or score < best[0]:
                            best = (score, path, k, i, shown)
            if best:
                out.append((n, v, best[1], best[2], best[3], best[4]))
    return out


def check_one_value(root, texts):
    """A number of a source line is written the same wherever it is pinned. texts: {page: text}.
    Problems, one line per number written two ways, naming each page and line."""
    seen, cache = {}, {}
    for page in sorted(texts):
        for n, written, path, k, i, shown in pinned_numbers(root, page, texts[page], cache):
            seen.setdefault((path, k, i), []).append((page, n, written, shown))
    problems = []
    for (path, k, i), where in sorted(seen.items()):
        values = []
        for _, _, _, shown in where:
            if not any(math.isclose(shown, x, rel_tol=1e-9) for x in values):
                values.append(shown)
        if len(values) > 1:
            problems.append(f"{path}:{k} (its number {i + 1}) written " +
                            ", ".join(f"{w} at {p}:{n}" for p, n, w, _ in where))
    return problems


RUNG_ROW = re.compile(r"^(eager|fused_geglu|merged|epilogue|graph|decode)\s+[0-9]+\s+[0-9]")
COMPARISON = re.compile(r"^== comparison: ([^,\s]+)")


def ladder_row(lines, k):
    """(shape, rung) when line k (from 1) of a log is a rung's row in a `== comparison:` table."""
    m = RUNG_ROW.match(lines[k - 1])
    if not m:
        return None
    for j in range(k - 1, 0, -1):
        if lines[j - 1].startswith("=="):
            c = COMPARISON.match(lines[j - 1])
            return (c.group(1), m.group(1)) if c else None
    return None


def ladder(root, cache):
    """{(shape, rung): line} of LADDER_LOG's comparison tables (the first table of a shape)."""
    lines = read_lines(root, LADDER_LOG, cache) or []
    out = {}
    for k in range(1, len(lines) + 1):
        key = ladder_row(lines, k)
        if key and key not in out:
            out[key] = k
    return out


def check_ladder(root, texts):
    """The fusion ladder's rows, one value across pages: a rung at a shape that LADDER_LOG's table
    holds is pinned to that row, on every page but ONE_RUN_EXEMPT (another run's ladder table is
    another value of the same quantity); each of LADDER_PAGES pins every rung at ARTICLE_SHAPE."""
    cache = {}
    rows = ladder(root, cache)
    problems = [] if rows else [f"{LADDER_LOG} holds no ladder table"]
    for page in sorted(texts):
        if page in ONE_RUN_EXEMPT:
            continue
        pinned = set()
        for n, _, kind, spec in spans(texts[page])[0]:
            if kind != "src":
                continue
            for path, line_numbers in SOURCE.findall(spec):
                src = read_lines(root, path, cache)
                for k in map(int, line_numbers.split(",")):
                    key = ladder_row(src, k) if src and 1 <= k <= len(src) else None
                    if not key or key not in rows:
                        continue
                    if (path, k) != (LADDER_LOG, rows[key]):
                        problems.append(f"{page}:{n}: {key[1]} at {key[0]} pinned to {path}:{k}; the ladder's "
                                        f"row is {LADDER_LOG}:{rows[key]}")
                    else:
                        pinned.add(key)
        if page in LADDER_PAGES:
            missing = [r for (shape, r) in rows if shape == ARTICLE_SHAPE and (shape, r) not in pinned]
            if missing:
                problems.append(f"{page}: the ladder at {ARTICLE_SHAPE} without a pin to its row of "
                                f"{LADDER_LOG} for " + ", ".join(missing))
    return problems


def is_code(path):
    """A source file of the repository (CODE, not under docs/): its numbers are the code's constants."""
    return path.endswith(CODE) and not path.startswith("docs/")


def check_one_run(page, text):
    """The files a page of the learning path pins lie under RESULTS (or REFERENCE), or are code."""
    if page in ONE_RUN_EXEMPT:
        return []
    problems = []
    for n, _, kind, spec in spans(text)[0]:
        if kind != "src":
            continue
        for path, _ in SOURCE.findall(spec):
            if not path.startswith((RESULTS, REFERENCE)) and not is_code(path):
                problems.append(f"{page}:{n}: {path} is not under {RESULTS}")
    return problems
