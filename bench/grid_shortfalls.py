#!/usr/bin/env python3
"""grid_shortfalls.py: the points of a shape grid that fall short of the speed targets.

  python3 bench/grid_shortfalls.py [SHAPE_GRID_CSV]

SHAPE_GRID_CSV is the CSV bench/shape_grid.py writes: by default traces/shape_grid/shape_grid.csv,
where ./run 04_fused_mlp --shapes puts it; the H200's grid is
docs/results/h200/shape_grid/shape_grid.csv. One line per point and target missed:
  gemm       from 128 tokens, our GEMM (the version --gemm auto picks) at least as fast as
             cuBLAS's plain [Wg; Wu] GEMM
  epilogue   from 17 tokens, the epilogue rung no slower than the merged rung
  stream     up to 16 tokens, the weight-streaming rung (decode) at 88% of the floor or better
             where the weights are 250 MB or more and at 4096 -> 11008 and 4096 -> 14336, at 85%
             from 50 MB; never slower than the graph rung
  small      the article's model (768 -> 3072) from 1 to 512 tokens: the best rung at 60% of the
             floor or better; at its 8 tokens 6.0 us or less
  wide       4096 wide at 128 tokens: the best rung at 85% of the floor or better
  graph      the graph rung within 1% of the best rung that is not a graph
  pytorch    the best rung at most 0.85x the best PyTorch where the floor is under 500 us, 0.95x
             where it is 500 us or more (both sides held by the power cap); the best PyTorch is
             the fastest of its modes, the hand-captured CUDA graph of its eager forward
             (torch_graph_us) included. A CSV from before that mode (no torch_graph_us column)
             is still read, and said once to leave the graph out of its best PyTorch
A target whose columns are empty at a point (no PyTorch there, say) is said once per point as
"not measured". Where shape_grid_rows.csv lies beside the CSV (every round of every rung), a
comparison of two rungs that misses by less than the larger of their round-to-round ranges is
marked "within the rounds' spread": a target missed by noise. Exit status: 0 no point short,
1 some point short, noise included (or bad input).
"""
import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "compare"))
from common import StrictParser, input_problem, shown  # noqa: E402 (the standard library only)

COLUMNS_NEEDED = ("dim", "hidden", "tokens", "floor_us", "eager_us", "fused_geglu_us", "merged_us", "epilogue_us",
                  "graph_us", "decode_us", "cublas_gemm_us", "our_gemm_us", "torch_best_us")
NOT_GRAPH = ("eager_us", "fused_geglu_us", "merged_us", "epilogue_us", "decode_us")
BF16_BYTES = 2
DEFAULT_CSV = "traces/shape_grid/shape_grid.csv"  # bench/shape_grid.py's --out default, as ./run runs it


def value(row, column):
    text = row.get(column, "")
    try:
        v = float(text)
    except ValueError:
        return None
    return v if v == v else None


