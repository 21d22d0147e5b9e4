#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Host side of the trace_perfetto and latency_perfetto scenarios
(tests/vm/scenarios/trace_perfetto.sh, latency_perfetto.sh).

Checks the files `kinstctl trace --perfetto` and `kinstctl latency
--perfetto` wrote against the rules of Chrome's Trace Event Format (the JSON
Object Format: a "traceEvents" array; per event type its required fields and
their types), written here from the format's description, not from
kinstctl's writer, and against what the guest knows: for trace, the
workload's K reads, the probe's name, the run's time window; for latency
(--latency), the histogram's counts, minima and maxima per key, the run's
time window, and the instants another tracer recorded inside the calls.
Exit 0 when everything holds, 1 with the reasons.
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


def events(text, fails, what):
    """The format's rules over one file (what names it): (process names by
    pid, thread names by (pid, tid), instant events, complete events), every
    violation appended to fails."""
    mine = []
    r = file_events(text, mine, what)
    fails.extend(what + ": " + f for f in mine)
    return r


def file_events(text, fails, what):
    try:
        doc = json.loads(text)
    except ValueError as e:
        sys.exit("perfetto_check: %s: not JSON: %s" % (what, e))
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        sys.exit("perfetto_check: %s: not the JSON Object Format (no traceEvents array)" % what)
    if "displayTimeUnit" in doc and doc["displayTimeUnit"] not in ("ms", "ns"):
        fails.append("displayTimeUnit %r" % doc["displayTimeUnit"])
    procs, threads = {}, {}
    instants, spans = [], []
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
        if ph in "iIX":
            if not isinstance(e.get("name"), str) or not e["name"]:
                fails.append(where + ": event without a name")
            if not is_num(e.get("ts")):
                fails.append(where + ": ts not a number")
                continue
            if ph == "X" and (not is_num(e.get("dur")) or e["dur"] < 0):
                fails.append(where + ": complete event without a duration >= 0")
                continue
            if ph != "X" and "s" in e and e["s"] not in ("g", "p", "t"):
                fails.append("%s: scope %r" % (where, e["s"]))
            if not is_int(e.get("tid")):
                fails.append(where + ": event on no thread (no tid)")
                continue
            # Names before use: the viewer labels tracks by them.
            if e["pid"] not in procs:
                fails.append(where + ": pid %d has no process_name before it" % e["pid"])
            if (e["pid"], e["tid"]) not in threads:
                fails.append(where + ": thread %d has no thread_name before it" % e["tid"])
            (spans if ph == "X" else instants).append(e)
    return procs, threads, instants, spans


def ns(us):
    """A timestamp in microseconds (three decimals) as integer nanoseconds."""
    return int(round(us * 1000))


def check_trace(lines):
    meta = dict(l.split("=", 1) for l in section(lines, "meta") if "=" in l)
    k = int(meta["k"])
    probe = meta["probe"]
    t0, t1 = float(meta["start_us"]), float(meta["end_us"])
    fails = []
    procs, threads, instants, spans = events("\n".join(section(lines, "file")), fails, "trace")
    if spans:
        fails.append("%d complete events in a trace file" % len(spans))
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


def spans_of(lines, name, fails):
    """One latency --perfetto file of the guest's output (sections NAME-meta
    and NAME-file): its complete events, checked against the format, the
    meta's samples count and span name, the run's window, and each other."""
    meta = {}
    hist = {}
    for l in section(lines, name + "-meta"):
        if l.startswith("hist="):
            key, count, mn, mx = l[5:].split(":")
            hist[key] = (int(count), int(mn), int(mx))
        elif "=" in l:
            a, b = l.split("=", 1)
            meta[a] = b
    procs, threads, instants, spans = events("\n".join(section(lines, name + "-file")), fails, name)
    t0, t1 = int(meta["start_ns"]), int(meta["end_ns"])
    if instants:
        fails.append("%s: %d instant events in a latency file" % (name, len(instants)))
    if len(spans) != int(meta["samples"]):
        fails.append("%s: %d complete events; the histograms have %s samples"
                     % (name, len(spans), meta["samples"]))
    bykey = {}
    for e in spans:
        a = e.get("args", {})
        if e.get("name") != meta["name"]:
            fails.append("%s: span named %r, not %r" % (name, e.get("name"), meta["name"]))
            break
        if not is_int(a.get("latency_ns")) or ns(e["dur"]) != a["latency_ns"]:
            fails.append("%s: dur %r us is not latency_ns %r" % (name, e["dur"], a.get("latency_ns")))
            break
        if not is_int(a.get("cpu")) or not str(a.get("end", "")).startswith(meta["end"]):
            fails.append("%s: args without the cpu, or an end point not %s...: %r" % (name, meta["end"], a))
            break
        if not str(threads.get((e["pid"], e["tid"]))).startswith(meta["comm"]):
            fails.append("%s: span on thread %r, not the workload's %r..."
                         % (name, threads.get((e["pid"], e["tid"])), meta["comm"]))
            break
        if not (t0 <= ns(e["ts"]) and ns(e["ts"]) + ns(e["dur"]) <= t1):
            fails.append("%s: span [%.3f, +%.3f] us outside the run [%.3f, %.3f] us (monotonic)"
                         % (name, e["ts"], e["dur"], t0 / 1000, t1 / 1000))
            break
        bykey.setdefault(str(a.get("by", "")), []).append(a["latency_ns"])
    # The spans are the samples the histograms have: per key the same
    # count, minimum and maximum.
    if hist:
        got = {k: (len(v), min(v), max(v)) for k, v in bykey.items()}
        if got != hist:
            fails.append("%s: per key (count, min, max) the spans give %r, the histograms %r"
                         % (name, got, hist))
    # One thread runs one call at a time: its spans do not overlap.
    per = {}
    for e in spans:
        per.setdefault((e["pid"], e["tid"]), []).append(e)
    for v in per.values():
        v.sort(key=lambda e: e["ts"])
        for a, b in zip(v, v[1:]):
            if ns(a["ts"]) + ns(a["dur"]) > ns(b["ts"]):
                fails.append("%s: spans [%.3f, +%.3f] and [%.3f, +%.3f] us of one thread overlap"
                             % (name, a["ts"], a["dur"], b["ts"], b["dur"]))
                break
    return meta, threads, spans


