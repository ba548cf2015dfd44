#!/usr/bin/env python3
"""tools/trace_timeline.py picks the right events: a step of our 03 article trace, and a window
of kernels in PyTorch's trace of the same MLP, which has no steps. Then both drawn in one PNG.
Its labels: lanes named by the trace's categories and names (ours and PyTorch's), long kernel
names shortened to what they are and never cut inside a word, a slice too narrow for its name
still labelled beside its lane. --label's notes: each on a line above the lanes, a second line only
for one that would overlap; a bad span refused.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402
from checks import report  # noqa: E402

RESULTS = os.path.join(ROOT, "docs", "results", "h200")
OURS = os.path.join(RESULTS, "traces", "03_simple_mlp", "64x128_768x3072_bf16_cold_eager.json")
REFERENCE = os.path.join(RESULTS, "reference", "pytorch-geglu-mlp-h200.trace.json")
FRESH = os.path.join(ROOT, "tests", "data", "h200-2026-12-01")
TORCH_03 = os.path.join(ROOT, "tests", "data", "reference", "torch_03_mlp_article_eager.json")
FORWARD = ["nvjet", "vectorized_elementwise", "nvjet", "vectorized_elementwise", "nvjet"]



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

    lanes = [lane["name"] for lane in trace_timeline.panel(
        os.path.join(FRESH, "03_simple_mlp", "64x128_768x3072_bf16_cold_eager.json"), "ProfilerStep#3", "")["lanes"]]
    want = ["ProfilerStep (user_annotation)", "mlp_fwd (user_annotation)", "ops (cpu_op)", "CUDA API",
            "GPU kernels, memsets", "GPU: mlp_fwd (gpu_user_annotation)"]
    report("timeline_lanes_ours", None if lanes == want else f"lanes {lanes}")
    # PyTorch's aten:: ops nest four deep: a lane per depth, each named as cpu_op
    lanes = [lane["name"] for lane in trace_timeline.panel(TORCH_03, "ProfilerStep#3", "")["lanes"]]
    want = (["ProfilerStep (user_annotation)", "mlp_fwd (user_annotation)", "ops (cpu_op)"]
            + [f"ops (cpu_op), level {n}" for n in (2, 3, 4)]
            + ["CUDA API", "GPU kernels, memsets", "GPU: mlp_fwd (gpu_user_annotation)"])
    report("timeline_lanes_pytorch", None if lanes == want else f"lanes {lanes}")

    short = {"nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT": "cuBLAS GEMM nvjet 256x128",
             "nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNT": "cuBLAS GEMM nvjet 64x8 +bias",
             "gelu_tanh_bf16": "gelu_tanh_bf16",
             "Memcpy DtoD (Device -> Device)": "Memcpy DtoD",
             "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>, "
             "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)":
             "ATen vectorized elementwise add"}
    got = {n: trace_timeline.short_name(n) for n in short}
    report("timeline_short_kernel_names", None if got == short else f"shortened to {got}")

    # a label that does not fit is a short name or a cut after a whole word, never "nvjet_s..."
    bad = []
    for name in list(short) + ["triton_poi_fused__unsafe_view_gelu_mul_0"]:
        for px in (30, 60, 90, 120, 200, 400):
            inside, beside = trace_timeline.label_of(name, px)
            for label in filter(None, (inside, beside)):
                stem = label[:-3] if label.endswith("...") else None
                whole = label in trace_timeline.short_names(name) or (
                    stem and any(n.startswith(stem) and n[len(stem)] in "_ :<(,"
                                 for n in trace_timeline.short_names(name)))
                if not whole or (inside and len(inside) * trace_timeline.CHAR_PX > px):
                    bad.append((name[:30], px, label))
    report("timeline_labels_whole_words", None if not bad else f"labels {bad}")

    # 0.05 us in a 35 us step: no room inside, the label goes beside the lane
    lane = {"kind": "range", "side": "above",
            "slices": [(1.0, 1.05, "t", 2), (1.2, 12.0, "addmm", 2)]}
    inside, beside, lines, _ = trace_timeline.place_labels(lane, 1000 / 35, 35)
    kernel = {"kind": "gpu", "side": "below",
              "slices": [(20.0, 22.0, "nvjet_sm90_tst_64x8_64x16_1x4_h_bz_NNT", 4), (25.0, 25.9, "add_bf16", 4)]}
    k_inside, k_beside, _, keyed = trace_timeline.place_labels(kernel, 1000 / 35, 35)
    ok = ([text for _, _, text in beside] == ["t"] and [text for _, text in inside] == ["addmm"] and lines == 1
          and "add_bf16" in [text for _, _, text in k_beside]
          and keyed == {"cuBLAS GEMM nvjet 64x8": "nvjet_sm90_tst_64x8_64x16_1x4_h_bz_NNT"})
    report("timeline_narrow_slice_labelled", None if ok else
           f"inside {inside}, beside {beside}; kernels inside {k_inside}, beside {k_beside}, key {keyed}")

    # three stretches side by side on one line, unless a text is wider than its stretch
    px = 1000 / 100
    placed, lines = trace_timeline.place_notes([(0, 30, "a"), (30, 60, "b"), (60, 100, "c")], px, 100)
    wide, wide_lines = trace_timeline.place_notes([(0, 5, "a long text over a short stretch"), (5, 100, "b")], px, 100)
    ok = lines == 1 and [p[0] for p in placed] == [0, 0, 0] and wide_lines == 2
    report("timeline_labels_lines", None if ok else f"{placed} on {lines} lines; {wide} on {wide_lines}")
    bad = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "trace_timeline.py"), OURS,
                          "ProfilerStep#3", os.devnull, "--label", "20", "10", "backwards"], capture_output=True, text=True)
    report("timeline_label_backwards_refused", None if bad.returncode != 0 and "error:" in bad.stderr
           else "--label 20 10 was accepted")

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
            run = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "trace_timeline.py"), OURS,
                                  "ProfilerStep#3", png, "--label", "0", "10", "it's \"quoted\"", "--label", "5", "40", "b"],
                                 capture_output=True, text=True)
            ok = run.returncode == 0 and os.path.getsize(png) > 0
            report("timeline_labelled", None if ok else f"rc {run.returncode}: {run.stderr.strip()}")
    return checks.status()


if __name__ == "__main__":
    sys.exit(main())
