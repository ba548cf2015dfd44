#!/usr/bin/env python3
"""A real client of our traces: HolisticTraceAnalysis (HTA), Meta's analyser of PyTorch profiler
traces, loads them and its kernel breakdown must agree with ours.

  - Traces from the H200 run (copies in tests/data/h200-2026-11-30/, from
    docs/results/h200-2026-11-30/): HTA's per-kernel total and count must match the GPU rows of
    our own table (<tag>.txt: Self CUDA non-zero, CPU time zero), within the table's rounding;
    HTA must class copies and memsets as memory work, and link every piece of GPU work to the
    CPU call that launched it (by correlation id, as in PyTorch's traces).
  - The synthetic step of tests/test_trace.c (bin/tests/test_trace writes it when
    TEST_TRACE_KEEP_DIR is set): HTA's breakdown must match the records the test feeds in.

  - Traces in the current schema (ranges as user_annotation with gpu_user_annotation mirrors,
    ProfilerStep#N steps, Kineto's API set), checked with HTA's default rounding to whole
    microseconds: get_profiler_steps() lists the recorded steps; the temporal, kernel and
    user-annotation breakdowns (CPU and GPU side) are non-empty; the frequent CUDA kernel
    sequences under the first step and the critical path of the first step run. A check that
    fails there only because of sub-microsecond slices (which HTA's rounding makes negative)
    must pass in HTA's nanosecond mode, and a note line names the slices. The critical path
    SKIPs on traces whose every launch is a cudaGraphLaunch (HTA 0.5.0 sees no launch there).

One line per check: PASS name, FAIL name: why, SKIP name: why (everything SKIPs when HTA is not
installed: python3 -m pip install HolisticTraceAnalysis psutil). Exit status 1 on any FAIL.

What HTA 0.5.0 needs, and how this test provides it:
  - One trace per rank in a directory: each trace is copied alone into a temporary directory.
    A trace without "distributedInfo" is taken as rank 0 (PyTorch writes that key only under
    torch.distributed; its single-process traces lack it too).
  - HTA_DISABLE_NS_ROUNDING=1: by default HTA rounds every float timestamp to whole
    microseconds (start up, end down), which turns a 0.928 us kernel into 0 or -1 us. PyTorch's
    traces carry the same nanosecond decimals as ours, so this is HTA's choice, not our format.
  - psutil, which HTA imports but does not declare as a dependency.
  - With pandas 3, HTA 0.5.0 fails on any trace whose correlation ids all fit in int8 (below
    128) and that holds more than 128 events: it narrows the column to int8, then stores event
    indices in a column derived from it. pandas 2 only warns. With pandas 3 this test widens
    the column first and says so on a 'note:' line.
"""
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "h200-2026-11-30")
H200_TRACES = [
    "01_matmul_add/64_bf16_cold_eager",
    "01_matmul_add/64_bf16_cold_addmm",       # a Memcpy DtoD per step
    "02_linear/1024x32x64_bf16_cold_transpose_copy",  # a kernel launched by cuLaunchKernelEx
    "03_simple_mlp/64x128_768x3072_bf16_cold_eager",  # memsets; more than 128 events
    "04_fused_mlp/1x8_768x3072_bf16_cold_graph",      # kernels from a CUDA graph; a long name
    "04_fused_mlp/1x8_768x3072_bf16_cold_decode",     # a programmatic dependent launch in a graph
]
TEST_TRACE = os.path.join(ROOT, "bin", "tests", "test_trace")

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
    """One line per check, whatever the message holds."""
    global failed
    why = " ".join(why.split()) if why is not None else None
    if skip is not None:
        print(f"SKIP {name}: {skip}")
    elif why is None:
        print(f"PASS {name}")
    else:
        failed = True
        print(f"FAIL {name}: {why}")
    sys.stdout.flush()


def check_names(tag):
    return [f"hta_loads_{tag}", f"hta_kernel_breakdown_{tag}", f"hta_launch_links_{tag}"]


def short(path):
    return path.replace("/", "_")


# ---- our table ----------------------------------------------------------------------------

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


# ---- HTA ----------------------------------------------------------------------------------

