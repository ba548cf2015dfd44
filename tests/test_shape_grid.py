#!/usr/bin/env python3
"""bench/shape_grid.py and bench/grid_shortfalls.py on the CPU.

The grid drives bin/04_fused_mlp; here a stand-in stage (a small script given by the grid's
hidden --stage flag) writes the ladder and GEMM CSVs the real one writes, with times that depend
on the shape and the round, so that the grid's columns, its medians over rounds, its resume and
its budget can be checked without a GPU. PyTorch's side is a stand-in too (the grid's hidden
--torch-worker flag), answering for every mode, the hand-captured graph included; and it is tried
for real once: without PyTorch (or without a GPU) its columns must stay empty and the grid still
finish. A grid CSV from before the graph mode (no torch_graph_us column) must still be read.
One line per check: PASS/FAIL name.
"""
import csv
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import checks  # noqa: E402
from checks import report  # noqa: E402
GRID = os.path.join(ROOT, "bench", "shape_grid.py")
SHORT = os.path.join(ROOT, "bench", "grid_shortfalls.py")
HEADER = ("dim,hidden,tokens,floor_us,eager_us,fused_geglu_us,merged_us,epilogue_us,graph_us,decode_us,"
          "cublas_gemm_us,our_gemm_us,our_gemm_version,torch_eager_us,torch_compile_us,torch_graph_us,torch_best_us,"
          "sm_mhz,watts")
OLD_HEADER = HEADER.replace("torch_graph_us,", "")  # a grid from before PyTorch's graph mode

# The stand-in: a run's times are tokens / 8 + dim / 768 (+ 2 on its second call for a shape),
# one rung per row in the ladder's order, decode only up to 16 tokens; GEMM version 6 picked.
FAKE = r'''#!/usr/bin/env python3
import os, sys, time
a = dict(zip(sys.argv[1::2], sys.argv[2::2]))
if os.environ.get("FAKE_EXIT"):
    print("04_fused_mlp: waived: no GPU" if os.environ["FAKE_EXIT"] == "2" else "check: FAIL")
    sys.exit(int(os.environ["FAKE_EXIT"]))
time.sleep(float(os.environ.get("FAKE_SLEEP", "0")))
t, d, h = int(a["--batch"]), int(a["--dim"]), int(a["--hidden"])
calls = os.path.join(os.environ["FAKE_LOG"], "%dx%d_%d" % (d, h, t))
n = len(open(calls).read().split()) if os.path.exists(calls) else 0
open(calls, "a").write("call\n")
base = t / 8 + d / 768 + (2 if n % 2 else 0)
stem = "%dx1_%dx%d_bf16" % (t, d, h)
rows = [("eager", 5), ("fused_geglu", 4), ("merged", 3), ("epilogue", 2), ("graph", 1.5)]
if t <= 16:
    rows.append(("decode", 1))
with open(os.path.join(a["--out"], "ladder_%s.csv" % stem), "w") as f:
    f.write("variant,kernels,hbm_mb,fwd_us,step_us,tflops,pct_floor,speedup,floor_us,rel_err,sm_mhz,power_w,forwards\n")
    for name, k in rows:
        f.write("%s,2,1.0,%.3f,1.0,1.0,50,1.0,%.3f,1e-3,%d,%d,120\n" % (name, base * k, base * 0.5, 1700 + 10 * n, 500))
with open(os.path.join(a["--out"], "gemm_versions_%s.csv" % stem), "w") as f:
    f.write("version,name,us,tflops,pct_cublas,rel_err\n0,cublasLt,%.3f,1,100,NaN\n" % (base * 2))
    f.write("3,consumer,%.3f,1,90,1e-3\n6,pingpong,%.3f,1,110,1e-3\n7,stream_k,NaN,NaN,NaN,NaN\n" % (base * 2.2, base * 1.8))
print("== comparison: %s, Stand-in GPU" % stem)
print("our GEMM: version 6, pingpong (--gemm auto: measured now)")
'''

