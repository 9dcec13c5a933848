// SPDX-License-Identifier: GPL-2.0-or-later
#include "journal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hashmap.h"
#include "journal-rec.h"
#include "log.h"
#include "statedir.h"
#include "util.h"

#define NAME_FMT "journal-%020" PRIu64
#define NAME_LEN (8 + 20)
/* the segment written to is emptied when nothing in it is live any more
 * and it has grown past this (or past its share, whichever is smaller) */
#define RESET_AT (64u << 10)
#define LAZY_MAX 1024
/* pending records written at once past this, whatever the daemon does */
#define FLUSH_AT (256u << 10)
/* damaged bytes kept aside, "journal-N@OFFSET.corrupt": at most this many
 * files in the directory, of at most this many bytes each (a longer piece
 * is kept cut): damage cannot fill the file system */
#define CORRUPT_FILES_MAX 16
#define CORRUPT_BYTES_MAX (64u << 10)
#define CORRUPT_SUFFIX	  ".corrupt"
/* the lengths of the records appended last, by their reference: a
 * retirement needs one to count the live bytes, without a read */
#define LEN_CACHE 4096
/* where a compaction writes a segment before it takes the segment's name */
#define COMPACT_NAME "journal.compact"
/* names taken by something else that a new segment passes over, at most */
#define NEW_SEGMENT_TRIES 16

struct segment {
	uint64_t no;
	int fd;
	uint64_t size; /* its bytes, the pending ones (the last segment's) included */
	uint64_t live;
	uint64_t live_bytes; /* the bytes of its live records */
	/* written by a compaction: its records are found through the moves */
	bool compacted;
};

/* A record a compaction moved: the reference its event holds (where it
 * was appended or found at open), and where it is now. */
struct move {
	uint64_t from, to;
};

struct lazy {
	uint64_t no, off;
};

/* a record's done bits to set, and one of its holders gone, once the
 * pending records are written (kjournal_settle()) */
struct settle {
	uint64_t ref;
	uint32_t bits;
};

struct kjournal {
	int dirfd;	  /* the state directory (statedir.h), its lock held by the caller */
	uint64_t size;	  /* --journal-size: the bound of the live records' bytes */
	uint64_t seg_max; /* a segment's bytes before the next one starts */
	struct segment *segs;
	size_t n_segs, cap_segs;
	uint64_t next_no;   /* the next segment's number: never one used before */
	struct move *moves; /* sorted by from */
	size_t n_moves;
	uint64_t compactions;
	bool stuck; /* a compaction failed: full until a segment goes */
	/* while replaying: the compaction copies read, by identity (dedup_key()) */
	struct hashmap *copies;
	size_t n_old; /* segments found at open, not yet replayed */
	/* the replay, a segment at a time: the numbers of the segments found
	 * at open (NULL: no replay goes on), the next one to read, and the
	 * events read from the last one that are not handed on yet
	 * (backlog[at..n_backlog)) */
	uint64_t *replay_nos;
	size_t n_replay_nos, replay_next;
	struct kevent **backlog;
	size_t n_backlog, at_backlog;
	struct lazy lazy[LAZY_MAX];
	size_t n_lazy;
	/* the records appended since the last flush: the last segment's bytes
	 * from pend_at on, written with one pwrite() by kjournal_flush() */
	struct strbuf pend;
	uint64_t pend_at;
	/* records with holders besides their event (kjournal_hold()): "REF"
	 * -> how many more retirements they take, as a pointer's value */
	struct hashmap *holds;
	struct settle *settle;
	size_t n_settle, cap_settle;
	uint64_t corrupt;
	size_t n_corrupt_files; /* the .corrupt files in the directory */
	uint64_t writes;
	int failing; /* the last write's error, until one succeeds */
	struct {
		uint64_t ref;
		uint32_t len;
	} len_cache[LEN_CACHE];
	struct klog_throttle write_log;
};

static struct segment *find(struct kjournal *j, uint64_t no)
{
	for (size_t i = 0; i < j->n_segs; i++)
		if (j->segs[i].no == no)
			return &j->segs[i];
	return NULL;
}

static struct segment *current(struct kjournal *j)
{
	return &j->segs[j->n_segs - 1];
}

static int cmp_move_from(const void *a, const void *b)
{
	uint64_t x = ((const struct move *)a)->from, y = ((const struct move *)b)->from;
	return x < y ? -1 : x > y;
}

static int cmp_move_to(const void *a, const void *b)
{
	uint64_t x = ((const struct move *)a)->to, y = ((const struct move *)b)->to;
	return x < y ? -1 : x > y;
}

/* The segment and offset of the record ref (an event's journal_ref):
 * where it was appended, or where a compaction moved it.  NULL: none. */
static struct segment *locate(struct kjournal *j, uint64_t ref, uint64_t *off)
{
	struct segment *s = find(j, ref >> 32);
	if (!s || s->compacted) {
		struct move key = {.from = ref};
		const struct move *m =
			j->n_moves ? bsearch(&key, j->moves, j->n_moves, sizeof(*m), cmp_move_from)
				   : NULL;
		if (!m)
			return NULL;
		ref = m->to;
		s = find(j, ref >> 32);
	}
	*off = ref & UINT32_MAX;
	return s;
}

