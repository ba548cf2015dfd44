#!/usr/bin/env python3
"""Draws one step of a trace we wrote (or any PyTorch profiler trace) as a timeline PNG.

    tools/trace_timeline.py TRACE.json WINDOW OUT.png [--title T] [--also TRACE2 WINDOW2 TITLE2]
    tools/trace_timeline.py traces/01_matmul_add/64_bf16_cold_eager.json ProfilerStep#3 step3.png
    tools/trace_timeline.py pytorch.trace.json kernels:5+5 forward.png

WINDOW is the name of a range (a step, ProfilerStep#3), or kernels:N+K for a trace without steps:
the K kernels from the N-th (counted from 0 in the order they ran), the CPU ops around their
launches, from the start of the outermost op around the first launch to the end of the outermost
op around the last. --also draws a second window (of the same or another trace) under the first,
on the same time scale: two traces side by side.

Rows from top to bottom: the ranges by nesting depth (user_annotation, cpu_op), the CUDA runtime
and driver calls (cuda_runtime, cuda_driver), then the GPU (kernel, gpu_memcpy, gpu_memset); an
arrow from each launch to its GPU work (the ac2g flows). Times are microseconds from the start of
the window. Needs only Python and gnuplot: for a reader without a browser at hand, or a figure in
the docs.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

CPU_CATS = ("cpu_op", "user_annotation")
API_CATS = ("cuda_runtime", "cuda_driver")
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
# the width of one label character, as a share of the time axis (7-point font, 1400 pixels)
CHAR_WIDTH = 0.005
KERNEL_WINDOW = re.compile(r"kernels:(\d+)\+(\d+)$")


def fail(msg):
    sys.exit(f"trace_timeline: error: {msg}")


def end(e):
    return e["ts"] + e["dur"]


def step_bounds(spans, path, step):
    steps = [e for e in spans if e["name"] == step]
    if not steps:
        fail(f"no range named {step!r} in {path}")
    return steps[0]["ts"], end(steps[0]), f"the start of {step}"


def kernel_bounds(spans, path, first, count):
    """From the outermost CPU op around the launch of kernel `first` to the end of the outermost
    op around the launch of kernel first+count-1."""
    kernels = sorted((e for e in spans if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    if count < 1 or first + count > len(kernels):
        fail(f"kernels:{first}+{count}: {path} has {len(kernels)} kernels")
    launches = {e["args"]["correlation"]: e for e in spans
                if e.get("cat") in API_CATS and "correlation" in e.get("args", {})}
    ranges = [e for e in spans if e.get("cat") in CPU_CATS]

    def outermost(kernel):
        call = launches.get(kernel.get("args", {}).get("correlation"))
        if call is None:
            fail(f"no launch call for kernel {kernel['name']!r} in {path}")
        around = [r for r in ranges if r.get("tid") == call.get("tid")
                  and r["ts"] <= call["ts"] and end(call) <= end(r)]
        return max(around, key=lambda r: r["dur"], default=call)

    last = first + count - 1
    return (outermost(kernels[first])["ts"], end(outermost(kernels[last])),
            f"the first CPU op of kernels {first} to {last}")


def load_window(path, window):
    """The CPU ranges and API calls inside the window, and the GPU work they launched."""
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    spans = [e for e in events if e.get("ph") == "X" and "dur" in e]
    m = KERNEL_WINDOW.match(window)
    if m:
        t0, t1, origin = kernel_bounds(spans, path, int(m.group(1)), int(m.group(2)))
    else:
        t0, t1, origin = step_bounds(spans, path, window)
    inside_cpu = [e for e in spans if e.get("cat") in CPU_CATS + API_CATS and t0 <= e["ts"] <= t1]
    # GPU work belongs to the window when the call that launched it lies inside the window
    launched = {e["args"]["correlation"] for e in inside_cpu
                if e.get("cat") in API_CATS and "correlation" in e.get("args", {})}
    gpu = [e for e in spans if e.get("cat") in GPU_CATS and e.get("args", {}).get("correlation") in launched]
    return t0, inside_cpu, gpu, origin


def depth_of(ranges):
    """Nesting depth of each range (ranges sorted by start, longest first)."""
    stack, depth = [], {}
    for e in sorted(ranges, key=lambda e: (e["ts"], -e["dur"])):
        while stack and end(stack[-1]) <= e["ts"]:
            stack.pop()
        depth[id(e)] = len(stack)
        stack.append(e)
    return depth


def gp_string(text):
    """text as a gnuplot string expression: each line in single quotes, where nothing is special
    but a quote, written twice, and the lines joined by "\\n" (a script's line ends its command).
    In double quotes a quote, a backslash or a backtick in a name or title would end the string or
    run a command."""
    return '."\\n".'.join("'" + line.replace("'", "''") + "'" for line in text.split("\n"))


def as_file(path):
    """gnuplot reads an output name starting with '|' as a command to write to."""
    return path if os.path.isabs(path) else os.path.join(".", path)


def panel(path, window, title):
    """One window as boxes (row, start, end, label, colour index), arrows and row labels."""
    t0, cpu, gpu, origin = load_window(path, window)
    ranges = [e for e in cpu if e.get("cat") in CPU_CATS]
    depth = depth_of(ranges)
    n_range_rows = 1 + max(depth.values(), default=0)
    api_row = n_range_rows
    gpu_row = n_range_rows + 1
    boxes = []
    for e in ranges:
        boxes.append((depth[id(e)], e["ts"] - t0, end(e) - t0, e["name"], 1))
    for e in cpu:
        if e.get("cat") in API_CATS:
            boxes.append((api_row, e["ts"] - t0, end(e) - t0, e["name"], 2))
    corr_start = {e["args"]["correlation"]: e["ts"] - t0 for e in cpu
                  if e.get("cat") in API_CATS and "correlation" in e.get("args", {})}
    arrows = []
    for e in gpu:
        boxes.append((gpu_row, e["ts"] - t0, end(e) - t0, e["name"], 3))
        arrows.append((corr_start[e["args"]["correlation"]], e["ts"] - t0))
    labels = [f'"range depth {r}" {-r}' for r in range(n_range_rows)]
    labels += [f'"CUDA API" {-api_row}', f'"GPU" {-gpu_row}']
    return {"title": title or window, "origin": origin, "boxes": boxes, "arrows": arrows,
            "labels": labels, "api_row": api_row, "gpu_row": gpu_row}


def write_boxes(path, boxes, span):
    with open(path, "w") as f:
        for row, s, t, name, colour in boxes:
            # a name is cut to the width of its slice, and a slice too narrow for 8 characters
            # stays unlabelled; the trace itself has them all
            fits = int((t - s) / (span * CHAR_WIDTH))
            label = name if len(name) <= fits else name[:fits - 3] + "..." if fits >= 8 else ""
            f.write(f"{(s + t) / 2:.3f} {-row:.1f} {(t - s) / 2:.3f} 0.35 {colour} \"{label}\" {s:.3f}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("window", help="a range's name (ProfilerStep#3) or kernels:N+K")
    ap.add_argument("png")
    ap.add_argument("--title", default="")
    ap.add_argument("--also", nargs=3, metavar=("TRACE2", "WINDOW2", "TITLE2"),
                    help="a second window drawn under the first, on the same time scale")
    a = ap.parse_args()

    panels = [panel(a.trace, a.window, a.title)]
    if a.also:
        panels.append(panel(*a.also))
    span = max(t for p in panels for _, _, t, _, _ in p["boxes"])
    heights = [260 + 70 * (p["gpu_row"] + 1) for p in panels]

    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "plot.gp")
        with open(script, "w") as f:
            f.write(f"""set terminal pngcairo size 1400,{sum(heights)} font "sans,9"
set output {gp_string(as_file(a.png))}
set grid xtics
set style fill solid 0.6 border -1
set palette defined (1 "#9ecae1", 2 "#fdae6b", 3 "#74c476")
unset colorbox
set xrange [0:{span * 1.02:.3f}]
set multiplot
""")
            top = sum(heights)
            for i, (p, h) in enumerate(zip(panels, heights)):
                data = os.path.join(tmp, f"boxes{i}.dat")
                write_boxes(data, p["boxes"], span)
                top -= h
                f.write(f"""unset arrow
set origin 0,{top / sum(heights):.4f}
set size 1,{h / sum(heights):.4f}
set title {gp_string(p["title"])} noenhanced
set xlabel {gp_string("microseconds from " + p["origin"])} noenhanced
set ytics ({", ".join(p["labels"])})
set yrange [{-p["gpu_row"] - 0.8}:0.8]
""")
                for s, t in p["arrows"]:
                    f.write(f"set arrow from {s:.3f},{-p['api_row'] - 0.35} to {t:.3f},{-p['gpu_row'] + 0.35} "
                            "lc rgb '#555555' lw 0.8\n")
                f.write(f"""plot {gp_string(data)} using 1:2:3:4:5 with boxxyerror lc palette notitle, \\
     "" using 7:2:6 with labels left offset 0.2,0 font "sans,7" noenhanced notitle
""")
            f.write("unset multiplot\n")
        subprocess.run(["gnuplot", script], check=True)


if __name__ == "__main__":
    main()
