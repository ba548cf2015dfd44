#!/usr/bin/env python3
"""grid_torch.py: PyTorch's side of the shape grid, one process that bench/shape_grid.py keeps up.

  python3 bench/shape_grid.py            starts it; it is not meant to be run by hand

The grid times our ladder (bin/04_fused_mlp, a process per point and round) and PyTorch's GeGLU
MLP at the same shape, in rounds that alternate the two sides, so that both see the same clocks.
Compiling is slow (max-autotune tunes every GEMM shape), so PyTorch's models live in this one
process: it compiles a point's modes once, then times them each time the grid asks, with the
number of forwards back to back that our ladder used.

Commands, one JSON object per line on stdin; one JSON answer per line on stdout:
  {"cmd": "point", "dim": D, "hidden": H, "tokens": T, "seed": S}
      builds the module (three bias-free nn.Linear, nn.Linear's init) and x uniform in [-1, 1),
      compiles every mode for T tokens, checks each mode's y against a float64 forward of the same
      weights (relative Frobenius error, bf16's tolerance) and answers
      {"modes": [...], "compile_s": {mode: s}, "rel_err": {mode: e}}
  {"cmd": "time", "forwards": N, "rounds": R}
      N forwards of each mode issued back to back, R rounds that alternate the modes; answers
      {"us": {mode: median us per forward}, "sm_mhz": {...}, "watts": {...}} (NVML's median
      while that mode ran; null without NVML)
  {"cmd": "quit"}
An answer {"error": "..."} ends the grid with that line.

Modes: eager; torch.compile's default; graph, at every token count: the eager forward captured
once in a CUDA graph by hand (torch.cuda.CUDAGraph, warmed up on a side stream, static x) and
replayed, the rival of our graph rung; up to 16 tokens also "reduce-overhead" and
"max-autotune" (both replay CUDA graphs, which is what decode needs); from 17 tokens
"max-autotune-no-cudagraphs". Every compile is static (dynamic=False): one graph per shape, the
best PyTorch can do at that shape.
"""
import json
import math
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
from mlp import geglu_mlp  # noqa: E402

DECODE_TOKENS = 16  # up to here, the modes that replay CUDA graphs


def modes_for(tokens):
    if tokens <= DECODE_TOKENS:
        return ["eager", "compile", "graph", "reduce-overhead", "max-autotune"]
    return ["eager", "compile", "graph", "max-autotune-no-cudagraphs"]


class Clocks:
    """SM clock and board power sampled by NVML every 10 ms while a mode runs (none without it)."""

    def __init__(self):
        self.handle = None
        try:
            import pynvml
            pynvml.nvmlInit()
            index = int(os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0] or 0)
            self.handle, self.nvml = pynvml.nvmlDeviceGetHandleByIndex(index), pynvml
        except Exception:  # no nvidia-ml-py, or no NVML: the columns stay empty
            self.handle = None

    def sample(self, fn):
        """fn() while sampling; (its result, median MHz, median W)."""
        if self.handle is None:
            return fn(), None, None
        mhz, watts, done = [], [], threading.Event()

        def loop():
            while not done.is_set():
                try:
                    mhz.append(self.nvml.nvmlDeviceGetClockInfo(self.handle, self.nvml.NVML_CLOCK_SM))
                    watts.append(self.nvml.nvmlDeviceGetPowerUsage(self.handle) / 1000.0)
                except Exception:
                    return
                done.wait(0.01)

        t = threading.Thread(target=loop, daemon=True)
        t.start()
        try:
            result = fn()
        finally:
            done.set()
            t.join()
        return (result, statistics.median(mhz) if mhz else None, statistics.median(watts) if watts else None)


