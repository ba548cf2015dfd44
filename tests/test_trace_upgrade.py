#!/usr/bin/env python3
"""tools/trace_upgrade.py against the writer: the tool must make of a trace recorded before the
writer's last rules (correlation ids, overlap lanes, record_shapes) exactly what the writer makes
of the same records today.

  - Agreement: each trace of the newest fixture folder (tests/data/h200-*/ with a FIXTURES file,
    recorded before those rules) and of the chapters' run (docs/results/h200/), once
    rewritten by the tool and once written again by the current writer from its records
    (tests/trace_replay.py, bin/tests/test_trace_replay): the two texts are the same, line for
    line, but for the two things a replay cannot give back (the file's own name in traceName,
    and the occupancy estimate, which needs the GPU).
  - The chapters' run as committed follows the rules already (--check finds nothing to do).
  - A second pass changes nothing; PyTorch's own traces are refused.
One line per check: PASS/FAIL/SKIP name.
"""
import glob
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import trace_replay  # noqa: E402
import trace_upgrade  # noqa: E402
from checks import report  # noqa: E402
import checks  # noqa: E402

CHAPTERS_RUN = os.path.join(ROOT, "docs", "results", "h200")
REFERENCES = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "reference", "*.json")))
# what a replay cannot give back
NOT_REPLAYED = re.compile(r'"traceName": .*|"est\. achieved occupancy %": -?\d+')


def ours_under(folder):
    return sorted(p for p in glob.glob(os.path.join(folder, "**", "*.json"), recursive=True)
                  if os.sep + "reference" + os.sep not in p)


def fixture_folder():
    made = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "h200-*", "FIXTURES")))
    return os.path.dirname(made[-1]) if made else None


def disagreement(path, scratch):
    """None when the tool and the writer give the same trace, else where they differ."""
    with open(path, encoding="utf-8") as f:
        upgraded, _ = trace_upgrade.upgrade_text(f.read())
    with open(trace_replay.replay(path, os.path.join(scratch, "replayed")), encoding="utf-8") as f:
        written = f.read()
    a = NOT_REPLAYED.sub("", upgraded).split("\n")
    b = NOT_REPLAYED.sub("", written).split("\n")
    if len(a) != len(b):
        return f"{os.path.relpath(path, ROOT)}: {len(a)} lines from the tool, {len(b)} from the writer"
    for n, (x, y) in enumerate(zip(a, b), 1):
        if x != y:
            at = next(i for i, (p, q) in enumerate(zip(x + "\0", y + "\1")) if p != q)
            return (f"{os.path.relpath(path, ROOT)}:{n}: tool ...{x[max(0, at - 30):at + 30]!r}, "
                    f"writer ...{y[max(0, at - 30):at + 30]!r}")
    return None


def check_agreement(label, folder):
    name = f"trace_upgrade_as_writer_{label}"
    if folder is None or not os.path.isdir(folder):
        print(f"SKIP {name}: no such traces here")
        return
    paths = ours_under(folder)
    problems = []
    with tempfile.TemporaryDirectory(prefix="test_trace_upgrade_") as scratch:
        for path in paths:
            try:
                why = disagreement(path, scratch)
            except (trace_replay.ReplayError, trace_upgrade.UpgradeError) as e:
                why = f"{os.path.relpath(path, ROOT)}: {e}"
            if why:
                problems.append(why)
    if not paths:
        problems.append(f"no traces under {os.path.relpath(folder, ROOT)}")
    report(name, "; ".join(problems[:2]) or None)


def main():
    if not os.access(trace_replay.REPLAY, os.X_OK):
        for n in ("as_writer_fixtures", "as_writer_chapters_run", "committed_current",
                  "second_pass", "refuses_pytorch"):
            print(f"SKIP trace_upgrade_{n}: bin/tests/test_trace_replay not built "
                  "(make bin/tests/test_trace_replay)")
        return 0
    check_agreement("fixtures", fixture_folder())
    check_agreement("chapters_run", CHAPTERS_RUN)

    stale = [p for p in ours_under(CHAPTERS_RUN) if trace_upgrade.upgrade_file(p, check=True)]
    report("trace_upgrade_committed_current",
           f"{len(stale)} traces to rewrite, e.g. {os.path.relpath(stale[0], ROOT)}" if stale else None)

    problems = []
    for path in ours_under(fixture_folder() or CHAPTERS_RUN):
        with open(path, encoding="utf-8") as f:
            once, _ = trace_upgrade.upgrade_text(f.read())
        twice, changed = trace_upgrade.upgrade_text(once)
        if changed or twice != once:
            problems.append(f"{os.path.relpath(path, ROOT)}: {changed} values changed again")
    report("trace_upgrade_second_pass", "; ".join(problems[:2]) or None)

    accepted = []
    for path in REFERENCES:
        try:
            with open(path, encoding="utf-8") as f:
                trace_upgrade.upgrade_text(f.read())
            accepted.append(os.path.basename(path))
        except trace_upgrade.UpgradeError:
            pass
    report("trace_upgrade_refuses_pytorch",
           f"rewrote PyTorch's {accepted}" if accepted or not REFERENCES else None)
    return checks.status()


if __name__ == "__main__":
    sys.exit(main())
