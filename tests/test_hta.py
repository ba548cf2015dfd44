#!/usr/bin/env python3
"""A real client of our traces: HolisticTraceAnalysis (HTA) 0.5.0, Meta's analyser of PyTorch
profiler traces, reads ours beside PyTorch's own traces of the same programs, under pandas 2 and
under pandas 3.

Our traces: the fixtures of an H200 run. A folder tests/data/h200-*/ holding a FIXTURES file
(tools/h200_fixtures.sh makes it on a GPU) is read, the newest first, as tools/trace_upgrade.py
brings it up to the writer's rules of today (correlation ids, overlap lanes, record_shapes: the
same trace as the writer makes of its records, tests/test_trace_upgrade.py); without one, the
committed tests/data/h200-2026-11-30/, recorded before the current layout, is written again by
the current writer from the records it holds (tests/trace_replay.py), so that what is checked is
the trace a run makes today.

  - Side by side, for each program of which tests/data/reference/ holds PyTorch 2.11's trace
    (01 at size 64, 02's Linear, 03's MLP, 04's fused GeGLU against torch.compile's), HTA's
    profiler steps, temporal, kernel and idle-time breakdowns, kernel launch statistics, queue
    length, frequent kernel sequences under ProfilerStep and under the program's own range, and
    the critical path of the first step, on both traces, as a user runs them (HTA's defaults,
    its rounding to whole microseconds included): ours must fail nowhere PyTorch's succeeds,
    and give the same kind of result (the same steps, the same number of kernel-sequence
    patterns; empty where PyTorch's is empty). Where the two recorded different steps, each
    trace must give one pattern per step it kept. Where PyTorch's range has a user_annotation
    inside it that takes the GPU mirror (torch.compile's graph call) and ours has none, the
    sequences under the range differ by construction: both are shown, not compared.
    One exception, printed as a note: a call that fails on ours only under HTA's rounding (it
    passes in HTA's nanosecond mode), where every slice that rounding makes negative is of a
    kind PyTorch's trace of the same program holds under a microsecond too (memsets of 0.77 us),
    and where the test shows that which of them goes negative is a matter of where the
    nanoseconds fall: our trace with every timestamp a fraction of a microsecond later passes,
    and PyTorch's, moved a fraction later, fails the same call the same way.
  - The traces without a PyTorch counterpart (01's addmm, 02's transpose_copy, 04's graph and
    decode rungs): every call that succeeds on all of PyTorch's traces must succeed on ours.
  - Each trace alone, in HTA's nanosecond mode (HTA_DISABLE_NS_ROUNDING=1: the durations exact):
    HTA's per-kernel total and count match the GPU rows of our own table (<tag>.txt: Self CUDA
    non-zero, CPU time zero), within the table's rounding; copies and memsets are memory work;
    every piece of GPU work is linked to the call that launched it (correlation ids).
  - The synthetic step of tests/test_trace.c: HTA's breakdown equals the records fed in.
  - The chapters' run as committed (docs/results/h200/, traces and nsys): every trace
    of ours loads and gives a kernel breakdown, as it is.

pandas: the checks run under the pandas python3 imports, then again under the other major
version where it is installed beside it as a pip --target folder, .py/pandas2 or .py/pandas3
(python3 -m pip install --target .py/pandas3 'pandas>=3,<4'; .ci/run installs both). Without it
the checks of that version are SKIPs that name it. HTA 0.5.0 narrows the correlation column to
the smallest integer type that holds the ids, then stores row numbers in a column made from it:
under pandas 3 a trace whose ids all lie below 128 (32768) and that holds more rows than that
does not load. PyTorch's traces of these programs stay below one of the limits; our writer adds
32768 to ids that all lie below it, and every check runs HTA as it is. A trace of ours within
reach of that failure fails its check, under either pandas.

Without HTA installed every check is a SKIP that says so, and without the other pandas its
checks are; under CI (CI=true), whose setup installs both (.ci/run), either missing is a FAIL,
and so, anywhere, is an HTA that is installed but does not import.

One line per check: PASS name, FAIL name: why, SKIP name: why; 'note:' lines explain. Exit
status 1 on any FAIL. --table prints the side by side as a Markdown table instead (both pandas).
"""
import glob
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import trace_replay  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "tools"))
import trace_upgrade  # noqa: E402

