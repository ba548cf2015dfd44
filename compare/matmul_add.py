#!/usr/bin/env python3
"""matmul_add.py: part 1 of the articles in PyTorch, next to 01_matmul_add.

  python3 compare/matmul_add.py                          size 64, eager, the articles' schedule
  python3 compare/matmul_add.py --size 4096 --variant all
  python3 compare/matmul_add.py --load traces/01_matmul_add/dump   the tensors our stage dumped

y = torch.add(torch.matmul(x, w), b) with x, w, b all size x size (--batch B: B x size x size,
which turns aten::mm into aten::bmm), inside record_function("matmul_add") as in the article.
  eager    aten::matmul -> aten::mm (a cuBLAS GEMM), then aten::add (an elementwise kernel)
  compile  torch.compile of the same function: aten::addmm, a copy of b into y then the GEMM
           with beta = 1, as the article found
  graph    the eager function's kernels captured once in a CUDA graph (torch.cuda.CUDAGraph) and
           replayed: one launch per step, the rival of a graph of ours
Outputs: traces/01_matmul_add/<tag>_torch.{csv,json,txt}, tags as our stage's (64_bf16_cold_eager).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

STAGE = "01_matmul_add"
LAUNCHES = {
    "eager": "aten::matmul -> aten::mm (cuBLAS GEMM) + aten::add (elementwise kernel)",
    "compile": "the compiled graph: aten::addmm (b copied into y, GEMM with beta = 1)",
    "graph": common.GRAPH_LAUNCHES,
}


def main():
    p = common.parser(STAGE, "matmul_add.py", "y = x @ w + b in PyTorch, as 01_matmul_add runs it")
    p.add_argument("--size", type=common.whole(1, 32768), default=64, help="x, w and b are size x size")
    p.add_argument("--batch", type=common.whole(1, 4096), default=1, help="independent problems per step")
    args = common.finish_parsing(p)
    shape = (args.size, args.size) if args.batch == 1 else (args.batch, args.size, args.size)

    def tag_of(variant):
        batch = "b%d_" % args.batch if args.batch > 1 else ""
        return "%s%d_%s_%s_%s_torch" % (batch, args.size, args.dtype, common.cold_or_warm(args), variant)

    def make_forward(torch, variant):
        dt = common.torch_dtype(torch, args.dtype)
        if args.load:
            x, w, b = (common.to_device(torch, common.load_npy(args.load, n, args.dtype), args.dtype)
                       for n in ("x", "w", "b"))
            for name, t in (("x", x), ("w", w), ("b", b)):
                if tuple(t.shape) != shape:
                    common.fail("%s.npy is %s, the flags say %s" % (name, tuple(t.shape), shape))
        else:
            g = torch.Generator(device="cuda").manual_seed(args.seed)
            x, w, b = (torch.rand(shape, generator=g, device="cuda").mul_(2).sub_(1).to(dt) for _ in range(3))

        def matmul_add(x_, w_, b_):
            return torch.add(torch.matmul(x_, w_), b_)

        fn = torch.compile(matmul_add) if variant == "compile" else matmul_add
        return (lambda: fn(x, w, b)), (lambda: matmul_add(x, w, b))

    return common.run(args, tag_of, make_forward, LAUNCHES, "matmul_add")


if __name__ == "__main__":
    sys.exit(main())
