#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# toectl dump (issue 35): the packets a fast path forwards, which tcpdump
# on the router's interfaces never sees, captured to a pcap file.  Client,
# router and server (router.sh); the router's datapath loaded with a 2 MiB
# capture ring (--capture-ring).
#  - a known transfer to port 5201 captured with a flow filter, in the
#    router's namespace: tcpdump -r reads the file, captured + dropped
#    is the number of packets the hook forwarded meanwhile, and the payload
#    reassembled from the file has the transfer's sha256; a second flow
#    (port 5301), forwarded too, is not in the file;
#  - -w - to tcpdump -r - live; -c stops at its count; -t at its time;
#  - the reader stopped (SIGSTOP) while 6 MB go through: the ring fills,
#    the losses are counted and reported (and in -j), captured + dropped
#    still the packets forwarded;
#  - a second dump while one runs is refused naming the first; a dump
#    killed with kill -9 leaves the capture on, the next one switches it
#    off, says so, and works; afterwards it is off; with no next dump,
#    toed (running beside) switches it off;
#  - bad input: no datapath, a bad filter, a namespace or device that does
#    not exist; a bypassed flow named by the filter is said to be one,
#    with its bytes from the counters;
#  - the packets of an offloaded local flow, through the hook's program
#    (BPF_PROG_TEST_RUN), captured whole.
# The tc hook: test_dump_tc.sh.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/router.sh"
plan 32
need_cmd tcpdump
router_test dump || exit 1
endpoints_for_hook || exit 1
fwd_conf "$work/fwd.conf" || exit 1
DUMPPY="python3 $TOE_TOP/selftests/xdp/dump_pcap.py"
# packets (skbs at tc) the hook forwarded: what the capture sees
case $FWD_HOOK in xdp) PKTS=$STAT_XDP_FORWARD ;; tc) PKTS=$STAT_TC_FORWARD ;; esac
defer "nsx r toe-loader unload --pin-dir $PIN; rm -rf $PIN"
nsx r toe-loader load --dev r0 --dev r1 --cgroup "$CG" --pin-dir "$PIN" $DP_HOOK_ARGS --capture-ring 2m >/dev/null &&
	toed --apply "$work/fwd.conf" --pin-dir "$PIN" >/dev/null && fill_neigh "$PIN" ||
	{ fail "load, apply, neighbours"; finish; }
nsx_bg s python3 "$XFER" server --port 5201 --port 5301 >"$work/server.out" 2>&1
wait_for 5 grep -q ready "$work/server.out" || { fail "server"; finish; }
# toed, for its sweep of a capture a killed dump left on
nsx_bg r toed --config "$work/fwd.conf" --pin-dir "$PIN" --run-dir "$work/run" >"$work/toed.log" 2>&1
TOED_PID=$NSX_PID
wait_for 10 test -S "$work/run/toed.sock" || { fail "toed starts"; cat "$work/toed.log"; finish; }
RNS=$(ns_name r)
check "--capture-ring 2m: the ring has 2097152 bytes" \
	test "$(bpftool -j map show pinned "$PIN/$MAP_CAP_RING" | jq .max_entries)" = 2097152
cap_on() { bpftool -j map lookup pinned "$PIN/$MAP_CAP_CONF" key 0 0 0 0 | jq -r .formatted.value.on; }
is_on() { [ "$(cap_on)" = 1 ]; }
is_off() { [ "$(cap_on)" = 0 ]; }
# dump_bg OUT ARGS...: toectl dump in the background until is_on; its pid in DPID
dump_bg() {
	local out=$1; shift
	toectl dump --pin-dir "$PIN" "$@" >"$out.json" 2>"$out.err" &
	DPID=$!
	defer "kill -9 $DPID 2>/dev/null"
	wait_for 5 is_on
}
npk() { stat_of "$PIN" $PKTS; }

