#!/usr/bin/env python3
"""mlp.py: the GeGLU MLP of part 2 of the articles in PyTorch, next to 03_simple_mlp and 04_fused_mlp.

  python3 compare/mlp.py                                 64 x 128 tokens, 768 -> 3072 -> 768
  python3 compare/mlp.py --batch 1 --seq 8 --variant all the decode shape: overhead-bound
  python3 compare/mlp.py --load traces/03_simple_mlp/dump

gate = x Wg^T, up = x Wu^T, y = (gelu_tanh(gate) * up) Wd^T, no biases, as three nn.Linear
layers inside record_function("mlp_fwd").
  eager    3 cuBLAS GEMMs (aten::linear -> aten::mm) + aten::gelu + aten::mul: 5 kernels
  compile  torch.compile of the module: the 3 GEMMs and one generated (Triton) kernel that
           computes gelu(gate) * up in one pass: 4 kernels
  graph    eager's 5 kernels captured once in a CUDA graph (torch.cuda.CUDAGraph) and replayed:
           one launch per step, the rival of 04's graph rung
Outputs: traces/<stage>/<tag>_torch.{csv,json,txt}; --stage picks the directory (03_simple_mlp
unless told 04_fused_mlp).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

LAUNCHES = {
    "eager": "3 x aten::linear -> aten::mm (cuBLAS GEMMs) + aten::gelu + aten::mul (elementwise): 5 kernels",
    "compile": "the compiled module: 3 cuBLAS GEMMs + 1 generated kernel for gelu(gate) * up",
    "graph": common.GRAPH_LAUNCHES,
}


def geglu_mlp(torch, dim, hidden, dt):
    """The articles' GeGLU MLP as an nn.Module on the GPU (three bias-free nn.Linear layers)."""
    F = torch.nn.functional

    class GeGLU(torch.nn.Module):
        def __init__(self):
            super().__init__()
            kw = dict(bias=False, device="cuda", dtype=dt)
            self.gate_proj = torch.nn.Linear(dim, hidden, **kw)
            self.up_proj = torch.nn.Linear(dim, hidden, **kw)
            self.down_proj = torch.nn.Linear(hidden, dim, **kw)

        def forward(self, x):
            return self.down_proj(F.gelu(self.gate_proj(x), approximate="tanh") * self.up_proj(x))

    return GeGLU()


def main():
    p = common.parser("<stage>", "mlp.py", "the GeGLU MLP in PyTorch, as 03_simple_mlp and 04_fused_mlp run it")
    p.add_argument("--stage", choices=("03_simple_mlp", "04_fused_mlp"), default="03_simple_mlp",
                   help="the stage compared with: the default --out is traces/<stage> (default 03_simple_mlp)")
    p.set_defaults(out=None)
    p.add_argument("--batch", type=common.whole(1, 1 << 20), default=64, help="sequences")
    p.add_argument("--seq", type=common.whole(1, 1 << 20), default=128, help="tokens per sequence")
    p.add_argument("--dim", type=common.whole(1, 65536), default=768, help="model width")
    p.add_argument("--hidden", type=common.whole(1, 262144), default=3072, help="MLP width")
    args = common.finish_parsing(p)
    args.out = args.out if args.out is not None else "traces/" + args.stage
    tokens = args.batch * args.seq

    def tag_of(variant):
        return "%dx%d_%dx%d_%s_%s_%s_torch" % (args.batch, args.seq, args.dim, args.hidden, args.dtype,
                                               common.cold_or_warm(args), variant)

    def make_forward(torch, variant):
        dt = common.torch_dtype(torch, args.dtype)
        torch.manual_seed(args.seed)  # nn.Linear's init: uniform in +-1/sqrt(fan_in)
        model = geglu_mlp(torch, args.dim, args.hidden, dt)
        want = {"x": (tokens, args.dim), "wg": (args.hidden, args.dim), "wu": (args.hidden, args.dim),
                "wd": (args.dim, args.hidden)}
        if args.load:
            t = {}
            for name, shape in want.items():
                t[name] = common.to_device(torch, common.load_npy(args.load, name, args.dtype), args.dtype)
                if name == "x" and t[name].dim() == 3:  # [batch, seq, dim] is the same matrix
                    t[name] = t[name].reshape(-1, args.dim)
                if tuple(t[name].shape) != shape:
                    common.fail("%s.npy is %s, the flags say %s" % (name, tuple(t[name].shape), shape))
            x = t["x"]
            with torch.no_grad():
                model.gate_proj.weight.copy_(t["wg"])
                model.up_proj.weight.copy_(t["wu"])
                model.down_proj.weight.copy_(t["wd"])
        else:
            g = torch.Generator(device="cuda").manual_seed(args.seed)
            x = torch.rand(want["x"], generator=g, device="cuda").mul_(2).sub_(1).to(dt)
        return common.module_forwards(torch, model, x, variant)

    return common.run(args, tag_of, make_forward, LAUNCHES, "mlp_fwd")


if __name__ == "__main__":
    sys.exit(main())
