#!/usr/bin/env python3
"""log-replay.py: read a dm-log-writes log and replay it, for
tests/vm/tests/wb-log-writes.sh.

The on-disk format, from the kernel's drivers/md/dm-log-writes.c and
Documentation/admin-guide/device-mapper/log-writes.rst: sector 0 of the log
device holds the super (le64 magic 0x6a736677736872, le64 version 1, le64
nr_entries, le32 sectorsize, the logged device's logical block size). The
entries follow from the next sector (one sectorsize-sized unit after the
super), each one unit holding le64 sector, le64 nr_sectors, le64 flags,
le64 data_len (a mark's text follows in the same unit), then, unless it is
a discard or a mark, nr_sectors units of the data written. Sectors and
counts are in units of sectorsize. Flags: FLUSH 1, FUA 2, DISCARD 4,
MARK 8, METADATA 16.

dm-log-writes logs a plain write only when a later flush completes (just
before that FLUSH entry), and a FUA write when it completes: applying the
entries [0, N) in order gives what the device could hold after a power
cut at that point. The super's nr_entries is brought up to date at each
FUA write, each mark and when the target is removed (which adds the mark
"dm-log-writes-end"): read the log after `dmsetup remove`.

Commands:
  list LOG [--versions]         the entries, one a line (with --versions,
                                the wb-writer.py versions each data entry
                                carries)
  apply LOG TARGET FROM TO      write entries FROM..TO-1 to TARGET (a file
                                or device of the logged device's size)
  points LOG WRITELOG [--max-between N] [--max-fua N] [--from-mark NAME]
                                the replay points wb-log-writes.sh checks
                                (see cmd_points)
  check-stable LOG WRITELOG     every version acknowledged before a mark is
                                in the log, all of its sectors, before it

Exit status: 0 ok, 1 a check failed, 2 usage error, bad log, I/O error.
"""
import argparse
import importlib.util
import os
import struct
import sys

LOG_MAGIC = 0x6a736677736872
SUPER = struct.Struct("<QQQI")
ENTRY = struct.Struct("<QQQQ")
FLUSH, FUA, DISCARD, MARK, METADATA = 1, 2, 4, 8, 16
FLAG_NAMES = ((FLUSH, "flush"), (FUA, "fua"), (DISCARD, "discard"),
              (MARK, "mark"), (METADATA, "meta"))
END_MARK = "dm-log-writes-end"


def die(msg):
    print("log-replay: " + msg, file=sys.stderr)
    sys.exit(2)


