#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Host side of the cover_counts scenario (tests/vm/scenarios/cover_counts.sh).

usage: cover_html_check.py VM_OUT [SCREENSHOT_DIR]

The guest has no python: the scenario prints kinstctl cover's --json lines
and its --html file between markers; this parses the HTML (html.parser, with
a strict check that every element is closed in order), and requires one
table row per instruction holding the same count, state and taken /
not-taken counts as the JSON.  With SCREENSHOT_DIR it then renders the page
in headless Chromium (browser.py): no script error, the rendered DOM holds
the same rows and counts, a click on the "count" header sorts the rows by
count, largest first, the executed rows are painted (a background colour)
and the never-executed ones in the "never" colour, and a screenshot goes to
SCREENSHOT_DIR/cover_counts.png.  Exit 0 when all agree, 1 with a reason,
77 (skip) when Chromium is not installed (after the HTML checks passed).
"""
import json
import os
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser  # noqa: E402

class Rows(browser.Strict):
    """The cover table's rows: their attributes and their cells' text."""

    def __init__(self):
        super().__init__()
        self.rows = []
        self.cell = None

    def start(self, tag, a):
        if tag == "tr" and "data-offset" in a:
            self.rows.append({"attrs": a, "cells": []})
        elif tag == "td" and self.rows and "tr" in self.stack:
            self.cell = ""

    def end(self, tag):
        if tag == "td" and self.cell is not None:
            self.rows[-1]["cells"].append(self.cell)
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def check_rows(p, insns, fail):
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


# Run in the page: click "count", record the rows' counts in their new
# order and the painted colours of executed and never-executed rows.
PROBE = """
var t=document.querySelector('table.cover');
t.querySelector('th[data-sort=count]').click();
var rows=Array.prototype.slice.call(t.tBodies[0].rows);
document.body.setAttribute('data-sorted', rows.map(function(r){return r.getAttribute('data-count');}).join(','));
var bg=function(f){return JSON.stringify(rows.filter(f).map(function(r){return getComputedStyle(r).backgroundColor;}));};
document.body.setAttribute('data-hot', bg(function(r){return Number(r.getAttribute('data-count'))>0;}));
document.body.setAttribute('data-never', bg(function(r){return r.classList.contains('never');}));
"""


def check_rendered(doc, insns, shot):
    dom, errors = browser.render(doc, PROBE, shot)
    fail = ["script error: " + e for e in errors]
    p = browser.parse(Rows(), dom)
    check_rows(p, insns, fail)
    attrs = {k: p.body.get(k) for k in ("data-sorted", "data-hot", "data-never")}
    if attrs["data-sorted"] is None:
        fail.append("the click on 'count' was not recorded")
        return fail
    order = [int(x) for x in attrs["data-sorted"].split(",") if x]
    if order != sorted(order, reverse=True) or len(order) != len(insns):
        fail.append("after a click on 'count' the rows are not sorted by count, largest first: %s" % order[:12])
    hot = json.loads(attrs["data-hot"] or "[]")
    if not hot or any(c in ("rgba(0, 0, 0, 0)", "transparent") for c in hot):
        fail.append("executed rows without a heat colour: %s" % hot[:4])
    never = json.loads(attrs["data-never"] or "[]")
    if any(c != "rgb(248, 200, 200)" for c in never):
        fail.append("never-executed rows not painted #f8c8c8: %s" % never[:4])
    return fail


def main():
    out = open(sys.argv[1], encoding="utf-8", errors="replace").read().replace("\r", "")
    lines = out.split("\n")
    objs = [json.loads(l) for l in browser.section(lines, "cover-json") if l.strip()]
    doc = "\n".join(browser.section(lines, "cover-html"))
    p = browser.parse(Rows(), doc)
    fail = browser.markup_failures(doc, p)
    insns = [o for o in objs if o.get("type") == "cover_insn"]
    check_rows(p, insns, fail)
    if fail:
        for f in fail[:20]:
            print("cover_html_check: " + f)
        return 1
    print("cover_html_check: %d HTML rows hold the JSON's counts, states and branch counts" % len(insns))
    if len(sys.argv) < 3:
        return 0
    if browser.chromium() is None:
        print(browser.no_browser())
        return 77
    shot = os.path.join(sys.argv[2], "cover_counts.png")
    fail = check_rendered(doc, insns, shot)
    for f in fail[:20]:
        print("cover_html_check (Chromium): " + f)
    if fail:
        return 1
    print("cover_html_check: rendered in %s: no script error, the same %d rows and counts, "
          "sorted by count on a click, heat and 'never' colours painted; screenshot %s" % (
              browser.chromium(), len(insns), shot))
    return 0


if __name__ == "__main__":
    sys.exit(main())