COMMITTED = os.path.join(ROOT, "tests", "data", "h200-2026-11-30")
CHAPTERS_RUN = os.path.join(ROOT, "docs", "results", "h200")
REFERENCE = os.path.join(ROOT, "tests", "data", "reference")
TEST_TRACE = os.path.join(ROOT, "bin", "tests", "test_trace")
CHILD_FLAG = "--under-other-pandas"

# (label, PyTorch's trace, its range, our trace, our range)
PAIRS = [
    ("01 matmul + add, 64", "torch_01_64_bf16_cold_eager", "matmul_add",
     "01_matmul_add/64_bf16_cold_eager", "matmul_add"),
    ("02 Linear, 1024x32x64", "torch_02_linear_1024x32x64", "linear",
     "02_linear/1024x32x64_bf16_cold_epilogue", "linear_fwd"),
    ("03 GeGLU MLP, article shape", "torch_03_mlp_article_eager", "mlp_fwd",
     "03_simple_mlp/64x128_768x3072_bf16_cold_eager", "mlp_fwd"),
    ("04 fused GeGLU vs torch.compile", "torch_04_mlp_article_compile", "mlp_fwd",
     "04_fused_mlp/64x128_768x3072_bf16_cold_fused_geglu", "mlp_fwd"),
]
UNPAIRED = [
    "01_matmul_add/64_bf16_cold_addmm",                # a Memcpy DtoD per step
    "02_linear/1024x32x64_bf16_cold_transpose_copy",  # three kernels, one via cuLaunchKernelEx
    "04_fused_mlp/1x8_768x3072_bf16_cold_graph",      # kernels from a CUDA graph
    "04_fused_mlp/1x8_768x3072_bf16_cold_decode",     # a programmatic dependent launch in a graph
]
ALONE = [PAIRS[0][3], UNPAIRED[0], UNPAIRED[1], PAIRS[2][3], UNPAIRED[2], UNPAIRED[3]]

# The GPU work of tests/test_trace.c's synthetic step, as fed in: name -> (count, total us).
# The warm-up kernel launched before the recording window must not appear.
HOSTILE_NAME = "add<\"quoted\", back\\slash, new\nline, tab\t, ctrl\x01>"
SYNTHETIC = {
    "gemm_kernel(float const*, float const*, float*, int)": (1, 40.0),
    HOSTILE_NAME: (1, 10.0),
    "Memcpy DtoD (Device -> Device)": (1, 6.0),
    "Memset (Device)": (1, 1.0),
}

failed = False


def report(name, why=None, skip=None):
    """One line per check, whatever the message holds (none with --table)."""
    global failed
    why = " ".join(why.split()) if why is not None else None
    if why is not None and skip is None:
        failed = True
    if "--table" in sys.argv:
        return
    if skip is not None:
        print(f"SKIP {name}: {skip}")
    elif why is None:
        print(f"PASS {name}")
    else:
        print(f"FAIL {name}: {why}")
    sys.stdout.flush()


def short(path):
    return path.replace("/", "_")


# ---- the fixtures ---------------------------------------------------------------------------

def fixture_folder():
    """The newest fixture folder made by tools/h200_fixtures.sh, or None."""
    made = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "h200-*", "FIXTURES")))
    return os.path.dirname(made[-1]) if made else None


class Ours:
    """Our traces, as the current writer lays them out: a fresh fixture folder as it is, or the
    committed records written again (into a temporary folder, with their tables)."""

    def __init__(self, scratch):
        self.fresh = fixture_folder()
        self.scratch = scratch
        self.source = self.fresh or COMMITTED

    def describe(self):
        if self.fresh:
            return (f"the fixtures in {os.path.relpath(self.fresh, ROOT)}, as tools/trace_upgrade.py "
                    "rewrites them")
        return (f"the records of {os.path.relpath(COMMITTED, ROOT)} written again by the current "
                "writer")

    def json(self, tag):
        recorded = os.path.join(self.source, tag + ".json")
        out = os.path.join(self.scratch, short(tag))
        if not os.path.exists(out + ".json"):
            if self.fresh:
                trace_upgrade.upgrade_file(recorded, out + ".json")
            else:
                trace_replay.replay(recorded, out)
        return out + ".json"

    def table(self, tag):
        return os.path.join(self.source, tag + ".txt")


# ---- our table ------------------------------------------------------------------------------

UNIT_US = {"us": 1.0, "ms": 1e3, "s": 1e6}


