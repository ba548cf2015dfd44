#!/usr/bin/env python3
"""Draws one step of a trace we wrote (or any PyTorch profiler trace) as a timeline PNG.

    tools/trace_timeline.py TRACE.json STEP_NAME OUT.png [--title T]
    tools/trace_timeline.py traces/01_matmul_add/64_bf16_cold_eager.json ProfilerStep#3 step3.png

Rows from top to bottom: our ranges by nesting depth (user_annotation), the CUDA runtime and driver
calls (cuda_runtime, cuda_driver), then the GPU (kernel, gpu_memcpy, gpu_memset); an arrow from
each launch to its GPU work (the ac2g flows). Times are microseconds from the start of the step.
Needs only Python and gnuplot: for a reader without a browser at hand, or a figure in the docs.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

CPU_CATS = ("cpu_op", "user_annotation")
API_CATS = ("cuda_runtime", "cuda_driver")
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def load_step(path, step):
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    spans = [e for e in events if e.get("ph") == "X" and "dur" in e]
    steps = [e for e in spans if e["name"] == step]
    if not steps:
        sys.exit(f"trace_timeline: no range named {step!r} in {path}")
    t0, t1 = steps[0]["ts"], steps[0]["ts"] + steps[0]["dur"]
    inside_cpu = [e for e in spans if e.get("cat") in CPU_CATS + API_CATS and t0 <= e["ts"] <= t1]
    # GPU work belongs to the step when the call that launched it lies inside the step
    launched = {e["args"]["correlation"] for e in inside_cpu
                if e.get("cat") in API_CATS and "correlation" in e.get("args", {})}
    gpu = [e for e in spans if e.get("cat") in GPU_CATS and e.get("args", {}).get("correlation") in launched]
    return t0, inside_cpu, gpu


def depth_of(ranges):
    """Nesting depth of each range (ranges sorted by start, longest first)."""
    stack, depth = [], {}
    for e in sorted(ranges, key=lambda e: (e["ts"], -e["dur"])):
        while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"]:
            stack.pop()
        depth[id(e)] = len(stack)
        stack.append(e)
    return depth


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("step")
    ap.add_argument("png")
    ap.add_argument("--title", default="")
    a = ap.parse_args()

    t0, cpu, gpu = load_step(a.trace, a.step)
    ranges = [e for e in cpu if e.get("cat") in CPU_CATS]
    depth = depth_of(ranges)
    n_range_rows = 1 + max(depth.values(), default=0)
    api_row = n_range_rows
    gpu_row = n_range_rows + 1
    rows = []  # (row, start, end, label, colour index)
    for e in ranges:
        rows.append((depth[id(e)], e["ts"] - t0, e["ts"] - t0 + e["dur"], e["name"], 1))
    for e in cpu:
        if e.get("cat") in API_CATS:
            rows.append((api_row, e["ts"] - t0, e["ts"] - t0 + e["dur"], e["name"], 2))
    corr_start = {e["args"]["correlation"]: e["ts"] - t0 for e in cpu
                  if e.get("cat") in API_CATS and "correlation" in e.get("args", {})}
    arrows = []
    for e in gpu:
        rows.append((gpu_row, e["ts"] - t0, e["ts"] - t0 + e["dur"], e["name"], 3))
        arrows.append((corr_start[e["args"]["correlation"]], e["ts"] - t0))

    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "boxes.dat")
        span = max(t for _, _, t, _, _ in rows)
        with open(data, "w") as f:
            for row, s, t, name, colour in rows:
                # slices too narrow for their name stay unlabelled; the trace itself has them all
                label = name if len(name) <= 30 else name[:27] + "..."
                if (t - s) < span * 0.007 * min(len(label), 20):
                    label = ""
                f.write(f"{(s + t) / 2:.3f} {-row:.1f} {(t - s) / 2:.3f} 0.35 {colour} \"{label}\" {s:.3f}\n")
        script = os.path.join(tmp, "plot.gp")
        labels = [f'"{"range depth " + str(r)}" {-r}' for r in range(n_range_rows)]
        labels += [f'"CUDA API" {-api_row}', f'"GPU" {-gpu_row}']
        with open(script, "w") as f:
            f.write(f"""set terminal pngcairo size 1400,{260 + 70 * (gpu_row + 1)} font "sans,9"
set output "{a.png}"
set title "{a.title or a.step}" noenhanced
set xlabel "microseconds from the start of {a.step}"
set ytics ({", ".join(labels)})
set yrange [{-gpu_row - 0.8}:0.8]
set grid xtics
set style fill solid 0.6 border -1
set palette defined (1 "#9ecae1", 2 "#fdae6b", 3 "#74c476")
unset colorbox
""")
            for s, t in arrows:
                f.write(f"set arrow from {s:.3f},{-api_row - 0.35} to {t:.3f},{-gpu_row + 0.35} lc rgb '#555555' lw 0.8\n")
            f.write(f"""plot "{data}" using 1:2:3:4:5 with boxxyerror lc palette notitle, \\
     "" using 7:2:6 with labels left offset 0.2,0 font "sans,7" noenhanced notitle
""")
        subprocess.run(["gnuplot", script], check=True)


if __name__ == "__main__":
    main()
