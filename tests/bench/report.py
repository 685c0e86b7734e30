#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""report.py DIR: turn what tests/bench/guest.sh left in DIR (systems.tsv,
runs.tsv, fio/*.json, fio/*_iops.*.log, env.txt) into DIR/report.md and the
warm-up plots DIR/warmup-a.png and DIR/warmup-g.png (gnuplot).

Only ratios within the run mean anything (the guest runs under TCG). A
figure that is missing (a system that could not be set up, a failed job)
shows as "n/a" and a goal that depends on it as "n/a", never as a number.
Exit status: 0 when the report was written, 1 when DIR lacks the basics.
"""
import json
import os
import statistics
import subprocess
import sys

SYSTEMS = ["rawb", "rawc", "hcache", "bcache", "dmcache", "dmwc"]
LABEL = {
    "rawb": "raw backing",
    "rawc": "raw cache (ceiling)",
    "hcache": "hcache",
    "bcache": "bcache",
    "dmcache": "dm-cache smq",
    "dmwc": "dm-writecache",
}
# The goals allow two tolerances only: cold reads at 0.95x raw,
# and repeated mkfs within this factor of the first (TCG timing noise, as
# in tests/vm/tests/io-mkfs.sh). Everything else is compared strictly.
MKFS_SLACK = 1.15
# The device model holds when, on b, the raw cache disk is at least this
# much faster than the raw backing disk (see "the device model" below).
MODEL_CACHE_OVER_BACK = 1.25


def read_tsv(path):
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.rstrip("\n")
                if line:
                    rows.append(line.split("\t"))
    return rows


def kv(text):
    out = {}
    for part in text.split():
        if "=" in part:
            k, v = part.split("=", 1)
            out[k] = v
    return out


class Run:
    def __init__(self, d):
        self.d = d
        self.env = {}
        p = os.path.join(d, "env.txt")
        if os.path.exists(p):
            for line in open(p):
                k, _, v = line.rstrip("\n").partition(" ")
                self.env[k] = v
        self.systems = {}
        for r in read_tsv(os.path.join(d, "systems.tsv")):
            self.systems[r[0]] = {"ok": r[1] == "ok", "dev": r[2], "what": r[3]}
        self.runs = read_tsv(os.path.join(d, "runs.tsv"))

    def up(self, s):
        return self.systems.get(s, {}).get("ok", False)

    def fio(self, wl, s, run):
        """The fio job's figures: iops, p50/p99/p999 in microseconds."""
        p = os.path.join(self.d, "fio", "%s-%s-%s.json" % (wl, s, run))
        try:
            with open(p) as f:
                text = f.read()
            # fio may print notes before the JSON object.
            j = json.loads(text[text.index("{"):])
            job = j["jobs"][0]
        except (OSError, ValueError, KeyError, IndexError):
            return None
        if job.get("error"):
            return None
        side = job["read"] if job["read"]["io_bytes"] > 0 else job["write"]
        pct = side.get("clat_ns", {}).get("percentile", {})

        def us(key):
            v = pct.get(key)
            return v / 1000.0 if v is not None else None
        return {"iops": side["iops"], "p50": us("50.000000"),
                "p99": us("99.000000"), "p999": us("99.900000")}

    def series(self, wl, s, runs):
        return [self.fio(wl, s, r) for r in runs]

    def mkfs(self, s):
        t = {}
        for r in self.runs:
            if r[0] == "mkfs" and r[2] == s and r[4] == "ok":
                t[int(r[3])] = float(kv(r[5])["secs"])
        return [t.get(i) for i in range(1, 6)]

    def wb(self, case, s):
        for r in self.runs:
            if r[0] == "wb" and r[1] == "f-" + case and r[2] == s:
                v = kv(r[5])
                v["status"] = r[4]
                return v
        return None

    def iops_log(self, wl, s, run):
        p = os.path.join(self.d, "fio", "%s-%s-%s_iops.1.log" % (wl, s, run))
        pts = []
        if os.path.exists(p):
            for line in open(p):
                f = [x.strip() for x in line.split(",")]
                if len(f) >= 2:
                    pts.append((int(f[0]) / 1000.0, float(f[1])))
        return pts


def median_run(runs):
    """The run with the median IOPS (runs: list of fio dicts or None)."""
    ok = [r for r in runs if r]
    if not ok:
        return None
    ok.sort(key=lambda r: r["iops"])
    return ok[(len(ok) - 1) // 2] if len(ok) % 2 else {
        "iops": statistics.median(r["iops"] for r in ok),
        "p50": None, "p99": None, "p999": None}


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def fmt(v, nd=0):
    if v is None:
        return "n/a"
    return ("%%.%df" % nd) % v


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def verdict(ok):
    if ok is None:
        return "n/a"
    return "PASS" if ok else "MISS"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: report.py RESULTS_DIR")
    d = sys.argv[1]
    run = Run(d)
    if not run.systems:
        sys.exit("report.py: %s has no systems.tsv: the guest did not get far" % d)
    rt = float(run.env.get("runtime", "10"))
    reads = ["rawb", "rawc", "hcache", "bcache", "dmcache"]
    writes = SYSTEMS

    # metric[workload][system] = (value, higher_is_better)
    rows = []   # (key, title, unit, higher_better, {sys: value}, systems)
    lat = []    # (workload, system, fio dict)

    def add(key, title, unit, hb, vals, systems):
        rows.append((key, title, unit, hb, vals, systems))

    # a: the warm-up; goal figure is the mean of the three runs (reads served
    # in the whole curve), the third run shown too.
    a_mean, a3 = {}, {}
    for s in reads:
        if run.up(s):
            sr = run.series("a", s, [1, 2, 3])
            a_mean[s] = mean([r["iops"] if r else None for r in sr]) if all(sr) else None
            a3[s] = sr[2]["iops"] if sr[2] else None
            lat.append(("a run 3", s, sr[2]))
    add("a", "a. zipf 1.1 reads, mean of 3 warm-up runs", "IOPS", True, a_mean, reads)
    add("a3", "a. zipf 1.1 reads, 3rd run (warm)", "IOPS", True, a3, reads)

    # g: the switch; goal figure: each run against raw backing's same run.
    g = {s: run.series("g", s, [1, 2, 3]) for s in reads if run.up(s)}
    g_mean = {s: (mean([r["iops"] for r in v]) if all(v) else None) for s, v in g.items()}
    add("g", "g. after switching data set, mean of 3 runs", "IOPS", True, g_mean, reads)
    for s, v in g.items():
        lat.append(("g run 3", s, v[2]))

    for wl, title, systems in (("b", "b. cold uniform reads (median of 3)", reads),
                               ("c", "c. 4k random writes, writeback (median of 3)", writes),
                               ("d", "d. reading back c (median of 3)", writes),
                               ("h", "h. 4k random writes, iodepth 1, fsync each (median of 3)",
                                writes)):
        vals = {}
        for s in systems:
            if run.up(s):
                m = median_run(run.series(wl, s, [1, 2, 3]))
                vals[s] = m["iops"] if m else None
                lat.append((wl, s, m))
        add(wl, title, "IOPS", True, vals, systems)

    mk = {s: run.mkfs(s) for s in writes if run.up(s)}
    mk_med = {s: (statistics.median(v) if all(x is not None for x in v) else None)
              for s, v in mk.items()}
    add("e", "e. mkfs.ext4 -E nodiscard (median of 5)", "s", False, mk_med, writes)

    wbsys = ["hcache", "bcache", "dmcache", "dmwc"]
    wb = {}
    for case, title in (("dense", "f. dense 4k random dirty data"),
                        ("seq", "f. sequential 64k dirty data")):
        wpm, kpm, secs = {}, {}, {}
        for s in wbsys:
            if not run.up(s):
                continue
            v = run.wb(case, s)
            if not v or v["status"] != "ok":
                wpm[s] = kpm[s] = secs[s] = None
                continue
            reqs = int(v["write_reqs"]) + int(v["flush_reqs"])
            sect = int(v["write_sectors"]) + int(v["flush_sectors"])
            wpm[s] = reqs / 32.0
            kpm[s] = sect * 512 / 1024.0 / 32.0
            secs[s] = float(v["secs"])
        wb[case] = (wpm, kpm, secs)
        add("f-" + case, title + ": backing write requests per MiB", "req/MiB", False, wpm, wbsys)
        add("f-" + case + "-kib", title + ": backing KiB written per MiB", "KiB/MiB", False, kpm, wbsys)
        add("f-" + case + "-secs", title + ": seconds until clean", "s", False, secs, wbsys)

    # ---- goals ----------------------------------------------------------
    goals = []
    # 1. every workload: hcache at least the best of bcache and dm-cache
    # (the goal); and, where dm-writecache ran (the write
    # workloads), at least it too: a row of its own, so that each verdict
    # says what it compared.
    def best_of(name, title, unit, hb, vals, candidates):
        h = vals.get("hcache")
        others = [(s, vals.get(s)) for s in candidates]
        got = [(s, v) for s, v in others if v is not None]
        if h is None or not got:
            goals.append((name + title, "n/a", None))
            return
        best = (max if hb else min)(got, key=lambda x: x[1])
        ok = h >= best[1] if hb else h <= best[1]
        nd = 2 if unit != "IOPS" else 0
        meas = "hcache %s vs %s %s %s (%.2fx)" % (fmt(h, nd), LABEL[best[0]], fmt(best[1], nd),
                                                  unit, h / best[1] if best[1] else 0)
        missing = [LABEL[s] for s, v in others if v is None]
        if missing:
            meas += "; no figure for " + ", ".join(missing)
        goals.append((name + title, meas, ok))

    for key, title, unit, hb, vals, systems in rows:
        if key in ("a3", "f-dense-kib", "f-seq-kib", "f-dense-secs", "f-seq-secs"):
            continue
        best_of("at least the best of bcache/dm-cache: ", title, unit, hb, vals,
                [s for s in ("bcache", "dmcache") if s in systems])
    for key, title, unit, hb, vals, systems in rows:
        if key in ("a3", "f-dense-kib", "f-seq-kib", "f-dense-secs", "f-seq-secs") or "dmwc" not in systems:
            continue
        best_of("also at least dm-writecache: ", title, unit, hb, vals, ["dmwc"])
    # 2. cold reads at least 0.95x raw backing
    bvals = [r for r in rows if r[0] == "b"][0][4]
    r2 = ratio(bvals.get("hcache"), bvals.get("rawb"))
    goals.append(("cold reads (b) at least 0.95x raw backing",
                  "n/a" if r2 is None else "%.3fx" % r2, None if r2 is None else r2 >= 0.95))
    # 3. no repeated mkfs slower than the first
    h = mk.get("hcache")
    if h and all(x is not None for x in h):
        worst = max(h[1:]) / h[0]
        goals.append(("no repeated mkfs slower than the first (within %.0f%%)" % ((MKFS_SLACK - 1) * 100),
                      "runs %s s; slowest repeat %.2fx the first" % (", ".join(fmt(x, 2) for x in h), worst),
                      worst <= MKFS_SLACK))
    else:
        goals.append(("no repeated mkfs slower than the first", "n/a", None))
    # 4. contiguous dirty data: at most half of bcache's backing writes per MiB
    for case in ("dense", "seq"):
        wpm = wb[case][0]
        r4 = ratio(wpm.get("hcache"), wpm.get("bcache"))
        goals.append(("f %s: backing writes per MiB at most 0.5x bcache's" % case,
                      "hcache %s vs bcache %s (%s)" % (fmt(wpm.get("hcache"), 2), fmt(wpm.get("bcache"), 2),
                                                      "n/a" if r4 is None else "%.3fx" % r4),
                      None if r4 is None else r4 <= 0.5))
    # 5. after the switch, never below raw backing
    if "hcache" in g and "rawb" in g and all(g["hcache"]) and all(g["rawb"]):
        rs = [hh["iops"] / rr["iops"] for hh, rr in zip(g["hcache"], g["rawb"])]
        goals.append(("after the data-set switch (g), never below raw backing",
                      "hcache/raw per run: " + ", ".join("%.2f" % x for x in rs), min(rs) >= 1.0))
    else:
        goals.append(("after the data-set switch (g), never below raw backing", "n/a", None))

    # ---- the device model ----------------------------------------------
    # Every ratio to raw backing assumes the backing disk is slow because of
    # its latency, as a disk is. Under TCG the guest CPU caps any null_blk
    # disk at a few thousand requests a second; if the backing disk's bound
    # (iodepth / latency) is above that cap, it runs as fast as the cache
    # disk and a cache can only add CPU time to it. b, all misses, shows it.
    depth = int(run.env.get("iodepth", "0") or 0)
    nsec = int(run.env.get("back_nsec", "0") or 0)
    bound = depth / (nsec / 1e9) if depth and nsec else None
    rb, rc = bvals.get("rawb"), bvals.get("rawc")
    if bound and rb and rc:
        held = rc >= MODEL_CACHE_OVER_BACK * rb
        model = ("Raw backing in b (every read a miss): %d IOPS, %.0f%% of its latency bound"
                 " (iodepth %d / %.1f ms = %d). Raw cache in b: %d IOPS, %.2fx raw backing. %s"
                 % (rb, 100.0 * rb / bound, depth, nsec / 1e6, bound, rc, rc / rb,
                    "The cache disk is the faster one, as the ratios to raw backing assume."
                    if held else
                    "**The model did not hold** (raw cache under %.2fx raw backing): the backing"
                    " disk was bound by the guest's CPU, not its latency, so the ratios to raw"
                    " backing below measure CPU time, not caching." % MODEL_CACHE_OVER_BACK))
    else:
        model = "n/a: no b figures for the raw disks, or no iodepth and latency in env.txt."

    # ---- report.md ------------------------------------------------------
    out = []
    w = out.append
    kver = run.env.get("kernel", "?")
    w("# hcache benchmark: %s, kernel %s" % (run.env.get("date", "?"), kver))
    w("")
    clock = ("the guest's clock QEMU's instruction count (-icount shift=3,sleep=off: 8 ns an"
             " instruction, idle time skipped), so figures do not move with the host's load"
             if run.env.get("clock") == "icount" else
             "the guest's clock the host's, so figures move with the host's load")
    w("Command: `make bench` (`tests/bench/run.sh`). One QEMU/TCG guest, %s CPU (%s; crc32c: %s),"
      " %s MiB, %s;"
      " backing disks null_blk %s MiB at %.1f ms a request, cache disks %s MiB at %.0f us;"
      " fio %s, 4 KiB, iodepth %s, %s s a run (f: iodepth 8, 32 MiB). Under TCG every I/O"
      " costs CPU time: compare ratios within this run, never absolute figures."
      % (run.env.get("cpus", "?"), run.env.get("cpu_model", "?"), run.env.get("crc32c") or "?",
         int(run.env.get("memory_kib", "0")) // 1024, clock,
         run.env.get("back_mib", "?"), int(run.env.get("back_nsec", "0")) / 1e6,
         run.env.get("cache_mib", "?"), int(run.env.get("cache_nsec", "0")) / 1e3,
         run.env.get("fio", "?"), run.env.get("iodepth", "?"), run.env.get("runtime", "?")))
    w("")
    w("## Systems")
    w("")
    w("| system | set up | what |")
    w("|---|---|---|")
    for s in SYSTEMS:
        i = run.systems.get(s)
        if i is None:
            w("| %s | no | not attempted (the guest stopped before) |" % LABEL[s])
        else:
            w("| %s | %s | %s |" % (LABEL[s], "yes" if i["ok"] else "**no**", i["what"]))
    w("")
    w("## Device model")
    w("")
    w(model)
    w("")
    w("## Goals")
    w("")
    w("| goal | measured | verdict |")
    w("|---|---|---|")
    for name, meas, ok in goals:
        w("| %s | %s | %s |" % (name, meas, verdict(ok)))
    w("")
    w("## Results")
    w("")
    w("Higher is better for IOPS, lower for seconds and writes. `-`: not run for this"
      " system (dm-writecache only caches writes; f needs a write-back cache);"
      " `n/a`: the system or job failed.")
    w("")
    w("| workload | unit | " + " | ".join(LABEL[s] for s in SYSTEMS) + " | hcache/bcache | hcache/raw |")
    w("|---|---|" + "---|" * (len(SYSTEMS) + 2))
    for key, title, unit, hb, vals, systems in rows:
        nd = 0 if unit == "IOPS" else 2
        cells = []
        for s in SYSTEMS:
            if s not in systems:
                cells.append("-")
            elif not run.up(s):
                cells.append("not set up")
            else:
                cells.append(fmt(vals.get(s), nd))
        rb = ratio(vals.get("hcache"), vals.get("bcache"))
        rr = ratio(vals.get("hcache"), vals.get("rawb")) if "rawb" in systems else None
        w("| %s | %s | %s | %s | %s |" % (title, unit, " | ".join(cells), fmt(rb, 3), fmt(rr, 3) if "rawb" in systems else "-"))
    w("")
    w("## Latency (completion latency, microseconds; the median run)")
    w("")
    w("| workload | system | IOPS | p50 | p99 | p99.9 |")
    w("|---|---|---|---|---|---|")
    for wl, s, m in lat:
        if m:
            w("| %s | %s | %s | %s | %s | %s |" % (wl, LABEL[s], fmt(m["iops"]), fmt(m["p50"], 1),
                                              fmt(m["p99"], 1), fmt(m["p999"], 1)))
        else:
            w("| %s | %s | n/a | | | |" % (wl, LABEL[s]))
    w("")
    w("## Warm-up (a) and data-set switch (g), IOPS per run")
    w("")
    w("| system | a1 | a2 | a3 | g1 | g2 | g3 | g3/a3 (recovery) | g/raw per run |")
    w("|---|---|---|---|---|---|---|---|---|")
    for s in reads:
        if not run.up(s):
            w("| %s | not set up | | | | | | | |" % LABEL[s])
            continue
        av = [r["iops"] if r else None for r in run.series("a", s, [1, 2, 3])]
        gv = [r["iops"] if r else None for r in run.series("g", s, [1, 2, 3])]
        rv = [r["iops"] if r else None for r in run.series("g", "rawb", [1, 2, 3])] if run.up("rawb") else [None] * 3
        w("| %s | %s | %s | %s |" % (LABEL[s], " | ".join(fmt(x) for x in av + gv), fmt(ratio(gv[2], av[2]), 2),
                                     ", ".join(fmt(ratio(x, y), 2) for x, y in zip(gv, rv))))
    w("")
    w("![warm-up](warmup-a.png) ![switch](warmup-g.png)")
    w("")
    w("## mkfs.ext4 times (e), seconds, in order")
    w("")
    w("| system | 1 | 2 | 3 | 4 | 5 | slowest repeat / first |")
    w("|---|---|---|---|---|---|---|")
    for s, v in mk.items():
        worst = (max(v[1:]) / v[0]) if all(x is not None for x in v) else None
        w("| %s | %s | %s |" % (LABEL[s], " | ".join(fmt(x, 2) for x in v), fmt(worst, 2)))
    w("")
    w("## Writeback (f), raw counts")
    w("")
    w("Backing requests and sectors from the backing disk's `stat`, while fio wrote"
      " the 32 MiB (writeback paused where the system allows: hcache, bcache;"
      " dm-writecache stays below its watermark; dm-cache cannot be paused) and from"
      " resuming writeback until clean (dm-writecache: its `flush` message; dm-cache: smq"
      " cleans when idle).")
    w("")
    w("| case | system | status | reqs writing | sectors writing | reqs flushing | sectors flushing | s until clean | dirty before |")
    w("|---|---|---|---|---|---|---|---|---|")
    for case in ("dense", "seq"):
        for s in wbsys:
            if not run.up(s):
                continue
            v = run.wb(case, s)
            if not v:
                w("| %s | %s | not run | | | | | | |" % (case, LABEL[s]))
                continue
            w("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                case, LABEL[s], v["status"], v["write_reqs"], v["write_sectors"], v["flush_reqs"],
                v["flush_sectors"], v["secs"], v["dirty_before"]))
    w("")
    cp = os.path.join(d, "counters.txt")
    if os.path.exists(cp):
        w("## hcache and bcache counters after each workload")
        w("")
        w("```")
        for line in open(cp):
            w(line.rstrip("\n").replace("\t", "  "))
        w("```")
        w("")
    hp = os.path.join(d, "hcache-health.txt")
    if os.path.exists(hp):
        w("hcache after the run: " + open(hp).read().strip().replace("\t", ", "))
    else:
        w("hcache after the run: no health record (the guest did not finish)")
    if not os.path.exists(os.path.join(d, "complete")):
        w("")
        w("**The guest did not finish every workload: figures above are partial.**")
    hp = os.path.join(d, "host.txt")
    if os.path.exists(hp):
        w("")
        w("Host: " + open(hp).read().strip().replace("\n", "; "))
    vp = os.path.join(d, "harness-verdict.txt")
    if os.path.exists(vp):
        w("")
        w("Harness verdict: " + open(vp).read().strip().replace("\n", "; "))
    with open(os.path.join(d, "report.md"), "w") as f:
        f.write("\n".join(out) + "\n")

    plot(run, rt, d, reads)
    return 0


def plot(run, rt, d, reads):
    """warmup-a.png and warmup-g.png: IOPS each second across the 3 runs."""
    script = []
    for wl, title in (("a", "a. zipf 1.1 reads from cold: warm-up (3 runs of %g s)" % rt),
                      ("g", "g. after switching to another data set (3 runs of %g s)" % rt)):
        plots = []
        for s in reads:
            if not run.up(s):
                continue
            pts = []
            for r in (1, 2, 3):
                for t, v in run.iops_log(wl, s, r):
                    pts.append((t + (r - 1) * rt, v))
            if not pts:
                continue
            dat = os.path.join(d, "plot-%s-%s.dat" % (wl, s))
            with open(dat, "w") as f:
                for t, v in pts:
                    f.write("%.3f %.1f\n" % (t, v))
            plots.append("'%s' using 1:2 with linespoints title '%s'" % (dat, LABEL[s]))
        if not plots:
            continue
        script += [
            "set terminal pngcairo size 1000,600",
            "set output '%s'" % os.path.join(d, "warmup-%s.png" % wl),
            "set title \"%s\"" % title,
            "set xlabel 'seconds (runs back to back)'",
            "set ylabel 'read IOPS (1 s averages)'",
            "set key outside right",
            "set yrange [0:*]",
            "set grid",
            "plot " + ", ".join(plots),
        ]
    if script:
        try:
            subprocess.run(["gnuplot"], input="\n".join(script) + "\n", text=True, check=True)
        except (OSError, subprocess.CalledProcessError) as e:
            print("report.py: gnuplot failed: %s" % e, file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
