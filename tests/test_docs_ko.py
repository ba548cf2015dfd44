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
- the same set of numbers in prose (outside code; inline code, link targets and comments left out).
Each page links to its counterpart. A Korean page whose English page changed alone fails with a
message that names the English section. The check is shown to fail on altered copies of a real
pair: a number, an excerpt's range, a figure and a section changed in the English alone.
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


def resolve(page, target):
    """A relative link target of `page` as a path from the repository's root (anchor dropped)."""
    path = os.path.normpath(os.path.join(os.path.dirname(page), target.split("#")[0]))
    return path.replace(os.sep, "/")


def sections(page, text):
    """[(heading level, heading, details, excerpts, figures, numbers, links)] for each section; the
    text before the first heading is section 0, level 0."""
    out = [[0, "(before the first heading)", 0, [], [], set(), set()]]
    for _, line in prose_lines(text):
        h = HEADING.match(line)
        if h:
            out.append([len(h.group(1)), h.group(2), 0, [], [], set(), set()])
        sec = out[-1]
        sec[2] += line.count("<details>")
        for path, a, b in QUOTE.findall(line):
            sec[3].append((resolve(page, path), int(a), int(b)))
        for bang, _, target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue
            if bang:
                sec[4].append(resolve(page, target))
            else:
                sec[6].add(resolve(page, target))
        prose = COMMENT.sub(" ", line)
        prose = re.sub(r"`[^`]*`", " ", prose)
        prose = re.sub(r"\]\([^)]*\)", "]", prose)
        sec[5].update(n.replace(",", "") for n in NUMBER.findall(prose))
    return out


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
        if e[5] != k[5]:
            missing, extra = sorted(e[5] - k[5], key=float), sorted(k[5] - e[5], key=float)
            problems.append(f"{name}: numbers only in English {missing}, only in Korean {extra}")
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


def main():
    for en_page, ko_page in PAIRS:
        if not os.path.isfile(os.path.join(ROOT, ko_page)):
            check(f"{ko_page} exists", False, f"no Korean counterpart of {en_page}")
            continue
        en, ko = read(en_page), read(ko_page)
        problems = compare(en_page, en, ko_page, ko)
        check(f"{ko_page} in step with {en_page}", not problems,
              "; ".join(problems[:6]) + (f" (+{len(problems) - 6} more)" if len(problems) > 6 else ""))
        check(f"{en_page} links to {ko_page}", links_to(en_page, en, ko_page), "no link to the Korean page")
        check(f"{ko_page} links to {en_page}", links_to(ko_page, ko, en_page), "no link to the English page")
        check(f"{ko_page} links to the glossary", links_to(ko_page, ko, GLOSSARY), f"no link to {GLOSSARY}")
    check(f"{GLOSSARY} exists", os.path.isfile(os.path.join(ROOT, GLOSSARY)), "missing")
    check_can_fail()
    failed = results.count(False)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
