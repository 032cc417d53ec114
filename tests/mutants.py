#!/usr/bin/env python3
"""make mutants: a mutation check of the test suite (issue 35 point 5).

Each mutant in tests/mutants.txt is a small injected bug: a file, the exact
text to find there (it must occur exactly once, or name which occurrence),
its replacement, and the tests that must catch it.  For each mutant this
script writes the mutated file into a scratch copy of the tree (never the
working tree), rebuilds what the tests need there, runs the tests in order
until one fails, restores the file and prints whether the mutant was caught
(and by which test) or survived.  It exits 1 if any mutant survived, did not
build, or no longer applies (its text is gone: update the list).

The scratch copy is build/mutants/tree (the sources, tests, testdata, proto,
man and the Makefile, plus the objects of build/ so that only what a mutant
touches is recompiled); build/mutants/shared links to ../shared, so the
tree's ../shared is the real one.  Logs: build/mutants/log/N.log.

  python3 tests/mutants.py [NAME...]     all mutants, or those named
  python3 tests/mutants.py --check       only check that every mutant applies
Tests a mutant names:
  unit:test_x     build/tests/test_x (PDT_BIN set), the Check suite
  golden:PATTERN  the golden cases matching the shell pattern(s), comma-separated
  script:FILE     sh FILE with PDTRANS and BUILD set (tests/real.sh, tests/regen/run.sh)
"""
import fnmatch
import os
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "build", "mutants")
TREE = os.path.join(OUT, "tree")
COPIED = ["src", "proto", "tests", "testdata", "man", "Makefile"]
TIMEOUT = int(os.environ.get("MUTANT_TIMEOUT", "900"))


