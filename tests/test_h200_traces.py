#!/usr/bin/env python3
"""The traces of the H200 runs, checked by tests/check_trace_json.py and against PyTorch's.

  - As committed (docs/results/h200-2026-11-30/traces, recorded before the current layout): the
    trace format's invariants: in every recorded step exactly the kernels the stage launches, a
    flow from every launch to its GPU work, properly nested ranges, no event ending before it
    starts. A change to the checker that rejects real traces fails here.
  - The same records written again by the current writer (tests/trace_replay.py): PyTorch's
    layering and lanes that Perfetto draws without error (--layered --lanes-nest), the same
    kernels per step, the same GPU work to the nanosecond, and no API call outside the default
    set (the calls torch.profiler records too: no cuKernelGetAttribute).
  - Fixtures of the current layout (the newest tests/data/h200-*/ with a FIXTURES file, made by
    tools/h200_fixtures.sh on a GPU): the same checks as recorded, plus, for each program of
    which tests/data/reference/ holds PyTorch's trace: no API call PyTorch's trace of it lacks
    (a kernel launch through the runtime where PyTorch's goes through the driver, as
    torch.compile's Triton kernels do, counts as a launch), and the steps' share of self CPU time (the ProfilerStep* row of the table) within a factor
    of two of PyTorch's. Without such a folder these checks are one SKIP naming the tool.
    The fixtures are checked as tools/trace_upgrade.py brings them up to the writer's rules of
    today (correlation ids, overlap lanes, record_shapes), which they predate.
  - The run the chapters quote (docs/results/h200/traces, rewritten by that tool):
    the same checks as the fixtures, on the files as committed.
The share is computed from each trace's .json as key_averages() computes it (every CPU slice's
duration less its children's), which reproduces PyTorch's own tables (checked too).
One line per check: PASS/FAIL/SKIP name.
"""
import collections
import glob
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import trace_replay  # noqa: E402
from checks import report  # noqa: E402
import checks  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "tools"))
import trace_upgrade  # noqa: E402

COMMITTED = os.path.join(ROOT, "docs", "results", "h200-2026-11-30", "traces")
# the run the chapters quote, recorded in the current layout
CHAPTERS_RUN = os.path.join(ROOT, "docs", "results", "h200", "traces")
REFERENCE = os.path.join(ROOT, "tests", "data", "reference")
CHECKER = os.path.join(ROOT, "tests", "check_trace_json.py")
CPU_CATS = ("user_annotation", "cpu_op", "cuda_runtime", "cuda_driver")
REQUIRED = "user_annotation,gpu_user_annotation,kernel,cuda_runtime,ac2g"

# trace -> kernels each step launches
KERNELS_PER_STEP = {
    "01_matmul_add/64_bf16_cold_eager": 2,
    "01_matmul_add/64_bf16_cold_addmm": 1,
    "01_matmul_add/64_bf16_cold_fused": 1,
    "01_matmul_add/4096_bf16_cold_eager": 2,
    "02_linear/1024x32x64_bf16_cold_epilogue": 1,
    "02_linear/1024x32x64_bf16_cold_view": 2,
    "02_linear/1024x32x64_bf16_cold_addmm": 2,
    "02_linear/1024x32x64_bf16_cold_transpose_copy": 3,
    "03_simple_mlp/64x128_768x3072_bf16_cold_eager": 5,
    "03_simple_mlp/1x8_768x3072_bf16_cold_eager": 6,
    "04_fused_mlp/64x128_768x3072_bf16_cold_eager": 5,
    "04_fused_mlp/64x128_768x3072_bf16_cold_fused_geglu": 4,
    "04_fused_mlp/64x128_768x3072_bf16_cold_merged": 3,
    "04_fused_mlp/64x128_768x3072_bf16_cold_epilogue": 2,
    "04_fused_mlp/64x128_768x3072_bf16_cold_graph": 2,
    "04_fused_mlp/1x8_768x3072_bf16_cold_decode": 2,
    "04_fused_mlp/1x8_768x3072_bf16_cold_graph": 4,
}
# The fixtures pin the graph rung's choice (--graph-of merged); run_all.sh lets it choose by
# measurement, and in the chapters' run it captured decode at 8 tokens (04.log says which)
CHAPTERS_RUN_KERNELS = {"04_fused_mlp/1x8_768x3072_bf16_cold_graph": 2}
# our trace -> PyTorch's trace of the same program
PAIRS = {
    "01_matmul_add/64_bf16_cold_eager": "torch_01_64_bf16_cold_eager",
    "02_linear/1024x32x64_bf16_cold_epilogue": "torch_02_linear_1024x32x64",
    "03_simple_mlp/64x128_768x3072_bf16_cold_eager": "torch_03_mlp_article_eager",
    "04_fused_mlp/64x128_768x3072_bf16_cold_fused_geglu": "torch_04_mlp_article_compile",
}
# The default API set of our writer (common/trace_model.c), as names seen in these programs.
DEFAULT_API = {"cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
               "cudaGraphLaunch", "cudaMemcpyAsync", "cudaMemsetAsync", "cudaDeviceSynchronize",
               "cudaStreamSynchronize"}

