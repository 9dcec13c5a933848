// SPDX-License-Identifier: GPL-2.0
/*
 * kevent-listen: a minimal listener for the "kevent" Generic Netlink family,
 * for the kernel tests.  It resolves the family and its groups, subscribes,
 * and prints one line per event:
 *
 *   EVENT type=power object=/org/x signal=high seqnum=7 payload=Cpu: 0\n
 *
 * (the payload escaped: "\n", "\\", "\xHH").  Messages not sent by the
 * kernel (the sender's socket address has a port id other than 0) are
 * printed as "REJECTED ..." and not counted as events.  The lines
 * "READY ..." (after subscribing), "ENOBUFS" (overrun) and a final
 * "SUMMARY ..." frame the output; SUMMARY counts events whose timestamp
 * is more than five minutes away from the listener's clock (badtime) and
 * the events lost according to gaps in the sequence numbers (lost).
 *
 * With -g AFTER it subscribes to nothing: it asks for the events after
 * AFTER with KEVENT_CMD_GET, prints them as EVENT lines, then the dump's
 * final message as
 *
 *   END seqnum=40 lost=3 instance=1234
 *
 * and exits (0 once END arrived, 1 on an error reply or a timeout).
 *
 * Exit status: 0 when COUNT events arrived (or COUNT is 0), 1 on timeout
 * before that, 2 on a setup error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
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

static const char *const group_names[] = {
	[KEVENT_GENERAL] = KEVENT_MCGRP_GENERAL, [KEVENT_STORAGE] = KEVENT_MCGRP_STORAGE,
	[KEVENT_POWER] = KEVENT_MCGRP_POWER,	 [KEVENT_FS] = KEVENT_MCGRP_FS,
	[KEVENT_HOTPLUG] = KEVENT_MCGRP_HOTPLUG,
};

static struct nla_policy policy[KEVENT_A_MAX + 1] = {
	[KEVENT_A_TYPE] = {.type = NLA_U32},
	[KEVENT_A_OBJECT] = {.type = NLA_STRING, .maxlen = KEVENT_OBJECT_MAX + 1},
	[KEVENT_A_SIGNAL] = {.type = NLA_STRING, .maxlen = KEVENT_SIGNAL_MAX + 1},
	[KEVENT_A_PAYLOAD] = {.type = NLA_STRING, .maxlen = KEVENT_PAYLOAD_MAX + 1},
	[KEVENT_A_SEQNUM] = {.type = NLA_U64},
	[KEVENT_A_TIMESTAMP] = {.type = NLA_U64},
	[KEVENT_A_INSTANCE] = {.type = NLA_U64},
	[KEVENT_A_LOST] = {.type = NLA_U64},
};

static struct {
	unsigned long events, rejected, enobufs, lost, badtime;
	uint64_t last_seqnum, instance;
	bool end;
	int error;
} st;

static bool quiet;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The event's time is within five minutes of ours (CLOCK_REALTIME). */
static bool timestamp_plausible(uint64_t ns)
{
	struct timespec ts;
	int64_t d;

	clock_gettime(CLOCK_REALTIME, &ts);
	d = (int64_t)((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec - ns);
	return d > -300LL * 1000000000LL && d < 300LL * 1000000000LL;
}

static void print_escaped(const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\\')
			fputs("\\\\", stdout);
		else if (c == '\n')
			fputs("\\n", stdout);
		else if (c < 0x20 || c > 0x7e)
			printf("\\x%02x", c);
		else
			putchar(c);
	}
}

