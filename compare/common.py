"""common.py: what the PyTorch side of the comparison shares.

The compare scripts (matmul_add.py, linear.py, mlp.py) run the articles' experiments in PyTorch
with the flags, schedule, output names and CSV columns of our stages:

  - the same shared flags (--dtype --seed --wait --warmup-steps --active/--steps --warmup --out),
    parsed as strictly (a bad flag: one line, exit 1);
  - two passes, like ours: a timed pass without the profiler writes <out>/<tag>_torch.csv
    (step,phase,cpu_us,gpu_us,gated), then a fresh process runs the same schedule under
    torch.profiler and writes <tag>_torch.json (the trace) and <tag>_torch.txt (key_averages);
  - per step, cpu_us is the host time to issue the step (before any synchronisation) and gpu_us
    the CUDA-event time from its start to its end. PyTorch has no gate that holds the GPU until
    the step is issued (gated = 0), so when the CPU is the slower side gpu_us includes the gaps
    it leaves; side_by_side.py adds the kernel time per step from the traces, which has none;
  - with --load DIR, the tensors our stage dumped (--dump DIR) instead of random ones, and the
    relative error between our output and PyTorch's, in float64, against the dtype's tolerance.

Only the standard library here and in side_by_side.py; numpy is imported when --load is given,
torch only when a run starts, so --help and argument errors work without either.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import warnings

DTYPES = ("bf16", "fp16", "fp32")
# The relative Frobenius error a correct result stays under: the tolerances of our stages
# (common/dtype.c), fp32 accumulation everywhere.
TOLERANCE = {"bf16": 1e-2, "fp16": 2e-3, "fp32": 1e-5}
# .npy dtype codes of common/npy.h; NumPy has no bfloat16, so bf16 travels as its raw bits.
NPY_DESCR = {"bf16": "<u2", "fp16": "<f2", "fp32": "<f4"}
TRACE_PASS_FLAG = "--trace-pass"
# Parse every flag, then exit 0 without running: compare/run_compare.sh asks it before PyTorch
# is looked for, so that a bad flag is refused the same with or without PyTorch.
CHECK_FLAGS_FLAG = "--check-flags"

EXIT_BAD_INPUT, EXIT_WAIVED = 1, 2
PROG = "compare"  # the name fail() gives: the program's, once its parser is made


def _one_line(kind, value, tb):
    """An operating system's refusal no check foresaw (a file that cannot be written, a full
    disk) ends a program that imports this module with one line and exit 1, as bad input does,
    not a stack trace; any other error keeps its trace."""
    if issubclass(kind, OSError) and value.strerror:
        where = " (%s)" % value.filename if value.filename is not None else ""
        sys.stderr.write("%s: error: %s%s\n" % (PROG, shown(value.strerror), shown(where)))
        return
    sys.__excepthook__(kind, value, tb)


sys.excepthook = _one_line


def shown(text):
    """text for a one-line message: control characters (C0, DEL, C1) and bytes that are not
    UTF-8 shown as '?', as our stages show them."""
    return re.sub(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]", "?", str(text))


class StrictParser(argparse.ArgumentParser):
    """argparse with our stages' conventions: a bad command line is one line on stderr,
    "<prog>: error: ...", and exit 1 (argparse's own is a usage block and exit 2); a flag given
    twice is refused (argparse keeps the last); abbreviations are refused; --help checks the whole
    command line first, so a bad flag beside it is refused, not shown help for. Checks made after
    parsing go in `checks` (functions of the parsed flags that call .error), which --help runs too.
    Flags declared with action="append" may repeat."""

    def __init__(self, *args, **kwargs):
        kwargs["allow_abbrev"] = False
        kwargs["add_help"] = False
        self.intermixed = kwargs.pop("intermixed", False)  # options between positionals
        super().__init__(*args, **kwargs)
        global PROG
        PROG = self.prog
        self.add_argument("--help", action="store_true", help="show this help and exit")
        self.checks = []

    def error(self, message):
        sys.stderr.write("%s: error: %s\n" % (self.prog, shown(message)))
        sys.exit(EXIT_BAD_INPUT)

    def _refuse_repeats(self, argv):
        seen = {}
        for arg in argv:
            if arg == "--":
                break
            if not arg.startswith("-"):
                continue
            name = arg.split("=", 1)[0] if arg.startswith("--") else arg
            action = self._option_string_actions.get(name)
            if action is None or isinstance(action, (argparse._AppendAction, argparse._CountAction)):
                continue
            if action in seen:
                first = seen[action]
                self.error("%s given twice" % name if first == name else "%s and %s are one flag" % (first, name))
            seen[action] = name

    def parse_args(self, args=None, namespace=None):
        argv = list(sys.argv[1:] if args is None else args)
        self._refuse_repeats(argv)
        asked = "--help" in argv[:argv.index("--")] if "--" in argv else "--help" in argv
        required = [(a, a.required) for a in self._actions]
        if asked:  # what is missing is no error when help is asked for; what is there is checked
            for a, _ in required:
                a.required = False
        try:
            parse = self.parse_known_intermixed_args if self.intermixed else self.parse_known_args
            parsed, extras = parse(argv, namespace)
        finally:
            for a, r in required:
                a.required = r
        if extras:
            self.error("unrecognized arguments: %s" % " ".join(extras))
        for check in self.checks:
            check(parsed)
        if parsed.help:
            self.print_help()
            sys.exit(0)
        return parsed


def whole(lo, hi):
    """A flag value that is a plain decimal number in [lo, hi], as common/cli.c accepts."""

    def parse(text):
        if not text.isdigit() or not text.isascii():
            raise argparse.ArgumentTypeError("'%s' is not a whole number >= %d" % (text, lo))
        value = int(text)
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError("%s is out of range (%d..%d)" % (text, lo, hi))
        return value

    return parse


def parser(stage, script, summary):
    """The shared flags; the script adds its shape flags and parses."""
    p = StrictParser(prog="compare/" + script, description=summary, allow_abbrev=False)
    p.add_argument("--variant", choices=VARIANTS + ("all",), default="eager",
                   help="eager PyTorch, torch.compile, graph (eager's forward replayed from a CUDA graph) or all")
    p.add_argument("--dtype", choices=DTYPES, default="bf16", help="storage type (default bf16)")
    p.add_argument("--seed", type=whole(0, 2**64 - 1), default=1234,
                   help="seed of the random inputs when --load is not given")
    p.add_argument("--wait", type=whole(0, 100000), default=1, help="schedule: steps run, not recorded")
    p.add_argument("--warmup-steps", type=whole(0, 100000), default=1,
                   help="schedule: steps run, recorded, then discarded")
    p.add_argument("--active", "--steps", dest="active", type=whole(1, 100000), default=3,
                   help="schedule: steps recorded as ProfilerStep#N")
    p.add_argument("--warmup", type=whole(0, 100000), default=0,
                   help="untimed iterations before the schedule; 0 keeps step 0 cold")
    p.add_argument("--out", default="traces/" + stage, help="output directory (default traces/%s)" % stage)
    p.add_argument("--load", metavar="DIR",
                   help="run on the tensors a stage wrote with --dump DIR, and compare outputs")
    p.add_argument("--no-trace", action="store_true", help="skip the profiler pass")
    # Accepted so that one command line serves both programs; nothing here plots or checks
    # against a CPU reference, and --dump belongs to our stage.
    p.add_argument("--no-plot", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--no-check", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--dump", metavar="DIR", help=argparse.SUPPRESS)
    p.add_argument("--sweep", action="store_true", help=argparse.SUPPRESS)
    p.add_argument(TRACE_PASS_FLAG, action="store_true", help=argparse.SUPPRESS)
    p.add_argument(CHECK_FLAGS_FLAG, action="store_true", help=argparse.SUPPRESS)
    return p


def out_check(p, flag="--out"):
    """A check for StrictParser.checks: --out names a folder that can be made or written into,
    found before anything runs (the same refusals as our stages' --out)."""
    dest = flag.lstrip("-").replace("-", "_")

    def check(args):
        problem = out_problem(getattr(args, dest))
        if problem:
            p.error("%s: %s" % (flag, problem))

    return check


def out_problem(path):
    """Why PATH cannot be an output folder (None when it can): what is there is not a folder,
    a name in it is a file, a kernel file system, a control character, no permission."""
    if path is None:
        return None
    if path == "":
        return "directory name empty"
    if shown(path) != path:
        return "'%s' holds a control character" % shown(path)
    if os.path.islink(path) and not os.path.exists(path):
        return "%s is a symbolic link to nothing" % path
    if os.path.exists(path) and not os.path.isdir(path):
        return "%s is not a directory" % path
    problem = below_problem(path)
    return "cannot create output directory %s: %s" % (path, problem) if problem else None


def below_problem(path):
    """Why nothing can be made at PATH (None when it can): the nearest folder above it that is
    there must be a writable folder, not a dangling link, a file or a kernel file system."""
    head = path
    while not os.path.lexists(head):
        head = os.path.dirname(head.rstrip("/")) or "."
    if os.path.islink(head) and not os.path.exists(head):
        return "%s is a symbolic link to nothing" % head
    if not os.path.isdir(head):
        return "Not a directory"
    real = os.path.realpath(head)
    for fs in ("/proc", "/sys"):
        if real == fs or real.startswith(fs + "/"):
            return "%s is a kernel file system" % fs
    if os.path.isdir(head) and not os.access(head, os.W_OK | os.X_OK):
        return "%s is not writable" % head
    return None


def out_file_problem(path):
    """Why PATH cannot be written as an output file (None when it can). Any name is allowed (the
    drawing programs quote it for gnuplot); the messages show its control characters as '?'."""
    if path == "":
        return "file name empty"
    if os.path.islink(path) and not os.path.exists(path):
        return "%s is a symbolic link to nothing" % path
    if os.path.lexists(path) and not os.path.isfile(path):
        return "%s is not a regular file" % path
    problem = below_problem(os.path.dirname(path) or ".")
    if problem and problem.endswith("symbolic link to nothing"):
        return problem
    return "cannot write %s: %s" % (path, problem) if problem else None


NO_HANGUL = "no font with Hangul for the Korean figures (fc-list :lang=ko lists none; install fonts-nanum)"


def hangul_font_missing():
    """NO_HANGUL when fontconfig knows no font with Hangul, else None: without one, cairo draws
    a Korean figure's words as a few giant glyphs across the picture."""
    fc_list = shutil.which("fc-list")
    if not fc_list:
        return NO_HANGUL
    listed = subprocess.run([fc_list, ":lang=ko", "family"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, check=False).stdout
    return None if listed.strip() else NO_HANGUL


def input_problem(path, what="file"):
    """Why PATH cannot be read as an input file (None when it can): checked before opening, so
    that a FIFO never blocks and a folder or a dangling link is one line. (Any name is allowed;
    the messages show its control characters as '?'.)"""
    path = str(path)
    if os.path.islink(path) and not os.path.exists(path):
        return "%s is a symbolic link to nothing" % path
    if not os.path.lexists(path):
        return "%s: no such %s" % (path, what)
    if os.path.isdir(path):
        return "%s is a directory, not a %s" % (path, what)
    if not os.path.isfile(path):
        return "%s is not a regular file" % path
    if not os.access(path, os.R_OK):
        return "%s: permission denied" % path
    return None


def finish_parsing(p, argv=None):
    def check(args):
        if args.sweep:
            p.error("--sweep is not compared: run one shape")
    p.checks += [check, out_check(p)]
    args = p.parse_args(argv)
    if args.check_flags:
        sys.exit(0)
    return args


def variants_of(args):
    return list(VARIANTS) if args.variant == "all" else [args.variant]


def cold_or_warm(args):
    return "warm" if args.warmup > 0 else "cold"


# ---- PyTorch, on demand --------------------------------------------------------------------

def require_torch():
    """torch, or exit 2 with one line saying what is missing (our stages' 'waived' code)."""
    try:
        import torch
    except Exception as e:  # ImportError, or a broken install raising anything else
        print("compare: PyTorch is required (import torch failed: %s)" % str(e).splitlines()[0])
        sys.exit(EXIT_WAIVED)
    if not torch.cuda.is_available():
        print("compare: waived: PyTorch %s sees no usable CUDA GPU" % torch.__version__)
        sys.exit(EXIT_WAIVED)
    # fp32 GEMMs in full fp32, as ours run them (no TF32).
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    return torch


def torch_dtype(torch, name):
    return {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[name]


def device_line(torch):
    p = torch.cuda.get_device_properties(0)
    return "device: %s (sm_%d%d, %d SMs), PyTorch %s, CUDA %s" % (
        p.name, p.major, p.minor, p.multi_processor_count, torch.__version__, torch.version.cuda)


# ---- .npy files from our stages ----------------------------------------------------------

def load_npy(directory, name, dtype):
    """numpy array of DIR/<name>.npy, checked against the dtype code --dtype implies."""
    import numpy

    path = os.path.join(directory, name + ".npy")
    if not os.path.exists(path):
        fail("%s is missing (did the stage run with --dump %s?)" % (path, directory))
    if not os.path.isfile(path):  # a FIFO would block the read for ever
        fail("%s is not a regular file" % path)
    a = numpy.load(path, allow_pickle=False)
    if a.dtype.str != NPY_DESCR[dtype]:
        fail("%s holds '%s' but --dtype %s is stored as '%s'" % (path, a.dtype.str, dtype, NPY_DESCR[dtype]))
    return a


def to_float64(a, dtype):
    """Values of an array in our .npy convention as float64 (bf16: the bits widened to fp32)."""
    import numpy

    if dtype == "bf16":
        return (a.astype(numpy.uint32) << 16).view(numpy.float32).astype(numpy.float64)
    return a.astype(numpy.float64)


def to_device(torch, a, dtype):
    """A tensor on the GPU with exactly the bits of the array."""
    t = torch.from_numpy(a.copy())
    if dtype == "bf16":
        t = t.view(torch.bfloat16)  # '<u2' holds bf16 bits: reinterpret, do not convert
    return t.to("cuda")


def outputs_in(directory):
    """Our outputs in DIR: y.npy, or y_<variant>.npy per variant when a stage dumps several."""
    names = sorted(f[:-4] for f in os.listdir(directory) if re.fullmatch(r"y(_\w+)?\.npy", f))
    if not names:
        fail("no y.npy (or y_<variant>.npy) in %s" % directory)
    return names


def rel_fro_error(ours, theirs):
    """||ours - theirs||_F / ||theirs||_F in float64; inf when anything is not finite."""
    import numpy

    if not (numpy.isfinite(ours).all() and numpy.isfinite(theirs).all()):
        return float("inf")
    num = numpy.linalg.norm((ours - theirs).ravel())
    den = numpy.linalg.norm(theirs.ravel())
    return float(num / den) if den > 0 else float(num)


def check_outputs(torch, args, reference):
    """Compares every y*.npy in --load with PyTorch's output y (a tensor); returns True on pass."""
    theirs = reference.float().cpu().double().numpy()
    tol = TOLERANCE[args.dtype]
    ok = True
    for name in outputs_in(args.load):
        ours = load_npy(args.load, name, args.dtype)
        if ours.shape != theirs.shape and ours.size == theirs.size and ours.shape[-1:] == theirs.shape[-1:]:
            ours = ours.reshape(theirs.shape)  # [batch, seq, dim] and [tokens, dim]: the same matrix
        if ours.shape != theirs.shape:
            fail("%s.npy is %s but PyTorch's output is %s" % (name, tuple(ours.shape), tuple(theirs.shape)))
        err = rel_fro_error(to_float64(ours, args.dtype), theirs)
        passed = err <= tol
        ok &= passed
        print("compare: %s (ours) vs PyTorch eager on the same tensors: rel. Frobenius error %.2e "
              "in float64 (%s tolerance %.0e): %s" % (name, err, args.dtype, tol, "PASS" if passed else "FAIL"))
    return ok


def fail(message):
    """Bad input: one line, exit 1, named after the program (the last StrictParser made)."""
    sys.stderr.write("%s: error: %s\n" % (PROG, shown(message)))
    sys.exit(EXIT_BAD_INPUT)


# ---- the schedule, timed and traced ------------------------------------------------------

def schedule_phases(args):
    n = args.wait + args.warmup_steps + args.active
    return ["wait" if s < args.wait else "warmup" if s < args.wait + args.warmup_steps else "active"
            for s in range(n)]


def timed_steps(torch, step_fn, args):
    """Runs the schedule; per step (cpu_us, gpu_us): host time to issue the step, and the
    CUDA-event time of its GPU work (which includes any gap the CPU leaves)."""
    phases = schedule_phases(args)
    starts = [torch.cuda.Event(enable_timing=True) for _ in phases]
    stops = [torch.cuda.Event(enable_timing=True) for _ in phases]
    rows = []
    for s in range(len(phases)):
        starts[s].record()
        t0 = time.perf_counter_ns()
        step_fn()
        cpu_us = (time.perf_counter_ns() - t0) / 1e3
        stops[s].record()
        stops[s].synchronize()
        rows.append((cpu_us, starts[s].elapsed_time(stops[s]) * 1e3))
    return rows


def back_to_back_us(torch, step_fn, n, repeats=5):
    """Device time per call with n calls issued without waiting (median of `repeats`), as a
    serving loop issues them: the slower of CPU issue and GPU work sets it."""
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        start.record()
        for _ in range(n):
            step_fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e3 / n)
    return statistics.median(times)


def write_csv(path, phases, rows):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        f.write("step,phase,cpu_us,gpu_us,gated\n")
        for s, (phase, (cpu, gpu)) in enumerate(zip(phases, rows)):
            f.write("%d,%s,%.3f,%.3f,0\n" % (s, phase, cpu, gpu))
    os.replace(tmp, path)


def print_steps(phases, rows):
    print("%5s  %-14s %-7s %12s %12s" % ("step", "label", "phase", "cpu_us", "gpu_us"))
    for s, (phase, (cpu, gpu)) in enumerate(zip(phases, rows)):
        print("%5d  %-14s %-7s %12.2f %12.2f" % (s, "ProfilerStep#%d" % s, phase, cpu, gpu))
    active = [r for p, r in zip(phases, rows) if p == "active"]
    cpu = statistics.median(r[0] for r in active)
    gpu = statistics.median(r[1] for r in active)
    print("active steps: median cpu_us %.2f, gpu_us %.2f (gpu_us includes the gaps a slower CPU leaves)"
          % (cpu, gpu))
    return cpu, gpu


def traced_steps(torch, step_fn, args, base, top_rows=12):
    """The schedule under torch.profiler, as the articles ran it: ProfilerStep#N per step,
    <base>.json (Chrome/Perfetto trace) and <base>.txt (key_averages sorted by CUDA total)."""
    from torch.profiler import ProfilerActivity, profile, schedule

    def export(prof):
        tmp = "%s.json.tmp.%d" % (base, os.getpid())
        prof.export_chrome_trace(tmp)
        with open(tmp) as f:  # the trace names the file it was written to: the final name
            text = f.read().replace(json.dumps(tmp)[1:-1], json.dumps(base + ".json")[1:-1])
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, base + ".json")
        averages = prof.key_averages()
        try:
            table = averages.table(sort_by="cuda_time_total", row_limit=-1)
        except (AttributeError, KeyError):  # newer PyTorch names it device time
            table = averages.table(sort_by="device_time_total", row_limit=-1)
        tmp = "%s.txt.tmp.%d" % (base, os.getpid())
        with open(tmp, "w") as f:
            f.write(table + "\n")
        os.replace(tmp, base + ".txt")
        print("\n".join(table.splitlines()[:top_rows + 3]))
        print("trace: wrote %s.json and %s.txt" % (base, base))

    # One cycle (repeat=1) is all we record; PyTorch warns that cycles clear events.
    warnings.filterwarnings("ignore", message=".*clears events at the end of each cycle.*")
    n = args.wait + args.warmup_steps + args.active
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=args.wait, warmup=args.warmup_steps, active=args.active, repeat=1),
                 on_trace_ready=export) as prof:
        for _ in range(n):
            # The same body as the timed pass, so both traces show the same per-step calls.
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            step_fn()
            stop.record()
            stop.synchronize()
            prof.step()