def round_ranges(path):
    """{(dim, hidden, tokens): {rung column: max - min over the rounds}} of our rows, or {}."""
    ranges = {}
    if not os.path.exists(path):
        return ranges
    seen = {}
    with open(path, newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            us = value(r, "us")
            if r.get("side") != "ours" or us is None:
                continue
            key = (int(r["dim"]), int(r["hidden"]), int(r["tokens"]))
            seen.setdefault(key, {}).setdefault(r["row"] + "_us", []).append(us)
    for key, rungs in seen.items():
        ranges[key] = {c: max(x) - min(x) for c, x in rungs.items()}
    return ranges


def noise_note(excess, spread_of, *columns):
    """' (within the rounds' spread, S us)' when a miss by excess us is smaller than the rungs' spread."""
    spread = max((spread_of.get(c, 0.0) for c in columns), default=0.0)
    return " (within the rounds' spread, %.2f us)" % spread if 0 < excess <= spread else ""


def shortfalls(row, spread_of=None):
    """(target, message) for each target this point misses; "not measured" ones too. spread_of:
    the point's round-to-round range per rung column, if known."""
    dim, hidden, tokens = int(row["dim"]), int(row["hidden"]), int(row["tokens"])
    v = {c: value(row, c) for c in COLUMNS_NEEDED[3:]}
    spread_of = spread_of or {}
    out = []
    if tokens >= 128:
        if v["our_gemm_us"] is None or v["cublas_gemm_us"] is None:
            out.append(("gemm", "not measured"))
        elif v["our_gemm_us"] > v["cublas_gemm_us"]:
            out.append(("gemm", "our GEMM %.1f us is %.1f%% of cuBLAS's speed (%.1f us)"
                        % (v["our_gemm_us"], 100 * v["cublas_gemm_us"] / v["our_gemm_us"], v["cublas_gemm_us"])))
    if tokens >= 17 and v["epilogue_us"] is not None and v["merged_us"] is not None \
            and v["epilogue_us"] > v["merged_us"]:
        out.append(("epilogue", "epilogue %.1f us slower than merged %.1f us%s" % (
            v["epilogue_us"], v["merged_us"],
            noise_note(v["epilogue_us"] - v["merged_us"], spread_of, "epilogue_us", "merged_us"))))
    if tokens <= 16:
        weights_mb = 3.0 * dim * hidden * BF16_BYTES / 1e6
        d, fl, g = v["decode_us"], v["floor_us"], v["graph_us"]
        if d is None:
            out.append(("stream", "not measured"))
        else:
            want = 0.88 if weights_mb >= 250 or (dim, hidden) in ((4096, 11008), (4096, 14336)) else 0.85
            if weights_mb >= 50 and fl and d > fl / want:
                out.append(("stream", "decode %.1f us is %.0f%% of the floor %.1f us (%.0f%% wanted: %.1f us)%s"
                            % (d, 100 * fl / d, fl, 100 * want, fl / want,
                               noise_note(d - fl / want, spread_of, "decode_us"))))
            if g is not None and d > g:
                out.append(("stream", "decode %.2f us slower than the graph rung %.2f us%s"
                            % (d, g, noise_note(d - g, spread_of, "decode_us", "graph_us"))))
    plain = [c for c in NOT_GRAPH if v[c] is not None]
    best_column = min(plain, key=lambda c: v[c], default=None)
    if v["graph_us"] is not None and best_column and v["graph_us"] > 1.01 * v[best_column]:
        other = v[best_column]
        out.append(("graph", "graph %.1f us, %.1f%% over the best other rung %.1f us%s"
                    % (v["graph_us"], 100 * (v["graph_us"] / other - 1), other,
                       noise_note(v["graph_us"] - 1.01 * other, spread_of, "graph_us", best_column))))
    best = min([v[c] for c in plain] + ([v["graph_us"]] if v["graph_us"] is not None else []), default=None)
    fl = v["floor_us"]
    if (dim, hidden) == (768, 3072) and tokens <= 512 and best is not None and fl and best > fl / 0.6:
        out.append(("small", "best rung %.1f us is %.0f%% of the floor %.1f us (60%% wanted: %.1f us)"
                    % (best, 100 * fl / best, fl, fl / 0.6)))
    if (dim, hidden, tokens) == (768, 3072, 8) and best is not None and best > 6.0:
        out.append(("small", "best rung %.2f us at the article's 8 tokens (6.0 wanted)" % best))
    if dim == 4096 and tokens == 128 and best is not None and fl and best > fl / 0.85:
        out.append(("wide", "best rung %.1f us is %.0f%% of the floor %.1f us (85%% wanted: %.1f us)"
                    % (best, 100 * fl / best, fl, fl / 0.85)))
    if v["torch_best_us"] is None or best is None:
        out.append(("pytorch", "not measured"))
    else:
        limit = 0.85 if (v["floor_us"] or 0) < 500 else 0.95
        if best > limit * v["torch_best_us"]:
            out.append(("pytorch", "best rung %.1f us is %.2fx the best PyTorch %.1f us (%.2fx wanted)"
                        % (best, best / v["torch_best_us"], v["torch_best_us"], limit)))
    return out


def fail(message):
    sys.stderr.write("grid_shortfalls: error: %s\n" % shown(message))
    sys.exit(1)


def main(argv):
    p = StrictParser(prog="grid_shortfalls", description=__doc__.split("\n\n", 2)[2].strip("\n"),
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("csv", metavar="SHAPE_GRID_CSV", nargs="?",
                   help="the shape_grid.csv of bench/shape_grid.py (default %s)" % DEFAULT_CSV)

    def check(args):
        if args.csv is not None:
            problem = input_problem(args.csv)
        elif args.help:
            problem = None
        elif not os.path.lexists(DEFAULT_CSV):
            problem = ("no SHAPE_GRID_CSV given and no %s (./run 04_fused_mlp --shapes writes it; or name a "
                       "grid's CSV, such as docs/results/h200/shape_grid/shape_grid.csv)" % DEFAULT_CSV)
        else:
            problem = input_problem(DEFAULT_CSV)
        if problem:
            p.error(problem)

    p.checks.append(check)
    path = p.parse_args(argv).csv or DEFAULT_CSV
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            missing = [c for c in COLUMNS_NEEDED if c not in (reader.fieldnames or ())]
            if missing:
                fail("%s has no column %s" % (path, ", ".join(missing)))
            no_graph = "torch_graph_us" not in reader.fieldnames
            rows = list(reader)
        for row in rows:
            (int(row["dim"]), int(row["hidden"]), int(row["tokens"]))
    except (UnicodeDecodeError, csv.Error, ValueError, TypeError):
        fail("%s is not a shape grid CSV (not text, or a point whose dim, hidden or tokens is not a whole number)"
             % path)
    except OSError as e:
        fail("%s: %s" % (path, e.strerror))
    if not rows:
        fail("%s has no points" % path)
    rows_path = os.path.join(os.path.dirname(path), "shape_grid_rows.csv")
    if os.path.lexists(rows_path) and input_problem(rows_path):
        fail(input_problem(rows_path))
    try:
        ranges = round_ranges(rows_path)
    except (UnicodeDecodeError, csv.Error, ValueError, TypeError, KeyError):
        fail("%s is not the rows CSV of a shape grid" % rows_path)
    if no_graph:
        print("note: %s has no torch_graph_us column (a grid from before PyTorch's graph mode): "
              "its best PyTorch leaves the hand-captured CUDA graph out" % shown(path))
    short = noise = 0
    for row in rows:
        key = (int(row["dim"]), int(row["hidden"]), int(row["tokens"]))
        for target, message in shortfalls(row, ranges.get(key)):
            print("%5s -> %-5s %6s tokens  %-8s %s" % (row["dim"], row["hidden"], row["tokens"], target, message))
            short += 1
            noise += "within the rounds' spread" in message
    print("%d points, %d shortfalls, %d of them within the rounds' spread" % (len(rows), short, noise))
    return 1 if short else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