# 1. a known transfer, a flow filter, in the router's namespace
dump_bg "$work/a" -w "$work/a.pcap" --flow "$C4,$S4:5201" --netns "$RNS" -j || { fail "dump started"; finish; }
p0=$(npk)
nsx_t 30 c $DUMPPY send --addr $S4 --port 5201 --bytes 500000 >"$work/a.sent"
p1=$(npk)
nsx_t 30 c python3 "$XFER" client --addr $S4 --port 5301 --bytes 300000 >"$work/other.json"
p2=$(npk)
kill -INT $DPID; wait $DPID; rc=$?
echo "# forwarded: $((p1 - p0)) packets of 5201, $((p2 - p1)) of 5301; dump: $(cat "$work/a.json")"
check "dump -w FILE: ends on SIGINT with status 0" test "$rc" = 0
check "  the capture is root's alone (mode $(stat -c %a "$work/a.pcap"): every flow's payload)" \
	test "$(stat -c %a "$work/a.pcap")" = 600
check "  the summary: captured + dropped = the $((p1 - p0)) packets $FWD_NAME forwarded of the flow" \
	jq -e --argjson n $((p1 - p0)) '.captured + .dropped == $n and .matched == $n and .captured > 0' "$work/a.json"
n=$(tcpdump -r "$work/a.pcap" -nn 2>/dev/null | wc -l)
check "  tcpdump -r reads the file: $n packets, as many as captured" test "$n" = "$(jq .captured "$work/a.json")"
sent=$(cat "$work/a.sent")
$DUMPPY check "$work/a.pcap" --port 5201 --bytes "$(jq .bytes <<<"$sent")" --sha256 "$(jq -r .sha256 <<<"$sent")" >"$work/a.check"
echo "# reassembled: $(cat "$work/a.check")"
check "  the payload reassembled from the file has the transfer's sha256" jq -e '.sha_ok and .holes == 0' "$work/a.check"
check "  the other flow (port 5301) was forwarded ($((p2 - p1)) packets), none in the file" \
	test "$((p2 - p1))" -gt 10 -a "$(tcpdump -r "$work/a.pcap" -nn port 5301 2>/dev/null | wc -l)" = 0
check "  the capture is off after it" is_off

# 2. live to stdout, -c: stops by itself at its count
( toectl dump --pin-dir "$PIN" -w - -c 5 --port 5201 2>"$work/b.err" | tcpdump -r - -nn >"$work/b.txt" 2>/dev/null; echo "${PIPESTATUS[0]}" >"$work/b.rc" ) &
bpid=$!
wait_for 5 is_on
nsx_t 30 c $DUMPPY send --addr $S4 --port 5201 --bytes 200000 >/dev/null
wait_for 5 test -s "$work/b.rc"
check "-w - | tcpdump -r -, -c 5: the dump ends by itself, status 0" test "$(cat "$work/b.rc" 2>/dev/null)" = 0
check "  tcpdump read exactly 5 packets, of port 5201" test "$(grep -c '\.5201' "$work/b.txt")" = 5 -a "$(wc -l <"$work/b.txt")" = 5
check "  the summary on stderr says 5 captured" grep -q '^5 packets captured' "$work/b.err"
kill $bpid 2>/dev/null

# 3. -t: a time limit, nothing to capture
t0=$(date +%s%N)
toectl dump --pin-dir "$PIN" -w "$work/c.pcap" -t 0.5 --port 9 2>"$work/c.err"; rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
check "-t 0.5: ends by itself after ${ms} ms, status 0" test "$rc" = 0 -a "$ms" -ge 450 -a "$ms" -lt 5000
check "  an empty capture tcpdump reads" tcpdump -r "$work/c.pcap" -nn

# 4. losses: the reader stopped while 6 MB go through the 2 MiB ring
dump_bg "$work/d" -w "$work/d.pcap" --port 5201 -j || fail "dump started"
kill -STOP $DPID
p0=$(npk)
nsx_t 30 c $DUMPPY send --addr $S4 --port 5201 --bytes 6000000 >/dev/null
p1=$(npk)
kill -CONT $DPID; kill -TERM $DPID; wait $DPID; rc=$?
echo "# forwarded $((p1 - p0)); dump: $(cat "$work/d.json")"
check "reader stopped, ring full: SIGTERM ends it, status 0" test "$rc" = 0
check "  losses reported: dropped > 0, captured + dropped = the $((p1 - p0)) forwarded" \
	jq -e --argjson n $((p1 - p0)) '.dropped > 0 and .captured + .dropped == $n' "$work/d.json"
