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

#include "mqtt-spool-rec.h"
#include "statedir.h"

#define SEG_MIN	     (64u * 1024)
#define SEG_MAX	     (4u * 1024 * 1024)
#define MAX_SEGMENTS 4096
#define HDR	     sizeof(struct kmqtt_rec_hdr)
/* The most a segment of ours holds: up to SEG_MAX, then one record more.
 * What a file holds past it is not ours, and read as damaged. */
#define SEG_READ_MAX ((uint64_t)SEG_MAX + HDR + KMQTT_REC_TOPIC_MAX + KMQTT_REC_MSG_MAX)

struct seg {
	uint64_t first; /* its name: no record of it is numbered below */
	uint64_t end;	/* one past the number of its last record */
	uint64_t bytes;
};

/* Numbers [from, to) that no record holds: skipped as damaged, or left
 * out when a damaged segment was rewritten. */
struct hole {
	uint64_t from, to;
};

struct kmqtt_spool {
	int dirfd, lockfd, ackfd;
	int wfd;	      /* the last segment, appended to */
	int rfd;	      /* the segment the cursor is in */
	size_t rseg;	      /* its index */
	uint64_t roff;	      /* the cursor's offset in it */
	uint64_t read_seq;    /* the cursor: no record below it is still to send */
	uint64_t next_seq;    /* the number of the next record appended */
	uint64_t acked_below; /* everything below is acknowledged */
	uint64_t max_bytes, seg_max, bytes;
	struct seg *segs;
	size_t n_segs, cap_segs;
	struct hole *holes; /* in order, apart */
	size_t n_holes, cap_holes;
	unsigned aside_files; /* *.corrupt files in the directory */
	struct kmqtt_spool_damage damage;
};

static void seg_name(uint64_t first, char name[32])
{
	snprintf(name, 32, "seg-%016" PRIx64, first);
}

static int open_seg(struct kmqtt_spool *s, uint64_t first, int flags)
{
	char name[32];
	seg_name(first, name);
	return kstatedir_openat(s->dirfd, name, flags, 0600);
}

static void write_acked(struct kmqtt_spool *s)
{
	uint64_t v = s->acked_below;
	(void)!pwrite(s->ackfd, &v, sizeof(v), 0);
}

/* ---- holes ---- */

/* How many numbers of [a, b) are holes. */
static uint64_t holes_in(const struct kmqtt_spool *s, uint64_t a, uint64_t b)
{
	uint64_t n = 0;
	for (size_t i = 0; i < s->n_holes; i++) {
		uint64_t lo = s->holes[i].from > a ? s->holes[i].from : a;
		uint64_t hi = s->holes[i].to < b ? s->holes[i].to : b;
		if (lo < hi)
			n += hi - lo;
	}
	return n;
}

static int cmp_hole(const void *a, const void *b)
{
	uint64_t x = ((const struct hole *)a)->from, y = ((const struct hole *)b)->from;
	return x < y ? -1 : x > y;
}