LAUNCHES = {"cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx"}



def checker(path, kernels, *options):
    run = subprocess.run([sys.executable, CHECKER, "--expect-kernels-per-step", str(kernels),
                          "--require-categories", REQUIRED, *options, path],
                         capture_output=True, text=True)
    return None if run.returncode == 0 else " ".join((run.stdout + run.stderr).strip().splitlines()[-2:])


def events_of(path):
    with open(path) as f:
        return json.load(f)["traceEvents"]


def api_names(events):
    return {e["name"] for e in events if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")}


def gpu_work(events):
    return sorted((e["name"], round(e["ts"] * 1000), round(e["dur"] * 1000)) for e in events
                  if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"))


def step_self_cpu_share(events):
    """The steps' share of self CPU time, in percent: key_averages()'s ProfilerStep* row over its
    footer, from the CPU slices' nesting on each thread."""
    lanes = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in CPU_CATS:
            lanes[(e["pid"], e["tid"])].append(e)
    steps = total = 0.0
    for slices in lanes.values():
        slices.sort(key=lambda e: (e["ts"], -e["dur"]))
        children, stack = collections.defaultdict(float), []
        for i, e in enumerate(slices):
            while stack and slices[stack[-1]]["ts"] + slices[stack[-1]]["dur"] < e["ts"] + e["dur"] - 1e-6:
                stack.pop()
            if stack:
                children[stack[-1]] += e["dur"]
            stack.append(i)
        for i, e in enumerate(slices):
            own = e["dur"] - children[i]
            total += own
            if e["name"].startswith("ProfilerStep#"):
                steps += own
    return 100.0 * steps / total if total else 0.0


def table_step_share(path):
    with open(path) as f:
        for line in f:
            if line.strip().startswith("ProfilerStep*"):
                return float(line.split()[1].rstrip("%"))
    return None


def fixture_folder():
    made = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "h200-*", "FIXTURES")))
    return os.path.dirname(made[-1]) if made else None


def check_share_method():
    # PyTorch's tables (torch_*.txt) beside their traces; article_a100.txt is the article's figures
    for path in sorted(glob.glob(os.path.join(REFERENCE, "torch_*.txt"))):
        name = os.path.basename(path)[:-4]
        table = table_step_share(path)
        mine = step_self_cpu_share(events_of(path[:-4] + ".json"))
        report(f"step_self_cpu_as_key_averages_{name}",
               None if table is not None and abs(mine - table) < 0.01
               else f"{mine:.2f} % from the .json, {table} % in PyTorch's table")