# The stand-in of compare/grid_torch.py: every mode grid_torch runs at the point's token count,
# at fixed times per forward: eager 50 us, compile 40, graph 20 (the fastest, so torch_best_us is
# the graph's), the decode modes 30; no NVML. It logs every command to FAKE_TORCH_LOG.
FAKE_TORCH = r'''#!/usr/bin/env python3
import json, os, sys
US = {"eager": 50.0, "compile": 40.0, "graph": 20.0, "reduce-overhead": 30.0, "max-autotune": 30.0,
      "max-autotune-no-cudagraphs": 35.0}
modes = []
for line in sys.stdin:
    c = json.loads(line)
    with open(os.environ["FAKE_TORCH_LOG"], "a") as f:
        f.write(c["cmd"] + "\n")
    if c["cmd"] == "quit":
        break
    if c["cmd"] == "point":
        modes = ["eager", "compile", "graph"] + (["reduce-overhead", "max-autotune"] if c["tokens"] <= 16
                                                 else ["max-autotune-no-cudagraphs"])
        a = {"modes": modes, "compile_s": {m: 1.0 for m in modes}, "rel_err": {m: 1e-3 for m in modes}}
    else:
        a = {"us": {m: US[m] for m in modes}, "sm_mhz": {m: None for m in modes}, "watts": {m: None for m in modes}}
    print(json.dumps(a), flush=True)
'''


def check(name, ok, detail=""):
    report(name, None if ok else detail or "failed")


def grid(args, env_extra=None):
    env = dict(os.environ, **(env_extra or {}))
    return subprocess.run([sys.executable, GRID] + args, cwd=ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env)


