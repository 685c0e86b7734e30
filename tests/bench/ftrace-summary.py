#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""ftrace-summary.py TRACE: sum an ftrace function_graph trace (taken with
funcgraph-tail, so that every closing brace names its function) per
function: calls, total, mean and longest duration. Durations include time
spent waiting (for a lock, for I/O) and in the functions called."""
import collections
import re
import sys

DURATION = re.compile(r'([0-9.]+) us')
FUNCTION = re.compile(r'\b(hc_\w+)')


def main(path):
    total = collections.Counter()
    calls = collections.Counter()
    longest = collections.Counter()
    with open(path, errors='replace') as trace:
        for line in trace:
            cols = line.split('|')
            if len(cols) < 2:
                continue
            duration = DURATION.search(cols[-2])
            body = cols[-1].strip()
            function = FUNCTION.search(body)
            # A call ends on "} /* name */" or, for a leaf, "name();".
            if not duration or not function or not (
                    body.startswith('}') or body.endswith(');')):
                continue
            us = float(duration.group(1))
            name = function.group(1)
            total[name] += us
            calls[name] += 1
            longest[name] = max(longest[name], us)
    print('%-24s %8s %10s %10s %9s' % ('function', 'calls', 'total ms',
                                       'mean us', 'max ms'))
    for name, us in total.most_common():
        print('%-24s %8d %10.1f %10.1f %9.1f' % (
            name, calls[name], us / 1000, us / calls[name],
            longest[name] / 1000))


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
