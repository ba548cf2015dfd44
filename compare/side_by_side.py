#!/usr/bin/env python3
"""side_by_side.py: our runs and PyTorch's in one table and one plot.

  python3 compare/side_by_side.py --ours traces/03_simple_mlp/1x8_768x3072_bf16_cold_eager.csv \\
      --torch traces/03_simple_mlp/1x8_768x3072_bf16_cold_eager_torch.csv \\
      --log ours.log --log torch.log --png traces/03_simple_mlp/side_by_side.png

One row per run: ours (every variant our stage ran) and PyTorch's (eager, compile and graph under
--torch-variant all; graph, the eager forward replayed from a CUDA graph, lists eager's kernels,
all launched by one cudaGraphLaunch).
Each run is its per-step CSV (step,phase,cpu_us,gpu_us,gated); next to it, under the same name
with .json, its trace (ours from the stage's trace pass, PyTorch's from torch.profiler: one
schema). Per run, over the active steps:
  cpu_us       median host time to issue one step
  gpu_us       median CUDA-event time of the step (ours: gated, the GPU work alone; PyTorch:
               includes the gaps its CPU leaves when it is the slower side)
  kernel_us    median sum of kernel durations per step, from the trace: no gaps on either side
  b2b_us       time per step issued back to back (200 without waiting), from the run's log
  kernels      kernels per step (and memcpy / memset operations), from the trace
and then the kernels of one step, in launch order. The plot (common/plots/side_by_side.gp) draws
per-step cpu_us and gpu_us of the first of our runs and the first of PyTorch's.
The table also goes to side_by_side.txt next to the PNG. Standard library only.
"""
import csv
import os
import re
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def active_medians(path):
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = [r for r in csv.DictReader(f) if r.get("phase") == "active"]
        medians = (statistics.median(float(r["cpu_us"]) for r in rows),
                   statistics.median(float(r["gpu_us"]) for r in rows)) if rows else None
    except (UnicodeDecodeError, csv.Error, ValueError, TypeError, KeyError):
        medians = rows = None
    except OSError as e:
        common.fail("%s: %s" % (common.shown(path), e.strerror))
    if not rows:
        common.fail("%s has no active steps (columns step,phase,cpu_us,gpu_us,gated expected)" % common.shown(path))
    return medians + (len(rows),)


def back_to_back(logs):
    """tag -> back-to-back us, from the '== <tag>: ...' and 'back to back: X us' lines that our
    stages and the compare scripts both print."""
    found, tag = {}, None
    for path in logs:
        with open(path, errors="replace") as f:
            for line in f:
                m = re.match(r"== (\S+):", line)
                if m:
                    tag = m.group(1)
                m = re.match(r"back to back: ([0-9.]+) us", line)
                if m and tag:
                    found[tag] = float(m.group(1))
    return found


def describe(side, csv_path, b2b):
    tag = os.path.basename(csv_path)[:-4]
    cpu, gpu, n = active_medians(csv_path)
    steps = common.kernels_per_step(csv_path[:-4] + ".json")
    return {
        "side": side, "tag": tag, "cpu": cpu, "gpu": gpu, "n": n, "b2b": b2b.get(tag),
        "kernel_us": statistics.median(s["kernel_us"] for s in steps) if steps else None,
        "kernels": common.describe_counts(steps) if steps else "n/a (no trace)",
        "names": steps[-1]["kernels"] if steps else None,
    }


def table(runs):
    def num(v):
        return "%.2f" % v if v is not None else "n/a"

    width = max(len(r["tag"]) for r in runs)
    lines = ["%-6s %-*s %10s %10s %10s %10s  %s" % ("", width, "run (medians over active steps)", "cpu_us",
                                                   "gpu_us", "kernel_us", "b2b_us", "kernels per step")]
    for r in runs:
        lines.append("%-6s %-*s %10s %10s %10s %10s  %s" % (r["side"], width, r["tag"], num(r["cpu"]),
                                                            num(r["gpu"]), num(r["kernel_us"]), num(r["b2b"]),
                                                            r["kernels"]))
    lines.append("")
    for r in runs:
        lines.append("%s %s, kernels of one step in launch order:" % (r["side"], r["tag"]))
        if r["names"] is None:
            lines.append("  (no trace: run without --no-trace to list them)")
        elif not r["names"]:
            lines.append("  (none: the step launched no kernel)")
        lines.extend("  %d. %s" % (i + 1, common.short_name(k)) for i, k in enumerate(r["names"] or []))
    return "\n".join(lines)