def spawn_trace_pass(variant):
    """This script again, in a fresh process (cold as well), with the profiler on."""
    argv, i = [], 0
    while i < len(sys.argv):  # the same line but its --variant (a flag given twice is refused)
        a = sys.argv[i]
        if a == "--variant":
            i += 2
            continue
        if a != TRACE_PASS_FLAG and not a.startswith("--variant="):
            argv.append(a)
        i += 1
    cmd = [sys.executable] + argv + ["--variant", variant, TRACE_PASS_FLAG]
    sys.stdout.flush()
    rc = subprocess.call(cmd)
    if rc != 0:
        print("trace: the profiler pass exited with status %d" % rc)


# ---- one stage's run -------------------------------------------------------------------

def module_forwards(torch, module, x, variant):
    """(step_fn, reference_fn) for make_forward when the forward is an nn.Module on x: the module
    (compiled under --variant compile) and the module itself, both without autograd."""
    fn = torch.compile(module) if variant == "compile" else module

    def step():
        with torch.no_grad():
            return fn(x)

    def reference():
        with torch.no_grad():
            return module(x)

    return step, reference


# PyTorch's forms of a forward: eager; torch.compile; graph, the eager forward's kernels captured
# once in a CUDA graph by hand (torch.cuda.CUDAGraph) and replayed, the rival of our graph rung.
VARIANTS = ("eager", "compile", "graph")
GRAPH_LAUNCHES = ("the eager forward's kernels captured once in a CUDA graph (torch.cuda.CUDAGraph), "
                  "replayed: one launch per forward")
