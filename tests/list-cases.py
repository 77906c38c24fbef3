#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Prints the GTest paths a test program registers, one a line, in order.

The C file is the one place a case is named; meson.build runs this at
configure time to register one meson test per case. Two forms are read:
  g_test_add("/full/path", ...) or g_test_add_func("/full/path", ...)
  #define ADD(name, ...) g_test_add("/prefix/" name, ...)  then  ADD("case", ...)
"""
import re
import sys

LITERAL = re.compile(r'\bg_test_add(?:_func)?\s*\(\s*"(/[^"]+)"')
MACRO = re.compile(r'#\s*define\s+(\w+)\s*\([^)]*\)\s*(?:\\\s*)?g_test_add(?:_func)?\s*\(\s*"(/[^"]*)"\s*\w+')


def cases(text):
    # join continued lines so a macro body may span them
    text = text.replace('\\\n', ' ')
    prefixes = dict(MACRO.findall(text))
    found = []
    for line in text.splitlines():
        if re.match(r'\s*#\s*define', line):
            continue
        found += LITERAL.findall(line)
        for name, prefix in prefixes.items():
            found += [prefix + c for c in re.findall(r'\b' + name + r'\s*\(\s*"([^"]+)"', line)]
    return found


if __name__ == '__main__':
    with open(sys.argv[1], encoding='utf-8') as f:
        paths = cases(f.read())
    if not paths:
        sys.exit(f'{sys.argv[1]}: no test cases found')
    print('\n'.join(paths))
