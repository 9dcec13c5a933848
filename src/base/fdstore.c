// SPDX-License-Identifier: GPL-2.0-or-later
#include "fdstore.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "notify.h"
#include "util.h"

#define LISTEN_FDS_START 3
#define NAME_MAX_LEN	 255 /* the service manager's limit for FDNAME= */

struct kfd {
	char *name;
	int fd;
	bool poll;
};

struct kfdstore {
	struct kfd *passed; /* fd -1: taken */
	size_t n_passed;
	size_t n_taken;
	struct kfd *kept;
	size_t n_kept, cap_kept;
};

/* The name of the i-th descriptor in LISTEN_FDNAMES (colon-separated), or
 * "unknown" as the service manager says it when there is none. */
static char *nth_name(const char *names, size_t i)
{
	const char *p = names;
	for (size_t k = 0; p && k < i; k++) {
		p = strchr(p, ':');
		if (p)
			p++;
	}
	if (!p)
		return strdup("unknown");
	size_t len = strcspn(p, ":");
	return len ? strndup(p, len) : strdup("unknown");
}

int kfdstore_new(struct kfdstore **out)
{
	struct kfdstore *st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	const char *names = getenv("LISTEN_FDNAMES");
	char *end = NULL;
	unsigned long n = fds ? strtoul(fds, &end, 10) : 0;
	bool ours = pid && strtoll(pid, NULL, 10) == (long long)getpid();
	if (!ours || !end || *end || n > 4096)
		n = 0;
	st->passed = n ? calloc(n, sizeof(*st->passed)) : NULL;
	for (size_t i = 0; st->passed && i < n; i++) {
		int fd = LISTEN_FDS_START + (int)i;
		(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
		st->passed[i] = (struct kfd){.name = nth_name(names, i), .fd = fd};
		st->n_passed++;
		if (!st->passed[i].name) {
			close(fd);
			st->passed[i].fd = -1;
		}
	}
	if (n && !st->passed)
		for (unsigned long i = 0; i < n; i++)
			close(LISTEN_FDS_START + (int)i);
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	*out = st;
	return n && !st->passed ? -ENOMEM : 0;
}

void kfdstore_free(struct kfdstore *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->n_passed; i++) {
		if (st->passed[i].fd >= 0)
			close(st->passed[i].fd);
		free(st->passed[i].name);
	}
	for (size_t i = 0; i < st->n_kept; i++)
		free(st->kept[i].name);
	free(st->passed);
	free(st->kept);
	free(st);
}

int kfdstore_take(struct kfdstore *st, const char *name)
{
	for (size_t i = 0; st && i < st->n_passed; i++) {
		struct kfd *p = &st->passed[i];
		if (p->fd >= 0 && p->name && strcmp(p->name, name) == 0) {
			st->n_taken++;
			return TAKE_FD(p->fd);
		}
	}
	return -1;
}

void kfdstore_refuse(struct kfdstore *st, const char *name, int fd, const char *why)
{
	if (st)
		st->n_taken--;
	log_warning("fd store: %s: not taken back (%s): closed; its source opens afresh", name,
		    why);
	if (fd >= 0)
		close(fd);
}

size_t kfdstore_settle(struct kfdstore *st)
{
	if (!st || !st->n_passed)
		return 0;
	_cleanup_strbuf_ struct strbuf taken = STRBUF_INIT;
	for (size_t i = 0; i < st->n_passed; i++) {
		struct kfd *p = &st->passed[i];
		if (p->fd >= 0) {
			log_warning(
				"fd store: %s: not taken back (no source enabled has it, or its "
				"device is gone): closed",
				p->name ? p->name : "unknown");
			close(TAKE_FD(p->fd));
		}
		bool first = true; /* one removal per name */
		for (size_t k = 0; k < i && first; k++)
			first = !p->name || !st->passed[k].name ||
				strcmp(st->passed[k].name, p->name) != 0;
		if (!first || !p->name)
			continue;
		char msg[NAME_MAX_LEN + 32];
		snprintf(msg, sizeof(msg), "FDSTOREREMOVE=1\nFDNAME=%s", p->name);
		(void)notify_service_manager(msg);
	}
	for (size_t i = 0; i < st->n_kept; i++)
		strbuf_printf(&taken, "%s%s", i ? " " : "", st->kept[i].name);
	log_info("fd store: %zu of %zu descriptors taken back%s%s", st->n_taken, st->n_passed,
		 st->n_kept ? "; kept for the next start: " : "", strbuf_str(&taken));
	return st->n_taken;
}

/* What systemd takes for FDNAME=: printable ASCII but ':', which separates
 * the names of LISTEN_FDNAMES.  It stores a descriptor under another name
 * ("stored") rather than refuse it. */
static bool name_ok(const char *name)
{
	size_t len = strlen(name);
	for (const char *p = name; *p; p++)
		if (*p < ' ' || *p > '~' || *p == ':')
			return false;
	return len > 0 && len <= NAME_MAX_LEN;
}

int kfdstore_keep(struct kfdstore *st, const char *name, int fd, bool poll)
{
	if (!st || fd < 0)
		return 0;
	if (!name_ok(name))
		return -EINVAL;
	if (st->n_kept == st->cap_kept) {
		size_t cap = st->cap_kept ? 2 * st->cap_kept : 8;
		struct kfd *k = realloc(st->kept, cap * sizeof(*k));
		if (!k)
			return -ENOMEM;
		st->kept = k;
		st->cap_kept = cap;
	}
	char *copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	st->kept[st->n_kept++] = (struct kfd){.name = copy, .fd = fd, .poll = poll};
	return 0;
}

void kfdstore_forget(struct kfdstore *st, int fd)
{
	for (size_t i = 0; st && i < st->n_kept; i++)
		if (st->kept[i].fd == fd) {
			free(st->kept[i].name);
			st->kept[i] = st->kept[--st->n_kept];
			return;
		}
}

size_t kfdstore_hand_over(struct kfdstore *st)
{
	size_t sent = 0;
	for (size_t i = 0; st && i < st->n_kept; i++) {
		const struct kfd *k = &st->kept[i];
		char msg[NAME_MAX_LEN + 48];
		/* FDPOLL=0: a socket that overran (POLLERR) is still worth
		 * keeping; its next reader sees the overrun and resyncs */
		snprintf(msg, sizeof(msg), "FDSTORE=1\nFDNAME=%s%s", k->name,
			 k->poll ? "" : "\nFDPOLL=0");
		int rc = notify_service_manager_fd(msg, k->fd);
		if (rc < 0)
			log_warning("fd store: cannot hand %s over: %s", k->name, strerror(-rc));
		sent += rc > 0;
	}
	if (sent)
		log_info("fd store: %zu descriptors handed to the service manager for the next "
			 "start",
			 sent);
	return sent;
}

const char *kfdstore_not_netlink(int fd, int protocol, unsigned groups)
{
	int v = 0;
	socklen_t len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len) < 0 || v != AF_NETLINK)
		return "not a netlink socket";
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v, &len) < 0 || v != protocol)
		return "a netlink socket of another protocol";
	struct sockaddr_nl sa = {0};
	len = sizeof(sa);
	if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0 || sa.nl_family != AF_NETLINK ||
	    sa.nl_pid == 0)
		return "a netlink socket not bound";
	if (groups && sa.nl_groups != groups)
		return "a netlink socket bound to other groups";
	return NULL;
}
