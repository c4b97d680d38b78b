/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * toe-loader: what the kernels it runs on have and the uapi headers it
 * builds against (Debian 12: 6.1) lack, and libbpf 1.1 with them.
 */
#ifndef __TOE_UAPI_COMPAT_H
#define __TOE_UAPI_COMPAT_H

#ifndef ENOTSUPP
#define ENOTSUPP 524 /* kernel-internal, what some BPF commands return */
#endif

#define TOE_LINK_TYPE_SOCKMAP 14 /* BPF_LINK_TYPE_SOCKMAP, kernel 6.10 */
#define TOE_LINK_TYPE_TCX 11 /* BPF_LINK_TYPE_TCX, kernel 6.6 */
#define TOE_TCX_INGRESS 46 /* BPF_TCX_INGRESS, kernel 6.6 */
#define TOE_TCX_EGRESS 47 /* BPF_TCX_EGRESS, kernel 6.6 */
/* Netfilter programs (kernel 6.4). */
#define TOE_PROG_TYPE_NETFILTER 32 /* BPF_PROG_TYPE_NETFILTER */
#define TOE_ATTACH_NETFILTER 45 /* BPF_NETFILTER */
#define TOE_LINK_TYPE_NETFILTER 10 /* BPF_LINK_TYPE_NETFILTER */
#define TOE_NF_INET_FORWARD 2 /* NF_INET_FORWARD */
/*
 * bpf_link_info of a tcx link: the union's tcx member starts with ifindex,
 * as its xdp member does; these headers only know the latter.
 */
#define tcx_ifindex(li) ((li)->xdp.ifindex)

#endif /* __TOE_UAPI_COMPAT_H */