GRAPH_WARMUPS = 3  # eager calls on a side stream before the capture, as PyTorch's recipe does


def graph_forward(torch, forward, warmups=GRAPH_WARMUPS):
    """A step that replays forward() captured once in a CUDA graph, PyTorch's documented recipe:
    a few eager calls on a side stream (so that cuBLAS and the caching allocator have set up
    what they need), then one call captured with torch.cuda.graph, without autograd. forward
    reads only tensors that stay put (the static input); the step returns the static output,
    which each replay overwrites."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.no_grad():
        for _ in range(warmups):
            forward()
    torch.cuda.current_stream().wait_stream(side)
    # cuBLAS's workspace for the capture's stream is kept between calls; one set up earlier (by an
    # earlier capture, in a graph's memory pool since freed) would be captured by address and
    # fault at replay once that memory goes back to the device. Cleared, the capture allocates
    # its own, in this graph's pool, which lives as long as the graph.
    torch._C._cuda_clearCublasWorkspaces()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph), torch.no_grad():
        static_y = forward()

    def step():
        graph.replay()
        return static_y

    return step


def make_step(torch, make_forward, variant):
    """(step_fn, reference_fn) of a variant: the script's own for eager and compile; for graph,
    the script's eager step captured once in a CUDA graph (graph_forward) and replayed."""
    if variant != "graph":
        return make_forward(torch, variant)
    eager_fn, reference_fn = make_forward(torch, "eager")
    return graph_forward(torch, eager_fn), reference_fn


