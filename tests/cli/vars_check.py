#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Checks kinstctl list-vars --json against llvm-dwarfdump, instruction by
instruction, with nothing of kinstctl's code: this script reads
llvm-dwarfdump --debug-info's text, rebuilds the DIE tree, and for each
instruction kinstctl listed works out which variables are in scope (the
concrete subprogram, lexical blocks and inlined copies whose ranges hold
the address), which location-list entry holds there, and the location's
kind; then compares.

  vars_check.py DWARFDUMP_TXT LISTVARS_JSONL [--reloc]

--reloc: a relocatable file (a .ko): DW_OP_addr operands are not
compared (llvm-dwarfdump prints them unrelocated), nor are addresses of
functions outside the first .text (llvm gives every section address 0).
Prints one line per mismatch and a summary; exit 1 on any mismatch.
"""
import json
import re
import sys

die_re = re.compile(r'^(0x[0-9a-f]+):( +)(DW_TAG_\w+|NULL)')
attr_re = re.compile(r'^ +(DW_AT_\w+)\t\((.*)$')
interval_re = re.compile(r'\[0x[0-9a-f]+, 0x[0-9a-f]+\)')
range_re = re.compile(r'^ *\[(0x[0-9a-f]+), (0x[0-9a-f]+)\)(?:: (.*))?$')


class Die:
    def __init__(self, off, tag, depth):
        self.off, self.tag, self.depth = off, tag, depth
        self.attrs = {}
        self.children = []
        self.parent = None


def parse(path):
    roots, stack = [], []
    cur = None
    pending = None      # (attr, [lines]) of a multi-line attribute
    with open(path) as fh:
        for line in fh:
            line = line.rstrip('\n')
            if pending is not None:
                # The attribute's parenthesis closes the list; ranges'
                # half-open "[a, b)" do not count.
                pending[1].append(line)
                bare = interval_re.sub('', line)
                pending[2] += bare.count('(') - bare.count(')')
                if pending[2] <= 0:
                    cur.attrs[pending[0]] = pending[1]
                    pending = None
                continue
            m = die_re.match(line)
            if m:
                depth = len(m.group(2))
                tag = m.group(3)
                while stack and stack[-1].depth >= depth:
                    stack.pop()
                if tag == 'NULL':
                    cur = None
                    continue
                d = Die(int(m.group(1), 16), tag, depth)
                if stack:
                    d.parent = stack[-1]
                    stack[-1].children.append(d)
                else:
                    roots.append(d)
                stack.append(d)
                cur = d
                continue
            m = attr_re.match(line)
            if m and cur is not None:
                name, rest = m.group(1), m.group(2)
                if rest.endswith(': ') or (rest.startswith('0x') and not rest.endswith(')')):
                    pending = [name, [rest], 1]
                else:
                    cur.attrs[name] = rest[:-1] if rest.endswith(')') else rest
    return roots


def unwrap(l):
    """A list line without the parenthesis that closes the attribute."""
    l = l.strip()
    bare = interval_re.sub('', l, count=1)
    if bare.count(')') > bare.count('('):
        l = l[:-1]
    return l


def ranges(d):
    """The [lo, hi) address ranges of a scope DIE."""
    a = d.attrs
    if 'DW_AT_low_pc' in a and 'DW_AT_high_pc' in a:
        lo = int(a['DW_AT_low_pc'], 16)
        hi = a['DW_AT_high_pc']
        hi = int(hi, 16) if hi.startswith('0x') else lo + int(hi)
        return [(lo, hi)]
    if 'DW_AT_ranges' in a and isinstance(a['DW_AT_ranges'], list):
        out = []
        for l in a['DW_AT_ranges'][1:]:
            m = range_re.match(unwrap(l))
            if m:
                out.append((int(m.group(1), 16), int(m.group(2), 16)))
        return out
    return []


def contains(d, addr):
    return any(lo <= addr < hi for lo, hi in ranges(d))


def quoted_name(v):
    m = re.search(r'"(.*)"', v)
    return m.group(1) if m else None


def die_name(d):
    if 'DW_AT_name' in d.attrs:
        return quoted_name(d.attrs['DW_AT_name'])
    if 'DW_AT_abstract_origin' in d.attrs:
        return quoted_name(d.attrs['DW_AT_abstract_origin'])
    if 'DW_AT_specification' in d.attrs:
        return quoted_name(d.attrs['DW_AT_specification'])
    return None


def location_at(d, addr):
    """(located, ops) of a variable DIE at addr."""
    a = d.attrs
    if 'DW_AT_location' in a:
        loc = a['DW_AT_location']
        if not isinstance(loc, list):
            return True, loc
        for l in loc[1:]:
            m = range_re.match(unwrap(l))
            if m and int(m.group(1), 16) <= addr < int(m.group(2), 16):
                return True, m.group(3) or ''
        return False, None
    if 'DW_AT_const_value' in a:
        return True, 'DW_AT_const_value'
    return False, None


def kind_of(ops):
    """The kind of a location, from llvm-dwarfdump's spelling."""
    if ops == 'DW_AT_const_value' or ops.startswith('DW_OP_implicit_value'):
        return 'implicit'
    if ops == '':
        return 'empty'
    parts = [p.strip() for p in re.split(r', (?![^(]*\))', ops)]
    if any(p.startswith('DW_OP_piece') or p.startswith('DW_OP_bit_piece') for p in parts):
        return 'pieces'
    if any(p.startswith('DW_OP_entry_value') or p.startswith('DW_OP_GNU_entry_value')
           for p in parts):
        return 'entry_value'
    if len(parts) == 1 and re.match(r'DW_OP_reg(\d+|x) ', parts[0]):
        return 'register'
    if parts[-1] == 'DW_OP_stack_value':
        return 'value'
    return 'memory'


