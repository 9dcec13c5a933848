// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * keventctl send --batch FILE: many events in one connection.  Each line of
 * FILE is TYPE<TAB>OBJECT<TAB>SIGNAL[<TAB>PAYLOAD], with \n, \t and \\ for a
 * newline, a tab and a backslash in any field; empty lines and lines that
 * start with '#' are skipped.  Every event goes as a "post" request, which
 * keventd answers only when it refuses one ("err post N: ..."); a "sync"
 * after the last one is answered once keventd has taken them all.  The
 * socket is written only when writable and read whenever readable, so
 * neither side can wait on the other.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctl.h"
#include "proto.h"
#include "util.h"

#define LINE_MAX_BYTES 16384 /* far above the largest valid event */

struct batch {
	const struct ctl_post_source *src; /* NULL: --batch lines */
	const char *path;
	FILE *in;
	unsigned long line;
	unsigned long *post_line; /* post number - 1 -> line number */
	size_t n_posts, cap_posts;
	unsigned long failed;
	bool eof, synced, stop;
	struct strbuf msg; /* the request waiting to go out */
	bool pending;
	char *buf; /* getline()'s */
	size_t cap;
};

/* Undoes the escapes of one field in place.  Returns false on an unknown one. */
static bool unescape(char *s)
{
	char *out = s;
	for (; *s; s++) {
		if (*s != '\\') {
			*out++ = *s;
			continue;
		}
		switch (*++s) {
		case 'n':
			*out++ = '\n';
			break;
		case 't':
			*out++ = '\t';
			break;
		case '\\':
			*out++ = '\\';
			break;
		default:
			return false;
		}
	}
	*out = '\0';
	return true;
}

static void line_error(struct batch *b, const char *what)
{
	fprintf(stderr, "%s:%lu: error: %s\n", b->path, b->line, what);
	b->failed++;
	if (b->src && b->src->strict)
		b->stop = true; /* the posts so far still get their sync */
}

/* Splits a line into f[1..] (f[0] is the command), undoing the escapes.
 * Returns the number of fields with the command, or 0 with *why. */
static size_t split_fields(char *line, const char *f[6], const char **why)
{
	size_t n = 1;
	for (char *p = line, *tab; p; p = tab) {
		tab = strchr(p, '\t');
		if (tab)
			*tab++ = '\0';
		if (n == 5) {
			*why = "more than 4 tab-separated fields";
			return 0;
		}
		if (!unescape(p)) {
			*why = "unknown escape (use \\n, \\t or \\\\)";
			return 0;
		}
		f[n++] = p;
	}
	if (n < 4) {
		*why = "needs TYPE, OBJECT and SIGNAL, separated by tabs";
		return 0;
	}
	return n;
}

/* Reads lines until one is an event, encoded into b->msg as a post.
 * Returns 1 with b->pending set, 0 at the end of the file, -1 on a read error. */
static int next_event(struct batch *b)
{
	while (!b->stop) {
		errno = 0;
		ssize_t len = getline(&b->buf, &b->cap, b->in);
		char *buf = b->buf;
		if (len < 0) {
			if (errno) {
				fprintf(stderr, "keventctl: reading %s: %s\n", b->path,
					strerror(errno));
				return -1;
			}
			return 0;
		}
		b->line++;
		if (len > 0 && buf[len - 1] == '\n')
			buf[--len] = '\0';
		if (len == 0 || (!b->src && buf[0] == '#'))
			continue;
		if ((size_t)len > (b->src ? b->src->line_max : LINE_MAX_BYTES)) {
			line_error(b, "line too long");
			continue;
		}
		if (strlen(buf) != (size_t)len) {
			line_error(b, "NUL byte in line");
			continue;
		}
		const char *f[6] = {"post"}, *why = NULL;
		size_t n = b->src ? b->src->parse(b->src->userdata, buf, (size_t)len, f, &why)
				  : split_fields(buf, f, &why);
		if (!n) {
			line_error(b, why);
			continue;
		}
		if (kctl_encode(&b->msg, f, n) < 0) {
			line_error(b, "event too long for one request");
			continue;
		}
		if (b->n_posts == b->cap_posts) {
			size_t c = b->cap_posts ? b->cap_posts * 2 : 256;
			unsigned long *v = realloc(b->post_line, c * sizeof(*v));
			if (!v) {
				fprintf(stderr, "keventctl: out of memory\n");
				return -1;
			}
			b->post_line = v;
			b->cap_posts = c;
		}
		b->post_line[b->n_posts++] = b->line;
		b->pending = true;
		return 1;
	}
	return 0;
}