def check_graph(torch, args, step_fn, reference_fn):
    """The graph's replayed output against PyTorch eager's on the same tensors (the relative
    Frobenius error in float64, the dtype's tolerance): a capture that went wrong shows here.
    Returns True on pass."""
    import math

    got = step_fn().double()
    want = reference_fn().double()
    den = float(torch.linalg.norm(want))
    num = float(torch.linalg.norm(got - want))
    err = num / den if den > 0 else num
    tol = TOLERANCE[args.dtype]
    passed = math.isfinite(err) and err <= tol
    print("compare: PyTorch graph (replayed) vs PyTorch eager on the same tensors: rel. Frobenius error %.2e "
          "in float64 (%s tolerance %.0e): %s" % (err, args.dtype, tol, "PASS" if passed else "FAIL"))
    return passed


def run(args, tag_of, make_forward, launches, record_name):
    """The whole PyTorch side for one stage.

    tag_of(variant)          the output tag, as our stage names it plus '_torch'
    make_forward(torch, variant) -> (step_fn, reference_fn)
                             step_fn runs one forward and returns its output; reference_fn()
                             returns PyTorch eager's output on the same tensors (for --load, and
                             to check the graph variant); asked for eager and compile only: the
                             graph variant captures the eager step (make_step)
    launches[variant]        what the variant asks PyTorch to run, for the report (the graph
                             variant's is GRAPH_LAUNCHES unless the script says otherwise)
    record_name              the record_function name around the forward, as our NVTX range
    """
    # --load is checked here, not with the flags: compare/run_compare.sh checks the flags before
    # our stage has written it; but before PyTorch is looked for (exit 2 only when all is good)
    if args.load and not os.path.isdir(args.load):
        fail("--load %s: no such directory" % args.load)
    torch = require_torch()
    os.makedirs(args.out, exist_ok=True)
    if not args.trace_pass:
        print(device_line(torch))
    ok = True
    for variant in variants_of(args):
        tag = tag_of(variant)
        base = os.path.join(args.out, tag)
        if args.trace_pass and variant == "graph":
            # CUPTI must be loaded before a graph is captured for the profiler to see the graph's
            # kernels (older CUDA; PyTorch issue 75504): an empty profiler session first, as
            # PyTorch's own workaround does.
            from torch.profiler import ProfilerActivity, profile
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
                pass
        step_fn, reference_fn = make_step(torch, make_forward, variant)

        def step():
            with torch.profiler.record_function(record_name):
                step_fn()

        for _ in range(args.warmup):
            step()
        torch.cuda.synchronize()
        if args.trace_pass:
            traced_steps(torch, step, args, base)
            continue

        print("\n== %s: PyTorch %s" % (tag, variant))
        print("launches per step: %s" % launches.get(variant, GRAPH_LAUNCHES))
        phases = schedule_phases(args)
        rows = timed_steps(torch, step, args)
        cpu, gpu = print_steps(phases, rows)
        b2b = back_to_back_us(torch, step, 200 if gpu < 1000 else 20)
        print("back to back: %.2f us per step (%d steps issued without waiting, median of 5)"
              % (b2b, 200 if gpu < 1000 else 20))
        if cpu > gpu:
            print("verdict: overhead-bound: the CPU needs %.2f us to issue a step the GPU runs in %.2f us"
                  % (cpu, gpu))
        else:
            print("verdict: compute-bound: the GPU needs %.2f us per step, the CPU issues it in %.2f us"
                  % (gpu, cpu))
        write_csv(base + ".csv", phases, rows)
        print("wrote %s.csv" % base)
        if variant == "graph":
            ok &= check_graph(torch, args, step_fn, reference_fn)
        if args.load and variant == variants_of(args)[0]:
            ok &= check_outputs(torch, args, reference_fn())
        if not args.no_trace:
            spawn_trace_pass(variant)
            counts = kernels_per_step(base + ".json")
            if counts:
                print("kernels per active step (from the profiler's trace): %s"
                      % describe_counts(counts))
                print("  " + "\n  ".join(short_name(k) for k in counts[-1]["kernels"]))
    return 0 if ok else EXIT_BAD_INPUT


