// SPDX-License-Identifier: GPL-2.0
/*
 * nl_feed: toed's rtnetlink reader (user/toed/neigh.c, compiled in here)
 * fed crafted messages the kernel never sends: a neighbour, address or link
 * message cut short, a neighbour without its destination or with one of the
 * wrong size, an address without one.  Each goes through toe_nl_process
 * from a socket pair standing in for the netlink socket; each malformed one
 * must be counted under malformed (toectl stats' netlink_malformed) and
 * nothing else, and the well-formed ones beside them must not be.  The maps
 * are not BPF maps (a /dev/null descriptor): a write reaching one fails
 * and is counted under map_errors, which tells that it got that far.
 * Prints TAP.  No root.
 */
#include <fcntl.h>
#include "toed/neigh.c"

static int fds[2], fails, n_checks;
static struct toe_nl nl;

/* One datagram of the messages in buf (len bytes) through toe_nl_process. */
static void feed(const void *buf, size_t len)
{
	char err[256];

	if (send(fds[1], buf, len, 0) != (ssize_t)len) {
		perror("send");
		exit(1);
	}
	if (toe_nl_process(&nl, err, sizeof(err)))
		fprintf(stderr, "toe_nl_process: %s\n", err);
}

static void check(bool good, const char *what, const struct toe_nl_stats *was)
{
	n_checks++;
	fails += !good;
	printf("%s - %s (malformed %llu -> %llu, messages %llu -> %llu, map_errors %llu -> %llu, link_events %llu -> %llu)\n",
	       good ? "ok" : "not ok", what, (unsigned long long)was->malformed,
	       (unsigned long long)nl.st.malformed,
	       (unsigned long long)was->messages,
	       (unsigned long long)nl.st.messages,
	       (unsigned long long)was->map_errors,
	       (unsigned long long)nl.st.map_errors,
	       (unsigned long long)was->link_events,
	       (unsigned long long)nl.st.link_events);
}

struct msg {
	struct nlmsghdr h;
	union {
		struct ndmsg nd;
		struct ifaddrmsg ifa;
		struct ifinfomsg ifi;
	};
	char attrs[64];
} __attribute__((aligned(8)));

/* A message of type t, its family header (hlen bytes of it) and attrs. */
static void msg_init(struct msg *m, int type, size_t hlen)
{
	memset(m, 0, sizeof(*m));
	m->h.nlmsg_type = type;
	m->h.nlmsg_len = NLMSG_LENGTH(hlen);
}

static void add_attr(struct msg *m, int type, const void *data, size_t len)
{
	struct rtattr *a =
		(struct rtattr *)((char *)m + NLMSG_ALIGN(m->h.nlmsg_len));

	a->rta_type = type;
	a->rta_len = RTA_LENGTH(len);
	memcpy(RTA_DATA(a), data, len);
	m->h.nlmsg_len = NLMSG_ALIGN(m->h.nlmsg_len) + RTA_ALIGN(a->rta_len);
}

/* Feed m; want dm more malformed, de more map errors, one more message. */
static void try(struct msg *m, const char *what, int dm, int de)
{
	struct toe_nl_stats was = nl.st;

	feed(m, m->h.nlmsg_len);
	check(nl.st.malformed == was.malformed + dm &&
		      nl.st.messages == was.messages + 1 &&
		      nl.st.map_errors == was.map_errors + de,
	      what, &was);
}

static void neigh(struct msg *m, int dst_len)
{
	static const __u8 dst[16] = { 10, 9, 0, 1 };

	msg_init(m, RTM_NEWNEIGH, sizeof(struct ndmsg));
	m->nd.ndm_family = AF_INET;
	m->nd.ndm_ifindex = 7;
	m->nd.ndm_state = NUD_REACHABLE;
	if (dst_len)
		add_attr(m, NDA_DST, dst, dst_len);
}

static void addr(struct msg *m, int type, int local_len)
{
	static const __u8 a[16] = { 10, 9, 0, 2 };

	msg_init(m, RTM_NEWADDR, sizeof(struct ifaddrmsg));
	m->ifa.ifa_family = AF_INET;
	m->ifa.ifa_index = 7;
	if (local_len)
		add_attr(m, type, a, local_len);
}

static void neigh_cases(void)
{
	struct msg m;

	neigh(&m, 4);
	m.h.nlmsg_len = NLMSG_LENGTH(sizeof(struct ndmsg) - 1);
	try(&m, "a neighbour message shorter than its ndmsg: malformed", 1, 0);
	neigh(&m, 0);
	try(&m, "a neighbour without NDA_DST: malformed", 1, 0);
	neigh(&m, 3);
	try(&m, "a neighbour whose IPv4 NDA_DST has 3 bytes: malformed", 1, 0);
	neigh(&m, 4);
	m.nd.ndm_ifindex = 0;
	try(&m, "a neighbour of interface 0: malformed", 1, 0);
	neigh(&m, 4);
	try(&m, "a well-formed neighbour: not malformed, written (map error)",
	    0, 1);
	neigh(&m, 16);
	m.nd.ndm_family = AF_INET6;
	try(&m, "a well-formed IPv6 neighbour: not malformed, written", 0, 1);
}

