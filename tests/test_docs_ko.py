#!/usr/bin/env python3
"""The Korean edition kept in step with the English: a CPU test over docs/ko/.

  python3 tests/test_docs_ko.py

For each English page and its Korean counterpart (PAIRS), section by section (a section is a
heading and what follows it, up to the next heading; headings inside code blocks do not count):
- the same number of sections, at the same heading levels;
- the same number of <details> folds;
- the same code excerpts, in order: the file and line range each quote names (test_docs.py checks
  that the lines still match the source, on both pages);
- the same figures, in order (image links, resolved to a file of the repository);
- the same set of numbers in prose (outside code; inline code, link targets and comments left out);
  a number the English section spells in words ("about a microsecond", "seven thousand times") may
  stand in digits in the Korean ("1 µs", "7000배"): the check compares values, not spellings;
- the same number of paragraphs and of list items (a stale or missing translated paragraph fails);
and, on the Korean page alone:
- one term for one thing: a variant the glossary (docs/ko/glossary.md, its "피할 변형" column)
  lists fails where it stands in prose (outside code blocks, inline code, comments, link targets and
  link labels that carry a file path), named page:line with the preferred term;
- a figure drawn in Korean (docs/img/X_ko.png beside X.png) is linked in Korean: a Korean page that
  links X.png where X_ko.png exists fails. The sync check reads X_ko.png as X.png.
Each page links to its counterpart. A Korean page whose English page changed alone fails with a
message that names the English section. The check is shown to fail on altered copies of a real
pair: a number, an excerpt's range, a figure and a section changed in the English alone; the term,
paragraph and figure checks on a planted variant, a planted stale paragraph and list item, and a
Korean figure left unlinked.
Prints one PASS/FAIL line per check and ends with "N passed, N failed".
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from test_docs import QUOTE_LINK as QUOTE, check, prose_lines, results  # noqa: E402

PAIRS = [
    ("README.md", "docs/ko/README.md"),
    ("docs/01_matmul_add.md", "docs/ko/01_matmul_add.md"),
    ("docs/02_linear.md", "docs/ko/02_linear.md"),
    ("docs/03_simple_mlp.md", "docs/ko/03_simple_mlp.md"),
    ("docs/04_fused_mlp.md", "docs/ko/04_fused_mlp.md"),
    ("docs/05_writing_the_gemm.md", "docs/ko/05_writing_the_gemm.md"),
    ("docs/06_scheduling_the_gemm.md", "docs/ko/06_scheduling_the_gemm.md"),
    ("docs/07_filling_the_waves.md", "docs/ko/07_filling_the_waves.md"),
    ("docs/reading-traces.md", "docs/ko/reading-traces.md"),
    ("docs/nsight-systems.md", "docs/ko/nsight-systems.md"),
    ("docs/pytorch-vs-c.md", "docs/ko/pytorch-vs-c.md"),
    ("docs/00_gpu_primer.md", "docs/ko/00_gpu_primer.md"),
]
GLOSSARY = "docs/ko/glossary.md"

HEADING = re.compile(r"^(#{1,6})\s+(.*\S)\s*$")
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
COMMENT = re.compile(r"<!--.*?-->")
NUMBER = re.compile(r"(?<![A-Za-z0-9_.])[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?")
SMALL = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
         "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
SCALES = {"hundred": 100, "thousand": 1000, "million": 1000000}
UNIT_WORDS = {"nanosecond", "microsecond", "millisecond", "second", "minute", "hour", "day", "kilobyte",
              "megabyte", "gigabyte", "hundred", "thousand", "million"}
WORD = re.compile(r"[A-Za-z]+")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|[0-9]+[.)])\s+")
HTML_ONLY = re.compile(r"^(?:\s*</?[A-Za-z][^>]*>)+\s*$")
IMG_KO = re.compile(r"_ko(\.png)$")


def resolve(page, target):
    """A relative link target of `page` as a path from the repository's root (anchor dropped)."""
    path = os.path.normpath(os.path.join(os.path.dirname(page), target.split("#")[0]))
    return path.replace(os.sep, "/")


