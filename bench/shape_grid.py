#!/usr/bin/env python3
"""shape_grid.py: the fusion ladder, our GEMM and PyTorch across LLM MLP shapes, in one CSV.

  ./run 04_fused_mlp --shapes                         every model and token count below
  ./run 04_fused_mlp --shapes --models 4096x11008 --tokens 13,1200
  python3 bench/shape_grid.py --out docs/results/h200/shape_grid --models 768x3072

The chapters measure one shape, the article's: 64 x 128 tokens, 768 -> 3072. A reader's model
is another shape, and which rung wins, how close our GEMM comes to cuBLAS and how far PyTorch is
behind all change with it. Per point (dim, hidden, tokens), in bf16:

  ours      bin/04_fused_mlp --variant ladder --gemm all: every rung in alternating rounds (the
            ladder's own table), cuBLAS's plain [Wg; Wu] GEMM next to every version of our GEMM,
            the version --gemm auto picks, the floor, SM clock and power. Every rung and every
            version is checked against the CPU reference in the same run (a failed check stops
            the grid).
  PyTorch   compare/grid_torch.py, one process for the whole grid: eager, torch.compile, graph (eager's forward
            captured once in a CUDA graph by hand and replayed) and max-autotune (up to 16 tokens also
            reduce-overhead and max-autotune with CUDA graphs), each checked against a float64 forward, then
            timed with the number of forwards back to back our ladder used, 5 rounds that alternate its modes.
  rounds    --rounds R (default 2): ours, PyTorch, ours, PyTorch...; a column is the median over
            the rounds, so both sides share the clocks of the moment.

Models: the article's 768 -> 3072, LLaMA-7B's 4096 -> 11008, LLaMA-3-8B's 4096 -> 14336, and one
of eight tensor-parallel shards of LLaMA-2-70B's MLP, 8192 -> 3584. Tokens: 1, 8, 16 (decode),
128, 512, 2048, 8192, 32768 (prefill).

Floors: bin/ceilings measures this GPU once per --out folder, first (<out>/ceilings/, ceilings.log).

Resumable: the CSVs are rewritten after every point, and a point already in <out>/shape_grid.csv
(with PyTorch's columns, unless --no-torch) is kept, not run again. --budget-s S starts no new
point after S seconds, so a long grid runs in pieces.

Writes, in --out (default traces/shape_grid):
  shape_grid.csv         one row per point: dim,hidden,tokens,floor_us,eager_us,fused_geglu_us,merged_us,epilogue_us,
                         graph_us,decode_us,cublas_gemm_us,our_gemm_us,our_gemm_version,torch_eager_us,torch_compile_us,
                         torch_graph_us,torch_best_us,sm_mhz,watts (us per forward back to back; our_gemm: the version
                         --gemm auto picks; torch_best_us: the fastest PyTorch mode, graph included; sm_mhz and watts:
                         the median over every row of the point, both sides)
  shape_grid_rows.csv    every timed row of every round: dim,hidden,tokens,round,side,row,us,sm_mhz,watts
  shape_grid_gemm.csv    every GEMM version at every point: dim,hidden,tokens,version,name,us,tflops,pct_cublas,picked
  points/<dim>x<hidden>_<tokens>/  each run's output (ladder and GEMM CSVs, the log of each round)
  heat_gemm.png, heat_torch.png, heat_floor.png   our GEMM / cuBLAS, best rung / best PyTorch and
                         best rung / floor (time ratios), with gnuplot; each also as *_ko.png, words in Korean
Then bench/grid_shortfalls.py <out>/shape_grid.csv lists the points short of the targets.
Exit status: 0 done, 1 bad input or a failed check, 2 waived (no usable GPU).
"""
import argparse
import csv
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "compare"))
from common import EXIT_BAD_INPUT, EXIT_WAIVED, StrictParser, hangul_font_missing, input_problem, out_problem, shown, whole  # noqa: E402,E501 (the standard library only)
from shapes import token_list  # noqa: E402
MODELS = ((768, 3072), (4096, 11008), (4096, 14336), (8192, 3584))
TOKENS = (1, 8, 16, 128, 512, 2048, 8192, 32768)
COLUMNS = ("dim", "hidden", "tokens", "floor_us", "eager_us", "fused_geglu_us", "merged_us", "epilogue_us",
           "graph_us", "decode_us", "cublas_gemm_us", "our_gemm_us", "our_gemm_version", "torch_eager_us",
           "torch_compile_us", "torch_graph_us", "torch_best_us", "sm_mhz", "watts")
