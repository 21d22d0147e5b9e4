#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Host side of the trace_perfetto scenario (tests/vm/scenarios/trace_perfetto.sh).

Checks the file `kinstctl trace --perfetto` wrote against the rules of
Chrome's Trace Event Format (the JSON Object Format: a "traceEvents" array;
per event type its required fields and their types), written here from the
format's description, not from kinstctl's writer, and against what the
guest knows: the workload's K reads, the probe's name, the run's time
window.  Exit 0 when everything holds, 1 with the reasons.
"""
import json
import sys

PHASES = set("BEXiIbneCMPOSTpfsNDcR()")


def section(lines, name):
    try:
        a = lines.index("=== perfetto-%s-begin ===" % name)
        b = lines.index("=== perfetto-%s-end ===" % name)
    except ValueError:
        sys.exit("perfetto_check: no %s section in the guest's output" % name)
    return lines[a + 1:b]


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_num(v):
    return (isinstance(v, (int, float))) and not isinstance(v, bool)


def main():
    lines = open(sys.argv[1], errors="replace").read().splitlines()
    meta = dict(l.split("=", 1) for l in section(lines, "meta") if "=" in l)
    k = int(meta["k"])
    probe = meta["probe"]
    t0, t1 = float(meta["start_us"]), float(meta["end_us"])
    doc = json.loads("\n".join(section(lines, "file")))
    fails = []
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        sys.exit("perfetto_check: not the JSON Object Format (no traceEvents array)")
    if "displayTimeUnit" in doc and doc["displayTimeUnit"] not in ("ms", "ns"):
        fails.append("displayTimeUnit %r" % doc["displayTimeUnit"])
    procs, threads = {}, {}
    instants = []
    for n, e in enumerate(doc["traceEvents"]):
        where = "event %d" % n
        if not isinstance(e, dict):
            fails.append(where + ": not an object")
            continue
        ph = e.get("ph")
        if not isinstance(ph, str) or ph not in PHASES:
            fails.append("%s: ph %r" % (where, ph))
            continue
        if not is_int(e.get("pid")):
            fails.append(where + ": pid not an integer")
        if "tid" in e and not is_int(e["tid"]):
            fails.append(where + ": tid not an integer")
        if "args" in e and not isinstance(e["args"], dict):
            fails.append(where + ": args not an object")
        if ph == "M":
            name = e.get("name")
            if name not in ("process_name", "thread_name", "process_sort_index",
                            "thread_sort_index", "process_labels"):
                fails.append("%s: metadata name %r" % (where, name))
            elif name.endswith("_name"):
                if not isinstance(e.get("args", {}).get("name"), str):
                    fails.append(where + ": " + name + " without args.name")
                elif name == "process_name":
                    procs[e["pid"]] = e["args"]["name"]
                else:
                    if not is_int(e.get("tid")):
                        fails.append(where + ": thread_name without tid")
                    else:
                        threads[(e["pid"], e["tid"])] = e["args"]["name"]
            continue
        if ph in "iI":
            if not isinstance(e.get("name"), str) or not e["name"]:
                fails.append(where + ": instant event without a name")
            if not is_num(e.get("ts")):
                fails.append(where + ": ts not a number")
                continue
            if "s" in e and e["s"] not in ("g", "p", "t"):
                fails.append("%s: scope %r" % (where, e["s"]))
            if not is_int(e.get("tid")):
                fails.append(where + ": instant event without tid")
                continue
            # Names before use: the viewer labels tracks by them.
            if e["pid"] not in procs:
                fails.append(where + ": pid %d has no process_name before it" % e["pid"])
            if (e["pid"], e["tid"]) not in threads:
                fails.append(where + ": thread %d has no thread_name before it" % e["tid"])
            instants.append(e)
    ours = [e for e in instants if threads.get((e["pid"], e["tid"])) == "syscall_loop"]
    if len(instants) != k or len(ours) != k:
        fails.append("%d instant events, %d of syscall_loop; the workload read %d times"
                     % (len(instants), len(ours), k))
    for e in instants:
        a = e.get("args", {})
        if e.get("name") != probe:
            fails.append("instant event named %r, not %r" % (e.get("name"), probe))
            break
        if not (t0 - 1e6 <= e["ts"] <= t1 + 1e6):
            fails.append("ts %.3f us outside the run [%.0f, %.0f] us (monotonic)"
                         % (e["ts"], t0, t1))
            break
        regs = a.get("regs", {})
        if regs.get("rip") != a.get("address") or "rdi" not in regs or not is_int(a.get("cpu")):
            fails.append("args without the registers, or rip != address: %r" % a)
            break
    ts = [e["ts"] for e in ours]
    if ts != sorted(ts):
        fails.append("one thread's events out of time order")
    for f in fails[:10]:
        print("perfetto_check: " + f)
    if fails:
        sys.exit(1)
    print("perfetto_check: %d instant events of %s on %d thread(s), %d processes named; "
          "format rules hold" % (len(instants), probe, len(threads), len(procs)))


main()
