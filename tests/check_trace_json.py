#!/usr/bin/env python3
"""Checks a trace in the PyTorch profiler schema, field by field, with Python's own JSON parser.

Usage: tests/check_trace_json.py TRACE.json [options]

Checked always: the top-level keys (schemaVersion, deviceProperties, baseTimeNanoseconds,
traceEvents, traceName); no event ends before it starts; the CPU lane's slices (ranges as
user_annotation or cpu_op, cuda_runtime, cuda_driver) nest on each thread; the args PyTorch
writes on kernels, copies and memsets; every 'f' flow has exactly one 's' with its id, at a
launch call with that correlation, no later than the GPU work; every GPU activity has a flow
from its launch; every 's' has an 'f' (unless --allow-unmatched-starts: PyTorch itself writes
flows from cudaDeviceSynchronize); "External id" of GPU work matches that of its launch; each
gpu_user_annotation mirrors a range of the same name and External id; lanes have names.

--layered adds PyTorch's layering of a trace: ProfilerStep#N ranges are user_annotation and are
not mirrored on the GPU; only user_annotation ranges are (cpu_op ops are not); a cpu_op carries
all four input keys of "record_shapes" or none, and with "record_shapes": 1 some op has
dimensions in "Input Dims"; of two slices of one lane with the same ts and
dur the outer one is written first (a step before the range inside it, a user_annotation before
a cpu_op, a range before an API call, a gpu_user_annotation before GPU work).
--lanes-nest adds the nesting check to the GPU lanes: Perfetto draws a lane's slices as a stack
and reports an error for two that overlap without nesting.

Exit status: 0 all checks passed, 1 some failed (one line each), 2 unreadable or not JSON.
"""
import argparse
import collections
import json
import sys

TOP_LEVEL_KEYS = ("schemaVersion", "deviceProperties", "baseTimeNanoseconds", "traceEvents",
                  "traceName")
RANGE_CATEGORIES = ("user_annotation", "cpu_op")
CPU_CATEGORIES = RANGE_CATEGORIES + ("cuda_runtime", "cuda_driver")
GPU_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")
COMMON_GPU_ARGS = ("device", "context", "stream", "correlation")
KERNEL_ARGS = COMMON_GPU_ARGS + ("registers per thread", "shared memory", "grid", "block")
COPY_ARGS = COMMON_GPU_ARGS + ("bytes", "memory bandwidth (GB/s)")
DEVICE_KEYS = ("id", "name", "totalGlobalMem", "computeMajor", "computeMinor", "numSms",
               "warpSize", "maxThreadsPerBlock")
INPUT_KEYS = ("Concrete Inputs", "Input type", "Input Strides", "Input Dims")
# ts and dur carry three decimals of a microsecond; allow for the float rounding of large ts.
SLACK_US = 0.002
# GPU work that overlaps earlier work of its stream sits on lane stream + k * 1000000 (k = 1,
# 2...): a thread id below 2^31, as Perfetto reads thread ids as 32-bit integers
OVERLAP_LANE_STEP = 1000000
MAX_TID = (1 << 31) - 1


class Checker:
    def __init__(self):
        self.failures = []

    def expect(self, condition, message):
        if not condition:
            self.failures.append(message)
        return condition


def describe(event):
    return f"{event.get('cat', event.get('ph'))} '{str(event.get('name'))[:60]}' at ts {event.get('ts')}"


def check_top_level(trace, c):
    for key in TOP_LEVEL_KEYS:
        c.expect(key in trace, f"top level: no '{key}'")
    c.expect(isinstance(trace.get("baseTimeNanoseconds"), int)
             and trace.get("baseTimeNanoseconds", -1) >= 0,
             "baseTimeNanoseconds is not a non-negative integer")
    devices = trace.get("deviceProperties")
    if c.expect(isinstance(devices, list), "deviceProperties is not a list"):
        for d in devices:
            for key in DEVICE_KEYS:
                c.expect(key in d, f"deviceProperties entry without '{key}'")
    c.expect(isinstance(trace.get("traceEvents"), list), "traceEvents is not a list")