check "  tcpdump reads as many as captured" \
	test "$(tcpdump -r "$work/d.pcap" -nn 2>/dev/null | wc -l)" = "$(jq .captured "$work/d.json")"

# 5. one dump at a time; kill -9 leaves nothing on for good
dump_bg "$work/e" -w "$work/e.pcap" || fail "dump started"
toectl dump --pin-dir "$PIN" -w "$work/f.pcap" -t 0.2 2>"$work/f.err"; rc=$?
echo "# second dump: $(cat "$work/f.err")"
check "a second dump is refused (status 1), naming the first's pid" \
	eval "test $rc = 1 && grep -q 'another dump runs.*pid $DPID' '$work/f.err'"
kill -STOP $TOED_PID # its sweep held back: the next dump is the one to notice
kill -9 $DPID; wait $DPID 2>/dev/null
check "kill -9: the capture is still on" is_on
# (what the killed dump's capture, on every flow, put in the ring after
# it died: port 5301's packets, which the next dump must not write)
nsx_t 30 c python3 "$XFER" client --addr $S4 --port 5301 --bytes 100000 >/dev/null
toectl dump --pin-dir "$PIN" -w "$work/g.pcap" -c 5 -t 10 --port 5201 -j >"$work/g.json" 2>"$work/g.err" &
gpid=$!
wait_for 5 grep -q 'switched off' "$work/g.err"
nsx_t 30 c $DUMPPY send --addr $S4 --port 5201 --bytes 200000 >/dev/null
wait $gpid; rc=$?
echo "# next dump: $(head -1 "$work/g.err"); $(cat "$work/g.json")"
check "  the next dump works (status 0) and says it switched the stale one off" \
	eval "test $rc = 0 && grep -q 'pid $DPID was left on.*switched off' '$work/g.err'"
tcpdump -r "$work/g.pcap" -nn >"$work/g.txt" 2>/dev/null
check "  its file: the 5 packets of its own filter (port 5201), none of the killed one's leftovers (port 5301): $(grep -c '\.5301' "$work/g.txt") of 5301, $(grep -c '\.5201' "$work/g.txt") of 5201" \
	test "$(wc -l <"$work/g.txt")" = 5 -a "$(grep -c '\.5201' "$work/g.txt")" = 5 -a "$(jq .captured "$work/g.json")" = 5
check "  and the capture is off after it" is_off
kill -CONT $TOED_PID
dump_bg "$work/h" -w "$work/h.pcap" || fail "dump started"
kill -9 $DPID; wait $DPID 2>/dev/null
wait_for 5 is_off
check "kill -9 with toed running: toed switches the capture off within 5 s, and logs it" \
	eval "is_off && grep -q 'toectl dump pid $DPID was left on.*switched off' '$work/toed.log'"

# 6. bad input, nothing changed
check_not "no datapath at --pin-dir: refused" toectl dump --pin-dir "$PIN.none" -w "$work/x.pcap"
toectl dump --pin-dir "$PIN.none" -w "$work/x.pcap" 2>&1 | grep -q "no datapath loaded at $PIN.none" &&
	toectl dump --pin-dir "$PIN" -w "$work/x.pcap" --flow "$C4:80,fd00::1" 2>&1 | grep -q "bad --flow '$C4:80,fd00::1'" &&
	toectl dump --pin-dir "$PIN" -w "$work/x.pcap" --port 70000 2>&1 | grep -q "bad --port '70000'" &&
	toectl dump --pin-dir "$PIN" -w "$work/x.pcap" -s 0 2>&1 | grep -q "bad --snaplen '0'"
check "  messages name the bad input (pin folder, --flow, --port, -s)" test $? = 0
toectl dump --pin-dir "$PIN" -w "$work/x.pcap" --netns "$RNS-none" 2>&1 | grep -q "bad --netns '$RNS-none'" &&
	toectl dump --pin-dir "$PIN" -w "$work/x.pcap" --netns "$RNS" --dev nope0 2>&1 | grep -q "bad --dev 'nope0': no such interface in namespace $RNS"
