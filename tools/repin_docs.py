#!/usr/bin/env python3
"""tools/repin_docs.py OLD_DIR NEW_DIR [--write] [--root DIR] [PAGE...]

Moves the docs' pinned numbers (tests/doc_numbers.py: `<!--src:PATH:LINE-->`) from one results
run to another: every pin that names a file under OLD_DIR is pointed at the same file under
NEW_DIR, at the line that corresponds to it, and each number the pin covers is replaced by the
number at the same place on that line, rounded as the prose rounded the old one (the same
decimals, or the same significant digits, in the same unit).

Lines correspond where the two files agree once their numbers are masked (a log of the same
commands, a CSV of the same rows): difflib aligns the masked lines. A pin whose file the new run
lacks (an experiment's log) keeps its old path. Prints one line per changed number and per pin it
could not move; with --write, rewrites the pages (default: every page in doc_numbers.PINNED).
Paths, the pins' own among them, are from the repository's root (--root: another tree).
A number written without a unit ('against eager's 52') is not the pin's to rewrite: where it
equals a number of the pin's old lines and none of the new, it is reported. A line of a fenced
block that is a line of an old file the new run changed becomes the new line.
A not-measured formula (`<!--not-measured:8.34-5.76-->`) whose decimal inputs are numbers of
lines the page's pins moved is recomputed from the new lines' numbers, and the numbers it covers
rewritten; an input found on none of them, or on several that now differ, is reported, as is a
whole number of the formula that only changed lines held (1980 of `(1-1410/1980)*100` may be a
clock): such a formula is left whole, for the reader.
The prose around a changed number (a comparison, a "faster") is not read: read the changes.
Exit status 0, or 1 when some pin could not be moved.
"""
import difflib
import os
import re
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(HERE, "tests"))
sys.path.insert(0, os.path.join(HERE, "compare"))
import doc_numbers  # noqa: E402
from common import StrictParser, shown  # noqa: E402 (the standard library only)