def parse_time(cell):
    """'5.792us' -> (5.792, 0.001): the value in us and the resolution of the printed figure."""
    m = re.fullmatch(r"(\d+\.(\d+))(us|ms|s)", cell)
    if not m:
        raise ValueError(f"not a time: {cell!r}")
    scale = UNIT_US[m.group(3)]
    return float(m.group(1)) * scale, 10.0 ** -len(m.group(2)) * scale


def table_gpu_rows(path):
    """The GPU rows of our key_averages-style table: name -> (calls, Self CUDA, resolution).
    Columns are laid out by the first dashed line: the name right-aligned in its width, then
    ten cells of twelve, two spaces apart. Names of 52 characters or more end in '...'."""
    with open(path) as f:
        lines = f.read().splitlines()
    name_width = len(lines[0].split("  ")[0])
    rows = {}
    for line in lines[3:]:
        if line.startswith("---"):
            break
        name = line[:name_width].strip()
        cells = line[name_width:].split()
        if len(cells) != 10:
            raise ValueError(f"{path}: a row of {len(cells)} cells: {line!r}")
        self_cpu, _ = parse_time(cells[1])
        cpu_total, _ = parse_time(cells[3])
        self_cuda, resolution = parse_time(cells[5])
        if self_cuda > 0 and self_cpu == 0 and cpu_total == 0:
            rows[name] = (int(cells[9]), self_cuda, resolution)
    return rows


def table_row_for(rows, kernel):
    if kernel in rows:
        return kernel, rows[kernel]
    for name, row in rows.items():  # our table shortens long names as PyTorch's does
        if name.endswith("...") and kernel.startswith(name[:-3]):
            return name, row
    return None, None


# ---- HTA ------------------------------------------------------------------------------------

def analysis_of(json_path, rank_dir, nanoseconds, include_last_step=False):
    """HTA's TraceAnalysis of one trace as rank 0, copied alone into rank_dir (HTA reads a
    folder as one trace per rank, and reads the file again to overlay kernel sequences: the
    folder must outlive the calls); nanoseconds: HTA_DISABLE_NS_ROUNDING=1, read at loading."""
    from hta.trace_analysis import TraceAnalysis

    saved = os.environ.pop("HTA_DISABLE_NS_ROUNDING", None)
    if nanoseconds:
        os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    try:
        shutil.copy(json_path, rank_dir)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return TraceAnalysis(trace_dir=rank_dir, include_last_profiler_step=include_last_step)
    finally:
        os.environ.pop("HTA_DISABLE_NS_ROUNDING", None)
        if saved is not None:
            os.environ["HTA_DISABLE_NS_ROUNDING"] = saved


def kernel_breakdown(analysis):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, kernels = analysis.get_gpu_kernel_breakdown(
            visualize=False, duration_ratio=1.0, num_kernels=1 << 30, include_memory_kernels=True)
    breakdown = {}
    for _, r in kernels.iterrows():
        count = round(r["sum (us)"] / r["mean (us)"]) if r["mean (us)"] else 0
        breakdown[r["name"]] = (count, float(r["sum (us)"]), r["kernel_type"])
    return breakdown


def queue_rows(analysis):
    q = analysis.get_queue_length_summary()
    return None if q is None else len(q)


# The calls of the side by side: name -> fn(analysis, output folder, range) -> a short value.
CALLS = [
    ("profiler steps", lambda a, o, r: [int(s) for s in a.get_profiler_steps()]),
    ("temporal breakdown", lambda a, o, r: len(a.get_temporal_breakdown(visualize=False))),
    ("kernel breakdown", lambda a, o, r: len(a.get_gpu_kernel_breakdown(visualize=False)[1])),
    ("idle time breakdown", lambda a, o, r: len(a.get_idle_time_breakdown(visualize=False)[0])),
    ("kernel launch stats", lambda a, o, r: sum(
        len(df) for df in a.get_cuda_kernel_launch_stats(visualize=False).values())),
    ("queue length", lambda a, o, r: queue_rows(a)),
    ("sequences under ProfilerStep", lambda a, o, r: len(a.get_frequent_cuda_kernel_sequences(
        operator_name="ProfilerStep", output_dir=o, min_pattern_len=2))),
    ("sequences under the range", lambda a, o, r: len(a.get_frequent_cuda_kernel_sequences(
        operator_name=r, output_dir=o, min_pattern_len=2))),
    ("critical path", lambda a, o, r: bool(a.critical_path_analysis(
        rank=0, annotation="ProfilerStep", instance_id=0)[1])),
    ("aten op kernels and delay", lambda a, o, r: sum(
        len(df) for df in a.get_aten_op_kernels_and_delay().values())),
]
# Calls that look for what only PyTorch writes: call -> (what the trace must lack, why not
# applicable). HTA's aten op statistics start from the slices named aten::*; our ops are named
# after the program's ranges (gemm, gelu), so it finds none and raises on the empty result.
NOT_APPLICABLE = {
    "aten op kernels and delay": ("aten::", "no aten:: ops: ours are named after the program's ranges"),
}


