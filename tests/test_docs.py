#!/usr/bin/env python3
"""Docs that cannot rot: a CPU test over README.md and docs/*.md.

  python3 tests/test_docs.py

- every relative link and image resolves to a file in the repository;
- every quoted excerpt matches the source today: a fenced code block directly preceded by a
  link of the form [text](../path/file.c#L10-L24) must hold exactly lines 10..24 of that file;
- each page stays within its word budget (wc -w, code included);
- chapters carry no commit hashes, run numbers or development narration;
- a number pinned to its source (<!-- src: PATH:LINE -->, tests/doc_numbers.py) is on that line
  as the prose rounds it, and a page in doc_numbers.PINNED pins every measured number; a number
  marked not measured carries its formula (<!--not-measured:3*768*3072*2/1e6-->), whose value it
  is;
- one value per quantity: a number of a source line is written the same on every page that pins
  it; the fusion ladder's rows are pinned to the one ladder run (doc_numbers.LADDER_LOG), every
  rung at the article's shape on README.md and chapter 04; the pages of the learning path pin
  files of one results run (doc_numbers.RESULTS);
- a lesson, not a report: each English page tests/doc_density.py lists has at most 5 numbers per
  100 words of prose and at most 3 in a sentence. The Korean pages are not counted: the sync test
  (tests/test_docs_ko.py) holds each to the same set of numbers as its English page.
Each of the number checks is shown to fail where it should, on made-up pages and on altered
copies of real ones. Prints one PASS/FAIL line per check and ends with "N passed, N failed".
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import doc_density  # noqa: E402
import doc_numbers  # noqa: E402

# Word budgets (wc -w of the whole file, code included; a pinned number's source comment, written
# without spaces against the word before it, adds no word).
BUDGETS = {
    "README.md": 1200,
    "docs/00_gpu_primer.md": 1500,  # the primer read before chapter 01, one sitting
    "docs/01_matmul_add.md": 4000,
    "docs/02_linear.md": 4000,
    "docs/03_simple_mlp.md": 4000,
    "docs/04_fused_mlp.md": 4000,
    "docs/05_writing_the_gemm.md": 4000,
    "docs/06_scheduling_the_gemm.md": 4000,
    "docs/07_filling_the_waves.md": 4000,
    "docs/04_design_notes.md": 5000,  # optional reading; it grows by a section per idea tried
    "docs/reading-traces.md": 3000,
    "docs/nsight-systems.md": 2500,
    "docs/validation.md": 2500,  # maintainer material, out of the learning path
    "docs/pytorch-vs-c.md": 2500,
    "docs/errors.md": 2500,
}
CHAPTERS = ["docs/01_matmul_add.md", "docs/02_linear.md", "docs/03_simple_mlp.md", "docs/04_fused_mlp.md",
            "docs/05_writing_the_gemm.md", "docs/06_scheduling_the_gemm.md", "docs/07_filling_the_waves.md"]

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
QUOTE_LINK = re.compile(r"\[[^\]]*\]\(([^)\s#]+)#L(\d+)-L(\d+)\)")
FENCE = re.compile(r"^(\s*)(```+|~~~+)(.*)$")
HASH = re.compile(r"(?<![\w/.#-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w/.-])")
NARRATION = [
    (re.compile(r"\bruns? \d+\b", re.I), "a run number"),
    (re.compile(r"\bin turns\b", re.I), '"in turns"'),
    (re.compile(r"\breverted?\b", re.I), '"revert"'),
    (re.compile(r"\bthe issue\b", re.I), '"the issue"'),
    (re.compile(r"\btarget (?:is )?met\b", re.I), '"target met"'),
    (re.compile(r"\b\d{1,2}:\d{2} UTC\b"), "a clock time"),
]

results = []


def check(name, ok, why=""):
    results.append(ok)
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else ": " + why))


def pages():
    out = ["README.md"]
    docs = os.path.join(ROOT, "docs")
    for f in sorted(os.listdir(docs)):
        if f.endswith(".md"):
            out.append("docs/" + f)
    ko = os.path.join(docs, "ko")  # the Korean edition (tests/test_docs_ko.py keeps it in step)
    for f in sorted(os.listdir(ko)) if os.path.isdir(ko) else []:
        if f.endswith(".md"):
            out.append("docs/ko/" + f)
    for d in sorted(os.listdir(ROOT)):  # a README per stage
        p = os.path.join(d, "README.md")
        if re.match(r"^\d\d_", d) and os.path.isfile(os.path.join(ROOT, p)):
            out.append(p)
    return out


def prose_lines(text):
    """(line number, line) outside fenced code blocks."""
    fence = None
    for i, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m:
            if fence is None:
                fence = m.group(2)[0] * 3
            elif m.group(2).startswith(fence):
                fence = None
            continue
        if fence is None:
            yield i, line


def check_links(page, text):
    bad = []
    base = os.path.dirname(os.path.join(ROOT, page))
    for n, line in prose_lines(text):
        for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue  # URLs and anchors within the page
            path = os.path.normpath(os.path.join(base, target.split("#")[0]))
            if not path.startswith(ROOT) or not os.path.exists(path):
                bad.append(f"{page}:{n}: {target}")
    check(f"links {page}", not bad, "; ".join(bad[:5]) + (f" (+{len(bad) - 5} more)" if len(bad) > 5 else ""))


def check_quotes(page, text):
    """A code block right after a line whose last link names file#Lx-Ly quotes those lines."""
    lines = text.splitlines()
    base = os.path.dirname(os.path.join(ROOT, page))
    count, bad = 0, []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence = m.group(2)
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        body = lines[i + 1:j]
        prev = i - 1
        while prev >= 0 and not lines[prev].strip():
            prev -= 1
        links = QUOTE_LINK.findall(lines[prev]) if prev >= 0 else []
        if links:
            count += 1
            target, a, b = links[-1]
            path = os.path.normpath(os.path.join(base, target))
            a, b = int(a), int(b)
            if not os.path.isfile(path):
                bad.append(f"{page}:{i + 1}: {target} does not exist")
            else:
                with open(path, encoding="utf-8") as f:
                    src = f.read().splitlines()
                want = src[a - 1:b]
                indent = m.group(1)
                got = [ln[len(indent):] if ln.startswith(indent) else ln for ln in body]
                if b > len(src) or a < 1 or a > b:
                    bad.append(f"{page}:{i + 1}: {target}#L{a}-L{b} is outside the file ({len(src)} lines)")
                elif [s.rstrip() for s in got] != [s.rstrip() for s in want]:
                    first = next((k for k in range(max(len(got), len(want)))
                                  if k >= len(got) or k >= len(want) or got[k].rstrip() != want[k].rstrip()), 0)
                    bad.append(f"{page}:{i + 1}: {target}#L{a}-L{b} differs from the source at its line {a + first}")
        i = j + 1
    check(f"quotes {page} ({count} excerpts)", not bad, "; ".join(bad[:5]))


