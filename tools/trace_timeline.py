#!/usr/bin/env python3
"""Draws one step of a trace we wrote (or any PyTorch profiler trace) as a timeline PNG.

    tools/trace_timeline.py TRACE.json WINDOW OUT.png [--title T] [--also TRACE2 WINDOW2 TITLE2]
                            [--label START END TEXT]...
    tools/trace_timeline.py traces/01_matmul_add/64_bf16_cold_eager.json ProfilerStep#3 step3.png
    tools/trace_timeline.py pytorch.trace.json kernels:5+5 forward.png

WINDOW is the name of a range (a step, ProfilerStep#3), or kernels:N+K for a trace without steps:
the K kernels from the N-th (counted from 0 in the order they ran), the CPU ops around their
launches, from the start of the outermost op around the first launch to the end of the outermost
op around the last. --also draws a second window (of the same or another trace) under the first,
on the same time scale: two traces side by side. --label names what fills a stretch of the first
window, START to END microseconds from its start (a gap with no event, a library's set-up): the
stretch shaded across the lanes, a double arrow over it and the text above the plot; repeat it
for several stretches (one that overlaps another goes on a line of its own).

Lanes from top to bottom, named as PyTorch's layers: the ranges by nesting depth, each lane named
by its category and names ("ProfilerStep (user_annotation)", "mlp_fwd (user_annotation)",
"ops (cpu_op)", nested ops "ops (cpu_op), level 2", ...); "CUDA API" (cuda_runtime,
cuda_driver); "GPU kernels" (kernel, gpu_memcpy, gpu_memset); the forward's GPU mirror
("GPU: mlp_fwd (gpu_user_annotation)"). An arrow joins each launch to its GPU work (the ac2g
flows). Long kernel names are shortened to what they are ("cuBLAS GEMM nvjet 256x128"), with the
full names in a key under the plot; a slice too narrow for its label has it beside the lane.
Times are microseconds from the start of the window. The words (lane names, the time axis) are
Korean when OUT.png's name ends in _ko.png (the Korean pages' figures); categories, op and kernel
names stay as the trace has them. Needs only Python and gnuplot: for a reader without a browser at
hand, or a figure in the docs.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unicodedata

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "compare"))
from common import StrictParser, hangul_font_missing, input_problem, out_file_problem, shown  # noqa: E402,E501 (the standard library only)

CPU_CATS = ("cpu_op", "user_annotation")
API_CATS = ("cuda_runtime", "cuda_driver")
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
MIRROR_CAT = "gpu_user_annotation"
KERNEL_WINDOW = re.compile(r"kernels:(\d+)\+(\d+)$")

# The picture, in pixels: 1400 wide; slice labels in a 7-point font, about 5.2 pixels a character
WIDTH = 1400
RIGHT = 20
CHAR_PX = 5.2
BOX_PX = 34       # a lane's slices
GAP_PX = 12       # between two lanes
LINE_PX = 12      # one line of labels beside a lane
TITLE_PX = 34
AXIS_PX = 46      # the tics and the axis label under the plot
KEY_PX = 13       # one line of the key
NOTE_PX = 30      # one line of --label: its text over its double arrow
NOTE_CHAR_PX = 6.2  # the labels' 9-point font
NOTE_SHADES = ("#fff3b0", "#e8e0f4", "#fde0dd")  # the stretches of --label, in turn
MAX_LINES = {"range": 3, "api": 2, "gpu": 3, "mirror": 1}
# colour index: user_annotation, cpu_op, CUDA API, kernel, memcpy/memset, GPU mirror
COLOUR = {"user_annotation": 1, "cpu_op": 2, "api": 3, "kernel": 4, "gpu_memcpy": 5, "gpu_memset": 5,
          MIRROR_CAT: 6}
# the language of the words: "ko" when the PNG's name ends in _ko.png (main sets it)
LANG = "en"


def T(en, ko):
    """The words in the figure's language."""
    return ko if LANG == "ko" else en


