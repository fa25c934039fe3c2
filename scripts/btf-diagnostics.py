#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Sort what pahole said while making a kernel's BTF into known and new.

    btf-diagnostics.py BUILD_LOG VMLINUX [LLVM_SUFFIX]

pahole 1.24 (Debian 12's dwarves) prints a line for each DWARF construct it
does not handle. On a kernel built by clang 22 with Rust, two kinds of units
have such constructs, and neither is in the BTF of the C code:

  - assembly units (DW_LANG_Mips_Assembler): clang describes their labels
    with DW_TAG_label in DWARF 5;
  - Rust units (DW_LANG_Rust): Rust enums, generics and methods, which
    --lang_exclude=rust then leaves out of BTF.

Each line that names a DIE (@ <0x...> or a function's offset) is placed in
its compile unit (llvm-dwarfdump's unit headers); it is known if the unit
is of assembly or Rust. A line that names no DIE is known
if it follows a known one and is about one of the tags those units have
(label, variant_part, template_type_parameter). resolve_btfids' "unresolved
symbol module" is known: there is no BTF for struct module in a kernel
without modules. Prints "known N" and each other line; exits 1 if any.
"""

import bisect
import re
import subprocess
import sys

DIAG = re.compile(r'^(die__|tag__|btf_encoder__|cu__|dwarf_loader__|pahole|libbpf|Error emitting BTF)')
OFFSET = re.compile(r'(?:@ <|function )(0x[0-9a-f]+)')
FOLLOWERS = re.compile(r'^die__process_\w+: tag not supported 0x[0-9a-f]+ '
                       r'\((label|variant_part|template_type_parameter)\)!$')
KNOWN_LANGS = ('DW_LANG_Mips_Assembler', 'DW_LANG_Rust')
SUFFIX = ''


def units(vmlinux):
    """[(start, end, language, name)] of the compile units of .debug_info,
    from llvm-dwarfdump's unit headers and top-level DIEs."""
    out = subprocess.run(['llvm-dwarfdump' + SUFFIX, '--debug-info', '-r', '0', vmlinux],
                         capture_output=True, text=True, check=True).stdout
    found, unit = [], None
    for line in out.splitlines():
        m = re.match(r'^(0x[0-9a-f]+): Compile Unit: .*\(next unit at (0x[0-9a-f]+)\)', line)
        if m:
            unit = [int(m.group(1), 16), int(m.group(2), 16), '?', '?']
            found.append(unit)
            continue
        m = re.search(r'DW_AT_language\s+\((\w+)\)', line)
        if m and unit and unit[2] == '?':
            unit[2] = m.group(1)
        m = re.search(r'DW_AT_name\s+\("([^"]*)"\)', line)
        if m and unit and unit[3] == '?':
            unit[3] = m.group(1)
    return found


def main():
    global SUFFIX
    log, vmlinux = sys.argv[1], sys.argv[2]
    SUFFIX = sys.argv[3] if len(sys.argv) > 3 else ''
    lines = [l.rstrip('\n') for l in open(log, errors='replace')]
    diags = [l for l in lines if DIAG.match(l) or l.startswith('WARN: resolve_btfids')]
    if not diags:
        print('known 0')
        return 0
    table = None
    known, new, previous_known = 0, [], False
    for l in diags:
        if l == 'WARN: resolve_btfids: unresolved symbol module':
            known += 1
            continue
        m = OFFSET.search(l)
        if m:
            if table is None:
                table = units(vmlinux)
                starts = [u[0] for u in table]
            die = int(m.group(1), 16)
            unit = table[bisect.bisect_right(starts, die) - 1]
            lang, name = unit[2], unit[3]
            previous_known = unit[0] <= die < unit[1] and lang in KNOWN_LANGS
            if previous_known:
                known += 1
            else:
                new.append(f'{l}  [unit {name}, {lang}]')
        elif previous_known and FOLLOWERS.match(l):
            known += 1
        else:
            new.append(l)
    print(f'known {known}')
    for l in new:
        print(l)
    return 1 if new else 0


if __name__ == '__main__':
    sys.exit(main())
