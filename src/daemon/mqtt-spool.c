// SPDX-License-Identifier: GPL-2.0-or-later
#include "mqtt-spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAGIC	     0x6b6d7131u /* "kmq1" */
#define SEG_MIN	     (64u * 1024)
#define SEG_MAX	     (4u * 1024 * 1024)
#define MAX_SEGMENTS 4096

struct rec {
	uint32_t magic;
	uint32_t topic_len;
	uint32_t msg_len;
	uint32_t sum; /* FNV-1a of seq, topic and message */
	uint64_t seq;
};

struct seg {
	uint64_t first; /* number of its first record */
	uint64_t n;	/* records */
	uint64_t bytes;
};

struct kmqtt_spool {
	int dirfd, lockfd, ackfd;
	int wfd;	      /* the last segment, appended to */
	int rfd;	      /* the segment the cursor is in */
	size_t rseg;	      /* its index */
	uint64_t roff;	      /* the cursor's offset in it */
	uint64_t read_seq;    /* the cursor: the next record to send */
	uint64_t next_seq;    /* the number of the next record appended */
	uint64_t acked_below; /* everything below is acknowledged */
	uint64_t max_bytes, seg_max, bytes;
	struct seg *segs;
	size_t n_segs, cap_segs;
};

static uint32_t fnv(uint32_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

static uint32_t checksum(uint64_t seq, const char *topic, size_t tlen, const char *msg, size_t mlen)
{
	uint32_t h = fnv(2166136261u, &seq, sizeof(seq));
	h = fnv(h, topic, tlen);
	return fnv(h, msg, mlen);
}

static void seg_name(uint64_t first, char name[32])
{
	snprintf(name, 32, "seg-%016" PRIx64, first);
}

static int open_seg(struct kmqtt_spool *s, uint64_t first, int flags)
{
	char name[32];
	seg_name(first, name);
	int fd = openat(s->dirfd, name, flags | O_CLOEXEC | O_NOFOLLOW, 0600);
	return fd < 0 ? -errno : fd;
}

static void write_acked(struct kmqtt_spool *s)
{
	uint64_t v = s->acked_below;
	(void)!pwrite(s->ackfd, &v, sizeof(v), 0);
}

/* Forgets the oldest segment, and its file. */
static void drop_first(struct kmqtt_spool *s)
{
	struct seg *g = &s->segs[0];
	char name[32];
	seg_name(g->first, name);
	(void)unlinkat(s->dirfd, name, 0);
	s->bytes -= g->bytes;
	uint64_t end = g->first + g->n;
	if (s->wfd >= 0 && s->n_segs == 1) {
		close(s->wfd);
		s->wfd = -1;
	}
	if (s->rseg == 0 && s->rfd >= 0) {
		close(s->rfd);
		s->rfd = -1;
	}
	memmove(s->segs, s->segs + 1, (s->n_segs - 1) * sizeof(*s->segs));
	s->n_segs--;
	if (s->rseg > 0)
		s->rseg--;
	else
		s->roff = 0;
	if (s->read_seq < end)
		s->read_seq = end;
	if (s->acked_below < end) {
		s->acked_below = end;
		write_acked(s);
	}
}

static int add_seg(struct kmqtt_spool *s, uint64_t first, uint64_t n, uint64_t bytes)
{
	if (s->n_segs == s->cap_segs) {
		size_t cap = s->cap_segs ? 2 * s->cap_segs : 16;
		struct seg *v = realloc(s->segs, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->segs = v;
		s->cap_segs = cap;
	}
	s->segs[s->n_segs++] = (struct seg){first, n, bytes};
	s->bytes += bytes;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Reads record at off of fd: 0 with *r (and topic, msg when given), 1 at
 * a torn or foreign record, -errno. */
static int read_rec(int fd, uint64_t off, struct rec *r, struct strbuf *topic, struct strbuf *msg)
{
	ssize_t n = pread(fd, r, sizeof(*r), (off_t)off);
	if (n < 0)
		return -errno;
	if ((size_t)n < sizeof(*r) || r->magic != MAGIC || r->topic_len > 65535 ||
	    r->msg_len > 16 * 1024 * 1024)
		return 1;
	size_t len = (size_t)r->topic_len + r->msg_len;
	_cleanup_free_ char *buf = malloc(len + 1);
	if (!buf)
		return -ENOMEM;
	n = pread(fd, buf, len, (off_t)(off + sizeof(*r)));
	if (n < 0)
		return -errno;
	if ((size_t)n < len ||
	    checksum(r->seq, buf, r->topic_len, buf + r->topic_len, r->msg_len) != r->sum)
		return 1;
	if (topic) {
		strbuf_reset(topic);
		strbuf_add(topic, buf, r->topic_len);
	}
	if (msg) {
		strbuf_reset(msg);
		strbuf_add(msg, buf + r->topic_len, r->msg_len);
	}
	return 0;
}

/* Loads the segments there are; a torn record ends the spool there. */
static int load(struct kmqtt_spool *s, uint64_t *cut)
{
	int dfd = dup(s->dirfd);
	if (dfd < 0)
		return -errno;
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -errno;
	}
	uint64_t *firsts = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	for (struct dirent *e; (e = readdir(d));) {
		uint64_t first;
		char end;
		if (strncmp(e->d_name, "seg-", 4) != 0 ||
		    sscanf(e->d_name + 4, "%16" SCNx64 "%c", &first, &end) != 1)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			uint64_t *v = realloc(firsts, cap * sizeof(*v));
			if (!v) {
				rc = -ENOMEM;
				break;
			}
			firsts = v;
		}
		firsts[n++] = first;
	}
	closedir(d);
	if (rc == 0 && n)
		qsort(firsts, n, sizeof(*firsts), cmp_u64);
	bool torn = false;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		char name[32];
		seg_name(firsts[i], name);
		struct stat st;
		int fd = open_seg(s, firsts[i], O_RDWR);
		if (fd < 0) {
			rc = fd;
			break;
		}
		if (fstat(fd, &st) < 0) {
			rc = -errno;
			close(fd);
			break;
		}
		if (torn || firsts[i] < s->next_seq) {
			/* after a torn record, or overlapping: not ours to trust */
			*cut += (uint64_t)st.st_size;
			close(fd);
			(void)unlinkat(s->dirfd, name, 0);
			continue;
		}
		uint64_t off = 0, recs = 0;
		struct rec r;
		while (off < (uint64_t)st.st_size) {
			int k = read_rec(fd, off, &r, NULL, NULL);
			if (k < 0) {
				rc = k;
				break;
			}
			if (k > 0 || r.seq != firsts[i] + recs) {
				torn = true;
				*cut += (uint64_t)st.st_size - off;
				if (ftruncate(fd, (off_t)off) < 0)
					rc = -errno;
				break;
			}
			off += sizeof(r) + r.topic_len + r.msg_len;
			recs++;
		}
		close(fd);
		if (rc < 0)
			break;
		if (!recs) {
			(void)unlinkat(s->dirfd, name, 0);
			continue;
		}
		rc = add_seg(s, firsts[i], recs, off);
		s->next_seq = firsts[i] + recs;
	}
	free(firsts);
	return rc;
}

