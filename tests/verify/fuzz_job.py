#!/usr/bin/env python3
"""fuzz_job.py - mutation fuzzing of `pdtrans verify job` on the job
folders of GEO-SGD (dense and sparse), collective local_sgd and
single_process_multi_thread, and remote prefetch (sync and async).

Each mode's folder is built by `pdtrans transpile` from a golden case's
input (the flags of tests/verify/run.sh and geo.sh) and must verify equal
first.  Then each case copies one folder and mutates it once:
  manifest.json as JSON: a value of another type, a huge, negative, zero
    or non-numeric number (as number and as string), a key removed, a
    list shortened, lengthened or emptied, a name swapped for another
    name of the job;
  manifest.json or a program as bytes: truncated, bytes flipped;
  a program in its text form (`pdtrans convert`, mutate.py's tree): an
    attr's value changed, an op's argument renamed, an op dropped or
    repeated, a var's dim made extreme.
and runs `pdtrans verify job` on it.  A mutated program's manifest entry
is made to match it (mutate.py's resign) in 3 cases of 4, as if transpile
had written it, so that the semantic checks see the mutant; in the 4th
(drawn from its own stream, so each case mutates as it did before verify
job checked hashes) the entry is left and verify job must report the
program as edited.  A finding is:
  - a sanitizer report, a signal, or an exit status other than 0 or 1
    (the flags are fixed and right, so 2 is a finding too);
  - exit 1 without exactly one "pdtrans: error: " line on stderr (besides
    warnings), or an error that names no file of the job (DIR);
  - a program whose bytes changed and whose entry was left, not reported
    as "DIR/FILE: sha256 differs" (exit 1);
  - exit 0 after a mutation that changes what the job computes: a
    vars_info value of GEO, a program's numeric attr of a computing op
    (SEMANTIC_ATTRS), an op of a trainer's or pserver's main program
    dropped.
Every case is a pure function of (seed, case number), so a finding is
reproduced by `--seed S --case N --keep DIR`.

usage: fuzz_job.py PDTRANS [--seed S] [--cases N] [--case N] [--keep DIR]
       [--modes m1,m2] [--timeout SEC]
Exit 0: no finding; 1: findings (each printed with its reproducer); 2: the
setup failed (a transpile or the unmutated verify).
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mutate as pbt  # noqa: E402  (parse, dump, fields: the text tree)

HERE = os.path.dirname(os.path.abspath(__file__))
G = os.path.join(HERE, "..", "golden")
P2 = "--pservers=127.0.0.1:6174,127.0.0.1:6175"
P3 = "--pservers=127.0.0.1:6174,127.0.0.1:6175,127.0.0.1:6176"
TR3 = "--trainers=10.0.0.1:6170,10.0.0.2:6170,10.0.0.3:6170"
SP = ["--mode=collective", "--collective-mode=single_process_multi_thread",
      "--optimizer=sgd:learning_rate=0.1"]

# mode: (case, main input, startup input, flags, forward-only input)
MODES = {
    "geo": ("transpile_geo_dense", "main", "startup", [P2, "--trainers=2", "--geo"]),
    "geo_sparse": ("transpile_geo_sparse", "two", "two.startup",
                   [P2, "--trainers=2", "--geo"]),
    "geo_sparse3": ("transpile_geo_sparse", "three", "three.startup",
                    [P3, "--trainers=2", "--trainer-id=1", "--a-sync-k-steps=5"]),
    "local_sgd": ("transpile_collective_local_sgd", "main", "startup",
                  ["--mode=collective", "--collective-mode=local_sgd", TR3,
                   "--endpoint=10.0.0.1:6170"]),
    "spmt": ("transpile_collective_spmt", "forward", "startup",
             SP + ["--trainers=10.0.0.1:6170", "--endpoint=10.0.0.1:6170"]),
    "remote": ("transpile_remote_prefetch", "main", "startup", [P2, "--trainers=2"]),
    "remote_async": ("transpile_remote_prefetch", "main", "startup",
                     [P2, "--trainers=2", "--async"]),
}

# attrs whose value is what an op computes (or where its data goes): a job
# with one of them changed on a computing op must not verify equal
SEMANTIC_ATTRS = {"scale", "bias", "epmap", "endpoints", "sections", "height_sections",
                  "table_names", "axis", "epsilon", "beta1", "beta2", "mu",
                  "use_nesterov", "bias_after_scale", "value", "k_steps"}
# ops whose loss is not a different computation when the input allows it
NEUTRAL_OPS = {"fetch", "feed", "c_sync_calc_stream", "c_sync_comm_stream",
               "send_barrier", "fetch_barrier", "c_gen_nccl_id", "c_comm_init",
               "gen_nccl_id", "c_comm_init_all"}
SAN = ("AddressSanitizer", "LeakSanitizer", "runtime error:", "UndefinedBehaviorSanitizer")

HUGE = [2**63, 2**63 - 1, -2**63, -2**63 - 1, 2**64, 10**23, -1, 0, 1, 1.5, 1e308, -1e308]
STRS = ["", "x", "-5", "0", "abc", "99999999999999999999999", "9223372036854775807",
        "-9223372036854775808", "1e9", "True", "False", "127.0.0.1:6174", "127.0.0.1:9999",
        "manifest.json", "../x", "nan"]
DIMS = ["-1", "0", "2147483648", "1099511627776", "9223372036854775807",
        "-9223372036854775808", "-7"]


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout)
        return p.returncode, p.stdout.decode("utf-8", "replace"), \
            p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return "timeout", "", ""


def build(pd, work, name):
    c, m, s, flags = MODES[name]
    main = os.path.join(G, c, "in", m + ".pbtxt")
    start = os.path.join(G, c, "in", s + ".pbtxt")
    if m == "forward":  # minimized by the flags first, as run.sh's job()
        ref = os.path.join(work, name + ".ref")
        rc, _, err = run([pd, "transpile"] + flags + ["--loss=mean_0.tmp_0",
                         "--stop-after=optimizer", "-s", start, main, "-o", ref], 120)
        if rc != 0:
            raise SystemExit("fuzz_job: %s: minimize: %s" % (name, err))
        main, start = os.path.join(ref, "main.pb"), os.path.join(ref, "startup.pb")
        flags = [f for f in flags if not f.startswith("--optimizer=")]
    out = os.path.join(work, name)
    rc, _, err = run([pd, "transpile"] + flags + ["-s", start, main, "-o", out], 120)
    if rc != 0:
        raise SystemExit("fuzz_job: %s: transpile: %s" % (name, err))
    return out, [main, start]


# ---- manifest.json as JSON ---------------------------------------------------

def paths(x, at=()):
    """Every (path, value) of a JSON tree, the root left out."""
    out = []
    items = x.items() if isinstance(x, dict) else enumerate(x) if isinstance(x, list) else []
    for k, v in items:
        out.append((at + (k,), v))
        out.extend(paths(v, at + (k,)))
    return out


def strings(x):
    return sorted({v for _, v in paths(x) if isinstance(v, str)})


def mutate_json(r, m):
    """One mutation of manifest m in place; returns (what, semantic)."""
    ps = paths(m)
    # most cases go where verify job reads: vars_info, flags, files, pservers
    hot = [p for p in ps if p[0][0] in ("vars_info", "flags", "files", "pservers",
                                         "distributed_mode", "mode", "role")]
    path, val = r.choice(hot if hot and r.random() < 0.85 else ps)
    parent = m
    for k in path[:-1]:
        parent = parent[k]
    key = path[-1]
    geo = path[0] == "vars_info"
    what = "/".join(str(k) for k in path)
    op = r.randrange(6)
    if op == 0:                                 # another type or an extreme
        new = r.choice(HUGE + [None, True, [], {}, "x", [1, 2]])
    elif op == 1:                               # a number as a string
        new = r.choice(STRS)
    elif op == 2 and isinstance(parent, dict):  # the key gone
        del parent[key]
        return "drop " + what, False
    elif op == 3 and isinstance(val, list):     # a list's length changed
        k = r.randrange(3)
        if k == 0 and val:
            val.pop(r.randrange(len(val)))
        elif k == 1 and val:
            val.append(val[r.randrange(len(val))])
        else:
            val.clear()
        return "list %s (%d)" % (what, k), False
    elif op == 4 and isinstance(val, str):      # another name of the job
        new = r.choice(strings(m))
    elif isinstance(val, (int, float)) and not isinstance(val, bool):
        new = r.choice([val + 1, val - 1, -val, val * 1000, 0])
    else:
        new = r.choice(HUGE + STRS)
    parent[key] = new
    if new == val:
        return "same " + what, False
    # a vars_info string changed for a well-formed one: the job differs
    sem = geo and isinstance(val, str) and isinstance(new, str)
    return "set %s = %r" % (what, new), sem


# ---- programs as text --------------------------------------------------------

def ops_of(root):
    out = []
    for b in pbt.fields(root, "blocks"):
        ops = pbt.fields(b[1], "ops")
        for i, o in enumerate(ops):
            out.append((b, i, o))
    return out


def op_type(o):
    t = pbt.fields(o[1], "type")
    return t[0][1].strip('"') if t else ""


def leaves(nodes, key):
    out = []
    for n in nodes:
        if isinstance(n[1], list):
            out.extend(leaves(n[1], key))
        elif n[0] == key:
            out.append(n)
    return out


def mutate_text(r, root, prog):
    """One mutation of a program's text tree; returns (what, semantic)."""
    all_ops = ops_of(root)
    if not all_ops:
        return None, False
    b, i, o = r.choice(all_ops)
    t = op_type(o)
    where = "%s op %d '%s'" % (prog, i, t)
    k = r.randrange(5)
    if k == 0:
        attrs = pbt.fields(o[1], "attrs")
        if not attrs:
            return None, False
        a = r.choice(attrs)
        name = pbt.fields(a[1], "name")[0][1].strip('"')
        vals = [f for f in a[1] if f[0] not in ("name", "type")]
        if not vals:
            return None, False
        f = r.choice(vals)
        old = f[1]
        if f[0] in ("i", "ints", "block_idx", "blocks_idx"):
            f[1] = r.choice(["0", "-1", "1", "2", "2147483647", "-2147483648", "99"])
        elif f[0] in ("l", "longs"):
            f[1] = r.choice(DIMS + ["1", "400", "499"])
        elif f[0] in ("f", "floats"):
            f[1] = r.choice(["0", "-1", "0.5", "2", "1e+30", "inf", "nan"])
        elif f[0] in ("b", "bools"):
            f[1] = "false" if old == "true" else "true"
        elif f[0] in ("s", "strings"):
            f[1] = '"%s"' % r.choice(STRS)
        if f[1] == old:
            return None, False
        sem = (name in SEMANTIC_ATTRS and f[0] not in ("block_idx",) and t not in NEUTRAL_OPS and
               prog.endswith(".pb") and "startup" not in prog)
        return "%s attr %s %s: %s -> %s" % (where, name, f[0], old, f[1]), sem
    if k == 1:
        slots = pbt.fields(o[1], "inputs") + pbt.fields(o[1], "outputs")
        args = [(s, a) for s in slots for a in pbt.fields(s[1], "arguments")]
        if not args:
            return None, False
        names = sorted({a[1] for _, _, oo in all_ops
                        for s in pbt.fields(oo[1], "inputs") + pbt.fields(oo[1], "outputs")
                        for a in pbt.fields(s[1], "arguments")})
        s, a = r.choice(args)
        old, a[1] = a[1], r.choice(names + ['""', '"nope"'])
        return ("%s arg %s -> %s" % (where, old, a[1]), False) if a[1] != old else (None, False)
    if k == 2:
        b[1].remove(o)
        # what it computes changes when another op of the program reads an
        # output (a dropped mean whose loss only a fetch reads does not)
        outs = {a[1] for s in pbt.fields(o[1], "outputs") for a in pbt.fields(s[1], "arguments")}
        read = any(a[1] in outs for _, _, oo in all_ops if oo is not o
                   for s in pbt.fields(oo[1], "inputs") for a in pbt.fields(s[1], "arguments"))
        sem = (read and t not in NEUTRAL_OPS and "startup" not in prog and
               b is all_ops[0][0])
        return "%s dropped" % where, sem
    if k == 3:
        b[1].insert(b[1].index(o) + 1, [o[0], [list(x) for x in o[1]]])
        return "%s repeated" % where, False
    vs = [v for bb in pbt.fields(root, "blocks") for v in pbt.fields(bb[1], "vars")]
    dims = [d for v in vs for d in leaves(v[1], "dims")]
    if not dims:
        return None, False
    d = r.choice(dims)
    old, d[1] = d[1], r.choice(DIMS)
    return ("%s dim %s -> %s" % (prog, old, d[1]), False) if d[1] != old else (None, False)


