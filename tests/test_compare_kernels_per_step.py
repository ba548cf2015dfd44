#!/usr/bin/env python3
"""compare/common.py's kernels_per_step, which gives the side-by-side table its kernel_us and
"kernels per step" columns, on real traces of ours and on a trace laid out as PyTorch writes one.

A step is the ProfilerStep#N range on the host thread; its GPU work is what the runtime and
driver calls inside that range launched (by correlation id), wherever and whenever it ran. The
committed traces of ours carry a gpu_user_annotation mirror of every range on the GPU lane,
ProfilerStep#N included, under the same name (PyTorch's and ours of today mirror the program's
record_function range only): counted as a step, a mirror launched nothing, and half the "steps"
came out empty (0-N kernels, the median kernel time halved, no kernel names listed).

Expected figures are read off the H200 traces (per-kernel durations, the trace's own table):
  - 03 at the article's shape: 5 kernels and 2 memsets per step, 229.345, 228.321 and 227.681 us
    (their sum, 685.347 us, is the kernel total of the trace's table);
  - 01 eager at 4096: the GEMM (174.272, 173.696, 172.576 us) and add_bf16 (22.112, 23.264,
    22.144 us) and cuBLASLt's memset;
  - 02 epilogue: one kernel of 2.720, 2.688, 2.720 us; 04 graph: 4 kernels from one
    cudaGraphLaunch; 01 addmm at 64: a kernel and a device-to-device copy;
  - an older trace of ours (cpu_op ranges, ProfileStep#N, no GPU mirrors) reads the same way.
Then side_by_side.py's table on our 02 run and a PyTorch-style run: one kernel per step, the
kernel named, the kernel time of the trace. One line per check: PASS/FAIL name.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "compare"))
import common  # noqa: E402

DATA = os.path.join(ROOT, "tests", "data", "h200-2026-11-30")
RESULTS = os.path.join(ROOT, "docs", "results")
TOLERANCE_US = 0.0015  # the traces' durations have three decimals

NVJET_TNT_A = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"
NVJET_TNT_B = "nvjet_sm90_tst_192x128_64x5_1x2_h_bz_coopB_TNT"
EPILOGUE_GEMM = "nvjet_sm90_tst_64x8_64x16_1x2_h_bz_bias_TNT"

# name -> (trace, step numbers, short kernel names of every step, memcpy, memset, kernel_us per
# step or None where only the count is checked)
CASES = {
    "03 eager at the article's shape": (
        os.path.join(DATA, "03_simple_mlp", "64x128_768x3072_bf16_cold_eager.json"), [2, 3, 4],
        [NVJET_TNT_A, NVJET_TNT_A, "gelu_tanh_bf16", "mul_bf16", NVJET_TNT_B], 0, 2,
        [229.345, 228.321, 227.681]),
    "01 eager at 4096": (
        os.path.join(RESULTS, "h200-2026-11-30", "traces", "01_matmul_add", "4096_bf16_cold_eager.json"),
        [2, 3, 4], ["nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", "add_bf16"], 0, 1,
        [174.272 + 22.112, 173.696 + 23.264, 172.576 + 22.144]),
    "02 epilogue": (
        os.path.join(RESULTS, "h200-2026-11-30", "traces", "02_linear", "1024x32x64_bf16_cold_epilogue.json"),
        [2, 3, 4], [EPILOGUE_GEMM], 0, 0, [2.720, 2.688, 2.720]),
    "04 graph (kernels of a cudaGraphLaunch)": (
        os.path.join(DATA, "04_fused_mlp", "1x8_768x3072_bf16_cold_graph.json"), list(range(2, 22)),
        ["nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT", "geglu_bf16",
         "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_splitK_TNT", "splitKreduce_kernel"], 0, 0, None),
    "01 addmm at 64 (a copy per step)": (
        os.path.join(DATA, "01_matmul_add", "64_bf16_cold_addmm.json"), [2, 3, 4],
        ["nvjet_sm90_tst_64x8_64x16_1x4_h_badd_NNT"], 1, 0, [1.920, 1.920, 1.887]),
    "older schema (cpu_op, ProfileStep#N)": (
        os.path.join(RESULTS, "h200-2026-11-29", "02_linear", "1024x32x64_bf16_cold_epilogue.json"),
        [2, 3, 4], [EPILOGUE_GEMM], 0, 0, [2.752, 2.752, 2.688]),
}


def check_steps(steps, numbers, names, memcpy, memset, kernel_us):
    """The problems with kernels_per_step's answer, [] when it is the expected one."""
    got = [s["step"] for s in steps]
    if got != numbers:
        return ["steps %s, expected %s" % (got, numbers)]
    problems = []
    for i, s in enumerate(steps):
        short = [common.short_name(k) for k in s["kernels"]]
        if short != names:
            problems.append("step %d: kernels %s, expected %s" % (s["step"], short, names))
        if (s["memcpy"], s["memset"]) != (memcpy, memset):
            problems.append("step %d: %d memcpy, %d memset, expected %d and %d"
                            % (s["step"], s["memcpy"], s["memset"], memcpy, memset))
        if kernel_us is not None and abs(s["kernel_us"] - kernel_us[i]) > TOLERANCE_US:
            problems.append("step %d: kernel_us %.3f, expected %.3f" % (s["step"], s["kernel_us"], kernel_us[i]))
    return problems