MASK = re.compile(r"[0-9][0-9.:e+-]*")
# a formula's literal: 8.34, 1980, 1e6 (an exponent's literal is a constant, never an input)
LITERAL = re.compile(r"[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
# a number in prose, thousands commas and decimals included; not a word's digits ('sm_90', 'v6')
UNITLESS = re.compile(r"(?<![A-Za-z0-9_.#/-])([0-9](?:[0-9]|,(?=[0-9]{3}))*(?:\.[0-9]+)?)(?![0-9A-Za-z_])")


def numbers_at(text):
    """(start, end) of the measured numbers of a stretch of prose, as test_docs finds them."""
    return doc_numbers.measured_spans(doc_numbers.strip_code(text, blank=True))


def unitless_at(text):
    """(start, end) of the numbers of a stretch of prose that numbers_at leaves out."""
    prose = doc_numbers.strip_code(text, blank=True)
    measured = {a for a, _ in doc_numbers.measured_spans(prose)}
    return [m.span(1) for m in UNITLESS.finditer(prose) if m.start(1) not in measured]


def pins(lines):
    """For each comment: (line index, comment match, [(line index, start, end)] of the numbers it
    covers, as doc_numbers.spans reads a page, [(line index, start, end)] of the numbers in its
    prose that it does not cover: written without a unit, nothing checks them)."""
    out, pending, loose = [], [], []
    for i, line in doc_numbers.outside_fences(lines, 0):
        if not line.strip():
            pending, loose = [], []
            continue
        if line.lstrip().startswith("|"):
            pending, loose = [], []
            c = doc_numbers.COMMENT.search(line)
            if not c:
                continue
            covered, pos = [], 0
            for cell in line.split("|")[1:-1]:
                start = line.index(cell, pos)
                pos = start + len(cell)
                bare = doc_numbers.COMMENT.sub(lambda m: " " * len(m.group(0)), cell)
                m = doc_numbers.CELL_NUMBER.match(doc_numbers.strip_code(bare, blank=True))
                if m:
                    covered.append((i, start + m.start(1), start + m.end(1)))
            out.append((i, c, covered, []))
            continue
        pos = 0
        for c in doc_numbers.COMMENT.finditer(line):
            pending += [(i, pos + a, pos + b) for a, b in numbers_at(line[pos:c.start()])]
            loose += [(i, pos + a, pos + b) for a, b in unitless_at(line[pos:c.start()])]
            out.append((i, c, pending, loose))
            pending, loose, pos = [], [], c.end()
        pending += [(i, pos + a, pos + b) for a, b in numbers_at(line[pos:])]
        loose += [(i, pos + a, pos + b) for a, b in unitless_at(line[pos:])]
    return out


def tokens(line):
    return [float(t) for t in doc_numbers.LINE_NUMBER.findall(line.replace(",", " "))]


def render(prose, x, how):
    """x written as prose wrote its old number: the same rounding and thousands commas."""
    scale, kind, digits = how
    v = x * scale
    if kind == "f":
        text = "%.*f" % (digits, v)
    else:
        text = "%.*g" % (digits, v)
        if "e" in text:
            text = "%.0f" % float(text)
    if "," in prose:
        whole, _, frac = text.partition(".")
        text = "{:,}".format(int(whole)) + ("." + frac if frac else "")
    return text


QUOTED_SKIP = (".json", ".npy", ".png", ".tar", ".xz", ".gz")


class Files:
    """Old and new files, read once, and the old lines' counterparts."""

    def __init__(self, root, old, new):
        self.root, self.old, self.new, self.text, self.maps = root, old.rstrip("/"), new.rstrip("/"), {}, {}
        self._quoted = None

    def lines(self, path):
        if path not in self.text:
            full = os.path.join(self.root, path)
            self.text[path] = open(full, encoding="utf-8", errors="replace").read().splitlines() \
                if os.path.isfile(full) else None
        return self.text[path]

    def moved(self, path):
        return self.new + path[len(self.old):] if path.startswith(self.old + "/") else None

    def quoted(self):
        """{old line: {(new line, where)}} for every text file of the new run whose old file
        differs: what a fenced block that quotes the old file now reads."""
        if self._quoted is None:
            self._quoted = {}
            top = os.path.join(self.root, self.new)
            for d, _, names in os.walk(top):
                for name in sorted(names):
                    new = os.path.relpath(os.path.join(d, name), self.root)
                    old = self.old + new[len(self.new):]
                    if name.endswith(QUOTED_SKIP) or os.path.getsize(os.path.join(self.root, new)) > 2 << 20:
                        continue
                    a, b = self.lines(old), self.lines(new)
                    if a is None or a == b:
                        continue
                    if old not in self.maps:
                        self.maps[old] = align(a, b)
                    for i, j in self.maps[old].items():
                        if a[i - 1].rstrip() != b[j - 1].rstrip() and a[i - 1].strip():
                            self._quoted.setdefault(a[i - 1].rstrip(), set()).add((b[j - 1].rstrip(), f"{new}:{j}"))
        return self._quoted

    def counterpart(self, path, n):
        """The new file's line for old line n (1-based), or None."""
        new = self.moved(path)
        a, b = self.lines(path), self.lines(new)
        if a is None or b is None:
            return None
        if path not in self.maps:
            self.maps[path] = align(a, b)
        return self.maps[path].get(n)


def masked(line):
    return " ".join(MASK.sub("#", line).split())


def align(a, b):
    """{old line: new line} (1-based): the lines that agree with their numbers masked, in order;
    between two such runs, each old line goes to the most alike new line after the last one
    placed (at least 3/4 alike, as many numbers): a report's wording or columns may change."""
    ma, mb = [masked(x) for x in a], [masked(x) for x in b]
    m = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ma, mb, autojunk=False).get_opcodes():
        if tag == "equal":
            m.update({i1 + k + 1: j1 + k + 1 for k in range(i2 - i1)})
        elif tag == "replace":
            j = j1
            for i in range(i1, i2):
                best, at = 0.75, None
                for k in range(j, j2):
                    if len(tokens(a[i])) != len(tokens(b[k])):
                        continue
                    r = difflib.SequenceMatcher(None, ma[i], mb[k], autojunk=False).ratio()
                    if r > best:
                        best, at = r, k
                if at is not None:
                    m[i + 1], j = at + 1, at + 1
    return m