def mutate_program(r, pd, path, tmp):
    txt = os.path.join(tmp, "p.pbtxt")
    rc, _, _ = run([pd, "convert", path, txt], 60)
    if rc != 0:
        return None, False
    root = pbt.parse(open(txt).read())
    what, sem = mutate_text(r, root, os.path.basename(path))
    if not what:
        return None, False
    open(txt, "w").write("\n".join(pbt.dump(root)) + "\n")
    rc, _, _ = run([pd, "convert", "--binary", txt, path], 60)
    return (what, sem) if rc == 0 else (None, False)


def mutate_bytes(r, path):
    data = bytearray(open(path, "rb").read())
    if not data:
        return None
    if r.random() < 0.5:
        n = r.randrange(len(data))
        open(path, "wb").write(bytes(data[:n]))
        return "%s truncated to %d of %d bytes" % (os.path.basename(path), n, len(data))
    flips = []
    for _ in range(r.randrange(1, 4)):
        at = r.randrange(len(data))
        data[at] = r.randrange(256)
        flips.append(at)
    open(path, "wb").write(bytes(data))
    return "%s bytes %s changed" % (os.path.basename(path), flips)


# ---- one case ----------------------------------------------------------------

def one_case(a, base, r, folder, tmp, signed):
    """Mutates folder (a copy of a mode's job) once: (what, semantic,
    edited), edited the program whose bytes changed while its manifest
    entry was left (not SIGNED), else None."""
    files = sorted(f for f in os.listdir(folder))
    k = r.random()
    man = os.path.join(folder, "manifest.json")
    if k < 0.5:
        m = json.load(open(man))
        what, sem = mutate_json(r, m)
        json.dump(m, open(man, "w"), indent=r.choice([None, 2]))
        return "manifest " + what, sem, None
    if k < 0.6:
        path = os.path.join(folder, r.choice(files))
        old = pbt.sha256(path)
        what, sem = mutate_bytes(r, path), False
    else:
        prog = r.choice([f for f in files if f.endswith(".pb")])
        path = os.path.join(folder, prog)
        old = pbt.sha256(path)
        what, sem = mutate_program(r, a.pdtrans, path, tmp)
    if not path.endswith(".pb") or pbt.sha256(path) == old:
        return what, sem, None
    if signed:
        pbt.resign(path, old)
        return what, sem, None
    return (what + " (entry left)") if what else what, sem, os.path.basename(path)