check "  a namespace or device that is not there, named" test $? = 0
check "  none of them left the capture on" is_off
# a datapath built with make CAPTURE=0: toe-loader sets no_capture in
# toe_cap_conf (struct toe_cap_conf: at byte 76 of 88); toectl dump must
# refuse it, not switch on a capture that no program makes
nocap=$(python3 -c 'import struct; print(" ".join("%02x" % b for b in struct.pack("<76xI8x", 1)))')
bpftool map update pinned "$PIN/$MAP_CAP_CONF" key 0 0 0 0 value hex $nocap
toectl dump --pin-dir "$PIN" -w "$work/n.pcap" -t 1 -j >"$work/n.json" 2>"$work/n.err"; rc=$?
echo "# a datapath without the capture: status $rc, $(cat "$work/n.err")"
check "a datapath built without the capture (no_capture): refused (status 1), saying so" \
	eval "test $rc = 1 && grep -q 'built without the capture (make CAPTURE=0): nothing to dump' '$work/n.err'"
check "  and the capture not switched on, no file written" eval "is_off && ! test -s '$work/n.pcap'"
bpftool map update pinned "$PIN/$MAP_CAP_CONF" key 0 0 0 0 value hex $(python3 -c 'print(" ".join(["00"] * 88))')

# 7. a bypassed flow named by the filter (its toe_byp_flows record, as
# sk_msg writes it: 1234567 bytes sent by 10.9.0.1:4000 to 10.9.0.2:80)
key=$($PKT key 4 10.9.0.1 10.9.0.2 4000 80 0)
vs=$(bpftool -j map show pinned "$PIN/$MAP_BYP_FLOWS" | jq .bytes_value)
val=$(python3 -c "import struct; print(' '.join('%02x' % b for b in struct.pack('<QQ', 0, 1234567).ljust($vs, b'\\0')))")
bpftool map update pinned "$PIN/$MAP_BYP_FLOWS" key hex $key 01 00 00 00 02 00 00 00 value hex $val
toectl dump --pin-dir "$PIN" -w "$work/y.pcap" -t 0.2 --flow 10.9.0.2:80,10.9.0.1 2>"$work/y.err"; rc=$?
echo "# $(head -1 "$work/y.err")"
check "a dump of a bypassed flow says it is one, with its bytes from the counters" \
	eval "test $rc = 0 && grep -q 'flow 10.9.0.1:4000 -> 10.9.0.2:80 is bypassed.*1234567 bytes' '$work/y.err'"
toectl dump --pin-dir "$PIN" -w "$work/z.pcap" -t 0.2 --port 80 -j >"$work/z.json" 2>/dev/null
check "  and in -j: bypassed[] with its bytes" jq -e '.bypassed[0].bytes == 1234567 and .bypassed[0].to == "10.9.0.2:80"' "$work/z.json"

# 8. packets of an offloaded local flow (its record written as sock_ops
# would, as bench/bench_xdp.sh does) through the hook's program, 50 runs
# of BPF_PROG_TEST_RUN (this namespace's: the key's)
prog=$(nsx r toe-loader status -j --pin-dir "$PIN" | jq --arg p $FWD_PROG 'first(.programs[] | select(.name == $p)) | .id')
python3 "$TOE_TOP/selftests/tools/pkt.py" v4off "$work/v4off.bin"
bpftool map update pinned "$PIN/$MAP_FLOWS" key hex $($PKT key 4 10.0.0.1 10.0.0.2 80 12345) value hex $($PKT flow 1)
bpftool map update pinned "$PIN/$MAP_FLOW_FILTER" $($PKT filter 4 10.0.0.1 10.0.0.2 80 12345)
dump_bg "$work/l" -w "$work/l.pcap" --port 80 --hook $FWD_HOOK -j || fail "dump started"
bpftool prog run id "$prog" data_in "$work/v4off.bin" repeat 50 >/dev/null 2>&1
kill -INT $DPID; wait $DPID
echo "# offloaded local flow through $FWD_PROG: $(cat "$work/l.json")"
check "an offloaded local flow's packets through $FWD_PROG: 50 captured" jq -e '.captured == 50 and .dropped == 0' "$work/l.json"
check "  tcpdump reads them, each the frame as it came, byte for byte" eval \
	"test \$(tcpdump -r '$work/l.pcap' -nn 2>/dev/null | wc -l) = 50 && $DUMPPY count '$work/l.pcap' --equal '$work/v4off.bin' | jq -e '.frames == 50'"
finish
