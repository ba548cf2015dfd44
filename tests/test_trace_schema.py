#!/usr/bin/env python3
"""Our trace against the schema of real torch.profiler traces (PyTorch 2.11, CUDA 13, H200: the
four programs under tests/data/reference/ and the GeGLU MLP under docs/results/): the synthetic
traces of tests/test_trace.c may use only the (category, phase) pairs PyTorch's traces use, each
event's args must carry exactly the keys, in the order, that one of PyTorch's events of that
category carries (a copy's as a memset's: the references hold no copy, and Kineto writes both
alike), and the top-level keys are PyTorch's, in its order. Then the layering of the edge-case
trace, event by event: the steps and the program's own range are user_annotation, the ops
inside it cpu_op; the program's range is mirrored once on the GPU lane, no step and no op is;
work launched in a step outside the program's range is mirrored nowhere; the step and the range
that share its span are written step first; the kernel that starts before its predecessor ends
sits on a lane of its own, named after its stream, with thread id 1000007 (stream 7 plus a
million: within the 32 bits Perfetto reads). One line per check: PASS/FAIL/SKIP name.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEST_TRACE = os.path.join(ROOT, "bin", "tests", "test_trace")
REFERENCES = sorted(glob.glob(os.path.join(ROOT, "tests", "data", "reference", "*.json"))) + \
    sorted(glob.glob(os.path.join(ROOT, "docs", "results", "*", "reference", "*.trace.json")))
FLOAT_ARGS = ("blocks per SM", "warps per SM")
INT_ARGS = ("queued", "est. achieved occupancy %", "registers per thread", "shared memory")

failed = False


def report(name, problems):
    global failed
    if problems:
        failed = True
        print(f"FAIL {name}: {'; '.join(sorted(set(problems))[:4])}")
    else:
        print(f"PASS {name}")


def pytorch_schema():
    """(category, phase) -> the arg key tuples PyTorch writes; the top-level keys of its traces
    recorded with record_shapes."""
    allowed, top = {}, None
    for path in REFERENCES:
        with open(path) as f:
            trace = json.load(f)
        if "record_shapes" in trace:
            top = list(trace)
        for e in trace["traceEvents"]:
            allowed.setdefault((e.get("cat"), e.get("ph")), set()).add(tuple(e.get("args", {})))
    allowed[("gpu_memcpy", "X")] = allowed.get(("gpu_memset", "X"), set())
    return allowed, top


def check_schema(trace, allowed, top, tag):
    report(f"trace_schema_top_level_{tag}",
           [] if list(trace) == top else [f"top-level keys {list(trace)}, PyTorch's {top}"])
    problems, type_problems = [], []
    for e in trace["traceEvents"]:
        key = (e.get("cat"), e.get("ph"))
        if key not in allowed:
            problems.append(f"category/phase {key} is not in PyTorch's traces")
            continue
        args = tuple(e.get("args", {}))
        if args not in allowed[key]:
            problems.append(f"{key}: args {args}, PyTorch writes one of {sorted(allowed[key])[:2]}")
        for k in FLOAT_ARGS:
            if k in e.get("args", {}) and not isinstance(e["args"][k], float):
                type_problems.append(f"{k} is not a float")
        for k in INT_ARGS:
            if k in e.get("args", {}) and not isinstance(e["args"][k], int):
                type_problems.append(f"{k} is not an integer")
    for name in ("Record Window End", "Iteration Start: test_trace profiler"):
        if not any(e.get("name") == name and e.get("ph") == "i" for e in trace["traceEvents"]):
            problems.append(f"no {name} instant")
    if not any(e.get("cat") == "Trace" for e in trace["traceEvents"]):
        problems.append("no Trace span")
    report(f"trace_schema_categories_and_args_{tag}", problems)
    report(f"trace_schema_arg_types_{tag}", type_problems)


def check_edge_layering(trace):
    events = trace["traceEvents"]
    slices = [e for e in events if e.get("ph") == "X"]
    cat = {e["name"]: e["cat"] for e in slices if e.get("pid") == 4242}
    problems = []
    want = {"ProfilerStep#5": "user_annotation", "ProfilerStep#6": "user_annotation",
            "decode": "user_annotation", "gate": "cpu_op", "down": "cpu_op"}
    for name, c in want.items():
        if cat.get(name) != c:
            problems.append(f"{name} is {cat.get(name)}, not {c}")
    mirrors = [e["name"] for e in slices if e.get("cat") == "gpu_user_annotation"]
    if mirrors != ["decode"]:
        problems.append(f"GPU mirrors {mirrors}, expected decode alone")
    order = [e["name"] for e in slices if e.get("pid") == 4242 and e.get("ts") == 0]
    if order[:2] != ["ProfilerStep#5", "decode"]:
        problems.append(f"the step and decode share a span and are written {order[:2]}")
    report("trace_layering_edge_cases", problems)

    kernels = {e["name"]: e for e in slices if e.get("cat") == "kernel"}
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    problems = []
    up, down, tail = kernels["decode_gate_up"], kernels["decode_down"], kernels["tail"]
    if up["tid"] != 7 or tail["tid"] != 7:
        problems.append(f"decode_gate_up and tail on lanes {up['tid']}, {tail['tid']}, not stream 7's")
    if down["tid"] == up["tid"]:
        problems.append("decode_down overlaps decode_gate_up on the same lane")
    elif "stream 7" not in names.get((down["pid"], down["tid"]), ""):
        problems.append(f"decode_down's lane is named {names.get((down['pid'], down['tid']))!r}")
    # Perfetto reads thread ids as 32-bit integers: the overlap lane is stream 7's plus a million
    if down["tid"] != 7 + 1000000:
        problems.append(f"decode_down's lane has thread id {down['tid']}, not 1000007 (stream 7's "
                        "first overlap lane, within 32 bits)")
    report("trace_overlap_lane_edge_cases", problems)


def main():
    names = [f"{c}_{t}" for t in ("synthetic", "edge_cases") for c in
             ("trace_schema_top_level", "trace_schema_categories_and_args", "trace_schema_arg_types")]
    names += ["trace_layering_edge_cases", "trace_overlap_lane_edge_cases"]
    if not os.access(TEST_TRACE, os.X_OK):
        for n in names:
            print(f"SKIP {n}: bin/tests/test_trace not built")
        return 0
    allowed, top = pytorch_schema()
    with tempfile.TemporaryDirectory(prefix="test_trace_schema_") as keep:
        run = subprocess.run([TEST_TRACE], cwd=ROOT, env=dict(os.environ, TEST_TRACE_KEEP_DIR=keep),
                             capture_output=True, text=True)
        traces = {}
        for tag in ("synthetic_step", "edge_cases"):
            path = os.path.join(keep, tag + ".json")
            if os.path.exists(path):
                with open(path) as f:
                    traces[tag] = json.load(f)
        if len(traces) < 2:
            for n in names:
                print(f"FAIL {n}: bin/tests/test_trace wrote no synthetic traces: {run.stdout[-200:]!r}")
            return 1
    check_schema(traces["synthetic_step"], allowed, top, "synthetic")
    check_schema(traces["edge_cases"], allowed, top, "edge_cases")
    check_edge_layering(traces["edge_cases"])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
