#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Host side of the hist_html scenario (tests/vm/scenarios/hist_html.sh).

usage: hist_html_check.py VM_OUT SCREENSHOT_DIR

The guest prints, for hist and for latency, the --json lines and the --html
page between markers.  For each page this checks, with html.parser and
independently of kinstctl's code:
  - strict HTML (every element closed in order), no <script>, no src/href,
    no url(), @import or @font-face: nothing outside the file;
  - one <section class="hist" data-key=K> per JSON "hist" object (K its
    key), whose <g class="bucket"> elements hold exactly the JSON's
    non-empty buckets (data-low, data-high, data-count), empty ones only
    between them, and bars (<rect width>) as long as count / largest * 520
    (at least 1 for a non-empty bucket); the summary's count is the JSON's;
and, against the workload instead of the JSON (the guest prints its read
count N between workload markers): the hist page's syscall_loop section
has at least N in its buckets from 4 and from 256 (reads of 7 and 300
bytes), the latency page's syscall_loop summary counts at least 2N;
then renders it in headless Chromium (browser.py): no script error, every
non-empty bucket's bar has a drawn width (getBBox) above 0, the widths in
the order of the counts, and a screenshot SCREENSHOT_DIR/NAME.png.
Exit 0 when all agree, 1 with the reasons, 77 (skip) when Chromium is not
installed (after the HTML checks passed).
"""
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser  # noqa: E402

BAR = 520


class Page(browser.Strict):
    """Sections, their buckets (with the rect's width and, once rendered,
    data-rendered-width), summaries."""

    def __init__(self):
        super().__init__()
        self.panels = []
        self.bucket = None
        self.in_summary = False

    def start(self, tag, a):
        if tag == "section" and "hist" in a.get("class", "").split():
            self.panels.append({"key": a.get("data-key", ""), "buckets": [], "summary": ""})
        elif tag == "g" and a.get("class") == "bucket" and self.panels:
            self.bucket = {"low": a.get("data-low"), "high": a.get("data-high"),
                           "count": int(a["data-count"]), "width": None,
                           "rendered": a.get("data-rendered-width")}
            self.panels[-1]["buckets"].append(self.bucket)
        elif tag == "rect" and self.bucket is not None:
            self.bucket["width"] = int(a.get("width", "-1"))
        elif tag == "p" and a.get("class") == "summary" and self.panels:
            self.in_summary = True

    def end(self, tag):
        if tag == "g":
            self.bucket = None
        elif tag == "p":
            self.in_summary = False

    def handle_data(self, data):
        if self.in_summary:
            self.panels[-1]["summary"] += data


def parse(doc):
    return browser.parse(Page(), doc)


def num(v):
    return None if v is None else int(v)


def check_static(name, objs, doc):
    p = parse(doc)
    fail = browser.markup_failures(doc, p)
    if p.scripts:
        fail.append("%d <script> elements (the page has none)" % p.scripts)
    for bad in ("url(", "@import", "@font-face"):
        if bad in doc:
            fail.append("the page holds %r" % bad)
    hists = [o for o in objs if o.get("type") == "hist"]
    if not hists:
        fail.append("no hist object in the JSON")
    panels = {pn["key"]: pn for pn in p.panels}
    if len(panels) != len(p.panels) or len(p.panels) != len(hists):
        fail.append("%d sections (%d keys) in the HTML, %d histograms in the JSON" % (
            len(p.panels), len(panels), len(hists)))
    for h in hists:
        key = "" if "key" not in h else str(h["key"])
        pn = panels.get(key)
        if pn is None:
            fail.append("no section for key %r" % key)
            continue
        want = [(b["low"], b["high"], b["count"]) for b in h["buckets"]]
        got = [(num(b["low"]), num(b["high"]), b["count"]) for b in pn["buckets"] if b["count"]]
        if got != want:
            fail.append("key %r: non-empty buckets %s in the HTML, %s in the JSON" % (key, got[:4], want[:4]))
        cs = [b["count"] for b in pn["buckets"]]
        if cs and (cs[0] == 0 or cs[-1] == 0):
            fail.append("key %r: the chart starts or ends with an empty bucket" % key)
        top = max(cs) if cs else 0
        for b in pn["buckets"]:
            w = max(1, int(b["count"] * BAR / top + 0.5)) if b["count"] else 0
            if b["width"] != w:
                fail.append("key %r: bucket %s has a bar %s long, want %d (count %d of %d)" % (
                    key, b["low"], b["width"], w, b["count"], top))
                break
        m = re.match(r"count (\d+)", pn["summary"].strip())
        if m is None or int(m.group(1)) != h["count"]:
            fail.append("key %r: summary %r, JSON count %d" % (key, pn["summary"], h["count"]))
    return fail, len(hists)


PROBE = """
document.querySelectorAll('svg.hist g.bucket').forEach(function(g){
  var r=g.querySelector('rect');
  g.setAttribute('data-rendered-width', String(r.getBBox().width));
  var c=r.getBoundingClientRect();
  g.setAttribute('data-on-screen', String(c.width > 0 && c.height > 0));
});
"""


def check_workload(name, doc, nr):
    """The page's own numbers against the workload's known reads."""
    p = parse(doc)
    pn = [x for x in p.panels if x["key"] == "syscall_loop"]
    if len(pn) != 1:
        return ["%d sections for syscall_loop, want 1" % len(pn)]
    pn = pn[0]
    fail = []
    if name == "hist":
        for lo in (4, 256):
            c = sum(b["count"] for b in pn["buckets"] if num(b["low"]) == lo)
            if c < nr:
                fail.append("syscall_loop's bucket from %d shows %d, the workload made %d such reads" % (lo, c, nr))
    else:
        m = re.match(r"count (\d+)", pn["summary"].strip())
        if m is None or int(m.group(1)) < 2 * nr:
            fail.append("syscall_loop's summary %r: the workload made %d reads" % (pn["summary"], 2 * nr))
    return fail


def check_rendered(name, doc, shot):
    dom, errors = browser.render(doc, PROBE, shot)
    fail = ["script error: " + e for e in errors]
    p = parse(dom)
    n = 0
    for pn in p.panels:
        drawn = [(b["count"], float(b["rendered"] or -1)) for b in pn["buckets"]]
        for c, w in drawn:
            n += 1
            if c and w <= 0:
                fail.append("key %r: a bucket of %d has no drawn bar (width %s)" % (pn["key"], c, w))
        for c1, w1 in drawn:
            for c2, w2 in drawn:
                if c1 > c2 and w1 < w2:
                    fail.append("key %r: a bucket of %d is drawn shorter (%g) than one of %d (%g)" % (
                        pn["key"], c1, w1, c2, w2))
    if n == 0:
        fail.append("no bucket in the rendered page")
    return fail, n


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: hist_html_check.py VM_OUT SCREENSHOT_DIR")
    out = open(sys.argv[1], encoding="utf-8", errors="replace").read().replace("\r", "")
    lines = out.split("\n")
    fail = []
    docs = []
    wl = [l for l in browser.section(lines, "workload") if l.startswith("nr=")]
    if len(wl) != 1:
        print("hist_html_check: no workload read count (nr=N) in the guest's output")
        return 1
    nr = int(wl[0][3:])
    for name in ("hist", "latency"):
        objs = [json.loads(l) for l in browser.section(lines, name + "-json") if l.strip()]
        doc = "\n".join(browser.section(lines, name + "-html"))
        f, n = check_static(name, objs, doc)
        f += check_workload(name, doc, nr)
        fail += ["%s: %s" % (name, x) for x in f]
        if not f:
            print("hist_html_check: %s: %d histograms, the HTML holds the JSON's buckets and bars, "
                  "and the workload's %d reads" % (name, n, nr))
        docs.append((name, doc))
    if fail:
        for f in fail[:20]:
            print("hist_html_check: " + f)
        return 1
    if browser.chromium() is None:
        print(browser.no_browser())
        return 77
    for name, doc in docs:
        shot = os.path.join(sys.argv[2], "hist_html-%s.png" % name)
        f, n = check_rendered(name, doc, shot)
        fail += ["%s (Chromium): %s" % (name, x) for x in f]
        if not f:
            print("hist_html_check: %s: rendered in %s: no script error, %d bars drawn in "
                  "the order of their counts; screenshot %s" % (name, browser.chromium(), n, shot))
    for f in fail[:20]:
        print("hist_html_check: " + f)
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