# ---- reading traces: ours and PyTorch's share one schema ----------------------------------

# PyTorch and our traces name steps ProfilerStep#N; our traces before the Kineto schema wrote
# ProfileStep#N, as the articles' prose does.
STEP_NAME = re.compile(r"^Profiler?Step#(\d+)$")
# A range on the host thread (user_annotation or cpu_op) may have a mirror of the same name on
# the GPU lane, spanning the GPU work it launched: a record_function range in PyTorch's traces and
# ours (traces of ours recorded before that layout mirror ProfilerStep#N too). A mirror launches
# nothing: it is not a step.
GPU_RANGE_CATS = ("gpu_user_annotation",)
LAUNCH_CATS = ("cuda_runtime", "cuda_driver")
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def kernels_per_step(path):
    """Per recorded step, in step order: {"step", "kernels" (names in launch order), "memcpy",
    "memset", "kernel_us"}. A step is a ProfilerStep#N range on the host thread; GPU work belongs
    to it when the runtime or driver call that launched it (same correlation id) lies inside
    the range, on the same thread. [] when the trace is missing or has no steps."""
    if not os.path.isfile(path):  # not there, or a FIFO that would never end
        return []
    try:
        with open(path) as f:
            data = json.load(f)
        events = data["traceEvents"] if isinstance(data, dict) else data
        spans = [e for e in events if isinstance(e, dict) and e.get("ph") == "X" and "ts" in e and "dur" in e]
        for e in spans:
            float(e["ts"]), float(e["dur"])
    except (OSError, ValueError, KeyError, TypeError):
        return []
    steps = sorted(((int(m.group(1)), e) for e in spans if e.get("cat") not in GPU_RANGE_CATS
                    for m in [STEP_NAME.match(e.get("name", ""))] if m),
                   key=lambda t: t[0])
    launches = [e for e in spans if e.get("cat") in LAUNCH_CATS and "correlation" in e.get("args", {})]
    gpu = {}
    for e in spans:
        if e.get("cat") in GPU_CATS and "correlation" in e.get("args", {}):
            gpu.setdefault(e["args"]["correlation"], []).append(e)
    result = []
    for number, s in steps:
        t0, t1 = float(s["ts"]), float(s["ts"]) + float(s["dur"])
        work = []
        for call in launches:
            if call.get("pid") == s.get("pid") and call.get("tid") == s.get("tid") and t0 <= float(call["ts"]) <= t1:
                work.extend(gpu.get(call["args"]["correlation"], []))
        work.sort(key=lambda e: float(e["ts"]))
        kernels = [e for e in work if e["cat"] == "kernel"]
        result.append({
            "step": number,
            "kernels": [e["name"] for e in kernels],
            "memcpy": sum(e["cat"] == "gpu_memcpy" for e in work),
            "memset": sum(e["cat"] == "gpu_memset" for e in work),
            "kernel_us": sum(float(e["dur"]) for e in kernels),
        })
    return result


def describe_counts(counts):
    """'5 kernels' or '5-6 kernels', plus memcpy / memset operations when there are any."""
    def spread(values):
        lo, hi = min(values), max(values)
        return str(lo) if lo == hi else "%d-%d" % (lo, hi)

    text = spread([len(c["kernels"]) for c in counts]) + " kernels"
    for kind in ("memcpy", "memset"):
        if any(c[kind] for c in counts):
            text += " + %s %s" % (spread([c[kind] for c in counts]), kind)
    return text


def short_name(kernel):
    """A kernel name short enough for a table: PyTorch's templated elementwise kernels become
    'vectorized_elementwise_kernel[GeluCUDAKernelImpl]' (the innermost functor named);
    cuBLAS, Triton and our names stay."""
    name = kernel[5:] if kernel.startswith("void ") else kernel
    head = re.split(r"[<(]", name, maxsplit=1)[0].split("::")[-1]
    if head == name:
        return name
    inner = re.findall(r"\w*(?:Functor|KernelImpl)\w*", name[len(head):])
    return head + ("[%s]" % inner[-1] if inner else "")
