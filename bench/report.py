#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make bench-report: one summary table of every comparison in
bench/results/*.csv (median, min-max, ratio to the first variant, which each
benchmark runs as its baseline in the same invocation; "paired": the median
of the per-round ratios, each variant against the baseline run in the same
round), and a gnuplot SVG
per comparison next to its CSV.  Run by `make bench` after the benchmarks;
reads only what they wrote.

  report.py [RESULTS_DIR] [--markdown] [--no-plots] [--only NAME]

--only NAME: the table of one comparison (a COMPARISONS key), nothing
else: what each bench_NAME.sh prints at its end.
"""
import csv
import os
import statistics
import subprocess
import sys

# name -> (title, value column, unit, higher is better, baseline variant)
COMPARISONS = {
    "policy": ("Connection setup rate, sock_ops off vs policy sizes", "conn_per_s", "conn/s", True, "off"),
    "xdp": ("XDP per-packet cost (BPF_PROG_TEST_RUN)", "ns_per_packet", "ns/packet", False, "floor"),
    "xdp_steps": ("XDP forwarded frame, per step compiled out, vs the minimal forwarder (bench_xdp_steps.sh)",
                  "ns_per_packet", "ns/packet", False, "min_forward"),
    "tc_steps": ("tc forwarded frame, per step compiled out, vs the minimal forwarder (bench_xdp_steps.sh)",
                 "ns_per_packet", "ns/packet", False, "min_tc_forward"),
    "sockops_steps": ("toe_sockops per connection (both ends), per step compiled out (bench_sockops_steps.sh)",
                      "ns_per_conn", "ns/connection", False, "full"),
    "forward": ("Routed TCP through a router namespace", "gbit_s", "Gbit/s", True, "kernel"),
    "forward_pps": ("Small packets through a router namespace (64-byte TCP segments)", "delivered_pps",
                    "frames/s", True, "kernel"),
    "apply": ("Policy apply, atomically (toed --apply)", "ms", "ms", False, "rules_1"),
    "hostflow": ("iperf3 host flow across a veth, opentoe attached or not", "gbit_s", "Gbit/s", True, "without"),
    "flowtable": ("Routed TCP in Debian 12's 6.1 guest, measured under emulation (TCG), not wire speed",
                  "gbit_s", "Gbit/s (TCG)", True, "kernel"),
}


def load(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def by_variant(rows, col):
    out = {}
    for r in rows:
        try:
            out.setdefault(r["variant"], []).append(float(r[col]))
        except (KeyError, ValueError):
            pass
    return out


def paired(rows, col, variant, basename):
    """Median of the per-round ratios variant / baseline, or None.

    Each round runs every variant back to back, so a round's ratio is taken
    under one state of this shared VM's noise; the ratio of the medians
    mixes rounds that ran on a quiet and on a busy host."""
    by_round = {}
    for r in rows:
        try:
            by_round.setdefault(r["round"], {})[r["variant"]] = float(r[col])
        except (KeyError, ValueError):
            pass
    rs = [d[variant] / d[basename] for d in by_round.values()
          if variant in d and d.get(basename)]
    return statistics.median(rs) if rs else None


def gnuplot(script, dat, svg):
    """Run a gnuplot script that reads dat and writes svg; None on failure."""
    try:
        subprocess.run(["gnuplot"], input=script.encode(), check=True,
                       stderr=subprocess.DEVNULL)
        return svg
    except (OSError, subprocess.CalledProcessError):
        return None
    finally:
        os.unlink(dat)


def plot(name, title, unit, stats, outdir):
    dat = os.path.join(outdir, name + ".dat")
    svg = os.path.join(outdir, name + ".svg")
    with open(dat, "w") as f:
        for i, (v, med, lo, hi, _) in enumerate(stats):
            f.write('%d "%s" %g %g %g\n' % (i, v, med, lo, hi))
    script = """
set terminal svg size 720,400 dynamic background rgb 'white'
set output '%s'
set title "%s"
set ylabel "%s (median, min-max)"
set style fill solid 0.5
set boxwidth 0.6
set yrange [0:*]
set xtics rotate by -20
unset key
plot '%s' using 1:3:xtic(2) with boxes lc rgb '#4a7bb7', \
     '' using 1:3:4:5 with yerrorbars lc rgb 'black' pt 0
""" % (svg, title, unit, dat)
    return gnuplot(script, dat, svg)


def plot_latency(rows, outdir):
    dat = os.path.join(outdir, "neigh_latency.dat")
    svg = os.path.join(outdir, "neigh_latency.svg")
    xs = sorted(int(r["to_map_write_ns"]) / 1000 for r in rows)
    with open(dat, "w") as f:
        for i, x in enumerate(xs):
            f.write("%g %g\n" % (100.0 * (i + 1) / len(xs), x))
    script = """
set terminal svg size 720,400 dynamic background rgb 'white'
set output '%s'
set title "Neighbour propagation: request to toed's map write"
set xlabel "percentile"
set ylabel "microseconds (log)"
set logscale y
unset key
plot '%s' using 1:2 with lines lw 2 lc rgb '#4a7bb7'
""" % (svg, dat)
    return gnuplot(script, dat, svg)


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


def parse_args(argv):
    """(results folder, markdown?, plots?, the --only comparison or None)."""
    argv = list(argv)
    only = None
    if "--only" in argv:
        i = argv.index("--only")
        only = argv[i + 1] if i + 1 < len(argv) else None
        if only not in COMPARISONS:
            sys.exit("report.py: --only: expected one of %s" % ", ".join(COMPARISONS))
        del argv[i:i + 2]
    args = [a for a in argv if not a.startswith("--")]
    md = "--markdown" in argv
    plots = "--no-plots" not in argv and not only
    outdir = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
    return outdir, md, plots, only


def comparison(rows, col, basename):
    """The rows of one comparison, summed up: (stats, pairs), or None when no
    row has the value column.  stats: (variant, median, min, max, ratio of
    medians), the baseline first; pairs: each variant's paired ratio."""
    groups = by_variant(rows, col)
    if not groups:
        return None
    if basename in groups:  # baseline first, then the order the CSV has
        groups = dict([(basename, groups[basename])] +
                      [(k, v) for k, v in groups.items() if k != basename])
    first = next(iter(groups))
    base = statistics.median(groups[first])
    stats = []
    for v, xs in groups.items():
        med = statistics.median(xs)
        stats.append((v, med, min(xs), max(xs), med / base if base else 0))
    return stats, [paired(rows, col, v, first) for v in groups]


def comparisons(outdir, only, plots, made):
    """(title, unit, stats, higher is better, pairs) of every comparison with
    a CSV in outdir (only that one with --only); its plot into made."""
    lines = []
    for name, (title, col, unit, higher, basename) in COMPARISONS.items():
        if only and name != only:
            continue
        path = os.path.join(outdir, name + ".csv")
        if not os.path.exists(path):
            continue
        rows = load(path)
        if not rows:
            continue
        if col is None:  # a CSV with its own metric column per row
            col = [c for c in rows[0].keys() if c not in ("variant", "round")][0]
            unit = col
        parts = settings(rows, col, basename, title)
        for t, stats, pairs in parts:
            lines.append((t, unit, stats, higher, pairs))
        if plots and parts:
            every = [s for _, stats, _ in parts for s in stats]
            svg = plot(name, title, unit, every, outdir)
            if svg:
                made.append(svg)
    return lines


def settings(rows, col, basename, title):
    """[(title, stats, pairs)]: one comparison, or one per value of a CSV's
    "setting" column (bench-forward's sender settings and topologies), each
    against its own baseline; there the variants are named SETTING/VARIANT
    in stats, for the one plot of them all."""
    if "setting" not in rows[0]:
        summed = comparison(rows, col, basename)
        return [(title, summed[0], summed[1])] if summed else []
    out = []
    for s in dict.fromkeys(r["setting"] for r in rows):
        summed = comparison([r for r in rows if r["setting"] == s], col, basename)
        if summed:
            stats = [("%s/%s" % (s, st[0]),) + tuple(st[1:]) for st in summed[0]]
            out.append(("%s, setting %s" % (title, s), stats, summed[1]))
    return out


def neigh_latency(outdir, plots, made):
    """The neighbour propagation line of neigh_latency.csv, or None; its
    plot into made."""
    lat = os.path.join(outdir, "neigh_latency.csv")
    if not os.path.exists(lat):
        return None
    rows = load(lat)
    w = [int(r["to_map_write_ns"]) / 1000 for r in rows]
    if not w:
        return None
    if plots:
        svg = plot_latency(rows, outdir)
        if svg:
            made.append(svg)
    return "Neighbour propagation (%d samples): request to map write p50 %.1f us, p99 %.1f us" % (
        len(w), pct(w, .5), pct(w, .99))


def print_tables(lines, md):
    """One table per comparison: plain text, or markdown for docs/benchmarks.md."""
    fmt = lambda x: "-" if x is None else "%.2f" % x
    for title, unit, stats, higher, pairs in lines:
        if md:
            print("\n**%s** (%s; %s is better)\n" % (title, unit, "higher" if higher else "lower"))
            print("| variant | median | min-max | ratio | paired |")
            print("|---|---|---|---|---|")
            for (v, med, lo, hi, r), pr in zip(stats, pairs):
                print("| %s | %.4g | %.4g-%.4g | %.2f | %s |" % (v, med, lo, hi, r, fmt(pr)))
        else:
            print("\n%s (%s; %s is better)" % (title, unit, "higher" if higher else "lower"))
            print("  %-28s %12s %21s %7s %7s" % ("variant", "median", "min-max", "ratio", "paired"))
            for (v, med, lo, hi, r), pr in zip(stats, pairs):
                print("  %-28s %12.4g %10.4g-%-10.4g %7.2f %7s" % (v, med, lo, hi, r, fmt(pr)))


# bench-xdp's goals (issue 49): variant -> [(against, at most)], any one met
XDP_GOALS = {"host_flow": [("floor", 1.5)],
             "offloaded_flow": [("floor", 2.0), ("min_forward", 1.3)]}


def xdp_goals(outdir, md):
    """bench-xdp's goals on the paired ratios (each round's ratio, median):
    a line per goal, with the time over the floor; none without xdp.csv."""
    path = os.path.join(outdir, "xdp.csv")
    if not os.path.exists(path):
        return
    rows = load(path)
    have = {r["variant"] for r in rows}
    out = []
    for v, goals in XDP_GOALS.items():
        if v not in have:
            continue
        parts, ok = [], False
        for base, limit in goals:
            if base not in have:
                continue
            pr = paired(rows, "ns_per_packet", v, base)
            if pr is None:
                continue
            ok = ok or pr <= limit
            parts.append("%.2fx %s (goal <= %.1fx)" % (pr, base, limit))
        over = [x - f for x, f in zip(by_variant(rows, "ns_per_packet").get(v, []),
                                      by_variant(rows, "ns_per_packet").get("floor", []))]
        if parts:
            out.append("  %-16s %s: %s; %s ns over the floor" % (
                v, "PASS" if ok else "MISS", ", ".join(parts),
                "%.0f" % statistics.median(over) if over else "-"))
    if out:
        print("\n%sbench-xdp goals (paired ratios; either goal of a row met: PASS)%s" % (
            "**" if md else "", "**\n" if md else ""))
        for line in out:
            print(line)


def report_neigh_rate(outdir):
    """neigh_rate.csv: the highest paced update rate with no overrun."""
    rate = os.path.join(outdir, "neigh_rate.csv")
    if os.path.exists(rate):
        ok = [r for r in load(rate) if r["overruns"] == "0"]
        if ok:
            print("Neighbour updates: highest paced rate with no overrun: %s/s" %
                  max(ok, key=lambda r: float(r["rate_per_s"]))["achieved_per_s"])


def report_bypass(outdir, plots):
    """bypass.csv (make bench-bypass): each workload's ratio to TCP loopback
    and to AF_UNIX.  Returns the SVG drawn, or None."""
    byp = os.path.join(outdir, "bypass.csv")
    if not os.path.exists(byp):
        return None
    with open(byp) as f:
        rows = list(csv.DictReader(l for l in f if not l.startswith('"#') and not l.startswith('#')))
    rows = [r for r in rows if r.get("variant") == "bypass"]
    if not rows:
        return None
    print("\nLocal bypass (make bench-bypass): ratio to TCP loopback and to AF_UNIX")
    print("  %-10s %-9s %14s %9s %9s" % ("workload", "pinning", "median", "x tcp_lo", "x unix"))
    stats = []
    for r in rows:
        if not r["ratio_tcp_lo"]:  # a row whose runs failed (its status says why)
            print("  %-10s %-9s %14s %9s %9s  %s" % (r["workload"], r["pinning"], "-", "-", "-",
                                                  r.get("status", "")))
            continue
        print("  %-10s %-9s %14s %9s %9s" % (r["workload"], r["pinning"], r["median"],
                                            r["ratio_tcp_lo"], r["ratio_unix"]))
        v = float(r["ratio_tcp_lo"])
        stats.append(("%s %s" % (r["workload"], r["pinning"]), v, v, v, v))
    if not plots:
        return None
    return plot("bypass", "Local bypass: throughput ratio to TCP loopback", "x TCP loopback",
                stats, outdir)


def main():
    outdir, md, plots, only = parse_args(sys.argv[1:])
    made = []
    lines = comparisons(outdir, only, plots, made)
    latline = None if only else neigh_latency(outdir, plots, made)
    print_tables(lines, md)
    if only in (None, "xdp"):
        xdp_goals(outdir, md)
    if only:
        return
    if latline:
        print("\n" + latline)
    report_neigh_rate(outdir)
    apps = os.path.join(outdir, "apps.csv")
    for svg in (report_bypass(outdir, plots),
                report_apps(apps, md, plots, outdir) if os.path.exists(apps) else None):
        if svg:
            made.append(svg)
    for svg in made:
        print("plot: %s" % os.path.relpath(svg))


def report_apps(path, md, plots, outdir):
    """apps.csv (make bench-apps): each real server's figure plain and
    through the bypass, the ratio bypass / plain, and a plot of the paired
    ratios (whiskers: the lowest and highest round, from apps_runs.csv; a
    variant with a failed run is labelled FAILED, its passing rounds
    shown).  Its rows have their own units, so it is not a COMPARISONS
    entry; its first line is a comment.  Returns the SVG drawn, or None."""
    with open(path) as f:
        rows = list(csv.DictReader(l for l in f if not l.startswith('"#') and not l.startswith('#')))
    by = {}
    for r in rows:
        by.setdefault(r["app"], {})[r["variant"]] = r
    if not by:
        return None
    rounds = round_ratios(os.path.join(os.path.dirname(path), "apps_runs.csv"))
    head = ("app", "unit", "plain", "bypass", "ratio", "paired", "bypassed", "status")
    if md:
        print("\n**Real servers, plain and through the local bypass** (make bench-apps; higher is better)\n")
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
    else:
        print("\nReal servers, plain and through the local bypass (make bench-apps; higher is better)")
        print("  %-15s %-7s %12s %12s %6s %6s %8s  %s" % head)
    stats = []
    for app, vs in by.items():
        p, b = vs.get("plain", {}), vs.get("bypass", {})
        bad = [v["status"] for v in (p, b) if v and v.get("status", "ok") != "ok"]
        status = "; ".join("%s %s" % (v, s) for v, s in zip(("plain", "bypass"), (p.get("status"), b.get("status")))
                           if s and s != "ok") or "ok"
        share = b.get("byp_share") or ""
        share = "%.0f%%" % (100 * float(share)) if share else "-"
        cells = (app, b.get("unit") or p.get("unit", ""), p.get("median") or "-", b.get("median") or "-",
                 b.get("ratio_plain") or "-", b.get("paired_ratio") or "-", share, status)
        if md:
            print("| " + " | ".join(cells) + " |")
        else:
            print("  %-15s %-7s %12s %12s %6s %6s %8s  %s" % cells)
        try:
            v = float(b.get("paired_ratio") or b["ratio_plain"])
        except (KeyError, ValueError):
            v = None
        if v is not None:  # a failed variant's passing rounds, labelled
            lo, hi = rounds.get(app, (v, v))
            stats.append((app + (" (FAILED)" if bad else ""), v, lo, hi, v))
    if not plots or not stats:
        return None
    # bars: the paired ratio, whiskers: the lowest and highest round
    return plot("apps", "Real servers: through the local bypass / plain",
                "bypass / plain per round", stats, outdir)


def round_ratios(path):
    """app -> (min, max) of the per-round ratios bypass / plain in
    apps_runs.csv (one line per run; rounds where both variants passed)."""
    try:
        with open(path) as f:
            runs = list(csv.DictReader(l for l in f if not l.startswith('"#') and not l.startswith('#')))
    except OSError:
        return {}
    val = {}
    for r in runs:
        if r.get("status") == "ok":
            try:
                val[(r["app"], r["round"], r["variant"])] = float(r["value"])
            except (KeyError, ValueError):
                pass
    out = {}
    for (app, rnd, v), x in val.items():
        p = val.get((app, rnd, "plain"))
        if v == "bypass" and p:
            out.setdefault(app, []).append(x / p)
    return {a: (min(xs), max(xs)) for a, xs in out.items()}


if __name__ == "__main__":
    main()
