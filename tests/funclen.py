#!/usr/bin/env python3
"""funclen.py - lists the top-level C functions of src/ longer than 80 lines
and the C files longer than 600 lines (issue 15 point 5), and fails if any.

A function is measured from the line holding its opening brace to the line
holding its closing brace, both counted: the project's style puts both alone
in column 0 (a function whose brace follows its parameter list on the same
line is reported, so that the measure cannot be dodged).

Usage: funclen.py [--max-lines=N] [--max-file-lines=N] [FILE...]
(default: every src/**/*.c and *.h of the repository; run by make check)."""
import glob
import os
import re
import sys

MAX_FUNC = 80
MAX_FILE = 600


def functions(lines):
    """(name, first line, length) of each top-level function body."""
    i = 0
    while i < len(lines):
        if lines[i].rstrip() != '{':
            i += 1
            continue
        start = i - 1    # the signature: back to its first line in column 0
        while start > 0 and lines[start][:1] in (' ', '\t'):
            start -= 1
        end = i + 1
        while end < len(lines) and lines[end].rstrip() != '}':
            end += 1
        m = re.search(r'(\w+)\s*\(', lines[start]) if start >= 0 else None
        yield (m.group(1) if m else '?'), start + 1, end - i + 1
        i = end + 1


def brace_on_signature(lines):
    """Line numbers of definitions written as `type name(args) {`."""
    for n, line in enumerate(lines, 1):
        if re.match(r'[A-Za-z_][^;=]*\)\s*\{\s*$', line) and not line.startswith(('#', 'typedef')):
            yield n


def self_test():
    """The measure on made-up sources, so that a broken parser cannot pass
    everything silently."""
    def body(n):    # a function of n lines, braces counted
        return ['static int f(int a,', '                 int b)', '{'] + \
               ['    a++;'] * (n - 2) + ['}', '']
    cases = [(body(80), []), (body(81), [('f', 1, 81)]),
             (body(3) + ['int g(void)', '{', '    return 0;', '}'], [('g', 7, 3)])]
    for lines, want in cases:
        got = [x for x in functions(lines) if x[2] > MAX_FUNC or x[0] == 'g']
        if got != want:
            print('funclen: self-test failed: %r, expected %r' % (got, want))
            return 1
    if list(brace_on_signature(['int h(void) {', '    return 0;', '}'])) != [1]:
        print('funclen: self-test failed: brace on the signature line not seen')
        return 1
    return 0


def main(argv):
    max_func, max_file, files = MAX_FUNC, MAX_FILE, []
    if self_test():
        return 2
    for a in argv:
        if a.startswith('--max-lines='):
            max_func = int(a.split('=', 1)[1])
        elif a.startswith('--max-file-lines='):
            max_file = int(a.split('=', 1)[1])
        else:
            files.append(a)
    if not files:
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
        os.chdir(root)
        files = sorted(glob.glob('src/**/*.c', recursive=True) +
                       glob.glob('src/**/*.h', recursive=True))
    found = 0
    for path in files:
        with open(path, encoding='utf-8', errors='replace') as f:
            lines = f.read().split('\n')
        if lines and lines[-1] == '':
            lines.pop()
        if len(lines) > max_file:
            print('%s: %d lines (more than %d)' % (path, len(lines), max_file))
            found += 1
        for name, first, length in functions(lines):
            if length > max_func:
                print('%s:%d: function %s is %d lines (more than %d)' %
                      (path, first, name, length, max_func))
                found += 1
        for n in brace_on_signature(lines):
            print('%s:%d: opening brace on the signature line (cannot measure)' % (path, n))
            found += 1
    if found:
        return 1
    print('funclen: no function over %d lines, no file over %d lines (%d files)' %
          (max_func, max_file, len(files)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