def sections(page, text):
    """[(heading level, heading, details, excerpts, figures, numbers, links)] for each section; the
    text before the first heading is section 0, level 0."""
    out = [[0, "(before the first heading)", 0, [], [], set(), set(), set()]]
    for _, line in prose_lines(text):
        h = HEADING.match(line)
        if h:
            out.append([len(h.group(1)), h.group(2), 0, [], [], set(), set(), set()])
        sec = out[-1]
        sec[2] += line.count("<details>")
        for path, a, b in QUOTE.findall(line):
            sec[3].append((resolve(page, path), int(a), int(b)))
        for bang, _, target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue
            if bang:
                sec[4].append(IMG_KO.sub(r"\1", resolve(page, target)))
            else:
                sec[6].add(resolve(page, target))
        prose = COMMENT.sub(" ", line)
        prose = re.sub(r"`[^`]*`", " ", prose)
        prose = re.sub(r"\]\([^)]*\)", "]", prose)
        sec[5].update(n.replace(",", "") for n in NUMBER.findall(prose))
        sec[7].update(spelled(prose))
    return out


def spelled(prose):
    """The numbers an English line spells in words: "seven thousand" 7000, "twenty-one" 21, "twice"
    2, "a microsecond" 1; as strings, the way NUMBER reads digits."""
    words = [w.lower() for w in WORD.findall(prose.replace("-", " "))]
    found, value, current, in_number = set(), 0, 0, False

    def close():
        if in_number:
            found.add(str(value + current))

    for i, w in enumerate(words):
        if w in SMALL or w in TENS:
            if in_number and current % 10 == 0 and current % 100 != 0 and w in SMALL:
                current += SMALL.index(w)
            else:
                close()
                value, in_number = 0, True
                current = SMALL.index(w) if w in SMALL else 20 + 10 * TENS.index(w)
        elif w in SCALES and (in_number or (i and words[i - 1] in ("a", "an"))):
            if not in_number:
                value, current, in_number = 0, 1, True
            if SCALES[w] == 100:
                current *= 100
            else:
                value, current = value + current * SCALES[w], 0
        elif w in ("a", "an") and i + 1 < len(words) and words[i + 1].rstrip("s") in UNIT_WORDS \
                and words[i + 1] not in SCALES:
            close()
            in_number = False
            found.add("1")
        else:
            if w == "twice":
                found.add("2")
            if w != "and":
                close()
                value, current, in_number = 0, 0, False
    close()
    return found


def compare(en_page, en_text, ko_page, ko_text):
    """The ways the Korean page is out of step with the English, one line each, naming the section."""
    en, ko = sections(en_page, en_text), sections(ko_page, ko_text)
    problems = []
    if [s[0] for s in en] != [s[0] for s in ko]:
        levels_en = [s[0] for s in en]
        levels_ko = [s[0] for s in ko]
        first = next((i for i in range(min(len(en), len(ko))) if levels_en[i] != levels_ko[i]), min(len(en), len(ko)))
        where = en[first][1] if first < len(en) else "(end of the English page)"
        problems.append(f"sections: {len(en)} in English, {len(ko)} in Korean; they part at English "
                        f"section '{where}'")
        return problems
    for e, k in zip(en, ko):
        name = f"section '{e[1]}'"
        if e[2] != k[2]:
            problems.append(f"{name}: {e[2]} <details> in English, {k[2]} in Korean")
        if e[3] != k[3]:
            problems.append(f"{name}: excerpts {fmt_quotes(e[3])} in English, {fmt_quotes(k[3])} in Korean")
        if e[4] != k[4]:
            problems.append(f"{name}: figures {e[4]} in English, {k[4]} in Korean")
        missing, extra = sorted(e[5] - k[5], key=float), sorted(k[5] - e[5] - e[7], key=float)
        if missing or extra:
            problems.append(f"{name}: numbers only in English {missing}, only in Korean {extra}")
    return problems


def blocks(text):
    """[(heading, paragraphs, list items)] per section, as sections() cuts them. A list item is a line
    that starts with a marker (-, *, +, 1.) and the lines that follow it up to a blank line; a
    paragraph is any other run of prose lines up to a blank line, a fence, a table or a line that holds
    only HTML tags (<details>, <summary>); a blockquote's lines count as the lines they quote; tables
    and code count as neither."""
    out = [["(before the first heading)", 0, 0]]
    current, last = None, 0
    for n, line in prose_lines(text):
        if n != last + 1:  # a code block (fences included) lay between: it ends any paragraph
            current = None
        last = n
        h = HEADING.match(line)
        if h:
            out.append([h.group(2), 0, 0])
            current = None
            continue
        body = re.sub(r"^(?:\s*>)+", "", line)
        if not body.strip() or HTML_ONLY.match(body) or body.lstrip().startswith("|"):
            current = None
            continue
        if LIST_ITEM.match(body):
            current = "item"
            out[-1][2] += 1
        elif current is None:
            current = "paragraph"
            out[-1][1] += 1
    return out


