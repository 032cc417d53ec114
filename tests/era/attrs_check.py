#!/usr/bin/env python3
"""attrs_check.py [--ignore=ATTR,...] [--copied=TYPE,...] VERSION
REAL.pdmodel[,REAL...] OUT.pbtxt...  (PDTRANS in env)

The sibling of real_check.py for the attrs Operator.__init__'s
desc.check_attrs() writes: compares the whole attr name+type set of each op
pdtrans created in OUT (which ops count: as real_check.py) with the ops of
the same type and role class (backward or not) in real programs that Paddle
VERSION wrote.  op_callstack and op_namescope are left out (a traceback and
a Python name scope: the real writer's path differs), as is every attr
named by --ignore (attrs a real program's writer strips, as 2.5's
inference export strips the extra attrs).  Ops whose attrs Paddle copies
from an op of the input are not compared, since their attrs are the
input's (a test input written by hand lacks the defaults a real one has):
grad ops (the grad makers copy the forward op's attrs), every op of a
pserver startup program (the transpiler clones the input's startup ops
with attrs=op.all_attrs()) and the types named by --copied (the pserver's
optimizer ops, cloned the same way).  A created op passes when one real op of its group has
the same set; a type no real program of that version has is reported as not
checked.  Prints one line per group (the attrs only pdtrans writes, then
those only Paddle writes, for the nearest real op); exit 1 when any group
differs."""
import os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from real_check import ops, group, real_groups, created_by_pdtrans  # noqa: E402

SKIP = {"op_callstack", "op_namescope"}


def attrset(op, ignore):
    return frozenset((k, v) for k, v in op["attrs"].items()
                     if k not in SKIP and k not in ignore)


def main():
    args = sys.argv[1:]
    ignore, copied = set(), set()
    while args and args[0].startswith("--"):
        key, _, val = args.pop(0).partition("=")
        if key not in ("--ignore", "--copied"):
            sys.exit("attrs_check.py: unknown option %s" % key)
        (ignore if key == "--ignore" else copied).update(val.split(","))
    version, reals, outs = args[0], args[1].split(","), args[2:]
    real = real_groups(reals, lambda op: attrset(op, ignore))
    made, kept = {}, set()
    for path in outs:
        base = os.path.basename(path)
        for op in ops(open(path).read()):
            created = created_by_pdtrans(path, op)
            if created and (op["type"].endswith("_grad") or op["type"] in copied
                            or (base.startswith("pserver") and ".startup" in base)):
                kept.add(group(op))
                continue
            if created:
                made.setdefault(group(op), set()).add(attrset(op, ignore))
    for g in sorted(kept):
        print("%s %s (%s): attrs copied from the input's op, not checked"
              % (version, g[0], g[1]))
    bad = 0
    for g in sorted(made):
        for f in sorted(made[g], key=lambda s: sorted(s)):
            if g not in real:
                print("%s %s (%s): no real op, not checked" % (version, g[0], g[1]))
            elif f in real[g]:
                print("%s %s (%s): attrs as Paddle writes them" % (version, g[0], g[1]))
            else:
                bad = 1
                near = min(real[g], key=lambda r: (len(r ^ f), sorted(r)))
                ours = ", ".join("%s %s" % a for a in sorted(f - near)) or "-"
                theirs = ", ".join("%s %s" % a for a in sorted(near - f)) or "-"
                print("%s %s (%s): attrs differ: only pdtrans: %s; only Paddle: %s"
                      % (version, g[0], g[1], ours, theirs))
    return bad


if __name__ == "__main__":
    sys.exit(main())