def check_budget(page, text):
    if page not in BUDGETS:
        return
    words = len(text.split())
    check(f"budget {page} ({words} of {BUDGETS[page]} words)", words <= BUDGETS[page],
          f"{words} words, budget {BUDGETS[page]}")


def check_narration(page, text):
    bad = []
    for n, line in prose_lines(text):
        clean = re.sub(r"\]\([^)]*\)", "]", line)  # link targets may hold hex-like names
        for h in HASH.findall(clean):
            bad.append(f"{page}:{n}: commit-like hash {h}")
        for rx, what in NARRATION:
            if rx.search(clean):
                bad.append(f"{page}:{n}: {what}")
    check(f"no development narration in {page}", not bad, "; ".join(bad[:5]))


def check_numbers(page, text):
    """Pinned numbers match their source lines; a page in doc_numbers.PINNED pins every one."""
    problems, pinned, n_loose, loose = doc_numbers.check_page(ROOT, page, text)
    if page in doc_numbers.PINNED:
        problems += [f"{page}:{n}: {v} has no source" for n, v in loose]
    elif n_loose and pinned:
        print(f"note: {page}: {pinned} numbers pinned, {n_loose} not yet")
    if pinned or page in doc_numbers.PINNED or problems:
        check(f"numbers pinned in {page} ({pinned})", not problems, "; ".join(problems[:5]) +
              (f" (+{len(problems) - 5} more)" if len(problems) > 5 else ""))


