#!/usr/bin/env python3
"""wb-writer.py: acknowledged writes to a block device, logged so that a
later boot (or a replay of the device's history) can check that every
write acknowledged as durable is there. Used by tests/vm/tests/wb-crash.sh
and wb-log-writes.sh; log-replay.py imports it.

The region is the first BLOCKS 4 KiB blocks of the device, from a byte
OFFSET. Every 512-byte sector of a block holds, in full, a known pattern:

    magic "hcwbtest" | block | version | seed | sector in block (le64 x3,
    le32) | crc32 of the rest of the sector | filler (a hash of block,
    version and seed)

so a sector read back names the block and version it was written as, and
is checked byte for byte. Version 0 is the initial content: the pattern,
written by the "fill" command, or zeros, for a region never written that
the "init" command only starts a log for (a null_blk disk keeps in its
volatile write cache only writes to pages it never stored, so a power-cut
test must not write the region first); each later write has a version of
its own, all its blocks the same version.

The write log (a text file, one record a line, each line flushed to
stable storage with fsync before the program goes on):

    S SEED BLOCKS [zero]   first line: the run's seed and region size;
                           "zero": version 0 is zeros (the "init" command)
    I VERSION BLOCK COUNT MODE
                           intent: written before the write is issued;
                           MODE d (O_DSYNC: acknowledged when it
                           returns) or s (acknowledged by a later
                           fdatasync)
    A VERSION              acknowledged: after the write (O_DSYNC) or the
                           fdatasync covering it returned
    M NAME                 a mark (wb-log-writes.sh: a dm-log-writes mark
                           issued after the writes before it were
                           acknowledged)
    B TEXT                 a comment (boot number, ...)

A line cut short by a crash (no newline) is ignored.

The rule checked ("verify"): a block must hold, in each sector, its last
acknowledged version or a version whose intent line comes after that
acknowledgment (a write in flight may or may not have landed, in part or
whole, sector by sector). A block never acknowledged holds version 0 or a
version intended since. --acked-until NAME reads acknowledgments only up
to mark NAME, and --intended-until NAME intents only up to mark NAME: the
state a replay point between those two marks must show.

"clean-check" checks writeback's ordering rule on a region read through
hcache0, the same region read from the raw backing device afterwards and
the set's keys (debugfs) read in between: every sector under no dirty key
must be the same in both.

Exit status: 0 ok, 1 a check failed, 2 usage or I/O error (a write run
ends so at a power cut or a stop: "wb-writer: write: [Errno 5] ...").
"""
import argparse
import hashlib
import mmap
import os
import random
import struct
import subprocess
import sys
import time
import zlib

BLOCK = 4096
SECTOR = 512
MAGIC = b"hcwbtest"
HDR = struct.Struct("<8sQQQI")  # magic, block, version, seed, sector
CRC = struct.Struct("<I")
CHUNK_BLOCKS = 256  # 1 MiB per read


def die(msg):
    print("wb-writer: " + msg, file=sys.stderr)
    sys.exit(2)