static void addr_cases(void)
{
	struct msg m;

	addr(&m, IFA_LOCAL, 4);
	m.h.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifaddrmsg) - 1);
	try(&m, "an address message shorter than its ifaddrmsg: malformed", 1,
	    0);
	addr(&m, IFA_LOCAL, 0);
	try(&m, "an address without IFA_LOCAL or IFA_ADDRESS: malformed", 1, 0);
	addr(&m, IFA_LOCAL, 16);
	try(&m, "an IPv4 address of 16 bytes (the only one): malformed", 1, 0);
	addr(&m, IFA_LOCAL, 4);
	try(&m, "a well-formed address (IFA_LOCAL): not malformed, written", 0,
	    1);
	addr(&m, IFA_ADDRESS, 4);
	try(&m, "a well-formed address (IFA_ADDRESS only): written", 0, 1);
}

static void link_cases(void)
{
	struct toe_nl_stats was;
	struct msg m;

	msg_init(&m, RTM_NEWLINK, sizeof(struct ifinfomsg) - 1);
	was = nl.st;
	feed(&m, m.h.nlmsg_len);
	check(nl.st.malformed == was.malformed + 1 &&
		      nl.st.link_events == was.link_events,
	      "a link message shorter than its ifinfomsg: malformed, no link event",
	      &was);
	msg_init(&m, RTM_DELLINK, sizeof(struct ifinfomsg));
	m.ifi.ifi_index = 8;
	was = nl.st;
	feed(&m, m.h.nlmsg_len);
	check(nl.st.malformed == was.malformed &&
		      nl.st.link_events == was.link_events + 1,
	      "a well-formed link message: a link event, not malformed", &was);
}

/*
 * A tracked interface deleted: its neighbours purged from the map, every
 * other interface's kept (a real BPF hash map: root).
 */
static void purge_case(void)
{
	struct toe_neigh_key k = { .family = TOE_AF_INET };
	struct toe_neigh v = { .state = NUD_PERMANENT };
	__u32 tracked[2] = { 7, 9 }, left[10] = { 0 };
	struct toe_nl_stats was = nl.st;
	int fd, i;
	struct msg m;

	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "nl_feed", sizeof(k), sizeof(v),
			    64, NULL);
	if (fd < 0) {
		n_checks++;
		printf("ok - a tracked interface deleted: only its neighbours purged # SKIP no BPF map (%s): needs root\n",
		       strerror(errno));
		return;
	}
	for (i = 0; i < 6; i++) {
		k.ifindex = tracked[i % 2];
		k.addr[0] = i + 1;
		bpf_map_update_elem(fd, &k, &v, BPF_ANY);
	}
	nl.neigh_map = fd;
	toe_nl_set_tracked(&nl, tracked, 2);
	msg_init(&m, RTM_DELLINK, sizeof(struct ifinfomsg));
	m.ifi.ifi_index = 7;
	feed(&m, m.h.nlmsg_len);
	for (i = 0; i < 6; i++) {
		k.ifindex = tracked[i % 2];
		k.addr[0] = i + 1;
		left[k.ifindex] += bpf_map_lookup_elem(fd, &k, &v) == 0;
	}
	check(left[7] == 0 && left[9] == 3 &&
		      nl.st.neigh_del == was.neigh_del + 3,
	      "a tracked interface deleted: its 3 neighbours purged, the other's 3 kept",
	      &was);
	printf("# left: %u of interface 7's, %u of interface 9's\n", left[7],
	       left[9]);
	close(fd);
}

int main(void)
{
	struct toe_nl_stats was;
	char two[2 * sizeof(struct msg)] __attribute__((aligned(8)));
	struct msg m;
	size_t n;
	__u32 tracked = 7;

	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, fds)) {
		perror("socketpair");
		return 1;
	}
	nl.ev_fd = fds[0];
	nl.dump_fd = -1;
	nl.neigh_map = nl.local_map = open("/dev/null", O_RDONLY);
	toe_nl_set_tracked(&nl, &tracked, 1);
	printf("1..15\n");
	neigh_cases();
	addr_cases();
	link_cases();
	/* two in one datagram: the malformed one does not stop the next */
	addr(&m, IFA_LOCAL, 0);
	n = NLMSG_ALIGN(m.h.nlmsg_len);
	memcpy(two, &m, n);
	addr(&m, IFA_LOCAL, 4);
	memcpy(two + n, &m, m.h.nlmsg_len);
	n += m.h.nlmsg_len;
	was = nl.st;
	feed(two, n);
	check(nl.st.messages == was.messages + 2 &&
		      nl.st.malformed == was.malformed + 1 &&
		      nl.st.map_errors == was.map_errors + 1,
	      "a malformed message and a good one in one read: both handled",
	      &was);
	purge_case();
	return fails ? 1 : 0;
}
