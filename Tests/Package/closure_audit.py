#!/usr/bin/env python3
"""Finds closures that Swift 6.3.1 merges by mistake in a test target's SILGen output.

Inside a closure, a closure literal in a `#expect(...)` argument and a later closure literal of the same type can be
given the same symbol; both call sites then run the first body (a filter outside the macro runs the predicate from
inside it). Such a test checks something other than what it says. In SILGen each explicit closure literal is
referenced once, by the code that creates it, so an explicit closure (a symbol ending in `fU<n>_`) referenced from
two places in one function body is that bug. Local functions, `defer` bodies (emitted at every exit) and the
testing library's macro accessors are referenced several times by design and are not reported.

Usage: closure_audit.py FILE.sil...   (exit 1 when any closure is shared)
"""
import collections
import re
import sys

shared = 0
for path in sys.argv[1:]:
    current = None
    references = collections.defaultdict(list)
    with open(path, errors="replace") as sil:
        for line in sil:
            definition = re.match(r"^sil .*?@(\S+) :", line)
            if definition:
                current = definition.group(1)
                continue
            reference = re.search(r"function_ref @(\S+) ", line)
            if reference and current:
                references[reference.group(1)].append(current)
    for name, users in references.items():
        if len(users) < 2 or not re.search(r"fU\d*_$", name):
            continue
        if any(word in name for word in ("accessor", "testContentRecord", "$defer")):
            continue
        shared += 1
        print(f"{path}: closure {name} is referenced {len(users)} times (from {users[0]})")
print(f"closure audit: {shared} shared closure(s) in {len(sys.argv) - 1} target(s)")
sys.exit(1 if shared else 0)