/* [from, to) holds no record: in order, merged with its neighbours. */
static int add_hole(struct kmqtt_spool *s, uint64_t from, uint64_t to)
{
	if (from >= to)
		return 0;
	if (s->n_holes && s->holes[s->n_holes - 1].to == from) {
		s->holes[s->n_holes - 1].to = to; /* the usual case: the last grows */
		return 0;
	}
	if (s->n_holes == s->cap_holes) {
		size_t cap = s->cap_holes ? 2 * s->cap_holes : 8;
		struct hole *v = realloc(s->holes, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->holes = v;
		s->cap_holes = cap;
	}
	s->holes[s->n_holes++] = (struct hole){from, to};
	if (s->n_holes > 1 && s->holes[s->n_holes - 2].from > from) {
		qsort(s->holes, s->n_holes, sizeof(*s->holes), cmp_hole);
		size_t k = 0;
		for (size_t i = 1; i < s->n_holes; i++) {
			if (s->holes[i].from <= s->holes[k].to) {
				if (s->holes[i].to > s->holes[k].to)
					s->holes[k].to = s->holes[i].to;
			} else {
				s->holes[++k] = s->holes[i];
			}
		}
		s->n_holes = k + 1;
	}
	return 0;
}

/* Forgets the holes below the acknowledged. */
static void trim_holes(struct kmqtt_spool *s)
{
	size_t k = 0;
	while (k < s->n_holes && s->holes[k].to <= s->acked_below)
		k++;
	if (!k)
		return;
	memmove(s->holes, s->holes + k, (s->n_holes - k) * sizeof(*s->holes));
	s->n_holes -= k;
}

/* ---- segments ---- */

/* Forgets the oldest segment, and its file. */
static void drop_first(struct kmqtt_spool *s)
{
	struct seg *g = &s->segs[0];
	char name[32];
	seg_name(g->first, name);
	(void)unlinkat(s->dirfd, name, 0);
	s->bytes -= g->bytes;
	uint64_t end = g->end;
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
	trim_holes(s);
}

static int add_seg(struct kmqtt_spool *s, uint64_t first, uint64_t end, uint64_t bytes)
{
	if (s->n_segs == s->cap_segs) {
		size_t cap = s->cap_segs ? 2 * s->cap_segs : 16;
		struct seg *v = realloc(s->segs, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->segs = v;
		s->cap_segs = cap;
	}
	s->segs[s->n_segs++] = (struct seg){first, end, bytes};
	s->bytes += bytes;
	return 0;
}

/* ---- damage ---- */

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Keeps len bytes found damaged at off of segment name in a file of their
 * own, "<name>@<off>.corrupt", within the bound. */
static void set_aside(struct kmqtt_spool *s, const char *name, uint64_t off, const void *bytes,
		      size_t len)
{
	if (s->aside_files >= KMQTT_SPOOL_ASIDE_FILES) {
		s->damage.not_kept++;
		return;
	}
	char path[64];
	snprintf(path, sizeof(path), "%s@%016" PRIx64 ".corrupt", name, off);
	_cleanup_close_ int fd =
		kstatedir_openat(s->dirfd, path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0) {
		if (fd != -EEXIST) /* else kept already, by an earlier look */
			s->damage.not_kept++;
		return;
	}
	s->aside_files++;
	size_t n = len < KMQTT_SPOOL_ASIDE_MAX ? len : KMQTT_SPOOL_ASIDE_MAX;
	if (write_all(fd, bytes, n) == 0)
		s->damage.aside += n;
}

/* Reads all of what fd holds from off, up to len bytes, into a new buffer;
 * *got says how much there was.  0 or -errno. */
static int read_at(int fd, uint64_t off, size_t len, char **out, size_t *got)
{
	char *buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	size_t n = 0;
	while (n < len) {
		ssize_t k = pread(fd, buf + n, len - n, (off_t)(off + n));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int rc = -errno;
			free(buf);
			return rc;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	*out = buf;
	*got = n;
	return 0;
}

/* Writes the valid records of buf (read from min on) to segment name,
 * through a new file renamed over it.  0 or -errno (name is then as it
 * was). */
static int rewrite(struct kmqtt_spool *s, const char *name, const char *buf, size_t len,
		   uint64_t min)
{
	char tmp[40];
	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	/* made afresh: whatever had its name is never written through */
	if (unlinkat(s->dirfd, tmp, 0) < 0 && errno != ENOENT)
		return -errno;
	int fd = kstatedir_openat(s->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return fd;
	int rc = 0;
	struct kmqtt_rec r;
	for (size_t off = 0; rc == 0; off += r.len) {
		kmqtt_rec_next(buf, len, off, min, &r);
		if (r.kind == KMQTT_REC_END)
			break;
		if (r.kind != KMQTT_REC_RECORD)
			continue;
		rc = write_all(fd, buf + off, r.len);
		min = r.seq + 1;
	}
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && renameat(s->dirfd, tmp, s->dirfd, name) < 0)
		rc = -errno;
	if (rc < 0)
		(void)unlinkat(s->dirfd, tmp, 0);
	return rc;
}

/* Numbers in [from, to) the broker had not acknowledged: lost with damage. */
static uint64_t lost(uint64_t from, uint64_t to, uint64_t acked)
{
	if (from < acked)
		from = acked;
	return to > from ? to - from : 0;
}

/* ---- loading ---- */

/* Loads segment name (next: the name of the segment after it, 0 for none;
 * acked: as the file says).  Damaged bytes are skipped, counted, kept
 * aside and rewritten away; a torn record at the end is cut off. */
static int load_seg(struct kmqtt_spool *s, uint64_t first, uint64_t next, uint64_t acked,
		    const char **why)
{
	char name[32];
	seg_name(first, name);
	struct stat st;
	if (fstatat(s->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		*why = "cannot read a segment";
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		*why = "an entry named like a segment is not a regular file";
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	}
	_cleanup_close_ int fd = kstatedir_openat(s->dirfd, name, O_RDWR, 0);
	if (fd < 0) {
		*why = fd == -EPERM ? "a segment is not keventd's user's" : "cannot open a segment";
		return fd;
	}
	uint64_t size = (uint64_t)st.st_size, extra = 0;
	if (size > SEG_READ_MAX) {
		extra = size - SEG_READ_MAX;
		size = SEG_READ_MAX;
	}
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	int rc = read_at(fd, 0, (size_t)size, &buf, &len);
	if (rc < 0) {
		*why = "cannot read a segment";
		return rc;
	}
	if (len < size)
		extra = 0; /* it shrank: what was read is all */
	const uint64_t min = first > s->next_seq ? first : s->next_seq;
	uint64_t m = min, kept = 0, recs = 0, torn_at = 0;
	bool damaged = extra > 0, torn = false, lost_pending = false;
	struct kmqtt_rec r;
	for (size_t off = 0;; off += r.len) {
		kmqtt_rec_next(buf, len, off, m, &r);
		if (r.kind == KMQTT_REC_END)
			break;
		if (r.kind == KMQTT_REC_TORN) {
			s->damage.cut += r.len;
			torn = true;
			torn_at = off;
		} else if (r.kind == KMQTT_REC_DAMAGED) {
			s->damage.damaged += r.len;
			s->damage.regions++;
			set_aside(s, name, off, buf + off, r.len);
			damaged = lost_pending = true;
		} else {
			if (lost_pending)
				s->damage.corrupt += lost(s->next_seq, r.seq, acked);
			lost_pending = false;
			rc = add_hole(s, s->next_seq, r.seq);
			if (rc < 0)
				return rc;
			s->next_seq = m = r.seq + 1;
			kept += r.len;
			recs++;
		}
	}
	if (extra) {
		s->damage.damaged += extra;
		s->damage.regions++;
		s->damage.not_kept++;
		lost_pending = true;
	}
	if (lost_pending) /* up to the next segment, or at least one */
		s->damage.corrupt += next ? lost(s->next_seq, next, acked)
					  : lost(s->next_seq, s->next_seq + 1, acked);
	if (!recs) {
		(void)unlinkat(s->dirfd, name, 0);
		return 0;
	}
	if (damaged) {
		rc = rewrite(s, name, buf, len, min);
		if (rc < 0) {
			*why = "cannot rewrite a damaged segment";
			return rc;
		}
	} else if (torn && ftruncate(fd, (off_t)torn_at) < 0) {
		*why = "cannot cut a torn record off a segment";
		return -errno;
	}
	return add_seg(s, first, s->next_seq, damaged ? kept : torn ? torn_at : len);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Whether name is "seg-<16 hex digits>" followed by exactly tail. */
static bool seg_named(const char *name, const char *tail, uint64_t *first)
{
	if (strncmp(name, "seg-", 4) != 0 || strlen(name) != 20 + strlen(tail) ||
	    strcmp(name + 20, tail) != 0)
		return false;
	char hex[17];
	memcpy(hex, name + 4, 16);
	hex[16] = '\0';
	if (strspn(hex, "0123456789abcdef") != 16)
		return false;
	*first = strtoull(hex, NULL, 16);
	return true;
}

/* Loads the segments there are, in order. */
static int load(struct kmqtt_spool *s, uint64_t acked, const char **why)
{
	int dfd = dup(s->dirfd);
	if (dfd < 0)
		return -errno;
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -errno;
	}
	_cleanup_free_ uint64_t *firsts = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	errno = 0;
	for (struct dirent *e; (e = readdir(d)); errno = 0) {
		uint64_t first;
		if (str_has_suffix(e->d_name, ".corrupt"))
			s->aside_files++;
		if (seg_named(e->d_name, ".tmp", &first)) /* a rewrite cut short */
			(void)unlinkat(s->dirfd, e->d_name, 0);
		if (!seg_named(e->d_name, "", &first))
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
	if (rc == 0 && errno) {
		rc = -errno;
		*why = "cannot read the spool directory";
	}
	closedir(d);
	if (rc == 0 && n) {
		qsort(firsts, n, sizeof(*firsts), cmp_u64);
		if (firsts[0] > s->next_seq)
			s->next_seq = firsts[0];
	}
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = load_seg(s, firsts[i], i + 1 < n ? firsts[i + 1] : 0, acked, why);
	return rc;
}

/* Reads the record at the cursor: its size, or 0 when it is not a valid
 * record numbered read_seq or more that ends within the segment. */
static int read_record(struct kmqtt_spool *s, const struct seg *g, struct strbuf *topic,
		       struct strbuf *msg, uint64_t *seq)
{
	struct kmqtt_rec_hdr h;
	ssize_t n = pread(s->rfd, &h, sizeof(h), (off_t)s->roff);
	if (n < 0)
		return -errno;
	if ((size_t)n < sizeof(h) || h.topic_len > KMQTT_REC_TOPIC_MAX ||
	    h.msg_len > KMQTT_REC_MSG_MAX)
		return 0;
	size_t size = HDR + (size_t)h.topic_len + h.msg_len;
	if (s->roff + size > g->bytes)
		return 0;
	_cleanup_free_ char *buf = NULL;
	size_t got = 0;
	int rc = read_at(s->rfd, s->roff, size, &buf, &got);
	if (rc < 0)
		return rc;
	if (kmqtt_rec_valid(buf, got, s->read_seq) != size)
		return 0;
	if (topic) {
		strbuf_reset(topic);
		strbuf_add(topic, buf + HDR, h.topic_len);
	}
	if (msg) {
		strbuf_reset(msg);
		strbuf_add(msg, buf + HDR + h.topic_len, h.msg_len);
	}
	*seq = h.seq;
	return (int)size;
}

int kmqtt_spool_open(const char *dir, uint64_t max_bytes, struct kmqtt_spool **out,
		     struct kmqtt_spool_damage *damage, const char **why)
{
	*damage = (struct kmqtt_spool_damage){0};
	*why = NULL;
	/* the directory and its parents, as mkdir -p */
	_cleanup_free_ char *path = strdup(dir);
	if (!path)
		return -ENOMEM;
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			*why = "cannot make the spool directory";
			return -errno;
		}
		*p = '/';
	}
	if (mkdir(path, 0700) < 0 && errno != EEXIST) {
		*why = "cannot make the spool directory";
		return -errno;
	}
	struct kmqtt_spool *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->lockfd = s->ackfd = s->wfd = s->rfd = -1;
	s->max_bytes = max_bytes;
	s->seg_max = max_bytes / 8;
	s->seg_max = s->seg_max < SEG_MIN ? SEG_MIN : s->seg_max > SEG_MAX ? SEG_MAX : s->seg_max;
	s->next_seq = 1;
	int rc = 0;
	s->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->dirfd < 0) {
		rc = -errno;
		*why = "cannot open the spool directory";
	}
	/* the messages of every event, and what keventd will send: keventd's
	 * alone, as the state directory is */
	const char *bad = NULL;
	if (rc == 0 && (rc = kstatedir_check(s->dirfd, geteuid(), &bad)) < 0) {
		*why = rc == -EACCES  ? "the spool directory is writable by group or others "
					"(chmod 700 it)"
		       : rc == -EPERM ? "the spool directory is not keventd's user's"
				      : "the spool directory is not a directory";
		rc = -EACCES;
	}
	if (rc == 0) {
		s->lockfd = kstatedir_openat(s->dirfd, "lock", O_RDWR | O_CREAT, 0600);
		if (s->lockfd < 0)
			rc = s->lockfd;
		else if (flock(s->lockfd, LOCK_EX | LOCK_NB) < 0)
			rc = errno == EWOULDBLOCK ? -EBUSY : -errno;
		if (rc < 0)
			*why = rc == -EBUSY ? "the spool is another keventd's"
					    : "cannot lock the spool";
	}
	if (rc == 0) {
		s->ackfd = kstatedir_openat(s->dirfd, "acked", O_RDWR | O_CREAT, 0600);
		if (s->ackfd < 0) {
			rc = s->ackfd;
			*why = "cannot open the spool's file acked";
		}
	}
	uint64_t acked = 0;
	if (rc == 0 && pread(s->ackfd, &acked, sizeof(acked), 0) != sizeof(acked))
		acked = 0;
	if (rc == 0)
		rc = load(s, acked, why);
	if (rc < 0) {
		if (!*why)
			*why = "cannot load the spool";
		kmqtt_spool_free(s);
		return rc;
	}
	/* what the broker acknowledged before the restart is not sent again */
	s->acked_below = s->n_segs ? s->segs[0].first : s->next_seq;
	if (acked > s->acked_below)
		s->acked_below = acked > s->next_seq ? s->next_seq : acked;
	if (!s->n_segs && acked > s->next_seq)
		s->next_seq = s->acked_below = acked; /* numbers never repeat */
	while (s->n_segs && s->segs[0].end <= s->acked_below)
		drop_first(s);
	trim_holes(s);
	s->read_seq = s->acked_below;
	s->rseg = 0;
	s->roff = 0;
	if (s->n_segs) {
		/* skip the acknowledged records of the first segment */
		s->rfd = open_seg(s, s->segs[0].first, O_RDONLY);
		uint64_t seq, want = s->read_seq;
		s->read_seq = 0;
		while (s->rfd >= 0 && s->roff < s->segs[0].bytes) {
			int size = read_record(s, &s->segs[0], NULL, NULL, &seq);
			if (size <= 0 || seq >= want)
				break;
			s->roff += (uint64_t)size;
		}
		s->read_seq = want;
		if (s->rfd < 0)
			s->rfd = -1;
	}
	write_acked(s);
	*damage = s->damage;
	s->damage = (struct kmqtt_spool_damage){0};
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
	free(s->holes);
	free(s);
}

/* Messages of the oldest segment not yet sent. */
static uint64_t unsent_in_first(const struct kmqtt_spool *s)
{
	const struct seg *g = &s->segs[0];
	uint64_t from = s->read_seq > g->first ? s->read_seq : g->first;
	return from >= g->end ? 0 : g->end - from - holes_in(s, from, g->end);
}

int kmqtt_spool_append(struct kmqtt_spool *s, const char *topic, const char *msg, size_t len,
		       uint64_t *dropped)
{
	*dropped = 0;
	size_t tlen = strlen(topic);
	uint64_t size = HDR + tlen + len;
	if (size > s->max_bytes || tlen > KMQTT_REC_TOPIC_MAX || len > KMQTT_REC_MSG_MAX) {
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
		int rc = add_seg(s, s->next_seq, s->next_seq, 0);
		if (rc < 0)
			return rc;
		last = &s->segs[s->n_segs - 1];
	}
	struct kmqtt_rec_hdr r;
	kmqtt_rec_header(&r, s->next_seq, topic, tlen, msg, len);
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
	last->end = s->next_seq + 1;
	last->bytes += size;
	s->bytes += size;
	s->next_seq++;
	return 0;
}

/* The record at the cursor is damaged: skips to the next valid one of the
 * segment (or its end), as at open, counting what is lost. */
static int resync(struct kmqtt_spool *s, const struct seg *g)
{
	char name[32];
	seg_name(g->first, name);
	uint64_t left = g->bytes - s->roff;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	int rc = read_at(s->rfd, s->roff, left > SEG_READ_MAX ? SEG_READ_MAX : (size_t)left, &buf,
			 &len);
	if (rc < 0)
		return rc;
	struct kmqtt_rec r, after;
	kmqtt_rec_next(buf, len, 0, s->read_seq, &r);
	if (r.kind == KMQTT_REC_RECORD || r.kind == KMQTT_REC_END)
		return -EIO; /* it read wrong a moment ago, and right now */
	s->damage.damaged += r.len;
	s->damage.regions++;
	set_aside(s, name, s->roff, buf, r.len);
	kmqtt_rec_next(buf, len, r.len, s->read_seq, &after);
	uint64_t to = after.kind == KMQTT_REC_RECORD ? after.seq : g->end;
	s->damage.corrupt += to - s->read_seq - holes_in(s, s->read_seq, to);
	rc = add_hole(s, s->read_seq, to);
	if (after.kind == KMQTT_REC_RECORD) {
		s->roff += r.len;
	} else {
		s->roff = g->bytes;
		s->read_seq = g->end;
	}
	return rc;
}

int kmqtt_spool_next(struct kmqtt_spool *s, struct strbuf *topic, struct strbuf *msg, uint64_t *seq)
{
	while (s->rseg < s->n_segs) {
		struct seg *g = &s->segs[s->rseg];
		if (s->read_seq >= g->end) {
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
		uint64_t got = 0;
		int size = read_record(s, g, topic, msg, &got);
		if (size < 0)
			return size;
		if (size == 0) {
			int rc = resync(s, g);
			if (rc < 0)
				return rc;
			continue;
		}
		s->roff += (uint64_t)size;
		s->read_seq = got + 1;
		*seq = got;
		if (topic->oom || msg->oom)
			return -ENOMEM;
		return 0;
	}
	return -ENOENT;
}

void kmqtt_spool_damage(struct kmqtt_spool *s, struct kmqtt_spool_damage *out)
{
	out->cut += s->damage.cut;
	out->damaged += s->damage.damaged;
	out->regions += s->damage.regions;
	out->corrupt += s->damage.corrupt;
	out->aside += s->damage.aside;
	out->not_kept += s->damage.not_kept;
	s->damage = (struct kmqtt_spool_damage){0};
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
	while (s->n_segs > 1 && s->segs[0].end <= seq)
		drop_first(s);
	trim_holes(s);
	write_acked(s);
}

uint64_t kmqtt_spool_pending(const struct kmqtt_spool *s)
{
	return s->next_seq - s->acked_below - holes_in(s, s->acked_below, s->next_seq);
}

uint64_t kmqtt_spool_bytes(const struct kmqtt_spool *s)
{
	return s->bytes;
}