ROW_COLUMNS = ("dim", "hidden", "tokens", "round", "side", "row", "us", "sm_mhz", "watts")
GEMM_COLUMNS = ("dim", "hidden", "tokens", "version", "name", "us", "tflops", "pct_cublas", "picked")
RUNGS = ("eager", "fused_geglu", "merged", "epilogue", "graph", "decode")
# "our GEMM: version 6, pingpong (--gemm auto: ...)": the version the epilogue rung ran.
PICKED = re.compile(r"^our GEMM: version (\d+),", re.M)


def error(message, code=EXIT_BAD_INPUT):
    sys.stderr.write("shape_grid: error: %s\n" % shown(message))
    sys.exit(code)


def model_list(text):
    models = []
    for part in text.split(","):
        m = re.fullmatch(r"([0-9]{1,6})x([0-9]{1,7})", part)
        if not m or not 1 <= int(m.group(1)) <= 65536 or not 1 <= int(m.group(2)) <= 262144:
            raise argparse.ArgumentTypeError("'%s' is not a comma-separated list of DIMxHIDDEN "
                                             "(dim 1..65536, hidden 1..262144), e.g. 768x3072" % text)
        models.append((int(m.group(1)), int(m.group(2))))
    if len(set(models)) != len(models):
        raise argparse.ArgumentTypeError("'%s' repeats a model" % text)
    return models


def parse_args(argv):
    p = StrictParser(prog="shape_grid",
                     description="the fusion ladder, our GEMM and PyTorch across LLM MLP shapes, one CSV")
    p.add_argument("--models", type=model_list, default=list(MODELS),
                   help="DIMxHIDDEN,... (default %s)" % ",".join("%dx%d" % m for m in MODELS))
    p.add_argument("--tokens", type=token_list, default=list(TOKENS),
                   help="token counts (default %s)" % ",".join(map(str, TOKENS)))
    p.add_argument("--rounds", type=whole(1, 9), default=2, help="rounds that alternate ours and PyTorch (default 2)")
    p.add_argument("--seed", type=whole(0, 2**31 - 1), default=1234, help="seed of the random inputs (default 1234)")
    p.add_argument("--out", default="traces/shape_grid", help="output directory (default traces/shape_grid)")
    p.add_argument("--budget-s", type=whole(1, 10**7), default=None,
                   help="start no new point after this many seconds (the rest resumes next time)")
    p.add_argument("--no-torch", action="store_true", help="our side only; PyTorch's columns stay empty")
    p.add_argument("--no-plot", action="store_true", help="the CSVs only, no heat maps")
    p.add_argument("--plot-only", action="store_true", help="run nothing: redraw the heat maps from <out>'s CSV")
    p.add_argument("--stage", default="bin/04_fused_mlp", help=argparse.SUPPRESS)  # the tests' stand-in
    p.add_argument("--ceilings", default="bin/ceilings", help=argparse.SUPPRESS)  # likewise
    p.add_argument("--torch-worker", default="compare/grid_torch.py", help=argparse.SUPPRESS)  # PyTorch's stand-in

    def check(args):
        if args.plot_only and args.no_plot:
            p.error("--plot-only and --no-plot leave nothing to do")
        problem = out_problem(args.out)
        if problem:
            p.error("--out: %s" % problem)
        if args.plot_only and not os.path.isdir(args.out):
            p.error("--out: %s has no shape_grid.csv to draw (no such folder)" % args.out)

    p.checks.append(check)
    return p.parse_args(argv)


def key_of(row):
    return (int(row["dim"]), int(row["hidden"]), int(row["tokens"]))