def load_writer():
    """wb-writer.py, for its pattern and its write log."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wb-writer.py")
    spec = importlib.util.spec_from_file_location("wb_writer", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class Entry:
    __slots__ = ("index", "sector", "nr", "flags", "mark", "data_off")

    def flag_text(self):
        t = [n for bit, n in FLAG_NAMES if self.flags & bit]
        return ",".join(t) if t else "-"

    def has_data(self):
        return self.nr > 0 and not self.flags & (DISCARD | MARK)


class LogDev:
    def __init__(self, path):
        try:
            self.f = open(path, "rb")
        except OSError as e:
            die("cannot open %s: %s" % (path, e))
        magic, version, self.count, self.ss = SUPER.unpack(self.f.read(SUPER.size))
        if magic != LOG_MAGIC:
            die("%s: no dm-log-writes super (magic %#x)" % (path, magic))
        if version != 1:
            die("%s: log version %d, not 1" % (path, version))
        if self.ss < 512 or self.ss & (self.ss - 1):
            die("%s: sector size %d" % (path, self.ss))
        self.entries = []
        off = self.ss
        size = os.fstat(self.f.fileno()).st_size or \
            self.f.seek(0, os.SEEK_END)
        for i in range(self.count):
            self.f.seek(off)
            raw = self.f.read(self.ss)
            if len(raw) != self.ss:
                die("%s: entry %d at byte %d is past the end" % (path, i, off))
            e = Entry()
            e.index = i
            e.sector, e.nr, e.flags, dlen = ENTRY.unpack_from(raw)
            e.mark = None
            if e.flags & MARK:
                e.mark = raw[ENTRY.size:ENTRY.size + dlen].decode("ascii", "replace")
            e.data_off = off + self.ss
            off += self.ss * (1 + (e.nr if e.has_data() else 0))
            if off > size:
                die("%s: entry %d's data runs past the end" % (path, i))
            self.entries.append(e)
        self.marks = {}
        for e in self.entries:
            if e.mark is not None and e.mark not in self.marks:
                self.marks[e.mark] = e.index

    def data(self, e):
        self.f.seek(e.data_off)
        return self.f.read(e.nr * self.ss)

    def versions(self, w):
        """{(version, block): index of the entry by which all of that
        block's sectors of that version were logged}, from the pattern
        wb-writer.py writes."""
        per_sector = {}
        for e in self.entries:
            if not e.has_data():
                continue
            d = self.data(e)
            for o in range(0, len(d), w.SECTOR):
                if d[o:o + 8] != w.MAGIC:
                    continue
                _, blk, ver, _, s = w.HDR.unpack_from(d, o)
                per_sector.setdefault((ver, blk, s), e.index)
        out = {}
        for (ver, blk, s), i in per_sector.items():
            out.setdefault((ver, blk), []).append(i)
        nsec = w.BLOCK // w.SECTOR
        return {k: max(v) for k, v in out.items() if len(v) == nsec}


def cmd_list(a):
    log = LogDev(a.log)
    print("# %d entries, sector size %d" % (log.count, log.ss))
    first = {}
    if a.versions:
        w = load_writer()
        for (ver, _), i in log.versions(w).items():
            first.setdefault(i, set()).add(ver)
    for e in log.entries:
        line = "%d %d %d %s" % (e.index, e.sector, e.nr, e.flag_text())
        if e.mark is not None:
            line += " " + e.mark
        if e.index in first:
            line += " complete:" + ",".join(map(str, sorted(first[e.index])))
        print(line)


def cmd_apply(a):
    log = LogDev(a.log)
    if not 0 <= a.first <= a.end <= log.count:
        die("entries %d..%d: the log has %d" % (a.first, a.end, log.count))
    fd = os.open(a.target, os.O_WRONLY)
    try:
        for e in log.entries[a.first:a.end]:
            if e.flags & DISCARD:
                # What a discarded range reads as is not defined: zeroes.
                zero = bytes(log.ss * e.nr)
                os.pwrite(fd, zero, e.sector * log.ss)
            elif e.has_data():
                if os.pwrite(fd, log.data(e), e.sector * log.ss) != e.nr * log.ss:
                    die("short write to %s" % a.target)
        os.fsync(fd)
    finally:
        os.close(fd)


def cmd_points(a):
    """Replay points from mark --from-mark on, one a line: N LABEL
    CHECK..., where N is how many entries to apply and each CHECK is
    EXPECT,ACKED,INTENDED for wb-writer.py verify --acked-until ACKED
    --intended-until INTENDED (EXPECT pass or fail). The points:
      - each mark of the write log: exactly what was acknowledged before it;
      - between two marks, after the first FLUSH entry and in the middle
        of the longest run of plain writes (at most --max-between in all,
        spread evenly): what was acknowledged before the earlier mark, or
        a write intended before the later one;
      - between two marks, just after a metadata write with FUA and no
        FLUSH (a btree node, the gen/prio chain) that plain writes logged
        after it, before the next FLUSH, may have preceded (at most
        --max-fua in all, spread evenly), with the same rule: a crash
        there leaves the metadata durable but not those plain writes, so
        a key in it must not point at data that is not on the device yet;
      - the end of the log (after the clean stop): everything acknowledged;
      - a negative control: just before the first entry carrying data of
        the last round's last plain write. The rule of the mark ending
        that round must FAIL there (its data cannot be on the device yet),
        which shows the checker sees a write missing; the rule of the
        previous mark must pass."""
    log = LogDev(a.log)
    w = load_writer()
    wl = w.Log(a.writelog)
    names = wl.marks
    if a.from_mark:
        if a.from_mark not in names:
            die("%s has no mark %s" % (a.writelog, a.from_mark))
        names = names[names.index(a.from_mark):]
    if len(names) < 2:
        die("%s has fewer than two marks to replay" % a.writelog)
    for n in names:
        if n not in log.marks:
            die("mark %s of %s is not in the log" % (n, a.writelog))
    idx = [log.marks[n] for n in names]
    if idx != sorted(idx):
        die("the marks are out of order in the log")
    plan = []
    for n, i in zip(names, idx):
        plan.append((i, "mark-" + n, ["pass,%s,%s" % (n, n)]))
    between = []
    fua = []
    for k in range(1, len(names)):
        lo, hi = idx[k - 1], idx[k]
        inner = log.entries[lo + 1:hi]
        check = ["pass,%s,%s" % (names[k - 1], names[k])]
        for e in inner:
            if e.flags & FLUSH and e.index + 1 < hi:
                between.append((e.index + 1, "after-flush-%d" % e.index, check))
                break
        best = (0, 0)
        run = 0
        for e in inner:
            run = run + 1 if e.has_data() and not e.flags & (FLUSH | FUA) else 0
            if run > best[1]:
                best = (e.index - run + 1, run)
        if best[1] >= 2:
            mid = best[0] + best[1] // 2
            between.append((mid, "mid-run-%d-of-%d" % (mid, best[1]), check))
        for e in inner:
            if e.flags & FUA and e.flags & METADATA and \
                    not e.flags & FLUSH and e.index + 1 < hi and \
                    _plain_before_flush(log, e.index + 1):
                fua.append((e.index + 1, "after-fua-%d" % e.index, check))

    def spread(points, most):
        points = sorted(set((n, l, tuple(c)) for n, l, c in points))
        if len(points) > most:
            step = len(points) / most
            points = [points[int(k * step)] for k in range(most)]
        return [(n, l, list(c)) for n, l, c in points]
    plan += spread(between, a.max_between)
    plan += spread(fua, a.max_fua)
    plan.append((log.count, "end", ["pass,%s,-" % names[-1]]))
    # The negative control, on the last round that has a plain write
    # still the acknowledged version of one of its blocks at its mark.
    vers = log.versions(w)
    first_data = {}
    for (ver, _), i in vers.items():
        first_data[ver] = min(first_data.get(ver, i), i)
    neg = None
    for k in range(len(names) - 1, 0, -1):
        at = w.Log(a.writelog, names[k])
        lo, hi = at.mark_seq[names[k - 1]], at.mark_seq[names[k]]
        cand = [v for v, (b, c, mode, seq) in at.info.items()
                if mode == "s" and lo < seq <= hi and
                any(at.acked.get(x) == v for x in range(b, b + c))]
        if cand:
            v = max(cand)
            if v not in first_data:
                die("version %d is not in the log" % v)
            # The point before its first sector is logged at all.
            n = min(e.index for e in log.entries
                    if e.has_data() and _carries(log, e, w, v))
            neg = (n, "before-data-of-v%d" % v,
                   ["pass,%s,%s" % (names[k - 1], names[k]),
                    "fail,%s,%s" % (names[k], names[k])])
            break
    if neg is None:
        die("no round with a plain write for the negative control")
    plan.append(neg)
    for n, label, checks in sorted(plan, key=lambda p: p[0]):
        print(n, label, " ".join(checks))


def _plain_before_flush(log, i):
    """Is a plain write logged from entry i on, before the next FLUSH? It
    completed before that flush, perhaps before entry i: the FUA write
    just before i reached stable media while it may not have."""
    for e in log.entries[i:]:
        if e.flags & FLUSH:
            return False
        if e.has_data() and not e.flags & FUA:
            return True
    return False


def _carries(log, e, w, ver):
    d = log.data(e)
    for o in range(0, len(d), w.SECTOR):
        if d[o:o + 8] == w.MAGIC and w.HDR.unpack_from(d, o)[2] == ver:
            return True
    return False


def cmd_check_stable(a):
    log = LogDev(a.log)
    w = load_writer()
    vers = log.versions(w)
    wl = w.Log(a.writelog)
    bad = []
    checked = 0
    for name in wl.marks:
        if name not in log.marks:
            die("mark %s of %s is not in the log" % (name, a.writelog))
        at = w.Log(a.writelog, name)
        m = log.marks[name]
        for blk, ver in sorted(at.acked.items()):
            if not ver:
                continue
            checked += 1
            i = vers.get((ver, blk))
            if i is None or i > m:
                bad.append("block %d version %d, acknowledged before mark %s "
                           "(entry %d), %s" % (blk, ver, name, m,
                           "is not in the log" if i is None else
                           "was not stable until entry %d" % i))
    if bad:
        print("NOT STABLE: %d of %d acknowledged blocks" % (len(bad), checked))
        for line in bad[:10]:
            print("  " + line)
        sys.exit(1)
    print("ok: at each of %d marks, the data of every acknowledged block "
          "(%d in all) was logged before the mark" % (len(wl.marks), checked))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("list")
    s.add_argument("log")
    s.add_argument("--versions", action="store_true")
    s = sub.add_parser("apply")
    s.add_argument("log")
    s.add_argument("target")
    s.add_argument("first", type=int)
    s.add_argument("end", type=int)
    s = sub.add_parser("points")
    s.add_argument("log")
    s.add_argument("writelog")
    s.add_argument("--max-between", type=int, default=8)
    s.add_argument("--max-fua", type=int, default=8)
    s.add_argument("--from-mark", help="no point before this mark")
    s = sub.add_parser("check-stable")
    s.add_argument("log")
    s.add_argument("writelog")
    a = p.parse_args()
    try:
        {"list": cmd_list, "apply": cmd_apply, "points": cmd_points,
         "check-stable": cmd_check_stable}[a.cmd](a)
    except OSError as e:
        die("%s: %s" % (a.cmd, e))


if __name__ == "__main__":
    main()
