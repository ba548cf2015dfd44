"""A trace we recorded, written again by the current writer: its .json turned back into the
records CUPTI gave (ranges, API calls, GPU work, overhead, devices, the window), which
bin/tests/test_trace_replay reads into the trace model and writes out (tests/test_trace_replay.c
describes the records). What the trace had already dropped (the step timer's calls, calls outside
the default API set when it was recorded that way) stays dropped; everything else is laid out as
a trace pass of today would lay it out. The ranges keep the times they were recorded with; the
occupancy estimate of a kernel is not recovered (it is written as Kineto writes a failed one).

    replay(json_path, out_base) -> out_base + ".json" (and ".txt"), or raises ReplayError
"""
import json
import os
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPLAY = os.path.join(ROOT, "bin", "tests", "test_trace_replay")
RANGE_CATS = ("user_annotation", "cpu_op")
GPU_KINDS = {"kernel": "k", "gpu_memcpy": "c", "gpu_memset": "s"}
DEVICE_KEYS = ("totalGlobalMem", "computeMajor", "computeMinor", "maxThreadsPerBlock",
               "maxThreadsPerMultiprocessor", "maxBlocksPerMultiprocessor", "regsPerBlock",
               "regsPerMultiprocessor", "warpSize", "numSms", "sharedMemPerBlock",
               "sharedMemPerBlockOptin", "sharedMemPerMultiprocessor")


class ReplayError(Exception):
    pass


def field(value):
    return str(value).replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def line(*fields):
    return "\t".join(field(f) for f in fields) + "\n"


def records(trace):
    """The record lines of a trace we wrote (a dict, as json.load gives it)."""
    base = trace["baseTimeNanoseconds"]
    events = trace["traceEvents"]

    def ns(us):
        return base + round(us * 1000)

    cpu = [e for e in events if e.get("ph") == "X" and e.get("cat") in RANGE_CATS]
    if not cpu:
        raise ReplayError("no ranges: not a trace of ours")
    pid = cpu[0]["pid"]
    name = next((e["args"]["name"] for e in events if e.get("ph") == "M"
                 and e.get("name") == "process_name" and e.get("pid") == pid), "program")
    out = [line("P", name, pid),
           line("V", trace.get("cupti_version", 0), trace.get("cuda_driver_version", 0),
                trace.get("cuda_runtime_version", 0))]
    end = next((e["ts"] for e in events if e.get("name") == "Record Window End"), None)
    if end is not None:
        out.append(line("W", base, ns(end)))
    for d in trace.get("deviceProperties", []):
        out.append(line("D", d["id"], d["name"], *(d.get(k, 0) for k in DEVICE_KEYS)))
    for e in events:
        if e.get("ph") != "X":
            continue
        cat, args = e.get("cat"), e.get("args", {})
        start, stop = ns(e["ts"]), ns(e["ts"]) + round(e["dur"] * 1000)
        if cat in RANGE_CATS:
            out.append(line("R", e["name"], e["tid"], start, stop))
        elif cat in ("cuda_runtime", "cuda_driver"):
            out.append(line("A", "d" if cat == "cuda_driver" else "r", e["name"], args["cbid"],
                            e["tid"], args["correlation"], start, stop))
        elif cat in GPU_KINDS:
            grid, block = args.get("grid", [0, 0, 0]), args.get("block", [0, 0, 0])
            out.append(line("G", GPU_KINDS[cat], e["name"], start, stop, args["device"],
                            args["context"], args["stream"], args["correlation"], *grid, *block,
                            args.get("registers per thread", 0), args.get("shared memory", 0), 0,
                            -1, args.get("queued", 0) * 1000, args.get("bytes", 0)))
        elif cat == "overhead":
            out.append(line("O", e["name"], start, stop))
    return out


def replay(json_path, out_base):
    if not os.access(REPLAY, os.X_OK):
        raise ReplayError("bin/tests/test_trace_replay not built (make bin/tests/test_trace_replay)")
    with open(json_path) as f:
        trace = json.load(f)
    with tempfile.NamedTemporaryFile("w", suffix=".records", delete=False) as f:
        f.writelines(records(trace))
        path = f.name
    try:
        run = subprocess.run([REPLAY], env=dict(os.environ, TRACE_REPLAY_IN=path,
                                                TRACE_REPLAY_OUT=out_base),
                             capture_output=True, text=True)
    finally:
        os.unlink(path)
    if run.returncode != 0:
        raise ReplayError(f"test_trace_replay: {(run.stdout + run.stderr).strip()[-300:]}")
    return out_base + ".json"