class Grid:
    def __init__(self, torch):
        self.torch, self.steps, self.clocks = torch, {}, Clocks()

    def point(self, dim, hidden, tokens, seed):
        torch = self.torch
        import torch._dynamo  # noqa: F401
        self.steps = {}
        torch._dynamo.reset()  # one shape's graphs at a time: no recompile limit across the grid
        torch.cuda.empty_cache()
        dt = torch.bfloat16
        torch.manual_seed(seed)
        model = geglu_mlp(torch, dim, hidden, dt)
        g = torch.Generator(device="cuda").manual_seed(seed)
        x = torch.rand((tokens, dim), generator=g, device="cuda").mul_(2).sub_(1).to(dt)
        want = self.reference(model, x)
        compile_s, rel_err = {}, {}
        for mode in modes_for(tokens):
            t0 = time.perf_counter()
            if mode == "graph":  # the capture (after its warm-up calls) is this mode's "compile"
                step = common.graph_forward(torch, (lambda m: lambda: m(x))(model))
            else:
                fn = model if mode == "eager" else torch.compile(model, mode=None if mode == "compile" else mode,
                                                                  dynamic=False)
                step = (lambda f: lambda: f(x))(fn)
            for _ in range(5):  # compile, then the calls cudagraph trees record and warm on
                step()
            torch.cuda.synchronize()
            compile_s[mode] = round(time.perf_counter() - t0, 2)
            got = step().double()
            err = float(torch.linalg.norm(got - want) / torch.linalg.norm(want))
            if not math.isfinite(err) or err > common.TOLERANCE["bf16"]:
                raise RuntimeError("PyTorch %s at %d x %d -> %d: relative error %.3g over bf16's tolerance %g"
                                   % (mode, tokens, dim, hidden, err, common.TOLERANCE["bf16"]))
            rel_err[mode] = err
            self.steps[mode] = step
        return {"modes": list(self.steps), "compile_s": compile_s, "rel_err": rel_err}

    def reference(self, model, x):
        """y in float64 from the same bf16 weights and x: what every mode is checked against."""
        F, d = self.torch.nn.functional, self.torch.float64
        wg, wu, wd = (m.weight.to(d) for m in (model.gate_proj, model.up_proj, model.down_proj))
        x64 = x.to(d)
        return (F.gelu(x64 @ wg.T, approximate="tanh") * (x64 @ wu.T)) @ wd.T

    def time(self, forwards, rounds):
        us = {m: [] for m in self.steps}
        mhz = {m: [] for m in self.steps}
        watts = {m: [] for m in self.steps}
        for _ in range(rounds):
            for mode, step in self.steps.items():
                t, f, w = self.clocks.sample(lambda: common.back_to_back_us(self.torch, step, forwards, repeats=1))
                us[mode].append(t)
                if f is not None:
                    mhz[mode].append(f)
                    watts[mode].append(w)

        def med(d):
            return {m: (statistics.median(v) if v else None) for m, v in d.items()}

        return {"us": med(us), "sm_mhz": med(mhz), "watts": med(watts)}


def main():
    # No flags: a command line is refused before PyTorch is looked for; --help is the usage.
    p = common.StrictParser(prog="compare/grid_torch.py", description=__doc__.split("\n\n")[0],
                            usage="compare/grid_torch.py (commands on stdin; bench/shape_grid.py starts it)")
    p.parse_args()
    # Answers go to the real stdout; anything PyTorch or a compiler prints goes to stderr.
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    torch = common.require_torch()
    grid = Grid(torch)
    with torch.no_grad():
        for line in sys.stdin:
            try:
                c = json.loads(line)
                if c.get("cmd") == "quit":
                    break
                if c.get("cmd") == "point":
                    a = grid.point(int(c["dim"]), int(c["hidden"]), int(c["tokens"]), int(c.get("seed", 1234)))
                elif c.get("cmd") == "time":
                    a = grid.time(int(c["forwards"]), int(c["rounds"]))
                else:
                    a = {"error": "unknown command %r" % c.get("cmd")}
            except Exception as e:  # the grid reports it and stops
                a = {"error": "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")}
            answers.write(json.dumps(a) + "\n")
            answers.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
