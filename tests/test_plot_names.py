#!/usr/bin/env python3
"""The Python programs that draw with gnuplot, compare/side_by_side.py and tools/trace_timeline.py,
given names and titles a shell or gnuplot would read as syntax: each figure appears under exactly
that name, and the command inside never runs (it would make the file PWNED). A name written into
a gnuplot string must be data whatever it holds: gnuplot's single-quoted strings know one escape,
a doubled quote; in double quotes a quote or a backslash ends the string, and what follows runs
as gnuplot commands, system() among them. A name starting with '<' or '|' is a command to
gnuplot itself. (common/plot.c, for the stages, is tested by tests/test_plot.c.)
One line per name and program: PASS/FAIL name (SKIP without gnuplot).
"""
import contextlib
import io
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "compare"))
import side_by_side  # noqa: E402

TRACE = os.path.join(ROOT, "docs", "results", "h200-2026-11-30", "traces", "01_matmul_add",
                     "64_bf16_cold_eager.json")
NAMES = [
    "x'.system(\"touch PWNED\")#",
    'x"; system("touch PWNED"); print "',
    "q'; system('touch PWNED'); '",
    "d$(touch PWNED)",
    "b`touch PWNED`",
    "back\\slash'\\",
    'dq"; touch PWNED; "',
    "new\nline",
    "<touch PWNED",
    "with space",
]
CSV = "step,phase,cpu_us,gpu_us,gated\n0,wait,90,80,0\n1,active,15,6,1\n2,active,14,6,1\n"


def verdict(label, png):
    """Prints PASS or FAIL label; 1 when it failed."""
    if os.path.exists("PWNED"):
        os.remove("PWNED")
        print("FAIL %s: it ran a command" % label)
        return 1
    if not os.path.isfile(png) or os.path.getsize(png) < 1000:
        print("FAIL %s: no PNG there" % label)
        return 1
    print("PASS %s" % label)
    return 0


def main():
    if not shutil.which("gnuplot"):
        print("SKIP plot names: gnuplot not installed")
        return 0
    failed = 0
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(scratch)  # the commands would run here
        try:
            for name in NAMES:
                label = "side_by_side plot under the name %r" % name
                os.mkdir(name)
                for f in ("ours.csv", "torch.csv"):
                    with open(os.path.join(name, f), "w") as out:
                        out.write(CSV)
                png = os.path.join(name, "side_by_side.png")
                with contextlib.redirect_stdout(io.StringIO()):  # its "wrote ..." line
                    side_by_side.plot({"path": os.path.join(name, "ours.csv"), "tag": name},
                                      {"path": os.path.join(name, "torch.csv"), "tag": name}, png, name)
                failed += verdict(label, png)
                label = "trace_timeline under the name, title and --label text %r" % name
                png = os.path.join(name, "timeline.png")
                subprocess.run([sys.executable, os.path.join(ROOT, "tools", "trace_timeline.py"), TRACE,
                                "ProfilerStep#3", png, "--title", name, "--label", "1", "5", name],
                               capture_output=True)
                failed += verdict(label, png)
                shutil.rmtree(name)
        finally:
            os.chdir(here)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
