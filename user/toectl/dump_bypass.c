// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * toectl dump: bypassed flows (sk_msg, socket to socket: bpf/bypass.h)
 * carry no packet, so no fast path captures them.  A dump whose filter
 * names such a flow (--flow, --port) says so, and gives the bytes each
 * end has moved from the bypass's counters (toe_byp_flows), at its start
 * and its end.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include "opentoe_common.h"
#include "opentoe_flows.h"
#include "opentoe_bypass.h"
#include "dump.h"
#include "lib/json.h"

/* Does the filter's end e name address addr and port (host order)? */
static bool end_is(const struct toe_cap_end *e, const __u32 *addr, __u16 port)
{
	return !memcmp(e->addr, addr, 16) &&
	       (!e->port || ntohs(e->port) == port);
}

/* Whether the filter of o names the bypassed socket of key k. */
static bool byp_match(const struct dump_opts *o, const struct toe_flow_key *k)
{
	const struct toe_cap_conf *c = &o->conf;
	__u16 port = ntohs(c->port);

	if (!(c->match & (TOE_CAP_M_FLOW | TOE_CAP_M_PORT)))
		return false;
	if ((c->match & TOE_CAP_M_PORT) && k->lport != port && k->rport != port)
		return false;
	if ((c->match & TOE_CAP_M_FLOW) &&
	    (k->family != c->family || !((end_is(&c->a, k->laddr, k->lport) &&
					  end_is(&c->b, k->raddr, k->rport)) ||
					 (end_is(&c->b, k->laddr, k->lport) &&
					  end_is(&c->a, k->raddr, k->rport)))))
		return false;
	return true;
}

/* "ADDR:PORT" of one end of a flow key. */
static void key_end(const struct toe_flow_key *k, bool local, char *buf,
		    size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";
	int af = k->family == TOE_AF_INET6 ? AF_INET6 : AF_INET;

	inet_ntop(af, local ? k->laddr : k->raddr, a, sizeof(a));
	snprintf(buf, len, af == AF_INET6 ? "[%s]:%u" : "%s:%u", a,
		 local ? k->lport : k->rport);
}

/* One socket's direction: to stderr, or a JSON object. */
static void byp_one(const struct toe_flow_key *k, const struct toe_byp_flow *f,
		    struct toe_json *j)
{
	char from[64], to[64];

	key_end(k, true, from, sizeof(from));
	key_end(k, false, to, sizeof(to));
	if (!j) {
		fprintf(stderr,
			"toectl: flow %s -> %s is bypassed (sk_msg, socket to socket): its data is never a packet and is not captured; from the counters: %llu bytes in %llu sends to the peer, %llu bytes over TCP\n",
			from, to, (unsigned long long)f->bytes_out,
			(unsigned long long)f->msgs_out,
			(unsigned long long)f->tcp_bytes_out);
		return;
	}
	tj_obj(j);
	tj_kstr(j, "from", from);
	tj_kstr(j, "to", to);
	tj_ku64(j, "bytes", f->bytes_out);
	tj_ku64(j, "sends", f->msgs_out);
	tj_ku64(j, "tcp_bytes", f->tcp_bytes_out);
	tj_obj_end(j);
}

void dump_bypass_report(const struct dump_opts *o, int byp_flows,
			struct toe_json *j)
{
	struct toe_bypass_key k, next, *prev = NULL;
	struct toe_byp_flow f;

	if (j)
		tj_arr(j);
	while (byp_flows >= 0 &&
	       !bpf_map_get_next_key(byp_flows, prev, &next)) {
		k = next;
		prev = &k;
		if (!byp_match(o, &k.flow) ||
		    bpf_map_lookup_elem(byp_flows, &k, &f))
			continue;
		byp_one(&k.flow, &f, j);
	}
	if (j)
		tj_arr_end(j);
}