def same_decimals(literal, x):
    """x as the literal writes it, to the literal's decimals ('5.76' and 5.758: yes)."""
    decimals = len(literal.split(".")[1]) if "." in literal else 0
    return round(x, decimals) == float(literal)


def refigure(page, lines, comments, moves, report):
    """Edits that recompute the page's not-measured formulas (comments: pins(lines)) from moves,
    the (old, new) numbers of the lines its pins moved; the count of formulas left by hand."""
    edits, by_hand = [], 0
    for i, c, covered, _ in comments:
        if c.group(1) == "src":
            continue
        spec = c.group(2)
        old_values, _ = doc_numbers.formula_values(spec)
        if old_values is None:
            continue
        unsure = []

        def swap(m):
            literal = m.group(0)
            if "e" in literal.lower():
                return literal
            news = {new for old, new in moves if same_decimals(literal, old)}
            if "." not in literal:  # a count or a constant, unless only changed lines held it
                if float(literal) >= 100 and news and float(literal) not in news:
                    unsure.append(f"{literal} (a changed line's number)")
                return literal
            if len(news) != 1:
                unsure.append(f"{literal} ({'on no moved line' if not news else 'now several values'})")
                return literal
            decimals = len(literal.split(".")[1])
            return "%.*f" % (decimals, news.pop())

        new_spec = LITERAL.sub(swap, spec)
        if unsure and moves:  # a formula half recomputed would mix two runs: all of it by hand
            report.append(f"{page}:{i + 1}: formula {spec}: recompute by hand, input " + ", ".join(unsure))
            by_hand += 1
            continue
        if new_spec == spec:
            continue
        new_values, _ = doc_numbers.formula_values(new_spec)
        report.append(f"{page}:{i + 1}: formula {spec} -> {new_spec}")
        for li, a, b in covered:
            prose = lines[li][a:b]
            for k, x in enumerate(old_values):
                how = doc_numbers.rounding(prose, x)
                if how:
                    text = render(prose, new_values[k], how)
                    if text != prose:
                        report.append(f"{page}:{li + 1}: {prose} -> {text}")
                    edits.append((li, a, b, text))
                    break
        edits.append((i, c.start(2), c.end(2), new_spec))
    return edits, by_hand


