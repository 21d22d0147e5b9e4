#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""No function over 120 lines (issue 46), held as a ratchet.

usage: funclen_check.py SRCDIR

Measures every function of common/, cli/ and kmod/ (*.c, *.cc, *.h) in the
project's style (style(9): the body's braces at column 0, the signature
starting at column 0 on the line after its return type), from the first
line of the signature to the closing brace.  Fails, with each reason, when
  - a function not in tests/lint/funclen_allow.txt is over 120 lines;
  - a listed one is over its ceiling there (the giants may only shrink);
  - a listed one is gone or no longer over 120 (its line must go).
Prints every listed function's length against its ceiling (informational).
"""
import os
import re
import sys

LIMIT = 120
DIRS = ("common", "cli", "kmod")
NAME = re.compile(r"([A-Za-z_~][\w:~]*(?:<[^()]*>)?)\s*\(")


def functions(path):
    """(name, first line, length) of each function in path."""
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    out = []
    start = None
    for i, l in enumerate(lines):
        if l == "{":
            j = i - 1
            while j > 0 and lines[j][:1] in (" ", "\t"):
                j -= 1
            m = NAME.search(lines[j])
            # A brace after a signature: the line before it closes one.
            prev = lines[i - 1].rstrip()
            if m is None or not re.search(r"\)(\s*(const|noexcept|override))*$", prev):
                start = None
                continue
            start = (m.group(1), j)
        elif l.startswith("}") and start is not None:
            out.append((start[0], start[1] + 1, i - start[1] + 1))
            start = None
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: funclen_check.py SRCDIR")
    top = sys.argv[1]
    allow = {}
    for l in open(os.path.join(top, "tests/lint/funclen_allow.txt"), encoding="utf-8"):
        l = l.split("#", 1)[0].split()
        if l:
            allow[(l[0], l[1])] = int(l[2])
    seen = {}
    nfunc = 0
    fail = []
    for d in DIRS:
        for root, dirs, files in os.walk(os.path.join(top, d)):
            dirs[:] = sorted(x for x in dirs if x not in ("build",))
            for f in sorted(files):
                if not f.endswith((".c", ".cc", ".h")):
                    continue
                p = os.path.join(root, f)
                rel = os.path.relpath(p, top)
                for name, line, n in functions(p):
                    nfunc += 1
                    key = (rel, name)
                    if key in allow:
                        seen[key] = max(seen.get(key, 0), n)
                        if n > allow[key]:
                            fail.append("%s:%d: %s is %d lines, over its ceiling of %d "
                                        "(tests/lint/funclen_allow.txt): it may only shrink"
                                        % (rel, line, name, n, allow[key]))
                    elif n > LIMIT:
                        fail.append("%s:%d: %s is %d lines (at most %d)" % (rel, line, name, n, LIMIT))
    for key, ceil in sorted(allow.items()):
        n = seen.get(key)
        if n is None:
            fail.append("%s: %s is listed in tests/lint/funclen_allow.txt but was not found" % key)
        elif n <= LIMIT:
            fail.append("%s: %s is %d lines now: take its line out of "
                        "tests/lint/funclen_allow.txt" % (key[0], key[1], n))
        else:
            print("funclen: (informational) %s %s: %d lines, ceiling %d" % (key[0], key[1], n, ceil))
    if nfunc < 500:
        fail.append("only %d functions found under %s: the scan is broken" % (nfunc, ", ".join(DIRS)))
    for f in fail:
        print("funclen: FAIL: " + f)
    print("funclen: %d functions, %d over %d lines allowed to shrink, %d failures"
          % (nfunc, len(allow), LIMIT, len(fail)))
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
