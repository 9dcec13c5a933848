// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The "kmsg" source: /dev/kmsg, one record per read(), each numbered by
 * the kernel.  What a record is and what event it makes are the pure
 * parts' (kmsg.h); here are the numbers.
 *
 * - A number skipped is a record lost: the kernel overwrote it in its
 *   ring before keventd read it, and read() said so with EPIPE.  Each is
 *   counted lost, exactly: the number of the record read next says how
 *   many.  Reading goes on.
 * - kmsg.pos in the state directory holds the boot and the number of the
 *   last record done with: a record that made an event is done once the
 *   event is in the journal, so the position is saved only when the daemon
 *   says the journal holds every event submitted (source.h: journaled()),
 *   never between the submit and the journal's write.  A start in the same
 *   boot reads the ring from its beginning, passes over what kmsg.pos
 *   covers and counts as lost what the ring no longer has.  A first start
 *   (no kmsg.pos, or one of another boot) reads the ring through without
 *   an event, to its end and the number there, unless kmsg: {backlog:
 *   yes}.
 * - The position is written in place, one pwrite() of a line of fixed
 *   length, after the journal's write of each round: keventd killed
 *   between the journal and the position sees the record again and the
 *   journal's copy too (at least once, as the journal is; the copy flagged
 *   redelivered); a stop sees each once.
 * - A flood: reading stops while the source's share of the queue is full
 *   (pause()), the kernel's ring keeps what it can, and what it overwrote
 *   meanwhile is counted lost when reading resumes.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fault.h"
#include "kmsg.h"
#include "log.h"
#include "loop.h"
#include "source-kmsg.h"
#include "statedir.h"
#include "util.h"
#include "source-type.h"

#define BOOT_ID_PATH	 "/proc/sys/kernel/random/boot_id"
#define POS_FILE	 "kmsg.pos" /* in the state directory */
#define READS_PER_WAKEUP 256
/* a first start reads the ring through: at most this many records, so
 * that a flood cannot hold the start-up */
#define DRAIN_MAX (1u << 20)
/* the position's line has one length, so an update is one pwrite() */
#define POS_FORMAT_WIDTH 20

struct kmsg_source {
	struct ksource base;
	struct ksink sink;
	struct kkmsg_config cfg; /* a copy: a reload changes the priority */
	int fd, pos_fd;
	struct kio *io;
	char *pos_path;
	char boot_id[KKMSG_BOOT_ID_LEN + 1];
	struct kkmsg_state st;
	struct kkmsg_rec held; /* a record flagged 'c', waiting for its '+' pieces */
	bool holding;
	bool have_next;
	uint64_t next; /* the number expected next */
	bool have_done;
	uint64_t done; /* every record up to it is done with */
	uint64_t saved;
	bool have_saved;
	bool paused, stopped;
	char buf[KKMSG_RECORD_MAX + 1];
};

static struct klog_throttle lost_log = {
	.name = "kmsg", .what = "lines about lost records", .counted = true};
static struct klog_throttle pos_log = {.name = "kmsg", .what = "lines about the position"};
static struct klog_throttle read_log = {.name = "kmsg", .what = "lines about reading"};

/* ---- the position ---- */

static int pos_open(struct kmsg_source *k)
{
	return kstatedir_openat(k->sink.state->fd, POS_FILE, O_RDWR | O_CREAT, 0644);
}

static void pos_save(struct kmsg_source *k)
{
	if (!k->pos_path || !k->have_done || (k->have_saved && k->saved == k->done))
		return;
	char line[96];
	int n = snprintf(line, sizeof(line), "%s %0*" PRIu64 "\n", k->boot_id, POS_FORMAT_WIDTH,
			 k->done);
	if (k->pos_fd < 0) {
		int fd = pos_open(k);
		if (fd < 0 || ftruncate(fd, n) < 0) {
			int e = fd < 0 ? -fd : errno;
			if (fd >= 0)
				close(fd);
			klog_throttled(&pos_log, LOG_WARNING, "kmsg: cannot write %s: %s",
				       k->pos_path, kstatedir_strerror(e));
			return;
		}
		k->pos_fd = fd;
	}
	ssize_t w = pwrite(k->pos_fd, line, (size_t)n, 0);
	if (w != n) {
		klog_throttled(&pos_log, LOG_WARNING, "kmsg: cannot write %s: %s", k->pos_path,
			       w < 0 ? strerror(errno) : "short write");
		return;
	}
	k->saved = k->done;
	k->have_saved = true;
	kfault("positioned");
}