def text_width(text):
    """The width of text in Latin letters: a Hangul syllable (East Asian wide) is about two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def fail(msg):
    sys.stderr.write(f"trace_timeline: error: {shown(msg)}\n")
    sys.exit(1)


def end(e):
    return e["ts"] + e["dur"]


def step_bounds(spans, path, step):
    steps = [e for e in spans if e["name"] == step]
    if not steps:
        fail(f"no range named {step!r} in {path}")
    return steps[0]["ts"], end(steps[0]), T(f"the start of {step}", f"{step} 시작")


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
            T(f"the first CPU op of kernels {first} to {last}", f"커널 {first}~{last}의 첫 CPU 연산 시작"))


def load_window(path, window):
    """The CPU ranges and API calls inside the window, and the GPU work they launched (with the
    GPU mirrors of the ranges inside the window)."""
    try:
        with open(path, encoding="utf-8") as f:
            events = json.load(f)["traceEvents"]
        spans = [e for e in events if e.get("ph") == "X" and "dur" in e]
        for e in spans:
            e["ts"], e["dur"] = float(e["ts"]), float(e["dur"])
            str(e["name"])
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    except (ValueError, KeyError, TypeError, AttributeError):  # UnicodeDecodeError and JSON's errors too
        fail(f"{path} is not a trace: JSON with a traceEvents list of events, each with ts, dur and name")
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
    # a mirror carries the External id of its user_annotation
    ranges = {e["args"]["External id"] for e in inside_cpu
              if e.get("cat") == "user_annotation" and "External id" in e.get("args", {})}
    gpu += [e for e in spans if e.get("cat") == MIRROR_CAT and e.get("args", {}).get("External id") in ranges]
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


def range_lane_names(ranges, depth):
    """A name for each depth, from the categories and names of its ranges: a lane of steps is
    "ProfilerStep (user_annotation)", a lane of one range name "mlp_fwd (user_annotation)", the
    lanes of ops "ops (cpu_op)", then "ops (cpu_op), level 2", ..."""
    by_depth = {}
    for e in ranges:
        by_depth.setdefault(depth[id(e)], []).append(e)
    names, op_level = {}, 0
    for d in sorted(by_depth):
        cats = sorted({e.get("cat") for e in by_depth[d]}, key=CPU_CATS.index)
        kinds = sorted({re.sub(r"#\d+$", "", e["name"]) for e in by_depth[d]})
        if cats == ["cpu_op"]:
            op_level += 1
            level = T(f", level {op_level}", f", {op_level}층") if op_level > 1 else ""
            names[d] = T("ops", "연산") + " (cpu_op)" + level
        elif len(kinds) == 1 and len(kinds[0]) <= 24:
            names[d] = f"{kinds[0]} ({', '.join(cats)})"
        else:
            names[d] = T("ranges", "범위") + f" ({', '.join(cats)})"
    return names


def gpu_lane_name(gpu):
    cats = {e.get("cat") for e in gpu}
    parts = [w for c, w in (("gpu_memcpy", "memcpy"), ("gpu_memset", T("memsets", "memset"))) if c in cats]
    if "kernel" not in cats:
        return "GPU " + ", ".join(parts)
    return T("GPU kernels", "GPU 커널") + "".join(", " + w for w in parts)


def short_names(name):
    """What a kernel is, for its slice, longest first: cuBLAS's nvjet_* and sm90_xmma_* GEMMs by
    their tile ("cuBLAS GEMM nvjet 256x128", "GEMM nvjet 256x128", "GEMM 256x128"), ATen's
    elementwise kernels by their functor, copies and memsets by their direction; any other name
    as it is."""
    m = re.match(r"nvjet_sm\d+_\w+?_(\d+x\d+)_", name)
    if m:
        words = name.split("_")
        extra = (" split-K" if "splitK" in words else "") + (" +bias" if "bias" in words else "")
        tile = m.group(1) + extra
        return ["cuBLAS GEMM nvjet " + tile, "GEMM nvjet " + tile, "GEMM " + tile]
    m = re.match(r"sm\d+_xmma_gemm\w*?tilesize(\d+x\d+)", name)
    if m:
        return ["cuBLAS GEMM xmma " + m.group(1), "GEMM xmma " + m.group(1), "GEMM " + m.group(1)]
    m = re.match(r"(?:void )?cutlass\w*?(\d+x\d+)_", name)
    if m:
        return ["CUTLASS GEMM " + m.group(1), "GEMM " + m.group(1)]
    if "splitKreduce" in name:
        return ["cuBLAS split-K reduce", "split-K reduce"]
    m = re.match(r"void at::native::(\w+?)_kernel", name)
    if m:
        op = re.search(r"CUDAFunctor_(\w+?)<|(\w+?)Functor<|::(\w+?)CUDAKernelImpl", name[len(m.group(0)):])
        what = next((" " + g.lower() for g in op.groups() if g), "") if op else ""
        kind = m.group(1).replace("_", " ")
        return ["ATen " + kind + what, "ATen " + kind.split()[-1] + what] + (["ATen" + what] if what else [])
    m = re.match(r"(Memcpy \w+|Memset) \(", name)
    if m:
        return [m.group(1)]
    m = re.match(r"## Call (CompiledFxGraph) \w+ ##$", name)
    if m:
        return ["Call " + m.group(1)]
    return [name]


def short_name(name):
    return short_names(name)[0]


def word_cuts(label, most):
    """The label cut after whole words (at '_', ' ', ':', '<', '(', ','), each with "...",
    longest first, none longer than `most` characters: never a cut inside a word."""
    cuts = [m.start() for m in re.finditer(r"[_ :<(,]", label)]
    return [label[:c].rstrip(" _:,") + "..." for c in reversed(cuts)
            if c >= 4 and len(label[:c].rstrip(" _:,")) + 3 <= most]


def label_of(name, width_px):
    """(the label inside the slice, or None; the label to put beside the lane when it does not
    fit): the longest of the short names that fits, else a name cut after a whole word, of 12
    characters at least."""
    names = short_names(name)
    fits = int((width_px - 6) / CHAR_PX)
    beside = names[0] if len(names[0]) <= 48 else next(iter(word_cuts(names[0], 48)), names[0][:45] + "...")
    inside = next((n for n in names if len(n) <= fits), None)
    if inside is None:
        inside = next((c for c in word_cuts(names[0], fits) if len(c) >= 12), None)
    return inside, beside


def panel(path, window, title):
    """One window as lanes of slices, and arrows from launch calls to GPU work."""
    t0, cpu, gpu, origin = load_window(path, window)
    ranges = [e for e in cpu if e.get("cat") in CPU_CATS]
    depth = depth_of(ranges)
    names = range_lane_names(ranges, depth)
    lanes = [{"name": names[d], "kind": "range", "side": "above", "slices": []} for d in sorted(names)]
    index = {d: i for i, d in enumerate(sorted(names))}
    for e in ranges:
        lanes[index[depth[id(e)]]]["slices"].append((e["ts"] - t0, end(e) - t0, e["name"], COLOUR[e["cat"]]))
    api = {"name": "CUDA API", "kind": "api", "side": "above",
           "slices": [(e["ts"] - t0, end(e) - t0, e["name"], COLOUR["api"]) for e in cpu if e.get("cat") in API_CATS]}
    work = [e for e in gpu if e.get("cat") in GPU_CATS]
    mirrors = [e for e in gpu if e.get("cat") == MIRROR_CAT]
    lanes.append(api)
    api_lane = len(lanes) - 1
    gpu_lane = None
    if work:
        lanes.append({"name": gpu_lane_name(work), "kind": "gpu", "side": "below",
                      "slices": [(e["ts"] - t0, end(e) - t0, e["name"], COLOUR[e["cat"]]) for e in work]})
        gpu_lane = len(lanes) - 1
    if mirrors:
        kinds = sorted({short_name(e["name"]) for e in mirrors})
        lanes.append({"name": f"GPU: {kinds[0] if len(kinds) == 1 else T('ranges', '범위')} ({MIRROR_CAT})",
                      "kind": "mirror", "side": "below",
                      "slices": [(e["ts"] - t0, end(e) - t0, e["name"], COLOUR[MIRROR_CAT]) for e in mirrors]})
    corr_start = {e["args"]["correlation"]: e["ts"] - t0 for e in cpu
                  if e.get("cat") in API_CATS and "correlation" in e.get("args", {})}
    arrows = [(corr_start[e["args"]["correlation"]], e["ts"] - t0) for e in work]
    return {"title": title or window, "origin": origin, "lanes": lanes, "arrows": arrows,
            "api_lane": api_lane, "gpu_lane": gpu_lane}


def place_labels(lane, px_per_us, x_max):
    """Each slice's label inside it when it fits, else on a line beside the lane (above it for
    the CPU lanes, under it for the GPU's), on the first line where it overlaps no other label;
    a label that finds no line within the lane's allowance is left out (the trace has it).
    Returns (inside labels, beside labels as (line, start, text), lines used, shortened names)."""
    inside, beside, line_end, shortened = [], [], [], {}
    for s, t, name, _ in sorted(lane["slices"]):
        fit, text = label_of(name, (t - s) * px_per_us)
        # the key names a kernel shown shortened or cut ("Memset" for "Memset (Device)" needs none)
        shown = fit or text
        if lane["kind"] == "gpu" and shown != name and (shown.endswith("...") or not name.startswith(shown)):
            shortened.setdefault(short_name(name), name)
        if fit:
            inside.append(((s + t) / 2, fit))
            continue
        width = (len(text) * CHAR_PX * 1.15 + 8) / px_per_us  # room to spare: a wide letter
        start = max(0.0, min((s + t - width) / 2, x_max - width))
        for line in range(MAX_LINES[lane["kind"]]):
            if line == len(line_end):
                line_end.append(-1e30)
            if line_end[line] <= start:
                line_end[line] = start + width
                beside.append((line, start, text))
                break
    return inside, beside, len(line_end), shortened


def key_lines(shortened, chars):
    """The key under a panel: each shortened kernel label and the name it stands for."""
    lines = []
    for label, name in sorted(shortened.items()):
        line = f"{label} = {name}"
        if len(line) > chars:
            cut = word_cuts(line, chars)
            line = cut[0] if cut else line[:chars - 3] + "..."
        lines.append(line)
    return lines


def gp_string(text):
    """text as a gnuplot string expression: each line in single quotes, where nothing is special
    but a quote, written twice, and the lines joined by "\\n" (a script's line ends its command).
    In double quotes a quote, a backslash or a backtick in a name or title would end the string or
    run a command."""
    return '."\\n".'.join("'" + line.replace("'", "''") + "'" for line in text.split("\n"))


def as_file(path):
    """gnuplot reads an output name starting with '|' as a command to write to."""
    return path if os.path.isabs(path) else os.path.join(".", path)


def place_notes(notes, px_per_us, x_max):
    """Each --label's line above the lanes: the first where its text and arrow overlap no other's.
    Returns [(line, start, end, text x, text)] and the number of lines."""
    placed, line_end = [], []
    for s, t, text in sorted(notes):
        width = (text_width(text) * NOTE_CHAR_PX * 1.1 + 8) / px_per_us
        x = max(0.0, min((s + t - width) / 2, x_max - width))
        lo, hi = min(s, x), max(t, x + width)
        line = next((i for i, e in enumerate(line_end) if e <= lo), len(line_end))
        if line == len(line_end):
            line_end.append(-1e30)
        line_end[line] = hi
        placed.append((line, s, t, x, text))
    return placed, len(line_end)


def layout(p, px_per_us, x_max, left):
    """Pixel rows of a panel's lanes, from the top of its plot area: its --label lines, then each
    lane's lines of labels above, its slices, its lines below. Fills p["rows"], p["plot_px"],
    p["key"], p["notes"]."""
    p["notes"], lines = place_notes(p.get("labels", []), px_per_us, x_max)
    y = 8 + lines * NOTE_PX
    rows = []
    shortened = {}
    for lane in p["lanes"]:
        inside, beside, lines, short = place_labels(lane, px_per_us, x_max)
        shortened.update(short)
        above = lines if lane["side"] == "above" else 0
        below = lines if lane["side"] == "below" else 0
        top = y + above * LINE_PX
        rows.append({"lane": lane, "top": top, "mid": top + BOX_PX / 2, "bottom": top + BOX_PX,
                     "inside": inside, "beside": beside})
        y = top + BOX_PX + below * LINE_PX + GAP_PX
    p["rows"], p["plot_px"] = rows, y
    p["key"] = key_lines(shortened, int((WIDTH - left - RIGHT) / CHAR_PX))


def main():
    ap = StrictParser(prog="trace_timeline", description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("window", help="a range's name (ProfilerStep#3) or kernels:N+K")
    ap.add_argument("png")
    ap.add_argument("--title", default="")
    ap.add_argument("--also", nargs=3, metavar=("TRACE2", "WINDOW2", "TITLE2"),
                    help="a second window drawn under the first, on the same time scale")
    ap.add_argument("--label", nargs=3, action="append", default=[], metavar=("START", "END", "TEXT"),
                    help="name the stretch START..END (microseconds from the first window's start)")

    def check(a):
        for flag, path in (("", a.trace), ("--also: ", a.also[0] if a.also else None)):
            problem = path is not None and input_problem(path)
            if problem:
                ap.error(flag + problem)
        if a.png is not None:
            if not a.png.endswith(".png"):
                ap.error(f"'{a.png}' does not name a .png file")
            problem = out_file_problem(a.png)
            if problem:
                ap.error(problem)
            problem = a.png.endswith("_ko.png") and hangul_font_missing()
            if problem:
                ap.error(problem)

        for start, stop, _ in a.label:
            try:
                ok = 0 <= float(start) < float(stop) < float("inf")
            except ValueError:
                ok = False
            if not ok:
                ap.error(f"--label {start} {stop}: START and END are microseconds, 0 <= START < END")

    ap.checks.append(check)
    a = ap.parse_args()
    global LANG
    LANG = "ko" if a.png.endswith("_ko.png") else "en"
    panels = [panel(a.trace, a.window, a.title)]
    panels[0]["labels"] = [(float(s), float(t), text) for s, t, text in a.label]
    if a.also:
        panels.append(panel(*a.also))
    span = max((t for p in panels for lane in p["lanes"] for _, t, _, _ in lane["slices"]), default=0)
    if span > 0:
        span = max([span] + [t for _, t, _ in panels[0]["labels"]])
    if span <= 0:
        fail("nothing to draw: the window%s holds no event" % ("s" if a.also else ""))
    x_max = span * 1.02
    # one left margin for every panel, wide enough for the longest lane name (9-point font):
    # the panels share their time axis pixel for pixel
    left = 24 + 6.6 * max(text_width(lane["name"]) for p in panels for lane in p["lanes"])
    px_per_us = (WIDTH - left - RIGHT) / x_max
    for p in panels:
        layout(p, px_per_us, x_max, left)
    heights = [TITLE_PX + p["plot_px"] + AXIS_PX + KEY_PX * len(p["key"]) + (8 if p["key"] else 0) for p in panels]
    total = sum(heights)

    def screen(px_from_top):
        return 1 - px_from_top / total

    if not shutil.which("gnuplot"):
        fail("gnuplot is required (not found on PATH)")
    try:
        tmp_dir = tempfile.TemporaryDirectory()
    except OSError as e:
        fail(f"cannot make a temporary folder (TMPDIR): {e.strerror}")
    with tmp_dir as tmp:
        script = os.path.join(tmp, "plot.gp")
        with open(script, "w") as f:
            f.write(f"""set terminal pngcairo size {WIDTH},{total} font "sans,9"
set output {gp_string(as_file(a.png))}
set grid xtics
set style fill solid 0.7 border rgb '#444444'
set palette defined (1 "#c6dbef", 2 "#9ecae1", 3 "#fdae6b", 4 "#74c476", 5 "#bdbdbd", 6 "#c7e9c0")
set cbrange [1:6]
unset colorbox
set xrange [0:{x_max:.4f}]
set lmargin at screen {left / WIDTH:.5f}
set rmargin at screen {1 - RIGHT / WIDTH:.5f}
set multiplot
""")
            top = 0
            for i, (p, h) in enumerate(zip(panels, heights)):
                data = os.path.join(tmp, f"boxes{i}.dat")
                plot_top = top + TITLE_PX
                axis = T("microseconds from " + p["origin"], p["origin"] + "부터 지난 시간 (µs)")
                f.write(f"""unset arrow
unset label
unset object
set tmargin at screen {screen(plot_top):.5f}
set bmargin at screen {screen(plot_top + p["plot_px"]):.5f}
set title {gp_string(p["title"])} noenhanced offset 0,-0.3
set xlabel {gp_string(axis)} noenhanced offset 0,0.4
set ytics ({", ".join(gp_string(r["lane"]["name"]) + f" {-r['mid']}" for r in p["rows"])}) noenhanced
set yrange [{-p["plot_px"]}:0]
""")
                # the slices, at least a pixel and a half wide so that the shortest shows
                least = 1.5 / px_per_us
                with open(data, "w") as d:
                    for r in p["rows"]:
                        for s, t, _, colour in r["lane"]["slices"]:
                            half = max(t - s, least) / 2
                            d.write(f"{s + half:.4f} {-r['mid']:.1f} {half:.4f} {BOX_PX / 2:.1f} {colour}\n")
                for r in p["rows"]:
                    for x, text in r["inside"]:
                        f.write(f"set label {gp_string(text)} at first {x:.4f},{-r['mid']:.1f} center "
                                "font 'sans,7' noenhanced front\n")
                    for line, x, text in r["beside"]:
                        y = (r["top"] - (line + 0.5) * LINE_PX - 1 if r["lane"]["side"] == "above"
                             else r["bottom"] + (line + 0.5) * LINE_PX + 1)
                        f.write(f"set label {gp_string(text)} at first {x:.4f},{-y:.1f} left offset 0.1,0 "
                                "font 'sans,7' noenhanced front\n")
                for k, (line, s, t, x, text) in enumerate(p["notes"]):
                    y = 8 + (line + 0.72) * NOTE_PX
                    f.write(f"set object rect from {s:.4f},{-y:.1f} to {t:.4f},{-p['plot_px']} "
                            f"fc rgb '{NOTE_SHADES[k % len(NOTE_SHADES)]}' fs solid 0.6 noborder behind\n")
                    f.write(f"set arrow from {s:.4f},{-y:.1f} to {t:.4f},{-y:.1f} heads lc rgb '#8c6d00' lw 1.2 "
                            "size screen 0.005,30 front\n")
                    f.write(f"set label {gp_string(text)} at first {x:.4f},{-(y - 11):.1f} left offset 0.1,0 "
                            "font 'sans,9' tc rgb '#5c4700' noenhanced front\n")
                if p["gpu_lane"] is not None:
                    api, gpu = p["rows"][p["api_lane"]], p["rows"][p["gpu_lane"]]
                    for s, t in p["arrows"]:
                        f.write(f"set arrow from {s:.4f},{-api['bottom']} to {t:.4f},{-gpu['top']} "
                                "lc rgb '#555555' lw 0.8 size screen 0.004,20\n")
                for j, line in enumerate(p["key"]):
                    y = plot_top + p["plot_px"] + AXIS_PX + KEY_PX * (j + 0.5)
                    f.write(f"set label {gp_string(line)} at screen {left / WIDTH:.5f},{screen(y):.5f} "
                            "left font 'sans,7' noenhanced\n")
                f.write(f"plot {gp_string(data)} using 1:2:3:4:5 with boxxyerror lc palette notitle\n")
                top += h
            f.write("unset multiplot\n")
        proc = subprocess.run(["gnuplot", script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              errors="replace")
        if proc.returncode != 0:
            fail("gnuplot failed (status %d): %s" % (proc.returncode, (proc.stdout.strip().splitlines() or [""])[-1]))


if __name__ == "__main__":
    main()
