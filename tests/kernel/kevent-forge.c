// SPDX-License-Identifier: GPL-2.0
/*
 * kevent-forge: send a forged KEVENT_CMD_EVENT message from user space to
 * a "kevent" multicast group (needs CAP_NET_ADMIN).  The message claims
 * nlmsg_pid 0, as the kernel's would; a correct listener still rejects it,
 * because the sender's socket address carries a port id other than 0.
 *
 * usage: kevent-forge [GROUP [OBJECT [SIGNAL [PAYLOAD]]]]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include <linux/kevent.h>

int main(int argc, char **argv)
{
	const char *group = argc > 1 ? argv[1] : KEVENT_MCGRP_GENERAL;
	const char *object = argc > 2 ? argv[2] : "/org/kernel/forged";
	const char *signal = argc > 3 ? argv[3] : "forged";
	const char *payload = argc > 4 ? argv[4] : "Forged: yes\n";
	struct sockaddr_nl dst = {.nl_family = AF_NETLINK};
	struct nlmsghdr *hdr;
	struct nl_sock *sk;
	struct nl_msg *msg;
	int family, grp;
	ssize_t n;

	sk = nl_socket_alloc();
	if (!sk || genl_connect(sk) < 0) {
		printf("FORGE-ERROR cannot open a generic netlink socket\n");
		return 2;
	}
	family = genl_ctrl_resolve(sk, KEVENT_GENL_NAME);
	grp = genl_ctrl_resolve_grp(sk, KEVENT_GENL_NAME, group);
	if (family < 0 || grp < 0) {
		printf("FORGE-ERROR cannot resolve %s/%s\n", KEVENT_GENL_NAME, group);
		return 2;
	}
	if (grp > 32) {
		printf("FORGE-ERROR group id %d cannot be addressed with nl_groups\n", grp);
		return 3;
	}

	msg = nlmsg_alloc();
	if (!msg || !genlmsg_put(msg, 0, 0, family, 0, 0, KEVENT_CMD_EVENT, KEVENT_GENL_VERSION) ||
	    nla_put_u32(msg, KEVENT_A_TYPE, KEVENT_GENERAL) < 0 ||
	    nla_put_string(msg, KEVENT_A_OBJECT, object) < 0 ||
	    nla_put_string(msg, KEVENT_A_SIGNAL, signal) < 0 ||
	    nla_put_string(msg, KEVENT_A_PAYLOAD, payload) < 0 ||
	    nla_put_u64(msg, KEVENT_A_SEQNUM, 424242) < 0 ||
	    nla_put_u64(msg, KEVENT_A_TIMESTAMP, (uint64_t)time(NULL) * 1000000000ULL) < 0) {
		printf("FORGE-ERROR cannot build the message\n");
		return 2;
	}
	hdr = nlmsg_hdr(msg);
	hdr->nlmsg_pid = 0; /* pretend to be the kernel */
	dst.nl_groups = 1U << (grp - 1);

	n = sendto(nl_socket_get_fd(sk), hdr, hdr->nlmsg_len, 0, (struct sockaddr *)&dst,
		   sizeof(dst));
	if (n < 0) {
		printf("FORGE-ERROR sendto group %d: %s\n", grp, strerror(errno));
		return 1;
	}
	printf("FORGED group=%s:%d bytes=%zd portid=%u\n", group, grp, n,
	       nl_socket_get_local_port(sk));
	nlmsg_free(msg);
	nl_socket_free(sk);
	return 0;
}
