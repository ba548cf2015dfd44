#!/usr/bin/env python3
"""shapes.py: one fused GeGLU kernel for every shape, or one compiled kernel per shape?

  python3 compare/shapes.py                        1, 8, 64, 512, 4096, 8192 tokens, 768 -> 3072, bf16
  python3 compare/shapes.py --tokens 1,16,256      other token counts, in the order given
  ./run --compare shapes                           the same

The articles end on a trade-off. A hand-written fused GeGLU kernel (Liger's, in Triton) is one
kernel that takes any number of tokens: nothing to compile, nothing to guard. torch.compile
(Inductor) writes a fused kernel for the shapes it has seen: a new token count costs a
recompilation, unless it compiled the graph with symbolic sizes. This script measures both sides
on a sequence of token counts, the order a server meets them:

  ours      bin/04_fused_mlp --variant fused_geglu: cuBLAS gate and up GEMMs, our fused GeGLU
            kernel, the down GEMM. One program per token count; its first step is cold (module
            loading, cuBLASLt plans), the rest reuse the same kernels whatever the shape.
  eager     PyTorch eager: 3 GEMMs + aten::gelu + aten::mul.
  static    torch.compile(model, dynamic=False): one graph and one generated kernel per shape.
  dynamic   torch.compile(model) (dynamic=None, the default): the first shape compiles static;
            the first new shape recompiles with symbolic sizes, later shapes reuse that graph.

Per token count: time per forward issued back to back (CUDA events, median of 5 batches, after
warm-up), the first call's wall time at that shape (for torch.compile: the compilation), and the
recompilations so far (torch._dynamo's count of compiled graphs). Inductor's caches start empty
(a temporary directory), so every first call compiles from scratch.
Writes <out>/shapes_<dim>x<hidden>_<dtype>.csv and, with matplotlib, the .png next to it.
Exit status: 0 done, 1 bad input or a failed check, 2 waived (no PyTorch, no GPU).
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from mlp import geglu_mlp  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OURS = "bin/04_fused_mlp"
DEFAULT_TOKENS = "1,8,64,512,4096,8192"
COLUMNS = ("tokens", "ours_us", "ours_first_ms", "eager_us", "eager_first_ms",
           "static_first_s", "static_us", "static_recompiles",
           "dynamic_first_s", "dynamic_us", "dynamic_recompiles")
# torch.compile's two settings, in the order they run: the per-shape one first, so its
# compilations are the cold ones.
COMPILED = (("static", False), ("dynamic", None))


def token_list(text):
    values = []
    for part in text.split(","):
        if not part.isdigit() or not part.isascii() or not 1 <= int(part) <= 1 << 20:
            raise argparse.ArgumentTypeError("'%s' is not a comma-separated list of token counts "
                                                    "(1..1048576)" % text)
        values.append(int(part))
    if len(set(values)) != len(values):
        raise argparse.ArgumentTypeError("'%s' repeats a token count" % text)
    return values


def parse_args():
    p = common.StrictParser(prog="compare/shapes.py",
                            description="our fused GeGLU kernel across token counts, next to PyTorch eager "
                                        "and torch.compile recompiling per shape")
    p.add_argument("--tokens", type=token_list, default=token_list(DEFAULT_TOKENS),
                   help="token counts, in the order they arrive (default %s)" % DEFAULT_TOKENS)
    p.add_argument("--dim", type=common.whole(1, 65536), default=768, help="model width (default 768)")
    p.add_argument("--hidden", type=common.whole(1, 262144), default=3072, help="MLP width (default 3072)")
    p.add_argument("--dtype", choices=common.DTYPES, default="bf16", help="storage type (default bf16)")
    p.add_argument("--seed", type=common.whole(0, 2**64 - 1), default=1234, help="seed of the random inputs")
    p.add_argument("--out", default="traces/04_fused_mlp", help="output directory (default traces/04_fused_mlp)")
    p.add_argument("--no-plot", action="store_true", help="no PNG, the CSV only")
    p.checks.append(common.out_check(p))
    return p.parse_args()


# ---- ours: one run of the stage per token count ----------------------------------------------

# "back to back: 226.58 us per forward (...)"; the wording around the number may change, the
# unit may not.
BACK_TO_BACK = re.compile(r"^back.to.back\b\D*?([0-9]+(?:\.[0-9]+)?)\s*us per forward", re.M | re.I)
# " 0  ProfileStep#0 wait  cpu_us gpu_us": the cold first step.
FIRST_STEP = re.compile(r"^\s*0\s+Profiler?Step#0\s+\w+\s+([0-9]+(?:\.[0-9]+)?)\s+([0-9]+(?:\.[0-9]+)?)", re.M)


def run_ours(args, tokens, scratch):
    cmd = [OURS, "--variant", "fused_geglu", "--batch", "1", "--seq", str(tokens), "--dim", str(args.dim),
           "--hidden", str(args.hidden), "--dtype", args.dtype, "--seed", str(args.seed),
           "--no-trace", "--no-plot", "--out", scratch]
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode == common.EXIT_WAIVED:
        print("compare: waived: %s" % (proc.stdout.strip().splitlines() or ["%s exited with status 2" % OURS])[-1])
        sys.exit(common.EXIT_WAIVED)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-2000:])
        common.fail("%s exited with status %d" % (" ".join(cmd), proc.returncode))
    b2b = BACK_TO_BACK.findall(proc.stdout)
    first = FIRST_STEP.findall(proc.stdout)
    if len(b2b) != 1 or len(first) != 1:
        sys.stderr.write(proc.stdout[-2000:])
        common.fail("%s: expected one 'back to back: X us per forward' line and one step-0 row, found %d and %d"
                    % (OURS, len(b2b), len(first)))
    cpu_us, gpu_us = (float(v) for v in first[0])
    return float(b2b[0]), max(cpu_us, gpu_us) / 1e3


# ---- PyTorch --------------------------------------------------------------------------------

def compiled_graphs(torch):
    """Graphs torch._dynamo has compiled in this process (0 where this PyTorch keeps no count)."""
    return torch._dynamo.utils.counters["stats"]["unique_graphs"]


def first_call_s(torch, fn, x):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    y = fn(x)
    torch.cuda.synchronize()
    return time.perf_counter() - t0, y


def steady_us(torch, fn, x, tokens):
    for _ in range(3):
        fn(x)
    return common.back_to_back_us(torch, lambda: fn(x), 200 if tokens <= 1024 else 50)


def run_torch(torch, args, inputs):
    """{tokens: {column: value}} for eager and both compiled settings."""
    import torch._dynamo.utils  # noqa: F401 (torch does not import it until asked)

    dt = common.torch_dtype(torch, args.dtype)
    torch.manual_seed(args.seed)
    model = geglu_mlp(torch, args.dim, args.hidden, dt)
    rows = {t: {} for t in args.tokens}
    reference = {}
    with torch.no_grad():
        for t in args.tokens:
            seconds, reference[t] = first_call_s(torch, model, inputs[t])
            rows[t]["eager_first_ms"] = seconds * 1e3
            rows[t]["eager_us"] = steady_us(torch, model, inputs[t], t)
        for name, dynamic in COMPILED:
            torch._dynamo.reset()
            # Room for one graph per shape: past the limit dynamo would fall back to eager.
            for limit in ("recompile_limit", "cache_size_limit"):
                if hasattr(torch._dynamo.config, limit):
                    setattr(torch._dynamo.config, limit, max(64, 2 * len(args.tokens)))
            fn = torch.compile(model, dynamic=dynamic)
            start, counted = compiled_graphs(torch), True
            for t in args.tokens:
                seconds, y = first_call_s(torch, fn, inputs[t])
                err = common.rel_fro_error(y.double().cpu().numpy(), reference[t].double().cpu().numpy())
                if err > common.TOLERANCE[args.dtype]:
                    common.fail("torch.compile (%s) at %d tokens differs from eager: rel. Frobenius error %.2e "
                                "(tolerance %.0e)" % (name, t, err, common.TOLERANCE[args.dtype]))
                compiled = compiled_graphs(torch) - start
                counted = counted and compiled > 0  # the first call compiles: a count that stays 0 is none
                rows[t][name + "_first_s"] = seconds
                rows[t][name + "_recompiles"] = compiled - 1 if counted else None
                rows[t][name + "_us"] = steady_us(torch, fn, inputs[t], t)
            if not counted:
                print("note: this PyTorch keeps no count of compiled graphs; recompilations shown as '?'")
    return rows


# ---- the table, the CSV, the plot ----------------------------------------------------------

def cell(value, fmt):
    return "?" if value is None else fmt % value


def print_table(args, rows):
    print("\n%d -> %d -> %d, %s; us per forward issued back to back; first = the first call at that "
          "shape (ours: the cold first step of a fresh process)" % (args.dim, args.hidden, args.dim, args.dtype))
    print("%7s | %9s %9s | %9s %9s | %22s | %22s" % ("", "ours", "", "eager", "", "compile dynamic=False",
                                                  "compile dynamic=None"))
    print("%7s | %9s %9s | %9s %9s | %7s %8s %5s | %7s %8s %5s" % (
        "tokens", "us", "first ms", "us", "first ms", "first s", "us", "recmp", "first s", "us", "recmp"))
    for t in args.tokens:
        r = rows[t]
        print("%7d | %9.2f %9.2f | %9.2f %9.2f | %7.2f %8.2f %5s | %7.2f %8.2f %5s" % (
            t, r["ours_us"], r["ours_first_ms"], r["eager_us"], r["eager_first_ms"],
            r["static_first_s"], r["static_us"], cell(r["static_recompiles"], "%d"),
            r["dynamic_first_s"], r["dynamic_us"], cell(r["dynamic_recompiles"], "%d")))
    compile_s = {name: sum(rows[t][name + "_first_s"] for t in args.tokens) for name, _ in COMPILED}
    print("first calls in all: compile dynamic=False %.1f s, dynamic=None %.1f s; ours: no compiling, a cold "
          "first step of %.1f ms (median; each token count runs in a fresh process)" % (compile_s["static"], compile_s["dynamic"],
                       statistics.median(rows[t]["ours_first_ms"] for t in args.tokens)))


def write_csv(path, args, rows):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        f.write(",".join(COLUMNS) + "\n")
        for t in args.tokens:
            r = dict(rows[t], tokens=t)
            f.write(",".join("" if r[c] is None else str(r[c]) if isinstance(r[c], int) else "%.4f" % r[c]
                             for c in COLUMNS) + "\n")
    os.replace(tmp, path)
    print("wrote %s" % path)


def plot(path, args, rows, device):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot: matplotlib not found; CSV written, no PNG")
        return
    t = args.tokens
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    for key, label, style in (("ours_us", "ours: fused GeGLU kernel (no compile)", "o-"),
                              ("eager_us", "PyTorch eager", "s--"),
                              ("static_us", "torch.compile dynamic=False", "^-"),
                              ("dynamic_us", "torch.compile dynamic=None", "v-")):
        left.plot(t, [rows[n][key] for n in t], style, label=label)
    left.set(xscale="log", yscale="log", xlabel="tokens", ylabel="us per forward (back to back)",
             title="steady state")
    left.legend(fontsize=8)
    right.plot(t, [rows[n]["ours_first_ms"] / 1e3 for n in t], "o-", label="ours: cold first step of the program")
    right.plot(t, [rows[n]["eager_first_ms"] / 1e3 for n in t], "s--", label="PyTorch eager: first call")
    right.plot(t, [rows[n]["static_first_s"] for n in t], "^-", label="torch.compile dynamic=False: first call")
    right.plot(t, [rows[n]["dynamic_first_s"] for n in t], "v-", label="torch.compile dynamic=None: first call")
    right.set(xscale="log", yscale="log", xlabel="tokens (in the order they arrive)", ylabel="seconds",
              title="first call at a new shape")
    right.legend(fontsize=8)
    fig.suptitle("GeGLU MLP %d -> %d, %s, %s" % (args.dim, args.hidden, args.dtype, device))
    fig.tight_layout()
    tmp = "%s.tmp.%d.png" % (path[:-4], os.getpid())
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, path)
    print("wrote %s" % path)


def main():
    args = parse_args()
    # Fresh Inductor and Triton caches, set before torch is imported: first calls compile cold.
    try:
        cache = tempfile.mkdtemp(prefix="shapes_inductor_")
    except OSError as e:
        common.fail("cannot make a temporary folder (TMPDIR): %s" % e.strerror)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(cache, "inductor")
    os.environ["TRITON_CACHE_DIR"] = os.path.join(cache, "triton")
    try:
        return measure(args)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def measure(args):
    torch = common.require_torch()
    if subprocess.call(["make", "--no-print-directory", "-s", "04_fused_mlp"], cwd=ROOT,
                       stdout=subprocess.DEVNULL) != 0:
        common.fail("building 04_fused_mlp failed (make 04_fused_mlp shows why)")
    os.makedirs(args.out, exist_ok=True)
    print(common.device_line(torch))

    scratch = tempfile.mkdtemp(prefix="shapes_ours_")
    try:
        ours = {}
        for t in args.tokens:
            ours[t] = run_ours(args, t, scratch)
            print("ours, %d tokens: %.2f us per forward, cold first step %.2f ms" % (t, ours[t][0], ours[t][1]))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    dt = common.torch_dtype(torch, args.dtype)
    g = torch.Generator(device="cuda").manual_seed(args.seed)
    inputs = {t: torch.rand((t, args.dim), generator=g, device="cuda").mul_(2).sub_(1).to(dt) for t in args.tokens}
    rows = run_torch(torch, args, inputs)
    for t in args.tokens:
        rows[t]["ours_us"], rows[t]["ours_first_ms"] = ours[t]

    print_table(args, rows)
    base = os.path.join(args.out, "shapes_%dx%d_%s" % (args.dim, args.hidden, args.dtype))
    write_csv(base + ".csv", args, rows)
    if not args.no_plot:
        plot(base + ".png", args, rows, torch.cuda.get_device_name(0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