int kmqtt_spool_open(const char *dir, uint64_t max_bytes, struct kmqtt_spool **out, uint64_t *cut)
{
	*cut = 0;
	/* the directory and its parents, as mkdir -p */
	_cleanup_free_ char *path = strdup(dir);
	if (!path)
		return -ENOMEM;
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	struct kmqtt_spool *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->lockfd = s->ackfd = s->wfd = s->rfd = -1;
	s->max_bytes = max_bytes;
	s->seg_max = max_bytes / 8;
	s->seg_max = s->seg_max < SEG_MIN ? SEG_MIN : s->seg_max > SEG_MAX ? SEG_MAX : s->seg_max;
	s->next_seq = 1;
	int rc = 0;
	s->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->dirfd < 0)
		rc = -errno;
	if (rc == 0) {
		s->lockfd =
			openat(s->dirfd, "lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (s->lockfd < 0)
			rc = -errno;
		else if (flock(s->lockfd, LOCK_EX | LOCK_NB) < 0)
			rc = errno == EWOULDBLOCK ? -EBUSY : -errno;
	}
	if (rc == 0) {
		s->ackfd =
			openat(s->dirfd, "acked", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (s->ackfd < 0)
			rc = -errno;
	}
	uint64_t acked = 0;
	if (rc == 0 && pread(s->ackfd, &acked, sizeof(acked), 0) != sizeof(acked))
		acked = 0;
	if (rc == 0)
		rc = load(s, cut);
	if (rc < 0) {
		kmqtt_spool_free(s);
		return rc;
	}
	/* what the broker acknowledged before the restart is not sent again */
	s->acked_below = s->n_segs ? s->segs[0].first : s->next_seq;
	if (acked > s->acked_below)
		s->acked_below = acked > s->next_seq ? s->next_seq : acked;
	if (!s->n_segs && acked > s->next_seq)
		s->next_seq = s->acked_below = acked; /* numbers never repeat */
	while (s->n_segs && s->segs[0].first + s->segs[0].n <= s->acked_below)
		drop_first(s);
	s->read_seq = s->acked_below;
	s->rseg = 0;
	s->roff = 0;
	if (s->n_segs && s->read_seq > s->segs[0].first) {
		/* skip the acknowledged records of the first segment */
		int fd = open_seg(s, s->segs[0].first, O_RDONLY);
		struct rec r;
		for (uint64_t q = s->segs[0].first; fd >= 0 && q < s->read_seq; q++) {
			if (read_rec(fd, s->roff, &r, NULL, NULL) != 0)
				break;
			s->roff += sizeof(r) + r.topic_len + r.msg_len;
		}
		s->rfd = fd;
	}
	write_acked(s);
	*out = s;
	return 0;
}

void kmqtt_spool_free(struct kmqtt_spool *s)
{
	if (!s)
		return;
	if (s->wfd >= 0)
		close(s->wfd);
	if (s->rfd >= 0)
		close(s->rfd);
	if (s->ackfd >= 0)
		close(s->ackfd);
	if (s->lockfd >= 0)
		close(s->lockfd);
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s->segs);
	free(s);
}