def read_csv(path, columns, older=()):
    """The rows of a CSV we wrote before ([] when there is none; an `older` header's with the columns it lacks
    empty); anything else (another header, a row without its point, not text, not a file) is bad input."""
    if not os.path.lexists(path):
        return []
    problem = input_problem(path)
    if problem:
        error("%s; move it away or give another --out" % problem)
    try:
        with open(path, newline="", encoding="utf-8") as f:
            r = csv.DictReader(f)
            if tuple(r.fieldnames or ()) != columns and tuple(r.fieldnames or ()) not in older:
                error("%s has the header %s, not this grid's; move it away or give another --out"
                      % (path, ",".join(r.fieldnames or ())[:200]))
            rows = [{**{c: "" for c in columns}, **row} for row in r]
        for row in rows:
            key_of(row)
    except (UnicodeDecodeError, csv.Error, ValueError, TypeError):
        error("%s is not a CSV of this grid (not text, or a row without its dim, hidden and tokens); "
              "move it away or give another --out" % path)
    except OSError as e:
        error("%s: %s" % (path, e.strerror))
    return rows


def write_csv(path, columns, rows):
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        for row in rows:
            w.writerow({c: fmt(row.get(c)) for c in columns})
    os.replace(tmp, path)


def fmt(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return "%.3f" % v if v == v else ""
    return str(v)


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def number(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if v == v else None


# ---- ours -------------------------------------------------------------------------------------

def run_ours(args, dim, hidden, tokens, folder, rnd):
    """One ladder run with --gemm all: {"rows": {rung: (us, mhz, w)}, "floor", "forwards", "gemm", "picked"}."""
    cmd = [args.stage, "--variant", "ladder", "--gemm", "all", "--batch", str(tokens), "--seq", "1",
           "--dim", str(dim), "--hidden", str(hidden), "--dtype", "bf16", "--seed", str(args.seed),
           "--no-trace", "--no-plot", "--out", folder]
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with open(os.path.join(folder, "round%d.log" % rnd), "w") as f:
        f.write("$ %s\n%s" % (" ".join(cmd), proc.stdout))
    if proc.returncode == EXIT_WAIVED:
        last = (proc.stdout.strip().splitlines() or ["exit status 2"])[-1]
        print("shape_grid: waived: %s" % last)
        sys.exit(EXIT_WAIVED)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-3000:])
        error("%s exited with status %d (its output: %s/round%d.log)" % (" ".join(cmd), proc.returncode, folder, rnd))
    stem = "%dx1_%dx%d_bf16" % (tokens, dim, hidden)
    ladder = os.path.join(folder, "ladder_%s.csv" % stem)
    gemm = os.path.join(folder, "gemm_versions_%s.csv" % stem)
    picked = PICKED.findall(proc.stdout)
    for path in (ladder, gemm):
        if not os.path.exists(path):
            error("%s wrote no %s (its output: %s/round%d.log)" % (args.stage, path, folder, rnd))
    if not picked:
        error("%s printed no 'our GEMM: version N' line (its output: %s/round%d.log)" % (args.stage, folder, rnd))
    out = {"rows": {}, "floor": None, "forwards": None, "gemm": {}, "picked": int(picked[0])}
    with open(ladder, newline="") as f:
        for row in csv.DictReader(f):
            out["rows"][row["variant"]] = (number(row["fwd_us"]), number(row["sm_mhz"]), number(row["power_w"]))
            out["floor"] = out["floor"] or number(row["floor_us"])
            out["forwards"] = out["forwards"] or number(row.get("forwards"))
    with open(gemm, newline="") as f:
        for row in csv.DictReader(f):
            out["gemm"][int(row["version"])] = (row["name"], number(row["us"]))
    if not out["forwards"]:
        error("%s has no forwards column" % ladder)
    return out


# ---- PyTorch ----------------------------------------------------------------------------------