def parse(path):
    """Blocks of 'key: value' lines separated by blank lines; '#' comments."""
    mutants, cur = [], {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("#"):
                continue
            if not line.strip():
                if cur:
                    mutants.append(cur)
                cur = {}
                continue
            key, sep, val = line.partition(": ")
            if not sep or key not in ("name", "file", "find", "occurrence", "replace", "tests"):
                sys.exit("mutants: %s:%d: expected 'name|file|find|occurrence|replace|tests: VALUE'"
                         % (path, n))
            if key in cur:
                sys.exit("mutants: %s:%d: '%s' given twice" % (path, n, key))
            cur[key] = val
            cur.setdefault("line", n)
    if cur:
        mutants.append(cur)
    for m in mutants:
        for key in ("name", "file", "find", "replace", "tests"):
            if key not in m:
                sys.exit("mutants: %s:%d: mutant without '%s'" % (path, m["line"], key))
    names = [m["name"] for m in mutants]
    dup = {x for x in names if names.count(x) > 1}
    if dup:
        sys.exit("mutants: names given twice: %s" % ", ".join(sorted(dup)))
    return mutants


def mutate(text, m):
    """The text with the mutant applied, or an error string."""
    count = text.count(m["find"])
    want = int(m.get("occurrence", "0"))
    if want == 0 and count != 1:
        return None, "'find' occurs %d times in %s (must be once, or give occurrence: N)" % (
            count, m["file"])
    if want > count:
        return None, "'find' occurs %d times in %s, not %d" % (count, m["file"], want)
    at = -1
    for _ in range(max(want, 1)):
        at = text.index(m["find"], at + 1)
    return text[:at] + m["replace"] + text[at + len(m["find"]):], None


def run(cmd, log, env=None):
    with open(log, "a", encoding="utf-8") as f:
        f.write("$ %s\n" % " ".join(cmd))
        f.flush()
        # Its own process group, so that a timeout ends the test's children too.
        proc = subprocess.Popen(cmd, cwd=TREE, stdout=f, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
        try:
            return proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            f.write("timed out after %d s\n" % TIMEOUT)
            return -1


def make_tree():
    os.makedirs(OUT, exist_ok=True)
    if os.path.exists(TREE):
        shutil.rmtree(TREE)
    os.makedirs(TREE)
    for p in COPIED:
        src = os.path.join(ROOT, p)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(TREE, p), symlinks=True)
        else:
            shutil.copy2(src, os.path.join(TREE, p))
    build = os.path.join(ROOT, "build")
    for p in ("gen", "obj", "tests", "libpdtrans.a"):
        src = os.path.join(build, p)
        dst = os.path.join(TREE, "build", p)
        if os.path.isdir(src):
            shutil.copytree(src, dst, symlinks=True)
        elif os.path.exists(src):
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(src, dst)
    shared = os.path.join(os.path.dirname(ROOT), "shared")
    link = os.path.join(OUT, "shared")
    if os.path.lexists(link):
        os.remove(link)
    if os.path.isdir(shared):
        os.symlink(os.path.realpath(shared), link)


def targets(tests):
    t = ["pdtrans"]
    for test in tests:
        kind, _, arg = test.partition(":")
        if kind == "unit":
            t.append("build/tests/" + arg)
        elif kind == "script" and "regen" in arg:
            t.append("build/tests/regen")
        elif kind == "script" and "real" in arg:
            t.append("build/bench/pbbare")
    return t


def golden_cases(patterns):
    cases = sorted(d for d in os.listdir(os.path.join(TREE, "tests", "golden"))
                   if os.path.isfile(os.path.join(TREE, "tests", "golden", d, "cmd")))
    out = []    # in the order of the patterns: the likeliest catchers first
    for p in patterns.split(","):
        out += [c for c in cases if fnmatch.fnmatch(c, p) and c not in out]
    return out


def test_cmds(test):
    """The commands of one test, in order: a golden test runs case by case,
    so that it stops at the first case that fails."""
    kind, _, arg = test.partition(":")
    env = dict(os.environ, PDTRANS="./pdtrans", PDT_BIN="./pdtrans", BUILD="build")
    env.pop("CI", None)
    if kind == "unit":
        return [(["build/tests/" + arg], env)]
    if kind == "golden":
        cases = golden_cases(arg)
        if not cases:
            sys.exit("mutants: no golden case matches '%s'" % arg)
        return [(["sh", "tests/golden/run.sh", c], env) for c in cases]
    if kind == "script":
        return [(["sh", arg], env)]
    sys.exit("mutants: unknown test kind '%s'" % test)


def main():
    mutants = parse(os.path.join(ROOT, "tests", "mutants.txt"))
    if sys.argv[1:] == ["--check"]:
        stale = 0
        for m in mutants:
            with open(os.path.join(ROOT, m["file"]), encoding="utf-8") as f:
                err = mutate(f.read(), m)[1]
            if err:
                stale += 1
                print("mutants: STALE %s: %s" % (m["name"], err))
            for test in m["tests"].split():
                if test.partition(":")[0] not in ("unit", "golden", "script"):
                    stale += 1
                    print("mutants: %s: unknown test kind '%s'" % (m["name"], test))
        print("mutants: %d listed, %d do not apply" % (len(mutants), stale))
        return 1 if stale else 0
    if len(sys.argv) > 1:
        unknown = set(sys.argv[1:]) - {m["name"] for m in mutants}
        if unknown:
            sys.exit("mutants: no mutant named %s" % ", ".join(sorted(unknown)))
        mutants = [m for m in mutants if m["name"] in sys.argv[1:]]
    make_tree()
    logdir = os.path.join(OUT, "log")
    shutil.rmtree(logdir, ignore_errors=True)
    os.makedirs(logdir)
    jobs = os.environ.get("MUTANT_JOBS", "2")
    print("mutants: %d in tests/mutants.txt, scratch tree %s" % (len(mutants), TREE), flush=True)
    base_log = os.path.join(logdir, "baseline.log")
    if run(["nice", "make", "-j" + jobs, "pdtrans"], base_log) != 0:
        sys.exit("mutants: the unmutated tree does not build (see %s)" % base_log)
    caught, bad = [], []
    for i, m in enumerate(mutants, 1):
        log = os.path.join(logdir, "%02d-%s.log" % (i, m["name"]))
        path = os.path.join(TREE, m["file"])
        with open(path, encoding="utf-8") as f:
            pristine = f.read()
        text, err = mutate(pristine, m)
        if err:
            print("mutants: STALE %s: %s" % (m["name"], err), flush=True)
            bad.append(m["name"])
            continue
        start = time.time()
        tests = m["tests"].split()
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            if run(["nice", "make", "-j" + jobs] + targets(tests), log) != 0:
                print("mutants: NO BUILD %s: the mutant does not compile (see %s)"
                      % (m["name"], log), flush=True)
                bad.append(m["name"])
                continue
            killer = timeout = None
            for test in tests:
                for cmd, env in test_cmds(test):
                    rc = run(["nice"] + cmd, log, env)
                    if rc == -1:
                        timeout = " ".join(cmd)
                    elif rc != 0:
                        killer = test if len(cmd) < 3 else "golden:" + cmd[-1]
                    if rc != 0:
                        break
                if killer or timeout:
                    break
        finally:
            with open(path, "w", encoding="utf-8") as f:
                f.write(pristine)
        secs = time.time() - start
        if timeout:
            # Under load a slow test is not a caught mutant: say so.
            bad.append(m["name"])
            print("mutants: TIMEOUT  %-28s %s ran over %d s (MUTANT_TIMEOUT)"
                  % (m["name"], timeout, TIMEOUT), flush=True)
        elif killer:
            caught.append(m["name"])
            print("mutants: caught   %-28s by %s (%.0f s)" % (m["name"], killer, secs), flush=True)
        else:
            bad.append(m["name"])
            print("mutants: SURVIVED %-28s %s: %r -> %r; ran %s (%.0f s)"
                  % (m["name"], m["file"], m["find"], m["replace"], m["tests"], secs), flush=True)
    print("mutants: %d caught, %d survived or not applied%s"
          % (len(caught), len(bad), (": " + " ".join(bad)) if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
