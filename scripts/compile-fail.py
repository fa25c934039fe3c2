#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check that misuses of the Rust abstractions do not compile.

    compile-fail.py O_DIR RUSTC TEST.rs...

Each TEST.rs (tests/compile-fail/) is compiled as a crate of its own against
the kernel crate built in O_DIR, with the very command line Kbuild used for
block/bio_cache.rs there (from block/.bio_cache.o.cmd), code generation
included, so that errors raised at monomorphization time count. It must
fail, and its errors must contain the text of its "// error: " line. As a
control, block/bio_cache.rs itself must compile through the same command.

Prints one "name|failure" line per check, the failure empty when it passed.
"""

import os
import re
import shlex
import subprocess
import sys
import tempfile


def rustc_command(odir, rustc):
    """The rustc command line of block/bio_cache.o, as a list."""
    with open(os.path.join(odir, 'block/.bio_cache.o.cmd')) as f:
        for line in f:
            if line.startswith('savedcmd_block/bio_cache.o := '):
                cmd = line.split(':= ', 1)[1]
                break
        else:
            raise SystemExit(f'no command for block/bio_cache.o in {odir}')
    # Kbuild's saved commands double '$'; the first command is rustc's.
    cmd = cmd.replace('$$', '$').split(';', 1)[0]
    args = shlex.split(cmd)
    while '=' in args[0] and not args[0].startswith('-'):
        args.pop(0)  # environment assignments
    args[0] = rustc
    return [a for a in args if not a.startswith('--emit=')]


def compile_crate(base, odir, src, out):
    args = [out if a.endswith('/block/bio_cache.rs') else a for a in base]
    args = [src if a == out else a for a in args]
    i = args.index('--crate-name')
    args[i + 1] = 'compile_fail'
    args.append(f'--emit=obj={out}.o')
    # As Kbuild runs it: the kernel uses unstable features of a stable rustc.
    env = dict(os.environ, RUSTC_BOOTSTRAP='1')
    r = subprocess.run(args, cwd=odir, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return r.returncode, r.stdout


def main():
    odir, rustc, tests = sys.argv[1], sys.argv[2], sys.argv[3:]
    base = rustc_command(odir, rustc)
    if not any(a.endswith('/block/bio_cache.rs') for a in base):
        raise SystemExit('block/bio_cache.o was not compiled from block/bio_cache.rs')
    src_of_control = next(a for a in base if a.endswith('/block/bio_cache.rs'))
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, 'out')
        rc, log = compile_crate(base, odir, src_of_control, out)
        ok = rc == 0
        print(f'compile-fail: the control (block/bio_cache.rs) compiles|'
              f'{"" if ok else "exit " + str(rc) + ": " + log.strip().splitlines()[0]}')
        for test in tests:
            name = os.path.basename(test)
            with open(test) as f:
                want = re.search(r'^// error: (.*)$', f.read(), re.M)
            if not want:
                print(f'compile-fail: {name}|no "// error: " line')
                continue
            rc, log = compile_crate(base, odir, os.path.abspath(test), out)
            with open(os.path.join(tmp, name + '.log'), 'w') as f:
                f.write(log)
            if rc == 0:
                failure = 'compiled'
            elif want.group(1) not in log:
                first = next((l for l in log.splitlines() if l.startswith('error')), 'no error line')
                failure = f'failed, but not with "{want.group(1)}": {first}'
            else:
                failure = ''
            print(f'compile-fail: {name}|{failure}')


if __name__ == '__main__':
    main()