def not_applicable(call, json_path):
    """Why `call` does not apply to the trace, or None."""
    if call not in NOT_APPLICABLE:
        return None
    prefix, why = NOT_APPLICABLE[call]
    with open(json_path) as f:
        names = {e.get("name", "") for e in json.load(f)["traceEvents"]}
    return None if any(n.startswith(prefix) for n in names) else why


def failure(e):
    return f"{type(e).__name__}: {' '.join(str(e).split())[:90]}"


def run_calls(json_path, rng, nanoseconds=False):
    """{call: ("ok", value) or ("error", why)}; a trace that does not load fails every call."""
    with tempfile.TemporaryDirectory(prefix="test_hta_") as rank_dir, \
            tempfile.TemporaryDirectory(prefix="test_hta_out_") as out:
        try:
            analysis = analysis_of(json_path, rank_dir, nanoseconds)
        except Exception as e:  # HTA raising on a trace is what the side by side looks for
            return {name: ("error", "does not load: " + failure(e)) for name, _ in CALLS}
        results = {}
        for name, fn in CALLS:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    results[name] = ("ok", fn(analysis, out, rng))
            except Exception as e:
                results[name] = ("error", failure(e))
    return results


def sub_microsecond_categories(json_path, rounded_negative):
    """The categories of the trace's slices that HTA's rounding (start up, end down, to whole us)
    makes negative (rounded_negative), or of all its slices under 1 us."""
    with open(json_path) as f:
        events = json.load(f)["traceEvents"]
    found = {}
    for e in events:
        if e.get("ph") != "X" or not isinstance(e.get("ts"), (int, float)):
            continue
        short_slice = math.floor(e["ts"] + e["dur"]) < math.ceil(e["ts"]) if rounded_negative \
            else e["dur"] < 1.0
        if short_slice:
            found.setdefault(e.get("cat"), set()).add(e["name"][:30])
    return found


def shifted(json_path, shift_us, folder):
    """A copy of the trace with every timestamp later by shift_us: the same program recorded a
    fraction of a microsecond later. Only where the nanoseconds fall changes."""
    with open(json_path) as f:
        trace = json.load(f)
    for e in trace["traceEvents"]:
        if isinstance(e.get("ts"), (int, float)):
            e["ts"] = round(e["ts"] + shift_us, 3)
    path = os.path.join(folder, "shifted_%d_%s" % (round(shift_us * 1000), os.path.basename(json_path)))
    with open(path, "w") as f:
        json.dump(trace, f)
    return path


SHIFTS_US = [k / 10 for k in range(1, 10)]


def first_shift(json_path, rng, call, want_ok):
    """The first shift (SHIFTS_US) under which `call` on the shifted trace succeeds (want_ok) or
    fails, under HTA's rounding; None when none does."""
    with tempfile.TemporaryDirectory(prefix="test_hta_shift_") as folder:
        for shift in SHIFTS_US:
            if (run_calls(shifted(json_path, shift, folder), rng)[call][0] == "ok") == want_ok:
                return shift
    return None


