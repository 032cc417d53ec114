#!/usr/bin/env python3
"""rewrite_mutate.py MODE IN.pbtxt OUT.pbtxt: one injected bug in block 0 of a
memory-optimized or release-memory program (text form, `pdtrans convert`), for
tests/verify/rewrite.sh.  Prints the op the bug must be reported at
("OP_INDEX TYPE VAR", the index in AFTER's block 0).

  early-delete  moves the last delete_var that deletes an input of the op
                just before it above that op: the op reads a deleted var.
  live-reuse    the first op whose output
                x is read later gets the buffer of a var y the next op reads
                (an earlier op's output, still live): x is renamed y in that op and the later
                reads, as a wrong memory_optimize would."""
import re
import sys


def ops_of_block0(lines):
    """(start, end) line ranges of block 0's ops (two-space indent)."""
    spans, start, depth0 = [], None, 0
    for i, l in enumerate(lines):
        if l.startswith("blocks {"):
            depth0 += 1
            if depth0 > 1:
                break
        if l == "  ops {":
            start = i
        elif l == "  }" and start is not None:
            spans.append((start, i + 1))
            start = None
    return spans


def slots(chunk, kind):
    """[(slot, [args])] of inputs or outputs."""
    out, cur = [], None
    for l in chunk:
        if l == "    %s {" % kind:
            cur = [None, []]
        elif cur is not None and l.startswith("      parameter: "):
            cur[0] = l.split('"')[1]
        elif cur is not None and l.startswith("      arguments: "):
            cur[1].append(l.split('"')[1])
        elif cur is not None and l == "    }":
            out.append(tuple(cur))
            cur = None
    return out


def op_type(chunk):
    return next(l.split('"')[1] for l in chunk if l.startswith("    type: "))


def reads(chunk):
    return [a for _, args in slots(chunk, "inputs") for a in args]


def early_delete(lines, spans):
    chunks = [lines[a:b] for a, b in spans]
    for k in range(len(chunks) - 1, 0, -1):
        if op_type(chunks[k]) != "delete_var" or op_type(chunks[k - 1]) == "delete_var":
            continue
        hit = [v for v in reads(chunks[k]) if v in reads(chunks[k - 1])]
        if hit:
            chunks[k - 1], chunks[k] = chunks[k], chunks[k - 1]
            return chunks, "%d %s %s" % (k, op_type(chunks[k]), hit[0])
    sys.exit("rewrite_mutate: no delete_var to move")


def rename(chunk, old, new):
    pat = re.compile(r'^(      arguments: )"%s"$' % re.escape(old))
    return [pat.sub(r'\1"%s"' % new, l) for l in chunk]


def live_reuse(lines, spans):
    chunks = [lines[a:b] for a, b in spans]
    rd = [reads(c) for c in chunks]
    wr = [[a for _, args in slots(c, "outputs") for a in args if a] for c in chunks]
    last_read, first_write = {}, {}
    for k, r in enumerate(rd):
        for a in r:
            last_read[a] = k
    for k, w in enumerate(wr):
        for a in w:
            first_write.setdefault(a, k)
    real = [k for k, c in enumerate(chunks) if op_type(c) != "delete_var"]
    for n in range(1, len(real) - 2):
        i, j = real[n], real[n + 1]
        x = next((a for a in wr[i] if last_read.get(a, -1) > j and a not in rd[j]
                  and a not in rd[i]), None)
        y = next((a for a in rd[j] if a not in wr[i] and a not in rd[i]
                  and first_write.get(a, i) < i and a != x), None)
        if not x or not y:
            continue
        chunks[i] = rename(chunks[i], x, y)
        for m in range(i + 1, len(chunks)):
            if x in wr[m]:
                break
            chunks[m] = rename(chunks[m], x, y)
        return chunks, "%d %s %s" % (j, op_type(chunks[j]), y)
    sys.exit("rewrite_mutate: no reuse to inject")


def main():
    mode, src, dst = sys.argv[1:4]
    lines = open(src).read().split("\n")
    spans = ops_of_block0(lines)
    chunks, where = (early_delete if mode == "early-delete" else live_reuse)(lines, spans)
    out = lines[:spans[0][0]] + [l for c in chunks for l in c] + lines[spans[-1][1]:]
    open(dst, "w").write("\n".join(out))
    print(where)


main()