static void handle_msg(struct nlmsghdr *hdr, int family)
{
	struct nlattr *a[KEVENT_A_MAX + 1];
	struct genlmsghdr *g;
	uint32_t type;
	uint64_t seq;
	int err;

	if (hdr->nlmsg_type == NLMSG_DONE) {
		return;
	}
	if (hdr->nlmsg_type == NLMSG_ERROR) {
		struct nlmsgerr *e = nlmsg_data(hdr);

		if (e->error) {
			printf("ERROR reply %d (%s)\n", e->error, strerror(-e->error));
			st.error = e->error;
		}
		return;
	}
	if (hdr->nlmsg_type != family) {
		printf("REJECTED reason=foreign-type nlmsg_type=%u\n", hdr->nlmsg_type);
		st.rejected++;
		return;
	}
	g = nlmsg_data(hdr);
	err = genlmsg_parse(hdr, 0, a, KEVENT_A_MAX, policy);
	if (err >= 0 && g->cmd == KEVENT_CMD_GET && a[KEVENT_A_SEQNUM] && a[KEVENT_A_LOST] &&
	    a[KEVENT_A_INSTANCE]) {
		printf("END seqnum=%" PRIu64 " lost=%" PRIu64 " instance=%" PRIu64 "\n",
		       nla_get_u64(a[KEVENT_A_SEQNUM]), nla_get_u64(a[KEVENT_A_LOST]),
		       nla_get_u64(a[KEVENT_A_INSTANCE]));
		st.end = true;
		return;
	}
	if (err < 0 || g->cmd != KEVENT_CMD_EVENT || !a[KEVENT_A_TYPE] || !a[KEVENT_A_OBJECT] ||
	    !a[KEVENT_A_SIGNAL] || !a[KEVENT_A_PAYLOAD] || !a[KEVENT_A_SEQNUM] ||
	    !a[KEVENT_A_TIMESTAMP]) {
		printf("REJECTED reason=malformed err=%d\n", err);
		st.rejected++;
		return;
	}
	type = nla_get_u32(a[KEVENT_A_TYPE]);
	if (type > KEVENT_TYPE_MAX) {
		printf("REJECTED reason=bad-type type=%" PRIu32 "\n", type);
		st.rejected++;
		return;
	}
	if (a[KEVENT_A_INSTANCE])
		st.instance = nla_get_u64(a[KEVENT_A_INSTANCE]);
	seq = nla_get_u64(a[KEVENT_A_SEQNUM]);
	if (st.last_seqnum && seq > st.last_seqnum + 1)
		st.lost += seq - st.last_seqnum - 1;
	st.last_seqnum = seq;
	if (!timestamp_plausible(nla_get_u64(a[KEVENT_A_TIMESTAMP])))
		st.badtime++;
	st.events++;
	if (quiet)
		return;
	printf("EVENT type=%s object=%s signal=%s seqnum=%" PRIu64 " payload=", group_names[type],
	       nla_get_string(a[KEVENT_A_OBJECT]), nla_get_string(a[KEVENT_A_SIGNAL]), seq);
	print_escaped(nla_get_string(a[KEVENT_A_PAYLOAD]));
	putchar('\n');
}

static void usage(FILE *f)
{
	fprintf(f, "usage: kevent-listen [-n COUNT] [-t TIMEOUT] [-i IDLE] [-b RCVBUF] [-q] [-g "
		   "AFTER]\n"
		   "  -n COUNT    exit after COUNT events (default 0: until timeout)\n"
		   "  -t TIMEOUT  give up after TIMEOUT seconds (default 30)\n"
		   "  -i IDLE     stop after IDLE seconds without a message\n"
		   "  -b RCVBUF   receive buffer size in bytes (SO_RCVBUFFORCE)\n"
		   "  -q          do not print EVENT lines, only the SUMMARY\n"
		   "  -g AFTER    dump the kernel's events after AFTER (KEVENT_CMD_GET)\n");
}