class Torch:
    """compare/grid_torch.py, kept up for the whole grid; None answers once it is not there."""

    def __init__(self, worker):
        self.proc, self.why = None, ""
        try:  # (a worker given as an absolute path stays as it is)
            self.proc = subprocess.Popen([sys.executable, os.path.join(ROOT, worker)], cwd=ROOT,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        except OSError as e:
            self.why = str(e)

    def ask(self, command):
        if self.proc is None:
            return None
        try:
            self.proc.stdin.write(json.dumps(command) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except (BrokenPipeError, OSError):
            line = ""
        if not line:
            code = self.proc.wait()
            self.why = "PyTorch's side ended (exit status %d%s)" % (code, ": no PyTorch or no GPU" if code == 2 else "")
            self.proc = None
            return None
        answer = json.loads(line)
        if "error" in answer:
            error("PyTorch: %s" % answer["error"])
        return answer

    def close(self):
        if self.proc is not None:
            try:
                self.proc.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
                self.proc.stdin.close()
            except OSError:
                pass
            self.proc.wait()
            self.proc = None


# ---- one point --------------------------------------------------------------------------------

def run_point(args, torch, dim, hidden, tokens):
    folder = os.path.join(args.out, "points", "%dx%d_%d" % (dim, hidden, tokens))
    os.makedirs(folder, exist_ok=True)
    compiled = torch.ask({"cmd": "point", "dim": dim, "hidden": hidden, "tokens": tokens,
                          "seed": args.seed}) if torch else None
    if compiled:
        print("  PyTorch compiled %s in %s s, relative errors %s" % (
            ", ".join(compiled["modes"]), ", ".join("%g" % compiled["compile_s"][m] for m in compiled["modes"]),
            ", ".join("%.2e" % compiled["rel_err"][m] for m in compiled["modes"])))
    rows, ours, theirs = [], [], []
    for rnd in range(1, args.rounds + 1):
        o = run_ours(args, dim, hidden, tokens, folder, rnd)
        ours.append(o)
        for name, (us, mhz, w) in o["rows"].items():
            rows.append({"dim": dim, "hidden": hidden, "tokens": tokens, "round": rnd, "side": "ours", "row": name,
                         "us": us, "sm_mhz": mhz, "watts": w})
        t = torch.ask({"cmd": "time", "forwards": int(o["forwards"]), "rounds": 5}) if compiled else None
        if t:
            theirs.append(t)
            for mode, us in t["us"].items():
                rows.append({"dim": dim, "hidden": hidden, "tokens": tokens, "round": rnd, "side": "torch",
                             "row": mode, "us": us, "sm_mhz": t["sm_mhz"][mode], "watts": t["watts"][mode]})
    point = {"dim": dim, "hidden": hidden, "tokens": tokens, "floor_us": median(o["floor"] for o in ours)}
    for rung in RUNGS:
        point[rung + "_us"] = median(o["rows"].get(rung, (None,))[0] for o in ours)
    picked = ours[0]["picked"]
    point["cublas_gemm_us"] = median(o["gemm"].get(0, ("", None))[1] for o in ours)
    point["our_gemm_us"] = median(o["gemm"].get(picked, ("", None))[1] for o in ours)
    point["our_gemm_version"] = picked
    if theirs:
        modes = list(theirs[0]["us"])
        per_mode = {m: median(t["us"][m] for t in theirs) for m in modes}
        point["torch_eager_us"] = per_mode.get("eager")
        point["torch_compile_us"] = per_mode.get("compile")
        point["torch_graph_us"] = per_mode.get("graph")
        # every mode, the hand-captured graph included
        point["torch_best_us"] = min((v for v in per_mode.values() if v is not None), default=None)
    point["sm_mhz"] = median(r["sm_mhz"] for r in rows)
    point["watts"] = median(r["watts"] for r in rows)
    gemm_rows = []
    for v, (name, _) in sorted(ours[0]["gemm"].items()):
        us = median(o["gemm"].get(v, ("", None))[1] for o in ours)
        pct = 100.0 * point["cublas_gemm_us"] / us if us and point["cublas_gemm_us"] else None
        flops = 2.0 * tokens * dim * 2.0 * hidden  # the [gate | up] GEMM
        gemm_rows.append({"dim": dim, "hidden": hidden, "tokens": tokens, "version": v, "name": name, "us": us,
                          "tflops": flops / (us * 1e-6) / 1e12 if us else None, "pct_cublas": pct,
                          "picked": int(v == picked)})
    return point, rows, gemm_rows


def measure_ceilings(args):
    """The floors divide by this machine's ceilings: bin/ceilings measures them once per grid
    folder and keeps them in <out>/ceilings/ with the CSVs, so that every piece of a grid run in
    pieces uses the same; the stage finds them through CEILINGS_DIR. Without bin/ceilings or a GPU
    the stage uses its reference figures and says so on its third line."""
    folder = os.path.join(args.out, "ceilings")
    os.environ["CEILINGS_DIR"] = folder
    if os.path.isdir(folder) and os.listdir(folder):
        print("shape grid: the ceilings measured before, in %s" % folder)
        return
    tool = args.ceilings if os.path.isabs(args.ceilings) else os.path.join(ROOT, args.ceilings)
    if not os.access(tool, os.X_OK):
        print("shape grid: %s not built (make ceilings): the floors use reference ceilings" % args.ceilings)
        return
    os.makedirs(folder, exist_ok=True)
    p = subprocess.run([tool], capture_output=True, text=True)
    with open(os.path.join(args.out, "ceilings.log"), "w") as f:
        f.write(p.stdout + p.stderr)
    print("shape grid: bin/ceilings %s" % ("measured this GPU's ceilings (ceilings.log)" if p.returncode == 0 else
                                          "exited %d (ceilings.log): the floors use reference ceilings" % p.returncode))


def probe_gpu(args):
    """Exit 2 (waived) before anything is written when the stage finds no usable GPU: one tiny
    run of it into a temporary folder."""
    try:
        scratch = tempfile.mkdtemp(prefix="shape_grid_probe.")
    except OSError as e:
        error("cannot make a temporary folder (TMPDIR): %s" % e.strerror)
    try:
        proc = subprocess.run([args.stage, "--variant", "eager", "--batch", "1", "--seq", "1", "--dim", "64",
                               "--hidden", "64", "--dtype", "bf16", "--no-trace", "--no-plot", "--no-check",
                               "--wait", "0", "--warmup-steps", "0", "--active", "1", "--out", scratch],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if proc.returncode == EXIT_WAIVED:
        last = (proc.stdout.strip().splitlines() or ["exit status 2"])[-1]
        print("shape_grid: waived: %s" % last)
        sys.exit(EXIT_WAIVED)


def summary_line(p):
    ours = [(p[r + "_us"], r) for r in RUNGS if p.get(r + "_us")]
    best_us, best = min(ours)
    parts = ["best rung %s %.1f us" % (best, best_us), "floor %.1f" % p["floor_us"] if p["floor_us"] else "floor -"]
    if p.get("cublas_gemm_us") and p.get("our_gemm_us"):
        parts.append("our GEMM v%d %.0f%% of cuBLAS" % (p["our_gemm_version"],
                                                        100.0 * p["cublas_gemm_us"] / p["our_gemm_us"]))
    if p.get("torch_best_us"):
        parts.append("best PyTorch %.1f us (ours %.2fx)" % (p["torch_best_us"], best_us / p["torch_best_us"]))
    if p.get("torch_graph_us"):
        parts.append("PyTorch graph %.1f us" % p["torch_graph_us"])
    if p.get("sm_mhz"):
        parts.append("%.0f MHz %.0f W" % (p["sm_mhz"], p["watts"] or 0))
    return ", ".join(parts)


# ---- heat maps --------------------------------------------------------------------------------

# (name, English title, Korean title, value): each drawn as name.png and, for the Korean pages,
# name_ko.png
HEAT_MAPS = (
    ("heat_gemm", "our GEMM / cuBLAS's plain [Wg; Wu] GEMM (time; under 1: ours faster)",
     "우리 GEMM / cuBLAS의 평범한 [Wg; Wu] GEMM (시간; 1 미만이면 우리가 빠름)",
     lambda p: ratio(p.get("our_gemm_us"), p.get("cublas_gemm_us"))),
    ("heat_torch", "best rung / best PyTorch (time per forward; under 1: ours faster)",
     "가장 빠른 단 / 가장 빠른 PyTorch (forward당 시간; 1 미만이면 우리가 빠름)",
     lambda p: ratio(best_rung(p), p.get("torch_best_us"))),
    ("heat_floor", "best rung / floor (time per forward; 1: at the floor)",
     "가장 빠른 단 / 하한 (forward당 시간; 1이면 하한)",
     lambda p: ratio(best_rung(p), p.get("floor_us"))),
)


def ratio(a, b):
    return a / b if a and b else None


def best_rung(p):
    values = [p.get(r + "_us") for r in RUNGS if p.get(r + "_us")]
    return min(values) if values else None


def parsed(row):
    """A grid row with numbers for values, read back from the CSV or as run_point made it."""
    ints = ("dim", "hidden", "tokens", "our_gemm_version")
    return {c: (int(float(v)) if v not in ("", None) else None) if c in ints else
            (v if isinstance(v, float) else number(v)) for c, v in row.items()}


def plot_heat_maps(out, points, gpu):
    """Three PNGs with gnuplot (common/plots/grid_heatmap.gp); a missing gnuplot is one line."""
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        print("plot: gnuplot not found; CSV files written, no PNG (install gnuplot)")
        return
    models = sorted({(p["dim"], p["hidden"]) for p in points})
    tokens = sorted({p["tokens"] for p in points})
    no_hangul = hangul_font_missing()
    if no_hangul:
        print("plot: %s; the English heat maps only" % no_hangul)
    suffixes = ("",) if no_hangul else ("", "_ko")  # _ko: the Korean words
    for name, title, title_ko, value_of in HEAT_MAPS:
        cells = [(tokens.index(p["tokens"]), models.index((p["dim"], p["hidden"])), value_of(p), p) for p in points]
        cells = [c for c in cells if c[2] is not None]
        if not cells:
            print("%s: no point has the values it needs; no PNG" % name)
            continue
        data = os.path.join(out, name + ".csv")
        with open(data, "w") as f:
            f.write("x,y,value,tokens,model\n")
            for x, y, v, p in cells:
                f.write("%d,%d,%.4f,%d,%dx%d\n" % (x, y, v, p["tokens"], p["dim"], p["hidden"]))
        for suffix in suffixes:
            words = title_ko if suffix else title
            png = os.path.join(out, name + suffix + ".png")
            full_title = "%s, bf16, %s" % (words, gpu) if gpu else words + ", bf16"
            proc = subprocess.run([gnuplot, "-c", os.path.join(ROOT, "common", "plots", "call.gp"),
                                   "grid_heatmap.gp", data, png, full_title],
                                  cwd=os.path.join(ROOT, "common", "plots"), stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
            if proc.returncode == 0:
                print("wrote %s" % png)
            else:
                print("plot: gnuplot failed on %s: %s" % (data, proc.stdout.strip().splitlines()[-1:]))


def gpu_name(rows_dir):
    """The GPU's name from the first round log that names it, for the plot titles."""
    for root, _, files in os.walk(rows_dir):
        for name in sorted(files):
            if name.endswith(".log") and os.path.isfile(os.path.join(root, name)):
                with open(os.path.join(root, name), errors="replace") as f:
                    m = re.search(r"^== comparison: [^,]+, (.+)$", f.read(), re.M)
                if m:
                    return m.group(1).strip()
    return ""


# The header of a grid from before PyTorch's graph mode: read with torch_graph_us empty, so that its
# points are run again for PyTorch's columns (unless --no-torch), and written back with the column.
COLUMNS_BEFORE_GRAPH = tuple(c for c in COLUMNS if c != "torch_graph_us")


def main(argv):
    args = parse_args(argv)
    if not os.path.isabs(args.out):
        args.out = os.path.join(os.getcwd(), args.out)
    if args.plot_only:
        grid = read_csv(os.path.join(args.out, "shape_grid.csv"), COLUMNS, (COLUMNS_BEFORE_GRAPH,))
        if not grid:
            error("%s has no shape_grid.csv to draw" % args.out)
        try:
            points = [parsed(p) for p in grid]
        except (ValueError, TypeError):
            error("%s/shape_grid.csv holds a value that is not a number" % args.out)
        plot_heat_maps(args.out, points, gpu_name(os.path.join(args.out, "points")))
        return 0
    stage = args.stage if os.path.isabs(args.stage) else os.path.join(ROOT, args.stage)
    if not os.path.isfile(stage) or not os.access(stage, os.X_OK):
        error("%s is not built (make 04_fused_mlp)" % args.stage)
    args.stage = stage
    # Everything is read and checked before anything is made: the CSVs of an earlier piece, then
    # the GPU (a waiver leaves --out as it was).
    paths = {n: os.path.join(args.out, "shape_grid%s.csv" % s) for n, s in (("grid", ""), ("rows", "_rows"),
                                                                             ("gemm", "_gemm"))}
    grid = {key_of(r): r for r in read_csv(paths["grid"], COLUMNS, (COLUMNS_BEFORE_GRAPH,))}
    rows = read_csv(paths["rows"], ROW_COLUMNS)
    gemm = read_csv(paths["gemm"], GEMM_COLUMNS)
    for name in ("points", "ceilings"):
        folder = os.path.join(args.out, name)
        if os.path.lexists(folder) and not os.path.isdir(folder):
            error("%s is not a directory; move it away or give another --out" % folder)
    # a point is run again for PyTorch's columns when they are missing, the graph mode's included
    todo = [(d, h, t) for d, h in args.models for t in args.tokens
            if (d, h, t) not in grid or (not args.no_torch and not (grid[(d, h, t)]["torch_best_us"]
                                                                  and grid[(d, h, t)]["torch_graph_us"]))]
    if todo:
        probe_gpu(args)
    print("shape grid: %d points asked, %d already in %s, %d to run" % (
        len(args.models) * len(args.tokens), len(args.models) * len(args.tokens) - len(todo), paths["grid"],
        len(todo)))
    if todo:
        os.makedirs(args.out, exist_ok=True)
        measure_ceilings(args)
    torch = None if args.no_torch or not todo else Torch(args.torch_worker)
    start = time.monotonic()
    try:
        for i, (dim, hidden, tokens) in enumerate(todo):
            if args.budget_s is not None and time.monotonic() - start > args.budget_s:
                print("shape grid: --budget-s %d spent; %d points left for the next run" % (args.budget_s,
                                                                                              len(todo) - i))
                break
            t0 = time.monotonic()
            print("[%d/%d] %d -> %d, %d tokens" % (i + 1, len(todo), dim, hidden, tokens), flush=True)
            point, new_rows, gemm_rows = run_point(args, torch, dim, hidden, tokens)
            key = (dim, hidden, tokens)
            grid[key] = point
            rows = [r for r in rows if key_of(r) != key] + new_rows
            gemm = [r for r in gemm if key_of(r) != key] + gemm_rows
            order = sorted(grid, key=lambda k: (k[0], k[1], k[2]))
            write_csv(paths["grid"], COLUMNS, [grid[k] for k in order])
            write_csv(paths["rows"], ROW_COLUMNS, rows)
            write_csv(paths["gemm"], GEMM_COLUMNS, gemm)
            print("  %s (%.0f s)" % (summary_line(point), time.monotonic() - t0), flush=True)
            if torch is not None and torch.proc is None and torch.why:
                print("  PyTorch's columns stay empty: %s" % torch.why)
                torch.why = ""
    finally:
        if torch is not None:
            torch.close()
    print("wrote %s, %s, %s" % (paths["grid"], paths["rows"], paths["gemm"]))
    if not args.no_plot and grid:
        plot_heat_maps(args.out, [parsed(p) for p in grid.values()], gpu_name(os.path.join(args.out, "points")))
    print("points short of the targets: python3 bench/grid_shortfalls.py %s" % paths["grid"])
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:  # Ctrl-C: the CSVs hold every point finished; no trace
        sys.stderr.write("shape_grid: interrupted\n")
        sys.exit(130)