def rounding_excuse(ours_json, rng, call, references, ref_range=None):
    """The note that excuses a failure of `call` on our trace, or None. The failure must be HTA's
    rounding and nothing of our trace's making, shown three ways: the call passes on ours in
    HTA's nanosecond mode; every kind of slice rounding makes negative in ours is one PyTorch's
    traces (`references`) hold under a microsecond too; and it is a matter of where the
    nanoseconds fall: our trace recorded a fraction of a microsecond later passes, and one of
    PyTorch's recorded a fraction later fails the same way."""
    if run_calls(ours_json, rng, nanoseconds=True)[call][0] != "ok":
        return None
    negative = sub_microsecond_categories(ours_json, rounded_negative=True)
    theirs = set()
    for ref in references:
        theirs |= set(sub_microsecond_categories(ref, rounded_negative=False))
    if not negative or not set(negative) <= theirs:
        return None
    ours_passes = first_shift(ours_json, rng, call, want_ok=True)
    if ours_passes is None:
        return None
    for ref in references:
        theirs_fails = first_shift(ref, ref_range or rng, call, want_ok=False)
        if theirs_fails is not None:
            break
    else:
        return None
    slices = "; ".join(f"{c}: {', '.join(sorted(n))}" for c, n in sorted(negative.items()))
    return (f"fails under HTA's rounding to whole microseconds, passes in nanoseconds; rounded "
            f"below zero: {slices}; ours {ours_passes:.1f} us later passes, PyTorch's "
            f"{os.path.basename(ref)} {theirs_fails:.1f} us later fails the same way")


def range_mirrored(json_path, rng):
    with open(json_path) as f:
        return any(e.get("cat") == "gpu_user_annotation" and e.get("name") == rng
                   for e in json.load(f)["traceEvents"])


def same_kind(call, theirs, ours):
    """None when our value is the same kind of result as PyTorch's, else why not."""
    if call == "profiler steps":
        return None if theirs == ours else f"steps {ours}, PyTorch's {theirs}"
    if call in ("queue length",):
        return None if (theirs is None) == (ours is None) else f"{ours} rows, PyTorch's {theirs}"
    if call == "critical path":
        return None if theirs == ours else f"{ours}, PyTorch's {theirs}"
    if call.startswith("sequences"):
        return None if theirs == ours else f"{ours} patterns, PyTorch's {theirs}"
    return None if (theirs > 0) == (ours > 0) else f"{ours} rows, PyTorch's {theirs}"


def our_trace(ours, tag, check):
    """Our trace of `tag` as today's writer writes it, or None, said as check's failure."""
    try:
        return ours.json(tag)
    except trace_replay.ReplayError as e:
        report(check, f"our trace could not be written again: {e}")
        return None


def side_by_side(ours, pandas_major, notes):
    """The pairs' results: [(label, call, PyTorch's, ours, verdict)] and the checks."""
    rows = []
    for label, ref_name, ref_range, tag, our_range in PAIRS:
        ref_json = os.path.join(REFERENCE, ref_name + ".json")
        check = f"hta_side_by_side_{tag.split('/')[0]}_pandas{pandas_major}"
        our_json = our_trace(ours, tag, check)
        if our_json is None:
            continue
        theirs, mine = run_calls(ref_json, ref_range), run_calls(our_json, our_range)
        steps = [r["profiler steps"][1] if r["profiler steps"][0] == "ok" else None
                 for r in (theirs, mine)]
        # a fixture of today records PyTorch's schedule; a committed one may have recorded more
        other_steps = None not in steps and steps[0] != steps[1] and not ours.fresh
        problems = []
        for call, _ in CALLS:
            (t_kind, t_val), (o_kind, o_val) = theirs[call], mine[call]
            verdict = "same"
            if t_kind == "ok" and o_kind != "ok":
                why_not = not_applicable(call, our_json)
                excuse = None if why_not else \
                    rounding_excuse(our_json, our_range, call, [ref_json], ref_range)
                if why_not:
                    verdict = "not applicable: " + why_not
                elif excuse:
                    notes.append(f"{label}, {call}: {excuse}")
                    verdict = "ours fails under HTA's rounding only (note)"
                else:
                    verdict = "FAIL: PyTorch's succeeds, ours fails"
                    problems.append(f"{call}: PyTorch's gives {t_val}, ours raises {o_val}")
            elif t_kind == "ok":
                why = same_kind(call, t_val, o_val)
                if call == "profiler steps" and other_steps:
                    notes.append(f"{label}: the two traces recorded different steps ({why})")
                    why, verdict = None, "different schedules (note)"
                if call == "sequences under ProfilerStep" and other_steps:
                    kept = (len(steps[0]), len(steps[1]))
                    why = None if (t_val, o_val) == kept else \
                        f"{o_val} patterns for {kept[1]} steps, PyTorch's {t_val} for {kept[0]}"
                    verdict = "one pattern per step" if why is None else verdict
                if call == "sequences under the range" and why and not range_mirrored(ref_json, ref_range) \
                        and range_mirrored(our_json, our_range):
                    notes.append(f"{label}: PyTorch's {ref_range} is not mirrored on the GPU (a "
                                 f"user_annotation inside it is) and ours is: HTA starts its "
                                 f"search at different ranges; {t_val} and {o_val} patterns")
                    why, verdict = None, "not compared (note)"
                if why:
                    verdict = "FAIL: " + why
                    problems.append(f"{call}: {why}")
            elif o_kind != "ok":
                verdict = "both fail"
            rows.append((label, call, t_val, o_val, verdict))
        report(check, "; ".join(problems[:3]) if problems else None)
    return rows


