#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-mem: map memory (issue 8, comparison 6), from bpftool's memlock
# figures of a datapath loaded with --flows 1000000: bytes per flow (the
# flow record, toe_flows, which holds its XDP counters too),
# per neighbour entry (toe_neigh), and the total of every map.  Maps are
# preallocated (hash and LRU), so memlock is what they hold full.
# CSV: bench/results/mem.csv.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
export TOE_TOP=$top TOE_BUILD=$top/build
. "$top/selftests/lib.sh"
dp_start bmem
dp_load - --flows 1000000 || exit 1
csv=$top/bench/results/mem.csv
echo "map,type,max_entries,bytes_memlock,bytes_per_entry" >"$csv"
for p in "$PIN"/toe_*; do
	bpftool -j map show pinned "$p" |
		jq -r '[.name, .type, .max_entries, .bytes_memlock, (if .max_entries > 0 then (.bytes_memlock / .max_entries | floor) else 0 end)] | @csv' >>"$csv"
done
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