/* The position to go on after: true with *seq when kmsg.pos is of this
 * boot. */
static bool pos_load(struct kmsg_source *k, uint64_t *seq)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	if (!k->pos_path)
		return false;
	int rc = kstatedir_read(k->sink.state->fd, POS_FILE, 256, &text, &len);
	if (rc == -ENOENT)
		return false;
	struct kkmsg_pos pos;
	if (rc < 0 || kkmsg_pos_parse(text, len, &pos) < 0) {
		log_warning("kmsg: %s is not a position (%s); starting at the end of the log",
			    k->pos_path, rc < 0 ? kstatedir_strerror(rc) : "damaged");
		return false;
	}
	if (strcmp(pos.boot_id, k->boot_id) != 0) {
		log_info("kmsg: %s is of an earlier boot; starting at the end of the log",
			 k->pos_path);
		return false;
	}
	*seq = pos.seq;
	return true;
}

/* ---- records ---- */

static void done_with(struct kmsg_source *k, uint64_t seq)
{
	if (!k->have_done || seq > k->done) {
		k->done = seq;
		k->have_done = true;
	}
}

static uint64_t boot_realtime_ns(void)
{
	uint64_t rt = now_realtime_ns(), mono = now_monotonic_ns();
	return rt > mono ? rt - mono : 0;
}

/* A whole record (its pieces joined): its event, when it makes one. */
static void handle(struct kmsg_source *k, struct kkmsg_rec *rec)
{
	struct kkmsg_info info;
	int rc = kkmsg_recognise(&k->st, rec, &info);
	if (rc < 0) {
		ksink_reject(&k->sink, KEVENT_SOURCE_KMSG, "out of memory");
		done_with(k, rec->last_seq);
		return;
	}
	if (!kkmsg_wanted(rec, &info, k->cfg.priority)) {
		kkmsg_info_release(&info);
		done_with(k, rec->last_seq);
		return;
	}
	char keybuf[64];
	const char *key = kkmsg_device_key(rec, &info, keybuf, sizeof(keybuf));
	_cleanup_free_ char *devpath = NULL;
	if (key && kkmsg_device_path(KKMSG_SYSFS, key, &devpath) < 0)
		devpath = NULL;
	struct kevent *ev = NULL;
	const char *why = NULL;
	bool truncated = false;
	rc = kkmsg_event(rec, &info, devpath, boot_realtime_ns(), &ev, &truncated, &why);
	kkmsg_info_release(&info);
	if (rc < 0) {
		ksink_reject(&k->sink, KEVENT_SOURCE_KMSG, rc == -ENOMEM ? "out of memory" : why);
	} else {
		if (truncated)
			ksink_truncated(&k->sink, KEVENT_SOURCE_KMSG);
		(void)ksink_submit(&k->sink, ev);
	}
	/* saved once the journal holds the event (kmsg_journaled()) */
	done_with(k, rec->last_seq);
}

static void flush_held(struct kmsg_source *k)
{
	if (!k->holding)
		return;
	k->holding = false;
	handle(k, &k->held);
	kkmsg_rec_release(&k->held);
}

/* The numbers between the last record and rec: lost, or seen before. */
static bool in_order(struct kmsg_source *k, uint64_t seq)
{
	if (k->have_next && seq < k->next)
		return false; /* covered by kmsg.pos, or seen already */
	if (k->have_next && seq > k->next) {
		uint64_t n = seq - k->next;
		klog_throttled(&lost_log, LOG_WARNING,
			       "kmsg: %" PRIu64 " record(s) before %" PRIu64
			       " lost: the kernel overwrote them before keventd read them",
			       n, seq);
		ksink_lost(&k->sink, KEVENT_SOURCE_KMSG, n);
	}
	k->have_next = true;
	k->next = seq + 1;
	return true;
}

static void on_record(struct kmsg_source *k, size_t len)
{
	struct kkmsg_rec rec;
	const char *why = NULL;
	int rc = kkmsg_parse(k->buf, len, &rec, &why);
	if (rc < 0) {
		/* a refused record still has its number: not a gap; and it ends
		 * the line before it */
		flush_held(k);
		if (rec.numbered && in_order(k, rec.seq))
			done_with(k, rec.seq);
		ksink_reject(&k->sink, KEVENT_SOURCE_KMSG, rc == -ENOMEM ? "out of memory" : why);
		return;
	}
	if (!in_order(k, rec.seq)) {
		kkmsg_rec_release(&rec);
		return;
	}
	if (rec.flag == '+' && k->holding && kkmsg_rec_join(&k->held, &rec) == 0) {
		kkmsg_rec_release(&rec);
		return;
	}
	flush_held(k);
	if (rec.flag == 'c' && rec.facility == 0) {
		k->held = rec;
		k->holding = true;
		return;
	}
	handle(k, &rec);
	kkmsg_rec_release(&rec);
}

