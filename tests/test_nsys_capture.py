"""Nsight Systems captures (tools/nsys_capture.sh) against our own trace of the same stage and flags.

For every <stage>/<tag><suffix>.nsys.txt (the `nsys stats` text report tools/nsys_capture.sh writes
beside a .nsys-rep) whose <tag>.json is our CUPTI trace of a plain run with the same flags, in the
same directory:
  - the capture holds exactly the active steps: the same ProfileStep#N / ProfilerStep#N ranges
    as our trace, none of the wait and warm-up steps (a capture whose suffix holds ".cold",
    made with tools/nsys_capture.sh --cold, must hold steps 0..n-1 instead, step 0 included);
  - every range name of our trace (step, forward, per-op ranges) is an NVTX range nsys recorded;
  - the kernels nsys recorded are ours, every launch, in the same order, each within 5 % (or
    0.5 us for kernels shorter than 10 us) of the same launch in our trace (not for a cold
    capture: its step 0 runs work our warm trace did not record). A kernel that the next one
    overlaps (04's decode kernels: the down kernel starts early by programmatic dependent launch)
    is compared up to the next one's start, where nsys ends its bar; our trace keeps its end.
Each check expects a complete report: one the importer left incomplete (its header line
`# importer: ... report incomplete: ...`, an importer older than the recorder or than the CUDA
API the program calls) or that holds no data fails them all, and so does a capture without our
trace beside it. Exit status 1 when any check failed.
Usage: python3 tests/test_nsys_capture.py [DIR...]
  (default: traces/ and the fixtures' captures, tests/data/h200-*/nsys); one SKIP when there is
  no capture at all (no nsys, or none recorded).
The committed reports under docs/results/*/nsys record imports that stopped part way (see
docs/validation.md); they are not inputs of this test.
"""
import glob
import json
import os
import re
import sys

STEP = re.compile(r"^Profiler?Step#(\d+)$")
REL_TOL, ABS_TOL_US, SHORT_US = 0.05, 0.5, 10.0
RANGE_CATS = ("user_annotation", "cpu_op")
failed = 0


def fail(line):
    """Prints a FAIL line and counts it: the exit status is 1 when any check failed."""
    global failed
    failed += 1
    print("FAIL " + line)


def sections(path):
    """The report's header notes and, per `nsys stats` table, its rows as lists of cells."""
    notes, tables, cur, cols = [], {}, None, None
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^ \*\* .*\((\w+)\):$", line)
        if line.startswith("# ") and cur is None:
            notes.append(line[2:])
        elif m:
            cur, cols = m.group(1), None
            tables[cur] = []
        elif cur and cols is None and re.match(r"^ *-+( +-+)*$", line):
            # The dashes under the header give each column's width; the last column (a name)
            # may hold spaces, so cut by position rather than split.
            cols = [(m.start(), m.end()) for m in re.finditer(r"-+", line)]
            cols[-1] = (cols[-1][0], None)
        elif cur and cols and line.strip():
            tables[cur].append([line[a:b].strip() for a, b in cols])
        elif cur and cols and not line.strip() and tables[cur]:
            cur = None
    return notes, tables


def ours(path):
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    events = d["traceEvents"] if isinstance(d, dict) else d
    ranges = [e["name"] for e in events if e.get("cat") in RANGE_CATS]
    kernels = sorted((float(e["ts"]), e["name"], float(e["dur"])) for e in events if e.get("cat") == "kernel")
    # A kernel that the next one overlaps (the next was launched programmatically, sm_90's
    # programmatic dependent launch, and started before this one ended): nsys ends this one's
    # bar where the next starts, so that is the duration to compare. None for the others.
    cut = [nxt[0] - k[0] if nxt[0] < k[0] + k[2] else None for k, nxt in zip(kernels, kernels[1:])]
    return ranges, [(k[1], k[2], c) for k, c in zip(kernels, cut + [None])]


def steps_of(names):
    return sorted(int(m.group(1)) for m in (STEP.match(n) for n in names) if m)


def same_kernel(theirs, mine):
    """nsys cuts long names to 100 characters ending in an ellipsis, and writes template
    arguments as (int)32 where our trace (CUPTI's demangled name) writes 32."""
    def norm(s):
        return re.sub(r"\((?:unsigned |signed )?\w+\)(-?\d)", r"\1", s).replace(" ", "")
    t, m = norm(theirs), norm(mine)
    return m.startswith(t[:-1]) if t.endswith("\u2026") else t == m


