#!/usr/bin/env python3
"""export_order.py (PDTRANS, SHARED in env; defaults ./pdtrans, ../shared)

Checks `pdtrans inference`'s attr order for 1.4-2.3 targets (research 4z12)
against a Python model of libstdc++'s std::unordered_map written apart from
pdtrans's C (src/passes/era/hash_table.c): gcc 4.8's policy (11 buckets at
construction, rehash when n+1 >= _M_next_resize) for 1.4-2.2, HT_GCC8_LIB5's
(1 bucket, gcc 5/6's resize rule: 3, 7, 17, 37, 79) for 2.3.  The histories:
an input op's attrs as read (is_test the pass adds after) re-inserted
twice, BLOCK attrs last each time (load_inference_model's read, and the
ProgramDesc core.prune rebuilds); pattern A's elementwise_add its
Operator.__init__ history (axis given) re-inserted once; feed and fetch
their prepend_feed_ops / append_fetch_ops history ({col}), no re-read.
Runs the three real models of SHARED/testdata-real/params at several
versions and prints one line per run; exit 1 on any mismatch.
"""
import os, re, subprocess, sys, tempfile

M = (1 << 64) - 1
MUL = (0xc6a4a793 << 32) + 0x5bd1e995


def _sm(v):
    return v ^ (v >> 47)


def hb(s):
    """std::hash<std::string> (_Hash_bytes, 64-bit, seed 0xc70f6907)."""
    b = s.encode()
    n = len(b)
    al = n & ~7
    h = (0xc70f6907 ^ ((n * MUL) & M)) & M
    for i in range(0, al, 8):
        d = int.from_bytes(b[i:i + 8], 'little')
        h ^= (_sm((d * MUL) & M) * MUL) & M
        h = (h * MUL) & M
    if n & 7:
        h ^= int.from_bytes(b[al:], 'little')
        h = (h * MUL) & M
    return _sm((_sm(h) * MUL) & M)


PRIMES = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83,
          89, 97, 103, 109, 113, 127, 137, 139, 149, 157, 167, 179, 193, 199, 211, 227, 241, 257]
FAST = {'gcc48': [2, 2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11],
        'lib5': [2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11, 13, 13]}


class Map:
    def __init__(self, pol):
        self.pol, self.lst = pol, []
        if pol == 'gcc48':
            self.nb = self.nxt = self.bkt(10)
        else:
            self.nb, self.nxt = 1, 0

    def bkt(self, n):
        fast = FAST[self.pol]
        self.nxt = fast[n] if n < len(fast) else next(p for p in PRIMES if p >= n)
        return self.nxt

    @staticmethod
    def link(lst, k, nb):
        # before the first node of its bucket, or at the list's front
        b = hb(k) % nb
        for i, x in enumerate(lst):
            if hb(x) % nb == b:
                lst.insert(i, k)
                return
        lst.insert(0, k)

    def insert(self, k):
        if k in self.lst:
            return
        n = len(self.lst)
        if n + 1 >= self.nxt:
            if n + 1 >= self.nb:
                nb = self.bkt(max(n + 2, self.nb * 2))
                old, self.lst, self.nb = self.lst, [], nb
                for x in old:
                    self.link(self.lst, x, nb)
            else:
                self.nxt = self.nb
        self.link(self.lst, k, self.nb)


def order(hist, pol):
    m = Map(pol)
    for k in hist:
        m.insert(k)
    return m.lst


def reread(lst, pol, block=()):
    return order([k for k in lst if k not in block] + [k for k in lst if k in block], pol)


def python_hist(proto, names):
    """Operator.__init__: given (the proto's first attr here) in proto order,
    op_role, op_namescope, op_callstack, the other defaults, op_role_var,
    op_device, with_quant_attr (op_namescope and op_callstack count even
    where pdtrans writes none)."""
    h = proto[:1] + ['op_role', 'op_namescope', 'op_callstack'] + proto[1:]
    h += ['op_role_var', 'op_device', 'with_quant_attr']
    return [k for k in h if k in names or k in ('op_namescope', 'op_callstack')]


ELT1 = "axis use_mkldnn x_data_format y_data_format".split()
ELT2 = ELT1 + "use_quantizer mkldnn_data_type Scale_x Scale_y Scale_out".split()


def ops(pdtrans, path):
    t = subprocess.run([pdtrans, 'convert', '--text', path, '-'], capture_output=True,
                       text=True, check=True).stdout
    res = []
    for m in re.finditer(r'\n  ops \{\n(.*?)\n  \}', t, re.S):
        body = '\n' + m.group(1)
        ty = re.search(r'\n    type: "([^"]*)"', body).group(1)
        attrs = re.findall(r'\n    attrs \{\n      name: "([^"]*)"\n      type: (\w+)', body)
        outs = re.findall(r'\n    outputs \{\n      parameter: "[^"]*"\n      arguments: "([^"]*)"',
                          body)
        res.append((ty, [a for a, _ in attrs], {a for a, k in attrs if k in ('BLOCK', 'BLOCKS')},
                    tuple(outs)))
    return res


def check(pdtrans, inp, out, era):
    pol = 'lib5' if era == 203 else 'gcc48'
    src = {(t, o): (n, b) for t, n, b, o in ops(pdtrans, inp)}
    good = bad = 0
    for t, n, b, o in ops(pdtrans, out):
        if t in ('feed', 'fetch'):
            exp = [k for k in order(python_hist(['col'], n), pol) if k in n]
        elif (t, o) in src:
            f, fb = src[(t, o)]
            f = f + [k for k in n if k not in f]
            exp = reread(reread(f, pol, fb), pol, fb)
        else:
            proto = ELT1 if era < 200 else ELT2
            exp = reread([k for k in order(python_hist(proto, n), pol) if k in n], pol, b)
        if exp == n:
            good += 1
        else:
            bad += 1
            print('  mismatch: %s %s\n    got %s\n    want %s' % (t, o, n, exp))
    return good, bad


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    pdtrans = os.path.abspath(os.environ.get('PDTRANS', os.path.join(root, 'pdtrans')))
    shared = os.environ.get('SHARED', os.path.join(os.path.dirname(root), 'shared'))
    P = os.path.join(shared, 'testdata-real', 'params')
    runs = [('resnet_cifar10_book', '__model__', [], v) for v in
            ('1.4', '1.5', '1.8', '2.0', '2.2', '2.3')]
    runs += [('gesiannet_gesture', '__model__', [], v) for v in ('1.6', '1.8', '2.3')]
    runs += [('ppocr_mobile_v2_cls', 'inference.pdmodel',
              ['--model-filename=inference.pdmodel', '--params-filename=inference.pdiparams'], v)
             for v in ('2.0', '2.3')]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, model, extra, v in runs:
            d = os.path.join(P, name)
            params = os.path.join(d, 'inference.pdiparams') if extra else d
            out = os.path.join(tmp, name + v)
            subprocess.run([pdtrans, 'inference', '-q', '--paddle-version=' + v,
                            '--params=' + params] + extra + [os.path.join(d, model), '-o', out],
                           check=True)
            major, minor = v.split('.')
            good, bad = check(pdtrans, os.path.join(d, model), os.path.join(out, model),
                              int(major) * 100 + int(minor))
            print('%s %s: %d ops in the modelled order, %d not' % (name, v, good, bad))
            failed += bad
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
