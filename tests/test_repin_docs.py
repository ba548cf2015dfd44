#!/usr/bin/env python3
"""tools/repin_docs.py on a small tree: a page whose pins name lines of an old run's log and CSV
moves to a new run where lines were added above them and the numbers changed. Each number must
come from its line's counterpart, rounded as the prose rounded the old one (decimals, significant
digits, a change of unit, thousands commas), ranges and table cells too; a pin into a file the
new run lacks keeps its path; a line with no counterpart is reported and makes the exit status 1;
a number written without a unit is reported, not rewritten; a fenced line that quotes the old
run becomes the new line; a not-measured formula whose inputs the pins' lines held is recomputed,
and one with an input they do not hold is reported.
One line per case: PASS/FAIL name.
"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(ROOT, "tools", "repin_docs.py")

OLD_LOG = """run: 8 tokens
decode: 8.653 us per forward, 1980 MHz 150 W
graph: 12.81 us per forward
long: 13645.2 us per forward
range: 8.31 8.38
"""
NEW_LOG = """run: 8 tokens
ceilings: 777 TFLOP/s
decode: 8.312 us per forward, 1965 MHz 143 W
graph: 12.40 us per forward
long: 13938.7 us per forward
range: 8.02 8.11
"""
OLD_CSV = "tokens,us\n1,76.6\n8,76.9\n"
NEW_CSV = "tokens,us\n1,74.2\n8,75.1\n"
EXPERIMENT = "variant a: 107.0 us\n"

PAGE = """# A page

Decode takes 8.7 us<!--src:r/old/run.log:2--> at 1980 MHz<!--src:r/old/run.log:2-->, the graph
12.8 us<!--src:r/old/run.log:3-->; the long run 13,600 us, or 13.6 ms<!--src:r/old/run.log:4-->.
Between 8.31-8.38 us<!--src:r/old/run.log:5--> over rounds. The experiment lost: 107 us<!--src:r/old/exp.log:1-->.
Against the graph's 12.8 the decode takes 8.7 us<!--src:r/old/run.log:2,3-->.

The graph costs 4.2 us<!--not-measured:12.81-8.653--> more; an aside of 1.5 us<!--not-measured:3.25-1.75-->;
a clock 29%<!--not-measured:(1-1410/1980)*100--> lower.

| tokens | us |
|---|---|
| 8 | 76.9<!--src:r/old/grid.csv:3--> |

```
run: 8 tokens
graph: 12.81 us per forward
```
"""
EXPECTED = """# A page

Decode takes 8.3 us<!--src:r/new/run.log:3--> at 1965 MHz<!--src:r/new/run.log:3-->, the graph
12.4 us<!--src:r/new/run.log:4-->; the long run 13,900 us, or 13.9 ms<!--src:r/new/run.log:5-->.
Between 8.02-8.11 us<!--src:r/new/run.log:6--> over rounds. The experiment lost: 107 us<!--src:r/old/exp.log:1-->.
Against the graph's 12.8 the decode takes 8.3 us<!--src:r/new/run.log:3,4-->.

The graph costs 4.1 us<!--not-measured:12.40-8.312--> more; an aside of 1.5 us<!--not-measured:3.25-1.75-->;
a clock 29%<!--not-measured:(1-1410/1980)*100--> lower.

| tokens | us |
|---|---|
| 8 | 75.1<!--src:r/new/grid.csv:3--> |

```
run: 8 tokens
graph: 12.40 us per forward
```
"""


def tree(root, new_log=NEW_LOG):
    for path, text in (("r/old/run.log", OLD_LOG), ("r/new/run.log", new_log), ("r/old/grid.csv", OLD_CSV),
                       ("r/new/grid.csv", NEW_CSV), ("r/old/exp.log", EXPERIMENT), ("page.md", PAGE)):
        os.makedirs(os.path.dirname(os.path.join(root, path)) or root, exist_ok=True)
        with open(os.path.join(root, path), "w") as f:
            f.write(text)


def repin(root, *flags):
    return subprocess.run([sys.executable, TOOL, "r/old", "r/new", "--root", root, *flags, "page.md"],
                          capture_output=True, text=True)


def main():
    results = []

    def check(name, ok, detail=""):
        results.append(ok)
        print(("PASS " if ok else "FAIL ") + name + ("" if ok else ": " + detail))

    with tempfile.TemporaryDirectory() as root:
        tree(root)
        p = repin(root)
        with open(os.path.join(root, "page.md")) as f:
            check("without --write the page stays", f.read() == PAGE)
        check("the report names each changed number", "8.7 -> 8.3" in p.stdout and "13,600 -> 13,900" in p.stdout,
              p.stdout)
        p = repin(root, "--write")
        with open(os.path.join(root, "page.md")) as f:
            text = f.read()
        check("every pin moves, every number is the new line's, rounded alike", text == EXPECTED,
              "\n" + text)
        check("exit status 0 when every pin moved", p.returncode == 0, p.stdout + p.stderr)
        check("a number without a unit next to a pin is reported, not rewritten",
              "12.8 (no unit: not rewritten) was 12.81 on the old line, 12.4 on the new" in p.stdout, p.stdout)
        check("a formula whose inputs the pins' lines held is recomputed from the new lines",
              "formula 12.81-8.653 -> 12.40-8.312" in p.stdout and "4.2 -> 4.1" in p.stdout, p.stdout)
        check("a formula input on no moved line is reported, the formula kept",
              "formula 3.25-1.75: recompute by hand, input 3.25 (on no moved line), 1.75" in p.stdout, p.stdout)
        check("a whole number of a formula that a changed line held is reported",
              "formula (1-1410/1980)*100: recompute by hand, input 1980 (a changed line's number)" in p.stdout,
              p.stdout)
        check("the summary counts the formulas left by hand", "2 formulas to recompute by hand" in p.stdout, p.stdout)
        check("a fenced line quoting the old run is reported with its new line",
              "page.md:17: fenced line now as r/new/run.log:4" in p.stdout, p.stdout)
    with tempfile.TemporaryDirectory() as root:
        tree(root, NEW_LOG.replace("graph: 12.40 us per forward\n", "graph rung: not run\n"))
        p = repin(root, "--write")
        check("a line with no counterpart is reported", "r/old/run.log:3 has no counterpart" in p.stdout, p.stdout)
        check("and makes the exit status 1", p.returncode == 1, str(p.returncode))
        with open(os.path.join(root, "page.md")) as f:
            check("and its pin stays as it was", "12.8 us<!--src:r/old/run.log:3-->" in f.read())
    with tempfile.TemporaryDirectory() as root:
        tree(root)
        p = subprocess.run([sys.executable, TOOL, "r/old", "r/missing", "--root", root], capture_output=True, text=True)
        check("a missing folder is a one-line error", p.returncode == 1 and "r/missing: no such folder" in p.stderr,
              p.stderr)
    failed = results.count(False)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
