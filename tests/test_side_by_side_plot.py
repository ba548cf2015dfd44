#!/usr/bin/env python3
"""compare/side_by_side.py's plot, with directory names, tags and titles a shell or gnuplot would
read as syntax: each is plotted under exactly that name, and the command inside never runs (it
would make the file PWNED). gnuplot's single-quoted strings know only one escape, a doubled
quote; a backslash before a quote ended the string, and what followed ran as gnuplot commands,
system() among them. A name starting with '<' is a command to gnuplot itself.
One line per name: PASS/FAIL name (SKIP without gnuplot).
"""
import contextlib
import io
import os
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "compare"))
import side_by_side  # noqa: E402

NAMES = [
    "x'.system(\"touch PWNED\")#",
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


def main():
    if not shutil.which("gnuplot"):
        print("SKIP side_by_side plot names: gnuplot not installed")
        return 0
    failed = 0
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(scratch)  # the commands would run here
        try:
            for i, name in enumerate(NAMES):
                label = "side_by_side plot under the name %r" % name
                os.mkdir(name)
                for f in ("ours.csv", "torch.csv"):
                    with open(os.path.join(name, f), "w") as out:
                        out.write(CSV)
                png = os.path.join(name, "side_by_side.png")
                with contextlib.redirect_stdout(io.StringIO()):  # its "wrote ..." line
                    side_by_side.plot({"path": os.path.join(name, "ours.csv"), "tag": name},
                                      {"path": os.path.join(name, "torch.csv"), "tag": name}, png, name)
                if os.path.exists("PWNED"):
                    print("FAIL %s: it ran a command" % label)
                    os.remove("PWNED")
                    failed += 1
                elif not os.path.isfile(png) or os.path.getsize(png) < 1000:
                    print("FAIL %s: no PNG there" % label)
                    failed += 1
                else:
                    print("PASS %s" % label)
                shutil.rmtree(name)
        finally:
            os.chdir(here)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