def compare_blocks(en_text, ko_text):
    """Sections whose paragraphs or list items the two pages count differently, one line each (none
    when the sections themselves differ: compare() says so)."""
    en, ko = blocks(en_text), blocks(ko_text)
    if len(en) != len(ko):
        return []
    problems = []
    for e, k in zip(en, ko):
        if e[1:] != k[1:]:
            problems.append(f"section '{e[0]}': {e[1]} paragraphs and {e[2]} list items in English, "
                            f"{k[1]} and {k[2]} in Korean")
    return problems


def glossary_variants(text):
    """[(variant as written, compiled pattern, preferred Korean, page prefixes or None)] from the
    glossary's tables: the third column's items in backticks; /.../ a regular expression (\\| its
    alternation, \\x7c a literal bar), else a literal; a trailing " @05,06" limits it to the pages
    whose names start so."""
    out = []
    for line in text.splitlines():
        if not line.startswith("|") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if len(cells) != 3 or cells[0] == "English":
            continue
        preferred = cells[1].replace("`", "")
        preferred = preferred if len(preferred) <= 60 else preferred[:60].rstrip() + "..."
        for item in re.findall(r"`([^`]+)`", cells[2]):
            item = item.replace("\\|", "|")
            scope = None
            at = re.match(r"^(.*\S) @([0-9A-Za-z_,.-]+)$", item)
            if at:
                item, scope = at.group(1), at.group(2).split(",")
            if len(item) > 2 and item.startswith("/") and item.endswith("/"):
                pattern = re.compile(item[1:-1])
            elif re.search(r"[A-Za-z]", item):
                pattern = re.compile(r"(?<![A-Za-z0-9_./-])" + re.escape(item) + r"(?![A-Za-z0-9_./-])")
            else:
                pattern = re.compile(re.escape(item))
            out.append((item, pattern, preferred, scope))
    return out


def term_prose(line):
    """A prose line as the term check reads it: comments, inline code and link targets gone; a link
    label that carries a file path (an excerpt's "main.c, 53-67행") gone."""
    line = COMMENT.sub("", line)
    line = re.sub(r"`[^`]*`", " ", line)

    def label(m):
        text = m.group(2)
        if "/" in text or re.search(r"\w\.(?:c|cu|cuh|h|py|sh|md|log|csv|json|png|txt)\b", text):
            return m.group(1) + "[ ]"
        return m.group(1) + "[" + text + "]"
    return LINK.sub(label, line)


def term_problems(page, text, variants):
    """page:line: each glossary variant in the Korean page's prose, with the preferred term."""
    name = os.path.basename(page)
    problems = []
    for n, line in prose_lines(text):
        prose = term_prose(line)
        for item, pattern, preferred, scope in variants:
            if scope and not any(name.startswith(s) for s in scope):
                continue
            for m in pattern.finditer(prose):
                problems.append(f"{page}:{n}: '{m.group(0).strip()}' (variant {item}) -> {preferred}")
    return problems