def load(json_path):
    """Loads one trace with HTA as rank 0. Returns (analysis, per-kernel dict, memory names)."""
    from hta.trace_analysis import TraceAnalysis

    with tempfile.TemporaryDirectory(prefix="test_hta_") as rank_dir:
        shutil.copy(json_path, rank_dir)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # By default HTA drops the GPU work of the last ProfilerStep; our table counts it.
            analysis = TraceAnalysis(trace_dir=rank_dir, include_last_profiler_step=True)
            _, kernels = analysis.get_gpu_kernel_breakdown(
                visualize=False, duration_ratio=1.0, num_kernels=1 << 30,
                include_memory_kernels=True)
    breakdown = {}
    for _, r in kernels.iterrows():
        count = round(r["sum (us)"] / r["mean (us)"]) if r["mean (us)"] else 0
        breakdown[r["name"]] = (count, float(r["sum (us)"]), r["kernel_type"])
    return analysis, breakdown


def gpu_events(analysis):
    df = analysis.t.get_trace(0)
    return df[df["stream"].ne(-1)]


def check_h200_trace(path):
    tag = short(path)
    n_load, n_breakdown, n_links = check_names(tag)
    json_path = os.path.join(DATA, path + ".json")
    try:
        analysis, breakdown = load(json_path)
    except Exception as e:  # HTA raising on our trace is the failure this test exists for
        report(n_load, f"{type(e).__name__}: {str(e)[:300]}")
        report(n_breakdown, skip="the trace did not load")
        report(n_links, skip="the trace did not load")
        return
    ranks = analysis.t.get_ranks()
    if ranks != [0] or not breakdown:
        report(n_load, f"ranks {ranks}, {len(breakdown)} kernel names")
    else:
        report(n_load)

    ours = table_gpu_rows(os.path.join(DATA, path + ".txt"))
    problems = []
    matched = set()
    for kernel, (count, total, kind) in sorted(breakdown.items()):
        row_name, row = table_row_for(ours, kernel)
        if row is None:
            problems.append(f"HTA's '{kernel[:60]}' is not a GPU row of our table")
            continue
        matched.add(row_name)
        calls, self_cuda, resolution = row
        if count != calls:
            problems.append(f"'{kernel[:60]}': HTA counts {count}, our table {calls}")
        if abs(total - self_cuda) > resolution / 2 + 1e-6 * max(1.0, self_cuda):
            problems.append(f"'{kernel[:60]}': HTA sums {total:.4f} us, our table "
                            f"{self_cuda:.3f} us")
        memory = kernel.startswith(("Memcpy", "Memset"))
        if (kind == "MEMORY") != memory:
            problems.append(f"'{kernel[:60]}': HTA's kernel type {kind}")
    for name in sorted(set(ours) - matched):
        problems.append(f"our GPU row '{name[:60]}' is missing from HTA's breakdown")
    if not problems and not ours:
        problems.append("no GPU rows in our table")
    report(n_breakdown, "; ".join(problems[:4]) if problems else None)

    gpu = gpu_events(analysis)
    unlinked = int((gpu["index_correlation"] <= 0).sum())
    report(n_links, f"{unlinked} of {len(gpu)} GPU events not linked to a launch call"
           if unlinked or gpu.empty else None)


def check_synthetic():
    names = ["hta_loads_synthetic", "hta_kernel_breakdown_synthetic"]
    if not os.access(TEST_TRACE, os.X_OK):
        for n in names:
            report(n, skip="bin/tests/test_trace not built (make bin/tests/test_trace)")
        return
    with tempfile.TemporaryDirectory(prefix="test_hta_synthetic_") as keep:
        env = dict(os.environ, TEST_TRACE_KEEP_DIR=keep)
        run = subprocess.run([TEST_TRACE], cwd=ROOT, env=env, capture_output=True, text=True)
        json_path = os.path.join(keep, "synthetic_step.json")
        if "PASS test_keep_synthetic_trace" not in run.stdout or not os.path.exists(json_path):
            report(names[0], f"bin/tests/test_trace did not write the synthetic trace "
                             f"(status {run.returncode}): {run.stdout[-300:]!r}")
            report(names[1], skip="no synthetic trace")
            return
        try:
            _, breakdown = load(json_path)
        except Exception as e:
            report(names[0], f"{type(e).__name__}: {str(e)[:300]}")
            report(names[1], skip="the trace did not load")
            return
        check_schema(json_path, "synthetic")
    report(names[0])
    problems = []
    for name, (count, total) in SYNTHETIC.items():
        got = breakdown.get(name)
        if got is None:
            problems.append(f"no '{name[:40]!r}' in HTA's breakdown")
        elif got[0] != count or abs(got[1] - total) > 1e-6:
            problems.append(f"{name[:40]!r}: HTA {got[0]} x, {got[1]:.4f} us; fed {count} x, "
                            f"{total:.3f} us")
    for name in sorted(set(breakdown) - set(SYNTHETIC)):
        problems.append(f"unexpected {name[:40]!r} in HTA's breakdown")
    report(names[1], "; ".join(problems[:4]) if problems else None)