def check_latency(lines):
    fails = []
    # 1. By $retval: the busy-waiting calls (key SLOW) hold the instants
    # the concurrent trace recorded at their call to kinst_lattest_spin, the i-th in
    # the i-th, on the same thread: the spans start and end where the
    # calls did.
    meta, threads, spans = spans_of(lines, "lat", fails)
    _, tthreads, inst, tspans = events("\n".join(section(lines, "lat-trace")), fails, "lat-trace")
    slow = sorted((e for e in spans if str(e.get("args", {}).get("by")) == meta["slow"]),
                  key=lambda e: e["ts"])
    inst.sort(key=lambda e: e["ts"])
    if len(inst) != int(meta["rounds"]) or len(slow) != len(inst):
        fails.append("lat: %d busy-waiting spans, %d instants inside them; %s rounds"
                     % (len(slow), len(inst), meta["rounds"]))
    for i, (sp, it) in enumerate(zip(slow, inst)):
        if (sp["pid"], sp["tid"]) != (it["pid"], it["tid"]) or \
                not ns(sp["ts"]) < ns(it["ts"]) < ns(sp["ts"]) + ns(sp["dur"]):
            fails.append("lat: call %d: the instant at %.3f us (tid %d) is not inside its span "
                         "[%.3f, +%.3f] us (tid %d)" % (i, it["ts"], it["tid"], sp["ts"],
                                                       sp["dur"], sp["tid"]))
            break
    # 2. --by stack, FROM TO: every span's stack, symbolized, from the
    # probed instruction out through the caller that ran the rounds.
    meta2, _, spans2 = spans_of(lines, "stack", fails)
    for e in spans2:
        a = e.get("args", {})
        st = a.get("stack")
        if not isinstance(st, list) or not st or not all(isinstance(f, str) for f in st) or \
                not st[0].startswith(meta2["frame0"]) or \
                not any(meta2["caller"] in f for f in st) or a.get("stack_truncated") is not False:
            fails.append("stack: a span's stack is not %s... through %s: %r"
                         % (meta2["frame0"], meta2["caller"], a))
            break
    # 3. Stopped by SIGINT: what was recorded before the stop is there.
    meta3, threads3, spans3 = spans_of(lines, "int", fails)
    tids = set((e["pid"], e["tid"]) for e in spans3)
    if len(tids) != int(meta3["threads"]) or \
            len(set(threads3[t] for t in tids)) != len(tids):
        fails.append("int: %d spans on %d threads (%s named), not one on each of the %s threads"
                     % (len(spans3), len(tids), len(set(threads3.get(t) for t in tids)),
                        meta3["threads"]))
    for f in fails[:10]:
        print("perfetto_check: " + f)
    if fails:
        sys.exit(1)
    print("perfetto_check: latency: %d spans (%d busy waits, each holding its instant), %d with "
          "stacks, %d on as many threads before SIGINT; format rules hold" % (len(spans), len(slow), len(spans2),
                                                           len(spans3)))


def main():
    args = sys.argv[1:]
    latency = bool(args) and args[0] == "--latency"
    if latency:
        args = args[1:]
    if len(args) != 1:
        sys.exit("usage: perfetto_check.py [--latency] GUEST_OUTPUT")
    lines = open(args[0], errors="replace").read().splitlines()
    if latency:
        check_latency(lines)
    else:
        check_trace(lines)


main()