/* One reply: an error about a post, or the answer to the sync.
 * Returns 0, or 1 when the connection cannot go on. */
static int on_reply(struct batch *b, const char *buf, size_t len)
{
	struct kctl_msg m;
	if (len > KCTL_MSG_MAX || kctl_decode(buf, len, &m) < 0) {
		fprintf(stderr, "keventctl: malformed reply from keventd\n");
		return 1;
	}
	const char *text = m.n > 1 ? m.f[1] : "";
	if (strcmp(m.f[0], "ok") == 0) {
		b->synced = true;
		return 0;
	}
	if (strcmp(m.f[0], "err") != 0)
		return 0;
	unsigned long long post;
	int used = 0;
	if (sscanf(text, "post %llu: %n", &post, &used) == 1 && used > 0 && post >= 1 &&
	    post <= b->n_posts) {
		ctl_print(stderr, "%s:%lu: keventd: %s", b->path, b->post_line[post - 1],
			  text + used);
		b->failed++;
		return 0;
	}
	ctl_print(stderr, "keventctl: keventd: %s", text);
	return 1;
}

static int run(struct batch *b, int fd)
{
	char buf[KCTL_MSG_MAX + 1];
	while (!b->synced) {
		if (!b->pending && !b->eof) {
			int rc = next_event(b);
			if (rc < 0)
				return 1;
			if (rc == 0) {
				const char *f[] = {"sync"};
				kctl_encode(&b->msg, f, 1);
				b->pending = b->eof = true;
			}
		}
		struct pollfd p = {.fd = fd, .events = POLLIN | (b->pending ? POLLOUT : 0)};
		if (poll(&p, 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("keventctl: poll");
			return 1;
		}
		if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
				fprintf(stderr, "keventctl: keventd closed the connection\n");
				return 1;
			}
			if (n > 0 && on_reply(b, buf, (size_t)n))
				return 1;
			continue;
		}
		if (p.revents & POLLOUT) {
			ssize_t n = send(fd, b->msg.buf, b->msg.len, MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n >= 0)
				b->pending = false;
			else if (errno != EAGAIN && errno != EINTR) {
				fprintf(stderr, "keventctl: sending to keventd: %s\n",
					strerror(errno));
				return 1;
			}
		}
	}
	return 0;
}

int ctl_post_events(struct ctl *c, const char *path, const struct ctl_post_source *src,
		    bool verbose)
{
	struct batch b = {.src = src, .path = path, .msg = STRBUF_INIT};
	bool is_stdin = strcmp(path, "-") == 0;
	if (is_stdin) {
		b.in = stdin;
		b.path = "(stdin)";
	} else if (!(b.in = fopen(path, "re"))) {
		fprintf(stderr, "keventctl: cannot open %s: %s\n", path, strerror(errno));
		return 1;
	}
	int status = 1;
	int fd = ctl_connect(c);
	if (fd >= 0) {
		status = run(&b, fd);
		close(fd);
	}
	if (status == 0 && b.failed)
		status = 1;
	if (verbose || b.failed)
		fprintf(verbose && !b.failed ? stdout : stderr,
			"%zu event(s) posted, %lu line(s) failed\n", b.n_posts, b.failed);
	if (!is_stdin)
		fclose(b.in);
	free(b.post_line);
	free(b.buf);
	strbuf_release(&b.msg);
	return status;
}

int ctl_send_batch(struct ctl *c, const char *path, bool verbose)
{
	return ctl_post_events(c, path, NULL, verbose);
}
