#!/usr/bin/env python3
"""metaedit.py: damage an hcache cache device's metadata the way a disk
can, for the VM tests that check what registration makes of it.

  metaedit.py flip DEV OFFSET
      invert the byte at OFFSET (bytes); flipping it again restores it
  metaedit.py newest-jset DEV START BYTES BLOCK
      print the byte offset, seq, prio_bucket (head of the gen/prio
      chain it names) and bdev_table_bucket of the journal entry with the highest seq in the
      ring [START, START + BYTES), scanning every BLOCK bytes

Run `blockdev --flushbufs DEV` first, so that what the module wrote with
bios is read, not an older page cache. Offsets follow drivers/md/hcache/hcache_ondisk.h: a journal entry (struct
hc_jset_disk) starts on a block boundary with magic (u64), csum (u32),
u64s (u32), seq (u64), last_seq (u64), btree_root (u64), prio_bucket
(u64), bdev_table_bucket (u64). The magic is the set's own, so the
entries are told apart as the blocks that share the most common magic
whose seq and last_seq look like a journal's (last_seq <= seq).
"""
import collections
import os
import struct
import sys


def flip(dev, offset):
    with open(dev, "r+b", buffering=0) as f:
        f.seek(offset)
        old = f.read(1)
        f.seek(offset)
        f.write(bytes([old[0] ^ 0xFF]))
        os.fsync(f.fileno())
    print("%d: %02x -> %02x" % (offset, old[0], old[0] ^ 0xFF))


def newest_jset(dev, start, size, block):
    with open(dev, "rb") as f:
        f.seek(start)
        ring = f.read(size)
    heads = []
    for off in range(0, size, block):
        magic, _csum, u64s, seq, last = struct.unpack_from("<QIIQQ", ring, off)
        if magic and 0 < seq and last <= seq and u64s < size // 8:
            prio, table = struct.unpack_from("<QQ", ring, off + 40)
            heads.append((magic, seq, start + off, prio, table))
    if not heads:
        raise SystemExit("no journal entry found")
    magic = collections.Counter(h[0] for h in heads).most_common(1)[0][0]
    best = max((h for h in heads if h[0] == magic), key=lambda h: h[1])
    print(best[2], best[1], best[3], best[4])


def main(argv):
    if len(argv) == 4 and argv[1] == "flip":
        flip(argv[2], int(argv[3]))
    elif len(argv) == 6 and argv[1] == "newest-jset":
        newest_jset(argv[2], int(argv[3]), int(argv[4]), int(argv[5]))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
