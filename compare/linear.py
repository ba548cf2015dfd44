#!/usr/bin/env python3
"""linear.py: nn.Linear from part 2 of the articles in PyTorch, next to 02_linear.

  python3 compare/linear.py                              1024 x 32 -> 64, the article's command
  python3 compare/linear.py --batch 8192 --in_dim 4096 --out_dim 4096 --variant all
  python3 compare/linear.py --load traces/02_linear/dump

y = nn.Linear(in_dim, out_dim)(x) = x W^T + b, W stored [out_dim, in_dim], inside
record_function("linear_fwd").
  eager    aten::linear -> aten::t (a view: no kernel) + aten::addmm (one GEMM, bias in its epilogue)
  compile  torch.compile of the module: the same GEMM; only the CPU-side view bookkeeping changes
  graph    the eager module's kernel captured once in a CUDA graph (torch.cuda.CUDAGraph) and
           replayed: one launch per step
Outputs: traces/02_linear/<tag>_torch.{csv,json,txt}, tags as our stage's (1024x32x64_bf16_cold_eager).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

STAGE = "02_linear"
LAUNCHES = {
    "eager": "aten::linear -> aten::t (view, no kernel) + aten::addmm (cuBLAS GEMM, bias epilogue)",
    "compile": "the compiled module: aten::addmm (cuBLAS GEMM, bias epilogue)",
    "graph": common.GRAPH_LAUNCHES,
}


def main():
    p = common.parser(STAGE, "linear.py", "y = x W^T + b (nn.Linear) in PyTorch, as 02_linear runs it")
    p.add_argument("--batch", type=common.whole(1, 1 << 24), default=1024, help="rows of x and y")
    p.add_argument("--in_dim", type=common.whole(1, 65536), default=32, help="columns of x and of W")
    p.add_argument("--out_dim", type=common.whole(1, 65536), default=64, help="rows of W, columns of y")
    args = common.finish_parsing(p)

    def tag_of(variant):
        return "%dx%dx%d_%s_%s_%s_torch" % (args.batch, args.in_dim, args.out_dim, args.dtype,
                                            common.cold_or_warm(args), variant)

    def make_forward(torch, variant):
        dt = common.torch_dtype(torch, args.dtype)
        layer = torch.nn.Linear(args.in_dim, args.out_dim, bias=True, device="cuda", dtype=dt)
        want = {"x": (args.batch, args.in_dim), "W": (args.out_dim, args.in_dim), "b": (args.out_dim,)}
        if args.load:
            tensors = {}
            for name, shape in want.items():
                # W.npy, or w.npy (the stage's own name for it); both are [out_dim, in_dim]
                file = "w" if name == "W" and not os.path.exists(os.path.join(args.load, "W.npy")) else name
                tensors[name] = common.to_device(torch, common.load_npy(args.load, file, args.dtype), args.dtype)
                if tuple(tensors[name].shape) != shape:
                    common.fail("%s.npy is %s, the flags say %s" % (name, tuple(tensors[name].shape), shape))
            x = tensors["x"]
            with torch.no_grad():
                layer.weight.copy_(tensors["W"])
                layer.bias.copy_(tensors["b"])
        else:
            torch.manual_seed(args.seed)  # nn.Linear's own init draws from the global generator
            layer.reset_parameters()
            g = torch.Generator(device="cuda").manual_seed(args.seed)
            x = torch.rand(want["x"], generator=g, device="cuda").mul_(2).sub_(1).to(dt)
        return common.module_forwards(torch, layer, x, variant)

    return common.run(args, tag_of, make_forward, LAUNCHES, "linear_fwd")


if __name__ == "__main__":
    sys.exit(main())