def check_durations(events, c):
    for e in events:
        if e.get("ph") != "X":
            continue
        ok = isinstance(e.get("ts"), (int, float)) and isinstance(e.get("dur"), (int, float))
        if c.expect(ok, f"{describe(e)}: ts or dur missing or not a number"):
            c.expect(e["dur"] >= 0, f"{describe(e)}: negative duration {e['dur']}")
        c.expect(isinstance(e.get("name"), str), f"{describe(e)}: name is not a string")


def check_nesting(events, c, categories=CPU_CATEGORIES):
    """On each lane, slices either nest or follow one another: none straddles another's end."""
    lanes = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in categories:
            lanes[(e["pid"], e["tid"])].append(e)
    for lane, slices in lanes.items():
        slices.sort(key=lambda e: (e["ts"], -e["dur"]))
        open_slices = []
        for e in slices:
            while open_slices and open_slices[-1]["ts"] + open_slices[-1]["dur"] <= e["ts"] + SLACK_US:
                open_slices.pop()
            if open_slices:
                outer = open_slices[-1]
                c.expect(e["ts"] + e["dur"] <= outer["ts"] + outer["dur"] + SLACK_US,
                         f"{describe(e)} overlaps the end of {describe(outer)} on thread {lane}")
            open_slices.append(e)


# Of two slices with the same ts and dur on one lane, the outer one: the lower rank.
def outer_rank(e):
    if e.get("cat") == "user_annotation":
        return 0 if e.get("name", "").startswith("ProfilerStep#") else 1
    return {"cpu_op": 2, "gpu_user_annotation": 0}.get(e.get("cat"), 3)


def check_layering(trace, events, c):
    steps_mirrored = sorted({e["name"] for e in events if e.get("cat") == "gpu_user_annotation"
                             and e.get("name", "").startswith("ProfilerStep#")})
    c.expect(not steps_mirrored, f"steps mirrored on the GPU: {steps_mirrored[:3]}")
    for e in events:
        if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#") \
                and e.get("cat") in RANGE_CATEGORIES:
            c.expect(e["cat"] == "user_annotation", f"{describe(e)}: a step that is not a user_annotation")
    user = {(e["name"], e.get("args", {}).get("External id")) for e in events
            if e.get("ph") == "X" and e.get("cat") == "user_annotation"}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "gpu_user_annotation":
            c.expect((e.get("name"), e.get("args", {}).get("External id")) in user,
                     f"{describe(e)}: mirrors no user_annotation (an op's range is not mirrored)")
    # PyTorch writes them on the ops that take inputs (aten::mm), not on its own steps of work
    # (torch.compile's "Pregraph bytecode"): all four keys or none
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "cpu_op":
            missing = [k for k in INPUT_KEYS if k not in e.get("args", {})]
            c.expect(len(missing) in (0, len(INPUT_KEYS)), f"{describe(e)}: input keys without {missing}")
    # "record_shapes": 1 says shapes were recorded: some op then has its inputs' dimensions
    if trace.get("record_shapes") == 1:
        c.expect(any(e.get("args", {}).get("Input Dims") for e in events
                     if e.get("ph") == "X" and e.get("cat") == "cpu_op"),
                 "record_shapes is 1, but no cpu_op has an 'Input Dims' that is not empty")
    seen = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X":
            seen[(e["pid"], e["tid"], e["ts"], e["dur"])].append(e)
    for same in seen.values():
        ranks = [outer_rank(e) for e in same]
        c.expect(ranks == sorted(ranks), f"{describe(same[0])}: slices of the same span written "
                 f"inner first: {[e['name'][:30] for e in same]}")


