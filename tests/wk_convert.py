#!/usr/bin/env python3
"""wk_convert.py FILE... - rewrites IR_NAME("s") and IR_NAME(EMPTY_VAR) into
IR_WK(ident) for the names in src/ir/names.def (issue 28 point 4: no static
cache per call site).  Prints each IR_NAME left whose name is not in
names.def (add an X(ident, "s") line there and run again); exit 1 if any.
Used once for the tree, and for src/passes/transpile after the merge:
    python3 tests/wk_convert.py src/passes/transpile/*.c"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEF = os.path.join(HERE, "..", "src", "ir", "names.def")
ALIASES = {"EMPTY_VAR": "@EMPTY@"}   # src/grad/grad.h's macro for "@EMPTY@"


def names():
    ids = {}
    for line in open(DEF):
        m = re.match(r'X\((\w+), "([^"]*)"\)', line)
        if m:
            ids[m.group(2)] = m.group(1)
    return ids


def main(paths):
    ids = names()
    left = 0
    call = re.compile(r'IR_NAME\(\s*(?:"([^"]*)"|(\w+))\s*\)')
    for path in paths:
        text = open(path).read()

        def sub(m):
            lit = m.group(1) if m.group(1) is not None else ALIASES.get(m.group(2))
            return "IR_WK(%s)" % ids[lit] if lit in ids else m.group(0)
        out = call.sub(sub, text)
        if out != text:
            open(path, "w").write(out)
        for n, line in enumerate(out.splitlines(), 1):
            if call.search(line):
                print("%s:%d: IR_NAME not in names.def: %s" % (path, n, line.strip()))
                left += 1
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
