#!/usr/bin/env python3
"""mutate.py - injects one bug into a program of a transpile's job folder,
for tests/verify/run.sh.  The program goes through `pdtrans convert` to
text, is edited here as a tree of protobuf text fields, and is converted
back to its own form (binary).

usage: mutate.py PDTRANS FILE MUTATION [ARGS...]

MUTATIONS (BLOCK and OP are indexes; TYPE an op type):
  set-epmap BLOCK OP I EP        the I-th endpoint of the op's epmap
  swap-input BLOCK OP SLOT I J   swap two args of an input slot
  set-input BLOCK OP SLOT I VAR  replace an input arg
  set-output BLOCK OP SLOT I VAR replace an output arg
  drop-input BLOCK OP SLOT I     remove an input arg
  drop-op BLOCK OP               remove an op
  dup-op BLOCK OP                repeat an op right after itself
  set-attr BLOCK OP NAME FIELD VALUE   e.g. beta1 f 0.5, sub_block block_idx 99
  add-attr BLOCK OP NAME TYPE FIELD VALUE...   e.g. epmap STRINGS strings '"a:1"' '"b:2"'

The manifests of FILE's folder get the mutant's SHA-256 in place of the
original's (resign), as if transpile had written the mutant: verify job
checks the hashes first, and the mutants test its semantic checks.
"""
import glob
import hashlib
import re
import os
import subprocess
import sys
import tempfile


def parse(text):
    """Lines of `key {`, `}`, `key: value` into [key, value-or-children]."""
    root, stack = [], []
    cur = root
    for line in text.splitlines():
        s = line.strip()
        if not s:
            continue
        if s == "}":
            cur = stack.pop()
        elif s.endswith("{"):
            node = [s[:-1].strip(), []]
            cur.append(node)
            stack.append(cur)
            cur = node[1]
        else:
            k, v = s.split(":", 1)
            cur.append([k.strip(), v.strip()])
    return root


def dump(nodes, depth=0):
    out = []
    for k, v in nodes:
        if isinstance(v, list):
            out.append("  " * depth + k + " {")
            out.extend(dump(v, depth + 1))
            out.append("  " * depth + "}")
        else:
            out.append("  " * depth + k + ": " + v)
    return out


def fields(node, key):
    return [n for n in node if n[0] == key]


def op_at(root, block, op):
    b = [x for x in fields(root, "blocks") if fields(x[1], "idx")[0][1] == str(block)][0]
    ops = fields(b[1], "ops")
    return b[1], ops[op]


def slot(op, kind, name):
    for s in fields(op[1], kind):
        if fields(s[1], "parameter")[0][1] == '"%s"' % name:
            return s[1]
    raise SystemExit("no %s slot %s" % (kind, name))


def attr(op, name):
    for a in fields(op[1], "attrs"):
        if fields(a[1], "name")[0][1] == '"%s"' % name:
            return a[1]
    raise SystemExit("no attr %s" % name)


def nth(nodes, key, i):
    return [n for n in nodes if n[0] == key][i]


def mutate(root, m, a):
    if m in ("drop-op", "dup-op"):
        blk, op = op_at(root, a[0], int(a[1]))
        i = blk.index(op)
        if m == "drop-op":
            del blk[i]
        else:
            blk.insert(i + 1, [op[0], [list(x) for x in op[1]]])
        return
    _, op = op_at(root, a[0], int(a[1]))
    if m == "set-epmap":
        nth(attr(op, "epmap"), "strings", int(a[2]))[1] = '"%s"' % a[3]
    elif m == "swap-input":
        s = slot(op, "inputs", a[2])
        x, y = nth(s, "arguments", int(a[3])), nth(s, "arguments", int(a[4]))
        x[1], y[1] = y[1], x[1]
    elif m == "set-input":
        nth(slot(op, "inputs", a[2]), "arguments", int(a[3]))[1] = '"%s"' % a[4]
    elif m == "set-output":
        nth(slot(op, "outputs", a[2]), "arguments", int(a[3]))[1] = '"%s"' % a[4]
    elif m == "drop-input":
        s = slot(op, "inputs", a[2])
        s.remove(nth(s, "arguments", int(a[3])))
    elif m == "set-attr":
        fields(attr(op, a[2]), a[3])[0][1] = a[4]
    elif m == "add-attr":
        op[1].append(["attrs", [["name", '"%s"' % a[2]], ["type", a[3]]] +
                      [[a[4], v] for v in a[5:]]])
    else:
        raise SystemExit("unknown mutation " + m)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def resign(path, old):
    """Every manifest beside PATH whose sha256 map lists PATH with OLD (its
    former SHA-256) lists its new one instead; only PATH's entry: another
    file of the same bytes (GEO's trainers) keeps its own."""
    name = os.path.basename(path)
    entry = re.compile(r'("%s"\s*:\s*")%s"' % (re.escape(name), old))
    new = sha256(path)
    for m in glob.glob(os.path.join(os.path.dirname(path), "manifest*.json")):
        text = open(m).read()
        if entry.search(text):
            open(m, "w").write(entry.sub(lambda x: x.group(1) + new + '"', text))


def main():
    pdtrans, path, m, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    old = sha256(path)
    with tempfile.TemporaryDirectory() as d:
        txt = os.path.join(d, "p.pbtxt")
        subprocess.run([pdtrans, "convert", path, txt], check=True)
        root = parse(open(txt).read())
        mutate(root, m, args)
        open(txt, "w").write("\n".join(dump(root)) + "\n")
        subprocess.run([pdtrans, "convert", "--binary", txt, path], check=True)
    resign(path, old)


if __name__ == "__main__":
    main()