static int add_segment(struct kjournal *j, uint64_t no, int fd, uint64_t size)
{
	if (j->n_segs == j->cap_segs) {
		size_t cap = j->cap_segs ? 2 * j->cap_segs : 8;
		struct segment *v = realloc(j->segs, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		j->segs = v;
		j->cap_segs = cap;
	}
	j->segs[j->n_segs++] =
		(struct segment){.no = no, .fd = fd, .size = size, .live_bytes = size};
	if (no >= j->next_no)
		j->next_no = no + 1;
	return 0;
}

static int new_segment(struct kjournal *j)
{
	uint64_t no;
	char name[NAME_LEN + 1];
	int fd = -EEXIST;
	/* made afresh: whatever has its name (a symlink, a file keventd
	 * refused at open) is never written through, but passed over */
	for (int tries = 0; fd == -EEXIST && tries < NEW_SEGMENT_TRIES; tries++) {
		no = j->next_no++;
		snprintf(name, sizeof(name), NAME_FMT, no);
		fd = kstatedir_openat(j->dirfd, name, O_RDWR | O_CREAT | O_EXCL, 0600);
	}
	if (fd < 0)
		return fd;
	int rc = add_segment(j, no, fd, 0);
	if (rc < 0) {
		close(fd);
		(void)unlinkat(j->dirfd, name, 0);
	} else {
		j->pend_at = 0;
		current(j)->live_bytes = 0;
	}
	return rc;
}

static void drop_lazy_of(struct kjournal *j, uint64_t no)
{
	size_t k = 0;
	for (size_t i = 0; i < j->n_lazy; i++)
		if (j->lazy[i].no != no)
			j->lazy[k++] = j->lazy[i];
	j->n_lazy = k;
}

/* s holds nothing live: a segment written before goes, the one written to
 * is emptied once it is big enough for that to pay. */
static void segment_idle(struct kjournal *j, struct segment *s)
{
	if (s == current(j)) {
		if (s->size < RESET_AT && s->size < j->seg_max)
			return;
		if (ftruncate(s->fd, 0) == 0) {
			/* the pending records are all done too: never written */
			strbuf_reset(&j->pend);
			s->size = j->pend_at = s->live_bytes = 0;
			drop_lazy_of(j, s->no);
			j->stuck = false;
		}
		return;
	}
	j->stuck = false;
	char name[NAME_LEN + 1];
	snprintf(name, sizeof(name), NAME_FMT, s->no);
	(void)unlinkat(j->dirfd, name, 0);
	close(s->fd);
	drop_lazy_of(j, s->no);
	size_t i = (size_t)(s - j->segs);
	memmove(&j->segs[i], &j->segs[i + 1], (j->n_segs - i - 1) * sizeof(*s));
	j->n_segs--;
	if (i < j->n_old)
		j->n_old--;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static bool is_corrupt_name(const char *name)
{
	size_t n = strlen(name), k = sizeof(CORRUPT_SUFFIX) - 1;
	return n > k && strncmp(name, "journal-", 8) == 0 && strchr(name, '@') &&
	       strcmp(name + n - k, CORRUPT_SUFFIX) == 0;
}

/* The numbers of the segments in the directory, sorted, and how many
 * damaged pieces are kept aside there. */
static int list_segments(int dirfd, uint64_t **out, size_t *n_out, size_t *n_corrupt)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	DIR *dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return -errno;
	}
	uint64_t *v = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	for (struct dirent *e; (e = readdir(dir));) {
		*n_corrupt += is_corrupt_name(e->d_name);
		if (strlen(e->d_name) != NAME_LEN || strncmp(e->d_name, "journal-", 8) != 0 ||
		    strspn(e->d_name + 8, "0123456789") != 20)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 8;
			uint64_t *w = realloc(v, cap * sizeof(*w));
			if (!w) {
				rc = -ENOMEM;
				break;
			}
			v = w;
		}
		v[n++] = strtoull(e->d_name + 8, NULL, 10);
	}
	closedir(dir);
	if (rc < 0) {
		free(v);
		return rc;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_u64);
	*out = v;
	*n_out = n;
	return 0;
}

