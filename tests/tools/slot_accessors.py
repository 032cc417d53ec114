#!/usr/bin/env python3
"""Rewrites uses of an ir_op's slot arrays, EXPR->inputs / EXPR->outputs
(or EXPR.inputs), into the accessors ir_op_ins(EXPR) / ir_op_outs(EXPR)
(src/ir/ir.h; issue 33 point 2: slots are decoded on first access).

Not run by any test: a tool for merging.  The fields are named inputs_ /
outputs_, so the compiler finds every remaining use of the old names on an
ir_op (other structs' `inputs` fields are left alone): each file is compiled
with -fsyntax-only, and each "'ir_op' ... has no member named 'inputs'" error
is rewritten at its line and column, until none is left.  A use the
accessor cannot serve (an assignment, an address taken) then fails to
compile and is fixed by hand.

Usage, from the tree's top after `make deps`:
  python3 tests/tools/slot_accessors.py $(find src tests -name '*.c')
(.h files are rewritten through the .c files that include them; about a
minute for the whole tree.)
"""
import os
import re
import subprocess
import sys

FLAGS = ['-std=c11', '-D_POSIX_C_SOURCE=200809L', '-D_DEFAULT_SOURCE', '-Ibuild/gen',
         '-Isrc', '-Itests/unit', '-include', 'src/ir/alloc.h',
         '-fsyntax-only', '-fdiagnostics-column-unit=byte', '-fmax-errors=0']
PKG = subprocess.run(['pkg-config', '--cflags', 'libprotobuf-c', 'glib-2.0', 'jansson',
                      'nettle', 'check'], capture_output=True, text=True).stdout.split()
ERR = re.compile(r"^(.*?):(\d+):(\d+): error: '(?:const )?(?:struct )?ir_op'.*"
                 r"has no member named '(inputs|outputs)'")
USE = re.compile(r'(->|\.)\s*(inputs|outputs)\b')


def match_back(line, j):
    """Index of the bracket opening the one that closes at j."""
    close = line[j]
    open_ = {')': '(', ']': '['}[close]
    depth = 0
    for k in range(j, -1, -1):
        if line[k] == close:
            depth += 1
        elif line[k] == open_:
            depth -= 1
            if depth == 0:
                return k
    raise ValueError('unbalanced: ' + line)


def skip_space_back(line, j):
    while j >= 0 and line[j] in ' \t':
        j -= 1
    return j


def expr_start(line, i):
    """Start of the postfix expression that ends just before index i."""
    while True:
        j = skip_space_back(line, i - 1)
        if j < 0:
            return i
        c = line[j]
        if c == ']':
            i = match_back(line, j)
            continue
        if c == ')':
            k = match_back(line, j)
            m = skip_space_back(line, k - 1)
            if m >= 0 and (line[m].isalnum() or line[m] in '_])'):
                i = k           # a call: go on to the callee
                continue
            return k            # a parenthesized primary
        if c.isalnum() or c == '_':
            k = j
            while k >= 0 and (line[k].isalnum() or line[k] == '_'):
                k -= 1
            m = skip_space_back(line, k)
            if m >= 1 and line[m - 1:m + 1] == '->':
                i = m - 1
                continue
            if m >= 0 and line[m] == '.':
                i = m
                continue
            return k + 1
        return i


def rewrite(line, col):
    """The line with the use at (1-based byte) column col rewritten."""
    m = None
    for cand in USE.finditer(line):
        # gcc points at the operator or at the member name
        if cand.start() <= col - 1 <= cand.end():
            m = cand
    if m is None:
        raise ValueError('no use at column %d: %s' % (col, line))
    start = expr_start(line, m.start())
    expr = line[start:m.start()].strip()
    if m.group(1) == '.':
        expr = '&' + expr
    fn = 'ir_op_ins' if m.group(2) == 'inputs' else 'ir_op_outs'
    return line[:start] + '%s(%s)' % (fn, expr) + line[m.end():]


def errors(path):
    r = subprocess.run(['cc'] + FLAGS + PKG + [path], capture_output=True, text=True,
                       env=dict(os.environ, LC_ALL='C'))
    found = set()
    for ln in r.stderr.splitlines():
        e = ERR.match(ln)
        if e:
            found.add((e.group(1), int(e.group(2)), int(e.group(3))))
    return found


def main(paths):
    for path in [p for p in paths if p.endswith('.c')]:
        for _ in range(8):
            found = errors(path)
            if not found:
                break
            by_file = {}
            for f, ln, col in found:
                by_file.setdefault(f, []).append((ln, col))
            for f, locs in by_file.items():
                with open(f) as fh:
                    lines = fh.read().split('\n')
                for ln, col in sorted(locs, reverse=True):
                    lines[ln - 1] = rewrite(lines[ln - 1], col)
                with open(f, 'w') as fh:
                    fh.write('\n'.join(lines))
                print('%s: %d' % (f, len(locs)))


if __name__ == '__main__':
    main(sys.argv[1:])
