#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-mem: map memory (issue 8, comparison 6), from bpftool's memlock
# figures of a datapath loaded with --flows 1000000: bytes per flow (the
# flow record, toe_flows, which holds its XDP counters too),
# per neighbour entry (toe_neigh), and the total of every map.  Maps are
# preallocated (hash and LRU), so memlock is what they hold full.
# CSV: bench/results/mem.csv.  Proof (bench/lib.sh): toe_flows has the
# entries its figure is divided by (--flows), and toe_flows and toe_neigh
# a memlock figure; otherwise no figure, exit 1.
# BENCH_SMOKE=1: --flows 10000.
. "$(dirname "$0")/lib.sh"
FLOWS=1000000
smoke && FLOWS=10000
dp_start bmem
dp_load - --flows $FLOWS || exit 1
csv=$BENCH_OUT/mem.csv
echo "map,type,max_entries,bytes_memlock,bytes_per_entry" >"$csv"
for p in "$PIN"/toe_*; do
	bpftool -j map show pinned "$p" |
		jq -r '[.name, .type, .max_entries, .bytes_memlock, (if .max_entries > 0 then (.bytes_memlock / .max_entries | floor) else 0 end)] | @csv' >>"$csv"
done
got=$(bpftool -j map show pinned "$PIN/$MAP_FLOWS" | command jq .max_entries)
proof_grew "$MAP_FLOWS entries (--flows)" 0 "${got:-x}" $FLOWS $FLOWS || bench_fail "$MAP_FLOWS is not of --flows $FLOWS"
for m in $MAP_FLOWS $MAP_NEIGH; do
	got=$(bpftool -j map show pinned "$PIN/$m" | command jq '.bytes_memlock // 0')
	proof_grew "$m: bytes_memlock" 0 "${got:-x}" 1 || bench_fail "$m: bpftool gives no memlock figure"
done
bench_publish
csv=$RES/mem.csv
python3 - "$csv" "$(nproc)" "$MAP_FLOWS" "$MAP_NEIGH" <<'PY'
import csv, sys
rows = {r['map']: r for r in csv.DictReader(open(sys.argv[1]))}
flow_map, neigh_map = sys.argv[3], sys.argv[4]
def b(n): return int(rows[n]['bytes_memlock'])
flows = int(rows[flow_map]['max_entries'])
per_flow = b(flow_map) / flows
total = sum(int(r['bytes_memlock']) for r in rows.values())
print('map memory with --flows %d (%s CPUs):' % (flows, sys.argv[2]))
print('  per flow: %.0f bytes (%s, XDP counters included)' % (per_flow, flow_map))
print('  per neighbour entry: %.0f bytes' % (b(neigh_map) / int(rows[neigh_map]['max_entries'])))
print('  every map: %.1f MiB' % (total / 2**20))
for n, r in sorted(rows.items(), key=lambda x: -int(x[1]['bytes_memlock']))[:6]:
    print('    %-16s %8.1f MiB' % (n, int(r['bytes_memlock']) / 2**20))
PY