def check_gpu_args(events, c):
    for e in events:
        cat = e.get("cat")
        if e.get("ph") != "X" or cat not in GPU_CATEGORIES:
            continue
        args = e.get("args", {})
        for key in KERNEL_ARGS if cat == "kernel" else COPY_ARGS:
            c.expect(key in args, f"{describe(e)}: no arg '{key}'")
        if cat == "kernel":
            for key in ("grid", "block"):
                value = args.get(key)
                c.expect(isinstance(value, list) and len(value) == 3
                         and all(isinstance(v, int) and v > 0 for v in value),
                         f"{describe(e)}: '{key}' is not three positive integers: {value}")
        # a lane of its stream: the stream's own, or an overlap lane (stream + k * 1000000)
        tid, stream = e.get("tid"), args.get("stream")
        c.expect(e.get("pid") == args.get("device") and isinstance(tid, int) and isinstance(stream, int)
                 and stream <= tid <= MAX_TID and (tid - stream) % OVERLAP_LANE_STEP == 0,
                 f"{describe(e)}: lane (pid, tid) is not (device, a lane of its stream within 32 bits)")


def check_flows(events, c, allow_unmatched_starts):
    starts = collections.defaultdict(list)
    finishes = collections.defaultdict(list)
    for e in events:
        if e.get("cat") == "ac2g" and e.get("ph") in ("s", "f"):
            (starts if e["ph"] == "s" else finishes)[e.get("id")].append(e)
    launches = {e["args"]["correlation"]: e for e in events
                if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")
                and "correlation" in e.get("args", {})}
    gpu_work = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in GPU_CATEGORIES:
            gpu_work[e.get("args", {}).get("correlation")].append(e)

    for flow_id, fs in finishes.items():
        ss = starts.get(flow_id, [])
        if not c.expect(len(ss) == 1, f"flow {flow_id}: {len(ss)} 's' events for its 'f'"):
            continue
        s = ss[0]
        launch = launches.get(flow_id)
        if c.expect(launch is not None, f"flow {flow_id}: no launch call with that correlation"):
            c.expect(abs(s["ts"] - launch["ts"]) <= SLACK_US
                     and (s["pid"], s["tid"]) == (launch["pid"], launch["tid"]),
                     f"flow {flow_id}: 's' is not at its launch call")
        for f in fs:
            c.expect(f.get("bp") == "e", f"flow {flow_id}: 'f' without \"bp\": \"e\"")
            c.expect(f["ts"] + SLACK_US >= s["ts"], f"flow {flow_id}: arrives before it leaves")
            c.expect(any(abs(g["ts"] - f["ts"]) <= SLACK_US and (g["pid"], g["tid"]) == (f["pid"], f["tid"])
                         for g in gpu_work.get(flow_id, [])),
                     f"flow {flow_id}: 'f' is not at GPU work with that correlation")
    if not allow_unmatched_starts:
        for flow_id in starts:
            c.expect(flow_id in finishes, f"flow {flow_id}: 's' without 'f'")
    for correlation, work in gpu_work.items():
        for g in work:
            c.expect(correlation in finishes, f"{describe(g)}: no flow from a launch")
            launch = launches.get(correlation)
            if launch is not None:
                c.expect(g.get("args", {}).get("External id") == launch.get("args", {}).get("External id"),
                         f"{describe(g)}: External id differs from its launch's")


def check_external_ids(events, c):
    op_ids = [e["args"]["External id"] for e in events
              if e.get("ph") == "X" and e.get("cat") in RANGE_CATEGORIES
              and "External id" in e.get("args", {})]
    c.expect(len(op_ids) == len(set(op_ids)), "range External ids are not unique")
    known = set(op_ids)
    range_names = {e["args"]["External id"]: e["name"] for e in events
                   if e.get("ph") == "X" and e.get("cat") in RANGE_CATEGORIES
                   and "External id" in e.get("args", {})}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver"):
            ext = e.get("args", {}).get("External id")
            c.expect(ext is None or ext in known, f"{describe(e)}: External id {ext} names no range")
        if e.get("ph") == "X" and e.get("cat") == "gpu_user_annotation":
            ext = e.get("args", {}).get("External id")
            c.expect(range_names.get(ext) == e.get("name"),
                     f"{describe(e)}: External id {ext} names no range of that name")


