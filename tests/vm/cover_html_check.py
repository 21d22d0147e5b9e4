#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Host side of the cover_counts scenario (tests/vm/scenarios/cover_counts.sh).

The guest has no python: the scenario prints kinstctl cover's --json lines
and its --html file between markers; this parses the HTML (html.parser, with
a strict check that every element is closed in order), and requires one
table row per instruction holding the same count, state and taken /
not-taken counts as the JSON.  Exit 0 when they agree, 1 with a reason.
"""
import html.parser
import json
import sys

VOID = {"meta", "br", "hr", "img", "input", "link", "col", "wbr"}


def section(lines, name):
    try:
        a = lines.index("=== cover-%s-begin ===" % name)
        b = lines.index("=== cover-%s-end ===" % name)
    except ValueError:
        sys.exit("cover_html_check: no %s section in the guest's output" % name)
    return lines[a + 1:b]


class Rows(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.rows = []
        self.cell = None
        self.errors = []
        self.external = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("src", "href"):
            if k in a:
                self.external.append("%s %s=%s" % (tag, k, a[k]))
        if tag in VOID:
            return
        self.stack.append(tag)
        if tag == "tr" and "data-offset" in a:
            self.rows.append({"attrs": a, "cells": []})
        elif tag == "td" and self.rows and "tr" in self.stack and self.rows[-1] is not None:
            self.cell = ""

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append("</%s> closes <%s>" % (tag, self.stack[-1] if self.stack else "nothing"))
            return
        self.stack.pop()
        if tag == "td" and self.cell is not None:
            self.rows[-1]["cells"].append(self.cell)
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def main():
    out = open(sys.argv[1], encoding="utf-8", errors="replace").read().replace("\r", "")
    lines = out.split("\n")
    objs = [json.loads(l) for l in section(lines, "json") if l.strip()]
    doc = "\n".join(section(lines, "html"))
    p = Rows()
    p.feed(doc)
    p.close()
    fail = []
    if not doc.startswith("<!DOCTYPE html>"):
        fail.append("no <!DOCTYPE html>")
    if p.errors:
        fail.append("malformed HTML: " + "; ".join(p.errors[:3]))
    if p.stack:
        fail.append("unclosed elements: " + " ".join(p.stack))
    if p.external:
        fail.append("external references: " + "; ".join(p.external[:3]))
    insns = [o for o in objs if o.get("type") == "cover_insn"]
    rows = {int(r["attrs"]["data-offset"]): r for r in p.rows}
    if len(rows) != len(insns) or not insns:
        fail.append("%d rows in the HTML, %d instructions in the JSON" % (len(rows), len(insns)))
    for o in insns:
        r = rows.get(o["offset"])
        if r is None:
            fail.append("no row for +%#x" % o["offset"])
            continue
        a = r["attrs"]
        want = -1 if o["count"] is None else o["count"]
        if int(a["data-count"]) != want:
            fail.append("+%#x: data-count %s, JSON count %s" % (o["offset"], a["data-count"], o["count"]))
        shown = r["cells"][1].strip() if len(r["cells"]) > 1 else None
        if shown != (str(o["count"]) if o["count"] is not None else o["state"]):
            fail.append("+%#x: count cell %r, JSON %s" % (o["offset"], shown, o["count"]))
        if o.get("taken") is not None:
            if int(a.get("data-taken", -1)) != o["taken"] or int(a.get("data-not-taken", -1)) != o["not_taken"]:
                fail.append("+%#x: taken/not taken %s/%s in the HTML, %s/%s in the JSON" % (
                    o["offset"], a.get("data-taken"), a.get("data-not-taken"), o["taken"], o["not_taken"]))
        never = "never" in a.get("class", "").split()
        if never != (o["count"] == 0):
            fail.append("+%#x: 'never' class %s with count %s" % (o["offset"], never, o["count"]))
    if fail:
        for f in fail[:20]:
            print("cover_html_check: " + f)
        return 1
    print("cover_html_check: %d HTML rows hold the JSON's counts, states and branch counts" % len(insns))
    return 0


if __name__ == "__main__":
    sys.exit(main())