def judge(rc, out, err, folder, sem, edited):
    if rc == "timeout":
        return "timeout"
    if any(s in err for s in SAN):
        return "sanitizer report"
    if rc not in (0, 1):
        return "exit status %s" % rc
    errs = [ln for ln in err.splitlines() if ln.startswith("pdtrans: error: ")]
    if rc == 1 and len(errs) != 1:
        return "exit 1 with %d error lines" % len(errs)
    if rc == 1 and folder not in errs[0] and "differ" not in errs[0]:
        return "the error names no file of the job"
    if edited and (rc != 1 or not errs[0].startswith(
            "pdtrans: error: %s: sha256 differs" % os.path.join(folder, edited))):
        return "%s edited, not reported as edited" % edited
    if rc == 0 and sem:
        return "exit 0 for a job that computes something else"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pdtrans")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--case", type=int, default=-1)
    ap.add_argument("--keep")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    a.pdtrans = os.path.abspath(a.pdtrans)
    modes = a.modes.split(",")
    work = tempfile.mkdtemp(prefix="pdtrans-fuzz-job-")
    findings, stats = [], {}
    try:
        jobs = {}
        for name in modes:
            folder, inputs = build(a.pdtrans, work, name)
            rc, out, err = run([a.pdtrans, "verify", "job", folder] + inputs, a.timeout)
            if rc != 0:
                print("fuzz_job: %s does not verify equal unmutated (status %s): %s"
                      % (name, rc, err.strip()))
                return 2
            jobs[name] = (folder, inputs)
        todo = [a.case] if a.case >= 0 else range(a.cases)
        for n in todo:
            r = random.Random(a.seed * 1000003 + n)
            name = modes[r.randrange(len(modes))]
            base, inputs = jobs[name]
            folder = os.path.join(work, "case")
            shutil.rmtree(folder, ignore_errors=True)
            shutil.copytree(base, folder)
            signed = random.Random(a.seed * 1000003 + n + 0x51a).random() >= 0.25
            what, sem, edited = one_case(a, base, r, folder, work, signed)
            if not what:
                stats["no mutation"] = stats.get("no mutation", 0) + 1
                continue
            rc, out, err = run([a.pdtrans, "verify", "job", folder] + inputs, a.timeout)
            stats[rc] = stats.get(rc, 0) + 1
            bad = judge(rc, out, err, folder, sem, edited)
            if a.v or bad:
                print("case %d (%s): %s: status %s%s" % (n, name, what, rc,
                                                         ": FINDING: " + bad if bad else ""))
                if bad:
                    print("  " + "\n  ".join((err or out).strip().splitlines()[-4:]))
            if bad:
                findings.append(n)
            if a.keep and (bad or a.case >= 0):   # --case: kept whatever it gives
                if True:
                    dst = os.path.join(a.keep, "case-%d-%d" % (a.seed, n))
                    shutil.rmtree(dst, ignore_errors=True)
                    shutil.copytree(folder, dst)
                    ins = []    # the inputs too: a minimized one is in work
                    os.makedirs(dst + ".in", exist_ok=True)
                    for k, f in enumerate(inputs):
                        ins.append(os.path.join(dst + ".in", "%d-%s" % (k, os.path.basename(f))))
                        shutil.copy(f, ins[-1])
                    open(dst + ".inputs", "w").write(" ".join(ins) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("fuzz_job: seed %d, %s cases over %s: statuses %s; %d findings%s"
          % (a.seed, len(todo), ",".join(modes),
             ", ".join("%s: %d" % (k, v) for k, v in sorted(stats.items(), key=str)),
             len(findings), (" (cases %s)" % findings[:20]) if findings else ""))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
