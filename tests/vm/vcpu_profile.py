#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Report of run-in-guest --profile: where the guest's vCPUs were.

usage: vcpu_profile.py [--top N] MON_LOG SYMS_DIR

MON_LOG is the QEMU monitor's output: "info registers -a" answers (a
"CPU#n" line, then registers, RIP=... with CPL= and HLT= on its line),
each window's begun by the monitor's "unknown command: 'kinst-profile-
LABEL'" (kinst-profile-off ends one).  SYMS_DIR holds LABEL.syms, the
guest's text symbols from /proc/kallsyms at that window's start, then
/proc/modules's lines, each after "#module ".

A sample is named by the symbol at or below it only where that symbol's
code can reach: within the module's extent (/proc/modules), a page for a
trampoline's symbol (ftrace, bpf), the kernel's text up to _etext.  The
rest of the module area holds code no symbol names -- among it kinst's
detours and trampolines -- and is counted as "? (module area)".

Per window: the samples by vCPU state (halted, user, kernel), the kernel
samples by function, and the offsets within each kinst function that
took samples.  A sample is where a vCPU was when QEMU stopped it, which
under TCG is the start of a translated block: code that ends many blocks
(a rep-prefixed string instruction ends one per iteration, a branch one
per take) is over-counted against straight-line code.
"""

import bisect
import os
import re
import sys

MARK = re.compile(r"unknown command: 'kinst-profile-([A-Za-z0-9_.-]+)'")
CPU = re.compile(r"^CPU#(\d+)")
RIP = re.compile(r"RIP=([0-9a-f]+) .*CPL=(\d).*HLT=(\d)")


# x86-64's module area (no KASLR under PVH, and with it the same range).
MODULES_START = 0xffffffffc0000000
MODULES_END = 0xffffffffff000000
# Symbols of code allocated a page at a time, not in /proc/modules.
PAGE_SYMBOL_MODULES = ("__builtin__ftrace", "__builtin__kprobes", "bpf")


class Syms:
    """Text symbols, sorted: address -> (name, module); module extents."""

    def __init__(self, path):
        rows = []
        self.mods = {}
        self.etext = None
        with open(path, errors="replace") as f:
            for line in f:
                p = line.split()
                if len(p) >= 7 and p[0] == "#module":
                    # name size refcount deps state address
                    try:
                        self.mods[p[1]] = (int(p[6], 16), int(p[2]))
                    except ValueError:
                        pass
                    continue
                if len(p) < 3:
                    continue
                try:
                    a = int(p[0], 16)
                except ValueError:
                    continue
                if a == 0:
                    continue
                mod = p[3].strip("[]") if len(p) > 3 else ""
                if p[2] == "_etext" and not mod:
                    self.etext = a
                rows.append((a, p[2], mod))
        rows.sort()
        self.addr = [r[0] for r in rows]
        self.rows = rows

    def reaches(self, s, a):
        """Can a be in the code of symbol s (address, name, module)?"""
        if s[2] in self.mods:
            base, size = self.mods[s[2]]
            return base <= a < base + size
        if s[2] in PAGE_SYMBOL_MODULES:
            return a - s[0] < 4096
        if not s[2] and self.etext is not None:
            return a < self.etext
        return a - s[0] < 0x10000

    def lookup(self, a):
        i = bisect.bisect_right(self.addr, a) - 1
        if i < 0 or not self.reaches(self.rows[i], a):
            return None
        s = self.rows[i]
        return s[1], s[2], a - s[0]


def parse(mon_log):
    """Yield (label, cpu, rip, cpl, halted) for each sample in a window."""
    label = None
    cpu = None
    with open(mon_log, errors="replace") as f:
        for line in f:
            line = line.replace("\r", "")
            m = MARK.search(line)
            if m:
                label = None if m.group(1) == "off" else m.group(1)
                continue
            m = CPU.match(line)
            if m:
                cpu = int(m.group(1))
                continue
            m = RIP.search(line)
            if m and label is not None and cpu is not None:
                yield label, cpu, int(m.group(1), 16), int(m.group(2)), m.group(3) == "1"


def pct(n, d):
    return 100.0 * n / d if d else 0.0


def report(label, samples, syms, top, out):
    total = len(samples)
    halted = sum(1 for s in samples if s[3])
    user = sum(1 for s in samples if not s[3] and s[2] == 3)
    kern = [s for s in samples if not s[3] and s[2] != 3]
    cpus = sorted({s[0] for s in samples})
    out.write(f"== window {label}: {total} samples over {len(cpus)} vCPUs\n")
    out.write(f"   halted {halted} ({pct(halted, total):.1f}%), user {user} "
              f"({pct(user, total):.1f}%), kernel {len(kern)} ({pct(len(kern), total):.1f}%)\n")
    if syms is None:
        out.write(f"   (no symbols for {label}: kt_profile_on saved none)\n\n")
        return
    funcs = {}
    offs = {}
    for s in kern:
        r = syms.lookup(s[1])
        if r is None:
            name = "? (module area)" if MODULES_START <= s[1] < MODULES_END else "?"
        else:
            name = f"{r[0]} [{r[1]}]" if r[1] else r[0]
        funcs[name] = funcs.get(name, 0) + 1
        if r and r[1] == "kinst":
            k = f"{r[0]}+{r[2]:#x}"
            offs[k] = offs.get(k, 0) + 1
    out.write(f"   kernel samples by function (top {top}):\n")
    for name, n in sorted(funcs.items(), key=lambda x: (-x[1], x[0]))[:top]:
        out.write(f"   {n:7d} {pct(n, len(kern)):5.1f}%  {name}\n")
    kinst = sum(n for k, n in funcs.items() if k.endswith(" [kinst]"))
    out.write(f"   in kinst.ko: {kinst} ({pct(kinst, len(kern)):.1f}% of kernel samples)\n")
    if offs:
        out.write(f"   kinst.ko by instruction (top {top}):\n")
        for k, n in sorted(offs.items(), key=lambda x: (-x[1], x[0]))[:top]:
            out.write(f"   {n:7d} {pct(n, len(kern)):5.1f}%  {k}\n")
    out.write("\n")


def main(argv):
    top = 25
    if len(argv) >= 2 and argv[0] == "--top":
        if not argv[1].isdigit() or int(argv[1]) == 0:
            sys.stderr.write("vcpu_profile.py: --top: a positive number\n")
            return 2
        top = int(argv[1])
        argv = argv[2:]
    if len(argv) != 2:
        sys.stderr.write("usage: vcpu_profile.py [--top N] MON_LOG SYMS_DIR\n")
        return 2
    mon_log, syms_dir = argv
    by_label = {}
    order = []
    for label, cpu, rip, cpl, halted in parse(mon_log):
        if label not in by_label:
            by_label[label] = []
            order.append(label)
        by_label[label].append((cpu, rip, cpl, halted))
    if not order:
        sys.stderr.write("vcpu_profile.py: no samples: did the script open a window "
                         "(kt_profile_on LABEL)?\n")
        return 1
    for label in order:
        path = os.path.join(syms_dir, label + ".syms")
        syms = Syms(path) if os.path.isfile(path) else None
        report(label, by_label[label], syms, top, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