def pytorch_style_trace(graph=False):
    """Two recorded steps as torch.profiler writes them (2.x): ProfilerStep#N as user_annotation
    on the Python thread, the record_function range of the forward inside it with its
    gpu_user_annotation mirror on the stream's lane, aten ops as cpu_op, the GEMM launched by
    cuLaunchKernelEx, the elementwise kernel by cudaLaunchKernel, a memset before the GEMM.
    Around them, work that belongs to no step: a kernel launched before the first recorded
    step, and one launched from another thread during step 2. The last kernel of step 3 runs
    after the step's CPU range has ended. With graph=True, the same GPU work as a replay of the
    forward captured in a CUDA graph (compare's graph variant): one cudaGraphLaunch per step, whose
    correlation id the memset and both kernels carry."""
    pid, tid, gpu, stream = 528, 528, 0, 7
    base = 5120517477000.0
    events = [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python3"}},
        {"ph": "M", "name": "process_name", "pid": gpu, "tid": 0, "args": {"name": "python3"}},
        {"ph": "M", "name": "thread_name", "pid": gpu, "tid": stream, "args": {"name": "stream 7 "}},
    ]
    correlation = [0]

    def launch(api, cat, t, kind, name, gpu_t, dur, thread=tid):
        if api is not None:  # None: the next node of the graph launched last
            correlation[0] += 1
            events.append({"ph": "X", "cat": cat, "name": api, "pid": pid, "tid": thread, "ts": base + t,
                           "dur": 5.0, "args": {"cbid": 211, "correlation": correlation[0]}})
        c = correlation[0]
        events.append({"ph": "X", "cat": kind, "name": name, "pid": gpu, "tid": stream, "ts": base + gpu_t,
                       "dur": dur, "args": {"device": 0, "stream": stream, "correlation": c}})
        if api is not None:
            events.append({"ph": "s", "id": c, "pid": pid, "tid": thread, "ts": base + t, "cat": "ac2g",
                           "name": "ac2g"})
        events.append({"ph": "f", "id": c, "pid": gpu, "tid": stream, "ts": base + gpu_t, "cat": "ac2g",
                       "name": "ac2g", "bp": "e"})

    gemm, add = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", (
        "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>, "
        "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)")
    launch("cudaLaunchKernel", "cuda_runtime", 10.0, "kernel", add, 20.0, 30.0)  # before the steps
    for n, t in ((2, 100.0), (3, 200.0)):
        events.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % n, "pid": pid,
                       "tid": tid, "ts": base + t, "dur": 60.0, "args": {"External id": n}})
        events.append({"ph": "X", "cat": "user_annotation", "name": "matmul_add", "pid": pid, "tid": tid,
                       "ts": base + t + 2.0, "dur": 55.0, "args": {"External id": 20 + n}})
        if graph:
            launch("cudaGraphLaunch", "cuda_runtime", t + 5.0, "gpu_memset", "Memset (Device)", t + 12.0, 0.75)
            launch(None, None, None, "kernel", gemm, t + 22.0, 57.75)
            launch(None, None, None, "kernel", add, t + 80.0, 30.75)
        else:
            events.append({"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": pid, "tid": tid,
                           "ts": base + t + 40.0, "dur": 15.0, "args": {"External id": 10 + n}})
            launch("cudaMemsetAsync", "cuda_runtime", t + 5.0, "gpu_memset", "Memset (Device)", t + 12.0, 0.75)
            launch("cuLaunchKernelEx", "cuda_driver", t + 15.0, "kernel", gemm, t + 22.0, 57.75)
            launch("cudaLaunchKernel", "cuda_runtime", t + 45.0, "kernel", add, t + 80.0, 30.75)
        events.append({"ph": "X", "cat": "gpu_user_annotation", "name": "matmul_add", "pid": gpu,
                       "tid": stream, "ts": base + t + 12.0, "dur": 98.75, "args": {"External id": 20 + n}})
    launch("cudaLaunchKernel", "cuda_runtime", 130.0, "kernel", add, 150.0, 30.0, thread=tid + 1)
    events.append({"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans",
                   "tid": "PyTorch Profiler", "ts": base, "dur": 400.0, "args": {"Op count": 0}})
    return {"schemaVersion": 1, "traceEvents": events, "traceName": "pytorch_style.json"}


