// SPDX-License-Identifier: GPL-2.0-or-later
/* keventctl's side of the control socket. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl.h"
#include "proto.h"
#include "util.h"

int ctl_connect(struct ctl *c)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(c->control) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "keventctl: control socket path too long: %s\n", c->control);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, c->control);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int rc = -errno;
		fprintf(stderr, "keventctl: cannot connect to keventd at %s: %s\n", c->control,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	return fd;
}

int ctl_open(struct ctl *c, const char *const *fields, size_t n)
{
	int fd = ctl_connect(c);
	if (fd < 0)
		return -1;
	if (ctl_request(fd, fields, n) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int ctl_call(struct ctl *c, const char *const *fields, size_t n,
	     void (*on_data)(const char *text, void *ud), void *ud, char **ok_text)
{
	int fd = ctl_open(c, fields, n);
	if (fd < 0)
		return 1;
	char *ok = NULL;
	int status = ctl_replies(fd, on_data, ud, &ok);
	close(fd);
	if (ok_text)
		*ok_text = ok;
	else
		free(ok);
	return status;
}

void ctl_put_text(const char *text, void *ud)
{
	(void)ud;
	fputs(text, stdout);
}

void ctl_large_output(void)
{
	/* stdio's 4 KiB were two thirds of the system calls of a
	 * conditions --json of 100,000 rows */
	static char out[64 * 1024];
	setvbuf(stdout, out, _IOFBF, sizeof(out));
}

/* keventd may have answered and closed before our request went out (a refused
 * peer): show its answer rather than the broken pipe. */
static bool print_early_error(int fd)
{
	char buf[KCTL_MSG_MAX + 1];
	struct kctl_msg m;
	ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
	if (n <= 0 || (size_t)n > KCTL_MSG_MAX || kctl_decode(buf, (size_t)n, &m) < 0 ||
	    strcmp(m.f[0], "err") != 0 || m.n < 2)
		return false;
	ctl_print(stderr, "keventctl: keventd: %s", m.f[1]);
	return true;
}

int ctl_request(int fd, const char *const *fields, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	int rc = kctl_encode(&sb, fields, n);
	if (rc == -EMSGSIZE) {
		fprintf(stderr, "keventctl: request too long (over %d bytes)\n", KCTL_MSG_MAX);
	} else if (rc == 0 && send(fd, sb.buf, sb.len, MSG_NOSIGNAL) < 0) {
		rc = -errno;
		if (!print_early_error(fd))
			fprintf(stderr, "keventctl: sending to keventd: %s\n", strerror(-rc));
	}
	strbuf_release(&sb);
	return rc;
}

int ctl_recv(int fd, char *buf, uint64_t deadline, struct kctl_msg *m)
{
	for (;;) {
		if (deadline) {
			uint64_t now = now_monotonic_ns();
			if (now >= deadline)
				return -ETIMEDOUT;
			struct pollfd p = {.fd = fd, .events = POLLIN};
			int rc = poll(&p, 1, (int)((deadline - now + 999999) / 1000000));
			if (rc < 0 && errno != EINTR)
				return -errno;
			if (rc <= 0)
				continue; /* interrupted, or the deadline: looked at above */
		}
		ssize_t n = recv(fd, buf, KCTL_MSG_MAX + 1, MSG_TRUNC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		if ((size_t)n > KCTL_MSG_MAX || kctl_decode(buf, (size_t)n, m) < 0) {
			fprintf(stderr, "keventctl: malformed reply from keventd\n");
			return -EBADMSG;
		}
		return 1;
	}
}

int ctl_replies(int fd, void (*on_data)(const char *text, void *ud), void *ud, char **ok_text)
{
	char buf[KCTL_MSG_MAX + 1];
	for (;;) {
		struct kctl_msg m;
		int n = ctl_recv(fd, buf, 0, &m);
		if (n == -EBADMSG)
			return 1;
		if (n < 0) {
			fprintf(stderr, "keventctl: reading from keventd: %s\n", strerror(-n));
			return 1;
		}
		if (n == 0) {
			if (!on_data || ok_text) {
				fprintf(stderr, "keventctl: keventd closed the connection\n");
				return 1;
			}
			return 0; /* a stream (monitor) ends when keventd stops */
		}
		if (strcmp(m.f[0], "data") == 0 && m.n > 1) {
			if (on_data)
				on_data(m.f[1], ud);
		} else if (strcmp(m.f[0], "ok") == 0) {
			if (ok_text)
				*ok_text = m.n > 1 ? strdup(m.f[1]) : NULL;
			return 0;
		} else if (strcmp(m.f[0], "err") == 0) {
			ctl_print(stderr, "keventctl: keventd: %s", m.n > 1 ? m.f[1] : "error");
			return 1;
		}
	}
}