SCHEMA_CHECKS = ("profiler_steps", "temporal_breakdown", "user_annotation_breakdowns",
                 "frequent_kernel_sequences", "critical_path")


def schema_check_names(tag):
    return [f"hta_{c}_{tag}" for c in SCHEMA_CHECKS]


def run_schema_checks(json_path):
    """The checks of the current schema, under HTA's default rounding (the caller clears
    HTA_DISABLE_NS_ROUNDING). Returns {check: None or why it failed}."""
    import json as json_module
    from hta.trace_analysis import TraceAnalysis

    with open(json_path) as f:
        events = json_module.load(f)["traceEvents"]
    steps = sorted(int(e["name"].split("#")[1]) for e in events
                   if e.get("cat") == "user_annotation" and e.get("name", "").startswith("ProfilerStep#"))
    results = {}
    with tempfile.TemporaryDirectory(prefix="test_hta_schema_") as rank_dir, \
            tempfile.TemporaryDirectory(prefix="test_hta_out_") as out_dir:
        shutil.copy(json_path, rank_dir)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            analysis = TraceAnalysis(trace_dir=rank_dir, include_last_profiler_step=True)

            def attempt(name, fn):
                try:
                    results[name] = fn()
                except Exception as e:  # HTA raising on our trace is what these checks catch
                    results[name] = f"{type(e).__name__}: {str(e)[:200]}"

            def profiler_steps():
                got = analysis.get_profiler_steps()
                return None if list(got) == steps and steps else f"HTA lists {got}, the trace {steps}"

            def temporal():
                df = analysis.get_temporal_breakdown(visualize=False)
                return None if df is not None and len(df) and float(df["kernel_time(us)"].sum()) > 0 \
                    else f"empty temporal breakdown: {df}"

            def user_annotations():
                problems = []
                for gpu_side in (True, False):
                    df = analysis.get_gpu_user_annotation_breakdown(
                        use_gpu_annotation=gpu_side, visualize=False, duration_ratio=1.0)
                    if df is None or not len(df):
                        problems.append(f"no {'GPU' if gpu_side else 'CPU'}-side annotation breakdown")
                return "; ".join(problems) or None

            def sequences():
                analysis.get_frequent_cuda_kernel_sequences(
                    operator_name=f"ProfilerStep#{steps[0]}", output_dir=out_dir, min_pattern_len=2)
                return None

            def critical_path():
                if not launches_outside_graphs(events):
                    return GRAPH_ONLY
                _, ok = analysis.critical_path_analysis(
                    rank=0, annotation=f"ProfilerStep#{steps[0]}", instance_id=0)
                return None if ok else "HTA's critical path analysis returned failure"

            attempt("profiler_steps", profiler_steps)
            attempt("temporal_breakdown", temporal)
            attempt("user_annotation_breakdowns", user_annotations)
            attempt("frequent_kernel_sequences", sequences)
            attempt("critical_path", critical_path)
    return results


# HTA 0.5.0's critical path counts kernel launches, memcpy and memset calls as launches, not
# cudaGraphLaunch: on a trace whose GPU work all comes from graphs it finds no launch queue.
GRAPH_ONLY = "skip: every launch is a cudaGraphLaunch, which HTA 0.5.0's critical path ignores"
LAUNCH_CALLS = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
                "cudaMemcpyAsync", "cudaMemsetAsync")


