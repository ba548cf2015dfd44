#!/usr/bin/env python3
"""Rewrites a trace our profiler wrote before three rules of its writer changed, as the writer
writes it now (common/profiler/trace_json.c, trace_model_data.h):

  - correlation ids: when every id in the trace lies below 32768, each is written plus 32768
    (CORRELATION_ID_FLOOR): the "correlation" arg of calls and GPU work, and the id of the ac2g
    flows. HolisticTraceAnalysis narrows its correlation column to the smallest integer type
    that holds the ids, then stores row numbers in a column made from it: below 128 (or 32768),
    a trace of more events than that does not load under pandas 3.
  - overlap lanes: the lane k of stream s had thread id s + k * 2^32, which Perfetto's 32-bit
    thread ids cannot hold; it is s + k * 1000000 (OVERLAP_LANE_TID_STEP), on the GPU work,
    its flows and the lane's thread_name and thread_sort_index.
  - "record_shapes": 1 in the header became 0 where no op holds an input's dimensions.

Only those values change: every other byte, and so every line number a page cites, stays as it
was. The rules leave a trace that follows them as it is, so a second pass changes nothing.
Each rewritten line is read back and compared, value by value, with what the rules make of the
old one. PyTorch's own traces are refused.

Usage: tools/trace_upgrade.py [--check] TRACE.json...   rewrite in place (--check: only list
                                                        the traces that would change; status 1
                                                        if any would)
       tools/trace_upgrade.py TRACE.json -o OUT.json    write the result to OUT.json
"""
import argparse
import json
import os
import re
import sys

CORRELATION_ID_FLOOR = 32768
OLD_OVERLAP_STEP = 1 << 32
OVERLAP_LANE_TID_STEP = 1000000
API_AND_GPU = ("cuda_runtime", "cuda_driver", "kernel", "gpu_memcpy", "gpu_memset")


class UpgradeError(Exception):
    pass


def _event_of(line):
    """The event a line of traceEvents holds ("  {...}," or "  {...}"), or None."""
    text = line.strip()
    if text.endswith(","):
        text = text[:-1]
    if not (text.startswith("{") and text.endswith("}")):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _new_tid(tid):
    if isinstance(tid, int) and not isinstance(tid, bool) and tid >= OLD_OVERLAP_STEP:
        return tid % OLD_OVERLAP_STEP + (tid // OLD_OVERLAP_STEP) * OVERLAP_LANE_TID_STEP
    return tid


def _replace_number(line, key, old, new):
    """`"key": old` -> `"key": new` in the line's JSON text (a key, never inside a string, where
    its quotes would be escaped)."""
    pattern = re.compile(r'(?<!\\)("%s": )%d(?=[,}])' % (re.escape(key), old))
    result, n = pattern.subn(lambda m: m.group(1) + str(new), line)
    if n != 1:
        raise UpgradeError(f'"{key}": {old} found {n} times in: {line.strip()[:120]}')
    return result


def upgrade_text(text):
    """(the trace's text as the current writer lays it out, the number of values changed)."""
    lines = text.split("\n")
    events = [(i, _event_of(line)) for i, line in enumerate(lines)]
    events = [(i, e) for i, e in events if isinstance(e, dict)]
    if not events:
        raise UpgradeError("no event on a line of its own: not a trace our writer wrote")
    spans = [e.get("name", "") for _, e in events if e.get("cat") == "Trace"]
    if not spans or any(s.startswith("PyTorch Profiler") for s in spans):
        raise UpgradeError("not a trace of ours (its Trace span is "
                           f"{spans[0] if spans else 'missing'!r})")

    ids = [e["args"]["correlation"] for _, e in events
           if e.get("cat") in API_AND_GPU and isinstance(e.get("args", {}).get("correlation"), int)]
    shift = CORRELATION_ID_FLOOR if ids and max(ids) < CORRELATION_ID_FLOOR else 0
    shapes = any(e.get("args", {}).get("Input Dims") for _, e in events if e.get("cat") == "cpu_op")

    changed = 0
    for i, old in events:
        new = json.loads(json.dumps(old))
        line = lines[i]
        args = old.get("args", {})
        if shift and isinstance(args.get("correlation"), int):
            new["args"]["correlation"] += shift
            line = _replace_number(line, "correlation", args["correlation"], new["args"]["correlation"])
        if shift and old.get("cat") == "ac2g" and isinstance(old.get("id"), int):
            new["id"] += shift
            line = _replace_number(line, "id", old["id"], new["id"])
        if _new_tid(old.get("tid")) != old.get("tid"):
            new["tid"] = _new_tid(old["tid"])
            line = _replace_number(line, "tid", old["tid"], new["tid"])
            if old.get("name") == "thread_sort_index" and args.get("sort_index") == old["tid"]:
                new["args"]["sort_index"] = new["tid"]
                line = _replace_number(line, "sort_index", old["tid"], new["tid"])
        if line != lines[i]:
            if _event_of(line) != new:
                raise UpgradeError(f"line {i + 1}: the rewrite does not read back as intended")
            lines[i] = line
            changed += 1

    header = [i for i, line in enumerate(lines) if line == '  "record_shapes": 1,']
    if header and not shapes:
        lines[header[0]] = '  "record_shapes": 0,'
        changed += 1
    result = "\n".join(lines)
    json.loads(result)  # still one JSON document
    return result, changed


def upgrade_file(path, out=None, check=False):
    """Rewrites path (or writes out); returns the number of values changed."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    result, changed = upgrade_text(text)
    if check or (changed == 0 and out is None):
        return changed
    target = out or path
    tmp = target + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(result)
    os.replace(tmp, target)
    return changed


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("traces", nargs="+")
    parser.add_argument("--check", action="store_true",
                        help="change nothing; list the traces that would change")
    parser.add_argument("-o", "--out", help="write the result here (one trace only)")
    opts = parser.parse_args(argv)
    if opts.out and len(opts.traces) != 1:
        parser.error("-o takes one trace")
    status = 0
    for path in opts.traces:
        try:
            changed = upgrade_file(path, opts.out, opts.check)
        except (OSError, ValueError, UpgradeError) as e:
            print(f"trace_upgrade: error: {path}: {e}", file=sys.stderr)
            status = 2
            continue
        if changed and opts.check:
            print(f"{path}: {changed} values to rewrite")
            status = max(status, 1)
        elif changed:
            print(f"{path}: {changed} values rewritten")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