def unpaired(ours, pandas_major, notes):
    references = [os.path.join(REFERENCE, p[1] + ".json") for p in PAIRS]
    everywhere = None
    for (label, ref_name, ref_range, _, _), ref in zip(PAIRS, references):
        ok = {c for c, (kind, _) in run_calls(ref, ref_range).items() if kind == "ok"}
        everywhere = ok if everywhere is None else everywhere & ok
    for tag in UNPAIRED:
        check = f"hta_as_pytorch_{short(tag)}_pandas{pandas_major}"
        our_json = our_trace(ours, tag, check)
        if our_json is None:
            continue
        results = run_calls(our_json, "mlp_fwd")
        narrowed = narrowing_bug(our_json)
        problems = [narrowed] if narrowed else []
        for call in sorted(everywhere):
            kind, value = results[call]
            if kind == "ok" or not_applicable(call, our_json):
                continue
            excuse = rounding_excuse(our_json, "mlp_fwd", call, references)
            if excuse:
                notes.append(f"{tag}, {call}: {excuse}")
            else:
                problems.append(f"{call}: {value}")
        report(check, "; ".join(problems[:3]) if problems else None)


def check_alone(ours, tag):
    """Each trace alone, in nanoseconds: the breakdown against our table, the launch links."""
    names = [f"hta_{c}_{short(tag)}" for c in ("loads", "kernel_breakdown", "launch_links")]
    try:
        with tempfile.TemporaryDirectory(prefix="test_hta_") as rank_dir:
            analysis = analysis_of(ours.json(tag), rank_dir, nanoseconds=True, include_last_step=True)
            breakdown = kernel_breakdown(analysis)
    except Exception as e:  # HTA raising on our trace is the failure this check exists for
        report(names[0], failure(e))
        for n in names[1:]:
            report(n, skip="the trace did not load")
        return
    ranks = analysis.t.get_ranks()
    report(names[0], None if ranks == [0] and breakdown else f"ranks {ranks}, {len(breakdown)} kernel names")

    ours_rows = table_gpu_rows(ours.table(tag))
    problems, matched = [], set()
    for kernel, (count, total, kind) in sorted(breakdown.items()):
        row_name, row = table_row_for(ours_rows, kernel)
        if row is None:
            problems.append(f"HTA's '{kernel[:60]}' is not a GPU row of our table")
            continue
        matched.add(row_name)
        calls, self_cuda, resolution = row
        if count != calls:
            problems.append(f"'{kernel[:60]}': HTA counts {count}, our table {calls}")
        if abs(total - self_cuda) > resolution / 2 + 1e-6 * max(1.0, self_cuda):
            problems.append(f"'{kernel[:60]}': HTA sums {total:.4f} us, our table {self_cuda:.3f} us")
        if (kind == "MEMORY") != kernel.startswith(("Memcpy", "Memset")):
            problems.append(f"'{kernel[:60]}': HTA's kernel type {kind}")
    for name in sorted(set(ours_rows) - matched):
        problems.append(f"our GPU row '{name[:60]}' is missing from HTA's breakdown")
    if not problems and not ours_rows:
        problems.append("no GPU rows in our table")
    report(names[1], "; ".join(problems[:4]) if problems else None)

    df = analysis.t.get_trace(0)
    gpu = df[df["stream"].ne(-1)]
    unlinked = int((gpu["index_correlation"] <= 0).sum())
    report(names[2], f"{unlinked} of {len(gpu)} GPU events not linked to a launch call"
           if unlinked or gpu.empty else None)