def rows_of(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main():
    tmp = tempfile.mkdtemp(prefix="shape_grid_test.")
    try:
        fake = os.path.join(tmp, "fake_stage")
        with open(fake, "w") as f:
            f.write(FAKE)
        os.chmod(fake, 0o755)
        log = os.path.join(tmp, "calls")
        os.makedirs(log)
        env = {"FAKE_LOG": log}
        out = os.path.join(tmp, "grid")
        base = ["--stage", fake, "--ceilings", os.path.join(tmp, "no_ceilings"), "--no-plot"]

        p = grid(base + ["--no-torch", "--models", "768x3072,4096x11008", "--tokens", "8,128", "--out", out], env)
        check("grid_runs", p.returncode == 0, p.stderr[-500:])
        with open(os.path.join(out, "shape_grid.csv")) as f:
            header = f.readline().strip()
        check("grid_header_exact", header == HEADER, header)
        rows = {(r["dim"], r["tokens"]): r for r in rows_of(os.path.join(out, "shape_grid.csv"))}
        check("grid_one_row_per_point", len(rows) == 4, str(sorted(rows)))
        r = rows.get(("768", "8"))
        # base = 8/8 + 1 = 2, then 4 on the second round: medians over the rounds are the means, 3
        check("grid_median_over_rounds", r is not None and float(r["epilogue_us"]) == 6.0
              and float(r["floor_us"]) == 1.5, str(r))
        check("grid_decode_up_to_16_tokens", r is not None and r["decode_us"] == "3.000"
              and rows[("768", "128")]["decode_us"] == "", str(rows.get(("768", "128"))))
        check("grid_gemm_is_the_picked_version", r is not None and r["our_gemm_version"] == "6"
              and float(r["our_gemm_us"]) == 5.4 and float(r["cublas_gemm_us"]) == 6.0, str(r))
        check("grid_clock_columns", r is not None and float(r["sm_mhz"]) == 1705 and float(r["watts"]) == 500, str(r))
        check("grid_torch_columns_empty", r is not None and r["torch_best_us"] == "" and r["torch_eager_us"] == "",
              str(r))
        gemm = rows_of(os.path.join(out, "shape_grid_gemm.csv"))
        picked = [g for g in gemm if g["picked"] == "1"]
        check("grid_gemm_table", len(gemm) == 16 and len(picked) == 4 and all(g["version"] == "6" for g in picked)
              and [g["us"] for g in gemm if g["version"] == "7"] == [""] * 4, str(gemm[:4]))
        long_rows = rows_of(os.path.join(out, "shape_grid_rows.csv"))
        check("grid_rows_every_round", len(long_rows) == 2 * (6 + 5) * 2 and {g["round"] for g in long_rows} ==
              {"1", "2"}, str(len(long_rows)))
        check("grid_keeps_round_logs", os.path.exists(os.path.join(out, "points", "768x3072_8", "round2.log")))

        calls_before = sorted(os.listdir(log)), [open(os.path.join(log, c)).read() for c in sorted(os.listdir(log))]
        p = grid(base + ["--no-torch", "--models", "768x3072,4096x11008", "--tokens", "8,128", "--out", out], env)
        calls_after = sorted(os.listdir(log)), [open(os.path.join(log, c)).read() for c in sorted(os.listdir(log))]
        check("grid_resume_runs_nothing_twice", p.returncode == 0 and "0 to run" in p.stdout
              and calls_before == calls_after, p.stdout[-300:])

        p = grid(base + ["--no-torch", "--models", "768x3072", "--tokens", "8,128,512", "--out", out], env)
        rows = rows_of(os.path.join(out, "shape_grid.csv"))
        check("grid_resume_adds_points", p.returncode == 0 and "1 to run" in p.stdout and len(rows) == 5
              and [r["tokens"] for r in rows if r["dim"] == "768"] == ["8", "128", "512"], p.stdout[-300:])

        out2 = os.path.join(tmp, "budget")
        p = grid(base + ["--no-torch", "--models", "768x3072", "--tokens", "1,2", "--rounds", "1", "--budget-s", "1",
                         "--out", out2], dict(env, FAKE_SLEEP="1.2"))
        check("grid_budget_stops_between_points", p.returncode == 0 and "1 points left" in p.stdout
              and len(rows_of(os.path.join(out2, "shape_grid.csv"))) == 1, p.stdout[-300:])

        torch_cases(tmp, base, env, out)

        out3 = os.path.join(tmp, "torch")
        have_torch = subprocess.run([sys.executable, "-c", "import torch; assert torch.cuda.is_available()"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
        if have_torch:  # the real PyTorch side would run (half a minute), and this check is for its absence
            print("SKIP grid_without_pytorch: this machine has PyTorch and a GPU")
        else:
            p = grid(base + ["--models", "768x3072", "--tokens", "8", "--rounds", "1", "--out", out3], env)
            rows = rows_of(os.path.join(out3, "shape_grid.csv")) if p.returncode == 0 else []
            check("grid_without_pytorch", p.returncode == 0 and len(rows) == 1 and rows[0]["torch_best_us"] == ""
                  and "PyTorch's columns stay empty" in p.stdout, p.stdout[-300:] + p.stderr[-300:])

        for code, name in (("2", "grid_waived_exit_2"), ("1", "grid_failed_check_exit_1")):
            p = grid(base + ["--no-torch", "--tokens", "8", "--models", "768x3072", "--out",
                             os.path.join(tmp, "x" + code)], dict(env, FAKE_EXIT=code))
            check(name, p.returncode == int(code), "%d %s" % (p.returncode, p.stderr[-200:]))

        bad = [["--models", "0x3072"], ["--models", "768x3072,768x3072"], ["--models", "768"], ["--tokens", "0"],
               ["--tokens", "8,8"], ["--tokens", "1e3"], ["--rounds", "0"], ["--rounds", "x"], ["--budget-s", "-1"],
               ["--out", ""], ["--bogus"], ["--model", "768x3072"], ["extra"]]
        bad += [["--tokens", "8", "--tokens", "16"], ["--out", os.path.join(tmp, "bad"), "--out", os.path.join(tmp, "bad")],
                ["--help", "--bogus"], ["--out", os.path.join(tmp, "file", "sub")], ["--out", os.path.join(tmp, "file")]]
        with open(os.path.join(tmp, "file"), "w") as f:
            f.write("x\n")
        for args in bad:  # a flag given twice is refused: --out is given once unless under test
            out_flag = [] if "--out" in args else ["--out", os.path.join(tmp, "bad")]
            p = grid(base + ["--no-torch"] + out_flag + args, env)
            lines = p.stderr.strip().splitlines()
            check("grid_refuses %s" % " ".join(args), p.returncode == 1 and len(lines) == 1
                  and lines[0].startswith("shape_grid: error:") and not os.path.exists(os.path.join(tmp, "bad")),
                  "%d %r" % (p.returncode, p.stderr))
        p = grid(["--stage", os.path.join(tmp, "missing"), "--no-torch"], env)
        check("grid_refuses_missing_stage", p.returncode == 1 and "is not built" in p.stderr, p.stderr)
        other = os.path.join(tmp, "other")
        os.makedirs(other)
        with open(os.path.join(other, "shape_grid.csv"), "w") as f:
            f.write("a,b\n1,2\n")
        p = grid(base + ["--no-torch", "--out", other], env)
        check("grid_refuses_foreign_csv", p.returncode == 1 and "header" in p.stderr, p.stderr)

        if shutil.which("gnuplot"):
            p = grid(["--stage", fake, "--no-torch", "--models", "768x3072", "--tokens", "8,128", "--out", out], env)
            pngs = {n: os.path.join(out, n + ".png") for n in ("heat_gemm", "heat_torch", "heat_floor")}
            # without PyTorch no point has a best PyTorch figure: that map is said to be empty, not drawn
            check("grid_heat_maps", p.returncode == 0 and os.path.getsize(pngs["heat_gemm"]) > 1000
                  and os.path.getsize(pngs["heat_floor"]) > 1000 and not os.path.exists(pngs["heat_torch"])
                  and "heat_torch: no point" in p.stdout, p.stdout[-400:])
        else:
            print("SKIP grid_heat_maps: gnuplot not found")

        short_cases(tmp)
    finally:
        shutil.rmtree(tmp)
    return checks.status()


def torch_cases(tmp, base, env, no_torch_out):
    """PyTorch's columns from the stand-in worker; a grid CSV without torch_graph_us read back."""
    worker = os.path.join(tmp, "fake_torch.py")
    with open(worker, "w") as f:
        f.write(FAKE_TORCH)
    torch_log = os.path.join(tmp, "torch_calls")
    tenv = dict(env, FAKE_TORCH_LOG=torch_log)
    out = os.path.join(tmp, "faketorch")
    tbase = base + ["--torch-worker", worker]
    p = grid(tbase + ["--models", "768x3072", "--tokens", "8,128", "--rounds", "1", "--out", out], tenv)
    rows = {r["tokens"]: r for r in rows_of(os.path.join(out, "shape_grid.csv"))} if p.returncode == 0 else {}
    check("grid_torch_graph_column", p.returncode == 0 and len(rows) == 2
          and all(r["torch_graph_us"] == "20.000" and r["torch_eager_us"] == "50.000"
                  and r["torch_compile_us"] == "40.000" for r in rows.values()),
          p.stdout[-300:] + p.stderr[-300:] + str(rows))
    check("grid_torch_best_includes_graph", rows and all(r["torch_best_us"] == "20.000" for r in rows.values())
          and "best PyTorch 20.0 us" in p.stdout and "PyTorch graph 20.0 us" in p.stdout, str(rows))
    long_rows = rows_of(os.path.join(out, "shape_grid_rows.csv")) if p.returncode == 0 else []
    check("grid_torch_rows_graph_mode", sorted(r["tokens"] for r in long_rows if r["side"] == "torch"
                                               and r["row"] == "graph") == ["128", "8"], str(long_rows[-6:]))

    # A grid from before the graph mode: its CSV without torch_graph_us.
    def drop_graph_column(folder):
        path = os.path.join(folder, "shape_grid.csv")
        old = rows_of(path)
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=OLD_HEADER.split(","), lineterminator="\n", extrasaction="ignore")
            w.writeheader()
            w.writerows(old)
        return old

    old = drop_graph_column(no_torch_out)
    p = grid(base + ["--no-torch", "--models", "768x3072", "--tokens", "8,128", "--out", no_torch_out], env)
    check("grid_reads_csv_without_graph_column", p.returncode == 0 and "0 to run" in p.stdout,
          p.stdout[-300:] + p.stderr[-300:])
    p = grid(base + ["--no-torch", "--models", "768x3072", "--tokens", "8,128,1024", "--out", no_torch_out], env)
    path = os.path.join(no_torch_out, "shape_grid.csv")
    with open(path) as f:
        header = f.readline().strip()
    new = {(r["dim"], r["tokens"]): r for r in rows_of(path)}
    check("grid_writes_back_old_csv_with_the_column", p.returncode == 0 and "1 to run" in p.stdout
          and header == HEADER and ("768", "1024") in new and len(new) == len(old) + 1
          and all(new[(r["dim"], r["tokens"])]["torch_graph_us"] == ""
                  and new[(r["dim"], r["tokens"])]["epilogue_us"] == r["epilogue_us"] for r in old),
          p.stdout[-300:] + p.stderr[-300:] + header)
    drop_graph_column(out)
    p2 = grid(tbase + ["--models", "768x3072", "--tokens", "8,128", "--rounds", "1", "--out", out], tenv)
    rows = rows_of(os.path.join(out, "shape_grid.csv")) if p2.returncode == 0 else []
    check("grid_remeasures_torch_without_graph_column", p2.returncode == 0 and "2 to run" in p2.stdout
          and len(rows) == 2 and all(r["torch_graph_us"] == "20.000" for r in rows),
          p2.stdout[-300:] + p2.stderr[-300:])
    drop_graph_column(out)
    p = grid([a for a in base if a != "--no-plot"] + ["--plot-only", "--out", out], env)  # gnuplot or not: exit 0
    check("grid_plot_only_reads_csv_without_graph_column", p.returncode == 0, p.stdout[-300:] + p.stderr[-300:])


def point(**kw):
    row = dict(dim=4096, hidden=11008, tokens=2048, floor_us=700, eager_us=1000, fused_geglu_us=950, merged_us=900,
               epilogue_us=800, graph_us=801, decode_us="", cublas_gemm_us=560, our_gemm_us=550, our_gemm_version=6,
               torch_eager_us=1000, torch_compile_us=950, torch_graph_us=920, torch_best_us=900, sm_mhz=1700,
               watts=600)
    row.update(kw)
    return row


def shortfalls_of(tmp, rows, header=HEADER):
    path = os.path.join(tmp, "short.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header.split(","), lineterminator="\n", extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)
    p = subprocess.run([sys.executable, SHORT, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p.returncode, [line for line in p.stdout.splitlines() if " tokens " in line], p.stdout


def short_cases(tmp):
    rc, lines, text = shortfalls_of(tmp, [point()])
    check("shortfalls_none", rc == 0 and not lines and "0 shortfalls" in text, text)
    cases = [
        ("gemm", point(our_gemm_us=570), "our GEMM 570.0 us"),
        ("gemm_not_from_128", point(tokens=64, our_gemm_us=570), None),
        ("epilogue", point(epilogue_us=905, graph_us=900, torch_best_us=2000), "slower than merged"),
        ("graph", point(graph_us=809), "graph 809.0 us"),
        ("pytorch_under_500", point(floor_us=400, torch_best_us=900, epilogue_us=770, graph_us=770), "0.85x wanted"),
        ("pytorch_from_500", point(torch_best_us=830, torch_graph_us=830), "0.95x wanted"),
        ("pytorch_from_500_within_0.95", point(torch_best_us=860, torch_graph_us=860), None),
        ("pytorch_graph_is_the_best", point(torch_eager_us=900, torch_compile_us=900, torch_graph_us=830,
                                            torch_best_us=830), "best PyTorch 830.0 us"),
        ("pytorch_not_measured", point(torch_best_us=""), "not measured"),
        ("stream_floor", point(dim=8192, hidden=3584, tokens=13, floor_us=45, decode_us=56, graph_us=56,
                               epilogue_us=100, merged_us=90, torch_best_us=200), "85% wanted"),
        ("stream_floor_wide", point(tokens=13, floor_us=64, decode_us=74, graph_us=74, epilogue_us=100, merged_us=90,
                                    torch_best_us=200), "88% wanted"),
        ("decode_vs_graph", point(tokens=13, floor_us=64, decode_us=72, graph_us=71, epilogue_us=100,
                                  merged_us=90, torch_best_us=200), "slower than the graph rung"),
        ("small_model_floor", point(dim=768, hidden=3072, tokens=1, floor_us=3, decode_us=6, graph_us=6,
                                    epilogue_us=10, merged_us=9, torch_best_us=70), "60% wanted"),
        ("small_model_at_60", point(dim=768, hidden=3072, tokens=1, floor_us=3, decode_us=4.9, graph_us=4.9,
                                    epilogue_us=10, merged_us=9, torch_best_us=70), None),
        ("small_article", point(dim=768, hidden=3072, tokens=8, floor_us=3.8, decode_us=6.3, graph_us=6.3,
                                epilogue_us=10, merged_us=9, torch_best_us=70), "6.0 wanted"),
        ("wide_128", point(tokens=128, floor_us=70, graph_us=86, epilogue_us=86, merged_us=90, torch_best_us=200),
         "85% wanted"),
        ("stream_missing", point(tokens=8, decode_us=""), "stream   not measured"),
    ]
    for name, row, want in cases:
        rc, lines, text = shortfalls_of(tmp, [row])
        if want is None:
            check("shortfalls_%s" % name, rc == 0 and not lines, text)
        else:
            check("shortfalls_%s" % name, rc == 1 and len(lines) == 1 and want in lines[0], text)
    rc, lines, text = shortfalls_of(tmp, [point(torch_best_us=830)], OLD_HEADER)
    check("shortfalls_reads_csv_without_graph_column", rc == 1 and len(lines) == 1 and "0.95x wanted" in lines[0]
          and "no torch_graph_us column" in text, text)
    rc, lines, text = shortfalls_of(tmp, [point()], OLD_HEADER)
    check("shortfalls_csv_without_graph_column_none_short", rc == 0 and not lines, text)
    rc, lines, text = shortfalls_of(tmp, [point(), point(tokens=512, our_gemm_us=600)])
    check("shortfalls_names_the_point", rc == 1 and len(lines) == 1 and lines[0].split()[:4] == ["4096", "->",
                                                                                                "11008", "512"], text)
    # every round of every rung beside the CSV: a miss smaller than the rounds' range is marked as noise
    rows_path = os.path.join(tmp, "shape_grid_rows.csv")
    with open(rows_path, "w") as f:
        f.write("dim,hidden,tokens,round,side,row,us,sm_mhz,watts\n")
        for k, (d, g) in enumerate(((72.0, 72.5), (76.0, 73.5))):
            f.write("4096,11008,13,%d,ours,decode,%s,1980,300\n4096,11008,13,%d,ours,graph,%s,1980,300\n" % (k + 1, d, k + 1, g))
    noisy = dict(tokens=13, floor_us=68, decode_us=74, graph_us=73, epilogue_us=100, merged_us=90, torch_best_us=200)
    rc, lines, text = shortfalls_of(tmp, [point(**noisy)])
    check("shortfalls_within_spread", rc == 1 and len(lines) == 1 and "within the rounds' spread, 4.00 us" in lines[0]
          and "1 of them within the rounds' spread" in text, text)
    rc, lines, text = shortfalls_of(tmp, [point(**dict(noisy, decode_us=78, floor_us=75))])
    check("shortfalls_beyond_spread", rc == 1 and len(lines) == 1 and "spread" not in lines[0], text)
    os.remove(rows_path)
    p = subprocess.run([sys.executable, SHORT, os.path.join(tmp, "none.csv")], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    check("shortfalls_missing_file", p.returncode == 1 and p.stderr.startswith("grid_shortfalls: error:"), p.stderr)
    # without an argument: the grid ./run 04_fused_mlp --shapes writes, under the working directory
    p = subprocess.run([sys.executable, SHORT], cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check("shortfalls_no_default_grid", p.returncode == 1 and not p.stdout and p.stderr.count("\n") == 1 and
          p.stderr.startswith("grid_shortfalls: error: no SHAPE_GRID_CSV given and no traces/shape_grid/"), p.stderr)
    os.makedirs(os.path.join(tmp, "traces", "shape_grid"))
    shortfalls_of(tmp, [point(), point(tokens=512, our_gemm_us=600)])  # writes short.csv
    os.replace(os.path.join(tmp, "short.csv"), os.path.join(tmp, "traces", "shape_grid", "shape_grid.csv"))
    p = subprocess.run([sys.executable, SHORT], cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check("shortfalls_default_grid", p.returncode == 1 and "2 points, 1 shortfalls" in p.stdout and not p.stderr,
          p.stdout + p.stderr)
    p = subprocess.run([sys.executable, SHORT, "--help"], cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    check("shortfalls_help", p.returncode == 0 and p.stdout.startswith("usage: grid_shortfalls") and
          "epilogue   from 17 tokens" in p.stdout and not p.stderr, p.stdout + p.stderr)


if __name__ == "__main__":
    sys.exit(main())
