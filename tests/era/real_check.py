#!/usr/bin/env python3
"""real_check.py [--ignore=FIELD,...] VERSION REAL.pdmodel[,REAL...] OUT.pbtxt...
(PDTRANS in env)

Checks the ops pdtrans created in OUT (a job folder's text programs) against
the ops of the same type and role class (backward or not) in real programs
that Paddle VERSION wrote (../shared/testdata-real), on the fields the era
table (src/passes/era/era.def) decides: whether op_device, with_quant_attr
and place_type are written, force_cpu's attr type, and whether the input
slots ScaleTensor, ValueTensor and a grad op's X are written.  A created op
passes when one real op of its group has the same value on every field; a
type no real program of that version has is reported as not checked.
Prints one line per group; exit 1 when any group differs.

Created ops: every op of a pserver program; in a program whose file name
starts with "bw_" (a backward output) the backward-role ops; in a trainer
program the ops whose op_role has the Optimize, RPC, Dist or LRSched bit
(the input's own forward and backward ops are not pdtrans's).  --ignore
leaves fields out (a real program whose writer strips them, as 2.5's
inference export strips the extra attrs).  Not compared here: the other
check_attrs defaults (use_mkldnn, bias, ...), whose whole attr set
attrs_check.py compares, and the input slots of a fill_constant with none (an
initializer's, built with inputs=None in every version), which real
layers.fill_constant ops have."""
import os, subprocess, sys

ATTRS = ("op_device", "with_quant_attr", "place_type")
SLOTS = ("ScaleTensor", "ValueTensor")
CREATED_BITS = 2 | 4 | 8 | 16


def ops(text):
    """Yields (type, {attr: type}, [input slots], role) per op of a dump."""
    cur, depth, ctx, name, typ = None, 0, None, None, None
    for line in text.splitlines():
        s = line.strip()
        if s == "ops {":
            cur, depth = {"type": None, "in": [], "attrs": {}, "role": 0}, 1
            continue
        if cur is None:
            continue
        if s.endswith("{"):
            depth += 1
            if depth == 2:
                ctx, name, typ = s[:-1].strip(), None, None
            continue
        if s == "}":
            depth -= 1
            if depth == 1 and ctx == "inputs":
                cur["in"].append(name)
            if depth == 1 and ctx == "attrs":
                cur["attrs"][name] = typ
            if depth == 0:
                yield cur
                cur = None
            continue
        if depth == 1 and s.startswith("type:"):
            cur["type"] = s.split('"')[1]
        elif depth == 2 and (s.startswith("name:") or s.startswith("parameter:")):
            name = s.split('"')[1]
        elif depth == 2 and s.startswith("type:"):
            typ = s.split(":", 1)[1].strip()
        elif depth == 2 and s.startswith("i:") and name == "op_role":
            cur["role"] = int(s.split(":", 1)[1])


def fields(op):
    f = [(a, op["attrs"].get(a) is not None) for a in ATTRS]
    f.append(("force_cpu", op["attrs"].get("force_cpu")))
    if op["type"] != "fill_constant" or op["in"]:
        f += [(s, s in op["in"]) for s in SLOTS]
    if op["type"].endswith("_grad"):
        f.append(("X", "X" in op["in"]))
    return tuple(f)


def group(op):
    return (op["type"], "backward" if (op["role"] & ~256) == 1 else "other")


def matches(f, real_f, ignore):
    r = dict(real_f)
    return all(k in ignore or r.get(k) == v for k, v in f)


def real_groups(reals, key):
    """{group: set of key(op)} over the ops of the real programs (PDTRANS dumps them)."""
    real = {}
    for path in reals:
        text = subprocess.run([os.environ["PDTRANS"], "dump", path], check=True,
                              capture_output=True, text=True).stdout
        for op in ops(text):
            real.setdefault(group(op), set()).add(key(op))
    return real


def created_by_pdtrans(path, op):
    """Whether op of the output program at path is one pdtrans created (module doc)."""
    base = os.path.basename(path)
    if base.startswith("bw_"):
        return group(op)[1] == "backward"
    return bool(base.startswith("pserver") or op["role"] & CREATED_BITS)


def main():
    args = sys.argv[1:]
    ignore = set()
    if args and args[0].startswith("--ignore="):
        ignore = set(args.pop(0).split("=", 1)[1].split(","))
    version, reals, outs = args[0], args[1].split(","), args[2:]
    real = real_groups(reals, fields)
    made = {}
    for path in outs:
        for op in ops(open(path).read()):
            if created_by_pdtrans(path, op):
                made.setdefault(group(op), set()).add(fields(op))
    bad = 0
    for g in sorted(made):
        for f in sorted(made[g], key=repr):
            if g not in real:
                print("%s %s (%s): no real op, not checked" % (version, g[0], g[1]))
            elif any(matches(f, r, ignore) for r in real[g]):
                print("%s %s (%s): as Paddle writes it" % (version, g[0], g[1]))
            else:
                bad = 1
                near = sorted(real[g], key=repr)[0]
                diff = ", ".join("%s %s (Paddle: %s)" % (k, v, dict(near).get(k))
                                 for k, v in f
                                 if k not in ignore and dict(near).get(k) != v)
                print("%s %s (%s): differs: %s" % (version, g[0], g[1], diff))
    return bad


if __name__ == "__main__":
    sys.exit(main())
