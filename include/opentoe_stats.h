/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * opentoe: the datapath's counters (toe_stats), shared by bpf/ and user/
 * (include/opentoe.h).
 */
#ifndef __OPENTOE_STATS_H
#define __OPENTOE_STATS_H

/*
 * toe_stats: PERCPU_ARRAY of __u64 counters, index enum toe_stat.
 * Indexes below TOE_S_BASE count XDP parse results (enum toe_parse_result
 * in include/toe_parse.h).  From TOE_S_BASE on, one X(ID, name, help) a
 * counter in index order (NULL name: reserved, never counted; XDP counts
 * no packet of a host flow, not even in a global counter, so a host flow
 * costs no map write): the enum, toectl's names (user/toed/show_maps.c)
 * and the metrics' HELP (user/toed/metrics.c) all come from this one
 * table.
 */
#define TOE_STAT_TABLE(X)                                                           \
	X(RESERVED0, NULL, NULL)                                                    \
	X(XDP_FLOW_HIT, "xdp_flow_hit", "XDP packets of an offloaded flow")         \
	X(RESERVED1, NULL, NULL)                                                    \
	X(XDP_CHAINED, "xdp_chained",                                               \
	  "XDP packets handed to the chained program")                              \
	X(XDP_REDIRECT_CPU, "xdp_redirect_cpu",                                     \
	  "XDP packets redirected to a CPU")                                        \
	X(XDP_FORWARD, "xdp_forward", "Packets XDP forwarded")                      \
	X(XDP_NEIGH_MISS, "xdp_neigh_miss",                                         \
	  "XDP forward packets without a usable neighbour")                         \
	X(ESTABLISHED, "established", "Connections decided by sock_ops")            \
	X(CLOSED, "closed", "Tracked connections closed")                           \
	X(FLOW_EVICTED, "flow_evicted",                                             \
	  "Closed connections no longer in toe_flows")                              \
	X(EVENT_DROPPED, "event_dropped",                                           \
	  "Events lost: the ring buffer was full")                                  \
	X(LISTEN, "listen", "listen_start events")                                  \
	X(XDP_FWD_FLOWS, "xdp_fwd_flows",                                           \
	  "Forwarded flows that entered the fast path")                             \
	X(XDP_FWD_ENDED, "xdp_fwd_ended", "Fast paths ended by FIN or RST")         \
	X(XDP_FWD_SLOW, "xdp_fwd_slow",                                             \
	  "Packets of a fast-path flow left to the stack")                          \
	X(BYP_SOCKS, "bypass_sockets", "Sockets put into toe_bypass")               \
	X(BYP_PAIRED, "bypass_paired",                                              \
	  "Accepting ends that found their peer in toe_bypass")                     \
	X(BYP_NOT_LOCAL, "bypass_not_local",                                        \
	  "Bypass asked, peer not local: left to TCP")                              \
	X(BYP_UNSUPPORTED, "bypass_unsupported",                                    \
	  "Bypass asked, socket cannot take it: left to TCP")                       \
	X(BYP_MSGS, "bypass_msgs", "sk_msg verdicts redirected to the peer")        \
	X(BYP_BYTES, "bypass_bytes", "Bytes redirected socket to socket")           \
	X(BYP_TCP_MSGS, "bypass_tcp_msgs",                                          \
	  "sk_msg verdicts of bypass sockets left to TCP")                          \
	X(BYP_TO_TCP, "bypass_to_tcp", "Bypass sockets switched to TCP")            \
	X(BYP_TO_PEER, "bypass_to_peer",                                            \
	  "Bypass sockets switched back to the peer")                               \
	X(XDP_FWD_WRONG_IF, "xdp_fwd_wrong_if",                                     \
	  "Fast-path packets on the other side's interface")                        \
	X(XDP_FWD_READMIT, "xdp_fwd_readmit",                                       \
	  "Fast paths sent back to the stack for re-admission")                     \
	X(FWD_READMITTED, "fwd_readmitted",                                         \
	  "Fast paths admitted again by toe_egress")                                \
	X(FWD_HALF, "fwd_half", "Handshakes the stack forwarded a SYN of")          \
	X(UNTRACKED, "untracked",                                                   \
	  "Connections left untracked (track policy, no rule named them)")          \
	X(TID_TAKEN, "tid_taken",                                                   \
	  "TIDs taken from a module device's pool at offload")                      \
	X(TID_EMPTY, "tid_pool_empty",                                              \
	  "Offloads refused: the module device's TID pool was empty")               \
	X(TID_ROUTE, "tid_route_other_if",                                          \
	  "Offloads refused: the route leaves through another interface "           \
	  "(a tenant's socket's always; listeners too)")                            \
	X(TID_DEMOTED, "tid_demoted",                                               \
	  "Offloaded flows toed demoted to the host (module refused, device gone)") \
	X(XDP_FWD_CACHED, "xdp_fwd_route_cached",                                   \
	  "Packets XDP forwarded by their flow's cached route")                     \
	X(QUOTA, "quota_refused",                                                   \
	  "Connections refused at their namespace's quota")                         \
	X(FWD_NOT_HOME, "fwd_not_home",                                             \
	  "Forwarded handshakes not admitted: routed outside the home namespace")   \
	X(TC_FORWARD, "tc_forward", "Packets (skbs) tc forwarded")                  \
	X(TC_FWD_SEGS, "tc_forward_segs", "Segments in the skbs tc forwarded")      \
	X(TC_FWD_PEER, "tc_fwd_peer",                                               \
	  "skbs tc forwarded into a veth peer's namespace (redirect_peer)")         \
	X(TC_FWD_NEIGH, "tc_fwd_neigh",                                             \
	  "skbs tc forwarded with the kernel resolving the next hop")               \
	X(TC_FWD_SLOW, "tc_fwd_slow",                                               \
	  "tc: left to the stack (TTL, options, no route, egress not opentoe's)")   \
	X(TC_FWD_MTU, "tc_fwd_mtu",                                                 \
	  "tc: over the egress MTU, left to the stack")                             \
	X(TC_FWD_NEIGH_MISS, "tc_fwd_neigh_miss",                                   \
	  "tc: no valid neighbour for a peer redirect, left to the stack")          \
	X(XDP_FWD_STACK_ONLY, "xdp_fwd_stack_only",                                 \
	  "XDP: egress cannot take XDP redirects, left to the stack")               \
	X(EVENT_QUOTA, "event_quota_dropped",                                       \
	  "Events dropped: their namespace had its share of the ring")              \
	X(FWD_BYTES, "fwd_bytes",                                                   \
	  "Bytes the forward path forwarded, both hooks "                           \
	  "(frames, Ethernet included)")                                            \
	X(FWD_CT_WAIT, "fwd_ct_wait",                                               \
	  "Admitted flows' packets left to the stack until conntrack was made "     \
	  "true")                                                                   \
	X(FWD_CT_READY, "fwd_ct_ready",                                             \
	  "Admitted flows taken by the fast path once conntrack was made true")     \
	X(LISTENERS_FULL, "listeners_full",                                         \
	  "Listeners kept on the host: toe_listeners was full")                     \
	X(FWD_NOT_HOST, "fwd_not_host",                                             \
	  "Routed frames the stack would not forward: another host's MAC, a "       \
	  "VLAN tag (left to the stack)")                                           \
	X(FWD_BAD_IPCSUM, "fwd_bad_ipcsum",                                         \
	  "Routed IPv4 packets with a bad header checksum (left to the stack)")     \
	X(FWD_NAT_MOVED, "fwd_nat_moved",                                           \
	  "Suspended flows whose conntrack entry now translates them otherwise: "   \
	  "proved again under it")                                                  \
	X(FWD_NOTRACK, "fwd_notrack",                                               \
	  "Routed packets a NOTRACK rule took out of conntrack: never admitted "    \
	  "(a stateless rewrite the fast path could not repeat)")                   \
	X(FWD_JOINED, "fwd_joined",                                                 \
	  "Routed flows admitted mid-stream: established in conntrack, "            \
	  "forwarded both ways by the stack, their handshake never seen")           \
	X(FWD_JOIN_LIMITED, "fwd_join_limited",                                     \
	  "Mid-stream admissions held back: the flow joined TOE_FWD_JOIN_MAX "      \
	  "times in a minute (a full toe_fwd evicting it)")                         \
	X(TC_FWD_CACHED, "tc_fwd_route_cached",                                     \
	  "skbs tc forwarded by their flow's cached route")

enum toe_stat {
	TOE_S_BASE = 32,
	TOE_S__BEFORE = TOE_S_BASE - 1, /* so that the first X is TOE_S_BASE */
#define TOE_STAT_ENUM(id, name, help) TOE_S_##id,
	TOE_STAT_TABLE(TOE_STAT_ENUM)
#undef TOE_STAT_ENUM
		TOE_S__MAX
};

#define TOE_STATS_MAX 96
_Static_assert(TOE_S__MAX <= TOE_STATS_MAX,
	       "toe_stats is too small for TOE_STAT_TABLE");

#endif /* __OPENTOE_STATS_H */
