#!/usr/bin/env python3
"""tools/trace_timeline.py picks the right events: a step of our 03 article trace, and a window
of kernels in PyTorch's trace of the same MLP, which has no steps. Then both drawn in one PNG.
One line per check: PASS/FAIL/SKIP name.
"""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "tools"))
import trace_timeline  # noqa: E402

RESULTS = os.path.join(ROOT, "docs", "results", "h200-2026-11-30")
OURS = os.path.join(RESULTS, "traces", "03_simple_mlp", "64x128_768x3072_bf16_cold_eager.json")
REFERENCE = os.path.join(RESULTS, "reference", "pytorch-geglu-mlp-h200.trace.json")
FORWARD = ["nvjet", "vectorized_elementwise", "nvjet", "vectorized_elementwise", "nvjet"]

failed = 0


def report(name, problem):
    global failed
    if problem:
        failed += 1
        print(f"FAIL {name}: {problem}")
    else:
        print(f"PASS {name}")


def kinds(gpu):
    return [e["name"] for e in sorted(gpu, key=lambda e: e["ts"]) if e["cat"] == "kernel"]


def main():
    _, cpu, gpu, _ = trace_timeline.load_window(OURS, "ProfilerStep#3")
    names = kinds(gpu)
    report("timeline_step_window", None if len(names) == 5 and names[2] == "gelu_tanh_bf16"
           else f"ProfilerStep#3 gives kernels {names}")

    t0, cpu, gpu, _ = trace_timeline.load_window(REFERENCE, "kernels:5+5")
    names = kinds(gpu)
    ops = [e["name"] for e in sorted(cpu, key=lambda e: e["ts"]) if e["cat"] == "cpu_op" and e["name"] in
           ("aten::linear", "aten::gelu", "aten::mul")]
    ok = (len(names) == 5 and all(k in n for k, n in zip(FORWARD, names))
          and ops == ["aten::linear", "aten::gelu", "aten::linear", "aten::mul", "aten::linear"]
          and min(e["ts"] for e in cpu) == t0)
    report("timeline_kernel_window", None if ok else f"kernels:5+5 gives kernels {names}, ops {ops}")

    bad = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "trace_timeline.py"), REFERENCE,
                          "kernels:14+2", os.devnull], capture_output=True, text=True)
    report("timeline_window_past_the_end", None if bad.returncode != 0 and "error:" in bad.stderr
           else "kernels:14+2 of 15 kernels was accepted")

    if not shutil.which("gnuplot"):
        print("SKIP timeline_two_panels: gnuplot not found")
    else:
        with tempfile.TemporaryDirectory() as tmp:
            png = os.path.join(tmp, "both.png")
            run = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "trace_timeline.py"), OURS,
                                  "ProfilerStep#3", png, "--also", REFERENCE, "kernels:5+5", "reference"],
                                 capture_output=True, text=True)
            ok = run.returncode == 0 and os.path.getsize(png) > 0
            report("timeline_two_panels", None if ok else f"rc {run.returncode}: {run.stderr.strip()}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