/* One read(): its length, 0 when there is nothing now, -EPIPE, or another
 * -errno. */
static ssize_t read_record(struct kmsg_source *k)
{
	for (;;) {
		ssize_t n = read(k->fd, k->buf, KKMSG_RECORD_MAX);
		if (n >= 0)
			return n;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN)
			return 0;
		return -errno;
	}
}

static void on_kmsg(struct kio *io, int fd, uint32_t events, void *userdata)
{
	struct kmsg_source *k = userdata;
	(void)io;
	(void)fd;
	(void)events;
	for (int i = 0; i < READS_PER_WAKEUP && !k->paused && !k->stopped; i++) {
		ssize_t n = read_record(k);
		if (n == -EPIPE) {
			/* the kernel overwrote records: the next one's number says
			 * how many (in_order()) */
			ksink_overrun(&k->sink, KEVENT_SOURCE_KMSG);
			continue;
		}
		if (n < 0) {
			klog_throttled(&read_log, LOG_WARNING, "kmsg: read: %s", strerror((int)-n));
			break;
		}
		if (n == 0) {
			flush_held(k); /* nothing follows it now: the line is whole */
			break;
		}
		on_record(k, (size_t)n);
	}
}

/* A first start: the ring read through to its end, without an event, for
 * the number there.  Records the kernel overwrites meanwhile are nobody's
 * loss: they were before the start. */
static void drain(struct kmsg_source *k)
{
	uint64_t n = 0;
	for (; n < DRAIN_MAX; n++) {
		ssize_t len = read_record(k);
		if (len == -EPIPE)
			continue;
		if (len <= 0)
			break;
		struct kkmsg_rec rec;
		const char *why;
		(void)kkmsg_parse(k->buf, (size_t)len, &rec, &why);
		if (rec.numbered) {
			k->have_next = true;
			k->next = rec.seq + 1;
			done_with(k, rec.seq);
		}
		kkmsg_rec_release(&rec);
	}
	log_info("kmsg: starting at the end of the log, after %" PRIu64 " record(s)", n);
}

/* ---- the source ---- */

static void kmsg_pause(struct ksource *s, bool pause)
{
	struct kmsg_source *k = (struct kmsg_source *)s;
	k->paused = pause;
	if (k->io)
		(void)kio_set_events(k->io, pause ? 0 : EPOLLIN);
}

static void kmsg_stop(struct ksource *s)
{
	struct kmsg_source *k = (struct kmsg_source *)s;
	if (k->stopped)
		return;
	k->stopped = true;
	kio_free(k->io);
	k->io = NULL;
	/* the position follows the journal's last write (kmsg_journaled());
	 * a line still waiting for its pieces is read again next time */
}

/* Every event submitted is in the journal: the position may cover it. */
static void kmsg_journaled(struct ksource *s)
{
	pos_save((struct kmsg_source *)s);
}

static void kmsg_free(struct ksource *s)
{
	struct kmsg_source *k = (struct kmsg_source *)s;
	if (!k)
		return;
	kmsg_stop(s);
	kkmsg_rec_release(&k->held);
	kkmsg_state_release(&k->st);
	if (k->fd >= 0)
		close(k->fd);
	if (k->pos_fd >= 0)
		close(k->pos_fd);
	free(k->pos_path);
	free(k);
}

static int read_boot_id(char *out)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int rc = read_file(BOOT_ID_PATH, 64, &text, &len);
	if (rc < 0)
		return rc;
	if (len && text[len - 1] == '\n')
		len--;
	if (!kkmsg_boot_id_valid(text, len))
		return -EINVAL;
	memcpy(out, text, KKMSG_BOOT_ID_LEN);
	out[KKMSG_BOOT_ID_LEN] = '\0';
	return 0;
}