def plot(ours, theirs, png, title):
    if not shutil.which("gnuplot"):
        print("plot: gnuplot not found, no PNG (the table above is the result)")
        return
    script = os.path.join(REPO, "common", "plots", "side_by_side.gp")
    tmp = "%s.tmp.%d.png" % (png[:-4], os.getpid())

    def literal(text):
        """text as a gnuplot string: in single quotes nothing is special but a quote, written twice."""
        return "'" + text.replace("'", "''") + "'"

    def as_file(path):
        """gnuplot reads a name starting with '<' or '|' as a command, '-' and '+' as special files."""
        return path if os.path.isabs(path) else os.path.join(".", path)

    settings = "csv1=%s; csv2=%s; label1=%s; label2=%s; png=%s; title=%s" % (
        literal(as_file(ours["path"])), literal(as_file(theirs["path"])), literal("ours: " + ours["tag"]),
        literal("PyTorch: " + theirs["tag"]), literal(as_file(tmp)), literal(title))
    rc = subprocess.call(["gnuplot", "-e", settings, script])
    if rc == 0 and os.path.exists(tmp):
        os.replace(tmp, png)
        print("wrote %s" % png)
    else:
        if os.path.exists(tmp):
            os.remove(tmp)
        print("plot: gnuplot failed (status %d), no PNG" % rc)


def main():
    p = common.StrictParser(prog="compare/side_by_side.py", description=__doc__.splitlines()[0])
    p.add_argument("--ours", nargs="+", required=True, metavar="CSV", help="our runs' CSV files")
    p.add_argument("--torch", nargs="+", required=True, metavar="CSV", help="PyTorch's runs' CSV files")
    p.add_argument("--log", action="append", default=[], metavar="FILE",
                   help="stdout of a run, for the back-to-back figures (repeatable)")
    p.add_argument("--png", help="the plot (and the table as .txt next to it)")
    p.add_argument("--title", default="ours vs PyTorch", help="plot title")

    def check(args):
        for flag, paths in (("--ours", args.ours), ("--torch", args.torch), ("--log", args.log)):
            for path in paths or ():
                problem = common.input_problem(path)
                if problem:
                    p.error("%s: %s" % (flag, problem))
                if flag != "--log":
                    trace = path[:-4] + ".json"
                    if not path.endswith(".csv"):
                        p.error("%s: %s is not a .csv file" % (flag, common.shown(path)))
                    if os.path.lexists(trace) and common.input_problem(trace):
                        p.error("%s: %s" % (flag, common.input_problem(trace)))
        if args.png is not None:
            if not args.png.endswith(".png"):
                p.error("--png must name a .png file")
            problem = common.out_file_problem(args.png)
            if problem:
                p.error("--png: %s" % problem)

    p.checks.append(check)
    args = p.parse_args()
    for path in args.ours + args.torch:  # each must be a per-step CSV, read whole before writing anything
        active_medians(path)
    for path in args.log:
        try:
            with open(path, "rb") as f:
                f.read().decode("utf-8")
        except UnicodeDecodeError:
            common.fail("--log: %s is not text" % common.shown(path))
        except OSError as e:
            common.fail("--log: %s: %s" % (common.shown(path), e.strerror))

    b2b = back_to_back(args.log)
    runs = [describe("ours", c, b2b) for c in args.ours] + [describe("torch", c, b2b) for c in args.torch]
    for r, path in zip(runs, args.ours + args.torch):
        r["path"] = path
    text = table(runs)
    print(text)
    if args.png:
        txt = args.png[:-4] + ".txt"
        tmp = "%s.tmp.%d" % (txt, os.getpid())
        with open(tmp, "w") as f:
            f.write(args.title + "\n\n" + text + "\n")
        os.replace(tmp, txt)
        print("wrote %s" % txt)
        plot(runs[0], runs[len(args.ours)], args.png, args.title)
    return 0


if __name__ == "__main__":
    sys.exit(main())
