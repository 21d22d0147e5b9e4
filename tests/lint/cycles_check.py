#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""No cycle between the engine's files, and the instruction set behind one
interface (issue 46).

usage: cycles_check.py [-v] [--floor FILES,EDGES] SRCDIR [DIR...]

Derives the file-level dependency graph of DIR's C files (default: common,
its subdirectories included) from the source: a file depends on another
when it names (calls, or takes the address of) a function the other
defines without `static`.  A header's static inline functions and
function-like macros are nodes of their own (the header): a file that uses
one depends on the header, and the header on the files whose functions its
bodies name, so an inline helper neither hides a dependency nor invents
one.  Comments, strings and character constants are not read.  Fails, with
each cycle, when the graph has any (a strongly connected component of more
than one file, or a file that depends on itself through a header).  -v
prints every edge with the functions that make it.

Also fails when an ISA-neutral file (directly in DIR) includes a header of
an instruction set's folder (a subdirectory of DIR, or of common/ when DIR
is a kernel shim's), by its path or by its name, but in the two headers
that are the way to it: kinst_isa.h, and kinst_abi.h (the register file).

--floor FILES,EDGES (default 10,10): fewer C files or edges than that
means the scan is broken (the shims are smaller than common/).
"""
import os
import re
import sys

IDENT = re.compile(r"[A-Za-z_]\w*")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do",
            "_Static_assert", "__attribute__", "_Alignof", "__typeof__",
            "typeof", "defined"}


def strip(text):
    """text without comments, string literals and character constants
    (each replaced by a space; newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(" " + "\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            out.append(" ")
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(" ")
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def split_preproc(text):
    """(code without preprocessor lines, [(macro name, body)] of its
    function-like #defines).  Continuation lines are joined."""
    text = text.replace("\\\n", " ")
    code, macros = [], []
    for l in text.split("\n"):
        s = l.lstrip()
        if s.startswith("#"):
            m = re.match(r"#\s*define\s+([A-Za-z_]\w*)\((.*?)\)(.*)", s)
            if m:
                macros.append((m.group(1), m.group(3)))
            code.append("")
        else:
            code.append(l)
    return "\n".join(code), macros


def functions(code):
    """[(name, is_static, body)] of the function definitions at file scope."""
    out = []
    depth = 0
    decl_start = 0	# where the current file-scope declaration began
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        if c == "{":
            if depth == 0:
                head = code[decl_start:i]
                # A definition: "... name(params) {", not "struct x {" / "= {".
                m = re.search(r"([A-Za-z_]\w*)\s*\(([^;{}]*)\)\s*$", head)
                depth = 1
                j = i + 1
                while j < n and depth > 0:
                    if code[j] == "{":
                        depth += 1
                    elif code[j] == "}":
                        depth -= 1
                    j += 1
                if m and "=" not in head and m.group(1) not in KEYWORDS:
                    static = re.search(r"\bstatic\b", head) is not None
                    out.append((m.group(1), static, code[i:j]))
                i = j
                decl_start = i
                continue
        elif c == ";" and depth == 0:
            decl_start = i + 1
        i += 1
    return out


def names(code):
    """The identifiers code names as values: not struct, union or enum tags,
    not members (a tag may share a function's name)."""
    code = re.sub(r"\b(?:struct|union|enum)\s+[A-Za-z_]\w*", " ", code)
    code = re.sub(r"(?:\.|->)\s*[A-Za-z_]\w*", " ", code)
    return set(IDENT.findall(code))


def scan(top, dirs):
    """files: {relpath: (code, macros, funcs)}."""
    files = {}
    for d in dirs:
        for root, subdirs, names in os.walk(os.path.join(top, d)):
            subdirs[:] = sorted(x for x in subdirs if x != "build")
            for f in sorted(names):
                if not f.endswith((".c", ".h")):
                    continue
                p = os.path.join(root, f)
                text = open(p, encoding="utf-8", errors="replace").read()
                code, macros = split_preproc(strip(text))
                files[os.path.relpath(p, top)] = (code, macros, functions(code))
    return files


def graph(files):
    """{node: {node: set(names)}}: node a .c file, or a .h with inline
    functions or function-like macros."""
    owner = {}		# function or macro name -> the file that defines it
    refs = {}		# file -> identifiers its non-header-inline code names
    hbodies = {}	# header -> identifiers its inline bodies and macros name
    for path, (code, macros, funcs) in files.items():
        if path.endswith(".c"):
            for name, static, _ in funcs:
                if not static:
                    owner.setdefault(name, path)
            refs[path] = names(code)
        else:
            ids = set()
            for name, static, body in funcs:
                owner.setdefault(name, path)
                ids |= names(body)
            for name, body in macros:
                owner.setdefault(name, path)
                ids |= names(body)
            hbodies[path] = ids
    g = {}
    for path, ids in list(refs.items()) + list(hbodies.items()):
        for ident in ids:
            o = owner.get(ident)
            if o is None or o == path:
                continue
            g.setdefault(path, {}).setdefault(o, set()).add(ident)
    for path in list(refs) + list(hbodies):
        g.setdefault(path, {})
    return g


def sccs(g):
    """Tarjan's strongly connected components, each a sorted list."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def cycle_in(g, comp):
    """One cycle through comp's first file, as a list of files."""
    inside = set(comp)
    start = comp[0]
    prev = {start: None}
    todo = [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(g[v]):
            if w not in inside:
                continue
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w not in prev:
                prev[w] = v
                todo.append(w)
    return comp


GATES = ("kinst_isa.h", "kinst_abi.h")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def isa_includes(top, d):
    """Failures: includes of DIR's subdirectories' headers by neutral files."""
    root = os.path.join(top, d)
    isa = set()
    # The instruction sets' folders: DIR's, and common/'s for the shims.
    for base in sorted({root, os.path.join(top, "common")}):
        for sub in sorted(os.listdir(base)):
            if os.path.isdir(os.path.join(base, sub)) and sub != "build":
                for f in os.listdir(os.path.join(base, sub)):
                    isa.add("%s/%s" % (sub, f))
                    isa.add(f)
    fail = []
    for f in sorted(os.listdir(root)):
        if not f.endswith((".c", ".h")) or f in GATES:
            continue
        text = open(os.path.join(root, f), encoding="utf-8", errors="replace").read()
        for m in INCLUDE.finditer(text):
            if m.group(1) in isa or "/" in m.group(1):
                fail.append("%s/%s includes \"%s\": an ISA-neutral file reaches the "
                            "instruction set through kinst_isa.h only" % (d, f, m.group(1)))
    return fail


def main():
    args = sys.argv[1:]
    verbose = bool(args) and args[0] == "-v"
    if verbose:
        args = args[1:]
    floor = (10, 10)
    if len(args) >= 2 and args[0] == "--floor":
        floor = tuple(int(x) for x in args[1].split(","))
        args = args[2:]
    if not args:
        sys.exit("usage: cycles_check.py [-v] [--floor FILES,EDGES] SRCDIR [DIR...]")
    top, dirs = args[0], args[1:] or ["common"]
    files = scan(top, dirs)
    g = graph(files)
    nedges = sum(len(v) for v in g.values())
    if verbose:
        for v in sorted(g):
            for w in sorted(g[v]):
                print("cycles: %s -> %s (%s)" % (v, w, " ".join(sorted(g[v][w]))))
    nc = sum(1 for p in files if p.endswith(".c"))
    fail = []
    if nc < floor[0] or nedges < floor[1]:
        fail.append("only %d C files and %d edges under %s: the scan is broken"
                    % (nc, nedges, ", ".join(dirs)))
    for comp in sccs(g):
        if len(comp) > 1:
            c = cycle_in(g, comp)
            steps = []
            for a, b in zip(c, c[1:]):
                steps.append("%s -> %s (%s)" % (a, b, ", ".join(sorted(g[a][b])[:3])))
            fail.append("a cycle among %s: %s" % (" ".join(comp), "; ".join(steps)))
    for d in dirs:
        fail.extend(isa_includes(top, d))
    for f in fail:
        print("cycles: FAIL: " + f)
    print("cycles: %d C files, %d nodes, %d edges, %d cycles (strongly connected components)"
          % (nc, len(g), nedges, len([f for f in fail if f.startswith("a cycle")])))
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
