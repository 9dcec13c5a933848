// SPDX-License-Identifier: GPL-2.0-or-later
/* The socket source's numbers across restarts (seqfile.h). */
#include "seqfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "statedir.h"
#include "util.h"

/* One pwrite() of a fixed width: a keventd killed mid-way has either
 * written the whole number or none of it. */
static int put(struct kseqfile *s, uint64_t n)
{
	char buf[24];
	int len = snprintf(buf, sizeof(buf), "%020" PRIu64 "\n", n);
	if (s->fd < 0)
		return 0;
	if (pwrite(s->fd, buf, (size_t)len, 0) != len) {
		log_warning("%s: cannot write: %s; socket event numbers may repeat after a "
			    "restart",
			    KSEQFILE_NAME, strerror(errno));
		return -EIO;
	}
	return 0;
}

int kseqfile_open(struct kseqfile *s, const struct kstatedir *dir)
{
	*s = (struct kseqfile){.fd = -1};
	if (!dir)
		return 0;
	s->fd = kstatedir_openat(dir->fd, KSEQFILE_NAME, O_RDWR | O_CREAT, 0600);
	if (s->fd < 0) {
		log_warning("cannot open %s/%s: %s; socket event numbers start at 1", dir->path,
			    KSEQFILE_NAME, kstatedir_strerror(s->fd));
		s->fd = -1;
		return 0;
	}
	char buf[32] = {0};
	ssize_t n = pread(s->fd, buf, sizeof(buf) - 1, 0);
	char *end = NULL;
	errno = 0;
	uint64_t v = n > 0 ? strtoull(buf, &end, 10) : 0;
	if (n > 0 && (errno || end == buf || (*end && *end != '\n'))) {
		log_warning("%s/%s: not a number; socket event numbers start at 1", dir->path,
			    KSEQFILE_NAME);
		v = 0;
	}
	s->last = s->reserved = v;
	return 0;
}

void kseqfile_seen(struct kseqfile *s, uint64_t n)
{
	if (n > s->last)
		s->last = n;
	if (n > s->reserved)
		s->reserved = n;
}

uint64_t kseqfile_next(struct kseqfile *s)
{
	uint64_t n = ++s->last;
	if (n > s->reserved && s->fd >= 0) {
		/* the next block: written before any number of it is given */
		s->reserved = n - 1 + KSEQFILE_STRIDE;
		(void)put(s, s->reserved);
	}
	return n;
}

void kseqfile_close(struct kseqfile *s)
{
	if (s->fd < 0)
		return;
	(void)put(s, s->last);
	close(s->fd);
	s->fd = -1;
}
