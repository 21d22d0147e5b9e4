# SPDX-License-Identifier: BSD-2-Clause
"""What the host checks of kinstctl's HTML pages share (cover_html_check.py,
hist_html_check.py): the guest output's sections, the markup verdict, and
rendering in headless Chromium (Debian's chromium package).

section(lines, name) is the lines between "=== NAME-begin ===" and
"=== NAME-end ===" of the guest's output.  Strict is the html.parser both
checks read pages with: it keeps .stack (open elements), .errors
(misnested end tags), .external (src/href attributes), .scripts and .body
(the <body>'s attributes), and calls a subclass's start(tag, attrs) once an
element is open and end(tag) once it is closed.  markup_failures(doc, p)
says what is wrong with a page Strict has read: no doctype, bad nesting,
unclosed elements, references outside the file.

render(doc, probe_js, screenshot) loads doc from a file:// URL with two
scripts added: one first in <head> that records every uncaught error and
unhandled rejection, one last in <body> that runs probe_js (which may read
the rendered page, click, and write what it saw into DOM attributes) and
then stores the errors in <body data-kinst-errors>.  It returns the DOM
after those scripts (--dump-dom) and the script errors: the recorded ones
and the console's "Uncaught" lines.  A second run without the added scripts
saves a screenshot of the page as it is.

When Chromium is not installed the caller skips: no_browser() is the reason
(exit 77 is a skip for scenarios_test).
"""
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--hide-scrollbars"]

COLLECT = ("<script>window.__kinstErrors=[];"
           "window.addEventListener('error',function(e){window.__kinstErrors.push("
           "String(e.message)+' at line '+e.lineno);});"
           "window.addEventListener('unhandledrejection',function(e){"
           "window.__kinstErrors.push('unhandled rejection: '+String(e.reason));});"
           "</script>")


def section(lines, name):
    try:
        a = lines.index("=== %s-begin ===" % name)
        b = lines.index("=== %s-end ===" % name)
    except ValueError:
        sys.exit("%s: no %s section in the guest's output" % (os.path.basename(sys.argv[0]), name))
    return lines[a + 1:b]


VOID = {"meta", "br", "hr", "img", "input", "link", "col", "wbr"}


class Strict(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.errors = []
        self.external = []
        self.scripts = 0
        self.body = {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("src", "href"):
            if k in a:
                self.external.append("%s %s=%s" % (tag, k, a[k]))
        if tag == "script":
            self.scripts += 1
        elif tag == "body":
            self.body = a
        if tag not in VOID:
            self.stack.append(tag)
        self.start(tag, a)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append("</%s> closes <%s>" % (tag, self.stack[-1] if self.stack else "nothing"))
            return
        self.stack.pop()
        self.end(tag)

    def start(self, tag, attrs):
        pass

    def end(self, tag):
        pass


def parse(parser, doc):
    parser.feed(doc)
    parser.close()
    return parser


def markup_failures(doc, p):
    fail = []
    if not doc.startswith("<!DOCTYPE html>"):
        fail.append("no <!DOCTYPE html>")
    if p.errors:
        fail.append("malformed HTML: " + "; ".join(p.errors[:3]))
    if p.stack:
        fail.append("unclosed elements: " + " ".join(p.stack))
    if p.external:
        fail.append("external references: " + "; ".join(p.external[:3]))
    return fail


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


def no_browser():
    return ("SKIP: Chromium is not installed (Debian's chromium package; tests/setup "
            "installs it): the page was checked as HTML but not rendered in a browser")


def _run(browser, args, timeout=120):
    return subprocess.run([browser] + FLAGS + args, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout,
                          universal_newlines=True, errors="replace")


def render(doc, probe_js, screenshot=None, size=(1200, 1600)):
    browser = chromium()
    if browser is None:
        raise FileNotFoundError(no_browser())
    if "<head>" not in doc or "</body>" not in doc:
        return "", ["the page has no <head> or no </body>"]
    probe = ("<script>(function(){try{" + probe_js + "}catch(e){window.__kinstErrors.push("
             "'probe: '+String(e));}document.body.setAttribute('data-kinst-errors',"
             "JSON.stringify(window.__kinstErrors));})();</script>")
    tested = doc.replace("<head>", "<head>" + COLLECT, 1)
    i = tested.rindex("</body>")
    tested = tested[:i] + probe + tested[i:]
    with tempfile.TemporaryDirectory(prefix="kinst-browser.") as d:
        page = os.path.join(d, "page.html")
        with open(page, "w", encoding="utf-8") as f:
            f.write(tested)
        r = _run(browser, ["--user-data-dir=" + os.path.join(d, "profile"),
                           "--enable-logging=stderr", "--v=0",
                           "--window-size=%d,%d" % size, "--dump-dom", "file://" + page])
        dom = r.stdout
        errors = []
        if r.returncode != 0 or "<body" not in dom:
            errors.append("chromium --dump-dom failed (exit %d): %s" % (
                r.returncode, r.stderr.strip().splitlines()[-1:] or ""))
        for line in r.stderr.splitlines():
            if "CONSOLE" in line and re.search(r"Uncaught|Error", line):
                errors.append(line.split("] ", 1)[-1])
        recorded = parse(Strict(), dom).body.get("data-kinst-errors")
        if recorded is None:
            errors.append("the probe script did not run (no data-kinst-errors on <body>)")
        else:
            errors += json.loads(recorded)
        if screenshot:
            os.makedirs(os.path.dirname(screenshot), exist_ok=True)
            plain = os.path.join(d, "plain.html")
            with open(plain, "w", encoding="utf-8") as f:
                f.write(doc)
            s = _run(browser, ["--user-data-dir=" + os.path.join(d, "profile2"),
                               "--window-size=%d,%d" % size,
                               "--screenshot=" + screenshot, "file://" + plain])
            if s.returncode != 0 or not os.path.exists(screenshot) or \
                    os.path.getsize(screenshot) == 0:
                errors.append("chromium --screenshot failed (exit %d)" % s.returncode)
    return dom, errors