def check_pins_can_fail():
    """The pin check on made-up pages against a made-up source: it must fail where it should."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix="test_docs_") as root:
        with open(os.path.join(root, "src.csv"), "w") as f:
            f.write("version,us,pct\n6,120.297,111.563\n0,9144.837,100.000\n")
        cases = [  # (page text, problems expected)
            ("took 120 us, 112% <!-- src: src.csv:2 -->.\n", 0),
            ("took 9.14 ms <!-- src: src.csv:3 --> and 9,140 us <!-- src: src.csv:3 -->.\n", 0),
            ("| 6 | 120 | 112% <!-- src: src.csv:2 --> |\n", 0),
            ("took 121 us <!-- src: src.csv:2 -->.\n", 1),
            ("| 6 | 120 | 108% <!-- src: src.csv:2 --> |\n", 1),
            ("took 120 us <!-- src: src.csv:9 -->.\n", 1),
            ("took 120 us <!-- src: nowhere.csv:2 -->.\n", 1),
            ("a ratio, 1.33x <!-- not measured: -->.\n", 1),
            ("a ratio, 1.33x<!--not-measured:the_ratio_of_the_two-->.\n", 1),
            ("a ratio, 1.33x<!--not-measured:160/120-->.\n", 0),
            ("a ratio, 1.33x <!-- not measured: 160/120 -->.\n", 0),
            ("a ratio, 1.33x<!--not-measured:160/121-->.\n", 1),
            ("a ratio, 1.33x<!--not-measured:1.33-->.\n", 1),
            ("a ratio, 1.33x<!--not-measured:__import__('os').getcwd()-->.\n", 1),
            ("a ratio, 1.33x<!--not-measured:160/(120-120)-->.\n", 1),
            ("a ratio, 1.33x<!--not-measured:9**9**9-->.\n", 1),
            ("from 9.4-14 MB<!--not-measured:3*768*2048*2/1e6,3*768*3072*2/1e6-->.\n", 0),
            ("from 9.4-15 MB<!--not-measured:3*768*2048*2/1e6,3*768*3072*2/1e6-->.\n", 1),
            ("| h | 50 | MB<!--not-measured:8192*3072*2/1e6--> |\n", 0),
            ("a shape of 8192 tokens<!--not-measured:8192*1-->.\n", 1),
            ("between 112-120 us <!-- src: src.csv:2 -->.\n", 0),
            ("between 112-121 us <!-- src: src.csv:2 -->.\n", 1),
            # Korean prose writes a ratio with 배, a particle against it
            ("비율은 1.33배로<!--not-measured:160/120--> 줄어듭니다.\n", 0),
            ("비율은 1.33배<!--not-measured:160/121-->가 됩니다.\n", 1),
            ("0.08-0.13배<!--not-measured:8/100,13/100-->입니다.\n", 0),
        ]
        for i, (text, want) in enumerate(cases):
            problems, _, _, _ = doc_numbers.check_page(root, "case.md", text)
            check(f"pin check case {i}: {text.strip()[:40]}", (len(problems) > 0) == (want > 0),
                  f"{len(problems)} problems: {problems}")
        _, _, loose, _ = doc_numbers.check_page(root, "case.md", "took 120 us, no source.\n")
        check("pin check: an unpinned number is found", loose == 1, f"{loose} found")
        _, _, loose, _ = doc_numbers.check_page(root, "case.md", "took 112-120 us, no source.\n")
        check("pin check: both ends of an unpinned range are found", loose == 2, f"{loose} found")
        _, _, loose, _ = doc_numbers.check_page(root, "case.md", "약 41배 깁니다. 배열 3개, 8배수.\n")
        check("pin check: a ratio in 배 is found, 배열 and 배수 are not", loose == 1, f"{loose} found")


def report(problems):
    return "; ".join(problems[:5]) + (f" (+{len(problems) - 5} more)" if len(problems) > 5 else "")


def check_density(page, text):
    words, count, dense = doc_density.density(text)
    rate = 100.0 * count / max(words, 1)
    check(f"density {page} ({rate:.1f} numbers per 100 words, {len(dense)} sentences over "
          f"{doc_density.PER_SENTENCE})", rate <= doc_density.PER_100_WORDS and not dense,
          f"{rate:.1f} per 100 words (at most {doc_density.PER_100_WORDS:g})" +
          "".join(f"; {n} numbers in '{s[:70]}...'" for n, s in dense[:3]) +
          (f" (+{len(dense) - 3} more sentences)" if len(dense) > 3 else ""))


def english(pages_list):
    return [p for p in pages_list if not p.startswith("docs/ko/")]


def read(page):
    with open(os.path.join(ROOT, page), encoding="utf-8") as f:
        return f.read()


def check_rules_can_fail():
    """The density, formula, one-value, ladder and one-run checks on altered copies of real pages:
    each must fail where it should."""
    # density: a sentence of four numbers, and six numbers in twelve words
    text = "A lesson says one thing.\n\nIt took 12 us at 8 tokens, 14 at 16 and 20 at 32.\n"
    check("density check: a sentence of 4 numbers fails", doc_density.density(text)[2] != [])
    words, count, _ = doc_density.density("one 1 two 2 three 3, four 4 and five 5 and six 6.\n")
    check("density check: 6 numbers in 12 words fail", 100.0 * count / words > doc_density.PER_100_WORDS)
    words, count, _ = doc_density.density("Run `./run 01_matmul_add --size 4096`, see [the log](results/h200/01.log).\n"
                                           "| 1 | 2 |\n```\n3 4\n```\n")
    check("density check: commands and link targets count, tables and code blocks do not", count == 3,
          f"{count} numbers counted, 3 expected")
    # formulas: a wrong formula and a word marker planted on a copy of a page that has formulas
    page = next((p for p in ["docs/04_design_notes.md"] + english(pages())
                 if "<!--not-measured:" in read(p)), None)
    if page is None:
        check("formula check: a page with a formula to alter", False, "no page marks a number not measured")
    else:
        text = read(page)
        m = re.search(r"<!--not-measured:([^>]*?)-->", text)
        n = text[:m.start()].count("\n") + 1
        for label, planted in (("a wrong formula", f"<!--not-measured:({m.group(1).split(',')[0]})*3+1-->"),
                               ("a word marker", "<!--not-measured:the_datasheet-->")):
            altered = text[:m.start()] + planted + text[m.end():]
            problems = doc_numbers.check_page(ROOT, page, altered)[0]
            check(f"formula check: {label} on a copy of {page}:{n} fails",
                  any(x.startswith(f"{page}:{n}: ") for x in problems), f"problems: {problems[:3]}")
    # one value: a number written in full where the same page already pins it rounded
    cache, altered = {}, None
    for page in english(pages()):
        text = read(page)
        for _, written, path, k, i, shown in doc_numbers.pinned_numbers(ROOT, page, text, cache):
            x = [float(t) for t in doc_numbers.LINE_NUMBER.findall(cache[path][k - 1].replace(",", " "))][i]
            full = repr(x).rstrip("0").rstrip(".") if x != int(x) else str(int(x))
            if doc_numbers.value_of(full) != shown and "e" not in full:
                altered = (page, text + f"\nIt took {full} us<!--src:{path}:{k}-->.\n", f"{written} and {full}")
                break
        if altered:
            break
    if altered is None:
        check("one-value check: a rounded pin to alter", False, "no page pins a rounded number")
    else:
        problems = doc_numbers.check_one_value(ROOT, {altered[0]: altered[1]})
        check(f"one-value check: {altered[2]} for one number on a copy of {altered[0]} fails", problems != [],
              "no problem found")
    # the ladder: a README whose article-shape rung points at another run's table, or at none
    rows = doc_numbers.ladder(ROOT, {})
    key = (doc_numbers.ARTICLE_SHAPE, "eager")
    page = doc_numbers.LADDER_PAGES[0]
    text = read(page)
    pin = re.search(re.escape(doc_numbers.LADDER_LOG) + r":([0-9,]*\b" + str(rows.get(key, -1)) + r"\b[0-9,]*)", text)
    other = None
    results = os.path.join(ROOT, doc_numbers.RESULTS)
    for f in sorted(os.listdir(results)) if os.path.isdir(results) else []:
        path = doc_numbers.RESULTS + f
        lines = doc_numbers.read_lines(ROOT, path, cache) if f.endswith(".log") else None
        if path != doc_numbers.LADDER_LOG and lines:
            other = next((f"{path}:{k}" for k in range(1, len(lines) + 1)
                          if doc_numbers.ladder_row(lines, k) == key), None)
            if other:
                break
    if not pin or not other:
        check(f"ladder check: {page} pins {key[1]} at {key[0]}, and another run's table holds it", False,
              f"pin {bool(pin)}, another table {other}")
    else:
        # left unpinned: the row's line taken out of every pin of the page to LADDER_LOG (the table's
        # and any in prose, as README's "266 µs here"); a pin left with no line points at a line of
        # the log that is no ladder row
        log = doc_numbers.read_lines(ROOT, doc_numbers.LADDER_LOG, cache)
        no_row = next(k for k in range(1, len(log) + 1) if not doc_numbers.ladder_row(log, k))

        def drop(m):
            rest = [x for x in m.group(1).split(",") if x != str(rows[key])]
            return doc_numbers.LADDER_LOG + ":" + (",".join(rest) if rest else str(no_row))
        dropped = re.sub(re.escape(doc_numbers.LADDER_LOG) + r":([0-9]+(?:,[0-9]+)*)", drop, text)
        moved = text[:pin.start()] + other + ";" + text[pin.start():]  # the row pinned in the other table too
        for label, altered, says in (("pinned to another run's table", moved, f"{key[1]} at {key[0]} pinned to"),
                                     ("left unpinned", dropped, f"without a pin to its row of {doc_numbers.LADDER_LOG} for")):
            problems = doc_numbers.check_ladder(ROOT, {page: altered})
            check(f"ladder check: {key[1]} at {key[0]} {label} on a copy of {page} fails",
                  any(says in x and key[1] in x for x in problems), f"problems: {problems[:3]}" if problems else
                  "no problem found")
        check(f"ladder check: {page} as it is passes", doc_numbers.check_ladder(ROOT, {page: text}) == [],
              report(doc_numbers.check_ladder(ROOT, {page: text})))
    # one run: a chapter's pin moved to another results folder; the design notes may pin any run
    for page in doc_numbers.PINNED:
        if page not in doc_numbers.ONE_RUN_EXEMPT and os.path.isfile(os.path.join(ROOT, page)) and \
                "src:" + doc_numbers.RESULTS in read(page):
            altered = read(page).replace("src:" + doc_numbers.RESULTS, "src:docs/results/elsewhere/", 1)
            check(f"one-run check: a pin outside {doc_numbers.RESULTS} on a copy of {page} fails",
                  doc_numbers.check_one_run(page, altered) != [], "no problem found")
            check("one-run check: the design notes may pin another run",
                  doc_numbers.check_one_run("docs/04_design_notes.md", altered) == [], "refused")
            # a constant of the code may be pinned to its source; a log or table outside the run may not
            for target, ok in (("common/profiler/trace_occupancy.cu:7", True), ("tests/data/other/04.log:7", False),
                               ("docs/results/elsewhere/kernel.cu:7", False)):
                planted = read(page).replace("src:" + doc_numbers.RESULTS, "src:" + target + ";" + doc_numbers.RESULTS, 1)
                check(f"one-run check: a pin to {target} on a copy of {page} " + ("passes" if ok else "fails"),
                      (doc_numbers.check_one_run(page, planted) == []) == ok, "refused" if ok else "no problem found")
            break


def main():
    check_pins_can_fail()
    check_rules_can_fail()
    for page in pages():
        with open(os.path.join(ROOT, page), encoding="utf-8") as f:
            text = f.read()
        check_links(page, text)
        check_quotes(page, text)
        check_budget(page, text)
        check_numbers(page, text)
        if (page in doc_numbers.PINNED or "src:" in text) and page not in doc_numbers.ONE_RUN_EXEMPT:
            problems = doc_numbers.check_one_run(page, text)
            check(f"one results run in {page}", not problems, report(problems))
        if page in CHAPTERS or page == "README.md" or (page.startswith("docs/") and not page.startswith("docs/ko/")):
            check_narration(page, text)
    texts = {p: read(p) for p in english(pages())}
    problems = doc_numbers.check_one_value(ROOT, texts)
    check(f"one value per pinned number across {len(texts)} pages", not problems, report(problems))
    problems = doc_numbers.check_ladder(ROOT, {p: read(p) for p in pages()})  # the Korean pages' pins too
    check(f"the ladder's rows pinned to {doc_numbers.LADDER_LOG}", not problems, report(problems))
    for page in doc_density.PAGES:
        if os.path.isfile(os.path.join(ROOT, page)):
            check_density(page, read(page))
    for page in CHAPTERS:
        with open(os.path.join(ROOT, page), encoding="utf-8") as f:
            text = f.read()
        has_ex = re.search(r"^#+ Exercises", text, re.M) is not None
        check(f"exercises in {page}", has_ex, "no '## Exercises' section")
        n_details = text.count("<details>")
        check(f"guesses folded in {page}", n_details >= 3, f"{n_details} <details> blocks")
        n_quotes = len([1 for ln in text.splitlines() if QUOTE_LINK.search(ln)])
        check(f"code quoted in {page}", n_quotes >= 3, f"{n_quotes} excerpts that name a file and line range")
    failed = results.count(False)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