def launches_outside_graphs(events):
    return any(e.get("name") in LAUNCH_CALLS for e in events
               if e.get("cat") in ("cuda_runtime", "cuda_driver"))


def rounded_below_zero(json_path):
    """Slices whose duration HTA's default rounding (start up, end down, to whole us) makes
    negative: {name: count}. HTA's call-stack sort raises on these next to zero-length ones,
    and its temporal breakdown asserts on GPU ones; PyTorch's traces have them too (aten::view,
    aten::as_strided, memsets under a microsecond)."""
    import json as json_module

    with open(json_path) as f:
        events = json_module.load(f)["traceEvents"]
    found = {}
    for e in events:
        if e.get("ph") == "X" and math.floor(e["ts"] + e["dur"]) < math.ceil(e["ts"]):
            found[e["name"]] = found.get(e["name"], 0) + 1
    return found


def check_schema(json_path, tag):
    """Each check under HTA's default rounding. A check that fails there only because the trace
    holds sub-microsecond slices must pass with HTA's nanosecond mode, and says so on a note."""
    names = schema_check_names(tag)
    with open(json_path) as f:
        current = '"cat": "gpu_user_annotation"' in f.read()
    if not current:
        for n in names:
            report(n, skip="recorded before ranges were user_annotation; regenerate the fixture")
        return
    rounding = os.environ.pop("HTA_DISABLE_NS_ROUNDING", None)
    try:
        results = run_schema_checks(json_path)
    finally:
        if rounding is not None:
            os.environ["HTA_DISABLE_NS_ROUNDING"] = rounding
    negative = rounded_below_zero(json_path)
    if negative and any(results.get(c) for c in SCHEMA_CHECKS):
        os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
        nanoseconds = run_schema_checks(json_path)
        slices = ", ".join(f"{n[:30]} x{c}" for n, c in sorted(negative.items()))
        for check in SCHEMA_CHECKS:
            if results.get(check) and nanoseconds.get(check) is None:
                print(f"note: {tag}: {check} fails under HTA's rounding to whole microseconds "
                      f"({results[check][:80]}), passes in nanoseconds; slices rounded below "
                      f"zero: {slices}")
                results[check] = None
    for check, n in zip(SCHEMA_CHECKS, names):
        result = results.get(check, "not run")
        if result == GRAPH_ONLY:
            report(n, skip=GRAPH_ONLY[len("skip: "):])
        else:
            report(n, result)


def widen_correlation_for_pandas3():
    """HTA 0.5.0 with pandas 3: see the module's docstring. Widens 'correlation' to int64
    before HTA derives its index column from it."""
    import pandas
    import hta.common.trace as hta_trace

    if int(pandas.__version__.split(".")[0]) < 3:
        return
    original = hta_trace.transform_correlation_to_index

    def widened(df, symbol_table):
        if "correlation" in df.columns:
            df["correlation"] = df["correlation"].astype("int64")
        return original(df, symbol_table)

    hta_trace.transform_correlation_to_index = widened
    print(f"note: pandas {pandas.__version__}: widening HTA's correlation column to int64 "
          "(HTA 0.5.0 narrows it to int8 and then fails)")


def main():
    os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    all_names = [n for p in H200_TRACES for n in check_names(short(p))]
    all_names += [n for p in H200_TRACES for n in schema_check_names(short(p))]
    all_names += ["hta_loads_synthetic", "hta_kernel_breakdown_synthetic"]
    all_names += schema_check_names("synthetic")
    try:
        import logging

        import hta
        import hta.trace_analysis  # noqa: F401  (imports psutil, pandas, plotly)
        logging.getLogger("hta").setLevel(logging.CRITICAL)
    except Exception as e:  # ImportError, or a broken install
        why = f"HolisticTraceAnalysis not usable ({type(e).__name__}: {e}); " \
              "python3 -m pip install HolisticTraceAnalysis psutil"
        for n in all_names:
            report(n, skip=why)
        return 0
    print(f"note: HolisticTraceAnalysis {hta.__version__}")
    widen_correlation_for_pandas3()
    for path in H200_TRACES:
        check_h200_trace(path)
        check_schema(os.path.join(DATA, path + ".json"), short(path))
    check_synthetic()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