def check_synthetic():
    names = ["hta_loads_synthetic", "hta_kernel_breakdown_synthetic"]
    if not os.access(TEST_TRACE, os.X_OK):
        for n in names:
            report(n, skip="bin/tests/test_trace not built (make bin/tests/test_trace)")
        return
    with tempfile.TemporaryDirectory(prefix="test_hta_synthetic_") as keep:
        run = subprocess.run([TEST_TRACE], cwd=ROOT, env=dict(os.environ, TEST_TRACE_KEEP_DIR=keep),
                             capture_output=True, text=True)
        json_path = os.path.join(keep, "synthetic_step.json")
        if "PASS test_keep_synthetic_trace" not in run.stdout or not os.path.exists(json_path):
            report(names[0], f"bin/tests/test_trace did not write the synthetic trace "
                             f"(status {run.returncode}): {run.stdout[-300:]!r}")
            report(names[1], skip="no synthetic trace")
            return
        try:
            with tempfile.TemporaryDirectory(prefix="test_hta_") as rank_dir:
                breakdown = kernel_breakdown(analysis_of(json_path, rank_dir, nanoseconds=True,
                                                         include_last_step=True))
        except Exception as e:
            report(names[0], failure(e))
            report(names[1], skip="the trace did not load")
            return
    report(names[0])
    problems = []
    for name, (count, total) in SYNTHETIC.items():
        got = breakdown.get(name)
        if got is None:
            problems.append(f"no '{name[:40]!r}' in HTA's breakdown")
        elif got[0] != count or abs(got[1] - total) > 1e-6:
            problems.append(f"{name[:40]!r}: HTA {got[0]} x, {got[1]:.4f} us; fed {count} x, {total:.3f} us")
    for name in sorted(set(breakdown) - set(SYNTHETIC)):
        problems.append(f"unexpected {name[:40]!r} in HTA's breakdown")
    report(names[1], "; ".join(problems[:4]) if problems else None)


def narrowing_bug(json_path):
    """Why HTA 0.5.0 under pandas 3 cannot load the trace (see the module's docstring), or None
    when the trace is outside that bug's reach."""
    with open(json_path) as f:
        events = json.load(f)["traceEvents"]
    ids = [e["args"]["correlation"] for e in events if "correlation" in e.get("args", {})]
    for limit, width in ((128, "int8"), (32768, "int16")):
        if ids and max(ids) < limit < len(events):
            return (f"every correlation id below {limit} and {len(events)} events: HTA 0.5.0 "
                    f"narrows the column to {width} and cannot store row numbers in it under "
                    "pandas 3")
    return None


def check_chapters_run(pandas_major):
    """Every trace of ours that the chapters' run committed loads in HTA as it is."""
    name = f"hta_loads_chapters_run_pandas{pandas_major}"
    paths = sorted(p for p in glob.glob(os.path.join(CHAPTERS_RUN, "**", "*.json"), recursive=True)
                   if os.sep + "reference" + os.sep not in p)
    if not paths:
        report(name, skip=f"{os.path.relpath(CHAPTERS_RUN, ROOT)} holds no traces")
        return
    problems = []
    for path in paths:
        where = os.path.relpath(path, CHAPTERS_RUN)
        narrowed = narrowing_bug(path)
        if narrowed:
            problems.append(f"{where}: {narrowed}")
        try:
            with tempfile.TemporaryDirectory(prefix="test_hta_run_") as rank_dir:
                if not kernel_breakdown(analysis_of(path, rank_dir, nanoseconds=False)):
                    problems.append(f"{where}: no kernels in HTA's breakdown")
        except Exception as e:  # HTA raising on a committed trace is the failure checked for
            problems.append(f"{where}: {failure(e)}")
    report(name, "; ".join(problems[:3]) if problems else None)


# ---- under both pandas ----------------------------------------------------------------------

def other_pandas(major):
    """The pip --target folder of the other major version of pandas, or None."""
    other = 3 if major < 3 else 2
    folder = os.path.join(ROOT, ".py", f"pandas{other}")
    return other, folder if os.path.exists(os.path.join(folder, "pandas", "__init__.py")) else None


def all_check_names(pandas_major):
    names = [f"hta_side_by_side_{p[3].split('/')[0]}_pandas{pandas_major}" for p in PAIRS]
    names += [f"hta_as_pytorch_{short(t)}_pandas{pandas_major}" for t in UNPAIRED]
    names.append(f"hta_loads_chapters_run_pandas{pandas_major}")
    return names


