"""Nsight Systems captures (tools/nsys_capture.sh) against our own trace of the same run.

For every traces/<stage>/<tag><suffix>.sqlite (the export nsys stats leaves beside a .nsys-rep)
whose <tag>.json (our CUPTI trace of the same flags) exists:
  - the capture holds exactly the active steps: the same ProfileStep#N / ProfilerStep#N ranges
    as our trace, none of the wait and warm-up steps (a capture whose suffix holds ".cold",
    made with tools/nsys_capture.sh --cold, must hold steps 0..n-1 instead, step 0 included);
  - every range name of our trace (step, forward, per-op ranges) is an NVTX range nsys recorded;
  - the same kernels, as many of each, and each kernel's mean time within 5 % (or 0.5 us for
    kernels shorter than 10 us) of ours.
Usage: python3 tests/test_nsys_capture.py [DIR...]   (default: traces); SKIP when no capture.
"""
import glob
import json
import os
import re
import sqlite3
import sys
from collections import defaultdict

STEP = re.compile(r"^Profiler?Step#(\d+)$")
REL_TOL, ABS_TOL_US, SHORT_US = 0.05, 0.5, 10.0


def nsys_ranges(db):
    """(name, start_ns, end_ns) of every NVTX push/pop range."""
    has_text_id = any(r[1] == "textId" for r in db.execute("PRAGMA table_info(NVTX_EVENTS)"))
    name = "COALESCE(e.text, s.value)" if has_text_id else "e.text"
    join = "LEFT JOIN StringIds s ON s.id = e.textId" if has_text_id else ""
    q = f"SELECT {name}, e.start, e.end FROM NVTX_EVENTS e {join} WHERE e.end IS NOT NULL AND e.eventType = 59"
    return [r for r in db.execute(q) if r[0] is not None]


def nsys_kernels(db):
    """kernel name -> list of durations in us."""
    out = defaultdict(list)
    q = ("SELECT s.value, k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k "
         "JOIN StringIds s ON s.id = k.shortName")
    for name, dur in db.execute(q):
        out[name].append(dur / 1e3)
    return out


def ours(path):
    with open(path) as f:
        d = json.load(f)
    events = d["traceEvents"] if isinstance(d, dict) else d
    ranges = [e["name"] for e in events if e.get("cat") == "cpu_op"]
    kernels = defaultdict(list)
    for e in events:
        if e.get("cat") == "kernel":
            kernels[e["name"]].append(float(e["dur"]))
    return ranges, kernels


def steps_of(names):
    return sorted(int(m.group(1)) for m in (STEP.match(n) for n in names) if m)


def check(sqlite_path):
    base = os.path.basename(sqlite_path)[: -len(".sqlite")]
    tag, _, suffix = base.partition(".")
    name = f"{os.path.basename(os.path.dirname(sqlite_path))}/{base}"
    json_path = os.path.join(os.path.dirname(sqlite_path), tag + ".json")
    if not os.path.exists(json_path):
        print(f"SKIP nsys {name}: no {tag}.json (our trace of the same run) beside it")
        return
    db = sqlite3.connect(sqlite_path)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    missing = {"NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_KERNEL", "StringIds"} - tables
    if missing:
        print(f"FAIL nsys {name}: the capture has no {', '.join(sorted(missing))}")
        return
    their_ranges = nsys_ranges(db)
    their_names = {r[0] for r in their_ranges}
    their_kernels = nsys_kernels(db)
    our_names, our_kernels = ours(json_path)

    steps, want = steps_of(their_names), steps_of(our_names)
    cold = "cold" in suffix.split(".")
    if cold:
        want = list(range(len(want)))
    if steps == want:
        print(f"PASS nsys {name}: capture holds exactly steps {steps}")
    else:
        print(f"FAIL nsys {name}: capture holds steps {steps}, expected {want}")

    lost = sorted(set(n for n in our_names if not STEP.match(n)) - their_names)
    if lost:
        print(f"FAIL nsys {name}: NVTX ranges of our trace missing from the capture: {lost}")
    else:
        print(f"PASS nsys {name}: all {len(set(our_names))} range names of our trace are NVTX ranges")

    if cold:  # step 0 runs kernels (module loading) the warm steps of our trace do not
        print(f"SKIP nsys {name} kernels: a cold capture is not the run our trace recorded")
        return
    bad = []
    for k in sorted(set(our_kernels) | set(their_kernels)):
        a, b = our_kernels.get(k, []), their_kernels.get(k, [])
        if len(a) != len(b):
            bad.append(f"{k}: {len(b)} launches in the capture, {len(a)} in ours")
            continue
        ma, mb = sum(a) / len(a), sum(b) / len(b)
        tol = REL_TOL * ma if ma >= SHORT_US else ABS_TOL_US
        if abs(ma - mb) > tol:
            bad.append(f"{k}: {mb:.2f} us in the capture, {ma:.2f} us in ours")
    if bad:
        print(f"FAIL nsys {name} kernels: " + "; ".join(bad[:4]))
    else:
        print(f"PASS nsys {name}: {len(our_kernels)} kernels, same counts, mean times agree")


def main(argv):
    dirs = argv[1:] or ["traces"]
    found = sorted(p for d in dirs for p in glob.glob(os.path.join(d, "*", "*.sqlite")))
    if not found:
        print(f"SKIP nsys_capture: no capture under {', '.join(dirs)} (tools/nsys_capture.sh STAGE makes one)")
        return 0
    for p in found:
        check(p)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
