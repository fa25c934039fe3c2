#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What a distro-shaped variant's .config changed of Debian's config.

    config-diff.py SRC DEBIAN_PACKAGE_CONFIG DOT_CONFIG FRAGMENT...

Reads Debian's config as the package has it (modules included) and the
variant's final .config, and prints every option whose value differs, in
groups:

  - set by the variant's fragments (scripts/configs/);
  - modules: Debian builds them as modules (=m), the guest loads none;
  - the toolchain: clang, lld and rustc here, GCC and binutils in Debian;
  - defined in block/: how the block layer itself is compiled;
  - everything else Kconfig changed as a consequence (the options of the
    modules that are off, and what they selected), counted per directory.

The first lines are a summary, one count per group.
"""

import collections
import os
import re
import sys

LINE = re.compile(r'^(CONFIG_[A-Za-z0-9_]+)=(.*)$|^# (CONFIG_[A-Za-z0-9_]+) is not set$')
TOOLCHAIN = re.compile(r'^CONFIG_(CC_|GCC_|CLANG_|AS_|LD_|LLD_|RUSTC_|PAHOLE_|TOOLS_SUPPORT_|'
                       r'BINDGEN_|RUST_IS_AVAILABLE|FTRACE_MCOUNT_USE_|HAVE_.*GCC|'
                       r'GCC_ASM_|ARCH_HAS_CC_|FUNCTION_ALIGNMENT|HAVE_OBJTOOL_NOP_MCOUNT)')


def read(path):
    opts = {}
    with open(path) as f:
        for line in f:
            m = LINE.match(line.strip())
            if m:
                if m.group(1):
                    opts[m.group(1)] = m.group(2)
                else:
                    opts[m.group(3)] = 'n'
    return opts


def defined_in(src):
    """CONFIG_X -> the directory of the Kconfig file that defines X."""
    where = {}
    for root, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if not d.startswith('.')]
        for name in files:
            if not name.startswith('Kconfig'):
                continue
            path = os.path.join(root, name)
            with open(path, errors='replace') as f:
                for line in f:
                    m = re.match(r'^\s*(?:menu)?config\s+([A-Za-z0-9_]+)\s*$', line)
                    if m:
                        where.setdefault('CONFIG_' + m.group(1),
                                         os.path.relpath(root, src))
    return where


def main():
    src, debian, final = sys.argv[1], read(sys.argv[2]), read(sys.argv[3])
    ours = {}
    for frag in sys.argv[4:]:
        ours.update(read(frag))
    where = defined_in(src)
    groups = collections.OrderedDict((k, []) for k in (
        'set by the fragments', 'Debian modules (=m), turned off', 'the toolchain',
        'defined in block/', 'other consequences'))
    for opt in sorted(set(debian) | set(ours)):
        before, after = debian.get(opt, 'n'), final.get(opt, 'n')
        if before == after:
            continue
        line = f'{opt}: Debian {before}, here {after}'
        if opt in ours:
            groups['set by the fragments'].append(line)
        elif before == 'm':
            groups['Debian modules (=m), turned off'].append(line)
        elif TOOLCHAIN.match(opt):
            groups['the toolchain'].append(line)
        elif where.get(opt, '').split('/')[0] == 'block':
            groups['defined in block/'].append(line)
        else:
            groups['other consequences'].append(f'{line} ({where.get(opt, "?")})')
    print('# ' + ', '.join(f'{name}: {len(lines)}' for name, lines in groups.items()))
    for name, lines in groups.items():
        print(f'\n## {name} ({len(lines)})')
        if name == 'other consequences':
            per_dir = collections.Counter(l.rsplit('(', 1)[1].rstrip(')').split('/')[0]
                                          for l in lines)
            print('# per directory: ' + ', '.join(f'{d} {n}' for d, n in per_dir.most_common()))
        print('\n'.join(lines))


if __name__ == '__main__':
    main()
