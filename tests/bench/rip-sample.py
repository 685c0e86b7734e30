#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""rip-sample.py: a sampling profiler for a TCG guest, from the host.

In a TCG guest perf's software clock samples land in the idle loop while
/proc/stat shows the CPU busy, so the guest cannot profile itself. QEMU
can: its monitor's "info registers" shows where the CPU is (the start of
the translated block it runs), without stopping it.

  rip-sample.py sample SOCKET DIR OUT
      Connect to the QEMU monitor at SOCKET (-monitor unix:SOCKET,...),
      wait for DIR/sample-start, then read the registers of CPU 0 about
      every 2 ms until DIR/sample-stop, the guest is gone or 120 s have
      passed. Writes "RIP CPL HLT" per sample to OUT.
  rip-sample.py report OUT KALLSYMS
      Sum the samples per function (the guest's /proc/kallsyms, read as
      root, names them, modules included) and per module: the share of
      samples, the CPU halted (idle), in user mode, and in each kernel
      function.
  rip-sample.py insns COUNTS KALLSYMS [IOS]
      The same for the instructions counted by tests/bench/insn-count.c
      ("ADDRESS INSTRUCTIONS" per translated block): the guest's own
      instructions per module and function, their share, and with IOS
      (the I/Os of the counted run) their number per I/O.
"""
import bisect
import collections
import os
import re
import socket
import sys
import time

REGS = re.compile(r'RIP=([0-9a-f]+).*?CPL=(\d).*?HLT=(\d)', re.S)


def read_prompt(sock):
    data = b''
    while not data.endswith(b'(qemu) '):
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError('monitor closed')
        data += chunk
    return data.decode(errors='replace')


def sample(path, marker_dir, out):
    deadline = time.monotonic() + 600
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            sys.exit(f'rip-sample: no monitor socket at {path}')
        time.sleep(0.2)
    sock = socket.socket(socket.AF_UNIX)
    sock.connect(path)
    read_prompt(sock)
    start = os.path.join(marker_dir, 'sample-start')
    stop = os.path.join(marker_dir, 'sample-stop')
    with open(out, 'w') as f:
        try:
            while not os.path.exists(start):
                time.sleep(0.05)
            end = time.monotonic() + 120
            n = 0
            while time.monotonic() < end:
                if n % 64 == 0 and os.path.exists(stop):
                    break
                sock.send(b'info registers\n')
                m = REGS.search(read_prompt(sock))
                if m:
                    f.write(f'{m.group(1)} {m.group(2)} {m.group(3)}\n')
                n += 1
                time.sleep(0.002)
        except (ConnectionError, OSError):
            pass	# the guest ended


def load_symbols(path):
    syms = []
    with open(path) as f:
        for line in f:
            cols = line.split()
            if len(cols) < 3 or cols[1] not in 'tTwW':
                continue
            addr = int(cols[0], 16)
            if not addr:
                continue
            module = cols[3].strip('[]') if len(cols) > 3 else 'vmlinux'
            syms.append((addr, cols[2], module))
    syms.sort()
    return [s[0] for s in syms], syms


def kernel_name(addrs, syms, rip):
    """The function and module of a kernel address."""
    i = bisect.bisect_right(addrs, rip) - 1
    if i < 0:
        return '(unknown)', '?'
    key, module = syms[i][1], syms[i][2]
    if module != 'vmlinux':
        key += f' [{module}]'
    return key, module


def print_shares(by_module, by_func, total, per_io=None):
    print('== by module')
    for name, n in by_module.most_common(12):
        extra = f'  {n / per_io:10.0f} per I/O' if per_io else ''
        print(f'{100.0 * n / total:6.2f}%{extra}  {name}')
    print('== by function')
    # Per I/O, every function down to 5 instructions, so that two systems'
    # lists can be set side by side; else the 80 biggest.
    for name, n in by_func.most_common(None if per_io else 80):
        if per_io and n / per_io < 5:
            break
        extra = f'  {n / per_io:10.0f} per I/O' if per_io else ''
        print(f'{100.0 * n / total:6.2f}%{extra}  {name}')


def tally(items):
    """Sum (function, module, weight) items per function and per module."""
    by_func = collections.Counter()
    by_module = collections.Counter()
    total = 0
    for key, module, n in items:
        by_func[key] += n
        by_module[module] += n
        total += n
    return by_func, by_module, total


def report(out, kallsyms):
    addrs, syms = load_symbols(kallsyms)

    def samples(f):
        for line in f:
            rip, cpl, hlt = line.split()
            if hlt == '1':
                yield '(halted: idle)', '(idle)', 1
            elif cpl != '0':
                yield '(user mode)', '(user)', 1
            else:
                yield (*kernel_name(addrs, syms, int(rip, 16)), 1)

    with open(out) as f:
        by_func, by_module, total = tally(samples(f))
    if not total:
        sys.exit('rip-sample: no samples')
    print(f'{total} samples')
    print_shares(by_module, by_func, total)


def insns(counts, kallsyms, ios=None):
    addrs, syms = load_symbols(kallsyms)

    def blocks(f):
        for line in f:
            rip, n = line.split()
            rip, n = int(rip, 16), int(n)
            if rip < 0xffff800000000000:
                yield '(user mode)', '(user)', n
            else:
                yield (*kernel_name(addrs, syms, rip), n)

    with open(counts) as f:
        by_func, by_module, total = tally(blocks(f))
    if not total:
        sys.exit('rip-sample: no instructions counted')
    per_io = float(ios) if ios and float(ios) > 0 else None
    print(f'{total} instructions' +
          (f', {total / per_io:.0f} per I/O over {per_io:.0f} I/Os'
           if per_io else ''))
    print_shares(by_module, by_func, total, per_io)


def main():
    if len(sys.argv) == 5 and sys.argv[1] == 'sample':
        sample(*sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == 'report':
        report(*sys.argv[2:])
    elif len(sys.argv) in (4, 5) and sys.argv[1] == 'insns':
        insns(*sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