def check_current_layout(folder, label, kernels_of=None, upgrade_into=None):
    """Traces written by the current writer on the GPU: layered as PyTorch's, and no API call
    PyTorch's trace of the same program lacks. upgrade_into: a folder where each trace is first
    brought up to the writer's current rules (tools/trace_upgrade.py), for traces recorded
    before them."""
    where = os.path.relpath(folder, ROOT)
    for tag, kernels in dict(KERNELS_PER_STEP, **(kernels_of or {})).items():
        path = os.path.join(folder, tag + ".json")
        if not os.path.exists(path):
            report(f"{label}_{tag}", f"not in {where}")
            continue
        if upgrade_into:
            upgraded = os.path.join(upgrade_into, tag.replace("/", "_") + ".json")
            trace_upgrade.upgrade_file(path, upgraded)
            path = upgraded
        report(f"{label}_{tag}", checker(path, kernels, "--layered", "--lanes-nest",
                                         "--require-categories", REQUIRED + ",cpu_op,Trace"))
    for tag, ref in PAIRS.items():
        path = os.path.join(folder, tag + ".json")
        if not os.path.exists(path):
            continue
        ours, theirs = events_of(path), events_of(os.path.join(REFERENCE, ref + ".json"))
        extra = api_names(ours) - api_names(theirs)
        # torch.compile's Triton kernels are launched through the driver, ours through the
        # runtime: a launch is a launch
        other_launches = sorted(extra & LAUNCHES) if api_names(theirs) & LAUNCHES else []
        if other_launches:
            print(f"note: {where}/{tag}: kernels launched by {other_launches}, PyTorch's by "
                  f"{sorted(api_names(theirs) & LAUNCHES)}")
        extra = sorted(extra - set(other_launches))
        report(f"{label}_api_as_pytorch_{tag}",
               f"API calls PyTorch's trace lacks: {extra}" if extra else None)
        mine, pytorch = step_self_cpu_share(ours), step_self_cpu_share(theirs)
        table = table_step_share(path[:-5] + ".txt")
        problems = []
        if not pytorch / 2 <= mine <= pytorch * 2:
            problems.append(f"ProfilerStep* self CPU {mine:.2f} %, PyTorch's {pytorch:.2f} %")
        if table is None or abs(table - mine) > 0.01:
            problems.append(f"our table says {table} %, the .json {mine:.2f} %")
        report(f"{label}_step_self_cpu_{tag}", "; ".join(problems) or None)


def main():
    if not os.path.isdir(COMMITTED):
        print(f"SKIP h200_traces: {COMMITTED} not found")
        return 0
    check_share_method()
    with tempfile.TemporaryDirectory(prefix="test_h200_traces_") as scratch:
        for tag, kernels in KERNELS_PER_STEP.items():
            recorded = os.path.join(COMMITTED, tag + ".json")
            report(f"h200_trace_{tag}", checker(recorded, kernels))
            try:
                again = trace_replay.replay(recorded, os.path.join(scratch, tag.replace("/", "_")))
            except trace_replay.ReplayError as e:
                report(f"h200_trace_written_again_{tag}", str(e))
                continue
            problems = [p for p in [checker(again, kernels, "--layered", "--lanes-nest")] if p]
            recorded_events, again_events = events_of(recorded), events_of(again)
            if gpu_work(recorded_events) != gpu_work(again_events):
                problems.append("the GPU work differs from the records'")
            extra = sorted(api_names(again_events) - DEFAULT_API)
            if extra:
                problems.append(f"API calls outside the default set: {extra}")
            report(f"h200_trace_written_again_{tag}", "; ".join(problems) or None)

    fresh = fixture_folder()
    if fresh:
        # recorded before the writer's last rules (correlation ids, overlap lanes, record_shapes):
        # checked as tools/trace_upgrade.py rewrites them, which tests/test_trace_upgrade.py
        # shows to be what the writer writes from their records
        with tempfile.TemporaryDirectory(prefix="test_h200_fixtures_") as scratch:
            check_current_layout(fresh, "h200_fixture", upgrade_into=scratch)
    else:
        print("SKIP h200_fixtures: no fixtures of the current layout under tests/data/ (a folder "
              "h200-*/ with a FIXTURES file: tools/h200_fixtures.sh makes it on a GPU)")
    if os.path.isdir(CHAPTERS_RUN):
        check_current_layout(CHAPTERS_RUN, "h200_run", CHAPTERS_RUN_KERNELS)
    else:
        print(f"SKIP h200_run: {os.path.relpath(CHAPTERS_RUN, ROOT)} not found")
    return checks.status()


if __name__ == "__main__":
    sys.exit(main())
