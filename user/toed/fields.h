/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toed: the metric families of /metrics and the counters of toectl stats'
 * daemon and control sections, each described once (issue 47): the text
 * and JSON of toectl stats (show_state.c), the Prometheus exposition
 * (metrics.c) and build/toe-tables (metric_families, counters; through it
 * scripts/counters.py and the tests) all walk these tables.
 *
 * TOE_METRIC_FAMILIES: X(ID, name, type, help)
 *   ID     F_ID in enum toe_fam, the families' order in /metrics
 *   name   the family's name; type counter, gauge or histogram
 *   help   its HELP line
 *
 * TOE_DAEMON_COUNTERS, TOE_CONTROL_COUNTERS: X(name, FAM, labels, value)
 *   name   the counter's key in toectl stats (text and -j), in its order
 *   FAM    the family it is exported in (F_FAM); NONE: not exported by
 *          this row (the same counter as the other section's row)
 *   labels its sample's labels ("k=\"v\"" pairs), or NULL
 *   value  its value: an expression of show_state.c's daemon_counters or
 *          control_counters (d: the toed; s: its rtnetlink counters; ku:
 *          the module's usage; ms: the metrics endpoint's counters)
 * A new counter is one row here: toectl stats shows it, /metrics exports
 * it, toe-tables dumps it.
 */
#ifndef __TOE_FIELDS_H
#define __TOE_FIELDS_H

/* clang-format off */
#define TOE_METRIC_FAMILIES(X) \
	X(BUILD, "opentoe_build_info", "gauge", \
	  "toed's version, as a label; always 1") \
	X(START, "opentoe_toed_start_time_seconds", "gauge", \
	  "When toed started, in seconds since the epoch") \
	X(DP_LOADED, "opentoe_datapath_loaded", "gauge", \
	  "1 while toed has the datapath open (toe-loader load), else 0") \
	X(PARSE, "opentoe_xdp_parse_packets_total", "counter", \
	  "Packets XDP parsed, by the parser's result") \
	X(DEV_CAP, "opentoe_device_capacity_connections", "gauge", \
	  "A device's capacity: the connections it may offload at once (nconn)") \
	X(DEV_LIVE, "opentoe_device_live_connections", "gauge", \
	  "Connections offloaded on a device now") \
	X(DEV_OFF, "opentoe_device_offloaded_total", "counter", \
	  "Connections ever offloaded on a device") \
	X(DEV_REF, "opentoe_device_refused_total", "counter", \
	  "Connections a device refused, by reason") \
	X(DEV_REL, "opentoe_device_released_total", "counter", \
	  "A device's slots released at close") \
	X(DEV_TIDS_USED, "opentoe_device_kmod_tids_used", "gauge", \
	  "TIDs the kernel module has in use on its device") \
	X(DEV_TIDS_HELD, "opentoe_device_kmod_tids_held", "gauge", \
	  "Of those, the TIDs toed holds for its flows") \
	X(POL_SERIAL, "opentoe_policy_serial", "gauge", \
	  "Serial of the policy in force (counts applies since the maps were made)") \
	X(POL_RULES, "opentoe_policy_rules", "gauge", \
	  "Rules of the policy in force") \
	X(POL_DUR, "opentoe_policy_apply_duration_seconds", "gauge", \
	  "How long toed's last successful apply took") \
	X(CLOSED, "opentoe_flows_closed_total", "counter", \
	  "Tracked connections closed (flow_closed events), by the decision they had") \
	X(REFUSED, "opentoe_flows_refused_total", "counter", \
	  "Connections policy sent to a device that did not take them (flow_refused events), by reason") \
	X(NLAT, "opentoe_neigh_propagation_seconds", "histogram", \
	  "From reading a neighbour event off rtnetlink to its toe_neigh map write") \
	X(FWD_OPEN, "opentoe_fwd_flows", "gauge", \
	  "Routed flows on the fast path now (toe_fwd), by device, hook, protocol (tcp, udp) and state (fast, readmit, ct_wait)") \
	X(FWD_RET, "opentoe_fwd_returned_flows_total", "counter", \
	  "Fast-path flows given back to the stack (fwd_returned), by hook and reason") \
	X(FWD_END, "opentoe_fwd_ended_flows_total", "counter", \
	  "Fast paths ended (fwd_ended), by hook and reason") \
	X(FWD_RET_PKTS, "opentoe_fwd_returned_packets_total", "counter", \
	  "Packets (tc: skbs) of fast-path flows left to the stack, by hook and reason") \
	X(BYP_TCP, "opentoe_bypass_to_tcp_total", "counter", \
	  "Bypass sockets switched to TCP, by reason") \
	X(DP_REFUSED, "opentoe_datapath_refused_total", "counter", \
	  "Connections sock_ops refused (toe_reasons, counted even when the event is lost), by reason") \
	X(EVENTS, "opentoe_toed_events_total", "counter", \
	  "Datapath ring-buffer events toed read, by type") \
	X(EV_BAD, "opentoe_toed_events_malformed_total", "counter", \
	  "Ring-buffer events toed could not read") \
	X(POL_APPLIES, "opentoe_policy_applies_total", "counter", \
	  "Policy applies by toed (start, SIGHUP, toectl reload, module), by result") \
	X(NEIGH_UPD, "opentoe_neigh_updates_total", "counter", \
	  "toe_neigh map writes (set) and deletes (delete)") \
	X(ADDR_UPD, "opentoe_local_address_updates_total", "counter", \
	  "toe_local_addr map writes (set) and deletes (delete)") \
	X(LINK, "opentoe_netlink_link_events_total", "counter", \
	  "rtnetlink link events") \
	X(NL_MSG, "opentoe_netlink_messages_total", "counter", \
	  "rtnetlink messages read") \
	X(NL_BAD, "opentoe_netlink_malformed_total", "counter", \
	  "rtnetlink messages too short or without a key") \
	X(NL_OVR, "opentoe_netlink_overruns_total", "counter", \
	  "rtnetlink receive-queue overruns (ENOBUFS); each costs a resync") \
	X(RESYNC, "opentoe_neigh_resyncs_total", "counter", \
	  "Full neighbour and address dumps") \
	X(DUMP_RESTART, "opentoe_neigh_dump_restarts_total", "counter", \
	  "Dumps interrupted by a change (NLM_F_DUMP_INTR)") \
	X(MAP_ERR, "opentoe_neigh_map_errors_total", "counter", \
	  "Failed neighbour or address map writes") \
	X(CTL_REQ, "opentoe_control_requests_total", "counter", \
	  "Control-socket requests answered") \
	X(CTL_BAD, "opentoe_control_requests_bad_total", "counter", \
	  "Control-socket requests refused as malformed") \
	X(CTL_REFUSED, "opentoe_control_clients_refused_total", "counter", \
	  "Control-socket clients refused (not root)") \
	X(CTL_TIMEOUT, "opentoe_control_clients_timed_out_total", "counter", \
	  "Control-socket clients dropped at their deadline") \
	X(CTL_OVER, "opentoe_control_clients_over_limit_total", "counter", \
	  "Control-socket clients refused: too many at once") \
	X(CTL_NOFD, "opentoe_control_clients_no_fd_total", "counter", \
	  "Control-socket clients refused: toed out of file descriptors") \
	X(MON_LOST, "opentoe_monitor_lines_lost_total", "counter", \
	  "Monitor lines dropped because a client was slow") \
	X(DP_RELOADS, "opentoe_datapath_reloads_total", "counter", \
	  "Datapath reloads toed noticed") \
	X(DP_UNLOADS, "opentoe_datapath_unloads_total", "counter", \
	  "Datapath unloads toed noticed") \
	X(KMOD_LOADED, "opentoe_kmod_loaded", "gauge", \
	  "1 while the kernel module is loaded") \
	X(KMOD_DEVS, "opentoe_kmod_devices", "gauge", \
	  "The kernel module's devices") \
	X(KMOD_TIDS_HELD, "opentoe_kmod_tids_held", "gauge", \
	  "TIDs toed holds in the kernel module") \
	X(KMOD_TIDS_USED, "opentoe_kmod_tids_used", "gauge", \
	  "TIDs in use in the kernel module, all devices") \
	X(KMOD_L2T_USED, "opentoe_kmod_l2t_used", "gauge", \
	  "L2T entries in use in the kernel module") \
	X(KMOD_L2T, "opentoe_kmod_l2t_entries", "gauge", \
	  "The module's L2T entries that agree or differ with toe_neigh") \
	X(KMOD_BIND, "opentoe_kmod_tid_binds_total", "counter", \
	  "Binds of a pool's TID to its flow asked of the kernel module, by result") \
	X(KMOD_BIND_REFUSED, "opentoe_kmod_tid_bind_refused_total", "counter", \
	  "Pool TIDs the kernel module refused to bind (all results but ok)") \
	X(KMOD_FREE, "opentoe_kmod_tid_frees_total", "counter", \
	  "TIDs given back to the kernel module, by result") \
	X(KMOD_ADOPTED, "opentoe_kmod_tids_adopted_total", "counter", \
	  "TIDs adopted from a previous toed") \
	X(KMOD_ORPHANED, "opentoe_kmod_tids_orphaned_total", "counter", \
	  "TIDs found without a flow and freed") \
	X(KMOD_LOST, "opentoe_kmod_tids_lost_total", "counter", \
	  "TIDs the module dropped under toed") \
	X(KMOD_STALE, "opentoe_kmod_tid_stale_events_total", "counter", \
	  "Closes and offloads of TIDs a reconcile dealt with, not acted on again") \
	X(KMOD_EVENTS, "opentoe_kmod_events_total", "counter", \
	  "Kernel module genetlink events, by type") \
	X(KMOD_OVERRUNS, "opentoe_kmod_overruns_total", "counter", \
	  "Kernel module event-socket overruns") \
	X(KMOD_POOL, "opentoe_kmod_tid_pool_total", "counter", \
	  "TIDs toed reserved into the datapath's pools, and gave back unused") \
	X(KMOD_DEMOTED, "opentoe_kmod_flows_demoted_total", "counter", \
	  "Offloaded flows toed sent to the host: the module refused their TID, or their device went") \
	X(KMOD_LSN_HELD, "opentoe_kmod_listeners_held", "gauge", \
	  "Listeners toed holds a server TID for in the kernel module") \
	X(KMOD_LSN, "opentoe_kmod_listen_total", "counter", \
	  "Server TID requests to the kernel module, by result") \
	X(MHTTP_BIND, "opentoe_metrics_bind_failures_total", "counter", \
	  "Binds of --metrics' address that failed (retried)") \
	X(MHTTP_CLOSED, "opentoe_metrics_connections_closed_total", "counter", \
	  "Metrics connections toed closed, by why") \
	X(LOG_SUPP, "opentoe_toed_log_suppressed_total", "counter", \
	  "Repeated log lines toed's rate limit held back") \
	X(RECONCILE, "opentoe_toed_reconciles_total", "counter", \
	  "Reconciles of TIDs and listeners, by why") \
	X(RECONCILED, "opentoe_toed_reconciled_total", "counter", \
	  "TIDs and listeners a reconcile put right") \
	X(ROUTE_CHG, "opentoe_fwd_route_changes_total", "counter", \
	  "Route changes that made the forward path's cached routes stale") \
	X(CT_LOST, "opentoe_fwd_ct_events_lost_total", "counter", \
	  "Times conntrack's destroy events were lost (socket overrun): every fast-path flow proved again") \
	X(CT_SWEPT, "opentoe_fwd_ct_swept_total", "counter", \
	  "Flows left waiting for conntrack (admission unread, word lost) that a sweep gave the fast path")

#define TOE_DAEMON_COUNTERS(X) \
	X("events_listen_start", EVENTS, "type=\"listen_start\"", \
	  d->evs.ev[TOE_EV_LISTEN_START]) \
	X("events_listen_stop", EVENTS, "type=\"listen_stop\"", \
	  d->evs.ev[TOE_EV_LISTEN_STOP]) \
	X("events_flow_offloaded", EVENTS, "type=\"flow_offloaded\"", \
	  d->evs.ev[TOE_EV_FLOW_OFFLOADED]) \
	X("events_flow_refused", EVENTS, "type=\"flow_refused\"", \
	  d->evs.ev[TOE_EV_FLOW_REFUSED]) \
	X("events_flow_closed", EVENTS, "type=\"flow_closed\"", \
	  d->evs.ev[TOE_EV_FLOW_CLOSED]) \
	X("events_malformed", EV_BAD, NULL, \
	  d->evs.ev_bad) \
	X("policy_applied", POL_APPLIES, "result=\"ok\"", \
	  d->ap.reload_ok) \
	X("policy_failed", POL_APPLIES, "result=\"failed\"", \
	  d->ap.reload_failed) \
	X("neigh_set", NEIGH_UPD, "op=\"set\"", \
	  s->neigh_set) \
	X("neigh_del", NEIGH_UPD, "op=\"delete\"", \
	  s->neigh_del) \
	X("addr_set", ADDR_UPD, "op=\"set\"", \
	  s->addr_set) \
	X("addr_del", ADDR_UPD, "op=\"delete\"", \
	  s->addr_del) \
	X("link_events", LINK, NULL, \
	  s->link_events) \
	X("netlink_messages", NL_MSG, NULL, \
	  s->messages) \
	X("netlink_malformed", NL_BAD, NULL, \
	  s->malformed) \
	X("netlink_overruns", NL_OVR, NULL, \
	  s->enobufs) \
	X("resyncs", RESYNC, NULL, \
	  s->resyncs) \
	X("dump_restarts", DUMP_RESTART, NULL, \
	  s->dump_restarts) \
	X("map_errors", MAP_ERR, NULL, \
	  s->map_errors) \
	X("requests", NONE, NULL, \
	  d->ctl.cst.requests) \
	X("clients_refused", NONE, NULL, \
	  d->ctl.cst.clients_refused) \
	X("monitor_lost", NONE, NULL, \
	  d->mon.lost) \
	X("kmod_loaded", KMOD_LOADED, NULL, \
	  toe_genl_up(&d->gl)) \
	X("kmod_devices", KMOD_DEVS, NULL, \
	  (__u64)d->kmod.nkdevs) \
	X("kmod_tids_held", KMOD_TIDS_HELD, NULL, \
	  tids_held_all(&d->kmod)) \
	X("kmod_tids_used", KMOD_TIDS_USED, NULL, \
	  ku.tids) \
	X("kmod_l2t_used", KMOD_L2T_USED, NULL, \
	  ku.l2t) \
	X("kmod_l2t_agree", KMOD_L2T, "state=\"agree\"", \
	  ku.l2t_agree) \
	X("kmod_l2t_differ", KMOD_L2T, "state=\"differ\"", \
	  ku.l2t_differ) \
	X("kmod_tid_bound", KMOD_BIND, "result=\"ok\"", \
	  d->kmod.kst.alloc) \
	X("kmod_tid_bind_nospc", KMOD_BIND, "result=\"nospc\"", \
	  d->kmod.kst.alloc_nospc) \
	X("kmod_tid_bind_unreach", KMOD_BIND, "result=\"unreach\"", \
	  d->kmod.kst.alloc_unreach) \
	X("kmod_tid_bind_failed", KMOD_BIND, "result=\"failed\"", \
	  d->kmod.kst.alloc_failed) \
	X("kmod_tid_free", KMOD_FREE, "result=\"ok\"", \
	  d->kmod.kst.freed) \
	X("kmod_tid_free_failed", KMOD_FREE, "result=\"failed\"", \
	  d->kmod.kst.free_failed) \
	X("kmod_tids_adopted", KMOD_ADOPTED, NULL, \
	  d->kmod.kst.adopted) \
	X("kmod_tids_orphaned", KMOD_ORPHANED, NULL, \
	  d->kmod.kst.orphans) \
	X("kmod_tids_lost", KMOD_LOST, NULL, \
	  d->kmod.kst.lost) \
	X("kmod_dev_events", KMOD_EVENTS, "type=\"dev\"", \
	  d->gl.st.dev_events) \
	X("kmod_l2t_events", KMOD_EVENTS, "type=\"l2t\"", \
	  d->gl.st.l2t_events) \
	X("kmod_family_events", KMOD_EVENTS, "type=\"family\"", \
	  d->gl.st.family_events) \
	X("kmod_overruns", KMOD_OVERRUNS, NULL, \
	  d->gl.st.overruns) \
	X("kmod_tids_reserved", KMOD_POOL, "op=\"reserved\"", \
	  d->kmod.kst.reserved) \
	X("kmod_tids_unreserved", KMOD_POOL, "op=\"unreserved\"", \
	  d->kmod.kst.unreserved) \
	X("kmod_flows_demoted", KMOD_DEMOTED, NULL, \
	  d->kmod.kst.demoted) \
	X("kmod_tid_bind_refused", KMOD_BIND_REFUSED, NULL, \
	  d->kmod.kst.bind_refused) \
	X("kmod_tid_stale", KMOD_STALE, NULL, \
	  d->kmod.kst.stale) \
	X("kmod_listeners_held", KMOD_LSN_HELD, NULL, \
	  listeners_held_all(&d->lis)) \
	X("kmod_listen_start", KMOD_LSN, "result=\"start\"", \
	  d->lis.lst.starts) \
	X("kmod_listen_stop", KMOD_LSN, "result=\"stop\"", \
	  d->lis.lst.stops) \
	X("kmod_listen_failed", KMOD_LSN, "result=\"failed\"", \
	  d->lis.lst.failed) \
	X("kmod_listen_reconciled", KMOD_LSN, "result=\"reconciled\"", \
	  d->lis.lst.reconciled) \
	X("kmod_listen_siblings", KMOD_LSN, "result=\"sibling\"", \
	  d->lis.lst.siblings) \
	X("kmod_stids_orphaned", KMOD_LSN, "result=\"orphan\"", \
	  d->lis.lst.orphans) \
	X("reconciles", RECONCILE, "why=\"any\"", \
	  d->rec.runs) \
	X("reconciles_event_loss", RECONCILE, "why=\"event_loss\"", \
	  d->rec.event_loss) \
	X("reconciled_fixed", RECONCILED, NULL, \
	  d->rec.fixed) \
	X("route_changes", ROUTE_CHG, NULL, \
	  nft_route_changes()) \
	X("fwd_ct_swept", CT_SWEPT, NULL, \
	  d->rec.ct_swept) \
	X("fwd_ct_events_lost", CT_LOST, NULL, \
	  nft_ct_lost())

#define TOE_CONTROL_COUNTERS(X) \
	X("requests", CTL_REQ, NULL, \
	  d->ctl.cst.requests) \
	X("requests_bad", CTL_BAD, NULL, \
	  d->ctl.cst.requests_bad) \
	X("clients_refused", CTL_REFUSED, NULL, \
	  d->ctl.cst.clients_refused) \
	X("clients_timed_out", CTL_TIMEOUT, NULL, \
	  d->ctl.cst.clients_timed_out) \
	X("clients_over_limit", CTL_OVER, NULL, \
	  d->ctl.cst.clients_over_limit) \
	X("clients_no_fd", CTL_NOFD, NULL, \
	  d->ctl.cst.clients_no_fd) \
	X("monitor_lost", MON_LOST, NULL, \
	  d->mon.lost) \
	X("datapath_reloads", DP_RELOADS, NULL, \
	  d->dp.reloads) \
	X("datapath_unloads", DP_UNLOADS, NULL, \
	  d->dp.unloads) \
	X("metrics_bind_failed", MHTTP_BIND, NULL, \
	  ms->bind_failed) \
	X("metrics_deadline", MHTTP_CLOSED, "reason=\"deadline\"", \
	  ms->deadline) \
	X("metrics_evicted", MHTTP_CLOSED, "reason=\"evicted\"", \
	  ms->evicted) \
	X("metrics_refused", MHTTP_CLOSED, "reason=\"refused\"", \
	  ms->refused) \
	X("log_suppressed", LOG_SUPP, NULL, \
	  log_suppressed())

/*
 * A table view's fields (view.h walks them), in their JSON order:
 * X(ID, key, type, unit, head, width, text, from, FAM, labels)
 *   key    its JSON key (NULL: a column of the text alone)
 *   type   its JSON type: STR, U64, I64, F64, BOOL (the value may be null,
 *          or absent from a row), FN (written by the view's function),
 *          TEXT (the text's alone)
 *   unit   its unit ("s": seconds), or ""
 *   head   its text column's header, NULL: the text does not show it
 *   width  the column's width, negative: left-aligned; 0: as wide as it is
 *   text   how the text writes it: STR (null or absent: -), WORDS (a STR
 *          that may hold blanks), NUM, AGE (seconds as toectl writes an
 *          age), AGO (the same, then " ago"), RATIO (the fields from
 *          names, as A/B), and for a text-only field (TEXT, filled by
 *          the view) ENDPOINT, SUM, EITHER, DASH (see toectl flows');
 *          NONE where not shown
 *   from   a text-only field's: the keys of the fields it is made of,
 *          blank-separated (KEY.MEMBER: a member of object KEY); else NULL
 *   FAM    the metric family a U64 field is exported in (F_FAM: a sample
 *          a row, labelled by the view; metrics.c), NONE: not exported
 *   labels the sample's labels beside the view's ("k=\"v\"" pairs), or NULL
 * A new field is one row here and the line of the view that fills its
 * cell; the text's columns are the rows with a head, in their order.
 */

/* toectl neigh: toe_neigh, one row a neighbour (show_maps.c) */
#define TOE_NEIGH_FIELDS(X)                                                    \
	X(DST, "dst", STR, "", "ADDRESS", -40, STR, NULL, NONE, NULL)          \
	X(DEV, "dev", STR, "", "INTERFACE", -10, STR, NULL, NONE, NULL)        \
	X(IFINDEX, "ifindex", U64, "", NULL, 0, NONE, NULL, NONE, NULL)        \
	X(LLADDR, "lladdr", STR, "", "LLADDR", -17, STR, NULL, NONE, NULL)     \
	X(STATE, "state", STR, "", "STATE", -10, STR, NULL, NONE, NULL)        \
	X(NUD, "nud", U64, "", NULL, 0, NONE, NULL, NONE, NULL)                \
	X(UPDATED, "updated_s_ago", F64, "s", "UPDATED", 0, AGO, NULL,         \
	  NONE, NULL)

/*
 * toectl devices: toe_devs, one row a device (show_maps.c); the fields
 * from kmod_index on only for a device of the kernel module it has (the
 * text: -).  The hooks' table under it is lib/hooks.c's.
 */
#define TOE_DEVICE_FIELDS(X)                                                   \
	X(INDEX, "index", U64, "", NULL, 0, NONE, NULL, NONE, NULL)            \
	X(DEVICE, "device", STR, "", "DEVICE", -15, STR, NULL, NONE, NULL)     \
	X(TYPE, "type", STR, "", "TYPE", -11, STR, NULL, NONE, NULL)           \
	X(MODULE, "module", STR, "", "MODULE", -12, STR, NULL, NONE, NULL)     \
	X(KMOD, "kmod", BOOL, "", NULL, 0, NONE, NULL, NONE, NULL)             \
	X(INTERFACE, "interface", STR, "",                                     \
	  "INTERFACE", -10, STR, NULL, NONE, NULL)                             \
	X(IFINDEX, "ifindex", U64, "", NULL, 0, NONE, NULL, NONE, NULL)        \
	X(STEER, "steer", STR, "", "STEER", -8, WORDS, NULL, NONE, NULL)       \
	X(NCONN, "nconn", U64, "", "NCONN", 7, NUM, NULL, DEV_CAP, NULL)       \
	X(HOOKS, "hooks", FN, "", NULL, 0, NONE, NULL, NONE, NULL)             \
	X(LIVE, "live", U64, "", "LIVE", 7, NUM, NULL, DEV_LIVE, NULL)         \
	X(OFFLOADED, "offloaded", U64, "", "OFFLOADED", 9, NUM, NULL,          \
	  DEV_OFF, NULL)                                                       \
	X(REFUSED, "refused", U64, "", "REFUSED", 8, NUM, NULL,                \
	  DEV_REF, "reason=\"capacity\"")                                      \
	X(RELEASED, "released", U64, "", "RELEASED", 8, NUM, NULL,             \
	  DEV_REL, NULL)                                                       \
	X(KMOD_INDEX, "kmod_index", U64, "", NULL, 0, NONE, NULL, NONE, NULL)  \
	X(TIDS_USED, "tids_used", U64, "", "TIDS", 6, NUM, NULL,               \
	  DEV_TIDS_USED, NULL)                                                 \
	X(TIDS_HELD, "tids_held", U64, "", NULL, 0, NONE, NULL,                \
	  DEV_TIDS_HELD, NULL)                                                 \
	X(TIDS_RESERVED, "tids_reserved", U64, "", NULL, 0, NONE, NULL,        \
	  NONE, NULL)                                                          \
	X(L2T_USED, "l2t_used", U64, "", NULL, 0, NONE, NULL, NONE, NULL)      \
	X(L2T_SIZE, "l2t_size", U64, "", NULL, 0, NONE, NULL, NONE, NULL)      \
	X(L2T, NULL, TEXT, "", "L2T", 9, RATIO, "l2t_used l2t_size",           \
	  NONE, NULL)                                                          \
	X(LISTENERS, "listeners", U64, "", NULL, 0, NONE, NULL, NONE, NULL)    \
	X(LISTENERS_HELD, "listeners_held", U64, "", NULL, 0, NONE, NULL,      \
	  NONE, NULL)                                                          \
	X(LISTEN, NULL, TEXT, "", "LISTEN", 9, RATIO, "listeners listeners_held", \
	  NONE, NULL)                                                          \
	X(TIDS_HOST, "tids_host", U64, "", NULL, 0, NONE, NULL, NONE, NULL)    \
	X(TID_POOL, "tid_pool", I64, "", NULL, 0, NONE, NULL, NONE, NULL)      \
	X(TID_IN_FLIGHT, "tid_in_flight", I64, "", NULL, 0, NONE, NULL,        \
	  NONE, NULL)                                                          \
	X(TID_SEQ, "tid_seq", U64, "", NULL, 0, NONE, NULL, NONE, NULL)        \
	X(TID_CHANGED, "tid_changed_ms", U64, "ms", NULL, 0, NONE, NULL,       \
	  NONE, NULL)                                                          \
	X(TID_EVENT, "tid_event_ms", U64, "ms", NULL, 0, NONE, NULL,           \
	  NONE, NULL)                                                          \
	X(TID_SETTLED, "tid_settled_ms", U64, "ms", NULL, 0, NONE, NULL,       \
	  NONE, NULL)                                                          \
	X(STIDS_RESERVED, "stids_reserved", U64, "", NULL, 0, NONE, NULL,      \
	  NONE, NULL)                                                          \
	X(STID_POOL, "stid_pool", I64, "", NULL, 0, NONE, NULL, NONE, NULL)    \
	X(STID_IN_FLIGHT, "stid_in_flight", I64, "", NULL, 0, NONE, NULL,      \
	  NONE, NULL)                                                          \
	X(STID_SEQ, "stid_seq", U64, "", NULL, 0, NONE, NULL, NONE, NULL)

/*
 * toectl status: its fields, X(ID, key, type, unit), in their JSON order;
 * key a member of the document or, KEY.MEMBER, of its object KEY (a
 * field absent from the document where the status has no such value:
 * the datapath's ids unloaded, the module's family unloaded).
 */
#define TOE_STATUS_FIELDS(X)                                                   \
	X(PID, "pid", U64, "")                                                 \
	X(UPTIME, "uptime_s", F64, "s")                                        \
	X(PIN_DIR, "pin_dir", STR, "")                                         \
	X(DP_PIN_DIR, "datapath.pin_dir", STR, "")                             \
	X(DP_LOADED, "datapath.loaded", BOOL, "")                              \
	X(DP_STATS, "datapath.stats_map_id", U64, "")                          \
	X(DP_EVENTS, "datapath.events_map_id", U64, "")                        \
	X(DP_NEIGH, "datapath.neigh_map_id", U64, "")                          \
	X(DP_LINK, "datapath.sockops_link_id", U64, "")                        \
	X(DP_PROG, "datapath.sockops_prog_id", U64, "")                        \
	X(DP_SINCE, "datapath.since", STR, "")                                 \
	X(DP_RELOADS, "datapath.reloads", U64, "")                             \
	X(DP_UNLOADS, "datapath.unloads", U64, "")                             \
	X(CONFIG, "config", STR, "")                                           \
	X(POL_SERIAL, "policy.serial", U64, "")                                \
	X(POL_GEN, "policy.generation", U64, "")                               \
	X(POL_RULES, "policy.rules", U64, "")                                  \
	X(POL_DEVICES, "policy.devices", U64, "")                              \
	X(POL_DEFAULT, "policy.default", STR, "")                              \
	X(POL_TRACK, "policy.track", STR, "")                                  \
	X(POL_SOURCE, "policy.source", STR, "")                                \
	X(POL_BY, "policy.applied_by", STR, "")                                \
	X(POL_AGO, "policy.applied_s_ago", F64, "s")                           \
	X(IFACES, "interfaces", FN, "")                                        \
	X(NEIGHBOURS, "neighbours", U64, "")                                   \
	X(NEIGH_RESYNCS, "neighbour_resyncs", U64, "")                         \
	X(NL_OVERRUNS, "netlink_overruns", U64, "")                            \
	X(LOCAL, "local_addresses", U64, "")                                   \
	X(KMOD_LOADED, "kmod.loaded", BOOL, "")                                \
	X(KMOD_FAMILY, "kmod.genl_family", STR, "")                            \
	X(KMOD_ID, "kmod.genl_id", U64, "")                                    \
	X(KMOD_DEVICES, "kmod.devices", U64, "")                               \
	X(KMOD_TIDS, "kmod.tids_held", U64, "")                                \
	X(EV_LISTEN_START, "events.listen_start", U64, "")                     \
	X(EV_LISTEN_STOP, "events.listen_stop", U64, "")                       \
	X(EV_OFFLOADED, "events.flow_offloaded", U64, "")                      \
	X(EV_REFUSED, "events.flow_refused", U64, "")                          \
	X(EV_CLOSED, "events.flow_closed", U64, "")                            \
	X(MET_STATE, "metrics.state", STR, "")                                 \
	X(MET_ADDR, "metrics.address", STR, "")                                \
	X(MET_ERROR, "metrics.error", STR, "")                                 \
	X(MET_BIND, "metrics.bind_failed", U64, "")                            \
	X(MET_RETRY, "metrics.retry_in_s", F64, "s")                           \
	X(MET_CONN, "metrics.connections", U64, "")                            \
	X(MET_DEADLINE, "metrics.deadline", U64, "")                           \
	X(MET_EVICTED, "metrics.evicted", U64, "")                             \
	X(MET_REFUSED, "metrics.refused", U64, "")                             \
	X(LOG, "log_suppressed", U64, "")                                      \
	X(REC_RUNS, "reconcile.runs", U64, "")                                 \
	X(REC_LOSS, "reconcile.event_loss", U64, "")                           \
	X(REC_FIXED, "reconcile.fixed", U64, "")                               \
	X(REC_LAST, "reconcile.last_ms", U64, "ms")                            \
	X(REC_READ, "reconcile.last_read_ms", U64, "ms")                       \
	X(REC_TOOK, "reconcile.last_took_ms", U64, "ms")

/*
 * And its text: Y(label, when, template), a line each label; a line's
 * forms are rows of the same label, the first whose when holds written:
 * "KEY=VALUE" or "KEY!=VALUE" of a field's JSON value, "": always.  The
 * template is what follows the label (padded to 11): {KEY} a field as its
 * type writes it, {KEY:FORM} as FORM does: age (seconds as toectl writes
 * an age), s ("s" unless 1), by ("this toed" for toed, else "another
 * program"), unknown (null: "(unknown)"), f1 (one decimal), ifaces (the
 * interfaces: " NAME (HOOK MODE[, dispatcher][, egress MODE][, neighbours
 * mirrored])" joined by ",", or " none").
 */
#define TOE_STATUS_LINES(Y)                                                    \
	Y("toed:", "",                                                         \
	  " running, pid {pid}, up {uptime_s:age}")                            \
	Y("datapath:", "datapath.loaded=true",                                 \
	  " {datapath.pin_dir}: loaded since {datapath.since} (stats map "     \
	  "id {datapath.stats_map_id}, events map id "                         \
	  "{datapath.events_map_id}, neigh map id "                            \
	  "{datapath.neigh_map_id}, sockops prog id "                          \
	  "{datapath.sockops_prog_id}; {datapath.reloads} reloads seen)")      \
	Y("datapath:", "",                                                     \
	  " {datapath.pin_dir}: not loaded (toe-loader load); waiting for "    \
	  "it")                                                                \
	Y("config:", "",                                                       \
	  " {config}")                                                         \
	Y("policy:", "policy.serial!=0",                                       \
	  " {policy.serial} (generation {policy.generation}), applied "        \
	  "{policy.applied_s_ago:age} ago by {policy.applied_by:by} from "     \
	  "{policy.source:unknown}: {policy.rules} rules, default "            \
	  "{policy.default}, track {policy.track}")                            \
	Y("policy:", "",                                                       \
	  " none in force")                                                    \
	Y("interfaces:", "",                                                   \
	  "{interfaces:ifaces}")                                               \
	Y("neighbours:", "",                                                   \
	  " {neighbours} mirrored, {neighbour_resyncs} resyncs, "              \
	  "{netlink_overruns} overruns")                                       \
	Y("addresses:", "",                                                    \
	  " {local_addresses} local")                                          \
	Y("module:", "kmod.loaded=true",                                       \
	  " loaded (genetlink family {kmod.genl_family}, id "                  \
	  "{kmod.genl_id}): {kmod.devices} device{kmod.devices:s}, "           \
	  "{kmod.tids_held} TID{kmod.tids_held:s} held")                       \
	Y("module:", "",                                                       \
	  " not loaded (configuration devices only)")                          \
	Y("events:", "",                                                       \
	  " {events.flow_offloaded} offloaded, {events.flow_refused} "         \
	  "refused, {events.flow_closed} closed, {events.listen_start} "       \
	  "listen")                                                            \
	Y("metrics:", "metrics.state=off",                                     \
	  " off")                                                              \
	Y("metrics:", "metrics.state=serving",                                 \
	  " serving http://{metrics.address}/metrics: "                        \
	  "{metrics.connections} connections; {metrics.deadline} past the "    \
	  "deadline, {metrics.evicted} evicted, {metrics.refused} refused")    \
	Y("metrics:", "",                                                      \
	  " retrying {metrics.address}: {metrics.error} "                      \
	  "({metrics.bind_failed} failed binds; next in "                      \
	  "{metrics.retry_in_s:f1} s)")                                        \
	Y("log:", "",                                                          \
	  " {log_suppressed} repeated lines suppressed")                       \
	Y("reconcile:", "",                                                    \
	  " {reconcile.runs} runs ({reconcile.event_loss} for lost "           \
	  "events), {reconcile.fixed} put right")

/*
 * toectl flows: a row a connection of toe_flows (show_maps.c), then a row
 * a routed flow of toe_fwd, client end first (its state other than
 * established, UDP, a join mid-stream and its NAT on lines of their own
 * under it); the two with the same columns.  A column of either is a row of
 * each table (a text-only one: its from the fields it is made of, as its
 * form says: ENDPOINT address and port, SUM, EITHER the first set, NUM a
 * copy, DASH none).
 */
#define TOE_FLOW_FIELDS(X)                                                     \
	X(FAMILY, "family", U64, "", NULL, 0, NONE, NULL, NONE, NULL)          \
	X(LOCAL, NULL, TEXT, "",                                               \
	  "LOCAL", -22, ENDPOINT, "laddr lport", NONE, NULL)                   \
	X(LADDR, "laddr", STR, "", NULL, 0, NONE, NULL, NONE, NULL)            \
	X(LPORT, "lport", U64, "", NULL, 0, NONE, NULL, NONE, NULL)            \
	X(REMOTE, NULL, TEXT, "",                                              \
	  "REMOTE", -22, ENDPOINT, "raddr rport", NONE, NULL)                  \
	X(RADDR, "raddr", STR, "", NULL, 0, NONE, NULL, NONE, NULL)            \
	X(RPORT, "rport", U64, "", NULL, 0, NONE, NULL, NONE, NULL)            \
	X(NETNS, "netns", U64, "", NULL, 0, NONE, NULL, NONE, NULL)            \
	X(NETNS_NAME, "netns_name", STR, "", NULL, 0, NONE, NULL, NONE, NULL)  \
	X(NETNS_COOKIE, "netns_cookie", U64, "",                               \
	  NULL, 0, NONE, NULL, NONE, NULL)                                     \
	X(DEVICE, "device", STR, "", "DEVICE", -10, STR, NULL, NONE, NULL)     \
	X(DECISION, "decision", STR, "",                                       \
	  "DECISION", -8, STR, NULL, NONE, NULL)                               \
	X(REASON, "reason", STR, "", "REASON", -9, STR, NULL, NONE, NULL)      \
	X(RULE, "rule", U64, "", "RULE", 5, NUM, NULL, NONE, NULL)             \
	X(DIRECTION, "direction", STR, "", NULL, 0, NONE, NULL, NONE, NULL)    \
	X(BYTES_OUT, NULL, TEXT, "B",                                          \
	  "BYTES_OUT", 11, SUM, "bytes_acked bypass.bytes_out", NONE, NULL)    \
	X(BYTES_ACKED, "bytes_acked", U64, "B",                                \
	  NULL, 0, NONE, NULL, NONE, NULL)                                     \
	X(BYTES_IN, NULL, TEXT, "B",                                           \
	  "BYTES_IN", 11, SUM, "bytes_received bypass.bytes_in", NONE, NULL)   \
	X(BYTES_RECEIVED, "bytes_received", U64, "B",                          \
	  NULL, 0, NONE, NULL, NONE, NULL)                                     \
	X(SEGS, NULL, TEXT, "",                                                \
	  "SEGS", 8, SUM, "segs_in segs_out", NONE, NULL)                      \
	X(SEGS_IN, "segs_in", U64, "", NULL, 0, NONE, NULL, NONE, NULL)        \
	X(SEGS_OUT, "segs_out", U64, "", NULL, 0, NONE, NULL, NONE, NULL)      \
	X(RETRANS, "total_retrans", U64, "", NULL, 0, NONE, NULL, NONE, NULL)  \
	X(XDP_PACKETS, "xdp_packets", U64, "",                                 \
	  "XDP_PKTS", 8, NUM, NULL, NONE, NULL)                                \
	X(XDP_BYTES, "xdp_bytes", U64, "B", NULL, 0, NONE, NULL, NONE, NULL)   \
	X(BYPASS, "bypass", FN, "", NULL, 0, NONE, NULL, NONE, NULL)           \
	X(SRTT, "srtt_us", U64, "us", "RTT_US", 8, NUM, NULL, NONE, NULL)      \
	X(AGE, "age_s", F64, "s", "AGE", 7, AGE, NULL, NONE, NULL)             \
	X(NETNS_TEXT, NULL, TEXT, "",                                          \
	  "NETNS", -12, EITHER, "netns_name netns", NONE, NULL)                \
	X(POLICY, "policy", U64, "", NULL, 0, NONE, NULL, NONE, NULL)          \
	X(COOKIE, "cookie", U64, "", NULL, 0, NONE, NULL, NONE, NULL)          \
	X(TID, "tid", U64, "", "TID", 6, NUM, NULL, NONE, NULL)

#define TOE_FWD_FIELDS(X)                                                      \
	X(FAMILY, "family", U64, "", NULL, 0, NONE, NULL, NONE, NULL)          \
	X(PROTO, "proto", STR, "", NULL, 0, NONE, NULL, NONE, NULL)            \
	X(LOCAL, NULL, TEXT, "",                                               \
	  "LOCAL", -22, ENDPOINT, "laddr lport", NONE, NULL)                   \
	X(LADDR, "laddr", STR, "", NULL, 0, NONE, NULL, NONE, NULL)            \
	X(LPORT, "lport", U64, "", NULL, 0, NONE, NULL, NONE, NULL)            \
	X(REMOTE, NULL, TEXT, "",                                              \
	  "REMOTE", -22, ENDPOINT, "raddr rport", NONE, NULL)                  \
	X(RADDR, "raddr", STR, "", NULL, 0, NONE, NULL, NONE, NULL)            \
	X(RPORT, "rport", U64, "", NULL, 0, NONE, NULL, NONE, NULL)            \
	X(NETNS, "netns", U64, "", NULL, 0, NONE, NULL, NONE, NULL)            \
	X(NETNS_COOKIE, "netns_cookie", U64, "",                               \
	  NULL, 0, NONE, NULL, NONE, NULL)                                     \
	X(DEVICE, "device", STR, "", "DEVICE", -10, STR, NULL, NONE, NULL)     \
	X(DECISION, "decision", STR, "",                                       \
	  "DECISION", -8, STR, NULL, NONE, NULL)                               \
	X(REASON, "reason", STR, "", "REASON", -9, STR, NULL, NONE, NULL)      \
	X(RULE, "rule", U64, "", "RULE", 5, NUM, NULL, NONE, NULL)             \
	X(DIRECTION, "direction", STR, "", NULL, 0, NONE, NULL, NONE, NULL)    \
	X(STATE, "state", STR, "", NULL, 0, NONE, NULL, NONE, NULL)            \
	X(JOINED, "joined", BOOL, "", NULL, 0, NONE, NULL, NONE, NULL)         \
	X(BYTES_OUT, NULL, TEXT, "B", "BYTES_OUT", 11, DASH, NULL, NONE, NULL) \
	X(BYTES_IN, NULL, TEXT, "B",                                           \
	  "BYTES_IN", 11, NUM, "xdp_bytes", NONE, NULL)                        \
	X(SEGS, NULL, TEXT, "", "SEGS", 8, DASH, NULL, NONE, NULL)             \
	X(XDP_PKTS, NULL, TEXT, "",                                            \
	  "XDP_PKTS", 8, NUM, "xdp_packets", NONE, NULL)                       \
	X(XDP_PACKETS, "xdp_packets", U64, "",                                 \
	  NULL, 0, NONE, NULL, NONE, NULL)                                     \
	X(XDP_BYTES, "xdp_bytes", U64, "B", NULL, 0, NONE, NULL, NONE, NULL)   \
	X(PACKETS_C2S, "packets_c2s", U64, "",                                 \
	  NULL, 0, NONE, NULL, NONE, NULL)                                     \
	X(BYTES_C2S, "bytes_c2s", U64, "B", NULL, 0, NONE, NULL, NONE, NULL)   \
	X(PACKETS_S2C, "packets_s2c", U64, "",                                 \
	  NULL, 0, NONE, NULL, NONE, NULL)                                     \
	X(BYTES_S2C, "bytes_s2c", U64, "B", NULL, 0, NONE, NULL, NONE, NULL)   \
	X(BYPASS, "bypass", FN, "", NULL, 0, NONE, NULL, NONE, NULL)           \
	X(SRTT, NULL, TEXT, "us", "RTT_US", 8, DASH, NULL, NONE, NULL)         \
	X(AGE, "age_s", F64, "s", "AGE", 7, AGE, NULL, NONE, NULL)             \
	X(NETNS_TEXT, NULL, TEXT, "", "NETNS", -12, NUM, "netns", NONE, NULL)  \
	X(POLICY, "policy", U64, "", NULL, 0, NONE, NULL, NONE, NULL)          \
	X(TID, NULL, TEXT, "", "TID", 6, DASH, NULL, NONE, NULL)               \
	X(NAT, "nat", FN, "", NULL, 0, NONE, NULL, NONE, NULL)
/* clang-format on */

enum toe_fam {
#define TOE_FAM_ENUM(id, name, type, help) F_##id,
	TOE_METRIC_FAMILIES(TOE_FAM_ENUM)
#undef TOE_FAM_ENUM
		F__MAX,
	F_NONE = F__MAX /* a counter row not exported */
};

/* The table views' fields, by ID: their cells' indexes in a row. */
enum toe_neigh_field {
#define TOE_NF_ENUM(id, key, type, unit, head, width, text, from, fam, labels) \
	NF_##id,
	TOE_NEIGH_FIELDS(TOE_NF_ENUM)
#undef TOE_NF_ENUM
		NF__N
};

enum toe_status_field {
#define TOE_SF_ENUM(id, key, type, unit) SF_##id,
	TOE_STATUS_FIELDS(TOE_SF_ENUM)
#undef TOE_SF_ENUM
		SF__N
};

enum toe_flow_field {
#define TOE_FF_ENUM(id, key, type, unit, head, width, text, from, fam, labels) \
	FF_##id,
	TOE_FLOW_FIELDS(TOE_FF_ENUM)
#undef TOE_FF_ENUM
		FF__N
};

enum toe_fwd_field {
#define TOE_WF_ENUM(id, key, type, unit, head, width, text, from, fam, labels) \
	WF_##id,
	TOE_FWD_FIELDS(TOE_WF_ENUM)
#undef TOE_WF_ENUM
		WF__N
};

enum toe_device_field {
#define TOE_DF_ENUM(id, key, type, unit, head, width, text, from, fam, labels) \
	DF_##id,
	TOE_DEVICE_FIELDS(TOE_DF_ENUM)
#undef TOE_DF_ENUM
		DF__N
};

#endif /* __TOE_FIELDS_H */