def block_bytes(blk, ver, seed):
    """The 4 KiB a block holds as version ver of a run with seed."""
    h = hashlib.blake2b(struct.pack("<QQQ", blk, ver, seed),
                        digest_size=64).digest()
    filler = (h * 8)[HDR.size + CRC.size:]
    out = bytearray()
    for s in range(BLOCK // SECTOR):
        hdr = HDR.pack(MAGIC, blk, ver, seed, s)
        out += hdr + CRC.pack(zlib.crc32(hdr + filler)) + filler
    return bytes(out)


def version_bytes(log, blk, ver):
    """What block blk holds as version ver of the run logged in log."""
    if ver == 0 and log.zero:
        return bytes(BLOCK)
    return block_bytes(blk, ver, log.seed)


def describe_sector(data, blk, s):
    """What a sector that matched no allowed version holds, in words."""
    if data == bytes(SECTOR):
        return "zeroes"
    magic, b, ver, seed, sec = HDR.unpack_from(data)
    if magic != MAGIC:
        return "no pattern (starts %s)" % data[:16].hex()
    (crc,) = CRC.unpack_from(data, HDR.size)
    ok = crc == zlib.crc32(data[:HDR.size] + data[HDR.size + CRC.size:])
    where = "" if (b, sec) == (blk, s) else \
        " of block %d sector %d (misplaced)" % (b, sec)
    return "version %d%s, crc %s" % (ver, where, "ok" if ok else "BAD")


class Log:
    """The write log, read up to the marks asked for."""

    def __init__(self, path, acked_until=None, intended_until=None):
        self.seed = None
        self.blocks = None
        self.zero = False
        self.info = {}        # version -> (block, count, mode, seq)
        self.acked = {}       # block -> last acknowledged version
        self.pending = {}     # block -> [(seq, version)] intended later
        self.marks = []       # mark names in order
        self.mark_seq = {}    # mark name -> intents before it
        self.nacked = 0
        self.nintended = 0
        self.order = []       # records as read: (kind, args)
        if acked_until is None:
            acked_until = ""      # no mark: the whole log
        if intended_until is None:
            intended_until = acked_until
        if intended_until == "-":
            intended_until = ""   # intents to the end of the log
        phase = "full" if acked_until else "all"
        # "full" (acknowledgments and intents) until mark acked_until,
        # then "intents" until mark intended_until, then "done"; "all":
        # the whole log in full.
        seq = 0
        try:
            with open(path, "rb") as f:
                lines = f.read().split(b"\n")
        except OSError as e:
            die("cannot read %s: %s" % (path, e))
        # The last piece has no newline: cut short by a crash, or empty.
        for n, raw in enumerate(lines[:-1], 1):
            p = raw.decode("ascii", "replace").split()
            if not p:
                continue
            try:
                kind = p[0]
                if kind == "S":
                    self.seed, self.blocks = int(p[1]), int(p[2])
                    self.zero = p[3:4] == ["zero"]
                elif kind == "B":
                    pass
                elif kind == "M":
                    self.marks.append(p[1])
                    self.mark_seq.setdefault(p[1], seq)
                    self.order.append(("M", p[1]))
                    if phase == "full" and p[1] == acked_until:
                        phase = "intents"
                    if phase == "intents" and p[1] == intended_until:
                        phase = "done"
                elif kind == "I":
                    ver, blk, cnt, mode = int(p[1]), int(p[2]), int(p[3]), p[4]
                    seq += 1
                    self.info[ver] = (blk, cnt, mode, seq)
                    self.order.append(("I", ver))
                    if phase != "done":
                        self.nintended += 1
                        for b in range(blk, blk + cnt):
                            self.pending.setdefault(b, []).append((seq, ver))
                elif kind == "A":
                    ver = int(p[1])
                    if ver not in self.info:
                        raise ValueError("acknowledges version %d, never intended" % ver)
                    self.order.append(("A", ver))
                    if phase in ("full", "all"):
                        self.nacked += 1
                        blk, cnt, _, vseq = self.info[ver]
                        for b in range(blk, blk + cnt):
                            self.acked[b] = ver
                            self.pending[b] = [x for x in self.pending.get(b, [])
                                               if x[0] > vseq]
                else:
                    raise ValueError("unknown record")
            except (ValueError, IndexError) as e:
                die("%s line %d: %r: %s" % (path, n, raw[:80], e))
        if self.seed is None:
            die("%s has no S line (the region was never filled)" % path)
        for name in (acked_until, intended_until):
            if name and name not in self.marks:
                die("%s has no mark %s" % (path, name))

    def allowed(self, blk):
        """Versions block blk may hold: the acknowledged one first."""
        out = [self.acked.get(blk, 0)]
        for _, ver in self.pending.get(blk, []):
            if ver not in out:
                out.append(ver)
        return out


def open_direct(path, flags):
    try:
        return os.open(path, flags | os.O_DIRECT)
    except OSError as e:
        die("cannot open %s: %s" % (path, e))


def append_line(fd, line):
    """One log record, on stable storage before this returns."""
    os.write(fd, (line + "\n").encode())
    os.fsync(fd)


def run_seed(a):
    return a.seed if a.seed is not None else random.getrandbits(48)


def start_log(path, seed, blocks, zero=False):
    """A new log: its S line."""
    log = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    append_line(log, "S %d %d%s" % (seed, blocks, " zero" if zero else ""))
    os.close(log)


def cmd_init(a):
    seed = run_seed(a)
    start_log(a.log, seed, a.blocks, zero=True)
    print("log for %d blocks, version 0 zeros (seed %d)" % (a.blocks, seed))


def cmd_fill(a):
    seed = run_seed(a)
    fd = open_direct(a.dev, os.O_WRONLY)
    buf = mmap.mmap(-1, CHUNK_BLOCKS * BLOCK)
    for first in range(0, a.blocks, CHUNK_BLOCKS):
        n = min(CHUNK_BLOCKS, a.blocks - first)
        for i in range(n):
            buf[i * BLOCK:(i + 1) * BLOCK] = block_bytes(first + i, 0, seed)
        done = os.pwrite(fd, memoryview(buf)[:n * BLOCK], a.offset + first * BLOCK)
        if done != n * BLOCK:
            die("short write to %s" % a.dev)
    os.fsync(fd)
    os.close(fd)
    start_log(a.log, seed, a.blocks)
    print("filled %d blocks of %s at byte %d with version 0 (seed %d)"
          % (a.blocks, a.dev, a.offset, seed))


class Writer:
    """Random writes, each logged before it is issued and after it is
    acknowledged."""

    def __init__(self, a):
        log = Log(a.log)
        self.seed, self.blocks = log.seed, log.blocks
        self.rng_seed = a.rng_seed if a.rng_seed is not None else random.getrandbits(32)
        self.rng = random.Random(self.rng_seed)
        self.plain = open_direct(a.dev, os.O_WRONLY)
        self.dsync = open_direct(a.dev, os.O_WRONLY | os.O_DSYNC)
        self.log = os.open(a.log, os.O_WRONLY | os.O_APPEND)
        self.buf = mmap.mmap(-1, a.max_blocks * BLOCK)
        self.offset = a.offset
        self.hot = min(a.hot, self.blocks)
        self.max_blocks = a.max_blocks
        self.next = a.first_version
        self.acked = 0
        self.intended = 0
        self.btree_flush = a.btree_flush
        self.mode = a.mode

    def pick(self):
        if self.rng.random() < 0.25:
            cnt = self.rng.randint(2, self.max_blocks)
        else:
            cnt = 1
        top = self.hot if self.rng.random() < 0.5 else self.blocks
        cnt = min(cnt, top)
        return self.rng.randrange(0, top - cnt + 1), cnt

    def write(self, fd, mode):
        blk, cnt = self.pick()
        ver = self.next
        self.next += 1
        for i in range(cnt):
            self.buf[i * BLOCK:(i + 1) * BLOCK] = block_bytes(blk + i, ver, self.seed)
        append_line(self.log, "I %d %d %d %s" % (ver, blk, cnt, mode))
        self.intended += 1
        done = os.pwrite(fd, memoryview(self.buf)[:cnt * BLOCK],
                         self.offset + blk * BLOCK)
        if done != cnt * BLOCK:
            die("short write: %d of %d bytes at block %d" % (done, cnt * BLOCK, blk))
        return ver

    def fdatasync(self):
        """fdatasync the plain writes; with --btree-flush, write the btree
        out first, so that node writes carry keys of data that only the
        fdatasync makes stable."""
        if self.btree_flush:
            with open(self.btree_flush, "w") as f:
                f.write("btree\n")
        os.fdatasync(self.plain)

    def ack(self, vers):
        for ver in vers:
            append_line(self.log, "A %d" % ver)
            self.acked += 1

    def one_step(self):
        """One acknowledged unit: an O_DSYNC write, or one to four plain
        writes and an fdatasync."""
        if self.mode == "dsync" or (self.mode == "mix" and
                                    self.rng.random() < 0.35):
            self.ack([self.write(self.dsync, "d")])
        else:
            vers = [self.write(self.plain, "s")
                    for _ in range(self.rng.choice((1, 1, 2, 3, 4)))]
            self.fdatasync()
            self.ack(vers)


def cmd_write(a):
    w = Writer(a)
    append_line(w.log, "B %s rng-seed %d" % (a.note or "writer", w.rng_seed))
    end = time.monotonic() + a.duration if a.duration else None
    if a.rounds:
        for r in range(1, a.rounds + 1):
            for _ in range(w.rng.randint(2, 5)):
                w.one_step()
            # One plain write last, so every round has a write that is
            # durable only through the fdatasync before its mark.
            ver = w.write(w.plain, "s")
            w.fdatasync()
            w.ack([ver])
            if a.mark_dm:
                subprocess.run(["dmsetup", "message", a.mark_dm, "0", "mark",
                                "r%d" % r], check=True)
            append_line(w.log, "M r%d" % r)
    else:
        while end is None or time.monotonic() < end:
            w.one_step()
    print("wrote %d, acknowledged %d, versions %d..%d"
          % (w.intended, w.acked, a.first_version, w.next - 1))


def cmd_verify(a):
    log = Log(a.log, a.acked_until, a.intended_until)
    blocks = log.blocks
    fd = open_direct(a.dev, os.O_RDONLY)
    buf = mmap.mmap(-1, CHUNK_BLOCKS * BLOCK)
    dump = open(a.dump, "wb") if a.dump else None
    bad = []
    nwritten = ninflight = 0
    for first in range(0, blocks, CHUNK_BLOCKS):
        n = min(CHUNK_BLOCKS, blocks - first)
        got = os.preadv(fd, [memoryview(buf)[:n * BLOCK]], a.offset + first * BLOCK)
        if got != n * BLOCK:
            die("short read of %s at block %d" % (a.dev, first))
        data = bytes(buf[:n * BLOCK])
        if dump:
            dump.write(data)
        for i in range(n):
            blk = first + i
            have = data[i * BLOCK:(i + 1) * BLOCK]
            allowed = log.allowed(blk)
            want = {v: version_bytes(log, blk, v) for v in allowed}
            if allowed[0]:
                nwritten += 1
            if have == want[allowed[0]]:
                continue
            if any(have == want[v] for v in allowed[1:]):
                ninflight += 1
                continue
            # Sector by sector: each must be one of the allowed versions.
            wrong = []
            for s in range(BLOCK // SECTOR):
                sec = have[s * SECTOR:(s + 1) * SECTOR]
                if not any(sec == w[s * SECTOR:(s + 1) * SECTOR] for w in want.values()):
                    wrong.append(s)
            if not wrong:
                ninflight += 1
                continue
            s = wrong[0]
            bad.append("block %d: %d of 8 sectors wrong; sector %d holds %s; "
                       "allowed versions %s"
                       % (blk, len(wrong), s,
                          describe_sector(have[s * SECTOR:(s + 1) * SECTOR], blk, s),
                          " ".join(map(str, allowed))))
    os.close(fd)
    if dump:
        dump.close()
    what = "%s: %d blocks checked (%d hold an acknowledged write, %d a write " \
           "in flight), %d writes acknowledged, %d intended" \
           % (a.dev, blocks, nwritten, ninflight, log.nacked, log.nintended)
    if a.acked_until:
        what += " (acknowledged up to mark %s, intended up to mark %s)" \
                % (a.acked_until, a.intended_until or a.acked_until)
    if bad:
        print("MISMATCH " + what)
        for line in bad[:10]:
            print("  " + line)
        if len(bad) > 10:
            print("  ... %d blocks in all" % len(bad))
        sys.exit(1)
    print("ok " + what)


def cmd_clean_check(a):
    """Writeback's ordering rule: a range of the region under no dirty key
    (clean, or not cached) must read the same on the raw backing device as
    through hcache0, since writeback marks a key clean only after its data
    is on the backing device."""
    with open(a.through, "rb") as f:
        through = f.read()
    with open(a.raw, "rb") as f:
        raw = f.read()
    if len(through) != len(raw) or len(raw) % SECTOR:
        die("%s and %s differ in size" % (a.through, a.raw))
    nsec = len(raw) // SECTOR
    dirty = bytearray(nsec)
    nkeys = 0
    with open(a.keys) as f:
        for line in f:
            # ID:START-END @SECTOR gen G c|d (sectors of the backing
            # device's data, END excluded)
            p = line.split()
            if len(p) < 5 or p[-1] != "d":
                continue
            bid, rng = p[0].split(":")
            if int(bid) != a.id:
                continue
            start, end = (int(x) for x in rng.split("-"))
            nkeys += 1
            for sec in range(max(start, 0), min(end, nsec)):
                dirty[sec] = 1
    bad = []
    for sec in range(nsec):
        if dirty[sec]:
            continue
        o = sec * SECTOR
        if raw[o:o + SECTOR] != through[o:o + SECTOR]:
            blk, s = divmod(sec, BLOCK // SECTOR)
            bad.append("sector %d (block %d): the backing device holds %s, "
                       "hcache0 %s" % (sec, blk,
                       describe_sector(raw[o:o + SECTOR], blk, s),
                       describe_sector(through[o:o + SECTOR], blk, s)))
    ndirty = sum(dirty)
    what = "%d sectors under no dirty key read the same on the backing " \
           "device as through hcache0; %d sectors under %d dirty keys" \
           % (nsec - ndirty, ndirty, nkeys)
    if bad:
        print("MISMATCH in %d sectors: not %s" % (len(bad), what))
        for line in bad[:10]:
            print("  " + line)
        sys.exit(1)
    print("ok: " + what)


def cmd_stats(a):
    """Counts of the records a boot's writer left (versions from FIRST)."""
    log = Log(a.log)
    lo = a.first_version
    hi = lo + 10**6 if lo else 1 << 62
    i = sum(1 for k, v in log.order if k == "I" and lo <= v < hi)
    ack = sum(1 for k, v in log.order if k == "A" and lo <= v < hi)
    print("%d %d %d %d" % (i, ack, log.nintended, log.nacked))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fill", help="write version 0 to the region, start the log")
    f.add_argument("dev")
    f.add_argument("log")
    f.add_argument("--blocks", type=int, required=True)
    f.add_argument("--offset", type=int, default=0, help="bytes")
    f.add_argument("--seed", type=int)
    i = sub.add_parser("init", help="start the log of a never-written region "
                       "(version 0: zeros)")
    i.add_argument("log")
    i.add_argument("--blocks", type=int, required=True)
    i.add_argument("--seed", type=int)
    w = sub.add_parser("write", help="random acknowledged writes")
    w.add_argument("dev")
    w.add_argument("log")
    w.add_argument("--offset", type=int, default=0)
    w.add_argument("--first-version", type=int, required=True)
    w.add_argument("--duration", type=float, default=0,
                   help="seconds (0: until killed)")
    w.add_argument("--rounds", type=int, default=0,
                   help="rounds of writes, each ended by fdatasync and a mark")
    w.add_argument("--mark-dm", help="dm-log-writes device to mark after each round")
    w.add_argument("--hot", type=int, default=256,
                   help="half the writes go to the first HOT blocks")
    w.add_argument("--max-blocks", type=int, default=16)
    w.add_argument("--rng-seed", type=int)
    w.add_argument("--btree-flush", metavar="FILE",
                   help="write 'btree' to FILE (a set's debugfs flush) "
                   "before every fdatasync")
    w.add_argument("--mode", choices=("mix", "dsync", "sync"), default="mix",
                   help="dsync: only O_DSYNC writes; sync: only plain "
                   "writes, acknowledged by fdatasync; mix: both")
    w.add_argument("--note")
    v = sub.add_parser("verify", help="check the region against the log")
    v.add_argument("dev")
    v.add_argument("log")
    v.add_argument("--offset", type=int, default=0)
    v.add_argument("--acked-until")
    v.add_argument("--intended-until",
                   help="default: the --acked-until mark; - for the end of the log")
    v.add_argument("--dump", help="also save the region read to this file")
    c = sub.add_parser("clean-check", help="sectors under no dirty key are "
                       "the same on the backing device as through hcache0")
    c.add_argument("through", help="the region read through hcache0")
    c.add_argument("raw", help="the region read from the backing device")
    c.add_argument("keys", help="the set's debugfs keys file, read between")
    c.add_argument("--id", type=int, required=True,
                   help="the backing device's id in the set (cache_set_id)")
    s = sub.add_parser("stats", help="print: intents and acks of a writer "
                       "(versions from FIRST), intents and acks in all")
    s.add_argument("log")
    s.add_argument("--first-version", type=int, default=0)
    a = p.parse_args()
    try:
        {"init": cmd_init, "fill": cmd_fill, "write": cmd_write,
         "verify": cmd_verify,
         "clean-check": cmd_clean_check, "stats": cmd_stats}[a.cmd](a)
    except OSError as e:
        die("%s: %s" % (a.cmd, e))


if __name__ == "__main__":
    main()