int kjournal_open(int dirfd, size_t size, struct kjournal **out)
{
	struct kjournal *j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->size = size;
	j->seg_max = size / KJOURNAL_SEGMENTS;
	j->next_no = 1;
	j->write_log = (struct klog_throttle){.name = "journal", .what = "write errors"};
	j->dirfd = -1;
	int rc = hashmap_new(&j->holds);
	if (rc == 0 && (j->dirfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3)) < 0)
		rc = -errno;
	_cleanup_free_ uint64_t *nos = NULL;
	size_t n = 0;
	if (rc == 0)
		rc = list_segments(j->dirfd, &nos, &n, &j->n_corrupt_files);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		char name[NAME_LEN + 1];
		snprintf(name, sizeof(name), NAME_FMT, nos[i]);
		int fd = kstatedir_openat(j->dirfd, name, O_RDWR, 0);
		struct stat st;
		if (kstatedir_refused(fd)) {
			/* not keventd's (a symlink, another user's file): never
			 * replayed, left as found; the next segment goes past it */
			log_warning("journal: %s: %s; not replayed", name, kstatedir_strerror(fd));
			if (nos[i] >= j->next_no)
				j->next_no = nos[i] + 1;
			continue;
		}
		if (fd < 0)
			rc = fd;
		else if (fstat(fd, &st) < 0)
			rc = -errno;
		else
			rc = add_segment(j, nos[i], fd, (uint64_t)st.st_size);
		if (rc < 0 && fd >= 0)
			close(fd);
	}
	j->n_old = j->n_segs;
	if (rc == 0)
		(void)unlinkat(j->dirfd, COMPACT_NAME, 0); /* a compaction's, cut short */
	if (rc == 0)
		rc = new_segment(j);
	if (rc < 0) {
		j->n_old = 0;
		kjournal_free(j);
		return rc;
	}
	*out = j;
	return 0;
}

static void mark_done(struct kjournal *j, struct segment *s, uint64_t off)
{
	static const char done = KJREC_DONE;
	if (s == current(j) && off >= j->pend_at) {
		/* not written yet: it will be, done */
		j->pend.buf[off - j->pend_at + KJREC_STATE_OFF] = KJREC_DONE;
		return;
	}
	if (pwrite(s->fd, &done, 1, (off_t)(off + KJREC_STATE_OFF)) != 1)
		klog_throttled(&j->write_log, LOG_WARNING, "journal: cannot mark a record done: %s",
			       strerror(errno));
}

/* The bytes of the record at s:off (the reference ref), its header's
 * included. */
static size_t len_slot(uint64_t ref)
{
	return (size_t)((ref * 0x9e3779b97f4a7c15ull) >> 52) % LEN_CACHE;
}

static uint64_t record_len(struct kjournal *j, uint64_t ref, struct segment *s, uint64_t off)
{
	uint32_t len = 0;
	const size_t at = offsetof(struct kjrec_hdr, len);
	if (j->len_cache[len_slot(ref)].ref == ref)
		return j->len_cache[len_slot(ref)].len;
	if (s == current(j) && off >= j->pend_at)
		memcpy(&len, j->pend.buf + (off - j->pend_at) + at, sizeof(len));
	else if (pread(s->fd, &len, sizeof(len), (off_t)(off + at)) != (ssize_t)sizeof(len))
		return 0; /* counted live until its segment goes */
	return sizeof(struct kjrec_hdr) + (uint64_t)len;
}

static void flush_lazy(struct kjournal *j)
{
	for (size_t i = 0; i < j->n_lazy; i++) {
		struct segment *s = find(j, j->lazy[i].no);
		if (s)
			mark_done(j, s, j->lazy[i].off);
	}
	j->n_lazy = 0;
}

/* A damaged piece of segment no, data[off, off + len), lost: counted,
 * logged, and its bytes kept aside for whoever wants to know what they
 * were, within CORRUPT_FILES_MAX and CORRUPT_BYTES_MAX. */