def run_under_this_pandas(table):
    """Every check under the pandas this interpreter imports; the side by side rows."""
    import logging

    import pandas
    import hta
    import hta.trace_analysis  # noqa: F401  (imports psutil, pandas, plotly)
    logging.getLogger("hta").setLevel(logging.CRITICAL)
    major = int(pandas.__version__.split(".")[0])
    notes = []
    with tempfile.TemporaryDirectory(prefix="test_hta_ours_") as scratch:
        ours = Ours(scratch)
        if not table:
            print(f"note: HolisticTraceAnalysis {hta.__version__}, pandas {pandas.__version__}; "
                  f"ours: {ours.describe()}")
        rows = side_by_side(ours, major, notes)
        if table:
            return major, pandas.__version__, rows
        unpaired(ours, major, notes)
        for note in notes:
            print(f"note: pandas {major}: {note}")
        for tag in ALONE:
            check_alone(ours, tag)
        check_synthetic()
        check_chapters_run(major)
    return major, pandas.__version__, rows


def markdown(results):
    """The side by side as one Markdown table: a row per program and call, a column pair per
    pandas."""
    versions = [v for _, v, _ in results]
    head = "| program | HTA call | " + " | ".join(f"PyTorch's (pandas {v}) | ours (pandas {v})"
                                               for v in versions) + " |"
    lines = [head, "|" + "---|" * (2 + 2 * len(versions))]

    def cell(value):
        text = str(value)
        return text if len(text) < 48 else text[:45] + "..."
    for i, (label, call, _, _, _) in enumerate(results[0][2]):
        cells = []
        for _, _, rows in results:
            _, _, theirs, mine, _ = rows[i]
            cells += [cell(theirs), cell(mine)]
        lines.append(f"| {label} | {call} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def promised():
    """True where the environment promises HTA and both pandas: under CI (CI=true), whose setup
    (.ci/run) installs them, their absence is a failure of that setup, not a reason to skip."""
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


def hta_absent():
    """True only when no module hta can be found at all (not installed); an installed HTA that
    fails to import is broken, and that is a failure wherever it happens."""
    import importlib.util
    try:
        return importlib.util.find_spec("hta") is None
    except (ImportError, ValueError):
        return False


def main(argv):
    global failed
    table = "--table" in argv
    child = CHILD_FLAG in argv
    try:
        import hta.trace_analysis  # noqa: F401
        import pandas
    except Exception as e:  # ImportError, or a broken install
        why = f"HolisticTraceAnalysis not usable ({type(e).__name__}: {' '.join(str(e).split())[:200]})"
        if hta_absent() and not promised():
            why += "; in the project's venv: .venv/bin/pip install HolisticTraceAnalysis==0.5.0 psutil 'pandas<3'"
            for major in (2, 3):
                for n in all_check_names(major):
                    report(n, skip=why)
            return 0
        if hta_absent():
            why += "; this is CI (CI=true), whose setup (.ci/run) installs it"
        else:
            why += ": it is installed, but does not import"
        report("hta_usable", why)
        return 1
    major = int(pandas.__version__.split(".")[0])
    result = run_under_this_pandas(table)
    if child:
        if table:
            print(json.dumps(result))
        return 1 if failed else 0
    results = [result]
    other, folder = other_pandas(major)
    if folder is None:
        why = f"pandas {other} not installed beside pandas {major} (python3 -m pip install " \
              f"--target .py/pandas{other} 'pandas>={other},<{other + 1}')"
        if promised():
            report(f"hta_under_pandas{other}", why + "; this is CI (CI=true), whose setup (.ci/run) installs it")
        else:
            for n in all_check_names(other):
                report(n, skip=why)
    else:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [folder] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
        run = subprocess.run([sys.executable, os.path.abspath(__file__), CHILD_FLAG] +
                             (["--table"] if table else []), env=env, capture_output=True, text=True)
        if table:
            results.append(tuple(json.loads(run.stdout.strip().splitlines()[-1])))
        else:
            sys.stdout.write(run.stdout)
            if run.returncode != 0 and "FAIL " not in run.stdout:
                report(f"hta_under_pandas{other}", f"exit status {run.returncode}: {run.stderr[-300:]}")
            elif run.returncode != 0:
                failed = True
    if table:
        results.sort(key=lambda r: r[0])
        print(markdown(results))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
