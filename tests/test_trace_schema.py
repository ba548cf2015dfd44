#!/usr/bin/env python3
"""Our trace against the schema of a real torch.profiler trace (torch 2.11, CUDA 13, H200):
the synthetic step of tests/test_trace.c must use only the categories PyTorch's traces use, and
each event's args must carry exactly the keys, in the order, that Kineto writes for its category
(as read from that reference trace; user_annotation and gpu_user_annotation as Kineto's writer
emits them). Top-level keys likewise. One line per check: PASS/FAIL/SKIP name.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEST_TRACE = os.path.join(ROOT, "bin", "tests", "test_trace")

TOP_LEVEL = ["schemaVersion", "deviceProperties", "trace_id", "cuda_driver_version",
             "cuda_runtime_version", "cupti_version", "displayTimeUnit", "baseTimeNanoseconds",
             "traceEvents", "traceName"]
RANGE_ARGS = ("External id", "Record function id", "Ev Idx")
API_ARGS = (("External id", "cbid", "correlation"), ("cbid", "correlation"))
COPY_ARGS = ("External id", "device", "context", "stream", "correlation", "bytes",
             "memory bandwidth (GB/s)")
KERNEL_ARGS = ("External id", "queued", "device", "context", "stream", "correlation",
               "registers per thread", "shared memory", "blocks per SM", "warps per SM", "grid",
               "block", "est. achieved occupancy %")
# (category, phase) -> the allowed key tuples of args
ARGS = {
    ("user_annotation", "X"): (RANGE_ARGS,),
    ("gpu_user_annotation", "X"): (("External id",),),
    ("cuda_runtime", "X"): API_ARGS,
    ("cuda_driver", "X"): API_ARGS,
    ("kernel", "X"): (KERNEL_ARGS,),
    ("gpu_memcpy", "X"): (COPY_ARGS,),
    ("gpu_memset", "X"): (COPY_ARGS,),
    ("overhead", "X"): ((),),
    ("ac2g", "s"): ((),),
    ("ac2g", "f"): ((),),
    (None, "M"): (("name",), ("labels",), ("sort_index",)),
    (None, "i"): ((),),
}
FLOAT_ARGS = ("blocks per SM", "warps per SM")
INT_ARGS = ("queued", "est. achieved occupancy %", "registers per thread", "shared memory")


def main():
    names = ["trace_schema_top_level", "trace_schema_categories_and_args", "trace_schema_arg_types"]
    if not os.access(TEST_TRACE, os.X_OK):
        for n in names:
            print(f"SKIP {n}: bin/tests/test_trace not built")
        return 0
    with tempfile.TemporaryDirectory(prefix="test_trace_schema_") as keep:
        run = subprocess.run([TEST_TRACE], cwd=ROOT, env=dict(os.environ, TEST_TRACE_KEEP_DIR=keep),
                             capture_output=True, text=True)
        path = os.path.join(keep, "synthetic_step.json")
        if not os.path.exists(path):
            for n in names:
                print(f"FAIL {n}: bin/tests/test_trace wrote no synthetic trace: {run.stdout[-200:]!r}")
            return 1
        with open(path) as f:
            trace = json.load(f)
    failed = False

    def report(name, problems):
        nonlocal failed
        if problems:
            failed = True
            print(f"FAIL {name}: {'; '.join(sorted(set(problems))[:4])}")
        else:
            print(f"PASS {name}")

    report(names[0], [] if list(trace) == TOP_LEVEL else [f"top-level keys {list(trace)}"])
    problems, type_problems = [], []
    for e in trace["traceEvents"]:
        key = (e.get("cat"), e.get("ph"))
        allowed = ARGS.get(key)
        if allowed is None:
            problems.append(f"category/phase {key} is not in PyTorch's traces")
            continue
        args = tuple(e.get("args", {}))
        if args not in allowed:
            problems.append(f"{key}: args {args}, Kineto writes {allowed[0]}")
        for k in FLOAT_ARGS:
            if k in e.get("args", {}) and not isinstance(e["args"][k], float):
                type_problems.append(f"{k} is not a float")
        for k in INT_ARGS:
            if k in e.get("args", {}) and not isinstance(e["args"][k], int):
                type_problems.append(f"{k} is not an integer")
    if not any(e.get("name") == "Record Window End" and e.get("ph") == "i"
               for e in trace["traceEvents"]):
        problems.append("no Record Window End instant")
    report(names[1], problems)
    report(names[2], type_problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