def main():
    failed = False

    def report(name, problems):
        nonlocal failed
        if problems:
            failed = True
            print("FAIL compare kernels per step: %s: %s" % (name, "; ".join(problems[:3])))
        else:
            print("PASS compare kernels per step: %s" % name)

    for name, (path, numbers, names, memcpy, memset, kernel_us) in CASES.items():
        if not os.path.exists(path):
            report(name, ["%s is missing" % os.path.relpath(path, ROOT)])
            continue
        report(name, check_steps(common.kernels_per_step(path), numbers, names, memcpy, memset, kernel_us))

    with tempfile.TemporaryDirectory(prefix="test_compare_kernels_") as tmp:
        torch_base = os.path.join(tmp, "4096_bf16_cold_eager_torch")
        with open(torch_base + ".json", "w") as f:
            json.dump(pytorch_style_trace(), f)
        report("PyTorch-style trace (a range's GPU mirror, another thread, a warm-up launch)",
               check_steps(common.kernels_per_step(torch_base + ".json"), [2, 3],
                           ["nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT",
                            "vectorized_elementwise_kernel[CUDAFunctor_add]"], 0, 1, [88.5, 88.5]))
        graph_base = os.path.join(tmp, "4096_bf16_cold_graph_torch")
        with open(graph_base + ".json", "w") as f:
            json.dump(pytorch_style_trace(graph=True), f)
        report("PyTorch-style graph replay (one cudaGraphLaunch per step): eager's kernels",
               check_steps(common.kernels_per_step(graph_base + ".json"), [2, 3],
                           ["nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT",
                            "vectorized_elementwise_kernel[CUDAFunctor_add]"], 0, 1, [88.5, 88.5]))
        report("a missing trace gives no steps",
               [] if common.kernels_per_step(os.path.join(tmp, "absent.json")) == [] else ["steps found"])

        # The table itself: our 02 epilogue run (its CSV and trace as the stage wrote them) next
        # to the PyTorch-style run.
        for b in (torch_base, graph_base):
            with open(b + ".csv", "w") as f:
                f.write("step,phase,cpu_us,gpu_us,gated\n0,wait,900.0,950.0,0\n1,warmup,60.0,90.0,0\n"
                        "2,active,60.0,90.0,0\n3,active,61.0,91.0,0\n")
        ours_csv = os.path.join(RESULTS, "h200-2026-11-30", "traces", "02_linear",
                                "1024x32x64_bf16_cold_epilogue.csv")
        run = subprocess.run([sys.executable, os.path.join(ROOT, "compare", "side_by_side.py"),
                              "--ours", ours_csv, "--torch", torch_base + ".csv", graph_base + ".csv"],
                             capture_output=True, text=True)
        lines = run.stdout.splitlines()
        problems = [] if run.returncode == 0 else ["exit %d: %s" % (run.returncode, run.stderr.strip()[-200:])]
        rows = {l.split()[1]: l.split() for l in lines if l.split()[:1] in (["ours"], ["torch"]) and "," not in l}
        ours = rows.get("1024x32x64_bf16_cold_epilogue")
        theirs = rows.get("4096_bf16_cold_eager_torch")
        graph_row = rows.get("4096_bf16_cold_graph_torch")
        if not ours or ours[4:] != ["2.72", "n/a", "1", "kernels"]:
            problems.append("our row %s, expected kernel_us 2.72 and '1 kernels'" % (ours,))
        if not theirs or theirs[4:] != ["88.50", "n/a", "2", "kernels", "+", "1", "memset"]:
            problems.append("PyTorch's row %s, expected kernel_us 88.50 and '2 kernels + 1 memset'" % (theirs,))
        if not graph_row or not theirs or graph_row[4:] != theirs[4:]:
            problems.append("PyTorch's graph row %s, expected eager's figures %s" % (graph_row, theirs[4:]))
        if "  1. " + EPILOGUE_GEMM not in lines:
            problems.append("our kernel is not listed")
        if any("(no trace" in l for l in lines):
            problems.append("a run with a trace is reported as having none")
        report("side_by_side.py's table", problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