def repin_page(page, files, report):
    full = os.path.join(files.root, page)
    lines = open(full, encoding="utf-8").read().split("\n")
    edits, failed, moves = [], 0, set()  # (line index, start, end, new text); (old, new) numbers
    comments = pins(lines)
    for i, c, covered, loose in comments:
        if c.group(1) != "src":
            continue
        pairs = doc_numbers.SOURCE.findall(c.group(2))
        if not any(files.moved(p) for p, _ in pairs):
            continue
        # the old and new numbers, in the order the pin names its lines
        old_tokens, new_tokens, spec, ok = [], [], [], True
        for path, nums in pairs:
            new_path = files.moved(path)
            if new_path is None or files.lines(new_path) is None:
                spec.append(f"{path}:{nums}")  # not in the new run: stays
                for n in nums.split(","):
                    t = tokens(files.lines(path)[int(n) - 1]) if files.lines(path) else []
                    old_tokens += t
                    new_tokens += t
                continue
            new_nums = []
            for n in nums.split(","):
                m = files.counterpart(path, int(n))
                if m is None:
                    report.append(f"{page}:{i + 1}: {path}:{n} has no counterpart in {new_path}")
                    ok = False
                    break
                new_nums.append(str(m))
                t_old, t_new = tokens(files.lines(path)[int(n) - 1]), tokens(files.lines(new_path)[m - 1])
                if len(t_old) != len(t_new):
                    report.append(f"{page}:{i + 1}: {path}:{n} -> {new_path}:{m}: {len(t_old)} numbers against {len(t_new)}")
                    ok = False
                    break
                old_tokens += t_old
                new_tokens += t_new
            if not ok:
                break
            spec.append(f"{new_path}:{','.join(new_nums)}")
        if not ok:
            failed += 1
            continue
        changes = []
        for li, a, b in covered:
            prose = lines[li][a:b]
            for k, x in enumerate(old_tokens):
                how = doc_numbers.rounding(prose, x)
                if how:
                    changes.append((li, a, b, render(prose, new_tokens[k], how)))
                    break
            else:
                report.append(f"{page}:{li + 1}: {prose} is not on {c.group(2)}")
                ok = False
        if not ok:
            failed += 1
            continue
        for li, a, b in loose:  # a number with no unit: not checked, so reported, not rewritten
            prose = lines[li][a:b]
            if any(doc_numbers.rounding(prose, y) for y in new_tokens):
                continue
            for k, x in enumerate(old_tokens):
                how = doc_numbers.rounding(prose, x)
                if how:
                    report.append(f"{page}:{li + 1}: {prose} (no unit: not rewritten) was {x:g} on the old line, "
                                  f"{render(prose, new_tokens[k], how)} on the new: read the sentence")
                    break
        for li, a, b, text in changes:
            if text != lines[li][a:b]:
                report.append(f"{page}:{li + 1}: {lines[li][a:b]} -> {text}")
            edits.append((li, a, b, text))
        edits.append((i, c.start(2), c.end(2), ";".join(spec)))
        moves.update(zip(old_tokens, new_tokens))
    formula_edits, by_hand = refigure(page, lines, comments, moves, report)
    edits += formula_edits
    prose = {li for li, _ in doc_numbers.outside_fences(lines, 0)}
    for li, line in enumerate(lines):  # a fenced block quoting a file of the old run
        if li in prose or line.lstrip().startswith(("```", "~~~")):
            continue
        now = files.quoted().get(line.rstrip())
        if not now:
            continue
        texts = {text for text, _ in now}
        if len(texts) > 1:
            report.append(f"{page}:{li + 1}: fenced line quotes an old line that became {len(texts)} different ones")
            continue
        text, where = min(now)
        report.append(f"{page}:{li + 1}: fenced line now as {where}")
        edits.append((li, 0, len(line), text))
    for li, a, b, text in sorted(edits, key=lambda e: (e[0], -e[1])):
        lines[li] = lines[li][:a] + text + lines[li][b:]
    return "\n".join(lines), failed, by_hand


def main():
    p = StrictParser(prog="repin_docs", description=__doc__.split("\n\n")[1], intermixed=True)
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("pages", nargs="*")
    p.add_argument("--write", action="store_true", help="rewrite the pages (else: report only)")
    p.add_argument("--root", default=HERE, help="the tree the paths start from (default: this checkout)")

    def check(args):
        if not os.path.isdir(args.root):
            p.error(f"--root: {args.root}: no such folder")
        for d in (args.old, args.new):
            if d is not None and not os.path.isdir(os.path.join(args.root, d)):
                p.error(f"{d}: no such folder (a results folder, from the repository's root)")
        for page in args.pages or ():
            full = os.path.join(args.root, page)
            if not os.path.isfile(full):
                p.error(f"{page}: no such page" if not os.path.lexists(full) else f"{page}: not a regular file")
            if args.write and not os.access(full, os.W_OK):
                p.error(f"{page}: not writable (--write)")

    p.checks.append(check)
    args = p.parse_args()
    try:
        return repin(args)
    except (OSError, UnicodeDecodeError) as e:
        sys.stderr.write("repin_docs: error: %s\n" % shown(e))
        return 1


def repin(args):
    files = Files(args.root, os.path.normpath(args.old), os.path.normpath(args.new))
    failed = by_hand = 0
    for page in args.pages or doc_numbers.PINNED:
        report = []
        text, f, h = repin_page(page, files, report)
        failed += f
        by_hand += h
        for r in report:
            print(r)
        if args.write:
            with open(os.path.join(args.root, page), "w", encoding="utf-8") as out:
                out.write(text)
    print(f"repin: {failed} pins not moved, {by_hand} formulas to recompute by hand")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