/* Messages of the oldest segment not yet sent. */
static uint64_t unsent_in_first(const struct kmqtt_spool *s)
{
	const struct seg *g = &s->segs[0];
	uint64_t end = g->first + g->n;
	return s->read_seq >= end ? 0 : end - (s->read_seq > g->first ? s->read_seq : g->first);
}

int kmqtt_spool_append(struct kmqtt_spool *s, const char *topic, const char *msg, size_t len,
		       uint64_t *dropped)
{
	*dropped = 0;
	size_t tlen = strlen(topic);
	uint64_t size = sizeof(struct rec) + tlen + len;
	if (size > s->max_bytes || tlen > 65535 || len > 16 * 1024 * 1024) {
		*dropped = 1;
		return 0;
	}
	while (s->n_segs && (s->bytes + size > s->max_bytes || s->n_segs >= MAX_SEGMENTS)) {
		*dropped += unsent_in_first(s);
		drop_first(s);
	}
	struct seg *last = s->n_segs ? &s->segs[s->n_segs - 1] : NULL;
	if (!last || last->bytes + size > s->seg_max || s->wfd < 0) {
		if (s->wfd >= 0)
			close(s->wfd);
		s->wfd = open_seg(s, s->next_seq, O_WRONLY | O_CREAT | O_EXCL | O_APPEND);
		if (s->wfd < 0) {
			int rc = s->wfd;
			s->wfd = -1;
			return rc;
		}
		int rc = add_seg(s, s->next_seq, 0, 0);
		if (rc < 0)
			return rc;
		last = &s->segs[s->n_segs - 1];
	}
	struct rec r = {MAGIC, (uint32_t)tlen, (uint32_t)len,
			checksum(s->next_seq, topic, tlen, msg, len), s->next_seq};
	struct iovec iov[3] = {{&r, sizeof(r)}, {(void *)topic, tlen}, {(void *)msg, len}};
	ssize_t n = writev(s->wfd, iov, 3);
	if (n < 0 || (uint64_t)n != size) {
		int rc = n < 0 ? -errno : -EIO;
		/* a short write leaves a torn record: begin a new segment next time */
		if (n > 0) {
			last->bytes += (uint64_t)n;
			s->bytes += (uint64_t)n;
		}
		close(s->wfd);
		s->wfd = -1;
		return rc;
	}
	last->n++;
	last->bytes += size;
	s->bytes += size;
	s->next_seq++;
	return 0;
}

int kmqtt_spool_next(struct kmqtt_spool *s, struct strbuf *topic, struct strbuf *msg, uint64_t *seq)
{
	while (s->rseg < s->n_segs) {
		struct seg *g = &s->segs[s->rseg];
		if (s->read_seq >= g->first + g->n) {
			/* this one is done: on to the next */
			if (s->rseg + 1 == s->n_segs)
				return -ENOENT;
			if (s->rfd >= 0)
				close(s->rfd);
			s->rfd = -1;
			s->rseg++;
			s->roff = 0;
			continue;
		}
		if (s->rfd < 0) {
			s->rfd = open_seg(s, g->first, O_RDONLY);
			if (s->rfd < 0) {
				int rc = s->rfd;
				s->rfd = -1;
				return rc;
			}
		}
		struct rec r;
		int rc = read_rec(s->rfd, s->roff, &r, topic, msg);
		if (rc < 0)
			return rc;
		if (rc > 0 || r.seq != s->read_seq) {
			/* torn: what is left of the segment is lost */
			s->read_seq = g->first + g->n;
			continue;
		}
		s->roff += sizeof(r) + r.topic_len + r.msg_len;
		*seq = s->read_seq++;
		if (topic->oom || msg->oom)
			return -ENOMEM;
		return 0;
	}
	return -ENOENT;
}

uint64_t kmqtt_spool_cursor(const struct kmqtt_spool *s)
{
	return s->read_seq;
}

void kmqtt_spool_ack_below(struct kmqtt_spool *s, uint64_t seq)
{
	if (seq <= s->acked_below)
		return;
	s->acked_below = seq;
	while (s->n_segs > 1 && s->segs[0].first + s->segs[0].n <= seq)
		drop_first(s);
	write_acked(s);
}

uint64_t kmqtt_spool_pending(const struct kmqtt_spool *s)
{
	return s->next_seq - s->acked_below;
}

uint64_t kmqtt_spool_bytes(const struct kmqtt_spool *s)
{
	return s->bytes;
}