def expected(cus, addr):
    """{(name, depth): ops or None} for the variables in scope at addr."""
    chain = []
    for cu in cus:
        for d in cu.children:
            if d.tag == 'DW_TAG_subprogram' and contains(d, addr):
                chain.append(d)
                break
        if chain:
            break
    while chain:
        nxt = None
        for d in chain[-1].children:
            if d.tag in ('DW_TAG_lexical_block', 'DW_TAG_inlined_subroutine') and \
                    contains(d, addr):
                nxt = d
                break
        if nxt is None:
            break
        chain.append(nxt)
    out = {}
    for depth, scope in enumerate(reversed(chain)):
        for d in scope.children:
            if d.tag not in ('DW_TAG_variable', 'DW_TAG_formal_parameter'):
                continue
            if 'DW_AT_declaration' in d.attrs:
                continue
            name = die_name(d)
            if name is None:
                continue
            located, ops = location_at(d, addr)
            out[(name, depth)] = ops if located else None
    return out


def norm(ops, reloc):
    if ops is None:
        return None
    if ops.startswith('DW_AT_const_value'):
        return 'DW_AT_const_value'
    if reloc:
        ops = re.sub(r'DW_OP_addr 0x[0-9a-f]+', 'DW_OP_addr', ops)
    # A typed operation's type: llvm-dwarfdump names the DIE, kinstctl
    # gives its unit offset (0: the generic type in both).
    ops = re.sub(r'(DW_OP_(?:GNU_)?(?:convert|reinterpret|regval_type|deref_type|const_type)) '
                 r'\(0x[0-9a-f]+\) "[^"]*"', r'\1 <type>', ops)
    ops = re.sub(r'(DW_OP_(?:GNU_)?(?:convert|reinterpret)) 0x0*[1-9a-f][0-9a-f]*', r'\1 <type>', ops)
    return ops


def main():
    reloc = '--reloc' in sys.argv
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    cus = [r for r in parse(args[0]) if r.tag == 'DW_TAG_compile_unit']
    bad = insns = nvars = undecoded = 0
    kinds = {}
    with open(args[1]) as fh:
        for line in fh:
            j = json.loads(line)
            if j.get('type') != 'vars':
                continue
            if reloc and j.get('section', '.text') != '.text':
                continue
            addr = int(j['address'], 16)
            insns += 1
            want = expected(cus, addr)
            got = {}
            for v in j['available'] + j['unavailable']:
                got[(v['name'], v['depth'])] = v.get('dwarf') if 'dwarf' in v else None
                k = v.get('kind')
                if 'dwarf' in v:
                    kk = kind_of(v['dwarf'])
                    if k != kk:
                        bad += 1
                        print('%s+%#x %s: kind %s, llvm-dwarfdump\'s ops say %s (%s)' %
                              (j['function'], j['offset'], v['name'], k, kk, v['dwarf']))
                    kinds[kk] = kinds.get(kk, 0) + 1
                if v in j['available'] and 'dwarf' not in v:
                    bad += 1
                    print('%s+%#x %s: available without a DWARF location' %
                          (j['function'], j['offset'], v['name']))
            nvars += len(got)
            for key in sorted(set(want) | set(got)):
                w = norm(want.get(key, '<absent>'), reloc)
                g = norm(got.get(key, '<absent>'), reloc)
                if w is not None and '<decoding error>' in w and g not in (None, '<absent>'):
                    undecoded += 1  # llvm-dwarfdump 14 cannot decode it (implicit pointers)
                    continue
                if w != g:
                    bad += 1
                    print('%s+%#x %s (scope depth %d): kinstctl %r, llvm-dwarfdump %r' %
                          (j['function'], j['offset'], key[0], key[1], g, w))
    print('vars_check: %d instructions, %d variables, %d mismatches; kinds: %s' %
          (insns, nvars, bad, ', '.join('%s %d' % kv for kv in sorted(kinds.items()))))
    if undecoded:
        print('vars_check: %d locations llvm-dwarfdump could not decode (not compared; '
              'informational)' % undecoded)
    if insns == 0:
        print('vars_check: no instruction to check')
        return 1
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
