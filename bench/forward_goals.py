#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench/bench_forward.sh's goals: each row of a forward CSV judged against
the kernel rows of the same round (paired), the goal columns appended
(PASS, MISS, or - where a goal does not apply), then a summary per variant
(median of the rows, median of the paired ratios, the goals on those).

  forward_goals.py tput|pps CSV

tput: bench/results/forward.csv, whose rows name their setting (mtu, tso:
the senders' frames; pod: pod to pod through a host); each setting against
its own kernel rows. at least 1.0x plain kernel throughput; the router's CPU per GB at
most 0.6x the kernel with conntrack's; at least 1.5x the kernel with
conntrack where the router is the bottleneck (its CPU busy >= ROUTER_BOUND
of the run in the conntrack row of the same round); where it is not, the
router's capacity stands in: conntrack's router time per GB (per frame)
over the variant's, marked "cap" in the summary.  pod: at least 1.0x the
kernel and less router CPU per GB.  masq_mtu, masq_tso (every variant
with the router masquerading the client): at least 1.0x the kernel's
throughput with the masquerade, the router's CPU per GB at most 0.6x the
kernel's with the masquerade (no conntrack row there).  udp_mtu, udp_gso,
udp_masq (one UDP flow, the router tracking UDP in every variant): as
masq, against the kernel's row with it.  pps: delivered frames at least 1.0x
the kernel, 1.5x conntrack where the router is the bottleneck.

The minimal forwarders (xdp_min, tc_min: bench/progs/, issue 49) where the
round has them: each opentoe row's throughput and program time
(prog_ns_per_run) against its hook's minimal program in the same round
(vs_min, prog_vs_min); goal_min: tc at least 0.95x tc_min's throughput and
at most 1.5x its program time, xdp (xdp_lookup) at most 1.3x xdp_min's
program time.  The minimal rows themselves get their x kernel, no goal."""
import csv
import statistics
import sys

ROUTER_BOUND = 0.85
FAST = ("xdp", "xdp_lookup", "tc")
# each fast path's minimal program (bench/progs/), and the goal against it:
# (throughput ratio, program time ratio) -> ok
MIN = {"xdp": "xdp_min", "xdp_lookup": "xdp_min", "tc": "tc_min"}
MIN_TEST = {"tc": lambda t, p: t >= 0.95 and p <= 1.5,
            "xdp": lambda t, p: p <= 1.3, "xdp_lookup": lambda t, p: p <= 1.3}
COLS = {"tput": "gbit_s", "pod": "gbit_s", "masq": "gbit_s", "pps": "delivered_pps"}
RCOLS = {"tput": "router_s_per_gb", "pod": "router_s_per_gb", "masq": "router_s_per_gb",
         "pps": "router_ns_per_frame"}
# the router CPU goal per kind, on the ratio to its base (pod and masq: the
# kernel's row, tput: conntrack's)
CPU_TEST = {"pod": lambda m: m < 1.0}


def verdict(ok):
    return "PASS" if ok else "MISS"


def ratio(row, base, col):
    try:
        b = float(base[col])
        return float(row[col]) / b if b else None
    except (KeyError, ValueError, TypeError):
        return None


def total(row):
    """The router's and the end hosts' receive per GB (0 if not measured)."""
    try:
        return float(row["router_s_per_gb"]) + float(row.get("rx_s_per_gb") or 0)
    except (KeyError, ValueError):
        return 0


def judge(kind, row, rnd):
    """The goal columns of one row, given the rows of its round by variant."""
    col = COLS[kind]
    out = {"vs_kernel": "", "goal_kernel": "-", "router_cpu_vs": "", "goal_router_cpu": "-",
           "vs_conntrack": "", "router_bound": "", "goal_conntrack": "-", "rtr_rx_vs": "",
           "vs_min": "", "prog_vs_min": "", "goal_min": "-"}
    k, ct = rnd.get("kernel"), rnd.get("conntrack")
    if row["variant"] in MIN.values() and k:  # a reference: its x kernel only
        rk = ratio(row, k, col)
        out["vs_kernel"] = "%.3f" % rk if rk is not None else ""
        return out
    if row["variant"] not in FAST or not k:
        return out
    mn = rnd.get(MIN[row["variant"]])
    if mn:
        rt, rp = ratio(row, mn, col), ratio(row, mn, "prog_ns_per_run")
        out["vs_min"] = "%.3f" % rt if rt is not None else ""
        out["prog_vs_min"] = "%.3f" % rp if rp is not None else ""
        if rt is not None and rp is not None:
            out["goal_min"] = verdict(MIN_TEST[row["variant"]](rt, rp))
    rk = ratio(row, k, col)
    if rk is not None:
        out["vs_kernel"] = "%.3f" % rk
        out["goal_kernel"] = verdict(rk >= 1.0)
    base = k if kind in ("pod", "masq") else ct
    rc = ratio(row, base, RCOLS[kind]) if base else None
    if base and kind != "pps":
        tb = total(base)
        out["rtr_rx_vs"] = "%.3f" % (total(row) / tb) if tb else ""
    if rc is not None:
        out["router_cpu_vs"] = "%.3f" % rc
        out["goal_router_cpu"] = verdict(CPU_TEST.get(kind, lambda m: m <= 0.6)(rc))
    if ct:
        rt = ratio(row, ct, col)
        out["vs_conntrack"] = "%.3f" % rt if rt is not None else ""
        try:
            bound = float(ct["router_util"]) >= ROUTER_BOUND
        except (KeyError, ValueError):
            bound = False
        out["router_bound"] = "yes" if bound else "no"
        cap = ratio(ct, row, RCOLS[kind])  # conntrack's router time / ours
        if bound and rt is not None:
            out["goal_conntrack"] = verdict(rt >= 1.5)
        elif not bound and cap is not None:
            out["goal_conntrack"] = verdict(cap >= 1.5)
    return out


def row_kind(kind, row):
    s = row.get("setting") or ""
    # udp_*: judged as masq is, against the kernel row (with conntrack)
    return "pod" if s == "pod" else "masq" if s.startswith(("masq", "udp")) else kind


def annotate(kind, path):
    """Append the goal columns to the CSV at path; return its rows."""
    with open(path) as f:
        rows = [r for r in csv.DictReader(f)]
    if not rows:
        return rows
    rounds = {}
    for r in rows:
        rounds.setdefault((r.get("setting"), r["round"]), {})[r["variant"]] = r
    fields = [c for c in rows[0].keys()
              if not c.startswith(("vs_", "goal_", "router_cpu_vs", "router_bound", "rtr_rx_vs", "prog_vs_min"))]
    for r in rows:
        r.update(judge(row_kind(kind, r), r, rounds[(r.get("setting"), r["round"])]))
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields + list(judge(kind, rows[0], {}).keys()))
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in w.fieldnames})
    return rows


def med(rows, col):
    xs = []
    for r in rows:
        try:
            xs.append(float(r[col]))
        except (KeyError, ValueError):
            pass
    return statistics.median(xs) if xs else None


def fmt(x, f="%.2f"):
    return f % x if x is not None else "-"


def goal(rows, vcol, gcol, test):
    """The goal on the median of the paired ratios: PASS, MISS or -."""
    if all(r[gcol] == "-" for r in rows):
        return "-"
    m = med(rows, vcol)
    return verdict(test(m)) if m is not None else "-"


def conntrack_goal(rs):
    """The 1.5x conntrack goal on the medians: measured where the router was
    the bottleneck in most rounds, else its capacity ("cap")."""
    if all(r["goal_conntrack"] == "-" for r in rs):
        return "-"
    if sum(r["router_bound"] == "yes" for r in rs) * 2 > len(rs):
        return goal(rs, "vs_conntrack", "goal_conntrack", lambda m: m >= 1.5)
    m = med(rs, "router_cpu_vs")
    return "%s cap %.2f" % (verdict(1 / m >= 1.5), 1 / m) if m else "-"


def min_goal(v, rs):
    """The goal against the minimal program, on the medians of the paired
    ratios: PASS, MISS or - (no minimal row, or not a fast path)."""
    if v not in MIN_TEST or all(r.get("goal_min", "-") == "-" for r in rs):
        return "-"
    t, p = med(rs, "vs_min"), med(rs, "prog_vs_min")
    return verdict(MIN_TEST[v](t, p)) if t is not None and p is not None else "-"


def summary(kind, rows):
    col, rcol = COLS[kind], RCOLS[kind]
    by = {}
    for r in rows:
        by.setdefault(r["variant"], []).append(r)
    order = [v for v in ("kernel", "conntrack", "xdp", "xdp_lookup", "tc", "xdp_min", "tc_min") if v in by]
    order += [v for v in by if v not in order]  # bench-forward STEPS' variants
    rf = "%.3f" if kind != "pps" else "%.0f"
    print("%-10s %12s %19s %11s %5s %7s %9s %8s %4s %6s %4s %8s %-4s %6s %6s %s" % (
        "variant", col, "min-max", "router/GB" if kind != "pps" else "router/frm", "util", "prog ns",
        "prog s/GB", "x kernel", "goal", "cpu x", "goal", "x conntr", "goal", "x min", "prog x", "goal"))
    for v in order:
        rs = by[v]
        xs = [float(r[col]) for r in rs]
        cpu_test = CPU_TEST.get(kind, lambda m: m <= 0.6)
        print("%-10s %12s %9s-%-9s %11s %5s %7s %9s %8s %4s %6s %4s %8s %-4s %6s %6s %s" % (
            v, fmt(med(rs, col)), fmt(min(xs)), fmt(max(xs)), fmt(med(rs, rcol), rf), fmt(med(rs, "router_util")),
            fmt(med(rs, "prog_ns_per_run"), "%.0f"), fmt(med(rs, "prog_s_per_gb"), "%.4f"),
            fmt(med(rs, "vs_kernel")), goal(rs, "vs_kernel", "goal_kernel", lambda m: m >= 1.0),
            fmt(med(rs, "router_cpu_vs")), goal(rs, "router_cpu_vs", "goal_router_cpu", cpu_test),
            fmt(med(rs, "vs_conntrack")), conntrack_goal(rs),
            fmt(med(rs, "vs_min")), fmt(med(rs, "prog_vs_min")), min_goal(v, rs)))
        if kind != "pps" and med(rs, "rx_s_per_gb") is not None:
            print("  router + end hosts' receive %.3f s/GB%s" % (
                statistics.median(total(r) for r in rs),
                ", x %s's %s" % ("the kernel" if kind in ("pod", "masq") else "conntrack", fmt(med(rs, "rtr_rx_vs")))
                if med(rs, "rtr_rx_vs") is not None else ""))
        kf = med(rs, "kernel_forwarded")
        if v in FAST and kf is not None and kf > 1000:
            print("  note: %s: the kernel forwarded %d datagrams a run: the fast path did not take the flow" % (v, kf))


def steps(rows):
    """bench-forward STEPS: each HOOK-STEP variant (HOOK's datapath with STEP
    compiled out) against HOOK in the same round: the step's cost, the
    median of the per-round differences in the program's ns a run, and
    that as a share of HOOK's; then the minimal program's, for scale."""
    rounds = {}
    for r in rows:
        rounds.setdefault(r["round"], {})[r["variant"]] = r
    names = [v for v in dict.fromkeys(r["variant"] for r in rows) if "-" in v]
    if not names:
        return
    print("  per-step cost (STEPS): HOOK minus HOOK-STEP, the program's ns a run, paired by round")
    for v in names + ["xdp_min", "tc_min"]:
        h = v.split("-")[0] if "-" in v else v.split("_")[0]
        d, full = [], []
        for rnd in rounds.values():
            try:
                a, b = float(rnd[h]["prog_ns_per_run"]), float(rnd[v]["prog_ns_per_run"])
            except (KeyError, ValueError):
                continue
            d.append(a - b)
            full.append(a)
        if d:
            print("    %-14s %6.0f ns of %s's %6.0f (%4.1f%%)" % (
                v, statistics.median(d), h, statistics.median(full),
                100 * statistics.median(d) / statistics.median(full) if statistics.median(full) else 0))


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("tput", "pps"):
        sys.exit("usage: forward_goals.py tput|pps CSV")
    rows = annotate(sys.argv[1], sys.argv[2])
    for s in dict.fromkeys(r.get("setting") for r in rows):
        part = [r for r in rows if r.get("setting") == s]
        kind = row_kind(sys.argv[1], part[0])
        if s:
            print("== %s%s" % (s, {"mtu": ": MTU frames from the senders", "tso": ": TSO/GSO at the senders",
                                   "pod": ": pod to pod through a host (TSO/GSO), cpu x against the kernel's",
                                   "masq_mtu": ": masquerade, MTU frames, x and cpu x against the kernel's with it",
                                   "masq_tso": ": masquerade, TSO/GSO, x and cpu x against the kernel's with it",
                                   "masq6_mtu": ": IPv6 masquerade (NAT66), MTU frames, against the kernel's with it",
                                   "masq6_tso": ": IPv6 masquerade (NAT66), TSO/GSO, against the kernel's with it",
                                   "udp_mtu": ": one UDP flow, 1472-byte datagrams, against the kernel with conntrack",
                                   "udp_gso": ": one UDP flow, UDP GSO senders, against the kernel with conntrack",
                                   "udp_masq": ": one UDP flow, masqueraded, against the kernel with it"}.get(s, "")))
        summary(kind, part)
        if sys.argv[1] == "tput":
            steps(part)


if __name__ == "__main__":
    main()
