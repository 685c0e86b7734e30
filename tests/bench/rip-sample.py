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


def report(out, kallsyms):
    addrs, syms = load_symbols(kallsyms)
    by_func = collections.Counter()
    by_module = collections.Counter()
    total = 0
    with open(out) as f:
        for line in f:
            rip, cpl, hlt = line.split()
            total += 1
            if hlt == '1':
                key, module = '(halted: idle)', '(idle)'
            elif cpl != '0':
                key, module = '(user mode)', '(user)'
            else:
                i = bisect.bisect_right(addrs, int(rip, 16)) - 1
                if i < 0:
                    key, module = '(unknown)', '?'
                else:
                    key = syms[i][1]
                    module = syms[i][2]
                    if module != 'vmlinux':
                        key += f' [{module}]'
            by_func[key] += 1
            by_module[module] += 1
    if not total:
        sys.exit('rip-sample: no samples')
    print(f'{total} samples')
    print('== by module')
    for name, n in by_module.most_common(12):
        print(f'{100.0 * n / total:6.2f}%  {name}')
    print('== by function')
    for name, n in by_func.most_common(60):
        print(f'{100.0 * n / total:6.2f}%  {name}')


def main():
    if len(sys.argv) == 5 and sys.argv[1] == 'sample':
        sample(*sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == 'report':
        report(*sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
