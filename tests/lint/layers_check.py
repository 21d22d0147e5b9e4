#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
# kinstctl's layers (cli/README.md): every source file of cli/ lives in one
# layer folder, includes the headers of cli/ by their folder ("plan/cover.h"),
# and includes only headers of its own layer or of a layer below it.
# Usage: layers_check.py SRCDIR.  Prints each violation; exit 1 if any.
import os
import re
import sys

# Bottom to top: a folder may include from itself and the folders before it.
LAYERS = ['base', 'symbols', 'debuginfo', 'plan', 'device', 'output', 'commands']
SOURCE = ('.cc', '.h', '.h.in')
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main():
    cli = os.path.join(sys.argv[1], 'cli')
    rank = {l: i for i, l in enumerate(LAYERS)}
    bad = []
    files = []
    for name in sorted(os.listdir(cli)):
        p = os.path.join(cli, name)
        if os.path.isdir(p):
            if name not in rank:
                bad.append('cli/%s/: not a layer (%s)' % (name, ', '.join(LAYERS)))
                continue
            files += [(name, f) for f in sorted(os.listdir(p)) if f.endswith(SOURCE)]
        elif name.endswith(SOURCE):
            bad.append('cli/%s: outside every layer folder' % name)
    headers = {'%s/%s' % lf for lf in files}
    headers.add('base/version.h')		# configured from base/version.h.in
    for layer, f in files:
        text = open(os.path.join(cli, layer, f), encoding='utf-8').read()
        for inc in INCLUDE.findall(text):
            where = 'cli/%s/%s: #include "%s"' % (layer, f, inc)
            top = inc.split('/', 1)[0]
            if '/' not in inc:
                if os.path.exists(os.path.join(cli, layer, inc)) or inc + '.in' in \
                        [g for l, g in files if l == layer]:
                    bad.append(where + ': name it by its folder (%s/%s)' % (layer, inc))
                continue		# the engine's headers (common/)
            if top not in rank:
                continue
            if inc not in headers:
                bad.append(where + ': no such header')
            elif rank[top] > rank[layer]:
                bad.append(where + ': %s is above %s (%s)' %
                           (top, layer, ' < '.join(LAYERS)))
    for b in bad:
        print(b)
    print('%d files in %d layers, %d violation%s' %
          (len(files), len(LAYERS), len(bad), '' if len(bad) == 1 else 's'))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