def check(report):
    base = os.path.basename(report)[: -len(".nsys.txt")]
    tag, _, suffix = base.partition(".")
    where = os.path.dirname(report)
    name = f"{os.path.basename(where)}/{base}"
    json_path = os.path.join(where, tag + ".json")
    if not os.path.exists(json_path):
        fail(f"nsys {name}: no {tag}.json (our trace of the same flags) beside it: "
              f"./run STAGE FLAGS --out {where} writes it")
        return
    notes, tables = sections(report)
    incomplete = next((n for n in notes if n.startswith("importer:")), None)
    nvtx = tables.get("nvtx_sum") or tables.get("nvtxppsum")
    if incomplete or not nvtx:
        why = incomplete or "the report holds no NVTX data"
        fail(f"nsys {name}: not a complete report ({why}); a complete one needs an "
              "importer at least as new as the recorder")
        return
    # nvtx_sum: ... Instances (2) ... Range (last); older nsys prefix push/pop ranges with ':'
    their_names = {r[-1].lstrip(":") for r in nvtx}
    our_names, our_kernels = ours(json_path)

    steps, want = steps_of(their_names), steps_of(our_names)
    cold = "cold" in suffix.split(".")
    if cold:
        want = list(range(len(want)))
    if steps == want:
        print(f"PASS nsys {name}: capture holds exactly steps {steps}")
    else:
        fail(f"nsys {name}: capture holds steps {steps}, expected {want}")

    ops = set(n for n in our_names if not STEP.match(n))
    lost = sorted(ops - their_names)
    if lost:
        fail(f"nsys {name}: NVTX ranges of our trace missing from the capture: {lost}")
    else:
        print(f"PASS nsys {name}: NVTX ranges {sorted(ops)} as in our trace")
    if cold:  # step 0 runs kernels (module loading) the warm steps of our trace do not
        return

    trace = tables.get("cuda_gpu_trace") or tables.get("gputrace") or []
    # cuda_gpu_trace: Start (ns) first, Duration (ns) second, Name last; memsets and copies
    # have a Bytes column and no grid
    theirs = [(r[-1], float(r[1]) / 1e3) for r in trace if r[2] and r[3]]
    if len(theirs) != len(our_kernels):
        fail(f"nsys {name} kernels: {len(theirs)} launches in the capture, {len(our_kernels)} in ours")
        return
    bad, worst, worst_us, cuts = [], 0.0, 0.0, 0
    for i, ((tk, td), (ok, od, cut)) in enumerate(zip(theirs, our_kernels)):
        if not same_kernel(tk, ok):
            bad.append(f"launch {i}: {tk[:40]} in the capture, {ok[:40]} in ours")
            continue
        if cut is not None:
            od, cuts = cut, cuts + 1
        tol = REL_TOL * od if od >= SHORT_US else ABS_TOL_US
        worst, worst_us = max(worst, abs(td - od) / od), max(worst_us, abs(td - od))
        if abs(td - od) > tol:
            bad.append(f"launch {i} {ok[:40]}: {td:.3f} us in the capture, {od:.3f} us in ours")
    if bad:
        fail(f"nsys {name} kernels: " + "; ".join(bad[:4]))
    else:
        overlap = (f"; {cuts} of them overlapped by the next kernel, which nsys's bar ends at (its start in ours)"
                   if cuts else "")
        print(f"PASS nsys {name} kernels: all {len(theirs)} launches: same kernels in the same order, "
              f"durations differ from ours by at most {100 * worst:.1f} % ({worst_us:.3f} us){overlap}")


def main(argv):
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    dirs = argv[1:] or [os.path.join(repo, "traces")] + \
        sorted(glob.glob(os.path.join(repo, "tests", "data", "h200-*", "nsys")))
    found = sorted(p for d in dirs for p in glob.glob(os.path.join(d, "**", "*.nsys.txt"), recursive=True))
    if not found:
        shown = ", ".join(os.path.relpath(d, repo) for d in dirs)
        print(f"SKIP nsys_capture: no Nsight Systems capture under {shown} (tools/nsys_capture.sh "
              "STAGE records one where nsys is installed)")
        return 0
    for p in found:
        check(p)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