int main(int argc, char **argv)
{
	static char buf[65536];
	unsigned long count = 0;
	double timeout = 30, idle = 0, deadline, last;
	int rcvbuf = 0, family, fd, opt, i;
	bool get = false;
	uint64_t after = 0;
	struct nl_sock *sk;

	while ((opt = getopt(argc, argv, "n:t:i:b:qg:h")) != -1) {
		switch (opt) {
		case 'n':
			count = strtoul(optarg, NULL, 10);
			break;
		case 't':
			timeout = strtod(optarg, NULL);
			break;
		case 'i':
			idle = strtod(optarg, NULL);
			break;
		case 'b':
			rcvbuf = atoi(optarg);
			break;
		case 'q':
			quiet = true;
			break;
		case 'g':
			get = true;
			after = strtoull(optarg, NULL, 10);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	sk = nl_socket_alloc();
	if (!sk || genl_connect(sk) < 0) {
		printf("ERROR cannot open a generic netlink socket\n");
		return 2;
	}
	nl_socket_disable_seq_check(sk);
	family = genl_ctrl_resolve(sk, KEVENT_GENL_NAME);
	if (family < 0) {
		printf("ERROR family %s not found: %s\n", KEVENT_GENL_NAME, nl_geterror(family));
		return 2;
	}
	if (get) {
		struct nl_msg *req = nlmsg_alloc();

		if (!req ||
		    !genlmsg_put(req, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_DUMP,
				 KEVENT_CMD_GET, KEVENT_GENL_VERSION) ||
		    nla_put_u64(req, KEVENT_A_SEQNUM, after) < 0 || nl_send_auto(sk, req) < 0) {
			printf("ERROR cannot send KEVENT_CMD_GET\n");
			return 2;
		}
		nlmsg_free(req);
		goto receive;
	}
	printf("READY family=%d groups=", family);
	for (i = 0; i <= KEVENT_TYPE_MAX; i++) {
		int grp = genl_ctrl_resolve_grp(sk, KEVENT_GENL_NAME, group_names[i]);

		if (grp < 0 || nl_socket_add_membership(sk, grp) < 0) {
			printf("\nERROR cannot join group %s: %s\n", group_names[i],
			       nl_geterror(grp));
			return 2;
		}
		printf("%s%s:%d", i ? "," : "", group_names[i], grp);
	}
	fd = nl_socket_get_fd(sk);
	if (rcvbuf > 0 && setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0 &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) < 0)
		printf(" (cannot set rcvbuf: %s)", strerror(errno));
	putchar('\n');

receive:
	fd = nl_socket_get_fd(sk);
	last = now();
	deadline = last + timeout;
	while ((!count || st.events < count) && !st.end && !st.error) {
		struct sockaddr_nl from;
		struct iovec iov = {buf, sizeof(buf)};
		struct msghdr msg = {
			.msg_name = &from,
			.msg_namelen = sizeof(from),
			.msg_iov = &iov,
			.msg_iovlen = 1,
		};
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		double t = now(), wait = deadline - t;
		struct nlmsghdr *hdr;
		ssize_t n;

		if (wait <= 0)
			break; /* the overall timeout */
		if (idle > 0 && last + idle - t < wait)
			wait = last + idle - t;
		if (wait < 0)
			wait = 0;
		n = poll(&pfd, 1, (int)(wait * 1000));
		if (n < 0 && errno != EINTR) {
			printf("ERROR poll: %s\n", strerror(errno));
			return 2;
		}
		if (n == 0 && idle > 0 && now() >= last + idle)
			break; /* idle, and nothing left to read */
		if (n <= 0)
			continue;
		n = recvmsg(fd, &msg, 0);
		if (n < 0) {
			if (errno == ENOBUFS) {
				st.enobufs++;
				if (!quiet)
					printf("ENOBUFS\n");
			} else if (errno != EINTR && errno != EAGAIN) {
				printf("ERROR recvmsg: %s\n", strerror(errno));
				return 2;
			}
			continue;
		}
		last = now();
		if (msg.msg_flags & MSG_TRUNC) {
			printf("REJECTED reason=truncated\n");
			st.rejected++;
			continue;
		}
		if (msg.msg_namelen != sizeof(from) || from.nl_family != AF_NETLINK ||
		    from.nl_pid != 0) {
			/* The sender's address, not nlmsg_pid: that one is forgeable. */
			hdr = (struct nlmsghdr *)buf;
			printf("REJECTED reason=not-kernel portid=%u nlmsg_pid=%u\n", from.nl_pid,
			       nlmsg_ok(hdr, (int)n) ? hdr->nlmsg_pid : 0);
			st.rejected++;
			continue;
		}
		for (hdr = (struct nlmsghdr *)buf; nlmsg_ok(hdr, (int)n);
		     hdr = nlmsg_next(hdr, (int *)&n))
			handle_msg(hdr, family);
	}
	printf("SUMMARY events=%lu rejected=%lu enobufs=%lu lost=%lu badtime=%lu "
	       "last_seqnum=%" PRIu64 " instance=%" PRIu64 "\n",
	       st.events, st.rejected, st.enobufs, st.lost, st.badtime, st.last_seqnum,
	       st.instance);
	nl_socket_free(sk);
	if (get)
		return st.end && !st.error ? 0 : 1;
	return (!count || st.events >= count) ? 0 : 1;
}