static void lose(struct kjournal *j, uint64_t no, const char *data, size_t off, size_t len,
		 const char *what)
{
	char name[NAME_LEN + 48];
	j->corrupt++;
	snprintf(name, sizeof(name), NAME_FMT "@%zu" CORRUPT_SUFFIX, no, off);
	if (j->n_corrupt_files >= CORRUPT_FILES_MAX) {
		log_warning("journal: segment %" PRIu64 ": %s at %zu (%zu bytes) skipped; not kept "
			    "aside: %d damaged pieces are already",
			    no, what, off, len, CORRUPT_FILES_MAX);
		return;
	}
	size_t keep = len < CORRUPT_BYTES_MAX ? len : CORRUPT_BYTES_MAX;
	int fd = openat(j->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	ssize_t w = fd < 0 ? -1 : write(fd, data + off, keep);
	int rc = w == (ssize_t)keep ? 0 : w < 0 ? -errno : -ENOSPC;
	if (fd >= 0)
		close(fd);
	if (rc < 0) {
		if (fd >= 0)
			(void)unlinkat(j->dirfd, name, 0);
		log_warning("journal: segment %" PRIu64 ": %s at %zu (%zu bytes) skipped; cannot "
			    "keep it aside as %s: %s",
			    no, what, off, len, name, strerror(-rc));
		return;
	}
	j->n_corrupt_files++;
	log_warning("journal: segment %" PRIu64 ": %s at %zu (%zu bytes) skipped, kept aside as "
		    "%s%s",
		    no, what, off, len, name, keep < len ? " (its first bytes)" : "");
}

/*
 * A compaction writes the live records of a run of segments into one file
 * that takes the first one's name (rename()), then deletes the others: a
 * kill between the two leaves a record of those others twice, the copy
 * in the first segment, before its original.  A copy is marked so
 * (KJREC_COPY), and a record read after a copy with the same identity --
 * its source, instance, sequence number and time, its body's length and
 * checksum -- is that copy's original, not an event of its own: the two
 * bodies are the same bytes.  Two events apart with all of those the same
 * would need the same time to the nanosecond, from the same source and
 * keventd, and a checksum that collides.  Nothing happens between the
 * copy and the deletion (no done bit is set in between), so the copy's
 * bits are the original's.  A compaction's own first segment is replaced
 * whole by rename(): its records are there once, before or after.
 */
static void dedup_key(const struct kevent *ev, const struct kjrec *r, char key[static 80])
{
	snprintf(key, 80, "%d:%016" PRIx64 ":%016" PRIx64 ":%016" PRIx64 ":%08" PRIx32 ":%zu",
		 (int)ev->source, ev->instance, ev->seqnum, ev->timestamp, r->sum, r->body_len);
}

/* Whether ev, of record r, is the original of a copy read before it;
 * notes it when it is a copy itself. */
static bool copied_before(struct kjournal *j, const struct kevent *ev, const struct kjrec *r)
{
	char key[80];
	if (!j->copies)
		return false;
	dedup_key(ev, r, key);
	if (hashmap_get(j->copies, key))
		return true;
	if (r->copy)
		(void)hashmap_put(j->copies, key, (void *)1, NULL); /* no memory: may run twice */
	return false;
}

/* The events of one segment found at open, decoded into the backlog, to be
 * handed on as the caller has room for them. */
static void read_segment(struct kjournal *j, uint64_t no)
{
	struct segment *s = find(j, no);
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	if (!s)
		return;
	int rc = lseek(s->fd, 0, SEEK_SET) < 0 ? -errno : read_fd(s->fd, SIZE_MAX / 2, &data, &len);
	if (rc < 0) {
		log_warning("journal: cannot read segment %" PRIu64 ": %s", no, strerror(-rc));
		return;
	}
	struct kevent **evs = NULL;
	size_t n = 0, cap = 0;
	uint64_t live_bytes = 0;
	bool pinned = false; /* out of memory: what is left stays for the next start */
	struct kjrec r;
	for (size_t off = 0; kjrec_next(data, len, off, &r), r.kind != KJREC_END;
	     off = r.off + r.len) {
		if (r.kind != KJREC_RECORD) {
			lose(j, no, data, r.off, r.len,
			     r.kind == KJREC_TORN ? "a cut off record" : "a damaged record");
			continue;
		}
		if (!r.live)
			continue;
		struct kevent *ev = NULL;
		const char *why = "out of memory";
		if (n == cap) {
			size_t c = cap ? 2 * cap : 64;
			struct kevent **v = realloc(evs, c * sizeof(*v));
			if (!v) {
				pinned = true;
				break;
			}
			evs = v;
			cap = c;
		}
		rc = kjrec_decode(r.body, r.body_len, &ev, &why);
		if (rc == -ENOMEM) {
			pinned = true;
			break;
		}
		if (rc < 0) {
			char what[128];
			snprintf(what, sizeof(what), "a record that holds no event (%s)", why);
			lose(j, no, data, r.off, r.len, what);
			mark_done(j, s, r.off);
			continue;
		}
		if (copied_before(j, ev, &r)) {
			log_info("journal: segment %" PRIu64 ": the record at %zu is one a "
				 "compaction copied before it was killed: handled once",
				 no, r.off);
			kevent_free(ev);
			mark_done(j, s, r.off);
			continue;
		}
		ev->redelivered = true;
		ev->journal_ref = no << 32 | r.off;
		live_bytes += r.len;
		ev->journal_done = r.done;
		evs[n++] = ev;
	}
	s->live = n + pinned;
	s->live_bytes = pinned ? s->size : live_bytes;
	if (!s->live) {
		segment_idle(j, s);
		free(evs);
		return;
	}
	/* s may go while they are handed on: the last one retired deletes it */
	j->backlog = evs;
	j->n_backlog = n;
	j->at_backlog = 0;
}

void kjournal_peek(struct kjournal *j, enum kevent_source src,
		   void (*fn)(void *userdata, const struct kevent *ev), void *userdata)
{
	for (size_t i = 0; j && i < j->n_old; i++) {
		const struct segment *s = &j->segs[i];
		_cleanup_free_ char *data = NULL;
		size_t len = 0;
		if (lseek(s->fd, 0, SEEK_SET) < 0 || read_fd(s->fd, SIZE_MAX / 2, &data, &len) < 0)
			continue; /* the replay says why */
		struct kjrec r;
		for (size_t off = 0; kjrec_next(data, len, off, &r), r.kind != KJREC_END;
		     off = r.off + r.len) {
			struct kevent *ev = NULL;
			const char *why;
			if (r.kind != KJREC_RECORD || !r.live ||
			    kjrec_decode(r.body, r.body_len, &ev, &why) < 0)
				continue;
			if (ev->source == src) {
				ev->redelivered = true;
				fn(userdata, ev);
			}
			kevent_free(ev);
		}
	}
}

void kjournal_replay_start(struct kjournal *j)
{
	if (!j || j->replay_nos || !j->n_old)
		return;
	j->replay_nos = malloc(j->n_old * sizeof(*j->replay_nos));
	if (!j->replay_nos)
		return; /* no memory: the segments stay for the next start */
	j->n_replay_nos = j->n_old;
	j->replay_next = 0;
	for (size_t i = 0; i < j->n_old; i++)
		j->replay_nos[i] = j->segs[i].no;
	if (hashmap_new(&j->copies) < 0)
		j->copies = NULL; /* no memory: a copy a kill left may run twice */
}

bool kjournal_replaying(const struct kjournal *j)
{
	return j && j->replay_nos;
}

/* Every segment found at open is read and its events handed on. */
static void replay_end(struct kjournal *j)
{
	hashmap_free(TAKE_PTR(j->copies), NULL);
	free(TAKE_PTR(j->replay_nos));
	j->n_replay_nos = j->replay_next = 0;
	j->n_old = 0;
}

size_t kjournal_replay_more(struct kjournal *j,
			    bool (*may)(void *userdata, const struct kevent *ev),
			    int (*submit)(void *userdata, struct kevent *ev), void *userdata)
{
	size_t n = 0;
	while (kjournal_replaying(j)) {
		if (j->at_backlog < j->n_backlog) {
			struct kevent *ev = j->backlog[j->at_backlog];
			if (may && !may(userdata, ev))
				return n; /* the rest when there is room */
			j->backlog[j->at_backlog++] = NULL;
			(void)submit(userdata, ev);
			n++;
			continue;
		}
		free(TAKE_PTR(j->backlog));
		j->n_backlog = j->at_backlog = 0;
		if (j->replay_next == j->n_replay_nos) {
			replay_end(j);
			break;
		}
		read_segment(j, j->replay_nos[j->replay_next++]);
	}
	return n;
}

size_t kjournal_replay(struct kjournal *j, int (*submit)(void *userdata, struct kevent *ev),
		       void *userdata)
{
	kjournal_replay_start(j);
	return kjournal_replay_more(j, NULL, submit, userdata);
}

/* What waited for the pending records to be written: they are, or are
 * gone, done, with the segment they were for. */
static void apply_settle(struct kjournal *j)
{
	size_t n = j->n_settle;
	j->n_settle = 0;
	for (size_t i = 0; i < n; i++) {
		kjournal_progress(j, j->settle[i].ref, j->settle[i].bits);
		kjournal_retire(j, j->settle[i].ref, false);
	}
}

int kjournal_flush(struct kjournal *j)
{
	if (!j)
		return 0;
	if (!j->pend.len) {
		apply_settle(j);
		return 0;
	}
	struct segment *s = current(j);
	ssize_t w = pwrite(s->fd, j->pend.buf, j->pend.len, (off_t)j->pend_at);
	j->writes++;
	if (w != (ssize_t)j->pend.len) {
		/* kept, and written again from the same place by the next flush;
		 * a part written meanwhile is a torn record to a reader */
		int rc = w < 0 ? -errno : -ENOSPC; /* a short write: the space ran out */
		j->failing = rc;
		klog_throttled(&j->write_log, LOG_WARNING,
			       "journal: cannot write %zu bytes of events: %s; they are handled "
			       "unjournaled until it can",
			       j->pend.len, strerror(-rc));
		return rc;
	}
	j->pend_at += j->pend.len;
	strbuf_reset(&j->pend);
	j->failing = 0;
	apply_settle(j);
	return 0;
}

/* The live bytes of every segment. */
static uint64_t live_bytes(const struct kjournal *j)
{
	uint64_t n = 0;
	for (size_t i = 0; i < j->n_segs; i++)
		n += j->segs[i].live_bytes;
	return n;
}

static uint64_t disk_bytes(const struct kjournal *j)
{
	uint64_t n = 0;
	for (size_t i = 0; i < j->n_segs; i++)
		n += j->segs[i].size;
	return n;
}

/* What a compaction makes of a run of segments: one file of their live
 * records, in order, named as the first of them. */
struct group {
	size_t first, n; /* of the old segments */
	struct strbuf out;
	uint64_t live;
	struct move *moves; /* the records' references -> their place in out */
	size_t n_moves, cap_moves;
};

/* The reference the event of the record at s:off holds. */
static uint64_t origin(const struct segment *s, uint64_t off, const struct move *by_to,
		       size_t n_moves)
{
	struct move key = {.to = s->no << 32 | off};
	if (!s->compacted)
		return key.to;
	const struct move *m =
		n_moves ? bsearch(&key, by_to, n_moves, sizeof(*m), cmp_move_to) : NULL;
	return m ? m->from : key.to;
}

/* Adds the live records of segment s to g.  0 or -errno. */
static int group_take(struct kjournal *j, struct group *g, const struct segment *s,
		      const struct move *by_to)
{
	_cleanup_free_ char *data = NULL;
	size_t len = 0;
	int rc = lseek(s->fd, 0, SEEK_SET) < 0 ? -errno : read_fd(s->fd, SIZE_MAX / 2, &data, &len);
	if (rc < 0)
		return rc;
	struct kjrec r;
	for (size_t off = 0; kjrec_next(data, len, off, &r), r.kind != KJREC_END;
	     off = r.off + r.len) {
		if (r.kind != KJREC_RECORD || !r.live)
			continue;
		if (g->n_moves == g->cap_moves) {
			size_t cap = g->cap_moves ? 2 * g->cap_moves : 64;
			struct move *v = realloc(g->moves, cap * sizeof(*v));
			if (!v)
				return -ENOMEM;
			g->moves = v;
			g->cap_moves = cap;
		}
		size_t at = g->out.len;
		strbuf_add(&g->out, data + r.off, r.len);
		if (g->out.oom)
			return -ENOMEM;
		g->out.buf[at + KJREC_STATE_OFF] = KJREC_COPY;
		g->moves[g->n_moves++] = (struct move){
			.from = origin(s, r.off, by_to, j->n_moves),
			.to = (uint64_t)at /* the segment's number comes with the group's */};
		g->live++;
	}
	return 0;
}

/*
 * Writes group g in place of its segments: the copy first, under another
 * name, then rename()d to the first segment's (which it replaces whole),
 * then the others deleted.  A kill before the rename leaves the segments
 * as they were; after it, the others' records are read twice, and the
 * copies tell (copied_before()).  0 or -errno: the segments stay as they
 * were.
 */
static int group_write(struct kjournal *j, struct group *g, struct segment *segs, int *fd_out)
{
	*fd_out = -1;
	if (!g->out.len)
		return 0;
	(void)unlinkat(j->dirfd, COMPACT_NAME, 0);
	int fd = openat(j->dirfd, COMPACT_NAME, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			0600);
	if (fd < 0)
		return -errno;
	ssize_t w = pwrite(fd, g->out.buf, g->out.len, 0);
	char name[NAME_LEN + 1];
	snprintf(name, sizeof(name), NAME_FMT, segs[g->first].no);
	int rc = w == (ssize_t)g->out.len ? 0 : w < 0 ? -errno : -ENOSPC;
	if (rc == 0 && renameat(j->dirfd, COMPACT_NAME, j->dirfd, name) < 0)
		rc = -errno;
	if (rc < 0) {
		close(fd);
		(void)unlinkat(j->dirfd, COMPACT_NAME, 0);
		return rc;
	}
	*fd_out = fd;
	return 0;
}

static void group_release(struct group *g)
{
	strbuf_release(&g->out);
	free(g->moves);
	*g = (struct group){.out = STRBUF_INIT};
}

/*
 * Compacts the journal: the live records of every segment, the one
 * written to included (its records all written by now), are copied
 * forward into as few files as hold them, each at most a segment's size
 * (unless one record is bigger), in their order, their done bits kept;
 * done records go.  The events keep their references: the moves say
 * where their records went (locate()).  A segment of live records only,
 * half a segment or more, stays as it is.  The disk holds at most one
 * group's file more than before while it runs.  0 or -errno (what was
 * compacted before the error stays so; the rest as it was).
 */
static int compact(struct kjournal *j)
{
	struct move *by_to = NULL;
	if (j->n_moves) {
		by_to = malloc(j->n_moves * sizeof(*by_to));
		if (!by_to)
			return -ENOMEM;
		memcpy(by_to, j->moves, j->n_moves * sizeof(*by_to));
		qsort(by_to, j->n_moves, sizeof(*by_to), cmp_move_to);
	}
	struct segment *old = j->segs;
	size_t n_old = j->n_segs - 1; /* the one written to stays as it is */
	struct segment *segs = calloc(n_old + 1, sizeof(*segs));
	bool *rewritten = calloc(n_old + 1, sizeof(*rewritten));
	if (!segs || !rewritten) {
		free(segs);
		free(rewritten);
		free(by_to);
		return -ENOMEM;
	}
	struct move *moves = NULL;
	size_t n_moves = 0, n = 0;
	struct group g = {.out = STRBUF_INIT};
	int rc = 0;
	for (size_t i = 0; rc == 0 && i <= n_old; i++) {
		const struct segment *s = i < n_old ? &old[i] : NULL;
		bool keep = s && s->live_bytes == s->size && s->size >= j->seg_max / 2;
		bool fits = s && (!g.n || g.out.len + s->live_bytes <= j->seg_max);
		if (g.n && (!s || keep || !fits)) {
			/* g is done: written, and its segments replaced */
			int fd = -1;
			struct move *v = realloc(moves, (n_moves + g.n_moves + 1) * sizeof(*v));
			if (v)
				moves = v;
			rc = v ? group_write(j, &g, old, &fd) : -ENOMEM;
			if (rc < 0)
				break;
			for (size_t k = 0; k < g.n_moves; k++)
				moves[n_moves++] = (struct move){
					g.moves[k].from, old[g.first].no << 32 | g.moves[k].to};
			for (size_t k = g.first; k < g.first + g.n; k++) {
				char name[NAME_LEN + 1];
				snprintf(name, sizeof(name), NAME_FMT, old[k].no);
				if (k > g.first || fd < 0)
					(void)unlinkat(j->dirfd, name, 0);
				close(old[k].fd);
				old[k].fd = -1;
			}
			if (fd >= 0) {
				segs[n] = (struct segment){.no = old[g.first].no,
							   .fd = fd,
							   .size = g.out.len,
							   .live = g.live,
							   .live_bytes = g.out.len,
							   .compacted = true};
				rewritten[n++] = true;
			}
			group_release(&g);
		}
		if (!s)
			break;
		if (keep) {
			segs[n++] = *s;
			continue;
		}
		if (!g.n)
			g.first = i;
		g.n++;
		rc = group_take(j, &g, s, by_to);
	}
	if (rc < 0) {
		/* the segments not replaced yet stay as they were */
		for (size_t k = g.n ? g.first : n_old; k < n_old; k++)
			segs[n++] = old[k];
		group_release(&g);
	}
	segs[n++] = old[n_old];
	/* the moves into segments kept as they were, compacted before, stay */
	for (size_t k = 0; k < j->n_moves; k++) {
		uint64_t no = j->moves[k].to >> 32;
		for (size_t i = 0; i < n; i++) {
			if (segs[i].no != no || rewritten[i])
				continue;
			struct move *v = realloc(moves, (n_moves + 1) * sizeof(*v));
			if (v) {
				moves = v;
				moves[n_moves++] = j->moves[k];
			}
			break;
		}
	}
	if (n_moves)
		qsort(moves, n_moves, sizeof(*moves), cmp_move_from);
	free(j->moves);
	j->moves = moves;
	j->n_moves = n_moves;
	free(j->segs);
	j->segs = segs;
	j->n_segs = n;
	j->cap_segs = n_old + 1;
	free(by_to);
	free(rewritten);
	j->compactions += rc == 0;
	return rc;
}

/* The segment written to is full: the next one starts, and the ones
 * before it are compacted when their bytes and the next one's would be
 * past the bound.  What was pending is written first: a compaction reads
 * the files.  Without a new segment the full one takes the appends, past
 * its size. */
static void make_room(struct kjournal *j)
{
	if (kjournal_flush(j) < 0 || new_segment(j) < 0)
		return;
	/* not while the segments found at open are read: they are read by
	 * their names */
	if (disk_bytes(j) + j->seg_max > j->size && !j->n_old) {
		flush_lazy(j);
		int rc = compact(j);
		if (rc < 0) {
			j->stuck = true;
			klog_throttled(&j->write_log, LOG_WARNING,
				       "journal: cannot compact its segments: %s; intake "
				       "pauses until events in them are finished",
				       strerror(-rc));
		}
	}
}

int kjournal_append(struct kjournal *j, struct kevent *ev)
{
	struct segment *s = current(j);
	if (s->size >= j->seg_max) {
		if (s->live == 0)
			segment_idle(j, s);
		else
			make_room(j);
		/* without room: written all the same, never forgotten; intake
		 * pauses (kjournal_full()) */
		s = current(j);
	}
	size_t before = j->pend.len;
	kjrec_encode(&j->pend, ev);
	if (j->pend.oom) {
		j->pend.oom = false;
		j->pend.len = before;
		return -ENOMEM;
	}
	size_t len = j->pend.len - before;
	if (s->size > UINT32_MAX - len) {
		j->pend.len = before;
		return -EFBIG;
	}
	ev->journal_ref = s->no << 32 | s->size;
	j->len_cache[len_slot(ev->journal_ref)].ref = ev->journal_ref;
	j->len_cache[len_slot(ev->journal_ref)].len = (uint32_t)len;
	s->size += len;
	s->live++;
	s->live_bytes += len;
	if (j->pend.len >= FLUSH_AT || j->pend.len >= j->seg_max / 2)
		(void)kjournal_flush(j);
	return 0;
}

bool kjournal_pending_ref(struct kjournal *j, uint64_t ref)
{
	uint64_t off = 0;
	struct segment *s = j && ref ? locate(j, ref, &off) : NULL;
	return s && s == current(j) && off >= j->pend_at;
}

int kjournal_failing(const struct kjournal *j)
{
	return j ? j->failing : 0;
}

bool kjournal_pending(const struct kjournal *j)
{
	return j && (j->pend.len || j->n_settle);
}

void kjournal_progress(struct kjournal *j, uint64_t ref, uint32_t done)
{
	if (!j || !ref)
		return;
	uint64_t off = 0;
	struct segment *s = locate(j, ref, &off);
	if (!s || !s->live || !(done & ((1u << KJREC_DONE_BITS) - 1)))
		return;
	uint8_t d[3];
	if (s == current(j) && off >= j->pend_at) {
		uint8_t *p = (uint8_t *)j->pend.buf + (off - j->pend_at) + KJREC_DONE_OFF;
		for (int i = 0; i < 3; i++)
			p[i] |= (uint8_t)(done >> (8 * i));
		return;
	}
	/* the bits others set stay: an event's debounced runs set theirs apart */
	if (pread(s->fd, d, sizeof(d), (off_t)(off + KJREC_DONE_OFF)) != (ssize_t)sizeof(d))
		memset(d, 0, sizeof(d));
	for (int i = 0; i < 3; i++)
		d[i] |= (uint8_t)(done >> (8 * i));
	if (pwrite(s->fd, d, sizeof(d), (off_t)(off + KJREC_DONE_OFF)) != (ssize_t)sizeof(d))
		klog_throttled(&j->write_log, LOG_WARNING,
			       "journal: cannot mark an event's run done: %s", strerror(errno));
}

static void hold_key(uint64_t ref, char key[static 17])
{
	snprintf(key, 17, "%016" PRIx64, ref);
}

int kjournal_hold(struct kjournal *j, uint64_t ref)
{
	char key[17];
	if (!j || !ref)
		return -EINVAL;
	hold_key(ref, key);
	uintptr_t n = (uintptr_t)hashmap_get(j->holds, key);
	return hashmap_put(j->holds, key, (void *)(n + 1), NULL);
}

bool kjournal_held(const struct kjournal *j, uint64_t ref)
{
	char key[17];
	if (!j || !ref || !hashmap_size(j->holds))
		return false;
	hold_key(ref, key);
	return hashmap_get(j->holds, key) != NULL;
}

void kjournal_settle(struct kjournal *j, uint64_t ref, uint32_t bits)
{
	if (!j || !ref)
		return;
	if (j->pend.len && j->n_settle == j->cap_settle) {
		size_t cap = j->cap_settle ? 2 * j->cap_settle : 16;
		struct settle *v = realloc(j->settle, cap * sizeof(*v));
		if (v) {
			j->settle = v;
			j->cap_settle = cap;
		} else if (kjournal_flush(j) < 0) {
			return; /* kept live: handled again after a restart, never lost */
		}
	}
	if (j->pend.len) {
		j->settle[j->n_settle++] = (struct settle){ref, bits};
		return;
	}
	kjournal_progress(j, ref, bits);
	kjournal_retire(j, ref, false);
}

void kjournal_retire(struct kjournal *j, uint64_t ref, bool lazy)
{
	if (!j || !ref)
		return;
	uint64_t off = 0;
	struct segment *s = locate(j, ref, &off);
	if (!s || !s->live)
		return;
	char key[17];
	uintptr_t n = 0;
	/* without debounced runs waiting, no record has holders: no look-up */
	if (hashmap_size(j->holds)) {
		hold_key(ref, key);
		n = (uintptr_t)hashmap_get(j->holds, key);
	}
	if (n) {
		/* another holder still needs it live */
		if (n == 1)
			(void)hashmap_remove(j->holds, key);
		else
			(void)hashmap_put(j->holds, key, (void *)(n - 1), NULL);
		return;
	}
	uint64_t len = record_len(j, ref, s, off);
	j->len_cache[len_slot(ref)].ref = 0;
	s->live_bytes -= len < s->live_bytes ? len : s->live_bytes;
	if (lazy) {
		if (j->n_lazy == LAZY_MAX)
			flush_lazy(j);
		j->lazy[j->n_lazy++] = (struct lazy){s->no, off};
	} else {
		mark_done(j, s, off);
	}
	if (--s->live == 0) {
		s->live_bytes = 0;
		segment_idle(j, s);
	}
}

bool kjournal_full(const struct kjournal *j)
{
	if (!j || !j->n_segs)
		return false;
	/* by the live records alone: the done ones a compaction drops; or it
	 * cannot be written (what waits to be is bounded too), or could not
	 * be compacted */
	return live_bytes(j) >= j->size || j->pend.len >= j->seg_max || j->stuck;
}

void kjournal_status(const struct kjournal *j, struct kjournal_status *out)
{
	*out = (struct kjournal_status){0};
	if (!j)
		return;
	out->corrupt = j->corrupt;
	out->segments = j->n_segs;
	out->writes = j->writes;
	out->compactions = j->compactions;
	for (size_t i = 0; i < j->n_segs; i++) {
		out->bytes += j->segs[i].size;
		out->live += j->segs[i].live;
		out->live_bytes += j->segs[i].live_bytes;
	}
}

void kjournal_free(struct kjournal *j)
{
	if (!j)
		return;
	(void)kjournal_flush(j);
	flush_lazy(j);
	/* read but never handed on: their records stay live, for the next
	 * start, with the segments not read yet */
	for (size_t i = j->at_backlog; i < j->n_backlog; i++)
		kevent_free(j->backlog[i]);
	free(j->backlog);
	free(j->replay_nos);
	hashmap_free(j->copies, NULL);
	for (size_t i = 0; i < j->n_segs; i++) {
		struct segment *s = &j->segs[i];
		/* found at open and never replayed: kept as found */
		if (!s->live && i >= j->n_old) {
			char name[NAME_LEN + 1];
			snprintf(name, sizeof(name), NAME_FMT, s->no);
			(void)unlinkat(j->dirfd, name, 0);
		}
		close(s->fd);
	}
	free(j->segs);
	free(j->moves);
	free(j->settle);
	hashmap_free(j->holds, NULL);
	strbuf_release(&j->pend);
	if (j->dirfd >= 0)
		close(j->dirfd);
	free(j);
}