def figure_problems(page, text):
    """page:line: each link to a figure X.png whose Korean drawing X_ko.png sits beside it."""
    problems = []
    for n, line in prose_lines(text):
        for _, _, target in LINK.findall(re.sub(r"`[^`]*`", " ", line)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or not target.endswith(".png") or IMG_KO.search(target):
                continue
            path = resolve(page, target)
            twin = path[:-len(".png")] + "_ko.png"
            if os.path.isfile(os.path.join(ROOT, twin)):
                problems.append(f"{page}:{n}: links {path}, drawn in Korean as {twin}")
    return problems


def fmt_quotes(quotes):
    return "[" + ", ".join(f"{p}#L{a}-L{b}" for p, a, b in quotes) + "]"


def links_to(page, text, other):
    return any(other in s[6] for s in sections(page, text))


def read(page):
    with open(os.path.join(ROOT, page), encoding="utf-8") as f:
        return f.read()


def check_can_fail():
    """Alterations of a real pair, in the English alone, each caught and named by its section."""
    en_page, ko_page = PAIRS[2]
    if not os.path.isfile(os.path.join(ROOT, ko_page)):
        check("the sync check fails on altered copies", False, f"{ko_page} is missing")
        return
    en, ko = read(en_page), read(ko_page)
    secs = sections(en_page, en)
    with_number = next(s for s in secs[1:] if s[5])
    with_quote = next(s for s in secs if s[3])
    with_figure = next((s for s in secs if s[4]), None)
    lines = en.splitlines()
    prose = {n for n, _ in prose_lines(en)}

    def altered(pred, edit):
        out, current = [], None
        for n, line in enumerate(lines, 1):
            h = HEADING.match(line) if n in prose else None
            if h:
                current = h.group(2)
            out.append(edit(line) if n in prose and pred(current, line) else line)
        return "\n".join(out) + "\n"

    n = sorted(with_number[5], key=float)[-1]
    cases = [
        ("a number", with_number[1],
         altered(lambda c, ln: c == with_number[1],
                 lambda ln: re.sub(r"(?<![A-Za-z0-9_.])" + re.escape(n) + r"(?![0-9])", n + "1", ln))),
        ("an excerpt's line range", with_quote[1],
         altered(lambda c, ln: c == with_quote[1] and QUOTE.search(ln) is not None,
                 lambda ln: QUOTE.sub(lambda m: m.group(0).replace(f"-L{m.group(3)})", f"-L{int(m.group(3)) + 1})"),
                                      ln, count=1))),
        ("a section", secs[-1][1], en + "\n## A section added in English\n\nNew text.\n"),
    ]
    if with_figure:
        cases.append(("a figure", with_figure[1],
                      altered(lambda c, ln: c == with_figure[1] and "![" in ln,
                              lambda ln: ln.replace(".png)", "_new.png)", 1))))
    for what, section, text in cases:
        problems = compare(en_page, text, ko_page, ko)
        named = [p for p in problems if section in p or "sections:" in p]
        check(f"sync check fails when {what} changes in English alone ({en_page})", bool(named),
              f"problems: {problems}")



def fmt_problems(problems):
    return "; ".join(problems[:6]) + (f" (+{len(problems) - 6} more)" if len(problems) > 6 else "")


def check_new_checks_can_fail(variants):
    """The term, paragraph and figure checks, and the spelled-number allowance, on altered copies of
    real pages: each plant fails for its own reason, what the checks leave alone passes."""
    # A glossary variant planted in prose fails, named page:line with the preferred term; the same
    # variant in inline code, a code block, a comment or a link target does not.
    en_page, ko_page = PAIRS[-1]
    ko = read(ko_page)
    lines = ko.splitlines()
    prose = [n for n, line in prose_lines(ko) if line.strip() and not HEADING.match(line)
             and not line.lstrip().startswith(("|", "<", "!"))]
    n = prose[0]
    item = next((v for v in variants if v[0] == "융합"), None)
    if item is None:
        check("term check fails on a planted variant", False, f"{GLOSSARY} lists no variant 융합 to plant")
        return
    planted = lines[:n - 1] + [lines[n - 1] + " 융합"] + lines[n:]
    harmless = lines + ["", "`융합` <!-- 융합 --> [통합](#융합)", "", "```", "융합", "```"]
    before = term_problems(ko_page, ko, variants)
    after = term_problems(ko_page, "\n".join(planted) + "\n", variants)
    new = [p for p in after if p not in before]
    check(f"term check fails on a planted variant ({ko_page})",
          len(new) == 1 and new[0].startswith(f"{ko_page}:{n}: '융합'") and new[0].endswith(item[2]),
          f"new problems: {new}")
    new = [p for p in term_problems(ko_page, "\n".join(harmless) + "\n", variants) if p not in before]
    check("term check leaves code, comments and link targets alone", not new, f"new problems: {new}")

    # A stale paragraph left in the Korean, and a list item the English dropped, each fail and name
    # their section.
    en_page, ko_page = PAIRS[2]
    en, ko = read(en_page), read(ko_page)
    en_blocks, ko_blocks = blocks(en), blocks(ko)
    same = [i for i in range(1, len(en_blocks)) if i < len(ko_blocks) and en_blocks[i][1:] == ko_blocks[i][1:]]
    with_paragraphs = next(i for i in same if en_blocks[i][1])
    with_items = next((i for i in same if en_blocks[i][2]), None)

    def heading_line(text, index):
        """The line number of the index-th heading outside code (index 1 is the first)."""
        return [n for n, line in prose_lines(text) if HEADING.match(line)][index - 1]

    lines = ko.splitlines()
    at = heading_line(ko, with_paragraphs)
    stale = "\n".join(lines[:at] + ["", "영어판에서 지워진 문단이 번역에 남았습니다.", ""] + lines[at:]) + "\n"
    problems = compare_blocks(en, stale)
    check(f"paragraph check fails on a stale Korean paragraph ({ko_page})",
          any(f"section '{en_blocks[with_paragraphs][0]}'" in p for p in problems), f"problems: {problems}")
    if with_items:
        lines = en.splitlines()
        start = heading_line(en, with_items)
        end = heading_line(en, with_items + 1) - 1 if with_items + 1 < len(en_blocks) else len(lines)
        first = next(i for i in range(start, end) if LIST_ITEM.match(lines[i]))
        last = next((i for i in range(first + 1, end)
                     if LIST_ITEM.match(lines[i]) or HEADING.match(lines[i]) or not lines[i].strip()), end)
        dropped = "\n".join(lines[:first] + lines[last:]) + "\n"
        problems = compare_blocks(dropped, ko)
        check(f"paragraph check fails when a list item leaves the English alone ({en_page})",
              any(f"section '{en_blocks[with_items][0]}'" in p for p in problems), f"problems: {problems}")

    # A figure drawn in Korean: linked, the page passes the figure and sync checks; the English
    # drawing linked instead fails.
    en_page, ko_page = PAIRS[-1]
    en, ko = read(en_page), read(ko_page)

    def korean_figure(m):
        path = resolve(ko_page, m.group(3))
        if m.group(1) and path.endswith(".png") and os.path.isfile(os.path.join(ROOT, path[:-4] + "_ko.png")):
            return m.group(0).replace(m.group(3), m.group(3)[:-4] + "_ko.png")
        return m.group(0)
    drawn = LINK.sub(korean_figure, ko)
    if drawn == ko and "_ko.png)" not in ko:
        check(f"figure check fails on an English figure linked in Korean ({ko_page})", False,
              "no figure of the page is drawn in Korean")
        return
    figures = [p for p in compare(en_page, en, ko_page, drawn) if "figures" in p]
    check(f"a Korean page that links its Korean figures passes ({ko_page})",
          not figure_problems(ko_page, drawn) and not figures, fmt_problems(figure_problems(ko_page, drawn) + figures))
    english = drawn.replace("_ko.png)", ".png)", 1)
    problems = figure_problems(ko_page, english)
    check(f"figure check fails on an English figure linked in Korean ({ko_page})",
          len(problems) == 1 and "_ko.png" in problems[0], f"problems: {problems}")

    # Numbers the English spells in words may stand in digits in Korean; other numbers may not.
    en = "# T\n\nBoth kernels run for about a microsecond, nearly seven thousand times shorter.\n"
    ok = "# T\n\n두 커널은 약 1 µs 동안 실행되며, 7000배 가까이 짧습니다.\n"
    bad = "# T\n\n두 커널은 약 2 µs 동안 실행되며, 7000배 가까이 짧습니다.\n"
    check("sync check reads a number spelled in English as its digits in Korean",
          not compare("docs/t.md", en, "docs/ko/t.md", ok), f"{compare('docs/t.md', en, 'docs/ko/t.md', ok)}")
    check("sync check still fails on a number the English does not have",
          any("only in Korean ['2']" in p for p in compare("docs/t.md", en, "docs/ko/t.md", bad)),
          f"{compare('docs/t.md', en, 'docs/ko/t.md', bad)}")


def main():
    variants = glossary_variants(read(GLOSSARY)) if os.path.isfile(os.path.join(ROOT, GLOSSARY)) else []
    check(f"{GLOSSARY} lists the variants to avoid", bool(variants), "no variant in its tables' third column")
    for en_page, ko_page in PAIRS:
        if not os.path.isfile(os.path.join(ROOT, ko_page)):
            check(f"{ko_page} exists", False, f"no Korean counterpart of {en_page}")
            continue
        en, ko = read(en_page), read(ko_page)
        problems = compare(en_page, en, ko_page, ko)
        check(f"{ko_page} in step with {en_page}", not problems, fmt_problems(problems))
        problems = compare_blocks(en, ko)
        check(f"{ko_page} paragraphs and list items in step with {en_page}", not problems, fmt_problems(problems))
        problems = term_problems(ko_page, ko, variants)
        check(f"{ko_page} uses the glossary's terms", not problems, fmt_problems(problems))
        problems = figure_problems(ko_page, ko)
        check(f"{ko_page} links the figures drawn in Korean", not problems, fmt_problems(problems))
        check(f"{en_page} links to {ko_page}", links_to(en_page, en, ko_page), "no link to the Korean page")
        check(f"{ko_page} links to {en_page}", links_to(ko_page, ko, en_page), "no link to the English page")
        check(f"{ko_page} links to the glossary", links_to(ko_page, ko, GLOSSARY), f"no link to {GLOSSARY}")
    check(f"{GLOSSARY} exists", os.path.isfile(os.path.join(ROOT, GLOSSARY)), "missing")
    check_can_fail()
    if variants:
        check_new_checks_can_fail(variants)
    failed = results.count(False)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