int ksource_kmsg_new(const struct ksink *sink, const struct kkmsg_config *cfg, struct ksource **out)
{
	int fd = open(KKMSG_DEVICE, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	return ksource_kmsg_open(sink, cfg, fd, out);
}

/* "/dev/kmsg, records at err or more urgent, next 1234" */
static void kmsg_describe(struct ksource *s, struct strbuf *out)
{
	struct kmsg_source *k = container_of(s, struct kmsg_source, base);
	strbuf_printf(out, "/dev/kmsg, records at %s or more urgent",
		      kkmsg_level_name(k->cfg.priority) ? kkmsg_level_name(k->cfg.priority) : "?");
	if (k->have_next)
		strbuf_printf(out, ", next %" PRIu64, k->next);
}

int ksource_kmsg_open(const struct ksink *sink, const struct kkmsg_config *cfg, int fd,
		      struct ksource **out)
{
	struct kmsg_source *k = calloc(1, sizeof(*k));
	if (!k) {
		close(fd);
		return -ENOMEM;
	}
	k->fd = fd;
	k->base = (struct ksource){
		.name = "kmsg",
		.kind = KEVENT_SOURCE_KMSG,
		.pause = kmsg_pause,
		.stop = kmsg_stop,
		.journaled = kmsg_journaled,
		.describe = kmsg_describe,
		.free = kmsg_free,
	};
	k->sink = *sink;
	kkmsg_config_init(&k->cfg);
	if (cfg)
		k->cfg = *cfg;
	k->pos_fd = -1;
	int rc = read_boot_id(k->boot_id);
	/* no state directory (tests): no position */
	if (rc == 0 && sink->state &&
	    asprintf(&k->pos_path, "%s/" POS_FILE, sink->state->path) < 0) {
		k->pos_path = NULL;
		rc = -ENOMEM;
	}
	if (rc < 0) {
		kmsg_free(&k->base);
		return rc;
	}
	uint64_t after;
	if (pos_load(k, &after)) {
		/* the ring from its start; what kmsg.pos covers is passed over */
		k->have_next = true;
		k->next = after + 1;
		done_with(k, after);
		k->saved = after;
		k->have_saved = true;
		log_info("kmsg: going on after record %" PRIu64, after);
	} else if (k->cfg.backlog) {
		log_info("kmsg: reading the log from its start (backlog: yes)");
	} else {
		drain(k);
	}
	rc = kloop_add_io(sink->loop, k->fd, EPOLLIN, on_kmsg, k, &k->io);
	if (rc < 0) {
		kmsg_free(&k->base);
		return rc;
	}
	/* nothing submitted yet: where a first start begins */
	pos_save(k);
	log_info("kmsg: reading the kernel log, priority %s and the records keventd knows",
		 kkmsg_level_name(k->cfg.priority));
	*out = &k->base;
	return 0;
}

unsigned ksource_kmsg_priority(const struct ksource *s)
{
	return ((const struct kmsg_source *)s)->cfg.priority;
}

void ksource_kmsg_set_priority(struct ksource *s, unsigned level)
{
	struct kmsg_source *k = (struct kmsg_source *)s;
	if (level < KKMSG_LEVELS)
		k->cfg.priority = level;
}

/* --- its row (source-type.h): keventd.yaml's kmsg:, whose priority a
 * reload applies to the records read from then on, without losing the
 * source's place in the log; backlog only matters at a first start --- */

static int make(const struct ksource_args *a, struct ksource **out)
{
	return ksource_kmsg_new(a->sink, a->section, out);
}

static int parse(void *section, const struct ynode *v, const char *path, struct kdiags *diags)
{
	return kkmsg_config_parse(section, v, path, diags);
}

static bool equal(const void *a, const void *b)
{
	const struct kkmsg_config *x = a, *y = b;
	return x->priority == y->priority && x->backlog == y->backlog;
}

static void configure(struct ksource *s, const void *section, struct strbuf *said)
{
	const struct kkmsg_config *c = section;
	if (!s)
		return;
	unsigned was = ksource_kmsg_priority(s);
	if (c->priority == was)
		return;
	ksource_kmsg_set_priority(s, c->priority);
	strbuf_printf(said, "kmsg priority %s (was %s)", kkmsg_level_name(c->priority),
		      kkmsg_level_name(was));
}

const struct ksource_type ksource_type_kmsg = {
	.kind = KEVENT_SOURCE_KMSG,
	.make = make,
	.section_size = sizeof(struct kkmsg_config),
	.defaults = &kkmsg_config_defaults,
	.parse = parse,
	.equal = equal,
	.configure = configure,
};