def check_lane_names(events, c):
    named_processes = {e["pid"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    named_threads = {(e["pid"], e["tid"]) for e in events
                     if e.get("ph") == "M" and e.get("name") == "thread_name"}
    for e in events:
        if e.get("ph") != "X" or e.get("cat") not in CPU_CATEGORIES + GPU_CATEGORIES + (
                "gpu_user_annotation",):
            continue
        c.expect(e["pid"] in named_processes, f"{describe(e)}: process {e['pid']} has no process_name")
        c.expect((e["pid"], e["tid"]) in named_threads,
                 f"{describe(e)}: thread {(e['pid'], e['tid'])} has no thread_name")


def contains(outer, inner):
    return (outer["pid"], outer["tid"]) == (inner["pid"], inner["tid"]) and \
        outer["ts"] - SLACK_US <= inner["ts"] and \
        inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + SLACK_US


def check_kernels_per_step(events, c, expected, step_prefix):
    steps = [e for e in events if e.get("ph") == "X" and e.get("cat") in RANGE_CATEGORIES
             and e.get("name", "").startswith(step_prefix)]
    if not c.expect(steps, f"no range named {step_prefix}*"):
        return
    launches = {e["args"]["correlation"]: e for e in events
                if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")
                and "correlation" in e.get("args", {})}
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    for step in steps:
        n = sum(1 for k in kernels
                if k["args"].get("correlation") in launches
                and contains(step, launches[k["args"]["correlation"]]))
        c.expect(n == expected, f"{step['name']}: {n} kernels launched, expected {expected}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trace")
    parser.add_argument("--require-categories", default="user_annotation,kernel",
                        help="comma-separated categories that must appear (default: %(default)s)")
    parser.add_argument("--expect-kernels-per-step", type=int, metavar="N",
                        help="each step range launches exactly N kernels")
    parser.add_argument("--step-prefix", default="ProfilerStep#",
                        help="name prefix of the step ranges (PyTorch: ProfilerStep#)")
    parser.add_argument("--expect-name", action="append", default=[], metavar="NAME",
                        help="an event with exactly this name must exist (repeatable)")
    parser.add_argument("--expect-name-hex", action="append", default=[], metavar="HEX",
                        help="the same, the name given as the hex of its UTF-8 bytes")
    parser.add_argument("--allow-unmatched-starts", action="store_true",
                        help="accept 's' flows without 'f', as PyTorch writes for synchronisations")
    parser.add_argument("--layered", action="store_true",
                        help="PyTorch's layering: steps unmirrored, only user_annotation mirrored, "
                             "cpu_op input keys, outer slices first")
    parser.add_argument("--lanes-nest", action="store_true",
                        help="the GPU lanes' slices nest too, as Perfetto needs")
    opts = parser.parse_args()

    try:
        with open(opts.trace, encoding="utf-8") as f:
            trace = json.load(f)
    except (OSError, ValueError) as err:
        print(f"error: {opts.trace}: {err}")
        return 2

    c = Checker()
    check_top_level(trace, c)
    events = trace.get("traceEvents") if isinstance(trace.get("traceEvents"), list) else []
    categories = collections.Counter(e.get("cat") for e in events)
    for cat in filter(None, opts.require_categories.split(",")):
        c.expect(categories[cat] > 0, f"no event of category '{cat}'")
    check_durations(events, c)
    if not c.failures:  # the checks below rely on well-formed X events
        check_nesting(events, c)
        if opts.lanes_nest:
            check_nesting(events, c, GPU_CATEGORIES + ("gpu_user_annotation",))
        if opts.layered:
            check_layering(trace, events, c)
        check_gpu_args(events, c)
        check_flows(events, c, opts.allow_unmatched_starts)
        check_external_ids(events, c)
        check_lane_names(events, c)
        if opts.expect_kernels_per_step is not None:
            check_kernels_per_step(events, c, opts.expect_kernels_per_step, opts.step_prefix)
    names = {e.get("name") for e in events}
    wanted = opts.expect_name + [bytes.fromhex(h).decode("utf-8") for h in opts.expect_name_hex]
    for name in wanted:
        c.expect(name in names, f"no event named {name!r}")

    for failure in c.failures:
        print(f"error: {failure}")
    if c.failures:
        return 1
    summary = ", ".join(f"{n} {cat}" for cat, n in sorted(categories.items(), key=lambda kv: str(kv[0])) if cat)
    print(f"ok: {opts.trace}: {len(events)} events ({summary})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
