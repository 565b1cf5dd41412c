#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""bench/flags_table.py DIR...: the scheduler flag-set comparison table
(bench/run-flags) from the JSON files in DIR: train-WORKLOAD-SET.json
(bench/train --mode all) and torch-MODEL.json (bench/torch_train.py
--flag-sets). Per workload and flag set: the kernel scheduler's on time,
average and peak fast-tier footprint against the untiered run (bench/train:
none; torch_train: off, the same hooks with nothing moved) and step time
against none, then the userspace (move_pages) scheduler's same figures
from the same run, and whether the kernel one is ahead of it (avg and peak
lower, step no higher). Then, per flag set, the worst on time, the mean of
the footprints and of the step, and the workloads where it is ahead.
"(iteration peak)" (bench/train only): the median over the measured
iterations of each one's peak, against none's (the peak column is the
maximum, which one unplanned iteration sets)."""
import glob
import json
import os
import sys

ORDER = ["ref", "ac", "aad", "aadc", "aadcm"]
NAMES = {"ref": "reference", "ac": "anchor+count",
         "aad": "anchor+alap+defer_late",
         "aadc": "anchor+alap+defer_late+count",
         "aadcm": "anchor+alap+defer_late+count+merge"}


def pct(v, ref):
    return 100.0 * (v - ref) / ref if ref else None


def rows_train(path):
    d = json.load(open(path))
    base = os.path.basename(path)[len("train-"):-len(".json")]
    wl, fs = base.rsplit("-", 1)
    c = d["config"]
    wl = "train %s" % wl
    by = {m["mode"]: m for m in d["modes"]}
    out = {}
    for k in ("tiertrain", "userspace"):
        m = by.get(k)
        if not m or m.get("status") != "ok":
            out[k] = None
            continue
        out[k] = dict(ontime=m.get("ontime_pct"),
                      avg=m.get("fast_avg_vs_none_pct"),
                      peak=m.get("fast_peak_vs_none_pct"),
                      ipeak=pct(m.get("fast_peak_median_bytes", 0),
                                by["none"].get("fast_peak_median_bytes")),
                      step=m.get("step_vs_none_pct"))
    note = "%d iters" % c["iterations"]
    if c.get("stopped_early"):
        note += ", stopped early"
    return [(wl, fs, out, note)]


def rows_torch(path):
    d = json.load(open(path))
    c = d["config"]
    wl = "torch %s" % c["model"]
    by = {r["mode"]: r for r in d["results"]}
    off = by.get("off")
    rows = []
    for fs in ORDER:
        out = {}
        for k in ("tiertrain", "userspace"):
            r = by.get("%s@%s" % (k, fs))
            if r is None:
                break
            if not r.get("ok") or not off or not off.get("ok"):
                out[k] = None
                continue
            out[k] = dict(ontime=r.get("ontime_pct"),
                          avg=pct(r["fast_avg"], off["fast_avg"]),
                          peak=pct(r["fast_peak"], off["fast_peak"]),
                          ipeak=None,
                          step=r.get("step_vs_none_pct"))
        if out:
            n = min(r.get("iters_done", 0) for r in d["results"] if r["ok"])
            note = "batch %d, %dx%d, %d iters (%d warm-up)" % (
                c["batch"], c["size"], c["size"], n,
                next(r["warmup"] for r in d["results"] if r["ok"]))
            if any(r.get("stopped_early") for r in d["results"]):
                note += ", stopped early"
            if not d.get("bit_identical"):
                note += ", LOSSES DIFFER"
            rows.append((wl, fs, out, note))
    return rows


def f(v, fmt="%+.1f %%"):
    return "-" if v is None else fmt % v


def ahead(k, u):
    if not k or not u or None in (k["avg"], k["peak"], k["step"],
                                   u["avg"], u["peak"], u["step"]):
        return None
    return k["avg"] < u["avg"] and k["peak"] < u["peak"] and \
        k["step"] <= u["step"]


def main(dirs):
    rows = []
    for d in dirs:
        for p in sorted(glob.glob(os.path.join(d, "train-*.json"))):
            rows += rows_train(p)
        for p in sorted(glob.glob(os.path.join(d, "torch-*.json"))):
            rows += rows_torch(p)
    rows.sort(key=lambda r: (r[0], ORDER.index(r[1]) if r[1] in ORDER
                             else 99))
    print("| workload | flag set | on time | avg fast | peak fast | "
          "(iteration peak) | step | userspace: on time | avg | peak | "
          "(iteration peak) | step | ahead of userspace |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    agg = {}
    for wl, fs, out, note in rows:
        k, u = out.get("tiertrain"), out.get("userspace")
        a = ahead(k, u)
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s "
              "| %s |" % (
                  wl, NAMES.get(fs, fs),
                  f(k and k["ontime"], "%.2f %%"), f(k and k["avg"]),
                  f(k and k["peak"]), f(k and k["ipeak"]), f(k and k["step"]),
                  f(u and u["ontime"], "%.2f %%"), f(u and u["avg"]),
                  f(u and u["peak"]), f(u and u["ipeak"]), f(u and u["step"]),
            "-" if a is None else "yes" if a else "no"))
        g = agg.setdefault(fs, [])
        g.append((wl, k, a))
    print("\nnotes: " + "; ".join(sorted(set(
        "%s: %s" % (wl, note) for wl, fs, out, note in rows))))
    print("\n| flag set | workloads | worst on time | >= 99 % on | mean avg "
          "fast | mean peak fast | mean step | ahead of userspace |")
    print("|---|---|---|---|---|---|---|---|")
    for fs in sorted(agg, key=lambda x: ORDER.index(x) if x in ORDER
                     else 99):
        g = [x for x in agg[fs] if x[1] and x[1]["ontime"] is not None]
        if not g:
            continue
        n = len(g)
        print("| %s | %d | %.2f %% | %d of %d | %+.1f %% | %+.1f %% | "
              "%+.1f %% | %d of %d |" % (
                  NAMES.get(fs, fs), n, min(x[1]["ontime"] for x in g),
                  sum(x[1]["ontime"] >= 99 for x in g), n,
                  sum(x[1]["avg"] for x in g) / n,
                  sum(x[1]["peak"] for x in g) / n,
                  sum(x[1]["step"] for x in g) / n,
                  sum(bool(x[2]) for x in g), n))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["build/bench/flags"]))
